/* dump.h - BURNCC_DUMP=DIR: every kernel's IR, schedule and source. */
#ifndef BURN_DUMP_H
#define BURN_DUMP_H

#include "codegen/target_iface.h"

/*
 * Write, for kernel number N named NAME of m, into folder dir (created if
 * absent): N_NAME.kir (kir_print), N_NAME.sched (the schedule, when the
 * kernel has one) and N_NAME.EXT (the kernel as be renders it, when be has
 * a renderer; one function, without the module around it).  N has three
 * digits or more, so the files list in program order.  Returns status.
 */
int burn_dump(Ctx *c, const char *dir, const Compiled *m, const Backend *be);

#endif

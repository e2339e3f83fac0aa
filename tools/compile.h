/*
 * compile.h - a model file in, a compiled module out: the frontend and the
 * pass pipeline joined.  The passes never read files; this is where a file
 * becomes a graph.
 */
#ifndef BURN_COMPILE_H
#define BURN_COMPILE_H

#include "../passes/passes.h"

/* Load an ONNX file and compile it (burn_compile_graph). */
int burn_compile_file(Ctx *c, const char *path, const CompileOpts *o,
                      Compiled **out);

/* One --schedule argument: a file of `KERNEL: steps` lines (when a file
 * of that name opens), else `KERNEL=STEPS`; the schedules are appended to
 * *want (kwant_parse, ir/kir.h), allocated in a. */
int burn_schedule_arg(Ctx *c, Arena *a, const char *arg, KWant **want, int *nwant);

#endif

/* check.h - `burncc check`: compile, build, run and compare test cases. */
#ifndef BURN_CHECK_H
#define BURN_CHECK_H

#include "codegen/target_iface.h"

int check_main(int argc, char **argv);

/* Run m once, the way check runs a case: in[i] are the compiled graph's
 * inputs in order, out[i] receive its outputs (value_nbytes of each).  A
 * target that runs in process (be->run: the llvm JIT) runs it there;
 * otherwise m is emitted as C into the folder wd (model.c, model.h), built
 * with $CC (default cc) and check's harness, and run in a child process,
 * the data passing through files in wd; the built binary is kept in the
 * kernel cache ($BURNCC_CACHE_DIR, else the default directory), keyed by
 * the generated C, $CC, $BURNCC_CFLAGS and the harness, so running the
 * same module again compiles nothing.  model names the source in the
 * generated C's comments.  Returns status; c says why. */
int check_run_once(Ctx *c, const Backend *be, const Compiled *m, const char *model,
                   const char *wd, const void *const *in, void *const *out);

#endif

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

/*
 * burn_compile_file with the kernels' stack bounded (--max-stack): a
 * kernel whose local arrays (kkernel_local_bytes: a GEMM's or Conv's
 * register tile, partial sums) pass max_stack bytes is compiled again
 * with a smaller register tile (its tile(MR,NR) step, MR or NR halved,
 * over the schedules o asks for) until every kernel fits; one that still
 * does not (no tile, or 1 x 1) is BURN_ERR_LIMIT naming it and its
 * bytes.  max_stack <= 0: burn_compile_file.
 */
int burn_compile_file_bounded(Ctx *c, const char *path, const CompileOpts *o,
                              int64_t max_stack, Compiled **out);

/* BURN_ERR_LIMIT naming the first kernel of m whose local arrays pass
 * max_stack bytes (the refusal of burn_compile_file_bounded, for models
 * compiled otherwise: scripts); BURN_OK if none does. */
int burn_check_stack(Ctx *c, const Compiled *m, int64_t max_stack);

/* One --schedule argument: a file of `KERNEL: steps` lines (when a file
 * of that name opens), else `KERNEL=STEPS`; the schedules are appended to
 * *want (kwant_parse, ir/kir.h), allocated in a. */
int burn_schedule_arg(Ctx *c, Arena *a, const char *arg, KWant **want, int *nwant);

/* One --cpu argument: *out the CPU description NAME names (target_cpu_find:
 * "native" is resolved here, on this machine); BURN_ERR_INVALID with the
 * choices in the message if none. */
int burn_cpu_arg(Ctx *c, const char *name, const TargetCpu **out);

#endif

/*
 * passes.h - the graph passes, run in this order by burn_compile():
 *
 *   pass_bind_dims   symbolic input dims -> the values the user gave
 *   pass_infer_fold  shape/type inference node by node, folding every node
 *                    whose inputs are all constant (so PyTorch's
 *                    Shape->Gather->Concat->Reshape chains disappear)
 *   pass_simplify    BN folding, identities, transpose/reshape
 *                    cancellation, CSE (simplify.c)
 *   pass_dce         drop nodes whose results nobody uses
 *   pass_fuse        decide which nodes become one kernel (fuse.c)
 *   pass_lower_fused every remaining node or fusion group -> kernels
 *   pass_plan        static arena: an offset for every intermediate
 *
 * Each is a plain function over the graph; the verifier may run between
 * them (burn_compile does in debug builds, and --verify forces it).
 */
#ifndef BURN_PASSES_H
#define BURN_PASSES_H

#include "../ir/graph.h"
#include "../ir/kir.h"

typedef struct DimBind {
	const char *name;   /* symbolic dim name, e.g. "batch" */
	int64_t value;
} DimBind;

int pass_bind_dims(Ctx *c, Graph *g, int nbind, const DimBind *bind);
int pass_infer_fold(Ctx *c, Graph *g);
int pass_simplify(Ctx *c, Graph *g);
int pass_dce(Ctx *c, Graph *g);
int pass_lower(Ctx *c, Graph *g, KProgram *p);
/* Fusion groups (fuse.c): which nodes become one kernel.  The Fusion is
 * owned by the caller and freed with fusion_free. */
typedef struct Fusion Fusion;
int pass_fuse(Ctx *c, Graph *g, Fusion **out);
int fusion_count(const Fusion *fu);
void fusion_free(Fusion *fu);
/* Like pass_lower, but one kernel per fusion group (fu may be NULL). */
int pass_lower_fused(Ctx *c, Graph *g, const Fusion *fu, KProgram *p);

/* Static memory plan for the intermediates of a lowered program. */
typedef struct Plan {
	int64_t *offset;        /* per graph value: byte offset in arena, or -1 */
	int64_t arena_bytes;    /* size the caller must provide */
	int64_t lower_bound;    /* max bytes of intermediates live at once */
	int64_t weights_bytes;  /* constant data referenced by kernels */
	int nkernels;
} Plan;

#define BURN_ARENA_ALIGN 64

int pass_plan(Ctx *c, Graph *g, const KProgram *p, Arena *a, Plan *out);

/* ---- the whole pipeline ------------------------------------------------ */

typedef struct CompileOpts {
	int nbind;
	const DimBind *bind;
	int verify;             /* run graph_verify between passes */
	int no_fuse;            /* one kernel per node */
} CompileOpts;

/* A compiled model: the graph after the passes, its kernels and plan.
 * Everything lives in g's arena and in `arena`; burn_compiled_destroy
 * frees it all. */
typedef struct Compiled {
	Graph *g;
	Arena arena;
	KProgram prog;
	Plan plan;
} Compiled;

/* Run the passes on g (taking ownership of it, also on failure). */
int burn_compile_graph(Ctx *c, Graph *g, const CompileOpts *o, Compiled **out);
void burn_compiled_destroy(Compiled *m);

#endif

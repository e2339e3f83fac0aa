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
 *   pass_lower_fused every remaining node or fusion group -> kernels,
 *                    with the Target's tuning constants (tiles, unrolls)
 *   pass_plan        static arena: an offset for every intermediate, and
 *                    the launch list (how each kernel's buffers bind)
 *   pass_schedule    per kernel, for the Target: which loops run on
 *                    threads (and what they keep private), which
 *                    accumulations contract to fused multiply-adds
 *
 * Each is a plain function over the graph; the verifier may run between
 * them (burn_compile does in debug builds, and --verify forces it).
 */
#ifndef BURN_PASSES_H
#define BURN_PASSES_H

#include "../ir/graph.h"
#include "../ir/kir.h"
#include "../targets/target.h"

typedef struct DimBind {
	const char *name;   /* symbolic dim name, e.g. "batch" */
	int64_t value;
} DimBind;

int pass_bind_dims(Ctx *c, Graph *g, int nbind, const DimBind *bind);
int pass_infer_fold(Ctx *c, Graph *g);
int pass_simplify(Ctx *c, Graph *g);
int pass_dce(Ctx *c, Graph *g);
int pass_lower(Ctx *c, Graph *g, KProgram *p, const Target *t);
/* Fusion groups (fuse.c): which nodes become one kernel.  The Fusion is
 * owned by the caller and freed with fusion_free. */
typedef struct Fusion Fusion;
int pass_fuse(Ctx *c, Graph *g, Fusion **out);
int fusion_count(const Fusion *fu);
void fusion_free(Fusion *fu);
/* Like pass_lower, but one kernel per fusion group (fu may be NULL).
 * t (NULL: target_default()) supplies the lowerings' tuning constants. */
int pass_lower_fused(Ctx *c, Graph *g, const Fusion *fu, KProgram *p,
                     const Target *t);

/*
 * The launch list: for every kernel, what each of its KS_GLOBAL buffers is
 * when the kernel runs, decided once by the plan so that every target's
 * emitter (the C run function, a device file's launches) binds the same
 * memory without deciding anything.
 */
enum LaunchKind {
	LK_WEIGHT = 1,   /* constant data: the weight holding value `value` */
	LK_ARENA,        /* an intermediate at byte `offset` of the arena */
	LK_INPUT,        /* graph input `index` (g->in[index]) */
	LK_OUTPUT,       /* graph output `index` (g->out[index]) */
};

/* A byte offset.  A constant now; when symbolic dims stay symbolic through
 * the plan, terms (coefficient x dim) join the constant here, and emitters
 * print the expression instead of the number. */
typedef struct PlanExpr {
	int64_t c;
} PlanExpr;

typedef struct LaunchArg {
	int kind;           /* LaunchKind */
	int buf;            /* the kernel's buffer index */
	int value;          /* the graph value whose memory it is (aliases
	                     * followed: kprog_storage) */
	int index;          /* LK_INPUT, LK_OUTPUT: position in g->in, g->out */
	PlanExpr offset;    /* LK_ARENA: bytes from the arena's start */
} LaunchArg;

typedef struct Launch {
	int narg;
	const LaunchArg *arg;  /* one per KS_GLOBAL buffer, in buffer order */
} Launch;

/* GPU schedule (schedule_gpu.c): map parallel loop nests onto blocks of
 * threads, reductions over rows onto block reductions in shared memory. */
typedef struct GpuSchedOpts {
	int64_t threads;     /* threads per block, a power of two >= 32 */
	int64_t max_blocks;  /* larger grids loop (grid-stride) */
	int64_t min_row;     /* shorter reductions stay in one thread */
	int drop_barrier;    /* tests only: a seeded bug, no barrier after the
	                      * tree steps of block reductions */
} GpuSchedOpts;
int pass_schedule_gpu(Ctx *c, KProgram *p, const GpuSchedOpts *o);

/* Static memory plan for the intermediates of a lowered program. */
typedef struct Plan {
	int64_t *offset;        /* per graph value: byte offset in arena, or -1 */
	int64_t arena_bytes;    /* size the caller must provide */
	int64_t lower_bound;    /* max bytes of intermediates live at once */
	int64_t weights_bytes;  /* constant data referenced by kernels */
	int nkernels;
	const Launch *launch;   /* per kernel (nkernels), in program order */
} Plan;

#define BURN_ARENA_ALIGN 64

int pass_plan(Ctx *c, Graph *g, const KProgram *p, Arena *a, Plan *out);

/* Schedule every kernel of p for t (NULL: target_default()); sets each
 * kernel's sched (ir/kir.h), allocated in p's arena. */
int pass_schedule(Ctx *c, KProgram *p, const Target *t);
/* A kernel's schedule as text, for dumps (BURNCC_DUMP). */
void sched_print(FILE *f, const KKernel *k);

/* ---- the whole pipeline ------------------------------------------------ */

typedef struct CompileOpts {
	int nbind;
	const DimBind *bind;
	int verify;             /* run graph_verify between passes */
	int no_fuse;            /* one kernel per node */
	const Target *target;   /* what to compile for (borrowed, static);
	                         * NULL: target_default() */
} CompileOpts;

/* A compiled model: the graph after the passes, its kernels and plan.
 * Everything lives in g's arena and in `arena`; burn_compiled_destroy
 * frees it all. */
typedef struct Compiled {
	Graph *g;
	Arena arena;
	KProgram prog;
	Plan plan;
	const Target *target;   /* what it was compiled for */
} Compiled;

/* Run the passes on g (taking ownership of it, also on failure). */
int burn_compile_graph(Ctx *c, Graph *g, const CompileOpts *o, Compiled **out);
void burn_compiled_destroy(Compiled *m);

#endif

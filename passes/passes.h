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
#include "../ir/dimexpr.h"
#include "../targets/target.h"

typedef struct DimBind {
	const char *name;   /* symbolic dim name, e.g. "batch" */
	int64_t value;
} DimBind;

int pass_bind_dims(Ctx *c, Graph *g, int nbind, const DimBind *bind);
int pass_infer_fold(Ctx *c, Graph *g);
int pass_fold_node(Ctx *c, Graph *g, Node *n, int *folded);
int pass_simplify(Ctx *c, Graph *g);
/* The step of pass_infer_fold for node i (its inputs inferred): infer it,
 * fold it when its inputs are constant; *left is the fold budget left. */
int infer_fold_node(Ctx *c, Graph *g, int i, int64_t *left);
/* What expanding control flow may still spend: the fold budget (steps,
 * as for infer_fold_node) and copies of subgraphs (loop bodies, branches),
 * counted over the whole graph so that loops nested in loops cannot make
 * the compilation run away. */
#define CF_MAX_COPIES 65536
typedef struct InferBudget {
	int64_t fold;
	int64_t copies;
} InferBudget;
/* Expand control-flow node i of g (If, Loop, Scan: OC_CONTROL) into nodes
 * placed right after it, inferred and folded; node i dies and *added gets
 * the number of nodes placed (passes/ctrlflow.c). */
int cf_expand(Ctx *c, Graph *g, int i, InferBudget *left, int *added);
/* Builders of ctrlflow.c for ops_seq.c: node op(in) with attribute axis
 * (Concat, Gather) defining res (or a new value "prefix/what" in *out),
 * inferred and folded; n values of one shape stacked along a new axis;
 * an int64 constant. */
int cf_add(Ctx *c, Graph *g, int op, const char *prefix, const char *what,
           int nin, const int *in, int64_t axis, int res, InferBudget *left, int *out);
int cf_stack(Ctx *c, Graph *g, const int *v, int n, int axis, int res,
             const char *prefix, InferBudget *left, int *out);
int cf_const_i64(Ctx *c, Graph *g, const char *prefix, const char *name,
                 int rank, const int64_t *dim, const int64_t *data, int *out);
/* Sequence and optional node n (OC_SEQ) resolved (passes/ops_seq.c): its
 * output a compile-time list (VK_SEQ), none (VK_NONE), or defined by
 * tensor nodes added to g, inferred and folded. */
int seq_expand(Ctx *c, Graph *g, const Node *n, InferBudget *left);
/* Function op n (OC_FUNC) expanded into the ops it is made of, added to
 * g, inferred and folded, the last ones defining n's outputs
 * (passes/ops_func.c); src is the node as written (n's copy, in a loop
 * body, has no graph attributes). */
int func_expand(Ctx *c, Graph *g, const Node *n, const Node *src,
                InferBudget *left);
/* Subgraph sub (an attribute of node at) copied into g as control flow's
 * bodies are, its inputs bound to in[], out[] its outputs' values. */
int cf_inline(Ctx *c, Graph *g, const Node *at, const Graph *sub, const int *in,
              const char *prefix, int *out, InferBudget *left);
/* Value dst becomes the list (VK_SEQ) of the n values e[], of dtype dt. */
int seq_make(Ctx *c, Graph *g, int dst, const int *e, int n, int dt);
/* Identity of a sequence or an optional: its output the same list. */
int seq_alias(Ctx *c, Graph *g, int dst, int src);
/* Sequence graph outputs become their elements' outputs ("NAME/K"),
 * empty optionals none (passes/ops_seq.c); pass_infer_fold's last step. */
int seq_flatten_outputs(Ctx *c, Graph *g, InferBudget *left);
int pass_dce(Ctx *c, Graph *g);
/* Softmax attention written in primitives (MatMul, scale, Softmax,
 * MatMul between the head split and merge) becomes one Attention node
 * where target t's Attention keeps the scores on chip (attn_rewrite.c). */
int pass_attn_rewrite(Ctx *c, Graph *g, const Target *t);
/* Whether Attention of that dtype and geometry (query and key lengths,
 * head sizes) takes the tiled one-kernel form on t (ops_attention.c). */
int attention_tiles_fit(const Target *t, int dtype, int64_t sq, int64_t skv, int64_t dk,
                        int64_t dv);
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

/* A size or byte offset: the constant c when e is NULL, else the run-time
 * expression e over the plan's dims (ir/dimexpr.h; c is then 0).  Static
 * programs have constants only, so their emitters print numbers. */
typedef struct PlanExpr {
	int64_t c;
	const DimExpr *e;
} PlanExpr;

typedef struct LaunchArg {
	int kind;           /* LaunchKind */
	int buf;            /* the kernel's buffer index */
	int value;          /* the graph value whose memory it is (aliases
	                     * followed: kprog_storage) */
	int index;          /* LK_INPUT, LK_OUTPUT: position in g->in, g->out */
	PlanExpr offset;    /* LK_ARENA: bytes from the arena's start */
	PlanExpr bytes;     /* the value's size (a device file's copies and
	                     * allocations, checks that a binding fits) */
} LaunchArg;

typedef struct Launch {
	int narg;
	const LaunchArg *arg;  /* one per KS_GLOBAL buffer, in buffer order */
	int ndim;              /* the kernel's dim parameters (kir.h) */
	const DimExpr *const *dim;  /* the value of each, over the plan's dims */
	/* Run-time control flow: when guard is not NULL, the kernel runs
	 * only if the one bool byte guard binds is non-zero (guard_neg 0) or
	 * zero (guard_neg 1): a run-time If's branch (passes/ctrlflow.c).
	 * Skipping is an optimisation a walker may omit: the branches'
	 * results are selected afterwards, so running both is also right. */
	const LaunchArg *guard;
	int guard_neg;
} Launch;

/* GPU schedule (schedule_gpu.c): map parallel loop nests onto blocks of
 * threads, reductions over rows onto block reductions in shared memory. */
typedef struct GpuSchedOpts {
	int64_t threads;     /* threads per block, a power of two >= 32 */
	int64_t max_blocks;  /* larger grids loop (grid-stride) */
	int64_t min_row;     /* shorter reductions stay in one thread */
	int drop_barrier;    /* tests only: a seeded bug, no barrier after the
	                      * tree steps of block reductions (after the
	                      * subgroup partials' stores with subgroups) */
	int subgroup;        /* lanes of a subgroup: block reductions reduce
	                      * within subgroups first; 0: shared memory only */
	int64_t max_threads; /* threads a block may have (a --schedule step
	                      * may ask for more than `threads`); 0: threads */
	int64_t row_cache;   /* bytes of shared memory a block may use to keep
	                      * its row on chip (the onchip step); 0: never */
	int64_t row_regs;    /* elements of its rows a thread may keep in its
	                      * registers (the inreg step); 0: never */
	int64_t row_lanes;   /* short rows: this many threads a row (at most
	                      * the subgroup), several rows a block; 0: a
	                      * block a row (rows(at,B,T,RW)) */
	int dyn_grids;       /* the target launches grids sized by the dims
	                      * (Target.dyn_grids): map_dims may make them;
	                      * else only the items' count is taken at launch */
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
	/* Dims known at run time: the symbolic dims of the graph's inputs, in
	 * the order they first appear (dim i of every DimExpr is dims[i]).
	 * With ndims > 0, arena_bytes is -1 and `arena` is the size. */
	int ndims;
	const char **dims;
	/* The smallest value of each dim the program takes (NULL: 0 for
	 * all; set after pass_plan from Compiled.dyn_min) */
	const int64_t *dim_min;
	PlanExpr arena;
} Plan;

#define BURN_ARENA_ALIGN 64

int pass_plan(Ctx *c, Graph *g, const KProgram *p, Arena *a, Plan *out);

/* The byte size of value v as an expression over the dims `dims` (each
 * symbolic dim of v must be one of them); NULL when out of memory or a
 * dim is not among them. */
const DimExpr *plan_value_bytes(Arena *a, const Graph *g, int v, int ndims,
                                const char *const *dims);

/* Run a planned program with the interpreter, bound exactly as the launch
 * list says: dims[i] is the value of plan->dims[i]; in[i] and out[i] are
 * the graph's inputs and outputs (sized for those dims), arena the
 * plan's arena evaluated at them (aligned to BURN_ARENA_ALIGN), or NULL
 * for one allocated for the run. */
int plan_run_interp(Ctx *c, const Graph *g, const KProgram *p, const Plan *plan,
                    const int64_t *dims, const void *const *in, void *const *out,
                    void *arena);
/* The same, calling after(arg, k, bufs, kdims) when kernel k has run, with
 * its buffers and dims bound as launch_bind binds them (a debugger's
 * look at each kernel's results: burncc train's search for the first
 * non-finite value); a non-zero return stops the run there (BURN_OK, the
 * outputs not all written). */
typedef int (*PlanAfterKernel)(void *arg, int k, void *const *bufs, const int64_t *kdims);
int plan_run_interp_each(Ctx *c, const Graph *g, const KProgram *p, const Plan *plan,
                         const int64_t *dims, const void *const *in, void *const *out,
                         void *arena, PlanAfterKernel after, void *arg);
/* The memory one run binds: the graph's inputs and outputs and the arena
 * (arena_bytes of it, the plan's arena at the run's dims). */
typedef struct LaunchMem {
	const void *const *in;
	void *const *out;
	void *arena;
	int64_t arena_bytes;
} LaunchMem;
/* Bind kernel kk's buffers as its launch l says, for one run at dims (the
 * values of plan->dims; NULL when there are none): bufs[kk->nbuf] gets
 * each KS_GLOBAL buffer's memory (weights: the graph's data), kdims[kk->ndim]
 * the values of its dim parameters.  Every target that runs on host memory
 * binds through this one function; a binding outside the arena, a global
 * buffer left unbound or a bad index is BURN_ERR_INTERNAL. */
int launch_bind(Ctx *c, const Graph *g, const Plan *plan, const KKernel *kk,
                const Launch *l, const int64_t *dims, const LaunchMem *mem,
                void **bufs, int64_t *kdims);
/* Whether launch l is skipped at this run: its guard (if any) read from
 * memory bound as launch_bind binds; every host-memory walker asks it. */
int launch_skip(Ctx *c, const Graph *g, const Plan *plan, const Launch *l,
                const int64_t *dims, const LaunchMem *mem, int *skip);
/* After the kernels: the outputs no kernel wrote (constants, inputs passed
 * through, a second output naming the same value) copied into out. */
int launch_passthrough(Ctx *c, const Graph *g, const Plan *plan,
                       const int64_t *dims, const void *const *in,
                       void *const *out);
/* The arena size at dims (plan->arena evaluated), in *bytes. */
int plan_arena_at(Ctx *c, const Plan *plan, const int64_t *dims, int64_t *bytes);
/* A plan expression (an offset, a binding's bytes) at dims, in *out. */
int plan_expr_at(Ctx *c, const Plan *plan, const PlanExpr *x, const int64_t *dims,
                 int64_t *out);
/* The bytes of graph value v at dims (plan_value_bytes evaluated). */
int plan_bytes_at(Ctx *c, const Graph *g, const Plan *plan, int v, const int64_t *dims,
                  int64_t *out);
/* Where output i of g comes from when no kernel wrote it (the device
 * targets' copy-back, as the C module does it): an earlier output that is
 * the same value (out[] already filled), the value's constant data, or
 * the graph input it is; NULL when none. */
const void *plan_output_source(const Graph *g, int i, const void *const *in,
                               void *const *out);

/*
 * Dims known at run time (dynamic.c), for CompileOpts.dyn: a dim named
 * there stays symbolic.  The supported case is a leading (batch) dim: the
 * graph is compiled for one item and every kernel that touches the dim
 * becomes a loop over it (see there).
 *
 *   dyn_check_graph  before binding: the dims exist, lead every input that
 *                    has them, and reach only ops that treat items alike;
 *                    inb[i] (g->nin of them): whether input i has the dim;
 *                    shp[v] (g->nval of them, zeroed by the caller):
 *                    whether value v is a Shape of a batched value from
 *                    axis 0, which only a Reshape's target may read
 *   dyn_mark         after simplification: the values that depend on the
 *                    dim (*batched, per value, malloc'd, g->nval entries
 *                    then), with every node reaching them checked again on
 *                    its final shapes
 *   dyn_peel         after lowering: the dim becomes a parameter of each
 *                    kernel touching it, which loops over the items, and
 *                    the graph's shapes get the symbolic dim back
 *                    (nval0: the value count when dyn_mark ran)
 */
/* The words of a refusal whose node takes a size along the batch axis from
 * a constant of the model (a Slice [0:3] of it, a Gather of constant rows,
 * TopK's K, CenterCropPad's or Resize's size there): the model specialises
 * the dim, which no mode can leave to run time (burncc check --dynamic
 * counts such a case apart from the gaps). */
#define DYN_FIXED_SIZE "a constant of the model gives its size along the " \
                       "batch axis"
int dyn_check_graph(Ctx *c, const Graph *g, int ndyn, const char *const *dyn,
                    unsigned char *inb, unsigned char *shp);
int dyn_mark(Ctx *c, const Graph *g, const char *dim, const unsigned char *inb,
             const unsigned char *shp, int nshp, unsigned char **batched);
int dyn_peel(Ctx *c, Graph *g, KProgram *p, const char *dim,
             const unsigned char *batched, int nval0);

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
	const Target *target;   /* what to compile for (borrowed: a built-in
	                         * description, or a --cpu copy that outlives
	                         * the Compiled); NULL: target_default() */
	/* Dims that stay symbolic: the program takes their values at run
	 * time (passes/dynamic.c says what may depend on them). */
	int ndyn;
	const char *const *dyn;
	/* Schedules asked for (--schedule), by kernel name (borrowed): the
	 * passes take their steps over the defaults, and a step that does
	 * not apply to its kernel is an error (KWant, ir/kir.h). */
	int nwant;
	const KWant *want;
	/* Add the graph input rng_counter (a uint64 scalar, after the
	 * model's inputs): the random ops without a seed draw from it
	 * (passes/rng.h), so a caller reseeds by passing another value. */
	int rng_counter;
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
	/* --dynamic-dim sampled (dynfit.c): the smallest value of dim
	 * CompileOpts.dyn[j] the program is right for (0: any) */
	int64_t dyn_min[4];
} Compiled;

/* Run the passes on g (taking ownership of it, also on failure). */
int burn_compile_graph(Ctx *c, Graph *g, const CompileOpts *o, Compiled **out);
void burn_compiled_destroy(Compiled *m);
/*
 * Several dims known at run time, on any axis (dynfit.c): m->g is compiled
 * by front (the passes up to lowering, the dims bound as given) at sample
 * values of the dims, and the symbolic program read off the samples into
 * m (its graph replaced by the first sample's).  Refuses, by name, what
 * the samples do not agree on but for sizes.
 */
typedef int (*Front)(Ctx *c, Compiled *m, const CompileOpts *o,
                     const DimBind *b, int nb, int lower);
int dyn_fit_compile(Ctx *c, Compiled *m, const CompileOpts *o, Front front);
/* *out: a copy of g (through its text form). */
int dyn_graph_clone(Ctx *c, const Graph *g, Graph **out);

/* Run m whole in the kernel-IR interpreter (ir/kir_run.c: GPU semantics
 * for mapped kernels), inputs in[], outputs copied to out[]
 * (passes/launch_run.c). */
int compiled_run_interp(Ctx *c, const Compiled *m, const void *const *in,
                        void *const *out);

#endif

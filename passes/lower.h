/*
 * lower.h - what the op families (passes/ops_*.c) implement and share:
 * shape/type inference per op and lowering of a node to kernel IR.
 *
 * Inference runs node by node in topological order.  When it runs, every
 * input of the node has dtype and concrete shape (symbolic dims are bound
 * before inference, see passes.h), and an input that is a constant has
 * v->data set (constant folding runs right after each node is inferred, so a
 * Shape -> Gather -> Concat chain feeding a Reshape is constant by the time
 * Reshape is inferred).  An infer function sets dtype, rank and dim of every
 * present output, or returns burn_fail(...) with a reason; the caller prefixes
 * the node and op.
 *
 * Lowering appends one or more kernels to lw->prog.  Each kernel binds the
 * node's inputs and outputs as buffers.  A lowering never reads constant data
 * at compile time except attributes, small "shape-like" inputs (axes,
 * shape, pads, ...) which infer already required to be constant, and the
 * weights the CPU GEMM core copies into its panel layout (a constant B of
 * MatMul and Gemm becomes a new constant, ops_linalg.c).
 */
#ifndef BURN_LOWER_H
#define BURN_LOWER_H

#include "../ir/graph.h"
#include "../ir/kir.h"
#include "../targets/target.h"

/*
 * An epilogue: pointwise ops fused onto an anchor op (MatMul, Gemm, Conv).
 * While the anchor is lowered with lw->epi set, its output 0 is bound to
 * the epilogue's output value `out` (same shape and dtype), and the anchor
 * must pass every final value through lower_epi_value() or, after a run of
 * output elements is complete in memory, call lower_epi_run() on it.
 */
typedef struct Epilogue {
	int anchor;          /* node index of the anchor */
	int out;             /* value written instead of the anchor's output */
	const char *ops;     /* the fused ops, for the kernel's description */
	void *state;         /* fuse.c's lowering state */
	int applied;         /* hooks called: lowering checks it is not 0 */
} Epilogue;

typedef struct Lower {
	Ctx *ctx;
	Graph *g;
	KProgram *prog;
	Epilogue *epi;       /* for the node being lowered, or NULL */
	/* The target compiled for (borrowed, static): lowerings read its
	 * tuning constants (tile shapes, unroll counts) and never their own.
	 * NULL means target_default(), e.g. when constant folding lowers a
	 * node to run it in the interpreter. */
	const Target *target;
	/* Per value, or NULL: the Transpose node whose output it is when its
	 * one consumer, a MatMul, reads the Transpose's input through the
	 * permuted strides instead (pass_lower_fused: no kernel for the
	 * Transpose; lower_matmul), else -1. */
	const int *tview;
	/* Per value, or NULL: the Split node whose output it is when every
	 * output of that Split is a 3-D Q, K or V of Attention nodes, which
	 * read the Split's input at the part's offset with its row stride
	 * instead (pass_lower_fused: no kernel for the Split;
	 * lower_attention), else -1. */
	const int *sview;
} Lower;

/* Declarations of every infer/lower function named in the op table. */
#define OP(name, mi, xi, mo, xo, cls, ty, inf, low, grad) \
	int inf(Ctx *, Graph *, Node *); int low(Lower *, Node *);
#include "../ir/ops.def"
#undef OP

/* The implementation columns of the op table (ops.def's infer and lower),
 * indexed by OpId like op_table; row OP_NONE_ is NULLs (passes/lower.c). */
typedef struct OpImpl {
	int (*infer)(Ctx *, Graph *, Node *);
	int (*lower)(Lower *, Node *);
} OpImpl;
extern const OpImpl op_impl[OP_COUNT_];

/* The scalar expression of an OC_ELEM op applied to already-loaded operand
 * expressions in[0..n->nin-1] (absent optional inputs are 0), producing
 * out_dtype.  Used by lower_elem and by fusion. */
KRef elem_expr(KB *kb, Graph *g, Node *n, const KRef *in, int out_dtype);

/* Epilogue hooks (fuse.c); both are no-ops when n has no epilogue.
 * lower_epi_value: the final value v of output element `lin` (linear
 * index) of n's output 0, after the epilogue.  lower_epi_run: apply the
 * epilogue in place to elements base .. base+len-1 of buffer buf (n's
 * output 0), whose final values are in memory. */
KRef lower_epi_value(Lower *lw, KB *kb, Node *n, KRef lin, KRef v);
void lower_epi_run(Lower *lw, KB *kb, Node *n, int buf, KRef base, int64_t len);
/* Whether n's epilogue (if any) may run on rows past its output's: every
 * value it reads but the anchor's output and its own is either the same
 * for every row (1 on every axis but the last: a bias, a scalar) or, set
 * in batched (per value), of the anchor output's shape.  Then rows of
 * several items laid end to end index all of them alike (lower_gemm over
 * a batch's items at once). */
int lower_epi_rows_free(const Lower *lw, const Node *n, const unsigned char *batched);

/* ---- schedules (KSteps, ir/kir.h) ------------------------------------ *
 * sched_decide: the decision of kernel k (of program p, being built or
 * scheduled) for the slot of step d: the step p->want asks for k when it
 * answers that slot, else d (the default, from the Target and the
 * template's rules).  Recorded in k's steps; a slot decided before keeps
 * its step (a kernel makes each decision once), which is returned.
 * sched_check_want: after the passes, every step p->want asked for is in
 * its kernel's steps (so it was applied), and every kernel it names
 * exists; else BURN_ERR_INVALID naming the kernel and the step. */
KStep sched_decide(KProgram *p, KKernel *k, KStep d);
int sched_check_want(Ctx *c, const KProgram *p);
/* sched_decide for the kernel the builder kb builds. */
KStep lower_step(Lower *lw, KB *kb, KStep d);
/* The step p->want asks, for the slot of kind, of the kernel that
 * lower_begin(lw, .., n) would start now; NULL if none (for decisions
 * made before the kernel exists, such as Conv's im2col). */
const KStep *lower_want(Lower *lw, Node *n, int kind);

/* ---- helpers shared by the families (passes/lower.c) ---------------- */

/* Start a kernel for node n; the kernel's name derives from the op name. */
void lower_begin(Lower *lw, KB *kb, Node *n);
/* Bind node input k / output k as a buffer; returns the buffer index. */
int lower_in(Lower *lw, KB *kb, Node *n, int k);
int lower_out(Lower *lw, KB *kb, Node *n, int k);
/* Close the kernel (appends it to the program). */
void lower_end(Lower *lw, KB *kb);
/* A fresh intermediate value, for lowerings that need several kernels. */
int lower_temp(Lower *lw, int dtype, int rank, const int64_t *dim);
/* Make a reshape-like node's output an alias of its input (no kernel);
 * returns 1 if it did. */
int lower_alias(Lower *lw, Node *n);
/* Let value v live in the memory of value storage; 0 if out of memory. */
int lower_set_alias(Lower *lw, int v, int storage);
/* v lives off bytes into storage's memory (KProgram.alias_off); 0 when
 * out of memory. */
int lower_set_alias_at(Lower *lw, int v, int storage, int64_t off);
/* Bind graph value v as a buffer. */
int lower_bind(Lower *lw, KB *kb, int v, int access);
/* A new constant value NAME.what (NAME: n's output's) of dtype dt and
 * count elements, a copy of data, bound in kb for reading as *buf: the
 * tables a lowering computes at compile time. */
int lower_const_table(Lower *lw, KB *kb, Node *n, const char *what, int dt,
                      int64_t count, const void *data, int *buf);

/* Row-major element strides of a shape; returns the element count. */
int64_t shape_strides(int rank, const int64_t *dim, int64_t *stride);
/* Open `rank` nested loops over dim[], loop vars into vars[] (outermost
 * first, KF_PARALLEL on all).  Close with loops_close(kb, rank). */
void loops_open(KB *kb, int rank, const int64_t *dim, int *vars);
void loops_close(KB *kb, int rank);
/* sum(vars[i] * stride[i]) as an i64 expression. */
KRef index_linear(KB *kb, int rank, const int *vars, const int64_t *stride);
/* Linear index into value `in` when it is broadcast (numpy rules) to an
 * output of rank out_rank iterated with loop vars out_vars. */
KRef index_bcast(KB *kb, const Value *in, int out_rank, const int *out_vars);
/* Numpy broadcast of shapes a and b into out; error if incompatible. */
int shape_broadcast(Ctx *c, int ra, const int64_t *a, int rb, const int64_t *b,
                    int *rout, int64_t *out);
/* Normalise a possibly negative axis against rank; error if out of range. */
int norm_axis(Ctx *c, int64_t axis, int rank, int *out);
/* Set an output's dtype and shape in one call. */
void set_out(Value *v, int dtype, int rank, const int64_t *dim);
/* Require input k to be a constant (for shape-like inputs). */
int need_const(Ctx *c, Graph *g, Node *n, int k, const Value **out);

#endif

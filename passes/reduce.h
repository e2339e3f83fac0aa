/*
 * reduce.h - the reduction table (passes/reduce.def) and the one emitter
 * that turns a row into kernel IR (passes/reduce.c).
 *
 * A reduction is written once, as a row: identity, prologue, combine,
 * finalize, accumulator type and flags.  Whoever lowers a reduction, the
 * op's own lowering (ops_reduce.c) or a fusion group (fuse.c), describes
 * how to walk the reduced elements and calls reduce_emit(), which runs
 * the passes the row needs (two for LogSumExp: the max, then the shifted
 * sum) and leaves the result in a kernel variable.  So the fused and the
 * unfused paths read the same row and build the same arithmetic.
 *
 *	ReduceWalk w = { my_open, my_close, &state, count, 0 };
 *	int v = reduce_emit(kb, reduce_op(n->op), DT_F32, DT_F32, &w);
 *	kb_store(kb, yb, oidx, kb_get(kb, v));
 */
#ifndef BURN_REDUCE_H
#define BURN_REDUCE_H

#include "lower.h"

enum ReduceIdentity { RI_ZERO, RI_ONE, RI_LOWEST, RI_HIGHEST, RI_NONE };
enum ReducePrologue { RP_NONE, RP_ABS, RP_SQUARE, RP_EXP_SHIFT };
enum ReduceCombine { RC_ADD, RC_MUL, RC_MAX, RC_MIN, RC_ARGMAX, RC_ARGMIN };
enum ReduceFinalize { RF_NONE, RF_MEAN, RF_SQRT, RF_LOG, RF_LOG_SHIFT };
enum ReduceAcc { RA_ELEM, RA_F64_INT, RA_F64_FLOAT, RA_F64 };
enum ReduceFlag { RR_SHIFT = 1, RR_FUSE = 2, RR_ARG = 4 };

/* One row of reduce.def; the meaning of each field is written there. */
typedef struct ReduceOp {
	int op;          /* OpId */
	const char *name;
	int identity;    /* ReduceIdentity */
	int prologue;    /* ReducePrologue */
	int combine;     /* ReduceCombine */
	int finalize;    /* ReduceFinalize */
	int acc;         /* ReduceAcc */
	int flags;       /* ReduceFlag bits */
} ReduceOp;

/* The row of op, or NULL when op is not a reduction of the table. */
const ReduceOp *reduce_op(int op);
/* Whether fusion may inline op (a row with RR_FUSE). */
int reduce_fusable(int op);
/* The accumulator's type for elements computed in type t (arg rows: t). */
int reduce_acc_type(const ReduceOp *r, int t);

/*
 * How the caller walks the reduced elements of one result.  open() opens
 * the loops over the reduced positions and returns the element at the
 * current one, in the compute type t given to reduce_emit; close() closes
 * those loops.  reduce_emit calls the pair once per pass (so the element's
 * expression must be rebuilt in each: fusion forgets its memo).  index is
 * NULL except for RR_ARG rows, where *index receives the position along
 * the (single) reduced axis as an i64 expression.
 */
typedef struct ReduceWalk {
	KRef (*open)(void *self, KRef *index);
	void (*close)(void *self);
	void *self;
	int64_t count;   /* reduced elements per result (RF_MEAN); < 0 unknown */
	int last;        /* arg rows: the last extreme wins (select_last_index) */
	int64_t f64_min; /* a float sum of at least this many elements
	                  * accumulates in f64 (the target's
	                  * tune.sum_f64_min; 0: never) */
} ReduceWalk;

/* Emit reduction r at the current insertion point of kb, over elements of
 * compute type t walked by w.  Returns the kernel variable holding the
 * result: of type out_t (the output's compute type), or i64 for arg rows. */
int reduce_emit(KB *kb, const ReduceOp *r, int t, int out_t, const ReduceWalk *w);

#endif

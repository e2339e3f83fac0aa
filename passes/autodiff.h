/*
 * autodiff.h - reverse-mode automatic differentiation on the graph IR.
 *
 * pass_autodiff appends to an inferred graph the nodes that compute the
 * gradient of a scalar loss with respect to chosen float values (graph
 * inputs or constants).  The backward graph is ordinary graph IR: the same
 * passes then fold, simplify, fuse, plan and lower it with the forward
 * nodes, so backward kernels are fused too.
 *
 * Each op's gradient rule is the `grad` column of its row in ir/ops.def
 * (passes/grad_ops.c implements them); no switch over ops elsewhere.  A
 * rule sees the forward node and the gradients of its outputs and adds the
 * nodes that compute the gradients of its inputs, through the builder
 * below.  The builder infers every node as it is added, so a rule may read
 * the shape of any value it made.
 *
 * Errors: a rule that cannot differentiate its node (an attribute or mode
 * it does not handle) fails with burn_fail; the pass prefixes the node and
 * op (Ctx.node/op), e.g. "node 'n3' (MaxPool): storage_order 1: no
 * gradient rule yet".
 */
#ifndef BURN_AUTODIFF_H
#define BURN_AUTODIFF_H

#include "passes.h"

typedef struct AD {
	Ctx *c;
	Graph *g;
	int nval0;          /* values of the forward graph */
	int *grad;          /* per forward value: its gradient so far, or -1 */
	const char *want;   /* per input of the node being differentiated:
	                     * does the loss need its gradient (float, and
	                     * reached from a value differentiated for) */
	int seq;            /* numbers the names of new values and nodes */
} AD;

/*
 * A gradient rule: n is a copy of the forward node (its arrays are the
 * graph's, stable; its index is not needed).  gout[k] is the gradient of
 * output k (a value of the output's shape and dtype) or -1 when the loss
 * does not depend on it.  The rule sets gin[k] for each input k with
 * a->want[k] to a value of input k's exact shape and dtype, or leaves -1
 * (the gradient is zero).  Returns a status.
 */
typedef int (*GradRule)(AD *a, const Node *n, const int *gout, int *gin);

/* The table's grad column, by OpId; NULL for `nograd`. */
extern const GradRule op_grad[OP_COUNT_];
/* The rule of the `nodiff` rows (no gradient flows). */
int nodiff(AD *a, const Node *n, const int *gout, int *gin);

/*
 * Append the gradient of loss (a float value with one element) with
 * respect to each of wrt[0..nwrt-1] (float values) to g, which must be
 * inferred (pass_infer_fold).  out_grad[j] gets the value holding the
 * gradient of wrt[j] (a zero constant where the loss does not depend on
 * it).  The graph's outputs are left alone: the caller decides them.
 */
int pass_autodiff(Ctx *c, Graph *g, int loss, int nwrt, const int *wrt,
                  int *out_grad);

/* ---- the builder the rules use ------------------------------------------
 *
 * Every function returns the new value's index, or -1 on failure (the
 * message is in a->c; a failed builder call makes the pass fail).  Value
 * arguments of -1 make the result -1 without a new message, so a rule may
 * chain calls and check once at the end.
 */

/* Add node op over in[0..nin-1] with one output, not yet inferred: set its
 * attributes with ad_attr_*, then ad_done infers it and returns output 0. */
int ad_node(AD *a, int op, int nin, const int *in);
void ad_attr_i(AD *a, int nd, const char *name, int64_t v);
void ad_attr_f(AD *a, int nd, const char *name, double v);
void ad_attr_s(AD *a, int nd, const char *name, const char *v);
void ad_attr_ints(AD *a, int nd, const char *name, int n, const int64_t *v);
/* A copy of the forward node's attributes onto nd. */
void ad_attr_copy(AD *a, int nd, const Node *from);
int ad_done(AD *a, int nd);

int ad_op1(AD *a, int op, int x);
int ad_op2(AD *a, int op, int x, int y);
int ad_op3(AD *a, int op, int x, int y, int z);

/* Constants: a scalar of dtype, a 1-D int64 tensor, a tensor. */
int ad_scalar(AD *a, int dtype, double x);
int ad_ints(AD *a, int n, const int64_t *v);
int ad_const(AD *a, int dtype, int rank, const int64_t *dim, const void *data);
/* A scalar of x's dtype. */
int ad_k(AD *a, int x, double v);

int ad_reshape(AD *a, int x, int rank, const int64_t *dim);
int ad_reshape_as(AD *a, int x, int like);
int ad_expand_as(AD *a, int x, int like);
int ad_transpose(AD *a, int x, int rank, const int64_t *perm);
int ad_cast(AD *a, int x, int dtype);
/* Sum over the axes in mask (bit i = axis i), keeping them as 1 or not. */
int ad_rsum(AD *a, int x, unsigned mask, int keep);
/* x[start:end] along axis. */
int ad_slice(AD *a, int x, int axis, int64_t start, int64_t end);
/* Zeros of like's shape and dtype. */
int ad_zeros_like(AD *a, int like);
/* g (broadcast result) summed back to like's shape: the gradient of an
 * input that broadcasting enlarged. */
int ad_unbroadcast(AD *a, int g, int like);

#endif

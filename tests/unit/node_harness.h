/*
 * node_harness.h - one graph node under test, for the op-family unit tests
 * (test_elem.c, test_reduce.c, test_move.c, test_quant.c, test_attention.c).
 *
 * A test adds the node's inputs in order, then the node, then its
 * attributes, and either checks inference alone (t_infer returns the
 * status, so a test can expect an error) or runs the node the whole way:
 * inference, lowering, and every kernel through the kernel-IR interpreter
 * (t_run, which asserts that each step succeeds).
 *
 *	T t;
 *	float a[6] = {...}, b[3] = {...}, y[6];
 *
 *	t_init(&t, 14);                        opset 14
 *	t_input(&t, DT_F32, 2, I64S(2, 3), a);
 *	t_input(&t, DT_F32, 1, I64S(3), b);
 *	t_node(&t, "Add", 1);
 *	cr_assert_eq(t_run1(&t, y), 1);        one kernel, result in y
 *	t_fini(&t);
 *
 * Memory: the graph is owned by T and freed by t_fini.  Input data and the
 * output buffers are borrowed; they must hold the values' elements and
 * outlive t_run.  Constant inputs are copied into the graph.  The harness
 * asserts (criterion) rather than returning errors: it is test code.
 */
#ifndef BURN_TESTS_NODE_HARNESS_H
#define BURN_TESTS_NODE_HARNESS_H

#include <stdint.h>
#include "passes/lower.h"

/* A literal i64 array, for dims and shape-like operands. */
#define I64S(...) ((const int64_t[]){ __VA_ARGS__ })

enum { T_MAXIN = 8, T_MAXOUT = 4 };

/* The node under test and the graph around it. */
typedef struct T {
	Ctx c;                 /* status and message of the last failure */
	Graph *g;              /* owned; freed by t_fini */
	int in[T_MAXIN];       /* the node's inputs in order; -1 if absent */
	void *data[T_MAXIN];   /* input k's elements: borrowed, or the constant's */
	int nin;
	int out[T_MAXOUT];     /* the node's outputs y0, y1, ... */
	int nout;
	int node;              /* index of the node in g */
	const Target *target;  /* lowering's target; NULL: the default */
	const KCaps *caps;     /* legalisation's capabilities; NULL: none
	                        * (everything expanded) */
	int ntmma, ncpasync;   /* tile mma and cpasync statements t_run ran */
} T;

/* A fresh graph with the given ai.onnx opset. */
void t_init(T *t, int opset);
/* Free the graph. */
void t_fini(T *t);

/* Next input: a graph input of that type; data (may be NULL when the test
 * only infers) is what the interpreter reads for it. */
void t_input(T *t, int dtype, int rank, const int64_t *dim, void *data);
/* Next input: an omitted optional one. */
void t_absent(T *t);
/* Next input: a constant holding a copy of data. */
void t_const(T *t, int dtype, int rank, const int64_t *dim, const void *data);
/* Next input: a 1-D i64 constant of n elements (axes, shape, K). */
void t_const_ints(T *t, int n, const int64_t *x);

/* The node, over the inputs given so far, with nout (1..T_MAXOUT) outputs. */
void t_node(T *t, const char *op, int nout);
/* Attributes of the node; t_attr_ints copies v. */
void t_attr_i(T *t, const char *name, int64_t v);
void t_attr_ints(T *t, const char *name, int n, const int64_t *v);
void t_attr_s(T *t, const char *name, const char *s);

/* The node and its output k. */
Node *t_n(T *t);
Value *t_y(T *t, int k);

/* Shape inference through the op table; returns the status. */
int t_infer(T *t);
/* Infer, lower and interpret every kernel in order; output k lands in
 * outs[k].  Other graph values a lowering adds get zeroed scratch memory
 * (constants their data).  Returns the number of kernels run. */
int t_run(T *t, void **outs);
/* t_run for a node with one output. */
int t_run1(T *t, void *out);

#endif

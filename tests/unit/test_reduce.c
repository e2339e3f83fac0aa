/*
 * test_reduce.c - the reduction family (passes/ops_reduce.c): what the ONNX
 * node suite does not cover (old opsets, empty reductions, ties, errors),
 * with kernels run through the kernel-IR interpreter against values worked
 * out by hand.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include "passes/lower.h"

/* One node over graph inputs (some may be constants); up to 2 outputs. */
typedef struct T {
	Ctx c;
	Graph *g;
	int in[4], out[2], node, nin, nout;
	void *data[4];
} T;

static void
t_init(T *t, int opset)
{
	memset(t, 0, sizeof *t);
	burn_ctx_init(&t->c, "test");
	t->g = graph_create("t");
	t->g->opset = opset;
}

static void
t_input(T *t, int dtype, int rank, const int64_t *dim, void *data)
{
	char name[8];
	int v;

	snprintf(name, sizeof name, "x%d", t->nin);
	v = graph_add_value(t->g, name);
	set_out(GV(t->g, v), dtype, rank, dim);
	GV(t->g, v)->kind = VK_INPUT;
	GV(t->g, v)->producer = -1;
	graph_add_input(t->g, v);
	t->data[t->nin] = data;
	t->in[t->nin++] = v;
}

/* A constant i64 input (axes, K). */
static void
t_const(T *t, int n, const int64_t *vals)
{
	char name[8];
	int64_t d = n;
	int v;

	snprintf(name, sizeof name, "c%d", t->nin);
	v = graph_add_value(t->g, name);
	cr_assert_eq(graph_set_const(&t->c, t->g, v, DT_I64, 1, &d, vals), BURN_OK);
	t->data[t->nin] = GV(t->g, v)->data;
	t->in[t->nin++] = v;
}

static Node *
t_node(T *t, const char *op, int nout)
{
	t->nout = nout;
	t->out[0] = graph_add_value(t->g, "y0");
	if (nout > 1)
		t->out[1] = graph_add_value(t->g, "y1");
	t->node = graph_add_node(t->g, op_lookup(op), "n", t->nin, t->in, nout, t->out);
	return &t->g->node[t->node];
}

static void
t_attr_i(T *t, const char *name, int64_t v)
{
	node_add_attr(t->g, t->node, name, AT_INT)->i = v;
}

static void
t_attr_ints(T *t, const char *name, int n, int64_t *v)
{
	Attr *a = node_add_attr(t->g, t->node, name, AT_INTS);
	a->n = n;
	a->ints = v;
}

static int
t_infer(T *t)
{
	Node *n = &t->g->node[t->node];
	return op_table[n->op].infer(&t->c, t->g, n);
}

/* Infer, lower and interpret; outputs land in out0/out1. */
static void
t_run(T *t, void *out0, void *out1)
{
	Node *n = &t->g->node[t->node];
	Arena a;
	KProgram p;
	Lower lw = { 0 };  /* new fields (epi) must be NULL */
	void *bufs[8] = {0};
	KKernel *k;

	cr_assert_eq(t_infer(t), BURN_OK, "infer: %s", t->c.msg);
	arena_init(&a);
	kprog_init(&p, &a);
	lw.ctx = &t->c;
	lw.g = t->g;
	lw.prog = &p;
	cr_assert_eq(op_table[n->op].lower(&lw, n), BURN_OK, "lower: %s", t->c.msg);
	cr_assert_eq(p.nkernel, 1);
	k = p.kernel[0];
	cr_assert_eq(kir_verify(&t->c, k), BURN_OK, "verify: %s", t->c.msg);
	for (int i = 0; i < k->nbuf; i++) {
		int v = k->buf[i].value;
		if (v == t->out[0])
			bufs[i] = out0;
		if (t->nout > 1 && v == t->out[1])
			bufs[i] = out1;
		for (int j = 0; j < t->nin; j++)
			if (t->in[j] == v && v >= 0)
				bufs[i] = t->data[j];
	}
	cr_assert_eq(kir_interp(&t->c, k, bufs), BURN_OK, "interp: %s", t->c.msg);
	arena_free(&a);
}

static void
t_fini(T *t)
{
	graph_destroy(t->g);
}

/* Before opset 18 axes is an attribute; keepdims=0 drops the axis. */
Test(reduce, sum_attr_axes_opset11)
{
	T t;
	float x[6] = {1, 2, 3, 4, 5, 6}, y[3];
	int64_t d[] = {2, 3}, ax[] = {0};

	t_init(&t, 11);
	t_input(&t, DT_F32, 2, d, x);
	t_node(&t, "ReduceSum", 1);
	t_attr_ints(&t, "axes", 1, ax);
	t_attr_i(&t, "keepdims", 0);
	t_run(&t, y, NULL);
	cr_assert_eq(GV(t.g, t.out[0])->rank, 1);
	cr_assert_eq(GV(t.g, t.out[0])->dim[0], 3);
	cr_assert_float_eq(y[0], 5, 1e-6);
	cr_assert_float_eq(y[2], 9, 1e-6);
	t_fini(&t);
}

/* Reducing an empty axis gives the identity: -inf for max, 1 for prod. */
Test(reduce, empty_identities)
{
	static const char *ops[] = {"ReduceMax", "ReduceProd", "ReduceSum", "ReduceMin"};
	static const float want[] = {-INFINITY, 1, 0, INFINITY};
	float x[1], y[3];
	int64_t d[] = {0, 3}, ax[] = {0};

	for (int i = 0; i < 4; i++) {
		T t;
		t_init(&t, 18);
		t_input(&t, DT_F32, 2, d, x);
		t_const(&t, 1, ax);
		t_node(&t, ops[i], 1);
		t_run(&t, y, NULL);
		for (int j = 0; j < 3; j++)
			cr_assert(y[j] == want[i], "%s: %g", ops[i], y[j]);
		t_fini(&t);
	}
}

/* noop_with_empty_axes passes the input through. */
Test(reduce, noop_empty_axes)
{
	T t;
	float x[4] = {1, 2, 3, 4}, y[4];
	int64_t d[] = {2, 2};

	t_init(&t, 18);
	t_input(&t, DT_F32, 2, d, x);
	t_node(&t, "ReduceMax", 1);
	t_attr_i(&t, "noop_with_empty_axes", 1);
	t_run(&t, y, NULL);
	cr_assert_eq(GV(t.g, t.out[0])->rank, 2);
	for (int i = 0; i < 4; i++)
		cr_assert_float_eq(y[i], x[i], 0);
	t_fini(&t);
}

/* ReduceLogSumExp is stable for large inputs. */
Test(reduce, logsumexp_large)
{
	T t;
	float x[2] = {1000, 1000}, y[1];
	int64_t d[] = {2};

	t_init(&t, 18);
	t_input(&t, DT_F32, 1, d, x);
	t_node(&t, "ReduceLogSumExp", 1);
	t_run(&t, y, NULL);
	cr_assert_float_eq(y[0], 1000 + logf(2), 1e-3);
	t_fini(&t);
}

Test(reduce, argmax_ties)
{
	float x[4] = {3, 1, 3, 0};
	int64_t d[] = {4}, y;

	for (int last = 0; last < 2; last++) {
		T t;
		t_init(&t, 13);
		t_input(&t, DT_F32, 1, d, x);
		t_node(&t, "ArgMax", 1);
		t_attr_i(&t, "select_last_index", last);
		t_run(&t, &y, NULL);
		cr_assert_eq(GV(t.g, t.out[0])->dtype, DT_I64);
		cr_assert_eq(y, last ? 2 : 0);
		t_fini(&t);
	}
}

/* Opset < 13 Softmax flattens to 2-D at axis 1: one row of 4 here. */
Test(reduce, softmax_coerced_opset11)
{
	T t;
	float x[4] = {0, 0, 0, 0}, y[4];
	int64_t d[] = {1, 2, 2};

	t_init(&t, 11);
	t_input(&t, DT_F32, 3, d, x);
	t_node(&t, "Softmax", 1);
	cr_assert_eq(infer_same(&t.c, t.g, &t.g->node[t.node]), BURN_OK);
	t_run(&t, y, NULL);
	for (int i = 0; i < 4; i++)
		cr_assert_float_eq(y[i], 0.25f, 1e-6);
	t_fini(&t);
}

Test(reduce, cumsum_reverse_exclusive)
{
	T t;
	int32_t x[4] = {1, 2, 3, 4}, y[4], want[4] = {9, 7, 4, 0};
	int64_t d[] = {4}, ax[] = {0};

	t_init(&t, 14);
	t_input(&t, DT_I32, 1, d, x);
	t_const(&t, 1, ax);
	t_node(&t, "CumSum", 1);
	t_attr_i(&t, "reverse", 1);
	t_attr_i(&t, "exclusive", 1);
	cr_assert_eq(infer_same(&t.c, t.g, &t.g->node[t.node]), BURN_OK);
	t_run(&t, y, NULL);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(y[i], want[i]);
	t_fini(&t);
}

/* Equal values come out lower index first, for largest and smallest. */
Test(reduce, topk_ties)
{
	float x[5] = {2, 5, 2, 5, 1}, v[3];
	int64_t d[] = {5}, k[] = {3}, ix[3];
	static const int64_t want[2][3] = {{4, 0, 2}, {1, 3, 0}};

	for (int largest = 0; largest < 2; largest++) {
		T t;
		t_init(&t, 11);
		t_input(&t, DT_F32, 1, d, x);
		t_const(&t, 1, k);
		t_node(&t, "TopK", 2);
		t_attr_i(&t, "largest", largest);
		t_run(&t, v, ix);
		for (int i = 0; i < 3; i++) {
			cr_assert_eq(ix[i], want[largest][i]);
			cr_assert_float_eq(v[i], x[want[largest][i]], 0);
		}
		t_fini(&t);
	}
}

Test(reduce, errors)
{
	T t;
	float x[6] = {0};
	int64_t d[] = {2, 3}, ax[] = {2}, k[] = {4};

	t_init(&t, 18);
	t_input(&t, DT_F32, 2, d, x);
	t_const(&t, 1, ax);
	t_node(&t, "ReduceSum", 1);
	cr_assert_eq(t_infer(&t), BURN_ERR_INVALID);
	t_fini(&t);

	t_init(&t, 11);
	t_input(&t, DT_F32, 2, d, x);
	t_const(&t, 1, k);
	t_node(&t, "TopK", 2);
	cr_assert_eq(t_infer(&t), BURN_ERR_INVALID);
	t_fini(&t);

	/* axes that are not constant cannot be lowered */
	t_init(&t, 18);
	t_input(&t, DT_F32, 2, d, x);
	t_input(&t, DT_I64, 1, (int64_t[]){1}, ax);
	t_node(&t, "ReduceSum", 1);
	cr_assert_neq(t_infer(&t), BURN_OK);
	t_fini(&t);

	/* GroupNormalization with groups that do not divide the channels */
	{
		float s[3] = {1, 1, 1};
		int64_t d3[] = {3};
		t_init(&t, 21);
		t_input(&t, DT_F32, 2, d, x);
		t_input(&t, DT_F32, 1, d3, s);
		t_input(&t, DT_F32, 1, d3, s);
		t_node(&t, "GroupNormalization", 1);
		t_attr_i(&t, "num_groups", 2);
		cr_assert_eq(t_infer(&t), BURN_ERR_INVALID);
		t_fini(&t);
	}
}

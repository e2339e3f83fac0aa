/*
 * test_reduce.c - the reduction family (passes/ops_reduce.c): what the ONNX
 * node suite does not cover (old opsets, empty reductions, ties, errors),
 * with kernels run through the kernel-IR interpreter against values worked
 * out by hand.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include "node_harness.h"
#include "passes/passes.h"
#include "passes/reduce.h"

/* ---- graphs of several nodes: the fused path ---------------------------- */

static int
g_input(Graph *g, const char *name, int rank, const int64_t *dim)
{
	int v = graph_add_value(g, name);

	set_out(GV(g, v), DT_F32, rank, dim);
	graph_add_input(g, v);
	return v;
}

static int
g_node(Graph *g, const char *op, int nin, const int *in, const char *out)
{
	int o = graph_add_value(g, out);

	graph_add_node(g, op_lookup(op), out, nin, in, 1, &o);
	return o;
}

/*
 * Compile g (taking it; fused unless no_fuse) and run every kernel through
 * the interpreter with x as input 0 and y as output 0.  Returns the number
 * of kernels; kernel 0's name goes to name0 (64 bytes).
 */
static int
run_graph(Graph *g, int no_fuse, void *x, void *y, char *name0)
{
	Ctx c;
	Compiled *m;
	CompileOpts o = { 0 };
	void **mem;
	char *own;
	int nk;

	burn_ctx_init(&c, "test");
	o.no_fuse = no_fuse;
	cr_assert_eq(graph_toposort(&c, g), BURN_OK, "%s", c.msg);
	cr_assert_eq(burn_compile_graph(&c, g, &o, &m), BURN_OK, "%s", c.msg);
	g = m->g;
	mem = calloc(g->nval + 1, sizeof *mem);
	own = calloc(g->nval + 1, 1);
	cr_assert(mem && own);
	for (int v = 0; v < g->nval; v++) {
		if (v == g->in[0])
			mem[v] = x;
		else if (v == g->out[0])
			mem[v] = y;
		else if (GV(g, v)->data)
			mem[v] = GV(g, v)->data;
		else if ((own[v] = 1))
			cr_assert(mem[v] = calloc(1, value_nbytes(GV(g, v)) + 16));
	}
	for (int i = 0; i < m->prog.nkernel; i++) {
		KKernel *k = m->prog.kernel[i];
		void **bufs = calloc(k->nbuf + 1, sizeof *bufs);
		cr_assert(bufs);
		for (int b = 0; b < k->nbuf; b++)
			if (k->buf[b].value >= 0)
				bufs[b] = mem[k->buf[b].value];
		cr_assert_eq(kir_interp(&c, k, bufs), BURN_OK, "%s", c.msg);
		free(bufs);
	}
	snprintf(name0, 64, "%s", m->prog.nkernel ? m->prog.kernel[0]->name : "");
	for (int v = 0; v < g->nval; v++)
		if (own[v])
			free(mem[v]);
	free(own);
	free(mem);
	nk = m->prog.nkernel;
	burn_compiled_destroy(m);
	return nk;
}

/* x[rows, cols] -> pre -> op (axes [1], keepdims) -> y[rows, 1], opset 18. */
static Graph *
pre_reduce(const char *pre, const char *op, int64_t rows, int64_t cols)
{
	Ctx c;
	Graph *g = graph_create("m");
	int64_t ax[1] = { 1 }, one[1] = { 1 };
	int x, p, a, y;

	burn_ctx_init(&c, "test");
	g->opset = 18;
	x = g_input(g, "x", 2, (int64_t[]){ rows, cols });
	p = g_node(g, pre, 1, &x, "p");
	a = graph_add_value(g, "axes");
	cr_assert_eq(graph_set_const(&c, g, a, DT_I64, 1, one, ax), BURN_OK);
	y = g_node(g, op, 2, (int[]){ p, a }, "y");
	graph_add_output(g, y);
	return g;
}

/* The case: Relu -> ReduceLogSumExp over [1,4] of 100s is one
 * fused kernel that keeps the max shift: 100 + log 4 = 101.386, not inf
 * (the fused copy of the reduction used to drop the shift). */
Test(reduce, fused_logsumexp_keeps_shift)
{
	float x[4] = {100, 100, 100, 100}, y[1];
	char name[64];

	for (int no_fuse = 0; no_fuse < 2; no_fuse++) {
		int nk = run_graph(pre_reduce("Relu", "ReduceLogSumExp", 1, 4), no_fuse, x, y, name);
		cr_assert_eq(nk, no_fuse ? 2 : 1);
		if (!no_fuse)
			cr_assert_str_eq(name, "k_fused_reduce");
		cr_assert_float_eq(y[0], 100 + logf(4), 1e-4, "no_fuse=%d: %g", no_fuse, y[0]);
	}
}

/* Every fusable row of the reduction table gives bit for bit the same
 * result fused (one kernel) as unfused (two), on rows that reach the
 * edges of f32: large values, a NaN, -inf, zeros and negatives. */
Test(reduce, fused_matches_unfused_every_row)
{
	static const char *ops[] = {"ReduceSum", "ReduceMean", "ReduceProd", "ReduceMax",
	                            "ReduceMin", "ReduceSumSquare", "ReduceL1", "ReduceL2",
	                            "ReduceLogSum", "ReduceLogSumExp"};
	float x[5][4] = {{0.5f, -1.5f, 2, 3}, {100, 100, 100, 100}, {88, 89, 90, -200},
	                 {1e20f, 1e20f, -1e30f, 0}, {1, NAN, -INFINITY, 3}};
	int nrow = sizeof ops / sizeof ops[0];

	cr_assert_eq(nrow, 10);
	for (int i = 0; i < nrow; i++) {
		float yf[5], yu[5];
		char name[64];
		cr_assert(reduce_fusable(op_lookup(ops[i])), "%s", ops[i]);
		cr_assert_eq(run_graph(pre_reduce("Neg", ops[i], 5, 4), 0, x, yf, name), 1,
		             "%s does not fuse", ops[i]);
		cr_assert_eq(run_graph(pre_reduce("Neg", ops[i], 5, 4), 1, x, yu, name), 2);
		for (int r = 0; r < 5; r++)
			cr_assert(memcmp(&yf[r], &yu[r], 4) == 0 || (isnan(yf[r]) && isnan(yu[r])),
			          "%s row %d: fused %g, unfused %g", ops[i], r, yf[r], yu[r]);
	}
	/* and the shifted row is right, not merely consistent */
	{
		float y[5];
		char name[64];
		run_graph(pre_reduce("Neg", "ReduceLogSumExp", 5, 4), 0, x, y, name);
		cr_assert_float_eq(y[1], -100 + logf(4), 1e-4, "%g", y[1]);
		cr_assert_float_eq(y[3], 1e30f, 1e24, "%g", y[3]);
	}
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
	cr_assert_eq(t_run1(&t, y), 1);
	cr_assert_eq(GV(t.g, t.out[0])->rank, 1);
	cr_assert_eq(GV(t.g, t.out[0])->dim[0], 3);
	cr_assert_float_eq(y[0], 5, 1e-6);
	cr_assert_float_eq(y[2], 9, 1e-6);
	t_fini(&t);
}

/* Reducing an empty axis gives the identity, finalised as ONNX says:
 * -inf for max and LogSumExp and LogSum, 1 for prod, NaN for mean. */
Test(reduce, empty_identities)
{
	static const char *ops[] = {"ReduceMax", "ReduceProd", "ReduceSum", "ReduceMin",
	                            "ReduceLogSumExp", "ReduceLogSum", "ReduceL2",
	                            "ReduceL1", "ReduceSumSquare", "ReduceMean"};
	static const float want[] = {-INFINITY, 1, 0, INFINITY, -INFINITY, -INFINITY, 0, 0, 0, NAN};
	float x[1], y[3];
	int64_t d[] = {0, 3}, ax[] = {0};

	for (int i = 0; i < 10; i++) {
		T t;
		t_init(&t, 18);
		t_input(&t, DT_F32, 2, d, x);
		t_const_ints(&t, 1, ax);
		t_node(&t, ops[i], 1);
		cr_assert_eq(t_run1(&t, y), 1);
		for (int j = 0; j < 3; j++)
			cr_assert(y[j] == want[i] || (isnan(y[j]) && isnan(want[i])),
			          "%s: %g", ops[i], y[j]);
		t_fini(&t);
	}
}

/* Integer empty reductions: the type's minimum for max, maximum for min,
 * 1 for prod. */
Test(reduce, empty_identities_int)
{
	static const char *ops[] = {"ReduceMax", "ReduceMin", "ReduceProd", "ReduceSum"};
	static const int32_t want[] = {INT32_MIN, INT32_MAX, 1, 0};
	int32_t x[1], y[2];
	int64_t d[] = {2, 0}, ax[] = {1};

	for (int i = 0; i < 4; i++) {
		T t;
		t_init(&t, 18);
		t_input(&t, DT_I32, 2, d, x);
		t_const_ints(&t, 1, ax);
		t_node(&t, ops[i], 1);
		cr_assert_eq(t_run1(&t, y), 1);
		for (int j = 0; j < 2; j++)
			cr_assert_eq(y[j], want[i], "%s: %d", ops[i], y[j]);
		t_fini(&t);
	}
}

/* ReduceMean of integers truncates toward zero (np.mean(dtype=int32)). */
Test(reduce, mean_int_truncates)
{
	T t;
	int32_t x[4] = {1, 2, -1, -2}, y[2];
	int64_t d[] = {2, 2}, ax[] = {1};

	t_init(&t, 18);
	t_input(&t, DT_I32, 2, d, x);
	t_const_ints(&t, 1, ax);
	t_node(&t, "ReduceMean", 1);
	cr_assert_eq(t_run1(&t, y), 1);
	cr_assert_eq(y[0], 1);
	cr_assert_eq(y[1], -1);
	t_fini(&t);
}

/* ReduceMax and ReduceMin propagate NaN wherever it is, as np.max does. */
Test(reduce, max_min_propagate_nan)
{
	static const char *ops[] = {"ReduceMax", "ReduceMin"};
	float x[6] = {NAN, 1, 2, 1, NAN, 2}, y[2];
	int64_t d[] = {2, 3}, ax[] = {1};

	for (int i = 0; i < 2; i++) {
		T t;
		t_init(&t, 18);
		t_input(&t, DT_F32, 2, d, x);
		t_const_ints(&t, 1, ax);
		t_node(&t, ops[i], 1);
		cr_assert_eq(t_run1(&t, y), 1);
		cr_assert(isnan(y[0]) && isnan(y[1]), "%s: %g %g", ops[i], y[0], y[1]);
		t_fini(&t);
	}
}

/* ArgMax/ArgMin take NaN as the extreme, as np.argmax does: the first NaN,
 * or the last one with select_last_index. */
Test(reduce, arg_nan)
{
	static const char *ops[] = {"ArgMax", "ArgMin"};
	float x[5] = {1, NAN, 7, NAN, -7};
	int64_t d[] = {5}, y;

	for (int i = 0; i < 2; i++)
		for (int last = 0; last < 2; last++) {
			T t;
			t_init(&t, 13);
			t_input(&t, DT_F32, 1, d, x);
			t_node(&t, ops[i], 1);
			t_attr_i(&t, "select_last_index", last);
			cr_assert_eq(t_run1(&t, &y), 1);
			cr_assert_eq(y, last ? 3 : 1, "%s last=%d: %lld", ops[i], last, (long long)y);
			t_fini(&t);
		}
}

/* Sums that the finalisation brings back into range accumulate in f64;
 * products of f32 do too: 1e30 * -1e30 * 0 * 1 is -0, not NaN. */
Test(reduce, wide_accumulators)
{
	static const char *ops[] = {"ReduceL2", "ReduceL2", "ReduceLogSum", "ReduceProd"};
	static const float x[4][4] = {{1e20f, 1e20f, 0, 0}, {1e-30f, 1e-30f, 0, 0},
	                              {3e38f, 3e38f, 1, 1}, {1e30f, -1e30f, 0, 1}};
	const double want[] = {1e20 * M_SQRT2, 1e-30 * M_SQRT2, log(6e38 + 2), 0};
	int64_t d[] = {4};

	for (int i = 0; i < 4; i++) {
		T t;
		float in[4], y;
		memcpy(in, x[i], sizeof in);
		t_init(&t, 18);
		t_input(&t, DT_F32, 1, d, in);
		t_node(&t, ops[i], 1);
		cr_assert_eq(t_run1(&t, &y), 1);
		cr_assert(fabs(y - want[i]) <= 1e-6 * fabs(want[i]), "%s row %d: %g, want %g",
		          ops[i], i, y, want[i]);
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
	cr_assert_eq(t_run1(&t, y), 1);
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
	cr_assert_eq(t_run1(&t, y), 1);
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
		cr_assert_eq(t_run1(&t, &y), 1);
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
	cr_assert_eq(t_run1(&t, y), 1);
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
	t_const_ints(&t, 1, ax);
	t_node(&t, "CumSum", 1);
	t_attr_i(&t, "reverse", 1);
	t_attr_i(&t, "exclusive", 1);
	cr_assert_eq(infer_same(&t.c, t.g, &t.g->node[t.node]), BURN_OK);
	cr_assert_eq(t_run1(&t, y), 1);
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
		t_const_ints(&t, 1, k);
		t_node(&t, "TopK", 2);
		t_attr_i(&t, "largest", largest);
		cr_assert_eq(t_run(&t, (void *[]){ v, ix }), 1);
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
	t_const_ints(&t, 1, ax);
	t_node(&t, "ReduceSum", 1);
	cr_assert_eq(t_infer(&t), BURN_ERR_INVALID);
	t_fini(&t);

	t_init(&t, 11);
	t_input(&t, DT_F32, 2, d, x);
	t_const_ints(&t, 1, k);
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

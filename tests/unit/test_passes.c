/*
 * test_passes.c - shape inference, constant folding, DCE, lowering and the
 * memory plan on graphs built by hand.
 */
#include <criterion/criterion.h>
#include <string.h>
#include "passes/passes.h"

static int input(Graph *g, const char *name, int dt, int rank, const int64_t *dim)
{
	int v = graph_add_value(g, name);
	Value *x = GV(g, v);

	x->kind = VK_INPUT;
	x->dtype = dt;
	x->rank = rank;
	memcpy(x->dim, dim, sizeof(int64_t) * rank);
	graph_add_input(g, v);
	return v;
}

static int cnst_i64(Ctx *c, Graph *g, const char *name, int n, const int64_t *vals)
{
	int v = graph_add_value(g, name);
	int64_t dim[1] = { n };

	cr_assert_eq(graph_set_const(c, g, v, DT_I64, 1, dim, vals), BURN_OK);
	return v;
}

static int node1(Graph *g, int op, int nin, const int *in, const char *out)
{
	int o = graph_add_value(g, out);

	graph_add_node(g, op, out, nin, in, 1, &o);
	return o;
}

/* x[2,3,4] -> Shape -> Gather(0) -> Concat([-1]) -> Reshape(x, shape):
 * the PyTorch flatten idiom.  After inference and folding the shape chain is
 * gone and only the Reshape (and Relu) remain. */
Test(passes, shape_chain_folds_away)
{
	Ctx c;
	Graph *g = graph_create("m");
	int64_t dim[3] = { 2, 3, 4 }, idx0[1] = { 0 }, m1[1] = { -1 };
	int x, s, i0, gth, neg, cat, r, y;

	burn_ctx_init(&c, "test");
	x = input(g, "x", DT_F32, 3, dim);
	s = node1(g, OP_Shape, 1, &x, "s");
	i0 = cnst_i64(&c, g, "i0", 1, idx0);
	gth = node1(g, OP_Gather, 2, (int[]){ s, i0 }, "g");
	neg = cnst_i64(&c, g, "m1", 1, m1);
	cat = node1(g, OP_Concat, 2, (int[]){ gth, neg }, "cat");
	node_add_attr(g, g->nnode - 1, "axis", AT_INT)->i = 0;
	r = node1(g, OP_Reshape, 2, (int[]){ x, cat }, "r");
	y = node1(g, OP_Relu, 1, &r, "y");
	graph_add_output(g, y);

	cr_assert_eq(graph_toposort(&c, g), BURN_OK, "%s", c.msg);
	cr_assert_eq(pass_infer_fold(&c, g), BURN_OK, "%s", c.msg);
	cr_assert_eq(pass_dce(&c, g), BURN_OK, "%s", c.msg);

	cr_assert_eq(g->nnode, 2, "nodes left: %d", g->nnode);
	cr_assert_eq(g->node[0].op, OP_Reshape);
	cr_assert_eq(g->node[1].op, OP_Relu);
	cr_assert_not_null(GV(g, cat)->data, "shape input folded to a constant");
	cr_assert_eq(value_get_i(GV(g, cat), 0), 2);
	cr_assert_eq(value_get_i(GV(g, cat), 1), -1);
	cr_assert_eq(GV(g, y)->rank, 2);
	cr_assert_eq(GV(g, y)->dim[0], 2);
	cr_assert_eq(GV(g, y)->dim[1], 12);
	cr_assert_eq(graph_verify(&c, g), BURN_OK, "%s", c.msg);
	graph_destroy(g);
}

/* Constant arithmetic is computed at compile time by the interpreter. */
Test(passes, constant_arithmetic_folds)
{
	Ctx c;
	Graph *g = graph_create("m");
	int64_t a[3] = { 1, 2, 3 }, b[3] = { 10, 20, 30 }, dim[1] = { 3 };
	int x, ca, cb, sum, y;

	burn_ctx_init(&c, "test");
	x = input(g, "x", DT_I64, 1, dim);
	ca = cnst_i64(&c, g, "a", 3, a);
	cb = cnst_i64(&c, g, "b", 3, b);
	sum = node1(g, OP_Mul, 2, (int[]){ ca, cb }, "ab");
	y = node1(g, OP_Add, 2, (int[]){ x, sum }, "y");
	graph_add_output(g, y);
	cr_assert_eq(graph_toposort(&c, g), BURN_OK, "%s", c.msg);
	cr_assert_eq(pass_infer_fold(&c, g), BURN_OK, "%s", c.msg);
	cr_assert_eq(g->nnode, 1);
	cr_assert_not_null(GV(g, sum)->data);
	cr_assert_eq(value_get_i(GV(g, sum), 0), 10);
	cr_assert_eq(value_get_i(GV(g, sum), 2), 90);
	graph_destroy(g);
}

/* Inference reports a shape mismatch with the node and op in the message. */
Test(passes, shape_mismatch_is_an_error)
{
	Ctx c;
	Graph *g = graph_create("m");
	int64_t d1[2] = { 2, 3 }, d2[2] = { 4, 5 };
	int a, b, y;

	burn_ctx_init(&c, "bad.onnx");
	a = input(g, "a", DT_F32, 2, d1);
	b = input(g, "b", DT_F32, 2, d2);
	y = node1(g, OP_Add, 2, (int[]){ a, b }, "sum");
	graph_add_output(g, y);
	cr_assert_eq(graph_toposort(&c, g), BURN_OK);
	cr_assert_eq(pass_infer_fold(&c, g), BURN_ERR_SHAPE);
	cr_assert(strstr(c.msg, "bad.onnx"), "%s", c.msg);
	cr_assert(strstr(c.msg, "sum"), "%s", c.msg);
	cr_assert(strstr(c.msg, "Add"), "%s", c.msg);
	graph_destroy(g);
}

/* A chain x -> relu -> neg -> exp -> relu -> y, unfused: intermediates
 * t1..t3 live one kernel each way, so the plan needs two buffers, not
 * three, and meets the lower bound. */
Test(passes, plan_reuses_dead_buffers)
{
	Ctx c;
	Compiled *m;
	CompileOpts o = { 0, NULL, 1, 1 };
	Graph *g = graph_create("m");
	int64_t dim[1] = { 1000 };
	int x, t1, t2, t3, y;

	burn_ctx_init(&c, "test");
	x = input(g, "x", DT_F32, 1, dim);
	t1 = node1(g, OP_Relu, 1, &x, "t1");
	t2 = node1(g, OP_Neg, 1, &t1, "t2");
	t3 = node1(g, OP_Exp, 1, &t2, "t3");
	y = node1(g, OP_Relu, 1, &t3, "y");
	graph_add_output(g, y);
	cr_assert_eq(graph_toposort(&c, g), BURN_OK);
	cr_assert_eq(burn_compile_graph(&c, g, &o, &m), BURN_OK, "%s", c.msg);
	cr_assert_eq(m->prog.nkernel, 4);
	cr_assert_eq(m->plan.lower_bound, 8000);
	cr_assert_leq(m->plan.arena_bytes, 8064);
	cr_assert_neq(m->plan.offset[t1], m->plan.offset[t2]);
	cr_assert_eq(m->plan.offset[t1], m->plan.offset[t3], "t1 is dead when t3 is made");
	burn_compiled_destroy(m);
}

/* Symbolic dims must be bound; an unbound one is a clear error. */
Test(passes, symbolic_dims_need_values)
{
	Ctx c;
	Graph *g = graph_create("m");
	int64_t dim[2] = { -1, 4 };
	int x, y;
	DimBind b = { "batch", 3 };

	burn_ctx_init(&c, "test");
	x = input(g, "x", DT_F32, 2, dim);
	GV(g, x)->sym[0] = "batch";
	y = node1(g, OP_Relu, 1, &x, "y");
	graph_add_output(g, y);
	cr_assert_eq(pass_bind_dims(&c, g, 0, NULL), BURN_ERR_UNSUPPORTED);
	cr_assert(strstr(c.msg, "--dim batch=N"), "%s", c.msg);
	burn_ctx_init(&c, "test");
	cr_assert_eq(pass_bind_dims(&c, g, 1, &b), BURN_OK);
	cr_assert_eq(GV(g, x)->dim[0], 3);
	cr_assert_eq(pass_infer_fold(&c, g), BURN_OK, "%s", c.msg);
	cr_assert_eq(GV(g, y)->dim[0], 3);
	graph_destroy(g);
}

/* The same chain fused: one kernel, no intermediates in memory. */
Test(passes, pointwise_chain_fuses_to_one_kernel)
{
	Ctx c;
	Compiled *m;
	Graph *g = graph_create("m");
	int64_t dim[2] = { 10, 100 }, bdim[1] = { 100 };
	int x, b, t1, t2, t3, y;

	burn_ctx_init(&c, "test");
	x = input(g, "x", DT_F32, 2, dim);
	b = input(g, "b", DT_F32, 1, bdim);
	t1 = node1(g, OP_Add, 2, (int[]){ x, b }, "t1");
	t2 = node1(g, OP_Neg, 1, &t1, "t2");
	t3 = node1(g, OP_Exp, 1, &t2, "t3");
	y = node1(g, OP_Mul, 2, (int[]){ t3, t1 }, "y");
	graph_add_output(g, y);
	cr_assert_eq(graph_toposort(&c, g), BURN_OK);
	cr_assert_eq(burn_compile_graph(&c, g, NULL, &m), BURN_OK, "%s", c.msg);
	cr_assert_eq(m->prog.nkernel, 1);
	cr_assert_eq(m->plan.arena_bytes, 0);
	cr_assert(strstr(m->prog.kernel[0]->ops, "Add(t1)"), "%s", m->prog.kernel[0]->ops);
	cr_assert(strstr(m->prog.kernel[0]->ops, "Mul(y)"), "%s", m->prog.kernel[0]->ops);
	burn_compiled_destroy(m);
}

/* A graph output inside a fused chain is stored by the fused kernel: one
 * kernel writes both t1 and y. */
Test(passes, escaping_value_is_stored)
{
	Ctx c;
	Compiled *m;
	Graph *g = graph_create("m");
	int64_t dim[1] = { 64 };
	int x, t1, y;

	burn_ctx_init(&c, "test");
	x = input(g, "x", DT_F32, 1, dim);
	t1 = node1(g, OP_Relu, 1, &x, "t1");
	y = node1(g, OP_Exp, 1, &t1, "y");
	graph_add_output(g, t1);
	graph_add_output(g, y);
	cr_assert_eq(graph_toposort(&c, g), BURN_OK);
	cr_assert_eq(burn_compile_graph(&c, g, NULL, &m), BURN_OK, "%s", c.msg);
	cr_assert_eq(m->prog.nkernel, 1);
	{
		const KKernel *k = m->prog.kernel[0];
		int wt1 = 0, wy = 0;
		for (int b = 0; b < k->nbuf; b++) {
			wt1 |= k->buf[b].value == t1 && (k->buf[b].access & KA_WRITE);
			wy |= k->buf[b].value == y && (k->buf[b].access & KA_WRITE);
		}
		cr_assert(wt1 && wy, "the kernel stores both outputs");
	}
	burn_compiled_destroy(m);
}

/* Softmax -> Exp -> Softmax: the Exp kernel writes over the first softmax's
 * result, which dies there, so the arena holds one buffer, not two. */
Test(passes, pointwise_result_reuses_dying_input)
{
	Ctx c;
	Compiled *m;
	Graph *g = graph_create("m");
	int64_t dim[2] = { 8, 256 };
	int x, s, t, y;

	burn_ctx_init(&c, "test");
	x = input(g, "x", DT_F32, 2, dim);
	s = node1(g, OP_Softmax, 1, &x, "s");
	t = node1(g, OP_Exp, 1, &s, "t");
	y = node1(g, OP_Softmax, 1, &t, "y");
	graph_add_output(g, y);
	cr_assert_eq(graph_toposort(&c, g), BURN_OK);
	cr_assert_eq(burn_compile_graph(&c, g, NULL, &m), BURN_OK, "%s", c.msg);
	cr_assert_eq(m->prog.nkernel, 3);
	cr_assert_eq(kprog_storage(&m->prog, t), s, "t lives in s's memory");
	cr_assert_eq(m->plan.arena_bytes, 8 * 256 * 4);
	cr_assert_eq(m->plan.offset[t], m->plan.offset[s]);
	burn_compiled_destroy(m);
}

/* Concat(Exp(x), Sin(x)) along axis 1 of [1, 4, 8] -> Softmax: each input
 * is written where the concatenation holds it, so there is no Concat
 * kernel and Sin's result lives 128 bytes into the Concat's memory; with
 * Exp's result read by another node too, the Concat copies. */
static Compiled *concat_model(Ctx *c, int also, int *a, int *b, int *cat)
{
	Compiled *m;
	Graph *g = graph_create("m");
	int64_t dim[3] = { 1, 4, 8 };
	int x, y, in2[2];

	burn_ctx_init(c, "test");
	x = input(g, "x", DT_F32, 3, dim);
	*a = node1(g, OP_Exp, 1, &x, "a");
	*b = node1(g, OP_Sin, 1, &x, "b");
	in2[0] = *a;
	in2[1] = *b;
	*cat = node1(g, OP_Concat, 2, in2, "cat");
	node_add_attr(g, g->nnode - 1, "axis", AT_INT)->i = 1;
	y = node1(g, OP_Softmax, 1, cat, "y");
	graph_add_output(g, y);
	if (also) {
		int z = node1(g, OP_Neg, 1, a, "z");
		graph_add_output(g, z);
	}
	cr_assert_eq(graph_toposort(c, g), BURN_OK);
	cr_assert_eq(burn_compile_graph(c, g, NULL, &m), BURN_OK, "%s", c->msg);
	return m;
}

Test(passes, concat_inputs_placed_in_its_output)
{
	Ctx c;
	Compiled *m;
	int a, b, cat;

	m = concat_model(&c, 0, &a, &b, &cat);
	cr_assert_eq(m->prog.nkernel, 3, "Exp, Sin, Softmax: no Concat kernel");
	cr_assert_eq(kprog_storage(&m->prog, a), cat);
	cr_assert_eq(kprog_storage(&m->prog, b), cat);
	cr_assert_eq(kprog_storage_off(&m->prog, a), 0);
	cr_assert_eq(kprog_storage_off(&m->prog, b), 4 * 8 * 4);
	cr_assert_eq(m->plan.offset[b], m->plan.offset[cat] + 128);
	burn_compiled_destroy(m);

	m = concat_model(&c, 1, &a, &b, &cat);
	cr_assert_eq(m->prog.nkernel, 5, "Exp, Sin, Concat, Softmax, Neg");
	cr_assert_eq(kprog_storage(&m->prog, a), a);
	cr_assert_eq(kprog_storage(&m->prog, b), b);
	burn_compiled_destroy(m);
}

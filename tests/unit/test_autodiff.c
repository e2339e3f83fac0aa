/*
 * test_autodiff.c - the autodiff pass on graphs built by hand: a gradient
 * computed through the whole pipeline and the interpreter, and the errors
 * (no rule, a loss that is not one number, a wrt value that is not float).
 * The rules themselves are checked against finite differences by ctest
 * `grad` (burncc check --grad).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "passes/passes.h"
#include "passes/autodiff.h"

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

static int node(Graph *g, int op, int nin, const int *in, const char *out)
{
	int o = graph_add_value(g, out);

	graph_add_node(g, op, out, nin, in, 1, &o);
	return o;
}

/* loss = sum(op(x) * x) for x f32[4] */
static Graph *make(int op, int *x, int *loss)
{
	Graph *g = graph_create("t");
	int64_t d = 4;
	int y, p;

	g->opset = 17;
	*x = input(g, "x", DT_F32, 1, &d);
	y = node(g, op, 1, x, "y");
	p = node(g, OP_Mul, 2, (int[]){ y, *x }, "p");
	*loss = node(g, OP_ReduceSum, 1, &p, "loss");
	node_add_attr(g, g->nnode - 1, "keepdims", AT_INT)->i = 0;
	return g;
}

/* d/dx sum(exp(x) x) = exp(x) (1 + x), run through the pipeline */
Test(autodiff, exp_times_x)
{
	Ctx c;
	Compiled *m;
	int x, loss, gr;
	const float xv[4] = { -1.5f, 0.0f, 0.5f, 2.0f };
	float gv[4];
	const void *in[1] = { xv };
	void *out[1] = { gv };
	void *arena;
	Graph *g = make(OP_Exp, &x, &loss);

	burn_ctx_init(&c, NULL);
	cr_assert_eq(pass_infer_fold(&c, g), BURN_OK, "%s", c.msg);
	cr_assert_eq(pass_autodiff(&c, g, loss, 1, &x, &gr), BURN_OK, "%s", c.msg);
	graph_add_output(g, gr);
	cr_assert_eq(burn_compile_graph(&c, g, NULL, &m), BURN_OK, "%s", c.msg);
	arena = aligned_alloc(64, (size_t)(m->plan.arena_bytes + 64) / 64 * 64);
	cr_assert_eq(plan_run_interp(&c, m->g, &m->prog, &m->plan, NULL, in, out,
	                             arena), BURN_OK, "%s", c.msg);
	for (int i = 0; i < 4; i++) {
		double want = exp(xv[i]) * (1 + xv[i]);
		cr_expect(fabs(gv[i] - want) <= 1e-5 * (1 + fabs(want)),
		          "x=%g: got %g, want %g", xv[i], gv[i], want);
	}
	free(arena);
	burn_compiled_destroy(m);
}

/* an op whose row says nograd: the message names the node and the op */
Test(autodiff, no_rule)
{
	Ctx c;
	int x, loss, gr;
	Graph *g = make(OP_LpNormalization, &x, &loss);

	burn_ctx_init(&c, NULL);
	cr_assert_eq(pass_infer_fold(&c, g), BURN_OK, "%s", c.msg);
	cr_assert_eq(pass_autodiff(&c, g, loss, 1, &x, &gr), BURN_ERR_UNSUPPORTED);
	cr_expect(strstr(c.msg, "node 'y' (LpNormalization): no gradient rule for op "
	                 "LpNormalization") != NULL, "%s", c.msg);
	graph_destroy(g);
}

Test(autodiff, loss_not_one_number)
{
	Ctx c;
	int x, loss, gr;
	Graph *g = make(OP_Exp, &x, &loss);

	burn_ctx_init(&c, NULL);
	cr_assert_eq(pass_infer_fold(&c, g), BURN_OK, "%s", c.msg);
	/* "p" has 4 elements */
	cr_assert_eq(pass_autodiff(&c, g, graph_find_value(g, "p"), 1, &x, &gr),
	             BURN_ERR_INVALID);
	cr_expect(strstr(c.msg, "not one float") != NULL, "%s", c.msg);
	graph_destroy(g);
}

Test(autodiff, wrt_not_float)
{
	Ctx c;
	int x, loss, gr, k;
	int64_t d = 4;
	Graph *g = make(OP_Exp, &x, &loss);

	k = input(g, "k", DT_I64, 1, &d);
	burn_ctx_init(&c, NULL);
	cr_assert_eq(pass_infer_fold(&c, g), BURN_OK, "%s", c.msg);
	cr_assert_eq(pass_autodiff(&c, g, loss, 1, &k, &gr), BURN_ERR_INVALID);
	cr_expect(strstr(c.msg, "not a float value") != NULL, "%s", c.msg);
	cr_assert_eq(pass_autodiff(&c, g, -3, 1, &x, &gr), BURN_ERR_INVALID);
	graph_destroy(g);
}

/*
 * test_quant.c - the quantization family (passes/ops_quant.c) through the
 * kernel-IR interpreter: QuantizeLinear rounds half to even and saturates,
 * per-axis scales, DequantizeLinear, and shape errors.
 */
#include <criterion/criterion.h>
#include <string.h>
#include "passes/lower.h"

/* One node; inputs are runtime values or constants. */
typedef struct T {
	Ctx c;
	Graph *g;
	int in[4], nin, out, node;
	void *data[4];
} T;

static void
t_init(T *t)
{
	memset(t, 0, sizeof *t);
	burn_ctx_init(&t->c, "test");
	t->g = graph_create("t");
	t->g->opset = 21;
}

static void
t_input(T *t, int dtype, int rank, const int64_t *dim, void *data)
{
	char name[8];
	int v;

	snprintf(name, sizeof name, "x%d", t->nin);
	v = graph_add_value(t->g, name);
	set_out(GV(t->g, v), dtype, rank, dim);
	graph_add_input(t->g, v);
	GV(t->g, v)->producer = -1;
	t->data[t->nin] = data;
	t->in[t->nin++] = v;
}

static void
t_node(T *t, const char *op)
{
	t->out = graph_add_value(t->g, "y");
	t->node = graph_add_node(t->g, op_lookup(op), "n", t->nin, t->in, 1, &t->out);
}

static Node *
t_n(T *t)
{
	return &t->g->node[t->node];
}

/* Infer, lower and interpret; the output lands in out. */
static void
t_run(T *t, void *out)
{
	Arena a;
	KProgram p;
	Lower lw = { 0 };

	cr_assert_eq(op_table[t_n(t)->op].infer(&t->c, t->g, t_n(t)), BURN_OK,
	             "infer: %s", t->c.msg);
	arena_init(&a);
	kprog_init(&p, &a);
	lw.ctx = &t->c;
	lw.g = t->g;
	lw.prog = &p;
	cr_assert_eq(op_table[t_n(t)->op].lower(&lw, t_n(t)), BURN_OK, "lower: %s",
	             t->c.msg);
	for (int i = 0; i < p.nkernel; i++) {
		KKernel *k = p.kernel[i];
		void *bufs[16] = {0};
		cr_assert_eq(kir_verify(&t->c, k), BURN_OK, "verify: %s", t->c.msg);
		for (int b = 0; b < k->nbuf; b++) {
			int v = k->buf[b].value;
			if (v == t->out)
				bufs[b] = out;
			for (int j = 0; j < t->nin; j++)
				if (t->in[j] == v)
					bufs[b] = t->data[j];
		}
		cr_assert_eq(kir_interp(&t->c, k, bufs), BURN_OK, "interp: %s", t->c.msg);
	}
	arena_free(&a);
}

#define I64S(...) ((const int64_t[]){ __VA_ARGS__ })

Test(quant, round_half_even_and_saturate)
{
	float x[8] = { 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 300.f, -300.f, 3.49f };
	float s = 1;
	uint8_t zp = 10, y[8];
	const uint8_t want[8] = { 10, 12, 12, 10, 8, 255, 0, 13 };
	T t;

	t_init(&t);
	t_input(&t, DT_F32, 1, I64S(8), x);
	t_input(&t, DT_F32, 0, NULL, &s);
	t_input(&t, DT_U8, 0, NULL, &zp);
	t_node(&t, "QuantizeLinear");
	t_run(&t, y);
	cr_assert_eq(GV(t.g, t.out)->dtype, DT_U8);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(y[i], want[i], "y[%d] = %d, want %d", i, y[i], want[i]);
	graph_destroy(t.g);
}

Test(quant, int8_per_axis)
{
	float x[6] = { 1, 2, 3, -1, -2, -300 };
	float s[2] = { 0.5f, 2 };
	int8_t zp[2] = { 0, 1 }, y[6];
	const int8_t want[6] = { 2, 4, 6, 1, 0, -128 };
	T t;

	t_init(&t);
	t_input(&t, DT_F32, 2, I64S(2, 3), x);
	t_input(&t, DT_F32, 1, I64S(2), s);
	t_input(&t, DT_I8, 1, I64S(2), zp);
	t_node(&t, "QuantizeLinear");
	node_add_attr(t.g, t.node, "axis", AT_INT)->i = 0;
	t_run(&t, y);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(y[i], want[i], "y[%d] = %d, want %d", i, y[i], want[i]);
	graph_destroy(t.g);
}

Test(quant, dequantize)
{
	uint8_t x[4] = { 0, 3, 128, 255 }, zp = 128;
	float s = 0.5f, y[4];
	const float want[4] = { -64, -62.5f, 0, 63.5f };
	T t;

	t_init(&t);
	t_input(&t, DT_U8, 1, I64S(4), x);
	t_input(&t, DT_F32, 0, NULL, &s);
	t_input(&t, DT_U8, 0, NULL, &zp);
	t_node(&t, "DequantizeLinear");
	t_run(&t, y);
	for (int i = 0; i < 4; i++)
		cr_assert_float_eq(y[i], want[i], 1e-6, "y[%d] = %g", i, y[i]);
	graph_destroy(t.g);
}

Test(quant, bad_per_axis_scale)
{
	T t;

	t_init(&t);
	t_input(&t, DT_F32, 2, I64S(2, 3), NULL);
	t_input(&t, DT_F32, 1, I64S(2), NULL);
	t_node(&t, "QuantizeLinear");
	cr_assert_eq(op_table[t_n(&t)->op].infer(&t.c, t.g, t_n(&t)), BURN_ERR_SHAPE);
	graph_destroy(t.g);
}

/*
 * test_attention.c - Attention, RotaryEmbedding and the losses
 * (passes/ops_attention.c, passes/ops_loss.c): what the ONNX node suite
 * does not cover (a bool mask with is_causal, causal offsets from
 * nonpad_kv_seqlen, out-of-range indices, bad shapes), with kernels run
 * through the kernel-IR interpreter against values worked out by hand.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "passes/lower.h"

/* One node over graph inputs; up to 4 outputs. */
typedef struct T {
	Ctx c;
	Graph *g;
	int in[8], out[4], node, nin, nout;
	void *data[8];
} T;

static void
t_init(T *t, int opset)
{
	memset(t, 0, sizeof *t);
	burn_ctx_init(&t->c, "test");
	t->g = graph_create("t");
	t->g->opset = opset;
}

/* Input k; data NULL with dtype 0 makes an omitted optional input. */
static void
t_input(T *t, int dtype, int rank, const int64_t *dim, void *data)
{
	char name[8];
	int v;

	if (!dtype) {
		t->in[t->nin++] = -1;
		return;
	}
	snprintf(name, sizeof name, "x%d", t->nin);
	v = graph_add_value(t->g, name);
	set_out(GV(t->g, v), dtype, rank, dim);
	GV(t->g, v)->kind = VK_INPUT;
	GV(t->g, v)->producer = -1;
	graph_add_input(t->g, v);
	t->data[t->nin] = data;
	t->in[t->nin++] = v;
}

static void
t_node(T *t, const char *op, int nout)
{
	t->nout = nout;
	for (int i = 0; i < nout; i++) {
		char name[8];
		snprintf(name, sizeof name, "y%d", i);
		t->out[i] = graph_add_value(t->g, name);
	}
	t->node = graph_add_node(t->g, op_lookup(op), "n", t->nin, t->in, nout, t->out);
}

static void
t_attr_i(T *t, const char *name, int64_t v)
{
	node_add_attr(t->g, t->node, name, AT_INT)->i = v;
}

static int
t_infer(T *t)
{
	Node *n = &t->g->node[t->node];
	return op_table[n->op].infer(&t->c, t->g, n);
}

/* Infer, lower and interpret every kernel; scratch values get zeroed
 * memory.  outs[k] receives output k. */
static void
t_run(T *t, void **outs)
{
	Node *n = &t->g->node[t->node];
	void *mem[64] = {0};
	Arena a;
	KProgram p;
	Lower lw = { 0 };

	cr_assert_eq(t_infer(t), BURN_OK, "infer: %s", t->c.msg);
	arena_init(&a);
	kprog_init(&p, &a);
	lw.ctx = &t->c;
	lw.g = t->g;
	lw.prog = &p;
	cr_assert_eq(op_table[n->op].lower(&lw, n), BURN_OK, "lower: %s", t->c.msg);
	cr_assert(t->g->nval <= 64);
	for (int k = 0; k < t->nout; k++)
		mem[t->out[k]] = outs[k];
	for (int j = 0; j < t->nin; j++)
		if (t->in[j] >= 0)
			mem[t->in[j]] = t->data[j];
	for (int v = 0; v < t->g->nval; v++)
		if (!mem[v])
			mem[v] = calloc(1, value_nbytes(GV(t->g, v)) + 16);
	for (int i = 0; i < p.nkernel; i++) {
		KKernel *k = p.kernel[i];
		void *bufs[16] = {0};
		cr_assert_eq(kir_verify(&t->c, k), BURN_OK, "verify: %s", t->c.msg);
		for (int b = 0; b < k->nbuf; b++)
			if (k->buf[b].value >= 0)
				bufs[b] = mem[k->buf[b].value];
		cr_assert_eq(kir_interp(&t->c, k, bufs), BURN_OK, "interp: %s", t->c.msg);
	}
	for (int v = 0; v < t->g->nval; v++) {
		int mine = 1;
		for (int k = 0; k < t->nout; k++)
			mine &= v != t->out[k];
		for (int j = 0; j < t->nin; j++)
			mine &= v != t->in[j];
		if (mine)
			free(mem[v]);
	}
	arena_free(&a);
}

/*
 * One head, head size 1, Q = K = 0: every score is equal, so the output is
 * the plain mean of the V rows that survive the mask.  A bool mask with
 * is_causal: row 0 keeps key 0 only; row 1 keeps keys 0 and 1 minus the
 * masked key 0, i.e. key 1.
 */
Test(attention, bool_mask_and_causal)
{
	T t;
	float q[2] = {0, 0}, k[3] = {0, 0, 0}, v[3] = {1, 2, 4}, y[2];
	unsigned char m[6] = {1, 1, 1, 0, 1, 1};
	int64_t dq[] = {1, 1, 2, 1}, dk[] = {1, 1, 3, 1}, dm[] = {2, 3};
	void *outs[] = {y};

	t_init(&t, 23);
	t_input(&t, DT_F32, 4, dq, q);
	t_input(&t, DT_F32, 4, dk, k);
	t_input(&t, DT_F32, 4, dk, v);
	t_input(&t, DT_BOOL, 2, dm, m);
	t_node(&t, "Attention", 1);
	t_attr_i(&t, "is_causal", 1);
	t_run(&t, outs);
	cr_assert_float_eq(y[0], 1, 1e-6);
	cr_assert_float_eq(y[1], 2, 1e-6);
	graph_destroy(t.g);
}

/* nonpad_kv_seqlen without a past: keys past the valid length are masked,
 * and the causal frontier is bottom-right aligned to it (offset = 2 - 1). */
Test(attention, nonpad_causal_offset)
{
	T t;
	float q[1] = {0}, k[3] = {0, 0, 0}, v[3] = {1, 3, 100}, y[1];
	int64_t nonpad[1] = {2};
	int64_t dq[] = {1, 1, 1, 1}, dk[] = {1, 1, 3, 1}, dn[] = {1};
	void *outs[] = {y};

	t_init(&t, 24);
	t_input(&t, DT_F32, 4, dq, q);
	t_input(&t, DT_F32, 4, dk, k);
	t_input(&t, DT_F32, 4, dk, v);
	t_input(&t, 0, 0, NULL, NULL);
	t_input(&t, 0, 0, NULL, NULL);
	t_input(&t, 0, 0, NULL, NULL);
	t_input(&t, DT_I64, 1, dn, nonpad);
	t_node(&t, "Attention", 1);
	t_attr_i(&t, "is_causal", 1);
	t_run(&t, outs);
	cr_assert_float_eq(y[0], 2, 1e-6);
	graph_destroy(t.g);
}

/* Bad shapes are errors, not crashes. */
Test(attention, bad_shapes)
{
	float x[64];
	int64_t dq[] = {1, 3, 2, 4}, dk[] = {1, 2, 2, 4}, d3[] = {1, 2, 8};
	T t;

	t_init(&t, 23);   /* 3 query heads over 2 kv heads */
	t_input(&t, DT_F32, 4, dq, x);
	t_input(&t, DT_F32, 4, dk, x);
	t_input(&t, DT_F32, 4, dk, x);
	t_node(&t, "Attention", 1);
	cr_assert_eq(t_infer(&t), BURN_ERR_SHAPE);
	graph_destroy(t.g);

	t_init(&t, 23);   /* 3-D without the head counts */
	t_input(&t, DT_F32, 3, d3, x);
	t_input(&t, DT_F32, 3, d3, x);
	t_input(&t, DT_F32, 3, d3, x);
	t_node(&t, "Attention", 1);
	cr_assert_eq(t_infer(&t), BURN_ERR_INVALID);
	graph_destroy(t.g);
}

/* A position id outside the cache is clamped to its last row. */
Test(rotary, position_clamped)
{
	T t;
	float x[2] = {1, 0}, cs[2] = {1, 0}, sn[2] = {0, 1}, y[2];
	int64_t pos[1] = {7};
	int64_t dx[] = {1, 1, 1, 2}, dc[] = {2, 1}, dp[] = {1, 1};
	void *outs[] = {y};

	t_init(&t, 23);
	t_input(&t, DT_F32, 4, dx, x);
	t_input(&t, DT_F32, 2, dc, cs);
	t_input(&t, DT_F32, 2, dc, sn);
	t_input(&t, DT_I64, 2, dp, pos);
	t_node(&t, "RotaryEmbedding", 1);
	t_run(&t, outs);   /* row 1: cos 0, sin 1 rotates (1, 0) to (0, 1) */
	cr_assert_float_eq(y[0], 0, 1e-6);
	cr_assert_float_eq(y[1], 1, 1e-6);
	graph_destroy(t.g);
}

/* NLL mean with weights and ignore_index: sum(-x[t] w[t]) / sum(w[t]). */
Test(loss, nll_weighted_mean)
{
	T t;
	float x[6] = {-1, -2, -3, -4, -5, -6}, w[2] = {2, 3}, y[1];
	int64_t tg[3] = {0, 1, 1};
	int64_t dx[] = {3, 2}, dt[] = {3}, dw[] = {2};
	void *outs[] = {y};

	t_init(&t, 22);
	t_input(&t, DT_F32, 2, dx, x);
	t_input(&t, DT_I64, 1, dt, tg);
	t_input(&t, DT_F32, 1, dw, w);
	t_node(&t, "NegativeLogLikelihoodLoss", 1);
	t_attr_i(&t, "ignore_index", 0);
	t_run(&t, outs);   /* (4*3 + 6*3) / (3 + 3) */
	cr_assert_float_eq(y[0], 5, 1e-6);
	graph_destroy(t.g);
}

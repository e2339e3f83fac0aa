/*
 * ops_func.c - function ops (class OC_FUNC in ir/ops.def): ONNX ops whose
 * meaning is a composition of ops burncc already has, expanded into them
 * during inference.
 *
 * pass_infer_fold hands every OC_FUNC node here through cf_expand, as it
 * does If, Loop and the sequence ops: func_expand adds the nodes the op
 * stands for, each inferred and folded as it is placed (so a constant
 * input still folds through them), the last ones defining the node's
 * outputs, and the node dies.  No later pass sees a function op: the
 * pieces fuse and lower like any other nodes, on every target.
 *
 *   CausalConvWithState(X[B,C,T], W[C,1,K], bias?, past?[B,C,K-1])
 *       P  = past, or zeros [B,C,K-1]
 *       XP = Concat(P, X, axis 2)
 *       Y  = Conv(XP, W, bias, group C)         (valid: T outputs)
 *       Y  = Y * Sigmoid(Y) for activation silu / swish (in f32 for
 *            f16 and bf16, rounded once, as ONNX's function body does)
 *       present = XP[:, :, T : T+K-1]           (the last K-1 steps)
 *
 * Names: the added nodes and values are NODE/WHAT, so a message about one
 * names the function node it came from.
 */
#include <stdio.h>
#include <string.h>
#include "passes.h"
#include "lower.h"

/* What one expansion holds: the node expanded (a copy) and the budget. */
typedef struct Fn {
	Ctx *c;
	Graph *g;
	const Node *n;
	InferBudget *left;
} Fn;

static int nomem(Ctx *c)
{
	return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
}

/* A new value NODE/what, or res when res >= 0; -1 when out of memory. */
static int fn_value(Fn *f, const char *what, int res)
{
	char name[512];

	if (res >= 0)
		return res;
	snprintf(name, sizeof name, "%s/%s", f->n->name, what);
	return graph_add_value(f->g, name);
}

/* Node op(in) named NODE/what with one output (res, or a new value),
 * attributes still to add; *node gets its index, *out its output. */
static int fn_node(Fn *f, int op, const char *what, int nin, const int *in,
                   int res, int *node, int *out)
{
	char name[512];
	int v = fn_value(f, what, res);

	if (v < 0)
		return nomem(f->c);
	snprintf(name, sizeof name, "%s/%s", f->n->name, what);
	if ((*node = graph_add_node(f->g, op, name, nin, in, 1, &v)) < 0)
		return nomem(f->c);
	*out = v;
	return BURN_OK;
}

static int fn_attr_i(Fn *f, int node, const char *name, int64_t v)
{
	Attr *a = node_add_attr(f->g, node, name, AT_INT);

	if (!a)
		return nomem(f->c);
	a->i = v;
	return BURN_OK;
}

/* Infer and fold node idx (placed by fn_node, attributes added). */
static int fn_place(Fn *f, int idx)
{
	return infer_fold_node(f->c, f->g, idx, &f->left->fold);
}

/* fn_node + fn_place for a node without attributes. */
static int fn_add(Fn *f, int op, const char *what, int nin, const int *in,
                  int res, int *out)
{
	int idx;

	TRY(fn_node(f, op, what, nin, in, res, &idx, out));
	return fn_place(f, idx);
}

/* A constant NODE/what of dtype dt and shape dim, all zero bytes (0 in
 * every numeric dtype). */
static int fn_zeros(Fn *f, const char *what, int dt, int rank,
                    const int64_t *dim, int *out)
{
	int64_t n = 1;
	size_t bytes;
	void *z;
	int v = fn_value(f, what, -1);

	if (v < 0)
		return nomem(f->c);
	for (int d = 0; d < rank; d++)
		n *= dim[d];
	bytes = (size_t)n * (size_t)(dtype_bits(dt) + 7) / 8 + 1;
	if (!(z = arena_alloc(&f->g->arena, bytes)))
		return nomem(f->c);
	memset(z, 0, bytes);
	TRY(graph_set_const(f->c, f->g, v, dt, rank, dim, z));
	*out = v;
	return BURN_OK;
}

static int fn_const_i64(Fn *f, const char *what, int64_t x, int *out)
{
	int64_t one = 1;

	return cf_const_i64(f->c, f->g, f->n->name, what, 1, &one, &x, out);
}

/* Input k of the node, which must be present. */
static int fn_in(Fn *f, int k, const Value **out)
{
	if (!(*out = NIN(f->g, f->n, k)))
		return burn_fail(f->c, BURN_ERR_INVALID, "input %d is missing", k);
	return BURN_OK;
}

/* ---- CausalConvWithState ----------------------------------------------- */

static int expand_causal_conv(Fn *f)
{
	Graph *g = f->g;
	const Node *n = f->n;
	const Value *x, *w, *b = NIN(g, n, 2), *p = NIN(g, n, 3);
	const char *act = attr_str(n, "activation", "none");
	int silu, xp, y, idx, in[4], dt;
	int64_t B, C, T, K;
	char ts[160];

	TRY(fn_in(f, 0, &x));
	TRY(fn_in(f, 1, &w));
	dt = x->dtype;
	if (!dtype_is_float(dt))
		return burn_fail(f->c, BURN_ERR_UNSUPPORTED, "input '%s' is %s: "
		                 "CausalConvWithState takes float tensors", x->name,
		                 dtype_name(dt));
	if (x->rank != 3)
		return burn_fail(f->c, BURN_ERR_SHAPE, "input '%s' is %s: "
		                 "[batch, channels, time] expected", x->name,
		                 value_type_str(x, ts, sizeof ts));
	B = x->dim[0], C = x->dim[1], T = x->dim[2];
	if (w->rank != 3 || w->dim[0] != C || w->dim[1] != 1 || w->dim[2] < 1 ||
	    w->dtype != dt)
		return burn_fail(f->c, BURN_ERR_SHAPE, "weight '%s' is %s: %s[%lld,1,K] "
		                 "with K >= 1 expected (one filter per channel)", w->name,
		                 value_type_str(w, ts, sizeof ts), dtype_name(dt),
		                 (long long)C);
	K = w->dim[2];
	if (b && (b->rank != 1 || b->dim[0] != C || b->dtype != dt))
		return burn_fail(f->c, BURN_ERR_SHAPE, "bias '%s' is %s: %s[%lld] "
		                 "expected", b->name, value_type_str(b, ts, sizeof ts),
		                 dtype_name(dt), (long long)C);
	if (p && (p->rank != 3 || p->dim[0] != B || p->dim[1] != C ||
	          p->dim[2] != K - 1 || p->dtype != dt))
		return burn_fail(f->c, BURN_ERR_SHAPE, "past_state '%s' is %s: "
		                 "%s[%lld,%lld,%lld] expected", p->name,
		                 value_type_str(p, ts, sizeof ts), dtype_name(dt),
		                 (long long)B, (long long)C, (long long)(K - 1));
	if (!strcmp(act, "silu") || !strcmp(act, "swish"))
		silu = 1;
	else if (!strcmp(act, "none"))
		silu = 0;
	else
		return burn_fail(f->c, BURN_ERR_UNSUPPORTED, "activation '%s': "
		                 "none, silu or swish expected", act);

	/* the padded input: the past (or zeros) before the new steps */
	xp = n->in[0];
	if (K > 1) {
		int64_t pd[3] = { B, C, K - 1 };
		if (p)
			in[0] = n->in[3];
		else
			TRY(fn_zeros(f, "zero_state", dt, 3, pd, &in[0]));
		in[1] = n->in[0];
		TRY(fn_node(f, OP_Concat, "padded", 2, in, -1, &idx, &xp));
		TRY(fn_attr_i(f, idx, "axis", 2));
		TRY(fn_place(f, idx));
	}

	/* the depthwise convolution, valid over the padded steps */
	in[0] = xp;
	in[1] = n->in[1];
	in[2] = b ? n->in[2] : -1;
	TRY(fn_node(f, OP_Conv, "conv", b ? 3 : 2, in, silu ? -1 : n->out[0], &idx, &y));
	TRY(fn_attr_i(f, idx, "group", C));
	TRY(fn_place(f, idx));
	if (silu) {
		int yf = y, s, m, wide = dt != DT_F32 && dt != DT_F64;
		if (wide) {
			TRY(fn_node(f, OP_Cast, "conv_f32", 1, &y, -1, &idx, &yf));
			TRY(fn_attr_i(f, idx, "to", DT_F32));
			TRY(fn_place(f, idx));
		}
		TRY(fn_add(f, OP_Sigmoid, "sigmoid", 1, &yf, -1, &s));
		in[0] = yf;
		in[1] = s;
		TRY(fn_add(f, OP_Mul, "silu", 2, in, wide ? -1 : n->out[0], &m));
		if (wide) {
			TRY(fn_node(f, OP_Cast, "silu_cast", 1, &m, n->out[0], &idx, &y));
			TRY(fn_attr_i(f, idx, "to", dt));
			TRY(fn_place(f, idx));
		}
	}

	/* the state to carry: the last K-1 steps of the padded input */
	if (n->nout > 1 && n->out[1] >= 0) {
		int st, en, ax, sl[4];
		TRY(fn_const_i64(f, "state_start", T, &st));
		TRY(fn_const_i64(f, "state_end", T + K - 1, &en));
		TRY(fn_const_i64(f, "state_axis", 2, &ax));
		sl[0] = xp, sl[1] = st, sl[2] = en, sl[3] = ax;
		TRY(fn_add(f, OP_Slice, "state", 4, sl, n->out[1], &st));
	}
	return BURN_OK;
}

int func_expand(Ctx *c, Graph *g, const Node *n, InferBudget *left)
{
	Fn f = { c, g, n, left };

	switch (n->op) {
	case OP_CausalConvWithState: return expand_causal_conv(&f);
	}
	return burn_fail(c, BURN_ERR_INTERNAL, "node '%s': not a function op", n->name);
}

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
 *   FlexAttention(Q [B,Hq,L,E], K [B,Hkv,S,E], V [B,Hkv,S,Ev])
 *                                            (domain ai.onnx.preview)
 *       K, V repeated over the Hq/Hkv query heads of each kv head
 *       s  = sqrt(scale) (scale 1/sqrt(E) by default), in f32, on Q and K
 *       P  = Softmax(score_mod(Qs Ks^T), last axis)   in f32 (f64 for f64)
 *       Y  = prob_mod(P) V
 *       score_mod and prob_mod are graph attributes (one input, one
 *       output), copied in as control flow's bodies are (cf_inline)
 *
 *   Adagrad, Momentum, Adam(R, T, X..., G..., [V...,] [H...])
 *                                      (domain ai.onnx.preview.training)
 *       the update rules of the ONNX spec, elementwise per tensor, with
 *       T > 0 tested at run time (Where); R, T and the attributes shared
 *
 *   Binarizer(X)                       X > threshold ? 1 : 0  (ai.onnx.ml)
 *   ArrayFeatureExtractor(X, Y)        Gather(X, Y, last axis)  (ai.onnx.ml)
 *
 *   NonZero(X), Unique(X), NonMaxSuppression(boxes, scores, ...)
 *       their output shapes depend on the input values, so the inputs
 *       must be constants (refused otherwise, naming the input); the
 *       results are computed here and are constants
 *
 *   Compress(X, condition, axis?)
 *       Gather(X, the positions where the constant condition holds, axis)
 *       (X flattened first without axis)
 *
 *   HannWindow, HammingWindow, BlackmanWindow(size)
 *   MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower, upper)
 *       their sizes must be constants, and then so is everything: the
 *       values are computed here in double (as the reference does in
 *       float64), a constant that Cast (output_datatype) rounds once
 *
 * Names: the added nodes and values are NODE/WHAT, so a message about one
 * names the function node it came from.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "passes.h"
#include "lower.h"
#include "autodiff.h"
#include "image.h"

/* The most elements a computed constant may have (8 bytes each). */
#define FN_MAX_ELEMS (1 << 24)

/* What one expansion holds: the node expanded (a copy) and the budget. */
typedef struct Fn {
	Ctx *c;
	Graph *g;
	const Node *n;
	const Node *src;        /* n as written: its graph attributes */
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

/* ---- FlexAttention ------------------------------------------------------- */

/* Op (one input, one output) with attribute to = dt, unless x has it. */
static int fn_cast(Fn *f, const char *what, int x, int dt, int res, int *out)
{
	int idx;

	if (GV(f->g, x)->dtype == dt && res < 0) {
		*out = x;
		return BURN_OK;
	}
	if (GV(f->g, x)->dtype == dt)
		return fn_add(f, OP_Identity, what, 1, &x, res, out);
	TRY(fn_node(f, OP_Cast, what, 1, &x, res, &idx, out));
	TRY(fn_attr_i(f, idx, "to", dt));
	return fn_place(f, idx);
}

/* x [B, Hkv, S, D] with each head repeated G times: [B, Hkv*G, S, D]. */
static int fn_repeat_heads(Fn *f, const char *what, int x, int64_t G, int *out)
{
	const Value *v = GV(f->g, x);
	int64_t d5[5] = { v->dim[0], v->dim[1], 1, v->dim[2], v->dim[3] }, five = 5;
	int64_t d4[4] = { v->dim[0], v->dim[1] * G, v->dim[2], v->dim[3] }, four = 4;
	int in[2], t;
	char name[64];

	if (G == 1) {
		*out = x;
		return BURN_OK;
	}
	in[0] = x;
	snprintf(name, sizeof name, "%s_unsqueeze_shape", what);
	TRY(cf_const_i64(f->c, f->g, f->n->name, name, 1, &five, d5, &in[1]));
	snprintf(name, sizeof name, "%s_unsqueeze", what);
	TRY(fn_add(f, OP_Reshape, name, 2, in, -1, &t));
	d5[2] = G;
	in[0] = t;
	snprintf(name, sizeof name, "%s_expand_shape", what);
	TRY(cf_const_i64(f->c, f->g, f->n->name, name, 1, &five, d5, &in[1]));
	snprintf(name, sizeof name, "%s_expand", what);
	TRY(fn_add(f, OP_Expand, name, 2, in, -1, &t));
	in[0] = t;
	snprintf(name, sizeof name, "%s_heads_shape", what);
	TRY(cf_const_i64(f->c, f->g, f->n->name, name, 1, &four, d4, &in[1]));
	snprintf(name, sizeof name, "%s_heads", what);
	return fn_add(f, OP_Reshape, name, 2, in, -1, out);
}

/* Apply graph attribute `name` of the node (one input, one output) to x. */
static int fn_mod(Fn *f, const char *name, int x, int *out)
{
	const Attr *a = node_attr(f->src, name);
	char prefix[512];

	*out = x;
	if (!a)
		return BURN_OK;
	if (a->type != AT_GRAPH || !a->g || a->g->nin != 1 || a->g->nout != 1)
		return burn_fail(f->c, BURN_ERR_INVALID, "attribute '%s' must be a graph "
		                 "of one input and one output", name);
	snprintf(prefix, sizeof prefix, "%s/%s", f->n->name, name);
	return cf_inline(f->c, f->g, f->n, a->g, &x, prefix, out, f->left);
}

static int expand_flex_attention(Fn *f)
{
	Graph *g = f->g;
	const Node *n = f->n;
	const Value *q, *k, *v;
	int dt, ct, idx, sc, qs, ks, kt, sv, in[2], kx, vx, p;
	int64_t G, E, perm[4] = { 0, 1, 3, 2 }, one = 1;
	float scale, s;
	char ts[3][160];
	Attr *pa;

	TRY(fn_in(f, 0, &q));
	TRY(fn_in(f, 1, &k));
	TRY(fn_in(f, 2, &v));
	dt = q->dtype;
	for (int i = 0; i < f->src->nattr; i++) {
		const Attr *a = &f->src->attr[i];
		if (a->type == AT_GRAPH && strcmp(a->name, "score_mod") &&
		    strcmp(a->name, "prob_mod"))
			return burn_fail(f->c, BURN_ERR_UNSUPPORTED, "graph attribute '%s' "
			                 "(score_mod and prob_mod are supported)", a->name);
	}
	if (!dtype_is_float(dt) || k->dtype != dt || v->dtype != dt || q->rank != 4 ||
	    k->rank != 4 || v->rank != 4 || k->dim[0] != q->dim[0] ||
	    v->dim[0] != q->dim[0] || k->dim[1] != v->dim[1] || k->dim[2] != v->dim[2] ||
	    k->dim[3] != q->dim[3] || k->dim[1] < 1 || q->dim[1] % k->dim[1])
		return burn_fail(f->c, BURN_ERR_SHAPE, "Q %s, K %s, V %s: float [B,Hq,L,E], "
		                 "[B,Hkv,S,E], [B,Hkv,S,Ev] of one dtype, Hq a multiple "
		                 "of Hkv, expected", value_type_str(q, ts[0], sizeof ts[0]),
		                 value_type_str(k, ts[1], sizeof ts[1]),
		                 value_type_str(v, ts[2], sizeof ts[2]));
	G = q->dim[1] / k->dim[1];
	E = q->dim[3];
	ct = dt == DT_F64 ? DT_F64 : DT_F32;
	scale = (float)attr_float(n, "scale", 0);
	if (scale == 0)
		scale = 1.0f / sqrtf((float)E);
	s = sqrtf(scale);

	/* the scale's square root on Q and K, in their type */
	if ((sc = fn_value(f, "scale_sqrt", -1)) < 0)
		return nomem(f->c);
	TRY(graph_set_const(f->c, g, sc, DT_F32, 0, &one, &s));
	TRY(fn_cast(f, "scale_sqrt_cast", sc, dt, -1, &sc));
	TRY(fn_repeat_heads(f, "k", n->in[1], G, &kx));
	TRY(fn_repeat_heads(f, "v", n->in[2], G, &vx));
	in[0] = n->in[0], in[1] = sc;
	TRY(fn_add(f, OP_Mul, "q_scaled", 2, in, -1, &qs));
	in[0] = kx;
	TRY(fn_add(f, OP_Mul, "k_scaled", 2, in, -1, &ks));
	TRY(fn_node(f, OP_Transpose, "k_t", 1, &ks, -1, &idx, &kt));
	if (!(pa = node_add_attr(g, idx, "perm", AT_INTS)) ||
	    !(pa->ints = arena_alloc(&g->arena, sizeof perm)))
		return nomem(f->c);
	memcpy(pa->ints, perm, sizeof perm);
	pa->n = 4;
	TRY(fn_place(f, idx));
	in[0] = qs, in[1] = kt;
	TRY(fn_add(f, OP_MatMul, "scores", 2, in, -1, &sv));
	TRY(fn_cast(f, "scores_cast", sv, ct, -1, &sv));
	TRY(fn_mod(f, "score_mod", sv, &sv));
	TRY(fn_node(f, OP_Softmax, "probs", 1, &sv, -1, &idx, &p));
	TRY(fn_attr_i(f, idx, "axis", 3));
	TRY(fn_place(f, idx));
	TRY(fn_mod(f, "prob_mod", p, &p));
	TRY(fn_cast(f, "v_cast", vx, ct, -1, &vx));
	in[0] = p, in[1] = vx;
	TRY(fn_add(f, OP_MatMul, "y", 2, in, dt == ct ? n->out[0] : -1, &sv));
	if (dt != ct)
		TRY(fn_cast(f, "y_cast", sv, dt, n->out[0], &sv));
	return BURN_OK;
}

/* ---- the training optimisers and ai.onnx.ml ------------------------------ */

/* A scalar constant NODE/what of float or integer dtype dt holding x. */
static int fn_const_of(Fn *f, const char *what, int dt, double x, int *out)
{
	int v = fn_value(f, what, -1);
	int64_t one = 1;

	if (v < 0)
		return nomem(f->c);
	if (dt == DT_F64) {
		TRY(graph_set_const(f->c, f->g, v, DT_F64, 0, &one, &x));
	} else {
		float xf = (float)x;
		TRY(graph_set_const(f->c, f->g, v, DT_F32, 0, &one, &xf));
		if (dt != DT_F32) {
			char name[160];
			snprintf(name, sizeof name, "%s_cast", what);
			return fn_cast(f, name, v, dt, -1, out);
		}
	}
	*out = v;
	return BURN_OK;
}

/* Binary op a op b as NODE/what (res: the value it defines, or -1). */
static int fn_bin(Fn *f, int op, const char *what, int a, int b, int res, int *out)
{
	int in[2] = { a, b };

	return fn_add(f, op, what, 2, in, res, out);
}

/* Where(T > 0, a, b): the optimisers' first-step rule. */
static int fn_if_started(Fn *f, const char *what, int a, int b, int *out)
{
	const Value *t = NIN(f->g, f->n, 1);
	int zero, gt, in[3];
	char name[160];

	snprintf(name, sizeof name, "%s_zero", what);
	TRY(fn_const_of(f, name, DT_F32, 0, &zero));
	if (t->dtype != DT_F32)
		TRY(fn_cast(f, "t_zero_cast", zero, t->dtype, -1, &zero));
	snprintf(name, sizeof name, "%s_started", what);
	TRY(fn_bin(f, OP_Greater, name, f->n->in[1], zero, -1, &gt));
	in[0] = gt, in[1] = a, in[2] = b;
	return fn_add(f, OP_Where, what, 3, in, -1, out);
}

static int expand_optimizer(Fn *f)
{
	const Node *n = f->n;
	int per = n->op == OP_Adam ? 4 : 3, m = (n->nin - 2) / per, dt, i;
	const Value *r, *t, *x;
	double norm = attr_float(n, "norm_coefficient", 0);
	double alpha = attr_float(n, "alpha", n->op == OP_Adam ? 0.9 : 0);
	double beta = attr_float(n, "beta", n->op == OP_Adam ? 0.999 : 0);
	double eps = attr_float(n, "epsilon", n->op == OP_Adam ? 1e-6 : 0);
	const char *mode = attr_str(n, "mode", "standard");
	int rr, cn, ca, cb, c1a, c1b, ce, cdec, rate;
	char w[64];

	if (n->nin < 2 + per || (n->nin - 2) % per || n->nout != m * (per - 1))
		return burn_fail(f->c, BURN_ERR_INVALID, "%d inputs and %d outputs: R, T "
		                 "and N tensors of each of the %d kinds (%s) in, N of "
		                 "each of the %d kinds out, expected", n->nin, n->nout, per,
		                 per == 4 ? "X, G, V, H" : n->op == OP_Adagrad ? "X, G, H" :
		                 "X, G, V", per - 1);
	TRY(fn_in(f, 0, &r));
	TRY(fn_in(f, 1, &t));
	TRY(fn_in(f, 2, &x));
	dt = x->dtype;
	if (!dtype_is_float(dt) || value_numel(r) != 1 || value_numel(t) != 1 ||
	    !dtype_is_int(t->dtype))
		return burn_fail(f->c, BURN_ERR_SHAPE, "R must be a float scalar, T an "
		                 "integer scalar, the tensors float");
	if (n->op == OP_Momentum && strcmp(mode, "standard") && strcmp(mode, "nesterov"))
		return burn_fail(f->c, BURN_ERR_UNSUPPORTED, "mode '%s': standard or "
		                 "nesterov expected", mode);
	for (i = 0; i < m; i++)
		for (int k = 0; k < per; k++) {
			const Value *a = NIN(f->g, n, 2 + k * m + i), *b = NIN(f->g, n, 2 + i);
			if (!a || a->dtype != dt || a->rank != b->rank ||
			    memcmp(a->dim, b->dim, sizeof a->dim[0] * (size_t)a->rank))
				return burn_fail(f->c, BURN_ERR_SHAPE, "input %d must have the "
				                 "dtype and shape of X%d ('%s')", 2 + k * m + i,
				                 i + 1, b->name);
		}
	TRY(fn_cast(f, "r", n->in[0], dt, -1, &rr));
	TRY(fn_const_of(f, "norm_coefficient", dt, norm, &cn));
	TRY(fn_const_of(f, "alpha", dt, alpha, &ca));
	TRY(fn_const_of(f, "beta", dt, beta, &cb));
	TRY(fn_const_of(f, "one_minus_alpha", dt, 1 - alpha, &c1a));
	TRY(fn_const_of(f, "one_minus_beta", dt, 1 - beta, &c1b));
	TRY(fn_const_of(f, "epsilon", dt, eps, &ce));
	/* the rate for this step, shared by the tensors */
	rate = rr;
	if (n->op == OP_Adagrad) {
		/* rate = R / (1 + T decay_factor) */
		int tf, d, one;
		TRY(fn_cast(f, "t_float", n->in[1], dt, -1, &tf));
		TRY(fn_const_of(f, "decay_factor", dt, attr_float(n, "decay_factor", 0), &cdec));
		TRY(fn_bin(f, OP_Mul, "t_decay", tf, cdec, -1, &d));
		TRY(fn_const_of(f, "one", dt, 1, &one));
		TRY(fn_bin(f, OP_Add, "one_t_decay", one, d, -1, &d));
		TRY(fn_bin(f, OP_Div, "rate", rr, d, -1, &rate));
	} else if (n->op == OP_Adam) {
		/* rate = T > 0 ? R sqrt(1 - beta^T) / (1 - alpha^T) : R */
		int tf, pa, pb, sa, sb, adj, one;
		TRY(fn_cast(f, "t_float", n->in[1], dt, -1, &tf));
		TRY(fn_bin(f, OP_Pow, "alpha_t", ca, tf, -1, &pa));
		TRY(fn_bin(f, OP_Pow, "beta_t", cb, tf, -1, &pb));
		TRY(fn_const_of(f, "one", dt, 1, &one));
		TRY(fn_bin(f, OP_Sub, "one_minus_alpha_t", one, pa, -1, &sa));
		TRY(fn_bin(f, OP_Sub, "one_minus_beta_t", one, pb, -1, &sb));
		TRY(fn_add(f, OP_Sqrt, "sqrt_one_minus_beta_t", 1, &sb, -1, &sb));
		TRY(fn_bin(f, OP_Mul, "r_sqrt", rr, sb, -1, &adj));
		TRY(fn_bin(f, OP_Div, "r_adjusted", adj, sa, -1, &adj));
		TRY(fn_if_started(f, "rate", adj, rr, &rate));
	}
	for (i = 0; i < m; i++) {
		int X = n->in[2 + i], G = n->in[2 + m + i], g, a, b, v, h;
		int ox = n->out[i], o1 = n->out[m + i], o2 = per == 4 ? n->out[2 * m + i] : -1;
#define W(s) (snprintf(w, sizeof w, "%s%d", s, i + 1), w)
		/* G_regularized = norm_coefficient X + G */
		TRY(fn_bin(f, OP_Mul, W("norm_x"), cn, X, -1, &a));
		TRY(fn_bin(f, OP_Add, W("g_reg"), a, G, -1, &g));
		switch (n->op) {
		case OP_Adagrad:
			/* H_new = H + g g; X_new = X - rate g / (sqrt(H_new) + eps) */
			h = n->in[2 + 2 * m + i];
			TRY(fn_bin(f, OP_Mul, W("g_sq"), g, g, -1, &a));
			TRY(fn_bin(f, OP_Add, W("h_new"), h, a, o1, &h));
			TRY(fn_add(f, OP_Sqrt, W("h_sqrt"), 1, &h, -1, &a));
			TRY(fn_bin(f, OP_Add, W("h_adaptive"), a, ce, -1, &a));
			TRY(fn_bin(f, OP_Div, W("step_dir"), g, a, -1, &a));
			TRY(fn_bin(f, OP_Mul, W("step"), rate, a, -1, &a));
			TRY(fn_bin(f, OP_Sub, W("x_new"), X, a, ox, &a));
			break;
		case OP_Momentum: {
			/* V_new = alpha V + (T > 0 ? beta : 1) g */
			int one, bt;
			v = n->in[2 + 2 * m + i];
			TRY(fn_const_of(f, W("one"), dt, 1, &one));
			TRY(fn_if_started(f, W("beta_adjusted"), cb, one, &bt));
			TRY(fn_bin(f, OP_Mul, W("alpha_v"), ca, v, -1, &a));
			TRY(fn_bin(f, OP_Mul, W("beta_g"), bt, g, -1, &b));
			TRY(fn_bin(f, OP_Add, W("v_new"), a, b, o1, &v));
			if (!strcmp(mode, "nesterov")) {
				/* X_new = X - R (g + alpha V_new) */
				TRY(fn_bin(f, OP_Mul, W("alpha_v_new"), ca, v, -1, &a));
				TRY(fn_bin(f, OP_Add, W("dir"), g, a, -1, &v));
			}
			TRY(fn_bin(f, OP_Mul, W("step"), rr, v, -1, &a));
			TRY(fn_bin(f, OP_Sub, W("x_new"), X, a, ox, &a));
			break;
		}
		case OP_Adam: {
			/* V_new = alpha V + (1-alpha) g; H_new = beta H + (1-beta) g g;
			 * X_new = X - rate V_new / (sqrt(H_new) + eps), then times
			 * (1 - norm_coefficient_post) */
			double post = attr_float(n, "norm_coefficient_post", 0);
			v = n->in[2 + 2 * m + i];
			h = n->in[2 + 3 * m + i];
			TRY(fn_bin(f, OP_Mul, W("alpha_v"), ca, v, -1, &a));
			TRY(fn_bin(f, OP_Mul, W("g_part"), c1a, g, -1, &b));
			TRY(fn_bin(f, OP_Add, W("v_new"), a, b, o1, &v));
			TRY(fn_bin(f, OP_Mul, W("beta_h"), cb, h, -1, &a));
			TRY(fn_bin(f, OP_Mul, W("g_sq"), g, g, -1, &b));
			TRY(fn_bin(f, OP_Mul, W("g_sq_part"), c1b, b, -1, &b));
			TRY(fn_bin(f, OP_Add, W("h_new"), a, b, o2, &h));
			TRY(fn_add(f, OP_Sqrt, W("h_sqrt"), 1, &h, -1, &a));
			TRY(fn_bin(f, OP_Add, W("h_adaptive"), a, ce, -1, &a));
			TRY(fn_bin(f, OP_Div, W("step_dir"), v, a, -1, &a));
			TRY(fn_bin(f, OP_Mul, W("step"), rate, a, -1, &a));
			if (post == 0) {
				TRY(fn_bin(f, OP_Sub, W("x_new"), X, a, ox, &a));
			} else {
				int cp;
				TRY(fn_bin(f, OP_Sub, W("x_step"), X, a, -1, &a));
				TRY(fn_const_of(f, W("post"), dt, 1 - post, &cp));
				TRY(fn_bin(f, OP_Mul, W("x_new"), a, cp, ox, &a));
			}
			break;
		}
		}
#undef W
	}
	return BURN_OK;
}

static int expand_binarizer(Fn *f)
{
	const Value *x;
	int thr, gt, one, zero, in[3];

	TRY(fn_in(f, 0, &x));
	if (!dtype_is_float(x->dtype) && !dtype_is_int(x->dtype))
		return burn_fail(f->c, BURN_ERR_UNSUPPORTED, "input '%s' is %s: a "
		                 "number type expected", x->name, dtype_name(x->dtype));
	TRY(fn_const_of(f, "threshold", x->dtype == DT_F64 ? DT_F64 : DT_F32,
	                attr_float(f->n, "threshold", 0), &thr));
	TRY(fn_cast(f, "threshold_cast", thr, x->dtype, -1, &thr));
	TRY(fn_bin(f, OP_Greater, "above", f->n->in[0], thr, -1, &gt));
	TRY(fn_const_of(f, "one", DT_F32, 1, &one));
	TRY(fn_cast(f, "one_cast", one, x->dtype, -1, &one));
	TRY(fn_const_of(f, "zero", DT_F32, 0, &zero));
	TRY(fn_cast(f, "zero_cast", zero, x->dtype, -1, &zero));
	in[0] = gt, in[1] = one, in[2] = zero;
	return fn_add(f, OP_Where, "y", 3, in, f->n->out[0], &gt);
}

static int expand_feature_extractor(Fn *f)
{
	const Value *x, *y;
	int idx, out, in[2];

	TRY(fn_in(f, 0, &x));
	TRY(fn_in(f, 1, &y));
	if (x->rank < 1 || !dtype_is_int(y->dtype))
		return burn_fail(f->c, BURN_ERR_SHAPE, "X must have a rank, the "
		                 "indices ('%s') be integers", y->name);
	in[1] = f->n->in[1];
	if (y->rank != 1) {     /* the indices, flattened */
		int64_t flat = value_numel(y), one = 1;
		in[0] = f->n->in[1];
		TRY(cf_const_i64(f->c, f->g, f->n->name, "indices_shape", 1, &one, &flat,
		                 &in[1]));
		TRY(fn_add(f, OP_Reshape, "indices", 2, in, -1, &in[1]));
	}
	in[0] = f->n->in[0];
	TRY(fn_node(f, OP_Gather, "gather", 2, in, f->n->out[0], &idx, &out));
	TRY(fn_attr_i(f, idx, "axis", x->rank - 1));
	return fn_place(f, idx);
}

/* ---- data-dependent shapes: NonZero, Unique, NonMaxSuppression ----------- */

/* Input k, which must be a constant: its values decide the output shape. */
static int fn_const_in(Fn *f, int k, const Value **out)
{
	TRY(fn_in(f, k, out));
	if (!(*out)->data)
		return burn_fail(f->c, BURN_ERR_UNSUPPORTED, "input %d ('%s') must be a "
		                 "constant: the output's shape depends on its values, and "
		                 "burncc compiles static shapes", k, (*out)->name);
	return BURN_OK;
}

/* Output k (if present) := the constant dtype dt, shape dim, data (copied). */
static int fn_out_const(Fn *f, int k, int dt, int rank, const int64_t *dim,
                        const void *data)
{
	int idx, v;

	if (k >= f->n->nout || f->n->out[k] < 0)
		return BURN_OK;
	if ((v = fn_value(f, "values", -1)) < 0)
		return nomem(f->c);
	TRY(graph_set_const(f->c, f->g, v, dt, rank, dim, data));
	TRY(fn_node(f, OP_Identity, "result", 1, &v, f->n->out[k], &idx, &v));
	return fn_place(f, idx);
}

static int expand_nonzero(Fn *f)
{
	const Value *x;
	int64_t n, cnt = 0, dim[2], *out;
	int rc, r;

	TRY(fn_const_in(f, 0, &x));
	n = value_numel(x);
	r = x->rank ? x->rank : 1;
	for (int64_t i = 0; i < n; i++)
		cnt += value_get_f(x, i) != 0;
	if (!(out = malloc(sizeof *out * (size_t)(r * cnt + 1))))
		return nomem(f->c);
	/* row d: coordinate d of each non-zero, in row-major order */
	for (int64_t i = 0, j = 0; i < n; i++) {
		int64_t rest = i;
		if (value_get_f(x, i) == 0)
			continue;
		for (int d = x->rank - 1; d >= 0; d--) {
			out[d * cnt + j] = rest % x->dim[d];
			rest /= x->dim[d];
		}
		if (!x->rank)
			out[j] = 0;
		j++;
	}
	dim[0] = r;
	dim[1] = cnt;
	rc = fn_out_const(f, 0, DT_I64, 2, dim, out);
	free(out);
	return rc;
}

/* Unique: slices of X along the axis (elements without one), compared
 * value by value. */
typedef struct Uniq {
	const Value *x;
	int64_t outer, len, inner;   /* X as [outer, len, inner] */
} Uniq;

static int uniq_cmp(const Uniq *u, int64_t a, int64_t b)
{
	for (int64_t o = 0; o < u->outer; o++)
		for (int64_t i = 0; i < u->inner; i++) {
			int64_t pa = (o * u->len + a) * u->inner + i, pb = (o * u->len + b) * u->inner + i;
			if (dtype_is_float(u->x->dtype)) {
				double va = value_get_f(u->x, pa), vb = value_get_f(u->x, pb);
				if (va != vb)
					return va < vb ? -1 : 1;
			} else {
				int64_t va = value_get_i(u->x, pa), vb = value_get_i(u->x, pb);
				if (va != vb)
					return va < vb ? -1 : 1;
			}
		}
	return 0;
}

static int expand_unique(Fn *f)
{
	const Value *x;
	const Attr *ax = node_attr(f->n, "axis");
	int sorted = attr_int(f->n, "sorted", 1) != 0, rc = BURN_OK, axis = 0, esz;
	int64_t k = 0, *first, *inv, *cnt, *order, dim[BURN_MAX_RANK];
	Uniq u;
	char *y;

	TRY(fn_const_in(f, 0, &x));
	esz = dtype_size(x->dtype);
	if (!esz || x->dtype == DT_STRING)
		return burn_fail(f->c, BURN_ERR_UNSUPPORTED, "dtype %s", dtype_name(x->dtype));
	u.x = x;
	u.outer = u.inner = 1;
	if (ax) {
		if (ax->i < -x->rank || ax->i >= x->rank)
			return burn_fail(f->c, BURN_ERR_INVALID, "axis %lld is out of range "
			                 "for rank %d", (long long)ax->i, x->rank);
		axis = (int)(ax->i < 0 ? ax->i + x->rank : ax->i);
		for (int d = 0; d < axis; d++)
			u.outer *= x->dim[d];
		for (int d = axis + 1; d < x->rank; d++)
			u.inner *= x->dim[d];
		u.len = x->dim[axis];
	} else {
		u.len = value_numel(x);
	}
	/* pairwise comparison: bounded so a large constant cannot stall */
	if ((double)u.len * (double)u.len * (double)(u.outer * u.inner) > 4e9)
		return burn_fail(f->c, BURN_ERR_LIMIT, "Unique of %lld slices of %lld "
		                 "elements at compile time: too much work (at most 4e9 "
		                 "element comparisons)", (long long)u.len,
		                 (long long)(u.outer * u.inner));
	first = malloc(sizeof *first * (size_t)(u.len + 1));
	inv = malloc(sizeof *inv * (size_t)(u.len + 1));
	cnt = malloc(sizeof *cnt * (size_t)(u.len + 1));
	order = malloc(sizeof *order * (size_t)(u.len + 1));
	y = malloc((size_t)esz * (size_t)(value_numel(x) + 1));
	if (!first || !inv || !cnt || !order || !y) {
		rc = nomem(f->c);
		goto out;
	}
	/* the distinct slices in order of first occurrence (quadratic: the
	 * input is a constant, bounded by the fold budget's sizes) */
	for (int64_t i = 0; i < u.len; i++) {
		int64_t j;
		for (j = 0; j < k && uniq_cmp(&u, first[j], i); j++)
			;
		if (j == k) {
			first[k] = i;
			cnt[k++] = 0;
		}
		cnt[j]++;
		inv[i] = j;
	}
	for (int64_t j = 0; j < k; j++)
		order[j] = j;
	if (sorted)   /* insertion sort of the distinct slices */
		for (int64_t j = 1; j < k; j++)
			for (int64_t m = j; m > 0 && uniq_cmp(&u, first[order[m]], first[order[m - 1]]) < 0; m--) {
				int64_t t = order[m];
				order[m] = order[m - 1];
				order[m - 1] = t;
			}
	{
		int64_t *pos = malloc(sizeof *pos * (size_t)(k + 1)), *fo = malloc(sizeof *fo * (size_t)(k + 1));
		int64_t *co = malloc(sizeof *co * (size_t)(k + 1));
		if (!pos || !fo || !co) {
			free(pos); free(fo); free(co);
			rc = nomem(f->c);
			goto out;
		}
		for (int64_t j = 0; j < k; j++) {
			pos[order[j]] = j;
			fo[j] = first[order[j]];
			co[j] = cnt[order[j]];
			for (int64_t o = 0; o < u.outer; o++)
				memcpy(y + (size_t)esz * (size_t)((o * k + j) * u.inner),
				       (const char *)x->data + (size_t)esz * (size_t)((o * u.len + fo[j]) * u.inner),
				       (size_t)esz * (size_t)u.inner);
		}
		for (int64_t i = 0; i < u.len; i++)
			inv[i] = pos[inv[i]];
		if (ax) {
			memcpy(dim, x->dim, sizeof dim[0] * (size_t)x->rank);
			dim[axis] = k;
			rc = fn_out_const(f, 0, x->dtype, x->rank, dim, y);
		} else {
			rc = fn_out_const(f, 0, x->dtype, 1, &k, y);
		}
		if (!rc)
			rc = fn_out_const(f, 1, DT_I64, 1, &k, fo);
		if (!rc)
			rc = fn_out_const(f, 2, DT_I64, 1, &u.len, inv);
		if (!rc)
			rc = fn_out_const(f, 3, DT_I64, 1, &k, co);
		free(pos); free(fo); free(co);
	}
out:
	free(first); free(inv); free(cnt); free(order); free(y);
	return rc;
}

/* NonMaxSuppression: per batch and class, the boxes above score_threshold
 * by score (ties: the lower index first), each kept unless its IoU with
 * one kept before is above iou_threshold, at most max_output_boxes_per_class. */
typedef struct Box { double y1, x1, y2, x2; } Box;

static Box nms_box(const Value *b, int64_t at, int center)
{
	double v[4];
	Box r;

	for (int i = 0; i < 4; i++)
		v[i] = value_get_f(b, at + i);
	if (center) {    /* [x_center, y_center, width, height] */
		r.x1 = v[0] - v[2] / 2; r.x2 = v[0] + v[2] / 2;
		r.y1 = v[1] - v[3] / 2; r.y2 = v[1] + v[3] / 2;
	} else {         /* [y1, x1, y2, x2], either corner first */
		r.y1 = fmin(v[0], v[2]); r.y2 = fmax(v[0], v[2]);
		r.x1 = fmin(v[1], v[3]); r.x2 = fmax(v[1], v[3]);
	}
	return r;
}

static int nms_suppress(Box a, Box b, double thr)
{
	double aa = (a.y2 - a.y1) * (a.x2 - a.x1), ab = (b.y2 - b.y1) * (b.x2 - b.x1);
	double ih = fmin(a.y2, b.y2) - fmax(a.y1, b.y1), iw = fmin(a.x2, b.x2) - fmax(a.x1, b.x1);
	double in;

	if (aa <= 0 || ab <= 0 || ih <= 0 || iw <= 0)
		return 0;
	in = ih * iw;
	return in / (aa + ab - in) > thr;
}

static int expand_nms(Fn *f)
{
	const Value *bx, *sc, *v;
	int64_t B, N, C, maxo = 0, nsel = 0, *sel = NULL, *cand = NULL, *kept = NULL, dim[2];
	double iou = 0, sthr = 0;
	int has_sthr = 0, center = attr_int(f->n, "center_point_box", 0) != 0, rc = BURN_OK;
	char ts[2][160];

	TRY(fn_const_in(f, 0, &bx));
	TRY(fn_const_in(f, 1, &sc));
	if (bx->rank != 3 || bx->dim[2] != 4 || sc->rank != 3 || sc->dim[0] != bx->dim[0] ||
	    sc->dim[2] != bx->dim[1] || !dtype_is_float(bx->dtype) || !dtype_is_float(sc->dtype))
		return burn_fail(f->c, BURN_ERR_SHAPE, "boxes %s and scores %s: [B, N, 4] "
		                 "and [B, C, N] floats expected",
		                 value_type_str(bx, ts[0], sizeof ts[0]),
		                 value_type_str(sc, ts[1], sizeof ts[1]));
	B = bx->dim[0], N = bx->dim[1], C = sc->dim[1];
	if (NIN(f->g, f->n, 2)) {
		TRY(fn_const_in(f, 2, &v));
		maxo = value_numel(v) ? value_get_i(v, 0) : 0;
	}
	if (NIN(f->g, f->n, 3)) {
		TRY(fn_const_in(f, 3, &v));
		iou = value_numel(v) ? value_get_f(v, 0) : 0;
	}
	if (NIN(f->g, f->n, 4)) {
		TRY(fn_const_in(f, 4, &v));
		has_sthr = value_numel(v) != 0;
		sthr = has_sthr ? value_get_f(v, 0) : 0;
	}
	if (maxo < 0)
		maxo = 0;
	if (maxo > N)
		maxo = N;
	/* per class: a sort and the kept boxes against each candidate */
	if ((double)B * (double)C * (double)N * (double)N > 4e9)
		return burn_fail(f->c, BURN_ERR_LIMIT, "%lld batches x %lld classes of "
		                 "%lld boxes at compile time: too much work (at most 4e9 "
		                 "box pairs)", (long long)B, (long long)C, (long long)N);
	sel = malloc(sizeof *sel * (size_t)(3 * B * C * maxo + 1));
	cand = malloc(sizeof *cand * (size_t)(N + 1));
	kept = malloc(sizeof *kept * (size_t)(N + 1));
	if (!sel || !cand || !kept) {
		rc = nomem(f->c);
		goto out;
	}
	for (int64_t b = 0; b < B; b++)
		for (int64_t c = 0; c < C; c++) {
			int64_t nc = 0, nk = 0, s0 = (b * C + c) * N;
			for (int64_t i = 0; i < N; i++)
				if (!has_sthr || value_get_f(sc, s0 + i) > sthr) {
					/* insertion by score, stable: ties keep index order */
					int64_t m = nc++;
					double si = value_get_f(sc, s0 + i);
					for (; m > 0 && value_get_f(sc, s0 + cand[m - 1]) < si; m--)
						cand[m] = cand[m - 1];
					cand[m] = i;
				}
			for (int64_t j = 0; j < nc && nk < maxo; j++) {
				Box a = nms_box(bx, (b * N + cand[j]) * 4, center);
				int keep = 1;
				for (int64_t q = 0; q < nk && keep; q++)
					keep = !nms_suppress(a, nms_box(bx, (b * N + kept[q]) * 4, center), iou);
				if (!keep)
					continue;
				kept[nk++] = cand[j];
				sel[3 * nsel] = b;
				sel[3 * nsel + 1] = c;
				sel[3 * nsel + 2] = cand[j];
				nsel++;
			}
		}
	dim[0] = nsel;
	dim[1] = 3;
	rc = fn_out_const(f, 0, DT_I64, 2, dim, sel);
out:
	free(sel); free(cand); free(kept);
	return rc;
}

/* ---- Compress ------------------------------------------------------------ */

static int expand_compress(Fn *f)
{
	const Value *x, *cv;
	const Attr *ax = node_attr(f->n, "axis");
	int64_t len, axis = ax ? ax->i : 0, cnt = 0, *pos;
	int src = f->n->in[0], idx, iv, in[2], rc;

	TRY(fn_in(f, 0, &x));
	TRY(fn_in(f, 1, &cv));
	if (!cv->data)
		return burn_fail(f->c, BURN_ERR_UNSUPPORTED, "the condition ('%s') must "
		                 "be a constant (the output's shape depends on it)",
		                 cv->name);
	if (cv->rank != 1)
		return burn_fail(f->c, BURN_ERR_SHAPE, "the condition ('%s') must be 1-D, "
		                 "is rank %d", cv->name, cv->rank);
	if (ax) {
		if (axis < -x->rank || axis >= x->rank)
			return burn_fail(f->c, BURN_ERR_INVALID, "axis %lld is out of range "
			                 "for rank %d", (long long)axis, x->rank);
		if (axis < 0)
			axis += x->rank;
		len = x->dim[axis];
	} else {
		int64_t flat = value_numel(x);
		TRY(cf_const_i64(f->c, f->g, f->n->name, "flat_shape", 1,
		                 &(int64_t){ 1 }, &flat, &in[1]));
		in[0] = src;
		TRY(fn_add(f, OP_Reshape, "flat", 2, in, -1, &src));
		len = flat;
	}
	if (!(pos = malloc(sizeof *pos * (size_t)(cv->dim[0] + 1))))
		return nomem(f->c);
	for (int64_t i = 0; i < cv->dim[0]; i++) {
		if (!value_get_i(cv, i))
			continue;
		if (i >= len) {
			free(pos);
			return burn_fail(f->c, BURN_ERR_INVALID, "the condition ('%s') "
			                 "selects position %lld of an axis of %lld",
			                 cv->name, (long long)i, (long long)len);
		}
		pos[cnt++] = i;
	}
	rc = cf_const_i64(f->c, f->g, f->n->name, "positions", 1, &cnt, pos, &iv);
	free(pos);
	TRY(rc);
	in[0] = src;
	in[1] = iv;
	TRY(fn_node(f, OP_Gather, "gather", 2, in, f->n->out[0], &idx, &iv));
	TRY(fn_attr_i(f, idx, "axis", ax ? axis : 0));
	return fn_place(f, idx);
}

/* ---- constants: the windows and MelWeightMatrix -------------------------- */


/* Input k, which must be a constant scalar; *v its value as a double. */
static int fn_scalar(Fn *f, int k, const char *what, double *v)
{
	const Value *x;

	TRY(fn_in(f, k, &x));
	if (!x->data)
		return burn_fail(f->c, BURN_ERR_UNSUPPORTED, "the %s ('%s') must be a "
		                 "constant (the output's shape and values depend on it)",
		                 what, x->name);
	if (value_numel(x) != 1)
		return burn_fail(f->c, BURN_ERR_INVALID, "the %s ('%s') must be a "
		                 "scalar", what, x->name);
	*v = value_get_f(x, 0);
	return BURN_OK;
}

/* An integer count from input k, 0 .. max (min 1 when positive is set). */
static int fn_count(Fn *f, int k, const char *what, int positive, int64_t max,
                    int64_t *out)
{
	const Value *x;
	double v;

	TRY(fn_scalar(f, k, what, &v));
	x = NIN(f->g, f->n, k);
	if (!dtype_is_int(x->dtype))
		return burn_fail(f->c, BURN_ERR_INVALID, "the %s ('%s') is %s: an "
		                 "integer expected", what, x->name, dtype_name(x->dtype));
	if (v < positive || v > (double)max)
		return burn_fail(f->c, BURN_ERR_INVALID, "the %s is %.17g: %d .. %lld "
		                 "expected", what, v, positive, (long long)max);
	*out = (int64_t)v;
	return BURN_OK;
}

/* Output 0 = Cast(the f64 constant t of shape dim) to output_datatype
 * (default f32); t is copied. */
static int fn_emit_f64(Fn *f, int rank, const int64_t *dim, const double *t)
{
	int64_t to = attr_int(f->n, "output_datatype", DT_F32);
	int v = fn_value(f, "values", -1), idx, y;

	if (!dtype_supported((int)to) || dtype_cast_only((int)to) || to == DT_BOOL)
		return burn_fail(f->c, BURN_ERR_UNSUPPORTED, "output_datatype %lld is "
		                 "not a numeric type burncc computes in", (long long)to);
	if (v < 0)
		return nomem(f->c);
	TRY(graph_set_const(f->c, f->g, v, DT_F64, rank, dim, t));
	TRY(fn_node(f, OP_Cast, "cast", 1, &v, f->n->out[0], &idx, &y));
	TRY(fn_attr_i(f, idx, "to", to));
	return fn_place(f, idx);
}

/* w[i] = a0 - a1 cos(2 pi i / d) + a2 cos(4 pi i / d), d = N (periodic,
 * the default) or N - 1 (symmetric). */
static int expand_window(Fn *f, double a0, double a1, double a2)
{
	int64_t N, d;
	double *w;
	int rc;

	TRY(fn_count(f, 0, "size", 0, FN_MAX_ELEMS, &N));
	d = attr_int(f->n, "periodic", 1) ? N : N - 1;
	if (!(w = malloc(sizeof *w * (size_t)(N + 1))))
		return nomem(f->c);
	for (int64_t i = 0; i < N; i++) {
		double t = d > 0 ? 2 * M_PI * (double)i / (double)d : 0;
		w[i] = a0 - a1 * cos(t) + a2 * cos(2 * t);
	}
	rc = fn_emit_f64(f, 1, &N, w);
	free(w);
	return rc;
}

static double hz_to_mel(double hz) { return 2595 * log10(1 + hz / 700); }
static double mel_to_hz(double mel) { return 700 * (pow(10, mel / 2595) - 1); }

/*
 * MelWeightMatrix: num_mel_bins + 2 points evenly spaced in mel between
 * the edges (the step is the span over num_mel_bins + 2, as the
 * reference has it), each mapped to spectrogram bin floor((dft_length + 1)
 * hz / sample_rate); mel bin i is the triangle rising from point i to
 * point i+1 and falling to point i+2.  A point outside the dft_length/2 + 1
 * bins is an error (the reference would index out of range).
 */
static int expand_mel(Fn *f)
{
	int64_t M, L, S, nb, dim[2], *pt;
	double lo, hi, step, *w;
	int rc = BURN_OK;

	TRY(fn_count(f, 0, "num_mel_bins", 1, FN_MAX_ELEMS, &M));
	TRY(fn_count(f, 1, "dft_length", 1, FN_MAX_ELEMS, &L));
	TRY(fn_count(f, 2, "sample_rate", 1, INT32_MAX, &S));
	TRY(fn_scalar(f, 3, "lower_edge_hertz", &lo));
	TRY(fn_scalar(f, 4, "upper_edge_hertz", &hi));
	if (!(lo >= 0) || !(hi >= lo) || !isfinite(hi))
		return burn_fail(f->c, BURN_ERR_INVALID, "the edges %g Hz .. %g Hz: "
		                 "0 <= lower <= upper expected", lo, hi);
	nb = L / 2 + 1;
	if (nb * M > FN_MAX_ELEMS)
		return burn_fail(f->c, BURN_ERR_LIMIT, "a matrix of %lld x %lld is more "
		                 "than %d elements", (long long)nb, (long long)M,
		                 FN_MAX_ELEMS);
	if (!(pt = malloc(sizeof *pt * (size_t)(M + 2))))
		return nomem(f->c);
	step = (hz_to_mel(hi) - hz_to_mel(lo)) / (double)(M + 2);
	for (int64_t i = 0; i < M + 2; i++) {
		double b = floor((double)(L + 1) *
		                 mel_to_hz((double)i * step + hz_to_mel(lo)) / (double)S);
		if (!(b >= 0 && b < (double)nb)) {
			free(pt);
			return burn_fail(f->c, BURN_ERR_INVALID, "mel point %lld falls in "
			                 "spectrogram bin %g, outside the %lld bins of "
			                 "dft_length %lld (upper_edge_hertz %g above half "
			                 "the sample rate %lld?)", (long long)i, b,
			                 (long long)nb, (long long)L, hi, (long long)S);
		}
		pt[i] = (int64_t)b;
	}
	if (!(w = calloc((size_t)(nb * M), sizeof *w))) {
		free(pt);
		return nomem(f->c);
	}
	for (int64_t i = 0; i < M; i++) {
		int64_t l = pt[i], c = pt[i + 1], h = pt[i + 2];
		if (c == l)
			w[c * M + i] = 1;
		for (int64_t j = l; c > l && j <= c; j++)
			w[j * M + i] = (double)(j - l) / (double)(c - l);
		for (int64_t j = c; j < h; j++)
			w[j * M + i] = (double)(h - j) / (double)(h - c);
	}
	dim[0] = nb;
	dim[1] = M;
	rc = fn_emit_f64(f, 2, dim, w);
	free(w);
	free(pt);
	return rc;
}

/* ---- Gradient (ai.onnx.preview.training) --------------------------------
 * Gradient(X1..Xn; xs = [names], y = name) -> dY/dX1..dY/dXn: the autodiff
 * pass's backward nodes for the loss y (a value computed before this
 * node, one float element) with respect to the values named in xs, each
 * copied into the node's output. */
static int expand_gradient(Fn *f)
{
	const Attr *xs = node_attr(f->src, "xs"), *ya = node_attr(f->src, "y");
	int y, *wrt, *grad, rc = BURN_OK;

	if (!xs || xs->type != AT_STRINGS || !ya || ya->type != AT_STRING)
		return burn_fail(f->c, BURN_ERR_INVALID, "attributes xs (strings) and y "
		                 "(a string) expected");
	if (xs->n != f->n->nout)
		return burn_fail(f->c, BURN_ERR_INVALID, "%d names in xs, %d outputs", xs->n,
		                 f->n->nout);
	if ((y = graph_find_value(f->g, ya->s)) < 0 || !GV(f->g, y)->dtype)
		return burn_fail(f->c, BURN_ERR_UNSUPPORTED, "y '%s' is not a value computed "
		                 "before the node", ya->s);
	if (!dtype_is_float(GV(f->g, y)->dtype) || value_numel(GV(f->g, y)) != 1)
		return burn_fail(f->c, BURN_ERR_UNSUPPORTED, "y '%s' is not one float "
		                 "element (only a scalar y is differentiated)", ya->s);
	wrt = malloc(sizeof *wrt * ((size_t)xs->n + 1));
	grad = malloc(sizeof *grad * ((size_t)xs->n + 1));
	if (!wrt || !grad) {
		free(wrt);
		free(grad);
		return nomem(f->c);
	}
	for (int j = 0; j < xs->n && !rc; j++)
		if ((wrt[j] = graph_find_value(f->g, xs->strs[j])) < 0)
			rc = burn_fail(f->c, BURN_ERR_INVALID, "xs names '%s', no value",
			               xs->strs[j]);
	if (!rc)
		rc = pass_autodiff(f->c, f->g, y, xs->n, wrt, grad);
	for (int j = 0; j < xs->n && !rc; j++) {
		int out;
		if (f->n->out[j] >= 0)
			rc = fn_add(f, OP_Identity, "dy", 1, &grad[j], f->n->out[j], &out);
	}
	free(wrt);
	free(grad);
	return rc;
}

/* ImageDecoder: the encoded stream must be a constant (its image's size
 * is the output's shape); decoded here, as the reference decodes it
 * (passes/image.c) */
static int expand_image_decoder(Fn *f)
{
	static const char *const fmts[] = { "RGB", "BGR", "Grayscale" };
	const char *pf = attr_str(f->n, "pixel_format", "RGB");
	const Value *x;
	uint8_t *px;
	int64_t dim[3];
	int rc, k;

	TRY(fn_const_in(f, 0, &x));
	for (k = 0; k < 3 && strcmp(pf, fmts[k]); k++)
		;
	if (k == 3)
		return burn_fail(f->c, BURN_ERR_INVALID, "pixel_format '%s' is not RGB, BGR or "
		                 "Grayscale", pf);
	if (x->dtype != DT_U8 || x->rank != 1)
		return burn_fail(f->c, BURN_ERR_INVALID, "encoded_stream is not a 1-D uint8 "
		                 "tensor");
	TRY(image_decode(f->c, x->data, (size_t)value_numel(x),
	                 k == 0 ? IMG_RGB : k == 1 ? IMG_BGR : IMG_GRAY, &px, dim));
	rc = fn_out_const(f, 0, DT_U8, 3, dim, px);
	free(px);
	return rc;
}

int func_expand(Ctx *c, Graph *g, const Node *n, const Node *src,
                InferBudget *left)
{
	Fn f = { c, g, n, src, left };

	switch (n->op) {
	case OP_CausalConvWithState: return expand_causal_conv(&f);
	case OP_Compress:       return expand_compress(&f);
	case OP_NonZero:        return expand_nonzero(&f);
	case OP_Unique:         return expand_unique(&f);
	case OP_NonMaxSuppression: return expand_nms(&f);
	case OP_Adagrad:
	case OP_Momentum:
	case OP_Adam:           return expand_optimizer(&f);
	case OP_Binarizer:      return expand_binarizer(&f);
	case OP_ArrayFeatureExtractor: return expand_feature_extractor(&f);
	case OP_FlexAttention:  return expand_flex_attention(&f);
	case OP_Gradient:       return expand_gradient(&f);
	case OP_HannWindow:     return expand_window(&f, 0.5, 0.5, 0);
	case OP_HammingWindow:  return expand_window(&f, 25.0 / 46, 21.0 / 46, 0);
	case OP_BlackmanWindow: return expand_window(&f, 0.42, 0.5, 0.08);
	case OP_MelWeightMatrix: return expand_mel(&f);
	case OP_ImageDecoder:   return expand_image_decoder(&f);
	}
	return burn_fail(c, BURN_ERR_INTERNAL, "node '%s': not a function op", n->name);
}

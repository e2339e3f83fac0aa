/*
 * ops_rnn.c - the recurrent ops RNN, GRU and LSTM (opset 7 to 22).
 *
 * Inputs X, W, R, B, sequence_lens, initial_h (and for LSTM initial_c, P);
 * outputs Y, Y_h (and for LSTM Y_c), every one but X, W, R optional.  With
 * layout 0, X is (S, B, I), Y (S, D, B, H) and the states (D, B, H); with
 * layout 1, X is (B, S, I), Y (B, S, D, H) and the states (B, D, H).  W is
 * (D, G*H, I), R (D, G*H, H), B (D, 2*G*H) = Wb ++ Rb, P (D, 3*H), with the
 * gates in ONNX order: RNN (i), GRU (z, r, h), LSTM (i, o, f, c).
 *
 * Each node is one kernel with no allocation beyond three scratch values:
 *
 *   for each direction d (unrolled: static direction and activations)
 *     for b < B                       parallel: batches are independent
 *       h[d,b,:] = initial_h or 0     c likewise (LSTM)
 *       for step < S
 *         if step < len[b]            len: sequence_lens[b] clamped to S
 *           t = reverse ? len-1-step : step
 *           g[d,b,:] = gate pre-activations (loops over hidden units,
 *                      each a dot product over I and H)
 *           update h (and c) from g, store Y[t]
 *         else Y[step] = 0
 *       Y_h = h, Y_c = c
 *
 * The scratch values, in the compute type (f64 for f64, else f32): the
 * state h (D, B, H), the cell c (D, B, H, LSTM only) and the gates g
 * (D, B, GS), GS being H (RNN), 6H (GRU: the X part and the H part of each
 * gate kept apart, as linear_before_reset needs) or 4H (LSTM).
 *
 * Equations (f, g, h the activations; clip, when given, bounds every gate's
 * pre-activation to [-clip, clip] before its activation):
 *   RNN   h' = f(x W_i + h R_i + Wb_i + Rb_i)
 *   GRU   z = f(x W_z + h R_z + Wb_z + Rb_z), r likewise,
 *         n = g(x W_h + (r*h) R_h + Rb_h + Wb_h)            linear_before_reset 0
 *         n = g(x W_h + r*(h R_h + Rb_h) + Wb_h)            otherwise
 *         h' = (1 - z) n + z h
 *   LSTM  i = f(x W_i + h R_i + P_i c + Wb_i + Rb_i),  f likewise with P_f
 *         (f = 1 - i with input_forget), c~ = g(x W_c + h R_c + Wb_c + Rb_c),
 *         c' = f c + i c~,  o = f(x W_o + h R_o + P_o c' + Wb_o + Rb_o),
 *         h' = o h(c')
 *
 * activation_alpha and activation_beta are consumed in the order of the
 * activations, each activation taking the values it uses (as onnxruntime
 * does); a missing value takes that activation's ONNX default.
 */
#include <math.h>
#include <string.h>
#include <strings.h>
#include "kb_short.h"
#include "gemm.h"

/* ---- activations -------------------------------------------------------- */

enum { A_RELU, A_TANH, A_SIGMOID, A_AFFINE, A_LEAKY, A_THRESH, A_STANH,
       A_HSIG, A_ELU, A_SOFTSIGN, A_SOFTPLUS };

/* The activations the recurrent ops accept: how many of alpha, beta each
 * takes, and their defaults. */
static const struct {
	const char *name;
	int nparam;          /* 0: none, 1: alpha, 2: alpha and beta */
	double alpha, beta;
} acttab[] = {
	[A_RELU] = {"Relu", 0, 0, 0},
	[A_TANH] = {"Tanh", 0, 0, 0},
	[A_SIGMOID] = {"Sigmoid", 0, 0, 0},
	[A_AFFINE] = {"Affine", 2, 1, 0},
	[A_LEAKY] = {"LeakyRelu", 1, 0.01, 0},
	[A_THRESH] = {"ThresholdedRelu", 1, 1, 0},
	[A_STANH] = {"ScaledTanh", 2, 1, 1},
	[A_HSIG] = {"HardSigmoid", 2, 0.2, 0.5},
	[A_ELU] = {"Elu", 1, 1, 0},
	[A_SOFTSIGN] = {"Softsign", 0, 0, 0},
	[A_SOFTPLUS] = {"Softplus", 0, 0, 0},
};

typedef struct Act {
	int fn;              /* A_* */
	double alpha, beta;
} Act;

/* The activation a applied to x; x is used several times, so it should
 * be a variable read. */
static KRef
act_expr(KB *kb, const Act *a, KRef x)
{
	int ct = kb_dtype(kb->k, x);
	KRef zero = kb_const_f(kb, ct, 0), one = kb_const_f(kb, ct, 1);
	KRef al = kb_const_f(kb, ct, a->alpha), be = kb_const_f(kb, ct, a->beta);

	switch (a->fn) {
	case A_RELU: return kb_bin(kb, KO_MAX, x, zero);
	case A_TANH: return kb_un(kb, KO_TANH, x);
	case A_SIGMOID:
		return kb_bin(kb, KO_DIV, one, add(kb, one, kb_un(kb, KO_EXP, kb_un(kb, KO_NEG, x))));
	case A_AFFINE: return add(kb, mul(kb, al, x), be);
	case A_LEAKY: return kb_select(kb, kb_bin(kb, KO_LT, x, zero), mul(kb, al, x), x);
	case A_THRESH: return kb_select(kb, kb_bin(kb, KO_GT, x, al), x, zero);
	case A_STANH: return mul(kb, al, kb_un(kb, KO_TANH, mul(kb, be, x)));
	case A_HSIG:
		return kb_bin(kb, KO_MAX, zero, kb_bin(kb, KO_MIN, one, add(kb, mul(kb, al, x), be)));
	case A_ELU:
		return kb_select(kb, kb_bin(kb, KO_LT, x, zero),
		                 mul(kb, al, sub(kb, kb_un(kb, KO_EXP, x), one)), x);
	case A_SOFTSIGN: return kb_bin(kb, KO_DIV, x, add(kb, one, kb_un(kb, KO_ABS, x)));
	default:  /* A_SOFTPLUS, stable: max(x, 0) + log(1 + exp(-|x|)) */
		return add(kb, kb_bin(kb, KO_MAX, x, zero),
		           kb_un(kb, KO_LOG, add(kb, one, kb_un(kb, KO_EXP,
		                                               kb_un(kb, KO_NEG, kb_un(kb, KO_ABS, x))))));
	}
}

/* ---- geometry ------------------------------------------------------------- */

enum { K_RNN, K_GRU, K_LSTM };

/* An RNN, GRU or LSTM node, checked against the spec, and the buffers of
 * its kernel while it is lowered. */
typedef struct Rnn {
	int kind;            /* K_RNN, K_GRU, K_LSTM */
	int G;               /* gates: 1, 3, 4 */
	int nact;            /* activations per direction: 1, 2, 3 */
	int dtype;           /* of X, W, R, B, the states and the outputs */
	int ct;              /* compute type */
	int layout;          /* 0 or 1 */
	int nd;              /* directions: 1 or 2 */
	int rev0;            /* direction 0 runs backwards ("reverse") */
	int lbr;             /* GRU linear_before_reset */
	int ifg;             /* LSTM input_forget */
	double clip;         /* 0: no clipping */
	int64_t S, B, I, H;  /* sequence, batch, input and hidden sizes */
	int64_t GS;          /* gate scratch per (direction, batch) */
	Act act[6];          /* act[d * nact + k] */
	const Value *x, *w, *r, *b, *sl, *h0, *c0, *p;  /* borrowed; absent: NULL */
	/* buffers of the kernel; -1 when absent */
	int bx, bw, br, bb, bsl, bh0, bc0, bp, by, byh, byc, bh, bc, bg;
	/* the GEMM form (rnn_gemm): W^T and R^T in B panels, the input
	 * projection of every step gx (D, S*B, G*H); -1 when not taken */
	int bwp, brp, bgx;
	int64_t wlast, rlast;
} Rnn;

/* v must be a float tensor of x's dtype with the dims given. */
static int
dims_are(Ctx *c, const Value *v, const Rnn *r, const char *what, int rank,
         int64_t d0, int64_t d1, int64_t d2)
{
	int64_t want[3] = {d0, d1, d2};

	if (v->dtype != r->dtype)
		return burn_fail(c, BURN_ERR_SHAPE, "%s dtype %s, X is %s", what,
		                 dtype_name(v->dtype), dtype_name(r->dtype));
	if (v->rank != rank)
		return burn_fail(c, BURN_ERR_SHAPE, "%s must have rank %d, has %d", what, rank, v->rank);
	for (int i = 0; i < rank; i++)
		if (v->dim[i] != want[i])
			return burn_fail(c, BURN_ERR_SHAPE, "%s dim %d is %lld, want %lld", what,
			                 i, (long long)v->dim[i], (long long)want[i]);
	return BURN_OK;
}

/* The activations of every direction, with their alpha and beta. */
static int
rnn_acts(Ctx *c, Node *n, Rnn *r)
{
	static const char *dflt[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"},
	                                 {"Sigmoid", "Tanh", "Tanh"}};
	const Attr *an = node_attr(n, "activations");
	const Attr *aa = node_attr(n, "activation_alpha"), *ab = node_attr(n, "activation_beta");
	int want = r->nact * r->nd, na = 0, nb = 0;

	if (an && (an->type != AT_STRINGS || (an->n != want && an->n != r->nact)))
		return burn_fail(c, BURN_ERR_INVALID, "activations must list %d names", want);
	if ((aa && aa->type != AT_FLOATS) || (ab && ab->type != AT_FLOATS))
		return burn_fail(c, BURN_ERR_INVALID, "activation_alpha/beta must be floats");
	for (int i = 0; i < want; i++) {
		const char *name = an ? an->strs[i % an->n] : dflt[r->kind][i % r->nact];
		int fn;
		for (fn = 0; fn < (int)(sizeof acttab / sizeof acttab[0]); fn++)
			if (!strcasecmp(name, acttab[fn].name))
				break;
		if (fn == (int)(sizeof acttab / sizeof acttab[0]))
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "activation '%s'", name);
		r->act[i].fn = fn;
		r->act[i].alpha = acttab[fn].alpha;
		r->act[i].beta = acttab[fn].beta;
		if (acttab[fn].nparam >= 1 && aa && na < aa->n)
			r->act[i].alpha = aa->floats[na++];
		if (acttab[fn].nparam >= 2 && ab && nb < ab->n)
			r->act[i].beta = ab->floats[nb++];
	}
	return BURN_OK;
}

static int
rnn_shape(Ctx *c, Graph *g, Node *n, Rnn *r)
{
	const char *dir = attr_str(n, "direction", "forward");
	const Value *x;
	int64_t GH, hs;

	memset(r, 0, sizeof *r);
	r->kind = n->op == OP_LSTM ? K_LSTM : n->op == OP_GRU ? K_GRU : K_RNN;
	r->G = r->kind == K_LSTM ? 4 : r->kind == K_GRU ? 3 : 1;
	r->nact = r->kind + 1;
	r->x = x = NIN(g, n, 0);
	r->w = NIN(g, n, 1);
	r->r = NIN(g, n, 2);
	r->b = NIN(g, n, 3);
	r->sl = NIN(g, n, 4);
	r->h0 = NIN(g, n, 5);
	r->c0 = r->kind == K_LSTM ? NIN(g, n, 6) : NULL;
	r->p = r->kind == K_LSTM ? NIN(g, n, 7) : NULL;
	if (!x || !r->w || !r->r)
		return burn_fail(c, BURN_ERR_INVALID, "X, W and R are required");
	r->dtype = x->dtype;
	r->ct = ctype(x->dtype);
	if (!dtype_is_float(x->dtype) || !dtype_supported(x->dtype))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "dtype %s", dtype_name(x->dtype));
	if (x->rank != 3)
		return burn_fail(c, BURN_ERR_SHAPE, "X must be 3-D, has rank %d", x->rank);

	r->layout = (int)attr_int(n, "layout", 0);
	if (r->layout != 0 && r->layout != 1)
		return burn_fail(c, BURN_ERR_INVALID, "layout %d", r->layout);
	r->S = x->dim[r->layout];
	r->B = x->dim[1 - r->layout];
	r->I = x->dim[2];
	if (!strcmp(dir, "forward") || !strcmp(dir, "reverse")) {
		r->nd = 1;
		r->rev0 = dir[0] == 'r';
	} else if (!strcmp(dir, "bidirectional")) {
		r->nd = 2;
	} else {
		return burn_fail(c, BURN_ERR_INVALID, "direction '%s'", dir);
	}
	if (r->r->rank != 3)
		return burn_fail(c, BURN_ERR_SHAPE, "R must be 3-D, has rank %d", r->r->rank);
	hs = attr_int(n, "hidden_size", r->r->dim[2]);
	if (hs <= 0 || hs > (1 << 24))
		return burn_fail(c, BURN_ERR_INVALID, "hidden_size %lld", (long long)hs);
	r->H = hs;
	GH = r->G * r->H;
	TRY(dims_are(c, r->w, r, "W", 3, r->nd, GH, r->I));
	TRY(dims_are(c, r->r, r, "R", 3, r->nd, GH, r->H));
	if (r->b)
		TRY(dims_are(c, r->b, r, "B", 2, r->nd, 2 * GH, 0));
	if (r->sl) {
		if (r->sl->dtype != DT_I32 && r->sl->dtype != DT_I64)
			return burn_fail(c, BURN_ERR_SHAPE, "sequence_lens must be integer");
		if (r->sl->rank != 1 || r->sl->dim[0] != r->B)
			return burn_fail(c, BURN_ERR_SHAPE, "sequence_lens must have shape (%lld)",
			                 (long long)r->B);
	}
	if (r->h0)
		TRY(r->layout ? dims_are(c, r->h0, r, "initial_h", 3, r->B, r->nd, r->H)
		              : dims_are(c, r->h0, r, "initial_h", 3, r->nd, r->B, r->H));
	if (r->c0)
		TRY(r->layout ? dims_are(c, r->c0, r, "initial_c", 3, r->B, r->nd, r->H)
		              : dims_are(c, r->c0, r, "initial_c", 3, r->nd, r->B, r->H));
	if (r->p)
		TRY(dims_are(c, r->p, r, "P", 2, r->nd, 3 * r->H, 0));

	if (node_attr(n, "clip")) {
		r->clip = attr_float(n, "clip", 0);
		if (!(r->clip > 0))
			return burn_fail(c, BURN_ERR_INVALID, "clip must be positive");
	}
	r->lbr = r->kind == K_GRU && attr_int(n, "linear_before_reset", 0) != 0;
	r->ifg = r->kind == K_LSTM && attr_int(n, "input_forget", 0) != 0;
	r->GS = r->kind == K_GRU ? 6 * r->H : GH;
	return rnn_acts(c, n, r);
}

int
infer_rnn(Ctx *c, Graph *g, Node *n)
{
	Rnn r;
	int64_t d[4];

	TRY(rnn_shape(c, g, n, &r));
	if (r.layout) {
		d[0] = r.B; d[1] = r.S; d[2] = r.nd; d[3] = r.H;
	} else {
		d[0] = r.S; d[1] = r.nd; d[2] = r.B; d[3] = r.H;
	}
	if (has_out(n, 0))
		set_out(NOUT(g, n, 0), r.dtype, 4, d);
	if (r.layout) {
		d[0] = r.B; d[1] = r.nd;
	} else {
		d[0] = r.nd; d[1] = r.B;
	}
	d[2] = r.H;
	for (int k = 1; k < n->nout && k < 3; k++)
		if (has_out(n, k))
			set_out(NOUT(g, n, k), r.dtype, 3, d);
	return BURN_OK;
}

/* ---- lowering ------------------------------------------------------------- */

/* Element (t, b, k) of X. */
static KRef
x_at(KB *kb, const Rnn *r, KRef t, KRef b, KRef k)
{
	KRef row = r->layout ? add(kb, mul(kb, b, I(kb, r->S)), t)
	                     : add(kb, mul(kb, t, I(kb, r->B)), b);
	return add(kb, mul(kb, row, I(kb, r->I)), k);
}

/* Element (t, d, b, j) of Y. */
static KRef
y_at(KB *kb, const Rnn *r, KRef t, int d, KRef b, KRef j)
{
	KRef row = r->layout
		? add(kb, mul(kb, add(kb, mul(kb, b, I(kb, r->S)), t), I(kb, r->nd)), I(kb, d))
		: add(kb, mul(kb, add(kb, mul(kb, t, I(kb, r->nd)), I(kb, d)), I(kb, r->B)), b);
	return add(kb, mul(kb, row, I(kb, r->H)), j);
}

/* Element (d, b, j) of initial_h, initial_c, Y_h and Y_c. */
static KRef
s_at(KB *kb, const Rnn *r, int d, KRef b, KRef j)
{
	KRef row = r->layout ? add(kb, mul(kb, b, I(kb, r->nd)), I(kb, d))
	                     : add(kb, I(kb, d * r->B), b);
	return add(kb, mul(kb, row, I(kb, r->H)), j);
}

/*
 * Gate pre-activations for rows row0 .. row0+nrows-1 of direction d:
 * g[gb + dst + j] = (Wb + x_t W^T if xpart) + (Rb + h R^T if hpart), where
 * h[k] is replaced by h[k] * g[gb + rmul + k] when rmul >= 0 (GRU's r*h).
 * sb, gb: offsets of (d, b) in the state and gate scratch.
 */
static void
gates(KB *kb, const Rnn *r, int d, KRef b, KRef t, KRef sb, KRef gb, int64_t dst,
      int64_t row0, int64_t nrows, int xpart, int hpart, int64_t rmul)
{
	int ct = r->ct, acc = kb_var(kb, ct, "acc");
	int64_t GH = r->G * r->H;
	KRef j, k, row, hk;

	j = loop(kb, "j", nrows, 0);
	row = add(kb, j, I(kb, d * GH + row0));
	kb_set(kb, acc, xpart && r->bb >= 0
	                ? conv(kb, kb_load(kb, r->bb, add(kb, j, I(kb, d * 2 * GH + row0))), ct)
	                : kb_const_f(kb, ct, 0));
	if (xpart) {
		k = loop(kb, "k", r->I, 0);
		kb_set(kb, acc, add(kb, get(kb, acc),
		                    mul(kb, conv(kb, kb_load(kb, r->bx, x_at(kb, r, t, b, k)), ct),
		                        conv(kb, kb_load(kb, r->bw, add(kb, mul(kb, row, I(kb, r->I)), k)),
		                             ct))));
		kb_end(kb);
	}
	if (hpart) {
		if (r->bb >= 0)
			kb_set(kb, acc, add(kb, get(kb, acc),
			                    conv(kb, kb_load(kb, r->bb, add(kb, j, I(kb, d * 2 * GH + GH + row0))),
			                         ct)));
		k = loop(kb, "k", r->H, 0);
		hk = kb_load(kb, r->bh, add(kb, sb, k));
		if (rmul >= 0)
			hk = mul(kb, hk, kb_load(kb, r->bg, add(kb, gb, add(kb, k, I(kb, rmul)))));
		kb_set(kb, acc, add(kb, get(kb, acc),
		                    mul(kb, hk, conv(kb, kb_load(kb, r->br, add(kb, mul(kb, row, I(kb, r->H)), k)),
		                                     ct))));
		kb_end(kb);
	}
	kb_store(kb, r->bg, add(kb, gb, add(kb, j, I(kb, dst))), get(kb, acc));
	kb_end(kb);
}

/* A fresh variable set to activation a of pre (clipped); returns its read. */
static KRef
activate(KB *kb, const Rnn *r, const Act *a, const char *name, KRef pre)
{
	int v = kb_var(kb, r->ct, name);

	kb_set(kb, v, pre);
	if (r->clip > 0)
		kb_set(kb, v, kb_bin(kb, KO_MIN, kb_bin(kb, KO_MAX, get(kb, v),
		                                        kb_const_f(kb, r->ct, -r->clip)),
		                     kb_const_f(kb, r->ct, r->clip)));
	kb_set(kb, v, act_expr(kb, a, get(kb, v)));
	return get(kb, v);
}

/* g[gb + off + j] */
static KRef
gload(KB *kb, const Rnn *r, KRef gb, int64_t off, KRef j)
{
	return kb_load(kb, r->bg, add(kb, gb, add(kb, j, I(kb, off))));
}

/* Store the new hidden value hn of unit j at time t: state and Y.  hn is
 * held in a variable first, since it may read the state it replaces. */
static void
put_h(KB *kb, const Rnn *r, int d, KRef b, KRef t, KRef sb, KRef j, KRef hn)
{
	int v = kb_var(kb, r->ct, "hn");

	kb_set(kb, v, hn);
	hn = get(kb, v);
	kb_store(kb, r->bh, add(kb, sb, j), hn);
	if (r->by >= 0)
		kb_store(kb, r->by, y_at(kb, r, t, d, b, j), hn);
}

/* One time step t of direction d for batch b: gates (unless the GEMM
 * form computed them, r->bgx >= 0), then the update. */
static void
cell(KB *kb, const Rnn *r, int d, KRef b, KRef t, KRef sb, KRef gb)
{
	const Act *a = &r->act[d * r->nact];
	int64_t H = r->H;
	int ct = r->ct;
	KRef j, one = kb_const_f(kb, ct, 1);

	if (r->kind == K_RNN) {
		if (r->bgx < 0)
			gates(kb, r, d, b, t, sb, gb, 0, 0, H, 1, 1, -1);
		j = loop(kb, "j", H, 0);
		put_h(kb, r, d, b, t, sb, j, activate(kb, r, &a[0], "a", gload(kb, r, gb, 0, j)));
		kb_end(kb);
	} else if (r->kind == K_GRU) {
		/* g: [0,3H) X parts, [3H,6H) H parts; z and r replace their X parts */
		KRef z, rg, pre, nh, hp;
		gates(kb, r, d, b, t, sb, gb, 0, 0, 3 * H, 1, 0, -1);
		gates(kb, r, d, b, t, sb, gb, 3 * H, 0, r->lbr ? 3 * H : 2 * H, 0, 1, -1);
		j = loop(kb, "j", H, 0);
		z = activate(kb, r, &a[0], "z", add(kb, gload(kb, r, gb, 0, j), gload(kb, r, gb, 3 * H, j)));
		rg = activate(kb, r, &a[0], "r", add(kb, gload(kb, r, gb, H, j), gload(kb, r, gb, 4 * H, j)));
		kb_store(kb, r->bg, add(kb, gb, j), z);
		kb_store(kb, r->bg, add(kb, gb, add(kb, j, I(kb, H))), rg);
		kb_end(kb);
		if (!r->lbr)
			gates(kb, r, d, b, t, sb, gb, 5 * H, 2 * H, H, 0, 1, H);
		j = loop(kb, "j", H, 0);
		pre = gload(kb, r, gb, 5 * H, j);
		if (r->lbr)
			pre = mul(kb, gload(kb, r, gb, H, j), pre);
		nh = activate(kb, r, &a[1], "n", add(kb, gload(kb, r, gb, 2 * H, j), pre));
		z = gload(kb, r, gb, 0, j);
		hp = kb_load(kb, r->bh, add(kb, sb, j));
		put_h(kb, r, d, b, t, sb, j, add(kb, mul(kb, sub(kb, one, z), nh), mul(kb, z, hp)));
		kb_end(kb);
	} else {
		/* gates i, o, f, c at [0,H), [H,2H), [2H,3H), [3H,4H) */
		int cp = kb_var(kb, ct, "cp"), cn = kb_var(kb, ct, "cn");
		KRef pi, pf, po, ig, fg, cg, og, pb = I(kb, d * 3 * H);
		if (r->bgx < 0)
			gates(kb, r, d, b, t, sb, gb, 0, 0, 4 * H, 1, 1, -1);
		j = loop(kb, "j", H, 0);
		kb_set(kb, cp, kb_load(kb, r->bc, add(kb, sb, j)));
		pi = gload(kb, r, gb, 0, j);
		pf = gload(kb, r, gb, 2 * H, j);
		if (r->bp >= 0) {
			pi = add(kb, pi, mul(kb, conv(kb, kb_load(kb, r->bp, add(kb, pb, j)), ct), get(kb, cp)));
			pf = add(kb, pf, mul(kb, conv(kb, kb_load(kb, r->bp, add(kb, pb, add(kb, j, I(kb, 2 * H)))), ct),
			                     get(kb, cp)));
		}
		ig = activate(kb, r, &a[0], "ig", pi);
		fg = r->ifg ? sub(kb, one, ig) : activate(kb, r, &a[0], "fg", pf);
		cg = activate(kb, r, &a[1], "cg", gload(kb, r, gb, 3 * H, j));
		kb_set(kb, cn, add(kb, mul(kb, fg, get(kb, cp)), mul(kb, ig, cg)));
		po = gload(kb, r, gb, H, j);
		if (r->bp >= 0)
			po = add(kb, po, mul(kb, conv(kb, kb_load(kb, r->bp, add(kb, pb, add(kb, j, I(kb, H)))), ct),
			                     get(kb, cn)));
		og = activate(kb, r, &a[0], "og", po);
		kb_store(kb, r->bc, add(kb, sb, j), get(kb, cn));
		put_h(kb, r, d, b, t, sb, j, mul(kb, og, act_expr(kb, &a[2], get(kb, cn))));
		kb_end(kb);
	}
}

/* The whole sequence of direction d, parallel over the batch. */
static void
direction(KB *kb, const Rnn *r, int d)
{
	int rev = d == 1 || r->rev0, lenv = -1;
	KRef b, j, step, t, len, sb, gb;

	b = loop(kb, "b", r->B, KF_PARALLEL);
	sb = mul(kb, add(kb, I(kb, d * r->B), b), I(kb, r->H));
	gb = mul(kb, add(kb, I(kb, d * r->B), b), I(kb, r->GS));

	j = loop(kb, "j", r->H, 0);
	kb_store(kb, r->bh, add(kb, sb, j),
	         r->bh0 >= 0 ? conv(kb, kb_load(kb, r->bh0, s_at(kb, r, d, b, j)), r->ct)
	                     : kb_const_f(kb, r->ct, 0));
	if (r->bc >= 0)
		kb_store(kb, r->bc, add(kb, sb, j),
		         r->bc0 >= 0 ? conv(kb, kb_load(kb, r->bc0, s_at(kb, r, d, b, j)), r->ct)
		                     : kb_const_f(kb, r->ct, 0));
	kb_end(kb);

	if (r->bsl >= 0) {
		/* a length outside [0, S] is clamped, keeping every access in bounds */
		lenv = kb_var(kb, DT_I64, "len");
		kb_set(kb, lenv, kb_bin(kb, KO_MIN, kb_bin(kb, KO_MAX,
		                                           conv(kb, kb_load(kb, r->bsl, b), DT_I64),
		                                           I(kb, 0)),
		                        I(kb, r->S)));
		len = get(kb, lenv);
	} else {
		len = I(kb, r->S);
	}
	step = loop(kb, "step", r->S, 0);
	if (lenv >= 0)
		kb_if(kb, kb_bin(kb, KO_LT, step, len));
	t = rev ? sub(kb, sub(kb, len, I(kb, 1)), step) : step;
	cell(kb, r, d, b, t, sb, gb);
	if (lenv >= 0) {
		if (r->by >= 0) {
			kb_else(kb);
			j = loop(kb, "j", r->H, 0);
			kb_store(kb, r->by, y_at(kb, r, step, d, b, j), kb_const_f(kb, r->ct, 0));
			kb_end(kb);
		}
		kb_end(kb);
	}
	kb_end(kb);

	if (r->byh >= 0 || r->byc >= 0) {
		j = loop(kb, "j", r->H, 0);
		if (r->byh >= 0)
			kb_store(kb, r->byh, s_at(kb, r, d, b, j), kb_load(kb, r->bh, add(kb, sb, j)));
		if (r->byc >= 0)
			kb_store(kb, r->byc, s_at(kb, r, d, b, j), kb_load(kb, r->bc, add(kb, sb, j)));
		kb_end(kb);
	}
	kb_end(kb);
}

/*
 * The GEMM form of RNN and LSTM (their gates are one product each of x
 * and of h; GRU's reset gate splits the h part, so it keeps the loops),
 * for f32 on a target with the CPU GEMM core, W and R constant, and no
 * sequence_lens (every batch at the same step):
 *
 *   gx[d] = X W[d]^T + Wb[d] + Rb[d]        one GEMM, S*B rows, all steps
 *   for step < S
 *     g[d] = h[d] R[d]^T + gx[d] rows of t   a GEMM of B rows (a GEMV
 *                                           for B = 1), tiles of 8 x 32
 *                                           spread to B x 128 and wider
 *     for b < B: the update of cell()       activations, c, h, Y
 *
 * W^T and R^T are packed into the core's B panels at compile time (each
 * direction's matrix where it was); the kernel's schedule step `poly`
 * has its sigmoids and tanhs built from legalize.c's polynomials.  The
 * sums are not the loops' order (each product is summed from zero, then
 * Wb, Rb and the x part are added to it): equal within rounding.
 */
static int
rnn_gemm(Lower *lw, KB *kb, Node *n, Rnn *r, int *out_fast)
{
	int64_t GH = r->G * r->H;

	*out_fast = 0;
	r->bwp = r->brp = r->bgx = -1;
	if (r->kind == K_GRU || r->dtype != DT_F32 || r->sl || !lower_gemm_cpu(lw) ||
	    !r->w->data || !r->r->data)
		return BURN_OK;
	TRY(lower_gemm_pack(lw, n, 1, r->I, GH, 1, r->I, lower_gemm_nr(lw, kb, r->S * r->B),
	                    r->nd == 1, &r->bwp, &r->wlast));
	TRY(lower_gemm_pack(lw, n, 2, r->H, GH, 1, r->H, lower_gemm_nr(lw, kb, r->B),
	                    r->nd == 1, &r->brp, &r->rlast));
	*out_fast = r->bwp >= 0 && r->brp >= 0;
	/* the cells' loops are their activations: as polynomials they
	 * vectorize (libm's expf and tanhf were 70% of an LSTM's time) */
	if (*out_fast)
		lower_step(lw, kb, target_step(target_or_default(lw->target), KST_POLY, 0));
	return BURN_OK;
}

/* The sequence of direction d in the GEMM form (rnn_gemm). */
static void
direction_gemm(Lower *lw, KB *kb, const Rnn *r, int d)
{
	int rev = d == 1 || r->rev0, dep = kb->depth;
	int64_t GH = r->G * r->H, SB = r->S * r->B;
	KRef b, j, step, t, gxd = I(kb, d * SB * GH);
	GT x = { DT_F32, SB, GH, r->I,
	         { r->bx, I(kb, 0), r->I, 1, 0 },
	         { r->bwp, I(kb, d * r->I * GH), 0, 0, 1, r->wlast },
	         { r->bb, I(kb, d * 2 * GH), 0, 1, 0 }, 1, 1, r->bgx, -1, gxd, 0, 0 };
	GT h = { DT_F32, r->B, GH, r->H,
	         { r->bh, I(kb, d * r->B * r->H), r->H, 1, 0 },
	         { r->brp, I(kb, d * r->H * GH), 0, 0, 1, r->rlast },
	         { r->bgx, 0, r->layout ? r->S * GH : GH, 1, 0 }, 1, 1, r->bg, -1,
	         I(kb, d * r->B * GH), 0, 0 };

	b = loop(kb, "b", r->B, KF_PARALLEL);
	j = loop(kb, "j", r->H, 0);
	kb_store(kb, r->bh, add(kb, mul(kb, add(kb, I(kb, d * r->B), b), I(kb, r->H)), j),
	         r->bh0 >= 0 ? kb_load(kb, r->bh0, s_at(kb, r, d, b, j)) : kb_const_f(kb, DT_F32, 0));
	if (r->bc >= 0)
		kb_store(kb, r->bc, add(kb, mul(kb, add(kb, I(kb, d * r->B), b), I(kb, r->H)), j),
		         r->bc0 >= 0 ? kb_load(kb, r->bc0, s_at(kb, r, d, b, j))
		                     : kb_const_f(kb, DT_F32, 0));
	while (kb->depth > dep)
		kb_end(kb);

	/* the input projection of every step, X's rows in their order
	 * (layout 0: t*B + b, layout 1: b*S + t), and Rb */
	if (r->bb < 0)
		x.c.buf = -1;
	lower_gemm_blocked(lw, kb, &x);
	while (kb->depth > dep)
		kb_end(kb);
	if (r->bb >= 0) {
		KRef i = loop(kb, "i", SB, KF_PARALLEL), at;
		j = loop(kb, "j", GH, 0);
		at = add(kb, gxd, add(kb, mul(kb, i, I(kb, GH)), j));
		kb_store(kb, r->bgx, at, add(kb, kb_load(kb, r->bgx, at),
		                             kb_load(kb, r->bb, add(kb, j, I(kb, d * 2 * GH + GH)))));
		while (kb->depth > dep)
			kb_end(kb);
	}

	step = loop(kb, "step", r->S, 0);
	t = rev ? sub(kb, I(kb, r->S - 1), step) : step;
	h.c.off = add(kb, gxd, mul(kb, t, I(kb, r->layout ? GH : r->B * GH)));
	lower_gemm_blocked(lw, kb, &h);
	while (kb->depth > dep + 1)
		kb_end(kb);
	b = loop(kb, "b", r->B, 0);
	cell(kb, r, d, b, t, mul(kb, add(kb, I(kb, d * r->B), b), I(kb, r->H)),
	     mul(kb, add(kb, I(kb, d * r->B), b), I(kb, r->GS)));
	while (kb->depth > dep)
		kb_end(kb);

	if (r->byh >= 0 || r->byc >= 0) {
		KRef sb;
		b = loop(kb, "b", r->B, KF_PARALLEL);
		j = loop(kb, "j", r->H, 0);
		sb = mul(kb, add(kb, I(kb, d * r->B), b), I(kb, r->H));
		if (r->byh >= 0)
			kb_store(kb, r->byh, s_at(kb, r, d, b, j), kb_load(kb, r->bh, add(kb, sb, j)));
		if (r->byc >= 0)
			kb_store(kb, r->byc, s_at(kb, r, d, b, j), kb_load(kb, r->bc, add(kb, sb, j)));
		while (kb->depth > dep)
			kb_end(kb);
	}
}

int
lower_rnn(Lower *lw, Node *n)
{
	Rnn r;
	int hval, cval = -1, gval, gxval = -1, fast;
	int64_t d3[3];
	KB kb;

	TRY(rnn_shape(lw->ctx, lw->g, n, &r));
	lower_begin(lw, &kb, n);
	TRY(rnn_gemm(lw, &kb, n, &r, &fast));
	d3[0] = r.nd; d3[1] = r.B; d3[2] = r.H;
	hval = lower_temp(lw, r.ct, 3, d3);
	if (r.kind == K_LSTM)
		cval = lower_temp(lw, r.ct, 3, d3);
	d3[2] = r.GS;
	gval = lower_temp(lw, r.ct, 3, d3);
	if (fast) {
		d3[1] = r.S * r.B;
		gxval = lower_temp(lw, r.ct, 3, d3);
	}

	r.bx = lower_in(lw, &kb, n, 0);
	r.bw = fast ? -1 : lower_in(lw, &kb, n, 1);
	r.br = fast ? -1 : lower_in(lw, &kb, n, 2);
	r.bwp = fast ? lower_bind(lw, &kb, r.bwp, KA_READ) : -1;
	r.brp = fast ? lower_bind(lw, &kb, r.brp, KA_READ) : -1;
	r.bb = r.b ? lower_in(lw, &kb, n, 3) : -1;
	r.bsl = r.sl ? lower_in(lw, &kb, n, 4) : -1;
	r.bh0 = r.h0 ? lower_in(lw, &kb, n, 5) : -1;
	r.bc0 = r.c0 ? lower_in(lw, &kb, n, 6) : -1;
	r.bp = r.p ? lower_in(lw, &kb, n, 7) : -1;
	r.by = has_out(n, 0) ? lower_out(lw, &kb, n, 0) : -1;
	r.byh = has_out(n, 1) ? lower_out(lw, &kb, n, 1) : -1;
	r.byc = has_out(n, 2) ? lower_out(lw, &kb, n, 2) : -1;
	r.bh = lower_bind(lw, &kb, hval, KA_RW);
	r.bc = cval >= 0 ? lower_bind(lw, &kb, cval, KA_RW) : -1;
	r.bg = lower_bind(lw, &kb, gval, KA_RW);
	r.bgx = fast ? lower_bind(lw, &kb, gxval, KA_RW) : -1;
	for (int d = 0; d < r.nd; d++)
		if (fast)
			direction_gemm(lw, &kb, &r, d);
		else
			direction(&kb, &r, d);
	lower_end(lw, &kb);
	return BURN_OK;
}

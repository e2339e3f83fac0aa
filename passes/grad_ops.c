/*
 * grad_ops.c - the gradient rules: the grad column of ir/ops.def.
 *
 * Each rule builds, with the builder of autodiff.h, the graph nodes that
 * compute its inputs' gradients from its outputs' (the rule's contract is
 * above GradRule).  Notation in the comments: x the input, y the output,
 * g the gradient of y (dL/dy), gx the gradient of x.  Inputs that
 * broadcasting enlarged get their gradient summed back (ad_unbroadcast).
 *
 * Rules compute in the forward dtype; no rule reads data at compile time
 * but attributes and the constant shape-like inputs inference already
 * required.  Where the derivative is undefined (Relu at 0, ties of Max)
 * a rule picks one side, as PyTorch does.
 */
#include <math.h>
#include <string.h>
#include "autodiff.h"
#include "rng.h"

#define X(k) (n->in[k])
#define Y(k) (n->out[k])
#define G (gout[0])
#define W(k) (a->want[k])
#define DT(v) (GV(a->g, (v))->dtype)
#define RANK(v) (GV(a->g, (v))->rank)
#define DIM(v, i) (GV(a->g, (v))->dim[i])

/* builder shorthands */
static int mul(AD *a, int x, int y) { return ad_op2(a, OP_Mul, x, y); }
static int add(AD *a, int x, int y) { return ad_op2(a, OP_Add, x, y); }
static int sub(AD *a, int x, int y) { return ad_op2(a, OP_Sub, x, y); }
static int dv(AD *a, int x, int y) { return ad_op2(a, OP_Div, x, y); }
static int neg(AD *a, int x) { return ad_op1(a, OP_Neg, x); }
static int mulk(AD *a, int x, double k) { return mul(a, x, ad_k(a, x, k)); }
static int addk(AD *a, int x, double k) { return add(a, x, ad_k(a, x, k)); }
/* where(c, t, 0) */
static int keep_if(AD *a, int c, int t) { return ad_op3(a, OP_Where, c, t, ad_k(a, t, 0)); }
static int gt0(AD *a, int x) { return ad_op2(a, OP_Greater, x, ad_k(a, x, 0)); }

/* ---- pointwise, one input: gx = g * f'(x) ------------------------------- */

static int grad_abs(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = mul(a, G, ad_op1(a, OP_Sign, X(0)));
	return BURN_OK;
}

static int grad_neg(AD *a, const Node *n, const int *gout, int *gin)
{
	(void)n;
	gin[0] = neg(a, G);
	return BURN_OK;
}

static int grad_exp(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = mul(a, G, Y(0));
	return BURN_OK;
}

static int grad_log(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = dv(a, G, X(0));
	return BURN_OK;
}

/* y = sqrt(x): gx = g / (2 y) */
static int grad_sqrt(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = dv(a, G, mulk(a, Y(0), 2));
	return BURN_OK;
}

/* y = 1/x: gx = -g y^2 */
static int grad_reciprocal(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = neg(a, mul(a, G, mul(a, Y(0), Y(0))));
	return BURN_OK;
}

static int grad_sin(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = mul(a, G, ad_op1(a, OP_Cos, X(0)));
	return BURN_OK;
}

static int grad_cos(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = neg(a, mul(a, G, ad_op1(a, OP_Sin, X(0))));
	return BURN_OK;
}

/* y = tan x: gx = g (1 + y^2) */
static int grad_tan(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = mul(a, G, addk(a, mul(a, Y(0), Y(0)), 1));
	return BURN_OK;
}

/* 1 - x^2 */
static int one_minus_sq(AD *a, int x)
{
	return sub(a, ad_k(a, x, 1), mul(a, x, x));
}

static int grad_asin(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = dv(a, G, ad_op1(a, OP_Sqrt, one_minus_sq(a, X(0))));
	return BURN_OK;
}

static int grad_acos(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = neg(a, dv(a, G, ad_op1(a, OP_Sqrt, one_minus_sq(a, X(0)))));
	return BURN_OK;
}

static int grad_atan(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = dv(a, G, addk(a, mul(a, X(0), X(0)), 1));
	return BURN_OK;
}

static int grad_sinh(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = mul(a, G, ad_op1(a, OP_Cosh, X(0)));
	return BURN_OK;
}

static int grad_cosh(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = mul(a, G, ad_op1(a, OP_Sinh, X(0)));
	return BURN_OK;
}

/* y = tanh x: gx = g (1 - y^2) */
static int grad_tanh(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = mul(a, G, one_minus_sq(a, Y(0)));
	return BURN_OK;
}

static int grad_asinh(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = dv(a, G, ad_op1(a, OP_Sqrt, addk(a, mul(a, X(0), X(0)), 1)));
	return BURN_OK;
}

static int grad_acosh(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = dv(a, G, ad_op1(a, OP_Sqrt, addk(a, mul(a, X(0), X(0)), -1)));
	return BURN_OK;
}

static int grad_atanh(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = dv(a, G, one_minus_sq(a, X(0)));
	return BURN_OK;
}

/* erf'(x) = 2/sqrt(pi) exp(-x^2) */
static int grad_erf(AD *a, const Node *n, const int *gout, int *gin)
{
	int e = ad_op1(a, OP_Exp, neg(a, mul(a, X(0), X(0))));
	gin[0] = mul(a, G, mulk(a, e, 1.1283791670955126));
	return BURN_OK;
}

/* gx = g y (1 - y) */
static int grad_sigmoid(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = mul(a, G, mul(a, Y(0), sub(a, ad_k(a, Y(0), 1), Y(0))));
	return BURN_OK;
}

static int grad_relu(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = keep_if(a, gt0(a, X(0)), G);
	return BURN_OK;
}

static int grad_leakyrelu(AD *a, const Node *n, const int *gout, int *gin)
{
	double al = attr_float(n, "alpha", 0.01);
	gin[0] = ad_op3(a, OP_Where, gt0(a, X(0)), G, mulk(a, G, al));
	return BURN_OK;
}

/* y = x (x > 0), alpha (e^x - 1) else: y' = alpha e^x = y + alpha */
static int grad_elu(AD *a, const Node *n, const int *gout, int *gin)
{
	double al = attr_float(n, "alpha", 1.0);
	gin[0] = ad_op3(a, OP_Where, gt0(a, X(0)), G, mul(a, G, addk(a, Y(0), al)));
	return BURN_OK;
}

/* y = gamma x (x > 0), gamma alpha (e^x - 1) else: y' = gamma, y + gamma alpha */
static int grad_selu(AD *a, const Node *n, const int *gout, int *gin)
{
	double al = attr_float(n, "alpha", 1.67326319217681884765625);
	double ga = attr_float(n, "gamma", 1.05070102214813232421875);
	gin[0] = ad_op3(a, OP_Where, gt0(a, X(0)), mulk(a, G, ga),
	                mul(a, G, addk(a, Y(0), ga * al)));
	return BURN_OK;
}

/* y = max(0,x) + min(0, alpha (e^(x/alpha) - 1)): y' = 1, e^(x/alpha) */
static int grad_celu(AD *a, const Node *n, const int *gout, int *gin)
{
	double al = attr_float(n, "alpha", 1.0);
	gin[0] = ad_op3(a, OP_Where, gt0(a, X(0)), G,
	                mul(a, G, ad_op1(a, OP_Exp, mulk(a, X(0), 1 / al))));
	return BURN_OK;
}

/* y = clamp(alpha x + beta, 0, 1): y' = alpha inside */
static int grad_hardsigmoid(AD *a, const Node *n, const int *gout, int *gin)
{
	double al = attr_float(n, "alpha", 0.2), be = attr_float(n, "beta", 0.5);
	int t = addk(a, mulk(a, X(0), al), be);
	int in = ad_op2(a, OP_And, gt0(a, t), ad_op2(a, OP_Less, t, ad_k(a, t, 1)));
	gin[0] = keep_if(a, in, mulk(a, G, al));
	return BURN_OK;
}

/* y = x clamp(x/6 + 1/2, 0, 1): y' = 0 below -3, 1 above 3, x/3 + 1/2 */
static int grad_hardswish(AD *a, const Node *n, const int *gout, int *gin)
{
	int x = X(0);
	int mid = mul(a, G, addk(a, mulk(a, x, 1.0 / 3), 0.5));
	int hi = ad_op2(a, OP_Greater, x, ad_k(a, x, 3));
	int lo = ad_op2(a, OP_Less, x, ad_k(a, x, -3));
	gin[0] = ad_op3(a, OP_Where, hi, G, keep_if(a, ad_op1(a, OP_Not, lo), mid));
	return BURN_OK;
}

/* softplus' = sigmoid */
static int grad_softplus(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = mul(a, G, ad_op1(a, OP_Sigmoid, X(0)));
	return BURN_OK;
}

/* y = x / (1 + |x|): y' = 1 / (1 + |x|)^2 */
static int grad_softsign(AD *a, const Node *n, const int *gout, int *gin)
{
	int d = addk(a, ad_op1(a, OP_Abs, X(0)), 1);
	gin[0] = dv(a, G, mul(a, d, d));
	return BURN_OK;
}

/*
 * Gelu, exact: y = x Phi(x), y' = Phi(x) + x phi(x), with
 * Phi(x) = (1 + erf(x/sqrt2))/2 and phi(x) = exp(-x^2/2)/sqrt(2 pi).
 * tanh form: y = x (1 + tanh u)/2, u = c (x + 0.044715 x^3), c = sqrt(2/pi):
 * y' = (1 + t)/2 + x (1 - t^2) c (1 + 3 0.044715 x^2) / 2, t = tanh u.
 */
static int grad_gelu(AD *a, const Node *n, const int *gout, int *gin)
{
	int x = X(0), d, x2 = mul(a, x, x);

	if (!strcmp(attr_str(n, "approximate", "none"), "tanh")) {
		double c = 0.7978845608028654;
		int u = mulk(a, add(a, x, mulk(a, mul(a, x2, x), 0.044715)), c);
		int t = ad_op1(a, OP_Tanh, u);
		int l = mulk(a, addk(a, t, 1), 0.5);
		int r = mul(a, mul(a, x, one_minus_sq(a, t)),
		            mulk(a, addk(a, mulk(a, x2, 3 * 0.044715), 1), 0.5 * c));
		d = add(a, l, r);
	} else {
		int phi = mulk(a, ad_op1(a, OP_Exp, mulk(a, x2, -0.5)), 0.3989422804014327);
		int cdf = mulk(a, addk(a, ad_op1(a, OP_Erf, mulk(a, x, 0.7071067811865476)), 1), 0.5);
		d = add(a, cdf, mul(a, x, phi));
	}
	gin[0] = mul(a, G, d);
	return BURN_OK;
}

static int grad_thresholdedrelu(AD *a, const Node *n, const int *gout, int *gin)
{
	double al = attr_float(n, "alpha", 1.0);
	gin[0] = keep_if(a, ad_op2(a, OP_Greater, X(0), ad_k(a, X(0), al)), G);
	return BURN_OK;
}

/* y = x + bias below -lambd, x - bias above lambd, 0 between */
static int grad_shrink(AD *a, const Node *n, const int *gout, int *gin)
{
	double l = attr_float(n, "lambd", 0.5);
	int x = X(0);
	int out = ad_op2(a, OP_Or, ad_op2(a, OP_Less, x, ad_k(a, x, -l)),
	                 ad_op2(a, OP_Greater, x, ad_k(a, x, l)));
	gin[0] = keep_if(a, out, G);
	return BURN_OK;
}

/* Cast between float types: the gradient cast back.  (To an integer
 * type the output has no gradient, so the rule is not called.) */
static int grad_cast(AD *a, const Node *n, const int *gout, int *gin)
{
	if (W(0))
		gin[0] = ad_cast(a, G, DT(X(0)));
	return BURN_OK;
}

/* ---- pointwise, several inputs (broadcasting) -------------------------- */

static int grad_add(AD *a, const Node *n, const int *gout, int *gin)
{
	for (int k = 0; k < 2; k++)
		if (W(k))
			gin[k] = ad_unbroadcast(a, G, X(k));
	return BURN_OK;
}

static int grad_sub(AD *a, const Node *n, const int *gout, int *gin)
{
	if (W(0))
		gin[0] = ad_unbroadcast(a, G, X(0));
	if (W(1))
		gin[1] = ad_unbroadcast(a, neg(a, G), X(1));
	return BURN_OK;
}

static int grad_mul(AD *a, const Node *n, const int *gout, int *gin)
{
	if (W(0))
		gin[0] = ad_unbroadcast(a, mul(a, G, X(1)), X(0));
	if (W(1))
		gin[1] = ad_unbroadcast(a, mul(a, G, X(0)), X(1));
	return BURN_OK;
}

/* y = a / b: ga = g / b, gb = -g y / b */
static int grad_div(AD *a, const Node *n, const int *gout, int *gin)
{
	if (W(0))
		gin[0] = ad_unbroadcast(a, dv(a, G, X(1)), X(0));
	if (W(1))
		gin[1] = ad_unbroadcast(a, neg(a, dv(a, mul(a, G, Y(0)), X(1))), X(1));
	return BURN_OK;
}

/* y = a^b: ga = g b a^(b-1), gb = g y log a (0 where a <= 0: there y is
 * not differentiable in b, or not real) */
static int grad_pow(AD *a, const Node *n, const int *gout, int *gin)
{
	int b = ad_cast(a, X(1), DT(X(0)));

	if (W(0))
		gin[0] = ad_unbroadcast(a, mul(a, G, mul(a, b, ad_op2(a, OP_Pow, X(0),
		                        addk(a, b, -1)))), X(0));
	if (W(1)) {
		int l = mul(a, mul(a, G, Y(0)), ad_op1(a, OP_Log, X(0)));
		gin[1] = ad_unbroadcast(a, keep_if(a, gt0(a, X(0)), l), X(1));
	}
	return BURN_OK;
}

/* y = x (x > 0), slope x else */
static int grad_prelu(AD *a, const Node *n, const int *gout, int *gin)
{
	int pos;

	if (a->g->opset < 7 && RANK(X(1)) == 1 && RANK(X(0)) > 2)
		return burn_fail(a->c, BURN_ERR_UNSUPPORTED, "PRelu before opset 7 "
		                 "(a slope per channel): no gradient rule yet");
	pos = gt0(a, X(0));
	if (W(0))
		gin[0] = ad_unbroadcast(a, ad_op3(a, OP_Where, pos, G, mul(a, G, X(1))), X(0));
	if (W(1))
		gin[1] = ad_unbroadcast(a, ad_op3(a, OP_Where, pos, ad_k(a, G, 0),
		                                  mul(a, G, X(0))), X(1));
	return BURN_OK;
}

static int grad_where(AD *a, const Node *n, const int *gout, int *gin)
{
	int z = ad_k(a, G, 0);

	if (W(1))
		gin[1] = ad_unbroadcast(a, ad_op3(a, OP_Where, X(0), G, z), X(1));
	if (W(2))
		gin[2] = ad_unbroadcast(a, ad_op3(a, OP_Where, X(0), z, G), X(2));
	return BURN_OK;
}

/*
 * y = min(max(x, lo), hi): gx where lo <= x <= hi; glo where x < lo <= hi;
 * ghi where max(x, lo) > hi.  Before opset 11 lo and hi are attributes.
 */
static int grad_clip(AD *a, const Node *n, const int *gout, int *gin)
{
	int x = X(0), lo, hi;

	if (a->g->opset < 11) {
		lo = ad_k(a, x, attr_float(n, "min", -INFINITY));
		hi = ad_k(a, x, attr_float(n, "max", INFINITY));
	} else {
		lo = n->nin > 1 && X(1) >= 0 ? X(1) : ad_k(a, x, -INFINITY);
		hi = n->nin > 2 && X(2) >= 0 ? X(2) : ad_k(a, x, INFINITY);
	}
	if (W(0))
		gin[0] = keep_if(a, ad_op2(a, OP_And, ad_op2(a, OP_GreaterOrEqual, x, lo),
		                           ad_op2(a, OP_LessOrEqual, x, hi)), G);
	if (n->nin > 1 && W(1))
		gin[1] = ad_unbroadcast(a, keep_if(a, ad_op2(a, OP_And,
		                        ad_op2(a, OP_Less, x, lo),
		                        ad_op2(a, OP_LessOrEqual, lo, hi)), G), X(1));
	if (n->nin > 2 && W(2))
		gin[2] = ad_unbroadcast(a, keep_if(a, ad_op2(a, OP_Greater,
		                        ad_op2(a, OP_Max, x, lo), hi), G), X(2));
	return BURN_OK;
}

/* Min, Max: the gradient goes to every input equal to the result */
static int grad_minmax(AD *a, const Node *n, const int *gout, int *gin)
{
	for (int k = 0; k < n->nin; k++)
		if (W(k))
			gin[k] = ad_unbroadcast(a, keep_if(a, ad_op2(a, OP_Equal,
			                        ad_cast(a, X(k), DT(Y(0))), Y(0)), G), X(k));
	return BURN_OK;
}

static int grad_sum(AD *a, const Node *n, const int *gout, int *gin)
{
	for (int k = 0; k < n->nin; k++)
		if (W(k))
			gin[k] = ad_unbroadcast(a, G, X(k));
	return BURN_OK;
}

static int grad_mean(AD *a, const Node *n, const int *gout, int *gin)
{
	int s = mulk(a, G, 1.0 / n->nin);
	for (int k = 0; k < n->nin; k++)
		if (W(k))
			gin[k] = ad_unbroadcast(a, s, X(k));
	return BURN_OK;
}

/* ---- reductions ---------------------------------------------------------- */

/*
 * The reduced axes of a Reduce* node (as ops_reduce.c reads them: an
 * attribute before opset 18, ReduceSum 13, a constant input from then;
 * none = all, unless noop_with_empty_axes, *noop).
 */
static int reduce_mask(AD *a, const Node *n, unsigned *mask, int *noop)
{
	int r = RANK(X(0)), nax = 0;
	int64_t ax[BURN_MAX_RANK];

	*mask = 0;
	*noop = 0;
	if (a->g->opset >= (n->op == OP_ReduceSum ? 13 : 18)) {
		const Value *av = NIN(a->g, n, 1);
		if (av) {
			nax = (int)value_numel(av);
			if (!av->data || nax > BURN_MAX_RANK)
				return burn_fail(a->c, BURN_ERR_UNSUPPORTED, "axes not a constant");
			for (int i = 0; i < nax; i++)
				ax[i] = value_get_i(av, i);
		}
	} else {
		const int64_t *p;
		nax = attr_ints(n, "axes", &p);
		if (nax > BURN_MAX_RANK)
			return burn_fail(a->c, BURN_ERR_INVALID, "%d axes", nax);
		for (int i = 0; i < nax; i++)
			ax[i] = p[i];
	}
	if (!nax) {
		if (attr_int(n, "noop_with_empty_axes", 0))
			*noop = 1;
		else
			*mask = r ? (1u << r) - 1 : 0;
		return BURN_OK;
	}
	for (int i = 0; i < nax; i++) {
		int64_t v = ax[i] < 0 ? ax[i] + r : ax[i];
		if (v < 0 || v >= r)
			return burn_fail(a->c, BURN_ERR_INVALID, "axis %lld", (long long)ax[i]);
		*mask |= 1u << v;
	}
	return BURN_OK;
}

/* v (the output or its gradient) with the reduced axes of x kept as 1 */
static int keep_shape(AD *a, int v, int x, unsigned mask)
{
	int64_t d[BURN_MAX_RANK];
	int r = RANK(x);

	for (int i = 0; i < r; i++)
		d[i] = mask >> i & 1 ? 1 : DIM(x, i);
	return ad_reshape(a, v, r, d);
}

/* The common part: the mask, gk and yk (g and y with kept axes). */
static int reduce_parts(AD *a, const Node *n, const int *gout, unsigned *mask,
                        int *noop, int *gk, int *yk)
{
	TRY(reduce_mask(a, n, mask, noop));
	*gk = keep_shape(a, G, X(0), *mask);
	*yk = keep_shape(a, Y(0), X(0), *mask);
	return BURN_OK;
}

#define REDUCE_RULE(fname, expr) \
static int fname(AD *a, const Node *n, const int *gout, int *gin) \
{ \
	unsigned mask; \
	int noop, gk, yk, x = X(0); \
	TRY(reduce_parts(a, n, gout, &mask, &noop, &gk, &yk)); \
	(void)yk; \
	gin[0] = noop ? G : ad_expand_as(a, (expr), x); \
	return BURN_OK; \
}

static int64_t count_of(AD *a, int x, unsigned mask)
{
	int64_t c = 1;
	for (int i = 0; i < RANK(x); i++)
		if (mask >> i & 1)
			c *= DIM(x, i);
	return c;
}

REDUCE_RULE(grad_rsum, gk)
REDUCE_RULE(grad_rmean, mulk(a, gk, 1.0 / (double)(count_of(a, x, mask) ? count_of(a, x, mask) : 1)))
REDUCE_RULE(grad_rmaxmin, keep_if(a, ad_op2(a, OP_Equal, x, yk), gk))
REDUCE_RULE(grad_rl1, mul(a, gk, ad_op1(a, OP_Sign, x)))
REDUCE_RULE(grad_rl2, dv(a, mul(a, gk, x), yk))
REDUCE_RULE(grad_rlogsum, mul(a, gk, ad_op1(a, OP_Exp, neg(a, yk))))
REDUCE_RULE(grad_rlse, mul(a, gk, ad_op1(a, OP_Exp, sub(a, x, yk))))
REDUCE_RULE(grad_rsumsq, mul(a, gk, mulk(a, x, 2)))
REDUCE_RULE(grad_rprod, dv(a, mul(a, gk, yk), x))

/* The axes a Softmax or LogSoftmax normalises over: one axis from opset
 * 13, the axis and all after it (the 2-D coercion) before. */
static unsigned softmax_mask(AD *a, const Node *n)
{
	int r = RANK(X(0));
	int64_t ax = attr_int(n, "axis", a->g->opset >= 13 ? -1 : 1);
	unsigned m = 0;

	if (ax < 0)
		ax += r;
	if (a->g->opset >= 13)
		return ax >= 0 && ax < r ? 1u << ax : 0;
	for (int i = (int)ax; i < r; i++)
		if (i >= 0)
			m |= 1u << i;
	return m;
}

/* gx = y (g - sum(g y)) */
static int grad_softmax(AD *a, const Node *n, const int *gout, int *gin)
{
	int gy = mul(a, G, Y(0));
	gin[0] = mul(a, Y(0), sub(a, G, ad_rsum(a, gy, softmax_mask(a, n), 1)));
	return BURN_OK;
}

/* gx = g - exp(y) sum(g) */
static int grad_logsoftmax(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = sub(a, G, mul(a, ad_op1(a, OP_Exp, Y(0)),
	                       ad_rsum(a, G, softmax_mask(a, n), 1)));
	return BURN_OK;
}

/* x normalised over the axes of mask, cnt elements each (LayerNorm's
 * and training-mode BatchNorm's statistics): mean, xc = x - mean, rstd =
 * 1/sqrt(mean(xc^2) + eps) (the population variance), xh = xc rstd; mean
 * and rstd keep the reduced axes (size 1). */
typedef struct Norm {
	int mean, xc, rstd, xh;
} Norm;

static Norm normalise(AD *a, int x, unsigned mask, int64_t cnt, double eps)
{
	Norm s;

	s.mean = mulk(a, ad_rsum(a, x, mask, 1), 1.0 / (double)cnt);
	s.xc = sub(a, x, s.mean);
	s.rstd = ad_op1(a, OP_Reciprocal, ad_op1(a, OP_Sqrt,
	                addk(a, mulk(a, ad_rsum(a, mul(a, s.xc, s.xc), mask, 1),
	                             1.0 / (double)cnt), eps)));
	s.xh = mul(a, s.xc, s.rstd);
	return s;
}

/* The gradient through xh of normalise's s, given gxh (the gradient of
 * xh): rstd (gxh - mean(gxh) - xh mean(gxh xh)), means over mask. */
static int normalise_grad(AD *a, const Norm *s, int gxh, unsigned mask, int64_t cnt)
{
	int m1 = mulk(a, ad_rsum(a, gxh, mask, 1), 1.0 / (double)cnt);
	int m2 = mulk(a, ad_rsum(a, mul(a, gxh, s->xh), mask, 1), 1.0 / (double)cnt);

	return mul(a, s->rstd, sub(a, sub(a, gxh, m1), mul(a, s->xh, m2)));
}

/*
 * LayerNormalization over the axes from `axis` on (N elements each):
 * xc = x - mean, rstd = 1/sqrt(mean(xc^2) + eps), xh = xc rstd,
 * y = xh scale + bias; outputs 1 and 2 are mean and rstd.
 *   gxh = g scale
 *   gx  = rstd (gxh - mean(gxh) - xh mean(gxh xh))
 *         + gmean / N - grstd rstd^3 xc / N
 */
static int grad_layernorm(AD *a, const Node *n, const int *gout, int *gin)
{
	int x = X(0), r = RANK(x);
	int64_t ax = attr_int(n, "axis", -1), cnt;
	double eps = attr_float(n, "epsilon", 1e-5);
	unsigned mask = 0;
	int gx = -1;
	Norm s;

	if (ax < 0)
		ax += r;
	for (int i = (int)ax; i < r; i++)
		mask |= 1u << i;
	cnt = count_of(a, x, mask);
	s = normalise(a, x, mask, cnt, eps);
	if (G >= 0) {
		if (W(0))
			gx = normalise_grad(a, &s, mul(a, G, X(1)), mask, cnt);
		if (W(1))
			gin[1] = ad_unbroadcast(a, mul(a, G, s.xh), X(1));
		if (n->nin > 2 && X(2) >= 0 && W(2))
			gin[2] = ad_unbroadcast(a, G, X(2));
	}
	if (W(0) && n->nout > 1 && gout[1] >= 0) {
		int t = ad_expand_as(a, mulk(a, gout[1], 1.0 / (double)cnt), x);
		gx = gx < 0 ? t : add(a, gx, t);
	}
	if (W(0) && n->nout > 2 && gout[2] >= 0) {
		int r3 = mul(a, s.rstd, mul(a, s.rstd, s.rstd));
		int t = mul(a, mulk(a, mul(a, gout[2], r3), -1.0 / (double)cnt), s.xc);
		gx = gx < 0 ? t : add(a, gx, t);
	}
	if (W(0))
		gin[0] = gx;
	return BURN_OK;
}

/*
 * BatchNormalization in training mode: per channel c (axis 1), over the
 * other axes (cnt elements), mean = mean(x), xc = x - mean, var =
 * mean(xc^2) (the population variance), rstd = 1/sqrt(var + eps), xh = xc
 * rstd, y = xh scale + B; outputs 1 and 2 the running statistics
 * running_mean = input_mean m + mean (1 - m), running_var = input_var m +
 * var (1 - m) (m the momentum).  As LayerNormalization's rule, with
 * gxh = g scale:
 *   gx = rstd (gxh - mean(gxh) - xh mean(gxh xh))
 *        + g1 (1 - m) / cnt + g2 (1 - m) 2 xc / cnt
 *   gscale = sum g xh, gB = sum g, ginput_mean = g1 m, ginput_var = g2 m.
 */
static int grad_batchnorm_train(AD *a, const Node *n, const int *gout, int *gin)
{
	int x = X(0), r = RANK(x), gx = -1, sc;
	int g1 = n->nout > 1 ? gout[1] : -1, g2 = n->nout > 2 ? gout[2] : -1;
	int64_t d[BURN_MAX_RANK], cnt;
	double eps = attr_float(n, "epsilon", 1e-5), m = attr_float(n, "momentum", 0.9);
	unsigned mask = 0;
	Norm s;

	for (int i = 0; i < r; i++) {
		d[i] = i == 1 ? DIM(x, 1) : 1;
		if (i != 1)
			mask |= 1u << i;
	}
	cnt = count_of(a, x, mask);
	if (cnt <= 0)
		return burn_fail(a->c, BURN_ERR_SHAPE, "no elements per channel");
	s = normalise(a, x, mask, cnt, eps);
	sc = ad_reshape(a, X(1), r, d);
	if (G >= 0) {
		if (W(0))
			gx = normalise_grad(a, &s, mul(a, G, sc), mask, cnt);
		if (W(1))
			gin[1] = ad_rsum(a, mul(a, G, s.xh), mask, 0);
		if (W(2))
			gin[2] = ad_rsum(a, G, mask, 0);
	}
	if (W(0) && g1 >= 0) {
		int t = ad_expand_as(a, mulk(a, ad_reshape(a, g1, r, d),
		                             (1 - m) / (double)cnt), x);
		gx = gx < 0 ? t : add(a, gx, t);
	}
	if (W(0) && g2 >= 0) {
		int t = mul(a, mulk(a, ad_reshape(a, g2, r, d), 2 * (1 - m) / (double)cnt), s.xc);
		gx = gx < 0 ? t : add(a, gx, t);
	}
	if (W(0))
		gin[0] = gx;
	if (W(3) && g1 >= 0)
		gin[3] = mulk(a, g1, m);
	if (W(4) && g2 >= 0)
		gin[4] = mulk(a, g2, m);
	return BURN_OK;
}

/*
 * BatchNormalization in inference form, per channel c (axis 1):
 * y = (x - mean) s + bias, s = scale rstd, rstd = 1/sqrt(var + eps).
 *   gx = g s, gbias = sum g, gscale = sum g (x - mean) rstd,
 *   gmean = -gbias s, gvar = -sum(g (x - mean)) scale rstd^3 / 2
 * (sums over every axis but 1).  Training mode: grad_batchnorm_train.
 */
static int grad_batchnorm(AD *a, const Node *n, const int *gout, int *gin)
{
	int x = X(0), r = RANK(x);
	int64_t d[BURN_MAX_RANK];
	double eps = attr_float(n, "epsilon", 1e-5);
	unsigned mask = 0;
	int rstd, s, xm, gsum, gxm;

	if (r < 2)
		return burn_fail(a->c, BURN_ERR_SHAPE, "input of rank %d", r);
	if (attr_int(n, "training_mode", 0))
		return grad_batchnorm_train(a, n, gout, gin);
	for (int i = 0; i < r; i++) {
		d[i] = i == 1 ? DIM(x, 1) : 1;
		if (i != 1)
			mask |= 1u << i;
	}
	rstd = ad_op1(a, OP_Reciprocal, ad_op1(a, OP_Sqrt, addk(a, X(4), eps)));
	s = mul(a, X(1), rstd);
	xm = sub(a, x, ad_reshape(a, X(3), r, d));
	gsum = ad_rsum(a, G, mask, 0);
	gxm = ad_rsum(a, mul(a, G, xm), mask, 0);
	if (W(0))
		gin[0] = mul(a, G, ad_reshape(a, s, r, d));
	if (W(1))
		gin[1] = mul(a, gxm, rstd);
	if (W(2))
		gin[2] = gsum;
	if (W(3))
		gin[3] = neg(a, mul(a, gsum, s));
	if (W(4))
		gin[4] = mulk(a, mul(a, gxm, mul(a, X(1), mul(a, rstd, mul(a, rstd, rstd)))),
		              -0.5);
	return BURN_OK;
}

/* ---- MatMul, Gemm ------------------------------------------------------- */

/* x with its last two axes swapped */
static int swap_last(AD *a, int x)
{
	int64_t p[BURN_MAX_RANK];
	int r;

	if (x < 0)
		return -1;
	r = RANK(x);
	for (int i = 0; i < r; i++)
		p[i] = i;
	p[r - 2] = r - 1;
	p[r - 1] = r - 2;
	return ad_transpose(a, x, r, p);
}

/*
 * y = A B over broadcast batch axes: gA = g B^T, gB = A^T g, summed back
 * over the batch axes each was broadcast along.  A 1-D A is a row [1, k],
 * a 1-D B a column [k, 1] (NumPy's rule), and g gets their axes back.
 */
static int grad_matmul(AD *a, const Node *n, const int *gout, int *gin)
{
	int A = X(0), B = X(1), A2 = A, B2 = B, g2, ry;
	int64_t d[BURN_MAX_RANK];

	if (RANK(A) == 1)
		A2 = ad_reshape(a, A, 2, (int64_t[]){ 1, DIM(A, 0) });
	if (RANK(B) == 1)
		B2 = ad_reshape(a, B, 2, (int64_t[]){ DIM(B, 0), 1 });
	if (A2 < 0 || B2 < 0)
		return a->c->code;
	/* y's shape with the dropped axes back: batch + [m, n] */
	ry = RANK(A2) > RANK(B2) ? RANK(A2) : RANK(B2);
	for (int i = 0; i < ry - 2; i++) {
		int ia = i - (ry - RANK(A2)), ib = i - (ry - RANK(B2));
		int64_t da = ia >= 0 ? DIM(A2, ia) : 1, db = ib >= 0 ? DIM(B2, ib) : 1;
		d[i] = da == 1 ? db : da;
	}
	d[ry - 2] = DIM(A2, RANK(A2) - 2);
	d[ry - 1] = DIM(B2, RANK(B2) - 1);
	g2 = ad_reshape(a, G, ry, d);
	if (W(0))
		gin[0] = ad_reshape_as(a, ad_unbroadcast(a, ad_op2(a, OP_MatMul, g2,
		                       swap_last(a, B2)), A2), A);
	if (W(1))
		gin[1] = ad_reshape_as(a, ad_unbroadcast(a, ad_op2(a, OP_MatMul,
		                       swap_last(a, A2), g2), B2), B);
	return BURN_OK;
}

static int gemm(AD *a, int x, int y, double alpha, int ta, int tb)
{
	int nd = ad_node(a, OP_Gemm, 2, (int[]){ x, y });
	ad_attr_f(a, nd, "alpha", alpha);
	ad_attr_i(a, nd, "transA", ta);
	ad_attr_i(a, nd, "transB", tb);
	return ad_done(a, nd);
}

/*
 * y = alpha op(A) op(B) + beta C, op = transpose where trans* is set:
 *   g op(A) = alpha g op(B)^T,  g op(B) = alpha op(A)^T g,  gC = beta g,
 * each written as one Gemm with the transposes as flags.
 */
static int grad_gemm(AD *a, const Node *n, const int *gout, int *gin)
{
	double al = attr_float(n, "alpha", 1.0), be = attr_float(n, "beta", 1.0);
	int ta = (int)attr_int(n, "transA", 0), tb = (int)attr_int(n, "transB", 0);

	if (W(0))
		gin[0] = ta ? gemm(a, X(1), G, al, tb, 1) : gemm(a, G, X(1), al, 0, !tb);
	if (W(1))
		gin[1] = tb ? gemm(a, G, X(0), al, 1, ta) : gemm(a, X(0), G, al, !ta, 0);
	if (n->nin > 2 && X(2) >= 0 && W(2))
		gin[2] = ad_unbroadcast(a, mulk(a, G, be), X(2));
	return BURN_OK;
}

/* ---- Conv and pools ----------------------------------------------------- */

/* A window's geometry, from the attributes and the known shapes: the
 * start pads come from auto_pad as in ops_linalg.c's win_out. */
typedef struct Geo {
	int nsp;
	int64_t in[BURN_MAX_RANK], out[BURN_MAX_RANK], k[BURN_MAX_RANK];
	int64_t s[BURN_MAX_RANK], d[BURN_MAX_RANK], pb[BURN_MAX_RANK];
} Geo;

static int geo_read(AD *a, const Node *n, int x, int y, const int64_t *wk, Geo *w)
{
	const int64_t *p;
	const char *ap = attr_str(n, "auto_pad", "NOTSET");
	int np;

	memset(w, 0, sizeof *w);
	w->nsp = RANK(x) - 2;
	if (w->nsp < 1)
		return burn_fail(a->c, BURN_ERR_SHAPE, "input of rank %d", RANK(x));
	for (int i = 0; i < w->nsp; i++) {
		w->in[i] = DIM(x, i + 2);
		w->out[i] = DIM(y, i + 2);
		w->s[i] = w->d[i] = 1;
	}
	if (attr_ints(n, "kernel_shape", &p) == w->nsp)
		memcpy(w->k, p, sizeof *p * (size_t)w->nsp);
	else if (wk)
		memcpy(w->k, wk, sizeof *wk * (size_t)w->nsp);
	else
		return burn_fail(a->c, BURN_ERR_INVALID, "no kernel_shape");
	if (attr_ints(n, "strides", &p) == w->nsp)
		memcpy(w->s, p, sizeof *p * (size_t)w->nsp);
	if (attr_ints(n, "dilations", &p) == w->nsp)
		memcpy(w->d, p, sizeof *p * (size_t)w->nsp);
	np = attr_ints(n, "pads", &p);
	for (int i = 0; i < w->nsp; i++) {
		int64_t ek = (w->k[i] - 1) * w->d[i] + 1;
		int64_t tot = (w->out[i] - 1) * w->s[i] + ek - w->in[i];
		if (tot < 0)
			tot = 0;
		if (!strcmp(ap, "SAME_UPPER"))
			w->pb[i] = tot / 2;
		else if (!strcmp(ap, "SAME_LOWER"))
			w->pb[i] = tot - tot / 2;
		else if (!strcmp(ap, "VALID"))
			w->pb[i] = 0;
		else
			w->pb[i] = np == 2 * w->nsp ? p[i] : 0;
	}
	return BURN_OK;
}

/*
 * The adjoint of a window op: ConvTranspose of gy with kernel wt,
 * producing x's extents.  ConvTranspose's output extent is
 * s (o - 1) + (k - 1) d + 1 - pb - pe + output_padding; the end pad (or
 * output padding, when the forward windows left input unread) makes it
 * the input's.
 */
static int adjoint(AD *a, const Geo *w, int gy, int wt, int group)
{
	int64_t pads[2 * BURN_MAX_RANK], op[BURN_MAX_RANK];
	int nd;

	for (int i = 0; i < w->nsp; i++) {
		int64_t tot = w->s[i] * (w->out[i] - 1) + (w->k[i] - 1) * w->d[i] + 1 - w->pb[i];
		pads[i] = w->pb[i];
		pads[w->nsp + i] = tot > w->in[i] ? tot - w->in[i] : 0;
		op[i] = tot < w->in[i] ? w->in[i] - tot : 0;
		if (op[i] >= w->s[i] && op[i] >= w->d[i])
			return burn_fail(a->c, BURN_ERR_UNSUPPORTED, "window leaves %lld "
			                 "input elements unread: no gradient rule yet",
			                 (long long)op[i]);
	}
	nd = ad_node(a, OP_ConvTranspose, 2, (int[]){ gy, wt });
	ad_attr_ints(a, nd, "strides", w->nsp, w->s);
	ad_attr_ints(a, nd, "dilations", w->nsp, w->d);
	ad_attr_ints(a, nd, "pads", 2 * w->nsp, pads);
	ad_attr_ints(a, nd, "output_padding", w->nsp, op);
	ad_attr_i(a, nd, "group", group);
	return ad_done(a, nd);
}

/* perm swapping axes 0 and 1 */
static int swap01(AD *a, int x)
{
	int64_t p[BURN_MAX_RANK];
	int r;

	if (x < 0)
		return -1;
	r = RANK(x);
	for (int i = 0; i < r; i++)
		p[i] = i;
	p[0] = 1;
	p[1] = 0;
	return ad_transpose(a, x, r, p);
}

/*
 * The weight gradient of one group: gW[co, ci, k] = sum over n and output
 * positions o of g[n, co, o] x[n, ci, o s + k d - pb], which is a Conv of
 * x^T ([ci, n, ...]) by g^T ([co, n, ...]) with strides and dilations
 * exchanged, cropped to the kernel extents.
 */
static int weight_grad(AD *a, const Geo *w, int x, int gy)
{
	int64_t pads[2 * BURN_MAX_RANK];
	int nd, r;

	for (int i = 0; i < w->nsp; i++) {
		/* extent of the result: (in + pb + pe - ((out-1) s + 1)) / d + 1,
		 * which must be k: choose pe, cropping x where it would be < 0 */
		int64_t pe = (w->k[i] - 1) * w->d[i] + (w->out[i] - 1) * w->s[i] + 1
		             - w->in[i] - w->pb[i];
		if (pe < 0) {
			x = ad_slice(a, x, i + 2, 0, w->in[i] + pe);
			pe = 0;
		}
		pads[i] = w->pb[i];
		pads[w->nsp + i] = pe;
	}
	nd = ad_node(a, OP_Conv, 2, (int[]){ swap01(a, x), swap01(a, gy) });
	ad_attr_ints(a, nd, "strides", w->nsp, w->d);
	ad_attr_ints(a, nd, "dilations", w->nsp, w->s);
	ad_attr_ints(a, nd, "pads", 2 * w->nsp, pads);
	r = ad_done(a, nd);
	return swap01(a, r);
}

static int grad_conv(AD *a, const Node *n, const int *gout, int *gin)
{
	int x = X(0), wt = X(1), grp = (int)attr_int(n, "group", 1);
	int64_t wk[BURN_MAX_RANK];
	Geo w;

	for (int i = 0; i + 2 < RANK(wt); i++)
		wk[i] = DIM(wt, i + 2);
	TRY(geo_read(a, n, x, Y(0), wk, &w));
	if (W(0))
		gin[0] = adjoint(a, &w, G, wt, grp);
	if (W(1)) {
		int64_t ci = DIM(x, 1) / grp, co = DIM(wt, 0) / grp;
		int acc = -1;
		if (grp == 1) {
			acc = weight_grad(a, &w, x, G);
		} else {
			/* one Conv per group, concatenated along the output channels */
			int *parts = arena_alloc(&a->g->arena, sizeof *parts * (size_t)grp);
			if (!parts)
				return burn_fail(a->c, BURN_ERR_NOMEM, "out of memory");
			for (int k = 0; k < grp; k++)
				parts[k] = weight_grad(a, &w, ad_slice(a, x, 1, k * ci, (k + 1) * ci),
				                       ad_slice(a, G, 1, k * co, (k + 1) * co));
			for (int k = 0; k < grp; k++)
				if (parts[k] < 0)
					return a->c->code;
			{
				int nd = ad_node(a, OP_Concat, grp, parts);
				ad_attr_i(a, nd, "axis", 0);
				acc = ad_done(a, nd);
			}
		}
		gin[1] = acc;
	}
	if (n->nin > 2 && X(2) >= 0 && W(2)) {
		unsigned mask = 0;
		for (int i = 0; i < RANK(G); i++)
			if (i != 1)
				mask |= 1u << i;
		gin[2] = ad_rsum(a, G, mask, 0);
	}
	return BURN_OK;
}

/* Scatter-add the flattened g into zeros shaped like x at the flat
 * indices idx (i64, g's shape): the adjoint of a gather. */
static int scatter_back(AD *a, int g, int idx, int x)
{
	int64_t m1 = -1, nx = value_numel(GV(a->g, x));
	int z, nd;

	if (nx == 0 || value_numel(GV(a->g, g)) == 0)
		return ad_zeros_like(a, x);
	z = ad_zeros_like(a, ad_reshape(a, x, 1, &nx));
	nd = ad_node(a, OP_ScatterElements, 3, (int[]){ z, ad_reshape(a, idx, 1, &m1),
	             ad_reshape(a, g, 1, &m1) });
	ad_attr_i(a, nd, "axis", 0);
	ad_attr_s(a, nd, "reduction", "add");
	return ad_reshape_as(a, ad_done(a, nd), x);
}

/* y = x at the argmax of each window: the Indices output of a MaxPool
 * like the forward (flat row-major indices into x, storage_order 0 even
 * when the forward's is 1) says where each g goes. */
static int grad_maxpool(AD *a, const Node *n, const int *gout, int *gin)
{
	int x = X(0), out[2], nd, idx;

	out[0] = graph_add_value(a->g, arena_printf(&a->g->arena, "grad/v%d", a->seq++));
	out[1] = graph_add_value(a->g, arena_printf(&a->g->arena, "grad/v%d", a->seq++));
	if (out[0] < 0 || out[1] < 0)
		return burn_fail(a->c, BURN_ERR_NOMEM, "out of memory");
	nd = graph_add_node(a->g, OP_MaxPool, arena_printf(&a->g->arena, "grad/n%d",
	                    a->seq++), 1, &x, 2, out);
	if (nd < 0)
		return burn_fail(a->c, BURN_ERR_NOMEM, "out of memory");
	/* the forward's attributes but storage_order: the copy's Indices are
	 * row-major (flat indices into x) whatever order the forward's are */
	for (int k = 0; k < n->nattr; k++) {
		Attr *at;
		if (!strcmp(n->attr[k].name, "storage_order"))
			continue;
		if (!(at = node_add_attr(a->g, nd, n->attr[k].name, n->attr[k].type)))
			return burn_fail(a->c, BURN_ERR_NOMEM, "out of memory");
		*at = n->attr[k];
	}
	if (ad_done(a, nd) < 0)
		return a->c->code;
	idx = out[1];
	gin[0] = scatter_back(a, G, idx, x);
	return BURN_OK;
}

/*
 * y = sum of each window / its count: gx = the adjoint window sum
 * (ConvTranspose by ones, one group per channel) of g / count.  The count
 * of each output position is the product over spatial axes of the
 * window's positions inside the input (count_include_pad: inside the
 * padded input), a constant.
 */
static int grad_avgpool(AD *a, const Node *n, const int *gout, int *gin)
{
	int x = X(0), inc = (int)attr_int(n, "count_include_pad", 0), ones, cnt;
	int64_t C = DIM(x, 1), wd[BURN_MAX_RANK], cd[BURN_MAX_RANK], nk = 1, nc = 1;
	Geo w;
	double *cv;
	void *ov;

	TRY(geo_read(a, n, x, Y(0), NULL, &w));
	wd[0] = C;
	wd[1] = 1;
	cd[0] = cd[1] = 1;
	for (int i = 0; i < w.nsp; i++) {
		wd[i + 2] = w.k[i];
		cd[i + 2] = w.out[i];
		nk *= w.k[i];
		nc *= w.out[i];
	}
	cv = arena_alloc(&a->g->arena, sizeof *cv * (size_t)(nc ? nc : 1));
	ov = arena_alloc(&a->g->arena, (size_t)(dtype_size(DT(x)) * C * nk + 1));
	if (!cv || !ov)
		return burn_fail(a->c, BURN_ERR_NOMEM, "out of memory");
	for (int64_t j = 0; j < nc; j++) {
		int64_t rem = j;
		double c = 1;
		for (int i = w.nsp - 1; i >= 0; i--) {
			int64_t o = rem % w.out[i], lo, hi, m = 0;
			int64_t pe = (w.out[i] - 1) * w.s[i] + (w.k[i] - 1) * w.d[i] + 1 -
			             w.pb[i] - w.in[i];
			rem /= w.out[i];
			lo = inc ? -w.pb[i] : 0;
			hi = inc ? w.in[i] + (pe > 0 ? pe : 0) : w.in[i];
			/* with ceil_mode, positions past the end padding never count */
			if (inc && attr_int(n, "ceil_mode", 0)) {
				int64_t np = 0;
				const int64_t *p;
				if (attr_ints(n, "pads", &p) == 2 * w.nsp)
					np = p[w.nsp + i];
				hi = w.in[i] + np;
			}
			for (int64_t k = 0; k < w.k[i]; k++) {
				int64_t q = o * w.s[i] - w.pb[i] + k * w.d[i];
				m += q >= lo && q < hi;
			}
			c *= (double)m;
		}
		cv[j] = c ? 1.0 / c : 0;
	}
	if (DT(x) == DT_F64) {
		cnt = ad_const(a, DT_F64, w.nsp + 2, cd, cv);
		for (int64_t j = 0; j < C * nk; j++)
			((double *)ov)[j] = 1;
	} else {
		float *f = arena_alloc(&a->g->arena, sizeof *f * (size_t)(nc ? nc : 1));
		if (!f)
			return burn_fail(a->c, BURN_ERR_NOMEM, "out of memory");
		for (int64_t j = 0; j < nc; j++)
			f[j] = (float)cv[j];
		cnt = ad_cast(a, ad_const(a, DT_F32, w.nsp + 2, cd, f), DT(x));
		if (DT(x) != DT_F32)
			return burn_fail(a->c, BURN_ERR_UNSUPPORTED, "AveragePool gradient "
			                 "in %s: no rule yet", dtype_name(DT(x)));
		for (int64_t j = 0; j < C * nk; j++)
			((float *)ov)[j] = 1;
	}
	ones = ad_const(a, DT(x), w.nsp + 2, wd, ov);
	gin[0] = adjoint(a, &w, mul(a, G, cnt), ones, (int)C);
	return BURN_OK;
}

static int grad_gap(AD *a, const Node *n, const int *gout, int *gin)
{
	int64_t c = 1;

	for (int i = 2; i < RANK(X(0)); i++)
		c *= DIM(X(0), i);
	gin[0] = ad_expand_as(a, mulk(a, G, 1.0 / (double)(c ? c : 1)), X(0));
	return BURN_OK;
}

static int grad_gmp(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = keep_if(a, ad_op2(a, OP_Equal, X(0), Y(0)), G);
	return BURN_OK;
}

/* ---- data movement ------------------------------------------------------ */

/* Identity, Reshape, Flatten, Squeeze, Unsqueeze: the same elements in
 * the same order. */
static int grad_reshape(AD *a, const Node *n, const int *gout, int *gin)
{
	if (W(0))
		gin[0] = ad_reshape_as(a, G, X(0));
	return BURN_OK;
}

/*
 * Dropout.  Inference: a copy.  Training: y = keep ? x / (1 - r) : 0, so
 * gx = keep ? g / (1 - r) : 0, which is Dropout of g under the forward's
 * mask: a second Dropout node over g with the forward's ratio,
 * training_mode, attributes and stream (burn_stream), which draws the
 * same numbers, since a draw is a function of key, stream and element
 * index only (passes/rng.h).  With training_mode a run-time false both
 * are copies.  The ratio's gradient holds the mask fixed (it changes only
 * where a draw equals r): sum(g y) / (1 - r), for a constant
 * training_mode.  `burncc check --grad`'s finite differences see one
 * mask in every evaluation because the node cases fix the seed (an
 * unseeded node's stream comes from its name, also fixed).
 */
static int grad_dropout(AD *a, const Node *n, const int *gout, int *gin)
{
	int in[3] = { G, n->nin > 1 ? X(1) : -1, n->nin > 2 ? X(2) : -1 }, nd;
	const Value *t = n->nin > 2 && X(2) >= 0 ? GV(a->g, X(2)) : NULL;
	Attr *at;

	if (!random_node_draws(a->g, n)) {
		if (W(0))
			gin[0] = ad_reshape_as(a, G, X(0));
		return BURN_OK;
	}
	if (W(0)) {
		nd = ad_node(a, OP_Dropout, n->nin, in);
		if (nd < 0)
			return a->c->code;
		ad_attr_copy(a, nd, n);
		if (!(at = node_add_attr(a->g, nd, "burn_stream", AT_INT)))
			return burn_fail(a->c, BURN_ERR_NOMEM, "out of memory");
		at->i = rng_node_stream(n);
		gin[0] = ad_done(a, nd);
	}
	if (n->nin > 1 && X(1) >= 0 && W(1)) {
		int r = X(1);
		if (!t || !t->data)
			return burn_fail(a->c, BURN_ERR_UNSUPPORTED, "the ratio's gradient "
			                 "needs a constant training_mode");
		gin[1] = ad_reshape_as(a, ad_op2(a, OP_Div,
		         ad_rsum(a, mul(a, G, Y(0)), (1u << RANK(Y(0))) - 1, 0),
		         ad_reshape(a, ad_op2(a, OP_Sub, ad_k(a, r, 1), r), 0, (int64_t[]){ 1 })), r);
	}
	return BURN_OK;
}

static int grad_transpose(AD *a, const Node *n, const int *gout, int *gin)
{
	const int64_t *p;
	int64_t inv[BURN_MAX_RANK];
	int r = RANK(X(0));

	if (attr_ints(n, "perm", &p) == r) {
		for (int i = 0; i < r; i++)
			if (p[i] >= 0 && p[i] < r)
				inv[p[i]] = i;
	} else {
		for (int i = 0; i < r; i++)
			inv[i] = r - 1 - i;
	}
	gin[0] = ad_transpose(a, G, r, inv);
	return BURN_OK;
}

static int grad_expand(AD *a, const Node *n, const int *gout, int *gin)
{
	gin[0] = ad_unbroadcast(a, G, X(0));
	return BURN_OK;
}

/*
 * Data movement in general (Concat, Split, Slice, Gather*, Tile, Pad,
 * DepthToSpace, ...): every output element is a copy of one input element
 * or a fill value.  Running the op itself on int64 "addresses" (input k
 * replaced by 1 .. numel, the other float inputs by 0) gives, for each
 * output element, 1 + the flat index of the element of input k it copies,
 * or 0; the gradient of input k is g scatter-added at those indices.  The
 * address computation folds to a constant when the indices are constants.
 */
static int grad_move(AD *a, const Node *n, const int *gout, int *gin)
{
	for (int k = 0; k < n->nin; k++) {
		int acc = -1;
		int *in, *out, nd;
		if (!W(k))
			continue;
		in = arena_alloc(&a->g->arena, sizeof *in * (size_t)n->nin);
		out = arena_alloc(&a->g->arena, sizeof *out * (size_t)n->nout);
		if (!in || !out)
			return burn_fail(a->c, BURN_ERR_NOMEM, "out of memory");
		for (int j = 0; j < n->nin; j++) {
			const Value *v = NIN(a->g, n, j);
			int64_t nv, d[BURN_MAX_RANK];
			int64_t *addr;
			int rv;
			in[j] = n->in[j];
			if (!v || !dtype_is_float(v->dtype))
				continue;
			nv = value_numel(v);
			rv = v->rank;
			memcpy(d, v->dim, sizeof d);
			addr = arena_alloc(&a->g->arena, sizeof *addr * (size_t)(nv ? nv : 1));
			if (!addr)
				return burn_fail(a->c, BURN_ERR_NOMEM, "out of memory");
			for (int64_t i = 0; i < nv; i++)
				addr[i] = j == k ? i + 1 : 0;
			if ((in[j] = ad_const(a, DT_I64, rv, d, addr)) < 0)
				return a->c->code;
		}
		for (int o = 0; o < n->nout; o++) {
			out[o] = -1;
			if (n->out[o] < 0)
				continue;
			out[o] = graph_add_value(a->g, arena_printf(&a->g->arena, "grad/v%d",
			                                            a->seq++));
			if (out[o] < 0)
				return burn_fail(a->c, BURN_ERR_NOMEM, "out of memory");
		}
		nd = graph_add_node(a->g, n->op, arena_printf(&a->g->arena, "grad/n%d",
		                    a->seq++), n->nin, in, n->nout, out);
		if (nd < 0)
			return burn_fail(a->c, BURN_ERR_NOMEM, "out of memory");
		ad_attr_copy(a, nd, n);
		if (ad_done(a, nd) < 0)
			return a->c->code;
		for (int o = 0; o < n->nout; o++) {
			int ad_, hit, idx, s;
			if (out[o] < 0 || gout[o] < 0)
				continue;
			ad_ = out[o];
			hit = ad_op2(a, OP_Greater, ad_, ad_k(a, ad_, 0));
			idx = ad_op3(a, OP_Where, hit, ad_op2(a, OP_Sub, ad_, ad_k(a, ad_, 1)),
			             ad_k(a, ad_, 0));
			s = scatter_back(a, keep_if(a, hit, gout[o]), idx, X(k));
			acc = acc < 0 ? s : add(a, acc, s);
		}
		gin[k] = acc;
	}
	return BURN_OK;
}

/* ---- losses ------------------------------------------------------------- */

/*
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (passes/ops_loss.c):
 * x is (N, C, D...), t (N, D...) integer, w the optional class weights (C);
 * with tc = t clamped to [0, C), h[n, c, d] = (c == tc[n, d]),
 * v = (t != ignore_index) (1 without it) and u = v w[tc] (v without w),
 * loss(n, d) = -u l[n, tc, d], l = x (NLL) or log_softmax(x, axis 1) (SCE).
 * With s the gradient reaching loss(n, d) (g[n, d] for "none", g for "sum",
 * g / sum(u) for "mean"):
 *   NLL: gx = -h u s
 *   SCE: gx = (softmax(x) - h) u s, plus the rule of LogSoftmax for a
 *        gradient of the second output (the log-probabilities).
 *   gw[c] = sum over n, d of h v s (-l - y), y the "mean" loss (the
 *        derivative of the division by sum(u)), 0 for "none" and "sum".
 * Ignored entries (v = 0) contribute to neither.
 */
static int grad_loss(AD *a, const Node *n, const int *gout, int *gin)
{
	int x = X(0), t = X(1), r = RANK(x), sce = n->op == OP_SoftmaxCrossEntropyLoss;
	int w = n->nin > 2 ? X(2) : -1, ww = w >= 0 && W(2);
	int64_t C = DIM(x, 1), kd[BURN_MAX_RANK], *cls;
	const char *red = attr_str(n, "reduction", "mean");
	int mean = strcmp(red, "none") && strcmp(red, "sum");
	int tk, h, v = -1, u, s, gx = -1;

	if (sce && r > 2 && a->g->opset < 13)
		return burn_fail(a->c, BURN_ERR_UNSUPPORTED,
		                 "rank %d before opset 13: no gradient rule yet", r);
	if (!W(0) && !ww)
		return BURN_OK;
	/* t with the class axis kept as 1: (N, 1, D...) */
	for (int i = 0; i < r; i++)
		kd[i] = i == 1 ? 1 : DIM(x, i);
	tk = ad_reshape(a, ad_cast(a, t, DT_I64), r, kd);
	if (node_attr(n, "ignore_index"))
		v = ad_cast(a, ad_op1(a, OP_Not, ad_op2(a, OP_Equal, tk,
		            ad_scalar(a, DT_I64, (double)attr_int(n, "ignore_index", 0)))), DT(x));
	tk = ad_op2(a, OP_Min, ad_op2(a, OP_Max, tk, ad_scalar(a, DT_I64, 0)),
	            ad_scalar(a, DT_I64, (double)(C - 1)));
	/* the class numbers, (1, C, 1...) */
	for (int i = 0; i < r; i++)
		kd[i] = i == 1 ? C : 1;
	if (!(cls = arena_alloc(&a->g->arena, sizeof *cls * (size_t)(C > 0 ? C : 1))))
		return burn_fail(a->c, BURN_ERR_NOMEM, "out of memory");
	for (int64_t c = 0; c < C; c++)
		cls[c] = c;
	h = ad_cast(a, ad_op2(a, OP_Equal, tk, ad_const(a, DT_I64, r, kd, cls)), DT(x));
	/* u = v w[tc], (N, 1, D...): w as (1, C, 1...) picked by h */
	u = v;
	if (w >= 0) {
		int wt = ad_rsum(a, mul(a, h, ad_reshape(a, w, r, kd)), 1u << 1, 1);
		u = v >= 0 ? mul(a, v, wt) : wt;
	}
	/* s, with the class axis kept */
	if (G < 0)
		s = -1;
	else if (!strcmp(red, "none")) {
		for (int i = 0; i < r; i++)
			kd[i] = i == 1 ? 1 : DIM(x, i);
		s = ad_reshape(a, G, r, kd);
	} else if (!strcmp(red, "sum"))
		s = G;
	else if (u >= 0)
		s = dv(a, G, ad_rsum(a, ad_reshape(a, u, 1, (int64_t[]){ -1 }), 1, 0));
	else {
		int64_t cnt = 1;
		for (int i = 0; i < r; i++)
			if (i != 1)
				cnt *= DIM(x, i);
		s = mulk(a, G, 1.0 / (double)(cnt ? cnt : 1));
	}
	if (s >= 0 && W(0)) {
		int us = u >= 0 ? mul(a, s, u) : s;
		if (sce) {
			int sm = ad_node(a, OP_Softmax, 1, &x);
			ad_attr_i(a, sm, "axis", 1);
			gx = mul(a, sub(a, ad_done(a, sm), h), us);
		} else
			gx = neg(a, mul(a, h, us));
		/* s may be a scalar: gx takes x's shape */
		gx = ad_expand_as(a, gx, x);
	}
	if (s >= 0 && ww) {
		int l = x, e, sv = v >= 0 ? mul(a, s, v) : s;
		if (sce && n->nout > 1 && Y(1) >= 0)
			l = Y(1);
		else if (sce) {
			int ls = ad_node(a, OP_LogSoftmax, 1, &x);
			ad_attr_i(a, ls, "axis", 1);
			l = ad_done(a, ls);
		}
		e = neg(a, l);
		if (mean)
			e = sub(a, e, Y(0));
		/* sum over every axis but the class axis: (C) */
		gin[2] = ad_rsum(a, mul(a, mul(a, h, sv), e), ((1u << r) - 1) & ~(1u << 1), 0);
	}
	if (sce && W(0) && n->nout > 1 && Y(1) >= 0 && gout[1] >= 0) {
		int g1 = gout[1];
		int ls = sub(a, g1, mul(a, ad_op1(a, OP_Exp, Y(1)), ad_rsum(a, g1, 1u << 1, 1)));
		gx = gx < 0 ? ls : add(a, gx, ls);
	}
	if (W(0))
		gin[0] = gx;
	return a->c->code ? a->c->code : BURN_OK;
}

/* ---- the table's column ------------------------------------------------- */

#define nograd NULL
const GradRule op_grad[OP_COUNT_] = {
	NULL,
#define OP(name, mi, xi, mo, xo, cls, ty, inf, low, grad) grad,
#include "../ir/ops.def"
#undef OP
};
#undef nograd

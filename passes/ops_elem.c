/*
 * ops_elem.c - the elementwise ops (class OC_ELEM in ir/ops.def): type and
 * shape inference, the scalar kernel-IR expression of each op (elem_expr,
 * shared with fusion), and the one-kernel lowering.
 *
 * Types.  Each op accepts a set of dtype kinds per input (TK_*); inputs that
 * the spec ties to one type variable must have equal dtypes.  Expressions are
 * built at the op's compute type: the dtype itself, except that f16, bf16
 * and float8 are computed in f32 (kernel loads widen them and stores narrow
 * them, see ir/kir.h).  Float8 is accepted by Cast and CastLike only;
 * Cast's saturate (default 1) clamps to the largest finite value, else out
 * of range values become inf or NaN per format; round_mode picks the
 * rounding to float8e8m0.
 *
 * Shapes.  Numpy multidirectional broadcasting over every present input,
 * except Clip (min/max are scalars, the output has X's shape) and PRelu
 * (slope broadcasts to X only).
 *
 * Semantics follow the ONNX reference implementation where it and the C
 * reading differ: Relu and Clip propagate NaN (like np.maximum/np.clip), Mod
 * with fmod=0 takes the sign of the divisor, integer Div truncates, and Pow
 * with mixed dtypes computes in f64 (as numpy promotes) and casts back.
 * Integer division or modulo by zero yields 0 (numpy's answer) rather than
 * trapping.
 */
#include <math.h>
#include <string.h>
#include "lower.h"

#define MAX_ELEM_IN 64

/* Input k of n, or NULL when absent (a function, so tests of the pointer
 * do not trip -Waddress as NIN's would). */
static Value *
input(Graph *g, Node *n, int k)
{
	return k < n->nin && n->in[k] >= 0 ? GV(g, n->in[k]) : NULL;
}

/* dtype kinds, combined as masks of what an input accepts */
enum {
	TK_FLOAT = 1, TK_SINT = 2, TK_UINT = 4, TK_BOOL = 8,
	TK_INT = TK_SINT | TK_UINT,
	TK_SIGNED = TK_FLOAT | TK_SINT,
	TK_NUM = TK_FLOAT | TK_INT,
	TK_ANY = TK_NUM | TK_BOOL,
};

/* Name of any ONNX dtype, including those burncc cannot compute with. */
static const char *
dtname(int dt)
{
	static const char *const ext[] = {
		"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
		"uint4", "int4", "float4e2m1", "float8e8m0", "uint2", "int2",
	};

	if (dt >= 17 && dt < 17 + (int)(sizeof ext / sizeof ext[0]))
		return ext[dt - 17];
	if (dt == DT_STRING)
		return "string";
	return dtype_name(dt);
}

static int
kind_of(int dt)
{
	if (dtype_is_float(dt))
		return TK_FLOAT;
	if (dt == DT_BOOL)
		return TK_BOOL;
	return dtype_is_signed(dt) ? TK_SINT : TK_UINT;
}

static const char *
kind_str(int mask)
{
	switch (mask) {
	case TK_FLOAT: return "a float";
	case TK_BOOL: return "a bool";
	case TK_INT: return "an integer";
	case TK_UINT: return "an unsigned integer";
	case TK_SIGNED: return "a signed numeric";
	case TK_NUM: return "a numeric";
	default: return "a supported";
	}
}

/* The dtype kinds input k of op accepts. */
static int
accepts(int op, int k)
{
	switch (op) {
	case OP_Abs: case OP_Sign: case OP_Add: case OP_Sub: case OP_Mul:
	case OP_Div: case OP_Pow: case OP_Mod: case OP_Less: case OP_LessOrEqual:
	case OP_Greater: case OP_GreaterOrEqual: case OP_Clip: case OP_Min:
	case OP_Max: case OP_Sum: case OP_Mean: case OP_Shrink:
		return TK_NUM;
	case OP_Neg: case OP_Relu: case OP_PRelu:
		return TK_SIGNED;
	case OP_Not: case OP_And: case OP_Or: case OP_Xor:
		return TK_BOOL;
	case OP_BitwiseNot: case OP_BitwiseAnd: case OP_BitwiseOr:
	case OP_BitwiseXor:
		return TK_INT;
	case OP_BitShift:
		return TK_UINT;
	case OP_Equal: case OP_Cast: case OP_CastLike: case OP_BitCast:
		return TK_ANY;
	case OP_Where:
		return k == 0 ? TK_BOOL : TK_ANY;
	default:
		return TK_FLOAT;
	}
}

/* Whether the inputs of op share one type variable (Where: inputs 1, 2). */
static int
same_types(int op)
{
	return op != OP_Pow && op != OP_Cast && op != OP_CastLike && op != OP_BitCast;
}

static int
is_compare(int op)
{
	return op == OP_Equal || op == OP_Less || op == OP_LessOrEqual ||
	       op == OP_Greater || op == OP_GreaterOrEqual;
}

static char *
shape_str(const Value *v, char *buf, size_t n)
{
	size_t m = 0;

	m += snprintf(buf + m, n - m, "[");
	for (int i = 0; i < v->rank && m < n; i++)
		m += snprintf(buf + m, n - m, "%s%lld", i ? "," : "",
		              (long long)v->dim[i]);
	if (m < n)
		snprintf(buf + m, n - m, "]");
	return buf;
}

/* Check a dtype is one op computes with; name it if not.  The cast-only
 * types (float8, float4, the packed ints) are taken by the ops whose
 * types column in ops.def says TY_ALL, as in the ONNX type constraints. */
static int
check_dtype(Ctx *c, int op, int dt, const char *what)
{
	if (!dtype_supported(dt) ||
	    (dtype_cast_only(dt) && op_table[op].types != TY_ALL))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s dtype %s is not supported",
		                 what, dtname(dt));
	return BURN_OK;
}

/* The output dtype of node n, whose inputs are known to be valid. */
static int
out_dtype(Ctx *c, Graph *g, Node *n, int *out)
{
	int op = n->op;

	if (is_compare(op) || op == OP_And || op == OP_Or || op == OP_Xor ||
	    op == OP_Not || op == OP_IsNaN || op == OP_IsInf) {
		*out = DT_BOOL;
	} else if (op == OP_Cast || op == OP_BitCast) {
		const Attr *a = node_attr(n, "to");
		const char *nm = op == OP_Cast ? "Cast" : "BitCast";
		int from = input(g, n, 0)->dtype;
		if (!a || a->type != AT_INT)
			return burn_fail(c, BURN_ERR_INVALID, "%s needs an int attribute 'to'", nm);
		if (a->i <= 0 || a->i > 1000)
			return burn_fail(c, BURN_ERR_INVALID, "%s 'to' = %lld is not a dtype",
			                 nm, (long long)a->i);
		*out = (int)a->i;
		/* BitCast reinterprets the bits of the computed types: same width,
		 * and no storage type (f16 computes as f32, so its bits are not
		 * the expression's) */
		if (op == OP_BitCast && (dtype_bits(from) != dtype_bits(*out) ||
		    dtype_is_storage(from) || dtype_is_storage(*out) ||
		    dtype_is_packed(from) || dtype_is_packed(*out)))
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "BitCast from %s to %s: "
			                 "only types of one width that are not storage or "
			                 "packed types (f16, bf16, float8, int4...) are "
			                 "supported", dtname(from), dtname(*out));
	} else if (op == OP_CastLike) {
		*out = input(g, n, 1)->dtype;
	} else if (op == OP_Where) {
		*out = input(g, n, 1)->dtype;
	} else {
		*out = input(g, n, 0)->dtype;
	}
	return check_dtype(c, op, *out, op == OP_Cast || op == OP_CastLike ||
	                   op == OP_BitCast ?
	                   "target" : "output");
}

/* Cast of x to packed integer type `to` (int4, uint4, int2, uint2), in its
 * expression type: ONNX keeps the low bits (-9 -> 7 for int4; a float is
 * first truncated to i32), sign-extended for the signed types, so a value
 * cast within a fused kernel equals the one a store and load give. */
static KRef
wrap_packed(KB *kb, int to, KRef x)
{
	int64_t mask = ((int64_t)1 << dtype_bits(to)) - 1, sbit = (mask + 1) / 2;

	x = kb_bin(kb, KO_BAND, kb_cast(kb, DT_I32, x), kb_const_i(kb, DT_I32, mask));
	if (dtype_is_signed(to))
		x = kb_bin(kb, KO_SUB, kb_bin(kb, KO_BXOR, x, kb_const_i(kb, DT_I32, sbit)),
		           kb_const_i(kb, DT_I32, sbit));
	return kb_cast(kb, dtype_expr(to), x);
}

/* Cast's rounding to float8 type `to` (KCastRound): saturate (default 1)
 * and, for float8e8m0, round_mode (default "up"; checked by check_attrs). */
static int
f8_rounding(Node *n, int to)
{
	const char *m = attr_str(n, "round_mode", "up");
	int how = attr_int(n, "saturate", 1) ? 0 : KC_NOSAT;

	if (to == DT_F8E8M0 && strcmp(m, "down") == 0)
		how |= KC_DOWN;
	else if (to == DT_F8E8M0 && strcmp(m, "nearest") == 0)
		how |= KC_NEAREST;
	return how;
}

/* The string attributes elem_expr relies on, checked once here. */
static int
check_attrs(Ctx *c, Node *n)
{
	const char *s;

	if (n->op == OP_BitShift) {
		s = attr_str(n, "direction", "");
		if (strcmp(s, "LEFT") != 0 && strcmp(s, "RIGHT") != 0)
			return burn_fail(c, BURN_ERR_INVALID,
			                 "BitShift direction must be LEFT or RIGHT, got '%s'", s);
	}
	if (n->op == OP_Gelu) {
		s = attr_str(n, "approximate", "none");
		if (strcmp(s, "none") != 0 && strcmp(s, "tanh") != 0)
			return burn_fail(c, BURN_ERR_INVALID,
			                 "Gelu approximate must be none or tanh, got '%s'", s);
	}
	if (n->op == OP_Cast || n->op == OP_CastLike) {
		s = attr_str(n, "round_mode", "up");
		if (strcmp(s, "up") != 0 && strcmp(s, "down") != 0 &&
		    strcmp(s, "nearest") != 0)
			return burn_fail(c, BURN_ERR_INVALID,
			                 "Cast round_mode must be up, down or nearest, got '%s'", s);
	}
	if (n->op == OP_Celu && attr_float(n, "alpha", 1.0) == 0)
		return burn_fail(c, BURN_ERR_INVALID, "Celu alpha must not be 0");
	return BURN_OK;
}

/*
 * PRelu before opset 7 has no broadcasting rule: a slope of C values is
 * per channel, the channel being axis 1 (Caffe's PReLU, and what PyTorch
 * exported then).  Numpy broadcasting would pair it with the last axis, so
 * a constant slope [C] against X [N, C, d...] becomes a new constant of
 * shape [C, 1, ...] (the form opset 7 spells out), leaving one rule for the
 * rest of the pipeline.  A slope computed at run time would need a Reshape
 * node here: an error instead.
 */
static int
prelu_legacy_slope(Ctx *c, Graph *g, Node *n)
{
	const Value *x = input(g, n, 0), *s = input(g, n, 1);
	int64_t dim[BURN_MAX_RANK], C;
	int v, r;

	if (g->opset >= 7 || !s || s->rank != 1 || x->rank < 3 || s->dim[0] == 1 ||
	    s->dim[0] != x->dim[1] || s->dim[0] == x->dim[x->rank - 1])
		return BURN_OK;
	if (!s->data)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "per-channel slope '%s' before "
		                 "opset 7 must be a constant", s->name);
	C = s->dim[0];
	r = x->rank - 1;
	dim[0] = C;
	for (int k = 1; k < r; k++)
		dim[k] = 1;
	v = graph_add_value(g, arena_printf(&g->arena, "%s.per_channel", s->name));
	if (v < 0)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	/* graph_add_value may have moved the values: re-fetch the slope */
	s = input(g, n, 1);
	TRY(graph_set_const(c, g, v, s->dtype, r, dim, s->data));
	n->in[1] = v;
	return BURN_OK;
}

/*
 * infer_elem: dtype checks, then broadcasting.  Errors name the offending
 * dtypes and shapes, e.g. "dtype mismatch f32 vs i64".
 */
int
infer_elem(Ctx *c, Graph *g, Node *n)
{
	int op = n->op, rank = 0, dt0 = DT_UNDEF, odt = DT_UNDEF, first = n->op == OP_Where;
	int64_t dim[BURN_MAX_RANK];
	const Value *x = input(g, n, 0);
	char s1[128], s2[128];

	if (!x)
		return burn_fail(c, BURN_ERR_INVALID, "input 0 is required");
	if (n->nin > MAX_ELEM_IN)
		return burn_fail(c, BURN_ERR_LIMIT, "%d inputs (at most %d)", n->nin,
		                 MAX_ELEM_IN);

	/* dtypes */
	for (int k = 0; k < n->nin; k++) {
		const Value *v = input(g, n, k);
		int want = accepts(op, k);
		if (!v)
			continue;
		if (v->rank < 0 || !value_shape_known(v))
			return burn_fail(c, BURN_ERR_SHAPE, "input %d has an unknown shape", k);
		TRY(check_dtype(c, op, v->dtype, "input"));
		if (!(kind_of(v->dtype) & want))
			return burn_fail(c, BURN_ERR_SHAPE, "input %d must be %s type, got %s",
			                 k, kind_str(want), dtname(v->dtype));
		if (!same_types(op) || k < first)
			continue;
		if (dt0 == DT_UNDEF)
			dt0 = v->dtype;
		else if (v->dtype != dt0)
			return burn_fail(c, BURN_ERR_SHAPE, "dtype mismatch %s vs %s",
			                 dtname(dt0), dtname(v->dtype));
	}
	TRY(out_dtype(c, g, n, &odt));
	TRY(check_attrs(c, n));

	/* legacy (opset < 7) broadcasting with an axis other than numpy's */
	if (g->opset < 7 && attr_int(n, "broadcast", 0) && node_attr(n, "axis") &&
	    input(g, n, 1)) {
		const Value *b = input(g, n, 1);
		int64_t axis = attr_int(n, "axis", 0);
		if (axis < 0)
			axis += x->rank;
		if (axis != x->rank - b->rank)
			return burn_fail(c, BURN_ERR_UNSUPPORTED,
			                 "legacy broadcast with axis=%lld", (long long)axis);
	}

	/* shapes */
	if (op == OP_PRelu) {
		TRY(prelu_legacy_slope(c, g, n));
		x = input(g, n, 0);
	}
	if (op == OP_Clip || op == OP_PRelu) {
		for (int k = 1; k < n->nin; k++) {
			const Value *v = input(g, n, k);
			int r;
			if (!v)
				continue;
			if (op == OP_Clip && value_numel(v) != 1)
				return burn_fail(c, BURN_ERR_SHAPE, "Clip %s must be a scalar, got %s",
				                 k == 1 ? "min" : "max", shape_str(v, s1, sizeof s1));
			TRY(shape_broadcast(c, x->rank, x->dim, v->rank, v->dim, &r, dim));
			if (r != x->rank || memcmp(dim, x->dim, sizeof(int64_t) * r))
				return burn_fail(c, BURN_ERR_SHAPE, "%s %s does not broadcast to X %s",
				                 op == OP_PRelu ? "slope" : "bound",
				                 shape_str(v, s1, sizeof s1),
				                 shape_str(x, s2, sizeof s2));
		}
		set_out(NOUT(g, n, 0), odt, x->rank, x->dim);
		return BURN_OK;
	}
	rank = x->rank;
	memcpy(dim, x->dim, sizeof(int64_t) * rank);
	for (int k = 1; k < n->nin && op != OP_CastLike; k++) {
		const Value *v = input(g, n, k);
		int64_t tmp[BURN_MAX_RANK];
		if (!v)
			continue;
		TRY(shape_broadcast(c, rank, dim, v->rank, v->dim, &rank, tmp));
		memcpy(dim, tmp, sizeof(int64_t) * rank);
	}
	set_out(NOUT(g, n, 0), odt, rank, dim);
	return BURN_OK;
}

/* ---- scalar expressions ------------------------------------------------ */

/* The type an expression of dtype dt is computed in. */
static int
compute_type(int dt)
{
	return dtype_expr(dt);
}

/* The constant v at dtype dt. */
static KRef
num(KB *kb, int dt, double v)
{
	return dtype_is_float(dt) ? kb_const_f(kb, dt, v) : kb_const_i(kb, dt, (int64_t)v);
}

static KRef bin(KB *kb, int op, KRef a, KRef b) { return kb_bin(kb, op, a, b); }
static KRef un(KB *kb, int op, KRef a) { return kb_un(kb, op, a); }

/*
 * The float formulas below stay finite and accurate at the edges of f32,
 * checked against float64 NumPy over 0, +-1e-30 .. +-3.4e38, +-inf and NaN
 * (tests/unit/test_elem.c): no exp(x) that can overflow where the result
 * is finite, no 1 - exp or log(1 + tiny) that cancels where the result is
 * small.  Costly terms sit outside select arms, which the C renderer never
 * hoists (a term used in both arms would be computed twice), and selects
 * rather than KO_MIN/KO_MAX keep the loops vectorizable.
 */

/* 1 / (1 + exp(-x)).  Where exp(-x) overflows (x < -88.7 in f32) this
 * is 1 / inf = 0, for a true value below FLT_MIN: harmless, and the
 * stable form (x >= 0 ? 1 : e) / (1 + e), e = exp(-|x|), costs a quarter
 * more time for those denormals. */
static KRef
sigmoid(KB *kb, int dt, KRef x)
{
	return bin(kb, KO_DIV, num(kb, dt, 1),
	           bin(kb, KO_ADD, num(kb, dt, 1), un(kb, KO_EXP, un(kb, KO_NEG, x))));
}

/* log(1 + t) for t >= 0 without losing t to the rounding of 1 + t
 * (Goldberg): u = 1 + t; u == 1 ? t : log(u) * t / (u - 1). */
static KRef
log1p_expr(KB *kb, int dt, KRef t)
{
	KRef u = bin(kb, KO_ADD, num(kb, dt, 1), t);
	KRef q = bin(kb, KO_MUL, un(kb, KO_LOG, u),
	             bin(kb, KO_DIV, t, bin(kb, KO_SUB, u, num(kb, dt, 1))));

	return kb_select(kb, bin(kb, KO_EQ, u, num(kb, dt, 1)), t, q);
}

/* exp(x) - 1 without cancellation near 0: the Taylor polynomial for
 * |x| < 1/2 (to x^8/8! in f32, x^16/16! in f64: the next term is below
 * half an ulp), exp(x) - 1 beyond, where it loses nothing. */
static KRef
expm1_expr(KB *kb, int dt, KRef x)
{
	int deg = dt == DT_F64 ? 16 : 8;
	double f = 1;
	KRef p;

	for (int k = 2; k <= deg; k++)
		f *= k;
	p = num(kb, dt, 1 / f);
	for (int k = deg - 1; k >= 1; k--) {
		f /= k + 1;
		p = bin(kb, KO_ADD, num(kb, dt, 1 / f), bin(kb, KO_MUL, x, p));
	}
	p = bin(kb, KO_MUL, x, p);
	return kb_select(kb, bin(kb, KO_LT, un(kb, KO_ABS, x), num(kb, dt, 0.5)), p,
	                 bin(kb, KO_SUB, un(kb, KO_EXP, x), num(kb, dt, 1)));
}

/* log(1 + exp(x)) (the ONNX reference's formula, which overflows to inf
 * from x = 89 in f32) as max(x, 0) + log1p(exp(-|x|)): Softplus(96.5) is
 * 96.5 and Softplus(-20) is 2.06e-9, not 0.  NaN propagates through the
 * log1p term. */
static KRef
softplus(KB *kb, int dt, KRef x)
{
	KRef t = un(kb, KO_EXP, un(kb, KO_NEG, un(kb, KO_ABS, x)));
	KRef z = num(kb, dt, 0);

	return bin(kb, KO_ADD, kb_select(kb, bin(kb, KO_GT, x, z), x, z), log1p_expr(kb, dt, t));
}

/* Integer a op b for KO_DIV/KO_MOD, giving 0 where b is 0 (as numpy does)
 * instead of trapping: a op (b == 0 ? 1 : b), masked. */
static KRef
int_divmod(KB *kb, int op, int dt, KRef a, KRef b)
{
	KRef z = num(kb, dt, 0), isz = bin(kb, KO_EQ, b, z);
	KRef q = bin(kb, op, a, kb_select(kb, isz, num(kb, dt, 1), b));

	return kb_select(kb, isz, z, q);
}

/* Mod: fmod=1 is C's fmod/% (sign of the dividend); fmod=0 is Python's
 * (sign of the divisor): r = a rem b; if r != 0 and sign(r) != sign(b), r += b. */
static KRef
mod_expr(KB *kb, Node *n, int dt, KRef a, KRef b)
{
	int isf = dtype_is_float(dt);
	KRef r = isf ? bin(kb, KO_FMOD, a, b) : int_divmod(kb, KO_MOD, dt, a, b);
	KRef z, fix;

	if (attr_int(n, "fmod", 0) || !(isf || dtype_is_signed(dt)))
		return r;
	z = num(kb, dt, 0);
	fix = bin(kb, KO_AND, bin(kb, KO_NE, r, z),
	          bin(kb, KO_NE, bin(kb, KO_LT, r, z), bin(kb, KO_LT, b, z)));
	return kb_select(kb, fix, bin(kb, KO_ADD, r, b), r);
}

/* Pow: a same-typed exponent uses pow at that type (integers: by
 * squaring, wrapping like their other arithmetic and NumPy's power);
 * anything else is computed in f64 and cast back, as numpy promotes. */
static KRef
pow_expr(KB *kb, KRef a, KRef b)
{
	int da = kb_dtype(kb->k, a), db = kb_dtype(kb->k, b);

	if (da == db && (dtype_is_float(da) || dtype_is_int(da)))
		return bin(kb, KO_POW, a, b);
	return kb_cast(kb, da, bin(kb, KO_POW, kb_cast(kb, DT_F64, a),
	                           kb_cast(kb, DT_F64, b)));
}

/* Clip bound k (1 = min, 2 = max): the input, or before opset 11 the
 * attribute; 0 if absent. */
static KRef
clip_bound(KB *kb, Graph *g, Node *n, const KRef *in, int k, int dt)
{
	const Attr *a;

	if (g->opset >= 11)
		return k < n->nin ? in[k] : 0;
	a = node_attr(n, k == 1 ? "min" : "max");
	return a ? num(kb, dt, a->type == AT_INT ? (double)a->i : a->f) : 0;
}

/* IsInf with detect_positive / detect_negative. */
static KRef
isinf_expr(KB *kb, Node *n, int dt, KRef x)
{
	int pos = attr_int(n, "detect_positive", 1) != 0;
	int neg = attr_int(n, "detect_negative", 1) != 0;
	KRef inf = un(kb, KO_ISINF, x);

	if (pos && neg)
		return inf;
	if (!pos && !neg)
		return kb_const_i(kb, DT_BOOL, 0);
	return bin(kb, KO_AND, inf, bin(kb, pos ? KO_GT : KO_LT, x, num(kb, dt, 0)));
}

/* Gelu: approximate="none": 0.5 x (1 + erf(x / sqrt 2));
 * "tanh": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).  1 + erf is
 * clamped at 0: an erf approximation a hair beyond -1 would make it
 * negative and Gelu(-1e30) +6e22 (a select, which vectorizes, where
 * KO_MAX's NaN test would not). */
static KRef
gelu_expr(KB *kb, Node *n, int dt, KRef x)
{
	const char *ap = attr_str(n, "approximate", "none");
	KRef t, z = num(kb, dt, 0);

	if (strcmp(ap, "tanh") == 0) {
		KRef x3 = bin(kb, KO_MUL, bin(kb, KO_MUL, x, x), x);
		t = bin(kb, KO_ADD, x, bin(kb, KO_MUL, num(kb, dt, 0.044715), x3));
		t = un(kb, KO_TANH, bin(kb, KO_MUL, num(kb, dt, sqrt(2 / M_PI)), t));
		t = bin(kb, KO_ADD, num(kb, dt, 1), t);
	} else {
		t = un(kb, KO_ERF, bin(kb, KO_MUL, x, num(kb, dt, M_SQRT1_2)));
		t = bin(kb, KO_ADD, num(kb, dt, 1), t);
		t = kb_select(kb, bin(kb, KO_LT, t, z), z, t);
	}
	return bin(kb, KO_MUL, bin(kb, KO_MUL, num(kb, dt, 0.5), x), t);
}

/* The ops that are one KOp of one operand. */
static int
unary_kop(int op)
{
	switch (op) {
	case OP_Neg: return KO_NEG;
	case OP_Exp: return KO_EXP;
	case OP_Log: return KO_LOG;
	case OP_Sqrt: return KO_SQRT;
	case OP_Floor: return KO_FLOOR;
	case OP_Ceil: return KO_CEIL;
	case OP_Round: return KO_ROUND;
	case OP_Sin: return KO_SIN;
	case OP_Cos: return KO_COS;
	case OP_Tan: return KO_TAN;
	case OP_Asin: return KO_ASIN;
	case OP_Acos: return KO_ACOS;
	case OP_Atan: return KO_ATAN;
	case OP_Sinh: return KO_SINH;
	case OP_Cosh: return KO_COSH;
	case OP_Tanh: return KO_TANH;
	case OP_Asinh: return KO_ASINH;
	case OP_Acosh: return KO_ACOSH;
	case OP_Atanh: return KO_ATANH;
	case OP_Erf: return KO_ERF;
	case OP_IsNaN: return KO_ISNAN;
	case OP_Not: return KO_NOT;
	case OP_BitwiseNot: return KO_BITNOT;
	default: return KO_NONE;
	}
}

/* The ops that are one KOp of two operands (or a left fold of it). */
static int
binary_kop(int op)
{
	switch (op) {
	case OP_Add: case OP_Sum: case OP_Mean: return KO_ADD;
	case OP_Sub: return KO_SUB;
	case OP_Mul: return KO_MUL;
	case OP_Min: return KO_MIN;
	case OP_Max: return KO_MAX;
	case OP_And: return KO_AND;
	case OP_Or: return KO_OR;
	case OP_Xor: return KO_XOR;
	case OP_BitwiseAnd: return KO_BAND;
	case OP_BitwiseOr: return KO_BOR;
	case OP_BitwiseXor: return KO_BXOR;
	case OP_Equal: return KO_EQ;
	case OP_Less: return KO_LT;
	case OP_LessOrEqual: return KO_LE;
	case OP_Greater: return KO_GT;
	case OP_GreaterOrEqual: return KO_GE;
	default: return KO_NONE;
	}
}

/* The op itself at compute type dt (that of operand 0), or 0 if unknown. */
static KRef
op_expr(KB *kb, Graph *g, Node *n, const KRef *in, int odt)
{
	int op = n->op, dt = kb_dtype(kb->k, in[0]), kop;
	KRef x = in[0], y = n->nin > 1 ? in[1] : 0, e;

#define C(v) num(kb, dt, (v))
#define A(name, d) attr_float(n, name, d)
#define Z C(0)
	if ((kop = unary_kop(op)))
		return un(kb, kop, x);
	if ((kop = binary_kop(op))) {
		if (n->nin == 1)
			return x;
		e = x;
		for (int k = 1; k < n->nin; k++)
			e = bin(kb, kop, e, in[k]);
		if (op == OP_Mean)
			e = bin(kb, KO_DIV, e, C(n->nin));
		return e;
	}
	switch (op) {
	case OP_Abs:
		return dtype_is_signed(dt) || dtype_is_float(dt) ? un(kb, KO_ABS, x) : x;
	case OP_Reciprocal:
		return bin(kb, KO_DIV, C(1), x);
	case OP_Sign:
		e = dtype_is_float(dt) ? x : Z;   /* keeps NaN and -0 like np.sign */
		if (dtype_is_signed(dt) || dtype_is_float(dt))
			e = kb_select(kb, bin(kb, KO_LT, x, Z), C(-1), e);
		return kb_select(kb, bin(kb, KO_GT, x, Z), C(1), e);
	case OP_Sigmoid:
		return sigmoid(kb, dt, x);
	case OP_Relu:        /* select, not max, so NaN propagates */
		return kb_select(kb, bin(kb, KO_LT, x, Z), Z, x);
	case OP_LeakyRelu:
		return kb_select(kb, bin(kb, KO_LT, x, Z),
		                 bin(kb, KO_MUL, C(A("alpha", 0.01)), x), x);
	case OP_PRelu:
		return kb_select(kb, bin(kb, KO_LT, x, Z), bin(kb, KO_MUL, y, x), x);
	case OP_Elu:         /* x < 0 ? alpha (exp(x) - 1) : x */
		e = expm1_expr(kb, dt, x);
		return kb_select(kb, bin(kb, KO_LT, x, Z),
		                 bin(kb, KO_MUL, C(A("alpha", 1.0)), e), x);
	case OP_Selu: {      /* gamma (x <= 0 ? alpha (exp(x) - 1) : x) */
		double al = A("alpha", 1.67326319217681884765625);
		double ga = A("gamma", 1.05070102214813232421875);
		e = bin(kb, KO_MUL, C(al), expm1_expr(kb, dt, x));
		return bin(kb, KO_MUL, C(ga),
		           kb_select(kb, bin(kb, KO_LE, x, Z), e, x));
	}
	case OP_Celu: {      /* max(0,x) + min(0, alpha (exp(x/alpha) - 1)) */
		double al = A("alpha", 1.0);
		e = expm1_expr(kb, dt, bin(kb, KO_DIV, x, C(al)));
		e = bin(kb, KO_MIN, Z, bin(kb, KO_MUL, C(al), e));
		return bin(kb, KO_ADD, bin(kb, KO_MAX, x, Z), e);
	}
	case OP_HardSigmoid:
		e = bin(kb, KO_ADD, bin(kb, KO_MUL, C(A("alpha", 0.2)), x),
		        C(A("beta", 0.5)));
		return bin(kb, KO_MAX, Z, bin(kb, KO_MIN, C(1), e));
	case OP_HardSwish:   /* x h, h = max(0, min(1, x/6 + 1/2)); 0 where h is
	                        (-inf * 0 would be NaN) */
		e = bin(kb, KO_ADD, bin(kb, KO_MUL, C(1.0 / 6), x), C(0.5));
		e = bin(kb, KO_MAX, Z, bin(kb, KO_MIN, C(1), e));
		return kb_select(kb, bin(kb, KO_EQ, e, Z), Z, bin(kb, KO_MUL, x, e));
	case OP_Softplus:
		return softplus(kb, dt, x);
	case OP_Softsign:    /* x / (1 + |x|); the limit +-1 at +-inf, not inf/inf */
		e = bin(kb, KO_DIV, x, bin(kb, KO_ADD, C(1), un(kb, KO_ABS, x)));
		return kb_select(kb, un(kb, KO_ISINF, x),
		                 kb_select(kb, bin(kb, KO_GT, x, Z), C(1), C(-1)), e);
	case OP_Mish:
		return bin(kb, KO_MUL, x, un(kb, KO_TANH, softplus(kb, dt, x)));
	case OP_Swish:
		return bin(kb, KO_MUL, x,
		           sigmoid(kb, dt, bin(kb, KO_MUL, C(A("alpha", 1.0)), x)));
	case OP_Gelu:
		return gelu_expr(kb, n, dt, x);
	case OP_ThresholdedRelu:
		return kb_select(kb, bin(kb, KO_GT, x, C(A("alpha", 1.0))), x, Z);
	case OP_Shrink: {
		double la = A("lambd", 0.5), bi = A("bias", 0.0);
		e = kb_select(kb, bin(kb, KO_GT, x, C(la)), bin(kb, KO_SUB, x, C(bi)), Z);
		return kb_select(kb, bin(kb, KO_LT, x, C(-la)), bin(kb, KO_ADD, x, C(bi)), e);
	}
	case OP_IsInf:
		return isinf_expr(kb, n, dt, x);
	case OP_BitCast:   /* same width (out_dtype): through the u32/u64 bits */
		if (dtype_is_float(dt))
			x = un(kb, KO_BITS, x);
		if (dtype_is_float(odt))
			return un(kb, KO_FROMBITS, kb_cast(kb, odt == DT_F64 ? DT_U64 : DT_U32, x));
		return kb_dtype(kb->k, x) == odt ? x : kb_cast(kb, odt, x);
	case OP_Cast: case OP_CastLike: {
		int to = NOUT(g, n, 0)->dtype;
		if (dtype_is_storage(to) && dtype_cast_only(to))   /* float8, float4 */
			return kb_cast_f8(kb, to, x, dtype_is_f8(to) ? f8_rounding(n, to) : 0);
		if (dtype_is_packed(to))   /* int4...: the low bits, as ONNX wraps */
			return wrap_packed(kb, to, x);
		return kb_dtype(kb->k, x) == odt ? x : kb_cast(kb, odt, x);
	}
	case OP_Div:
		if (dtype_is_float(dt))
			return bin(kb, KO_DIV, x, y);
		return int_divmod(kb, KO_DIV, dt, x, y);
	case OP_Pow:
		return pow_expr(kb, x, y);
	case OP_Mod:
		return mod_expr(kb, n, dt, x, y);
	case OP_BitShift:
		return bin(kb, strcmp(attr_str(n, "direction", ""), "LEFT") == 0 ?
		           KO_SHL : KO_SHR, x, y);
	case OP_Where:
		return kb_select(kb, x, y, in[2]);
	case OP_Clip: {      /* select chains keep NaN, like np.clip */
		KRef lo = clip_bound(kb, g, n, in, 1, dt);
		KRef hi = clip_bound(kb, g, n, in, 2, dt);
		e = x;
		if (lo)
			e = kb_select(kb, bin(kb, KO_LT, e, lo), lo, e);
		if (hi)
			e = kb_select(kb, bin(kb, KO_GT, e, hi), hi, e);
		return e;
	}
	}
#undef C
#undef A
#undef Z
	return 0;
}

/*
 * elem_expr: the op applied to loaded operands in[] (f16/bf16 operands are
 * already f32).  The result is cast to out_dtype's compute type if the op's
 * natural type differs.  Returns 0 for an op that is not elementwise.
 */
KRef
elem_expr(KB *kb, Graph *g, Node *n, const KRef *in, int out_dtype)
{
	int odt = compute_type(out_dtype);
	KRef e;

	if (n->nin < 1 || !in[0] || !(e = op_expr(kb, g, n, in, odt)))
		return 0;
	if (kb_dtype(kb->k, e) != odt)
		e = kb_cast(kb, odt, e);
	return e;
}

/* ---- lowering -------------------------------------------------------- */

/*
 * lower_elem: one kernel.  When every input has the output's element count
 * or a single element, the kernel is one flat loop over the elements (the
 * form the C compiler vectorises); otherwise a loop nest over the output
 * shape with broadcast indices per input.
 */
/* Input k of n if the kernel reads it: CastLike's second input only
 * lends its dtype. */
static Value *
operand(Graph *g, Node *n, int k)
{
	return n->op == OP_CastLike && k == 1 ? NULL : input(g, n, k);
}

int
lower_elem(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	Value *out = NOUT(g, n, 0);
	int64_t numel = value_numel(out), stride[BURN_MAX_RANK];
	int buf[MAX_ELEM_IN], vars[BURN_MAX_RANK], ob, flat = 1;
	KRef in[MAX_ELEM_IN] = {0}, idx, e;
	KB kb;

	if (n->nin > MAX_ELEM_IN)
		return burn_fail(lw->ctx, BURN_ERR_LIMIT, "%d inputs (at most %d)",
		                 n->nin, MAX_ELEM_IN);
	if (numel < 0)
		return burn_fail(lw->ctx, BURN_ERR_SHAPE, "output shape is not known");
	for (int k = 0; k < n->nin; k++) {
		const Value *v = operand(g, n, k);
		int64_t m = v ? value_numel(v) : 1;
		if (m != 1 && m != numel)
			flat = 0;
	}

	lower_begin(lw, &kb, n);
	for (int k = 0; k < n->nin; k++)
		buf[k] = operand(g, n, k) ? lower_in(lw, &kb, n, k) : -1;
	ob = lower_out(lw, &kb, n, 0);
	if (flat) {
		int i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, numel), KF_PARALLEL);
		idx = kb_get(&kb, i);
		for (int k = 0; k < n->nin; k++) {
			const Value *v = operand(g, n, k);
			in[k] = v ? kb_load(&kb, buf[k], value_numel(v) == 1 && numel != 1 ?
			                    kb_idx(&kb, 0) : idx) : 0;
		}
	} else {
		loops_open(&kb, out->rank, out->dim, vars);
		for (int k = 0; k < n->nin; k++) {
			const Value *v = operand(g, n, k);
			in[k] = v ? kb_load(&kb, buf[k], index_bcast(&kb, v, out->rank, vars))
			          : 0;
		}
		shape_strides(out->rank, out->dim, stride);
		idx = index_linear(&kb, out->rank, vars, stride);
	}
	if (!(e = elem_expr(&kb, g, n, in, out->dtype))) {
		lower_end(lw, &kb);
		return burn_fail(lw->ctx, BURN_ERR_INTERNAL, "%s is not elementwise",
		                 op_table[n->op].name);
	}
	kb_store(&kb, ob, idx, e);
	if (flat)
		kb_end(&kb);
	else
		loops_close(&kb, out->rank);
	lower_end(lw, &kb);
	return BURN_OK;
}

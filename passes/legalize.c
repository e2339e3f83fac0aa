/*
 * legalize.c - expand the kernel IR ops a target lacks (see legalize.h).
 *
 * The rewrite walks the original node pool in index order: operands come
 * before their users, so map[e] (the legal node standing for e) is known
 * for every operand when e is visited.  A node whose operands are unchanged
 * and whose op is legal keeps its index; others are rebuilt with the
 * builder (which folds constants).  Statements are then redirected through
 * map.  Every expansion is built from legal ops only and evaluates nothing
 * that could fault whichever select arm is taken (selects may be eager).
 */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "legalize.h"

typedef struct L {
	KB kb;
	const KCaps *caps;
} L;

static KRef
ci(L *l, int dt, int64_t v)
{
	return kb_const_i(&l->kb, dt, v);
}

static KRef
cf(L *l, int dt, double v)
{
	return kb_const_f(&l->kb, dt, v);
}

static KRef
bin(L *l, int op, KRef a, KRef b)
{
	return kb_bin(&l->kb, op, a, b);
}

static KRef
sel(L *l, KRef c, KRef a, KRef b)
{
	return kb_select(&l->kb, c, a, b);
}

static int
dt_of(L *l, KRef e)
{
	return kb_dtype(l->kb.k, e);
}

static int
width(int dt)
{
	return dt == DT_BOOL ? 8 : 8 * dtype_size(dt);
}

/* Smallest and largest value of integer dtype dt. */
static int64_t
imin(int dt)
{
	return dtype_is_signed(dt) ? (int64_t)((uint64_t)-1 << (width(dt) - 1)) : 0;
}

static int64_t
imax(int dt)
{
	if (dt == DT_BOOL)
		return 1;
	if (dtype_is_signed(dt))
		return (int64_t)(((uint64_t)1 << (width(dt) - 1)) - 1);
	return width(dt) == 64 ? -1 : (int64_t)(((uint64_t)1 << width(dt)) - 1);
}

/* a / b and a % b on integers: 0 where b is 0; MIN / -1 wraps to MIN
 * (it is -MIN) and MIN % -1 is 0, as the two's complement result of the
 * exact quotient.  quot/rem then see a divisor that is neither 0 nor -1. */
static KRef
divmod(L *l, int op, KRef a, KRef b)
{
	int dt = dt_of(l, a), sgn = dtype_is_signed(dt);
	int raw = op == KO_DIV ? KO_QUOT : KO_REM;
	KRef z = ci(l, dt, 0), m1, bad, q;
	int64_t v;

	if (kb_is_const_i(l->kb.k, b, &v) && v != 0 && (!sgn || v != -1))
		return bin(l, raw, a, b);
	bad = bin(l, KO_EQ, b, z);
	if (sgn) {
		m1 = ci(l, dt, -1);
		bad = bin(l, KO_OR, bad, bin(l, KO_EQ, b, m1));
	}
	q = bin(l, raw, a, sel(l, bad, ci(l, dt, 1), b));
	if (sgn && op == KO_DIV)   /* b == -1: -a, wrapping */
		return sel(l, bin(l, KO_EQ, b, z), z,
		           sel(l, bin(l, KO_EQ, b, ci(l, dt, -1)),
		               kb_un(&l->kb, KO_NEG, a), q));
	return sel(l, bad, z, q);
}

/* Shifts: a count (as unsigned) of the width or more gives 0, or -1 for an
 * arithmetic right shift of a negative value; shlm/shrm shift by the count
 * mod the width. */
static KRef
shift(L *l, int op, KRef a, KRef b)
{
	int dt = dt_of(l, a), w = width(dt), sgn = dtype_is_signed(dt);
	KRef z = ci(l, dt, 0), out, big, r;
	int64_t v;

	r = bin(l, op == KO_SHL ? KO_SHLM : KO_SHRM, a, b);
	if (kb_is_const_i(l->kb.k, b, &v) && v >= 0 && v < w)
		return r;
	big = bin(l, KO_GE, b, ci(l, dt, w));
	if (sgn)
		big = bin(l, KO_OR, big, bin(l, KO_LT, b, z));
	out = op == KO_SHR && sgn ? sel(l, bin(l, KO_LT, a, z), ci(l, dt, -1), z)
	                          : z;
	return sel(l, big, out, r);
}

/* Integer a^b by squaring over every bit of b, wrapping; a negative
 * exponent gives 1 for a == 1, +-1 for a == -1, else 0 (the truncated
 * reciprocal, as NumPy's float result cast back would). */
static KRef
ipow(L *l, KRef a, KRef b)
{
	int dt = dt_of(l, a), w = width(dt);
	KRef one = ci(l, dt, 1), z = ci(l, dt, 0), r = one, sq = a, neg;

	for (int i = 0; i < w; i++) {
		/* r *= bit ? sq : 1, as r *= 1 + bit * (sq - 1): no select, so
		 * every power is computed unconditionally and named once */
		KRef bit = bin(l, KO_BAND, bin(l, KO_SHRM, b, ci(l, dt, i)), one);
		r = bin(l, KO_MUL, r, bin(l, KO_ADD, one,
		                           bin(l, KO_MUL, bit, bin(l, KO_SUB, sq, one))));
		if (i + 1 < w)
			sq = bin(l, KO_MUL, sq, sq);
	}
	if (!dtype_is_signed(dt))
		return r;
	neg = sel(l, bin(l, KO_EQ, a, one), one,
	          sel(l, bin(l, KO_EQ, a, ci(l, dt, -1)),
	              sel(l, bin(l, KO_NE, bin(l, KO_BAND, b, one), z),
	                  ci(l, dt, -1), one), z));
	return sel(l, bin(l, KO_LT, b, z), neg, r);
}

/* min/max: integers by comparison; floats propagate NaN (a + b is NaN when
 * either is; fmin/fmax would drop it). */
static KRef
minmax(L *l, int op, KRef a, KRef b)
{
	int dt = dt_of(l, a);
	KRef m = sel(l, bin(l, op == KO_MIN ? KO_LT : KO_GT, a, b), a, b);

	if (!dtype_is_float(dt))
		return m;
	return sel(l, bin(l, KO_OR, bin(l, KO_NE, a, a), bin(l, KO_NE, b, b)),
	           bin(l, KO_ADD, a, b), m);
}

/* erf for f32: x*P(x^2)/Q(x^2) on [-4, 4] (erf is 1.0f beyond), a rational
 * fit made for burncc; |error| < 4e-7.  Branch-free (the clamp is two
 * selects), so loops computing it vectorise.  NaN passes the clamp. */
static KRef
erf32(L *l, KRef x)
{
	static const double p[] = { 1.91568059e-08, -1.96486894e-06,
		1.51185086e-04, 4.13306197e-03, 5.19497134e-02, 2.10339695e-01,
		1.12837887e+00 };
	static const double q[] = { 1.05743285e-03, 1.52362129e-02,
		1.19301476e-01, 5.19738078e-01, 1.0 };
	KRef s, P, Q;
	size_t i;

	x = sel(l, bin(l, KO_GT, x, cf(l, DT_F32, 4)), cf(l, DT_F32, 4),
	        sel(l, bin(l, KO_LT, x, cf(l, DT_F32, -4)), cf(l, DT_F32, -4), x));
	s = bin(l, KO_MUL, x, x);
	P = cf(l, DT_F32, p[0]);
	for (i = 1; i < sizeof p / sizeof p[0]; i++)
		P = bin(l, KO_ADD, bin(l, KO_MUL, P, s), cf(l, DT_F32, p[i]));
	Q = cf(l, DT_F32, q[0]);
	for (i = 1; i < sizeof q / sizeof q[0]; i++)
		Q = bin(l, KO_ADD, bin(l, KO_MUL, Q, s), cf(l, DT_F32, q[i]));
	return bin(l, KO_DIV, bin(l, KO_MUL, x, P), Q);
}

/* float -> integer dtype `to`: truncate toward zero where the result fits;
 * beyond the range saturate to the type's minimum or maximum; NaN gives 0.
 * (ONNX leaves out-of-range conversions undefined; NumPy's result depends
 * on the machine; docs/ARCHITECTURE.md.)  The raw conversion is evaluated
 * only in range by C's ?:, and its value is unused outside it anyway. */
static KRef
f2i(L *l, int to, KRef x)
{
	int dt = dt_of(l, x), w = width(to);
	double lo = dtype_is_signed(to) ? -ldexp(1, w - 1) : -1,
	       hi = ldexp(1, dtype_is_signed(to) ? w - 1 : w);
	KRef raw, in, out, z = cf(l, dt, 0);

	raw = kb_cast(&l->kb, to, x);
	l->kb.k->node[raw].op = KC_RAW;
	in = bin(l, KO_AND, bin(l, dtype_is_signed(to) ? KO_GE : KO_GT, x, cf(l, dt, lo)),
	         bin(l, KO_LT, x, cf(l, dt, hi)));
	out = sel(l, bin(l, KO_NE, x, x), ci(l, to, 0),
	          sel(l, bin(l, KO_LT, x, z), ci(l, to, imin(to)), ci(l, to, imax(to))));
	return sel(l, in, raw, out);
}

/* The legal form of unary/binary op on legal operands a, b. */
static KRef
expand(L *l, int op, KRef a, KRef b)
{
	int dt = dt_of(l, a);

	switch (op) {
	case KO_ABS:
		if (!dtype_is_signed(dt))
			return a;
		return sel(l, bin(l, KO_LT, a, ci(l, dt, 0)), kb_un(&l->kb, KO_NEG, a), a);
	case KO_DIV: case KO_MOD:
		return divmod(l, op, a, b);
	case KO_SHL: case KO_SHR:
		return shift(l, op, a, b);
	case KO_POW:
		return ipow(l, a, b);
	case KO_MIN: case KO_MAX:
		return minmax(l, op, a, b);
	case KO_ERF:
		return erf32(l, a);
	case KO_ISNAN:
		return bin(l, KO_NE, a, a);
	case KO_ISINF:
		return bin(l, KO_EQ, kb_un(&l->kb, KO_ABS, a), cf(l, dt, INFINITY));
	}
	return 0;
}

/* The legal node for expression n (a copy, operands already mapped). */
static KRef
rebuild(L *l, KNode n)
{
	KB *kb = &l->kb;
	int da;
	KRef r;

	switch (n.kind) {
	case KE_LOAD:
		r = n.b ? kb_load_guard(kb, n.buf, n.a, n.b, n.c) : kb_load(kb, n.buf, n.a);
		if (kb->k->node[r].kind == KE_LOAD)
			kb->k->node[r].lanes = n.lanes;
		return r;
	case KE_UN:
	case KE_BIN:
		da = dt_of(l, n.a);
		if (kop_needs_legal(n.op, da, l->caps)) {
			r = expand(l, n.op, n.a, n.b);
			if (r)
				return r;
		}
		r = n.kind == KE_UN ? kb_un(kb, n.op, n.a) : kb_bin(kb, n.op, n.a, n.b);
		if (kb->k->node[r].kind == n.kind)
			kb->k->node[r].lanes = n.lanes;
		return r;
	case KE_SELECT:
		return kb_select(kb, n.a, n.b, n.c);
	case KE_CAST:
		da = dt_of(l, n.a);
		if (n.ival)
			return kb_cast_f8(kb, (int)n.ival, n.a, n.op);
		if (dtype_is_float(da) && dtype_is_int(n.dtype) && n.op != KC_RAW &&
		    !(l->caps && l->caps->sat_f2i))
			return f2i(l, n.dtype, n.a);
		r = kb_cast(kb, n.dtype, n.a);
		if (kb->k->node[r].kind == KE_CAST && r != n.a)
			kb->k->node[r].op = n.op;
		return r;
	}
	return 0;
}

/* Does node n (operands mapped) need rebuilding? */
static int
needs(L *l, const KNode *n, const KRef *map, KRef e)
{
	const KKernel *k = l->kb.k;
	int da;

	(void)e;
	if ((n->a && map[n->a] != n->a) || (n->b && map[n->b] != n->b) ||
	    (n->c && map[n->c] != n->c))
		return 1;
	switch (n->kind) {
	case KE_UN: case KE_BIN:
		return kop_needs_legal(n->op, k->node[n->a].dtype, l->caps);
	case KE_CAST:
		da = k->node[n->a].dtype;
		return !n->ival && dtype_is_float(da) && dtype_is_int(n->dtype) &&
		       n->op != KC_RAW && !(l->caps && l->caps->sat_f2i);
	}
	return 0;
}

static void
redirect(KKernel *k, KRef s, const KRef *map, int depth)
{
	for (; s > 0 && depth < 256; s = k->node[s].next) {
		KNode *n = &k->node[s];
		if (n->a)
			n->a = map[n->a];
		if ((n->kind == KS_FOR || n->kind == KS_STORE || kgpu_name(n->kind)) &&
		    n->b)
			n->b = map[n->b];
		if (kgpu_name(n->kind) && n->c)   /* GPU statements: a, b, c */
			n->c = map[n->c];
		if (n->kind == KS_FOR || n->kind == KS_IF) {
			redirect(k, n->body, map, depth + 1);
			redirect(k, n->orelse, map, depth + 1);
		}
	}
}

int
kir_legalize(Ctx *c, KProgram *p, KKernel *k, const KCaps *caps)
{
	L l;
	KRef *map;
	int n0 = k->nnode;

	memset(&l, 0, sizeof l);
	l.kb.prog = p;
	l.kb.k = k;
	l.caps = caps;
	map = calloc((size_t)n0 + 1, sizeof *map);
	if (!map)
		return burn_fail(c, BURN_ERR_NOMEM, "legalize %s: out of memory", k->name);
	for (KRef e = 1; e < n0; e++) {
		KNode n = k->node[e];
		map[e] = e;
		if (n.kind < KE_CONST || n.kind > KE_SPECIAL)
			continue;   /* a statement */
		if (!needs(&l, &n, map, e))
			continue;
		if (n.a) n.a = map[n.a];
		if (n.b) n.b = map[n.b];
		if (n.c) n.c = map[n.c];
		map[e] = rebuild(&l, n);
		if (!map[e]) {
			free(map);
			return burn_fail(c, BURN_ERR_INTERNAL, "legalize %s: node %d",
			                 k->name, e);
		}
	}
	redirect(k, k->body, map, 0);
	for (int i = 0; i < k->nbuf; i++)   /* run-time extents (kir.h) */
		if (k->buf[i].ext > 0 && k->buf[i].ext < n0)
			k->buf[i].ext = map[k->buf[i].ext];
	free(map);
	return BURN_OK;
}

int
pass_legalize(Ctx *c, KProgram *p, const KCaps *caps)
{
	for (int i = 0; i < p->nkernel; i++)
		TRY(kir_legalize(c, p, p->kernel[i], caps));
	return BURN_OK;
}

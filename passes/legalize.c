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
#include <stdint.h>
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

	/* bool as the integers 0 and 1: a / 1 = a, a / 0 = 0, a % b = 0
	 * (quot and rem take no bool) */
	if (dt == DT_BOOL)
		return op == KO_DIV ? bin(l, KO_AND, a, b) : z;
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
 * selects), so loops computing it vectorise.  NaN passes the clamp.  The
 * Horner steps are fused multiply-adds (KE_FMA, one rounding on every
 * target): ten operations fewer per element than mul + add, which is
 * what bounds a vectorised loop of it (gelu on one core: 60% of memcpy's
 * throughput with mul + add, near 90% with fma). */
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
		P = kb_fma(&l->kb, P, s, cf(l, DT_F32, p[i]));
	Q = cf(l, DT_F32, q[0]);
	for (i = 1; i < sizeof q / sizeof q[0]; i++)
		Q = kb_fma(&l->kb, Q, s, cf(l, DT_F32, q[i]));
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

/* ---- storage types: f16, bf16, float8 <-> f32, on their bits ------------ *
 *
 * The one definition of these conversions (docs/ARCHITECTURE.md, "Storage-
 * only types"): a load of a storage buffer becomes a load of its bit
 * pattern (u16 or u8) decoded here into an f32, a store encodes the f32
 * into a pattern, and a rounding cast is both.  Everything is u32
 * arithmetic, comparisons and selects, without branches (loops of them
 * vectorise), and every select arm is safe to compute.
 *
 * A format is a sign bit, then exponent bits with bias b and m mantissa
 * bits.  nan says where NaN lives: SN_IEEE (exponent all ones; also the
 * infinities), SN_FN (all bits but the sign set; no infinities), SN_FNUZ
 * (the pattern 0x80 only; no infinities and no -0), SN_NONE (float4e2m1:
 * no NaN, no infinities; everything finite saturates, and ONNX's Cast
 * maps NaN to 0x8, the code of -0).  maxc is the largest finite code, ovf
 * the code beyond it (inf or NaN; float4e2m1: maxc again), nanc the code
 * a NaN becomes.
 */
enum { SN_IEEE, SN_FN, SN_FNUZ, SN_NONE };

typedef struct SFmt {
	int w, m, b, nan;
	uint32_t maxc, ovf, nanc;
} SFmt;

static int
sfmt(int dt, SFmt *f)
{
	static const struct { int dt; SFmt f; } tab[] = {
		{ DT_F16,         { 16, 10, 15, SN_IEEE, 0x7bff, 0x7c00, 0x7e00 } },
		{ DT_F8E4M3FN,    { 8, 3, 7, SN_FN, 0x7e, 0x7f, 0x7f } },
		{ DT_F8E4M3FNUZ,  { 8, 3, 8, SN_FNUZ, 0x7f, 0x80, 0x80 } },
		{ DT_F8E5M2,      { 8, 2, 15, SN_IEEE, 0x7b, 0x7c, 0x7f } },
		{ DT_F8E5M2FNUZ,  { 8, 2, 16, SN_FNUZ, 0x7f, 0x80, 0x80 } },
		{ DT_F4E2M1,      { 4, 1, 1, SN_NONE, 0x7, 0x7, 0x8 } },
	};
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (tab[i].dt == dt) {
			*f = tab[i].f;
			return 1;
		}
	return 0;
}

/* Does the target convert dt itself? */
static int
native(L *l, int dt)
{
	return l->caps && ((dt == DT_F16 && l->caps->f16) ||
	                   (dt == DT_BF16 && l->caps->bf16));
}

static KRef
u32c(L *l, uint32_t v)
{
	return ci(l, DT_U32, (int64_t)v);
}

/* u32 helpers: a op constant */
static KRef
uop(L *l, int op, KRef a, uint32_t v)
{
	return bin(l, op, a, u32c(l, v));
}

static KRef
frombits(L *l, KRef x)
{
	return kb_un(&l->kb, KO_FROMBITS, x);
}

/* The f32 value of code c (u32) of storage dtype dt. */
static KRef
decode(L *l, int dt, KRef c)
{
	SFmt f;
	KRef a, e, fr, s, x, norm, sub, v, nan;
	uint32_t sbit, emax;

	if (dt == DT_BF16)   /* the top half of an f32 */
		return frombits(l, uop(l, KO_SHLM, c, 16));
	if (dt == DT_F8E8M0)   /* 2^(c - 127); 0: 2^-127 (an f32 subnormal) */
		return frombits(l, sel(l, uop(l, KO_EQ, c, 0xff), u32c(l, 0x7fc00000),
		                       sel(l, uop(l, KO_EQ, c, 0), u32c(l, 0x400000),
		                           uop(l, KO_SHLM, c, 23))));
	if (!sfmt(dt, &f))
		return 0;
	sbit = 1u << (f.w - 1);
	emax = (sbit - 1) >> f.m;
	a = uop(l, KO_BAND, c, sbit - 1);
	e = uop(l, KO_SHRM, a, (uint32_t)f.m);
	fr = uop(l, KO_BAND, c, (1u << f.m) - 1);
	s = uop(l, KO_SHLM, uop(l, KO_BAND, c, sbit), (uint32_t)(32 - f.w));
	/* normal: rebias the exponent; IEEE's all-ones exponent stays all
	 * ones (inf, and NaN keeping its payload) */
	x = uop(l, KO_SHLM, a, (uint32_t)(23 - f.m));
	x = bin(l, KO_ADD, x, f.nan == SN_IEEE
	        ? sel(l, uop(l, KO_EQ, e, emax), u32c(l, (255 - emax) << 23),
	              u32c(l, (uint32_t)(127 - f.b) << 23))
	        : u32c(l, (uint32_t)(127 - f.b) << 23));
	norm = frombits(l, bin(l, KO_BOR, x, s));
	/* subnormal: fr 2^(1 - b - m), exact */
	sub = bin(l, KO_MUL, kb_cast(&l->kb, DT_F32, fr),
	          cf(l, DT_F32, ldexp(1, 1 - f.b - f.m)));
	sub = sel(l, uop(l, KO_NE, s, 0), kb_un(&l->kb, KO_NEG, sub), sub);
	v = sel(l, uop(l, KO_EQ, e, 0), sub, norm);
	nan = frombits(l, uop(l, KO_BOR, s, 0x7fc00000));
	switch (f.nan) {
	case SN_IEEE:   /* float8e5m2: NaN is the quiet NaN */
		if (f.w == 8)
			v = sel(l, uop(l, KO_GT, a, emax << f.m), nan, v);
		break;
	case SN_FN:
		v = sel(l, uop(l, KO_EQ, a, sbit - 1), nan, v);
		break;
	case SN_FNUZ:
		v = sel(l, uop(l, KO_EQ, c, sbit), nan, v);
		break;
	}
	return v;
}

/* |x|'s bits ax (not NaN) rounded to nearest even in format f, as the
 * code's magnitude (u32; above maxc where it overflows): a normal result
 * rebiases and drops 23 - m bits, a subnormal one shifts the mantissa
 * with its leading one right by (151 - b - m) - e (at most 25: smaller
 * values round to 0).  Rounding adds half - 1 and the kept lowest bit
 * before the shift, so the carry happens above half and at half to even. */
static KRef
round_code(L *l, const SFmt *f, KRef ax)
{
	uint32_t sh = (uint32_t)(23 - f->m), lo = (uint32_t)(127 - f->b);
	KRef e = uop(l, KO_SHRM, ax, 23), vn, hn, vs, ss, hs, tiny, one = u32c(l, 1);

	vn = uop(l, KO_SUB, ax, lo << 23);
	hn = uop(l, KO_SHRM, bin(l, KO_ADD, uop(l, KO_ADD, vn, (1u << (sh - 1)) - 1),
	                         uop(l, KO_BAND, uop(l, KO_SHRM, vn, sh), 1)), sh);
	vs = bin(l, KO_BOR, uop(l, KO_BAND, ax, 0x7fffff),
	         sel(l, uop(l, KO_EQ, e, 0), u32c(l, 0), u32c(l, 0x800000)));
	ss = bin(l, KO_SUB, u32c(l, (uint32_t)(151 - f->b - f->m)),
	         sel(l, uop(l, KO_EQ, e, 0), one, e));
	tiny = uop(l, KO_GT, ss, 25);   /* also the normal range, unused */
	vs = sel(l, tiny, u32c(l, 0), vs);
	ss = sel(l, tiny, u32c(l, 25), ss);
	hs = bin(l, KO_SHRM, bin(l, KO_ADD, bin(l, KO_ADD, vs,
	                                        uop(l, KO_SUB, bin(l, KO_SHLM, one, uop(l, KO_SUB, ss, 1)), 1)),
	                         uop(l, KO_BAND, bin(l, KO_SHRM, vs, ss), 1)), ss);
	return sel(l, uop(l, KO_GT, e, lo), hn, hs);
}

/* The code (u32) of f32 value v in storage dtype dt, rounded as `how`
 * (KCastRound) says. */
static KRef
encode(L *l, int dt, KRef v, int how)
{
	SFmt f;
	KRef x = kb_un(&l->kb, KO_BITS, v), ax, s, h, isnan_, r, big;

	ax = uop(l, KO_BAND, x, 0x7fffffff);
	isnan_ = uop(l, KO_GT, ax, 0x7f800000);
	if (dt == DT_BF16)   /* NaN: quieted; else round the low half away */
		return sel(l, isnan_, uop(l, KO_BOR, uop(l, KO_SHRM, x, 16), 0x40),
		           uop(l, KO_SHRM, bin(l, KO_ADD, uop(l, KO_ADD, x, 0x7fff),
		                                  uop(l, KO_BAND, uop(l, KO_SHRM, x, 16), 1)), 16));
	if (dt == DT_F8E8M0) {
		/* the exponent, plus one when rounding up: up (away from zero)
		 * for any fraction, down never, nearest from half (ties up;
		 * below 2^-126 above 2^-127 only); without KC_NOSAT 2^127 does
		 * not round up to the NaN code.  The sign is dropped. */
		KRef e = uop(l, KO_BAND, uop(l, KO_SHRM, x, 23), 0xff);
		KRef m = uop(l, KO_BAND, x, 0x7fffff), up;
		if (how & KC_DOWN)
			up = kb_const_i(&l->kb, DT_BOOL, 0);
		else if (how & KC_NEAREST)
			up = bin(l, KO_AND, uop(l, KO_NE, uop(l, KO_BAND, m, 0x400000), 0),
			         bin(l, KO_OR, uop(l, KO_NE, uop(l, KO_BAND, m, 0x3fffff), 0),
			             uop(l, KO_NE, e, 0)));
		else
			up = uop(l, KO_NE, m, 0);
		if (!(how & KC_NOSAT))
			up = bin(l, KO_AND, up, uop(l, KO_NE, e, 0xfe));
		return sel(l, uop(l, KO_EQ, e, 0xff), u32c(l, 0xff),
		           bin(l, KO_ADD, e, sel(l, up, u32c(l, 1), u32c(l, 0))));
	}
	if (!sfmt(dt, &f))
		return 0;
	s = uop(l, KO_BAND, uop(l, KO_SHRM, x, (uint32_t)(32 - f.w)), 1u << (f.w - 1));
	h = round_code(l, &f, ax);
	/* f16 stores overflow to inf and keep a NaN's payload; float8 per how */
	big = u32c(l, dt == DT_F16 || (how & KC_NOSAT) ? f.ovf : f.maxc);
	r = sel(l, uop(l, KO_GT, h, f.maxc), bin(l, KO_BOR, s, big),
	        f.nan == SN_FNUZ ? sel(l, uop(l, KO_EQ, h, 0), u32c(l, 0),
	                               bin(l, KO_BOR, s, h))
	                         : bin(l, KO_BOR, s, h));
	return sel(l, isnan_, bin(l, KO_BOR, s, dt == DT_F16
	           ? uop(l, KO_BOR, uop(l, KO_BAND, uop(l, KO_SHRM, ax, 13), 0x3ff), f.nanc)
	           : u32c(l, f.nanc)), r);
}

/* Is n an f32 load (or store) of a storage buffer the target does not
 * convert itself? */
static int
storage_f32(L *l, const KNode *n)
{
	int bd = l->kb.k->buf[n->buf].dtype;
	KRef v = n->kind == KS_STORE ? n->b : 0;

	return dtype_is_storage(bd) && !dtype_is_packed(bd) && !native(l, bd) &&
	       (v ? l->kb.k->node[v].dtype : n->dtype) == DT_F32;
}

/* A load of storage buffer n.buf (an f32 load): its bits, decoded.  A
 * guarded load reads the bits under its guard (0 elsewhere) and selects
 * the default. */
static KRef
storage_load(L *l, KNode n)
{
	int bd = l->kb.k->buf[n.buf].dtype, bits = kir_bits_dtype(bd);
	KRef z = ci(l, bits, 0), r, v;

	if (n.lanes != 1)
		return 0;
	r = n.b ? kb_load_guard(&l->kb, n.buf, n.a, n.b, z) : kb_load(&l->kb, n.buf, n.a);
	if (r != z && l->kb.k->node[r].kind == KE_LOAD)
		l->kb.k->node[r].dtype = bits;
	v = decode(l, bd, kb_cast(&l->kb, DT_U32, r));
	return n.b && v ? sel(l, n.b, v, n.c) : v;
}

/* The bits a store of f32 value v into a storage buffer of dtype dt
 * writes: rounded to nearest even, float8 out of range to inf or NaN
 * (kir.h). */
static KRef
storage_value(L *l, int dt, KRef v)
{
	KRef c = encode(l, dt, v, KC_NOSAT | KC_NEAREST);

	return c ? kb_cast(&l->kb, kir_bits_dtype(dt), c) : 0;
}

/* ---- packed sub-byte types: int4, uint4, int2, uint2, float4e2m1 -------- *
 *
 * A packed buffer holds 8 / w elements of w bits in each byte, element i
 * in bits (i % (8 / w)) * w and up of byte i / (8 / w) (ONNX: low nibble
 * first).  Its loads and stores are legalised here into byte loads and
 * stores, shifts and masks; the buffer itself becomes a u8 buffer of
 * ceil(count * w / 8) bytes (packed_bufs), so no renderer and no
 * interpreter sees a packed type.  A load yields the expression type
 * (dtype_expr): the field sign-extended for int4/int2, zero-extended for
 * uint4/uint2, decoded (decode, SN_NONE) for float4e2m1.  A store writes
 * the low w bits of an integer (ONNX's Cast to int4 wraps: -9 -> 7) or
 * the float4e2m1 code of an f32 (nearest even, saturating, NaN -> 0x8)
 * into its field: the byte is read, the field cleared and set (the last
 * element also clears the unused bits above it, so they are 0).  Two
 * elements share a byte, so a kernel that stores into a packed buffer is
 * never split between threads (kb_store clears KF_PARALLEL around such a
 * store; passes/schedule.c and schedule_gpu.c check kir_stores_packed).
 */

/* Element index i (i64) of a packed buffer of w bits: the byte index and
 * the field's shift in bits (u32). */
static void
packed_at(L *l, int w, KRef i, KRef *byte, KRef *sh)
{
	int per = 8 / w, lg = per == 2 ? 1 : 2;

	*byte = bin(l, KO_SHRM, i, ci(l, DT_I64, lg));
	*sh = kb_cast(&l->kb, DT_U32, bin(l, KO_SHLM, bin(l, KO_BAND, i, ci(l, DT_I64, per - 1)),
	                                 ci(l, DT_I64, w == 4 ? 2 : 1)));
}

/* The byte at index byte of buffer b, as u32 (a u8 load: the buffer is
 * retyped u8 at the end of legalisation). */
static KRef
packed_byte(L *l, int b, KRef byte, KRef guard)
{
	KRef z = ci(l, DT_U8, 0), r;

	r = guard ? kb_load_guard(&l->kb, b, byte, guard, z) : kb_load(&l->kb, b, byte);
	if (r != z && l->kb.k->node[r].kind == KE_LOAD)
		l->kb.k->node[r].dtype = DT_U8;
	return kb_cast(&l->kb, DT_U32, r);
}

/* A load n of packed buffer n.buf: the field, extended or decoded. */
static KRef
packed_load(L *l, KNode n)
{
	int bd = l->kb.k->buf[n.buf].dtype, w = dtype_bits(bd);
	uint32_t mask = (1u << w) - 1, sbit = 1u << (w - 1);
	KRef byte, sh, f, v;

	if (n.lanes != 1)
		return 0;
	packed_at(l, w, n.a, &byte, &sh);
	f = uop(l, KO_BAND, bin(l, KO_SHRM, packed_byte(l, n.buf, byte, n.b), sh), mask);
	if (bd == DT_F4E2M1)
		v = decode(l, bd, f);
	else if (dtype_is_signed(bd))   /* (f ^ sbit) - sbit, in i32 */
		v = kb_cast(&l->kb, dtype_expr(bd),
		            bin(l, KO_SUB, kb_cast(&l->kb, DT_I32, uop(l, KO_BXOR, f, sbit)),
		                ci(l, DT_I32, sbit)));
	else
		v = kb_cast(&l->kb, dtype_expr(bd), f);
	return n.b && v ? sel(l, n.b, v, n.c) : v;
}

/* Rewrite store s (operands legal) into packed buffer s.buf as a store of
 * the byte with its field replaced. */
static int
packed_store(L *l, KRef s)
{
	KNode *n = &l->kb.k->node[s];
	int b = n->buf, bd = l->kb.k->buf[b].dtype, w = dtype_bits(bd);
	uint32_t mask = (1u << w) - 1;
	KRef byte, sh, code, old, last, keep, v = n->b, i = n->a;
	KB *kb = &l->kb;

	if (n->lanes != 1)
		return 0;
	if (bd == DT_F4E2M1)
		code = encode(l, bd, v, 0);
	else
		code = uop(l, KO_BAND, kb_cast(&l->kb, DT_U32, v), mask);
	if (!code)
		return 0;
	packed_at(l, w, i, &byte, &sh);
	old = packed_byte(l, b, byte, 0);
	/* the bits kept: all but the field's, and for the tensor's last
	 * element only those below it, so the last byte's unused bits are 0 */
	last = kb->k->buf[b].ext > 0 ? bin(l, KO_SUB, kb->k->buf[b].ext, ci(l, DT_I64, 1))
	                             : ci(l, DT_I64, kb->k->buf[b].count - 1);
	keep = sel(l, bin(l, KO_EQ, i, last), uop(l, KO_SUB, bin(l, KO_SHLM, u32c(l, 1), sh), 1),
	           kb_un(kb, KO_BITNOT, bin(l, KO_SHLM, u32c(l, mask), sh)));
	v = bin(l, KO_BOR, bin(l, KO_BAND, old, keep), bin(l, KO_SHLM, code, sh));
	v = kb_cast(&l->kb, DT_U8, v);
	n = &l->kb.k->node[s];   /* the node array may have moved */
	n->a = byte;
	n->b = v;
	return 1;
}

/* Every packed buffer of k becomes the u8 buffer of its bytes. */
static void
packed_bufs(L *l)
{
	KKernel *k = l->kb.k;

	for (int i = 0; i < k->nbuf; i++) {
		KBuf *b = &k->buf[i];
		int w = dtype_bits(b->dtype);
		if (!dtype_is_packed(b->dtype))
			continue;
		b->dtype = DT_U8;
		b->count = b->count / (8 / w) + (b->count % (8 / w) != 0);
		if (b->ext > 0)   /* (ext + per - 1) >> lg: legal on every target */
			b->ext = bin(l, KO_SHRM, bin(l, KO_ADD, b->ext, ci(l, DT_I64, 8 / w - 1)),
			             ci(l, DT_I64, w == 4 ? 1 : 2));
	}
}

/* ---- f32 transcendentals as polynomials ---------------------------------- *
 *
 * For targets without an accurate math library of their own (KCaps.libm
 * clear: PTX has only approximate ex2/lg2, an LLVM JIT does not vectorise
 * calls): exp and log by range reduction and a polynomial, the others
 * built from them.  Every polynomial is a fit made for burncc (weighted
 * least squares iterated to near-minimax on the reduced interval).  The
 * largest errors, over every f32 input against the double libm, are in
 * docs/NUMERICS.md ("Transcendentals without a libm"); test_transcend
 * checks them.  All of it is f32 arithmetic, integer bit operations and
 * eager selects: each select arm is safe to compute for every input (the
 * raw float->int conversion sees a clamped, NaN-free operand).
 */
static KRef
f32c(L *l, float v)
{
	return cf(l, DT_F32, v);
}

/* Horner: c[0] x^(n-1) + ... + c[n-1]. */
static KRef
horner(L *l, KRef x, const float *c, int n)
{
	KRef p = f32c(l, c[0]);

	for (int i = 1; i < n; i++)
		p = bin(l, KO_ADD, bin(l, KO_MUL, p, x), f32c(l, c[i]));
	return p;
}

/* c ? a : b for f32 a and b, by their bits: no select for a C compiler
 * to turn into a branch (a plain select where the target keeps one,
 * KCaps.sel_f32).  gcc (under -ftrapping-math) moves a value used
 * only in one arm of a ?: into that arm, and then cannot if-convert the
 * arm when it holds a compare or a float->int conversion, so the loop
 * around is not vectorized; exp's and tanh's arms do. */
static KRef
bsel(L *l, KRef c, KRef a, KRef b)
{
	KB *kb = &l->kb;
	KRef m;

	if (l->caps && l->caps->sel_f32)
		return sel(l, c, a, b);
	m = bin(l, KO_SUB, ci(l, DT_U32, 0), kb_cast(kb, DT_U32, c));

	return kb_un(kb, KO_FROMBITS, bin(l, KO_BOR, bin(l, KO_BAND, kb_un(kb, KO_BITS, a), m),
	                                  bin(l, KO_BAND, kb_un(kb, KO_BITS, b),
	                                      kb_un(kb, KO_BITNOT, m))));
}

/* lo <= x <= hi, NaN kept (compares false). */
static KRef
clampf(L *l, KRef x, float lo, float hi)
{
	return sel(l, bin(l, KO_GT, x, f32c(l, hi)), f32c(l, hi),
	           sel(l, bin(l, KO_LT, x, f32c(l, lo)), f32c(l, lo), x));
}

static KRef
isnanf_(L *l, KRef x)
{
	return bin(l, KO_NE, x, x);
}

/* 2^k for i32 k in [-126, 127], exactly. */
static KRef
pow2i(L *l, KRef k)
{
	KRef e = bin(l, KO_SHLM, bin(l, KO_ADD, k, ci(l, DT_I32, 127)),
	             ci(l, DT_I32, 23));

	return kb_un(&l->kb, KO_FROMBITS, kb_cast(&l->kb, DT_U32, e));
}

/* ln 2 in two parts: the first has 16 significant bits, so k * LN2HI is
 * exact for |k| < 2^8 (Cody and Waite). */
#define LN2HI 0.693145752f
#define LN2LO 1.42860677e-06f

/* exp(x) = 2^k e^r, r = x - k ln2 in [-ln2/2, ln2/2]; 2^k as two factors
 * so that results down to the subnormals are one rounding, and so that
 * beyond the clamp's ends (e^89 overflows, e^-104 is below half the least
 * subnormal) the product itself rounds to inf and 0, with no select.  The
 * reduction and the Horner steps are fused multiply-adds (one rounding on
 * every target, as erf32's): 28 operations where mul + add took 40, which
 * bounds the GPU's softmax (exp per element, docs/BENCHMARKS.md).  Max
 * error 0.99 ulp (docs/NUMERICS.md).  exp32_in takes xc already clamped
 * to [-104, 89] and NaN-free; exp32 clamps. */
static KRef
exp32_in(L *l, KRef xc)
{
	static const float p[] = { 0.000198577956f, 0.00139335979f,
		0.00833336072f, 0.0416664655f, 0.166666665f, 0.500000001f };
	KB *kb = &l->kb;
	KRef t, k, up, r, P, e, ki, k1;

	/* k = floor(t), t in [-150, 129], as the truncation less one where
	 * that rounded up, in integers: exactly floorf's value, and a C
	 * compiler vectorizes it (gcc does not vectorize floorf without
	 * -fno-trapping-math, nor the same with a float select) */
	t = kb_fma(kb, xc, f32c(l, 1.44269504f), f32c(l, 0.5f));
	ki = kb_cast(kb, DT_I32, t);
	l->kb.k->node[ki].op = KC_RAW;
	up = bin(l, KO_GT, kb_cast(kb, DT_F32, ki), t);
	ki = bin(l, KO_SUB, ki, kb_cast(kb, DT_I32, up));
	k = kb_cast(kb, DT_F32, ki);
	r = kb_fma(kb, k, f32c(l, -LN2HI), xc);
	r = kb_fma(kb, k, f32c(l, -LN2LO), r);
	P = f32c(l, p[0]);
	for (int i = 1; i < 6; i++)
		P = kb_fma(kb, P, r, f32c(l, p[i]));
	e = bin(l, KO_ADD, f32c(l, 1.f), kb_fma(kb, bin(l, KO_MUL, r, r), P, r));
	k1 = bin(l, KO_SHRM, ki, ci(l, DT_I32, 1));
	return bin(l, KO_MUL, bin(l, KO_MUL, e, pow2i(l, k1)),
	           pow2i(l, bin(l, KO_SUB, ki, k1)));
}

static KRef
exp32(L *l, KRef x)
{
	/* clamped with NaN to -104 by the compares alone: a second select
	 * on isnan(x) led gcc to thread both into a branch, and the loop
	 * around was no longer vectorized */
	KRef xc = sel(l, bin(l, KO_GT, x, f32c(l, -104.f)), x, f32c(l, -104.f));

	xc = sel(l, bin(l, KO_LT, xc, f32c(l, 89.f)), xc, f32c(l, 89.f));
	return bsel(l, isnanf_(l, x), x, exp32_in(l, xc));
}

/* exp32's older form, for targets whose KCaps.exp_plain is set: the same
 * reduction and polynomial in plain mul and add, and the range's ends by
 * selects.  Max error 0.93 ulp. */
static KRef
exp32_plain(L *l, KRef x)
{
	static const float p[] = { 0.000198577956f, 0.00139335979f,
		0.00833336072f, 0.0416664655f, 0.166666665f, 0.500000001f };
	KRef nan = isnanf_(l, x), xc, k, r, e, ki, k1, y;

	xc = sel(l, nan, f32c(l, 0), clampf(l, x, -104.f, 89.f));
	k = kb_un(&l->kb, KO_FLOOR, bin(l, KO_ADD,
	          bin(l, KO_MUL, xc, f32c(l, 1.44269504f)), f32c(l, 0.5f)));
	r = bin(l, KO_SUB, xc, bin(l, KO_MUL, k, f32c(l, LN2HI)));
	r = bin(l, KO_SUB, r, bin(l, KO_MUL, k, f32c(l, LN2LO)));
	e = bin(l, KO_ADD, f32c(l, 1.f), bin(l, KO_ADD, r,
	        bin(l, KO_MUL, bin(l, KO_MUL, r, r), horner(l, r, p, 6))));
	ki = kb_cast(&l->kb, DT_I32, k);
	l->kb.k->node[ki].op = KC_RAW;          /* k in [-150, 129] */
	k1 = bin(l, KO_SHRM, ki, ci(l, DT_I32, 1));
	y = bin(l, KO_MUL, bin(l, KO_MUL, e, pow2i(l, k1)),
	        pow2i(l, bin(l, KO_SUB, ki, k1)));
	return sel(l, nan, x, sel(l, bin(l, KO_GT, x, f32c(l, 88.7228394f)),
	           f32c(l, INFINITY), sel(l, bin(l, KO_LT, x, f32c(l, -103.972084f)),
	                                  f32c(l, 0.f), y)));
}

/* The target's exp: exp32, or exp32_plain where KCaps.exp_plain says. */
static KRef
exp32_for(L *l, KRef x)
{
	return l->caps && l->caps->exp_plain ? exp32_plain(l, x) : exp32(l, x);
}

/* log(x) = e ln2 + log(m), m in [sqrt(1/2), sqrt(2)); log(m) = log1p(f)
 * with f = m - 1 through s = f / (2 + f) (log(m) = 2 atanh(s)); subnormal
 * x scaled by 2^23 first.  Max error 0.79 ulp. */
static KRef
log32(L *l, KRef x)
{
	static const float p[] = { 0.233309935f, 0.285507976f, 0.400001221f,
		0.666666666f };
	KB *kb = &l->kb;
	KRef sub, xs, u, t, ef, m, f, s, z, R, hf, y;

	sub = bin(l, KO_LT, x, f32c(l, 1.17549435e-38f));
	xs = sel(l, sub, bin(l, KO_MUL, x, f32c(l, 8388608.f)), x);
	u = kb_un(kb, KO_BITS, xs);
	t = bin(l, KO_SUB, u, ci(l, DT_U32, 0x3f3504f3));
	ef = kb_cast(kb, DT_I32, t);
	ef = bin(l, KO_SHRM, ef, ci(l, DT_I32, 23));
	ef = bin(l, KO_SUB, ef, sel(l, sub, ci(l, DT_I32, 23), ci(l, DT_I32, 0)));
	ef = kb_cast(kb, DT_F32, ef);
	m = kb_un(kb, KO_FROMBITS, bin(l, KO_ADD, bin(l, KO_BAND, t,
	          ci(l, DT_U32, 0x007fffff)), ci(l, DT_U32, 0x3f3504f3)));
	f = bin(l, KO_SUB, m, f32c(l, 1.f));
	s = bin(l, KO_DIV, f, bin(l, KO_ADD, f32c(l, 2.f), f));
	z = bin(l, KO_MUL, s, s);
	R = bin(l, KO_MUL, horner(l, z, p, 4), z);
	hf = bin(l, KO_MUL, bin(l, KO_MUL, f32c(l, 0.5f), f), f);
	/* e ln2hi - ((hf - (s (hf + R) + e ln2lo)) - f) */
	y = bin(l, KO_ADD, bin(l, KO_MUL, s, bin(l, KO_ADD, hf, R)),
	        bin(l, KO_MUL, ef, f32c(l, LN2LO)));
	y = bin(l, KO_SUB, bin(l, KO_SUB, hf, y), f);
	y = bin(l, KO_SUB, bin(l, KO_MUL, ef, f32c(l, LN2HI)), y);
	return sel(l, isnanf_(l, x), x,
	       sel(l, bin(l, KO_LT, x, f32c(l, 0.f)), f32c(l, NAN),
	       sel(l, bin(l, KO_EQ, x, f32c(l, 0.f)), f32c(l, -INFINITY),
	       sel(l, bin(l, KO_EQ, x, f32c(l, INFINITY)), x, y))));
}

/* log1p(y) for y >= 0 as log(u) * y / (u - 1), u = 1 + y: the quotient
 * corrects the rounding of u (Goldberg); u == 1 gives y. */
static KRef
log1p32(L *l, KRef y)
{
	KRef u = bin(l, KO_ADD, f32c(l, 1.f), y), d = bin(l, KO_SUB, u, f32c(l, 1.f));
	KRef dz = bin(l, KO_EQ, d, f32c(l, 0.f));

	return sel(l, dz, y, bin(l, KO_MUL, log32(l, u),
	           bin(l, KO_DIV, y, sel(l, dz, f32c(l, 1.f), d))));
}

/* x + x^3 P(x^2): the odd series near 0, where the exp/log forms cancel. */
static KRef
odd_series(L *l, KRef x, const float *c, int n)
{
	KRef z = bin(l, KO_MUL, x, x);

	return bin(l, KO_ADD, x, bin(l, KO_MUL, bin(l, KO_MUL, x, z), horner(l, z, c, n)));
}

/* copysign for results of |x|: -y where x < 0. */
static KRef
signed_of(L *l, KRef x, KRef y)
{
	return sel(l, bin(l, KO_LT, x, f32c(l, 0.f)), kb_un(&l->kb, KO_NEG, y), y);
}

/* tanh: the odd series below 0.625, 1 - 2 / (e^2|x| + 1) above (1 beyond
 * 9.1).  Max error 1.31 ulp. */
static KRef
tanh32(L *l, KRef x)
{
	static const float p[] = { -0.000862247130f, 0.00330628303f,
		-0.00879102007f, 0.0218598989f, -0.0539676399f, 0.133333318f,
		-0.333333333f };
	KRef a = kb_un(&l->kb, KO_ABS, x), E, big, ac;

	/* |x| below 9.1 or 9.1 (NaN too: that arm is not taken), so exp's
	 * clamps are not needed: gcc, given them, no longer if-converted
	 * the loop around (and so did not vectorize it) */
	ac = bin(l, KO_MUL, f32c(l, 2.f), sel(l, bin(l, KO_LT, a, f32c(l, 9.1f)), a, f32c(l, 9.1f)));
	E = l->caps && l->caps->exp_plain ? exp32_plain(l, ac) : exp32_in(l, ac);
	big = bin(l, KO_SUB, f32c(l, 1.f), bin(l, KO_DIV, f32c(l, 2.f),
	          bin(l, KO_ADD, E, f32c(l, 1.f))));
	/* big >= 0 takes x's sign bit (x != 0 where it is taken) */
	big = kb_un(&l->kb, KO_FROMBITS, bin(l, KO_BOR, kb_un(&l->kb, KO_BITS, big),
	            bin(l, KO_BAND, kb_un(&l->kb, KO_BITS, x), ci(l, DT_U32, 0x80000000u))));
	return bsel(l, isnanf_(l, x), x, bsel(l, bin(l, KO_LT, a, f32c(l, 0.625f)),
	            odd_series(l, x, p, 7), big));
}

/* sinh and cosh from E = e^|x| (|x| <= 89.5; beyond: inf); near the
 * overflow threshold (|x| > 88.5) as (H/2) H with H = e^(|x|/2), since E
 * itself would overflow.  sinh takes the odd series below 1.  Max error
 * 2.3 ulp. */
static KRef
sinhcosh32(L *l, int op, KRef x)
{
	static const float p[] = { 2.75538025e-06f, 0.000198412823f,
		0.00833333332f, 0.166666667f };
	KRef a = kb_un(&l->kb, KO_ABS, x), ac = clampf(l, a, 0.f, 89.5f);
	KRef E = exp32_for(l, ac), H = exp32_for(l, bin(l, KO_MUL, f32c(l, 0.5f), ac));
	KRef half = bin(l, KO_DIV, f32c(l, 0.5f), E), big, y;

	big = bin(l, KO_MUL, bin(l, KO_MUL, f32c(l, 0.5f), H), H);
	y = bin(l, op == KO_SINH ? KO_SUB : KO_ADD,
	        bin(l, KO_MUL, f32c(l, 0.5f), E), half);
	y = sel(l, bin(l, KO_GT, a, f32c(l, 88.5f)), big, y);
	y = sel(l, bin(l, KO_GT, a, f32c(l, 89.5f)), f32c(l, INFINITY), y);
	if (op == KO_SINH)
		y = sel(l, bin(l, KO_LT, a, f32c(l, 1.f)), odd_series(l, x, p, 4),
		        signed_of(l, x, y));
	return sel(l, isnanf_(l, x), x, y);
}

/* asinh: the odd series below 0.5; log1p(|x| + x^2 / (1 + sqrt(1 + x^2)))
 * to 4096; log|x| + ln2 above (x^2 would overflow).  Max error 2.4 ulp. */
static KRef
asinh32(L *l, KRef x)
{
	static const float p[] = { -0.00717454857f, 0.0153381627f,
		-0.0220532028f, 0.0303552249f, -0.0446417749f, 0.0749999834f,
		-0.166666667f };
	KRef a = kb_un(&l->kb, KO_ABS, x), ab, z, mid, big, y;

	ab = clampf(l, a, 0.f, 4096.f);
	z = bin(l, KO_MUL, ab, ab);
	mid = log1p32(l, bin(l, KO_ADD, ab, bin(l, KO_DIV, z, bin(l, KO_ADD, f32c(l, 1.f),
	              kb_un(&l->kb, KO_SQRT, bin(l, KO_ADD, f32c(l, 1.f), z))))));
	big = bin(l, KO_ADD, log32(l, a), f32c(l, 0.693147181f));
	y = sel(l, bin(l, KO_GT, a, f32c(l, 4096.f)), big,
	        sel(l, bin(l, KO_LT, a, f32c(l, 0.5f)), odd_series(l, a, p, 7), mid));
	return sel(l, isnanf_(l, x), x, signed_of(l, x, y));
}

/* acosh: log1p(t + sqrt(2t + t^2)), t = x - 1, to 4096; log x + ln2
 * above; NaN below 1.  Max error 2.4 ulp. */
static KRef
acosh32(L *l, KRef x)
{
	KRef xb = clampf(l, x, 1.f, 4096.f), t, mid, big;

	t = bin(l, KO_SUB, xb, f32c(l, 1.f));
	mid = log1p32(l, bin(l, KO_ADD, t, kb_un(&l->kb, KO_SQRT, bin(l, KO_ADD,
	              bin(l, KO_MUL, f32c(l, 2.f), t), bin(l, KO_MUL, t, t)))));
	big = bin(l, KO_ADD, log32(l, x), f32c(l, 0.693147181f));
	return sel(l, isnanf_(l, x), x, sel(l, bin(l, KO_LT, x, f32c(l, 1.f)),
	           f32c(l, NAN), sel(l, bin(l, KO_GT, x, f32c(l, 4096.f)), big, mid)));
}

/* atanh: the odd series below 0.5, log1p(2|x| / (1 - |x|)) / 2 to 1;
 * +-inf at +-1, NaN beyond.  Max error 2.4 ulp. */
static KRef
atanh32(L *l, KRef x)
{
	static const float p[] = { 0.156729615f, 0.0405899638f, 0.0976104254f,
		0.110496624f, 0.142883536f, 0.199999579f, 0.333333334f };
	KRef a = kb_un(&l->kb, KO_ABS, x), ab, mid, y;

	ab = sel(l, bin(l, KO_GE, a, f32c(l, 1.f)), f32c(l, 0.5f), a);
	mid = bin(l, KO_MUL, f32c(l, 0.5f), log1p32(l, bin(l, KO_DIV,
	          bin(l, KO_MUL, f32c(l, 2.f), ab), bin(l, KO_SUB, f32c(l, 1.f), ab))));
	y = sel(l, bin(l, KO_LT, a, f32c(l, 0.5f)), odd_series(l, a, p, 7), mid);
	y = sel(l, bin(l, KO_EQ, a, f32c(l, 1.f)), f32c(l, INFINITY),
	        sel(l, bin(l, KO_GT, a, f32c(l, 1.f)), f32c(l, NAN), y));
	return sel(l, isnanf_(l, x), x, signed_of(l, x, y));
}

/* ---- f32 trigonometric functions ----------------------------------------- *
 *
 * sin, cos and tan reduce x by pi/2 exactly for every finite f32 (Payne
 * and Hanek's method, in integers): x = m 2^e with m a 24-bit integer, and
 * x 2/pi mod 4 is m times the 96 bits of 2/pi that matter at e (those
 * worth 2^1 .. 2^-94 once scaled by 2^e; the higher ones add multiples of
 * 4, the lower ones less than 2^-70).  The product's two integer bits are
 * the quadrant, its 62 fraction bits (rounded to the nearest quadrant,
 * so in [-1/2, 1/2]) times pi/2 are r in [-pi/4, pi/4], carried as two
 * f32 parts so that r is good to well under an f32 ulp however close x is
 * to a multiple of pi/2.  On that interval sin and cos are their Taylor
 * series (sin to r^9, cos to r^10: the next terms are below 2^-28 and
 * 2^-33 of the result).  |x| < pi/4 skips the reduction.
 */

/* The bits of 2/pi after the binary point, 32 to a word, behind one word
 * of zeros (the bits an exponent below 1 would reach): 2/pi =
 * 0.a2f9836e 4e441529 ... in hexadecimal. */
static const uint32_t two_over_pi[8] = { 0, 0xa2f9836e, 0x4e441529,
	0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab };

/* Words j and j+1 of two_over_pi as one u64, j a run-time i32 in [0, 4]. */
static KRef
tpi_pair(L *l, KRef j, int k)
{
	KRef v = ci(l, DT_U64, (int64_t)((uint64_t)two_over_pi[4 + k] << 32 |
	                                 two_over_pi[5 + k]));

	for (int i = 3; i >= 0; i--)
		v = sel(l, bin(l, KO_EQ, j, ci(l, DT_I32, i)),
		        ci(l, DT_U64, (int64_t)((uint64_t)two_over_pi[i + k] << 32 |
		                                two_over_pi[i + k + 1])), v);
	return v;
}

/* |x| reduced: r + *rl (f32, r in [-pi/4, pi/4], *rl below half its
 * ulp) and the quadrant *q (i32, 0..3) with |x| = r + rl + q pi/2 + 2 pi n.
 * NaN and inf give r NaN. */
static KRef
reduce_pio2(L *l, KRef x, KRef *q, KRef *rl)
{
	KB *kb = &l->kb;
	KRef a = kb_un(kb, KO_ABS, x), small, fin, xr, u, be, m, t0, j, o, sh;
	KRef v[3], lo, mid, hi, F, up, Fs, fh, fl, fh1, t, r;

	small = bin(l, KO_LT, a, f32c(l, 0.785398163f));
	fin = bin(l, KO_LT, a, f32c(l, INFINITY));
	xr = sel(l, bin(l, KO_AND, fin, kb_un(kb, KO_NOT, small)), a, f32c(l, 1.f));
	u = kb_un(kb, KO_BITS, xr);
	be = kb_cast(kb, DT_I32, bin(l, KO_SHRM, u, ci(l, DT_U32, 23)));
	m = kb_cast(kb, DT_U64, bin(l, KO_BOR, bin(l, KO_BAND, u, ci(l, DT_U32, 0x7fffff)),
	                           ci(l, DT_U32, 0x800000)));
	/* the window starts at bit be - 120 of two_over_pi (126 <= be <= 254) */
	t0 = bin(l, KO_SUB, be, ci(l, DT_I32, 120));
	j = bin(l, KO_SHRM, t0, ci(l, DT_I32, 5));
	o = bin(l, KO_BAND, t0, ci(l, DT_I32, 31));
	sh = kb_cast(kb, DT_U64, bin(l, KO_SUB, ci(l, DT_I32, 32), o));   /* 1..32 */
	for (int k = 0; k < 3; k++)
		v[k] = bin(l, KO_BAND, bin(l, KO_SHRM, tpi_pair(l, j, k), sh),
		           ci(l, DT_U64, 0xffffffff));
	/* m v, 120 bits, the binary point above bit 94: hi holds bits 64.. */
	lo = bin(l, KO_MUL, m, v[2]);
	mid = bin(l, KO_ADD, bin(l, KO_MUL, m, v[1]), bin(l, KO_SHRM, lo, ci(l, DT_U64, 32)));
	hi = bin(l, KO_ADD, bin(l, KO_MUL, m, v[0]), bin(l, KO_SHRM, mid, ci(l, DT_U64, 32)));
	*q = kb_cast(kb, DT_I32, bin(l, KO_BAND, bin(l, KO_SHRM, hi, ci(l, DT_U64, 30)),
	                             ci(l, DT_U64, 3)));
	F = bin(l, KO_BOR, bin(l, KO_SHLM, bin(l, KO_BAND, hi, ci(l, DT_U64, 0x3fffffff)),
	                       ci(l, DT_U64, 32)),
	        bin(l, KO_BAND, mid, ci(l, DT_U64, 0xffffffff)));
	/* a fraction of 1/2 or more: the next quadrant, minus the rest */
	up = bin(l, KO_GE, F, ci(l, DT_U64, (int64_t)1 << 61));
	*q = bin(l, KO_BAND, bin(l, KO_ADD, *q, sel(l, up, ci(l, DT_I32, 1), ci(l, DT_I32, 0))),
	         ci(l, DT_I32, 3));
	Fs = bin(l, KO_SUB, kb_cast(kb, DT_I64, F),
	         sel(l, up, ci(l, DT_I64, (int64_t)1 << 62), ci(l, DT_I64, 0)));
	/* Fs 2^-62 as fh + fl, then times pi/2 (two parts) as r + rl */
	fh = kb_cast(kb, DT_F32, Fs);
	fh1 = kb_cast(kb, DT_I64, fh);
	kb->k->node[fh1].op = KC_RAW;                /* |fh| <= 2^61 */
	fl = bin(l, KO_MUL, kb_cast(kb, DT_F32, bin(l, KO_SUB, Fs, fh1)), f32c(l, 0x1p-62f));
	fh = bin(l, KO_MUL, fh, f32c(l, 0x1p-62f));
	t = kb_fma(kb, fh, f32c(l, -4.37113883e-08f), bin(l, KO_MUL, fl, f32c(l, 1.57079637f)));
	r = kb_fma(kb, fh, f32c(l, 1.57079637f), t);
	*rl = bin(l, KO_ADD, kb_fma(kb, fh, f32c(l, 1.57079637f), kb_un(kb, KO_NEG, r)), t);
	*rl = sel(l, small, f32c(l, 0.f), *rl);
	*q = sel(l, small, ci(l, DT_I32, 0), *q);
	r = sel(l, small, a, r);
	return sel(l, fin, r, f32c(l, NAN));
}

/* sin and cos of r + rl, r in [-pi/4, pi/4]: the series' tail and rl's
 * first-order term summed before the leading term, and cos's 1 - r^2/2
 * with its rounding error carried, so each is about one rounding. */
static KRef
sin_kernel(L *l, KRef r, KRef rl)
{
	static const float p[] = { 2.75573192e-06f, -0.000198412698f,
		0.00833333333f, -0.166666667f };
	KRef z = bin(l, KO_MUL, r, r);
	KRef tail = kb_fma(&l->kb, bin(l, KO_MUL, r, z), horner(l, z, p, 4),
	                   bin(l, KO_MUL, rl, kb_fma(&l->kb, z, f32c(l, -0.5f), f32c(l, 1.f))));

	return bin(l, KO_ADD, r, tail);
}

static KRef
cos_kernel(L *l, KRef r, KRef rl)
{
	static const float p[] = { -2.75573192e-07f, 2.48015873e-05f,
		-0.00138888889f, 0.0416666667f };
	KRef z = bin(l, KO_MUL, r, r), hz = bin(l, KO_MUL, f32c(l, 0.5f), z);
	KRef w = bin(l, KO_SUB, f32c(l, 1.f), hz), tail;

	/* (1 - w) - hz: the rounding error of w, exactly */
	tail = bin(l, KO_SUB, bin(l, KO_SUB, f32c(l, 1.f), w), hz);
	tail = bin(l, KO_ADD, tail, kb_fma(&l->kb, bin(l, KO_MUL, z, z), horner(l, z, p, 4),
	                                   kb_un(&l->kb, KO_NEG, bin(l, KO_MUL, r, rl))));
	return bin(l, KO_ADD, w, tail);
}

/* sin, cos or tan of x from s and c, the sine and cosine of |x|'s reduced
 * argument, by the quadrant q (i32) of |x|; zero is 0 of x's type; sin
 * and tan of -0 are -0 */
static KRef
trig_quadrant(L *l, int op, KRef x, KRef q, KRef s, KRef c, KRef zero)
{
	KRef odd = bin(l, KO_NE, bin(l, KO_BAND, q, ci(l, DT_I32, 1)), ci(l, DT_I32, 0));
	KRef hi = bin(l, KO_NE, bin(l, KO_BAND, q, ci(l, DT_I32, 2)), ci(l, DT_I32, 0));
	KRef neg = bin(l, KO_LT, x, zero), y;

	switch (op) {
	case KO_SIN:   /* q: s, c, -s, -c; odd in x */
		y = sel(l, odd, c, s);
		y = sel(l, hi, kb_un(&l->kb, KO_NEG, y), y);
		return sel(l, bin(l, KO_EQ, x, zero), x, sel(l, neg, kb_un(&l->kb, KO_NEG, y), y));
	case KO_COS:   /* q: c, -s, -c, s; even in x */
		y = sel(l, odd, s, c);
		return sel(l, bin(l, KO_NE, hi, odd), kb_un(&l->kb, KO_NEG, y), y);
	default:       /* tan: s / c, or -c / s; odd in x */
		y = sel(l, odd, bin(l, KO_DIV, kb_un(&l->kb, KO_NEG, c), s), bin(l, KO_DIV, s, c));
		return sel(l, bin(l, KO_EQ, x, zero), x, sel(l, neg, kb_un(&l->kb, KO_NEG, y), y));
	}
}

static KRef
trig32(L *l, int op, KRef x)
{
	KRef q, rl, r = reduce_pio2(l, x, &q, &rl);

	return trig_quadrant(l, op, x, q, sin_kernel(l, r, rl), cos_kernel(l, r, rl),
	                     f32c(l, 0.f));
}

/* atan: 1/|x| above 1 (atan x = pi/2 - atan(1/x)), then above 1/2
 * pi/6 + atan(u), u = (t sqrt3 - 1) / (t + sqrt3) in (-0.21, 0.27], then
 * the odd Taylor series to u^23 on |u| <= 1/2 (the next term is below
 * 2^-26 of the result).  The pi/6 shift cancels at most 12% of the
 * result (at t = 1/2). */
static KRef
atan32(L *l, KRef x)
{
	static const float p[] = { -1.f / 23, 1.f / 21, -1.f / 19, 1.f / 17,
		-1.f / 15, 1.f / 13, -1.f / 11, 1.f / 9, -1.f / 7, 1.f / 5, -1.f / 3 };
	KRef a = kb_un(&l->kb, KO_ABS, x), inv, t, mid, u, r;

	inv = bin(l, KO_GT, a, f32c(l, 1.f));
	t = sel(l, inv, bin(l, KO_DIV, f32c(l, 1.f), a), a);
	mid = bin(l, KO_GT, t, f32c(l, 0.5f));
	u = bin(l, KO_DIV, kb_fma(&l->kb, t, f32c(l, 1.73205081f), f32c(l, -1.f)),
	        bin(l, KO_ADD, t, f32c(l, 1.73205081f)));
	u = sel(l, mid, u, t);
	r = odd_series(l, u, p, 11);
	r = sel(l, mid, bin(l, KO_ADD, f32c(l, 0.523598776f), r), r);
	/* pi/2 - r with pi/2 in two parts */
	r = sel(l, inv, bin(l, KO_ADD, bin(l, KO_SUB, f32c(l, 1.57079637f), r),
	                    f32c(l, -4.37113883e-08f)), r);
	return sel(l, isnanf_(l, x), x, signed_of(l, x, r));
}

/* asin on [-1/2, 1/2]: its odd Taylor series to x^23 (the rest is below
 * 2^-30 of the result) */
static KRef
asin_series(L *l, KRef x)
{
	static const float p[] = { 7.312525874e-03f, 8.390335810e-03f,
		9.761609529e-03f, 1.155180090e-02f, 1.396484375e-02f,
		1.735276442e-02f, 2.237215909e-02f, 3.038194444e-02f,
		4.464285714e-02f, 7.500000000e-02f, 1.666666667e-01f };

	return odd_series(l, x, p, 11);
}

/* asin: the series below 1/2; above, pi/2 - 2 asin(sqrt((1 - |x|) / 2))
 * ((1 - |x|) / 2 is exact there).  acos: pi/2 - asin x below 1/2;
 * 2 asin(sqrt((1 - x) / 2)) above, pi - 2 asin(sqrt((1 + x) / 2)) below
 * -1/2.  pi/2 and pi in two parts; |x| > 1 takes the square root of a
 * negative: NaN. */
static KRef
asin32(L *l, KRef x)
{
	KRef a = kb_un(&l->kb, KO_ABS, x), s, big;

	s = kb_un(&l->kb, KO_SQRT, bin(l, KO_MUL, bin(l, KO_SUB, f32c(l, 1.f), a), f32c(l, 0.5f)));
	big = bin(l, KO_ADD, bin(l, KO_SUB, f32c(l, 1.57079637f),
	                         bin(l, KO_MUL, f32c(l, 2.f), asin_series(l, s))),
	          f32c(l, -4.37113883e-08f));
	return sel(l, bin(l, KO_GE, a, f32c(l, 0.5f)), signed_of(l, x, big), asin_series(l, x));
}

static KRef
acos32(L *l, KRef x)
{
	KRef a = kb_un(&l->kb, KO_ABS, x), sp, sn, small, pos, neg;

	small = bin(l, KO_ADD, bin(l, KO_SUB, f32c(l, 1.57079637f), asin_series(l, x)),
	            f32c(l, -4.37113883e-08f));
	sp = kb_un(&l->kb, KO_SQRT, bin(l, KO_MUL, bin(l, KO_SUB, f32c(l, 1.f), x), f32c(l, 0.5f)));
	sn = kb_un(&l->kb, KO_SQRT, bin(l, KO_MUL, bin(l, KO_ADD, f32c(l, 1.f), x), f32c(l, 0.5f)));
	pos = bin(l, KO_MUL, f32c(l, 2.f), asin_series(l, sp));
	neg = bin(l, KO_ADD, bin(l, KO_SUB, f32c(l, 3.14159274f),
	                         bin(l, KO_MUL, f32c(l, 2.f), asin_series(l, sn))),
	          f32c(l, -8.74227766e-08f));
	return sel(l, bin(l, KO_LT, a, f32c(l, 0.5f)), small,
	           sel(l, bin(l, KO_GT, x, f32c(l, 0.f)), pos, neg));
}

/* ---- f64: exp, log and pow for targets without an f64 math library ---- */

static KRef
f64c(L *l, double v)
{
	return cf(l, DT_F64, v);
}

static KRef
horner64(L *l, KRef x, const double *c, int n)
{
	KRef p = f64c(l, c[0]);

	for (int i = 1; i < n; i++)
		p = bin(l, KO_ADD, bin(l, KO_MUL, p, x), f64c(l, c[i]));
	return p;
}

/* 2^k for i64 k in [-1022, 1023], exactly. */
static KRef
pow2i64(L *l, KRef k)
{
	KRef e = bin(l, KO_SHLM, bin(l, KO_ADD, k, ci(l, DT_I64, 1023)),
	             ci(l, DT_I64, 52));

	return kb_un(&l->kb, KO_FROMBITS, kb_cast(&l->kb, DT_U64, e));
}

/* ln 2 in two parts (fdlibm's): the first has 32 significant bits, so
 * k * LN2HI64 is exact for |k| < 2^21. */
#define LN2HI64 6.93147180369123816490e-01
#define LN2LO64 1.90821492927058770002e-10

/* e^r - 1 for x + xl reduced as x + xl = k ln2 + r, r in about [-ln2/2,
 * ln2/2] (*ki = k, an i64 in [-1077, 1025]): r + r^2 P(r), P e^r's Taylor
 * series to r^13 (the next term is below 2^-57 there).  x must be finite,
 * |x| <= 746; xl small (0, or pow's low part). */
static KRef
exp64r(L *l, KRef x, KRef xl, KRef *ki)
{
	static const double p[] = { 1.0 / 6227020800, 1.0 / 479001600,
		1.0 / 39916800, 1.0 / 3628800, 1.0 / 362880, 1.0 / 40320,
		1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5 };
	KRef k, r;

	k = kb_un(&l->kb, KO_FLOOR, bin(l, KO_ADD,
	          bin(l, KO_MUL, x, f64c(l, 1.4426950408889634)), f64c(l, 0.5)));
	r = bin(l, KO_SUB, x, bin(l, KO_MUL, k, f64c(l, LN2HI64)));
	r = bin(l, KO_SUB, r, bin(l, KO_MUL, k, f64c(l, LN2LO64)));
	if (xl)
		r = bin(l, KO_ADD, r, xl);
	*ki = kb_cast(&l->kb, DT_I64, k);
	l->kb.k->node[*ki].op = KC_RAW;
	return bin(l, KO_ADD, r, bin(l, KO_MUL, bin(l, KO_MUL, r, r), horner64(l, r, p, 12)));
}

/* exp(x + xl), xl a small correction (0 for exp itself; pow's low part):
 * 2^k e^r (exp64r), 2^k as two exact factors so that a subnormal result is
 * rounded once. */
static KRef
exp64x(L *l, KRef x, KRef xl)
{
	KRef nan = bin(l, KO_NE, x, x), xc, e, ki, k1, y;

	xc = sel(l, nan, f64c(l, 0), sel(l, bin(l, KO_GT, x, f64c(l, 710)),
	         f64c(l, 710), sel(l, bin(l, KO_LT, x, f64c(l, -746)), f64c(l, -746), x)));
	e = bin(l, KO_ADD, f64c(l, 1), exp64r(l, xc, xl ? sel(l, nan, f64c(l, 0), xl) : 0, &ki));
	k1 = bin(l, KO_SHRM, ki, ci(l, DT_I64, 1));
	y = bin(l, KO_MUL, bin(l, KO_MUL, e, pow2i64(l, k1)),
	        pow2i64(l, bin(l, KO_SUB, ki, k1)));
	return sel(l, nan, x, sel(l, bin(l, KO_GT, x, f64c(l, 709.782712893384)),
	           f64c(l, INFINITY), sel(l, bin(l, KO_LT, x, f64c(l, -745.1332191019412)),
	                                  f64c(l, 0), y)));
}

/* e^x - 1 for 0 <= x <= 45: 2^k (e^r - 1) + (2^k - 1), one rounding over
 * exp64r's; exact near 0, where e^x - 1 would cancel. */
static KRef
expm1_64(L *l, KRef x)
{
	KRef ki, em1 = exp64r(l, x, 0, &ki), p = pow2i64(l, ki);

	return bin(l, KO_ADD, bin(l, KO_MUL, p, em1), bin(l, KO_SUB, p, f64c(l, 1)));
}

/* y with x's sign for x != 0; x itself for +-0 (y is 0 there) */
static KRef
signed64(L *l, KRef x, KRef y)
{
	return sel(l, bin(l, KO_LT, x, f64c(l, 0)), kb_un(&l->kb, KO_NEG, y),
	           sel(l, bin(l, KO_EQ, x, f64c(l, 0)), x, y));
}

/* tanh = t / (t + 2), t = e^2|x| - 1 (1 beyond 22, where tanh rounds to
 * 1); sinh = (t + t / (t + 1)) / 2, t = e^|x| - 1, to 22; cosh = (E + 1/E)
 * / 2 to 22; both e^|x| / 2 above, as (H / 2) H with H = e^(|x|/2) past
 * 709 where e^|x| itself would overflow. */
static KRef
hyp64(L *l, int op, KRef x)
{
	KRef a = kb_un(&l->kb, KO_ABS, x), nan = bin(l, KO_NE, x, x), ac, t, y, H, big;

	ac = sel(l, bin(l, KO_GT, a, f64c(l, 22)), f64c(l, 22), sel(l, nan, f64c(l, 0), a));
	if (op == KO_TANH) {
		t = expm1_64(l, bin(l, KO_MUL, f64c(l, 2), ac));
		y = bin(l, KO_DIV, t, bin(l, KO_ADD, t, f64c(l, 2)));
		y = sel(l, bin(l, KO_GT, a, f64c(l, 22)), f64c(l, 1), y);
		return sel(l, nan, x, signed64(l, x, y));
	}
	if (op == KO_SINH) {
		t = expm1_64(l, ac);
		y = bin(l, KO_MUL, f64c(l, 0.5), bin(l, KO_ADD, t,
		        bin(l, KO_DIV, t, bin(l, KO_ADD, t, f64c(l, 1)))));
	} else {
		t = exp64x(l, ac, 0);
		y = bin(l, KO_ADD, bin(l, KO_MUL, f64c(l, 0.5), t), bin(l, KO_DIV, f64c(l, 0.5), t));
	}
	H = exp64x(l, bin(l, KO_MUL, f64c(l, 0.5), a), 0);
	big = sel(l, bin(l, KO_GT, a, f64c(l, 709)),
	          bin(l, KO_MUL, bin(l, KO_MUL, f64c(l, 0.5), H), H),
	          bin(l, KO_MUL, f64c(l, 0.5), exp64x(l, a, 0)));
	y = sel(l, bin(l, KO_GT, a, f64c(l, 22)), big, y);
	return sel(l, nan, x, op == KO_SINH ? signed64(l, x, y) : y);
}

/* log(x) for finite x > 0 as hi + *lo: x = 2^e m, m in [sqrt(1/2),
 * sqrt(2)), f = m - 1 (exact), s = f / (2 + f), log(m) = f - hf + s (hf +
 * R) with hf = f^2 / 2 and R = sum 2 s^2k / (2k + 1) to k = 9 (Taylor; the
 * rest is below 2^-57 of the result).  e ln2hi + f is summed exactly (Fast2Sum:
 * |e ln2hi| >= ln2 > |f| unless e = 0), so hi + lo is good to about 2^-56
 * of the result: pow's b log|a| keeps its accuracy for moderate b.
 * Subnormal x is scaled by 2^54 first. */
static KRef
log64dd(L *l, KRef x, KRef *lo)
{
	static const double p[] = { 2.0 / 19, 2.0 / 17, 2.0 / 15, 2.0 / 13,
		2.0 / 11, 2.0 / 9, 2.0 / 7, 2.0 / 5, 2.0 / 3 };
	KB *kb = &l->kb;
	KRef sub, xs, u, t, ef, m, f, s, z, R, hf, A, h1, l1, c2, lt, hi;

	sub = bin(l, KO_LT, x, f64c(l, 2.2250738585072014e-308));
	xs = sel(l, sub, bin(l, KO_MUL, x, f64c(l, 18014398509481984.0)), x);
	u = kb_un(kb, KO_BITS, xs);
	t = bin(l, KO_SUB, u, ci(l, DT_U64, 0x3fe6a09e667f3bcdLL));
	ef = kb_cast(kb, DT_I64, t);
	ef = bin(l, KO_SHRM, ef, ci(l, DT_I64, 52));
	ef = bin(l, KO_SUB, ef, sel(l, sub, ci(l, DT_I64, 54), ci(l, DT_I64, 0)));
	ef = kb_cast(kb, DT_F64, ef);
	m = kb_un(kb, KO_FROMBITS, bin(l, KO_ADD, bin(l, KO_BAND, t,
	          ci(l, DT_U64, 0x000fffffffffffffLL)), ci(l, DT_U64, 0x3fe6a09e667f3bcdLL)));
	f = bin(l, KO_SUB, m, f64c(l, 1));
	s = bin(l, KO_DIV, f, bin(l, KO_ADD, f64c(l, 2), f));
	z = bin(l, KO_MUL, s, s);
	R = bin(l, KO_MUL, horner64(l, z, p, 9), z);
	hf = bin(l, KO_MUL, bin(l, KO_MUL, f64c(l, 0.5), f), f);
	A = bin(l, KO_MUL, ef, f64c(l, LN2HI64));
	h1 = bin(l, KO_ADD, A, f);
	l1 = bin(l, KO_ADD, bin(l, KO_SUB, A, h1), f);
	c2 = bin(l, KO_SUB, bin(l, KO_MUL, s, bin(l, KO_ADD, hf, R)), hf);
	lt = bin(l, KO_ADD, l1, bin(l, KO_ADD, c2, bin(l, KO_MUL, ef, f64c(l, LN2LO64))));
	hi = bin(l, KO_ADD, h1, lt);
	*lo = bin(l, KO_ADD, bin(l, KO_SUB, h1, hi), lt);
	return hi;
}

/* log on every f64: NaN, negative, 0 and inf as C's log. */
static KRef
log64(L *l, KRef x)
{
	KRef lo, hi = log64dd(l, x, &lo);

	return sel(l, bin(l, KO_NE, x, x), x,
	       sel(l, bin(l, KO_LT, x, f64c(l, 0)), f64c(l, NAN),
	       sel(l, bin(l, KO_EQ, x, f64c(l, 0)), f64c(l, -INFINITY),
	       sel(l, bin(l, KO_EQ, x, f64c(l, INFINITY)), x, bin(l, KO_ADD, hi, lo)))));
}

/* Dekker's split of a into 26 + 26 bits (a * (2^27 + 1) must not overflow:
 * |a| < 2^996). */
static void
split64(L *l, KRef a, KRef *h, KRef *t)
{
	KRef c = bin(l, KO_MUL, a, f64c(l, 134217729.0));

	*h = bin(l, KO_SUB, c, bin(l, KO_SUB, c, a));
	*t = bin(l, KO_SUB, a, *h);
}

/*
 * a b + c rounded once in f64 without an fma (KCaps.no_fma_f64:
 * freestanding C, wasm): Boldo and Melquiond's emulation through rounding
 * to odd.  a b = ph + pl exactly (Dekker), c + ph = sh + sl exactly
 * (TwoSum), v = pl + sl rounded to odd (the sum rounded to nearest,
 * moved one ulp toward the exact sum when it was inexact and came out
 * even), and sh + v rounded to nearest is the correctly rounded a b + c.
 * It holds without underflow or overflow: |a|, |b| < 2^995 (the split),
 * |a b| >= 2^-969 (pl exact), |a b|, |c| < 2^1020 (no inf in the sums).
 * Elsewhere, and for a b = 0 or non-finite operands, a b + c as two
 * roundings: the f64 expansions that use an fma (sin, cos, tan, erf) feed
 * it reduced arguments and coefficients, well inside the range.
 */
static KRef
fma64_soft(L *l, KRef a, KRef b, KRef c)
{
	KB *kb = &l->kb;
	KRef ph = bin(l, KO_MUL, a, b), aa = kb_un(kb, KO_ABS, a), ab = kb_un(kb, KO_ABS, b);
	KRef aph = kb_un(kb, KO_ABS, ph), z = f64c(l, 0), ok, as, bs, ah, at, bh, bt;
	KRef pl, sh, sl, bb, t, e, tb, one = ci(l, DT_U64, 1), toward, v;

	ok = bin(l, KO_AND, bin(l, KO_AND, bin(l, KO_LT, aa, f64c(l, 0x1p995)),
	                                   bin(l, KO_LT, ab, f64c(l, 0x1p995))),
	         bin(l, KO_AND, bin(l, KO_AND, bin(l, KO_GE, aph, f64c(l, 0x1p-969)),
	                                   bin(l, KO_LT, aph, f64c(l, 0x1p1020))),
	             bin(l, KO_LT, kb_un(kb, KO_ABS, c), f64c(l, 0x1p1020))));
	as = sel(l, ok, a, z);
	bs = sel(l, ok, b, z);
	split64(l, as, &ah, &at);
	split64(l, bs, &bh, &bt);
	ph = bin(l, KO_MUL, as, bs);
	pl = bin(l, KO_ADD, bin(l, KO_ADD, bin(l, KO_ADD, bin(l, KO_SUB, bin(l, KO_MUL, ah, bh), ph),
	                                    bin(l, KO_MUL, ah, bt)), bin(l, KO_MUL, at, bh)),
	         bin(l, KO_MUL, at, bt));
	sh = bin(l, KO_ADD, c, ph);
	bb = bin(l, KO_SUB, sh, c);
	sl = bin(l, KO_ADD, bin(l, KO_SUB, c, bin(l, KO_SUB, sh, bb)), bin(l, KO_SUB, ph, bb));
	t = bin(l, KO_ADD, pl, sl);
	bb = bin(l, KO_SUB, t, pl);
	e = bin(l, KO_ADD, bin(l, KO_SUB, pl, bin(l, KO_SUB, t, bb)), bin(l, KO_SUB, sl, bb));
	/* to odd: an inexact even t steps toward t + e, in magnitude up when
	 * e has t's sign (the bits of a float grow with its magnitude) */
	tb = kb_un(kb, KO_BITS, t);
	toward = sel(l, bin(l, KO_XOR, bin(l, KO_LT, t, z), bin(l, KO_LT, e, z)),
	             bin(l, KO_SUB, tb, one), bin(l, KO_ADD, tb, one));
	v = sel(l, bin(l, KO_AND, bin(l, KO_NE, e, z),
	               bin(l, KO_EQ, bin(l, KO_BAND, tb, one), ci(l, DT_U64, 0))),
	        kb_un(kb, KO_FROMBITS, toward), t);
	return sel(l, ok, bin(l, KO_ADD, sh, v), bin(l, KO_ADD, bin(l, KO_MUL, a, b), c));
}

/* a b + c rounded once: the target's fma, or for f64 where it has none
 * (KCaps.no_fma_f64) fma64_soft */
static KRef
lfma(L *l, KRef a, KRef b, KRef c)
{
	if (dt_of(l, a) == DT_F64 && l->caps && l->caps->no_fma_f64)
		return fma64_soft(l, a, b, c);
	return kb_fma(&l->kb, a, b, c);
}

/* pow(a, b) = exp(b log|a|) with log|a| as hi + lo and b hi as an exact
 * product (Dekker: no fma in the kernel IR), so the argument of exp is good
 * to about |b| 2^-56 (absolute): within 1.5 + |b| / 8 ulps.  C's special
 * cases: b = 0 or a = 1 give 1 (NaN too), |a| = 1 with b = +-inf gives 1,
 * a finite negative needs an integer b (else NaN), an odd integer b keeps
 * a's sign (-0 and -inf too). */
static KRef
pow64(L *l, KRef a, KRef b)
{
	KRef aa = kb_un(&l->kb, KO_ABS, a), one = f64c(l, 1), lo, hi, ok, ah, at, bh, bt;
	KRef yh, yl, r, bint, hb, odd, neg, nan, fin, bb;

	ok = bin(l, KO_AND, bin(l, KO_LT, aa, f64c(l, INFINITY)),
	         bin(l, KO_GT, aa, f64c(l, 0)));
	hi = log64dd(l, sel(l, ok, aa, one), &lo);
	hi = sel(l, ok, hi, sel(l, bin(l, KO_EQ, aa, f64c(l, 0)), f64c(l, -INFINITY),
	                        sel(l, bin(l, KO_NE, aa, aa), aa, f64c(l, INFINITY))));
	lo = sel(l, ok, lo, f64c(l, 0));
	/* b and hi bounded for the split; beyond, yh alone decides */
	bb = sel(l, bin(l, KO_LT, kb_un(&l->kb, KO_ABS, b), f64c(l, 1e300)), b, f64c(l, 0));
	split64(l, bb, &bh, &bt);
	split64(l, sel(l, ok, hi, f64c(l, 0)), &ah, &at);
	yh = bin(l, KO_MUL, b, hi);
	yl = bin(l, KO_ADD, bin(l, KO_ADD, bin(l, KO_ADD, bin(l, KO_SUB,
	         bin(l, KO_MUL, ah, bh), yh), bin(l, KO_MUL, ah, bt)),
	         bin(l, KO_MUL, at, bh)), bin(l, KO_MUL, at, bt));
	yl = bin(l, KO_ADD, yl, bin(l, KO_MUL, b, lo));
	fin = bin(l, KO_AND, ok, bin(l, KO_LT, kb_un(&l->kb, KO_ABS, yh), f64c(l, 800)));
	r = exp64x(l, yh, sel(l, fin, yl, f64c(l, 0)));
	bint = bin(l, KO_EQ, kb_un(&l->kb, KO_FLOOR, b), b);
	hb = bin(l, KO_MUL, b, f64c(l, 0.5));
	odd = bin(l, KO_AND, bint, bin(l, KO_NE, kb_un(&l->kb, KO_FLOOR, hb), hb));
	neg = bin(l, KO_NE, bin(l, KO_SHRM, kb_un(&l->kb, KO_BITS, a), ci(l, DT_U64, 63)),
	          ci(l, DT_U64, 0));
	r = sel(l, bin(l, KO_AND, neg, odd), kb_un(&l->kb, KO_NEG, r), r);
	nan = bin(l, KO_AND, bin(l, KO_LT, a, f64c(l, 0)),
	          bin(l, KO_AND, bin(l, KO_GT, a, f64c(l, -INFINITY)), kb_un(&l->kb, KO_NOT, bint)));
	r = sel(l, nan, f64c(l, NAN), r);
	r = sel(l, bin(l, KO_AND, bin(l, KO_EQ, aa, one),
	               bin(l, KO_EQ, kb_un(&l->kb, KO_ABS, b), f64c(l, INFINITY))), one, r);
	return sel(l, bin(l, KO_OR, bin(l, KO_EQ, b, f64c(l, 0)), bin(l, KO_EQ, a, one)),
	           one, r);
}

/* pow on f32 through f64: b log|a| in f64 keeps pow64's error far below
 * an f32 ulp for every b an f32 result can take (|b| < 2^31 or it
 * overflows or underflows), so the result is rounded about once; an f64
 * pow of the target's own (libm_f64) where it has one. */
static KRef
pow32(L *l, KRef a, KRef b)
{
	KRef a64 = kb_cast(&l->kb, DT_F64, a), b64 = kb_cast(&l->kb, DT_F64, b);

	return kb_cast(&l->kb, DT_F32, l->caps && l->caps->libm_f64 ?
	               bin(l, KO_POW, a64, b64) : pow64(l, a64, b64));
}

/* ---- f64 sin, cos, tan ------------------------------------------------ *
 *
 * The f32 method (reduce_pio2) at f64 width: x = m 2^e, m of 53 bits, and
 * x 2/pi mod 4 from m times the 192 bits of 2/pi from the one worth 2^1
 * at e (2 integer bits, 190 fraction bits: the closest a double comes to
 * a multiple of pi/2 is about 2^-61 of it, and m times the bits left out
 * must stay far below that), in 32-bit limbs summed with carries in u64.  The
 * fraction, rounded to the nearest quadrant, is negated in integers when
 * negative (no cancellation in floating point) and becomes r + rl, r in
 * [-pi/4, pi/4], rl below half its ulp; then the Taylor series (sin to
 * r^17, cos to r^18: the next terms are below 2^-62 of the result).
 */

/* 2/pi after the binary point, 32 bits to a word, behind two words of
 * zeros (the bits an exponent below 1 would reach). */
static const uint32_t two_over_pi64[39] = {
	0, 0,
	0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599,
	0x3c439041, 0xfe5163ab, 0xdebbc561, 0xb7246e3a, 0x424dd2e0,
	0x06492eea, 0x09d1921c, 0xfe1deb1c, 0xb129a73e, 0xe88235f5,
	0x2ebb4484, 0xe99c7026, 0xb45f7e41, 0x3991d639, 0x835339f4,
	0x9c845f8b, 0xbdf9283b, 0x1ff897ff, 0xde05980f, 0xef2f118b,
	0x5a0a6d1f, 0x6d367ecf, 0x27cb09b7, 0x4f463f66, 0x9e5fea2d,
	0x7527bac7, 0xebe5f17b, 0x3d0739f7, 0x8a5292ea, 0x6bfb5fb1,
	0x1f8d5d08, 0x56033046
};

/* Words w and w+1 of two_over_pi64 as one u64, w = j + k, j a run-time
 * i64 in [0, 32]. */
static KRef
tpi64_pair(L *l, KRef j, int k)
{
	KRef v = ci(l, DT_U64, (int64_t)((uint64_t)two_over_pi64[32 + k] << 32 |
	                                 two_over_pi64[33 + k]));   /* k <= 5 */

	for (int i = 31; i >= 0; i--)
		v = sel(l, bin(l, KO_EQ, j, ci(l, DT_I64, i)),
		        ci(l, DT_U64, (int64_t)((uint64_t)two_over_pi64[i + k] << 32 |
		                                two_over_pi64[i + k + 1])), v);
	return v;
}

static KRef
lo32(L *l, KRef v)
{
	return bin(l, KO_BAND, v, ci(l, DT_U64, 0xffffffff));
}

static KRef
hi32(L *l, KRef v)
{
	return bin(l, KO_SHRM, v, ci(l, DT_U64, 32));
}

/* |x| reduced, as reduce_pio2 for f64: r + *rl and the quadrant *q (i64) */
static KRef
reduce_pio2_64(L *l, KRef x, KRef *q, KRef *rl)
{
	KB *kb = &l->kb;
	KRef a = kb_un(kb, KO_ABS, x), small, fin, xr, u, be, m, mh, ml, t0, j, sh;
	KRef w[6], A[6], B[6], limb[6], carry, T, U, up, borrow, Tn, Un, th, tl, fh, fl, t, r;
	KRef z64 = ci(l, DT_U64, 0);

	small = bin(l, KO_LT, a, f64c(l, 0.78539816339744828));
	fin = bin(l, KO_LT, a, f64c(l, INFINITY));
	xr = sel(l, bin(l, KO_AND, fin, kb_un(kb, KO_NOT, small)), a, f64c(l, 1));
	u = kb_un(kb, KO_BITS, xr);
	be = kb_cast(kb, DT_I64, bin(l, KO_SHRM, u, ci(l, DT_U64, 52)));
	m = bin(l, KO_BOR, bin(l, KO_BAND, u, ci(l, DT_U64, 0xfffffffffffffLL)),
	        ci(l, DT_U64, (int64_t)1 << 52));
	mh = hi32(l, m);
	ml = lo32(l, m);
	/* the window starts at bit be - 1013 of two_over_pi64 (1022 <= be <= 2046) */
	t0 = bin(l, KO_SUB, be, ci(l, DT_I64, 1013));
	j = bin(l, KO_SHRM, t0, ci(l, DT_I64, 5));
	sh = kb_cast(kb, DT_U64, bin(l, KO_SUB, ci(l, DT_I64, 32),
	                             bin(l, KO_BAND, t0, ci(l, DT_I64, 31))));   /* 1..32 */
	for (int k = 0; k < 6; k++) {
		w[k] = lo32(l, bin(l, KO_SHRM, tpi64_pair(l, j, k), sh));
		A[k] = bin(l, KO_MUL, ml, w[k]);     /* limbs 5-k, 6-k */
		B[k] = bin(l, KO_MUL, mh, w[k]);     /* limbs 6-k, 7-k */
	}
	/* limbs 0..5 of m w (the point is at bit 30 of limb 5) */
	carry = z64;
	for (int p = 0; p < 6; p++) {
		KRef s = bin(l, KO_ADD, carry, lo32(l, A[5 - p]));
		if (p >= 1)
			s = bin(l, KO_ADD, bin(l, KO_ADD, s, hi32(l, A[6 - p])), lo32(l, B[6 - p]));
		if (p >= 2)
			s = bin(l, KO_ADD, s, hi32(l, B[7 - p]));
		limb[p] = lo32(l, s);
		carry = hi32(l, s);
	}
	*q = kb_cast(kb, DT_I64, bin(l, KO_BAND, bin(l, KO_SHRM, limb[5], ci(l, DT_U64, 30)),
	                             ci(l, DT_U64, 3)));
	/* the fraction: T (62 bits: 2^-1 .. 2^-62), U (64 bits: .. 2^-126);
	 * the bits below are left out (less than 2^-126, and 2/pi's beyond the
	 * window add less than 2^53 2^-190) */
	T = bin(l, KO_BOR, bin(l, KO_SHLM, bin(l, KO_BAND, limb[5], ci(l, DT_U64, 0x3fffffff)),
	                       ci(l, DT_U64, 32)), limb[4]);
	U = bin(l, KO_BOR, bin(l, KO_SHLM, limb[3], ci(l, DT_U64, 32)), limb[2]);
	/* 1/2 or more: the next quadrant, and the magnitude 2^126 - (T, U) */
	up = bin(l, KO_GE, T, ci(l, DT_U64, (int64_t)1 << 61));
	*q = bin(l, KO_BAND, bin(l, KO_ADD, *q, sel(l, up, ci(l, DT_I64, 1), ci(l, DT_I64, 0))),
	         ci(l, DT_I64, 3));
	borrow = sel(l, bin(l, KO_EQ, U, z64), z64, ci(l, DT_U64, 1));
	Tn = sel(l, up, bin(l, KO_SUB, bin(l, KO_SUB, ci(l, DT_U64, (int64_t)1 << 62), T), borrow), T);
	Un = sel(l, up, bin(l, KO_SUB, z64, U), U);
	/* (Tn 2^-62 + Un 2^-126) as fh + fl, then times pi/2 as r + rl */
	th = kb_cast(kb, DT_F64, Tn);
	tl = kb_cast(kb, DT_I64, th);
	kb->k->node[tl].op = KC_RAW;                 /* th <= 2^62 */
	tl = kb_cast(kb, DT_F64, bin(l, KO_SUB, kb_cast(kb, DT_I64, Tn), tl));
	fh = bin(l, KO_MUL, th, f64c(l, 0x1p-62));
	fl = bin(l, KO_ADD, bin(l, KO_MUL, tl, f64c(l, 0x1p-62)),
	         bin(l, KO_MUL, kb_cast(kb, DT_F64, Un), f64c(l, 0x1p-126)));
	t = lfma(l, fh, f64c(l, 6.123233995736766e-17), bin(l, KO_MUL, fl, f64c(l, 1.5707963267948966)));
	r = lfma(l, fh, f64c(l, 1.5707963267948966), t);
	*rl = bin(l, KO_ADD, lfma(l, fh, f64c(l, 1.5707963267948966), kb_un(kb, KO_NEG, r)), t);
	r = sel(l, up, kb_un(kb, KO_NEG, r), r);
	*rl = sel(l, up, kb_un(kb, KO_NEG, *rl), *rl);
	*rl = sel(l, small, f64c(l, 0), *rl);
	*q = sel(l, small, ci(l, DT_I64, 0), *q);
	r = sel(l, small, a, r);
	return sel(l, fin, r, f64c(l, NAN));
}

static KRef
trig64(L *l, int op, KRef x)
{
	static const double ps[] = { 1.0 / 355687428096000.0, -1.0 / 1307674368000.0,
		1.0 / 6227020800.0, -1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0,
		1.0 / 120.0, -1.0 / 6.0 };
	static const double pc[] = { -1.0 / 6402373705728000.0, 1.0 / 20922789888000.0,
		-1.0 / 87178291200.0, 1.0 / 479001600.0, -1.0 / 3628800.0, 1.0 / 40320.0,
		-1.0 / 720.0, 1.0 / 24.0 };
	KB *kb = &l->kb;
	KRef q, rl, r = reduce_pio2_64(l, x, &q, &rl), z, s, c, hz, w, tail;

	z = bin(l, KO_MUL, r, r);
	tail = lfma(l, bin(l, KO_MUL, r, z), horner64(l, z, ps, 8),
	              bin(l, KO_MUL, rl, lfma(l, z, f64c(l, -0.5), f64c(l, 1))));
	s = bin(l, KO_ADD, r, tail);
	hz = bin(l, KO_MUL, f64c(l, 0.5), z);
	w = bin(l, KO_SUB, f64c(l, 1), hz);
	tail = bin(l, KO_SUB, bin(l, KO_SUB, f64c(l, 1), w), hz);
	tail = bin(l, KO_ADD, tail, lfma(l, bin(l, KO_MUL, z, z), horner64(l, z, pc, 8),
	                                   kb_un(kb, KO_NEG, bin(l, KO_MUL, r, rl))));
	c = bin(l, KO_ADD, w, tail);
	return trig_quadrant(l, op, x, kb_cast(kb, DT_I32, q), s, c, f64c(l, 0));
}

/* erf for f64.  |x| < 7/8: x P(x^2), P the Taylor series of erf(x) / x
 * (2 / sqrt(pi) (-1)^n / (n! (2n + 1)), to n = 17; the next term is below
 * 2^-58).  7/8 <= |x| < 6: 1 - e^-x^2 F(|x|), F(x) = e^x^2 erfc(x) as a
 * Chebyshev series on [7/8, 6] (degree 29, fitted for burncc in 50-digit
 * arithmetic: truncation below 3e-17 of F), summed by Clenshaw's
 * recurrence; x^2 goes to exp64x as an exact hi + lo pair (one fma), so
 * the error of e^-x^2 F is a fraction of an ulp of the result.  |x| >= 6:
 * +-1 (erfc(6) < 2^-55).  NaN stays NaN.  (The switch at 1 left 1.2 ulps
 * near 0.99, where the series' terms add up to twice the result.) */
static KRef
erf64(L *l, KRef x)
{
	static const double tay[] = {
		-9.0639708428086728e-17, 1.6342614095367152e-15,
		-2.7835162072109215e-14, 4.4632242632864775e-13, -6.7113668551641105e-12,
		9.4227590646504113e-11, -1.2290555301717928e-09, 1.4807192815879218e-08,
		-1.6365844691234924e-07, 1.6462114365889248e-06, -1.492565035840625e-05,
		0.00012055332981789664, -0.00085483270234508533, 0.0052239776254421879,
		-0.026866170645131252, 0.11283791670955126, -0.37612638903183754,
		1.1283791670955126 };
	static const double ch[] = {
		0.21099537231455212, -0.16212059321839578, 0.059549252634615038,
		-0.021023980848584669, 0.0071637627815766191, -0.0023636664958322389,
		0.00075722175562493023, -0.00023606516960034384, 7.1753730663095825e-05,
		-2.1299832878339176e-05, 6.1837131429067642e-06, -1.7579661979407313e-06,
		4.8994123996696948e-07, -1.339929562328852e-07, 3.5992560836897009e-08,
		-9.5035807112782211e-09, 2.468450150595174e-09, -6.3112455064961812e-10,
		1.5893744718215422e-10, -3.9446040697023024e-11, 9.6532480865852917e-12,
		-2.3304865082385288e-12, 5.5528787336922658e-13, -1.3063825902987196e-13,
		3.0358015217648548e-14, -6.9708624218581763e-15, 1.5821865040600245e-15,
		-3.5504971466240596e-16, 7.8648409511798979e-17, -1.6500968631446031e-17 };
	KB *kb = &l->kb;
	int n = (int)(sizeof ch / sizeof ch[0]), nt = (int)(sizeof tay / sizeof tay[0]);
	KRef a = kb_un(kb, KO_ABS, x), small, s2, Q, ac, t, t2, b1, b2, bt, F, hi, lo, y;

	/* x (c0 + s Q(s)), s = x^2, c0 = 2 / sqrt(pi) in two parts: fma
	 * steps, and c0's low part added to the small term, keep the sum
	 * under an ulp */
	s2 = bin(l, KO_MUL, x, x);
	Q = f64c(l, tay[0]);
	for (int i = 1; i < nt - 1; i++)
		Q = lfma(l, Q, s2, f64c(l, tay[i]));
	small = lfma(l, x, f64c(l, tay[nt - 1]), bin(l, KO_MUL, x,
	               lfma(l, s2, Q, f64c(l, 1.5335459613165881e-17))));
	/* a clamped to [1, 6] (NaN to 1): the series' interval */
	ac = sel(l, bin(l, KO_GT, a, f64c(l, 6)), f64c(l, 6),
	         sel(l, bin(l, KO_GE, a, f64c(l, 0.875)), a, f64c(l, 0.875)));
	t = bin(l, KO_DIV, bin(l, KO_SUB, bin(l, KO_ADD, ac, ac), f64c(l, 6.875)),
	        f64c(l, 5.125));   /* (2a - 6.875) / 5.125 in [-1, 1] */
	t2 = bin(l, KO_ADD, t, t);
	b1 = f64c(l, ch[n - 1]);
	b2 = f64c(l, 0);
	for (int i = n - 2; i >= 1; i--) {
		bt = bin(l, KO_ADD, lfma(l, t2, b1, kb_un(kb, KO_NEG, b2)), f64c(l, ch[i]));
		b2 = b1;
		b1 = bt;
	}
	F = bin(l, KO_ADD, lfma(l, t, b1, kb_un(kb, KO_NEG, b2)), f64c(l, ch[0]));
	hi = bin(l, KO_MUL, ac, ac);
	lo = lfma(l, ac, ac, kb_un(kb, KO_NEG, hi));
	y = bin(l, KO_SUB, f64c(l, 1), bin(l, KO_MUL, exp64x(l, kb_un(kb, KO_NEG, hi),
	                                                     kb_un(kb, KO_NEG, lo)), F));
	y = sel(l, bin(l, KO_GE, a, f64c(l, 6)), f64c(l, 1), y);
	y = sel(l, bin(l, KO_LT, x, f64c(l, 0)), kb_un(kb, KO_NEG, y), y);
	return sel(l, bin(l, KO_LT, a, f64c(l, 0.875)), small, sel(l, bin(l, KO_NE, x, x), x, y));
}


/* ---- f64 inverse trigonometric and hyperbolic functions ----------------- *
 *
 * Each is built from pairs hi + lo (double-doubles) so that the one
 * rounding that counts is the last addition.  The pair steps: Fast2Sum
 * (|a| >= |b|) and TwoSum give a + b exactly; a b exactly by an fma;
 * n / d and sqrt(w) of pairs by the residual, n - q d or w - s^2, which
 * one fma gives exactly when q or s is within a few ulps.
 *
 * atan, asin and acos are base + sign atan(t), t = th + tl in [0, 1]
 * (atan: t = |x| or 1/|x|; asin and acos: t = |x| / s or s / |x|, s =
 * sqrt(1 - x^2) from the exact pair (1 - |x|) (1 + |x|)), base 0, pi/2
 * or pi.  t is reduced to u = (t - c) / (1 + t c), c = k/8 the nearest
 * eighth (t - c is exact), |u| <= 1/16, and atan(t) = atan(c) + atan(u):
 * the table's base + sign atan(c) as a pair, and atan(u)'s odd Taylor
 * series to u^15 (the next term is below 2^-64 of u).  u + ul is the
 * quotient as a pair, good to about 2^-100 of u.
 *
 * asinh, acosh and atanh are log(y) of a pair y (asinh: |x| + sqrt(x^2 +
 * 1); acosh: x + sqrt((x - 1)(x + 1)); atanh: (1 + |x|) / (1 - |x|),
 * halved), as log64dd(yh) + yl / yh: a y close to 1 keeps its low part,
 * where log1p would be needed otherwise.  Beyond 2^28 asinh and acosh are
 * log|x| + ln2 (the next term is below 2^-58 of it); below 1/8 asinh and
 * atanh are their odd Taylor series (to x^19: the next term is below
 * 2^-60 of x).
 */

/* *s + *e = a + b exactly, |a| >= |b| or a = 0 */
static void
fast2sum(L *l, KRef a, KRef b, KRef *s, KRef *e)
{
	*s = bin(l, KO_ADD, a, b);
	*e = bin(l, KO_SUB, b, bin(l, KO_SUB, *s, a));
}

/* *s + *e = a + b exactly */
static void
two_sum(L *l, KRef a, KRef b, KRef *s, KRef *e)
{
	KRef bb;

	*s = bin(l, KO_ADD, a, b);
	bb = bin(l, KO_SUB, *s, a);
	*e = bin(l, KO_ADD, bin(l, KO_SUB, a, bin(l, KO_SUB, *s, bb)), bin(l, KO_SUB, b, bb));
}

/* (ah + al)(bh + bl) as *h + *lo, to about 2^-104 of it */
static void
mul_dd(L *l, KRef ah, KRef al, KRef bh, KRef bl, KRef *h, KRef *lo)
{
	*h = bin(l, KO_MUL, ah, bh);
	*lo = bin(l, KO_ADD, lfma(l, ah, bh, kb_un(&l->kb, KO_NEG, *h)),
	          bin(l, KO_ADD, bin(l, KO_MUL, ah, bl), bin(l, KO_MUL, al, bh)));
}

/* (nh + nl) / (dh + dl) as q + *ql; dh != 0 */
static KRef
div_dd(L *l, KRef nh, KRef nl, KRef dh, KRef dl, KRef *ql)
{
	KRef q = bin(l, KO_DIV, nh, dh), r;

	r = bin(l, KO_ADD, lfma(l, kb_un(&l->kb, KO_NEG, q), dh, nh), nl);
	*ql = bin(l, KO_DIV, bin(l, KO_SUB, r, bin(l, KO_MUL, q, dl)), dh);
	return q;
}

/* sqrt(wh + wl) as s + *sl for wh >= 0 (0 for wh = 0) */
static KRef
sqrt_dd(L *l, KRef wh, KRef wl, KRef *sl)
{
	KRef s = kb_un(&l->kb, KO_SQRT, wh), pos = bin(l, KO_GT, wh, f64c(l, 0));
	KRef d = sel(l, pos, bin(l, KO_ADD, s, s), f64c(l, 1));

	*sl = sel(l, pos, bin(l, KO_DIV, bin(l, KO_ADD, lfma(l, kb_un(&l->kb, KO_NEG, s), s, wh),
	                                      wl), d), f64c(l, 0));
	return s;
}

/* atan(k/8), k = 0..8, as hi + lo */
static const double atan_eighth[9][2] = {
	{ 0.0, 0.0 },
	{ 0.12435499454676144, -3.1253241424539383e-18 },
	{ 0.24497866312686414, 1.0698755618734451e-17 },
	{ 0.35877067027057225, -2.4623815582638635e-17 },
	{ 0.4636476090008061, 2.2698777452961687e-17 },
	{ 0.5585993153435624, -5.4556305485916264e-18 },
	{ 0.6435011087932844, 1.5834785051444286e-17 },
	{ 0.7188299996216245, -2.1478388444456983e-17 },
	{ 0.7853981633974483, 3.061616997868383e-17 },
};
#define PIO2HI64 1.5707963267948966
#define PIO2LO64 6.123233995736766e-17

/* base + sign atan(t) for t = th + tl in [0, 1 + 2^-50], mode an f64 in
 * 0 .. nmode - 1: 0 atan(t), 1 pi/2 - atan(t), 2 pi/2 + atan(t), 3 pi -
 * atan(t).  The table's entries, base + sign atan(k/8), are summed here
 * as pairs in double. */
static KRef
atan_dd(L *l, KRef th, KRef tl, KRef mode, int nmode)
{
	static const double p[] = { -1.0 / 15, 1.0 / 13, -1.0 / 11, 1.0 / 9,
		-1.0 / 7, 1.0 / 5, -1.0 / 3 };
	static const double base[4][2] = { { 0, 0 }, { PIO2HI64, PIO2LO64 },
		{ PIO2HI64, PIO2LO64 }, { 2 * PIO2HI64, 2 * PIO2LO64 } };
	static const int sign[4] = { 1, -1, 1, -1 };
	KB *kb = &l->kb;
	KRef k, c, n, nh, nl, dh, dl, u, ul, z, q, neg, idx, Hh = 0, Hl = 0, v, s, e, tail;

	k = kb_un(kb, KO_FLOOR, bin(l, KO_ADD, bin(l, KO_MUL, th, f64c(l, 8)), f64c(l, 0.5)));
	c = bin(l, KO_MUL, k, f64c(l, 0.125));
	n = bin(l, KO_SUB, th, c);                       /* exact (Sterbenz) */
	two_sum(l, n, tl, &nh, &nl);
	dh = bin(l, KO_ADD, bin(l, KO_MUL, th, c), f64c(l, 1));
	dl = bin(l, KO_ADD, lfma(l, th, c, bin(l, KO_SUB, f64c(l, 1), dh)),
	         bin(l, KO_MUL, tl, c));
	u = div_dd(l, nh, nl, dh, dl, &ul);
	z = bin(l, KO_MUL, u, u);
	q = bin(l, KO_MUL, bin(l, KO_MUL, u, z), horner64(l, z, p, 7));
	/* the table: entry k + 9 mode */
	idx = bin(l, KO_ADD, bin(l, KO_MUL, mode, f64c(l, 9)), k);
	for (int m = 0; m < nmode; m++)
		for (int j = 0; j < 9; j++) {
			double a = sign[m] * atan_eighth[j][0], al = sign[m] * atan_eighth[j][1];
			double hs = base[m][0] + a, bb = hs - base[m][0];
			double he = (base[m][0] - (hs - bb)) + (a - bb), lo = he + base[m][1] + al;
			double hi = hs + lo;
			KRef at = bin(l, KO_EQ, idx, f64c(l, 9 * m + j));

			lo -= hi - hs;
			Hh = Hh ? sel(l, at, f64c(l, hi), Hh) : f64c(l, hi);
			Hl = Hl ? sel(l, at, f64c(l, lo), Hl) : f64c(l, lo);
		}
	neg = bin(l, KO_OR, bin(l, KO_EQ, mode, f64c(l, 1)), bin(l, KO_EQ, mode, f64c(l, 3)));
	v = sel(l, neg, kb_un(kb, KO_NEG, u), u);
	tail = bin(l, KO_ADD, ul, q);
	fast2sum(l, Hh, v, &s, &e);
	tail = bin(l, KO_ADD, bin(l, KO_ADD, e, Hl), sel(l, neg, kb_un(kb, KO_NEG, tail), tail));
	return bin(l, KO_ADD, s, tail);
}

/* atan: t = |x| (mode 0) or 1 / |x| (mode 1) as a pair; |x| beyond 2^60
 * gives pi/2 as 2^60 does */
static KRef
atan64(L *l, KRef x)
{
	KRef a = kb_un(&l->kb, KO_ABS, x), inv, ac, th, tl, y;

	inv = bin(l, KO_GT, a, f64c(l, 1));
	ac = sel(l, inv, sel(l, bin(l, KO_GT, a, f64c(l, 0x1p60)), f64c(l, 0x1p60), a), f64c(l, 1));
	th = div_dd(l, f64c(l, 1), f64c(l, 0), ac, f64c(l, 0), &tl);
	th = sel(l, inv, th, sel(l, bin(l, KO_NE, a, a), f64c(l, 0), a));
	tl = sel(l, inv, tl, f64c(l, 0));
	y = atan_dd(l, th, tl, sel(l, inv, f64c(l, 1), f64c(l, 0)), 2);
	return sel(l, bin(l, KO_NE, x, x), x, signed64(l, x, y));
}

/* asin and acos: s = sqrt(1 - x^2) as a pair from (1 - a)(1 + a), a =
 * |x| <= 1; asin a = atan2(a, s), acos x = atan2(s, x): t the smaller
 * over the larger.  |x| > 1: NaN. */
static KRef
asincos64(L *l, int op, KRef x)
{
	KB *kb = &l->kb;
	KRef a = kb_un(kb, KO_ABS, x), ab, dh, dl, eh, el, wh, wl, sh, sl, big, th, tl;
	KRef nh, nl, vh, vl, mode, y, one = f64c(l, 1), z = f64c(l, 0);

	ab = sel(l, bin(l, KO_LE, a, one), a, z);     /* NaN and |x| > 1: 0 */
	fast2sum(l, one, kb_un(kb, KO_NEG, ab), &dh, &dl);
	fast2sum(l, one, ab, &eh, &el);
	mul_dd(l, dh, dl, eh, el, &wh, &wl);
	sh = sqrt_dd(l, wh, wl, &sl);
	/* t = a / s, or s / a where that is the smaller (big): asin's mode 1,
	 * acos's 0 */
	big = bin(l, KO_GT, ab, sh);
	nh = sel(l, big, sh, ab);
	nl = sel(l, big, sl, z);
	vh = sel(l, big, ab, sh);
	vl = sel(l, big, z, sl);
	th = div_dd(l, nh, nl, vh, vl, &tl);
	if (op == KO_ASIN) {
		y = atan_dd(l, th, tl, sel(l, big, one, z), 2);
		y = signed64(l, x, y);
	} else {
		/* x >= 0: atan(s / a) or pi/2 - atan(a / s); x < 0: pi minus
		 * those */
		mode = sel(l, bin(l, KO_LT, x, z), sel(l, big, f64c(l, 3), f64c(l, 2)),
		           sel(l, big, z, one));
		y = atan_dd(l, th, tl, mode, 4);
	}
	return sel(l, bin(l, KO_NE, x, x), x,
	           sel(l, bin(l, KO_GT, a, one), f64c(l, NAN), y));
}

/* log(yh + yl) as hi + *lo, yh finite and > 0, |yl| << yh */
static KRef
logdd64(L *l, KRef yh, KRef yl, KRef *lo)
{
	KRef hi = log64dd(l, yh, lo);

	*lo = bin(l, KO_ADD, *lo, bin(l, KO_DIV, yl, yh));
	return hi;
}

/* a + a^3 P(a^2), the odd series near 0 */
static KRef
odd64(L *l, KRef a, const double *c, int n)
{
	KRef z = bin(l, KO_MUL, a, a);

	return bin(l, KO_ADD, a, bin(l, KO_MUL, bin(l, KO_MUL, a, z), horner64(l, z, c, n)));
}

/* asinh (op KO_ASINH, y = a + sqrt(a^2 + 1)) and acosh (y = x + sqrt((x
 * - 1)(x + 1)), x >= 1): log y, or log a + ln2 beyond 2^28 */
static KRef
ashc64(L *l, int op, KRef x)
{
	static const double p[] = { 46189.0 / 5505024, -12155.0 / 1245184,
		6435.0 / 557056, -143.0 / 10240, 231.0 / 13312, -63.0 / 2816,
		35.0 / 1152, -5.0 / 112, 3.0 / 40, -1.0 / 6 };
	KB *kb = &l->kb;
	KRef a = op == KO_ASINH ? kb_un(kb, KO_ABS, x) : x, one = f64c(l, 1), z = f64c(l, 0);
	KRef big, am, ph, pl, wh, wl, e, sh, sl, yh, yl, hi, lo, s, dh, dl, eh, el, y, fin;

	big = bin(l, KO_GT, a, f64c(l, 0x1p28));
	fin = bin(l, KO_LT, a, f64c(l, INFINITY));
	/* a in the arm's range (NaN: 0 for asinh, 1 for acosh, as is x < 1) */
	am = op == KO_ASINH ? sel(l, bin(l, KO_GE, a, z), a, z) : sel(l, bin(l, KO_GE, a, one), a, one);
	am = sel(l, big, f64c(l, 0x1p28), am);
	if (op == KO_ASINH) {
		ph = bin(l, KO_MUL, am, am);
		pl = lfma(l, am, am, kb_un(kb, KO_NEG, ph));
		two_sum(l, ph, one, &wh, &e);
		wl = bin(l, KO_ADD, e, pl);
	} else {
		fast2sum(l, am, f64c(l, -1), &dh, &dl);
		fast2sum(l, am, one, &eh, &el);
		mul_dd(l, dh, dl, eh, el, &wh, &wl);
	}
	sh = sqrt_dd(l, wh, wl, &sl);
	fast2sum(l, op == KO_ASINH ? sh : am, op == KO_ASINH ? am : sh, &yh, &e);
	yl = bin(l, KO_ADD, e, sl);
	yh = sel(l, big, sel(l, fin, a, one), yh);
	yl = sel(l, big, z, yl);
	hi = logdd64(l, yh, yl, &lo);
	fast2sum(l, hi, sel(l, big, f64c(l, LN2HI64), z), &s, &e);
	y = bin(l, KO_ADD, s, bin(l, KO_ADD, bin(l, KO_ADD, e, lo),
	                          sel(l, big, f64c(l, LN2LO64), z)));
	y = sel(l, fin, y, f64c(l, INFINITY));
	if (op == KO_ASINH) {
		y = sel(l, bin(l, KO_LT, a, f64c(l, 0.125)), odd64(l, a, p, 10), y);
		return sel(l, bin(l, KO_NE, x, x), x, signed64(l, x, y));
	}
	return sel(l, bin(l, KO_NE, x, x), x, sel(l, bin(l, KO_LT, x, one), f64c(l, NAN), y));
}

/* atanh: log((1 + a) / (1 - a)) / 2 from the pairs 1 + a and 1 - a; the
 * series below 1/8; +-inf at +-1, NaN beyond */
static KRef
atanh64(L *l, KRef x)
{
	static const double p[] = { 1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13,
		1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3 };
	KRef a = kb_un(&l->kb, KO_ABS, x), one = f64c(l, 1), ab, dh, dl, eh, el, qh, ql, hi, lo, y;

	ab = sel(l, bin(l, KO_LT, a, one), a, f64c(l, 0.5));
	fast2sum(l, one, kb_un(&l->kb, KO_NEG, ab), &dh, &dl);
	fast2sum(l, one, ab, &eh, &el);
	qh = div_dd(l, eh, el, dh, dl, &ql);
	hi = logdd64(l, qh, ql, &lo);
	y = bin(l, KO_MUL, f64c(l, 0.5), bin(l, KO_ADD, hi, lo));
	y = sel(l, bin(l, KO_LT, a, f64c(l, 0.125)), odd64(l, a, p, 9), y);
	y = sel(l, bin(l, KO_EQ, a, one), f64c(l, INFINITY),
	        sel(l, bin(l, KO_GT, a, one), f64c(l, NAN), y));
	return sel(l, bin(l, KO_NE, x, x), x, signed64(l, x, y));
}


/* ---- fmod, exactly, for targets without a math library ------------------ *
 *
 * C's fmod(a, b) = a - n b, n = trunc(a / b), is exact: the result is a
 * multiple of b's ulp below |b|.  Here as long division in float steps:
 * with r = |a| and B = |b|, a step takes Bk = B 2^k, k the largest shift
 * that keeps r / Bk below 2^(M-2) (M the fraction bits), q = floor(r /
 * Bk) and r - q Bk by one fma.  That is exact when q is the true
 * quotient's floor or one above it: r and q Bk are multiples of Bk's ulp
 * and the difference lies in (-Bk, Bk).  A first fma shows whether q was
 * one off (its remainder falls outside [0, Bk), which rounding cannot
 * hide), q moves by one and a second fma gives the exact remainder; so a
 * division good to 2.5 ulps (Vulkan's) is enough, its quotient being
 * within 5/8 of the true one at this size.  A step lowers r's exponent by
 * M - 3 or leaves r below B: 43 steps cover f64's 2097 binades, 14
 * f32's 276.  Selects, no branches: the kernel stays one straight line.
 *
 * Without an f64 fma (KCaps.no_fma_f64: freestanding C, wasm) the f64
 * steps are narrower so that the product needs none: W = 28 in place of
 * M, so q < 2^26, and Bk = bh + bl with bh its top 26 significant bits
 * (the low 27 bits of its fraction masked off) and bl the rest (27 bits).
 * q bh and q bl are then exact (at most 52 and 53 bits, and multiples of
 * 2^-1074 where Bk is subnormal); r - q bh is exact (Sterbenz: q bh is
 * within a factor two of r, since q is the quotient's floor or one off);
 * so (r - q bh) - q bl is the exact r - q Bk rounded once: fma's value.
 * q bh cannot overflow: a q one above the quotient's floor comes from a
 * division that rounded up, so q Bk - r <= r 2^-53 <= 2^971 and q Bk <=
 * 2^1024, and q bh, at most 52 bits, is q Bk less q bl >= ulp(Bk) q, or
 * q Bk itself.  A step lowers r's exponent by 25: 84 steps.
 */

/* -q Bk + r, as kb_fma does, for q < 2^26 an integer, Bk and r >= 0 with
 * r within Bk of q Bk (above): exact without an fma (split products). */
static KRef
fms_split(L *l, KRef q, KRef Bk, KRef r)
{
	KB *kb = &l->kb;
	KRef bh, bl;

	bh = kb_un(kb, KO_FROMBITS, bin(l, KO_BAND, kb_un(kb, KO_BITS, Bk),
	                                ci(l, DT_U64, (int64_t)(~UINT64_C(0) << 27))));
	bl = bin(l, KO_SUB, Bk, bh);
	return bin(l, KO_SUB, bin(l, KO_SUB, r, bin(l, KO_MUL, q, bh)), bin(l, KO_MUL, q, bl));
}

/* floor(log2 v) for finite v > 0 (an integer of type it), subnormals
 * scaled into the normals first */
static KRef
expo_of(L *l, KRef v, int it, int M, int bias)
{
	int dt = dt_of(l, v), S = it == DT_I64 ? 64 : 32;
	KRef sub = bin(l, KO_LT, v, cf(l, dt, it == DT_I64 ? 0x1p-1022 : 0x1p-126));
	KRef vs = sel(l, sub, bin(l, KO_MUL, v, cf(l, dt, it == DT_I64 ? 0x1p64 : 0x1p32)), v);
	KRef f = bin(l, KO_SHRM, kb_un(&l->kb, KO_BITS, vs),
	             ci(l, it == DT_I64 ? DT_U64 : DT_U32, M));

	return bin(l, KO_SUB, kb_cast(&l->kb, it, f),
	           sel(l, sub, ci(l, it, bias + S), ci(l, it, bias)));
}

/* 2^k, k an integer of type it within the normal exponents */
static KRef
pow2_of(L *l, KRef k, int it, int M, int bias)
{
	KRef e = bin(l, KO_SHLM, bin(l, KO_ADD, k, ci(l, it, bias)), ci(l, it, M));

	return kb_un(&l->kb, KO_FROMBITS, kb_cast(&l->kb, it == DT_I64 ? DT_U64 : DT_U32, e));
}

static KRef
fmodx(L *l, KRef a, KRef b)
{
	KB *kb = &l->kb;
	int dt = dt_of(l, a), d64 = dt == DT_F64, M = d64 ? 52 : 23, bias = d64 ? 1023 : 127;
	int it = d64 ? DT_I64 : DT_I32, S = d64 ? 64 : 32, steps = d64 ? 43 : 14;
	int split = d64 && l->caps && l->caps->no_fma_f64, W = split ? 28 : M;
	KRef A = kb_un(kb, KO_ABS, a), B = kb_un(kb, KO_ABS, b), r = A;
	KRef sub, Bs, eb, kadj, bad, z = ci(l, it, 0);

	/* B scaled into the normals (Bs = B 2^kadj), so that B 2^k is Bs
	 * times two normal powers of two */
	sub = bin(l, KO_LT, B, cf(l, dt, d64 ? 0x1p-1022 : 0x1p-126));
	Bs = sel(l, sub, bin(l, KO_MUL, B, cf(l, dt, d64 ? 0x1p64 : 0x1p32)), B);
	kadj = sel(l, sub, ci(l, it, S), z);
	eb = expo_of(l, B, it, M, bias);
	if (split)
		steps = 84;
	for (int i = 0; i < steps; i++) {
		KRef k, kk, k1, Bk, q, r0, rn;

		k = bin(l, KO_SUB, bin(l, KO_SUB, expo_of(l, r, it, M, bias), eb), ci(l, it, W - 3));
		k = sel(l, bin(l, KO_LT, k, z), z, k);
		kk = bin(l, KO_SUB, k, kadj);      /* B 2^k = Bs 2^kk, kk >= -S */
		k1 = sel(l, bin(l, KO_LT, kk, z), kk, bin(l, KO_SHRM, kk, ci(l, it, 1)));
		Bk = bin(l, KO_MUL, bin(l, KO_MUL, Bs, pow2_of(l, k1, it, M, bias)),
		         pow2_of(l, bin(l, KO_SUB, kk, k1), it, M, bias));
		q = kb_un(kb, KO_FLOOR, bin(l, KO_DIV, r, Bk));
		r0 = split ? fms_split(l, q, Bk, r) : lfma(l, kb_un(kb, KO_NEG, q), Bk, r);
		q = sel(l, bin(l, KO_LT, r0, cf(l, dt, 0)), bin(l, KO_SUB, q, cf(l, dt, 1)),
		        sel(l, bin(l, KO_GE, r0, Bk), bin(l, KO_ADD, q, cf(l, dt, 1)), q));
		rn = split ? fms_split(l, q, Bk, r) : lfma(l, kb_un(kb, KO_NEG, q), Bk, r);
		r = sel(l, bin(l, KO_GE, r, B), rn, r);
	}
	/* NaN for a NaN, an infinite a or b = 0; a for an infinite b (r stayed
	 * |a|) and for a = +-0; otherwise r with a's sign */
	bad = bin(l, KO_OR, bin(l, KO_OR, bin(l, KO_NE, a, a), bin(l, KO_NE, b, b)),
	          bin(l, KO_OR, bin(l, KO_EQ, A, cf(l, dt, INFINITY)), bin(l, KO_EQ, b, cf(l, dt, 0))));
	return sel(l, bad, cf(l, dt, NAN), sel(l, bin(l, KO_EQ, a, cf(l, dt, 0)), a,
	           sel(l, bin(l, KO_LT, a, cf(l, dt, 0)), kb_un(kb, KO_NEG, r), r)));
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
		return dt == DT_F64 ? pow64(l, a, b) : dt == DT_F32 ? pow32(l, a, b)
		     : ipow(l, a, b);
	case KO_MIN: case KO_MAX:
		return minmax(l, op, a, b);
	case KO_ERF:
		return dt == DT_F64 ? erf64(l, a) : erf32(l, a);
	case KO_FMOD:
		return fmodx(l, a, b);
	case KO_EXP:   return dt == DT_F64 ? exp64x(l, a, 0) : exp32_for(l, a);
	case KO_LOG:   return dt == DT_F64 ? log64(l, a) : log32(l, a);
	case KO_TANH:
		return dt == DT_F64 ? hyp64(l, op, a) : tanh32(l, a);
	case KO_SINH: case KO_COSH:
		return dt == DT_F64 ? hyp64(l, op, a) : sinhcosh32(l, op, a);
	case KO_ASINH: return dt == DT_F64 ? ashc64(l, op, a) : asinh32(l, a);
	case KO_ACOSH: return dt == DT_F64 ? ashc64(l, op, a) : acosh32(l, a);
	case KO_ATANH: return dt == DT_F64 ? atanh64(l, a) : atanh32(l, a);
	case KO_SIN: case KO_COS: case KO_TAN:
		return dt == DT_F64 ? trig64(l, op, a) : trig32(l, op, a);
	case KO_ATAN:  return dt == DT_F64 ? atan64(l, a) : atan32(l, a);
	case KO_ASIN:  return dt == DT_F64 ? asincos64(l, op, a) : asin32(l, a);
	case KO_ACOS:  return dt == DT_F64 ? asincos64(l, op, a) : acos32(l, a);
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
		if (dtype_is_packed(kb->k->buf[n.buf].dtype))
			return packed_load(l, n);
		if (storage_f32(l, &n))
			return storage_load(l, n);
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
	case KE_FMA:
		return lfma(l, n.a, n.b, n.c);
	case KE_CAST:
		da = dt_of(l, n.a);
		if (n.ival && !native(l, (int)n.ival)) {   /* the value it rounds to */
			r = encode(l, (int)n.ival, n.a, n.op);
			return r ? decode(l, (int)n.ival, r) : 0;
		}
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
	case KE_LOAD:
		return dtype_is_packed(k->buf[n->buf].dtype) || storage_f32(l, n);
	case KE_UN: case KE_BIN:
		return kop_needs_legal(n->op, k->node[n->a].dtype, l->caps);
	case KE_FMA:   /* an f64 fma the target cannot render: fma64_soft */
		return n->dtype == DT_F64 && l->caps && l->caps->no_fma_f64;
	case KE_CAST:
		da = k->node[n->a].dtype;
		if (n->ival)
			return !native(l, (int)n->ival);
		return dtype_is_float(da) && dtype_is_int(n->dtype) &&
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
	KRef *map, *orig;
	int n0 = k->nnode;
	const KStep *poly = kkernel_step(k, KST_POLY, 0);
	KCaps nolibm;

	memset(&l, 0, sizeof l);
	l.kb.prog = p;
	l.kb.k = k;
	l.caps = caps;
	if (caps && caps->libm && poly && poly->kind == KST_POLY) {
		/* the schedule's poly: the f32 polynomials, though the target
		 * has a libm (its f64 functions stay) */
		nolibm = *caps;
		nolibm.libm = 0;
		l.caps = &nolibm;
	}
	map = calloc((size_t)n0 + 1, sizeof *map);
	orig = calloc((size_t)n0 + 1, sizeof *orig);   /* each store's value before */
	if (!map || !orig) {
		free(map);
		free(orig);
		return burn_fail(c, BURN_ERR_NOMEM, "legalize %s: out of memory", k->name);
	}
	for (KRef s = 1; s < n0; s++)
		if (k->node[s].kind == KS_STORE)
			orig[s] = k->node[s].b;
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
			free(orig);
			return burn_fail(c, BURN_ERR_INTERNAL, "legalize %s: node %d",
			                 k->name, e);
		}
	}
	redirect(k, k->body, map, 0);
	for (int i = 0; i < k->nbuf; i++)   /* run-time extents (kir.h) */
		if (k->buf[i].ext > 0 && k->buf[i].ext < n0)
			k->buf[i].ext = map[k->buf[i].ext];
	/* a store of a plain load of the same storage type (a transpose, a
	 * split, a gather of f16 or bf16) copies the bits: decoding and
	 * encoding again gives the same value (a NaN keeps its payload), in
	 * more instructions, and keeps the copy from taking vector lanes */
	for (KRef s = 1; s < n0; s++) {
		KRef v = k->node[s].kind == KS_STORE ? orig[s] : 0, r;
		int bd;
		if (!v || k->node[v].kind != KE_LOAD || k->node[v].b || k->node[v].lanes != 1 ||
		    !storage_f32(&l, &k->node[v]) || !storage_f32(&l, &k->node[s]) ||
		    (bd = k->buf[k->node[v].buf].dtype) != k->buf[k->node[s].buf].dtype)
			continue;
		r = kb_load(&l.kb, k->node[v].buf, map[k->node[v].a]);
		k->node[r].dtype = kir_bits_dtype(bd);
		k->node[s].b = r;
	}
	free(orig);
	free(map);
	/* stores of f32 into storage buffers: of the encoded bits */
	for (KRef s = 1; s < n0; s++) {
		KRef v;
		if (k->node[s].kind != KS_STORE || !storage_f32(&l, &k->node[s]))
			continue;
		if (!(v = storage_value(&l, k->buf[k->node[s].buf].dtype, k->node[s].b)))
			return burn_fail(c, BURN_ERR_INTERNAL, "legalize %s: store %d",
			                 k->name, s);
		k->node[s].b = v;
	}
	for (KRef s = 1; s < n0; s++)
		if (k->node[s].kind == KS_STORE && dtype_is_packed(k->buf[k->node[s].buf].dtype) &&
		    !packed_store(&l, s))
			return burn_fail(c, BURN_ERR_INTERNAL, "legalize %s: packed store %d",
			                 k->name, s);
	packed_bufs(&l);
	return BURN_OK;
}

int
pass_legalize(Ctx *c, KProgram *p, const KCaps *caps)
{
	for (int i = 0; i < p->nkernel; i++)
		TRY(kir_legalize(c, p, p->kernel[i], caps));
	return BURN_OK;
}

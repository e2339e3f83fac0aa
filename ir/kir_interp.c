/*
 * kir_interp.c - a tree-walking interpreter for the kernel IR, used for
 * constant folding.  Its semantics are the C renderer's (render_c.c): f32
 * arithmetic is done in float with the float libm functions, integer
 * results wrap to their type, division and remainder by zero yield 0,
 * shifts by the type width or more yield 0 (or -1 for an arithmetic right
 * shift of a negative value), min/max propagate NaN.
 *
 * Expressions are evaluated per statement execution with memoisation
 * (a node evaluated twice in one statement is computed once), so shared
 * DAGs stay linear.  A select evaluates only the arm it takes, because the
 * other arm may load out of bounds (padding).  Every load and store is
 * bounds-checked; a violation is BURN_ERR_INTERNAL, never a crash.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kir.h"

/* The C renderer's f32 erf (codegen/c/render_c.c): folded constants match
 * generated code built without fused multiply-adds, within an ulp with. */
static float burn_erf32(float x)
{
	float s, p, q;

	x = x > 4.0f ? 4.0f : x < -4.0f ? -4.0f : x;
	s = x * x;
	p = 1.91568059e-08f * s - 1.96486894e-06f;
	p = p * s + 1.51185086e-04f;
	p = p * s + 4.13306197e-03f;
	p = p * s + 5.19497134e-02f;
	p = p * s + 2.10339695e-01f;
	p = p * s + 1.12837887e+00f;
	q = 1.05743285e-03f * s + 1.52362129e-02f;
	q = q * s + 1.19301476e-01f;
	q = q * s + 5.19738078e-01f;
	q = q * s + 1.0f;
	return x * p / q;
}


/* A scalar: signed integers in i, unsigned integers and bool in u, floats
 * in f (f32 values are exactly representable as float). */
typedef struct KVal {
	int64_t i;
	uint64_t u;
	double f;
} KVal;

enum { C_F, C_S, C_U };

typedef struct Interp {
	Ctx *c;
	const KKernel *k;
	void **buf;        /* element pointers, locals included */
	KVal *var;
	KVal *memo;
	uint64_t *stamp;   /* memo[e] valid when stamp[e] == gen */
	uint64_t gen;
	int64_t *steps;    /* budget left, or NULL */
	int err;
} Interp;

/* One more statement or loop iteration: 1 when the budget has run out
 * (in->err is BURN_ERR_LIMIT, unrecorded: see kir_interp_budget). */
static int
spend(Interp *in)
{
	if (!in->steps || --*in->steps >= 0)
		return 0;
	if (!in->err)
		in->err = BURN_ERR_LIMIT;
	return 1;
}

static int
cls(int dt)
{
	if (dtype_is_float(dt))
		return C_F;
	if (dt == DT_I8 || dt == DT_I16 || dt == DT_I32 || dt == DT_I64)
		return C_S;
	return C_U;
}

static int64_t
wrap_s(int dt, int64_t v)
{
	switch (dt) {
	case DT_I8: return (int8_t)v;
	case DT_I16: return (int16_t)v;
	case DT_I32: return (int32_t)v;
	}
	return v;
}

static uint64_t
wrap_u(int dt, uint64_t v)
{
	switch (dt) {
	case DT_BOOL: return v != 0;
	case DT_U8: return (uint8_t)v;
	case DT_U16: return (uint16_t)v;
	case DT_U32: return (uint32_t)v;
	}
	return v;
}

/* ---- f16 / bf16 (same algorithms as render_c's prelude) ----------------- */

static float
f16_to_f32(uint16_t h)
{
	uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f,
	         m = h & 0x3ff, x;
	float f;

	if (e == 0x1f)
		x = s | 0x7f800000u | (m << 13);
	else if (e)
		x = s | ((e + 112) << 23) | (m << 13);
	else if (!m)
		x = s;
	else {
		e = 113;
		while (!(m & 0x400)) {
			m <<= 1;
			e--;
		}
		x = s | (e << 23) | ((m & 0x3ff) << 13);
	}
	memcpy(&f, &x, 4);
	return f;
}

static uint16_t
f32_to_f16(float f)
{
	uint32_t x, s, ax, h, rem, e, m, sh;

	memcpy(&x, &f, 4);
	s = (x >> 16) & 0x8000;
	ax = x & 0x7fffffffu;
	if (ax > 0x7f800000u)
		return (uint16_t)(s | 0x7e00 | ((ax >> 13) & 0x3ff));
	if (ax >= 0x477ff000u)
		return (uint16_t)(s | 0x7c00);
	if (ax >= 0x38800000u) {
		ax -= 0x38000000u;
		h = ax >> 13;
		rem = ax & 0x1fff;
		if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
			h++;
		return (uint16_t)(s | h);
	}
	if (ax <= 0x33000000u)
		return (uint16_t)s;
	e = ax >> 23;
	m = (ax & 0x7fffff) | 0x800000;
	sh = 126 - e;
	h = m >> sh;
	rem = m & ((1u << sh) - 1);
	if (rem > (1u << (sh - 1)) || (rem == (1u << (sh - 1)) && (h & 1)))
		h++;
	return (uint16_t)(s | h);
}

static float
bf16_to_f32(uint16_t h)
{
	uint32_t x = (uint32_t)h << 16;
	float f;

	memcpy(&f, &x, 4);
	return f;
}

static uint16_t
f32_to_bf16(float f)
{
	uint32_t x;

	memcpy(&x, &f, 4);
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40);
	return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

/* ---- float8 (same algorithms as render_c's prelude) -------------------- */

/* float8 codes <-> f32.  A code is a sign bit, then exponent and m
 * mantissa bits with exponent bias b.  nan says where NaN lives: 0 IEEE
 * (exponent all ones, e5m2: also infinities), 1 FN (all bits but the sign
 * set; no infinities), 2 FNUZ (0x80 only; no infinities, no -0). */
static float
f8_dec(uint32_t c, int m, int b, int nan)
{
	uint32_t e = (c & 0x7f) >> m, f = c & ((1u << m) - 1), x;
	float r;

	x = (uint32_t)((e ? (int)e : 1) + 127 - b - m) << 23;
	memcpy(&r, &x, 4);
	r *= (float)(e ? f | (1u << m) : f);
	if (nan == 0 && e == 0x7fu >> m)
		x = 0x7f800000u | (f ? 0x400000u : 0);
	else if ((nan == 1 && (c & 0x7f) == 0x7f) || (nan == 2 && c == 0x80))
		x = 0x7fc00000u;
	else
		return c & 0x80 ? -r : r;
	x |= (c & 0x80) << 24;
	memcpy(&r, &x, 4);
	return r;
}

/* f rounded to nearest even; magnitudes above the largest finite code maxc
 * give maxc when sat, else ovf (infinity or NaN); NaN gives nanc; uz: zero
 * has no sign.  The sign is or-ed in (0x80 | 0x80 is FNUZ's NaN). */
static uint8_t
f8_enc(float f, int sat, int m, int b, uint32_t maxc,
       uint32_t ovf, uint32_t nanc, int uz)
{
	uint32_t x, s, ax, e, v, sh, h, rem, half;

	memcpy(&x, &f, 4);
	s = (x >> 24) & 0x80;
	ax = x & 0x7fffffffu;
	if (ax > 0x7f800000u)
		return (uint8_t)(s | nanc);
	e = ax >> 23;
	if ((int)e > 127 - b) {
		v = ax - ((uint32_t)(127 - b) << 23);
		sh = (uint32_t)(23 - m);
	} else {
		v = (ax & 0x7fffffu) | (e ? 0x800000u : 0);
		sh = (uint32_t)(151 - b - m) - (e ? e : 1);
		if (sh > 25)
			v = 0, sh = 25;
	}
	h = v >> sh;
	rem = v & ((1u << sh) - 1);
	half = 1u << (sh - 1);
	h += rem > half || (rem == half && (h & 1));
	if (h > maxc)
		return (uint8_t)(s | (sat ? maxc : ovf));
	return (uint8_t)(h || !uz ? s | h : 0);
}

/* float8e8m0 codes <-> f32: 2^(c - 127), 0xff NaN.  mode: 1 no saturation
 * (0xfe rounding up gives NaN), 2 round down, 4 round to nearest (ties
 * up), else up (away from zero); the sign is dropped, like ONNX's. */
static float
e8m0_dec(uint8_t c)
{
	uint32_t x = c == 0xff ? 0x7fc00000u : c ? (uint32_t)c << 23 : 0x400000u;
	float f;

	memcpy(&f, &x, 4);
	return f;
}

static uint8_t
e8m0_enc(float f, int mode)
{
	uint32_t x, e, m, up;

	memcpy(&x, &f, 4);
	e = (x >> 23) & 0xff;
	m = x & 0x7fffff;
	if (e == 0xff)
		return 0xff;
	up = mode & 2 ? 0 : mode & 4 ? (m & 0x400000) && ((m & 0x3fffff) || e) : m != 0;
	if (up && e == 0xfe && !(mode & 1))
		up = 0;
	return (uint8_t)(e + up);
}

/* The value of float8 code c of type dt, and f converted to dt with
 * rounding how (KCastRound), as render_c's per-format helpers do. */
static float
f8_to_f32(int dt, uint8_t c)
{
	switch (dt) {
	case DT_F8E8M0: return e8m0_dec(c);
	case DT_F8E4M3FN: return f8_dec(c, 3, 7, 1);
	case DT_F8E4M3FNUZ: return f8_dec(c, 3, 8, 2);
	case DT_F8E5M2: return f8_dec(c, 2, 15, 0);
	}
	return f8_dec(c, 2, 16, 2);
}

static uint8_t
f32_to_f8(int dt, float f, int how)
{
	int sat = !(how & KC_NOSAT);

	switch (dt) {
	case DT_F8E8M0: return e8m0_enc(f, how);
	case DT_F8E4M3FN: return f8_enc(f, sat, 3, 7, 0x7e, 0x7f, 0x7f, 0);
	case DT_F8E4M3FNUZ: return f8_enc(f, sat, 3, 8, 0x7f, 0x80, 0x80, 1);
	case DT_F8E5M2: return f8_enc(f, sat, 2, 15, 0x7b, 0x7c, 0x7f, 0);
	}
	return f8_enc(f, sat, 2, 16, 0x7f, 0x80, 0x80, 1);
}

/* ---- memory ------------------------------------------------------------ */

static KVal
read_elem(int dt, const void *p, int64_t i)
{
	KVal v = {0, 0, 0};

	switch (dt) {
	case DT_F32: v.f = ((const float *)p)[i]; break;
	case DT_F64: v.f = ((const double *)p)[i]; break;
	case DT_F16: v.f = f16_to_f32(((const uint16_t *)p)[i]); break;
	case DT_BF16: v.f = bf16_to_f32(((const uint16_t *)p)[i]); break;
	case DT_F8E4M3FN: case DT_F8E4M3FNUZ: case DT_F8E5M2: case DT_F8E5M2FNUZ:
	case DT_F8E8M0:
		v.f = f8_to_f32(dt, ((const uint8_t *)p)[i]);
		break;
	case DT_I8: v.i = ((const int8_t *)p)[i]; break;
	case DT_I16: v.i = ((const int16_t *)p)[i]; break;
	case DT_I32: v.i = ((const int32_t *)p)[i]; break;
	case DT_I64: v.i = ((const int64_t *)p)[i]; break;
	case DT_U8: case DT_BOOL: v.u = ((const uint8_t *)p)[i]; break;
	case DT_U16: v.u = ((const uint16_t *)p)[i]; break;
	case DT_U32: v.u = ((const uint32_t *)p)[i]; break;
	case DT_U64: v.u = ((const uint64_t *)p)[i]; break;
	}
	return v;
}

static void
write_elem(int dt, void *p, int64_t i, KVal v)
{
	switch (dt) {
	case DT_F32: ((float *)p)[i] = (float)v.f; break;
	case DT_F64: ((double *)p)[i] = v.f; break;
	case DT_F16: ((uint16_t *)p)[i] = f32_to_f16((float)v.f); break;
	case DT_BF16: ((uint16_t *)p)[i] = f32_to_bf16((float)v.f); break;
	case DT_F8E4M3FN: case DT_F8E4M3FNUZ: case DT_F8E5M2: case DT_F8E5M2FNUZ:
	case DT_F8E8M0:
		((uint8_t *)p)[i] = f32_to_f8(dt, (float)v.f, KC_NOSAT | KC_NEAREST);
		break;
	case DT_I8: ((int8_t *)p)[i] = (int8_t)v.i; break;
	case DT_I16: ((int16_t *)p)[i] = (int16_t)v.i; break;
	case DT_I32: ((int32_t *)p)[i] = (int32_t)v.i; break;
	case DT_I64: ((int64_t *)p)[i] = v.i; break;
	case DT_U8: ((uint8_t *)p)[i] = (uint8_t)v.u; break;
	case DT_BOOL: ((uint8_t *)p)[i] = v.u != 0; break;
	case DT_U16: ((uint16_t *)p)[i] = (uint16_t)v.u; break;
	case DT_U32: ((uint32_t *)p)[i] = (uint32_t)v.u; break;
	case DT_U64: ((uint64_t *)p)[i] = v.u; break;
	}
}

/* An integer value as an index (unsigned huge values become negative and
 * fail the bounds check). */
static int64_t
as_index(int dt, KVal v)
{
	return cls(dt) == C_S ? v.i : (int64_t)v.u;
}

/* ---- evaluation -------------------------------------------------------- */

static KVal eval(Interp *in, KRef e);

static int
fail(Interp *in, int code, const char *msg, int64_t a, int64_t b)
{
	if (!in->err)
		in->err = burn_fail(in->c, code, "kir_interp %s: %s (%lld, %lld)",
		                    in->k->name, msg, (long long)a, (long long)b);
	return in->err;
}

static double
round_to(int dt, double x)
{
	return dt == DT_F32 ? (double)(float)x : x;
}

static double
fun_f(int op, int dt, double a)
{
	if (dt == DT_F32) {
		float x = (float)a;
		switch (op) {
		case KO_NEG: return -x;
		case KO_ABS: return fabsf(x);
		case KO_EXP: return expf(x);
		case KO_LOG: return logf(x);
		case KO_SQRT: return sqrtf(x);
		case KO_SIN: return sinf(x);
		case KO_COS: return cosf(x);
		case KO_TAN: return tanf(x);
		case KO_ASIN: return asinf(x);
		case KO_ACOS: return acosf(x);
		case KO_ATAN: return atanf(x);
		case KO_SINH: return sinhf(x);
		case KO_COSH: return coshf(x);
		case KO_TANH: return tanhf(x);
		case KO_ASINH: return asinhf(x);
		case KO_ACOSH: return acoshf(x);
		case KO_ATANH: return atanhf(x);
		case KO_ERF: return burn_erf32(x);
		case KO_FLOOR: return floorf(x);
		case KO_CEIL: return ceilf(x);
		case KO_ROUND: return nearbyintf(x);
		}
		return x;
	}
	switch (op) {
	case KO_NEG: return -a;
	case KO_ABS: return fabs(a);
	case KO_EXP: return exp(a);
	case KO_LOG: return log(a);
	case KO_SQRT: return sqrt(a);
	case KO_SIN: return sin(a);
	case KO_COS: return cos(a);
	case KO_TAN: return tan(a);
	case KO_ASIN: return asin(a);
	case KO_ACOS: return acos(a);
	case KO_ATAN: return atan(a);
	case KO_SINH: return sinh(a);
	case KO_COSH: return cosh(a);
	case KO_TANH: return tanh(a);
	case KO_ASINH: return asinh(a);
	case KO_ACOSH: return acosh(a);
	case KO_ATANH: return atanh(a);
	case KO_ERF: return erf(a);
	case KO_FLOOR: return floor(a);
	case KO_CEIL: return ceil(a);
	case KO_ROUND: return nearbyint(a);
	}
	return a;
}

static KVal
un(int op, int dt, int rdt, KVal a)
{
	KVal r = {0, 0, 0};

	switch (cls(dt)) {
	case C_F:
		if (op == KO_ISNAN)
			r.u = isnan(a.f) != 0;
		else if (op == KO_ISINF)
			r.u = isinf(a.f) != 0;
		else if (op == KO_NOT)
			r.u = a.f == 0;
		else
			r.f = round_to(dt, fun_f(op, dt, a.f));
		break;
	case C_S:
		switch (op) {
		case KO_NEG: r.i = (int64_t)(0 - (uint64_t)a.i); break;
		case KO_ABS: r.i = a.i < 0 ? (int64_t)(0 - (uint64_t)a.i) : a.i; break;
		case KO_BITNOT: r.i = ~a.i; break;
		case KO_NOT: r.u = a.i == 0; return r;
		default: r.i = a.i;
		}
		r.i = wrap_s(dt, r.i);
		break;
	case C_U:
		switch (op) {
		case KO_NEG: r.u = 0 - a.u; break;
		case KO_BITNOT: r.u = ~a.u; break;
		case KO_NOT: r.u = a.u == 0; return r;
		default: r.u = a.u;
		}
		r.u = wrap_u(dt, r.u);
		break;
	}
	(void)rdt;
	return r;
}

static uint64_t
powu(uint64_t b, uint64_t e)
{
	uint64_t r = 1;

	for (; e; e >>= 1, b *= b)
		if (e & 1)
			r *= b;
	return r;
}

static int
cmp_result(int op, int lt, int eq, int unord)
{
	if (unord)
		return op == KO_NE;
	switch (op) {
	case KO_LT: return lt;
	case KO_LE: return lt || eq;
	case KO_GT: return !lt && !eq;
	case KO_GE: return !lt;
	case KO_EQ: return eq;
	case KO_NE: return !eq;
	}
	return 0;
}

static KVal
bin(int op, int dt, KVal a, KVal b)
{
	KVal r = {0, 0, 0};

	if (op >= KO_LT && op <= KO_NE) {
		switch (cls(dt)) {
		case C_F:
			r.u = cmp_result(op, a.f < b.f, a.f == b.f,
			                 isnan(a.f) || isnan(b.f));
			break;
		case C_S:
			r.u = cmp_result(op, a.i < b.i, a.i == b.i, 0);
			break;
		default:
			r.u = cmp_result(op, a.u < b.u, a.u == b.u, 0);
		}
		return r;
	}
	switch (cls(dt)) {
	case C_F: {
		double x = a.f, y = b.f, z;
		if (dt == DT_F32) {
			float fx = (float)x, fy = (float)y;
			switch (op) {
			case KO_ADD: z = fx + fy; break;
			case KO_SUB: z = fx - fy; break;
			case KO_MUL: z = fx * fy; break;
			case KO_DIV: z = fx / fy; break;
			case KO_MOD: case KO_FMOD: z = fmodf(fx, fy); break;
			case KO_POW: z = powf(fx, fy); break;
			default: z = 0;
			}
		} else {
			switch (op) {
			case KO_ADD: z = x + y; break;
			case KO_SUB: z = x - y; break;
			case KO_MUL: z = x * y; break;
			case KO_DIV: z = x / y; break;
			case KO_MOD: case KO_FMOD: z = fmod(x, y); break;
			case KO_POW: z = pow(x, y); break;
			default: z = 0;
			}
		}
		if (op == KO_MIN || op == KO_MAX) {
			if (isnan(x) || isnan(y))
				z = x + y;
			else if (op == KO_MIN)
				z = x < y ? x : y;
			else
				z = x > y ? x : y;
		}
		if (op == KO_AND || op == KO_OR || op == KO_XOR) {
			int p = x != 0, q = y != 0;
			r.u = op == KO_AND ? p && q : op == KO_OR ? p || q : p != q;
			return r;
		}
		r.f = round_to(dt, z);
		return r;
	}
	case C_S: {
		int64_t x = a.i, y = b.i, z;
		uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
		switch (op) {
		case KO_ADD: z = (int64_t)(ux + uy); break;
		case KO_SUB: z = (int64_t)(ux - uy); break;
		case KO_MUL: z = (int64_t)(ux * uy); break;
		case KO_DIV:
			z = y == 0 ? 0 : y == -1 ? (int64_t)(0 - ux) : x / y;
			break;
		case KO_MOD: case KO_FMOD:
			z = y == 0 || y == -1 ? 0 : x % y;
			break;
		case KO_POW:
			if (y < 0)
				z = x == 1 ? 1 : x == -1 ? ((y & 1) ? -1 : 1) : 0;
			else
				z = (int64_t)powu(ux, uy);
			break;
		case KO_MIN: z = x < y ? x : y; break;
		case KO_MAX: z = x > y ? x : y; break;
		case KO_BAND: z = x & y; break;
		case KO_BOR: z = x | y; break;
		case KO_BXOR: z = x ^ y; break;
		case KO_SHL: z = uy >= 64 ? 0 : (int64_t)(ux << uy); break;
		case KO_SHR: z = uy >= 64 ? (x < 0 ? -1 : 0) : x >> uy; break;
		default: z = 0;
		}
		r.i = wrap_s(dt, z);
		return r;
	}
	default: {
		uint64_t x = a.u, y = b.u, z;
		switch (op) {
		case KO_ADD: z = x + y; break;
		case KO_SUB: z = x - y; break;
		case KO_MUL: z = x * y; break;
		case KO_DIV: z = y == 0 ? 0 : x / y; break;
		case KO_MOD: case KO_FMOD: z = y == 0 ? 0 : x % y; break;
		case KO_POW: z = powu(x, y); break;
		case KO_MIN: z = x < y ? x : y; break;
		case KO_MAX: z = x > y ? x : y; break;
		case KO_BAND: z = x & y; break;
		case KO_BOR: z = x | y; break;
		case KO_BXOR: z = x ^ y; break;
		case KO_SHL: z = y >= 64 ? 0 : x << y; break;
		case KO_SHR: z = y >= 64 ? 0 : x >> y; break;
		case KO_AND: z = x && y; break;
		case KO_OR: z = x || y; break;
		case KO_XOR: z = (x != 0) != (y != 0); break;
		default: z = 0;
		}
		r.u = wrap_u(dt, z);
		return r;
	}
	}
}

/* Float to integer with C conversion where it is defined; out of range
 * (undefined in C) gives INT64_MIN like x86's cvttsd2si. */
static int64_t
f_to_i64(double f)
{
	if (!(f > -9223372036854775808.0 && f < 9223372036854775808.0))
		return INT64_MIN;
	return (int64_t)f;
}

static KVal
cast(int to, int from, KVal a)
{
	KVal r = {0, 0, 0};
	int cf = cls(from);

	if (to == DT_BOOL) {
		r.u = cf == C_F ? a.f != 0 : cf == C_S ? a.i != 0 : a.u != 0;
		return r;
	}
	switch (cls(to)) {
	case C_F:
		if (to == DT_F64)
			r.f = cf == C_F ? a.f : cf == C_S ? (double)a.i : (double)a.u;
		else
			r.f = cf == C_F ? (float)a.f : cf == C_S ? (float)a.i : (float)a.u;
		break;
	case C_S:
		r.i = wrap_s(to, cf == C_F ? f_to_i64(a.f) : cf == C_S ? a.i
		                                                       : (int64_t)a.u);
		break;
	default:
		if (cf == C_F)
			r.u = a.f >= 9223372036854775808.0 && a.f < 18446744073709551616.0
			    ? (uint64_t)a.f : (uint64_t)f_to_i64(a.f);
		else
			r.u = cf == C_S ? (uint64_t)a.i : a.u;
		r.u = wrap_u(to, r.u);
	}
	return r;
}

static KVal
eval(Interp *in, KRef e)
{
	const KKernel *k = in->k;
	const KNode *n;
	KVal r = {0, 0, 0}, a, b;

	if (in->err)
		return r;
	if (e <= 0 || e >= k->nnode) {
		fail(in, BURN_ERR_INTERNAL, "bad expression ref", e, 0);
		return r;
	}
	if (in->stamp[e] == in->gen)
		return in->memo[e];
	n = &k->node[e];
	switch (n->kind) {
	case KE_CONST:
		if (dtype_is_float(n->dtype))
			r.f = round_to(n->dtype, n->fval);
		else if (cls(n->dtype) == C_S)
			r.i = wrap_s(n->dtype, n->ival);
		else
			r.u = wrap_u(n->dtype, (uint64_t)n->ival);
		break;
	case KE_VAR:
		r = in->var[n->var];
		break;
	case KE_LOAD: {
		int64_t i;
		a = eval(in, n->a);
		i = as_index(k->node[n->a].dtype, a);
		if (in->err)
			return r;
		if (i < 0 || i >= k->buf[n->buf].count) {
			fail(in, BURN_ERR_INTERNAL, "load out of bounds (buffer, index)",
			     n->buf, i);
			return r;
		}
		r = read_elem(k->buf[n->buf].dtype, in->buf[n->buf], i);
		break;
	}
	case KE_UN:
		a = eval(in, n->a);
		r = un(n->op, k->node[n->a].dtype, n->dtype, a);
		break;
	case KE_BIN:
		a = eval(in, n->a);
		b = eval(in, n->b);
		r = bin(n->op, k->node[n->a].dtype, a, b);
		break;
	case KE_SELECT:
		a = eval(in, n->a);
		r = eval(in, a.u ? n->b : n->c);
		break;
	case KE_CAST:
		a = eval(in, n->a);
		if (n->ival == DT_F16)
			r.f = f16_to_f32(f32_to_f16((float)a.f));
		else if (n->ival == DT_BF16)
			r.f = bf16_to_f32(f32_to_bf16((float)a.f));
		else if (dtype_is_f8((int)n->ival))
			r.f = f8_to_f32((int)n->ival, f32_to_f8((int)n->ival, (float)a.f,
			                                        n->op));
		else
			r = cast(n->dtype, k->node[n->a].dtype, a);
		break;
	default:
		fail(in, BURN_ERR_UNSUPPORTED, "unsupported expression kind",
		     n->kind, e);
		return r;
	}
	in->stamp[e] = in->gen;
	in->memo[e] = r;
	return r;
}

/* Evaluate a statement-level expression: a fresh memo generation. */
static KVal
eval_root(Interp *in, KRef e)
{
	in->gen++;
	return eval(in, e);
}

static int
exec(Interp *in, KRef s)
{
	const KKernel *k = in->k;

	for (; s && !in->err; s = k->node[s].next) {
		const KNode *n = &k->node[s];
		KVal v;
		int64_t i;
		if (spend(in))
			return in->err;
		switch (n->kind) {
		case KS_FOR:
			in->var[n->var].i = eval_root(in, n->a).i;
			while (!in->err && in->var[n->var].i < eval_root(in, n->b).i) {
				if (spend(in))
					return in->err;
				TRY(exec(in, n->body));
				in->var[n->var].i++;
			}
			break;
		case KS_IF:
			v = eval_root(in, n->a);
			if (!in->err)
				TRY(exec(in, v.u ? n->body : n->orelse));
			break;
		case KS_STORE:
			i = as_index(k->node[n->a].dtype, eval_root(in, n->a));
			v = eval(in, n->b);   /* same statement: same generation */
			if (in->err)
				break;
			if (i < 0 || i >= k->buf[n->buf].count)
				return fail(in, BURN_ERR_INTERNAL,
				            "store out of bounds (buffer, index)", n->buf, i);
			write_elem(k->buf[n->buf].dtype, in->buf[n->buf], i, v);
			break;
		case KS_SET:
			v = eval_root(in, n->a);
			if (!in->err)
				in->var[n->var] = v;
			break;
		case KS_BARRIER:
			return fail(in, BURN_ERR_UNSUPPORTED, "barrier", s, 0);
		default:
			return fail(in, BURN_ERR_INTERNAL, "not a statement", s, 0);
		}
	}
	return in->err;
}

/* Whether any reachable expression is a vector or hardware index is left
 * to eval (it fails on KE_SPECIAL); vectors are rejected up front. */
int
kir_interp(Ctx *c, const KKernel *k, void *const *bufs)
{
	return kir_interp_budget(c, k, bufs, NULL);
}

int
kir_interp_budget(Ctx *c, const KKernel *k, void *const *bufs, int64_t *steps)
{
	Interp in;
	int i, rc;
	size_t nn = (size_t)k->nnode;

	TRY(kir_verify(c, k));
	for (i = 1; i < k->nnode; i++)
		if (k->node[i].lanes > 1)
			return burn_fail(c, BURN_ERR_UNSUPPORTED,
			                 "kir_interp %s: vector expressions", k->name);
	memset(&in, 0, sizeof in);
	in.steps = steps;
	in.c = c;
	in.k = k;
	in.buf = calloc((size_t)k->nbuf + 1, sizeof *in.buf);
	in.var = calloc((size_t)k->nvar + 1, sizeof *in.var);
	in.memo = calloc(nn, sizeof *in.memo);
	in.stamp = calloc(nn, sizeof *in.stamp);
	if (!in.buf || !in.var || !in.memo || !in.stamp) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "kir_interp: out of memory");
		goto done;
	}
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *b = &k->buf[i];
		if (b->space == KS_GLOBAL) {
			in.buf[i] = bufs ? bufs[i] : NULL;
			if (!in.buf[i] && b->count > 0) {
				rc = burn_fail(c, BURN_ERR_INTERNAL,
				               "kir_interp %s: buffer b%d not given", k->name, i);
				goto done;
			}
		} else {
			int64_t nbytes;
			if (burn_mul_ovf(b->count > 0 ? b->count : 1,
			                 dtype_size(b->dtype), &nbytes) ||
			    (uint64_t)nbytes > SIZE_MAX ||
			    !(in.buf[i] = calloc((size_t)nbytes, 1))) {
				rc = burn_fail(c, BURN_ERR_NOMEM,
				               "kir_interp %s: local buffer b%d too large",
				               k->name, i);
				goto done;
			}
		}
	}
	rc = exec(&in, k->body);
done:
	if (in.buf)
		for (i = 0; i < k->nbuf; i++)
			if (k->buf[i].space != KS_GLOBAL)
				free(in.buf[i]);
	free(in.buf);
	free(in.var);
	free(in.memo);
	free(in.stamp);
	return rc;
}

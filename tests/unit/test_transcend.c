/*
 * test_transcend.c - the f32 transcendentals a target without a math
 * library gets (passes/legalize.c, KCaps.libm clear): each ONNX op over
 * a spread of f32 bit patterns from the whole line (every 16411th, about
 * 262,000 values, plus the special values), run through the interpreter on
 * the legalised kernel, against the double libm, in ulps of the f32
 * result.  The bounds are the largest errors measured over every f32
 * (docs/NUMERICS.md, "Transcendentals without a libm"), rounded up.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "node_harness.h"

enum { STRIDE = 16411 };

static float
from_bits(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof f);
	return f;
}

/* |g - r| in ulps of r rounded to f32 (the spacing at r's binade, and at
 * the smallest normal binade below it); a result that must overflow or
 * is NaN must be exactly that. */
static double
ulps(float g, double r)
{
	int e;

	if (isnan(r))
		return isnan(g) ? 0 : INFINITY;
	if (fabs(r) >= 0x1.ffffffp127)   /* rounds to inf in f32 */
		return g == (float)r ? 0 : INFINITY;
	if (isnan(g))
		return INFINITY;
	frexp(fabs(r) < 0x1p-126 ? 0x1p-126 : fabs(r), &e);
	return fabs((double)g - r) / ldexp(1, e - 24);
}

/* sel: also legalise with KCaps.sel_f32 (selects instead of masks of
 * bits, the GPU targets' form) and expect the same bits everywhere */
static void
sweep_sel(const char *op, int opset, double (*ref)(double), double bound, int sel)
{
	static const float special[] = { 0.f, -0.f, INFINITY, -INFINITY, NAN,
		1.f, -1.f, 0x1p-149f, -0x1p-149f, 0x1p-126f, 0x1.fffffep127f,
		-0x1.fffffep127f, 88.7228394f, 88.7228470f, -103.972084f,
		-103.972092f, 89.5f, 0.5f, 0.625f, 4096.f, 4096.0005f, 9.1f };
	size_t ns = sizeof special / sizeof special[0];
	size_t n = ns + (size_t)(UINT32_MAX / STRIDE) + 1, i = 0;
	float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), worst_x = 0;
	double worst = 0;
	T t;

	cr_assert(x && y);
	for (; i < ns; i++)
		x[i] = special[i];
	for (uint64_t u = 0; u <= UINT32_MAX; u += STRIDE)
		x[i++] = from_bits((uint32_t)u);
	n = i;
	t_init(&t, opset);
	t_input(&t, DT_F32, 1, I64S((int64_t)n), x);
	t_node(&t, op, 1);
	cr_assert_eq(t_run1(&t, y), 1, "%s: one kernel", op);
	t_fini(&t);
	if (sel) {
		static const KCaps caps = { .sel_f32 = 1 };
		float *y2 = malloc(n * sizeof *y2);
		size_t bad = 0;

		cr_assert(y2);
		t_init(&t, opset);
		t.caps = &caps;
		t_input(&t, DT_F32, 1, I64S((int64_t)n), x);
		t_node(&t, op, 1);
		cr_assert_eq(t_run1(&t, y2), 1, "%s (sel_f32): one kernel", op);
		t_fini(&t);
		for (i = 0; i < n; i++)
			if (memcmp(&y[i], &y2[i], sizeof *y) && bad++ == 0)
				cr_expect(0, "%s: sel_f32 gives %a, the mask form %a at %a",
				          op, (double)y2[i], (double)y[i], (double)x[i]);
		cr_expect_eq(bad, 0, "%s: %zu values differ with sel_f32", op, bad);
		free(y2);
	}
	for (i = 0; i < n; i++) {
		double e = ulps(y[i], ref((double)x[i]));
		if (e > worst || e != e) {
			worst = e;
			worst_x = x[i];
		}
	}
	cr_expect(worst <= bound, "%s: %.3f ulps at %a, bound %.2f", op, worst,
	          (double)worst_x, bound);
	free(x);
	free(y);
}

static void
sweep(const char *op, int opset, double (*ref)(double), double bound)
{
	sweep_sel(op, opset, ref, bound, 0);
}

Test(transcend, exp)   { sweep_sel("Exp", 13, exp, 1.0, 1); }
Test(transcend, log)   { sweep("Log", 13, log, 1.0); }
Test(transcend, tanh)  { sweep_sel("Tanh", 13, tanh, 1.5, 1); }
Test(transcend, sinh)  { sweep("Sinh", 9, sinh, 2.5); }
Test(transcend, cosh)  { sweep("Cosh", 9, cosh, 2.5); }
Test(transcend, asinh) { sweep("Asinh", 9, asinh, 2.5); }
Test(transcend, acosh) { sweep("Acosh", 9, acosh, 2.5); }
Test(transcend, atanh) { sweep("Atanh", 9, atanh, 2.5); }
/* the trigonometric functions: reduced exactly by pi/2 (reduce_pio2), so
 * results near a zero of sin or cos and at the largest arguments are as
 * good as anywhere; the ulps are of the result however small */
Test(transcend, sin)   { sweep("Sin", 7, sin, 1.0); }
Test(transcend, cos)   { sweep("Cos", 7, cos, 1.0); }
Test(transcend, tan)   { sweep("Tan", 7, tan, 2.5); }
Test(transcend, atan)  { sweep("Atan", 7, atan, 2.0); }
Test(transcend, asin)  { sweep("Asin", 7, asin, 2.5); }
Test(transcend, acos)  { sweep("Acos", 7, acos, 2.5); }

/* x near multiples of pi/2, where the reduction cancels: the f32
 * neighbours of k pi/2 for k up to 2^20, and the f32 closest to a
 * multiple of pi/2 over the whole range is among the STRIDE sweep's
 * neighbours only by luck, so the values here are every f32 within 8
 * ulps of k pi / 2 */
Test(transcend, trig_near_multiples)
{
	enum { K = 1 << 14, W = 8 };
	size_t n = (size_t)K * (2 * W + 1), i = 0;
	float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
	const char *ops[] = { "Sin", "Cos" };
	double (*ref[])(double) = { sin, cos };
	T t;

	cr_assert(x && y);
	for (int k = 1; k <= K; k++) {
		/* k spread to 2^20 geometrically, then its pi/2 multiple */
		double kk = floor(pow(2.0, 20.0 * k / K));
		float c = (float)(kk * 1.5707963267948966);
		uint32_t u;
		memcpy(&u, &c, sizeof u);
		for (int d = -W; d <= W; d++)
			x[i++] = from_bits(u + (uint32_t)d);
	}
	for (int o = 0; o < 2; o++) {
		double worst = 0;
		float wx = 0;
		t_init(&t, 7);
		t_input(&t, DT_F32, 1, I64S((int64_t)n), x);
		t_node(&t, ops[o], 1);
		cr_assert_eq(t_run1(&t, y), 1, "%s: one kernel", ops[o]);
		t_fini(&t);
		for (i = 0; i < n; i++) {
			double e = ulps(y[i], ref[o]((double)x[i]));
			if (e > worst || e != e) {
				worst = e;
				wx = x[i];
			}
		}
		cr_expect(worst <= 1.0, "%s near k pi/2: %.3f ulps at %a", ops[o], worst,
		          (double)wx);
	}
	free(x);
	free(y);
}

/* f32 pow (through f64: pow32): bases over the f32 range, exponents
 * -40 .. 40, within the 4-ulp budget, in fact about half an ulp */
Test(transcend, pow_f32)
{
	enum { NA = 600, NB = 81 };
	size_t n = NA * NB, i = 0;
	float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *y = malloc(n * sizeof *y);
	double worst = 0;
	float wa = 0, wb = 0;
	T t;

	cr_assert(a && b && y);
	for (int p = 0; p < NA; p++)
		for (int q = 0; q < NB; q++, i++) {
			a[i] = ldexpf(1 + (p * 7919 % 1000) / 1000.0f, -149 + p * 276 / NA);
			if (p % 7 == 3)
				a[i] = -a[i];
			b[i] = (q - 40) * (q % 3 ? 0.37f : 1.0f);
		}
	t_init(&t, 13);
	t_input(&t, DT_F32, 1, I64S((int64_t)n), a);
	t_input(&t, DT_F32, 1, I64S((int64_t)n), b);
	t_node(&t, "Pow", 1);
	cr_assert_eq(t_run1(&t, y), 1, "Pow: one kernel");
	t_fini(&t);
	for (i = 0; i < n; i++) {
		double e = ulps(y[i], pow((double)a[i], (double)b[i]));
		if (e > worst || e != e) {
			worst = e;
			wa = a[i];
			wb = b[i];
		}
	}
	cr_expect(worst <= 1.0, "Pow f32: %.3f ulps at pow(%a, %a)", worst, (double)wa,
	          (double)wb);
	free(a);
	free(b);
	free(y);
}

/*
 * f64 exp, log, pow, tanh, sinh, cosh, sin, cos, tan and erf for a target without an f64
 * math library (KCaps.libm_f64 clear: the cuda target; passes/legalize.c
 * exp64x, log64, pow64, hyp64, trig64, erf64), against the x87 long double libm (64-bit significand), in ulps
 * of the f64 result.  About 200,000 bit patterns spread over the whole
 * line plus the special values; pow over a grid of bases and exponents.
 */
enum { N64 = 200000 };

static double
from_bits64(uint64_t u)
{
	double f;

	memcpy(&f, &u, sizeof f);
	return f;
}

static double
ulps64(double g, long double r)
{
	int e;

	if (isnan(r))
		return isnan(g) ? 0 : INFINITY;
	if (fabsl(r) >= 0x1.fffffffffffff8p1023L)   /* rounds to inf in f64 */
		return g == (double)r ? 0 : INFINITY;
	if (isnan(g))
		return INFINITY;
	frexpl(fabsl(r) < 0x1p-1022L ? 0x1p-1022L : fabsl(r), &e);
	return (double)(fabsl((long double)g - r) / ldexpl(1, e - 53));
}

/* span 0: bit patterns over the whole line; span > 0: an even grid on
 * [-span, span] (where a function does all its work in a narrow range) */
/* The capabilities of the targets without an f64 fma (freestanding C,
 * wasm): the fmas of the f64 expansions emulated (legalize.c, fma64_soft) */
static const KCaps nofma = { .no_fma_f64 = 1 };

/* lo < hi: an even grid on [lo, hi] in place of the bit patterns; extra
 * special values for the inverse functions (their breakpoints) */
static void
sweep64g(const char *op, long double (*ref)(long double), double bound, double lo,
         double hi, const KCaps *caps)
{
	static const double special[] = { 0., -0., INFINITY, -INFINITY, NAN,
		1., -1., 0x1p-1074, -0x1p-1074, 0x1p-1022, 0x1.fffffffffffffp1023,
		709.782712893384, 709.7827128933841, -745.1332191019412,
		-745.1332191019411, -708.4, 0.5, 2., 1e-300, 0.7071067811865476,
		1.4142135623730951, 22., 22.000000000000004, 709., 710.4, 0x1.6ac5b262ca1ffp+849,
		0x1.fffffffffffffp-1, -0x1.fffffffffffffp-1, 0x1.0000000000001p0, 0.125,
		0x1.fffffffffffffp-4, 0x1p28, 0x1.0000000000001p28, 0x1p60, 0x1p-1022,
		0.0625, 0x1.6a09e667f3bccp-1, -0.5, 1e-8, -1e-8, 1e300, -1e300 };
	size_t ns = sizeof special / sizeof special[0], n = ns + N64, i;
	double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), worst_x = 0;
	double worst = 0;
	T t;

	cr_assert(x && y);
	for (i = 0; i < ns; i++)
		x[i] = special[i];
	for (uint64_t k = 0; k < N64; k++)
		x[i++] = lo < hi ? lo + (hi - lo) * (double)k / N64
		       : from_bits64(k * (UINT64_MAX / N64));
	t_init(&t, 13);
	t.caps = caps;
	t_input(&t, DT_F64, 1, I64S((int64_t)n), x);
	t_node(&t, op, 1);
	cr_assert_eq(t_run1(&t, y), 1, "%s: one kernel", op);
	t_fini(&t);
	for (i = 0; i < n; i++) {
		double e = ulps64(y[i], ref((long double)x[i]));
		if (e > worst || e != e) {
			worst = e;
			worst_x = x[i];
		}
	}
	if (getenv("TRANSCEND_SHOW"))   /* the figures for docs/NUMERICS.md */
		fprintf(stderr, "%s f64%s [%g, %g]: %.3f ulps at %a\n", op,
		        caps ? " (no fma)" : "", lo, hi, worst, worst_x);
	cr_expect(worst <= bound, "%s f64%s: %.3f ulps at %a, bound %.2f", op,
	          caps ? " (no fma)" : "", worst, worst_x, bound);
	free(x);
	free(y);
}

static void
sweep64c(const char *op, long double (*ref)(long double), double bound, double span,
         const KCaps *caps)
{
	sweep64g(op, ref, bound, -span, span, caps);
}

static void
sweep64(const char *op, long double (*ref)(long double), double bound, double span)
{
	sweep64c(op, ref, bound, span, NULL);
}

Test(transcend, exp_f64) { sweep64("Exp", expl, 1.0, 0); }
Test(transcend, log_f64) { sweep64("Log", logl, 1.0, 0); }
Test(transcend, tanh_f64) { sweep64("Tanh", tanhl, 2.5, 0); }
Test(transcend, sinh_f64) { sweep64("Sinh", sinhl, 2.5, 0); }
Test(transcend, cosh_f64) { sweep64("Cosh", coshl, 2.0, 0); }
Test(transcend, sin_f64) { sweep64("Sin", sinl, 1.0, 0); }
Test(transcend, cos_f64) { sweep64("Cos", cosl, 1.0, 0); }
Test(transcend, tan_f64) { sweep64("Tan", tanl, 2.5, 0); }
Test(transcend, erf_f64) { sweep64("Erf", erfl, 1.0, 0); }
Test(transcend, erf_f64_grid) { sweep64("Erf", erfl, 1.0, 7.0); }
/* the inverse functions (atan_dd, asincos64, ashc64, atanh64): the
 * whole line, and grids where they do their work (asin, acos and atanh
 * on [-1, 1], acosh on [1, 3], atan and asinh on [-3, 3]) */
Test(transcend, atan_f64) { sweep64("Atan", atanl, 0.75, 0); }
Test(transcend, atan_f64_grid) { sweep64("Atan", atanl, 0.75, 3.0); }
Test(transcend, asin_f64) { sweep64("Asin", asinl, 0.75, 0); }
Test(transcend, asin_f64_grid) { sweep64("Asin", asinl, 0.75, 1.0); }
Test(transcend, acos_f64) { sweep64("Acos", acosl, 0.75, 0); }
Test(transcend, acos_f64_grid) { sweep64("Acos", acosl, 0.75, 1.0); }
Test(transcend, asinh_f64) { sweep64("Asinh", asinhl, 1.0, 0); }
Test(transcend, asinh_f64_grid) { sweep64("Asinh", asinhl, 1.0, 3.0); }
Test(transcend, acosh_f64) { sweep64("Acosh", acoshl, 1.0, 0); }
Test(transcend, acosh_f64_grid) { sweep64g("Acosh", acoshl, 1.0, 1.0, 3.0, NULL); }
Test(transcend, atanh_f64) { sweep64("Atanh", atanhl, 1.0, 0); }
Test(transcend, atanh_f64_grid) { sweep64("Atanh", atanhl, 1.0, 1.0); }
/* the same without an f64 fma: the same bounds */
Test(transcend, sin_f64_nofma) { sweep64c("Sin", sinl, 1.0, 0, &nofma); }
Test(transcend, cos_f64_nofma) { sweep64c("Cos", cosl, 1.0, 0, &nofma); }
Test(transcend, tan_f64_nofma) { sweep64c("Tan", tanl, 2.5, 0, &nofma); }
Test(transcend, erf_f64_nofma) { sweep64c("Erf", erfl, 1.0, 0, &nofma); }
Test(transcend, erf_f64_grid_nofma) { sweep64c("Erf", erfl, 1.0, 7.0, &nofma); }
Test(transcend, atan_f64_nofma) { sweep64c("Atan", atanl, 0.75, 3.0, &nofma); }
Test(transcend, asin_f64_nofma) { sweep64c("Asin", asinl, 0.75, 1.0, &nofma); }
Test(transcend, acos_f64_nofma) { sweep64c("Acos", acosl, 0.75, 1.0, &nofma); }
Test(transcend, asinh_f64_nofma) { sweep64c("Asinh", asinhl, 1.0, 0, &nofma); }
Test(transcend, acosh_f64_nofma) { sweep64g("Acosh", acoshl, 1.0, 1.0, 3.0, &nofma); }
Test(transcend, atanh_f64_nofma) { sweep64c("Atanh", atanhl, 1.0, 1.0, &nofma); }

/* pow: bases spread over 2^-1000 .. 2^1000 (and negative), exponents
 * -40 .. 40 (integers and not); the bound grows with |b| (pow64's
 * comment); and C's special cases exactly. */
Test(transcend, pow_f64)
{
	static const double sa[] = { 0., -0., 1., -1., INFINITY, -INFINITY, NAN,
		2., -2., 0.5, -0.5 };
	static const double sb[] = { 0., -0., 1., -1., 2., 3., -3., 0.5, -0.5,
		INFINITY, -INFINITY, NAN, 1e300, -1e300 };
	enum { NA = 400, NB = 81 };
	size_t nsa = sizeof sa / sizeof sa[0], nsb = sizeof sb / sizeof sb[0];
	size_t n = NA * NB + nsa * nsb, i = 0;
	double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
	double *y = malloc(n * sizeof *y), worst = 0, wa = 0, wb = 0;
	T t;

	cr_assert(a && b && y);
	for (int p = 0; p < NA; p++)
		for (int q = 0; q < NB; q++, i++) {
			/* 2^(e) with e from -1000 to 1000, odd mantissas, sign by p */
			a[i] = ldexp(1 + (p * 7919 % 1000) / 1000.0, -1000 + 5 * p);
			if (p % 7 == 3)
				a[i] = -a[i];
			b[i] = (q - 40) * (q % 3 ? 0.37 : 1.0);
		}
	for (size_t p = 0; p < nsa; p++)
		for (size_t q = 0; q < nsb; q++, i++) {
			a[i] = sa[p];
			b[i] = sb[q];
		}
	t_init(&t, 13);
	t_input(&t, DT_F64, 1, I64S((int64_t)n), a);
	t_input(&t, DT_F64, 1, I64S((int64_t)n), b);
	t_node(&t, "Pow", 1);
	cr_assert_eq(t_run1(&t, y), 1, "Pow: one kernel");
	t_fini(&t);
	for (i = 0; i < NA * NB; i++) {
		double e = ulps64(y[i], powl(a[i], b[i])) / (1.5 + fabs(b[i]) / 8);
		if (e > worst || e != e) {
			worst = e;
			wa = a[i];
			wb = b[i];
		}
	}
	cr_expect(worst <= 1, "Pow f64: %.3f of the bound at pow(%a, %a)", worst, wa, wb);
	for (; i < n; i++) {
		double r = pow(a[i], b[i]);
		if (isfinite(r) && r != 0 && fabs(r) != 1)   /* an ordinary value */
			cr_expect(ulps64(y[i], powl(a[i], b[i])) <= 1.5 + fabs(b[i]) / 8,
			          "pow(%g, %g) = %.17g, C gives %.17g", a[i], b[i], y[i], r);
		else
			cr_expect((isnan(r) && isnan(y[i])) ||
			          (r == y[i] && signbit(r) == signbit(y[i])),
			          "pow(%g, %g) = %g, C gives %g", a[i], b[i], y[i], r);
	}
	free(a);
	free(b);
	free(y);
}

/*
 * fmod (ONNX Mod with fmod=1) for a target without a math library: the
 * exact long division of passes/legalize.c (fmodx), which must agree with
 * C's fmod bit for bit (the result is exact, so no ulps): pairs whose
 * quotients span every exponent gap, subnormal divisors, the sign of a
 * zero result, and C's special cases.
 */
static uint64_t
rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void
fmod_check(int dt, size_t n, const void *a, const void *b, const void *y)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		double x1, x2, g, r;

		if (dt == DT_F32) {
			x1 = ((const float *)a)[i];
			x2 = ((const float *)b)[i];
			g = ((const float *)y)[i];
			r = fmodf((float)x1, (float)x2);
		} else {
			x1 = ((const double *)a)[i];
			x2 = ((const double *)b)[i];
			g = ((const double *)y)[i];
			r = fmod(x1, x2);
		}
		if ((isnan(r) && isnan(g)) || (r == g && signbit(r) == signbit(g)))
			continue;
		if (bad++ < 5)
			cr_expect(0, "%s fmod(%a, %a) = %a, C gives %a",
			          dt == DT_F32 ? "f32" : "f64", x1, x2, g, r);
	}
	cr_expect_eq(bad, 0, "%zu of %zu fmod results differ from C's", bad, n);
}

static void
fmod_sweep(int dt)
{
	static const double sp[] = { 0., -0., 1., -1., INFINITY, -INFINITY, NAN,
		3., -3., 0.5, 1e-45, 1e30, -7.25 };
	enum { NR = 60000 };
	size_t ns = sizeof sp / sizeof sp[0], n = NR + ns * ns, i = 0, sz = dtype_size(dt);
	unsigned char *a = malloc(n * sz), *b = malloc(n * sz), *y = malloc(n * sz);
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	T t;

	cr_assert(a && b && y);
	for (; i < NR; i++) {
		/* random bit patterns (either sign, any exponent), a third of
		 * the divisors small integers or subnormal */
		uint64_t u = rng(&s), v = rng(&s);
		if (dt == DT_F32) {
			float fa, fb;
			uint32_t ua = (uint32_t)u, ub = (uint32_t)v;
			memcpy(&fa, &ua, 4);
			memcpy(&fb, &ub, 4);
			if (i % 3 == 1)
				fb = (float)(int)(v % 97 + 1);
			if (i % 9 == 2)
				fb = from_bits((uint32_t)(v % 0x7fffff) + 1);
			((float *)a)[i] = fa;
			((float *)b)[i] = fb;
		} else {
			double fa = from_bits64(u), fb = from_bits64(v);
			if (i % 3 == 1)
				fb = (double)(v % 97 + 1);
			if (i % 9 == 2)
				fb = from_bits64(v % 0xfffffffffffffULL + 1);
			((double *)a)[i] = fa;
			((double *)b)[i] = fb;
		}
	}
	for (size_t p = 0; p < ns; p++)
		for (size_t q = 0; q < ns; q++, i++) {
			if (dt == DT_F32) {
				((float *)a)[i] = (float)sp[p];
				((float *)b)[i] = (float)sp[q];
			} else {
				((double *)a)[i] = sp[p];
				((double *)b)[i] = sp[q];
			}
		}
	t_init(&t, 13);
	t_input(&t, dt, 1, I64S((int64_t)n), a);
	t_input(&t, dt, 1, I64S((int64_t)n), b);
	t_node(&t, "Mod", 1);
	t_attr_i(&t, "fmod", 1);
	cr_assert_eq(t_run1(&t, y), 1, "Mod: one kernel");
	t_fini(&t);
	fmod_check(dt, n, a, b, y);
	free(a);
	free(b);
	free(y);
}

Test(transcend, fmod_f32) { fmod_sweep(DT_F32); }
Test(transcend, fmod_f64) { fmod_sweep(DT_F64); }

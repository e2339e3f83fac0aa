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

static void
sweep(const char *op, int opset, double (*ref)(double), double bound)
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

Test(transcend, exp)   { sweep("Exp", 13, exp, 1.0); }
Test(transcend, log)   { sweep("Log", 13, log, 1.0); }
Test(transcend, tanh)  { sweep("Tanh", 13, tanh, 1.5); }
Test(transcend, sinh)  { sweep("Sinh", 9, sinh, 2.5); }
Test(transcend, cosh)  { sweep("Cosh", 9, cosh, 2.5); }
Test(transcend, asinh) { sweep("Asinh", 9, asinh, 2.5); }
Test(transcend, acosh) { sweep("Acosh", 9, acosh, 2.5); }
Test(transcend, atanh) { sweep("Atanh", 9, atanh, 2.5); }

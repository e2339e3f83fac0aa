/*
 * fmod64.c - the driver of tests/firmware/fmod64.sh: f64 fmod as the
 * freestanding (or wasm) C computes it without an fma (passes/legalize.c,
 * fmodx) against the C library's fmod, bit for bit (NaN: any NaN), on
 * every pair of a list of edge values (zeros, subnormals, the extremes,
 * infinities, NaN, near-multiples) and on random pairs of bit patterns
 * (any exponent) and of nearby exponents (the long-division steps).
 * The module is ONNX's test_mod_mixed_sign_float64 (Mod, fmod=1) compiled
 * with --name m: six pairs a call.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "m.h"

static unsigned char arena[M_ARENA_BYTES ? M_ARENA_BYTES : 1]
	__attribute__((aligned(M_ARENA_ALIGN)));
static double xa[6], ya[6];
static int nq, bad;
static long ncase;

static uint64_t bits(double d)
{
	uint64_t u;
	memcpy(&u, &d, 8);
	return u;
}

static double from(uint64_t u)
{
	double d;
	memcpy(&d, &u, 8);
	return d;
}

static void flush(void)
{
	double out[6];

	if (!nq)
		return;
	for (int i = nq; i < 6; i++)
		xa[i] = ya[i] = 1;
	if (m_run(xa, ya, out, arena) != M_OK) {
		printf("FAIL: m_run\n");
		bad = 1000;
		return;
	}
	for (int i = 0; i < nq; i++) {
		double want = fmod(xa[i], ya[i]);
		ncase++;
		if (isnan(want) ? !isnan(out[i]) : bits(want) != bits(out[i])) {
			if (bad++ < 10)
				printf("FAIL: fmod(%a, %a) = %a, libm %a\n", xa[i], ya[i], out[i], want);
		}
	}
	nq = 0;
}

static void pair(double x, double y)
{
	xa[nq] = x;
	ya[nq] = y;
	if (++nq == 6)
		flush();
}

/* xorshift64*: the same pairs on every run */
static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1du;
}

int main(void)
{
	static const double v[] = {
		0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 0.1, 0.5, 1.5, 2.0, 7.0, 10.0,
		1e-300, -1e-300, 1e300, -1e300, DBL_MAX, -DBL_MAX, DBL_MIN, -DBL_MIN,
		0x1p-1074, -0x1p-1074, 0x1.fffffffffffffp-1023, 0x1p-1050, 0x1.8p-1070,
		0x1.fffffffffffffp+1023, 0x1p1023, 0x1.fffffffffffffp52, 0x1p53, 0x1p63,
		0x1.0000000000001p0, 0x1.fffffffffffffp-1, 3.141592653589793,
		6.283185307179586, 1e16, 123456789.123, INFINITY, -INFINITY, NAN,
	};
	int n = (int)(sizeof v / sizeof v[0]);

	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			pair(v[i], v[j]);
	/* a near-multiple: x = k y +- an ulp */
	for (int i = 0; i < 2000; i++) {
		double y = from((next() >> 12) | ((uint64_t)(1023 + (int)(next() % 200) - 100) << 52));
		double k = (double)(next() % 1000000 + 1), x = k * y;
		pair(nextafter(x, INFINITY), y);
		pair(nextafter(x, 0), y);
		pair(x, y);
	}
	/* a quotient that rounds up to the next integer near DBL_MAX: the
	 * step's first remainder is negative, q Bk just above r */
	for (int t = 0, found = 0; t < 3 && found < 200; t++) {
		double x = t == 0 ? DBL_MAX : t == 1 ? nextafter(DBL_MAX, 0) : 0x1.8p1023;
		for (double k = 2; k < 4e7 && found < 200; k += 1) {
			double y = nextafter(x / k, INFINITY);
			if (floor(x / y) >= k && fma(-k, y, x) < 0) {
				pair(x, y);
				pair(-x, y);
				found++;
			}
		}
	}
	/* any bit patterns (huge ratios, subnormals), and nearby exponents */
	for (int i = 0; i < 60000; i++) {
		uint64_t a = next(), b = next();
		pair(from(a), from(b));
		b = (b & 0x800fffffffffffffu) | ((a & 0x7ff0000000000000u) -
		     ((next() % 64) << 52 & 0x7ff0000000000000u));
		pair(from(a), from(b));
	}
	flush();
	if (bad)
		printf("FAIL: %d of %ld pairs differ from libm's fmod\n", bad, ncase);
	else
		printf("ok: %ld pairs, bit for bit libm's fmod\n", ncase);
	return bad != 0;
}

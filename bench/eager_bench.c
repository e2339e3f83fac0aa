/*
 * eager_bench.c - libburn's eager API (include/burn.h), one thread:
 *
 *   dispatch   a 16-element add realised and read back, then released:
 *              burn_add + burn_read + burn_release per iteration, the
 *              program found in the context's cache every time (mean of
 *              a timed loop, best of several loops)
 *   gelu       gelu_custom(x) = x * (erf(x / sqrt 2) + 1) / 2 on 2^24 f32,
 *              recorded op by op and realised (one kernel), x kept and
 *              the result released each time; in the same rounds, a
 *              one-thread memcpy of the same bytes and, when built with
 *              -DBENCH_AOT and burncc's C of the same expression
 *              (gelu_model.c, bench/eager.sh), that AOT build.  The three
 *              run interleaved, in a rotating order, `reps` rounds; each
 *              is given as median, min and max; throughput = bytes read +
 *              written per second
 *
 * Usage: eager_bench [reps]   (bench/eager.sh builds it with the AOT C)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "burn.h"
#ifdef BENCH_AOT
#include "gelu_model.h"
#endif

#define N (1 << 24)
#define MAXREP 1000
enum { NWHAT = 3 };   /* memcpy, eager, AOT C */

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median of v[0..n) (sorted in place); its min and max. */
static double
median(double *v, int n, double *lo, double *hi)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	*lo = v[0];
	*hi = v[n - 1];
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void
check(burn_ctx *c, burn_status s, const char *what)
{
	if (s) {
		fprintf(stderr, "eager_bench: %s: %s\n", what, burn_message(c));
		exit(1);
	}
}

static burn_tensor *
gelu(burn_ctx *c, burn_tensor *x)
{
	burn_tensor *a, *b, *d, *e, *f;
	check(c, burn_div_scalar(c, x, sqrt(2.0), &a), "div");
	check(c, burn_unary(c, "Erf", a, &b), "erf");
	burn_release(a);
	check(c, burn_add_scalar(c, b, 1, &d), "add");
	burn_release(b);
	check(c, burn_mul(c, x, d, &e), "mul");
	burn_release(d);
	check(c, burn_div_scalar(c, e, 2, &f), "div");
	burn_release(e);
	return f;
}

int
main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 10;
	burn_options o = { .threads = 1 };
	burn_ctx *c;
	burn_tensor *a, *b, *x, *y;
	int64_t n16 = 16, n = N;
	float r16[16], *src, *dst;
	double best, t0, dt;
	static double t[NWHAT][MAXREP];
	burn_stats s;

	check(NULL, burn_ctx_create(&o, &c), "context");
	/* ---- dispatch ---- */
	check(c, burn_arange(c, BURN_F32, 0, 16, 1, &a), "arange");
	check(c, burn_ones(c, BURN_F32, 1, &n16, &b), "ones");
	best = 1e9;
	for (int rep = 0; rep < 5; rep++) {
		int iters = 200000;
		t0 = now();
		for (int i = 0; i < iters; i++) {
			burn_tensor *z;
			burn_add(c, a, b, &z);
			burn_read(c, z, r16, sizeof r16);
			burn_release(z);
		}
		dt = (now() - t0) / iters;
		if (dt < best)
			best = dt;
	}
	if (r16[15] != 16) {
		fprintf(stderr, "eager_bench: wrong sum %g\n", r16[15]);
		return 1;
	}
	burn_get_stats(c, &s);
	printf("dispatch: 16-element add + read + release: %.3f us (compiles %lld, "
	       "cache hits %lld)\n", best * 1e6, (long long)s.compiles,
	       (long long)s.mem_hits);
	/* ---- gelu_custom on 2^24: eager, memcpy, AOT C, interleaved ---- */
	check(c, burn_randn(c, BURN_F32, 1, &n, 0, 1, 1, &x), "randn");
	y = gelu(c, x);
	t0 = now();
	check(c, burn_sync(c), "first gelu");
	printf("gelu first realisation (compile + run): %.1f ms\n", (now() - t0) * 1e3);
	burn_release(y);
	src = malloc(sizeof *src * N);
	dst = malloc(sizeof *dst * N);
	if (!src || !dst || reps < 1 || reps > MAXREP)
		return 1;
	check(c, burn_read(c, x, src, sizeof *src * N), "read x");
	memset(dst, 0, sizeof *dst * N);
	for (int rep = 0; rep < reps; rep++)
		for (int k = 0; k < NWHAT; k++) {
			int w = (rep + k) % NWHAT;
			t0 = now();
			switch (w) {
			case 0:
				memcpy(dst, src, sizeof *src * N);
				break;
			case 1:
				y = gelu(c, x);
				check(c, burn_sync(c), "gelu");
				t[w][rep] = now() - t0;
				burn_release(y);
				continue;
			case 2:
#ifdef BENCH_AOT
				if (gelu_model_run(src, dst, NULL))
					return 1;
#endif
				break;
			}
			t[w][rep] = now() - t0;
		}
	burn_get_stats(c, &s);
	double gb = 2.0 * sizeof(float) * N / 1e9, med[NWHAT];
	static const char *const what[NWHAT] = {
		"memcpy 2^24 f32, 1 thread", "eager gelu_custom (libburn, JIT)",
		"AOT C gelu (burncc -o, cc -O3 -march=native)",
	};
	printf("%d interleaved rounds: median [min, max]\n", reps);
	for (int w = 0; w < NWHAT; w++) {
		double lo, hi;
#ifndef BENCH_AOT
		if (w == 2)
			continue;
#endif
		med[w] = median(t[w], reps, &lo, &hi);
		printf("%-46s %6.2f ms [%.2f, %.2f], %5.1f GB/s\n", what[w], med[w] * 1e3,
		       lo * 1e3, hi * 1e3, gb / med[w]);
	}
	printf("eager gelu_custom: %lld kernel, %.0f%% of memcpy's throughput\n",
	       (long long)s.last_kernels, 100.0 * med[0] / med[1]);
#ifdef BENCH_AOT
	printf("eager / AOT C time: %.3f (AOT C: %.0f%% of memcpy's throughput)\n",
	       med[1] / med[2], 100.0 * med[0] / med[2]);
#endif
	free(src);
	free(dst);
	burn_ctx_destroy(c);
	return 0;
}

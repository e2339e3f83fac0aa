/*
 * eager_bench.c - libburn's eager API (include/burn.h), one thread:
 *
 *   dispatch   a 16-element add realised and read back, then released:
 *              burn_add + burn_read + burn_release per iteration, the
 *              program found in the context's cache every time (mean of
 *              a timed loop, best of several loops)
 *   gelu       gelu_custom(x) = x * (erf(x / sqrt 2) + 1) / 2 on 2^24 f32,
 *              recorded op by op and realised (one kernel), x kept and
 *              the result released each time (best of reps), beside a
 *              one-thread memcpy of the same bytes in the same process;
 *              throughput = bytes read + written per second
 *
 * Usage: eager_bench [reps]   (bench/eager.sh runs it with its peers)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "burn.h"

#define N (1 << 24)

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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
	/* ---- gelu_custom on 2^24 ---- */
	check(c, burn_randn(c, BURN_F32, 1, &n, 0, 1, 1, &x), "randn");
	y = gelu(c, x);
	t0 = now();
	check(c, burn_sync(c), "first gelu");
	printf("gelu first realisation (compile + run): %.1f ms\n", (now() - t0) * 1e3);
	burn_release(y);
	best = 1e9;
	for (int rep = 0; rep < reps; rep++) {
		t0 = now();
		y = gelu(c, x);
		check(c, burn_sync(c), "gelu");
		dt = now() - t0;
		burn_release(y);
		if (dt < best)
			best = dt;
	}
	burn_get_stats(c, &s);
	double gelu_s = best;
	/* memcpy of the same bytes */
	src = malloc(sizeof *src * N);
	dst = malloc(sizeof *dst * N);
	if (!src || !dst)
		return 1;
	memset(src, 1, sizeof *src * N);
	memset(dst, 0, sizeof *dst * N);
	best = 1e9;
	for (int rep = 0; rep < reps; rep++) {
		t0 = now();
		memcpy(dst, src, sizeof *src * N);
		dt = now() - t0;
		if (dt < best)
			best = dt;
	}
	double gb = 2.0 * sizeof(float) * N / 1e9;
	printf("memcpy 2^24 f32, 1 thread:        %7.2f ms, %5.1f GB/s\n", best * 1e3,
	       gb / best);
	printf("eager gelu_custom 2^24 f32 (%lld kernel): %7.2f ms, %5.1f GB/s, %.0f%% of "
	       "memcpy\n", (long long)s.last_kernels, gelu_s * 1e3, gb / gelu_s,
	       100.0 * best / gelu_s);
	free(src);
	free(dst);
	burn_ctx_destroy(c);
	return 0;
}

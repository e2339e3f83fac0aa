/*
 * gelu.c - the fused composed GELU against memcpy on the same buffers.
 *
 * gelu_custom(x) = x * (erf(x / sqrt(2)) + 1) / 2, written from five ONNX
 * primitives (bench/gelu/model.onnx), compiled by burncc into one kernel.
 * Both it and memcpy read 2^24 floats and write 2^24 floats; we report the
 * throughput of each (bytes read + written per second) and their ratio,
 * best of several runs, measured in the same process.  Built with
 * -fopenmp the kernel runs on OMP_NUM_THREADS threads, and the same
 * number of threads also copies (each its share of the buffer) for a fair
 * second comparison.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gelu_model.h"
#ifdef _OPENMP
#include <omp.h>
#endif

#define N (1 << 24)

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* memcpy split over the OpenMP threads (plain memcpy without OpenMP). */
static void copy_par(float *dst, const float *src, int64_t n)
{
#ifdef _OPENMP
	int nt = omp_get_max_threads();
#pragma omp parallel for
	for (int t = 0; t < nt; t++) {
		int64_t lo = n * t / nt, hi = n * (t + 1) / nt;
		memcpy(dst + lo, src + lo, sizeof(float) * (hi - lo));
	}
#else
	memcpy(dst, src, sizeof(float) * n);
#endif
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 10;
	float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
	double best_gelu = 1e9, best_copy = 1e9, best_par = 1e9, maxerr = 0;
	int threads = 1;
	unsigned s = 1;

	if (!x || !y)
		return 1;
	for (int i = 0; i < N; i++) {
		s = s * 1103515245u + 12345u;
		x[i] = ((s >> 8) / 16777216.0f - 0.5f) * 8;
	}
	memset(y, 0, sizeof(float) * N);
	for (int r = 0; r < reps; r++) {
		double t0 = now();
		if (gelu_model_run(x, y, NULL))
			return 1;
		double t1 = now();
		memcpy(y, x, sizeof(float) * N);
		double t2 = now();
		copy_par(y, x, N);
		double t3 = now();
		if (t1 - t0 < best_gelu) best_gelu = t1 - t0;
		if (t2 - t1 < best_copy) best_copy = t2 - t1;
		if (t3 - t2 < best_par) best_par = t3 - t2;
	}
	gelu_model_run(x, y, NULL);
	for (int i = 0; i < N; i += 997) {
		double r = x[i] * (erf(x[i] / sqrt(2.0)) + 1) / 2;
		if (fabs(y[i] - r) > maxerr)
			maxerr = fabs(y[i] - r);
	}
	double bytes = 2.0 * sizeof(float) * N;
#ifdef _OPENMP
	threads = omp_get_max_threads();
#endif
	printf("n = 2^24 floats, best of %d runs, %d thread(s)\n", reps, threads);
	printf("memcpy              %7.2f ms  %6.2f GB/s\n", best_copy * 1e3, bytes / best_copy / 1e9);
	if (threads > 1)
		printf("memcpy, %d threads   %7.2f ms  %6.2f GB/s\n", threads, best_par * 1e3,
		       bytes / best_par / 1e9);
	printf("burncc gelu         %7.2f ms  %6.2f GB/s  (max abs error %.2g)\n",
	       best_gelu * 1e3, bytes / best_gelu / 1e9, maxerr);
	printf("gelu / memcpy throughput: %.0f%%\n", 100 * best_copy / best_gelu);
	if (threads > 1)
		printf("gelu / memcpy (%d threads) throughput: %.0f%%\n", threads,
		       100 * best_par / best_gelu);
	free(x);
	free(y);
	return 0;
}

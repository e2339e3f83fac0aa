/*
 * gelu.c - the fused composed GELU against memcpy on the same buffers.
 *
 * gelu_custom(x) = x * (erf(x / sqrt(2)) + 1) / 2, written from five ONNX
 * primitives (bench/gelu/model.onnx), compiled by burncc into one kernel.
 * Both it and memcpy read 2^24 floats and write 2^24 floats; we report the
 * throughput of each (bytes read + written per second) and their ratio,
 * best of several runs, measured in the same process.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gelu_model.h"

#define N (1 << 24)

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 10;
	float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
	double best_gelu = 1e9, best_copy = 1e9, maxerr = 0;
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
		if (t1 - t0 < best_gelu) best_gelu = t1 - t0;
		if (t2 - t1 < best_copy) best_copy = t2 - t1;
	}
	gelu_model_run(x, y, NULL);
	for (int i = 0; i < N; i += 997) {
		double r = x[i] * (erf(x[i] / sqrt(2.0)) + 1) / 2;
		if (fabs(y[i] - r) > maxerr)
			maxerr = fabs(y[i] - r);
	}
	double bytes = 2.0 * sizeof(float) * N;
	printf("n = 2^24 floats, best of %d runs\n", reps);
	printf("memcpy        %7.2f ms  %6.2f GB/s\n", best_copy * 1e3, bytes / best_copy / 1e9);
	printf("burncc gelu   %7.2f ms  %6.2f GB/s  (max abs error %.2g)\n",
	       best_gelu * 1e3, bytes / best_gelu / 1e9, maxerr);
	printf("gelu / memcpy throughput: %.0f%%\n", 100 * best_copy / best_gelu);
	free(x);
	free(y);
	return 0;
}

/*
 * step_bench.c - time a train step written by `burncc train -o step.c`
 * (module prefix "step"): STEPS steps on fixed inputs (x = sin(i)/2 + 1/2,
 * labels i % 10; no data set), the parameters and states swapped after
 * each as step.h describes.  Prints the total, the best step and the last
 * loss (the loss shows that 1 and 2 threads compute the same).
 *
 *     burncc train examples/cnn_train.burn -o step.c
 *     cc -O3 -march=native -fopenmp -I. bench/step_bench.c step.c -lm -o step_bench
 *     OMP_NUM_THREADS=2 ./step_bench 100
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "step.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 100, cur = 0;
	float *p[2][STEP_TRAIN_PARAMS], *s[2][STEP_TRAIN_PARAMS * STEP_TRAIN_STATES + 1];
	static float x[STEP_TRAIN_BATCH * STEP_TRAIN_FEATURES];
	int64_t lab[STEP_TRAIN_BATCH];
	void *arena = aligned_alloc(64, (STEP_ARENA_BYTES + 63) / 64 * 64 + 64);
	float loss = 0;
	double best = 1e9, t0;

	for (int c = 0; c < 2; c++)
		for (int i = 0; i < STEP_TRAIN_PARAMS; i++) {
			p[c][i] = calloc(step_train_numel[i], sizeof(float));
			for (int k = 0; k < STEP_TRAIN_STATES; k++)
				s[c][i * STEP_TRAIN_STATES + k] = calloc(step_train_numel[i], sizeof(float));
		}
	step_train_init(p[0], s[0]);
	for (int i = 0; i < STEP_TRAIN_BATCH * STEP_TRAIN_FEATURES; i++)
		x[i] = (float)(sin(i) * 0.5 + 0.5);
	for (int i = 0; i < STEP_TRAIN_BATCH; i++)
		lab[i] = i % 10;
	t0 = now();
	for (int t = 1; t <= steps; t++, cur ^= 1) {
		double a = now();
		step_train_step(t, x, lab, p[cur], s[cur], p[!cur], s[!cur], &loss, arena);
		if (now() - a < best)
			best = now() - a;
	}
	printf("steps %d total %.3f s best %.3f ms loss %.6f\n", steps, now() - t0, best * 1e3, loss);
	return 0;
}

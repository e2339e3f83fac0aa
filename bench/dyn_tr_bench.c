/*
 * dyn_tr_bench.c - the driver bench/dyn_transformer.sh builds with the
 * encoder block of tests/dynamic/transformer.py (prefix "model", x and y
 * f32 [B, S, 32]), once compiled with --dim batch=B --dim seq=S (static)
 * and once with --dynamic-dim batch --dynamic-dim seq (-DDYN).
 *
 *	run B S ITERS
 *
 * Runs the model ITERS times on zero inputs and prints the CPU time per
 * run (CLOCK_PROCESS_CPUTIME_ID), in ms.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "model.h"

int
main(int argc, char **argv)
{
	int64_t b, s, ab;
	float *x, *y;
	void *arena;
	struct timespec t0, t1;
	int iters;

	if (argc != 4)
		return 2;
	b = atoll(argv[1]);
	s = atoll(argv[2]);
	iters = atoi(argv[3]);
	x = calloc((size_t)(b * s * 32), sizeof *x);
	y = calloc((size_t)(b * s * 32), sizeof *y);
#ifdef DYN
	ab = model_arena_bytes(b, s);
#else
	ab = MODEL_ARENA_BYTES;
#endif
	arena = aligned_alloc(MODEL_ARENA_ALIGN, (size_t)(ab / MODEL_ARENA_ALIGN + 1) *
	                      MODEL_ARENA_ALIGN);
	if (!x || !y || !arena || ab < 0)
		return 1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	for (int i = 0; i < iters; i++)
#ifdef DYN
		if (model_run(b, s, x, y, arena))
#else
		if (model_run(x, y, arena))
#endif
			return 1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	printf("%.3f\n", ((t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6) / iters);
	return 0;
}

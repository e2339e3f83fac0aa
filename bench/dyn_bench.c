/*
 * dyn_bench.c - the driver bench/dynamic.sh builds with each generated
 * model (prefix "model"), once compiled with --dim N=VALUE (static) and
 * once with --dynamic-dim N (-DDYN).
 *
 *	run N ITERS
 *
 * Runs the model ITERS times on zero inputs sized for N items and prints
 * the CPU time per run (CLOCK_PROCESS_CPUTIME_ID), in ms.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "model.h"

static int64_t
bytes_at(const model_tensor_info *t, int64_t n)
{
	int64_t b = t->dtype == 7 || t->dtype == 11 ? 8 : t->dtype == 9 ? 1 : 4;

	for (int d = 0; d < t->rank; d++)
		b *= t->dims[d] < 0 ? n : t->dims[d];
	return b;
}

int
main(int argc, char **argv)
{
	void *in[MODEL_NUM_INPUTS + 1], *out[MODEL_NUM_OUTPUTS + 1], *arena;
	int64_t n, ab, dims[1];
	struct timespec t0, t1;
	int iters;

	if (argc != 3)
		return 2;
	n = dims[0] = atoll(argv[1]);
	iters = atoi(argv[2]);
	for (int i = 0; i < MODEL_NUM_INPUTS; i++)
		if (!(in[i] = calloc(1, (size_t)bytes_at(&model_inputs[i], n))))
			return 1;
	for (int i = 0; i < MODEL_NUM_OUTPUTS; i++)
		if (!(out[i] = calloc(1, (size_t)bytes_at(&model_outputs[i], n))))
			return 1;
#ifdef DYN
	ab = model_arena_bytes(n);
#else
	ab = MODEL_ARENA_BYTES;
#endif
	if (ab < 0 || !(arena = aligned_alloc(MODEL_ARENA_ALIGN, (size_t)((ab +
	                MODEL_ARENA_ALIGN) / MODEL_ARENA_ALIGN * MODEL_ARENA_ALIGN))))
		return 1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	for (int k = 0; k < iters; k++) {
#ifdef DYN
		if (model_run_v(dims, (const void *const *)in, out, arena))
			return 1;
#else
		if (model_run_v((const void *const *)in, out, arena))
			return 1;
#endif
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	printf("%.3f\n", ((double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	                  (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / iters);
	return 0;
}

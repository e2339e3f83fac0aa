/*
 * dyn_run.c - the driver models.py builds with each generated model
 * (burncc --dynamic-dim N -o model.c, prefix "model").
 *
 *	run N IN0.bin ... INk.bin OUTPREFIX
 *
 * Reads each input's raw elements (a dim of -1 in model_inputs[] is N),
 * runs model_run_v with an arena of model_arena_bytes(N), and writes
 * output j's raw elements to OUTPREFIXj.bin.  With DYN_SEED_BUG the last
 * item's first element of output 0 is changed first (models.py
 * --seed-bug: the test must then fail).  Exit 1 on any error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"

/* Bytes of one element of ONNX dtype dt (the ones the models use). */
static int64_t
esize(int dt)
{
	switch (dt) {
	case 1: case 6: return 4;              /* float, int32 */
	case 7: case 11: return 8;             /* int64, double */
	case 9: case 2: case 3: return 1;      /* bool, uint8, int8 */
	case 10: case 16: case 4: case 5: return 2;
	}
	return -1;
}

static int64_t
bytes_at(const model_tensor_info *t, int64_t n)
{
	int64_t b = esize(t->dtype);

	for (int d = 0; d < t->rank && b >= 0; d++)
		b *= t->dims[d] < 0 ? n : t->dims[d];
	return b;
}

int
main(int argc, char **argv)
{
	void *in[MODEL_NUM_INPUTS + 1], *out[MODEL_NUM_OUTPUTS + 1];
	int64_t n, ab, dims[1];
	void *arena;
	int rc;

	if (argc != MODEL_NUM_INPUTS + 3) {
		fprintf(stderr, "usage: run N IN... OUTPREFIX\n");
		return 1;
	}
	n = atoll(argv[1]);
	dims[0] = n;
	for (int i = 0; i < MODEL_NUM_INPUTS; i++) {
		int64_t b = bytes_at(&model_inputs[i], n);
		FILE *f = fopen(argv[2 + i], "rb");
		if (b < 0 || !f || !(in[i] = malloc((size_t)b + 1)) ||
		    fread(in[i], 1, (size_t)b, f) != (size_t)b) {
			fprintf(stderr, "input %d (%s): cannot read %lld bytes\n", i,
			        argv[2 + i], (long long)b);
			return 1;
		}
		fclose(f);
	}
	for (int i = 0; i < MODEL_NUM_OUTPUTS; i++) {
		int64_t b = bytes_at(&model_outputs[i], n);
		if (b < 0 || !(out[i] = calloc(1, (size_t)b + 1)))
			return 1;
	}
	ab = model_arena_bytes(n);
	if (ab < 0) {
		fprintf(stderr, "model_arena_bytes(%lld) = %lld\n", (long long)n,
		        (long long)ab);
		return 1;
	}
	arena = aligned_alloc(MODEL_ARENA_ALIGN, (size_t)((ab + MODEL_ARENA_ALIGN) /
	                      MODEL_ARENA_ALIGN * MODEL_ARENA_ALIGN));
	if (!arena)
		return 1;
	rc = model_run_v(dims, (const void *const *)in, out, arena);
	if (rc != MODEL_OK) {
		fprintf(stderr, "model_run_v: %s\n", model_strerror(rc));
		return 1;
	}
#ifdef DYN_SEED_BUG
	if (n > 1 && model_outputs[0].dtype == 1) {
		int64_t b = bytes_at(&model_outputs[0], n);
		((float *)out[0])[(b / 4 / n) * (n - 1)] += 1.0f;
	}
#endif
	for (int i = 0; i < MODEL_NUM_OUTPUTS; i++) {
		char path[4096];
		int64_t b = bytes_at(&model_outputs[i], n);
		FILE *f;
		snprintf(path, sizeof path, "%s%d.bin", argv[argc - 1], i);
		if (!(f = fopen(path, "wb")) || fwrite(out[i], 1, (size_t)b, f) != (size_t)b) {
			fprintf(stderr, "%s: cannot write\n", path);
			return 1;
		}
		fclose(f);
	}
	return 0;
}

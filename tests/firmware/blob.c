/*
 * blob.c - the driver of tests/firmware/blob.sh: runs a module compiled
 * with --weights=blob --name model on raw inputs and compares its outputs
 * with raw expected ones (burncc check's tolerance for floats, exact
 * otherwise) and, bit for bit, with the same model compiled with its
 * weights as initialisers (--name lit), built into the same program.
 *
 *   blob incbin NIN IN... EXP...     the blob linked in (model_weights)
 *   blob file BLOB NIN IN... EXP...  the blob read from BLOB, checked with
 *                                    model_weights_check first
 *   blob errors BLOB                 the refusals: NULL, misaligned, another
 *                                    blob's id, one flipped byte
 * Exit 0 when all agree; a message and 1 otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "lit.h"

static unsigned char arena[MODEL_ARENA_BYTES ? MODEL_ARENA_BYTES : 1]
	__attribute__((aligned(MODEL_ARENA_ALIGN)));
static unsigned char arena2[LIT_ARENA_BYTES ? LIT_ARENA_BYTES : 1]
	__attribute__((aligned(LIT_ARENA_ALIGN)));

static void *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *p;
	long len;

	if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		return fprintf(stderr, "cannot read %s\n", path), exit(1), NULL;
	/* the blob's alignment; also what any input may have */
	p = aligned_alloc(MODEL_WEIGHTS_ALIGN, ((size_t)len + 64) / 64 * 64);
	if (!p || fread(p, 1, (size_t)len, f) != (size_t)len)
		return fprintf(stderr, "cannot read %s\n", path), exit(1), NULL;
	fclose(f);
	*n = (size_t)len;
	return p;
}

static int errors(const char *path)
{
	size_t n;
	unsigned char *w = slurp(path, &n), *odd;
	const void *in[MODEL_NUM_INPUTS + 1];
	void *out[MODEL_NUM_OUTPUTS + 1];
	int bad = 0;

	/* real buffers: a check that is missing lets the run go through */
	for (int i = 0; i < MODEL_NUM_INPUTS; i++)
		in[i] = calloc(1, (size_t)model_inputs[i].bytes + 1);
	for (int i = 0; i < MODEL_NUM_OUTPUTS; i++)
		out[i] = calloc(1, (size_t)model_outputs[i].bytes + 1);

	if (model_weights_check(w, n) != MODEL_OK)
		bad |= 1, printf("FAIL: weights_check refuses the blob\n");
	if (model_weights_check(w, n - 1) != MODEL_ERR_WEIGHTS)
		bad |= 2, printf("FAIL: weights_check takes a short size\n");
	if (model_run_v(NULL, in, out, arena) != MODEL_ERR_WEIGHTS)
		bad |= 4, printf("FAIL: run takes NULL weights\n");
	odd = aligned_alloc(64, (n + 128) / 64 * 64);
	memcpy(odd + 4, w, n);
	if (model_run_v(odd + 4, in, out, arena) != MODEL_ERR_WEIGHTS)
		bad |= 8, printf("FAIL: run takes misaligned weights\n");
	w[20] ^= 1;   /* the hash in the id: another build's blob */
	if (model_run_v(w, in, out, arena) != MODEL_ERR_WEIGHTS)
		bad |= 16, printf("FAIL: run takes another blob's id\n");
	w[20] ^= 1;
	w[n - 1] ^= 0x40;   /* a flipped bit in the last weight */
	if (model_weights_check(w, n) != MODEL_ERR_WEIGHTS)
		bad |= 32, printf("FAIL: weights_check misses a flipped bit\n");
	if (!bad)
		printf("ok: refused NULL, misaligned, another id, a short size, a flipped bit\n");
	return bad != 0;
}

int main(int argc, char **argv)
{
	const void *in[MODEL_NUM_INPUTS + 1];
	void *out[MODEL_NUM_OUTPUTS + 1], *out2[MODEL_NUM_OUTPUTS + 1];
	const void *w;
	int a = 2, nin, bad = 0, rc;
	size_t n;

	if (argc == 3 && !strcmp(argv[1], "errors"))
		return errors(argv[2]);
	if (argc < 3)
		return fprintf(stderr, "usage: see blob.c\n"), 2;
#ifdef MODEL_WEIGHTS_INCBIN
	if (!strcmp(argv[1], "incbin"))
		w = model_weights;
	else
#endif
	if (!strcmp(argv[1], "file")) {
		w = slurp(argv[a++], &n);
		if (model_weights_check(w, n) != MODEL_OK)
			return printf("FAIL: model_weights_check refuses %s\n", argv[2]), 1;
	} else
		return fprintf(stderr, "blob: %s not built in\n", argv[1]), 2;
	nin = atoi(argv[a++]);
	if (nin != MODEL_NUM_INPUTS || argc != a + nin + MODEL_NUM_OUTPUTS)
		return fprintf(stderr, "blob: %d inputs and %d outputs expected\n",
		               MODEL_NUM_INPUTS, MODEL_NUM_OUTPUTS), 2;
	for (int i = 0; i < nin; i++)
		in[i] = slurp(argv[a++], &n);
	for (int i = 0; i < MODEL_NUM_OUTPUTS; i++) {
		out[i] = calloc(1, (size_t)model_outputs[i].bytes + 1);
		out2[i] = calloc(1, (size_t)model_outputs[i].bytes + 1);
	}
	if ((rc = model_run_v(w, in, out, arena)) != MODEL_OK)
		return printf("FAIL: model_run_v returned %d\n", rc), 1;
	if ((rc = lit_run_v(in, out2, arena2)) != LIT_OK)
		return printf("FAIL: lit_run_v returned %d\n", rc), 1;
	for (int i = 0; i < MODEL_NUM_OUTPUTS; i++) {
		size_t nb = (size_t)model_outputs[i].bytes;
		const unsigned char *e = slurp(argv[a++], &n);
		if (n != nb)
			return printf("FAIL: output %d: %zu bytes expected, %zu made\n", i, n, nb), 1;
		if (memcmp(out[i], out2[i], nb))
			bad = 1, printf("FAIL: output %d differs from the initialiser build's\n", i);
		if (model_outputs[i].dtype == 1) {
			const float *y = out[i], *r = (const float *)(const void *)e;
			for (size_t k = 0; k < nb / 4; k++)
				if (!(fabsf(y[k] - r[k]) <= 1e-5f + 1e-3f * fabsf(r[k]))) {
					printf("FAIL: output %d [%zu]: %g, expected %g\n", i, k, y[k], r[k]);
					bad = 1;
					break;
				}
		} else if (memcmp(out[i], e, nb))
			bad = 1, printf("FAIL: output %d differs from the expected\n", i);
	}
	if (!bad)
		printf("ok: %s: %d output(s) match the reference and the initialiser build\n",
		       argv[1], MODEL_NUM_OUTPUTS);
	return bad;
}

/*
 * model_bench.c - time one model compiled by burncc (linked as prefix
 * "model").  Inputs are deterministic: floats sin(i)/2, integers 0, the
 * same as bench/ort_bench.js feeds ONNX Runtime.  Prints the median and
 * best time per inference over at least 1 s of runs.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct model_tensor_info {
	const char *name; int dtype; int rank; const int64_t *dims; int64_t bytes;
} model_tensor_info;
extern const model_tensor_info model_inputs[], model_outputs[];
int model_run_v(const void *const *in, void *const *out, void *arena);

#ifndef NIN
#error "define NIN, NOUT and ARENA (from the generated header)"
#endif

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	void *in[NIN + 1], *out[NOUT + 1];
	static double t[100000];
	int n = 0;
	double start;
	void *arena = aligned_alloc(64, ((ARENA + 63) / 64) * 64 + 64);

	for (int i = 0; i < NIN; i++) {
		in[i] = calloc(1, model_inputs[i].bytes + 8);
		if (model_inputs[i].dtype == 1)
			for (int64_t k = 0; k < model_inputs[i].bytes / 4; k++)
				((float *)in[i])[k] = (float)(sin((double)k) / 2);
	}
	for (int i = 0; i < NOUT; i++)
		out[i] = calloc(1, model_outputs[i].bytes + 8);
	model_run_v((const void *const *)in, out, arena);   /* warm up */
	start = now();
	while (n < 100000 && (now() - start < 1.0 || n < 10)) {
		double t0 = now();
		model_run_v((const void *const *)in, out, arena);
		t[n++] = now() - t0;
	}
	qsort(t, n, sizeof *t, cmp);
	printf("%s %.4f %.4f %d\n", argc > 1 ? argv[1] : "model", t[n / 2] * 1e3, t[0] * 1e3, n);
	return 0;
}

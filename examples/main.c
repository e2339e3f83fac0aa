/*
 * main.c - a small program that embeds a model compiled by burncc.
 *
 *     burncc examples/lenet/lenet.onnx -o lenet.c
 *     cc -O3 main.c lenet.c -lm -o lenet
 *     ./lenet examples/lenet/input.bin
 *
 * It reads the input tensor as raw little-endian floats, runs the model,
 * prints the output and the time per inference.  The model's API is in the
 * generated lenet.h: sizes, names and shapes are compile-time constants,
 * and the arena is a static buffer: no malloc anywhere.
 */
#include <stdio.h>
#include <time.h>
#include "lenet.h"

static unsigned char arena[LENET_ARENA_BYTES ? LENET_ARENA_BYTES : 1]
	__attribute__((aligned(LENET_ARENA_ALIGN)));
static float input[2 * 1 * 28 * 28];
static float output[2 * 10];

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	const void *in[1] = { input };
	void *out[1] = { output };
	FILE *f;
	double t0, dt;
	int reps = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s INPUT.bin\n", argv[0]);
		return 2;
	}
	if (sizeof input != (size_t)lenet_inputs[0].bytes ||
	    sizeof output != (size_t)lenet_outputs[0].bytes) {
		fprintf(stderr, "model does not have the expected shapes\n");
		return 1;
	}
	f = fopen(argv[1], "rb");
	if (!f || fread(input, 1, sizeof input, f) != sizeof input) {
		fprintf(stderr, "cannot read %s\n", argv[1]);
		return 1;
	}
	fclose(f);

	if (lenet_run_v(in, out, arena) != LENET_OK) {
		fprintf(stderr, "lenet_run failed\n");
		return 1;
	}
	for (int b = 0; b < 2; b++) {
		int best = 0;
		printf("image %d:", b);
		for (int k = 0; k < 10; k++) {
			printf(" %.4f", output[b * 10 + k]);
			if (output[b * 10 + k] > output[b * 10 + best])
				best = k;
		}
		printf("  -> class %d\n", best);
	}
	/* time: repeat for at least half a second */
	t0 = now();
	do {
		lenet_run_v(in, out, arena);
		reps++;
	} while ((dt = now() - t0) < 0.5);
	printf("%s: %d runs, %.1f us per inference (batch 2), arena %d bytes\n",
	       "lenet", reps, dt / reps * 1e6, LENET_ARENA_BYTES);
	return 0;
}

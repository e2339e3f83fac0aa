/*
 * driver.c - runs a module compiled by `burncc SCRIPT.burn -o aot.c --name
 * aot` (any model: it reads aot_inputs[] / aot_outputs[]): reads each
 * input's bytes from the file named on the command line (the inputs one
 * after the other, raw, in order), runs aot_run_v and writes each output's
 * f32 values, one per line, to stdout.  f32 inputs and outputs only.
 */
#include <stdio.h>
#include <stdlib.h>
#include "aot.h"

static unsigned char arena[AOT_ARENA_BYTES ? AOT_ARENA_BYTES : 1]
	__attribute__((aligned(AOT_ARENA_ALIGN)));

int
main(int argc, char **argv)
{
	const void *in[AOT_NUM_INPUTS ? AOT_NUM_INPUTS : 1];
	void *out[AOT_NUM_OUTPUTS ? AOT_NUM_OUTPUTS : 1];
	FILE *f = argc == 2 ? fopen(argv[1], "rb") : NULL;
	int rc;

	if (!f) {
		fprintf(stderr, "usage: %s INPUTS.bin\n", argv[0]);
		return 2;
	}
	for (int i = 0; i < AOT_NUM_INPUTS; i++) {
		void *p = malloc((size_t)aot_inputs[i].bytes + 1);
		if (!p || aot_inputs[i].dtype != 1 ||
		    fread(p, 1, (size_t)aot_inputs[i].bytes, f) != (size_t)aot_inputs[i].bytes) {
			fprintf(stderr, "input %d: short read or not f32\n", i);
			return 1;
		}
		in[i] = p;
	}
	fclose(f);
	for (int i = 0; i < AOT_NUM_OUTPUTS; i++)
		if (!(out[i] = malloc((size_t)aot_outputs[i].bytes + 1)) || aot_outputs[i].dtype != 1)
			return 1;
	if ((rc = aot_run_v(in, out, arena)) != AOT_OK) {
		fprintf(stderr, "aot_run_v: %d\n", rc);
		return 1;
	}
	for (int i = 0; i < AOT_NUM_OUTPUTS; i++)
		for (int64_t k = 0; k < aot_outputs[i].bytes / 4; k++)
			printf("%.9g\n", ((float *)out[i])[k]);
	return 0;
}

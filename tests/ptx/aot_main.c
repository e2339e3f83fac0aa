/*
 * aot_main.c - runs a host module of `burncc --target cuda -o model.c`
 * (ctest cuda_aot, tests/ptx/aot.sh): model_run_v on the inputs in the
 * files named first, again (the module's device buffers reused: the
 * same bytes), then model_run_async_v + model_wait on the same
 * inputs, on the default stream and then on a stream of its own from
 * and to pinned memory (the same bytes again); the outputs go to the
 * files named after.  Exit 77 when the run says there is no CUDA driver or GPU.
 *
 *     ./run in0.bin ... out0.bin ...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"

static void *
slurp(const char *path, int64_t want)
{
	FILE *f = fopen(path, "rb");
	void *b = malloc(want > 0 ? (size_t)want : 1);
	long n;

	if (!f || !b || fseek(f, 0, SEEK_END) || (n = ftell(f)) != want || fseek(f, 0, SEEK_SET) ||
	    (want && fread(b, (size_t)want, 1, f) != 1)) {
		fprintf(stderr, "%s: cannot read %lld bytes\n", path, (long long)want);
		exit(1);
	}
	fclose(f);
	return b;
}

/* static: the buffers stay reachable when main returns early (no leak
 * report under LeakSanitizer) */
static const void *in[MODEL_NUM_INPUTS + 1];
static void *out[MODEL_NUM_OUTPUTS + 1], *again[MODEL_NUM_OUTPUTS + 1];

int
main(int argc, char **argv)
{
	int rc;

	if (argc != 1 + MODEL_NUM_INPUTS + MODEL_NUM_OUTPUTS) {
		fprintf(stderr, "usage: run IN... OUT...\n");
		return 2;
	}
	for (int i = 0; i < MODEL_NUM_INPUTS; i++)
		in[i] = slurp(argv[1 + i], model_input_bytes[i]);
	for (int i = 0; i < MODEL_NUM_OUTPUTS; i++) {
		out[i] = calloc(1, (size_t)model_output_bytes[i] + 1);
		again[i] = calloc(1, (size_t)model_output_bytes[i] + 1);
		if (!out[i] || !again[i])
			return 1;
	}
	if ((rc = model_run_v(in, out, NULL))) {
		fprintf(stderr, "model_run_v: status %d: %s\n", rc, model_message());
		/* 3: BURN_STATUS_UNSUPPORTED (no driver, no GPU) */
		return rc == 3 && strstr(model_message(), "cuda") ? 77 : 1;
	}
	if ((rc = model_run_v(in, again, NULL))) {
		fprintf(stderr, "second run: status %d: %s\n", rc, model_message());
		return 1;
	}
	for (int i = 0; i < MODEL_NUM_OUTPUTS; i++)
		if (memcmp(out[i], again[i], (size_t)model_output_bytes[i])) {
			fprintf(stderr, "output %d: the second run differs\n", i);
			return 1;
		}
	for (int i = 0; i < MODEL_NUM_OUTPUTS; i++)
		memset(again[i], 0xff, (size_t)model_output_bytes[i]);
	if ((rc = model_run_async_v(NULL, in, again)) || (rc = model_wait())) {
		fprintf(stderr, "run_async: status %d: %s\n", rc, model_message());
		return 1;
	}
	for (int i = 0; i < MODEL_NUM_OUTPUTS; i++)
		if (memcmp(out[i], again[i], (size_t)model_output_bytes[i])) {
			fprintf(stderr, "output %d: run_async + wait differs from run\n", i);
			return 1;
		}
	/* on a stream of its own, from and to pinned memory */
	{
		void *st = NULL, *pin[MODEL_NUM_INPUTS + MODEL_NUM_OUTPUTS + 1];
		int k = 0;
		if ((rc = model_stream_new(&st))) {
			fprintf(stderr, "stream_new: status %d: %s\n", rc, model_message());
			return 1;
		}
		for (int i = 0; i < MODEL_NUM_INPUTS + MODEL_NUM_OUTPUTS && !rc; i++, k++) {
			int64_t n = i < MODEL_NUM_INPUTS ? model_input_bytes[i]
			                                 : model_output_bytes[i - MODEL_NUM_INPUTS];
			if ((rc = model_host_alloc((size_t)n, &pin[i])))
				break;
			if (i < MODEL_NUM_INPUTS)
				memcpy(pin[i], in[i], (size_t)n);
			else
				memset(pin[i], 0xff, (size_t)n);
		}
		if (rc || (rc = model_run_async_v(st, (const void *const *)pin,
		                                  pin + MODEL_NUM_INPUTS)) ||
		    (rc = model_wait())) {
			fprintf(stderr, "run_async on a stream: status %d: %s\n", rc, model_message());
			return 1;
		}
		for (int i = 0; i < MODEL_NUM_OUTPUTS; i++)
			if (memcmp(out[i], pin[MODEL_NUM_INPUTS + i], (size_t)model_output_bytes[i])) {
				fprintf(stderr, "output %d: run_async on a stream differs from run\n", i);
				return 1;
			}
		for (int i = 0; i < k; i++)
			model_host_free(pin[i]);
		model_stream_free(st);
	}
	for (int i = 0; i < MODEL_NUM_OUTPUTS; i++) {
		FILE *f = fopen(argv[1 + MODEL_NUM_INPUTS + i], "wb");
		if (!f || fwrite(out[i], (size_t)model_output_bytes[i], 1, f) != 1 || fclose(f))
			return 1;
	}
	model_release();
	return 0;
}

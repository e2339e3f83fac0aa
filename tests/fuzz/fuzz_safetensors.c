/*
 * fuzz_safetensors.c - libFuzzer target for the safetensors reader
 * (frontend/safetensors.c): bytes -> st_parse.  A file it accepts must
 * keep every tensor inside the buffer with the byte count its dtype and
 * shape give (checked here by touching every byte); nothing may crash.
 * The same file linked with replay.c replays tests/fuzz/regressions/safetensors.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "frontend/safetensors.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Arena a;
	Ctx c;
	StFile f;
	volatile uint8_t sink = 0;

	arena_init(&a);
	burn_ctx_init(&c, NULL);
	if (!st_parse(&c, &a, data, size, &f)) {
		for (int i = 0; i < f.n; i++) {
			const StTensor *t = &f.t[i];
			if (t->data < data || t->data + t->bytes > data + size)
				abort();
			for (uint64_t k = 0; k < t->bytes; k++)
				sink ^= t->data[k];
		}
	}
	arena_free(&a);
	(void)sink;
	return 0;
}

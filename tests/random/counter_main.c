/*
 * counter_main.c - the rng_counter input (burncc --rng-counter, README
 * "Random ops") on tests/random/two_unseeded compiled to C as m.c: the same
 * counter draws the same numbers, another counter others, and counter 0
 * the numbers of the model compiled without the input (expected.bin, its
 * output from `burncc run`).  Exit 0 when all hold.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "m.h"

#define N 2000

int main(int argc, char **argv)
{
	static float y0[N], y1[N], y0b[N], ref[N];
	void *arena = aligned_alloc(M_ARENA_ALIGN, (M_ARENA_BYTES + M_ARENA_ALIGN) /
	                            M_ARENA_ALIGN * M_ARENA_ALIGN);
	uint64_t c0 = 0, c1 = 1;
	FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
	int ok;

	if (!arena || !f || fseek(f, -(long)sizeof ref, SEEK_END) ||
	    fread(ref, sizeof ref, 1, f) != 1) {
		fprintf(stderr, "counter_main: cannot read %s\n", argc > 1 ? argv[1] : "?");
		return 2;
	}
	fclose(f);
	if (m_run(&c0, y0, arena) || m_run(&c1, y1, arena) || m_run(&c0, y0b, arena)) {
		fprintf(stderr, "counter_main: m_run failed\n");
		return 2;
	}
	ok = !memcmp(y0, y0b, sizeof y0) && memcmp(y0, y1, sizeof y0) &&
	     !memcmp(y0, ref, sizeof y0);
	printf("counter 0 twice: %s; counter 1: %s; counter 0 = no counter: %s\n",
	       memcmp(y0, y0b, sizeof y0) ? "differ" : "same",
	       memcmp(y0, y1, sizeof y0) ? "other draws" : "SAME draws",
	       memcmp(y0, ref, sizeof y0) ? "differ" : "same");
	free(arena);
	return !ok;
}

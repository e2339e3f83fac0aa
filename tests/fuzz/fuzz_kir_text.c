/*
 * fuzz_kir_text.c - libFuzzer target for the kernel-IR text parser: bytes
 * -> kprog_parse (which verifies every kernel).  A program it accepts must
 * then
 *   - print, parse back and print the same text (an abort otherwise: a
 *     round-trip failure is a finding like a crash),
 *   - render to C (render_c_kernel; a status is fine),
 *   - run in the interpreter when it is small: every loop bound a constant,
 *     at most 20000 statement executions and 1 MiB of buffers (zeros).
 * Nothing may crash; statuses do not matter.
 *
 * Built with -fsanitize=fuzzer,address,undefined by `make fuzz`; the same
 * file linked with replay.c replays tests/fuzz/regressions/kir_text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/kir.h"
#include "codegen/c/render_c.h"

static char *
print_prog(const KProgram *p, size_t *n)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, n);

	if (!f)
		return NULL;
	kprog_print(f, p);
	fclose(f);
	return buf;
}

/* Statement executions of block s (saturating at cap), or cap when a loop
 * bound is not a constant. */
static int64_t
work(const KKernel *k, KRef s, int64_t cap)
{
	int64_t w = 0, lo, hi, trips, body;

	for (; s > 0 && w < cap; s = k->node[s].next) {
		const KNode *n = &k->node[s];
		w++;
		if (n->kind == KS_FOR) {
			if (!kb_is_const_i(k, n->a, &lo) || !kb_is_const_i(k, n->b, &hi))
				return cap;
			trips = hi > lo ? (hi - lo > cap ? cap : hi - lo) : 0;
			body = work(k, n->body, cap);
			w += trips > 0 && body > cap / trips ? cap : trips * body;
		} else if (n->kind == KS_IF) {
			w += work(k, n->body, cap);
			w += work(k, n->orelse, cap);
		}
	}
	return w < cap ? w : cap;
}

static void
try_interp(const KKernel *k)
{
	void **bufs = calloc((size_t)k->nbuf + 1, sizeof *bufs);
	int64_t total = 0;
	Ctx c;
	int i, ok = bufs != NULL;

	/* extents as the interpreter sees them (a kernel with dim parameters
	 * is not run: it has no dims here) */
	burn_ctx_init(&c, "fuzz.kir");
	ok = ok && k->ndim == 0;
	for (i = 0; ok && i < k->nbuf; i++) {
		int64_t n;
		ok = kbuf_extent(&c, k, i, NULL, &n) == BURN_OK && n <= (1 << 20);
		if (ok)
			total += n * dtype_size(k->buf[i].dtype);
	}
	if (ok && total <= (1 << 20) && work(k, k->body, 20001) <= 20000) {
		for (i = 0; ok && i < k->nbuf; i++) {
			int64_t n = 0;
			kbuf_extent(&c, k, i, NULL, &n);
			if (k->buf[i].space == KS_GLOBAL)
				ok = (bufs[i] = calloc((size_t)(n * dtype_size(k->buf[i].dtype)) + 1,
				                       1)) != NULL;
		}
		burn_ctx_init(&c, "fuzz.kir");
		if (ok)
			kir_interp(&c, k, bufs);
	}
	if (bufs)
		for (i = 0; i < k->nbuf; i++)
			free(bufs[i]);
	free(bufs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	Arena a1, a2;
	KProgram p1, p2;
	char *t1 = NULL, *t2 = NULL;
	size_t n1 = 0, n2 = 0;
	Ctx c;

	if (!null && !(null = fopen("/dev/null", "w")))
		return 0;
	burn_ctx_init(&c, "fuzz.kir");
	c.limits.max_tensor_bytes = (int64_t)64 << 20;
	c.limits.max_nodes = 100000;
	arena_init(&a1);
	arena_init(&a2);
	kprog_init(&p1, &a1);
	kprog_init(&p2, &a2);
	if (kprog_parse(&c, &p1, (const char *)data, size) == BURN_OK &&
	    (t1 = print_prog(&p1, &n1))) {
		burn_ctx_init(&c, "printed.kir");
		c.limits.max_tensor_bytes = (int64_t)64 << 20;
		c.limits.max_nodes = 100000;
		if (kprog_parse(&c, &p2, t1, n1) != BURN_OK) {
			fprintf(stderr, "printed text does not parse: %s\n%s\n", c.msg, t1);
			abort();
		}
		t2 = print_prog(&p2, &n2);
		if (!t2 || n1 != n2 || memcmp(t1, t2, n1)) {
			fprintf(stderr, "second print differs:\n%s\n----\n%s\n", t1,
			        t2 ? t2 : "(none)");
			abort();
		}
		for (int k = 0; k < p1.nkernel; k++) {
			burn_ctx_init(&c, "fuzz.kir");
			render_c_kernel(&c, p1.kernel[k], null);
			try_interp(p1.kernel[k]);
		}
	}
	free(t1);
	free(t2);
	arena_free(&a1);
	arena_free(&a2);
	return 0;
}

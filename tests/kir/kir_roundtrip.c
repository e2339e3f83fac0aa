/*
 * kir_roundtrip.c - the kernel-IR text form against every kernel burncc
 * makes: for each model named on the command line that compiles, print its
 * program (kprog_print), parse it back (kprog_parse, which verifies every
 * kernel), print again, and require
 *   - the same text,
 *   - the same kernels: names, ops, buffers (dtype, count, space, access,
 *     value), variables (dtype and hint), the same storage for every value
 *     (aliases), and the same statements and expression trees node by node
 *     (every field, constants to the bit; a node shared within a statement
 *     must come back shared, except constants and variables, which print
 *     at each use; one shared between statements comes back as one copy
 *     per statement),
 *   - for kernels small enough (estimated statement executions, see
 *     work()), the same results from the interpreter: both kernels run on
 *     the same pseudo-random buffer contents and every global buffer must
 *     come out bit-identical (or both runs fail the same way).
 *
 *   kir_roundtrip [--work N] MODEL.onnx...
 *
 * Each model is compiled twice: fused, and with one kernel per node.
 * Prints one line of counts; a failure prints what differed and makes the
 * exit status 1.  Models that do not compile are counted and skipped.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/compile.h"

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

/* Statement executions of block s, saturating at cap; loops whose bounds
 * are not constants count 64 trips. */
static int64_t
work(const KKernel *k, KRef s, int64_t cap)
{
	int64_t w = 0;

	for (; s > 0 && w < cap; s = k->node[s].next) {
		const KNode *n = &k->node[s];
		int64_t lo, hi, trips = 64, body;
		w++;
		if (n->kind == KS_FOR) {
			if (kb_is_const_i(k, n->a, &lo) && kb_is_const_i(k, n->b, &hi))
				trips = hi > lo ? hi - lo : 0;
			body = work(k, n->body, cap);
			w += trips > 0 && body > cap / trips ? cap : trips * body;
		} else if (n->kind == KS_IF) {
			w += work(k, n->body, cap) + work(k, n->orelse, cap);
		}
	}
	return w < cap ? w : cap;
}

static uint64_t rng;

static uint64_t
next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Fill b's elements: small floats, small non-negative integers (so most
 * indices stay in bounds), random bits for the storage types. */
static void
fill(const KBuf *b, unsigned char *p)
{
	int sz = dtype_size(b->dtype);

	for (int64_t i = 0; i < b->count; i++, p += sz) {
		uint64_t r = next_rand();
		if (b->dtype == DT_F32) {
			float x = (float)((int64_t)(r % 4001) - 2000) / 1000.0f;
			memcpy(p, &x, 4);
		} else if (b->dtype == DT_F64) {
			double x = (double)((int64_t)(r % 4001) - 2000) / 1000.0;
			memcpy(p, &x, 8);
		} else if (dtype_is_storage(b->dtype)) {
			memcpy(p, &r, (size_t)sz);
		} else if (b->dtype == DT_BOOL) {
			*p = r & 1;
		} else {
			uint64_t v = r % 4;
			memcpy(p, &v, (size_t)sz);   /* little-endian */
		}
	}
}

/* Run k and k2 on the same contents; 0 if they agree. */
static int
interp_same(const KKernel *k, const KKernel *k2, const char *model)
{
	void **b1 = calloc((size_t)k->nbuf + 1, sizeof *b1);
	void **b2 = calloc((size_t)k->nbuf + 1, sizeof *b2);
	int bad = !b1 || !b2, rc1, rc2;
	Ctx c1, c2;

	/* a call kernel's string buffers hold pointers, which random bytes
	 * are not: its text is compared, its run is not */
	if (k->call) {
		free(b1);
		free(b2);
		return !k2->call || k2->call->fn != k->call->fn;
	}

	for (int i = 0; i < k->nbuf && !bad; i++) {
		size_t n = (size_t)(k->buf[i].count * dtype_size(k->buf[i].dtype)) + 1;
		if (k->buf[i].space != KS_GLOBAL)
			continue;
		b1[i] = malloc(n);
		b2[i] = malloc(n);
		if (!b1[i] || !b2[i]) {
			bad = 1;
			break;
		}
		fill(&k->buf[i], b1[i]);
		memcpy(b2[i], b1[i], n);
	}
	if (!bad) {
		burn_ctx_init(&c1, NULL);
		burn_ctx_init(&c2, NULL);
		rc1 = kir_interp(&c1, k, b1);
		rc2 = kir_interp(&c2, k2, b2);
		if (rc1 != rc2) {
			fprintf(stderr, "FAIL %s: kernel %s: interpreter status %d vs %d (%s | %s)\n",
			        model, k->name, rc1, rc2, c1.msg, c2.msg);
			bad = 1;
		}
		for (int i = 0; i < k->nbuf && !bad && !rc1; i++)
			if (b1[i] && memcmp(b1[i], b2[i], (size_t)(k->buf[i].count *
			                    dtype_size(k->buf[i].dtype)))) {
				fprintf(stderr, "FAIL %s: kernel %s: b%d differs after running\n",
				        model, k->name, i);
				bad = 1;
			}
	}
	for (int i = 0; i < k->nbuf; i++) {
		if (b1) free(b1[i]);
		if (b2) free(b2[i]);
	}
	free(b1);
	free(b2);
	return bad;
}

/* Tree comparison; map[x] is the parsed node matched to original node x
 * while stamp[x] == sid (one statement). */
typedef struct Cmp {
	const KKernel *a, *b;
	int *map, *stamp, sid;
} Cmp;

static int
same_node(const KNode *x, const KNode *y)
{
	return x->kind == y->kind && x->op == y->op && x->dtype == y->dtype &&
	       x->lanes == y->lanes && x->var == y->var && x->buf == y->buf &&
	       x->flags == y->flags && x->ival == y->ival &&
	       memcmp(&x->fval, &y->fval, sizeof x->fval) == 0;
}

static int
same_expr(Cmp *C, KRef x, KRef y)
{
	const KNode *nx, *ny;

	if (x <= 0 || y <= 0)
		return x == y;
	nx = &C->a->node[x];
	ny = &C->b->node[y];
	/* constants and variables print inline at every use */
	if (nx->kind == KE_CONST || nx->kind == KE_VAR)
		return same_node(nx, ny);
	if (C->stamp[x] == C->sid)
		return C->map[x] == y;
	if (!same_node(nx, ny) || !same_expr(C, nx->a, ny->a) ||
	    !same_expr(C, nx->b, ny->b) || !same_expr(C, nx->c, ny->c))
		return 0;
	C->stamp[x] = C->sid;
	C->map[x] = y;
	return 1;
}

static int
same_block(Cmp *C, KRef s, KRef t)
{
	for (; s > 0 && t > 0; s = C->a->node[s].next, t = C->b->node[t].next) {
		const KNode *x = &C->a->node[s], *y = &C->b->node[t];
		C->sid++;
		if (!same_node(x, y) || !same_expr(C, x->a, y->a) ||
		    !same_expr(C, x->b, y->b) || !same_block(C, x->body, y->body) ||
		    !same_block(C, x->orelse, y->orelse))
			return 0;
	}
	return s <= 0 && t <= 0;
}

static int
same_kernel(const KKernel *a, const KKernel *b, const char *model)
{
	const char *why = NULL;

	if (strcmp(a->name, b->name) || strcmp(a->ops, b->ops))
		why = "name or ops";
	else if (a->nbuf != b->nbuf || a->nvar != b->nvar)
		why = "buffer or variable count";
	for (int i = 0; !why && i < a->nbuf; i++) {
		const KBuf *x = &a->buf[i], *y = &b->buf[i];
		if (x->dtype != y->dtype || x->count != y->count || x->space != y->space ||
		    x->access != y->access || x->value != y->value)
			why = "a buffer";
	}
	for (int i = 0; !why && i < a->nvar; i++)
		if (a->var[i].dtype != b->var[i].dtype ||
		    strcmp(a->var[i].name, b->var[i].name))
			why = "a variable";
	if (!why) {
		Cmp C = { a, b, calloc((size_t)a->nnode, sizeof(int)),
		          calloc((size_t)a->nnode, sizeof(int)), 0 };
		if (!C.map || !C.stamp || !same_block(&C, a->body, b->body))
			why = "the body";
		free(C.map);
		free(C.stamp);
	}
	if (why)
		fprintf(stderr, "FAIL %s: kernel %s: %s differs\n", model, a->name, why);
	return why != NULL;
}

int
main(int argc, char **argv)
{
	int64_t maxwork = 2000000;
	int models = 0, nocompile = 0, kernels = 0, same = 0, interp = 0,
	    big = 0, fail = 0, first = 1;

	if (argc > 2 && !strcmp(argv[1], "--work")) {
		maxwork = atoll(argv[2]);
		first = 3;
	}
	for (int i = first; i < argc; i++)
	for (int nofuse = 0; nofuse < 2; nofuse++) {
		const char *model = argv[i];
		CompileOpts o = { 0, NULL, 0, nofuse };
		Compiled *m;
		Arena arena;
		KProgram p2;
		char *t1, *t2 = NULL;
		size_t n1, n2 = 0;
		Ctx c;
		int bad = 0;

		burn_ctx_init(&c, model);
		if (burn_compile_file(&c, model, &o, &m)) {
			nocompile++;
			continue;
		}
		models++;
		arena_init(&arena);
		kprog_init(&p2, &arena);
		t1 = print_prog(&m->prog, &n1);
		burn_ctx_init(&c, "printed");
		if (!t1) {
			fprintf(stderr, "FAIL %s: out of memory\n", model);
			bad = 1;
		} else if (kprog_parse(&c, &p2, t1, n1)) {
			fprintf(stderr, "FAIL %s: does not parse back: %s\n", model, c.msg);
			bad = 1;
		} else if (!(t2 = print_prog(&p2, &n2)) || n1 != n2 || memcmp(t1, t2, n1)) {
			size_t at = 0;
			while (t2 && at < n1 && at < n2 && t1[at] == t2[at])
				at++;
			fprintf(stderr, "FAIL %s: second print differs at byte %zu: '%.60s'\n",
			        model, at, t2 ? t2 + at : "");
			bad = 1;
		} else if (p2.nkernel != m->prog.nkernel) {
			fprintf(stderr, "FAIL %s: %d kernels back from %d\n", model,
			        p2.nkernel, m->prog.nkernel);
			bad = 1;
		}
		for (int v = 0; !bad && v < m->g->nval; v++)
			if (kprog_storage(&m->prog, v) != kprog_storage(&p2, v)) {
				fprintf(stderr, "FAIL %s: v%d lives in v%d, parsed: v%d\n", model,
				        v, kprog_storage(&m->prog, v), kprog_storage(&p2, v));
				bad = 1;
			}
		for (int k = 0; !bad && k < p2.nkernel; k++) {
			const KKernel *a = m->prog.kernel[k], *b = p2.kernel[k];
			kernels++;
			if (same_kernel(a, b, model)) {
				bad = 1;
				break;
			}
			same++;
			if (work(a, a->body, maxwork + 1) > maxwork) {
				big++;
				continue;
			}
			rng = 0x9e3779b97f4a7c15u ^ (uint64_t)k;
			if (interp_same(a, b, model)) {
				bad = 1;
				break;
			}
			interp++;
		}
		fail += bad;
		free(t1);
		free(t2);
		arena_free(&arena);
		burn_compiled_destroy(m);
	}
	printf("kir_roundtrip: %d programs (models fused and unfused; %d did not "
	       "compile), %d kernels: %d print->parse->print identical, %d "
	       "interpreted identically, %d too big to interpret; %d programs "
	       "failed\n", models, nocompile, kernels, same, interp, big, fail);
	return fail != 0 || models == 0;
}

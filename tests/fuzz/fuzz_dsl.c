/*
 * fuzz_dsl.c - grammar-aware libFuzzer target for the .burn parser
 * (frontend/dsl.c).  Each input is source text: dsl_parse must return a
 * status, never crash; a program it accepts must print (dsl_print), and
 * the printed text must parse again and print the same (an abort
 * otherwise: a round-trip failure is a finding like a crash); the error
 * caret (dsl_caret) is drawn for every failure.
 *
 * The mutator works on the language, not on bytes: it cuts the input into
 * tokens and inserts a grammar fragment (a production's start or end: `let
 * x =`, `fn f(a) {`, `module M { a: Linear`, `.erf()`, `, axis=-1`, ...),
 * deletes, duplicates or swaps token runs, or replaces a token by one of
 * the same class; one time in eight it falls back to libFuzzer's byte
 * mutations.  Built with -fsanitize=fuzzer by `make fuzz`; the same file
 * linked with replay.c replays tests/fuzz/regressions/dsl and the
 * examples (ctest fuzz_regressions_dsl).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "frontend/dsl.h"

static char *
print_prog(const DslProgram *p, size_t *n)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, n);

	if (!f)
		return NULL;
	dsl_print(f, p);
	fclose(f);
	return buf;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Arena a;
	Ctx c;
	DslProgram *p;
	DslPos pos;
	char caret[512];

	arena_init(&a);
	burn_ctx_init(&c, NULL);
	(void)dsl_incomplete((const char *)data, size);
	if (dsl_parse(&c, &a, "fuzz", (const char *)data, size, &p, &pos)) {
		dsl_caret((const char *)data, size, pos, caret, sizeof caret);
	} else {
		size_t n1 = 0, n2 = 0;
		char *t1 = print_prog(p, &n1), *t2;
		Arena b;
		DslProgram *q;
		arena_init(&b);
		burn_ctx_init(&c, NULL);
		if (t1 && dsl_parse(&c, &b, "printed", t1, n1, &q, &pos)) {
			fprintf(stderr, "printed program does not parse: %s\n%s\n", c.msg, t1);
			abort();
		}
		if (t1 && (t2 = print_prog(q, &n2))) {
			if (n1 != n2 || memcmp(t1, t2, n1)) {
				fprintf(stderr, "print/parse/print differs:\n%s\n---\n%s\n", t1, t2);
				abort();
			}
			free(t2);
		}
		free(t1);
		arena_free(&b);
	}
	arena_free(&a);
	return 0;
}

#ifdef BURN_FUZZ_MUTATOR
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/* Grammar fragments: beginnings and ends of the productions, operators,
 * names the evaluator knows, edge numbers and strings. */
static const char *const frag[] = {
	"let x = ", "let y = x;", ";", "fn f(a, b) {", "fn main(x: f32[1, 4]) {",
	"}", "{", "module M { a: Linear, b: Tensor ", "fn forward(self, x) { x }",
	"import \"m.onnx\" as m;", "(", ")", "[", "]", ",", ".erf()", ".shape()",
	"self.a", "(x)", "(x, axis=-1)", ", keepdims=false", "M { a: Linear(2, 3) }",
	"M::new", "::", ".", "=", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*",
	"/", "%", "!", "-", "x", "SQRT_2", "softmax", "matmul(a, b)", "print(x)",
	"[[1, 2], [3, 4]]", "tensor([1, 2], dtype=f32)", "0", "1", "2.5", "1e-3",
	"1e999", "9007199254740993", "\"s\"", "\"\\n\\t\\\"\"", "// c\n", "\n",
	"true", "false", "xs[0]", "x.erf", "f(", "a=", "let", "fn", "module",
	"import", "as", "f32[", "i64[2, 3]",
};

/* Token boundaries of data: starts[k] for k < n, by character classes. */
static int
cut(const uint8_t *d, size_t size, size_t *starts, int cap)
{
	int n = 0;

	for (size_t i = 0; i < size && n < cap;) {
		size_t j = i + 1;
		int cls = (d[i] >= '0' && d[i] <= '9') ||
		          ((d[i] | 32) >= 'a' && (d[i] | 32) <= 'z') || d[i] == '_';
		if (cls)
			while (j < size && ((d[j] >= '0' && d[j] <= '9') ||
			       ((d[j] | 32) >= 'a' && (d[j] | 32) <= 'z') || d[j] == '_' || d[j] == '.'))
				j++;
		else if (d[i] == '"') {
			while (j < size && d[j] != '"' && d[j] != '\n')
				j += d[j] == '\\' ? 2 : 1;
			if (j < size && d[j] == '"')
				j++;
		}
		starts[n++] = i;
		i = j > size ? size : j;
	}
	return n;
}

size_t
LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	size_t st[4096], nsz = size;
	int n = cut(data, size, st, 4096);
	uint8_t *tmp;
	unsigned r = seed;
	size_t a, b, len;

#define RND(m) ((r = r * 1103515245u + 12345u), (size_t)((r >> 8) % (m)))
	if (n == 0 || RND(8) == 0)
		return LLVMFuzzerMutate(data, size, max_size);
	if (!(tmp = malloc(max_size + 1)))
		return size;
	a = st[RND(n)];
	switch (RND(5)) {
	case 0:   /* insert a fragment before token a */
	case 1: {
		const char *f = frag[RND(sizeof frag / sizeof frag[0])];
		len = strlen(f);
		if (size + len > max_size)
			break;
		memcpy(tmp, data, a);
		memcpy(tmp + a, f, len);
		memcpy(tmp + a + len, data + a, size - a);
		nsz = size + len;
		memcpy(data, tmp, nsz);
		break;
	}
	case 2: { /* delete a run of 1-3 tokens */
		int k = 0, e;
		while (k < n && st[k] != a)
			k++;
		e = k + 1 + (int)RND(3);
		b = e < n ? st[e] : size;
		memmove(data + a, data + b, size - b);
		nsz = size - (b - a);
		break;
	}
	case 3: { /* duplicate a run of tokens somewhere else */
		int k = 0, e;
		size_t at = st[RND(n)];
		while (k < n && st[k] != a)
			k++;
		e = k + 1 + (int)RND(4);
		b = e < n ? st[e] : size;
		len = b - a;
		if (size + len > max_size)
			break;
		memcpy(tmp, data, at);
		memcpy(tmp + at, data + a, len);
		memcpy(tmp + at + len, data + at, size - at);
		nsz = size + len;
		memcpy(data, tmp, nsz);
		break;
	}
	default: { /* swap two tokens */
		int i = (int)RND(n), j = (int)RND(n);
		size_t ai, bi, aj, bj;
		if (i > j) { int t = i; i = j; j = t; }
		if (i == j)
			break;
		ai = st[i]; bi = i + 1 < n ? st[i + 1] : size;
		aj = st[j]; bj = j + 1 < n ? st[j + 1] : size;
		len = 0;
		memcpy(tmp, data, ai); len = ai;
		memcpy(tmp + len, data + aj, bj - aj); len += bj - aj;
		memcpy(tmp + len, data + bi, aj - bi); len += aj - bi;
		memcpy(tmp + len, data + ai, bi - ai); len += bi - ai;
		memcpy(tmp + len, data + bj, size - bj); len += size - bj;
		memcpy(data, tmp, len);
		nsz = len;
		break;
	}
	}
#undef RND
	free(tmp);
	return nsz;
}
#endif

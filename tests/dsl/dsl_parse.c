/*
 * dsl_parse.c - parse .burn files (frontend/dsl.c) without running them:
 * prints each program in canonical form (dsl_print), or the error with
 * the source line and a caret, as burncc does.  The parser's golden tests
 * (tests/dsl/parse_errors.sh) use it.  Exit 0 if every file parsed.
 *   dsl_parse FILE...
 */
#include <stdio.h>
#include <stdlib.h>
#include "frontend/dsl.h"

static char *
slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, got;

	*n = 0;
	if (!f)
		return NULL;
	do {
		if (*n == cap) {
			char *nb = realloc(buf, cap = cap ? 2 * cap : 4096);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		got = fread(buf + *n, 1, cap - *n, f);
		*n += got;
	} while (got);
	fclose(f);
	return buf;
}

int
main(int argc, char **argv)
{
	int bad = 0;

	for (int i = 1; i < argc; i++) {
		size_t n;
		char *src = slurp(argv[i], &n), caret[512];
		Arena a;
		Ctx c;
		DslProgram *p;
		DslPos pos;

		if (!src) {
			fprintf(stderr, "dsl_parse: cannot read %s\n", argv[i]);
			bad = 1;
			continue;
		}
		arena_init(&a);
		burn_ctx_init(&c, NULL);
		if (dsl_parse(&c, &a, argv[i], src, n, &p, &pos)) {
			printf("%s\n%s", c.msg, dsl_caret(src, n, pos, caret, sizeof caret));
			bad = 1;
		} else {
			dsl_print(stdout, p);
		}
		arena_free(&a);
		free(src);
	}
	return bad;
}

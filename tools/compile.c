/*
 * compile.c - see compile.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compile.h"
#include "../frontend/onnx.h"

int
burn_compile_file(Ctx *c, const char *path, const CompileOpts *o,
                  Compiled **out)
{
	Graph *g;

	*out = NULL;
	TRY(onnx_load_file(c, path, &g));
	return burn_compile_graph(c, g, o, out);
}

int
burn_schedule_arg(Ctx *c, Arena *a, const char *arg, KWant **want, int *nwant)
{
	FILE *f;
	char *buf;
	size_t n = 0, cap = 1 << 16, got;
	int rc;

	/* an existing file, else KERNEL=STEPS */
	if (!(f = fopen(arg, "rb"))) {
		if (strchr(arg, '='))
			return kwant_parse(c, a, "--schedule", arg, strlen(arg), 1, want, nwant);
		return burn_fail(c, BURN_ERR_IO, "--schedule %s: no such file, and not "
		                 "KERNEL=STEPS", arg);
	}
	if (!(buf = malloc(cap))) {
		fclose(f);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {   /* schedules are small: 16 MiB at most */
			char *nb = cap < (16u << 20) ? realloc(buf, 2 * cap) : NULL;
			if (!nb) {
				free(buf);
				fclose(f);
				return burn_fail(c, BURN_ERR_LIMIT, "--schedule %s: file too "
				                 "large or out of memory", arg);
			}
			buf = nb;
			cap *= 2;
		}
	}
	rc = ferror(f) ? burn_fail(c, BURN_ERR_IO, "--schedule %s: read error", arg)
	               : kwant_parse(c, a, arg, buf, n, 0, want, nwant);
	free(buf);
	fclose(f);
	return rc;
}

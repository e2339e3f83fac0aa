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
burn_check_stack(Ctx *c, const Compiled *m, int64_t max_stack)
{
	for (int k = 0; k < m->prog.nkernel && max_stack > 0; k++) {
		const KKernel *kk = m->prog.kernel[k];
		int64_t b = kkernel_local_bytes(kk);
		if (b > max_stack)
			return burn_fail(c, BURN_ERR_LIMIT, "kernel %s keeps %lld bytes of "
			                 "local arrays on the stack, over --max-stack %lld%s",
			                 kk->name, (long long)b, (long long)max_stack,
			                 kkernel_step(kk, KST_TILE, 0) ? " at a 1 x 1 register tile"
			                 : " (no register tile to shrink)");
	}
	return BURN_OK;
}

/* The want of kernel name in want[0..*n), added (with no steps) if there
 * is none; want has room for one more. */
static KWant *want_of(KWant *want, int *n, const char *name, Arena *a)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(want[i].kernel, name))
			return &want[i];
	want[*n].kernel = arena_strdup(a, name);
	want[*n].steps.n = 0;
	return &want[(*n)++];
}

int
burn_compile_file_bounded(Ctx *c, const char *path, const CompileOpts *o,
                          int64_t max_stack, Compiled **out)
{
	CompileOpts oo = *o;
	Compiled *m = NULL;
	KWant *want = NULL;
	int nwant = o->nwant, rc = BURN_OK;
	Arena a;   /* the wants and their kernel names while retrying */

	if (max_stack <= 0)
		return burn_compile_file(c, path, o, out);
	*out = NULL;
	arena_init(&a);
	want = arena_alloc(&a, sizeof *want * (size_t)(nwant + 1));
	if (nwant)
		memcpy(want, o->want, sizeof *want * (size_t)nwant);
	for (;;) {
		int over = 0;
		oo.want = want;
		oo.nwant = nwant;
		if ((rc = burn_compile_file(c, path, &oo, &m)))
			break;
		for (int k = 0; k < m->prog.nkernel; k++) {
			const KKernel *kk = m->prog.kernel[k];
			const KStep *t = kkernel_step(kk, KST_TILE, 0);
			int mr, nr;
			KWant *w;
			KStep st;
			if (kkernel_local_bytes(kk) <= max_stack)
				continue;
			if (kkernel_step(kk, KST_PLANE, 0) &&
			    kkernel_step(kk, KST_PLANE, 0)->kind == KST_PLANE) {
				/* a MaxPool's local plane: a local row instead */
				KStep line = kstep_make(KST_LINES, 0, 0, 0, 0);
				if (!over++) {
					KWant *nw = arena_alloc(&a, sizeof *nw *
					                        (size_t)(nwant + m->prog.nkernel + 1));
					memcpy(nw, want, sizeof *nw * (size_t)nwant);
					want = nw;
				}
				w = want_of(want, &nwant, kk->name, &a);
				if (!ksteps_put(&w->steps, &line)) {
					rc = burn_fail(c, BURN_ERR_INTERNAL, "kernel %s: cannot set "
					               "lines", kk->name);
					break;
				}
				continue;
			}
			if (!t || (t->arg[0] <= 1 && t->arg[1] <= 1))
				break;   /* refused below */
			if (!over++) {   /* room for a want per kernel */
				KWant *nw = arena_alloc(&a, sizeof *nw *
				                        (size_t)(nwant + m->prog.nkernel + 1));
				memcpy(nw, want, sizeof *nw * (size_t)nwant);
				want = nw;
			}
			/* halve the side that keeps the tile nearest 1 x 4 */
			mr = t->arg[0];
			nr = t->arg[1];
			if (mr > 1 && (mr * 4 > nr || nr <= 1))
				mr /= 2;
			else
				nr /= 2;
			st = kstep_make(KST_TILE, 2, mr, nr, 0);
			w = want_of(want, &nwant, kk->name, &a);
			if (!ksteps_put(&w->steps, &st)) {
				rc = burn_fail(c, BURN_ERR_INTERNAL, "kernel %s: cannot set "
				               "tile(%d,%d)", kk->name, mr, nr);
				break;
			}
		}
		if (!rc && !over)
			rc = burn_check_stack(c, m, max_stack);
		if (rc || !over)
			break;
		burn_compiled_destroy(m);
		m = NULL;
	}
	if (!rc) {
		/* the program keeps its wants (borrowed): copy them into its arena */
		KWant *keep = arena_alloc(&m->arena, sizeof *keep * (size_t)(nwant + 1));
		for (int i = 0; i < nwant; i++) {
			keep[i] = want[i];
			keep[i].kernel = arena_strdup(&m->arena, want[i].kernel);
		}
		m->prog.want = keep;
		m->prog.nwant = nwant;
		*out = m;
	} else
		burn_compiled_destroy(m);
	arena_free(&a);
	return rc;
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

int
burn_cpu_arg(Ctx *c, const char *name, const TargetCpu **out)
{
	char list[256] = "native";

	if ((*out = target_cpu_find(name)) != NULL)
		return BURN_OK;
	for (const TargetCpu *d = target_cpus; d->name; d++)
		snprintf(list + strlen(list), sizeof list - strlen(list), ", %s", d->name);
	return burn_fail(c, BURN_ERR_INVALID, "unknown --cpu '%s': the choices are %s",
	                 name ? name : "", list);
}

/*
 * launch_run.c - a planned program run by the kernel-IR interpreter,
 * bound exactly as the launch list says (passes.h: plan_run_interp).
 *
 * This is the interpreter's twin of the C emitter's run function: the
 * same arena offsets, the same dim arguments, the same expressions over
 * the dims, evaluated here at run time.  So a program with dims known only
 * at run time is checked by two consumers of one launch list.
 */
#include <stdlib.h>
#include <string.h>
#include "passes.h"

static int
eval(Ctx *c, const Plan *plan, const PlanExpr *x, const int64_t *dims, int64_t *out)
{
	if (!x->e) {
		*out = x->c;
		return BURN_OK;
	}
	return dx_eval(c, x->e, plan->ndims, dims, plan->dims, out);
}

int
plan_arena_at(Ctx *c, const Plan *plan, const int64_t *dims, int64_t *bytes)
{
	for (int i = 0; i < plan->ndims; i++)
		if (!dims || dims[i] < 0)
			return burn_fail(c, BURN_ERR_INVALID, "dim '%s' not given or "
			                 "negative", plan->dims[i]);
	return eval(c, plan, &plan->arena, dims, bytes);
}

/* Bytes of value v at dims. */
static int
bytes_at(Ctx *c, const Graph *g, const Plan *plan, int v, const int64_t *dims,
         int64_t *out)
{
	Arena a;
	const DimExpr *e;
	int rc;

	arena_init(&a);
	e = plan_value_bytes(&a, g, v, plan->ndims, plan->dims);
	rc = e ? dx_eval(c, e, plan->ndims, dims, plan->dims, out)
	       : burn_fail(c, BURN_ERR_INTERNAL, "value '%s' has no size",
	                   GV(g, v)->name);
	arena_free(&a);
	return rc;
}

int
plan_run_interp(Ctx *c, const Graph *g, const KProgram *p, const Plan *plan,
                const int64_t *dims, const void *const *in, void *const *out,
                void *arena)
{
	void **bufs = NULL;
	int64_t *kd = NULL, abytes;
	int rc = BURN_OK;

	TRY(plan_arena_at(c, plan, dims, &abytes));
	if (abytes > 0 && (!arena || ((uintptr_t)arena & (BURN_ARENA_ALIGN - 1))))
		return burn_fail(c, BURN_ERR_INVALID, "arena NULL or misaligned");
	for (int k = 0; k < p->nkernel && !rc; k++) {
		const KKernel *kk = p->kernel[k];
		const Launch *l = &plan->launch[k];
		free(bufs);
		free(kd);
		bufs = calloc((size_t)kk->nbuf + 1, sizeof *bufs);
		kd = calloc((size_t)kk->ndim + 1, sizeof *kd);
		if (!bufs || !kd) {
			rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
			break;
		}
		for (int i = 0; i < l->narg && !rc; i++) {
			const LaunchArg *e = &l->arg[i];
			int64_t off;
			if (e->buf < 0 || e->buf >= kk->nbuf) {
				rc = burn_fail(c, BURN_ERR_INTERNAL, "launch of %s: bad buffer",
				               kk->name);
				break;
			}
			switch (e->kind) {
			case LK_WEIGHT:
				bufs[e->buf] = GV(g, e->value)->data;
				break;
			case LK_ARENA: {
				int64_t nb, end;
				/* the launch list stays inside the arena it sized */
				if ((rc = eval(c, plan, &e->offset, dims, &off)) ||
				    (rc = eval(c, plan, &e->bytes, dims, &nb)))
					break;
				if (off < 0 || burn_add_ovf(off, nb, &end) || end > abytes) {
					rc = burn_fail(c, BURN_ERR_INTERNAL, "launch of %s: b%d "
					               "at %lld + %lld bytes is outside the "
					               "arena of %lld", kk->name, e->buf,
					               (long long)off, (long long)nb,
					               (long long)abytes);
					break;
				}
				bufs[e->buf] = (char *)arena + off;
				break;
			}
			case LK_INPUT:
				bufs[e->buf] = (void *)in[e->index];
				break;
			case LK_OUTPUT:
				bufs[e->buf] = out[e->index];
				break;
			default:
				rc = burn_fail(c, BURN_ERR_INTERNAL, "launch of %s: bad "
				               "argument kind", kk->name);
			}
		}
		if (l->ndim != kk->ndim && !rc)
			rc = burn_fail(c, BURN_ERR_INTERNAL, "launch of %s: %d dims for %d "
			               "parameters", kk->name, l->ndim, kk->ndim);
		for (int i = 0; i < l->ndim && !rc; i++)
			rc = dx_eval(c, l->dim[i], plan->ndims, dims, plan->dims, &kd[i]);
		if (!rc)
			rc = kir_interp_dims(c, kk, bufs, kd, NULL);
	}
	free(bufs);
	free(kd);
	/* outputs no kernel wrote: constants and inputs passed through (the
	 * second of two outputs naming one value too) */
	for (int i = 0; i < g->nout && !rc; i++) {
		const Value *v = GV(g, g->out[i]);
		const void *src = NULL;
		int64_t nb;
		for (int j = 0; j < i && !src; j++)
			if (g->out[j] == g->out[i])
				src = out[j];
		if (!src && v->data)
			src = v->data;
		for (int j = 0; j < g->nin && !src; j++)
			if (g->in[j] == g->out[i])
				src = in[j];
		if (!src)
			continue;
		if (!(rc = bytes_at(c, g, plan, g->out[i], dims, &nb)) && nb > 0)
			memmove(out[i], src, (size_t)nb);
	}
	return rc;
}

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
	for (int i = 0; i < plan->ndims; i++) {
		if (!dims || dims[i] < 0)
			return burn_fail(c, BURN_ERR_INVALID, "dim '%s' not given or "
			                 "negative", plan->dims[i]);
		if (plan->dim_min && dims[i] < plan->dim_min[i])
			return burn_fail(c, BURN_ERR_INVALID, "dim '%s' is %lld; the "
			                 "model takes %lld or more", plan->dims[i],
			                 (long long)dims[i], (long long)plan->dim_min[i]);
	}
	return eval(c, plan, &plan->arena, dims, bytes);
}

int
plan_bytes_at(Ctx *c, const Graph *g, const Plan *plan, int v, const int64_t *dims,
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
plan_expr_at(Ctx *c, const Plan *plan, const PlanExpr *x, const int64_t *dims, int64_t *out)
{
	return eval(c, plan, x, dims, out);
}

int
launch_bind(Ctx *c, const Graph *g, const Plan *plan, const KKernel *kk,
            const Launch *l, const int64_t *dims, const LaunchMem *mem,
            void **bufs, int64_t *kdims)
{
	for (int i = 0; i < kk->nbuf; i++)
		bufs[i] = NULL;
	for (int i = 0; i < l->narg; i++) {
		const LaunchArg *e = &l->arg[i];
		int64_t off, nb, end;
		if (e->buf < 0 || e->buf >= kk->nbuf)
			return burn_fail(c, BURN_ERR_INTERNAL, "launch of %s: bad buffer",
			                 kk->name);
		switch (e->kind) {
		case LK_WEIGHT:
			if (e->value < 0 || e->value >= g->nval)
				goto bad;
			bufs[e->buf] = GV(g, e->value)->data;
			break;
		case LK_ARENA:
			/* the launch list stays inside the arena it sized */
			TRY(eval(c, plan, &e->offset, dims, &off));
			TRY(eval(c, plan, &e->bytes, dims, &nb));
			if (off < 0 || burn_add_ovf(off, nb, &end) ||
			    end > mem->arena_bytes)
				return burn_fail(c, BURN_ERR_INTERNAL, "launch of %s: b%d "
				                 "at %lld + %lld bytes is outside the "
				                 "arena of %lld", kk->name, e->buf,
				                 (long long)off, (long long)nb,
				                 (long long)mem->arena_bytes);
			bufs[e->buf] = (char *)mem->arena + off;
			break;
		case LK_INPUT:
			if (e->index < 0 || e->index >= g->nin)
				goto bad;
			bufs[e->buf] = (void *)mem->in[e->index];
			break;
		case LK_OUTPUT:
			if (e->index < 0 || e->index >= g->nout)
				goto bad;
			bufs[e->buf] = mem->out[e->index];
			break;
		default:
			goto bad;
		}
	}
	for (int i = 0; i < kk->nbuf; i++)
		if (kk->buf[i].space == KS_GLOBAL && !bufs[i] &&
		    (kk->buf[i].count > 0 || kk->buf[i].ext))
			return burn_fail(c, BURN_ERR_INTERNAL, "launch of %s: b%d unbound",
			                 kk->name, i);
	if (l->ndim != kk->ndim)
		return burn_fail(c, BURN_ERR_INTERNAL, "launch of %s: %d dims for %d "
		                 "parameters", kk->name, l->ndim, kk->ndim);
	for (int i = 0; i < l->ndim; i++)
		TRY(dx_eval(c, l->dim[i], plan->ndims, dims, plan->dims, &kdims[i]));
	return BURN_OK;
bad:
	return burn_fail(c, BURN_ERR_INTERNAL, "launch of %s: bad argument",
	                 kk->name);
}

int
launch_skip(Ctx *c, const Graph *g, const Plan *plan, const Launch *l,
            const int64_t *dims, const LaunchMem *mem, int *skip)
{
	const LaunchArg *e = l->guard;
	const unsigned char *at = NULL;
	int64_t off;

	*skip = 0;
	if (!e)
		return BURN_OK;
	switch (e->kind) {
	case LK_ARENA:
		TRY(eval(c, plan, &e->offset, dims, &off));
		if (off < 0 || off >= mem->arena_bytes)
			return burn_fail(c, BURN_ERR_INTERNAL, "a guard outside the arena");
		at = (const unsigned char *)mem->arena + off;
		break;
	case LK_INPUT:
		if (e->index < 0 || e->index >= g->nin)
			return burn_fail(c, BURN_ERR_INTERNAL, "a guard's bad input");
		at = mem->in[e->index];
		break;
	default:
		return burn_fail(c, BURN_ERR_INTERNAL, "a guard of kind %d", e->kind);
	}
	*skip = (*at != 0) == (l->guard_neg != 0);
	return BURN_OK;
}

int
launch_passthrough(Ctx *c, const Graph *g, const Plan *plan,
                   const int64_t *dims, const void *const *in, void *const *out)
{
	for (int i = 0; i < g->nout; i++) {
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
		TRY(plan_bytes_at(c, g, plan, g->out[i], dims, &nb));
		if (nb > 0)
			memmove(out[i], src, (size_t)nb);
	}
	return BURN_OK;
}

int
plan_run_interp(Ctx *c, const Graph *g, const KProgram *p, const Plan *plan,
                const int64_t *dims, const void *const *in, void *const *out,
                void *arena)
{
	return plan_run_interp_each(c, g, p, plan, dims, in, out, arena, NULL, NULL);
}

int
plan_run_interp_each(Ctx *c, const Graph *g, const KProgram *p, const Plan *plan,
                     const int64_t *dims, const void *const *in, void *const *out,
                     void *arena, PlanAfterKernel after, void *arg)
{
	void **bufs = NULL, *own = NULL;
	int stop = 0;
	int64_t *kd = NULL, abytes;
	LaunchMem mem;
	int rc = BURN_OK;

	TRY(plan_arena_at(c, plan, dims, &abytes));
	if (abytes > 0 && !arena) {
		/* none given: one of the size at these dims, for this run */
		size_t nb = ((size_t)abytes + BURN_ARENA_ALIGN - 1) / BURN_ARENA_ALIGN *
		            BURN_ARENA_ALIGN;
		if (!(arena = own = aligned_alloc(BURN_ARENA_ALIGN, nb)))
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		memset(own, 0, nb);
	}
	if (abytes > 0 && ((uintptr_t)arena & (BURN_ARENA_ALIGN - 1)))
		return burn_fail(c, BURN_ERR_INVALID, "arena misaligned");
	if (plan->nkernels != p->nkernel)
		return burn_fail(c, BURN_ERR_INTERNAL, "%d launches for %d kernels",
		                 plan->nkernels, p->nkernel);
	mem = (LaunchMem){in, out, arena, abytes};
	for (int k = 0; k < p->nkernel && !rc && !stop; k++) {
		const KKernel *kk = p->kernel[k];
		free(bufs);
		free(kd);
		bufs = calloc((size_t)kk->nbuf + 1, sizeof *bufs);
		kd = calloc((size_t)kk->ndim + 1, sizeof *kd);
		if (!bufs || !kd) {
			rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
			break;
		}
		int skip = 0;
		rc = launch_skip(c, g, plan, &plan->launch[k], dims, &mem, &skip);
		if (!rc && skip)
			continue;   /* the untaken branch of a run-time If */
		if (!rc)
			rc = launch_bind(c, g, plan, kk, &plan->launch[k], dims, &mem, bufs, kd);
		if (!rc)
			rc = kir_interp_dims(c, kk, bufs, kd, NULL);
		if (!rc && after)
			stop = after(arg, k, (void *const *)bufs, kd);
	}
	free(bufs);
	free(kd);
	free(own);
	/* outputs no kernel wrote: constants and inputs passed through (the
	 * second of two outputs naming one value too) */
	return rc || stop ? rc : launch_passthrough(c, g, plan, dims, in, out);
}

const void *
plan_output_source(const Graph *g, int i, const void *const *in, void *const *out)
{
	const Value *v = GV(g, g->out[i]);

	for (int j = 0; j < i; j++)
		if (g->out[j] == g->out[i])
			return out[j];
	if (v->data)
		return v->data;
	for (int j = 0; j < g->nin; j++)
		if (g->in[j] == g->out[i])
			return in[j];
	return NULL;
}

int
compiled_run_interp(Ctx *c, const Compiled *m, const void *const *in, void *const *out)
{
	KRun r;
	int rc;

	TRY(kir_run_init(c, &r, m->g));
	for (int i = 0; i < m->g->nin; i++)
		r.mem[m->g->in[i]] = (void *)in[i];
	rc = kir_run_program(c, &r, m->g, &m->prog);
	for (int i = 0; i < m->g->nout && !rc; i++) {
		const void *v = kir_run_value(&r, &m->prog, m->g->out[i]);
		int64_t nb = value_nbytes(GV(m->g, m->g->out[i]));
		if (!v || nb < 0)
			rc = burn_fail(c, BURN_ERR_INTERNAL, "output %d has no value", i);
		else
			memcpy(out[i], v, (size_t)nb);
	}
	kir_run_free(&r);
	return rc;
}

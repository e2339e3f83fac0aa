/*
 * pipeline.c - the pass sequence, in one readable place.
 */
#include <stdlib.h>
#include <string.h>
#include "passes.h"
#include "lower.h"
#include "legalize.h"
#include "index_width.h"
#include "rng.h"

static int verify(Ctx *c, const Graph *g, const CompileOpts *o)
{
	return o && o->verify ? graph_verify(c, g) : BURN_OK;
}

/* A dynamic dim is compiled for one item (passes/dynamic.c): bound to 1
 * with the --dim bindings. */
static int bind_dims(Ctx *c, Graph *g, const CompileOpts *o)
{
	DimBind *b;
	int n = o ? o->nbind : 0, rc;

	if (!o || !o->ndyn)
		return pass_bind_dims(c, g, n, o ? o->bind : NULL);
	for (int i = 0; i < n; i++)
		if (!strcmp(o->bind[i].name, o->dyn[0]))
			return burn_fail(c, BURN_ERR_INVALID, "dim '%s' given both a value "
			                 "(--dim) and --dynamic-dim", o->dyn[0]);
	if (!(b = malloc(sizeof *b * ((size_t)n + 1))))
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	if (n)
		memcpy(b, o->bind, sizeof *b * (size_t)n);
	b[n].name = o->dyn[0];
	b[n].value = 1;
	rc = pass_bind_dims(c, g, n + 1, b);
	free(b);
	return rc;
}

static int lower(Ctx *c, Compiled *m, const CompileOpts *o)
{
	Graph *g = m->g;

	/* values placed inside others (lower_concat): not where dynamic.c
	 * rewrites the program for a batch */
	m->prog.inplace = !(o && o->ndyn);
	if (o && o->no_fuse) {
		TRY(pass_lower(c, g, &m->prog, m->target));
	} else {
		Fusion *fu;
		int rc;
		TRY(pass_attn_rewrite(c, g, m->target));
		TRY(pass_fuse(c, g, &fu));
		rc = pass_lower_fused(c, g, fu, &m->prog, m->target);
		fusion_free(fu);
		TRY(rc);
	}
	return BURN_OK;
}

static int run_rest(Ctx *c, Compiled *m, const CompileOpts *o,
                    const unsigned char *inb, const unsigned char *shp, int nshp);
static int front(Ctx *c, Compiled *m, const CompileOpts *o, const DimBind *b,
                 int nb, int lower_too);
static int back(Ctx *c, Compiled *m, const CompileOpts *o);
static int needs_fit(const Graph *g, const CompileOpts *o);
static int peel_or_fit(Ctx *c, Compiled *m, const CompileOpts *o);

/* CompileOpts.rng_counter: the graph input rng_counter (passes/rng.h),
 * a uint64 scalar after the others. */
static int add_rng_counter(Ctx *c, Graph *g)
{
	int v;

	if (rng_counter_input(g) >= 0)
		return BURN_OK;   /* the model has it already */
	for (int i = 0; i < g->nval; i++)
		if (GV(g, i)->name && !strcmp(GV(g, i)->name, RNG_COUNTER_NAME))
			return burn_fail(c, BURN_ERR_INVALID, "--rng-counter: the model "
			                 "has a value named '%s' already", RNG_COUNTER_NAME);
	if ((v = graph_add_value(g, RNG_COUNTER_NAME)) < 0)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	set_out(GV(g, v), DT_U64, 0, (int64_t[]){ 1 });
	graph_add_input(g, v);
	return BURN_OK;
}

static int run_passes(Ctx *c, Compiled *m, const CompileOpts *o)
{
	Graph *g = m->g;
	int dyn = o && o->ndyn;

	TRY(verify(c, g, o));
	TRY(graph_check_attrs(c, g));
	if (o && o->rng_counter)
		TRY(add_rng_counter(c, g));
	if (dyn && m->target->max_block_threads > 0 && !m->target->dyn_items)
		/* its launches take constant grids so far: the items of a
		 * peeled dim as grid y need the count at launch */
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "--dynamic-dim: target %s "
		                 "launches grids of constant size only, so far; compile "
		                 "for it with --dim %s=VALUE", m->target->name, o->dyn[0]);
	if (dyn && m->target->max_block_threads > 0 && !m->target->dyn_grids && needs_fit(g, o))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "--dynamic-dim: target %s "
		                 "launches grids sized by the dims' items only, so far; "
		                 "compile for it with --dim %s=VALUE", m->target->name,
		                 o->dyn[0]);
	if (dyn && needs_fit(g, o)) {
		TRY(dyn_fit_compile(c, m, o, front));
		return back(c, m, o);
	}
	if (dyn)
		return peel_or_fit(c, m, o);
	return run_rest(c, m, o, NULL, NULL, 0);
}

/* One leading dynamic dim: peeled (dynamic.c) where the items stay apart,
 * else sampled (dynfit.c: a reduction over the batch, a Transpose moving
 * it, a Shape of it feeding only a Reshape's target...).  When both
 * refuse, the peel's reason is reported, the sampling's after it. */
static int peel_or_fit(Ctx *c, Compiled *m, const CompileOpts *o)
{
	Graph *keep = NULL;
	unsigned char *inb, *shp;
	int nshp = m->g->nval;   /* the values shp covers */
	char why[sizeof c->msg];
	int rc, code;

	/* a graph its text form does not carry (sequence or optional inputs)
	 * is peeled or refused */
	if ((rc = dyn_graph_clone(c, m->g, &keep)) != BURN_OK) {
		if (rc == BURN_ERR_NOMEM)
			return rc;
		c->code = BURN_OK;
		c->msg[0] = 0;
		keep = NULL;
	}
	inb = calloc((size_t)m->g->nin + 1, 1);
	shp = calloc((size_t)m->g->nval + 1, 1);
	if (!inb || !shp) {
		free(inb);
		free(shp);
		graph_destroy(keep);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	rc = dyn_check_graph(c, m->g, o->ndyn, o->dyn, inb, shp);
	if (!rc)
		rc = run_rest(c, m, o, inb, shp, nshp);
	free(inb);
	free(shp);
	/* (an invalid shape at one item, TopK's K over the batch say, may
	 * still be sampled) */
	if ((rc != BURN_ERR_UNSUPPORTED && rc != BURN_ERR_INVALID) || !keep ||
	    (m->target->max_block_threads > 0 && !m->target->dyn_grids)) {
		graph_destroy(keep);   /* no sampled programs on this GPU target */
		return rc;
	}
	/* start again from the graph as given */
	code = c->code;
	memcpy(why, c->msg, sizeof why);
	c->code = BURN_OK;
	c->msg[0] = 0;
	graph_destroy(m->g);
	m->g = keep;
	arena_free(&m->arena);
	arena_init(&m->arena);
	kprog_init(&m->prog, &m->arena);
	m->prog.want = o->want;
	m->prog.nwant = o->nwant;
	memset(&m->plan, 0, sizeof m->plan);
	rc = dyn_fit_compile(c, m, o, front);
	if (!rc)
		rc = back(c, m, o);
	if (rc) {
		size_t n = strlen(why);
		const char *f = c->msg, *p;
		/* the sampling's reason without the file name both start with */
		if (c->file && !strncmp(f, c->file, strlen(c->file)) &&
		    (p = strstr(f, ": ")) != NULL)
			f = p + 2;
		snprintf(why + n, sizeof why - n, " (sampling the dim: %s)", f);
		c->code = code;
		memcpy(c->msg, why, sizeof why);
		rc = code;
	}
	return rc;
}

/* The passes up to lowering (lower_too 0: up to dead-code elimination),
 * with the symbolic dims bound to b[0..nb) (dynfit.c runs them once per
 * sample of the dynamic dims). */
static int front(Ctx *c, Compiled *m, const CompileOpts *o, const DimBind *b,
                 int nb, int lower_too)
{
	Graph *g = m->g;

	TRY(pass_bind_dims(c, g, nb, b));
	TRY(pass_infer_fold(c, g));
	TRY(graph_check_outputs(c, g));
	TRY(verify(c, g, o));
	TRY(pass_simplify(c, g));
	TRY(verify(c, g, o));
	TRY(pass_dce(c, g));
	TRY(verify(c, g, o));
	return lower_too ? lower(c, m, o) : BURN_OK;
}

/* The passes after lowering. */
static int back(Ctx *c, Compiled *m, const CompileOpts *o)
{
	Graph *g = m->g;
	int64_t *min;

	TRY(pass_plan(c, g, &m->prog, &m->arena, &m->plan));
	/* the dims' lower bounds sampling found, in the plan's order */
	if (o && o->ndyn && m->plan.ndims) {
		min = arena_alloc(&m->arena, sizeof *min * (size_t)m->plan.ndims);
		for (int i = 0; i < m->plan.ndims; i++) {
			min[i] = 0;
			for (int j = 0; j < o->ndyn && j < 4; j++)
				if (!strcmp(o->dyn[j], m->plan.dims[i]))
					min[i] = m->dyn_min[j];
		}
		m->plan.dim_min = min;
	}
	TRY(pass_schedule(c, &m->prog, m->target));
	/* expand what the target lacks (Target.ops; the CPU target, whose
	 * renderer is C, lacks all, like the interpreter that folded).  After
	 * scheduling: schedules still see min/max reductions as such, and
	 * the index arithmetic GPU schedules add is legalised too. */
	TRY(pass_legalize(c, &m->prog, &m->target->ops));
	/* 32-bit indices where the target wants them and they provably fit */
	TRY(pass_index_width(c, &m->prog, m->target->index_bits, (int64_t)1 << 31));
	/* every step --schedule asked for was taken */
	return sched_check_want(c, &m->prog);
}

static int run_rest(Ctx *c, Compiled *m, const CompileOpts *o, const unsigned char *inb,
                    const unsigned char *shp, int nshp)
{
	Graph *g = m->g;
	int dyn = o && o->ndyn;

	TRY(bind_dims(c, g, o));
	TRY(pass_infer_fold(c, g));
	TRY(graph_check_outputs(c, g));
	TRY(verify(c, g, o));
	TRY(pass_simplify(c, g));
	TRY(verify(c, g, o));
	TRY(pass_dce(c, g));
	TRY(verify(c, g, o));
	if (dyn) {
		unsigned char *batched;
		int nval0 = g->nval, rc;
		TRY(dyn_mark(c, g, o->dyn[0], inb, shp, nshp, &batched));
		m->prog.rows_batched = batched;
		m->prog.rows_dim = o->dyn[0];
		rc = lower(c, m, o);
		m->prog.rows_batched = NULL;
		if (!rc)
			rc = dyn_peel(c, g, &m->prog, o->dyn[0], batched, nval0);
		free(batched);
		TRY(rc);
	} else {
		TRY(lower(c, m, o));
	}
	return back(c, m, o);
}

/* Whether the dynamic dims need dynfit.c's sampling: several of them, or
 * one that is not the leading axis of every input that has it (dynamic.c's
 * peeling takes one leading batch dim). */
static int needs_fit(const Graph *g, const CompileOpts *o)
{
	if (o->ndyn > 1)
		return 1;
	for (int i = 0; i < g->nin; i++) {
		const Value *v = GV(g, g->in[i]);
		for (int d = 1; d < v->rank; d++)
			if (v->sym[d] && !strcmp(v->sym[d], o->dyn[0]))
				return 1;
	}
	return 0;
}

int burn_compile_graph(Ctx *c, Graph *g, const CompileOpts *o, Compiled **out)
{
	Compiled *m = calloc(1, sizeof *m);
	int rc;

	*out = NULL;
	if (!m) {
		graph_destroy(g);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	m->g = g;
	m->target = target_or_default(o ? o->target : NULL);
	arena_init(&m->arena);
	kprog_init(&m->prog, &m->arena);
	if (o) {
		m->prog.want = o->want;
		m->prog.nwant = o->nwant;
	}
	rc = run_passes(c, m, o);
	if (rc) {
		burn_compiled_destroy(m);
		return rc;
	}
	*out = m;
	return BURN_OK;
}

void burn_compiled_destroy(Compiled *m)
{
	if (!m)
		return;
	graph_destroy(m->g);
	arena_free(&m->arena);
	free(m);
}

/*
 * pipeline.c - the pass sequence, in one readable place.
 */
#include <stdlib.h>
#include "passes.h"
#include "legalize.h"
#include "index_width.h"

static int verify(Ctx *c, const Graph *g, const CompileOpts *o)
{
	return o && o->verify ? graph_verify(c, g) : BURN_OK;
}

static int run_passes(Ctx *c, Compiled *m, const CompileOpts *o)
{
	Graph *g = m->g;

	TRY(verify(c, g, o));
	TRY(graph_check_attrs(c, g));
	TRY(pass_bind_dims(c, g, o ? o->nbind : 0, o ? o->bind : NULL));
	TRY(pass_infer_fold(c, g));
	TRY(graph_check_outputs(c, g));
	TRY(verify(c, g, o));
	TRY(pass_simplify(c, g));
	TRY(verify(c, g, o));
	TRY(pass_dce(c, g));
	TRY(verify(c, g, o));
	if (o && o->no_fuse) {
		TRY(pass_lower(c, g, &m->prog, m->target));
	} else {
		Fusion *fu;
		int rc;
		TRY(pass_fuse(c, g, &fu));
		rc = pass_lower_fused(c, g, fu, &m->prog, m->target);
		fusion_free(fu);
		TRY(rc);
	}
	TRY(pass_plan(c, g, &m->prog, &m->arena, &m->plan));
	TRY(pass_schedule(c, &m->prog, m->target));
	/* expand what the target lacks (Target.ops; the CPU target, whose
	 * renderer is C, lacks all, like the interpreter that folded).  After
	 * scheduling: schedules still see min/max reductions as such, and
	 * the index arithmetic GPU schedules add is legalised too. */
	TRY(pass_legalize(c, &m->prog, &m->target->ops));
	/* 32-bit indices where the target wants them and they provably fit */
	TRY(pass_index_width(c, &m->prog, m->target->index_bits, (int64_t)1 << 31));
	return BURN_OK;
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

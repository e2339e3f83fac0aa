/*
 * kir_run.c - a whole kernel program run by the interpreter (see kir.h,
 * kir_run_program): what `burncc check --target gpu` and the tests use to
 * run a compiled model with no C compiler and no device, under the
 * interpreter's GPU semantics.
 *
 * Memory: one buffer per storage value (kprog_storage), allocated here and
 * zeroed; constants are read in place; graph inputs are the caller's.  No
 * arena plan is used, so a plan bug cannot hide a kernel bug and vice
 * versa.
 */
#include <stdlib.h>
#include <string.h>
#include "kir.h"
#include "graph.h"

int
kir_run_init(Ctx *c, KRun *r, const Graph *g)
{
	memset(r, 0, sizeof *r);
	r->n = g->nval;
	r->mem = calloc((size_t)g->nval + 1, sizeof *r->mem);
	r->owned = calloc((size_t)g->nval + 1, 1);
	if (!r->mem || !r->owned) {
		kir_run_free(r);
		return burn_fail(c, BURN_ERR_NOMEM, "kir_run: out of memory");
	}
	return BURN_OK;
}

void
kir_run_free(KRun *r)
{
	if (r->mem && r->owned)
		for (int v = 0; v < r->n; v++)
			if (r->owned[v])
				free(r->mem[v]);
	free(r->mem);
	free(r->owned);
	memset(r, 0, sizeof *r);
}

static void *storage_mem(Ctx *c, KRun *r, const Graph *g, const KProgram *p,
                         int v, int *rc);

/* Where value v is: in its storage's memory, at its offset there
 * (KProgram.alias_off). */
static void *
storage_of(Ctx *c, KRun *r, const Graph *g, const KProgram *p, int v, int *rc)
{
	char *m = storage_mem(c, r, g, p, v, rc);

	return m ? m + kprog_storage_off(p, v) : NULL;
}

/* The memory of value v's storage: the caller's (inputs), the constant's,
 * or a zeroed allocation made on first use. */
static void *
storage_mem(Ctx *c, KRun *r, const Graph *g, const KProgram *p, int v, int *rc)
{
	int s = kprog_storage(p, v);
	const Value *sv;
	int64_t nb;

	*rc = BURN_OK;
	if (s < 0 || s >= r->n) {
		*rc = burn_fail(c, BURN_ERR_INTERNAL, "kir_run: value %d out of range", s);
		return NULL;
	}
	if (r->mem[s])
		return r->mem[s];
	sv = GV(g, s);
	if (sv->data)
		return r->mem[s] = sv->data;
	if (sv->kind == VK_INPUT) {
		*rc = burn_fail(c, BURN_ERR_INTERNAL, "kir_run: input '%s' not given",
		                sv->name);
		return NULL;
	}
	nb = value_nbytes(sv);
	if (nb < 0 || (uint64_t)nb > SIZE_MAX - 64 ||
	    !(r->mem[s] = calloc((size_t)nb + 64, 1))) {
		*rc = burn_fail(c, BURN_ERR_NOMEM, "kir_run: cannot allocate '%s'",
		                sv->name);
		return NULL;
	}
	r->owned[s] = 1;
	return r->mem[s];
}

int
kir_run_program(Ctx *c, KRun *r, const Graph *g, const KProgram *p)
{
	void **bufs = NULL;
	int cap = 0, rc = BURN_OK;

	for (int i = 0; i < p->nkernel && !rc; i++) {
		const KKernel *k = p->kernel[i];
		if (k->nbuf > cap) {
			void **nb = realloc(bufs, (size_t)k->nbuf * sizeof *bufs);
			if (!nb) {
				rc = burn_fail(c, BURN_ERR_NOMEM, "kir_run: out of memory");
				break;
			}
			bufs = nb;
			cap = k->nbuf;
		}
		for (int b = 0; b < k->nbuf && !rc; b++)
			bufs[b] = k->buf[b].space == KS_GLOBAL && k->buf[b].value >= 0 ?
			          storage_of(c, r, g, p, k->buf[b].value, &rc) : NULL;
		if (!rc)
			rc = kir_interp(c, k, bufs);
	}
	/* outputs no kernel wrote (constants, inputs, aliases) get storage too */
	for (int i = 0; i < g->nout && !rc; i++)
		storage_of(c, r, g, p, g->out[i], &rc);
	free(bufs);
	return rc;
}

void *
kir_run_value(const KRun *r, const KProgram *p, int v)
{
	int s = kprog_storage(p, v);

	return s >= 0 && s < r->n && r->mem[s] ? (char *)r->mem[s] + kprog_storage_off(p, v)
	                                       : NULL;
}

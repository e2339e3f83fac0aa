/*
 * autotune.c - schedules timed on the device, the fastest kept on disk
 * (autotune.h).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/autotune.h"
#include "tools/compile.h"
#include "runtime/cache.h"

/* The MatMul template's block shapes tried: mma (BM, BN, BK, WM, WN,
 * stages: ir/kir.h's mma step, mma.sync) and, on targets with warpgroup
 * tiles, wgmma (BM, BN, stages); a shape the lowering refuses for a kernel
 * (N narrower than BN, say) is skipped for it.  The default is timed
 * too. */
static const int mma_cand[][7] = {
	{ KST_MMA, 128, 128, 32, 2, 2, 4 },
	{ KST_MMA, 128, 128, 32, 2, 2, 3 },
	{ KST_MMA, 128, 128, 64, 2, 2, 3 },
	{ KST_MMA, 128, 256, 32, 2, 4, 3 },
	{ KST_MMA, 128, 256, 64, 2, 4, 3 },
	{ KST_MMA, 256, 128, 32, 4, 2, 3 },
	{ KST_MMA, 64, 128, 32, 2, 2, 4 },
	{ KST_MMA, 128, 64, 32, 2, 2, 4 },
	{ KST_MMA, 128, 64, 64, 2, 2, 3 },
	{ KST_WGMMA, 128, 256, 4 },
	{ KST_WGMMA, 128, 256, 3 },
	{ KST_WGMMA, 128, 128, 4 },
	{ KST_WGMMA, 64, 256, 4 },
};
enum { NCAND = sizeof mma_cand / sizeof mma_cand[0] };

void **
bench_inputs(const Compiled *m)
{
	void **in = calloc((size_t)m->g->nin + 1, sizeof *in);
	uint64_t s = 42;

	if (!in)
		return NULL;
	for (int i = 0; i < m->g->nin; i++) {
		const Value *v = GV(m->g, m->g->in[i]);
		int64_t nb = value_nbytes(v), n = value_numel(v);
		if (nb < 0 || !(in[i] = calloc((size_t)nb + 1, 1))) {
			free_inputs(m, in);
			return NULL;
		}
		for (int64_t k = 0; k < n; k++) {
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			double u = (double)(s >> 11) / 9007199254740992.0 * 6 - 3;
			if (v->dtype == DT_F32)
				((float *)in[i])[k] = (float)u;
			else if (v->dtype == DT_F64)
				((double *)in[i])[k] = u;
		}
	}
	return in;
}

void
free_inputs(const Compiled *m, void **in)
{
	for (int i = 0; in && i < m->g->nin; i++)
		free(in[i]);
	free(in);
}

/* Index of k's mma or wgmma step in s, or -1. */
static int
mma_step(const KSteps *s)
{
	for (int i = 0; i < s->n; i++)
		if ((s->step[i].kind == KST_MMA && s->step[i].narg == 6) ||
		    s->step[i].kind == KST_WGMMA)
			return i;
	return -1;
}

/* The time of the kernel named `name` when the model is compiled with
 * want (nwant of them): its median over runs, alone.  < 0: the compile
 * or the run failed (a schedule the lowering refuses). */
static double
time_with(const char *model, const CompileOpts *o, const Backend *be, const KWant *want,
          int nwant, const char *name, int runs)
{
	CompileOpts oo = *o;
	Compiled *m = NULL;
	void **in = NULL;
	double *kms = NULL, t = -1;
	Ctx c;

	burn_ctx_init(&c, model);
	oo.want = want;
	oo.nwant = nwant;
	if (burn_compile_file(&c, model, &oo, &m))
		return -1;
	in = bench_inputs(m);
	kms = calloc((size_t)m->prog.nkernel + 1, sizeof *kms);
	if (in && kms && !be->profile(&c, m, (const void *const *)in, runs, kms))
		for (int k = 0; k < m->prog.nkernel; k++)
			if (!strcmp(m->prog.kernel[k]->name, name))
				t = kms[k];
	free(kms);
	free_inputs(m, in);
	burn_compiled_destroy(m);
	return t;
}

static void
tune_key(const char *dev, const Backend *be, const KKernel *k, unsigned char key[32])
{
	BurnSha256 h;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	burn_sha256_init(&h);
	burn_sha256_update(&h, "burncc autotune 1\n", 18);
	burn_sha256_update(&h, dev, strlen(dev) + 1);
	burn_sha256_update(&h, be->name, strlen(be->name) + 1);
	if (f) {
		kir_print(f, k);
		fclose(f);
		burn_sha256_update(&h, text, len);
	}
	free(text);
	burn_sha256_final(&h, key);
}

int
burn_autotune(Ctx *c, const char *model, const CompileOpts *o, const Backend *be,
              int runs, Arena *a, KWant **want, int *nwant, TuneResult *res,
              int maxres, int *nres)
{
	Compiled *m = NULL;
	void **in = NULL;
	double ms = 0, cp = 0;
	char dev[200] = "";
	BurnCache cc;
	KWant *w;
	int nw = o->nwant, rc;

	*nres = 0;
	if (!be->profile || !be->time)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "--autotune: target '%s' has no "
		                 "device timer", be->name);
	TRY(burn_compile_file(c, model, o, &m));
	/* room for the caller's schedules and one more a kernel */
	w = arena_alloc(a, ((size_t)o->nwant + (size_t)m->prog.nkernel + 1) * sizeof *w);
	if (!w) {
		burn_compiled_destroy(m);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	if (o->nwant)
		memcpy(w, o->want, (size_t)o->nwant * sizeof *w);
	if (!(in = bench_inputs(m))) {
		burn_compiled_destroy(m);
		return burn_fail(c, BURN_ERR_NOMEM, "--autotune: an input without a static "
		                 "size, or out of memory");
	}
	/* the device's description (and a first run: module, uploads) */
	rc = be->time(c, m, (const void *const *)in, 1, &ms, &cp, dev, sizeof dev);
	free_inputs(m, in);
	if (rc) {
		burn_compiled_destroy(m);
		return rc;
	}
	burn_cache_open(c, &cc, NULL, 0);   /* none: tune every time */
	for (int i = 0; i < m->prog.nkernel && *nres < maxres; i++) {
		const KKernel *k = m->prog.kernel[i];
		TuneResult *r = &res[*nres];
		unsigned char key[32];
		KSteps s, best;
		void *data;
		size_t n;
		int at, col;
		char msg[200];
		double bt = -1;

		kkernel_steps(k, &s);
		if ((at = mma_step(&s)) < 0)
			continue;
		for (int q = 0; q < o->nwant && at >= 0; q++)
			if (!strcmp(o->want[q].kernel, k->name))
				at = -1;     /* the caller's --schedule wins */
		if (at < 0)
			continue;
		memset(r, 0, sizeof *r);
		snprintf(r->kernel, sizeof r->kernel, "%s", k->name);
		tune_key(dev, be, k, key);
		if (burn_cache_get(&cc, key, &data, &n)) {
			int ok = !ksteps_parse(data, n, &best, &col, msg, sizeof msg);
			free(data);
			if (ok) {
				w[nw].kernel = arena_strdup(a, k->name);
				w[nw++].steps = best;
				ksteps_format(&best, r->steps, sizeof r->steps);
				(*nres)++;
				continue;
			}
		}
		best = s;
		for (int j = -1; j < NCAND; j++) {
			KSteps t = s;
			double tm;
			if (j >= 0) {
				const int *cd = mma_cand[j];
				t.step[at] = cd[0] == KST_WGMMA ?
				             kstep_make(KST_WGMMA, 3, cd[1], cd[2], cd[3]) :
				             kstep_make(KST_MMA, 3, cd[1], cd[2], cd[3]);
				if (cd[0] == KST_MMA) {
					t.step[at].narg = 6;
					for (int q = 3; q < 6; q++)
						t.step[at].arg[q] = cd[q + 1];
				}
				if (!memcmp(&t.step[at], &s.step[at], sizeof t.step[at]))
					continue;    /* the default, timed as j == -1 */
			}
			w[nw].kernel = k->name;
			w[nw].steps = t;
			tm = time_with(model, o, be, w, nw + 1, k->name, runs);
			if (tm < 0)
				continue;
			r->candidates++;
			if (j < 0)
				r->default_ms = tm;
			if (bt < 0 || tm < bt) {
				bt = tm;
				best = t;
			}
		}
		if (bt < 0)
			continue;            /* nothing ran: keep the default */
		r->ms = bt;
		ksteps_format(&best, r->steps, sizeof r->steps);
		burn_cache_put(&cc, key, r->steps, strlen(r->steps));
		w[nw].kernel = arena_strdup(a, k->name);
		w[nw++].steps = best;
		(*nres)++;
	}
	burn_cache_close(&cc);
	burn_compiled_destroy(m);
	*want = w;
	*nwant = nw;
	return BURN_OK;
}

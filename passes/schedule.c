/*
 * schedule.c - fit each kernel to the target: the decisions a renderer
 * prints but does not make (KSched in ir/kir.h).
 *
 * Threads.  On a target with CPU threads (Target.threads != 0) an
 * outermost KF_PARALLEL loop is run on threads when its iterations share
 * nothing and it does enough work to pay for waking them: at least
 * tune.thread_min_work innermost iterations over the whole nest.  Only
 * loops not nested in another loop, so threads start once per kernel.
 * Variables are declared once per kernel, so one the loop sets must be
 * private to each thread: that is safe when the variable occurs nowhere
 * outside the loop (lowerings set a variable before reading it within one
 * iteration: accumulators are initialised inside the loop that owns them);
 * local buffers (GEMM tiles) likewise.  A loop that sets a variable or uses
 * a local buffer also used outside it stays serial.
 *
 * FMA.  On a target with fast fused multiply-add (Target.fma) an f32
 * accumulation `b[i] = b[i] + x*y` (either operand order) is marked to
 * contract into fma(x, y, b[i]).  ISO C modes (-std=c99) do not contract
 * a*b + c by themselves, and the GEMM and convolution cores are made of
 * such accumulations.  Only accumulations: elsewhere (coordinate
 * arithmetic, say) a second rounding may be part of the meaning.
 */
#include <stdlib.h>
#include <string.h>
#include "passes.h"
#include "lower.h"

/* Iterations of the loop nest under s (the largest constant-extent path). */
static int64_t
nest_work(const KKernel *k, KRef s)
{
	int64_t most = 1;

	for (; s; s = k->node[s].next) {
		const KNode *n = &k->node[s];
		int64_t w = 1, lo, hi;
		if (n->kind == KS_FOR) {
			w = nest_work(k, n->body);
			if (kb_is_const_i(k, n->a, &lo) && kb_is_const_i(k, n->b, &hi) && hi > lo)
				w *= hi - lo;
		} else if (n->kind == KS_IF) {
			w = nest_work(k, n->body);
			if (n->orelse) {
				int64_t e = nest_work(k, n->orelse);
				w = e > w ? e : w;
			}
		}
		if (w > most)
			most = w;
	}
	return most;
}

/* What a piece of a kernel touches: per variable (bit 1: read, bit 2:
 * set) and per buffer (non-zero: loaded or stored). */
typedef struct Uses {
	unsigned char *var, *buf, *seen;
} Uses;

static void
expr_uses(const KKernel *k, KRef e, Uses *u)
{
	if (!e || u->seen[e])
		return;
	u->seen[e] = 1;
	if (k->node[e].kind == KE_VAR)
		u->var[k->node[e].var] |= 1;
	if (k->node[e].kind == KE_LOAD)
		u->buf[k->node[e].buf] = 1;
	expr_uses(k, k->node[e].a, u);
	expr_uses(k, k->node[e].b, u);
	expr_uses(k, k->node[e].c, u);
}

/* The uses of the statements of block s, skipping statement skip. */
static void
block_uses(const KKernel *k, KRef s, KRef skip, Uses *u)
{
	for (; s; s = k->node[s].next) {
		const KNode *n = &k->node[s];
		if (s == skip)
			continue;
		if (n->kind == KS_SET || n->kind == KS_FOR)
			u->var[n->var] |= 2;
		if (n->kind == KS_STORE)
			u->buf[n->buf] = 1;
		if (kgpu_name(n->kind)) {   /* GPU statements (no cpu kernel has them) */
			if (n->var >= 0 && n->kind != KS_VCOPY && n->kind != KS_CPASYNC)
				u->var[n->var] |= 2;
			u->buf[n->buf] = u->buf[n->buf2] = u->buf[n->buf3] = 1;
			expr_uses(k, n->c, u);
		}
		expr_uses(k, n->a, u);
		expr_uses(k, n->b, u);
		block_uses(k, n->body, skip, u);
		block_uses(k, n->orelse, skip, u);
	}
}

/* The scheduler's state for one kernel. */
typedef struct S {
	Ctx *c;
	Arena *a;
	const Target *t;
	const KKernel *k;
	unsigned char *isloop;  /* variable is a loop index somewhere */
	Uses in, out;           /* scratch for one candidate loop */
	KThreads *threads;
	int nthreads, capthreads;
	KRef *loops;            /* the outermost loops, in order */
	int nloops, caploops;
	int err;
} S;

static void
uses_clear(const KKernel *k, Uses *u)
{
	memset(u->var, 0, (size_t)k->nvar + 1);
	memset(u->buf, 0, (size_t)k->nbuf + 1);
	memset(u->seen, 0, (size_t)k->nnode + 1);
}

/* Can loop statement st run on threads: parallel, constant bounds, two
 * iterations or more, and what it sets and its local buffers used inside
 * it only?  Then *nv and *nb count the private variables and buffers
 * (s->in and s->out hold its uses). */
static int
can_thread(S *s, KRef st, int *nv, int *nb)
{
	const KKernel *k = s->k;
	const KNode *n = &k->node[st];
	int64_t lo, hi;

	*nv = *nb = 0;
	if (!(n->flags & KF_PARALLEL))
		return 0;
	if (!kb_is_const_i(k, n->a, &lo) || !kb_is_const_i(k, n->b, &hi) || hi - lo < 2)
		return 0;
	uses_clear(k, &s->in);
	uses_clear(k, &s->out);
	block_uses(k, n->body, 0, &s->in);
	block_uses(k, k->body, st, &s->out);
	for (int v = 0; v < k->nvar; v++) {
		if (v == n->var || !(s->in.var[v] & 2) || s->isloop[v])
			continue;          /* not set inside, or a loop index (private) */
		if (s->out.var[v])
			return 0;          /* shared with code outside the loop */
		(*nv)++;
	}
	/* local scratch (a GEMM tile) must be used inside only: each thread
	 * gets its own copy */
	for (int b = 0; b < k->nbuf; b++) {
		if (k->buf[b].space == KS_GLOBAL || !s->in.buf[b])
			continue;
		if (k->buf[b].space != KS_LOCAL || s->out.buf[b])
			return 0;
		(*nb)++;
	}
	return 1;
}

/* Does loop st do enough work to pay for waking threads? */
static int
worth_threads(S *s, KRef st)
{
	const KNode *n = &s->k->node[st];
	int64_t lo, hi;

	return kb_is_const_i(s->k, n->a, &lo) && kb_is_const_i(s->k, n->b, &hi) &&
	       nest_work(s->k, n->body) * (hi - lo) >= s->t->tune.thread_min_work;
}

/* Run loop st on threads: append it with its private variables and
 * buffers to s->threads (can_thread(st) holds). */
static void
thread_loop(S *s, KRef st)
{
	const KKernel *k = s->k;
	const KNode *n = &k->node[st];
	int nv, nb, *var, *buf;

	can_thread(s, st, &nv, &nb);
	var = arena_alloc(s->a, sizeof *var * (nv + 1));
	buf = arena_alloc(s->a, sizeof *buf * (nb + 1));
	if (s->nthreads == s->capthreads) {
		int want = s->capthreads ? 2 * s->capthreads : 4;
		s->threads = arena_grow(s->a, s->threads, sizeof *s->threads,
		                        s->nthreads, want);
		s->capthreads = want;
	}
	if (!var || !buf || !s->threads) {
		s->err = 1;
		return;
	}
	nv = nb = 0;
	for (int v = 0; v < k->nvar; v++)
		if (v != n->var && (s->in.var[v] & 2) && !s->isloop[v])
			var[nv++] = v;
	for (int b = 0; b < k->nbuf; b++)
		if (k->buf[b].space != KS_GLOBAL && s->in.buf[b])
			buf[nb++] = b;
	s->threads[s->nthreads++] = (KThreads){ st, nv, nb, var, buf };
}

/* The outermost loops of block st (through ifs, not into loops), in
 * order, into s->loops: what the threads step numbers. */
static void
outer_loops(S *s, KRef st)
{
	for (; st && !s->err; st = s->k->node[st].next) {
		const KNode *n = &s->k->node[st];
		if (n->kind == KS_FOR) {
			if (s->nloops == s->caploops) {
				int want = s->caploops ? 2 * s->caploops : 8;
				KRef *l = realloc(s->loops, sizeof *l * (size_t)want);
				if (!l) {
					s->err = 1;
					return;
				}
				s->loops = l;
				s->caploops = want;
			}
			s->loops[s->nloops++] = st;
		} else if (n->kind == KS_IF) {
			outer_loops(s, n->body);
			outer_loops(s, n->orelse);
		}
	}
}

/* The threads decision (a threads or serial step) for a kernel with an
 * outermost loop that can run on threads: by default every such loop
 * that does enough work (at most KSTEP_MAXARG of them).  A loop the step
 * names must be one that can. */
static int
decide_threads(S *s, KProgram *p, KKernel *k)
{
	KStep d = kstep_make(KST_SERIAL, 0, 0, 0, 0), got;
	int ncan = 0, nv, nb;

	if (kir_stores_packed(k))   /* neighbours share bytes: one thread */
		return BURN_OK;
	outer_loops(s, k->body);
	for (int i = 0; i < s->nloops && !s->err; i++) {
		if (!can_thread(s, s->loops[i], &nv, &nb))
			continue;
		ncan++;
		if (worth_threads(s, s->loops[i]) && d.narg < KSTEP_MAXARG) {
			d.kind = KST_THREADS;
			d.arg[d.narg++] = i;
		}
	}
	if (s->err || !ncan)
		return BURN_OK;
	got = sched_decide(p, k, d);
	for (int i = 0; got.kind == KST_THREADS && i < got.narg && !s->err; i++) {
		int l = got.arg[i];
		if (l >= s->nloops || !can_thread(s, s->loops[l], &nv, &nb))
			return burn_fail(s->c, BURN_ERR_INVALID, "--schedule: kernel %s: "
			                 "threads: outermost loop %d %s", k->name, l,
			                 l >= s->nloops ? "does not exist" : "cannot run on "
			                 "threads (not parallel, or state shared outside it)");
		thread_loop(s, s->loops[l]);
	}
	return BURN_OK;
}

/* 1 or 2 if store st is an f32 accumulation b[i] = b[i] + x*y whose
 * product is operand a or b of the addition; 0 otherwise. */
static int
accumulation(const KKernel *k, const KNode *st)
{
	const KNode *v = &k->node[st->b];

	if (k->buf[st->buf].dtype != DT_F32 || v->kind != KE_BIN || v->op != KO_ADD ||
	    v->dtype != DT_F32 || v->lanes > 1)
		return 0;
	for (int i = 0; i < 2; i++) {
		const KNode *ln = &k->node[i ? v->b : v->a], *mn = &k->node[i ? v->a : v->b];
		if (ln->kind == KE_LOAD && ln->buf == st->buf && ln->a == st->a &&
		    mn->kind == KE_BIN && mn->op == KO_MUL && mn->dtype == DT_F32 &&
		    mn->lanes == 1)
			return i ? 1 : 2;
	}
	return 0;
}

static int
schedule_kernel(Ctx *c, KProgram *p, const Target *t, KKernel *k)
{
	Arena *a = p->arena;
	KSched *ks = arena_alloc(a, sizeof *ks);
	unsigned char *fma = arena_alloc(a, (size_t)k->nnode + 1);
	S s;
	int rc = BURN_OK, nacc = 0;

	if (!ks || !fma)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	memset(ks, 0, sizeof *ks);
	memset(fma, 0, (size_t)k->nnode + 1);
	ks->target = t->name;
	ks->index_bits = 64;   /* passes/index_width.c may narrow it */
	/* scheduled again (for another target): its decisions are made anew */
	kkernel_step_drop(k, KST_FMA);
	kkernel_step_drop(k, KST_THREADS);
	/* FMA: a fma or nofma step, for kernels with an accumulation */
	for (KRef i = 1; i < k->nnode; i++)
		if (k->node[i].kind == KS_STORE)
			nacc += (fma[i] = (unsigned char)accumulation(k, &k->node[i])) != 0;
	if (nacc && sched_decide(p, k, target_step(t, KST_FMA, 0)).kind != KST_FMA)
		memset(fma, 0, (size_t)k->nnode + 1);
	ks->fma = fma;
	ks->nfma = k->nnode + 1;

	memset(&s, 0, sizeof s);
	s.c = c;
	s.a = a;
	s.t = t;
	s.k = k;
	if (t->threads != 0) {
		s.isloop = calloc((size_t)k->nvar + 1, 1);
		s.in.var = calloc((size_t)k->nvar + 1, 1);
		s.out.var = calloc((size_t)k->nvar + 1, 1);
		s.in.buf = calloc((size_t)k->nbuf + 1, 1);
		s.out.buf = calloc((size_t)k->nbuf + 1, 1);
		s.in.seen = calloc((size_t)k->nnode + 1, 1);
		s.out.seen = calloc((size_t)k->nnode + 1, 1);
		if (!s.isloop || !s.in.var || !s.out.var || !s.in.buf || !s.out.buf ||
		    !s.in.seen || !s.out.seen) {
			s.err = 1;
		} else {
			for (KRef i = 1; i < k->nnode; i++)
				if (k->node[i].kind == KS_FOR)
					s.isloop[k->node[i].var] = 1;
			rc = decide_threads(&s, p, k);
		}
		free(s.isloop);
		free(s.in.var);
		free(s.out.var);
		free(s.in.buf);
		free(s.out.buf);
		free(s.in.seen);
		free(s.out.seen);
		free(s.loops);
		if (s.err && !rc)
			rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	ks->nthreads = s.nthreads;
	ks->threads = s.threads;
	k->sched = ks;
	return rc;
}

int pass_schedule(Ctx *c, KProgram *p, const Target *t)
{
	t = target_or_default(t);
	if (t->max_block_threads > 0) {
		/* blocks and threads first (schedule_gpu.c); FMA marks below are
		 * made on the kernels as rewritten */
		/* rows on chip in up to 3/4 of the shared memory: the rest is
		 * for the reductions' partials and other kernels' blocks */
		GpuSchedOpts g = { t->tune.block_threads, t->tune.grid_blocks,
		                   t->subgroup, 0, t->subgroup, t->max_block_threads,
		                   t->shared_bytes / 4 * 3, t->tune.row_regs, t->tune.row_lanes };
		if (g.threads > t->max_block_threads)
			g.threads = t->max_block_threads;
		g.dyn_grids = t->dyn_grids;
		TRY(pass_schedule_gpu(c, p, &g));
	}
	for (int i = 0; i < p->nkernel; i++)
		TRY(schedule_kernel(c, p, t, p->kernel[i]));
	return BURN_OK;
}

void sched_print(FILE *f, const KKernel *k)
{
	const KSched *s = k->sched;
	int nfma = 0;

	if (!s) {
		fprintf(f, "no schedule\n");
		return;
	}
	fprintf(f, "target %s\n", s->target);
	if (k->nstep) {   /* the decisions, as --schedule takes them */
		char buf[4096];
		KSteps st;
		kkernel_steps(k, &st);
		ksteps_format(&st, buf, sizeof buf);
		fprintf(f, "steps: %s\n", buf);
	}
	if (k->grid)
		fprintf(f, "grid: %s\n", k->grid);
	for (int i = 0; i < s->nthreads; i++) {
		const KThreads *th = &s->threads[i];
		fprintf(f, "threads: loop @%d over %s", th->loop,
		        k->var[k->node[th->loop].var].name ? k->var[k->node[th->loop].var].name : "?");
		fprintf(f, "; private");
		for (int v = 0; v < th->nvar; v++)
			fprintf(f, " v%d(%s)", th->var[v], k->var[th->var[v]].name ?
			        k->var[th->var[v]].name : "");
		for (int b = 0; b < th->nbuf; b++)
			fprintf(f, " b%d", th->buf[b]);
		fprintf(f, "%s\n", th->nvar + th->nbuf ? "" : " none");
	}
	if (!s->nthreads)
		fprintf(f, "threads: none\n");
	fprintf(f, "fma:");
	for (KRef i = 1; i < k->nnode; i++)
		if (ksched_fma(s, i)) {
			fprintf(f, " @%d(b%d)", i, k->node[i].buf);
			nfma++;
		}
	fprintf(f, "%s\n", nfma ? "" : " none");
	fprintf(f, "index: i%d\n", s->index_bits ? s->index_bits : 64);
}

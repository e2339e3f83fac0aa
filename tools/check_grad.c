/*
 * check_grad.c - `burncc check --grad DIR...`: gradient checks of the
 * conformance cases against central finite differences in float64.
 *
 * For one case:
 *   1. load the model twice: as it is, and with every float value widened
 *      to float64 (inputs, initializers, Cast targets, constant fills);
 *      non-float inputs become constants (the case's values), and so does
 *      a float input the model needs as a constant (Resize's scales);
 *   2. in both, the loss L = sum over float outputs k of
 *      sum(output_k * W_k), W_k fixed pseudo-random weights in [-1, 1)
 *      (seeded; the same numbers in both);
 *   3. both graphs get the autodiff pass (passes/autodiff.c) for every
 *      float input and float initializer, and are compiled and run
 *      through the target (in process: the llvm JIT when built with LLVM,
 *      else the kernel-IR interpreter running the C target's kernels);
 *   4. the float64 loss alone is compiled the same way and evaluated at
 *      x +- h for each checked element x (every element of small tensors,
 *      a seeded sample of large ones), h = cbrt(eps64) max(1, |x|);
 *   5. the rules: each float64 gradient element must agree with
 *      (L(x+h) - L(x-h)) / 2h within rtol |fd| + atol; where they
 *      disagree, an element where L is not smooth (a kink: Relu at 0, a
 *      tie of Max; a jump: Sign at 0) is not compared;
 *   6. the f32 program: every element of its gradient must agree with
 *      the float64 gradient within f32's tolerance.
 * The tolerances and why are in docs/NUMERICS.md.
 *
 * The result is "PASS", "FAIL: reason" or "SKIP: reason" (no float input
 * or output; data of a packed type, int4 to float4e2m1, which is not
 * differentiable; or 16-bit floats, for which no tolerance would be
 * principled).
 */
#define _GNU_SOURCE
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "passes/passes.h"
#include "passes/autodiff.h"
#include "frontend/onnx.h"
#include "codegen/target_iface.h"
#include "tools/check_grad.h"
#ifdef BURN_HAVE_LLVM
#include "codegen/llvm/jit.h"
#endif

#define MAX_IN 64
#define FD_BUDGET 256      /* elements checked per case, over all tensors */
#define FD_MIN_PER 4       /* ... but at least this many per tensor */

/* splitmix64: the weights' and the samples' pseudo-random numbers */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s)   /* [-1, 1), 24 bits: exact in f32 */
{
	return (double)(rng_next(s) >> 40) / (double)(1 << 23) - 1.0;
}

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

/* One case's state. */
typedef struct GC {
	const Backend *be;
	const char *model;
	int nin;                 /* the model's inputs (data set 0) */
	Tensor in[MAX_IN];
	char frozen[MAX_IN];     /* inputs made constants */
	Arena a;
	Ctx c;
} GC;

/* ---- building the two graphs ---------------------------------------------- */

static void *widen(Graph *g, const void *src, int64_t n)
{
	double *d = arena_alloc(&g->arena, sizeof *d * (size_t)(n ? n : 1));
	if (d)
		for (int64_t i = 0; i < n; i++)
			d[i] = ((const float *)src)[i];
	return d;
}

/* Every f32 value and f32-producing attribute of g made f64. */
static int to_f64(Ctx *c, Graph *g)
{
	for (int i = 0; i < g->nval; i++) {
		Value *v = GV(g, i);
		if (v->dtype != DT_F32)
			continue;
		if (v->data) {
			int64_t n = value_numel(v);
			if (n < 0 || !(v->data = widen(g, v->data, n)))
				return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		}
		v->dtype = DT_F64;
	}
	for (int i = 0; i < g->nnode; i++) {
		Node *n = &g->node[i];
		/* LayerNormalization's statistics: f32 by default (stash_type) */
		if (n->op == OP_LayerNormalization && !node_attr(n, "stash_type")) {
			Attr *at = node_add_attr(g, i, "stash_type", AT_INT);
			if (!at)
				return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
			at->i = DT_F32;   /* made f64 below */
			n = &g->node[i];
		}
		for (int k = 0; k < n->nattr; k++) {
			Attr *at = &n->attr[k];
			if (at->type == AT_INT && at->i == DT_F32 &&
			    (!strcmp(at->name, "to") || !strcmp(at->name, "dtype") ||
			     !strcmp(at->name, "stash_type")))
				at->i = DT_F64;
			if (at->type == AT_TENSOR && at->t && at->t->dtype == DT_F32) {
				Tensor *t = arena_alloc(&g->arena, sizeof *t);
				int64_t m = at->t->nbytes / 4;
				if (!t)
					return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
				*t = *at->t;
				t->dtype = DT_F64;
				t->nbytes = m * 8;
				if (!(t->data = widen(g, at->t->data, m)))
					return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
				at->t = t;
			}
		}
	}
	for (int i = 0; i < g->nout; i++)
		g->val[g->out[i]].is_output = 1;
	g->out_decl = NULL;
	return BURN_OK;
}

/*
 * Load the model, freeze the non-float inputs (and those in gc->frozen),
 * make the float initializers inputs (after the model's own, in value
 * order: *ninit of them, their data in init[]), widen to f64 if asked,
 * bind the dims and infer.
 */
static int build(GC *gc, int f64, Graph **out, const void **init, int *ninit)
{
	Ctx *c = &gc->c;
	Graph *g;
	DimBind bind[64];
	int nbind = 0, k = 0;

	*out = NULL;
	*ninit = 0;
	TRY(onnx_load_file(c, gc->model, &g));
	if (g->nin != gc->nin) {
		burn_fail(c, BURN_ERR_INVALID, "%d input files for %d graph inputs",
		          gc->nin, g->nin);
		goto fail;
	}
	for (int i = 0; i < gc->nin; i++) {
		Value *v = GV(g, g->in[i]);
		if (!dtype_is_float(gc->in[i].dtype))
			gc->frozen[i] = 1;
		if (gc->frozen[i]) {
			if (graph_set_const(c, g, g->in[i], gc->in[i].dtype, gc->in[i].rank,
			                    gc->in[i].dim, gc->in[i].data))
				goto fail;
			continue;
		}
		for (int d = 0; d < v->rank && nbind < 64; d++)
			if (v->sym[d]) {
				bind[nbind].name = v->sym[d];
				bind[nbind++].value = gc->in[i].dim[d];
			}
		g->in[k++] = g->in[i];
	}
	g->nin = k;
	for (int i = 0; i < g->nval && g->nin < MAX_IN; i++) {
		Value *v = GV(g, i);
		if (v->data && v->producer < 0 && v->dtype == DT_F32 && v->kind == VK_CONST &&
		    value_numel(v) > 0) {
			init[(*ninit)++] = v->data;
			v->data = NULL;
			v->kind = VK_INPUT;
			graph_add_input(g, i);
		}
	}
	/* duplicate symbolic names bind once */
	for (int i = 0; i < nbind; i++)
		for (int j = i + 1; j < nbind; j++)
			if (!strcmp(bind[i].name, bind[j].name))
				bind[j--] = bind[--nbind];
	if (f64 && to_f64(c, g))
		goto fail;
	if (graph_check_attrs(c, g) || pass_bind_dims(c, g, nbind, bind) ||
	    pass_infer_fold(c, g))
		goto fail;
	*out = g;
	return BURN_OK;
fail:
	graph_destroy(g);
	return c->code;
}

/*
 * The loss: the sum over float outputs k of sum(out_k * W_k); the graph's
 * outputs are cleared.  *loss gets its value, -1 if no output is float.
 */
static int add_loss(GC *gc, Graph *g, int *loss)
{
	AD b = { &gc->c, g, g->nval, NULL, NULL, 0 };
	int acc = -1;

	*loss = -1;
	for (int k = 0; k < g->nout; k++) {
		Value *v = GV(g, g->out[k]);
		int64_t n = value_numel(v), d[BURN_MAX_RANK];
		uint64_t s = 0x5eedull + (uint64_t)k;
		int r = v->rank, o = g->out[k], w, t;
		void *data;
		v->is_output = 0;
		if (v->dtype != DT_F32 && v->dtype != DT_F64)
			continue;
		memcpy(d, v->dim, sizeof d);
		data = arena_alloc(&g->arena, 8 * (size_t)(n > 0 ? n : 1));
		if (!data)
			return burn_fail(&gc->c, BURN_ERR_NOMEM, "out of memory");
		for (int64_t i = 0; i < n; i++) {
			double x = rng_unit(&s);
			if (v->dtype == DT_F32)
				((float *)data)[i] = (float)x;
			else
				((double *)data)[i] = x;
		}
		w = ad_const(&b, v->dtype, r, d, data);
		/* sum over every axis: a reshape to 1-D, then ReduceSum */
		t = ad_rsum(&b, ad_reshape(&b, ad_op2(&b, OP_Mul, o, w), 1, (int64_t[]){ n }),
		            1, 0);
		acc = acc < 0 ? t : ad_op2(&b, OP_Add, acc, t);
		if (acc < 0)
			return gc->c.code ? gc->c.code : BURN_ERR_INTERNAL;
	}
	g->nout = 0;
	*loss = acc;
	return BURN_OK;
}

static void set_outputs(Graph *g, int n, const int *v)
{
	g->out = arena_alloc(&g->arena, sizeof *g->out * (size_t)(n ? n : 1));
	for (int i = 0; i < n; i++) {
		g->out[i] = v[i];
		GV(g, v[i])->is_output = 1;
	}
	g->nout = n;
	g->out_decl = NULL;
}

/* Compile g (consumed) for the backend's target. */
static int compile(GC *gc, Graph *g, Compiled **m)
{
	CompileOpts co = { 0 };

	co.target = gc->be ? gc->be->target : NULL;
	return burn_compile_graph(&gc->c, g, &co, m);
}

/* A compiled program and, for the llvm target, its code: compiled once,
 * run for every evaluation of the finite differences. */
typedef struct Prog {
	Compiled *m;
#ifdef BURN_HAVE_LLVM
	LlvmJit *j;
#endif
} Prog;

static int jit(GC *gc, Prog *p)
{
#ifdef BURN_HAVE_LLVM
	if (gc->be && !strcmp(gc->be->name, "llvm"))
		return llvm_jit_compile(&gc->c, &p->m->prog, &p->j);
#endif
	(void)gc; (void)p;
	return BURN_OK;
}

static void prog_free(Prog *p)
{
#ifdef BURN_HAVE_LLVM
	llvm_jit_free(p->j);
#endif
	burn_compiled_destroy(p->m);
}

/* Run p once: through the backend in process, or the interpreter. */
static int run1(GC *gc, const Prog *p, const void *const *in, void *const *out)
{
	const Compiled *m = p->m;
	int rc;
	void *arena, *base;

#ifdef BURN_HAVE_LLVM
	if (p->j)
		return llvm_jit_run(&gc->c, p->j, m, in, out, NULL);
#endif
	if (gc->be && gc->be->run)
		return gc->be->run(&gc->c, m, in, out, NULL);
	base = malloc((size_t)m->plan.arena_bytes + BURN_ARENA_ALIGN);
	if (!base)
		return burn_fail(&gc->c, BURN_ERR_NOMEM, "out of memory");
	arena = (char *)base + (BURN_ARENA_ALIGN - (uintptr_t)base % BURN_ARENA_ALIGN);
	rc = plan_run_interp(&gc->c, m->g, &m->prog, &m->plan, NULL, in, out, arena);
	free(base);
	return rc;
}

/* ---- one case ------------------------------------------------------------- */

typedef struct Sides {
	Prog p32, p64;
	int nwrt;
	const void *in32[MAX_IN];  /* the native graph's inputs */
	double *in64[MAX_IN];      /* the same, widened (perturbed in place) */
	int64_t numel[MAX_IN];
	int dt[MAX_IN];            /* their dtypes */
	const char *name[MAX_IN];
	void *grad[MAX_IN];        /* burncc's gradients, native dtype */
	double *grad64[MAX_IN];    /* burncc's gradients of the f64 graph */
} Sides;

static int loss64(GC *gc, Sides *s, double *l)
{
	void *out[1] = { l };
	return run1(gc, &s->p64, (const void *const *)s->in64, out);
}

/* Compare the gradient of wrt tensor j with finite differences. */
static int check_tensor(GC *gc, Sides *s, int j, int per, int is64, char *res,
                        size_t n)
{
	int64_t nel = s->numel[j], cnt = nel < per ? nel : per;
	uint64_t rs = 0xfdull + (uint64_t)j;
	double l0, *fd, scale = 0, rtol = 1e-3;
	int64_t *idx;
	char *kink;
	int rc = BURN_OK, bad = 0, first = -1;

	if (!cnt)
		return BURN_OK;
	fd = calloc((size_t)cnt, sizeof *fd);
	idx = calloc((size_t)cnt, sizeof *idx);
	kink = calloc((size_t)cnt, 1);
	if (!fd || !idx || !kink) {
		rc = burn_fail(&gc->c, BURN_ERR_NOMEM, "out of memory");
		goto done;
	}
	for (int64_t i = 0; i < cnt; i++)   /* all, or a sample with repeats */
		idx[i] = cnt == nel ? i : (int64_t)(rng_next(&rs) % (uint64_t)nel);
	if ((rc = loss64(gc, s, &l0)))
		goto done;
	/* the scale of the absolute tolerance: burncc's largest f64 gradient
	 * element of the tensor (a wrong huge element still fails: its error
	 * is its own size) */
	for (int64_t i = 0; i < nel; i++)
		if (fabs(s->grad64[j][i]) > scale)
			scale = fabs(s->grad64[j][i]);
	for (int64_t i = 0; i < cnt; i++) {
		double *x = &s->in64[j][idx[i]], x0 = *x, l[4], dp, dm, f8, tiny;
		double h = cbrt(DBL_EPSILON) * (fabs(x0) > 1 ? fabs(x0) : 1);
		/* x + h, x - h, x + h/8, x - h/8, each exactly representable */
		double xs[4] = { x0 + h, x0 - h, x0 + h / 8, x0 - h / 8 };
		double got = s->grad64[j][idx[i]];
		for (int k = 0; k < 2 && !rc; k++) {
			*x = xs[k];
			rc = loss64(gc, s, &l[k]);
		}
		*x = x0;
		if (rc)
			goto done;
		fd[i] = (l[0] - l[1]) / (xs[0] - xs[1]);
		if (got == fd[i] || fabs(got - fd[i]) <= 1e-6 * scale + 1e-12 + 1e-5 * fabs(fd[i]))
			continue;
		/* a disagreement: is L smooth here?  (two more evaluations) */
		for (int k = 2; k < 4 && !rc; k++) {
			*x = xs[k];
			rc = loss64(gc, s, &l[k]);
		}
		*x = x0;
		if (rc)
			goto done;
		f8 = (l[2] - l[3]) / (xs[2] - xs[3]);
		dp = (l[0] - l0) / (xs[0] - x0);
		dm = (l0 - l[1]) / (x0 - xs[1]);
		/* what rounding alone can make of a difference quotient */
		tiny = 64 * DBL_EPSILON * (fabs(l0) + 1) / (h / 8);
		/* not smooth here: a kink at x (the one-sided slopes differ), or
		 * a kink or jump within the step (the quotient changes with the
		 * step by more than the comparison allows; for a smooth function
		 * the two differ by O(h^2 f''') ~ 1e-11 f'''); not compared */
		kink[i] = !isfinite(fd[i]) || !isfinite(f8) ||
		          fabs(dp - dm) > 0.1 * (fabs(dp) + fabs(dm)) + tiny ||
		          fabs(f8 - fd[i]) > 1e-6 * fabs(fd[i]) + tiny;
		if (!kink[i] && !bad++)
			first = (int)i;
	}
	if (bad) {
		snprintf(res, n, "FAIL: f64 gradient of '%s': %d of %lld checked elements "
		         "differ; first [%lld]: burncc %.9g, finite difference %.9g",
		         s->name[j], bad, (long long)cnt, (long long)idx[first],
		         s->grad64[j][idx[first]], fd[first]);
		goto done;
	}
	/* the f32 program: every element against the float64 gradient */
	if (!is64) {
		double sc = 0;
		int64_t fi = -1;
		for (int64_t i = 0; i < nel; i++)
			if (fabs(s->grad64[j][i]) > sc)
				sc = fabs(s->grad64[j][i]);
		for (int64_t i = 0; i < nel; i++) {
			double want = s->grad64[j][i], got = ((float *)s->grad[j])[i];
			if (!(got == want || fabs(got - want) <= 1e-4 * sc + 1e-7 + rtol * fabs(want)))
				if (!bad++)
					fi = i;
		}
		if (bad)
			snprintf(res, n, "FAIL: f32 gradient of '%s': %d of %lld elements "
			         "differ from the f64 one; first [%lld]: %.9g, f64 %.9g",
			         s->name[j], bad, (long long)nel, (long long)fi,
			         ((float *)s->grad[j])[fi], s->grad64[j][fi]);
	}
done:
	free(fd);
	free(idx);
	free(kink);
	return rc;
}

/* Load, build both sides, compare.  res: PASS / FAIL: / SKIP:. */
static void grad_sides(GC *gc, char *res, size_t n)
{
	Graph *g32 = NULL, *g64 = NULL;
	const void *init[MAX_IN], *init64[MAX_IN];
	int ninit, ninit64, loss32, loss64v, grads[MAX_IN];
	Sides s;

	memset(&s, 0, sizeof s);
	/* freeze what must be a constant, as check does */
	for (int tries = 0;; tries++) {
		const char *q;
		char name[256];
		int k, found = -1;
		if (!build(gc, 0, &g32, init, &ninit))
			break;
		q = strstr(gc->c.msg, "('");
		if (tries >= 8 || !strstr(gc->c.msg, "must be a constant") || !q)
			goto fail_ctx;
		q += 2;
		for (k = 0; q[k] && q[k] != '\'' && k < (int)sizeof name - 1; k++)
			name[k] = q[k];
		name[k] = 0;
		{
			/* the input of that name */
			Graph *gl;
			burn_ctx_init(&gc->c, "model.onnx");
			if (onnx_load_file(&gc->c, gc->model, &gl))
				goto fail_ctx;
			for (int i = 0; i < gc->nin && i < gl->nin; i++)
				if (!strcmp(GV(gl, gl->in[i])->name, name))
					found = i;
			graph_destroy(gl);
		}
		if (found < 0 || gc->frozen[found]) {
			snprintf(res, n, "SKIP: '%s' must be a constant and is not an input",
			         name);
			goto out;
		}
		gc->frozen[found] = 1;
		burn_ctx_init(&gc->c, "model.onnx");
	}
	for (int i = 0, k = 0; i < gc->nin; i++) {
		if (gc->frozen[i])
			continue;
		if (gc->in[i].dtype != DT_F32 && gc->in[i].dtype != DT_F64) {
			snprintf(res, n, "SKIP: input '%s' is %s: gradients are checked in "
			         "f32 and f64", GV(g32, g32->in[k])->name,
			         dtype_name(gc->in[i].dtype));
			goto out;
		}
		s.in32[k++] = gc->in[i].data;
	}
	s.nwrt = g32->nin;
	if (!s.nwrt) {
		snprintf(res, n, "SKIP: no float input");
		goto out;
	}
	for (int i = 0; i < ninit; i++)
		s.in32[s.nwrt - ninit + i] = init[i];
	if (add_loss(gc, g32, &loss32))
		goto fail_ctx;
	if (loss32 < 0) {
		snprintf(res, n, "SKIP: no float output");
		goto out;
	}
	for (int i = 0; i < s.nwrt; i++) {
		Value *v = GV(g32, g32->in[i]);
		s.numel[i] = value_numel(v);
		s.dt[i] = v->dtype;
		s.name[i] = arena_strdup(&gc->a, v->name);
		if (!(s.grad[i] = calloc((size_t)value_nbytes(v) + 1, 1))) {
			snprintf(res, n, "FAIL: out of memory");
			goto out;
		}
	}
	if (pass_autodiff(&gc->c, g32, loss32, s.nwrt, g32->in, grads))
		goto fail_ctx;
	set_outputs(g32, s.nwrt, grads);
	{
		Graph *gg = g32;
		g32 = NULL;
		if (compile(gc, gg, &s.p32.m) || jit(gc, &s.p32))
			goto fail_ctx;
	}
	if (run1(gc, &s.p32, s.in32, s.grad))
		goto fail_ctx;

	/* the float64 side */
	if (build(gc, 1, &g64, init64, &ninit64)) {
		char m[900];
		snprintf(m, sizeof m, "%s", gc->c.msg);
		snprintf(res, n, "FAIL: f64 reference: %s", m);
		goto out;
	}
	if (g64->nin != s.nwrt || ninit64 != ninit) {
		snprintf(res, n, "FAIL: f64 reference has other inputs");
		goto out;
	}
	if (add_loss(gc, g64, &loss64v) || loss64v < 0)
		goto fail64;
	set_outputs(g64, 1, &loss64v);
	for (int i = 0; i < s.nwrt; i++) {
		int64_t m = s.numel[i];
		if (!(s.in64[i] = malloc(sizeof(double) * (size_t)(m ? m : 1)))) {
			snprintf(res, n, "FAIL: out of memory");
			goto out;
		}
		for (int64_t e = 0; e < m; e++)
			s.in64[i][e] = s.dt[i] == DT_F64 ? ((const double *)s.in32[i])[e]
			                                 : ((const float *)s.in32[i])[e];
	}
	{
		Graph *gg = g64;
		g64 = NULL;
		if (compile(gc, gg, &s.p64.m) || jit(gc, &s.p64))
			goto fail64;
	}
	/* burncc's gradient of the float64 graph */
	{
		Graph *gd;
		Prog pd = { 0 };
		const void *ini[MAX_IN];
		int ni, ld, gr[MAX_IN], rc;
		void *o64[MAX_IN];
		if (build(gc, 1, &gd, ini, &ni))
			goto fail64;
		if (add_loss(gc, gd, &ld) || pass_autodiff(&gc->c, gd, ld, s.nwrt, gd->in, gr)) {
			graph_destroy(gd);
			goto fail64;
		}
		set_outputs(gd, s.nwrt, gr);
		for (int i = 0; i < s.nwrt; i++) {
			if (!(s.grad64[i] = calloc((size_t)(s.numel[i] + 1), sizeof(double)))) {
				snprintf(res, n, "FAIL: out of memory");
				graph_destroy(gd);
				goto out;
			}
			o64[i] = s.grad64[i];
		}
		rc = compile(gc, gd, &pd.m) || jit(gc, &pd) ||
		     run1(gc, &pd, (const void *const *)s.in64, o64);
		prog_free(&pd);
		if (rc)
			goto fail64;
	}
	{
		int per = FD_BUDGET / s.nwrt;
		if (per < FD_MIN_PER)
			per = FD_MIN_PER;
		for (int j = 0; j < s.nwrt; j++) {
			if (check_tensor(gc, &s, j, per, s.dt[j] == DT_F64, res, n))
				goto fail64;
			if (strncmp(res, "PASS", 4))
				goto out;
		}
	}
	goto out;
fail64:
	{
		char m[900];
		snprintf(m, sizeof m, "%s", gc->c.msg);
		snprintf(res, n, "FAIL: f64 reference: %s", m);
	}
	goto out;
fail_ctx:
	snprintf(res, n, "FAIL: %s", gc->c.msg[0] ? gc->c.msg : burn_code_name(gc->c.code));
out:
	if (g32)
		graph_destroy(g32);
	if (g64)
		graph_destroy(g64);
	prog_free(&s.p32);
	prog_free(&s.p64);
	for (int i = 0; i < MAX_IN; i++) {
		free(s.grad[i]);
		free(s.grad64[i]);
		free(s.in64[i]);
	}
}

/*
 * A case whose data (test_data_set_0's inputs and outputs) has a packed
 * type (int4, uint4, int2, uint2, float4e2m1: Cast and CastLike to or
 * from them) is not differentiable: no gradient flows through their
 * integer or 4-bit values.  Says so in res (SKIP) and returns 1.  Data
 * files that do not load as tensors are left to the check itself.
 */
static int packed_case(GC *gc, const char *dir, char *res, size_t n)
{
	static const char *const kind[2] = { "input", "output" };

	for (int w = 0; w < 2; w++)
		for (int k = 0; k < MAX_IN; k++) {
			char p[1200];
			const char *nm = NULL;
			Tensor t;
			Ctx c;
			snprintf(p, sizeof p, "%s/test_data_set_0/%s_%d.pb", dir, kind[w], k);
			if (!exists(p))
				break;
			burn_ctx_init(&c, p);
			if (onnx_load_tensor_file(&c, p, &gc->a, &t, &nm) ||
			    !dtype_is_packed(t.dtype))
				continue;
			snprintf(res, n, "SKIP: %s '%s' is %s: a packed type is not "
			         "differentiable", kind[w], nm && *nm ? nm : "?",
			         dtype_name(t.dtype));
			return 1;
		}
	return 0;
}

void grad_case(const Backend *be, const char *dir, char *res, size_t n)
{
	GC gc;
	char model[1024], p[1200];

	memset(&gc, 0, sizeof gc);
	gc.be = be;
	arena_init(&gc.a);
	snprintf(model, sizeof model, "%s/model.onnx", dir);
	gc.model = model;
	burn_ctx_init(&gc.c, "model.onnx");
	snprintf(res, n, "PASS");
	if (packed_case(&gc, dir, res, n))
		goto out;
	{
		/* sequences and optionals bind to their data in burncc check
		 * only; the gradient check takes tensor inputs */
		Graph *g0 = NULL;
		if (onnx_load_file(&gc.c, model, &g0)) {
			snprintf(res, n, "FAIL: %s", gc.c.msg);
			goto out;
		}
		for (int i = 0; i < g0->nin; i++)
			if (GV(g0, g0->in[i])->decl != VD_TENSOR) {
				snprintf(res, n, "FAIL: input '%s' is a sequence or an "
				         "optional; the gradient check takes tensors",
				         GV(g0, g0->in[i])->name);
				graph_destroy(g0);
				goto out;
			}
		graph_destroy(g0);
	}
	for (gc.nin = 0;; gc.nin++) {
		snprintf(p, sizeof p, "%s/test_data_set_0/input_%d.pb", dir, gc.nin);
		if (!exists(p))
			break;
		if (gc.nin == MAX_IN) {
			snprintf(res, n, "SKIP: more than %d inputs", MAX_IN);
			goto out;
		}
		if (onnx_load_tensor_file(&gc.c, p, &gc.a, &gc.in[gc.nin], NULL)) {
			snprintf(res, n, "FAIL: %s", gc.c.msg);
			goto out;
		}
	}
	grad_sides(&gc, res, n);
out:
	arena_free(&gc.a);
}

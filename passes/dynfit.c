/*
 * dynfit.c - several dims known at run time, on any axis (burncc
 * --dynamic-dim batch --dynamic-dim seq): shapes found by sampling.
 *
 * dynamic.c's peeling covers one leading dim whose items stay apart.  A
 * sequence dim does not: attention mixes the positions (Q @ K^T is
 * [batch, heads, seq, seq], Softmax runs along seq, P @ V sums over it).
 * Rather than carry symbolic shapes through inference, simplification,
 * fusion and every lowering, this pass compiles the graph at several values
 * of the dims and reads the symbolic program off the samples:
 *
 *   1. Each of the D dims (D <= DF_MAX_DIMS) takes three values, b, b+2,
 *      b+4 (odd, distinct between dims, none 1: no size-1 special case, no
 *      power-of-two divisibility that a lowering might exploit); the graph
 *      is compiled to kernels at every point of that 3^D grid and at three
 *      more points that only check: every dim at b+6, far above (131
 *      + 10j, past every tile and lane count of a target), and even (38,
 *      58, 74: (B - 1) / 2 is a polynomial on odd values only).  A kernel
 *      whose GEMM column tile chose by size gets the axpy step and every
 *      sample is compiled again (tile_fallback).
 *   2. Every sample must have the same graph and kernels, node for node,
 *      except for integer constants (strides, loop bounds, offsets) and
 *      buffer sizes.  Each of those is fitted by the polynomial of degree
 *      <= 2 in each dim through the grid (exact, integer coefficients) and
 *      checked at the extra points: c0 + c1*S + c2*S*S + c3*N*S*S ...
 *   3. The first sample becomes the program: its varying constants become
 *      those expressions over the kernel's dim parameters (variables
 *      0..D-1, named after the dims), its buffers' sizes extents, and its
 *      values' shapes symbolic (an input or output axis must be one dim
 *      exactly; a value inside the program may be any monomial, c*N*S*S,
 *      which is what the plan sizes), so the plan places them as it does
 *      the peeled batch's.
 *
 * What cannot be fitted is refused by name: a constant tensor whose
 * values follow the dims (a Shape or Size folded into data a kernel reads),
 * a float constant that follows them (a mean over a run-time axis), a
 * structure that changes with them (a lowering choosing by size), a size
 * that is no polynomial of that degree.  The fit is exact on the samples;
 * that the polynomial also holds at other values (1, 128) is the premise
 * of the method, true of the index arithmetic the lowerings write (products
 * and sums of the dims), and what the tests check.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lower.h"
#include "passes.h"

#define DF_MAX_DIMS 3
#define DF_GRID 27          /* 3^DF_MAX_DIMS */
#define DF_NSAMP (DF_GRID + 3)   /* the grid and three check points */

/* A fitted size: coefficient c[e] of the monomial prod dim_j^(e's base-3
 * digit j), over the dims of the Fit it belongs to. */
typedef struct Poly {
	int64_t c[DF_GRID];
	int form;   /* how a kernel constant is made of it: PF_INT, PF_FLOAT,
	             * PF_RECIP */
} Poly;

/* A fitted kernel constant: the integer p, p as a float (a count cast to
 * float), or 1/p (a mean's scale over a run-time axis) in float. */
enum { PF_INT = 0, PF_FLOAT, PF_RECIP };

/* The samples: nsamp = 3^D + 3 points, x[t][j] the value of dim j at t:
 * the grid, then the check points near it, far above it and even. */
typedef struct Fit {
	int d, ngrid, nsamp;
	int64_t x[DF_NSAMP][DF_MAX_DIMS];
	const char *const *name;
} Fit;

static void
fit_init(Fit *f, int d, const char *const *name)
{
	f->d = d;
	f->name = name;
	f->ngrid = 1;
	for (int j = 0; j < d; j++)
		f->ngrid *= 3;
	f->nsamp = f->ngrid + 3;
	for (int t = 0; t < f->ngrid; t++)
		for (int j = 0, r = t; j < d; j++, r /= 3)
			f->x[t][j] = 7 + 10 * j + 2 * (r % 3);
	/* the far point is past every register tile and lane count of a
	 * target (tune.gemm_nr_max 96), so that a choice by size the small
	 * samples all make alike (a column tile wider than each of them:
	 * no full tile, the rest tile the whole row) shows as a difference */
	for (int j = 0; j < d; j++) {
		f->x[f->ngrid][j] = 7 + 10 * j + 6;
		f->x[f->ngrid + 1][j] = 131 + 10 * j;
		/* the grid's points are odd: an index that halves a dim (a
		 * centre, (B - 1) / 2) is a polynomial on them and not on even
		 * values; twice a prime, so that no lane count divides it */
		f->x[f->ngrid + 2][j] = (int64_t[]){ 38, 58, 74 }[j];
	}
}

/* p at the dims' values x[0..d), exactly; 0 if it passes 2^62 on the
 * way. */
static int
poly_eval(const Fit *f, const Poly *p, const int64_t *x, int64_t *out)
{
	__int128 s = 0;

	for (int e = 0; e < f->ngrid; e++) {
		__int128 m = p->c[e];
		if (!m)
			continue;
		for (int j = 0, r = e; j < f->d; j++, r /= 3)
			for (int k = 0; k < r % 3; k++)
				m *= x[j];
		s += m;
		if (s > ((__int128)1 << 62) || s < -((__int128)1 << 62))
			return 0;
	}
	*out = (int64_t)s;
	return 1;
}

static int
poly_at(const Fit *f, const Poly *p, int t, int64_t *out)
{
	return poly_eval(f, p, f->x[t], out);
}

/* Fit y[0..nsamp) (y[t]: the size at sample t): 1 and *p when one
 * polynomial of degree <= 2 per dim with integer coefficients gives every
 * sample, 0 otherwise. */
static int
poly_fit(const Fit *f, const int64_t *y, Poly *p)
{
	double g[DF_GRID];
	int stride = 1;

	for (int t = 0; t < f->ngrid; t++)
		g[t] = (double)y[t];
	/* along each dim in turn: values at b, b+2, b+4 -> coefficients of
	 * 1, x, x^2 (Newton's forward differences, expanded) */
	for (int j = 0; j < f->d; j++, stride *= 3) {
		double x0 = (double)f->x[0][j], h = 2;
		for (int t = 0; t < f->ngrid; t++) {
			double y0, y1, y2, a, b;
			if ((t / stride) % 3)
				continue;
			y0 = g[t], y1 = g[t + stride], y2 = g[t + 2 * stride];
			a = (y2 - 2 * y1 + y0) / (2 * h * h);
			b = (y1 - y0) / h - a * (2 * x0 + h);
			g[t] = y0 - b * x0 - a * x0 * x0;
			g[t + stride] = b;
			g[t + 2 * stride] = a;
		}
	}
	for (int e = 0; e < f->ngrid; e++) {
		if (!(fabs(g[e]) < 4.0e15))
			return 0;
		p->c[e] = (int64_t)llround(g[e]);
	}
	for (int e = f->ngrid; e < DF_GRID; e++)
		p->c[e] = 0;
	for (int t = 0; t < f->nsamp; t++) {
		int64_t v;
		if (!poly_at(f, p, t, &v) || v != y[t])
			return 0;
	}
	return 1;
}

/* The one term of p, if p is c * a monomial: *c and exponents e[j]. */
static int
poly_monomial(const Fit *f, const Poly *p, int64_t *c, int *e)
{
	int n = 0;

	for (int k = 0; k < f->ngrid; k++) {
		if (!p->c[k])
			continue;
		if (n++)
			return 0;
		*c = p->c[k];
		for (int j = 0, r = k; j < f->d; j++, r /= 3)
			e[j] = r % 3;
	}
	return n == 1;
}

/* ---- one sample --------------------------------------------------------- */

/* A copy of g through its text form (ir/ir_text.c), with what that form
 * does not carry (out_decl, decl) copied. */
int
dyn_graph_clone(Ctx *c, const Graph *g, Graph **out)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	*out = NULL;
	if (!f)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	ir_print(f, g, -1);
	if (fclose(f)) {
		free(text);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	rc = ir_parse(c, text, len, out);
	free(text);
	if (rc)
		return rc;
	if ((*out)->nin != g->nin || (*out)->nout != g->nout) {
		graph_destroy(*out);
		*out = NULL;
		return burn_fail(c, BURN_ERR_INTERNAL, "--dynamic-dim: the graph "
		                 "did not copy through its text form");
	}
	if (g->out_decl) {
		Value *d = arena_alloc(&(*out)->arena, sizeof *d * ((size_t)g->nout + 1));
		for (int i = 0; i < g->nout; i++) {
			d[i] = g->out_decl[i];
			d[i].name = NULL;   /* read: dtype, rank, dim, sym */
			for (int k = 0; k < d[i].rank && k < BURN_MAX_RANK; k++)
				if (d[i].sym[k])
					d[i].sym[k] = arena_strdup(&(*out)->arena, d[i].sym[k]);
		}
		(*out)->out_decl = d;
	}
	for (int i = 0; i < g->nin; i++) {
		const Value *v = GV(g, g->in[i]);
		Value *w = GV(*out, (*out)->in[i]);
		w->decl = v->decl;
		/* a dim may be named and sized both (burncc check --dynamic names
		 * the leading dim of data it has): the text keeps the size */
		for (int d = 0; d < v->rank && d < w->rank; d++)
			if (v->sym[d] && !w->sym[d])
				w->sym[d] = arena_strdup(&(*out)->arena, v->sym[d]);
	}
	return BURN_OK;
}

/* Compile src (not modified) to kernels into m (m->arena, m->prog
 * initialised, m->g NULL) with the dims at vals: pipeline.c's passes up
 * to lowering.  m->g is set, also on failure. */
static int
lower_sample(Ctx *c, const Graph *src, Compiled *m, const CompileOpts *o,
             const int64_t *vals, Front front, int lower)
{
	DimBind *b;
	int n = o->nbind, rc;

	TRY(dyn_graph_clone(c, src, &m->g));
	if (!(b = malloc(sizeof *b * ((size_t)n + (size_t)o->ndyn + 1))))
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	if (n)
		memcpy(b, o->bind, sizeof *b * (size_t)n);
	for (int j = 0; j < o->ndyn; j++) {
		b[n + j].name = o->dyn[j];
		b[n + j].value = vals[j];
	}
	rc = front(c, m, o, b, n + o->ndyn, lower);
	free(b);
	return rc;
}

/* ---- comparing the samples ---------------------------------------------- */

static int
differ(Ctx *c, const char *what, const char *name, const char *const *dyn)
{
	return burn_fail(c, BURN_ERR_UNSUPPORTED, "--dynamic-dim %s: %s%s%s "
	                 "changes with the dims beyond what sizes can express "
	                 "(the lowering chose by size); static shapes are needed "
	                 "(--dim)", dyn[0], what, name ? " " : "", name ? name : "");
}

/* Whether KNode x and y are the same but for a constant's value. */
static int
same_node(const KNode *x, const KNode *y)
{
	return x->kind == y->kind && x->op == y->op && x->dtype == y->dtype &&
	       x->lanes == y->lanes && x->a == y->a && x->b == y->b &&
	       x->c == y->c && x->var == y->var && x->buf == y->buf &&
	       x->buf2 == y->buf2 && x->buf3 == y->buf3 && x->flags == y->flags &&
	       x->body == y->body && x->orelse == y->orelse && x->next == y->next &&
	       (x->kind == KE_CONST || (x->ival == y->ival &&
	        (x->fval == y->fval || (isnan(x->fval) && isnan(y->fval)))));
}

static int
is_int_dtype(int dt)
{
	return dt == DT_I64 || dt == DT_I32 || dt == DT_I16 || dt == DT_I8 ||
	       dt == DT_U64 || dt == DT_U32 || dt == DT_U16 || dt == DT_U8;
}

/* ---- rewriting the first sample ------------------------------------------ */



/* p as i64 nodes over k's dim parameters (variables 0..d-1); 0 when out of
 * memory. */
static KRef
push_poly(Arena *a, KKernel *k, const Fit *f, const Poly *p)
{
	KRef sum = 0;

	for (int e = 0; e < f->ngrid; e++) {
		KRef t;
		if (!p->c[e])
			continue;
		t = 0;
		for (int j = 0, r = e; j < f->d; j++, r /= 3)
			for (int q = 0; q < r % 3; q++) {
				KRef v = kir_push_i64(a, k, KE_VAR, 0, 0, 0, j, 0);
				if (!v)
					return 0;
				t = t ? kir_push_i64(a, k, KE_BIN, KO_MUL, t, v, 0, 0) : v;
				if (!t)
					return 0;
			}
		if (!t || p->c[e] != 1) {
			KRef cst = kir_push_i64(a, k, KE_CONST, 0, 0, 0, 0, p->c[e]);
			if (!cst)
				return 0;
			t = t ? kir_push_i64(a, k, KE_BIN, KO_MUL, cst, t, 0, 0) : cst;
			if (!t)
				return 0;
		}
		sum = sum ? kir_push_i64(a, k, KE_BIN, KO_ADD, sum, t, 0, 0) : t;
		if (!sum)
			return 0;
	}
	return sum ? sum : kir_push_i64(a, k, KE_CONST, 0, 0, 0, 0, 0);
}

/* Kernel k, just finished (the program's last), moved first in the
 * program: it computes val, a constant until now, at run time. */
static int
put_first(Ctx *c, Compiled *m, KKernel *k, Value *val)
{
	memmove(m->prog.kernel + 1, m->prog.kernel,
	        sizeof *m->prog.kernel * (size_t)(m->prog.nkernel - 1));
	m->prog.kernel[0] = k;
	val->data = NULL;
	val->kind = VK_TEMP;
	return kir_verify(c, k);
}

/* p as an i64 expression of the kernel kb builds, over its dim parameters
 * (variables 0..d-1: kb_dim in order) */
static KRef
poly_kb(KB *kb, const Fit *f, const Poly *p)
{
	KRef sum = 0;

	for (int q = 0; q < f->ngrid; q++) {
		KRef term;
		if (!p->c[q])
			continue;
		term = kb_idx(kb, p->c[q]);
		for (int j = 0, r = q; j < f->d; j++, r /= 3)
			for (int w = 0; w < r % 3; w++)
				term = kb_bin(kb, KO_MUL, term, kb_get(kb, j));
		sum = sum ? kb_bin(kb, KO_ADD, sum, term) : term;
	}
	return sum ? sum : kb_idx(kb, 0);
}

static int
is_stmt(int kind)
{
	return kind >= KS_FOR && kind <= KS_BARRIER;
}

/*
 * Kernel k (the first sample's) with the dims as its parameters: variables
 * shift up by d, constants with a fit (cp[i], NULL: fixed) become its
 * expression and buffers with one (bp[i]) get it as their extent.  The pool
 * is copied in index order, expressions before statements, as dynamic.c's
 * peel_kernel does, so that operands precede their users.
 */
static int
rewrite_kernel(Ctx *c, Arena *a, KKernel *k, const Fit *f, Poly **cp,
               Poly **bp)
{
	int n0 = k->nnode, d = f->d;
	KRef *map = calloc((size_t)n0 + 1, sizeof *map);
	KVar *nv = arena_alloc(a, sizeof *nv * ((size_t)k->nvar + (size_t)d + 1));

	if (!map || !nv) {
		free(map);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	for (int j = 0; j < d; j++) {
		nv[j].dtype = DT_I64;
		nv[j].name = f->name[j];
	}
	if (k->nvar)
		memcpy(nv + d, k->var, sizeof *nv * (size_t)k->nvar);
	k->var = nv;
	k->nvar += d;
	k->capvar = k->nvar + 1;
	k->ndim = d;
	for (int i = 1; i < n0; i++) {
		KNode *n = &k->node[i];
		if (n->kind == KE_VAR || n->kind == KS_FOR || n->kind == KS_SET)
			n->var += d;
	}
	for (int i = 0; i < k->nbuf; i++) {
		if (!bp[i])
			continue;
		if (!(k->buf[i].ext = push_poly(a, k, f, bp[i])))
			goto nomem;
		k->buf[i].count = 0;
	}
	for (int pass = 0; pass < 2; pass++)   /* expressions, then statements */
	for (int i = 1; i < n0; i++) {
		KNode n = k->node[i];
		if (n.kind == KN_NONE || is_stmt(n.kind) != pass)
			continue;
		if (cp[i]) {
			KRef e = push_poly(a, k, f, cp[i]);
			if (e && n.dtype != DT_I64) {
				KNode cv;
				memset(&cv, 0, sizeof cv);
				cv.kind = KE_CAST;
				cv.dtype = n.dtype;
				cv.lanes = 1;
				cv.a = e;
				e = kir_push(a, k, &cv);
			}
			if (e && cp[i]->form == PF_RECIP) {   /* 1 / count */
				KNode one, dv;
				memset(&one, 0, sizeof one);
				one.kind = KE_CONST;
				one.dtype = n.dtype;
				one.lanes = 1;
				one.fval = 1.0;
				memset(&dv, 0, sizeof dv);
				dv.kind = KE_BIN;
				dv.op = KO_DIV;
				dv.dtype = n.dtype;
				dv.lanes = 1;
				dv.b = e;
				e = (dv.a = kir_push(a, k, &one)) ? kir_push(a, k, &dv) : 0;
			}
			if (!(map[i] = e))
				goto nomem;
			continue;
		}
		if (n.a > 0 && n.a < n0)
			n.a = map[n.a];
		if (n.b > 0 && n.b < n0 && !(is_stmt(n.kind) && n.kind != KS_STORE &&
		                               n.kind != KS_FOR))
			n.b = map[n.b];
		if (n.c > 0 && n.c < n0 && !is_stmt(n.kind))
			n.c = map[n.c];
		if (!(map[i] = kir_push(a, k, &n)))
			goto nomem;
	}
	kir_relink(k, map, n0);
	k->body = k->body > 0 && k->body < n0 ? map[k->body] : 0;
	free(map);
	return kir_verify(c, k);
nomem:
	free(map);
	return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
}

/* Value v of the first sample, whose shape follows the dims (ext[a]: the
 * fit of axis a, NULL where fixed; num: the fit of its element count),
 * gets symbolic dims: an input or output axis by axis, each one dim
 * exactly; a value inside the program as the monomial num is. */
static int
value_symbolic(Ctx *c, Graph *g, int v, const Fit *f, Poly *const *ax,
               const Poly *num)
{
	Value *val = GV(g, v);
	int io = val->kind == VK_INPUT || val->is_output, e[DF_MAX_DIMS], r = 0;
	int64_t k = 0;

	if (io) {
		for (int a = 0; a < val->rank; a++) {
			int found = -1;
			if (!ax[a])
				continue;
			for (int j = 0; j < f->ngrid; j++) {
				int ones = 0, r3 = j, jj = -1;
				if (!ax[a]->c[j])
					continue;
				for (int q = 0; q < f->d; q++, r3 /= 3)
					if (r3 % 3)
						ones += r3 % 3, jj = q;
				if (found >= 0 || ax[a]->c[j] != 1 || ones != 1) {
					found = -2;
					break;
				}
				found = jj;
			}
			if (found < 0)
				return burn_fail(c, BURN_ERR_UNSUPPORTED, "--dynamic-dim: "
				                 "%s '%s': axis %d is not one of the dims but "
				                 "a product or sum of them; static shapes are "
				                 "needed (--dim)", val->kind == VK_INPUT ?
				                 "input" : "output", val->name, a);
			val->dim[a] = -1;
			val->sym[a] = f->name[found];
		}
		return BURN_OK;
	}
	if (!poly_monomial(f, num, &k, e) || k <= 0)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "--dynamic-dim: value '%s' "
		                 "has a size that is no product of the dims (a sum: "
		                 "Concat or Pad along a run-time axis); static shapes "
		                 "are needed (--dim)", val->name);
	for (int j = 0; j < f->d; j++)
		for (int q = 0; q < e[j]; q++) {
			if (r == BURN_MAX_RANK - 1)
				return burn_fail(c, BURN_ERR_LIMIT, "value '%s': rank",
				                 val->name);
			val->dim[r] = -1;
			val->sym[r++] = f->name[j];
		}
	val->dim[r] = k;
	val->sym[r++] = NULL;
	val->rank = r;
	return BURN_OK;
}

/* The value's element e as an integer at sample t; 0 when it is not an
 * integer (a float that is not integral). */
static int
elem_int(const Value *v, int64_t e, int64_t *out)
{
	if (v->dtype == DT_I64 || v->dtype == DT_I32) {
		*out = value_get_i(v, e);
		return 1;
	}
	if (v->dtype == DT_F32 || v->dtype == DT_F64) {
		double d = value_get_f(v, e);
		*out = (int64_t)d;
		return fabs(d) < 1e15 && (double)*out == d;
	}
	return 0;
}

/*
 * Constant v of the first sample, whose values differ between the samples
 * (a Shape or Size of a value with the dims, or a count made of them,
 * folded), becomes a value a kernel computes: each element fitted, as
 * kernel constants are, and stored by a kernel put first in the program,
 * so that it runs before any reader.  Refused, by name, where an element
 * is no such polynomial (or the type is not i64, i32 or an integral
 * float).
 */
static int
shape_kernel(Ctx *c, Compiled **s, const Fit *f, int v, const char *const *dyn)
{
	Compiled *m = s[0];
	Value *val = GV(m->g, v);
	int64_t n = value_numel(val), y[DF_NSAMP];
	KB kb;
	KKernel *k;
	Poly p;
	int buf;

	if (n < 0 || n > 64)
		goto refuse;
	kb_begin(&kb, &m->prog, "dims", "Shape");
	for (int j = 0; j < f->d; j++)
		kb_dim(&kb, dyn[j]);
	buf = kb_buf(&kb, val->dtype, n, v, KS_GLOBAL, KA_WRITE);
	for (int64_t e = 0; e < n; e++) {
		KRef sum = 0;
		for (int t = 0; t < f->nsamp; t++)
			if (!elem_int(GV(s[t]->g, v), e, &y[t]))
				goto refuse_open;
		if (!poly_fit(f, y, &p))
			goto refuse_open;
		sum = poly_kb(&kb, f, &p);
		kb_store(&kb, buf, kb_idx(&kb, e), val->dtype == DT_I64 ? sum
		         : kb_cast(&kb, val->dtype, sum));
	}
	if (!(k = kb_finish(&kb)))
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	return put_first(c, m, k, val);
refuse_open:
	kb_finish(&kb);   /* an unreferenced kernel: dropped below */
	m->prog.nkernel--;
refuse:
	return burn_fail(c, BURN_ERR_UNSUPPORTED, "--dynamic-dim %s: constant '%s' "
	                 "holds values that follow the dims but are not counts "
	                 "made of them (a Shape or Size folded into data a kernel "
	                 "reads); static shapes are needed (--dim)", dyn[0],
	                 val->name);
}

/*
 * Constant v of the first sample, whose shape follows the dims (a
 * ConstantOfShape of a Shape, folded): where every element of every sample
 * is one value, a kernel put first in the program fills it at run time
 * (its size the fit of its element count); else refused by name.
 */
static int
fill_kernel(Ctx *c, Compiled **s, const Fit *f, int v, const char *const *dyn)
{
	Compiled *m = s[0];
	Value *val = GV(m->g, v);
	int64_t y[DF_NSAMP];
	double x0 = 0;
	KB kb;
	KKernel *k;
	KRef n, i, cst;
	Poly p;
	int buf;

	if (!dtype_is_float(val->dtype) && !is_int_dtype(val->dtype))
		goto refuse;
	for (int t = 0; t < f->nsamp; t++) {
		const Value *w = GV(s[t]->g, v);
		int64_t ne = value_numel(w);
		if (!w->data || ne < 0)
			goto refuse;
		for (int64_t e = 0; e < ne; e++) {
			double d = value_get_f(w, e);
			if (t == 0 && e == 0)
				x0 = d;
			if (!(d == x0))
				goto refuse;
		}
		y[t] = ne;
	}
	if (!poly_fit(f, y, &p))
		goto refuse;
	kb_begin(&kb, &m->prog, "fill", "ConstantOfShape");
	for (int j = 0; j < f->d; j++)
		kb_dim(&kb, dyn[j]);
	n = poly_kb(&kb, f, &p);
	buf = kb_buf(&kb, val->dtype, 1, v, KS_GLOBAL, KA_WRITE);
	kb.k->buf[buf].ext = n;
	kb.k->buf[buf].count = 0;
	cst = dtype_is_float(val->dtype) ? kb_const_f(&kb, val->dtype, x0)
	                                 : kb_const_i(&kb, val->dtype, (int64_t)x0);
	i = kb_get(&kb, kb_for(&kb, "i", kb_idx(&kb, 0), n, KF_PARALLEL));
	kb_store(&kb, buf, i, cst);
	kb_end(&kb);
	if (!(k = kb_finish(&kb)))
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	return put_first(c, m, k, val);
refuse:
	return burn_fail(c, BURN_ERR_UNSUPPORTED, "--dynamic-dim %s: constant '%s' "
	                 "has a shape that follows the dims and is no fill of one "
	                 "value; static shapes are needed (--dim)", dyn[0],
	                 val->name);
}

/* Float constant j of kernel i, which differs between the samples s:
 * 1 and *p when it is a count (integral at every sample: PF_FLOAT) or the
 * reciprocal of one (PF_RECIP), each count the polynomial p. */
static int
float_fit(const Fit *f, Compiled *const *s, int i, int j, Poly *p)
{
	int64_t y[DF_NSAMP];

	for (int form = PF_FLOAT; form <= PF_RECIP; form++) {
		int ok = 1;
		for (int t = 0; t < f->nsamp && ok; t++) {
			double v = s[t]->prog.kernel[i]->node[j].fval, r;
			if (form == PF_RECIP)
				v = v != 0 ? 1 / v : 0;
			r = nearbyint(v);
			ok = fabs(r) > 0 && fabs(r) < 1e9 && fabs(v - r) <= 1e-5 * fabs(r);
			y[t] = (int64_t)r;
		}
		if (ok && poly_fit(f, y, p)) {
			p->form = form;
			return 1;
		}
	}
	return 0;
}

/*
 * Whether kernel i of the samples s (which agree on the graph and the
 * number of kernels) is one kernel but for sizes: the same nodes, buffers
 * and loops at every point, and each integer constant or buffer size that
 * differs a polynomial of the dims.  What fit_program requires of a
 * kernel's structure, asked before it to find the kernels whose schedule
 * chose by size (see dyn_fit_compile).
 */
static int
kernel_fits(Compiled *const *s, const Fit *f, int i)
{
	const KKernel *k = s[0]->prog.kernel[i];
	int64_t y[DF_NSAMP];
	Poly p;

	for (int t = 1; t < f->nsamp; t++) {
		const KKernel *l = s[t]->prog.kernel[i];
		if (k->nnode != l->nnode || k->nbuf != l->nbuf || k->nvar != l->nvar ||
		    k->body != l->body || strcmp(k->name, l->name))
			return 0;
		for (int j = 1; j < k->nnode; j++)
			if (!same_node(&k->node[j], &l->node[j]))
				return 0;
		for (int j = 0; j < k->nbuf; j++)
			if (k->buf[j].dtype != l->buf[j].dtype ||
			    k->buf[j].value != l->buf[j].value ||
			    k->buf[j].space != l->buf[j].space)
				return 0;
	}
	for (int j = 1; j < k->nnode; j++) {
		int vary = 0;
		if (k->node[j].kind != KE_CONST || !is_int_dtype(k->node[j].dtype))
			continue;
		for (int t = 0; t < f->nsamp; t++)
			vary |= (y[t] = s[t]->prog.kernel[i]->node[j].ival) != k->node[j].ival;
		if (vary && !poly_fit(f, y, &p))
			return 0;
	}
	for (int j = 0; j < k->nbuf; j++) {
		int vary = 0;
		for (int t = 0; t < f->nsamp; t++)
			vary |= (y[t] = s[t]->prog.kernel[i]->buf[j].count) != k->buf[j].count;
		if (vary && (k->buf[j].space != KS_GLOBAL || !poly_fit(f, y, &p)))
			return 0;
	}
	return 1;
}

/*
 * The fit proper: s[0..f->nsamp) compiled at f's points; s[0] becomes the
 * program for every value of the dims, or the reason it cannot.
 */
static int
fit_program(Ctx *c, Compiled **s, const Fit *f, const char *const *dyn,
            Poly **size)
{
	Compiled *m = s[0];
	Graph *g = m->g;
	KProgram *p = &m->prog;
	int ns = f->nsamp, rc = BURN_OK;
	int64_t y[DF_NSAMP];
	unsigned char *used = NULL;
	Poly **cp = NULL, **bp = NULL, *num = NULL, **ax = NULL;
	Arena *a = p->arena;

	/* the same graph and program at every point, but for sizes */
	for (int t = 1; t < ns; t++) {
		const Graph *h = s[t]->g;
		const KProgram *q = &s[t]->prog;
		if (h->nval != g->nval || h->nnode != g->nnode)
			return differ(c, "the graph after simplification", NULL, dyn);
		if (q->nkernel != p->nkernel)
			return differ(c, "the number of kernels", NULL, dyn);
		if (q->nalias != p->nalias || (p->nalias && memcmp(q->alias, p->alias,
		                                 sizeof *p->alias * (size_t)p->nalias)))
			return differ(c, "the storage of reshaped values", NULL, dyn);
		for (int i = 0; i < p->nkernel; i++) {
			const KKernel *k = p->kernel[i], *l = q->kernel[i];
			if (k->call || l->call || k->ndim || l->ndim)
				return burn_fail(c, BURN_ERR_UNSUPPORTED, "--dynamic-dim: "
				                 "kernel %s (%s) is a runtime call; static "
				                 "shapes are needed (--dim)", k->name, k->ops);
			if (k->nnode != l->nnode || k->nbuf != l->nbuf ||
			    k->nvar != l->nvar || k->body != l->body)
				return differ(c, "kernel", k->name, dyn);
			for (int j = 1; j < k->nnode; j++)
				if (!same_node(&k->node[j], &l->node[j]))
					return differ(c, "kernel", k->name, dyn);
			for (int j = 0; j < k->nbuf; j++)
				if (k->buf[j].dtype != l->buf[j].dtype ||
				    k->buf[j].value != l->buf[j].value ||
				    k->buf[j].space != l->buf[j].space || k->buf[j].ext ||
				    l->buf[j].ext)
					return differ(c, "a buffer of kernel", k->name, dyn);
		}
	}
	/* the values the kernels read or the run returns */
	if (!(used = calloc((size_t)g->nval + 1, 1)))
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	for (int i = 0; i < p->nkernel; i++)
		for (int j = 0; j < p->kernel[i]->nbuf; j++)
			if (p->kernel[i]->buf[j].value >= 0)
				used[kprog_storage(p, p->kernel[i]->buf[j].value)] = 1;
	for (int i = 0; i < g->nout; i++)
		used[kprog_storage(p, g->out[i])] = 1;
	/* the kernels: constants and buffer sizes */
	for (int i = 0; i < p->nkernel && !rc; i++) {
		KKernel *k = p->kernel[i];
		int any = 0;
		cp = calloc((size_t)k->nnode + 1, sizeof *cp);
		bp = calloc((size_t)k->nbuf + 1, sizeof *bp);
		if (!cp || !bp) {
			rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
			break;
		}
		for (int j = 1; j < k->nnode && !rc; j++) {
			const KNode *n = &k->node[j];
			int vary = 0;
			if (n->kind != KE_CONST)
				continue;
			for (int t = 0; t < ns; t++) {
				const KNode *m2 = &s[t]->prog.kernel[i]->node[j];
				y[t] = m2->ival;
				vary |= m2->ival != n->ival || !(m2->fval == n->fval ||
				        (isnan(m2->fval) && isnan(n->fval)));
			}
			if (!vary)
				continue;
			if ((n->dtype == DT_F32 || n->dtype == DT_F64) && n->lanes == 1 &&
			    (cp[j] = arena_alloc(a, sizeof *cp[j])) != NULL &&
			    float_fit(f, s, i, j, cp[j])) {
				any = 1;
				continue;
			}
			if (!is_int_dtype(n->dtype) || n->lanes != 1) {
				rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "--dynamic-dim %s: "
				               "kernel %s (%s) has a %s constant that follows "
				               "the dims (a mean or scale over a run-time "
				               "axis, or a folded Shape); static shapes are "
				               "needed (--dim)", dyn[0], k->name, k->ops,
				               is_int_dtype(n->dtype) ? "vector" : "float");
				break;
			}
			if (!(cp[j] = arena_alloc(a, sizeof *cp[j])) ||
			    !poly_fit(f, y, cp[j])) {
				rc = differ(c, "an index of kernel", k->name, dyn);
				break;
			}
			cp[j]->form = PF_INT;
			any = 1;
		}
		for (int j = 0; j < k->nbuf && !rc; j++) {
			int vary = 0;
			for (int t = 0; t < ns; t++) {
				y[t] = s[t]->prog.kernel[i]->buf[j].count;
				vary |= y[t] != y[0];
			}
			if (!vary)
				continue;
			if (k->buf[j].space != KS_GLOBAL) {
				rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "--dynamic-dim %s: "
				               "kernel %s (%s) has a local buffer sized by "
				               "the dims; static shapes are needed (--dim)",
				               dyn[0], k->name, k->ops);
				break;
			}
			if (!(bp[j] = arena_alloc(a, sizeof *bp[j])) ||
			    !poly_fit(f, y, bp[j])) {
				rc = differ(c, "a buffer of kernel", k->name, dyn);
				break;
			}
			any = 1;
		}
		if (!rc && any)
			rc = rewrite_kernel(c, a, k, f, cp, bp);
		free(cp);
		free(bp);
		cp = bp = NULL;
	}
	/* the values: constants that a kernel reads must not follow the dims;
	 * shapes that do become symbolic */
	num = malloc(sizeof *num);
	ax = calloc(BURN_MAX_RANK, sizeof *ax);
	if (!rc && (!num || !ax))
		rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	for (int v = 0; v < g->nval && !rc; v++) {
		Value *val = GV(g, v);
		int vary = 0, runtime = 0;
		/* values no kernel reads or writes and the run does not take or
		 * return (folded, aliased away) keep the first sample's shape */
		if (val->rank < 0 || !(used[kprog_storage(p, v)] ||
		                       val->kind == VK_INPUT || val->is_output))
			continue;
		/* its element count, for the probes below the samples */
		if (value_numel(val) >= 0 && (size[v] = arena_alloc(a, sizeof *size[v]))) {
			memset(size[v], 0, sizeof *size[v]);
			size[v]->c[0] = value_numel(val);
		}
		for (int t = 1; t < ns && !rc; t++) {
			const Value *w = GV(s[t]->g, v);
			if (w->rank != val->rank || w->dtype != val->dtype) {
				rc = differ(c, "the type of value", val->name, dyn);
				break;
			}
			for (int d = 0; d < val->rank; d++)
				vary |= w->dim[d] != val->dim[d];
			if (used[v] && val->data && !vary && !runtime &&
			    (!w->data || memcmp(w->data, val->data,
			                        (size_t)value_nbytes(val))))
				runtime = 1;
		}
		/* a constant that holds the dims (a Shape or Size folded) is
		 * computed at run time instead */
		if (!rc && runtime)
			rc = shape_kernel(c, s, f, v, dyn);
		if (rc || !vary)
			continue;
		if (val->data && used[v] && (rc = fill_kernel(c, s, f, v, dyn)))
			break;
		for (int d = 0; d < val->rank && !rc; d++) {
			int vd = 0;
			for (int t = 0; t < ns; t++)
				vd |= (y[t] = GV(s[t]->g, v)->dim[d]) != val->dim[d];
			ax[d] = NULL;
			if (!vd)
				continue;
			if (!(ax[d] = arena_alloc(a, sizeof *ax[d])) ||
			    !poly_fit(f, y, ax[d]))
				rc = differ(c, "the shape of value", val->name, dyn);
		}
		for (int t = 0; t < ns && !rc; t++)
			y[t] = value_numel(GV(s[t]->g, v));
		if (!rc && !poly_fit(f, y, num))
			rc = differ(c, "the size of value", val->name, dyn);
		if (!rc && size[v])
			*size[v] = *num;
		if (!rc)
			rc = value_symbolic(c, g, v, f, ax, num);
	}
	free(num);
	free(ax);
	free(used);
	return rc;
}

/* A named value, for name_index. */
typedef struct Named {
	const char *name;
	int v;
} Named;

static int
by_name(const void *x, const void *y)
{
	return strcmp(((const Named *)x)->name, ((const Named *)y)->name);
}

/* The named values of g sorted by name (*n of them, malloc'd), with the
 * names more than one value has (unrolled Scan bodies) left out. */
static Named *
name_index(const Graph *g, int *n)
{
	Named *ix = malloc(sizeof *ix * ((size_t)g->nval + 1));
	int m = 0, k = 0;

	*n = 0;
	if (!ix)
		return NULL;
	for (int v = 0; v < g->nval; v++)
		if (GV(g, v)->name) {
			ix[m].name = GV(g, v)->name;
			ix[m++].v = v;
		}
	qsort(ix, (size_t)m, sizeof *ix, by_name);
	for (int i = 0; i < m; i++)
		if (!((i > 0 && !strcmp(ix[i].name, ix[i - 1].name)) ||
		      (i + 1 < m && !strcmp(ix[i].name, ix[i + 1].name))))
			ix[k++] = ix[i];
	*n = k;
	return ix;
}

/* The value named name in ix (name_index's, n of them), or -1. */
static int
find_name(const Named *ix, int n, const char *name)
{
	Named key = { name, -1 };
	const Named *hit = bsearch(&key, ix, (size_t)n, sizeof *ix, by_name);

	return hit ? hit->v : -1;
}

/*
 * The smallest value of each dim the fit holds at (min[j]): below the
 * samples, dim j alone is lowered (the others at their first sample) down
 * from its first sample until a value's element count differs from its fit
 * (a Slice or Gather clamped by the dim: [0:3] of a dim of 2 has 2
 * elements, not 3) or the graph does not compile there; the values above
 * that are where the program is right, and the run refuses the others.
 */
static int
probe_min(Ctx *c, const Graph *src, Compiled *m, const CompileOpts *o,
          const Fit *f, Poly *const *size, Front front, const Target *tt,
          int64_t *min)
{
	int mn, tn = 0;
	Named *tix = NULL, *mix = name_index(m->g, &mn);

	if (!mix)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	for (int j = 0; j < f->d; j++) {
		int64_t x[DF_MAX_DIMS];
		min[j] = 0;
		memcpy(x, f->x[0], sizeof x);
		for (x[j] = f->x[0][j] - 1; x[j] >= 0; x[j]--) {
			Compiled t;
			int rc, bad = 0;
			memset(&t, 0, sizeof t);
			t.target = tt;
			arena_init(&t.arena);
			kprog_init(&t.prog, &t.arena);
			rc = lower_sample(c, src, &t, o, x, front, 0);
			if (!rc && !(tix = name_index(t.g, &tn)))
				rc = BURN_ERR_NOMEM;
			for (int i = 0; !rc && !bad && i < mn; i++) {
				int v = mix[i].v;
				int64_t want, k;
				if (!size[v] || (k = find_name(tix, tn, mix[i].name)) < 0 ||
				    value_numel(GV(t.g, k)) < 0)
					continue;
				bad = !poly_eval(f, size[v], x, &want) ||
				      want != value_numel(GV(t.g, k));
			}
			free(tix);
			tix = NULL;
			graph_destroy(t.g);
			arena_free(&t.arena);
			if (rc) {   /* not compiling there is no error of the fit */
				if (rc == BURN_ERR_NOMEM) {
					free(mix);
					return burn_fail(c, rc, "out of memory");
				}
				c->code = BURN_OK;
				c->msg[0] = 0;
			}
			if (rc || bad) {
				min[j] = x[j] + 1;
				break;
			}
		}
	}
	free(mix);
	return BURN_OK;
}

/* Sample x back to before lowering (m or a copy: no graph, an empty
 * program). */
static void
sample_reset(Compiled *x)
{
	graph_destroy(x->g);
	x->g = NULL;
	arena_free(&x->arena);
	arena_init(&x->arena);
	kprog_init(&x->prog, &x->arena);
}

/*
 * After a first compile of the samples s (s[0] is m) with column tiles:
 * the kernels that do not fit (kernel_fits) because their tile chose by
 * a run-time size (a product whose columns are a run-time dim: Q @ K^T's
 * seq) are asked for the axpy step (a want, as --schedule would give:
 * MatMul's row form, no tile; tile(1,1) in the GEMM lowerings without
 * one), and *again is set: then every sample is reset, with those wants
 * (in m's arena, after the caller's own, which stay as given), to be
 * compiled again.  Nothing to do (*again 0) where every kernel fits, where
 * the samples differ beyond single kernels (fit_program names it), or
 * where no kernel that does not fit has a tile to shrink.
 */
static int
tile_fallback(Ctx *c, Compiled **s, const Fit *f, int *again)
{
	Compiled *m = s[0];
	const KWant *uw = m->prog.want;
	int nu = m->prog.nwant, nbad = 0, nw = 0;
	char **bad = NULL;
	KWant *want;
	KStep one = kstep_make(KST_AXPY, 0, 0, 0, 0);

	*again = 0;
	for (int t = 1; t < f->nsamp; t++)
		if (s[t]->prog.nkernel != m->prog.nkernel || s[t]->g->nval != m->g->nval ||
		    s[t]->g->nnode != m->g->nnode)
			return BURN_OK;
	for (int i = 0; i < m->prog.nkernel; i++) {
		const KKernel *k = m->prog.kernel[i];
		const KStep *tile = kkernel_step(k, KST_TILE, 0);
		int asked = 0;
		if (!tile || (tile->arg[0] <= 1 && tile->arg[1] <= 1) || kernel_fits(s, f, i))
			continue;
		for (int w = 0; w < nu; w++)
			asked |= !strcmp(uw[w].kernel, k->name);
		if (asked)   /* the caller's tile stays, and is refused if it
		              * chose by size */
			continue;
		if (!bad && !(bad = calloc((size_t)m->prog.nkernel, sizeof *bad)))
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		if (!(bad[nbad++] = strdup(k->name)))
			goto nomem;
	}
	if (!nbad)
		return BURN_OK;
	for (int t = 0; t < f->nsamp; t++)
		sample_reset(s[t]);
	if (!(want = arena_alloc(&m->arena, sizeof *want * (size_t)(nu + nbad + 1))))
		goto nomem;
	for (int w = 0; w < nu; w++)
		want[nw++] = uw[w];
	for (int i = 0; i < nbad; i++) {
		memset(&want[nw], 0, sizeof want[nw]);
		if (!(want[nw].kernel = arena_strdup(&m->arena, bad[i])) ||
		    !ksteps_put(&want[nw].steps, &one))
			goto nomem;
		nw++;
	}
	for (int t = 0; t < f->nsamp; t++) {
		s[t]->prog.want = want;
		s[t]->prog.nwant = nw;
	}
	for (int i = 0; i < nbad; i++)
		free(bad[i]);
	free(bad);
	*again = 1;
	return BURN_OK;
nomem:
	for (int i = 0; i < nbad; i++)
		free(bad[i]);
	free(bad);
	return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
}

int
dyn_fit_compile(Ctx *c, Compiled *m, const CompileOpts *o, Front front)
{
	Compiled *s[DF_NSAMP];
	Graph *src = m->g;
	Poly **size = NULL;
	const Target *real;
	Target tt;
	Fit f;
	int rc = BURN_OK;

	if (o->ndyn > DF_MAX_DIMS)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "--dynamic-dim: %d dims; at "
		                 "most %d can be dynamic", o->ndyn, DF_MAX_DIMS);
	for (int j = 0; j < o->ndyn; j++) {
		int found = 0;
		for (int i = 0; i < src->nin && !found; i++)
			for (int d = 0; d < GV(src, src->in[i])->rank; d++)
				found |= GV(src, src->in[i])->sym[d] &&
				         !strcmp(GV(src, src->in[i])->sym[d], o->dyn[j]);
		for (int i = 0; i < o->nbind; i++)
			if (!strcmp(o->bind[i].name, o->dyn[j]))
				return burn_fail(c, BURN_ERR_INVALID, "dim '%s' given both a "
				                 "value (--dim) and --dynamic-dim", o->dyn[j]);
		for (int i = 0; i < j; i++)
			if (!strcmp(o->dyn[i], o->dyn[j]))
				return burn_fail(c, BURN_ERR_INVALID, "--dynamic-dim %s given "
				                 "twice", o->dyn[j]);
		if (!found)
			return burn_fail(c, BURN_ERR_INVALID, "--dynamic-dim %s: no input "
			                 "of the model has a symbolic dim of that name",
			                 o->dyn[j]);
	}
	fit_init(&f, o->ndyn, o->dyn);
	/* the lowerings' choices by size made the same at every size: a
	 * GEMM's register tile one row high (its M rows, run-time ones in
	 * the products of a transformer, in a plain loop: the M % MR rest
	 * rows of taller tiles are no polynomial in M), the target's column
	 * tile (the weights' static columns; where the columns are a run-time
	 * dim, tile_fallback asks one-element tiles: the last tile of N % 32
	 * columns is no polynomial in N either), rows not in blocks, no
	 * unrolled lanes */
	tt = *m->target;
	tt.tune.gemm_mr = 1;
	tt.tune.gemm_mc = 0;
	tt.tune.gemm_pack_tiles = 0;
	tt.tune.dot_lanes = tt.tune.conv_unroll = 1;
	tt.tune.vec_lanes_narrow = tt.tune.vec_lanes;
	tt.tune.size_free = 1;
	/* every float sum in f64 (tune.sum_f64_min 1): the f32 sums below
	 * 4096 elements and f64 above were a choice by a run-time count */
	tt.tune.sum_f64_min = 1;
	tt.tune.thread_slots = 1;
	tt.tune.im2col = 0;
	real = m->target;
	m->target = &tt;
	/* s[0] is m itself: its graph the first copy, its arena and program */
	memset(s, 0, sizeof s);
	s[0] = m;
	m->g = NULL;
	for (int t = 1; t < f.nsamp; t++) {
		if (!(s[t] = calloc(1, sizeof *s[t]))) {
			rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
			break;
		}
		s[t]->target = &tt;
		arena_init(&s[t]->arena);
		kprog_init(&s[t]->prog, &s[t]->arena);
		s[t]->prog.want = m->prog.want;
		s[t]->prog.nwant = m->prog.nwant;
	}
	/* compiled twice where a kernel's tile chose by size: then with
	 * one-element tiles for it (tile_fallback) */
	for (int round = 0; round < 2 && !rc; round++) {
		int again = 0;
		for (int t = 0; t < f.nsamp && !rc; t++)
			rc = lower_sample(c, src, s[t], o, f.x[t], front, 1);
		if (rc || round == 1 || (rc = tile_fallback(c, s, &f, &again)) || !again)
			break;
	}
	if (!rc) {   /* the values' sizes, per value of the first sample */
		size = arena_alloc(&m->arena, sizeof *size * ((size_t)m->g->nval + 1));
		memset(size, 0, sizeof *size * ((size_t)m->g->nval + 1));
		rc = fit_program(c, s, &f, o->dyn, size);
	}
	if (!rc)
		rc = probe_min(c, src, m, o, &f, size, front, &tt, m->dyn_min);
	for (int t = 1; t < f.nsamp; t++)
		burn_compiled_destroy(s[t]);
	m->target = real;
	if (!m->g) {   /* keep the source for the caller to destroy */
		m->g = src;
		return rc;
	}
	graph_destroy(src);
	return rc;
}

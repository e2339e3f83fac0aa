/*
 * check_random.c - `burncc check`'s rules for outputs that depend on
 * random draws (check_random.h says which and why).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "passes/passes.h"
#include "passes/rng.h"
#include "tools/check_random.h"

#define NSE 4.0   /* standard errors a statistic may stray */

/* Does value v depend on a node that draws?  memo: -1 unknown, 0, 1. */
static int tainted(const Graph *g, int v, signed char *memo, int depth)
{
	const Value *x = GV(g, v);
	const Node *n;
	int t = 0;

	if (memo[v] >= 0)
		return memo[v];
	if (x->producer < 0 || depth > 10000)
		return memo[v] = 0;
	n = &g->node[x->producer];
	if (random_node_draws(g, n))
		t = 1;
	for (int k = 0; !t && k < n->nin; k++)
		if (n->in[k] >= 0)
			t = tainted(g, n->in[k], memo, depth + 1);
	return memo[v] = (signed char)t;
}

int check_random_scan(const Graph *g, Arena *a, RandOut *ro)
{
	signed char *memo = arena_alloc(a, (size_t)g->nval + 1);
	int any = 0;

	if (!memo)
		return -1;
	memset(memo, -1, (size_t)g->nval + 1);
	for (int i = 0; i < g->nout; i++) {
		RandOut *r = &ro[i];
		const Value *v = GV(g, g->out[i]);
		const Node *n;

		memset(r, 0, sizeof *r);
		r->in_pos[0] = r->in_pos[1] = r->in_pos[2] = -1;
		r->out_pos[0] = r->out_pos[1] = -1;
		if (!(r->tainted = tainted(g, g->out[i], memo, 0)))
			continue;
		any = 1;
		if (v->producer < 0)
			continue;
		n = &g->node[v->producer];
		if (!(op_table[n->op].flags & OF_RANDOM))
			continue;
		r->op = n->op;
		for (int k = 0; k < n->nout && k < 2; k++) {
			if (n->out[k] == g->out[i])
				r->k = k;
			for (int j = 0; j < g->nout; j++)
				if (n->out[k] >= 0 && g->out[j] == n->out[k])
					r->out_pos[k] = j;
		}
		for (int k = 0; k < n->nin && k < 3; k++) {
			const Value *x = NIN(g, n, k);
			if (!x)
				continue;
			for (int j = 0; j < g->nin; j++)
				if (g->in[j] == n->in[k])
					r->in_pos[k] = j;
			if (r->in_pos[k] < 0 && x->data) {
				Tensor *t = &r->in_const[k];
				t->dtype = x->dtype;
				t->rank = x->rank;
				memcpy(t->dim, x->dim, sizeof t->dim);
				t->nbytes = value_nbytes(x);
				if (!(t->data = arena_alloc(a, (size_t)t->nbytes + 1)))
					return -1;
				memcpy(t->data, x->data, (size_t)t->nbytes);
			}
		}
		if (n->op == OP_RandomNormal || n->op == OP_RandomNormalLike) {
			r->attr[0] = attr_float(n, "mean", 0);
			r->attr[1] = attr_float(n, "scale", 1);
		} else {
			r->attr[0] = attr_float(n, "low", 0);
			r->attr[1] = attr_float(n, "high", 1);
		}
	}
	return any;
}

/* Input k of the node: the data set's, a constant, or NULL. */
static const Tensor *node_in(const RandOut *r, int k, const Tensor *in)
{
	if (r->in_pos[k] >= 0)
		return &in[r->in_pos[k]];
	return r->in_const[k].data ? &r->in_const[k] : NULL;
}

static int64_t numel_of(const Tensor *t)
{
	int64_t m = 1;
	for (int i = 0; i < t->rank; i++)
		m *= t->dim[i];
	return m;
}

/* |got - want| within check's float tolerance (tools/check.c's RTOL/ATOL
 * for f32 and f64: 1e-3 relative and absolute, a little over) */
static int near(double got, double want)
{
	return got == want || fabs(got - want) <= 1e-6 + 1e-4 * fabs(want);
}

static int fail(char *why, size_t n, const char *name, const char *fmt, double a,
                double b, double c)
{
	char m[300];
	snprintf(m, sizeof m, fmt, a, b, c);
	snprintf(why, n, "output '%s' (random draws): %s", name, m);
	return 1;
}

/* Dropout: -1 to compare by value (not training, or ratio 0). */
static int dropout_rule(const RandOut *r, int i, const Graph *mg,
                        const void *const *outs, const Tensor *in, char *why,
                        size_t n)
{
	const Tensor *x = node_in(r, 0, in), *rt = node_in(r, 1, in), *tt = node_in(r, 2, in);
	double ratio = rt ? check_elem_f(rt->data, rt->dtype, 0) : 0.5;
	int64_t m, nz = 0, kept = 0;
	const void *y, *mask;
	const char *name = GV(mg, mg->out[i])->name;

	if (!tt || !((const unsigned char *)tt->data)[0] || ratio == 0)
		return -1;
	if (!x || r->out_pos[0] < 0)
		return fail(why, n, name, "Dropout's input is not a graph input or "
		            "constant%.0s%.0s%.0s", 0, 0, 0);
	m = numel_of(x);
	y = outs[r->out_pos[0]];
	mask = r->out_pos[1] >= 0 ? outs[r->out_pos[1]] : NULL;
	for (int64_t j = 0; j < m; j++) {
		double xv = check_elem_f(x->data, x->dtype, j);
		double yv = check_elem_f(y, GV(mg, mg->out[r->out_pos[0]])->dtype, j);
		double s = xv / (1 - ratio);
		int k = mask ? ((const unsigned char *)mask)[j] != 0 : yv != 0 || xv == 0;
		if (k ? !near(yv, s) : yv != 0)
			return fail(why, n, name, "element %.0f is %.9g with mask %.0f, "
			            "not 0 or x / (1 - ratio)", (double)j, yv, k);
		if (xv != 0 || mask) {
			nz++;
			kept += k;
		}
	}
	{
		double mu = (double)nz * (1 - ratio), sd = sqrt((double)nz * ratio * (1 - ratio));
		if (fabs((double)kept - mu) > NSE * sd + 1)
			return fail(why, n, name, "%.0f of %.0f kept, expected about %.1f",
			            (double)kept, (double)nz, mu);
	}
	return 0;
}

/* Anything else depending on draws: compared with the reference as a
 * sample of the same distribution.  Integers (the reference's are all
 * integral): integers inside the reference's range.  Always: the mean
 * within NSE pooled standard errors (+1/n), and from 16 values the
 * variance within NSE standard errors of the reference's (each sample's
 * from its fourth moment). */
static int sample_rule(const char *name, int dt, const void *got, const Tensor *e,
                       char *why, size_t n)
{
	int64_t m = numel_of(e);
	double lo = INFINITY, hi = -INFINITY, mom[2][4] = { { 0 } };
	int integral = 1;

	if (m == 0)
		return 0;
	for (int64_t j = 0; j < m; j++) {
		double b = check_elem_f(e->data, e->dtype, j);
		integral &= b == floor(b);
		lo = fmin(lo, b);
		hi = fmax(hi, b);
	}
	for (int64_t j = 0; j < m; j++) {
		double v = check_elem_f(got, dt, j);
		if (!isfinite(v))
			return fail(why, n, name, "element %.0f = %.9g%.0s", (double)j, v, 0);
		if (integral && (v != floor(v) || v < lo || v > hi))
			return fail(why, n, name, "element %.0f = %.9g: the reference's "
			            "values are integers from %.9g", (double)j, v, lo);
	}
	for (int s = 0; s < 2; s++) {
		double mu = 0;
		for (int64_t j = 0; j < m; j++)
			mu += s ? check_elem_f(e->data, e->dtype, j) : check_elem_f(got, dt, j);
		mu /= (double)m;
		mom[s][0] = mu;
		for (int64_t j = 0; j < m; j++) {
			double d = (s ? check_elem_f(e->data, e->dtype, j)
			              : check_elem_f(got, dt, j)) - mu;
			mom[s][1] += d * d / (double)m;
			mom[s][3] += d * d * d * d / (double)m;
		}
	}
	{
		double se = sqrt((mom[0][1] + mom[1][1]) / (double)m);
		double sv = sqrt((fmax(mom[0][3] - mom[0][1] * mom[0][1], 0) +
		                  fmax(mom[1][3] - mom[1][1] * mom[1][1], 0)) / (double)m);
		if (fabs(mom[0][0] - mom[1][0]) > NSE * se + 1.0 / (double)m)
			return fail(why, n, name, "mean %.6g, the reference's %.6g "
			            "(standard error %.3g)", mom[0][0], mom[1][0], se);
		if (m >= 16 && fabs(mom[0][1] - mom[1][1]) > NSE * sv + 1e-12)
			return fail(why, n, name, "variance %.6g, the reference's %.6g "
			            "(standard error %.3g)", mom[0][1], mom[1][1], sv);
	}
	return 0;
}

int check_random_compare(const RandOut *r, int i, const Graph *mg,
                         const void *const *outs, const Tensor *e,
                         const Tensor *in, char *why, size_t n)
{
	const Value *v = GV(mg, mg->out[i]);
	const void *got = outs[i];
	const char *name = v->name;
	int64_t m = numel_of(e);

	switch (r->op) {
	case OP_Dropout:
		if (r->k == 0 || r->out_pos[0] >= 0)
			return dropout_rule(r, i, mg, outs, in, why, n);
		break;
	case OP_Bernoulli: {
		const Tensor *p = node_in(r, 0, in);
		double ones = 0, mu = 0, var = 0;
		if (!p)
			break;
		for (int64_t j = 0; j < m; j++) {
			double y = check_elem_f(got, v->dtype, j), q = check_elem_f(p->data, p->dtype, j);
			if (y != 0 && y != 1)
				return fail(why, n, name, "element %.0f = %.9g, not 0 or 1%.0s",
				            (double)j, y, 0);
			ones += y;
			mu += q;
			var += q * (1 - q);
		}
		if (fabs(ones - mu) > NSE * sqrt(var) + 1)
			return fail(why, n, name, "%.0f ones, expected about %.2f (sd %.2f)",
			            ones, mu, sqrt(var));
		/* and the ones where p is high: sum (y - p)(p - mean p) about 0
		 * (an inverted y ~ 1 - p has the sum of the first test right) */
		{
			double pm = m ? mu / (double)m : 0, t = 0, tv = 0;
			for (int64_t j = 0; j < m; j++) {
				double y = check_elem_f(got, v->dtype, j), q = check_elem_f(p->data, p->dtype, j);
				t += (y - q) * (q - pm);
				tv += q * (1 - q) * (q - pm) * (q - pm);
			}
			if (fabs(t) > NSE * sqrt(tv) + 1)
				return fail(why, n, name, "the ones do not follow p: sum (y - p)"
				            "(p - mean p) = %.3g (sd %.3g)%.0s", t, sqrt(tv), 0);
		}
		return 0;
	}
	case OP_Multinomial: {
		/* class counts against sum over rows of S p(class) */
		const Tensor *x = node_in(r, 0, in);
		int64_t B, C, S;
		if (!x || x->rank != 2 || e->rank != 2)
			break;
		B = x->dim[0];
		C = x->dim[1];
		S = e->dim[1];
		for (int64_t j = 0; j < m; j++) {
			double y = check_elem_f(got, v->dtype, j);
			if (!(y >= 0 && y < (double)C))
				return fail(why, n, name, "element %.0f = %.0f, not a class "
				            "of %.0f", (double)j, y, (double)C);
		}
		for (int64_t cl = 0; cl < C; cl++) {
			double cnt = 0, mu = 0, var = 0;
			for (int64_t b = 0; b < B; b++) {
				double mx = -INFINITY, z = 0, p;
				for (int64_t k = 0; k < C; k++)
					mx = fmax(mx, check_elem_f(x->data, x->dtype, b * C + k));
				for (int64_t k = 0; k < C; k++)
					z += exp(check_elem_f(x->data, x->dtype, b * C + k) - mx);
				p = exp(check_elem_f(x->data, x->dtype, b * C + cl) - mx) / z;
				mu += (double)S * p;
				var += (double)S * p * (1 - p);
				for (int64_t s = 0; s < S; s++)
					cnt += check_elem_f(got, v->dtype, b * S + s) == (double)cl;
			}
			if (fabs(cnt - mu) > NSE * sqrt(var) + 1)
				return fail(why, n, name, "class %.0f drawn %.0f times, expected "
				            "about %.1f", (double)cl, cnt, mu);
		}
		return 0;
	}
	case OP_RandomUniform:
	case OP_RandomUniformLike: {
		double lo = r->attr[0], hi = r->attr[1], s = 0;
		for (int64_t j = 0; j < m; j++) {
			double y = check_elem_f(got, v->dtype, j);
			if (!(y >= lo && y <= hi))
				return fail(why, n, name, "element %.0f = %.9g outside [low, "
				            "high] = [%.9g, ...]", (double)j, y, lo);
			s += y;
		}
		if (m && fabs(s / m - (lo + hi) / 2) > NSE * (hi - lo) / sqrt(12.0 * m))
			return fail(why, n, name, "mean %.6g, expected %.6g (n %.0f)", s / m,
			            (lo + hi) / 2, (double)m);
		return 0;
	}
	case OP_RandomNormal:
	case OP_RandomNormalLike: {
		double mu = r->attr[0], sc = r->attr[1], s = 0, s2 = 0;
		for (int64_t j = 0; j < m; j++) {
			double y = check_elem_f(got, v->dtype, j);
			if (!isfinite(y))
				return fail(why, n, name, "element %.0f = %.9g%.0s", (double)j, y, 0);
			s += y - mu;
			s2 += (y - mu) * (y - mu);
		}
		if (m && fabs(s / m) > NSE * fabs(sc) / sqrt((double)m))
			return fail(why, n, name, "mean %.6g, expected %.6g (n %.0f)",
			            mu + s / m, mu, (double)m);
		if (m >= 16 && fabs(s2 / m - sc * sc) > NSE * sc * sc * sqrt(2.0 / m))
			return fail(why, n, name, "variance %.6g, expected %.6g (n %.0f)",
			            s2 / m, sc * sc, (double)m);
		return 0;
	}
	default:
		break;
	}
	return sample_rule(name, v->dtype, got, e, why, n);
}

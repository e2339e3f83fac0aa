/*
 * simplify.c - graph simplifications that run after inference and folding,
 * before fusion:
 *
 *   - BatchNormalization after Conv folds into the conv's weights and bias;
 *   - Identity (and inference Dropout) disappear;
 *   - x*1, 1*x, x+0, 0+x, x-0, x/1 disappear when the result has x's shape
 *     and type; x / c becomes x * (1/c) for a float scalar constant c;
 *   - Gemm with transB and a constant B gets B transposed at compile time;
 *   - Transpose of a Transpose becomes one Transpose (or nothing);
 *     Reshape/Flatten/Squeeze/Unsqueeze of a Reshape reads the original;
 *   - common subexpressions (same op, inputs and attributes) merge.
 *
 * Each rewrite redirects the uses of a value to an equivalent one; the
 * nodes left without users are removed by pass_dce.  Graph outputs keep
 * their values: a rewrite never removes the producer of a graph output.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "passes.h"

/* Redirections: uses of value v are to read repl[v] instead (-1: v
 * itself).  A rewrite only redirects the outputs of the node at hand,
 * whose users come later in topological order, so each node's inputs are
 * resolved when the walk reaches it (resolve_inputs): one step per use,
 * where rewriting every user at once would scan the graph per rewrite. */
typedef struct Redirect {
	int *to;    /* per value: replacement, or -1 */
	int n;      /* values when made; later ones (new constants) are never
	               redirected */
} Redirect;

static int find(Redirect *repl, int v)
{
	int r = v;

	if (v < 0 || v >= repl->n)
		return v;
	while (repl->to[r] >= 0)
		r = repl->to[r];
	while (repl->to[v] >= 0) {   /* shorten the path for the next look-up */
		int next = repl->to[v];
		repl->to[v] = r;
		v = next;
	}
	return r;
}

static void resolve_inputs(Redirect *repl, Node *n)
{
	for (int k = 0; k < n->nin; k++)
		n->in[k] = find(repl, n->in[k]);
}

/* Replace every use of value from by value to (not graph outputs). */
static void replace_uses(Redirect *repl, int from, int to)
{
	if (from != to && from >= 0 && from < repl->n)
		repl->to[from] = to;
}

static int same_type(const Value *a, const Value *b)
{
	return a->dtype == b->dtype && a->rank == b->rank &&
	       !memcmp(a->dim, b->dim, sizeof(int64_t) * a->rank);
}

/* Is constant v equal to x everywhere? */
static int const_all(const Value *v, double x)
{
	int64_t n = value_numel(v);

	if (!v->data || n < 1 || n > 4096)
		return 0;
	for (int64_t i = 0; i < n; i++)
		if (value_get_f(v, i) != x)
			return 0;
	return 1;
}

/* Make the output of n an alias of value src: uses are redirected, unless
 * the output is a graph output (then nothing changes). */
static int bypass(Graph *g, Redirect *repl, Node *n, int src)
{
	int out = n->out[0];

	if (GV(g, out)->is_output || !same_type(GV(g, out), GV(g, src)))
		return 0;
	replace_uses(repl, out, src);
	n->dead = 1;
	return 1;
}

static int fold_bn(Ctx *c, Graph *g, Node *bn, const int *nuse)
{
	const Value *x = NIN(g, bn, 0), *sc, *bi, *mean, *var, *w, *b;
	Node *conv;
	int64_t oc, per;
	int nw, nb, *in;
	float *W, *B;
	double eps = attr_float(bn, "epsilon", 1e-5);

	if (bn->nout != 1 || x->producer < 0 || nuse[bn->in[0]] != 1 ||
	    attr_int(bn, "training_mode", 0))
		return BURN_OK;
	conv = &g->node[x->producer];
	if (conv->op != OP_Conv || conv->dead || x->dtype != DT_F32)
		return BURN_OK;
	sc = NIN(g, bn, 1); bi = NIN(g, bn, 2); mean = NIN(g, bn, 3); var = NIN(g, bn, 4);
	w = NIN(g, conv, 1);
	b = NIN(g, conv, 2);
	if (!sc->data || !bi->data || !mean->data || !var->data || !w->data ||
	    (b && !b->data) || w->dtype != DT_F32 || sc->dtype != DT_F32)
		return BURN_OK;
	oc = w->dim[0];
	per = value_numel(w) / (oc ? oc : 1);
	if (value_numel(sc) != oc || value_numel(bi) != oc || value_numel(mean) != oc ||
	    value_numel(var) != oc)
		return BURN_OK;
	W = malloc(sizeof(float) * (value_numel(w) + 1));
	B = malloc(sizeof(float) * (oc + 1));
	if (!W || !B) {
		free(W);
		free(B);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	/* y = (conv(x) + b - mean) * s + bias, s = scale / sqrt(var + eps) */
	for (int64_t o = 0; o < oc; o++) {
		double s = value_get_f(sc, o) / sqrt(value_get_f(var, o) + eps);
		for (int64_t i = 0; i < per; i++)
			W[o * per + i] = (float)(((const float *)w->data)[o * per + i] * s);
		B[o] = (float)(((b ? value_get_f(b, o) : 0) - value_get_f(mean, o)) * s +
		               value_get_f(bi, o));
	}
	nw = graph_add_value(g, arena_printf(&g->arena, "%s.bn_w", conv->name));
	nb = graph_add_value(g, arena_printf(&g->arena, "%s.bn_b", conv->name));
	{
		int rc = graph_set_const(c, g, nw, DT_F32, GV(g, conv->in[1])->rank,
		                         GV(g, conv->in[1])->dim, W);
		if (!rc)
			rc = graph_set_const(c, g, nb, DT_F32, 1, &oc, B);
		free(W);
		free(B);
		TRY(rc);
	}
	/* graph_add_value may have moved the arrays: re-fetch through indices */
	in = arena_alloc(&g->arena, sizeof(int) * 3);
	if (!in)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	conv = &g->node[GV(g, bn->in[0])->producer];
	in[0] = conv->in[0];
	in[1] = nw;
	in[2] = nb;
	conv->in = in;
	conv->nin = 3;
	/* the conv now produces the BN's output */
	conv->out[0] = bn->out[0];
	GV(g, bn->out[0])->producer = (int)(conv - g->node);
	GV(g, bn->out[0])->producer_out = 0;
	bn->dead = 1;
	return BURN_OK;
}

/* x / c -> x * (1/c) for a float scalar constant c: a multiply instead of
 * a divide in the inner loop; the result differs by at most one rounding.
 * Returns non-zero only on an error. */
static int div_to_mul(Ctx *c, Graph *g, Node *n)
{
	const Value *b = NIN(g, n, 1);
	double v;
	int r;

	if (!b->data || value_numel(b) != 1 || (b->dtype != DT_F32 && b->dtype != DT_F64))
		return 0;
	v = value_get_f(b, 0);
	if (v == 0 || !isfinite(v) || !isfinite(1 / v))
		return 0;
	r = graph_add_value(g, arena_printf(&g->arena, "%s.recip", GV(g, n->in[1])->name));
	if (r < 0)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	if (GV(g, n->in[1])->dtype == DT_F32) {
		float x = (float)(1 / v);
		if (graph_set_const(c, g, r, DT_F32, GV(g, n->in[1])->rank,
		                    GV(g, n->in[1])->dim, &x))
			return 1;
	} else {
		double x = 1 / v;
		if (graph_set_const(c, g, r, DT_F64, GV(g, n->in[1])->rank,
		                    GV(g, n->in[1])->dim, &x))
			return 1;
	}
	n->in[1] = r;
	n->op = OP_Mul;
	return 0;
}

/* Gemm(A, B, transB=1) with a constant 2-D B: transpose B once at compile
 * time, so the kernel streams rows of B (the i-k-j order, which
 * vectorizes over the output columns) instead of dotting rows. */
static int pretranspose_gemm(Ctx *c, Graph *g, Node *n)
{
	const Value *b = NIN(g, n, 1);
	Attr *tb = (Attr *)node_attr(n, "transB");
	int64_t K, N, es, dim[2];
	unsigned char *t;
	int v, rc;

	if (!tb || tb->type != AT_INT || !tb->i || !b->data || b->rank != 2)
		return BURN_OK;
	N = b->dim[0];
	K = b->dim[1];
	es = dtype_size(b->dtype);
	t = malloc((size_t)(N * K * es) + 1);
	if (!t)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	for (int64_t i = 0; i < N; i++)
		for (int64_t k = 0; k < K; k++)
			memcpy(t + (k * N + i) * es, (const unsigned char *)b->data + (i * K + k) * es,
			       (size_t)es);
	dim[0] = K;
	dim[1] = N;
	v = graph_add_value(g, arena_printf(&g->arena, "%s.T", b->name));
	rc = v < 0 ? burn_fail(c, BURN_ERR_NOMEM, "out of memory")
	           : graph_set_const(c, g, v, GV(g, n->in[1])->dtype, 2, dim, t);
	free(t);
	TRY(rc);
	n->in[1] = v;
	tb->i = 0;
	return BURN_OK;
}

static int same_attrs(const Node *a, const Node *b)
{
	if (a->nattr != b->nattr)
		return 0;
	for (int i = 0; i < a->nattr; i++) {
		const Attr *x = &a->attr[i], *y = node_attr(b, x->name);
		if (!y || x->type != y->type)
			return 0;
		switch (x->type) {
		case AT_INT: if (x->i != y->i) return 0; break;
		case AT_FLOAT: if (x->f != y->f) return 0; break;
		case AT_STRING:
			if (x->slen != y->slen || memcmp(x->s, y->s, x->slen)) return 0;
			break;
		case AT_INTS:
			if (x->n != y->n || (x->n && memcmp(x->ints, y->ints, sizeof(int64_t) * x->n)))
				return 0;
			break;
		case AT_FLOATS:
			if (x->n != y->n || (x->n && memcmp(x->floats, y->floats, sizeof(double) * x->n)))
				return 0;
			break;
		default:
			return 0;   /* tensors, graphs, ...: never merged */
		}
	}
	return 1;
}

/* Random draws (OF_RANDOM rows): two unseeded nodes draw different
 * numbers, so they are never merged. */
static int is_random(int op)
{
	return (op_table[op].flags & OF_RANDOM) != 0;
}

static int is_reshape_like(int op)
{
	return op == OP_Reshape || op == OP_Flatten || op == OP_Squeeze ||
	       op == OP_Unsqueeze;
}

/* A hash of what CSE compares: op, domain, inputs, which outputs exist,
 * and the attributes (order-independent, as same_attrs is). */
static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

static uint64_t hash_str(const char *s, int64_t n)
{
	uint64_t h = 14695981039346656037ull;   /* FNV-1a */

	for (int64_t i = 0; s && (n < 0 ? s[i] != 0 : i < n); i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static uint64_t node_hash(const Node *n)
{
	uint64_t h = mix(mix(mix(n->op, n->nin), n->nout), hash_str(n->domain, -1));
	uint64_t at = 0;

	for (int k = 0; k < n->nin; k++)
		h = mix(h, (uint64_t)(int64_t)n->in[k]);
	for (int k = 0; k < n->nout; k++)
		h = mix(h, n->out[k] < 0);
	for (int i = 0; i < n->nattr; i++) {
		const Attr *a = &n->attr[i];
		uint64_t x = mix(hash_str(a->name, -1), a->type);
		switch (a->type) {
		case AT_INT: x = mix(x, (uint64_t)a->i); break;
		case AT_FLOAT: x = mix(x, (uint64_t)(int64_t)(a->f * 1e6)); break;
		case AT_STRING: x = mix(x, hash_str(a->s, a->slen)); break;
		case AT_INTS:
			for (int j = 0; j < a->n; j++)
				x = mix(x, (uint64_t)a->ints[j]);
			break;
		default: break;
		}
		at += x;
	}
	return mix(h, at);
}

static int cse_same(const Graph *g, const Node *m, const Node *n)
{
	int same = !m->dead && m->op == n->op && m->nin == n->nin &&
	           m->nout == n->nout && !strcmp(m->domain, n->domain);

	for (int k = 0; same && k < n->nin; k++)
		same = m->in[k] == n->in[k];
	for (int k = 0; same && k < n->nout; k++)
		same = (m->out[k] < 0) == (n->out[k] < 0) &&
		       (n->out[k] < 0 || !GV(g, n->out[k])->is_output);
	return same && same_attrs(m, n);
}

/* CSE: a node equal to an earlier live one reuses its outputs.  Live
 * nodes go into a hash table in node order; linear probing meets equal
 * nodes in that order, so the earliest equal node is found, as a scan of
 * all earlier nodes would. */
static int cse(Ctx *c, Graph *g, Redirect *repl)
{
	size_t cap = 16, mask;
	int *slot;
	uint64_t *hs;

	while (cap < 2 * (size_t)g->nnode + 2)
		cap *= 2;
	mask = cap - 1;
	slot = malloc(sizeof(int) * cap);
	hs = malloc(sizeof(uint64_t) * cap);
	if (!slot || !hs) {
		free(slot);
		free(hs);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < cap; i++)
		slot[i] = -1;
	for (int i = 0; i < g->nnode; i++) {
		Node *n = &g->node[i];
		uint64_t h;
		size_t at;
		int found = -1;
		if (n->dead)
			continue;
		resolve_inputs(repl, n);
		if (is_random(n->op))
			continue;
		h = node_hash(n);
		for (at = h & mask; slot[at] >= 0; at = (at + 1) & mask)
			if (hs[at] == h && cse_same(g, &g->node[slot[at]], n)) {
				found = slot[at];
				break;
			}
		if (found < 0) {
			for (; slot[at] >= 0; at = (at + 1) & mask)
				;
			slot[at] = i;
			hs[at] = h;
			continue;
		}
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0)
				replace_uses(repl, n->out[k], g->node[found].out[k]);
		/* one node now serves both: a run-time If's branches (guards,
		 * graph.h) that differ leave it unguarded */
		if (g->node[found].guard != n->guard ||
		    g->node[found].guard_neg != n->guard_neg)
			g->node[found].guard = g->node[found].guard_neg = 0;
		n->dead = 1;
	}
	free(slot);
	free(hs);
	return BURN_OK;
}

int pass_simplify(Ctx *c, Graph *g)
{
	int *nuse = calloc(g->nval + 1, sizeof(int));
	Redirect repl = { malloc(sizeof(int) * (g->nval + 1)), g->nval };
	int rc;

	if (!nuse || !repl.to) {
		free(nuse);
		free(repl.to);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	for (int v = 0; v < g->nval; v++)
		repl.to[v] = -1;
	for (int i = 0; i < g->nnode; i++)
		for (int k = 0; k < g->node[i].nin; k++)
			if (g->node[i].in[k] >= 0)
				nuse[g->node[i].in[k]]++;
	for (int i = 0; i < g->nout; i++)
		nuse[g->out[i]]++;

	for (int i = 0; i < g->nnode; i++) {
		Node *n = &g->node[i];
		const Value *a, *b;

		if (n->dead)
			continue;
		resolve_inputs(&repl, n);
		switch (n->op) {
		case OP_BatchNormalization:
			c->node = n->name;
			c->op = "BatchNormalization";
			rc = fold_bn(c, g, n, nuse);
			if (rc) {
				free(nuse);
				free(repl.to);
				return rc;
			}
			c->node = c->op = NULL;
			break;
		case OP_Identity:
			bypass(g, &repl, n, n->in[0]);
			break;
		case OP_Gemm:
			c->node = n->name;
			c->op = "Gemm";
			if ((rc = pretranspose_gemm(c, g, n))) {
				free(nuse);
				free(repl.to);
				return rc;
			}
			c->node = c->op = NULL;
			break;
		case OP_Dropout: {
			const Value *train = NIN(g, n, 2);
			if (n->nout == 1 && (!train || (train->data && !value_get_i(train, 0))))
				bypass(g, &repl, n, n->in[0]);
			break;
		}
		case OP_Mul: case OP_Add: case OP_Sub: case OP_Div:
			if (n->op == OP_Div && div_to_mul(c, g, n)) {
				free(nuse);
				free(repl.to);
				return c->code;
			}
			a = NIN(g, n, 0);   /* after div_to_mul: g->val may have moved */
			b = NIN(g, n, 1);
			if ((n->op == OP_Mul || n->op == OP_Div) && const_all(b, 1))
				bypass(g, &repl, n, n->in[0]);
			else if (n->op == OP_Mul && const_all(a, 1))
				bypass(g, &repl, n, n->in[1]);
			else if ((n->op == OP_Add || n->op == OP_Sub) && const_all(b, 0) &&
			         dtype_is_float(a->dtype) == dtype_is_float(b->dtype))
				bypass(g, &repl, n, n->in[0]);
			else if (n->op == OP_Add && const_all(a, 0))
				bypass(g, &repl, n, n->in[1]);
			break;
		case OP_Transpose: {
			const Value *x = NIN(g, n, 0);
			Node *p = x->producer >= 0 ? &g->node[x->producer] : NULL;
			const int64_t *p1, *p2;
			int r = x->rank, n1, n2, ident = 1;
			int64_t comp[BURN_MAX_RANK];
			if (!p || p->op != OP_Transpose || p->dead)
				break;
			n1 = attr_ints(p, "perm", &p1);
			n2 = attr_ints(n, "perm", &p2);
			if (n1 != r || n2 != r)
				break;
			/* y = T2(T1(x)): y dim i is x dim p1[p2[i]] */
			for (int d = 0; d < r; d++) {
				comp[d] = p1[p2[d]];
				ident &= comp[d] == d;
			}
			if (ident && bypass(g, &repl, n, p->in[0]))
				break;
			if (!ident) {
				Attr *at = (Attr *)node_attr(n, "perm");
				int64_t *nv = arena_alloc(&g->arena, sizeof(int64_t) * r);
				if (!nv)
					break;
				memcpy(nv, comp, sizeof(int64_t) * r);
				at->ints = nv;
				n->in[0] = p->in[0];
			}
			break;
		}
		default:
			if (is_reshape_like(n->op)) {
				const Value *x = NIN(g, n, 0);
				Node *p = x->producer >= 0 ? &g->node[x->producer] : NULL;
				if (p && !p->dead && is_reshape_like(p->op) &&
				    same_type(NOUT(g, n, 0), NIN(g, p, 0))) {
					bypass(g, &repl, n, p->in[0]);   /* reshape back: no-op */
				} else if (p && !p->dead && p->op == OP_Reshape &&
				           n->op == OP_Reshape) {
					n->in[0] = p->in[0];      /* shape fully given by n */
				}
			}
			break;
		}
	}

	rc = cse(c, g, &repl);
	/* uses of a value rewritten after its users were walked: none by
	 * construction, but resolving costs one step per use */
	for (int i = 0; !rc && i < g->nnode; i++)
		if (!g->node[i].dead)
			resolve_inputs(&repl, &g->node[i]);
	free(repl.to);
	if (rc) {
		free(nuse);
		return rc;
	}
	free(nuse);
	graph_compact(g);
	return BURN_OK;
}

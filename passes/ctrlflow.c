/*
 * ctrlflow.c - If, Loop, Scan and SequenceMap: their subgraphs become nodes of the
 * enclosing graph while pass_infer_fold walks it.
 *
 * When inference reaches a control-flow node its inputs are inferred and
 * folded, so the node's condition, trip count and sequence length are
 * either constants or known to be run-time values.  The node is replaced
 * by copies of its subgraph's nodes placed right after it, each inferred
 * and folded as it is placed (so the next iteration sees the folded
 * values, e.g. a Loop's condition that folds to false):
 *
 *   If    constant cond   the chosen branch's nodes
 *         run-time cond   both branches' nodes, and Where(cond, then, else)
 *                         per output (predication: both are computed; the
 *                         outputs' types must agree)
 *   Loop  constant trip count / condition: the body's nodes once per
 *         iteration, carried values wired from one copy to the next, scan
 *         outputs stacked along a new axis 0 (Concat of Reshapes)
 *   Scan  (opset 9+) the body once per position along each scan input's
 *         axis (Gather of position t, reversed for direction 1), scan
 *         outputs stacked along their axis; Scan-8 (batch axis 0,
 *         `directions`, sequence_lens) once per batch item, then stacked
 *
 *   SequenceMap: the body once per position of its sequence inputs, each
 *         output the list of the copies' outputs (sequences: ops_seq.c)
 *
 * After this the graph has no subgraphs: simplification, fusion, lowering
 * and every target see ordinary nodes, so a loop body's ops fuse like any
 * others.  What needs a run-time branch or loop (a trip count or condition
 * known only at run time) is refused, naming the node: the launch list has
 * no control entries yet (docs/ARCHITECTURE.md, "Control flow").
 *
 * Outer-scope values: the loader gives a subgraph a value with no local
 * definition for each outer name it reads (the capture convention,
 * frontend/onnx_load.c).  Copies resolve such a name through an Env chain:
 * the enclosing subgraphs being copied (their value -> copy maps), then
 * the main graph by name.  Copies get names "NODE/ITER/NAME" so that they
 * stay unique; attributes are copied into the main graph's arena, because
 * the subgraphs die with their node at graph_compact.
 */
#include <stdio.h>
#include <string.h>
#include "passes.h"
#include "lower.h"

/* An unrolled Loop or Scan may have at most this many iterations; the
 * graph's node limit (--max-nodes) bounds the copies too. */
#define CF_MAX_TRIPS 65536

/* One subgraph being copied: its values' copies in the main graph. */
typedef struct Env Env;
struct Env {
	const Graph *sub;
	int *map;        /* per value of sub: the main graph's value, or -1 */
	const char *prefix;  /* "NODE/ITER" of the copies' names */
	Env *up;         /* the enclosing subgraph being copied, or NULL */
	int guard, guard_neg;  /* the copies' Node.guard: a run-time If's
	                        * branch, or inherited from up */
};

static int expand(Ctx *c, Graph *g, int i, const Node *src, Env *up,
                  InferBudget *left);

int infer_control(Ctx *c, Graph *g, Node *n)
{
	(void)g;
	return burn_fail(c, BURN_ERR_INTERNAL, "%s '%s' reached inference "
	                 "unexpanded", op_table[n->op].name, n->name);
}

int lower_control(Lower *lw, Node *n)
{
	return burn_fail(lw->ctx, BURN_ERR_INTERNAL, "%s '%s' reached lowering "
	                 "unexpanded", op_table[n->op].name, n->name);
}

static int nomem(Ctx *c)
{
	return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
}

/* Make the error name node n (the control-flow node being expanded). */
static int fail_at(Ctx *c, const Node *n, int code, const char *what)
{
	c->node = n->name;
	c->op = op_table[n->op].name;
	return burn_fail(c, code, "%s", what);
}

static const Graph *sub_attr(const Node *n, const char *name)
{
	const Attr *a = node_attr(n, name);
	return a && a->type == AT_GRAPH ? a->g : NULL;
}

/* A new value named "prefix/name"; -1 when out of memory. */
static int new_value(Graph *g, const char *prefix, const char *name)
{
	char buf[512];

	snprintf(buf, sizeof buf, "%s/%s", prefix, name ? name : "");
	return graph_add_value(g, buf);
}

/* A new int64 constant of the given shape and data. */
static int new_i64(Ctx *c, Graph *g, const char *prefix, const char *name,
                   int rank, const int64_t *dim, const int64_t *data, int *out)
{
	int v = new_value(g, prefix, name);

	if (v < 0)
		return nomem(c);
	TRY(graph_set_const(c, g, v, DT_I64, rank, dim, data));
	*out = v;
	return BURN_OK;
}

/* Deep copy of attribute s into g's arena (the subgraph that holds s dies
 * at graph_compact).  Graph attributes are not copied: a copied
 * control-flow node is expanded at once from its source node. */
static int attr_copy(Ctx *c, Graph *g, int node, const Attr *s)
{
	Arena *A = &g->arena;
	Attr *d;

	if (s->type == AT_GRAPH || s->type == AT_GRAPHS)
		return BURN_OK;
	if (!(d = node_add_attr(g, node, s->name, s->type)))
		return nomem(c);
	d->i = s->i;
	d->f = s->f;
	d->n = s->n;
	d->slen = s->slen;
	if (s->s) {
		char *t = arena_alloc(A, (size_t)s->slen + 1);
		if (!t)
			return nomem(c);
		memcpy(t, s->s, (size_t)s->slen);
		t[s->slen] = 0;
		d->s = t;
	}
	if (s->ints) {
		if (!(d->ints = arena_alloc(A, sizeof *d->ints * (size_t)(s->n + 1))))
			return nomem(c);
		memcpy(d->ints, s->ints, sizeof *d->ints * (size_t)s->n);
	}
	if (s->floats) {
		if (!(d->floats = arena_alloc(A, sizeof *d->floats * (size_t)(s->n + 1))))
			return nomem(c);
		memcpy(d->floats, s->floats, sizeof *d->floats * (size_t)s->n);
	}
	if (s->strs) {
		if (!(d->strs = arena_alloc(A, sizeof *d->strs * (size_t)(s->n + 1))))
			return nomem(c);
		for (int k = 0; k < s->n; k++)
			if (s->strs[k] && !(d->strs[k] = arena_strdup(A, s->strs[k])))
				return nomem(c);
	}
	if (s->t || s->ts) {
		int nt = s->t ? 1 : s->n;
		Tensor **dst = arena_alloc(A, sizeof *dst * (size_t)(nt + 1));
		if (!dst)
			return nomem(c);
		for (int k = 0; k < nt; k++) {
			const Tensor *st = s->t ? s->t : s->ts[k];
			Tensor *t = arena_alloc(A, sizeof *t);
			if (!t)
				return nomem(c);
			*t = *st;
			if (st->data) {
				if (!(t->data = arena_alloc(A, (size_t)st->nbytes + 1)))
					return nomem(c);
				memcpy(t->data, st->data, (size_t)st->nbytes);
			}
			dst[k] = t;
		}
		if (s->t)
			d->t = dst[0];
		else
			d->ts = dst;
	}
	return BURN_OK;
}

/* The main graph's value for value v of e->sub: its copy, a constant of
 * the subgraph copied, or an outer-scope value (the capture convention)
 * found in the enclosing copies or in g by name. */
static int resolve(Ctx *c, Graph *g, Env *e, int v, int *out)
{
	const Value *sv = GV(e->sub, v);

	if (e->map[v] >= 0) {
		*out = e->map[v];
		return BURN_OK;
	}
	if (sv->data) {
		int nv = new_value(g, e->prefix, sv->name);
		if (nv < 0)
			return nomem(c);
		TRY(graph_set_const(c, g, nv, sv->dtype, sv->rank, sv->dim, sv->data));
		e->map[v] = *out = nv;
		return BURN_OK;
	}
	if (sv->producer < 0 && sv->kind != VK_INPUT && sv->name) {
		for (Env *u = e->up; u; u = u->up)
			for (int k = 0; k < u->sub->nval; k++)
				if (GV(u->sub, k)->name && !strcmp(GV(u->sub, k)->name, sv->name)) {
					TRY(resolve(c, g, u, k, out));
					e->map[v] = *out;
					return BURN_OK;
				}
		if ((*out = graph_find_value(g, sv->name)) >= 0) {
			e->map[v] = *out;
			return BURN_OK;
		}
	}
	return burn_fail(c, BURN_ERR_INVALID, "subgraph '%s' reads '%s', which "
	                 "nothing defines before it", e->sub->name,
	                 sv->name ? sv->name : "?");
}

/*
 * Copy sub (a subgraph of control-flow node `at`) into g: its nodes
 * appended, each inferred and folded as it is placed, with sub's inputs
 * bound to in[0..sub->nin-1] (values of g); out[k] gets the value of g
 * that sub's output k is.
 */
static int copy_sub_guarded(Ctx *c, Graph *g, const Node *at, const Graph *sub,
                            const int *in, Env *up, const char *prefix,
                            int *out, InferBudget *left, int guard, int neg)
{
	Env e = { sub, NULL, prefix, up, guard, neg };

	/* messages name the control-flow node; inferring a copy resets them */
	c->node = at->name;
	c->op = op_table[at->op].name;
	if (--left->copies < 0)
		return burn_fail(c, BURN_ERR_LIMIT, "expanding control flow needs "
		                 "more than %d copies of subgraphs in all (loops "
		                 "nested too deep or too long to unroll)", CF_MAX_COPIES);
	if (!(e.map = arena_alloc(&g->arena, sizeof *e.map * (size_t)(sub->nval + 1))))
		return nomem(c);
	for (int v = 0; v < sub->nval; v++)
		e.map[v] = -1;
	for (int k = 0; k < sub->nin; k++)
		e.map[sub->in[k]] = in[k];
	for (int j = 0; j < sub->nnode; j++) {
		const Node *sn = &sub->node[j];
		int ins[1024], outs[1024], idx;
		char name[512];

		if (sn->dead)
			continue;
		if (sn->nin > 1024 || sn->nout > 1024)
			return burn_fail(c, BURN_ERR_LIMIT, "node '%s': more than 1024 "
			                 "inputs or outputs", sn->name);
		for (int k = 0; k < sn->nin; k++) {
			ins[k] = -1;
			if (sn->in[k] >= 0)
				TRY(resolve(c, g, &e, sn->in[k], &ins[k]));
		}
		for (int k = 0; k < sn->nout; k++) {
			outs[k] = -1;
			if (sn->out[k] < 0)
				continue;
			if ((outs[k] = new_value(g, prefix, GV(sub, sn->out[k])->name)) < 0)
				return nomem(c);
			e.map[sn->out[k]] = outs[k];
		}
		if (g->nnode >= c->limits.max_nodes)
			return burn_fail(c, BURN_ERR_LIMIT, "unrolling makes more than "
			                 "--max-nodes (%d) nodes", c->limits.max_nodes);
		snprintf(name, sizeof name, "%s/%s", prefix, sn->name);
		if ((idx = graph_add_node(g, sn->op, name, sn->nin, ins, sn->nout, outs)) < 0)
			return nomem(c);
		g->node[idx].guard = e.guard;
		g->node[idx].guard_neg = e.guard_neg;
		if (sn->domain && *sn->domain &&
		    !(g->node[idx].domain = arena_strdup(&g->arena, sn->domain)))
			return nomem(c);
		for (int k = 0; k < sn->nattr; k++)
			TRY(attr_copy(c, g, idx, &sn->attr[k]));
		if (op_table[sn->op].cls == OC_CONTROL || op_table[sn->op].cls == OC_SEQ ||
		    op_table[sn->op].cls == OC_FUNC)
			TRY(expand(c, g, idx, sn, &e, left));
		else
			TRY(infer_fold_node(c, g, idx, &left->fold));
		c->node = at->name;
		c->op = op_table[at->op].name;
	}
	for (int k = 0; k < sub->nout; k++)
		TRY(resolve(c, g, &e, sub->out[k], &out[k]));
	return BURN_OK;
}

/* copy_sub_guarded with the enclosing copy's guard (none at the top). */
static int copy_sub(Ctx *c, Graph *g, const Node *at, const Graph *sub,
                    const int *in, Env *up, const char *prefix, int *out,
                    InferBudget *left)
{
	return copy_sub_guarded(c, g, at, sub, in, up, prefix, out, left,
	                        up ? up->guard : 0, up ? up->guard_neg : 0);
}

/* Add node op(in) with one new output named prefix/what, inferred and
 * folded; *out gets the output (or, with res >= 0, the node defines res).
 * Concat and Gather get attribute axis = `axis`. */
static int add1x(Ctx *c, Graph *g, int op, const char *prefix, const char *what,
                 int nin, const int *in, int64_t axis, int res, InferBudget *left,
                 int *out)
{
	char name[512];
	int v = res, idx;

	if (v < 0 && (v = new_value(g, prefix, what)) < 0)
		return nomem(c);
	snprintf(name, sizeof name, "%s/%s", prefix, what);
	if ((idx = graph_add_node(g, op, name, nin, in, 1, &v)) < 0)
		return nomem(c);
	if (op == OP_Concat || op == OP_Gather) {
		Attr *a = node_add_attr(g, idx, "axis", AT_INT);
		if (!a)
			return nomem(c);
		a->i = axis;
	}
	TRY(infer_fold_node(c, g, idx, &left->fold));
	if (out)
		*out = v;
	return BURN_OK;
}

int cf_inline(Ctx *c, Graph *g, const Node *at, const Graph *sub, const int *in,
              const char *prefix, int *out, InferBudget *left)
{
	return copy_sub(c, g, at, sub, in, NULL, prefix, out, left);
}

int cf_add(Ctx *c, Graph *g, int op, const char *prefix, const char *what,
           int nin, const int *in, int64_t axis, int res, InferBudget *left, int *out)
{
	return add1x(c, g, op, prefix, what, nin, in, axis, res, left, out);
}

int cf_const_i64(Ctx *c, Graph *g, const char *prefix, const char *name,
                 int rank, const int64_t *dim, const int64_t *data, int *out)
{
	return new_i64(c, g, prefix, name, rank, dim, data, out);
}

static int add1(Ctx *c, Graph *g, int op, const char *prefix, const char *what,
                int nin, const int *in, int res, InferBudget *left, int *out)
{
	return add1x(c, g, op, prefix, what, nin, in, 0, res, left, out);
}

/* x with a dim of 1 inserted before axis (Reshape): the unsqueeze. */
static int unsqueeze(Ctx *c, Graph *g, int x, int axis, const char *prefix,
                     InferBudget *left, int *out)
{
	const Value *v = GV(g, x);
	int64_t dim[BURN_MAX_RANK + 1], nd = v->rank + 1;
	int in[2];

	if (v->rank >= BURN_MAX_RANK)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "stacking '%s' needs rank %d",
		                 v->name, v->rank + 1);
	for (int d = 0, s = 0; d <= v->rank; d++)
		dim[d] = d == axis ? 1 : v->dim[s++];
	in[0] = x;
	TRY(new_i64(c, g, prefix, "unsqueeze_shape", 1, &nd, dim, &in[1]));
	return add1(c, g, OP_Reshape, prefix, "unsqueeze", 2, in, -1, left, out);
}

/* Stack the n values v[] (one shape) along a new axis `axis`, into res
 * (a value of g that no node defines, or -1 for a new one, in *out). */
static int stack(Ctx *c, Graph *g, const int *v, int n, int axis, int res,
                 const char *prefix, InferBudget *left, int *out)
{
	int *u = arena_alloc(&g->arena, sizeof *u * (size_t)(n + 1)), m = n;

	if (!u)
		return nomem(c);
	for (int k = 0; k < n; k++) {
		const Value *a = GV(g, v[k]), *b = GV(g, v[0]);
		if (a->dtype != b->dtype || a->rank != b->rank ||
		    memcmp(a->dim, b->dim, sizeof a->dim[0] * (size_t)a->rank))
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "the scan output's "
			                 "iterations have different types ('%s', '%s')",
			                 b->name, a->name);
		TRY(unsqueeze(c, g, v[k], axis, prefix, left, &u[k]));
	}
	/* Concat takes at most 64 inputs: concatenate in rounds */
	while (m > 1) {
		int nm = 0;
		for (int k = 0; k < m; k += 64) {
			int cnt = m - k < 64 ? m - k : 64;
			TRY(add1x(c, g, OP_Concat, prefix, "stack", cnt, &u[k], axis,
			          m <= 64 ? res : -1, left, &u[nm]));
			nm++;
		}
		m = nm;
		if (m == 1) {
			*out = u[0];
			return BURN_OK;
		}
	}
	return add1(c, g, OP_Identity, prefix, "stack", 1, u, res, left, out);
}

int cf_stack(Ctx *c, Graph *g, const int *v, int n, int axis, int res,
             const char *prefix, InferBudget *left, int *out)
{
	return stack(c, g, v, n, axis, res, prefix, left, out);
}

/* ---- If ------------------------------------------------------------- */

/*
 * Output k of a run-time If whose branches give lists (then a, else b):
 * sequences of one length and element types are selected element by
 * element; otherwise which list the If gives is known only at run time,
 * and the condition must be a constant (the phrase burncc check answers
 * by freezing it).
 */
static int select_list(Ctx *c, Graph *g, const Node *n, int k, int cond,
                       int a, int b, InferBudget *left)
{
	const Value *va = GV(g, a), *vb = GV(g, b);
	int ne = va->nelem, *el, same = va->kind == VK_SEQ && vb->kind == VK_SEQ &&
	                               va->nelem == vb->nelem;
	char msg[400], what[32];

	for (int e = 0; same && e < ne; e++) {
		const Value *x = GV(g, va->elem[e]), *y = GV(g, vb->elem[e]);
		same = x->dtype == y->dtype && x->rank == y->rank &&
		       !memcmp(x->dim, y->dim, sizeof x->dim[0] * (size_t)x->rank);
	}
	if (!same) {
		snprintf(msg, sizeof msg, "the condition ('%s') must be a constant: "
		         "output %d is a sequence or optional that differs between "
		         "the branches (length, presence or element types), and "
		         "sequences are resolved at compile time", n->in[0] >= 0 ?
		         GV(g, n->in[0])->name : "?", k);
		return fail_at(c, n, BURN_ERR_UNSUPPORTED, msg);
	}
	if (!(el = arena_alloc(&g->arena, sizeof *el * (size_t)(ne + 1))))
		return nomem(c);
	for (int e = 0; e < ne; e++) {
		int w[3] = { cond, GV(g, a)->elem[e], GV(g, b)->elem[e] };
		snprintf(what, sizeof what, "select%d_%d", k, e);
		TRY(add1(c, g, OP_Where, n->name, what, 3, w, -1, left, &el[e]));
	}
	return seq_make(c, g, n->out[k], el, ne, GV(g, a)->dtype);
}

static int expand_if(Ctx *c, Graph *g, const Node *n, const Node *src,
                     Env *up, InferBudget *left)
{
	const Graph *br[2] = { sub_attr(src, "then_branch"), sub_attr(src, "else_branch") };
	const Value *cv = NIN(g, n, 0);
	int res[2][1024];
	char prefix[2][512], msg[256];

	if (!cv || !br[0] || !br[1])
		return fail_at(c, n, BURN_ERR_INVALID, "If needs a cond input and "
		               "graph attributes then_branch and else_branch");
	if (value_numel(cv) != 1 || cv->dtype != DT_BOOL)
		return fail_at(c, n, BURN_ERR_SHAPE, "If's cond must be one bool");
	for (int b = 0; b < 2; b++)
		if (br[b]->nout != n->nout || br[b]->nin != 0) {
			snprintf(msg, sizeof msg, "the %s branch has %d inputs and %d "
			         "outputs; the If has %d outputs (a branch has no inputs)",
			         b ? "else" : "then", br[b]->nin, br[b]->nout, n->nout);
			return fail_at(c, n, BURN_ERR_INVALID, msg);
		}
	if (n->nout > 1024)
		return fail_at(c, n, BURN_ERR_LIMIT, "more than 1024 outputs");
	snprintf(prefix[0], sizeof prefix[0], "%s/then", n->name);
	snprintf(prefix[1], sizeof prefix[1], "%s/else", n->name);
	if (cv->data) {
		int b = value_get_i(cv, 0) ? 0 : 1;
		TRY(copy_sub(c, g, n, br[b], NULL, up, prefix[b], res[b], left));
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0)
				TRY(add1(c, g, OP_Identity, prefix[b], "out", 1, &res[b][k],
				         n->out[k], left, NULL));
		return BURN_OK;
	}
	/* cond known at run time: both branches, each guarded by cond so
	 * that the launch list may skip the untaken one, then a select per
	 * output */
	int cond = n->in[0], shp[2];
	int64_t zero = 0, none[1] = { 0 };
	shp[0] = cond;
	TRY(new_i64(c, g, n->name, "cond_shape", 1, &zero, none, &shp[1]));
	TRY(add1(c, g, OP_Reshape, n->name, "cond", 2, shp, -1, left, &cond));
	TRY(copy_sub_guarded(c, g, n, br[0], NULL, up, prefix[0], res[0], left,
	                     cond + 1, 0));
	TRY(copy_sub_guarded(c, g, n, br[1], NULL, up, prefix[1], res[1], left,
	                     cond + 1, 1));
	for (int k = 0; k < n->nout; k++) {
		const Value *a = GV(g, res[0][k]), *b = GV(g, res[1][k]);
		int w[3] = { cond, res[0][k], res[1][k] };
		if (n->out[k] < 0)
			continue;
		if (a->kind == VK_SEQ || b->kind == VK_SEQ || a->kind == VK_OPTNONE ||
		    b->kind == VK_OPTNONE) {
			TRY(select_list(c, g, n, k, cond, res[0][k], res[1][k], left));
			continue;
		}
		if (a->dtype != b->dtype || a->rank != b->rank ||
		    memcmp(a->dim, b->dim, sizeof a->dim[0] * (size_t)a->rank)) {
			char ta[64], tb[64];
			snprintf(msg, sizeof msg, "output %d is %s in the then branch "
			         "and %s in the else branch: with a condition known "
			         "only at run time both must have one type", k,
			         value_type_str(a, ta, sizeof ta),
			         value_type_str(b, tb, sizeof tb));
			return fail_at(c, n, BURN_ERR_UNSUPPORTED, msg);
		}
		TRY(add1(c, g, OP_Where, n->name, "select", 3, w, n->out[k], left, NULL));
	}
	return BURN_OK;
}

/* ---- Loop ----------------------------------------------------------- */

static int expand_loop(Ctx *c, Graph *g, const Node *n, const Node *src,
                       Env *up, InferBudget *left)
{
	const Graph *body = sub_attr(src, "body");
	const Value *mv = NIN(g, n, 0), *cv = NIN(g, n, 1);
	int nstate = n->nin - 2, nscan, state[1024], bin[1026], bout[2050];
	int64_t trips = -1, t;
	int go = 1, **scan = NULL;
	char msg[320], prefix[512];

	if (!body)
		return fail_at(c, n, BURN_ERR_INVALID, "Loop needs a graph attribute body");
	nscan = body->nout - 1 - nstate;
	if (nstate < 0 || body->nin != nstate + 2 || nscan < 0 || n->nout != nstate + nscan ||
	    nstate > 1024 || body->nout > 2050) {
		snprintf(msg, sizeof msg, "the body has %d inputs and %d outputs; a "
		         "Loop with %d carried values needs %d inputs and at least "
		         "%d outputs, and the node then has %d outputs (it has %d)",
		         body->nin, body->nout, nstate, nstate + 2, nstate + 1,
		         body->nout - 1, n->nout);
		return fail_at(c, n, BURN_ERR_INVALID, msg);
	}
	if (mv) {
		if (value_numel(mv) != 1 || !dtype_is_int(mv->dtype))
			return fail_at(c, n, BURN_ERR_SHAPE, "the trip count M must be "
			               "one integer");
		if (!mv->data) {
			snprintf(msg, sizeof msg, "the trip count ('%s') must be a "
			         "constant: Loop is unrolled (run-time trip counts are "
			         "not supported)", mv->name);
			return fail_at(c, n, BURN_ERR_UNSUPPORTED, msg);
		}
		trips = value_get_i(mv, 0);
		if (trips < 0) {
			snprintf(msg, sizeof msg, "the trip count is %lld, negative",
			         (long long)trips);
			return fail_at(c, n, BURN_ERR_INVALID, msg);
		}
		if (trips > CF_MAX_TRIPS) {
			snprintf(msg, sizeof msg, "the trip count is %lld: an unrolled "
			         "Loop may have at most %d iterations", (long long)trips,
			         CF_MAX_TRIPS);
			return fail_at(c, n, BURN_ERR_LIMIT, msg);
		}
	}
	if (cv) {
		if (value_numel(cv) != 1 || cv->dtype != DT_BOOL)
			return fail_at(c, n, BURN_ERR_SHAPE, "the condition must be one bool");
		if (!cv->data) {
			snprintf(msg, sizeof msg, "the condition ('%s') must be a "
			         "constant: Loop is unrolled (run-time conditions are "
			         "not supported)", cv->name);
			return fail_at(c, n, BURN_ERR_UNSUPPORTED, msg);
		}
		go = value_get_i(cv, 0) != 0;
	}
	for (int k = 0; k < nstate; k++)
		state[k] = n->in[2 + k];
	if (nscan && !(scan = arena_alloc(&g->arena, sizeof *scan * (size_t)nscan)))
		return nomem(c);
	for (int k = 0; k < nscan; k++)
		if (!(scan[k] = arena_alloc(&g->arena, sizeof **scan *
		                            (size_t)(trips >= 0 ? trips + 1 : CF_MAX_TRIPS))))
			return nomem(c);
	for (t = 0; go && (trips < 0 || t < trips); t++) {
		const Value *co;
		int one = 1;
		if (t >= CF_MAX_TRIPS) {
			snprintf(msg, sizeof msg, "the loop did not end within %d "
			         "iterations (an unrolled Loop's limit)", CF_MAX_TRIPS);
			return fail_at(c, n, BURN_ERR_LIMIT, msg);
		}
		snprintf(prefix, sizeof prefix, "%s/%lld", n->name, (long long)t);
		TRY(new_i64(c, g, prefix, "iter", 0, NULL, &t, &bin[0]));
		if ((bin[1] = new_value(g, prefix, "cond_in")) < 0)
			return nomem(c);
		TRY(graph_set_const(c, g, bin[1], DT_BOOL, 0, NULL, &one));
		for (int k = 0; k < nstate; k++)
			bin[2 + k] = state[k];
		TRY(copy_sub(c, g, n, body, bin, up, prefix, bout, left));
		for (int k = 0; k < nstate; k++)
			state[k] = bout[1 + k];
		for (int k = 0; k < nscan; k++)
			scan[k][t] = bout[1 + nstate + k];
		if (trips >= 0 && (t + 1 >= trips || !cv))
			continue;   /* the last iteration, or a for loop (no cond
			             * input): the body's condition is not read */
		co = GV(g, bout[0]);
		if (value_numel(co) != 1 || co->dtype != DT_BOOL)
			return fail_at(c, n, BURN_ERR_SHAPE, "the body's condition "
			               "output must be one bool");
		if (!co->data) {
			snprintf(msg, sizeof msg, "the body's condition ('%s') must "
			         "fold to a constant: Loop is unrolled (run-time "
			         "conditions are not supported)", co->name);
			return fail_at(c, n, BURN_ERR_UNSUPPORTED, msg);
		}
		go = value_get_i(co, 0) != 0;
	}
	snprintf(prefix, sizeof prefix, "%s/out", n->name);
	for (int k = 0; k < nstate; k++)
		if (n->out[k] >= 0)
			TRY(add1(c, g, OP_Identity, prefix, "final", 1, &state[k],
			         n->out[k], left, NULL));
	for (int k = 0; k < nscan; k++) {
		int r;
		if (n->out[nstate + k] < 0)
			continue;
		if (!t)
			return fail_at(c, n, BURN_ERR_UNSUPPORTED, "a scan output of a "
			               "Loop that runs no iteration (its element shape is "
			               "unknown)");
		TRY(stack(c, g, scan[k], (int)t, 0, n->out[nstate + k], prefix, left, &r));
	}
	return BURN_OK;
}

/* ---- Scan ----------------------------------------------------------- */

/* The attribute list `name` (nvals entries, default 0) into out; entries
 * are checked by the caller. */
static int axes_attr(Ctx *c, const Node *n, const Node *src, const char *name,
                     int nvals, int64_t *out)
{
	const int64_t *p;
	int cnt = attr_ints(src, name, &p);
	char msg[200];

	if (cnt && cnt != nvals) {
		snprintf(msg, sizeof msg, "attribute %s has %d entries, not %d",
		         name, cnt, nvals);
		return fail_at(c, n, BURN_ERR_INVALID, msg);
	}
	for (int k = 0; k < nvals; k++)
		out[k] = cnt ? p[k] : 0;
	return BURN_OK;
}

/* One Scan-9 run: states st[nstate] and scan inputs x[nx] (axes ia, dirs
 * id) through body; final states into fin, each scan output stacked
 * along oa[k] (dirs od) into so[k] (res: values to define, or -1). */
static int scan_run(Ctx *c, Graph *g, const Node *n, const Graph *body, Env *up,
                    int nstate, const int *st, int nx, const int *x,
                    const int64_t *ia, const int64_t *id, const int64_t *oa,
                    const int64_t *od, const int *res_fin, const int *res_scan,
                    const char *tag, InferBudget *left, int *fin, int *so)
{
	int nscan = body->nout - nstate, *state, *bin, *bout;
	int64_t len = -1;
	int **scan;
	char prefix[512], msg[320];

	/* from the arena, not the stack: Scans nest as deep as --max-depth */
	state = arena_alloc(&g->arena, sizeof *state * (size_t)(nstate + 1));
	bin = arena_alloc(&g->arena, sizeof *bin * (size_t)(nstate + nx + 1));
	bout = arena_alloc(&g->arena, sizeof *bout * (size_t)(body->nout + 1));
	if (!state || !bin || !bout)
		return nomem(c);

	for (int j = 0; j < nx; j++) {
		const Value *v = GV(g, x[j]);
		int64_t ax = ia[j] < 0 ? ia[j] + v->rank : ia[j];
		if (ax < 0 || ax >= v->rank) {
			snprintf(msg, sizeof msg, "scan input '%s' (rank %d) has no axis "
			         "%lld", v->name, v->rank, (long long)ia[j]);
			return fail_at(c, n, BURN_ERR_SHAPE, msg);
		}
		if (len >= 0 && v->dim[ax] != len) {
			snprintf(msg, sizeof msg, "scan inputs have sequence lengths "
			         "%lld and %lld ('%s')", (long long)len,
			         (long long)v->dim[ax], v->name);
			return fail_at(c, n, BURN_ERR_SHAPE, msg);
		}
		len = v->dim[ax];
	}
	if (len < 0)
		return fail_at(c, n, BURN_ERR_INVALID, "Scan needs a scan input");
	if (len > CF_MAX_TRIPS) {
		snprintf(msg, sizeof msg, "the sequence length is %lld: an unrolled "
		         "Scan may have at most %d iterations", (long long)len,
		         CF_MAX_TRIPS);
		return fail_at(c, n, BURN_ERR_LIMIT, msg);
	}
	if (nscan && len == 0)
		return fail_at(c, n, BURN_ERR_UNSUPPORTED, "scan outputs of an empty "
		               "sequence (their element shape is unknown)");
	if (!(scan = arena_alloc(&g->arena, sizeof *scan * (size_t)(nscan + 1))))
		return nomem(c);
	for (int k = 0; k < nscan; k++)
		if (!(scan[k] = arena_alloc(&g->arena, sizeof **scan * (size_t)(len + 1))))
			return nomem(c);
	for (int k = 0; k < nstate; k++)
		state[k] = st[k];
	for (int64_t t = 0; t < len; t++) {
		snprintf(prefix, sizeof prefix, "%s%s/%lld", n->name, tag, (long long)t);
		for (int k = 0; k < nstate; k++)
			bin[k] = state[k];
		for (int j = 0; j < nx; j++) {
			const Value *v = GV(g, x[j]);
			int64_t pos = id[j] ? len - 1 - t : t;
			int gi[2];
			gi[0] = x[j];
			TRY(new_i64(c, g, prefix, "pos", 0, NULL, &pos, &gi[1]));
			TRY(add1x(c, g, OP_Gather, prefix, "slice", 2, gi,
			          ia[j] < 0 ? ia[j] + v->rank : ia[j], -1, left,
			          &bin[nstate + j]));
		}
		TRY(copy_sub(c, g, n, body, bin, up, prefix, bout, left));
		for (int k = 0; k < nstate; k++)
			state[k] = bout[k];
		for (int k = 0; k < nscan; k++)
			scan[k][od[k] ? len - 1 - t : t] = bout[nstate + k];
	}
	snprintf(prefix, sizeof prefix, "%s%s/out", n->name, tag);
	for (int k = 0; k < nstate; k++)
		TRY(add1(c, g, OP_Identity, prefix, "final", 1, &state[k],
		         res_fin ? res_fin[k] : -1, left, &fin[k]));
	for (int k = 0; k < nscan; k++) {
		int r = GV(g, scan[k][0])->rank + 1;
		int64_t ax = oa[k] < 0 ? oa[k] + r : oa[k];
		if (ax < 0 || ax >= r) {
			snprintf(msg, sizeof msg, "scan output %d (rank %d) has no axis "
			         "%lld", k, r, (long long)oa[k]);
			return fail_at(c, n, BURN_ERR_SHAPE, msg);
		}
		TRY(stack(c, g, scan[k], (int)len, (int)ax, res_scan ? res_scan[k] : -1,
		          prefix, left, &so[k]));
	}
	return BURN_OK;
}

static int expand_scan(Ctx *c, Graph *g, const Node *n, const Node *src,
                       Env *up, InferBudget *left)
{
	const Graph *body = sub_attr(src, "body");
	int64_t nx = attr_int(src, "num_scan_inputs", -1);
	int64_t *ia, *id, *oa, *od;
	int v8 = g->opset < 9, first = v8 ? 1 : 0, nstate, nscan, *fin, *so;
	char msg[320];

	if (!body)
		return fail_at(c, n, BURN_ERR_INVALID, "Scan needs a graph attribute body");
	nstate = n->nin - first - (int)nx;
	if (nx < 1 || nstate < 0 || body->nin != nstate + nx ||
	    body->nout < nstate || n->nout != body->nout || body->nout > 1024) {
		snprintf(msg, sizeof msg, "num_scan_inputs %lld, %d inputs, %d "
		         "outputs: the body has %d inputs and %d outputs, and needs "
		         "one input per state and scan input and as many outputs "
		         "as the node", (long long)nx, n->nin, n->nout, body->nin,
		         body->nout);
		return fail_at(c, n, BURN_ERR_INVALID, msg);
	}
	nscan = body->nout - nstate;
	ia = arena_alloc(&g->arena, sizeof *ia * (size_t)(nx + 1));
	id = arena_alloc(&g->arena, sizeof *id * (size_t)(nx + 1));
	oa = arena_alloc(&g->arena, sizeof *oa * (size_t)(nscan + 1));
	od = arena_alloc(&g->arena, sizeof *od * (size_t)(nscan + 1));
	fin = arena_alloc(&g->arena, sizeof *fin * (size_t)(nstate + 1));
	so = arena_alloc(&g->arena, sizeof *so * (size_t)(nscan + 1));
	if (!ia || !id || !oa || !od || !fin || !so)
		return nomem(c);
	TRY(axes_attr(c, n, src, "scan_output_axes", nscan, oa));
	TRY(axes_attr(c, n, src, "scan_output_directions", nscan, od));
	if (!v8) {
		TRY(axes_attr(c, n, src, "scan_input_axes", (int)nx, ia));
		TRY(axes_attr(c, n, src, "scan_input_directions", (int)nx, id));
		return scan_run(c, g, n, body, up, nstate, n->in, (int)nx,
		                n->in + nstate, ia, id, oa, od, n->out, n->out + nstate,
		                "", left, fin, so);
	}
	/* Scan-8: axis 0 of every input and output is a batch axis; the body
	 * runs per item over axis 1 (axis 0 of the item) */
	TRY(axes_attr(c, n, src, "directions", (int)nx, id));
	for (int k = 0; k < nx; k++)
		ia[k] = 0;
	for (int k = 0; k < nscan; k++)
		oa[k] = od[k] = 0;
	int64_t batch = -1;
	for (int k = first; k < n->nin; k++) {
		const Value *v = NIN(g, n, k);
		if (!v || v->rank < (k < first + nstate ? 1 : 2) ||
		    (batch >= 0 && v->dim[0] != batch))
			return fail_at(c, n, BURN_ERR_SHAPE, "Scan-8's inputs must all "
			               "have one batch axis 0 (and scan inputs a "
			               "sequence axis 1)");
		batch = v->dim[0];
	}
	if (batch < 1 || batch > CF_MAX_TRIPS)
		return fail_at(c, n, BURN_ERR_UNSUPPORTED, "Scan-8 with an empty or "
		               "huge batch");
	const Value *sl = NIN(g, n, 0);
	if (sl) {
		int64_t len = GV(g, n->in[first + nstate])->dim[1];
		if (!sl->data || value_numel(sl) != batch)
			return fail_at(c, n, BURN_ERR_UNSUPPORTED, "Scan-8's sequence_lens "
			               "must be constant, one per batch item");
		for (int64_t b = 0; b < batch; b++)
			if (value_get_i(sl, b) != len)
				return fail_at(c, n, BURN_ERR_UNSUPPORTED, "Scan-8 with "
				               "sequence_lens shorter than the sequence");
	}
	int *fins = arena_alloc(&g->arena, sizeof *fins * (size_t)(batch * (nstate + nscan) + 1));
	if (!fins)
		return nomem(c);
	int *st = arena_alloc(&g->arena, sizeof *st * (size_t)(nstate + nx + 1));
	int *xs = st ? st + nstate : NULL;
	if (!st)
		return nomem(c);
	for (int64_t b = 0; b < batch; b++) {
		char tag[64], prefix[512];
		snprintf(tag, sizeof tag, "/b%lld", (long long)b);
		snprintf(prefix, sizeof prefix, "%s%s", n->name, tag);
		for (int k = 0; k < nstate + nx; k++) {
			int gi[2];
			gi[0] = n->in[first + k];
			TRY(new_i64(c, g, prefix, "item", 0, NULL, &b, &gi[1]));
			TRY(add1(c, g, OP_Gather, prefix, "item", 2, gi, -1, left,
			         k < nstate ? &st[k] : &xs[k - nstate]));
		}
		TRY(scan_run(c, g, n, body, up, nstate, st, (int)nx, xs, ia, id, oa,
		             od, NULL, NULL, tag, left, fin, so));
		for (int k = 0; k < nstate; k++)
			fins[k * batch + b] = fin[k];
		for (int k = 0; k < nscan; k++)
			fins[(nstate + k) * batch + b] = so[k];
	}
	for (int k = 0; k < nstate + nscan; k++) {
		char prefix[512];
		int r;
		snprintf(prefix, sizeof prefix, "%s/out", n->name);
		if (n->out[k] >= 0)
			TRY(stack(c, g, fins + (int64_t)k * batch, (int)batch, 0, n->out[k],
			          prefix, left, &r));
	}
	return BURN_OK;
}

/* Expand node i of g, whose attributes (subgraphs) are src's. */
/* ---- SequenceMap ---------------------------------------------------- */

/* The body once per position t of the sequence inputs (all one length),
 * with element t of each sequence input and the tensor inputs as they
 * are; output k the sequence of the copies' outputs k. */
static int expand_seqmap(Ctx *c, Graph *g, const Node *n, const Node *src,
                         Env *up, InferBudget *left)
{
	const Graph *body = sub_attr(src, "body");
	int len = GV(g, n->in[0])->nelem, bin[1024], bout[1024], **el;
	char msg[320], prefix[512];

	if (!body)
		return fail_at(c, n, BURN_ERR_INVALID, "SequenceMap needs a graph "
		               "attribute body");
	if (body->nin != n->nin || body->nout != n->nout || n->nout > 1024) {
		snprintf(msg, sizeof msg, "the body has %d inputs and %d outputs; "
		         "the node has %d and %d", body->nin, body->nout, n->nin, n->nout);
		return fail_at(c, n, BURN_ERR_INVALID, msg);
	}
	for (int k = 0; k < n->nin; k++) {
		const Value *v = NIN(g, n, k);
		if (!v || v->kind == VK_OPTNONE || (k == 0 && v->kind != VK_SEQ))
			return fail_at(c, n, BURN_ERR_INVALID, "input 0 must be a sequence "
			               "and the others sequences or tensors");
		if (v->kind == VK_SEQ && v->nelem != len) {
			snprintf(msg, sizeof msg, "the sequences '%s' and '%s' have %d "
			         "and %d tensors", GV(g, n->in[0])->name, v->name, len,
			         v->nelem);
			return fail_at(c, n, BURN_ERR_SHAPE, msg);
		}
	}
	if (!(el = arena_alloc(&g->arena, sizeof *el * (size_t)(n->nout + 1))))
		return nomem(c);
	for (int k = 0; k < n->nout; k++)
		if (!(el[k] = arena_alloc(&g->arena, sizeof **el * (size_t)(len + 1))))
			return nomem(c);
	for (int t = 0; t < len; t++) {
		snprintf(prefix, sizeof prefix, "%s/%d", n->name, t);
		for (int k = 0; k < n->nin; k++) {
			const Value *v = GV(g, n->in[k]);
			bin[k] = v->kind == VK_SEQ ? v->elem[t] : n->in[k];
		}
		TRY(copy_sub(c, g, n, body, bin, up, prefix, bout, left));
		for (int k = 0; k < n->nout; k++) {
			if (GV(g, bout[k])->kind == VK_SEQ || GV(g, bout[k])->kind == VK_OPTNONE)
				return fail_at(c, n, BURN_ERR_UNSUPPORTED, "the body gives a "
				               "sequence or optional (a sequence of sequences)");
			el[k][t] = bout[k];
		}
	}
	for (int k = 0; k < n->nout; k++)
		if (n->out[k] >= 0)
			TRY(seq_make(c, g, n->out[k], el[k], len,
			             len ? GV(g, el[k][0])->dtype : DT_F32));
	return BURN_OK;
}

static int expand(Ctx *c, Graph *g, int i, const Node *src, Env *up,
                  InferBudget *left)
{
	Node n = g->node[i];   /* a copy: g->node moves as nodes are added */

	for (int k = 0; k < n.nin; k++) {
		const Value *v = NIN(g, &n, k);
		if (v && v->kind != VK_SEQ && v->kind != VK_OPTNONE &&
		    (v->dtype == DT_UNDEF || v->rank < 0))
			return burn_fail(c, BURN_ERR_INTERNAL, "node '%s': input '%s' has "
			                 "no type", n.name, v->name);
	}
	g->node[i].dead = 1;   /* its outputs get defined by the copies */
	for (int k = 0; k < n.nout; k++)
		if (n.out[k] >= 0)
			GV(g, n.out[k])->producer = -1;
	switch (n.op) {
	case OP_If:   return expand_if(c, g, &n, src, up, left);
	case OP_Loop: return expand_loop(c, g, &n, src, up, left);
	case OP_Scan: return expand_scan(c, g, &n, src, up, left);
	case OP_SequenceMap: return expand_seqmap(c, g, &n, src, up, left);
	}
	if (op_table[n.op].cls == OC_SEQ)
		return seq_expand(c, g, &n, left);
	if (op_table[n.op].cls == OC_FUNC)
		return func_expand(c, g, &n, src, left);
	return burn_fail(c, BURN_ERR_INTERNAL, "node '%s': not control flow", n.name);
}

int cf_expand(Ctx *c, Graph *g, int i, InferBudget *left, int *added)
{
	int first = g->nnode, nt, at = i + 1;
	const char *onode = c->node, *oop = c->op;
	Node src = g->node[i];
	Node *tmp;

	c->node = src.name;
	c->op = op_table[src.op].name;
	TRY(expand(c, g, i, &src, NULL, left));
	for (int k = 0; k < src.nout; k++)
		if (src.out[k] >= 0 && GV(g, src.out[k])->producer < 0 &&
		    !GV(g, src.out[k])->data && GV(g, src.out[k])->kind != VK_SEQ &&
		    GV(g, src.out[k])->kind != VK_OPTNONE)
			return fail_at(c, &src, BURN_ERR_INTERNAL, "an output is left "
			               "undefined");
	/* move the nodes placed at the end to right after node i */
	nt = g->nnode - first;
	*added = nt;
	if (nt && first > at) {
		if (!(tmp = arena_alloc(&g->arena, sizeof *tmp * (size_t)nt)))
			return nomem(c);
		memcpy(tmp, &g->node[first], sizeof *tmp * (size_t)nt);
		memmove(&g->node[at + nt], &g->node[at], sizeof *tmp * (size_t)(first - at));
		memcpy(&g->node[at], tmp, sizeof *tmp * (size_t)nt);
		for (int j = at; j < g->nnode; j++) {
			const Node *m = &g->node[j];
			if (m->dead)
				continue;
			for (int k = 0; k < m->nout; k++)
				if (m->out[k] >= 0) {
					GV(g, m->out[k])->producer = j;
					GV(g, m->out[k])->producer_out = k;
				}
		}
	}
	c->node = onode;
	c->op = oop;
	return BURN_OK;
}

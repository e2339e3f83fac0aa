/*
 * autodiff.c - reverse-mode differentiation on the graph IR (autodiff.h),
 * and the node builder the gradient rules (grad_ops.c) use.
 *
 * The pass walks the forward nodes once, last to first (they are in
 * topological order), and asks each node's rule for its inputs'
 * gradients given its outputs'.  Gradients reaching a value from several
 * uses are summed.  Only nodes between the values differentiated for and
 * the loss are visited: a node none of whose inputs depends on a wrt value
 * gets no rule call, so a Shape -> Gather chain never needs one.
 */
#include <stdlib.h>
#include <string.h>
#include "autodiff.h"
#include "lower.h"

/* ---- builder --------------------------------------------------------- */

static const char *new_name(AD *a, const char *what)
{
	return arena_printf(&a->g->arena, "grad/%s%d", what, a->seq++);
}

int ad_node(AD *a, int op, int nin, const int *in)
{
	int out, nd;

	if (a->c->code)
		return -1;
	for (int k = 0; k < nin; k++)
		if (in[k] < -1 || in[k] >= a->g->nval)
			return -1;
	out = graph_add_value(a->g, new_name(a, "v"));
	if (out < 0 || (nd = graph_add_node(a->g, op, new_name(a, "n"), nin, in,
	                                    1, &out)) < 0) {
		burn_fail(a->c, BURN_ERR_NOMEM, "out of memory");
		return -1;
	}
	return nd;
}

static Attr *add_attr(AD *a, int nd, const char *name, int type)
{
	Attr *at;

	if (nd < 0)
		return NULL;
	if (!(at = node_add_attr(a->g, nd, name, type)))
		burn_fail(a->c, BURN_ERR_NOMEM, "out of memory");
	return at;
}

void ad_attr_i(AD *a, int nd, const char *name, int64_t v)
{
	Attr *at = add_attr(a, nd, name, AT_INT);
	if (at)
		at->i = v;
}

void ad_attr_f(AD *a, int nd, const char *name, double v)
{
	Attr *at = add_attr(a, nd, name, AT_FLOAT);
	if (at)
		at->f = v;
}

void ad_attr_s(AD *a, int nd, const char *name, const char *v)
{
	Attr *at = add_attr(a, nd, name, AT_STRING);
	if (at) {
		at->s = arena_strdup(&a->g->arena, v);
		at->slen = (int64_t)strlen(v);
	}
}

void ad_attr_ints(AD *a, int nd, const char *name, int n, const int64_t *v)
{
	Attr *at = add_attr(a, nd, name, AT_INTS);
	if (at) {
		at->n = n;
		at->ints = arena_alloc(&a->g->arena, sizeof *v * (size_t)(n ? n : 1));
		if (!at->ints) {
			burn_fail(a->c, BURN_ERR_NOMEM, "out of memory");
			return;
		}
		if (n)
			memcpy(at->ints, v, sizeof *v * (size_t)n);
	}
}

void ad_attr_copy(AD *a, int nd, const Node *from)
{
	if (nd < 0)
		return;
	/* attributes are read-only after loading: sharing the array is safe,
	 * and node_add_attr copies it before appending */
	a->g->node[nd].attr = from->attr;
	a->g->node[nd].nattr = from->nattr;
}

int ad_done(AD *a, int nd)
{
	Node *n;
	int rc;

	if (nd < 0 || a->c->code)
		return -1;
	n = &a->g->node[nd];
	for (int k = 0; k < n->nin; k++) {
		const Value *v = NIN(a->g, n, k);
		if (v && (v->dtype == DT_UNDEF || v->rank < 0)) {
			burn_fail(a->c, BURN_ERR_INTERNAL, "gradient node %s: input %d "
			          "has no type", op_table[n->op].name, k);
			return -1;
		}
	}
	rc = op_impl[n->op].infer(a->c, a->g, n);
	if (rc) {
		/* the message says what; say that a gradient node failed */
		if (!a->c->code)
			burn_fail(a->c, rc, "gradient node %s failed inference",
			          op_table[n->op].name);
		return -1;
	}
	return n->out[0];
}

int ad_op1(AD *a, int op, int x)
{
	return ad_done(a, ad_node(a, op, 1, &x));
}

int ad_op2(AD *a, int op, int x, int y)
{
	int in[2] = { x, y };
	if (x < 0 || y < 0)
		return -1;
	return ad_done(a, ad_node(a, op, 2, in));
}

int ad_op3(AD *a, int op, int x, int y, int z)
{
	int in[3] = { x, y, z };
	if (x < 0 || y < 0 || z < 0)
		return -1;
	return ad_done(a, ad_node(a, op, 3, in));
}

int ad_const(AD *a, int dtype, int rank, const int64_t *dim, const void *data)
{
	int v;

	if (a->c->code)
		return -1;
	if ((v = graph_add_value(a->g, new_name(a, "c"))) < 0) {
		burn_fail(a->c, BURN_ERR_NOMEM, "out of memory");
		return -1;
	}
	if (graph_set_const(a->c, a->g, v, dtype, rank, dim, data))
		return -1;
	return v;
}

/* One element of dtype holding x. */
int ad_scalar(AD *a, int dtype, double x)
{
	float f = (float)x;
	int64_t i = (int64_t)x;

	if (dtype == DT_I64)
		return ad_const(a, dtype, 0, NULL, &i);
	if (!dtype_is_float(dtype))
		return ad_cast(a, ad_const(a, DT_I64, 0, NULL, &i), dtype);
	if (dtype == DT_F64)
		return ad_const(a, dtype, 0, NULL, &x);
	if (dtype == DT_F32)
		return ad_const(a, dtype, 0, NULL, &f);
	/* f16/bf16: a f32 constant cast to the type */
	return ad_cast(a, ad_const(a, DT_F32, 0, NULL, &f), dtype);
}

int ad_k(AD *a, int x, double v)
{
	if (x < 0)
		return -1;
	return ad_scalar(a, GV(a->g, x)->dtype, v);
}

int ad_ints(AD *a, int n, const int64_t *v)
{
	int64_t d = n;
	return ad_const(a, DT_I64, 1, &d, v);
}

int ad_reshape(AD *a, int x, int rank, const int64_t *dim)
{
	const Value *v;

	if (x < 0)
		return -1;
	v = GV(a->g, x);
	int zero = 0, nd;

	if (v->rank == rank && !memcmp(v->dim, dim, sizeof *dim * (size_t)rank))
		return x;
	for (int i = 0; i < rank; i++)
		zero |= dim[i] == 0;
	nd = ad_node(a, OP_Reshape, 2, (int[]){ x, ad_ints(a, rank, dim) });
	if (zero)   /* a 0 in the shape is a 0, not "copy the dim" */
		ad_attr_i(a, nd, "allowzero", 1);
	return ad_done(a, nd);
}

int ad_reshape_as(AD *a, int x, int like)
{
	int64_t d[BURN_MAX_RANK];
	int r;

	if (like < 0)
		return -1;
	r = GV(a->g, like)->rank;
	memcpy(d, GV(a->g, like)->dim, sizeof d);
	return ad_reshape(a, x, r, d);
}

int ad_expand_as(AD *a, int x, int like)
{
	int64_t d[BURN_MAX_RANK];
	int r;

	if (x < 0 || like < 0)
		return -1;
	r = GV(a->g, like)->rank;
	memcpy(d, GV(a->g, like)->dim, sizeof d);
	if (GV(a->g, x)->rank == r && !memcmp(GV(a->g, x)->dim, d, sizeof *d * (size_t)r))
		return x;
	return ad_op2(a, OP_Expand, x, ad_ints(a, r, d));
}

int ad_transpose(AD *a, int x, int rank, const int64_t *perm)
{
	int nd;
	int id = 1;

	for (int i = 0; i < rank; i++)
		id &= perm[i] == i;
	if (id || x < 0)
		return x;
	nd = ad_node(a, OP_Transpose, 1, &x);
	ad_attr_ints(a, nd, "perm", rank, perm);
	return ad_done(a, nd);
}

int ad_cast(AD *a, int x, int dtype)
{
	int nd;

	if (x < 0)
		return -1;
	if (GV(a->g, x)->dtype == dtype)
		return x;
	nd = ad_node(a, OP_Cast, 1, &x);
	ad_attr_i(a, nd, "to", dtype);
	return ad_done(a, nd);
}

int ad_rsum(AD *a, int x, unsigned mask, int keep)
{
	int64_t ax[BURN_MAX_RANK];
	int n = 0, r, nd;

	if (x < 0)
		return -1;
	r = GV(a->g, x)->rank;
	for (int i = 0; i < r; i++)
		if (mask >> i & 1)
			ax[n++] = i;
	if (!n)
		return x;
	/* axes: an attribute before opset 13, an input from it */
	if (a->g->opset >= 13) {
		nd = ad_node(a, OP_ReduceSum, 2, (int[]){ x, ad_ints(a, n, ax) });
	} else {
		nd = ad_node(a, OP_ReduceSum, 1, &x);
		ad_attr_ints(a, nd, "axes", n, ax);
	}
	ad_attr_i(a, nd, "keepdims", keep);
	return ad_done(a, nd);
}

int ad_slice(AD *a, int x, int axis, int64_t start, int64_t end)
{
	int nd;

	if (x < 0)
		return -1;
	if (start == 0 && end == GV(a->g, x)->dim[axis])
		return x;
	/* starts, ends, axes: attributes before opset 10 */
	if (a->g->opset >= 10) {
		int64_t ax = axis;
		int in[4] = { x, ad_ints(a, 1, &start), ad_ints(a, 1, &end),
		              ad_ints(a, 1, &ax) };
		nd = ad_node(a, OP_Slice, 4, in);
	} else {
		int64_t ax = axis;
		nd = ad_node(a, OP_Slice, 1, &x);
		ad_attr_ints(a, nd, "starts", 1, &start);
		ad_attr_ints(a, nd, "ends", 1, &end);
		ad_attr_ints(a, nd, "axes", 1, &ax);
	}
	return ad_done(a, nd);
}

int ad_zeros_like(AD *a, int like)
{
	const Value *v;
	int64_t one = 1;
	Tensor *t;
	int nd, dt, r;
	int64_t d[BURN_MAX_RANK];

	if (like < 0)
		return -1;
	v = GV(a->g, like);
	dt = v->dtype;
	r = v->rank;
	memcpy(d, v->dim, sizeof d);
	nd = ad_node(a, OP_ConstantOfShape, 1, (int[]){ ad_ints(a, r, d) });
	if (nd < 0)
		return -1;
	t = arena_alloc(&a->g->arena, sizeof *t);
	if (!t || !(t->data = arena_alloc(&a->g->arena, 8))) {
		burn_fail(a->c, BURN_ERR_NOMEM, "out of memory");
		return -1;
	}
	t->dtype = dt;
	t->rank = 1;
	t->dim[0] = one;
	t->nbytes = dtype_size(dt);
	{
		Attr *at = add_attr(a, nd, "value", AT_TENSOR);
		if (at)
			at->t = t;
	}
	return ad_done(a, nd);
}

int ad_unbroadcast(AD *a, int gr, int like)
{
	int64_t ld[BURN_MAX_RANK];
	const Value *g, *l;
	unsigned mask = 0;
	int rs, rl, lead;

	if (gr < 0 || like < 0)
		return -1;
	g = GV(a->g, gr);
	l = GV(a->g, like);
	rs = g->rank;
	rl = l->rank;
	memcpy(ld, l->dim, sizeof ld);
	if (rl > rs) {
		burn_fail(a->c, BURN_ERR_INTERNAL, "gradient of rank %d for a value "
		          "of rank %d", rs, rl);
		return -1;
	}
	lead = rs - rl;
	for (int i = 0; i < rs; i++)
		if (i < lead || (ld[i - lead] == 1 && g->dim[i] != 1))
			mask |= 1u << i;
	return ad_reshape(a, ad_rsum(a, gr, mask, 1), rl, ld);
}

/* ---- the pass -------------------------------------------------------- */

int nodiff(AD *a, const Node *n, const int *gout, int *gin)
{
	(void)a; (void)n; (void)gout; (void)gin;
	return BURN_OK;
}

static int same_type(const Value *x, const Value *y)
{
	return x->dtype == y->dtype && x->rank == y->rank &&
	       !memcmp(x->dim, y->dim, sizeof x->dim[0] * (size_t)x->rank);
}

/* Differentiate forward node i: its rule, then the sums into a->grad. */
static int visit(AD *a, int i, const char *reach)
{
	Graph *g = a->g;
	Node n = g->node[i];
	int gout[64], gin[64], any = 0, need = 0;
	char want[64];
	GradRule rule = op_grad[n.op];

	if (n.nin > 64 || n.nout > 64)
		return burn_fail(a->c, BURN_ERR_UNSUPPORTED, "more than 64 inputs or outputs");
	for (int k = 0; k < n.nout; k++) {
		gout[k] = n.out[k] >= 0 && n.out[k] < a->nval0 ? a->grad[n.out[k]] : -1;
		any |= gout[k] >= 0;
	}
	for (int k = 0; k < n.nin; k++) {
		const Value *v = NIN(g, &n, k);
		want[k] = v && reach[n.in[k]] && dtype_is_float(v->dtype) &&
		          !dtype_cast_only(v->dtype);
		need |= want[k];
		gin[k] = -1;
	}
	if (!any || !need || rule == nodiff)
		return BURN_OK;
	if (!rule)
		return burn_fail(a->c, BURN_ERR_UNSUPPORTED, "no gradient rule for op "
		                 "%s", op_table[n.op].name);
	a->want = want;
	TRY(rule(a, &n, gout, gin));
	if (a->c->code)
		return a->c->code;
	for (int k = 0; k < n.nin; k++) {
		int v = n.in[k], s;
		char t1[128], t2[128];
		if (!want[k] || gin[k] < 0)
			continue;
		if (!same_type(GV(g, gin[k]), GV(g, v)))
			return burn_fail(a->c, BURN_ERR_INTERNAL, "the gradient rule of %s "
			                 "gave %s for input %d of type %s",
			                 op_table[n.op].name,
			                 value_type_str(GV(g, gin[k]), t1, sizeof t1), k,
			                 value_type_str(GV(g, v), t2, sizeof t2));
		s = a->grad[v] < 0 ? gin[k] : ad_op2(a, OP_Add, a->grad[v], gin[k]);
		if (s < 0)
			return a->c->code ? a->c->code : BURN_ERR_INTERNAL;
		a->grad[v] = s;
	}
	return BURN_OK;
}

static int run(AD *a, int loss, int nwrt, const int *wrt, int *out_grad, char *reach)
{
	Graph *g = a->g;
	const Value *l = GV(g, loss);
	int nnode0 = g->nnode;

	if (!dtype_is_float(l->dtype) || value_numel(l) != 1)
		return burn_fail(a->c, BURN_ERR_INVALID, "the loss '%s' is not one float",
		                 l->name);
	for (int j = 0; j < nwrt; j++) {
		if (wrt[j] < 0 || wrt[j] >= a->nval0 ||
		    !dtype_is_float(GV(g, wrt[j])->dtype))
			return burn_fail(a->c, BURN_ERR_INVALID, "cannot differentiate "
			                 "with respect to value %d: not a float value", wrt[j]);
		reach[wrt[j]] = 1;
	}
	/* which values depend on a wrt value (through float values) */
	for (int i = 0; i < nnode0; i++) {
		const Node *n = &g->node[i];
		int r = 0;
		if (n->dead)
			continue;
		for (int k = 0; k < n->nin; k++)
			r |= n->in[k] >= 0 && reach[n->in[k]];
		for (int k = 0; r && k < n->nout; k++)
			if (n->out[k] >= 0 && dtype_is_float(GV(g, n->out[k])->dtype))
				reach[n->out[k]] = 1;
	}
	{
		int64_t d[BURN_MAX_RANK];
		int r = l->rank;
		memcpy(d, l->dim, sizeof d);
		for (int i = 0; i < r; i++)
			d[i] = 1;
		a->grad[loss] = ad_reshape(a, ad_scalar(a, l->dtype, 1.0), r, d);
		if (a->grad[loss] < 0)
			return a->c->code;
	}
	for (int i = nnode0 - 1; i >= 0; i--) {
		if (g->node[i].dead)
			continue;
		a->c->node = g->node[i].name;
		a->c->op = op_table[g->node[i].op].name;
		TRY(visit(a, i, reach));
		a->c->node = NULL;
		a->c->op = NULL;
	}
	for (int j = 0; j < nwrt; j++) {
		out_grad[j] = a->grad[wrt[j]] >= 0 ? a->grad[wrt[j]] : ad_zeros_like(a, wrt[j]);
		if (out_grad[j] < 0)
			return a->c->code ? a->c->code : BURN_ERR_INTERNAL;
	}
	return BURN_OK;
}

int pass_autodiff(Ctx *c, Graph *g, int loss, int nwrt, const int *wrt,
                  int *out_grad)
{
	AD a = { c, g, g->nval, NULL, NULL, 0 };
	char *reach;
	int rc;

	if (loss < 0 || loss >= g->nval)
		return burn_fail(c, BURN_ERR_INVALID, "no loss value");
	a.grad = malloc(sizeof *a.grad * ((size_t)g->nval + 1));
	reach = calloc((size_t)g->nval + 1, 1);
	if (!a.grad || !reach) {
		free(a.grad);
		free(reach);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	for (int i = 0; i < g->nval; i++)
		a.grad[i] = -1;
	rc = run(&a, loss, nwrt, wrt, out_grad, reach);
	c->node = NULL;
	c->op = NULL;
	free(a.grad);
	free(reach);
	return rc;
}

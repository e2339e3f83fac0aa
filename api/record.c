/*
 * record.c - ops recorded into the pending graph (internal.h): burn_op,
 * the common ops as calls, and burn_call_graph.
 *
 * Recording a node: its inputs become values of ctx->pg (a realised
 * tensor read for the first time since the last reset becomes a leaf
 * value holding a reference to its buffer), its outputs new values, and
 * the op's own shape/type inference (the op table's infer column, the one
 * the passes run) types them at once, so a bad shape is reported at the
 * call.  A failed call truncates pg back to where it was: it changes
 * nothing.
 */
#include <stdlib.h>
#include <string.h>
#include "../passes/passes.h"
#include "../passes/lower.h"
#include "internal.h"

/* "t123": names of pg values, without printf on the recording path. */
static void
name_of(char *buf, char c, int n)
{
	char tmp[16];
	int k = 0;

	*buf++ = c;
	do
		tmp[k++] = (char)('0' + n % 10);
	while ((n /= 10) > 0);
	while (k > 0)
		*buf++ = tmp[--k];
	*buf = 0;
}

static void
rollback(burn_ctx *ctx, int nval0, int nnode0)
{
	for (int v = nval0; v < ctx->pg->nval && v < ctx->cappv; v++) {
		PVal *p = &ctx->pv[v];
		if (p->buf) {
			burn_tensor *t;
			for (t = ctx->live; t; t = t->next)
				if (t->epoch == ctx->epoch && t->val == v)
					t->val = -1;
			api_buf_unref(ctx, p->buf);
		}
		if (p->ph)
			ctx->nph--;
		memset(p, 0, sizeof *p);
	}
	ctx->pg->nval = nval0;
	ctx->pg->nnode = nnode0;
}

/* Its value in pg: a new leaf unless it has one.  rt: a small integer
 * tensor stays an input of the program (a model's input: token ids are
 * data, not shapes), instead of a constant. */
static int
value_of(burn_ctx *ctx, burn_tensor *t, int rt, int *out)
{
	Value *v;
	int i;
	char nm[24];

	if (t->epoch == ctx->epoch && t->val >= 0) {
		*out = t->val;
		return BURN_OK;
	}
	if (!t->buf)
		return burn_fail(&ctx->c, BURN_ERR_INTERNAL, "a pending tensor has no value");
	name_of(nm, 'x', ctx->pg->nval);
	if ((i = graph_add_value(ctx->pg, nm)) < 0)
		return burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
	if (api_pv_fit(ctx)) {
		ctx->pg->nval--;
		return ctx->c.code;
	}
	v = GV(ctx->pg, i);
	v->kind = VK_INPUT;
	v->dtype = t->dtype;
	v->rank = t->rank;
	memcpy(v->dim, t->dim, sizeof *v->dim * (size_t)t->rank);
	if ((!rt && (dtype_is_int(t->dtype) || t->dtype == DT_BOOL) &&
	     t->numel <= API_CONST_INTS) || t->frozen) {
		/* a constant of the cut graph: inference may read it (a frozen
		 * tensor's is named by its id in the signature, not its bytes) */
		v->kind = VK_CONST;
		v->data = t->buf->data;
	}
	memset(&ctx->pv[i], 0, sizeof ctx->pv[i]);
	ctx->pv[i].frozen = t->frozen;
	ctx->pv[i].buf = t->buf;
	t->buf->refs++;
	t->val = i;
	t->epoch = ctx->epoch;
	*out = i;
	return BURN_OK;
}

int
api_value_of(burn_ctx *ctx, burn_tensor *t, int *out)
{
	return value_of(ctx, t, 0, out);
}

/* A constant of pg: a scalar or a small vector (rank 0 or 1). */
static int
const_value(burn_ctx *ctx, int dt, int rank, int64_t n, const void *data, int *out)
{
	char nm[24];
	int v;

	name_of(nm, 'c', ctx->pg->nval);
	if ((v = graph_add_value(ctx->pg, nm)) < 0)
		return burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
	TRY(api_pv_fit(ctx));
	memset(&ctx->pv[v], 0, sizeof ctx->pv[v]);
	TRY(graph_set_const(&ctx->c, ctx->pg, v, dt, rank, &n, data));
	*out = v;
	return BURN_OK;
}

/* A deep copy of attribute a onto node of g (in g's arena). */
int
api_copy_attr(Ctx *c, Graph *g, int node, const Attr *a)
{
	Arena *ar = &g->arena;
	Attr *d = node_add_attr(g, node, a->name, a->type);

	if (!d)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	d->i = a->i;
	d->f = a->f;
	d->n = a->n;
	switch (a->type) {
	case AT_STRING:
		d->s = arena_strndup(ar, a->s ? a->s : "", a->s ? (size_t)a->slen : 0);
		d->slen = a->s ? a->slen : 0;
		if (!d->s)
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		break;
	case AT_INTS:
		d->ints = arena_alloc(ar, sizeof *d->ints * (size_t)(a->n + 1));
		if (!d->ints)
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		if (a->n)
			memcpy(d->ints, a->ints, sizeof *d->ints * (size_t)a->n);
		break;
	case AT_FLOATS:
		d->floats = arena_alloc(ar, sizeof *d->floats * (size_t)(a->n + 1));
		if (!d->floats)
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		if (a->n)
			memcpy(d->floats, a->floats, sizeof *d->floats * (size_t)a->n);
		break;
	case AT_STRINGS:
		d->strs = arena_alloc(ar, sizeof *d->strs * (size_t)(a->n + 1));
		if (!d->strs)
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		for (int k = 0; k < a->n; k++)
			if (!(d->strs[k] = arena_strdup(ar, a->strs[k])))
				return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		break;
	case AT_TENSOR: {
		Tensor *t = arena_alloc(ar, sizeof *t);
		if (!t)
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		*t = *a->t;
		if (!(t->data = arena_alloc(ar, (size_t)(a->t->nbytes + 1))))
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		if (a->t->nbytes)
			memcpy(t->data, a->t->data, (size_t)a->t->nbytes);
		d->t = t;
		break;
	}
	case AT_INT: case AT_FLOAT:
		break;
	default:
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "attribute '%s': %s "
		                 "attributes are not supported by libburn", a->name,
		                 attr_type_name(a->type));
	}
	return BURN_OK;
}

/* "f32[2,3]" of value v, or "none". */
static void
type_str(const Graph *g, int v, char *buf, size_t n)
{
	if (v < 0)
		snprintf(buf, n, "none");
	else
		value_type_str(GV(g, v), buf, n);
}

/* Record op over values ins; its outputs' values in outs.  On failure the
 * caller rolls back. */
static int
record_v(burn_ctx *ctx, int op, int nin, const int *ins, int nattr,
         const Attr *attr, int nout, int *outs, int *node_out)
{
	Graph *g = ctx->pg;
	char nm[24];
	int node, sym = 0, rc;
	int mi, xi;

	op_inputs(op, g->opset, &mi, &xi);
	if (nin < mi || nin > xi)
		return burn_fail(&ctx->c, BURN_ERR_INVALID, "%s takes %d to %d inputs, "
		                 "not %d", op_table[op].name, mi, xi, nin);
	if (nout < op_table[op].min_out || nout > op_table[op].max_out)
		return burn_fail(&ctx->c, BURN_ERR_INVALID, "%s gives %d to %d outputs, "
		                 "not %d", op_table[op].name, op_table[op].min_out,
		                 op_table[op].max_out, nout);
	for (int k = 0; k < nin; k++) {
		if (ins[k] < 0)
			continue;
		if (ctx->pv[ins[k]].sym)
			sym = 1;
		const Value *v = GV(g, ins[k]);
		if (!dtype_supported(v->dtype) || dtype_cast_only(v->dtype))
			return burn_fail(&ctx->c, BURN_ERR_UNSUPPORTED, "%s: input %d has "
			                 "dtype %s", op_table[op].name, k, dtype_name(v->dtype));
	}
	for (int k = 0; k < nout; k++) {
		name_of(nm, 't', g->nval);
		if ((outs[k] = graph_add_value(g, nm)) < 0)
			return burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
	}
	TRY(api_pv_fit(ctx));
	for (int k = 0; k < nout; k++) {
		memset(&ctx->pv[outs[k]], 0, sizeof ctx->pv[outs[k]]);
		ctx->pv[outs[k]].sym = sym;
	}
	name_of(nm, 'n', g->nnode);
	if ((node = graph_add_node(g, op, nm, nin, ins, nout, outs)) < 0)
		return burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
	for (int k = 0; k < nout; k++) {
		GV(g, outs[k])->producer = node;
		GV(g, outs[k])->producer_out = k;
	}
	for (int a = 0; a < nattr; a++)
		TRY(api_copy_attr(&ctx->c, g, node, &attr[a]));
	ctx->c.node = ctx->c.op = NULL;
	if ((rc = op_impl[op].infer(&ctx->c, g, &g->node[node])) != 0) {
		/* name the op and every input's type before the reason */
		char msg[sizeof ctx->c.msg], t[64];
		size_t n = 0;
		n += (size_t)snprintf(msg + n, sizeof msg - n, "%s(", op_table[op].name);
		for (int k = 0; k < nin && n < sizeof msg; k++) {
			type_str(g, ins[k], t, sizeof t);
			n += (size_t)snprintf(msg + n, sizeof msg - n, "%s%s", k ? ", " : "", t);
		}
		if (n < sizeof msg)
			snprintf(msg + n, sizeof msg - n, "): %s", ctx->c.msg);
		memcpy(ctx->c.msg, msg, sizeof msg);
		return rc;
	}
	for (int k = 0; k < nout; k++) {
		const Value *v = GV(g, outs[k]);
		if (v->dtype != DT_UNDEF && v->rank >= 0 &&
		    (!dtype_supported(v->dtype) || !value_shape_known(v)))
			return burn_fail(&ctx->c, BURN_ERR_UNSUPPORTED, "%s: output %d is %s",
			                 op_table[op].name, k, dtype_name(v->dtype));
	}
	/* small results of constants are constants at once, as the passes
	 * would fold them: shape arithmetic (Shape -> Gather -> Concat ->
	 * Expand) then gives the next op the constant its inference needs */
	int small = 1, folded;
	for (int k = 0; k < nout && small; k++) {
		const Value *v = GV(g, outs[k]);
		small = v->dtype == DT_UNDEF || v->rank < 0 ||
		        value_numel(v) <= API_CONST_INTS;
	}
	if (small)
		TRY(pass_fold_node(&ctx->c, g, &g->node[node], &folded));
	if (node_out)
		*node_out = node;
	return BURN_OK;
}

/* A tensor for pending value v (retaining the one there is). */
static int
tensor_for(burn_ctx *ctx, int v, burn_tensor **out)
{
	const Value *val = GV(ctx->pg, v);
	burn_tensor *t;

	*out = NULL;
	if (val->dtype == DT_UNDEF || val->rank < 0)
		return BURN_OK;     /* an optional output the op does not give */
	if (ctx->pv[v].t) {
		*out = burn_retain(ctx->pv[v].t);
		return BURN_OK;
	}
	TRY(api_tensor_new(ctx, val->dtype, val->rank, val->dim, &t));
	if (ctx->pv[v].buf) {       /* a leaf: the tensor is realised */
		t->buf = ctx->pv[v].buf;
		t->buf->refs++;
	} else
		ctx->pv[v].t = t;
	t->val = v;
	t->epoch = ctx->epoch;
	*out = t;
	return BURN_OK;
}

static void
maybe_sync(burn_ctx *ctx)
{
	if (ctx->pg->nnode >= ctx->opt.max_pending && !ctx->nph) {
		/* the op succeeded; a failure here shows at the next sync */
		api_realise(ctx);
		api_begin(ctx);
	}
}

int
api_record(burn_ctx *ctx, int op, int nin, burn_tensor *const *in,
           int nattr, const Attr *attr, int nout, burn_tensor **out)
{
	int nval0 = ctx->pg->nval, nnode0 = ctx->pg->nnode;
	int insb[16], outsb[16], *ins = insb, *outs = outsb, rc = BURN_OK;

	for (int k = 0; k < nout; k++)
		out[k] = NULL;
	if (nin > 16 || nout > 16) {
		ins = malloc(sizeof *ins * (size_t)(nin + 1));
		outs = malloc(sizeof *outs * (size_t)(nout + 1));
		if (!ins || !outs) {
			rc = burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
			goto done;
		}
	}
	for (int k = 0; k < nin && !rc; k++) {
		ins[k] = -1;
		if (in[k] && !(rc = api_check_tensor(ctx, in[k], "an input")))
			rc = api_value_of(ctx, in[k], &ins[k]);
	}
	if (!rc)
		rc = record_v(ctx, op, nin, ins, nattr, attr, nout, outs, NULL);
	for (int k = 0; k < nout && !rc; k++)
		rc = tensor_for(ctx, outs[k], &out[k]);
	if (rc) {
		for (int k = 0; k < nout; k++) {
			burn_release(out[k]);
			out[k] = NULL;
		}
		rollback(ctx, nval0, nnode0);
	}
done:
	if (ins != insb)
		free(ins);
	if (outs != outsb)
		free(outs);
	if (!rc)
		maybe_sync(ctx);
	return rc;
}

/* ---- the public calls ---------------------------------------------------- */

#define BEGIN(ctx) do { if (!(ctx)) return BURN_STATUS_INVALID; api_begin(ctx); } while (0)

static int
attr_type_of(burn_attr_type t)
{
	switch (t) {
	case BURN_ATTR_INT: return AT_INT;
	case BURN_ATTR_FLOAT: return AT_FLOAT;
	case BURN_ATTR_STRING: return AT_STRING;
	case BURN_ATTR_INTS: return AT_INTS;
	case BURN_ATTR_FLOATS: return AT_FLOATS;
	}
	return AT_UNDEF;
}

burn_status
burn_op(burn_ctx *ctx, const char *opname, int nin, burn_tensor *const *in,
        int nattr, const burn_attr *attr, int nout, burn_tensor **out)
{
	Attr ab[16], *a = ab;
	int op, rc;

	BEGIN(ctx);
	if (!out || nout < 0 || nin < 0 || nattr < 0 || (nin && !in) || (nattr && !attr))
		return api_status(burn_fail(&ctx->c, BURN_ERR_INVALID, "burn_op: bad "
		                  "arguments (NULL array or negative count)"));
	for (int k = 0; k < nout; k++)
		out[k] = NULL;
	if (!opname || (op = op_lookup(opname)) == 0)
		return api_status(burn_fail(&ctx->c, BURN_ERR_INVALID, "unknown op '%s'",
		                  opname ? opname : "(null)"));
	if (nattr > 16 && !(a = calloc((size_t)nattr, sizeof *a)))
		return api_status(burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory"));
	rc = BURN_OK;
	for (int i = 0; i < nattr && !rc; i++) {
		const burn_attr *b = &attr[i];
		int ty = attr_type_of(b->type), want;
		memset(&a[i], 0, sizeof a[i]);
		if (!b->name || !ty) {
			rc = burn_fail(&ctx->c, BURN_ERR_INVALID, "%s: attribute %d has no "
			               "name or a bad type", opname, i);
			break;
		}
		want = attr_type_expected(op, API_OPSET, b->name);
		if (want == AT_UNDEF)
			rc = burn_fail(&ctx->c, BURN_ERR_INVALID, "%s has no attribute '%s'",
			               opname, b->name);
		else if (want != ty)
			rc = burn_fail(&ctx->c, BURN_ERR_INVALID, "attribute '%s' of %s is "
			               "%s, not %s", b->name, opname, attr_type_name(want),
			               attr_type_name(ty));
		else if ((ty == AT_INTS && b->n && !b->ints) ||
		         (ty == AT_FLOATS && b->n && !b->floats) || b->n < 0 ||
		         (ty == AT_STRING && !b->s))
			rc = burn_fail(&ctx->c, BURN_ERR_INVALID, "attribute '%s' of %s has "
			               "no values", b->name, opname);
		a[i].name = b->name;
		a[i].type = ty;
		a[i].i = b->i;
		a[i].f = b->f;
		a[i].s = b->s;
		a[i].slen = b->s ? (int64_t)strlen(b->s) : 0;
		a[i].n = b->n;
		a[i].ints = (int64_t *)b->ints;
		a[i].floats = (double *)b->floats;
	}
	if (!rc && nin > 0 && !in[0])
		rc = burn_fail(&ctx->c, BURN_ERR_INVALID, "%s: input 0 is NULL", opname);
	if (!rc)
		rc = api_record(ctx, op, nin, in, nattr, a, nout, out);
	if (a != ab)
		free(a);
	return api_status(rc);
}

static burn_status
binary(burn_ctx *ctx, int op, burn_tensor *a, burn_tensor *b, burn_tensor **out)
{
	burn_tensor *in[2] = { a, b };

	BEGIN(ctx);
	if (!out)
		return api_status(burn_fail(&ctx->c, BURN_ERR_INVALID, "out is NULL"));
	*out = NULL;
	if (api_check_tensor(ctx, a, "a") || api_check_tensor(ctx, b, "b"))
		return api_status(ctx->c.code);
	return api_status(api_record(ctx, op, 2, in, 0, NULL, 1, out));
}

burn_status burn_add(burn_ctx *c, burn_tensor *a, burn_tensor *b, burn_tensor **o) { return binary(c, OP_Add, a, b, o); }
burn_status burn_sub(burn_ctx *c, burn_tensor *a, burn_tensor *b, burn_tensor **o) { return binary(c, OP_Sub, a, b, o); }
burn_status burn_mul(burn_ctx *c, burn_tensor *a, burn_tensor *b, burn_tensor **o) { return binary(c, OP_Mul, a, b, o); }
burn_status burn_div(burn_ctx *c, burn_tensor *a, burn_tensor *b, burn_tensor **o) { return binary(c, OP_Div, a, b, o); }
burn_status burn_pow(burn_ctx *c, burn_tensor *a, burn_tensor *b, burn_tensor **o) { return binary(c, OP_Pow, a, b, o); }
burn_status burn_matmul(burn_ctx *c, burn_tensor *a, burn_tensor *b, burn_tensor **o) { return binary(c, OP_MatMul, a, b, o); }

void api_put_elem(void *data, int dt, int64_t i, double x);

/* One op over a's value and constants already in pg (ins[0] is a's slot,
 * filled here); rolls back on failure. */
static burn_status
record_with(burn_ctx *ctx, int op, burn_tensor *a, int nin, int *ins, int nattr,
            const Attr *attr, burn_tensor **out, int nval0, int nnode0)
{
	int outs[1], rc;

	rc = api_value_of(ctx, a, &ins[0]);
	if (!rc)
		rc = record_v(ctx, op, nin, ins, nattr, attr, 1, outs, NULL);
	if (!rc)
		rc = tensor_for(ctx, outs[0], out);
	if (rc) {
		*out = NULL;
		rollback(ctx, nval0, nnode0);
		return api_status(rc);
	}
	maybe_sync(ctx);
	return BURN_STATUS_OK;
}

#define UNARY_BEGIN(ctx, a, out) do { \
		BEGIN(ctx); \
		if (!(out)) return api_status(burn_fail(&(ctx)->c, BURN_ERR_INVALID, "out is NULL")); \
		*(out) = NULL; \
		if (api_check_tensor(ctx, a, "the input")) return api_status((ctx)->c.code); \
	} while (0)

/*
 * Scalars are constants of the pending graph (rank 0, in a's dtype): they
 * are part of the program's structure, so the passes fold them and the
 * kernel has them as immediates; a loop whose scalar changes every
 * iteration compiles once per value (use a tensor of one element there).
 */
static burn_status
scalar_op(burn_ctx *ctx, int op, burn_tensor *a, double s, burn_tensor **out)
{
	int nval0, nnode0, ins[2];
	unsigned char bytes[16];

	UNARY_BEGIN(ctx, a, out);
	nval0 = ctx->pg->nval;
	nnode0 = ctx->pg->nnode;
	memset(bytes, 0, sizeof bytes);
	api_put_elem(bytes, a->dtype, 0, s);
	if (const_value(ctx, a->dtype, 0, 1, bytes, &ins[1])) {
		rollback(ctx, nval0, nnode0);
		return api_status(ctx->c.code);
	}
	return record_with(ctx, op, a, 2, ins, 0, NULL, out, nval0, nnode0);
}

burn_status burn_add_scalar(burn_ctx *c, burn_tensor *a, double s, burn_tensor **o) { return scalar_op(c, OP_Add, a, s, o); }
burn_status burn_mul_scalar(burn_ctx *c, burn_tensor *a, double s, burn_tensor **o) { return scalar_op(c, OP_Mul, a, s, o); }
burn_status burn_div_scalar(burn_ctx *c, burn_tensor *a, double s, burn_tensor **o) { return scalar_op(c, OP_Div, a, s, o); }

burn_status
burn_unary(burn_ctx *ctx, const char *opname, burn_tensor *a, burn_tensor **out)
{
	int op, ins[1];

	UNARY_BEGIN(ctx, a, out);
	if (!opname || !(op = op_lookup(opname)))
		return api_status(burn_fail(&ctx->c, BURN_ERR_INVALID, "unknown op '%s'",
		                  opname ? opname : "(null)"));
	return record_with(ctx, op, a, 1, ins, 0, NULL, out, ctx->pg->nval, ctx->pg->nnode);
}

burn_status
burn_cast(burn_ctx *ctx, burn_tensor *a, burn_dtype to, burn_tensor **out)
{
	Attr at = { .name = "to", .type = AT_INT, .i = to };
	int ins[1];

	UNARY_BEGIN(ctx, a, out);
	if (!dtype_supported(to) || dtype_cast_only(to))
		return api_status(burn_fail(&ctx->c, BURN_ERR_INVALID, "cast: bad dtype %d", to));
	return record_with(ctx, OP_Cast, a, 1, ins, 1, &at, out, ctx->pg->nval, ctx->pg->nnode);
}

burn_status
burn_reshape(burn_ctx *ctx, burn_tensor *a, int rank, const int64_t *dims,
             burn_tensor **out)
{
	int nval0, nnode0, ins[2];

	UNARY_BEGIN(ctx, a, out);
	if (rank < 0 || rank > BURN_MAX_RANK || (rank && !dims))
		return api_status(burn_fail(&ctx->c, BURN_ERR_INVALID, "reshape: rank %d", rank));
	nval0 = ctx->pg->nval;
	nnode0 = ctx->pg->nnode;
	if (const_value(ctx, DT_I64, 1, rank, dims, &ins[1])) {
		rollback(ctx, nval0, nnode0);
		return api_status(ctx->c.code);
	}
	return record_with(ctx, OP_Reshape, a, 2, ins, 0, NULL, out, nval0, nnode0);
}

burn_status
burn_transpose(burn_ctx *ctx, burn_tensor *a, const int64_t *perm, burn_tensor **out)
{
	Attr at = { .name = "perm", .type = AT_INTS };
	int64_t rev[BURN_MAX_RANK];
	int ins[1];

	UNARY_BEGIN(ctx, a, out);
	at.n = a->rank;
	if (!perm) {
		for (int i = 0; i < a->rank; i++)
			rev[i] = a->rank - 1 - i;
		perm = rev;
	}
	at.ints = (int64_t *)perm;
	return record_with(ctx, OP_Transpose, a, 1, ins, 1, &at, out, ctx->pg->nval,
	                   ctx->pg->nnode);
}

burn_status
burn_softmax(burn_ctx *ctx, burn_tensor *a, int64_t axis, burn_tensor **out)
{
	Attr at = { .name = "axis", .type = AT_INT, .i = axis };
	int ins[1];

	UNARY_BEGIN(ctx, a, out);
	return record_with(ctx, OP_Softmax, a, 1, ins, 1, &at, out, ctx->pg->nval,
	                   ctx->pg->nnode);
}

static burn_status
reduce(burn_ctx *ctx, int op, burn_tensor *a, int naxes, const int64_t *axes,
       int keepdims, burn_tensor **out)
{
	Attr at = { .name = "keepdims", .type = AT_INT, .i = keepdims != 0 };
	int nval0, nnode0, ins[2];

	UNARY_BEGIN(ctx, a, out);
	if (naxes < 0 || naxes > BURN_MAX_RANK || (naxes && !axes))
		return api_status(burn_fail(&ctx->c, BURN_ERR_INVALID, "%s: %d axes",
		                  op_table[op].name, naxes));
	nval0 = ctx->pg->nval;
	nnode0 = ctx->pg->nnode;
	if (naxes && const_value(ctx, DT_I64, 1, naxes, axes, &ins[1])) {
		rollback(ctx, nval0, nnode0);
		return api_status(ctx->c.code);
	}
	return record_with(ctx, op, a, naxes ? 2 : 1, ins, 1, &at, out, nval0, nnode0);
}

burn_status
burn_sum(burn_ctx *ctx, burn_tensor *a, int naxes, const int64_t *axes, int keepdims,
         burn_tensor **out)
{
	return reduce(ctx, OP_ReduceSum, a, naxes, axes, keepdims, out);
}

burn_status
burn_mean(burn_ctx *ctx, burn_tensor *a, int naxes, const int64_t *axes, int keepdims,
          burn_tensor **out)
{
	return reduce(ctx, OP_ReduceMean, a, naxes, axes, keepdims, out);
}

/* ---- inlining a loaded graph ------------------------------------------------ */

burn_status
burn_call_graph(burn_ctx *ctx, const Graph *g, int nin, burn_tensor *const *in,
                int nout, burn_tensor **out)
{
	return burn_call_graph_kept(ctx, g, NULL, nin, in, nout, out);
}

burn_status
burn_call_graph_kept(burn_ctx *ctx, const Graph *g, burn_tensor **kept, int nin,
                     burn_tensor *const *in, int nout, burn_tensor **out)
{
	BEGIN(ctx);
	return api_status(api_call_graph(ctx, g, kept, 0, nin, in, nout, out));
}

/* rt_inputs: the call's small integer inputs are program inputs (see
 * value_of); when recording fails so (an input that an op must read at
 * compile time, a shape), the call is recorded again with them as
 * constants. */
int
api_call_graph(burn_ctx *ctx, const Graph *g, burn_tensor **kept, int rt_inputs,
               int nin, burn_tensor *const *in, int nout, burn_tensor **out)
{
	int nval0, nnode0, rc = BURN_OK, *map = NULL;

	if (!g || nin != (g ? g->nin : 0) || nout < 0 || nout > g->nout ||
	    (nin && !in) || (nout && !out))
		return burn_fail(&ctx->c, BURN_ERR_INVALID, "call: the graph "
		                 "takes %d inputs and gives %d outputs", g ? g->nin : 0,
		                 g ? g->nout : 0);
	for (int k = 0; k < nout; k++)
		out[k] = NULL;
	nval0 = ctx->pg->nval;
	nnode0 = ctx->pg->nnode;
	if (!(map = malloc(sizeof *map * (size_t)(g->nval + 1))))
		return burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
	for (int v = 0; v < g->nval; v++)
		map[v] = -1;
	/* inputs: the given tensors, checked against the declared types */
	for (int i = 0; i < nin && !rc; i++) {
		const Value *gv = GV(g, g->in[i]);
		burn_tensor *t = in[i];
		if ((rc = api_check_tensor(ctx, t, "an input")))
			break;
		int ok = gv->dtype == DT_UNDEF || gv->dtype == t->dtype;
		if (gv->rank >= 0) {
			ok = ok && gv->rank == t->rank;
			for (int d = 0; ok && d < t->rank; d++)
				ok = gv->sym[d] || gv->dim[d] < 0 || gv->dim[d] == t->dim[d];
		}
		if (!ok) {
			char a[64], b[64];
			Value tv = { .dtype = t->dtype, .rank = t->rank };
			memcpy(tv.dim, t->dim, sizeof tv.dim);
			value_type_str(gv, a, sizeof a);
			value_type_str(&tv, b, sizeof b);
			rc = burn_fail(&ctx->c, BURN_ERR_SHAPE, "call: input '%s' is %s, "
			               "given %s", gv->name, a, b);
			break;
		}
		rc = value_of(ctx, t, rt_inputs, &map[g->in[i]]);
	}
	/* constants: small integer ones stay constants (shapes, axes), the
	 * rest become realised buffers */
	for (int v = 0; v < g->nval && !rc; v++) {
		const Value *gv = GV(g, v);
		burn_tensor *t;
		int64_t n;
		if (!gv->data || map[v] >= 0 || gv->producer >= 0)
			continue;
		n = value_numel(gv);
		if ((dtype_is_int(gv->dtype) || gv->dtype == DT_BOOL) && n <= API_CONST_INTS) {
			char nm[24];
			int nv;
			name_of(nm, 'c', ctx->pg->nval);
			if ((nv = graph_add_value(ctx->pg, nm)) < 0) {
				rc = burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
				break;
			}
			if ((rc = api_pv_fit(ctx)))
				break;
			memset(&ctx->pv[nv], 0, sizeof ctx->pv[nv]);
			rc = graph_set_const(&ctx->c, ctx->pg, nv, gv->dtype, gv->rank,
			                     gv->dim, gv->data);
			map[v] = nv;
			continue;
		}
		if (kept && kept[v]) {
			if ((rc = api_check_tensor(ctx, kept[v], "a kept constant")))
				break;
			rc = api_value_of(ctx, kept[v], &map[v]);
			continue;
		}
		if ((rc = burn_from_buffer(ctx, gv->dtype, gv->rank, gv->dim, gv->data, &t)))
			break;
		if (kept) {
			/* the caller's handle: never written while it lives,
			 * so programs take it as a constant (as AOT does) */
			t->frozen = ++ctx->frozen_ids;
			kept[v] = t;
		}
		rc = api_value_of(ctx, t, &map[v]);
		if (!kept)
			burn_release(t);    /* the leaf keeps the buffer */
	}
	/* nodes, in g's (topological) order */
	for (int i = 0; i < g->nnode && !rc; i++) {
		const Node *n = &g->node[i];
		int insb[16], outsb[16], *ins = insb, *outs = outsb;
		if (n->dead)
			continue;
		if (n->nin > 16 || n->nout > 16) {
			ins = malloc(sizeof *ins * (size_t)(n->nin + 1));
			outs = malloc(sizeof *outs * (size_t)(n->nout + 1));
		}
		if (!ins || !outs)
			rc = burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
		for (int k = 0; k < n->nin && !rc; k++) {
			ins[k] = n->in[k] < 0 ? -1 : map[n->in[k]];
			if (n->in[k] >= 0 && ins[k] < 0)
				rc = burn_fail(&ctx->c, BURN_ERR_INVALID, "call: node '%s' reads "
				               "'%s' before it is defined", n->name,
				               GV(g, n->in[k])->name);
		}
		for (int a = 0; a < n->nattr && !rc; a++)
			if (n->attr[a].type == AT_GRAPH || n->attr[a].type == AT_GRAPHS)
				rc = burn_fail(&ctx->c, BURN_ERR_UNSUPPORTED, "call: node '%s' "
				               "(%s) has a subgraph", n->name, op_table[n->op].name);
		if (!rc) {
			rc = record_v(ctx, n->op, n->nin, ins, n->nattr, n->attr, n->nout,
			              outs, NULL);
			if (rc && !strstr(ctx->c.msg, n->name)) {
				char msg[sizeof ctx->c.msg];
				snprintf(msg, sizeof msg, "node '%s': %s", n->name, ctx->c.msg);
				memcpy(ctx->c.msg, msg, sizeof msg);
			}
		}
		for (int k = 0; k < n->nout && !rc; k++)
			if (n->out[k] >= 0)
				map[n->out[k]] = outs[k];
		if (ins != insb)
			free(ins);
		if (outs != outsb)
			free(outs);
	}
	for (int k = 0; k < nout && !rc; k++) {
		int v = map[g->out[k]];
		if (v < 0)
			rc = burn_fail(&ctx->c, BURN_ERR_INVALID, "call: output %d is not "
			               "defined", k);
		else
			rc = tensor_for(ctx, v, &out[k]);
	}
	free(map);
	if (rc) {
		for (int k = 0; k < nout; k++) {
			burn_release(out[k]);
			out[k] = NULL;
		}
		rollback(ctx, nval0, nnode0);
		if (rt_inputs && rc != BURN_ERR_NOMEM && rc != BURN_ERR_LIMIT)
			return api_call_graph(ctx, g, kept, 0, nin, in, nout, out);
		return rc;
	}
	maybe_sync(ctx);
	return BURN_OK;
}

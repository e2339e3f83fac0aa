/*
 * ops_seq.c - ONNX sequences and optionals (class OC_SEQ in ir/ops.def),
 * resolved at compile time.
 *
 * A sequence whose length is known when compiling (built by the model's
 * nodes, or a graph input bound to its data: graph_bind_input) is a
 * compile-time list of ordinary tensor values: a value of kind VK_SEQ with
 * elem[0..nelem-1].  An optional is its value (a tensor or a list) or
 * none (VK_OPTNONE).  pass_infer_fold hands every OC_SEQ node here through
 * cf_expand, as it does If and Loop, and the node dies:
 *
 *   SequenceConstruct, SequenceEmpty,   the output is a new list of the
 *   SequenceInsert, SequenceErase       input values (no node)
 *   SequenceAt                          Identity of the element
 *   SequenceLength                      an int64 constant
 *   SplitToSequence                     Slice per piece (Gather of the
 *                                       index for keepdims = 0)
 *   ConcatFromSequence                  Concat (a stack for new_axis = 1)
 *   Optional, OptionalGetElement        the value itself (Identity)
 *   OptionalHasElement                  a bool constant
 *
 * Positions and splits must be constants (the message says "must be a
 * constant", the phrase burncc check answers by freezing the input).
 * Identity passes a list through (infer_fold_node); any other op given a
 * list is refused, naming it.  Loop carries lists from copy to copy like
 * tensors, so a Loop building a sequence unrolls into the list of its
 * iterations' values.  Graph outputs that are sequences become one output
 * per element, "NAME/K", in order (seq_flatten_outputs); an empty optional
 * output becomes no output.  No pass after inference sees a list.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "passes.h"
#include "lower.h"

static int nomem(Ctx *c)
{
	return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
}

/* An error naming node n. */
static int fail_at(Ctx *c, const Node *n, int code, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	c->node = n->name;
	c->op = op_table[n->op].name;
	return burn_fail(c, code, "%s", msg);
}

static int is_list(const Value *v)
{
	return v && (v->kind == VK_SEQ || v->kind == VK_OPTNONE);
}

int seq_make(Ctx *c, Graph *g, int dst, const int *e, int n, int dt)
{
	int *el = arena_alloc(&g->arena, sizeof *el * (size_t)(n + 1));
	Value *v;

	if (!el)
		return nomem(c);
	if (n)
		memcpy(el, e, sizeof *el * (size_t)n);
	v = GV(g, dst);
	v->kind = VK_SEQ;
	v->nelem = n;
	v->elem = el;
	v->dtype = dt;
	v->rank = -1;
	v->producer = -1;
	return BURN_OK;
}

int seq_alias(Ctx *c, Graph *g, int dst, int src)
{
	const Value *s = GV(g, src);

	if (dst < 0)
		return BURN_OK;
	if (s->kind == VK_OPTNONE) {
		GV(g, dst)->kind = VK_OPTNONE;
		GV(g, dst)->producer = -1;
		return BURN_OK;
	}
	return seq_make(c, g, dst, s->elem, s->nelem, s->dtype);
}

/* Input k of n, a sequence: its value, or a refusal naming the node. */
static int seq_in(Ctx *c, const Graph *g, const Node *n, int k, const Value **out)
{
	const Value *v = NIN(g, n, k);

	if (!v || v->kind != VK_SEQ)
		return fail_at(c, n, BURN_ERR_INVALID, "input %d%s%s%s must be a "
		               "sequence", k, v ? " ('" : "", v ? v->name : "",
		               v ? "')" : "");
	*out = v;
	return BURN_OK;
}

/* Input k of n, a tensor. */
static int tensor_in(Ctx *c, const Graph *g, const Node *n, int k, const Value **out)
{
	const Value *v = NIN(g, n, k);

	if (!v || is_list(v))
		return fail_at(c, n, BURN_ERR_INVALID, "input %d%s%s%s must be a "
		               "tensor", k, v ? " ('" : "", v ? v->name : "",
		               v ? "')" : "");
	*out = v;
	return BURN_OK;
}

/*
 * The position input k of n (absent: def) for a sequence of len elements,
 * in [-len, len - 1 + extra] (extra 1: SequenceInsert may append), made
 * non-negative.
 */
static int position(Ctx *c, const Graph *g, const Node *n, int k, int len,
                    int extra, int64_t def, int64_t *out)
{
	const Value *p = NIN(g, n, k);
	int64_t v;

	if (!p) {
		*out = def;
		return BURN_OK;
	}
	if (is_list(p) || !dtype_is_int(p->dtype) || value_numel(p) != 1)
		return fail_at(c, n, BURN_ERR_SHAPE, "the position ('%s') must be "
		               "one integer", p->name);
	if (!p->data)
		return fail_at(c, n, BURN_ERR_UNSUPPORTED, "the position ('%s') must "
		               "be a constant: sequences are resolved at compile "
		               "time", p->name);
	v = value_get_i(p, 0);
	if (v < -(int64_t)len || v > (int64_t)len - 1 + extra)
		return fail_at(c, n, BURN_ERR_INVALID, "position %lld is out of range "
		               "for a sequence of %d tensors ([%d, %d])", (long long)v,
		               len, -len, len - 1 + extra);
	*out = v < 0 ? v + len : v;
	return BURN_OK;
}

/* The element dtype of a list being built from s plus tensor t. */
static int check_dtype(Ctx *c, const Node *n, const Value *s, const Value *t)
{
	if (s->nelem && t->dtype != s->dtype)
		return fail_at(c, n, BURN_ERR_SHAPE, "'%s' is %s; the sequence holds %s",
		               t->name, dtype_name(t->dtype), dtype_name(s->dtype));
	return BURN_OK;
}

/* SplitToSequence: Slice per piece, or Gather of each index (keepdims 0,
 * no split). */
static int split_to_seq(Ctx *c, Graph *g, const Node *n, InferBudget *left)
{
	const Value *x, *sp = NIN(g, n, 1);
	const Attr *aa = node_attr(n, "axis"), *ka = node_attr(n, "keepdims");
	int64_t axis = aa ? aa->i : 0, len, *size, npieces, one = 1;
	int keep = ka ? ka->i != 0 : 1, *el, xv = n->in[0], out = n->out[0];
	char what[64];

	TRY(tensor_in(c, g, n, 0, &x));
	if (x->rank < 1)
		return fail_at(c, n, BURN_ERR_SHAPE, "'%s' is a scalar", x->name);
	if (axis < -x->rank || axis >= x->rank)
		return fail_at(c, n, BURN_ERR_SHAPE, "axis %lld is out of range for "
		               "rank %d", (long long)axis, x->rank);
	if (axis < 0)
		axis += x->rank;
	len = x->dim[axis];
	if (sp && (is_list(sp) || !dtype_is_int(sp->dtype) || sp->rank > 1))
		return fail_at(c, n, BURN_ERR_SHAPE, "split ('%s') must be an integer "
		               "scalar or 1-D tensor", sp->name);
	if (sp && !sp->data)
		return fail_at(c, n, BURN_ERR_UNSUPPORTED, "split ('%s') must be a "
		               "constant: sequences are resolved at compile time",
		               sp->name);
	if (!sp)
		npieces = len;
	else if (sp->rank == 0) {
		int64_t s = value_get_i(sp, 0);
		if (s <= 0)
			return fail_at(c, n, BURN_ERR_INVALID, "split is %lld; it must be "
			               "positive", (long long)s);
		npieces = len ? (len + s - 1) / s : 0;
	} else
		npieces = value_numel(sp);
	if (npieces > 65536)
		return fail_at(c, n, BURN_ERR_LIMIT, "%lld pieces (at most 65536)",
		               (long long)npieces);
	if (!(size = arena_alloc(&g->arena, sizeof *size * (size_t)(npieces + 1))) ||
	    !(el = arena_alloc(&g->arena, sizeof *el * (size_t)(npieces + 1))))
		return nomem(c);
	for (int64_t k = 0, sum = 0; k < npieces; k++) {
		if (!sp)
			size[k] = 1;
		else if (sp->rank == 0)
			size[k] = len - sum < value_get_i(sp, 0) ? len - sum : value_get_i(sp, 0);
		else if ((size[k] = value_get_i(sp, k)) < 0)
			return fail_at(c, n, BURN_ERR_INVALID, "split[%lld] is negative",
			               (long long)k);
		sum += size[k];
		if (k == npieces - 1 && sum != len)
			return fail_at(c, n, BURN_ERR_SHAPE, "the split sizes add up to "
			               "%lld; the axis has %lld", (long long)sum,
			               (long long)len);
	}
	for (int64_t k = 0, at = 0; k < npieces; k++) {
		snprintf(what, sizeof what, "%lld", (long long)k);
		if (!sp && !keep) {
			int in[2] = { xv, -1 };
			TRY(cf_const_i64(c, g, n->name, "index", 0, NULL, &k, &in[1]));
			TRY(cf_add(c, g, OP_Gather, n->name, what, 2, in, axis, -1, left, &el[k]));
		} else {
			int in[4] = { xv, -1, -1, -1 };
			int64_t end = at + size[k];
			TRY(cf_const_i64(c, g, n->name, "start", 1, &one, &at, &in[1]));
			TRY(cf_const_i64(c, g, n->name, "end", 1, &one, &end, &in[2]));
			TRY(cf_const_i64(c, g, n->name, "axis", 1, &one, &axis, &in[3]));
			TRY(cf_add(c, g, OP_Slice, n->name, what, 4, in, 0, -1, left, &el[k]));
		}
		at += size[k];
	}
	return seq_make(c, g, out, el, (int)npieces, GV(g, xv)->dtype);
}

/* ConcatFromSequence: Concat of the elements, or their stack. */
static int concat_from_seq(Ctx *c, Graph *g, const Node *n, InferBudget *left)
{
	const Value *s;
	const Attr *aa = node_attr(n, "axis"), *na = node_attr(n, "new_axis");
	int64_t axis = aa ? aa->i : 0;
	int newax = na ? na->i != 0 : 0, rank;

	TRY(seq_in(c, g, n, 0, &s));
	if (!s->nelem)
		return fail_at(c, n, BURN_ERR_INVALID, "the sequence ('%s') is empty",
		               s->name);
	rank = GV(g, s->elem[0])->rank + newax;
	if (axis < -rank || axis >= rank)
		return fail_at(c, n, BURN_ERR_SHAPE, "axis %lld is out of range for "
		               "rank %d", (long long)axis, rank);
	if (axis < 0)
		axis += rank;
	if (newax)
		return cf_stack(c, g, s->elem, s->nelem, (int)axis, n->out[0], n->name,
		                left, &rank);
	if (s->nelem > 64)
		return fail_at(c, n, BURN_ERR_LIMIT, "%d tensors (Concat takes at "
		               "most 64)", s->nelem);
	return cf_add(c, g, OP_Concat, n->name, "concat", s->nelem, s->elem, axis,
	              n->out[0], left, NULL);
}

int seq_expand(Ctx *c, Graph *g, const Node *n, InferBudget *left)
{
	const Value *s, *t, *x = n->nin ? NIN(g, n, 0) : NULL;
	int out = n->out[0], *el;
	int64_t pos;

	if (out < 0)
		return BURN_OK;
	switch (n->op) {
	case OP_SequenceConstruct:
		for (int k = 0; k < n->nin; k++) {
			TRY(tensor_in(c, g, n, k, &t));
			if (t->dtype != x->dtype)
				return fail_at(c, n, BURN_ERR_SHAPE, "'%s' is %s and '%s' %s: "
				               "a sequence holds one dtype", x->name,
				               dtype_name(x->dtype), t->name, dtype_name(t->dtype));
		}
		return seq_make(c, g, out, n->in, n->nin, x->dtype);
	case OP_SequenceEmpty: {
		const Attr *d = node_attr(n, "dtype");
		return seq_make(c, g, out, NULL, 0, d ? (int)d->i : DT_F32);
	}
	case OP_SequenceInsert:
		TRY(seq_in(c, g, n, 0, &s));
		TRY(tensor_in(c, g, n, 1, &t));
		TRY(check_dtype(c, n, s, t));
		TRY(position(c, g, n, 2, s->nelem, 1, s->nelem, &pos));
		if (!(el = arena_alloc(&g->arena, sizeof *el * (size_t)(s->nelem + 2))))
			return nomem(c);
		for (int k = 0, j = 0; k <= s->nelem; k++)
			el[k] = k == pos ? n->in[1] : s->elem[j++];
		return seq_make(c, g, out, el, s->nelem + 1, t->dtype);
	case OP_SequenceErase:
		TRY(seq_in(c, g, n, 0, &s));
		if (!s->nelem)
			return fail_at(c, n, BURN_ERR_INVALID, "the sequence ('%s') is "
			               "empty: nothing to erase", s->name);
		TRY(position(c, g, n, 1, s->nelem, 0, s->nelem - 1, &pos));
		if (!(el = arena_alloc(&g->arena, sizeof *el * (size_t)s->nelem)))
			return nomem(c);
		for (int k = 0, j = 0; k < s->nelem; k++)
			if (k != pos)
				el[j++] = s->elem[k];
		return seq_make(c, g, out, el, s->nelem - 1, s->dtype);
	case OP_SequenceAt:
		TRY(seq_in(c, g, n, 0, &s));
		TRY(position(c, g, n, 1, s->nelem, 0, 0, &pos));
		return cf_add(c, g, OP_Identity, n->name, "at", 1, &s->elem[pos], 0,
		              out, left, NULL);
	case OP_SequenceLength: {
		int64_t len;
		TRY(seq_in(c, g, n, 0, &s));
		len = s->nelem;
		return graph_set_const(c, g, out, DT_I64, 0, NULL, &len);
	}
	case OP_SplitToSequence:
		return split_to_seq(c, g, n, left);
	case OP_ConcatFromSequence:
		return concat_from_seq(c, g, n, left);
	case OP_Optional:
	case OP_OptionalGetElement:
		if (!x && n->op == OP_Optional) {
			GV(g, out)->kind = VK_OPTNONE;
			GV(g, out)->producer = -1;
			return BURN_OK;
		}
		if (!x || x->kind == VK_OPTNONE)
			return fail_at(c, n, BURN_ERR_INVALID, "the optional%s%s%s is "
			               "empty: it has no element to get", x ? " ('" : "",
			               x ? x->name : "", x ? "')" : "");
		if (x->kind == VK_SEQ)
			return seq_alias(c, g, out, n->in[0]);
		return cf_add(c, g, OP_Identity, n->name, "value", 1, &n->in[0], 0,
		              out, left, NULL);
	case OP_OptionalHasElement: {
		unsigned char has = x && x->kind != VK_OPTNONE;
		return graph_set_const(c, g, out, DT_BOOL, 0, NULL, &has);
	}
	}
	return fail_at(c, n, BURN_ERR_INTERNAL, "not a sequence op");
}

int seq_flatten_outputs(Ctx *c, Graph *g, InferBudget *left)
{
	int nout = 0, *out, m = 0;
	Value *decl = NULL;

	for (int k = 0; k < g->nout; k++) {
		const Value *v = GV(g, g->out[k]);
		nout += v->kind == VK_SEQ ? v->nelem : v->kind == VK_OPTNONE ? 0 : 1;
	}
	if (!(out = arena_alloc(&g->arena, sizeof *out * (size_t)(nout + 1))) ||
	    (g->out_decl && !(decl = arena_alloc(&g->arena, sizeof *decl * (size_t)(nout + 1)))))
		return nomem(c);
	for (int k = 0; k < g->nout; k++) {
		int v = g->out[k];
		const Value *val = GV(g, v);
		if (val->kind == VK_OPTNONE)
			continue;
		if (val->kind != VK_SEQ) {
			if (decl)
				decl[m] = g->out_decl[k];
			out[m++] = v;
			continue;
		}
		for (int e = 0; e < GV(g, v)->nelem; e++) {
			char what[32], prefix[400];
			int r, src = GV(g, v)->elem[e];
			snprintf(what, sizeof what, "%d", e);
			snprintf(prefix, sizeof prefix, "%s", GV(g, v)->name);
			TRY(cf_add(c, g, OP_Identity, prefix, what, 1, &src, 0, -1, left, &r));
			GV(g, r)->is_output = 1;
			if (decl) {
				memset(&decl[m], 0, sizeof decl[m]);
				decl[m].name = "";
				decl[m].rank = -1;
			}
			out[m++] = r;
		}
		GV(g, v)->is_output = 0;
	}
	g->out = out;
	g->nout = m;
	if (decl)
		g->out_decl = decl;
	return BURN_OK;
}

/*
 * graph.c - building and querying the graph IR, topological sort and
 * compaction.  The verifier is in verify.c, the text form in ir_text.c.
 *
 * Ownership: everything of a graph lives in its arena.  A subgraph (the body
 * of an If/Loop/Scan) has its own arena; it is owned by the Attr (AT_GRAPH /
 * AT_GRAPHS) that holds it, and graph_destroy() of the parent destroys it by
 * walking the attributes of every node, dead or alive.  A subgraph created
 * with graph_create_sub() but never stored in an attribute must be destroyed
 * by its creator.  The same Graph must not be stored in two attributes.
 */
#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

/* ---- building ------------------------------------------------------- */

Graph *
graph_create(const char *name)
{
	Graph *g;

	if (!(g = calloc(1, sizeof *g)))
		return NULL;
	arena_init(&g->arena);
	g->name = arena_strdup(&g->arena, name ? name : "");
	if (!g->name) {
		free(g);
		return NULL;
	}
	return g;
}

Graph *
graph_create_sub(Graph *parent, const char *name)
{
	Graph *g = graph_create(name);

	if (g && parent) {
		g->parent = parent;
		g->opset = parent->opset;
	}
	return g;
}

void
graph_destroy(Graph *g)
{
	int i, j, k;

	if (!g)
		return;
	for (i = 0; i < g->nnode; i++) {
		Node *n = &g->node[i];
		for (j = 0; j < n->nattr; j++) {
			Attr *a = &n->attr[j];
			if (a->type == AT_GRAPH && a->g && a->g != g)
				graph_destroy(a->g);
			if (a->type == AT_GRAPHS && a->gs)
				for (k = 0; k < a->n; k++)
					if (a->gs[k] != g)
						graph_destroy(a->gs[k]);
		}
	}
	arena_free(&g->arena);
	free(g);
}

/* Capacity rule for vectors without a cap field (graph in/out): the
 * capacity is the smallest power of two >= max(n, 4), so the vector is full
 * exactly when n is 0 or such a power. */
static int
isfull(int n)
{
	return n == 0 || (n >= 4 && (n & (n - 1)) == 0);
}

static int *
pushint(Arena *a, int *v, int *n, int x)
{
	if (isfull(*n)) {
		int *nv = arena_grow(a, v, sizeof *v, (size_t)*n,
		                     *n ? (size_t)*n * 2 : 4);
		if (!nv)
			return v;
		v = nv;
	}
	v[(*n)++] = x;
	return v;
}

int
graph_add_value(Graph *g, const char *name)
{
	Value *v;

	if (g->nval == g->capval) {
		int cap = g->capval ? g->capval * 2 : 16;
		Value *nv = arena_grow(&g->arena, g->val, sizeof *nv,
		                       (size_t)g->nval, (size_t)cap);
		if (!nv)
			return -1;
		g->val = nv;
		g->capval = cap;
	}
	v = &g->val[g->nval];
	memset(v, 0, sizeof *v);
	if (!(v->name = arena_strdup(&g->arena, name)))
		return -1;
	v->kind = VK_TEMP;
	v->dtype = DT_UNDEF;
	v->rank = -1;
	v->producer = -1;
	return g->nval++;
}

int
graph_add_node(Graph *g, int op, const char *name, int nin, const int *in,
               int nout, const int *out)
{
	Node *n;
	int k, idx;

	if (nin < 0 || nout < 0)
		return -1;
	if (g->nnode == g->capnode) {
		int cap = g->capnode ? g->capnode * 2 : 16;
		Node *nn = arena_grow(&g->arena, g->node, sizeof *nn,
		                      (size_t)g->nnode, (size_t)cap);
		if (!nn)
			return -1;
		g->node = nn;
		g->capnode = cap;
	}
	idx = g->nnode;
	n = &g->node[idx];
	memset(n, 0, sizeof *n);
	n->op = op;
	n->name = arena_strdup(&g->arena, name);
	n->domain = "";
	n->in = arena_alloc(&g->arena, sizeof *n->in * (size_t)(nin ? nin : 1));
	n->out = arena_alloc(&g->arena, sizeof *n->out * (size_t)(nout ? nout : 1));
	if (!n->name || !n->in || !n->out)
		return -1;
	if (nin)
		memcpy(n->in, in, sizeof *in * (size_t)nin);
	if (nout)
		memcpy(n->out, out, sizeof *out * (size_t)nout);
	n->nin = nin;
	n->nout = nout;
	for (k = 0; k < nout; k++)
		if (out[k] >= 0 && out[k] < g->nval) {
			g->val[out[k]].producer = idx;
			g->val[out[k]].producer_out = k;
		}
	g->nnode++;
	return idx;
}

/* Attrs are few per node: copy the vector on every append, so a node whose
 * attr array was shared or set by hand is never written past its end. */
Attr *
node_add_attr(Graph *g, int node, const char *name, int type)
{
	Node *n = &g->node[node];
	Attr *na, *a;

	na = arena_grow(&g->arena, n->attr, sizeof *na, (size_t)n->nattr,
	                (size_t)n->nattr + 1);
	if (!na)
		return NULL;
	n->attr = na;
	a = &na[n->nattr];
	memset(a, 0, sizeof *a);
	if (!(a->name = arena_strdup(&g->arena, name)))
		return NULL;
	a->type = type;
	n->nattr++;
	return a;
}

void
graph_add_input(Graph *g, int v)
{
	if (v < 0 || v >= g->nval)
		return;
	g->in = pushint(&g->arena, g->in, &g->nin, v);
	g->val[v].kind = VK_INPUT;
	g->val[v].producer = -1;
}

void
graph_add_output(Graph *g, int v)
{
	if (v < 0 || v >= g->nval)
		return;
	g->out = pushint(&g->arena, g->out, &g->nout, v);
	g->val[v].is_output = 1;
}

static void
set_type(Value *v, const Tensor *t)
{
	v->dtype = t->dtype;
	v->rank = t->rank;
	for (int d = 0; d < t->rank; d++) {
		v->dim[d] = t->dim[d];
		v->sym[d] = NULL;
	}
}

int
graph_bind_input(Ctx *c, Graph *g, int i, int kind, int n, const Tensor *t)
{
	int v = g->in[i], *in, *elem, m = 0;
	const char *nm = g->val[v].name;

	if (kind == VD_TENSOR) {
		if (g->val[v].decl == VD_SEQ)
			return burn_fail(c, BURN_ERR_INVALID, "input '%s' is a sequence; "
			                 "its data is a tensor", nm);
		set_type(&g->val[v], t);
		g->val[v].decl = VD_TENSOR;
		return BURN_OK;
	}
	if (kind < 0 && g->val[v].decl == VD_SEQ)
		return burn_fail(c, BURN_ERR_INVALID, "input '%s' is a sequence; its "
		                 "data is an empty optional", nm);
	if (kind == VD_SEQ && g->val[v].decl == VD_OPT)
		return burn_fail(c, BURN_ERR_INVALID, "input '%s' is an optional tensor; "
		                 "its data is a sequence", nm);
	if (kind < 0)
		n = 0;
	if (!(in = arena_alloc(&g->arena, sizeof *in * (size_t)(g->nin + n + 1))) ||
	    !(elem = arena_alloc(&g->arena, sizeof *elem * (size_t)(n + 1))))
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	for (int k = 0; k < i; k++)
		in[m++] = g->in[k];
	for (int k = 0; k < n; k++) {
		char *name = arena_printf(&g->arena, "%s/%d", nm, k);
		int e = name ? graph_add_value(g, name) : -1;
		if (e < 0)
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		g->val[e].kind = VK_INPUT;
		set_type(&g->val[e], &t[k]);
		in[m++] = elem[k] = e;
	}
	for (int k = i + 1; k < g->nin; k++)
		in[m++] = g->in[k];
	g->in = in;
	g->nin = m;
	g->val[v].kind = kind < 0 ? VK_OPTNONE : VK_SEQ;
	g->val[v].decl = VD_TENSOR;
	g->val[v].nelem = n;
	g->val[v].elem = elem;
	g->val[v].dtype = n ? t[0].dtype : DT_UNDEF;
	return BURN_OK;
}

int
graph_set_const(Ctx *c, Graph *g, int v, int dtype, int rank,
                const int64_t *dim, const void *data)
{
	Value *val;
	int64_t numel = 1, nbytes;
	int i, sz;

	if (v < 0 || v >= g->nval)
		return burn_fail(c, BURN_ERR_INTERNAL, "constant: bad value index %d", v);
	val = &g->val[v];
	sz = dtype_bits(dtype);
	if (sz == 0)
		return burn_fail(c, BURN_ERR_UNSUPPORTED,
		                 "constant '%s': unsupported dtype %s (%d)",
		                 val->name, dtype_name(dtype), dtype);
	if (rank < 0 || rank > BURN_MAX_RANK)
		return burn_fail(c, BURN_ERR_UNSUPPORTED,
		                 "constant '%s': rank %d out of range 0..%d",
		                 val->name, rank, BURN_MAX_RANK);
	for (i = 0; i < rank; i++) {
		if (dim[i] < 0)
			return burn_fail(c, BURN_ERR_INVALID,
			                 "constant '%s': negative dim %lld",
			                 val->name, (long long)dim[i]);
		if (burn_mul_ovf(numel, dim[i], &numel))
			return burn_fail(c, BURN_ERR_LIMIT,
			                 "constant '%s': element count overflows",
			                 val->name);
	}
	if (dtype_nbytes(dtype, numel, &nbytes) ||
	    (c && nbytes > c->limits.max_tensor_bytes))
		return burn_fail(c, BURN_ERR_LIMIT,
		                 "constant '%s': %lld elements of %s, over --max-tensor-bytes (%lld)",
		                 val->name, (long long)numel, dtype_name(dtype),
		                 (long long)(c ? c->limits.max_tensor_bytes : 0));
	if ((uint64_t)nbytes > SIZE_MAX)
		return burn_fail(c, BURN_ERR_LIMIT, "constant '%s': too large", val->name);
	val->data = arena_alloc(&g->arena, (size_t)nbytes);
	if (!val->data)
		return burn_fail(c, BURN_ERR_NOMEM,
		                 "constant '%s': out of memory (%lld bytes)",
		                 val->name, (long long)nbytes);
	if (data && nbytes && dtype_is_string(dtype)) {
		/* strings: the bytes too, into g's arena (the pointers are not
		 * the graph's to keep) */
		const char *const *src = data;
		const char **dst = val->data;
		for (int64_t k = 0; k < numel; k++)
			if (!(dst[k] = arena_strdup(&g->arena, src[k] ? src[k] : "")))
				return burn_fail(c, BURN_ERR_NOMEM, "constant '%s': out of memory",
				                 val->name);
	} else if (data && nbytes)
		memcpy(val->data, data, (size_t)nbytes);
	val->kind = VK_CONST;
	val->dtype = dtype;
	val->rank = rank;
	for (i = 0; i < BURN_MAX_RANK; i++) {
		val->dim[i] = i < rank ? dim[i] : 0;
		val->sym[i] = NULL;
	}
	val->producer = -1;
	val->producer_out = 0;
	return BURN_OK;
}

int
graph_find_value(const Graph *g, const char *name)
{
	int i;

	for (i = 0; i < g->nval; i++)
		if (strcmp(g->val[i].name, name) == 0)
			return i;
	return -1;
}

/* ---- queries -------------------------------------------------------- */

/* A dim is symbolic or unknown iff it is negative (sym[] is only its name,
 * and may linger after the dim was bound). */
int64_t
value_numel(const Value *v)
{
	int64_t n = 1;
	int i;

	if (v->rank < 0 || v->rank > BURN_MAX_RANK)
		return -1;
	for (i = 0; i < v->rank; i++)
		if (v->dim[i] < 0 || burn_mul_ovf(n, v->dim[i], &n))
			return -1;
	return n;
}

int64_t
value_nbytes(const Value *v)
{
	int64_t n = value_numel(v);

	if (n < 0 || dtype_nbytes(v->dtype, n, &n))
		return -1;
	return n;
}

int
value_shape_known(const Value *v)
{
	return value_numel(v) >= 0;
}

void
value_copy_shape(Value *dst, const Value *src)
{
	int i;

	dst->rank = src->rank;
	for (i = 0; i < BURN_MAX_RANK; i++) {
		dst->dim[i] = src->dim[i];
		dst->sym[i] = src->sym[i];
	}
}

/* "f32[2,3,N]"; "?" for the unknown parts: "?" alone when neither dtype nor
 * rank is known, "f32" when only the rank is unknown. */
char *
value_type_str(const Value *v, char *buf, size_t n)
{
	size_t k = 0;
	int i, r;

	if (!buf || n == 0)
		return buf;
	buf[0] = 0;
#define PUT(...) do { \
		r = snprintf(buf + k, n - k, __VA_ARGS__); \
		if (r > 0) k += (size_t)r; \
		if (k >= n) return buf; \
	} while (0)
	PUT("%s", dtype_name(v->dtype));
	if (v->rank < 0 || v->rank > BURN_MAX_RANK)
		return buf;
	PUT("[");
	for (i = 0; i < v->rank; i++) {
		if (i)
			PUT(",");
		if (v->dim[i] >= 0)
			PUT("%lld", (long long)v->dim[i]);
		else if (v->sym[i])
			PUT("%s", v->sym[i]);
		else
			PUT("?");
	}
	PUT("]");
#undef PUT
	return buf;
}

const Attr *
node_attr(const Node *n, const char *name)
{
	int i;

	for (i = 0; i < n->nattr; i++)
		if (n->attr[i].name && strcmp(n->attr[i].name, name) == 0)
			return &n->attr[i];
	return NULL;
}

int64_t
attr_int(const Node *n, const char *name, int64_t dflt)
{
	const Attr *a = node_attr(n, name);

	return a && a->type == AT_INT ? a->i : dflt;
}

/* An int attribute is accepted where a float is asked for. */
double
attr_float(const Node *n, const char *name, double dflt)
{
	const Attr *a = node_attr(n, name);

	if (a && a->type == AT_FLOAT)
		return a->f;
	if (a && a->type == AT_INT)
		return (double)a->i;
	return dflt;
}

const char *
attr_str(const Node *n, const char *name, const char *dflt)
{
	const Attr *a = node_attr(n, name);

	return a && a->type == AT_STRING && a->s ? a->s : dflt;
}

int
attr_ints(const Node *n, const char *name, const int64_t **out)
{
	const Attr *a = node_attr(n, name);

	if (!a || a->type != AT_INTS || !a->ints) {
		if (out)
			*out = NULL;
		return 0;
	}
	if (out)
		*out = a->ints;
	return a->n;
}

/* ---- attribute types ------------------------------------------------ */

/*
 * The type ONNX gives each attribute name of the ops burncc implements
 * (from the operator schemas, all versions).  A name means the same type
 * in every op that has it, except the four handled in attr_type_expected.
 * Sorted by strcmp for bsearch; test_ir checks the order.
 */
static const struct AttrTypeRow {
	const char *name;
	int type;
} attr_types[] = {
	{"activation_alpha", AT_FLOATS},
	{"activation_beta", AT_FLOATS},
	{"activations", AT_STRINGS},
	{"align_corners", AT_INT},
	{"allowzero", AT_INT},
	{"alpha", AT_FLOAT},
	{"antialias", AT_INT},
	{"approximate", AT_STRING},
	{"auto_pad", AT_STRING},
	{"axes", AT_INTS},
	{"axis", AT_INT},
	{"batch_axis", AT_INT},
	{"batch_dims", AT_INT},
	{"beta", AT_FLOAT},
	{"bias", AT_FLOAT},
	{"block_size", AT_INT},
	{"blocksize", AT_INT},
	{"body", AT_GRAPH},
	{"broadcast", AT_INT},
	{"ceil_mode", AT_INT},
	{"clip", AT_FLOAT},
	{"consumed_inputs", AT_INTS},
	{"coordinate_transformation_mode", AT_STRING},
	{"count_include_pad", AT_INT},
	{"cubic_coeff_a", AT_FLOAT},
	{"detect_negative", AT_INT},
	{"detect_positive", AT_INT},
	{"dilations", AT_INTS},
	{"direction", AT_STRING},
	{"directions", AT_INTS},
	{"dtype", AT_INT},
	{"else_branch", AT_GRAPH},
	{"end", AT_INT},
	{"ends", AT_INTS},
	{"epsilon", AT_FLOAT},
	{"equation", AT_STRING},
	{"exclude_outside", AT_INT},
	{"exclusive", AT_INT},
	{"extrapolation_value", AT_FLOAT},
	{"fmod", AT_INT},
	{"gamma", AT_FLOAT},
	{"group", AT_INT},
	{"height_scale", AT_FLOAT},
	{"hidden_size", AT_INT},
	{"ignore_index", AT_INT},
	{"input_forget", AT_INT},
	{"interleaved", AT_INT},
	{"is_causal", AT_INT},
	{"is_test", AT_INT},
	{"k", AT_INT},
	{"keep_aspect_ratio_policy", AT_STRING},
	{"keepdims", AT_INT},
	{"kernel_shape", AT_INTS},
	{"kv_num_heads", AT_INT},
	{"lambd", AT_FLOAT},
	{"largest", AT_INT},
	{"layout", AT_INT},
	{"linear_before_reset", AT_INT},
	{"max", AT_FLOAT},
	{"min", AT_FLOAT},
	{"mode", AT_STRING},
	{"momentum", AT_FLOAT},
	{"nearest_mode", AT_STRING},
	{"noop_with_empty_axes", AT_INT},
	{"num_groups", AT_INT},
	{"num_heads", AT_INT},
	{"num_outputs", AT_INT},
	{"num_scan_inputs", AT_INT},
	{"output_dtype", AT_INT},
	{"output_padding", AT_INTS},
	{"output_sequence", AT_INT},
	{"output_shape", AT_INTS},
	{"padding_mode", AT_STRING},
	{"paddings", AT_INTS},
	{"pads", AT_INTS},
	{"perm", AT_INTS},
	{"pixel_format", AT_STRING},
	{"precision", AT_INT},
	{"q_num_heads", AT_INT},
	{"qk_matmul_output_mode", AT_INT},
	{"ratio", AT_FLOAT},
	{"reduction", AT_STRING},
	{"reverse", AT_INT},
	{"rotary_embedding_dim", AT_INT},
	{"round_mode", AT_STRING},
	{"saturate", AT_INT},
	{"scale", AT_FLOAT},
	{"scales", AT_FLOATS},
	{"scan_input_axes", AT_INTS},
	{"scan_input_directions", AT_INTS},
	{"scan_output_axes", AT_INTS},
	{"scan_output_directions", AT_INTS},
	{"select_last_index", AT_INT},
	{"shape", AT_INTS},
	{"size", AT_INT},
	{"softcap", AT_FLOAT},
	{"softmax_precision", AT_INT},
	{"sorted", AT_INT},
	{"sparse_value", AT_SPARSE_TENSOR},
	{"spatial", AT_INT},
	{"split", AT_INTS},
	{"start", AT_INT},
	{"starts", AT_INTS},
	{"stash_type", AT_INT},
	{"storage_order", AT_INT},
	{"strides", AT_INTS},
	{"then_branch", AT_GRAPH},
	{"time_axis", AT_INT},
	{"training_mode", AT_INT},
	{"transA", AT_INT},
	{"transB", AT_INT},
	{"upper", AT_INT},
	{"value_float", AT_FLOAT},
	{"value_floats", AT_FLOATS},
	{"value_int", AT_INT},
	{"value_ints", AT_INTS},
	{"value_string", AT_STRING},
	{"value_strings", AT_STRINGS},
	{"width_scale", AT_FLOAT},
};

static int
attr_row_cmp(const void *key, const void *row)
{
	return strcmp(key, ((const struct AttrTypeRow *)row)->name);
}

int
attr_type_expected(int op, int opset, const char *name)
{
	const struct AttrTypeRow *r;
	const char *on = op > OP_NONE_ && op < OP_COUNT_ ? op_table[op].name : "";

	/* the names whose type depends on the op or its version */
	if (!strcmp(name, "value"))
		return !strcmp(on, "Pad") ? AT_FLOAT : AT_TENSOR;  /* Pad-1, Pad-2 */
	if (!strcmp(name, "to"))
		return opset > 0 && opset < 6 ? AT_STRING : AT_INT; /* Cast-1 */
	if (!strcmp(name, "p"))
		return !strcmp(on, "LpPool") && opset > 0 && opset < 2 ? AT_FLOAT : AT_INT;
	if (!strcmp(name, "seed"))   /* the random ops' is a float */
		return !strcmp(on, "Dropout") ? AT_INT : AT_FLOAT;
	r = bsearch(name, attr_types, sizeof attr_types / sizeof attr_types[0],
	            sizeof attr_types[0], attr_row_cmp);
	return r ? r->type : AT_UNDEF;
}

const char *
attr_type_name(int type)
{
	static const char *const names[] = {
		"undefined", "a float", "an int", "a string", "a tensor", "a graph",
		"floats", "ints", "strings", "tensors", "graphs", "a sparse tensor",
		"sparse tensors", "a type", "types",
	};

	return type >= 0 && type < (int)(sizeof names / sizeof names[0])
	       ? names[type] : "of an unknown type";
}

/*
 * Every attribute of every node of g (and of its subgraphs) has the type
 * ONNX gives its name, so that no op reads a default in place of a value
 * of the wrong type and then fails with an unrelated message (or none).
 * An int stands for a float: attr_float reads it.  Names ONNX does not
 * define for our ops are left alone (the op ignores them).
 */
int
graph_check_attrs(Ctx *c, const Graph *g)
{
	const char *onode = c->node, *oop = c->op;

	for (int i = 0; i < g->nnode; i++) {
		const Node *n = &g->node[i];
		for (int j = 0; j < n->nattr; j++) {
			const Attr *a = &n->attr[j];
			int want = attr_type_expected(n->op, g->opset, a->name);
			if (a->type == AT_GRAPH && a->g)
				TRY(graph_check_attrs(c, a->g));
			if (a->type == AT_GRAPHS)
				for (int k = 0; k < a->n; k++)
					if (a->gs[k])
						TRY(graph_check_attrs(c, a->gs[k]));
			if (want == AT_UNDEF || a->type == want ||
			    (want == AT_FLOAT && a->type == AT_INT))
				continue;
			c->node = n->name;
			c->op = n->op > OP_NONE_ && n->op < OP_COUNT_ ? op_table[n->op].name : NULL;
			want = burn_fail(c, BURN_ERR_INVALID, "attribute '%s' is %s, expected %s",
			                 a->name, attr_type_name(a->type), attr_type_name(want));
			c->node = onode;
			c->op = oop;
			return want;
		}
	}
	return BURN_OK;
}

int
graph_check_outputs(Ctx *c, const Graph *g)
{
	for (int k = 0; g->out_decl && k < g->nout; k++) {
		const Value *d = &g->out_decl[k], *v = GV(g, g->out[k]);
		char want[160], got[160];
		int bad = d->dtype != DT_UNDEF && v->dtype != DT_UNDEF && d->dtype != v->dtype;

		if (d->rank >= 0 && v->rank >= 0) {
			bad |= d->rank != v->rank;
			for (int i = 0; i < d->rank && i < v->rank; i++)
				bad |= d->dim[i] >= 0 && v->dim[i] >= 0 && d->dim[i] != v->dim[i];
		}
		if (bad)
			return burn_fail(c, BURN_ERR_SHAPE, "graph output '%s' is declared %s, "
			                 "computed %s", v->name, value_type_str(d, want, sizeof want),
			                 value_type_str(v, got, sizeof got));
	}
	return BURN_OK;
}

/* IEEE half and bfloat16 to float. */
static double
half2f(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	double s = (h & 0x8000) ? -1 : 1;

	if (e == 0)
		return s * ldexp(m, -24);
	if (e == 31)
		return m ? NAN : s * INFINITY;
	return s * ldexp(m + 1024, e - 25);
}

static double
bf162f(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

double
value_get_f(const Value *v, int64_t i)
{
	const unsigned char *p = v->data;
	int sz = dtype_size(v->dtype);

	if (v->dtype == DT_F4E2M1 && p && i >= 0) {   /* s ee m: ONNX's values */
		static const double f4[8] = { 0, 0.5, 1, 1.5, 2, 3, 4, 6 };
		int f = (p[i / 2] >> (i % 2 * 4)) & 15;
		return f & 8 ? -f4[f & 7] : f4[f & 7];
	}
	if (!p || sz == 0 || i < 0)
		return 0;
	p += i * sz;
	switch (v->dtype) {
	case DT_F32: { float x; memcpy(&x, p, 4); return x; }
	case DT_F64: { double x; memcpy(&x, p, 8); return x; }
	case DT_F16: { uint16_t x; memcpy(&x, p, 2); return half2f(x); }
	case DT_BF16: { uint16_t x; memcpy(&x, p, 2); return bf162f(x); }
	case DT_U64: { uint64_t x; memcpy(&x, p, 8); return (double)x; }
	}
	return (double)value_get_i(v, i);
}

int64_t
value_get_i(const Value *v, int64_t i)
{
	const unsigned char *p = v->data;
	int sz = dtype_size(v->dtype), w = dtype_bits(v->dtype);

	if (dtype_is_packed(v->dtype) && dtype_is_int(v->dtype) && p && i >= 0) {
		/* field i of its byte, low bits first; sign-extended if signed */
		int f = (p[i / (8 / w)] >> (i % (8 / w) * w)) & ((1 << w) - 1);
		return dtype_is_signed(v->dtype) && f >> (w - 1) ? f - (1 << w) : f;
	}
	if (v->dtype == DT_F4E2M1)
		return (int64_t)value_get_f(v, i);
	if (!p || sz == 0 || i < 0)
		return 0;
	p += i * sz;
	switch (v->dtype) {
	case DT_U8: case DT_BOOL: return *p;
	case DT_I8: return (int8_t)*p;
	case DT_U16: { uint16_t x; memcpy(&x, p, 2); return x; }
	case DT_I16: { int16_t x; memcpy(&x, p, 2); return x; }
	case DT_U32: { uint32_t x; memcpy(&x, p, 4); return x; }
	case DT_I32: { int32_t x; memcpy(&x, p, 4); return x; }
	case DT_U64: { uint64_t x; memcpy(&x, p, 8); return (int64_t)x; }
	case DT_I64: { int64_t x; memcpy(&x, p, 8); return x; }
	case DT_F32: case DT_F64: case DT_F16: case DT_BF16: {
		/* Truncate toward zero, saturating; NaN reads as 0. */
		double d = value_get_f(v, i);
		if (d != d)
			return 0;
		if (d >= 9223372036854775807.0)
			return INT64_MAX;
		if (d <= -9223372036854775808.0)
			return INT64_MIN;
		return (int64_t)d;
	}
	}
	return 0;
}

/* ---- whole-graph operations ----------------------------------------- */

/* Is value v (undefined locally) visible from an enclosing graph?  Outer-
 * scope captures in a subgraph are values with no local definition whose
 * name matches a value of an ancestor. */
static int
outer_defined(const Graph *g, const Value *v)
{
	const Graph *p;

	for (p = g->parent; p; p = p->parent)
		if (graph_find_value(p, v->name) >= 0)
			return 1;
	return 0;
}

/* Binary min-heap of node indices: Kahn's algorithm takes the lowest ready
 * index first, so an already sorted graph keeps its order exactly. */
static void
heap_push(int *h, int *n, int x)
{
	int i = (*n)++;

	while (i > 0 && h[(i - 1) / 2] > x) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = x;
}

static int
heap_pop(int *h, int *n)
{
	int top = h[0], x = h[--*n], i = 0, c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= x)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n > 0)
		h[i] = x;
	return top;
}

/*
 * Kahn's algorithm over live nodes; dead nodes keep their relative order
 * after the live ones and are not checked.  Besides ordering, it checks that
 * every input of a live node is defined (by a graph input, a constant, a
 * node output or, in a subgraph, an enclosing graph).  On success the
 * producer fields of all node outputs are rewritten for the new order.
 */
int
graph_toposort(Ctx *c, Graph *g)
{
	int nn = g->nnode, nv = g->nval;
	int *prod = NULL, *indeg = NULL, *start = NULL, *adj = NULL, *heap = NULL;
	int *order = NULL;
	Node *tmp = NULL;
	int i, k, nh = 0, no = 0, nedge = 0, rc = BURN_OK;

	prod = malloc(sizeof *prod * (size_t)(nv + 1));
	indeg = calloc((size_t)nn + 1, sizeof *indeg);
	start = calloc((size_t)nn + 2, sizeof *start);
	heap = malloc(sizeof *heap * (size_t)(nn + 1));
	order = malloc(sizeof *order * (size_t)(nn + 1));
	tmp = malloc(sizeof *tmp * (size_t)(nn + 1));
	if (!prod || !indeg || !start || !heap || !order || !tmp) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "toposort: out of memory");
		goto done;
	}
	for (i = 0; i < nv; i++)
		prod[i] = -1;
	for (i = 0; i < nn; i++) {
		Node *n = &g->node[i];
		if (n->dead)
			continue;
		for (k = 0; k < n->nout; k++)
			if (n->out[k] >= 0 && n->out[k] < nv && prod[n->out[k]] < 0)
				prod[n->out[k]] = i;
	}
	/* Count edges producer -> consumer (one per input occurrence). */
	for (i = 0; i < nn; i++) {
		Node *n = &g->node[i];
		if (n->dead)
			continue;
		for (k = 0; k < n->nin; k++) {
			int x = n->in[k];
			const Value *v;
			if (x < 0)
				continue;
			if (x >= nv) {
				rc = burn_fail(c, BURN_ERR_INVALID,
				               "input %d of node '%s' is a bad value index %d",
				               k, n->name, x);
				goto done;
			}
			if (prod[x] >= 0) {
				start[prod[x] + 1]++;
				indeg[i]++;
				nedge++;
				continue;
			}
			v = &g->val[x];
			if (v->kind == VK_INPUT || v->kind == VK_CONST || v->data ||
			    (g->parent && outer_defined(g, v)))
				continue;
			rc = burn_fail(c, BURN_ERR_INVALID,
			               "input '%s' of node '%s' is not defined",
			               v->name, n->name);
			goto done;
		}
	}
	for (i = 0; i < nn; i++)
		start[i + 1] += start[i];
	adj = malloc(sizeof *adj * (size_t)(nedge + 1));
	if (!adj) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "toposort: out of memory");
		goto done;
	}
	{
		/* Fill adjacency lists using heap[] as a cursor per producer. */
		for (i = 0; i < nn; i++)
			heap[i] = start[i];
		for (i = 0; i < nn; i++) {
			Node *n = &g->node[i];
			if (n->dead)
				continue;
			for (k = 0; k < n->nin; k++) {
				int x = n->in[k];
				if (x >= 0 && prod[x] >= 0)
					adj[heap[prod[x]]++] = i;
			}
		}
	}
	for (i = 0; i < nn; i++)
		if (!g->node[i].dead && indeg[i] == 0)
			heap_push(heap, &nh, i);
	while (nh > 0) {
		int u = heap_pop(heap, &nh), e;
		order[no++] = u;
		for (e = start[u]; e < start[u + 1]; e++)
			if (--indeg[adj[e]] == 0)
				heap_push(heap, &nh, adj[e]);
	}
	for (i = 0; i < nn; i++)
		if (!g->node[i].dead && indeg[i] > 0) {
			rc = burn_fail(c, BURN_ERR_INVALID,
			               "cycle in the graph through node '%s'",
			               g->node[i].name);
			goto done;
		}
	for (i = 0; i < nn; i++)
		if (g->node[i].dead)
			order[no++] = i;
	for (i = 0; i < nn; i++)
		tmp[i] = g->node[order[i]];
	if (nn)
		memcpy(g->node, tmp, sizeof *tmp * (size_t)nn);
	for (i = 0; i < nn; i++) {
		Node *n = &g->node[i];
		if (n->dead)
			continue;
		for (k = 0; k < n->nout; k++)
			if (n->out[k] >= 0 && n->out[k] < nv && prod[n->out[k]] == order[i]) {
				g->val[n->out[k]].producer = i;
				g->val[n->out[k]].producer_out = k;
			}
	}
	/* Values produced only by dead nodes keep a stale index; fix it
	 * through the inverse permutation (indeg[] is free again). */
	for (i = 0; i < nn; i++)
		indeg[order[i]] = i;
	for (i = 0; i < nv; i++) {
		int p = g->val[i].producer;
		if (prod[i] < 0 && p >= 0)
			g->val[i].producer = p < nn ? indeg[p] : -1;
	}
done:
	free(prod);
	free(indeg);
	free(start);
	free(adj);
	free(heap);
	free(order);
	free(tmp);
	return rc;
}

/* Drop dead nodes, keeping the order of the live ones, and recompute the
 * producer fields (a value produced only by a dropped node gets -1).  The
 * subgraphs held by a dropped node's attrs are destroyed with it: a pass
 * that moves a subgraph out of a node it kills must clear that attr. */
void
graph_compact(Graph *g)
{
	int i, j = 0, k, m;

	for (i = 0; i < g->nnode; i++) {
		Node *n = &g->node[i];
		if (!n->dead) {
			if (i != j)
				g->node[j] = *n;
			j++;
			continue;
		}
		for (k = 0; k < n->nattr; k++) {
			Attr *a = &n->attr[k];
			if (a->type == AT_GRAPH && a->g && a->g != g)
				graph_destroy(a->g);
			if (a->type == AT_GRAPHS && a->gs)
				for (m = 0; m < a->n; m++)
					if (a->gs[m] != g)
						graph_destroy(a->gs[m]);
			a->g = NULL;
			a->gs = NULL;
		}
	}
	g->nnode = j;
	for (i = 0; i < g->nval; i++)
		g->val[i].producer = -1;
	for (i = 0; i < g->nnode; i++)
		for (k = 0; k < g->node[i].nout; k++) {
			int x = g->node[i].out[k];
			if (x >= 0 && x < g->nval) {
				g->val[x].producer = i;
				g->val[x].producer_out = k;
			}
		}
}

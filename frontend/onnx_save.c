/*
 * onnx_save.c - the graph IR back to an ONNX model (ModelProto bytes).
 *
 * The graph IR is ONNX-level: each live node is a NodeProto of its op's
 * ONNX name and domain with its attributes, each constant value an
 * initializer (raw little-endian data, the bytes the graph holds), each
 * graph input and output a ValueInfoProto with its dtype and dims (a
 * symbolic dim as dim_param).  The messages are frontend/onnx.proto's,
 * packed by protobuf-c; every message struct lives in one arena freed
 * before returning.
 *
 * The model imports the default domain at the graph's opset and declares
 * the lowest IR version that has every element type it holds: 8 (ONNX
 * 1.10; the dtypes up to bfloat16), 9 for float8, 10 for int4 and uint4,
 * 11 for float4e2m1, 13 for the rest.  Written: what inference leaves of a
 * graph (passes/infer_fold.c: control flow, sequences and function ops
 * resolved).  Refused, with the node or value named: subgraph and sparse
 * attributes, string tensors, ops of another domain (their opset versions
 * are not kept), a value that is not a tensor, an input or output of
 * unknown dtype.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "onnx.pb-c.h"
#include "onnx.h"

typedef struct Saver {
	Ctx *c;
	const Graph *g;
	Arena a;
	const char **name;    /* per value: its unique name in the file */
	int ir;               /* the IR version the dtypes need */
} Saver;

static int save_dtype(Saver *s, int dt, const char *what)
{
	if (dt <= DT_UNDEF || dt >= DT_COUNT_ || dtype_is_string(dt))
		return burn_fail(s->c, BURN_ERR_UNSUPPORTED, "%s: %s tensors are not written "
		                 "to ONNX yet", what, dt == DT_UNDEF ? "untyped" : dtype_name(dt));
	if (dt > DT_BF16) {
		int ir = dt <= 20 ? 9 : dt <= 22 ? 10 : dt == 23 ? 11 : 13;
		if (ir > s->ir)
			s->ir = ir;
	}
	return BURN_OK;
}

static Onnx__TensorProto *tensor_proto(Saver *s, const char *name, int dt, int rank,
                                       const int64_t *dim, const void *data,
                                       int64_t nbytes)
{
	Onnx__TensorProto *t = arena_alloc(&s->a, sizeof *t);
	int64_t *d = arena_alloc(&s->a, sizeof *d * (size_t)(rank + 1));

	onnx__tensor_proto__init(t);
	if (name)
		t->name = (char *)name;
	for (int i = 0; i < rank; i++)
		d[i] = dim[i];
	t->n_dims = (size_t)rank;
	t->dims = d;
	t->has_data_type = 1;
	t->data_type = dt;
	t->has_raw_data = 1;
	t->raw_data.len = (size_t)nbytes;
	t->raw_data.data = (uint8_t *)data;
	return t;
}

/* A graph input's or output's declaration: its dtype and dims. */
static Onnx__ValueInfoProto *value_info(Saver *s, int v)
{
	const Value *val = GV(s->g, v);
	Onnx__ValueInfoProto *vi = arena_alloc(&s->a, sizeof *vi);
	Onnx__TypeProto *tp = arena_alloc(&s->a, sizeof *tp);
	Onnx__TypeProto__Tensor *tt = arena_alloc(&s->a, sizeof *tt);

	if (save_dtype(s, val->dtype, arena_printf(&s->a, "value '%s'", s->name[v])))
		return NULL;
	onnx__value_info_proto__init(vi);
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	tt->has_elem_type = 1;
	tt->elem_type = val->dtype;
	if (val->rank >= 0) {
		Onnx__TensorShapeProto *sh = arena_alloc(&s->a, sizeof *sh);
		Onnx__TensorShapeProto__Dimension **dp =
			arena_alloc(&s->a, sizeof *dp * (size_t)(val->rank + 1));
		onnx__tensor_shape_proto__init(sh);
		for (int i = 0; i < val->rank; i++) {
			dp[i] = arena_alloc(&s->a, sizeof *dp[i]);
			onnx__tensor_shape_proto__dimension__init(dp[i]);
			if (val->dim[i] >= 0) {
				dp[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
				dp[i]->dim_value = val->dim[i];
			} else if (val->sym[i]) {
				dp[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
				dp[i]->dim_param = (char *)val->sym[i];
			}
		}
		sh->n_dim = (size_t)val->rank;
		sh->dim = dp;
		tt->shape = sh;
	}
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	vi->name = (char *)s->name[v];
	vi->type = tp;
	return vi;
}

static int save_attr(Saver *s, const Node *n, const Attr *at, Onnx__AttributeProto **out)
{
	Onnx__AttributeProto *p = arena_alloc(&s->a, sizeof *p);

	onnx__attribute_proto__init(p);
	p->name = (char *)at->name;
	p->has_type = 1;
	p->type = (Onnx__AttributeProto__AttributeType)at->type;
	switch (at->type) {
	case AT_FLOAT:
		p->has_f = 1;
		p->f = (float)at->f;
		break;
	case AT_INT:
		p->has_i = 1;
		p->i = at->i;
		break;
	case AT_STRING:
		p->has_s = 1;
		p->s.data = (uint8_t *)at->s;
		p->s.len = (size_t)at->slen;
		break;
	case AT_INTS:
		p->n_ints = (size_t)at->n;
		p->ints = at->ints;
		break;
	case AT_FLOATS:
		p->n_floats = (size_t)at->n;
		p->floats = arena_alloc(&s->a, sizeof *p->floats * (size_t)(at->n + 1));
		for (int i = 0; i < at->n; i++)
			p->floats[i] = (float)at->floats[i];
		break;
	case AT_STRINGS:
		p->n_strings = (size_t)at->n;
		p->strings = arena_alloc(&s->a, sizeof *p->strings * (size_t)(at->n + 1));
		for (int i = 0; i < at->n; i++) {
			p->strings[i].data = (uint8_t *)at->strs[i];
			p->strings[i].len = strlen(at->strs[i]);
		}
		break;
	case AT_TENSOR:
		TRY(save_dtype(s, at->t->dtype, arena_printf(&s->a, "node '%s' (%s): attribute "
		                                             "'%s'", n->name, op_table[n->op].name,
		                                             at->name)));
		p->t = tensor_proto(s, NULL, at->t->dtype, at->t->rank, at->t->dim,
		                    at->t->data, at->t->nbytes);
		break;
	default:
		return burn_fail(s->c, BURN_ERR_UNSUPPORTED, "node '%s' (%s): attribute '%s' "
		                 "(%s) is not written to ONNX yet", n->name, op_table[n->op].name,
		                 at->name, attr_type_name(at->type));
	}
	*out = p;
	return BURN_OK;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every value a unique, non-empty name: its own where it has one no other
 * value has, else "NAME_vK" / "_vK" (K its index). */
static int name_values(Saver *s, const unsigned char *used)
{
	const Graph *g = s->g;
	const char **sorted;
	int n = 0;

	s->name = arena_alloc(&s->a, sizeof *s->name * (size_t)(g->nval + 1));
	sorted = arena_alloc(&s->a, sizeof *sorted * (size_t)(g->nval + 1));
	if (!s->name || !sorted)
		return burn_fail(s->c, BURN_ERR_NOMEM, "out of memory");
	for (int v = 0; v < g->nval; v++) {
		const char *nm = GV(g, v)->name;
		s->name[v] = nm && *nm ? nm : arena_printf(&s->a, "_v%d", v);
		if (used[v])
			sorted[n++] = s->name[v];
	}
	qsort(sorted, (size_t)n, sizeof *sorted, name_cmp);
	for (int i = 1; i < n; i++)
		if (!strcmp(sorted[i], sorted[i - 1])) {
			/* a shared name: every holder but the first gets its index */
			int first = 1;
			for (int v = 0; v < g->nval; v++)
				if (used[v] && s->name[v] && !strcmp(s->name[v], sorted[i])) {
					if (!first)
						s->name[v] = arena_printf(&s->a, "%s_v%d", sorted[i], v);
					first = 0;
				}
		}
	return BURN_OK;
}

int onnx_save_bytes(Ctx *c, const Graph *g, uint8_t **out, size_t *len)
{
	Saver s = { c, g, { 0 }, NULL, 8 };
	Onnx__ModelProto m;
	Onnx__GraphProto gp;
	Onnx__OperatorSetIdProto os, *osp[1] = { &os };
	unsigned char *used = NULL;
	int live = 0, nconst = 0, rc = BURN_OK;

	*out = NULL;
	*len = 0;
	arena_init(&s.a);
	if (g->opset <= 0) {
		rc = burn_fail(c, BURN_ERR_INVALID, "the graph has no opset");
		goto done;
	}
	if (!(used = calloc((size_t)g->nval + 1, 1))) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		goto done;
	}
	for (int i = 0; i < g->nin; i++)
		used[g->in[i]] = 1;
	for (int i = 0; i < g->nout; i++)
		used[g->out[i]] = 1;
	for (int i = 0; i < g->nnode; i++) {
		const Node *n = &g->node[i];
		if (n->dead)
			continue;
		live++;
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] >= 0)
				used[n->in[k]] = 1;
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0)
				used[n->out[k]] = 1;
	}
	if ((rc = name_values(&s, used)))
		goto done;
	for (int v = 0; v < g->nval; v++) {
		const Value *val = GV(g, v);
		if (!used[v])
			continue;
		if (val->kind == VK_SEQ || val->kind == VK_OPTNONE) {
			rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "value '%s': a %s is not written to "
			               "ONNX (only tensors)", s.name[v],
			               val->kind == VK_SEQ ? "sequence" : "empty optional");
			goto done;
		}
		if (val->kind == VK_CONST && val->data && val->producer < 0)
			nconst++;
	}

	onnx__graph_proto__init(&gp);
	gp.name = (char *)(g->name && *g->name ? g->name : "burncc");
	gp.node = arena_alloc(&s.a, sizeof *gp.node * (size_t)(live + 1));
	gp.initializer = arena_alloc(&s.a, sizeof *gp.initializer * (size_t)(nconst + 1));
	gp.input = arena_alloc(&s.a, sizeof *gp.input * (size_t)(g->nin + 1));
	gp.output = arena_alloc(&s.a, sizeof *gp.output * (size_t)(g->nout + 1));
	if (!gp.node || !gp.initializer || !gp.input || !gp.output) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		goto done;
	}
	for (int i = 0; i < g->nin; i++)
		if (!(gp.input[gp.n_input++] = value_info(&s, g->in[i]))) {
			rc = c->code;
			goto done;
		}
	for (int i = 0; i < g->nout; i++)
		if (!(gp.output[gp.n_output++] = value_info(&s, g->out[i]))) {
			rc = c->code;
			goto done;
		}
	for (int v = 0; v < g->nval; v++) {
		const Value *val = GV(g, v);
		if (!used[v] || val->kind != VK_CONST || !val->data || val->producer >= 0)
			continue;
		if ((rc = save_dtype(&s, val->dtype, arena_printf(&s.a, "constant '%s'",
		                                                   s.name[v]))))
			goto done;
		gp.initializer[gp.n_initializer++] =
			tensor_proto(&s, s.name[v], val->dtype, val->rank, val->dim, val->data,
			             value_nbytes(val));
	}
	for (int i = 0; i < g->nnode; i++) {
		const Node *n = &g->node[i];
		Onnx__NodeProto *np;
		if (n->dead)
			continue;
		if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx")) {
			rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "node '%s' (%s): domain '%s': only "
			               "the default domain is written to ONNX yet", n->name,
			               op_table[n->op].name, n->domain);
			goto done;
		}
		np = arena_alloc(&s.a, sizeof *np);
		onnx__node_proto__init(np);
		np->name = (char *)n->name;
		np->op_type = (char *)op_table[n->op].name;
		np->n_input = (size_t)n->nin;
		np->input = arena_alloc(&s.a, sizeof *np->input * (size_t)(n->nin + 1));
		for (int k = 0; k < n->nin; k++)
			np->input[k] = (char *)(n->in[k] >= 0 ? s.name[n->in[k]] : "");
		np->n_output = (size_t)n->nout;
		np->output = arena_alloc(&s.a, sizeof *np->output * (size_t)(n->nout + 1));
		for (int k = 0; k < n->nout; k++)
			np->output[k] = (char *)(n->out[k] >= 0 ? s.name[n->out[k]] : "");
		np->attribute = arena_alloc(&s.a, sizeof *np->attribute * (size_t)(n->nattr + 1));
		for (int k = 0; k < n->nattr; k++)
			if ((rc = save_attr(&s, n, &n->attr[k], &np->attribute[np->n_attribute++])))
				goto done;
		gp.node[gp.n_node++] = np;
	}

	onnx__operator_set_id_proto__init(&os);
	os.domain = "";
	os.has_version = 1;
	os.version = g->opset;
	onnx__model_proto__init(&m);
	m.has_ir_version = 1;
	m.ir_version = s.ir;
	m.producer_name = "burncc";
	m.n_opset_import = 1;
	m.opset_import = osp;
	m.graph = &gp;
	*len = onnx__model_proto__get_packed_size(&m);
	if (!(*out = malloc(*len + 1))) {
		*len = 0;
		rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		goto done;
	}
	onnx__model_proto__pack(&m, *out);
done:
	free(used);
	arena_free(&s.a);
	return rc;
}

int onnx_save_file(Ctx *c, const Graph *g, const char *path)
{
	uint8_t *buf;
	size_t len;
	char *tmp;
	FILE *f;
	int rc;

	TRY(onnx_save_bytes(c, g, &buf, &len));
	if (!(tmp = malloc(strlen(path) + 5))) {
		free(buf);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	sprintf(tmp, "%s.tmp", path);
	if (!(f = fopen(tmp, "wb")))
		rc = burn_fail(c, BURN_ERR_IO, "%s: cannot write", tmp);
	else {
		int bad = fwrite(buf, 1, len, f) != len;
		bad |= ferror(f);
		bad |= fclose(f);
		if (bad) {
			remove(tmp);
			rc = burn_fail(c, BURN_ERR_IO, "%s: write failed", tmp);
		} else if (rename(tmp, path)) {
			remove(tmp);
			rc = burn_fail(c, BURN_ERR_IO, "%s: cannot rename to %s", tmp, path);
		} else
			rc = BURN_OK;
	}
	free(tmp);
	free(buf);
	return rc;
}

/*
 * gen_model.c - write the ONNX models of the scale and budget tests
 * (tests/scale/run.sh), so that no huge model is committed.
 *
 *   gen_model relu N OUT.onnx       x f32[4,8] -> N x Relu -> y
 *   gen_model reluneg N OUT.onnx    x -> Relu, Neg, Relu, Neg ... (N nodes)
 *   gen_model matmulrelu N OUT.onnx x f32[2,2] -> MatMul(w), Relu ... (N
 *                                   nodes): a chain that fusion cannot
 *                                   make one kernel
 *   gen_model foldmm D OUT.onnx     y = A @ B of two constant f32[D,D]
 *   gen_model mm D OUT.onnx         y = x @ W, x an input f32[D,D], W a
 *                                   constant f32[D,D] (tests/targets)
 *   gen_model lrn SIZE OUT.onnx     LRN with attribute size = SIZE
 *   gen_model bigplan N OUT.onnx    three Expands of f32[1] values to [N],
 *                                   summed and reduced: three intermediates
 *                                   of 4N bytes live at once in the arena
 *
 * The messages are protobuf-c structs packed to bytes, as in
 * tests/unit/test_onnx.c.  Exit status 0, or 1 with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

/* Every string the model names lives until exit: the process is short. */
static char *
name(const char *prefix, long i)
{
	char *s = malloc(32);

	if (!s) {
		fprintf(stderr, "gen_model: out of memory\n");
		exit(1);
	}
	snprintf(s, 32, "%s%ld", prefix, i);
	return s;
}

static Onnx__ValueInfoProto *
tensor_info(const char *nm, int rank, const int64_t *dims)
{
	Onnx__ValueInfoProto *v = calloc(1, sizeof *v);
	Onnx__TypeProto *t = calloc(1, sizeof *t);
	Onnx__TypeProto__Tensor *tt = calloc(1, sizeof *tt);
	Onnx__TensorShapeProto *s = calloc(1, sizeof *s);
	Onnx__TensorShapeProto__Dimension **dp = calloc(rank + 1, sizeof *dp);

	onnx__value_info_proto__init(v);
	onnx__type_proto__init(t);
	onnx__type_proto__tensor__init(tt);
	onnx__tensor_shape_proto__init(s);
	for (int i = 0; i < rank; i++) {
		dp[i] = calloc(1, sizeof **dp);
		onnx__tensor_shape_proto__dimension__init(dp[i]);
		dp[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
		dp[i]->dim_value = dims[i];
	}
	s->n_dim = rank;
	s->dim = dp;
	tt->has_elem_type = 1;
	tt->elem_type = 1 /* FLOAT */;
	tt->shape = s;
	t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	t->tensor_type = tt;
	v->name = (char *)nm;
	v->type = t;
	return v;
}

/* A constant f32 tensor of the given dims, filled with a small pattern. */
static Onnx__TensorProto *
tensor_const(const char *nm, int rank, const int64_t *dims)
{
	Onnx__TensorProto *t = calloc(1, sizeof *t);
	int64_t n = 1;
	float *f;

	onnx__tensor_proto__init(t);
	t->n_dims = rank;
	t->dims = calloc(rank + 1, sizeof(int64_t));
	for (int i = 0; i < rank; i++)
		n *= t->dims[i] = dims[i];
	f = malloc(sizeof(float) * (n + 1));
	for (int64_t i = 0; i < n; i++)
		f[i] = (float)((i * 7) % 13 - 6) / 8.0f;
	t->has_data_type = 1;
	t->data_type = 1 /* FLOAT */;
	t->has_raw_data = 1;
	t->raw_data.len = sizeof(float) * n;
	t->raw_data.data = (uint8_t *)f;
	t->name = (char *)nm;
	return t;
}

static Onnx__NodeProto *
node(const char *op, const char *nm, int nin, char **in, char *out)
{
	Onnx__NodeProto *n = calloc(1, sizeof *n);
	char **o = calloc(1, sizeof *o);

	onnx__node_proto__init(n);
	n->op_type = (char *)op;
	n->name = (char *)nm;
	n->n_input = nin;
	n->input = in;
	n->n_output = 1;
	o[0] = out;
	n->output = o;
	return n;
}

static char **
ins(char *a, char *b)
{
	char **v = calloc(2, sizeof *v);

	v[0] = a;
	v[1] = b;
	return v;
}

static int
write_model(const char *path, Onnx__GraphProto *g)
{
	Onnx__ModelProto m;
	Onnx__OperatorSetIdProto op, *ops[1] = { &op };
	size_t len;
	uint8_t *buf;
	FILE *f;

	onnx__model_proto__init(&m);
	onnx__operator_set_id_proto__init(&op);
	op.domain = "";
	op.has_version = 1;
	op.version = 17;
	m.has_ir_version = 1;
	m.ir_version = 8;
	m.n_opset_import = 1;
	m.opset_import = ops;
	m.graph = g;
	len = onnx__model_proto__get_packed_size(&m);
	buf = malloc(len + 1);
	if (!buf)
		return 1;
	onnx__model_proto__pack(&m, buf);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "gen_model: cannot write %s\n", path);
		return 1;
	}
	free(buf);
	return 0;
}

int
main(int argc, char **argv)
{
	Onnx__GraphProto g;
	Onnx__ValueInfoProto *in[1], *out[1];
	Onnx__TensorProto *init[2];
	const char *kind;
	long n;

	if (argc != 4) {
		fprintf(stderr, "usage: gen_model relu|reluneg|matmulrelu|foldmm|mm|lrn|bigplan N OUT.onnx\n");
		return 2;
	}
	kind = argv[1];
	n = strtol(argv[2], NULL, 0);
	onnx__graph_proto__init(&g);
	g.name = "g";
	if (!strcmp(kind, "relu") || !strcmp(kind, "reluneg") ||
	    !strcmp(kind, "matmulrelu")) {
		int mm = !strcmp(kind, "matmulrelu");
		int64_t dx[2] = { 4, 8 }, dw[2] = { 2, 2 };
		Onnx__NodeProto **nodes = calloc(n + 1, sizeof *nodes);
		char *prev = "x";
		if (mm)
			dx[0] = dx[1] = 2;
		for (long i = 0; i < n; i++) {
			char *o = i == n - 1 ? "y" : name("t", i);
			const char *op = !strcmp(kind, "relu") ? "Relu" :
			                 mm ? (i % 2 ? "Relu" : "MatMul") :
			                 (i % 2 ? "Neg" : "Relu");
			int two = mm && !(i % 2);
			nodes[i] = node(op, name("n", i), two ? 2 : 1,
			                ins(prev, two ? "w" : NULL), o);
			prev = o;
		}
		in[0] = tensor_info("x", 2, dx);
		out[0] = tensor_info("y", 2, dx);
		g.n_node = n;
		g.node = nodes;
		if (mm) {
			init[0] = tensor_const("w", 2, dw);
			g.n_initializer = 1;
			g.initializer = init;
		}
		g.n_input = 1;
		g.input = in;
	} else if (!strcmp(kind, "foldmm") || !strcmp(kind, "mm")) {
		int64_t d[2] = { n, n };
		int fold = !strcmp(kind, "foldmm");
		Onnx__NodeProto *nodes[1] = { node("MatMul", "mm", 2, ins(fold ? "a" : "x", "b"), "y") };
		init[0] = tensor_const("b", 2, d);
		init[1] = tensor_const("a", 2, d);
		out[0] = tensor_info("y", 2, d);
		g.n_node = 1;
		g.node = nodes;
		g.n_initializer = fold ? 2 : 1;
		g.initializer = init;
		if (!fold) {
			in[0] = tensor_info("x", 2, d);
			g.n_input = 1;
			g.input = in;
		}
		g.n_output = 1;
		g.output = out;
		return write_model(argv[3], &g);
	} else if (!strcmp(kind, "lrn")) {
		int64_t d[4] = { 1, 4, 3, 3 };
		Onnx__NodeProto *nodes[1] = { node("LRN", "lrn", 1, ins("x", NULL), "y") };
		Onnx__AttributeProto a, *ap[1] = { &a };
		onnx__attribute_proto__init(&a);
		a.name = "size";
		a.has_type = 1;
		a.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
		a.has_i = 1;
		a.i = strtoll(argv[2], NULL, 0);
		nodes[0]->n_attribute = 1;
		nodes[0]->attribute = ap;
		in[0] = tensor_info("x", 4, d);
		out[0] = tensor_info("y", 4, d);
		g.n_node = 1;
		g.node = nodes;
		g.n_input = 1;
		g.input = in;
		g.n_output = 1;
		g.output = out;
		return write_model(argv[3], &g);
	} else if (!strcmp(kind, "bigplan")) {
		int64_t d1[1] = { 1 }, ds[1] = { 1 }, dy[1] = { 1 };
		Onnx__TensorProto *sh = calloc(1, sizeof *sh);
		Onnx__NodeProto *nodes[8];
		onnx__tensor_proto__init(sh);
		sh->n_dims = 1;
		sh->dims = ds;
		sh->has_data_type = 1;
		sh->data_type = 7;   /* INT64 */
		sh->n_int64_data = 1;
		sh->int64_data = malloc(sizeof(int64_t));
		sh->int64_data[0] = n;
		sh->name = "s";
		init[0] = sh;
		nodes[0] = node("Neg", "neg", 1, ins("x", NULL), "xn");
		nodes[1] = node("Abs", "abs", 1, ins("x", NULL), "xa");
		nodes[2] = node("Expand", "e1", 2, ins("x", "s"), "a");
		nodes[3] = node("Expand", "e2", 2, ins("xn", "s"), "b");
		nodes[4] = node("Expand", "e3", 2, ins("xa", "s"), "c");
		nodes[5] = node("Add", "add1", 2, ins("a", "b"), "d");
		nodes[6] = node("Add", "add2", 2, ins("d", "c"), "e");
		nodes[7] = node("ReduceSum", "sum", 1, ins("e", NULL), "y");
		in[0] = tensor_info("x", 1, d1);
		out[0] = tensor_info("y", 1, dy);
		g.n_node = 8;
		g.node = nodes;
		g.n_initializer = 1;
		g.initializer = init;
		g.n_input = 1;
		g.input = in;
		g.n_output = 1;
		g.output = out;
		return write_model(argv[3], &g);
	} else {
		fprintf(stderr, "gen_model: unknown kind '%s'\n", kind);
		return 2;
	}
	g.n_output = 1;
	g.output = out;
	return write_model(argv[3], &g);
}

/*
 * test_onnx.c - the ONNX frontend (frontend/onnx_load.c): the shared models
 * and test data load with the right inputs, shapes and constants; bad files
 * and hand-built bad models fail with the right code and message.  The
 * writer (frontend/onnx_save.c): the models written and read back.
 *
 * Hand-built models are protobuf-c structs packed to bytes (Model below), so
 * each test states only what differs from "x f32[2,3] -> nodes -> y".
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/onnx.h"
#include "onnx.pb-c.h"

#define MODELS BURN_SOURCE_DIR "/../shared/models"

/* ---- helpers -------------------------------------------------------- */

static uint8_t *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	cr_assert(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	cr_assert(fread(buf, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static const Value *
val(const Graph *g, const char *name)
{
	int v = graph_find_value(g, name);

	cr_assert(v >= 0, "no value '%s'", name);
	return &g->val[v];
}

/* A model under construction: input x f32[2,3] (dims overridable), the
 * given nodes and initializers, one output. */
typedef struct Model {
	Onnx__ModelProto m;
	Onnx__OperatorSetIdProto op, *ops[1];
	Onnx__GraphProto g;
	Onnx__ValueInfoProto in, out, *ins[2], *outs[1];
	Onnx__TypeProto ty;
	Onnx__TypeProto__Tensor tt;
	Onnx__TensorShapeProto shp;
	Onnx__TensorShapeProto__Dimension d[2], *dp[2];
} Model;

static void
model_init(Model *b, Onnx__NodeProto **nodes, size_t nn, const char *out)
{
	memset(b, 0, sizeof *b);
	onnx__model_proto__init(&b->m);
	onnx__operator_set_id_proto__init(&b->op);
	onnx__graph_proto__init(&b->g);
	onnx__value_info_proto__init(&b->in);
	onnx__value_info_proto__init(&b->out);
	onnx__type_proto__init(&b->ty);
	onnx__type_proto__tensor__init(&b->tt);
	onnx__tensor_shape_proto__init(&b->shp);
	b->m.has_ir_version = 1;
	b->m.ir_version = 8;
	b->op.domain = "";
	b->op.has_version = 1;
	b->op.version = 17;
	b->ops[0] = &b->op;
	b->m.n_opset_import = 1;
	b->m.opset_import = b->ops;
	b->m.graph = &b->g;
	b->g.name = "test";
	b->g.n_node = nn;
	b->g.node = nodes;
	for (int k = 0; k < 2; k++) {
		onnx__tensor_shape_proto__dimension__init(&b->d[k]);
		b->d[k].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
		b->d[k].dim_value = 2 + k;
		b->dp[k] = &b->d[k];
	}
	b->shp.n_dim = 2;
	b->shp.dim = b->dp;
	b->tt.has_elem_type = 1;
	b->tt.elem_type = DT_F32;
	b->tt.shape = &b->shp;
	b->ty.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	b->ty.tensor_type = &b->tt;
	b->in.name = "x";
	b->in.type = &b->ty;
	b->ins[0] = &b->in;
	b->g.n_input = 1;
	b->g.input = b->ins;
	b->out.name = (char *)out;
	b->outs[0] = &b->out;
	b->g.n_output = 1;
	b->g.output = b->outs;
}

static void
node_init(Onnx__NodeProto *n, const char *op, const char *name,
          const char **in, size_t nin, const char **out, size_t nout)
{
	onnx__node_proto__init(n);
	n->op_type = (char *)op;
	n->name = (char *)name;
	n->input = (char **)in;
	n->n_input = nin;
	n->output = (char **)out;
	n->n_output = nout;
}

static void
tensor_init(Onnx__TensorProto *t, const char *name, int dt, int64_t *dims,
            size_t rank)
{
	onnx__tensor_proto__init(t);
	t->name = (char *)name;
	t->has_data_type = 1;
	t->data_type = dt;
	t->dims = dims;
	t->n_dims = rank;
}

static int
load_pb(Ctx *c, const ProtobufCMessage *msg, const char *dir, Graph **g)
{
	size_t n = protobuf_c_message_get_packed_size(msg);
	uint8_t *buf = malloc(n + 1);
	int rc;

	protobuf_c_message_pack(msg, buf);
	rc = onnx_load_bytes(c, buf, n, dir, g);
	free(buf);
	return rc;
}

static int
load_model(Ctx *c, Model *b, const char *dir, Graph **g)
{
	return load_pb(c, &b->m.base, dir, g);
}

/* ---- the shared models ---------------------------------------------- */

Test(onnx, mlp)
{
	Ctx c;
	Graph *g;
	const Value *x, *b;

	burn_ctx_init(&c, NULL);
	cr_assert_eq(onnx_load_file(&c, MODELS "/mlp/model.onnx", &g), BURN_OK, "%s", c.msg);
	cr_assert_eq(g->opset, 17);
	cr_assert_eq(g->nnode, 13);
	cr_assert_eq(g->nin, 1);
	cr_assert_eq(g->nout, 1);
	x = &g->val[g->in[0]];
	cr_assert_str_eq(x->name, "x");
	cr_assert_eq(x->kind, VK_INPUT);
	cr_assert_eq(x->dtype, DT_F32);
	cr_assert_eq(x->rank, 2);
	cr_assert_eq(x->dim[0], 4);
	cr_assert_eq(x->dim[1], 784);
	b = val(g, "net.0.bias");
	cr_assert_eq(b->kind, VK_CONST);
	cr_assert_eq(b->dtype, DT_F32);
	cr_assert_eq(b->rank, 1);
	cr_assert_eq(b->dim[0], 256);
	cr_assert_float_eq(((float *)b->data)[0], -0.01171778f, 1e-7);
	cr_assert_float_eq(((float *)b->data)[1], 0.01326992f, 1e-7);
	cr_assert_eq(val(g, "net.0.weight")->dim[1], 784);
	cr_assert_str_eq(g->val[g->out[0]].name, "19");
	cr_assert(g->val[g->out[0]].is_output);
	/* Constant nodes keep their tensor attribute */
	for (int i = 0; i < g->nnode; i++)
		if (g->node[i].op == OP_Constant) {
			const Attr *a = node_attr(&g->node[i], "value");
			cr_assert(a && a->type == AT_TENSOR && a->t->dtype == DT_F32);
		}
	/* topological order: every input is produced earlier */
	for (int i = 0; i < g->nnode; i++)
		for (int k = 0; k < g->node[i].nin; k++) {
			int p = g->val[g->node[i].in[k]].producer;
			cr_assert(p < i);
		}
	cr_assert_null(c.node);
	graph_destroy(g);
}

Test(onnx, other_models)
{
	static const char *names[] = { "lenet", "squeezenet1_1", "bert_tiny" };
	char path[512];

	for (int i = 0; i < 3; i++) {
		Ctx c;
		Graph *g;
		burn_ctx_init(&c, NULL);
		snprintf(path, sizeof path, MODELS "/%s/model.onnx", names[i]);
		cr_assert_eq(onnx_load_file(&c, path, &g), BURN_OK, "%s", c.msg);
		cr_assert_eq(g->opset, 17);
		if (i == 2) {
			const Value *ids = val(g, "input_ids");
			cr_assert_eq(g->nin, 2);
			cr_assert_eq(ids->dtype, DT_I64);
			cr_assert_eq(ids->rank, 2);
			cr_assert_eq(ids->dim[1], 16);
			cr_assert_eq(g->nnode, 176);
		}
		graph_destroy(g);
	}
}

Test(onnx, tensor_file)
{
	Ctx c;
	Arena a;
	Tensor t;
	const char *name;

	burn_ctx_init(&c, NULL);
	arena_init(&a);
	cr_assert_eq(onnx_load_tensor_file(&c, MODELS "/mlp/test_data_set_0/input_0.pb",
	                                   &a, &t, &name), BURN_OK, "%s", c.msg);
	cr_assert_str_eq(name, "x");
	cr_assert_eq(t.dtype, DT_F32);
	cr_assert_eq(t.rank, 2);
	cr_assert_eq(t.dim[0], 4);
	cr_assert_eq(t.dim[1], 784);
	cr_assert_eq(t.nbytes, 4 * 784 * 4);
	cr_assert_eq(onnx_load_tensor_file(&c, "/nonexistent/x.pb", &a, &t, NULL), BURN_ERR_IO);
	arena_free(&a);
}

/* Packed and unpacked encodings of repeated scalars both decode: dims is
 * declared unpacked (written packed here), float_data packed (written
 * unpacked here). */
Test(onnx, packed_and_unpacked)
{
	static const uint8_t pb[] = {
		0x0a, 0x02, 0x02, 0x03,             /* dims: packed [2, 3] */
		0x10, 0x01,                         /* data_type FLOAT */
		0x25, 0, 0, 0x80, 0x3f,             /* float_data 1.0, unpacked */
		0x25, 0, 0, 0, 0x40,
		0x25, 0, 0, 0x40, 0x40,
		0x25, 0, 0, 0x80, 0x40,
		0x25, 0, 0, 0xa0, 0x40,
		0x25, 0, 0, 0xc0, 0x40,             /* ... 6.0 */
		0x42, 0x01, 't',                    /* name "t" */
	};
	char path[] = "/tmp/burn_test_onnx_XXXXXX";
	int fd = mkstemp(path);
	Ctx c;
	Arena a;
	Tensor t;
	const char *name;

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, pb, sizeof pb), (ssize_t)sizeof pb);
	close(fd);
	burn_ctx_init(&c, NULL);
	arena_init(&a);
	cr_assert_eq(onnx_load_tensor_file(&c, path, &a, &t, &name), BURN_OK, "%s", c.msg);
	unlink(path);
	cr_assert_eq(t.rank, 2);
	cr_assert_eq(t.dim[0], 2);
	cr_assert_eq(t.dim[1], 3);
	cr_assert_str_eq(name, "t");
	for (int i = 0; i < 6; i++)
		cr_assert_eq(((float *)t.data)[i], (float)(i + 1));
	arena_free(&a);
}

/* ---- bad files ------------------------------------------------------ */

Test(onnx, missing_file)
{
	Ctx c;
	Graph *g = (Graph *)1;

	burn_ctx_init(&c, "nope.onnx");
	cr_assert_eq(onnx_load_file(&c, "/nonexistent/nope.onnx", &g), BURN_ERR_IO);
	cr_assert_null(g);
	cr_assert(strstr(c.msg, "cannot open"), "%s", c.msg);
	cr_assert(strstr(c.msg, "nope.onnx"), "%s", c.msg);
}

Test(onnx, garbage)
{
	static const uint8_t junk[] = { 0xff, 0xff, 0xff, 0xff, 0x0f, 0x07, 0x99, 0x12 };
	Ctx c;
	Graph *g;

	burn_ctx_init(&c, NULL);
	cr_assert_eq(onnx_load_bytes(&c, junk, sizeof junk, NULL, &g), BURN_ERR_PARSE);
	cr_assert_null(g);
	burn_ctx_init(&c, NULL);
	cr_assert_eq(onnx_load_bytes(&c, (const uint8_t *)"", 0, NULL, &g), BURN_ERR_PARSE);
}

Test(onnx, truncated)
{
	size_t len;
	uint8_t *data = slurp(MODELS "/mlp/model.onnx", &len);
	Ctx c;
	Graph *g;

	burn_ctx_init(&c, NULL);
	cr_assert_eq(onnx_load_bytes(&c, data, len / 2, NULL, &g), BURN_ERR_PARSE, "%s", c.msg);
	cr_assert_null(g);
	/* every prefix fails cleanly (the full model must load) */
	for (size_t n = 1; n < 4096; n += 37) {
		burn_ctx_init(&c, NULL);
		cr_assert_neq(onnx_load_bytes(&c, data, n, NULL, &g), BURN_OK);
		cr_assert_null(g);
	}
	free(data);
}

/* ---- hand-built models ---------------------------------------------- */

Test(onnx, unknown_op)
{
	const char *in[] = { "x" }, *out[] = { "y" };
	Onnx__NodeProto n, *nodes[] = { &n };
	Model b;
	Ctx c;
	Graph *g;

	node_init(&n, "Frobnicate", "my_node", in, 1, out, 1);
	model_init(&b, nodes, 1, "y");
	burn_ctx_init(&c, "m.onnx");
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_ERR_UNSUPPORTED);
	cr_assert(strstr(c.msg, "Frobnicate"), "%s", c.msg);
	cr_assert(strstr(c.msg, "my_node"), "%s", c.msg);
	cr_assert_null(c.node);
	cr_assert_null(g);
}

Test(onnx, opset_and_domain)
{
	const char *in[] = { "x" }, *out[] = { "y" };
	Onnx__NodeProto n, *nodes[] = { &n };
	Model b;
	Ctx c;
	Graph *g;

	node_init(&n, "Relu", "r", in, 1, out, 1);
	model_init(&b, nodes, 1, "y");
	b.op.version = 99;
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_ERR_UNSUPPORTED);
	cr_assert(strstr(c.msg, "99"), "%s", c.msg);
	b.op.version = 13;
	b.op.domain = "ai.onnx";
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_OK, "%s", c.msg);
	cr_assert_eq(g->opset, 13);
	graph_destroy(g);
	n.domain = "com.microsoft";
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_ERR_UNSUPPORTED);
	cr_assert(strstr(c.msg, "com.microsoft"), "%s", c.msg);
}

/* Nodes out of order, an unnamed node, symbolic dims, an initializer that is
 * also listed as an input, optional inputs left out. */
Test(onnx, structure)
{
	const char *in1[] = { "t", "w" }, *out1[] = { "y" };
	const char *in2[] = { "x", "", "" }, *out2[] = { "t" };
	Onnx__NodeProto n1, n2, *nodes[] = { &n1, &n2 };
	Onnx__TensorProto w, *inits[] = { &w };
	Onnx__ValueInfoProto win;
	int64_t wd[] = { 3 };
	float wv[] = { 1, 2, 3 };
	Model b;
	Ctx c;
	Graph *g;
	const Value *x, *wv_;

	node_init(&n1, "Add", "add", in1, 2, out1, 1);
	node_init(&n2, "Clip", "", in2, 3, out2, 1);
	model_init(&b, nodes, 2, "y");
	tensor_init(&w, "w", DT_F32, wd, 1);
	w.float_data = wv;
	w.n_float_data = 3;
	b.g.initializer = inits;
	b.g.n_initializer = 1;
	onnx__value_info_proto__init(&win);
	win.name = "w";
	win.type = &b.ty;
	b.ins[1] = &win;
	b.g.n_input = 2;
	b.d[0].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
	b.d[0].dim_param = "N";
	b.d[1].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE__NOT_SET;
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_OK, "%s", c.msg);
	cr_assert_eq(g->nin, 1);
	x = &g->val[g->in[0]];
	cr_assert_eq(x->dim[0], -1);
	cr_assert_str_eq(x->sym[0], "N");
	cr_assert_eq(x->dim[1], -1);
	cr_assert_str_eq(x->sym[1], "unk_0");
	wv_ = val(g, "w");
	cr_assert_eq(wv_->kind, VK_CONST);
	cr_assert_eq(((float *)wv_->data)[2], 3.0f);
	cr_assert_eq(g->nnode, 2);
	cr_assert_str_eq(g->node[0].name, "Clip_1");   /* sorted first, named */
	cr_assert_eq(g->node[0].nin, 1);               /* trailing "" dropped */
	cr_assert_str_eq(g->node[1].name, "add");
	cr_assert_eq(val(g, "t")->producer, 0);
	graph_destroy(g);
}

Test(onnx, undefined_and_duplicate)
{
	const char *in1[] = { "x", "nowhere" }, *out1[] = { "y" };
	Onnx__NodeProto n1, n2, *nodes[] = { &n1, &n2 };
	Model b;
	Ctx c;
	Graph *g;

	node_init(&n1, "Add", "add", in1, 2, out1, 1);
	model_init(&b, nodes, 1, "y");
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_ERR_INVALID);
	cr_assert(strstr(c.msg, "nowhere") && strstr(c.msg, "add"), "%s", c.msg);

	in1[1] = "x";
	node_init(&n2, "Relu", "r", in1, 1, out1, 1);
	b.g.n_node = 2;
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_ERR_INVALID);
	cr_assert(strstr(c.msg, "duplicate output"), "%s", c.msg);

	b.g.n_node = 1;
	b.out.name = "zzz";
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_ERR_INVALID);
	cr_assert(strstr(c.msg, "zzz"), "%s", c.msg);

	b.out.name = "y";
	n1.n_input = 1;                       /* Add with one input */
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_ERR_INVALID);
	cr_assert(strstr(c.msg, "wrong number of inputs"), "%s", c.msg);
}

Test(onnx, initializer_data)
{
	const char *in[] = { "x", "w" }, *out[] = { "y" };
	Onnx__NodeProto n, *nodes[] = { &n };
	Onnx__TensorProto w, *inits[] = { &w };
	int64_t wd[] = { 2, 3 };
	uint8_t bytes[24] = { 0 };
	int32_t i32[] = { 1, -1, 0x3c00, 255, 7, 0 };
	Model b;
	Ctx c;
	Graph *g;

	node_init(&n, "Add", "add", in, 2, out, 1);
	model_init(&b, nodes, 1, "y");
	b.g.initializer = inits;
	b.g.n_initializer = 1;

	tensor_init(&w, "w", DT_F32, wd, 2);
	w.has_raw_data = 1;
	w.raw_data.data = bytes;
	w.raw_data.len = 20;                  /* 24 needed */
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_ERR_INVALID);
	cr_assert(strstr(c.msg, "data size mismatch"), "%s", c.msg);

	wd[0] = -2;
	w.raw_data.len = 24;
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_ERR_INVALID);

	wd[0] = (int64_t)1 << 40;
	wd[1] = (int64_t)1 << 40;
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_ERR_LIMIT);

	/* int32_data holds the narrow types: f16 bits, i8, bool */
	wd[0] = 2;
	wd[1] = 3;
	w.has_raw_data = 0;
	w.int32_data = i32;
	w.n_int32_data = 6;
	w.data_type = DT_F16;
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_OK, "%s", c.msg);
	cr_assert_eq(((uint16_t *)val(g, "w")->data)[2], 0x3c00);
	cr_assert_eq(((uint16_t *)val(g, "w")->data)[1], 0xffff);
	graph_destroy(g);
	w.data_type = DT_I8;
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_OK, "%s", c.msg);
	cr_assert_eq(((int8_t *)val(g, "w")->data)[1], -1);
	cr_assert_eq(((int8_t *)val(g, "w")->data)[4], 7);
	graph_destroy(g);
	/* strings come in string_data: int32_data is not theirs */
	w.data_type = DT_STRING;
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_ERR_INVALID);
	cr_assert(strstr(c.msg, "0 strings, its shape needs 6"), "%s", c.msg);
}

Test(onnx, external_data)
{
	const char *in[] = { "x", "w" }, *out[] = { "y" };
	Onnx__NodeProto n, *nodes[] = { &n };
	Onnx__TensorProto w, *inits[] = { &w };
	Onnx__StringStringEntryProto loc, off, *kv[] = { &loc, &off };
	int64_t wd[] = { 2, 3 };
	float data[8] = { 0, 0, 10, 11, 12, 13, 14, 15 };   /* offset 8 */
	char dir[] = "/tmp/burn_test_ext_XXXXXX", path[256];
	Model b;
	Ctx c;
	Graph *g;
	FILE *f;

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/w.bin", dir);
	cr_assert((f = fopen(path, "wb")));
	fwrite(data, sizeof data, 1, f);
	fclose(f);

	node_init(&n, "Add", "add", in, 2, out, 1);
	model_init(&b, nodes, 1, "y");
	tensor_init(&w, "w", DT_F32, wd, 2);
	w.has_data_location = 1;
	w.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	onnx__string_string_entry_proto__init(&loc);
	onnx__string_string_entry_proto__init(&off);
	loc.key = "location";
	loc.value = "w.bin";
	off.key = "offset";
	off.value = "8";
	w.external_data = kv;
	w.n_external_data = 2;
	b.g.initializer = inits;
	b.g.n_initializer = 1;

	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, dir, &g), BURN_OK, "%s", c.msg);
	cr_assert_eq(((float *)val(g, "w")->data)[0], 10.0f);
	cr_assert_eq(((float *)val(g, "w")->data)[5], 15.0f);
	graph_destroy(g);

	off.value = "12";                     /* 20 bytes left, 24 needed */
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, dir, &g), BURN_ERR_INVALID, "%s", c.msg);
	off.value = "99999999999999999999";
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, dir, &g), BURN_ERR_INVALID, "%s", c.msg);
	off.value = "8";

	loc.value = "../w.bin";
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, dir, &g), BURN_ERR_INVALID);
	cr_assert(strstr(c.msg, "leaves the model's folder"), "%s", c.msg);
	loc.value = "sub/../../../etc/passwd";
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, dir, &g), BURN_ERR_INVALID);
	loc.value = "/etc/passwd";
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, dir, &g), BURN_ERR_INVALID);
	cr_assert(strstr(c.msg, "absolute"), "%s", c.msg);
	/* a symbolic link out of the folder is caught after resolving */
	snprintf(path, sizeof path, "%s/link.bin", dir);
	cr_assert_eq(symlink("/etc/passwd", path), 0);
	loc.value = "link.bin";
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, dir, &g), BURN_ERR_INVALID, "%s", c.msg);
	unlink(path);
	/* no folder: external data refused */
	loc.value = "w.bin";
	burn_ctx_init(&c, NULL);
	cr_assert_neq(load_model(&c, &b, NULL, &g), BURN_OK);
	snprintf(path, sizeof path, "%s/w.bin", dir);
	unlink(path);
	rmdir(dir);
}

/* Attributes of the scalar and list kinds. */
Test(onnx, attributes)
{
	const char *in[] = { "x" }, *out[] = { "y" };
	Onnx__NodeProto n, *nodes[] = { &n };
	Onnx__AttributeProto a[4], *ap[] = { &a[0], &a[1], &a[2], &a[3] };
	int64_t ints[] = { 1, -2, 3 };
	float floats[] = { 0.5f, 1.5f };
	ProtobufCBinaryData strs[] = { { 3, (uint8_t *)"abc" }, { 0, NULL } };
	Model b;
	Ctx c;
	Graph *g;
	const Node *nd;
	const int64_t *iv;

	node_init(&n, "Relu", "r", in, 1, out, 1);
	for (int k = 0; k < 4; k++)
		onnx__attribute_proto__init(&a[k]);
	a[0].name = "i";
	a[0].has_type = 1;
	a[0].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a[0].has_i = 1;
	a[0].i = -7;
	a[1].name = "ints";
	a[1].has_type = 1;
	a[1].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
	a[1].ints = ints;
	a[1].n_ints = 3;
	a[2].name = "floats";          /* no type field: guessed */
	a[2].floats = floats;
	a[2].n_floats = 2;
	a[3].name = "strs";
	a[3].has_type = 1;
	a[3].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
	a[3].strings = strs;
	a[3].n_strings = 2;
	n.attribute = ap;
	n.n_attribute = 4;
	model_init(&b, nodes, 1, "y");
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_OK, "%s", c.msg);
	nd = &g->node[0];
	cr_assert_eq(attr_int(nd, "i", 0), -7);
	cr_assert_eq(attr_ints(nd, "ints", &iv), 3);
	cr_assert_eq(iv[1], -2);
	cr_assert_eq(node_attr(nd, "floats")->type, AT_FLOATS);
	cr_assert_float_eq(node_attr(nd, "floats")->floats[1], 1.5, 1e-9);
	cr_assert_str_eq(node_attr(nd, "strs")->strs[0], "abc");
	cr_assert_str_eq(node_attr(nd, "strs")->strs[1], "");
	graph_destroy(g);

	a[0].ref_attr_name = "outer";
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_ERR_UNSUPPORTED);
	a[0].ref_attr_name = NULL;
	a[1].name = "i";                /* duplicate name */
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_ERR_INVALID);
}

/*
 * Subgraphs: a graph attribute whose body uses the outer value x (an
 * outer-scope capture: a local VK_TEMP value named "x", producer -1, not a
 * graph input), nested once more; the depth limit; undefined names inside.
 */
Test(onnx, subgraphs)
{
	const char *in[] = { "x" }, *out[] = { "y" };
	const char *sin[] = { "x" }, *sout[] = { "z" };
	const char *iin[] = { "z2" }, *iout[] = { "w" };
	Onnx__NodeProto n, sn, in_n, *nodes[] = { &n }, *snodes[] = { &sn },
		*inodes[] = { &in_n };
	Onnx__AttributeProto a, sa, *ap[] = { &a }, *sap[] = { &sa };
	Onnx__GraphProto body, inner;
	Onnx__ValueInfoProto zo, wo, zin, *zos[] = { &zo }, *wos[] = { &wo },
		*zins[] = { &zin };
	Model b;
	Ctx c;
	Graph *g, *sub, *sub2;
	int xv;

	/* inner: input z2 (untyped), w = Relu(z2) */
	node_init(&in_n, "Relu", "inner_relu", iin, 1, iout, 1);
	onnx__graph_proto__init(&inner);
	onnx__value_info_proto__init(&wo);
	onnx__value_info_proto__init(&zin);
	wo.name = "w";
	zin.name = "z2";
	inner.name = "inner";
	inner.node = inodes;
	inner.n_node = 1;
	inner.input = zins;
	inner.n_input = 1;
	inner.output = wos;
	inner.n_output = 1;
	/* body: z = Relu(x) [attr: inner], output z */
	node_init(&sn, "Relu", "body_relu", sin, 1, sout, 1);
	onnx__attribute_proto__init(&sa);
	sa.name = "inner";
	sa.has_type = 1;
	sa.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
	sa.g = &inner;
	sn.attribute = sap;
	sn.n_attribute = 1;
	onnx__graph_proto__init(&body);
	onnx__value_info_proto__init(&zo);
	zo.name = "z";
	body.node = snodes;
	body.n_node = 1;
	body.output = zos;
	body.n_output = 1;
	/* main: y = Relu(x) [attr: body] */
	node_init(&n, "Relu", "outer_relu", in, 1, out, 1);
	onnx__attribute_proto__init(&a);
	a.name = "body";
	a.has_type = 1;
	a.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
	a.g = &body;
	n.attribute = ap;
	n.n_attribute = 1;
	model_init(&b, nodes, 1, "y");

	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_OK, "%s", c.msg);
	sub = node_attr(&g->node[0], "body")->g;
	cr_assert_not_null(sub);
	cr_assert_eq(sub->parent, g);
	cr_assert_eq(sub->opset, 17);
	cr_assert_str_eq(sub->name, "body");
	cr_assert_eq(sub->nin, 0);
	cr_assert_eq(sub->nout, 1);
	xv = graph_find_value(sub, "x");
	cr_assert(xv >= 0);
	cr_assert_eq(sub->val[xv].producer, -1);
	cr_assert_eq(sub->val[xv].kind, VK_TEMP);
	cr_assert_null(sub->val[xv].data);
	sub2 = node_attr(&sub->node[0], "inner")->g;
	cr_assert_eq(sub2->parent, sub);
	cr_assert_eq(sub2->nin, 1);
	cr_assert_eq(sub2->val[sub2->in[0]].rank, -1);
	cr_assert_eq(graph_verify(&c, g), BURN_OK, "%s", c.msg);
	graph_destroy(g);

	/* two levels of subgraphs against a limit of one */
	burn_ctx_init(&c, NULL);
	c.limits.max_depth = 1;
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_ERR_LIMIT, "%s", c.msg);
	cr_assert_null(g);

	/* a name defined in no scope */
	iin[0] = "ghost";
	burn_ctx_init(&c, NULL);
	cr_assert_eq(load_model(&c, &b, NULL, &g), BURN_ERR_INVALID);
	cr_assert(strstr(c.msg, "ghost") && strstr(c.msg, "inner_relu"), "%s", c.msg);
}

/* Hostile bytes never crash: flip bytes of a small valid model. */
Test(onnx, mutations)
{
	const char *in[] = { "x", "w" }, *out[] = { "y" };
	Onnx__NodeProto n, *nodes[] = { &n };
	Onnx__TensorProto w, *inits[] = { &w };
	int64_t wd[] = { 2, 3 };
	float wv[6] = { 1, 2, 3, 4, 5, 6 };
	Model b;
	uint8_t *buf;
	size_t len;
	unsigned seed = 12345;

	node_init(&n, "Add", "add", in, 2, out, 1);
	model_init(&b, nodes, 1, "y");
	tensor_init(&w, "w", DT_F32, wd, 2);
	w.float_data = wv;
	w.n_float_data = 6;
	b.g.initializer = inits;
	b.g.n_initializer = 1;
	len = onnx__model_proto__get_packed_size(&b.m);
	buf = malloc(len);
	for (int it = 0; it < 20000; it++) {
		Ctx c;
		Graph *g;
		onnx__model_proto__pack(&b.m, buf);
		for (int k = 0; k < 1 + it % 4; k++) {
			seed = seed * 1103515245 + 12345;
			buf[(seed >> 8) % len] = (uint8_t)(seed >> 20);
		}
		burn_ctx_init(&c, NULL);
		if (onnx_load_bytes(&c, buf, len, NULL, &g) == BURN_OK)
			graph_destroy(g);
		else
			cr_assert_null(g);
	}
	free(buf);
}

/* ---- writing (frontend/onnx_save.c) ---------------------------------- */

#include "passes/passes.h"

static char *
ir_text(const Graph *g)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	cr_assert(f);
	ir_print(f, g, -1);
	fclose(f);
	return s;
}

/* The lines of IR text t that are (want_const) or are not constants. */
static char *
ir_lines(const char *t, int want_const)
{
	char *out = calloc(strlen(t) + 1, 1), *o = out;

	cr_assert(out);
	while (*t) {
		const char *e = strchr(t, '\n');
		size_t n = e ? (size_t)(e - t) + 1 : strlen(t);
		int is_const = strstr(t, " = const ") && strstr(t, " = const ") < t + n;
		if (is_const == want_const) {
			memcpy(o, t, n);
			o += n;
		}
		t += n;
	}
	return out;
}

/* The four models, inferred, written and read back: the same graph IR
 * text (nodes, attributes, names, types), and each constant read back is
 * one of the graph's, bytes and all (the graph keeps the constants that
 * folding left unused; the file holds only those the nodes read). */
Test(onnx_save, roundtrip_models)
{
	static const char *names[] = { "mlp", "lenet", "squeezenet1_1", "bert_tiny" };
	char path[512];

	for (int i = 0; i < 4; i++) {
		Ctx c;
		Graph *g, *g2;
		uint8_t *buf;
		size_t len;
		char *t1, *t2;
		burn_ctx_init(&c, NULL);
		snprintf(path, sizeof path, MODELS "/%s/model.onnx", names[i]);
		cr_assert_eq(onnx_load_file(&c, path, &g), BURN_OK, "%s", c.msg);
		cr_assert_eq(pass_infer_fold(&c, g), BURN_OK, "%s", c.msg);
		cr_assert_eq(onnx_save_bytes(&c, g, &buf, &len), BURN_OK, "%s: %s", names[i], c.msg);
		cr_assert_eq(onnx_load_bytes(&c, buf, len, NULL, &g2), BURN_OK, "%s: %s", names[i],
		             c.msg);
		cr_assert_eq(pass_infer_fold(&c, g2), BURN_OK, "%s", c.msg);
		t1 = ir_text(g);
		t2 = ir_text(g2);
		{
			char *n1 = ir_lines(t1, 0), *n2 = ir_lines(t2, 0), *k2 = ir_lines(t2, 1);
			const char *l = k2;
			cr_assert_str_eq(n1, n2, "%s: the graph read back differs", names[i]);
			while (*l) {
				const char *e = strchr(l, '\n');
				char *line = strndup(l, e ? (size_t)(e - l + 1) : strlen(l));
				cr_assert(strstr(t1, line), "%s: constant not in the graph: %.200s",
				          names[i], line);
				free(line);
				l += e ? e - l + 1 : (long)strlen(l);
			}
			cr_assert(strlen(k2) > 0, "%s: no constants read back", names[i]);
			free(n1);
			free(n2);
			free(k2);
		}
		free(t1);
		free(t2);
		free(buf);
		graph_destroy(g);
		graph_destroy(g2);
	}
}

/* What ONNX cannot hold as written is refused, naming the value. */
Test(onnx_save, refused)
{
	Ctx c;
	Graph *g = graph_create("t");
	uint8_t *buf = NULL;
	size_t len;
	int x, y;

	burn_ctx_init(&c, NULL);
	g->opset = 17;
	x = graph_add_value(g, "x");
	y = graph_add_value(g, "y");
	GV(g, x)->kind = VK_INPUT;
	GV(g, x)->rank = 1;
	GV(g, x)->dim[0] = 2;
	graph_add_input(g, x);
	graph_add_node(g, OP_Relu, "r", 1, &x, 1, &y);
	graph_add_output(g, y);
	cr_assert_eq(onnx_save_bytes(&c, g, &buf, &len), BURN_ERR_UNSUPPORTED);
	cr_assert(strstr(c.msg, "value 'x': untyped"), "%s", c.msg);
	cr_assert_null(buf);
	graph_destroy(g);
}

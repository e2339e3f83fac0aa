/*
 * test_ir.c - the graph IR core: builder, verifier, toposort, text form
 * round trip, parse errors, arena and error-context helpers.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph.h"

/* ir_print into a malloc'd string. */
static char *
print_str(const Graph *g, int64_t elide)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	cr_assert(f);
	ir_print(f, g, elide);
	fclose(f);
	return buf;
}

static int
parse_str(Ctx *c, const char *s, Graph **g)
{
	return ir_parse(c, s, strlen(s), g);
}

/* x:f32[1,3,N] --Add(w)--> t --Relu--> y, plus attrs of several kinds. */
static Graph *
small_graph(void)
{
	Ctx c;
	Graph *g = graph_create("main");
	int x, w, t, y, n, in[2];
	int64_t d1[1] = {3};
	float wd[3] = {1, 2.5f, -3};
	Attr *a;

	burn_ctx_init(&c, NULL);
	g->opset = 17;
	x = graph_add_value(g, "x");
	w = graph_add_value(g, "w0");
	t = graph_add_value(g, "t/1:0");
	y = graph_add_value(g, "y");
	graph_add_input(g, x);
	GV(g, x)->dtype = DT_F32;
	GV(g, x)->rank = 3;
	GV(g, x)->dim[0] = 1;
	GV(g, x)->dim[1] = 3;
	GV(g, x)->dim[2] = -1;
	GV(g, x)->sym[2] = "N";
	cr_assert_eq(graph_set_const(&c, g, w, DT_F32, 1, d1, wd), BURN_OK);
	in[0] = x;
	in[1] = w;
	n = graph_add_node(g, op_lookup("Add"), "add_1", 2, in, 1, &t);
	value_copy_shape(GV(g, t), GV(g, x));
	GV(g, t)->dtype = DT_F32;
	n = graph_add_node(g, op_lookup("LeakyRelu"), "relu", 1, &t, 1, &y);
	a = node_add_attr(g, n, "alpha", AT_FLOAT);
	a->f = 0.1f;
	a = node_add_attr(g, n, "axis", AT_INT);
	a->i = -2;
	a = node_add_attr(g, n, "mode", AT_STRING);
	a->s = "con\"st\n";
	a->slen = 7;
	graph_add_output(g, y);
	return g;
}

Test(ir, builder_and_verify)
{
	Ctx c;
	Graph *g = small_graph();

	burn_ctx_init(&c, "m.onnx");
	cr_assert_eq(graph_verify(&c, g), BURN_OK, "%s", c.msg);
	cr_assert_eq(g->nnode, 2);
	cr_assert_eq(GV(g, 3)->producer, 1);
	cr_assert_eq(GV(g, 0)->kind, VK_INPUT);
	cr_assert_eq(GV(g, 1)->kind, VK_CONST);
	cr_assert_eq(GV(g, 1)->producer, -1);
	cr_assert_eq(value_numel(GV(g, 1)), 3);
	cr_assert_eq(value_nbytes(GV(g, 1)), 12);
	cr_assert_eq(value_numel(GV(g, 0)), -1);
	cr_assert(!value_shape_known(GV(g, 0)));
	cr_assert_float_eq(value_get_f(GV(g, 1), 1), 2.5, 1e-9);
	cr_assert_eq(value_get_i(GV(g, 1), 2), -3);
	cr_assert_eq(graph_find_value(g, "t/1:0"), 2);
	cr_assert_eq(graph_find_value(g, "nope"), -1);
	{
		char buf[64];
		cr_assert_str_eq(value_type_str(GV(g, 0), buf, sizeof buf), "f32[1,3,N]");
		cr_assert_str_eq(value_type_str(GV(g, 3), buf, sizeof buf), "?");
	}
	cr_assert_eq(attr_int(&g->node[1], "axis", 0), -2);
	cr_assert_float_eq(attr_float(&g->node[1], "alpha", 0), 0.1f, 1e-9);
	cr_assert_str_eq(attr_str(&g->node[1], "mode", ""), "con\"st\n");
	cr_assert_eq(attr_int(&g->node[1], "missing", 7), 7);
	cr_assert_eq(attr_ints(&g->node[1], "axis", NULL), 0);
	graph_destroy(g);
}

Test(ir, verify_catches_undefined_input)
{
	Ctx c;
	Graph *g = small_graph();
	int u = graph_add_value(g, "ghost"), o = graph_add_value(g, "o");

	graph_add_node(g, op_lookup("Relu"), "r2", 1, &u, 1, &o);
	burn_ctx_init(&c, NULL);
	cr_assert_neq(graph_verify(&c, g), BURN_OK);
	cr_assert(strstr(c.msg, "ghost"), "%s", c.msg);
	cr_assert(strstr(c.msg, "node 'r2' (Relu)"), "%s", c.msg);
	burn_ctx_init(&c, NULL);
	cr_assert_eq(graph_toposort(&c, g), BURN_ERR_INVALID);
	cr_assert(strstr(c.msg, "input 'ghost' of node 'r2' is not defined"), "%s", c.msg);
	graph_destroy(g);
}

Test(ir, verify_catches_bad_arity)
{
	Ctx c;
	Graph *g = small_graph();
	int in[2] = {0, 3}, o = graph_add_value(g, "o");

	graph_add_node(g, op_lookup("Relu"), "r2", 2, in, 1, &o);
	burn_ctx_init(&c, NULL);
	cr_assert_neq(graph_verify(&c, g), BURN_OK);
	cr_assert(strstr(c.msg, "2 inputs"), "%s", c.msg);
	graph_destroy(g);
}

Test(ir, verify_catches_double_definition)
{
	Ctx c;
	Graph *g = small_graph();
	int y = graph_find_value(g, "y");

	graph_add_node(g, op_lookup("Relu"), "again", 1, &(int){0}, 1, &y);
	burn_ctx_init(&c, NULL);
	cr_assert_neq(graph_verify(&c, g), BURN_OK);
	graph_destroy(g);
}

Test(ir, toposort_reorders_and_finds_cycles)
{
	Ctx c;
	Graph *g = graph_create("g");
	int x = graph_add_value(g, "x"), a = graph_add_value(g, "a");
	int b = graph_add_value(g, "b"), d = graph_add_value(g, "d");
	int relu = op_lookup("Relu");

	graph_add_input(g, x);
	graph_add_node(g, relu, "nb", 1, &a, 1, &b);   /* uses a before def */
	graph_add_node(g, relu, "nd", 1, &b, 1, &d);
	graph_add_node(g, relu, "na", 1, &x, 1, &a);
	graph_add_output(g, d);
	burn_ctx_init(&c, NULL);
	cr_assert_neq(graph_verify(&c, g), BURN_OK);
	burn_ctx_init(&c, NULL);
	cr_assert_eq(graph_toposort(&c, g), BURN_OK, "%s", c.msg);
	cr_assert_str_eq(g->node[0].name, "na");
	cr_assert_str_eq(g->node[1].name, "nb");
	cr_assert_str_eq(g->node[2].name, "nd");
	cr_assert_eq(GV(g, a)->producer, 0);
	cr_assert_eq(GV(g, d)->producer, 2);
	cr_assert_eq(graph_verify(&c, g), BURN_OK, "%s", c.msg);

	/* compaction drops a dead node and renumbers producers */
	g->node[1].dead = 1;
	g->node[2].in[0] = a;
	graph_compact(g);
	cr_assert_eq(g->nnode, 2);
	cr_assert_eq(GV(g, d)->producer, 1);
	cr_assert_eq(GV(g, b)->producer, -1);
	cr_assert_eq(graph_verify(&c, g), BURN_OK, "%s", c.msg);

	/* a -> d -> a: a cycle */
	g->node[0].in[0] = d;
	burn_ctx_init(&c, NULL);
	cr_assert_eq(graph_toposort(&c, g), BURN_ERR_INVALID);
	cr_assert(strstr(c.msg, "cycle"), "%s", c.msg);
	graph_destroy(g);
}

/* Every attribute kind, a constant, odd names, a subgraph, dead node. */
static const char *full_text =
	"graph main opset 17 (%x: f32[1,3,N], %\"in/2:0\": i64[], %d: f64[2] = [0.10000000000000001, -2]) -> (%y, %k) {\n"
	"  %w0 = const f32[3] [1, 2.5, -3.40282347e+38]\n"
	"  %h = const f16[2] [0.099975586, -inf]\n"
	"  %b = const bool[2,1] [1, 0]\n"
	"  %u = const u64[1] [18446744073709551615]\n"
	"  %e = const i8[0] []\n"
	"  %t1 = Add(%x, %w0) @name \"add 1\" : f32[1,3,N]\n"
	"  %y = LeakyRelu(%t1) {alpha=0.100000001, i=-5, s=\"a\\\"b\\\\c\\n\\x01\", f1=1.0, big=1e+30, dbl=0.10000000000000001, ni=nan, pinf=inf, ints=[1, -2, 3], ints0=ints[], floats=[1.5, 2.0, -inf], floats0=floats[], strs=[\"a\", \"\", \"c d\"], strs0=strings[], t=tensor i32[2,2] [1, 2, 3, 4], ts=[tensor f32[] [0.5], tensor u8[2] [0, 255]], u=undef} @name \"relu\" @domain \"com.x\" : f32[1,3,N]\n"
	"  %k, %ki = TopK(%t1, %\"in/2:0\") {axis=-1, body=graph body (%i: i64[]) -> (%o) {\n"
	"    %o = Add(%i, %\"in/2:0\") : i64[]\n"
	"  }, branches=[graph a () -> (%\"in/2:0\") {\n"
	"  }, graph b opset 11 () -> (%c) {\n"
	"    %c = const ?[] <elided>\n"
	"  }]} : f32[?], _\n"
	"  %dr, _ = Dropout(%x) : f32[1,3,N], _\n"
	"  %z = Relu(%x) @dead : ?\n"
	"}\n";

Test(ir, print_parse_print_round_trip)
{
	Ctx c;
	Graph *g = NULL, *g2 = NULL;
	char *s1, *s2;
	/* the elided constant inside is not parseable: replace it first */
	char *txt = strdup(full_text), *p = strstr(txt, "%c = const ?[] <elided>");

	cr_assert(p);
	memcpy(p, "%c = Relu(%\"in/2:0\")    ", strlen("%c = const ?[] <elided>"));
	burn_ctx_init(&c, "t.ir");
	cr_assert_eq(parse_str(&c, txt, &g), BURN_OK, "%s", c.msg);
	s1 = print_str(g, -1);
	burn_ctx_init(&c, "t.ir");
	cr_assert_eq(parse_str(&c, s1, &g2), BURN_OK, "%s\n%s", c.msg, s1);
	s2 = print_str(g2, -1);
	cr_assert_str_eq(s1, s2);

	/* spot checks on the parsed graph */
	{
		int y = graph_find_value(g, "y"), h = graph_find_value(g, "h");
		const Node *n = &g->node[GV(g, y)->producer];
		const Attr *a;
		cr_assert_eq(g->opset, 17);
		cr_assert_str_eq(n->name, "relu");
		cr_assert_str_eq(n->domain, "com.x");
		cr_assert_float_eq(attr_float(n, "alpha", 0), 0.1f, 0);
		cr_assert_float_eq(attr_float(n, "dbl", 0), 0.1, 0);
		cr_assert_eq(node_attr(n, "f1")->type, AT_FLOAT);
		cr_assert_eq(node_attr(n, "ints0")->type, AT_INTS);
		cr_assert_eq(node_attr(n, "floats")->type, AT_FLOATS);
		cr_assert_eq(node_attr(n, "u")->type, AT_UNDEF);
		a = node_attr(n, "s");
		cr_assert_eq(a->slen, 7);
		cr_assert(memcmp(a->s, "a\"b\\c\n\x01", 7) == 0);
		a = node_attr(n, "t");
		cr_assert_eq(a->t->dtype, DT_I32);
		cr_assert_eq(a->t->nbytes, 16);
		cr_assert_float_eq(value_get_f(GV(g, h), 0), 0.099975586, 1e-9);
		cr_assert_eq(GV(g, graph_find_value(g, "u"))->kind, VK_CONST);
		cr_assert_eq((uint64_t)value_get_i(GV(g, graph_find_value(g, "u")), 0),
		             UINT64_MAX);
		cr_assert_eq(GV(g, graph_find_value(g, "d"))->kind, VK_INPUT);
		a = node_attr(&g->node[GV(g, graph_find_value(g, "k"))->producer], "branches");
		cr_assert_eq(a->type, AT_GRAPHS);
		cr_assert_eq(a->n, 2);
		cr_assert_eq(a->gs[0]->parent, g);
		cr_assert_eq(a->gs[1]->opset, 11);
	}
	free(s1);
	free(s2);
	free(txt);
	graph_destroy(g);
	graph_destroy(g2);
}

Test(ir, builder_graph_round_trips)
{
	Ctx c;
	Graph *g = small_graph(), *g2 = NULL;
	char *s1 = print_str(g, -1), *s2;

	burn_ctx_init(&c, NULL);
	cr_assert_eq(parse_str(&c, s1, &g2), BURN_OK, "%s\n%s", c.msg, s1);
	s2 = print_str(g2, -1);
	cr_assert_str_eq(s1, s2);
	cr_assert(strstr(s1, "%\"t/1:0\""), "%s", s1);
	free(s1);
	free(s2);
	graph_destroy(g);
	graph_destroy(g2);
}

Test(ir, elided_constants_do_not_parse)
{
	Ctx c;
	Graph *g = small_graph(), *g2 = NULL;
	char *s = print_str(g, 2);

	cr_assert(strstr(s, "<elided>"), "%s", s);
	burn_ctx_init(&c, NULL);
	cr_assert_eq(parse_str(&c, s, &g2), BURN_ERR_PARSE);
	cr_assert(strstr(c.msg, "elided"), "%s", c.msg);
	cr_assert_null(g2);
	free(s);
	graph_destroy(g);
}

Test(ir, parse_errors)
{
	static const char *bad[] = {
		"",
		"graph",
		"graph g",
		"graph g (",
		"graph g () -> () {",
		"graph g () -> () { %y = Nope(%x) }",
		"graph g (%x: f32[2]) -> (%y) { %y = Relu(%x, }",
		"graph g (%x: f32[2]) -> (%y) { %y = Relu(%x) {a=} }",
		"graph g (%x: f32[2]) -> (%y) { %y = Relu(%x) {a=[1, \"s\"]} }",
		"graph g (%x: f32[2]) -> (%y) { %y = Relu(%x) {a=\"unterminated} }",
		"graph g (%x: f33[2]) -> (%y) { }",
		"graph g (%x: f32[1,2,3,4,5,6,7,8,9]) -> () { }",
		"graph g () -> () { %c = const f32[3] [1, 2] }",
		"graph g () -> () { %c = const f32[2] [1, 2, 3] }",
		"graph g () -> () { %c = const u8[1] [256] }",
		"graph g () -> () { %c = const f32[1000000000000] [1] }",
		"graph g () -> () { %c = const f32[4611686018427387904,4] [] }",
		"graph g () -> () { } trailing",
		"graph g () -> () { %a = Relu(%a) }",
		"graph g (%x: f32[2]) -> (%y) { %y = Relu(%x) %y = Relu(%x) }",
		"graph g (%x: f32[2], %x: f32[2]) -> () { }",
		"graph g () -> () { %y = Relu() }",
		"graph g () -> () { \x01 }",
		"graph g () -> () { %y = Relu(%x) {s=\"\\q\"} }",
		"graph g () -> () { %y = Relu(%x) {g=graph h () -> () { %z = Relu(%q) }} }",
		"graph g () -> () { %y = Relu(%x) {l=[graph h () -> () { }, graph i ( ]} }",
		"graph g () -> (%nowhere) { }",
		"graph g () -> () { %y = Relu(%x) {t=tensor f32[2] [1, nan, 3]} }",
		"%%%%%%",
		"graph g () -> () { %y = Relu(%x) @bogus }",
	};
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		Ctx c;
		Graph *g = (Graph *)1;
		int rc;
		burn_ctx_init(&c, NULL);
		rc = parse_str(&c, bad[i], &g);
		cr_assert_neq(rc, BURN_OK, "case %zu parsed: %s", i, bad[i]);
		cr_assert_null(g, "case %zu", i);
		cr_assert_eq(c.code, rc);
		cr_assert(c.msg[0], "case %zu has no message", i);
		if (rc == BURN_ERR_PARSE)
			cr_assert(strncmp(c.msg, "line ", 5) == 0, "case %zu: %s", i, c.msg);
	}
}

/* Every prefix of a valid text must fail cleanly (a cheap fuzz). */
Test(ir, parse_prefixes_never_crash)
{
	size_t n = strlen(full_text), i;

	for (i = 0; i < n; i++) {
		Ctx c;
		Graph *g = NULL;
		burn_ctx_init(&c, NULL);
		if (ir_parse(&c, full_text, i, &g) == BURN_OK)
			graph_destroy(g);
	}
}

Test(ir, parse_deep_nesting_is_limited)
{
	char *s = malloc(100000), *p = s;
	Ctx c;
	Graph *g = NULL;
	int i;

	for (i = 0; i < 1000; i++)
		p += sprintf(p, "graph g () -> () { %%y = Relu(%%x) {b=");
	strcpy(p, "1");
	burn_ctx_init(&c, NULL);
	cr_assert_eq(parse_str(&c, s, &g), BURN_ERR_LIMIT, "%s", c.msg);
	free(s);
}

Test(ir, arena)
{
	Arena a;
	int i;
	char *big, *s;
	int *v, *w;

	arena_init(&a);
	for (i = 0; i < 5000; i++) {
		unsigned char *p = arena_alloc(&a, (size_t)(i % 200) + 1);
		cr_assert(p);
		cr_assert_eq((uintptr_t)p % 16, 0);
		cr_assert_eq(p[0], 0);
		p[0] = 0xff;
	}
	big = arena_alloc(&a, 1 << 20);
	cr_assert(big);
	cr_assert_eq(big[(1 << 20) - 1], 0);
	cr_assert_geq(a.total, (size_t)1 << 20);
	s = arena_printf(&a, "%s-%d", "ab", 42);
	cr_assert_str_eq(s, "ab-42");
	cr_assert_str_eq(arena_strndup(&a, "hello", 3), "hel");
	v = arena_alloc(&a, 4 * sizeof *v);
	for (i = 0; i < 4; i++)
		v[i] = i + 1;
	w = arena_grow(&a, v, sizeof *v, 4, 100);
	cr_assert_eq(w[3], 4);
	cr_assert_eq(w[99], 0);
	arena_free(&a);
	cr_assert_eq(a.total, 0);
}

Test(ir, overflow_helpers)
{
	int64_t r;

	cr_assert_eq(burn_mul_ovf(3, 4, &r), 0);
	cr_assert_eq(r, 12);
	cr_assert_eq(burn_mul_ovf(INT64_MAX / 2 + 1, 2, &r), 1);
	cr_assert_eq(burn_add_ovf(INT64_MAX, 1, &r), 1);
	cr_assert_eq(burn_add_ovf(-5, 2, &r), 0);
	cr_assert_eq(r, -3);
}

Test(ir, burn_fail_first_error_and_prefix)
{
	Ctx c;

	burn_ctx_init(&c, "model.onnx");
	cr_assert_eq(c.limits.max_depth, 32);
	cr_assert_eq(c.limits.max_nodes, 1000000);
	c.node = "conv1";
	c.op = "Conv";
	cr_assert_eq(burn_fail(&c, BURN_ERR_SHAPE, "axis %d", 5), BURN_ERR_SHAPE);
	cr_assert_str_eq(c.msg, "model.onnx: node 'conv1' (Conv): axis 5");
	cr_assert_eq(burn_fail(&c, BURN_ERR_IO, "later"), BURN_ERR_IO);
	cr_assert_eq(c.code, BURN_ERR_SHAPE);
	cr_assert_str_eq(c.msg, "model.onnx: node 'conv1' (Conv): axis 5");

	burn_ctx_init(&c, NULL);
	burn_fail(&c, BURN_ERR_PARSE, "plain");
	cr_assert_str_eq(c.msg, "plain");
	cr_assert_str_eq(burn_code_name(BURN_ERR_PARSE), "parse");
}

Test(ir, dtypes_and_ops)
{
	cr_assert_eq(dtype_size(DT_F32), 4);
	cr_assert_eq(dtype_size(DT_BF16), 2);
	cr_assert_eq(dtype_size(DT_STRING), 8);   /* a pointer */
	cr_assert(!dtype_supported(DT_STRING));   /* TY_STR ops only */
	cr_assert(dtype_is_string(DT_STRING));
	cr_assert_str_eq(dtype_name(DT_BOOL), "bool");
	cr_assert_eq(dtype_from_name("bf16"), DT_BF16);
	cr_assert_eq(dtype_from_name("nope"), DT_UNDEF);
	cr_assert_str_eq(dtype_ctype(DT_F16), "uint16_t");
	cr_assert(dtype_supported(DT_BOOL));
	cr_assert(!dtype_supported(DT_C64));
	cr_assert(!dtype_is_int(DT_BOOL));
	cr_assert_eq(op_lookup("Conv"), OP_Conv);
	cr_assert_str_eq(op_table[OP_Gemm].name, "Gemm");
	cr_assert_eq(op_lookup("conv"), OP_NONE_);
	cr_assert_str_eq(op_class_name(op_table[OP_Add].cls), "elem");
}

/* Issue 15: every message is one line, whatever the model's names hold. */
Test(ir, messages_are_one_escaped_line)
{
	Ctx c;
	char big[3000];

	burn_ctx_init(&c, "m.onnx");
	c.node = "a\nb";
	c.op = "Foo\x1b[31m";
	burn_fail(&c, BURN_ERR_INVALID, "%s", "\xc2\x9b ok \xc3\xa9 \xff\t\x7f");
	cr_assert_str_eq(c.msg, "m.onnx: node 'a\\nb' (Foo\\x1b[31m): "
	                 "\\xc2\\x9b ok \xc3\xa9 \\xff\\t\\x7f");
	/* cut at the end of the buffer, never inside an escape */
	memset(big, '\n', sizeof big - 1);
	big[sizeof big - 1] = 0;
	burn_ctx_init(&c, NULL);
	burn_fail(&c, BURN_ERR_INVALID, "%s", big);
	cr_assert(strlen(c.msg) > 500 && strlen(c.msg) < sizeof c.msg);
	cr_assert_eq(strlen(c.msg) % 2, 0);
	for (size_t i = 0; c.msg[i]; i += 2)
		cr_assert(c.msg[i] == '\\' && c.msg[i + 1] == 'n');
	/* overlong and surrogate UTF-8 forms are not valid UTF-8 */
	burn_ctx_init(&c, NULL);
	burn_fail(&c, BURN_ERR_INVALID, "%s", "\xc0\xaf \xed\xa0\x80");
	cr_assert_str_eq(c.msg, "\\xc0\\xaf \\xed\\xa0\\x80");
}

/* Issue 15: the attribute types of ONNX, checked for every op. */
Test(ir, attribute_types)
{
	Ctx c;
	Graph *g = graph_create("main");
	int x, y, n;
	Attr *a;

	cr_assert_eq(attr_type_expected(OP_Transpose, 17, "activation_alpha"), AT_FLOATS);
	cr_assert_eq(attr_type_expected(OP_Transpose, 17, "width_scale"), AT_FLOAT);
	cr_assert_eq(attr_type_expected(OP_Transpose, 17, "perm"), AT_INTS);
	cr_assert_eq(attr_type_expected(OP_Gemm, 17, "transA"), AT_INT);
	cr_assert_eq(attr_type_expected(OP_Gemm, 17, "no_such_attr"), AT_UNDEF);
	cr_assert_eq(attr_type_expected(OP_Pad, 2, "value"), AT_FLOAT);
	cr_assert_eq(attr_type_expected(OP_Constant, 13, "value"), AT_TENSOR);
	cr_assert_eq(attr_type_expected(OP_Cast, 5, "to"), AT_STRING);
	cr_assert_eq(attr_type_expected(OP_Cast, 13, "to"), AT_INT);
	cr_assert_eq(attr_type_expected(OP_LpPool, 1, "p"), AT_FLOAT);
	cr_assert_eq(attr_type_expected(OP_LpPool, 11, "p"), AT_INT);
	cr_assert_str_eq(attr_type_name(AT_FLOATS), "floats");

	g->opset = 17;
	x = graph_add_value(g, "x");
	y = graph_add_value(g, "y");
	n = graph_add_node(g, OP_Softmax, "sm", 1, &x, 1, &y);
	a = node_add_attr(g, n, "axis", AT_FLOAT);
	a->f = 1;
	node_add_attr(g, n, "made_up", AT_GRAPHS);  /* unknown names: ignored */
	burn_ctx_init(&c, NULL);
	cr_assert_eq(graph_check_attrs(&c, g), BURN_ERR_INVALID);
	cr_assert_str_eq(c.msg, "node 'sm' (Softmax): attribute 'axis' is a float, "
	                 "expected an int");
	cr_assert_null(c.node);
	a = (Attr *)node_attr(&g->node[n], "axis");   /* the vector moved */
	a->type = AT_INT;
	burn_ctx_init(&c, NULL);
	cr_assert_eq(graph_check_attrs(&c, g), BURN_OK);
	/* an int stands for a float */
	a = node_add_attr(g, n, "alpha", AT_INT);
	cr_assert_eq(graph_check_attrs(&c, g), BURN_OK);
	graph_destroy(g);
}

/* Issue 15: old forms of ops that took attributes for today's inputs. */
Test(ir, old_op_forms)
{
	int lo, hi;

	op_inputs(OP_Reshape, 4, &lo, &hi);
	cr_assert(lo == 1 && hi == 2);
	op_inputs(OP_Reshape, 5, &lo, &hi);
	cr_assert(lo == 2 && hi == 2);
	op_inputs(OP_Slice, 9, &lo, &hi);
	cr_assert(lo == 1 && hi == 1);
	op_inputs(OP_Slice, 0, &lo, &hi);       /* IR text: no opset, today's form */
	cr_assert(lo == 3 && hi == 5);
	cr_assert_not_null(op_old_unsupported(OP_Tile, 5));
	cr_assert_null(op_old_unsupported(OP_Tile, 6));
	cr_assert_null(op_old_unsupported(OP_Reshape, 1));
}

/* Issue 15: declared output types must agree with the computed ones. */
Test(ir, declared_outputs)
{
	Ctx c;
	Graph *g = graph_create("main");
	int y = graph_add_value(g, "y");
	Value *v = GV(g, y);

	graph_add_output(g, y);
	v->dtype = DT_F32;
	v->rank = 2;
	v->dim[0] = 2;
	v->dim[1] = 3;
	burn_ctx_init(&c, NULL);
	cr_assert_eq(graph_check_outputs(&c, g), BURN_OK);   /* nothing declared */
	g->out_decl = arena_alloc(&g->arena, sizeof *g->out_decl);
	g->out_decl[0].rank = 2;
	g->out_decl[0].dim[0] = -1;                          /* symbolic */
	g->out_decl[0].sym[0] = "batch";
	g->out_decl[0].dim[1] = 3;
	cr_assert_eq(graph_check_outputs(&c, g), BURN_OK);
	g->out_decl[0].dtype = DT_I64;
	cr_assert_eq(graph_check_outputs(&c, g), BURN_ERR_SHAPE);
	cr_assert_str_eq(c.msg, "graph output 'y' is declared i64[batch,3], computed f32[2,3]");
	burn_ctx_init(&c, NULL);
	g->out_decl[0].dtype = DT_F32;
	g->out_decl[0].rank = 3;
	cr_assert_eq(graph_check_outputs(&c, g), BURN_ERR_SHAPE);
	graph_destroy(g);
}

/* String constants print as literals and parse back (the strings copied
 * into the graph's arena). */
Test(ir, string_constants_round_trip)
{
	static const char txt[] =
	    "graph g opset 20 (%x: str[2]) -> (%y) {\n"
	    "  %k = const str[2] [\"a\\\"b\", \"\xc3\xa9\"]\n"
	    "  %y = StringConcat(%x, %k) : str[2]\n"
	    "}\n";
	Ctx c;
	Graph *g = NULL, *g2 = NULL;
	char *s1, *s2;
	const char *const *k;

	burn_ctx_init(&c, "t.ir");
	cr_assert_eq(parse_str(&c, txt, &g), BURN_OK, "%s", c.msg);
	k = GV(g, graph_find_value(g, "k"))->data;
	cr_assert_str_eq(k[0], "a\"b");
	cr_assert_str_eq(k[1], "\xc3\xa9");
	s1 = print_str(g, -1);
	burn_ctx_init(&c, "t.ir");
	cr_assert_eq(parse_str(&c, s1, &g2), BURN_OK, "%s\n%s", c.msg, s1);
	s2 = print_str(g2, -1);
	cr_assert_str_eq(s1, s2);
	free(s1);
	free(s2);
	graph_destroy(g);
	graph_destroy(g2);
}

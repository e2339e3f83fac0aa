/*
 * node_harness.c - one graph node under test: build, infer, lower, and run
 * through the kernel-IR interpreter.  See node_harness.h.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "node_harness.h"
#include "passes/legalize.h"

void
t_init(T *t, int opset)
{
	memset(t, 0, sizeof *t);
	burn_ctx_init(&t->c, "test");
	t->g = graph_create("t");
	cr_assert(t->g);
	t->g->opset = opset;
}

void
t_fini(T *t)
{
	graph_destroy(t->g);
	t->g = NULL;
}

/* Append input value v (or -1) with the elements the interpreter reads. */
static void
push_input(T *t, int v, void *data)
{
	cr_assert(t->nin < T_MAXIN, "more than %d inputs", T_MAXIN);
	t->data[t->nin] = data;
	t->in[t->nin++] = v;
}

void
t_input(T *t, int dtype, int rank, const int64_t *dim, void *data)
{
	char name[8];
	int v;

	snprintf(name, sizeof name, "x%d", t->nin);
	v = graph_add_value(t->g, name);
	set_out(GV(t->g, v), dtype, rank, dim);
	graph_add_input(t->g, v);   /* marks it VK_INPUT with no producer */
	push_input(t, v, data);
}

void
t_absent(T *t)
{
	push_input(t, -1, NULL);
}

void
t_const(T *t, int dtype, int rank, const int64_t *dim, const void *data)
{
	char name[8];
	int v;

	snprintf(name, sizeof name, "c%d", t->nin);
	v = graph_add_value(t->g, name);
	cr_assert_eq(graph_set_const(&t->c, t->g, v, dtype, rank, dim, data), BURN_OK,
	             "const: %s", t->c.msg);
	push_input(t, v, GV(t->g, v)->data);
}

void
t_const_ints(T *t, int n, const int64_t *x)
{
	int64_t d[1] = { n };

	t_const(t, DT_I64, 1, d, x);
}

void
t_node(T *t, const char *op, int nout)
{
	cr_assert(nout >= 1 && nout <= T_MAXOUT, "nout %d", nout);
	for (int k = 0; k < nout; k++) {
		char name[8];
		snprintf(name, sizeof name, "y%d", k);
		t->out[k] = graph_add_value(t->g, name);
	}
	t->nout = nout;
	t->node = graph_add_node(t->g, op_lookup(op), "n", t->nin, t->in, nout, t->out);
}

void
t_attr_i(T *t, const char *name, int64_t v)
{
	node_add_attr(t->g, t->node, name, AT_INT)->i = v;
}

void
t_attr_ints(T *t, const char *name, int n, const int64_t *v)
{
	Attr *a = node_add_attr(t->g, t->node, name, AT_INTS);

	a->n = n;
	a->ints = arena_alloc(&t->g->arena, sizeof *v * (n + 1));
	memcpy(a->ints, v, sizeof *v * n);
}

void
t_attr_s(T *t, const char *name, const char *s)
{
	Attr *a = node_add_attr(t->g, t->node, name, AT_STRING);

	a->s = s;
	a->slen = (int64_t)strlen(s);
}

Node *
t_n(T *t)
{
	return &t->g->node[t->node];
}

Value *
t_y(T *t, int k)
{
	return GV(t->g, t->out[k]);
}

int
t_infer(T *t)
{
	return op_impl[t_n(t)->op].infer(&t->c, t->g, t_n(t));
}

/*
 * The memory of every graph value, once lowering has added its own: the
 * outputs' buffers, then the inputs' data (an input wins if it is also an
 * output), constants' payloads, and zeroed scratch for the rest, which
 * own[v] marks for freeing.
 */
static void
bind_values(T *t, void **outs, void **mem, char *own)
{
	Graph *g = t->g;

	for (int k = 0; k < t->nout; k++)
		mem[t->out[k]] = outs[k];
	for (int j = 0; j < t->nin; j++)
		if (t->in[j] >= 0)
			mem[t->in[j]] = t->data[j];
	for (int v = 0; v < g->nval; v++) {
		int given = 0;
		for (int k = 0; k < t->nout; k++)
			given |= v == t->out[k];
		for (int j = 0; j < t->nin; j++)
			given |= v == t->in[j];
		if (given)
			continue;
		if (GV(g, v)->data) {
			mem[v] = GV(g, v)->data;
		} else {
			mem[v] = calloc(1, value_nbytes(GV(g, v)) + 16);
			cr_assert(mem[v]);
			own[v] = 1;
		}
	}
}

int
t_run(T *t, void **outs)
{
	Arena a;
	KProgram p;
	Lower lw = { 0 };  /* new fields (epi) must be NULL */
	void **mem;
	char *own;
	int nkernel;

	cr_assert_eq(t_infer(t), BURN_OK, "infer: %s", t->c.msg);
	arena_init(&a);
	kprog_init(&p, &a);
	lw.ctx = &t->c;
	lw.g = t->g;
	lw.prog = &p;
	lw.target = t->target;
	cr_assert_eq(op_impl[t_n(t)->op].lower(&lw, t_n(t)), BURN_OK, "lower: %s",
	             t->c.msg);
	mem = calloc(t->g->nval, sizeof *mem);
	own = calloc(t->g->nval, 1);
	cr_assert(mem && own);
	bind_values(t, outs, mem, own);
	for (int i = 0; i < p.nkernel; i++) {
		KKernel *k = p.kernel[i];
		void **bufs = calloc(k->nbuf + 1, sizeof *bufs);
		cr_assert(bufs);
		cr_assert_eq(kir_verify(&t->c, k), BURN_OK, "verify: %s", t->c.msg);
		for (KRef r = 1; r < k->nnode; r++) {
			t->ntmma += k->node[r].kind == KS_TMMA;
			t->ncpasync += k->node[r].kind == KS_CPASYNC;
		}
		for (int b = 0; b < k->nbuf; b++)
			if (k->buf[b].value >= 0)
				bufs[b] = mem[k->buf[b].value];
		cr_assert_eq(kir_legalize(&t->c, &p, k, t->caps), BURN_OK, "legalize: %s",
		             t->c.msg);
		cr_assert_eq(kir_verify(&t->c, k), BURN_OK, "verify: %s", t->c.msg);
		cr_assert_eq(kir_interp(&t->c, k, bufs), BURN_OK, "interp: %s", t->c.msg);
		free(bufs);
	}
	for (int v = 0; v < t->g->nval; v++)
		if (own[v])
			free(mem[v]);
	free(own);
	free(mem);
	nkernel = p.nkernel;
	arena_free(&a);
	return nkernel;
}

int
t_run1(T *t, void *out)
{
	return t_run(t, &out);
}

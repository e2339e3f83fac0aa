/*
 * fuse.c - automatic kernel fusion: which graph ops become one kernel, and
 * the lowering of such a group.
 *
 * A group is a set of nodes that share one iteration space F (a shape) and
 * optionally one set of reduced axes A.  Its members are
 *   - pointwise ops (OC_ELEM) whose output has shape F, or shape R (F with
 *     the axes A set to 1: a "row" value);
 *   - float reductions (the rows of passes/reduce.def marked RR_FUSE:
 *     ReduceSum/Mean/Max/Min/Prod/SumSquare/L1/L2/LogSum/LogSumExp) from F
 *     to R over exactly the axes A, emitted by reduce_emit from the same
 *     row as their unfused lowering.
 * So elementwise chains, softmax, layernorm, RMSnorm, mean/variance written
 * from primitives are each one group.
 *
 * Grouping is greedy from the consumers backwards: a group starts at a node
 * and absorbs a producer when every node consuming the producer's result
 * is already in the group.  Only the group's last node (its root) may
 * feed nodes outside, so a group can never be part of a cycle (every member
 * reaches the root); other members' results are stored only when they are
 * graph outputs.
 *
 * Lowering a group: loops over the kept axes of F; per reduction one pass
 * of loops over A accumulating into a variable; row values are scalar
 * variables; full-shape values are expressions recomputed inside whichever
 * pass needs them (pointwise work only, never a reduction or a matmul);
 * a final pass over A stores the full-shape results.  With no reduction
 * this is one loop nest over F, flat when no input broadcasts.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "passes.h"
#include "lower.h"
#include "reduce.h"

#define MAX_AXES BURN_MAX_RANK

/* A group holds at most this many reductions: each is one more pass over
 * the reduced axes that recomputes the full-shape expressions it needs, so
 * the kernel grows with reductions x members. */
#define FUSE_MAX_REDUCE 16

/* A fused expression deeper than this many graph ops is stored in a
 * variable and the rest of the chain reads the variable, so that no walk
 * over the kernel IR (verifier, interpreter, renderers) recurses deeper
 * than a constant, however long a chain a model has. */
#define FUSE_MAX_DEPTH 32

typedef struct Group {
	int root;                 /* node index of the root */
	int rank;
	int64_t F[BURN_MAX_RANK]; /* iteration space */
	int red[BURN_MAX_RANK];   /* 1 for reduced axes */
	int nred;                 /* number of reduced axes (0: pointwise) */
	int size;
	int nreduce;              /* reductions among the members */
	int anchor;               /* MatMul/Gemm/Conv whose epilogue this is, or -1 */
} Group;

typedef struct Fuser {
	Ctx *c;
	Graph *g;
	int *group;               /* per node: group id, -1 if alone */
	int *nuse;                /* per value: consumers (+1 if graph output) */
	int **users;              /* per value: consuming node indices */
	Group *grp;
	int ngrp;
	int nval;                 /* values when nuse/users were made */
	/* growing a group: the members so far, a max-heap of node indices,
	 * and per value a cursor into its users: users before the cursor are
	 * known members of the group attempt `seen` (membership only grows
	 * while a group is built, so every user is looked at once per group) */
	int *mem, nmem;
	int *heap;
	int *ucur, *useen, seen;
	/* lowering: the members of group g are mlist[mstart[g] .. mstart[g+1]),
	 * in node order (anchors included) */
	int *mstart, *mlist;
} Fuser;

/* ---- which ops can join ------------------------------------------------- */

/* Reductions that may join a group are the rows of passes/reduce.def with
 * RR_FUSE; the group lowers them with the same emitter as their own
 * lowering (reduce_emit), so fused and unfused results agree. */
static int is_fusable_reduce(int op)
{
	return reduce_fusable(op);
}

/* The reduced axes of reduction n as a mask over rank; 0 if not
 * representable (dynamic axes, noop_with_empty_axes). */
static int reduce_axes(const Graph *g, const Node *n, int rank, int *mask)
{
	const int64_t *ax = NULL;
	int nax = attr_ints(n, "axes", &ax);
	int64_t buf[MAX_AXES];
	const Value *a = NIN(g, n, 1);

	if (a) {
		if (!a->data || value_numel(a) > MAX_AXES)
			return 0;
		nax = (int)value_numel(a);
		for (int i = 0; i < nax; i++)
			buf[i] = value_get_i(a, i);
		ax = buf;
	}
	memset(mask, 0, sizeof(int) * BURN_MAX_RANK);
	if (nax == 0) {
		if (attr_int(n, "noop_with_empty_axes", 0))
			return 0;
		for (int i = 0; i < rank; i++)
			mask[i] = 1;
		return 1;
	}
	for (int i = 0; i < nax; i++) {
		int64_t x = ax[i] < 0 ? ax[i] + rank : ax[i];
		if (x < 0 || x >= rank)
			return 0;
		mask[x] = 1;
	}
	return 1;
}

static int same_shape(const Value *v, int rank, const int64_t *d)
{
	return v->rank == rank && !memcmp(v->dim, d, sizeof(int64_t) * rank);
}

/* Row shape of a group: F with the reduced axes set to 1. */
static void row_shape(const Group *gr, int64_t *R)
{
	for (int i = 0; i < gr->rank; i++)
		R[i] = gr->red[i] ? 1 : gr->F[i];
}

static int is_full(const Group *gr, const Value *v)
{
	return same_shape(v, gr->rank, gr->F);
}

static int is_row(const Group *gr, const Value *v)
{
	int64_t R[BURN_MAX_RANK];

	if (!gr->nred)
		return 0;
	row_shape(gr, R);
	return same_shape(v, gr->rank, R);
}

static int float_value(const Value *v)
{
	return v->dtype == DT_F32 || v->dtype == DT_F64;
}

/* f16 and bf16 values join pointwise groups and epilogues: in the fused
 * code a member's value is rounded to its dtype (node_expr), as its store
 * and load would round it unfused. */
static int half_value(const Value *v)
{
	return v->dtype == DT_F16 || v->dtype == DT_BF16;
}

/* Clear mask bits of axes of extent 1: reducing them is a no-op. */
static int norm_mask(const Group *gr, int *mask)
{
	int n = 0;

	for (int i = 0; i < gr->rank; i++) {
		if (gr->F[i] == 1)
			mask[i] = 0;
		n += mask[i];
	}
	return n;
}

/* Is v a row candidate for a group without reduced axes yet: the rank of
 * F, each dim equal to F's or 1, not all equal?  Sets mask. */
static int row_candidate(const Group *gr, const Value *v, int *mask)
{
	int n = 0;

	if (v->rank != gr->rank)
		return 0;
	for (int i = 0; i < gr->rank; i++) {
		if (v->dim[i] != gr->F[i] && v->dim[i] != 1)
			return 0;
		mask[i] = v->dim[i] != gr->F[i];
		n += mask[i];
	}
	return n > 0;
}

/* Can node p join group gr (all its consumers are members already)?  The
 * first row-shaped member fixes the group's reduced axes; a reduction
 * whose output is the group's F so far widens F to its input. */
static int try_join(Fuser *f, Group *gr, int gid, int p)
{
	Graph *g = f->g;
	Node *n = &g->node[p];
	const Value *out = NOUT(g, n, 0);
	int mask[BURN_MAX_RANK] = { 0 };

	if (n->dead || f->group[p] >= 0 || n->nout != 1 || out->data)
		return 0;
	if (op_table[n->op].cls != OC_ELEM && !is_fusable_reduce(n->op))
		return 0;
	if (is_fusable_reduce(n->op) && gr->nreduce >= FUSE_MAX_REDUCE)
		return 0;
	/* every consuming node must be in the group (a graph output is no
	 * consumer: the group stores that value too) */
	{
		int v = n->out[0];
		if (f->useen[v] != f->seen) {
			f->useen[v] = f->seen;
			f->ucur[v] = 0;
		}
		for (; f->ucur[v] < f->nuse[v]; f->ucur[v]++) {
			int u = f->users[v][f->ucur[v]];
			if (u >= 0 && f->group[u] != gid)
				return 0;
		}
	}
	if (op_table[n->op].cls == OC_ELEM) {
		if (!float_value(out) && !half_value(out) && out->dtype != DT_BOOL &&
		    !dtype_is_int(out->dtype))
			return 0;
		if (is_full(gr, out) || is_row(gr, out))
			return 1;
		if (!gr->nred && row_candidate(gr, out, mask)) {
			memcpy(gr->red, mask, sizeof mask);
			gr->nred = norm_mask(gr, gr->red);
			return 1;
		}
		return 0;
	}
	if (is_fusable_reduce(n->op)) {
		const Value *x = NIN(g, n, 0);
		Group wide;
		if (!float_value(x) || !attr_int(n, "keepdims", 1) || x->rank != gr->rank)
			return 0;
		if (!reduce_axes(g, n, x->rank, mask))
			return 0;
		if (is_full(gr, x)) {
			if (!norm_mask(gr, mask))
				return 0;
			if (gr->nred)
				return !memcmp(mask, gr->red, sizeof(int) * gr->rank);
			memcpy(gr->red, mask, sizeof mask);
			gr->nred = norm_mask(gr, gr->red);
			return 1;
		}
		/* widen: the group so far is pointwise over this reduction's output.
		 * Its values become row values, held in kernel variables; a root
		 * of a storage type (f16, bf16, float8: the only members that may
		 * be one) has no such variable, its rounding is its store. */
		if (gr->nred || !is_full(gr, out) ||
		    dtype_is_storage(NOUT(g, &g->node[gr->root], 0)->dtype))
			return 0;
		wide = *gr;
		memcpy(wide.F, x->dim, sizeof(int64_t) * x->rank);
		memcpy(wide.red, mask, sizeof mask);
		if (!(wide.nred = norm_mask(&wide, wide.red)))
			return 0;
		*gr = wide;
		return 1;
	}
	return 0;
}

static int build_uses(Fuser *f)
{
	Graph *g = f->g;
	int *fill;

	f->nval = g->nval;
	f->nuse = calloc(g->nval + 1, sizeof(int));
	f->users = calloc(g->nval + 1, sizeof(int *));
	f->ucur = calloc(g->nval + 1, sizeof(int));
	f->useen = calloc(g->nval + 1, sizeof(int));
	fill = calloc(g->nval + 1, sizeof(int));
	if (!f->nuse || !f->users || !f->ucur || !f->useen || !fill) {
		free(fill);
		return burn_fail(f->c, BURN_ERR_NOMEM, "out of memory");
	}
	for (int i = 0; i < g->nnode; i++)
		for (int k = 0; k < g->node[i].nin; k++)
			if (g->node[i].in[k] >= 0)
				f->nuse[g->node[i].in[k]]++;
	for (int i = 0; i < g->nout; i++)
		f->nuse[g->out[i]]++;
	for (int v = 0; v < g->nval; v++)
		if (f->nuse[v] && !(f->users[v] = malloc(sizeof(int) * f->nuse[v]))) {
			free(fill);
			return burn_fail(f->c, BURN_ERR_NOMEM, "out of memory");
		}
	for (int i = 0; i < g->nnode; i++)
		for (int k = 0; k < g->node[i].nin; k++) {
			int v = g->node[i].in[k];
			if (v >= 0)
				f->users[v][fill[v]++] = i;
		}
	for (int i = 0; i < g->nout; i++)
		f->users[g->out[i]][fill[g->out[i]]++] = -1;   /* -1: graph output */
	free(fill);
	return BURN_OK;
}

static void free_uses(Fuser *f)
{
	if (f->users)
		for (int v = 0; v < f->nval; v++)
			free(f->users[v]);
	free(f->users);
	free(f->nuse);
	free(f->ucur);
	free(f->useen);
	free(f->mem);
	free(f->heap);
	free(f->mstart);
	free(f->mlist);
}

/* A max-heap of node indices: members are visited from the last down, the
 * order of a scan from the root towards the inputs. */
static void heap_push(int *h, int *n, int x)
{
	int i = (*n)++;

	for (; i > 0 && h[(i - 1) / 2] < x; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = x;
}

static int heap_pop(int *h, int *n)
{
	int top = h[0], x = h[--*n], i = 0;

	for (;;) {
		int c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= x)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = x;
	return top;
}

/* The member lists of the groups (mstart/mlist), in node order. */
static int build_members(Fuser *f)
{
	Graph *g = f->g;
	int *fill;

	f->mstart = calloc(f->ngrp + 2, sizeof(int));
	f->mlist = malloc(sizeof(int) * (g->nnode + 1));
	fill = calloc(f->ngrp + 1, sizeof(int));
	if (!f->mstart || !f->mlist || !fill) {
		free(fill);
		return burn_fail(f->c, BURN_ERR_NOMEM, "out of memory");
	}
	for (int i = 0; i < g->nnode; i++)
		if (f->group && f->group[i] >= 0)
			f->mstart[f->group[i] + 1]++;
	for (int k = 0; k < f->ngrp; k++)
		f->mstart[k + 1] += f->mstart[k];
	for (int i = 0; i < g->nnode; i++)
		if (f->group && f->group[i] >= 0) {
			int k = f->group[i];
			f->mlist[f->mstart[k] + fill[k]++] = i;
		}
	free(fill);
	return BURN_OK;
}

/* ---- lowering a group --------------------------------------------------- */

/* Per-node and per-value state of the lowering, made once per program
 * and cleaned after each group (only the entries the group touched), so
 * that lowering many small groups costs no more than their sizes. */
typedef struct Scratch {
	int nval;            /* values when the arrays were made (lowering may
	                        add temporaries; the groups never touch them) */
	int *member;         /* per node: 1 while its group is lowered */
	int *var;            /* per value: row variable, or -1 */
	int *buf;            /* per value: kernel buffer, or -1 */
	KRef *memo;          /* per value: expression in pass memo_at[v] */
	int *memo_at;
	int *depth;          /* per value: graph ops in memo[v]'s expression */
	int pass;            /* the current pass; forget_pass starts a new one */
	int *stack, top, cap;/* value_expr's work list */
	char *shared;        /* per value: another value lives in its memory */
} Scratch;

typedef struct GLower {
	Lower *lw;
	KB *kb;
	Group *gr;
	Scratch *sh;
	const int *mem;      /* the members, in node order */
	int nmem;
	int *member;         /* per node: in this group (sh->member) */
	int *var;            /* per value: row variable, or -1 (sh->var) */
	int *buf;            /* per value: kernel buffer, or -1 (sh->buf) */
	int vars[BURN_MAX_RANK];  /* per axis of F: variable holding its index */
	int vars_ready;      /* vars hold the current position */
	KRef lin;            /* linear index in F of the current element, or 0 */
	KRef base;           /* epilogue: first element of the run */
	int64_t run;         /* epilogue: run length */
	int jvar;            /* epilogue: loop variable over the run */
	int anchor_out;      /* epilogue: the anchor's output value */
} GLower;

static KRef memo_get(const GLower *gl, int v)
{
	return gl->sh->memo_at[v] == gl->sh->pass ? gl->sh->memo[v] : 0;
}

static void memo_set(GLower *gl, int v, KRef e, int depth)
{
	gl->sh->memo[v] = e;
	gl->sh->memo_at[v] = gl->sh->pass;
	gl->sh->depth[v] = depth;
}

static int bind(GLower *gl, int v, int access)
{
	if (gl->buf[v] < 0)
		gl->buf[v] = lower_bind(gl->lw, gl->kb, v, access);
	return gl->buf[v];
}

static KRef value_expr(GLower *gl, int v);

/* The per-axis index variables at the current element.  In a group's loop
 * nest they are the loop variables; in an epilogue they are computed from
 * the linear index when a broadcast input first needs them (for a run that
 * is one row of F, the outer axes come from the run's start, which the C
 * compiler hoists, and the last axis is the run's loop variable). */
static const int *need_vars(GLower *gl)
{
	Group *gr = gl->gr;
	int64_t stride[BURN_MAX_RANK];
	int r = gr->rank, row = gl->run == gr->F[r - 1];

	if (gl->vars_ready)
		return gl->vars;
	shape_strides(r, gr->F, stride);
	for (int d = 0; d < r; d++) {
		KRef at = row && d < r - 1 ? gl->base : gl->lin;
		if (row && d == r - 1) {
			gl->vars[d] = gl->jvar;
			continue;
		}
		gl->vars[d] = kb_var(gl->kb, DT_I64, "ix");
		kb_set(gl->kb, gl->vars[d],
		       kb_bin(gl->kb, KO_MOD, kb_bin(gl->kb, KO_DIV, at, kb_idx(gl->kb, stride[d])),
		              kb_idx(gl->kb, gr->F[d])));
	}
	gl->vars_ready = 1;
	return gl->vars;
}

/* Expression of member node n's output from its operands (their
 * expressions are ready: value_expr computes them first).  Returns the
 * number of graph ops in it in *depth; past FUSE_MAX_DEPTH the value is
 * stored in a variable at the current statement and read from there. */
static KRef node_expr(GLower *gl, Node *n, int *depth)
{
	KRef in[64] = { 0 }, e;
	int d = 0;

	for (int k = 0; k < n->nin && k < 64; k++)
		if (n->in[k] >= 0 && !(n->op == OP_CastLike && k == 1)) {
			in[k] = value_expr(gl, n->in[k]);
			if (memo_get(gl, n->in[k]) && gl->sh->depth[n->in[k]] > d)
				d = gl->sh->depth[n->in[k]];
		}
	e = elem_expr(gl->kb, gl->lw->g, n, in, NOUT(gl->lw->g, n, 0)->dtype);
	/* an f16/bf16 member's value as its tensor holds it (the root's
	 * rounding is its store) */
	if (e && half_value(NOUT(gl->lw->g, n, 0)) && &gl->lw->g->node[gl->gr->root] != n)
		e = kb_cast(gl->kb, NOUT(gl->lw->g, n, 0)->dtype, e);
	if (++d > FUSE_MAX_DEPTH) {
		int t = kb_var(gl->kb, kb_dtype(gl->kb->k, e), "t");
		kb_set(gl->kb, t, e);
		e = kb_get(gl->kb, t);
		d = 1;
	}
	*depth = d;
	return e;
}

/* Does v need the expressions of its producer's operands first? */
static int from_member(const GLower *gl, int v)
{
	const Value *val = GV(gl->lw->g, v);

	return gl->var[v] < 0 && !memo_get(gl, v) && val->producer >= 0 &&
	       gl->member[val->producer];
}

/* Push v on the work list; 0 if out of memory (value_expr then recurses
 * instead: still correct). */
static int push(GLower *gl, int v)
{
	Scratch *sh = gl->sh;

	if (sh->top == sh->cap) {
		int want = sh->cap ? 2 * sh->cap : 256;
		int *s2 = realloc(sh->stack, sizeof(int) * want);
		if (!s2)
			return 0;
		sh->stack = s2;
		sh->cap = want;
	}
	sh->stack[sh->top++] = v;
	return 1;
}

/* The value of v at the current loop position.  A chain of members is
 * walked with a work list, not recursion, so its length is bounded by
 * memory only: operands are pushed above their user and computed first. */
/* A one-element constant operand as an immediate rather than a load (no
 * buffer, no load per element: on a GPU the loads and their address
 * arithmetic cost as much as the arithmetic of a short pointwise kernel);
 * 0 for other values and for the storage dtypes (f16, bf16, float8),
 * which keep their load's conversion. */
static KRef scalar_const(KB *kb, const Value *val)
{
	const void *d = val->data;

	if (!d || value_numel(val) != 1)
		return 0;
	switch (val->dtype) {
	case DT_F32: return kb_const_f(kb, DT_F32, *(const float *)d);
	case DT_F64: return kb_const_f(kb, DT_F64, *(const double *)d);
	case DT_I8: return kb_const_i(kb, DT_I8, *(const int8_t *)d);
	case DT_U8: return kb_const_i(kb, DT_U8, *(const uint8_t *)d);
	case DT_I16: return kb_const_i(kb, DT_I16, *(const int16_t *)d);
	case DT_U16: return kb_const_i(kb, DT_U16, *(const uint16_t *)d);
	case DT_I32: return kb_const_i(kb, DT_I32, *(const int32_t *)d);
	case DT_U32: return kb_const_i(kb, DT_U32, *(const uint32_t *)d);
	case DT_I64: return kb_const_i(kb, DT_I64, *(const int64_t *)d);
	}
	return 0;
}

static KRef value_expr(GLower *gl, int v)
{
	Graph *g = gl->lw->g;
	const Value *val = GV(g, v);
	KRef e;
	int d = 1;

	if (gl->var[v] >= 0)
		return kb_get(gl->kb, gl->var[v]);
	if ((e = memo_get(gl, v)))
		return e;
	if (val->producer >= 0 && gl->member[val->producer]) {
		Scratch *sh = gl->sh;
		int base = sh->top;   /* above the entries of an outer call */
		if (!push(gl, v))
			return node_expr(gl, &g->node[val->producer], &d);
		while (sh->top > base) {
			int x = sh->stack[sh->top - 1], more = 0;
			Node *m;
			if (!from_member(gl, x)) {
				sh->top--;
				continue;
			}
			m = &g->node[GV(g, x)->producer];
			for (int k = 0; k < m->nin && k < 64; k++)
				if (m->in[k] >= 0 && !(m->op == OP_CastLike && k == 1) &&
				    from_member(gl, m->in[k]))
					more |= push(gl, m->in[k]);
			if (more)
				continue;
			e = node_expr(gl, m, &d);
			memo_set(gl, x, e, d);
			sh->top--;
		}
		return memo_get(gl, v);
	}
	if ((e = scalar_const(gl->kb, val))) {
		memo_set(gl, v, e, 1);
		return e;
	}
	{
		int b = bind(gl, v, KA_READ);
		KRef idx;
		if (value_numel(val) == 1)
			idx = kb_idx(gl->kb, 0);
		else if (gl->lin && is_full(gl->gr, val))
			idx = gl->lin;
		else
			idx = index_bcast(gl->kb, val, gl->gr->rank, need_vars(gl));
		e = kb_load(gl->kb, b, idx);
	}
	memo_set(gl, v, e, 1);
	return e;
}

static void open_axes(GLower *gl, int reduced)
{
	Group *gr = gl->gr;

	for (int i = 0; i < gr->rank; i++) {
		char name[16];
		if (gr->red[i] != reduced)
			continue;
		snprintf(name, sizeof name, "%c%d", reduced ? 'r' : 'i', i);
		gl->vars[i] = kb_for(gl->kb, name, kb_idx(gl->kb, 0),
		                     kb_idx(gl->kb, gr->F[i]), reduced ? 0 : KF_PARALLEL);
	}
}

static void close_axes(GLower *gl, int reduced)
{
	for (int i = 0; i < gl->gr->rank; i++)
		if (gl->gr->red[i] == reduced)
			kb_end(gl->kb);
}

/* Forget expressions computed inside a pass that has just closed. */
static void forget_pass(GLower *gl)
{
	gl->sh->pass++;
}

/* The walk reduce_emit takes for a reduction member: each pass opens the
 * loops over the reduced axes and rebuilds the input's expression there
 * (full-shape values are recomputed, never stored). */
typedef struct GWalk {
	GLower *gl;
	int in;              /* the reduction's input value */
} GWalk;

static KRef gwalk_open(void *self, KRef *index)
{
	GWalk *w = self;

	(void)index;         /* fusable rows are never arg reductions */
	forget_pass(w->gl);
	open_axes(w->gl, 1);
	return value_expr(w->gl, w->in);
}

static void gwalk_close(void *self)
{
	GWalk *w = self;

	close_axes(w->gl, 1);
	forget_pass(w->gl);
}

/* One reduction: its row of the reduction table, emitted over the reduced
 * axes into a row variable (a pass per pass the row needs). */
static void lower_reduction(GLower *gl, Node *n)
{
	Graph *g = gl->lw->g;
	GWalk gw = { gl, n->in[0] };
	ReduceWalk w = { gwalk_open, gwalk_close, &gw, 1, 0,
	                 target_or_default(gl->lw->target)->tune.sum_f64_min };

	for (int i = 0; i < gl->gr->rank; i++)
		if (gl->gr->red[i])
			w.count *= gl->gr->F[i];
	gl->var[n->out[0]] = reduce_emit(gl->kb, reduce_op(n->op), NIN(g, n, 0)->dtype,
	                                 NOUT(g, n, 0)->dtype, &w);
}

/* Linear index of the current position in a value of shape F or R. */
static KRef out_index(GLower *gl, int full)
{
	int64_t shape[BURN_MAX_RANK], stride[BURN_MAX_RANK];
	KRef e = kb_idx(gl->kb, 0);

	if (full)
		memcpy(shape, gl->gr->F, sizeof shape);
	else
		row_shape(gl->gr, shape);
	shape_strides(gl->gr->rank, shape, stride);
	for (int i = 0; i < gl->gr->rank; i++)
		if (shape[i] != 1)
			e = kb_bin(gl->kb, KO_ADD, e, kb_bin(gl->kb, KO_MUL,
			           kb_get(gl->kb, gl->vars[i]), kb_idx(gl->kb, stride[i])));
	return e;
}

static int escapes(const Fuser *f, int v)
{
	for (int k = 0; k < f->nuse[v]; k++) {
		int u = f->users[v][k];
		if (u < 0 || f->group[u] != f->group[f->g->val[v].producer])
			return 1;
	}
	return 0;
}

/* Set up the lowering state of group gid: its members, and the text
 * naming them (" + Op(name)" each). */
static int glower_init(Fuser *f, Lower *lw, Scratch *sh, int gid, GLower *gl,
                       char **ops)
{
	Graph *g = f->g;
	size_t len = 0, cap = 256;

	memset(gl, 0, sizeof *gl);
	gl->lw = lw;
	gl->sh = sh;
	gl->member = sh->member;
	gl->var = sh->var;
	gl->buf = sh->buf;
	gl->mem = f->mlist + f->mstart[gid];
	gl->nmem = f->mstart[gid + 1] - f->mstart[gid];
	sh->pass++;
	*ops = malloc(cap);
	if (!*ops)
		return burn_fail(f->c, BURN_ERR_NOMEM, "out of memory");
	(*ops)[0] = 0;
	for (int j = 0; j < gl->nmem; j++) {
		int i = gl->mem[j];
		const char *nm = g->node[i].name ? g->node[i].name : "";
		size_t need = len + strlen(nm) + 40;
		if (i == f->grp[gid].anchor)
			continue;
		sh->member[i] = 1;
		if (need > cap) {
			char *o2 = realloc(*ops, cap = need * 2);
			if (!o2)
				return burn_fail(f->c, BURN_ERR_NOMEM, "out of memory");
			*ops = o2;
		}
		len += sprintf(*ops + len, " + %s(%s)", op_table[g->node[i].op].name, nm);
	}
	gl->lw = lw;
	gl->gr = &f->grp[gid];
	return BURN_OK;
}

/* Clean the scratch entries the group touched: its members, their
 * outputs and their operands. */
static void glower_free(GLower *gl, char *ops)
{
	Scratch *sh = gl->sh;
	Graph *g = gl->lw ? gl->lw->g : NULL;

	for (int j = 0; g && j < gl->nmem; j++) {
		Node *n = &g->node[gl->mem[j]];
		sh->member[gl->mem[j]] = 0;
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0 && n->out[k] < sh->nval)
				sh->var[n->out[k]] = sh->buf[n->out[k]] = -1;
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] >= 0 && n->in[k] < sh->nval)
				sh->var[n->in[k]] = sh->buf[n->in[k]] = -1;
	}
	sh->pass++;
	free(ops);
}

/* A pointwise group may write its result over an input that dies here:
 * an intermediate of the same shape and type, read at the same index it
 * is written (pointwise, not broadcast), that only this group consumes.
 * The result then shares that input's memory (lower_bind makes the two
 * one kernel buffer). */
static void in_place(Fuser *f, Lower *lw, const Group *gr, const int *mem,
                     int nmem, const int *member, char *shared)
{
	Graph *g = f->g;
	int out = g->node[gr->root].out[0];
	const Value *o = GV(g, out);
	KProgram *p = lw->prog;

	if (o->is_output)
		return;
	f->seen++;
	for (int j = 0; j < nmem; j++) {
		Node *m = &g->node[mem[j]];
		if (!member[mem[j]])
			continue;
		for (int k = 0; k < m->nin; k++) {
			int x = m->in[k], ok = 1;
			const Value *xv;
			if (x < 0 || x >= f->nval || f->useen[x] == f->seen)
				continue;
			f->useen[x] = f->seen;
			xv = GV(g, x);
			if (xv->kind != VK_TEMP || xv->is_output || xv->data || xv->producer < 0 ||
			    (xv->producer >= 0 && member[xv->producer]) || xv->dtype != o->dtype ||
			    !is_full(gr, xv) || kprog_storage(p, x) != x)
				continue;
			for (int u = 0; u < f->nuse[x] && ok; u++)
				ok &= f->users[x][u] >= 0 && member[f->users[x][u]];
			if (!ok || shared[x])
				continue;   /* something else lives there */
			if (lower_set_alias(lw, out, x))
				shared[x] = 1;
			return;
		}
	}
}

static int lower_group(Fuser *f, Lower *lw, Scratch *sh, int gid)
{
	Graph *g = f->g;
	Group *gr = &f->grp[gid];
	GLower gl;
	KB kb;
	char *ops;
	const int *member;
	int rc, any_full_out = 0;

	if ((rc = glower_init(f, lw, sh, gid, &gl, &ops))) {
		glower_free(&gl, ops);
		return rc;
	}
	member = gl.member;
	gl.kb = &kb;
	gl.vars_ready = 1;   /* the loop variables index every axis */
	if (!gr->nred)
		in_place(f, lw, gr, gl.mem, gl.nmem, member, sh->shared);
	kb_begin(&kb, lw->prog, gr->nreduce ? "k_fused_reduce" : "k_fused",
	         arena_printf(lw->prog->arena, "%s", ops + 3));
	open_axes(&gl, 0);
	/* row values and reductions, in topological order */
	for (int j = 0; j < gl.nmem && gr->nred; j++) {
		int i = gl.mem[j];
		Node *n = &g->node[i];
		if (!member[i])
			continue;
		if (is_fusable_reduce(n->op)) {
			lower_reduction(&gl, n);
		} else if (is_row(gr, NOUT(g, n, 0))) {
			int v = kb_var(&kb, dtype_expr(NOUT(g, n, 0)->dtype), "row");
			kb_set(&kb, v, value_expr(&gl, n->out[0]));
			gl.var[n->out[0]] = v;
		}
	}
	/* row results that leave the group */
	for (int j = 0; j < gl.nmem && gr->nred; j++) {
		int i = gl.mem[j];
		Node *n = &g->node[i];
		if (!member[i] || !escapes(f, n->out[0]))
			continue;
		if (is_row(gr, NOUT(g, n, 0)) || is_fusable_reduce(n->op))
			kb_store(&kb, bind(&gl, n->out[0], KA_WRITE), out_index(&gl, 0),
			         kb_get(&kb, gl.var[n->out[0]]));
	}
	/* the final pass: full-shape results that leave the group */
	for (int j = 0; j < gl.nmem; j++) {
		int i = gl.mem[j];
		if (member[i] && escapes(f, g->node[i].out[0]) &&
		    gl.var[g->node[i].out[0]] < 0 && is_full(gr, NOUT(g, &g->node[i], 0)))
			any_full_out = 1;
	}
	if (any_full_out) {
		forget_pass(&gl);
		if (gr->nred)
			open_axes(&gl, 1);
		gl.lin = out_index(&gl, 1);
		for (int j = 0; j < gl.nmem; j++) {
			int i = gl.mem[j];
			Node *n = &g->node[i];
			if (!member[i] || !escapes(f, n->out[0]) || gl.var[n->out[0]] >= 0 ||
			    !is_full(gr, NOUT(g, n, 0)))
				continue;
			kb_store(&kb, bind(&gl, n->out[0], KA_WRITE), gl.lin,
			         value_expr(&gl, n->out[0]));
		}
		if (gr->nred)
			close_axes(&gl, 1);
	}
	close_axes(&gl, 0);
	kb_finish(&kb);
	glower_free(&gl, ops);
	return BURN_OK;
}

/* ---- epilogues ------------------------------------------------------------ */

static GLower *epi_state(Lower *lw, KB *kb, Node *n)
{
	GLower *gl;

	if (!lw->epi || &lw->g->node[lw->epi->anchor] != n)
		return NULL;
	gl = lw->epi->state;
	gl->kb = kb;
	lw->epi->applied++;
	return gl;
}

KRef lower_epi_value(Lower *lw, KB *kb, Node *n, KRef lin, KRef v)
{
	GLower *gl = epi_state(lw, kb, n);

	if (!gl)
		return v;
	forget_pass(gl);
	gl->vars_ready = 0;
	gl->lin = lin;
	gl->base = lin;
	gl->run = 1;
	gl->jvar = -1;
	memo_set(gl, gl->anchor_out, v, 1);
	return value_expr(gl, gl->lw->g->node[gl->gr->root].out[0]);
}

void lower_epi_run(Lower *lw, KB *kb, Node *n, int buf, KRef base, int64_t len)
{
	GLower *gl = epi_state(lw, kb, n);
	KRef x;

	if (!gl)
		return;
	forget_pass(gl);
	gl->vars_ready = 0;
	gl->base = base;
	gl->run = len;
	gl->jvar = kb_for(kb, "e", kb_idx(kb, 0), kb_idx(kb, len), KF_PARALLEL);
	gl->lin = kb_bin(kb, KO_ADD, base, kb_get(kb, gl->jvar));
	x = kb_load(kb, buf, gl->lin);
	memo_set(gl, gl->anchor_out, x, 1);
	kb_store(kb, buf, gl->lin, value_expr(gl, gl->lw->g->node[gl->gr->root].out[0]));
	kb_end(kb);
}

int lower_epi_rows_free(const Lower *lw, const Node *n, const unsigned char *batched)
{
	const Graph *g = lw->g;
	const GLower *gl;
	const Value *ao;

	if (!lw->epi || &g->node[lw->epi->anchor] != n)
		return 1;
	gl = lw->epi->state;
	ao = GV(g, gl->anchor_out);
	for (int j = 0; j < gl->nmem; j++) {
		const Node *m = &g->node[gl->mem[j]];
		if (gl->mem[j] == lw->epi->anchor)
			continue;
		for (int k = 0; k < m->nin; k++) {
			int v = m->in[k], same;
			const Value *val;
			if (v < 0 || v == gl->anchor_out)
				continue;
			val = GV(g, v);
			if (val->producer >= 0 && gl->member[val->producer])
				continue;
			if (batched && batched[v]) {
				same = val->rank == ao->rank;
				for (int a = 0; same && a < val->rank; a++)
					same = val->dim[a] == ao->dim[a];
				if (!same)
					return 0;
				continue;
			}
			for (int a = 0; a + 1 < val->rank; a++)
				if (val->dim[a] != 1)
					return 0;
		}
	}
	return 1;
}

/* Lower the anchor of group gid with the group as its epilogue. */
static int lower_anchored(Fuser *f, Lower *lw, Scratch *sh, int gid)
{
	Group *gr = &f->grp[gid];
	Node *a = &f->g->node[gr->anchor];
	GLower gl;
	Epilogue epi;
	char *ops;
	int rc;

	if ((rc = glower_init(f, lw, sh, gid, &gl, &ops))) {
		glower_free(&gl, ops);
		return rc;
	}
	gl.anchor_out = a->out[0];
	epi.anchor = gr->anchor;
	epi.out = f->g->node[gr->root].out[0];
	epi.ops = arena_printf(lw->prog->arena, "%s", ops);
	epi.state = &gl;
	epi.applied = 0;
	lw->epi = &epi;
	rc = op_impl[a->op].lower(lw, a);
	lw->epi = NULL;
	if (!rc && !epi.applied)
		rc = burn_fail(f->c, BURN_ERR_INTERNAL, "%s did not apply its epilogue",
		               op_table[a->op].name);
	glower_free(&gl, ops);
	return rc;
}

/* Attach an anchor to pointwise group gid when one of its members reads
 * the output of a MatMul, Gemm or Conv that only the group uses and that
 * has the group's shape and type. */
static void find_anchor(Fuser *f, int gid)
{
	Graph *g = f->g;
	Group *gr = &f->grp[gid];
	const Value *root_out = NOUT(g, &g->node[gr->root], 0);

	gr->anchor = -1;
	if (gr->nred || (!float_value(root_out) && !half_value(root_out)))
		return;
	/* an epilogue writes one result: the root's */
	for (int j = 0; j < f->nmem; j++)
		if (f->mem[j] != gr->root && GV(g, g->node[f->mem[j]].out[0])->is_output)
			return;
	/* the members from the last down (f->heap is free again); a value
	 * already looked at is not looked at again (useen: the last stamp of
	 * the group's users check is free too) */
	f->seen++;
	{
		int nh = 0, j = 0;
		for (int i = 0; i < f->nmem; i++)
			heap_push(f->heap, &nh, f->mem[i]);
		while (nh > 0)
			f->mem[j++] = heap_pop(f->heap, &nh);
	}
	for (int j = 0; j < f->nmem; j++) {
		Node *m = &g->node[f->mem[j]];
		for (int k = 0; k < m->nin; k++) {
			const Value *v = NIN(g, m, k);
			Node *a;
			int all = 1;
			if (!v || v->producer < 0 || f->useen[m->in[k]] == f->seen)
				continue;
			f->useen[m->in[k]] = f->seen;
			a = &g->node[v->producer];
			if ((a->op != OP_MatMul && a->op != OP_Gemm && a->op != OP_Conv) ||
			    a->dead || f->group[v->producer] >= 0 || a->nout != 1 ||
			    v->dtype != root_out->dtype || !is_full(gr, v))
				continue;
			for (int u = 0; u < f->nuse[m->in[k]]; u++) {
				int w = f->users[m->in[k]][u];
				all &= w >= 0 && f->group[w] == gid;
			}
			if (!all)
				continue;
			gr->anchor = v->producer;
			f->group[v->producer] = gid;
			return;
		}
	}
}

/* ---- the pass ----------------------------------------------------------- */

struct Fusion {
	int *group;     /* per node: group id, -1 if the node is alone */
	Group *grp;     /* per group */
	int ngrp;
};

void fusion_free(Fusion *fu)
{
	if (!fu)
		return;
	free(fu->group);
	free(fu->grp);
	free(fu);
}

int fusion_count(const Fusion *fu)
{
	return fu ? fu->ngrp : 0;
}

int pass_fuse(Ctx *c, Graph *g, Fusion **out)
{
	Fuser f = { c, g };
	Fusion *fu;
	int rc;

	*out = NULL;
	f.group = malloc(sizeof(int) * (g->nnode + 1));
	f.grp = calloc(g->nnode + 1, sizeof(Group));
	f.mem = malloc(sizeof(int) * (g->nnode + 1));
	f.heap = malloc(sizeof(int) * (g->nnode + 1));
	if (!f.group || !f.grp || !f.mem || !f.heap) {
		free(f.group);
		free(f.grp);
		free(f.mem);
		free(f.heap);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	for (int i = 0; i < g->nnode; i++)
		f.group[i] = -1;
	if ((rc = build_uses(&f)))
		goto done;

	for (int root = g->nnode - 1; root >= 0; root--) {
		Node *n = &g->node[root];
		Group *gr = &f.grp[f.ngrp];
		const Value *out;
		int grew = 1;

		if (n->dead || f.group[root] >= 0 || n->nout != 1)
			continue;
		out = NOUT(g, n, 0);
		if (op_table[n->op].cls == OC_ELEM) {
			memset(gr, 0, sizeof *gr);
			gr->rank = out->rank;
			memcpy(gr->F, out->dim, sizeof(int64_t) * out->rank);
		} else if (is_fusable_reduce(n->op) && float_value(out)) {
			const Value *x = NIN(g, n, 0);
			memset(gr, 0, sizeof *gr);
			if (!reduce_axes(g, n, x->rank, gr->red) ||
			    !attr_int(n, "keepdims", 1))
				continue;
			gr->rank = x->rank;
			memcpy(gr->F, x->dim, sizeof(int64_t) * x->rank);
			if (!(gr->nred = norm_mask(gr, gr->red)))
				continue;
		} else {
			continue;
		}
		gr->root = root;
		gr->size = 1;
		gr->nreduce = is_fusable_reduce(n->op);
		f.group[root] = f.ngrp;
		f.mem[0] = root;
		f.nmem = 1;
		f.seen++;
		/* absorb producers until nothing more joins: each sweep visits the
		 * members from the last node down (newcomers included), so a
		 * producer is tried after its consumers; another sweep follows
		 * only a growth (the group's shape may have changed) */
		while (grew) {
			int nh = 0;
			grew = 0;
			for (int j = 0; j < f.nmem; j++)
				heap_push(f.heap, &nh, f.mem[j]);
			while (nh > 0) {
				Node *m = &g->node[heap_pop(f.heap, &nh)];
				for (int k = 0; k < m->nin; k++) {
					const Value *v = NIN(g, m, k);
					int p = v ? v->producer : -1;
					if (p < 0 || !try_join(&f, gr, f.ngrp, p))
						continue;
					f.group[p] = f.ngrp;
					gr->size++;
					gr->nreduce += is_fusable_reduce(g->node[p].op);
					f.mem[f.nmem++] = p;
					heap_push(f.heap, &nh, p);
					grew = 1;
				}
			}
		}
		find_anchor(&f, f.ngrp);
		if (gr->size == 1 && gr->anchor < 0)
			f.group[root] = -1;   /* alone: the op's own lowering is best */
		else
			f.ngrp++;
	}
	fu = malloc(sizeof *fu);
	if (!fu) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		goto done;
	}
	fu->group = f.group;
	fu->grp = f.grp;
	fu->ngrp = f.ngrp;
	*out = fu;
	f.group = NULL;
	f.grp = NULL;
done:
	free(f.group);
	free(f.grp);
	free_uses(&f);
	return rc;
}

static void scratch_free(Scratch *sh)
{
	free(sh->member);
	free(sh->var);
	free(sh->buf);
	free(sh->memo);
	free(sh->memo_at);
	free(sh->depth);
	free(sh->stack);
	free(sh->shared);
}

static int scratch_init(Ctx *c, Graph *g, Scratch *sh)
{
	size_t nv = (size_t)g->nval + 1;

	memset(sh, 0, sizeof *sh);
	sh->nval = g->nval;
	sh->member = calloc(g->nnode + 1, sizeof(int));
	sh->var = malloc(sizeof(int) * nv);
	sh->buf = malloc(sizeof(int) * nv);
	sh->memo = calloc(nv, sizeof(KRef));
	sh->memo_at = calloc(nv, sizeof(int));
	sh->depth = calloc(nv, sizeof(int));
	sh->shared = calloc(nv, 1);
	if (!sh->member || !sh->var || !sh->buf || !sh->memo || !sh->memo_at ||
	    !sh->depth || !sh->shared)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	for (int v = 0; v < g->nval; v++)
		sh->var[v] = sh->buf[v] = -1;
	sh->pass = 1;   /* memo_at 0: nothing memoized */
	return BURN_OK;
}

/* Lower every node, one kernel per fusion group at the group's root. */
/* The kernels first.. of p implement node i, or group gid (its members
 * precede its root i): they get the guard all those nodes share (a
 * run-time If's branch, graph.h), none when the nodes differ. */
static void kernel_guard(const Graph *g, const int *group, int gid, int i,
                         KProgram *p, int first)
{
	int guard = g->node[i].guard, neg = g->node[i].guard_neg;

	for (int j = 0; gid >= 0 && j < i && guard; j++)
		if (!g->node[j].dead && group[j] == gid &&
		    (g->node[j].guard != guard || g->node[j].guard_neg != neg))
			guard = 0;
	for (int k = first; k < p->nkernel; k++) {
		p->kernel[k]->guard = guard;
		p->kernel[k]->guard_neg = guard ? neg : 0;
	}
}

/* The one node that reads value v (a live, unguarded node; v not a
 * graph output), or NULL: a view's reader. */
static const Node *view_reader(const Fuser *f, int v)
{
	const Node *m;
	int u;

	if (v < 0 || f->nuse[v] != 1 || (u = f->users[v][0]) < 0)
		return NULL;
	m = &f->g->node[u];
	return m->dead || m->guard ? NULL : m;
}

/* Transposes a MatMul can read through (Lower.tview): the Transpose's
 * output has that one consumer (not a graph output), a float MatMul
 * whose output has more than one column (its GEMM forms take strided
 * operands), and the permutation keeps the last axis last, so rows stay
 * contiguous (attention's head split and merge: [B,S,H,D] -> [B,H,S,D]).
 * No guards (a run-time If's branch keeps its kernels). */
static int *transpose_views(const Fuser *f)
{
	const Graph *g = f->g;
	int *tv = malloc(sizeof(int) * ((size_t)g->nval + 1)), any = 0;

	if (!tv)
		return NULL;
	for (int v = 0; v < g->nval; v++)
		tv[v] = -1;
	for (int i = 0; i < g->nnode; i++) {
		const Node *n = &g->node[i], *m;
		const Value *y, *x;
		const Attr *pa;
		int v, r;
		if (n->dead || n->op != OP_Transpose || n->nout != 1 || n->nin != 1 ||
		    (v = n->out[0]) < 0 || n->in[0] < 0 || n->guard ||
		    (f->group && f->group[i] >= 0) || !(m = view_reader(f, v)))
			continue;
		y = GV(g, v);
		x = GV(g, n->in[0]);
		r = y->rank;
		if (m->op != OP_MatMul || m->nin != 2 || m->in[0] == m->in[1] ||
		    !dtype_is_float(y->dtype) || r < 2 || x->rank != r || m->nout != 1 ||
		    m->out[0] < 0 || GV(g, m->out[0])->rank < 2 ||
		    GV(g, m->out[0])->dim[GV(g, m->out[0])->rank - 1] < 2)
			continue;
		pa = node_attr(n, "perm");
		if (pa ? (pa->n != r || pa->ints[r - 1] != r - 1) : r != 1)
			continue;   /* no perm: reversed, the last axis moves */
		tv[v] = i;
		any = 1;
	}
	if (!any) {
		free(tv);
		return NULL;
	}
	return tv;
}

/* Splits whose outputs Attention reads in place (Lower.sview): a Split
 * along the last axis of a 3-D value, every output of it read once, as
 * input 0, 1 or 2 of a 3-D Attention (a fused QKV projection split into
 * Q, K and V).  No guards, no fusion group. */
static int *split_views(const Fuser *f)
{
	const Graph *g = f->g;
	int *sv = malloc(sizeof(int) * ((size_t)g->nval + 1)), any = 0;

	if (!sv)
		return NULL;
	for (int v = 0; v < g->nval; v++)
		sv[v] = -1;
	for (int i = 0; i < g->nnode; i++) {
		const Node *n = &g->node[i];
		const Value *x;
		int ok;
		if (n->dead || n->op != OP_Split || n->guard || n->nin < 1 || n->in[0] < 0 ||
		    (f->group && f->group[i] >= 0))
			continue;
		x = GV(g, n->in[0]);
		ok = x->rank == 3 && (attr_int(n, "axis", 0) == 2 || attr_int(n, "axis", 0) == -1);
		for (int o = 0; ok && o < n->nout; o++) {
			int v = n->out[o], k;
			const Node *m = view_reader(f, v);
			ok = m && m->op == OP_Attention && GV(g, v)->rank == 3 &&
			     !(f->group && f->group[m - g->node] >= 0);
			for (k = 0; ok && k < m->nin; k++)
				if (m->in[k] == v && k > 2)
					ok = 0;
		}
		if (!ok)
			continue;
		for (int o = 0; o < n->nout; o++)
			sv[n->out[o]] = i;
		any = 1;
	}
	if (!any) {
		free(sv);
		return NULL;
	}
	return sv;
}

int pass_lower_fused(Ctx *c, Graph *g, const Fusion *fu, KProgram *p,
                     const Target *t)
{
	Lower lw = { c, g, p, NULL, t };
	Fuser f = { c, g };
	Scratch sh;
	int rc, any_guard = 0;

	for (int i = 0; i < g->nnode; i++)
		any_guard |= !g->node[i].dead && g->node[i].guard;

	f.group = fu ? fu->group : NULL;
	f.grp = fu ? fu->grp : NULL;
	f.ngrp = fu ? fu->ngrp : 0;
	if ((rc = scratch_init(c, g, &sh)) || (rc = build_uses(&f)) ||
	    (rc = build_members(&f))) {
		scratch_free(&sh);
		free_uses(&f);
		return rc;
	}
	lw.tview = transpose_views(&f);
	lw.sview = split_views(&f);
	for (int i = 0; i < g->nnode && !rc; i++) {
		Node *n = &g->node[i];
		int gid = f.group ? f.group[i] : -1;
		int first = p->nkernel;

		if (n->dead || (gid >= 0 && f.grp[gid].root != i))
			continue;   /* a group is lowered at its root, its last member */
		if (lw.tview && n->op == OP_Transpose && lw.tview[n->out[0]] == i)
			continue;   /* its MatMul reads its input through the perm */
		if (lw.sview && n->op == OP_Split && n->nout > 0 && n->out[0] >= 0 &&
		    lw.sview[n->out[0]] == i)
			continue;   /* its Attention nodes read its input in place */
		if (gid >= 0 && f.grp[gid].anchor >= 0)
			n = &g->node[f.grp[gid].anchor];   /* name the anchor in errors */
		c->node = n->name;
		c->op = op_table[n->op].name;
		if (gid < 0 && lower_alias(&lw, n)) {
			int s = kprog_storage(p, n->out[0]);
			if (s >= 0 && s < sh.nval)
				sh.shared[s] = 1;
			continue;
		}
		if (gid < 0 && op_table[n->op].cls == OC_ELEM && n->nout == 1 &&
		    n->out[0] >= 0) {
			/* a pointwise op alone may still overwrite a dying input */
			Group one = { 0 };
			const Value *o = NOUT(g, n, 0);
			one.root = i;
			one.rank = o->rank;
			memcpy(one.F, o->dim, sizeof(int64_t) * o->rank);
			sh.member[i] = 1;
			in_place(&f, &lw, &one, &i, 1, sh.member, sh.shared);
			sh.member[i] = 0;
		}
		if (gid < 0)
			rc = op_impl[n->op].lower(&lw, n);
		else if (f.grp[gid].anchor >= 0)
			rc = lower_anchored(&f, &lw, &sh, gid);
		else
			rc = lower_group(&f, &lw, &sh, gid);
		for (int k = first; k < p->nkernel && !rc; k++)
			rc = kir_verify(c, p->kernel[k]);
		if (any_guard && first < p->nkernel)
			kernel_guard(g, f.group, gid, i, p, first);
		if (!rc) {
			c->node = NULL;
			c->op = NULL;
		}
	}
	free((void *)lw.tview);
	free((void *)lw.sview);
	scratch_free(&sh);
	free_uses(&f);
	return rc;
}

/*
 * schedule_gpu.c - map kernels onto a GPU's blocks and threads.
 *
 * Lowerings produce loop nests for one CPU thread, marking loops whose
 * iterations are independent KF_PARALLEL.  This pass rewrites each kernel
 * for a target with blocks of threads (targets/: the gpu description):
 *
 *   pointwise map   a top-level nest of parallel loops with constant bounds
 *                   (total iterations N) becomes a grid of B blocks of T
 *                   threads, each thread taking iterations lin = (it*B +
 *                   blk)*T + tid for it < ceil(N / (B*T)) (a grid-stride
 *                   loop), the original loop variables recomputed from lin;
 *   row reduction   when such a nest's body is (within the thread) an
 *                   accumulation  acc = init; for r (serial) acc = acc (op) f(r)
 *                   over R >= min_row elements, the nest's iterations become blocks
 *                   and the reduction is split across the block's threads:
 *                   each thread folds a strided part, each subgroup
 *                   combines its lanes' parts in lockstep (sgreduce, no
 *                   barrier), lane 0 of each subgroup writes the result to
 *                   shared memory and after one barrier every thread folds
 *                   those (a second barrier frees the buffer); without
 *                   subgroups (GpuSchedOpts.subgroup 0) the partials go to
 *                   shared memory and a tree of barriers combines them
 *                   (softmax, layernorm and mean/variance rows do this for
 *                   each of their reductions, in one kernel);
 *   matmul          MatMul and Gemm are not mapped here: their lowering
 *                   (passes/ops_linalg.c, gemm_gpu) builds the shared-memory
 *                   tiled kernel with matrix-tile ops for GPU targets;
 *
 * Everything else stays as it was: a statement that is not a parallel
 * nest runs as one thread.  A nest is mapped only when each variable it
 * sets and each local buffer it uses occurs nowhere else in the kernel
 * (they become private to a thread) and its local buffers are small
 * (GPU threads have little private memory).
 *
 * The chosen mapping is recorded in the kernel's `sched` text, which
 * --emit=kernels prints.  The interpreter runs the result with GPU
 * semantics (ir/kir_interp.c), checking races and barriers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "passes.h"
#include "lower.h"

#define MAX_LOCAL_ELEMS 4096   /* a thread's private arrays, elements */

typedef struct Uses {
	unsigned char *vset, *vread, *bused;
} Uses;

/* A Uses for kernel k, zeroed (a field left NULL when out of memory). */
static void
uses_new(const KKernel *k, Uses *u)
{
	u->vset = calloc((size_t)k->nvar + 1, 1);
	u->vread = calloc((size_t)k->nvar + 1, 1);
	u->bused = calloc((size_t)k->nbuf + 1, 1);
}

static void
uses_free(Uses *u)
{
	free(u->vset);
	free(u->vread);
	free(u->bused);
}

static void
expr_uses(const KKernel *k, KRef e, Uses *u, unsigned char *seen)
{
	/* an explicit stack: expression DAGs can be deep */
	KRef stack[256];
	int sp = 0;

	if (e <= 0)
		return;
	stack[sp++] = e;
	while (sp) {
		const KNode *n;
		e = stack[--sp];
		if (e <= 0 || seen[e])
			continue;
		seen[e] = 1;
		n = &k->node[e];
		if (n->kind == KE_VAR)
			u->vread[n->var] = 1;
		if (n->kind == KE_LOAD)
			u->bused[n->buf] = 1;
		if (sp + 3 > (int)(sizeof stack / sizeof stack[0])) {
			/* rare: finish this branch recursively */
			expr_uses(k, n->a, u, seen);
			expr_uses(k, n->b, u, seen);
			expr_uses(k, n->c, u, seen);
			continue;
		}
		if (n->a) stack[sp++] = n->a;
		if (n->b) stack[sp++] = n->b;
		if (n->c) stack[sp++] = n->c;
	}
}

/* Uses of the statements of block s (and, if all, of those after it). */
static void
block_uses(const KKernel *k, KRef s, int all, Uses *u, unsigned char *seen)
{
	for (; s; s = all ? k->node[s].next : 0) {
		const KNode *n = &k->node[s];
		switch (n->kind) {
		case KS_FOR:
			u->vset[n->var] = u->vread[n->var] = 1;
			expr_uses(k, n->a, u, seen);
			expr_uses(k, n->b, u, seen);
			block_uses(k, n->body, 1, u, seen);
			break;
		case KS_IF:
			expr_uses(k, n->a, u, seen);
			block_uses(k, n->body, 1, u, seen);
			block_uses(k, n->orelse, 1, u, seen);
			break;
		case KS_STORE:
			u->bused[n->buf] = 1;
			expr_uses(k, n->a, u, seen);
			expr_uses(k, n->b, u, seen);
			break;
		case KS_SET:
			u->vset[n->var] = 1;
			expr_uses(k, n->a, u, seen);
			break;
		default:
			if (!kgpu_name(n->kind))
				break;
			/* GPU statements: what they set, read and touch */
			if (n->var >= 0 && n->kind != KS_VCOPY && n->kind != KS_CPASYNC)
				u->vset[n->var] = 1;
			u->bused[n->buf] = u->bused[n->buf2] = u->bused[n->buf3] = 1;
			expr_uses(k, n->a, u, seen);
			expr_uses(k, n->b, u, seen);
			expr_uses(k, n->c, u, seen);
			break;
		}
	}
}

typedef struct S {
	Ctx *c;
	KProgram *p;
	KKernel *k;
	const GpuSchedOpts *o;
	char desc[256];
	int nmapped, nreduced;
	const KRef *tops;   /* the kernel's top-level statements as they were
	                     * before mapping (the chain from k->body is being
	                     * rebuilt, and holds only those already done) */
	int ntop;
	int vec_here;       /* this pass decided the kernel's vec step (a later
	                     * nest of it, a Split's next output, takes it too) */
} S;

/* Whether statement s can become private to threads: what it sets and its
 * local buffers appear in no other top-level statement. */
static int
privatisable(S *st, KRef s)
{
	const KKernel *k = st->k;
	Uses in = {0}, out = {0};
	unsigned char *seen = calloc((size_t)k->nnode, 1);
	int ok = 0;

	uses_new(k, &in);
	uses_new(k, &out);
	if (!seen || !in.vset || !in.vread || !in.bused || !out.vset ||
	    !out.vread || !out.bused)
		goto done;
	block_uses(k, s, 0, &in, seen);
	memset(seen, 0, (size_t)k->nnode);
	for (int i = 0; i < st->ntop; i++)
		if (st->tops[i] != s)
			block_uses(k, st->tops[i], 0, &out, seen);
	ok = 1;
	for (int v = 0; v < k->nvar && ok; v++)
		if (in.vset[v] && (out.vset[v] || out.vread[v]))
			ok = 0;
	for (int b = 0; b < k->nbuf && ok; b++) {
		if (!in.bused[b])
			continue;
		if (k->buf[b].space == KS_SHARED)
			ok = 0;
		if (k->buf[b].space == KS_LOCAL &&
		    (out.bused[b] || k->buf[b].count > MAX_LOCAL_ELEMS))
			ok = 0;
	}
done:
	free(seen);
	uses_free(&in);
	uses_free(&out);
	return ok;
}

/* A parallel loop with constant bounds: its extent in *ext. */
static int
par_loop(const KKernel *k, KRef s, int64_t *lo, int64_t *ext)
{
	const KNode *n = &k->node[s];
	int64_t hi;

	if (!s || n->kind != KS_FOR || !(n->flags & KF_PARALLEL) ||
	    (n->flags & ~KF_PARALLEL) || !kb_is_const_i(k, n->a, lo) ||
	    !kb_is_const_i(k, n->b, &hi) || hi < *lo)
		return 0;
	*ext = hi - *lo;
	return 1;
}

/* ---- row reductions ----------------------------------------------------- */

enum { R_SET, R_RED, R_PAR, R_STORE };

typedef struct RowStmt {
	int kind;       /* R_* */
	KRef s;         /* the statement (R_RED: the loop; its init is before) */
	int op;         /* R_RED: the combining KOp */
	int acc;        /* R_RED: the accumulator variable */
	int64_t lo, hi; /* R_RED, R_PAR: the loop's bounds */
} RowStmt;

/* x is op(acc, e) or op(e, acc) with acc not in e: the other operand. */
static int
is_fold(const KKernel *k, KRef x, int acc, int *op)
{
	const KNode *n = &k->node[x];
	const KNode *a, *b;

	if (n->kind != KE_BIN || n->lanes != 1)
		return 0;
	if (n->op != KO_ADD && n->op != KO_MUL && n->op != KO_MIN && n->op != KO_MAX)
		return 0;
	a = &k->node[n->a];
	b = &k->node[n->b];
	if (!((a->kind == KE_VAR && a->var == acc) || (b->kind == KE_VAR && b->var == acc)))
		return 0;
	*op = n->op;
	return 1;
}

/* Whether constant e is op's identity for dtype: folding it any number
 * of times changes nothing (so idle threads may contribute it). */
static int
is_identity(const KKernel *k, KRef e, int op)
{
	const KNode *n = &k->node[e];

	if (n->kind != KE_CONST || !dtype_is_float(n->dtype))
		return 0;
	switch (op) {
	case KO_ADD: return n->fval == 0;
	case KO_MUL: return n->fval == 1;
	case KO_MAX: return n->fval < -3.4e38;   /* -inf or lowest */
	case KO_MIN: return n->fval > 3.4e38;
	}
	return 0;
}

/* Does expression e (or a statement list) read variable v? */
static int
reads_var(const KKernel *k, KRef s, int v, int list)
{
	Uses u = {0};
	unsigned char *seen = calloc((size_t)k->nnode, 1);
	int r = 1;

	uses_new(k, &u);
	if (seen && u.vset && u.vread && u.bused) {
		if (list)
			block_uses(k, s, 1, &u, seen);
		else
			expr_uses(k, s, &u, seen);
		r = u.vread[v];
	}
	free(seen); uses_free(&u);
	return r;
}

/* The coefficient of variable v in integer expression e when e is affine
 * in v (sums, products with a constant, other variables and loads not
 * involving v); *ok = 0 when it is not. */
static int64_t
coef(const KKernel *k, KRef e, int v, int *ok)
{
	const KNode *n = &k->node[e];
	int64_t c;

	if (!*ok || e <= 0)
		return 0;
	switch (n->kind) {
	case KE_CONST: return 0;
	case KE_VAR: return n->var == v;
	case KE_BIN:
		if (n->op == KO_ADD)
			return coef(k, n->a, v, ok) + coef(k, n->b, v, ok);
		if (n->op == KO_SUB)
			return coef(k, n->a, v, ok) - coef(k, n->b, v, ok);
		if (n->op == KO_MUL && kb_is_const_i(k, n->b, &c))
			return c * coef(k, n->a, v, ok);
		if (n->op == KO_MUL && kb_is_const_i(k, n->a, &c))
			return c * coef(k, n->b, v, ok);
		break;
	default:
		break;
	}
	if (reads_var(k, e, v, 0))
		*ok = 0;
	return 0;
}

/* A serial loop whose iterations are independent all the same: its body
 * is stores only, each at an index affine in the loop variable with a
 * non-zero coefficient (so no two iterations store to one element), and
 * nothing in it loads a buffer it stores to. */
static int
stores_apart(const KKernel *k, KRef loop)
{
	const KNode *l = &k->node[loop];
	unsigned char stored[64] = {0};
	Uses u = {0};
	unsigned char *seen;
	int ok = 1;

	if (k->nbuf > 64)
		return 0;
	for (KRef s = l->body; s; s = k->node[s].next) {
		int good = 1;
		if (k->node[s].kind != KS_STORE)
			return 0;
		if (coef(k, k->node[s].a, l->var, &good) == 0 || !good)
			return 0;
		stored[k->node[s].buf] = 1;
	}
	seen = calloc((size_t)k->nnode, 1);
	uses_new(k, &u);
	if (!seen || !u.vset || !u.vread || !u.bused)
		ok = 0;
	for (KRef s = l->body; s && ok; s = k->node[s].next) {
		expr_uses(k, k->node[s].a, &u, seen);
		expr_uses(k, k->node[s].b, &u, seen);
	}
	for (int b = 0; b < k->nbuf && ok; b++)
		if (stored[b] && u.bused[b])
			ok = 0;
	free(seen); uses_free(&u);
	return ok;
}

/* Classify the statements of one row's body; 0 if it does not have the
 * shape split_rows handles, else their count (at most cap). */
static int
classify(const KKernel *k, KRef first, RowStmt *rs, int cap, int64_t *maxr)
{
	int n = 0, nred = 0;

	*maxr = 0;
	for (KRef s = first; s; s = k->node[s].next) {
		const KNode *x = &k->node[s], *nx = x->next ? &k->node[x->next] : NULL;
		int64_t lo, hi;
		if (n == cap)
			return 0;
		rs[n].s = s;
		if (x->kind == KS_SET && nx && nx->kind == KS_FOR &&
		    !(nx->flags & ~KF_PARALLEL) && nx->body &&
		    !k->node[nx->body].next && k->node[nx->body].kind == KS_SET &&
		    k->node[nx->body].var == x->var &&
		    kb_is_const_i(k, nx->a, &lo) && kb_is_const_i(k, nx->b, &hi) &&
		    hi - lo >= 2 && is_fold(k, k->node[nx->body].a, x->var, &rs[n].op) &&
		    is_identity(k, x->a, rs[n].op)) {
			/* the other operand must not read acc (x = op(acc, f(acc)) is
			 * not a fold) */
			const KNode *f = &k->node[k->node[nx->body].a];
			KRef other = k->node[f->a].kind == KE_VAR && k->node[f->a].var == x->var ?
			             f->b : f->a;
			if (reads_var(k, other, x->var, 0))
				return 0;
			rs[n].kind = R_RED;
			rs[n].acc = x->var;
			rs[n].lo = lo;
			rs[n].hi = hi;
			rs[n].s = x->next;
			if (hi - lo > *maxr)
				*maxr = hi - lo;
			nred++;
			s = x->next;     /* the loop is part of this entry */
		} else if (x->kind == KS_SET) {
			rs[n].kind = R_SET;
		} else if (x->kind == KS_FOR && !(x->flags & ~KF_PARALLEL) &&
		           ((x->flags & KF_PARALLEL) || stores_apart(k, s)) &&
		           kb_is_const_i(k, x->a, &lo) && kb_is_const_i(k, x->b, &hi)) {
			rs[n].kind = R_PAR;
			rs[n].lo = lo;
			rs[n].hi = hi;
			if (hi - lo > *maxr)
				*maxr = hi - lo;
		} else if (x->kind == KS_STORE) {
			rs[n].kind = R_STORE;
		} else {
			return 0;
		}
		n++;
	}
	return nred ? n : 0;
}

/* ---- rows on chip ------------------------------------------------------- *
 *
 * The loops of a row (its reductions and its element-wise parts) each read
 * the row again: softmax reads it three times, layernorm three.  Every
 * such loop runs strided over the same threads (element r of the row is
 * thread r mod T's in each), so a row that two or more of them read at
 * index base + r is copied to shared memory by the first one (each thread
 * its own elements: no barrier) and the others read that copy: global
 * memory sees each row once.  Only global buffers the kernel never writes,
 * at an index affine in the loop variable with coefficient 1 whose other
 * terms are the same in each loop (same expression, the loop variables
 * matched) and read nothing the row's statements set; only while the
 * copies fit GpuSchedOpts.row_cache bytes.  The step onchip/offchip
 * records the choice.
 *
 * Since every loop gives thread tid the same elements (r = lo + q*T +
 * tid), a thread only ever reads back what it copied itself.  Where each
 * such row divides evenly over the T threads and all of them come to at
 * most GpuSchedOpts.row_regs (and MAX_REG_ELEMS) elements a thread, the
 * copies are private arrays
 * indexed by q instead (step inreg, the default there): the loops over q
 * are unrolled, so the indices are constants and the arrays registers
 * (H200, softmax 8192^2: docs/BENCHMARKS.md); no shared memory, no
 * barrier around the copies. */

#define MAX_CACHED 4
#define MAX_CLOADS 32
#define MAX_UNROLLED_COPY 64   /* elements a thread copies, unrolled */
#define MAX_REG_ELEMS 32       /* inreg: elements a thread keeps in registers */

typedef struct RowCache {
	int buf, sh;          /* the global buffer, its shared copy */
	int first;            /* the row statement (rs index) that copies it */
	int nloop, last;      /* loops reading it, the last one counted */
	KRef idx;             /* the index of a load in the first loop */
	int64_t lo, hi;       /* the loops' range */
	KRef load[MAX_CLOADS];
	int lvar[MAX_CLOADS]; /* each load's loop variable */
	int nload;
	int on;               /* selected */
	uint64_t loops;       /* bit i: row statement i reads it */
	int reuse_at;         /* a reduction that leaves a value in the copy, */
	KRef reuse_val;       /* this one, for the last loop; -1 / 0: none */
	int xv;               /* inreg: the variable its loads become */
} RowCache;

typedef struct Caches {
	RowCache c[MAX_CACHED];
	int n, any;
	int reg;              /* inreg: the copies are each thread's registers */
} Caches;

/* Whether a (in the loop of variable va) and b (of vb) compute the same,
 * va and vb taken as equal. */
static int
same_expr(const KKernel *k, KRef a, int va, KRef b, int vb, int depth)
{
	const KNode *x, *y;

	if (a == b)
		return 1;
	if (a <= 0 || b <= 0 || depth > 64)
		return 0;
	x = &k->node[a];
	y = &k->node[b];
	if (x->kind != y->kind || x->op != y->op || x->dtype != y->dtype ||
	    x->lanes != y->lanes || x->ival != y->ival ||
	    memcmp(&x->fval, &y->fval, sizeof x->fval))
		return 0;
	if (x->kind == KE_VAR)
		return x->var == y->var || (x->var == va && y->var == vb);
	if (x->kind == KE_LOAD && x->buf != y->buf)
		return 0;
	return same_expr(k, x->a, va, y->a, vb, depth + 1) &&
	       same_expr(k, x->b, va, y->b, vb, depth + 1) &&
	       same_expr(k, x->c, va, y->c, vb, depth + 1);
}

/* A KE_VAR node of variable v in expression e (one exists when e is
 * affine in v with a non-zero coefficient), or 0. */
static KRef
var_node(const KKernel *k, KRef e, int v, int depth)
{
	const KNode *n;
	KRef r;

	if (e <= 0 || depth > 64)
		return 0;
	n = &k->node[e];
	if (n->kind == KE_VAR && n->var == v)
		return e;
	if ((r = var_node(k, n->a, v, depth + 1)) || (r = var_node(k, n->b, v, depth + 1)))
		return r;
	return var_node(k, n->c, v, depth + 1);
}

typedef struct Scan {
	const KKernel *k;
	Caches *cs;
	const unsigned char *vset;  /* variables the row's statements set */
	unsigned char *seen;
	int at, rvar;
	int64_t lo, hi;
} Scan;

/* Load e of the loop being scanned, if it can read a shared copy. */
static void
scan_load(Scan *sc, KRef e)
{
	const KKernel *k = sc->k;
	const KNode *n = &k->node[e];
	const KBuf *b = &k->buf[n->buf];
	Uses u = {0};
	unsigned char *seen;
	int ok = 1;
	RowCache *g = NULL;

	/* an f16/bf16 row too (its loads are f32 values, exact) */
	if (n->b || n->lanes != 1 || b->space != KS_GLOBAL || b->access != KA_READ ||
	    dtype_expr(b->dtype) != n->dtype || dtype_is_packed(b->dtype) || b->dtype == DT_BOOL ||
	    coef(k, n->a, sc->rvar, &ok) != 1 || !ok || !var_node(k, n->a, sc->rvar, 0))
		return;
	seen = calloc((size_t)k->nnode, 1);
	uses_new(k, &u);
	if (seen && u.vset && u.vread && u.bused) {
		expr_uses(k, n->a, &u, seen);
		for (int v = 0; v < k->nvar; v++)
			if (u.vread[v] && v != sc->rvar && sc->vset[v])
				ok = 0;
	} else {
		ok = 0;
	}
	free(seen); uses_free(&u);
	if (!ok)
		return;
	for (int i = 0; i < sc->cs->n && !g; i++) {
		RowCache *c = &sc->cs->c[i];
		if (c->buf == n->buf && c->lo == sc->lo && c->hi == sc->hi &&
		    same_expr(k, c->idx, c->lvar[0], n->a, sc->rvar, 0))
			g = c;
	}
	if (!g) {
		if (sc->cs->n == MAX_CACHED)
			return;
		g = &sc->cs->c[sc->cs->n++];
		memset(g, 0, sizeof *g);
		g->buf = n->buf;
		g->first = g->last = sc->at;
		g->nloop = 1;
		g->idx = n->a;
		g->lo = sc->lo;
		g->hi = sc->hi;
		g->reuse_at = -1;
	} else if (g->last != sc->at) {
		g->last = sc->at;
		g->nloop++;
	}
	g->loops |= (uint64_t)1 << sc->at;
	if (g->nload == MAX_CLOADS) {
		g->nloop = 0;   /* too many to follow: leave it */
		return;
	}
	g->load[g->nload] = e;
	g->lvar[g->nload++] = sc->rvar;
}

static void
scan_expr(Scan *sc, KRef e, int depth)
{
	const KNode *n;

	if (e <= 0 || sc->seen[e] || depth > 200)
		return;
	sc->seen[e] = 1;
	n = &sc->k->node[e];
	if (n->kind == KE_LOAD)
		scan_load(sc, e);
	scan_expr(sc, n->a, depth + 1);
	scan_expr(sc, n->b, depth + 1);
	scan_expr(sc, n->c, depth + 1);
}

static void
scan_block(Scan *sc, KRef s, int depth)
{
	for (; s && depth < 64; s = sc->k->node[s].next) {
		const KNode *n = &sc->k->node[s];
		scan_expr(sc, n->a, 0);
		if (n->kind == KS_STORE || n->kind == KS_FOR)
			scan_expr(sc, n->b, 0);
		if (n->kind == KS_FOR || n->kind == KS_IF)
			scan_block(sc, n->body, depth + 1);
		if (n->kind == KS_IF)
			scan_block(sc, n->orelse, depth + 1);
	}
}

/* Does expression e read buffer b (stop: a node not to enter, or 0)? */
static int
reads_buf(const KKernel *k, KRef e, int b, KRef stop, int depth)
{
	const KNode *n;

	if (e <= 0 || e == stop || depth > 200)
		return depth > 200;
	n = &k->node[e];
	if (n->kind == KE_LOAD && n->buf == b)
		return 1;
	return reads_buf(k, n->a, b, stop, depth + 1) || reads_buf(k, n->b, b, stop, depth + 1) ||
	       reads_buf(k, n->c, b, stop, depth + 1);
}

/* A node of expression e computing what x computes in the loop of va (the
 * variable vb here), or 0. */
static KRef
find_same(const KKernel *k, KRef e, KRef x, int va, int vb, int depth)
{
	KRef r;

	if (e <= 0 || depth > 200)
		return 0;
	if (same_expr(k, x, va, e, vb, 0))
		return e;
	if ((r = find_same(k, k->node[e].a, x, va, vb, depth + 1)) ||
	    (r = find_same(k, k->node[e].b, x, va, vb, depth + 1)))
		return r;
	return find_same(k, k->node[e].c, x, va, vb, depth + 1);
}

/* Softmax computes exp(x - max) in its sum and again in its write loop.
 * Where a reduction's folded value E (reading the row's copy c) is also
 * computed by the last loop that reads the row, and nothing between them
 * reads the row or sets what E reads: the reduction stores E into the
 * copy (each thread its own elements: no barrier) and both read it there,
 * the later loop no longer computing it.  Only a last loop of plain
 * stores whose every read of the row is inside E. */
static void
plan_reuse(KB *kb, const RowStmt *rs, int n, RowCache *c)
{
	KKernel *k = kb->k;
	int last = -1;

	for (int i = 0; i < n && i < 64; i++)
		if (c->loops >> i & 1)
			last = i;
	if (last < 0 || rs[last].kind != R_PAR)
		return;
	for (int i = 0; i < last; i++) {
		const KNode *fold, *f;
		KRef e, e3 = 0, cl;
		int ri, rj, ok = 1;
		Uses u = {0}, w = {0};
		unsigned char *seen;
		if (rs[i].kind != R_RED || !(c->loops >> i & 1) || c->loops >> (i + 1) & ((((uint64_t)1 << (last - i - 1)) - 1)))
			continue;
		fold = &k->node[k->node[rs[i].s].body];     /* acc = op(acc, E) */
		f = &k->node[fold->a];
		e = k->node[f->a].kind == KE_VAR && k->node[f->a].var == rs[i].acc ? f->b : f->a;
		ri = k->node[rs[i].s].var;
		rj = k->node[rs[last].s].var;
		if ((k->node[e].kind != KE_UN && k->node[e].kind != KE_BIN) ||
		    k->node[e].dtype != k->buf[c->sh].dtype || k->node[e].lanes != 1 ||
		    !reads_buf(k, e, c->sh, 0, 0) || !var_node(k, e, ri, 0))
			return;
		/* the last loop: stores only, E found in them, no other read */
		for (KRef s = k->node[rs[last].s].body; s && !e3; s = k->node[s].next)
			if (k->node[s].kind == KS_STORE)
				e3 = find_same(k, k->node[s].b, e, ri, rj, 0);
		if (!e3)
			return;
		for (KRef s = k->node[rs[last].s].body; s; s = k->node[s].next)
			if (k->node[s].kind != KS_STORE || reads_buf(k, k->node[s].a, c->sh, 0, 0) ||
			    reads_buf(k, k->node[s].b, c->sh, e3, 0))
				return;
		/* what E reads is set by nothing from its loop to the last */
		seen = calloc((size_t)k->nnode + 1, 1);
		uses_new(k, &u);
		uses_new(k, &w);
		if (!seen || !u.vset || !u.vread || !u.bused || !w.vset || !w.vread || !w.bused) {
			ok = 0;
		} else {
			expr_uses(k, e, &u, seen);
			for (int t = i; t <= last; t++) {
				memset(seen, 0, (size_t)k->nnode + 1);
				if (rs[t].kind == R_SET)
					w.vset[k->node[rs[t].s].var] = 1;
				else if (rs[t].kind == R_RED || rs[t].kind == R_PAR)
					block_uses(k, rs[t].s, 0, &w, seen);
				if (rs[t].kind == R_RED)
					w.vset[rs[t].acc] = 1;
			}
			for (int v = 0; v < k->nvar; v++)
				if (u.vread[v] && w.vset[v] && v != ri)
					ok = 0;
		}
		free(seen); uses_free(&u);
		uses_free(&w);
		if (!ok)
			return;
		/* E's value for the store; E and its twin become reads of it */
		cl = k->node[e].kind == KE_UN ? kb_un(kb, k->node[e].op, k->node[e].a) :
		     kb_bin(kb, k->node[e].op, k->node[e].a, k->node[e].b);
		k = kb->k;
		{
			KRef ia = var_node(k, e, ri, 0), ib = var_node(k, e3, rj, 0);
			KNode *x = &k->node[e], *y = &k->node[e3];
			if (!ia || !ib)
				return;
			*x = (KNode){ .kind = KE_LOAD, .dtype = x->dtype, .lanes = 1, .a = ia,
			              .buf = c->sh };
			*y = (KNode){ .kind = KE_LOAD, .dtype = y->dtype, .lanes = 1, .a = ib,
			              .buf = c->sh };
		}
		c->reuse_at = i;
		c->reuse_val = cl;
		return;
	}
}

/* The global rows the loops of rs[0..n) read (cs; cs->any: one of them
 * more than once), nothing changed yet.  0, or -1 when out of memory. */
static int
scan_rows(KKernel *k, const RowStmt *rs, int n, Caches *cs)
{
	Uses u = {0};
	unsigned char *seen = calloc((size_t)k->nnode + 1, 1);
	Scan sc = { k, cs, NULL, NULL, 0, 0, 0, 0 };

	memset(cs, 0, sizeof *cs);
	uses_new(k, &u);
	sc.seen = calloc((size_t)k->nnode + 1, 1);
	if (!seen || !u.vset || !u.vread || !u.bused || !sc.seen) {
		free(seen); uses_free(&u); free(sc.seen);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (rs[i].kind == R_SET || rs[i].kind == R_RED)
			u.vset[rs[i].kind == R_SET ? k->node[rs[i].s].var : rs[i].acc] = 1;
		if (rs[i].kind == R_RED || rs[i].kind == R_PAR)
			block_uses(k, rs[i].s, 0, &u, seen);
	}
	sc.vset = u.vset;
	for (int i = 0; i < n; i++) {
		if (rs[i].kind != R_RED && rs[i].kind != R_PAR)
			continue;
		sc.at = i;
		sc.rvar = k->node[rs[i].s].var;
		sc.lo = rs[i].lo;
		sc.hi = rs[i].hi;
		memset(sc.seen, 0, (size_t)k->nnode + 1);
		scan_block(&sc, k->node[rs[i].s].body, 0);
	}
	free(seen); uses_free(&u); free(sc.seen);
	for (int i = 0; i < cs->n; i++)
		cs->any |= cs->c[i].nloop >= 2;
	return 0;
}

/* Find the rows the loops of rs[0..n) read more than once and that fit
 * (limit bytes of shared memory, or regs elements a thread of T);
 * decide the step (kernel k of st) and point their loads at the copies
 * made here.  0, or -1 when out of memory. */
static int
plan_onchip(S *st, KB *kb, const RowStmt *rs, int n, int64_t limit, int64_t regs,
            int64_t T, Caches *cs)
{
	KKernel *k = kb->k;
	int64_t total = 0, nreg = 0;
	int canreg = 1;
	KStep want;

	if (limit <= 0 && regs <= 0) {
		memset(cs, 0, sizeof *cs);
		return 0;
	}
	if (scan_rows(k, rs, n, cs) < 0)
		return -1;
	cs->any = 0;
	for (int i = 0; i < cs->n; i++) {
		RowCache *c = &cs->c[i];
		int64_t bytes = c->hi * dtype_size(k->buf[c->buf].dtype);
		/* in shared memory as stored, so not an f16/bf16 row (its
		 * elements are f32 values: registers only) */
		if (c->nloop >= 2 && total + bytes <= limit &&
		    dtype_expr(k->buf[c->buf].dtype) == k->buf[c->buf].dtype) {
			c->on = 1;
			total += bytes;
		}
		if (c->nloop >= 2) {
			canreg = canreg && (c->hi - c->lo) % T == 0;
			nreg += (c->hi - c->lo) / T;
		}
		cs->any |= c->nloop >= 2;
	}
	if (!cs->any)
		return 0;
	canreg = canreg && nreg <= regs && nreg <= MAX_REG_ELEMS;
	want = sched_decide(st->p, k, kstep_make(canreg ? KST_INREG : total ? KST_ONCHIP :
	                                         KST_OFFCHIP, 0, 0, 0, 0));
	if (want.kind == KST_INREG && !canreg) {
		/* asked for and not possible: what is built is recorded, and
		 * sched_check_want reports the difference */
		want = kstep_make(total ? KST_ONCHIP : KST_OFFCHIP, 0, 0, 0, 0);
		kprog_step_put(st->p, k, &want);
	}
	cs->reg = want.kind == KST_INREG;
	for (int i = 0; i < cs->n; i++) {
		RowCache *c = &cs->c[i];
		if (cs->reg)
			c->on = c->nloop >= 2;
		else if (want.kind != KST_ONCHIP)
			c->on = 0;
		if (!c->on)
			continue;
		/* in shared memory the copy is indexed by r itself (elements
		 * below lo unused): a load's new index must be a node before
		 * it, and its old index, affine in r, holds r's variable node;
		 * in registers by q, which strided() puts in each loop */
		/* registers hold the values (f32 for an f16/bf16 row, so a
		 * softmax's exponentials can be kept there), shared memory
		 * the elements as stored */
		c->sh = cs->reg ? kb_buf(kb, dtype_expr(k->buf[c->buf].dtype), (c->hi - c->lo) / T,
		                         -1, KS_LOCAL, KA_RW) :
		        kb_buf(kb, k->buf[c->buf].dtype, c->hi, -1, KS_SHARED, KA_RW);
		if (cs->reg)
			c->xv = kb_var(kb, dtype_expr(k->buf[c->buf].dtype), "x");
		k = kb->k;
		for (int j = 0; j < c->nload; j++) {
			KNode *ld = &k->node[c->load[j]];
			ld->a = var_node(k, ld->a, c->lvar[j], 0);
			ld->buf = c->sh;
		}
		plan_reuse(kb, rs, n, c);
	}
	return 0;
}

/* The copies to shared memory row statement `at` makes (cs) of a row of
 * at most MAX_UNROLLED_COPY elements per thread, before its loop: one
 * statement per element (var = lo + q*T + tid for each q), so a thread has
 * all its loads in flight at once rather than one per loop iteration. */
/* Whether integer expression e is a multiple of m whenever variable v is:
 * v, constants that are, variables set once to such an expression or
 * marked in known (may be NULL), and their sums and products. */
static int
multiple_of_in(const KKernel *k, KRef e, int64_t m, int v, const unsigned char *known,
               int depth)
{
	const KNode *n;
	int64_t c;

	if (e <= 0 || depth > 64)
		return 0;
	n = &k->node[e];
	switch (n->kind) {
	case KE_CONST:
		return n->ival % m == 0;
	case KE_VAR: {
		/* v itself, or a variable set once, to a multiple (a loop's
		 * variable is never set: the mapped loops' are, once, and
		 * their loop nodes are gone from the tree) */
		KRef set = 0;
		if (n->var == v || (known && known[n->var]))
			return 1;
		for (KRef s = 1; s < k->nnode; s++) {
			const KNode *x = &k->node[s];
			if (x->kind == KS_SET && x->var == n->var) {
				if (set)
					return 0;
				set = s;
			}
		}
		return set && multiple_of_in(k, k->node[set].a, m, v, known, depth + 1);
	}
	case KE_BIN:
		if (n->op == KO_ADD || n->op == KO_SUB)
			return multiple_of_in(k, n->a, m, v, known, depth + 1) &&
			       multiple_of_in(k, n->b, m, v, known, depth + 1);
		if (n->op == KO_MUL)
			return multiple_of_in(k, n->a, m, v, known, depth + 1) ||
			       multiple_of_in(k, n->b, m, v, known, depth + 1);
		if ((n->op == KO_MOD || n->op == KO_REM) && kb_is_const_i(k, n->b, &c) && c == 1)
			return 1;   /* x rem 1 is 0 */
		return 0;
	}
	return 0;
}

static int
multiple_of(const KKernel *k, KRef e, int64_t m, int v, int depth)
{
	return multiple_of_in(k, e, m, v, NULL, depth);
}

static void
unrolled_copies(KB *kb, const Caches *cs, int at, int var, int64_t lo, int64_t hi,
                int tid, int64_t T)
{
	int64_t nq = (hi - lo + T - 1) / T;

	if (nq > MAX_UNROLLED_COPY)
		return;
	for (int i = 0; i < cs->n; i++) {
		const RowCache *c = &cs->c[i];
		int lanes = 16 / dtype_size(kb->k->buf[c->buf].dtype);
		if (!c->on || c->first != at)
			continue;
		if (cs->reg) {
			/* each thread its own elements, into its registers */
			for (int64_t q = 0; q < nq; q++) {
				kb_set(kb, var, kb_bin(kb, KO_ADD, kb_get(kb, tid), kb_idx(kb, lo + q * T)));
				kb_store(kb, c->sh, kb_idx(kb, q), kb_load(kb, c->buf, c->idx));
			}
			continue;
		}
		if (lanes > 1 && lo % lanes == 0 && (hi - lo) % (lanes * T) == 0 &&
		    multiple_of(kb->k, c->idx, lanes, var, 0)) {
			/* 16-byte copies, each thread a run of lanes elements: the
			 * loops read other threads' elements, after a barrier; and
			 * a barrier before, as the block's previous row (a block
			 * may loop over rows) may still be read by other threads */
			kb_barrier(kb);
			for (int64_t q = 0; q < (hi - lo) / (lanes * T); q++) {
				kb_set(kb, var, kb_bin(kb, KO_ADD, kb_bin(kb, KO_MUL, kb_get(kb, tid),
				       kb_idx(kb, lanes)), kb_idx(kb, lo + q * lanes * T)));
				kb_vcopy(kb, c->sh, kb_get(kb, var), c->buf, c->idx, lanes);
			}
			kb_barrier(kb);
			continue;
		}
		for (int64_t q = 0; q < nq; q++) {
			int partial = lo + (q + 1) * T > hi;   /* some threads idle */
			kb_set(kb, var, kb_bin(kb, KO_ADD, kb_get(kb, tid), kb_idx(kb, lo + q * T)));
			if (partial)
				kb_if(kb, kb_bin(kb, KO_LT, kb_get(kb, var), kb_idx(kb, hi)));
			kb_store(kb, c->sh, kb_get(kb, var), kb_load(kb, c->buf, c->idx));
			if (partial)
				kb_end(kb);
		}
	}
}

/* inreg: the loads of the register copies (cs) in expression e / the
 * statements from s become reads of the copies' variables (c->xv). */
static void
relocal_expr(KKernel *k, KRef e, const Caches *cs, unsigned char *seen, int depth)
{
	KNode *n;

	if (e <= 0 || seen[e] || depth > 200)
		return;
	seen[e] = 1;
	n = &k->node[e];
	if (n->kind == KE_LOAD)
		for (int i = 0; i < cs->n; i++)
			if (cs->c[i].on && n->buf == cs->c[i].sh) {
				n->kind = KE_VAR;
				n->var = cs->c[i].xv;
				n->a = n->b = n->c = 0;
				n->buf = 0;
				return;
			}
	relocal_expr(k, n->a, cs, seen, depth + 1);
	relocal_expr(k, n->b, cs, seen, depth + 1);
	relocal_expr(k, n->c, cs, seen, depth + 1);
}

static void
relocal(KKernel *k, KRef s, const Caches *cs, unsigned char *seen, int depth)
{
	for (; s && depth < 64; s = k->node[s].next) {
		const KNode *n = &k->node[s];
		relocal_expr(k, n->a, cs, seen, 0);
		relocal_expr(k, n->b, cs, seen, 0);
		relocal_expr(k, n->c, cs, seen, 0);
		if (n->kind == KS_FOR || n->kind == KS_IF)
			relocal(k, n->body, cs, seen, depth + 1);
		if (n->kind == KS_IF)
			relocal(k, n->orelse, cs, seen, depth + 1);
	}
}

/* for q in [0, ceil(R/T)): var = lo + q*T + tid; if var < hi: the copies
 * to shared memory row statement `at` makes (cs), then body.
 *
 * Under inreg, a loop over a row kept in registers is unrolled (R is a
 * multiple of T: no if) and reads element q of each copy into its
 * variable, which the copy's loads in the loop become; where the loop
 * leaves a value in the copy (plan_reuse), that value is computed from
 * the element and then replaces it, so the body reads the new one.
 * 0, or -1 when out of memory. */
static int
strided(KB *kb, int var, int64_t lo, int64_t hi, int tid, int64_t T, KRef body,
        const Caches *cs, int at)
{
	int reg = 0, q;
	KRef val = 0;

	for (int i = 0; cs && cs->reg && i < cs->n; i++)
		reg |= cs->c[i].on && cs->c[i].lo == lo && cs->c[i].hi == hi;
	q = kb_for(kb, "q", kb_idx(kb, 0), kb_idx(kb, (hi - lo + T - 1) / T),
	           reg ? KF_UNROLL : 0);
	kb_set(kb, var, kb_bin(kb, KO_ADD, kb_bin(kb, KO_ADD, kb_bin(kb, KO_MUL,
	       kb_get(kb, q), kb_idx(kb, T)), kb_get(kb, tid)), kb_idx(kb, lo)));
	if (!reg)
		kb_if(kb, kb_bin(kb, KO_LT, kb_get(kb, var), kb_idx(kb, hi)));
	for (int i = 0; cs && i < cs->n; i++) {
		const RowCache *c = &cs->c[i];
		if (!c->on)
			continue;
		if (reg) {
			if (!(c->loops >> at & 1))
				continue;
			kb_set(kb, c->xv, kb_load(kb, c->sh, kb_get(kb, q)));
			if (c->reuse_at == at) {
				val = c->reuse_val;
				kb_set(kb, c->xv, val);
				kb_store(kb, c->sh, kb_get(kb, q), kb_get(kb, c->xv));
			}
			continue;
		}
		if (c->first == at && (hi - lo + T - 1) / T > MAX_UNROLLED_COPY)
			kb_store(kb, c->sh, kb_get(kb, var), kb_load(kb, c->buf, c->idx));
		if (c->reuse_at == at)
			kb_store(kb, c->sh, kb_get(kb, var), c->reuse_val);
	}
	kb_splice(kb, body);
	if (reg) {
		unsigned char *seen = calloc((size_t)kb->k->nnode + 1, 1);
		if (!seen)
			return -1;
		relocal_expr(kb->k, val, cs, seen, 0);
		relocal(kb->k, body, cs, seen, 0);
		free(seen);
	} else {
		kb_end(kb);
	}
	kb_end(kb);
	return 0;
}

/* Emit the row body rs[0..n) for a block of T threads (see the comment at
 * the top of the file).  0, or -1 when out of memory. */
static int
emit_rows(KB *kb, const RowStmt *rs, int n, int tid, int64_t T, int logT,
          int drop_barrier, int64_t W, const Caches *cs)
{
	KKernel *k = kb->k;
	int shbuf[DT_COUNT_];

	for (int d = 0; d < DT_COUNT_; d++)
		shbuf[d] = -1;
	for (int i = 0; i < n; i++) {
		KRef s = rs[i].s;
		switch (rs[i].kind) {
		case R_SET:
			k->node[s].next = 0;
			kb_splice(kb, s);
			break;
		case R_STORE:
			k->node[s].next = 0;
			kb_if(kb, kb_bin(kb, KO_EQ, kb_get(kb, tid), kb_idx(kb, 0)));
			kb_splice(kb, s);
			kb_end(kb);
			break;
		case R_PAR:
			unrolled_copies(kb, cs, i, k->node[s].var, rs[i].lo, rs[i].hi, tid, T);
			if (strided(kb, k->node[s].var, rs[i].lo, rs[i].hi, tid, T,
			            k->node[s].body, cs, i) < 0)
				return -1;
			break;
		case R_RED: {
			/* the init SET is the statement before the loop */
			KRef init = 0;
			int acc = rs[i].acc, dt = k->var[acc].dtype, op = rs[i].op, j;
			for (KRef t = 1; t < k->nnode; t++)
				if (k->node[t].kind == KS_SET && k->node[t].next == s &&
				    k->node[t].var == acc)
					init = t;
			k->node[init].next = 0;
			unrolled_copies(kb, cs, i, k->node[s].var, rs[i].lo, rs[i].hi, tid, T);
			kb_splice(kb, init);
			if (strided(kb, k->node[s].var, rs[i].lo, rs[i].hi, tid, T,
			            k->node[s].body, cs, i) < 0)
				return -1;
			if (W > 1 && T % W == 0) {
				/* each subgroup reduces its lanes in lockstep (no shared
				 * memory, no barrier); lane 0 of each puts the subgroup's
				 * value in shared memory and, after one barrier, every
				 * thread folds the T/W values */
				int w;
				kb_sgred(kb, acc, op, kb_get(kb, acc), W);
				if (T == W)
					break;
				if (shbuf[dt] < 0)
					shbuf[dt] = kb_buf(kb, dt, T / W, -1, KS_SHARED, KA_RW);
				kb_if(kb, kb_bin(kb, KO_EQ, kb_bin(kb, KO_MOD, kb_get(kb, tid),
				      kb_idx(kb, W)), kb_idx(kb, 0)));
				kb_store(kb, shbuf[dt], kb_bin(kb, KO_DIV, kb_get(kb, tid),
				         kb_idx(kb, W)), kb_get(kb, acc));
				kb_end(kb);
				if (!drop_barrier)
					kb_barrier(kb);
				kb_set(kb, acc, kb_load(kb, shbuf[dt], kb_idx(kb, 0)));
				w = kb_for(kb, "w", kb_idx(kb, 1), kb_idx(kb, T / W), 0);
				kb_set(kb, acc, kb_bin(kb, op, kb_get(kb, acc),
				       kb_load(kb, shbuf[dt], kb_get(kb, w))));
				kb_end(kb);
				kb_barrier(kb);   /* the buffer is free for the next one */
				break;
			}
			if (shbuf[dt] < 0)
				shbuf[dt] = kb_buf(kb, dt, T, -1, KS_SHARED, KA_RW);
			kb_store(kb, shbuf[dt], kb_get(kb, tid), kb_get(kb, acc));
			kb_barrier(kb);
			j = kb_for(kb, "j", kb_idx(kb, 0), kb_idx(kb, logT), 0);
			{
				KRef h = kb_bin(kb, KO_SHR, kb_idx(kb, T / 2), kb_get(kb, j));
				kb_if(kb, kb_bin(kb, KO_LT, kb_get(kb, tid), h));
				kb_store(kb, shbuf[dt], kb_get(kb, tid), kb_bin(kb, op,
				         kb_load(kb, shbuf[dt], kb_get(kb, tid)),
				         kb_load(kb, shbuf[dt], kb_bin(kb, KO_ADD, kb_get(kb, tid), h))));
				kb_end(kb);
				if (!drop_barrier)
					kb_barrier(kb);
			}
			kb_end(kb);
			kb_set(kb, acc, kb_load(kb, shbuf[dt], kb_idx(kb, 0)));
			kb_barrier(kb);
			break;
		}
		}
	}
	return 0;
}

/* ---- vector lanes for element-wise maps ---------------------------------- *
 *
 * A thread of a grid reads and writes one element per iteration: 4 bytes a
 * load, and a GPU needs more bytes in flight than its threads then have
 * (H200: a copy kernel so made reaches about 70% of the device's copy).
 * With vec(V) each thread takes V consecutive elements of the innermost
 * loop: one 16-byte copy of each contiguous input into a private array,
 * the body V times (a serial loop) reading the array, its results into
 * private arrays, and one 16-byte copy of each out.  Only where every
 * global access that varies with the innermost loop's variable is
 * contiguous in it (coefficient 1), 4-byte, aligned to V elements at the
 * vector's start, every load of it unguarded from a buffer the kernel only
 * reads, every store at the body's top level to a buffer stored once and
 * never read; accesses that do not vary with it (a bias, a scalar) stay
 * as they are. */

#define VEC_LANES 4
#define MAX_VGROUP 8

typedef struct VecPlan {
	int v;                        /* the innermost loop's variable */
	int nin, nout;
	int inbuf[MAX_VGROUP];        /* contiguous inputs */
	KRef inidx[MAX_VGROUP];       /* a load's index (at lane 0) */
	KRef inload[MAX_VGROUP * 8];  /* every such load, and its group */
	int ingroup[MAX_VGROUP * 8], nload;
	KRef out[MAX_VGROUP];         /* the stores */
	const unsigned char *known;   /* variables that are multiples of V */
	int bad;
} VecPlan;

/* A lane's dtype: 4 bytes (a 16-byte copy of the lanes).  (2-byte lanes,
 * 8-byte copies of f16/bf16, made the H200's bf16 transposes twice as fast
 * but the vulkan renderer has no type for an f16 lane buffer: not yet) */
static int
vec_size_ok(int dt)
{
	return dtype_size(dt) == 4;
}

/* nested: e is evaluated under an if or a loop of the body, so its loads
 * may not happen at all; a load there that varies with the lanes cannot
 * become an unconditional copy. */
static void
vec_expr(const KKernel *k, VecPlan *vp, KRef e, unsigned char *seen, int depth,
         int nested)
{
	const KNode *n;
	int ok = 1, g;
	int64_t c;

	if (e <= 0 || vp->bad || seen[e])
		return;
	if (depth > 200) {
		vp->bad = 1;
		return;
	}
	seen[e] = 1;
	n = &k->node[e];
	if (n->kind == KE_LOAD && k->buf[n->buf].space == KS_GLOBAL) {
		c = coef(k, n->a, vp->v, &ok);
		if (!ok || (c != 0 && c != 1)) {
			vp->bad = 1;
			return;
		}
		if (c == 1) {
			if (nested || n->b || n->lanes != 1 ||
			    n->dtype != dtype_expr(k->buf[n->buf].dtype) ||
			    !vec_size_ok(k->buf[n->buf].dtype) ||
			    k->buf[n->buf].access != KA_READ ||
			    !multiple_of_in(k, n->a, VEC_LANES, vp->v, vp->known, 0) ||
			    vp->nload == MAX_VGROUP * 8) {
				vp->bad = 1;
				return;
			}
			for (g = 0; g < vp->nin; g++)
				if (vp->inbuf[g] == n->buf && same_expr(k, vp->inidx[g], -1, n->a, -1, 0))
					break;
			if (g == vp->nin) {
				if (vp->nin == MAX_VGROUP) {
					vp->bad = 1;
					return;
				}
				vp->inbuf[g] = n->buf;
				vp->inidx[g] = n->a;
				vp->nin++;
			}
			vp->inload[vp->nload] = e;
			vp->ingroup[vp->nload++] = g;
			return;   /* its index is not read as a value */
		}
	}
	vec_expr(k, vp, n->a, seen, depth + 1, nested);
	vec_expr(k, vp, n->b, seen, depth + 1, nested);
	vec_expr(k, vp, n->c, seen, depth + 1, nested);
}

static void vec_nested(const KKernel *k, VecPlan *vp, KRef s, unsigned char *seen,
                       int depth);

/* A statement other than a top-level store: no stores in it, no GPU
 * statements. */
static void
vec_stmt(const KKernel *k, VecPlan *vp, KRef s, unsigned char *seen, int depth)
{
	const KNode *n = &k->node[s];

	if (depth > 64 || n->kind == KS_STORE ||
	    (n->kind != KS_SET && n->kind != KS_IF && n->kind != KS_FOR)) {
		vp->bad = 1;
		return;
	}
	vec_expr(k, vp, n->a, seen, 0, depth > 0);
	if (n->kind == KS_FOR)
		vec_expr(k, vp, n->b, seen, 0, depth > 0);
	vec_nested(k, vp, n->body, seen, depth + 1);
	if (n->kind == KS_IF)
		vec_nested(k, vp, n->orelse, seen, depth + 1);
}

static void
vec_nested(const KKernel *k, VecPlan *vp, KRef s, unsigned char *seen, int depth)
{
	for (; s && !vp->bad; s = k->node[s].next)
		vec_stmt(k, vp, s, seen, depth);
}

/* Whether body (the innermost loop's, variable v) can run VEC_LANES
 * lanes a thread; the plan in *vp. */
static int
vec_plan(const KKernel *k, KRef body, int v, const unsigned char *known, VecPlan *vp)
{
	unsigned char *seen = calloc((size_t)k->nnode + 1, 1);

	memset(vp, 0, sizeof *vp);
	vp->v = v;
	vp->known = known;
	if (!seen)
		return 0;
	for (KRef s = body; s && !vp->bad; s = k->node[s].next) {
		const KNode *n = &k->node[s];
		int ok = 1;
		if (n->kind != KS_STORE) {
			vec_stmt(k, vp, s, seen, 0);
			continue;
		}
		if (k->buf[n->buf].space != KS_GLOBAL || k->buf[n->buf].access != KA_WRITE ||
		    kb_dtype(k, n->b) != dtype_expr(k->buf[n->buf].dtype) ||
		    !vec_size_ok(k->buf[n->buf].dtype) ||
		    coef(k, n->a, v, &ok) != 1 || !ok ||
		    !multiple_of_in(k, n->a, VEC_LANES, v, known, 0) || vp->nout == MAX_VGROUP) {
			vp->bad = 1;
			break;
		}
		for (int o = 0; o < vp->nout; o++)
			if (k->node[vp->out[o]].buf == n->buf)
				vp->bad = 1;
		vp->out[vp->nout++] = s;
		vec_expr(k, vp, n->b, seen, 0, 0);
	}
	free(seen);
	return !vp->bad && vp->nout > 0;
}

/* Whether the grid nest of innermost body can take vector lanes (plan in
 * *vp): its innermost loop's extent and start multiples of the lanes, no
 * vec step decided for the kernel before (a CPU lowering's). */
static int
vec_ok(S *st, KKernel *k, KRef body, int nl, const int64_t *ext, const int64_t *lo,
       const int *vars, VecPlan *vp)
{
	unsigned char *known;
	int ok;

	if (!nl || ext[nl - 1] % VEC_LANES || lo[nl - 1] % VEC_LANES)
		return 0;
	for (int i = 0; i < k->nstep; i++)
		if (k->step[i].kind == KST_VEC && !st->vec_here)
			return 0;
	if (!(known = calloc((size_t)k->nvar + 1, 1)))
		return 0;
	/* outer loops of one iteration hold their start */
	for (int d = 0; d < nl - 1; d++)
		known[vars[d]] = ext[d] == 1 && lo[d] % VEC_LANES == 0;
	ok = vec_plan(k, body, vars[nl - 1], known, vp);
	free(known);
	return ok;
}

/* The loop variables vars[0..nl) of the element at linear index e. */
static void
set_vars(KB *kb, KRef e, int nl, const int64_t *ext, const int64_t *lo, const int *vars)
{
	for (int64_t d = nl - 1, stride = 1; d >= 0; d--) {
		KRef q = e;
		if (stride > 1)
			q = kb_bin(kb, KO_DIV, q, kb_idx(kb, stride));
		if (d > 0)
			q = kb_bin(kb, KO_MOD, q, kb_idx(kb, ext[d]));
		kb_set(kb, vars[d], kb_bin(kb, KO_ADD, q, kb_idx(kb, lo[d])));
		stride *= ext[d];
	}
}

/* The body of a grid nest run V lanes a thread (see "vector lanes"): lin
 * is the vector's index. */
static void
emit_vec(KB *kb, const VecPlan *vp, KRef body, int lin, int64_t V, int nl,
         const int64_t *ext, const int64_t *lo, const int *vars)
{
	KKernel *k = kb->k;
	int xl[MAX_VGROUP], xv[MAX_VGROUP], yl[MAX_VGROUP], yv[MAX_VGROUP], ob[MAX_VGROUP];
	KRef oi[MAX_VGROUP], first;
	int j;

	first = kb_bin(kb, KO_MUL, kb_get(kb, lin), kb_idx(kb, V));
	set_vars(kb, first, nl, ext, lo, vars);
	/* a copy (the body one store of one load, the same element type: a
	 * transpose, a split) is one vector copy, its bits unconverted */
	if (vp->nin == 1 && vp->nout == 1 && vp->nload == 1 && body == vp->out[0] &&
	    !k->node[body].next && k->node[body].b == vp->inload[0] &&
	    k->buf[k->node[body].buf].dtype == k->buf[vp->inbuf[0]].dtype) {
		kb_vcopy(kb, k->node[body].buf, k->node[body].a, vp->inbuf[0], vp->inidx[0], (int)V);
		return;
	}
	for (int g = 0; g < vp->nin; g++) {
		int dt = k->buf[vp->inbuf[g]].dtype;
		xl[g] = kb_buf(kb, dt, V, -1, KS_LOCAL, KA_RW);
		xv[g] = kb_var(kb, dtype_expr(dt), "xv");
		kb_vcopy(kb, xl[g], kb_idx(kb, 0), vp->inbuf[g], vp->inidx[g], (int)V);
	}
	for (int o = 0; o < vp->nout; o++) {
		KNode *st = &kb->k->node[vp->out[o]];
		int dt = kb->k->buf[st->buf].dtype;
		ob[o] = st->buf;
		oi[o] = st->a;
		yl[o] = kb_buf(kb, dt, V, -1, KS_LOCAL, KA_RW);
		yv[o] = kb_var(kb, dtype_expr(dt), "yv");
	}
	/* the loads become the lanes' values, the stores set them */
	k = kb->k;
	for (int i = 0; i < vp->nload; i++) {
		KNode *n = &k->node[vp->inload[i]];
		n->kind = KE_VAR;
		n->var = xv[vp->ingroup[i]];
		n->a = n->b = n->c = 0;
		n->buf = 0;
	}
	for (int o = 0; o < vp->nout; o++) {
		KNode *n = &k->node[vp->out[o]];
		n->kind = KS_SET;
		n->var = yv[o];
		n->a = n->b;
		n->b = 0;
		n->buf = 0;
	}
	j = kb_for(kb, "j", kb_idx(kb, 0), kb_idx(kb, V), KF_UNROLL);
	set_vars(kb, kb_bin(kb, KO_ADD, kb_bin(kb, KO_MUL, kb_get(kb, lin), kb_idx(kb, V)),
	                    kb_get(kb, j)), nl, ext, lo, vars);
	for (int g = 0; g < vp->nin; g++)
		kb_set(kb, xv[g], kb_load(kb, xl[g], kb_get(kb, j)));
	kb_splice(kb, body);
	for (int o = 0; o < vp->nout; o++)
		kb_store(kb, yl[o], kb_get(kb, j), kb_get(kb, yv[o]));
	kb_end(kb);
	set_vars(kb, kb_bin(kb, KO_MUL, kb_get(kb, lin), kb_idx(kb, V)), nl, ext, lo, vars);
	for (int o = 0; o < vp->nout; o++)
		kb_vcopy(kb, ob[o], oi[o], yl[o], kb_idx(kb, 0), (int)V);
}

/* ---- the pass ---------------------------------------------------------- */

/* Whether e is a size made of the kernel's dim parameters and integer
 * constants under + - * / % (a sampled program's loop bound). */
static int
dim_expr(const KKernel *k, KRef e)
{
	const KNode *n = e > 0 && e < k->nnode ? &k->node[e] : NULL;

	if (!n || n->lanes != 1)
		return 0;
	if (kb_is_const_i(k, e, NULL))
		return 1;
	if (n->kind == KE_VAR)
		return n->var < k->ndim;
	return n->kind == KE_BIN && (n->op == KO_ADD || n->op == KO_SUB || n->op == KO_MUL ||
	                             n->op == KO_DIV || n->op == KO_MOD) &&
	       dim_expr(k, n->a) && dim_expr(k, n->b);
}

/* A copy of dim expression e (dim_expr) at the builder's end, as i64. */
static KRef
dim_copy(KB *kb, KRef e)
{
	KNode n = kb->k->node[e];   /* by value: the pool grows below */
	int64_t v;

	if (kb_is_const_i(kb->k, e, &v))
		return kb_idx(kb, v);
	if (n.kind == KE_VAR)
		return kb_get(kb, n.var);
	return kb_bin(kb, n.op, dim_copy(kb, n.a), dim_copy(kb, n.b));
}

/* Extent d of a nest map_dims collected: hi[d] - lo[d], built anew. */
static KRef
dim_ext(KB *kb, const int64_t *lo, const int64_t *ext, const KRef *hi, int d)
{
	KRef e;

	if (!hi[d])
		return kb_idx(kb, ext[d]);
	e = dim_copy(kb, hi[d]);
	return lo[d] ? kb_bin(kb, KO_SUB, e, kb_idx(kb, lo[d])) : e;
}

/* The product of extents d0 .. nl-1 (1 when none). */
static KRef
dim_prod(KB *kb, const int64_t *lo, const int64_t *ext, const KRef *hi, int d0, int nl)
{
	KRef p = 0;

	for (int d = d0; d < nl; d++)
		p = p ? kb_bin(kb, KO_MUL, p, dim_ext(kb, lo, ext, hi, d)) :
		        dim_ext(kb, lo, ext, hi, d);
	return p ? p : kb_idx(kb, 1);
}

/*
 * A nest of parallel loops some of whose extents are sizes known at run
 * time (dim_expr: a sampled program's, passes/dynfit.c): a thread per
 * iteration, o->threads a block, as many blocks as the sizes take, which
 * the launch evaluates (the grid's extent is an expression of the dims).
 * No rows or lanes: each thread runs its iteration's body whole.  1 when
 * mapped, 0 when not such a nest.
 */
static int
map_dims(S *st, KB *kb, KRef s)
{
	KKernel *k = st->k;
	int64_t lo[BURN_MAX_RANK + 8], ext[BURN_MAX_RANK + 8], T = st->o->threads;
	KRef hi[BURN_MAX_RANK + 8], body = s, total;
	int vars[BURN_MAX_RANK + 8], nl = 0, sym = 0, blk, tid, lin;

	while (nl < BURN_MAX_RANK + 8 && body) {
		const KNode *n = &k->node[body];
		if (n->kind != KS_FOR || n->flags != KF_PARALLEL || !kb_is_const_i(k, n->a, &lo[nl]))
			break;
		hi[nl] = 0;
		if (kb_is_const_i(k, n->b, &ext[nl]))
			ext[nl] -= lo[nl];
		else if (dim_expr(k, n->b))
			hi[nl] = n->b, sym = 1;
		else
			break;
		vars[nl++] = n->var;
		body = n->body;
		if (!body || k->node[body].next)
			break;
	}
	if (!nl || !sym || !privatisable(st, s))
		return 0;
	/* body: the innermost collected loop's */
	body = s;
	for (int d = 0; d < nl; d++)
		body = k->node[body].body;
	total = dim_prod(kb, lo, ext, hi, 0, nl);
	blk = kb_for(kb, "blk", kb_idx(kb, 0), kb_bin(kb, KO_DIV, kb_bin(kb, KO_ADD, total,
	             kb_idx(kb, T - 1)), kb_idx(kb, T)), KF_BLOCK_X);
	tid = kb_for(kb, "tid", kb_idx(kb, 0), kb_idx(kb, T), KF_THREAD_X);
	lin = kb_var(kb, DT_I64, "lin");
	kb_set(kb, lin, kb_bin(kb, KO_ADD, kb_bin(kb, KO_MUL, kb_get(kb, blk), kb_idx(kb, T)),
	                       kb_get(kb, tid)));
	kb_if(kb, kb_bin(kb, KO_LT, kb_get(kb, lin), dim_prod(kb, lo, ext, hi, 0, nl)));
	for (int d = nl - 1; d >= 0; d--) {
		KRef q = kb_get(kb, lin);
		if (d < nl - 1)
			q = kb_bin(kb, KO_DIV, q, dim_prod(kb, lo, ext, hi, d + 1, nl));
		if (d > 0)
			q = kb_bin(kb, KO_MOD, q, dim_ext(kb, lo, ext, hi, d));
		kb_set(kb, vars[d], lo[d] ? kb_bin(kb, KO_ADD, q, kb_idx(kb, lo[d])) : q);
	}
	kb_splice(kb, body);
	kb_end(kb);
	kb_end(kb);
	kb_end(kb);
	snprintf(st->desc, sizeof st->desc, "map blocks=(sizes at run time) threads=%lld "
	         "over %d loop%s", (long long)T, nl, nl > 1 ? "s" : "");
	return 1;
}

/* Rewrite top-level statement s (cut from its chain) of st->k as a grid,
 * appending the result at the builder; 0 if s stays as it is. */
static int
map_nest(S *st, KB *kb, KRef s, int at)
{
	KKernel *k = st->k;
	const GpuSchedOpts *o = st->o;
	int64_t lo[BURN_MAX_RANK + 8], ext[BURN_MAX_RANK + 8], total = 1;
	int64_t T, B, iters, maxr = 0;
	int vars[BURN_MAX_RANK + 8], nl = 0, blk, tid, it, lin, nrow, canrow, logT = 0, lane;
	int64_t W = o->row_lanes && o->row_lanes <= o->subgroup ? o->row_lanes : o->subgroup, RW;
	int sgrow = 0;
	int guard;
	int64_t maxT, V = 1;
	VecPlan vp;
	KStep want;
	RowStmt rs[64];
	KRef body = s, idx;

	if (st->o->dyn_grids && map_dims(st, kb, s))
		return 1;
	while (nl < BURN_MAX_RANK + 8 && par_loop(k, body, &lo[nl], &ext[nl])) {
		if (ext[nl] && total > ((int64_t)1 << 40) / ext[nl])
			return 0;
		vars[nl] = k->node[body].var;
		total *= ext[nl];
		nl++;
		body = k->node[body].body;
		if (!body || k->node[body].next || !par_loop(k, body, &lo[nl], &ext[nl]))
			break;
	}
	if (!nl || total == 0 || !privatisable(st, s))
		return 0;
	nrow = classify(k, body, rs, (int)(sizeof rs / sizeof rs[0]), &maxr);
	canrow = nrow;
	if (maxr < o->min_row)
		nrow = 0;   /* short rows: a thread per row beats a block per row */
	maxT = o->max_threads > o->threads ? o->max_threads : o->threads;
	if (!nrow && vec_ok(st, k, body, nl, ext, lo, vars, &vp)) {
		KStep vs = sched_decide(st->p, k, kstep_make(KST_VEC, 1, VEC_LANES, 0, 0));
		if (vs.arg[0] != 1 && vs.arg[0] != VEC_LANES) {
			burn_fail(st->c, BURN_ERR_INVALID, "--schedule: kernel %s: vec(%d): a "
			          "grid takes vec(1) or vec(%d)", k->name, vs.arg[0], VEC_LANES);
			return -1;
		}
		V = vs.arg[0];
		st->vec_here = 1;
	}
	total /= V;
	if (nrow) {
		/* row mode: an iteration per block, its threads split the rows;
		 * beyond 16 elements a thread, more threads (up to the block's
		 * most), and a block per row up to 32 times the grid's usual
		 * size (a block looping over rows waits at each row's barriers):
		 * H200, layernorm 8192^2: 53% -> 75% of copy, docs/BENCHMARKS.md */
		int64_t per = 16;
		for (T = 32; T < maxr && T < o->threads; T *= 2)
			;
		if (o->row_regs > per) {
			/* a row kept in registers: up to row_regs elements a
			 * thread (H200, layernorm 8192^2 inreg: 32 elements over
			 * 256 threads 0.140 ms, 16 over 512 0.161 ms) */
			Caches pre;
			if (scan_rows(k, rs, nrow, &pre) < 0)
				return burn_fail(st->c, BURN_ERR_NOMEM, "schedule: out of memory"), -1;
			if (pre.any)
				per = o->row_regs;
		}
		while (maxr / T > per && T < maxT)
			T *= 2;
		B = total < o->max_blocks * 32 ? total : o->max_blocks * 32;
		/* short rows (at most 16 elements a lane): a subgroup
		 * per row, o->threads / W rows a block, reductions by lane
		 * exchange only (H200, softmax over 49152 rows of 512 bf16:
		 * a block of 256 per row 0.210 ms, of 64 0.125) */
		if (o->row_lanes && W > 1 && maxr <= W * 16 && maxr > W / 2 && o->threads % W == 0 &&
		    o->threads > W) {
			sgrow = 1;
			T = o->threads;
			B = (total + T / W - 1) / (T / W);
			if (B > o->max_blocks * 32)
				B = o->max_blocks * 32;
		}
	} else {
		/* up to 32 times the grid's usual size too: a thread then loops
		 * a few times, not hundreds (H200, GELU 2^28 with vec(4): 2048
		 * blocks 92% of the copy, 65536 blocks 99%) */
		for (T = 32; T < total && T < o->threads; T *= 2)
			;
		B = (total + T - 1) / T;
		if (B > o->max_blocks * 32)
			B = o->max_blocks * 32;
	}
	/* the schedule step: grid(at,B,T) or rows(at,B,T), the default above
	 * or what --schedule asks for */
	{
		KStep d = kstep_make(nrow ? KST_ROWS : KST_GRID, 3, at, (int)B, (int)T);
		if (sgrow) {   /* the subgroup rows above */
			d.narg = 4;
			d.arg[3] = (int)W;
		}
		want = sched_decide(st->p, k, d);
	}
	if (want.arg[1] < 1 || want.arg[2] < 1 || (want.arg[2] & (want.arg[2] - 1)) ||
	    want.arg[2] > maxT || (want.kind == KST_ROWS && !canrow)) {
		burn_fail(st->c, BURN_ERR_INVALID, "--schedule: kernel %s: %s(%d,%d,%d): %s",
		          k->name, kstep_name(want.kind), want.arg[0], want.arg[1],
		          want.arg[2], want.kind == KST_ROWS && !canrow ?
		          "the statement is not a row reduction" : "blocks must be >= 1 "
		          "and threads a power of two within the target's block");
		return -1;
	}
	B = want.arg[1];
	T = want.arg[2];
	nrow = want.kind == KST_ROWS ? canrow : 0;
	/* rows(at,B,T,RW): RW threads a row, T/RW rows a block (RW a power
	 * of two up to the subgroup: their reductions need no barrier) */
	RW = nrow && want.narg > 3 ? want.arg[3] : T;
	if (RW < 1 || RW > T || (RW & (RW - 1)) ||
	    (RW < T && (o->subgroup <= 1 || RW > o->subgroup))) {
		burn_fail(st->c, BURN_ERR_INVALID, "--schedule: kernel %s: rows(%d,%d,%d,%d): "
		          "threads a row must be a power of two, the block's threads or at "
		          "most the target's subgroup (%d)", k->name, want.arg[0], want.arg[1],
		          want.arg[2], (int)RW, o->subgroup);
		return -1;
	}
	if (nrow && V > 1) {
		burn_fail(st->c, BURN_ERR_INVALID, "--schedule: kernel %s: rows with vec(%d): "
		          "rows take no lanes", k->name, (int)V);
		return -1;
	}
	for (logT = 0; ((int64_t)1 << logT) < RW; logT++)
		;
	iters = nrow ? (total + B * (T / RW) - 1) / (B * (T / RW)) : (total + B * T - 1) / (B * T);
	blk = kb_for(kb, "blk", kb_idx(kb, 0), kb_idx(kb, B), KF_BLOCK_X);
	tid = kb_for(kb, "tid", kb_idx(kb, 0), kb_idx(kb, T), KF_THREAD_X);
	it = iters > 1 ? kb_for(kb, "it", kb_idx(kb, 0), kb_idx(kb, iters), 0) : -1;
	lin = kb_var(kb, DT_I64, "lin");
	idx = kb_get(kb, blk);
	if (it >= 0)
		idx = kb_bin(kb, KO_ADD, idx, kb_bin(kb, KO_MUL, kb_get(kb, it), kb_idx(kb, B)));
	if (!nrow)
		idx = kb_bin(kb, KO_ADD, kb_bin(kb, KO_MUL, idx, kb_idx(kb, T)),
		             kb_get(kb, tid));
	else if (RW < T)   /* the block's row tid / RW; the lane tid % RW */
		idx = kb_bin(kb, KO_ADD, kb_bin(kb, KO_MUL, idx, kb_idx(kb, T / RW)),
		             kb_bin(kb, KO_DIV, kb_get(kb, tid), kb_idx(kb, RW)));
	kb_set(kb, lin, idx);
	lane = tid;
	if (nrow && RW < T) {
		lane = kb_var(kb, DT_I64, "lane");
		kb_set(kb, lane, kb_bin(kb, KO_MOD, kb_get(kb, tid), kb_idx(kb, RW)));
	}
	/* in row mode the condition is the same for all threads of a block,
	 * so the barriers under it are not divergent; none where the grid
	 * covers the iterations exactly */
	guard = (nrow ? B * (T / RW) * iters : B * T * iters) != total;
	if (guard)
		kb_if(kb, kb_bin(kb, KO_LT, kb_get(kb, lin), kb_idx(kb, total)));
	if (V == 1)
		set_vars(kb, kb_get(kb, lin), nl, ext, lo, vars);
	if (nrow) {
		Caches cs;
		/* several rows a block: no shared row caches (registers only) */
		if (plan_onchip(st, kb, rs, nrow, RW < T ? 0 : o->row_cache, o->row_regs, RW,
		                &cs) < 0 ||
		    emit_rows(kb, rs, nrow, lane, RW, logT, o->drop_barrier, o->subgroup, &cs) < 0)
			return burn_fail(st->c, BURN_ERR_NOMEM, "schedule: out of memory"), -1;
	}
	else if (V > 1)
		emit_vec(kb, &vp, body, lin, V, nl, ext, lo, vars);
	else
		kb_splice(kb, body);
	if (guard)
		kb_end(kb);
	if (it >= 0)
		kb_end(kb);
	kb_end(kb);
	kb_end(kb);
	snprintf(st->desc, sizeof st->desc, "%s blocks=%lld threads=%lld%s iters=%lld "
	         "over %d loop%s", nrow ? "rows" : "map", (long long)B, (long long)T,
	         nrow && RW < T ? " (a subgroup a row)" : "", (long long)iters, nl, nl > 1 ? "s" : "");
	st->nreduced += nrow > 0;
	return 1;
}

/* The loop over the items of a peeled kernel (passes/dynamic.c: its body
 * is that one parallel loop, from 0 to the dim parameter), or 0. */
static KRef
peeled_items(const KKernel *k)
{
	const KNode *n = k->body ? &k->node[k->body] : NULL;

	if (!k->ndim || !n || n->next || n->kind != KS_FOR || !(n->flags & KF_PARALLEL) ||
	    !n->b || k->node[n->b].kind != KE_VAR || k->node[n->b].var >= k->ndim)
		return 0;
	return k->body;
}

int
pass_schedule_gpu(Ctx *c, KProgram *p, const GpuSchedOpts *o)
{
	S st;

	memset(&st, 0, sizeof st);
	st.c = c;
	st.p = p;
	st.o = o;
	for (int ki = 0; ki < p->nkernel; ki++) {
		KKernel *k = p->kernel[ki];
		KRef s, *tops, items = peeled_items(k);
		int ntop = 0, mapped = 0, rc = BURN_OK, apart = 1;
		KB kb;

		st.k = k;
		st.vec_here = 0;
		st.nreduced = 0;
		for (s = items ? k->node[items].body : k->body; s; s = k->node[s].next)
			ntop++;
		if (!ntop || kir_stores_packed(k))   /* packed: one thread (kir.h) */
			continue;
		if (!(tops = malloc((size_t)ntop * sizeof *tops)))
			return burn_fail(c, BURN_ERR_NOMEM, "schedule: out of memory");
		ntop = 0;
		for (s = items ? k->node[items].body : k->body; s; s = k->node[s].next)
			tops[ntop++] = s;
		st.tops = tops;
		st.ntop = ntop;
		/* the item loop distributes over its statements only where
		 * they pass nothing to each other in variables (a sampled
		 * program's row loop to the dim: acc = 0, its sum, its use;
		 * a global pool's accumulator) */
		for (int t = 0; items && t < ntop && apart; t++)
			apart = privatisable(&st, tops[t]);
		if (items && !apart && o->dyn_grids) {
			/* the item loop a nest of its own: map_dims gives it a
			 * grid sized at launch, a thread an item */
			items = 0;
			ntop = 1;
			tops[0] = k->body;
			st.ntop = 1;
		} else if (items && !apart) {
			/* launches that take only the items' count (dyn_items):
			 * one loop of the items, each a block running the
			 * statements in order as one thread */
			const KNode *it = &k->node[items];
			int var = it->var;
			kb_reopen(&kb, p, k);
			kb_for(&kb, "item", it->a, it->b, KF_BLOCK_Y);
			k->node[k->nnode - 1].var = var;
			for (int t = 0; t < ntop; t++) {
				k->node[tops[t]].next = 0;
				kb_splice(&kb, tops[t]);
			}
			while (kb.depth > 0)
				kb_end(&kb);
			free(tops);
			st.tops = NULL;
			st.ntop = 0;
			k->grid = arena_printf(p->arena, "items one thread each (their "
			                       "statements pass values in variables)");
			TRY(kir_verify(c, k));
			continue;
		}
		kb_reopen(&kb, p, k);
		for (int t = 0; t < ntop; t++) {
			int r, d = kb.depth;
			k->node[tops[t]].next = 0;
			if (items) {
				/* each statement its own grid, the items its y: the
				 * items are independent, so the loop distributes */
				const KNode *it = &k->node[items];
				int var = it->var;
				kb_for(&kb, "item", it->a, it->b, KF_BLOCK_Y);
				k->node[k->nnode - 1].var = var;
			}
			if ((r = map_nest(&st, &kb, tops[t], t)) > 0)
				mapped++;
			else
				kb_splice(&kb, tops[t]);
			if (r < 0)
				rc = BURN_ERR_INVALID;
			while (kb.depth > d)
				kb_end(&kb);
		}
		free(tops);
		st.tops = NULL;
		st.ntop = 0;
		if (rc) {
			while (kb.depth > 0)
				kb_end(&kb);
			return rc;
		}
		if (mapped)
			k->grid = arena_printf(p->arena, "%s%s%s", st.desc,
			                        mapped > 1 ? " (last of several nests)" : "",
			                        st.nreduced ? ", block reductions" : "");
		TRY(kir_verify(c, k));
	}
	return BURN_OK;
}

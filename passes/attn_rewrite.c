/*
 * attn_rewrite.c - softmax attention written out in ONNX primitives, as
 * PyTorch exports a transformer's self-attention, becomes one Attention
 * node (opset 23's op), on targets whose Attention lowering keeps the
 * scores on chip (ops_attention.c, attention_tiles_fit):
 *
 *   q4 = Reshape(q, [B,S,H,D])   qh = Transpose(q4, perm 0,2,1,3)
 *   k4 = Reshape(k, [B,T,H,D])   kt = Transpose(k4, perm 0,2,3,1)
 *   v4 = Reshape(v, [B,T,H,D])   vh = Transpose(v4, perm 0,2,1,3)
 *   s = MatMul(qh, kt) [* c | / c]     c a scalar constant
 *   p = Softmax(s, last axis)
 *   o = MatMul(p, vh)
 *   y = Reshape(Transpose(o, perm 0,2,1,3), [B,S,H*D])
 *
 * becomes y = Attention(q, k, v) with q_num_heads = kv_num_heads = H and
 * scale c (or 1/c; 1 without a factor).  Every value in between must have
 * one use (nothing else reads the scores); the final Reshape node is
 * rewritten in place (its output keeps its index and the node order stays
 * topological), the others are left to pass_dce.  The fused form computes
 * the scores and probabilities in f32 where the primitives round each to
 * the 16-bit type: closer to the exact result, within the type's
 * tolerance (docs/NUMERICS.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "passes.h"

/* The single user of value v among live nodes (nuse counts graph outputs
 * too), or NULL. */
static Node *
only_user(Graph *g, const int *nuse, const int *user, int v)
{
	return v >= 0 && nuse[v] == 1 && user[v] >= 0 ? &g->node[user[v]] : NULL;
}

static Node *
producer(Graph *g, int v, int op)
{
	const Value *x = v >= 0 ? GV(g, v) : NULL;
	Node *p = x && x->producer >= 0 ? &g->node[x->producer] : NULL;

	return p && !p->dead && p->op == op && p->nout == 1 ? p : NULL;
}

static int
perm_is(const Node *t, int a, int b, int c, int d)
{
	const int64_t *p;

	return attr_ints(t, "perm", &p) == 4 && p[0] == a && p[1] == b && p[2] == c &&
	       p[3] == d;
}

/* Transpose(Reshape(x3)) with perm (0,2,a,b), x3 3-D (B, L, H*D) split
 * into (B, L, H, D): x3's value, or -1. */
static int
head_split(Graph *g, const int *nuse, int v, int a, int b, int64_t *H, int64_t *D)
{
	Node *t = producer(g, v, OP_Transpose), *r;
	const Value *x4, *x3;

	if (!t || nuse[v] != 1 || !perm_is(t, 0, 2, a, b) || nuse[t->in[0]] != 1 ||
	    !(r = producer(g, t->in[0], OP_Reshape)))
		return -1;
	x4 = GV(g, r->out[0]);
	x3 = GV(g, r->in[0]);
	if (x4->rank != 4 || x3->rank != 3 || x3->dim[0] != x4->dim[0] ||
	    x3->dim[1] != x4->dim[1] || x3->dim[2] != x4->dim[2] * x4->dim[3])
		return -1;
	*H = x4->dim[2];
	*D = x4->dim[3];
	return r->in[0];
}

/* Try the pattern at Softmax node sm; 1 when rewritten. */
static int
rewrite_at(Graph *g, const Target *tg, const int *nuse, const int *user, Node *sm)
{
	Node *mm2, *mm1, *sc = NULL, *to, *ro;
	const Value *s = NIN(g, sm, 0), *cv;
	int64_t H, D, Hk, Dk, Hv, Dv, axis;
	int q, k, v, sv = sm->in[0], c = -1;
	double scale = 1;
	Attr *at;
	int *in;

	axis = attr_int(sm, "axis", g->opset < 13 ? 1 : -1);
	if (!s || s->rank != 4 || (axis != -1 && axis != 3))
		return 0;
	/* the scale: Mul or Div by a scalar constant */
	if ((sc = producer(g, sv, OP_Mul)) || (sc = producer(g, sv, OP_Div))) {
		const Value *c0 = NIN(g, sc, 0);
		int ci = sc->op == OP_Mul && c0 && c0->data ? 0 : 1;
		cv = NIN(g, sc, ci);
		if (!cv || !cv->data || value_numel(cv) != 1 || nuse[sc->in[1 - ci]] != 1)
			return 0;
		scale = value_get_f(cv, 0);
		if (sc->op == OP_Div)
			scale = 1 / scale;
		c = sc->in[1 - ci];
	} else {
		c = sv;
	}
	if (nuse[sv] != 1 || !isfinite(scale) || scale <= 0 ||
	    !(mm1 = producer(g, c, OP_MatMul)) || mm1->nin != 2)
		return 0;
	if (!(mm2 = only_user(g, nuse, user, sm->out[0])) || mm2->op != OP_MatMul ||
	    mm2->in[0] != sm->out[0] || mm2->nout != 1)
		return 0;
	q = head_split(g, nuse, mm1->in[0], 1, 3, &H, &D);
	k = head_split(g, nuse, mm1->in[1], 3, 1, &Hk, &Dk);
	v = head_split(g, nuse, mm2->in[1], 1, 3, &Hv, &Dv);
	if (q < 0 || k < 0 || v < 0 || Hk != H || Hv != H || Dk != D || Dv != D)
		return 0;
	if (!(to = only_user(g, nuse, user, mm2->out[0])) || to->op != OP_Transpose ||
	    !perm_is(to, 0, 2, 1, 3) || !(ro = only_user(g, nuse, user, to->out[0])) ||
	    ro->op != OP_Reshape || ro->nout != 1)
		return 0;
	{
		const Value *y = GV(g, ro->out[0]), *xq = GV(g, q), *xk = GV(g, k);
		if (y->rank != 3 || y->dim[0] != xq->dim[0] || y->dim[1] != xq->dim[1] ||
		    y->dim[2] != H * D || xq->dtype != y->dtype || xk->dtype != y->dtype ||
		    GV(g, v)->dtype != y->dtype ||
		    !attention_tiles_fit(tg, y->dtype, xq->dim[1], xk->dim[1], D, D))
			return 0;
	}
	if (sm->guard || mm1->guard || mm2->guard || to->guard || ro->guard || (sc && sc->guard))
		return 0;
	/* the final Reshape becomes the Attention */
	in = arena_alloc(&g->arena, 3 * sizeof *in);
	at = arena_alloc(&g->arena, 3 * sizeof *at);
	if (!in || !at)
		return -1;
	in[0] = q; in[1] = k; in[2] = v;
	memset(at, 0, 3 * sizeof *at);
	at[0].name = "q_num_heads"; at[0].type = AT_INT; at[0].i = H;
	at[1].name = "kv_num_heads"; at[1].type = AT_INT; at[1].i = H;
	at[2].name = "scale"; at[2].type = AT_FLOAT; at[2].f = scale;
	ro->op = OP_Attention;
	ro->name = sm->name;   /* messages and kernel names: the softmax's */
	ro->in = in;
	ro->nin = 3;
	ro->attr = at;
	ro->nattr = 3;
	ro->domain = "";
	/* the rest is dead: each value had one use, on this path */
	to->dead = mm2->dead = sm->dead = mm1->dead = 1;
	if (sc)
		sc->dead = 1;
	return 1;
}

int
pass_attn_rewrite(Ctx *c, Graph *g, const Target *tg)
{
	int *nuse, *user, any = 0;

	if (!tg || !tg->mma_tiles)
		return BURN_OK;
	nuse = calloc((size_t)g->nval + 1, sizeof *nuse);
	user = malloc(((size_t)g->nval + 1) * sizeof *user);
	if (!nuse || !user) {
		free(nuse);
		free(user);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	for (int v = 0; v < g->nval; v++)
		user[v] = -1;
	for (int i = 0; i < g->nnode; i++)
		for (int j = 0; !g->node[i].dead && j < g->node[i].nin; j++)
			if (g->node[i].in[j] >= 0) {
				nuse[g->node[i].in[j]]++;
				user[g->node[i].in[j]] = i;
			}
	for (int i = 0; i < g->nout; i++)
		nuse[g->out[i]]++;
	for (int i = 0; i < g->nnode; i++) {
		int r;
		if (g->node[i].dead || g->node[i].op != OP_Softmax || g->node[i].guard)
			continue;
		if ((r = rewrite_at(g, tg, nuse, user, &g->node[i])) < 0) {
			free(nuse);
			free(user);
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		}
		any |= r;
	}
	free(nuse);
	free(user);
	return any ? pass_dce(c, g) : BURN_OK;
}

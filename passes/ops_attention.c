/*
 * ops_attention.c - the transformer ops: Attention (opset 23, 24),
 * RotaryEmbedding (opset 23) and LinearAttention (opset 27, at the end).
 *
 * Attention is lowered to one kernel per query row, after at most two copy
 * kernels:
 *
 *   k_attention (copies)  present_key = past_key ++ K along the sequence,
 *                         present_value likewise, in (B, Hkv, T, D) layout.
 *                         Emitted when the present outputs are wanted or
 *                         there is a past (the row kernel then reads K and
 *                         V from the present tensors; without a past it
 *                         reads the inputs directly).
 *   k_attention (rows)    parallel over (b, h, i):
 *                           s[j] = scale * q.k_j          j < T
 *                           s[j] = softcap * tanh(s[j] / softcap)
 *                           s[j] += bias(b, h, i, j)      mask, causal, padding
 *                           p = softmax(s)                 in place
 *                           y[e] = sum_j p[j] v[j][e]
 *                         s is a scratch value of shape (B, Hq, Sq, T) in
 *                         the compute type, each row owned by one (b, h, i).
 *
 * Q, K and V are either 4-D (B, H, S, D) or 3-D (B, S, H*D); a View gives
 * the strides of the (b, h, s, d) element in both, so there is no transpose
 * kernel.  Grouped-query attention maps query head h to kv head h / (Hq/Hkv).
 *
 * The bias follows the ONNX reference: a bool mask adds 0 or -inf, a float
 * mask is added; a mask shorter than T in its last dim is padded with -inf;
 * is_causal masks j > i + offset, offset being the past length, or
 * nonpad_kv_seqlen[b] - Sq with nonpad_kv_seqlen and no past; and
 * nonpad_kv_seqlen masks j >= nonpad_kv_seqlen[b].  softcap is applied
 * before the bias, so -inf stays -inf.  A row with every key masked comes
 * out NaN, as in the reference.
 *
 * Float math is f64 for f64 inputs and f32 otherwise (f16 loads yield f32).
 * softmax_precision is accepted and ignored: the softmax already runs in
 * f32 or better.
 */
#include <math.h>
#include <string.h>
#include "kb_short.h"

/*
 * Where element (b, h, s, d) of a per-head tensor lives: buffer buf at
 * b*st[0] + h*st[1] + s*st[2] + d*st[3].  4-D tensors are (B, H, S, D);
 * 3-D ones (B, S, H*D).
 */
typedef struct View {
	int buf;
	int64_t off;     /* where (0, 0, 0, 0) is: a part of a Split's input */
	int64_t st[4];
} View;

static void
view_init(View *w, int buf, int rank, int64_t H, int64_t S, int64_t D)
{
	w->buf = buf;
	w->off = 0;
	if (rank == 4) {
		w->st[0] = H * S * D; w->st[1] = S * D; w->st[2] = D;
	} else {
		w->st[0] = S * H * D; w->st[1] = D; w->st[2] = H * D;
	}
	w->st[3] = 1;
}

static KRef
view_at(KB *kb, const View *w, KRef b, KRef h, KRef s, KRef d)
{
	KRef e = add(kb, add(kb, mul(kb, b, I(kb, w->st[0])), mul(kb, h, I(kb, w->st[1]))),
	             add(kb, mul(kb, s, I(kb, w->st[2])), mul(kb, d, I(kb, w->st[3]))));
	return w->off ? add(kb, e, I(kb, w->off)) : e;
}

/*
 * Value v (3-D when a Split's part) bound in kb as w: where
 * the fused lowering skipped the Split that makes it (Lower.sview), the
 * Split's input (B, S, X) at the part's offset on the last axis, rows X
 * apart.
 */
static void
view_in(Lower *lw, KB *kb, int v, View *w, int rank, int64_t H, int64_t S,
        int64_t D)
{
	const Graph *g = lw->g;
	const Node *sp = lw->sview && v >= 0 && lw->sview[v] >= 0 ? &g->node[lw->sview[v]] : NULL;
	int64_t off = 0, X;

	if (!sp) {
		view_init(w, lower_bind(lw, kb, v, KA_READ), rank, H, S, D);
		return;
	}
	for (int o = 0; o < sp->nout && sp->out[o] != v; o++)
		off += GV(g, sp->out[o])->dim[2];
	X = GV(g, sp->in[0])->dim[2];
	view_init(w, lower_bind(lw, kb, sp->in[0], KA_READ), 3, H, S, D);
	w->st[0] = S * X;
	w->st[2] = X;
	w->off = off;
}

/* ---- Attention ------------------------------------------------------------ */

/* The geometry of an Attention node, checked against the spec. */
typedef struct Att {
	int rank;            /* of Q, K, V: 3 or 4 */
	int dtype;           /* of Q, K, V and the outputs */
	int64_t B, Hq, Hkv;  /* batch, query heads, key/value heads */
	int64_t Sq, Skv, P;  /* query, new key/value and past sequence lengths */
	int64_t T;           /* total key/value length P + Skv */
	int64_t Dk, Dv;      /* head sizes of Q/K and of V */
	const Value *q, *k, *v, *mask, *pk, *pv, *nonpad;  /* borrowed; absent: NULL */
} Att;

static int
dims_are(Ctx *c, const Value *v, const char *what, int64_t d0, int64_t d1,
         int64_t d2, int64_t d3)
{
	int64_t want[4] = {d0, d1, d2, d3};

	if (v->rank != 4)
		return burn_fail(c, BURN_ERR_SHAPE, "%s must be 4-D, has rank %d", what, v->rank);
	for (int i = 0; i < 4; i++)
		if (v->dim[i] != want[i])
			return burn_fail(c, BURN_ERR_SHAPE, "%s dim %d is %lld, want %lld", what,
			                 i, (long long)v->dim[i], (long long)want[i]);
	return BURN_OK;
}

static int
att_shape(Ctx *c, Graph *g, Node *n, Att *a)
{
	const Value *q = NIN(g, n, 0), *k = NIN(g, n, 1), *v = NIN(g, n, 2), *m;

	if (!q || !k || !v)
		return burn_fail(c, BURN_ERR_INVALID, "Q, K and V are required");
	a->q = q; a->k = k; a->v = v;
	a->mask = NIN(g, n, 3);
	a->pk = NIN(g, n, 4);
	a->pv = NIN(g, n, 5);
	a->nonpad = NIN(g, n, 6);
	a->dtype = q->dtype;
	if (!dtype_is_float(q->dtype) || !dtype_supported(q->dtype))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "dtype %s", dtype_name(q->dtype));
	if (k->dtype != q->dtype || v->dtype != q->dtype)
		return burn_fail(c, BURN_ERR_SHAPE, "Q, K and V must have one dtype");
	if (q->rank != k->rank || q->rank != v->rank || (q->rank != 3 && q->rank != 4))
		return burn_fail(c, BURN_ERR_SHAPE, "Q, K and V must all be 3-D or 4-D");
	a->rank = q->rank;
	a->B = q->dim[0];
	if (k->dim[0] != a->B || v->dim[0] != a->B)
		return burn_fail(c, BURN_ERR_SHAPE, "batch sizes differ");
	if (a->rank == 4) {
		a->Hq = q->dim[1]; a->Sq = q->dim[2]; a->Dk = q->dim[3];
		a->Hkv = k->dim[1]; a->Skv = k->dim[2]; a->Dv = v->dim[3];
		if (k->dim[3] != a->Dk)
			return burn_fail(c, BURN_ERR_SHAPE, "Q and K head sizes differ");
		if (v->dim[1] != a->Hkv || v->dim[2] != a->Skv)
			return burn_fail(c, BURN_ERR_SHAPE, "K and V shapes disagree");
	} else {
		a->Hq = attr_int(n, "q_num_heads", 0);
		a->Hkv = attr_int(n, "kv_num_heads", 0);
		if (a->Hq <= 0 || a->Hkv <= 0)
			return burn_fail(c, BURN_ERR_INVALID,
			                 "3-D inputs need q_num_heads and kv_num_heads");
		if (q->dim[2] % a->Hq || k->dim[2] % a->Hkv || v->dim[2] % a->Hkv)
			return burn_fail(c, BURN_ERR_SHAPE, "hidden sizes not divisible by heads");
		a->Sq = q->dim[1]; a->Dk = q->dim[2] / a->Hq;
		a->Skv = k->dim[1]; a->Dv = v->dim[2] / a->Hkv;
		if (k->dim[2] / a->Hkv != a->Dk)
			return burn_fail(c, BURN_ERR_SHAPE, "Q and K head sizes differ");
		if (v->dim[1] != a->Skv)
			return burn_fail(c, BURN_ERR_SHAPE, "K and V sequence lengths differ");
	}
	if (a->Hkv <= 0 || a->Hq % a->Hkv)
		return burn_fail(c, BURN_ERR_SHAPE, "q heads %lld not a multiple of kv heads %lld",
		                 (long long)a->Hq, (long long)a->Hkv);

	a->P = 0;
	if (!a->pk != !a->pv)
		return burn_fail(c, BURN_ERR_INVALID, "past_key and past_value go together");
	if (a->pk) {
		if (a->pk->dtype != a->dtype || a->pv->dtype != a->dtype)
			return burn_fail(c, BURN_ERR_SHAPE, "past dtype differs from Q");
		if (a->pk->rank == 4)
			a->P = a->pk->dim[2];
		TRY(dims_are(c, a->pk, "past_key", a->B, a->Hkv, a->P, a->Dk));
		TRY(dims_are(c, a->pv, "past_value", a->B, a->Hkv, a->P, a->Dv));
	}
	a->T = a->P + a->Skv;

	if ((m = a->mask)) {
		int64_t want[4] = {a->B, a->Hq, a->Sq, a->T};
		if (m->dtype != DT_BOOL && m->dtype != a->dtype)
			return burn_fail(c, BURN_ERR_SHAPE, "attn_mask dtype %s", dtype_name(m->dtype));
		if (m->rank < 1 || m->rank > 4)
			return burn_fail(c, BURN_ERR_SHAPE, "attn_mask has rank %d", m->rank);
		for (int i = 0; i < m->rank; i++) {
			int64_t d = m->dim[i], w = want[4 - m->rank + i];
			if (i == m->rank - 1 ? d > w : d != 1 && d != w)
				return burn_fail(c, BURN_ERR_SHAPE,
				                 "attn_mask dim %d is %lld, does not fit %lld", i,
				                 (long long)d, (long long)w);
		}
	}
	if (a->nonpad) {
		if (a->nonpad->dtype != DT_I64 && a->nonpad->dtype != DT_I32)
			return burn_fail(c, BURN_ERR_SHAPE, "nonpad_kv_seqlen must be integer");
		if (a->nonpad->rank != 1 || a->nonpad->dim[0] != a->B)
			return burn_fail(c, BURN_ERR_SHAPE, "nonpad_kv_seqlen must have shape (B)");
	}
	if (attr_int(n, "qk_matmul_output_mode", 0) < 0 ||
	    attr_int(n, "qk_matmul_output_mode", 0) > 3)
		return burn_fail(c, BURN_ERR_INVALID, "qk_matmul_output_mode %lld",
		                 (long long)attr_int(n, "qk_matmul_output_mode", 0));
	return BURN_OK;
}

int
infer_attention(Ctx *c, Graph *g, Node *n)
{
	Att a;
	int64_t d[4];

	TRY(att_shape(c, g, n, &a));
	if (a.rank == 4) {
		d[0] = a.B; d[1] = a.Hq; d[2] = a.Sq; d[3] = a.Dv;
		set_out(NOUT(g, n, 0), a.dtype, 4, d);
	} else {
		d[0] = a.B; d[1] = a.Sq; d[2] = a.Hq * a.Dv;
		set_out(NOUT(g, n, 0), a.dtype, 3, d);
	}
	d[0] = a.B; d[1] = a.Hkv; d[2] = a.T;
	d[3] = a.Dk;
	if (has_out(n, 1))
		set_out(NOUT(g, n, 1), a.dtype, 4, d);
	d[3] = a.Dv;
	if (has_out(n, 2))
		set_out(NOUT(g, n, 2), a.dtype, 4, d);
	d[1] = a.Hq; d[2] = a.Sq; d[3] = a.T;
	if (has_out(n, 3))
		set_out(NOUT(g, n, 3), a.dtype, 4, d);
	return BURN_OK;
}

/*
 * A kernel writing dst (B, H, T, D) = past (B, H, P, D) ++ x along the
 * sequence, x being input `in` of n (3-D or 4-D, sequence length S).
 */
static void
present_copy(Lower *lw, Node *n, const Att *a, int dst, int past, int in,
             int64_t H, int64_t D)
{
	int64_t S = a->T - a->P;
	View wd, wp, wx;
	KRef b, h, s, d;
	KB kb;

	lower_begin(lw, &kb, n);
	view_init(&wd, lower_bind(lw, &kb, dst, KA_WRITE), 4, H, a->T, D);
	if (past >= 0 && a->P > 0) {
		view_init(&wp, lower_in(lw, &kb, n, past), 4, H, a->P, D);
		b = loop(&kb, "b", a->B, KF_PARALLEL);
		h = loop(&kb, "h", H, KF_PARALLEL);
		s = loop(&kb, "s", a->P, KF_PARALLEL);
		d = loop(&kb, "d", D, KF_PARALLEL);
		kb_store(&kb, wd.buf, view_at(&kb, &wd, b, h, s, d),
		         kb_load(&kb, wp.buf, view_at(&kb, &wp, b, h, s, d)));
		loops_close(&kb, 4);
	}
	view_in(lw, &kb, n->in[in], &wx, a->rank, H, S, D);
	b = loop(&kb, "b", a->B, KF_PARALLEL);
	h = loop(&kb, "h", H, KF_PARALLEL);
	s = loop(&kb, "s", S, KF_PARALLEL);
	d = loop(&kb, "d", D, KF_PARALLEL);
	kb_store(&kb, wd.buf, view_at(&kb, &wd, b, h, add(&kb, s, I(&kb, a->P)), d),
	         kb_load(&kb, wx.buf, view_at(&kb, &wx, b, h, s, d)));
	loops_close(&kb, 4);
	lower_end(lw, &kb);
}

/* Linear index into the attention mask m broadcast to (B, Hq, Sq, *),
 * at (b, h, i, j). */
static KRef
mask_at(KB *kb, const Value *m, KRef b, KRef h, KRef i, KRef j)
{
	int64_t st[4];
	KRef ix[4] = {b, h, i, j}, e = I(kb, 0);
	int off = 4 - m->rank;

	shape_strides(m->rank, m->dim, st);
	for (int r = 0; r < m->rank; r++)
		if (m->dim[r] != 1 || r == m->rank - 1)
			e = add(kb, e, mul(kb, ix[off + r], I(kb, st[r])));
	return e;
}

/* The bias of score s (variable sv) at (b, h, i, j): mask, causal,
 * padding.  Updates sv in place. */
static void
att_bias(KB *kb, Node *n, const Att *a, int mb, int npb, int sv,
         KRef b, KRef h, KRef i, KRef j)
{
	int ct = kb_dtype(kb->k, get(kb, sv));
	KRef ninf = kb_const_f(kb, ct, -INFINITY), s = get(kb, sv);

	if (a->mask) {
		int64_t mt = a->mask->dim[a->mask->rank - 1];
		KRef mv;
		if (mt < a->T)
			kb_if(kb, kb_bin(kb, KO_LT, j, I(kb, mt)));
		mv = kb_load(kb, mb, mask_at(kb, a->mask, b, h, i, j));
		if (a->mask->dtype == DT_BOOL)
			kb_set(kb, sv, kb_select(kb, mv, s, ninf));
		else
			kb_set(kb, sv, add(kb, s, conv(kb, mv, ct)));
		if (mt < a->T) {
			kb_else(kb);
			kb_set(kb, sv, ninf);
			kb_end(kb);
		}
	}
	if (attr_int(n, "is_causal", 0)) {
		KRef off = I(kb, a->P);
		if (a->nonpad && !a->pk)
			off = kb_bin(kb, KO_SUB, conv(kb, kb_load(kb, npb, b), DT_I64), I(kb, a->Sq));
		kb_set(kb, sv, kb_select(kb, kb_bin(kb, KO_GT, j, add(kb, i, off)),
		                         ninf, get(kb, sv)));
	}
	if (a->nonpad)
		kb_set(kb, sv, kb_select(kb, kb_bin(kb, KO_GE, j,
		                                    conv(kb, kb_load(kb, npb, b), DT_I64)),
		                         ninf, get(kb, sv)));
}

/*
 * The tiled form on targets with 16-bit matrix tiles (cuda, gpu), for f16
 * and bf16 Q, K and V with no mask, past, softcap or extra outputs, query
 * and key lengths multiples of 64 and head sizes multiples of 16 up to
 * 128: one kernel, the scores never leave the block (flash attention's
 * online softmax).  A block of 128 threads (4 subgroups) owns 64 queries
 * of one (b, h):
 *
 *   qt (shared, D x 64) <- Q^T of the block, once
 *   stage 0 <- K, V rows 0..63 (cp.async)
 *   for kt < T/64:
 *     cpwait; barrier; stage kt+1 <- the next 64 keys' K and V rows
 *     S^T = K qt: subgroup i its 16 keys x 64 queries (m16n8k16 tiles,
 *       K from shared as A, qt as B), stored to ss (f32, 64 x 64)
 *     barrier
 *     two lanes a query (l, l+16), 32 keys each: m' = max(m, scale*max s),
 *       p = exp(scale*s - m') to ps (Q's dtype, 64 x 64), l = l*e^(m-m')
 *       + sum p, the query's row of os (f32, 64 x D) times e^(m-m')
 *     barrier
 *     os += P V: subgroup i its 16 queries (C tiles loaded from os and
 *       stored back; P from ps as A, V from shared as B)
 *   barrier; Y row = os row / l
 *
 * Shared memory: qt, two stages of K and V, ss, ps and os (rows padded so
 * the threads of the softmax fall in different banks): 82 KB at D 64.
 * The sums are f32 (the tiles' products exact, as for MatMul); P is
 * rounded to Q's dtype for the second product, as MatMul after Softmax
 * in that dtype rounds it.
 */
#define FA_BQ 64
#define FA_BK 64
#define FA_T 128
#define FA_SSW (FA_BQ + 2)   /* ss's row stride (bank spread) */
#define FA_PSW (FA_BK + 8)   /* ps's: rows stay 16-byte aligned for tile loads */

static int64_t
attention_shared(int64_t D)
{
	return (D * FA_BQ + 4 * FA_BK * D + FA_BQ * FA_PSW) * 2 + (FA_BK * FA_SSW + FA_BQ * (D + 2)) * 4;
}

int
attention_tiles_fit(const Target *t, int dt, int64_t sq, int64_t skv, int64_t dk, int64_t dv)
{
	const Target *tg = target_or_default(t);
	int shape = dt == DT_F16 ? KT_M16N8K16_F16 : dt == DT_BF16 ? KT_M16N8K16_BF16 : 0;

	return shape && (tg->mma_tiles & (1u << shape)) && tg->subgroup == KT_SUBGROUP &&
	       tg->max_block_threads >= FA_T && dk == dv && dk % 16 == 0 && dk <= 128 &&
	       dk > 0 && sq > 0 && skv > 0 && sq % FA_BQ == 0 && skv % FA_BK == 0 &&
	       attention_shared(dk) <= (tg->shared_optin > tg->shared_bytes ? tg->shared_optin
	                                                                    : tg->shared_bytes);
}

static int
attention_tiles(Lower *lw, Node *n, const Att *a, double scale)
{
	int dt = a->dtype, D = (int)a->Dk, shape, grp = (int)(a->Hq / a->Hkv);
	int64_t nq = a->Sq / FA_BQ, nk = a->T / FA_BK, nblk = a->B * a->Hq * nq;
	int qt, ks, vs, ss, ps, os, fa, fb, fs[FA_BQ / 8], fo[128 / 8], mv, lv, av, xv, yv;
	int blk, tid, dpt = D / 2, osw = D + 2;   /* osw: os's row stride */
	View wq, wk, wv, wy;
	KRef bv, hv, hk, q0, tv, sg, qi, hf, kt, cur;
	KB kb;

	if (!attention_tiles_fit(lw->target, dt, a->Sq, a->T, a->Dk, a->Dv) || a->mask || a->pk ||
	    a->nonpad || has_out(n, 1) || has_out(n, 2) || has_out(n, 3) ||
	    attr_int(n, "is_causal", 0) || attr_float(n, "softcap", 0) != 0 ||
	    nblk > ((int64_t)1 << 31))
		return 0;
	shape = dt == DT_F16 ? KT_M16N8K16_F16 : KT_M16N8K16_BF16;

	lower_begin(lw, &kb, n);
	view_in(lw, &kb, n->in[0], &wq, a->rank, a->Hq, a->Sq, a->Dk);
	view_in(lw, &kb, n->in[1], &wk, a->rank, a->Hkv, a->T, a->Dk);
	view_in(lw, &kb, n->in[2], &wv, a->rank, a->Hkv, a->T, a->Dv);
	view_init(&wy, lower_out(lw, &kb, n, 0), a->rank, a->Hq, a->Sq, a->Dv);
	qt = kb_buf(&kb, dt, (int64_t)D * FA_BQ, -1, KS_SHARED, KA_RW);
	ks = kb_buf(&kb, dt, 2 * (int64_t)FA_BK * D, -1, KS_SHARED, KA_RW);
	vs = kb_buf(&kb, dt, 2 * (int64_t)FA_BK * D, -1, KS_SHARED, KA_RW);
	ss = kb_buf(&kb, DT_F32, FA_BK * FA_SSW, -1, KS_SHARED, KA_RW);
	ps = kb_buf(&kb, dt, FA_BQ * FA_PSW, -1, KS_SHARED, KA_RW);
	os = kb_buf(&kb, DT_F32, (int64_t)FA_BQ * osw, -1, KS_SHARED, KA_RW);
	fa = kb_buf(&kb, dt, ktile_elems(shape, KTR_A), -1, KS_FRAG, KA_RW);
	fb = kb_buf(&kb, dt, ktile_elems(shape, KTR_B), -1, KS_FRAG, KA_RW);
	for (int j = 0; j < FA_BQ / 8; j++)
		fs[j] = kb_buf(&kb, DT_F32, ktile_elems(shape, KTR_C), -1, KS_FRAG, KA_RW);
	for (int j = 0; j < D / 8; j++)
		fo[j] = kb_buf(&kb, DT_F32, ktile_elems(shape, KTR_C), -1, KS_FRAG, KA_RW);

	blk = kb_for(&kb, "blk", I(&kb, 0), I(&kb, nblk), KF_BLOCK_X);
	tid = kb_for(&kb, "tid", I(&kb, 0), I(&kb, FA_T), KF_THREAD_X);
	{
		KRef bk = kb_get(&kb, blk);
		tv = kb_get(&kb, tid);
		q0 = mul(&kb, kb_bin(&kb, KO_MOD, bk, I(&kb, nq)), I(&kb, FA_BQ));
		bk = kb_bin(&kb, KO_DIV, bk, I(&kb, nq));
		hv = kb_bin(&kb, KO_MOD, bk, I(&kb, a->Hq));
		bv = kb_bin(&kb, KO_DIV, bk, I(&kb, a->Hq));
		hk = grp == 1 ? hv : kb_bin(&kb, KO_DIV, hv, I(&kb, grp));
	}
	sg = kb_bin(&kb, KO_DIV, tv, I(&kb, KT_SUBGROUP));
	/* this thread's query and which half of the keys: lanes l and l+16 of
	 * a subgroup share a query (a shuffle combines them), 16 queries a
	 * subgroup (ss read along a row, ps and os a bank apart) */
	qi = add(&kb, mul(&kb, sg, I(&kb, 16)), kb_bin(&kb, KO_MOD, tv, I(&kb, 16)));
	hf = kb_bin(&kb, KO_MOD, kb_bin(&kb, KO_DIV, tv, I(&kb, 16)), I(&kb, 2));
	mv = kb_var(&kb, DT_F32, "m");
	lv = kb_var(&kb, DT_F32, "l");
	av = kb_var(&kb, DT_F32, "alpha");
	xv = kb_var(&kb, DT_F32, "x");
	yv = kb_var(&kb, DT_F32, "y");
	kb_set(&kb, mv, kb_const_f(&kb, DT_F32, -INFINITY));
	kb_set(&kb, lv, kb_const_f(&kb, DT_F32, 0));
	/* Q^T of the block; os = 0 */
	{
		KRef e = loop(&kb, "e", (int64_t)FA_BQ * D / FA_T, 0);
		KRef x = add(&kb, mul(&kb, e, I(&kb, FA_T)), tv);
		KRef r = kb_bin(&kb, KO_DIV, x, I(&kb, D)), c = kb_bin(&kb, KO_MOD, x, I(&kb, D));
		kb_store(&kb, qt, add(&kb, mul(&kb, c, I(&kb, FA_BQ)), r),
		         kb_load(&kb, wq.buf, view_at(&kb, &wq, bv, hv, add(&kb, q0, r), c)));
		kb_store(&kb, os, add(&kb, mul(&kb, r, I(&kb, osw)), c), kb_const_f(&kb, DT_F32, 0));
		kb_end(&kb);
	}
	/* K and V rows j0 .. j0+63 into stage st: 16-byte copies, D/8 a row */
#define FA_STAGE(st, j0) do { \
		KRef e_ = loop(&kb, "c", (int64_t)FA_BK * D / 8 / FA_T, 0); \
		KRef x_ = add(&kb, mul(&kb, e_, I(&kb, FA_T)), tv); \
		KRef r_ = kb_bin(&kb, KO_DIV, x_, I(&kb, D / 8)); \
		KRef c_ = mul(&kb, kb_bin(&kb, KO_MOD, x_, I(&kb, D / 8)), I(&kb, 8)); \
		KRef d_ = add(&kb, mul(&kb, (st), I(&kb, (int64_t)FA_BK * D)), \
		              add(&kb, mul(&kb, r_, I(&kb, D)), c_)); \
		kb_cpasync(&kb, ks, d_, wk.buf, view_at(&kb, &wk, bv, hk, add(&kb, (j0), r_), c_), 8); \
		kb_cpasync(&kb, vs, d_, wv.buf, view_at(&kb, &wv, bv, hk, add(&kb, (j0), r_), c_), 8); \
		kb_end(&kb); \
	} while (0)
	FA_STAGE(I(&kb, 0), I(&kb, 0));
	kt = loop(&kb, "kt", nk, 0);
	kb_cpwait(&kb);
	kb_barrier(&kb);
	cur = kb_bin(&kb, KO_BAND, kt, I(&kb, 1));
	if (nk > 1) {
		int di = kb.depth;
		KRef kn = add(&kb, kt, I(&kb, 1));
		kb_if(&kb, kb_bin(&kb, KO_LT, kn, I(&kb, nk)));
		FA_STAGE(kb_bin(&kb, KO_BAND, kn, I(&kb, 1)), mul(&kb, kn, I(&kb, FA_BK)));
		while (kb.depth > di)
			kb_end(&kb);
	}
#undef FA_STAGE
	/* S^T = K Q^T: subgroup sg's 16 keys */
	for (int j = 0; j < FA_BQ / 8; j++)
		kb_tfill(&kb, shape, fs[j], kb_const_f(&kb, DT_F32, 0));
	for (int kk = 0; kk < D / 16; kk++) {
		kb_tload(&kb, shape, KTR_A, fa, ks,
		         add(&kb, add(&kb, mul(&kb, cur, I(&kb, (int64_t)FA_BK * D)),
		                  mul(&kb, sg, I(&kb, 16 * D))), I(&kb, kk * 16)), I(&kb, D));
		for (int j = 0; j < FA_BQ / 8; j++) {
			kb_tload(&kb, shape, KTR_B, fb, qt, I(&kb, kk * 16 * FA_BQ + j * 8),
			         I(&kb, FA_BQ));
			kb_tmma(&kb, shape, fs[j], fa, fb);
		}
	}
	for (int j = 0; j < FA_BQ / 8; j++)
		kb_tstore(&kb, shape, ss, add(&kb, mul(&kb, sg, I(&kb, 16 * FA_SSW)), I(&kb, j * 8)),
		          I(&kb, FA_SSW), fs[j]);
	kb_barrier(&kb);
	/* the online softmax: query qi, keys 32 hf .. 32 hf + 31 */
	{
		KRef sc = kb_const_f(&kb, DT_F32, scale), j, s, p;
		int half = FA_BK / 2;
		kb_set(&kb, xv, kb_const_f(&kb, DT_F32, -INFINITY));
		j = add(&kb, loop(&kb, "j", half, 0), mul(&kb, hf, I(&kb, half)));
		kb_set(&kb, xv, kb_bin(&kb, KO_MAX, get(&kb, xv),
		                       mul(&kb, kb_load(&kb, ss, add(&kb, mul(&kb, j, I(&kb, FA_SSW)), qi)),
		                           sc)));
		kb_end(&kb);
		kb_shfl(&kb, yv, KSH_XOR, get(&kb, xv), I(&kb, 16), KT_SUBGROUP);
		kb_set(&kb, xv, kb_bin(&kb, KO_MAX, kb_bin(&kb, KO_MAX, get(&kb, xv), get(&kb, yv)),
		                       get(&kb, mv)));
		kb_set(&kb, av, kb_un(&kb, KO_EXP, sub(&kb, get(&kb, mv), get(&kb, xv))));
		kb_set(&kb, mv, get(&kb, xv));
		kb_set(&kb, yv, kb_const_f(&kb, DT_F32, 0));
		j = add(&kb, loop(&kb, "j", half, 0), mul(&kb, hf, I(&kb, half)));
		s = mul(&kb, kb_load(&kb, ss, add(&kb, mul(&kb, j, I(&kb, FA_SSW)), qi)), sc);
		p = kb_un(&kb, KO_EXP, sub(&kb, s, get(&kb, mv)));
		kb_set(&kb, xv, p);
		kb_set(&kb, yv, add(&kb, get(&kb, yv), get(&kb, xv)));
		kb_store(&kb, ps, add(&kb, mul(&kb, qi, I(&kb, FA_PSW)), j), get(&kb, xv));
		kb_end(&kb);
		kb_shfl(&kb, xv, KSH_XOR, get(&kb, yv), I(&kb, 16), KT_SUBGROUP);
		kb_set(&kb, lv, add(&kb, mul(&kb, get(&kb, lv), get(&kb, av)),
		                    add(&kb, get(&kb, yv), get(&kb, xv))));
		j = add(&kb, loop(&kb, "d", dpt, 0), mul(&kb, hf, I(&kb, dpt)));
		{
			KRef o = add(&kb, mul(&kb, qi, I(&kb, osw)), j);
			kb_store(&kb, os, o, mul(&kb, kb_load(&kb, os, o), get(&kb, av)));
		}
		kb_end(&kb);
	}
	kb_barrier(&kb);
	/* O += P V: subgroup sg's 16 queries */
	for (int j = 0; j < D / 8; j++)
		kb_tload(&kb, shape, KTR_C, fo[j], os, add(&kb, mul(&kb, sg, I(&kb, 16 * osw)), I(&kb, j * 8)),
		         I(&kb, osw));
	for (int kk = 0; kk < FA_BK / 16; kk++) {
		kb_tload(&kb, shape, KTR_A, fa, ps,
		         add(&kb, mul(&kb, sg, I(&kb, 16 * FA_PSW)), I(&kb, kk * 16)), I(&kb, FA_PSW));
		for (int j = 0; j < D / 8; j++) {
			kb_tload(&kb, shape, KTR_B, fb, vs,
			         add(&kb, mul(&kb, cur, I(&kb, (int64_t)FA_BK * D)),
			             I(&kb, (int64_t)kk * 16 * D + j * 8)), I(&kb, D));
			kb_tmma(&kb, shape, fo[j], fa, fb);
		}
	}
	for (int j = 0; j < D / 8; j++)
		kb_tstore(&kb, shape, os, add(&kb, mul(&kb, sg, I(&kb, 16 * osw)), I(&kb, j * 8)),
		          I(&kb, osw), fo[j]);
	kb_end(&kb);   /* kt */
	kb_barrier(&kb);
	{
		KRef d = add(&kb, loop(&kb, "d", dpt, 0), mul(&kb, hf, I(&kb, dpt)));
		kb_store(&kb, wy.buf, view_at(&kb, &wy, bv, hv, add(&kb, q0, qi), d),
		         kb_bin(&kb, KO_DIV, kb_load(&kb, os, add(&kb, mul(&kb, qi, I(&kb, osw)), d)),
		                get(&kb, lv)));
		kb_end(&kb);
	}
	kb_end(&kb);   /* tid */
	kb_end(&kb);   /* blk */
	kb.k->grid = arena_printf(lw->prog->arena, "attention blocks=%lld threads=%d "
	                          "queries=%d keys=%d a step head=%d mma=%s",
	                          (long long)nblk, FA_T, FA_BQ, FA_BK, D,
	                          ktile_info(shape)->name);
	lower_end(lw, &kb);
	return 1;
}

int
lower_attention(Lower *lw, Node *n)
{
	Ctx *c = lw->ctx;
	Graph *g = lw->g;
	Att a;
	int ct, kval, vval, sval, sb, qkb = -1, mb = -1, npb = -1, acc, sv, mx, sum;
	int mode = (int)attr_int(n, "qk_matmul_output_mode", 0);
	int64_t grp, d4[4];
	double scale, cap = attr_float(n, "softcap", 0);
	View wq, wk, wv, wy;
	KRef b, h, i, j, d, hk, row, s;
	KB kb;

	TRY(att_shape(c, g, n, &a));
	ct = ctype(a.dtype);
	grp = a.Hq / a.Hkv;
	scale = node_attr(n, "scale") ? attr_float(n, "scale", 1) : 1 / sqrt((double)a.Dk);
	if (attention_tiles(lw, n, &a, scale))
		return BURN_OK;

	/* K and V as the row kernel reads them: the present tensors when there
	 * is a past (materialised in a scratch value if not wanted), else the
	 * inputs. */
	kval = n->in[1];
	vval = n->in[2];
	d4[0] = a.B; d4[1] = a.Hkv; d4[2] = a.T;
	if (a.pk || has_out(n, 1)) {
		int dst = has_out(n, 1) ? n->out[1] : (d4[3] = a.Dk, lower_temp(lw, a.dtype, 4, d4));
		present_copy(lw, n, &a, dst, a.pk ? 4 : -1, 1, a.Hkv, a.Dk);
		if (a.pk)
			kval = dst;
	}
	if (a.pv || has_out(n, 2)) {
		int dst = has_out(n, 2) ? n->out[2] : (d4[3] = a.Dv, lower_temp(lw, a.dtype, 4, d4));
		present_copy(lw, n, &a, dst, a.pv ? 5 : -1, 2, a.Hkv, a.Dv);
		if (a.pv)
			vval = dst;
	}
	d4[1] = a.Hq; d4[2] = a.Sq; d4[3] = a.T;
	sval = lower_temp(lw, ct, 4, d4);

	lower_begin(lw, &kb, n);
	view_in(lw, &kb, n->in[0], &wq, a.rank, a.Hq, a.Sq, a.Dk);
	if (a.pk)
		view_init(&wk, lower_bind(lw, &kb, kval, KA_READ), 4, a.Hkv, a.T, a.Dk);
	else
		view_in(lw, &kb, kval, &wk, a.rank, a.Hkv, a.T, a.Dk);
	if (a.pv)
		view_init(&wv, lower_bind(lw, &kb, vval, KA_READ), 4, a.Hkv, a.T, a.Dv);
	else
		view_in(lw, &kb, vval, &wv, a.rank, a.Hkv, a.T, a.Dv);
	view_init(&wy, lower_out(lw, &kb, n, 0), a.rank, a.Hq, a.Sq, a.Dv);
	sb = lower_bind(lw, &kb, sval, KA_RW);
	if (has_out(n, 3))
		qkb = lower_out(lw, &kb, n, 3);
	if (a.mask)
		mb = lower_in(lw, &kb, n, 3);
	if (a.nonpad)
		npb = lower_in(lw, &kb, n, 6);

	b = loop(&kb, "b", a.B, KF_PARALLEL);
	h = loop(&kb, "h", a.Hq, KF_PARALLEL);
	i = loop(&kb, "i", a.Sq, KF_PARALLEL);
	hk = grp == 1 ? h : kb_bin(&kb, KO_DIV, h, I(&kb, grp));
	row = mul(&kb, add(&kb, mul(&kb, add(&kb, mul(&kb, b, I(&kb, a.Hq)), h), I(&kb, a.Sq)), i),
	          I(&kb, a.T));

	/* scores */
	acc = kb_var(&kb, ct, "acc");
	sv = kb_var(&kb, ct, "s");
	j = loop(&kb, "j", a.T, 0);
	kb_set(&kb, acc, kb_const_f(&kb, ct, 0));
	d = loop(&kb, "d", a.Dk, 0);
	kb_set(&kb, acc, add(&kb, get(&kb, acc),
	                     mul(&kb, conv(&kb, kb_load(&kb, wq.buf, view_at(&kb, &wq, b, h, i, d)), ct),
	                         conv(&kb, kb_load(&kb, wk.buf, view_at(&kb, &wk, b, hk, j, d)), ct))));
	kb_end(&kb);
	kb_set(&kb, sv, mul(&kb, get(&kb, acc), kb_const_f(&kb, ct, scale)));
	if (qkb >= 0 && mode == 0)
		kb_store(&kb, qkb, add(&kb, row, j), get(&kb, sv));
	if (cap > 0)
		kb_set(&kb, sv, mul(&kb, kb_const_f(&kb, ct, cap),
		                    kb_un(&kb, KO_TANH, mul(&kb, get(&kb, sv),
		                                            kb_const_f(&kb, ct, 1 / cap)))));
	if (qkb >= 0 && mode == 1)
		kb_store(&kb, qkb, add(&kb, row, j), get(&kb, sv));
	att_bias(&kb, n, &a, mb, npb, sv, b, h, i, j);
	if (qkb >= 0 && mode == 2)
		kb_store(&kb, qkb, add(&kb, row, j), get(&kb, sv));
	kb_store(&kb, sb, add(&kb, row, j), get(&kb, sv));
	kb_end(&kb);

	/* softmax of the row, in place */
	mx = kb_var(&kb, ct, "mx");
	sum = kb_var(&kb, ct, "sum");
	kb_set(&kb, mx, kb_const_f(&kb, ct, -INFINITY));
	j = loop(&kb, "j", a.T, 0);
	kb_set(&kb, mx, kb_bin(&kb, KO_MAX, get(&kb, mx), kb_load(&kb, sb, add(&kb, row, j))));
	kb_end(&kb);
	kb_set(&kb, sum, kb_const_f(&kb, ct, 0));
	j = loop(&kb, "j", a.T, 0);
	s = kb_un(&kb, KO_EXP, kb_bin(&kb, KO_SUB, kb_load(&kb, sb, add(&kb, row, j)),
	                              get(&kb, mx)));
	kb_store(&kb, sb, add(&kb, row, j), s);
	kb_set(&kb, sum, add(&kb, get(&kb, sum), kb_load(&kb, sb, add(&kb, row, j))));
	kb_end(&kb);
	j = loop(&kb, "j", a.T, 0);
	s = kb_bin(&kb, KO_DIV, kb_load(&kb, sb, add(&kb, row, j)), get(&kb, sum));
	kb_store(&kb, sb, add(&kb, row, j), s);
	if (qkb >= 0 && mode == 3)
		kb_store(&kb, qkb, add(&kb, row, j), kb_load(&kb, sb, add(&kb, row, j)));
	kb_end(&kb);

	/* times V */
	d = loop(&kb, "e", a.Dv, 0);
	kb_set(&kb, acc, kb_const_f(&kb, ct, 0));
	j = loop(&kb, "j", a.T, 0);
	kb_set(&kb, acc, add(&kb, get(&kb, acc),
	                     mul(&kb, kb_load(&kb, sb, add(&kb, row, j)),
	                         conv(&kb, kb_load(&kb, wv.buf, view_at(&kb, &wv, b, hk, j, d)), ct))));
	kb_end(&kb);
	kb_store(&kb, wy.buf, view_at(&kb, &wy, b, h, i, d), get(&kb, acc));
	kb_end(&kb);
	loops_close(&kb, 3);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- RotaryEmbedding ------------------------------------------------------ */

/*
 * The geometry of a RotaryEmbedding node.  X is (B, H, S, D) or, with the
 * num_heads attribute, (B, S, H*D).  With position_ids (B, S) the caches are
 * (max_position, R/2) and row position_ids[b, s] is used; without, they are
 * (B, S, R/2).  R = rotary_embedding_dim (0: the head size) is even.
 */
typedef struct Rope {
	int64_t B, H, S, D, R, npos;  /* npos: cache rows with position ids */
	const Value *x, *cos, *sin, *pos;
} Rope;

static int
rope_shape(Ctx *c, Graph *g, Node *n, Rope *r)
{
	const Value *x = NIN(g, n, 0), *cs = NIN(g, n, 1), *sn = NIN(g, n, 2), *p = NIN(g, n, 3);

	if (!x || !cs || !sn)
		return burn_fail(c, BURN_ERR_INVALID, "X, cos_cache and sin_cache are required");
	r->x = x; r->cos = cs; r->sin = sn; r->pos = p;
	if (!dtype_is_float(x->dtype) || !dtype_supported(x->dtype))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "dtype %s", dtype_name(x->dtype));
	if (cs->dtype != x->dtype || sn->dtype != x->dtype)
		return burn_fail(c, BURN_ERR_SHAPE, "caches must have X's dtype");
	if (x->rank == 4) {
		r->B = x->dim[0]; r->H = x->dim[1]; r->S = x->dim[2]; r->D = x->dim[3];
	} else if (x->rank == 3) {
		r->H = attr_int(n, "num_heads", 0);
		if (r->H <= 0 || x->dim[2] % r->H)
			return burn_fail(c, BURN_ERR_INVALID, "3-D input needs num_heads dividing %lld",
			                 (long long)x->dim[2]);
		r->B = x->dim[0]; r->S = x->dim[1]; r->D = x->dim[2] / r->H;
	} else {
		return burn_fail(c, BURN_ERR_SHAPE, "X must be 3-D or 4-D, has rank %d", x->rank);
	}
	r->R = attr_int(n, "rotary_embedding_dim", 0);
	if (r->R == 0)
		r->R = r->D;
	if (r->R < 0 || r->R > r->D || r->R % 2)
		return burn_fail(c, BURN_ERR_INVALID, "rotary_embedding_dim %lld for head size %lld",
		                 (long long)r->R, (long long)r->D);
	if (cs->rank != sn->rank)
		return burn_fail(c, BURN_ERR_SHAPE, "cos_cache and sin_cache ranks differ");
	for (int i = 0; i < cs->rank; i++)
		if (cs->dim[i] != sn->dim[i])
			return burn_fail(c, BURN_ERR_SHAPE, "cos_cache and sin_cache shapes differ");
	if (p) {
		if (p->dtype != DT_I64 && p->dtype != DT_I32)
			return burn_fail(c, BURN_ERR_SHAPE, "position_ids must be integer");
		if (p->rank != 2 || p->dim[0] != r->B || p->dim[1] != r->S)
			return burn_fail(c, BURN_ERR_SHAPE, "position_ids must be (B, S)");
		if (cs->rank != 2 || cs->dim[1] != r->R / 2 || cs->dim[0] < 1)
			return burn_fail(c, BURN_ERR_SHAPE, "caches must be (max_position, %lld)",
			                 (long long)(r->R / 2));
		r->npos = cs->dim[0];
	} else {
		if (cs->rank != 3 || cs->dim[0] != r->B || cs->dim[1] != r->S ||
		    cs->dim[2] != r->R / 2)
			return burn_fail(c, BURN_ERR_SHAPE, "caches must be (B, S, %lld)",
			                 (long long)(r->R / 2));
		r->npos = 0;
	}
	return BURN_OK;
}

int
infer_rotary(Ctx *c, Graph *g, Node *n)
{
	Rope r;

	TRY(rope_shape(c, g, n, &r));
	set_out(NOUT(g, n, 0), r.x->dtype, r.x->rank, r.x->dim);
	return BURN_OK;
}

/*
 * One kernel, parallel over (b, s, h): the pairs (x1, x2) - halves of the
 * rotated part, or even/odd elements when interleaved - become
 * (cos x1 - sin x2, sin x1 + cos x2); the rest of the head is copied.  A
 * position id outside the cache is clamped (the spec leaves it undefined;
 * this keeps the read in bounds).
 */
int
lower_rotary(Lower *lw, Node *n)
{
	Rope r;
	int ilv = attr_int(n, "interleaved", 0) != 0, ct, cb, sb;
	int64_t half;
	View wx, wy;
	KRef b, s, h, k, d, crow, i1, i2, x1, x2, cv, sv;
	KB kb;

	TRY(rope_shape(lw->ctx, lw->g, n, &r));
	ct = ctype(r.x->dtype);
	half = r.R / 2;

	lower_begin(lw, &kb, n);
	view_init(&wx, lower_in(lw, &kb, n, 0), r.x->rank, r.H, r.S, r.D);
	view_init(&wy, lower_out(lw, &kb, n, 0), r.x->rank, r.H, r.S, r.D);
	cb = lower_in(lw, &kb, n, 1);
	sb = lower_in(lw, &kb, n, 2);
	b = loop(&kb, "b", r.B, KF_PARALLEL);
	s = loop(&kb, "s", r.S, KF_PARALLEL);
	if (r.pos) {
		int pb = lower_in(lw, &kb, n, 3);
		KRef p = conv(&kb, kb_load(&kb, pb, add(&kb, mul(&kb, b, I(&kb, r.S)), s)), DT_I64);
		p = kb_bin(&kb, KO_MIN, kb_bin(&kb, KO_MAX, p, I(&kb, 0)), I(&kb, r.npos - 1));
		crow = mul(&kb, p, I(&kb, half));
	} else {
		crow = mul(&kb, add(&kb, mul(&kb, b, I(&kb, r.S)), s), I(&kb, half));
	}
	h = loop(&kb, "h", r.H, KF_PARALLEL);
	k = loop(&kb, "k", half, 0);
	i1 = ilv ? mul(&kb, k, I(&kb, 2)) : k;
	i2 = ilv ? add(&kb, i1, I(&kb, 1)) : add(&kb, k, I(&kb, half));
	x1 = conv(&kb, kb_load(&kb, wx.buf, view_at(&kb, &wx, b, h, s, i1)), ct);
	x2 = conv(&kb, kb_load(&kb, wx.buf, view_at(&kb, &wx, b, h, s, i2)), ct);
	cv = conv(&kb, kb_load(&kb, cb, add(&kb, crow, k)), ct);
	sv = conv(&kb, kb_load(&kb, sb, add(&kb, crow, k)), ct);
	kb_store(&kb, wy.buf, view_at(&kb, &wy, b, h, s, i1),
	         kb_bin(&kb, KO_SUB, mul(&kb, cv, x1), mul(&kb, sv, x2)));
	kb_store(&kb, wy.buf, view_at(&kb, &wy, b, h, s, i2),
	         add(&kb, mul(&kb, sv, x1), mul(&kb, cv, x2)));
	kb_end(&kb);
	if (r.R < r.D) {
		d = get(&kb, kb_for(&kb, "d", I(&kb, r.R), I(&kb, r.D), 0));
		kb_store(&kb, wy.buf, view_at(&kb, &wy, b, h, s, d),
		         kb_load(&kb, wx.buf, view_at(&kb, &wx, b, h, s, d)));
		kb_end(&kb);
	}
	loops_close(&kb, 3);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- LinearAttention ------------------------------------------------------ */

/*
 * LinearAttention(query, key, value, past_state?, decay?, beta?) (opset 27):
 * a recurrence over the sequence with a per-head state S (Dk x Dv),
 * Q (B, T, Hq*Dk), K (B, T, Hkv*Dk), V (B, T, Hkv*Dv), in f32 (f64 for f64):
 *
 *   S  = exp(decay_t) * S                    gated, gated_delta (decay per
 *                                            row of S, or per head)
 *   u  = v_t                                 linear, gated
 *   u  = beta_t * (v_t - S^T k_t)            delta, gated_delta
 *   S  = S + k_t u^T
 *   o_t = scale * S^T q_t                    per query head, its kv head
 *                                            h / (Hq/Hkv); scale 1/sqrt(Dk)
 *
 * Column j of S only ever meets column j (S^T k and k u^T both act per
 * column), so the kernel runs parallel over (b, kv head, j), each owning
 * column j of its state in a scratch (B, Hkv, Dk, Dv) of the compute
 * type, and walks the T steps in order.  present_state is the last S.
 */
typedef struct LinAtt {
	int64_t B, T, Hq, Hkv, Dk, Dv;
	int gate, delta;        /* the update rule's parts */
	int decay_rows;         /* decay per row of S (else per head) */
	int beta_heads;         /* beta per kv head (else one for all) */
} LinAtt;

static int
linatt_shape(Ctx *c, Graph *g, Node *n, LinAtt *a)
{
	const Value *q = NIN(g, n, 0), *k = NIN(g, n, 1), *v = NIN(g, n, 2);
	const Value *p = NIN(g, n, 3), *dc = NIN(g, n, 4), *bt = NIN(g, n, 5);
	const char *rule = attr_str(n, "update_rule", "gated_delta");
	char ts[160];

	if (!q || !k || !v)
		return burn_fail(c, BURN_ERR_INVALID, "query, key and value are required");
	if (!dtype_is_float(q->dtype) || !dtype_supported(q->dtype))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "dtype %s", dtype_name(q->dtype));
	for (int i = 1; i < 6; i++) {
		const Value *x = NIN(g, n, i);
		if (x && x->dtype != q->dtype)
			return burn_fail(c, BURN_ERR_SHAPE, "'%s' is %s and query %s: the "
			                 "inputs share one dtype", x->name,
			                 dtype_name(x->dtype), dtype_name(q->dtype));
	}
	if (q->rank != 3 || k->rank != 3 || v->rank != 3)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "query, key and value must be "
		                 "3-D (batch, sequence, heads * head size)");
	a->gate = !strcmp(rule, "gated") || !strcmp(rule, "gated_delta");
	a->delta = !strcmp(rule, "delta") || !strcmp(rule, "gated_delta");
	if (strcmp(rule, "linear") && !a->gate && !a->delta)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "update_rule '%s': linear, "
		                 "gated, delta or gated_delta expected", rule);
	a->Hq = attr_int(n, "q_num_heads", 0);
	a->Hkv = attr_int(n, "kv_num_heads", 0);
	if (a->Hq <= 0 || a->Hkv <= 0 || a->Hq % a->Hkv)
		return burn_fail(c, BURN_ERR_INVALID, "q_num_heads %lld and kv_num_heads "
		                 "%lld: positive, and q a multiple of kv, expected",
		                 (long long)a->Hq, (long long)a->Hkv);
	a->B = q->dim[0];
	a->T = q->dim[1];
	if (k->dim[0] != a->B || v->dim[0] != a->B || k->dim[1] != a->T ||
	    v->dim[1] != a->T)
		return burn_fail(c, BURN_ERR_SHAPE, "query, key and value disagree in "
		                 "batch or sequence length");
	if (q->dim[2] % a->Hq || k->dim[2] % a->Hkv || v->dim[2] % a->Hkv ||
	    q->dim[2] / a->Hq != k->dim[2] / a->Hkv || q->dim[2] == 0)
		return burn_fail(c, BURN_ERR_SHAPE, "hidden sizes %lld, %lld, %lld do not "
		                 "split into %lld query and %lld kv heads of one key size",
		                 (long long)q->dim[2], (long long)k->dim[2],
		                 (long long)v->dim[2], (long long)a->Hq, (long long)a->Hkv);
	a->Dk = q->dim[2] / a->Hq;
	a->Dv = v->dim[2] / a->Hkv;
	if (p && (p->rank != 4 || p->dim[0] != a->B || p->dim[1] != a->Hkv ||
	          p->dim[2] != a->Dk || p->dim[3] != a->Dv))
		return burn_fail(c, BURN_ERR_SHAPE, "past_state '%s' is %s: "
		                 "[%lld,%lld,%lld,%lld] expected", p->name,
		                 value_type_str(p, ts, sizeof ts), (long long)a->B,
		                 (long long)a->Hkv, (long long)a->Dk, (long long)a->Dv);
	if (a->gate) {
		if (!dc)
			return burn_fail(c, BURN_ERR_INVALID, "update_rule '%s' needs decay", rule);
		a->decay_rows = dc->rank == 3 && dc->dim[2] == a->Hkv * a->Dk;
		if (dc->rank != 3 || dc->dim[0] != a->B || dc->dim[1] != a->T ||
		    (!a->decay_rows && dc->dim[2] != a->Hkv))
			return burn_fail(c, BURN_ERR_SHAPE, "decay '%s' is %s: [%lld,%lld,%lld] "
			                 "or [%lld,%lld,%lld] expected", dc->name,
			                 value_type_str(dc, ts, sizeof ts), (long long)a->B,
			                 (long long)a->T, (long long)(a->Hkv * a->Dk),
			                 (long long)a->B, (long long)a->T, (long long)a->Hkv);
	}
	if (a->delta) {
		if (!bt)
			return burn_fail(c, BURN_ERR_INVALID, "update_rule '%s' needs beta", rule);
		a->beta_heads = bt->rank == 3 && bt->dim[2] == a->Hkv;
		if (bt->rank != 3 || bt->dim[0] != a->B || bt->dim[1] != a->T ||
		    (!a->beta_heads && bt->dim[2] != 1))
			return burn_fail(c, BURN_ERR_SHAPE, "beta '%s' is %s: [%lld,%lld,%lld] "
			                 "or [%lld,%lld,1] expected", bt->name,
			                 value_type_str(bt, ts, sizeof ts), (long long)a->B,
			                 (long long)a->T, (long long)a->Hkv, (long long)a->B,
			                 (long long)a->T);
	}
	return BURN_OK;
}

int
infer_linear_attention(Ctx *c, Graph *g, Node *n)
{
	LinAtt a;
	int64_t od[3], sd[4];

	TRY(linatt_shape(c, g, n, &a));
	od[0] = a.B; od[1] = a.T; od[2] = a.Hq * a.Dv;
	sd[0] = a.B; sd[1] = a.Hkv; sd[2] = a.Dk; sd[3] = a.Dv;
	set_out(NOUT(g, n, 0), NIN(g, n, 0)->dtype, 3, od);
	if (has_out(n, 1))
		set_out(NOUT(g, n, 1), NIN(g, n, 0)->dtype, 4, sd);
	return BURN_OK;
}

int
lower_linear_attention(Lower *lw, Node *n)
{
	LinAtt a;
	int dt = NIN(lw->g, n, 0)->dtype, ct = ctype(dt), grp, sval;
	int bq, bk, bv, bp = -1, bd = -1, bb = -1, bo, bs, bst = -1, acc, u;
	int64_t sd[4];
	double scale;
	KRef b, h, j, t, i, gq, srow, sat, kat, qrow, krow, vrow, e;
	KB kb;

	TRY(linatt_shape(lw->ctx, lw->g, n, &a));
	scale = attr_float(n, "scale", 0);
	if (scale == 0)
		scale = 1 / sqrt((double)a.Dk);
	grp = (int)(a.Hq / a.Hkv);
	sd[0] = a.B; sd[1] = a.Hkv; sd[2] = a.Dk; sd[3] = a.Dv;
	sval = lower_temp(lw, ct, 4, sd);

	lower_begin(lw, &kb, n);
	bq = lower_in(lw, &kb, n, 0);
	bk = lower_in(lw, &kb, n, 1);
	bv = lower_in(lw, &kb, n, 2);
	if (NIN(lw->g, n, 3))
		bp = lower_in(lw, &kb, n, 3);
	if (a.gate)
		bd = lower_in(lw, &kb, n, 4);
	if (a.delta)
		bb = lower_in(lw, &kb, n, 5);
	bo = lower_out(lw, &kb, n, 0);
	if (has_out(n, 1))
		bst = lower_out(lw, &kb, n, 1);
	bs = lower_bind(lw, &kb, sval, KA_RW);
	acc = kb_var(&kb, ct, "acc");
	u = kb_var(&kb, ct, "u");

	b = loop(&kb, "b", a.B, KF_PARALLEL);
	h = loop(&kb, "h", a.Hkv, KF_PARALLEL);
	j = loop(&kb, "j", a.Dv, KF_PARALLEL);
	/* S[b, h, i, j] at srow + i*Dv */
	srow = add(&kb, mul(&kb, add(&kb, mul(&kb, b, I(&kb, a.Hkv)), h),
	                    I(&kb, a.Dk * a.Dv)), j);
	i = loop(&kb, "i", a.Dk, 0);
	sat = add(&kb, srow, mul(&kb, i, I(&kb, a.Dv)));
	kb_store(&kb, bs, sat, bp >= 0 ? conv(&kb, kb_load(&kb, bp, sat), ct)
	                               : kb_const_f(&kb, ct, 0));
	kb_end(&kb);

	t = loop(&kb, "t", a.T, 0);
	/* element (b, t, head, d) of a (B, T, H*D) tensor: row + head*D + d */
	krow = mul(&kb, add(&kb, mul(&kb, b, I(&kb, a.T)), t), I(&kb, a.Hkv * a.Dk));
	vrow = mul(&kb, add(&kb, mul(&kb, b, I(&kb, a.T)), t), I(&kb, a.Hkv * a.Dv));
	if (a.gate) {
		KRef drow = mul(&kb, add(&kb, mul(&kb, b, I(&kb, a.T)), t),
		                I(&kb, a.decay_rows ? a.Hkv * a.Dk : a.Hkv));
		i = loop(&kb, "i", a.Dk, 0);
		sat = add(&kb, srow, mul(&kb, i, I(&kb, a.Dv)));
		e = a.decay_rows ? add(&kb, drow, add(&kb, mul(&kb, h, I(&kb, a.Dk)), i))
		                 : add(&kb, drow, h);
		e = kb_un(&kb, KO_EXP, conv(&kb, kb_load(&kb, bd, e), ct));
		kb_store(&kb, bs, sat, mul(&kb, kb_load(&kb, bs, sat), e));
		kb_end(&kb);
	}
	e = conv(&kb, kb_load(&kb, bv, add(&kb, vrow, add(&kb, mul(&kb, h, I(&kb, a.Dv)), j))), ct);
	kb_set(&kb, u, e);
	if (a.delta) {
		KRef brow = mul(&kb, add(&kb, mul(&kb, b, I(&kb, a.T)), t),
		                I(&kb, a.beta_heads ? a.Hkv : 1));
		kb_set(&kb, acc, kb_const_f(&kb, ct, 0));
		i = loop(&kb, "i", a.Dk, 0);
		sat = add(&kb, srow, mul(&kb, i, I(&kb, a.Dv)));
		kat = add(&kb, krow, add(&kb, mul(&kb, h, I(&kb, a.Dk)), i));
		kb_set(&kb, acc, add(&kb, get(&kb, acc), mul(&kb, kb_load(&kb, bs, sat),
		                                            conv(&kb, kb_load(&kb, bk, kat), ct))));
		kb_end(&kb);
		e = conv(&kb, kb_load(&kb, bb, a.beta_heads ? add(&kb, brow, h) : brow), ct);
		kb_set(&kb, u, mul(&kb, e, sub(&kb, get(&kb, u), get(&kb, acc))));
	}
	i = loop(&kb, "i", a.Dk, 0);
	sat = add(&kb, srow, mul(&kb, i, I(&kb, a.Dv)));
	kat = add(&kb, krow, add(&kb, mul(&kb, h, I(&kb, a.Dk)), i));
	kb_store(&kb, bs, sat, add(&kb, kb_load(&kb, bs, sat),
	                           mul(&kb, conv(&kb, kb_load(&kb, bk, kat), ct), get(&kb, u))));
	kb_end(&kb);
	/* each query head of the group reads the updated column */
	gq = loop(&kb, "g", grp, 0);
	gq = add(&kb, mul(&kb, h, I(&kb, grp)), gq);
	qrow = mul(&kb, add(&kb, mul(&kb, b, I(&kb, a.T)), t), I(&kb, a.Hq * a.Dk));
	kb_set(&kb, acc, kb_const_f(&kb, ct, 0));
	i = loop(&kb, "i", a.Dk, 0);
	sat = add(&kb, srow, mul(&kb, i, I(&kb, a.Dv)));
	e = conv(&kb, kb_load(&kb, bq, add(&kb, qrow, add(&kb, mul(&kb, gq, I(&kb, a.Dk)), i))), ct);
	kb_set(&kb, acc, add(&kb, get(&kb, acc), mul(&kb, kb_load(&kb, bs, sat), e)));
	kb_end(&kb);
	e = mul(&kb, get(&kb, acc), kb_const_f(&kb, ct, scale));
	kb_store(&kb, bo, add(&kb, mul(&kb, add(&kb, mul(&kb, b, I(&kb, a.T)), t),
	                               I(&kb, a.Hq * a.Dv)),
	                      add(&kb, mul(&kb, gq, I(&kb, a.Dv)), j)), e);
	kb_end(&kb);   /* g */
	kb_end(&kb);   /* t */
	if (bst >= 0) {
		i = loop(&kb, "i", a.Dk, 0);
		sat = add(&kb, srow, mul(&kb, i, I(&kb, a.Dv)));
		kb_store(&kb, bst, sat, kb_load(&kb, bs, sat));
		kb_end(&kb);
	}
	loops_close(&kb, 3);
	lower_end(lw, &kb);
	return BURN_OK;
}

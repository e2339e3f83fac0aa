/*
 * ops_random.c - the random ops (rows with OF_RANDOM in ir/ops.def):
 * RandomUniform, RandomNormal, RandomUniformLike, RandomNormalLike,
 * Bernoulli, Multinomial, and Dropout (inference: a copy; training: a
 * random mask).
 *
 * Every draw comes from Philox4x32-10 (passes/rng.h), built here as
 * kernel IR: element i of an output draws the block of counter
 * {i, i >> 32, stream, 0} under the node's key, so values depend on the
 * seed and the element's index only, not on the schedule or the target.
 * From the block's words:
 *   uniform   f32: low + u (high - low), u = (w0 >> 8) 2^-24 in [0, 1),
 *             one fma; f64: u from 53 bits of w0, w1
 *   normal    Box-Muller in f64: mean + scale sqrt(-2 log u1) cos(2 pi u2),
 *             u1 = 1 - u(w0, w1) in (0, 1], u2 = u(w2, w3); rounded to the
 *             output type (f64 log and cos: libm on C, the expansions of
 *             passes/legalize.c elsewhere, so the f64 values may differ
 *             in the last bit between targets, rarely the f32 ones)
 *   Bernoulli y = u < p, u in p's type (f32 24 bits, f64 53 bits)
 *   Dropout   keep = u >= ratio (u: 24 bits, compared in f64), y = keep ?
 *             x / (1 - ratio) : 0 (the reference's division), mask = keep;
 *             ratio 0 keeps everything and y = x exactly
 * Uniform draws, Bernoulli and Dropout are therefore bit-identical on
 * every target.  Random nodes are never constant-folded (infer_fold.c)
 * nor merged by CSE (simplify.c).
 */
#include <math.h>
#include <string.h>
#include "lower.h"
#include "rng.h"

/* ---- Philox4x32-10 ------------------------------------------------------ */

/* The published constants: round multipliers and the key's Weyl steps. */
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

static KRef u32c(KB *kb, uint32_t v) { return kb_const_i(kb, DT_U32, v); }
static KRef u64c(KB *kb, uint64_t v) { return kb_const_i(kb, DT_U64, (int64_t)v); }

/* the high and low halves of a u64 expression, as u32 */
static KRef hi32(KB *kb, KRef p)
{
	return kb_cast(kb, DT_U32, kb_bin(kb, KO_SHRM, p, u64c(kb, 32)));
}

static KRef lo32(KB *kb, KRef p)
{
	return kb_cast(kb, DT_U32, p);
}

/*
 * One round: with the products p0 = M0 c0 and p1 = M1 c2 (64-bit),
 *   c = { hi(p1) ^ c1 ^ k0, lo(p1), hi(p0) ^ c3 ^ k1, lo(p0) }.
 * Each word is a variable, set in an order that reads c1 and c3 before
 * they are overwritten; the products are variables too, so no expression
 * is shared between statements and none grows with the rounds.
 */
void rng_philox(KB *kb, const KRef ctr[4], KRef k0, KRef k1, int out[4])
{
	static const char *const name[4] = { "ph0", "ph1", "ph2", "ph3" };
	int p0 = kb_var(kb, DT_U64, "php0"), p1 = kb_var(kb, DT_U64, "php1");

	for (int j = 0; j < 4; j++) {
		out[j] = kb_var(kb, DT_U32, name[j]);
		kb_set(kb, out[j], ctr[j]);
	}
	for (int r = 0; r < 10; r++) {
		/* round r's key: k + r W (mod 2^32); folded when k is constant */
		KRef rk0 = r ? kb_bin(kb, KO_ADD, k0, u32c(kb, (uint32_t)r * PHILOX_W0)) : k0;
		KRef rk1 = r ? kb_bin(kb, KO_ADD, k1, u32c(kb, (uint32_t)r * PHILOX_W1)) : k1;
		KRef c0 = kb_cast(kb, DT_U64, kb_get(kb, out[0]));
		KRef c2 = kb_cast(kb, DT_U64, kb_get(kb, out[2]));
		kb_set(kb, p0, kb_bin(kb, KO_MUL, c0, u64c(kb, PHILOX_M0)));
		kb_set(kb, p1, kb_bin(kb, KO_MUL, c2, u64c(kb, PHILOX_M1)));
		kb_set(kb, out[0], kb_bin(kb, KO_BXOR, kb_bin(kb, KO_BXOR,
		       hi32(kb, kb_get(kb, p1)), kb_get(kb, out[1])), rk0));
		kb_set(kb, out[1], lo32(kb, kb_get(kb, p1)));
		kb_set(kb, out[2], kb_bin(kb, KO_BXOR, kb_bin(kb, KO_BXOR,
		       hi32(kb, kb_get(kb, p0)), kb_get(kb, out[3])), rk1));
		kb_set(kb, out[3], lo32(kb, kb_get(kb, p0)));
	}
}

KRef rng_unit_f32(KB *kb, KRef w)
{
	KRef m = kb_bin(kb, KO_SHRM, w, u32c(kb, 8));
	return kb_bin(kb, KO_MUL, kb_cast(kb, DT_F32, m),
	              kb_const_f(kb, DT_F32, 1.0 / 16777216.0));
}

KRef rng_unit_f64(KB *kb, KRef w0, KRef w1)
{
	KRef hi = kb_bin(kb, KO_SHLM, kb_cast(kb, DT_U64, w0), u64c(kb, 21));
	KRef lo = kb_cast(kb, DT_U64, kb_bin(kb, KO_SHRM, w1, u32c(kb, 11)));
	return kb_bin(kb, KO_MUL, kb_cast(kb, DT_F64, kb_bin(kb, KO_BOR, hi, lo)),
	              kb_const_f(kb, DT_F64, 1.0 / 9007199254740992.0));
}

uint64_t rng_seed_key(double seed)
{
	uint64_t b;

	if (seed == floor(seed) && fabs(seed) < 9.2e18)
		return (uint64_t)(int64_t)seed;
	memcpy(&b, &seed, sizeof b);
	return b;
}

uint32_t rng_node_stream(const Node *n)
{
	const Attr *s = node_attr(n, "burn_stream");
	uint32_t h = 2166136261u;   /* FNV-1a */

	if (s && s->type == AT_INT)
		return (uint32_t)s->i;
	if (node_attr(n, "seed"))
		return 0;
	for (const char *p = n->name ? n->name : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return h;
}

int rng_counter_input(const Graph *g)
{
	for (int i = 0; i < g->nin; i++) {
		const Value *v = GV(g, g->in[i]);
		if (v->name && !strcmp(v->name, RNG_COUNTER_NAME) &&
		    v->dtype == DT_U64 && v->rank == 0)
			return g->in[i];
	}
	return -1;
}

/* The node's key as two u32 expressions: its seed attribute's; without
 * one RNG_KEY_DEFAULT, xor the graph input rng_counter where the graph
 * has one (loaded before the loop: bound in kb). */
static void node_key(Lower *lw, KB *kb, const Node *n, KRef *k0, KRef *k1)
{
	const Attr *s = node_attr(n, "seed");
	uint64_t key = s ? rng_seed_key(s->type == AT_INT ? (double)s->i : s->f)
	                 : RNG_KEY_DEFAULT;
	int cv = s ? -1 : rng_counter_input(lw->g);

	*k0 = u32c(kb, (uint32_t)key);
	*k1 = u32c(kb, (uint32_t)(key >> 32));
	if (cv >= 0) {
		int b = lower_bind(lw, kb, cv, KA_READ);
		KRef c = kb_load(kb, b, kb_idx(kb, 0));
		*k0 = kb_bin(kb, KO_BXOR, *k0, lo32(kb, c));
		*k1 = kb_bin(kb, KO_BXOR, *k1, hi32(kb, c));
	}
}

/* The node's key, set before any loop: k[0], k[1] (variables when the
 * key is loaded, so the counter is read once). */
static void key_setup(Lower *lw, KB *kb, const Node *n, KRef k[2])
{
	node_key(lw, kb, n, &k[0], &k[1]);
	if (!kb_is_const_i(kb->k, k[0], NULL)) {
		int kv0 = kb_var(kb, DT_U32, "key0"), kv1 = kb_var(kb, DT_U32, "key1");
		kb_set(kb, kv0, k[0]);
		kb_set(kb, kv1, k[1]);
		k[0] = kb_get(kb, kv0);
		k[1] = kb_get(kb, kv1);
	}
}

/* Draw the block of element index iv (i64) under key k: w[0..3]. */
static void draw_at(KB *kb, const Node *n, const KRef k[2], KRef iv, KRef w[4])
{
	int out[4];
	KRef c[4];

	c[0] = kb_cast(kb, DT_U32, iv);
	c[1] = kb_cast(kb, DT_U32, kb_bin(kb, KO_SHRM, iv, kb_idx(kb, 32)));
	c[2] = u32c(kb, rng_node_stream(n));
	c[3] = u32c(kb, 0);
	rng_philox(kb, c, k[0], k[1], out);
	for (int j = 0; j < 4; j++)
		w[j] = kb_get(kb, out[j]);
}

/* Open the loop over n's output 0 and draw element i's block: *iv the
 * index, w[0..3] the words. */
static void draw_loop(Lower *lw, KB *kb, const Node *n, int64_t numel, KRef *iv,
                      KRef w[4])
{
	KRef k[2];
	int i;

	key_setup(lw, kb, n, k);
	i = kb_for(kb, "i", kb_idx(kb, 0), kb_idx(kb, numel), KF_PARALLEL);
	*iv = kb_get(kb, i);
	draw_at(kb, n, k, *iv, w);
}

/* ---- RandomUniform, RandomNormal, their Like forms, Bernoulli ---------- */

/*
 * RandomUniform / RandomNormal: shape and dtype (default float) from
 * attributes.  The Like forms and Bernoulli: the input's shape, the dtype
 * attribute or the input's dtype.  Draws are floats (Bernoulli may give
 * any numeric type or bool).
 */
int infer_random(Ctx *c, Graph *g, Node *n)
{
	const Value *x = n->nin > 0 ? NIN(g, n, 0) : NULL;
	int64_t dim[BURN_MAX_RANK];
	const int64_t *s;
	int rank, dt;

	if (n->op == OP_RandomUniform || n->op == OP_RandomNormal) {
		rank = attr_ints(n, "shape", &s);
		if (rank < 0 || !node_attr(n, "shape"))
			return burn_fail(c, BURN_ERR_INVALID, "attribute 'shape' is required");
		if (rank > BURN_MAX_RANK)
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "rank %d is over %d",
			                 rank, BURN_MAX_RANK);
		for (int i = 0; i < rank; i++) {
			if (s[i] < 0)
				return burn_fail(c, BURN_ERR_SHAPE, "shape[%d] = %lld", i,
				                 (long long)s[i]);
			dim[i] = s[i];
		}
		dt = (int)attr_int(n, "dtype", DT_F32);
	} else {
		if (!x)
			return burn_fail(c, BURN_ERR_INVALID, "input 0 is required");
		rank = x->rank;
		memcpy(dim, x->dim, sizeof(int64_t) * (size_t)rank);
		dt = (int)attr_int(n, "dtype", x->dtype);
		if (n->op == OP_Bernoulli && !dtype_is_float(x->dtype))
			return burn_fail(c, BURN_ERR_SHAPE, "input is %s, not a float type",
			                 dtype_name(x->dtype));
	}
	if (!dtype_supported(dt) || (n->op != OP_Bernoulli && !dtype_is_float(dt)))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "dtype %s (%d) for random draws",
		                 dtype_supported(dt) ? dtype_name(dt) : "?", dt);
	set_out(NOUT(g, n, 0), dt, rank, dim);
	return BURN_OK;
}

int lower_random(Lower *lw, Node *n)
{
	const Value *o = NOUT(lw->g, n, 0);
	int dt = o->dtype, et = dtype_expr(dt), bo, bp = -1;
	int normal = n->op == OP_RandomNormal || n->op == OP_RandomNormalLike;
	KRef iv, w[4], v;
	KB kb;

	lower_begin(lw, &kb, n);
	if (n->op == OP_Bernoulli)
		bp = lower_in(lw, &kb, n, 0);
	bo = lower_out(lw, &kb, n, 0);
	draw_loop(lw, &kb, n, value_numel(o), &iv, w);
	if (n->op == OP_Bernoulli) {
		int pt = NIN(lw->g, n, 0)->dtype == DT_F64 ? DT_F64 : DT_F32;
		KRef p = kb_load(&kb, bp, iv), u;
		if (kb_dtype(kb.k, p) != pt)
			p = kb_cast(&kb, pt, p);
		u = pt == DT_F64 ? rng_unit_f64(&kb, w[0], w[1]) : rng_unit_f32(&kb, w[0]);
		v = kb_bin(&kb, KO_LT, u, p);
		if (et != DT_BOOL)
			v = kb_select(&kb, v, dtype_is_float(et) ? kb_const_f(&kb, et, 1) :
			              kb_const_i(&kb, et, 1), dtype_is_float(et) ?
			              kb_const_f(&kb, et, 0) : kb_const_i(&kb, et, 0));
	} else if (normal) {
		double mean = attr_float(n, "mean", 0), scale = attr_float(n, "scale", 1);
		KRef u1 = kb_bin(&kb, KO_SUB, kb_const_f(&kb, DT_F64, 1),
		                 rng_unit_f64(&kb, w[0], w[1]));
		KRef u2 = rng_unit_f64(&kb, w[2], w[3]);
		KRef r = kb_un(&kb, KO_SQRT, kb_bin(&kb, KO_MUL, kb_const_f(&kb, DT_F64, -2),
		                                    kb_un(&kb, KO_LOG, u1)));
		KRef z = kb_bin(&kb, KO_MUL, r, kb_un(&kb, KO_COS, kb_bin(&kb, KO_MUL,
		                kb_const_f(&kb, DT_F64, 2 * M_PI), u2)));
		v = kb_fma(&kb, z, kb_const_f(&kb, DT_F64, scale), kb_const_f(&kb, DT_F64, mean));
		if (et != DT_F64)
			v = kb_cast(&kb, et, v);
	} else {
		double lo = attr_float(n, "low", 0), hi = attr_float(n, "high", 1);
		int ct = et == DT_F64 ? DT_F64 : DT_F32;
		KRef u = ct == DT_F64 ? rng_unit_f64(&kb, w[0], w[1]) : rng_unit_f32(&kb, w[0]);
		v = kb_fma(&kb, u, kb_const_f(&kb, ct, hi - lo), kb_const_f(&kb, ct, lo));
		if (et != ct)
			v = kb_cast(&kb, et, v);
	}
	kb_store(&kb, bo, iv, v);
	kb_end(&kb);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- Multinomial -------------------------------------------------------- */

/*
 * Multinomial(input (B, C) unnormalised log-probabilities) -> (B,
 * sample_size) class indices (dtype int32 or int64).  Per row, in f64:
 * m = max x, z = sum exp(x - m); sample (b, s) draws element b S + s's
 * u in [0, 1) (53 bits) and takes the first class whose running sum of
 * exp(x - m) exceeds u z (the last class when rounding leaves none).
 * f64 so that exp is libm's on both CPU targets (the llvm target keeps
 * f64 calls), and the picks the same bytes there.
 */
int infer_multinomial(Ctx *c, Graph *g, Node *n)
{
	const Value *x = NIN(g, n, 0);
	int64_t dim[2], ss = attr_int(n, "sample_size", 1);
	int dt = (int)attr_int(n, "dtype", DT_I32);

	if (!x || x->rank != 2 || !dtype_is_float(x->dtype))
		return burn_fail(c, BURN_ERR_SHAPE, "input must be a 2-D float tensor");
	if (dt != DT_I32 && dt != DT_I64)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "dtype %d: int32 or int64", dt);
	if (ss < 1 || x->dim[1] < 1)
		return burn_fail(c, BURN_ERR_SHAPE, "sample_size %lld with %lld classes",
		                 (long long)ss, (long long)x->dim[1]);
	dim[0] = x->dim[0];
	dim[1] = ss;
	set_out(NOUT(g, n, 0), dt, 2, dim);
	return BURN_OK;
}

int lower_multinomial(Lower *lw, Node *n)
{
	const Value *x = NIN(lw->g, n, 0), *o = NOUT(lw->g, n, 0);
	int64_t B = x->dim[0], C = x->dim[1], S = o->dim[1];
	int xb, ob, b, c, s, mx, z, acc, pick, found;
	KRef k[2], w[4], e, u, hit, row;
	KB kb;

	lower_begin(lw, &kb, n);
	xb = lower_in(lw, &kb, n, 0);
	ob = lower_out(lw, &kb, n, 0);
	key_setup(lw, &kb, n, k);
	mx = kb_var(&kb, DT_F64, "mx");
	z = kb_var(&kb, DT_F64, "z");
	acc = kb_var(&kb, DT_F64, "acc");
	pick = kb_var(&kb, DT_I64, "pick");
	found = kb_var(&kb, DT_BOOL, "found");
	b = kb_for(&kb, "b", kb_idx(&kb, 0), kb_idx(&kb, B), KF_PARALLEL);
	row = kb_bin(&kb, KO_MUL, kb_get(&kb, b), kb_idx(&kb, C));
#define XV() kb_cast(&kb, DT_F64, kb_load(&kb, xb, kb_bin(&kb, KO_ADD, row, kb_get(&kb, c))))
	kb_set(&kb, mx, kb_const_f(&kb, DT_F64, -INFINITY));
	c = kb_for(&kb, "c", kb_idx(&kb, 0), kb_idx(&kb, C), 0);
	kb_set(&kb, mx, kb_bin(&kb, KO_MAX, kb_get(&kb, mx), XV()));
	kb_end(&kb);
	kb_set(&kb, z, kb_const_f(&kb, DT_F64, 0));
	c = kb_for(&kb, "c", kb_idx(&kb, 0), kb_idx(&kb, C), 0);
	kb_set(&kb, z, kb_bin(&kb, KO_ADD, kb_get(&kb, z), kb_un(&kb, KO_EXP,
	       kb_bin(&kb, KO_SUB, XV(), kb_get(&kb, mx)))));
	kb_end(&kb);
	s = kb_for(&kb, "s", kb_idx(&kb, 0), kb_idx(&kb, S), 0);
	draw_at(&kb, n, k, kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, kb_get(&kb, b),
	        kb_idx(&kb, S)), kb_get(&kb, s)), w);
	u = kb_bin(&kb, KO_MUL, rng_unit_f64(&kb, w[0], w[1]), kb_get(&kb, z));
	kb_set(&kb, acc, kb_const_f(&kb, DT_F64, 0));
	kb_set(&kb, pick, kb_idx(&kb, C - 1));
	kb_set(&kb, found, kb_const_i(&kb, DT_BOOL, 0));
	c = kb_for(&kb, "c", kb_idx(&kb, 0), kb_idx(&kb, C), 0);
	e = kb_un(&kb, KO_EXP, kb_bin(&kb, KO_SUB, XV(), kb_get(&kb, mx)));
	kb_set(&kb, acc, kb_bin(&kb, KO_ADD, kb_get(&kb, acc), e));
	hit = kb_bin(&kb, KO_AND, kb_un(&kb, KO_NOT, kb_get(&kb, found)),
	             kb_bin(&kb, KO_LT, u, kb_get(&kb, acc)));
	kb_set(&kb, pick, kb_select(&kb, hit, kb_get(&kb, c), kb_get(&kb, pick)));
	kb_set(&kb, found, kb_bin(&kb, KO_OR, kb_get(&kb, found), hit));
	kb_end(&kb);
	kb_store(&kb, ob, kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, kb_get(&kb, b),
	         kb_idx(&kb, S)), kb_get(&kb, s)), kb_cast(&kb, o->dtype, kb_get(&kb, pick)));
	kb_end(&kb);
	kb_end(&kb);
#undef XV
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- Dropout ------------------------------------------------------------ */

/* Output k of n, or NULL when it is omitted. */
static Value *out_opt(Graph *g, Node *n, int k)
{
	return k < n->nout && n->out[k] >= 0 ? GV(g, n->out[k]) : NULL;
}

int random_node_draws(const Graph *g, const Node *n)
{
	const Value *t;

	if (!(op_table[n->op].flags & OF_RANDOM))
		return 0;
	if (n->op != OP_Dropout)
		return 1;
	t = NIN(g, n, 2);
	return t && (!t->data || value_get_i(t, 0));
}

/*
 * Dropout(data, ratio = 0.5, training_mode = false) -> output, mask?
 * Inference (training_mode absent or a constant false): a copy with an
 * all-true mask.  Training: the mask and scaling of the file's comment;
 * ratio and training_mode may be run-time scalars.  Opset < 7's is_test
 * attribute is ignored: like ONNX Runtime, we always run inference there.
 */
int infer_dropout(Ctx *c, Graph *g, Node *n)
{
	const Value *x = NIN(g, n, 0), *r = NIN(g, n, 1), *t = NIN(g, n, 2);
	Value *m = out_opt(g, n, 1);

	if (!x)
		return burn_fail(c, BURN_ERR_INVALID, "input 0 is required");
	if (r && value_numel(r) != 1)
		return burn_fail(c, BURN_ERR_SHAPE, "ratio must be a scalar");
	if (t && (value_numel(t) != 1 || t->dtype != DT_BOOL))
		return burn_fail(c, BURN_ERR_SHAPE, "training_mode must be a bool scalar");
	if (r && r->data && (value_get_f(r, 0) < 0 || !(value_get_f(r, 0) < 1)) &&
	    random_node_draws(g, n))
		return burn_fail(c, BURN_ERR_INVALID, "ratio %g is not in [0, 1)",
		                 value_get_f(r, 0));
	set_out(NOUT(g, n, 0), x->dtype, x->rank, x->dim);
	if (m)
		set_out(m, DT_BOOL, x->rank, x->dim);
	return BURN_OK;
}

int lower_dropout(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	const Value *o = NOUT(g, n, 0);
	int mask = out_opt(g, n, 1) != NULL, train = random_node_draws(g, n);
	int et = dtype_expr(o->dtype), ct = et == DT_F64 ? DT_F64 : DT_F32;
	int bi, bo, bm = -1, br = -1, bt = -1;
	KRef iv, w[4], x, keep, r, y;
	KB kb;

	lower_begin(lw, &kb, n);
	bi = lower_in(lw, &kb, n, 0);
	if (train && n->nin > 1 && n->in[1] >= 0)
		br = lower_in(lw, &kb, n, 1);
	if (train && !NIN(g, n, 2)->data)
		bt = lower_in(lw, &kb, n, 2);
	bo = lower_out(lw, &kb, n, 0);
	if (mask)
		bm = lower_out(lw, &kb, n, 1);
	if (!train) {
		int i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, value_numel(o)), KF_PARALLEL);
		iv = kb_get(&kb, i);
		kb_store(&kb, bo, iv, kb_load(&kb, bi, iv));
		if (mask)
			kb_store(&kb, bm, iv, kb_const_i(&kb, DT_BOOL, 1));
		kb_end(&kb);
		lower_end(lw, &kb);
		return BURN_OK;
	}
	draw_loop(lw, &kb, n, value_numel(o), &iv, w);
	r = br >= 0 ? kb_cast(&kb, DT_F64, kb_load(&kb, br, kb_idx(&kb, 0)))
	            : kb_const_f(&kb, DT_F64, 0.5);
	keep = kb_bin(&kb, KO_GE, kb_cast(&kb, DT_F64, rng_unit_f32(&kb, w[0])), r);
	x = kb_load(&kb, bi, iv);
	if (kb_dtype(kb.k, x) != ct)
		x = kb_cast(&kb, ct, x);
	y = kb_bin(&kb, KO_DIV, x, kb_cast(&kb, ct, kb_bin(&kb, KO_SUB,
	           kb_const_f(&kb, DT_F64, 1), r)));
	if (bt >= 0) {
		KRef t = kb_load(&kb, bt, kb_idx(&kb, 0));
		keep = kb_bin(&kb, KO_OR, kb_un(&kb, KO_NOT, t), keep);
		y = kb_select(&kb, t, y, x);
	}
	y = kb_select(&kb, keep, y, kb_const_f(&kb, ct, 0));
	if (ct != et)
		y = kb_cast(&kb, et, y);
	kb_store(&kb, bo, iv, y);
	if (mask)
		kb_store(&kb, bm, iv, keep);
	kb_end(&kb);
	lower_end(lw, &kb);
	return BURN_OK;
}

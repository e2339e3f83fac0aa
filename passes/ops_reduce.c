/*
 * ops_reduce.c - reductions and normalisations: Reduce*, ArgMax/ArgMin,
 * Softmax/LogSoftmax/Hardmax, the normalisations (Layer, RMS, Group,
 * Instance, Batch, Lp, MeanVariance, LRN), CumSum/CumProd and TopK.
 *
 * Every op lowers to one kernel: parallel loops over the positions that are
 * kept, then sequential inner loops over the reduced positions that
 * accumulate into kernel variables (KS_SET), then a finalisation and a
 * store.  Normalisations make several passes over the reduced range inside
 * the same kernel (mean, variance, write), so they need no temporary buffer.
 *
 * Float math runs in the "compute type" ctype(): f64 for f64 inputs, f32
 * for everything else floating (loads of f16/bf16 already yield f32).
 * What Reduce*, ArgMax and ArgMin compute (identity, prologue, combine,
 * finalisation, accumulator type) is their row of the reduction table,
 * passes/reduce.def, emitted by reduce_emit (reduce.c) here and in fusion
 * alike; this file only supplies the loops.
 */
#include <math.h>
#include "lower.h"
#include "reduce.h"

static const char *const ivar[BURN_MAX_RANK] =
	{"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"};
static const char *const rvar[BURN_MAX_RANK] =
	{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"};

/* ---- small helpers ---------------------------------------------------- */

/* The type that loads of dtype dt yield and stores take. */
static int ltype(int dt)
{
	return dt == DT_F16 || dt == DT_BF16 ? DT_F32 : dt;
}

/* The type float math on elements of dtype dt is done in. */
static int ctype(int dt)
{
	return dt == DT_F64 ? DT_F64 : DT_F32;
}

/* e converted to dt (no node when it already has that type). */
static KRef conv(KB *kb, KRef e, int dt)
{
	return kb_dtype(kb->k, e) == dt ? e : kb_cast(kb, dt, e);
}

/* The number v as a constant of dtype dt. */
static KRef num(KB *kb, int dt, double v)
{
	return dtype_is_float(dt) ? kb_const_f(kb, dt, v) : kb_const_i(kb, dt, (int64_t)v);
}

static KRef bin(KB *kb, int op, KRef a, KRef b) { return kb_bin(kb, op, a, b); }
static KRef get(KB *kb, int var) { return kb_get(kb, var); }
static KRef idx(KB *kb, int64_t v) { return kb_idx(kb, v); }

/* sum(ix[i] * stride[i]) over i64 index expressions. */
static KRef lin(KB *kb, int rank, const KRef *ix, const int64_t *stride)
{
	KRef e = kb_idx(kb, 0);

	for (int i = 0; i < rank; i++)
		e = bin(kb, KO_ADD, e, bin(kb, KO_MUL, ix[i], idx(kb, stride[i])));
	return e;
}

/* Linear index into s when s is broadcast (numpy rules, aligned to the
 * trailing dims) to a shape of rank `rank` indexed by ix[].  check_bcast
 * has verified that s fits. */
static KRef bidx(KB *kb, const Value *s, int rank, const KRef *ix)
{
	int64_t st[BURN_MAX_RANK];
	KRef e = kb_idx(kb, 0);
	int off = rank - s->rank;

	shape_strides(s->rank, s->dim, st);
	for (int i = 0; i < s->rank; i++)
		if (s->dim[i] != 1)
			e = bin(kb, KO_ADD, e, bin(kb, KO_MUL, ix[off + i], idx(kb, st[i])));
	return e;
}

/* Whether s broadcasts unidirectionally to x (so bidx stays in bounds). */
static int check_bcast(Ctx *c, const Value *s, const Value *x, const char *what)
{
	int off = x->rank - s->rank;

	if (off < 0)
		return burn_fail(c, BURN_ERR_SHAPE, "%s has rank %d > %d", what, s->rank, x->rank);
	for (int i = 0; i < s->rank; i++)
		if (s->dim[i] != 1 && s->dim[i] != x->dim[off + i])
			return burn_fail(c, BURN_ERR_SHAPE, "%s dim %d is %lld, want %lld or 1",
			                 what, i, (long long)s->dim[i], (long long)x->dim[off + i]);
	return BURN_OK;
}

/* Require a 1-D (or scalar) input of exactly count elements. */
static int check_vec(Ctx *c, const Value *v, int64_t count, const char *what)
{
	if (!v)
		return burn_fail(c, BURN_ERR_INVALID, "%s missing", what);
	if (v->rank > 1 || value_numel(v) != count)
		return burn_fail(c, BURN_ERR_SHAPE, "%s must have %lld elements",
		                 what, (long long)count);
	return BURN_OK;
}

static int need_float(Ctx *c, int dt)
{
	if (!dtype_is_float(dt) || !dtype_supported(dt))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "dtype %s", dtype_name(dt));
	return BURN_OK;
}

static int need_number(Ctx *c, int dt)
{
	if (!(dtype_is_float(dt) || dtype_is_int(dt)) || !dtype_supported(dt))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "dtype %s", dtype_name(dt));
	return BURN_OK;
}

/* Product of dim[lo..hi). */
static int64_t prod(const int64_t *dim, int lo, int hi)
{
	int64_t p = 1;

	for (int i = lo; i < hi; i++)
		p *= dim[i];
	return p;
}

/* Open loops over the axes of dim[] selected by mask (bit i = axis i), in
 * axis order; ix[i] receives the index expression of each opened axis.
 * Returns the number of loops opened (close with loops_close). */
static int open_axes(KB *kb, int rank, const int64_t *dim, unsigned mask,
                     int flags, const char *const *names, KRef *ix)
{
	int k = 0;

	for (int i = 0; i < rank; i++)
		if (mask >> i & 1) {
			ix[i] = kb_get(kb, kb_for(kb, names[i], idx(kb, 0), idx(kb, dim[i]), flags));
			k++;
		}
	return k;
}

/* Whether optional output k of n is present. */
static int has_out(const Node *n, int k)
{
	return k < n->nout && n->out[k] >= 0;
}

/* ---- Reduce*, ArgMax, ArgMin --------------------------------------------- */

static int is_arg(const Node *n)
{
	return n->op == OP_ArgMax || n->op == OP_ArgMin;
}

/*
 * The mask of reduced axes of a Reduce* or Arg* node whose input has rank r.
 * axes is an attribute before opset 18 (ReduceSum: 13) and a constant
 * optional input after.  Empty axes reduce everything, unless
 * noop_with_empty_axes: then *noop is set and the mask is empty.
 */
static int reduce_mask(Ctx *c, Graph *g, Node *n, int r, unsigned *mask, int *noop)
{
	int64_t tmp[BURN_MAX_RANK];
	const int64_t *ax = NULL;
	int64_t nax = 0;
	int a;

	*mask = 0;
	*noop = 0;
	if (is_arg(n)) {
		TRY(norm_axis(c, attr_int(n, "axis", 0), r, &a));
		*mask = r > 0 ? 1u << a : 0;
		return BURN_OK;
	}
	if (g->opset >= (n->op == OP_ReduceSum ? 13 : 18)) {
		const Value *v;
		if (NIN(g, n, 1)) {
			TRY(need_const(c, g, n, 1, &v));
			nax = value_numel(v);
			if (nax < 0 || nax > BURN_MAX_RANK)
				return burn_fail(c, BURN_ERR_INVALID, "%lld axes", (long long)nax);
			for (int i = 0; i < nax; i++)
				tmp[i] = value_get_i(v, i);
			ax = tmp;
		}
	} else {
		nax = attr_ints(n, "axes", &ax);
	}
	if (nax == 0) {
		if (attr_int(n, "noop_with_empty_axes", 0))
			*noop = 1;
		else
			*mask = (1u << r) - 1;
		return BURN_OK;
	}
	for (int i = 0; i < nax; i++) {
		TRY(norm_axis(c, ax[i], r, &a));
		if (r == 0)
			continue;
		if (*mask >> a & 1)
			return burn_fail(c, BURN_ERR_INVALID, "axis %d repeated", a);
		*mask |= 1u << a;
	}
	return BURN_OK;
}

int infer_reduce(Ctx *c, Graph *g, Node *n)
{
	const Value *x = NIN(g, n, 0);
	int64_t dim[BURN_MAX_RANK];
	int keep = attr_int(n, "keepdims", 1) != 0, r = 0, noop;
	unsigned mask;

	if (!x)
		return burn_fail(c, BURN_ERR_INVALID, "missing input");
	if (x->dtype == DT_BOOL && (n->op == OP_ReduceMax || n->op == OP_ReduceMin))
		;
	else
		TRY(need_number(c, x->dtype));
	TRY(reduce_mask(c, g, n, x->rank, &mask, &noop));
	for (int i = 0; i < x->rank; i++) {
		if (!(mask >> i & 1))
			dim[r++] = x->dim[i];
		else if (keep)
			dim[r++] = 1;
		if ((mask >> i & 1) && is_arg(n) && x->dim[i] == 0)
			return burn_fail(c, BURN_ERR_INVALID, "arg reduction over an empty axis");
	}
	set_out(NOUT(g, n, 0), is_arg(n) ? DT_I64 : x->dtype, r, dim);
	return BURN_OK;
}

/* The reduced elements of lower_reduce, walked for reduce_emit: loops over
 * the reduced axes (mask) inside the loops over the kept ones. */
typedef struct RWalk {
	KB *kb;
	const Value *x;
	int xb;
	unsigned mask;
	KRef *ix;            /* per axis of x: its index expression */
	const int64_t *xst;  /* x's strides */
	int nopen;           /* loops opened by the current pass */
} RWalk;

static KRef rwalk_open(void *self, KRef *index)
{
	RWalk *w = self;
	KB *kb = w->kb;

	w->nopen = open_axes(kb, w->x->rank, w->x->dim, w->mask, 0, rvar, w->ix);
	if (index)   /* arg rows reduce one axis */
		for (int i = 0; i < w->x->rank; i++)
			if (w->mask >> i & 1)
				*index = w->ix[i];
	return kb_load(kb, w->xb, lin(kb, w->x->rank, w->ix, w->xst));
}

static void rwalk_close(void *self)
{
	RWalk *w = self;

	loops_close(w->kb, w->nopen);
}

/* Reduce* and Arg*: parallel loops over the kept positions, and the
 * table's row (passes/reduce.def) emitted over the reduced ones. */
int lower_reduce(Lower *lw, Node *n)
{
	Ctx *c = lw->ctx;
	Graph *g = lw->g;
	const Value *x = NIN(g, n, 0), *y = NOUT(g, n, 0);
	const ReduceOp *r = reduce_op(n->op);
	int64_t xst[BURN_MAX_RANK], kdim[BURN_MAX_RANK], kst[BURN_MAX_RANK];
	KRef ix[BURN_MAX_RANK], kix[BURN_MAX_RANK], oidx;
	int yb, nk = 0, nopen, noop, res;
	unsigned mask, all = (1u << x->rank) - 1;
	RWalk rw = { 0 };
	ReduceWalk w = { rwalk_open, rwalk_close, &rw, 1, 0 };
	KB kb;

	if (!r)
		return burn_fail(c, BURN_ERR_INTERNAL, "no reduction row");
	TRY(reduce_mask(c, g, n, x->rank, &mask, &noop));
	for (int i = 0; i < x->rank; i++)
		if (!(mask >> i & 1))
			kdim[nk++] = x->dim[i];
		else
			w.count *= x->dim[i];
	shape_strides(nk, kdim, kst);
	shape_strides(x->rank, x->dim, xst);
	w.last = attr_int(n, "select_last_index", 0) != 0;
	w.f64_min = target_or_default(lw->target)->tune.sum_f64_min;

	lower_begin(lw, &kb, n);
	rw.kb = &kb;
	rw.x = x;
	rw.xb = lower_in(lw, &kb, n, 0);
	rw.mask = mask;
	rw.ix = ix;
	rw.xst = xst;
	yb = lower_out(lw, &kb, n, 0);
	nopen = open_axes(&kb, x->rank, x->dim, all & ~mask, KF_PARALLEL, ivar, ix);
	nk = 0;
	for (int i = 0; i < x->rank; i++)
		if (!(mask >> i & 1))
			kix[nk++] = ix[i];
	oidx = lin(&kb, nk, kix, kst);

	if (is_arg(n) && !mask) {   /* rank 0: the index is 0 */
		kb_store(&kb, yb, oidx, idx(&kb, 0));
	} else {
		res = reduce_emit(&kb, r, ltype(x->dtype), ltype(y->dtype), &w);
		kb_store(&kb, yb, oidx, get(&kb, res));
	}
	loops_close(&kb, nopen);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- Softmax, LogSoftmax, Hardmax ---------------------------------------- */

/*
 * View x as [outer, n, inner] around the softmax axis.  Before opset 13 the
 * input is coerced to 2-D at axis (default 1): [prod(dims before), prod(dims
 * from axis on)], i.e. inner = 1.  From 13 on it is the single axis (default
 * -1).  One kernel: per row, a max pass, a sum-of-exp pass and a write pass
 * (Softmax: exp(x - max) divided by the sum, or times 1/sum where the
 * target says so).
 */
int lower_softmax(Lower *lw, Node *n)
{
	Ctx *c = lw->ctx;
	Graph *g = lw->g;
	const Value *x = NIN(g, n, 0), *y = NOUT(g, n, 0);
	int old = g->opset < 13, a, xb, yb, t, o, in, j, m, s, recip, rows;
	int64_t outer, len, inner;
	KRef base, e, v, res;
	KB kb;

	TRY(need_float(c, x->dtype));
	TRY(norm_axis(c, attr_int(n, "axis", old ? 1 : -1), x->rank, &a));
	if (x->rank == 0) {
		outer = inner = len = 1;
	} else {
		outer = prod(x->dim, 0, a);
		len = old ? prod(x->dim, a, x->rank) : x->dim[a];
		inner = old ? 1 : prod(x->dim, a + 1, x->rank);
	}
	t = ltype(x->dtype);

	lower_begin(lw, &kb, n);
	/* Softmax over contiguous f32 rows on a CPU target: each exp once,
	 * stored, in a loop of its own (libm's expf, twice an element, was a
	 * third of a GPT-2-style decoder's time).  Not as the polynomials
	 * (step poly), though gcc would vectorize them: then the C train
	 * step's losses left the JIT's by 1.1e-4 in 100 Adam steps (ctest
	 * train_aot allows 1e-4), not yet understood */
	rows = n->op == OP_Softmax && inner == 1 && x->dtype == DT_F32 && lw->target &&
	       target_or_default(lw->target)->max_block_threads == 0 &&
	       !target_or_default(lw->target)->tune.recip_div;
	xb = lower_in(lw, &kb, n, 0);
	yb = lower_out(lw, &kb, n, 0);
	if (len == 0) { /* nothing to compute: the output is empty */
		lower_end(lw, &kb);
		return BURN_OK;
	}
	o = kb_for(&kb, "i0", idx(&kb, 0), idx(&kb, outer), KF_PARALLEL);
	in = kb_for(&kb, "i1", idx(&kb, 0), idx(&kb, inner), KF_PARALLEL);
	base = bin(&kb, KO_ADD, bin(&kb, KO_MUL, get(&kb, o), idx(&kb, len * inner)),
	           get(&kb, in));
#define ELEM(jv) bin(&kb, KO_ADD, base, bin(&kb, KO_MUL, get(&kb, jv), idx(&kb, inner)))
	m = kb_var(&kb, t, "m");
	if (n->op == OP_Hardmax) {
		/* the first index of the max gets 1, everything else 0 */
		int bi = kb_var(&kb, DT_I64, "bi");
		kb_set(&kb, m, kb_load(&kb, xb, base));
		kb_set(&kb, bi, idx(&kb, 0));
		j = kb_for(&kb, "r", idx(&kb, 1), idx(&kb, len), 0);
		v = kb_load(&kb, xb, ELEM(j));
		kb_if(&kb, bin(&kb, KO_GT, v, get(&kb, m)));
		kb_set(&kb, m, v);
		kb_set(&kb, bi, get(&kb, j));
		kb_end(&kb);
		kb_end(&kb);
		j = kb_for(&kb, "r", idx(&kb, 0), idx(&kb, len), 0);
		res = kb_select(&kb, bin(&kb, KO_EQ, get(&kb, j), get(&kb, bi)),
		                num(&kb, t, 1), num(&kb, t, 0));
		kb_store(&kb, yb, ELEM(j), res);
		kb_end(&kb);
	} else {
		kb_set(&kb, m, num(&kb, t, -INFINITY));
		j = kb_for(&kb, "r", idx(&kb, 0), idx(&kb, len), 0);
		kb_set(&kb, m, bin(&kb, KO_MAX, get(&kb, m), kb_load(&kb, xb, ELEM(j))));
		kb_end(&kb);
		s = kb_var(&kb, t, "s");
		kb_set(&kb, s, num(&kb, t, 0));
		if (rows) {
			/* Y = exp(x - max), then the sum of Y, then Y / sum, the
			 * same sums as below */
			j = kb_for(&kb, "r", idx(&kb, 0), idx(&kb, len), 0);
			kb_store(&kb, yb, ELEM(j), kb_un(&kb, KO_EXP, bin(&kb, KO_SUB,
			         kb_load(&kb, xb, ELEM(j)), get(&kb, m))));
			kb_end(&kb);
			j = kb_for(&kb, "r", idx(&kb, 0), idx(&kb, len), 0);
			kb_set(&kb, s, bin(&kb, KO_ADD, get(&kb, s), kb_load(&kb, yb, ELEM(j))));
			kb_end(&kb);
			j = kb_for(&kb, "r", idx(&kb, 0), idx(&kb, len), 0);
			kb_store(&kb, yb, ELEM(j), bin(&kb, KO_DIV, kb_load(&kb, yb, ELEM(j)),
			                               get(&kb, s)));
			kb_end(&kb);
		} else {
			j = kb_for(&kb, "r", idx(&kb, 0), idx(&kb, len), 0);
			e = kb_un(&kb, KO_EXP, bin(&kb, KO_SUB, kb_load(&kb, xb, ELEM(j)), get(&kb, m)));
			kb_set(&kb, s, bin(&kb, KO_ADD, get(&kb, s), e));
			kb_end(&kb);
			/* on targets whose division is long (tune.recip_div: a GPU's
			 * div.rn.f32 is ~10 instructions) Softmax multiplies by 1/s, as
			 * ONNX Runtime's MLAS does: one division a row instead of one an
			 * element, at most one ulp more (within the op's budget,
			 * docs/NUMERICS.md); s >= 1 (the max's own term), so 1/s is
			 * never subnormal for rows below 2^126.  CPU targets divide: the
			 * C and llvm targets contract a product into a following add
			 * differently, and the AOT train step must match the JIT's */
			recip = n->op == OP_Softmax && target_or_default(lw->target)->tune.recip_div;
			if (recip)
				kb_set(&kb, s, bin(&kb, KO_DIV, num(&kb, t, 1), get(&kb, s)));
			j = kb_for(&kb, "r", idx(&kb, 0), idx(&kb, len), 0);
			v = bin(&kb, KO_SUB, kb_load(&kb, xb, ELEM(j)), get(&kb, m));
			if (n->op == OP_Softmax)
				res = bin(&kb, recip ? KO_MUL : KO_DIV, kb_un(&kb, KO_EXP, v), get(&kb, s));
			else
				res = bin(&kb, KO_SUB, v, kb_un(&kb, KO_LOG, get(&kb, s)));
			kb_store(&kb, yb, ELEM(j), res);
			kb_end(&kb);
		}
	}
#undef ELEM
	kb_end(&kb);
	kb_end(&kb);
	(void)y;
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- normalisations ---------------------------------------------------- */

int infer_norm(Ctx *c, Graph *g, Node *n)
{
	const Value *x = NIN(g, n, 0);
	int64_t dim[BURN_MAX_RANK];
	int a;

	if (!x)
		return burn_fail(c, BURN_ERR_INVALID, "missing input");
	TRY(need_float(c, x->dtype));
	for (int k = 1; k < n->nin; k++) {
		const Value *v = NIN(g, n, k);
		if (v && !dtype_is_float(v->dtype))
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "input %d dtype %s",
			                 k, dtype_name(v->dtype));
	}
	switch (n->op) {
	case OP_LayerNormalization:
	case OP_RMSNormalization:
		TRY(norm_axis(c, attr_int(n, "axis", -1), x->rank, &a));
		TRY(check_bcast(c, NIN(g, n, 1), x, "scale"));
		if (NIN(g, n, 2))
			TRY(check_bcast(c, NIN(g, n, 2), x, "bias"));
		for (int i = 0; i < x->rank; i++)
			dim[i] = i < a ? x->dim[i] : 1;
		for (int k = 1; k < 3; k++)
			if (has_out(n, k)) {
				Value *o = NOUT(g, n, k);
				int dt = o->dtype;
				if (dt == DT_UNDEF)
					dt = attr_int(n, "stash_type", 1) == 1 ? DT_F32 : x->dtype;
				TRY(need_float(c, dt));
				set_out(o, dt, x->rank, dim);
			}
		break;
	case OP_GroupNormalization: {
		int64_t G = attr_int(n, "num_groups", 0), C;
		if (x->rank < 2)
			return burn_fail(c, BURN_ERR_SHAPE, "rank %d < 2", x->rank);
		C = x->dim[1];
		if (G <= 0 || C % G)
			return burn_fail(c, BURN_ERR_INVALID, "num_groups %lld does not divide %lld channels",
			                 (long long)G, (long long)C);
		for (int k = 1; k < 3; k++) {
			const Value *s = NIN(g, n, k);
			int64_t ne = s ? value_numel(s) : -1;
			if (!s || s->rank != 1 || (ne != C && ne != G))
				return burn_fail(c, BURN_ERR_SHAPE, "input %d must have C or num_groups elements", k);
		}
		break;
	}
	case OP_InstanceNormalization:
	case OP_BatchNormalization:
		if (x->rank < 2)
			return burn_fail(c, BURN_ERR_SHAPE, "rank %d < 2", x->rank);
		for (int k = 1; k < n->nin; k++)
			TRY(check_vec(c, NIN(g, n, k), x->dim[1], k == 1 ? "scale" : "bias/mean/var"));
		if (n->op == OP_BatchNormalization) {
			int train = attr_int(n, "training_mode", 0) != 0;
			for (int k = 1; k < 3; k++)
				if (has_out(n, k)) {
					if (!train || n->nout > 3)
						return burn_fail(c, BURN_ERR_UNSUPPORTED,
						                 "BatchNormalization statistics outputs without training_mode");
					set_out(NOUT(g, n, k), NIN(g, n, 3)->dtype, 1, &x->dim[1]);
				}
		}
		break;
	default:
		break;
	}
	set_out(NOUT(g, n, 0), x->dtype, x->rank, x->dim);
	return BURN_OK;
}

/*
 * Shared by the normalisations that reduce over a set of axes (Layer, RMS,
 * MeanVariance): parallel loops over the kept axes, then passes over the
 * reduced ones.  The state passed between the passes is in kernel vars.
 */
typedef struct Red {
	KB *kb;
	const Value *x;
	int xb, t;            /* x's buffer, compute type */
	unsigned mask;        /* reduced axes */
	int64_t xst[BURN_MAX_RANK];
	KRef ix[BURN_MAX_RANK];
	int64_t count;        /* reduced elements */
} Red;

static int red_open(Red *r) /* a pass: returns loops to close */
{
	return open_axes(r->kb, r->x->rank, r->x->dim, r->mask, 0, rvar, r->ix);
}

static KRef red_x(Red *r) /* x at the current position, in the compute type */
{
	return conv(r->kb, kb_load(r->kb, r->xb, lin(r->kb, r->x->rank, r->ix, r->xst)), r->t);
}

/* mean of f(x) into a new var: f = 0 is x, 1 is x*x, 2 is (x-mean)^2 */
static int red_mean(Red *r, int f, int mean)
{
	KB *kb = r->kb;
	int acc = kb_var(kb, r->t, "acc"), k;
	KRef v;

	kb_set(kb, acc, num(kb, r->t, 0));
	k = red_open(r);
	v = red_x(r);
	if (f == 2)
		v = bin(kb, KO_SUB, v, get(kb, mean));
	if (f)
		v = bin(kb, KO_MUL, v, v);
	kb_set(kb, acc, bin(kb, KO_ADD, get(kb, acc), v));
	loops_close(kb, k);
	kb_set(kb, acc, bin(kb, KO_DIV, get(kb, acc), num(kb, r->t, (double)r->count)));
	return acc;
}

/* LayerNormalization, RMSNormalization and MeanVarianceNormalization. */
static int lower_axes_norm(Lower *lw, Node *n)
{
	Ctx *c = lw->ctx;
	Graph *g = lw->g;
	const Value *x = NIN(g, n, 0), *y = NOUT(g, n, 0);
	const Value *sc = NIN(g, n, 1), *bi = n->op == OP_LayerNormalization ? NIN(g, n, 2) : NULL;
	int64_t kdim[BURN_MAX_RANK], kst[BURN_MAX_RANK];
	KRef kix[BURN_MAX_RANK], oidx, v;
	int yb, sb = -1, bb = -1, nk = 0, nopen, a, k, mean = -1, inv;
	unsigned all = (1u << x->rank) - 1;
	double eps = attr_float(n, "epsilon", 1e-5);
	KB kb;
	Red r = {0};

	r.kb = &kb;
	r.x = x;
	r.t = ctype(x->dtype);
	if (n->op == OP_MeanVarianceNormalization) {
		const int64_t *ax, dflt[3] = {0, 2, 3};
		int na = attr_ints(n, "axes", &ax);
		if (!node_attr(n, "axes")) {
			ax = dflt;
			na = 3;
		}
		for (int i = 0; i < na; i++) {
			TRY(norm_axis(c, ax[i], x->rank, &a));
			r.mask |= 1u << a;
		}
	} else {
		TRY(norm_axis(c, attr_int(n, "axis", -1), x->rank, &a));
		r.mask = all & ~((1u << a) - 1);
	}
	r.mask &= all;
	r.count = 1;
	for (int i = 0; i < x->rank; i++)
		if (r.mask >> i & 1)
			r.count *= x->dim[i];
		else
			kdim[nk++] = x->dim[i];
	shape_strides(nk, kdim, kst);
	shape_strides(x->rank, x->dim, r.xst);

	lower_begin(lw, &kb, n);
	r.xb = lower_in(lw, &kb, n, 0);
	if (sc)
		sb = lower_in(lw, &kb, n, 1);
	if (bi)
		bb = lower_in(lw, &kb, n, 2);
	yb = lower_out(lw, &kb, n, 0);
	nopen = open_axes(&kb, x->rank, x->dim, all & ~r.mask, KF_PARALLEL, ivar, r.ix);
	nk = 0;
	for (int i = 0; i < x->rank; i++)
		if (!(r.mask >> i & 1))
			kix[nk++] = r.ix[i];
	oidx = lin(&kb, nk, kix, kst);

	inv = kb_var(&kb, r.t, "inv");
	if (n->op == OP_RMSNormalization) {
		int ms = red_mean(&r, 1, -1);
		kb_set(&kb, inv, bin(&kb, KO_DIV, num(&kb, r.t, 1), kb_un(&kb, KO_SQRT,
		       bin(&kb, KO_ADD, get(&kb, ms), num(&kb, r.t, eps)))));
	} else {
		int var;
		mean = red_mean(&r, 0, -1);
		var = red_mean(&r, 2, mean);
		if (n->op == OP_MeanVarianceNormalization)
			kb_set(&kb, inv, bin(&kb, KO_DIV, num(&kb, r.t, 1),
			       bin(&kb, KO_ADD, kb_un(&kb, KO_SQRT, get(&kb, var)), num(&kb, r.t, 1e-9))));
		else
			kb_set(&kb, inv, bin(&kb, KO_DIV, num(&kb, r.t, 1), kb_un(&kb, KO_SQRT,
			       bin(&kb, KO_ADD, get(&kb, var), num(&kb, r.t, eps)))));
	}
	k = red_open(&r);
	v = red_x(&r);
	if (mean >= 0)
		v = bin(&kb, KO_SUB, v, get(&kb, mean));
	v = bin(&kb, KO_MUL, v, get(&kb, inv));
	if (sc)
		v = bin(&kb, KO_MUL, v, conv(&kb, kb_load(&kb, sb, bidx(&kb, sc, x->rank, r.ix)), r.t));
	if (bi)
		v = bin(&kb, KO_ADD, v, conv(&kb, kb_load(&kb, bb, bidx(&kb, bi, x->rank, r.ix)), r.t));
	kb_store(&kb, yb, lin(&kb, x->rank, r.ix, r.xst), conv(&kb, v, ltype(y->dtype)));
	loops_close(&kb, k);
	if (n->op == OP_LayerNormalization) {
		if (has_out(n, 1)) {
			int mb = lower_out(lw, &kb, n, 1);
			kb_store(&kb, mb, oidx, conv(&kb, get(&kb, mean), ltype(NOUT(g, n, 1)->dtype)));
		}
		if (has_out(n, 2)) {
			int ib = lower_out(lw, &kb, n, 2);
			kb_store(&kb, ib, oidx, conv(&kb, get(&kb, inv), ltype(NOUT(g, n, 2)->dtype)));
		}
	}
	loops_close(&kb, nopen);
	lower_end(lw, &kb);
	return BURN_OK;
}

/*
 * Group and Instance normalisation: x viewed as [rows, len] where a row is
 * one (n, group) or (n, channel); per row a mean pass, a variance pass and a
 * write pass applying the per-channel (or, opset 18 style, per-group) scale
 * and bias.
 */
static int lower_group_norm(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	const Value *x = NIN(g, n, 0), *y = NOUT(g, n, 0);
	int64_t C = x->dim[1], S = prod(x->dim, 2, x->rank);
	int64_t G = n->op == OP_GroupNormalization ? attr_int(n, "num_groups", 1) : C;
	int64_t cg = C / G, len = cg * S, rows = x->dim[0] * G;
	double eps = attr_float(n, "epsilon", 1e-5);
	int t = ctype(x->dtype), xb, sb, bb, yb, row, j, acc, mean, inv;
	KRef base, v, ch, gr, si, bi;
	KB kb;

	lower_begin(lw, &kb, n);
	xb = lower_in(lw, &kb, n, 0);
	sb = lower_in(lw, &kb, n, 1);
	bb = lower_in(lw, &kb, n, 2);
	yb = lower_out(lw, &kb, n, 0);
	row = kb_for(&kb, "i0", idx(&kb, 0), idx(&kb, rows), KF_PARALLEL);
	base = bin(&kb, KO_MUL, get(&kb, row), idx(&kb, len));
	mean = kb_var(&kb, t, "mean");
	acc = kb_var(&kb, t, "acc");
	inv = kb_var(&kb, t, "inv");

	kb_set(&kb, acc, num(&kb, t, 0));
	j = kb_for(&kb, "r", idx(&kb, 0), idx(&kb, len), 0);
	v = conv(&kb, kb_load(&kb, xb, bin(&kb, KO_ADD, base, get(&kb, j))), t);
	kb_set(&kb, acc, bin(&kb, KO_ADD, get(&kb, acc), v));
	kb_end(&kb);
	kb_set(&kb, mean, bin(&kb, KO_DIV, get(&kb, acc), num(&kb, t, (double)len)));

	kb_set(&kb, acc, num(&kb, t, 0));
	j = kb_for(&kb, "r", idx(&kb, 0), idx(&kb, len), 0);
	v = conv(&kb, kb_load(&kb, xb, bin(&kb, KO_ADD, base, get(&kb, j))), t);
	v = bin(&kb, KO_SUB, v, get(&kb, mean));
	kb_set(&kb, acc, bin(&kb, KO_ADD, get(&kb, acc), bin(&kb, KO_MUL, v, v)));
	kb_end(&kb);
	kb_set(&kb, inv, bin(&kb, KO_DIV, num(&kb, t, 1), kb_un(&kb, KO_SQRT,
	       bin(&kb, KO_ADD, bin(&kb, KO_DIV, get(&kb, acc), num(&kb, t, (double)len)),
	           num(&kb, t, eps)))));

	j = kb_for(&kb, "r", idx(&kb, 0), idx(&kb, len), 0);
	gr = bin(&kb, KO_MOD, get(&kb, row), idx(&kb, G));
	ch = bin(&kb, KO_ADD, bin(&kb, KO_MUL, gr, idx(&kb, cg)),
	         bin(&kb, KO_DIV, get(&kb, j), idx(&kb, S)));
	si = value_numel(NIN(g, n, 1)) == C ? ch : gr;
	bi = value_numel(NIN(g, n, 2)) == C ? ch : gr;
	v = conv(&kb, kb_load(&kb, xb, bin(&kb, KO_ADD, base, get(&kb, j))), t);
	v = bin(&kb, KO_MUL, bin(&kb, KO_SUB, v, get(&kb, mean)), get(&kb, inv));
	v = bin(&kb, KO_MUL, v, conv(&kb, kb_load(&kb, sb, si), t));
	v = bin(&kb, KO_ADD, v, conv(&kb, kb_load(&kb, bb, bi), t));
	kb_store(&kb, yb, bin(&kb, KO_ADD, base, get(&kb, j)), conv(&kb, v, ltype(y->dtype)));
	kb_end(&kb);

	kb_end(&kb);
	lower_end(lw, &kb);
	return BURN_OK;
}

/*
 * BatchNormalization.  Inference: y = (x - mean[c]) / sqrt(var[c] + eps) *
 * scale[c] + B[c], one parallel loop nest.  training_mode=1: per channel,
 * the batch mean and (population) variance over N and the spatial dims
 * normalise x, and the running statistics outputs are
 * input * momentum + batch * (1 - momentum).
 */
static int lower_batch_norm(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	const Value *x = NIN(g, n, 0), *y = NOUT(g, n, 0);
	int64_t N = x->dim[0], C = x->dim[1], S = prod(x->dim, 2, x->rank);
	double eps = attr_float(n, "epsilon", 1e-5), mom = attr_float(n, "momentum", 0.9);
	int train = attr_int(n, "training_mode", 0) != 0;
	int t = ctype(x->dtype), xb, b[5], yb, in, ic, is, acc, mean, var;
	KRef xi, v;
	KB kb;

	lower_begin(lw, &kb, n);
	xb = lower_in(lw, &kb, n, 0);
	for (int k = 1; k < 5; k++)
		b[k] = lower_in(lw, &kb, n, k);
	yb = lower_out(lw, &kb, n, 0);
#define P(k, c) conv(&kb, kb_load(&kb, b[k], c), t)
	if (!train) {
		in = kb_for(&kb, "i0", idx(&kb, 0), idx(&kb, N), KF_PARALLEL);
		ic = kb_for(&kb, "i1", idx(&kb, 0), idx(&kb, C), KF_PARALLEL);
		is = kb_for(&kb, "i2", idx(&kb, 0), idx(&kb, S), KF_PARALLEL);
		xi = bin(&kb, KO_ADD, bin(&kb, KO_MUL, bin(&kb, KO_ADD,
		         bin(&kb, KO_MUL, get(&kb, in), idx(&kb, C)), get(&kb, ic)), idx(&kb, S)),
		         get(&kb, is));
		v = bin(&kb, KO_SUB, conv(&kb, kb_load(&kb, xb, xi), t), P(3, get(&kb, ic)));
		v = bin(&kb, KO_DIV, v, kb_un(&kb, KO_SQRT, bin(&kb, KO_ADD, P(4, get(&kb, ic)),
		                                                num(&kb, t, eps))));
		v = bin(&kb, KO_ADD, bin(&kb, KO_MUL, v, P(1, get(&kb, ic))), P(2, get(&kb, ic)));
		kb_store(&kb, yb, xi, conv(&kb, v, ltype(y->dtype)));
		loops_close(&kb, 3);
		lower_end(lw, &kb);
		return BURN_OK;
	}

	ic = kb_for(&kb, "i0", idx(&kb, 0), idx(&kb, C), KF_PARALLEL);
	acc = kb_var(&kb, t, "acc");
	mean = kb_var(&kb, t, "mean");
	var = kb_var(&kb, t, "var");
#define XI() bin(&kb, KO_ADD, bin(&kb, KO_MUL, bin(&kb, KO_ADD, \
	bin(&kb, KO_MUL, get(&kb, in), idx(&kb, C)), get(&kb, ic)), idx(&kb, S)), get(&kb, is))
	kb_set(&kb, acc, num(&kb, t, 0));
	in = kb_for(&kb, "r0", idx(&kb, 0), idx(&kb, N), 0);
	is = kb_for(&kb, "r1", idx(&kb, 0), idx(&kb, S), 0);
	kb_set(&kb, acc, bin(&kb, KO_ADD, get(&kb, acc), conv(&kb, kb_load(&kb, xb, XI()), t)));
	loops_close(&kb, 2);
	kb_set(&kb, mean, bin(&kb, KO_DIV, get(&kb, acc), num(&kb, t, (double)(N * S))));
	kb_set(&kb, acc, num(&kb, t, 0));
	in = kb_for(&kb, "r0", idx(&kb, 0), idx(&kb, N), 0);
	is = kb_for(&kb, "r1", idx(&kb, 0), idx(&kb, S), 0);
	v = bin(&kb, KO_SUB, conv(&kb, kb_load(&kb, xb, XI()), t), get(&kb, mean));
	kb_set(&kb, acc, bin(&kb, KO_ADD, get(&kb, acc), bin(&kb, KO_MUL, v, v)));
	loops_close(&kb, 2);
	kb_set(&kb, var, bin(&kb, KO_DIV, get(&kb, acc), num(&kb, t, (double)(N * S))));
	in = kb_for(&kb, "r0", idx(&kb, 0), idx(&kb, N), 0);
	is = kb_for(&kb, "r1", idx(&kb, 0), idx(&kb, S), 0);
	v = bin(&kb, KO_SUB, conv(&kb, kb_load(&kb, xb, XI()), t), get(&kb, mean));
	v = bin(&kb, KO_DIV, v, kb_un(&kb, KO_SQRT, bin(&kb, KO_ADD, get(&kb, var),
	                                                num(&kb, t, eps))));
	v = bin(&kb, KO_ADD, bin(&kb, KO_MUL, v, P(1, get(&kb, ic))), P(2, get(&kb, ic)));
	kb_store(&kb, yb, XI(), conv(&kb, v, ltype(y->dtype)));
	loops_close(&kb, 2);
	for (int k = 1; k < 3; k++)
		if (has_out(n, k)) {
			int ob = lower_out(lw, &kb, n, k);
			v = bin(&kb, KO_ADD, bin(&kb, KO_MUL, P(k + 2, get(&kb, ic)), num(&kb, t, mom)),
			        bin(&kb, KO_MUL, get(&kb, k == 1 ? mean : var), num(&kb, t, 1 - mom)));
			kb_store(&kb, ob, get(&kb, ic), conv(&kb, v, ltype(NOUT(g, n, k)->dtype)));
		}
#undef XI
#undef P
	kb_end(&kb);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* LpNormalization: x / (sum |x|^p)^(1/p) along axis, p = 1 or 2; 0 where
 * the norm is 0, as the reference does. */
static int lower_lp_norm(Lower *lw, Node *n)
{
	Ctx *c = lw->ctx;
	Graph *g = lw->g;
	const Value *x = NIN(g, n, 0), *y = NOUT(g, n, 0);
	int64_t p = attr_int(n, "p", 2), outer, len, inner;
	int a, t = ctype(x->dtype), xb, yb, o, in, j, acc;
	KRef base, v;
	KB kb;

	TRY(need_float(c, x->dtype));
	if (p != 1 && p != 2)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "p = %lld", (long long)p);
	if (x->rank == 0)
		return burn_fail(c, BURN_ERR_SHAPE, "scalar input");
	TRY(norm_axis(c, attr_int(n, "axis", -1), x->rank, &a));
	outer = prod(x->dim, 0, a);
	len = x->dim[a];
	inner = prod(x->dim, a + 1, x->rank);

	lower_begin(lw, &kb, n);
	xb = lower_in(lw, &kb, n, 0);
	yb = lower_out(lw, &kb, n, 0);
	o = kb_for(&kb, "i0", idx(&kb, 0), idx(&kb, outer), KF_PARALLEL);
	in = kb_for(&kb, "i1", idx(&kb, 0), idx(&kb, inner), KF_PARALLEL);
	base = bin(&kb, KO_ADD, bin(&kb, KO_MUL, get(&kb, o), idx(&kb, len * inner)), get(&kb, in));
#define ELEM(jv) bin(&kb, KO_ADD, base, bin(&kb, KO_MUL, get(&kb, jv), idx(&kb, inner)))
	acc = kb_var(&kb, t, "acc");
	kb_set(&kb, acc, num(&kb, t, 0));
	j = kb_for(&kb, "r", idx(&kb, 0), idx(&kb, len), 0);
	v = conv(&kb, kb_load(&kb, xb, ELEM(j)), t);
	v = p == 1 ? kb_un(&kb, KO_ABS, v) : bin(&kb, KO_MUL, v, v);
	kb_set(&kb, acc, bin(&kb, KO_ADD, get(&kb, acc), v));
	kb_end(&kb);
	if (p == 2)
		kb_set(&kb, acc, kb_un(&kb, KO_SQRT, get(&kb, acc)));
	j = kb_for(&kb, "r", idx(&kb, 0), idx(&kb, len), 0);
	v = bin(&kb, KO_DIV, conv(&kb, kb_load(&kb, xb, ELEM(j)), t), get(&kb, acc));
	v = kb_select(&kb, bin(&kb, KO_EQ, get(&kb, acc), num(&kb, t, 0)), num(&kb, t, 0), v);
	kb_store(&kb, yb, ELEM(j), conv(&kb, v, ltype(y->dtype)));
	kb_end(&kb);
#undef ELEM
	loops_close(&kb, 2);
	lower_end(lw, &kb);
	return BURN_OK;
}

/*
 * LRN over the channels of x [N, C, ...]:
 *   y = x / (bias + alpha / size * sum(x[c'] ^ 2)) ^ beta
 * with c' in [c - floor((size-1)/2), c + ceil((size-1)/2)] within [0, C).
 */
static int lower_lrn(Lower *lw, Node *n)
{
	Ctx *c = lw->ctx;
	Graph *g = lw->g;
	const Value *x = NIN(g, n, 0), *y = NOUT(g, n, 0);
	int64_t size = attr_int(n, "size", 0), N, C, S;
	double alpha = attr_float(n, "alpha", 1e-4), beta = attr_float(n, "beta", 0.75);
	double bias = attr_float(n, "bias", 1.0);
	int t = ctype(x->dtype), xb, yb, in, ic, is, j, acc;
	KRef cc, xi, v;
	KB kb;

	TRY(need_float(c, x->dtype));
	if (x->rank < 2)
		return burn_fail(c, BURN_ERR_SHAPE, "rank %d < 2", x->rank);
	if (size <= 0)
		return burn_fail(c, BURN_ERR_INVALID, "size %lld", (long long)size);
	N = x->dim[0];
	C = x->dim[1];
	/* the window is a loop of `size` steps per element: a window wider
	 * than the channels on both sides reads nothing more, and no tensor
	 * justifies more steps (size 2^62 would never end) */
	if (size > 2 * C + 1)
		return burn_fail(c, BURN_ERR_LIMIT, "attribute 'size' = %lld is wider "
		                 "than the %lld channels can use (at most 2*C+1 = %lld)",
		                 (long long)size, (long long)C, (long long)(2 * C + 1));
	S = prod(x->dim, 2, x->rank);

	lower_begin(lw, &kb, n);
	xb = lower_in(lw, &kb, n, 0);
	yb = lower_out(lw, &kb, n, 0);
	in = kb_for(&kb, "i0", idx(&kb, 0), idx(&kb, N), KF_PARALLEL);
	ic = kb_for(&kb, "i1", idx(&kb, 0), idx(&kb, C), KF_PARALLEL);
	is = kb_for(&kb, "i2", idx(&kb, 0), idx(&kb, S), KF_PARALLEL);
	acc = kb_var(&kb, t, "acc");
	kb_set(&kb, acc, num(&kb, t, 0));
	j = kb_for(&kb, "r", idx(&kb, 0), idx(&kb, size), 0);
	cc = bin(&kb, KO_ADD, get(&kb, ic), bin(&kb, KO_SUB, get(&kb, j), idx(&kb, (size - 1) / 2)));
	kb_if(&kb, bin(&kb, KO_AND, bin(&kb, KO_GE, cc, idx(&kb, 0)), bin(&kb, KO_LT, cc, idx(&kb, C))));
	xi = bin(&kb, KO_ADD, bin(&kb, KO_MUL, bin(&kb, KO_ADD,
	         bin(&kb, KO_MUL, get(&kb, in), idx(&kb, C)), cc), idx(&kb, S)), get(&kb, is));
	v = conv(&kb, kb_load(&kb, xb, xi), t);
	kb_set(&kb, acc, bin(&kb, KO_ADD, get(&kb, acc), bin(&kb, KO_MUL, v, v)));
	kb_end(&kb);
	kb_end(&kb);
	xi = bin(&kb, KO_ADD, bin(&kb, KO_MUL, bin(&kb, KO_ADD,
	         bin(&kb, KO_MUL, get(&kb, in), idx(&kb, C)), get(&kb, ic)), idx(&kb, S)), get(&kb, is));
	v = bin(&kb, KO_ADD, num(&kb, t, bias),
	        bin(&kb, KO_MUL, num(&kb, t, alpha / (double)size), get(&kb, acc)));
	v = bin(&kb, KO_DIV, conv(&kb, kb_load(&kb, xb, xi), t),
	        bin(&kb, KO_POW, v, num(&kb, t, beta)));
	kb_store(&kb, yb, xi, conv(&kb, v, ltype(y->dtype)));
	loops_close(&kb, 3);
	lower_end(lw, &kb);
	return BURN_OK;
}

int lower_norm(Lower *lw, Node *n)
{
	switch (n->op) {
	case OP_LayerNormalization:
	case OP_RMSNormalization:
	case OP_MeanVarianceNormalization:
		return lower_axes_norm(lw, n);
	case OP_GroupNormalization:
	case OP_InstanceNormalization:
		return lower_group_norm(lw, n);
	case OP_BatchNormalization:
		return lower_batch_norm(lw, n);
	case OP_LpNormalization:
		return lower_lp_norm(lw, n);
	case OP_LRN:
		return lower_lrn(lw, n);
	}
	return burn_fail(lw->ctx, BURN_ERR_INTERNAL, "not a normalisation");
}

/* ---- CumSum, CumProd ----------------------------------------------------- */

/* Running sum/product along a constant axis; exclusive stores the running
 * value before adding the element, reverse walks the axis backwards. */
int lower_scan(Lower *lw, Node *n)
{
	Ctx *c = lw->ctx;
	Graph *g = lw->g;
	const Value *x = NIN(g, n, 0), *y = NOUT(g, n, 0), *av;
	int excl = attr_int(n, "exclusive", 0) != 0, rev = attr_int(n, "reverse", 0) != 0;
	int a, t = ltype(x->dtype), xb, yb, o, in, j, acc, mul = n->op == OP_CumProd;
	int64_t outer, len, inner;
	KRef jj, ei, nv;
	KB kb;

	TRY(need_number(c, x->dtype));
	TRY(need_const(c, g, n, 1, &av));
	if (value_numel(av) != 1)
		return burn_fail(c, BURN_ERR_INVALID, "axis must be a scalar");
	if (x->rank == 0)
		return burn_fail(c, BURN_ERR_SHAPE, "scalar input");
	TRY(norm_axis(c, value_get_i(av, 0), x->rank, &a));
	outer = prod(x->dim, 0, a);
	len = x->dim[a];
	inner = prod(x->dim, a + 1, x->rank);

	lower_begin(lw, &kb, n);
	xb = lower_in(lw, &kb, n, 0);
	yb = lower_out(lw, &kb, n, 0);
	o = kb_for(&kb, "i0", idx(&kb, 0), idx(&kb, outer), KF_PARALLEL);
	in = kb_for(&kb, "i1", idx(&kb, 0), idx(&kb, inner), KF_PARALLEL);
	acc = kb_var(&kb, t, "acc");
	kb_set(&kb, acc, num(&kb, t, mul));
	j = kb_for(&kb, "r", idx(&kb, 0), idx(&kb, len), 0);
	jj = rev ? bin(&kb, KO_SUB, idx(&kb, len - 1), get(&kb, j)) : get(&kb, j);
	ei = bin(&kb, KO_ADD, bin(&kb, KO_ADD, bin(&kb, KO_MUL, get(&kb, o), idx(&kb, len * inner)),
	         bin(&kb, KO_MUL, jj, idx(&kb, inner))), get(&kb, in));
	nv = bin(&kb, mul ? KO_MUL : KO_ADD, get(&kb, acc), kb_load(&kb, xb, ei));
	if (excl) {
		kb_store(&kb, yb, ei, get(&kb, acc));
		kb_set(&kb, acc, nv);
	} else {
		kb_set(&kb, acc, nv);
		kb_store(&kb, yb, ei, get(&kb, acc));
	}
	loops_close(&kb, 3);
	(void)y;
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- TopK ---------------------------------------------------------------- */

int infer_topk(Ctx *c, Graph *g, Node *n)
{
	const Value *x = NIN(g, n, 0), *kv;
	int64_t dim[BURN_MAX_RANK], k;
	int a;

	if (!x || x->rank == 0)
		return burn_fail(c, BURN_ERR_SHAPE, "TopK needs a tensor of rank >= 1");
	TRY(need_number(c, x->dtype));
	if (g->opset < 10) {
		k = attr_int(n, "k", -1);
	} else {
		TRY(need_const(c, g, n, 1, &kv));
		if (value_numel(kv) != 1)
			return burn_fail(c, BURN_ERR_INVALID, "K must have one element");
		k = value_get_i(kv, 0);
	}
	TRY(norm_axis(c, attr_int(n, "axis", -1), x->rank, &a));
	if (k < 0 || k > x->dim[a])
		return burn_fail(c, BURN_ERR_INVALID, "K = %lld out of range [0, %lld]",
		                 (long long)k, (long long)x->dim[a]);
	for (int i = 0; i < x->rank; i++)
		dim[i] = i == a ? k : x->dim[i];
	set_out(NOUT(g, n, 0), x->dtype, x->rank, dim);
	if (has_out(n, 1))
		set_out(NOUT(g, n, 1), DT_I64, x->rank, dim);
	return BURN_OK;
}

/*
 * TopK by repeated selection, O(K * len) per row and no scratch: pick r is
 * the best element that comes after pick r-1 in the total order "larger
 * value first (smaller, if !largest), then lower index first", which is the
 * order ONNX specifies, so the output is always sorted.
 */
int lower_topk(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	const Value *x = NIN(g, n, 0), *y = NOUT(g, n, 0);
	int largest = attr_int(n, "largest", 1) != 0, a = 0;
	int t = ltype(x->dtype), xb, yb, ib = -1, o, in, r, j, pv, pi, bv, bi;
	int64_t outer, len, inner, k;
	KRef v, valid, better, oi;
	KB kb;

	TRY(norm_axis(lw->ctx, attr_int(n, "axis", -1), x->rank, &a));
	k = y->dim[a];
	outer = prod(x->dim, 0, a);
	len = x->dim[a];
	inner = prod(x->dim, a + 1, x->rank);

	lower_begin(lw, &kb, n);
	xb = lower_in(lw, &kb, n, 0);
	yb = lower_out(lw, &kb, n, 0);
	if (has_out(n, 1))
		ib = lower_out(lw, &kb, n, 1);
	o = kb_for(&kb, "i0", idx(&kb, 0), idx(&kb, outer), KF_PARALLEL);
	in = kb_for(&kb, "i1", idx(&kb, 0), idx(&kb, inner), KF_PARALLEL);
	pv = kb_var(&kb, t, "pv");
	pi = kb_var(&kb, DT_I64, "pi");
	bv = kb_var(&kb, t, "bv");
	bi = kb_var(&kb, DT_I64, "bi");
	kb_set(&kb, pv, num(&kb, t, 0));
	kb_set(&kb, pi, idx(&kb, -1));
	r = kb_for(&kb, "r", idx(&kb, 0), idx(&kb, k), 0);
	kb_set(&kb, bv, num(&kb, t, 0));
	kb_set(&kb, bi, idx(&kb, -1));
	j = kb_for(&kb, "j", idx(&kb, 0), idx(&kb, len), 0);
	v = kb_load(&kb, xb, bin(&kb, KO_ADD, bin(&kb, KO_ADD,
	        bin(&kb, KO_MUL, get(&kb, o), idx(&kb, len * inner)),
	        bin(&kb, KO_MUL, get(&kb, j), idx(&kb, inner))), get(&kb, in)));
	/* after the previous pick: worse value, or equal value and higher index */
	valid = bin(&kb, KO_OR, bin(&kb, KO_LT, get(&kb, pi), idx(&kb, 0)),
	            bin(&kb, KO_OR, bin(&kb, largest ? KO_LT : KO_GT, v, get(&kb, pv)),
	                bin(&kb, KO_AND, bin(&kb, KO_EQ, v, get(&kb, pv)),
	                    bin(&kb, KO_GT, get(&kb, j), get(&kb, pi)))));
	better = bin(&kb, KO_OR, bin(&kb, KO_LT, get(&kb, bi), idx(&kb, 0)),
	             bin(&kb, largest ? KO_GT : KO_LT, v, get(&kb, bv)));
	kb_if(&kb, bin(&kb, KO_AND, valid, better));
	kb_set(&kb, bv, v);
	kb_set(&kb, bi, get(&kb, j));
	kb_end(&kb);
	kb_end(&kb);
	oi = bin(&kb, KO_ADD, bin(&kb, KO_ADD, bin(&kb, KO_MUL, get(&kb, o), idx(&kb, k * inner)),
	         bin(&kb, KO_MUL, get(&kb, r), idx(&kb, inner))), get(&kb, in));
	kb_store(&kb, yb, oi, get(&kb, bv));
	if (ib >= 0)
		kb_store(&kb, ib, oi, get(&kb, bi));
	kb_set(&kb, pv, get(&kb, bv));
	kb_set(&kb, pi, get(&kb, bi));
	loops_close(&kb, 3);
	lower_end(lw, &kb);
	return BURN_OK;
}

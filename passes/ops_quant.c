/*
 * ops_quant.c - linear quantization: QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, QLinearMatMul, QLinearConv.
 *
 * Quantized types are the 8-, 16- and 32-bit integers and the float8
 * types but float8e8m0; int4 and int2 are not (the loader already rejects those dtypes).
 * Float8 quantization is y = convert(x / scale + zp): rounding to nearest
 * even, saturating unless saturate=0 (then out of range values become inf
 * or NaN per format); dequantization is (x - zp) * scale in floats.  Scales and zero
 * points are per tensor (one element), per axis (1-D along `axis`) or
 * blocked (x's shape with dim[axis] divided by block_size, rounded up).
 *
 * Arithmetic follows the ONNX reference: x / scale in the scale's type
 * (f16 results rounded to f16), then round half to even, add the zero
 * point and saturate to the output type's range.  The saturation is done
 * in f64 before the float->int cast, so the cast is never out of range
 * (C leaves that undefined).  Integer accumulations (QLinear*) use i64,
 * then scale by a*b/y computed in the scales' type, like the reference.
 */
#include <string.h>
#include <math.h>
#include "lower.h"

/* ---- small helpers ---------------------------------------------------- */

static const Value *in_opt(Graph *g, Node *n, int k)
{
	return k >= 0 && k < n->nin && n->in[k] >= 0 ? GV(g, n->in[k]) : NULL;
}

static Value *out_opt(Graph *g, Node *n, int k)
{
	return k < n->nout && n->out[k] >= 0 ? GV(g, n->out[k]) : NULL;
}

/* Expression dtype of a buffer: f16/bf16 load as f32. */
static int edt(int dt)
{
	return dtype_expr(dt);
}

/* The quantized integer types (up to 32 bits, packed ones included) and
 * their ranges. */
static int qrange(int dt, double *lo, double *hi)
{
	int b = dtype_bits(dt);

	if (!dtype_is_int(dt) || b > 32)
		return 0;
	*lo = dtype_is_signed(dt) ? -ldexp(1, b - 1) : 0;
	*hi = dtype_is_signed(dt) ? ldexp(1, b - 1) - 1 : ldexp(1, b) - 1;
	return 1;
}

/* A float type quantization rounds to: float8 but e8m0, float4e2m1. */
static int qfloat(int dt)
{
	return dtype_is_storage(dt) && dtype_cast_only(dt) && dt != DT_F8E8M0;
}

/* Round a computed f32 value to the precision of dt when dt is 16-bit, the
 * way numpy's f16 arithmetic rounds every operation. */
static KRef round_to(KB *kb, int dt, KRef e)
{
	return dt == DT_F16 || dt == DT_BF16 ? kb_cast(kb, dt, e) : e;
}

/* saturate(round(q) + zp) as an expression of dtype out: q is a float
 * expression, zp an integer or float expression or 0. */
static KRef quantize(KB *kb, KRef q, KRef zp, int out)
{
	double lo = 0, hi = 0;

	qrange(out, &lo, &hi);
	q = kb_cast(kb, DT_F64, kb_un(kb, KO_ROUND, q));
	if (zp)
		q = kb_bin(kb, KO_ADD, q, kb_cast(kb, DT_F64, zp));
	q = kb_bin(kb, KO_MIN, kb_bin(kb, KO_MAX, q, kb_const_f(kb, DT_F64, lo)),
	           kb_const_f(kb, DT_F64, hi));
	return kb_cast(kb, out, q);
}

/*
 * How a scale (or zero point) s lines up with x: per tensor, per axis or
 * blocked.  qmap checks the shapes; qindex is the element of s that goes
 * with x's element at loop vars[].
 */
typedef struct QMap {
	int kind;        /* 0 per tensor, 1 per axis, 2 blocked */
	int axis;
	int64_t block;
	int64_t stride[BURN_MAX_RANK];  /* s's strides (blocked) */
} QMap;

static int qmap(Ctx *c, const Value *x, const Value *s, Node *n, QMap *m)
{
	int64_t block = attr_int(n, "block_size", 0);

	memset(m, 0, sizeof *m);
	if (value_numel(s) == 1 && block <= 0)
		return BURN_OK;
	TRY(norm_axis(c, attr_int(n, "axis", 1), x->rank, &m->axis));
	if (x->rank == 0)
		return burn_fail(c, BURN_ERR_SHAPE, "per-axis scale for a scalar");
	if (block <= 0) {
		if (s->rank != 1 || s->dim[0] != x->dim[m->axis])
			return burn_fail(c, BURN_ERR_SHAPE, "per-axis scale has %lld "
			                 "elements, axis %d has %lld",
			                 (long long)value_numel(s), m->axis,
			                 (long long)x->dim[m->axis]);
		m->kind = 1;
		return BURN_OK;
	}
	if (s->rank != x->rank)
		return burn_fail(c, BURN_ERR_SHAPE, "blocked scale has rank %d, input "
		                 "%d", s->rank, x->rank);
	for (int i = 0; i < x->rank; i++) {
		int64_t want = i == m->axis ? (x->dim[i] + block - 1) / block : x->dim[i];
		if (s->dim[i] != want)
			return burn_fail(c, BURN_ERR_SHAPE, "blocked scale dim %d is %lld, "
			                 "expected %lld", i, (long long)s->dim[i],
			                 (long long)want);
	}
	m->kind = 2;
	m->block = block;
	shape_strides(s->rank, s->dim, m->stride);
	return BURN_OK;
}

static KRef qindex(KB *kb, const QMap *m, int rank, const int *vars)
{
	KRef e = kb_idx(kb, 0);

	if (m->kind == 1)
		return kb_get(kb, vars[m->axis]);
	if (m->kind == 0)
		return e;
	for (int i = 0; i < rank; i++) {
		KRef v = kb_get(kb, vars[i]);
		if (i == m->axis)
			v = kb_bin(kb, KO_DIV, v, kb_idx(kb, m->block));
		e = kb_bin(kb, KO_ADD, e, kb_bin(kb, KO_MUL, v, kb_idx(kb, m->stride[i])));
	}
	return e;
}

/* A zero point must have its scale's shape. */
static int check_zp(Ctx *c, const Value *s, const Value *zp)
{
	if (!zp)
		return BURN_OK;
	if (value_numel(zp) != value_numel(s))
		return burn_fail(c, BURN_ERR_SHAPE, "zero point has %lld elements, "
		                 "scale %lld", (long long)value_numel(zp),
		                 (long long)value_numel(s));
	return BURN_OK;
}

static int need_in(Ctx *c, Graph *g, Node *n, int k, const Value **out)
{
	*out = in_opt(g, n, k);
	if (!*out)
		return burn_fail(c, BURN_ERR_INVALID, "input %d is required", k);
	return BURN_OK;
}

/* ---- QuantizeLinear, DequantizeLinear ------------------------------- */

/* QuantizeLinear(x, y_scale, y_zero_point?) -> y: output_dtype, else the
 * zero point's type, else u8. */
int infer_quant(Ctx *c, Graph *g, Node *n)
{
	const Value *x, *s, *zp = in_opt(g, n, 2);
	int out = (int)attr_int(n, "output_dtype", 0);
	double lo, hi;
	QMap m;

	TRY(need_in(c, g, n, 0, &x));
	TRY(need_in(c, g, n, 1, &s));
	if (zp) {
		if (out && out != zp->dtype)
			return burn_fail(c, BURN_ERR_INVALID, "output_dtype %d differs "
			                 "from the zero point's %s", out,
			                 dtype_name(zp->dtype));
		out = zp->dtype;
	}
	if (!out)
		out = DT_U8;
	if (!qrange(out, &lo, &hi) && !qfloat(out))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "quantized type %s (%d) is "
		                 "not supported", dtype_name(out), out);
	if (!dtype_is_float(s->dtype))
		return burn_fail(c, BURN_ERR_INVALID, "scale must be float, is %s",
		                 dtype_name(s->dtype));
	if (!dtype_is_float(x->dtype) && x->dtype != DT_I32)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "input type %s",
		                 dtype_name(x->dtype));
	TRY(qmap(c, x, s, n, &m));
	TRY(check_zp(c, s, zp));
	set_out(NOUT(g, n, 0), out, x->rank, x->dim);
	return BURN_OK;
}

int lower_quant(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	const Value *x = NIN(g, n, 0), *s = NIN(g, n, 1), *zp = in_opt(g, n, 2);
	Value *y = NOUT(g, n, 0);
	int prec = (int)attr_int(n, "precision", 0);
	int vars[BURN_MAX_RANK], bx, bs, bz = -1, by, ct;
	int64_t st[BURN_MAX_RANK];
	KRef xi, si, q, z = 0;
	QMap m;
	KB kb;

	TRY(qmap(lw->ctx, x, s, n, &m));
	/* the computing type: the scale's, f64 for integer inputs */
	ct = !dtype_is_float(x->dtype) || x->dtype == DT_F64 || s->dtype == DT_F64
	   ? DT_F64 : DT_F32;
	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	bs = lower_in(lw, &kb, n, 1);
	if (zp)
		bz = lower_in(lw, &kb, n, 2);
	by = lower_out(lw, &kb, n, 0);
	shape_strides(x->rank, x->dim, st);
	loops_open(&kb, x->rank, x->dim, vars);
	xi = index_linear(&kb, x->rank, vars, st);
	si = qindex(&kb, &m, x->rank, vars);
	q = kb_bin(&kb, KO_DIV, kb_cast(&kb, ct, kb_load(&kb, bx, xi)),
	           kb_cast(&kb, ct, kb_load(&kb, bs, si)));
	if (!prec)
		q = round_to(&kb, s->dtype, q);
	else if (prec == DT_F16 || prec == DT_BF16)
		q = kb_cast(&kb, prec, q);
	if (zp)
		z = kb_load(&kb, bz, si);
	if (qfloat(y->dtype)) {
		if (z)
			q = kb_bin(&kb, KO_ADD, q, kb_cast(&kb, kb_dtype(kb.k, q), z));
		q = kb_cast(&kb, DT_F32, q);
		if (attr_int(n, "saturate", 1))
			q = kb_cast(&kb, y->dtype, q);
	} else
		q = quantize(&kb, q, z, y->dtype);
	kb_store(&kb, by, xi, q);
	loops_close(&kb, x->rank);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* DequantizeLinear(x, x_scale, x_zero_point?) -> y = (x - zp) * scale, of
 * the scale's type (or output_dtype). */
int infer_dequant(Ctx *c, Graph *g, Node *n)
{
	const Value *x, *s, *zp = in_opt(g, n, 2);
	int out = (int)attr_int(n, "output_dtype", 0);
	double lo, hi;
	QMap m;

	TRY(need_in(c, g, n, 0, &x));
	TRY(need_in(c, g, n, 1, &s));
	if (!qrange(x->dtype, &lo, &hi) &&
	    !qfloat(x->dtype))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "quantized type %s is not "
		                 "supported", dtype_name(x->dtype));
	if (!dtype_is_float(s->dtype))
		return burn_fail(c, BURN_ERR_INVALID, "scale must be float, is %s",
		                 dtype_name(s->dtype));
	if (zp && zp->dtype != x->dtype)
		return burn_fail(c, BURN_ERR_INVALID, "zero point is %s, input %s",
		                 dtype_name(zp->dtype), dtype_name(x->dtype));
	if (out && !dtype_is_float(out))
		return burn_fail(c, BURN_ERR_INVALID, "output_dtype %d is not float", out);
	TRY(qmap(c, x, s, n, &m));
	TRY(check_zp(c, s, zp));
	set_out(NOUT(g, n, 0), out ? out : s->dtype, x->rank, x->dim);
	return BURN_OK;
}

int lower_dequant(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	const Value *x = NIN(g, n, 0), *s = NIN(g, n, 1), *zp = in_opt(g, n, 2);
	Value *y = NOUT(g, n, 0);
	int vars[BURN_MAX_RANK], bx, bs, bz = -1, by, ct = edt(s->dtype), it;
	int64_t st[BURN_MAX_RANK];
	KRef xi, si, d;
	QMap m;
	KB kb;

	TRY(qmap(lw->ctx, x, s, n, &m));
	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	bs = lower_in(lw, &kb, n, 1);
	if (zp)
		bz = lower_in(lw, &kb, n, 2);
	by = lower_out(lw, &kb, n, 0);
	shape_strides(x->rank, x->dim, st);
	loops_open(&kb, x->rank, x->dim, vars);
	xi = index_linear(&kb, x->rank, vars, st);
	si = qindex(&kb, &m, x->rank, vars);
	/* integers subtract exactly in i64; float8 loads are f32 */
	it = qfloat(x->dtype) ? ct : DT_I64;
	d = kb_cast(&kb, it, kb_load(&kb, bx, xi));
	if (zp)
		d = kb_bin(&kb, KO_SUB, d, kb_cast(&kb, it, kb_load(&kb, bz, si)));
	d = kb_bin(&kb, KO_MUL, kb_cast(&kb, ct, d), kb_load(&kb, bs, si));
	kb_store(&kb, by, xi, kb_cast(&kb, edt(y->dtype), d));
	loops_close(&kb, x->rank);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- DynamicQuantizeLinear ------------------------------------------ */

/* DynamicQuantizeLinear(x) -> y u8, y_scale f32 scalar, y_zero_point u8
 * scalar: the range [min(0, min x), max(0, max x)] mapped onto 0..255. */
int infer_dynquant(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	Value *o;

	TRY(need_in(c, g, n, 0, &x));
	if (x->dtype != DT_F32)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "input type %s",
		                 dtype_name(x->dtype));
	set_out(NOUT(g, n, 0), DT_U8, x->rank, x->dim);
	if ((o = out_opt(g, n, 1)))
		set_out(o, DT_F32, 0, NULL);
	if ((o = out_opt(g, n, 2)))
		set_out(o, DT_U8, 0, NULL);
	return BURN_OK;
}

/* One sequential kernel: a min/max pass, then the quantizing pass. */
int lower_dynquant(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	int64_t len = value_numel(NIN(g, n, 0));
	int bx, by, bs = -1, bz = -1, vmin, vmax, vs, vz, i;
	KRef x, s;
	KB kb;

	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	by = lower_out(lw, &kb, n, 0);
	if (out_opt(g, n, 1))
		bs = lower_out(lw, &kb, n, 1);
	if (out_opt(g, n, 2))
		bz = lower_out(lw, &kb, n, 2);
	vmin = kb_var(&kb, DT_F32, "lo");
	vmax = kb_var(&kb, DT_F32, "hi");
	vs = kb_var(&kb, DT_F32, "scale");
	vz = kb_var(&kb, DT_F32, "zp");
	kb_set(&kb, vmin, kb_const_f(&kb, DT_F32, 0));
	kb_set(&kb, vmax, kb_const_f(&kb, DT_F32, 0));
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, len), 0);
	x = kb_load(&kb, bx, kb_get(&kb, i));
	kb_set(&kb, vmin, kb_bin(&kb, KO_MIN, kb_get(&kb, vmin), x));
	kb_set(&kb, vmax, kb_bin(&kb, KO_MAX, kb_get(&kb, vmax), x));
	kb_end(&kb);
	kb_set(&kb, vs, kb_bin(&kb, KO_DIV, kb_bin(&kb, KO_SUB, kb_get(&kb, vmax),
	                                        kb_get(&kb, vmin)),
	                       kb_const_f(&kb, DT_F32, 255)));
	/* all zeros: scale 0; divide by 1 instead so that y and zp are 0 */
	s = kb_select(&kb, kb_bin(&kb, KO_EQ, kb_get(&kb, vs), kb_const_f(&kb, DT_F32, 0)),
	              kb_const_f(&kb, DT_F32, 1), kb_get(&kb, vs));
	kb_set(&kb, vz, kb_cast(&kb, DT_F32, quantize(&kb,
	       kb_bin(&kb, KO_SUB, kb_const_f(&kb, DT_F32, 0),
	              kb_bin(&kb, KO_DIV, kb_get(&kb, vmin), s)), 0, DT_U8)));
	if (bs >= 0)
		kb_store(&kb, bs, kb_idx(&kb, 0), kb_get(&kb, vs));
	if (bz >= 0)
		kb_store(&kb, bz, kb_idx(&kb, 0), kb_cast(&kb, DT_U8, kb_get(&kb, vz)));
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, len), KF_PARALLEL);
	x = kb_bin(&kb, KO_DIV, kb_load(&kb, bx, kb_get(&kb, i)), s);
	kb_store(&kb, by, kb_get(&kb, i), quantize(&kb, x, kb_get(&kb, vz), DT_U8));
	kb_end(&kb);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- QLinearMatMul, QLinearConv -------------------------------------- */

/* The requantizing factor a_scale * b_scale / y_scale, each operation in
 * the scales' type; ia/ib index a_scale/b_scale. */
static KRef qfactor(KB *kb, int dt, int ba, KRef ia, int bb, KRef ib, int by)
{
	KRef f = round_to(kb, dt, kb_bin(kb, KO_MUL, kb_load(kb, ba, ia),
	                                 kb_load(kb, bb, ib)));
	return round_to(kb, dt, kb_bin(kb, KO_DIV, f, kb_load(kb, by, kb_idx(kb, 0))));
}

/* Index of a scale or zero point of numel m that may be per-tensor (m = 1)
 * or follow loop variable v. */
static KRef per(KB *kb, const Value *s, int v)
{
	return !s || value_numel(s) == 1 ? kb_idx(kb, 0) : kb_get(kb, v);
}

static int check_q(Ctx *c, const Value *q, const Value *s, const Value *zp,
                   int64_t along, const char *what)
{
	if (!q)
		return BURN_OK;
	if (!qrange(q->dtype, &(double){0}, &(double){0}) || q->dtype == DT_I32)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s: quantized type %s",
		                 what, dtype_name(q->dtype));
	if (!s || !dtype_is_float(s->dtype))
		return burn_fail(c, BURN_ERR_INVALID, "%s: scale must be float", what);
	if (value_numel(s) != 1 && value_numel(s) != along)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s: scale of %lld elements",
		                 what, (long long)value_numel(s));
	if (zp && value_numel(zp) != value_numel(s))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s: zero point of %lld "
		                 "elements", what, (long long)value_numel(zp));
	if (zp && zp->dtype != q->dtype)
		return burn_fail(c, BURN_ERR_INVALID, "%s: zero point type %s", what,
		                 dtype_name(zp->dtype));
	return BURN_OK;
}

/* QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) with
 * numpy matmul shapes (both operands of rank >= 2 here, batch dims
 * broadcast). */
int infer_qmatmul(Ctx *c, Graph *g, Node *n)
{
	const Value *a, *b, *ys, *yz = in_opt(g, n, 7);
	int64_t dim[BURN_MAX_RANK];
	int r;

	TRY(need_in(c, g, n, 0, &a));
	TRY(need_in(c, g, n, 3, &b));
	TRY(need_in(c, g, n, 6, &ys));
	if (a->rank < 2 || b->rank < 2)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "operands of rank %d and %d "
		                 "(need >= 2)", a->rank, b->rank);
	if (a->dim[a->rank - 1] != b->dim[b->rank - 2])
		return burn_fail(c, BURN_ERR_SHAPE, "inner dims %lld and %lld differ",
		                 (long long)a->dim[a->rank - 1],
		                 (long long)b->dim[b->rank - 2]);
	TRY(check_q(c, a, in_opt(g, n, 1), in_opt(g, n, 2), a->dim[a->rank - 2], "a"));
	TRY(check_q(c, b, in_opt(g, n, 4), in_opt(g, n, 5), b->dim[b->rank - 1], "b"));
	if (value_numel(ys) != 1 || (yz && value_numel(yz) != 1))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "y scale must be per tensor");
	TRY(shape_broadcast(c, a->rank - 2, a->dim, b->rank - 2, b->dim, &r, dim));
	dim[r] = a->dim[a->rank - 2];
	dim[r + 1] = b->dim[b->rank - 1];
	set_out(NOUT(g, n, 0), yz ? yz->dtype : a->dtype, r + 2, dim);
	return BURN_OK;
}

/* Offset of the batch part of operand v (rank >= 2) at output loop vars
 * (output rank orank, batch dims broadcast). */
static KRef batch_off(KB *kb, const Value *v, int orank, const int *vars)
{
	int64_t st[BURN_MAX_RANK];
	int nb = v->rank - 2, off = orank - 2 - nb;
	KRef e = kb_idx(kb, 0);

	shape_strides(v->rank, v->dim, st);
	for (int i = 0; i < nb; i++)
		if (v->dim[i] != 1)
			e = kb_bin(kb, KO_ADD, e, kb_bin(kb, KO_MUL, kb_get(kb, vars[off + i]),
			                                  kb_idx(kb, st[i])));
	return e;
}

int lower_qmatmul(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	const Value *a = NIN(g, n, 0), *b = NIN(g, n, 3), *as = NIN(g, n, 1);
	const Value *bs = NIN(g, n, 4), *az = in_opt(g, n, 2), *bz = in_opt(g, n, 5);
	const Value *yz = in_opt(g, n, 7);
	Value *y = NOUT(g, n, 0);
	int64_t M = a->dim[a->rank - 2], K = a->dim[a->rank - 1];
	int64_t N = b->dim[b->rank - 1], yst[BURN_MAX_RANK];
	int vars[BURN_MAX_RANK], r = y->rank, ba, bb, bas, bbs, bys, baz = -1;
	int bbz = -1, byz = -1, bo, acc, k, sdt = as->dtype;
	KRef ea, eb, av, bv, f;
	KB kb;

	lower_begin(lw, &kb, n);
	ba = lower_in(lw, &kb, n, 0);
	bas = lower_in(lw, &kb, n, 1);
	if (az)
		baz = lower_in(lw, &kb, n, 2);
	bb = lower_in(lw, &kb, n, 3);
	bbs = lower_in(lw, &kb, n, 4);
	if (bz)
		bbz = lower_in(lw, &kb, n, 5);
	bys = lower_in(lw, &kb, n, 6);
	if (yz)
		byz = lower_in(lw, &kb, n, 7);
	bo = lower_out(lw, &kb, n, 0);
	acc = kb_var(&kb, DT_I64, "acc");
	shape_strides(r, y->dim, yst);
	loops_open(&kb, r, y->dim, vars);
	kb_set(&kb, acc, kb_idx(&kb, 0));
	k = kb_for(&kb, "k", kb_idx(&kb, 0), kb_idx(&kb, K), 0);
	ea = kb_bin(&kb, KO_ADD, batch_off(&kb, a, r, vars),
	            kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, kb_get(&kb, vars[r - 2]),
	                                       kb_idx(&kb, K)), kb_get(&kb, k)));
	eb = kb_bin(&kb, KO_ADD, batch_off(&kb, b, r, vars),
	            kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, kb_get(&kb, k),
	                                       kb_idx(&kb, N)), kb_get(&kb, vars[r - 1])));
	av = kb_cast(&kb, DT_I64, kb_load(&kb, ba, ea));
	if (az)
		av = kb_bin(&kb, KO_SUB, av, kb_cast(&kb, DT_I64, kb_load(&kb, baz,
		            per(&kb, az, vars[r - 2]))));
	bv = kb_cast(&kb, DT_I64, kb_load(&kb, bb, eb));
	if (bz)
		bv = kb_bin(&kb, KO_SUB, bv, kb_cast(&kb, DT_I64, kb_load(&kb, bbz,
		            per(&kb, bz, vars[r - 1]))));
	kb_set(&kb, acc, kb_bin(&kb, KO_ADD, kb_get(&kb, acc), kb_bin(&kb, KO_MUL, av, bv)));
	kb_end(&kb);
	(void)M;
	f = qfactor(&kb, sdt, bas, per(&kb, as, vars[r - 2]), bbs,
	            per(&kb, bs, vars[r - 1]), bys);
	f = kb_bin(&kb, KO_MUL, kb_cast(&kb, DT_F64, kb_get(&kb, acc)),
	           kb_cast(&kb, DT_F64, f));
	kb_store(&kb, bo, index_linear(&kb, r, vars, yst),
	         quantize(&kb, f, yz ? kb_load(&kb, byz, kb_idx(&kb, 0)) : 0, y->dtype));
	loops_close(&kb, r);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* Conv geometry shared by infer and lower. */
typedef struct ConvGeo {
	int ns;                           /* spatial dims */
	int64_t group;
	int64_t k[BURN_MAX_RANK], s[BURN_MAX_RANK], d[BURN_MAX_RANK];
	int64_t pb[BURN_MAX_RANK];        /* padding at the start */
	int64_t out[BURN_MAX_RANK];
} ConvGeo;

static int conv_geo(Ctx *c, Node *n, const Value *x, const Value *w, ConvGeo *cg)
{
	const int64_t *p;
	const char *ap = attr_str(n, "auto_pad", "NOTSET");
	int ns = x->rank - 2, m;

	if (ns < 1 || w->rank != x->rank)
		return burn_fail(c, BURN_ERR_SHAPE, "input rank %d, weight rank %d",
		                 x->rank, w->rank);
	cg->ns = ns;
	cg->group = attr_int(n, "group", 1);
	if (cg->group < 1 || x->dim[1] % cg->group || w->dim[0] % cg->group ||
	    w->dim[1] * cg->group != x->dim[1])
		return burn_fail(c, BURN_ERR_SHAPE, "channels %lld, weight %lldx%lld, "
		                 "group %lld", (long long)x->dim[1], (long long)w->dim[0],
		                 (long long)w->dim[1], (long long)cg->group);
	for (int i = 0; i < ns; i++) {
		cg->k[i] = w->dim[2 + i];
		cg->s[i] = cg->d[i] = 1;
		cg->pb[i] = 0;
	}
	if ((m = attr_ints(n, "strides", &p)) == ns && ns > 0)
		memcpy(cg->s, p, sizeof *p * ns);
	if ((m = attr_ints(n, "dilations", &p)) == ns && ns > 0)
		memcpy(cg->d, p, sizeof *p * ns);
	if ((m = attr_ints(n, "kernel_shape", &p)) == ns)
		for (int i = 0; i < ns; i++)
			if (p[i] != cg->k[i])
				return burn_fail(c, BURN_ERR_SHAPE, "kernel_shape differs from "
				                 "the weight's");
	for (int i = 0; i < ns; i++) {
		int64_t in = x->dim[2 + i], ext = (cg->k[i] - 1) * cg->d[i] + 1, pe = 0;
		if (cg->s[i] < 1 || cg->d[i] < 1)
			return burn_fail(c, BURN_ERR_INVALID, "bad stride or dilation");
		if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
			int64_t o = (in + cg->s[i] - 1) / cg->s[i];
			int64_t tot = (o - 1) * cg->s[i] + ext - in;
			if (tot < 0)
				tot = 0;
			cg->pb[i] = !strcmp(ap, "SAME_UPPER") ? tot / 2 : tot - tot / 2;
			cg->out[i] = o;
			continue;
		}
		if (!strcmp(ap, "NOTSET") && (m = attr_ints(n, "pads", &p)) == 2 * ns) {
			cg->pb[i] = p[i];
			pe = p[ns + i];
		}
		if (in + cg->pb[i] + pe < ext)
			return burn_fail(c, BURN_ERR_SHAPE, "kernel larger than the input");
		cg->out[i] = (in + cg->pb[i] + pe - ext) / cg->s[i] + 1;
	}
	return BURN_OK;
}

/* QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B?) */
int infer_qconv(Ctx *c, Graph *g, Node *n)
{
	const Value *x, *w, *ys, *yz = in_opt(g, n, 7), *bias = in_opt(g, n, 8);
	int64_t dim[BURN_MAX_RANK];
	ConvGeo cg;

	TRY(need_in(c, g, n, 0, &x));
	TRY(need_in(c, g, n, 3, &w));
	TRY(need_in(c, g, n, 6, &ys));
	TRY(conv_geo(c, n, x, w, &cg));
	TRY(check_q(c, x, in_opt(g, n, 1), in_opt(g, n, 2), 1, "x"));
	TRY(check_q(c, w, in_opt(g, n, 4), in_opt(g, n, 5), w->dim[0], "w"));
	if (value_numel(ys) != 1 || (yz && value_numel(yz) != 1))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "y scale must be per tensor");
	if (bias && (bias->dtype != DT_I32 || value_numel(bias) != w->dim[0]))
		return burn_fail(c, BURN_ERR_INVALID, "bias must be i32[%lld]",
		                 (long long)w->dim[0]);
	dim[0] = x->dim[0];
	dim[1] = w->dim[0];
	memcpy(dim + 2, cg.out, sizeof *dim * cg.ns);
	set_out(NOUT(g, n, 0), yz ? yz->dtype : x->dtype, x->rank, dim);
	return BURN_OK;
}

int lower_qconv(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	const Value *x = NIN(g, n, 0), *w = NIN(g, n, 3), *xs = NIN(g, n, 1);
	const Value *ws = NIN(g, n, 4), *xz = in_opt(g, n, 2), *wz = in_opt(g, n, 5);
	const Value *yz = in_opt(g, n, 7), *bias = in_opt(g, n, 8);
	Value *y = NOUT(g, n, 0);
	int64_t xst[BURN_MAX_RANK], wst[BURN_MAX_RANK], yst[BURN_MAX_RANK];
	int vars[BURN_MAX_RANK], kv[BURN_MAX_RANK], cv, r = y->rank, ns;
	int bx, bxs, bxz = -1, bw, bws, bwz = -1, bys, byz = -1, bb = -1, bo, acc;
	int64_t cpg, mpg;
	KRef xi, wi, cond = 0, xv, wv, f, grp;
	ConvGeo cg;
	KB kb;

	TRY(conv_geo(lw->ctx, n, x, w, &cg));
	ns = cg.ns;
	cpg = w->dim[1];
	mpg = w->dim[0] / cg.group;
	shape_strides(x->rank, x->dim, xst);
	shape_strides(w->rank, w->dim, wst);
	shape_strides(r, y->dim, yst);
	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	bxs = lower_in(lw, &kb, n, 1);
	if (xz)
		bxz = lower_in(lw, &kb, n, 2);
	bw = lower_in(lw, &kb, n, 3);
	bws = lower_in(lw, &kb, n, 4);
	if (wz)
		bwz = lower_in(lw, &kb, n, 5);
	bys = lower_in(lw, &kb, n, 6);
	if (yz)
		byz = lower_in(lw, &kb, n, 7);
	if (bias)
		bb = lower_in(lw, &kb, n, 8);
	bo = lower_out(lw, &kb, n, 0);
	acc = kb_var(&kb, DT_I64, "acc");
	loops_open(&kb, r, y->dim, vars);
	kb_set(&kb, acc, bias ? kb_cast(&kb, DT_I64, kb_load(&kb, bb, kb_get(&kb, vars[1])))
	                      : kb_idx(&kb, 0));
	grp = kb_bin(&kb, KO_DIV, kb_get(&kb, vars[1]), kb_idx(&kb, mpg));
	cv = kb_for(&kb, "c", kb_idx(&kb, 0), kb_idx(&kb, cpg), 0);
	for (int i = 0; i < ns; i++) {
		char name[8];
		snprintf(name, sizeof name, "k%d", i);
		kv[i] = kb_for(&kb, name, kb_idx(&kb, 0), kb_idx(&kb, cg.k[i]), 0);
	}
	/* x index: n, g*cpg + c, o*s - pb + k*d */
	xi = kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, kb_get(&kb, vars[0]), kb_idx(&kb, xst[0])),
	            kb_bin(&kb, KO_MUL, kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, grp,
	                   kb_idx(&kb, cpg)), kb_get(&kb, cv)), kb_idx(&kb, xst[1])));
	wi = kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, kb_get(&kb, vars[1]), kb_idx(&kb, wst[0])),
	            kb_bin(&kb, KO_MUL, kb_get(&kb, cv), kb_idx(&kb, wst[1])));
	for (int i = 0; i < ns; i++) {
		KRef p = kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, kb_get(&kb, vars[2 + i]),
		                                    kb_idx(&kb, cg.s[i])),
		                kb_bin(&kb, KO_SUB, kb_bin(&kb, KO_MUL, kb_get(&kb, kv[i]),
		                                           kb_idx(&kb, cg.d[i])),
		                       kb_idx(&kb, cg.pb[i])));
		KRef ok = kb_bin(&kb, KO_AND, kb_bin(&kb, KO_GE, p, kb_idx(&kb, 0)),
		                 kb_bin(&kb, KO_LT, p, kb_idx(&kb, x->dim[2 + i])));
		cond = cond ? kb_bin(&kb, KO_AND, cond, ok) : ok;
		xi = kb_bin(&kb, KO_ADD, xi, kb_bin(&kb, KO_MUL, p, kb_idx(&kb, xst[2 + i])));
		wi = kb_bin(&kb, KO_ADD, wi, kb_bin(&kb, KO_MUL, kb_get(&kb, kv[i]),
		                                    kb_idx(&kb, wst[2 + i])));
	}
	kb_if(&kb, cond);
	xv = kb_cast(&kb, DT_I64, kb_load(&kb, bx, xi));
	if (xz)
		xv = kb_bin(&kb, KO_SUB, xv, kb_cast(&kb, DT_I64, kb_load(&kb, bxz, kb_idx(&kb, 0))));
	wv = kb_cast(&kb, DT_I64, kb_load(&kb, bw, wi));
	if (wz)
		wv = kb_bin(&kb, KO_SUB, wv, kb_cast(&kb, DT_I64, kb_load(&kb, bwz,
		            per(&kb, wz, vars[1]))));
	kb_set(&kb, acc, kb_bin(&kb, KO_ADD, kb_get(&kb, acc), kb_bin(&kb, KO_MUL, xv, wv)));
	kb_end(&kb);
	for (int i = 0; i <= ns; i++)
		kb_end(&kb);
	f = qfactor(&kb, xs->dtype, bxs, kb_idx(&kb, 0), bws, per(&kb, ws, vars[1]), bys);
	f = kb_bin(&kb, KO_MUL, kb_cast(&kb, DT_F64, kb_get(&kb, acc)),
	           kb_cast(&kb, DT_F64, f));
	kb_store(&kb, bo, index_linear(&kb, r, vars, yst),
	         quantize(&kb, f, yz ? kb_load(&kb, byz, kb_idx(&kb, 0)) : 0, y->dtype));
	loops_close(&kb, r);
	lower_end(lw, &kb);
	return BURN_OK;
}

/*
 * reduce.c - the reduction table (reduce.def) and its emitter: a row
 * becomes the kernel IR of one reduction, for the op's own lowering
 * (ops_reduce.c) and for fusion (fuse.c) alike.  See reduce.h.
 */
#include <math.h>
#include <stdint.h>
#include "reduce.h"

static const ReduceOp rows[] = {
#define R(op, id, pro, cmb, fin, acc, fl) { OP_##op, #op, id, pro, cmb, fin, acc, fl },
#include "reduce.def"
#undef R
};

const ReduceOp *reduce_op(int op)
{
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (rows[i].op == op)
			return &rows[i];
	return NULL;
}

int reduce_fusable(int op)
{
	const ReduceOp *r = reduce_op(op);

	return r && (r->flags & RR_FUSE);
}

int reduce_acc_type(const ReduceOp *r, int t)
{
	switch (r->acc) {
	case RA_F64:
		return DT_F64;
	case RA_F64_INT:
		return dtype_is_float(t) ? t : DT_F64;
	case RA_F64_FLOAT:
		return dtype_is_float(t) ? DT_F64 : t;
	default:
		return t;
	}
}

/* The number v as a constant of dtype dt. */
static KRef num(KB *kb, int dt, double v)
{
	return dtype_is_float(dt) ? kb_const_f(kb, dt, v) : kb_const_i(kb, dt, (int64_t)v);
}

static KRef conv(KB *kb, KRef e, int dt)
{
	return kb_dtype(kb->k, e) == dt ? e : kb_cast(kb, dt, e);
}

/* Smallest and largest value of integer dtype dt (u64's largest is -1 as a
 * bit pattern, which is what kb_const_i stores). */
static void int_range(int dt, int64_t *lo, int64_t *hi)
{
	switch (dt) {
	case DT_U8:  *lo = 0; *hi = UINT8_MAX; break;
	case DT_I8:  *lo = INT8_MIN; *hi = INT8_MAX; break;
	case DT_U16: *lo = 0; *hi = UINT16_MAX; break;
	case DT_I16: *lo = INT16_MIN; *hi = INT16_MAX; break;
	case DT_I32: *lo = INT32_MIN; *hi = INT32_MAX; break;
	case DT_U32: *lo = 0; *hi = UINT32_MAX; break;
	case DT_U64: *lo = 0; *hi = -1; break;
	default:     *lo = INT64_MIN; *hi = INT64_MAX; break;
	}
}

/* The row's identity at accumulator type at. */
static KRef identity(KB *kb, const ReduceOp *r, int at)
{
	int64_t lo, hi;
	int high = r->identity == RI_HIGHEST;

	switch (r->identity) {
	case RI_ONE:
		return num(kb, at, 1);
	case RI_LOWEST:
	case RI_HIGHEST:
		if (at == DT_BOOL)
			return kb_const_i(kb, DT_BOOL, high);
		if (dtype_is_float(at))
			return num(kb, at, high ? INFINITY : -INFINITY);
		int_range(at, &lo, &hi);
		return kb_const_i(kb, at, high ? hi : lo);
	default:
		return num(kb, at, 0);
	}
}

static KRef prologue(KB *kb, const ReduceOp *r, KRef x, int shift)
{
	int dt = kb_dtype(kb->k, x);

	switch (r->prologue) {
	case RP_ABS:
		return dtype_is_signed(dt) || dtype_is_float(dt) ? kb_un(kb, KO_ABS, x) : x;
	case RP_SQUARE:
		return kb_bin(kb, KO_MUL, x, x);
	case RP_EXP_SHIFT:   /* no shift variable: shift 0 */
		if (shift >= 0)
			x = kb_bin(kb, KO_SUB, x, kb_get(kb, shift));
		return kb_un(kb, KO_EXP, x);
	default:
		return x;
	}
}

static KRef combine(KB *kb, const ReduceOp *r, KRef a, KRef x)
{
	int isbool = kb_dtype(kb->k, a) == DT_BOOL;

	switch (r->combine) {
	case RC_MUL:
		return kb_bin(kb, KO_MUL, a, x);
	case RC_MAX:   /* KO_MAX propagates NaN (ir/kir.h), as np.max does */
		return kb_bin(kb, isbool ? KO_OR : KO_MAX, a, x);
	case RC_MIN:
		return kb_bin(kb, isbool ? KO_AND : KO_MIN, a, x);
	default:
		return kb_bin(kb, KO_ADD, a, x);
	}
}

static KRef finalize(KB *kb, const ReduceOp *r, KRef a, int shift, int64_t count)
{
	int at = kb_dtype(kb->k, a);

	switch (r->finalize) {
	case RF_MEAN:   /* float: 0/0 is NaN for an empty set, as np.mean */
		if (dtype_is_float(at))
			return kb_bin(kb, KO_DIV, a, num(kb, at, (double)count));
		return count > 0 ? kb_bin(kb, KO_DIV, a, kb_const_i(kb, at, count)) : a;
	case RF_SQRT:
		return kb_un(kb, KO_SQRT, a);
	case RF_LOG:
		return kb_un(kb, KO_LOG, a);
	case RF_LOG_SHIFT:
		a = kb_un(kb, KO_LOG, a);
		return shift >= 0 ? kb_bin(kb, KO_ADD, kb_get(kb, shift), a) : a;
	default:
		return a;
	}
}

/*
 * ArgMax/ArgMin: bi = -1, then per element x at position j
 *   if (bi < 0 || x CMP best || NaN rule) { best = x; bi = j; }
 * CMP is > (< for min), or >= (<=) when the last extreme wins.  NaN is the
 * extreme, as in np.argmax: the first NaN wins (the last, with `last`).
 */
static int emit_arg(KB *kb, const ReduceOp *r, int t, const ReduceWalk *w)
{
	int best = kb_var(kb, t, "best"), bi = kb_var(kb, DT_I64, "bi"), op;
	KRef x, j = 0, better;

	kb_set(kb, best, num(kb, t, 0));
	kb_set(kb, bi, kb_idx(kb, -1));
	x = w->open(w->self, &j);
	if (r->combine == RC_ARGMAX)
		op = w->last ? KO_GE : KO_GT;
	else
		op = w->last ? KO_LE : KO_LT;
	better = kb_bin(kb, KO_OR, kb_bin(kb, KO_LT, kb_get(kb, bi), kb_idx(kb, 0)),
	                kb_bin(kb, op, x, kb_get(kb, best)));
	if (dtype_is_float(t)) {
		KRef nan = kb_un(kb, KO_ISNAN, x);
		if (!w->last)
			nan = kb_bin(kb, KO_AND, nan, kb_un(kb, KO_NOT, kb_un(kb, KO_ISNAN,
			                                                     kb_get(kb, best))));
		better = kb_bin(kb, KO_OR, better, nan);
	}
	kb_if(kb, better);
	kb_set(kb, best, x);
	kb_set(kb, bi, j);
	kb_end(kb);
	w->close(w->self);
	return bi;
}

int reduce_emit(KB *kb, const ReduceOp *r, int t, int out_t, const ReduceWalk *w)
{
	int at = reduce_acc_type(r, t), acc, shift = -1, out;
	KRef x, a, res;

	if (r->flags & RR_ARG)
		return emit_arg(kb, r, t, w);
	/* a long float sum: f64, one rounding at the end (reduce.h) */
	if (r->combine == RC_ADD && dtype_is_float(at) && at != DT_F64 && w->f64_min > 0 &&
	    w->count >= w->f64_min)
		at = DT_F64;

	/* the max shift: m = max(x) in a pass of its own; exponents are
	 * taken relative to m unless m is infinite */
	if (r->flags & RR_SHIFT) {
		int m = kb_var(kb, at, "m");
		kb_set(kb, m, num(kb, at, -INFINITY));
		x = conv(kb, w->open(w->self, NULL), at);
		kb_set(kb, m, kb_bin(kb, KO_MAX, kb_get(kb, m), x));
		w->close(w->self);
		shift = kb_var(kb, at, "shift");
		kb_set(kb, shift, kb_select(kb, kb_un(kb, KO_ISINF, kb_get(kb, m)),
		                            num(kb, at, 0), kb_get(kb, m)));
	}

	acc = kb_var(kb, at, "acc");
	kb_set(kb, acc, identity(kb, r, at));
	x = prologue(kb, r, conv(kb, w->open(w->self, NULL), at), shift);
	kb_set(kb, acc, combine(kb, r, kb_get(kb, acc), x));
	w->close(w->self);

	a = kb_get(kb, acc);
	res = finalize(kb, r, a, shift, w->count);
	if (at == out_t) {
		if (res != a)
			kb_set(kb, acc, res);
		return acc;
	}
	out = kb_var(kb, out_t, "red");
	kb_set(kb, out, conv(kb, res, out_t));
	return out;
}

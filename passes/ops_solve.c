/*
 * ops_solve.c - matrix functions beyond products: Det (opset 11).
 *
 * Det(X [..., n, n]) is Gaussian elimination with partial pivoting on an
 * f64 copy of each matrix (a scratch value), one invocation per matrix:
 * det = (-1)^swaps * product of the pivots, 0 as soon as a column has no
 * non-zero pivot.  f64 elimination then one rounding: at least as close as
 * the reference's LAPACK LU in the input's type.
 */
#include "kb_short.h"

static int det_shape(Ctx *c, Graph *g, Node *n, int64_t *batch, int64_t *m)
{
	const Value *x = NIN(g, n, 0);
	char ts[160];

	if (!x)
		return burn_fail(c, BURN_ERR_INVALID, "input 0 is required");
	if (!dtype_is_float(x->dtype) || x->rank < 2 ||
	    x->dim[x->rank - 1] != x->dim[x->rank - 2])
		return burn_fail(c, BURN_ERR_SHAPE, "input '%s' is %s: float [..., n, n] "
		                 "expected", x->name, value_type_str(x, ts, sizeof ts));
	*m = x->dim[x->rank - 1];
	*batch = 1;
	for (int i = 0; i < x->rank - 2; i++)
		*batch *= x->dim[i];
	return BURN_OK;
}

int infer_det(Ctx *c, Graph *g, Node *n)
{
	const Value *x = NIN(g, n, 0);
	int64_t b, m;

	TRY(det_shape(c, g, n, &b, &m));
	set_out(NOUT(g, n, 0), x->dtype, x->rank - 2, x->dim);
	return BURN_OK;
}

int lower_det(Lower *lw, Node *n)
{
	const Value *x = NIN(lw->g, n, 0);
	int64_t B, M, dim[3];
	int bx, bo, ba, det, piv, best, sv, tmpv;
	KRef b, base, k, i, j, a_ik, a_kk, f, at_k, at_p, e;
	KB kb;

	TRY(det_shape(lw->ctx, lw->g, n, &B, &M));
	dim[0] = B; dim[1] = M; dim[2] = M;
	sv = lower_temp(lw, DT_F64, 3, dim);
	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	bo = lower_out(lw, &kb, n, 0);
	ba = lower_bind(lw, &kb, sv, KA_RW);
	det = kb_var(&kb, DT_F64, "det");
	piv = kb_var(&kb, DT_I64, "piv");
	best = kb_var(&kb, DT_F64, "best");
	tmpv = kb_var(&kb, DT_F64, "tmp");
	if (B == 0) {
		lower_end(lw, &kb);
		return BURN_OK;
	}
	b = loop(&kb, "b", B, KF_PARALLEL);
	base = mul(&kb, b, I(&kb, M * M));
	/* the f64 copy */
	i = loop(&kb, "e", M * M, 0);
	kb_store(&kb, ba, add(&kb, base, i), conv(&kb, kb_load(&kb, bx, add(&kb, base, i)), DT_F64));
	kb_end(&kb);
	kb_set(&kb, det, kb_const_f(&kb, DT_F64, 1));
	k = loop(&kb, "k", M, 0);
	/* the pivot: the largest |a[i][k]|, i >= k */
	kb_set(&kb, piv, k);
	kb_set(&kb, best, kb_const_f(&kb, DT_F64, -1));
	i = get(&kb, kb_for(&kb, "i", k, I(&kb, M), 0));
	e = kb_un(&kb, KO_ABS, kb_load(&kb, ba, add(&kb, base, add(&kb, mul(&kb, i, I(&kb, M)), k))));
	kb_if(&kb, kb_bin(&kb, KO_GT, e, get(&kb, best)));
	kb_set(&kb, best, e);
	kb_set(&kb, piv, i);
	kb_end(&kb);
	kb_end(&kb);
	/* swap rows k and piv (a sign change) */
	kb_if(&kb, kb_bin(&kb, KO_NE, get(&kb, piv), k));
	kb_set(&kb, det, kb_un(&kb, KO_NEG, get(&kb, det)));
	j = loop(&kb, "j", M, 0);
	at_k = add(&kb, base, add(&kb, mul(&kb, k, I(&kb, M)), j));
	at_p = add(&kb, base, add(&kb, mul(&kb, get(&kb, piv), I(&kb, M)), j));
	kb_set(&kb, tmpv, kb_load(&kb, ba, at_k));
	kb_store(&kb, ba, at_k, kb_load(&kb, ba, at_p));
	kb_store(&kb, ba, at_p, get(&kb, tmpv));
	kb_end(&kb);
	kb_end(&kb);
	a_kk = kb_load(&kb, ba, add(&kb, base, add(&kb, mul(&kb, k, I(&kb, M)), k)));
	kb_set(&kb, det, mul(&kb, get(&kb, det), a_kk));
	/* eliminate below the pivot, unless it is 0 (det is then 0) */
	kb_if(&kb, kb_bin(&kb, KO_NE, a_kk, kb_const_f(&kb, DT_F64, 0)));
	i = get(&kb, kb_for(&kb, "i", add(&kb, k, I(&kb, 1)), I(&kb, M), 0));
	a_ik = kb_load(&kb, ba, add(&kb, base, add(&kb, mul(&kb, i, I(&kb, M)), k)));
	kb_set(&kb, tmpv, kb_bin(&kb, KO_DIV, a_ik, a_kk));
	f = get(&kb, tmpv);
	j = get(&kb, kb_for(&kb, "j", add(&kb, k, I(&kb, 1)), I(&kb, M), 0));
	at_p = add(&kb, base, add(&kb, mul(&kb, i, I(&kb, M)), j));
	at_k = add(&kb, base, add(&kb, mul(&kb, k, I(&kb, M)), j));
	kb_store(&kb, ba, at_p, sub(&kb, kb_load(&kb, ba, at_p), mul(&kb, f, kb_load(&kb, ba, at_k))));
	kb_end(&kb);   /* j */
	kb_end(&kb);   /* i */
	kb_end(&kb);   /* if */
	kb_end(&kb);   /* k */
	kb_store(&kb, bo, b, conv(&kb, get(&kb, det), ctype(x->dtype)));
	kb_end(&kb);   /* b */
	lower_end(lw, &kb);
	return BURN_OK;
}

/*
 * ops_loss.c - the training losses: NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss.
 *
 * The input is seen as (N, C, D) with D the product of the dims after the
 * class dim, the target as (N, D).  For each (n, d) with t = target[n, d]:
 *
 *   w(n, d)    = 0 if t == ignore_index, else weight[t] (1 without weights)
 *   loss(n, d) = -x[n, t, d] * w(n, d)
 *
 * reduction "none" stores loss with the target's shape; "sum" its sum;
 * "mean" sum(loss) / sum(w), which is the plain mean when nothing is
 * weighted or ignored.  A class index outside [0, C) is clamped, as the
 * reference does for the weight lookup (np.take, mode "clip"); this also
 * keeps every read in bounds.
 *
 * SoftmaxCrossEntropyLoss is a log-softmax over the class dim (written to
 * its optional second output, or to a scratch value) followed by the same
 * loss kernel.  Float math is f64 for f64 inputs and f32 otherwise.
 */
#include <math.h>
#include <string.h>
#include "kb_short.h"

/* The reduction attribute: 0 none, 1 sum, 2 mean. */
static int
reduction(Ctx *c, const Node *n, int *out)
{
	const char *r = attr_str(n, "reduction", "mean");

	if (!strcmp(r, "none"))
		*out = 0;
	else if (!strcmp(r, "sum"))
		*out = 1;
	else if (!strcmp(r, "mean"))
		*out = 2;
	else
		return burn_fail(c, BURN_ERR_INVALID, "reduction '%s'", r);
	return BURN_OK;
}

/* The (N, C, D) geometry, checked: x is input 0, the target input 1 and the
 * optional weight input 2. */
typedef struct Loss {
	int64_t N, C, D;
	int red;             /* 0 none, 1 sum, 2 mean */
	const Value *x, *t, *w;
} Loss;

static int
loss_shape(Ctx *c, Graph *g, Node *n, Loss *l)
{
	const Value *x = NIN(g, n, 0), *t = NIN(g, n, 1), *w = NIN(g, n, 2);

	if (!x || !t)
		return burn_fail(c, BURN_ERR_INVALID, "input and target are required");
	l->x = x; l->t = t; l->w = w;
	TRY(reduction(c, n, &l->red));
	if (!dtype_is_float(x->dtype) || !dtype_supported(x->dtype))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "dtype %s", dtype_name(x->dtype));
	if (t->dtype != DT_I64 && t->dtype != DT_I32)
		return burn_fail(c, BURN_ERR_SHAPE, "target must be integer");
	if (x->rank < 2 || t->rank != x->rank - 1)
		return burn_fail(c, BURN_ERR_SHAPE, "input rank %d, target rank %d",
		                 x->rank, t->rank);
	l->N = x->dim[0];
	l->C = x->dim[1];
	l->D = 1;
	if (t->dim[0] != l->N)
		return burn_fail(c, BURN_ERR_SHAPE, "target batch differs");
	for (int i = 2; i < x->rank; i++) {
		if (t->dim[i - 1] != x->dim[i])
			return burn_fail(c, BURN_ERR_SHAPE, "target dim %d is %lld, want %lld",
			                 i - 1, (long long)t->dim[i - 1], (long long)x->dim[i]);
		l->D *= x->dim[i];
	}
	if (w && (w->dtype != x->dtype || w->rank != 1 || w->dim[0] != l->C))
		return burn_fail(c, BURN_ERR_SHAPE, "weight must be (C) of the input's dtype");
	if (l->C < 1)
		return burn_fail(c, BURN_ERR_SHAPE, "no classes");
	return BURN_OK;
}

static void
set_loss(Graph *g, Node *n, const Loss *l)
{
	if (l->red == 0)
		set_out(NOUT(g, n, 0), l->x->dtype, l->t->rank, l->t->dim);
	else
		set_out(NOUT(g, n, 0), l->x->dtype, 0, NULL);
}

int
infer_loss(Ctx *c, Graph *g, Node *n)
{
	Loss l;

	TRY(loss_shape(c, g, n, &l));
	set_loss(g, n, &l);
	if (n->op == OP_SoftmaxCrossEntropyLoss && n->nout > 1 && n->out[1] >= 0)
		set_out(NOUT(g, n, 1), l.x->dtype, l.x->rank, l.x->dim);
	return BURN_OK;
}

/*
 * sum += v, compensated (Kahan): c holds the low part the last add lost,
 * so the sum of n terms is off by about 2 eps |sum|, not n eps.  The
 * "mean" loss y = sum(loss) / sum(w) needs it: the class weights'
 * gradient subtracts y from each of ~1300 labels' losses and sums
 * (grad_loss), multiplying y's error by the label count; over
 * test_sce_NCd1d2d3d4d5_mean_weight's 6480 labels a plain f32 sum is off
 * 1.6e-5 relative and the f32 gradient 6.5e-3 (NumPy's pairwise sum:
 * 5e-8 and 2e-5).  Costs three adds per label, in a kernel that is not
 * hot.  No fma may join these operations: they are adds and subtracts.
 */
static void kahan_add(KB *kb, int sum, int c, KRef v)
{
	int t = kb_var(kb, kb_dtype(kb->k, v), "kt");
	KRef y = sub(kb, v, get(kb, c));

	kb_set(kb, t, add(kb, get(kb, sum), y));
	kb_set(kb, c, sub(kb, sub(kb, get(kb, t), get(kb, sum)), y));
	kb_set(kb, sum, get(kb, t));
}

/* The loss kernel over log-probabilities in value xv (shape of input 0). */
static void
nll_kernel(Lower *lw, Node *n, const Loss *l, int xv)
{
	int ct = ctype(l->x->dtype), has_ii = node_attr(n, "ignore_index") != NULL;
	int64_t ii = attr_int(n, "ignore_index", 0);
	int xb, tb, wb = -1, yb, acc = -1, wsum = -1, cacc = -1, cw = -1;
	KRef i, d, t, tc, w, v, ign;
	KB kb;

	lower_begin(lw, &kb, n);
	xb = lower_bind(lw, &kb, xv, KA_READ);
	tb = lower_in(lw, &kb, n, 1);
	if (l->w)
		wb = lower_in(lw, &kb, n, 2);
	yb = lower_out(lw, &kb, n, 0);
	if (l->red) {
		acc = kb_var(&kb, ct, "acc");
		wsum = kb_var(&kb, ct, "wsum");
		cacc = kb_var(&kb, ct, "cacc");
		cw = kb_var(&kb, ct, "cwsum");
		kb_set(&kb, acc, kb_const_f(&kb, ct, 0));
		kb_set(&kb, wsum, kb_const_f(&kb, ct, 0));
		kb_set(&kb, cacc, kb_const_f(&kb, ct, 0));
		kb_set(&kb, cw, kb_const_f(&kb, ct, 0));
	}
	i = loop(&kb, "i", l->N, l->red ? 0 : KF_PARALLEL);
	d = loop(&kb, "d", l->D, l->red ? 0 : KF_PARALLEL);
	t = conv(&kb, kb_load(&kb, tb, add(&kb, mul(&kb, i, I(&kb, l->D)), d)), DT_I64);
	tc = kb_bin(&kb, KO_MIN, kb_bin(&kb, KO_MAX, t, I(&kb, 0)), I(&kb, l->C - 1));
	w = l->w ? conv(&kb, kb_load(&kb, wb, tc), ct) : kb_const_f(&kb, ct, 1);
	if (has_ii) {
		ign = kb_bin(&kb, KO_EQ, t, I(&kb, ii));
		w = kb_select(&kb, ign, kb_const_f(&kb, ct, 0), w);
	}
	v = conv(&kb, kb_load(&kb, xb, add(&kb, mul(&kb, add(&kb, mul(&kb, i, I(&kb, l->C)), tc),
	                                            I(&kb, l->D)), d)), ct);
	v = mul(&kb, kb_un(&kb, KO_NEG, v), w);
	if (has_ii) /* an ignored element is 0 even when x is not finite */
		v = kb_select(&kb, ign, kb_const_f(&kb, ct, 0), v);
	if (l->red) {
		kahan_add(&kb, acc, cacc, v);
		kahan_add(&kb, wsum, cw, w);
	} else {
		kb_store(&kb, yb, add(&kb, mul(&kb, i, I(&kb, l->D)), d), v);
	}
	loops_close(&kb, 2);
	if (l->red == 1)
		kb_store(&kb, yb, I(&kb, 0), get(&kb, acc));
	else if (l->red == 2)
		kb_store(&kb, yb, I(&kb, 0), kb_bin(&kb, KO_DIV, get(&kb, acc), get(&kb, wsum)));
	lower_end(lw, &kb);
}

/* dst = log_softmax(input 0) over the class dim. */
static void
logsoftmax_kernel(Lower *lw, Node *n, const Loss *l, int dst)
{
	int ct = ctype(l->x->dtype), xb, yb, m, s;
	KRef i, d, j, base, e;
	KB kb;

	lower_begin(lw, &kb, n);
	xb = lower_in(lw, &kb, n, 0);
	yb = lower_bind(lw, &kb, dst, KA_WRITE);
	i = loop(&kb, "i", l->N, KF_PARALLEL);
	d = loop(&kb, "d", l->D, KF_PARALLEL);
	base = add(&kb, mul(&kb, i, I(&kb, l->C * l->D)), d);
#define AT(j) add(&kb, base, mul(&kb, (j), I(&kb, l->D)))
	m = kb_var(&kb, ct, "m");
	s = kb_var(&kb, ct, "s");
	kb_set(&kb, m, kb_const_f(&kb, ct, -INFINITY));
	j = loop(&kb, "c", l->C, 0);
	kb_set(&kb, m, kb_bin(&kb, KO_MAX, get(&kb, m), conv(&kb, kb_load(&kb, xb, AT(j)), ct)));
	kb_end(&kb);
	kb_set(&kb, s, kb_const_f(&kb, ct, 0));
	j = loop(&kb, "c", l->C, 0);
	e = kb_un(&kb, KO_EXP, kb_bin(&kb, KO_SUB, conv(&kb, kb_load(&kb, xb, AT(j)), ct),
	                              get(&kb, m)));
	kb_set(&kb, s, add(&kb, get(&kb, s), e));
	kb_end(&kb);
	kb_set(&kb, s, add(&kb, get(&kb, m), kb_un(&kb, KO_LOG, get(&kb, s))));
	j = loop(&kb, "c", l->C, 0);
	kb_store(&kb, yb, AT(j), kb_bin(&kb, KO_SUB, conv(&kb, kb_load(&kb, xb, AT(j)), ct),
	                                get(&kb, s)));
	kb_end(&kb);
#undef AT
	loops_close(&kb, 2);
	lower_end(lw, &kb);
}

int
lower_loss(Lower *lw, Node *n)
{
	Loss l;
	int lp;

	TRY(loss_shape(lw->ctx, lw->g, n, &l));
	if (n->op != OP_SoftmaxCrossEntropyLoss) {
		nll_kernel(lw, n, &l, n->in[0]);
		return BURN_OK;
	}
	if (n->nout > 1 && n->out[1] >= 0)
		lp = n->out[1];
	else
		lp = lower_temp(lw, ctype(l.x->dtype), l.x->rank, l.x->dim);
	logsoftmax_kernel(lw, n, &l, lp);
	nll_kernel(lw, n, &l, lp);
	return BURN_OK;
}

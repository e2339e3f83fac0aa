/*
 * ops_signal.c - the signal ops: DFT (opset 17, 19: axis an attribute;
 * 20: axis an input) and STFT (opset 17).
 *
 * Both are direct discrete Fourier transforms, one kernel each, parallel
 * over the output elements:
 *
 *   X[p] = sum_q x[q] e^(-2 pi i p q / N)           forward
 *   x[p] = 1/N sum_q X[q] e^(+2 pi i p q / N)       inverse
 *
 * The twiddle factors come from a constant table of N (cos, sin) pairs,
 * computed here in double, indexed by (p q) mod N: no trigonometry in
 * the kernel, and e^(i pi) is as exact as the double it came from.  Sums
 * run in f64 and round once to the output type, as the reference's
 * float64 FFT does (the imaginary part of a real signal's bin N/2 is a
 * sum of terms that cancel).  A signal shorter than N is zero-padded, a
 * longer one cut to N (numpy's n argument).
 *
 *   DFT(input [..., L, ..., 1|2], dft_length?, axis?)   onesided: bins
 *       0 .. N/2 of a forward transform; inverse with onesided: the real
 *       signal of N = dft_length or 2 (L - 1) whose first bins are given
 *       (numpy irfft: the other bins are the conjugates, the imaginary
 *       parts of bin 0 and, N even, bin N/2 are not read)
 *   STFT(signal [B, L, 1|2], frame_step, window?, frame_length?)
 *       frames f = 0 .. (L - W) / step of W samples, times the window,
 *       each transformed; onesided (default) keeps bins 0 .. W/2
 *
 * Sizes (dft_length, axis, frame_step, frame_length) must be constants:
 * the output shape depends on them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kb_short.h"

/* The longest transform: its table (16 bytes a point) and the O(N^2)
 * kernel stay reasonable. */
#define SIG_MAX_N (1 << 24)

/* An integer scalar input k that must be constant, in *out. */
static int const_scalar(Ctx *c, Graph *g, Node *n, int k, const char *what,
                        int64_t *out)
{
	const Value *v;

	TRY(need_const(c, g, n, k, &v));
	if (value_numel(v) != 1 || !dtype_is_int(v->dtype))
		return burn_fail(c, BURN_ERR_INVALID, "%s ('%s') must be an integer "
		                 "scalar", what, v->name);
	*out = value_get_i(v, 0);
	return BURN_OK;
}

static int check_n(Ctx *c, const char *what, int64_t v)
{
	if (v < 1 || v > SIG_MAX_N)
		return burn_fail(c, BURN_ERR_INVALID, "%s %lld: 1 .. %d expected", what,
		                 (long long)v, SIG_MAX_N);
	return BURN_OK;
}

/* ---- DFT ---------------------------------------------------------------- */

typedef struct Dft {
	int axis;
	int64_t L, N, K;        /* signal length, transform size, output bins */
	int inverse, onesided;
	int real_out;           /* inverse onesided: a real signal out */
	int64_t outer, inner;   /* elements before / after the axis (not the
	                         * last, complex, dim) */
	int cin;                /* 1 (real) or 2 (complex) input */
} Dft;

static int dft_shape(Ctx *c, Graph *g, Node *n, Dft *d)
{
	const Value *x = NIN(g, n, 0);
	int64_t axis;
	char ts[160];

	if (!x)
		return burn_fail(c, BURN_ERR_INVALID, "input 0 is required");
	if (!dtype_is_float(x->dtype))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "input '%s' is %s: DFT takes "
		                 "float signals", x->name, dtype_name(x->dtype));
	if (x->rank < 2 || (x->dim[x->rank - 1] != 1 && x->dim[x->rank - 1] != 2))
		return burn_fail(c, BURN_ERR_SHAPE, "input '%s' is %s: [..., 1] (real) "
		                 "or [..., 2] (complex) expected", x->name,
		                 value_type_str(x, ts, sizeof ts));
	d->cin = (int)x->dim[x->rank - 1];
	if (g->opset >= 20) {
		axis = -2;
		if (NIN(g, n, 2))
			TRY(const_scalar(c, g, n, 2, "axis", &axis));
	} else {
		axis = attr_int(n, "axis", 1);
	}
	/* the last dim holds the real and imaginary parts: not an axis */
	if (axis < -x->rank || axis >= x->rank - 1 || axis == -1)
		return burn_fail(c, BURN_ERR_INVALID, "axis %lld is out of range for "
		                 "a signal of rank %d (its last dim is the complex "
		                 "pair)", (long long)axis, x->rank);
	d->axis = (int)(axis < 0 ? axis + x->rank : axis);
	d->L = x->dim[d->axis];
	d->inverse = attr_int(n, "inverse", 0) != 0;
	d->onesided = attr_int(n, "onesided", 0) != 0;
	d->real_out = d->inverse && d->onesided;
	if (NIN(g, n, 1)) {
		TRY(const_scalar(c, g, n, 1, "dft_length", &d->N));
		TRY(check_n(c, "dft_length", d->N));
	} else {
		d->N = d->real_out ? 2 * (d->L - 1) : d->L;
		TRY(check_n(c, d->real_out ? "the signal length 2 (bins - 1)"
		                           : "the signal length", d->N));
	}
	d->K = d->onesided && !d->inverse ? d->N / 2 + 1 : d->N;
	d->outer = d->inner = 1;
	for (int i = 0; i < d->axis; i++)
		d->outer *= x->dim[i];
	for (int i = d->axis + 1; i < x->rank - 1; i++)
		d->inner *= x->dim[i];
	return BURN_OK;
}

int infer_dft(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	int64_t dim[BURN_MAX_RANK];
	Dft d;

	TRY(dft_shape(c, g, n, &d));
	x = NIN(g, n, 0);
	for (int i = 0; i < x->rank; i++)
		dim[i] = x->dim[i];
	dim[d.axis] = d.K;
	dim[x->rank - 1] = d.real_out ? 1 : 2;
	set_out(NOUT(g, n, 0), x->dtype, x->rank, dim);
	return BURN_OK;
}

/* A constant (N, 2) f64 table of cos and sin of 2 pi m / N, bound. */
static int twiddles(Lower *lw, KB *kb, Node *n, int64_t N, int *buf)
{
	Graph *g = lw->g;
	int64_t dim[2] = { N, 2 };
	double *t = malloc(sizeof *t * (size_t)(2 * N));
	int v, rc;

	if (!t)
		return burn_fail(lw->ctx, BURN_ERR_NOMEM, "out of memory");
	for (int64_t m = 0; m < N; m++) {
		/* by octant symmetry the table is exact at 0, pi/2, pi, 3 pi/2 */
		double a = 2 * M_PI * (double)m / (double)N;
		t[2 * m] = 4 * m == N || 4 * m == 3 * N ? 0 : cos(a);
		t[2 * m + 1] = 2 * m == N || m == 0 ? 0 : sin(a);
	}
	v = graph_add_value(g, arena_printf(&g->arena, "%s.twiddles", NOUT(g, n, 0)->name));
	rc = v < 0 ? burn_fail(lw->ctx, BURN_ERR_NOMEM, "out of memory")
	           : graph_set_const(lw->ctx, g, v, DT_F64, 2, dim, t);
	free(t);
	TRY(rc);
	*buf = lower_bind(lw, kb, v, KA_READ);
	return BURN_OK;
}

/*
 * Accumulate into re, im (f64 variables) the transform's terms q = 0 ..
 * cnt-1 for output position p: sample q at bx[base + q*qs] (real part;
 * imaginary at +1 when cin is 2), times the window bw[q] when bw >= 0,
 * times e^(-+i theta), theta = 2 pi (p q mod N) / N; weight (irfft) 2
 * for the bins whose conjugates are not given.
 */
static void dft_sum(KB *kb, const Dft *d, int bx, int bw, int btw, KRef base,
                    int64_t qs, int64_t cnt, KRef p, int re, int im)
{
	KRef q, at, xr, xi, m, cs, sn, r, i;

	q = loop(kb, "q", cnt, 0);
	at = add(kb, base, mul(kb, q, I(kb, qs)));
	xr = conv(kb, kb_load(kb, bx, at), DT_F64);
	xi = d->cin == 2 ? conv(kb, kb_load(kb, bx, add(kb, at, I(kb, 1))), DT_F64)
	                 : kb_const_f(kb, DT_F64, 0);
	if (bw >= 0) {
		KRef w = conv(kb, kb_load(kb, bw, q), DT_F64);
		xr = mul(kb, xr, w);
		xi = mul(kb, xi, w);
	}
	m = kb_bin(kb, KO_MOD, mul(kb, p, q), I(kb, d->N));
	cs = kb_load(kb, btw, mul(kb, m, I(kb, 2)));
	sn = kb_load(kb, btw, add(kb, mul(kb, m, I(kb, 2)), I(kb, 1)));
	if (d->inverse) {        /* e^(+i theta) */
		r = sub(kb, mul(kb, xr, cs), mul(kb, xi, sn));
		i = add(kb, mul(kb, xi, cs), mul(kb, xr, sn));
	} else {                 /* e^(-i theta) */
		r = add(kb, mul(kb, xr, cs), mul(kb, xi, sn));
		i = sub(kb, mul(kb, xi, cs), mul(kb, xr, sn));
	}
	if (d->real_out) {
		/* bins 1 .. ceil(N/2)-1 stand for their conjugates too */
		KRef two = kb_bin(kb, KO_AND, kb_bin(kb, KO_GT, q, I(kb, 0)),
		                  kb_bin(kb, KO_LT, mul(kb, q, I(kb, 2)), I(kb, d->N)));
		r = mul(kb, r, kb_select(kb, two, kb_const_f(kb, DT_F64, 2),
		                         kb_const_f(kb, DT_F64, 1)));
	}
	kb_set(kb, re, add(kb, get(kb, re), r));
	if (!d->real_out)
		kb_set(kb, im, add(kb, get(kb, im), i));
	kb_end(kb);
}

/* Store re, im (scaled by 1/N for an inverse) at bo[at], bo[at + 1],
 * rounded once to the output's compute type ct. */
static void dft_store(KB *kb, const Dft *d, int bo, int ct, KRef at, int re, int im)
{
	KRef s = kb_const_f(kb, DT_F64, d->inverse ? 1.0 / (double)d->N : 1.0);

	kb_store(kb, bo, at, conv(kb, mul(kb, get(kb, re), s), ct));
	if (!d->real_out)
		kb_store(kb, bo, add(kb, at, I(kb, 1)), conv(kb, mul(kb, get(kb, im), s), ct));
}

int lower_dft(Lower *lw, Node *n)
{
	Dft d;
	int bx, bo, btw, re, im, cout;
	int64_t cnt;
	KRef o, p, i, base;
	KB kb;

	TRY(dft_shape(lw->ctx, lw->g, n, &d));
	cout = d.real_out ? 1 : 2;
	/* irfft reads bins 0 .. N/2 (fewer if fewer are given) */
	cnt = d.real_out ? d.N / 2 + 1 : d.N;
	cnt = cnt < d.L ? cnt : d.L;
	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	bo = lower_out(lw, &kb, n, 0);
	TRY(twiddles(lw, &kb, n, d.N, &btw));
	re = kb_var(&kb, DT_F64, "re");
	im = kb_var(&kb, DT_F64, "im");
	o = loop(&kb, "o", d.outer, KF_PARALLEL);
	p = loop(&kb, "p", d.K, KF_PARALLEL);
	i = loop(&kb, "i", d.inner, KF_PARALLEL);
	kb_set(&kb, re, kb_const_f(&kb, DT_F64, 0));
	kb_set(&kb, im, kb_const_f(&kb, DT_F64, 0));
	base = mul(&kb, add(&kb, mul(&kb, o, I(&kb, d.L * d.inner)), i), I(&kb, d.cin));
	dft_sum(&kb, &d, bx, -1, btw, base, d.inner * d.cin, cnt, p, re, im);
	dft_store(&kb, &d, bo, ctype(NOUT(lw->g, n, 0)->dtype), mul(&kb, add(&kb, mul(&kb, add(&kb, mul(&kb, o, I(&kb, d.K)), p),
	                                             I(&kb, d.inner)), i), I(&kb, cout)),
	          re, im);
	loops_close(&kb, 3);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- STFT --------------------------------------------------------------- */

typedef struct Stft {
	Dft d;                  /* N = K or N/2+1 bins; inverse 0 */
	int64_t B, F, step;
	int window;             /* a window input is given */
} Stft;

static int stft_shape(Ctx *c, Graph *g, Node *n, Stft *s)
{
	const Value *x = NIN(g, n, 0), *w = NIN(g, n, 2);
	int64_t W = 0;
	int sized = 0;           /* W given, by the window or frame_length */
	char ts[160];

	if (!x)
		return burn_fail(c, BURN_ERR_INVALID, "input 0 is required");
	if (!dtype_is_float(x->dtype))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "signal '%s' is %s: STFT "
		                 "takes float signals", x->name, dtype_name(x->dtype));
	if (x->rank != 3 || (x->dim[2] != 1 && x->dim[2] != 2))
		return burn_fail(c, BURN_ERR_SHAPE, "signal '%s' is %s: [batch, length, "
		                 "1 or 2] expected", x->name, value_type_str(x, ts, sizeof ts));
	memset(s, 0, sizeof *s);
	s->d.cin = (int)x->dim[2];
	s->B = x->dim[0];
	s->d.L = x->dim[1];
	TRY(const_scalar(c, g, n, 1, "frame_step", &s->step));
	if (s->step < 1)
		return burn_fail(c, BURN_ERR_INVALID, "frame_step %lld: positive "
		                 "expected", (long long)s->step);
	if (w) {
		if (w->rank != 1 || w->dtype != x->dtype)
			return burn_fail(c, BURN_ERR_SHAPE, "window '%s' is %s: a 1-D %s "
			                 "tensor expected", w->name,
			                 value_type_str(w, ts, sizeof ts), dtype_name(x->dtype));
		W = w->dim[0];
		s->window = sized = 1;
	}
	if (NIN(g, n, 3)) {
		int64_t fl;
		TRY(const_scalar(c, g, n, 3, "frame_length", &fl));
		if (sized && fl != W)
			return burn_fail(c, BURN_ERR_SHAPE, "frame_length %lld and the "
			                 "window's length %lld differ", (long long)fl,
			                 (long long)W);
		W = fl;
		sized = 1;
	}
	if (!sized)
		return burn_fail(c, BURN_ERR_INVALID, "a window or a frame_length is "
		                 "required");
	TRY(check_n(c, "the frame length", W));
	if (W > s->d.L)
		return burn_fail(c, BURN_ERR_SHAPE, "the frame length %lld is longer "
		                 "than the signal (%lld)", (long long)W, (long long)s->d.L);
	s->d.onesided = attr_int(n, "onesided", 1) != 0;
	if (s->d.onesided && s->d.cin == 2)
		return burn_fail(c, BURN_ERR_INVALID, "onesided output needs a real "
		                 "signal ([..., 1])");
	s->d.N = W;
	s->d.K = s->d.onesided ? W / 2 + 1 : W;
	s->F = (s->d.L - W) / s->step + 1;
	return BURN_OK;
}

int infer_stft(Ctx *c, Graph *g, Node *n)
{
	Stft s;
	int64_t dim[4];

	TRY(stft_shape(c, g, n, &s));
	dim[0] = s.B; dim[1] = s.F; dim[2] = s.d.K; dim[3] = 2;
	set_out(NOUT(g, n, 0), NIN(g, n, 0)->dtype, 4, dim);
	return BURN_OK;
}

int lower_stft(Lower *lw, Node *n)
{
	Stft s;
	int bx, bw = -1, bo, btw, re, im;
	KRef b, f, p, base;
	KB kb;

	TRY(stft_shape(lw->ctx, lw->g, n, &s));
	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	if (s.window)
		bw = lower_in(lw, &kb, n, 2);
	bo = lower_out(lw, &kb, n, 0);
	TRY(twiddles(lw, &kb, n, s.d.N, &btw));
	re = kb_var(&kb, DT_F64, "re");
	im = kb_var(&kb, DT_F64, "im");
	b = loop(&kb, "b", s.B, KF_PARALLEL);
	f = loop(&kb, "f", s.F, KF_PARALLEL);
	p = loop(&kb, "p", s.d.K, KF_PARALLEL);
	kb_set(&kb, re, kb_const_f(&kb, DT_F64, 0));
	kb_set(&kb, im, kb_const_f(&kb, DT_F64, 0));
	base = mul(&kb, add(&kb, mul(&kb, b, I(&kb, s.d.L)), mul(&kb, f, I(&kb, s.step))),
	           I(&kb, s.d.cin));
	dft_sum(&kb, &s.d, bx, bw, btw, base, s.d.cin, s.d.N, p, re, im);
	dft_store(&kb, &s.d, bo, ctype(NOUT(lw->g, n, 0)->dtype), mul(&kb, add(&kb, mul(&kb, add(&kb, mul(&kb, b, I(&kb, s.F)), f),
	                                               I(&kb, s.d.K)), p), I(&kb, 2)),
	          re, im);
	loops_close(&kb, 3);
	lower_end(lw, &kb);
	return BURN_OK;
}

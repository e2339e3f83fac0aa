/*
 * ops_resize.c - resampling ops: Resize, Upsample, CenterCropPad, Col2Im,
 * GridSample, AffineGrid (at the end).
 *
 * Resize is separable: along each resized axis, output coordinate o reads
 * K input elements (taps) with weights that depend only on o.  Since the
 * shapes and scales are constants, the taps are worked out at compile time
 * in double precision, exactly like the ONNX reference
 * (_interpolate_1d_with_x): the coordinate transformation, the neighbour
 * choice with edge padding, the nearest/linear/cubic coefficients,
 * antialiasing, exclude_outside and tf_crop_and_resize's extrapolation.
 * They become two constant tables of the kernel (input offsets, already
 * multiplied by the axis stride and clamped into range, and weights), so
 * the kernel is a plain weighted gather:
 *
 *     y[o] = sum over taps t of  prod_a W_a[o_a][t_a] * x[sum_a I_a[o_a][t_a]]
 *
 * Axes whose table is the identity are indexed directly.  Nearest mode has
 * one tap of weight 1, so it only moves values and is exact for every
 * dtype.
 */
#include <string.h>
#include <math.h>
#include "lower.h"

static const Value *in_opt(Graph *g, Node *n, int k)
{
	return k >= 0 && k < n->nin && n->in[k] >= 0 ? GV(g, n->in[k]) : NULL;
}

static int edt(int dt)
{
	return dt == DT_F16 || dt == DT_BF16 ? DT_F32 : dt;
}

/* A non-empty optional input (Resize marks absent ones with ""/empty). */
static const Value *in_nonempty(Graph *g, Node *n, int k)
{
	const Value *v = in_opt(g, n, k);
	return v && value_numel(v) != 0 ? v : NULL;
}

/* Cast a float expression to integer dtype dt, rounding half to even and
 * saturating (an out-of-range float->int cast is undefined in C). */
static KRef to_dtype(KB *kb, KRef e, int dt)
{
	double lo, hi;

	if (dtype_is_float(dt))
		return kb_cast(kb, edt(dt), e);
	if (dt == DT_BOOL)
		return kb_cast(kb, dt, e);
	switch (dt) {
	case DT_U8: lo = 0; hi = 255; break;
	case DT_I8: lo = -128; hi = 127; break;
	case DT_U16: lo = 0; hi = 65535; break;
	case DT_I16: lo = -32768; hi = 32767; break;
	case DT_I32: lo = -2147483648.0; hi = 2147483647.0; break;
	case DT_U32: lo = 0; hi = 4294967295.0; break;
	default: lo = -9.2e18; hi = 9.2e18;
	}
	e = kb_cast(kb, DT_F64, kb_un(kb, KO_ROUND, e));
	e = kb_bin(kb, KO_MIN, kb_bin(kb, KO_MAX, e, kb_const_f(kb, DT_F64, lo)),
	           kb_const_f(kb, DT_F64, hi));
	return kb_cast(kb, dt, e);
}

/* ---- Resize and Upsample: the plan -------------------------------------- */

enum { RM_NEAREST, RM_LINEAR, RM_CUBIC };
enum { CT_HALF_PIXEL, CT_HALF_PIXEL_SYM, CT_PYTORCH, CT_ALIGN, CT_ASYM,
       CT_TF_NN, CT_CROP };
enum { NM_PREFER_FLOOR, NM_PREFER_CEIL, NM_FLOOR, NM_CEIL };

/* Everything the taps depend on, per axis of the input. */
typedef struct RPlan {
	int rank, mode, ctm, nearest, exclude, antialias;
	double a, extrap;
	int64_t in[BURN_MAX_RANK], out[BURN_MAX_RANK];
	double scale[BURN_MAX_RANK], roi0[BURN_MAX_RANK], roi1[BURN_MAX_RANK];
} RPlan;

static int pick(Ctx *c, const char *what, const char *s, const char *const *names,
                int *out)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(s, names[i])) {
			*out = i;
			return BURN_OK;
		}
	return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s '%s'", what, s);
}

static int resize_plan(Ctx *c, Graph *g, Node *n, RPlan *p)
{
	static const char *const modes[] = { "nearest", "linear", "cubic", NULL };
	static const char *const ctms[] = { "half_pixel", "half_pixel_symmetric",
		"pytorch_half_pixel", "align_corners", "asymmetric",
		"tf_half_pixel_for_nn", "tf_crop_and_resize", NULL };
	static const char *const nms[] = { "round_prefer_floor", "round_prefer_ceil",
		"floor", "ceil", NULL };
	static const char *const kars[] = { "stretch", "not_larger", "not_smaller",
		NULL };
	const Value *x = in_opt(g, n, 0), *roi = NULL, *sc = NULL, *sz = NULL;
	const char *mode = attr_str(n, "mode", "nearest");
	int64_t axes[BURN_MAX_RANK];
	const int64_t *ap;
	double fs[BURN_MAX_RANK];
	int na, kar = 0, old = n->op == OP_Upsample || g->opset < 11;

	if (!x)
		return burn_fail(c, BURN_ERR_INVALID, "input 0 is required");
	memset(p, 0, sizeof *p);
	p->rank = x->rank;
	if (!strcmp(mode, "bilinear") || !strcmp(mode, "trilinear"))
		mode = "linear";            /* Upsample-7's spelling */
	TRY(pick(c, "mode", mode, modes, &p->mode));
	if (old) {
		p->ctm = CT_ASYM;
		p->nearest = NM_FLOOR;
	} else {
		TRY(pick(c, "coordinate_transformation_mode",
		         attr_str(n, "coordinate_transformation_mode", "half_pixel"),
		         ctms, &p->ctm));
		TRY(pick(c, "nearest_mode", attr_str(n, "nearest_mode",
		         "round_prefer_floor"), nms, &p->nearest));
	}
	TRY(pick(c, "keep_aspect_ratio_policy", attr_str(n,
	         "keep_aspect_ratio_policy", "stretch"), kars, &kar));
	p->a = attr_float(n, "cubic_coeff_a", -0.75);
	p->exclude = (int)attr_int(n, "exclude_outside", 0);
	p->extrap = attr_float(n, "extrapolation_value", 0);
	p->antialias = (int)attr_int(n, "antialias", 0) && p->mode != RM_NEAREST;

	/* axes: all by default */
	na = attr_ints(n, "axes", &ap);
	if (!node_attr(n, "axes")) {
		na = x->rank;
		for (int i = 0; i < na; i++)
			axes[i] = i;
	} else {
		char seen[BURN_MAX_RANK] = {0};
		if (na > x->rank)
			return burn_fail(c, BURN_ERR_INVALID, "%d axes for rank %d", na,
			                 x->rank);
		for (int i = 0; i < na; i++) {
			int a;
			TRY(norm_axis(c, ap[i], x->rank, &a));
			if (seen[a]++)
				return burn_fail(c, BURN_ERR_INVALID, "axis %d repeated", a);
			axes[i] = a;
		}
	}
	for (int i = 0; i < x->rank; i++) {
		p->in[i] = p->out[i] = x->dim[i];
		p->scale[i] = 1;
		p->roi0[i] = 0;
		p->roi1[i] = 1;
	}

	/* where scales, sizes and roi come from */
	if (n->op == OP_Upsample && !in_opt(g, n, 1)) {
		const Attr *at = node_attr(n, "scales");
		if (!at || at->type != AT_FLOATS || at->n != x->rank)
			return burn_fail(c, BURN_ERR_INVALID, "scales attribute must have "
			                 "%d floats", x->rank);
		for (int i = 0; i < x->rank; i++)
			fs[i] = (float)at->floats[i];
		goto have_scales;
	}
	if (old) {
		TRY(need_const(c, g, n, 1, &sc));
	} else {
		roi = in_nonempty(g, n, 1);
		if ((sc = in_nonempty(g, n, 2)))
			TRY(need_const(c, g, n, 2, &sc));
		if ((sz = in_nonempty(g, n, 3)))
			TRY(need_const(c, g, n, 3, &sz));
		if (!sc == !sz)
			return burn_fail(c, BURN_ERR_INVALID, "exactly one of scales and "
			                 "sizes must be given");
	}
	if (roi && p->ctm == CT_CROP) {
		TRY(need_const(c, g, n, 1, &roi));
		if (value_numel(roi) != 2 * na)
			return burn_fail(c, BURN_ERR_INVALID, "roi has %lld elements for "
			                 "%d axes", (long long)value_numel(roi), na);
		for (int i = 0; i < na; i++) {
			p->roi0[axes[i]] = value_get_f(roi, i);
			p->roi1[axes[i]] = value_get_f(roi, na + i);
		}
	}
	if (sz) {
		double s = 0;
		if (value_numel(sz) != na || !dtype_is_int(sz->dtype))
			return burn_fail(c, BURN_ERR_INVALID, "sizes must be %d integers", na);
		for (int i = 0; i < na; i++) {
			int d = (int)axes[i];
			int64_t o = value_get_i(sz, i);
			if (o < 0 || (o > 0 && p->in[d] == 0))
				return burn_fail(c, BURN_ERR_INVALID, "size %lld for axis %d",
				                 (long long)o, d);
			p->out[d] = o;
			p->scale[d] = p->in[d] ? (double)o / p->in[d] : 1;
			if (i == 0 || (kar == 1 && p->scale[d] < s) ||
			    (kar == 2 && p->scale[d] > s))
				s = p->scale[d];
		}
		if (kar)
			for (int i = 0; i < na; i++) {
				int d = (int)axes[i];
				p->scale[d] = s;
				p->out[d] = (int64_t)(s * p->in[d] + 0.5);
			}
		return BURN_OK;
	}
	if (value_numel(sc) != na || !dtype_is_float(sc->dtype))
		return burn_fail(c, BURN_ERR_INVALID, "scales must be %d floats", na);
	for (int i = 0; i < x->rank; i++)
		fs[i] = 1;
	for (int i = 0; i < na; i++)
		fs[axes[i]] = value_get_f(sc, i);
have_scales:
	for (int d = 0; d < x->rank; d++) {
		double o = fs[d] * p->in[d];
		if (!(fs[d] > 0) || !(o < 1e15))
			return burn_fail(c, BURN_ERR_INVALID, "scale %g for axis %d", fs[d], d);
		p->scale[d] = fs[d];
		p->out[d] = (int64_t)floor(o);
	}
	return BURN_OK;
}

int infer_resize(Ctx *c, Graph *g, Node *n)
{
	RPlan p;

	TRY(resize_plan(c, g, n, &p));
	set_out(NOUT(g, n, 0), NIN(g, n, 0)->dtype, p.rank, p.out);
	return BURN_OK;
}

/* ---- Resize: the taps of one axis ------------------------------------- */

/* The input coordinate of output coordinate o; 0 when it falls outside a
 * tf_crop_and_resize box (then *valid = 0). */
static double coord(const RPlan *p, int d, int64_t o, int *valid)
{
	double in = (double)p->in[d], s = p->scale[d], ow = s * in, x;

	*valid = 1;
	switch (p->ctm) {
	case CT_ALIGN:
		return ow == 1 ? 0 : o * (in - 1) / (ow - 1);
	case CT_ASYM:
		return o / s;
	case CT_CROP:
		if (ow == 1)
			x = (p->roi1[d] - p->roi0[d]) * (in - 1) / 2;
		else
			x = o * (p->roi1[d] - p->roi0[d]) * (in - 1) / (ow - 1);
		x += p->roi0[d] * (in - 1);
		if (x < 0 || x > in - 1)
			*valid = 0;
		return x;
	case CT_PYTORCH:
		return ow == 1 ? -0.5 : (o + 0.5) / s - 0.5;
	case CT_TF_NN:
		return (o + 0.5) / s;
	case CT_HALF_PIXEL_SYM: {
		double adj = (double)p->out[d] / ow, off = in / 2 * (1 - adj);
		return off + (o + 0.5) / s - 0.5;
	}
	}
	return (o + 0.5) / s - 0.5;
}

/* The cubic kernel at distance x. */
static double cubic(double A, double x)
{
	x = fabs(x);
	if (x <= 1)
		return ((A + 2) * x - (A + 3)) * x * x + 1;
	if (x < 2)
		return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
	return 0;
}

/* Taps per output coordinate along axis d. */
static int ntaps(const RPlan *p, int d)
{
	double s = p->scale[d] < 1 ? p->scale[d] : 1, t;

	if (p->mode == RM_NEAREST)
		return 2;
	if (!p->antialias)
		return p->mode == RM_LINEAR ? 2 : 4;
	/* 2 - 2 * (floor(-support / s) + 1), capped: lower_resize rejects > 64 */
	t = 2 - 2 * (floor((p->mode == RM_LINEAR ? -1 : -2) / s) + 1);
	return t > 64 ? 65 : (int)t;
}

/* Fill idx[o*K + j] (input coordinate, clamped) and w[o*K + j] for one
 * axis, and valid[o].  For nearest mode the two candidate taps collapse
 * into one (K = 1). */
static void axis_taps(const RPlan *p, int d, int K, int64_t *idx, double *w,
                      int64_t *valid)
{
	int64_t in = p->in[d];
	int pad = (K + 1) / 2;
	double sa = p->scale[d] < 1 ? p->scale[d] : 1;

	for (int64_t o = 0; o < p->out[d]; o++) {
		double x, ratio, cf[64] = {0}, sum = 0;
		int64_t base, start;
		int ok;

		x = coord(p, d, o, &ok);
		valid[o] = ok;
		base = (int64_t)floor(x);
		if (x == floor(x)) {
			ratio = 1;
			base--;
		} else {
			ratio = x - base;
		}
		/* the K nearest indices of the edge-padded axis, smaller first */
		start = base - (K / 2 - 1);
		if (start < -pad)
			start = -pad;
		if (start > in + pad - K)
			start = in + pad - K;
		for (int j = 0; j < K; j++) {
			double t = (double)(start + j - base) - ratio;   /* offset from x */
			if (p->mode == RM_NEAREST) {
				int up;
				switch (p->nearest) {
				case NM_PREFER_FLOOR: up = ratio > 0.5; break;
				case NM_PREFER_CEIL: up = ratio >= 0.5; break;
				case NM_FLOOR: up = 0; break;
				default: up = 1;
				}
				if (ratio == 1)
					up = 1;
				cf[j] = j == up;
			} else if (p->mode == RM_LINEAR) {
				double a = fabs(t * (p->antialias ? sa : 1));
				cf[j] = a < 1 ? 1 - a : 0;
			} else {
				cf[j] = cubic(p->a, t * (p->antialias ? sa : 1));
			}
		}
		if (p->mode != RM_NEAREST && p->antialias) {
			for (int j = 0; j < K; j++)
				sum += cf[j];
			for (int j = 0; j < K && sum != 0; j++)
				cf[j] /= sum;
		}
		if (p->exclude) {
			sum = 0;
			for (int j = 0; j < K; j++) {
				if (start + j < 0 || start + j >= in)
					cf[j] = 0;
				sum += cf[j];
			}
			for (int j = 0; j < K && sum != 0; j++)
				cf[j] /= sum;
		}
		if (p->mode == RM_NEAREST) {
			int64_t i = start + (cf[0] == 1 ? 0 : 1);
			idx[o] = i < 0 ? 0 : i >= in ? in - 1 : i;
			continue;
		}
		for (int j = 0; j < K; j++) {
			int64_t i = start + j;
			idx[o * K + j] = i < 0 ? 0 : i >= in ? in - 1 : i;
			w[o * K + j] = cf[j];
		}
	}
}

/* Whether an axis's taps are the identity. */
static int axis_identity(const RPlan *p, int d, int K, const int64_t *idx,
                         const double *w, const int64_t *valid)
{
	if (p->in[d] != p->out[d])
		return 0;
	for (int64_t o = 0; o < p->out[d]; o++) {
		if (!valid[o])
			return 0;
		if (p->mode == RM_NEAREST) {
			if (idx[o] != o)
				return 0;
			continue;
		}
		for (int j = 0; j < K; j++)
			if (w[o * K + j] != 0 && (w[o * K + j] != 1 || idx[o * K + j] != o))
				return 0;
	}
	return 1;
}

int lower_resize(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	Arena *ar = lw->prog->arena;
	const Value *x = NIN(g, n, 0);
	Value *y = NOUT(g, n, 0);
	int64_t xst[BURN_MAX_RANK], yst[BURN_MAX_RANK], ioff[BURN_MAX_RANK];
	int64_t woff[BURN_MAX_RANK], voff[BURN_MAX_RANK], ni = 0, nw = 0, tdim[1];
	int K[BURN_MAX_RANK], rs[BURN_MAX_RANK], vars[BURN_MAX_RANK], tv[BURN_MAX_RANK];
	int nrs = 0, r = x->rank, near, ct = x->dtype == DT_F64 ? DT_F64 : DT_F32;
	int64_t *itab;
	double *wtab;
	int bx, by, bi = -1, bw = -1, acc = -1;
	KRef base, off, wgt, v, ok = 0;
	RPlan p;
	KB kb;

	TRY(resize_plan(lw->ctx, g, n, &p));
	near = p.mode == RM_NEAREST;
	shape_strides(r, x->dim, xst);
	shape_strides(r, y->dim, yst);
	if (value_numel(y) == 0)
		return BURN_OK;
	/* sizes of the tables */
	for (int d = 0; d < r; d++) {
		K[d] = ntaps(&p, d);
		if (K[d] > 64)
			return burn_fail(lw->ctx, BURN_ERR_UNSUPPORTED, "antialias filter of "
			                 "%d taps", K[d]);
		ni += p.out[d] * (near ? 1 : K[d]) + p.out[d];
		nw += near ? 0 : p.out[d] * K[d];
	}
	itab = arena_alloc(ar, sizeof *itab * (ni + 1));
	wtab = arena_alloc(ar, sizeof *wtab * (nw + 1));
	if (!itab || !wtab)
		return burn_fail(lw->ctx, BURN_ERR_NOMEM, "out of memory");
	ni = nw = 0;
	for (int d = 0; d < r; d++) {
		int k = near ? 1 : K[d];
		int64_t *vt = itab + ni + p.out[d] * k;
		axis_taps(&p, d, K[d], itab + ni, wtab + nw, vt);
		if (axis_identity(&p, d, k, itab + ni, wtab + nw, vt))
			continue;
		for (int64_t i = 0; i < p.out[d] * k; i++)
			itab[ni + i] *= xst[d];
		rs[nrs++] = d;
		ioff[d] = ni;
		voff[d] = ni + p.out[d] * k;
		woff[d] = nw;
		K[d] = k;
		ni += p.out[d] * (k + 1);
		nw += near ? 0 : p.out[d] * k;
	}

	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	by = lower_out(lw, &kb, n, 0);
	if (nrs) {
		int t;
		tdim[0] = ni;
		t = lower_temp(lw, DT_I64, 1, tdim);
		TRY(graph_set_const(lw->ctx, g, t, DT_I64, 1, tdim, itab));
		bi = lower_bind(lw, &kb, t, KA_READ);
	}
	if (nw) {
		int t;
		tdim[0] = nw;
		t = lower_temp(lw, ct, 1, tdim);
		if (ct == DT_F32) {
			float *f = arena_alloc(ar, sizeof *f * nw);
			if (!f)
				return burn_fail(lw->ctx, BURN_ERR_NOMEM, "out of memory");
			for (int64_t i = 0; i < nw; i++)
				f[i] = (float)wtab[i];
			TRY(graph_set_const(lw->ctx, g, t, ct, 1, tdim, f));
		} else {
			TRY(graph_set_const(lw->ctx, g, t, ct, 1, tdim, wtab));
		}
		bw = lower_bind(lw, &kb, t, KA_READ);
		acc = kb_var(&kb, ct, "acc");
	}
	loops_open(&kb, r, y->dim, vars);
	base = kb_idx(&kb, 0);
	for (int d = 0, j = 0; d < r; d++) {
		if (j < nrs && rs[j] == d) {
			j++;
			continue;
		}
		base = kb_bin(&kb, KO_ADD, base, kb_bin(&kb, KO_MUL, kb_get(&kb, vars[d]),
		                                        kb_idx(&kb, xst[d])));
	}
	if (p.ctm == CT_CROP)
		for (int j = 0; j < nrs; j++) {
			int d = rs[j];
			KRef e = kb_bin(&kb, KO_NE, kb_load(&kb, bi, kb_bin(&kb, KO_ADD,
			                kb_idx(&kb, voff[d]), kb_get(&kb, vars[d]))), kb_idx(&kb, 0));
			ok = ok ? kb_bin(&kb, KO_AND, ok, e) : e;
		}
	if (near) {
		off = base;
		for (int j = 0; j < nrs; j++) {
			int d = rs[j];
			off = kb_bin(&kb, KO_ADD, off, kb_load(&kb, bi, kb_bin(&kb, KO_ADD,
			             kb_idx(&kb, ioff[d]), kb_get(&kb, vars[d]))));
		}
		v = kb_load(&kb, bx, off);
	} else {
		kb_set(&kb, acc, kb_const_f(&kb, ct, 0));
		for (int j = 0; j < nrs; j++) {
			char name[8];
			snprintf(name, sizeof name, "t%d", j);
			tv[j] = kb_for(&kb, name, kb_idx(&kb, 0), kb_idx(&kb, K[rs[j]]), 0);
		}
		off = base;
		wgt = 0;
		for (int j = 0; j < nrs; j++) {
			int d = rs[j];
			KRef row = kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, kb_get(&kb, vars[d]),
			                                      kb_idx(&kb, K[d])), kb_get(&kb, tv[j]));
			KRef wv = kb_load(&kb, bw, kb_bin(&kb, KO_ADD, kb_idx(&kb, woff[d]), row));
			off = kb_bin(&kb, KO_ADD, off, kb_load(&kb, bi, kb_bin(&kb, KO_ADD,
			             kb_idx(&kb, ioff[d]), row)));
			wgt = wgt ? kb_bin(&kb, KO_MUL, wgt, wv) : wv;
		}
		v = kb_cast(&kb, ct, kb_load(&kb, bx, off));
		if (wgt)
			v = kb_bin(&kb, KO_MUL, wgt, v);
		kb_set(&kb, acc, kb_bin(&kb, KO_ADD, kb_get(&kb, acc), v));
		for (int j = 0; j < nrs; j++)
			kb_end(&kb);
		v = to_dtype(&kb, kb_get(&kb, acc), x->dtype);
	}
	if (ok)
		v = kb_select(&kb, ok, v, to_dtype(&kb, kb_const_f(&kb, DT_F64, p.extrap),
		                                   x->dtype));
	kb_store(&kb, by, index_linear(&kb, r, vars, yst), v);
	loops_close(&kb, r);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- CenterCropPad ------------------------------------------------------ */

/* CenterCropPad(input, shape; axes): crop or zero-pad each axis to the
 * target size, centred (the extra element goes to the end). */
static int ccp_shape(Ctx *c, Graph *g, Node *n, int64_t *out)
{
	const Value *x = in_opt(g, n, 0), *s;
	const int64_t *ap;
	int na = attr_ints(n, "axes", &ap);
	char seen[BURN_MAX_RANK] = {0};

	if (!x)
		return burn_fail(c, BURN_ERR_INVALID, "input 0 is required");
	TRY(need_const(c, g, n, 1, &s));
	if (!node_attr(n, "axes"))
		na = x->rank;
	if (value_numel(s) != na || !dtype_is_int(s->dtype))
		return burn_fail(c, BURN_ERR_INVALID, "shape must have %d integers", na);
	memcpy(out, x->dim, sizeof *out * x->rank);
	for (int i = 0; i < na; i++) {
		int a = i;
		if (node_attr(n, "axes"))
			TRY(norm_axis(c, ap[i], x->rank, &a));
		if (seen[a]++)
			return burn_fail(c, BURN_ERR_INVALID, "axis %d repeated", a);
		out[a] = value_get_i(s, i);
		if (out[a] < 0)
			return burn_fail(c, BURN_ERR_INVALID, "negative size %lld",
			                 (long long)out[a]);
	}
	return BURN_OK;
}

int infer_ccp(Ctx *c, Graph *g, Node *n)
{
	int64_t dim[BURN_MAX_RANK];

	TRY(ccp_shape(c, g, n, dim));
	set_out(NOUT(g, n, 0), NIN(g, n, 0)->dtype, NIN(g, n, 0)->rank, dim);
	return BURN_OK;
}

int lower_ccp(Lower *lw, Node *n)
{
	const Value *x = NIN(lw->g, n, 0);
	Value *y = NOUT(lw->g, n, 0);
	int64_t xst[BURN_MAX_RANK], yst[BURN_MAX_RANK];
	int vars[BURN_MAX_RANK], bx, by, r = x->rank;
	KRef xi = 0, ok = 0, z;
	KB kb;

	shape_strides(r, x->dim, xst);
	shape_strides(r, y->dim, yst);
	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	by = lower_out(lw, &kb, n, 0);
	loops_open(&kb, r, y->dim, vars);
	xi = kb_idx(&kb, 0);
	for (int d = 0; d < r; d++) {
		int64_t shift = x->dim[d] >= y->dim[d] ? (x->dim[d] - y->dim[d]) / 2
		                                       : -((y->dim[d] - x->dim[d]) / 2);
		KRef i = kb_bin(&kb, KO_ADD, kb_get(&kb, vars[d]), kb_idx(&kb, shift));
		if (x->dim[d] < y->dim[d]) {
			KRef e = kb_bin(&kb, KO_AND, kb_bin(&kb, KO_GE, i, kb_idx(&kb, 0)),
			                kb_bin(&kb, KO_LT, i, kb_idx(&kb, x->dim[d])));
			ok = ok ? kb_bin(&kb, KO_AND, ok, e) : e;
			i = kb_bin(&kb, KO_MIN, kb_bin(&kb, KO_MAX, i, kb_idx(&kb, 0)),
			           kb_idx(&kb, x->dim[d] > 0 ? x->dim[d] - 1 : 0));
		}
		xi = kb_bin(&kb, KO_ADD, xi, kb_bin(&kb, KO_MUL, i, kb_idx(&kb, xst[d])));
	}
	z = dtype_is_float(edt(x->dtype)) ? kb_const_f(&kb, edt(x->dtype), 0)
	                                  : kb_const_i(&kb, x->dtype, 0);
	if (value_numel(x) == 0)
		kb_store(&kb, by, index_linear(&kb, r, vars, yst), z);
	else
		kb_store(&kb, by, index_linear(&kb, r, vars, yst),
		         ok ? kb_load_guard(&kb, bx, xi, ok, z)
		            : kb_load(&kb, bx, xi));
	loops_close(&kb, r);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- Col2Im ------------------------------------------------------------- */

/* Col2Im(input [N, C*prod(block), L], image_shape, block_shape; dilations,
 * pads, strides) -> [N, C, image...]: the sum of the overlapping blocks. */
typedef struct C2I {
	int ns;
	int64_t img[BURN_MAX_RANK], blk[BURN_MAX_RANK], dil[BURN_MAX_RANK];
	int64_t pb[BURN_MAX_RANK], st[BURN_MAX_RANK], nb[BURN_MAX_RANK];
	int64_t kprod, L, C;
} C2I;

static int c2i_geo(Ctx *c, Graph *g, Node *n, C2I *q)
{
	const Value *x = in_opt(g, n, 0), *im, *bl;
	const int64_t *p;
	int ns;

	if (!x)
		return burn_fail(c, BURN_ERR_INVALID, "input 0 is required");
	TRY(need_const(c, g, n, 1, &im));
	TRY(need_const(c, g, n, 2, &bl));
	ns = (int)value_numel(im);
	if (ns < 1 || ns + 2 > BURN_MAX_RANK || value_numel(bl) != ns || x->rank != 3)
		return burn_fail(c, BURN_ERR_SHAPE, "image_shape/block_shape/input rank "
		                 "mismatch");
	q->ns = ns;
	q->kprod = 1;
	q->L = 1;
	for (int i = 0; i < ns; i++) {
		q->img[i] = value_get_i(im, i);
		q->blk[i] = value_get_i(bl, i);
		q->dil[i] = q->st[i] = 1;
		q->pb[i] = 0;
	}
	if (attr_ints(n, "dilations", &p) == ns && ns > 0)
		memcpy(q->dil, p, sizeof *p * ns);
	if (attr_ints(n, "strides", &p) == ns && ns > 0)
		memcpy(q->st, p, sizeof *p * ns);
	for (int i = 0; i < ns; i++) {
		int64_t pe = 0, ext;
		if (attr_ints(n, "pads", &p) == 2 * ns) {
			q->pb[i] = p[i];
			pe = p[ns + i];
		}
		ext = (q->blk[i] - 1) * q->dil[i] + 1;
		if (q->blk[i] < 1 || q->st[i] < 1 || q->dil[i] < 1 || q->img[i] < 0 ||
		    q->img[i] + q->pb[i] + pe < ext)
			return burn_fail(c, BURN_ERR_INVALID, "bad block geometry on dim %d", i);
		q->nb[i] = (q->img[i] + q->pb[i] + pe - ext) / q->st[i] + 1;
		q->kprod *= q->blk[i];
		q->L *= q->nb[i];
	}
	if (x->dim[1] % q->kprod || x->dim[2] != q->L)
		return burn_fail(c, BURN_ERR_SHAPE, "input [%lld,%lld,%lld] does not fit "
		                 "%lld blocks of %lld", (long long)x->dim[0],
		                 (long long)x->dim[1], (long long)x->dim[2],
		                 (long long)q->L, (long long)q->kprod);
	q->C = x->dim[1] / q->kprod;
	return BURN_OK;
}

int infer_col2im(Ctx *c, Graph *g, Node *n)
{
	const Value *x = in_opt(g, n, 0);
	int64_t dim[BURN_MAX_RANK];
	C2I q;

	TRY(c2i_geo(c, g, n, &q));
	dim[0] = x->dim[0];
	dim[1] = q.C;
	memcpy(dim + 2, q.img, sizeof *dim * q.ns);
	set_out(NOUT(g, n, 0), x->dtype, q.ns + 2, dim);
	return BURN_OK;
}

/* A gather: each image element sums the block elements that land on it. */
int lower_col2im(Lower *lw, Node *n)
{
	const Value *x = NIN(lw->g, n, 0);
	Value *y = NOUT(lw->g, n, 0);
	int64_t yst[BURN_MAX_RANK], kst[BURN_MAX_RANK], lst[BURN_MAX_RANK];
	int vars[BURN_MAX_RANK], kv[BURN_MAX_RANK], r = y->rank, ns, bx, by, acc;
	int ct = edt(x->dtype);
	KRef ok = 0, ki, li, xi;
	C2I q;
	KB kb;

	TRY(c2i_geo(lw->ctx, lw->g, n, &q));
	ns = q.ns;
	shape_strides(r, y->dim, yst);
	shape_strides(ns, q.blk, kst);
	shape_strides(ns, q.nb, lst);
	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	by = lower_out(lw, &kb, n, 0);
	acc = kb_var(&kb, ct, "acc");
	loops_open(&kb, r, y->dim, vars);
	kb_set(&kb, acc, dtype_is_float(ct) ? kb_const_f(&kb, ct, 0) : kb_const_i(&kb, ct, 0));
	for (int i = 0; i < ns; i++) {
		char name[8];
		snprintf(name, sizeof name, "k%d", i);
		kv[i] = kb_for(&kb, name, kb_idx(&kb, 0), kb_idx(&kb, q.blk[i]), 0);
	}
	ki = kb_idx(&kb, 0);
	li = kb_idx(&kb, 0);
	for (int i = 0; i < ns; i++) {
		/* block start b = pix + pb - k*dil must be a multiple of the stride */
		KRef b = kb_bin(&kb, KO_SUB, kb_bin(&kb, KO_ADD, kb_get(&kb, vars[2 + i]),
		                                    kb_idx(&kb, q.pb[i])),
		                kb_bin(&kb, KO_MUL, kb_get(&kb, kv[i]), kb_idx(&kb, q.dil[i])));
		KRef l = kb_bin(&kb, KO_DIV, b, kb_idx(&kb, q.st[i]));
		KRef e = kb_bin(&kb, KO_AND, kb_bin(&kb, KO_GE, b, kb_idx(&kb, 0)),
		                kb_bin(&kb, KO_AND,
		                       kb_bin(&kb, KO_EQ, kb_bin(&kb, KO_MOD, b, kb_idx(&kb, q.st[i])),
		                              kb_idx(&kb, 0)),
		                       kb_bin(&kb, KO_LT, l, kb_idx(&kb, q.nb[i]))));
		ok = ok ? kb_bin(&kb, KO_AND, ok, e) : e;
		ki = kb_bin(&kb, KO_ADD, ki, kb_bin(&kb, KO_MUL, kb_get(&kb, kv[i]),
		                                    kb_idx(&kb, kst[i])));
		li = kb_bin(&kb, KO_ADD, li, kb_bin(&kb, KO_MUL, l, kb_idx(&kb, lst[i])));
	}
	/* x[n, c*kprod + ki, li] */
	xi = kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, kb_get(&kb, vars[0]),
	                                kb_idx(&kb, x->dim[1] * x->dim[2])),
	            kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL,
	                   kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, kb_get(&kb, vars[1]),
	                                              kb_idx(&kb, q.kprod)), ki),
	                   kb_idx(&kb, q.L)), li));
	kb_if(&kb, ok);
	kb_set(&kb, acc, kb_bin(&kb, KO_ADD, kb_get(&kb, acc), kb_load(&kb, bx, xi)));
	kb_end(&kb);
	for (int i = 0; i < ns; i++)
		kb_end(&kb);
	kb_store(&kb, by, index_linear(&kb, r, vars, yst), kb_get(&kb, acc));
	loops_close(&kb, r);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- GridSample ------------------------------------------------------- */

/*
 * GridSample(X [N, C, D1..Dk], grid [N, O1..Ok, k]) -> [N, C, O1..Ok]:
 * sample X at the normalized points of the grid (grid[..., 0] is the last
 * axis).  The reference (and PyTorch) semantics: denormalize in f32, move
 * an outside point back by the padding mode (border: clamp, reflection:
 * reflect about the borders), then interpolate with taps that are
 * themselves padded (zeros: read 0).  The taps (1, 2^k or 4^k) are
 * unrolled; their weights are products of per-axis coefficients.
 */
int infer_gridsample(Ctx *c, Graph *g, Node *n)
{
	const Value *x = in_opt(g, n, 0), *gr = in_opt(g, n, 1);
	int64_t dim[BURN_MAX_RANK];
	int ns;

	if (!x || !gr)
		return burn_fail(c, BURN_ERR_INVALID, "inputs X and grid are required");
	ns = x->rank - 2;
	if (ns < 1 || ns > 3 || gr->rank != x->rank || gr->dim[0] != x->dim[0] ||
	    gr->dim[gr->rank - 1] != ns)
		return burn_fail(c, BURN_ERR_SHAPE, "X of rank %d with grid of rank %d",
		                 x->rank, gr->rank);
	if (!dtype_is_float(x->dtype) || !dtype_is_float(gr->dtype))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "non-float GridSample");
	dim[0] = x->dim[0];
	dim[1] = x->dim[1];
	for (int i = 0; i < ns; i++)
		dim[2 + i] = gr->dim[1 + i];
	set_out(NOUT(g, n, 0), x->dtype, x->rank, dim);
	return BURN_OK;
}

static KRef fconst(KB *kb, double v) { return kb_const_f(kb, DT_F32, v); }
static KRef dconst(KB *kb, double v) { return kb_const_f(kb, DT_F64, v); }

/* x reflected about [lo, hi] until inside (f64 arithmetic). */
static KRef reflect(KB *kb, KRef x, double lo, double hi)
{
	KRef below = kb_bin(kb, KO_LT, x, dconst(kb, lo));
	KRef above = kb_bin(kb, KO_GT, x, dconst(kb, hi));
	KRef dx = kb_select(kb, below, kb_bin(kb, KO_SUB, dconst(kb, lo), x),
	                    kb_bin(kb, KO_SUB, x, dconst(kb, hi)));
	KRef q, r, even, lor, hir;
	double rng = hi - lo;

	if (rng <= 0)
		return kb_select(kb, kb_bin(kb, KO_OR, below, above), dconst(kb, lo), x);
	q = kb_un(kb, KO_FLOOR, kb_bin(kb, KO_DIV, dx, dconst(kb, rng)));
	r = kb_bin(kb, KO_SUB, dx, kb_bin(kb, KO_MUL, q, dconst(kb, rng)));
	even = kb_bin(kb, KO_EQ, kb_bin(kb, KO_FMOD, q, dconst(kb, 2)), dconst(kb, 0));
	lor = kb_bin(kb, KO_ADD, dconst(kb, lo), r);
	hir = kb_bin(kb, KO_SUB, dconst(kb, hi), r);
	return kb_select(kb, below, kb_select(kb, even, lor, hir),
	                 kb_select(kb, above, kb_select(kb, even, hir, lor), x));
}

/* A tap's integer index i (i64) along an axis of size d under the padding
 * mode: the clamped index, and (zeros) whether it is inside. */
static KRef pad_index(KB *kb, int pm, KRef i, int64_t d, double lo, double hi,
                      KRef *inside)
{
	KRef z = kb_idx(kb, 0), top = kb_idx(kb, d - 1);

	*inside = 0;
	if (pm == 0)
		*inside = kb_bin(kb, KO_AND, kb_bin(kb, KO_GE, i, z), kb_bin(kb, KO_LT, i, kb_idx(kb, d)));
	else if (pm == 2)
		i = kb_cast(kb, DT_I64, reflect(kb, kb_cast(kb, DT_F64, i), lo, hi));
	return kb_bin(kb, KO_MIN, kb_bin(kb, KO_MAX, i, z), top);
}

/* Coefficient of tap j (of K) at fraction f (f32). */
static KRef tap_coeff(KB *kb, int K, int j, KRef f)
{
	const double A = -0.75;
	KRef t;

	if (K == 2)
		return j ? f : kb_bin(kb, KO_SUB, fconst(kb, 1), f);
	/* distances 1+f, f, 1-f, 2-f */
	t = j == 0 ? kb_bin(kb, KO_ADD, fconst(kb, 1), f) : j == 1 ? f
	  : j == 2 ? kb_bin(kb, KO_SUB, fconst(kb, 1), f)
	  : kb_bin(kb, KO_SUB, fconst(kb, 2), f);
	if (j == 1 || j == 2)   /* ((A+2)t - (A+3)) t t + 1 */
		return kb_bin(kb, KO_ADD, kb_bin(kb, KO_MUL, kb_bin(kb, KO_MUL,
		              kb_bin(kb, KO_SUB, kb_bin(kb, KO_MUL, fconst(kb, A + 2), t),
		                     fconst(kb, A + 3)), t), t), fconst(kb, 1));
	/* ((A t - 5A) t + 8A) t - 4A */
	return kb_bin(kb, KO_SUB, kb_bin(kb, KO_MUL, kb_bin(kb, KO_ADD, kb_bin(kb, KO_MUL,
	              kb_bin(kb, KO_SUB, kb_bin(kb, KO_MUL, fconst(kb, A), t),
	                     fconst(kb, 5 * A)), t), fconst(kb, 8 * A)), t),
	              fconst(kb, 4 * A));
}

int lower_gridsample(Lower *lw, Node *n)
{
	static const char *const modes[] = { "nearest", "linear", "cubic",
		"bilinear", "bicubic", NULL };
	static const char *const pms[] = { "zeros", "border", "reflection", NULL };
	const Value *x = NIN(lw->g, n, 0), *gr = NIN(lw->g, n, 1);
	Value *y = NOUT(lw->g, n, 0);
	int ns = x->rank - 2, r = y->rank, mode = 0, pm = 0, K, vars[BURN_MAX_RANK], bx, bg, by;
	int ac = (int)attr_int(n, "align_corners", 0), ntap = 1;
	int64_t xst[BURN_MAX_RANK], gst[BURN_MAX_RANK], yst[BURN_MAX_RANK];
	KRef pos[3], frac[3], gbase, xbase, sum = 0;
	double lo[3], hi[3];
	KB kb;

	TRY(pick(lw->ctx, "mode", attr_str(n, "mode", lw->g->opset >= 20 ? "linear"
	                                   : "bilinear"), modes, &mode));
	if (mode >= 3)
		mode -= 2;
	TRY(pick(lw->ctx, "padding_mode", attr_str(n, "padding_mode", "zeros"), pms, &pm));
	K = mode == RM_NEAREST ? 1 : mode == RM_LINEAR ? 2 : 4;
	shape_strides(x->rank, x->dim, xst);
	shape_strides(gr->rank, gr->dim, gst);
	shape_strides(r, y->dim, yst);
	if (value_numel(y) == 0)
		return BURN_OK;
	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	bg = lower_in(lw, &kb, n, 1);
	by = lower_out(lw, &kb, n, 0);
	loops_open(&kb, r, y->dim, vars);
	gbase = kb_bin(&kb, KO_MUL, kb_get(&kb, vars[0]), kb_idx(&kb, gst[0]));
	for (int i = 0; i < ns; i++)
		gbase = kb_bin(&kb, KO_ADD, gbase, kb_bin(&kb, KO_MUL, kb_get(&kb, vars[2 + i]),
		                                          kb_idx(&kb, gst[1 + i])));
	xbase = kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, kb_get(&kb, vars[0]), kb_idx(&kb, xst[0])),
	               kb_bin(&kb, KO_MUL, kb_get(&kb, vars[1]), kb_idx(&kb, xst[1])));
	for (int i = 0; i < ns; i++) {
		int64_t d = x->dim[2 + i];
		KRef v = kb_cast(&kb, DT_F32, kb_load(&kb, bg, kb_bin(&kb, KO_ADD, gbase,
		                 kb_idx(&kb, ns - 1 - i))));
		KRef p1 = kb_bin(&kb, KO_ADD, v, fconst(&kb, 1)), out;
		if (ac)
			v = kb_bin(&kb, KO_MUL, kb_bin(&kb, KO_DIV, p1, fconst(&kb, 2)),
			           fconst(&kb, (double)(d - 1)));
		else
			v = kb_bin(&kb, KO_DIV, kb_bin(&kb, KO_SUB, kb_bin(&kb, KO_MUL, p1,
			           fconst(&kb, (double)d)), fconst(&kb, 1)), fconst(&kb, 2));
		lo[i] = ac ? 0 : -0.5;
		hi[i] = ac ? (double)d - 1 : (double)d - 0.5;
		/* round half to even, in every rank: the conformance data does so
		 * even in 3-D, where the reference's comment names std::round */
		if (mode == RM_NEAREST)
			v = kb_un(&kb, KO_ROUND, v);
		out = kb_bin(&kb, KO_OR, kb_bin(&kb, KO_LT, v, fconst(&kb, lo[i])),
		             kb_bin(&kb, KO_GT, v, fconst(&kb, hi[i])));
		if (pm == 1)
			v = kb_select(&kb, out, kb_bin(&kb, KO_MIN, kb_bin(&kb, KO_MAX, v,
			              fconst(&kb, 0)), fconst(&kb, (double)(d - 1))), v);
		else if (pm == 2)
			v = kb_cast(&kb, DT_F32, reflect(&kb, kb_cast(&kb, DT_F64, v), lo[i], hi[i]));
		pos[i] = v;
		frac[i] = 0;
		if (mode != RM_NEAREST) {
			KRef fl = kb_un(&kb, KO_FLOOR, v);
			frac[i] = kb_bin(&kb, KO_SUB, v, fl);
			pos[i] = kb_cast(&kb, DT_I64, fl);
		} else {
			/* keep NaN and huge values away from the integer cast */
			v = kb_bin(&kb, KO_MIN, kb_bin(&kb, KO_MAX, v, fconst(&kb, -1e9)),
			           fconst(&kb, 1e9));
			pos[i] = kb_cast(&kb, DT_I64, v);
		}
		ntap *= K;
	}
	for (int t = 0; t < ntap; t++) {
		KRef off = xbase, w = 0, inside = 0, val;
		int tt = t;
		for (int i = ns - 1; i >= 0; i--) {
			int j = tt % K;
			int64_t d = x->dim[2 + i];
			KRef in, idx = pos[i];
			tt /= K;
			if (K == 2)
				idx = kb_bin(&kb, KO_ADD, idx, kb_idx(&kb, j));
			else if (K == 4)
				idx = kb_bin(&kb, KO_ADD, idx, kb_idx(&kb, j - 1));
			idx = pad_index(&kb, pm, idx, d, lo[i], hi[i], &in);
			if (in)
				inside = inside ? kb_bin(&kb, KO_AND, inside, in) : in;
			off = kb_bin(&kb, KO_ADD, off, kb_bin(&kb, KO_MUL, idx, kb_idx(&kb, xst[2 + i])));
			if (K > 1) {
				KRef cf = tap_coeff(&kb, K, j, frac[i]);
				w = w ? kb_bin(&kb, KO_MUL, w, cf) : cf;
			}
		}
		val = kb_cast(&kb, DT_F32, kb_load(&kb, bx, off));
		if (inside)
			val = kb_select(&kb, inside, kb_guard_loads(&kb, inside, val),
			                fconst(&kb, 0));
		if (w)
			val = kb_bin(&kb, KO_MUL, w, val);
		sum = sum ? kb_bin(&kb, KO_ADD, sum, val) : val;
	}
	kb_store(&kb, by, index_linear(&kb, r, vars, yst), kb_cast(&kb, edt(y->dtype), sum));
	loops_close(&kb, r);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- AffineGrid ------------------------------------------------------------ */

/*
 * AffineGrid(theta [N, 2, 3] or [N, 3, 4], size = (N, C, H, W) or (N, C,
 * D, H, W)): grid[n, (d,) h, w, i] = sum_j theta[n, i, j] base_j +
 * theta[n, i, last], base = (x_w, y_h(, z_d)), each coordinate in [-1, 1]:
 * -1 + k 2/(S-1) with align_corners (-1 for S = 1), else -1 + (2k+1)/S
 * (pixel centres), in f64 as the reference's arange, rounded once.
 */
static int affine_shape(Ctx *c, Graph *g, Node *n, int *ns, int64_t *sz)
{
	const Value *t = in_opt(g, n, 0), *s;
	char ts[160];

	if (!t)
		return burn_fail(c, BURN_ERR_INVALID, "input theta is required");
	TRY(need_const(c, g, n, 1, &s));
	if (s->rank != 1 || (s->dim[0] != 4 && s->dim[0] != 5) || !dtype_is_int(s->dtype))
		return burn_fail(c, BURN_ERR_SHAPE, "size ('%s') must hold 4 or 5 "
		                 "integers (N, C, (D,) H, W)", s->name);
	*ns = (int)s->dim[0] - 2;
	for (int i = 0; i < s->dim[0]; i++) {
		sz[i] = value_get_i(s, i);
		if (sz[i] < 0 || sz[i] > INT32_MAX)
			return burn_fail(c, BURN_ERR_INVALID, "size[%d] is %lld: 0 .. %d "
			                 "expected", i, (long long)sz[i], INT32_MAX);
	}
	if (!dtype_is_float(t->dtype) || t->rank != 3 || t->dim[0] != sz[0] ||
	    t->dim[1] != *ns || t->dim[2] != *ns + 1)
		return burn_fail(c, BURN_ERR_SHAPE, "theta '%s' is %s: float "
		                 "[%lld,%d,%d] expected", t->name,
		                 value_type_str(t, ts, sizeof ts), (long long)sz[0],
		                 *ns, *ns + 1);
	return BURN_OK;
}

int infer_affine_grid(Ctx *c, Graph *g, Node *n)
{
	int64_t sz[5], dim[5];
	int ns;

	TRY(affine_shape(c, g, n, &ns, sz));
	dim[0] = sz[0];
	for (int i = 0; i < ns; i++)
		dim[1 + i] = sz[2 + i];
	dim[1 + ns] = ns;
	set_out(NOUT(g, n, 0), in_opt(g, n, 0)->dtype, ns + 2, dim);
	return BURN_OK;
}

int lower_affine_grid(Lower *lw, Node *n)
{
	const Value *o = NOUT(lw->g, n, 0);
	int64_t sz[5], os[5];
	int ns, align = attr_int(n, "align_corners", 0) != 0, vars[5], bt, bo, ct;
	KRef base[3], tb, ob, acc;
	KB kb;

	TRY(affine_shape(lw->ctx, lw->g, n, &ns, sz));
	ct = edt(o->dtype);
	shape_strides(ns + 1, o->dim, os);   /* (n, (d,) h, w) over the last dim */
	for (int i = 0; i <= ns; i++)
		os[i] *= ns;
	lower_begin(lw, &kb, n);
	bt = lower_in(lw, &kb, n, 0);
	bo = lower_out(lw, &kb, n, 0);
	loops_open(&kb, ns + 1, o->dim, vars);
	/* base[j]: the coordinate along spatial axis ns-1-j (x is the last) */
	for (int j = 0; j < ns; j++) {
		int64_t S = sz[2 + ns - 1 - j];
		KRef k = kb_cast(&kb, DT_F64, kb_get(&kb, vars[ns - j]));
		double step = align ? (S > 1 ? 2.0 / (double)(S - 1) : 0) : 2.0 / (double)S;
		double start = align ? -1 : -1 + 1.0 / (double)S;
		base[j] = kb_bin(&kb, KO_ADD, dconst(&kb, start),
		                 kb_bin(&kb, KO_MUL, k, dconst(&kb, step)));
	}
	ob = index_linear(&kb, ns + 1, vars, os);
	tb = kb_bin(&kb, KO_MUL, kb_get(&kb, vars[0]), kb_idx(&kb, ns * (ns + 1)));
	for (int i = 0; i < ns; i++) {
		KRef row = kb_bin(&kb, KO_ADD, tb, kb_idx(&kb, i * (ns + 1)));
		acc = kb_cast(&kb, DT_F64, kb_load(&kb, bt, kb_bin(&kb, KO_ADD, row, kb_idx(&kb, ns))));
		for (int j = 0; j < ns; j++)
			acc = kb_bin(&kb, KO_ADD, acc,
			             kb_bin(&kb, KO_MUL, kb_cast(&kb, DT_F64,
			                                         kb_load(&kb, bt, kb_bin(&kb, KO_ADD, row,
			                                                                 kb_idx(&kb, j)))),
			                    base[j]));
		kb_store(&kb, bo, kb_bin(&kb, KO_ADD, ob, kb_idx(&kb, i)), kb_cast(&kb, ct, acc));
	}
	loops_close(&kb, ns + 1);
	lower_end(lw, &kb);
	return BURN_OK;
}

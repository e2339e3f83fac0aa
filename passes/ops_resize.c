/*
 * ops_resize.c - resampling ops: Resize, Upsample, CenterCropPad, Col2Im,
 * GridSample, AffineGrid, RoiAlign and DeformConv (bilinear taps; at the end).
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

/* ---- RoiAlign -------------------------------------------------------------- */

/*
 * RoiAlign(X [N, C, H, W], rois [R, 4], batch_indices [R]) (opset 16):
 * Y[r, c, ph, pw] pools bin (ph, pw) of roi r (x1, y1, x2, y2 times
 * spatial_scale, minus 1/2 for half_pixel; output_half_pixel makes the roi
 * at least 1 x 1) over a grid of sampling_ratio^2 points (ceil(roi size /
 * output size) per axis when 0, so a run-time count), each bilinearly
 * interpolated as the reference does: a point beyond [-1, H] x [-1, W]
 * gives 0, others clamp to the edge.  avg: the mean of the points; max:
 * the largest of the points' weighted corners (w_i v_i), the reference's
 * rule.  In f64, rounded once.  A batch index out of range is clamped.
 */
static int roi_shape(Ctx *c, Graph *g, Node *n, int64_t *dim)
{
	const Value *x = in_opt(g, n, 0), *r = in_opt(g, n, 1), *b = in_opt(g, n, 2);
	const char *mode = attr_str(n, "mode", "avg");
	const char *ctm = attr_str(n, "coordinate_transformation_mode", "half_pixel");
	int64_t oh = attr_int(n, "output_height", 1), ow = attr_int(n, "output_width", 1);
	char ts[3][160];

	if (!x || !r || !b)
		return burn_fail(c, BURN_ERR_INVALID, "X, rois and batch_indices are required");
	if (x->rank != 4 || !dtype_is_float(x->dtype) || r->rank != 2 || r->dim[1] != 4 ||
	    r->dtype != x->dtype || b->rank != 1 || b->dim[0] != r->dim[0] ||
	    !dtype_is_int(b->dtype))
		return burn_fail(c, BURN_ERR_SHAPE, "X %s, rois %s, batch_indices %s: "
		                 "float [N,C,H,W], [R,4] of X's type and integer [R] "
		                 "expected", value_type_str(x, ts[0], sizeof ts[0]),
		                 value_type_str(r, ts[1], sizeof ts[1]),
		                 value_type_str(b, ts[2], sizeof ts[2]));
	if (strcmp(mode, "avg") && strcmp(mode, "max"))
		return burn_fail(c, BURN_ERR_INVALID, "mode '%s': avg or max expected", mode);
	if (strcmp(ctm, "half_pixel") && strcmp(ctm, "output_half_pixel"))
		return burn_fail(c, BURN_ERR_INVALID, "coordinate_transformation_mode "
		                 "'%s': half_pixel or output_half_pixel expected", ctm);
	if (oh < 1 || ow < 1 || oh > INT32_MAX || ow > INT32_MAX ||
	    attr_int(n, "sampling_ratio", 0) < 0)
		return burn_fail(c, BURN_ERR_INVALID, "output %lld x %lld, sampling_ratio "
		                 "%lld: positive sizes and a ratio >= 0 expected",
		                 (long long)oh, (long long)ow,
		                 (long long)attr_int(n, "sampling_ratio", 0));
	dim[0] = r->dim[0]; dim[1] = x->dim[1]; dim[2] = oh; dim[3] = ow;
	return BURN_OK;
}

int infer_roialign(Ctx *c, Graph *g, Node *n)
{
	int64_t dim[4];

	TRY(roi_shape(c, g, n, dim));
	set_out(NOUT(g, n, 0), in_opt(g, n, 0)->dtype, 4, dim);
	return BURN_OK;
}

static KRef d_add(KB *kb, KRef a, KRef b) { return kb_bin(kb, KO_ADD, a, b); }
static KRef d_mul(KB *kb, KRef a, KRef b) { return kb_bin(kb, KO_MUL, a, b); }
static KRef d_sub(KB *kb, KRef a, KRef b) { return kb_bin(kb, KO_SUB, a, b); }

int lower_roialign(Lower *lw, Node *n)
{
	const Value *x = in_opt(lw->g, n, 0);
	int64_t dim[4], os[4], H = x->dim[2], W = x->dim[3], C = x->dim[1], N = x->dim[0];
	int half = strcmp(attr_str(n, "coordinate_transformation_mode", "half_pixel"),
	                  "half_pixel") == 0;
	int avg = strcmp(attr_str(n, "mode", "avg"), "avg") == 0;
	int64_t sr = attr_int(n, "sampling_ratio", 0);
	double scale = attr_float(n, "spatial_scale", 1);
	int vars[4], bx, br, bb, bo, acc, first, iy, ix;
	KRef r, rs[4], sh, sw, rh, rw, bh, bw, gh, gw, cnt, plane, y, xx, v, b;
	KB kb;

	TRY(roi_shape(lw->ctx, lw->g, n, dim));
	shape_strides(4, dim, os);
	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	br = lower_in(lw, &kb, n, 1);
	bb = lower_in(lw, &kb, n, 2);
	bo = lower_out(lw, &kb, n, 0);
	if (value_numel(NOUT(lw->g, n, 0)) == 0 || N == 0 || H == 0 || W == 0) {
		lower_end(lw, &kb);
		return BURN_OK;
	}
	acc = kb_var(&kb, DT_F64, "acc");
	first = kb_var(&kb, DT_BOOL, "first");
	loops_open(&kb, 4, dim, vars);
	r = kb_get(&kb, vars[0]);
	for (int k = 0; k < 4; k++)
		rs[k] = d_sub(&kb, d_mul(&kb, kb_cast(&kb, DT_F64, kb_load(&kb, br,
		                  kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, r, kb_idx(&kb, 4)),
		                         kb_idx(&kb, k)))), dconst(&kb, scale)),
		              dconst(&kb, half ? 0.5 : 0));
	sw = rs[0], sh = rs[1];
	rw = d_sub(&kb, rs[2], rs[0]);
	rh = d_sub(&kb, rs[3], rs[1]);
	if (!half) {
		rw = kb_bin(&kb, KO_MAX, rw, dconst(&kb, 1));
		rh = kb_bin(&kb, KO_MAX, rh, dconst(&kb, 1));
	}
	bh = kb_bin(&kb, KO_DIV, rh, dconst(&kb, (double)dim[2]));
	bw = kb_bin(&kb, KO_DIV, rw, dconst(&kb, (double)dim[3]));
	if (sr > 0) {
		gh = gw = kb_idx(&kb, sr);
	} else {   /* ceil(roi / output), at least 1 so the mean is defined */
		gh = kb_cast(&kb, DT_I64, kb_un(&kb, KO_CEIL, bh));
		gw = kb_cast(&kb, DT_I64, kb_un(&kb, KO_CEIL, bw));
		gh = kb_bin(&kb, KO_MIN, kb_bin(&kb, KO_MAX, gh, kb_idx(&kb, 1)), kb_idx(&kb, 1 << 16));
		gw = kb_bin(&kb, KO_MIN, kb_bin(&kb, KO_MAX, gw, kb_idx(&kb, 1)), kb_idx(&kb, 1 << 16));
	}
	cnt = kb_cast(&kb, DT_F64, kb_bin(&kb, KO_MUL, gh, gw));
	b = kb_cast(&kb, DT_I64, kb_load(&kb, bb, r));
	b = kb_bin(&kb, KO_MIN, kb_bin(&kb, KO_MAX, b, kb_idx(&kb, 0)), kb_idx(&kb, N - 1));
	plane = kb_bin(&kb, KO_MUL, kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, b, kb_idx(&kb, C)),
	                                   kb_get(&kb, vars[1])), kb_idx(&kb, H * W));
	kb_set(&kb, acc, dconst(&kb, 0));
	kb_set(&kb, first, kb_const_i(&kb, DT_BOOL, 1));
	iy = kb_for(&kb, "iy", kb_idx(&kb, 0), gh, 0);
	y = d_add(&kb, d_add(&kb, sh, d_mul(&kb, kb_cast(&kb, DT_F64, kb_get(&kb, vars[2])), bh)),
	          kb_bin(&kb, KO_DIV, d_mul(&kb, d_add(&kb, kb_cast(&kb, DT_F64, kb_get(&kb, iy)),
	                                               dconst(&kb, 0.5)), bh),
	                 kb_cast(&kb, DT_F64, gh)));
	ix = kb_for(&kb, "ix", kb_idx(&kb, 0), gw, 0);
	xx = d_add(&kb, d_add(&kb, sw, d_mul(&kb, kb_cast(&kb, DT_F64, kb_get(&kb, vars[3])), bw)),
	           kb_bin(&kb, KO_DIV, d_mul(&kb, d_add(&kb, kb_cast(&kb, DT_F64, kb_get(&kb, ix)),
	                                                dconst(&kb, 0.5)), bw),
	                  kb_cast(&kb, DT_F64, gw)));
	{
		/* the reference's bilinear sample: 0 outside [-1, H] x [-1, W] */
		KRef in = kb_bin(&kb, KO_AND,
		                 kb_bin(&kb, KO_AND, kb_bin(&kb, KO_GE, y, dconst(&kb, -1)),
		                        kb_bin(&kb, KO_LE, y, dconst(&kb, (double)H))),
		                 kb_bin(&kb, KO_AND, kb_bin(&kb, KO_GE, xx, dconst(&kb, -1)),
		                        kb_bin(&kb, KO_LE, xx, dconst(&kb, (double)W))));
		KRef yc = kb_bin(&kb, KO_MAX, y, dconst(&kb, 0));
		KRef xc = kb_bin(&kb, KO_MAX, xx, dconst(&kb, 0));
		/* clamped both ways: a NaN roi must not index out of X */
		KRef y0 = kb_bin(&kb, KO_MAX, kb_bin(&kb, KO_MIN, kb_cast(&kb, DT_I64,
		                 kb_un(&kb, KO_FLOOR, yc)), kb_idx(&kb, H - 1)), kb_idx(&kb, 0));
		KRef x0 = kb_bin(&kb, KO_MAX, kb_bin(&kb, KO_MIN, kb_cast(&kb, DT_I64,
		                 kb_un(&kb, KO_FLOOR, xc)), kb_idx(&kb, W - 1)), kb_idx(&kb, 0));
		KRef yedge = kb_bin(&kb, KO_GE, y0, kb_idx(&kb, H - 1));
		KRef xedge = kb_bin(&kb, KO_GE, x0, kb_idx(&kb, W - 1));
		KRef y1 = kb_select(&kb, yedge, y0, kb_bin(&kb, KO_ADD, y0, kb_idx(&kb, 1)));
		KRef x1 = kb_select(&kb, xedge, x0, kb_bin(&kb, KO_ADD, x0, kb_idx(&kb, 1)));
		KRef ly = kb_select(&kb, yedge, dconst(&kb, 0), d_sub(&kb, yc, kb_cast(&kb, DT_F64, y0)));
		KRef lx = kb_select(&kb, xedge, dconst(&kb, 0), d_sub(&kb, xc, kb_cast(&kb, DT_F64, x0)));
		KRef hy = d_sub(&kb, dconst(&kb, 1), ly), hx = d_sub(&kb, dconst(&kb, 1), lx);
		KRef at[4], w[4], t[4];
		at[0] = kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, y0, kb_idx(&kb, W)), x0);
		at[1] = kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, y0, kb_idx(&kb, W)), x1);
		at[2] = kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, y1, kb_idx(&kb, W)), x0);
		at[3] = kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, y1, kb_idx(&kb, W)), x1);
		w[0] = d_mul(&kb, hy, hx); w[1] = d_mul(&kb, hy, lx);
		w[2] = d_mul(&kb, ly, hx); w[3] = d_mul(&kb, ly, lx);
		for (int k = 0; k < 4; k++)
			t[k] = kb_select(&kb, in, d_mul(&kb, w[k], kb_cast(&kb, DT_F64,
			                       kb_load(&kb, bx, kb_bin(&kb, KO_ADD, plane, at[k])))),
			                 dconst(&kb, 0));
		if (avg) {
			v = d_add(&kb, d_add(&kb, t[0], t[1]), d_add(&kb, t[2], t[3]));
			kb_set(&kb, acc, d_add(&kb, kb_get(&kb, acc), v));
		} else {
			v = kb_bin(&kb, KO_MAX, kb_bin(&kb, KO_MAX, kb_bin(&kb, KO_MAX, t[0], t[1]), t[2]),
			           t[3]);
			kb_set(&kb, acc, kb_select(&kb, kb_get(&kb, first), v,
			                           kb_bin(&kb, KO_MAX, kb_get(&kb, acc), v)));
			kb_set(&kb, first, kb_const_i(&kb, DT_BOOL, 0));
		}
	}
	kb_end(&kb);   /* ix */
	kb_end(&kb);   /* iy */
	v = kb_get(&kb, acc);
	if (avg)
		v = kb_bin(&kb, KO_DIV, v, cnt);
	kb_store(&kb, bo, index_linear(&kb, 4, vars, os), kb_cast(&kb, edt(x->dtype), v));
	loops_close(&kb, 4);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- DeformConv ------------------------------------------------------------ */

/*
 * DeformConv(X [N,C,H,W], W [M, C/group, kH, kW], offset [N, G*kH*kW*2,
 * oH, oW], B? [M], mask? [N, G*kH*kW, oH, oW]) (opset 19, 2-D): Conv whose
 * taps read X at their place plus a learned (dy, dx), bilinearly, with 0
 * beyond the image (a point beyond (-1, H) x (-1, W) reads 0, and so does
 * each corner outside), times the mask; channel c takes offset group
 * c / (C/G).  One kernel parallel over the output, the sum in f64.
 */
typedef struct Dcn {
	int64_t N, C, H, W, M, kh, kw, oh, ow, group, og;
	int64_t s[2], d[2], p[4];
	int dt;                 /* X's element type as loaded */
} Dcn;

static int dcn_shape(Ctx *c, Graph *g, Node *n, Dcn *a)
{
	const Value *x = in_opt(g, n, 0), *w = in_opt(g, n, 1), *o = in_opt(g, n, 2);
	const Value *b = in_opt(g, n, 3), *m = in_opt(g, n, 4);
	const int64_t *v;
	int k;
	char ts[3][160];

	if (!x || !w || !o)
		return burn_fail(c, BURN_ERR_INVALID, "X, W and offset are required");
	if (x->rank != 4 || w->rank != 4 || o->rank != 4 || !dtype_is_float(x->dtype) ||
	    w->dtype != x->dtype || o->dtype != x->dtype)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "X %s, W %s, offset %s: 2-D "
		                 "float convolutions are supported",
		                 value_type_str(x, ts[0], sizeof ts[0]),
		                 value_type_str(w, ts[1], sizeof ts[1]),
		                 value_type_str(o, ts[2], sizeof ts[2]));
	a->dt = edt(x->dtype);
	a->N = x->dim[0]; a->C = x->dim[1]; a->H = x->dim[2]; a->W = x->dim[3];
	a->M = w->dim[0]; a->kh = w->dim[2]; a->kw = w->dim[3];
	a->group = attr_int(n, "group", 1);
	a->og = attr_int(n, "offset_group", 1);
	a->s[0] = a->s[1] = a->d[0] = a->d[1] = 1;
	a->p[0] = a->p[1] = a->p[2] = a->p[3] = 0;
	if ((k = attr_ints(n, "strides", &v)) == 2)
		a->s[0] = v[0], a->s[1] = v[1];
	else if (k)
		return burn_fail(c, BURN_ERR_INVALID, "strides: 2 expected");
	if ((k = attr_ints(n, "dilations", &v)) == 2)
		a->d[0] = v[0], a->d[1] = v[1];
	else if (k)
		return burn_fail(c, BURN_ERR_INVALID, "dilations: 2 expected");
	if ((k = attr_ints(n, "pads", &v)) == 4)
		memcpy(a->p, v, sizeof a->p);
	else if (k)
		return burn_fail(c, BURN_ERR_INVALID, "pads: 4 expected");
	if ((k = attr_ints(n, "kernel_shape", &v)) && (k != 2 || v[0] != a->kh || v[1] != a->kw))
		return burn_fail(c, BURN_ERR_INVALID, "kernel_shape disagrees with W");
	for (int i = 0; i < 2; i++)
		if (a->s[i] < 1 || a->d[i] < 1 || a->s[i] > INT32_MAX || a->d[i] > INT32_MAX ||
		    a->p[i] < 0 || a->p[i + 2] < 0 || a->p[i] > INT32_MAX || a->p[i + 2] > INT32_MAX)
			return burn_fail(c, BURN_ERR_INVALID, "strides, dilations and pads "
			                 "must be positive (pads >= 0)");
	if (a->group < 1 || a->og < 1 || a->C % a->group || a->M % a->group ||
	    a->C % a->og || w->dim[1] * a->group != a->C || a->kh < 1 || a->kw < 1)
		return burn_fail(c, BURN_ERR_SHAPE, "X %s, W %s, group %lld, offset_group "
		                 "%lld do not fit", value_type_str(x, ts[0], sizeof ts[0]),
		                 value_type_str(w, ts[1], sizeof ts[1]),
		                 (long long)a->group, (long long)a->og);
	a->oh = (a->H + a->p[0] + a->p[2] - a->d[0] * (a->kh - 1) - 1) / a->s[0] + 1;
	a->ow = (a->W + a->p[1] + a->p[3] - a->d[1] * (a->kw - 1) - 1) / a->s[1] + 1;
	if (a->oh < 0 || a->ow < 0)
		a->oh = a->ow = 0;
	if (o->dim[0] != a->N || o->dim[1] != a->og * a->kh * a->kw * 2 ||
	    o->dim[2] != a->oh || o->dim[3] != a->ow)
		return burn_fail(c, BURN_ERR_SHAPE, "offset %s: [%lld,%lld,%lld,%lld] "
		                 "expected", value_type_str(o, ts[0], sizeof ts[0]),
		                 (long long)a->N, (long long)(a->og * a->kh * a->kw * 2),
		                 (long long)a->oh, (long long)a->ow);
	if (b && (b->rank != 1 || b->dim[0] != a->M || b->dtype != x->dtype))
		return burn_fail(c, BURN_ERR_SHAPE, "B %s: [%lld] expected",
		                 value_type_str(b, ts[0], sizeof ts[0]), (long long)a->M);
	if (m && (m->rank != 4 || m->dim[0] != a->N || m->dim[1] != a->og * a->kh * a->kw ||
	          m->dim[2] != a->oh || m->dim[3] != a->ow || m->dtype != x->dtype))
		return burn_fail(c, BURN_ERR_SHAPE, "mask %s: [%lld,%lld,%lld,%lld] expected",
		                 value_type_str(m, ts[0], sizeof ts[0]), (long long)a->N,
		                 (long long)(a->og * a->kh * a->kw), (long long)a->oh,
		                 (long long)a->ow);
	return BURN_OK;
}

int infer_deform_conv(Ctx *c, Graph *g, Node *n)
{
	Dcn a;
	int64_t dim[4];

	TRY(dcn_shape(c, g, n, &a));
	dim[0] = a.N; dim[1] = a.M; dim[2] = a.oh; dim[3] = a.ow;
	set_out(NOUT(g, n, 0), in_opt(g, n, 0)->dtype, 4, dim);
	return BURN_OK;
}

/* Element (y, x) of the plane at `plane`, 0 outside (loads guarded). */
static KRef dcn_at(KB *kb, int bx, KRef plane, KRef y, KRef x, const Dcn *a)
{
	KRef ok = kb_bin(kb, KO_AND,
	                 kb_bin(kb, KO_AND, kb_bin(kb, KO_GE, y, kb_idx(kb, 0)),
	                        kb_bin(kb, KO_LT, y, kb_idx(kb, a->H))),
	                 kb_bin(kb, KO_AND, kb_bin(kb, KO_GE, x, kb_idx(kb, 0)),
	                        kb_bin(kb, KO_LT, x, kb_idx(kb, a->W))));
	KRef at = kb_bin(kb, KO_ADD, plane, kb_bin(kb, KO_ADD, kb_bin(kb, KO_MUL, y,
	                                                              kb_idx(kb, a->W)), x));

	return kb_cast(kb, DT_F64, kb_load_guard(kb, bx, at, ok,
	                                         kb_const_f(kb, a->dt, 0)));
}

int lower_deform_conv(Lower *lw, Node *n)
{
	Dcn a;
	int64_t dim[4], os[4], cg, mg, cog, taps;
	int vars[4], bx, bw, bo, boff, bb = -1, bm = -1, acc, ic, kh, kw;
	KRef nn, oc, oy, ox, c, g, tap, og, obase, dy, dx, y, x, y0, x0, ly, lx, plane, v, wt;
	KB kb;

	TRY(dcn_shape(lw->ctx, lw->g, n, &a));
	dim[0] = a.N; dim[1] = a.M; dim[2] = a.oh; dim[3] = a.ow;
	shape_strides(4, dim, os);
	cg = a.C / a.group;       /* input channels a group */
	mg = a.M / a.group;       /* output channels a group */
	cog = a.C / a.og;         /* input channels an offset group */
	taps = a.kh * a.kw;
	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	bw = lower_in(lw, &kb, n, 1);
	boff = lower_in(lw, &kb, n, 2);
	if (in_opt(lw->g, n, 3))
		bb = lower_in(lw, &kb, n, 3);
	if (in_opt(lw->g, n, 4))
		bm = lower_in(lw, &kb, n, 4);
	bo = lower_out(lw, &kb, n, 0);
	if (a.N * a.M * a.oh * a.ow == 0) {
		lower_end(lw, &kb);
		return BURN_OK;
	}
	acc = kb_var(&kb, DT_F64, "acc");
	loops_open(&kb, 4, dim, vars);
	nn = kb_get(&kb, vars[0]); oc = kb_get(&kb, vars[1]);
	oy = kb_get(&kb, vars[2]); ox = kb_get(&kb, vars[3]);
	g = kb_bin(&kb, KO_DIV, oc, kb_idx(&kb, mg));
	kb_set(&kb, acc, bb >= 0 ? kb_cast(&kb, DT_F64, kb_load(&kb, bb, oc)) : dconst(&kb, 0));
	ic = kb_for(&kb, "ic", kb_idx(&kb, 0), kb_idx(&kb, cg), 0);
	c = kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, g, kb_idx(&kb, cg)), kb_get(&kb, ic));
	og = kb_bin(&kb, KO_DIV, c, kb_idx(&kb, cog));
	plane = kb_bin(&kb, KO_MUL, kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, nn, kb_idx(&kb, a.C)), c),
	               kb_idx(&kb, a.H * a.W));
	kh = kb_for(&kb, "kh", kb_idx(&kb, 0), kb_idx(&kb, a.kh), 0);
	kw = kb_for(&kb, "kw", kb_idx(&kb, 0), kb_idx(&kb, a.kw), 0);
	tap = kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, kb_get(&kb, kh), kb_idx(&kb, a.kw)),
	             kb_get(&kb, kw));
	/* offset[n, (og*taps + tap)*2 + {0,1}, oy, ox] */
	obase = kb_bin(&kb, KO_MUL, kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, nn,
	               kb_idx(&kb, a.og * taps * 2)), kb_bin(&kb, KO_MUL, kb_bin(&kb, KO_ADD,
	               kb_bin(&kb, KO_MUL, og, kb_idx(&kb, taps)), tap), kb_idx(&kb, 2))),
	               kb_idx(&kb, a.oh * a.ow));
	obase = kb_bin(&kb, KO_ADD, obase, kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, oy,
	               kb_idx(&kb, a.ow)), ox));
	dy = kb_cast(&kb, DT_F64, kb_load(&kb, boff, obase));
	dx = kb_cast(&kb, DT_F64, kb_load(&kb, boff, kb_bin(&kb, KO_ADD, obase,
	                                                    kb_idx(&kb, a.oh * a.ow))));
	y = d_add(&kb, kb_cast(&kb, DT_F64, kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_SUB,
	          kb_bin(&kb, KO_MUL, oy, kb_idx(&kb, a.s[0])), kb_idx(&kb, a.p[0])),
	          kb_bin(&kb, KO_MUL, kb_get(&kb, kh), kb_idx(&kb, a.d[0])))), dy);
	x = d_add(&kb, kb_cast(&kb, DT_F64, kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_SUB,
	          kb_bin(&kb, KO_MUL, ox, kb_idx(&kb, a.s[1])), kb_idx(&kb, a.p[1])),
	          kb_bin(&kb, KO_MUL, kb_get(&kb, kw), kb_idx(&kb, a.d[1])))), dx);
	{
		KRef in = kb_bin(&kb, KO_AND,
		                 kb_bin(&kb, KO_AND, kb_bin(&kb, KO_GT, y, dconst(&kb, -1)),
		                        kb_bin(&kb, KO_LT, y, dconst(&kb, (double)a.H))),
		                 kb_bin(&kb, KO_AND, kb_bin(&kb, KO_GT, x, dconst(&kb, -1)),
		                        kb_bin(&kb, KO_LT, x, dconst(&kb, (double)a.W))));
		/* inside (-1, H): the floor fits; clamped for NaN and far points,
		 * which `in` drops anyway */
		KRef fy = kb_un(&kb, KO_FLOOR, kb_select(&kb, in, y, dconst(&kb, 0)));
		KRef fx = kb_un(&kb, KO_FLOOR, kb_select(&kb, in, x, dconst(&kb, 0)));
		KRef y1, x1, hy, hx;
		y0 = kb_cast(&kb, DT_I64, fy);
		x0 = kb_cast(&kb, DT_I64, fx);
		y1 = kb_bin(&kb, KO_ADD, y0, kb_idx(&kb, 1));
		x1 = kb_bin(&kb, KO_ADD, x0, kb_idx(&kb, 1));
		ly = d_sub(&kb, y, fy);
		lx = d_sub(&kb, x, fx);
		hy = d_sub(&kb, dconst(&kb, 1), ly);
		hx = d_sub(&kb, dconst(&kb, 1), lx);
		v = d_add(&kb, d_add(&kb, d_mul(&kb, d_mul(&kb, hy, hx), dcn_at(&kb, bx, plane, y0, x0, &a)),
		                     d_mul(&kb, d_mul(&kb, hy, lx), dcn_at(&kb, bx, plane, y0, x1, &a))),
		          d_add(&kb, d_mul(&kb, d_mul(&kb, ly, hx), dcn_at(&kb, bx, plane, y1, x0, &a)),
		                     d_mul(&kb, d_mul(&kb, ly, lx), dcn_at(&kb, bx, plane, y1, x1, &a))));
		v = kb_select(&kb, in, v, dconst(&kb, 0));
	}
	if (bm >= 0) {
		KRef mat = kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, kb_bin(&kb, KO_ADD,
		                  kb_bin(&kb, KO_MUL, nn, kb_idx(&kb, a.og * taps)),
		                  kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, og, kb_idx(&kb, taps)), tap)),
		                  kb_idx(&kb, a.oh * a.ow)),
		                  kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, oy, kb_idx(&kb, a.ow)), ox));
		v = d_mul(&kb, v, kb_cast(&kb, DT_F64, kb_load(&kb, bm, mat)));
	}
	/* W[oc, ic, kh, kw] */
	wt = kb_load(&kb, bw, kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, kb_bin(&kb, KO_ADD,
	             kb_bin(&kb, KO_MUL, oc, kb_idx(&kb, cg)), kb_get(&kb, ic)), kb_idx(&kb, taps)),
	             tap));
	kb_set(&kb, acc, d_add(&kb, kb_get(&kb, acc), d_mul(&kb, kb_cast(&kb, DT_F64, wt), v)));
	kb_end(&kb);   /* kw */
	kb_end(&kb);   /* kh */
	kb_end(&kb);   /* ic */
	kb_store(&kb, bo, index_linear(&kb, 4, vars, os),
	         kb_cast(&kb, edt(in_opt(lw->g, n, 0)->dtype), kb_get(&kb, acc)));
	loops_close(&kb, 4);
	lower_end(lw, &kb);
	return BURN_OK;
}

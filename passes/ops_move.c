/*
 * ops_move.c - data movement and shape ops: copies and views (Identity,
 * Reshape, Flatten, Squeeze, Unsqueeze; Dropout's lowering is in
 * ops_random.c), permutations (Transpose,
 * DepthToSpace, SpaceToDepth), pieces (Concat, Split, Slice, Pad, Tile,
 * Expand), indexing (Gather*, Scatter*, OneHot, ReverseSequence), masks
 * (Trilu, EyeLike) and generators (Shape, Size, Constant, ConstantOfShape,
 * Range).
 *
 * Every lowering here is a loop nest over one value's shape with an index
 * expression into another, built from i64 constants so the kernel builder
 * folds what it can.  These lowerings are also what constant folding runs
 * (through the kernel IR interpreter), so they must be exact for every
 * dtype: apart from Range they only load, store, select and compare,
 * never convert values (f16/bf16 buffers load and store through f32,
 * which is exact).
 *
 * Indices read from tensors at run time (Gather, Scatter, OneHot, ...) are
 * made non-negative and clamped into range, so a bad index cannot read or
 * write out of bounds; the ONNX spec calls such input an error anyway.
 */
#include <string.h>
#include <math.h>
#include "lower.h"
#include "gemm.h"

#define MAX_LIST 64     /* longest int list we read (Split sizes) */

/* ---- small helpers ---------------------------------------------------- */

/* Output k of n, or NULL when it is omitted. */
static Value *out_opt(Graph *g, Node *n, int k)
{
	return k < n->nout && n->out[k] >= 0 ? GV(g, n->out[k]) : NULL;
}

/* Input k of n, or NULL when it is omitted. */
static const Value *in_opt(Graph *g, Node *n, int k)
{
	return k >= 0 && k < n->nin && n->in[k] >= 0 ? GV(g, n->in[k]) : NULL;
}

/* Input k, which the op requires. */
static int need_in(Ctx *c, Graph *g, Node *n, int k, const Value **out)
{
	*out = NIN(g, n, k);
	if (!*out)
		return burn_fail(c, BURN_ERR_INVALID, "input %d is required", k);
	return BURN_OK;
}

/* The dtype of expressions over a buffer of dtype dt: 16-bit floats are
 * loaded and stored as f32. */
static int edt(int dt)
{
	return dt == DT_F16 || dt == DT_BF16 ? DT_F32 : dt;
}

/* Constant x as an expression that can be stored into a dt buffer. */
static KRef kconst(KB *kb, int dt, double x)
{
	dt = edt(dt);
	if (dtype_is_float(dt))
		return kb_const_f(kb, dt, x);
	if (dt == DT_BOOL)
		return kb_const_i(kb, dt, x != 0);
	return kb_const_i(kb, dt, (int64_t)x);
}

/* e as an i64 expression. */
static KRef as_i64(KB *kb, KRef e)
{
	return kb_dtype(kb->k, e) == DT_I64 ? e : kb_cast(kb, DT_I64, e);
}

/* Index idx (any integer dtype) into an axis of size d: negative counts
 * from the end, and the result is clamped into [0, d-1]. */
static KRef norm_index(KB *kb, KRef idx, int64_t d)
{
	KRef z = kb_idx(kb, 0);

	idx = as_i64(kb, idx);
	idx = kb_select(kb, kb_bin(kb, KO_LT, idx, z),
	                kb_bin(kb, KO_ADD, idx, kb_idx(kb, d)), idx);
	return kb_bin(kb, KO_MIN, kb_bin(kb, KO_MAX, idx, z),
	              kb_idx(kb, d > 0 ? d - 1 : 0));
}

static int is_index_type(int dt)
{
	return dt == DT_I32 || dt == DT_I64;
}

/* Read a constant int list (scalar or 1-D) from input k into out[0..*cnt). */
static int const_ints(Ctx *c, Graph *g, Node *n, int k, int64_t *out, int max,
                      int *cnt)
{
	const Value *v;
	int64_t m;

	TRY(need_const(c, g, n, k, &v));
	if (v->rank > 1)
		return burn_fail(c, BURN_ERR_INVALID, "input %d must be 1-D", k);
	if (!dtype_is_int(v->dtype))
		return burn_fail(c, BURN_ERR_INVALID, "input %d must be integer, is %s",
		                 k, dtype_name(v->dtype));
	m = value_numel(v);
	if (m > max)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "input %d has %lld elements, "
		                 "more than %d", k, (long long)m, max);
	for (int64_t i = 0; i < m; i++)
		out[i] = value_get_i(v, i);
	*cnt = (int)m;
	return BURN_OK;
}

/* An int list given either as attribute `attr` or as constant input k (the
 * form changed with the opset).  *cnt = -1 when neither is present. */
static int ints_arg(Ctx *c, Graph *g, Node *n, const char *attr, int k,
                    int64_t *out, int max, int *cnt)
{
	const int64_t *p;
	const Attr *a = node_attr(n, attr);

	if (a) {
		int m = attr_ints(n, attr, &p);
		if (a->type != AT_INTS)
			return burn_fail(c, BURN_ERR_INVALID, "attribute %s must be a list "
			                 "of ints", attr);
		if (m > max)
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "attribute %s has %d "
			                 "elements, more than %d", attr, m, max);
		if (m > 0)
			memcpy(out, p, sizeof *out * m);
		*cnt = m;
		return BURN_OK;
	}
	if (in_opt(g, n, k))
		return const_ints(c, g, n, k, out, max, cnt);
	*cnt = -1;
	return BURN_OK;
}

/* Normalise axes[0..m) against rank into flags mark[0..rank): error on a
 * duplicate or an out-of-range axis. */
static int mark_axes(Ctx *c, const int64_t *axes, int m, int rank, char *mark)
{
	memset(mark, 0, BURN_MAX_RANK);
	for (int i = 0; i < m; i++) {
		int a;
		TRY(norm_axis(c, axes[i], rank, &a));
		if (a >= rank || mark[a])
			return burn_fail(c, BURN_ERR_INVALID, "axis %lld repeated or out "
			                 "of range", (long long)axes[i]);
		mark[a] = 1;
	}
	return BURN_OK;
}

/* Product of dim[lo..hi), overflow-checked. */
static int dim_prod(Ctx *c, const int64_t *dim, int lo, int hi, int64_t *out)
{
	int64_t p = 1;

	for (int i = lo; i < hi; i++)
		if (burn_mul_ovf(p, dim[i], &p))
			return burn_fail(c, BURN_ERR_LIMIT, "element count overflows");
	*out = p;
	return BURN_OK;
}

/* The copy out[o] = in[i] over a loop nest of dims[0..rank), where each loop
 * variable advances the input index by istride[] and the output index by
 * ostride[], starting at ioff and ooff.  Transpose, DepthToSpace, Slice,
 * Concat and Split are all this with different strides. */
static void copy_strided(KB *kb, int bi, int bo, int rank, const int64_t *dims,
                         const int64_t *istride, int64_t ioff,
                         const int64_t *ostride, int64_t ooff)
{
	int vars[BURN_MAX_RANK];
	KRef ii, oi;

	loops_open(kb, rank, dims, vars);
	ii = kb_bin(kb, KO_ADD, kb_idx(kb, ioff), index_linear(kb, rank, vars, istride));
	oi = kb_bin(kb, KO_ADD, kb_idx(kb, ooff), index_linear(kb, rank, vars, ostride));
	kb_store(kb, bo, oi, kb_load(kb, bi, ii));
	loops_close(kb, rank);
}

/* Sequential loops (for scatters, where iterations may hit the same
 * element and must run in order). */
static void loops_seq(KB *kb, int rank, const int64_t *dim, int *vars)
{
	for (int i = 0; i < rank; i++) {
		char name[8];
		snprintf(name, sizeof name, "j%d", i);
		vars[i] = kb_for(kb, name, kb_idx(kb, 0), kb_idx(kb, dim[i]), 0);
	}
}

/* ---- flat copies: Identity, Reshape, Flatten, Squeeze, Unsqueeze ------ */

/* out[i] = in[i] over all elements: the ops that only change the shape. */
int lower_copy(Lower *lw, Node *n)
{
	Value *o = NOUT(lw->g, n, 0);
	KB kb;
	int bi, bo, i;

	lower_begin(lw, &kb, n);
	bi = lower_in(lw, &kb, n, 0);
	bo = lower_out(lw, &kb, n, 0);
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, value_numel(o)), KF_PARALLEL);
	kb_store(&kb, bo, kb_get(&kb, i), kb_load(&kb, bi, kb_get(&kb, i)));
	kb_end(&kb);
	lower_end(lw, &kb);
	return BURN_OK;
}

/*
 * Reshape(data, shape): 0 copies the input dim (unless allowzero=1), one
 * -1 takes what is left.
 */
int infer_reshape(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	int64_t s[MAX_LIST], dim[BURN_MAX_RANK], known = 1, total;
	int m, neg = -1, allowzero = (int)attr_int(n, "allowzero", 0);

	TRY(need_in(c, g, n, 0, &x));
	TRY(const_ints(c, g, n, 1, s, MAX_LIST, &m));
	if (m > BURN_MAX_RANK)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "rank %d is over %d", m,
		                 BURN_MAX_RANK);
	for (int i = 0; i < m; i++) {
		int64_t d = s[i];
		if (d == 0 && !allowzero) {
			if (i >= x->rank)
				return burn_fail(c, BURN_ERR_SHAPE, "shape[%d] = 0 but the "
				                 "input has rank %d", i, x->rank);
			d = x->dim[i];
		} else if (d == -1) {
			if (neg >= 0)
				return burn_fail(c, BURN_ERR_SHAPE, "more than one -1 in shape");
			neg = i;
			continue;
		} else if (d < 0) {
			return burn_fail(c, BURN_ERR_SHAPE, "shape[%d] = %lld", i,
			                 (long long)d);
		}
		dim[i] = d;
		if (burn_mul_ovf(known, d, &known))
			return burn_fail(c, BURN_ERR_LIMIT, "element count overflows");
	}
	total = value_numel(x);
	if (neg >= 0) {
		if (known == 0 || total % known)
			return burn_fail(c, BURN_ERR_SHAPE, "cannot infer -1: %lld elements "
			                 "into blocks of %lld", (long long)total,
			                 (long long)known);
		dim[neg] = total / known;
	} else if (known != total) {
		return burn_fail(c, BURN_ERR_SHAPE, "reshape of %lld elements into %lld",
		                 (long long)total, (long long)known);
	}
	set_out(NOUT(g, n, 0), x->dtype, m, dim);
	return BURN_OK;
}

/* Flatten(input, axis=1) -> 2-D [prod(dims before axis), prod(the rest)]. */
int infer_flatten(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	int64_t axis = attr_int(n, "axis", 1), dim[2];

	TRY(need_in(c, g, n, 0, &x));
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis > x->rank)
		return burn_fail(c, BURN_ERR_INVALID, "axis %lld out of range for rank %d",
		                 (long long)attr_int(n, "axis", 1), x->rank);
	TRY(dim_prod(c, x->dim, 0, (int)axis, &dim[0]));
	TRY(dim_prod(c, x->dim, (int)axis, x->rank, &dim[1]));
	set_out(NOUT(g, n, 0), x->dtype, 2, dim);
	return BURN_OK;
}

/* Squeeze(data, axes?): drop the given dims of size 1, or all of them. */
int infer_squeeze(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	int64_t axes[MAX_LIST], dim[BURN_MAX_RANK];
	char mark[BURN_MAX_RANK];
	int m, r = 0;

	TRY(need_in(c, g, n, 0, &x));
	TRY(ints_arg(c, g, n, "axes", 1, axes, MAX_LIST, &m));
	if (m < 0) {
		for (int i = 0; i < x->rank; i++)
			mark[i] = x->dim[i] == 1;
	} else {
		TRY(mark_axes(c, axes, m, x->rank, mark));
	}
	for (int i = 0; i < x->rank; i++) {
		if (!mark[i]) {
			dim[r++] = x->dim[i];
			continue;
		}
		if (x->dim[i] != 1)
			return burn_fail(c, BURN_ERR_SHAPE, "cannot squeeze dim %d of size "
			                 "%lld", i, (long long)x->dim[i]);
	}
	set_out(NOUT(g, n, 0), x->dtype, r, dim);
	return BURN_OK;
}

/* Unsqueeze(data, axes): insert dims of size 1 at the given output axes. */
int infer_unsqueeze(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	int64_t axes[MAX_LIST], dim[BURN_MAX_RANK];
	char mark[BURN_MAX_RANK];
	int m, r, k = 0;

	TRY(need_in(c, g, n, 0, &x));
	TRY(ints_arg(c, g, n, "axes", 1, axes, MAX_LIST, &m));
	if (m < 0)
		return burn_fail(c, BURN_ERR_INVALID, "axes are required");
	r = x->rank + m;
	if (r > BURN_MAX_RANK)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "rank %d is over %d", r,
		                 BURN_MAX_RANK);
	TRY(mark_axes(c, axes, m, r, mark));
	for (int i = 0; i < r; i++)
		dim[i] = mark[i] ? 1 : x->dim[k++];
	set_out(NOUT(g, n, 0), x->dtype, r, dim);
	return BURN_OK;
}

/* ---- permutations ----------------------------------------------------- */

/* The permutation of Transpose: attribute perm, default reversed dims. */
static int get_perm(Ctx *c, Node *n, int rank, int *perm)
{
	const int64_t *p;
	int m = attr_ints(n, "perm", &p);
	char seen[BURN_MAX_RANK] = {0};

	if (!node_attr(n, "perm")) {
		for (int i = 0; i < rank; i++)
			perm[i] = rank - 1 - i;
		return BURN_OK;
	}
	if (m != rank)
		return burn_fail(c, BURN_ERR_INVALID, "perm has %d entries for rank %d",
		                 m, rank);
	for (int i = 0; i < m; i++) {
		int a;
		TRY(norm_axis(c, p[i], rank, &a));
		if (seen[a])
			return burn_fail(c, BURN_ERR_INVALID, "perm repeats axis %d", a);
		seen[a] = 1;
		perm[i] = a;
	}
	return BURN_OK;
}

int infer_transpose(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	int perm[BURN_MAX_RANK];
	int64_t dim[BURN_MAX_RANK];

	TRY(need_in(c, g, n, 0, &x));
	TRY(get_perm(c, n, x->rank, perm));
	for (int i = 0; i < x->rank; i++)
		dim[i] = x->dim[perm[i]];
	set_out(NOUT(g, n, 0), x->dtype, x->rank, dim);
	return BURN_OK;
}

/* Loop over the output; output axis i walks input axis perm[i]. */
int lower_transpose(Lower *lw, Node *n)
{
	const Value *x = NIN(lw->g, n, 0), *o = NOUT(lw->g, n, 0);
	int perm[BURN_MAX_RANK];
	int64_t xs[BURN_MAX_RANK], ps[BURN_MAX_RANK], os[BURN_MAX_RANK];
	KB kb;
	int bi, bo;

	TRY(get_perm(lw->ctx, n, x->rank, perm));
	shape_strides(x->rank, x->dim, xs);
	shape_strides(o->rank, o->dim, os);
	for (int i = 0; i < o->rank; i++)
		ps[i] = xs[perm[i]];
	lower_begin(lw, &kb, n);
	bi = lower_in(lw, &kb, n, 0);
	bo = lower_out(lw, &kb, n, 0);
	copy_strided(&kb, bi, bo, o->rank, o->dim, ps, 0, os, 0);
	lower_end(lw, &kb);
	return BURN_OK;
}

/*
 * DepthToSpace / SpaceToDepth on NCHW with block size b.
 * DepthToSpace: out[n, c, h*b+i, w*b+j] = in[n, ch, h, w] with
 * ch = (i*b + j)*C' + c (DCR) or c*b*b + i*b + j (CRD).
 * SpaceToDepth: out[n, (i*b + j)*C + c, h, w] = in[n, c, h*b+i, w*b+j].
 */
int infer_d2s(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	int64_t b = attr_int(n, "blocksize", 0), dim[4];

	TRY(need_in(c, g, n, 0, &x));
	if (x->rank != 4)
		return burn_fail(c, BURN_ERR_SHAPE, "input must be 4-D, is rank %d",
		                 x->rank);
	if (b <= 0 || b > (1 << 20))
		return burn_fail(c, BURN_ERR_INVALID, "blocksize %lld", (long long)b);
	if (n->op == OP_DepthToSpace) {
		const char *mode = attr_str(n, "mode", "DCR");
		if (strcmp(mode, "DCR") && strcmp(mode, "CRD"))
			return burn_fail(c, BURN_ERR_INVALID, "mode '%s'", mode);
		if (x->dim[1] % (b * b))
			return burn_fail(c, BURN_ERR_SHAPE, "channels %lld not divisible "
			                 "by blocksize^2", (long long)x->dim[1]);
		dim[0] = x->dim[0];
		dim[1] = x->dim[1] / (b * b);
		if (burn_mul_ovf(x->dim[2], b, &dim[2]) ||
		    burn_mul_ovf(x->dim[3], b, &dim[3]))
			return burn_fail(c, BURN_ERR_LIMIT, "size overflows");
	} else {
		if (x->dim[2] % b || x->dim[3] % b)
			return burn_fail(c, BURN_ERR_SHAPE, "spatial dims not divisible by "
			                 "blocksize %lld", (long long)b);
		dim[0] = x->dim[0];
		if (burn_mul_ovf(x->dim[1], b * b, &dim[1]))
			return burn_fail(c, BURN_ERR_LIMIT, "size overflows");
		dim[2] = x->dim[2] / b;
		dim[3] = x->dim[3] / b;
	}
	set_out(NOUT(g, n, 0), x->dtype, 4, dim);
	return BURN_OK;
}

/* Both as a 6-D strided copy whose loops run in output order. */
int lower_d2s(Lower *lw, Node *n)
{
	const Value *x = NIN(lw->g, n, 0);
	int64_t b = attr_int(n, "blocksize", 1);
	int64_t N = x->dim[0], C = x->dim[1], H = x->dim[2], W = x->dim[3];
	int64_t dims[6], is[6], os[6];
	KB kb;
	int bi, bo;

	if (n->op == OP_DepthToSpace) {
		int64_t C2 = C / (b * b);
		int crd = !strcmp(attr_str(n, "mode", "DCR"), "CRD");
		/* loops n, c, h, i, w, j: output [N, C2, H, b, W, b] */
		int64_t d[6] = { N, C2, H, b, W, b };
		int64_t s[6] = { C*H*W, H*W, W, b*C2*H*W, 1, C2*H*W };
		if (crd) {
			s[1] = b*b*H*W;
			s[3] = b*H*W;
			s[5] = H*W;
		}
		memcpy(dims, d, sizeof d);
		memcpy(is, s, sizeof s);
	} else {
		int64_t H2 = H / b, W2 = W / b;
		/* loops n, i, j, c, h, w: output [N, b, b, C, H2, W2] */
		int64_t d[6] = { N, b, b, C, H2, W2 };
		int64_t s[6] = { C*H*W, W, 1, H*W, b*W, b };
		memcpy(dims, d, sizeof d);
		memcpy(is, s, sizeof s);
	}
	shape_strides(6, dims, os);
	lower_begin(lw, &kb, n);
	bi = lower_in(lw, &kb, n, 0);
	bo = lower_out(lw, &kb, n, 0);
	copy_strided(&kb, bi, bo, 6, dims, is, 0, os, 0);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- Concat, Split, Slice --------------------------------------------- */

int infer_concat(Ctx *c, Graph *g, Node *n)
{
	const Value *x0;
	int64_t dim[BURN_MAX_RANK];
	int axis;

	TRY(need_in(c, g, n, 0, &x0));
	if (!node_attr(n, "axis"))
		return burn_fail(c, BURN_ERR_INVALID, "attribute axis is required");
	if (x0->rank < 1)
		return burn_fail(c, BURN_ERR_SHAPE, "cannot concatenate scalars");
	TRY(norm_axis(c, attr_int(n, "axis", 0), x0->rank, &axis));
	memcpy(dim, x0->dim, sizeof dim);
	dim[axis] = 0;
	for (int k = 0; k < n->nin; k++) {
		const Value *x;
		TRY(need_in(c, g, n, k, &x));
		if (x->dtype != x0->dtype || x->rank != x0->rank)
			return burn_fail(c, BURN_ERR_SHAPE, "input %d differs in dtype or "
			                 "rank from input 0", k);
		for (int i = 0; i < x->rank; i++)
			if (i != axis && x->dim[i] != x0->dim[i])
				return burn_fail(c, BURN_ERR_SHAPE, "input %d: dim %d is %lld, "
				                 "not %lld", k, i, (long long)x->dim[i],
				                 (long long)x0->dim[i]);
		if (burn_add_ovf(dim[axis], x->dim[axis], &dim[axis]))
			return burn_fail(c, BURN_ERR_LIMIT, "size overflows");
	}
	set_out(NOUT(g, n, 0), x0->dtype, x0->rank, dim);
	return BURN_OK;
}

/* Whether value v is an intermediate that node n alone reads (once), no
 * alias of another's memory and none in its: it can live anywhere. */
static int concat_part(const Graph *g, const KProgram *p, const Node *n, int v)
{
	const Value *x = GV(g, v);
	int uses = 0;

	if (x->kind != VK_TEMP || x->is_output || x->data || x->producer < 0 ||
	    kprog_storage(p, v) != v || !value_shape_known(x) || value_numel(x) <= 0)
		return 0;
	for (int i = 0; i < g->nnode; i++) {
		const Node *m = &g->node[i];
		if (m->dead)
			continue;
		for (int k = 0; k < m->nin; k++)
			if (m->in[k] == v && (m != n || ++uses > 1))
				return 0;
	}
	for (int w = 0; w < p->nalias; w++)
		if (w != v && p->alias[w] == v)
			return 0;
	return uses == 1;
}

/*
 * The Concat in place: where every dim before the axis is 1, input k is
 * one contiguous run of the output, from the sum of the inputs' bytes
 * before it.  Where each input is an intermediate only the Concat reads,
 * it is placed there (lower_set_alias_at): its producer writes the
 * concatenation, and there is no kernel (SqueezeNet's eight Concats, 0.23
 * ms of copies on one thread).  Only where the program allows it
 * (KProgram.inplace) and on a CPU target, whose launch list binds each
 * value at its offset.  Returns 1 when done, -1 out of memory.
 */
static int concat_in_place(Lower *lw, Node *n, int axis)
{
	Graph *g = lw->g;
	const Value *o = NOUT(g, n, 0);
	int64_t off = 0, esz = dtype_size(o->dtype);

	if (!lw->prog->inplace || !lw->target || !lower_gemm_cpu(lw) || o->is_output ||
	    o->kind != VK_TEMP || o->data || !value_shape_known(o) || esz <= 0 ||
	    dtype_is_packed(o->dtype) || kprog_storage(lw->prog, n->out[0]) != n->out[0])
		return 0;
	for (int i = 0; i < axis; i++)
		if (o->dim[i] != 1)
			return 0;
	for (int k = 0; k < n->nin; k++) {
		if (n->in[k] < 0 || n->in[k] == n->out[0] ||
		    !concat_part(g, lw->prog, n, n->in[k]))
			return 0;
	}
	for (int k = 0; k < n->nin; k++) {
		if (!lower_set_alias_at(lw, n->in[k], n->out[0], off * esz))
			return -1;
		off += value_numel(NIN(g, n, k));
	}
	return 1;
}

/* One kernel: a copy loop nest per non-empty input, each writing its slab
 * (none where the inputs are placed in the output: concat_in_place). */
int lower_concat(Lower *lw, Node *n)
{
	const Value *o = NOUT(lw->g, n, 0);
	int64_t os[BURN_MAX_RANK], off = 0;
	KB kb;
	int axis, bo;

	TRY(norm_axis(lw->ctx, attr_int(n, "axis", 0), o->rank, &axis));
	switch (concat_in_place(lw, n, axis)) {
	case 1:
		return BURN_OK;
	case -1:
		return burn_fail(lw->ctx, BURN_ERR_NOMEM, "out of memory");
	}
	shape_strides(o->rank, o->dim, os);
	lower_begin(lw, &kb, n);
	bo = lower_out(lw, &kb, n, 0);
	for (int k = 0; k < n->nin; k++) {
		const Value *x = NIN(lw->g, n, k);
		int64_t xs[BURN_MAX_RANK];
		if (value_numel(x) > 0) {
			shape_strides(x->rank, x->dim, xs);
			copy_strided(&kb, lower_in(lw, &kb, n, k), bo, x->rank, x->dim,
			             xs, 0, os, off * os[axis]);
		}
		off += x->dim[axis];
	}
	lower_end(lw, &kb);
	return BURN_OK;
}

/* The sizes of Split's pieces along its axis: from attribute or input
 * `split`, else num_outputs (opset 18; last piece smaller), else equal. */
static int split_sizes(Ctx *c, Graph *g, Node *n, const Value *x, int *axis,
                       int64_t *size)
{
	int m;
	int64_t d, sum = 0;

	TRY(norm_axis(c, attr_int(n, "axis", 0), x->rank, axis));
	d = x->dim[*axis];
	TRY(ints_arg(c, g, n, "split", 1, size, MAX_LIST, &m));
	if (m < 0) {
		int64_t k = attr_int(n, "num_outputs", n->nout), chunk;
		if (k != n->nout || k <= 0)
			return burn_fail(c, BURN_ERR_INVALID, "num_outputs %lld but %d "
			                 "outputs", (long long)k, n->nout);
		if (!node_attr(n, "num_outputs") && d % k)
			return burn_fail(c, BURN_ERR_SHAPE, "dim %lld does not split in %lld "
			                 "equal parts", (long long)d, (long long)k);
		chunk = (d + k - 1) / k;
		for (int i = 0; i < k; i++) {
			size[i] = d - sum < chunk ? d - sum : chunk;
			sum += size[i];
		}
		m = (int)k;
	}
	if (m != n->nout)
		return burn_fail(c, BURN_ERR_INVALID, "%d split sizes for %d outputs", m,
		                 n->nout);
	sum = 0;
	for (int i = 0; i < m; i++) {
		if (size[i] < 0 || burn_add_ovf(sum, size[i], &sum))
			return burn_fail(c, BURN_ERR_INVALID, "split size %lld",
			                 (long long)size[i]);
	}
	if (sum != d)
		return burn_fail(c, BURN_ERR_SHAPE, "split sizes sum to %lld, dim is %lld",
		                 (long long)sum, (long long)d);
	return BURN_OK;
}

int infer_split(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	int64_t size[MAX_LIST], dim[BURN_MAX_RANK];
	int axis;

	TRY(need_in(c, g, n, 0, &x));
	TRY(split_sizes(c, g, n, x, &axis, size));
	memcpy(dim, x->dim, sizeof dim);
	for (int k = 0; k < n->nout; k++) {
		Value *o = out_opt(g, n, k);
		dim[axis] = size[k];
		if (o)
			set_out(o, x->dtype, x->rank, dim);
	}
	return BURN_OK;
}

int lower_split(Lower *lw, Node *n)
{
	const Value *x = NIN(lw->g, n, 0);
	int64_t size[MAX_LIST], xs[BURN_MAX_RANK], off = 0;
	KB kb;
	int axis, bi;

	TRY(split_sizes(lw->ctx, lw->g, n, x, &axis, size));
	shape_strides(x->rank, x->dim, xs);
	lower_begin(lw, &kb, n);
	bi = lower_in(lw, &kb, n, 0);
	for (int k = 0; k < n->nout; k++) {
		const Value *o = out_opt(lw->g, n, k);
		int64_t os[BURN_MAX_RANK];
		if (o) {
			shape_strides(o->rank, o->dim, os);
			copy_strided(&kb, bi, lower_out(lw, &kb, n, k), o->rank, o->dim,
			             xs, off * xs[axis], os, 0);
		}
		off += size[k];
	}
	lower_end(lw, &kb);
	return BURN_OK;
}

/*
 * Slice: per input axis the first index start[i], the step and the count.
 * Opset < 10 takes attributes starts/ends/axes; later opsets the inputs
 * starts, ends, axes?, steps?.  Out-of-range starts and ends are clamped
 * as the spec says (differently for negative steps).
 */
static int slice_params(Ctx *c, Graph *g, Node *n, const Value *x,
                        int64_t *start, int64_t *step, int64_t *cnt)
{
	int64_t st[BURN_MAX_RANK], en[BURN_MAX_RANK], ax[BURN_MAX_RANK],
	        sp[BURN_MAX_RANK];
	char seen[BURN_MAX_RANK] = {0};
	int m, me, ma, ms;

	if (n->nin > 1) {
		TRY(const_ints(c, g, n, 1, st, BURN_MAX_RANK, &m));
		TRY(const_ints(c, g, n, 2, en, BURN_MAX_RANK, &me));
		ma = ms = -1;
		if (in_opt(g, n, 3))
			TRY(const_ints(c, g, n, 3, ax, BURN_MAX_RANK, &ma));
		if (in_opt(g, n, 4))
			TRY(const_ints(c, g, n, 4, sp, BURN_MAX_RANK, &ms));
	} else {
		TRY(ints_arg(c, g, n, "starts", -1, st, BURN_MAX_RANK, &m));
		TRY(ints_arg(c, g, n, "ends", -1, en, BURN_MAX_RANK, &me));
		TRY(ints_arg(c, g, n, "axes", -1, ax, BURN_MAX_RANK, &ma));
		ms = -1;
	}
	if (m < 0 || m != me || (ma >= 0 && ma != m) || (ms >= 0 && ms != m))
		return burn_fail(c, BURN_ERR_INVALID, "starts, ends, axes and steps "
		                 "differ in length");
	for (int i = 0; i < x->rank; i++) {
		start[i] = 0;
		step[i] = 1;
		cnt[i] = x->dim[i];
	}
	for (int i = 0; i < m; i++) {
		int a;
		int64_t d, s = st[i], e = en[i], p = ms >= 0 ? sp[i] : 1;
		TRY(norm_axis(c, ma >= 0 ? ax[i] : i, x->rank, &a));
		if (seen[a])
			return burn_fail(c, BURN_ERR_INVALID, "axis %d repeated", a);
		seen[a] = 1;
		if (p == 0)
			return burn_fail(c, BURN_ERR_INVALID, "step is 0");
		d = x->dim[a];
		if (s < 0)
			s += d;
		if (e < 0)
			e += d;
		/* a step longer than the dim takes one element at most: clamp
		 * it, so that neither the count nor the stride overflows */
		if (p > d)
			p = d > 0 ? d : 1;
		if (p < -d)
			p = d > 0 ? -d : -1;
		if (p > 0) {
			s = s < 0 ? 0 : s > d ? d : s;
			e = e < 0 ? 0 : e > d ? d : e;
			cnt[a] = e > s ? (e - s - 1) / p + 1 : 0;
		} else {
			s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
			e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
			cnt[a] = s > e ? (s - e - 1) / -p + 1 : 0;
		}
		start[a] = s;
		step[a] = p;
	}
	return BURN_OK;
}

int infer_slice(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	int64_t start[BURN_MAX_RANK], step[BURN_MAX_RANK], cnt[BURN_MAX_RANK];

	TRY(need_in(c, g, n, 0, &x));
	TRY(slice_params(c, g, n, x, start, step, cnt));
	set_out(NOUT(g, n, 0), x->dtype, x->rank, cnt);
	return BURN_OK;
}

/* in index = sum((start[i] + v[i]*step[i]) * stride[i]): constant offset
 * plus strides step[i]*stride[i]. */
int lower_slice(Lower *lw, Node *n)
{
	const Value *x = NIN(lw->g, n, 0), *o = NOUT(lw->g, n, 0);
	int64_t start[BURN_MAX_RANK], step[BURN_MAX_RANK], cnt[BURN_MAX_RANK];
	int64_t xs[BURN_MAX_RANK], is[BURN_MAX_RANK], os[BURN_MAX_RANK], off = 0;
	KB kb;
	int bi, bo;

	TRY(slice_params(lw->ctx, lw->g, n, x, start, step, cnt));
	shape_strides(x->rank, x->dim, xs);
	shape_strides(o->rank, o->dim, os);
	for (int i = 0; i < x->rank; i++) {
		off += start[i] * xs[i];
		is[i] = step[i] * xs[i];
	}
	lower_begin(lw, &kb, n);
	bo = lower_out(lw, &kb, n, 0);
	if (value_numel(o) > 0) {
		bi = lower_in(lw, &kb, n, 0);
		copy_strided(&kb, bi, bo, o->rank, o->dim, is, off, os, 0);
	}
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- Gather family ---------------------------------------------------- */

/*
 * Gather:         out = data[:axis] + indices + data[axis+1:]
 * GatherElements: out has the indices' shape
 * GatherND:       out = indices[:-1] + data[batch_dims + indices[-1]:]
 */
int infer_gather(Ctx *c, Graph *g, Node *n)
{
	const Value *x, *ind;
	int64_t dim[2 * BURN_MAX_RANK];
	int r, q, axis, orank = 0;

	TRY(need_in(c, g, n, 0, &x));
	TRY(need_in(c, g, n, 1, &ind));
	if (!is_index_type(ind->dtype))
		return burn_fail(c, BURN_ERR_INVALID, "indices must be int32 or int64, "
		                 "are %s", dtype_name(ind->dtype));
	r = x->rank;
	q = ind->rank;
	if (n->op == OP_Gather) {
		TRY(norm_axis(c, attr_int(n, "axis", 0), r, &axis));
		if (r < 1)
			return burn_fail(c, BURN_ERR_SHAPE, "data must have rank >= 1");
		for (int i = 0; i < axis; i++)
			dim[orank++] = x->dim[i];
		for (int i = 0; i < q; i++)
			dim[orank++] = ind->dim[i];
		for (int i = axis + 1; i < r; i++)
			dim[orank++] = x->dim[i];
		if (x->dim[axis] == 0 && value_numel(ind) > 0)
			return burn_fail(c, BURN_ERR_SHAPE, "gather from an empty axis");
	} else if (n->op == OP_GatherElements) {
		TRY(norm_axis(c, attr_int(n, "axis", 0), r, &axis));
		if (q != r || r < 1)
			return burn_fail(c, BURN_ERR_SHAPE, "indices rank %d, data rank %d",
			                 q, r);
		for (int i = 0; i < q; i++) {
			if (i != axis && ind->dim[i] > x->dim[i])
				return burn_fail(c, BURN_ERR_SHAPE, "indices dim %d is %lld, "
				                 "data's %lld", i, (long long)ind->dim[i],
				                 (long long)x->dim[i]);
			dim[orank++] = ind->dim[i];
		}
		if (x->dim[axis] == 0 && value_numel(ind) > 0)
			return burn_fail(c, BURN_ERR_SHAPE, "gather from an empty axis");
	} else {
		int64_t b = attr_int(n, "batch_dims", 0), k;
		if (q < 1 || r < 1 || b < 0 || b >= q || b >= r)
			return burn_fail(c, BURN_ERR_SHAPE, "ranks %d, %d with batch_dims "
			                 "%lld", r, q, (long long)b);
		k = ind->dim[q - 1];
		if (k < 1 || k > r - b)
			return burn_fail(c, BURN_ERR_SHAPE, "indices' last dim %lld for data "
			                 "rank %d, batch_dims %lld", (long long)k, r,
			                 (long long)b);
		for (int i = 0; i < b; i++)
			if (x->dim[i] != ind->dim[i])
				return burn_fail(c, BURN_ERR_SHAPE, "batch dim %d differs", i);
		for (int i = 0; i < q - 1; i++)
			dim[orank++] = ind->dim[i];
		for (int i = (int)(b + k); i < r; i++)
			dim[orank++] = x->dim[i];
		for (int i = (int)b; i < b + k; i++)
			if (x->dim[i] == 0 && value_numel(ind) > 0)
				return burn_fail(c, BURN_ERR_SHAPE, "gather from an empty axis");
	}
	if (orank > BURN_MAX_RANK)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "rank %d is over %d", orank,
		                 BURN_MAX_RANK);
	set_out(NOUT(g, n, 0), x->dtype, orank, dim);
	return BURN_OK;
}

int lower_gather(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	const Value *x = NIN(g, n, 0), *ind = NIN(g, n, 1), *o = NOUT(g, n, 0);
	int64_t xs[BURN_MAX_RANK], is[BURN_MAX_RANK], os[BURN_MAX_RANK];
	int vars[BURN_MAX_RANK];
	int r = x->rank, q = ind->rank, axis = 0, bi, bx, bo;
	KRef xi, idx;
	KB kb;

	shape_strides(r, x->dim, xs);
	shape_strides(q, ind->dim, is);
	shape_strides(o->rank, o->dim, os);
	if (n->op != OP_GatherND)
		TRY(norm_axis(lw->ctx, attr_int(n, "axis", 0), r, &axis));
	lower_begin(lw, &kb, n);
	bo = lower_out(lw, &kb, n, 0);
	if (value_numel(o) == 0) {
		lower_end(lw, &kb);
		return BURN_OK;
	}
	bx = lower_in(lw, &kb, n, 0);
	bi = lower_in(lw, &kb, n, 1);
	loops_open(&kb, o->rank, o->dim, vars);
	if (n->op == OP_Gather) {
		/* out vars: [axis) data dims, q index dims, the rest data dims */
		KRef e;
		idx = kb_load(&kb, bi, index_linear(&kb, q, vars + axis, is));
		e = kb_bin(&kb, KO_MUL, norm_index(&kb, idx, x->dim[axis]),
		           kb_idx(&kb, xs[axis]));
		e = kb_bin(&kb, KO_ADD, e, index_linear(&kb, axis, vars, xs));
		e = kb_bin(&kb, KO_ADD, e, index_linear(&kb, r - axis - 1, vars + axis + q,
		                                        xs + axis + 1));
		xi = e;
	} else if (n->op == OP_GatherElements) {
		int64_t s = xs[axis];
		idx = kb_load(&kb, bi, index_linear(&kb, q, vars, is));
		xs[axis] = 0;
		xi = kb_bin(&kb, KO_ADD, index_linear(&kb, r, vars, xs),
		            kb_bin(&kb, KO_MUL, norm_index(&kb, idx, x->dim[axis]),
		                   kb_idx(&kb, s)));
	} else {
		int b = (int)attr_int(n, "batch_dims", 0);
		int k = (int)ind->dim[q - 1];
		/* out vars: q-1 index dims (the first b shared with data), then
		 * data dims b+k..r-1 */
		KRef base = index_linear(&kb, q - 1, vars, is);
		KRef e = index_linear(&kb, b, vars, xs);
		for (int j = 0; j < k; j++) {
			idx = kb_load(&kb, bi, kb_bin(&kb, KO_ADD, base, kb_idx(&kb, j)));
			e = kb_bin(&kb, KO_ADD, e,
			           kb_bin(&kb, KO_MUL, norm_index(&kb, idx, x->dim[b + j]),
			                  kb_idx(&kb, xs[b + j])));
		}
		xi = kb_bin(&kb, KO_ADD, e, index_linear(&kb, r - b - k, vars + q - 1,
		                                         xs + b + k));
	}
	kb_store(&kb, bo, index_linear(&kb, o->rank, vars, os), kb_load(&kb, bx, xi));
	loops_close(&kb, o->rank);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- Scatter family --------------------------------------------------- */

/* The reduction of ScatterElements/ScatterND: KO_NONE for plain stores. */
static int scatter_reduction(Ctx *c, Node *n, int *op)
{
	const char *r = attr_str(n, "reduction", "none");

	if (!strcmp(r, "none"))
		*op = KO_NONE;
	else if (!strcmp(r, "add"))
		*op = KO_ADD;
	else if (!strcmp(r, "mul"))
		*op = KO_MUL;
	else if (!strcmp(r, "max"))
		*op = KO_MAX;
	else if (!strcmp(r, "min"))
		*op = KO_MIN;
	else
		return burn_fail(c, BURN_ERR_INVALID, "reduction '%s'", r);
	return BURN_OK;
}

/* Check Scatter's indices and updates against data (infer_same did not). */
static int scatter_check(Ctx *c, Node *n, const Value *x, const Value *ind,
                         const Value *upd)
{
	int r = x->rank, q = ind->rank, axis;

	if (!is_index_type(ind->dtype))
		return burn_fail(c, BURN_ERR_INVALID, "indices must be int32 or int64, "
		                 "are %s", dtype_name(ind->dtype));
	if (upd->dtype != x->dtype)
		return burn_fail(c, BURN_ERR_SHAPE, "updates are %s, data %s",
		                 dtype_name(upd->dtype), dtype_name(x->dtype));
	if (n->op == OP_ScatterND) {
		int k = q >= 1 ? (int)ind->dim[q - 1] : -1;
		if (q < 1 || k < 0 || k > r || upd->rank != q - 1 + r - k)
			return burn_fail(c, BURN_ERR_SHAPE, "indices/updates ranks do not "
			                 "match data rank %d", r);
		for (int i = 0; i < q - 1; i++)
			if (upd->dim[i] != ind->dim[i])
				return burn_fail(c, BURN_ERR_SHAPE, "updates dim %d", i);
		for (int i = k; i < r; i++)
			if (upd->dim[q - 1 + i - k] != x->dim[i])
				return burn_fail(c, BURN_ERR_SHAPE, "updates dim %d",
				                 q - 1 + i - k);
		for (int i = 0; i < k; i++)
			if (x->dim[i] == 0 && value_numel(upd) > 0)
				return burn_fail(c, BURN_ERR_SHAPE, "scatter into empty axis");
		return BURN_OK;
	}
	if (q != r || upd->rank != r || r < 1)
		return burn_fail(c, BURN_ERR_SHAPE, "data, indices and updates must have "
		                 "the same rank");
	TRY(norm_axis(c, attr_int(n, "axis", 0), r, &axis));
	for (int i = 0; i < r; i++)
		if (upd->dim[i] != ind->dim[i] || (i != axis && ind->dim[i] > x->dim[i]))
			return burn_fail(c, BURN_ERR_SHAPE, "indices/updates dim %d", i);
	if (x->dim[axis] == 0 && value_numel(upd) > 0)
		return burn_fail(c, BURN_ERR_SHAPE, "scatter into empty axis");
	return BURN_OK;
}

/*
 * Scatter (= ScatterElements without reduction), ScatterElements,
 * ScatterND: out = copy of data, then for each update in order
 * out[where] = update (or reduce(out[where], update)).  The update loops
 * are sequential: duplicate indices must apply in order.
 */
int lower_scatter(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	const Value *x = NIN(g, n, 0), *ind = NIN(g, n, 1), *upd = NIN(g, n, 2);
	const Value *o = NOUT(g, n, 0);
	int64_t xs[BURN_MAX_RANK], is[BURN_MAX_RANK], us[BURN_MAX_RANK];
	int vars[BURN_MAX_RANK];
	int red = KO_NONE, r = x->rank, q = ind->rank, bx, bo, bi, bu, i;
	KRef oi, val;
	KB kb;

	TRY(scatter_check(lw->ctx, n, x, ind, upd));
	if (n->op != OP_Scatter)
		TRY(scatter_reduction(lw->ctx, n, &red));
	shape_strides(r, x->dim, xs);
	shape_strides(q, ind->dim, is);
	shape_strides(upd->rank, upd->dim, us);
	lower_begin(lw, &kb, n);
	bo = lower_out(lw, &kb, n, 0);
	if (value_numel(o) == 0) {
		lower_end(lw, &kb);
		return BURN_OK;
	}
	bx = lower_in(lw, &kb, n, 0);
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, value_numel(o)), KF_PARALLEL);
	kb_store(&kb, bo, kb_get(&kb, i), kb_load(&kb, bx, kb_get(&kb, i)));
	kb_end(&kb);
	if (value_numel(upd) > 0) {
		bi = lower_in(lw, &kb, n, 1);
		bu = lower_in(lw, &kb, n, 2);
		loops_seq(&kb, upd->rank, upd->dim, vars);
		if (n->op == OP_ScatterND) {
			int k = (int)ind->dim[q - 1];
			KRef base = index_linear(&kb, q - 1, vars, is);
			oi = index_linear(&kb, r - k, vars + q - 1, xs + k);
			for (int j = 0; j < k; j++) {
				KRef idx = kb_load(&kb, bi, kb_bin(&kb, KO_ADD, base, kb_idx(&kb, j)));
				oi = kb_bin(&kb, KO_ADD, oi,
				            kb_bin(&kb, KO_MUL, norm_index(&kb, idx, x->dim[j]),
				                   kb_idx(&kb, xs[j])));
			}
		} else {
			int axis;
			int64_t s[BURN_MAX_RANK];
			KRef idx;
			TRY(norm_axis(lw->ctx, attr_int(n, "axis", 0), r, &axis));
			memcpy(s, xs, sizeof s);
			s[axis] = 0;
			idx = kb_load(&kb, bi, index_linear(&kb, q, vars, is));
			oi = kb_bin(&kb, KO_ADD, index_linear(&kb, r, vars, s),
			            kb_bin(&kb, KO_MUL, norm_index(&kb, idx, x->dim[axis]),
			                   kb_idx(&kb, xs[axis])));
		}
		val = kb_load(&kb, bu, index_linear(&kb, upd->rank, vars, us));
		if (red != KO_NONE)
			val = kb_bin(&kb, red, kb_load(&kb, bo, oi), val);
		kb_store(&kb, bo, oi, val);
		loops_close(&kb, upd->rank);
	}
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- Expand, Tile, Pad ------------------------------------------------ */

/* Expand(input, shape): numpy broadcast of the input to shape. */
int infer_expand(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	int64_t s[MAX_LIST], dim[BURN_MAX_RANK];
	int m, r;

	TRY(need_in(c, g, n, 0, &x));
	TRY(const_ints(c, g, n, 1, s, MAX_LIST, &m));
	if (m > BURN_MAX_RANK)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "rank %d is over %d", m,
		                 BURN_MAX_RANK);
	for (int i = 0; i < m; i++)
		if (s[i] < 0)
			return burn_fail(c, BURN_ERR_SHAPE, "shape[%d] = %lld", i,
			                 (long long)s[i]);
	TRY(shape_broadcast(c, x->rank, x->dim, m, s, &r, dim));
	set_out(NOUT(g, n, 0), x->dtype, r, dim);
	return BURN_OK;
}

int lower_expand(Lower *lw, Node *n)
{
	const Value *x = NIN(lw->g, n, 0), *o = NOUT(lw->g, n, 0);
	int64_t os[BURN_MAX_RANK];
	int vars[BURN_MAX_RANK];
	KB kb;
	int bi, bo;

	shape_strides(o->rank, o->dim, os);
	lower_begin(lw, &kb, n);
	bo = lower_out(lw, &kb, n, 0);
	if (value_numel(o) > 0) {
		bi = lower_in(lw, &kb, n, 0);
		loops_open(&kb, o->rank, o->dim, vars);
		kb_store(&kb, bo, index_linear(&kb, o->rank, vars, os),
		         kb_load(&kb, bi, index_bcast(&kb, x, o->rank, vars)));
		loops_close(&kb, o->rank);
	}
	lower_end(lw, &kb);
	return BURN_OK;
}

/* Tile(input, repeats): out dim i = dim i * repeats[i]. */
int infer_tile(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	int64_t rep[BURN_MAX_RANK], dim[BURN_MAX_RANK];
	int m;

	TRY(need_in(c, g, n, 0, &x));
	TRY(const_ints(c, g, n, 1, rep, BURN_MAX_RANK, &m));
	if (m != x->rank)
		return burn_fail(c, BURN_ERR_SHAPE, "%d repeats for rank %d", m, x->rank);
	for (int i = 0; i < m; i++)
		if (rep[i] < 0 || burn_mul_ovf(x->dim[i], rep[i], &dim[i]))
			return burn_fail(c, BURN_ERR_SHAPE, "repeats[%d] = %lld", i,
			                 (long long)rep[i]);
	set_out(NOUT(g, n, 0), x->dtype, x->rank, dim);
	return BURN_OK;
}

/* in index = sum((v[i] % dim[i]) * stride[i]); no % where not repeated. */
int lower_tile(Lower *lw, Node *n)
{
	const Value *x = NIN(lw->g, n, 0), *o = NOUT(lw->g, n, 0);
	int64_t xs[BURN_MAX_RANK], os[BURN_MAX_RANK];
	int vars[BURN_MAX_RANK];
	KB kb;
	int bi, bo;

	shape_strides(x->rank, x->dim, xs);
	shape_strides(o->rank, o->dim, os);
	lower_begin(lw, &kb, n);
	bo = lower_out(lw, &kb, n, 0);
	if (value_numel(o) > 0) {
		KRef xi = kb_idx(&kb, 0);
		bi = lower_in(lw, &kb, n, 0);
		loops_open(&kb, o->rank, o->dim, vars);
		for (int i = 0; i < x->rank; i++) {
			KRef v = kb_get(&kb, vars[i]);
			if (o->dim[i] != x->dim[i])
				v = kb_bin(&kb, KO_MOD, v, kb_idx(&kb, x->dim[i]));
			xi = kb_bin(&kb, KO_ADD, xi, kb_bin(&kb, KO_MUL, v, kb_idx(&kb, xs[i])));
		}
		kb_store(&kb, bo, index_linear(&kb, o->rank, vars, os), kb_load(&kb, bi, xi));
		loops_close(&kb, o->rank);
	}
	lower_end(lw, &kb);
	return BURN_OK;
}

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

/*
 * Pad's begin/end amounts per axis (negative crops) and mode.  Opset < 11
 * has attribute pads; later the input pads [x1_begin, x2_begin, ...,
 * x1_end, x2_end, ...], over input axes (opset 18) or all dims.
 */
static int pad_params(Ctx *c, Graph *g, Node *n, const Value *x, int64_t *pb,
                      int64_t *pe, int *mode)
{
	int64_t p[2 * BURN_MAX_RANK], axes[BURN_MAX_RANK];
	const char *ms = attr_str(n, "mode", "constant");
	int m, ma = -1, na;
	char seen[BURN_MAX_RANK] = {0};

	if (!strcmp(ms, "constant"))
		*mode = PAD_CONSTANT;
	else if (!strcmp(ms, "reflect"))
		*mode = PAD_REFLECT;
	else if (!strcmp(ms, "edge"))
		*mode = PAD_EDGE;
	else if (!strcmp(ms, "wrap"))
		*mode = PAD_WRAP;
	else
		return burn_fail(c, BURN_ERR_INVALID, "mode '%s'", ms);
	TRY(ints_arg(c, g, n, "pads", 1, p, 2 * BURN_MAX_RANK, &m));
	if (in_opt(g, n, 3))
		TRY(const_ints(c, g, n, 3, axes, BURN_MAX_RANK, &ma));
	na = ma >= 0 ? ma : x->rank;
	if (m != 2 * na)
		return burn_fail(c, BURN_ERR_INVALID, "%d pads for %d axes", m, na);
	for (int i = 0; i < x->rank; i++)
		pb[i] = pe[i] = 0;
	for (int i = 0; i < na; i++) {
		int a = i;
		if (ma >= 0)
			TRY(norm_axis(c, axes[i], x->rank, &a));
		if (seen[a])
			return burn_fail(c, BURN_ERR_INVALID, "axis %d repeated", a);
		seen[a] = 1;
		pb[a] = p[i];
		pe[a] = p[i + na];
	}
	return BURN_OK;
}

int infer_pad(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	int64_t pb[BURN_MAX_RANK], pe[BURN_MAX_RANK], dim[BURN_MAX_RANK];
	int mode;

	TRY(need_in(c, g, n, 0, &x));
	TRY(pad_params(c, g, n, x, pb, pe, &mode));
	for (int i = 0; i < x->rank; i++) {
		if (burn_add_ovf(x->dim[i], pb[i], &dim[i]) ||
		    burn_add_ovf(dim[i], pe[i], &dim[i]) || dim[i] < 0)
			return burn_fail(c, BURN_ERR_SHAPE, "pads make dim %d negative", i);
		if (mode != PAD_CONSTANT && x->dim[i] == 0 && dim[i] > 0)
			return burn_fail(c, BURN_ERR_SHAPE, "cannot %s-pad an empty dim",
			                 attr_str(n, "mode", ""));
	}
	if (in_opt(g, n, 2) && value_numel(in_opt(g, n, 2)) < 1)
		return burn_fail(c, BURN_ERR_INVALID, "constant_value is empty");
	set_out(NOUT(g, n, 0), x->dtype, x->rank, dim);
	return BURN_OK;
}

/* Per output axis, source s = v - begin, mapped by the mode into [0, d):
 * constant: out of range takes the constant; edge: clamp; reflect:
 * period 2(d-1) mirrored; wrap: s mod d. */
int lower_pad(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	const Value *x = NIN(g, n, 0), *o = NOUT(g, n, 0);
	int64_t pb[BURN_MAX_RANK], pe[BURN_MAX_RANK], xs[BURN_MAX_RANK],
	        os[BURN_MAX_RANK];
	int vars[BURN_MAX_RANK];
	int mode, bi, bo;
	KRef xi, cond = 0, cv, oi;
	KB kb;

	TRY(pad_params(lw->ctx, g, n, x, pb, pe, &mode));
	shape_strides(x->rank, x->dim, xs);
	shape_strides(o->rank, o->dim, os);
	lower_begin(lw, &kb, n);
	bo = lower_out(lw, &kb, n, 0);
	if (value_numel(o) == 0) {
		lower_end(lw, &kb);
		return BURN_OK;
	}
	if (in_opt(g, n, 2))
		cv = kb_load(&kb, lower_in(lw, &kb, n, 2), kb_idx(&kb, 0));
	else
		cv = kconst(&kb, x->dtype, attr_float(n, "value", 0));
	loops_open(&kb, o->rank, o->dim, vars);
	oi = index_linear(&kb, o->rank, vars, os);
	if (value_numel(x) == 0) {      /* constant mode: nothing to copy */
		kb_store(&kb, bo, oi, cv);
		loops_close(&kb, o->rank);
		lower_end(lw, &kb);
		return BURN_OK;
	}
	bi = lower_in(lw, &kb, n, 0);
	xi = kb_idx(&kb, 0);
	for (int i = 0; i < x->rank; i++) {
		int64_t d = x->dim[i];
		KRef s = kb_bin(&kb, KO_SUB, kb_get(&kb, vars[i]), kb_idx(&kb, pb[i]));
		if (pb[i] > 0 || pe[i] > 0) {
			KRef zero = kb_idx(&kb, 0), dd = kb_idx(&kb, d);
			switch (mode) {
			case PAD_CONSTANT: {
				KRef ok = kb_bin(&kb, KO_AND, kb_bin(&kb, KO_GE, s, zero),
				                 kb_bin(&kb, KO_LT, s, dd));
				cond = cond ? kb_bin(&kb, KO_AND, cond, ok) : ok;
				break;
			}
			case PAD_EDGE:
				s = kb_bin(&kb, KO_MIN, kb_bin(&kb, KO_MAX, s, zero),
				           kb_idx(&kb, d - 1));
				break;
			case PAD_REFLECT: {
				int64_t p = 2 * (d - 1);
				KRef t, pp;
				if (d == 1) {
					s = zero;
					break;
				}
				pp = kb_idx(&kb, p);
				t = kb_bin(&kb, KO_MOD, kb_bin(&kb, KO_ADD,
				           kb_bin(&kb, KO_MOD, s, pp), pp), pp);
				s = kb_select(&kb, kb_bin(&kb, KO_LT, t, dd), t,
				              kb_bin(&kb, KO_SUB, pp, t));
				break;
			}
			case PAD_WRAP:
				s = kb_bin(&kb, KO_MOD, kb_bin(&kb, KO_ADD,
				           kb_bin(&kb, KO_MOD, s, dd), dd), dd);
				break;
			}
		}
		xi = kb_bin(&kb, KO_ADD, xi, kb_bin(&kb, KO_MUL, s, kb_idx(&kb, xs[i])));
	}
	if (cond) {
		kb_if(&kb, cond);
		kb_store(&kb, bo, oi, kb_load(&kb, bi, xi));
		kb_else(&kb);
		kb_store(&kb, bo, oi, cv);
		kb_end(&kb);
	} else {
		kb_store(&kb, bo, oi, kb_load(&kb, bi, xi));
	}
	loops_close(&kb, o->rank);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- masks and one-hots: Trilu, EyeLike, OneHot, ReverseSequence ------ */

/* Trilu(input, k?): keep j - i >= k (upper=1) or j - i <= k (upper=0) in
 * the last two dims, zero elsewhere.  k is read at run time. */
int lower_trilu(Lower *lw, Node *n)
{
	const Value *x = NIN(lw->g, n, 0);
	int upper = attr_int(n, "upper", 1) != 0, r = x->rank;
	int64_t xs[BURN_MAX_RANK];
	int vars[BURN_MAX_RANK];
	KRef k, d, keep, xi;
	KB kb;
	int bi, bo;

	if (r < 2)
		return burn_fail(lw->ctx, BURN_ERR_SHAPE, "input must have rank >= 2");
	shape_strides(r, x->dim, xs);
	lower_begin(lw, &kb, n);
	bo = lower_out(lw, &kb, n, 0);
	if (value_numel(x) == 0) {
		lower_end(lw, &kb);
		return BURN_OK;
	}
	bi = lower_in(lw, &kb, n, 0);
	if (in_opt(lw->g, n, 1)) {
		if (!dtype_is_int(NIN(lw->g, n, 1)->dtype) || value_numel(NIN(lw->g, n, 1)) != 1)
			return burn_fail(lw->ctx, BURN_ERR_INVALID, "k must be one integer");
		k = as_i64(&kb, kb_load(&kb, lower_in(lw, &kb, n, 1), kb_idx(&kb, 0)));
	} else {
		k = kb_idx(&kb, 0);
	}
	loops_open(&kb, r, x->dim, vars);
	d = kb_bin(&kb, KO_SUB, kb_get(&kb, vars[r - 1]), kb_get(&kb, vars[r - 2]));
	keep = kb_bin(&kb, upper ? KO_GE : KO_LE, d, k);
	xi = index_linear(&kb, r, vars, xs);
	kb_store(&kb, bo, xi, kb_select(&kb, keep, kb_load(&kb, bi, xi),
	                                kconst(&kb, x->dtype, 0)));
	loops_close(&kb, r);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* EyeLike(input): ones where j - i == k, of dtype attribute or input's. */
int infer_eyelike(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	int dt;

	TRY(need_in(c, g, n, 0, &x));
	if (x->rank != 2)
		return burn_fail(c, BURN_ERR_SHAPE, "input must be 2-D, is rank %d",
		                 x->rank);
	dt = (int)attr_int(n, "dtype", x->dtype);
	if (!dtype_supported(dt))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "dtype %d", dt);
	set_out(NOUT(g, n, 0), dt, 2, x->dim);
	return BURN_OK;
}

int lower_eyelike(Lower *lw, Node *n)
{
	const Value *o = NOUT(lw->g, n, 0);
	int64_t os[2], k = attr_int(n, "k", 0);
	int vars[2], bo;
	KRef d;
	KB kb;

	shape_strides(2, o->dim, os);
	lower_begin(lw, &kb, n);
	bo = lower_out(lw, &kb, n, 0);
	loops_open(&kb, 2, o->dim, vars);
	d = kb_bin(&kb, KO_SUB, kb_get(&kb, vars[1]), kb_get(&kb, vars[0]));
	kb_store(&kb, bo, index_linear(&kb, 2, vars, os),
	         kb_select(&kb, kb_bin(&kb, KO_EQ, d, kb_idx(&kb, k)),
	                   kconst(&kb, o->dtype, 1), kconst(&kb, o->dtype, 0)));
	loops_close(&kb, 2);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* OneHot(indices, depth, values[off, on], axis=-1): a new axis of size
 * depth where out = on at the index (negative counts from depth), else off. */
static int onehot_depth(Ctx *c, Graph *g, Node *n, int64_t *depth)
{
	const Value *d;

	TRY(need_const(c, g, n, 1, &d));
	if (value_numel(d) != 1)
		return burn_fail(c, BURN_ERR_INVALID, "depth must have one element");
	*depth = value_get_i(d, 0);
	if (*depth <= 0)
		return burn_fail(c, BURN_ERR_INVALID, "depth %lld", (long long)*depth);
	return BURN_OK;
}

int infer_onehot(Ctx *c, Graph *g, Node *n)
{
	const Value *x, *v;
	int64_t depth, dim[BURN_MAX_RANK];
	int axis, r;

	TRY(need_in(c, g, n, 0, &x));
	TRY(need_in(c, g, n, 2, &v));
	TRY(onehot_depth(c, g, n, &depth));
	if (value_numel(v) != 2)
		return burn_fail(c, BURN_ERR_INVALID, "values must have two elements");
	if (x->dtype == DT_BOOL)
		return burn_fail(c, BURN_ERR_INVALID, "indices must be numeric");
	r = x->rank + 1;
	if (r > BURN_MAX_RANK)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "rank %d is over %d", r,
		                 BURN_MAX_RANK);
	TRY(norm_axis(c, attr_int(n, "axis", -1), r, &axis));
	for (int i = 0, k = 0; i < r; i++)
		dim[i] = i == axis ? depth : x->dim[k++];
	set_out(NOUT(g, n, 0), v->dtype, r, dim);
	return BURN_OK;
}

int lower_onehot(Lower *lw, Node *n)
{
	const Value *x = NIN(lw->g, n, 0), *o = NOUT(lw->g, n, 0);
	int64_t depth, xs[BURN_MAX_RANK], os[BURN_MAX_RANK], s[BURN_MAX_RANK];
	int vars[BURN_MAX_RANK];
	int axis, bi, bv, bo;
	KRef idx, zero;
	KB kb;

	TRY(onehot_depth(lw->ctx, lw->g, n, &depth));
	TRY(norm_axis(lw->ctx, attr_int(n, "axis", -1), o->rank, &axis));
	shape_strides(x->rank, x->dim, xs);
	shape_strides(o->rank, o->dim, os);
	for (int i = 0, k = 0; i < o->rank; i++)
		s[i] = i == axis ? 0 : xs[k++];
	lower_begin(lw, &kb, n);
	bo = lower_out(lw, &kb, n, 0);
	if (value_numel(o) == 0) {
		lower_end(lw, &kb);
		return BURN_OK;
	}
	bi = lower_in(lw, &kb, n, 0);
	bv = lower_in(lw, &kb, n, 2);
	loops_open(&kb, o->rank, o->dim, vars);
	zero = kb_idx(&kb, 0);
	idx = as_i64(&kb, kb_load(&kb, bi, index_linear(&kb, o->rank, vars, s)));
	idx = kb_select(&kb, kb_bin(&kb, KO_LT, idx, zero),
	                kb_bin(&kb, KO_ADD, idx, kb_idx(&kb, depth)), idx);
	kb_store(&kb, bo, index_linear(&kb, o->rank, vars, os),
	         kb_select(&kb, kb_bin(&kb, KO_EQ, idx, kb_get(&kb, vars[axis])),
	                   kb_load(&kb, bv, kb_idx(&kb, 1)),
	                   kb_load(&kb, bv, zero)));
	loops_close(&kb, o->rank);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ReverseSequence(input, sequence_lens): along time_axis, the first
 * lens[b] elements of batch b are reversed, the rest copied. */
int lower_revseq(Lower *lw, Node *n)
{
	const Value *x = NIN(lw->g, n, 0), *lens = NIN(lw->g, n, 1);
	int64_t xs[BURN_MAX_RANK], s[BURN_MAX_RANK], T;
	int vars[BURN_MAX_RANK];
	int ba, ta, bi, bl, bo;
	KRef t, len, src, xi;
	KB kb;

	if (x->rank < 2)
		return burn_fail(lw->ctx, BURN_ERR_SHAPE, "input must have rank >= 2");
	TRY(norm_axis(lw->ctx, attr_int(n, "batch_axis", 1), x->rank, &ba));
	TRY(norm_axis(lw->ctx, attr_int(n, "time_axis", 0), x->rank, &ta));
	if (ba == ta || ba > 1 || ta > 1)
		return burn_fail(lw->ctx, BURN_ERR_INVALID, "batch_axis %d, time_axis %d",
		                 ba, ta);
	if (!is_index_type(lens->dtype) || value_numel(lens) != x->dim[ba])
		return burn_fail(lw->ctx, BURN_ERR_SHAPE, "sequence_lens must be "
		                 "integers, one per batch");
	T = x->dim[ta];
	shape_strides(x->rank, x->dim, xs);
	memcpy(s, xs, sizeof s);
	s[ta] = 0;
	lower_begin(lw, &kb, n);
	bo = lower_out(lw, &kb, n, 0);
	if (value_numel(x) == 0) {
		lower_end(lw, &kb);
		return BURN_OK;
	}
	bi = lower_in(lw, &kb, n, 0);
	bl = lower_in(lw, &kb, n, 1);
	loops_open(&kb, x->rank, x->dim, vars);
	t = kb_get(&kb, vars[ta]);
	len = as_i64(&kb, kb_load(&kb, bl, kb_get(&kb, vars[ba])));
	len = kb_bin(&kb, KO_MIN, kb_bin(&kb, KO_MAX, len, kb_idx(&kb, 0)),
	             kb_idx(&kb, T));
	src = kb_select(&kb, kb_bin(&kb, KO_LT, t, len),
	                kb_bin(&kb, KO_SUB, kb_bin(&kb, KO_SUB, len, kb_idx(&kb, 1)), t),
	                t);
	xi = kb_bin(&kb, KO_ADD, index_linear(&kb, x->rank, vars, s),
	            kb_bin(&kb, KO_MUL, src, kb_idx(&kb, xs[ta])));
	kb_store(&kb, bo, index_linear(&kb, x->rank, vars, xs), kb_load(&kb, bi, xi));
	loops_close(&kb, x->rank);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- metadata ops, always folded: Shape, Size, Constant --------------- */

/* Shape (dims start..end, clamped) and Size: the output is a constant. */
int infer_shape(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	int64_t data[BURN_MAX_RANK], dim[1];

	TRY(need_in(c, g, n, 0, &x));
	if (!value_shape_known(x))
		return burn_fail(c, BURN_ERR_INTERNAL, "input shape is not known");
	if (n->op == OP_Size) {
		data[0] = value_numel(x);
		return graph_set_const(c, g, n->out[0], DT_I64, 0, dim, data);
	}
	int64_t r = x->rank, s = attr_int(n, "start", 0), e = attr_int(n, "end", r);
	if (s < 0)
		s += r;
	if (e < 0)
		e += r;
	s = s < 0 ? 0 : s > r ? r : s;
	e = e < 0 ? 0 : e > r ? r : e;
	dim[0] = e > s ? e - s : 0;
	for (int64_t i = 0; i < dim[0]; i++)
		data[i] = x->dim[s + i];
	return graph_set_const(c, g, n->out[0], DT_I64, 1, dim, data);
}

int lower_none(Lower *lw, Node *n)
{
	return burn_fail(lw->ctx, BURN_ERR_INTERNAL, "must have been folded");
}

/* Constant: exactly one of value (tensor), value_float(s), value_int(s). */
int infer_constant(Ctx *c, Graph *g, Node *n)
{
	const Attr *a;
	int out = n->out[0];
	int64_t dim[1];

	if ((a = node_attr(n, "value")) && a->type == AT_TENSOR && a->t) {
		const Tensor *t = a->t;
		if (!dtype_supported(t->dtype))
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "constant of dtype %s",
			                 dtype_name(t->dtype));
		return graph_set_const(c, g, out, t->dtype, t->rank, t->dim, t->data);
	}
	if ((a = node_attr(n, "value_float")) && a->type == AT_FLOAT) {
		float f = (float)a->f;
		return graph_set_const(c, g, out, DT_F32, 0, dim, &f);
	}
	if ((a = node_attr(n, "value_int")) && a->type == AT_INT)
		return graph_set_const(c, g, out, DT_I64, 0, dim, &a->i);
	if ((a = node_attr(n, "value_ints")) && a->type == AT_INTS) {
		dim[0] = a->n;
		return graph_set_const(c, g, out, DT_I64, 1, dim, a->ints);
	}
	if ((a = node_attr(n, "value_floats")) && a->type == AT_FLOATS) {
		float *f = arena_alloc(&g->arena, sizeof *f * (a->n + 1));
		if (!f)
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		for (int i = 0; i < a->n; i++)
			f[i] = (float)a->floats[i];
		dim[0] = a->n;
		return graph_set_const(c, g, out, DT_F32, 1, dim, f);
	}
	if (node_attr(n, "value_string") || node_attr(n, "value_strings"))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "string constants");
	if (node_attr(n, "sparse_value"))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "sparse constants");
	return burn_fail(c, BURN_ERR_INVALID, "no value attribute");
}

/* ---- generators: ConstantOfShape, Range ------------------------------- */

/* ConstantOfShape's fill value: attribute value (one element), default
 * f32 0.  *val is a Value view of it for value_get_*. */
static int cofshape_value(Ctx *c, Node *n, Value *val)
{
	const Attr *a = node_attr(n, "value");
	static const float zero = 0;

	memset(val, 0, sizeof *val);
	val->dtype = DT_F32;
	val->data = (void *)&zero;
	if (!a)
		return BURN_OK;
	if (a->type != AT_TENSOR || !a->t || !a->t->data || a->t->nbytes <= 0)
		return burn_fail(c, BURN_ERR_INVALID, "value must be a one-element tensor");
	if (!dtype_supported(a->t->dtype))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "value of dtype %s",
		                 dtype_name(a->t->dtype));
	val->dtype = a->t->dtype;
	val->data = a->t->data;
	return BURN_OK;
}

int infer_cofshape(Ctx *c, Graph *g, Node *n)
{
	int64_t s[MAX_LIST];
	Value val;
	int m;

	TRY(cofshape_value(c, n, &val));
	TRY(const_ints(c, g, n, 0, s, MAX_LIST, &m));
	if (m > BURN_MAX_RANK)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "rank %d is over %d", m,
		                 BURN_MAX_RANK);
	for (int i = 0; i < m; i++)
		if (s[i] < 0)
			return burn_fail(c, BURN_ERR_SHAPE, "shape[%d] = %lld", i,
			                 (long long)s[i]);
	set_out(NOUT(g, n, 0), val.dtype, m, s);
	return BURN_OK;
}

int lower_cofshape(Lower *lw, Node *n)
{
	const Value *o = NOUT(lw->g, n, 0);
	Value val;
	KRef cv;
	KB kb;
	int bo, i;

	TRY(cofshape_value(lw->ctx, n, &val));
	lower_begin(lw, &kb, n);
	bo = lower_out(lw, &kb, n, 0);
	if (dtype_is_float(val.dtype))
		cv = kb_const_f(&kb, edt(val.dtype), value_get_f(&val, 0));
	else
		cv = kb_const_i(&kb, val.dtype, value_get_i(&val, 0));
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, value_numel(o)), KF_PARALLEL);
	kb_store(&kb, bo, kb_get(&kb, i), cv);
	kb_end(&kb);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* Range(start, limit, delta): max(ceil((limit - start) / delta), 0)
 * elements start + i*delta.  The count needs the inputs constant. */
int infer_range(Ctx *c, Graph *g, Node *n)
{
	const Value *s, *l, *d;
	int64_t cnt;

	TRY(need_const(c, g, n, 0, &s));
	TRY(need_const(c, g, n, 1, &l));
	TRY(need_const(c, g, n, 2, &d));
	if (value_numel(s) != 1 || value_numel(l) != 1 || value_numel(d) != 1)
		return burn_fail(c, BURN_ERR_INVALID, "inputs must be scalars");
	if (l->dtype != s->dtype || d->dtype != s->dtype || s->dtype == DT_BOOL)
		return burn_fail(c, BURN_ERR_INVALID, "inputs must share a numeric dtype");
	if (dtype_is_float(s->dtype)) {
		double n0 = ceil((value_get_f(l, 0) - value_get_f(s, 0)) / value_get_f(d, 0));
		if (n0 != n0 || n0 > 9e15)
			return burn_fail(c, BURN_ERR_INVALID, "range has no finite length");
		cnt = n0 > 0 ? (int64_t)n0 : 0;
	} else {
		int64_t a = value_get_i(s, 0), b = value_get_i(l, 0), k = value_get_i(d, 0);
		uint64_t diff, step, q;
		if (k == 0)
			return burn_fail(c, BURN_ERR_INVALID, "delta is 0");
		/* unsigned: the distance and |delta| may not fit in int64 */
		cnt = 0;
		if (k > 0 ? b > a : a > b) {
			diff = k > 0 ? (uint64_t)b - (uint64_t)a : (uint64_t)a - (uint64_t)b;
			step = k > 0 ? (uint64_t)k : -(uint64_t)k;
			q = (diff - 1) / step + 1;
			if (q > (uint64_t)1 << 53)
				return burn_fail(c, BURN_ERR_LIMIT, "range too long");
			cnt = (int64_t)q;
		}
	}
	set_out(NOUT(g, n, 0), s->dtype, 1, &cnt);
	return BURN_OK;
}

int lower_range(Lower *lw, Node *n)
{
	const Value *o = NOUT(lw->g, n, 0);
	int dt = o->dtype, et = edt(dt), bs, bd, bo, i;
	KRef s, d, iv, e;
	KB kb;

	lower_begin(lw, &kb, n);
	bo = lower_out(lw, &kb, n, 0);
	if (value_numel(o) == 0) {
		lower_end(lw, &kb);
		return BURN_OK;
	}
	bs = lower_in(lw, &kb, n, 0);
	bd = lower_in(lw, &kb, n, 2);
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, value_numel(o)), KF_PARALLEL);
	s = kb_load(&kb, bs, kb_idx(&kb, 0));
	d = kb_load(&kb, bd, kb_idx(&kb, 0));
	iv = kb_get(&kb, i);
	if (dtype_is_float(dt))
		e = kb_bin(&kb, KO_ADD, s, kb_bin(&kb, KO_MUL, kb_cast(&kb, et, iv), d));
	else
		e = kb_cast(&kb, dt, kb_bin(&kb, KO_ADD, as_i64(&kb, s),
		                            kb_bin(&kb, KO_MUL, iv, as_i64(&kb, d))));
	kb_store(&kb, bo, iv, e);
	kb_end(&kb);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* TensorScatter(past_cache, update, write_indices?) (opset 24): the cache
 * with, in each batch row b, update's slices written along `axis` (default
 * -2) from position write_indices[b] (0 without), wrapping around the
 * cache in mode circular.  One gather kernel over the output: position p
 * of the axis takes update slice p - w (mod the cache length when
 * circular) where that is in 0 .. S-1, the past otherwise; so a write
 * index out of range in linear mode writes nothing past the cache. */
static int tscatter_shape(Ctx *c, Graph *g, Node *n, int *axis, int *circular)
{
	const Value *p = in_opt(g, n, 0), *u = in_opt(g, n, 1), *w = in_opt(g, n, 2);
	const char *mode = attr_str(n, "mode", "linear");
	char ts[2][160];

	if (!p || !u)
		return burn_fail(c, BURN_ERR_INVALID, "past_cache and update are required");
	if (strcmp(mode, "linear") && strcmp(mode, "circular"))
		return burn_fail(c, BURN_ERR_INVALID, "mode '%s': linear or circular "
		                 "expected", mode);
	*circular = !strcmp(mode, "circular");
	TRY(norm_axis(c, attr_int(n, "axis", -2), p->rank, axis));
	if (*axis == 0)
		return burn_fail(c, BURN_ERR_INVALID, "axis 0 is the batch axis");
	if (u->dtype != p->dtype || u->rank != p->rank)
		return burn_fail(c, BURN_ERR_SHAPE, "update %s does not fit past_cache %s",
		                 value_type_str(u, ts[0], sizeof ts[0]),
		                 value_type_str(p, ts[1], sizeof ts[1]));
	for (int d = 0; d < p->rank; d++)
		if (d == *axis ? u->dim[d] > p->dim[d] : u->dim[d] != p->dim[d])
			return burn_fail(c, BURN_ERR_SHAPE, "update %s does not fit "
			                 "past_cache %s along dim %d",
			                 value_type_str(u, ts[0], sizeof ts[0]),
			                 value_type_str(p, ts[1], sizeof ts[1]), d);
	if (w && (w->rank != 1 || w->dim[0] != p->dim[0] || !is_index_type(w->dtype)))
		return burn_fail(c, BURN_ERR_SHAPE, "write_indices '%s' is %s: integer "
		                 "[%lld] expected", w->name, value_type_str(w, ts[0], sizeof ts[0]),
		                 (long long)p->dim[0]);
	return BURN_OK;
}

int infer_tensor_scatter(Ctx *c, Graph *g, Node *n)
{
	int axis, circ;

	TRY(tscatter_shape(c, g, n, &axis, &circ));
	set_out(NOUT(g, n, 0), in_opt(g, n, 0)->dtype, in_opt(g, n, 0)->rank,
	        in_opt(g, n, 0)->dim);
	return BURN_OK;
}

int lower_tensor_scatter(Lower *lw, Node *n)
{
	const Value *p = in_opt(lw->g, n, 0), *u = in_opt(lw->g, n, 1);
	int axis, circ, r = p->rank, vars[BURN_MAX_RANK], bp, bu, bw = -1, bo;
	int64_t ps[BURN_MAX_RANK], us[BURN_MAX_RANK], M, S;
	KRef off, w, take, ui, pi;
	KB kb;

	TRY(tscatter_shape(lw->ctx, lw->g, n, &axis, &circ));
	M = p->dim[axis];
	S = u->dim[axis];
	shape_strides(r, p->dim, ps);
	shape_strides(r, u->dim, us);
	lower_begin(lw, &kb, n);
	bp = lower_in(lw, &kb, n, 0);
	bu = lower_in(lw, &kb, n, 1);
	if (in_opt(lw->g, n, 2))
		bw = lower_in(lw, &kb, n, 2);
	bo = lower_out(lw, &kb, n, 0);
	if (value_numel(p) == 0) {
		lower_end(lw, &kb);
		return BURN_OK;
	}
	loops_open(&kb, r, p->dim, vars);
	w = bw >= 0 ? as_i64(&kb, kb_load(&kb, bw, kb_get(&kb, vars[0]))) : kb_idx(&kb, 0);
	off = kb_bin(&kb, KO_SUB, kb_get(&kb, vars[axis]), w);
	if (circ)   /* (off mod M + M) mod M: w may be negative or past M */
		off = kb_bin(&kb, KO_MOD, kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MOD, off,
		                                                     kb_idx(&kb, M)),
		                                 kb_idx(&kb, M)), kb_idx(&kb, M));
	take = kb_bin(&kb, KO_AND, kb_bin(&kb, KO_GE, off, kb_idx(&kb, 0)),
	              kb_bin(&kb, KO_LT, off, kb_idx(&kb, S)));
	pi = index_linear(&kb, r, vars, ps);
	ui = kb_idx(&kb, 0);
	for (int d = 0; d < r; d++)
		ui = kb_bin(&kb, KO_ADD, ui, kb_bin(&kb, KO_MUL, d == axis ?
		            kb_select(&kb, take, off, kb_idx(&kb, 0)) : kb_get(&kb, vars[d]),
		            kb_idx(&kb, us[d])));
	/* ui is in range either way: the axis index is 0 where not taken */
	kb_store(&kb, bo, pi, kb_select(&kb, take, kb_load(&kb, bu, ui), kb_load(&kb, bp, pi)));
	loops_close(&kb, r);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* MaxUnpool(X, I, output_shape?) (opset 11): zeros, with X's elements at
 * the positions I names.  I indexes MaxPool's input, row-major over the
 * shape (in - 1) * stride - pads + kernel per spatial dim (the inferred
 * shape); with output_shape the position keeps its coordinates in the
 * larger tensor.  Two kernels: zeros, then the elements in order (one
 * invocation, so of duplicate indices the last wins, as in the
 * reference); an index outside the inferred shape, or a coordinate outside
 * output_shape, writes nothing. */
static int unpool_shape(Ctx *c, Graph *g, Node *n, int64_t *inf, int64_t *out)
{
	const Value *x = in_opt(g, n, 0), *ix = in_opt(g, n, 1);
	const int64_t *ks, *st, *pd;
	int r, nk, ns, np;
	char ts[2][160];

	if (!x || !ix)
		return burn_fail(c, BURN_ERR_INVALID, "X and I are required");
	r = x->rank;
	if (r < 3 || ix->rank != r || memcmp(ix->dim, x->dim, sizeof x->dim[0] * (size_t)r) ||
	    !is_index_type(ix->dtype))
		return burn_fail(c, BURN_ERR_SHAPE, "X %s and I %s: one shape [N, C, ...], "
		                 "integer indices, expected",
		                 value_type_str(x, ts[0], sizeof ts[0]),
		                 value_type_str(ix, ts[1], sizeof ts[1]));
	nk = attr_ints(n, "kernel_shape", &ks);
	ns = attr_ints(n, "strides", &st);
	np = attr_ints(n, "pads", &pd);
	if (nk != r - 2 || (ns && ns != r - 2) || (np && np != 2 * (r - 2)))
		return burn_fail(c, BURN_ERR_INVALID, "kernel_shape (%d), strides (%d) "
		                 "and pads (%d) do not fit %d spatial dims", nk, ns, np, r - 2);
	inf[0] = x->dim[0];
	inf[1] = x->dim[1];
	for (int d = 0; d < r - 2; d++) {
		int64_t s = ns ? st[d] : 1, p = np ? pd[d] + pd[d + r - 2] : 0;
		if (ks[d] < 1 || s < 1 || p < 0 || ks[d] > INT32_MAX || s > INT32_MAX ||
		    p > INT32_MAX)
			return burn_fail(c, BURN_ERR_INVALID, "kernel %lld, stride %lld, pads "
			                 "%lld along spatial dim %d", (long long)ks[d],
			                 (long long)s, (long long)p, d);
		inf[2 + d] = (x->dim[2 + d] - 1) * s - p + ks[d];
		if (inf[2 + d] < 0)
			return burn_fail(c, BURN_ERR_SHAPE, "spatial dim %d comes out %lld", d,
			                 (long long)inf[2 + d]);
	}
	memcpy(out, inf, sizeof *inf * (size_t)r);
	if (in_opt(g, n, 2)) {
		const Value *os;
		TRY(need_const(c, g, n, 2, &os));
		if (os->rank != 1 || os->dim[0] != r)
			return burn_fail(c, BURN_ERR_SHAPE, "output_shape ('%s') must hold %d "
			                 "dims", os->name, r);
		for (int d = 0; d < r; d++) {
			out[d] = value_get_i(os, d);
			if (out[d] < (d < 2 ? inf[d] : 0) || out[d] > INT32_MAX ||
			    (d < 2 && out[d] != inf[d]))
				return burn_fail(c, BURN_ERR_SHAPE, "output_shape[%d] is %lld: "
				                 "%s expected", d, (long long)out[d],
				                 d < 2 ? "X's" : "0 .. 2^31-1");
		}
	}
	return BURN_OK;
}

int infer_maxunpool(Ctx *c, Graph *g, Node *n)
{
	int64_t inf[BURN_MAX_RANK], out[BURN_MAX_RANK];

	TRY(unpool_shape(c, g, n, inf, out));
	set_out(NOUT(g, n, 0), in_opt(g, n, 0)->dtype, in_opt(g, n, 0)->rank, out);
	return BURN_OK;
}

int lower_maxunpool(Lower *lw, Node *n)
{
	const Value *x = in_opt(lw->g, n, 0), *o = NOUT(lw->g, n, 0);
	int64_t inf[BURN_MAX_RANK], out[BURN_MAX_RANK], is[BURN_MAX_RANK], os[BURN_MAX_RANK];
	int64_t total;
	int r = x->rank, bx, bi, bo, i;
	KRef idx, ok, at, cd;
	KB kb;

	TRY(unpool_shape(lw->ctx, lw->g, n, inf, out));
	total = shape_strides(r, inf, is);
	shape_strides(r, out, os);
	lower_begin(lw, &kb, n);
	bo = lower_out(lw, &kb, n, 0);
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, value_numel(o)), KF_PARALLEL);
	kb_store(&kb, bo, kb_get(&kb, i), kconst(&kb, o->dtype, 0));
	kb_end(&kb);
	lower_end(lw, &kb);

	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	bi = lower_in(lw, &kb, n, 1);
	bo = lower_out(lw, &kb, n, 0);
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, value_numel(x)), 0);
	idx = as_i64(&kb, kb_load(&kb, bi, kb_get(&kb, i)));
	ok = kb_bin(&kb, KO_AND, kb_bin(&kb, KO_GE, idx, kb_idx(&kb, 0)),
	            kb_bin(&kb, KO_LT, idx, kb_idx(&kb, total)));
	at = kb_idx(&kb, 0);
	for (int d = 0; d < r; d++) {
		cd = kb_bin(&kb, KO_DIV, idx, kb_idx(&kb, is[d]));
		if (d)
			cd = kb_bin(&kb, KO_MOD, cd, kb_idx(&kb, inf[d]));
		if (out[d] < inf[d])
			ok = kb_bin(&kb, KO_AND, ok, kb_bin(&kb, KO_LT, cd, kb_idx(&kb, out[d])));
		at = kb_bin(&kb, KO_ADD, at, kb_bin(&kb, KO_MUL, cd, kb_idx(&kb, os[d])));
	}
	kb_if(&kb, ok);
	kb_store(&kb, bo, at, kb_load(&kb, bx, kb_get(&kb, i)));
	kb_end(&kb);
	kb_end(&kb);
	lower_end(lw, &kb);
	return BURN_OK;
}

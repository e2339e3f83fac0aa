/*
 * ops_linalg.c - matmul, convolution and pooling: MatMul, MatMulInteger,
 * Gemm, Conv, ConvInteger, ConvTranspose, MaxPool, AveragePool, LpPool, the
 * global pools and Einsum (Attention is in ops_attention.c).
 *
 * The kernels are rendered to C and compiled with -O2, so each lowering
 * picks a loop order whose innermost loop is contiguous and branch-free:
 *
 *   MatMul, Gemm   blocked (gemm_blocked): register tiles of Y (the target's
 *                  tune.gemm_mr x gemm_nr, 8x32 on the cpu) accumulated in
 *                  a local array the C compiler keeps in vector registers
 *                  over the whole k loop, B read in panels (packed at
 *                  compile time when constant, copied at run time when
 *                  large, written so by im2col).  MatMulInteger and N == 1
 *                  keep the i-k-j row form; a small Gemm with transB and a
 *                  B known at run time only is i-j-k with a scalar
 *                  accumulator.  f32 2-D and pointwise Conv use the same
 *                  blocked core.
 *   Conv           per output row (every spatial dim but the last): the row
 *                  is initialised with the bias, then for each input channel
 *                  and kernel tap w * (a strided input row) is added into it.
 *                  The valid range of the innermost output index for a tap
 *                  is computed with clamps, so the inner loop has no padding
 *                  test; the outer spatial dims test once per tap.  A 1x1
 *                  conv with unit strides and no padding is a matmul over the
 *                  flattened spatial dims.
 *   ConvTranspose  the same as a scatter: for each tap and input row, add
 *                  into the strided output row (again with a clamped range);
 *                  f32 2-D without groups: a GEMM per image and a col2im
 *                  (lower_convt_gemm), chosen by the im2col step.
 *   pools          one output element at a time, the window loops inside,
 *                  with padding tests only on dims that need them.
 *   Einsum         generic: output label loops, summed label loops inside.
 *
 * F16/BF16 buffers load as f32 and store f32, so "cdt" (compute dtype) of a
 * buffer is f32 for them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lower.h"
#include "gemm.h"

/* ---- small helpers ----------------------------------------------------- */

/* The tuning constants of the target being compiled for (tile shapes,
 * unroll counts, lanes): targets/target.h. */
static const TargetTune *
tune(const Lower *lw)
{
	return &target_or_default(lw->target)->tune;
}

/* The kernel's decision for step `kind` (KSteps, ir/kir.h): what
 * --schedule asks for, else the Target's default schedule step
 * (target_step; extent: the row a vec step is for, 0 for the narrow
 * form), recorded in the kernel's schedule. */
static KStep
step(Lower *lw, KB *kb, int kind, int64_t extent)
{
	return lower_step(lw, kb, target_step(target_or_default(lw->target), kind, extent));
}

static int
step1(Lower *lw, KB *kb, int kind, int64_t extent)
{
	return step(lw, kb, kind, extent).arg[0];
}

/* The dtype loads of a dt buffer yield. */
static int
cdt(int dt)
{
	return dt == DT_F16 || dt == DT_BF16 ? DT_F32 : dt;
}

static KRef
I(KB *kb, int64_t v)
{
	return kb_idx(kb, v);
}

static KRef
add(KB *kb, KRef a, KRef b)
{
	return kb_bin(kb, KO_ADD, a, b);
}

static KRef
mul(KB *kb, KRef a, KRef b)
{
	return kb_bin(kb, KO_MUL, a, b);
}

/* base + v * s, for i64 index expressions. */
static KRef
madd(KB *kb, KRef base, KRef v, int64_t s)
{
	return add(kb, base, mul(kb, v, I(kb, s)));
}

/* A numeric constant of compute dtype dt. */
static KRef
cnum(KB *kb, int dt, double v)
{
	return dtype_is_float(dt) ? kb_const_f(kb, dt, v)
	                          : kb_const_i(kb, dt, (int64_t)v);
}

/* Open `for (v = 0; v < n; v++)` unless n == 1; returns the index
 * expression (the constant 0 when no loop was opened).  Blocks are closed
 * by close_to(). */
static KRef
loop(KB *kb, const char *name, int64_t n, int flags)
{
	if (n == 1)
		return I(kb, 0);
	return kb_get(kb, kb_for(kb, name, I(kb, 0), I(kb, n), flags));
}

/*
 * The batch loop of a kernel whose scratch (im2col's columns, B's panels)
 * is reused image by image, in S slices that can go to threads, each with
 * its own scratch (slice s at s * the scratch of one):
 *
 *   for s < S (parallel): for n in [s*N/S, (s+1)*N/S): ...
 *
 * S = tune.thread_slots on a target with threads (at most N, and fewer
 * where S copies of `scratch` bytes would pass 64 MB), else 1: then only
 * the serial n loop.  The arithmetic per image is the same whatever S:
 * the threads change no result.  Returns n; *slice is s (0 when S = 1).
 */
static int64_t
batch_slices(const Lower *lw, int64_t N, int64_t scratch)
{
	int64_t S = target_or_default(lw->target)->threads != 0 ? tune(lw)->thread_slots : 1;

	if (S > N)
		S = N;
	while (S > 1 && S * scratch > ((int64_t)64 << 20))
		S /= 2;
	return S > 1 ? S : 1;
}

static KRef
batch_loop(KB *kb, int64_t N, int64_t S, KRef *slice)
{
	KRef s, lo, hi;

	if (S <= 1) {
		*slice = I(kb, 0);
		return loop(kb, "n", N, 0);
	}
	*slice = s = loop(kb, "s", S, KF_PARALLEL);
	if (S == N)
		return s;
	lo = kb_bin(kb, KO_DIV, mul(kb, s, I(kb, N)), I(kb, S));
	hi = kb_bin(kb, KO_DIV, mul(kb, add(kb, s, I(kb, 1)), I(kb, N)), I(kb, S));
	return kb_get(kb, kb_for(kb, "n", lo, hi, 0));
}

/*
 * A vector-friendly loop over q in [lo, hi), in two passes that the caller
 * fills with the same body:
 *
 *   pass 0: for c < (hi-lo)/VL: for l < VL: q = lo + c*VL + l   (chunks)
 *   pass 1: for q from lo + (hi-lo)/VL*VL to hi                 (remainder)
 *
 * GCC at -O2 uses the "very cheap" vectorizer cost model, which vectorizes
 * a loop only when its trip count is a known multiple of the vector width;
 * the constant-trip inner loop is unrolled and SLP-vectorized instead.  With
 * constant bounds pass 0 is a plain loop of a multiple of VL iterations
 * (on a target with tune.size_free, the run-time form even then).
 * Returns 0 when the pass is empty (the caller emits nothing); else the
 * caller emits the body and closes the blocks with close_to().
 */
static int
vl_open(const Lower *lw, KB *kb, const char *name, KRef lo, KRef hi, int64_t vl,
        int pass, KRef *q)
{
	int64_t l, h;
	KRef nc;

	if (vl > 1 && tune(lw)->size_free) {
		/* the length through a variable, so that the builder folds no
		 * division of constants: the chunks and the remainder are there
		 * at every length (dynfit.c fits the length) */
		int v = kb_var(kb, DT_I64, "len");
		kb_set(kb, v, kb_bin(kb, KO_SUB, hi, lo));
		hi = kb_bin(kb, KO_ADD, lo, kb_get(kb, v));
	} else if (kb_is_const_i(kb->k, lo, &l) && kb_is_const_i(kb->k, hi, &h)) {
		int64_t m = h > l ? (h - l) / vl * vl : 0;
		if (h <= l || (pass == 0 && m == 0) || (pass == 1 && l + m == h))
			return 0;
		*q = kb_get(kb, kb_for(kb, name, pass ? kb_idx(kb, l + m) : lo,
		                       pass ? hi : kb_idx(kb, l + m), KF_PARALLEL));
		return 1;
	}
	nc = kb_bin(kb, KO_DIV, kb_bin(kb, KO_SUB, hi, lo), kb_idx(kb, vl));
	if (pass == 0) {
		KRef c = kb_get(kb, kb_for(kb, "c4", kb_idx(kb, 0), nc, KF_PARALLEL));
		KRef ln = kb_get(kb, kb_for(kb, "l", kb_idx(kb, 0), kb_idx(kb, vl), KF_PARALLEL));
		*q = kb_bin(kb, KO_ADD, kb_bin(kb, KO_ADD, lo, ln),
		            kb_bin(kb, KO_MUL, c, kb_idx(kb, vl)));
		return 1;
	}
	*q = kb_get(kb, kb_for(kb, name, kb_bin(kb, KO_ADD, lo,
	                                        kb_bin(kb, KO_MUL, nc, kb_idx(kb, vl))),
	                       hi, KF_PARALLEL));
	return 1;
}

/* Close open blocks down to depth d. */
static void
close_to(KB *kb, int d)
{
	while (kb->depth > d)
		kb_end(kb);
}

static int64_t
prod(int n, const int64_t *d)
{
	int64_t p = 1;

	for (int i = 0; i < n; i++)
		p *= d[i];
	return p;
}

/* Smallest value of integer dtype dt (the identity of max). */
static int64_t
int_min(int dt)
{
	switch (dt) {
	case DT_I8:  return INT8_MIN;
	case DT_I16: return INT16_MIN;
	case DT_I32: return INT32_MIN;
	case DT_I64: return INT64_MIN;
	default:     return 0;
	}
}

static int
is_num(int dt)
{
	return dtype_supported(dt) && dt != DT_BOOL && dt != DT_STRING &&
	       (dtype_is_float(dt) || dtype_is_int(dt));
}

/* Whether optional input k is present. */
static int
has_in(const Node *n, int k)
{
	return k < n->nin && n->in[k] >= 0;
}

static int
need_in(Ctx *c, Graph *g, Node *n, int k, const Value **out)
{
	const Value *v = NIN(g, n, k);

	if (!v)
		return burn_fail(c, BURN_ERR_INVALID, "input %d is required", k);
	if (v->rank < 0 || !value_shape_known(v))
		return burn_fail(c, BURN_ERR_SHAPE, "input %d has unknown shape", k);
	*out = v;
	return BURN_OK;
}

/* Strides of a broadcast operand of rank r (dims d) aligned to the last r
 * of `orank` output dims: 0 for a broadcast (size-1) dim. */
static void
bcast_strides(int r, const int64_t *d, int orank, int64_t *st)
{
	int64_t s = 1;

	for (int i = orank - 1; i >= 0; i--) {
		int j = i - (orank - r);
		if (j < 0 || d[j] == 1) {
			st[i] = 0;
		} else {
			st[i] = s;
			s *= d[j];
		}
	}
}

/* A zero point (input k, scalar or per-channel) as an i32 expression:
 * element `ix` when it has more than one element, else element 0. */
static KRef
zero_point(Lower *lw, KB *kb, Node *n, int k, KRef ix)
{
	const Value *z = NIN(lw->g, n, k);
	int b;

	if (!z)
		return kb_const_i(kb, DT_I32, 0);
	b = lower_in(lw, kb, n, k);
	return kb_cast(kb, DT_I32, kb_load(kb, b, value_numel(z) > 1 ? ix : I(kb, 0)));
}

static int
check_zp(Ctx *c, Graph *g, Node *n, int k, int64_t per)
{
	const Value *z = NIN(g, n, k);
	int64_t ne;

	if (!z)
		return BURN_OK;
	ne = value_numel(z);
	if (z->dtype != DT_U8 && z->dtype != DT_I8)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "zero point %d of type %s",
		                 k, dtype_name(z->dtype));
	if (ne != 1 && ne != per)
		return burn_fail(c, BURN_ERR_UNSUPPORTED,
		                 "zero point %d has %lld elements (want 1 or %lld)", k,
		                 (long long)ne, (long long)per);
	return BURN_OK;
}

/* ---- the blocked GEMM core shared by MatMul, Gemm and Conv ---------------- */

static KRef
mat_at(KB *kb, int dt, const Mat *m, KRef r, KRef c)
{
	KRef row = m->tab ? kb_load(kb, m->tabbuf, r) : mul(kb, r, I(kb, m->rs));

	return kb_cast(kb, dt, kb_load(kb, m->buf, add(kb, m->off,
	               add(kb, row, mul(kb, c, I(kb, m->cs))))));
}

/* Y[i, j] from the product's element v: alpha*v + beta*C[i, j] (each
 * term only where it is there), in dtype dt. */
static KRef
gemm_out(KB *kb, int dt, const GT *t, KRef v, KRef i, KRef j)
{
	if (t->alpha != 1)
		v = mul(kb, cnum(kb, dt, t->alpha), v);
	if (t->c.buf >= 0) {
		KRef cv = mat_at(kb, dt, &t->c, i, j);
		if (t->beta != 1)
			cv = mul(kb, cnum(kb, dt, t->beta), cv);
		v = add(kb, v, cv);
	}
	return v;
}

/*
 * The mr x nr tile of Y at row i, column j, in the local array acc:
 *
 *   acc = A[i.., 0] * B[0, j..]
 *   for k >= 1: for r < mr: a = A[i+r, k]; for c < nr: acc[r*nr+c] += a * B[k, j+c]
 *   Y[i+r, j+c] = alpha*acc[r*nr+c] + beta*C[i+r, j+c]
 *
 * The r and c loops have constant trips, so the C compiler unrolls them and
 * keeps acc in vector registers across the k loop: each B vector is loaded
 * once per k for all mr rows, and Y is written once.  Only the first ns
 * columns are stored (ns < nr: the last panel of a padded B).
 *
 * A chunk of k (gemm_blocked's KC): k in [k0, k0 + kn); unless `init`
 * (k0 is 0) acc starts from the sums the chunk before left at sp[so..],
 * and unless `fin` (the last chunk) it leaves its sums there instead of
 * storing Y.  Each element's sum is the same chain of k in order, so the
 * chunks change no result.  The sums move between sp and acc inside the
 * chunk's first and last k steps (gemm_tile_step), not by copy loops of
 * their own: gcc made those memcpy calls, 1 KB through the stack each
 * way per tile and chunk, where the tile's registers can load and store
 * sp directly (SqueezeNet's classifier, K = 512 in four chunks, 7%).
 */
static void gemm_tile_step(KB *kb, const GT *t, KRef i, KRef j, int64_t mr, int64_t nr,
                           KRef k, int set, int pre, int post, int sp, KRef so);

static void
gemm_tile_k(KB *kb, const GT *t, KRef i, KRef j, int64_t mr, int64_t nr, int64_t ns,
            KRef k0, int64_t kn, int init, int fin, int sp, KRef so)
{
	int d = kb->depth, dt = t->dt;
	KRef k, ti, v, yi, r, c;
	int64_t last = fin ? 0 : 1;   /* a last step of its own: it stores sp */

	if (kn == 0) {
		/* K == 0 (init and fin): zeros.  Zeroing the tile before
		 * summing instead, the C compiler calls memset on it and
		 * reloads it, hence k = 0 sets acc below */
		ti = loop(kb, "t", mr * nr, KF_PARALLEL);
		if (init)
			kb_store(kb, t->acc, ti, cnum(kb, dt, 0));
		else
			kb_store(kb, t->acc, ti, kb_load(kb, sp, add(kb, so, ti)));
		close_to(kb, d);
		if (!fin) {
			ti = loop(kb, "t", mr * nr, KF_PARALLEL);
			kb_store(kb, sp, add(kb, so, ti), kb_load(kb, t->acc, ti));
			close_to(kb, d);
			return;
		}
	} else {
		/* the first step: k = 0 sets acc (init), else adds to the sums
		 * read from sp; then the middle steps; then the last, storing
		 * the sums to sp (not fin; one step: the first does it) */
		gemm_tile_step(kb, t, i, j, mr, nr, k0, init, !init, !fin && kn == 1, sp, so);
		if (kn - 1 - last >= 1) {
			k = kb_get(kb, kb_for(kb, "k", add(kb, k0, I(kb, 1)),
			                      add(kb, k0, I(kb, kn - last)), 0));
			gemm_tile_step(kb, t, i, j, mr, nr, k, 0, 0, 0, sp, so);
			close_to(kb, d);
		}
		if (!fin && kn >= 2)
			gemm_tile_step(kb, t, i, j, mr, nr, add(kb, k0, I(kb, kn - 1)), 0, 0, 1, sp, so);
		if (!fin)
			return;
	}
	r = loop(kb, "r", mr, KF_PARALLEL);
	c = loop(kb, "c", ns, KF_PARALLEL);
	v = kb_load(kb, t->acc, madd(kb, c, r, nr));
	v = gemm_out(kb, dt, t, v, add(kb, i, r), add(kb, j, c));
	yi = add(kb, t->yoff, t->yt ? madd(kb, add(kb, i, r), add(kb, j, c), t->M)
	                            : madd(kb, add(kb, j, c), add(kb, i, r),
	                                   t->ldy ? t->ldy : t->N));
	if (t->epi)
		v = lower_epi_value(t->lw, kb, t->epi, yi, v);
	kb_store(kb, t->y, yi, v);
	close_to(kb, d);
}

/*
 * Step k of the tile: for r < mr, c < nr: acc[r*nr+c] (+)= A[i+r, k] *
 * B[k, j+c] (set: =); pre: acc[..] is first read from sp[so..], post:
 * stored to sp[so..] after, in the same loop body, so the sums go from
 * sp to the tile's registers and back without a copy through acc.
 */
static void
gemm_tile_step(KB *kb, const GT *t, KRef i, KRef j, int64_t mr, int64_t nr,
               KRef k, int set, int pre, int post, int sp, KRef so)
{
	int d = kb->depth, dt = t->dt;
	KRef r = loop(kb, "r", mr, KF_PARALLEL);
	KRef c = loop(kb, "c", nr, KF_PARALLEL);
	KRef ti = madd(kb, c, r, nr);
	KRef av = t->a.pan ? kb_cast(kb, dt, kb_load(kb, t->a.buf,
	                     add(kb, madd(kb, t->a.off, i, t->K), madd(kb, r, k, mr))))
	                   : mat_at(kb, dt, &t->a, add(kb, i, r), k);
	KRef bv = t->b.pan ? kb_cast(kb, dt, kb_load(kb, t->b.buf,
	                     add(kb, madd(kb, t->b.off, j, t->K), madd(kb, c, k, nr))))
	                   : mat_at(kb, dt, &t->b, k, add(kb, j, c));

	if (pre)
		kb_store(kb, t->acc, ti, kb_load(kb, sp, add(kb, so, ti)));
	kb_store(kb, t->acc, ti, set ? mul(kb, av, bv)
	                             : add(kb, kb_load(kb, t->acc, ti), mul(kb, av, bv)));
	if (post)
		kb_store(kb, sp, add(kb, so, ti), kb_load(kb, t->acc, ti));
	close_to(kb, d);
}

/* The whole k range of the tile (gemm_tile_k). */
static void
gemm_tile(KB *kb, const GT *t, KRef i, KRef j, int64_t mr, int64_t nr, int64_t ns)
{
	gemm_tile_k(kb, t, i, j, mr, nr, ns, I(kb, 0), t->K, 1, 1, -1, 0);
}

/* The fused epilogue over rows [lo, hi) of Y, each final in memory (hi
 * 0: the rows [lo, lo + rows), a loop of constant trip). */
static void
gemm_epi(Lower *lw, KB *kb, Node *n, const GT *t, KRef lo, KRef hi, int64_t rows)
{
	int d = kb->depth;
	KRef r;

	if (t->epi || !lw->epi || &lw->g->node[lw->epi->anchor] != n)
		return;
	r = hi ? kb_get(kb, kb_for(kb, "r", lo, hi, KF_PARALLEL))
	       : add(kb, lo, loop(kb, "r", rows, KF_PARALLEL));
	lower_epi_run(lw, kb, n, t->y, add(kb, t->yoff, mul(kb, r, I(kb, t->ldy ? t->ldy : t->N))),
	              t->N);
	close_to(kb, d);
}

/* The GEMM the last panel's tiles compute: t, or a copy *tr reading the
 * separately packed last panel (bpack 2). */
static const GT *
gemm_restb(const GT *t, GT *tr)
{
	*tr = *t;
	if (t->hasbr)
		tr->b = t->br;
	return tr;
}

/* mr rows of Y from row i: full tiles, the N % t->nr rest, then the
 * fused epilogue on each row while the rows are in cache. */
static void
gemm_rows(Lower *lw, KB *kb, Node *n, const GT *t, KRef i, int64_t mr)
{
	int64_t nf = t->N / t->nr, nr = t->N % t->nr;
	int d = kb->depth;

	if (nf > 0) {
		KRef j = mul(kb, loop(kb, "j0", nf, KF_PARALLEL), I(kb, t->nr));
		gemm_tile(kb, t, i, j, mr, t->nr, t->nr);
		close_to(kb, d);
	}
	if (nr > 0) {
		GT tr;
		const GT *u = gemm_restb(t, &tr);
		gemm_tile(kb, u, i, I(kb, nf * t->nr), mr, u->b.last ? u->b.last : nr, nr);
	}
	gemm_epi(lw, kb, n, t, i, 0, mr);
}

/* The register tile MR x NR of an M-row GEMM (the schedule's tile step)
 * and the width of its tiles, which is NR unless M < MR: then wider tiles
 * of as many accumulators (B's rows are read in longer runs), a multiple
 * of gemm_nr_step columns, at most gemm_nr_max. */
static int64_t
gemm_nr(Lower *lw, KB *kb, int64_t M, int64_t *MR, int64_t *NR)
{
	const TargetTune *tu = tune(lw);
	KStep tile = step(lw, kb, KST_TILE, 0);
	int64_t nr;

	if (tile.kind != KST_TILE)   /* axpy, where this lowering has no
	                              * row form: one-element tiles */
		tile = kstep_make(KST_TILE, 2, 1, 1, 0);
	*MR = tile.arg[0];
	*NR = tile.arg[1];
	nr = *NR;
	if (M > 0 && M < *MR) {   /* M == 0: an empty product */
		nr = *MR * *NR / M / tu->gemm_nr_step * tu->gemm_nr_step;
		nr = nr > tu->gemm_nr_max ? tu->gemm_nr_max : nr;
	}
	return nr;
}

/* Whether the target takes the CPU form of gemm_blocked: blocks of rows
 * (tune.gemm_mc) and B in panels. */
static int
gemm_cpu(const Lower *lw)
{
	return tune(lw)->gemm_mc > 0;
}

/* The width the last panel of B (N columns in panels of nr) is padded
 * to: N % nr rounded up to a multiple of tune.gemm_nr_step (the vector
 * width), or 0 where that pads nothing. */
static int64_t
gemm_last(const Lower *lw, int64_t N, int64_t nr)
{
	int64_t step = tune(lw)->gemm_nr_step, rest = N % nr, w;

	if (rest == 0 || step <= 0)
		return 0;
	w = (rest + step - 1) / step * step;
	w = w > nr ? nr : w;
	return w == rest ? 0 : w;
}

/*
 * Input k of n, a constant holding one or more K x N matrices (element
 * [k, j] of matrix m at m*K*N + k*rs + j*cs), copied at compile time into
 * B panels of width nr (Mat), each matrix where it was: *out is the new
 * constant, or -1 where input k is not a constant or the lowering is
 * constant folding (lw->target NULL: a kernel run once).  One matrix
 * (and pad set) gets its last panel padded with zero columns (gemm_last;
 * *last its width, else 0).
 */
static int
gemm_pack_const(Lower *lw, Node *n, int k, int64_t K, int64_t N, int64_t rs,
                int64_t cs, int64_t nr, int pad, int *out, int64_t *last)
{
	Graph *g = lw->g;
	const Value *b = NIN(g, n, k);
	const unsigned char *src;
	unsigned char *t;
	int64_t numel, es, nm, nf, size, dim[1];
	int v, rc;

	*out = -1;
	*last = 0;
	if (!lw->target || !gemm_cpu(lw) || !b || !b->data || K <= 0 || N <= 0 || nr <= 0)
		return BURN_OK;
	numel = value_numel(b);
	if (numel % (K * N))
		return BURN_OK;
	es = dtype_size(b->dtype);
	nm = numel / (K * N);
	nf = N / nr;
	if (pad && nm == 1)
		*last = gemm_last(lw, N, nr);
	size = *last ? K * (nf * nr + *last) : numel;
	src = b->data;
	if (!(t = calloc((size_t)(size * es) + 1, 1)))
		return burn_fail(lw->ctx, BURN_ERR_NOMEM, "out of memory");
	for (int64_t m = 0; m < nm; m++)
		for (int64_t j0 = 0; j0 < N; j0 += nr) {
			int64_t w = j0 / nr < nf ? nr : N % nr;
			int64_t ws = j0 / nr < nf || !*last ? w : *last;   /* stored */
			for (int64_t kk = 0; kk < K; kk++)
				for (int64_t c = 0; c < w; c++)
					memcpy(t + (m * K * N + j0 * K + kk * ws + c) * es,
					       src + (m * K * N + kk * rs + (j0 + c) * cs) * es,
					       (size_t)es);
		}
	dim[0] = size;
	v = graph_add_value(g, arena_printf(&g->arena, "%s.panels", b->name));
	rc = v < 0 ? burn_fail(lw->ctx, BURN_ERR_NOMEM, "out of memory")
	           : graph_set_const(lw->ctx, g, v, b->dtype, 1, dim, t);
	free(t);
	TRY(rc);
	*out = v;
	return BURN_OK;
}

/* Whether gemm_blocked should copy a strided B (M x N result) into
 * panels at run time: on the CPU form, where B is read by enough rows to
 * pay for the copy (two tiles' worth) and is wider than a tile. */
static int
gemm_bpack(const Lower *lw, int64_t M, int64_t N)
{
	const TargetTune *tu = tune(lw);

	return gemm_cpu(lw) && M >= 2 * tu->gemm_mr && N > tu->gemm_nr;
}

/* The panel copy of a strided B that gemm_blocked makes at run time
 * (packed layout: Mat; the last panel last wide, 0: N % nr) into pb at
 * offset base (0: none), of t->dt. */
static void
gemm_pack_b(KB *kb, const GT *t, int pb, KRef base, int64_t last, int only_rest)
{
	int64_t nf = t->N / t->nr, nr = t->N % t->nr;
	int d = kb->depth;
	KRef j, k, c, at;

	for (int rest = only_rest; rest < 2; rest++) {
		int64_t w = rest ? (last ? last : nr) : t->nr;
		if (rest ? nr == 0 : nf == 0)
			continue;
		j = rest ? I(kb, nf * t->nr) : mul(kb, loop(kb, "j0", nf, KF_PARALLEL), I(kb, t->nr));
		k = loop(kb, "k", t->K, KF_PARALLEL);
		c = loop(kb, "c", rest ? nr : w, KF_PARALLEL);
		at = only_rest ? I(kb, 0) : mul(kb, j, I(kb, t->K));
		kb_store(kb, pb, add(kb, base ? add(kb, base, at) : at, madd(kb, c, k, w)),
		         mat_at(kb, t->dt, &t->b, k, add(kb, j, c)));
		close_to(kb, d);
		if (rest && last) {   /* the padding columns */
			k = loop(kb, "k", t->K, KF_PARALLEL);
			c = kb_get(kb, kb_for(kb, "c", I(kb, nr), I(kb, last), KF_PARALLEL));
			at = only_rest ? I(kb, 0) : mul(kb, j, I(kb, t->K));
			kb_store(kb, pb, add(kb, base ? add(kb, base, at) : at, madd(kb, c, k, w)),
			         cnum(kb, t->dt, 0));
			close_to(kb, d);
		}
	}
}

/*
 * One block of gemm_blocked: the row tiles [lo, hi) (TB of them at most,
 * TB == 1: the one at lo), each panel of B in turn (the full ones, then
 * the N % nr rest), k in chunks of kc (0: whole) with the sums waiting in
 * sp, then the fused epilogue on the block's rows (elem: after each
 * element instead).
 */
static void
gemm_block(Lower *lw, KB *kb, Node *n, GT *t, KRef lo, KRef hi, int64_t TB,
           int64_t MR, int64_t kc, int sp, int elem)
{
	int64_t nf = t->N / t->nr, nrest = t->N % t->nr;
	int db = kb->depth;

	for (int rest = 0; rest < 2; rest++) {
		KRef j, it;
		GT tr;
		const GT *u;
		if (rest ? nrest == 0 : nf == 0)
			continue;
		j = rest ? I(kb, nf * t->nr)
		         : mul(kb, loop(kb, "j0", nf, KF_PARALLEL), I(kb, t->nr));
		u = rest ? gemm_restb(t, &tr) : t;
		if (kc > 0) {   /* k in chunks: the first, the middle ones
		                 * (a loop), the last */
			int64_t nck = (t->K + kc - 1) / kc;
			int dj = kb->depth;
			for (int part = 0; part < 3; part++) {
				KRef k0, so;
				if (part == 1 && nck < 3)
					continue;
				k0 = part == 0 ? I(kb, 0) : part == 2 ? I(kb, (nck - 1) * kc)
				   : mul(kb, kb_get(kb, kb_for(kb, "kc", I(kb, 1), I(kb, nck - 1), 0)),
				         I(kb, kc));
				it = TB == 1 ? lo : kb_get(kb, kb_for(kb, "it", lo, hi, KF_PARALLEL));
				so = mul(kb, kb_bin(kb, KO_SUB, it, lo), I(kb, MR * t->nr));
				gemm_tile_k(kb, u, mul(kb, it, I(kb, MR)), j, MR,
				            !rest ? t->nr : u->b.last ? u->b.last : nrest,
				            rest ? nrest : t->nr, k0,
				            part == 2 ? t->K - (nck - 1) * kc : kc,
				            part == 0, part == 2, sp, so);
				close_to(kb, dj);
			}
			close_to(kb, db);
			continue;
		}
		it = TB == 1 ? lo : kb_get(kb, kb_for(kb, "it", lo, hi, KF_PARALLEL));
		gemm_tile(kb, u, mul(kb, it, I(kb, MR)), j, MR,
		          !rest ? t->nr : u->b.last ? u->b.last : nrest,
		          rest ? nrest : t->nr);
		if (elem)
			lower_epi_run(lw, kb, n, t->y, add(kb, t->yoff,
			              add(kb, mul(kb, it, I(kb, t->N)), j)), 1);
		close_to(kb, db);
	}
	if (!elem)
		gemm_epi(lw, kb, n, t, mul(kb, lo, I(kb, MR)), TB == 1 ? 0 :
		         mul(kb, hi, I(kb, MR)), MR);
}

/*
 * The whole GEMM t.  Register tiles MR x NR (the target's tune.gemm_mr x
 * gemm_nr, or the schedule's tile step), walked so that each panel of B
 * (K x NR) is read by the tiles of several rows in a row while it is in
 * cache, and each block of rows of A by every panel:
 *
 *   for ib < nib (parallel): rows of tiles [ib*TB, min(mf, ib*TB + TB))
 *     for each panel of B (N/NR full ones, then the N % NR rest):
 *       for each row tile of the block: the MR x NR tile (gemm_tile)
 *     the fused epilogue over the block's rows
 *   the M % MR rest rows (gemm_rows)
 *
 * TB = tune.gemm_mc / MR tiles, fewer where that leaves the threads
 * (the ib loop is the kernel's outermost parallel loop) fewer than two
 * blocks.  B is read in panels where it is packed already (a constant
 * packed at compile time, Conv's im2col writing them); else, where
 * t->bpack asks (gemm_bpack), it is copied into panels in a scratch value
 * first (the copy must not be inside a loop run on threads); else read
 * strided.  Allocates t->acc.
 */
static void
gemm_blocked(Lower *lw, KB *kb, Node *n, GT *t)
{
	const TargetTune *tu = tune(lw);
	int64_t MR, NR, mf, mr, TB, nib, kc;
	int d = kb->depth, elem, sp = -1;

	t->nr = gemm_nr(lw, kb, t->M, &MR, &NR);
	mf = t->M / MR;
	mr = t->M % MR;
	t->acc = kb_buf(kb, t->dt, MR * NR, -1, KS_LOCAL, KA_RW);
	if (t->bpack == 1 && !t->b.pan) {
		int64_t last = gemm_last(lw, t->N, t->nr), S = t->slices > 1 ? t->slices : 1;
		int64_t dim[2] = { S * t->K, t->N / t->nr * t->nr + (last ? last : t->N % t->nr) };
		int pb = lower_bind(lw, kb, lower_temp(lw, t->dt, 2, dim), KA_RW);
		KRef base = S > 1 ? mul(kb, t->slice, I(kb, t->K * dim[1])) : 0;
		gemm_pack_b(kb, t, pb, base, last, 0);
		t->b = (Mat){ pb, base ? base : I(kb, 0), 0, 0, 1, last };
	} else if (t->bpack == 2 && !t->b.pan && t->N % t->nr) {
		/* the last panel alone, K x last: its tile reads it as panel
		 * nf of a packed B (offset back by nf*nr*K) */
		int64_t last = gemm_last(lw, t->N, t->nr), nf0 = t->N / t->nr * t->nr;
		int64_t S = t->slices > 1 ? t->slices : 1;
		int64_t dim[2] = { S * t->K, last ? last : t->N % t->nr };
		int pb = lower_bind(lw, kb, lower_temp(lw, t->dt, 2, dim), KA_RW);
		KRef base = S > 1 ? mul(kb, t->slice, I(kb, t->K * dim[1])) : 0;
		gemm_pack_b(kb, t, pb, base, last, 1);
		t->hasbr = 1;
		t->br = (Mat){ pb, base ? add(kb, base, I(kb, -nf0 * t->K)) : I(kb, -nf0 * t->K),
		               0, 0, 1, last };
	}
	/* tune.gemm_mc 0 (GPU targets): a block is one row of tiles */
	TB = tu->gemm_mc >= MR ? tu->gemm_mc / MR : 1;
	nib = (mf + TB - 1) / TB;
	/* two blocks: one per thread.  Not where B's full panels are read
	 * strided (bpack 2: a pointwise Conv of few rows reading X where it
	 * is): there each block read all of X, 128 rows of it at once for a
	 * panel; as one block each panel is read once, from L1 for the
	 * block's other tiles, and the panel loop, outermost then, is the
	 * threads' (SqueezeNet's 55 x 55 squeeze, 128 -> 16: 0.113 -> 0.098
	 * ms on a Sapphire Rapids) */
	if (nib == 1 && mf >= 2 && !(t->bpack == 2 && !t->b.pan)) {
		nib = 2;
		TB = (mf + 1) / 2;
	}
	/* blocks the threads share evenly: three to seven blocks (2:1
	 * between two threads at three) become one fewer, and the tiles are
	 * spread over the blocks (12 tiles were blocks of 8 and 4).  The
	 * blocks grow by at most a third (three to two: SqueezeNet's
	 * transposed 13 x 13 convs, 21 tiles of 169 positions), and each
	 * block reads all of B, so fewer blocks also read B fewer times. */
	if (gemm_cpu(lw) && mf >= 2) {
		if (nib >= 3 && nib < 8 && nib % 2)
			nib--;
		TB = (mf + nib - 1) / nib;
	}
	/* one element a tile on a GPU (tile(1,1), a block a row): the fused
	 * epilogue right after each element, so the row and column loops
	 * stay one nest of parallel loops that schedule_gpu maps onto M*N
	 * threads, instead of a row of N elements and its epilogue a thread */
	elem = MR == 1 && t->nr == 1 && TB == 1 && lw->epi &&
	       &lw->g->node[lw->epi->anchor] == n &&
	       target_or_default(lw->target)->max_block_threads > 0;
	/* on the CPU form the fused epilogue is applied to each value as the
	 * tile stores it, not by a pass over the block's rows after: Y is
	 * written once (SqueezeNet's first Conv, 64 x 111 outputs a row, and
	 * its classifier, whose transposed tiles could not take the rows'
	 * pass and left the caller a pass over all of Y) */
	if (!elem && gemm_cpu(lw) && n && lw->epi && &lw->g->node[lw->epi->anchor] == n) {
		t->epi = n;
		t->lw = lw;
	}
	/* k in chunks of kc (the tile step's third argument, else
	 * tune.gemm_kc where K > 2 kc): the panel's chunk, KC x NR (16 KB
	 * at 128 x 32), stays in L1 while the block's tiles read it, where
	 * the whole panel (64 KB at K = 512) came from L2 for each tile;
	 * the tiles' sums wait in sp between chunks (SqueezeNet's
	 * classifier, K = 512, 1.19 -> 1.10 ms on a Sapphire Rapids with
	 * 128; 64: 1.17, 256: 1.19).  By default only for a B packed in
	 * panels: the implicit Convs' B rows, read from the planes, were 6
	 * to 9% slower in chunks (K 288 and 576) */
	{
		KStep tile = step(lw, kb, KST_TILE, 0);
		kc = tile.narg > 2 ? tile.arg[2]
		   : t->K > 2 * (int64_t)tu->gemm_kc ? tu->gemm_kc : 0;
		if (!gemm_cpu(lw) || elem || kc >= t->K || mf == 0 ||
		    (tile.narg <= 2 && !t->b.pan))
			kc = 0;
		/* by default not for a block of one tile: the chunk is there for
		 * the block's tiles to share, and one tile only pays for its
		 * sums' trips through sp (MobileNet's 1x1 Convs on 3 x 3
		 * planes, 9 rows: one tile and a row) */
		if (tile.narg <= 2 && (TB < 2 || mf < 2))
			kc = 0;
		if (kc > 0)
			sp = kb_buf(kb, t->dt, TB * MR * t->nr, -1, KS_LOCAL, KA_RW);
	}
	if (mf > 0) {
		KRef ib = loop(kb, "i0", nib, KF_PARALLEL);
		KRef lo = mul(kb, ib, I(kb, TB));
		KRef hi = nib * TB == mf ? add(kb, lo, I(kb, TB))
		                         : kb_bin(kb, KO_MIN, add(kb, lo, I(kb, TB)), I(kb, mf));
		gemm_block(lw, kb, n, t, lo, hi, TB, MR, kc, sp, elem);
		close_to(kb, d);
	}
	if (mr > 0) {
		/* a tile of its own: the blocks' stays private to their threads */
		if (mf > 0)
			t->acc = kb_buf(kb, t->dt, MR * NR, -1, KS_LOCAL, KA_RW);
		gemm_rows(lw, kb, n, t, I(kb, mf * MR), mr);
	}
}

/*
 * gemm_blocked over M rows known only at run time (an expression: the
 * rows of every item of a batch at once, lower_gemm).  The same tiles,
 * MR x NR, never wider (M is not known to be small), in blocks of
 * tune.gemm_mc / MR row tiles; then the M % MR rest rows in tiles of
 * MR/2, MR/4, ... rows and one at a time.
 * B is packed already (a constant) or read strided: no copy at run time,
 * whose scratch would be sized by M.  Allocates t->acc.
 */
static void
gemm_blocked_rt(Lower *lw, KB *kb, Node *n, GT *t, KRef M)
{
	const TargetTune *tu = tune(lw);
	KStep tile = step(lw, kb, KST_TILE, 0);
	int64_t MR, NR, TB, kc;
	int d = kb->depth, sp = -1, r;
	KRef mf, nib, ib, lo, hi, i;

	t->nr = gemm_nr(lw, kb, 0, &MR, &NR);
	t->acc = kb_buf(kb, t->dt, MR * NR, -1, KS_LOCAL, KA_RW);
	TB = tu->gemm_mc >= MR ? tu->gemm_mc / MR : 1;
	kc = tile.narg > 2 ? tile.arg[2]
	   : t->K > 2 * (int64_t)tu->gemm_kc && t->b.pan ? tu->gemm_kc : 0;
	if (kc >= t->K)
		kc = 0;
	if (kc > 0)
		sp = kb_buf(kb, t->dt, TB * MR * t->nr, -1, KS_LOCAL, KA_RW);
	mf = kb_bin(kb, KO_DIV, M, I(kb, MR));
	nib = kb_bin(kb, KO_DIV, add(kb, mf, I(kb, TB - 1)), I(kb, TB));
	ib = kb_get(kb, kb_for(kb, "i0", I(kb, 0), nib, KF_PARALLEL));
	lo = mul(kb, ib, I(kb, TB));
	hi = kb_bin(kb, KO_MIN, add(kb, lo, I(kb, TB)), mf);
	gemm_block(lw, kb, n, t, lo, hi, TB, MR, kc, sp, 0);
	close_to(kb, d);
	/* the rest rows: a tile of MR/2 rows where as many are left, then of
	 * MR/4, ... (all of them, MR a power of two), then one row at a time;
	 * so a batch smaller than MR still has its rows read B together.  A
	 * tile of its own: the blocks' stays private to their threads */
	t->acc = kb_buf(kb, t->dt, MR * NR, -1, KS_LOCAL, KA_RW);
	r = kb_var(kb, DT_I64, "r");
	kb_set(kb, r, mul(kb, mf, I(kb, MR)));
	for (int64_t h = MR / 2; h > 1; h /= 2) {
		kb_if(kb, kb_bin(kb, KO_GE, kb_bin(kb, KO_SUB, M, kb_get(kb, r)), I(kb, h)));
		gemm_rows(lw, kb, n, t, kb_get(kb, r), h);
		kb_set(kb, r, add(kb, kb_get(kb, r), I(kb, h)));
		close_to(kb, d);
	}
	i = kb_get(kb, kb_for(kb, "i", kb_get(kb, r), M, KF_PARALLEL));
	gemm_rows(lw, kb, n, t, i, 1);
	close_to(kb, d);
}

/* The core for other lowerings (passes/gemm.h). */
int64_t
lower_gemm_nr(Lower *lw, KB *kb, int64_t M)
{
	int64_t MR, NR;

	return gemm_nr(lw, kb, M, &MR, &NR);
}

int
lower_gemm_cpu(const Lower *lw)
{
	return gemm_cpu(lw);
}

int
lower_gemm_pack(Lower *lw, Node *n, int k, int64_t K, int64_t N, int64_t rs, int64_t cs,
                int64_t nr, int pad, int *out, int64_t *last)
{
	return gemm_pack_const(lw, n, k, K, N, rs, cs, nr, pad, out, last);
}

void
lower_gemm_blocked(Lower *lw, KB *kb, GT *t)
{
	gemm_blocked(lw, kb, NULL, t);
}

/* ---- the GPU matmul template -------------------------------------------- *
 *
 * For targets with blocks of threads and matrix-tile ops (Target.mma_tiles),
 * MatMul and Gemm become one kernel tiled for the GPU:
 *
 *   for blk (batch x M/BM x N/BN blocks) block.x:
 *     for tid (GT_THREADS = 4 subgroups) thread.x:
 *       subgroup w owns the 16 x 16 part (w/2*16, w%2*16) of the 32 x 32
 *       block tile: two accumulator fragments of the tile shape (m16n8)
 *       for each BK = 16 slice of K:
 *         stage A (BM x BK) and B (BK x BN) in shared memory: cp.async of
 *         16 bytes per thread where rows are contiguous and every extent
 *         divides (then cpwait), else plain loads with out-of-range
 *         elements zero (clamped indices, so no load is out of bounds)
 *         barrier
 *         tileload a, b; tilemma c += a * b  (k-steps of the tile shape)
 *         barrier            (the stage is overwritten next)
 *       tilestore the accumulators to a shared C tile; barrier
 *       each thread writes its elements: Y = alpha * C + beta * bias
 *
 * A and B of 16-bit elements (f16, bf16) where M and N are multiples of
 * 128, K of 32, and the rows contiguous and 16-byte aligned take a larger
 * form, mma(128,128,32) (gemm_gpu_big below): four subgroups of 64 x 64,
 * two stages of shared memory filled by cp.async while the other is
 * computed on.
 *
 * The tile op's f32 accumulation in k order is the C lowering's order.
 * A and B both f16 use the m16n8k16 f16 shape, both bf16 the m16n8k16
 * bf16 shape, both f32 the m16n8k8 f32
 * shape (full f32 products: no TF32 rounding unless asked for, which
 * nothing does yet); a fused epilogue runs on each element as its thread
 * writes it; anything else or a target without tiles falls back to the
 * blocked lowering that schedule_gpu maps onto blocks and threads.
 */
#define GT_BM 32
#define GT_BN 32
#define GT_BK 16
#define GT_THREADS 128

/* lo <= v < hi ? v : clamp, as select (both arms in bounds) */
static KRef
clampi(KB *kb, KRef v, int64_t hi)
{
	return kb_select(kb, kb_bin(kb, KO_LT, v, I(kb, hi)), v, I(kb, hi > 0 ? hi - 1 : 0));
}

/* Stage rows x cols of matrix m (row r0, column c0 of the logical
 * matrix of rows x cols = R x C) into shared buffer sh (row-major, cols
 * wide) by the block's threads; zero outside R x C. */
static void
gemm_gpu_stage(KB *kb, int sh, const Mat *m, KRef off, KRef r0, KRef c0,
               int64_t rows, int64_t cols, int64_t R, int64_t C, int tid,
               int async, int lanes)
{
	int d = kb->depth, dt = kb->k->buf[sh].dtype;
	int64_t chunk = async ? lanes : 1, n = rows * cols / chunk;
	KRef e, idx, r, c, i, j, src;

	e = loop(kb, "e", (n + GT_THREADS - 1) / GT_THREADS, 0);
	idx = add(kb, mul(kb, e, I(kb, GT_THREADS)), kb_get(kb, tid));
	if (n % GT_THREADS)
		kb_if(kb, kb_bin(kb, KO_LT, idx, I(kb, n)));
	idx = mul(kb, idx, I(kb, chunk));
	r = kb_bin(kb, KO_DIV, idx, I(kb, cols));
	c = kb_bin(kb, KO_MOD, idx, I(kb, cols));
	i = add(kb, r0, r);
	j = add(kb, c0, c);
	if (async) {
		src = add(kb, off, add(kb, mul(kb, i, I(kb, m->rs)), j));
		kb_cpasync(kb, sh, idx, m->buf, src, lanes);
	} else {
		KRef in = kb_bin(kb, KO_AND, kb_bin(kb, KO_LT, i, I(kb, R)),
		                 kb_bin(kb, KO_LT, j, I(kb, C)));
		src = add(kb, off, add(kb, mul(kb, clampi(kb, i, R), I(kb, m->rs)),
		                       mul(kb, clampi(kb, j, C), I(kb, m->cs))));
		(void)dt;
		kb_store(kb, sh, idx, kb_select(kb, in, kb_load(kb, m->buf, src),
		                                cnum(kb, DT_F32, 0)));
	}
	close_to(kb, d);
}

/* Where batch item bt (an index expression) of a batched GEMM starts in
 * A, B (batch dims bat[nb], their batch strides as, bs) and Y. */
static void
gemm_batch_offsets(KB *kb, const GT *t, KRef bt, int nb, const int64_t *bat,
                   const int64_t *as, const int64_t *bs, KRef *aoff, KRef *boff,
                   KRef *yoff)
{
	*aoff = t->a.off;
	*boff = t->b.off;
	*yoff = add(kb, t->yoff, mul(kb, bt, I(kb, t->M * t->N)));
	for (int i = nb - 1, q = 1; i >= 0; q *= (int)bat[i], i--) {
		KRef v = kb_bin(kb, KO_MOD, kb_bin(kb, KO_DIV, bt, I(kb, q)), I(kb, bat[i]));
		*aoff = add(kb, *aoff, mul(kb, v, I(kb, as[i])));
		*boff = add(kb, *boff, mul(kb, v, I(kb, bs[i])));
	}
}

/*
 * The large form for 16-bit A and B, mma(128,BN,BK,WM,WN,S) (GB below;
 * default 128,128,32,2,2,4):
 *
 *   for blk block.x: (bm, bn) in groups of GB_GROUP block rows, so the
 *                    blocks running together share panels of A and B in L2
 *     for tid (WM x WN subgroups, each a (128/WM) x (BN/WN) part) thread.x:
 *       its accumulator tiles (m16n8, at most 64) = 0
 *       stages 0 .. S-2 <- the first slices of A (128 x BK) and B (BK x BN)
 *                          (cp.async, 16 bytes a copy; a group each)
 *       for kt < K/BK:
 *         cpwait.(S-2): slice kt has landed (S-2 younger ones may not)
 *         barrier: it is visible, and every subgroup is done with kt-1
 *         stage (kt+S-1)%S <- slice kt+S-1 (the one kt-1 used)
 *         for ks < BK/16: tileload its a and b tiles; tilemma each pair
 *       for each 16 x 32 band of the subgroup's part:
 *         tilestore its 4 tiles to the subgroup's staging (two halves,
 *         band by band); barrier
 *         each lane writes a row's element, row by row:
 *         Y = alpha*C + beta*bias, then the fused epilogue
 *
 * The shared rows are padded by 8 elements (16 bytes): the 8 rows one
 * ldmatrix reads then start in 8 different groups of 4 banks.  Over 48 KB
 * of shared memory, the PTX renderer asks for it dynamically
 * (Target.shared_optin).
 */
#define GB_BM 128
#define GB_GROUP 8

/* A shape of the large form: block tile GB_BM x bn, wm x wn subgroups,
 * each a (GB_BM/wm) x (bn/wn) part (mma(128,BN,32,WM,WN)). */
typedef struct GB {
	int64_t bn, bk;
	int wm, wn, st;     /* st: stages of shared memory (2 to 4) */
} GB;

static int
gb_threads(const GB *g)
{
	return g->wm * g->wn * KT_SUBGROUP;
}

/* Can g be built (parts of whole m16n8 tiles, 32-column bands for the
 * epilogue, at most 64 accumulator tiles, block size and shared memory
 * within the target's)? */
static int
gb_ok(const GB *g, const Target *tg, int adt)
{
	int64_t pm, pn, sh, gsa = g->bk + 8;
	int64_t lim = tg->shared_optin > tg->shared_bytes ? tg->shared_optin : tg->shared_bytes;

	if (g->wm < 1 || g->wn < 1 || g->bn < 32 || g->bn > 256 || g->bn % 32 ||
	    (g->bk != 32 && g->bk != 64) || g->st < 2 || g->st > 4)
		return 0;
	pm = GB_BM / g->wm;
	pn = g->bn / g->wn;
	sh = g->st * (GB_BM * gsa + g->bk * (g->bn + 8)) * (int64_t)dtype_size(adt) +
	     2 * g->wm * g->wn * 16 * 32 * 4;
	return GB_BM % g->wm == 0 && g->bn % g->wn == 0 && pm % 16 == 0 && pn % 32 == 0 &&
	       (pm / 16) * (pn / 8) <= 64 && gb_threads(g) <= tg->max_block_threads &&
	       GB_BM * g->bk / 8 % gb_threads(g) == 0 && g->bk * g->bn / 8 % gb_threads(g) == 0 &&
	       sh <= lim;
}

/* e = kb_get(v) after v = x: a per-thread value computed once */
static KRef
once(KB *kb, KRef x, const char *name)
{
	int v = kb_var(kb, kb_dtype(kb->k, x), name);

	kb_set(kb, v, x);
	return kb_get(kb, v);
}

/* i % s for an index i >= 0 (a mask where s is a power of two) */
static KRef
stage_of(KB *kb, KRef i, int s)
{
	return s & (s - 1) ? kb_bin(kb, KO_MOD, i, I(kb, s))
	                   : kb_bin(kb, KO_BAND, i, I(kb, s - 1));
}

/* Stage `stage` of A (GB_BM x g->bk from column k0) and B (g->bk x bn
 * from row k0) by 16-byte async copies: thread tid copies chunks tid +
 * e*T, whose first source and destination (e = 0, k0 = 0, stage 0) are
 * as0, ad0, bs0, bd0. */
static void
gemm_big_stage(KB *kb, const GT *t, const GB *g, int sa, int sb, KRef stage, KRef k0,
               KRef as0, KRef ad0, KRef bs0, KRef bd0)
{
	int T = gb_threads(g);
	int64_t bn = g->bn, sbw = bn + 8, ar = T / (g->bk / 8), br = T / (bn / 8), gsa = g->bk + 8;

	for (int e = 0; e < GB_BM * g->bk / 8 / T; e++)
		kb_cpasync(kb, sa, add(kb, ad0, add(kb, mul(kb, stage, I(kb, GB_BM * gsa)),
		                                   I(kb, e * ar * gsa))),
		           t->a.buf, add(kb, as0, add(kb, k0, I(kb, e * ar * t->a.rs))), 8);
	for (int e = 0; e < g->bk * bn / 8 / T; e++)
		kb_cpasync(kb, sb, add(kb, bd0, add(kb, mul(kb, stage, I(kb, g->bk * sbw)),
		                                   I(kb, e * br * sbw))),
		           t->b.buf, add(kb, bs0, add(kb, mul(kb, k0, I(kb, t->b.rs)),
		                                      I(kb, e * br * t->b.rs))), 8);
}

/* Block blk's batch item *bt and the first row *bm and column *bn of its
 * BM x BN tile: blocks in groups of GB_GROUP block rows, so the blocks
 * running together share panels of A and B in L2. */
static void
gemm_block_origin(KB *kb, KRef blk, int64_t tm, int64_t tn, int64_t BM, int64_t BN,
                  KRef *bt, KRef *bm, KRef *bn)
{
	KRef rem, grp, first, gs, within;

	*bt = kb_bin(kb, KO_DIV, blk, I(kb, tm * tn));
	rem = kb_bin(kb, KO_MOD, blk, I(kb, tm * tn));
	grp = kb_bin(kb, KO_DIV, rem, I(kb, GB_GROUP * tn));
	first = mul(kb, grp, I(kb, GB_GROUP));
	gs = kb_bin(kb, KO_MIN, kb_bin(kb, KO_SUB, I(kb, tm), first), I(kb, GB_GROUP));
	within = kb_bin(kb, KO_MOD, rem, I(kb, GB_GROUP * tn));
	*bm = once(kb, mul(kb, add(kb, first, kb_bin(kb, KO_MOD, within, gs)), I(kb, BM)), "bm");
	*bn = once(kb, mul(kb, kb_bin(kb, KO_DIV, within, gs), I(kb, BN)), "bn");
}

/* The epilogue of the tile forms: subgroup w's accumulator tiles fc
 * (mi_n x ni_n m16n8 tiles at rows wm, columns wn of the block tile at
 * bm, bn) through its 16 x 32 staging area (two halves, band by band:
 * one barrier a band) to Y, each lane a column, row by row:
 * Y = alpha*C + beta*bias, then the fused epilogue. */
static void
gemm_tiles_out(Lower *lw, KB *kb, Node *n, const GT *t, int shape, const int *fc, int mi_n,
               int ni_n, int se, int T, KRef w, KRef ln, KRef bm, KRef bn, KRef wm, KRef wn,
               KRef yoff)
{
	KRef sw = once(kb, mul(kb, w, I(kb, 16 * 32)), "sw");
	KRef wb = once(kb, add(kb, bn, add(kb, wn, ln)), "jb");

	/* bands alternate between two staging halves: one barrier a band
	 * (band b+2 overwrites b's half only after band b+1's barrier, which
	 * every thread reaches after reading b).  H200, BERT-base layer bf16:
	 * QK^T (K 64) 0.116 -> 0.113 ms; the 16 rows unrolled as well: 0.093,
	 * but the GELU epilogue's FFN 0.187 -> 0.210 and 8192^3 3.80 -> 4.17
	 * (its code 16 times over), four at a time: no gain */
	for (int mi = 0, band = 0; mi < mi_n; mi++)
		for (int nh = 0; nh < ni_n / 4; nh++, band++) {
			int de;
			KRef e, r, i, j, v, yi, h = add(kb, sw, I(kb, (band & 1) * (T / KT_SUBGROUP) * 16 * 32));
			for (int q = 0; q < 4; q++)
				kb_tstore(kb, shape, se, add(kb, h, I(kb, q * 8)), I(kb, 32),
				          fc[mi * ni_n + nh * 4 + q]);
			kb_barrier(kb);
			de = kb->depth;
			r = loop(kb, "e", 16, 0);
			e = add(kb, mul(kb, r, I(kb, 32)), ln);
			i = add(kb, bm, add(kb, wm, add(kb, r, I(kb, mi * 16))));
			j = add(kb, wb, I(kb, nh * 32));
			v = gemm_out(kb, DT_F32, t, kb_load(kb, se, add(kb, h, e)), i, j);
			yi = add(kb, yoff, add(kb, mul(kb, i, I(kb, t->N)), j));
			kb_store(kb, t->y, yi, v);
			if (lw->epi && &lw->g->node[lw->epi->anchor] == n)
				lower_epi_run(lw, kb, n, t->y, yi, 1);
			close_to(kb, de);
		}
}

static void
gemm_gpu_big(Lower *lw, KB *kb, Node *n, const GT *t, int shape, const GB *g, int nb,
             const int64_t *bat, const int64_t *as, const int64_t *bs)
{
	const KKernel *k = kb->k;
	int adt = k->buf[t->a.buf].dtype, d = kb->depth, T = gb_threads(g), S = g->st;
	int64_t gbn = g->bn, tm = t->M / GB_BM, tn = t->N / gbn, nk = t->K / g->bk;
	int64_t sbw = gbn + 8, pm = GB_BM / g->wm, pn = gbn / g->wn, gsa = g->bk + 8;
	int64_t nblk = prod(nb, bat) * tm * tn;
	int mi_n = (int)(pm / 16), ni_n = (int)(pn / 8);
	int sa, sb, se, fa[8], fb[32], fc[64], blk, tid;
	KRef bt, bm, bn, aoff, boff, yoff, w, wm, wn, ln;
	KRef tv, as0, ad0, bs0, bd0, wa;

	sa = kb_buf(kb, adt, S * GB_BM * gsa, -1, KS_SHARED, KA_RW);
	sb = kb_buf(kb, adt, S * g->bk * sbw, -1, KS_SHARED, KA_RW);
	se = kb_buf(kb, DT_F32, 2 * T / KT_SUBGROUP * 16 * 32, -1, KS_SHARED, KA_RW);
	for (int i = 0; i < mi_n; i++)
		fa[i] = kb_buf(kb, adt, ktile_elems(shape, KTR_A), -1, KS_FRAG, KA_RW);
	for (int i = 0; i < ni_n; i++)
		fb[i] = kb_buf(kb, adt, ktile_elems(shape, KTR_B), -1, KS_FRAG, KA_RW);
	for (int i = 0; i < mi_n * ni_n; i++)
		fc[i] = kb_buf(kb, DT_F32, ktile_elems(shape, KTR_C), -1, KS_FRAG, KA_RW);

	blk = kb_for(kb, "blk", I(kb, 0), I(kb, nblk), KF_BLOCK_X);
	tid = kb_for(kb, "tid", I(kb, 0), I(kb, T), KF_THREAD_X);
	tv = kb_get(kb, tid);
	gemm_block_origin(kb, kb_get(kb, blk), tm, tn, GB_BM, gbn, &bt, &bm, &bn);
	gemm_batch_offsets(kb, t, bt, nb, bat, as, bs, &aoff, &boff, &yoff);
	yoff = once(kb, yoff, "yoff");
	w = kb_bin(kb, KO_DIV, tv, I(kb, KT_SUBGROUP));
	ln = once(kb, kb_bin(kb, KO_MOD, tv, I(kb, KT_SUBGROUP)), "ln");
	wm = once(kb, mul(kb, kb_bin(kb, KO_DIV, w, I(kb, g->wn)), I(kb, pm)), "wm");
	wn = once(kb, mul(kb, kb_bin(kb, KO_MOD, w, I(kb, g->wn)), I(kb, pn)), "wn");
	wa = once(kb, mul(kb, wm, I(kb, gsa)), "wa");
	/* the thread's first chunk of A: row tid/4, column (tid%4)*8; of B:
	 * row tid/(bn/8), column (tid%(bn/8))*8 */
	{
		KRef ar = kb_bin(kb, KO_DIV, tv, I(kb, g->bk / 8));
		KRef ac = mul(kb, kb_bin(kb, KO_MOD, tv, I(kb, g->bk / 8)), I(kb, 8));
		KRef br = kb_bin(kb, KO_DIV, tv, I(kb, gbn / 8));
		KRef bc = mul(kb, kb_bin(kb, KO_MOD, tv, I(kb, gbn / 8)), I(kb, 8));
		as0 = once(kb, add(kb, aoff, add(kb, mul(kb, add(kb, bm, ar), I(kb, t->a.rs)), ac)), "as0");
		ad0 = once(kb, add(kb, mul(kb, ar, I(kb, gsa)), ac), "ad0");
		bs0 = once(kb, add(kb, boff, add(kb, mul(kb, br, I(kb, t->b.rs)), add(kb, bn, bc))), "bs0");
		bd0 = once(kb, add(kb, mul(kb, br, I(kb, sbw)), bc), "bd0");
	}
	for (int i = 0; i < mi_n * ni_n; i++)
		kb_tfill(kb, shape, fc[i], cnum(kb, DT_F32, 0));
	/* the prologue: slices 0 .. S-2, a group each, empty past the last
	 * slice so that the loop's waits count right (the last group is
	 * closed by the loop's first wait) */
	for (int s = 0; s < S - 1; s++) {
		if (s < nk)
			gemm_big_stage(kb, t, g, sa, sb, I(kb, s), I(kb, s * g->bk), as0, ad0, bs0, bd0);
		if (s < S - 2)
			kb_cpwait_n(kb, S - 1);   /* only closes the group */
	}
	{
		int dk = kb->depth;
		KRef kt = loop(kb, "kt", nk, 0), cur, kn, ab, bb;
		kb_cpwait_n(kb, S - 2);
		kb_barrier(kb);
		cur = once(kb, stage_of(kb, kt, S), "cur");
		if (nk > S - 1) {
			int di = kb->depth;
			kn = add(kb, kt, I(kb, S - 1));
			kb_if(kb, kb_bin(kb, KO_LT, kn, I(kb, nk)));
			gemm_big_stage(kb, t, g, sa, sb, stage_of(kb, kn, S),
			               mul(kb, kn, I(kb, g->bk)), as0, ad0, bs0, bd0);
			close_to(kb, di);
		}
		/* the stage's tiles at constant offsets from two values (the
		 * PTX renderer folds such an offset into ldmatrix's address) */
		ab = once(kb, add(kb, mul(kb, cur, I(kb, GB_BM * gsa)), wa), "ab");
		bb = once(kb, add(kb, mul(kb, cur, I(kb, g->bk * sbw)), wn), "bb");
		for (int ks = 0; ks < g->bk / 16; ks++) {
			for (int mi = 0; mi < mi_n; mi++)
				kb_tload(kb, shape, KTR_A, fa[mi], sa,
				         add(kb, ab, I(kb, ks * 16 + mi * 16 * gsa)), I(kb, gsa));
			for (int ni = 0; ni < ni_n; ni++)
				kb_tload(kb, shape, KTR_B, fb[ni], sb,
				         add(kb, bb, I(kb, ks * 16 * sbw + ni * 8)), I(kb, sbw));
			for (int mi = 0; mi < mi_n; mi++)
				for (int ni = 0; ni < ni_n; ni++)
					kb_tmma(kb, shape, fc[mi * ni_n + ni], fa[mi], fb[ni]);
		}
		close_to(kb, dk);
	}
	kb_cpwait(kb);   /* the empty groups of the last slices */
	kb_barrier(kb);
	gemm_tiles_out(lw, kb, n, t, shape, fc, mi_n, ni_n, se, T, w, ln, bm, bn, wm, wn, yoff);
	close_to(kb, d);
	kb->k->grid = arena_printf(lw->prog->arena, "matmul blocks=%lld threads=%d "
	                           "tile=%dx%lldx%lld subgroups=%dx%d mma=%s cp.async %d stages",
	                           (long long)nblk, T, GB_BM, (long long)gbn, (long long)g->bk, g->wm,
	                           g->wn, ktile_info(shape)->name, S);
}

/*
 * The warpgroup form for 16-bit A and B on targets with warpgroup tile
 * shapes (sm_90a wgmma), wgmma(BM,BN,S):
 *
 *   for blk block.x: (bm, bn) as the large form's
 *     for tid (BM/64 warpgroups of 4 subgroups) thread.x:
 *       warpgroup q owns rows 64q .. 64q+63 of the BM x BN block tile;
 *       its subgroup 4q+i rows 16i .. 16i+15 as BN/8 m16n8 tiles
 *       stages 0 .. P-1 <- the first K slices of 64: A (BM x 64) and B
 *                          (64 x BN), cp.async of 16 bytes, swizzled
 *                          (P = S-2 slices ahead, or S-1 with 2 stages)
 *       for kt < K/64:
 *         cpwait.(P-1); barrier   (the renderer fences the async proxy)
 *         stage (kt+P)%S <- slice kt+P (the stage batch kt+P-S read:
 *                           complete, see wgwait)
 *         for ks < 4: wgmma C += A[64q.., 16ks..] * B[16ks.., 0..BN)
 *         wgwait.1  (batch kt stays in flight while the next iteration
 *                    waits for its slice and issues the loads; wgwait
 *                    with 2 stages)
 *       wgwait; the large form's epilogue, one 16-row band of tiles a
 *       subgroup
 *
 * Shared memory holds A's rows of 64 elements (128 bytes) and B by groups
 * of 64 columns (64 rows of 128 bytes each, 8 KB apart) in the 128-byte
 * swizzle (kir.h, KS_WGMMA): a 16-byte chunk c of row r goes to chunk
 * c ^ (r % 8), so the 8 rows a tile op reads fall in different banks,
 * and wgmma reads them through its descriptors.
 */
#define WG_BK 64

typedef struct WG {
	int64_t bm, bn;
	int st;
} WG;

static int
wg_ok(const WG *g, const Target *tg)
{
	int64_t T = g->bm / 64 * 128, lim = tg->shared_optin > tg->shared_bytes ?
	                                      tg->shared_optin : tg->shared_bytes;
	int64_t sh = g->st * (g->bm + g->bn) * WG_BK * 2 + 2 * (T / 32) * 16 * 32 * 4 + 3 * 1024;

	return (g->bm == 64 || g->bm == 128) &&
	       (g->bn == 64 || g->bn == 128 || g->bn == 256) && g->st >= 2 && g->st <= 4 &&
	       T <= tg->max_block_threads && sh <= lim;
}

static int
wg_shape(int adt, int64_t bn)
{
	int s = bn == 64 ? 0 : bn == 128 ? 1 : 2;

	return (adt == DT_BF16 ? KT_WG64N64_BF16 : KT_WG64N64_F16) + s;
}

/* the 128-byte swizzle of element index x (16-bit elements) */
static KRef
swz(KB *kb, KRef x)
{
	KRef r8 = kb_bin(kb, KO_BAND, kb_bin(kb, KO_DIV, x, I(kb, 64)), I(kb, 7));
	return kb_bin(kb, KO_BXOR, x, mul(kb, r8, I(kb, 8)));
}

static void
gemm_gpu_wg(Lower *lw, KB *kb, Node *n, const GT *t, const WG *g, int nb,
            const int64_t *bat, const int64_t *as, const int64_t *bs)
{
	const KKernel *k = kb->k;
	int adt = k->buf[t->a.buf].dtype, d = kb->depth, S = g->st;
	int shape = wg_shape(adt, g->bn), sub = ktile_info(shape)->sub;
	int T = (int)(g->bm / 64 * 128), ni_n = (int)(g->bn / 8);
	int64_t tm = t->M / g->bm, tn = t->N / g->bn, nk = t->K / WG_BK;
	int64_t nblk = prod(nb, bat) * tm * tn, sta = g->bm * WG_BK, stb = WG_BK * g->bn;
	int na = (int)(sta / 8 / T), nbc = (int)(stb / 8 / T);
	int sa, sb, se, fc[32], blk, tid;
	/* one batch of wgmma in flight while the next is issued when there
	 * are 3 or more stages: slices P = S-2 ahead (the stage reloaded is
	 * the one batch kt-2 read, complete at kt-1's wgwait.1) */
	int keep = S >= 3, P = S - 1 - keep;
	KRef bt, bm, bn, aoff, boff, yoff, tv, w, ln, q, wm, asrc[8], adst[8], bsrc[16], bdst[16];

	sa = kb_buf(kb, adt, S * sta, -1, KS_SHARED, KA_RW);
	sb = kb_buf(kb, adt, S * stb, -1, KS_SHARED, KA_RW);
	se = kb_buf(kb, DT_F32, 2 * T / KT_SUBGROUP * 16 * 32, -1, KS_SHARED, KA_RW);
	for (int i = 0; i < ni_n; i++)
		fc[i] = kb_buf(kb, DT_F32, ktile_elems(sub, KTR_C), -1, KS_FRAG, KA_RW);

	blk = kb_for(kb, "blk", I(kb, 0), I(kb, nblk), KF_BLOCK_X);
	tid = kb_for(kb, "tid", I(kb, 0), I(kb, T), KF_THREAD_X);
	tv = kb_get(kb, tid);
	gemm_block_origin(kb, kb_get(kb, blk), tm, tn, g->bm, g->bn, &bt, &bm, &bn);
	gemm_batch_offsets(kb, t, bt, nb, bat, as, bs, &aoff, &boff, &yoff);
	yoff = once(kb, yoff, "yoff");
	w = kb_bin(kb, KO_DIV, tv, I(kb, KT_SUBGROUP));
	ln = once(kb, kb_bin(kb, KO_MOD, tv, I(kb, KT_SUBGROUP)), "ln");
	q = once(kb, kb_bin(kb, KO_DIV, tv, I(kb, 128)), "wq");
	wm = once(kb, add(kb, mul(kb, q, I(kb, 64)),
	                  mul(kb, kb_bin(kb, KO_MOD, w, I(kb, 4)), I(kb, 16))), "wm");
	/* each thread's chunks: A's chunk e*T + tid is row /8, 16-byte
	 * column %8; B's is row / (BN/8), column % (BN/8) */
	for (int e = 0; e < na; e++) {
		KRef id = add(kb, tv, I(kb, e * T));
		KRef r = kb_bin(kb, KO_DIV, id, I(kb, 8)), c = mul(kb, kb_bin(kb, KO_MOD, id, I(kb, 8)), I(kb, 8));
		asrc[e] = once(kb, add(kb, aoff, add(kb, mul(kb, add(kb, bm, r), I(kb, t->a.rs)), c)), "as");
		adst[e] = once(kb, swz(kb, add(kb, mul(kb, r, I(kb, 64)), c)), "ad");
	}
	for (int e = 0; e < nbc; e++) {
		KRef id = add(kb, tv, I(kb, e * T));
		KRef r = kb_bin(kb, KO_DIV, id, I(kb, g->bn / 8));
		KRef c = mul(kb, kb_bin(kb, KO_MOD, id, I(kb, g->bn / 8)), I(kb, 8));
		bsrc[e] = once(kb, add(kb, boff, add(kb, mul(kb, r, I(kb, t->b.rs)), add(kb, bn, c))), "bs");
		bdst[e] = once(kb, add(kb, mul(kb, kb_bin(kb, KO_DIV, c, I(kb, 64)), I(kb, 64 * WG_BK)),
		                       swz(kb, add(kb, mul(kb, r, I(kb, 64)),
		                                   kb_bin(kb, KO_MOD, c, I(kb, 64))))), "bd");
	}
	for (int i = 0; i < ni_n; i++)
		kb_tfill(kb, sub, fc[i], cnum(kb, DT_F32, 0));
	{
		int dk;
		KRef kt, cur, kn;
#define WG_STAGE(stage, slice) do { \
		KRef st_ = (stage), k0_ = mul(kb, (slice), I(kb, WG_BK)); \
		for (int e = 0; e < na; e++) \
			kb_cpasync(kb, sa, add(kb, mul(kb, st_, I(kb, sta)), adst[e]), t->a.buf, \
			           add(kb, asrc[e], k0_), 8); \
		for (int e = 0; e < nbc; e++) \
			kb_cpasync(kb, sb, add(kb, mul(kb, st_, I(kb, stb)), bdst[e]), t->b.buf, \
			           add(kb, bsrc[e], mul(kb, k0_, I(kb, t->b.rs))), 8); \
	} while (0)
		for (int s = 0; s < P; s++) {
			if (s < nk)
				WG_STAGE(I(kb, s), I(kb, s));
			if (s < P - 1)
				kb_cpwait_n(kb, 7);   /* only closes the group */
		}
		dk = kb->depth;
		kt = loop(kb, "kt", nk, 0);
		kb_cpwait_n(kb, P - 1);
		kb_barrier(kb);
		if (nk > P) {
			int di = kb->depth;
			kn = add(kb, kt, I(kb, P));
			kb_if(kb, kb_bin(kb, KO_LT, kn, I(kb, nk)));
			WG_STAGE(stage_of(kb, kn, S), kn);
			close_to(kb, di);
		}
#undef WG_STAGE
		cur = once(kb, stage_of(kb, kt, S), "cur");
		{
			KRef ab = once(kb, add(kb, mul(kb, cur, I(kb, sta)), mul(kb, q, I(kb, 64 * 64))), "ab");
			KRef bb = once(kb, mul(kb, cur, I(kb, stb)), "bb");
			for (int ks = 0; ks < WG_BK / 16; ks++)
				kb_wgmma(kb, shape, fc[0], sa, add(kb, ab, I(kb, ks * 16)), sb,
				         add(kb, bb, I(kb, ks * 16 * 64)), I(kb, 64 * WG_BK));
			kb_wgwait(kb, keep);
		}
		close_to(kb, dk);
	}
	kb_wgwait(kb, 0);
	kb_cpwait(kb);   /* the empty groups of the last slices */
	kb_barrier(kb);
	gemm_tiles_out(lw, kb, n, t, sub, fc, 1, ni_n, se, T, w, ln, bm, bn, wm, I(kb, 0), yoff);
	close_to(kb, d);
	kb->k->grid = arena_printf(lw->prog->arena, "matmul blocks=%lld threads=%d "
	                           "tile=%lldx%lldx%d warpgroups=%d wgmma=%s cp.async %d stages, "
	                           "%d batch in flight",
	                           (long long)nblk, T, (long long)g->bm, (long long)g->bn, WG_BK,
	                           T / 128, ktile_info(shape)->name, S, keep);
}

static int
gemm_gpu(Lower *lw, KB *kb, Node *n, const GT *t, int nb, const int64_t *bat,
         const int64_t *as, const int64_t *bs)
{
	const Target *tg = target_or_default(lw->target);
	const KKernel *k = kb->k;
	int adt = k->buf[t->a.buf].dtype, bdt = k->buf[t->b.buf].dtype;
	int shape, async, big, lanes, blk, tid, sa, sb, sc, fa, fb, fc[2], d = kb->depth;
	int64_t nbat = prod(nb, bat), tm, tn, nblk, tk;
	GB gb;
	const KTileInfo *ti;
	KStep st;
	KRef bt, rem, bm, bn, aoff, boff, yoff, w, wm, wn, k0;

	if (tg->max_block_threads < GT_THREADS || !tg->mma_tiles || t->dt != DT_F32 ||
	    t->M <= 0 || t->N <= 0 ||
	    adt != bdt || tg->subgroup != KT_SUBGROUP)
		return 0;
	shape = adt == DT_F16 ? KT_M16N8K16_F16 : adt == DT_BF16 ? KT_M16N8K16_BF16 :
	        adt == DT_F32 ? KT_M16N8K8_F32 : 0;
	if (!shape || !(tg->mma_tiles & (1u << shape)))
		return 0;
	ti = ktile_info(shape);
	tk = ti->k;
	if ((GT_BM * GT_BK + GT_BK * GT_BN) * (int64_t)dtype_size(adt) +
	    GT_BM * GT_BN * 4 > tg->shared_bytes)
		return 0;
	tm = (t->M + GT_BM - 1) / GT_BM;
	tn = (t->N + GT_BN - 1) / GT_BN;
	if (nbat > ((int64_t)1 << 31) / tm / tn)
		return 0;
	nblk = nbat * tm * tn;
	/* 16-byte async copies: whole tiles, contiguous rows, aligned starts */
	lanes = 16 / dtype_size(adt);
	async = t->M % GT_BM == 0 && t->N % GT_BN == 0 && t->K % GT_BK == 0 &&
	        t->a.cs == 1 && t->b.cs == 1 && t->a.rs % lanes == 0 &&
	        t->b.rs % lanes == 0 && kb_is_const_i(k, t->a.off, &tk) && tk == 0 &&
	        kb_is_const_i(k, t->b.off, &tk) && tk == 0;
	for (int i = 0; i < nb; i++)
		async = async && as[i] % lanes == 0 && bs[i] % lanes == 0;
	async = async && !t->a.pan && !t->b.pan && !t->a.tab && !t->b.tab;
	/* the large form: 128 x 128 blocks of 2 x 2 subgroups (the fastest
	 * on the H200 of those tried: docs/BENCHMARKS.md); narrower blocks
	 * where N is not a multiple of 128 (attention's 64-wide heads) */
	gb = (GB){ 128, 32, 2, 2, 4 };
	while (gb.bn > 32 && t->N % gb.bn)
		gb.bn /= 2;
	gb.wn = gb.bn >= 64 ? 2 : 1;
	big = async && dtype_size(adt) == 2 && t->M % GB_BM == 0 && t->N % gb.bn == 0 &&
	      t->K % gb.bk == 0 && gb_ok(&gb, tg, adt);
	tk = ti->k;
	/* the template's schedule steps: mma(BM,BN,BK) (only 32,32,16 is
	 * built) or nomma (the blocked lowering instead), async or sync
	 * staging (async only where the copies are whole and aligned); a
	 * step asked for that cannot be built is recorded as what is built,
	 * which sched_check_want reports */
	if (big) {
		KStep def = kstep_make(KST_MMA, 3, GB_BM, (int)gb.bn, (int)gb.bk);
		WG dw = { tg->tune.wg_bm, tg->tune.wg_bn, tg->tune.wg_stages };
		def.narg = 6;
		def.arg[3] = gb.wm;
		def.arg[4] = gb.wn;
		def.arg[5] = gb.st;
		/* the target's warpgroup form by default where it fits */
		if (dw.bm && wg_ok(&dw, tg) && (tg->mma_tiles & (1u << wg_shape(adt, dw.bn))) &&
		    t->M % dw.bm == 0 && t->N % dw.bn == 0 && t->K % WG_BK == 0)
			def = kstep_make(KST_WGMMA, 3, (int)dw.bm, (int)dw.bn, dw.st);
		st = lower_step(lw, kb, def);
	} else {
		st = lower_step(lw, kb, kstep_make(KST_MMA, 3, GT_BM, GT_BN, GT_BK));
	}
	if (st.kind == KST_NOMMA)
		return 0;
	/* wgmma(BM,BN,S) asked for: built where the warpgroup form fits */
	if (st.kind == KST_WGMMA) {
		WG wg = { st.arg[0], st.arg[1], st.arg[2] };
		if (async && dtype_size(adt) == 2 && wg_ok(&wg, tg) &&
		    (tg->mma_tiles & (1u << wg_shape(adt, wg.bn))) &&
		    t->M % wg.bm == 0 && t->N % wg.bn == 0 && t->K % WG_BK == 0) {
			st = lower_step(lw, kb, kstep_make(KST_ASYNC, 0, 0, 0, 0));
			if (st.kind != KST_ASYNC) {   /* built with async copies only */
				st = kstep_make(KST_ASYNC, 0, 0, 0, 0);
				kprog_step_put(lw->prog, kb->k, &st);
			}
			gemm_gpu_wg(lw, kb, n, t, &wg, nb, bat, as, bs);
			return 1;
		}
		/* recorded as what is built: sched_check_want reports it */
		st = big ? kstep_make(KST_MMA, 3, GB_BM, (int)gb.bn, (int)gb.bk)
		         : kstep_make(KST_MMA, 3, GT_BM, GT_BN, GT_BK);
		if (big) {
			st.narg = 6;
			st.arg[3] = gb.wm;
			st.arg[4] = gb.wn;
			st.arg[5] = gb.st;
		}
		kprog_step_put(lw->prog, kb->k, &st);
	}
	/* mma(128,BN,32,WM,WN) asked for: built where that shape fits */
	if (big && st.narg == 6 && st.arg[0] == GB_BM) {
		GB want = { st.arg[1], st.arg[2], st.arg[3], st.arg[4], st.arg[5] };
		if (t->N % want.bn == 0 && t->K % want.bk == 0 && gb_ok(&want, tg, adt))
			gb = want;
	}
	if (big && st.narg == 6 && st.arg[0] == GB_BM && st.arg[1] == gb.bn &&
	    st.arg[2] == gb.bk && st.arg[3] == gb.wm && st.arg[4] == gb.wn &&
	    st.arg[5] == gb.st) {
		st = lower_step(lw, kb, kstep_make(KST_ASYNC, 0, 0, 0, 0));
		if (st.kind != KST_ASYNC) {   /* built with async copies only */
			st = kstep_make(KST_ASYNC, 0, 0, 0, 0);
			kprog_step_put(lw->prog, kb->k, &st);
		}
		gemm_gpu_big(lw, kb, n, t, shape, &gb, nb, bat, as, bs);
		return 1;
	}
	if (st.arg[0] != GT_BM || st.arg[1] != GT_BN || st.arg[2] != GT_BK) {
		st = kstep_make(KST_MMA, 3, GT_BM, GT_BN, GT_BK);
		kprog_step_put(lw->prog, kb->k, &st);
	}
	st = lower_step(lw, kb, kstep_make(async ? KST_ASYNC : KST_SYNC, 0, 0, 0, 0));
	if (st.kind == KST_ASYNC && !async) {
		st = kstep_make(KST_SYNC, 0, 0, 0, 0);
		kprog_step_put(lw->prog, kb->k, &st);
	}
	async = st.kind == KST_ASYNC;

	sa = kb_buf(kb, adt, GT_BM * GT_BK, -1, KS_SHARED, KA_RW);
	sb = kb_buf(kb, adt, GT_BK * GT_BN, -1, KS_SHARED, KA_RW);
	sc = kb_buf(kb, DT_F32, GT_BM * GT_BN, -1, KS_SHARED, KA_RW);
	fa = kb_buf(kb, adt, ktile_elems(shape, KTR_A), -1, KS_FRAG, KA_RW);
	fb = kb_buf(kb, adt, ktile_elems(shape, KTR_B), -1, KS_FRAG, KA_RW);
	fc[0] = kb_buf(kb, DT_F32, ktile_elems(shape, KTR_C), -1, KS_FRAG, KA_RW);
	fc[1] = kb_buf(kb, DT_F32, ktile_elems(shape, KTR_C), -1, KS_FRAG, KA_RW);

	blk = kb_for(kb, "blk", I(kb, 0), I(kb, nblk), KF_BLOCK_X);
	tid = kb_for(kb, "tid", I(kb, 0), I(kb, GT_THREADS), KF_THREAD_X);
	bt = kb_bin(kb, KO_DIV, kb_get(kb, blk), I(kb, tm * tn));
	rem = kb_bin(kb, KO_MOD, kb_get(kb, blk), I(kb, tm * tn));
	bm = mul(kb, kb_bin(kb, KO_DIV, rem, I(kb, tn)), I(kb, GT_BM));
	bn = mul(kb, kb_bin(kb, KO_MOD, rem, I(kb, tn)), I(kb, GT_BN));
	gemm_batch_offsets(kb, t, bt, nb, bat, as, bs, &aoff, &boff, &yoff);
	w = kb_bin(kb, KO_DIV, kb_get(kb, tid), I(kb, KT_SUBGROUP));
	wm = mul(kb, kb_bin(kb, KO_DIV, w, I(kb, 2)), I(kb, 16));
	wn = mul(kb, kb_bin(kb, KO_MOD, w, I(kb, 2)), I(kb, 16));
	kb_tfill(kb, shape, fc[0], cnum(kb, DT_F32, 0));
	kb_tfill(kb, shape, fc[1], cnum(kb, DT_F32, 0));
	{
		int dk = kb->depth;
		KRef kt = loop(kb, "kt", (t->K + GT_BK - 1) / GT_BK, 0);
		k0 = mul(kb, kt, I(kb, GT_BK));
		gemm_gpu_stage(kb, sa, &t->a, aoff, bm, k0, GT_BM, GT_BK, t->M, t->K,
		               tid, async, lanes);
		gemm_gpu_stage(kb, sb, &t->b, boff, k0, bn, GT_BK, GT_BN, t->K, t->N,
		               tid, async, lanes);
		if (async)
			kb_cpwait(kb);
		kb_barrier(kb);
		for (int64_t ks = 0; ks < GT_BK / tk; ks++) {
			kb_tload(kb, shape, KTR_A, fa, sa, add(kb, mul(kb, wm, I(kb, GT_BK)),
			         I(kb, ks * tk)), I(kb, GT_BK));
			for (int h = 0; h < 2; h++) {
				kb_tload(kb, shape, KTR_B, fb, sb, add(kb, I(kb, ks * tk * GT_BN + h * 8),
				         wn), I(kb, GT_BN));
				kb_tmma(kb, shape, fc[h], fa, fb);
			}
		}
		kb_barrier(kb);
		close_to(kb, dk);
	}
	for (int h = 0; h < 2; h++)
		kb_tstore(kb, shape, sc, add(kb, mul(kb, wm, I(kb, GT_BN)), add(kb, wn, I(kb, h * 8))),
		          I(kb, GT_BN), fc[h]);
	kb_barrier(kb);
	{
		int de = kb->depth;
		KRef e = loop(kb, "e", GT_BM * GT_BN / GT_THREADS, 0);
		KRef idx = add(kb, mul(kb, e, I(kb, GT_THREADS)), kb_get(kb, tid));
		KRef r = kb_bin(kb, KO_DIV, idx, I(kb, GT_BN)), c = kb_bin(kb, KO_MOD, idx, I(kb, GT_BN));
		KRef i = add(kb, bm, r), j = add(kb, bn, c), v;
		kb_if(kb, kb_bin(kb, KO_AND, kb_bin(kb, KO_LT, i, I(kb, t->M)),
		                 kb_bin(kb, KO_LT, j, I(kb, t->N))));
		v = gemm_out(kb, DT_F32, t, kb_load(kb, sc, idx), i, j);
		kb_store(kb, t->y, add(kb, yoff, add(kb, mul(kb, i, I(kb, t->N)), j)), v);
		/* the fused epilogue, on the element this thread wrote */
		if (lw->epi && &lw->g->node[lw->epi->anchor] == n)
			lower_epi_run(lw, kb, n, t->y, add(kb, yoff, add(kb, mul(kb, i,
			              I(kb, t->N)), j)), 1);
		kb_end(kb);
		close_to(kb, de);
	}
	close_to(kb, d);
	kb->k->grid = arena_printf(lw->prog->arena, "matmul blocks=%lld threads=%d "
	                           "tile=%dx%dx%d mma=%s%s", (long long)nblk, GT_THREADS,
	                           GT_BM, GT_BN, GT_BK, ti->name,
	                           async ? " cp.async" : "");
	return 1;
}

/* ---- MatMul, MatMulInteger --------------------------------------------- */

/* The matmul geometry: batch dims (broadcast), M, K, N, and where the
 * promoted 1-D dims drop out of the output. */
typedef struct MM {
	int nb;                         /* batch rank */
	int64_t bat[BURN_MAX_RANK];     /* output batch dims */
	int64_t as[BURN_MAX_RANK];      /* A's batch strides (0: broadcast) */
	int64_t bs[BURN_MAX_RANK];      /* B's batch strides */
	int64_t M, K, N;
	int rank;                       /* output rank */
	int64_t out[BURN_MAX_RANK];     /* output dims */
} MM;

/* Operand s (0: A, 1: B) of mm read through Transpose node t (a
 * permutation keeping the last axis last; fuse.c transpose_views): *in
 * the Transpose's input, *rs its row stride there, and mm's batch strides
 * for the operand from the input's strides through the permutation. */
static void
mm_view(const Graph *g, const Node *t, MM *mm, int s, int64_t *rs, int *in)
{
	const Value *x = GV(g, t->in[0]), *y = GV(g, t->out[0]);
	const Attr *pa = node_attr(t, "perm");
	int64_t xs[BURN_MAX_RANK], vs[BURN_MAX_RANK];
	int r = y->rank;

	shape_strides(x->rank, x->dim, xs);
	for (int i = 0; i < r; i++)
		vs[i] = xs[pa->ints[i]];
	*rs = vs[r - 2];
	*in = t->in[0];
	/* the operand's batch axes, right-aligned to the output's */
	for (int i = 0; i < mm->nb; i++) {
		int ia = i - (mm->nb - (r - 2));
		int64_t st = ia >= 0 && y->dim[ia] != 1 ? vs[ia] : 0;
		if (s == 0)
			mm->as[i] = st;
		else
			mm->bs[i] = st;
	}
}

static int
mm_shape(Ctx *c, const Value *a, const Value *b, MM *mm)
{
	int64_t ad[BURN_MAX_RANK + 1], bd[BURN_MAX_RANK + 1];
	int ra = a->rank, rb = b->rank;

	if (ra < 1 || rb < 1)
		return burn_fail(c, BURN_ERR_SHAPE, "MatMul operands must have rank >= 1");
	memset(mm, 0, sizeof *mm);
	/* 1-D A is a row [1,K]; 1-D B a column [K,1] */
	if (ra == 1) {
		ad[0] = 1; ad[1] = a->dim[0]; ra = 2;
	} else {
		memcpy(ad, a->dim, sizeof(int64_t) * ra);
	}
	if (rb == 1) {
		bd[0] = b->dim[0]; bd[1] = 1; rb = 2;
	} else {
		memcpy(bd, b->dim, sizeof(int64_t) * rb);
	}
	mm->M = ad[ra - 2];
	mm->K = ad[ra - 1];
	mm->N = bd[rb - 1];
	if (bd[rb - 2] != mm->K)
		return burn_fail(c, BURN_ERR_SHAPE, "MatMul: inner dims differ (%lld vs %lld)",
		                 (long long)mm->K, (long long)bd[rb - 2]);
	mm->nb = (ra > rb ? ra : rb) - 2;
	for (int i = 0; i < mm->nb; i++) {
		int ia = i - (mm->nb - (ra - 2)), ib = i - (mm->nb - (rb - 2));
		int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
		if (da != db && da != 1 && db != 1)
			return burn_fail(c, BURN_ERR_SHAPE,
			                 "MatMul: batch dims %lld and %lld do not broadcast",
			                 (long long)da, (long long)db);
		mm->bat[i] = da == 1 ? db : da;
	}
	bcast_strides(ra - 2, ad, mm->nb, mm->as);
	bcast_strides(rb - 2, bd, mm->nb, mm->bs);
	for (int i = 0; i < mm->nb; i++) {
		mm->as[i] *= mm->M * mm->K;
		mm->bs[i] *= mm->K * mm->N;
	}
	mm->rank = 0;
	for (int i = 0; i < mm->nb; i++)
		mm->out[mm->rank++] = mm->bat[i];
	if (a->rank > 1)
		mm->out[mm->rank++] = mm->M;
	if (b->rank > 1)
		mm->out[mm->rank++] = mm->N;
	if (mm->rank > BURN_MAX_RANK)
		return burn_fail(c, BURN_ERR_LIMIT, "MatMul: rank too large");
	return BURN_OK;
}

int
infer_matmul(Ctx *c, Graph *g, Node *n)
{
	const Value *a, *b;
	MM mm;
	int dt;

	TRY(need_in(c, g, n, 0, &a));
	TRY(need_in(c, g, n, 1, &b));
	TRY(mm_shape(c, a, b, &mm));
	if (n->op == OP_MatMulInteger) {
		if ((a->dtype != DT_U8 && a->dtype != DT_I8) ||
		    (b->dtype != DT_U8 && b->dtype != DT_I8))
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "MatMulInteger on %s x %s",
			                 dtype_name(a->dtype), dtype_name(b->dtype));
		TRY(check_zp(c, g, n, 2, mm.M));
		TRY(check_zp(c, g, n, 3, mm.N));
		dt = DT_I32;
	} else {
		if (a->dtype != b->dtype)
			return burn_fail(c, BURN_ERR_SHAPE, "MatMul: operand types %s and %s differ",
			                 dtype_name(a->dtype), dtype_name(b->dtype));
		if (!is_num(a->dtype) || a->dtype == DT_I8 || a->dtype == DT_U8 ||
		    a->dtype == DT_I16 || a->dtype == DT_U16)
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "MatMul on %s",
			                 dtype_name(a->dtype));
		dt = a->dtype;
	}
	set_out(NOUT(g, n, 0), dt, mm.rank, mm.out);
	return BURN_OK;
}

/*
 * Whether the product n (MatMul, Gemm) runs its rows over every item of
 * --dynamic-dim's batch at once (KProgram.rows_batched): A's rows are the
 * items (the caller checks that A is not transposed and B has no batch
 * dims), B and C (hasc) are not per item, the epilogue reads the rows
 * alike (lower_epi_rows_free), and the target takes the CPU GEMM form.
 * One GEMM of all the rows reads B once per tile of rows instead of once
 * per item.
 */
static int
rows_rt(const Lower *lw, const Node *n, int hasc)
{
	const unsigned char *b = lw->prog->rows_batched;

	if (!b || !lw->prog->rows_dim || !lw->target || !gemm_cpu(lw) ||
	    !b[n->in[0]] || b[n->in[1]] || !b[n->out[0]] || (hasc && b[n->in[2]]))
		return 0;
	if (lw->epi && !lower_epi_rows_free(lw, n, b))
		return 0;
	return 1;
}

/*
 * for batch...                          (parallel)
 *   for i < M                           (parallel)
 *     Y[i,:] = 0
 *     for k < K: a = A[i,k]; for j < N: Y[i,j] += a * B[k,j]
 * When N == 1 the row is a dot product, accumulated in a scalar.
 */
int
lower_matmul(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	const Value *a = NIN(g, n, 0), *b = NIN(g, n, 1), *y = NOUT(g, n, 0);
	int isint = n->op == OP_MatMulInteger;
	int dt = cdt(y->dtype);
	int ba, bb, by, av, d0, di, packed = -1, vin[2] = { -1, -1 }, axpy, dv;
	int64_t last = 0, vrs[2];
	KRef ao, bo, yo, vi, vk, vj, azp = 0, mrt = 0;
	static const char *bname[] = {"b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7"};
	MM mm;
	KB kb;

	TRY(mm_shape(lw->ctx, a, b, &mm));
	vrs[0] = mm.K;   /* row strides: contiguous, unless a view */
	vrs[1] = mm.N;
	/* an operand that is a Transpose of the last axis kept (Lower.tview)
	 * is read from the Transpose's input through the permuted strides */
	for (int s = 0; s < 2; s++) {
		int t = lw->tview && n->in[s] >= 0 ? lw->tview[n->in[s]] : -1;
		if (t >= 0)
			mm_view(g, &g->node[t], &mm, s, &vrs[s], &vin[s]);
	}
	/* B without batch dims: the batch of A folds into M */
	if (b->rank <= 2 && mm.nb > 0 && vin[0] < 0) {
		mm.M *= prod(mm.nb, mm.bat);
		mm.nb = 0;
	}
	lower_begin(lw, &kb, n);
	/* the axpy step: the row form below for floats too (reading a
	 * transposed view through its row strides vrs) */
	axpy = !isint && mm.N > 1 && step(lw, &kb, KST_TILE, 0).kind == KST_AXPY;
	/* A's rows the items of a run-time batch (B without batch dims):
	 * all of them at once */
	if (!isint && mm.N > 1 && !axpy && mm.nb == 0 && a->rank >= 2 && vin[0] < 0 && vin[1] < 0 &&
	    rows_rt(lw, n, 0) && (dv = kb_dim(&kb, lw->prog->rows_dim)) >= 0)
		mrt = mul(&kb, kb_get(&kb, dv), I(&kb, mm.M));
	ba = vin[0] >= 0 ? lower_bind(lw, &kb, vin[0], KA_READ) : lower_in(lw, &kb, n, 0);
	/* a constant B of the blocked form is bound as its panels instead */
	if (!isint && mm.N > 1 && !axpy) {
		int64_t MR, NR, nr = gemm_nr(lw, &kb, mrt ? 0 : mm.M, &MR, &NR);
		TRY(gemm_pack_const(lw, n, 1, mm.K, mm.N, mm.N, 1, nr, 1, &packed, &last));
	}
	bb = packed >= 0 ? lower_bind(lw, &kb, packed, KA_READ) :
	     vin[1] >= 0 ? lower_bind(lw, &kb, vin[1], KA_READ) : lower_in(lw, &kb, n, 1);
	by = lower_out(lw, &kb, n, 0);
	d0 = kb.depth;
	if (mrt) {
		GT t = { dt, mm.M, mm.N, mm.K, { ba, I(&kb, 0), vrs[0], 1, 0 },
		         { bb, I(&kb, 0), vrs[1], 1, packed >= 0, last }, { -1, 0, 0, 0, 0, 0 },
		         1, 0, by, -1, I(&kb, 0), 0, 0 };
		gemm_blocked_rt(lw, &kb, n, &t, mrt);
		close_to(&kb, d0);
		lower_end(lw, &kb);
		return BURN_OK;
	}
	if ((vin[0] >= 0 || vin[1] >= 0) && (isint || mm.N <= 1))
		return burn_fail(lw->ctx, BURN_ERR_INTERNAL, "MatMul: a transposed operand "
		                 "outside the GEMM forms");
	if (!isint && mm.N > 1 && packed < 0 && !axpy) {
		GT t = { dt, mm.M, mm.N, mm.K, { ba, I(&kb, 0), vrs[0], 1, 0 },
		         { bb, I(&kb, 0), vrs[1], 1, 0 }, { -1, 0, 0, 0, 0 }, 1, 0, by, -1,
		         I(&kb, 0), 0, 0 };
		if (gemm_gpu(lw, &kb, n, &t, mm.nb, mm.bat, mm.as, mm.bs)) {
			lower_end(lw, &kb);
			return BURN_OK;
		}
	}
	ao = bo = yo = I(&kb, 0);
	for (int i = 0; i < mm.nb; i++) {
		KRef v = loop(&kb, bname[i], mm.bat[i], KF_PARALLEL);
		ao = madd(&kb, ao, v, mm.as[i]);
		bo = madd(&kb, bo, v, mm.bs[i]);
		yo = madd(&kb, yo, v, mm.M * mm.N * prod(mm.nb - i - 1, mm.bat + i + 1));
	}
	if (!isint && mm.N > 1 && !axpy) {
		GT t = { dt, mm.M, mm.N, mm.K, { ba, ao, vrs[0], 1, 0 },
		         { bb, bo, vrs[1], 1, packed >= 0, last }, { -1, 0, 0, 0, 0, 0 }, 1, 0, by, -1,
		         yo, 0, mm.nb == 0 && gemm_bpack(lw, mm.M, mm.N) };
		gemm_blocked(lw, &kb, n, &t);
		close_to(&kb, d0);
		lower_end(lw, &kb);
		return BURN_OK;
	}
	vi = loop(&kb, "i", mm.M, KF_PARALLEL);
	di = kb.depth;
	if (isint)
		azp = zero_point(lw, &kb, n, 2, vi);
	ao = madd(&kb, ao, vi, vrs[0]);
	yo = madd(&kb, yo, vi, mm.N);
	av = kb_var(&kb, dt, "a");
	if (mm.N == 1) {
		/* dot product */
		kb_set(&kb, av, cnum(&kb, dt, 0));
		vk = loop(&kb, "k", mm.K, 0);
		{
			KRef x = kb_cast(&kb, dt, kb_load(&kb, ba, add(&kb, ao, vk)));
			KRef w = kb_cast(&kb, dt, kb_load(&kb, bb, add(&kb, bo, vk)));
			if (isint) {
				x = kb_bin(&kb, KO_SUB, x, azp);
				w = kb_bin(&kb, KO_SUB, w, zero_point(lw, &kb, n, 3, I(&kb, 0)));
			}
			kb_set(&kb, av, add(&kb, kb_get(&kb, av), mul(&kb, x, w)));
		}
		if (mm.K != 1)
			kb_end(&kb);
		kb_store(&kb, by, yo, lower_epi_value(lw, &kb, n, yo, kb_get(&kb, av)));
		close_to(&kb, d0);
		lower_end(lw, &kb);
		return BURN_OK;
	}
	vj = loop(&kb, "j", mm.N, KF_PARALLEL);
	kb_store(&kb, by, add(&kb, yo, vj), cnum(&kb, dt, 0));
	if (mm.N != 1)
		kb_end(&kb);
	if (!isint && mm.K >= 4) {
		/* floats: four rows of B per pass over Y's row (a quarter of the
		 * loads and stores of Y), then the K % 4 rest below */
		int64_t k4 = mm.K / 4 * 4;
		int dk = kb.depth, a4[4];
		KRef vk4 = mul(&kb, loop(&kb, "k4", k4 / 4, 0), I(&kb, 4));
		for (int t = 0; t < 4; t++) {
			a4[t] = kb_var(&kb, dt, "a");
			kb_set(&kb, a4[t], kb_cast(&kb, dt, kb_load(&kb, ba,
			       add(&kb, ao, add(&kb, vk4, I(&kb, t))))));
		}
		for (int pass = 0; pass < 2; pass++) {
			int dp = kb.depth;
			KRef acc = 0, yi;
			if (!vl_open(lw, &kb, "j", I(&kb, 0), I(&kb, mm.N),
			             step1(lw, &kb, KST_VEC, 0),
			             pass, &vj))
				continue;
			for (int t = 0; t < 4; t++) {
				KRef bv = kb_cast(&kb, dt, kb_load(&kb, bb, add(&kb,
				          madd(&kb, bo, add(&kb, vk4, I(&kb, t)), vrs[1]), vj)));
				KRef term = mul(&kb, kb_get(&kb, a4[t]), bv);
				acc = acc ? add(&kb, acc, term) : term;
			}
			yi = add(&kb, yo, vj);
			kb_store(&kb, by, yi, add(&kb, kb_load(&kb, by, yi), acc));
			close_to(&kb, dp);
		}
		close_to(&kb, dk);
		vk = k4 == mm.K ? 0 : kb_get(&kb, kb_for(&kb, "k", I(&kb, k4), I(&kb, mm.K), 0));
	} else {
		vk = loop(&kb, "k", mm.K, 0);
	}
	if (!vk) {
		close_to(&kb, di);
		lower_epi_run(lw, &kb, n, by, yo, mm.N);
		close_to(&kb, d0);
		lower_end(lw, &kb);
		return BURN_OK;
	}
	{
		KRef x = kb_cast(&kb, dt, kb_load(&kb, ba, add(&kb, ao, vk)));
		if (isint)
			x = kb_bin(&kb, KO_SUB, x, azp);
		kb_set(&kb, av, x);
	}
	bo = madd(&kb, bo, vk, vrs[1]);
	for (int pass = 0; pass < 2; pass++) {
		int dp = kb.depth;
		KRef w, yi;
		if (!vl_open(lw, &kb, "j", I(&kb, 0), I(&kb, mm.N),
			             step1(lw, &kb, KST_VEC, 0),
			             pass, &vj))
			continue;
		w = kb_cast(&kb, dt, kb_load(&kb, bb, add(&kb, bo, vj)));
		yi = add(&kb, yo, vj);
		if (isint)
			w = kb_bin(&kb, KO_SUB, w, zero_point(lw, &kb, n, 3, vj));
		kb_store(&kb, by, yi, add(&kb, kb_load(&kb, by, yi),
		                          mul(&kb, kb_get(&kb, av), w)));
		close_to(&kb, dp);
	}
	/* row i is final: the fused epilogue runs over it while it is in cache */
	close_to(&kb, di);
	lower_epi_run(lw, &kb, n, by, yo, mm.N);
	close_to(&kb, d0);
	lower_end(lw, &kb);
	return BURN_OK;
}

/*
 * av = sum over k < K of A[ai + k*as] * B[bi + k].  For floats the sum is
 * split over `lanes` (the target's tune.dot_lanes) partial sums in a
 * local array, so that the C compiler, which does not reassociate a float
 * reduction at -O2, can still vectorize the lanes; the K % lanes tail
 * is added after the lanes.
 */
static void
dot(KB *kb, int64_t lanes, int av, int dt, int ba, KRef ai, int64_t as, int bb,
    KRef bi, int64_t K)
{
	int64_t KL = dtype_is_float(dt) ? K / lanes * lanes : 0;
	int d = kb->depth;
	KRef vk;

#define DOT_TERM(k) mul(kb, kb_cast(kb, dt, kb_load(kb, ba, madd(kb, ai, (k), as))), \
	                kb_cast(kb, dt, kb_load(kb, bb, add(kb, bi, (k)))))
	if (KL > 0) {
		int t = kb_buf(kb, dt, lanes, -1, KS_LOCAL, KA_RW);
		KRef l, kk, k;
		l = kb_get(kb, kb_for(kb, "l", I(kb, 0), I(kb, lanes), KF_PARALLEL));
		kb_store(kb, t, l, cnum(kb, dt, 0));
		kb_end(kb);
		kk = loop(kb, "kk", KL / lanes, 0);
		l = kb_get(kb, kb_for(kb, "l", I(kb, 0), I(kb, lanes), KF_PARALLEL));
		k = madd(kb, l, kk, lanes);
		kb_store(kb, t, l, add(kb, kb_load(kb, t, l), DOT_TERM(k)));
		close_to(kb, d);
		kb_set(kb, av, kb_load(kb, t, I(kb, 0)));
		l = kb_get(kb, kb_for(kb, "l", I(kb, 1), I(kb, lanes), 0));
		kb_set(kb, av, add(kb, kb_get(kb, av), kb_load(kb, t, l)));
		kb_end(kb);
	} else {
		kb_set(kb, av, cnum(kb, dt, 0));
	}
	if (KL < K) {
		vk = kb_get(kb, kb_for(kb, "k", I(kb, KL), I(kb, K), 0));
		kb_set(kb, av, add(kb, kb_get(kb, av), DOT_TERM(vk)));
		kb_end(kb);
	}
#undef DOT_TERM
}

/* ---- Gemm ---------------------------------------------------------------- */

typedef struct GM {
	int64_t M, K, N;
	int ta, tb;
	int64_t csm, csn;   /* C's strides over M and N (0: broadcast) */
} GM;

static int
gemm_shape(Ctx *c, Graph *g, Node *n, GM *gm)
{
	const Value *a, *b, *cc = NIN(g, n, 2);
	int64_t kb_;

	TRY(need_in(c, g, n, 0, &a));
	TRY(need_in(c, g, n, 1, &b));
	if (a->rank != 2 || b->rank != 2)
		return burn_fail(c, BURN_ERR_SHAPE, "Gemm: A and B must be 2-D (ranks %d, %d)",
		                 a->rank, b->rank);
	gm->ta = attr_int(n, "transA", 0) != 0;
	gm->tb = attr_int(n, "transB", 0) != 0;
	gm->M = a->dim[gm->ta];
	gm->K = a->dim[!gm->ta];
	kb_ = b->dim[gm->tb];
	gm->N = b->dim[!gm->tb];
	if (kb_ != gm->K)
		return burn_fail(c, BURN_ERR_SHAPE, "Gemm: inner dims differ (%lld vs %lld)",
		                 (long long)gm->K, (long long)kb_);
	gm->csm = gm->csn = 0;
	if (cc) {
		int64_t cm, cn;
		if (cc->rank > 2 || !value_shape_known(cc))
			return burn_fail(c, BURN_ERR_SHAPE, "Gemm: C must have rank <= 2");
		cm = cc->rank == 2 ? cc->dim[0] : 1;
		cn = cc->rank >= 1 ? cc->dim[cc->rank - 1] : 1;
		if ((cm != 1 && cm != gm->M) || (cn != 1 && cn != gm->N))
			return burn_fail(c, BURN_ERR_SHAPE,
			                 "Gemm: C [%lld,%lld] does not broadcast to [%lld,%lld]",
			                 (long long)cm, (long long)cn, (long long)gm->M,
			                 (long long)gm->N);
		gm->csn = cn == 1 ? 0 : 1;
		gm->csm = cm == 1 ? 0 : cn;
	}
	return BURN_OK;
}

int
infer_gemm(Ctx *c, Graph *g, Node *n)
{
	const Value *a = NIN(g, n, 0), *b = NIN(g, n, 1), *cc = NIN(g, n, 2);
	int64_t d[2];
	GM gm;

	TRY(gemm_shape(c, g, n, &gm));
	if (a->dtype != b->dtype || (cc && cc->dtype != a->dtype))
		return burn_fail(c, BURN_ERR_SHAPE, "Gemm: operand types differ");
	if (!is_num(a->dtype) || a->dtype == DT_I8 || a->dtype == DT_U8 ||
	    a->dtype == DT_I16 || a->dtype == DT_U16)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "Gemm on %s", dtype_name(a->dtype));
	d[0] = gm.M;
	d[1] = gm.N;
	set_out(NOUT(g, n, 0), a->dtype, 2, d);
	return BURN_OK;
}

/*
 * transB == 0 (i-k-j):
 *   for i: Y[i,:] = beta*C[i,:]; for k: a = alpha*A'[i,k]; for j: Y[i,j] += a*B[k,j]
 * transB == 1 (i-j-k):
 *   for i, j: acc = 0; for k: acc += A'[i,k]*B[j,k]; Y[i,j] = alpha*acc + beta*C[i,j]
 */
int
lower_gemm(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	const Value *y = NOUT(g, n, 0);
	int dt = cdt(y->dtype), hasc = has_in(n, 2);
	double alpha = attr_float(n, "alpha", 1.0), beta = attr_float(n, "beta", 1.0);
	int ba, bb, bc = -1, by, av, d0, di, packed = -1, dv;
	int64_t last = 0;
	KRef vi, vj, vk, arow, crow, yrow, mrt = 0;
	GM gm;
	KB kb;

	TRY(gemm_shape(lw->ctx, g, n, &gm));
	if (beta == 0)
		hasc = 0;
	lower_begin(lw, &kb, n);
	/* A's rows the items of a run-time batch: all of them at once */
	if (!gm.ta && (!hasc || gm.csm == 0) && rows_rt(lw, n, hasc) &&
	    (dv = kb_dim(&kb, lw->prog->rows_dim)) >= 0)
		mrt = mul(&kb, kb_get(&kb, dv), I(&kb, gm.M));
	ba = lower_in(lw, &kb, n, 0);
	/* a constant B is bound as its panels instead (gemm_blocked) */
	{
		int64_t MR, NR, nr = gemm_nr(lw, &kb, mrt ? 0 : gm.M, &MR, &NR);
		TRY(gemm_pack_const(lw, n, 1, gm.K, gm.N, gm.tb ? 1 : gm.N, gm.tb ? gm.K : 1,
		                    nr, 1, &packed, &last));
	}
	bb = packed >= 0 ? lower_bind(lw, &kb, packed, KA_READ) : lower_in(lw, &kb, n, 1);
	if (hasc)
		bc = lower_in(lw, &kb, n, 2);
	by = lower_out(lw, &kb, n, 0);
	d0 = kb.depth;
	if (mrt) {
		GT t = { dt, gm.M, gm.N, gm.K, { ba, I(&kb, 0), gm.K, 1, 0 },
		         { bb, I(&kb, 0), gm.tb ? 1 : gm.N, gm.tb ? gm.K : 1, packed >= 0, last },
		         { bc, I(&kb, 0), gm.csm, gm.csn, 0 },
		         alpha, beta, by, -1, I(&kb, 0), 0, 0 };
		gemm_blocked_rt(lw, &kb, n, &t, mrt);
		close_to(&kb, d0);
		lower_end(lw, &kb);
		return BURN_OK;
	}
	if (packed < 0) {
		/* A'[i,k] = A[i*K + k] or A[k*M + i]; B'[k,j] = B[k*N + j] or B[j*K + k] */
		GT t = { dt, gm.M, gm.N, gm.K,
		         { ba, I(&kb, 0), gm.ta ? 1 : gm.K, gm.ta ? gm.M : 1, 0 },
		         { bb, I(&kb, 0), gm.tb ? 1 : gm.N, gm.tb ? gm.K : 1, 0 },
		         { bc, I(&kb, 0), gm.csm, gm.csn, 0 }, alpha, beta, by, -1, I(&kb, 0),
		         0, 0 };
		if (gemm_gpu(lw, &kb, n, &t, 0, NULL, NULL, NULL)) {
			lower_end(lw, &kb);
			return BURN_OK;
		}
	}
	/* B in panels (constant, or copied at run time; transB too), else a
	 * strided B without transB */
	if (packed >= 0 || !gm.tb || gemm_bpack(lw, gm.M, gm.N)) {
		GT t = { dt, gm.M, gm.N, gm.K,
		         { ba, I(&kb, 0), gm.ta ? 1 : gm.K, gm.ta ? gm.M : 1, 0 },
		         { bb, I(&kb, 0), gm.tb ? 1 : gm.N, gm.tb ? gm.K : 1, packed >= 0, last },
		         { bc, I(&kb, 0), gm.csm, gm.csn, 0 },
		         alpha, beta, by, -1, I(&kb, 0), 0, gemm_bpack(lw, gm.M, gm.N) };
		gemm_blocked(lw, &kb, n, &t);
		close_to(&kb, d0);
		lower_end(lw, &kb);
		return BURN_OK;
	}
	av = kb_var(&kb, dt, gm.tb ? "acc" : "a");
	vi = loop(&kb, "i", gm.M, KF_PARALLEL);
	di = kb.depth;
	/* A'[i,k] = A[i*K + k] or, transposed, A[k*M + i] */
	arow = gm.ta ? vi : mul(&kb, vi, I(&kb, gm.K));
	crow = mul(&kb, vi, I(&kb, gm.csm));
	yrow = mul(&kb, vi, I(&kb, gm.N));
#define AIDX(k) (gm.ta ? add(&kb, arow, mul(&kb, (k), I(&kb, gm.M))) : add(&kb, arow, (k)))
#define CVAL(j) kb_load(&kb, bc, add(&kb, crow, mul(&kb, (j), I(&kb, gm.csn))))
	if (!gm.tb) {
		vj = loop(&kb, "j", gm.N, KF_PARALLEL);
		{
			KRef init = cnum(&kb, dt, 0);
			if (hasc) {
				init = kb_cast(&kb, dt, CVAL(vj));
				if (beta != 1)
					init = mul(&kb, cnum(&kb, dt, beta), init);
			}
			kb_store(&kb, by, add(&kb, yrow, vj), init);
		}
		if (gm.N != 1)
			kb_end(&kb);
		vk = loop(&kb, "k", gm.K, 0);
		{
			KRef x = kb_cast(&kb, dt, kb_load(&kb, ba, AIDX(vk)));
			if (alpha != 1)
				x = mul(&kb, cnum(&kb, dt, alpha), x);
			kb_set(&kb, av, x);
		}
		for (int pass = 0; pass < 2; pass++) {
			int dp = kb.depth;
			KRef w, yi;
			if (!vl_open(lw, &kb, "j", I(&kb, 0), I(&kb, gm.N),
			             step1(lw, &kb, KST_VEC, 0),
			             pass, &vj))
				continue;
			w = kb_cast(&kb, dt, kb_load(&kb, bb, add(&kb, mul(&kb, vk, I(&kb, gm.N)), vj)));
			yi = add(&kb, yrow, vj);
			kb_store(&kb, by, yi, add(&kb, kb_load(&kb, by, yi),
			                          mul(&kb, kb_get(&kb, av), w)));
			close_to(&kb, dp);
		}
		close_to(&kb, di);
		lower_epi_run(lw, &kb, n, by, yrow, gm.N);
	} else {
		KRef r;
		int dj;
		vj = loop(&kb, "j", gm.N, KF_PARALLEL);
		dj = kb.depth;
		dot(&kb, step1(lw, &kb, KST_DOT, 0), av, dt, ba, gm.ta ? vi : arow, gm.ta ? gm.M : 1, bb,
		    mul(&kb, vj, I(&kb, gm.K)), gm.K);
		close_to(&kb, dj);
		r = kb_get(&kb, av);
		if (alpha != 1)
			r = mul(&kb, cnum(&kb, dt, alpha), r);
		if (hasc) {
			KRef cv = kb_cast(&kb, dt, CVAL(vj));
			if (beta != 1)
				cv = mul(&kb, cnum(&kb, dt, beta), cv);
			r = add(&kb, r, cv);
		}
		kb_store(&kb, by, add(&kb, yrow, vj),
		         lower_epi_value(lw, &kb, n, add(&kb, yrow, vj), r));
	}
#undef AIDX
#undef CVAL
	close_to(&kb, d0);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- windows: the geometry shared by Conv, ConvTranspose and the pools -- */

enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID };

typedef struct Win {
	int nsp;                        /* spatial dims */
	int autopad;                    /* PAD_* */
	int64_t in[BURN_MAX_RANK];      /* input extents */
	int64_t out[BURN_MAX_RANK];     /* output extents */
	int64_t k[BURN_MAX_RANK];       /* kernel extents */
	int64_t s[BURN_MAX_RANK];       /* strides */
	int64_t d[BURN_MAX_RANK];       /* dilations */
	int64_t pb[BURN_MAX_RANK];      /* padding at the start */
	int64_t pe[BURN_MAX_RANK];      /* padding at the end */
} Win;

#define WIN_MAX ((int64_t)1 << 24)   /* bound on attributes: no overflow */

/* Read kernel_shape (or take wk, the weight's spatial dims), strides,
 * dilations, pads and auto_pad for input x of rank >= 3. */
static int
win_read(Ctx *c, const Node *n, const Value *x, const int64_t *wk, Win *w)
{
	const int64_t *a;
	const char *ap;
	int na;

	memset(w, 0, sizeof *w);
	if (x->rank < 3)
		return burn_fail(c, BURN_ERR_SHAPE, "input must have rank >= 3 (got %d)",
		                 x->rank);
	w->nsp = x->rank - 2;
	for (int i = 0; i < w->nsp; i++) {
		w->in[i] = x->dim[i + 2];
		w->s[i] = w->d[i] = 1;
	}
	na = attr_ints(n, "kernel_shape", &a);
	if (na && na != w->nsp)
		return burn_fail(c, BURN_ERR_INVALID, "kernel_shape has %d entries, want %d",
		                 na, w->nsp);
	if (!na && !wk)
		return burn_fail(c, BURN_ERR_INVALID, "kernel_shape is required");
	for (int i = 0; i < w->nsp; i++) {
		w->k[i] = na ? a[i] : wk[i];
		if (wk && w->k[i] != wk[i])
			return burn_fail(c, BURN_ERR_SHAPE, "kernel_shape disagrees with W");
		if (w->k[i] < 1 || w->k[i] > WIN_MAX)
			return burn_fail(c, BURN_ERR_INVALID, "bad kernel extent %lld",
			                 (long long)w->k[i]);
	}
	na = attr_ints(n, "strides", &a);
	if (na && na != w->nsp)
		return burn_fail(c, BURN_ERR_INVALID, "strides has %d entries", na);
	for (int i = 0; i < na; i++)
		if ((w->s[i] = a[i]) < 1 || a[i] > WIN_MAX)
			return burn_fail(c, BURN_ERR_INVALID, "bad stride %lld", (long long)a[i]);
	na = attr_ints(n, "dilations", &a);
	if (na && na != w->nsp)
		return burn_fail(c, BURN_ERR_INVALID, "dilations has %d entries", na);
	for (int i = 0; i < na; i++)
		if ((w->d[i] = a[i]) < 1 || a[i] > WIN_MAX)
			return burn_fail(c, BURN_ERR_INVALID, "bad dilation %lld", (long long)a[i]);
	na = attr_ints(n, "pads", &a);
	if (na && na != 2 * w->nsp)
		return burn_fail(c, BURN_ERR_INVALID, "pads has %d entries, want %d", na,
		                 2 * w->nsp);
	for (int i = 0; i < na; i++)
		if (a[i] < 0 || a[i] > WIN_MAX)
			return burn_fail(c, BURN_ERR_INVALID, "bad pad %lld", (long long)a[i]);
	for (int i = 0; na && i < w->nsp; i++) {
		w->pb[i] = a[i];
		w->pe[i] = a[i + w->nsp];
	}
	ap = attr_str(n, "auto_pad", "NOTSET");
	if (!strcmp(ap, "NOTSET") || !*ap)
		w->autopad = PAD_NOTSET;
	else if (!strcmp(ap, "SAME_UPPER"))
		w->autopad = PAD_SAME_UPPER;
	else if (!strcmp(ap, "SAME_LOWER"))
		w->autopad = PAD_SAME_LOWER;
	else if (!strcmp(ap, "VALID"))
		w->autopad = PAD_VALID;
	else
		return burn_fail(c, BURN_ERR_INVALID, "bad auto_pad '%s'", ap);
	return BURN_OK;
}

/* Output extents of a conv or pool window (ceil_mode for pools), and the
 * pads auto_pad implies. */
static int
win_out(Ctx *c, Win *w, int ceil_mode)
{
	for (int i = 0; i < w->nsp; i++) {
		int64_t ek = (w->k[i] - 1) * w->d[i] + 1, s = w->s[i], span;
		if (w->autopad == PAD_SAME_UPPER || w->autopad == PAD_SAME_LOWER) {
			int64_t o = (w->in[i] + s - 1) / s;
			int64_t tot = (o - 1) * s + ek - w->in[i];
			if (tot < 0)
				tot = 0;
			if (w->autopad == PAD_SAME_UPPER) {
				w->pb[i] = tot / 2;
				w->pe[i] = tot - tot / 2;
			} else {
				w->pe[i] = tot / 2;
				w->pb[i] = tot - tot / 2;
			}
			w->out[i] = o;
			continue;
		}
		if (w->autopad == PAD_VALID)
			w->pb[i] = w->pe[i] = 0;
		span = w->in[i] + w->pb[i] + w->pe[i] - ek;
		if (span < 0)
			return burn_fail(c, BURN_ERR_SHAPE,
			                 "window %lld larger than padded input %lld",
			                 (long long)ek, (long long)(span + ek));
		w->out[i] = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
		/* the last window must start inside the input or its left pad */
		if (ceil_mode && (w->out[i] - 1) * s >= w->in[i] + w->pb[i])
			w->out[i]--;
	}
	return BURN_OK;
}

/* The range [*lo, *hi) of q in [0, qn) for which q*s + off lies in
 * [0, lim); off is an i64 expression.  Written with truncating division:
 * where the numerator is negative the clamps make the range empty or
 * start it at 0, which is what floor division would give. */
static void
win_span(KB *kb, KRef off, int64_t s, int64_t lim, int64_t qn, KRef *lo, KRef *hi)
{
	KRef nl = kb_bin(kb, KO_SUB, I(kb, s - 1), off);
	KRef nh = kb_bin(kb, KO_SUB, I(kb, lim - 1 + s), off);

	*lo = kb_bin(kb, KO_MAX, I(kb, 0), kb_bin(kb, KO_DIV, nl, I(kb, s)));
	*hi = kb_bin(kb, KO_MIN, I(kb, qn), kb_bin(kb, KO_DIV, nh, I(kb, s)));
}

/* Whether q*s + k*d - p can leave [0, lim) for q < qn, k < kn: a test (or
 * a clamped range) is needed.  low and high say which side. */
static int
win_check(int64_t qn, int64_t s, int64_t kn, int64_t d, int64_t p, int64_t lim,
          int *low, int *high)
{
	*low = p > 0;
	*high = (qn - 1) * s + (kn - 1) * d - p >= lim;
	return *low || *high;
}

/* The condition 0 <= i < lim for the parts that need it; 0 if none. */
static KRef
in_range(KB *kb, KRef i, int low, int high, int64_t lim)
{
	KRef c = 0;

	if (low)
		c = kb_bin(kb, KO_GE, i, I(kb, 0));
	if (high) {
		KRef h = kb_bin(kb, KO_LT, i, I(kb, lim));
		c = c ? kb_bin(kb, KO_AND, c, h) : h;
	}
	return c;
}

static const char *oname[] = {"o0", "o1", "o2", "o3", "o4", "o5", "o6", "o7"};
static const char *kname[] = {"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"};
static const char *iname[] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"};

/* The window loops of dims [0, nd) around output position o: a loop per
 * kernel dim, an if where the tap can fall outside the input, and the
 * input and weight offsets advanced by each dim's stride. */
static void
win_taps(KB *kb, const Win *w, int nd, const KRef *o, const int64_t *xsp,
         const int64_t *wsp, KRef *xbase, KRef *wbase)
{
	for (int j = 0; j < nd; j++) {
		int lo, hi;
		KRef kj = loop(kb, kname[j], w->k[j], 0);
		KRef ij = kb_bin(kb, KO_SUB, add(kb, mul(kb, o[j], I(kb, w->s[j])),
		                                 mul(kb, kj, I(kb, w->d[j]))),
		                 I(kb, w->pb[j]));
		if (win_check(w->out[j], w->s[j], w->k[j], w->d[j], w->pb[j], w->in[j],
		              &lo, &hi))
			kb_if(kb, in_range(kb, ij, lo, hi, w->in[j]));
		*xbase = madd(kb, *xbase, ij, xsp[j]);
		*wbase = madd(kb, *wbase, kj, wsp[j]);
	}
}

/* ---- Conv, ConvInteger ----------------------------------------------------- */

/* The most f32 elements the batched im2col (and its GEMM's result) of
 * lower_conv_gemm may keep in the arena: 16 MiB each. */
#define CONV_BATCHED_MAX ((int64_t)1 << 22)

typedef struct CV {
	Win w;
	int64_t N, C, M, G;
} CV;

static int
conv_shape(Ctx *c, Graph *g, Node *n, CV *cv)
{
	const Value *x, *w;

	TRY(need_in(c, g, n, 0, &x));
	TRY(need_in(c, g, n, 1, &w));
	if (w->rank != x->rank)
		return burn_fail(c, BURN_ERR_SHAPE, "W has rank %d, X rank %d", w->rank,
		                 x->rank);
	TRY(win_read(c, n, x, w->dim + 2, &cv->w));
	TRY(win_out(c, &cv->w, 0));
	cv->N = x->dim[0];
	cv->C = x->dim[1];
	cv->M = w->dim[0];
	cv->G = attr_int(n, "group", 1);
	if (cv->G < 1 || cv->C % cv->G || cv->M % cv->G || w->dim[1] * cv->G != cv->C)
		return burn_fail(c, BURN_ERR_SHAPE,
		                 "group %lld does not fit C=%lld, M=%lld, W channels %lld",
		                 (long long)cv->G, (long long)cv->C, (long long)cv->M,
		                 (long long)w->dim[1]);
	return BURN_OK;
}

int
infer_conv(Ctx *c, Graph *g, Node *n)
{
	const Value *x, *w, *b;
	int64_t d[BURN_MAX_RANK];
	CV cv;
	int dt;

	TRY(conv_shape(c, g, n, &cv));
	x = NIN(g, n, 0);
	w = NIN(g, n, 1);
	if (n->op == OP_ConvInteger) {
		if ((x->dtype != DT_U8 && x->dtype != DT_I8) ||
		    (w->dtype != DT_U8 && w->dtype != DT_I8))
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "ConvInteger on %s x %s",
			                 dtype_name(x->dtype), dtype_name(w->dtype));
		TRY(check_zp(c, g, n, 2, 1));
		TRY(check_zp(c, g, n, 3, cv.M));
		dt = DT_I32;
	} else {
		if (!dtype_is_float(x->dtype) || w->dtype != x->dtype)
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "Conv on %s x %s",
			                 dtype_name(x->dtype), dtype_name(w->dtype));
		if ((b = NIN(g, n, 2)) &&
		    (b->dtype != x->dtype || value_numel(b) != cv.M))
			return burn_fail(c, BURN_ERR_SHAPE, "Conv: bias must be %s[%lld]",
			                 dtype_name(x->dtype), (long long)cv.M);
		dt = x->dtype;
	}
	d[0] = cv.N;
	d[1] = cv.M;
	for (int i = 0; i < cv.w.nsp; i++)
		d[i + 2] = cv.w.out[i];
	set_out(NOUT(g, n, 0), dt, cv.w.nsp + 2, d);
	return BURN_OK;
}

/*
 * f32 convolution without groups as a GEMM per image, in one kernel: 2-D
 * with a kernel wider than 1x1 through im2col, pointwise (1x1, unit
 * strides, no padding, spatial dims flattened: nsp == 1) straight from X.
 * The direct form below spends its time in loops as short as an output row
 * (13..55 wide in SqueezeNet); the GEMM rows are whole planes.
 *
 *   for n:
 *     col[(c*KH + kh)*KW + kw, oh*OW + ow] = X[n, c, ih, iw] or 0 (padding)
 *     Y[n] (M x P) = W (M x K) * col (K x P) + bias (blocked: gemm_blocked,
 *     the fused epilogue runs over each finished row block)
 *
 * col (K x OH*OW, one image) is scratch in the arena.  chosen: the
 * schedule's im2col step chose this form over the direct one.
 *
 * Where an image's plane P is narrower than the register tile (a Conv's
 * weight gradient: a Conv of x^T by g^T whose "images" are the input
 * channels and whose output is the 3x3 kernel, K = batch * 11 * 11 in the
 * CNN of examples/cnn_train.burn), the per-image GEMM is M x P with P
 * columns of a tile wasted and A re-read per image.  Then (batched) the
 * images are columns of one GEMM, as long as the scratch stays small:
 *
 *   col[(c*KH + kh)*KW + kw, n*P + oh*OW + ow] = X[n, c, ih, iw] or 0
 *   y2 (M x N*P) = W * col + bias
 *   Y[n, m, :] = y2[m, n*P .. n*P + P), the epilogue over each row
 */
static int
lower_conv_gemm(Lower *lw, Node *n, CV *cv, int chosen)
{
	Win *w = &cv->w;
	int pw = w->nsp == 1;
	int64_t KH = w->k[0], KW = pw ? 1 : w->k[1], OH = w->out[0], OW = pw ? 1 : w->out[1];
	int64_t H = w->in[0], W = pw ? 1 : w->in[1], K = cv->C * KH * KW, P = OH * OW;
	int bat = !pw && cv->N > 1 && P < tune(lw)->gemm_nr &&
	          K * cv->N * P <= CONV_BATCHED_MAX && cv->M * cv->N * P <= CONV_BATCHED_MAX;
	int64_t NP = bat ? cv->N * P : P;   /* col's columns */
	int64_t cdim[2] = { K, NP }, ydim[2] = { cv->M, NP };
	int col = pw ? -1 : lower_temp(lw, DT_F32, 2, cdim);
	int y2 = bat ? lower_temp(lw, DT_F32, 2, ydim) : -1;
	int bx, bc, bw, bb = -1, by, by2 = -1, d0, dn;
	KRef vn, vc, vkh, vkw, voh, vow, ih, iw, ok, src, r, q;
	int64_t MR, NR, alast, blast = 0;
	int apacked = -1, bpacked = -1;
	GT t;
	KB kb;

	lower_begin(lw, &kb, n);
	if (chosen)   /* over the direct loops (lower_conv) */
		lower_step(lw, &kb, kstep_make(KST_IM2COL, 0, 0, 0, 0));
	gemm_nr(lw, &kb, cv->M, &MR, &NR);
	bx = lower_in(lw, &kb, n, 0);
	/* pointwise on planes narrower than a tile (MobileNet's last 3x3
	 * stages: 9 of a tile's 32 columns did work, scalar) with many
	 * output channels: the transposed product, Y^T (P x M) = X^T W^T,
	 * W^T constant in B panels, so the tiles run along the channels.
	 * Also on small planes with long sums (tune.conv_tr_plane,
	 * conv_tr_k: SqueezeNet's 13 x 13 squeezes and classifier, K 256 to
	 * 512): no run-time copy of X into panels, no narrow last panel (169
	 * = 5 x 32 + 9), and the transposed tile stores, a cost per output
	 * where the copy's is per input, are paid over K (0.05 -> 0.04 ms
	 * and 0.93 -> 0.86 ms on an AMD EPYC; with K of 64 the stores made
	 * the expand convs 1.2x slower).  Not with many output channels
	 * (tune.conv_tr_m): on a Sapphire Rapids with 512-bit vectors the
	 * classifier (1000 channels, 31 panels each reading all of X
	 * strided) was 7% faster plain, 1.33 -> 1.24 ms, its squeezes (48
	 * and 64) 0-9% slower */
	if (pw && gemm_cpu(lw) && cv->M >= NR &&
	    (P < NR || (P <= tune(lw)->conv_tr_plane && K >= tune(lw)->conv_tr_k &&
	                (!tune(lw)->conv_tr_m || cv->M <= tune(lw)->conv_tr_m))))
		TRY(gemm_pack_const(lw, n, 1, K, cv->M, 1, K, gemm_nr(lw, &kb, P, &MR, &NR), 1,
		                    &bpacked, &blast));
	/* constant weights: A (M x K) in row panels, packed at compile time
	 * as the panels of A^T (K x M, column stride K) */
	if (bpacked < 0)
		TRY(gemm_pack_const(lw, n, 1, K, cv->M, 1, K, MR, 0, &apacked, &alast));
	bw = apacked >= 0 ? lower_bind(lw, &kb, apacked, KA_READ)
	   : bpacked >= 0 ? lower_bind(lw, &kb, bpacked, KA_READ) : lower_in(lw, &kb, n, 1);
	if (has_in(n, 2))
		bb = lower_in(lw, &kb, n, 2);
	by = lower_out(lw, &kb, n, 0);
	bc = pw ? bx : lower_bind(lw, &kb, col, KA_RW);
	if (bat)
		by2 = lower_bind(lw, &kb, y2, KA_RW);
	d0 = kb.depth;
	/* col is reused image by image; batched: one col for all */
	vn = bat ? I(&kb, 0) : loop(&kb, "n", cv->N, 0);
	dn = kb.depth;

	/* im2col */
	if (!pw) {
		vc = loop(&kb, "c", cv->C, KF_PARALLEL);
		vkh = loop(&kb, "kh", KH, KF_PARALLEL);
		vkw = loop(&kb, "kw", KW, KF_PARALLEL);
		r = madd(&kb, madd(&kb, vkw, vkh, KW), vc, KH * KW);
		if (bat)
			vn = loop(&kb, "n", cv->N, KF_PARALLEL);
		voh = loop(&kb, "oh", OH, KF_PARALLEL);
		ih = kb_bin(&kb, KO_SUB, add(&kb, mul(&kb, voh, I(&kb, w->s[0])),
		                             mul(&kb, vkh, I(&kb, w->d[0]))), I(&kb, w->pb[0]));
		vow = loop(&kb, "ow", OW, KF_PARALLEL);
		iw = kb_bin(&kb, KO_SUB, add(&kb, mul(&kb, vow, I(&kb, w->s[1])),
		                             mul(&kb, vkw, I(&kb, w->d[1]))), I(&kb, w->pb[1]));
		ok = kb_bin(&kb, KO_AND,
		            kb_bin(&kb, KO_AND, kb_bin(&kb, KO_GE, ih, I(&kb, 0)),
		                   kb_bin(&kb, KO_LT, ih, I(&kb, H))),
		            kb_bin(&kb, KO_AND, kb_bin(&kb, KO_GE, iw, I(&kb, 0)),
		                   kb_bin(&kb, KO_LT, iw, I(&kb, W))));
		src = madd(&kb, madd(&kb, iw, ih, W), madd(&kb, vc, vn, cv->C), H * W);
		q = madd(&kb, vow, voh, OW);
		if (bat)
			q = madd(&kb, q, vn, P);
		kb_store(&kb, bc, madd(&kb, q, r, NP),
		         kb_select(&kb, ok, kb_guard_loads(&kb, ok, kb_cast(&kb, DT_F32,
		                                                  kb_load(&kb, bx, src))),
		                   kb_const_f(&kb, DT_F32, 0)));
		close_to(&kb, dn);
		if (bat)
			vn = I(&kb, 0);
	}

	memset(&t, 0, sizeof t);
	if (bpacked >= 0) {   /* Y[n]^T = X[n]^T W^T + bias, the epilogue in the tiles' stores */
		t.dt = DT_F32;
		t.M = P;
		t.N = cv->M;
		t.K = K;
		t.a = (Mat){ bx, mul(&kb, vn, I(&kb, K * P)), 1, P, 0 };
		t.b = (Mat){ bw, I(&kb, 0), 0, 0, 1, blast };
		t.c = (Mat){ bb, I(&kb, 0), 0, bb >= 0 ? 1 : 0, 0 };
		t.alpha = t.beta = 1;
		t.y = by;
		t.yoff = mul(&kb, vn, I(&kb, cv->M * P));
		t.yt = 1;
		gemm_blocked(lw, &kb, n, &t);   /* the epilogue in the tiles' stores */
		close_to(&kb, d0);
		lower_end(lw, &kb);
		return BURN_OK;
	}
	/* Y[n] = W * col + bias (batched: y2 = W * col + bias) */
	t.dt = DT_F32;
	t.M = cv->M;
	t.N = NP;
	t.K = K;
	t.a = (Mat){ bw, I(&kb, 0), K, 1, apacked >= 0 };
	t.b = (Mat){ bc, pw ? mul(&kb, vn, I(&kb, K * P)) : I(&kb, 0), NP, 1, 0 };
	/* copied into panels (im2col writing them directly costs a division
	 * per element, more than the copy) */
	t.bpack = gemm_bpack(lw, cv->M, NP);
	/* pointwise, few rows (SqueezeNet's squeeze convs): the copy costs
	 * about what reading X costs the tiles, so only the last panel is
	 * copied (so that its tile vectorizes) and the full ones read X */
	if (pw && gemm_cpu(lw) && cv->M <= tune(lw)->gemm_pack_tiles * tune(lw)->gemm_mr)
		t.bpack = 2;
	t.c = (Mat){ bb, I(&kb, 0), bb >= 0 ? 1 : 0, 0 };
	t.alpha = t.beta = 1;
	t.y = bat ? by2 : by;
	t.yoff = bat ? I(&kb, 0) : mul(&kb, vn, I(&kb, cv->M * P));
	/* batched: y2's rows are not the output's, the epilogue runs below */
	gemm_blocked(lw, &kb, bat ? NULL : n, &t);
	if (bat) {
		KRef vm, yrow, p;
		int drow;
		vn = loop(&kb, "n", cv->N, KF_PARALLEL);
		vm = loop(&kb, "m", cv->M, KF_PARALLEL);
		drow = kb.depth;
		yrow = mul(&kb, madd(&kb, vm, vn, cv->M), I(&kb, P));
		p = loop(&kb, "p", P, KF_PARALLEL);
		kb_store(&kb, by, add(&kb, yrow, p),
		         kb_load(&kb, by2, add(&kb, madd(&kb, p, vn, P), mul(&kb, vm, I(&kb, NP)))));
		close_to(&kb, drow);
		lower_epi_run(lw, &kb, n, by, yrow, P);
	}
	close_to(&kb, d0);
	lower_end(lw, &kb);
	return BURN_OK;
}

/*
 * The padded phase planes of X (lower_conv_igemm and lower_conv_dw): for
 * each image n, xp[n*xsz + ((c*sh + ph)*sw + pw)*Hs*Ws + i*Ws + j] =
 * X[n, c, i*sh + ph - pt, j*sw + pw - pl], or 0 outside X; the elements
 * from the planes' end to xsz zeroed.
 */
static void
conv_planes(KB *kb, const CV *cv, int bx, int bxp, int64_t xsz, int64_t Ws)
{
	const Win *w = &cv->w;
	int64_t sh = w->s[0], sw = w->s[1], H = w->in[0], W = w->in[1];
	int64_t Hs = (H + w->pb[0] + w->pe[0] + sh - 1) / sh;
	int64_t plane = Hs * Ws, planes = cv->C * sh * sw * plane;
	int d0 = kb->depth, dn, dc;
	KRef vn, vc, vi, vj, base, row;

	vn = loop(kb, "n", cv->N, KF_PARALLEL);
	dn = kb->depth;
	vc = loop(kb, "c", cv->C, KF_PARALLEL);
	dc = kb->depth;
	/* each phase with its rows and columns inside X as constant ranges:
	 * i in [ilo, ihi), j in [jlo, jhi) (ih = i*sh + ph - pt, iw likewise),
	 * so the copy runs have no tests and the padding is stores of 0 */
	for (int64_t ph = 0; ph < sh; ph++)
		for (int64_t pw = 0; pw < sw; pw++) {
			int64_t ilo = (w->pb[0] - ph + sh - 1) / sh, ihi = (H + w->pb[0] - ph + sh - 1) / sh;
			int64_t jlo = (w->pb[1] - pw + sw - 1) / sw, jhi = (W + w->pb[1] - pw + sw - 1) / sw;
			ilo = ilo < 0 ? 0 : ilo > Hs ? Hs : ilo;
			ihi = ihi < ilo ? ilo : ihi > Hs ? Hs : ihi;
			jlo = jlo < 0 ? 0 : jlo > Ws ? Ws : jlo;
			jhi = jhi < jlo ? jlo : jhi > Ws ? Ws : jhi;
			base = add(kb, mul(kb, vn, I(kb, xsz)),
			           mul(kb, madd(kb, I(kb, ph * sw + pw), vc, sh * sw), I(kb, plane)));
			for (int part = 0; part < 3; part++) {   /* rows above, inside, below */
				int64_t lo = part == 0 ? 0 : part == 1 ? ilo : ihi;
				int64_t hi = part == 0 ? ilo : part == 1 ? ihi : Hs;
				if (lo >= hi)
					continue;
				vi = kb_get(kb, kb_for(kb, "i", I(kb, lo), I(kb, hi), KF_PARALLEL));
				row = madd(kb, base, vi, Ws);
				if (part != 1) {
					vj = loop(kb, "j", Ws, KF_PARALLEL);
					kb_store(kb, bxp, add(kb, row, vj), kb_const_f(kb, DT_F32, 0));
					close_to(kb, dc);
					continue;
				}
				for (int cp = 0; cp < 3; cp++) {
					int64_t a = cp == 0 ? 0 : cp == 1 ? jlo : jhi;
					int64_t b = cp == 0 ? jlo : cp == 1 ? jhi : Ws;
					int dj = kb->depth;
					KRef src;
					if (a >= b)
						continue;
					vj = kb_get(kb, kb_for(kb, "j", I(kb, a), I(kb, b), KF_PARALLEL));
					if (cp != 1) {
						kb_store(kb, bxp, add(kb, row, vj), kb_const_f(kb, DT_F32, 0));
					} else {
						/* X[n, c, i*sh + ph - pt, j*sw + pw - pl] */
						src = madd(kb, madd(kb, I(kb, pw - w->pb[1]), vj, sw),
						           madd(kb, I(kb, ph - w->pb[0]), vi, sh), W);
						src = add(kb, src, mul(kb, madd(kb, vc, vn, cv->C), I(kb, H * W)));
						kb_store(kb, bxp, add(kb, row, vj),
						         kb_cast(kb, DT_F32, kb_load(kb, bx, src)));
					}
					close_to(kb, dj);
				}
				close_to(kb, dc);
			}
		}
	close_to(kb, dn);
	if (xsz > planes) {   /* what the last rows read past the planes */
		KRef e = kb_get(kb, kb_for(kb, "e", I(kb, planes), I(kb, xsz), KF_PARALLEL));
		kb_store(kb, bxp, madd(kb, e, vn, xsz), kb_const_f(kb, DT_F32, 0));
	}
	close_to(kb, d0);
}

/*
 * f32 2-D depthwise convolution (groups = channels = outputs) over the
 * padded phase planes of X (conv_planes, a kernel of its own), each
 * output element summed in one pass of its taps, written out:
 *
 *   for n, c (parallel), oh, ow:
 *     Y[n,c,oh,ow] = bias[c];  for kh, kw:  Y += W[c,kh,kw] * xp[tap + oh*Ws + ow]
 *     Y[n,c,oh,ow] = the fused epilogue of it
 *
 * tap the plane of phase (kh*dh % sh, kw*dw % sw) plus row kh*dh / sh and
 * column kw*dw / sw in it.  The ow loop has no padding tests and reads
 * contiguous runs, so it vectorizes, and the C compiler keeps Y's element
 * in a register over the taps.  The direct loops, a pass over an output
 * row per tap with the row's valid range clamped, were MobileNet's most
 * expensive kernels (rows 3 to 48 wide).  The sum's order is theirs.
 */
static int
lower_conv_dw(Lower *lw, Node *n, CV *cv)
{
	Win *w = &cv->w;
	int64_t sh = w->s[0], sw = w->s[1], KH = w->k[0], KW = w->k[1];
	int64_t OH = w->out[0], OW = w->out[1];
	int64_t Hs = (w->in[0] + w->pb[0] + w->pe[0] + sh - 1) / sh;
	int64_t Ws = (w->in[1] + w->pb[1] + w->pe[1] + sw - 1) / sw;
	int64_t plane = Hs * Ws, xsz = cv->C * sh * sw * plane, xdim[2] = { cv->N, xsz };
	int xp = lower_temp(lw, DT_F32, 2, xdim), bx, bxp, bw, bb = -1, by, d0;
	KRef vn, vc, voh, vow, lin, xb;
	KB kb;

	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	bxp = lower_bind(lw, &kb, xp, KA_WRITE);
	conv_planes(&kb, cv, bx, bxp, xsz, Ws);
	lower_end(lw, &kb);

	lower_begin(lw, &kb, n);
	lower_step(lw, &kb, kstep_make(KST_DIRECT, 0, 0, 0, 0));
	bxp = lower_bind(lw, &kb, xp, KA_READ);
	bw = lower_in(lw, &kb, n, 1);
	if (has_in(n, 2))
		bb = lower_in(lw, &kb, n, 2);
	by = lower_out(lw, &kb, n, 0);
	d0 = kb.depth;
	vn = loop(&kb, "n", cv->N, KF_PARALLEL);
	vc = loop(&kb, "c", cv->C, KF_PARALLEL);
	voh = loop(&kb, "oh", OH, KF_PARALLEL);
	vow = loop(&kb, "ow", OW, KF_PARALLEL);
	lin = madd(&kb, madd(&kb, vow, voh, OW), madd(&kb, vc, vn, cv->C), OH * OW);
	xb = add(&kb, madd(&kb, mul(&kb, vc, I(&kb, sh * sw * plane)), vn, xsz),
	         madd(&kb, vow, voh, Ws));
	kb_store(&kb, by, lin, bb >= 0 ? kb_cast(&kb, DT_F32, kb_load(&kb, bb, vc))
	                               : kb_const_f(&kb, DT_F32, 0));
	for (int64_t kh = 0; kh < KH; kh++)
		for (int64_t kw = 0; kw < KW; kw++) {
			int64_t rh = kh * w->d[0], rw = kw * w->d[1];
			int64_t tap = ((rh % sh) * sw + rw % sw) * plane + rh / sh * Ws + rw / sw;
			KRef wv = kb_cast(&kb, DT_F32, kb_load(&kb, bw, add(&kb, mul(&kb, vc,
			                  I(&kb, KH * KW)), I(&kb, kh * KW + kw))));
			kb_store(&kb, by, lin, add(&kb, kb_load(&kb, by, lin),
			                           mul(&kb, wv, kb_load(&kb, bxp, add(&kb, xb, I(&kb, tap))))));
		}
	kb_store(&kb, by, lin, lower_epi_value(lw, &kb, n, lin, kb_load(&kb, by, lin)));
	close_to(&kb, d0);
	lower_end(lw, &kb);
	return BURN_OK;
}

/*
 * f32 2-D convolution without groups as an implicit GEMM: no im2col
 * matrix and no run-time panel copy of it.  X is copied once into planes
 * padded with its zeros and split by stride phase, each plane Hs x Ws
 * (Hs = ceil(Hp / sh), Ws = ceil(Wp / sw), Hp x Wp the padded input):
 *
 *   xp[((c*sh + ph)*sw + pw)*Hs*Ws + i*Ws + j] = X[n, c, i*sh + ph - pt, j*sw + pw - pl]
 *                                                or 0 outside X
 *
 * Then tap (c, kh, kw) reads, for output (oh, ow), the element at
 * tab[k] + oh*Ws + ow, where tab[k] is the plane of phase (kh*dh % sh,
 * kw*dw % sw) plus row (kh*dh / sh) and column (kw*dw / sw) in it: B of
 * the GEMM is K rows of the flat xp, each row contiguous from tab[k] (an
 * i64 constant), with columns q = oh*Ws + ow over the OH x Ws grid.  The
 * Ws - OW columns right of each output row are computed and dropped (the
 * padding's and the phases' columns: 57 computed for 55 in SqueezeNet's
 * 55 x 55 planes):
 *
 *   kernel 1: for n: xp[n] = the padded phase planes of X[n]
 *   kernel 2: for n (parallel): y2[n] (M x OH*Ws) = W (M x K, panels packed at
 *             compile time) * B + bias, B[k, q] = xp[n][tab[k] + q]
 *   kernel 3: Y = y2 without the dropped columns; the fused epilogue
 *
 * A row's read runs past the planes by up to a row and a tap (and the
 * last panel's padding, up to the widest tile), so xp has that much more,
 * zeroed.  Against im2col (K x P written, then copied into panels), xp is
 * about C*Hp*Wp floats and nothing is copied twice; the tiles read B rows
 * from the planes, which stay in L2.  The compiler's constant tables make
 * it: lowering only (lw->target set), the CPU form of the GEMM (gemm_cpu).
 */
static int
lower_conv_igemm(Lower *lw, Node *n, CV *cv)
{
	Graph *g = lw->g;
	Win *w = &cv->w;
	int64_t sh = w->s[0], sw = w->s[1], KH = w->k[0], KW = w->k[1];
	int64_t H = w->in[0], W = w->in[1], OH = w->out[0], OW = w->out[1];
	int64_t Hs = (H + w->pb[0] + w->pe[0] + sh - 1) / sh;
	int64_t Ws = (W + w->pb[1] + w->pe[1] + sw - 1) / sw;
	int64_t K, P, NQ, plane;
	int64_t planes, MR, NR, nr, last, alast, tmax = 0, xsz, owp;
	int rows;
	int64_t xdim[2], ydim[2], tdim[1];
	int64_t *tab;
	int xp, y2, tv, bx, bw, bb = -1, by, bxp, by2, btab, apacked, d0, rc;
	KRef vn, vm, voh, vow;
	GT t;
	KB kb;

	/* stride 1 along rows: each row's right padding is the next row's
	 * left (a row is pl zeros and its W values; a tap right of it reads
	 * the next row's first pr <= pl columns, zeros, or the zeroed slack
	 * after the last plane), so Ws is pr narrower and so is the GEMM (13
	 * x 13 planes: 182 columns for 169 instead of 195, under 192).  It
	 * needs pr <= (KW-1)*dw too: OW <= Ws, each output its own column. */
	if (sw == 1 && w->pe[1] > 0 && w->pe[1] <= w->pb[1] && w->pe[1] <= (KW - 1) * w->d[1])
		Ws -= w->pe[1];
	K = cv->C * KH * KW;
	P = OH * OW;
	NQ = OH * Ws;
	plane = Hs * Ws;
	planes = cv->C * sh * sw * plane;
	ydim[0] = cv->N * cv->M;
	ydim[1] = NQ;
	tdim[0] = K;

	/* the offsets table (a constant of K) */
	if (!(tab = calloc((size_t)K, sizeof *tab)))
		return burn_fail(lw->ctx, BURN_ERR_NOMEM, "out of memory");
	for (int64_t c = 0; c < cv->C; c++)
		for (int64_t kh = 0; kh < KH; kh++)
			for (int64_t kw = 0; kw < KW; kw++) {
				int64_t rh = kh * w->d[0], rw = kw * w->d[1];
				int64_t o = ((c * sh + rh % sh) * sw + rw % sw) * plane +
				            rh / sh * Ws + rw / sw;
				tab[(c * KH + kh) * KW + kw] = o;
				tmax = o > tmax ? o : tmax;
			}
	tv = graph_add_value(g, arena_printf(&g->arena, "%s.taps", NOUT(g, n, 0)->name));
	rc = tv < 0 ? burn_fail(lw->ctx, BURN_ERR_NOMEM, "out of memory")
	            : graph_set_const(lw->ctx, g, tv, DT_I64, 1, tdim, tab);
	free(tab);
	TRY(rc);

	/* kernel 1: the padded phase planes of every image (a kernel of its
	 * own: in one function with the GEMM, the C compiler keeps this loop's
	 * vector constants in registers the GEMM tile needs) */
	lower_begin(lw, &kb, n);
	lower_step(lw, &kb, kstep_make(KST_IMPLICIT, 0, 0, 0, 0));
	/* a short sum (tune.conv_short_k: the first Conv of an RGB image, K
	 * = 27) into a large output (tune.conv_short_out) in the row form
	 * below takes tiles of half the rows and twice the columns by
	 * default: each tile's bias, epilogue and stores weigh on only K
	 * steps, and a 4 x 64 tile stores four runs of 256 bytes where the 8
	 * x 32 one stored eight of 128, in as many planes of Y, on their way
	 * to memory (SqueezeNet's first Conv, 3 MB out, 0.46-0.47 -> 0.37-0.39
	 * ms on a Sapphire Rapids, the LLVM JIT's per-kernel medians; the
	 * stems of MobileNet and U-Net, 150 and 260 KB out, were 4-5% slower
	 * so) */
	{
		KStep d = target_step(target_or_default(lw->target), KST_TILE, 0);
		int64_t wn = d.narg >= 2 ? 2 * d.arg[1] : 0, wl = wn ? gemm_last(lw, OW, wn) : 0;
		if (d.kind == KST_TILE && wn && d.arg[0] % 2 == 0 && K <= tune(lw)->conv_short_k &&
		    cv->M * OH * OW * 4 >= tune(lw)->conv_short_out &&
		    OW / wn * wn + (OW % wn ? (wl ? wl : OW % wn) : 0) <= Ws)
			lower_step(lw, &kb, kstep_make(KST_TILE, 2, d.arg[0] / 2, wn, 0));
	}
	/* the GEMM's tile, decided here (kernel 2 takes it): the planes'
	 * slack is the furthest element a tile reads, the last tap's row to
	 * the end of the last panel, padded (gemm_last) */
	nr = gemm_nr(lw, &kb, cv->M, &MR, &NR);
	/* by rows, where an output row's tiles compute no more columns than
	 * the planes' row (OW in whole tiles and the padded last panel,
	 * gemm_last): each output row a GEMM of N = OW whose tiles store
	 * into Y at row stride P and run the fused epilogue, so there is no
	 * y2 and no copy kernel (SqueezeNet's first Conv: 111 = 3 x 32 + 15
	 * -> 16, 112 columns as in the planes' rows, and its 3 MB copy, 0.2
	 * ms on a Sapphire Rapids, gone; U-Net's 64, 32 and 16 wide rows).
	 * Narrower rows against their tiles (55 -> 64, 27 -> 32, 13 -> 16)
	 * keep the flat form. */
	last = gemm_last(lw, OW, nr);
	owp = OW / nr * nr + (OW % nr ? (last ? last : OW % nr) : 0);
	rows = owp <= Ws;
	if (rows)
		xsz = tmax + (OH - 1) * Ws + owp;
	else {
		last = gemm_last(lw, NQ, nr);
		xsz = tmax + NQ / nr * nr + (last ? last : NQ % nr);
	}
	xsz = xsz > planes ? xsz : planes;
	xdim[0] = cv->N;
	xdim[1] = xsz;
	xp = lower_temp(lw, DT_F32, 2, xdim);
	y2 = rows ? -1 : lower_temp(lw, DT_F32, 2, ydim);
	bx = lower_in(lw, &kb, n, 0);
	bxp = lower_bind(lw, &kb, xp, KA_WRITE);
	conv_planes(&kb, cv, bx, bxp, xsz, Ws);
	lower_end(lw, &kb);

	/* kernel 2: the GEMM, image by image, into y2 */
	lower_begin(lw, &kb, n);
	lower_step(lw, &kb, kstep_make(KST_TILE, 2, (int)MR, (int)NR, 0));
	nr = gemm_nr(lw, &kb, cv->M, &MR, &NR);
	last = gemm_last(lw, rows ? OW : NQ, nr);
	if (rows ? tmax + (OH - 1) * Ws + OW / nr * nr + last > xsz
	         : tmax + NQ / nr * nr + last > xsz)   /* a tile of its own: no padding */
		last = 0;
	TRY(gemm_pack_const(lw, n, 1, K, cv->M, 1, K, MR, 0, &apacked, &alast));
	bw = apacked >= 0 ? lower_bind(lw, &kb, apacked, KA_READ) : lower_in(lw, &kb, n, 1);
	if (has_in(n, 2))
		bb = lower_in(lw, &kb, n, 2);
	bxp = lower_bind(lw, &kb, xp, KA_READ);
	by2 = rows ? lower_out(lw, &kb, n, 0) : lower_bind(lw, &kb, y2, KA_WRITE);
	btab = lower_bind(lw, &kb, tv, KA_READ);
	d0 = kb.depth;
	/* the images share nothing (no B panels: the tiles read the planes),
	 * so a batch goes to threads image by image; one image, by blocks of
	 * rows (gemm_blocked's i0, outermost then), or by output rows */
	vn = loop(&kb, "n", cv->N, KF_PARALLEL);
	memset(&t, 0, sizeof t);
	if (rows) {   /* output row oh: Y[n, :, oh, :] = W * B + bias, B[k, ow] = xp[n][tab[k] + oh*Ws + ow] */
		voh = loop(&kb, "oh", OH, KF_PARALLEL);
		t.dt = DT_F32;
		t.M = cv->M;
		t.N = OW;
		t.K = K;
		t.a = (Mat){ bw, I(&kb, 0), K, 1, apacked >= 0 };
		t.b = (Mat){ bxp, add(&kb, mul(&kb, vn, I(&kb, xsz)), mul(&kb, voh, I(&kb, Ws))),
		             0, 1, 0, last, 1, btab };
		t.c = (Mat){ bb, I(&kb, 0), bb >= 0 ? 1 : 0, 0 };
		t.alpha = t.beta = 1;
		t.y = by2;
		t.yoff = add(&kb, mul(&kb, vn, I(&kb, cv->M * P)), mul(&kb, voh, I(&kb, OW)));
		t.ldy = P;
		gemm_blocked(lw, &kb, n, &t);
		close_to(&kb, d0);
		lower_end(lw, &kb);
		return BURN_OK;
	}
	t.dt = DT_F32;
	t.M = cv->M;
	t.N = NQ;
	t.K = K;
	t.a = (Mat){ bw, I(&kb, 0), K, 1, apacked >= 0 };
	t.b = (Mat){ bxp, mul(&kb, vn, I(&kb, xsz)), 0, 1, 0, last, 1, btab };
	t.c = (Mat){ bb, I(&kb, 0), bb >= 0 ? 1 : 0, 0 };
	t.alpha = t.beta = 1;
	t.y = by2;
	t.yoff = mul(&kb, vn, I(&kb, cv->M * NQ));
	gemm_blocked(lw, &kb, NULL, &t);
	close_to(&kb, d0);
	lower_end(lw, &kb);

	/* kernel 3: y2 without the dropped columns into Y, through the fused
	 * epilogue in the same pass (a kernel of its own too: with the copy
	 * loop in the GEMM's function, gcc 12 spilled a B vector of the tile) */
	lower_begin(lw, &kb, n);
	by = lower_out(lw, &kb, n, 0);
	by2 = lower_bind(lw, &kb, y2, KA_READ);
	d0 = kb.depth;
	vm = loop(&kb, "m", cv->N * cv->M, KF_PARALLEL);
	voh = loop(&kb, "oh", OH, KF_PARALLEL);
	vow = loop(&kb, "ow", OW, KF_PARALLEL);
	{
		KRef lin = add(&kb, mul(&kb, vm, I(&kb, P)), madd(&kb, vow, voh, OW));
		kb_store(&kb, by, lin, lower_epi_value(lw, &kb, n, lin,
		         kb_load(&kb, by2, add(&kb, mul(&kb, vm, I(&kb, NQ)),
		                               madd(&kb, vow, voh, Ws)))));
	}
	close_to(&kb, d0);
	lower_end(lw, &kb);
	return BURN_OK;
}

/*
 * for n, g, m (parallel): m' = g*Mg + m
 *   for o0..o[r-2] (parallel): one output row Y[n,m',o..,:]
 *     row = bias[m']
 *     for c < Cg, k0..k[r-2] (if the input row is inside):
 *       for kl: w = W[m',c,k..,kl]
 *         for ol in the range where the input is inside:
 *           row[ol] += w * X[n, g*Cg+c, o*s+k*d-p.., ol*s+kl*d-p]
 */
int
lower_conv(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	const Value *y = NOUT(g, n, 0);
	int isint = n->op == OP_ConvInteger;
	int dt = cdt(y->dtype);
	int bx, bw, bb = -1, by, wv, bv, d0, drow, ns, L, f32, im2col, unroll, lanes;
	int racc = -1;
	int64_t Cg, Mg, xsz, ysz, wsz, xsp[BURN_MAX_RANK], ysp[BURN_MAX_RANK],
	        wsp[BURN_MAX_RANK];
	KRef vn, vg, vm, vml, vc, vci, ybase, xbase, wbase, o[BURN_MAX_RANK],
	     xzp = 0, wzp = 0;
	CV cv;
	Win *w = &cv.w;
	KB kb;

	TRY(conv_shape(lw->ctx, g, n, &cv));
	ns = w->nsp;
	/* pointwise: a matmul over the flattened spatial dims */
	{
		int pw = 1;
		for (int i = 0; i < ns; i++)
			if (w->k[i] != 1 || w->s[i] != 1 || w->pb[i] || w->pe[i])
				pw = 0;
		if (pw && ns > 1) {
			int64_t p = prod(ns, w->in);
			ns = w->nsp = 1;
			w->in[0] = w->out[0] = p;
			w->k[0] = w->s[0] = w->d[0] = 1;
			w->pb[0] = w->pe[0] = 0;
		}
	}
	/* f32 2-D: im2col + GEMM or the direct loops, a schedule step (the
	 * kernel does not exist yet: its name is the one lower_begin gives) */
	f32 = !isint && cv.G == 1 && y->dtype == DT_F32 &&
	      NIN(g, n, 0)->dtype == DT_F32 && NIN(g, n, 1)->dtype == DT_F32;
	if (f32 && ns == 2) {
		const KStep *want = lower_want(lw, n, KST_IM2COL);
		int form = want ? want->kind : target_step(target_or_default(lw->target),
		                                           KST_IM2COL, 0).kind;
		/* the implicit form needs constant tables: not when folding; and
		 * planes narrower than a tile in several images take im2col's
		 * batched form (lower_conv_gemm) */
		if (form == KST_IMPLICIT && lw->target && gemm_cpu(lw) &&
		    !(cv.N > 1 && w->out[0] * w->out[1] < tune(lw)->gemm_nr))
			return lower_conv_igemm(lw, n, &cv);
		im2col = form == KST_IM2COL || form == KST_IMPLICIT;
		if (im2col)
			return lower_conv_gemm(lw, n, &cv, 1);
	}
	if (f32 && ns == 1 && w->k[0] == 1 && w->s[0] == 1 && !w->pb[0] && !w->pe[0])
		return lower_conv_gemm(lw, n, &cv, 0);
	/* depthwise: the planes and each output's taps in one pass */
	if (!isint && ns == 2 && cv.G > 1 && cv.G == cv.C && cv.M == cv.C &&
	    y->dtype == DT_F32 && NIN(g, n, 0)->dtype == DT_F32 && NIN(g, n, 1)->dtype == DT_F32 &&
	    lw->target && gemm_cpu(lw))
		return lower_conv_dw(lw, n, &cv);
	L = ns - 1;
	Cg = cv.C / cv.G;
	Mg = cv.M / cv.G;
	xsz = shape_strides(ns, w->in, xsp);
	ysz = shape_strides(ns, w->out, ysp);
	wsz = shape_strides(ns, w->k, wsp);

	lower_begin(lw, &kb, n);
	if (f32 && ns == 2)
		lower_step(lw, &kb, kstep_make(KST_DIRECT, 0, 0, 0, 0));
	bx = lower_in(lw, &kb, n, 0);
	bw = lower_in(lw, &kb, n, 1);
	if (!isint && has_in(n, 2))
		bb = lower_in(lw, &kb, n, 2);
	by = lower_out(lw, &kb, n, 0);
	wv = kb_var(&kb, dt, "w");
	bv = kb_var(&kb, dt, "bias");
	/* an f16/bf16/float8 output row accumulates in a private f32 row and
	 * rounds once when it is stored, not at every partial sum */
	if (dtype_is_storage(y->dtype))
		racc = kb_buf(&kb, dt, w->out[L], -1, KS_LOCAL, KA_RW);
	d0 = kb.depth;
	if (isint)
		xzp = zero_point(lw, &kb, n, 2, I(&kb, 0));

	vn = loop(&kb, "n", cv.N, KF_PARALLEL);
	vg = loop(&kb, "g", cv.G, KF_PARALLEL);
	vml = loop(&kb, "m", Mg, KF_PARALLEL);
	vm = madd(&kb, vml, vg, Mg);
	if (isint)
		wzp = zero_point(lw, &kb, n, 3, vm);
	ybase = madd(&kb, mul(&kb, vn, I(&kb, cv.M * ysz)), vm, ysz);
	if (target_or_default(lw->target)->max_block_threads > 0) {
		/* GPU targets: one output element per iteration of one nest of
		 * parallel loops (n, g, m and every output dim), its sum over
		 * the channels and the window in a variable, then the fused
		 * epilogue on that element: schedule_gpu maps the whole nest
		 * onto threads.  (The row form below accumulates rows in memory
		 * tap by tap, which a thread per row would walk serially.) */
		KRef acc;
		for (int j = 0; j <= L; j++) {
			o[j] = loop(&kb, oname[j], w->out[j], KF_PARALLEL);
			ybase = madd(&kb, ybase, o[j], ysp[j]);
		}
		kb_set(&kb, bv, bb >= 0 ? kb_load(&kb, bb, vm) : cnum(&kb, dt, 0));
		drow = kb.depth;
		vc = loop(&kb, "c", Cg, 0);
		vci = madd(&kb, vc, vg, Cg);
		xbase = madd(&kb, mul(&kb, vn, I(&kb, cv.C * xsz)), vci, xsz);
		wbase = madd(&kb, mul(&kb, vm, I(&kb, Cg * wsz)), vc, wsz);
		win_taps(&kb, w, L + 1, o, xsp, wsp, &xbase, &wbase);
		{
			KRef xv = kb_cast(&kb, dt, kb_load(&kb, bx, xbase));
			KRef wx = kb_cast(&kb, dt, kb_load(&kb, bw, wbase));
			if (isint) {
				xv = kb_bin(&kb, KO_SUB, xv, xzp);
				wx = kb_bin(&kb, KO_SUB, wx, wzp);
			}
			acc = add(&kb, kb_get(&kb, bv), mul(&kb, wx, xv));
			kb_set(&kb, bv, acc);
		}
		close_to(&kb, drow);
		kb_store(&kb, by, ybase, kb_get(&kb, bv));
		lower_epi_run(lw, &kb, n, by, ybase, 1);
		close_to(&kb, d0);
		lower_end(lw, &kb);
		return BURN_OK;
	}
	for (int j = 0; j < L; j++) {
		o[j] = loop(&kb, oname[j], w->out[j], KF_PARALLEL);
		ybase = madd(&kb, ybase, o[j], ysp[j]);
	}
	drow = kb.depth;
	/* the row starts as the bias */
	kb_set(&kb, bv, bb >= 0 ? kb_load(&kb, bb, vm) : cnum(&kb, dt, 0));
	{
		KRef v = loop(&kb, oname[L], w->out[L], KF_PARALLEL);
		if (racc >= 0)
			kb_store(&kb, racc, v, kb_get(&kb, bv));
		else
			kb_store(&kb, by, add(&kb, ybase, v), kb_get(&kb, bv));
		if (w->out[L] != 1)
			kb_end(&kb);
	}
	vc = loop(&kb, "c", Cg, 0);
	vci = madd(&kb, vc, vg, Cg);
	xbase = madd(&kb, mul(&kb, vn, I(&kb, cv.C * xsz)), vci, xsz);
	wbase = madd(&kb, mul(&kb, vm, I(&kb, Cg * wsz)), vc, wsz);
	win_taps(&kb, w, L, o, xsp, wsp, &xbase, &wbase);
	/* a narrow last kernel dim is unrolled here, so that each tap's output
	 * range is constant and its loop a plain one of known trip count */
	unroll = step1(lw, &kb, KST_UNROLL, 0);
	lanes = step1(lw, &kb, KST_VEC, w->out[L]);
	for (int t = 0; t < (w->k[L] <= unroll ? w->k[L] : 1); t++) {
		int lo, hi, dk = kb.depth;
		KRef kl = w->k[L] <= unroll ? I(&kb, t) :
		          loop(&kb, kname[L], w->k[L], 0);
		KRef off = kb_bin(&kb, KO_SUB, mul(&kb, kl, I(&kb, w->d[L])), I(&kb, w->pb[L]));
		KRef qlo = I(&kb, 0), qhi = I(&kb, w->out[L]), ol, xv, yi;
		KRef wx = kb_cast(&kb, dt, kb_load(&kb, bw, add(&kb, wbase, kl)));
		if (isint)
			wx = kb_bin(&kb, KO_SUB, wx, wzp);
		kb_set(&kb, wv, wx);
		if (win_check(w->out[L], w->s[L], w->k[L], w->d[L], w->pb[L], w->in[L],
		              &lo, &hi))
			win_span(&kb, off, w->s[L], w->in[L], w->out[L], &qlo, &qhi);
		for (int pass = 0; pass < 2; pass++) {
			int dp = kb.depth;
			if (!vl_open(lw, &kb, oname[L], qlo, qhi, lanes, pass, &ol))
				continue;
			xv = kb_cast(&kb, dt, kb_load(&kb, bx, add(&kb, xbase,
			             add(&kb, mul(&kb, ol, I(&kb, w->s[L])), off))));
			if (isint)
				xv = kb_bin(&kb, KO_SUB, xv, xzp);
			yi = racc >= 0 ? ol : add(&kb, ybase, ol);
			kb_store(&kb, racc >= 0 ? racc : by, yi,
			         add(&kb, kb_load(&kb, racc >= 0 ? racc : by, yi),
			             mul(&kb, kb_get(&kb, wv), xv)));
			close_to(&kb, dp);
		}
		close_to(&kb, dk);
	}
	/* the output row is final: the fused epilogue runs over it */
	close_to(&kb, drow);
	if (racc >= 0) {
		KRef v = loop(&kb, oname[L], w->out[L], KF_PARALLEL);
		kb_store(&kb, by, add(&kb, ybase, v), kb_load(&kb, racc, v));
		if (w->out[L] != 1)
			kb_end(&kb);
	}
	lower_epi_run(lw, &kb, n, by, ybase, w->out[L]);
	close_to(&kb, d0);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- ConvTranspose ------------------------------------------------------- */

static int
convt_shape(Ctx *c, Graph *g, Node *n, CV *cv)
{
	const Value *x, *w;
	const int64_t *op, *os;
	int nop, nos;
	Win *wn = &cv->w;

	TRY(need_in(c, g, n, 0, &x));
	TRY(need_in(c, g, n, 1, &w));
	if (w->rank != x->rank)
		return burn_fail(c, BURN_ERR_SHAPE, "W has rank %d, X rank %d", w->rank,
		                 x->rank);
	TRY(win_read(c, n, x, w->dim + 2, wn));
	cv->N = x->dim[0];
	cv->C = x->dim[1];
	cv->G = attr_int(n, "group", 1);
	if (cv->G < 1 || cv->C % cv->G || w->dim[0] != cv->C)
		return burn_fail(c, BURN_ERR_SHAPE, "group %lld does not fit C=%lld, W [%lld,..]",
		                 (long long)cv->G, (long long)cv->C, (long long)w->dim[0]);
	cv->M = w->dim[1] * cv->G;
	nop = attr_ints(n, "output_padding", &op);
	if (nop && nop != wn->nsp)
		return burn_fail(c, BURN_ERR_INVALID, "output_padding has %d entries", nop);
	nos = attr_ints(n, "output_shape", &os);
	if (nos == wn->nsp + 2) {
		os += 2;
		nos -= 2;
	}
	if (nos && nos != wn->nsp)
		return burn_fail(c, BURN_ERR_INVALID, "output_shape has %d entries", nos);
	for (int i = 0; i < wn->nsp; i++) {
		int64_t opad = nop ? op[i] : 0;
		int64_t full = wn->s[i] * (wn->in[i] - 1) + opad + (wn->k[i] - 1) * wn->d[i] + 1;
		if (opad < 0 || opad > WIN_MAX)
			return burn_fail(c, BURN_ERR_INVALID, "bad output_padding");
		if (nos || wn->autopad == PAD_SAME_UPPER || wn->autopad == PAD_SAME_LOWER) {
			int64_t o = nos ? os[i] : wn->in[i] * wn->s[i], tot;
			if (o < 0 || o > full + 2 * WIN_MAX)
				return burn_fail(c, BURN_ERR_INVALID, "bad output_shape");
			tot = full - o;
			if (tot < 0)
				tot = 0;  /* extra output beyond the last tap: zero (bias) */
			if (wn->autopad == PAD_SAME_UPPER) {
				wn->pb[i] = tot / 2;
				wn->pe[i] = tot - tot / 2;
			} else {
				wn->pb[i] = tot - tot / 2;
				wn->pe[i] = tot / 2;
			}
			wn->out[i] = o;
		} else {
			if (wn->autopad == PAD_VALID)
				wn->pb[i] = wn->pe[i] = 0;
			wn->out[i] = full - wn->pb[i] - wn->pe[i];
			if (wn->out[i] < 0)
				return burn_fail(c, BURN_ERR_SHAPE, "pads larger than the output");
		}
	}
	return BURN_OK;
}

int
infer_convt(Ctx *c, Graph *g, Node *n)
{
	const Value *x, *w, *b;
	int64_t d[BURN_MAX_RANK];
	CV cv;

	TRY(convt_shape(c, g, n, &cv));
	x = NIN(g, n, 0);
	w = NIN(g, n, 1);
	if (!dtype_is_float(x->dtype) || w->dtype != x->dtype)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "ConvTranspose on %s x %s",
		                 dtype_name(x->dtype), dtype_name(w->dtype));
	if ((b = NIN(g, n, 2)) && (b->dtype != x->dtype || value_numel(b) != cv.M))
		return burn_fail(c, BURN_ERR_SHAPE, "ConvTranspose: bias must be %s[%lld]",
		                 dtype_name(x->dtype), (long long)cv.M);
	d[0] = cv.N;
	d[1] = cv.M;
	for (int i = 0; i < cv.w.nsp; i++)
		d[i + 2] = cv.w.out[i];
	set_out(NOUT(g, n, 0), x->dtype, cv.w.nsp + 2, d);
	return BURN_OK;
}

/*
 * f32 2-D ConvTranspose without groups as a GEMM per image and a col2im,
 * in one kernel (the transpose of lower_conv_gemm; the input gradient of a
 * Conv is one, and the direct scatter below runs it at a few GFLOP/s):
 *
 *   for s (parallel), n in slice s (batch_loop):
 *     col[(m*KH + kh)*KW + kw, p] = sum_c W[c, m, kh, kw] X[n, c, p]
 *         (K = M*KH*KW rows, P = H*W columns: W^T (K x C) * X[n] (C x P),
 *         blocked by gemm_blocked; W^T is W read with exchanged strides)
 *     for m, oh (parallel): one output row, written by one iteration
 *       Y[n, m, oh, :] = bias[m]
 *       for kh with th = oh + pb - kh*d a multiple of s inside: ih = th/s
 *         for kw, for iw in the range where ow = iw*s + kw*d - pb is inside:
 *           Y[n, m, oh, ow] += col[(m*KH + kh)*KW + kw, ih*W + iw]
 *
 * The taps of one output row are added in (kh, kw) order, each row by the
 * iteration that owns it (no race between threads).  col (K x P, one
 * image) is scratch in the arena, one per slice of the batch (batch_loop:
 * the slices go to threads, each image's rows stay in one).  Chosen by
 * the same im2col step as Conv.
 */
static int
lower_convt_gemm(Lower *lw, Node *n, CV *cv)
{
	Win *w = &cv->w;
	int64_t KH = w->k[0], KW = w->k[1], H = w->in[0], W = w->in[1];
	int64_t OH = w->out[0], OW = w->out[1], P = H * W, K = cv->M * KH * KW;
	int64_t S = batch_slices(lw, cv->N, 2 * K * P * 4), cdim[2] = { S * K, P };
	int col = lower_temp(lw, DT_F32, 2, cdim);
	int bx, bc, bw, bb = -1, by, d0, dn, drow, lanes;
	KRef vn, vs, cbase, vm, voh, vkh, vkw, th, ih, yrow, crow, off, qlo, qhi, q;
	GT t;
	KB kb;

	lower_begin(lw, &kb, n);
	lower_step(lw, &kb, kstep_make(KST_IM2COL, 0, 0, 0, 0));
	bx = lower_in(lw, &kb, n, 0);
	bw = lower_in(lw, &kb, n, 1);
	if (has_in(n, 2))
		bb = lower_in(lw, &kb, n, 2);
	by = lower_out(lw, &kb, n, 0);
	bc = lower_bind(lw, &kb, col, KA_RW);
	d0 = kb.depth;
	/* col is reused image by image: one per slice of the batch */
	vn = batch_loop(&kb, cv->N, S, &vs);
	cbase = S > 1 ? mul(&kb, vs, I(&kb, K * P)) : I(&kb, 0);
	dn = kb.depth;

	/* col = W^T * X[n] */
	memset(&t, 0, sizeof t);
	t.dt = DT_F32;
	t.M = K;
	t.N = P;
	t.K = cv->C;
	t.a = (Mat){ bw, I(&kb, 0), 1, K };
	t.b = (Mat){ bx, mul(&kb, vn, I(&kb, cv->C * P)), P, 1 };
	t.c = (Mat){ -1, I(&kb, 0), 0, 0 };
	t.alpha = t.beta = 1;
	t.y = bc;
	t.yoff = cbase;
	t.bpack = gemm_bpack(lw, K, P);   /* per image, in the slice's panels */
	t.slices = S;
	t.slice = vs;
	gemm_blocked(lw, &kb, n, &t);
	close_to(&kb, dn);

	/* col2im, one output row per iteration */
	vm = loop(&kb, "m", cv->M, KF_PARALLEL);
	voh = loop(&kb, "oh", OH, KF_PARALLEL);
	drow = kb.depth;
	yrow = mul(&kb, madd(&kb, madd(&kb, voh, vm, OH), vn, cv->M * OH), I(&kb, OW));
	{
		KRef v = loop(&kb, "ow", OW, KF_PARALLEL);
		kb_store(&kb, by, add(&kb, yrow, v),
		         bb >= 0 ? kb_load(&kb, bb, vm) : kb_const_f(&kb, DT_F32, 0));
		close_to(&kb, drow);
	}
	vkh = loop(&kb, "kh", KH, 0);
	th = kb_bin(&kb, KO_SUB, I(&kb, w->pb[0]), mul(&kb, vkh, I(&kb, w->d[0])));
	th = add(&kb, voh, th);
	ih = w->s[0] == 1 ? th : kb_bin(&kb, KO_DIV, th, I(&kb, w->s[0]));
	{
		KRef ok = kb_bin(&kb, KO_AND, kb_bin(&kb, KO_GE, th, I(&kb, 0)),
		                 kb_bin(&kb, KO_LT, ih, I(&kb, H)));
		if (w->s[0] != 1)
			ok = kb_bin(&kb, KO_AND, ok, kb_bin(&kb, KO_EQ, kb_bin(&kb, KO_MOD, th,
			            I(&kb, w->s[0])), I(&kb, 0)));
		kb_if(&kb, ok);
	}
	vkw = loop(&kb, "kw", KW, 0);
	crow = add(&kb, mul(&kb, madd(&kb, madd(&kb, vkw, vkh, KW), vm, KH * KW), I(&kb, P)),
	           mul(&kb, ih, I(&kb, W)));
	if (S > 1)
		crow = add(&kb, cbase, crow);
	off = kb_bin(&kb, KO_SUB, mul(&kb, vkw, I(&kb, w->d[1])), I(&kb, w->pb[1]));
	win_span(&kb, off, w->s[1], OW, W, &qlo, &qhi);
	lanes = step1(lw, &kb, KST_VEC, W);
	for (int pass = 0; pass < 2; pass++) {
		int dp = kb.depth;
		KRef yi;
		if (!vl_open(lw, &kb, "iw", qlo, qhi, lanes, pass, &q))
			continue;
		yi = add(&kb, yrow, add(&kb, mul(&kb, q, I(&kb, w->s[1])), off));
		kb_store(&kb, by, yi, add(&kb, kb_load(&kb, by, yi),
		                          kb_load(&kb, bc, add(&kb, crow, q))));
		close_to(&kb, dp);
	}
	close_to(&kb, d0);
	lower_end(lw, &kb);
	return BURN_OK;
}

/*
 * for n, g, m (parallel): m' = g*Mg + m
 *   Y[n,m',:] = bias[m']
 *   for c < Cg, k0..k[r-1]: w = W[g*Cg+c, m, k..]
 *     for i0..i[r-2] (if the output row is inside):
 *       for il in the range where the output is inside:
 *         Y[n,m', i*s+k*d-p.., il*s+kl*d-p] += w * X[n,g*Cg+c,i..,il]
 */
int
lower_convt(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	const Value *y = NOUT(g, n, 0);
	int dt = cdt(y->dtype);
	int bx, bw, bb = -1, by, wv, d0, ns, L, f32;
	int64_t Cg, Mg, xsz, ysz, wsz, xsp[BURN_MAX_RANK], ysp[BURN_MAX_RANK],
	        wsp[BURN_MAX_RANK];
	KRef vn, vg, vm, vml, vc, vci, ybase, xbase, wbase, kk[BURN_MAX_RANK];
	CV cv;
	Win *w = &cv.w;
	KB kb;

	TRY(convt_shape(lw->ctx, g, n, &cv));
	ns = w->nsp;
	/* f32 2-D without groups: GEMM + col2im or the direct scatter, the
	 * im2col step as for Conv (a target whose Conv takes the implicit
	 * GEMM takes the GEMM form here: it has no implicit one) */
	f32 = ns == 2 && cv.G == 1 && y->dtype == DT_F32 &&
	      NIN(g, n, 0)->dtype == DT_F32 && NIN(g, n, 1)->dtype == DT_F32;
	if (f32) {
		const KStep *want = lower_want(lw, n, KST_IM2COL);
		int form = want ? want->kind : target_step(target_or_default(lw->target),
		                                           KST_IM2COL, 0).kind;
		if (form == KST_IM2COL || (!want && form == KST_IMPLICIT))
			return lower_convt_gemm(lw, n, &cv);
	}
	L = ns - 1;
	Cg = cv.C / cv.G;
	Mg = cv.M / cv.G;
	xsz = shape_strides(ns, w->in, xsp);
	ysz = shape_strides(ns, w->out, ysp);
	wsz = shape_strides(ns, w->k, wsp);

	lower_begin(lw, &kb, n);
	if (f32)
		lower_step(lw, &kb, kstep_make(KST_DIRECT, 0, 0, 0, 0));
	bx = lower_in(lw, &kb, n, 0);
	bw = lower_in(lw, &kb, n, 1);
	if (has_in(n, 2))
		bb = lower_in(lw, &kb, n, 2);
	by = lower_out(lw, &kb, n, 0);
	wv = kb_var(&kb, dt, "w");
	d0 = kb.depth;

	vn = loop(&kb, "n", cv.N, KF_PARALLEL);
	vg = loop(&kb, "g", cv.G, KF_PARALLEL);
	vml = loop(&kb, "m", Mg, KF_PARALLEL);
	vm = madd(&kb, vml, vg, Mg);
	ybase = madd(&kb, mul(&kb, vn, I(&kb, cv.M * ysz)), vm, ysz);
	kb_set(&kb, wv, bb >= 0 ? kb_load(&kb, bb, vm) : cnum(&kb, dt, 0));
	{
		KRef p = loop(&kb, "p", ysz, KF_PARALLEL);
		kb_store(&kb, by, add(&kb, ybase, p), kb_get(&kb, wv));
		if (ysz != 1)
			kb_end(&kb);
	}
	vc = loop(&kb, "c", Cg, 0);
	vci = madd(&kb, vc, vg, Cg);
	xbase = madd(&kb, mul(&kb, vn, I(&kb, cv.C * xsz)), vci, xsz);
	wbase = madd(&kb, mul(&kb, vci, I(&kb, Mg * wsz)), vml, wsz);
	for (int j = 0; j < ns; j++) {
		kk[j] = loop(&kb, kname[j], w->k[j], 0);
		wbase = madd(&kb, wbase, kk[j], wsp[j]);
	}
	kb_set(&kb, wv, kb_cast(&kb, dt, kb_load(&kb, bw, wbase)));
	for (int j = 0; j < L; j++) {
		int lo, hi;
		KRef ij = loop(&kb, iname[j], w->in[j], 0);
		KRef oj = kb_bin(&kb, KO_SUB, add(&kb, mul(&kb, ij, I(&kb, w->s[j])),
		                                  mul(&kb, kk[j], I(&kb, w->d[j]))),
		                 I(&kb, w->pb[j]));
		if (win_check(w->in[j], w->s[j], w->k[j], w->d[j], w->pb[j], w->out[j],
		              &lo, &hi))
			kb_if(&kb, in_range(&kb, oj, lo, hi, w->out[j]));
		xbase = madd(&kb, xbase, ij, xsp[j]);
		ybase = madd(&kb, ybase, oj, ysp[j]);
	}
	{
		int lo, hi;
		KRef off = kb_bin(&kb, KO_SUB, mul(&kb, kk[L], I(&kb, w->d[L])), I(&kb, w->pb[L]));
		KRef qlo = I(&kb, 0), qhi = I(&kb, w->in[L]), il, yi, xv;
		if (win_check(w->in[L], w->s[L], w->k[L], w->d[L], w->pb[L], w->out[L],
		              &lo, &hi))
			win_span(&kb, off, w->s[L], w->out[L], w->in[L], &qlo, &qhi);
		il = kb_get(&kb, kb_for(&kb, iname[L], qlo, qhi, 0));
		xv = kb_cast(&kb, dt, kb_load(&kb, bx, add(&kb, xbase, il)));
		yi = add(&kb, ybase, add(&kb, mul(&kb, il, I(&kb, w->s[L])), off));
		kb_store(&kb, by, yi, add(&kb, kb_load(&kb, by, yi),
		                          mul(&kb, kb_get(&kb, wv), xv)));
	}
	close_to(&kb, d0);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- pools --------------------------------------------------------------- */

int
infer_pool(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	int64_t d[BURN_MAX_RANK];
	int dt;

	TRY(need_in(c, g, n, 0, &x));
	dt = x->dtype;
	if (x->rank < 3)
		return burn_fail(c, BURN_ERR_SHAPE, "pool input must have rank >= 3 (got %d)",
		                 x->rank);
	if (!dtype_is_float(dt) &&
	    !(n->op == OP_MaxPool && (dt == DT_I8 || dt == DT_U8)))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s on %s", op_table[n->op].name,
		                 dtype_name(dt));
	d[0] = x->dim[0];
	d[1] = x->dim[1];
	if (n->op == OP_GlobalAveragePool || n->op == OP_GlobalMaxPool) {
		for (int i = 2; i < x->rank; i++)
			d[i] = 1;
	} else {
		Win w;
		TRY(win_read(c, n, x, NULL, &w));
		TRY(win_out(c, &w, attr_int(n, "ceil_mode", 0) != 0));
		for (int i = 0; i < w.nsp; i++)
			d[i + 2] = w.out[i];
		if (n->op == OP_MaxPool && attr_int(n, "storage_order", 0) && w.nsp != 2)
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "storage_order=1 needs 2-D");
		if (n->op == OP_LpPool && attr_int(n, "p", 2) < 1)
			return burn_fail(c, BURN_ERR_INVALID, "LpPool p must be >= 1");
	}
	set_out(NOUT(g, n, 0), dt, x->rank, d);
	if (n->nout > 1 && n->out[1] >= 0)
		set_out(NOUT(g, n, 1), DT_I64, x->rank, d);
	return BURN_OK;
}

/* GlobalAveragePool / GlobalMaxPool: for nc: acc over the contiguous plane. */
static int
lower_gpool(Lower *lw, Node *n)
{
	const Value *x = NIN(lw->g, n, 0);
	int dt = cdt(x->dtype), ismax = n->op == OP_GlobalMaxPool;
	int64_t nc = x->dim[0] * x->dim[1], P = prod(x->rank - 2, x->dim + 2);
	int bx, by, acc, d0;
	KRef vnc, vp, xv, r;
	KB kb;

	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	by = lower_out(lw, &kb, n, 0);
	acc = kb_var(&kb, dt, "acc");
	d0 = kb.depth;
	vnc = loop(&kb, "nc", nc, KF_PARALLEL);
	if (!ismax && gemm_cpu(lw) && dtype_is_float(dt) && P >= 2 * tune(lw)->dot_lanes) {
		/* the sum in `lanes` partial sums (as dot(): the C compiler
		 * vectorizes across them, not along one float sum; SqueezeNet's
		 * 1000 x 169 pool took 0.056 ms), then the P % lanes rest */
		int64_t lanes = step1(lw, &kb, KST_DOT, 0), PL = P / lanes * lanes;
		int tl = kb_buf(&kb, dt, lanes, -1, KS_LOCAL, KA_RW), dl = kb.depth;
		KRef l = kb_get(&kb, kb_for(&kb, "l", I(&kb, 0), I(&kb, lanes), KF_PARALLEL));
		kb_store(&kb, tl, l, cnum(&kb, dt, 0));
		kb_end(&kb);
		vp = loop(&kb, "pp", PL / lanes, 0);
		l = kb_get(&kb, kb_for(&kb, "l", I(&kb, 0), I(&kb, lanes), KF_PARALLEL));
		kb_store(&kb, tl, l, add(&kb, kb_load(&kb, tl, l),
		                         kb_load(&kb, bx, madd(&kb, madd(&kb, l, vp, lanes), vnc, P))));
		close_to(&kb, dl);
		kb_set(&kb, acc, kb_load(&kb, tl, I(&kb, 0)));
		l = kb_get(&kb, kb_for(&kb, "l", I(&kb, 1), I(&kb, lanes), 0));
		kb_set(&kb, acc, add(&kb, kb_get(&kb, acc), kb_load(&kb, tl, l)));
		kb_end(&kb);
		if (PL < P) {
			vp = kb_get(&kb, kb_for(&kb, "p", I(&kb, PL), I(&kb, P), 0));
			kb_set(&kb, acc, add(&kb, kb_get(&kb, acc), kb_load(&kb, bx, madd(&kb, vp, vnc, P))));
			kb_end(&kb);
		}
	} else {
		kb_set(&kb, acc, ismax ? kb_const_f(&kb, dt, -INFINITY) : cnum(&kb, dt, 0));
		vp = loop(&kb, "p", P, 0);
		xv = kb_load(&kb, bx, madd(&kb, vp, vnc, P));
		kb_set(&kb, acc, kb_bin(&kb, ismax ? KO_MAX : KO_ADD, kb_get(&kb, acc), xv));
		if (P != 1)
			kb_end(&kb);
	}
	r = kb_get(&kb, acc);
	if (!ismax)
		r = kb_bin(&kb, KO_DIV, r, cnum(&kb, dt, (double)P));
	kb_store(&kb, by, vnc, r);
	close_to(&kb, d0);
	lower_end(lw, &kb);
	return BURN_OK;
}

enum { POOL_MAX, POOL_AVG, POOL_LP };

/*
 * for nc, o0..o[r-1] (parallel):
 *   acc = identity; cnt = 0
 *   for k0..k[r-1] (if the input index is inside; only where needed):
 *     acc = acc (op) X[nc, o*s+k*d-p..]; cnt++
 *   Y[nc, o..] = finish(acc, cnt)
 * AveragePool with count_include_pad counts taps inside the padded input
 * (ceil_mode windows may reach beyond it) and sums those inside the input.
 */
/*
 * A 2-D float MaxPool whose windows all lie inside the input (no padding
 * or ceil_mode tests) and have at most tune.conv_unroll^2 taps, without
 * indices: the taps unrolled into straight-line code inside the loop
 * along the output row, so the C compiler vectorizes that loop (the
 * general form's window loops inside it kept it scalar):
 *
 *   for nc, oh (parallel): for ow:
 *     m = -inf; m = max(m, X[nc, oh*sh + kh*dh, ow*sw + kw*dw]) for each
 *     tap (kh, kw), written out; Y[nc, oh, ow] = m
 *
 * max propagates NaN as the general form does (x where x > m or x is
 * NaN), in a register (a max read back from Y each tap became a branch),
 * as two selects (the || of the general form's one select is a branch in
 * the scalar rest of each row).
 *
 * On the CPU form (gemm_cpu), a window of more than one row and column
 * is taken in two passes per output row, through a private row u of the
 * JW input columns the row's windows cover:
 *
 *   for nc, oh (parallel):
 *     for j < JW: u[j] = max over kh of X[nc, oh*sh + kh*dh, j]
 *     for ow: Y[nc, oh, ow] = max over kw of u[ow*sw + kw*dw]
 *
 * KH + KW taps an output instead of KH * KW, the first pass along
 * contiguous input (SqueezeNet's 3x3/2 pools: 0.26 -> 0.08 ms for the
 * first, 64 x 111 x 111).  Each max starts at its first tap, not at -inf
 * (the same value: max(-inf, x) is x, NaN included).  Which of two equal
 * taps is kept can differ (+0 and -0): max is otherwise order-free.
 */
/* m = xv if first, else the NaN-propagating max of m and xv (xv where
 * xv > m or xv is NaN), as two selects. */
static void
max_tap(KB *kb, int m, KRef xv, int first)
{
	KRef mx;

	if (first) {
		kb_set(kb, m, xv);
		return;
	}
	mx = kb_select(kb, kb_bin(kb, KO_GT, xv, kb_get(kb, m)), xv, kb_get(kb, m));
	kb_set(kb, m, kb_select(kb, kb_bin(kb, KO_NE, xv, xv), xv, mx));
}

static int
lower_maxpool_rows(Lower *lw, Node *n, const Win *w, int dt)
{
	const Value *x = NIN(lw->g, n, 0);
	int64_t H = w->in[0], W = w->in[1], OH = w->out[0], OW = w->out[1];
	int bx, by, d0, m;
	KRef vnc, voh, vow, xrow, yrow;
	KB kb;

	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	by = lower_out(lw, &kb, n, 0);
	m = kb_var(&kb, dt, "m");
	d0 = kb.depth;
	vnc = loop(&kb, "nc", x->dim[0] * x->dim[1], KF_PARALLEL);
	if (gemm_cpu(lw) && w->k[0] > 1 && w->k[1] > 1 &&
	    OH * ((OW - 1) * w->s[1] + (w->k[1] - 1) * w->d[1] + 1) <= tune(lw)->pool_plane &&
	    step(lw, &kb, KST_PLANE, 0).kind == KST_PLANE) {
		/* the whole plane in three passes: each output row's max over
		 * the window's rows into u (OH rows of JW), the max over the
		 * window's columns along u flat, in place (u[p] reads u[p +
		 * kw*dw], not yet written), and the outputs picked from it:
		 * the column pass is one long vector loop instead of OH runs
		 * of OW strided maxes (SqueezeNet's 13 x 13 pool, 256
		 * channels, u 13 x 27: 0.080 -> 0.035 ms on a Sapphire Rapids;
		 * its 27 x 27, u 27 x 55: 0.080 -> 0.076; its 55 x 55, u 55 x
		 * 111 = 24 KB: 0.155 -> 0.20, so tune.pool_plane is 2048) */
		int64_t JW = (OW - 1) * w->s[1] + (w->k[1] - 1) * w->d[1] + 1;
		int64_t span = OH * JW - (w->k[1] - 1) * w->d[1];
		int u = kb_buf(&kb, dt, OH * JW, -1, KS_LOCAL, KA_RW), dc = kb.depth;
		KRef vj, vp;
		voh = loop(&kb, "oh", OH, KF_PARALLEL);
		xrow = madd(&kb, mul(&kb, vnc, I(&kb, H * W)), voh, w->s[0] * W);
		vj = loop(&kb, "j", JW, KF_PARALLEL);
		for (int64_t kh = 0; kh < w->k[0]; kh++)
			max_tap(&kb, m, kb_load(&kb, bx, add(&kb, add(&kb, xrow, vj),
			                                     I(&kb, kh * w->d[0] * W))), kh == 0);
		kb_store(&kb, u, madd(&kb, vj, voh, JW), kb_get(&kb, m));
		close_to(&kb, dc);
		vp = loop(&kb, "p", span, 0);
		for (int64_t kw = 0; kw < w->k[1]; kw++)
			max_tap(&kb, m, kb_load(&kb, u, add(&kb, vp, I(&kb, kw * w->d[1]))), kw == 0);
		kb_store(&kb, u, vp, kb_get(&kb, m));
		close_to(&kb, dc);
		voh = loop(&kb, "oh", OH, KF_PARALLEL);
		vow = loop(&kb, "ow", OW, KF_PARALLEL);
		kb_store(&kb, by, add(&kb, madd(&kb, mul(&kb, vnc, I(&kb, OH * OW)), voh, OW), vow),
		         kb_load(&kb, u, madd(&kb, mul(&kb, vow, I(&kb, w->s[1])), voh, JW)));
		close_to(&kb, d0);
		lower_end(lw, &kb);
		return BURN_OK;
	}
	voh = loop(&kb, "oh", OH, KF_PARALLEL);
	yrow = madd(&kb, mul(&kb, vnc, I(&kb, OH * OW)), voh, OW);
	xrow = madd(&kb, mul(&kb, vnc, I(&kb, H * W)), voh, w->s[0] * W);
	if (gemm_cpu(lw) && w->k[0] > 1 && w->k[1] > 1) {
		int64_t JW = (OW - 1) * w->s[1] + (w->k[1] - 1) * w->d[1] + 1;
		int u = kb_buf(&kb, dt, JW, -1, KS_LOCAL, KA_RW);
		KRef vj = loop(&kb, "j", JW, KF_PARALLEL);
		for (int64_t kh = 0; kh < w->k[0]; kh++)
			max_tap(&kb, m, kb_load(&kb, bx, add(&kb, add(&kb, xrow, vj),
			                                     I(&kb, kh * w->d[0] * W))), kh == 0);
		kb_store(&kb, u, vj, kb_get(&kb, m));
		kb_end(&kb);
		vow = loop(&kb, "ow", OW, KF_PARALLEL);
		for (int64_t kw = 0; kw < w->k[1]; kw++)
			max_tap(&kb, m, kb_load(&kb, u, add(&kb, mul(&kb, vow, I(&kb, w->s[1])),
			                                    I(&kb, kw * w->d[1]))), kw == 0);
		kb_store(&kb, by, add(&kb, yrow, vow), kb_get(&kb, m));
		close_to(&kb, d0);
		lower_end(lw, &kb);
		return BURN_OK;
	}
	vow = loop(&kb, "ow", OW, KF_PARALLEL);
	kb_set(&kb, m, kb_const_f(&kb, dt, -INFINITY));
	for (int64_t kh = 0; kh < w->k[0]; kh++)
		for (int64_t kw = 0; kw < w->k[1]; kw++) {
			KRef xv = kb_load(&kb, bx, add(&kb, madd(&kb, xrow, vow, w->s[1]),
			                               I(&kb, kh * w->d[0] * W + kw * w->d[1])));
			max_tap(&kb, m, xv, 0);
		}
	kb_store(&kb, by, add(&kb, yrow, vow), kb_get(&kb, m));
	close_to(&kb, d0);
	lower_end(lw, &kb);
	return BURN_OK;
}

int
lower_pool(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	const Value *x = NIN(g, n, 0);
	int kind, dt = cdt(x->dtype), incpad, withidx, colmajor, ns;
	int bx, by, bi = -1, acc, cnt = -1, idx = -1, d0, anytest = 0;
	int64_t xsz, xsp[BURN_MAX_RANK], ysp[BURN_MAX_RANK], csp[BURN_MAX_RANK], pw = 2;
	KRef vnc, xoff, yoff, ioff, o[BURN_MAX_RANK], real = 0, xv;
	Win w;
	KB kb;

	if (n->op == OP_GlobalAveragePool || n->op == OP_GlobalMaxPool)
		return lower_gpool(lw, n);
	kind = n->op == OP_MaxPool ? POOL_MAX : n->op == OP_AveragePool ? POOL_AVG : POOL_LP;
	TRY(win_read(lw->ctx, n, x, NULL, &w));
	TRY(win_out(lw->ctx, &w, attr_int(n, "ceil_mode", 0) != 0));
	ns = w.nsp;
	incpad = kind == POOL_AVG && attr_int(n, "count_include_pad", 0);
	withidx = kind == POOL_MAX && n->nout > 1 && n->out[1] >= 0;
	colmajor = attr_int(n, "storage_order", 0) != 0;
	if (kind == POOL_LP)
		pw = attr_int(n, "p", 2);
	if (kind == POOL_MAX && !withidx && ns == 2 && dt == DT_F32 && x->dtype == DT_F32) {
		int lo, hi, tests = 0;
		for (int j = 0; j < ns; j++)
			tests |= win_check(w.out[j], w.s[j], w.k[j], w.d[j], w.pb[j], w.in[j], &lo, &hi);
		if (!tests && w.k[0] <= tune(lw)->conv_unroll && w.k[1] <= tune(lw)->conv_unroll)
			return lower_maxpool_rows(lw, n, &w, dt);
	}
	xsz = shape_strides(ns, w.in, xsp);
	shape_strides(ns, w.out, ysp);
	/* column-major spatial strides for storage_order = 1 */
	for (int64_t j = 0, s = 1; j < ns; j++) {   /* int64: int overflowed */
		csp[j] = s;
		s *= w.in[j];
	}

	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	by = lower_out(lw, &kb, n, 0);
	if (withidx)
		bi = lower_out(lw, &kb, n, 1);
	acc = kb_var(&kb, dt, "acc");
	if (kind == POOL_AVG)
		cnt = kb_var(&kb, DT_I64, "cnt");
	if (withidx)
		idx = kb_var(&kb, DT_I64, "idx");
	d0 = kb.depth;
	vnc = loop(&kb, "nc", x->dim[0] * x->dim[1], KF_PARALLEL);
	xoff = mul(&kb, vnc, I(&kb, xsz));
	yoff = mul(&kb, vnc, I(&kb, prod(ns, w.out)));
	ioff = xoff;
	for (int j = 0; j < ns; j++) {
		o[j] = loop(&kb, oname[j], w.out[j], KF_PARALLEL);
		yoff = madd(&kb, yoff, o[j], ysp[j]);
	}
	{
		int d1 = kb.depth;
		KRef init;
		if (kind == POOL_MAX)
			init = dtype_is_float(dt) ? kb_const_f(&kb, dt, -INFINITY)
			                          : kb_const_i(&kb, dt, int_min(dt));
		else
			init = cnum(&kb, dt, 0);
		kb_set(&kb, acc, init);
		if (cnt >= 0)
			kb_set(&kb, cnt, I(&kb, 0));
		if (idx >= 0)
			kb_set(&kb, idx, I(&kb, 0));
		for (int j = 0; j < ns; j++) {
			int lo, hi;
			KRef kj = loop(&kb, kname[j], w.k[j], 0);
			KRef ij = kb_bin(&kb, KO_SUB, add(&kb, mul(&kb, o[j], I(&kb, w.s[j])),
			                                  mul(&kb, kj, I(&kb, w.d[j]))),
			                 I(&kb, w.pb[j]));
			if (win_check(w.out[j], w.s[j], w.k[j], w.d[j], w.pb[j], w.in[j], &lo, &hi)) {
				KRef cnd = in_range(&kb, ij, lo, hi, w.in[j]);
				anytest = 1;
				if (incpad) {
					/* count taps inside the padded input; sum real ones */
					int plo, phi;
					win_check(w.out[j], w.s[j], w.k[j], w.d[j], w.pb[j],
					          w.in[j] + w.pe[j], &plo, &phi);
					if (phi)
						kb_if(&kb, kb_bin(&kb, KO_LT, ij, I(&kb, w.in[j] + w.pe[j])));
					real = real ? kb_bin(&kb, KO_AND, real, cnd) : cnd;
				} else {
					kb_if(&kb, cnd);
				}
			}
			xoff = madd(&kb, xoff, ij, xsp[j]);
			ioff = madd(&kb, ioff, ij, colmajor ? csp[j] : xsp[j]);
		}
		if (cnt >= 0)
			kb_set(&kb, cnt, add(&kb, kb_get(&kb, cnt), I(&kb, 1)));
		if (real)
			kb_if(&kb, real);
		xv = kb_load(&kb, bx, xoff);
		switch (kind) {
		case POOL_MAX:
			if (withidx) {
				kb_if(&kb, kb_bin(&kb, KO_GT, xv, kb_get(&kb, acc)));
				kb_set(&kb, acc, xv);
				kb_set(&kb, idx, ioff);
				kb_end(&kb);
			} else {
				/* max(acc, x) propagating NaN (KO_MAX's meaning) in
				 * two compares and a select: x where x > acc or x is
				 * NaN, else acc (NaN too when acc is) */
				KRef gt = kb_bin(&kb, KO_GT, xv, kb_get(&kb, acc));
				if (dtype_is_float(dt))
					gt = kb_bin(&kb, KO_OR, gt, kb_bin(&kb, KO_NE, xv, xv));
				kb_set(&kb, acc, kb_select(&kb, gt, xv, kb_get(&kb, acc)));
			}
			break;
		case POOL_AVG:
			kb_set(&kb, acc, add(&kb, kb_get(&kb, acc), xv));
			break;
		case POOL_LP: {
			KRef ax = kb_un(&kb, KO_ABS, xv), t;
			if (pw == 1)
				t = ax;
			else if (pw == 2)
				t = mul(&kb, ax, ax);
			else
				t = kb_bin(&kb, KO_POW, ax, kb_const_f(&kb, dt, (double)pw));
			kb_set(&kb, acc, add(&kb, kb_get(&kb, acc), t));
			break;
		}
		}
		close_to(&kb, d1);
	}
	{
		KRef r = kb_get(&kb, acc);
		if (kind == POOL_AVG) {
			KRef den = anytest ? kb_cast(&kb, dt, kb_get(&kb, cnt))
			                   : cnum(&kb, dt, (double)prod(ns, w.k));
			r = kb_bin(&kb, KO_DIV, r, den);
		} else if (kind == POOL_LP) {
			if (pw == 2)
				r = kb_un(&kb, KO_SQRT, r);
			else if (pw != 1)
				r = kb_bin(&kb, KO_POW, r, kb_const_f(&kb, dt, 1.0 / (double)pw));
		}
		kb_store(&kb, by, yoff, r);
		if (withidx)
			kb_store(&kb, bi, yoff, kb_get(&kb, idx));
	}
	close_to(&kb, d0);
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- Einsum -------------------------------------------------------------- */

/* Labels: a-z are 0-25, A-Z 26-51, the broadcast dims of "..." 52+. */
#define EIN_LAB (52 + BURN_MAX_RANK)

typedef struct Ein {
	int64_t size[EIN_LAB];          /* extent per label, -1 if unused */
	int nout, out[BURN_MAX_RANK];   /* output labels */
	int nsum, sum[EIN_LAB];         /* summed labels */
} Ein;

static int
lab_of(char ch)
{
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a';
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A' + 26;
	return -1;
}

/* Parse operand term t (len chars) of an operand of rank r into labels
 * lab[0..r-1]; nell is the width of "..." over all operands (pass 0 first
 * to learn this operand's own width in *own). */
static int
ein_term(Ctx *c, const char *t, int len, int r, int nell, int *lab, int *own)
{
	int nexp = 0, ell = -1, k = 0;

	for (int i = 0; i < len; i++) {
		if (t[i] == '.') {
			if (ell >= 0 || i + 2 >= len || t[i + 1] != '.' || t[i + 2] != '.')
				return burn_fail(c, BURN_ERR_INVALID, "Einsum: bad ellipsis");
			ell = nexp;
			i += 2;
		} else if (lab_of(t[i]) >= 0) {
			nexp++;
		} else {
			return burn_fail(c, BURN_ERR_INVALID, "Einsum: bad character '%c'", t[i]);
		}
	}
	*own = ell >= 0 ? r - nexp : 0;
	if ((ell < 0 && nexp != r) || *own < 0)
		return burn_fail(c, BURN_ERR_SHAPE, "Einsum: term '%.*s' does not fit rank %d",
		                 len, t, r);
	if (!lab)
		return BURN_OK;
	for (int i = 0; i < len; i++) {
		if (t[i] == '.') {
			for (int e = 0; e < *own; e++)
				lab[k++] = 52 + nell - *own + e;
			i += 2;
		} else {
			lab[k++] = lab_of(t[i]);
		}
	}
	return BURN_OK;
}

/* Parse n's equation against its inputs' shapes; lab[i] receives the
 * labels of operand i's dims. */
static int
ein_parse(Ctx *c, Graph *g, Node *n, Ein *e, int (*lab)[BURN_MAX_RANK])
{
	const char *eq = attr_str(n, "equation", NULL), *arrow, *t;
	char buf[512];
	int len = 0, nell = 0, own = 0, cnt[EIN_LAB] = {0}, k;

	if (!eq)
		return burn_fail(c, BURN_ERR_INVALID, "Einsum: equation is required");
	for (const char *p = eq; *p; p++) {
		if (*p == ' ')
			continue;
		if (len >= (int)sizeof buf - 1)
			return burn_fail(c, BURN_ERR_LIMIT, "Einsum: equation too long");
		buf[len++] = *p;
	}
	buf[len] = 0;
	arrow = strstr(buf, "->");
	for (int i = 0; i < EIN_LAB; i++)
		e->size[i] = -1;
	/* pass 1: ellipsis width; pass 2: labels */
	for (int pass = 0; pass < 2; pass++) {
		t = buf;
		for (k = 0;; k++) {
			const char *end = t;
			const Value *v;
			while (*end && *end != ',' && end != arrow)
				end++;
			if (k >= n->nin)
				return burn_fail(c, BURN_ERR_INVALID, "Einsum: more terms than inputs");
			TRY(need_in(c, g, n, k, &v));
			TRY(ein_term(c, t, (int)(end - t), v->rank, nell, pass ? lab[k] : NULL,
			             &own));
			if (!pass && own > nell)
				nell = own;
			if (pass) {
				for (int i = 0; i < v->rank; i++) {
					int l = lab[k][i];
					if (e->size[l] < 0 || e->size[l] == 1)
						e->size[l] = v->dim[i];
					else if (v->dim[i] != 1 && v->dim[i] != e->size[l])
						return burn_fail(c, BURN_ERR_SHAPE,
						                 "Einsum: label extents %lld and %lld differ",
						                 (long long)e->size[l], (long long)v->dim[i]);
					if (l < 52)
						cnt[l]++;
				}
			}
			if (*end != ',')
				break;
			t = end + 1;
		}
		if (k + 1 != n->nin)
			return burn_fail(c, BURN_ERR_INVALID, "Einsum: %d terms for %d inputs",
			                 k + 1, n->nin);
	}
	e->nout = 0;
	if (arrow) {
		for (const char *p = arrow + 2; *p; p++) {
			int l = lab_of(*p);
			if (*p == '.' && p[1] == '.' && p[2] == '.') {
				for (int i = 0; i < nell; i++) {
					if (e->nout >= BURN_MAX_RANK)
						return burn_fail(c, BURN_ERR_LIMIT, "Einsum: output rank");
					e->out[e->nout++] = 52 + i;
				}
				p += 2;
				continue;
			}
			if (l < 0 || e->size[l] < 0)
				return burn_fail(c, BURN_ERR_INVALID, "Einsum: bad output label '%c'", *p);
			for (int i = 0; i < e->nout; i++)
				if (e->out[i] == l)
					return burn_fail(c, BURN_ERR_INVALID, "Einsum: repeated output label");
			if (e->nout >= BURN_MAX_RANK)
				return burn_fail(c, BURN_ERR_LIMIT, "Einsum: output rank");
			e->out[e->nout++] = l;
		}
	} else {
		/* implicit: the ellipsis, then labels seen once, in order */
		for (int i = 0; i < nell; i++)
			e->out[e->nout++] = 52 + i;
		for (int i = 0; i < 52; i++) {
			int l = (i + 26) % 52;   /* upper case sorts first */
			if (cnt[l] != 1)
				continue;
			if (e->nout >= BURN_MAX_RANK)
				return burn_fail(c, BURN_ERR_LIMIT, "Einsum: output rank");
			e->out[e->nout++] = l;
		}
	}
	e->nsum = 0;
	for (int l = 0; l < EIN_LAB; l++) {
		int inout = 0;
		for (int i = 0; i < e->nout; i++)
			inout |= e->out[i] == l;
		if (e->size[l] >= 0 && !inout)
			e->sum[e->nsum++] = l;
	}
	return BURN_OK;
}

int
infer_einsum(Ctx *c, Graph *g, Node *n)
{
	int lab[64][BURN_MAX_RANK];
	int64_t d[BURN_MAX_RANK];
	const Value *x;
	Ein e;

	if (n->nin > 64)
		return burn_fail(c, BURN_ERR_LIMIT, "Einsum: too many inputs");
	TRY(need_in(c, g, n, 0, &x));
	for (int i = 0; i < n->nin; i++) {
		const Value *v;
		TRY(need_in(c, g, n, i, &v));
		if (v->dtype != x->dtype)
			return burn_fail(c, BURN_ERR_SHAPE, "Einsum: operand types differ");
	}
	if (!is_num(x->dtype))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "Einsum on %s", dtype_name(x->dtype));
	TRY(ein_parse(c, g, n, &e, lab));
	for (int i = 0; i < e.nout; i++)
		d[i] = e.size[e.out[i]];
	set_out(NOUT(g, n, 0), x->dtype, e.nout, d);
	return BURN_OK;
}

/*
 * for the output labels (parallel): acc = 0
 *   for the summed labels: acc += prod over operands of X_i[labels]
 *   Y[...] = acc
 */
int
lower_einsum(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	const Value *y = NOUT(g, n, 0);
	int lab[64][BURN_MAX_RANK], buf[64], dt = cdt(y->dtype), acc, d0;
	int64_t ysp[BURN_MAX_RANK];
	KRef lv[EIN_LAB], yoff, p;
	Ein e;
	KB kb;

	TRY(ein_parse(lw->ctx, g, n, &e, lab));
	lower_begin(lw, &kb, n);
	for (int i = 0; i < n->nin; i++)
		buf[i] = lower_in(lw, &kb, n, i);
	{
		int by = lower_out(lw, &kb, n, 0);
		acc = kb_var(&kb, dt, "acc");
		d0 = kb.depth;
		shape_strides(e.nout, y->dim, ysp);
		yoff = I(&kb, 0);
		for (int i = 0; i < e.nout; i++) {
			lv[e.out[i]] = loop(&kb, oname[i % 8], e.size[e.out[i]], KF_PARALLEL);
			yoff = madd(&kb, yoff, lv[e.out[i]], ysp[i]);
		}
		kb_set(&kb, acc, cnum(&kb, dt, 0));
		{
			int d1 = kb.depth;
			for (int i = 0; i < e.nsum; i++)
				lv[e.sum[i]] = loop(&kb, kname[i % 8], e.size[e.sum[i]], 0);
			p = 0;
			for (int i = 0; i < n->nin; i++) {
				const Value *v = NIN(g, n, i);
				int64_t st[BURN_MAX_RANK];
				KRef off = I(&kb, 0), xv;
				shape_strides(v->rank, v->dim, st);
				for (int j = 0; j < v->rank; j++)
					if (v->dim[j] != 1)
						off = madd(&kb, off, lv[lab[i][j]], st[j]);
				xv = kb_load(&kb, buf[i], off);
				p = p ? mul(&kb, p, xv) : xv;
			}
			kb_set(&kb, acc, add(&kb, kb_get(&kb, acc), p));
			close_to(&kb, d1);
		}
		kb_store(&kb, by, yoff, kb_get(&kb, acc));
	}
	close_to(&kb, d0);
	lower_end(lw, &kb);
	return BURN_OK;
}

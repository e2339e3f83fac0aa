/*
 * render_ptx.c - kernel IR -> PTX for sm_90 (valid for sm_80 too).
 *
 * The renderer prints what the schedule decided (render_ptx.h says how
 * kernels split into entries); docs/ARCHITECTURE.md, "The PTX renderer",
 * gives the whole mapping.  In short:
 *
 *   values      one virtual register per expression node and statement
 *               (ptxas allocates the real ones): .pred for bool, .b32 for
 *               integers up to 32 bits (kept sign- or zero-extended from
 *               their width, so compares and widening casts need no
 *               fix-up), .b64 for 64-bit integers, .f32/.f64 for floats;
 *               one register per variable.  Expressions are evaluated per
 *               statement, once per node (a memo stamped per statement);
 *               ptxas finds what statements share.
 *   control     loops and ifs become branches; the mapped block and thread
 *               loops become %ctaid.x and %tid.x
 *   memory      KS_GLOBAL buffers are the entry's .u64 parameters,
 *               KS_SHARED ones .shared arrays, KS_LOCAL ones .local arrays;
 *               a guarded load is a predicated ld; f16/bf16 storage is
 *               converted with cvt (the cuda target's KCaps say so)
 *   floats      .rn on every add, mul, div and sqrt, so that ptxas does not
 *               contract them into fma (the schedule's FMA marks do);
 *               transcendentals and fmod arrive legalised (see
 *               "Transcendentals" below)
 *   tiles       m16n8k16 f16 tiles are mma.sync fragments in the PTX ISA's
 *               layout; m16n8k8 f32 tiles (full f32 products, no TF32) are
 *               computed with fma-free f32 arithmetic, each lane owning
 *               four elements of C
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../../targets/target.h"
#include "render_ptx.h"

enum { RP, RR, RD, RF, RFD, RH, NRC };   /* register classes */
#define MAX_UNROLL 64   /* iterations of a KF_UNROLL loop printed one by one */
static const char *const rpre[NRC] = { "%p", "%r", "%rd", "%f", "%fd", "%h" };
static const char *const rtype[NRC] = { ".pred", ".b32", ".b64", ".f32", ".f64", ".b16" };

typedef struct P {
	Ctx *c;
	const KKernel *k;
	const char *entry;
	FILE *f;              /* the body (a memory stream) */
	int nreg[NRC];
	int *memo;
	unsigned *stamp, gen;
	int *vreg;            /* per variable: its register */
	int *base;            /* per buffer: %rd of its address, or -1 */
	int *frag;            /* per KS_FRAG buffer: its first register */
	KRef skip;            /* a statement already rendered with the one
	                       * before it (two B tiles in one ldmatrix) */
	int *role;            /* per KS_FRAG buffer: KTileRole */
	int *shape;           /* per KS_FRAG buffer: KTileShape */
	int lane;             /* %r holding %laneid, or -1 */
	const unsigned char *cross; /* crossing variables, then local buffers */
	int serial;           /* a one-thread segment */
	int idx32;            /* i64 values in 32-bit registers (cdt) */
	int label;
	int wg;               /* the kernel has warpgroup tile ops (wgmma) */
	int wg_open;          /* in a run of wgmma statements (fenced) */
	int err;
	char ring[64][24];    /* register names being printed (R) */
	int ringi;
} P;

static int64_t
align16(int64_t x)
{
	return (x + 15) / 16 * 16;
}

/* Whether kernel k has warpgroup tile ops: its module is PTX 8.0 for
 * sm_90a, its shared buffers start 1024-byte aligned (the swizzled
 * layout's atoms) and the async proxy is fenced at barriers. */
int
ptx_uses_wgmma(const KKernel *k)
{
	for (KRef i = 1; i < k->nnode; i++)
		if (k->node[i].kind == KS_WGMMA)
			return 1;
	return 0;
}

/* the alignment of shared buffers in the dynamic block */
static int64_t
shared_align(const KKernel *k, int64_t x)
{
	return ptx_uses_wgmma(k) ? (x + 1023) / 1024 * 1024 : align16(x);
}

static int
fail(P *p, int code, const char *fmt, const char *what)
{
	if (!p->err)
		p->err = burn_fail(p->c, code, fmt, p->k->name, what);
	return 0;
}

/* The dtype a value of dtype dt is computed in: i64 in 32 bits where the
 * schedule proved every i64 value of the kernel fits (KSched.index_bits
 * 32, passes/index_width.c); i64 in memory stays 8 bytes wide (loads,
 * stores, atomics widen or narrow). */
static int
cdt(const P *p, int dt)
{
	return p->idx32 && dt == DT_I64 ? DT_I32 : dt;
}

static int
rcls_of(int dt)
{
	switch (dt) {
	case DT_BOOL: return RP;
	case DT_F32: return RF;
	case DT_F64: return RFD;
	case DT_I64: case DT_U64: return RD;
	default: return RR;
	}
}

static int
rcls(const P *p, int dt)
{
	return rcls_of(cdt(p, dt));
}

static int
nr(P *p, int cls)
{
	return ++p->nreg[cls];
}

static const char *
R(P *p, int cls, int id)
{
	char *s = p->ring[p->ringi++ & 63];

	snprintf(s, sizeof p->ring[0], "%s%d", rpre[cls], id);
	return s;
}

static void
E(P *p, const char *fmt, ...)
{
	va_list ap;

	fputc('\t', p->f);
	va_start(ap, fmt);
	vfprintf(p->f, fmt, ap);
	va_end(ap);
	fputs(";\n", p->f);
}

/* integer op suffix for dtype dt (narrow integers live in 32 bits) */
static const char *
isfx(const P *p, int dt)
{
	dt = cdt(p, dt);
	if (dt == DT_I64) return "s64";
	if (dt == DT_U64) return "u64";
	return dtype_is_signed(dt) ? "s32" : "u32";
}

/* Re-extend register r of narrow integer dtype dt from its width. */
static void
norm(P *p, int dt, int r)
{
	const char *x = R(p, RR, r);

	switch (dt) {
	case DT_I8: E(p, "bfe.s32 %s, %s, 0, 8", x, x); break;
	case DT_I16: E(p, "bfe.s32 %s, %s, 0, 16", x, x); break;
	case DT_U8: E(p, "and.b32 %s, %s, 255", x, x); break;
	case DT_U16: E(p, "and.b32 %s, %s, 65535", x, x); break;
	}
}

/* ---- float helpers (f32) ------------------------------------------------- */

static int
ffma(P *p, int a, int b, int c)
{
	int d = nr(p, RF);

	E(p, "fma.rn.f32 %s, %s, %s, %s", R(p, RF, d), R(p, RF, a), R(p, RF, b),
	  R(p, RF, c));
	return d;
}

/* ---- Transcendentals ------------------------------------------------------ *
 *
 * PTX has only approximate ex2, lg2, sin and cos.  The seam legalises every
 * f32 transcendental, pow and fmod into kernel-IR arithmetic before this
 * renderer runs (KCaps.libm clear: passes/legalize.c, errors in
 * docs/NUMERICS.md), and f64 exp, log, pow, the trigonometric and
 * hyperbolic functions and their inverses, erf and fmod (KCaps.libm_f64
 * clear); one that arrived anyway would be refused (BURN_ERR_UNSUPPORTED).
 */

static int
is_trans(int op)
{
	switch (op) {
	case KO_EXP: case KO_LOG: case KO_SIN: case KO_COS: case KO_TAN:
	case KO_ASIN: case KO_ACOS: case KO_ATAN: case KO_SINH: case KO_COSH:
	case KO_TANH: case KO_ASINH: case KO_ACOSH: case KO_ATANH:
		return 1;
	}
	return 0;
}

/* ---- expressions ---------------------------------------------------------- */

static int ex(P *p, KRef e);

/* The .u64 address of element idx (expression) of buffer b. */
static int
addr(P *p, int b, KRef idx)
{
	const KKernel *k = p->k;
	int i = ex(p, idx), dt = kb_dtype(k, idx), d = nr(p, RD);
	int sz = dtype_size(k->buf[b].dtype), w;

	if (p->base[b] < 0)
		return fail(p, BURN_ERR_UNSUPPORTED, "render_ptx %s: buffer %s has no address "
		            "here (a fragment outside tile ops?)", k->buf[b].name ? k->buf[b].name : "?");
	if (rcls(p, dt) != RD) {
		/* a 32-bit index (an i64 one under index_bits 32): one widening
		 * multiply, the add in 64 bits */
		w = nr(p, RD);
		E(p, "mul.wide.%s %s, %s, %d", dtype_is_signed(cdt(p, dt)) ? "s32" : "u32",
		  R(p, RD, w), R(p, RR, i), sz);
		E(p, "add.s64 %s, %s, %s", R(p, RD, d), R(p, RD, w), R(p, RD, p->base[b]));
		return d;
	}
	E(p, "mad.lo.s64 %s, %s, %d, %s", R(p, RD, d), R(p, RD, i), sz, R(p, RD, p->base[b]));
	return d;
}

static const char *
space(const P *p, int b)
{
	const KKernel *k = p->k;

	if (k->buf[b].space == KS_LOCAL && p->serial && p->cross && p->cross[k->nvar + b])
		return "global";   /* crosses launches: in the spill scratch */
	switch (k->buf[b].space) {
	case KS_SHARED: return "shared";
	case KS_LOCAL: return "local";
	}
	return "global";
}

/* ld type of a plain (non-storage) element of dtype dt */
static const char *
ldtype(int dt)
{
	switch (dt) {
	case DT_F32: return "f32";
	case DT_F64: return "f64";
	case DT_I8: return "s8";
	case DT_U8: case DT_BOOL: return "u8";
	case DT_I16: return "s16";
	case DT_U16: return "u16";
	case DT_I32: return "s32";
	case DT_U32: return "u32";
	case DT_I64: return "s64";
	case DT_U64: return "u64";
	}
	return NULL;
}

/* The load of node e into register d (of e's class), predicated by guard
 * register g (or unconditional when g < 0). */
static void
load_into(P *p, KRef e, int d, int g)
{
	const KKernel *k = p->k;
	const KNode *n = &k->node[e];
	int bdt = k->buf[n->buf].dtype, dt = n->dtype, a = addr(p, n->buf, n->a);
	const char *sp = space(p, n->buf);
	char pr[24] = "";

	/* a global buffer the kernel only reads goes through the read-only
	 * (non-coherent) path: kernel IR's global buffers never alias, so no
	 * store of this kernel reaches it, and ptxas may move such loads
	 * ahead of the stores (more loads in flight per thread) */
	if (k->buf[n->buf].space == KS_GLOBAL && k->buf[n->buf].access == KA_READ &&
	    !strcmp(sp, "global"))
		sp = "global.nc";

	if (g >= 0)
		snprintf(pr, sizeof pr, "@%s ", R(p, RP, g));
	if (dtype_is_storage(bdt) && dt == DT_F32) {
		int h = nr(p, RH);
		E(p, "%sld.%s.b16 %s, [%s]", pr, sp, R(p, RH, h), R(p, RD, a));
		if (bdt == DT_F16) {
			E(p, "%scvt.f32.f16 %s, %s", pr, R(p, RF, d), R(p, RH, h));
		} else if (bdt == DT_BF16) {
			int z = nr(p, RH);
			E(p, "mov.b16 %s, 0", R(p, RH, z));
			E(p, "%smov.b32 %s, {%s, %s}", pr, R(p, RF, d), R(p, RH, z), R(p, RH, h));
		} else {
			fail(p, BURN_ERR_INTERNAL, "render_ptx %s: %s load not legalised",
			     dtype_name(bdt));
		}
		return;
	}
	if (dtype_is_storage(bdt)) {
		E(p, "%sld.%s.%s %s, [%s]", pr, sp, dtype_size(bdt) == 2 ? "u16" : "u8",
		  R(p, RR, d), R(p, RD, a));
		return;
	}
	if (bdt == DT_BOOL) {
		int t = nr(p, RR);
		E(p, "%sld.%s.u8 %s, [%s]", pr, sp, R(p, RR, t), R(p, RD, a));
		E(p, "%ssetp.ne.u32 %s, %s, 0", pr, R(p, RP, d), R(p, RR, t));
		return;
	}
	if (!ldtype(bdt) || bdt != dt) {
		fail(p, BURN_ERR_UNSUPPORTED, "render_ptx %s: load of %s", dtype_name(bdt));
		return;
	}
	if (cdt(p, dt) != dt) {   /* an i64 element into a 32-bit register */
		int w = nr(p, RD);
		E(p, "%sld.%s.s64 %s, [%s]", pr, sp, R(p, RD, w), R(p, RD, a));
		E(p, "%scvt.u32.u64 %s, %s", pr, R(p, RR, d), R(p, RD, w));
		return;
	}
	E(p, "%sld.%s.%s %s, [%s]", pr, sp, ldtype(bdt), R(p, rcls(p, dt), d), R(p, RD, a));
}

static int
ex_const(P *p, const KNode *n)
{
	int cls = rcls(p, n->dtype), d = nr(p, cls), t;

	switch (cls) {
	case RF: {
		float v = (float)n->fval;
		uint32_t u;
		memcpy(&u, &v, 4);
		E(p, "mov.f32 %s, 0f%08X", R(p, RF, d), u);
		break;
	}
	case RFD: {
		uint64_t u;
		memcpy(&u, &n->fval, 8);
		E(p, "mov.f64 %s, 0d%016llX", R(p, RFD, d), (unsigned long long)u);
		break;
	}
	case RD:
		E(p, "mov.b64 %s, 0x%016llX", R(p, RD, d), (unsigned long long)n->ival);
		break;
	case RR:
		E(p, "mov.b32 %s, 0x%08X", R(p, RR, d), (uint32_t)n->ival);
		norm(p, n->dtype, d);
		break;
	case RP:
		t = nr(p, RR);
		E(p, "mov.b32 %s, %d", R(p, RR, t), n->ival != 0);
		E(p, "setp.ne.u32 %s, %s, 0", R(p, RP, d), R(p, RR, t));
		break;
	}
	return d;
}

static int
ex_cast(P *p, KRef e)
{
	const KNode *n = &p->k->node[e];
	int s = cdt(p, kb_dtype(p->k, n->a)), dt = cdt(p, n->dtype), a = ex(p, n->a);
	int sc = rcls(p, s), dc = rcls(p, dt), d = nr(p, dc);
	const char *D = R(p, dc, d), *A = R(p, sc, a);

	if (n->ival) {
		/* rounding to a storage type's precision (KCaps f16/bf16) */
		int h = nr(p, RH);
		if (dt != DT_F32 || (sc != RF && sc != RFD) ||
		    (n->ival != DT_F16 && n->ival != DT_BF16))
			return fail(p, BURN_ERR_INTERNAL, "render_ptx %s: %s rounding not legalised",
			            dtype_name((int)n->ival));
		if (n->ival == DT_F16) {
			E(p, "cvt.rn.f16.%s %s, %s", sc == RF ? "f32" : "f64", R(p, RH, h), A);
			E(p, "cvt.f32.f16 %s, %s", D, R(p, RH, h));
		} else {
			int z = nr(p, RH), f = a;
			if (sc == RFD) {
				f = nr(p, RF);
				/* f64 -> bf16 in two roundings would differ; not made */
				return fail(p, BURN_ERR_UNSUPPORTED, "render_ptx %s: %s", "f64 -> bf16");
			}
			E(p, "cvt.rn.bf16.f32 %s, %s", R(p, RH, h), R(p, RF, f));
			E(p, "mov.b16 %s, 0", R(p, RH, z));
			E(p, "mov.b32 %s, {%s, %s}", D, R(p, RH, z), R(p, RH, h));
		}
		return d;
	}
	if (dt == DT_BOOL) {
		if (sc == RP)
			E(p, "mov.pred %s, %s", D, A);
		else if (sc == RF || sc == RFD)
			/* NaN is true, as in C */
			E(p, "setp.neu.%s %s, %s, 0%s", sc == RF ? "f32" : "f64", D, A,
			  sc == RF ? "f00000000" : "d0000000000000000");
		else
			E(p, "setp.ne.%s %s, %s, 0", isfx(p, s), D, A);
		return d;
	}
	if (sc == RP) {
		if (dc == RF)
			E(p, "selp.f32 %s, 0f3F800000, 0f00000000, %s", D, A);
		else if (dc == RFD)
			E(p, "selp.f64 %s, 0d3FF0000000000000, 0d0000000000000000, %s", D, A);
		else
			E(p, "selp.%s %s, 1, 0, %s", dc == RD ? "u64" : "u32", D, A);
		return d;
	}
	if (dtype_is_float(dt) && dtype_is_float(s)) {
		if (s == dt)
			E(p, "mov.%s %s, %s", dc == RF ? "f32" : "f64", D, A);
		else if (dt == DT_F64)
			E(p, "cvt.f64.f32 %s, %s", D, A);
		else
			E(p, "cvt.rn.f32.f64 %s, %s", D, A);
		return d;
	}
	if (dtype_is_float(dt)) {
		E(p, "cvt.rn.%s.%s %s, %s", dc == RF ? "f32" : "f64", isfx(p, s), D, A);
		return d;
	}
	if (dtype_is_float(s)) {
		/* in range (legalised, KC_RAW) or clamped by cvt itself */
		E(p, "cvt.rzi.%s.%s %s, %s", isfx(p, dt), sc == RF ? "f32" : "f64", D, A);
		norm(p, dt, d);
		return d;
	}
	/* integer -> integer: wrap */
	if (sc == RR && dc == RR) {
		E(p, "mov.b32 %s, %s", D, A);
		norm(p, dt, d);
	} else if (sc == RR) {
		E(p, "cvt.%s.%s %s, %s", dtype_is_signed(s) ? "s64" : "u64", isfx(p, s), D, A);
	} else if (dc == RR) {
		E(p, "cvt.u32.u64 %s, %s", D, A);
		norm(p, dt, d);
	} else {
		E(p, "mov.b64 %s, %s", D, A);
	}
	return d;
}

/* NaN-propagating min/max of the kernel IR (kops.def), f32 or f64 */
static int
fminmax(P *p, int op, int cls, int a, int b)
{
	int d = nr(p, cls);
	const char *t = cls == RF ? "f32" : "f64", *o = op == KO_MIN ? "min" : "max";

	if (cls == RF) {
		E(p, "%s.NaN.f32 %s, %s, %s", o, R(p, RF, d), R(p, RF, a), R(p, RF, b));
	} else {
		int pn = nr(p, RP), s = nr(p, cls);
		E(p, "%s.%s %s, %s, %s", o, t, R(p, cls, d), R(p, cls, a), R(p, cls, b));
		E(p, "add.rn.%s %s, %s, %s", t, R(p, cls, s), R(p, cls, a), R(p, cls, b));
		E(p, "setp.nan.%s %s, %s, %s", t, R(p, RP, pn), R(p, cls, a), R(p, cls, b));
		E(p, "selp.%s %s, %s, %s, %s", t, R(p, cls, d), R(p, cls, s), R(p, cls, d),
		  R(p, RP, pn));
	}
	return d;
}

/* The combining op of sgreduce and atomics on registers a, b of dtype dt. */
static int
combine(P *p, int op, int dt, int a, int b)
{
	int cls = rcls(p, dt), d;
	const char *t = cls == RF ? "f32" : "f64";

	if (cls == RF || cls == RFD) {
		if (op == KO_MIN || op == KO_MAX)
			return fminmax(p, op, cls, a, b);
		d = nr(p, cls);
		E(p, "%s.rn.%s %s, %s, %s", op == KO_ADD ? "add" : "mul", t, R(p, cls, d),
		  R(p, cls, a), R(p, cls, b));
		return d;
	}
	if (cls == RP)
		return fail(p, BURN_ERR_UNSUPPORTED, "render_ptx %s: %s of bool", kop_name(op));
	d = nr(p, cls);
	E(p, "%s%s.%s %s, %s, %s", op == KO_ADD ? "add" : op == KO_MUL ? "mul" :
	  op == KO_MIN ? "min" : "max", op == KO_MUL ? ".lo" : "", isfx(p, dt),
	  R(p, cls, d), R(p, cls, a), R(p, cls, b));
	if (cls == RR)
		norm(p, dt, d);
	return d;
}

static int
ex_un(P *p, const KNode *n)
{
	int s = kb_dtype(p->k, n->a), sc = rcls(p, s), a = ex(p, n->a);
	int dc = rcls(p, n->dtype), d;
	const char *ft = sc == RF ? "f32" : "f64";

	if (dtype_is_float(s) && is_trans(n->op))   /* f32 ones arrive legalised */
		return fail(p, sc == RF ? BURN_ERR_INTERNAL : BURN_ERR_UNSUPPORTED,
		            sc == RF ? "render_ptx %s: f32 %s not legalised" : "render_ptx %s: f64 %s",
		            kop_name(n->op));
	d = nr(p, dc);
	switch (n->op) {
	case KO_NEG:
		if (dtype_is_float(s))
			E(p, "neg.%s %s, %s", ft, R(p, dc, d), R(p, sc, a));
		else
			E(p, "neg.%s %s, %s", isfx(p, s), R(p, dc, d), R(p, sc, a));
		break;
	case KO_ABS:
		if (!dtype_is_float(s))
			break;
		E(p, "abs.%s %s, %s", ft, R(p, dc, d), R(p, sc, a));
		return d;
	case KO_SQRT:
		E(p, "sqrt.rn.%s %s, %s", ft, R(p, dc, d), R(p, sc, a));
		return d;
	case KO_FLOOR: case KO_CEIL: case KO_ROUND:
		if (dtype_is_float(s))
			E(p, "cvt.%s.%s.%s %s, %s", n->op == KO_FLOOR ? "rmi" : n->op == KO_CEIL ?
			  "rpi" : "rni", ft, ft, R(p, dc, d), R(p, sc, a));
		else
			E(p, "mov.%s %s, %s", sc == RD ? "b64" : "b32", R(p, dc, d), R(p, sc, a));
		return d;
	case KO_NOT:
		E(p, "not.pred %s, %s", R(p, dc, d), R(p, sc, a));
		return d;
	case KO_BITNOT:
		E(p, "not.%s %s, %s", sc == RD ? "b64" : "b32", R(p, dc, d), R(p, sc, a));
		break;
	case KO_ISNAN:
		E(p, "testp.notanumber.%s %s, %s", ft, R(p, dc, d), R(p, sc, a));
		return d;
	case KO_ISINF:
		E(p, "testp.infinite.%s %s, %s", ft, R(p, dc, d), R(p, sc, a));
		return d;
	case KO_BITS:
	case KO_FROMBITS:
		E(p, "mov.%s %s, %s", sc == RF || sc == RR ? "b32" : "b64", R(p, dc, d),
		  R(p, sc, a));
		return d;
	default:
		return fail(p, BURN_ERR_UNSUPPORTED, "render_ptx %s: op %s", kop_name(n->op));
	}
	if (dc == RR)
		norm(p, n->dtype, d);
	if (n->op == KO_ABS)
		return fail(p, BURN_ERR_INTERNAL, "render_ptx %s: %s not legalised", "integer abs");
	return d;
}

static int
ex_bin(P *p, const KNode *n)
{
	int s = kb_dtype(p->k, n->a), sc = rcls(p, s), a = ex(p, n->a), b = ex(p, n->b);
	int dc = rcls(p, n->dtype), d, fl = dtype_is_float(s);
	const char *ft = sc == RF ? "f32" : "f64", *A = R(p, sc, a), *B = R(p, sc, b);
	static const char *const cmp[] = { "lt", "le", "gt", "ge", "eq", "ne" };

	if (fl && (n->op == KO_POW || n->op == KO_FMOD))   /* arrive legalised */
		return fail(p, BURN_ERR_INTERNAL, "render_ptx %s: %s not legalised",
		            kop_name(n->op));
	if (fl && (n->op == KO_MIN || n->op == KO_MAX))
		return fminmax(p, n->op, sc, a, b);
	d = nr(p, dc);
	switch (n->op) {
	case KO_ADD: case KO_SUB: case KO_MUL: case KO_DIV: {
		static const char *const nm[] = { "add", "sub", "mul", "div" };
		const char *o = nm[n->op - KO_ADD];
		if (fl) {
			E(p, "%s.rn.%s %s, %s, %s", o, ft, R(p, dc, d), A, B);
			return d;
		}
		if (n->op == KO_DIV)
			return fail(p, BURN_ERR_INTERNAL, "render_ptx %s: %s not legalised",
			            "integer div");
		E(p, "%s%s.%s %s, %s, %s", o, n->op == KO_MUL ? ".lo" : "", isfx(p, s),
		  R(p, dc, d), A, B);
		break;
	}
	case KO_AND: case KO_OR: case KO_XOR:
		E(p, "%s.pred %s, %s, %s", n->op == KO_AND ? "and" : n->op == KO_OR ? "or" :
		  "xor", R(p, dc, d), A, B);
		return d;
	case KO_BAND: case KO_BOR: case KO_BXOR:
		E(p, "%s.%s %s, %s, %s", n->op == KO_BAND ? "and" : n->op == KO_BOR ? "or" :
		  "xor", sc == RD ? "b64" : "b32", R(p, dc, d), A, B);
		return d;
	case KO_SHLM: case KO_SHRM: {
		int cnt = nr(p, RR), w = dtype_size(s) * 8;
		if (sc == RD)
			E(p, "cvt.u32.u64 %s, %s", R(p, RR, cnt), B);
		else
			E(p, "mov.b32 %s, %s", R(p, RR, cnt), B);
		E(p, "and.b32 %s, %s, %d", R(p, RR, cnt), R(p, RR, cnt), w - 1);
		if (n->op == KO_SHLM)
			E(p, "shl.%s %s, %s, %s", sc == RD ? "b64" : "b32", R(p, dc, d), A,
			  R(p, RR, cnt));
		else
			E(p, "shr.%s %s, %s, %s", isfx(p, s), R(p, dc, d), A, R(p, RR, cnt));
		break;
	}
	case KO_QUOT:
	case KO_REM: {
		/* a constant divisor as an immediate: ptxas then divides by
		 * shifts or a multiply, where through a register it computed a
		 * reciprocal at run time */
		char imm[32];
		int64_t c;
		if (kb_is_const_i(p->k, n->b, &c) && c != 0) {
			snprintf(imm, sizeof imm, "%lld", (long long)c);
			B = imm;
		}
		E(p, "%s.%s %s, %s, %s", n->op == KO_QUOT ? "div" : "rem", isfx(p, s),
		  R(p, dc, d), A, B);
		break;
	}
	case KO_LT: case KO_LE: case KO_GT: case KO_GE: case KO_EQ: case KO_NE:
		if (sc == RP) {
			/* bool operands: eq is xnor, ne xor; order as integers */
			if (n->op != KO_EQ && n->op != KO_NE)
				return fail(p, BURN_ERR_UNSUPPORTED, "render_ptx %s: %s of bool",
				            kop_name(n->op));
			E(p, "xor.pred %s, %s, %s", R(p, dc, d), A, B);
			if (n->op == KO_EQ)
				E(p, "not.pred %s, %s", R(p, dc, d), R(p, dc, d));
			return d;
		}
		/* ne on floats is unordered (NaN != NaN), the others ordered */
		E(p, "setp.%s%s.%s %s, %s, %s", cmp[n->op - KO_LT],
		  fl && n->op == KO_NE ? "u" : "", fl ? ft : isfx(p, s), R(p, dc, d), A, B);
		return d;
	default:
		return fail(p, BURN_ERR_UNSUPPORTED, "render_ptx %s: op %s (not legalised?)",
		            kop_name(n->op));
	}
	if (dc == RR)
		norm(p, n->dtype, d);
	return d;
}

static int
ex_(P *p, KRef e)
{
	const KKernel *k = p->k;
	const KNode *n = &k->node[e];
	int d, cls;

	if (n->lanes > 1)
		return fail(p, BURN_ERR_UNSUPPORTED, "render_ptx %s: %s", "vector expressions");
	switch (n->kind) {
	case KE_CONST:
		return ex_const(p, n);
	case KE_VAR:
		return p->vreg[n->var];
	case KE_LOAD:
		cls = rcls(p, n->dtype);
		d = nr(p, cls);
		if (n->b) {
			/* guard ? buf[a] : c, reading memory only where the guard holds */
			int g = ex(p, n->b), c = ex(p, n->c);
			E(p, "mov.%s %s, %s", rtype[cls] + 1, R(p, cls, d), R(p, cls, c));
			load_into(p, e, d, g);
		} else {
			load_into(p, e, d, -1);
		}
		return d;
	case KE_UN:
		return ex_un(p, n);
	case KE_BIN:
		return ex_bin(p, n);
	case KE_SELECT: {
		int c = ex(p, n->a), a = ex(p, n->b), b = ex(p, n->c);
		cls = rcls(p, n->dtype);
		d = nr(p, cls);
		if (cls == RP) {
			int t = nr(p, RP);
			E(p, "and.pred %s, %s, %s", R(p, RP, d), R(p, RP, c), R(p, RP, a));
			E(p, "and.pred %s, !%s, %s", R(p, RP, t), R(p, RP, c), R(p, RP, b));
			E(p, "or.pred %s, %s, %s", R(p, RP, d), R(p, RP, d), R(p, RP, t));
		} else {
			E(p, "selp.%s %s, %s, %s, %s", rtype[cls] + 1, R(p, cls, d), R(p, cls, a),
			  R(p, cls, b), R(p, RP, c));
		}
		return d;
	}
	case KE_FMA: {   /* one rounding, as the kernel IR defines it */
		int a = ex(p, n->a), b = ex(p, n->b), c = ex(p, n->c);
		cls = rcls(p, n->dtype);
		d = nr(p, cls);
		E(p, "fma.rn%s %s, %s, %s, %s", rtype[cls], R(p, cls, d), R(p, cls, a),
		  R(p, cls, b), R(p, cls, c));
		return d;
	}
	case KE_CAST:
		return ex_cast(p, e);
	case KE_SPECIAL: {
		static const char *const sp[] = { "%tid.x", "%tid.y", "%tid.z",
		                                  "%ctaid.x", "%ctaid.y", "%ctaid.z" };
		int t = nr(p, RR);
		if (n->op < KX_THREAD_X || n->op > KX_BLOCK_Z)
			return fail(p, BURN_ERR_INTERNAL, "render_ptx %s: %s", "bad special");
		E(p, "mov.u32 %s, %s", R(p, RR, t), sp[n->op - KX_THREAD_X]);
		d = nr(p, rcls(p, n->dtype));
		if (rcls(p, n->dtype) == RD)
			E(p, "cvt.u64.u32 %s, %s", R(p, RD, d), R(p, RR, t));
		else
			E(p, "mov.b32 %s, %s", R(p, RR, d), R(p, RR, t));
		return d;
	}
	}
	return fail(p, BURN_ERR_INTERNAL, "render_ptx %s: %s", "not an expression");
}

static int
ex(P *p, KRef e)
{
	if (e <= 0 || e >= p->k->nnode)
		return fail(p, BURN_ERR_INTERNAL, "render_ptx %s: %s", "bad expression");
	if (p->stamp[e] == p->gen)
		return p->memo[e];
	p->memo[e] = ex_(p, e);
	p->stamp[e] = p->gen;
	return p->memo[e];
}

/* ---- statements ----------------------------------------------------------- */

static void
store(P *p, KRef s)
{
	const KKernel *k = p->k;
	const KNode *n = &k->node[s];
	int bdt = k->buf[n->buf].dtype, vdt = kb_dtype(k, n->b), v, a;
	const char *sp = space(p, n->buf);

	if (ksched_fma(k->sched, s) && vdt == DT_F32) {
		/* b[i] = x*y + z contracted (the schedule's mark) */
		const KNode *add = &k->node[n->b];
		KRef m = ksched_fma(k->sched, s) == 1 ? add->a : add->b;
		KRef z = ksched_fma(k->sched, s) == 1 ? add->b : add->a;
		v = ffma(p, ex(p, k->node[m].a), ex(p, k->node[m].b), ex(p, z));
	} else {
		v = ex(p, n->b);
	}
	a = addr(p, n->buf, n->a);
	if (dtype_is_storage(bdt) && vdt == DT_F32) {
		int h = nr(p, RH);
		if (bdt != DT_F16 && bdt != DT_BF16) {
			fail(p, BURN_ERR_INTERNAL, "render_ptx %s: %s store not legalised",
			     dtype_name(bdt));
			return;
		}
		E(p, "cvt.rn.%s.f32 %s, %s", bdt == DT_F16 ? "f16" : "bf16", R(p, RH, h),
		  R(p, RF, v));
		E(p, "st.%s.b16 [%s], %s", sp, R(p, RD, a), R(p, RH, h));
	} else if (dtype_is_storage(bdt)) {
		E(p, "st.%s.%s [%s], %s", sp, dtype_size(bdt) == 2 ? "u16" : "u8",
		  R(p, RD, a), R(p, RR, v));
	} else if (bdt == DT_BOOL) {
		int t = nr(p, RR);
		E(p, "selp.u32 %s, 1, 0, %s", R(p, RR, t), R(p, RP, v));
		E(p, "st.%s.u8 [%s], %s", sp, R(p, RD, a), R(p, RR, t));
	} else if (ldtype(bdt) && bdt == vdt && cdt(p, vdt) != vdt) {
		int w = nr(p, RD);   /* a 32-bit i64 value widened for memory */
		E(p, "cvt.s64.s32 %s, %s", R(p, RD, w), R(p, RR, v));
		E(p, "st.%s.s64 [%s], %s", sp, R(p, RD, a), R(p, RD, w));
	} else if (ldtype(bdt) && bdt == vdt) {
		E(p, "st.%s.%s [%s], %s", sp, ldtype(bdt), R(p, RD, a), R(p, rcls(p, vdt), v));
	} else {
		fail(p, BURN_ERR_UNSUPPORTED, "render_ptx %s: store of %s", dtype_name(vdt));
	}
}

static void
setvar(P *p, int var, int r)
{
	int cls = rcls(p, p->k->var[var].dtype);

	E(p, "mov.%s %s, %s", rtype[cls] + 1, R(p, cls, p->vreg[var]), R(p, cls, r));
}

/* %laneid, once per entry */
static int
lane(P *p)
{
	if (p->lane < 0) {
		p->lane = nr(p, RR);
		E(p, "mov.u32 %s, %%laneid", R(p, RR, p->lane));
	}
	return p->lane;
}

/* a 32-bit shuffle of register x (class cls) */
static int
shfl32(P *p, const char *mode, int cls, int x, const char *src, int w)
{
	int d = nr(p, cls);

	E(p, "shfl.sync.%s.b32 %s, %s, %s, %d, -1", mode, R(p, cls, d), R(p, cls, x), src,
	  ((32 - w) << 8) | 0x1f);
	return d;
}

/* a shuffle of a value of dtype dt */
static int
shfl(P *p, const char *mode, int dt, int x, const char *src, int w)
{
	int cls = rcls(p, dt), d;

	if (cls == RR || cls == RF)
		return shfl32(p, mode, cls, x, src, w);
	if (cls == RP) {
		int t = nr(p, RR);
		E(p, "selp.u32 %s, 1, 0, %s", R(p, RR, t), R(p, RP, x));
		t = shfl32(p, mode, RR, t, src, w);
		d = nr(p, RP);
		E(p, "setp.ne.u32 %s, %s, 0", R(p, RP, d), R(p, RR, t));
		return d;
	}
	{
		int lo = nr(p, RR), hi = nr(p, RR);
		d = nr(p, cls);
		E(p, "mov.b64 {%s, %s}, %s", R(p, RR, lo), R(p, RR, hi), R(p, cls, x));
		lo = shfl32(p, mode, RR, lo, src, w);
		hi = shfl32(p, mode, RR, hi, src, w);
		E(p, "mov.b64 %s, {%s, %s}", R(p, cls, d), R(p, RR, lo), R(p, RR, hi));
	}
	return d;
}

static int
u32of(P *p, KRef e)
{
	int dt = kb_dtype(p->k, e), r = ex(p, e), d;

	if (rcls(p, dt) == RR)
		return r;
	d = nr(p, RR);
	E(p, "cvt.u32.u64 %s, %s", R(p, RR, d), R(p, RD, r));
	return d;
}

/* ---- matrix tiles --------------------------------------------------------- *
 *
 * m16n8k16 f16 (mma.sync): per lane, g = lane/4, t = lane%4 (PTX ISA,
 * "Matrix fragments for mma.m16n8k16"): A 4 .b32 registers of two halves
 * {(g, 2t), (g, 2t+1)}, {(g+8, 2t) ..}, {(g, 2t+8) ..}, {(g+8, 2t+8) ..};
 * B 2 registers {(2t, g), (2t+1, g)}, {(2t+8, g), (2t+9, g)}; C 4 f32
 * (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1).
 *
 * m16n8k8 f32 (no TF32: plain f32 arithmetic): lane l owns C elements
 * (l/2, 4(l%2) + j), j < 4; A holds row l/2 (8 registers), B columns
 * 4(l%2) .. +3 (8 x 4 registers, k-major).
 */
/* the 16-bit shapes (f16, bf16): the same fragment layout */
static int
half_tile(int shape)
{
	return shape == KT_M16N8K16_F16 || shape == KT_M16N8K16_BF16;
}

static int
frag_regs(int shape, int role)
{
	if (half_tile(shape))
		return role == KTR_A ? 4 : role == KTR_B ? 2 : 4;
	return role == KTR_A ? 8 : role == KTR_B ? 32 : 4;
}

static int
frag_cls(int shape, int role)
{
	return half_tile(shape) && role != KTR_C ? RR : RF;
}

/* base + (i + r*s + c) * sz as a register, r and c registers (u32) or
 * constants (rr/cc < 0: use rk/ck) */
static int
tile_addr(P *p, int base, int i, int s, int rr, int rk, int cc, int ck, int sz)
{
	int off = nr(p, RD), t = nr(p, RD);

	if (rr >= 0)
		E(p, "cvt.u64.u32 %s, %s", R(p, RD, t), R(p, RR, rr));
	else
		E(p, "mov.b64 %s, %d", R(p, RD, t), rk);
	E(p, "mad.lo.s64 %s, %s, %s, %s", R(p, RD, off), R(p, RD, t), R(p, RD, s), R(p, RD, i));
	if (cc >= 0) {
		int u = nr(p, RD);
		E(p, "cvt.u64.u32 %s, %s", R(p, RD, u), R(p, RR, cc));
		E(p, "add.s64 %s, %s, %s", R(p, RD, off), R(p, RD, off), R(p, RD, u));
	} else if (ck) {
		E(p, "add.s64 %s, %s, %d", R(p, RD, off), R(p, RD, off), ck);
	}
	E(p, "mad.lo.s64 %s, %s, %d, %s", R(p, RD, off), R(p, RD, off), sz, R(p, RD, base));
	return off;
}

static int
as64(P *p, KRef e)
{
	int dt = kb_dtype(p->k, e), r = ex(p, e), d;

	if (rcls(p, dt) == RD)
		return r;
	d = nr(p, RD);
	E(p, "cvt.%s.%s %s, %s", dtype_is_signed(dt) ? "s64" : "u64", isfx(p, dt),
	  R(p, RD, d), R(p, RR, r));
	return d;
}

/* x for an index x + c with a constant 0 <= c < 2^20 (which goes into an
 * address's offset), *c = c; else e itself, *c = 0. */
static KRef
peel_const(const KKernel *k, KRef e, int64_t *c)
{
	const KNode *n = &k->node[e];

	if (n->kind == KE_BIN && n->op == KO_ADD && kb_is_const_i(k, n->b, c) &&
	    *c >= 0 && *c < ((int64_t)1 << 20))
		return n->a;
	*c = 0;
	return e;
}

/* 16-bit fragments from shared memory by ldmatrix (the kernel IR
 * promises 16-byte rows: index i and stride s multiples of 8), byte
 * offset imm.  Lane l gives the address of row (l%8) + 8*((l/8)%2),
 * column 8*(l/16) of the tile: for A (.x4) the four 8x8 matrices are rows
 * 0-7 and 8-15 of columns 0-7, then of columns 8-15, which are a0..a3 of
 * the mma layout; B (k-major rows) is read transposed, k rows 0-7 and
 * 8-15: one tile (.x2, lanes 16-31's addresses ignored) or two side by
 * side (.x4, the second at column 8).  f: the 4 or 2 registers. */
static void
ldmatrix(P *p, int role, int pair, const int *f, int base, int i, int s, int64_t imm)
{
	int l = lane(p), r = nr(p, RR), j = nr(p, RR), c = nr(p, RR), a;

	E(p, "and.b32 %s, %s, 7", R(p, RR, r), R(p, RR, l));
	E(p, "bfe.u32 %s, %s, 3, 1", R(p, RR, j), R(p, RR, l));
	E(p, "mad.lo.u32 %s, %s, 8, %s", R(p, RR, r), R(p, RR, j), R(p, RR, r));
	E(p, "shr.u32 %s, %s, 4", R(p, RR, c), R(p, RR, l));
	E(p, "shl.b32 %s, %s, 3", R(p, RR, c), R(p, RR, c));
	a = tile_addr(p, base, i, s, r, 0, c, 0, 2);
	if (role == KTR_A || pair)
		E(p, "ldmatrix.sync.aligned.m8n8.x4%s.shared.b16 {%s, %s, %s, %s}, [%s+%lld]",
		  role == KTR_A ? "" : ".trans", R(p, RR, f[0]), R(p, RR, f[1]),
		  R(p, RR, f[2]), R(p, RR, f[3]), R(p, RD, a), (long long)imm);
	else
		E(p, "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%s, %s}, [%s+%lld]",
		  R(p, RR, f[0]), R(p, RR, f[1]), R(p, RD, a), (long long)imm);
}

/* Two 16-bit B tiles from shared memory side by side (the second's
 * index the first's + 8, the same stride, the next statement) in one
 * ldmatrix.x4.trans.  1 if rendered so (the second statement is then
 * skipped). */
static int
tload_pair(P *p, KRef s)
{
	const KKernel *k = p->k;
	const KNode *n = &k->node[s], *m = n->next ? &k->node[n->next] : NULL;
	int64_t c0, c1, sv0, sv1;
	int f[4], x;

	if (!m || m->kind != KS_TLOAD || n->op != KTR_B || m->op != KTR_B ||
	    !half_tile((int)n->ival) || m->ival != n->ival || m->buf2 != n->buf2 ||
	    k->buf[n->buf2].space != KS_SHARED ||
	    !kb_is_const_i(k, n->b, &sv0) || !kb_is_const_i(k, m->b, &sv1) || sv0 != sv1 ||
	    peel_const(k, n->a, &c0) != peel_const(k, m->a, &c1) || c1 != c0 + 8 ||
	    p->frag[n->buf] < 0 || p->frag[m->buf] < 0 || p->base[n->buf2] < 0)
		return 0;
	f[0] = p->frag[n->buf];
	f[1] = f[0] + 1;
	f[2] = p->frag[m->buf];
	f[3] = f[2] + 1;
	x = as64(p, peel_const(k, n->a, &c0));   /* sets c0 first */
	ldmatrix(p, KTR_B, 1, f, p->base[n->buf2], x, as64(p, n->b), c0 * 2);
	p->skip = n->next;
	return 1;
}

/* Load (st = 0) or store (st = 1) fragment fb of role `role` from/to
 * buffer mb at index expression ie, stride se. */
static void
tile_mem(P *p, int shape, int role, int fb, int mb, KRef ie, KRef se, int st)
{
	const KKernel *k = p->k;
	const char *sp = space(p, mb);
	int l = lane(p), i, s = as64(p, se), base = p->base[mb];
	int f0 = p->frag[fb], g, t, t2;
	int sz = dtype_size(k->buf[mb].dtype);

	if (base < 0 || f0 < 0) {
		fail(p, BURN_ERR_INTERNAL, "render_ptx %s: %s", "tile operand without storage");
		return;
	}
	if (half_tile(shape) && role != KTR_C && !st && k->buf[mb].space == KS_SHARED) {
		int64_t imm;
		int f[4] = { f0, f0 + 1, f0 + 2, f0 + 3 };
		int x = as64(p, peel_const(k, ie, &imm));   /* sets imm first */
		ldmatrix(p, role, 0, f, base, x, s, imm * sz);
		return;
	}
	i = as64(p, ie);
	g = nr(p, RR);
	t = nr(p, RR);
	t2 = nr(p, RR);
	if (half_tile(shape)) {
		E(p, "shr.u32 %s, %s, 2", R(p, RR, g), R(p, RR, l));
		E(p, "and.b32 %s, %s, 3", R(p, RR, t), R(p, RR, l));
		E(p, "shl.b32 %s, %s, 1", R(p, RR, t2), R(p, RR, t));
	} else {
		E(p, "shr.u32 %s, %s, 1", R(p, RR, g), R(p, RR, l));
		E(p, "and.b32 %s, %s, 1", R(p, RR, t), R(p, RR, l));
		E(p, "shl.b32 %s, %s, 2", R(p, RR, t2), R(p, RR, t));
	}
	if (role == KTR_C) {
		/* f32 elements: (g, c0 + j) ... */
		int rows = half_tile(shape) ? 2 : 1, per = half_tile(shape) ? 2 : 4;
		if (sz != 4) {
			fail(p, BURN_ERR_UNSUPPORTED, "render_ptx %s: %s", "accumulator tile not f32");
			return;
		}
		for (int h = 0; h < rows; h++) {
			int rr = g, a;
			if (h) {
				rr = nr(p, RR);
				E(p, "add.u32 %s, %s, 8", R(p, RR, rr), R(p, RR, g));
			}
			a = tile_addr(p, base, i, s, rr, 0, t2, 0, 4);
			for (int j = 0; j < per; j++)
				E(p, st ? "st.%s.f32 [%s+%d], %s" : "ld.%s.f32 %4$s, [%2$s+%3$d]", sp,
				  R(p, RD, a), 4 * j, R(p, RF, f0 + h * per + j));
		}
		return;
	}
	if (st) {
		fail(p, BURN_ERR_UNSUPPORTED, "render_ptx %s: %s", "tilestore of an A or B tile");
		return;
	}
	if (half_tile(shape)) {
		/* pairs of halves; A along a row, B down a column */
		for (int q = 0; q < (role == KTR_A ? 4 : 2); q++) {
			int a0, a1, h0 = nr(p, RH), h1 = nr(p, RH), rr, cc;
			if (role == KTR_A) {
				rr = g;
				if (q & 1) {
					rr = nr(p, RR);
					E(p, "add.u32 %s, %s, 8", R(p, RR, rr), R(p, RR, g));
				}
				cc = t2;
				if (q & 2) {
					cc = nr(p, RR);
					E(p, "add.u32 %s, %s, 8", R(p, RR, cc), R(p, RR, t2));
				}
				a0 = tile_addr(p, base, i, s, rr, 0, cc, 0, 2);
				a1 = nr(p, RD);
				E(p, "add.s64 %s, %s, 2", R(p, RD, a1), R(p, RD, a0));
			} else {
				int r1 = nr(p, RR);
				rr = t2;
				if (q) {
					rr = nr(p, RR);
					E(p, "add.u32 %s, %s, 8", R(p, RR, rr), R(p, RR, t2));
				}
				E(p, "add.u32 %s, %s, 1", R(p, RR, r1), R(p, RR, rr));
				a0 = tile_addr(p, base, i, s, rr, 0, g, 0, 2);
				a1 = tile_addr(p, base, i, s, r1, 0, g, 0, 2);
			}
			E(p, "ld.%s.b16 %s, [%s]", sp, R(p, RH, h0), R(p, RD, a0));
			E(p, "ld.%s.b16 %s, [%s]", sp, R(p, RH, h1), R(p, RD, a1));
			E(p, "mov.b32 %s, {%s, %s}", R(p, RR, f0 + q), R(p, RH, h0), R(p, RH, h1));
		}
		return;
	}
	if (sz != 4) {
		fail(p, BURN_ERR_UNSUPPORTED, "render_ptx %s: %s", "f32 tile of another dtype");
		return;
	}
	if (role == KTR_A) {
		int a = tile_addr(p, base, i, s, g, 0, -1, 0, 4);
		for (int q = 0; q < 8; q++)
			E(p, "ld.%s.f32 %s, [%s+%d]", sp, R(p, RF, f0 + q), R(p, RD, a), 4 * q);
	} else {
		for (int q = 0; q < 8; q++) {
			int a = tile_addr(p, base, i, s, -1, q, t2, 0, 4);
			for (int j = 0; j < 4; j++)
				E(p, "ld.%s.f32 %s, [%s+%d]", sp, R(p, RF, f0 + q * 4 + j), R(p, RD, a),
				  4 * j);
		}
	}
}

static void
tile_mma(P *p, const KNode *n)
{
	int c = p->frag[n->buf], a = p->frag[n->buf2], b = p->frag[n->buf3];

	if (c < 0 || a < 0 || b < 0) {
		fail(p, BURN_ERR_INTERNAL, "render_ptx %s: %s", "tilemma operand not a fragment");
		return;
	}
	if (half_tile((int)n->ival)) {
		E(p, "mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 {%s, %s, %s, %s}, "
		  "{%s, %s, %s, %s}, {%s, %s}, {%s, %s, %s, %s}",
		  n->ival == KT_M16N8K16_BF16 ? "bf16" : "f16",
		  n->ival == KT_M16N8K16_BF16 ? "bf16" : "f16",
		  R(p, RF, c), R(p, RF, c + 1), R(p, RF, c + 2), R(p, RF, c + 3),
		  R(p, RR, a), R(p, RR, a + 1), R(p, RR, a + 2), R(p, RR, a + 3),
		  R(p, RR, b), R(p, RR, b + 1),
		  R(p, RF, c), R(p, RF, c + 1), R(p, RF, c + 2), R(p, RF, c + 3));
		return;
	}
	/* f32: products and sums in k order, as the interpreter */
	for (int j = 0; j < 4; j++)
		for (int q = 0; q < 8; q++) {
			int t = nr(p, RF);
			E(p, "mul.rn.f32 %s, %s, %s", R(p, RF, t), R(p, RF, a + q), R(p, RF, b + q * 4 + j));
			E(p, "add.rn.f32 %s, %s, %s", R(p, RF, c + j), R(p, RF, c + j), R(p, RF, t));
		}
}

/* A shared-memory matrix descriptor of the 128-byte swizzle for the tile
 * at element ie of buffer mb (16-bit elements): start address >> 4 in
 * bits 0-13, the leading and stride byte offsets >> 4 in bits 16-29 and
 * 32-45, the swizzle mode (1: 128 bytes) in bits 62-63. */
static int
wg_desc(P *p, int mb, KRef ie, int64_t lbo, int64_t sbo)
{
	int64_t imm;
	int x = as64(p, peel_const(p->k, ie, &imm)), a = nr(p, RD), d = nr(p, RD);
	uint64_t hi = (uint64_t)(lbo >> 4) << 16 | (uint64_t)(sbo >> 4) << 32 | 1ull << 62;

	E(p, "mad.lo.s64 %s, %s, 2, %s", R(p, RD, a), R(p, RD, x), R(p, RD, p->base[mb]));
	if (imm)
		E(p, "add.s64 %s, %s, %lld", R(p, RD, a), R(p, RD, a), (long long)(imm * 2));
	E(p, "shr.u64 %s, %s, 4", R(p, RD, a), R(p, RD, a));
	E(p, "and.b64 %s, %s, 16383", R(p, RD, a), R(p, RD, a));
	E(p, "or.b64 %s, %s, 0x%016llx", R(p, RD, d), R(p, RD, a), (unsigned long long)hi);
	return d;
}

/* KS_WGMMA: A K-major, B MN-major (imm-trans-b 1), both in the 128-byte
 * swizzle: A's 8-row groups 1024 bytes apart (the leading offset unused:
 * 16 bytes), B's too, its 64-column groups c elements apart.  A run of
 * consecutive wgmma statements is one batch: wgmma.fence before it,
 * commit_group after; KS_WGWAIT is wait_group. */
static void
wgmma(P *p, KRef s)
{
	const KKernel *k = p->k;
	const KNode *n = &k->node[s];
	const KTileInfo *t = ktile_info((int)n->ival);
	int64_t cs;
	int da, db, pr;

	if (!t || !t->wg || !kb_is_const_i(k, n->c, &cs) || p->base[n->buf2] < 0 ||
	    p->base[n->buf3] < 0) {
		fail(p, BURN_ERR_INTERNAL, "render_ptx %s: %s", "wgmma operands");
		return;
	}
	for (int j = 0; j < t->n / 8; j++)
		if (p->frag[n->buf + j] < 0) {
			fail(p, BURN_ERR_INTERNAL, "render_ptx %s: %s", "wgmma accumulator");
			return;
		}
	if (!p->wg_open) {
		E(p, "wgmma.fence.sync.aligned");
		p->wg_open = 1;
	}
	da = wg_desc(p, n->buf2, n->a, 16, 1024);
	db = wg_desc(p, n->buf3, n->b, cs * 2, 1024);
	pr = nr(p, RP);
	E(p, "setp.eq.u32 %s, 1, 1", R(p, RP, pr));
	fprintf(p->f, "\twgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {", t->n,
	        t->ab_dtype == DT_BF16 ? "bf16" : "f16", t->ab_dtype == DT_BF16 ? "bf16" : "f16");
	for (int j = 0; j < t->n / 8; j++)
		for (int q = 0; q < 4; q++)
			fprintf(p->f, "%s%s", j || q ? ", " : "", R(p, RF, p->frag[n->buf + j] + q));
	fprintf(p->f, "}, %s, %s, %s, 1, 1, 0, 1;\n", R(p, RD, da), R(p, RD, db), R(p, RP, pr));
	if (!n->next || k->node[n->next].kind != KS_WGMMA) {
		E(p, "wgmma.commit_group.sync.aligned");
		p->wg_open = 0;
	}
}

/* ---- GPU statements ------------------------------------------------------- */

static void
gpu_stmt(P *p, KRef s)
{
	const KKernel *k = p->k;
	const KNode *n = &k->node[s];

	switch (n->kind) {
	case KS_VCOPY:
	case KS_CPASYNC: {
		int bytes = (int)n->ival * dtype_size(k->buf[n->buf].dtype);
		int src = addr(p, n->buf2, n->b), dst = addr(p, n->buf, n->a), r[4];
		const char *ss = space(p, n->buf2), *ds = space(p, n->buf);
		if (n->kind == KS_CPASYNC) {
			if (bytes != 4 && bytes != 8 && bytes != 16) {
				fail(p, BURN_ERR_INTERNAL, "render_ptx %s: %s", "cp.async size");
				return;
			}
			/* 16 bytes: through L2 only (.cg); smaller copies must use .ca */
			E(p, "cp.async.%s.shared.global [%s], [%s], %d", bytes == 16 ? "cg" : "ca",
			  R(p, RD, dst), R(p, RD, src), bytes);
			return;
		}
		for (int q = 0; q < 4; q++)
			r[q] = nr(p, RR);
		if (bytes == 16) {
			E(p, "ld.%s.v4.b32 {%s, %s, %s, %s}, [%s]", ss, R(p, RR, r[0]), R(p, RR, r[1]),
			  R(p, RR, r[2]), R(p, RR, r[3]), R(p, RD, src));
			E(p, "st.%s.v4.b32 [%s], {%s, %s, %s, %s}", ds, R(p, RD, dst), R(p, RR, r[0]),
			  R(p, RR, r[1]), R(p, RR, r[2]), R(p, RR, r[3]));
		} else if (bytes == 8) {
			E(p, "ld.%s.v2.b32 {%s, %s}, [%s]", ss, R(p, RR, r[0]), R(p, RR, r[1]),
			  R(p, RD, src));
			E(p, "st.%s.v2.b32 [%s], {%s, %s}", ds, R(p, RD, dst), R(p, RR, r[0]),
			  R(p, RR, r[1]));
		} else if (bytes == 4 || bytes == 2 || bytes == 1) {
			const char *t = bytes == 4 ? "b32" : bytes == 2 ? "u16" : "u8";
			E(p, "ld.%s.%s %s, [%s]", ss, t, R(p, RR, r[0]), R(p, RD, src));
			E(p, "st.%s.%s [%s], %s", ds, t, R(p, RD, dst), R(p, RR, r[0]));
		} else {
			fail(p, BURN_ERR_INTERNAL, "render_ptx %s: %s", "vcopy size");
		}
		return;
	}
	case KS_WGWAIT:
		E(p, "wgmma.wait_group.sync.aligned %d", (int)n->ival);
		return;
	case KS_CPWAIT:
		if (n->ival) {
			E(p, "cp.async.commit_group");
			E(p, "cp.async.wait_group %d", (int)n->ival);
		} else {
			E(p, "cp.async.wait_all");
		}
		return;
	case KS_ATOMIC: {
		int dt = k->buf[n->buf].dtype, cls = rcls(p, dt), a, x, y, d;
		const char *sp = space(p, n->buf), *t;
		if ((cls != RR && cls != RD && cls != RF && cls != RFD) ||
		    (cls == RR && dtype_size(dt) != 4)) {
			fail(p, BURN_ERR_UNSUPPORTED, "render_ptx %s: atomic on %s", dtype_name(dt));
			return;
		}
		x = ex(p, n->b);
		y = n->op == KAT_CAS ? ex(p, n->c) : -1;
		a = addr(p, n->buf, n->a);
		d = nr(p, cls);
		t = cls == RF ? "f32" : cls == RFD ? "f64" : isfx(p, dt);
		if (n->op == KAT_CAS) {
			E(p, "atom.%s.cas.%s %s, [%s], %s, %s", sp, cls == RR || cls == RF ? "b32" :
			  "b64", R(p, cls, d), R(p, RD, a), R(p, cls, x), R(p, cls, y));
		} else if (n->op == KAT_ADD) {
			E(p, "atom.%s.add.%s %s, [%s], %s", sp, cls == RR ? "u32" : cls == RD ? "u64" : t,
			  R(p, cls, d), R(p, RD, a), R(p, cls, x));
		} else if (cls == RR || cls == RD) {
			E(p, "atom.%s.%s.%s %s, [%s], %s", sp, n->op == KAT_MAX ? "max" : "min", t,
			  R(p, cls, d), R(p, RD, a), R(p, cls, x));
		} else {
			fail(p, BURN_ERR_UNSUPPORTED, "render_ptx %s: %s", "float atomic min/max");
			return;
		}
		if (n->var >= 0)
			setvar(p, n->var, d);
		return;
	}
	case KS_SHFL: {
		int dt = kb_dtype(k, n->a), x = ex(p, n->a), w = (int)n->ival;
		int src = u32of(p, n->b), m = nr(p, RR), d;
		char sr[24];
		const char *mode = n->op == KSH_IDX ? "idx" : n->op == KSH_XOR ? "bfly" : "down";
		if (n->op != KSH_DOWN) {
			E(p, "and.b32 %s, %s, %d", R(p, RR, m), R(p, RR, src), w - 1);
			src = m;
		}
		snprintf(sr, sizeof sr, "%s", R(p, RR, src));
		d = shfl(p, mode, dt, x, sr, w);
		setvar(p, n->var, d);
		return;
	}
	case KS_SGRED: {
		int dt = kb_dtype(k, n->a), x = ex(p, n->a), w = (int)n->ival;
		for (int off = w / 2; off >= 1; off /= 2) {
			char o[16];
			snprintf(o, sizeof o, "%d", off);
			x = combine(p, n->op, dt, x, shfl(p, "bfly", dt, x, o, w));
		}
		setvar(p, n->var, x);
		return;
	}
	case KS_TFILL: {
		int f0 = p->frag[n->buf], x = ex(p, n->a);
		for (int j = 0; j < 4 && f0 >= 0; j++)
			E(p, "mov.f32 %s, %s", R(p, RF, f0 + j), R(p, RF, x));
		return;
	}
	case KS_TLOAD:
		if (tload_pair(p, s))
			return;
		tile_mem(p, (int)n->ival, n->op, n->buf, n->buf2, n->a, n->b, 0);
		return;
	case KS_TSTORE:
		tile_mem(p, (int)n->ival, KTR_C, n->buf2, n->buf, n->a, n->b, 1);
		return;
	case KS_TMMA:
		tile_mma(p, n);
		return;
	case KS_WGMMA:
		wgmma(p, s);
		return;
	}
	fail(p, BURN_ERR_INTERNAL, "render_ptx %s: %s", "not a statement");
}

static void block(P *p, KRef s, int depth);

static void
stmt(P *p, KRef s, int depth)
{
	const KKernel *k = p->k;
	const KNode *n = &k->node[s];

	p->gen++;
	switch (n->kind) {
	case KS_FOR: {
		int top = ++p->label, end = ++p->label, c, v = p->vreg[n->var], vc;
		int64_t lo, hi;
		const char *t;
		if (n->flags & ~(KF_PARALLEL | KF_UNROLL)) {
			fail(p, BURN_ERR_UNSUPPORTED, "render_ptx %s: %s", "a block or thread loop "
			     "not at the top of the kernel");
			return;
		}
		if ((n->flags & KF_UNROLL) && kb_is_const_i(k, n->a, &lo) &&
		    kb_is_const_i(k, n->b, &hi) && hi - lo <= MAX_UNROLL) {
			/* the body once per iteration, the variable a constant in
			 * each (so indices into private arrays are, and ptxas keeps
			 * such arrays in registers) */
			for (int64_t i = lo; i < hi && !p->err; i++) {
				KNode cn = { .kind = KE_CONST, .dtype = k->var[n->var].dtype, .lanes = 1,
				             .ival = i };
				p->gen++;
				setvar(p, n->var, ex_const(p, &cn));
				block(p, n->body, depth + 1);
			}
			return;
		}
		setvar(p, n->var, ex(p, n->a));
		fprintf(p->f, "$L%d:\n", top);
		p->gen++;
		c = nr(p, RP);
		vc = rcls(p, k->var[n->var].dtype);   /* RR under index_bits 32 */
		t = vc == RR ? "s32" : "s64";
		E(p, "setp.lt.%s %s, %s, %s", t, R(p, RP, c), R(p, vc, v),
		  R(p, vc, vc == RR ? u32of(p, n->b) : as64(p, n->b)));
		E(p, "@!%s bra $L%d", R(p, RP, c), end);
		block(p, n->body, depth + 1);
		E(p, "add.%s %s, %s, 1", t, R(p, vc, v), R(p, vc, v));
		E(p, "bra $L%d", top);
		fprintf(p->f, "$L%d:\n", end);
		return;
	}
	case KS_IF: {
		int el = ++p->label, end = ++p->label, c = ex(p, n->a);
		E(p, "@!%s bra $L%d", R(p, RP, c), el);
		block(p, n->body, depth + 1);
		if (n->orelse) {
			E(p, "bra $L%d", end);
			fprintf(p->f, "$L%d:\n", el);
			block(p, n->orelse, depth + 1);
			fprintf(p->f, "$L%d:\n", end);
		} else {
			fprintf(p->f, "$L%d:\n", el);
		}
		return;
	}
	case KS_STORE:
		store(p, s);
		return;
	case KS_SET:
		setvar(p, n->var, ex(p, n->a));
		return;
	case KS_BARRIER:
		/* shared memory written by threads (cp.async, st) becomes visible
		 * to wgmma's reads (the async proxy) */
		if (p->wg)
			E(p, "fence.proxy.async.shared::cta");
		E(p, "bar.sync 0");
		return;
	default:
		if (kgpu_name(n->kind)) {
			gpu_stmt(p, s);
			return;
		}
	}
	fail(p, BURN_ERR_INTERNAL, "render_ptx %s: %s", "not a statement");
}

static void
block(P *p, KRef s, int depth)
{
	if (depth > 200) {
		fail(p, BURN_ERR_LIMIT, "render_ptx %s: %s", "statements nested too deep");
		return;
	}
	for (; s && !p->err; s = p->k->node[s].next)
		if (s == p->skip)   /* rendered with the statement before it */
			p->skip = 0;
		else
			stmt(p, s, depth);
}

/* ---- segments --------------------------------------------------------------- */

/* A top-level statement mapped onto a grid: for blk block.x { for tid
 * thread.x { ... } } with constant bounds; grid and block in *g, *b. */
static int
mapped(const KKernel *k, KRef s, int64_t *g, int64_t *b)
{
	const KNode *n = &k->node[s], *t;
	int64_t lo, hi, tlo, thi;

	if (n->kind != KS_FOR || !(n->flags & KF_BLOCK_X) || !n->body)
		return 0;
	t = &k->node[n->body];
	if (t->kind != KS_FOR || !(t->flags & KF_THREAD_X) || t->next ||
	    (n->flags & ~(KF_BLOCK_X | KF_PARALLEL)) || (t->flags & ~(KF_THREAD_X | KF_PARALLEL)) ||
	    !kb_is_const_i(k, n->a, &lo) || !kb_is_const_i(k, n->b, &hi) ||
	    !kb_is_const_i(k, t->a, &tlo) || !kb_is_const_i(k, t->b, &thi))
		return -1;
	*g = hi - lo;
	*b = thi - tlo;
	return 1;
}

/* The items loop of a peeled kernel that top-level statement s is
 * (schedule_gpu: for item in LO..D block.y, D a dim parameter, LO a
 * constant): 1, with D's index and LO; 0 when s is no y loop; -1 for a y
 * loop of another form. */
static int
items_loop(const KKernel *k, KRef s, int *dim, int64_t *lo)
{
	const KNode *n = &k->node[s];

	if (n->kind != KS_FOR || !(n->flags & KF_BLOCK_Y))
		return 0;
	if ((n->flags & ~(KF_BLOCK_Y | KF_PARALLEL)) || !n->b || k->node[n->b].kind != KE_VAR ||
	    k->node[n->b].var >= k->ndim || !kb_is_const_i(k, n->a, lo))
		return -1;
	*dim = k->node[n->b].var;
	return 1;
}

/* Whether segment sg is a grid of x (its statement mapped: blocks and
 * threads from the hardware's indices). */
static int
seg_mapped(const KKernel *k, const PtxSeg *sg)
{
	return (sg->ydim < 0 || !k->node[sg->inner].next) &&
	       mapped(k, sg->inner, &(int64_t){0}, &(int64_t){0}) > 0;
}

/* Whether segment sg runs on more than one thread (a grid, or items). */
static int
seg_parallel(const KKernel *k, const PtxSeg *sg)
{
	return sg->grid > 1 || sg->block > 1 || sg->ydim >= 0 || seg_mapped(k, sg);
}

/* Variable uses of statement block s (all = follow next): bit 1 read, 2 set */
static void
vuses_e(const KKernel *k, KRef e, unsigned char *u, unsigned char *seen, int depth)
{
	/* seen: a DAG is walked once per node (shared subexpressions) */
	if (e <= 0 || depth > 10000 || seen[e])
		return;
	seen[e] = 1;
	if (k->node[e].kind == KE_VAR)
		u[k->node[e].var] |= 1;
	vuses_e(k, k->node[e].a, u, seen, depth + 1);
	vuses_e(k, k->node[e].b, u, seen, depth + 1);
	vuses_e(k, k->node[e].c, u, seen, depth + 1);
}

static void
vuses(const KKernel *k, KRef s, int all, unsigned char *u, unsigned char *seen)
{
	for (; s; s = all ? k->node[s].next : 0) {
		const KNode *n = &k->node[s];
		if (n->kind == KS_FOR || n->kind == KS_SET || ((kgpu_name(n->kind)) &&
		    n->var >= 0 && n->kind != KS_VCOPY && n->kind != KS_CPASYNC))
			u[n->var] |= 2;
		if (n->kind == KS_FOR || n->kind == KS_IF) {
			vuses_e(k, n->a, u, seen, 0);
			vuses_e(k, n->b, u, seen, 0);
			vuses(k, n->body, 1, u, seen);
			vuses(k, n->orelse, 1, u, seen);
		} else {
			vuses_e(k, n->a, u, seen, 0);
			vuses_e(k, n->b, u, seen, 0);
			vuses_e(k, n->c, u, seen, 0);
		}
	}
}

static void buses(const KKernel *k, KRef s, int all, unsigned char *u, unsigned char *seen);

/* Variables that cross segments (set in one, read in another): cross[v]
 * = 1.  They travel through the spill buffer, which only a one-thread
 * segment may write: one set by a grid is BURN_ERR_UNSUPPORTED. */
static int
cross_vars(Ctx *c, const KKernel *k, const PtxSeg *seg, int n, unsigned char *cross)
{
	size_t nv = (size_t)k->nvar + 1;
	size_t nb = (size_t)k->nbuf + 1;
	unsigned char *u = calloc((size_t)n * nv, 1), *seen = malloc((size_t)k->nnode + 1);
	unsigned char *bu = calloc((size_t)n * nb, 1);
	int bad = -1;

	if (!u || !seen || !bu) {
		free(u);
		free(seen);
		free(bu);
		return burn_fail(c, BURN_ERR_NOMEM, "render_ptx: out of memory");
	}
	/* local buffers used by several one-thread segments live in the
	 * spill scratch; in a grid they stay private to each thread (the
	 * interpreter's meaning of a local buffer in a thread loop) */
	for (int i = 0; i < n; i++) {
		if (seg[i].ydim < 0 && seg_parallel(k, &seg[i]))
			continue;
		if (seg[i].ydim >= 0 && seg_mapped(k, &seg[i]))
			continue;
		KRef s = seg[i].first;
		memset(seen, 0, (size_t)k->nnode + 1);
		for (int j = 0; j < seg[i].nstmt; j++, s = k->node[s].next)
			buses(k, s, 0, bu + (size_t)i * nb, seen);
	}
	for (int b = 0; b < k->nbuf && bad < 0; b++)
		for (int i = 0; i < n; i++)
			for (int j = i + 1; j < n; j++)
				if (k->buf[b].space == KS_LOCAL && bu[i * nb + b] && bu[j * nb + b]) {
					cross[k->nvar + b] = 1;
					/* the items' one-thread statements run an
					 * item a block: their locals are the block's */
					if (seg[i].ydim >= 0 || seg[j].ydim >= 0)
						bad = b;
				}
	free(bu);
	if (bad >= 0) {
		free(u);
		free(seen);
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "render_ptx %s: local buffer b%d is "
		                 "used by the items of a run-time dim and another launch",
		                 k->name, bad);
	}
	for (int i = 0; i < n && seen; i++) {
		KRef s = seg[i].first;
		memset(seen, 0, (size_t)k->nnode + 1);
		for (int j = 0; j < seg[i].nstmt; j++, s = k->node[s].next)
			vuses(k, s, 0, u + (size_t)i * nv, seen);
		/* the item is each segment's own, from its block's y index */
		if (seg[i].ydim >= 0)
			u[i * nv + k->node[seg[i].first].var] = 0;
	}
	for (int v = k->ndim; v < k->nvar; v++)
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				if (i != j && (u[i * nv + v] & 2) && (u[j * nv + v] & 1)) {
					cross[v] = 1;
					if (seg_parallel(k, &seg[i]))
						bad = v;
				}
	free(u);
	free(seen);
	if (bad >= 0)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "render_ptx %s: variable %s is set "
		                 "by a grid and read by another launch", k->name,
		                 k->var[bad].name ? k->var[bad].name : "?");
	return BURN_OK;
}

int
ptx_segments(Ctx *c, const KKernel *k, PtxSeg *seg, int cap, int *nseg)
{
	int n = 0, m;
	int64_t g, b;

	*nseg = 0;
	for (KRef s = k->body; s; s = k->node[s].next) {
		int ydim = -1, it;
		int64_t ylo = 0;
		KRef in = s;
		if ((it = items_loop(k, s, &ydim, &ylo)) < 0)
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "render_ptx %s: a y block loop "
			                 "that is not the items of a dim parameter", k->name);
		if (it && !(in = k->node[s].body))
			continue;   /* no statement */
		m = it && k->node[in].next ? 0 : mapped(k, in, &g, &b);
		if (m < 0)
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "render_ptx %s: a block loop "
			                 "that is not one thread loop of constant bounds", k->name);
		if (!m && !it && n && seg[n - 1].block == 0 && seg[n - 1].ydim < 0) {
			seg[n - 1].nstmt++;
			continue;
		}
		if (n == cap)
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "render_ptx %s: more than %d "
			                 "launches in one kernel", k->name, cap);
		if (m && (g < 1 || g > 2147483647 || b < 1 || b > 1024))
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "render_ptx %s: grid %lld x %lld "
			                 "threads out of range", k->name, (long long)g, (long long)b);
		seg[n].first = s;
		seg[n].nstmt = 1;
		seg[n].grid = m ? g : 1;
		seg[n].block = m ? b : 0;   /* 0 while open: a serial run */
		seg[n].spill = 0;
		seg[n].dshared = ptx_dyn_shared(k);
		seg[n].ydim = ydim;
		seg[n].ylo = ylo;
		seg[n].inner = in;
		n++;
	}
	for (int i = 0; i < n; i++)
		if (!seg[i].block)
			seg[i].block = 1;
	if (n > 1) {
		unsigned char *cross = calloc((size_t)k->nvar + k->nbuf + 1, 1);
		int rc;
		if (!cross)
			return burn_fail(c, BURN_ERR_NOMEM, "render_ptx: out of memory");
		rc = cross_vars(c, k, seg, n, cross);
		for (int v = 0; v < k->nvar + k->nbuf && !rc; v++)
			if (cross[v])
				for (int i = 0; i < n; i++)
					seg[i].spill = 1;
		free(cross);
		TRY(rc);
	}
	*nseg = n;
	return BURN_OK;
}

int64_t
ptx_dyn_shared(const KKernel *k)
{
	int64_t t = 0;

	for (int b = 0; b < k->nbuf; b++)
		if (k->buf[b].space == KS_SHARED)
			t += shared_align(k, k->buf[b].count * dtype_size(k->buf[b].dtype));
	if (ptx_uses_wgmma(k))
		return t + 1024;   /* the block's start rounded up to 1024 */
	return t > PTX_STATIC_SHARED ? t : 0;
}

int
ptx_cross(Ctx *c, const KKernel *k, const PtxSeg *seg, int n, unsigned char *cross)
{
	return cross_vars(c, k, seg, n, cross);
}

int64_t
ptx_spill_offset(const KKernel *k, int b)
{
	int64_t off = align16(8 * (int64_t)k->nvar);

	for (int i = 0; i < b && i < k->nbuf; i++)
		if (k->buf[i].space == KS_LOCAL)
			off += align16(k->buf[i].count * dtype_size(k->buf[i].dtype));
	return off;
}

int64_t
ptx_spill_bytes(const KKernel *k)
{
	return ptx_spill_offset(k, k->nbuf);
}

void
ptx_entry_name(const char *prefix, const KKernel *k, int i, int nseg, char *buf, size_t n)
{
	const char *sep = prefix && *prefix ? "_" : "";

	if (!prefix)
		prefix = "";
	if (nseg == 1)
		snprintf(buf, n, "%s%s%s", prefix, sep, k->name);
	else
		snprintf(buf, n, "%s%s%s_s%d", prefix, sep, k->name, i);
}

void
ptx_header(FILE *f, int wg)
{
	/* 7.8: the first PTX version with sm_90 (sm_80 takes 7.0); 8.0 and
	 * sm_90a for wgmma */
	fprintf(f, "//\n// Generated by burncc (kernel IR -> PTX)\n//\n\n"
	        ".version %s\n.target sm_%d%s\n.address_size 64\n\n", wg ? "8.0" : "7.8", PTX_SM,
	        wg ? "a" : "");
}

/* ---- entries ------------------------------------------------------------- */

/* Buffers used by the statements of a segment. */
static void
buses_e(const KKernel *k, KRef e, unsigned char *u, unsigned char *seen, int depth)
{
	/* seen: a DAG is walked once per node (shared subexpressions) */
	if (e <= 0 || depth > 10000 || seen[e])
		return;
	seen[e] = 1;
	if (k->node[e].kind == KE_LOAD)
		u[k->node[e].buf] = 1;
	buses_e(k, k->node[e].a, u, seen, depth + 1);
	buses_e(k, k->node[e].b, u, seen, depth + 1);
	buses_e(k, k->node[e].c, u, seen, depth + 1);
}

static void
buses(const KKernel *k, KRef s, int all, unsigned char *u, unsigned char *seen)
{
	/* (the seen set covers expressions; statements are walked once) */
	for (; s; s = all ? k->node[s].next : 0) {
		const KNode *n = &k->node[s];
		if (n->kind == KS_STORE || kgpu_name(n->kind)) {
			if (n->kind != KS_CPWAIT && n->kind != KS_WGWAIT) {
				u[n->buf] = 1;
				if (n->kind != KS_SHFL && n->kind != KS_SGRED && n->kind != KS_ATOMIC &&
				    n->kind != KS_TFILL) {
					u[n->buf2] = 1;
					if (n->kind == KS_TMMA || n->kind == KS_WGMMA)
						u[n->buf3] = 1;
				}
				if (n->kind == KS_SHFL || n->kind == KS_SGRED)
					u[n->buf] = 0;
				if (n->kind == KS_WGMMA && ktile_info((int)n->ival))
					for (int j = 0; j < ktile_info((int)n->ival)->n / 8; j++)
						u[n->buf + j] = 1;
			}
		}
		buses_e(k, n->a, u, seen, 0);
		buses_e(k, n->b, u, seen, 0);
		buses_e(k, n->c, u, seen, 0);
		if (n->kind == KS_FOR || n->kind == KS_IF) {
			buses(k, n->body, 1, u, seen);
			buses(k, n->orelse, 1, u, seen);
		}
	}
}

/* Local buffers start zeroed, as the interpreter's (per thread in a
 * grid): 16 bytes a store. */
static void
zero_local(P *p, int base, int64_t bytes)
{
	int i = nr(p, RD), a = nr(p, RD), z = nr(p, RR), c = nr(p, RP), top = ++p->label;

	E(p, "mov.b32 %s, 0", R(p, RR, z));
	E(p, "mov.b64 %s, 0", R(p, RD, i));
	fprintf(p->f, "$L%d:\n", top);
	E(p, "add.s64 %s, %s, %s", R(p, RD, a), R(p, RD, base), R(p, RD, i));
	E(p, "st.local.v4.b32 [%s], {%s, %s, %s, %s}", R(p, RD, a), R(p, RR, z), R(p, RR, z),
	  R(p, RR, z), R(p, RR, z));
	E(p, "add.s64 %s, %s, 16", R(p, RD, i), R(p, RD, i));
	E(p, "setp.lt.s64 %s, %s, %lld", R(p, RP, c), R(p, RD, i), (long long)bytes);
	E(p, "@%s bra $L%d", R(p, RP, c), top);
}

/* Load (st = 0) or store (st = 1) the crossing variables at the spill
 * scratch whose address is register sp. */
static void
spill(P *p, const unsigned char *cross, int sp, int st)
{
	static const char *const t[NRC] = { "u32", "b32", "b64", "f32", "f64", "b16" };

	for (int v = 0; v < p->k->nvar; v++) {
		int cls = rcls(p, p->k->var[v].dtype), r = p->vreg[v], x;
		if (!cross[v])
			continue;
		if (cls == RP) {
			x = nr(p, RR);
			if (st) {
				E(p, "selp.u32 %s, 1, 0, %s", R(p, RR, x), R(p, RP, r));
				E(p, "st.global.u32 [%s+%d], %s", R(p, RD, sp), 8 * v, R(p, RR, x));
			} else {
				E(p, "ld.global.u32 %s, [%s+%d]", R(p, RR, x), R(p, RD, sp), 8 * v);
				E(p, "setp.ne.u32 %s, %s, 0", R(p, RP, r), R(p, RR, x));
			}
		} else if (st) {
			E(p, "st.global.%s [%s+%d], %s", t[cls], R(p, RD, sp), 8 * v, R(p, cls, r));
		} else {
			E(p, "ld.global.%s %s, [%s+%d]", t[cls], R(p, cls, r), R(p, RD, sp), 8 * v);
		}
	}
}

/* Mapped loop l's variable: the hardware index hw plus the loop's start. */
static void
hw_index(P *p, const KNode *l, const char *hw)
{
	int cls = rcls(p, p->k->var[l->var].dtype), t = nr(p, RR), w;

	E(p, "mov.u32 %s, %s", R(p, RR, t), hw);
	p->gen++;
	if (cls == RR) {
		E(p, "add.s32 %s, %s, %s", R(p, RR, p->vreg[l->var]), R(p, RR, t),
		  R(p, RR, ex(p, l->a)));
		return;
	}
	w = nr(p, RD);
	E(p, "cvt.u64.u32 %s, %s", R(p, RD, w), R(p, RR, t));
	E(p, "add.s64 %s, %s, %s", R(p, RD, p->vreg[l->var]), R(p, RD, w),
	  R(p, RD, as64(p, l->a)));
}

static int
render_entry(Ctx *c, const char *prefix, const KKernel *k, const PtxSeg *sg, int si,
             int nseg, const unsigned char *cross, FILE *final)
{
	/* the entry is written to final only when all of it rendered */
	char *etext = NULL;
	size_t elen = 0;
	FILE *out = open_memstream(&etext, &elen);
	int sp = -1;
	P p;
	char name[160], *text = NULL;
	size_t len = 0;
	unsigned char *used, *seen;
	int rc = BURN_OK, np = 0, dyn = ptx_dyn_shared(k) > 0;
	int64_t dyn_off = 0;
	int dyn_base = -1;
	KRef s;

	memset(&p, 0, sizeof p);
	ptx_entry_name(prefix, k, si, nseg, name, sizeof name);
	p.c = c;
	p.k = k;
	p.entry = name;
	p.lane = -1;
	p.cross = cross;
	p.serial = !seg_mapped(k, sg);
	p.memo = calloc((size_t)k->nnode + 1, sizeof *p.memo);
	p.stamp = calloc((size_t)k->nnode + 1, sizeof *p.stamp);
	p.vreg = calloc((size_t)k->nvar + 1, sizeof *p.vreg);
	p.base = malloc(((size_t)k->nbuf + 1) * sizeof *p.base);
	p.frag = malloc(((size_t)k->nbuf + 1) * sizeof *p.frag);
	p.role = calloc((size_t)k->nbuf + 1, sizeof *p.role);
	p.shape = calloc((size_t)k->nbuf + 1, sizeof *p.shape);
	used = calloc((size_t)k->nbuf + 1, 1);
	seen = calloc((size_t)k->nnode + 1, 1);
	p.f = open_memstream(&text, &len);
	if (!p.memo || !p.stamp || !p.vreg || !p.base || !p.frag || !p.role || !p.shape ||
	    !used || !seen || !p.f || !out) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "render_ptx: out of memory");
		goto out;
	}
	p.gen = 1;
	p.wg = ptx_uses_wgmma(k);
	p.idx32 = k->sched && k->sched->index_bits == 32;
	for (KRef i = 1; i < k->nnode && p.idx32; i++)
		if (k->node[i].kind == KS_ATOMIC && k->buf[k->node[i].buf].dtype == DT_I64)
			p.idx32 = 0;   /* 8-byte atomics keep 64-bit operands */
	for (int v = 0; v < k->nvar; v++)
		p.vreg[v] = nr(&p, rcls(&p, k->var[v].dtype));
	s = sg->first;
	for (int j = 0; j < sg->nstmt; j++, s = k->node[s].next)
		buses(k, s, 0, used, seen);
	/* fragments: role and shape from the tile ops that touch them */
	for (KRef i = 1; i < k->nnode; i++) {
		const KNode *n = &k->node[i];
		int sh = (int)n->ival;
		if (n->kind == KS_TLOAD) {
			p.role[n->buf] = n->op; p.shape[n->buf] = sh;
		} else if (n->kind == KS_TMMA) {
			p.role[n->buf] = KTR_C; p.shape[n->buf] = sh;
			p.role[n->buf2] = KTR_A; p.shape[n->buf2] = sh;
			p.role[n->buf3] = KTR_B; p.shape[n->buf3] = sh;
		} else if (n->kind == KS_TFILL) {
			p.role[n->buf] = KTR_C; p.shape[n->buf] = sh;
		} else if (n->kind == KS_TSTORE) {
			p.role[n->buf2] = KTR_C; p.shape[n->buf2] = sh;
		} else if (n->kind == KS_WGMMA && ktile_info(sh) && ktile_info(sh)->wg) {
			for (int j = 0; j < ktile_info(sh)->n / 8; j++) {
				p.role[n->buf + j] = KTR_C;
				p.shape[n->buf + j] = ktile_info(sh)->sub;
			}
		}
	}
	/* dynamic shared memory: one block for the entry (module scope) */
	if (dyn)
		fprintf(out, ".extern .shared .align 16 .b8 %s_dyn[];\n", name);
	/* parameters: every global buffer, in buffer order */
	fprintf(out, ".visible .entry %s(", name);
	for (int b = 0; b < k->nbuf; b++)
		if (k->buf[b].space == KS_GLOBAL)
			fprintf(out, "%s\n\t.param .u64 %s_p%d", np++ ? "," : "", name, b);
	/* then the dim parameters' values (the launch list's at launch) */
	for (int d = 0; d < k->ndim; d++)
		fprintf(out, "%s\n\t.param .u64 %s_d%d", np++ ? "," : "", name, d);
	if (sg->spill)
		fprintf(out, "%s\n\t.param .u64 %s_spill", np++ ? "," : "", name);
	fprintf(out, "\n)\n");
	if (sg->block > 1)
		fprintf(out, ".maxntid %lld, 1, 1\n", (long long)sg->block);
	/* a kernel of matrix tiles keeps its accumulators and operands in
	 * registers: one block per multiprocessor is enough, so ptxas may
	 * spend up to 255 registers on loading operands early rather than
	 * squeeze them for occupancy (which serialised ldmatrix and mma) */
	for (KRef i = 1; i < k->nnode; i++)
		if (k->node[i].kind == KS_TMMA || k->node[i].kind == KS_WGMMA) {
			fprintf(out, ".minnctapersm 1\n");
			break;
		}
	fprintf(out, "{\n");
	for (int d = 0; d < k->ndim; d++) {
		if (rcls(&p, k->var[d].dtype) == RD) {
			E(&p, "ld.param.u64 %s, [%s_d%d]", R(&p, RD, p.vreg[d]), name, d);
		} else {
			int t = nr(&p, RD);
			E(&p, "ld.param.u64 %s, [%s_d%d]", R(&p, RD, t), name, d);
			E(&p, "cvt.u32.u64 %s, %s", R(&p, RR, p.vreg[d]), R(&p, RD, t));
		}
	}
	if (sg->spill) {
		int t = nr(&p, RD);
		sp = nr(&p, RD);
		E(&p, "ld.param.u64 %s, [%s_spill]", R(&p, RD, t), name);
		E(&p, "cvta.to.global.u64 %s, %s", R(&p, RD, sp), R(&p, RD, t));
		spill(&p, cross, sp, 0);
	}
	for (int b = 0; b < k->nbuf; b++) {
		const KBuf *kb = &k->buf[b];
		int64_t bytes = kb->count * dtype_size(kb->dtype);
		p.base[b] = p.frag[b] = -1;
		if (kb->space == KS_GLOBAL) {
			int t = nr(&p, RD);
			p.base[b] = nr(&p, RD);
			if (!used[b])
				continue;
			E(&p, "ld.param.u64 %s, [%s_p%d]", R(&p, RD, t), name, b);
			E(&p, "cvta.to.global.u64 %s, %s", R(&p, RD, p.base[b]), R(&p, RD, t));
		} else if (kb->space == KS_LOCAL && used[b] && cross[k->nvar + b] && p.serial) {
			p.base[b] = nr(&p, RD);
			E(&p, "add.s64 %s, %s, %lld", R(&p, RD, p.base[b]), R(&p, RD, sp),
			  (long long)ptx_spill_offset(k, b));
		} else if (kb->space == KS_SHARED && dyn) {
			/* every shared buffer at its offset in the dynamic block
			 * (the launch's size is all of them: ptx_dyn_shared) */
			p.base[b] = nr(&p, RD);
			if (used[b] && p.wg) {
				if (dyn_base < 0) {
					dyn_base = nr(&p, RD);
					E(&p, "mov.u64 %s, %s_dyn", R(&p, RD, dyn_base), name);
					E(&p, "add.u64 %s, %s, 1023", R(&p, RD, dyn_base), R(&p, RD, dyn_base));
					E(&p, "and.b64 %s, %s, -1024", R(&p, RD, dyn_base), R(&p, RD, dyn_base));
				}
				E(&p, "add.u64 %s, %s, %lld", R(&p, RD, p.base[b]), R(&p, RD, dyn_base),
				  (long long)dyn_off);
			} else if (used[b]) {
				E(&p, "mov.u64 %s, %s_dyn+%lld", R(&p, RD, p.base[b]), name,
				  (long long)dyn_off);
			}
			dyn_off += shared_align(k, bytes);
		} else if ((kb->space == KS_SHARED || kb->space == KS_LOCAL) && used[b]) {
			if (bytes <= 0 || bytes > ((int64_t)1 << 30)) {
				rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "render_ptx %s: buffer b%d "
				               "of %lld bytes", k->name, b, (long long)bytes);
				goto out;
			}
			fprintf(out, "\t.%s .align 16 .b8 %s_b%d[%lld];\n", kb->space == KS_SHARED ?
			        "shared" : "local", name, b, (long long)align16(bytes));
			p.base[b] = nr(&p, RD);
			E(&p, "mov.u64 %s, %s_b%d", R(&p, RD, p.base[b]), name, b);
			if (kb->space == KS_LOCAL)
				zero_local(&p, p.base[b], align16(bytes));
		} else if (kb->space == KS_FRAG && used[b]) {
			int sh = p.shape[b], ro = p.role[b];
			if (!half_tile(sh) && sh != KT_M16N8K8_F32) {
				rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "render_ptx %s: fragment b%d "
				               "of an unknown tile shape", k->name, b);
				goto out;
			}
			p.frag[b] = p.nreg[frag_cls(sh, ro)] + 1;
			p.nreg[frag_cls(sh, ro)] += frag_regs(sh, ro);
		}
	}
	/* the body: the mapped loops' variables from the hardware indices,
	 * the item (if any) from the block's y */
	if (sg->ydim >= 0)
		hw_index(&p, &k->node[sg->first], "%ctaid.y");
	if (seg_mapped(k, sg)) {
		const KNode *bl = &k->node[sg->inner], *th = &k->node[bl->body];
		hw_index(&p, bl, "%ctaid.x");
		hw_index(&p, th, "%tid.x");
		block(&p, th->body, 1);
	} else if (sg->ydim >= 0) {
		/* one thread an item; it sets no variable another segment
		 * reads (ptx_segments), so nothing is spilled back */
		block(&p, sg->inner, 1);
	} else {
		s = sg->first;
		for (int j = 0; j < sg->nstmt && !p.err; j++, s = k->node[s].next)
			stmt(&p, s, 0);
		if (sg->spill)
			spill(&p, cross, sp, 1);   /* one thread: no race */
	}
	E(&p, "ret");
	if (p.err) {
		rc = p.err;
		goto out;
	}
	fflush(p.f);
	for (int cls = 0; cls < NRC; cls++)
		if (p.nreg[cls])
			fprintf(out, "\t.reg %s %s<%d>;\n", rtype[cls], rpre[cls], p.nreg[cls] + 1);
	fwrite(text, 1, len, out);
	fprintf(out, "}\n\n");
	fflush(out);
	fwrite(etext, 1, elen, final);
out:
	if (out)
		fclose(out);
	free(etext);
	if (p.f)
		fclose(p.f);
	free(text);
	free(p.memo); free(p.stamp); free(p.vreg); free(p.base); free(p.frag);
	free(p.role); free(p.shape); free(used); free(seen);
	return rc;
}

int
ptx_render_entries(Ctx *c, const char *prefix, const KKernel *k, FILE *f)
{
	PtxSeg *seg = malloc(PTX_MAX_SEG * sizeof *seg);
	unsigned char *cross = calloc((size_t)k->nvar + k->nbuf + 1, 1);
	int n = 0, rc;

	if (!seg || !cross) {
		free(seg);
		free(cross);
		return burn_fail(c, BURN_ERR_NOMEM, "render_ptx: out of memory");
	}
	rc = kir_check_legal(c, k, "render_ptx", &target_cuda.ops, 1);
	if (!rc)
		rc = ptx_segments(c, k, seg, PTX_MAX_SEG, &n);
	if (!rc && n > 1)
		rc = cross_vars(c, k, seg, n, cross);
	for (int i = 0; i < n && !rc; i++)
		rc = render_entry(c, prefix, k, &seg[i], i, n, cross, f);
	free(seg);
	free(cross);
	return rc;
}

int
ptx_render_kernel(Ctx *c, const KKernel *k, FILE *f)
{
	ptx_header(f, ptx_uses_wgmma(k));
	return ptx_render_entries(c, NULL, k, f);
}

int
ptx_render_program(Ctx *c, const char *prefix, const KProgram *p, FILE *f)
{
	int wg = 0;

	for (int i = 0; i < p->nkernel; i++)
		wg |= ptx_uses_wgmma(p->kernel[i]);
	ptx_header(f, wg);
	for (int i = 0; i < p->nkernel; i++)
		TRY(ptx_render_entries(c, prefix, p->kernel[i], f));
	return BURN_OK;
}

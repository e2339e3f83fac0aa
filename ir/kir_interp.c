/*
 * kir_interp.c - a tree-walking interpreter for the kernel IR, used for
 * constant folding: the reference semantics of the legalised kernel IR.
 *
 * It runs kernels after passes/legalize.c: ops defined by an expansion
 * (kops.def rows with KP_LEG_*, saturating float->int casts) are reported
 * as not legalised instead of being computed by a second copy of their
 * definition; so are loads, stores and rounding casts of the storage types
 * (f16, bf16, float8), which legalisation turns into integer ops on their
 * bits (loads and stores of u16/u8).  What remains is primitive: f32
 * arithmetic in float with the float libm functions, integer results
 * wrapped to their type (two's complement), quot/rem checked against
 * their precondition, shifts by the count mod the width.
 *
 * Expressions are evaluated per statement execution with memoisation
 * (a node evaluated twice in one statement is computed once), so shared
 * DAGs stay linear.  A select evaluates both arms, as a target may; a load
 * out of bounds in either is an error, so lowerings must guard padding
 * reads with a guarded load, which reads only where its guard holds.
 * Every load and store is bounds-checked; a violation is
 * BURN_ERR_INTERNAL, never a crash.
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "kir.h"
#include "runtime/strings.inc"

/* A scalar: signed integers in i, unsigned integers and bool in u, floats
 * in f (f32 values are exactly representable as float). */
typedef struct KVal {
	int64_t i;
	uint64_t u;
	double f;
} KVal;

enum { C_F, C_S, C_U };

typedef struct Simt Simt;
typedef struct Shadow Shadow;

typedef struct Interp {
	Ctx *c;
	const KKernel *k;
	void **buf;        /* element pointers, locals included */
	KVal *var;
	const int64_t *count;  /* per buffer: its extent (KBuf.ext evaluated) */
	KVal *memo;
	uint64_t *stamp;   /* memo[e] valid when stamp[e] == gen */
	uint64_t gen;
	int64_t *steps;    /* budget left, or NULL */
	int err;
	/* GPU semantics (see "Threads and blocks" below) */
	int64_t hw[6];     /* KX_THREAD_X..KX_BLOCK_Z - 1: hardware indices */
	Simt *simt;        /* the block's threads, when this is one of them */
	int tid;           /* linear thread index within the block */
	Shadow *shadow;    /* per buffer: race-detection state (shared only) */
	uint32_t *epoch;   /* barrier intervals so far (the kernel's Interp) */
	KRef tbody;        /* a thread's body (simt_run) */
	/* GPU statements */
	KVal sga, sgb, sgc; /* this lane's operands at a subgroup op */
	struct Pend *pend; /* async copies issued and not yet waited for */
	int npend, cappend;
	int64_t ngrp;      /* groups of async copies closed so far */
	struct WPend *wpend; /* a subgroup's wgmma in flight (its lane 0's) */
	int nwpend, capwpend;
	int64_t nwgrp;     /* groups of wgmma closed so far */
} Interp;

/* One KS_WGMMA in flight: computed when issued, with a hash of the A and
 * B ranges it read; at its KS_WGWAIT the ranges must hash the same (the
 * hardware may read them any time before). */
typedef struct WPend {
	KRef s;
	int c0, nc;            /* its C fragments c0 .. c0+nc-1 */
	int ab, bb;
	int64_t alo, an, blo, bn;
	uint64_t hash;
	int64_t grp;           /* its group (KS_WGWAIT), -1 while open */
} WPend;

typedef struct Pend {      /* one KS_CPASYNC in flight */
	int dbuf, sbuf;
	int64_t di, si, n;
	int64_t grp;           /* its group (KS_CPWAIT), -1 while open */
} Pend;

static int simt_run(Interp *in, KRef s);
static int gpu_stmt(Interp *in, KRef s);
static int simt_barrier(Interp *in, KRef s);
static int simt_access(Interp *in, int b, int64_t i, int write);
static void simt_block_start(Interp *in);

/* One more statement or loop iteration: 1 when the budget has run out
 * (in->err is BURN_ERR_LIMIT, unrecorded: see kir_interp_budget). */
static int
spend(Interp *in)
{
	if (!in->steps || --*in->steps >= 0)
		return 0;
	if (!in->err)
		in->err = BURN_ERR_LIMIT;
	return 1;
}

static int
cls(int dt)
{
	if (dtype_is_float(dt))
		return C_F;
	if (dt == DT_I8 || dt == DT_I16 || dt == DT_I32 || dt == DT_I64)
		return C_S;
	return C_U;
}

static int64_t
wrap_s(int dt, int64_t v)
{
	switch (dt) {
	case DT_I8: return (int8_t)v;
	case DT_I16: return (int16_t)v;
	case DT_I32: return (int32_t)v;
	}
	return v;
}

static uint64_t
wrap_u(int dt, uint64_t v)
{
	switch (dt) {
	case DT_BOOL: return v != 0;
	case DT_U8: return (uint8_t)v;
	case DT_U16: return (uint16_t)v;
	case DT_U32: return (uint32_t)v;
	}
	return v;
}

/* ---- memory ------------------------------------------------------------ */

static KVal
read_elem(int dt, const void *p, int64_t i)
{
	KVal v = {0, 0, 0};

	switch (dt) {
	case DT_F32: v.f = ((const float *)p)[i]; break;
	case DT_F64: v.f = ((const double *)p)[i]; break;
	case DT_I8: v.i = ((const int8_t *)p)[i]; break;
	case DT_I16: v.i = ((const int16_t *)p)[i]; break;
	case DT_I32: v.i = ((const int32_t *)p)[i]; break;
	case DT_I64: v.i = ((const int64_t *)p)[i]; break;
	case DT_U8: case DT_BOOL: v.u = ((const uint8_t *)p)[i]; break;
	case DT_U16: v.u = ((const uint16_t *)p)[i]; break;
	case DT_U32: v.u = ((const uint32_t *)p)[i]; break;
	case DT_U64: v.u = ((const uint64_t *)p)[i]; break;
	}
	return v;
}

/*
 * An element of a matrix-tile operand.  The tile op consumes f16 and bf16
 * as the hardware does (mma.sync and cooperative matrices take them as
 * inputs): the one place the interpreter reads them as numbers.  Every
 * f16 and bf16 is an f32 exactly, so the decode has no rounding to define;
 * everywhere else they go through the legalised kernel IR
 * (passes/legalize.c).
 */
static float
tile_elem(int dt, const void *p, int64_t i)
{
	uint16_t h;
	int e, m;
	double v;

	if (dt == DT_BF16) {   /* the top half of an f32 */
		uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
		float f;
		memcpy(&f, &u, sizeof f);
		return f;
	}
	if (dt != DT_F16)
		return (float)read_elem(dt, p, i).f;
	h = ((const uint16_t *)p)[i];
	e = (h >> 10) & 31;
	m = h & 1023;
	if (e == 31)
		v = m ? NAN : INFINITY;
	else if (e == 0)
		v = ldexp(m, -24);
	else
		v = ldexp(m + 1024, e - 25);
	return (float)(h & 0x8000 ? -v : v);
}

static void
write_elem(int dt, void *p, int64_t i, KVal v)
{
	switch (dt) {
	case DT_F32: ((float *)p)[i] = (float)v.f; break;
	case DT_F64: ((double *)p)[i] = v.f; break;
	case DT_I8: ((int8_t *)p)[i] = (int8_t)v.i; break;
	case DT_I16: ((int16_t *)p)[i] = (int16_t)v.i; break;
	case DT_I32: ((int32_t *)p)[i] = (int32_t)v.i; break;
	case DT_I64: ((int64_t *)p)[i] = v.i; break;
	case DT_U8: ((uint8_t *)p)[i] = (uint8_t)v.u; break;
	case DT_BOOL: ((uint8_t *)p)[i] = v.u != 0; break;
	case DT_U16: ((uint16_t *)p)[i] = (uint16_t)v.u; break;
	case DT_U32: ((uint32_t *)p)[i] = (uint32_t)v.u; break;
	case DT_U64: ((uint64_t *)p)[i] = v.u; break;
	}
}

/* An integer value as an index (unsigned huge values become negative and
 * fail the bounds check). */
static int64_t
as_index(int dt, KVal v)
{
	return cls(dt) == C_S ? v.i : (int64_t)v.u;
}

/* ---- evaluation -------------------------------------------------------- */

static KVal eval(Interp *in, KRef e);

static int
fail(Interp *in, int code, const char *msg, int64_t a, int64_t b)
{
	if (!in->err)
		in->err = burn_fail(in->c, code, "kir_interp %s: %s (%lld, %lld)",
		                    in->k->name, msg, (long long)a, (long long)b);
	return in->err;
}

static double
round_to(int dt, double x)
{
	return dt == DT_F32 ? (double)(float)x : x;
}

static double
fun_f(int op, int dt, double a)
{
	if (dt == DT_F32) {
		float x = (float)a;
		switch (op) {
		case KO_NEG: return -x;
		case KO_ABS: return fabsf(x);
		case KO_EXP: return expf(x);
		case KO_LOG: return logf(x);
		case KO_SQRT: return sqrtf(x);
		case KO_SIN: return sinf(x);
		case KO_COS: return cosf(x);
		case KO_TAN: return tanf(x);
		case KO_ASIN: return asinf(x);
		case KO_ACOS: return acosf(x);
		case KO_ATAN: return atanf(x);
		case KO_SINH: return sinhf(x);
		case KO_COSH: return coshf(x);
		case KO_TANH: return tanhf(x);
		case KO_ASINH: return asinhf(x);
		case KO_ACOSH: return acoshf(x);
		case KO_ATANH: return atanhf(x);
		case KO_FLOOR: return floorf(x);
		case KO_CEIL: return ceilf(x);
		case KO_ROUND: return nearbyintf(x);
		}
		return x;
	}
	switch (op) {
	case KO_NEG: return -a;
	case KO_ABS: return fabs(a);
	case KO_EXP: return exp(a);
	case KO_LOG: return log(a);
	case KO_SQRT: return sqrt(a);
	case KO_SIN: return sin(a);
	case KO_COS: return cos(a);
	case KO_TAN: return tan(a);
	case KO_ASIN: return asin(a);
	case KO_ACOS: return acos(a);
	case KO_ATAN: return atan(a);
	case KO_SINH: return sinh(a);
	case KO_COSH: return cosh(a);
	case KO_TANH: return tanh(a);
	case KO_ASINH: return asinh(a);
	case KO_ACOSH: return acosh(a);
	case KO_ATANH: return atanh(a);
	case KO_ERF: return erf(a);
	case KO_FLOOR: return floor(a);
	case KO_CEIL: return ceil(a);
	case KO_ROUND: return nearbyint(a);
	}
	return a;
}

static KVal
un(int op, int dt, KVal a)
{
	KVal r = {0, 0, 0};

	switch (cls(dt)) {
	case C_F:
		if (op == KO_BITS) {
			if (dt == DT_F32) {
				float x = (float)a.f;
				uint32_t u;
				memcpy(&u, &x, 4);
				r.u = u;
			} else {
				memcpy(&r.u, &a.f, 8);
			}
		} else {
			r.f = round_to(dt, fun_f(op, dt, a.f));
		}
		break;
	case C_S:
		switch (op) {
		case KO_NEG: r.i = (int64_t)(0 - (uint64_t)a.i); break;
		case KO_BITNOT: r.i = ~a.i; break;
		default: r.i = a.i;   /* floor, ceil, round */
		}
		r.i = wrap_s(dt, r.i);
		break;
	case C_U:
		switch (op) {
		case KO_NEG: r.u = 0 - a.u; break;
		case KO_BITNOT: r.u = ~a.u; break;
		case KO_NOT: r.u = a.u == 0; return r;
		case KO_FROMBITS:
			if (dt == DT_U32) {
				uint32_t u = (uint32_t)a.u;
				float x;
				memcpy(&x, &u, 4);
				r.f = x;
			} else {
				memcpy(&r.f, &a.u, 8);
			}
			return r;
		default: r.u = a.u;
		}
		r.u = wrap_u(dt, r.u);
		break;
	}
	return r;
}

static int
cmp_result(int op, int lt, int eq, int unord)
{
	if (unord)
		return op == KO_NE;
	switch (op) {
	case KO_LT: return lt;
	case KO_LE: return lt || eq;
	case KO_GT: return !lt && !eq;
	case KO_GE: return !lt;
	case KO_EQ: return eq;
	case KO_NE: return !eq;
	}
	return 0;
}

static KVal
bin(int op, int dt, KVal a, KVal b)
{
	KVal r = {0, 0, 0};

	if (op >= KO_LT && op <= KO_NE) {
		switch (cls(dt)) {
		case C_F:
			r.u = cmp_result(op, a.f < b.f, a.f == b.f,
			                 isnan(a.f) || isnan(b.f));
			break;
		case C_S:
			r.u = cmp_result(op, a.i < b.i, a.i == b.i, 0);
			break;
		default:
			r.u = cmp_result(op, a.u < b.u, a.u == b.u, 0);
		}
		return r;
	}
	switch (cls(dt)) {
	case C_F: {
		double x = a.f, y = b.f, z;
		if (dt == DT_F32) {
			float fx = (float)x, fy = (float)y;
			switch (op) {
			case KO_ADD: z = fx + fy; break;
			case KO_SUB: z = fx - fy; break;
			case KO_MUL: z = fx * fy; break;
			case KO_DIV: z = fx / fy; break;
			case KO_MOD: case KO_FMOD: z = fmodf(fx, fy); break;
			case KO_POW: z = powf(fx, fy); break;
			default: z = 0;
			}
		} else {
			switch (op) {
			case KO_ADD: z = x + y; break;
			case KO_SUB: z = x - y; break;
			case KO_MUL: z = x * y; break;
			case KO_DIV: z = x / y; break;
			case KO_MOD: case KO_FMOD: z = fmod(x, y); break;
			case KO_POW: z = pow(x, y); break;
			default: z = 0;
			}
		}
		if (op == KO_AND || op == KO_OR || op == KO_XOR) {
			int p = x != 0, q = y != 0;
			r.u = op == KO_AND ? p && q : op == KO_OR ? p || q : p != q;
			return r;
		}
		r.f = round_to(dt, z);
		return r;
	}
	case C_S: {
		int64_t x = a.i, y = b.i, z;
		uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
		int w = 8 * dtype_size(dt);
		switch (op) {
		case KO_ADD: z = (int64_t)(ux + uy); break;
		case KO_SUB: z = (int64_t)(ux - uy); break;
		case KO_MUL: z = (int64_t)(ux * uy); break;
		case KO_QUOT: z = x / y; break;   /* precondition checked by eval */
		case KO_REM: z = x % y; break;
		case KO_BAND: z = x & y; break;
		case KO_BOR: z = x | y; break;
		case KO_BXOR: z = x ^ y; break;
		case KO_SHLM: z = (int64_t)(ux << (uy & (uint64_t)(w - 1))); break;
		case KO_SHRM: z = x >> (uy & (uint64_t)(w - 1)); break;
		default: z = 0;
		}
		r.i = wrap_s(dt, z);
		return r;
	}
	default: {
		uint64_t x = a.u, y = b.u, z;
		int w = dt == DT_BOOL ? 8 : 8 * dtype_size(dt);
		switch (op) {
		case KO_ADD: z = x + y; break;
		case KO_SUB: z = x - y; break;
		case KO_MUL: z = x * y; break;
		case KO_QUOT: z = x / y; break;
		case KO_REM: z = x % y; break;
		case KO_BAND: z = x & y; break;
		case KO_BOR: z = x | y; break;
		case KO_BXOR: z = x ^ y; break;
		case KO_SHLM: z = x << (y & (uint64_t)(w - 1)); break;
		case KO_SHRM: z = x >> (y & (uint64_t)(w - 1)); break;
		case KO_AND: z = x && y; break;
		case KO_OR: z = x || y; break;
		case KO_XOR: z = (x != 0) != (y != 0); break;
		default: z = 0;
		}
		r.u = wrap_u(dt, z);
		return r;
	}
	}
}

/* The value range of integer dtype dt, as doubles (the bounds are powers
 * of two, so exact): [lo, hi). */
static void
int_range(int dt, double *lo, double *hi)
{
	int w = 8 * dtype_size(dt);

	*lo = dtype_is_signed(dt) ? -ldexp(1, w - 1) : 0;
	*hi = ldexp(1, dtype_is_signed(dt) ? w - 1 : w);
}

static KVal
cast(int to, int from, KVal a)
{
	KVal r = {0, 0, 0};
	int cf = cls(from);

	if (to == DT_BOOL) {
		r.u = cf == C_F ? a.f != 0 : cf == C_S ? a.i != 0 : a.u != 0;
		return r;
	}
	switch (cls(to)) {
	case C_F:
		if (to == DT_F64)
			r.f = cf == C_F ? a.f : cf == C_S ? (double)a.i : (double)a.u;
		else
			r.f = cf == C_F ? (float)a.f : cf == C_S ? (float)a.i : (float)a.u;
		break;
	case C_S:
	default:
		if (cf == C_F) {
			/* a raw conversion (legalised: the operand is in range; out of
			 * range the result is unspecified, here 0) */
			double lo, hi, t = trunc(a.f);
			int_range(to, &lo, &hi);
			if (!(t >= lo && t < hi))
				t = 0;
			if (cls(to) == C_S)
				r.i = (int64_t)t;
			else
				r.u = (uint64_t)t;
		} else if (cls(to) == C_S) {
			r.i = wrap_s(to, cf == C_S ? a.i : (int64_t)a.u);
		} else {
			r.u = wrap_u(to, cf == C_S ? (uint64_t)a.i : a.u);
		}
	}
	return r;
}

static KVal
eval(Interp *in, KRef e)
{
	const KKernel *k = in->k;
	const KNode *n;
	KVal r = {0, 0, 0}, a, b;

	if (in->err)
		return r;
	if (e <= 0 || e >= k->nnode) {
		fail(in, BURN_ERR_INTERNAL, "bad expression ref", e, 0);
		return r;
	}
	if (in->stamp[e] == in->gen)
		return in->memo[e];
	n = &k->node[e];
	switch (n->kind) {
	case KE_CONST:
		if (dtype_is_float(n->dtype))
			r.f = round_to(n->dtype, n->fval);
		else if (cls(n->dtype) == C_S)
			r.i = wrap_s(n->dtype, n->ival);
		else
			r.u = wrap_u(n->dtype, (uint64_t)n->ival);
		break;
	case KE_VAR:
		r = in->var[n->var];
		break;
	case KE_LOAD: {
		int64_t i;
		if (n->b) {   /* guarded: read only where the guard holds */
			a = eval(in, n->b);
			if (!a.u) {
				r = eval(in, n->c);
				break;
			}
		}
		a = eval(in, n->a);
		i = as_index(k->node[n->a].dtype, a);
		if (in->err)
			return r;
		if (i < 0 || i >= in->count[n->buf]) {
			fail(in, BURN_ERR_INTERNAL, "load out of bounds (buffer, index)",
			     n->buf, i);
			return r;
		}
		if (in->simt && k->buf[n->buf].space == KS_SHARED &&
		    simt_access(in, n->buf, i, 0))
			return r;
		if (dtype_is_storage(k->buf[n->buf].dtype) &&
		    n->dtype != kir_bits_dtype(k->buf[n->buf].dtype)) {
			fail(in, BURN_ERR_INTERNAL, "storage load not legalised (buffer, node)",
			     n->buf, e);
			return r;
		}
		r = read_elem(n->dtype, in->buf[n->buf], i);
		break;
	}
	case KE_UN:
	case KE_BIN: {
		int dt = k->node[n->a].dtype;
		if (kop_needs_legal(n->op, dt, &kcaps_libm)) {
			fail(in, BURN_ERR_INTERNAL, "op not legalised (op, node)", n->op, e);
			return r;
		}
		a = eval(in, n->a);
		if (n->kind == KE_UN) {
			r = un(n->op, dt, a);
			break;
		}
		b = eval(in, n->b);
		if ((n->op == KO_QUOT || n->op == KO_REM) &&
		    (cls(dt) == C_S ? b.i == 0 || (b.i == -1 && a.i == (int64_t)((uint64_t)-1 << (8 * dtype_size(dt) - 1)))
		                    : b.u == 0)) {
			fail(in, BURN_ERR_INTERNAL, "quot/rem precondition (node, divisor)",
			     e, b.i);
			return r;
		}
		r = bin(n->op, dt, a, b);
		break;
	}
	case KE_SELECT:   /* both arms, as an eager target computes them */
		a = eval(in, n->a);
		b = eval(in, n->b);
		r = eval(in, n->c);
		if (a.u)
			r = b;
		break;
	case KE_FMA: {    /* one rounding: C's fmaf / fma */
		KVal x = eval(in, n->a), y = eval(in, n->b), z = eval(in, n->c);
		r.f = n->dtype == DT_F32 ? (double)fmaf((float)x.f, (float)y.f, (float)z.f)
		                         : fma(x.f, y.f, z.f);
		r.f = round_to(n->dtype, r.f);
		break;
	}
	case KE_SPECIAL:
		if (n->op < KX_THREAD_X || n->op > KX_BLOCK_Z) {
			fail(in, BURN_ERR_INTERNAL, "bad hardware index", n->op, e);
			return r;
		}
		r.i = in->hw[n->op - KX_THREAD_X];
		break;
	case KE_CAST:
		if (n->ival || (n->op != KC_RAW && dtype_is_float(k->node[n->a].dtype) &&
		                dtype_is_int(n->dtype))) {
			fail(in, BURN_ERR_INTERNAL, "cast not legalised (node, storage type)",
			     e, n->ival);
			return r;
		}
		a = eval(in, n->a);
		r = cast(n->dtype, k->node[n->a].dtype, a);
		break;
	default:
		fail(in, BURN_ERR_UNSUPPORTED, "unsupported expression kind",
		     n->kind, e);
		return r;
	}
	/* a kernel scheduled for 32-bit indices computes them so */
	if (n->dtype == DT_I64 && k->sched && k->sched->index_bits == 32)
		r.i = (int32_t)r.i;
	in->stamp[e] = in->gen;
	in->memo[e] = r;
	return r;
}

/* Evaluate a statement-level expression: a fresh memo generation. */
static KVal
eval_root(Interp *in, KRef e)
{
	in->gen++;
	return eval(in, e);
}

static int
exec(Interp *in, KRef s)
{
	const KKernel *k = in->k;

	for (; s && !in->err; s = k->node[s].next) {
		const KNode *n = &k->node[s];
		KVal v;
		int64_t i;
		if (spend(in))
			return in->err;
		switch (n->kind) {
		case KS_FOR:
			if (n->flags & (KF_THREAD_X | KF_THREAD_Y | KF_THREAD_Z)) {
				TRY(simt_run(in, s));
				break;
			}
			in->var[n->var].i = eval_root(in, n->a).i;
			while (!in->err && in->var[n->var].i < eval_root(in, n->b).i) {
				if (spend(in))
					return in->err;
				int64_t lo = eval_root(in, n->a).i;
				if (n->flags & KF_BLOCK_X)
					in->hw[3] = in->var[n->var].i - lo;
				if (n->flags & KF_BLOCK_Y)
					in->hw[4] = in->var[n->var].i - lo;
				if (n->flags & KF_BLOCK_Z)
					in->hw[5] = in->var[n->var].i - lo;
				if (n->flags & (KF_BLOCK_X | KF_BLOCK_Y | KF_BLOCK_Z))
					simt_block_start(in);
				TRY(exec(in, n->body));
				in->var[n->var].i++;
			}
			break;
		case KS_IF:
			v = eval_root(in, n->a);
			if (!in->err)
				TRY(exec(in, v.u ? n->body : n->orelse));
			break;
		case KS_STORE:
			i = as_index(k->node[n->a].dtype, eval_root(in, n->a));
			v = eval(in, n->b);   /* same statement: same generation */
			if (in->err)
				break;
			if (i < 0 || i >= in->count[n->buf])
				return fail(in, BURN_ERR_INTERNAL,
				            "store out of bounds (buffer, index)", n->buf, i);
			if (in->simt && k->buf[n->buf].space == KS_SHARED)
				TRY(simt_access(in, n->buf, i, 1));
			if (dtype_is_storage(k->buf[n->buf].dtype) &&
			    k->node[n->b].dtype != kir_bits_dtype(k->buf[n->buf].dtype))
				return fail(in, BURN_ERR_INTERNAL,
				            "storage store not legalised (buffer, statement)",
				            n->buf, s);
			write_elem(k->node[n->b].dtype, in->buf[n->buf], i, v);
			break;
		case KS_SET:
			v = eval_root(in, n->a);
			if (!in->err)
				in->var[n->var] = v;
			break;
		case KS_BARRIER:
			/* Outside a thread loop there is one thread: a no-op. */
			if (in->simt)
				TRY(simt_barrier(in, s));
			break;
		default:
			if (!kgpu_name(n->kind))
				return fail(in, BURN_ERR_INTERNAL, "not a statement", s, 0);
			TRY(gpu_stmt(in, s));
		}
	}
	return in->err;
}

/* ---- Threads and blocks ------------------------------------------------ *
 *
 * GPU kernels are interpreted with GPU semantics, so that their schedules
 * are tested on machines without a GPU:
 *
 *   - a KF_BLOCK_* loop runs its iterations (blocks) one after the other;
 *     blocks share nothing but global memory, and each starts with its
 *     shared buffers unwritten;
 *   - a KF_THREAD_* loop (with the thread loops nested directly in it, the
 *     block's thread grid) runs its iterations as threads of one block:
 *     each thread has its own variables and local buffers, and the threads
 *     run until they reach a barrier, in an order drawn at random
 *     (BURN_SIMT_SEED=N repeats an order; every failure names its seed);
 *   - a barrier releases when every thread of the block waits at it.  A
 *     thread that finishes while others wait, or threads waiting at
 *     different barriers, is an error (a barrier under divergent control
 *     flow hangs or is undefined on real hardware);
 *   - accesses to shared buffers are checked for races: between two
 *     barriers, an element written by one thread must not be read or
 *     written by another, and an element read by one thread must not be
 *     written by another; reading an element no thread of the block has
 *     written is an error too.
 *
 * The threads are POSIX threads, but exactly one runs at a time: the one
 * holding the baton (Simt.cur), which it passes on at a barrier or at its
 * end.  So the interpreter's memory needs no locks, and the interleaving
 * is the seeded random choice, not the OS scheduler's.
 */
#define SIMT_MAX_THREADS 1024

struct Shadow {            /* race state per element of a shared buffer */
	int32_t *w_tid;        /* last writer, -1 none in this block */
	uint32_t *w_epoch;
	int32_t *r_tid;        /* reader in r_epoch; -2 several threads */
	uint32_t *r_epoch;
	int32_t *p_tid;        /* thread whose async copy targets it, or -1 */
	unsigned char *w_atom; /* the last write was an atomic */
};

/* ST_SG: waiting at a subgroup operation (Simt.bar says which) for the
 * other lanes of its subgroup */
enum { ST_RUN, ST_BAR, ST_DONE, ST_SG };

struct Simt {
	pthread_mutex_t mu;
	pthread_cond_t *cv;    /* per thread: signalled when it gets the baton */
	int n;                 /* threads in the block */
	int cur;               /* thread holding the baton; -1 none */
	int abort;             /* an error: every thread unwinds */
	int err;               /* its status */
	unsigned char *st;     /* per thread: ST_RUN, ST_BAR, ST_DONE */
	KRef *bar;             /* the barrier a waiting thread is at */
	uint64_t rng, seed;
	Ctx *c;
	const char *kname;
	Interp *th;            /* the threads (subgroup ops read their lanes) */
};

static uint64_t
simt_rand(Simt *s)
{
	uint64_t z = (s->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Called with s->mu held, by the thread holding the baton (or by the
 * starter): give the baton to a random runnable thread, or release a
 * barrier every thread waits at, or record why neither is possible. */
static void
simt_pass(Simt *s, uint32_t *epoch)
{
	int nrun = 0, nbar = 0, ndone = 0, i, pick;

	s->cur = -1;
	if (s->abort)
		return;
	for (i = 0; i < s->n; i++) {
		nrun += s->st[i] == ST_RUN;
		nbar += s->st[i] == ST_BAR;
		ndone += s->st[i] == ST_DONE;
	}
	if (!nrun)
		for (i = 0; i < s->n; i++) {
			/* a subgroup completes its operation as its last lane arrives
			 * (sg_arrive): a lane still waiting has a lane elsewhere */
			if (s->st[i] != ST_SG)
				continue;
			s->err = burn_fail(s->c, BURN_ERR_INTERNAL,
			        "kir_interp %s: subgroup op s%d reached by thread %d but not "
			        "by every lane of its subgroup (divergent control flow) "
			        "(BURN_SIMT_SEED=%llu)", s->kname, s->bar[i], i,
			        (unsigned long long)s->seed);
			s->abort = 1;
			return;
		}
	if (!nrun && nbar) {
		int first = -1;
		for (i = 0; i < s->n; i++) {
			if (s->st[i] != ST_BAR)
				continue;
			if (first < 0)
				first = i;
			else if (s->bar[i] != s->bar[first]) {
				s->err = burn_fail(s->c, BURN_ERR_INTERNAL,
				        "kir_interp %s: threads %d and %d wait at different "
				        "barriers (s%d, s%d) (BURN_SIMT_SEED=%llu)", s->kname,
				        first, i, s->bar[first], s->bar[i],
				        (unsigned long long)s->seed);
				s->abort = 1;
				return;
			}
		}
		if (ndone) {
			s->err = burn_fail(s->c, BURN_ERR_INTERNAL,
			        "kir_interp %s: barrier s%d reached by %d of %d threads "
			        "(divergent control flow) (BURN_SIMT_SEED=%llu)", s->kname,
			        s->bar[first], nbar, s->n, (unsigned long long)s->seed);
			s->abort = 1;
			return;
		}
		for (i = 0; i < s->n; i++)
			s->st[i] = ST_RUN;
		(*epoch)++;
		nrun = s->n;
	}
	if (!nrun)
		return;
	pick = (int)(simt_rand(s) % (uint64_t)nrun);
	for (i = 0; i < s->n; i++)
		if (s->st[i] == ST_RUN && pick-- == 0) {
			s->cur = i;
			pthread_cond_signal(&s->cv[i]);
			return;
		}
}

/* After an error every thread must wake and unwind. */
static void
simt_wake_all(Simt *s)
{
	if (s->abort)
		for (int i = 0; i < s->n; i++)
			pthread_cond_signal(&s->cv[i]);
}

/* Wait for the baton; 1 if the block is aborting instead. */
static int
simt_wait(Simt *s, int tid)
{
	while (s->cur != tid && !s->abort)
		pthread_cond_wait(&s->cv[tid], &s->mu);
	return s->abort;
}

static int
simt_barrier(Interp *in, KRef st)
{
	Simt *s = in->simt;
	int ab;

	pthread_mutex_lock(&s->mu);
	s->st[in->tid] = ST_BAR;
	s->bar[in->tid] = st;
	simt_pass(s, in->epoch);
	simt_wake_all(s);
	ab = simt_wait(s, in->tid);
	pthread_mutex_unlock(&s->mu);
	if (ab)
		in->err = BURN_ERR_INTERNAL;   /* unwind quietly: s->err says why */
	return in->err;
}

/* A shared-buffer access by the running thread (it holds the baton, so
 * the shadow needs no lock). */
static int
simt_access(Interp *in, int b, int64_t i, int write)
{
	Shadow *sh = &in->shadow[b];
	uint32_t ep = *in->epoch;
	int32_t t = in->tid, w = sh->w_tid[i];
	const char *why = NULL;
	int other = 0;

	if (sh->p_tid[i] >= 0) {
		why = "touches the destination of an async copy before its wait";
		other = sh->p_tid[i];
	} else if (!write && w < 0) {
		why = "reads an element no thread has written";
	} else if (w >= 0 && w != t && sh->w_epoch[i] == ep) {
		why = write ? "writes an element another thread wrote since the last barrier"
		            : "reads an element another thread wrote since the last barrier";
		other = w;
	} else if (write && sh->r_epoch[i] == ep && sh->r_tid[i] != -1 &&
	           sh->r_tid[i] != t) {
		why = "writes an element another thread read since the last barrier";
		other = sh->r_tid[i];
	}
	if (why) {
		burn_fail(in->c, BURN_ERR_INTERNAL, "kir_interp %s: shared memory race: "
		          "thread %d %s (b%d[%lld], other thread %d) (BURN_SIMT_SEED=%llu)",
		          in->k->name, t, why, b, (long long)i, other,
		          (unsigned long long)in->simt->seed);
		in->simt->err = BURN_ERR_INTERNAL;
		return in->err = BURN_ERR_INTERNAL;
	}
	if (write) {
		sh->w_tid[i] = t;
		sh->w_epoch[i] = ep;
		sh->w_atom[i] = 0;
	} else if (sh->r_epoch[i] != ep || sh->r_tid[i] == -1) {
		sh->r_tid[i] = t;
		sh->r_epoch[i] = ep;
	} else if (sh->r_tid[i] != t) {
		sh->r_tid[i] = -2;
	}
	return BURN_OK;
}

/* A new block: its shared buffers are unwritten. */
static void
simt_block_start(Interp *in)
{
	const KKernel *k = in->k;
	int b;

	(*in->epoch)++;
	for (b = 0; b < k->nbuf; b++) {
		if (k->buf[b].space != KS_SHARED || !in->shadow[b].w_tid)
			continue;
		for (int64_t i = 0; i < k->buf[b].count; i++) {
			in->shadow[b].w_tid[i] = -1;
			in->shadow[b].r_tid[i] = -1;
			in->shadow[b].p_tid[i] = -1;
		}
	}
}

static void *
simt_thread(void *arg)
{
	Interp *in = arg;
	Simt *s = in->simt;
	int ab;

	pthread_mutex_lock(&s->mu);
	ab = simt_wait(s, in->tid);
	pthread_mutex_unlock(&s->mu);
	if (!ab)
		exec(in, in->tbody);
	if (!ab && !in->err && in->npend)
		in->err = burn_fail(in->c, BURN_ERR_INTERNAL, "kir_interp %s: thread %d "
		                    "ends with %d async copies never waited for (cpwait) "
		                    "(BURN_SIMT_SEED=%llu)", in->k->name, in->tid,
		                    in->npend, (unsigned long long)s->seed);
	if (!ab && !in->err && in->nwpend)
		in->err = burn_fail(in->c, BURN_ERR_INTERNAL, "kir_interp %s: subgroup %d "
		                    "ends with %d wgmma never waited for (wgwait)", in->k->name,
		                    in->tid / KT_SUBGROUP, in->nwpend);
	pthread_mutex_lock(&s->mu);
	s->st[in->tid] = ST_DONE;
	if (in->err && !s->abort) {
		s->abort = 1;
		if (!s->err)
			s->err = in->err;
	}
	simt_pass(s, in->epoch);
	simt_wake_all(s);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static uint64_t
simt_seed(void)
{
	const char *e = getenv("BURN_SIMT_SEED");
	struct timespec ts;

	if (e && *e)
		return strtoull(e, NULL, 10);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_nsec * 2654435761u ^ (uint64_t)ts.tv_sec ^
	       ((uint64_t)getpid() << 32);
}

static void
thread_free(const KKernel *k, Interp *t)
{
	if (t->buf)
		for (int b = 0; b < k->nbuf; b++)
			if (k->buf[b].space == KS_LOCAL || k->buf[b].space == KS_FRAG)
				free(t->buf[b]);
	free(t->pend);
	free(t->wpend);
	free(t->buf);
	free(t->var);
	free(t->memo);
	free(t->stamp);
}

/* The thread loop at statement st and the thread loops nested directly in
 * it, run as one block of threads.  Each thread starts with the variables
 * as they are here, its loop variables set to its coordinates. */
static int
simt_run(Interp *in, KRef st)
{
	const KKernel *k = in->k;
	KRef loop[3], body = st;
	int64_t lo[3], ext[3];
	int nl = 0, n = 1, i, b, started = 0, rc;
	Simt s;
	Interp *th = NULL;
	pthread_t *pt = NULL;
	pthread_attr_t attr;

	if (in->simt)
		return fail(in, BURN_ERR_UNSUPPORTED,
		            "thread loop inside a thread (not directly nested)", st, 0);
	for (;;) {
		const KNode *ln = &k->node[body];
		if (nl == 3)
			return fail(in, BURN_ERR_UNSUPPORTED, "more than 3 thread loops", st, 0);
		loop[nl] = body;
		lo[nl] = eval_root(in, ln->a).i;
		ext[nl] = eval_root(in, ln->b).i - lo[nl];
		if (in->err)
			return in->err;
		if (ext[nl] <= 0)
			return BURN_OK;
		if (ext[nl] > SIMT_MAX_THREADS || (n *= (int)ext[nl]) > SIMT_MAX_THREADS)
			return fail(in, BURN_ERR_UNSUPPORTED,
			            "more than 1024 threads in a block (statement, extent)",
			            st, ext[nl]);
		nl++;
		body = ln->body;
		if (!body || k->node[body].kind != KS_FOR || k->node[body].next ||
		    !(k->node[body].flags & (KF_THREAD_X | KF_THREAD_Y | KF_THREAD_Z)))
			break;
	}
	memset(&s, 0, sizeof s);
	s.n = n;
	s.c = in->c;
	s.kname = k->name;
	s.seed = s.rng = simt_seed();
	s.th = NULL;
	s.st = calloc((size_t)n, 1);
	s.bar = calloc((size_t)n, sizeof *s.bar);
	th = calloc((size_t)n, sizeof *th);
	pt = calloc((size_t)n, sizeof *pt);
	s.cv = calloc((size_t)n, sizeof *s.cv);
	s.th = th;
	if (!s.st || !s.bar || !th || !pt || !s.cv) {
		rc = burn_fail(in->c, BURN_ERR_NOMEM, "kir_interp: out of memory");
		goto out;
	}
	pthread_mutex_init(&s.mu, NULL);
	for (i = 0; i < n; i++)
		pthread_cond_init(&s.cv[i], NULL);
	for (i = 0; i < n; i++) {
		Interp *t = &th[i];
		int64_t rest = i;
		*t = *in;
		t->simt = &s;
		t->tid = i;
		t->gen = 0;
		t->pend = NULL;
		t->npend = t->cappend = 0;
		t->wpend = NULL;
		t->nwpend = t->capwpend = 0;
		t->nwgrp = 0;
		t->buf = calloc((size_t)k->nbuf + 1, sizeof *t->buf);
		t->var = malloc(((size_t)k->nvar + 1) * sizeof *t->var);
		t->memo = calloc((size_t)k->nnode, sizeof *t->memo);
		t->stamp = calloc((size_t)k->nnode, sizeof *t->stamp);
		if (!t->buf || !t->var || !t->memo || !t->stamp) {
			rc = burn_fail(in->c, BURN_ERR_NOMEM, "kir_interp: out of memory");
			n = i + 1;
			goto out;
		}
		memcpy(t->var, in->var, ((size_t)k->nvar + 1) * sizeof *t->var);
		for (b = 0; b < k->nbuf; b++) {
			t->buf[b] = in->buf[b];
			if ((k->buf[b].space == KS_LOCAL || k->buf[b].space == KS_FRAG) &&
			    !(t->buf[b] = calloc((size_t)(k->buf[b].count > 0 ? k->buf[b].count : 1),
			                         (size_t)dtype_size(k->buf[b].dtype)))) {
				rc = burn_fail(in->c, BURN_ERR_NOMEM, "kir_interp: out of memory");
				n = i + 1;
				goto out;
			}
		}
		/* innermost loop fastest: its coordinate is rest % ext */
		for (int d = nl - 1; d >= 0; d--) {
			const KNode *ln = &k->node[loop[d]];
			int64_t x = rest % ext[d];
			rest /= ext[d];
			t->var[ln->var].i = lo[d] + x;
			if (ln->flags & KF_THREAD_X)
				t->hw[0] = x;
			if (ln->flags & KF_THREAD_Y)
				t->hw[1] = x;
			if (ln->flags & KF_THREAD_Z)
				t->hw[2] = x;
		}
		t->tbody = body;
	}
	(*in->epoch)++;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, (size_t)1 << 20);
	pthread_mutex_lock(&s.mu);
	for (i = 0; i < n; i++) {
		if (pthread_create(&pt[i], &attr, simt_thread, &th[i])) {
			s.abort = 1;
			s.err = burn_fail(in->c, BURN_ERR_NOMEM,
			                  "kir_interp %s: cannot start %d threads", k->name, n);
			break;
		}
		started++;
	}
	for (i = started; i < n; i++)
		s.st[i] = ST_DONE;
	simt_pass(&s, in->epoch);
	simt_wake_all(&s);
	pthread_mutex_unlock(&s.mu);
	pthread_attr_destroy(&attr);
	for (i = 0; i < started; i++)
		pthread_join(pt[i], NULL);
	(*in->epoch)++;
	pthread_mutex_destroy(&s.mu);
	for (i = 0; i < n; i++)
		pthread_cond_destroy(&s.cv[i]);
	rc = s.err;
	if (rc)
		in->err = rc;
out:
	if (th)
		for (i = 0; i < n; i++)
			thread_free(k, &th[i]);
	free(th);
	free(pt);
	free(s.st);
	free(s.bar);
	free(s.cv);
	return rc;
}

/* ---- GPU statements (kops.def, KGPU rows) ----------------------------------------- *
 *
 * Vector copies, atomics and async copies run in the thread that reaches
 * them.  Subgroup operations (shuffles, reductions, tile ops) run in
 * lockstep: a lane evaluates its operands, then waits at the statement
 * (ST_SG) until every lane of its subgroup is there; the last to arrive
 * performs the operation for all of them (it holds the baton, so it may
 * write the other lanes' variables and fragments) and they run on.  A lane
 * that cannot arrive (it finished, or waits at a barrier or another
 * subgroup op) is reported by simt_pass as divergence.
 */

/* Combine for sgreduce and atomics: KO_ADD, KO_MUL, KO_MIN, KO_MAX with
 * the kernel IR's semantics (float min/max propagate NaN; integers wrap),
 * defined here: these ops are part of the statement, not expressions that
 * legalisation rewrites. */
static KVal
combine(int op, int dt, KVal a, KVal b)
{
	KVal r = {0, 0, 0};

	if (cls(dt) == C_F) {
		/* min and max propagate NaN (kops.def's meaning of KO_MIN/MAX,
		 * which legalisation expands before the interpreter sees it) */
		if (op == KO_MIN || op == KO_MAX) {
			if (isnan(a.f) || isnan(b.f))
				r.f = isnan(a.f) ? a.f : b.f;
			else
				r.f = (op == KO_MIN) == (a.f < b.f) ? a.f : b.f;
			return r;
		}
		return bin(op, dt, a, b);
	}
	if (cls(dt) == C_S) {
		switch (op) {
		case KO_ADD: r.i = (int64_t)((uint64_t)a.i + (uint64_t)b.i); break;
		case KO_MUL: r.i = (int64_t)((uint64_t)a.i * (uint64_t)b.i); break;
		case KO_MIN: r.i = a.i < b.i ? a.i : b.i; break;
		case KO_MAX: r.i = a.i > b.i ? a.i : b.i; break;
		}
		r.i = wrap_s(dt, r.i);
	} else {
		switch (op) {
		case KO_ADD: r.u = a.u + b.u; break;
		case KO_MUL: r.u = a.u * b.u; break;
		case KO_MIN: r.u = a.u < b.u ? a.u : b.u; break;
		case KO_MAX: r.u = a.u > b.u ? a.u : b.u; break;
		}
		r.u = wrap_u(dt, r.u);
	}
	return r;
}

static int
gfail(Interp *in, KRef s, const char *fmt, long long a, long long b)
{
	char msg[200];

	if (in->err)
		return in->err;
	snprintf(msg, sizeof msg, fmt, a, b);
	if (in->simt)
		in->err = burn_fail(in->c, BURN_ERR_INTERNAL, "kir_interp %s: %s s%d: "
		                    "thread %d: %s (BURN_SIMT_SEED=%llu)", in->k->name,
		                    kgpu_name(in->k->node[s].kind), s, in->tid, msg,
		                    (unsigned long long)in->simt->seed);
	else
		in->err = burn_fail(in->c, BURN_ERR_INTERNAL, "kir_interp %s: %s s%d: %s",
		                    in->k->name, kgpu_name(in->k->node[s].kind), s, msg);
	return in->err;
}

/* Elements [i, i+n) of buffer b are in bounds. */
static int
grange(Interp *in, KRef s, int b, int64_t i, int64_t n)
{
	/* the extent as evaluated (KBuf.ext over the dims), not the count */
	if (i < 0 || n > in->count[b] || i > in->count[b] - n)
		return gfail(in, s, "b%lld[%lld] out of bounds", b, i);
	return BURN_OK;
}

/* An atomic access of shared element i: atomics of one element by several
 * threads are no race; a plain access by another thread since the last
 * barrier is. */
static int
simt_atomic(Interp *in, KRef s, int b, int64_t i)
{
	Shadow *sh = &in->shadow[b];
	uint32_t ep = *in->epoch;
	int32_t t = in->tid, w = sh->w_tid[i];

	if (sh->p_tid[i] >= 0)
		return gfail(in, s, "atomic on the destination of an async copy of "
		             "thread %lld before its wait (b%lld)", sh->p_tid[i], b);
	if (w < 0)
		return gfail(in, s, "atomic on an element no thread has written "
		             "(b%lld[%lld])", b, i);
	if ((w != t && sh->w_epoch[i] == ep && !sh->w_atom[i]) ||
	    (sh->r_epoch[i] == ep && sh->r_tid[i] != -1 && sh->r_tid[i] != t))
		return gfail(in, s, "shared memory race: atomic and plain access of "
		             "b%lld[%lld] since the last barrier", b, i);
	sh->w_tid[i] = t;
	sh->w_epoch[i] = ep;
	sh->w_atom[i] = 1;
	return BURN_OK;
}

/* Copy n elements buf2[si..] -> buf[di..] now (vcopy, a landing cpasync),
 * with the race checks of shared memory. */
static int
gcopy(Interp *in, KRef s, int db, int64_t di, int sb, int64_t si, int64_t n)
{
	const KKernel *k = in->k;
	size_t sz = (size_t)dtype_size(k->buf[db].dtype);

	for (int64_t e = 0; e < n && in->simt; e++) {
		if (k->buf[sb].space == KS_SHARED)
			TRY(simt_access(in, sb, si + e, 0));
		if (k->buf[db].space == KS_SHARED)
			TRY(simt_access(in, db, di + e, 1));
	}
	memmove((char *)in->buf[db] + (size_t)di * sz,
	        (const char *)in->buf[sb] + (size_t)si * sz, (size_t)n * sz);
	(void)s;
	return BURN_OK;
}

static int
atomic_stmt(Interp *in, KRef s)
{
	const KKernel *k = in->k;
	const KNode *n = &k->node[s];
	int dt = k->buf[n->buf].dtype;
	int64_t i = as_index(k->node[n->a].dtype, eval_root(in, n->a));
	KVal x = eval(in, n->b), y = {0, 0, 0}, old, nv;

	if (n->op == KAT_CAS)
		y = eval(in, n->c);
	if (in->err)
		return in->err;
	TRY(grange(in, s, n->buf, i, 1));
	if (in->simt && k->buf[n->buf].space == KS_SHARED)
		TRY(simt_atomic(in, s, n->buf, i));
	old = read_elem(dt, in->buf[n->buf], i);
	switch (n->op) {
	case KAT_ADD: nv = combine(KO_ADD, dt, old, x); break;
	case KAT_MAX: nv = combine(KO_MAX, dt, old, x); break;
	case KAT_MIN: nv = combine(KO_MIN, dt, old, x); break;
	default:      /* cas: integers only (kir_verify) */
		nv = (cls(dt) == C_S ? old.i == x.i : old.u == x.u) ? y : old;
	}
	write_elem(dt, in->buf[n->buf], i, nv);
	if (n->var >= 0)
		in->var[n->var] = old;
	return BURN_OK;
}

static int
cpasync_stmt(Interp *in, KRef s)
{
	const KKernel *k = in->k;
	const KNode *n = &k->node[s];
	int64_t di, si, e;
	Shadow *sh;

	if (!in->simt)
		return gfail(in, s, "async copy outside a thread loop", 0, 0);
	di = as_index(k->node[n->a].dtype, eval_root(in, n->a));
	si = as_index(k->node[n->b].dtype, eval(in, n->b));
	if (in->err)
		return in->err;
	if (di % n->ival || si % n->ival)
		return gfail(in, s, "misaligned (destination %lld, source %lld)", di, si);
	TRY(grange(in, s, n->buf, di, n->ival));
	TRY(grange(in, s, n->buf2, si, n->ival));
	sh = &in->shadow[n->buf];
	for (e = 0; e < n->ival; e++)
		if (sh->p_tid[di + e] >= 0)
			return gfail(in, s, "b%lld[%lld] is already the destination of an "
			             "async copy in flight", n->buf, di + e);
	if (in->npend == in->cappend) {
		int cap = in->cappend ? 2 * in->cappend : 8;
		Pend *np = cap > (1 << 24) ? NULL : realloc(in->pend, (size_t)cap * sizeof *np);
		if (!np)
			return in->err = burn_fail(in->c, BURN_ERR_NOMEM,
			                           "kir_interp: out of memory");
		in->pend = np;
		in->cappend = cap;
	}
	for (e = 0; e < n->ival; e++)
		sh->p_tid[di + e] = in->tid;
	in->pend[in->npend++] = (Pend){ n->buf, n->buf2, di, si, n->ival, -1 };
	return BURN_OK;
}

static int
cpwait_stmt(Interp *in, KRef s)
{
	int64_t keep = in->k->node[s].ival, j = 0;

	/* close the open group; land every copy but those of the keep most
	 * recent groups (all of them for keep 0), in issue order */
	for (int p = 0; p < in->npend; p++)
		if (in->pend[p].grp < 0)
			in->pend[p].grp = in->ngrp;
	in->ngrp++;
	for (int p = 0; p < in->npend; p++) {
		Pend *q = &in->pend[p];
		if (keep && q->grp >= in->ngrp - keep) {
			in->pend[j++] = *q;
			continue;
		}
		for (int64_t e = 0; e < q->n; e++)
			in->shadow[q->dbuf].p_tid[q->di + e] = -1;
		TRY(gcopy(in, s, q->dbuf, q->di, q->sbuf, q->si, q->n));
	}
	in->npend = (int)j;
	return BURN_OK;
}

/* FNV-1a of elements [lo, lo+n) of buffer b */
static uint64_t
range_hash(const Interp *in, int b, int64_t lo, int64_t n)
{
	const unsigned char *p = (const unsigned char *)in->buf[b] +
	                         (size_t)lo * (size_t)dtype_size(in->k->buf[b].dtype);
	size_t bytes = (size_t)n * (size_t)dtype_size(in->k->buf[b].dtype);
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < bytes; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

/* wgwait on thread `in`: its subgroup's records live in lane 0's Interp */
static int
wgwait_stmt(Interp *in, KRef s)
{
	int64_t keep = in->k->node[s].ival, j = 0;

	if (!in->simt)
		return gfail(in, s, "wgwait outside a thread loop", 0, 0);
	if (in->tid % KT_SUBGROUP)
		return BURN_OK;
	for (int p = 0; p < in->nwpend; p++)
		if (in->wpend[p].grp < 0)
			in->wpend[p].grp = in->nwgrp;
	in->nwgrp++;
	for (int p = 0; p < in->nwpend; p++) {
		WPend *q = &in->wpend[p];
		if (keep && q->grp >= in->nwgrp - keep) {
			in->wpend[j++] = *q;
			continue;
		}
		if ((range_hash(in, q->ab, q->alo, q->an) ^
		     range_hash(in, q->bb, q->blo, q->bn) * 31) != q->hash)
			return gfail(in, s, "shared memory that wgmma %lld reads changed before "
			             "its wgwait (subgroup %lld)", q->s, in->tid / KT_SUBGROUP);
	}
	in->nwpend = (int)j;
	return BURN_OK;
}

/* Whether tile op s touches a C fragment of a wgmma in flight (lane 0 of
 * the subgroup holds the records; a later wgmma may accumulate). */
static int
wg_busy(Interp *in, KRef s, const Interp *l0)
{
	const KNode *n = &in->k->node[s];
	int nb = n->kind == KS_WGMMA ? 0 : n->kind == KS_TSTORE ? n->buf2 : n->buf;

	for (int p = 0; nb && p < l0->nwpend; p++)
		if (nb >= l0->wpend[p].c0 && nb < l0->wpend[p].c0 + l0->wpend[p].nc)
			return gfail(in, s, "fragment b%lld is the accumulator of wgmma %lld in "
			             "flight (no wgwait since)", nb, l0->wpend[p].s);
	return BURN_OK;
}

/* The width of subgroup op n. */
static int
sg_width(const KNode *n)
{
	return n->kind == KS_SHFL || n->kind == KS_SGRED ? (int)n->ival : KT_SUBGROUP;
}

/* Tile operands must be the same in every lane. */
static int
sg_uniform(Interp *in, KRef s, Interp *lane, int w, int ints)
{
	for (int l = 1; l < w; l++)
		if (ints ? (lane[l].sga.i != lane[0].sga.i || lane[l].sga.u != lane[0].sga.u ||
		            lane[l].sgb.i != lane[0].sgb.i || lane[l].sgb.u != lane[0].sgb.u)
		         : memcmp(&lane[l].sga.f, &lane[0].sga.f, sizeof(double)) != 0)
			return gfail(in, s, "lanes %lld and %lld give different tile operands",
			             lane[0].tid, lane[l].tid);
	return BURN_OK;
}

/* The subgroup op s for the w lanes lane[0 .. w), all arrived. */
static int
sg_exec(Interp *in, KRef s, Interp *lane, int w)
{
	const KKernel *k = in->k;
	const KNode *n = &k->node[s];
	KVal v[64], t[64];
	int l;

	switch (n->kind) {
	case KS_SHFL: {
		int dt = k->node[n->b].dtype;
		for (l = 0; l < w; l++) {
			int64_t x = as_index(dt, lane[l].sgb), src;
			if (n->op == KSH_IDX)
				src = x & (w - 1);
			else if (n->op == KSH_XOR)
				src = l ^ (x & (w - 1));
			else
				src = x >= 0 && x < w && l + x < w ? l + x : l;
			v[l] = lane[src].sga;
		}
		for (l = 0; l < w; l++)
			lane[l].var[n->var] = v[l];
		return BURN_OK;
	}
	case KS_SGRED: {
		int dt = k->node[n->a].dtype;
		for (l = 0; l < w; l++)
			v[l] = lane[l].sga;
		for (int o = w / 2; o >= 1; o /= 2) {
			for (l = 0; l < w; l++)
				t[l] = combine(n->op, dt, v[l], v[l ^ o]);
			memcpy(v, t, (size_t)w * sizeof *v);
		}
		for (l = 0; l < w; l++)
			lane[l].var[n->var] = v[l];
		return BURN_OK;
	}
	default:
		break;
	}
	if (n->kind == KS_WGMMA) {
		/* subgroup 4q+i: rows 16i .. 16i+15 of A into its n/8 fragments */
		const KTileInfo *ti = ktile_info((int)n->ival);
		const void *A = in->buf[n->buf2], *B = in->buf[n->buf3];
		int64_t a, b, cs, i = (lane[0].tid / KT_SUBGROUP) % 4;
		TRY(sg_uniform(in, s, lane, w, 1));
		for (int l = 1; l < w; l++)
			if (lane[l].sgc.i != lane[0].sgc.i)
				return gfail(in, s, "lanes %lld and %lld give different tile operands",
				             lane[0].tid, lane[l].tid);
		a = as_index(k->node[n->a].dtype, lane[0].sga);
		b = as_index(k->node[n->b].dtype, lane[0].sgb);
		cs = as_index(k->node[n->c].dtype, lane[0].sgc);
		if (a < 0 || b < 0 || cs <= 0 || a % 8 || (a - a % 64) % 512 || b % 512 || cs % 512)
			return gfail(in, s, "wgmma operands at %lld and %lld not swizzle-aligned",
			             a, b);
		TRY(grange(in, s, n->buf2, a - a % 512, 512 * 8));
		TRY(grange(in, s, n->buf3, b, (ti->n / 64 - 1) * cs + 1024));
		if (lane[0].nwpend == lane[0].capwpend) {
			int cap = lane[0].capwpend ? 2 * lane[0].capwpend : 8;
			WPend *np = cap > (1 << 20) ? NULL :
			            realloc(lane[0].wpend, (size_t)cap * sizeof *np);
			if (!np)
				return in->err = burn_fail(in->c, BURN_ERR_NOMEM,
				                           "kir_interp: out of memory");
			lane[0].wpend = np;
			lane[0].capwpend = cap;
		}
		{
			WPend q = { s, n->buf, (int)(ti->n / 8), n->buf2, n->buf3, a - a % 512,
			            512 * 8, b, (ti->n / 64 - 1) * cs + 1024, 0, -1 };
			q.hash = range_hash(in, q.ab, q.alo, q.an) ^ range_hash(in, q.bb, q.blo, q.bn) * 31;
			lane[0].wpend[lane[0].nwpend++] = q;
		}
		for (int j = 0; j < ti->n / 8; j++) {
			float acc[16 * 8];
			for (int64_t r = 0; r < 16; r++)
				for (int64_t c = 0; c < 8; c++) {
					int64_t col = 8 * j + c;
					float x = ((const float *)lane[0].buf[n->buf + j])[r * 8 + c];
					for (int64_t q = 0; q < 16; q++) {
						int64_t ea = a + (16 * i + r) * 64 + q;
						int64_t eb = b + col / 64 * cs + q * 64 + col % 64;
						float p = tile_elem(ti->ab_dtype, A, ea ^ (((ea >> 6) & 7) << 3)) *
						          tile_elem(ti->ab_dtype, B, eb ^ (((eb >> 6) & 7) << 3));
						x = x + p;
					}
					acc[r * 8 + c] = x;
				}
			for (int l = 0; l < w; l++)
				memcpy(lane[l].buf[n->buf + j], acc, sizeof acc);
		}
		return BURN_OK;
	}
	/* tile ops */
	TRY(wg_busy(in, s, &lane[0]));
	{
		const KTileInfo *ti = ktile_info((int)n->ival);
		int64_t m = ti->m, nn = ti->n, kk = ti->k, rows, cols, r, c;
		int fb, mb, role, load;
		int64_t base, stride;
		if (n->kind == KS_TFILL) {
			TRY(sg_uniform(in, s, lane, w, 0));
			for (l = 0; l < w; l++)
				for (r = 0; r < m * nn; r++)
					((float *)lane[l].buf[n->buf])[r] = (float)lane[0].sga.f;
			return BURN_OK;
		}
		if (n->kind == KS_TMMA) {
			/* every lane holds the whole tile (the same in each) */
			const void *A = lane[0].buf[n->buf2], *B = lane[0].buf[n->buf3];
			int adt = k->buf[n->buf2].dtype;
			float acc[16 * 8];
			if (m * nn > (int64_t)(sizeof acc / sizeof acc[0]))
				return gfail(in, s, "tile of %lld x %lld too large", m, nn);
			for (r = 0; r < m; r++)
				for (c = 0; c < nn; c++) {
					float a = ((const float *)lane[0].buf[n->buf])[r * nn + c];
					for (int64_t q = 0; q < kk; q++) {
						float x = tile_elem(adt, A, r * kk + q);
						float y = tile_elem(adt, B, q * nn + c);
						float p = x * y;
						a = a + p;
					}
					acc[r * nn + c] = a;
				}
			for (l = 0; l < w; l++)
				memcpy(lane[l].buf[n->buf], acc, (size_t)(m * nn) * sizeof(float));
			return BURN_OK;
		}
		load = n->kind == KS_TLOAD;
		TRY(sg_uniform(in, s, lane, w, 1));
		fb = load ? n->buf : n->buf2;
		mb = load ? n->buf2 : n->buf;
		role = load ? n->op : KTR_C;
		rows = role == KTR_B ? kk : m;
		cols = role == KTR_A ? kk : nn;
		base = as_index(k->node[n->a].dtype, lane[0].sga);
		stride = as_index(k->node[n->b].dtype, lane[0].sgb);
		/* 16-bit A and B tiles from shared memory: 16-byte rows */
		if (load && role != KTR_C && k->buf[mb].space == KS_SHARED &&
		    dtype_size(k->buf[fb].dtype) == 2 && (base % 8 || stride % 8))
			return gfail(in, s, "16-bit tile from shared memory at %lld, stride "
			             "%lld: not multiples of 8", base, stride);
		{
			int dt = k->buf[fb].dtype;
			size_t sz = (size_t)dtype_size(dt);
			for (r = 0; r < rows; r++)
				for (c = 0; c < cols; c++) {
					int64_t e = r * cols + c, off;
					Interp *who = &lane[e % w];   /* the lane that moves it */
					if (burn_mul_ovf(r, stride, &off) || off > INT64_MAX - base - c)
						return gfail(in, s, "tile index overflows (stride %lld)",
						             stride, 0);
					off += base + c;
					TRY(grange(in, s, mb, off, 1));
					if (in->simt && k->buf[mb].space == KS_SHARED &&
					    simt_access(who, mb, off, !load)) {
						in->err = who->err;
						return in->err;
					}
					if (load)
						for (l = 0; l < w; l++)
							memcpy((char *)lane[l].buf[fb] + (size_t)e * sz,
							       (const char *)in->buf[mb] + (size_t)off * sz, sz);
					else
						memcpy((char *)in->buf[mb] + (size_t)off * sz,
						       (const char *)lane[0].buf[fb] + (size_t)e * sz, sz);
				}
		}
	}
	return BURN_OK;
}

/* Lane `in` arrives at subgroup op s. */
static int
sg_arrive(Interp *in, KRef s)
{
	const KNode *n = &in->k->node[s];
	Simt *sm = in->simt;
	int w = sg_width(n), g0, all = 1, ab, rc = BURN_OK;

	if (!sm)
		return gfail(in, s, "subgroup op outside a thread loop", 0, 0);
	in->gen++;
	if (n->a)
		in->sga = eval(in, n->a);
	if (n->b)
		in->sgb = eval(in, n->b);
	if (n->c && n->kind == KS_WGMMA)
		in->sgc = eval(in, n->c);
	if (in->err)
		return in->err;
	if (sm->n % w)
		return gfail(in, s, "a block of %lld threads is no whole number of "
		             "subgroups of %lld", sm->n, w);
	g0 = in->tid / w * w;
	pthread_mutex_lock(&sm->mu);
	sm->st[in->tid] = ST_SG;
	sm->bar[in->tid] = s;
	for (int l = g0; l < g0 + w; l++)
		if (sm->st[l] != ST_SG || sm->bar[l] != s)
			all = 0;
	if (all) {
		rc = sg_exec(in, s, &sm->th[g0], w);
		for (int l = g0; l < g0 + w; l++)
			sm->st[l] = ST_RUN;
		pthread_mutex_unlock(&sm->mu);
		return rc;
	}
	simt_pass(sm, in->epoch);
	simt_wake_all(sm);
	ab = simt_wait(sm, in->tid);
	pthread_mutex_unlock(&sm->mu);
	if (ab)
		in->err = BURN_ERR_INTERNAL;   /* unwind quietly: sm->err says why */
	return in->err;
}

static int
gpu_stmt(Interp *in, KRef s)
{
	const KKernel *k = in->k;
	const KNode *n = &k->node[s];

	switch (n->kind) {
	case KS_VCOPY: {
		int64_t di = as_index(k->node[n->a].dtype, eval_root(in, n->a));
		int64_t si = as_index(k->node[n->b].dtype, eval(in, n->b));
		if (in->err)
			return in->err;
		if (di % n->ival || si % n->ival)
			return gfail(in, s, "misaligned vector access (destination %lld, "
			             "source %lld)", di, si);
		TRY(grange(in, s, n->buf, di, n->ival));
		TRY(grange(in, s, n->buf2, si, n->ival));
		return gcopy(in, s, n->buf, di, n->buf2, si, n->ival);
	}
	case KS_ATOMIC:
		return atomic_stmt(in, s);
	case KS_CPASYNC:
		return cpasync_stmt(in, s);
	case KS_CPWAIT:
		return cpwait_stmt(in, s);
	case KS_WGWAIT:
		return wgwait_stmt(in, s);
	default:
		return sg_arrive(in, s);
	}
}

/* Whether any reachable expression is a vector or hardware index is left
 * to eval (it fails on KE_SPECIAL); vectors are rejected up front. */
int
kir_interp(Ctx *c, const KKernel *k, void *const *bufs)
{
	return kir_interp_budget(c, k, bufs, NULL);
}

int
kir_interp_budget(Ctx *c, const KKernel *k, void *const *bufs, int64_t *steps)
{
	return kir_interp_dims(c, k, bufs, NULL, steps);
}

/* A call kernel (kir.h): the routine of runtime/strings.inc itself, the
 * one the C renderer prints a call of. */
static int
interp_call(Ctx *c, const KKernel *k, void *const *bufs)
{
	const KCall *cl = k->call;
	void *b[6] = { 0 };
	const int64_t *a = cl->arg;

	for (int i = 0; i < cl->nbuf; i++)
		if (!(b[i] = bufs[cl->buf[i]]))
			return burn_fail(c, BURN_ERR_INTERNAL, "kir_interp %s: buffer b%d "
			                 "unbound", k->name, cl->buf[i]);
	switch (cl->fn) {
	case KCALL_EQUAL:
		bs_equal(b[0], b[1], b[2], b[3], a[0]);
		break;
	case KCALL_CONCAT:
		bs_concat(b[0], b[1], b[2], b[3], b[4], a[0]);
		break;
	case KCALL_NORMALIZE:
		bs_normalize(b[0], b[1], b[2], a[0], a[1]);
		break;
	case KCALL_LOOKUP:
		bs_lookup(b[0], b[1], b[2], a[0], a[1]);
		break;
	case KCALL_REGEX:
		bs_regex(b[0], b[1], b[2], b[3], b[4], a[0]);
		break;
	default:
		return burn_fail(c, BURN_ERR_INTERNAL, "kir_interp %s: bad call", k->name);
	}
	return BURN_OK;
}

int
kir_interp_dims(Ctx *c, const KKernel *k, void *const *bufs,
                const int64_t *dims, int64_t *steps)
{
	Interp in;
	int i, rc;
	size_t nn = (size_t)k->nnode;
	uint32_t epoch = 1;
	int64_t *count = NULL;

	TRY(kir_verify(c, k));
	if (k->call)
		return interp_call(c, k, bufs);
	if (k->ndim && !dims)
		return burn_fail(c, BURN_ERR_INTERNAL, "kir_interp %s: %d dim "
		                 "parameters not given", k->name, k->ndim);
	for (i = 1; i < k->nnode; i++)
		if (k->node[i].lanes > 1)
			return burn_fail(c, BURN_ERR_UNSUPPORTED,
			                 "kir_interp %s: vector expressions", k->name);
	memset(&in, 0, sizeof in);
	in.steps = steps;
	in.c = c;
	in.k = k;
	in.buf = calloc((size_t)k->nbuf + 1, sizeof *in.buf);
	in.var = calloc((size_t)k->nvar + 1, sizeof *in.var);
	in.memo = calloc(nn, sizeof *in.memo);
	in.stamp = calloc(nn, sizeof *in.stamp);
	in.shadow = calloc((size_t)k->nbuf + 1, sizeof *in.shadow);
	in.count = count = calloc((size_t)k->nbuf + 1, sizeof *count);
	in.epoch = &epoch;
	if (!in.buf || !in.var || !in.memo || !in.stamp || !in.shadow || !count) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "kir_interp: out of memory");
		goto done;
	}
	/* dim parameters first: the extents are expressions over them */
	for (i = 0; i < k->ndim; i++) {
		if (dims[i] < 0) {
			rc = burn_fail(c, BURN_ERR_INVALID, "kir_interp %s: dim %s = %"
			               PRId64 " is negative", k->name, k->var[i].name, dims[i]);
			goto done;
		}
		in.var[i].i = dims[i];
	}
	for (i = 0; i < k->nbuf; i++) {
		count[i] = k->buf[i].count;
		if (k->buf[i].ext) {
			count[i] = eval_root(&in, k->buf[i].ext).i;
			if (in.err || count[i] < 0) {
				rc = in.err ? in.err : burn_fail(c, BURN_ERR_INVALID,
				             "kir_interp %s: b%d has a negative extent",
				             k->name, i);
				goto done;
			}
		}
	}
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *b = &k->buf[i];
		if (b->space == KS_GLOBAL) {
			in.buf[i] = bufs ? bufs[i] : NULL;
			if (!in.buf[i] && count[i] > 0) {
				rc = burn_fail(c, BURN_ERR_INTERNAL,
				               "kir_interp %s: buffer b%d not given", k->name, i);
				goto done;
			}
		} else {
			int64_t nbytes;
			if (burn_mul_ovf(b->count > 0 ? b->count : 1,
			                 dtype_size(b->dtype), &nbytes) ||
			    (uint64_t)nbytes > SIZE_MAX ||
			    !(in.buf[i] = calloc((size_t)nbytes, 1))) {
				rc = burn_fail(c, BURN_ERR_NOMEM,
				               "kir_interp %s: local buffer b%d too large",
				               k->name, i);
				goto done;
			}
			if (b->space == KS_SHARED) {
				Shadow *sh = &in.shadow[i];
				size_t m = (size_t)(b->count > 0 ? b->count : 1);
				sh->w_tid = malloc(m * sizeof *sh->w_tid);
				sh->r_tid = malloc(m * sizeof *sh->r_tid);
				sh->w_epoch = calloc(m, sizeof *sh->w_epoch);
				sh->r_epoch = calloc(m, sizeof *sh->r_epoch);
				sh->p_tid = malloc(m * sizeof *sh->p_tid);
				sh->w_atom = calloc(m, 1);
				if (!sh->w_tid || !sh->r_tid || !sh->w_epoch || !sh->r_epoch ||
				    !sh->p_tid || !sh->w_atom) {
					rc = burn_fail(c, BURN_ERR_NOMEM, "kir_interp: out of memory");
					goto done;
				}
				memset(sh->w_tid, 0xff, m * sizeof *sh->w_tid);
				memset(sh->r_tid, 0xff, m * sizeof *sh->r_tid);
				memset(sh->p_tid, 0xff, m * sizeof *sh->p_tid);
			}
		}
	}
	rc = exec(&in, k->body);
done:
	if (in.buf)
		for (i = 0; i < k->nbuf; i++)
			if (k->buf[i].space != KS_GLOBAL)
				free(in.buf[i]);
	if (in.shadow)
		for (i = 0; i < k->nbuf; i++) {
			free(in.shadow[i].w_tid);
			free(in.shadow[i].r_tid);
			free(in.shadow[i].w_epoch);
			free(in.shadow[i].r_epoch);
			free(in.shadow[i].p_tid);
			free(in.shadow[i].w_atom);
		}
	free(in.shadow);
	free(count);
	free(in.pend);
	free(in.wpend);
	free(in.buf);
	free(in.var);
	free(in.memo);
	free(in.stamp);
	return rc;
}

/*
 * render_llvm.c - kernel IR -> LLVM IR (see render_llvm.h).
 *
 * How the kernel IR maps:
 *
 *   variables      one stack slot each (alloca in the entry block, zero at
 *                  entry like the C target's locals); mem2reg turns them
 *                  into SSA values.  Dim parameters are stored from the
 *                  function's arguments.
 *   KS_LOCAL       a stack array of the buffer's count.
 *   KS_FOR         header / body / exit blocks; the bound is evaluated in
 *                  the header every iteration, as the interpreter does.
 *   KS_IF          then / else / join blocks.
 *   expressions    emitted once per statement (a DAG: memoised by
 *                  statement), pure, so their order is free.
 *   guarded load   a branch: the index and the load only where the guard
 *                  holds, the default only where it does not, then a phi.
 *                  Values made on one side are forgotten after it (they do
 *                  not dominate the join).
 *   select         LLVM select: both arms computed, as the kernel IR says.
 *   integers       add/sub/mul/shl without nsw/nuw (they wrap); shlm/shrm
 *                  mask the count; quot/rem are sdiv/udiv/srem/urem, with a
 *                  divisor that is not a constant replaced by 1 where it is
 *                  0 or (signed) where a is MIN and it is -1, so no input
 *                  reaches LLVM's undefined division (the legalised IR
 *                  never asks for those, and the results there match the
 *                  wrapping ones: MIN / -1 = MIN, MIN % -1 = 0).
 *   casts          trunc/sext/zext; sitofp/uitofp; fpext/fptrunc; ->bool
 *                  as != 0 (fcmp une for floats); raw float->int
 *                  (KC_RAW: legalised, the operand in range where the
 *                  result is used) as fptosi/fptoui followed by freeze, so
 *                  an out-of-range operand in the unused arm of a select
 *                  is an arbitrary value, not poison.
 *   floats         fadd/fsub/fmul/fdiv/frem, fneg, fcmp (ordered, une for
 *                  ne: NaN != NaN), no fast-math flags; sqrt, fabs, floor,
 *                  ceil, round (roundeven: half to even) as intrinsics; the
 *                  other transcendentals and pow as calls to libm (expf,
 *                  exp, ...) that the JIT resolves from the process (the
 *                  llvm target's legalisation leaves only those without a
 *                  polynomial: sin, cos, tan, asin, acos, atan, pow, f64).
 *   FMA            a store the schedule marks (KSched.fma) becomes
 *                  llvm.fmuladd: fused where the CPU has a fast FMA, like
 *                  the C target's BURN_FMA.  KE_FMA (one rounding by
 *                  definition) is llvm.fma.
 *   index_bits 32  every i64 result is truncated to 32 bits and sign
 *                  extended back, as the interpreter computes it.
 *
 * Before anything is built the kernel is verified (kir_verify) and checked
 * for what this renderer does not take (the pre-pass below), so the LLVM
 * builder only ever sees well-typed operands: no LLVM assertion is
 * reachable from a kernel.
 */
#include <stdlib.h>
#include <string.h>
#include <llvm-c/Analysis.h>
#include "render_llvm.h"

typedef struct LR {
	Ctx *c;
	const KKernel *k;
	LLVMContextRef cx;
	LLVMModuleRef m;
	LLVMBuilderRef b;
	LLVMValueRef fn;
	LLVMValueRef *buf;    /* per buffer: the base pointer */
	LLVMValueRef *var;    /* per variable: its stack slot */
	LLVMValueRef *val;    /* per node: its value where stamp == gen */
	int *stamp, gen;
	KRef *log;            /* nodes memoised, in order (to forget one arm) */
	int nlog;
	int idx32;            /* the schedule computes indices in 32 bits */
	int err;              /* status of the build */
	const char *sym;      /* the kernel's symbol */
	LLVMBasicBlockRef entry; /* the current function's alloca block */
	int npar;             /* threaded loops outlined so far */
} LR;

/* ---- types ------------------------------------------------------------ */

static LLVMTypeRef
ty(LR *r, int dt)
{
	switch (dt) {
	case DT_F32: return LLVMFloatTypeInContext(r->cx);
	case DT_F64: return LLVMDoubleTypeInContext(r->cx);
	case DT_I8: case DT_U8: return LLVMInt8TypeInContext(r->cx);
	case DT_I16: case DT_U16: return LLVMInt16TypeInContext(r->cx);
	case DT_I32: case DT_U32: return LLVMInt32TypeInContext(r->cx);
	case DT_I64: case DT_U64: return LLVMInt64TypeInContext(r->cx);
	case DT_BOOL: return LLVMInt1TypeInContext(r->cx);
	}
	return NULL;
}

/* The element type of a buffer of dtype dt in memory (NULL: none). */
static LLVMTypeRef
mty(LR *r, int dt)
{
	if (dt == DT_BOOL)
		return LLVMInt8TypeInContext(r->cx);
	if (dtype_is_storage(dt))
		return ty(r, kir_bits_dtype(dt));
	return ty(r, dt);
}

static int
is_signed(int dt)
{
	return dt == DT_I8 || dt == DT_I16 || dt == DT_I32 || dt == DT_I64;
}

static int
fdt(int dt)
{
	return dt == DT_F32 || dt == DT_F64;
}

/* ---- helpers ------------------------------------------------------------ */

static LLVMValueRef
ci(LR *r, LLVMTypeRef t, int64_t v)
{
	unsigned w = LLVMGetIntTypeWidth(t);
	uint64_t u = (uint64_t)v;

	if (w < 64)
		u &= ((uint64_t)1 << w) - 1;
	return LLVMConstInt(t, u, 0);
}

/* Call intrinsic `name` overloaded on type t. */
static LLVMValueRef
intrinsic(LR *r, const char *name, LLVMTypeRef t, LLVMValueRef *args, unsigned n)
{
	unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
	LLVMValueRef f = LLVMGetIntrinsicDeclaration(r->m, id, &t, 1);
	LLVMTypeRef ft = LLVMIntrinsicGetType(r->cx, id, &t, 1);

	return LLVMBuildCall2(r->b, ft, f, args, n, "");
}

/* Call libm's `name` (float or double, one or two arguments). */
static LLVMValueRef
libm(LR *r, const char *name, LLVMTypeRef t, LLVMValueRef *args, unsigned n)
{
	LLVMValueRef f = LLVMGetNamedFunction(r->m, name);
	LLVMTypeRef ps[2] = { t, t }, ft = LLVMFunctionType(t, ps, n, 0);

	if (!f) {
		f = LLVMAddFunction(r->m, name, ft);
		LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
			LLVMCreateEnumAttribute(r->cx,
				LLVMGetEnumAttributeKindForName("nounwind", 8), 0));
	}
	return LLVMBuildCall2(r->b, ft, f, args, n, "");
}

static void
memo(LR *r, KRef e, LLVMValueRef v)
{
	r->val[e] = v;
	r->stamp[e] = r->gen;
	r->log[r->nlog++] = e;
}

/* Forget the values memoised since log position mark (made on one side of
 * a branch, they do not dominate what follows it). */
static void
forget(LR *r, int mark)
{
	while (r->nlog > mark)
		r->stamp[r->log[--r->nlog]] = 0;
}

static LLVMValueRef ex(LR *r, KRef e);

/* A statement's expressions start with nothing memoised. */
static void
new_stmt(LR *r)
{
	r->gen++;
	r->nlog = 0;
}

/* An integer of dtype dt as an i64 index. */
static LLVMValueRef
as_i64(LR *r, LLVMValueRef v, int dt)
{
	LLVMTypeRef i64 = LLVMInt64TypeInContext(r->cx);

	if (dt == DT_I64 || dt == DT_U64)
		return v;
	return is_signed(dt) ? LLVMBuildSExt(r->b, v, i64, "")
	                     : LLVMBuildZExt(r->b, v, i64, "");
}

static LLVMValueRef
addr(LR *r, int buf, KRef idx)
{
	LLVMValueRef i = as_i64(r, ex(r, idx), r->k->node[idx].dtype);

	return LLVMBuildGEP2(r->b, mty(r, r->k->buf[buf].dtype), r->buf[buf], &i, 1, "");
}

static LLVMValueRef
plain_load(LR *r, const KNode *n)
{
	LLVMValueRef p = addr(r, n->buf, n->a);
	LLVMValueRef v = LLVMBuildLoad2(r->b, mty(r, r->k->buf[n->buf].dtype), p, "");

	if (n->dtype == DT_BOOL)
		v = LLVMBuildICmp(r->b, LLVMIntNE, v,
		                  LLVMConstInt(LLVMInt8TypeInContext(r->cx), 0, 0), "");
	return v;
}

static LLVMValueRef
guarded_load(LR *r, const KNode *n)
{
	LLVMValueRef g = ex(r, n->b), v[2], phi;
	LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(r->cx, r->fn, "g.load");
	LLVMBasicBlockRef no = LLVMAppendBasicBlockInContext(r->cx, r->fn, "g.dflt");
	LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(r->cx, r->fn, "g.join");
	LLVMBasicBlockRef from[2];
	int mark;

	LLVMBuildCondBr(r->b, g, yes, no);
	LLVMPositionBuilderAtEnd(r->b, yes);
	mark = r->nlog;
	v[0] = plain_load(r, n);
	from[0] = LLVMGetInsertBlock(r->b);
	LLVMBuildBr(r->b, join);
	forget(r, mark);
	LLVMPositionBuilderAtEnd(r->b, no);
	v[1] = ex(r, n->c);
	from[1] = LLVMGetInsertBlock(r->b);
	LLVMBuildBr(r->b, join);
	forget(r, mark);
	LLVMPositionBuilderAtEnd(r->b, join);
	phi = LLVMBuildPhi(r->b, ty(r, n->dtype), "");
	LLVMAddIncoming(phi, v, from, 2);
	return phi;
}

static LLVMValueRef
konst(LR *r, const KNode *n)
{
	LLVMTypeRef t = ty(r, n->dtype);

	if (fdt(n->dtype))
		return n->dtype == DT_F32 ? LLVMConstReal(t, (double)(float)n->fval)
		                          : LLVMConstReal(t, n->fval);
	if (n->dtype == DT_BOOL)
		return LLVMConstInt(t, n->ival != 0, 0);
	return ci(r, t, n->ival);
}

static LLVMValueRef
unop(LR *r, const KNode *n)
{
	int adt = r->k->node[n->a].dtype;
	LLVMValueRef a = ex(r, n->a);
	LLVMTypeRef t = ty(r, adt);
	const char *f;

	switch (n->op) {
	case KO_NEG:
		return fdt(adt) ? LLVMBuildFNeg(r->b, a, "") : LLVMBuildNeg(r->b, a, "");
	case KO_NOT:
	case KO_BITNOT:
		return LLVMBuildNot(r->b, a, "");
	case KO_BITS:
		return LLVMBuildBitCast(r->b, a, ty(r, n->dtype), "");
	case KO_FROMBITS:
		return LLVMBuildBitCast(r->b, a, ty(r, n->dtype), "");
	case KO_ABS:     /* integers are legalised */
		return intrinsic(r, "llvm.fabs", t, &a, 1);
	case KO_SQRT:
		return intrinsic(r, "llvm.sqrt", t, &a, 1);
	case KO_FLOOR: case KO_CEIL: case KO_ROUND:
		if (!fdt(adt))
			return a;      /* integers: identity */
		return intrinsic(r, n->op == KO_FLOOR ? "llvm.floor" :
		                    n->op == KO_CEIL ? "llvm.ceil" : "llvm.roundeven",
		                 t, &a, 1);
	}
	if ((f = kop_libm(n->op, adt)) != NULL)
		return libm(r, f, t, &a, 1);
	return NULL;
}

static LLVMValueRef
cmp(LR *r, int op, int dt, LLVMValueRef a, LLVMValueRef b)
{
	if (fdt(dt)) {
		static const LLVMRealPredicate p[] = { LLVMRealOLT, LLVMRealOLE,
			LLVMRealOGT, LLVMRealOGE, LLVMRealOEQ, LLVMRealUNE };
		return LLVMBuildFCmp(r->b, p[op - KO_LT], a, b, "");
	}
	if (is_signed(dt)) {
		static const LLVMIntPredicate p[] = { LLVMIntSLT, LLVMIntSLE,
			LLVMIntSGT, LLVMIntSGE, LLVMIntEQ, LLVMIntNE };
		return LLVMBuildICmp(r->b, p[op - KO_LT], a, b, "");
	} else {
		static const LLVMIntPredicate p[] = { LLVMIntULT, LLVMIntULE,
			LLVMIntUGT, LLVMIntUGE, LLVMIntEQ, LLVMIntNE };
		return LLVMBuildICmp(r->b, p[op - KO_LT], a, b, "");
	}
}

/* quot/rem: the divisor made safe for LLVM (see the top of the file). */
static LLVMValueRef
divide(LR *r, const KNode *n, int dt, LLVMValueRef a, LLVMValueRef b)
{
	LLVMTypeRef t = ty(r, dt);
	int sgn = is_signed(dt), quot = n->op == KO_QUOT;
	int64_t v;

	if (!kb_is_const_i(r->k, n->b, &v) || v == 0 || (sgn && v == -1)) {
		LLVMValueRef bad = LLVMBuildICmp(r->b, LLVMIntEQ, b, ci(r, t, 0), "");
		if (sgn) {
			unsigned w = LLVMGetIntTypeWidth(t);
			LLVMValueRef min = ci(r, t, (int64_t)((uint64_t)1 << (w - 1)));
			LLVMValueRef ovf = LLVMBuildAnd(r->b,
				LLVMBuildICmp(r->b, LLVMIntEQ, a, min, ""),
				LLVMBuildICmp(r->b, LLVMIntEQ, b, ci(r, t, -1), ""), "");
			bad = LLVMBuildOr(r->b, bad, ovf, "");
		}
		b = LLVMBuildSelect(r->b, bad, ci(r, t, 1), b, "");
	}
	if (sgn)
		return quot ? LLVMBuildSDiv(r->b, a, b, "") : LLVMBuildSRem(r->b, a, b, "");
	return quot ? LLVMBuildUDiv(r->b, a, b, "") : LLVMBuildURem(r->b, a, b, "");
}

static LLVMValueRef
binop(LR *r, const KNode *n)
{
	int dt = r->k->node[n->a].dtype;
	LLVMValueRef a = ex(r, n->a), b = ex(r, n->b), ab[2];
	LLVMTypeRef t = ty(r, dt);

	if (n->op >= KO_LT && n->op <= KO_NE)
		return cmp(r, n->op, dt, a, b);
	if (fdt(dt)) {
		switch (n->op) {
		case KO_ADD: return LLVMBuildFAdd(r->b, a, b, "");
		case KO_SUB: return LLVMBuildFSub(r->b, a, b, "");
		case KO_MUL: return LLVMBuildFMul(r->b, a, b, "");
		case KO_DIV: return LLVMBuildFDiv(r->b, a, b, "");
		case KO_FMOD: return LLVMBuildFRem(r->b, a, b, "");
		case KO_POW:
			ab[0] = a;
			ab[1] = b;
			return libm(r, kop_libm(KO_POW, dt), t, ab, 2);
		}
		return NULL;
	}
	switch (n->op) {
	case KO_ADD: return LLVMBuildAdd(r->b, a, b, "");
	case KO_SUB: return LLVMBuildSub(r->b, a, b, "");
	case KO_MUL: return LLVMBuildMul(r->b, a, b, "");
	case KO_QUOT: case KO_REM: return divide(r, n, dt, a, b);
	case KO_BAND: case KO_AND: return LLVMBuildAnd(r->b, a, b, "");
	case KO_BOR: case KO_OR: return LLVMBuildOr(r->b, a, b, "");
	case KO_BXOR: case KO_XOR: return LLVMBuildXor(r->b, a, b, "");
	case KO_SHLM: case KO_SHRM: {
		LLVMValueRef cnt = LLVMBuildAnd(r->b, b,
			ci(r, t, LLVMGetIntTypeWidth(t) - 1), "");
		if (n->op == KO_SHLM)
			return LLVMBuildShl(r->b, a, cnt, "");
		return is_signed(dt) ? LLVMBuildAShr(r->b, a, cnt, "")
		                     : LLVMBuildLShr(r->b, a, cnt, "");
	}
	}
	return NULL;
}

static LLVMValueRef
cast(LR *r, const KNode *n)
{
	int from = r->k->node[n->a].dtype, to = n->dtype;
	LLVMValueRef a = ex(r, n->a);
	LLVMTypeRef t = ty(r, to);

	if (to == from)
		return a;
	if (to == DT_BOOL) {
		if (fdt(from))
			return LLVMBuildFCmp(r->b, LLVMRealUNE, a,
			                     LLVMConstReal(ty(r, from), 0), "");
		return LLVMBuildICmp(r->b, LLVMIntNE, a, ci(r, ty(r, from), 0), "");
	}
	if (fdt(to)) {
		if (fdt(from))
			return to == DT_F64 ? LLVMBuildFPExt(r->b, a, t, "")
			                    : LLVMBuildFPTrunc(r->b, a, t, "");
		return is_signed(from) ? LLVMBuildSIToFP(r->b, a, t, "")
		                       : LLVMBuildUIToFP(r->b, a, t, "");
	}
	if (fdt(from))   /* raw (KC_RAW, the pre-pass checked) */
		return LLVMBuildFreeze(r->b,
			is_signed(to) ? LLVMBuildFPToSI(r->b, a, t, "")
			              : LLVMBuildFPToUI(r->b, a, t, ""), "");
	{
		unsigned wf = LLVMGetIntTypeWidth(ty(r, from));
		unsigned wt = LLVMGetIntTypeWidth(t);
		if (wf == wt)
			return a;
		if (wf > wt)
			return LLVMBuildTrunc(r->b, a, t, "");
		return is_signed(from) ? LLVMBuildSExt(r->b, a, t, "")
		                       : LLVMBuildZExt(r->b, a, t, "");
	}
}

static LLVMValueRef
ex(LR *r, KRef e)
{
	const KNode *n = &r->k->node[e];
	LLVMValueRef v = NULL;

	if (r->stamp[e] == r->gen)
		return r->val[e];
	switch (n->kind) {
	case KE_CONST:
		v = konst(r, n);
		break;
	case KE_VAR:
		v = LLVMBuildLoad2(r->b, ty(r, n->dtype), r->var[n->var], "");
		break;
	case KE_LOAD:
		v = n->b ? guarded_load(r, n) : plain_load(r, n);
		break;
	case KE_UN:
		v = unop(r, n);
		break;
	case KE_BIN:
		v = binop(r, n);
		break;
	case KE_SELECT: {
		LLVMValueRef c = ex(r, n->a), x = ex(r, n->b), y = ex(r, n->c);
		v = LLVMBuildSelect(r->b, c, x, y, "");
		break;
	}
	case KE_FMA: {   /* llvm.fma: one rounding, always (not fmuladd) */
		LLVMValueRef args[3] = { ex(r, n->a), ex(r, n->b), ex(r, n->c) };
		v = intrinsic(r, "llvm.fma", ty(r, n->dtype), args, 3);
		break;
	}
	case KE_CAST:
		v = cast(r, n);
		break;
	}
	if (!v) {   /* the pre-pass let through an op without a form here */
		r->err = burn_fail(r->c, BURN_ERR_INTERNAL, "render_llvm %s: node %d: no "
		          "rendering for %s", r->k->name, e,
		          n->kind == KE_UN || n->kind == KE_BIN ? kop_name(n->op) : "it");
		v = LLVMGetUndef(ty(r, n->dtype));
	}
	if (n->dtype == DT_I64 && r->idx32 && n->kind != KE_CONST) {
		LLVMTypeRef i32 = LLVMInt32TypeInContext(r->cx);
		v = LLVMBuildSExt(r->b, LLVMBuildTrunc(r->b, v, i32, ""),
		                  LLVMInt64TypeInContext(r->cx), "");
	}
	memo(r, e, v);
	return v;
}

/* ---- statements ----------------------------------------------------------- */

/* Store b[i] = x*y + z as one llvm.fmuladd where the schedule says so. */
static LLVMValueRef
store_value(LR *r, KRef s)
{
	const KKernel *k = r->k;
	const KNode *n = &k->node[s];
	int which = ksched_fma(k->sched, s);
	const KNode *sum = &k->node[n->b];
	KRef prod, other;

	if (which != 1 && which != 2)
		return ex(r, n->b);
	prod = which == 1 ? sum->a : sum->b;
	other = which == 1 ? sum->b : sum->a;
	if (sum->kind != KE_BIN || sum->op != KO_ADD || !fdt(sum->dtype) ||
	    k->node[prod].kind != KE_BIN || k->node[prod].op != KO_MUL)
		return ex(r, n->b);   /* not an accumulation: as written */
	{
		LLVMValueRef args[3] = { ex(r, k->node[prod].a), ex(r, k->node[prod].b),
		                         ex(r, other) };
		return intrinsic(r, "llvm.fmuladd", ty(r, sum->dtype), args, 3);
	}
}

/* The schedule's thread entry for loop statement s, or NULL. */
static const KThreads *
threaded(const KKernel *k, KRef s)
{
	for (int i = 0; k->sched && i < k->sched->nthreads; i++)
		if (k->sched->threads[i].loop == s)
			return &k->sched->threads[i];
	return NULL;
}

/* A stack slot of type t in the current function's entry block (so a
 * slot made inside a loop is made once). */
static LLVMValueRef
entry_alloca(LR *r, LLVMTypeRef t)
{
	LLVMBuilderRef b = LLVMCreateBuilderInContext(r->cx);
	LLVMValueRef v;

	LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(r->entry));
	v = LLVMBuildAlloca(b, t, "");
	LLVMDisposeBuilder(b);
	return v;
}

static void block(LR *r, KRef s);
static void attr(LR *r, LLVMValueRef f, unsigned idx, const char *name);

/*
 * A loop the schedule runs on threads.  Its body becomes a function of its
 * own, SYM.pN(ptr ctx, i64 lo, i64 hi), running iterations [lo, hi), and
 * the loop a call of the runtime's burn_parallel_for (runtime/parallel.h)
 * with it.  ctx is an array of 8-byte slots: slot b holds buffer b's base
 * pointer, slot nbuf + v variable v's value at the loop.  In the outlined
 * function every variable is a fresh slot started from that value, and
 * the local buffers the schedule makes private are fresh arrays; the
 * others are shared (only read: the loop's iterations are independent).
 *
 * The body proper is SYM.pNb(ctx, lo, hi, buf0, ..., buf[nbuf-1]), its
 * global buffers noalias parameters like the kernel's own, always inlined
 * into SYM.pN, which loads them from ctx and calls it.  (Inlining turns
 * noalias into scoped alias metadata.  With the pointers loaded from ctx
 * in the body itself, LLVM could not tell the loads of the weights from
 * the stores of a register tile: LICM then hoisted the tile's loads out of
 * a GEMM's reduction loop but left its stores in, every iteration wrote
 * the tile back to the stack, and mlp's GEMM took 2 to 3 times gcc's.)
 */
static void
par_loop(LR *r, KRef s)
{
	const KKernel *k = r->k;
	const KNode *n = &k->node[s];
	const KThreads *th = threaded(k, s);
	LLVMTypeRef ptr = LLVMPointerTypeInContext(r->cx, 0);
	LLVMTypeRef i64 = LLVMInt64TypeInContext(r->cx);
	LLVMTypeRef vt = LLVMVoidTypeInContext(r->cx);
	LLVMTypeRef ps[4] = { ptr, ptr, i64, i64 }, pft, rft, bft, *bps = NULL;
	LLVMValueRef ctx, pf, bf, rt, args[4], i, *bargs = NULL;
	LLVMValueRef *sbuf = NULL, *svar = NULL;
	LLVMValueRef sfn = r->fn;
	LLVMBasicBlockRef sentry = r->entry, sblock = LLVMGetInsertBlock(r->b);
	LLVMBasicBlockRef head, body, done;
	int nslot = k->nbuf + k->nvar;
	char name[200];

	sbuf = malloc(((size_t)k->nbuf + 1) * sizeof *sbuf);
	svar = malloc(((size_t)k->nvar + 1) * sizeof *svar);
	if (!sbuf || !svar) {
		r->err = burn_fail(r->c, BURN_ERR_NOMEM, "render_llvm: out of memory");
		goto out;
	}
	memcpy(sbuf, r->buf, (size_t)k->nbuf * sizeof *sbuf);
	memcpy(svar, r->var, (size_t)k->nvar * sizeof *svar);

	/* the call: the context, the bounds */
	ctx = entry_alloca(r, LLVMArrayType2(i64, (uint64_t)(nslot > 0 ? nslot : 1)));
	for (int x = 0; x < nslot; x++) {
		LLVMValueRef ix = LLVMConstInt(i64, (unsigned long long)x, 0);
		LLVMValueRef slot = LLVMBuildGEP2(r->b, i64, ctx, &ix, 1, "");
		if (x < k->nbuf)
			LLVMBuildStore(r->b, r->buf[x], slot);
		else
			LLVMBuildStore(r->b, LLVMBuildLoad2(r->b, ty(r, k->var[x - k->nbuf].dtype),
			                                    r->var[x - k->nbuf], ""), slot);
	}
	snprintf(name, sizeof name, "%s.p%d", r->sym, r->npar);
	pft = LLVMFunctionType(vt, ps + 1, 3, 0);
	pf = LLVMAddFunction(r->m, name, pft);
	LLVMSetLinkage(pf, LLVMInternalLinkage);
	new_stmt(r);
	args[0] = pf;
	args[1] = ctx;
	args[2] = ex(r, n->a);
	args[3] = ex(r, n->b);
	rft = LLVMFunctionType(vt, ps, 4, 0);
	if (!(rt = LLVMGetNamedFunction(r->m, "burn_parallel_for")))
		rt = LLVMAddFunction(r->m, "burn_parallel_for", rft);
	LLVMBuildCall2(r->b, rft, rt, args, 4, "");

	/* the body's function: ctx, lo, hi, then every buffer's pointer */
	bps = malloc(((size_t)k->nbuf + 3) * sizeof *bps);
	bargs = malloc(((size_t)k->nbuf + 3) * sizeof *bargs);
	if (!bps || !bargs) {
		r->err = burn_fail(r->c, BURN_ERR_NOMEM, "render_llvm: out of memory");
		goto back;
	}
	bps[0] = ptr;
	bps[1] = bps[2] = i64;
	for (int b = 0; b < k->nbuf; b++)
		bps[3 + b] = ptr;
	bft = LLVMFunctionType(vt, bps, (unsigned)k->nbuf + 3, 0);
	snprintf(name, sizeof name, "%s.p%db", r->sym, r->npar++);
	bf = LLVMAddFunction(r->m, name, bft);
	LLVMSetLinkage(bf, LLVMInternalLinkage);
	attr(r, bf, LLVMAttributeFunctionIndex, "nounwind");
	attr(r, bf, LLVMAttributeFunctionIndex, "alwaysinline");
	for (int b = 0; b < k->nbuf; b++)
		if (k->buf[b].space == KS_GLOBAL) {
			attr(r, bf, (unsigned)b + 4, "noalias");
			attr(r, bf, (unsigned)b + 4, "nocapture");
		}

	/* SYM.pN: the pointers from ctx, the call */
	LLVMPositionBuilderAtEnd(r->b, LLVMAppendBasicBlockInContext(r->cx, pf, "entry"));
	ctx = LLVMGetParam(pf, 0);
	bargs[0] = ctx;
	bargs[1] = LLVMGetParam(pf, 1);
	bargs[2] = LLVMGetParam(pf, 2);
	for (int b = 0; b < k->nbuf; b++) {
		int priv = 0;
		for (int q = 0; q < th->nbuf; q++)
			priv |= th->buf[q] == b;
		if (priv && k->buf[b].space == KS_LOCAL) {
			bargs[3 + b] = LLVMConstPointerNull(ptr);
		} else {
			LLVMValueRef ix = LLVMConstInt(i64, (unsigned long long)b, 0);
			bargs[3 + b] = LLVMBuildLoad2(r->b, ptr,
				LLVMBuildGEP2(r->b, i64, ctx, &ix, 1, ""), "");
		}
	}
	LLVMBuildCall2(r->b, bft, bf, bargs, (unsigned)k->nbuf + 3, "");
	LLVMBuildRetVoid(r->b);

	/* the outlined body */
	pf = bf;
	r->fn = pf;
	r->entry = LLVMAppendBasicBlockInContext(r->cx, pf, "entry");
	LLVMPositionBuilderAtEnd(r->b, r->entry);
	ctx = LLVMGetParam(pf, 0);
	for (int b = 0; b < k->nbuf; b++) {
		int priv = 0;
		for (int q = 0; q < th->nbuf; q++)
			priv |= th->buf[q] == b;
		if (priv && k->buf[b].space == KS_LOCAL)
			r->buf[b] = LLVMBuildAlloca(r->b, LLVMArrayType2(mty(r, k->buf[b].dtype),
				(uint64_t)(k->buf[b].count > 0 ? k->buf[b].count : 1)), "");
		else
			r->buf[b] = LLVMGetParam(pf, (unsigned)b + 3);
	}
	for (int v = 0; v < k->nvar; v++) {
		LLVMTypeRef t = ty(r, k->var[v].dtype);
		LLVMValueRef ix = LLVMConstInt(i64, (unsigned long long)(k->nbuf + v), 0);
		r->var[v] = LLVMBuildAlloca(r->b, t, k->var[v].name ? k->var[v].name : "");
		LLVMBuildStore(r->b, LLVMBuildLoad2(r->b, t,
			LLVMBuildGEP2(r->b, i64, ctx, &ix, 1, ""), ""), r->var[v]);
	}
	head = LLVMAppendBasicBlockInContext(r->cx, pf, "for");
	body = LLVMAppendBasicBlockInContext(r->cx, pf, "body");
	done = LLVMAppendBasicBlockInContext(r->cx, pf, "end");
	LLVMBuildStore(r->b, LLVMGetParam(pf, 1), r->var[n->var]);
	LLVMBuildBr(r->b, head);
	LLVMPositionBuilderAtEnd(r->b, head);
	i = LLVMBuildLoad2(r->b, i64, r->var[n->var], "");
	LLVMBuildCondBr(r->b, LLVMBuildICmp(r->b, LLVMIntSLT, i, LLVMGetParam(pf, 2), ""),
	                body, done);
	LLVMPositionBuilderAtEnd(r->b, body);
	block(r, n->body);
	i = LLVMBuildLoad2(r->b, i64, r->var[n->var], "");
	LLVMBuildStore(r->b, LLVMBuildNSWAdd(r->b, i, LLVMConstInt(i64, 1, 0), ""),
	               r->var[n->var]);
	LLVMBuildBr(r->b, head);
	LLVMPositionBuilderAtEnd(r->b, done);
	LLVMBuildRetVoid(r->b);

back:
	/* back in the caller, after the call */
	r->fn = sfn;
	r->entry = sentry;
	memcpy(r->buf, sbuf, (size_t)k->nbuf * sizeof *sbuf);
	memcpy(r->var, svar, (size_t)k->nvar * sizeof *svar);
	LLVMPositionBuilderAtEnd(r->b, sblock);
out:
	free(sbuf);
	free(svar);
	free(bps);
	free(bargs);
}

static void
block(LR *r, KRef s)
{
	const KKernel *k = r->k;

	for (; s; s = k->node[s].next) {
		const KNode *n = &k->node[s];
		switch (n->kind) {
		case KS_FOR: {
			if (threaded(k, s)) {
				par_loop(r, s);
				break;
			}
			LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(r->cx, r->fn, "for");
			LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(r->cx, r->fn, "body");
			LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(r->cx, r->fn, "end");
			LLVMTypeRef i64 = LLVMInt64TypeInContext(r->cx);
			LLVMValueRef i;
			new_stmt(r);
			LLVMBuildStore(r->b, ex(r, n->a), r->var[n->var]);
			LLVMBuildBr(r->b, head);
			LLVMPositionBuilderAtEnd(r->b, head);
			new_stmt(r);
			i = LLVMBuildLoad2(r->b, i64, r->var[n->var], "");
			LLVMBuildCondBr(r->b, LLVMBuildICmp(r->b, LLVMIntSLT, i, ex(r, n->b), ""),
			                body, done);
			LLVMPositionBuilderAtEnd(r->b, body);
			block(r, n->body);
			/* var < hi <= INT64_MAX before the step: no overflow */
			i = LLVMBuildLoad2(r->b, i64, r->var[n->var], "");
			LLVMBuildStore(r->b, LLVMBuildNSWAdd(r->b, i, LLVMConstInt(i64, 1, 0), ""),
			               r->var[n->var]);
			LLVMBuildBr(r->b, head);
			LLVMPositionBuilderAtEnd(r->b, done);
			break;
		}
		case KS_IF: {
			LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(r->cx, r->fn, "then");
			LLVMBasicBlockRef no = LLVMAppendBasicBlockInContext(r->cx, r->fn, "else");
			LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(r->cx, r->fn, "fi");
			new_stmt(r);
			LLVMBuildCondBr(r->b, ex(r, n->a), yes, no);
			LLVMPositionBuilderAtEnd(r->b, yes);
			block(r, n->body);
			LLVMBuildBr(r->b, join);
			LLVMPositionBuilderAtEnd(r->b, no);
			block(r, n->orelse);
			LLVMBuildBr(r->b, join);
			LLVMPositionBuilderAtEnd(r->b, join);
			break;
		}
		case KS_STORE: {
			LLVMValueRef p, v;
			new_stmt(r);
			p = addr(r, n->buf, n->a);
			v = store_value(r, s);
			if (k->buf[n->buf].dtype == DT_BOOL)
				v = LLVMBuildZExt(r->b, v, LLVMInt8TypeInContext(r->cx), "");
			LLVMBuildStore(r->b, v, p);
			break;
		}
		case KS_SET:
			new_stmt(r);
			LLVMBuildStore(r->b, ex(r, n->a), r->var[n->var]);
			break;
		case KS_BARRIER:   /* one thread: nothing to wait for */
			break;
		}
	}
}

/* ---- functions -------------------------------------------------------------- */

static void
attr(LR *r, LLVMValueRef f, unsigned idx, const char *name)
{
	unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));

	LLVMAddAttributeAtIndex(f, idx, LLVMCreateEnumAttribute(r->cx, kind, 0));
}

static void
build(LR *r, const char *sym)
{
	const KKernel *k = r->k;
	LLVMTypeRef ptr = LLVMPointerTypeInContext(r->cx, 0);
	LLVMTypeRef i64 = LLVMInt64TypeInContext(r->cx);
	LLVMTypeRef vt = LLVMVoidTypeInContext(r->cx);
	LLVMTypeRef *ps, ft, wt, wps[2] = { ptr, ptr };
	LLVMValueRef wrap, *args;
	LLVMBasicBlockRef entry;
	char *inner;
	size_t ln = strlen(sym) + 3;
	int np = 0, gi = 0;

	for (int i = 0; i < k->nbuf; i++)
		np += k->buf[i].space == KS_GLOBAL;
	np += k->ndim;
	ps = calloc((size_t)np + 1, sizeof *ps);
	args = calloc((size_t)np + 1, sizeof *args);
	inner = malloc(ln);
	if (!ps || !args || !inner) {
		r->err = burn_fail(r->c, BURN_ERR_NOMEM, "render_llvm: out of memory");
		goto out;
	}
	snprintf(inner, ln, "%s.k", sym);
	for (int i = 0; i < np; i++)
		ps[i] = i < np - k->ndim ? ptr : i64;
	ft = LLVMFunctionType(vt, ps, (unsigned)np, 0);
	r->fn = LLVMAddFunction(r->m, inner, ft);
	LLVMSetLinkage(r->fn, LLVMInternalLinkage);
	attr(r, r->fn, LLVMAttributeFunctionIndex, "nounwind");
	attr(r, r->fn, LLVMAttributeFunctionIndex, "alwaysinline");
	for (int i = 0; i < np - k->ndim; i++) {
		attr(r, r->fn, (unsigned)i + 1, "noalias");
		attr(r, r->fn, (unsigned)i + 1, "nocapture");
	}

	entry = LLVMAppendBasicBlockInContext(r->cx, r->fn, "entry");
	LLVMPositionBuilderAtEnd(r->b, entry);
	for (int i = 0; i < k->nbuf; i++) {
		const KBuf *b = &k->buf[i];
		if (b->space == KS_GLOBAL) {
			r->buf[i] = LLVMGetParam(r->fn, (unsigned)gi++);
		} else {
			LLVMTypeRef at = LLVMArrayType2(mty(r, b->dtype),
			                                (uint64_t)(b->count > 0 ? b->count : 1));
			r->buf[i] = LLVMBuildAlloca(r->b, at, "");
		}
	}
	for (int i = 0; i < k->nvar; i++) {
		LLVMTypeRef t = ty(r, k->var[i].dtype);
		r->var[i] = LLVMBuildAlloca(r->b, t, k->var[i].name ? k->var[i].name : "");
	}
	for (int i = 0; i < k->nvar; i++) {
		LLVMTypeRef t = ty(r, k->var[i].dtype);
		LLVMValueRef z = i < k->ndim ? LLVMGetParam(r->fn, (unsigned)(gi + i))
		               : fdt(k->var[i].dtype) ? LLVMConstReal(t, 0)
		               : LLVMConstInt(t, 0, 0);
		LLVMBuildStore(r->b, z, r->var[i]);
	}
	{
		/* the entry block holds the slots (entry_alloca adds more) */
		LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(r->cx, r->fn, "start");
		r->entry = entry;
		LLVMBuildBr(r->b, start);
		LLVMPositionBuilderAtEnd(r->b, start);
	}
	block(r, k->body);
	LLVMBuildRetVoid(r->b);

	/* the wrapper: void SYM(ptr bufs, ptr dims) */
	wt = LLVMFunctionType(vt, wps, 2, 0);
	wrap = LLVMAddFunction(r->m, sym, wt);
	attr(r, wrap, LLVMAttributeFunctionIndex, "nounwind");
	LLVMPositionBuilderAtEnd(r->b, LLVMAppendBasicBlockInContext(r->cx, wrap, "entry"));
	gi = 0;
	for (int i = 0; i < k->nbuf; i++) {
		LLVMValueRef ix = LLVMConstInt(i64, (unsigned long long)i, 0);
		if (k->buf[i].space != KS_GLOBAL)
			continue;
		args[gi++] = LLVMBuildLoad2(r->b, ptr,
			LLVMBuildGEP2(r->b, ptr, LLVMGetParam(wrap, 0), &ix, 1, ""), "");
	}
	for (int i = 0; i < k->ndim; i++) {
		LLVMValueRef ix = LLVMConstInt(i64, (unsigned long long)i, 0);
		args[gi++] = LLVMBuildLoad2(r->b, i64,
			LLVMBuildGEP2(r->b, i64, LLVMGetParam(wrap, 1), &ix, 1, ""), "");
	}
	LLVMBuildCall2(r->b, ft, r->fn, args, (unsigned)np, "");
	LLVMBuildRetVoid(r->b);
out:
	free(ps);
	free(args);
	free(inner);
}

int
llvm_add_kernel(Ctx *c, const KKernel *k, LLVMModuleRef m, const char *sym)
{
	LR r;
	size_t nn = (size_t)k->nnode + 1;
	int rc;

	TRY(kir_check_legal(c, k, "render_llvm", &kcaps_libm, 0));
	memset(&r, 0, sizeof r);
	r.c = c;
	r.k = k;
	r.m = m;
	r.cx = LLVMGetModuleContext(m);
	r.idx32 = k->sched && k->sched->index_bits == 32;
	r.buf = calloc((size_t)k->nbuf + 1, sizeof *r.buf);
	r.var = calloc((size_t)k->nvar + 1, sizeof *r.var);
	r.val = calloc(nn, sizeof *r.val);
	r.stamp = calloc(nn, sizeof *r.stamp);
	r.log = calloc(nn, sizeof *r.log);
	if (!r.buf || !r.var || !r.val || !r.stamp || !r.log) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "render_llvm: out of memory");
		goto done;
	}
	for (int i = 0; i < k->nbuf; i++) {
		if (!mty(&r, k->buf[i].dtype)) {
			rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "render_llvm %s: dtype %s",
			               k->name, dtype_name(k->buf[i].dtype));
			goto done;
		}
	}
	for (int i = 0; i < k->nvar; i++)
		if (!ty(&r, k->var[i].dtype) || (i < k->ndim && k->var[i].dtype != DT_I64)) {
			rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "render_llvm %s: variable "
			               "of dtype %s", k->name, dtype_name(k->var[i].dtype));
			goto done;
		}
	r.b = LLVMCreateBuilderInContext(r.cx);
	r.gen = 1;
	r.sym = sym;
	build(&r, sym);
	LLVMDisposeBuilder(r.b);
	rc = r.err;
done:
	free(r.buf);
	free(r.var);
	free(r.val);
	free(r.stamp);
	free(r.log);
	return rc;
}

int
llvm_verify(Ctx *c, LLVMModuleRef m)
{
	char *msg = NULL;
	int rc = BURN_OK;

	if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg))
		rc = burn_fail(c, BURN_ERR_INTERNAL, "llvm: the module does not "
		               "verify: %s", msg ? msg : "?");
	LLVMDisposeMessage(msg);
	return rc;
}

int
render_llvm_kernel(Ctx *c, const KKernel *k, FILE *f)
{
	LLVMContextRef cx = LLVMContextCreate();
	LLVMModuleRef m = LLVMModuleCreateWithNameInContext(k->name, cx);
	int rc = llvm_add_kernel(c, k, m, k->name);

	if (!rc)
		rc = llvm_verify(c, m);
	if (!rc) {
		char *s = LLVMPrintModuleToString(m);
		fputs(s, f);
		LLVMDisposeMessage(s);
	}
	LLVMDisposeModule(m);
	LLVMContextDispose(cx);
	return rc;
}

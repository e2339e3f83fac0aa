/*
 * kir.h - the kernel IR: one target-independent, loop-level IR that every
 * renderer (C now; GLSL/SPIR-V, PTX and LLVM later) prints, and that the
 * interpreter (kir_interp.c) runs for constant folding.
 *
 * A KProgram is an ordered list of kernels.  A kernel has
 *   - buffers (KBuf): typed arrays it reads or writes.  A buffer is bound to
 *     a graph value (g->val index) or is kernel-local scratch (space
 *     KS_LOCAL: per-invocation private array, or KS_SHARED: shared by the
 *     threads of one block on GPU targets, or KS_FRAG: a matrix-tile
 *     fragment of a subgroup, touched only by tile ops);
 *   - variables (KVar): typed scalars.  Loop indices are i64 variables;
 *     other variables are mutable locals (accumulators);
 *   - a body: a block of statements.
 *
 * Expressions and statements are nodes in one pool per kernel, referred to
 * by index (KRef); 0 is "none".  Expressions are pure and may be shared
 * (a DAG); a renderer may print them inline or name them.  Statements are
 * chained by `next`; a block is the index of its first statement.
 *
 *   statement   meaning
 *   KS_FOR      for (var = lo; var < hi; var += 1) body     (a: lo, b: hi)
 *               flags: KF_PARALLEL (iterations independent: may be split
 *               across threads), KF_THREAD_X/Y/Z, KF_BLOCK_X/Y/Z (a GPU
 *               renderer maps the loop onto that hardware index),
 *               KF_UNROLL (constant bounds: may be printed per iteration)
 *   KS_STORE    buf[a] = b
 *   KS_SET      var = a
 *   KS_IF       if (a) body else orelse
 *   KS_BARRIER  all threads of a block wait (GPU); no-op on CPU
 *   KS_VCOPY ... KS_TSTORE   GPU statements (kops.def; "GPU statements"
 *               below): vector copies, atomics, async copies, subgroup
 *               shuffles and reductions, matrix tiles
 *
 *   expression  value
 *   KE_CONST    ival (integer and bool dtypes) or fval (float dtypes)
 *   KE_VAR      current value of variable `var`
 *   KE_LOAD     buf[a]; with a guard b (b != 0): b ? buf[a] : c, and
 *               the memory is read only where b holds (padding: an index
 *               out of bounds where the guard is false is fine)
 *   KE_UN       op(a)       op from ir/kops.def, its semantics there
 *   KE_BIN      op(a, b)
 *   KE_SELECT   a ? b : c   both arms are evaluated (a target may compute
 *               both, like LLVM select, SPIR-V OpSelect, PTX selp): an
 *               arm must not read out of bounds; use a guarded load
 *   KE_FMA      a * b + c with one rounding (fma), float operands of one
 *               dtype; what legalised polynomials (erf) are made of, so
 *               every target computes them alike and in fewer operations
 *   KE_CAST     (dtype) a: int->int wraps (two's complement); float->int
 *               truncates toward zero and saturates to the type's range,
 *               NaN gives 0 (op KC_RAW: the operand is known to be in
 *               range, else the result is unspecified but not undefined);
 *               ->bool is != 0
 *   KE_SPECIAL  a hardware index: op is KX_THREAD_X... (GPU only)
 *
 * Types.  Every expression has a dtype from ir/base.h.  Indices are i64.
 * Comparisons and logical ops yield DT_BOOL.  The storage-only dtypes
 * (dtype_is_storage: DT_F16, DT_BF16 and the float8 types DT_F8E4M3FN,
 * DT_F8E4M3FNUZ, DT_F8E5M2, DT_F8E5M2FNUZ, DT_F8E8M0) are types of buffers
 * only, never of expressions or variables: their buffers hold 16- or 8-bit
 * patterns, a load yields f32 and a store takes f32 (rounding to nearest
 * even; a float8 store does not saturate: out of range becomes inf or NaN
 * per format; float8e8m0 rounds half up), and kb_cast to one of them yields an
 * f32 rounded to its precision (a KE_CAST of dtype f32 with ival = the
 * storage dtype; float8: saturating, ONNX Cast's default; kb_cast_f8 picks
 * the rounding).  Those conversions are defined by passes/legalize.c, as
 * integer kernel IR on the bits: a load of dtype kir_bits_dtype(buffer's)
 * (u16, u8; printed `loadbits`) reads a storage buffer's pattern, and a
 * store of a value of that dtype writes it.  Only a target whose KCaps
 * has the conversion keeps the f32 forms.  The packed types (int4, uint4,
 * int2, uint2, float4e2m1: dtype_is_packed) are buffer types too: a load
 * yields dtype_expr (i8, u8, f32), a store takes it, and legalisation
 * rewrites both into byte accesses and retypes the buffer u8 (its bytes),
 * so nothing after it sees a packed type.  Neighbours share a byte, so
 * kb_store into a packed buffer clears KF_PARALLEL on the loops around it.  `lanes` > 1 marks a vector of
 * that many elements (a vector load reads buf[a .. a+lanes-1]); renderers
 * that do not support vectors reject such kernels.
 */
#ifndef BURN_KIR_H
#define BURN_KIR_H

#include <stdio.h>
#include "base.h"

typedef int KRef;

enum KNodeKind {
	KN_NONE = 0,
	/* expressions */
	KE_CONST, KE_VAR, KE_LOAD, KE_UN, KE_BIN, KE_SELECT, KE_FMA, KE_CAST,
	KE_SPECIAL,
	/* statements */
	KS_FOR, KS_STORE, KS_SET, KS_IF, KS_BARRIER,
	/* GPU statements (kops.def) */
#define KGPU(id, name, coll) KS_##id,
#include "kops.def"
#undef KGPU
	KN_COUNT_
};

/* Operators of KE_UN and KE_BIN, from the op table ir/kops.def. */
enum KOp {
	KO_NONE = 0,
#define KOP(id, name, arity, rule, domain, props, libm) KO_##id,
#include "kops.def"
#undef KOP
	KO_COUNT_
};

/* Op table columns (see kops.def). */
enum KOpRule { KR_SAME, KR_BOOL, KR_BITS, KR_FLOAT };
enum KOpDomain { KD_NUM, KD_FLOAT, KD_INT, KD_BOOL, KD_UBITS };
enum KOpProp { KP_LEG_INT = 1, KP_LEG_F32 = 2, KP_LEG_FLT = 4, KP_PRE = 8,
                KP_LEG_MATH = 16, KP_LEG_F64 = 32 };

typedef struct KOpInfo {
	const char *name;
	int arity, rule, domain, props;
	const char *libm64, *libm32;  /* "" where none */
} KOpInfo;

/* Indexed by KOp; kop_info[KO_NONE] is a placeholder. */
extern const KOpInfo kop_info[KO_COUNT_];
/* The C library's function computing op on dt (f32 or f64), or NULL. */
const char *kop_libm(int op, int dt);

/* The dtype op yields on operands of dtype dt (DT_UNDEF if dt is outside
 * the op's domain), and whether op on dt must be legalised before a
 * renderer or the interpreter sees it (for a target with capabilities
 * caps; NULL: none). */
typedef struct KCaps KCaps;
int kop_result(int op, int dt);
int kop_needs_legal(int op, int dt, const KCaps *caps);

/*
 * What a target implements natively (each flag set: the op stays as it is
 * and the target's renderer prints it; clear: passes/legalize.c expands it
 * into kernel IR).  The C renderer and the interpreter have all flags
 * clear, so both run the one expansion.  Meant to be embedded in a target
 * description (targets/target.h).
 */
struct KCaps {
	unsigned char erf_f32;      /* an f32 erf of its own */
	unsigned char nan_minmax;   /* min/max that propagate NaN */
	unsigned char isnan, isinf;
	unsigned char sat_f2i;      /* saturating float->int conversion */
	unsigned char f16, bf16;    /* f16/bf16 <-> f32 conversions (loads,
	                             * stores, rounding casts), like PTX cvt */
	unsigned char libm;         /* f32 exp, log, tanh, sinh, cosh, asinh,
	                             * acosh, atanh of its own, within an ulp
	                             * (C's libm); clear: polynomials */
	unsigned char libm_f64;     /* f64 exp, log, pow of its own (C's libm,
	                             * or calls to it); clear: kernel-IR
	                             * expansions in f64 (PTX has no f64
	                             * transcendentals) */
	unsigned char exp_plain;    /* f32 exp's expansion in plain mul and
	                             * add, with range selects, instead of the
	                             * fused multiply-add form (vulkan: on
	                             * lavapipe the fma form measured up to 15
	                             * ulps off at |x| ~ 40-60) */
	unsigned char no_fma_f64;   /* no f64 fma to render (freestanding C,
	                             * wasm: no libm, no instruction): an f64
	                             * fma is emulated exactly (legalize.c,
	                             * fma64_soft) and f64 fmod's steps take
	                             * 26-bit quotients with split products */
	unsigned char sel_f32;      /* legalize's branch-free selects of f32
	                             * values (exp, tanh: NaN and range arms)
	                             * as selects, which the target's compiler
	                             * keeps without a branch (PTX selp, GLSL's
	                             * ?:); clear: as masks of the values' bits,
	                             * which gcc vectorizes.  The H200's driver
	                             * 580 JIT crashed (signal 11 in
	                             * cuModuleLoadDataEx) on PTX of the mask
	                             * form feeding selp (ELU, LSTM, softcap) */
};

/* What the interpreter and the C renderer compute by themselves: the f32
 * transcendentals through the C library (libm); everything else they see
 * legalised. */
extern const KCaps kcaps_libm;

/* The unsigned integer dtype as wide as storage dtype dt (u16 for f16 and
 * bf16, u8 for float8): the dtype of a load or store of its bits; else
 * DT_UNDEF. */
int kir_bits_dtype(int dt);

enum KSpecial { KX_THREAD_X = 1, KX_THREAD_Y, KX_THREAD_Z,
                KX_BLOCK_X, KX_BLOCK_Y, KX_BLOCK_Z };

enum KLoopFlag {
	KF_PARALLEL = 1,
	KF_THREAD_X = 2, KF_THREAD_Y = 4, KF_THREAD_Z = 8,
	KF_BLOCK_X = 16, KF_BLOCK_Y = 32, KF_BLOCK_Z = 64,
	KF_UNROLL = 128,   /* constant bounds: renderers may print the body
	                    * once per iteration (a schedule's decision; the
	                    * meaning is the loop's) */
};

enum KSpace { KS_GLOBAL = 0, KS_LOCAL, KS_SHARED, KS_FRAG };

/* ---- GPU statements ------------------------------------------------------
 * The rows of kops.def.  Fields:
 *
 *   KS_VCOPY    buf[a .. a+ival) = buf2[b .. b+ival): one vector access of
 *               ival lanes (ival * size <= 16 bytes, a power of two), a and
 *               b multiples of ival (misaligned is an error), same dtype
 *   KS_ATOMIC   op KAtomic on buf[a] (global or shared): add, max, min with
 *               value b; cas: if buf[a] == b then buf[a] = c.  var gets the
 *               old value, or is -1.  Atomics of one element by several
 *               threads between barriers are no race; mixed with plain
 *               accesses they are.
 *   KS_CPASYNC  as KS_VCOPY but asynchronous, buf shared and buf2 global,
 *               ival * size 4, 8 or 16 bytes: the copy lands at the
 *               thread's next KS_CPWAIT; touching its destination before
 *               that (any thread) is an error, as is ending without a wait
 *   KS_CPWAIT   the thread's async copies issued since its previous
 *               KS_CPWAIT become one group; then all but the ival most
 *               recent groups complete (ival 0: every copy; a count at
 *               least the groups pending only closes the group; at most
 *               7).  Other threads see the copies after a barrier, like
 *               any shared store.  A pipeline of S stages issues a stage,
 *               then cpwait.(S-2) before computing on the oldest.
 *   KS_SHFL     var = a of lane src, op KShfl: idx src = b mod W, xor
 *               src = lane ^ (b mod W), down src = lane + b or the lane
 *               itself when that is >= W (W = ival, the subgroup width)
 *   KS_SGRED    var = op over the W lanes' a (op KO_ADD, KO_MUL, KO_MIN,
 *               KO_MAX with KO_'s semantics), combined as the xor butterfly
 *               (offsets W/2 .. 1), so every lane gets the same value
 *   KS_TFILL    every element of fragment buf (role c) = a (f32)
 *   KS_TLOAD    fragment buf (role op: KTR_A m x k, KTR_B k x n, KTR_C
 *               m x n of shape ival) = the row-major tile at buf2[a + r*b
 *               + c] (buf2 global or shared, the fragment's dtype); an A
 *               or B tile of 16-bit elements from shared memory has a
 *               and b multiples of 8 (16-byte rows, as PTX's ldmatrix
 *               reads them; misaligned is an error)
 *   KS_TMMA     buf = buf2 x buf3 + buf: C (m x n, f32) += A (m x k) x
 *               B (k x n); each element sum_k in k order, f32 products and
 *               sums (f16 and bf16 inputs are exact in f32)
 *   KS_TSTORE   buf[a + r*b + c] = fragment buf2 (role c)
 *   KS_WGMMA    warpgroup tile op (shapes with KTileInfo.wg: m 64, n N,
 *               k 16): the four subgroups 4q .. 4q+3 of the block run it
 *               together; subgroup 4q+i adds the product of rows 16i ..
 *               16i+15 of A (64 x 16) and B (16 x N) to its N/8 m16n8
 *               C fragments buf, buf+1, ..., buf+N/8-1 (consecutive
 *               buffers; fragment j holds columns 8j .. 8j+7), each
 *               element sum_k in k order as KS_TMMA.  A and B are in
 *               shared memory in the 128-byte swizzled layout of 16-bit
 *               elements, sw(e) = e ^ (((e >> 6) & 7) << 3) (rows of 64
 *               elements, 8-row groups; buffers start 1024-byte aligned):
 *               A(r, k) = buf2[sw(a + r*64 + k)], B(k, n) =
 *               buf3[sw(b + (n/64)*c + k*64 + n%64)] (B by 64-column
 *               groups c elements apart).  a % 8 == 0 and a - a % 64 a
 *               multiple of 512; b and c multiples of 512.  It is
 *               asynchronous: it completes at a KS_WGWAIT of its subgroup
 *               (hardware reads A and B at any time before that)
 *   KS_WGWAIT   the subgroup's wgmma statements issued since its previous
 *               KS_WGWAIT become one group; then all but the ival most
 *               recent groups complete (at most 7).  Until a wgmma
 *               completes, no other statement may touch its C fragments
 *               (a later wgmma may accumulate into them), A and B must
 *               not change, and the kernel must not end
 *
 * Fragments are buffers of space KS_FRAG: a whole tile, m*k, k*n or m*n
 * elements of the shape's dtype, that belongs to a subgroup (32 lanes);
 * only tile ops touch them, so a renderer keeps them in its own layout
 * (PTX mma.sync registers, a Vulkan cooperative matrix).  Tile operands
 * (indices, strides, fill value) must be the same in every lane.
 */
enum KShfl { KSH_IDX = 1, KSH_XOR, KSH_DOWN };
enum KAtomic { KAT_ADD = 1, KAT_MAX, KAT_MIN, KAT_CAS };
enum KTileRole { KTR_A = 1, KTR_B, KTR_C };
/* Tile shapes (KNode.ival of tile ops): m x n x k, the dtype of A and B;
 * C is f32.  Listed in a Target's mma shapes. */
enum KTileShape { KT_M16N8K16_F16 = 1, KT_M16N8K8_F32, KT_M16N8K16_BF16,
                  KT_WG64N64_F16, KT_WG64N128_F16, KT_WG64N256_F16,
                  KT_WG64N64_BF16, KT_WG64N128_BF16, KT_WG64N256_BF16, KT_COUNT_ };
typedef struct KTileInfo {
	const char *name;        /* "m16n8k16" */
	int m, n, k;
	int ab_dtype;            /* DT_F16, DT_BF16, DT_F32 */
	int wg;                  /* a warpgroup shape (KS_WGMMA only): its C
	                          * is n/8 fragments of shape `sub` a subgroup */
	int sub;                 /* wg: the m16n8 shape of those fragments */
} KTileInfo;
/* The shape's description, or NULL for a bad id. */
const KTileInfo *ktile_info(int shape);
/* Elements of a fragment of role r (KTileRole) of shape. */
int64_t ktile_elems(int shape, int role);
/* Whether statement kind `kind` is a subgroup collective (kops.def). */
int kgpu_collective(int kind);
/* The printed name of a statement kind of kops.def, or NULL. */
const char *kgpu_name(int kind);
#define KT_SUBGROUP 32       /* lanes that execute one tile op */
enum KAccess { KA_READ = 1, KA_WRITE = 2, KA_RW = 3 };

typedef struct KNode {
	int kind;        /* KNodeKind */
	int op;          /* KOp for KE_UN/KE_BIN, KSpecial for KE_SPECIAL */
	int dtype;       /* expressions: result type */
	int lanes;       /* expressions: 1, or vector width */
	KRef a, b, c;    /* operands; for KS_FOR a=lo b=hi */
	int var;         /* KE_VAR, KS_FOR, KS_SET */
	int buf;         /* KE_LOAD, KS_STORE, GPU statements */
	int buf2, buf3;  /* GPU statements: more buffers (see above) */
	int flags;       /* KS_FOR: KLoopFlag */
	KRef body;       /* KS_FOR, KS_IF: first statement of the block */
	KRef orelse;     /* KS_IF: else block */
	KRef next;       /* statements: next in block */
	int64_t ival;
	double fval;
} KNode;

typedef struct KBuf {
	int dtype;
	int64_t count;   /* elements (ignored when ext is set) */
	KRef ext;        /* 0, or the extent in elements when it is known at
	                  * run time only: an i64 expression over the kernel's
	                  * dim parameters and constants (KS_GLOBAL only) */
	int value;       /* graph value index for KS_GLOBAL, else -1 */
	int space;       /* KSpace */
	int access;      /* KAccess, accumulated over the kernel's uses */
	const char *name;/* for printing */
} KBuf;

typedef struct KVar {
	int dtype;
	const char *name;/* hint for printing ("i0", "acc") */
} KVar;

/*
 * A kernel's schedule: the decisions made for one target by
 * passes/schedule.c, which a renderer prints and does not make.
 *
 *   threads   loops whose iterations run on CPU threads (outermost loops
 *             only, so threads start once per kernel), each with the
 *             variables set and the KS_LOCAL buffers used inside it, which
 *             every thread needs its own copy of (ascending indices);
 *   fma       per node: 1 or 2 on an f32 store b[i] = b[i] + x*y that
 *             contracts to one fused multiply-add, with the product x*y
 *             being operand a (1) or b (2) of the stored addition.
 *
 * A kernel without a schedule (sched NULL: built by a test, or folded at
 * compile time) renders serially and with every store as written.  The
 * schedule lives in the program's arena.
 */
typedef struct KThreads {
	KRef loop;          /* the KS_FOR */
	int nvar, nbuf;
	const int *var;     /* private variables */
	const int *buf;     /* private local buffers */
} KThreads;

typedef struct KSched {
	const char *target; /* name of the Target it was made for */
	int nthreads;
	const KThreads *threads;
	const unsigned char *fma;   /* nfma entries: the kernel's nodes when the
	                             * schedule was made (nodes added later, by
	                             * legalisation, have no mark: ksched_fma) */
	int nfma;
	int index_bits;     /* 64, or 32: every i64 value of the kernel fits in
	                     * 32 bits (passes/index_width.c), and the target
	                     * computes them so */
} KSched;

/* The FMA mark of statement s of k (KSched.fma), 0 where it has none. */
static inline int
ksched_fma(const KSched *ks, KRef s)
{
	return ks && ks->fma && s > 0 && s < ks->nfma ? ks->fma[s] : 0;
}

/*
 * Schedules as data (ir/ksteps.c).  A kernel's schedule is also kept as a
 * short list of steps: every decision the lowering templates and the
 * scheduling passes made for it, as plain data with a canonical text form
 * (`--emit=kernels` prints it on the kernel's `schedule:` line,
 * `--emit=schedule` one `KERNEL: steps` line per kernel, `--schedule`
 * reads it back).  KSched above is what the passes derive from it for the
 * renderers; KSteps is what was chosen, so a compile given the steps of
 * another one (same model, same target) builds the same kernel, and an
 * autotuner searches and caches exactly these objects.
 *
 *   steps   = [step {' ' step}]
 *   step    = NAME ['(' INT {',' INT} ')']     INT: 0 .. 2^31-1
 *
 *   step            decision (who makes it)
 *   threads(L,...)  outermost loops L (0-based, in order, through ifs) run
 *   serial          on CPU threads / none do (schedule.c; cpu targets)
 *   fma | nofma     f32 accumulations contract to fused multiply-adds or
 *                   not (schedule.c; printed for kernels that have one)
 *   tile(MR,NR[,KC]) register tile of the blocked GEMM core (ops_linalg.c);
 *                   KC: k summed in chunks of KC (0: none; absent: the
 *                   target's tune.gemm_kc where K > 2 * it)
 *   axpy            MatMul without a register tile: each row of Y summed in
 *                   memory, k outer, a row of B times A[i,k] added over
 *                   the columns in vec(L) chunks (i-k-j); no choice by the
 *                   columns' count, for a run-time N (dynfit.c).  A GEMM
 *                   lowering without that form takes it as tile(1,1)
 *   dot(L)          partial sums of a float dot product
 *   unroll(N)       Conv's last kernel dim unrolled when at most N wide
 *   vec(L)          lanes of a contiguous innermost loop's chunk
 *   im2col | direct | implicit
 *                   2-D f32 Conv as im2col + GEMM, the direct loops, or an
 *                   implicit GEMM over padded phase planes (no im2col)
 *   grid(S,B,T)     gpu: top-level statement S (0-based, before mapping)
 *   rows(S,B,T[,RW]) as B blocks of T threads, one element per thread
 *                   (grid) or one row per block, its reductions split
 *                   over the threads (rows); with RW < T, RW threads a
 *                   row (at most a subgroup: lane exchanges, no
 *                   barrier) and T/RW rows a block (schedule_gpu.c)
 *   mma(BM,BN,BK    gpu MatMul/Gemm template: block tile BM x BN, K
 *   [,WM,WN,S])     slices of BK, WM x WN subgroups, S stages of shared
 *   wgmma(BM,BN,S)  memory (the large form of 16-bit inputs) / the
 *   nomma           warpgroup form (BM/64 warpgroups of m64nBNk16 tile
 *                   ops, K slices of 64, S stages) / the blocked lowering
 *   async | sync    gpu template: stage tiles by async copies or loads
 *   onchip|offchip  gpu row reductions: a row that more than one of the
 *   | inreg         row's loops reads is kept in shared memory, read from
 *                   global memory once, or each loop reads it again, or
 *                   each thread keeps its own elements of it in registers
 *                   (schedule_gpu.c)
 *   poly | libm     the kernel's f32 transcendentals (exp, tanh, ...) as
 *                   legalize.c's polynomials, so that the loops holding
 *                   them vectorize, or the target's own (KCaps.libm)
 *                   where it has one; asked for by lowerings whose
 *                   element loops are mostly those (ops_rnn.c's cells)
 *   plane | lines   MaxPool's window maxes a plane at a time (a local
 *                   plane of tune.pool_plane floats at most) or an output
 *                   row at a time (a local row); printed where the plane
 *                   form can be built (--max-stack falls back to lines)
 *
 * Each step has a slot (the decision it answers); a kernel's steps hold
 * at most one per slot (grid and rows: one per statement S).  The
 * canonical text lists them in the order of the table above (grid/rows by
 * S) and print -> parse -> print is the identity.
 */
#define KSTEP_MAXARG 8
#define KSTEPS_MAX 48
#define KSTEP_TABLE(X) \
	/* id       name       slot args: min max */ \
	X(THREADS, "threads", 0, 1, KSTEP_MAXARG) \
	X(SERIAL,  "serial",  0, 0, 0) \
	X(FMA,     "fma",     1, 0, 0) \
	X(NOFMA,   "nofma",   1, 0, 0) \
	X(TILE,    "tile",    2, 2, 3) \
	X(AXPY,    "axpy",    2, 0, 0) \
	X(DOT,     "dot",     3, 1, 1) \
	X(UNROLL,  "unroll",  4, 1, 1) \
	X(VEC,     "vec",     5, 1, 1) \
	X(IM2COL,  "im2col",  6, 0, 0) \
	X(DIRECT,  "direct",  6, 0, 0) \
	X(IMPLICIT, "implicit", 6, 0, 0) \
	X(GRID,    "grid",    7, 3, 3) \
	X(ROWS,    "rows",    7, 3, 4) \
	X(MMA,     "mma",     8, 3, 6) \
	X(WGMMA,   "wgmma",   8, 3, 3) \
	X(NOMMA,   "nomma",   8, 0, 0) \
	X(ASYNC,   "async",   9, 0, 0) \
	X(SYNC,    "sync",    9, 0, 0) \
	X(ONCHIP,  "onchip",  10, 0, 0) \
	X(OFFCHIP, "offchip", 10, 0, 0) \
	X(INREG,   "inreg",   10, 0, 0) \
	X(POLY,    "poly",    11, 0, 0) \
	X(LIBM,    "libm",    11, 0, 0) \
	X(PLANE,   "plane",   12, 0, 0) \
	X(LINES,   "lines",   12, 0, 0)

enum KStepKind {
	KST_NONE_ = 0,
#define X(id, name, slot, mn, mx) KST_##id,
	KSTEP_TABLE(X)
#undef X
	KST_COUNT_
};

typedef struct KStep {
	int kind;                 /* KStepKind */
	int narg;
	int arg[KSTEP_MAXARG];
} KStep;

/* Plain data: copy it, compare it with kstep_same, no pointers inside. */
typedef struct KSteps {
	int n;
	KStep step[KSTEPS_MAX];   /* in canonical order */
} KSteps;

/* A step of kind with narg (<= 3) arguments a0, a1, a2. */
KStep kstep_make(int kind, int narg, int a0, int a1, int a2);
/* A step kind's printed name and slot; -1 / NULL for a bad kind. */
const char *kstep_name(int kind);
int kstep_slot(int kind);
/* Whether a and b are the same step (kind and arguments). */
int kstep_same(const KStep *a, const KStep *b);
/* Put st into s at its canonical place, replacing the step of its slot
 * (and statement, for grid/rows).  0 when s is full or st malformed. */
int ksteps_put(KSteps *s, const KStep *st);
/* Remove the steps of s in the slot of kind `kind` (s may be NULL). */
void ksteps_drop(KSteps *s, int kind);
/* The step of s answering the slot of kind `kind` (for grid and rows: of
 * statement key), or NULL. */
const KStep *ksteps_find(const KSteps *s, int kind, int key);
/* The canonical text into out (always NUL-terminated, truncated to cap);
 * returns the length it needs. */
size_t ksteps_format(const KSteps *s, char *out, size_t cap);
/* Parse text[0..len) (no NUL needed).  On error returns BURN_ERR_PARSE
 * with the 1-based column of the fault in *col and what was expected in
 * msg (cap bytes); *out is then unspecified. */
int ksteps_parse(const char *text, size_t len, KSteps *out, int *col,
                 char *msg, size_t cap);

/* A schedule asked for (--schedule): the steps of the kernel named
 * `kernel`; steps it does not give are chosen by the defaults. */
typedef struct KWant {
	const char *kernel;
	KSteps steps;
} KWant;

/* Parse schedules asked for, appending to *want (*nwant of them, grown in
 * arena a; start with NULL and 0, or with an array of exactly *nwant that
 * kwant_parse grew).  eq == 0: text is a file of lines `KERNEL: steps`
 * ('#' starts a comment, blank lines are skipped), as --emit=schedule
 * prints; eq == 1: text is one `KERNEL=steps`.  A kernel given twice is
 * an error.  Errors are BURN_ERR_PARSE "WHERE:LINE:COL: kernel K: what
 * was expected" (eq: "WHERE: column COL: ..."). */
int kwant_parse(Ctx *c, Arena *a, const char *where, const char *text, size_t len,
                int eq, KWant **want, int *nwant);
/* Every kernel's steps, one line `KERNEL: steps` each (what kwant_parse
 * reads; --emit=schedule). */
struct KProgram;
void kprog_print_schedule(FILE *f, const struct KProgram *p);

/*
 * Dimension parameters.  A kernel compiled for sizes known only at run
 * time takes them as arguments: variables 0 .. ndim-1 are i64 dim
 * parameters, set by the caller before the body runs (in argument order,
 * after the buffers) and never set or looped over by the body.  Loop
 * bounds, indices and buffer extents (KBuf.ext) are expressions over them.
 * Their hints are the dims' names.  ndim == 0 for static kernels.
 */
/*
 * A call kernel has no body: it is one call of a routine of the string
 * runtime (runtime/strings.inc), which defines what it computes.  The
 * string ops lower to them (passes/ops_str.c), since kernel IR has no
 * string values: their buffers are of dtype DT_STRING (arrays of pointers)
 * and the string heap's int64s.  The routine's parameters are the buffers
 * buf[0..nbuf-1] (kernel buffer indices, all KS_GLOBAL; one may repeat),
 * then the integers arg[0..narg-1].  The C renderer prints the call and the
 * interpreter makes it; every other renderer refuses the kernel
 * (kir_check_legal), naming its ops.
 */
enum KCallFn { KCALL_EQUAL = 1, KCALL_CONCAT, KCALL_NORMALIZE, KCALL_LOOKUP,
               KCALL_REGEX, KCALL_COUNT_ };
typedef struct KCall {
	int fn;             /* KCallFn */
	int nbuf, narg;
	int buf[6];
	int64_t arg[4];
} KCall;
/* The routine's name in strings.inc ("bs_equal"), NULL if fn is none. */
const char *kcall_name(int fn);

typedef struct KKernel {
	const char *name;   /* unique within the program, a C identifier */
	const KCall *call;  /* a call kernel (above), or NULL */
	const char *ops;    /* the graph ops it implements, for --emit=kernels */
	int guard, guard_neg;  /* the guard its graph nodes share (graph.h:
	                        * Node.guard), 0: none; the plan binds it */
	const char *grid;   /* gpu: the block/thread mapping applied (printable) */
	int nbuf, nvar, nnode;
	int capbuf, capvar, capnode;
	KBuf *buf;
	KVar *var;
	KNode *node;        /* node[0] unused so KRef 0 is "none" */
	KRef body;          /* first statement */
	const KSched *sched;/* for the target compiled for, or NULL */
	KStep *step;        /* the decisions made for it: nstep steps in
	                     * canonical order (a KSteps' steps, allocated to
	                     * fit in the program's arena; kkernel_steps) */
	int nstep;
	int ndim;           /* dim parameters: variables 0 .. ndim-1 */
} KKernel;

typedef struct KProgram {
	Arena *arena;       /* borrowed: all kernels live in it */
	int nkernel, capkernel;
	KKernel **kernel;
	/* Storage aliases: graph value v (< nalias) lives in the memory of value
	 * alias[v] (a reshape needs no copy).  Values without an entry are their
	 * own storage; see kprog_storage. */
	int *alias;
	int nalias;
	/* Where in that memory: value v (< nalias) starts alias_off[v] bytes
	 * into alias[v]'s (a Concat's inputs placed in its output, see
	 * `inplace`); NULL: every alias at byte 0. */
	int64_t *alias_off;
	/* Lowerings may place a value inside another one's memory, at an
	 * offset (lower_concat: each input where the output holds it, so the
	 * producers write the concatenation and no kernel copies it).  Set by
	 * the pipeline for a static compile; 0 (kprog_init) elsewhere:
	 * constant folding, the dynamic dims' rewrites. */
	int inplace;
	/* The kernels' names, a hash set (open addressing, capnames a power
	 * of two or 0), so that naming a kernel does not scan the others. */
	const char **names;
	int capnames;
	/* Schedules asked for by kernel name (borrowed; see KWant), which the
	 * lowerings and scheduling passes take instead of their defaults. */
	const KWant *want;
	int nwant;
	/* --dynamic-dim's batch (passes/dynamic.c), for the lowerings, or
	 * NULL: per graph value (borrowed, set around lowering), whether its
	 * axis 0 holds the items of dim `rows_dim`.  A lowering whose rows
	 * are the items may run them all at once (lower_gemm: the row count
	 * an expression over the dim, a kernel with the dim as its
	 * parameter), which dyn_peel then leaves unpeeled. */
	const unsigned char *rows_batched;
	const char *rows_dim;
} KProgram;

/* The value whose memory holds value v (follows alias chains). */
int kprog_storage(const KProgram *p, int v);
/* Where v starts in that memory, in bytes (the chain's alias_off summed). */
int64_t kprog_storage_off(const KProgram *p, int v);

/* ---- builder -------------------------------------------------------- *
 * The builder appends statements at an insertion point.  kb_for()/kb_if()
 * open a block that kb_end() closes; kb_else() switches an open if to its
 * else block.  Expression constructors fold constants and the identities
 * x+0, x*1, x*0 (integers), so index arithmetic stays readable.
 */
#define KB_MAX_DEPTH 32
typedef struct KB {
	KProgram *prog;
	KKernel *k;
	int depth;
	KRef open[KB_MAX_DEPTH];   /* the FOR/IF statement of each open block */
	int in_else[KB_MAX_DEPTH];
	KRef last[KB_MAX_DEPTH + 1];/* last statement in each open block */
} KB;

void kprog_init(KProgram *p, Arena *a);
/* Start a new kernel named name (made unique) in p; ops describes the graph
 * ops it implements.  The builder is valid until kb_finish. */
void kb_begin(KB *kb, KProgram *p, const char *name, const char *ops);
/* Close the kernel and append it to the program. */
KKernel *kb_finish(KB *kb);
/* Rebuild kernel k (already in p) in place: its body becomes empty and the
 * builder appends a new one; old statements are put back with kb_splice.
 * Finish with kb_end for every open block; not kb_finish. */
void kb_reopen(KB *kb, KProgram *p, KKernel *k);
/* Append the chain of statements starting at first (linked by next). */
void kb_splice(KB *kb, KRef first);

int kb_buf(KB *kb, int dtype, int64_t count, int value, int space, int access);
/* The buffer bound to graph value v (created on first use). */
int kb_buf_value(KB *kb, int v, int dtype, int64_t count, int access);
int kb_var(KB *kb, int dtype, const char *name);
/* A dim parameter named name (an i64 variable); before any other
 * variable.  Returns its variable index, or -1 if variables exist. */
int kb_dim(KB *kb, const char *name);

KRef kb_const_i(KB *kb, int dtype, int64_t v);
KRef kb_const_f(KB *kb, int dtype, double v);
KRef kb_idx(KB *kb, int64_t v);            /* i64 constant */
KRef kb_get(KB *kb, int var);
KRef kb_load(KB *kb, int buf, KRef idx);
/* guard ? buf[idx] : dflt, reading memory only where guard holds. */
KRef kb_load_guard(KB *kb, int buf, KRef idx, KRef guard, KRef dflt);
/* Expression e with every unguarded load under it guarded by guard (and
 * 0 where it does not hold): for the arm of a select that may index out
 * of bounds when not taken, as padding does, since selects are eager. */
KRef kb_guard_loads(KB *kb, KRef guard, KRef e);
KRef kb_un(KB *kb, int op, KRef a);
KRef kb_bin(KB *kb, int op, KRef a, KRef b);
KRef kb_select(KB *kb, KRef c, KRef a, KRef b);
/* a * b + c rounded once (KE_FMA); a, b, c floats of one dtype. */
KRef kb_fma(KB *kb, KRef a, KRef b, KRef c);
KRef kb_cast(KB *kb, int dtype, KRef a);
KRef kb_special(KB *kb, int which);
/* A cast to a float8 type with rounding `how` (KCastRound bits, kept in
 * the KE_CAST's op; kb_cast is how 0, ONNX Cast's defaults):
 * KC_NOSAT: out of range gives inf or NaN per format, not the largest
 * finite value; float8e8m0 only: KC_DOWN rounds toward zero, KC_NEAREST
 * to nearest (ties up), neither away from zero (round_mode "up"). */
enum KCastRound { KC_NOSAT = 1, KC_DOWN = 2, KC_NEAREST = 4,
                  KC_RAW = 8 /* float->int: operand in range (legalised) */ };
KRef kb_cast_f8(KB *kb, int dtype, KRef a, int how);

/* Open `for (var = lo; var < hi; var++)`; returns the loop variable. */
int kb_for(KB *kb, const char *name, KRef lo, KRef hi, int flags);
void kb_if(KB *kb, KRef cond);
void kb_else(KB *kb);
void kb_end(KB *kb);
void kb_store(KB *kb, int buf, KRef idx, KRef val);
void kb_set(KB *kb, int var, KRef val);
void kb_barrier(KB *kb);
/* GPU statements (see "GPU statements" above); var -1: no result. */
void kb_vcopy(KB *kb, int dst, KRef di, int src, KRef si, int lanes);
void kb_cpasync(KB *kb, int dst, KRef di, int src, KRef si, int lanes);
void kb_cpwait(KB *kb);
void kb_cpwait_n(KB *kb, int n);   /* all but the n most recent groups */
void kb_wgwait(KB *kb, int n);     /* KS_WGWAIT: all but the n most recent */
void kb_atomic(KB *kb, int var, int op, int buf, KRef idx, KRef x, KRef y);
void kb_shfl(KB *kb, int var, int mode, KRef x, KRef lane, int width);
void kb_sgred(KB *kb, int var, int op, KRef x, int width);
void kb_tfill(KB *kb, int shape, int frag, KRef x);
void kb_tload(KB *kb, int shape, int role, int frag, int src, KRef idx, KRef stride);
/* Append a copy of *n to finished kernel k's node pool (growing it in
 * arena a), or an i64 node (kind, op, operands x and y, var, ival v):
 * its index, 0 when out of memory.  For passes that rewrite a lowered
 * kernel (passes/dynamic.c, passes/dynfit.c). */
KRef kir_push(Arena *a, KKernel *k, const KNode *n);
KRef kir_push_i64(Arena *a, KKernel *k, int kind, int op, KRef x, KRef y, int var, int64_t v);
/* After nodes 1 .. n0-1 of k were copied to map[i] (0: not copied): the
 * copies' statement links (next, body, orelse) to the copies. */
void kir_relink(KKernel *k, const KRef *map, int n0);
void kb_tmma(KB *kb, int shape, int c, int a, int b);
/* KS_WGMMA: fragments c .. c+n/8-1 += A (shared a at ai) x B (shared b at
 * bi, 64-column groups bstride apart) */
void kb_wgmma(KB *kb, int shape, int c, int a, KRef ai, int b, KRef bi, KRef bstride);
void kb_tstore(KB *kb, int shape, int dst, KRef idx, KRef stride, int frag);

/* The extent of buffer b of k in elements: its count, or its ext
 * evaluated with dim parameter i = dims[i] (dims may be NULL when k has
 * none).  BURN_ERR_INVALID for a negative extent, a division by zero or
 * int64 overflow. */
int kbuf_extent(Ctx *c, const KKernel *k, int b, const int64_t *dims, int64_t *out);

/* Expression dtype, and whether it is an integer constant (value in *v). */
int kb_dtype(const KKernel *k, KRef e);
int kb_is_const_i(const KKernel *k, KRef e, int64_t *v);

/* ---- printing, interpreting, checking --------------------------------- */

const char *kop_name(int op);
/* The dtype a unary or binary op yields for operands of dtype dt. */
int kop_result_dtype(int op, int dt);
/* Whether name may name a new kernel of p: a C identifier of at most 127
 * characters, not reserved (C keywords, libm names, the renderers' bN/tN
 * names) and not taken by a kernel of p. */
int kprog_name_ok(const KProgram *p, const char *name);
/* Record the name of a kernel about to be appended to p (its index will
 * be p->nkernel) by other means than kb_finish (the parser). */
void kprog_name_add(KProgram *p, const char *name);
/* The name kb_begin would give a kernel asked to be named name, now, into
 * out (cap >= 128). */
void kprog_next_name(const KProgram *p, const char *name, char *out, size_t cap);
/* The schedule p->want asks for the kernel named name, or NULL. */
const KSteps *kprog_want(const KProgram *p, const char *name);
/* A kernel's steps (KKernel.step): as a KSteps; the one answering the
 * slot of kind (grid/rows: of statement key), or NULL; st put in (as
 * ksteps_put; the array is reallocated in p's arena, 0 when out of
 * memory or full); the slot of kind removed; all replaced by s. */
void kkernel_steps(const KKernel *k, KSteps *out);
const KStep *kkernel_step(const KKernel *k, int kind, int key);
int kprog_step_put(KProgram *p, KKernel *k, const KStep *st);
void kkernel_step_drop(KKernel *k, int kind);
int kprog_set_steps(KProgram *p, KKernel *k, const KSteps *s);
/* Bytes of k's KS_LOCAL arrays: what a CPU rendering keeps on the stack
 * besides the compiler's own frame (a GEMM's register tile, partial sums;
 * one copy per thread where a loop runs on threads). */
int64_t kkernel_local_bytes(const KKernel *k);

/* The text form (kir_text.c; the grammar is written above the parser).
 * kir_print prints one kernel; kprog_print the program: its storage
 * aliases, then every kernel with its index (what --emit=kernels shows).
 * kprog_parse reads that text back and appends its kernels (and aliases)
 * to p, each one verified; print -> parse -> print gives the same text.
 * Errors are BURN_ERR_PARSE "FILE:LINE:COL: message" followed by the
 * source line and a caret under the fault (FILE is c->file, or "<text>"),
 * BURN_ERR_LIMIT for sizes beyond c->limits.  On error p keeps the kernels
 * parsed before the faulty one.  text need not be NUL-terminated. */
void kir_print(FILE *f, const KKernel *k);
void kprog_print(FILE *f, const KProgram *p);
int kprog_parse(Ctx *c, KProgram *p, const char *text, size_t len);
/* Check the kernel: refs in range, types consistent, every buffer index of a
 * store/load in bounds when it is a constant.  Returns status. */
/* Does k store into a packed buffer (int4 ...: dtype_is_packed)?  Such a
 * store rewrites a byte it shares with its neighbours (passes/legalize.c),
 * so schedules run the kernel on one thread. */
int kir_stores_packed(const KKernel *k);
int kir_verify(Ctx *c, const KKernel *k);
/* Check that k is ready for a renderer: kir_verify, then what
 * legalisation (passes/legalize.c) must have removed for a target with
 * `caps` (storage-dtype values, loads and stores not as their bits, float8
 * and unsaturated float->int casts, ops caps lacks) and, unless simt, what
 * only a GPU renderer prints (hardware indices, thread-mapped loops, GPU
 * statements); vector lanes are not printed by any renderer yet.  Every
 * renderer calls it first; `who` ("render_c") starts its messages. */
int kir_check_legal(Ctx *c, const KKernel *k, const char *who,
                    const KCaps *caps, int simt);
/* Check expression e alone, given that seen[x] marks the nodes already
 * checked (seen has k->nnode entries; e is marked on success), so a parser
 * can check each node as it makes it.  Returns status. */
int kir_verify_expr(Ctx *c, const KKernel *k, unsigned char *seen, KRef e);
/* Run k on the CPU.  bufs[i] points at buffer i's elements (KS_GLOBAL
 * buffers must be given; local ones are allocated by the interpreter).
 * Out-of-bounds accesses are checked and reported as BURN_ERR_INTERNAL. */
int kir_interp(Ctx *c, const KKernel *k, void *const *bufs);
/* kir_interp with a budget: *steps is the number of statements it may
 * still execute (each loop iteration counts one) and is decreased by those
 * executed.  When it runs out the result is BURN_ERR_LIMIT and no error is
 * recorded in c: running out of budget is the caller's decision to take. */
int kir_interp_budget(Ctx *c, const KKernel *k, void *const *bufs, int64_t *steps);
/* Either of the above for a kernel with dim parameters: dims[i] is the
 * value of parameter i (k->ndim of them, each >= 0); the extents of
 * buffers with an ext are evaluated from them before the body runs.
 * steps may be NULL. */
int kir_interp_dims(Ctx *c, const KKernel *k, void *const *bufs,
                    const int64_t *dims, int64_t *steps);

/* ---- running a whole program (kir_run.c) ------------------------------ *
 * The kernels of p run in order by the interpreter over the values of g
 * (struct Graph, ir/graph.h): a buffer bound to value v uses the memory of
 * kprog_storage(p, v).  The caller puts each graph input's elements in
 * mem[v] after kir_run_init; everything else is found (constants) or
 * allocated (owned[v]) by kir_run_program, and freed by kir_run_free.
 * Read a result with kir_run_value. */
struct Graph;
typedef struct KRun {
	int n;                  /* g->nval */
	void **mem;             /* per value: its elements, or NULL */
	unsigned char *owned;   /* mem[v] allocated by kir_run_program */
} KRun;
int kir_run_init(Ctx *c, KRun *r, const struct Graph *g);
int kir_run_program(Ctx *c, KRun *r, const struct Graph *g, const KProgram *p);
void *kir_run_value(const KRun *r, const KProgram *p, int v);
void kir_run_free(KRun *r);

#endif

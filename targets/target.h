/*
 * target.h - what a compilation knows about the machine it compiles for.
 *
 * A Target is plain data: the capabilities of a kind of device (vector
 * width, fused multiply-add, threads, GPU block and grid limits, shared
 * memory, subgroup width, matrix-tile shape, index width) and the tuning
 * constants the lowerings and the scheduler read (GEMM register tile,
 * unroll counts, the work a loop needs before it is worth threads).
 *
 * Who reads it: target_step turns it into the default schedule steps
 * (tile shapes, lanes, unroll counts, im2col, FMA) that lowering
 * (passes/ops_*.c through Lower.target) and scheduling (passes/schedule.c)
 * take unless --schedule says otherwise; scheduling decides threads from
 * the capabilities and `tune`; renderers (codegen/) read nothing here:
 * they print the schedule.
 *
 * The descriptions are const data with static storage (targets/cpu.c,
 * targets/gpu.c); pointers to them never dangle and may be shared by
 * threads.  A NULL `const Target *` anywhere means target_default().
 */
#ifndef BURN_TARGET_H
#define BURN_TARGET_H

#include <stdint.h>
#include "../ir/kir.h"

/* Tuning constants: choices that are right for one machine and wrong for
 * another.  Lowerings read them instead of defining their own. */
typedef struct TargetTune {
	int gemm_mr, gemm_nr;    /* register tile of the blocked GEMM core:
	                          * rows x columns of output per tile */
	int gemm_nr_max;         /* fewer rows than gemm_mr: wider tiles of as
	                          * many accumulators, at most this wide... */
	int gemm_nr_step;        /* ...and a multiple of this */
	int gemm_mc;             /* rows of A a panel of B is read for while
	                          * it is in cache (the CPU form of the
	                          * blocked GEMM; 0: one row of tiles) */
	int gemm_kc;             /* a GEMM with K > 2 * this sums k in chunks
	                          * of this many, each chunk's panel of B
	                          * read by the block's tiles from L1 (their
	                          * sums kept in a local array between
	                          * chunks; 0: never); tile(MR,NR,KC) sets it
	                          * per kernel */
	int pool_plane;          /* a MaxPool whose rows' maxes over an input
	                          * plane take at most this many floats
	                          * runs plane by plane (lower_maxpool_rows;
	                          * 0: row by row) */
	int gemm_pack_tiles;     /* a pointwise Conv of at most this many
	                          * tiles of rows (M <= this * gemm_mr) copies
	                          * only X's last, partial panel, and its
	                          * tiles read the full ones from X itself */
	int64_t conv_tr_plane;   /* a pointwise Conv on a plane of at most
	                          * this many positions ... */
	int64_t conv_tr_k;       /* ... with at least this many input
	                          * channels runs transposed, Y^T = X^T W^T */
	int64_t conv_tr_m;       /* ... where it has at most this many output
	                          * channels (0: any) */
	int64_t conv_short_k;    /* an implicit Conv by output rows whose sum
	                          * has at most this many terms ... */
	int64_t conv_short_out;  /* ... and whose output (an image's) has at
	                          * least this many bytes takes tiles of half
	                          * gemm_mr rows and twice gemm_nr columns
	                          * (conv_short_k 0: never) */
	int dot_lanes;           /* partial sums of a float dot product (the C
	                          * compiler vectorizes across them) */
	int conv_unroll;         /* unroll Conv's last kernel dim up to this */
	int vec_lanes;           /* chunk of a contiguous innermost loop
	                          * (Conv's output row) the C compiler unrolls
	                          * and vectorizes ... */
	int vec_lanes_narrow;    /* ... for rows narrower than vec_wide_row,
	                          * and MatMul/Gemm's row form */
	int vec_wide_row;
	int size_free;           /* no lowering chooses by a size: chunk
	                          * counts of vec(L) loops computed at run
	                          * time from the loop's length, even where
	                          * it is a constant (dynfit.c samples with
	                          * this, so the constant becomes the dims'
	                          * expression) */
	int im2col;              /* f32 2-D Conv as im2col + GEMM (1), an
	                          * implicit GEMM (2: no im2col matrix, the
	                          * CPU form of the GEMM) or direct (0) */
	int64_t thread_min_work; /* a loop nest is split across threads only if
	                          * it runs at least this many innermost
	                          * iterations (waking threads costs ~µs) */
	int thread_slots;        /* a batch loop whose scratch (im2col's
	                          * columns) is reused image by image runs as
	                          * this many slices, each with its own scratch,
	                          * so the slices can go to threads (0 or 1:
	                          * one slice, serial; only where threads != 0) */
	int block_threads;       /* GPU: threads per block of a mapped nest */
	int64_t grid_blocks;     /* GPU: at most this many blocks; larger nests
	                          * loop over the grid (grid-stride) */
	int row_regs;            /* GPU: elements of a row a thread may keep in
	                          * registers (the inreg step); 0: never */
	int row_lanes;           /* GPU: rows of at most 16 times this many
	                          * elements get this many threads each (a
	                          * subgroup or less), several rows a block;
	                          * 0: a block a row */
	int recip_div;           /* a row divided by one value (Softmax) is
	                          * multiplied by its reciprocal instead */
	int64_t sum_f64_min;     /* a float sum (ReduceSum, Mean, SumSquare,
	                          * L1, LogSumExp; fused or not) of at least
	                          * this many elements a result accumulates in
	                          * f64 and rounds once (0: never): a
	                          * sequential f32 sum's error grows with the
	                          * count (docs/NUMERICS.md) */
	int wg_bm, wg_bn, wg_stages;  /* GPU: the warpgroup MatMul form
	                          * (wgmma(BM,BN,S), passes/ops_linalg.c) is
	                          * the default for 16-bit products it fits;
	                          * 0: mma.sync's form unless asked for */
} TargetTune;

/* The CPU targets' tune.sum_f64_min.  On a CPU a reduction is one
 * sequential chain of adds, whose latency an f64 add matches (the
 * conversion is off the chain), so the wide sum costs nothing measurable;
 * the GPU targets split long rows over a block's threads (a tree of
 * partial sums) and keep f32. */
#define TARGET_SUM_F64_MIN 4096

/* The tuning constants of the avx512 CPU description (targets/cpu.c),
 * the default of the cpu (C) and llvm descriptions: both print the same
 * lowerings.
 *  - gemm 8 rows x 32 floats = 8 x 2 AVX-512 registers of accumulators,
 *    with room for the B row and the broadcast A value in 32 registers
 *    (with AVX2's 16 it spills: the avx2 description takes 6 x 16);
 *  - 65536 inner iterations before a loop goes to threads: well above the
 *    few microseconds a fork/join costs;
 *  - 8 scratch slices of a batch loop: even shares for 1, 2, 4 or 8
 *    threads, 8 images' scratch at most (a 64-image CNN batch: 8 x 140
 *    KB of im2col columns). */
#define TARGET_TUNE_HOST_CPU { \
	.gemm_mr = 8, .gemm_nr = 32, \
	.gemm_nr_max = 128, .gemm_nr_step = 16, \
	.gemm_mc = 64, .gemm_kc = 128, .gemm_pack_tiles = 4, \
	.pool_plane = 2048, \
	.conv_tr_plane = 1024, .conv_tr_k = 256, .conv_tr_m = 512, \
	.conv_short_k = 32, .conv_short_out = 1 << 20, \
	.dot_lanes = 8, \
	.conv_unroll = 8, \
	.vec_lanes = 8, .vec_lanes_narrow = 4, .vec_wide_row = 64, \
	.im2col = 2, \
	.thread_min_work = 65536, \
	.thread_slots = 8, \
	.sum_f64_min = TARGET_SUM_F64_MIN, \
}

/*
 * A CPU description (burncc --cpu NAME): the vector width and tuning a
 * CPU target (cpu, cpu-freestanding, llvm) takes for one kind of x86-64
 * or other CPU, and the C compiler flags its generated C is tuned for.
 * The rows are const data in targets/cpu.c (target_cpus); the kernels
 * they give are correct C on any machine, only their speed differs.
 */
typedef struct TargetCpu {
	const char *name;        /* "avx512", "avx2", "generic" */
	const char *about;       /* one line, for burncc --help */
	const char *cflags;      /* what to build the generated C with, beside
	                          * -O2/-O3 ("" for none): it sets the vector
	                          * ISA the tiles were sized for */
	const char *cprelude;    /* printed into the generated C before its
	                          * kernels (NULL: nothing): what the C
	                          * compiler must be told beside the flags,
	                          * guarded so that any flags still build */
	int vector_bytes;        /* SIMD register width */
	TargetTune tune;
} TargetCpu;

typedef struct Target {
	const char *name;        /* "cpu", "gpu" */
	const char *about;       /* one line, for burncc --help */

	/* capabilities */
	int vector_bytes;        /* SIMD register width (cpu: the CPU
	                          * description's, 64 for avx512) */
	int fma;                 /* fused multiply-add is fast: f32
	                          * accumulations may be contracted */
	int threads;             /* CPU threads one kernel may use: 0 none
	                          * (no CPU threading), -1 as many as the
	                          * runtime gives (OpenMP, OMP_NUM_THREADS) */
	int max_block_threads;   /* GPU: threads in one block; 0 on CPU */
	int max_block_dim[3];    /* GPU: block extent per axis x, y, z */
	int64_t max_grid_dim[3]; /* GPU: blocks per axis x, y, z */
	int64_t shared_bytes;    /* GPU: shared memory per block */
	int64_t shared_optin;    /* GPU: the most a block may ask for beyond
	                          * shared_bytes (CUDA's opt-in dynamic shared
	                          * memory), 0 if none; only templates that
	                          * need it use it */
	int subgroup;            /* GPU: lanes of a warp/subgroup; 1 on CPU */
	int mma_m, mma_n, mma_k; /* matrix-tile (tensor core) shape, 0 if none */
	unsigned mma_tiles;      /* bit s set: the kernel IR's tile shape s
	                          * (enum KTileShape, ir/kir.h) is available */
	int dyn_items;           /* GPU: a leading dim known only at run time
	                          * (--dynamic-dim, peeled: passes/dynamic.c)
	                          * runs its items as grid y, the count taken
	                          * at launch; 0: such dims are refused */
	int dyn_grids;           /* GPU: a launch evaluates any grid extent
	                          * over the dims (a sampled program's,
	                          * passes/dynfit.c and schedule_gpu's
	                          * map_dims); 0: sampled programs refused */
	int index_bits;          /* width of buffer indices (64; 32 where a
	                          * target proves its buffers small) */
	int str_calls;           /* runs the string ops' call kernels
	                          * (ir/kir.h, runtime/strings.inc): the C
	                          * targets of 64-bit machines; the others
	                          * refuse string ops (passes/ops_str.c) */

	TargetTune tune;
	const TargetCpu *cpu;    /* the CPU description vector_bytes and tune
	                          * come from (--cpu); NULL: not a CPU target
	                          * --cpu applies to (gpu, wasm, ...) */
	/* kernel-IR ops the target implements natively (passes/legalize.c
	 * expands the others); all clear for C: both the C and the
	 * interpreter that folds constants run the expansions */
	KCaps ops;
} Target;

/*
 * The target's default schedule (KSteps, ir/kir.h): the step a template
 * or scheduling pass takes for the slot of `kind` when --schedule does not
 * say, from the capabilities and tuning above (fma/nofma, tile, dot,
 * unroll, vec, im2col/direct).  extent: for vec, the length of the row
 * it chunks (rows shorter than tune.vec_wide_row, and 0, the row form of
 * MatMul/Gemm, take the narrow lanes).  A kind without a target default
 * (threads, grid: the passes derive them from the kernel) gives kind
 * KST_NONE_.  target_steps: all of them, as one schedule (burncc --help).
 */
KStep target_step(const Target *t, int kind, int64_t extent);
void target_steps(const Target *t, KSteps *out);

/* The built-in descriptions (targets/cpu.c, targets/gpu.c). */
extern const Target target_cpu;
extern const Target target_gpu;
extern const Target target_cuda;   /* targets/cuda/cuda.c */
extern const Target target_llvm;   /* targets/llvm.c: cpu, libm clear */
extern const Target target_vulkan; /* targets/vulkan.c */
extern const Target target_cpu_free; /* targets/cpu.c: cpu, no libc/libm */
extern const Target target_wasm;   /* targets/wasm.c: wasm32 + SIMD128 */

/* The description compilations use when given none: target_cpu. */
const Target *target_default(void);
/* t, or target_default() when t is NULL. */
const Target *target_or_default(const Target *t);
/* A built-in description by name ("cpu", "gpu", "cuda", "llvm",
 * "vulkan", "cpu-freestanding", "wasm"), or NULL. */
const Target *target_find(const char *name);

/* The CPU descriptions (--cpu), the default (avx512) first, ended by a
 * row whose name is NULL. */
extern const TargetCpu target_cpus[];
/* A CPU description by name, or NULL; "native" is the one this machine
 * (the one burncc runs on) can run: avx512 where it has AVX-512F, avx2
 * where it has AVX2 and FMA, generic elsewhere (target_cpu_native). */
const TargetCpu *target_cpu_find(const char *name);
const TargetCpu *target_cpu_native(void);
/* *out = *base with cpu's vector width and tuning, for --cpu: base must
 * be a CPU target (base->cpu set; returns -1 and leaves out alone if
 * not), 0 on success.  The copy is the caller's and must outlive every
 * compilation given it (CompileOpts.target, Compiled.target). */
int target_with_cpu(const Target *base, const TargetCpu *cpu, Target *out);

#endif

/*
 * cpu.c - the CPU descriptions (--cpu avx512|avx2|generic|native) and the
 * CPU targets that take them: the C target (cpu) and freestanding C.
 *
 * The default description, avx512, holds the numbers the C lowerings were
 * tuned with (x86-64 with AVX-512 and FMA, GCC/Clang at -O2/-O3); they were
 * constants inside the lowerings and the C renderer before targets existed,
 * and the generated C for it is byte-for-byte what those constants
 * produced.  The others size the same kernels for fewer or narrower vector
 * registers: the C is the same portable C99, and the C compiler's flags
 * (TargetCpu.cflags) decide which instructions it becomes.
 */
#include <string.h>
#include "target.h"

/* The CPU descriptions, default first.  What differs is what the vector
 * registers hold:
 *  - avx512: 32 registers of 16 floats: the host tuning (target.h);
 *  - avx2: 16 registers of 8 floats: a 6 x 16 GEMM tile is 12 registers
 *    of accumulators plus 2 of B and one broadcast A value (the avx512
 *    8 x 32 tile, 32 registers of accumulators, spills: SqueezeNet's
 *    kernels 9.39 ms with it, 8.61 ms with 6 x 16, docs/BENCHMARKS.md);
 *    B's last panel still padded to 16 floats, not 8: GCC 12 vectorizes
 *    loops 8 wide badly (SqueezeNet 15% slower with 8);
 *  - generic: registers of 4 floats (x86-64's SSE2 baseline has 16,
 *    arm64's NEON 32): a 4 x 16 tile of 16 accumulators, as on wasm
 *    (targets/wasm.c), 4-float partial sums and chunks.  Not 4 x 8,
 *    which would leave SSE2 room for B: GCC 12 vectorizes tiles 8 wide
 *    badly (SqueezeNet 2.3x slower at -O3 than with 4 x 16, 10x with
 *    -march=native; docs/BENCHMARKS.md).
 * The flags are GCC's and Clang's x86-64 levels (GCC 11, Clang 12 and
 * later): v4 has AVX-512F/BW/DQ/VL, v3 AVX2, FMA and BMI2 (Haswell).
 *
 * avx512's C also asks GCC for 512-bit vectors (cprelude): GCC's tuning
 * for -march=x86-64-v4 and for the Intel AVX-512 CPUs (skylake-avx512 to
 * sapphirerapids: -march=native there) prefers 256-bit vectors, and
 * then the 8 x 32 tile's 16 accumulators are 32 ymm registers, spilled
 * at every k: SqueezeNet 8.7 ms instead of 5.8 on a Sapphire Rapids
 * (docs/BENCHMARKS.md, "512-bit vectors").  AMD's znver4/5 tunings
 * prefer 512 already.  Clang ignores the pragma (its
 * -mprefer-vector-width=512 does it). */
#define AVX512_PRELUDE \
	"/* the tiles are sized for 512-bit vectors (burncc --cpu avx512); GCC's\n" \
	" * generic and Intel tunings prefer 256 (-mprefer-vector-width=512) */\n" \
	"#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX512F__)\n" \
	"#pragma GCC target(\"prefer-vector-width=512\")\n" \
	"#endif\n"

const TargetCpu target_cpus[] = {
	{ .name = "avx512",
	  .about = "x86-64 with AVX-512 (32 vector registers of 16 floats)",
	  .cflags = "-march=x86-64-v4",
	  .cprelude = AVX512_PRELUDE,
	  .vector_bytes = 64,
	  .tune = TARGET_TUNE_HOST_CPU },
	{ .name = "avx2",
	  .about = "x86-64 with AVX2 and FMA (16 vector registers of 8 floats)",
	  .cflags = "-march=x86-64-v3",
	  .vector_bytes = 32,
	  .tune = {
		.gemm_mr = 6, .gemm_nr = 16,
		.gemm_nr_max = 96, .gemm_nr_step = 16,
		.gemm_mc = 60, .gemm_pack_tiles = 4, .pool_plane = 2048,
		.conv_tr_plane = 1024, .conv_tr_k = 256,
		.dot_lanes = 8,
		.conv_unroll = 8,
		.vec_lanes = 8, .vec_lanes_narrow = 4, .vec_wide_row = 64,
		.im2col = 2,
		.thread_min_work = 65536,
		.thread_slots = 8,
		.sum_f64_min = TARGET_SUM_F64_MIN,
	  } },
	{ .name = "generic",
	  .about = "any CPU: small tiles and 4-float vectors (SSE2, NEON)",
	  .cflags = "",
	  .vector_bytes = 16,
	  .tune = {
		.gemm_mr = 4, .gemm_nr = 16,
		.gemm_nr_max = 64, .gemm_nr_step = 16,
		.gemm_mc = 64, .gemm_pack_tiles = 4, .pool_plane = 2048,
		.conv_tr_plane = 1024, .conv_tr_k = 256,
		.dot_lanes = 4,
		.conv_unroll = 8,
		.vec_lanes = 4, .vec_lanes_narrow = 4, .vec_wide_row = 64,
		.im2col = 2,
		.thread_min_work = 65536,
		.thread_slots = 8,
		.sum_f64_min = TARGET_SUM_F64_MIN,
	  } },
	{ .name = NULL },
};

/* What the hosted and the freestanding CPU share: the default CPU
 * description's vectors and tuning, FMA, subgroup of one, 64-bit
 * indices. */
#define CPU_COMMON \
	.vector_bytes = 64, \
	.fma = 1,             /* contraction renders as BURN_FMA, which is \
	                       * fmaf only where FP_FAST_FMAF says it is fast */ \
	.subgroup = 1, \
	.index_bits = 64, \
	.str_calls = 1, \
	.tune = TARGET_TUNE_HOST_CPU, \
	.cpu = &target_cpus[0]

const Target target_cpu = {
	.name = "cpu",
	.about = "a host CPU through C99 (+ OpenMP when built with -fopenmp)",
	CPU_COMMON,
	.threads = -1,           /* OpenMP decides (OMP_NUM_THREADS) */
	/* C's libm for the transcendentals; the rest is expanded once, in
	 * kernel IR (passes/legalize.c) */
	.ops = { .libm = 1, .libm_f64 = 1 },
};

/* The same CPU for freestanding C (burncc --freestanding): no C library,
 * so no libm either.  With both libm flags clear the seam's legalisation
 * (passes/legalize.c) expands the transcendentals, pow and fmod (f32 and
 * f64) into kernel IR, the same
 * expansions the llvm, cuda and vulkan targets use, and with no_fma_f64
 * the f64 fmas those use become an exact emulation; the C renderer's
 * freestanding prelude has its own sqrt, floor, ceil, round, fabs and f32
 * fma (codegen/c/render_c.c) and would refuse anything left.  No
 * threads: no OpenMP on a bare machine.
 * The tuning is the cpu target's (and --cpu's), so the kernels are
 * those of the cpu target. */
const Target target_cpu_free = {
	.name = "cpu-freestanding",
	.about = "any CPU through freestanding C99: no libc, no libm",
	CPU_COMMON,
	.threads = 0,
	.ops = { .libm = 0, .libm_f64 = 0, .no_fma_f64 = 1 },
};

const Target *target_default(void)
{
	return &target_cpu;
}

const Target *target_or_default(const Target *t)
{
	return t ? t : &target_cpu;
}

const Target *target_find(const char *name)
{
	static const Target *const all[] = { &target_cpu, &target_gpu, &target_cuda,
	                                       &target_llvm, &target_vulkan,
	                                       &target_cpu_free, &target_wasm };

	for (size_t i = 0; name && i < sizeof all / sizeof *all; i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

const TargetCpu *target_cpu_native(void)
{
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		return &target_cpus[0];
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return &target_cpus[1];
#endif
	return &target_cpus[2];
}

const TargetCpu *target_cpu_find(const char *name)
{
	if (name && !strcmp(name, "native"))
		return target_cpu_native();
	for (const TargetCpu *d = target_cpus; name && d->name; d++)
		if (!strcmp(d->name, name))
			return d;
	return NULL;
}

int target_with_cpu(const Target *base, const TargetCpu *cpu, Target *out)
{
	if (!base || !base->cpu || !cpu)
		return -1;
	*out = *base;
	out->vector_bytes = cpu->vector_bytes;
	out->tune = cpu->tune;
	out->cpu = cpu;
	return 0;
}

KStep target_step(const Target *t, int kind, int64_t extent)
{
	const TargetTune *u;

	t = target_or_default(t);
	u = &t->tune;
	switch (kind) {
	case KST_FMA:
	case KST_NOFMA:
		return kstep_make(t->fma ? KST_FMA : KST_NOFMA, 0, 0, 0, 0);
	case KST_TILE:
		return kstep_make(KST_TILE, 2, u->gemm_mr, u->gemm_nr, 0);
	case KST_DOT:
		return kstep_make(KST_DOT, 1, u->dot_lanes, 0, 0);
	case KST_UNROLL:
		return kstep_make(KST_UNROLL, 1, u->conv_unroll, 0, 0);
	case KST_VEC:
		return kstep_make(KST_VEC, 1, extent >= u->vec_wide_row ? u->vec_lanes
		                                                        : u->vec_lanes_narrow, 0, 0);
	case KST_POLY:
	case KST_LIBM:   /* for the kernels that ask: their loops vectorize */
		return kstep_make(KST_POLY, 0, 0, 0, 0);
	case KST_PLANE:
	case KST_LINES:
		return kstep_make(u->pool_plane > 0 ? KST_PLANE : KST_LINES, 0, 0, 0, 0);
	case KST_IM2COL:
	case KST_DIRECT:
	case KST_IMPLICIT:
		return kstep_make(u->im2col == 2 ? KST_IMPLICIT : u->im2col ? KST_IM2COL
		                                                     : KST_DIRECT, 0, 0, 0, 0);
	}
	return kstep_make(KST_NONE_, 0, 0, 0, 0);
}

void target_steps(const Target *t, KSteps *out)
{
	static const int kinds[] = { KST_FMA, KST_TILE, KST_DOT, KST_UNROLL, KST_IM2COL };

	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
		KStep st = target_step(t, kinds[i], 0);
		ksteps_put(out, &st);
	}
	{   /* vec: the wide rows' lanes */
		KStep st = target_step(t, KST_VEC, INT64_MAX);
		ksteps_put(out, &st);
	}
}

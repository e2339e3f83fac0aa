/*
 * cpu.c - the CPU description: what the C target compiles for.
 *
 * The numbers are those the C lowerings were tuned with (x86-64 with AVX2
 * and FMA, GCC/Clang at -O2/-O3); they were constants inside the lowerings
 * and the C renderer before targets existed, and the generated C for this
 * description is byte-for-byte what those constants produced.
 */
#include <string.h>
#include "target.h"

/* What the hosted and the freestanding CPU share: the host's vectors,
 * FMA, subgroup of one, 64-bit indices and tuning. */
#define CPU_COMMON \
	.vector_bytes = 32, \
	.fma = 1,             /* contraction renders as BURN_FMA, which is \
	                       * fmaf only where FP_FAST_FMAF says it is fast */ \
	.subgroup = 1, \
	.index_bits = 64, \
	.str_calls = 1, \
	.tune = TARGET_TUNE_HOST_CPU

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
 * f64; not yet the f64 inverse functions) into kernel IR, the same
 * expansions the llvm, cuda and vulkan targets use, and with no_fma_f64
 * the f64 fmas those use become an exact emulation; the C renderer's
 * freestanding prelude has its own sqrt, floor, ceil, round, fabs and f32
 * fma (codegen/c/render_c.c) and refuses what is left (the f64 inverse
 * functions).  No threads: no OpenMP on a bare machine.
 * The tuning is the host's: the lowerings do not change, so the kernels
 * are those of the cpu target. */
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

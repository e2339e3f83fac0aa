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

const Target target_cpu = {
	.name = "cpu",
	.about = "a host CPU through C99 (+ OpenMP when built with -fopenmp)",
	.vector_bytes = 32,
	.fma = 1,                /* contraction renders as BURN_FMA, which is
	                          * fmaf only where FP_FAST_FMAF says it is fast */
	.threads = -1,           /* OpenMP decides (OMP_NUM_THREADS) */
	.subgroup = 1,
	.index_bits = 64,
	.tune = {
		/* 8 rows x 32 floats = 8 x 4 AVX registers of accumulators, with
		 * room for the B row and the broadcast A value in 16 registers */
		.gemm_mr = 8, .gemm_nr = 32,
		.gemm_nr_max = 128, .gemm_nr_step = 16,
		.dot_lanes = 8,
		.conv_unroll = 8,
		.vec_lanes = 8, .vec_lanes_narrow = 4, .vec_wide_row = 64,
		.im2col = 1,
		/* 65536 inner iterations: well above the few microseconds an
		 * OpenMP fork/join costs */
		.thread_min_work = 65536,
	},
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
	static const Target *const all[] = { &target_cpu, &target_gpu };

	for (size_t i = 0; name && i < sizeof all / sizeof *all; i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

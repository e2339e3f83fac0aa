/*
 * vulkan.c - the vulkan target description: any Vulkan 1.2 device with
 * compute shaders (lavapipe on the CPU in CI), as data.
 *
 * The limits are what Vulkan guarantees every device, so one compiled
 * program runs anywhere: 16 KiB of shared memory per workgroup (the
 * spec's minimum maxComputeSharedMemorySize), 256 invocations per
 * workgroup, 65535 workgroups per dispatch.  Subgroups are left out
 * (subgroup 0): their size differs per device (lavapipe 8, NVIDIA 32,
 * AMD 64) and the schedule's sgreduce assumes one width, so block
 * reductions go through shared memory and barriers.  No matrix tiles yet
 * (cooperative matrices come later), so MatMul takes the blocked
 * lowering mapped onto blocks and threads.
 *
 * KCaps: what the GLSL renderer prints natively.  Everything else is
 * legalised into kernel IR (passes/legalize.c), in particular the f32
 * transcendentals: GLSL's exp and log carry only 3 ulp + 2 |x| ulp of
 * precision in Vulkan, so libm stays clear and they come as polynomials,
 * as for cuda.
 */
#include "target.h"

const Target target_vulkan = {
	.name = "vulkan",
	.about = "Vulkan compute (GLSL 450 -> SPIR-V through glslang; lavapipe in CI)",
	.vector_bytes = 16,
	.fma = 1,
	.threads = 0,
	.max_block_threads = 256,
	.max_block_dim = { 256, 256, 64 },
	.max_grid_dim = { 65535, 65535, 65535 },
	.shared_bytes = 16 * 1024,
	.subgroup = 0,
	.dyn_items = 1,          /* a peeled dim's items: workgroups along y,
	                          * the count pushed at dispatch
	                          * (codegen/vulkan/target_vulkan.c) */
	.index_bits = 64,
	/* KCaps otherwise clear; exp in its plain form: the fused
	 * multiply-add form measured up to 15 ulps off on lavapipe at
	 * |x| ~ 40-60 (the sweep's vulkan variants, docs/NUMERICS.md) */
	.ops = { .exp_plain = 1, .sel_f32 = 1 },
	.tune = {
		/* one output element a thread (tile 1x1: M*N threads, each
		 * looping over K, a fused epilogue applied per element):
		 * register tiles of 16x16 gave a few threads hundreds of
		 * thousands of loop iterations each, and lavapipe's back end
		 * ends an invocation after 65535 (Mesa gallivm's loop limiter):
		 * the MLP, LeNet and BERT came out wrong */
		.gemm_mr = 1, .gemm_nr = 1,
		.gemm_nr_max = 128, .gemm_nr_step = 16,
		.dot_lanes = 32,
		.conv_unroll = 8,
		.vec_lanes = 8, .vec_lanes_narrow = 4, .vec_wide_row = 64,
		.im2col = 0,
		.thread_min_work = 0,
		.block_threads = 256,
		.grid_blocks = 1024,
		.recip_div = 1,
	},
};

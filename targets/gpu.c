/*
 * gpu.c - a generic GPU description, as data only.
 *
 * No GPU renderer or device file exists yet (they come with the CUDA and
 * Vulkan issues): this description lets lowering and scheduling be written
 * against GPU limits, and `burncc --target gpu --emit=kernels` shows what
 * lowering does with its tuning.  The limits are the common floor of
 * current NVIDIA parts (compute capability 7.0 and later): 1024 threads per
 * block, 48 KiB of static shared memory per block, warps of 32, and the
 * 16x8x16 half-precision MMA tile (mma.sync m16n8k16).
 */
#include "target.h"
#include "ir/kir.h"

const Target target_gpu = {
	.name = "gpu",
	.about = "a generic CUDA-class GPU (no renderer yet: its schedules run in the interpreter)",
	.vector_bytes = 16,      /* one 128-bit load per thread */
	.fma = 1,
	.threads = 0,            /* parallelism is blocks x threads, not OpenMP */
	.max_block_threads = 1024,
	.max_block_dim = { 1024, 1024, 64 },
	.max_grid_dim = { 2147483647, 65535, 65535 },
	.shared_bytes = 48 * 1024,
	.shared_optin = 227 * 1024,   /* as the cuda target: the large MatMul */
	.subgroup = 32,
	.mma_m = 16, .mma_n = 8, .mma_k = 16,
	/* the kernel IR's tile shapes (ir/kir.h): m16n8k16 f16 (mma.sync,
	 * cooperative matrices) and m16n8k8 f32, and the cuda target's
	 * warpgroup shapes (wgmma), so that the interpreter checks the
	 * wgmma(...) form */
	.mma_tiles = 1u << KT_M16N8K16_F16 | 1u << KT_M16N8K16_BF16 | 1u << KT_M16N8K8_F32 |
	             1u << KT_WG64N64_F16 | 1u << KT_WG64N128_F16 | 1u << KT_WG64N256_F16 |
	             1u << KT_WG64N64_BF16 | 1u << KT_WG64N128_BF16 | 1u << KT_WG64N256_BF16,
	.dyn_items = 1,          /* the interpreter launches any grid */
	.dyn_grids = 1,
	.index_bits = 32,        /* where a kernel's i64 values provably fit
	                          * (passes/index_width.c); else 64 */
	.tune = {
		/* as the cuda target: one thread per output element for
		 * MatMul/Gemm outside the mma template and for Conv */
		.gemm_mr = 1, .gemm_nr = 1,
		.gemm_nr_max = 128, .gemm_nr_step = 16,
		.dot_lanes = 32,     /* a warp's lanes */
		.conv_unroll = 8,
		.vec_lanes = 8, .vec_lanes_narrow = 4, .vec_wide_row = 64,
		.im2col = 0,
		.thread_min_work = 0,
		/* 256 threads a block; 64 blocks keep the interpreter's runs of
		 * the conformance suite short (a device target will want a few
		 * blocks per multiprocessor) */
		.block_threads = 256,
		.grid_blocks = 64,
		.row_regs = 32,          /* as the cuda target */
		.row_lanes = 32,
		.recip_div = 1,
	},
};

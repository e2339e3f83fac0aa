/*
 * cuda.c - the cuda target description: NVIDIA GPUs of compute
 * capability 9.0 (H100, H200), as data.  The generic gpu description
 * (targets/gpu.c) with what the PTX renderer (codegen/ptx) adds:
 * f16/bf16 conversions (cvt), isnan/isinf (testp), and more blocks per
 * grid (a device has ~132 multiprocessors; the interpreter-bound gpu
 * target keeps 64).  Static shared memory stays 48 KiB per block (more
 * needs dynamic shared memory and an opt-in attribute).
 */
#include "../target.h"

const Target target_cuda = {
	.name = "cuda",
	.about = "NVIDIA GPUs, sm_90 (PTX 7.8; valid for sm_80)",
	.vector_bytes = 16,
	.fma = 1,
	.threads = 0,
	.max_block_threads = 1024,
	.max_block_dim = { 1024, 1024, 64 },
	.max_grid_dim = { 2147483647, 65535, 65535 },
	.shared_bytes = 48 * 1024,
	.shared_optin = 227 * 1024,   /* sm_80 163 KB, sm_90 227 KB; the
	                               * templates that use it stay within
	                               * sm_80's */
	.subgroup = 32,
	.mma_m = 16, .mma_n = 8, .mma_k = 16,
	/* m16n8k16 f16 and bf16: mma.sync; m16n8k8 f32: full f32 products
	 * (no TF32) */
	.mma_tiles = 1u << KT_M16N8K16_F16 | 1u << KT_M16N8K16_BF16 | 1u << KT_M16N8K8_F32 |
	             /* sm_90a wgmma (a kernel using them makes its module PTX 8.0
	              * for sm_90a) */
	             1u << KT_WG64N64_F16 | 1u << KT_WG64N128_F16 | 1u << KT_WG64N256_F16 |
	             1u << KT_WG64N64_BF16 | 1u << KT_WG64N128_BF16 | 1u << KT_WG64N256_BF16,
	.dyn_items = 1,          /* a peeled dim's items: blocks along y, the
	                          * count from the launch list at launch
	                          * (codegen/ptx/target_cuda.c; in process,
	                          * not -o yet) */
	.index_bits = 32,
	.tune = {
		/* MatMul/Gemm outside the mma template (a fused epilogue, other
		 * dtypes) and Conv: one thread per output element (tile 1x1, the
		 * epilogue applied per element; the direct Conv loops), so the
		 * whole output is one mapped nest.  16x16 register tiles and
		 * im2col left a few threads (or one: im2col's batch loop is not
		 * mappable) with all the work: H200, bert_tiny 195 ms, lenet
		 * 25.6 ms (docs/BENCHMARKS.md) */
		.gemm_mr = 1, .gemm_nr = 1,
		.gemm_nr_max = 128, .gemm_nr_step = 16,
		.dot_lanes = 32,
		.conv_unroll = 8,
		.vec_lanes = 8, .vec_lanes_narrow = 4, .vec_wide_row = 64,
		.im2col = 0,
		.thread_min_work = 0,
		.block_threads = 256,
		.grid_blocks = 2048,     /* ~16 blocks per multiprocessor */
		.row_regs = 32,          /* ptxas keeps them in registers */
		.row_lanes = 32,         /* a subgroup a short row (softmax over
		                          * attention's 512-wide rows) */
		.recip_div = 1,          /* div.rn.f32 is ~10 instructions */
		/* wgmma(128,256,4) the default where it fits: H100, bf16
		 * 8192^3 + GELU 2.21 ms against mma.sync's 4.06 (cuBLAS
		 * 1.38), BERT-base's four products 0.45 against 0.53 ms
		 * (docs/BENCHMARKS.md, "wgmma on the GPU") */
		.wg_bm = 128, .wg_bn = 256, .wg_stages = 4,
	},
	.ops = {
		.isnan = 1, .isinf = 1,  /* testp */
		.f16 = 1, .bf16 = 1,     /* cvt.f32.f16, cvt.rn.f16.f32, bf16 */
		.sel_f32 = 1,            /* selp (kir.h: the mask form crashed
		                          * driver 580's JIT) */
		/* libm, libm_f64 clear: no math library in PTX, so exp, log
		 * and friends (f32) and exp, log, pow (f64) arrive as kernel IR */
	},
};

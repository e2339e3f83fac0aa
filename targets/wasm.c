/*
 * wasm.c - the wasm target description: WebAssembly (wasm32 with SIMD128)
 * through freestanding C, for the browser (burncc --target wasm).
 *
 * The module is the freestanding C of the c-freestanding target
 * (targets/cpu.c: no libc, no libm, so passes/legalize.c expands every
 * transcendental into kernel IR) built by clang --target=wasm32 -msimd128;
 * its exports and the JavaScript loader are in codegen/wasm/ and
 * targets/wasm/.  What differs from the host CPU is the machine:
 *  - 128-bit vectors (SIMD128: 4 floats) and, in the engines that run it
 *    (V8, SpiderMonkey on x86-64 and arm64), 16 vector registers, so the
 *    GEMM register tile is 4 rows x 16 floats = 16 accumulators, where
 *    the host's 8 x 32 (64 v128 values) would spill;
 *  - no fused multiply-add in core WebAssembly (fmaf would be a library
 *    call there), so accumulations are not contracted;
 *  - one thread: threads need SharedArrayBuffer and cross-origin
 *    isolation, which a page may not have.
 */
#include "target.h"

const Target target_wasm = {
	.name = "wasm",
	.about = "WebAssembly (wasm32 + SIMD128) through freestanding C",
	.vector_bytes = 16,
	.fma = 0,
	.threads = 0,
	.subgroup = 1,
	.index_bits = 64,
	.ops = { .libm = 0, .libm_f64 = 0, .no_fma_f64 = 1 },
	.tune = {
		.gemm_mr = 4, .gemm_nr = 16,
		.gemm_nr_max = 64, .gemm_nr_step = 8,
		.dot_lanes = 4,
		.conv_unroll = 8,
		.vec_lanes = 4, .vec_lanes_narrow = 4, .vec_wide_row = 64,
		.im2col = 1,
		.thread_min_work = 65536,
		.sum_f64_min = TARGET_SUM_F64_MIN,
	},
};

/*
 * llvm.c - the description the llvm target compiles for (codegen/llvm/):
 * the host CPU through LLVM's loop and SLP vectorisers.
 *
 * It is the cpu description (targets/cpu.c: the same lowering, tiles,
 * tuning and schedule) with one difference that matters: no math library
 * (KCaps.libm clear).  LLVM does not vectorise a call to expf or sinf,
 * so a pointwise kernel with a transcendental in it would run one element
 * at a time; with libm clear the seam's legalisation (passes/legalize.c)
 * expands every f32 transcendental and pow into kernel-IR arithmetic,
 * which the loop vectoriser takes like any other (their errors:
 * docs/NUMERICS.md, "Transcendentals without a libm").  f64 ones stay
 * libm calls (libm_f64), resolved by the JIT from the process.
 *
 * The host's own vector width and FMA reach LLVM from the JIT's detection
 * of the host (CPU name and features, as -march=native); vector_bytes,
 * fma and the tuning here are the cpu description's, the avx512 CPU
 * description unless --cpu picks another (targets/cpu.c; nothing in
 * lowering or scheduling reads vector_bytes).  --cpu changes the tiles
 * only: the JIT still compiles for the CPU it runs on.  Threads
 * are the runtime's (runtime/parallel.c, burn_threads: $BURN_THREADS).
 */
#include "target.h"

const Target target_llvm = {
	.name = "llvm",
	.about = "a host CPU through LLVM (in-process JIT; transcendentals as "
	         "polynomials)",
	.vector_bytes = 64,
	.fma = 1,                /* llvm.fmuladd: fused where the CPU has FMA */
	.threads = -1,           /* burn_threads(): $BURN_THREADS, the CPUs */
	.subgroup = 1,
	.index_bits = 64,
	.ops = {
		.libm = 0,           /* f32: polynomials, which LLVM vectorises */
		.libm_f64 = 1,       /* f64: calls to libm */
	},
	.tune = TARGET_TUNE_HOST_CPU,
	.cpu = &target_cpus[0],
};

/*
 * index_width.h - may a kernel compute its indices in 32 bits?
 *
 * The kernel IR's indices are i64.  A GPU computes 32-bit integers at
 * twice the rate of 64-bit ones and keeps them in one register, so a
 * target with Target.index_bits == 32 narrows each kernel whose every i64
 * value provably stays in [-2^31, 2^31): an interval analysis over the
 * kernel's loops and assignments (constant loop bounds and buffer
 * extents bound it; an i64 loaded from memory or a value that grows with
 * each iteration proves nothing, and the kernel keeps 64-bit indices).
 * The decision is KSched.index_bits; the interpreter and renderers apply
 * it (the interpreter wraps every i64 result to 32 bits, as 32-bit
 * hardware would), so a wrong decision shows as a wrong result.
 */
#ifndef BURN_INDEX_WIDTH_H
#define BURN_INDEX_WIDTH_H

#include "../ir/kir.h"

/* The range [*lo, *hi] that every i64 value of k stays in; 0 when no
 * bound is proved (or the analysis ran out of memory). */
int kir_index_range(const KKernel *k, int64_t *lo, int64_t *hi);

/* Set KSched.index_bits of every scheduled kernel of p: bits (32) where
 * its i64 values stay within [-limit, limit), else 64.  limit is 2^31 for
 * a sound result; a test passes a larger one to seed the bug of
 * narrowing too far. */
int pass_index_width(Ctx *c, KProgram *p, int bits, int64_t limit);

#endif

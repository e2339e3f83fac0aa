/*
 * render_c.h - kernel IR -> C99.
 *
 * Each kernel becomes one `static void NAME(params)` function whose
 * parameters are its KS_GLOBAL buffers in buffer-index order:
 * `const T *restrict bN` for KA_READ buffers, `T *restrict bN` otherwise
 * (so two buffers of one kernel must not alias unless both are read-only).
 * Element types are the dtype's C type; bool is uint8_t holding 0/1; f16 and
 * bf16 are uint16_t bit patterns converted on load and store.
 *
 * The generated C compiles warning-free under -std=c99 -Wall -Wextra, uses
 * no writable static data (kernels are reentrant) and keeps loops plain so
 * that the C compiler can vectorize them.  KS_LOCAL buffers are stack arrays.
 *
 * The renderer decides nothing about the machine: the kernel's schedule
 * (k->sched, passes/schedule.c) says which loops get an OpenMP pragma and
 * with which private variables and buffers, and which stores print as
 * BURN_FMA; without a schedule the kernel renders serially, as written.
 */
#ifndef BURN_RENDER_C_H
#define BURN_RENDER_C_H

#include <stdio.h>
#include "../../ir/kir.h"

/* Helpers every rendered kernel relies on: #includes (math.h, stdint.h,
 * string.h), f16/bf16 <-> f32 conversions and small integer helpers, all
 * `static inline` so that unused ones give no warning.  Emit once per
 * translation unit, before any kernel.  Their names start with burn_. */
void render_c_prelude(FILE *f);
/* The same for freestanding C (burncc --freestanding): stddef.h and
 * stdint.h only, and burncc's own sqrt, floor, ceil, round, fabs, fma,
 * float ==/!= and a byte copy in place of libc's and libm's. */
void render_c_prelude_free(FILE *f);

/* Render k.  Returns status: BURN_ERR_UNSUPPORTED for vector lanes,
 * KS_SHARED buffers, KE_SPECIAL and thread/block-mapped loops;
 * BURN_ERR_INTERNAL for a malformed kernel. */
int render_c_kernel(Ctx *c, const KKernel *k, FILE *f);
/* Render k as freestanding C: no name from libc or libm; the kernel must
 * be legalised with no libm (target_cpu_free).  BURN_ERR_UNSUPPORTED also
 * for an op that has no definition without libm yet (sin, cos, tan,
 * asin, acos, atan, fmod, f32 pow, and on f64 erf and the hyperbolics). */
int render_c_kernel_free(Ctx *c, const KKernel *k, FILE *f);

#endif

/*
 * render_llvm.h - kernel IR -> LLVM IR, through the LLVM-C API (LLVM 19).
 *
 * Each kernel becomes two functions of an LLVM module:
 *
 *   SYM.k   internal, always inlined: one `ptr noalias` parameter per
 *           KS_GLOBAL buffer in buffer-index order (so two buffers of one
 *           kernel must not alias unless both are read-only, as with the C
 *           target's restrict), then one i64 per dim parameter;
 *   SYM     external, `void SYM(ptr bufs, ptr dims)`: bufs[i] is buffer
 *           i's elements (indexed by buffer, entries of local buffers
 *           unused), dims[i] dim parameter i; it calls SYM.k.  A JIT calls
 *           every kernel through this one C signature.
 *
 * Element types in memory: the dtype's integer or float type, bool as i8
 * holding 0/1, f16/bf16/float8 buffers as their bit patterns (the loads
 * and stores are legalised, kir.h).  In expressions bool is i1.
 *
 * The renderer decides nothing: loops, ifs, guarded loads and the
 * schedule's FMA contractions and threaded loops (outlined, run through
 * runtime/parallel.h's burn_parallel_for, which the module declares) are
 * printed as they are.  Integer arithmetic carries no
 * nsw/nuw flags (it wraps, as the interpreter's); see render_llvm.c for
 * how each construct maps.
 */
#ifndef BURN_RENDER_LLVM_H
#define BURN_RENDER_LLVM_H

#include <stdio.h>
#include <llvm-c/Core.h>
#include "../../ir/kir.h"

/* Add kernel k to module m (of context m's) as SYM.k and SYM.  Returns
 * status: BURN_ERR_UNSUPPORTED for what the cpu target never schedules
 * (vector lanes, shared or fragment buffers, hardware indices, GPU
 * statements, thread-mapped loops), BURN_ERR_INTERNAL for a malformed or
 * unlegalised kernel.  On error m may hold a partial function: discard
 * the module. */
int llvm_add_kernel(Ctx *c, const KKernel *k, LLVMModuleRef m, const char *sym);

/* Print k as a verified LLVM IR module (before optimisation), its
 * functions named after the kernel.  Returns status. */
int render_llvm_kernel(Ctx *c, const KKernel *k, FILE *f);

/* Verify m; a failure is BURN_ERR_INTERNAL with LLVM's message. */
int llvm_verify(Ctx *c, LLVMModuleRef m);

#endif

/*
 * jit.h - kernels compiled to machine code in process (ORC LLJIT), for the
 * llvm target's run and for callers that run kernels themselves.
 *
 * llvm_jit_compile renders every kernel of p (render_llvm.c) into one
 * module, verifies it, optimises it for the host CPU (LLVM's O2 pipeline
 * with the loop and SLP vectorisers, the host's CPU name and features)
 * and compiles it.  llvm_jit_call runs kernel k: bufs[i] is buffer i's
 * elements (KS_GLOBAL buffers; entries of local ones are unused), dims[i]
 * the value of dim parameter i (NULL when the kernel has none).  The
 * caller answers for the bindings: sizes as the kernel's buffers say,
 * no aliasing between buffers one of which is written.  A compiled
 * program does not refer to p; one may be called from several threads.
 * llvm_jit_free releases the code and everything LLVM holds for it.
 */
#ifndef BURN_LLVM_JIT_H
#define BURN_LLVM_JIT_H

#include "../../ir/kir.h"

typedef struct LlvmJit LlvmJit;

int llvm_jit_compile(Ctx *c, const KProgram *p, LlvmJit **out);
int llvm_jit_call(Ctx *c, const LlvmJit *j, int k, void *const *bufs,
                  const int64_t *dims);
void llvm_jit_free(LlvmJit *j);

#endif

/*
 * jit.h - kernels compiled to machine code in process (ORC LLJIT), for the
 * llvm target's run and for callers that run kernels themselves.
 *
 * llvm_jit_compile renders every kernel of p (render_llvm.c) into one
 * module, verifies it, optimises it for the host CPU (the host's CPU name
 * and features; LLVM's O2 with the loop and SLP vectorisers, or on request
 * a lean pipeline around the loop vectoriser: see jit.c), compiles it to an object
 * file and links that into an ORC LLJIT.  Any thread may compile and
 * free; the LLVM part of it runs one thread at a time (a lock in jit.c),
 * kernels run concurrently.
 * llvm_jit_call runs kernel k: bufs[i] is buffer i's elements (KS_GLOBAL
 * buffers; entries of local ones are unused), dims[i] the value of dim
 * parameter i (NULL when the kernel has none).  The
 * caller answers for the bindings: sizes as the kernel's buffers say,
 * no aliasing between buffers one of which is written.  A compiled
 * program does not refer to p; one may be called from several threads.
 * llvm_jit_free releases the code and everything LLVM holds for it.
 */
#ifndef BURN_LLVM_JIT_H
#define BURN_LLVM_JIT_H

#include "../../passes/passes.h"

typedef struct LlvmJit LlvmJit;

/*
 * llvm_jit_compile_opts: the same, with the disk cache of compiled
 * kernels (runtime/cache.h).  The program is compiled to an object file;
 * with a cache the object is kept there under a SHA-256 of everything
 * its code depends on (burncc's version and build, LLVM's version, the
 * pass pipeline, the host's triple, CPU name and features, the llvm
 * target description, the program's kernel-IR text and schedule), and a
 * later compilation of the same program, in any process, loads it
 * instead of compiling.  A cache that cannot be used, an entry that is
 * corrupt (deleted) or that LLVM refuses, or a store that fails, only
 * means compiling: `note` says why.  o may be NULL (no cache).
 */
enum { LLVM_PIPELINE_AUTO, LLVM_PIPELINE_LEAN, LLVM_PIPELINE_O2 };

typedef struct LlvmJitOpts {
	/* in */
	const char *cache_dir;   /* NULL: no disk cache.  "": the default
	                          * directory, $XDG_CACHE_HOME/burncc (else
	                          * ~/.cache/burncc); if it is unsafe or cannot
	                          * be made the cache is off, not an error.
	                          * A path: that directory (made 0700 when
	                          * missing); unsafe (a symlink, not ours,
	                          * group/world-writable) or impossible to make
	                          * is BURN_ERR_IO. */
	int64_t cache_max_bytes; /* entries kept at most; 0: 256 MiB */
	int pipeline;            /* LLVM_PIPELINE_*: 0 (AUTO) is O2 for now;
	                          * LEAN, the vectoriser alone (faster to
	                          * compile), only when asked: see jit.c */
	/* out, set by every call */
	int hit;                 /* the code came from the disk cache */
	int compiles;            /* 1: LLVM compiled the program; 0 on a hit */
	double compile_ms;       /* render + optimise + code generation */
	double load_ms;          /* linking the object into the JIT */
	char note[320];          /* why the cache was not used, an entry was
	                          * missed or not stored; "" when all went well */
} LlvmJitOpts;

int llvm_jit_compile(Ctx *c, const KProgram *p, LlvmJit **out);
int llvm_jit_compile_opts(Ctx *c, const KProgram *p, LlvmJitOpts *o,
                          LlvmJit **out);
int llvm_jit_call(Ctx *c, const LlvmJit *j, int k, void *const *bufs,
                  const int64_t *dims);
void llvm_jit_free(LlvmJit *j);
/* The program's LLVM module after the JIT's optimisation, as text
 * (*out malloc'd): what tests inspect. */
int llvm_jit_optimised_ir(Ctx *c, const KProgram *p, char **out);
/* Run compiled program m once with j = its program compiled
 * (llvm_jit_compile*(&m->prog)), bound as m's launch list says: inputs and
 * outputs in graph order, arena of m->plan.arena_bytes (NULL: allocated
 * for the call).  What the llvm backend's run does after compiling. */
int llvm_jit_run(Ctx *c, const LlvmJit *j, const Compiled *m,
                 const void *const *in, void *const *out, void *arena);
/* The same at run-time dims: dims[i] the value of m->plan.dims[i] (NULL
 * when m has none), the arena m->plan's evaluated at them (plan_arena_at;
 * NULL: allocated for the call). */
int llvm_jit_run_dims(Ctx *c, const LlvmJit *j, const Compiled *m,
                      const int64_t *dims, const void *const *in,
                      void *const *out, void *arena);

#endif

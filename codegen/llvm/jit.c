/*
 * jit.c - the llvm target: a compiled program as one LLVM module, made by
 * render_llvm.c, optimised for the host CPU and compiled in process by ORC
 * LLJIT, then run bound exactly as the launch list says (the twin of
 * passes/launch_run.c's plan_run_interp, with machine code for kernels).
 *
 * The description is the cpu target's (targets/cpu.c): the same lowering,
 * tuning, legalisation (every KCaps flag clear, so the kernels the renderer
 * sees are the C target's) and schedule.  The host CPU's own vector width
 * and FMA come to LLVM from the JIT's detection of the host (CPU name and
 * features), as -march=native does for the C target.
 *
 * Everything LLVM makes here is disposed before run returns (the module
 * by the JIT that owns it, the JIT, the target machine, messages), so the
 * sanitizer build's leak check holds.  LLVM reports errors as values; each
 * becomes a status with LLVM's message.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include "../../runtime/parallel.h"
#include "../target_iface.h"
#include "jit.h"
#include "render_llvm.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_failed;

static void
init(void)
{
	init_failed = LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter();
}

/* Turn (and consume) an LLVM error into a status. */
static int
llvm_err(Ctx *c, LLVMErrorRef e, const char *what)
{
	char *m = LLVMGetErrorMessage(e);
	int rc = burn_fail(c, BURN_ERR_INTERNAL, "llvm: %s: %s", what, m ? m : "?");

	LLVMDisposeErrorMessage(m);
	return rc;
}

/* A target machine for the host CPU (for the optimisation pipeline). */
static int
host_machine(Ctx *c, LLVMTargetMachineRef *out)
{
	char *triple = LLVMGetDefaultTargetTriple(), *err = NULL;
	char *cpu = LLVMGetHostCPUName(), *feat = LLVMGetHostCPUFeatures();
	LLVMTargetRef t;
	int rc = BURN_OK;

	*out = NULL;
	if (LLVMGetTargetFromTriple(triple, &t, &err))
		rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "llvm: no target for %s: %s",
		               triple, err ? err : "?");
	else if (!(*out = LLVMCreateTargetMachine(t, triple, cpu, feat,
	                                          LLVMCodeGenLevelDefault,
	                                          LLVMRelocDefault,
	                                          LLVMCodeModelJITDefault)))
		rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "llvm: no target machine for %s",
		               triple);
	LLVMDisposeMessage(err);
	LLVMDisposeMessage(triple);
	LLVMDisposeMessage(cpu);
	LLVMDisposeMessage(feat);
	return rc;
}

/* The program's kernels as one module of context cx, verified and
 * optimised: kernel i is the function burnk<i>. */
static int
make_module(Ctx *c, const KProgram *p, LLVMContextRef cx, LLVMModuleRef *out)
{
	LLVMModuleRef m = LLVMModuleCreateWithNameInContext("burncc", cx);
	LLVMTargetMachineRef tm = NULL;
	LLVMPassBuilderOptionsRef po;
	LLVMTargetDataRef dl;
	LLVMErrorRef e;
	char *triple;
	int rc;

	*out = NULL;
	if ((rc = host_machine(c, &tm)) != 0)
		goto fail;
	triple = LLVMGetTargetMachineTriple(tm);
	LLVMSetTarget(m, triple);
	LLVMDisposeMessage(triple);
	dl = LLVMCreateTargetDataLayout(tm);
	LLVMSetModuleDataLayout(m, dl);
	LLVMDisposeTargetData(dl);
	for (int i = 0; i < p->nkernel && !rc; i++) {
		char sym[32];
		snprintf(sym, sizeof sym, "burnk%d", i);
		rc = llvm_add_kernel(c, p->kernel[i], m, sym);
	}
	if (rc || (rc = llvm_verify(c, m)) != 0)
		goto fail;
	po = LLVMCreatePassBuilderOptions();
	LLVMPassBuilderOptionsSetLoopVectorization(po, 1);
	LLVMPassBuilderOptionsSetSLPVectorization(po, 1);
	LLVMPassBuilderOptionsSetLoopUnrolling(po, 1);
	e = LLVMRunPasses(m, "default<O2>", tm, po);
	LLVMDisposePassBuilderOptions(po);
	if (e) {
		rc = llvm_err(c, e, "optimising");
		goto fail;
	}
	LLVMDisposeTargetMachine(tm);
	*out = m;
	return BURN_OK;
fail:
	if (tm)
		LLVMDisposeTargetMachine(tm);
	LLVMDisposeModule(m);
	return rc;
}

typedef void (*KernelFn)(void *const *bufs, const int64_t *dims);

/* A JIT holding the program's machine code, and the kernels' entries. */
struct LlvmJit {
	LLVMOrcLLJITRef jit;
	int nkernel;
	KernelFn *fn;
};
typedef struct LlvmJit Jit;

static void
jit_free(Jit *j)
{
	if (j->jit)
		LLVMConsumeError(LLVMOrcDisposeLLJIT(j->jit));
	free(j->fn);
	memset(j, 0, sizeof *j);
}

static int
jit_program(Ctx *c, const KProgram *p, Jit *j)
{
	LLVMOrcThreadSafeContextRef tsc;
	LLVMOrcJITTargetMachineBuilderRef jtmb;
	LLVMOrcLLJITBuilderRef jb;
	LLVMOrcDefinitionGeneratorRef gen;
	LLVMOrcThreadSafeModuleRef tsm;
	LLVMModuleRef m;
	LLVMErrorRef e;
	int rc;

	memset(j, 0, sizeof *j);
	pthread_once(&init_once, init);
	if (init_failed)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "llvm: the host CPU has no "
		                 "LLVM target");
	if (!(j->fn = calloc((size_t)p->nkernel + 1, sizeof *j->fn)))
		return burn_fail(c, BURN_ERR_NOMEM, "llvm: out of memory");
	tsc = LLVMOrcCreateNewThreadSafeContext();
	if ((rc = make_module(c, p, LLVMOrcThreadSafeContextGetContext(tsc), &m)) != 0) {
		LLVMOrcDisposeThreadSafeContext(tsc);
		jit_free(j);
		return rc;
	}
	tsm = LLVMOrcCreateNewThreadSafeModule(m, tsc);
	LLVMOrcDisposeThreadSafeContext(tsc);   /* the module keeps it alive */
	if ((e = LLVMOrcJITTargetMachineBuilderDetectHost(&jtmb)) != NULL) {
		LLVMOrcDisposeThreadSafeModule(tsm);
		jit_free(j);
		return llvm_err(c, e, "detecting the host");
	}
	jb = LLVMOrcCreateLLJITBuilder();
	LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(jb, jtmb);
	if ((e = LLVMOrcCreateLLJIT(&j->jit, jb)) != NULL) {
		j->jit = NULL;
		LLVMOrcDisposeThreadSafeModule(tsm);
		jit_free(j);
		return llvm_err(c, e, "creating the JIT");
	}
	/* libm (expf, ...) and what LLVM calls on its own (memset, memcpy,
	 * sincosf, fmodf) come from the process */
	if ((e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen,
	         LLVMOrcLLJITGetGlobalPrefix(j->jit), NULL, NULL)) != NULL) {
		LLVMOrcDisposeThreadSafeModule(tsm);
		jit_free(j);
		return llvm_err(c, e, "resolving the process's symbols");
	}
	LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(j->jit), gen);
	/* the runtime's burn_parallel_for, by address (burncc's own symbols
	 * are not exported to dlsym) */
	{
		LLVMOrcCSymbolMapPair sym = {
			LLVMOrcLLJITMangleAndIntern(j->jit, "burn_parallel_for"),
			{ (LLVMOrcExecutorAddress)(uintptr_t)burn_parallel_for,
			  { LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable, 0 } },
		};
		LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(&sym, 1);
		if ((e = LLVMOrcJITDylibDefine(LLVMOrcLLJITGetMainJITDylib(j->jit), mu)) != NULL) {
			LLVMOrcDisposeMaterializationUnit(mu);
			LLVMOrcDisposeThreadSafeModule(tsm);
			jit_free(j);
			return llvm_err(c, e, "defining the runtime's symbols");
		}
	}
	if ((e = LLVMOrcLLJITAddLLVMIRModule(j->jit, LLVMOrcLLJITGetMainJITDylib(j->jit),
	                                     tsm)) != NULL) {
		jit_free(j);
		return llvm_err(c, e, "adding the module");
	}
	for (int i = 0; i < p->nkernel; i++) {
		LLVMOrcExecutorAddress a = 0;
		char sym[32];
		snprintf(sym, sizeof sym, "burnk%d", i);
		if ((e = LLVMOrcLLJITLookup(j->jit, &a, sym)) != NULL) {
			jit_free(j);
			return llvm_err(c, e, "compiling");
		}
		if (!a) {
			jit_free(j);
			return burn_fail(c, BURN_ERR_INTERNAL, "llvm: kernel %s has no code",
			                 p->kernel[i]->name);
		}
		j->fn[i] = (KernelFn)(uintptr_t)a;
	}
	j->nkernel = p->nkernel;
	return BURN_OK;
}

int
llvm_jit_compile(Ctx *c, const KProgram *p, LlvmJit **out)
{
	Jit *j = calloc(1, sizeof *j);
	int rc;

	*out = NULL;
	if (!j)
		return burn_fail(c, BURN_ERR_NOMEM, "llvm: out of memory");
	if ((rc = jit_program(c, p, j)) != 0) {
		free(j);
		return rc;
	}
	*out = j;
	return BURN_OK;
}

int
llvm_jit_call(Ctx *c, const LlvmJit *j, int k, void *const *bufs,
              const int64_t *dims)
{
	if (!j || k < 0 || k >= j->nkernel)
		return burn_fail(c, BURN_ERR_INVALID, "llvm: no kernel %d", k);
	j->fn[k](bufs, dims);
	return BURN_OK;
}

void
llvm_jit_free(LlvmJit *j)
{
	if (j) {
		jit_free(j);
		free(j);
	}
}

static int
llvm_run(Ctx *c, const Compiled *m, const void *const *in, void *const *out,
         void *arena)
{
	const KProgram *p = &m->prog;
	const Graph *g = m->g;
	Jit j;
	LaunchMem mem;
	void **bufs = NULL, *own = NULL;
	int64_t *dims = NULL;
	int maxb = 1, maxd = 1, rc;

	if (m->plan.ndims > 0)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "llvm: dims known at run "
		                 "time (bind them: --dim)");
	if (m->plan.nkernels != p->nkernel)
		return burn_fail(c, BURN_ERR_INTERNAL, "llvm: %d launches for %d kernels",
		                 m->plan.nkernels, p->nkernel);
	for (int k = 0; k < p->nkernel; k++) {
		if (p->kernel[k]->nbuf > maxb)
			maxb = p->kernel[k]->nbuf;
		if (p->kernel[k]->ndim > maxd)
			maxd = p->kernel[k]->ndim;
	}
	bufs = calloc((size_t)maxb, sizeof *bufs);
	dims = calloc((size_t)maxd, sizeof *dims);
	if (!arena && m->plan.arena_bytes > 0) {
		size_t nb = ((size_t)m->plan.arena_bytes + BURN_ARENA_ALIGN - 1) /
		            BURN_ARENA_ALIGN * BURN_ARENA_ALIGN;
		arena = own = aligned_alloc(BURN_ARENA_ALIGN, nb);
		if (own)
			memset(own, 0, nb);
	}
	if (!bufs || !dims || (!arena && m->plan.arena_bytes > 0)) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "llvm: out of memory");
		goto done;
	}
	if ((uintptr_t)arena & (BURN_ARENA_ALIGN - 1)) {
		rc = burn_fail(c, BURN_ERR_INVALID, "llvm: arena misaligned");
		goto done;
	}
	if ((rc = jit_program(c, p, &j)) != 0)
		goto done;
	mem = (LaunchMem){in, out, arena, m->plan.arena_bytes};
	for (int k = 0; k < p->nkernel && !rc; k++) {
		rc = launch_bind(c, g, &m->plan, p->kernel[k], &m->plan.launch[k],
		                 NULL, &mem, bufs, dims);
		if (!rc)
			j.fn[k](bufs, dims);
	}
	jit_free(&j);
	/* outputs no kernel wrote: constants and inputs passed through */
	if (!rc)
		rc = launch_passthrough(c, g, &m->plan, NULL, in, out);
done:
	free(bufs);
	free(dims);
	free(own);
	return rc;
}

const Backend backend_llvm = {
	.name = "llvm",
	.about = "the host CPU through LLVM 19, compiled and run in process by\n"
	         "ORC LLJIT (check, --emit=ir|kernels|render, --stats; no -o)",
	.target = &target_cpu,
	.ext = "ll",
	.render_kernel = render_llvm_kernel,
	.run = llvm_run,
};

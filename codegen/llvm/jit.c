/*
 * jit.c - the llvm target: a compiled program as one LLVM module, made by
 * render_llvm.c, optimised for the host CPU and compiled in process by ORC
 * LLJIT, then run bound exactly as the launch list says (the twin of
 * passes/launch_run.c's plan_run_interp, with machine code for kernels).
 *
 * The description is target_llvm (targets/llvm.c): the cpu target's
 * lowering, tuning and schedule, with no math library, so f32 exp, log,
 * tanh and the hyperbolics reach the renderer as kernel-IR polynomials
 * that the loop vectoriser takes (a libm call it would not).  The host
 * CPU's own vector width and FMA come to LLVM from the JIT's detection of
 * the host (CPU name and features), as -march=native does for the C
 * target.
 *
 * Everything LLVM makes here is disposed before run returns (the module
 * by the JIT that owns it, the JIT, the target machine, messages), so the
 * sanitizer build's leak check holds.  LLVM reports errors as values; each
 * becomes a status with LLVM's message.
 */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include "../../include/burn.h"
#include "../../runtime/cache.h"
#include "../../runtime/parallel.h"
#include "../target_iface.h"
#include "jit.h"
#include "render_llvm.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_failed;
/* Held around everything that enters LLVM (compiling, linking, disposing
 * a JIT).  LLVM allows threads with separate contexts, but its lazily made
 * globals (timers, option tables) are published in ways ThreadSanitizer
 * cannot follow into an uninstrumented libLLVM; one compilation at a time
 * keeps callers that test their threads with TSan clean, and costs
 * nothing to the kernels, which run without it. */
static pthread_mutex_t llvm_mu = PTHREAD_MUTEX_INITIALIZER;

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

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* The host as LLVM sees it (host_free disposes the strings). */
typedef struct Host {
	char *triple, *cpu, *feat;
} Host;

/*
 * The host: LLVM's triple, CPU name and features, the features with
 * gathers and scatters made unattractive to the vectoriser.  (On znver5 it
 * vectorised a GEMM's edge tile, 8 rows of 9 columns, across the rows:
 * a gather and a scatter of the tile per row and k, squeezenet's last
 * Conv 1.7 times gcc's time; gcc keeps that tile in scalar registers.)
 */
static int
host_get(Ctx *c, Host *h)
{
	static const char more[] = ",+prefer-no-gather,+prefer-no-scatter";
	/* with AVX-512, 512-bit vectors: LLVM's tuning for Intel cores
	 * (sapphirerapids, icelake...) prefers 256 and split the GEMM tile's
	 * 32-float rows (a Sapphire Rapids, one thread: squeezenet1_1 10.9
	 * -> 6.7 ms, bert_tiny 0.38 -> 0.23 ms; the C target's pragma does
	 * the same for GCC, targets/cpu.c) */
	static const char wide[] = ",-prefer-256-bit";
	char *f = LLVMGetHostCPUFeatures();
	size_t n = f ? strlen(f) : 0;
	int w = f && strstr(f, "+avx512f") != NULL;

	h->triple = LLVMGetDefaultTargetTriple();
	h->cpu = LLVMGetHostCPUName();
	h->feat = NULL;
	if (f && (h->feat = malloc(n + sizeof more + sizeof wide)) != NULL) {
		memcpy(h->feat, f, n);
		memcpy(h->feat + n, more + !n, sizeof more - !n);   /* no empty entry */
		if (w)
			strcat(h->feat, wide);
	}
	LLVMDisposeMessage(f);
	if (!h->feat)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	return BURN_OK;
}

static void
host_free(Host *h)
{
	LLVMDisposeMessage(h->triple);
	LLVMDisposeMessage(h->cpu);
	free(h->feat);
}

/*
 * The optimisation pipelines (the one used is part of the cache key).
 *
 * LEAN is what a fused pointwise or reduction kernel needs, at a fraction
 * of O2's compile time: the kernel inlined into its entry, its variables
 * promoted to registers (sroa), the loops put in the vectoriser's form
 * (simplify, LCSSA, rotate, canonical induction variables), vectorised,
 * and the result cleaned up.  (instcombine without no-verify-fixpoint
 * is LLVM 19's testing mode: it aborts the process when one run does not
 * reach a fixpoint, which O2 never asks for either.)  What it lacks (full unrolling of small
 * loops, LICM, GVN, SLP) is what the blocked GEMM and Conv templates need
 * to keep their register tiles (KS_LOCAL arrays) in registers, so a
 * program with a local buffer gets O2.
 */
#define PIPELINE_O2 "default<O2>"
#define PIPELINE_LEAN "always-inline,function(sroa,early-cse," \
	"instcombine<no-verify-fixpoint>,simplifycfg,loop-simplify,lcssa," \
	"loop-rotate,indvars,loop-vectorize,instcombine<no-verify-fixpoint>," \
	"simplifycfg)"

static const char *
pipeline(const KProgram *p, const LlvmJitOpts *o)
{
	int want = o ? o->pipeline : LLVM_PIPELINE_AUTO;

	/* AUTO is O2 for now; LEAN only when asked.  (LEAN once gave libburn's
	 * test_api a wrong value: an in-place bug in libburn that O2's GVN
	 * hid, since mended in api/realise.c.  Making LEAN the default for
	 * programs without local buffers wants a full conformance run.) */
	(void)p;
	return want == LLVM_PIPELINE_LEAN ? PIPELINE_LEAN : PIPELINE_O2;
}

/* A target machine for the host CPU that writes position-independent
 * objects (the JIT links them anywhere in memory). */
static int
host_machine(Ctx *c, const Host *h, LLVMTargetMachineRef *out)
{
	char *err = NULL;
	LLVMTargetRef t;
	int rc = BURN_OK;

	*out = NULL;
	if (LLVMGetTargetFromTriple(h->triple, &t, &err))
		rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "llvm: no target for %s: %s",
		               h->triple, err ? err : "?");
	else if (!(*out = LLVMCreateTargetMachine(t, h->triple, h->cpu, h->feat,
	                                          LLVMCodeGenLevelDefault,
	                                          LLVMRelocPIC,
	                                          LLVMCodeModelDefault)))
		rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "llvm: no target machine for %s",
		               h->triple);
	LLVMDisposeMessage(err);
	return rc;
}

/* The program's kernels as one module of context cx, verified and
 * optimised for tm: kernel i is the function burnk<i>. */
static int
make_module(Ctx *c, const KProgram *p, const char *pipe, LLVMContextRef cx,
            LLVMTargetMachineRef tm, LLVMModuleRef *out)
{
	LLVMModuleRef m = LLVMModuleCreateWithNameInContext("burncc", cx);
	LLVMPassBuilderOptionsRef po;
	LLVMTargetDataRef dl;
	LLVMErrorRef e;
	char *triple;
	int rc = BURN_OK;

	*out = NULL;
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
	e = LLVMRunPasses(m, pipe, tm, po);
	LLVMDisposePassBuilderOptions(po);
	if (e) {
		rc = llvm_err(c, e, "optimising");
		goto fail;
	}
	*out = m;
	return BURN_OK;
fail:
	LLVMDisposeModule(m);
	return rc;
}

/* The program compiled to an object file in memory (*out, the caller
 * disposes it): render, verify, optimise, generate code.  Everything
 * else LLVM made for it is disposed. */
static int
compile_object(Ctx *c, const KProgram *p, const char *pipe, const Host *h,
               LLVMMemoryBufferRef *out)
{
	LLVMContextRef cx = LLVMContextCreate();
	LLVMTargetMachineRef tm = NULL;
	LLVMModuleRef m = NULL;
	char *err = NULL;
	int rc;

	*out = NULL;
	if ((rc = host_machine(c, h, &tm)) == 0 &&
	    (rc = make_module(c, p, pipe, cx, tm, &m)) == 0 &&
	    LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMObjectFile, &err, out)) {
		rc = burn_fail(c, BURN_ERR_INTERNAL, "llvm: generating code: %s",
		               err ? err : "?");
		*out = NULL;
	}
	LLVMDisposeMessage(err);
	if (m)
		LLVMDisposeModule(m);
	if (tm)
		LLVMDisposeTargetMachine(tm);
	LLVMContextDispose(cx);
	return rc;
}

/* The program's module as the JIT optimises it (default pipeline, host
 * machine), as text in *out (malloc'd; the caller frees it).  For tests
 * that look at what LLVM made of a kernel. */
int
llvm_jit_optimised_ir(Ctx *c, const KProgram *p, char **out)
{
	LLVMContextRef cx;
	LLVMTargetMachineRef tm = NULL;
	LLVMModuleRef m = NULL;
	Host h;
	int rc;

	*out = NULL;
	pthread_once(&init_once, init);
	if (init_failed)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "llvm: the host CPU has no "
		                 "LLVM target");
	pthread_mutex_lock(&llvm_mu);
	rc = host_get(c, &h);
	cx = LLVMContextCreate();
	if (!rc && (rc = host_machine(c, &h, &tm)) == 0 &&
	    (rc = make_module(c, p, pipeline(p, NULL), cx, tm, &m)) == 0) {
		char *s = LLVMPrintModuleToString(m);
		if (!s || !(*out = strdup(s)))
			rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		LLVMDisposeMessage(s);
	}
	if (m)
		LLVMDisposeModule(m);
	if (tm)
		LLVMDisposeTargetMachine(tm);
	LLVMContextDispose(cx);
	host_free(&h);
	pthread_mutex_unlock(&llvm_mu);
	return rc;
}

/* ---- the cache key --------------------------------------------------------
 *
 * SHA-256 of everything the machine code depends on: burncc (its version
 * and, where the linker gave one, the build ID of the object this code is
 * linked into, so any rebuild of burncc is another key), LLVM's version,
 * the pipeline, the host (triple, CPU name and features), the target
 * description, and the program: its kernel-IR text (with each kernel's
 * schedule steps) and the schedule's decisions as data.  Strings are
 * hashed with their NUL, numbers as 8 bytes: no two inputs run together.
 */
#define JIT_KEY_FORMAT "burncc llvm kernel cache 1"

static void
h_str(BurnSha256 *s, const char *x)
{
	x = x ? x : "";
	burn_sha256_update(s, x, strlen(x) + 1);
}

static void
h_int(BurnSha256 *s, int64_t v)
{
	unsigned char b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)((uint64_t)v >> (8 * i));
	burn_sha256_update(s, b, 8);
}

typedef struct BuildId {
	uintptr_t addr;             /* an address inside the object wanted */
	unsigned char id[64];
	size_t n;
} BuildId;

/* The GNU build ID note of the loaded object that holds b->addr. */
static int
find_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
	BuildId *b = arg;
	int mine = 0;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && b->addr >= lo && b->addr < lo + ph->p_memsz)
			mine = 1;
	}
	if (!mine)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *p, *end;
		if (ph->p_type != PT_NOTE)
			continue;
		p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
			size_t nn = (nh->n_namesz + 3) & ~(size_t)3;
			size_t nd = (nh->n_descsz + 3) & ~(size_t)3;
			const unsigned char *name = p + sizeof *nh, *desc = name + nn;
			if (desc + nd > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && nh->n_descsz <= sizeof b->id) {
				memcpy(b->id, desc, nh->n_descsz);
				b->n = nh->n_descsz;
				return 1;
			}
			p = desc + nd;
		}
	}
	return 1;
}

static void
h_target(BurnSha256 *s, const Target *t)
{
	const TargetTune *u = &t->tune;
	const KCaps *k = &t->ops;

	h_str(s, t->name);
	h_int(s, t->vector_bytes);
	h_int(s, t->fma);
	h_int(s, t->threads);
	h_int(s, t->index_bits);
	h_int(s, u->gemm_mr);
	h_int(s, u->gemm_nr);
	h_int(s, u->gemm_nr_max);
	h_int(s, u->gemm_nr_step);
	h_int(s, u->gemm_mc);
	h_int(s, u->dot_lanes);
	h_int(s, u->conv_unroll);
	h_int(s, u->vec_lanes);
	h_int(s, u->vec_lanes_narrow);
	h_int(s, u->vec_wide_row);
	h_int(s, u->im2col);
	h_int(s, u->thread_min_work);
	h_int(s, k->erf_f32);
	h_int(s, k->nan_minmax);
	h_int(s, k->isnan);
	h_int(s, k->isinf);
	h_int(s, k->sat_f2i);
	h_int(s, k->f16);
	h_int(s, k->bf16);
	h_int(s, k->libm);
	h_int(s, k->libm_f64);
}

static int
program_key(Ctx *c, const KProgram *p, const char *pipe, const Host *h,
            unsigned char key[32])
{
	BurnSha256 s;
	BuildId b = { .addr = (uintptr_t)(void *)llvm_jit_compile_opts };
	unsigned maj, min, pat;
	char *text = NULL;
	size_t ntext = 0;
	FILE *f;

	burn_sha256_init(&s);
	h_str(&s, JIT_KEY_FORMAT);
	h_int(&s, BURN_VERSION_MAJOR);
	h_int(&s, BURN_VERSION_MINOR);
	dl_iterate_phdr(find_build_id, &b);
	h_int(&s, (int64_t)b.n);
	burn_sha256_update(&s, b.id, b.n);
	LLVMGetVersion(&maj, &min, &pat);
	h_int(&s, maj);
	h_int(&s, min);
	h_int(&s, pat);
	h_str(&s, pipe);
	h_str(&s, h->triple);
	h_str(&s, h->cpu);
	h_str(&s, h->feat);
	h_target(&s, &target_llvm);
	/* the program as text: every kernel with its schedule steps */
	if (!(f = open_memstream(&text, &ntext)))
		return burn_fail(c, BURN_ERR_NOMEM, "llvm: out of memory");
	kprog_print(f, p);
	if (fclose(f) || !text) {
		free(text);
		return burn_fail(c, BURN_ERR_NOMEM, "llvm: out of memory");
	}
	h_int(&s, (int64_t)ntext);
	burn_sha256_update(&s, text, ntext);
	free(text);
	/* ... and what scheduling decided, which the renderer prints */
	h_int(&s, p->nkernel);
	for (int i = 0; i < p->nkernel; i++) {
		const KKernel *k = p->kernel[i];
		const KSched *sc = k->sched;
		h_int(&s, k->nnode);
		h_int(&s, sc != NULL);
		if (!sc)
			continue;
		h_str(&s, sc->target);
		h_int(&s, sc->index_bits);
		h_int(&s, sc->nthreads);
		for (int t = 0; t < sc->nthreads; t++) {
			const KThreads *th = &sc->threads[t];
			h_int(&s, th->loop);
			h_int(&s, th->nvar);
			for (int v = 0; v < th->nvar; v++)
				h_int(&s, th->var[v]);
			h_int(&s, th->nbuf);
			for (int v = 0; v < th->nbuf; v++)
				h_int(&s, th->buf[v]);
		}
		h_int(&s, sc->fma != NULL);
		if (sc->fma) {
			h_int(&s, sc->nfma);
			burn_sha256_update(&s, sc->fma, (size_t)sc->nfma);
		}
	}
	burn_sha256_final(&s, key);
	return BURN_OK;
}

/* ---- loading ------------------------------------------------------------ */

typedef void (*KernelFn)(void *const *bufs, const int64_t *dims);

/* A JIT holding the program's machine code, and the kernels' entries. */
struct LlvmJit {
	LLVMOrcLLJITRef jit;
	int nkernel;
	KernelFn *fn;
};
typedef struct LlvmJit Jit;

/* Dispose of j's JIT (with llvm_mu held) and its table. */
static void
jit_free(Jit *j)
{
	if (j->jit)
		LLVMConsumeError(LLVMOrcDisposeLLJIT(j->jit));
	free(j->fn);
	memset(j, 0, sizeof *j);
}

/* Link object obj (consumed) into a new JIT and find p's kernels in it. */
static int
jit_load(Ctx *c, const KProgram *p, LLVMMemoryBufferRef obj, Jit *j)
{
	LLVMOrcDefinitionGeneratorRef gen;
	LLVMOrcJITDylibRef lib;
	LLVMErrorRef e;

	memset(j, 0, sizeof *j);
	if (!(j->fn = calloc((size_t)p->nkernel + 1, sizeof *j->fn))) {
		LLVMDisposeMemoryBuffer(obj);
		return burn_fail(c, BURN_ERR_NOMEM, "llvm: out of memory");
	}
	if ((e = LLVMOrcCreateLLJIT(&j->jit, NULL)) != NULL) {
		j->jit = NULL;
		LLVMDisposeMemoryBuffer(obj);
		jit_free(j);
		return llvm_err(c, e, "creating the JIT");
	}
	lib = LLVMOrcLLJITGetMainJITDylib(j->jit);
	/* libm (sinf, ...) and what LLVM calls on its own (memset, memcpy,
	 * sincosf, fmodf) come from the process */
	if ((e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen,
	         LLVMOrcLLJITGetGlobalPrefix(j->jit), NULL, NULL)) != NULL) {
		LLVMDisposeMemoryBuffer(obj);
		jit_free(j);
		return llvm_err(c, e, "resolving the process's symbols");
	}
	LLVMOrcJITDylibAddGenerator(lib, gen);
	/* the runtime's burn_parallel_for, by address (burncc's own symbols
	 * are not exported to dlsym) */
	{
		LLVMOrcCSymbolMapPair sym = {
			LLVMOrcLLJITMangleAndIntern(j->jit, "burn_parallel_for"),
			{ (LLVMOrcExecutorAddress)(uintptr_t)burn_parallel_for,
			  { LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable, 0 } },
		};
		LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(&sym, 1);
		if ((e = LLVMOrcJITDylibDefine(lib, mu)) != NULL) {
			LLVMOrcDisposeMaterializationUnit(mu);
			LLVMDisposeMemoryBuffer(obj);
			jit_free(j);
			return llvm_err(c, e, "defining the runtime's symbols");
		}
	}
	if ((e = LLVMOrcLLJITAddObjectFile(j->jit, lib, obj)) != NULL) {
		jit_free(j);
		return llvm_err(c, e, "adding the object");
	}
	for (int i = 0; i < p->nkernel; i++) {
		LLVMOrcExecutorAddress a = 0;
		char sym[32];
		snprintf(sym, sizeof sym, "burnk%d", i);
		if ((e = LLVMOrcLLJITLookup(j->jit, &a, sym)) != NULL) {
			jit_free(j);
			return llvm_err(c, e, "linking");
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

/* Compile p (or find it in the cache o names) and load it into j. */
static int
jit_program(Ctx *c, const KProgram *p, LlvmJitOpts *o, Jit *j)
{
	LLVMMemoryBufferRef obj = NULL;
	BurnCache cc = { .fd = -1 };
	unsigned char key[32];
	const char *pipe = pipeline(p, o);
	Host h;
	double t0;
	int rc, cached = 0;

	memset(j, 0, sizeof *j);
	if (o) {
		o->hit = o->compiles = 0;
		o->compile_ms = o->load_ms = 0;
		o->note[0] = 0;
	}
	pthread_once(&init_once, init);
	if (init_failed)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "llvm: the host CPU has no "
		                 "LLVM target");
	pthread_mutex_lock(&llvm_mu);
	if ((rc = host_get(c, &h)) != 0)
		goto done;
	if (o && o->cache_dir) {
		if ((rc = burn_cache_open(c, &cc, o->cache_dir, o->cache_max_bytes)) != 0) {
			snprintf(o->note, sizeof o->note, "%s", cc.note);
			goto done;
		}
		if (cc.fd >= 0 && (rc = program_key(c, p, pipe, &h, key)) != 0)
			goto done;
		if (cc.fd >= 0) {
			void *data;
			size_t n;
			if (burn_cache_get(&cc, key, &data, &n)) {
				obj = LLVMCreateMemoryBufferWithMemoryRangeCopy(data, n, "burncc");
				free(data);
				cached = obj != NULL;
			}
		}
		snprintf(o->note, sizeof o->note, "%s", cc.note);
	}
	if (cached) {
		/* checked and ours, but LLVM may still refuse it: then it is
		 * compiled again (and stored over the bad entry) */
		Ctx tmp;
		burn_ctx_init(&tmp, NULL);
		t0 = now_ms();
		if (jit_load(&tmp, p, obj, j) == 0) {
			o->hit = 1;
			o->load_ms = now_ms() - t0;
			rc = BURN_OK;
			goto done;
		}
		snprintf(o->note, sizeof o->note, "cached object did not load (%.200s): "
		         "compiled again", tmp.msg);
		obj = NULL;
	}
	t0 = now_ms();
	if ((rc = compile_object(c, p, pipe, &h, &obj)) != 0)
		goto done;
	if (o) {
		o->compiles = 1;
		o->compile_ms = now_ms() - t0;
	}
	if (cc.fd >= 0 && burn_cache_put(&cc, key, LLVMGetBufferStart(obj),
	                                 LLVMGetBufferSize(obj)))
		snprintf(o->note, sizeof o->note, "%s", cc.note);
	t0 = now_ms();
	rc = jit_load(c, p, obj, j);
	if (o)
		o->load_ms = now_ms() - t0;
done:
	burn_cache_close(&cc);
	host_free(&h);
	pthread_mutex_unlock(&llvm_mu);
	return rc;
}

int
llvm_jit_compile_opts(Ctx *c, const KProgram *p, LlvmJitOpts *o, LlvmJit **out)
{
	Jit *j = calloc(1, sizeof *j);
	int rc;

	*out = NULL;
	if (!j)
		return burn_fail(c, BURN_ERR_NOMEM, "llvm: out of memory");
	if ((rc = jit_program(c, p, o, j)) != 0) {
		free(j);
		return rc;
	}
	*out = j;
	return BURN_OK;
}

int
llvm_jit_compile(Ctx *c, const KProgram *p, LlvmJit **out)
{
	return llvm_jit_compile_opts(c, p, NULL, out);
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
		pthread_mutex_lock(&llvm_mu);
		jit_free(j);
		pthread_mutex_unlock(&llvm_mu);
		free(j);
	}
}

int
llvm_jit_run(Ctx *c, const LlvmJit *j, const Compiled *m, const void *const *in,
             void *const *out, void *arena)
{
	return llvm_jit_run_dims(c, j, m, NULL, in, out, arena);
}

int
llvm_jit_run_dims(Ctx *c, const LlvmJit *j, const Compiled *m,
                  const int64_t *dimv, const void *const *in, void *const *out,
                  void *arena)
{
	const KProgram *p = &m->prog;
	const Graph *g = m->g;
	LaunchMem mem;
	void **bufs = NULL, *own = NULL;
	int64_t *dims = NULL, abytes = m->plan.arena_bytes;
	int maxb = 1, maxd = 1, rc = BURN_OK;

	if (m->plan.ndims > 0 && !dimv)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "llvm: dims known at run "
		                 "time (bind them: --dim)");
	if (m->plan.ndims > 0)
		TRY(plan_arena_at(c, &m->plan, dimv, &abytes));
	if (m->plan.nkernels != p->nkernel || !j || j->nkernel != p->nkernel)
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
	if (!arena && abytes > 0) {
		size_t nb = ((size_t)abytes + BURN_ARENA_ALIGN - 1) /
		            BURN_ARENA_ALIGN * BURN_ARENA_ALIGN;
		arena = own = aligned_alloc(BURN_ARENA_ALIGN, nb);
		if (own)
			memset(own, 0, nb);
	}
	if (!bufs || !dims || (!arena && abytes > 0)) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "llvm: out of memory");
		goto done;
	}
	if ((uintptr_t)arena & (BURN_ARENA_ALIGN - 1)) {
		rc = burn_fail(c, BURN_ERR_INVALID, "llvm: arena misaligned");
		goto done;
	}
	mem = (LaunchMem){in, out, arena, abytes};
	for (int k = 0; k < p->nkernel && !rc; k++) {
		int skip = 0;
		rc = launch_skip(c, g, &m->plan, &m->plan.launch[k], dimv, &mem, &skip);
		if (!rc && !skip)
			rc = launch_bind(c, g, &m->plan, p->kernel[k], &m->plan.launch[k],
			                 dimv, &mem, bufs, dims);
		if (!rc && !skip)
			j->fn[k](bufs, dims);
	}
	/* outputs no kernel wrote: constants and inputs passed through */
	if (!rc)
		rc = launch_passthrough(c, g, &m->plan, dimv, in, out);
done:
	free(bufs);
	free(dims);
	free(own);
	return rc;
}

/* The backend's run: compile (through the disk cache in
 * $BURNCC_CACHE_DIR when set: burncc check --cache-dir), run at dims
 * (NULL: a program without run-time dims), free. */
static int
llvm_run_dims(Ctx *c, const Compiled *m, const int64_t *dims,
              const void *const *in, void *const *out, void *arena)
{
	LlvmJitOpts o = { .cache_dir = getenv("BURNCC_CACHE_DIR") };
	LlvmJit *j;
	int rc;

	if (m->plan.ndims > 0 && !dims)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "llvm: dims known at run "
		                 "time (bind them: --dim)");
	if (o.cache_dir && !*o.cache_dir)
		o.cache_dir = NULL;
	TRY(llvm_jit_compile_opts(c, &m->prog, &o, &j));
	rc = llvm_jit_run_dims(c, j, m, dims, in, out, arena);
	llvm_jit_free(j);
	return rc;
}

static int
llvm_run(Ctx *c, const Compiled *m, const void *const *in, void *const *out,
         void *arena)
{
	return llvm_run_dims(c, m, NULL, in, out, arena);
}

/* ---- burncc bench: the host's clock ----------------------------------- */

/* The CPU's name (/proc/cpuinfo) and the threads a run may use. */
static void
host_name(char *dev, size_t n)
{
	char line[256], name[160] = "a CPU";
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(name, sizeof name, "%s", strchr(line, ':') + 2);
			name[strcspn(name, "\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
	snprintf(dev, n, "%s, %d thread%s (llvm)", name, burn_threads(),
	         burn_threads() == 1 ? "" : "s");
}

/* The compiled program with its outputs and arena, for the timers. */
typedef struct Bench {
	LlvmJit *j;
	void **out;
	void *arena;
} Bench;

static void
bench_free(const Compiled *m, Bench *b)
{
	for (int i = 0; b->out && i < m->g->nout; i++)
		free(b->out[i]);
	free(b->out);
	free(b->arena);
	llvm_jit_free(b->j);
}

static int
bench_open(Ctx *c, const Compiled *m, Bench *b)
{
	size_t ab = ((size_t)(m->plan.arena_bytes > 0 ? m->plan.arena_bytes : 0) +
	             BURN_ARENA_ALIGN - 1) / BURN_ARENA_ALIGN * BURN_ARENA_ALIGN;

	memset(b, 0, sizeof *b);
	if (m->plan.ndims > 0)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "llvm: dims known at run time "
		                 "(bind them: --dim)");
	TRY(llvm_jit_compile(c, &m->prog, &b->j));
	b->out = calloc((size_t)m->g->nout + 1, sizeof *b->out);
	b->arena = ab ? aligned_alloc(BURN_ARENA_ALIGN, ab) : NULL;
	for (int i = 0; b->out && i < m->g->nout; i++)
		b->out[i] = malloc((size_t)value_nbytes(GV(m->g, m->g->out[i])) + 1);
	for (int i = 0; b->out && i < m->g->nout; i++)
		if (!b->out[i])
			goto nomem;
	if (!b->out || (ab && !b->arena))
		goto nomem;
	if (ab)
		memset(b->arena, 0, ab);
	return BURN_OK;
nomem:
	bench_free(m, b);
	return burn_fail(c, BURN_ERR_NOMEM, "llvm: out of memory");
}

/* Backend.time: wall-clock milliseconds of whole runs on this thread and
 * the pool (burn_threads), after one untimed run; no copy yardstick. */
static int
llvm_time(Ctx *c, const Compiled *m, const void *const *in, int runs, double *ms,
          double *copy_ms, char *dev, size_t ndev)
{
	Bench b;
	int rc;

	TRY(bench_open(c, m, &b));
	rc = llvm_jit_run(c, b.j, m, in, b.out, b.arena);
	for (int r = 0; r < runs && !rc; r++) {
		double t0 = now_ms();
		rc = llvm_jit_run(c, b.j, m, in, b.out, b.arena);
		ms[r] = now_ms() - t0;
		copy_ms[r] = 0;
	}
	host_name(dev, ndev);
	bench_free(m, &b);
	return rc;
}

static int
cmp_ms(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Backend.profile: after a whole run, each kernel bound once and called
 * `runs` times alone; kms[k] the median (a skipped launch: 0). */
static int
llvm_profile(Ctx *c, const Compiled *m, const void *const *in, int runs, double *kms)
{
	const KProgram *p = &m->prog;
	Bench b;
	LaunchMem mem;
	void **bufs = NULL;
	int64_t *dims = NULL;
	double *t = calloc((size_t)runs + 1, sizeof *t);
	int maxb = 1, maxd = 1, rc;

	for (int k = 0; k < p->nkernel; k++) {
		maxb = p->kernel[k]->nbuf > maxb ? p->kernel[k]->nbuf : maxb;
		maxd = p->kernel[k]->ndim > maxd ? p->kernel[k]->ndim : maxd;
	}
	if ((rc = bench_open(c, m, &b))) {
		free(t);
		return rc;
	}
	bufs = calloc((size_t)maxb, sizeof *bufs);
	dims = calloc((size_t)maxd, sizeof *dims);
	if (!t || !bufs || !dims)
		rc = burn_fail(c, BURN_ERR_NOMEM, "llvm: out of memory");
	if (!rc)
		rc = llvm_jit_run(c, b.j, m, in, b.out, b.arena);
	mem = (LaunchMem){ in, b.out, b.arena, m->plan.arena_bytes };
	for (int k = 0; k < p->nkernel && !rc; k++) {
		int skip = 0;
		kms[k] = 0;
		rc = launch_skip(c, m->g, &m->plan, &m->plan.launch[k], NULL, &mem, &skip);
		if (rc || skip)
			continue;
		rc = launch_bind(c, m->g, &m->plan, p->kernel[k], &m->plan.launch[k], NULL, &mem,
		                 bufs, dims);
		for (int r = 0; r < runs && !rc; r++) {
			double t0 = now_ms();
			b.j->fn[k](bufs, dims);
			t[r] = now_ms() - t0;
		}
		qsort(t, (size_t)runs, sizeof *t, cmp_ms);
		kms[k] = t[runs / 2];
	}
	free(t);
	free(bufs);
	free(dims);
	bench_free(m, &b);
	return rc;
}

const Backend backend_llvm = {
	.name = "llvm",
	.about = "the host CPU through LLVM 19, compiled and run in process by\n"
	         "ORC LLJIT (check, --emit=ir|kernels|render, --stats; no -o)",
	.target = &target_llvm,
	.ext = "ll",
	.render_kernel = render_llvm_kernel,
	.run = llvm_run,
	.run_dims = llvm_run_dims,
	.time = llvm_time,
	.profile = llvm_profile,
};

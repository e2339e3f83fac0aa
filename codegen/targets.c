/*
 * targets.c - the registry of built-in backends (target_iface.h).
 *
 * To add one: a Backend in its own folder (codegen/NAME/), listed here.
 */
#include <string.h>
#include "target_iface.h"

extern const Backend backend_c;     /* codegen/c/target_c.c */
extern const Backend backend_c_free;/* codegen/c/target_c.c */
extern const Backend backend_cuda;  /* codegen/ptx/target_cuda.c */
extern const Backend backend_wasm;  /* codegen/wasm/target_wasm.c */
#ifdef BURN_HAVE_LLVM
extern const Backend backend_llvm;  /* codegen/llvm/jit.c */
#endif
#ifdef BURN_HAVE_VULKAN
extern const Backend backend_vulkan;/* codegen/vulkan/target_vulkan.c */
#endif

/* The GPU description with no renderer yet: its kernels are scheduled
 * onto blocks and threads (--emit=kernels shows the grids) and run in
 * process by the interpreter with GPU semantics (races, barriers), so
 * `burncc check --target gpu` tests GPU schedules on any machine. */
static int
gpu_run(Ctx *c, const Compiled *m, const void *const *in, void *const *out,
        void *arena)
{
	(void)arena;
	return compiled_run_interp(c, m, in, out);
}

/* With a dim known only at run time: the launch list bound at the dims
 * (passes/launch_run.c), the C emitter's twin. */
static int
gpu_run_dims(Ctx *c, const Compiled *m, const int64_t *dims, const void *const *in,
             void *const *out, void *arena)
{
	(void)arena;
	return plan_run_interp(c, m->g, &m->prog, &m->plan, dims, in, out, NULL);
}

static const Backend backend_gpu = {
	.name = "gpu",
	.about = "a generic GPU: schedules onto blocks and threads, no renderer\n"
	         "yet; runs in the interpreter with GPU semantics (check,\n"
	         "--emit=ir|kernels, --stats; no -o or --emit=c)",
	.target = &target_gpu,
	.run = gpu_run,
	.run_dims = gpu_run_dims,
};

const Backend *const backend_list[] = {
	&backend_c, &backend_c_free, &backend_wasm,
#ifdef BURN_HAVE_LLVM
	&backend_llvm,
#endif
	&backend_gpu, &backend_cuda,
#ifdef BURN_HAVE_VULKAN
	&backend_vulkan,
#endif
	NULL
};

const Backend *backend_find(const char *name)
{
	for (int i = 0; name && backend_list[i]; i++)
		if (!strcmp(backend_list[i]->name, name))
			return backend_list[i];
	return NULL;
}

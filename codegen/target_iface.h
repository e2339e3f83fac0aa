/*
 * target_iface.h - the targets burncc can compile for, behind one small
 * interface, chosen by name (`burncc --target NAME`).
 *
 * A Backend pairs a Target description (targets/target.h: what lowering
 * and scheduling read) with the code that prints the scheduled kernels for
 * it.  The seam, from the compiled program down:
 *
 *   Compiled (passes.h)   kernels with their schedule, and the plan with
 *                         its launch list: decided once, for the Target
 *   render_kernel         one kernel -> source text, printing the schedule
 *   emit_module           the whole module: kernels + the launches in
 *                         program order, binding buffers as the launch
 *                         list says (the C target: NAME.c and NAME.h)
 *   run                   in-process targets (a JIT, a GPU device file):
 *                         load the module and run it once on given inputs
 *
 * A slot is NULL where the target has no such code yet: `gpu` is a
 * description only, so it can lower and schedule (--emit=kernels, --stats)
 * but not render.  Backends are const data with static storage.
 */
#ifndef BURN_TARGET_IFACE_H
#define BURN_TARGET_IFACE_H

#include <stdio.h>
#include "../passes/passes.h"

/* What a written module is called. */
typedef struct ModuleOpts {
	const char *prefix;      /* identifier prefix of exported symbols */
	const char *header_name; /* the header's file name, as the source
	                          * refers to it */
	const char *source;      /* the model file, for comments, or NULL */
	FILE *blob;              /* NULL, or the weights as a binary blob go
	                          * here (target c only: EmitC.blob) */
	const char *blob_name;   /* the blob's file name, without folder */
	const char *version;     /* burncc's version for the header, or NULL */
	const char *model_sha256;/* the model file's SHA-256 (hex), or NULL */
} ModuleOpts;

typedef struct Backend {
	const char *name;        /* --target NAME */
	const char *about;       /* one line for burncc --help */
	const Target *target;    /* the description compiled for */
	const char *ext;         /* file extension of rendered source ("c") */
	/* Print kernel k (with its schedule) as source.  Returns status. */
	int (*render_kernel)(Ctx *c, const KKernel *k, FILE *f);
	/* Write m as a module: the source to src, the header to hdr (they
	 * may be one stream).  Returns status. */
	int (*emit_module)(Ctx *c, const Compiled *m, const ModuleOpts *o,
	                   FILE *src, FILE *hdr);
	/* Write m as a host C module for -o where the target's own module is
	 * not C (cuda: the PTX embedded, run through libburn's runtime,
	 * include/burn_cuda.h); NULL where -o writes emit_module's output or
	 * nothing.  Returns status. */
	int (*emit_host)(Ctx *c, const Compiled *m, const ModuleOpts *o,
	                 FILE *src, FILE *hdr);
	/* Load m and run it once: inputs and outputs in graph order, arena
	 * of m->plan.arena_bytes.  NULL for targets that only write files. */
	int (*run)(Ctx *c, const Compiled *m, const void *const *in,
	           void *const *out, void *arena);
	/* The same for a program with run-time dims (--dynamic-dim): dims[i]
	 * the value of m->plan.dims[i], inputs and outputs sized for them,
	 * arena the plan's at them (plan_arena_at; NULL: the target allocates
	 * it).  NULL where the target runs static shapes only. */
	int (*run_dims)(Ctx *c, const Compiled *m, const int64_t *dims,
	                const void *const *in, void *const *out, void *arena);
	/* Time m on its device (burncc bench): after an untimed run, `runs`
	 * runs of the kernels alone (inputs resident), ms[i] each, measured
	 * by the device's own clock; copy_ms[i]: the device copying the
	 * largest input's bytes, the bandwidth yardstick (0: no input).
	 * device gets the device's description.  NULL where the target has
	 * no device timer yet. */
	int (*time)(Ctx *c, const Compiled *m, const void *const *in, int runs,
	            double *ms, double *copy_ms, char *device, size_t ndevice);
	/* Time each kernel of m alone (burncc bench --profile): kms[i] the
	 * median of `runs` runs of kernel i, by the device's clock.  NULL
	 * where the target has none. */
	int (*profile)(Ctx *c, const Compiled *m, const void *const *in, int runs,
	               double *kms);
} Backend;

/* The built-in backends, NULL-terminated, in --help order; [0] is the
 * default ("c"). */
extern const Backend *const backend_list[];
/* A built-in backend by name, or NULL. */
const Backend *backend_find(const char *name);

#endif

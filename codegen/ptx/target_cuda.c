/*
 * target_cuda.c - the cuda target behind the backend interface: the cuda
 * description (targets/cuda/cuda.c), render_ptx for kernels and modules,
 * and a run on the device through the driver API (targets/cuda/cuda_dev.h).
 *
 * run: the program's PTX is loaded with the driver's JIT; weights, inputs,
 * outputs and the arena get device buffers from the pool; every kernel's
 * segments are launched in program order with the launch list's
 * bindings (one .u64 argument per KS_GLOBAL buffer) and the grid the
 * schedule chose; the outputs are copied back.  Outputs no kernel wrote
 * (constants, inputs passed through, repeated outputs) are copied on the
 * host, as the C module does.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "../target_iface.h"
#include "render_ptx.h"
#include "../../targets/cuda/cuda_dev.h"

/* The launch list as PTX comments: what each entry's arguments are. */
static int
emit_launches(Ctx *c, const Compiled *m, const char *prefix, FILE *f)
{
	const Graph *g = m->g;
	PtxSeg *seg = malloc(PTX_MAX_SEG * sizeof *seg);
	int rc = BURN_OK;

	if (!seg)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	fprintf(f, "// launches, in order (arena %lld bytes):\n", (long long)m->plan.arena_bytes);
	for (int i = 0; i < m->prog.nkernel && !rc; i++) {
		const KKernel *k = m->prog.kernel[i];
		const Launch *l = &m->plan.launch[i];
		int n;
		if ((rc = ptx_segments(c, k, seg, PTX_MAX_SEG, &n)))
			break;
		for (int s = 0; s < n; s++) {
			char name[160];
			ptx_entry_name(prefix, k, s, n, name, sizeof name);
			fprintf(f, "//   %s <<<%lld, %lld>>>(", name, (long long)seg[s].grid,
			        (long long)seg[s].block);
			for (int a = 0; a < l->narg; a++) {
				const LaunchArg *x = &l->arg[a];
				fprintf(f, "%s", a ? ", " : "");
				switch (x->kind) {
				case LK_WEIGHT: fprintf(f, "weight %s", GV(g, x->value)->name); break;
				case LK_ARENA: fprintf(f, "arena+%lld", (long long)x->offset.c); break;
				case LK_INPUT: fprintf(f, "input %d", x->index); break;
				case LK_OUTPUT: fprintf(f, "output %d", x->index); break;
				}
			}
			fprintf(f, "%s)\n", seg[s].spill ? ", spill" : "");
		}
	}
	fprintf(f, "\n");
	free(seg);
	return rc;
}

static int
emit(Ctx *c, const Compiled *m, const ModuleOpts *o, FILE *src, FILE *hdr)
{
	(void)hdr;
	if (o->source)
		fprintf(src, "// %s\n", o->source);
	TRY(emit_launches(c, m, o->prefix, src));
	return ptx_render_program(c, o->prefix, &m->prog, src);
}

/* ---- run on the device ------------------------------------------------- */

typedef struct Run {
	CudaDev *d;
	CudaMod *mod;
	CudaPtr arena;
	CudaPtr spill;           /* the spill scratch (render_ptx.h) */
	CudaPtr *in, *out, *w;   /* per input, output, graph value (weights) */
	unsigned char *wrote;    /* per output: a kernel wrote it */
} Run;

static int
bind(Ctx *c, Run *r, const Compiled *m, const LaunchArg *x, const void *const *in,
     CudaPtr *out)
{
	const Graph *g = m->g;
	int64_t nb;

	switch (x->kind) {
	case LK_WEIGHT: {
		const Value *v = GV(g, x->value);
		if (r->w[x->value]) {
			*out = r->w[x->value];
			return BURN_OK;
		}
		nb = value_nbytes(v);
		if (!v->data || nb < 0)
			return burn_fail(c, BURN_ERR_INTERNAL, "cuda: weight '%s' has no data", v->name);
		TRY(cuda_alloc(c, r->d, (size_t)nb, &r->w[x->value]));
		TRY(cuda_htod(c, r->d, r->w[x->value], v->data, (size_t)nb));
		*out = r->w[x->value];
		return BURN_OK;
	}
	case LK_ARENA:
		if (x->offset.e)
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "cuda: run-time dims");
		*out = r->arena + (CudaPtr)x->offset.c;
		return BURN_OK;
	case LK_INPUT:
		if (x->index < 0 || x->index >= g->nin)
			break;
		if (!r->in[x->index]) {
			nb = value_nbytes(GV(g, g->in[x->index]));
			if (nb < 0)
				break;
			TRY(cuda_alloc(c, r->d, (size_t)nb, &r->in[x->index]));
			TRY(cuda_htod(c, r->d, r->in[x->index], in[x->index], (size_t)nb));
		}
		*out = r->in[x->index];
		return BURN_OK;
	case LK_OUTPUT:
		if (x->index < 0 || x->index >= g->nout)
			break;
		if (!r->out[x->index]) {
			nb = value_nbytes(GV(g, g->out[x->index]));
			if (nb < 0)
				break;
			TRY(cuda_alloc(c, r->d, (size_t)nb, &r->out[x->index]));
		}
		r->wrote[x->index] = 1;
		*out = r->out[x->index];
		return BURN_OK;
	}
	return burn_fail(c, BURN_ERR_INTERNAL, "cuda: a launch argument of kind %d", x->kind);
}

/* Launch kernels [lo, hi) of m's program, in order. */
static int
launch_range(Ctx *c, Run *r, const Compiled *m, const void *const *in, int lo, int hi)
{
	PtxSeg *seg = malloc(PTX_MAX_SEG * sizeof *seg);
	CudaPtr *argv = NULL;
	void **argp = NULL;
	int rc = BURN_OK, maxarg = 1;
	int64_t maxvar = 16;

	for (int i = 0; i < m->prog.nkernel; i++) {
		if (m->plan.launch[i].narg + 1 > maxarg)
			maxarg = m->plan.launch[i].narg + 1;
		if (ptx_spill_bytes(m->prog.kernel[i]) > maxvar)
			maxvar = ptx_spill_bytes(m->prog.kernel[i]);
	}
	argv = calloc((size_t)maxarg, sizeof *argv);
	argp = calloc((size_t)maxarg, sizeof *argp);
	if (!seg || !argv || !argp) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "cuda: out of memory");
		goto out;
	}
	if (!r->spill && ((rc = cuda_alloc(c, r->d, (size_t)maxvar, &r->spill)) ||
	                  (rc = cuda_memset0(c, r->d, r->spill, (size_t)maxvar))))
		goto out;
	for (int i = lo; i < hi && !rc; i++) {
		const KKernel *k = m->prog.kernel[i];
		const Launch *l = &m->plan.launch[i];
		LaunchMem mem = { in, NULL, NULL, 0 };
		int n, skip = 0;
		/* a run-time If's branch whose condition is an input, read on
		 * the host (one on the device runs anyway: passes.h) */
		if (l->guard && l->guard->kind == LK_INPUT &&
		    (rc = launch_skip(c, m->g, &m->plan, l, NULL, &mem, &skip)))
			break;
		if (skip)
			continue;
		if ((rc = ptx_segments(c, k, seg, PTX_MAX_SEG, &n)))
			break;
		for (int a = 0; a < l->narg && !rc; a++) {
			rc = bind(c, r, m, &l->arg[a], in, &argv[a]);
			argp[a] = &argv[a];
		}
		argv[l->narg] = r->spill;
		argp[l->narg] = &argv[l->narg];
		/* each kernel's local buffers start zeroed (render_ptx.h) */
		if (!rc && n && seg[0].spill)
			rc = cuda_memset0(c, r->d, r->spill, (size_t)ptx_spill_bytes(k));
		for (int s = 0; s < n && !rc; s++) {
			char name[160];
			ptx_entry_name(NULL, k, s, n, name, sizeof name);
			rc = cuda_launch(c, r->d, r->mod, name, (unsigned)seg[s].grid,
			                 (unsigned)seg[s].block, (unsigned)seg[s].dshared, argp);
		}
		/* errors of the kernel itself show at the next synchronisation:
		 * in debugging, BURNCC_CUDA_SYNC=1 names the kernel that faulted */
		if (!rc && getenv("BURNCC_CUDA_SYNC") && *getenv("BURNCC_CUDA_SYNC") == '1') {
			char what[200];
			snprintf(what, sizeof what, "kernel %s", k->name);
			rc = cuda_sync(c, r->d, what);
		}
	}
out:
	free(seg);
	free(argv);
	free(argp);
	return rc;
}

static int
launch_all(Ctx *c, Run *r, const Compiled *m, const void *const *in)
{
	return launch_range(c, r, m, in, 0, m->prog.nkernel);
}

/* The device, the module and the buffer tables for a run of m. */
static int
run_open(Ctx *c, Run *r, const Compiled *m)
{
	const Graph *g = m->g;
	char *ptx = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	memset(r, 0, sizeof *r);
	TRY(cuda_open(c, &r->d));
	if (m->plan.ndims)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "cuda: run-time dims");
	if (!(f = open_memstream(&ptx, &len)))
		return burn_fail(c, BURN_ERR_NOMEM, "cuda: out of memory");
	rc = ptx_render_program(c, NULL, &m->prog, f);
	fclose(f);
	r->in = calloc((size_t)g->nin + 1, sizeof *r->in);
	r->out = calloc((size_t)g->nout + 1, sizeof *r->out);
	r->w = calloc((size_t)g->nval + 1, sizeof *r->w);
	r->wrote = calloc((size_t)g->nout + 1, 1);
	if (!rc && (!r->in || !r->out || !r->w || !r->wrote))
		rc = burn_fail(c, BURN_ERR_NOMEM, "cuda: out of memory");
	if (!rc)
		rc = cuda_module_load(c, r->d, ptx, &r->mod);
	if (!rc)
		rc = cuda_alloc(c, r->d, (size_t)(m->plan.arena_bytes > 0 ? m->plan.arena_bytes : 1),
		                &r->arena);
	free(ptx);
	return rc;
}

/* Buffers back to the pool (which keeps them for the next run). */
static void
run_close(Run *r, const Compiled *m)
{
	const Graph *g = m->g;

	if (r->d) {
		cuda_free(r->d, r->arena);
		cuda_free(r->d, r->spill);
		for (int i = 0; r->in && i < g->nin; i++)
			cuda_free(r->d, r->in[i]);
		for (int i = 0; r->out && i < g->nout; i++)
			cuda_free(r->d, r->out[i]);
		for (int v = 0; r->w && v < g->nval; v++)
			cuda_free(r->d, r->w[v]);
		cuda_module_unload(r->d, r->mod);
	}
	free(r->in); free(r->out); free(r->w); free(r->wrote);
}

static int
cuda_run(Ctx *c, const Compiled *m, const void *const *in, void *const *out, void *arena)
{
	const Graph *g = m->g;
	Run r;
	int rc;

	(void)arena;
	rc = run_open(c, &r, m);
	if (!rc)
		rc = launch_all(c, &r, m, in);
	if (!rc)
		rc = cuda_sync(c, r.d, "running the model's kernels");
	for (int i = 0; i < g->nout && !rc; i++) {
		int64_t nb = value_nbytes(GV(g, g->out[i]));
		const void *src;
		if (nb <= 0)
			continue;
		if (r.wrote[i])
			rc = cuda_dtoh(c, r.d, out[i], r.out[i], (size_t)nb);
		else if ((src = plan_output_source(g, i, in, out)))
			memcpy(out[i], src, (size_t)nb);
		else
			rc = burn_fail(c, BURN_ERR_INTERNAL, "cuda: output %d has no value", i);
	}
	run_close(&r, m);
	return rc;
}

typedef struct TimeArg {
	Run *r;
	const Compiled *m;
	const void *const *in;
	int kernel;              /* time_kernel: the kernel */
	CudaGraph *graph;        /* the launches captured, or NULL */
	CudaPtr dst, src;
	size_t bytes;
} TimeArg;

static int
time_model(Ctx *c, void *arg)
{
	TimeArg *t = arg;

	if (t->graph)
		return cuda_graph_launch(c, t->r->d, t->graph);
	return launch_all(c, t->r, t->m, t->in);
}

static int
time_kernel(Ctx *c, void *arg)
{
	TimeArg *t = arg;

	return launch_range(c, t->r, t->m, t->in, t->kernel, t->kernel + 1);
}

/* The model's launches captured as a CUDA graph (inputs and weights are
 * on the device already: only launches and memsets are recorded), unless
 * BURNCC_CUDA_GRAPH=0. */
static int
capture(Ctx *c, TimeArg *t)
{
	const char *e = getenv("BURNCC_CUDA_GRAPH");
	int rc;

	if (e && *e == '0')
		return BURN_OK;
	TRY(cuda_capture_begin(c, t->r->d));
	rc = launch_all(c, t->r, t->m, t->in);
	if (rc) {
		cuda_capture_end(c, t->r->d, 0, &t->graph);
		return rc;
	}
	return cuda_capture_end(c, t->r->d, 1, &t->graph);
}

static int
time_copy(Ctx *c, void *arg)
{
	TimeArg *t = arg;

	return cuda_dtod(c, t->r->d, t->dst, t->src, t->bytes);
}

/* Backend.time: one untimed run (module loaded, weights and inputs
 * uploaded), then `runs` runs of the launches alone, each between two
 * events: replays of the launches captured once as a CUDA graph (one
 * submission a run), or with BURNCC_CUDA_GRAPH=0 the launches one by
 * one; and as the yardstick, the driver's device-to-device copy of the
 * model's input bytes, timed the same way. */
static int
cuda_time(Ctx *c, const Compiled *m, const void *const *in, int runs, double *ms,
          double *copy_ms, char *device, size_t ndevice)
{
	const Graph *g = m->g;
	TimeArg t = { 0 };
	Run r;
	int rc;

	t.r = &r;
	t.m = m;
	t.in = in;
	rc = run_open(c, &r, m);
	if (!rc)
		snprintf(device, ndevice, "%s", cuda_describe(r.d));
	if (!rc)
		rc = launch_all(c, &r, m, in);
	if (!rc)
		rc = cuda_sync(c, r.d, "running the model's kernels");
	if (!rc)
		rc = capture(c, &t);
	for (int i = 0; i < runs && !rc; i++)
		rc = cuda_elapsed(c, r.d, time_model, &t, &ms[i]);
	if (r.d)
		cuda_graph_free(r.d, t.graph);
	for (int i = 0; i < g->nin; i++)
		if (r.in && r.in[i] && value_nbytes(GV(g, g->in[i])) > (int64_t)t.bytes) {
			t.src = r.in[i];
			t.bytes = (size_t)value_nbytes(GV(g, g->in[i]));
		}
	if (!rc && t.bytes)
		rc = cuda_alloc(c, r.d, t.bytes, &t.dst);
	for (int i = 0; i < runs && !rc; i++)
		rc = t.bytes ? cuda_elapsed(c, r.d, time_copy, &t, &copy_ms[i]) : (copy_ms[i] = 0, 0);
	if (r.d)
		cuda_free(r.d, t.dst);
	run_close(&r, m);
	return rc;
}

/* Backend.profile: after one untimed run, each kernel alone (its
 * segments and memsets) between two events, `runs` times; kms[i] the
 * median of kernel i. */
static int
cuda_profile(Ctx *c, const Compiled *m, const void *const *in, int runs, double *kms)
{
	TimeArg t = { 0 };
	double *ms = calloc((size_t)runs, sizeof *ms);
	Run r;
	int rc;

	if (!ms)
		return burn_fail(c, BURN_ERR_NOMEM, "cuda: out of memory");
	t.r = &r;
	t.m = m;
	t.in = in;
	rc = run_open(c, &r, m);
	if (!rc)
		rc = launch_all(c, &r, m, in);
	if (!rc)
		rc = cuda_sync(c, r.d, "running the model's kernels");
	for (int k = 0; k < m->prog.nkernel && !rc; k++) {
		t.kernel = k;
		for (int i = 0; i < runs && !rc; i++)
			rc = cuda_elapsed(c, r.d, time_kernel, &t, &ms[i]);
		for (int i = 1; i < runs; i++)   /* insertion sort: runs is small */
			for (int j = i; j > 0 && ms[j - 1] > ms[j]; j--) {
				double x = ms[j];
				ms[j] = ms[j - 1];
				ms[j - 1] = x;
			}
		kms[k] = ms[runs / 2];
	}
	run_close(&r, m);
	free(ms);
	return rc;
}

const Backend backend_cuda = {
	.name = "cuda",
	.about = "NVIDIA GPUs (sm_90): PTX (--emit=ptx), run through the CUDA\n"
	         "driver (check; libcuda.so.1 loaded at run time)",
	.target = &target_cuda,
	.ext = "ptx",
	.render_kernel = ptx_render_kernel,
	.emit_module = emit,
	.run = cuda_run,
	.time = cuda_time,
	.profile = cuda_profile,
};

/*
 * cuda_module.c - the runtime of host modules written by
 * `burncc --target cuda -o` (include/burn_cuda.h): a burn_cuda_module's
 * launches run through the driver glue of targets/cuda/cuda_dev.h, the
 * same calls the cuda target's in-process run makes
 * (codegen/ptx/target_cuda.c), from the module's tables instead of a
 * compiled graph.
 */
#include <stdlib.h>
#include <string.h>
#include "../include/burn_cuda.h"
#include "../targets/cuda/cuda_dev.h"

struct burn_cuda_state {
	const burn_cuda_module *m;
	Ctx c;                   /* the last failure */
	CudaDev *d;
	CudaMod *mod;
	CudaPtr arena, spill;
	CudaPtr *w, *in, *out;   /* per weight, input, output */
	int open;                /* the module and weights are on the device */
	void **argp;             /* the largest launch's argument pointers */
	CudaPtr *argv;
	const void *const *pend_in;  /* run_async's buffers, for wait's */
	void *const *pend_out;       /* host copies */
	CudaGraph *graph;        /* the launches, captured at the first run
	                          * (the buffers are the state's, so it stays
	                          * valid); NULL: not yet, or launched one by
	                          * one ($BURNCC_CUDA_GRAPH=0) */
	int nograph;
};

/* Everything state_open made, given back (a failed open leaves nothing
 * behind, and the next run tries again). */
static void
state_release(burn_cuda_state *s)
{
	if (s->d) {
		cuda_graph_free(s->d, s->graph);
		for (int i = 0; s->w && i < s->m->nweight; i++)
			cuda_free(s->d, s->w[i]);
		for (int i = 0; s->in && i < s->m->nin; i++)
			cuda_free(s->d, s->in[i]);
		for (int i = 0; s->out && i < s->m->nout; i++)
			cuda_free(s->d, s->out[i]);
		cuda_free(s->d, s->arena);
		cuda_free(s->d, s->spill);
		cuda_module_unload(s->d, s->mod);
	}
	free(s->w); free(s->in); free(s->out); free(s->argv); free(s->argp);
	s->w = s->in = s->out = s->argv = NULL;
	s->argp = NULL;
	s->arena = s->spill = 0;
	s->mod = NULL;
	s->graph = NULL;
	s->open = 0;
}

static int
fail(burn_cuda_state *s, int code, const char *what)
{
	return burn_fail(&s->c, code, "%s: %s", s->m->name, what);
}

/* Buffers for the weights (copied once), the inputs, the outputs a kernel
 * writes, the arena and the spill scratch. */
static int
state_open1(burn_cuda_state *s)
{
	const burn_cuda_module *m = s->m;
	Ctx *c = &s->c;
	int maxarg = 1;

	TRY(cuda_open(c, &s->d));
	TRY(cuda_module_load(c, s->d, m->ptx, &s->mod));
	for (int i = 0; i < m->nlaunch; i++)
		if (m->launch[i].narg + 1 > maxarg)
			maxarg = m->launch[i].narg + 1;
	s->w = calloc((size_t)m->nweight + 1, sizeof *s->w);
	s->in = calloc((size_t)m->nin + 1, sizeof *s->in);
	s->out = calloc((size_t)m->nout + 1, sizeof *s->out);
	s->argv = calloc((size_t)maxarg, sizeof *s->argv);
	s->argp = calloc((size_t)maxarg, sizeof *s->argp);
	if (!s->w || !s->in || !s->out || !s->argv || !s->argp)
		return fail(s, BURN_ERR_NOMEM, "out of memory");
	for (int i = 0; i < m->nweight; i++) {
		TRY(cuda_alloc(c, s->d, (size_t)m->weight_bytes[i], &s->w[i]));
		TRY(cuda_htod(c, s->d, s->w[i], m->weight[i], (size_t)m->weight_bytes[i]));
	}
	for (int i = 0; i < m->nin; i++)
		TRY(cuda_alloc(c, s->d, (size_t)m->in_bytes[i], &s->in[i]));
	for (int i = 0; i < m->nout; i++)
		if (m->out[i].from == 0)
			TRY(cuda_alloc(c, s->d, (size_t)m->out[i].bytes, &s->out[i]));
	TRY(cuda_alloc(c, s->d, (size_t)(m->arena_bytes > 0 ? m->arena_bytes : 1), &s->arena));
	TRY(cuda_alloc(c, s->d, (size_t)(m->spill_bytes > 16 ? m->spill_bytes : 16), &s->spill));
	TRY(cuda_memset0(c, s->d, s->spill, (size_t)(m->spill_bytes > 16 ? m->spill_bytes : 16)));
	s->open = 1;
	return BURN_OK;
}

static int
state_open(burn_cuda_state *s)
{
	int rc = state_open1(s);

	if (rc)
		state_release(s);
	return rc;
}

int
burn_cuda_open(const burn_cuda_module *m, burn_cuda_state **out)
{
	burn_cuda_state *s = calloc(1, sizeof *s);

	*out = s;
	if (!s)
		return BURN_ERR_NOMEM;
	s->m = m;
	return state_open(s);
}

static int
bind(burn_cuda_state *s, const burn_cuda_arg *a, CudaPtr *p)
{
	const burn_cuda_module *m = s->m;

	switch (a->kind) {
	case BURN_CUDA_WEIGHT:
		if (a->index >= 0 && a->index < m->nweight) {
			*p = s->w[a->index];
			return BURN_OK;
		}
		break;
	case BURN_CUDA_ARENA:
		if (a->offset >= 0 && a->offset < (m->arena_bytes > 0 ? m->arena_bytes : 1)) {
			*p = s->arena + (CudaPtr)a->offset;
			return BURN_OK;
		}
		break;
	case BURN_CUDA_INPUT:
		if (a->index >= 0 && a->index < m->nin) {
			*p = s->in[a->index];
			return BURN_OK;
		}
		break;
	case BURN_CUDA_OUTPUT:
		if (a->index >= 0 && a->index < m->nout && m->out[a->index].from == 0) {
			*p = s->out[a->index];
			return BURN_OK;
		}
		break;
	}
	return fail(s, BURN_ERR_INVALID, "a launch argument binds nothing (the module's "
	            "tables are damaged)");
}

/* Every launch, in order, on the current queue. */
static int
launch_all(burn_cuda_state *s)
{
	const burn_cuda_module *m = s->m;
	Ctx *c = &s->c;

	for (int i = 0; i < m->nlaunch; i++) {
		const burn_cuda_launch *l = &m->launch[i];
		for (int a = 0; a < l->narg; a++) {
			TRY(bind(s, &l->arg[a], &s->argv[a]));
			s->argp[a] = &s->argv[a];
		}
		s->argv[l->narg] = s->spill;
		s->argp[l->narg] = &s->argv[l->narg];
		/* each kernel's local buffers start zeroed (render_ptx.h) */
		if (l->spill_zero > 0)
			TRY(cuda_memset0(c, s->d, s->spill, (size_t)l->spill_zero));
		TRY(cuda_launch(c, s->d, s->mod, l->entry, l->grid, l->block, l->shared, s->argp));
	}
	return BURN_OK;
}

/* The launches as one CUDA graph: captured at the first run, replayed
 * after (one submission instead of a launch a kernel: what a small model
 * spends its time on).  A capture that fails falls back to launching. */
static int
launch_graph(burn_cuda_state *s)
{
	Ctx *c = &s->c;
	int rc;

	if (!s->graph && !s->nograph) {
		const char *e = getenv("BURNCC_CUDA_GRAPH");
		s->nograph = (e && *e == '0') || s->m->nlaunch < 2;
		if (!s->nograph) {
			void *q = cuda_queue(s->d, NULL);   /* a capture has its own */
			rc = cuda_capture_begin(c, s->d);
			if (!rc) {
				int lr = launch_all(s);
				rc = cuda_capture_end(c, s->d, !lr, &s->graph) || lr;
			}
			if (rc) {        /* launch one by one from now on */
				s->nograph = 1;
				s->graph = NULL;
				c->code = BURN_OK;
				c->msg[0] = 0;
			}
			cuda_queue(s->d, q);
		}
	}
	return s->graph ? cuda_graph_launch(c, s->d, s->graph) : launch_all(s);
}

/* The inputs in, the launches, the outputs out (queued when async). */
static int
enqueue(burn_cuda_state *s, const void *const *in, void *const *out, int async)
{
	const burn_cuda_module *m = s->m;
	Ctx *c = &s->c;

	if (!in || !out)
		return fail(s, BURN_ERR_INVALID, "inputs or outputs NULL");
	for (int i = 0; i < m->nin; i++) {
		if (!in[i] && m->in_bytes[i])
			return fail(s, BURN_ERR_INVALID, "an input is NULL");
		TRY((async ? cuda_htod_async : cuda_htod)(c, s->d, s->in[i], in[i],
		                                          (size_t)m->in_bytes[i]));
	}
	TRY(launch_graph(s));
	for (int i = 0; i < m->nout; i++) {
		const burn_cuda_output *o = &m->out[i];
		if (!out[i] && o->bytes)
			return fail(s, BURN_ERR_INVALID, "an output is NULL");
		if (o->from == 0)
			TRY((async ? cuda_dtoh_async : cuda_dtoh)(c, s->d, out[i], s->out[i],
			                                          (size_t)o->bytes));
	}
	return BURN_OK;
}

/* Outputs that are inputs, weights or earlier outputs: host copies, once
 * the device's outputs are back. */
static int
host_copies(burn_cuda_state *s, const void *const *in, void *const *out)
{
	const burn_cuda_module *m = s->m;

	for (int i = 0; i < m->nout; i++) {
		const burn_cuda_output *o = &m->out[i];
		const void *src = NULL;
		if (o->from == 1 && o->index >= 0 && o->index < m->nin)
			src = in[o->index];
		else if (o->from == 2 && o->index >= 0 && o->index < m->nweight)
			src = m->weight[o->index];
		else if (o->from == 3 && o->index >= 0 && o->index < i)
			src = out[o->index];
		else if (o->from != 0)
			return fail(s, BURN_ERR_INVALID, "an output has no source");
		if (src && o->bytes)
			memcpy(out[i], src, (size_t)o->bytes);
	}
	return BURN_OK;
}

static int
start(burn_cuda_state *s)
{
	if (!s)
		return BURN_ERR_NOMEM;
	s->c.code = BURN_OK;
	s->c.msg[0] = 0;
	return s->open ? BURN_OK : state_open(s);
}

int
burn_cuda_run(burn_cuda_state *s, const void *const *in, void *const *out)
{
	TRY(start(s));
	TRY(enqueue(s, in, out, 0));
	TRY(cuda_sync(&s->c, s->d, "running the module's kernels"));
	return host_copies(s, in, out);
}

int
burn_cuda_run_async(burn_cuda_state *s, void *stream, const void *const *in,
                    void *const *out)
{
	void *q;
	int rc;

	TRY(start(s));
	s->pend_in = NULL;
	s->pend_out = NULL;
	q = cuda_queue(s->d, stream);
	rc = enqueue(s, in, out, 1);
	cuda_queue(s->d, q);
	TRY(rc);
	s->pend_in = in;
	s->pend_out = out;
	return BURN_OK;
}

int
burn_cuda_stream_create(burn_cuda_state *s, void **stream)
{
	*stream = NULL;
	TRY(start(s));
	return cuda_stream_new(&s->c, s->d, stream);
}

void
burn_cuda_stream_destroy(burn_cuda_state *s, void *stream)
{
	if (s && s->d)
		cuda_stream_free(s->d, stream);
}

int
burn_cuda_host_alloc(burn_cuda_state *s, size_t bytes, void **p)
{
	*p = NULL;
	TRY(start(s));
	return cuda_host_alloc(&s->c, s->d, bytes, p);
}

void
burn_cuda_host_free(burn_cuda_state *s, void *p)
{
	if (s && s->d)
		cuda_host_free(s->d, p);
}

int
burn_cuda_wait(burn_cuda_state *s)
{
	const void *const *in;
	void *const *out;

	TRY(start(s));
	in = s->pend_in;
	out = s->pend_out;
	s->pend_in = NULL;
	s->pend_out = NULL;
	TRY(cuda_sync(&s->c, s->d, "running the module's kernels"));
	return in ? host_copies(s, in, out) : BURN_OK;
}

const char *
burn_cuda_message(const burn_cuda_state *s)
{
	return !s ? "out of memory" : s->c.msg;
}

void
burn_cuda_close(burn_cuda_state *s)
{
	if (!s)
		return;
	if (s->pend_in && s->d)
		cuda_sync(&s->c, s->d, "the module's last run");
	state_release(s);
	free(s);
}

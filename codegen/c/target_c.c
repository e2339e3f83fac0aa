/*
 * target_c.c - the C target behind the backend interface: the cpu
 * description, render_c for kernels, emit_c for the module.  The module is
 * compiled by the user's C compiler, so there is no in-process run.
 *
 * c-freestanding (burncc --freestanding) is the same renderer for the
 * cpu-freestanding description: KCaps without libm, so the seam expands
 * the transcendentals into kernel IR, and a module that names nothing from
 * libc or libm (the freestanding prelude, render_c.h).
 */
#include "../target_iface.h"
#include "emit_c.h"
#include "render_c.h"

static int
emit(Ctx *c, const Compiled *m, const ModuleOpts *o, FILE *src, FILE *hdr)
{
	EmitC e = { o->prefix, o->header_name, o->source, 0, NULL, NULL,
	            o->blob, o->blob_name, o->version, o->model_sha256,
	            m->target ? m->target->cpu : NULL };

	return emit_c_module(c, m->g, &m->prog, &m->plan, &e, src, hdr);
}

static int
emit_free(Ctx *c, const Compiled *m, const ModuleOpts *o, FILE *src, FILE *hdr)
{
	EmitC e = { o->prefix, o->header_name, o->source, 1, NULL, NULL,
	            o->blob, o->blob_name, o->version, o->model_sha256,
	            m->target ? m->target->cpu : NULL };

	return emit_c_module(c, m->g, &m->prog, &m->plan, &e, src, hdr);
}

const Backend backend_c = {
	.name = "c",
	.about = "C99 for the host CPU (OpenMP threads with -fopenmp)",
	.target = &target_cpu,
	.ext = "c",
	.render_kernel = render_c_kernel,
	.emit_module = emit,
};

const Backend backend_c_free = {
	.name = "c-freestanding",
	.about = "freestanding C99 (--freestanding): no libc or libm, for\n"
	         "firmware; transcendentals as kernel-IR polynomials",
	.target = &target_cpu_free,
	.ext = "c",
	.render_kernel = render_c_kernel_free,
	.emit_module = emit_free,
};

/*
 * target_c.c - the C target behind the backend interface: the cpu
 * description, render_c for kernels, emit_c for the module.  The module is
 * compiled by the user's C compiler, so there is no in-process run.
 */
#include "../target_iface.h"
#include "emit_c.h"
#include "render_c.h"

static int
emit(Ctx *c, const Compiled *m, const ModuleOpts *o, FILE *src, FILE *hdr)
{
	EmitC e = { o->prefix, o->header_name, o->source };

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

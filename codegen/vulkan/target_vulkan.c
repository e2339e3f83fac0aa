/*
 * target_vulkan.c - the vulkan target behind the backend interface: the
 * vulkan description (targets/vulkan.c), render_glsl for kernels (GLSL
 * compute shaders, --emit=render), and a run on a Vulkan device
 * (targets/vulkan/vk_dev.h: lavapipe in CI).
 *
 * run: every kernel's shaders are compiled to SPIR-V by glslang and
 * validated by SPIRV-Tools (spirv.h), all of them before the device is
 * opened (so BURNCC_VULKAN_DEVICE=none checks them on a machine without
 * one: tests/vulkan/spirv_val.sh); each becomes a pipeline whose
 * descriptor set binds the kernel's global buffers (binding = buffer
 * index, as the launch list orders them) and the spill buffer; weights,
 * inputs, outputs and the arena are host-visible buffers (arena values
 * bound at their plan offsets); all dispatches go into one command
 * buffer in program order, with a barrier between each two; then the
 * outputs are read back.  Outputs no kernel wrote are copied on the
 * host, as the C module does.
 *
 * run_dims (--dynamic-dim): the same walk with the launch list's
 * expressions evaluated at the dims (plan_expr_at: each binding's offset
 * and bytes, the arena's size, each kernel's dim arguments), the dim
 * arguments pushed as push constants, and a peeled kernel's items
 * dispatched as that many workgroups along y (GlslShader.ydim).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../target_iface.h"
#include "render_glsl.h"
#include "spirv.h"
#include "../../targets/vulkan/vk_dev.h"

/* The module as text: every kernel's shaders, with the launches. */
static int
emit(Ctx *c, const Compiled *m, const ModuleOpts *o, FILE *src, FILE *hdr)
{
	(void)hdr;
	if (o->source)
		fprintf(src, "// %s\n", o->source);
	if (m->plan.arena.e) {
		fprintf(src, "// arena ");
		dx_print_c(src, m->plan.arena.e, m->plan.dims);
		fprintf(src, " bytes at run time");
	} else {
		fprintf(src, "// arena %lld bytes", (long long)m->plan.arena_bytes);
	}
	fprintf(src, "; bindings = the kernels' global buffers in launch-list order\n");
	for (int i = 0; i < m->prog.nkernel; i++)
		TRY(glsl_render_kernel(c, m->prog.kernel[i], src));
	return BURN_OK;
}

typedef struct Run {
	const int64_t *dims;         /* the plan's dims' values, NULL: none */
	int64_t *obytes;             /* per output: its buffer's bytes */
	VkdDev *d;
	VkdCmd *cmd;
	VkdBuf *arena, *spill;
	int64_t arena_bytes;
	VkdBuf **in, **out, **w;     /* per input, output, graph value */
	unsigned char *wrote;
	VkdPipe **pipe;              /* every shader's, in order */
	int npipe, cappipe;
} Run;

/* The buffer and offset a launch argument binds. */
static int
bind_arg(Ctx *c, Run *r, const Compiled *m, const LaunchArg *x, const void *const *in,
         VkdBind *out)
{
	const Graph *g = m->g;
	int64_t nb, off = 0;

	TRY(plan_expr_at(c, &m->plan, &x->bytes, r->dims, &nb));
	if (nb < 0)
		return burn_fail(c, BURN_ERR_INTERNAL, "vulkan: a binding of %lld bytes",
		                 (long long)nb);
	/* the shaders index with int: a binding's elements stay below 2^31
	 * (the dims may make one of any size) */
	if ((uint64_t)nb > vkd_max_range(r->d) || nb > INT32_MAX)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "vulkan %s: a binding of %lld bytes "
		                 "(buffer b%d), over the device's storage-buffer range %llu or "
		                 "2^31 - 1", vkd_describe(r->d), (long long)nb, x->buf,
		                 (unsigned long long)vkd_max_range(r->d));
	out->binding = x->buf;
	out->offset = 0;
	out->range = nb > 0 ? (uint64_t)nb : 16;
	switch (x->kind) {
	case LK_WEIGHT: {
		const Value *v = GV(g, x->value);
		if (!r->w[x->value]) {
			if (!v->data)
				return burn_fail(c, BURN_ERR_INTERNAL, "vulkan: weight '%s' has no data",
				                 v->name);
			TRY(vkd_buf_create(c, r->d, (size_t)nb, &r->w[x->value]));
			memcpy(vkd_buf_ptr(r->w[x->value]), v->data, (size_t)nb);
		}
		out->buf = r->w[x->value];
		return BURN_OK;
	}
	case LK_ARENA:
		TRY(plan_expr_at(c, &m->plan, &x->offset, r->dims, &off));
		if (off % (int64_t)vkd_offset_align(r->d))
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "vulkan %s: arena offset %lld is not "
			                 "a multiple of the device's storage-buffer alignment %llu",
			                 vkd_describe(r->d), (long long)off,
			                 (unsigned long long)vkd_offset_align(r->d));
		if (off < 0 || off > r->arena_bytes || nb > r->arena_bytes - off)
			return burn_fail(c, BURN_ERR_INTERNAL, "vulkan: b%d at %lld + %lld bytes is "
			                 "outside the arena of %lld", x->buf, (long long)off,
			                 (long long)nb, (long long)r->arena_bytes);
		out->buf = r->arena;
		out->offset = (uint64_t)off;
		return BURN_OK;
	case LK_INPUT:
		if (x->index < 0 || x->index >= g->nin)
			break;
		if (!r->in[x->index]) {
			TRY(vkd_buf_create(c, r->d, (size_t)nb, &r->in[x->index]));
			memcpy(vkd_buf_ptr(r->in[x->index]), in[x->index], (size_t)nb);
		}
		out->buf = r->in[x->index];
		return BURN_OK;
	case LK_OUTPUT:
		if (x->index < 0 || x->index >= g->nout)
			break;
		if (!r->out[x->index]) {
			TRY(vkd_buf_create(c, r->d, (size_t)nb, &r->out[x->index]));
			r->obytes[x->index] = nb;
		}
		r->wrote[x->index] = 1;
		out->buf = r->out[x->index];
		return BURN_OK;
	}
	return burn_fail(c, BURN_ERR_INTERNAL, "vulkan: a launch argument of kind %d", x->kind);
}

/* One kernel's shaders, compiled and validated. */
typedef struct KShaders {
	GlslShader *sh;
	int n;
	uint32_t **spv;
	size_t *nw;
} KShaders;

static void
kshaders_free(KShaders *ks, int nk)
{
	for (int i = 0; ks && i < nk; i++) {
		for (int j = 0; ks[i].spv && j < ks[i].n; j++)
			free(ks[i].spv[j]);
		free(ks[i].spv);
		free(ks[i].nw);
		glsl_shaders_free(ks[i].sh, ks[i].n);
	}
	free(ks);
}

/* Every kernel's shaders to validated SPIR-V, before any device is
 * touched (so a machine without one still checks them all). */
static int
compile_all(Ctx *c, const Compiled *m, KShaders **out)
{
	KShaders *ks = calloc((size_t)m->prog.nkernel + 1, sizeof *ks);
	int rc = ks ? BURN_OK : burn_fail(c, BURN_ERR_NOMEM, "vulkan: out of memory");

	for (int i = 0; i < m->prog.nkernel && !rc; i++) {
		KShaders *k = &ks[i];
		if ((rc = glsl_render_shaders(c, m->prog.kernel[i], &k->sh, &k->n)))
			break;
		k->spv = calloc((size_t)k->n + 1, sizeof *k->spv);
		k->nw = calloc((size_t)k->n + 1, sizeof *k->nw);
		if (!k->spv || !k->nw) {
			rc = burn_fail(c, BURN_ERR_NOMEM, "vulkan: out of memory");
			break;
		}
		for (int j = 0; j < k->n && !rc; j++)
			rc = spirv_compile(c, k->sh[j].text, k->sh[j].name, &k->spv[j], &k->nw[j]);
	}
	if (rc) {
		kshaders_free(ks, m->prog.nkernel);
		ks = NULL;
	}
	*out = ks;
	return rc;
}

/* Kernel ki's pipelines, and their dispatches recorded. */
static int
record_kernel(Ctx *c, Run *r, const Compiled *m, int ki, const KShaders *ks,
              const void *const *in)
{
	const KKernel *k = m->prog.kernel[ki];
	const Launch *l = &m->plan.launch[ki];
	VkdBind *bind = calloc((size_t)l->narg + 2, sizeof *bind);
	int *bnum = calloc((size_t)l->narg + 2, sizeof *bnum);
	int64_t kd[GLSL_MAX_DIMS];
	int rc = BURN_OK;

	if (!bind || !bnum) {
		free(bind);
		free(bnum);
		return burn_fail(c, BURN_ERR_NOMEM, "vulkan: out of memory");
	}
	if (l->ndim != k->ndim || k->ndim > GLSL_MAX_DIMS)
		rc = burn_fail(c, BURN_ERR_INTERNAL, "vulkan: launch of %s: %d dims for %d "
		               "parameters", k->name, l->ndim, k->ndim);
	/* the kernel's dim arguments: the launch list's expressions at dims */
	for (int i = 0; i < k->ndim && !rc; i++)
		rc = dx_eval(c, l->dim[i], m->plan.ndims, r->dims, m->plan.dims, &kd[i]);
	for (int a = 0; a < l->narg && !rc; a++) {
		rc = bind_arg(c, r, m, &l->arg[a], in, &bind[a]);
		bnum[a] = bind[a].binding;
	}
	for (int i = 0; i < ks->n && !rc; i++) {
		const GlslShader *sh = &ks->sh[i];
		int nb = l->narg;
		int64_t gy = sh->ydim >= 0 ? kd[sh->ydim] - sh->ylo : 1;
		VkdPipe *p = NULL;
		if (sh->grid > vkd_max_groups(r->d, 0)) {
			rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "vulkan %s: shader %s: %lld workgroups, "
			               "the device takes %u", vkd_describe(r->d), sh->name,
			               (long long)sh->grid, vkd_max_groups(r->d, 0));
			break;
		}
		if (gy > vkd_max_groups(r->d, 1)) {
			rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "vulkan %s: shader %s: %lld items (y "
			               "workgroups), the device takes %u", vkd_describe(r->d),
			               sh->name, (long long)gy, vkd_max_groups(r->d, 1));
			break;
		}
		if (gy <= 0)
			continue;   /* no items: nothing to run */
		if (sh->spill) {
			bind[nb].binding = bnum[nb] = k->nbuf;
			bind[nb].buf = r->spill;
			bind[nb].offset = 0;
			bind[nb].range = 8 * (uint64_t)(k->nvar ? k->nvar : 1);
			nb++;
		}
		if ((rc = vkd_pipe_create(c, r->d, ks->spv[i], ks->nw[i], bnum, nb, 8 * k->ndim,
		                          sh->name, &p)))
			break;
		if (r->npipe == r->cappipe) {
			int cap = r->cappipe ? 2 * r->cappipe : 16;
			VkdPipe **np = realloc(r->pipe, (size_t)cap * sizeof *np);
			if (!np) {
				vkd_pipe_destroy(r->d, p);
				rc = burn_fail(c, BURN_ERR_NOMEM, "vulkan: out of memory");
				break;
			}
			r->pipe = np;
			r->cappipe = cap;
		}
		r->pipe[r->npipe++] = p;
		rc = vkd_cmd_dispatch(c, r->cmd, p, bind, nb, (uint32_t)sh->grid, (uint32_t)gy, kd);
	}
	free(bind);
	free(bnum);
	return rc;
}

static int
vulkan_run_dims(Ctx *c, const Compiled *m, const int64_t *dims, const void *const *in,
                void *const *out, void *arena)
{
	const Graph *g = m->g;
	Run r;
	KShaders *ks = NULL;
	int rc;
	int64_t spill = 16, abytes = m->plan.arena_bytes;

	(void)arena;
	memset(&r, 0, sizeof r);
	if (m->plan.ndims && !dims)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "vulkan: dims known at run time "
		                 "(bind them: --dim)");
	if (m->plan.nkernels != m->prog.nkernel)
		return burn_fail(c, BURN_ERR_INTERNAL, "vulkan: %d launches for %d kernels",
		                 m->plan.nkernels, m->prog.nkernel);
	r.dims = m->plan.ndims ? dims : NULL;
	if (m->plan.ndims)
		TRY(plan_arena_at(c, &m->plan, dims, &abytes));
	r.arena_bytes = abytes;
	TRY(compile_all(c, m, &ks));
	if ((rc = vkd_open(c, &r.d))) {
		kshaders_free(ks, m->prog.nkernel);
		return rc;
	}
	for (int i = 0; i < m->prog.nkernel; i++)
		if (8 * (int64_t)m->prog.kernel[i]->nvar > spill)
			spill = 8 * (int64_t)m->prog.kernel[i]->nvar;
	r.in = calloc((size_t)g->nin + 1, sizeof *r.in);
	r.out = calloc((size_t)g->nout + 1, sizeof *r.out);
	r.w = calloc((size_t)g->nval + 1, sizeof *r.w);
	r.wrote = calloc((size_t)g->nout + 1, 1);
	r.obytes = calloc((size_t)g->nout + 1, sizeof *r.obytes);
	rc = !r.in || !r.out || !r.w || !r.wrote || !r.obytes
	             ? burn_fail(c, BURN_ERR_NOMEM, "vulkan: out of memory") : BURN_OK;
	if (!rc)
		rc = vkd_buf_create(c, r.d, (size_t)abytes + 64, &r.arena);
	if (!rc)
		rc = vkd_buf_create(c, r.d, (size_t)spill, &r.spill);
	if (!rc)
		rc = vkd_cmd_begin(c, r.d, &r.cmd);
	for (int i = 0; i < m->prog.nkernel && !rc; i++) {
		/* a run-time If's branch whose condition is an input: known
		 * while recording (one on the device runs anyway: passes.h) */
		const Launch *l = &m->plan.launch[i];
		LaunchMem mem = { in, NULL, NULL, 0 };
		int skip = 0;
		if (l->guard && l->guard->kind == LK_INPUT &&
		    (rc = launch_skip(c, g, &m->plan, l, r.dims, &mem, &skip)))
			break;
		if (!skip)
			rc = record_kernel(c, &r, m, i, &ks[i], in);
	}
	if (!rc)
		rc = vkd_cmd_run(c, r.cmd, "running the model's kernels");
	for (int i = 0; i < g->nout && !rc; i++) {
		int64_t nb;
		const void *src;
		if ((rc = plan_bytes_at(c, g, &m->plan, g->out[i], r.dims, &nb)))
			break;
		if (nb <= 0)
			continue;
		if (r.wrote[i] && nb > r.obytes[i])
			rc = burn_fail(c, BURN_ERR_INTERNAL, "vulkan: output %d of %lld bytes bound "
			               "as %lld", i, (long long)nb, (long long)r.obytes[i]);
		else if (r.wrote[i])
			memcpy(out[i], vkd_buf_ptr(r.out[i]), (size_t)nb);
		else if ((src = plan_output_source(g, i, in, out)))
			memcpy(out[i], src, (size_t)nb);
		else
			rc = burn_fail(c, BURN_ERR_INTERNAL, "vulkan: output %d has no value", i);
	}
	vkd_cmd_free(r.cmd);
	for (int i = 0; i < r.npipe; i++)
		vkd_pipe_destroy(r.d, r.pipe[i]);
	free(r.pipe);
	vkd_buf_destroy(r.d, r.arena);
	vkd_buf_destroy(r.d, r.spill);
	for (int i = 0; r.in && i < g->nin; i++)
		vkd_buf_destroy(r.d, r.in[i]);
	for (int i = 0; r.out && i < g->nout; i++)
		vkd_buf_destroy(r.d, r.out[i]);
	for (int v = 0; r.w && v < g->nval; v++)
		vkd_buf_destroy(r.d, r.w[v]);
	free(r.in); free(r.out); free(r.w); free(r.wrote); free(r.obytes);
	kshaders_free(ks, m->prog.nkernel);
	return rc;
}

static int
vulkan_run(Ctx *c, const Compiled *m, const void *const *in, void *const *out, void *arena)
{
	return vulkan_run_dims(c, m, NULL, in, out, arena);
}

const Backend backend_vulkan = {
	.name = "vulkan",
	.about = "Vulkan compute: GLSL 450 shaders (--emit=render) compiled to\n"
	         "SPIR-V in process (glslang), validated (SPIRV-Tools), run on a\n"
	         "Vulkan device (check; libvulkan.so.1 loaded at run time)",
	.target = &target_vulkan,
	.ext = "glsl",
	.render_kernel = glsl_render_kernel,
	.emit_module = emit,
	.run = vulkan_run,
	.run_dims = vulkan_run_dims,
};

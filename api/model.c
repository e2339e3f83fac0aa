/*
 * model.c - ONNX models through libburn (include/burn.h, "models"): a
 * model file compiled once for the host, then run on caller buffers; what
 * the Python module (python/burncc) calls.
 *
 * The compilation is burncc's (onnx_load_file and burn_compile_graph, as
 * `burncc MODEL.onnx`) for the llvm target, its kernels compiled in
 * process through the context's disk cache, exactly as the eager API's
 * programs (realise.c); a build without LLVM runs the kernels in the
 * kernel-IR interpreter instead.  A model holds its compiled program, the
 * JIT'd code and an arena of plan.arena_bytes: nothing is allocated per
 * run.
 */
#include <stdlib.h>
#include <string.h>
#include "../passes/passes.h"
#include "../codegen/target_iface.h"
#include "../frontend/onnx.h"
#ifdef BURN_HAVE_LLVM
#include "../codegen/llvm/jit.h"
#endif
#include "../runtime/parallel.h"
#include "internal.h"

struct burn_model {
	burn_ctx *ctx;       /* borrowed: must outlive the model */
	Compiled *m;
#ifdef BURN_HAVE_LLVM
	LlvmJit *jit;
#endif
	void *arena;         /* plan.arena_bytes, BURN_ARENA_ALIGN-aligned */
};

burn_status
burn_model_load(burn_ctx *ctx, const char *path, int ndims, const char *const *names,
                const int64_t *values, burn_model **out)
{
	DimBind *bind = NULL;
	CompileOpts o = { 0 };
	burn_model *bm;
	int rc = BURN_OK;

	if (!ctx)
		return BURN_STATUS_INVALID;
	api_begin(ctx);
	if (!out || !path || ndims < 0 || (ndims && (!names || !values)))
		return api_status(burn_fail(&ctx->c, BURN_ERR_INVALID, "burn_model_load: "
		                            "out, path or the dims are NULL"));
	*out = NULL;
	if (!(bm = calloc(1, sizeof *bm)) ||
	    (ndims && !(bind = calloc((size_t)ndims, sizeof *bind)))) {
		free(bm);
		return api_status(burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory"));
	}
	for (int i = 0; i < ndims; i++) {
		if (!names[i] || values[i] < 0) {
			rc = burn_fail(&ctx->c, BURN_ERR_INVALID, "burn_model_load: dim %d: "
			               "no name, or a negative value", i);
			goto fail;
		}
		bind[i].name = names[i];
		bind[i].value = values[i];
	}
	o.nbind = ndims;
	o.bind = bind;
#ifdef BURN_HAVE_LLVM
	o.target = &target_llvm;
#endif
	bm->ctx = ctx;
	ctx->c.file = path;
	{
		Graph *g;
		rc = onnx_load_file(&ctx->c, path, &g);
		if (!rc)
			rc = burn_compile_graph(&ctx->c, g, &o, &bm->m);
	}
	if (!rc && bm->m->plan.ndims > 0)
		rc = burn_fail(&ctx->c, BURN_ERR_UNSUPPORTED, "the model has symbolic dims "
		               "with no value: give each one (dims)");
#ifdef BURN_HAVE_LLVM
	if (!rc) {
		/* burn_options.cache_dir: NULL the default directory ("" to
		 * the JIT), "" none (NULL to the JIT) */
		LlvmJitOpts jo = { 0 };
		jo.cache_dir = !ctx->opt.cache_dir ? "" : *ctx->opt.cache_dir ?
		               ctx->opt.cache_dir : NULL;
		jo.cache_max_bytes = ctx->opt.cache_bytes;
		rc = llvm_jit_compile_opts(&ctx->c, &bm->m->prog, &jo, &bm->jit);
	}
#endif
	ctx->c.file = ctx->c.node = ctx->c.op = NULL;
	if (!rc && bm->m->plan.arena_bytes > 0) {
		size_t nb = ((size_t)bm->m->plan.arena_bytes + BURN_ARENA_ALIGN - 1) /
		            BURN_ARENA_ALIGN * BURN_ARENA_ALIGN;
		if (!(bm->arena = aligned_alloc(BURN_ARENA_ALIGN, nb)))
			rc = burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
	}
fail:
	free(bind);
	if (rc) {
		burn_model_destroy(bm);
		return api_status(rc);
	}
	*out = bm;
	return BURN_STATUS_OK;
}

void
burn_model_destroy(burn_model *bm)
{
	if (!bm)
		return;
#ifdef BURN_HAVE_LLVM
	llvm_jit_free(bm->jit);
#endif
	if (bm->m)
		burn_compiled_destroy(bm->m);
	free(bm->arena);
	free(bm);
}

int
burn_model_num_inputs(const burn_model *bm)
{
	return bm ? bm->m->g->nin : 0;
}

int
burn_model_num_outputs(const burn_model *bm)
{
	return bm ? bm->m->g->nout : 0;
}

burn_status
burn_model_tensor(const burn_model *bm, int io, int i, burn_model_info *out)
{
	const Graph *g;
	const Value *v;

	if (!bm || !out || (io != 0 && io != 1))
		return BURN_STATUS_INVALID;
	g = bm->m->g;
	if (i < 0 || i >= (io ? g->nout : g->nin))
		return BURN_STATUS_INVALID;
	v = GV(g, io ? g->out[i] : g->in[i]);
	out->name = v->name ? v->name : "";
	out->dtype = (burn_dtype)v->dtype;
	out->rank = v->rank;
	out->dims = v->dim;
	out->bytes = value_nbytes(v);
	return BURN_STATUS_OK;
}

burn_status
burn_model_run(burn_model *bm, const void *const *inputs, void *const *outputs)
{
	burn_ctx *ctx;
	int rc;

	if (!bm)
		return BURN_STATUS_INVALID;
	ctx = bm->ctx;
	api_begin(ctx);
	for (int i = 0; i < bm->m->g->nin; i++)
		if (!inputs || !inputs[i])
			return api_status(burn_fail(&ctx->c, BURN_ERR_INVALID, "input %d is NULL", i));
	for (int i = 0; i < bm->m->g->nout; i++)
		if (!outputs || !outputs[i])
			return api_status(burn_fail(&ctx->c, BURN_ERR_INVALID, "output %d is NULL", i));
	if (ctx->opt.threads > 0)
		burn_threads_local(ctx->opt.threads);
#ifdef BURN_HAVE_LLVM
	rc = llvm_jit_run(&ctx->c, bm->jit, bm->m, inputs, outputs, bm->arena);
#else
	rc = compiled_run_interp(&ctx->c, bm->m, inputs, outputs);
#endif
	if (ctx->opt.threads > 0)
		burn_threads_local(0);
	return api_status(rc);
}

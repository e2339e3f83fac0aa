/*
 * target_wasm.c - the wasm target behind the backend interface: the
 * freestanding C module (codegen/c/emit_c.c, EmitC.freestanding) for the
 * wasm description (targets/wasm.c), followed by its WebAssembly exports.
 *
 * `burncc MODEL.onnx --target wasm -o NAME.c` writes that C; `-o
 * NAME.wasm` also builds it with clang --target=wasm32 (tools/wasm_build.c).
 * The exports are what the JavaScript loader (targets/wasm/burncc.mjs)
 * calls, each under a fixed export name, so one loader serves every model:
 *
 *   num_inputs(), num_outputs()     counts
 *   input(i), output(i)             address in memory of tensor i's buffer
 *   name(io, i), dtype(io, i),      tensor i of the inputs (io 0) or the
 *   rank(io, i), dim(io, i, d),     outputs (io 1), from PREFIX_inputs /
 *   bytes(io, i)                    PREFIX_outputs: a NUL-terminated name,
 *                                   ONNX's dtype code, dims and bytes (as
 *                                   doubles: JavaScript numbers)
 *   run()                           PREFIX_run_v on those buffers and the
 *                                   arena: PREFIX_OK (0) or an error code
 *   arena_bytes()                   the arena's size
 *
 * The buffers and the arena are static, so the module's memory is laid out
 * once at instantiation and never grows: views the loader makes on it stay
 * valid.  Unlike the C module itself, the exports keep state (those
 * buffers): one instance runs one call at a time, which is what a page's
 * single JavaScript thread does.  The section is inside `#if
 * defined(__wasm__)`, so the same file still builds, exports aside, with
 * any C99 compiler.  Sizes must be known (no --dynamic-dim).
 */
#include "../target_iface.h"
#include "../c/emit_c.h"
#include "../c/render_c.h"

/* One static buffer per input (io "in") or output ("out"), 16-byte
 * aligned for SIMD128 loads. */
static void
buffers(FILE *f, const Graph *g, const char *P, const char *io, const int *vals, int n)
{
	for (int i = 0; i < n; i++) {
		int64_t nb = value_nbytes(GV(g, vals[i]));
		fprintf(f, "static unsigned char %s_wasm_%s%d_[%lld] __attribute__((aligned(16)));\n",
		        P, io, i, (long long)(nb > 0 ? nb : 1));
	}
}

/* The pointer table over those buffers. */
static void
table(FILE *f, const char *P, const char *cv, const char *io, int n)
{
	fprintf(f, "\tstatic %svoid *const %s[] = {", cv, io);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%s_wasm_%s%d_", i ? ", " : "", P, io, i);
	fprintf(f, "%s};\n", n ? "" : "0");
}

static int
emit_wasm(Ctx *c, const Compiled *m, const ModuleOpts *o, FILE *src, FILE *hdr)
{
	EmitC e = { o->prefix, o->header_name, o->source, 1 };
	const Graph *g = m->g;
	const char *P = o->prefix;
	int rc;

	if (m->plan.ndims > 0)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "--target wasm: the model has "
		                 "dims known only at run time (--dynamic-dim); give them "
		                 "with --dim NAME=N");
	for (int i = 0; i < g->nin + g->nout; i++)
		if (value_nbytes(GV(g, i < g->nin ? g->in[i] : g->out[i - g->nin])) < 0)
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "--target wasm: an input "
			                 "or output has no known size");
	if ((rc = emit_c_module(c, g, &m->prog, &m->plan, &e, src, hdr)))
		return rc;

	fprintf(src, "\n/* ---- WebAssembly exports (burncc --target wasm; see "
	        "targets/wasm/burncc.mjs) ---- */\n#if defined(__wasm__)\n");
	fprintf(src, "#define %s_EXPORT_(n) __attribute__((export_name(n)))\n", P);
	fprintf(src, "static unsigned char %s_wasm_arena_[%lld] __attribute__((aligned(64)));\n",
	        P, (long long)(m->plan.arena_bytes > 0 ? m->plan.arena_bytes : 1));
	buffers(src, g, P, "in", g->in, g->nin);
	buffers(src, g, P, "out", g->out, g->nout);
	fprintf(src,
	        "static const %s_tensor_info *%s_wasm_info_(int io, int i)\n{\n"
	        "\tif (io == 0 && i >= 0 && i < %d) return &%s_inputs[i];\n"
	        "\tif (io == 1 && i >= 0 && i < %d) return &%s_outputs[i];\n"
	        "\treturn 0;\n}\n", P, P, g->nin, P, g->nout, P);
	fprintf(src, "%s_EXPORT_(\"num_inputs\") int %s_wasm_num_inputs(void) { return %d; }\n",
	        P, P, g->nin);
	fprintf(src, "%s_EXPORT_(\"num_outputs\") int %s_wasm_num_outputs(void) { return %d; }\n",
	        P, P, g->nout);
	fprintf(src, "%s_EXPORT_(\"arena_bytes\") double %s_wasm_arena_bytes(void) "
	        "{ return %lld; }\n", P, P, (long long)m->plan.arena_bytes);
	fprintf(src, "%s_EXPORT_(\"input\") void *%s_wasm_input(int i)\n{\n", P, P);
	table(src, P, "", "in", g->nin);
	fprintf(src, "\treturn i >= 0 && i < %d ? in[i] : 0;\n}\n", g->nin);
	fprintf(src, "%s_EXPORT_(\"output\") void *%s_wasm_output(int i)\n{\n", P, P);
	table(src, P, "", "out", g->nout);
	fprintf(src, "\treturn i >= 0 && i < %d ? out[i] : 0;\n}\n", g->nout);
	fprintf(src,
	        "%s_EXPORT_(\"name\") const char *%s_wasm_name(int io, int i)\n"
	        "{ const %s_tensor_info *t = %s_wasm_info_(io, i); return t ? t->name : 0; }\n"
	        "%s_EXPORT_(\"dtype\") int %s_wasm_dtype(int io, int i)\n"
	        "{ const %s_tensor_info *t = %s_wasm_info_(io, i); return t ? t->dtype : -1; }\n"
	        "%s_EXPORT_(\"rank\") int %s_wasm_rank(int io, int i)\n"
	        "{ const %s_tensor_info *t = %s_wasm_info_(io, i); return t ? t->rank : -1; }\n"
	        "%s_EXPORT_(\"dim\") double %s_wasm_dim(int io, int i, int d)\n"
	        "{ const %s_tensor_info *t = %s_wasm_info_(io, i);\n"
	        "  return t && d >= 0 && d < t->rank ? (double)t->dims[d] : -1; }\n"
	        "%s_EXPORT_(\"bytes\") double %s_wasm_bytes(int io, int i)\n"
	        "{ const %s_tensor_info *t = %s_wasm_info_(io, i); return t ? (double)t->bytes : -1; }\n",
	        P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P);
	fprintf(src, "%s_EXPORT_(\"run\") int %s_wasm_run(void)\n{\n", P, P);
	table(src, P, "const ", "in", g->nin);
	table(src, P, "", "out", g->nout);
	fprintf(src, "\treturn %s_run_v(in, out, %s_wasm_arena_);\n}\n#endif\n", P, P);
	return ferror(src) ? burn_fail(c, BURN_ERR_IO, "write error") : BURN_OK;
}

const Backend backend_wasm = {
	.name = "wasm",
	.about = "WebAssembly for the browser: freestanding C with exports;\n"
	         "-o NAME.wasm builds it (clang --target=wasm32 -msimd128,\n"
	         "wasm-ld), targets/wasm/burncc.mjs loads it",
	.target = &target_wasm,
	.ext = "c",
	.render_kernel = render_c_kernel_free,
	.emit_module = emit_wasm,
};

/*
 * spirv.c - GLSL -> SPIR-V through glslang's C interface, checked by
 * SPIRV-Tools (spirv.h).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>
#include <spirv-tools/libspirv.h>
#include "spirv.h"
#include "render_glsl.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_ok;

static void
init(void)
{
	init_ok = glslang_initialize_process();
}

int
spirv_validate(Ctx *c, const uint32_t *words, size_t n, const char *what)
{
	spv_context ctx = spvContextCreate(SPV_ENV_VULKAN_1_2);
	spv_diagnostic diag = NULL;
	spv_const_binary_t bin = { words, n };
	spv_result_t r;
	int rc = BURN_OK;

	if (!ctx)
		return burn_fail(c, BURN_ERR_NOMEM, "spirv: out of memory");
	r = spvValidate(ctx, &bin, &diag);
	if (r != SPV_SUCCESS)
		rc = burn_fail(c, BURN_ERR_INTERNAL, "spirv %s: the validator refuses the module: %s",
		               what, diag && diag->error ? diag->error : "(no diagnostic)");
	spvDiagnosticDestroy(diag);
	spvContextDestroy(ctx);
	return rc;
}

int
spirv_disassemble(Ctx *c, const uint32_t *words, size_t n, FILE *f)
{
	spv_context ctx = spvContextCreate(SPV_ENV_VULKAN_1_2);
	spv_text text = NULL;
	spv_diagnostic diag = NULL;
	int rc = BURN_OK;

	if (!ctx)
		return burn_fail(c, BURN_ERR_NOMEM, "spirv: out of memory");
	if (spvBinaryToText(ctx, words, n, SPV_BINARY_TO_TEXT_OPTION_INDENT |
	                    SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES, &text, &diag) != SPV_SUCCESS)
		rc = burn_fail(c, BURN_ERR_INTERNAL, "spirv: cannot disassemble: %s",
		               diag && diag->error ? diag->error : "?");
	else
		fwrite(text->str, 1, text->length, f);
	spvTextDestroy(text);
	spvDiagnosticDestroy(diag);
	spvContextDestroy(ctx);
	return rc;
}

int
spirv_compile(Ctx *c, const char *glsl, const char *what, uint32_t **words, size_t *n)
{
	glslang_input_t in;
	glslang_shader_t *sh = NULL;
	glslang_program_t *pr = NULL;
	int rc = BURN_OK;
	size_t len;

	*words = NULL;
	*n = 0;
	pthread_once(&once, init);
	if (!init_ok)
		return burn_fail(c, BURN_ERR_INTERNAL, "spirv: glslang did not initialise");
	memset(&in, 0, sizeof in);
	in.language = GLSLANG_SOURCE_GLSL;
	in.stage = GLSLANG_STAGE_COMPUTE;
	in.client = GLSLANG_CLIENT_VULKAN;
	in.client_version = GLSLANG_TARGET_VULKAN_1_2;
	in.target_language = GLSLANG_TARGET_SPV;
	in.target_language_version = GLSLANG_TARGET_SPV_1_5;
	in.code = glsl;
	in.default_version = 450;
	in.default_profile = GLSLANG_NO_PROFILE;
	in.messages = GLSLANG_MSG_DEFAULT_BIT | GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT;
	in.resource = glslang_default_resource();
	if (!(sh = glslang_shader_create(&in)))
		return burn_fail(c, BURN_ERR_NOMEM, "spirv: out of memory");
	if (!glslang_shader_preprocess(sh, &in) || !glslang_shader_parse(sh, &in)) {
		rc = burn_fail(c, BURN_ERR_INTERNAL, "spirv %s: glslang: %s", what,
		               glslang_shader_get_info_log(sh));
		goto out;
	}
	if (!(pr = glslang_program_create())) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "spirv: out of memory");
		goto out;
	}
	glslang_program_add_shader(pr, sh);
	if (!glslang_program_link(pr, in.messages)) {
		rc = burn_fail(c, BURN_ERR_INTERNAL, "spirv %s: glslang link: %s", what,
		               glslang_program_get_info_log(pr));
		goto out;
	}
	glslang_program_SPIRV_generate(pr, GLSLANG_STAGE_COMPUTE);
	len = glslang_program_SPIRV_get_size(pr);
	if (!len || !(*words = malloc(len * sizeof **words))) {
		rc = burn_fail(c, len ? BURN_ERR_NOMEM : BURN_ERR_INTERNAL,
		               "spirv %s: glslang made no SPIR-V", what);
		goto out;
	}
	glslang_program_SPIRV_get(pr, *words);
	*n = len;
	rc = spirv_validate(c, *words, len, what);
	if (rc) {
		free(*words);
		*words = NULL;
		*n = 0;
	}
out:
	if (pr)
		glslang_program_delete(pr);
	glslang_shader_delete(sh);
	return rc;
}

int
spirv_emit_program(Ctx *c, const KProgram *p, FILE *f)
{
	int rc = BURN_OK;

	for (int i = 0; i < p->nkernel && !rc; i++) {
		GlslShader *sh;
		int n;
		TRY(glsl_render_shaders(c, p->kernel[i], &sh, &n));
		for (int j = 0; j < n && !rc; j++) {
			uint32_t *w;
			size_t nw;
			if ((rc = spirv_compile(c, sh[j].text, sh[j].name, &w, &nw)))
				break;
			fprintf(f, "; ---- shader %s: dispatch %lld x %lld", sh[j].name,
			        (long long)sh[j].grid, (long long)sh[j].block);
			if (sh[j].ydim >= 0)   /* a peeled kernel's items along y */
				fprintf(f, ", y: %s items",
				        p->kernel[i]->var[sh[j].ydim].name ? p->kernel[i]->var[sh[j].ydim].name
				                                           : "dim");
			fprintf(f, ", %zu words, valid\n", nw);
			rc = spirv_disassemble(c, w, nw, f);
			free(w);
		}
		glsl_shaders_free(sh, n);
	}
	return rc;
}

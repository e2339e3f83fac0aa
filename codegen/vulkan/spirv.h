/*
 * spirv.h - GLSL compute shaders to validated SPIR-V, in process.
 *
 * glslang's C interface compiles (for Vulkan 1.2, SPIR-V 1.5) and
 * SPIRV-Tools' validator (spvValidateBinary) checks every module before
 * anything uses it, so a module the driver gets is one the spec accepts.
 * glslang's process state is set up once (pthread_once) and kept.
 */
#ifndef BURN_SPIRV_H
#define BURN_SPIRV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "../../ir/base.h"

/* Compile glsl (NUL-terminated) to SPIR-V: *words malloc'd (*n words),
 * owned by the caller.  what names the shader in messages, which carry
 * glslang's log.  Then spirv_validate. */
int spirv_compile(Ctx *c, const char *glsl, const char *what, uint32_t **words, size_t *n);
/* SPIRV-Tools' validator for Vulkan 1.2; the message of a failure
 * carries the validator's diagnostic. */
int spirv_validate(Ctx *c, const uint32_t *words, size_t n, const char *what);
/* The disassembly (spirv-dis's text) of a module to f. */
int spirv_disassemble(Ctx *c, const uint32_t *words, size_t n, FILE *f);

/* Every kernel of p rendered (render_glsl.h), compiled and validated,
 * each module's disassembly to f after a comment naming its shader and
 * dispatch (burncc --target vulkan --emit=spirv). */
struct KProgram;
int spirv_emit_program(Ctx *c, const struct KProgram *p, FILE *f);

#endif

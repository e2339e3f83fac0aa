/*
 * render_glsl.h - kernel IR -> GLSL 450 compute shaders, for the vulkan
 * target (compiled to SPIR-V in process by codegen/vulkan/spirv.c).
 *
 * A kernel is cut into the segments of the PTX renderer (render_ptx.h,
 * ptx_segments): each top-level statement mapped onto a grid is one
 * shader of local_size_x = its threads, dispatched with its blocks; each
 * run of other top-level statements is a shader of one invocation.  They
 * run in order, with a memory barrier between dispatches.
 *
 * Bindings (descriptor set 0): global buffer b of the kernel is binding
 * b, std430, of the buffer's element type (bool as uint8_t; the storage
 * types f16, bf16 and float8 arrive legalised as their bits, uint16_t or
 * uint8_t).  A variable set in one segment and read in another travels
 * through the spill buffer, binding k->nbuf: 8 bytes per variable at
 * index v, stored by the one-invocation segment that sets it and loaded
 * by the others at their start.  Local buffers are private arrays, zeroed
 * at the start (the interpreter's meaning), shared buffers `shared`
 * arrays; a local buffer used by several segments is unsupported here.
 *
 * Run-time dims (--dynamic-dim): a kernel with dim parameters reads their
 * values from a push-constant block, `int64_t d[ndim]` at offset 0 (8
 * bytes a dim, at most GLSL_MAX_DIMS: 128 bytes, what every device
 * takes), copied into the dim variables at the start; a segment with the
 * items of a peeled kernel (PtxSeg.ydim) sets the item variable from
 * gl_WorkGroupID.y.  Global buffers are runtime arrays, so their extents
 * are the bindings' ranges; a local or shared buffer sized by a dim is
 * unsupported.
 *
 * Every expression node is evaluated once per statement into a temporary
 * (the kernel IR is a DAG), so the text stays linear in its size.
 */
#ifndef BURN_RENDER_GLSL_H
#define BURN_RENDER_GLSL_H

#include <stdio.h>
#include "../../ir/kir.h"
#include "../ptx/render_ptx.h"

#define GLSL_MAX_DIMS 16

/* One shader of a kernel: its segment (grid and threads) and its GLSL. */
typedef struct GlslShader {
	char name[160];          /* "KERNEL" or "KERNEL_sI" */
	int64_t grid, block;     /* workgroups x 1 x 1 of block x 1 x 1 */
	int ydim;                /* -1, or the workgroups' y count is dim
	                          * parameter ydim's value less ylo, at
	                          * dispatch (a peeled kernel's items) */
	int64_t ylo;
	int spill;               /* binds the spill buffer (binding nbuf) */
	char *text;              /* malloc'd, NUL-terminated; owned */
} GlslShader;

/* The shaders of k, rendered: *out gets a malloc'd array of *n (free it
 * with glsl_shaders_free).  BURN_ERR_UNSUPPORTED, naming the kernel and
 * the construct, for what the renderer cannot print yet (f64
 * transcendentals, atomics, subgroup and tile statements, more than
 * GLSL_MAX_DIMS dims). */
int glsl_render_shaders(Ctx *c, const KKernel *k, GlslShader **out, int *n);
void glsl_shaders_free(GlslShader *s, int n);

/* Every shader of k, each after a comment line naming it and its
 * dispatch (Backend.render_kernel: --emit=render). */
int glsl_render_kernel(Ctx *c, const KKernel *k, FILE *f);

#endif

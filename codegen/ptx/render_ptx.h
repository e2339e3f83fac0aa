/*
 * render_ptx.h - kernel IR -> PTX (NVIDIA's virtual ISA), for the cuda
 * target.
 *
 * A kernel becomes one or more `.entry` functions, its *segments*: each
 * top-level statement that the GPU schedule mapped onto a grid (a
 * KF_BLOCK_X loop holding a KF_THREAD_X loop) is a segment of its own,
 * launched with that grid; each run of other top-level statements is a
 * segment launched as one thread.  Segments run in order on one stream,
 * so a kernel's top-level statements keep their order.  Every entry takes
 * the kernel's KS_GLOBAL buffers, in buffer order, as .u64 pointers (the
 * launch list's arguments).  Registers die with an entry, so a variable
 * that one segment sets and another reads travels through memory: then
 * every entry of the kernel takes one more .u64 argument, the spill
 * scratch of ptx_spill_bytes, with variable v at byte 8v, which the
 * one-thread segment that sets it stores to at its end and the segments
 * that read it load at their start (such a variable set by a grid, many
 * threads, is BURN_ERR_UNSUPPORTED); and a KS_LOCAL buffer used by several
 * one-thread segments lives there too, at ptx_spill_offset (in a grid a
 * local buffer is private to each thread, as the interpreter runs a thread
 * loop).  Local buffers start zeroed, as the interpreter's do: the
 * caller zeroes the scratch before each kernel, an entry its own .local
 * arrays.
 *
 * See docs/ARCHITECTURE.md, "The PTX renderer", for how each kernel-IR
 * construct maps to PTX.
 */
#ifndef BURN_RENDER_PTX_H
#define BURN_RENDER_PTX_H

#include <stdio.h>
#include "../../ir/kir.h"

#define PTX_SM 90              /* .target sm_90 */
#define PTX_MAX_SEG 256

typedef struct PtxSeg {
	KRef first;        /* first top-level statement */
	int nstmt;         /* statements in the segment */
	int64_t grid;      /* blocks (x) */
	int64_t block;     /* threads per block (x) */
	int spill;         /* the entries take the spill scratch (last) */
	int64_t dshared;   /* bytes of dynamic shared memory to launch with
	                    * (ptx_dyn_shared), 0: static only */
	int ydim;          /* -1; or the items of a peeled kernel: the
	                    * segment is `for item in ylo..D block.y { S }`
	                    * (schedule_gpu), D dim parameter ydim, launched
	                    * with a grid y of D - ylo, the value of the
	                    * launch list's dim expression at launch
	                    * (item = ylo + the block's y index); S, at
	                    * `inner`, is one grid of x or one thread's
	                    * statements, as a segment without items is */
	int64_t ylo;
	KRef inner;        /* S; first itself where ydim < 0 */
} PtxSeg;

/* Kernels whose shared buffers take more than PTX_STATIC_SHARED bytes in
 * all place them in dynamic shared memory (`.extern .shared`), which a
 * launch must ask for by size (and CUDA above 48 KB by a function
 * attribute first): those bytes, or 0 for a kernel of static shared
 * arrays. */
#define PTX_STATIC_SHARED (48 * 1024)
int64_t ptx_dyn_shared(const KKernel *k);

/* The segments of k in launch order (at most cap; more is
 * BURN_ERR_UNSUPPORTED).  An empty kernel has none.  A statement in the
 * items loop of a peeled kernel is a segment of its own (never merged
 * with its neighbours): every item its own block of y, so a variable it
 * sets cannot cross to another segment, nor a local buffer it uses
 * (BURN_ERR_UNSUPPORTED, naming them). */
int ptx_segments(Ctx *c, const KKernel *k, PtxSeg *seg, int cap, int *nseg);

/* What crosses the segments of k (n > 1): cross[v] = 1 for a variable v
 * set in one segment and read in another, cross[k->nvar + b] = 1 for a
 * local buffer b used by several one-thread segments (cross has
 * nvar + nbuf entries, zeroed by the caller).  The Vulkan renderer cuts
 * kernels into the same segments (one compute shader each). */
int ptx_cross(Ctx *c, const KKernel *k, const PtxSeg *seg, int n, unsigned char *cross);

/* The name of segment i of k's entry ("NAME" when k has one segment, else
 * "NAME_sI"; "PREFIX_" before it when prefix is neither NULL nor ""), into
 * buf. */
void ptx_entry_name(const char *prefix, const KKernel *k, int i, int nseg,
                    char *buf, size_t n);

/* The spill scratch of k's entries: its size, and the byte offset of
 * local buffer b in it (every KS_LOCAL buffer has a place, 16-aligned,
 * after 8 bytes per variable). */
int64_t ptx_spill_bytes(const KKernel *k);
int64_t ptx_spill_offset(const KKernel *k, int b);

/* The module header (.version, .target, .address_size). */
void ptx_header(FILE *f, int wg);
/* Whether kernel k has warpgroup tile ops (wgmma: PTX 8.0, sm_90a). */
int ptx_uses_wgmma(const KKernel *k);

/* The entries of k (no header).  Returns status: BURN_ERR_UNSUPPORTED for
 * what the renderer cannot print (f64 transcendentals, vector
 * expressions, shapes of schedule it does not know), with a message that
 * names the kernel and the construct. */
int ptx_render_entries(Ctx *c, const char *prefix, const KKernel *k, FILE *f);

/* A whole module of one kernel: header and entries (Backend.render_kernel). */
int ptx_render_kernel(Ctx *c, const KKernel *k, FILE *f);

/* A whole module of every kernel of p, entries named with prefix. */
int ptx_render_program(Ctx *c, const char *prefix, const KProgram *p, FILE *f);

#endif

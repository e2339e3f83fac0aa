/*
 * gemm.h - the CPU GEMM core of ops_linalg.c (gemm_blocked: register
 * tiles, B in panels; docs/ARCHITECTURE.md, "The CPU GEMM core"), for the
 * lowerings outside that file that build a GEMM inside a kernel of their
 * own (ops_rnn.c: the input projection of every time step, and each
 * step's recurrent product).
 */
#ifndef BURN_GEMM_H
#define BURN_GEMM_H

#include "lower.h"

/*
 * A matrix operand.  Strided (pan == 0): element [r, c] is
 * buf[off + r*rs + c*cs].  Packed (pan != 0), in the panels the register
 * tiles read, each panel contiguous and in the order a tile walks it:
 *
 *   B (K x N) in column panels as wide as the tiles (t->nr, the last one
 *   N % t->nr, or `last` when that is set: padded with zero columns to
 *   a multiple of the vector width, so that its tile vectorizes too):
 *   element [k, j0 + c] of the panel from column j0, of width w, is
 *   buf[off + j0*K + k*w + c];
 *   A (M x K) in row panels as tall as the tiles (MR, the last one M % MR):
 *   element [i0 + r, k] of the panel from row i0, of height h, is
 *   buf[off + i0*K + k*h + r].
 *
 * So per k a tile reads one contiguous run of B (its vectors) and one of A
 * (its broadcasts), instead of rows a whole matrix row apart.
 */
typedef struct Mat {
	int buf;            /* buffer index; -1: absent (C only) */
	KRef off;           /* index of element [0, 0] */
	int64_t rs, cs;     /* strides of rows and columns (0: broadcast) */
	int pan;            /* packed in panels (see above) */
	int64_t last;       /* B: width the last panel is read as (packed:
	                     * its padded width; strided: columns past N are
	                     * readable garbage), 0: N % nr */
	int tab;            /* B strided: row k starts at off + buf[tabbuf][k]
	                     * (an i64 constant) instead of off + k*rs */
	int tabbuf;
} Mat;

/* One GEMM: Y[i, j] = alpha * sum_k A[i,k] * B[k,j] + beta * C[i,j] for
 * i < M, j < N, Y rows contiguous from yoff (row stride ldy, or N). */
typedef struct GT {
	int dt;             /* compute dtype */
	int64_t M, N, K;
	Mat a, b, c;
	double alpha, beta;
	int y, acc;         /* output buffer, local accumulator tile */
	KRef yoff;
	int64_t nr;         /* columns of a full tile (gemm_blocked sets it) */
	int bpack;          /* gemm_blocked packs a strided B at run time:
	                     * 1 all of it, 2 only its last, partial panel
	                     * (the full ones read strided) */
	int hasbr;          /* the last panel's tiles read br, not b */
	Mat br;
	int64_t slices;     /* bpack's panels: this many copies (batch_loop's
	                     * slices, 0 or 1: one), slice `slice` used */
	KRef slice;
	int yt;             /* Y stored transposed: element [i, j] at
	                     * yoff + j*M + i (the CPU form only) */
	int64_t ldy;        /* Y's row stride, 0: N (not transposed) */
	Node *epi;          /* the anchor whose fused epilogue the tiles
	                     * apply to each value as they store it (the
	                     * CPU form: gemm_blocked sets it), NULL: a pass
	                     * over each block's rows, or the caller's */
	Lower *lw;          /* with epi: the lowering it belongs to */
} GT;

/* The width of the tiles (and so of B's panels) of an M-row GEMM. */
int64_t lower_gemm_nr(Lower *lw, KB *kb, int64_t M);
/* Whether the target takes the CPU form (B in panels, blocks of rows). */
int lower_gemm_cpu(const Lower *lw);
/* Input k of n, a constant of one or more K x N matrices (element [k, j]
 * of matrix m at m*K*N + k*rs + j*cs), packed at compile time into B
 * panels of width nr: *out the new constant, -1 where k is not constant
 * or the target has no CPU form (then read it strided); *last the padded
 * width of the last panel (pad and one matrix), else 0. */
int lower_gemm_pack(Lower *lw, Node *n, int k, int64_t K, int64_t N, int64_t rs, int64_t cs,
                    int64_t nr, int pad, int *out, int64_t *last);
/* The GEMM t into the kernel kb builds (no fused epilogue); its outermost
 * loop is parallel.  Allocates t->acc. */
void lower_gemm_blocked(Lower *lw, KB *kb, GT *t);

#endif

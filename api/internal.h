/*
 * internal.h - libburn's data structures, shared by the files of api/.
 *
 * The flow (docs/ARCHITECTURE.md, "libburn"):
 *
 *   record   each op appends a Node to ctx->pg (the pending graph, graph
 *            IR) and runs the op's shape/type inference at once; its
 *            results are pending tensors (t->buf NULL, t->val their value)
 *   realise  at a sync point the nodes that live pending tensors need are
 *            cut out (realise.c): walked once into a signature, an exact
 *            encoding of their structure (ops, attributes, dtypes, shapes,
 *            input order, constant values; never the values of realised
 *            tensors), whose hash finds a compiled program in the context's
 *            cache; on a miss the cut becomes a Graph, compiled by the
 *            passes for the llvm target and JIT-compiled
 *   run      the program's kernels are called with the realised buffers
 *            bound as its inputs and fresh pool buffers as its outputs;
 *            then the pending graph is reset (when nothing stays pending)
 *
 * Values of ctx->pg.  Every value has a PVal beside it (ctx->pv, indexed
 * like pg->val).  A value is a leaf of the pending graph when it holds a
 * buffer (pv.buf: a realised tensor read by a pending op, or a pending
 * result realised while other nodes stay pending) or is a placeholder;
 * a value with v->data is a constant (scalars of burn_*_scalar, shapes of
 * burn_reshape, small integer tensors, results inference computed).
 */
#ifndef BURN_API_INTERNAL_H
#define BURN_API_INTERNAL_H

#include <stdatomic.h>
#include "../include/burn.h"
#include "../ir/graph.h"
#include "../runtime/pool.h"
#include "eager.h"

/* The opset burn_op's ops are recorded at (frontend/onnx_load.c's newest). */
#define API_OPSET 21

/* Realised integer tensors of at most this many elements are constants
 * of the cut graph (their values are part of the program), because ops
 * take shapes, axes and indices from them at compile time. */
#define API_CONST_INTS 64

typedef PoolBuf Buf;

struct burn_tensor {
	burn_ctx *ctx;
	int refs;
	int dtype, rank;
	int64_t dim[BURN_MAX_RANK];
	int64_t numel;
	Buf *buf;            /* realised: its buffer (a reference), else NULL */
	uint64_t frozen;     /* 0, or (burn_call_graph_kept's weights) an id
	                      * unique in the context: the buffer is never
	                      * written while t lives, so a program may take
	                      * it as a constant, named by this id */
	int val;             /* its value in ctx->pg when epoch is ctx's, or -1 */
	uint32_t epoch;
	burn_tensor *prev, *next;   /* the context's list of live tensors */
};

typedef struct PVal {
	burn_tensor *t;      /* the live tensor that is this pending value */
	Buf *buf;            /* a leaf's buffer (a reference), or NULL */
	int ph;              /* a placeholder */
	int sym;             /* depends on a placeholder */
	int uses;            /* node inputs reading it */
	uint64_t frozen;     /* a frozen tensor's leaf: its id (a constant
	                      * whose data is the buffer's) */
} PVal;

typedef struct Prog Prog;

struct burn_ctx {
	Ctx c;
	burn_options opt;
	char *cache_dir;        /* opt.cache_dir's own copy, or NULL */
	Pool pool;
	Graph *pg;           /* the pending graph; never NULL */
	PVal *pv;            /* per pg value */
	int cappv;
	uint32_t epoch;      /* bumped when pg is reset */
	uint64_t frozen_ids; /* the last frozen tensor's id */
	int nph;             /* placeholders recorded in pg */
	burn_tensor *live;   /* every live tensor */
	burn_tensor *spare;  /* released tensor objects, for reuse */
	atomic_int interrupt;
	burn_stats st;
	/* the program cache: open addressing on the signature hash */
	Prog **tab;
	int captab, nprog;
	Prog *last;          /* the last realisation's program */
	/* scratch of the realise walk, kept between calls */
	uint64_t *sig;
	int capsig;
	uint32_t *mark;
	int *id, capmark, capid;
	uint32_t stamp;
	int *leaf, *outv, *nodes;
	int capleaf, capout, capnodes;
	void *scratch;       /* programs' arenas (64-aligned) */
	int64_t scratch_bytes;
};

/* ctx.c */
int api_begin(burn_ctx *ctx);            /* clear the message */
burn_status api_status(int code);
int api_tensor_new(burn_ctx *ctx, int dtype, int rank, const int64_t *dims,
                   burn_tensor **out);
void api_buf_unref(burn_ctx *ctx, Buf *b);
int api_buf_new(burn_ctx *ctx, int64_t bytes, Buf **out);
int api_pv_fit(burn_ctx *ctx);           /* ctx->pv covers pg->nval */
int api_check_tensor(burn_ctx *ctx, const burn_tensor *t, const char *what);
/* realise.c */
int api_realise(burn_ctx *ctx);          /* every live non-symbolic tensor */
/* api_realise in two steps: the cut run (its program, leaves and outputs
 * left in *prog, ctx->leaf[0..*nleaf), ctx->outv[0..*nout)), then the
 * pending graph reset if nothing stays pending */
int api_realise_cut(burn_ctx *ctx, Prog **prog, int *nleaf, int *nout);
void api_realise_done(burn_ctx *ctx);
int api_prog_exec(burn_ctx *ctx, Prog *p, void **in, void **out);
int api_prog_replay(burn_ctx *ctx, Prog *p, void **in, Buf **ob);
int api_prog_nin(const Prog *p);
int api_prog_nout(const Prog *p);
void api_reset_pending(burn_ctx *ctx);
void api_prog_free(Prog *p);
int api_prog_dump(burn_ctx *ctx, const Prog *p, int what, FILE *f);
/* record.c */
int api_value_of(burn_ctx *ctx, burn_tensor *t, int *v);
int api_call_graph(burn_ctx *ctx, const Graph *g, burn_tensor **kept,
                   int rt_inputs, int nin, burn_tensor *const *in, int nout,
                   burn_tensor **out);
int api_copy_attr(Ctx *c, Graph *g, int node, const Attr *a);
int api_record(burn_ctx *ctx, int op, int nin, burn_tensor *const *in,
               int nattr, const Attr *attr, int nout, burn_tensor **out);

#endif

/*
 * eager.h - libburn's internal interface, for burncc's own tools (the DSL
 * evaluator, `burncc run`, `burncc repl`, AOT from a script): what the
 * public include/burn.h does not promise to users.  Not installed.
 *
 * Placeholders and tracing.  A placeholder is a tensor with a dtype and a
 * shape and no value: ops on it are recorded like any other, but realising
 * anything that depends on it is an error (BURN_STATUS_INVALID).  A sync
 * realises only what does not depend on a placeholder; the rest stays
 * pending.  burn_trace cuts the pending graph between placeholders and
 * outputs into a standalone Graph (ir/graph.h) that `burncc model.burn -o
 * model.c` compiles ahead of time:
 *   - its inputs are the given placeholders, in order (named as the
 *     placeholders were);
 *   - its outputs are the given tensors, in order ("out0", "out1", ...);
 *   - every realised tensor it reads becomes a constant initializer (a
 *     copy of its values).
 * The pending graph is not changed by tracing.
 *
 * Thread-safety: as burn.h; burn_interrupt alone may be called from
 * another thread or a signal handler while ctx is in use.
 */
#ifndef BURN_API_EAGER_H
#define BURN_API_EAGER_H

#include <stdio.h>
#include "../include/burn.h"
#include "../ir/graph.h"

/* A symbolic input of dtype dt and shape dims (rank of them), named name
 * (copied; NULL: "in<N>").  The handle is released like any other. */
burn_status burn_placeholder(burn_ctx *ctx, burn_dtype dt, int rank,
                             const int64_t *dims, const char *name,
                             burn_tensor **out);
/* Whether t is pending on a placeholder (then burn_read of it fails). */
int burn_tensor_symbolic(const burn_tensor *t);

/* The pending graph from inputs (placeholders, each at most once) to outs
 * as a new Graph, owned by the caller (graph_destroy).  An output may be
 * realised already (it becomes a constant) or be one of the inputs.  It is
 * an error for the outputs to depend on a placeholder not in inputs. */
burn_status burn_trace(burn_ctx *ctx, int nin, burn_tensor *const *inputs,
                       int nout, burn_tensor *const *outs, Graph **g);
/* burn_trace, and *src (malloc'd, g's nval entries; the caller frees it):
 * for each constant of g read from a tensor, that tensor (borrowed: valid
 * while it lives), NULL for every other value.  src may be NULL. */
burn_status burn_trace_src(burn_ctx *ctx, int nin, burn_tensor *const *inputs,
                           int nout, burn_tensor *const *outs, Graph **g,
                           burn_tensor ***src);

/*
 * Inline g (e.g. an ONNX model from onnx_load, after graph_toposort) into
 * ctx's pending graph: g's inputs are bound to in[0..nin-1] (nin must be
 * g->nin; dtypes and shapes must agree, a symbolic dim of g agrees with
 * any size), its constants become realised tensors (copied at each call; see
 * burn_call_graph_kept),
 * and out[0..nout-1] receive handles for g's first nout outputs (nout <=
 * g->nout).  Every node is type-checked as it is recorded, as burn_op's
 * are.  g is only read; it may be destroyed once this returns.  Nodes with
 * subgraph attributes (If, Loop, Scan) are BURN_STATUS_UNSUPPORTED.
 */
burn_status burn_call_graph(burn_ctx *ctx, const Graph *g, int nin,
                            burn_tensor *const *in, int nout, burn_tensor **out);
/*
 * The same, with g's constants made into tensors once: kept has g->nval
 * slots (zeroed before the first call), owned by the caller; a constant
 * that becomes a realised tensor is taken from kept[v], or made and left
 * there.  The caller releases every kept[v] (burn_release) before ctx is
 * destroyed.  A model called in a loop then copies no weights per call
 * (the DSL's imports keep theirs).  Kept tensors hold a handle, so no
 * call ever updates a weight in place.
 */
burn_status burn_call_graph_kept(burn_ctx *ctx, const Graph *g,
                                 burn_tensor **kept, int nin,
                                 burn_tensor *const *in, int nout,
                                 burn_tensor **out);

/*
 * A model bound to ctx for repeated calls: its constants made into kept
 * (frozen) tensors at the first call, as burn_call_graph_kept, and the
 * call boundary reused.  burn_call_run is burn_call_graph with this
 * difference: when every input is realised, the second call with the
 * same input dtypes, shapes and aliasing is realised at once and its
 * program captured, and later such calls replay it (no recording, no
 * compile; stats: captures, replays), their outputs realised.  The
 * call's small integer inputs are program inputs, not constants, unless
 * an op needs their values at compile time.  g must outlive the handle;
 * burn_call_destroy (before ctx is destroyed) releases the kept tensors.
 */
typedef struct burn_call burn_call;
burn_status burn_call_create(burn_ctx *ctx, const Graph *g, burn_call **out);
burn_status burn_call_run(burn_call *cl, int nin, burn_tensor *const *in,
                          int nout, burn_tensor **out);
void burn_call_destroy(burn_call *cl);

/* Ask the realisation running in ctx (or the next one) to stop: it stops
 * between kernels and returns BURN_STATUS_LIMIT "interrupted"; the tensors
 * it was computing stay pending.  Async-signal-safe (one atomic store). */
void burn_interrupt(burn_ctx *ctx);
/* Forget an interrupt no realisation has taken yet (one that came after
 * the last sync of an interrupted statement): the next statement starts
 * clean.  Not for signal handlers. */
void burn_interrupt_clear(burn_ctx *ctx);

/* The pending graph as it stands (borrowed: valid until the next call on
 * ctx that records or realises), or NULL when nothing is pending.  Values
 * whose tensors are realised are inputs of it (their names say so). */
const Graph *burn_ctx_graph(const burn_ctx *ctx);
/* Print the pending graph in the graph IR's text form ("(nothing
 * pending)" when empty). */
burn_status burn_dump_pending(burn_ctx *ctx, FILE *f);

#endif

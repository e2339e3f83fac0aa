/*
 * onnx.h - the ONNX frontend: ModelProto bytes -> graph IR (and back,
 * onnx_save_file).
 *
 * The messages are declared in frontend/onnx.proto (our own subset of ONNX's
 * schema, same field numbers) and decoded by protobuf-c.  Everything the
 * loader returns lives in the Graph's arena; the protobuf-c message is freed
 * before returning.  On error no graph is returned (*out = NULL) and c holds
 * a message naming the file, the node (when there is one) and the reason.
 */
#ifndef BURN_ONNX_H
#define BURN_ONNX_H

#include "../ir/graph.h"

/* Load a model file.  External-data initializers are read from files beside
 * the model (paths may not leave the model's folder). */
int onnx_load_file(Ctx *c, const char *path, Graph **out);
/* Load from memory; dir is where external data lives (NULL: none allowed). */
int onnx_load_bytes(Ctx *c, const uint8_t *data, size_t len, const char *dir,
                    Graph **out);
/* Load a serialized TensorProto (the test_data_set_N/input_K.pb files) into t,
 * allocating from a.  *name (may be NULL) receives the tensor's name. */
/* A graph input's or output's data file as its declaration (ValueDecl)
 * says: one tensor, a sequence's *n elements (*kind VD_SEQ), or an
 * optional's value or none (*kind -1). */
int onnx_load_value_file(Ctx *c, const char *path, Arena *a, int decl, int *kind,
                         Tensor **ts, int *n);
int onnx_load_tensor_file(Ctx *c, const char *path, Arena *a, Tensor *t,
                          const char **name);

/*
 * The other way (frontend/onnx_save.c): g, inferred (every graph input's
 * and output's dtype known), as ONNX ModelProto bytes: its live nodes, its
 * constants as initializers, its inputs and outputs with their types, the
 * default domain at g->opset.  g is only read.  onnx_save_bytes returns
 * malloc'd bytes in *out (the caller frees them); onnx_save_file writes
 * them to PATH.tmp, then renames it over path, so path is never a
 * half-written model.  A graph ONNX cannot hold as written (subgraph
 * attributes, strings, another domain's ops) is refused, naming the node
 * or value.
 */
int onnx_save_bytes(Ctx *c, const Graph *g, uint8_t **out, size_t *len);
int onnx_save_file(Ctx *c, const Graph *g, const char *path);

#endif

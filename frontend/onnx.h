/*
 * onnx.h - the ONNX frontend: ModelProto bytes -> graph IR.
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

#endif

/*
 * compile.h - a model file in, a compiled module out: the frontend and the
 * pass pipeline joined.  The passes never read files; this is where a file
 * becomes a graph.
 */
#ifndef BURN_COMPILE_H
#define BURN_COMPILE_H

#include "../passes/passes.h"

/* Load an ONNX file and compile it (burn_compile_graph). */
int burn_compile_file(Ctx *c, const char *path, const CompileOpts *o,
                      Compiled **out);

#endif

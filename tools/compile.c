/*
 * compile.c - see compile.h.
 */
#include "compile.h"
#include "../frontend/onnx.h"

int
burn_compile_file(Ctx *c, const char *path, const CompileOpts *o,
                  Compiled **out)
{
	Graph *g;

	*out = NULL;
	TRY(onnx_load_file(c, path, &g));
	return burn_compile_graph(c, g, o, out);
}

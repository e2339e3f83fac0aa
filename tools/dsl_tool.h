/*
 * dsl_tool.h - `burncc run`, `burncc repl` and AOT from a .burn script
 * (docs/DSL.md).  The driver side of api/dsl.h: it prints, the vm does
 * not.
 */
#ifndef BURN_DSL_TOOL_H
#define BURN_DSL_TOOL_H

#include "../passes/passes.h"

/* burncc run ... / burncc repl ...: argv[0] is "run" or "repl". */
int dsl_main(int argc, char **argv);

/* Whether path names a script (ends in .burn). */
int dsl_is_script(const char *path);

/*
 * AOT: run the script at path, trace its function entry (NULL: main) into
 * a graph and compile it with o, like burn_compile_file does an ONNX
 * file.  On failure c's message is the error (with its position) and
 * *caret (if not NULL) receives a malloc'd "source line + caret" text, or
 * NULL.
 */
/* The same, stopping at the traced graph (caller owns it); training:
 * trace in training mode (dsl_vm_set_training: Dropouts' noise inputs). */
int dsl_trace_file(Ctx *c, const char *path, const char *entry, int training,
                   Graph **out, char **caret);
int dsl_compile_file(Ctx *c, const char *path, const char *entry,
                     const CompileOpts *o, Compiled **out, char **caret);

#endif

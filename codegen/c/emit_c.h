/*
 * emit_c.h - a lowered, planned graph -> a self-contained C module.
 *
 * The module is two files: NAME.h (the API, documented inside) and NAME.c
 * (weights as const data, one static function per kernel, the run
 * function).  Exported symbols all start with `prefix`: PREFIX_run,
 * PREFIX_run_v, PREFIX_inputs, PREFIX_outputs, PREFIX_strerror,
 * PREFIX_tensor_info, with a blob PREFIX_weights_check (and PREFIX_weights
 * under PREFIX_WEIGHTS_INCBIN), and the PREFIX_* macros (upper case).  The C is C99, uses no malloc and no
 * writable globals, and compiles warning-free with -Wall -Wextra.
 *
 * Names from the model appear only escaped for their place (comments,
 * string literals, unique in_X/out_X parameters; see emit_c.c), so any
 * name gives the same, buildable module with nothing else exported.
 */
#ifndef BURN_EMIT_C_H
#define BURN_EMIT_C_H

#include <stdio.h>
#include "../../passes/passes.h"

typedef struct EmitC {
	const char *prefix;      /* C identifier prefix, e.g. "mlp" */
	const char *header_name; /* what the .c #includes, e.g. "mlp.h" */
	const char *source;      /* model file named in the comments (its last
	                          * path component only), or NULL */
	int freestanding;        /* no libc or libm: the freestanding prelude
	                          * and kernels (render_c.h), byte copies,
	                          * arena pointers cast through void * */
	const char *extra_h;     /* NULL, or declarations added at the end of
	                          * the header (inside its guard and extern
	                          * "C"): burncc train -o, the train step's API */
	const char *extra_c;     /* NULL, or code added at the end of the
	                          * source (after PREFIX_run_v, which it may
	                          * call) */
	FILE *blob;              /* NULL: weights as initialisers in the .c
	                          * (the default).  Else the weights go to
	                          * this stream as one binary blob (layout in
	                          * emit_c.c) and the run functions take it as
	                          * their first argument (--weights=blob) */
	const char *blob_name;   /* the blob's file name as the .c's .incbin
	                          * names it (no folder: reproducible); with
	                          * blob */
	const char *version;     /* NULL, or burncc's version: the header's
	                          * PREFIX_BURNCC_VERSION */
	const char *model_sha256;/* NULL, or the model file's SHA-256 in hex:
	                          * PREFIX_MODEL_SHA256 */
	const TargetCpu *cpu;    /* NULL, or the CPU description the kernels
	                          * were sized for (--cpu): PREFIX_BURNCC_CPU
	                          * and the flags to build with, in a comment */
} EmitC;

/* Write the module.  BURN_ERR_INVALID if prefix is not a C identifier of
 * at most 100 characters or header_name cannot stand in #include "...". */
int emit_c_module(Ctx *c, const Graph *g, const KProgram *p, const Plan *plan,
                  const EmitC *opt, FILE *fc, FILE *fh);

/* Write `static const union { unsigned char b[..]; T v[..]; } ID ATTR =
 * {"..."};`: nb bytes of data (dtype's C type T) as string literals, the
 * weights' form above.  ATTR may be "" (the module's weights use their
 * section macro). */
void emit_c_data(FILE *f, const char *id, const char *attr, int dtype,
                 const void *data, int64_t nb);

/* Text from the model in a comment of generated C (or of PTX, which has
 * C's comments): escaped so that it cannot end the comment, start a line
 * or form a trigraph (emit_c.c says how); the caller puts no `*`, `/` or
 * `?` right before or after it.  Returns the characters written. */
int emit_c_comment(FILE *f, const char *s);
/* " from NAME": the model file's last path component, as comment text. */
void emit_c_source(FILE *f, const char *path);

/* Whether s can stand in #include "s" (printable ASCII, no quote,
 * backslash, trigraph or comment start). */
int emit_c_includable(const char *s);

/* Turn s into a C identifier (letters, digits, _; no leading digit). */
void c_ident(const char *s, char *buf, size_t n);

#endif

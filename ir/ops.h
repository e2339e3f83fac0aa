/*
 * ops.h - op ids and the op table (rows in ops.def).
 */
#ifndef BURN_OPS_H
#define BURN_OPS_H

enum OpClass { OC_ELEM, OC_REDUCE, OC_MATMUL, OC_CONV, OC_MOVE, OC_SHAPE,
               OC_OPAQUE,
               OC_CONTROL /* If, Loop, Scan, SequenceMap: expanded during inference
                           * (passes/ctrlflow.c), never lowered */
               , OC_SEQ   /* sequences and optionals: resolved into tensor
                           * ops during inference (passes/ops_seq.c),
                           * never lowered */
               , OC_FUNC  /* function ops: expanded into the ops they are
                           * made of during inference (passes/ops_func.c),
                           * never lowered */ };
/* Which dtypes an op takes (ops.def's types column): TY_NUM the ones it
 * computes on, TY_ALL also the cast-only ones (float8, float4e2m1, the
 * packed integers: dtype_cast_only), which it converts or moves. */
enum OpTypes { TY_NUM, TY_ALL,
               TY_STR  /* strings too (dtype_is_string): the string ops of
                        * passes/ops_str.c, Equal */,
               TY_MASK_ = 3 };
/* Flags or'd into the types column (ops.c splits them into OpInfo.flags):
 * OF_RANDOM  the op's values are random draws (a counter-based generator,
 *            passes/rng.h): never folded, never merged by CSE, and `burncc
 *            check` compares its outputs, and what depends on them, by
 *            shape, dtype and distribution, not by value
 *            (tools/check_random.h). */
#define OF_RANDOM 0x10

enum OpId {
	OP_NONE_ = 0,
#define OP(name, ...) OP_##name,
#include "ops.def"
#undef OP
	OP_COUNT_
};

typedef struct OpInfo {
	const char *name;   /* ONNX op_type */
	int min_in, max_in, min_out, max_out;
	int cls;            /* OpClass */
	int types;          /* OpTypes: TY_ALL takes the cast-only dtypes too */
	int flags;          /* OF_*: the flags of the types column */
	const char *domain; /* "" for ai.onnx, else the ONNX domain (OPD rows) */
} OpInfo;

/* The infer and lower columns of ops.def point into passes/; they are
 * expanded there (passes/lower.h: op_impl), so that ir/ stays below the
 * passes that implement the ops. */

extern const OpInfo op_table[OP_COUNT_];

/*
 * Old forms: before some opset a few ops took as attributes what is now an
 * input, so they had fewer inputs.  op_inputs gives the range of input
 * counts of op at opset (the op table's, or the old form's);
 * op_old_unsupported names an old form burncc does not implement (NULL if
 * op at opset is not one), e.g. "Tile before opset 6 (inputs input, tiles,
 * axis)".
 */
void op_inputs(int op, int opset, int *min_in, int *max_in);
const char *op_old_unsupported(int op, int opset);

/* OpId for an ONNX op_type, or OP_NONE_. */
int op_lookup(const char *name);
/* Whether some op of the table is in domain dom (not the default one). */
int op_domain_known(const char *dom);
const char *op_class_name(int cls);

#endif

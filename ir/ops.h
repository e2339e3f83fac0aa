/*
 * ops.h - op ids and the op table (rows in ops.def).
 */
#ifndef BURN_OPS_H
#define BURN_OPS_H

enum OpClass { OC_ELEM, OC_REDUCE, OC_MATMUL, OC_CONV, OC_MOVE, OC_SHAPE,
               OC_OPAQUE };

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
} OpInfo;

/* The infer and lower columns of ops.def point into passes/; they are
 * expanded there (passes/lower.h: op_impl), so that ir/ stays below the
 * passes that implement the ops. */

extern const OpInfo op_table[OP_COUNT_];

/* OpId for an ONNX op_type, or OP_NONE_. */
int op_lookup(const char *name);
const char *op_class_name(int cls);

#endif

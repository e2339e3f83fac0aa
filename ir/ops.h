/*
 * ops.h - op ids and the op table (rows in ops.def).
 */
#ifndef BURN_OPS_H
#define BURN_OPS_H

struct Ctx;
struct Graph;
struct Node;
struct Lower;

enum OpClass { OC_ELEM, OC_REDUCE, OC_MATMUL, OC_CONV, OC_MOVE, OC_SHAPE,
               OC_OPAQUE };

enum OpId {
	OP_NONE_ = 0,
#define OP(name, ...) OP_##name,
#include "ops.def"
#undef OP
	OP_COUNT_
};

typedef int (*InferFn)(struct Ctx *, struct Graph *, struct Node *);
typedef int (*LowerFn)(struct Lower *, struct Node *);

typedef struct OpInfo {
	const char *name;   /* ONNX op_type */
	int min_in, max_in, min_out, max_out;
	int cls;            /* OpClass */
	InferFn infer;
	LowerFn lower;
} OpInfo;

extern const OpInfo op_table[OP_COUNT_];

/* OpId for an ONNX op_type, or OP_NONE_. */
int op_lookup(const char *name);
const char *op_class_name(int cls);

#endif

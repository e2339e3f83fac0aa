/*
 * ops.c - the op table, expanded from ops.def, and lookup by ONNX name.
 */
#include "ops.h"

#include <string.h>

/* Row 0 is OP_NONE_: no op, no functions. */
const OpInfo op_table[] = {
	{"<none>", 0, 0, 0, 0, OC_OPAQUE},
#define OP(name, mi, xi, mo, xo, cls, inf, low) \
	{#name, mi, xi, mo, xo, cls},
#include "ops.def"
#undef OP
};

/* The table and the enum come from the same rows; keep it that way. */
_Static_assert(sizeof op_table / sizeof op_table[0] == OP_COUNT_,
               "op_table out of sync with ops.def");
_Static_assert(0
#define OP(...) + 1
#include "ops.def"
#undef OP
               == OP_COUNT_ - 1, "ops.def row count");

/*
 * Linear search with a first-character filter: ~160 rows, called once per
 * node by the loader, so a hash table would not pay for itself.
 */
int
op_lookup(const char *name)
{
	int i;

	if (!name || !*name)
		return OP_NONE_;
	for (i = 1; i < OP_COUNT_; i++)
		if (op_table[i].name[0] == name[0] &&
		    strcmp(op_table[i].name, name) == 0)
			return i;
	return OP_NONE_;
}

const char *
op_class_name(int cls)
{
	static const char *const names[] = {
		[OC_ELEM] = "elem", [OC_REDUCE] = "reduce", [OC_MATMUL] = "matmul",
		[OC_CONV] = "conv", [OC_MOVE] = "move", [OC_SHAPE] = "shape",
		[OC_OPAQUE] = "opaque",
	};

	if (cls < 0 || cls >= (int)(sizeof names / sizeof names[0]))
		return "?";
	return names[cls];
}

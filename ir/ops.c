/*
 * ops.c - the op table, expanded from ops.def, and lookup by ONNX name.
 */
#include "ops.h"

#include <stddef.h>
#include <string.h>

/* Row 0 is OP_NONE_: no op, no functions. */
const OpInfo op_table[] = {
	{"<none>", 0, 0, 0, 0, OC_OPAQUE, TY_NUM, 0, ""},
#define OP(name, mi, xi, mo, xo, cls, ty, inf, low, grad) \
	{#name, mi, xi, mo, xo, cls, (ty) & TY_MASK_, (ty) & ~TY_MASK_, ""},
#define OPD(dom, name, mi, xi, mo, xo, cls, ty, inf, low, grad) \
	{#name, mi, xi, mo, xo, cls, (ty) & TY_MASK_, (ty) & ~TY_MASK_, dom},
#include "ops.def"
#undef OPD
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

int
op_domain_known(const char *dom)
{
	for (int i = 1; i < OP_COUNT_; i++)
		if (*op_table[i].domain && strcmp(op_table[i].domain, dom) == 0)
			return 1;
	return 0;
}

const char *
op_class_name(int cls)
{
	static const char *const names[] = {
		[OC_ELEM] = "elem", [OC_REDUCE] = "reduce", [OC_MATMUL] = "matmul",
		[OC_CONV] = "conv", [OC_MOVE] = "move", [OC_SHAPE] = "shape",
		[OC_OPAQUE] = "opaque", [OC_CONTROL] = "control", [OC_SEQ] = "seq",
		[OC_FUNC] = "func",
	};

	if (cls < 0 || cls >= (int)(sizeof names / sizeof names[0]))
		return "?";
	return names[cls];
}

/* The old forms of ONNX ops (from the operator schemas' history) whose
 * input count differs from today's; before opset `before`. */
static const struct {
	int op, before, min_in, max_in;
	const char *unsupported;   /* NULL: implemented */
} old_forms[] = {
	{ OP_Pad, 11, 1, 1, NULL },      /* pads, value attributes */
	{ OP_Reshape, 5, 1, 2, NULL },   /* shape attribute, which the loader makes input 1 */
	{ OP_Slice, 10, 1, 1, NULL },    /* starts, ends, axes attributes */
	{ OP_TopK, 10, 1, 1, NULL },     /* k attribute */
	{ OP_Scan, 9, 0, 1024, NULL },   /* Scan-8: optional sequence_lens first */
	{ OP_Tile, 6, 3, 3, "Tile before opset 6 (inputs input, tiles, axis)" },
};

void
op_inputs(int op, int opset, int *min_in, int *max_in)
{
	*min_in = op > OP_NONE_ && op < OP_COUNT_ ? op_table[op].min_in : 0;
	*max_in = op > OP_NONE_ && op < OP_COUNT_ ? op_table[op].max_in : 0;
	for (size_t i = 0; i < sizeof old_forms / sizeof old_forms[0]; i++)
		if (old_forms[i].op == op && opset > 0 && opset < old_forms[i].before &&
		    !old_forms[i].unsupported) {
			*min_in = old_forms[i].min_in;
			*max_in = old_forms[i].max_in;
		}
}

const char *
op_old_unsupported(int op, int opset)
{
	for (size_t i = 0; i < sizeof old_forms / sizeof old_forms[0]; i++)
		if (old_forms[i].op == op && opset > 0 && opset < old_forms[i].before)
			return old_forms[i].unsupported;
	return NULL;
}

/*
 * dynamic.c - a dim known only at run time (burncc --dynamic-dim NAME).
 *
 * The supported case is a leading "batch" dim: NAME is axis 0 of every
 * input that has it, and everything computed from those inputs treats the
 * items along axis 0 alike and apart (item i of an output depends on item
 * i of the inputs only).  Then the program for any number of items is the
 * program for one item run once per item, each time on that item's slice
 * of every batched buffer.  So:
 *
 *   1. dyn_check_graph, before binding: the graph is compiled with NAME = 1,
 *      so first every node that the dim reaches must be an op that can
 *      keep items apart (a row of batch_rules).  This runs before constant
 *      folding, which would otherwise fold a Shape of a batched value into
 *      a constant that holds 1.
 *   2. dyn_mark, after simplification: the same walk on the final graph,
 *      now with shapes and constant operands, checking each node against
 *      its rule (no reduction or softmax over axis 0, a pointwise op's
 *      unbatched operands broadcast along it, a MatMul's batch on A's rows,
 *      a Reshape's target keeps it first, ...).  Axis 0 of a batched value
 *      holds k rows per item: 1, or more where a Reshape or Flatten merged
 *      the batch with the next axes ([N*S, H]); either way item i is the
 *      i-th of N contiguous equal slices, which is all the peeling needs.
 *   3. dyn_peel, after lowering: each kernel that touches a batched buffer
 *      gets the dim as its parameter (kir.h: KKernel.ndim) and its body
 *      becomes `for item in 0..NAME parallel { body }`, with item*count
 *      added to the index of every load and store of a batched buffer
 *      (count: the buffer's elements for one item) and the buffer's extent
 *      NAME*count.  Scratch values such a kernel writes are per item too
 *      (and a kernel touching those is peeled in turn).  Then the graph's
 *      batched values get the symbolic dim back at axis 0 (scratch and
 *      values of several rows per item: shape [NAME, count]), so the plan
 *      sizes them as expressions over it.  A kernel the lowering built
 *      over all the items at once (KProgram.rows_batched: lower_gemm's
 *      and lower_matmul's rows at run time), the dim its parameter already,
 *      keeps its body
 *      and only gets the extents.
 *
 * Anything else the dim reaches is refused with the node, the op and why:
 * such graphs need static shapes (--dim) for now.
 */
#include <stdlib.h>
#include <string.h>
#include "lower.h"
#include "passes.h"

/*
 * How the batch passes through each op it may reach: the rule dyn_node_ok
 * applies to the node's shapes (compiled for one item, whose leading axis
 * holds k rows: 1 at first, more where a Reshape or Flatten merged the
 * batch into it, as [N*S, H] from [N, S, H]; the items stay contiguous
 * blocks of every batched value either way).  An op without a row is
 * refused.
 */
enum BatchRule {
	BR_NONE,
	BR_ELEM,       /* pointwise: batched operands lead the result, the
	                * others broadcast along axis 0 */
	BR_REDUCE,     /* reductions, arg-max/min, softmax: not over axis 0 */
	BR_SAME,       /* Identity */
	BR_MATMUL,     /* rows (A) or matmul batch (A or B, rank >= 3) */
	BR_GEMM,       /* A's rows (transA = 0); B unbatched */
	BR_DATA0,      /* Conv, pools, BatchNorm, InstanceNorm, LRN: per item
	                * of input 0 by definition; the rest unbatched */
	BR_LAYERNORM,  /* normalised axes from `axis` >= 1 */
	BR_RESHAPE,    /* target's axis 0 is 0 (copy) or -1 (absorbs) */
	BR_FLATTEN,    /* axis >= 1 */
	BR_TRANSPOSE,  /* perm[0] = 0 */
	BR_CONCAT,     /* axis != 0, every input batched */
	BR_SLICE,      /* axis 0 not sliced */
	BR_SPLIT,      /* axis != 0 */
	BR_GATHER,     /* data batched (axis != 0) or indices (axis 0) */
	BR_UNSQUEEZE,  /* no new axis 0 */
	BR_SQUEEZE,    /* axis 0 stays */
	BR_EXPAND,     /* the shape does not widen axis 0 */
	BR_AXIS,       /* along one axis (attribute axis, or CumSum's input
	                * 1), not axis 0; the other inputs unbatched */
	BR_LAST2,      /* Trilu: over the last two axes, so rank >= 3 */
	BR_PAD,        /* no padding on axis 0 */
	BR_TILE,       /* repeats[0] = 1 */
	BR_QUANT,      /* a scale per element of an axis other than 0 */
	BR_GATHER_EL,  /* GatherElements: data and indices batched, axis != 0 */
	BR_ATTN,       /* Attention: Q, K, V batched; a mask or cache input
	                * batched alike or broadcast along axis 0 */
	BR_RESIZE,     /* Resize: scale 1 on axis 0, no size given for it */
	BR_CROP        /* CenterCropPad: axis 0 not among `axes` */
};

static const struct { int op, rule; } batch_rules[] = {
	{ OP_ReduceSum, BR_REDUCE }, { OP_ReduceMean, BR_REDUCE },
	{ OP_ReduceMax, BR_REDUCE }, { OP_ReduceMin, BR_REDUCE },
	{ OP_ReduceProd, BR_REDUCE }, { OP_ReduceL1, BR_REDUCE },
	{ OP_ReduceL2, BR_REDUCE }, { OP_ReduceLogSum, BR_REDUCE },
	{ OP_ReduceLogSumExp, BR_REDUCE }, { OP_ReduceSumSquare, BR_REDUCE },
	{ OP_ArgMax, BR_REDUCE }, { OP_ArgMin, BR_REDUCE },
	{ OP_Softmax, BR_REDUCE }, { OP_LogSoftmax, BR_REDUCE },
	{ OP_Hardmax, BR_REDUCE },
	{ OP_Identity, BR_SAME },
	{ OP_MatMul, BR_MATMUL }, { OP_Gemm, BR_GEMM },
	{ OP_Conv, BR_DATA0 }, { OP_MaxPool, BR_DATA0 },
	{ OP_AveragePool, BR_DATA0 }, { OP_LpPool, BR_DATA0 },
	{ OP_GlobalAveragePool, BR_DATA0 }, { OP_GlobalMaxPool, BR_DATA0 },
	{ OP_BatchNormalization, BR_DATA0 },
	{ OP_InstanceNormalization, BR_DATA0 }, { OP_LRN, BR_DATA0 },
	{ OP_LayerNormalization, BR_LAYERNORM },
	{ OP_Reshape, BR_RESHAPE }, { OP_Flatten, BR_FLATTEN },
	{ OP_Transpose, BR_TRANSPOSE }, { OP_Concat, BR_CONCAT },
	{ OP_Slice, BR_SLICE }, { OP_Split, BR_SPLIT }, { OP_Gather, BR_GATHER },
	{ OP_Unsqueeze, BR_UNSQUEEZE }, { OP_Squeeze, BR_SQUEEZE },
	{ OP_Expand, BR_EXPAND },
	{ OP_ConvTranspose, BR_DATA0 }, { OP_DepthToSpace, BR_DATA0 },
	{ OP_SpaceToDepth, BR_DATA0 },
	{ OP_LpNormalization, BR_AXIS }, { OP_TopK, BR_AXIS },
	{ OP_CumSum, BR_AXIS }, { OP_Trilu, BR_LAST2 }, { OP_Pad, BR_PAD },
	{ OP_Tile, BR_TILE }, { OP_QuantizeLinear, BR_QUANT },
	{ OP_DequantizeLinear, BR_QUANT }, { OP_GatherElements, BR_GATHER_EL },
	{ OP_RMSNormalization, BR_LAYERNORM }, { OP_Attention, BR_ATTN },
	{ OP_Resize, BR_RESIZE }, { OP_CenterCropPad, BR_CROP },
};

static int
batch_rule(int op)
{
	if (op_table[op].cls == OC_ELEM)
		return BR_ELEM;
	for (size_t i = 0; i < sizeof batch_rules / sizeof *batch_rules; i++)
		if (batch_rules[i].op == op)
			return batch_rules[i].rule;
	return BR_NONE;
}

static int
refuse(Ctx *c, const Graph *g, const Node *n, const char *dim, const char *why)
{
	(void)g;
	return burn_fail(c, BURN_ERR_UNSUPPORTED, "node '%s' (%s): the dynamic dim "
	                 "'%s' reaches it, and %s; static shapes are needed (--dim "
	                 "%s=VALUE)", n->name ? n->name : "?",
	                 op_table[n->op].name, dim, why, dim);
}

/*
 * A Shape of a batched value: its elements from `start` on.  From axis 1
 * on they do not depend on the batch (0: not batched); from axis 0 on the
 * first is the batch's rows (1: the batch's shape).  Folding makes both a
 * constant, the second holding one item's rows, so that one may only be
 * a Reshape's target, where it keeps the batch on axis 0.
 */
static int
shape_of_batch(const Graph *g, const Node *n)
{
	int64_t start = g->opset >= 15 ? attr_int(n, "start", 0) : 0;
	int r = n->in[0] >= 0 ? GV(g, n->in[0])->rank : -1;

	if (start < 0 && r > 0)
		start += r;
	return start >= 1 ? 0 : 1;
}

/* The refusal of an op without a row in batch_rules. */
static int
no_rule(Ctx *c, const Graph *g, const Node *n, const char *dim)
{
	if (op_table[n->op].types == TY_STR)
		return refuse(c, g, n, dim, "a string op is a call into the runtime "
		              "whose element count is fixed when compiling");
	return refuse(c, g, n, dim, "this op does not keep the items of the "
	              "batch apart (see README, \"Sizes known at run time\", for "
	              "the ops that do)");
}

int
dyn_check_graph(Ctx *c, const Graph *g, int ndyn, const char *const *dyn,
                unsigned char *inb, unsigned char *shp)
{
	unsigned char *tainted;
	int rc = BURN_OK, found = 0;

	if (ndyn == 0)
		return BURN_OK;
	if (ndyn > 1)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "--dynamic-dim given for '%s' "
		                 "and '%s': one dynamic dim is supported for now",
		                 dyn[0], dyn[1]);
	for (int i = 0; i < g->nin; i++) {
		const Value *v = GV(g, g->in[i]);
		for (int d = 0; d < v->rank; d++) {
			if (!v->sym[d] || strcmp(v->sym[d], dyn[0]))
				continue;
			found = 1;
			if (d != 0)
				return burn_fail(c, BURN_ERR_UNSUPPORTED, "input '%s': the "
				                 "dynamic dim '%s' is its axis %d; only a leading "
				                 "(batch) dim can be dynamic for now", v->name,
				                 dyn[0], d);
		}
	}
	if (!found)
		return burn_fail(c, BURN_ERR_INVALID, "--dynamic-dim %s: no input of "
		                 "the model has a symbolic dim of that name", dyn[0]);
	if (!(tainted = calloc((size_t)g->nval + 1, 1)))
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	for (int i = 0; i < g->nin; i++) {
		const Value *v = GV(g, g->in[i]);
		inb[i] = v->rank > 0 && v->sym[0] && !strcmp(v->sym[0], dyn[0]);
		tainted[g->in[i]] = inb[i];
	}
	/* a sequence bound to data holds its elements, graph inputs too */
	for (int v = 0; v < g->nval; v++)
		for (int e = 0; GV(g, v)->kind == VK_SEQ && e < GV(g, v)->nelem; e++)
			if (GV(g, v)->elem[e] >= 0 && tainted[GV(g, v)->elem[e]])
				tainted[v] = 1;
	for (int i = 0; i < g->nnode && !rc; i++) {
		const Node *n = &g->node[i];
		int hit = 0;
		if (n->dead)
			continue;
		/* a subgraph reads outer values by name, not as the node's
		 * inputs: this walk does not follow the batch into it */
		if (op_table[n->op].cls == OC_CONTROL) {
			rc = refuse(c, g, n, dyn[0], "its subgraphs may read batched "
			            "values, which this mode does not follow yet");
			break;
		}
		for (int k = 0; k < n->nin; k++) {
			int v = n->in[k];
			hit |= v >= 0 && tainted[v];
			if (v >= 0 && shp[v] && !(n->op == OP_Reshape && k == 1 &&
			                          n->in[0] >= 0 && tainted[n->in[0]])) {
				rc = refuse(c, g, n, dyn[0], "it reads the batch's size (a "
				            "Shape of a batched value from axis 0), which only "
				            "the target of a Reshape of batched data may hold");
				break;
			}
		}
		if (rc)
			break;
		if (!hit)
			continue;
		if (n->op == OP_Shape && n->nout == 1 && n->out[0] >= 0) {
			/* not batched from axis 1 on; else only a Reshape target */
			if (shape_of_batch(g, n) && GV(g, n->out[0])->is_output) {
				rc = refuse(c, g, n, dyn[0], "a graph output holds the "
				            "batch's size");
				break;
			}
			shp[n->out[0]] = (unsigned char)shape_of_batch(g, n);
			continue;
		}
		if (!batch_rule(n->op)) {
			rc = no_rule(c, g, n, dyn[0]);
			break;
		}
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0)
				tainted[n->out[k]] = 1;
	}
	free(tainted);
	return rc;
}

/* The axes a reduction or softmax-like node runs over, as a mask over
 * rank r; *all when it reduces every axis. */
static int
node_axes(Ctx *c, const Graph *g, const Node *n, int r, unsigned *mask)
{
	int64_t tmp[BURN_MAX_RANK];
	const int64_t *ax = NULL;
	int64_t nax = 0;

	*mask = 0;
	if (n->op == OP_ArgMax || n->op == OP_ArgMin || n->op == OP_Softmax ||
	    n->op == OP_LogSoftmax || n->op == OP_Hardmax) {
		int64_t a = attr_int(n, "axis", n->op == OP_ArgMax || n->op == OP_ArgMin
		                     ? 0 : g->opset < 13 ? 1 : -1);
		if (a < 0)
			a += r;
		if (a < 0 || a >= r)
			return burn_fail(c, BURN_ERR_INVALID, "axis out of range");
		/* before opset 13 softmax flattens to [prod(:axis), prod(axis:)] */
		*mask = (n->op == OP_ArgMax || n->op == OP_ArgMin || g->opset >= 13)
		        ? 1u << a : ((1u << r) - 1) & ~((1u << a) - 1);
		return BURN_OK;
	}
	if (g->opset >= (n->op == OP_ReduceSum ? 13 : 18)) {
		const Value *v = n->nin > 1 && n->in[1] >= 0 ? GV(g, n->in[1]) : NULL;
		if (v) {
			if (!v->data)
				return burn_fail(c, BURN_ERR_UNSUPPORTED, "axes not constant");
			nax = value_numel(v);
			if (nax < 0 || nax > BURN_MAX_RANK)
				return burn_fail(c, BURN_ERR_INVALID, "%lld axes", (long long)nax);
			for (int i = 0; i < nax; i++)
				tmp[i] = value_get_i(v, i);
			ax = tmp;
		}
	} else {
		nax = attr_ints(n, "axes", &ax);
	}
	if (nax == 0) {
		if (!attr_int(n, "noop_with_empty_axes", 0))
			*mask = (1u << r) - 1;
		return BURN_OK;
	}
	for (int i = 0; i < nax; i++) {
		int64_t a = ax[i] < 0 ? ax[i] + r : ax[i];
		if (a < 0 || a >= r)
			return burn_fail(c, BURN_ERR_INVALID, "axis out of range");
		*mask |= 1u << a;
	}
	return BURN_OK;
}

/* An int list: attribute attr if the node has it, else constant input k.
 * The count; -1 when neither is given, -2 when input k is not a constant
 * or has more than max elements. */
static int
int_list(const Graph *g, const Node *n, const char *attr, int k, int64_t *out,
         int max)
{
	if (attr && node_attr(n, attr)) {
		const int64_t *p;
		int m = attr_ints(n, attr, &p);
		if (m > max)
			return -2;
		for (int i = 0; i < m; i++)
			out[i] = p[i];
		return m;
	}
	if (k >= 0 && k < n->nin && n->in[k] >= 0) {
		const Value *v = GV(g, n->in[k]);
		int64_t m = value_numel(v);
		if (!v->data || m < 0 || m > max)
			return -2;
		for (int64_t i = 0; i < m; i++)
			out[i] = value_get_i(v, i);
		return (int)m;
	}
	return -1;
}

/* Whether axes[0..m) name axis 0 of rank r. */
static int
names_axis0(const int64_t *axes, int m, int r)
{
	for (int i = 0; i < m; i++)
		if (axes[i] == 0 || axes[i] == -(int64_t)r)
			return 1;
	return 0;
}

/* Whether a Slice bound counts from the end of its axis (negative, or past
 * any size: INT64_MAX for "to the end"); a bound below any size (INT64_MIN,
 * a reverse slice to the start) counts from the start. */
static int
from_end(int64_t v)
{
	return (v < 0 && v > -((int64_t)1 << 40)) || v >= ((int64_t)1 << 40);
}

/* Input k of n, or NULL when omitted; *bk: whether it carries the batch. */
static const Value *
input(const Graph *g, const Node *n, int k, const unsigned char *b, int *bk)
{
	*bk = k < n->nin && n->in[k] >= 0 && b[n->in[k]];
	return k < n->nin && n->in[k] >= 0 ? GV(g, n->in[k]) : NULL;
}

/* dyn_node_ok's per-rule part; o: n's first output. */
static int
rule_ok(Ctx *c, const Graph *g, const Node *n, const char *dim,
        const unsigned char *b, const unsigned char *shp, int nshp, int rule,
        const Value *o)
{
	int64_t l[BURN_MAX_RANK * 2 + 2];
	const Value *x, *y;
	int orank = o->rank, bx, by, m;

	x = input(g, n, 0, b, &bx);
	switch (rule) {
	case BR_ELEM:
		for (int k = 0; k < n->nin; k++) {
			const Value *v = input(g, n, k, b, &by);
			if (!v)
				continue;
			if (by && v->rank != orank)
				return refuse(c, g, n, dim, "a batched operand has another "
				              "rank than the result, so broadcasting moves the "
				              "batch axis");
			if (by && v->dim[0] != o->dim[0])
				return refuse(c, g, n, dim, "a batched operand broadcasts "
				              "along axis 0");
			if (!by && v->rank == orank && v->dim[0] != 1)
				return refuse(c, g, n, dim, "an operand without the batch "
				              "has an axis 0 of its own");
		}
		return BURN_OK;
	case BR_REDUCE: {
		unsigned mask;
		for (int k = 1; k < n->nin; k++)
			if (input(g, n, k, b, &by), by)
				return refuse(c, g, n, dim, "the batch reaches an operand "
				              "other than the data");
		TRY(node_axes(c, g, n, x->rank, &mask));
		if (mask & 1)
			return refuse(c, g, n, dim, "it reduces or normalises over the "
			              "batch axis");
		return BURN_OK;
	}
	case BR_SAME:
		return BURN_OK;
	case BR_MATMUL:
		y = input(g, n, 1, b, &by);
		if (n->nin > 2 || !x || !y)
			return refuse(c, g, n, dim, "only a plain product keeps the "
			              "items apart");
		if (bx && (x->rank < 2 || x->rank != orank))
			return refuse(c, g, n, dim, "A's axis 0 is not the result's");
		if (by && (y->rank < 3 || y->rank != orank))
			return refuse(c, g, n, dim, "B carries the batch on an axis the "
			              "product sums over or broadcasts");
		if ((!bx && x->rank == orank && orank >= 3 && x->dim[0] != 1) ||
		    (!by && y->rank == orank && orank >= 3 && y->dim[0] != 1))
			return refuse(c, g, n, dim, "an operand without the batch has "
			              "an axis 0 of its own");
		if (bx && by && x->dim[0] != y->dim[0])
			return refuse(c, g, n, dim, "a batched operand broadcasts along "
			              "axis 0");
		return BURN_OK;
	case BR_GEMM:
		y = input(g, n, 1, b, &by);
		if (by || !bx || attr_int(n, "transA", 0))
			return refuse(c, g, n, dim, "the batch is not on A's rows");
		if ((y = input(g, n, 2, b, &by)) != NULL &&
		    (by ? y->rank != 2 || y->dim[0] != o->dim[0]
		        : y->rank == 2 && y->dim[0] != 1))
			return refuse(c, g, n, dim, "C does not follow A's rows");
		return BURN_OK;
	case BR_DATA0:
		for (int k = 1; k < n->nin; k++)
			if (input(g, n, k, b, &by), by)
				return refuse(c, g, n, dim, "the batch reaches an input "
				              "other than the data");
		for (int k = 1; k < n->nout; k++)
			if (n->out[k] >= 0)
				return refuse(c, g, n, dim, "its extra outputs (statistics, "
				              "indices) span the batch");
		return BURN_OK;
	case BR_LAYERNORM: {
		int64_t a = attr_int(n, "axis", -1);
		for (int k = 1; k < n->nin; k++)
			if (input(g, n, k, b, &by), by)
				return refuse(c, g, n, dim, "the batch reaches the scale or "
				              "bias");
		if (a == 0 || a == -(int64_t)x->rank)
			return refuse(c, g, n, dim, "it normalises over the batch axis");
		return BURN_OK;
	}
	case BR_RESHAPE:
		if (input(g, n, 1, b, &by), by)
			return refuse(c, g, n, dim, "its shape depends on the data");
		/* the target is the Shape of a batched value: its axis 0 is
		 * that value's rows of an item, here, and the batch's at run
		 * time (the elements of an item go to the rows of an item) */
		if (shp && n->nin > 1 && n->in[1] >= 0 && n->in[1] < nshp &&
		    shp[n->in[1]])
			return BURN_OK;
		m = int_list(g, n, NULL, 1, l, BURN_MAX_RANK);
		if (m >= 1 && l[0] > 0)
			return refuse(c, g, n, dim, DYN_FIXED_SIZE " (Reshape's target "
			              "fixes axis 0; 0 copies it, -1 there keeps the "
			              "batch)");
		if (m < 1 || !(l[0] == -1 || (l[0] == 0 && !attr_int(n, "allowzero", 0))))
			return refuse(c, g, n, dim, "its target shape fixes axis 0 (0, "
			              "to copy it, or -1 there keeps the batch)");
		return BURN_OK;
	case BR_FLATTEN: {
		int64_t a = attr_int(n, "axis", 1);
		if (a == 0 || a == -(int64_t)x->rank)
			return refuse(c, g, n, dim, "axis 0 moves the batch");
		return BURN_OK;
	}
	case BR_TRANSPOSE:
		m = int_list(g, n, "perm", -1, l, BURN_MAX_RANK);
		if (m >= 1 ? l[0] != 0 : x->rank > 1)
			return refuse(c, g, n, dim, "it moves the batch axis");
		return BURN_OK;
	case BR_CONCAT: {
		int64_t a = attr_int(n, "axis", 0);
		if (a == 0 || a == -(int64_t)orank)
			return refuse(c, g, n, dim, "it concatenates along the batch "
			              "axis");
		for (int k = 0; k < n->nin; k++)
			if (input(g, n, k, b, &by) && !by)
				return refuse(c, g, n, dim, "an input without the batch "
				              "would need one copy per item");
		return BURN_OK;
	}
	case BR_SLICE: {
		int64_t st[BURN_MAX_RANK], en[BURN_MAX_RANK];
		int i0 = -1;
		for (int k = 1; k < n->nin; k++)
			if (input(g, n, k, b, &by), by)
				return refuse(c, g, n, dim, "its bounds depend on the data");
		m = int_list(g, n, "axes", n->nin > 1 ? 3 : -1, l, BURN_MAX_RANK);
		/* no axes (-1): starts[i] is for axis i, from axis 0 */
		if (m >= 0 && !names_axis0(l, m, x->rank))
			return BURN_OK;
		for (int i = 0; m > 0 && i < m && i0 < 0; i++)
			if (l[i] == 0 || l[i] == -(int64_t)x->rank)
				i0 = i;
		if (m == -1)
			i0 = 0;
		/* both bounds from the start, or both from the end: the size
		 * along the batch axis is a constant of the model */
		if (i0 >= 0 && int_list(g, n, "starts", 1, st, BURN_MAX_RANK) > i0 &&
		    int_list(g, n, "ends", 2, en, BURN_MAX_RANK) > i0 &&
		    from_end(st[i0]) == from_end(en[i0]))
			return refuse(c, g, n, dim, DYN_FIXED_SIZE " (a slice of it "
			              "between constant bounds)");
		return refuse(c, g, n, dim, "it slices the batch axis");
	}
	case BR_SPLIT: {
		int64_t a = attr_int(n, "axis", 0);
		if (a == 0 || a == -(int64_t)x->rank)
			return refuse(c, g, n, dim, "it splits the batch axis");
		return BURN_OK;
	}
	case BR_GATHER: {
		int64_t a = attr_int(n, "axis", 0);
		int first = a == 0 || a == -(int64_t)x->rank;
		y = input(g, n, 1, b, &by);
		if (bx && by)
			return refuse(c, g, n, dim, "both the data and the indices "
			              "carry the batch");
		if (bx && first)
			return refuse(c, g, n, dim, DYN_FIXED_SIZE " (it gathers "
			              "rows of the batch axis by indices of their own "
			              "size)");
		if (by && !first)
			return refuse(c, g, n, dim, "its indices' batch would not lead "
			              "the result");
		return BURN_OK;
	}
	case BR_UNSQUEEZE:
		m = int_list(g, n, "axes", 1, l, BURN_MAX_RANK);
		if (m < 0 || names_axis0(l, m, orank))
			return refuse(c, g, n, dim, "it inserts an axis before the "
			              "batch");
		return BURN_OK;
	case BR_SQUEEZE:
		m = int_list(g, n, "axes", 1, l, BURN_MAX_RANK);
		if (m == -2 || (m == -1 && x->dim[0] == 1) ||
		    (m > 0 && names_axis0(l, m, x->rank)))
			return refuse(c, g, n, dim, "it removes the batch axis");
		return BURN_OK;
	case BR_AXIS: {
		int64_t a;
		for (int k = 1; k < n->nin; k++)
			if (input(g, n, k, b, &by), by)
				return refuse(c, g, n, dim, "the batch reaches an input "
				              "other than the data");
		if (n->op == OP_CumSum) {
			if (int_list(g, n, NULL, 1, l, 1) != 1)
				return refuse(c, g, n, dim, "its axis is not a constant");
			a = l[0];
		} else {
			a = attr_int(n, "axis", -1);
		}
		if ((a == 0 || a == -(int64_t)x->rank) && n->op == OP_TopK)
			return refuse(c, g, n, dim, DYN_FIXED_SIZE " (TopK's K)");
		if (a == 0 || a == -(int64_t)x->rank)
			return refuse(c, g, n, dim, "it works along the batch axis");
		return BURN_OK;
	}
	case BR_LAST2:
		for (int k = 1; k < n->nin; k++)
			if (input(g, n, k, b, &by), by)
				return refuse(c, g, n, dim, "its k depends on the data");
		if (x->rank < 3)
			return refuse(c, g, n, dim, "the batch is one of the two axes it "
			              "works over");
		return BURN_OK;
	case BR_PAD: {
		int64_t ax[BURN_MAX_RANK];
		int na;
		for (int k = 1; k < n->nin; k++)
			if (input(g, n, k, b, &by), by)
				return refuse(c, g, n, dim, "its pads depend on the data");
		m = int_list(g, n, "pads", 1, l, 2 * BURN_MAX_RANK);
		na = int_list(g, n, NULL, 3, ax, BURN_MAX_RANK);
		if (na == -1)
			for (na = 0; na < x->rank; na++)
				ax[na] = na;
		if (m < 0 || na < 0 || m != 2 * na)
			return refuse(c, g, n, dim, "its pads are not constant");
		for (int i = 0; i < na; i++)
			if ((ax[i] == 0 || ax[i] == -(int64_t)x->rank) &&
			    (l[i] != 0 || l[i + na] != 0))
				return refuse(c, g, n, dim, "it pads the batch axis");
		return BURN_OK;
	}
	case BR_TILE:
		if (input(g, n, 1, b, &by), by)
			return refuse(c, g, n, dim, "its repeats depend on the data");
		if (int_list(g, n, NULL, 1, l, BURN_MAX_RANK) < 1 || l[0] != 1)
			return refuse(c, g, n, dim, "it repeats along the batch axis");
		return BURN_OK;
	case BR_QUANT: {
		int64_t a = attr_int(n, "axis", 1);
		for (int k = 1; k < n->nin; k++)
			if (input(g, n, k, b, &by), by)
				return refuse(c, g, n, dim, "the batch reaches the scale or "
				              "zero point");
		y = input(g, n, 1, b, &by);
		if (y && value_numel(y) != 1 && (a == 0 || a == -(int64_t)x->rank))
			return refuse(c, g, n, dim, "its scales run along the batch "
			              "axis");
		return BURN_OK;
	}
	case BR_GATHER_EL: {
		int64_t a = attr_int(n, "axis", 0);
		y = input(g, n, 1, b, &by);
		if (!bx || !by)
			return refuse(c, g, n, dim, "the data or the indices lack the "
			              "batch");
		if (x->dim[0] != y->dim[0])
			return refuse(c, g, n, dim, "a batched operand broadcasts along "
			              "axis 0");
		if (a == 0 || a == -(int64_t)x->rank)
			return refuse(c, g, n, dim, "it gathers along the batch axis");
		return BURN_OK;
	}
	case BR_ATTN:
		for (int k = 0; k < n->nin; k++) {
			const Value *v = input(g, n, k, b, &by);
			if (!v || value_numel(v) == 0)
				continue;
			if (k < 3 && !by)
				return refuse(c, g, n, dim, "Q, K or V lacks the batch");
			if (by && (v->rank < 1 || v->dim[0] != o->dim[0]))
				return refuse(c, g, n, dim, "a batched operand broadcasts "
				              "along axis 0");
			if (!by && v->rank >= 4 && v->dim[0] != 1)
				return refuse(c, g, n, dim, "an operand without the batch "
				              "has an axis 0 of its own");
		}
		return BURN_OK;
	case BR_RESIZE: {
		const Value *sc = input(g, n, 2, b, &by);
		const Value *sz = input(g, n, 3, b, &by);
		int a0 = 0;   /* the position of axis 0 in scales or sizes */
		for (int k = 1; k < n->nin; k++)
			if (input(g, n, k, b, &by), by)
				return refuse(c, g, n, dim, "its scales or sizes depend on "
				              "the data");
		if (g->opset < 11)
			return refuse(c, g, n, dim, "only Resize-11 and later, without "
			              "tf_crop_and_resize, so far");
		m = int_list(g, n, "axes", -1, l, BURN_MAX_RANK);
		if (m > 0) {
			a0 = -1;
			for (int i = 0; i < m; i++)
				if (l[i] == 0 || l[i] == -(int64_t)x->rank)
					a0 = i;
		}
		if (a0 >= 0 && sz && value_numel(sz) > a0)
			return refuse(c, g, n, dim, DYN_FIXED_SIZE " (Resize's "
			              "sizes)");
		if (!strcmp(attr_str(n, "coordinate_transformation_mode", ""),
		            "tf_crop_and_resize"))
			return refuse(c, g, n, dim, "only Resize-11 and later, without "
			              "tf_crop_and_resize, so far");
		if (a0 < 0)
			return BURN_OK;   /* axis 0 not resized */
		if (sc && value_numel(sc) > a0 && sc->data &&
		    value_get_f(sc, a0) == 1.0 && (!sz || value_numel(sz) == 0))
			return BURN_OK;
		return refuse(c, g, n, dim, "it resizes the batch axis (or gives "
		              "its size)");
	}
	case BR_CROP:
		if (input(g, n, 1, b, &by), by)
			return refuse(c, g, n, dim, "its shape depends on the data");
		m = int_list(g, n, "axes", -1, l, BURN_MAX_RANK);
		if (m < 0 || names_axis0(l, m, x->rank))
			return refuse(c, g, n, dim, DYN_FIXED_SIZE " (the shape it "
			              "crops or pads to)");
		return BURN_OK;
	case BR_EXPAND:
		if (input(g, n, 1, b, &by), by)
			return refuse(c, g, n, dim, "its shape depends on the data");
		m = int_list(g, n, NULL, 1, l, BURN_MAX_RANK);
		if (!bx || m < 0 || m > x->rank || (m == x->rank && l[0] != 1))
			return refuse(c, g, n, dim, "it broadcasts along the batch "
			              "axis");
		return BURN_OK;
	}
	return refuse(c, g, n, dim, "this op does not keep the items of the "
	              "batch apart");
}

/* Node n, reached by the batch (b: the values that carry it): its op and
 * shapes keep the items apart, as its row in batch_rules says.  Batched
 * values lead with the batch: their axis 0 holds k rows per item. */
static int
dyn_node_ok(Ctx *c, const Graph *g, const Node *n, const char *dim,
            const unsigned char *b, const unsigned char *shp, int nshp)
{
	const Value *o = NULL;
	int rule = batch_rule(n->op);

	if (!rule)
		return no_rule(c, g, n, dim);
	for (int k = 0; k < n->nout; k++) {
		const Value *v;
		if (n->out[k] < 0)
			continue;
		v = GV(g, n->out[k]);
		if (v->rank < 1)
			return refuse(c, g, n, dim, "its output has no axis 0 to hold "
			              "the batch");
		if (!o)
			o = v;
	}
	if (!o)
		return BURN_OK;
	TRY(rule_ok(c, g, n, dim, b, shp, nshp, rule, o));
	for (int k = 0; k < n->nout; k++)
		if (n->out[k] >= 0 && GV(g, n->out[k])->is_output &&
		    GV(g, n->out[k])->dim[0] != 1)
			return refuse(c, g, n, dim, "it makes a graph output whose axis "
			              "0 merges the batch with another axis");
	return BURN_OK;
}

int
dyn_mark(Ctx *c, const Graph *g, const char *dim, const unsigned char *inb,
         const unsigned char *shp, int nshp, unsigned char **batched)
{
	unsigned char *b = calloc((size_t)g->nval + 1, 1);
	int rc = BURN_OK;

	*batched = NULL;
	if (!b)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	for (int i = 0; i < g->nin; i++)
		b[g->in[i]] = inb[i];
	for (int i = 0; i < g->nnode && !rc; i++) {
		const Node *n = &g->node[i];
		int hit = 0;
		if (n->dead)
			continue;
		for (int k = 0; k < n->nin; k++)
			hit |= n->in[k] >= 0 && b[n->in[k]];
		if (!hit)
			continue;
		rc = dyn_node_ok(c, g, n, dim, b, shp, nshp);
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0)
				b[n->out[k]] = 1;
	}
	if (rc) {
		free(b);
		return rc;
	}
	*batched = b;
	return BURN_OK;
}

/* Shift every variable index of k by one, making room for the dim
 * parameter at index 0. */
static int
shift_vars(Arena *a, KKernel *k, const char *dim)
{
	KVar *nv = arena_alloc(a, sizeof *nv * ((size_t)k->nvar + 2));

	if (!nv)
		return 1;
	nv[0].dtype = DT_I64;
	nv[0].name = dim;
	if (k->nvar)
		memcpy(nv + 1, k->var, sizeof *nv * (size_t)k->nvar);
	k->var = nv;
	k->nvar++;
	k->capvar = k->nvar + 1;
	k->ndim = 1;
	for (int i = 1; i < k->nnode; i++) {
		KNode *n = &k->node[i];
		if (n->kind == KE_VAR || n->kind == KS_FOR || n->kind == KS_SET)
			n->var++;
	}
	return 0;
}



/* item * count + idx, as new nodes after idx */
static KRef
slice_index(Arena *a, KKernel *k, int item, int64_t count, KRef idx)
{
	KRef v, c, m;

	if (k->node[idx].dtype != DT_I64) {
		KNode n;
		memset(&n, 0, sizeof n);
		n.kind = KE_CAST;
		n.dtype = DT_I64;
		n.lanes = 1;
		n.a = idx;
		if (!(idx = kir_push(a, k, &n)))
			return 0;
	}
	if (!(v = kir_push_i64(a, k, KE_VAR, 0, 0, 0, item, 0)) ||
	    !(c = kir_push_i64(a, k, KE_CONST, 0, 0, 0, 0, count)) ||
	    !(m = kir_push_i64(a, k, KE_BIN, KO_MUL, v, c, 0, 0)))
		return 0;
	return kir_push_i64(a, k, KE_BIN, KO_ADD, m, idx, 0, 0);
}

static int
is_stmt(int kind)
{
	return kind >= KS_FOR && kind <= KS_BARRIER;
}

/* Whether kernel k touches a batched buffer (b: per storage value). */
static int
touches_batch(const KProgram *p, const KKernel *k, const unsigned char *b)
{
	for (int i = 0; i < k->nbuf; i++) {
		int v = k->buf[i].value;
		if (k->buf[i].space == KS_GLOBAL && v >= 0 && b[kprog_storage(p, v)])
			return 1;
	}
	return 0;
}

/* Whether storage value s is the lowering's scratch: neither a graph
 * input or output, a constant nor made by a node (nval0: the values before
 * lowering). */
static int
is_scratch(const Graph *g, int s, int nval0)
{
	const Value *v = GV(g, s);

	return s >= nval0 && !v->data && v->kind != VK_INPUT && v->producer < 0 &&
	       !v->is_output;
}

/*
 * A kernel the lowering built over every item at once (KProgram.rows_
 * batched: lower_gemm's rows at run time), the dim its parameter 0
 * already: no loop, each batched buffer only gets its extent, dim times
 * its elements for one item.
 */
static int
rows_kernel(Ctx *c, KProgram *p, KKernel *k, const unsigned char *b)
{
	Arena *a = p->arena;

	for (int i = 0; i < k->nbuf; i++) {
		int v = k->buf[i].value;
		KRef d, m;
		if (k->buf[i].space != KS_GLOBAL || v < 0 || !b[kprog_storage(p, v)])
			continue;
		if (!(d = kir_push_i64(a, k, KE_VAR, 0, 0, 0, 0, 0)) ||
		    !(m = kir_push_i64(a, k, KE_CONST, 0, 0, 0, 0, k->buf[i].count)) ||
		    !(k->buf[i].ext = kir_push_i64(a, k, KE_BIN, KO_MUL, d, m, 0, 0)))
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		k->buf[i].count = 0;
	}
	return kir_verify(c, k);
}

/*
 * Peel kernel k if it touches a batched buffer (b: per storage value;
 * dyn_peel has marked the scratch that peeled kernels write).  The pool gets a copy of every node, in
 * index order so that operands still precede their users, with the loads
 * and stores of batched buffers moved to the item's slice; the body
 * becomes the loop over the items around the copy.
 */
static int
peel_kernel(Ctx *c, Graph *g, KProgram *p, KKernel *k, const char *dim,
            unsigned char *b, int nval0)
{
	Arena *a = p->arena;
	int n0 = k->nnode, item, rc = BURN_OK;
	int64_t *cnt = NULL;
	KRef *map = NULL, zero, hi, loop;
	KNode fn;
	KVar *nv;

	if (!touches_batch(p, k, b))
		return BURN_OK;
	if (k->sched || (k->ndim && (k->ndim != 1 || strcmp(k->var[0].name, dim))))
		return burn_fail(c, BURN_ERR_INTERNAL, "kernel %s: peeled twice or "
		                 "after scheduling", k->name);
	for (int i = 0; i < k->nbuf; i++) {
		int v = k->buf[i].value, s;
		const Value *sv;
		if (k->buf[i].space != KS_GLOBAL || v < 0)
			continue;
		s = kprog_storage(p, v);
		sv = GV(g, s);
		if (!b[s] && (k->buf[i].access & KA_WRITE))
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "kernel %s (%s) writes "
			                 "'%s', which does not depend on the dynamic dim "
			                 "'%s', from values that do", k->name, k->ops,
			                 sv->name, dim);
	}
	if (k->ndim)
		return rows_kernel(c, p, k, b);
	cnt = calloc((size_t)k->nbuf + 1, sizeof *cnt);
	map = calloc((size_t)n0 + 1, sizeof *map);
	if (!cnt || !map || shift_vars(a, k, dim))
		goto nomem;
	/* the item variable, last */
	if (!(nv = arena_grow(a, k->var, sizeof *k->var, (size_t)k->nvar,
	                      (size_t)k->nvar + 1)))
		goto nomem;
	k->var = nv;
	k->var[k->nvar].dtype = DT_I64;
	k->var[k->nvar].name = "item";
	item = k->nvar++;
	k->capvar = k->nvar;
	for (int i = 0; i < k->nbuf; i++) {
		int v = k->buf[i].value;
		KRef d, m;
		cnt[i] = -1;
		if (k->buf[i].space != KS_GLOBAL || v < 0 || !b[kprog_storage(p, v)])
			continue;
		cnt[i] = k->buf[i].count;
		if (!(d = kir_push_i64(a, k, KE_VAR, 0, 0, 0, 0, 0)) ||
		    !(m = kir_push_i64(a, k, KE_CONST, 0, 0, 0, 0, cnt[i])) ||
		    !(k->buf[i].ext = kir_push_i64(a, k, KE_BIN, KO_MUL, d, m, 0, 0)))
			goto nomem;
		k->buf[i].count = 0;
	}
	/* the copy: expressions and statements in index order, then the
	 * statements' links */
	for (int pass = 0; pass < 2; pass++)   /* expressions, then statements */
	for (int i = 1; i < n0; i++) {
		KNode n = k->node[i];
		if (n.kind == KN_NONE || is_stmt(n.kind) != pass)
			continue;
		if (n.a > 0 && n.a < n0)
			n.a = map[n.a];
		if (n.b > 0 && n.b < n0 && !(is_stmt(n.kind) && n.kind != KS_STORE &&
		                               n.kind != KS_FOR))
			n.b = map[n.b];
		if (n.c > 0 && n.c < n0 && !is_stmt(n.kind))
			n.c = map[n.c];
		if ((n.kind == KE_LOAD || n.kind == KS_STORE) && cnt[n.buf] >= 0 &&
		    !(n.a = slice_index(a, k, item, cnt[n.buf], n.a)))
			goto nomem;
		if (!(map[i] = kir_push(a, k, &n)))
			goto nomem;
	}
	kir_relink(k, map, n0);
	if (!(zero = kir_push_i64(a, k, KE_CONST, 0, 0, 0, 0, 0)) ||
	    !(hi = kir_push_i64(a, k, KE_VAR, 0, 0, 0, 0, 0)))
		goto nomem;
	memset(&fn, 0, sizeof fn);
	fn.kind = KS_FOR;
	fn.lanes = 1;
	fn.var = item;
	fn.a = zero;
	fn.b = hi;
	/* the items are independent, unless one starts inside a byte of a
	 * packed buffer (int4 ...) whose previous item shares it: a store
	 * rewrites the whole byte, so those items run in order */
	fn.flags = KF_PARALLEL;
	for (int i = 0; i < k->nbuf; i++)
		if (cnt[i] >= 0 && dtype_is_packed(k->buf[i].dtype) &&
		    (k->buf[i].access & KA_WRITE) &&
		    cnt[i] * dtype_bits(k->buf[i].dtype) % 8)
			fn.flags = 0;
	fn.body = k->body > 0 && k->body < n0 ? map[k->body] : 0;
	if (!(loop = kir_push(a, k, &fn)))
		goto nomem;
	k->body = loop;
	free(cnt);
	free(map);
	return kir_verify(c, k);
nomem:
	rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	free(cnt);
	free(map);
	return rc;
}

int
dyn_peel(Ctx *c, Graph *g, KProgram *p, const char *dim,
         const unsigned char *batched, int nval0)
{
	unsigned char *b = calloc((size_t)g->nval + 1, 1);
	int rc = BURN_OK;

	if (!b)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	/* batched covers the values before lowering (nval0 of them); the
	 * lowering's scratch values come after */
	for (int v = 0; v < nval0 && v < g->nval; v++)
		b[v] = batched[v];
	/* a batched value living in the memory of one that is not (a pointwise
	 * kernel writing in place over an operand broadcast along the batch)
	 * would need that memory per item */
	for (int v = 0; v < nval0 && v < g->nval; v++) {
		int s = kprog_storage(p, v);
		if (b[v] && s != v && s < nval0 && !b[s]) {
			free(b);
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "value '%s' depends on "
			                 "the dynamic dim '%s' but is computed in place of "
			                 "'%s', which does not", GV(g, v)->name, dim,
			                 GV(g, s)->name);
		}
		if (b[v])
			b[s] = 1;
	}
	/* the lowering's scratch written by a kernel that loops over the
	 * items is one per item, and a kernel touching it loops too (scratch
	 * that only other kernels write, packed weights say, is shared) */
	for (int changed = 1; changed;) {
		changed = 0;
		for (int i = 0; i < p->nkernel; i++) {
			const KKernel *k = p->kernel[i];
			if (!touches_batch(p, k, b))
				continue;
			for (int j = 0; j < k->nbuf; j++) {
				int v = k->buf[j].value, s;
				if (k->buf[j].space != KS_GLOBAL || v < 0 ||
				    !(k->buf[j].access & KA_WRITE))
					continue;
				s = kprog_storage(p, v);
				if (!b[s] && is_scratch(g, s, nval0))
					b[s] = changed = 1;
			}
		}
	}
	for (int i = 0; i < p->nkernel && !rc; i++)
		rc = peel_kernel(c, g, p, p->kernel[i], dim, b, nval0);
	/* the shapes get the dim back */
	for (int v = 0; v < g->nval && !rc; v++) {
		Value *val = GV(g, v);
		if (!b[v])
			continue;
		if (v < nval0 && (val->dim[0] == 1 || val->kind == VK_INPUT ||
		                  val->is_output)) {
			val->dim[0] = -1;
			val->sym[0] = dim;
		} else {
			/* (and a value whose axis 0 holds several rows per item) */
			/* scratch of one item: [dim, its elements] */
			int64_t n = value_numel(val);
			if (n < 0) {
				rc = burn_fail(c, BURN_ERR_INTERNAL, "scratch '%s' has no size",
				               val->name);
				break;
			}
			val->rank = 2;
			val->dim[0] = -1;
			val->sym[0] = dim;
			val->dim[1] = n;
			val->sym[1] = NULL;
		}
	}
	free(b);
	return rc;
}

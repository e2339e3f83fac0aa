/*
 * verify.c - the graph checker run after loading and between passes.
 *
 * It checks the invariants stated in graph.h, in one walk over the nodes in
 * their current order:
 *   - every index (graph inputs/outputs, node inputs/outputs, producer) is
 *     in range;
 *   - each value is defined at most once: as a graph input, as a constant
 *     (v->data != NULL) or as an output of one live node;
 *   - every input of a live node is defined by an earlier node, a graph
 *     input, a constant or (in a subgraph) a value of an enclosing graph
 *     with the same name; graph outputs are defined;
 *   - producer/producer_out agree with the node outputs;
 *   - arities are within the op table's bounds and the required (leading)
 *     inputs and outputs are present;
 *   - shapes: rank -1 (unknown) or 0..BURN_MAX_RANK, dims >= 0 or -1
 *     (symbolic or unknown); constants have a known shape and a dtype with a
 *     size.
 * Dead nodes are skipped: their outputs count as undefined.  Subgraphs in
 * AT_GRAPH/AT_GRAPHS attributes are verified recursively (depth-limited).
 *
 * Failures are BURN_ERR_INTERNAL when they are about the graph structure
 * (a bug in a pass or the loader) and carry the node as location.
 */
#include "graph.h"

#include <stdlib.h>
#include <string.h>

static int verify(Ctx *c, const Graph *g, int depth);

/* Defined in an enclosing graph (outer-scope capture of a subgraph)? */
static int
outer(const Graph *g, const char *name)
{
	const Graph *p;

	for (p = g->parent; p; p = p->parent)
		if (graph_find_value(p, name) >= 0)
			return 1;
	return 0;
}

static int
check_shape(Ctx *c, const Value *v)
{
	int i;

	if (v->dtype < 0 || v->dtype >= DT_COUNT_)
		return burn_fail(c, BURN_ERR_INTERNAL, "value '%s': bad dtype %d",
		                 v->name, v->dtype);
	if (v->rank < -1 || v->rank > BURN_MAX_RANK)
		return burn_fail(c, BURN_ERR_INTERNAL,
		                 "value '%s': rank %d out of range", v->name, v->rank);
	for (i = 0; i < v->rank; i++)
		if (v->dim[i] < -1)
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "value '%s': dim %d is %lld", v->name, i,
			                 (long long)v->dim[i]);
	if (v->data) {
		if (dtype_bits(v->dtype) == 0)
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "constant '%s' has dtype %s", v->name,
			                 dtype_name(v->dtype));
		if (value_numel(v) < 0)
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "constant '%s' has an unknown shape", v->name);
	} else if (v->kind == VK_CONST)
		return burn_fail(c, BURN_ERR_INTERNAL,
		                 "constant '%s' has no data", v->name);
	return BURN_OK;
}

/* Structural checks of node i; defs[] counts definitions so far,
 * live[] says whether a value is defined at this point of the walk. */
static int
check_node(Ctx *c, const Graph *g, int i, unsigned char *live, int depth)
{
	const Node *n = &g->node[i];
	const OpInfo *oi;
	int k, j, min_in, max_in;

	if (n->op <= OP_NONE_ || n->op >= OP_COUNT_)
		return burn_fail(c, BURN_ERR_INTERNAL, "unknown op id %d", n->op);
	oi = &op_table[n->op];
	op_inputs(n->op, g->opset, &min_in, &max_in);
	if (n->nin < min_in || n->nin > max_in)
		return burn_fail(c, BURN_ERR_INTERNAL,
		                 "%d inputs, %s takes %d..%d", n->nin, oi->name,
		                 min_in, max_in);
	if (n->nout < oi->min_out || n->nout > oi->max_out)
		return burn_fail(c, BURN_ERR_INTERNAL,
		                 "%d outputs, %s has %d..%d", n->nout, oi->name,
		                 oi->min_out, oi->max_out);
	if ((n->nin && !n->in) || (n->nout && !n->out) || (n->nattr && !n->attr))
		return burn_fail(c, BURN_ERR_INTERNAL, "missing in/out/attr array");
	for (k = 0; k < n->nin; k++) {
		int x = n->in[k];
		if (x < -1 || x >= g->nval)
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "input %d is a bad value index %d", k, x);
		if (x < 0) {
			if (k < min_in)
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "required input %d is missing", k);
			continue;
		}
		if (!live[x])
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "input '%s' is not defined before use",
			                 g->val[x].name);
	}
	for (k = 0; k < n->nout; k++) {
		int x = n->out[k];
		const Value *v;
		if (x < -1 || x >= g->nval)
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "output %d is a bad value index %d", k, x);
		if (x < 0) {
			if (k < oi->min_out)
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "required output %d is missing", k);
			continue;
		}
		v = &g->val[x];
		if (live[x])
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "value '%s' is defined more than once", v->name);
		if (v->data || v->kind != VK_TEMP)
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "output '%s' is also a %s", v->name,
			                 v->data ? "constant" : "graph input");
		if (v->producer != i || v->producer_out != k)
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "output '%s' has producer %d.%d, not %d.%d",
			                 v->name, v->producer, v->producer_out, i, k);
		live[x] = 1;
	}
	for (k = 0; k < n->nattr; k++) {
		const Attr *a = &n->attr[k];
		if (!a->name)
			return burn_fail(c, BURN_ERR_INTERNAL, "attribute %d has no name", k);
		if (a->type == AT_GRAPH && a->g)
			TRY(verify(c, a->g, depth + 1));
		if (a->type == AT_GRAPHS && a->gs)
			for (j = 0; j < a->n; j++)
				if (a->gs[j])
					TRY(verify(c, a->gs[j], depth + 1));
	}
	return BURN_OK;
}

static int
verify(Ctx *c, const Graph *g, int depth)
{
	unsigned char *live;
	int i, rc = BURN_OK;
	const char *onode = c->node, *oop = c->op;

	if (depth > c->limits.max_depth)
		return burn_fail(c, BURN_ERR_LIMIT, "subgraphs nested deeper than %d",
		                 c->limits.max_depth);
	if (g->nnode > c->limits.max_nodes)
		return burn_fail(c, BURN_ERR_LIMIT, "graph '%s' has %d nodes (limit %d)",
		                 g->name, g->nnode, c->limits.max_nodes);
	if (g->nval < 0 || g->nnode < 0 || g->nin < 0 || g->nout < 0)
		return burn_fail(c, BURN_ERR_INTERNAL, "graph '%s': negative count",
		                 g->name);
	if (!(live = calloc((size_t)g->nval + 1, 1)))
		return burn_fail(c, BURN_ERR_NOMEM, "verify: out of memory");
	for (i = 0; i < g->nval && !rc; i++) {
		const Value *v = &g->val[i];
		if (!v->name)
			rc = burn_fail(c, BURN_ERR_INTERNAL, "value %d has no name", i);
		else if (!(rc = check_shape(c, v))) {
			if (v->producer < -1 || v->producer >= g->nnode)
				rc = burn_fail(c, BURN_ERR_INTERNAL,
				               "value '%s' has a bad producer %d", v->name,
				               v->producer);
			else if (v->producer >= 0) {
				const Node *p = &g->node[v->producer];
				if (v->producer_out < 0 || v->producer_out >= p->nout ||
				    p->out[v->producer_out] != i)
					rc = burn_fail(c, BURN_ERR_INTERNAL,
					               "value '%s': producer '%s' does not output it",
					               v->name, p->name);
			}
			if (!rc && v->data) {
				if (v->producer >= 0 && !g->node[v->producer].dead)
					rc = burn_fail(c, BURN_ERR_INTERNAL,
					               "constant '%s' is also output of node '%s'",
					               v->name, g->node[v->producer].name);
				live[i] = 1;
			}
		}
	}
	for (i = 0; i < g->nin && !rc; i++) {
		int x = g->in[i];
		if (x < 0 || x >= g->nval)
			rc = burn_fail(c, BURN_ERR_INTERNAL,
			               "graph input %d is a bad value index %d", i, x);
		else if (live[x] && !g->val[x].data)
			rc = burn_fail(c, BURN_ERR_INTERNAL,
			               "graph input '%s' is listed twice", g->val[x].name);
		else if (g->val[x].producer >= 0)
			rc = burn_fail(c, BURN_ERR_INTERNAL,
			               "graph input '%s' has a producer", g->val[x].name);
		else
			live[x] = 1;
	}
	/* a bound sequence or optional input (graph_bind_input): defined by
	 * its elements, inputs themselves */
	for (i = 0; i < g->nval && !rc; i++)
		if (g->val[i].producer < 0 &&
		    (g->val[i].kind == VK_SEQ || g->val[i].kind == VK_OPTNONE))
			live[i] = 1;
	if (!rc && g->parent)
		for (i = 0; i < g->nval; i++)
			if (!live[i] && g->val[i].producer < 0 && outer(g, g->val[i].name))
				live[i] = 1;
	for (i = 0; i < g->nnode && !rc; i++) {
		const Node *n = &g->node[i];
		if (n->dead)
			continue;
		c->node = n->name;
		c->op = n->op > OP_NONE_ && n->op < OP_COUNT_ ? op_table[n->op].name : NULL;
		rc = check_node(c, g, i, live, depth);
		c->node = onode;
		c->op = oop;
	}
	for (i = 0; i < g->nout && !rc; i++) {
		int x = g->out[i];
		if (x < 0 || x >= g->nval)
			rc = burn_fail(c, BURN_ERR_INTERNAL,
			               "graph output %d is a bad value index %d", i, x);
		else if (!live[x])
			rc = burn_fail(c, BURN_ERR_INTERNAL,
			               "graph output '%s' is not defined", g->val[x].name);
	}
	free(live);
	return rc;
}

int
graph_verify(Ctx *c, const Graph *g)
{
	return verify(c, g, 0);
}

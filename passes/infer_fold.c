/*
 * infer_fold.c - binding symbolic dims, shape/type inference with constant
 * folding, dead-code elimination, and lowering of the surviving nodes.
 *
 * Folding reuses the compiler itself: a node whose inputs are all constant
 * is lowered to kernel IR like any other and run by the kernel IR
 * interpreter, so every op that can be compiled can be folded, with the same
 * semantics, and there is no second implementation of any op to keep in
 * sync.
 */
#include <string.h>
#include "passes.h"
#include "lower.h"
#include "legalize.h"
#include "rng.h"

/* Fold only when the result is not much larger than what it replaces, so
 * that e.g. Expand of a scalar constant to a huge tensor stays a kernel
 * instead of bloating the weights. */
#define FOLD_FREE_BYTES (1 << 20)

static void enter(Ctx *c, const Node *n)
{
	c->node = n->name;
	c->op = op_table[n->op].name;
}

static void leave(Ctx *c)
{
	c->node = NULL;
	c->op = NULL;
}

/* Does some input of g have a symbolic dim named name? */
static int has_sym(const Graph *g, const char *name)
{
	for (int i = 0; i < g->nin; i++) {
		const Value *v = GV(g, g->in[i]);
		for (int d = 0; d < v->rank; d++)
			if (v->sym[d] && !strcmp(v->sym[d], name))
				return 1;
	}
	return 0;
}

int pass_bind_dims(Ctx *c, Graph *g, int nbind, const DimBind *bind)
{
	/* a --dim that binds nothing is a typo or the wrong model */
	for (int j = 0; j < nbind; j++)
		if (!has_sym(g, bind[j].name))
			return burn_fail(c, BURN_ERR_INVALID, "--dim %s: no input of the "
			                 "model has a symbolic dim of that name",
			                 bind[j].name);
	for (int i = 0; i < g->nin; i++) {
		Value *v = GV(g, g->in[i]);
		for (int d = 0; d < v->rank; d++) {
			if (!v->sym[d])
				continue;
			int j;
			for (j = 0; j < nbind; j++)
				if (!strcmp(bind[j].name, v->sym[d]))
					break;
			if (j == nbind)
				return burn_fail(c, BURN_ERR_UNSUPPORTED,
				                 "input '%s' has symbolic dim '%s': give its "
				                 "value with --dim %s=N", v->name, v->sym[d],
				                 v->sym[d]);
			if (bind[j].value < 0)
				return burn_fail(c, BURN_ERR_INVALID, "dim '%s' = %lld is negative",
				                 bind[j].name, (long long)bind[j].value);
			v->dim[d] = bind[j].value;
			v->sym[d] = NULL;
		}
	}
	return BURN_OK;
}

/* Check an input or output value's size against the limits.  A zero dim
 * counts as 1: an empty tensor of shape [0, 2^40, 2^40] has no elements,
 * but the lowering's strides and index arithmetic would still overflow
 * int64 (found by fuzz_ir_text), so its other dims must fit the limit too. */
static int check_size(Ctx *c, const Value *v)
{
	int64_t n = 1, b;

	for (int i = 0; i < v->rank; i++)
		if (v->dim[i] < 0 || burn_mul_ovf(n, v->dim[i] ? v->dim[i] : 1, &n))
			return burn_fail(c, BURN_ERR_LIMIT, "value '%s': element count "
			                 "overflows", v->name);
	if (dtype_nbytes(v->dtype, n, &b) || b > c->limits.max_tensor_bytes)
		return burn_fail(c, BURN_ERR_LIMIT, "value '%s' needs more than the "
		                 "tensor size limit --max-tensor-bytes (%lld)", v->name,
		                 (long long)c->limits.max_tensor_bytes);
	return BURN_OK;
}

/* Run the kernels of node n with the interpreter and make its outputs
 * constants.  All inputs are constants.  The interpreter may execute at
 * most --max-fold-steps statements for one node and --max-fold-total for
 * the model (*left: what remains of that): a node over budget is left
 * unfolded (returns BURN_OK with n alive) and becomes a kernel, so that a
 * small model with a huge constant computation compiles in bounded time. */
static int fold(Ctx *c, Graph *g, Node *n, int64_t *left)
{
	Arena tmp;
	KProgram p;
	Lower lw = { c, g, &p };
	int64_t steps = c->limits.max_fold_steps < *left ? c->limits.max_fold_steps : *left;
	int rc;

	arena_init(&tmp);
	kprog_init(&p, &tmp);
	rc = op_impl[n->op].lower(&lw, n);
	for (int k = 0; !rc && k < p.nkernel; k++) {
		KKernel *kk = p.kernel[k];
		void **bufs = arena_alloc(&tmp, sizeof(void *) * (kk->nbuf + 1));
		if (!bufs) {
			rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
			break;
		}
		for (int b = 0; b < kk->nbuf && !rc; b++) {
			Value *v;
			if (kk->buf[b].space != KS_GLOBAL)
				continue;
			v = GV(g, kk->buf[b].value);
			if (!v->data) {
				int64_t nb = value_nbytes(v);
				/* results live in the graph arena: they become constants */
				v->data = arena_alloc(&g->arena, nb > 0 ? nb : 1);
				if (!v->data)
					rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
			}
			bufs[b] = v->data;
		}
		if (!rc)
			rc = kir_legalize(c, &p, kk, NULL);
		if (!rc) {
			int64_t before = steps;
			rc = kir_interp_budget(c, kk, bufs, &steps);
			*left -= before - (steps > 0 ? steps : 0);
		}
	}
	arena_free(&tmp);
	if (rc) {
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0)
				GV(g, n->out[k])->data = NULL;
		if (rc == BURN_ERR_LIMIT && c->code == BURN_OK)
			return BURN_OK;   /* over budget: compiled as a kernel */
		return rc;
	}
	for (int k = 0; k < n->nout; k++) {
		if (n->out[k] < 0)
			continue;
		Value *v = GV(g, n->out[k]);
		v->kind = VK_CONST;
		v->producer = -1;
	}
	n->dead = 1;
	return BURN_OK;
}

static int foldable(const Graph *g, const Node *n)
{
	int64_t in_bytes = 0, out_bytes = 0;

	if (op_table[n->op].cls == OC_SHAPE)
		return 0;       /* their infer already produced the constant */
	if (random_node_draws(g, n))
		return 0;   /* random draws are made when the program runs */
	for (int k = 0; k < n->nin; k++) {
		const Value *v = NIN(g, n, k);
		if (v && !v->data)
			return 0;
		if (v)
			in_bytes += value_nbytes(v);
	}
	for (int k = 0; k < n->nout; k++)
		if (n->out[k] >= 0)
			out_bytes += value_nbytes(GV(g, n->out[k]));
	return out_bytes <= in_bytes || out_bytes <= FOLD_FREE_BYTES;
}

/* Does op take the cast-only types (ops.def's types column)? */
static int takes_cast_only(int op)
{
	return op_table[op].types == TY_ALL;
}

/* Infer node i of g (inputs inferred) and fold it when its inputs are all
 * constant: the step pass_infer_fold takes per node, also taken by
 * ctrlflow.c on the nodes it adds.  *left: the model's fold budget. */
int infer_fold_node(Ctx *c, Graph *g, int i, int64_t *left)
{
	Node *n = &g->node[i];
	int all_const = 1;

	enter(c, n);
	for (int k = 0; k < n->nin; k++) {
		const Value *v = NIN(g, n, k);
		if (v && (v->kind == VK_SEQ || v->kind == VK_OPTNONE)) {
			/* the sequence ops were expanded (ops_seq.c); Identity
			 * passes a list through */
			if (n->op != OP_Identity)
				return burn_fail(c, BURN_ERR_UNSUPPORTED, "input '%s' is %s; "
				                 "%s takes tensors", v->name,
				                 v->kind == VK_SEQ ? "a sequence" :
				                 "an empty optional", op_table[n->op].name);
			TRY(seq_alias(c, g, n->out[0], n->in[0]));
			g->node[i].dead = 1;
			leave(c);
			return BURN_OK;
		}
		if (v && (v->dtype == DT_UNDEF || v->rank < 0))
			return burn_fail(c, BURN_ERR_INTERNAL, "input '%s' has no type",
			                 v->name);
		if (v && dtype_is_string(v->dtype) && op_table[n->op].types == TY_STR)
			continue;
		if (v && dtype_is_string(v->dtype))
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "input '%s' is a string "
			                 "tensor, which %s does not take", v->name,
			                 op_table[n->op].name);
		if (v && (!dtype_supported(v->dtype) ||
		          (dtype_cast_only(v->dtype) && !takes_cast_only(n->op))))
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "input '%s' has "
			                 "unsupported dtype %s", v->name,
			                 dtype_name(v->dtype));
	}
	/* Equal of strings is the string op (passes/ops_str.c) */
	if (n->op == OP_Equal && n->nin > 0 && n->in[0] >= 0 &&
	    dtype_is_string(GV(g, n->in[0])->dtype))
		n->op = OP_StringEqual;
	TRY(op_impl[n->op].infer(c, g, n));
	for (int k = 0; k < n->nout; k++) {
		Value *v;
		if (n->out[k] < 0)
			continue;
		v = GV(g, n->out[k]);
		if (v->dtype == DT_UNDEF || v->rank < 0)
			continue;   /* optional output the op does not produce */
		if ((!dtype_supported(v->dtype) &&
		     !(dtype_is_string(v->dtype) && op_table[n->op].types == TY_STR)) ||
		    (dtype_cast_only(v->dtype) && !takes_cast_only(n->op)))
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "output '%s' has "
			                 "unsupported dtype %s", v->name,
			                 dtype_name(v->dtype));
		TRY(check_size(c, v));
		if (!v->data)
			all_const = 0;
	}
	if (all_const) {
		n->dead = 1;    /* infer produced the values (Shape, Constant) */
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0) {
				GV(g, n->out[k])->kind = VK_CONST;
				GV(g, n->out[k])->producer = -1;
			}
	} else if (*left > 0 && foldable(g, n)) {
		TRY(fold(c, g, n, left));
	}
	leave(c);
	return BURN_OK;
}

int pass_infer_fold(Ctx *c, Graph *g)
{
	InferBudget left = { c->limits.max_fold_total, CF_MAX_COPIES };

	for (int i = 0; i < g->nin; i++) {
		const Value *v = GV(g, g->in[i]);
		if (v->decl != VD_TENSOR)
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "input '%s' is %s: its "
			                 "%s is known only at run time; burncc resolves "
			                 "sequences and optionals at compile time (burncc "
			                 "check binds them to the test data's)", v->name,
			                 v->decl == VD_SEQ ? "a sequence" : "an optional",
			                 v->decl == VD_SEQ ? "length" : "presence");
		TRY(check_size(c, v));
	}
	for (int i = 0; i < g->nval; i++)      /* constants: also empty ones */
		if (GV(g, i)->data && GV(g, i)->rank >= 0)
			TRY(check_size(c, GV(g, i)));
	for (int i = 0; i < g->nnode; i++) {
		int added;

		if (g->node[i].dead)
			continue;
		if (op_table[g->node[i].op].cls != OC_CONTROL &&
		    op_table[g->node[i].op].cls != OC_SEQ &&
		    op_table[g->node[i].op].cls != OC_FUNC) {
			TRY(infer_fold_node(c, g, i, &left.fold));
			continue;
		}
		/* If, Loop, Scan, the sequence and function ops: what they
		 * stand for becomes nodes after i, already inferred and folded */
		TRY(cf_expand(c, g, i, &left, &added));
		i += added;
	}
	TRY(seq_flatten_outputs(c, g, &left));
	graph_compact(g);
	return BURN_OK;
}

/* One node at a time, for libburn (which records and infers a node at a
 * time): n, already inferred, becomes constants as pass_infer_fold would
 * make it, when its inputs are all constants (at least one) or inference
 * gave its values (Shape).  Left alone otherwise, or when over the fold
 * budget: *folded says which. */
int pass_fold_node(Ctx *c, Graph *g, Node *n, int *folded)
{
	int64_t left = c->limits.max_fold_steps;
	int all_const = 1, nin = 0;

	*folded = 0;
	for (int k = 0; k < n->nout; k++) {
		const Value *v = n->out[k] >= 0 ? GV(g, n->out[k]) : NULL;
		if (v && v->dtype != DT_UNDEF && v->rank >= 0 && !v->data)
			all_const = 0;
	}
	if (all_const) {
		n->dead = 1;
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0) {
				GV(g, n->out[k])->kind = VK_CONST;
				GV(g, n->out[k])->producer = -1;
			}
		*folded = 1;
		return BURN_OK;
	}
	for (int k = 0; k < n->nin; k++)
		nin += n->in[k] >= 0;
	if (!nin || !foldable(g, n))
		return BURN_OK;
	TRY(fold(c, g, n, &left));
	*folded = n->dead;
	return BURN_OK;
}

int pass_dce(Ctx *c, Graph *g)
{
	char *live = arena_alloc(&g->arena, g->nval + 1);

	if (!live)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	for (int i = 0; i < g->nout; i++)
		live[g->out[i]] = 1;
	/* nodes are in topological order: one backward sweep suffices */
	for (int i = g->nnode - 1; i >= 0; i--) {
		Node *n = &g->node[i];
		int used = 0;
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0 && live[n->out[k]])
				used = 1;
		if (!used) {
			n->dead = 1;
			continue;
		}
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] >= 0)
				live[n->in[k]] = 1;
	}
	graph_compact(g);
	return BURN_OK;
}

int pass_lower(Ctx *c, Graph *g, KProgram *p, const Target *t)
{
	Lower lw = { c, g, p, NULL, t };

	for (int i = 0; i < g->nnode; i++) {
		Node *n = &g->node[i];
		int first = p->nkernel;
		if (n->dead)
			continue;
		enter(c, n);
		TRY(op_impl[n->op].lower(&lw, n));
		for (int k = first; k < p->nkernel; k++) {
			TRY(kir_verify(c, p->kernel[k]));
			p->kernel[k]->guard = n->guard;
			p->kernel[k]->guard_neg = n->guard_neg;
		}
		leave(c);
	}
	return BURN_OK;
}

/*
 * lower.c - helpers shared by the op families: binding node values to kernel
 * buffers, loop nests, index expressions, broadcasting, small checks.
 */
#include <string.h>
#include "lower.h"

const OpImpl op_impl[OP_COUNT_] = {
	{NULL, NULL},
#define OP(name, mi, xi, mo, xo, cls, ty, inf, low, grad) {inf, low},
#include "../ir/ops.def"
#undef OP
};

/* The name a kernel of n is asked to have (64 bytes): "k_" and the op
 * name in lower case. */
static void kernel_base(const Node *n, char *name)
{
	const char *op = op_table[n->op].name;
	size_t i;

	name[0] = 'k';
	name[1] = '_';
	for (i = 2; *op && i < 63; i++, op++)
		name[i] = (*op >= 'A' && *op <= 'Z') ? *op - 'A' + 'a' : *op;
	name[i] = 0;
}

KStep sched_decide(KProgram *p, KKernel *k, KStep d)
{
	const KSteps *w = kprog_want(p, k->name);
	const KStep *got = kkernel_step(k, d.kind, d.arg[0]);

	if (got)
		return *got;
	if (w && (got = ksteps_find(w, d.kind, d.arg[0])))
		d = *got;
	kprog_step_put(p, k, &d);   /* out of memory: unrecorded (and then
	                             * sched_check_want reports a wanted step) */
	return d;
}

KStep lower_step(Lower *lw, KB *kb, KStep d)
{
	return sched_decide(lw->prog, kb->k, d);
}

int sched_check_want(Ctx *c, const KProgram *p)
{
	char have[1024], step[512];

	for (int i = 0; i < p->nwant; i++) {
		const KWant *w = &p->want[i];
		const KKernel *k = NULL;
		for (int j = 0; j < p->nkernel && !k; j++)
			if (!strcmp(p->kernel[j]->name, w->kernel))
				k = p->kernel[j];
		if (!k)
			return burn_fail(c, BURN_ERR_INVALID, "--schedule: no kernel named "
			                 "'%s' (--emit=schedule lists them)", w->kernel);
		for (int s = 0; s < w->steps.n; s++) {
			const KStep *st = &w->steps.step[s], *got;
			KSteps one = { 0 }, all;
			got = kkernel_step(k, st->kind, st->arg[0]);
			if (got && kstep_same(got, st))
				continue;
			ksteps_put(&one, st);
			ksteps_format(&one, step, sizeof step);
			kkernel_steps(k, &all);
			ksteps_format(&all, have, sizeof have);
			return burn_fail(c, BURN_ERR_INVALID, "--schedule: kernel %s: step "
			                 "'%s' %s (its schedule: '%s')", k->name, step,
			                 got ? "cannot be built" : "does not apply to it", have);
		}
	}
	return BURN_OK;
}

const KStep *lower_want(Lower *lw, Node *n, int kind)
{
	char name[64], next[128];

	if (!lw->prog->nwant)
		return NULL;
	kernel_base(n, name);
	kprog_next_name(lw->prog, name, next, sizeof next);
	return ksteps_find(kprog_want(lw->prog, next), kind, 0);
}

/* Kernel names: "k_" and the op name in lower case, e.g. "k_conv" (the
 * prefix keeps them clear of libm's names), made unique by the builder.  ops records "Op(node)" so --emit=kernels can show what each
 * kernel implements. */
void lower_begin(Lower *lw, KB *kb, Node *n)
{
	char name[64];
	const char *op = op_table[n->op].name;

	kernel_base(n, name);
	kb_begin(kb, lw->prog, name,
	         arena_printf(lw->prog->arena, "%s(%s)%s", op, n->name ? n->name : "",
	                      lw->epi && &lw->g->node[lw->epi->anchor] == n ?
	                      lw->epi->ops : ""));
}

/* Values that share memory (a reshape and its input, an in-place result
 * and the input it overwrites) are one buffer of the kernel: two restrict
 * pointers to the same memory would be undefined behaviour. */
int lower_bind(Lower *lw, KB *kb, int v, int access)
{
	const Value *val;

	v = kprog_storage(lw->prog, v);
	val = GV(lw->g, v);
	return kb_buf_value(kb, v, val->dtype, value_numel(val), access);
}

int lower_const_table(Lower *lw, KB *kb, Node *n, const char *what, int dt,
                      int64_t count, const void *data, int *buf)
{
	Graph *g = lw->g;
	int v = graph_add_value(g, arena_printf(&g->arena, "%s.%s",
	                                        NOUT(g, n, 0)->name, what));

	if (v < 0)
		return burn_fail(lw->ctx, BURN_ERR_NOMEM, "out of memory");
	TRY(graph_set_const(lw->ctx, g, v, dt, 1, &count, data));
	*buf = lower_bind(lw, kb, v, KA_READ);
	return BURN_OK;
}

int lower_in(Lower *lw, KB *kb, Node *n, int k)
{
	return lower_bind(lw, kb, n->in[k], KA_READ);
}

int lower_out(Lower *lw, KB *kb, Node *n, int k)
{
	/* with an epilogue the anchor writes the fused result instead */
	if (k == 0 && lw->epi && &lw->g->node[lw->epi->anchor] == n)
		return lower_bind(lw, kb, lw->epi->out, KA_RW);
	return lower_bind(lw, kb, n->out[k], KA_WRITE);
}

void lower_end(Lower *lw, KB *kb)
{
	(void)lw;
	kb_finish(kb);
}

int lower_temp(Lower *lw, int dtype, int rank, const int64_t *dim)
{
	Graph *g = lw->g;
	int v = graph_add_value(g, arena_printf(&g->arena, "tmp%d", g->nval));

	set_out(GV(g, v), dtype, rank, dim);
	return v;
}

int64_t shape_strides(int rank, const int64_t *dim, int64_t *stride)
{
	int64_t n = 1;

	for (int i = rank - 1; i >= 0; i--) {
		stride[i] = n;
		n *= dim[i];
	}
	return n;
}

void loops_open(KB *kb, int rank, const int64_t *dim, int *vars)
{
	for (int i = 0; i < rank; i++) {
		char name[16];
		snprintf(name, sizeof name, "i%d", i);
		vars[i] = kb_for(kb, name, kb_idx(kb, 0), kb_idx(kb, dim[i]),
		                 KF_PARALLEL);
	}
}

void loops_close(KB *kb, int rank)
{
	for (int i = 0; i < rank; i++)
		kb_end(kb);
}

KRef index_linear(KB *kb, int rank, const int *vars, const int64_t *stride)
{
	KRef e = kb_idx(kb, 0);

	for (int i = 0; i < rank; i++)
		e = kb_bin(kb, KO_ADD, e,
		           kb_bin(kb, KO_MUL, kb_get(kb, vars[i]), kb_idx(kb, stride[i])));
	return e;
}

/* Input dims align with the output's trailing dims; a dim of 1 is
 * broadcast, so it contributes nothing to the index. */
KRef index_bcast(KB *kb, const Value *in, int out_rank, const int *out_vars)
{
	int64_t stride[BURN_MAX_RANK];
	KRef e = kb_idx(kb, 0);
	int off = out_rank - in->rank;

	shape_strides(in->rank, in->dim, stride);
	for (int i = 0; i < in->rank; i++) {
		if (in->dim[i] == 1)
			continue;
		e = kb_bin(kb, KO_ADD, e, kb_bin(kb, KO_MUL, kb_get(kb, out_vars[off + i]),
		                                 kb_idx(kb, stride[i])));
	}
	return e;
}

int shape_broadcast(Ctx *c, int ra, const int64_t *a, int rb, const int64_t *b,
                    int *rout, int64_t *out)
{
	int r = ra > rb ? ra : rb;

	for (int i = 0; i < r; i++) {
		int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
		int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
		if (da != db && da != 1 && db != 1) {
			char sa[128], sb[128];
			Value va = {0}, vb = {0};
			va.rank = ra; vb.rank = rb;
			memcpy(va.dim, a, sizeof(int64_t) * ra);
			memcpy(vb.dim, b, sizeof(int64_t) * rb);
			va.dtype = vb.dtype = DT_UNDEF;
			return burn_fail(c, BURN_ERR_SHAPE, "cannot broadcast %s with %s",
			                 value_type_str(&va, sa, sizeof sa),
			                 value_type_str(&vb, sb, sizeof sb));
		}
		out[i] = da == 1 ? db : da;
	}
	*rout = r;
	return BURN_OK;
}

int norm_axis(Ctx *c, int64_t axis, int rank, int *out)
{
	int64_t a = axis < 0 ? axis + rank : axis;

	if (a < 0 || a >= (rank > 0 ? rank : 1))
		return burn_fail(c, BURN_ERR_INVALID, "axis %lld out of range for rank %d",
		                 (long long)axis, rank);
	*out = (int)a;
	return BURN_OK;
}

void set_out(Value *v, int dtype, int rank, const int64_t *dim)
{
	v->dtype = dtype;
	v->rank = rank;
	for (int i = 0; i < rank; i++) {
		v->dim[i] = dim[i];
		v->sym[i] = NULL;
	}
}

int need_const(Ctx *c, Graph *g, Node *n, int k, const Value **out)
{
	const Value *v = NIN(g, n, k);

	if (!v)
		return burn_fail(c, BURN_ERR_INVALID, "input %d is required", k);
	if (!v->data)
		return burn_fail(c, BURN_ERR_UNSUPPORTED,
		                 "input %d ('%s') must be a constant (data-dependent shapes "
		                 "are not supported)", k, v->name);
	*out = v;
	return BURN_OK;
}

/* Shared inference rule: output 0 has input 0's dtype and shape. */
int infer_same(Ctx *c, Graph *g, Node *n)
{
	const Value *x = NIN(g, n, 0);

	if (!x)
		return burn_fail(c, BURN_ERR_INVALID, "input 0 is required");
	set_out(NOUT(g, n, 0), x->dtype, x->rank, x->dim);
	return BURN_OK;
}

/* Reshape-like ops (Reshape, Flatten, Squeeze, Unsqueeze, Identity) need no
 * kernel: their output is the input's memory seen with another shape.  A
 * graph output still gets a copy, since the caller's buffer must hold it.
 * Returns 1 when n was aliased. */
int lower_alias(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	int out;

	if (n->op != OP_Reshape && n->op != OP_Flatten && n->op != OP_Squeeze &&
	    n->op != OP_Unsqueeze && n->op != OP_Identity)
		return 0;
	out = n->out[0];
	if (GV(g, out)->is_output || NIN(g, n, 0)->dtype != GV(g, out)->dtype)
		return 0;
	return lower_set_alias(lw, out, n->in[0]);
}

int lower_set_alias(Lower *lw, int v, int storage)
{
	return lower_set_alias_at(lw, v, storage, 0);
}

int lower_set_alias_at(Lower *lw, int v, int storage, int64_t off)
{
	KProgram *p = lw->prog;
	Graph *g = lw->g;

	if (p->nalias < g->nval) {
		int *a = arena_grow(p->arena, p->alias, sizeof(int), p->nalias, g->nval);
		int64_t *o = a && p->alias_off ? arena_grow(p->arena, p->alias_off,
		                                           sizeof(int64_t), p->nalias, g->nval)
		                               : NULL;
		if (!a || (p->alias_off && !o))
			return 0;
		for (int i = p->nalias; i < g->nval; i++) {
			a[i] = i;
			if (o)
				o[i] = 0;
		}
		p->alias = a;
		if (o)
			p->alias_off = o;
		p->nalias = g->nval;
	}
	off += kprog_storage_off(p, storage);
	if (off && !p->alias_off) {
		int64_t *o = arena_alloc(p->arena, sizeof(int64_t) * (size_t)p->nalias);
		if (!o)
			return 0;
		memset(o, 0, sizeof(int64_t) * (size_t)p->nalias);
		p->alias_off = o;
	}
	/* point at the end of the chain: a storage value is never aliased
	 * later (values are aliased when produced, before any use), so every
	 * chain stays one step long and kprog_storage takes constant time
	 * however long a chain of reshapes is.  The one exception, a Concat's
	 * input placed in its output (lower_concat), makes chains of two. */
	p->alias[v] = kprog_storage(p, storage);
	if (p->alias_off)
		p->alias_off[v] = off;
	return 1;
}

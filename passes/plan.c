/*
 * plan.c - static memory planning.
 *
 * Every intermediate (a value a kernel touches that is neither a graph
 * input, a graph output nor a constant) gets a fixed offset in one arena
 * the caller provides.  A value is live from the first kernel that touches
 * it to the last one (inclusive); two values whose live ranges overlap may
 * not overlap in memory.
 *
 * The plan also makes the launch list (passes.h): how every kernel's
 * buffers bind to weights, arena offsets, graph inputs and outputs.
 *
 * Offsets are assigned greedily, largest value first, each at the lowest
 * offset that fits between the already placed values it is live with
 * ("greedy by size", as in TFLite's arena planner).  This is within a few
 * percent of the lower bound (the largest sum of live bytes over kernels)
 * on the networks we have measured.
 */
#include <stdlib.h>
#include <string.h>
#include "passes.h"

typedef struct Item {
	int value;
	int grp;           /* its group: 0 static, else its dims (see below) */
	int first, last;   /* kernel indices, inclusive */
	int64_t size;      /* bytes, rounded up to BURN_ARENA_ALIGN */
	int64_t raw;       /* bytes */
	int64_t off;
} Item;

static int by_size_desc(const void *a, const void *b)
{
	const Item *x = a, *y = b;

	if (x->grp != y->grp)
		return x->grp - y->grp;
	if (x->size != y->size)
		return x->size < y->size ? 1 : -1;
	return x->first - y->first;
}

static int by_off(const void *a, const void *b)
{
	const Item *x = *(Item *const *)a, *y = *(Item *const *)b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* Every value gets at least one alignment unit, so that even an empty
 * value has an address of its own (kernels take restrict pointers).
 * Returns 1 on overflow. */
static int align_up(int64_t n, int64_t *out)
{
	if (n <= 0) {
		*out = BURN_ARENA_ALIGN;
		return 0;
	}
	if (burn_add_ovf(n, BURN_ARENA_ALIGN - 1, &n))
		return 1;
	*out = n / BURN_ARENA_ALIGN * BURN_ARENA_ALIGN;
	return 0;
}

/* Work allowed for the placement search (kernels scanned, placed values
 * looked at) before the remaining values are stacked above the placed
 * ones, which needs no search: the plan stays valid, only less tight, and
 * planning stays linear whatever the live ranges a model makes. */
#define PLAN_WORK ((int64_t)1 << 26)

static int too_big(Ctx *c)
{
	return burn_fail(c, BURN_ERR_LIMIT, "the arena of intermediates needs more "
	                 "than the limit --max-arena-bytes (%lld)",
	                 (long long)c->limits.max_arena_bytes);
}

/* Where graph value v0 (its storage, aliases followed) is, into e. */
static int
bind_value(Ctx *c, const Graph *g, const KProgram *p, Arena *a, Plan *out,
           const DimExpr *const *doff, int v0, LaunchArg *e)
{
	int v = kprog_storage(p, v0);
	int64_t at = kprog_storage_off(p, v0);   /* v0 at an offset in v: its own size */

	memset(e, 0, sizeof *e);
	e->value = v;
	e->index = -1;
	if (at && value_shape_known(GV(g, v0)))
		e->bytes.c = value_nbytes(GV(g, v0));
	else if (value_shape_known(GV(g, v)))
		e->bytes.c = value_nbytes(GV(g, v));
	else if (!(e->bytes.e = plan_value_bytes(a, g, v, out->ndims, out->dims)))
		return burn_fail(c, BURN_ERR_INTERNAL, "value '%s' has no size over "
		                 "the plan's dims", GV(g, v)->name);
	if (GV(g, v)->data) {
		e->kind = LK_WEIGHT;
	} else if (out->offset[v] >= 0) {
		e->kind = LK_ARENA;
		if (doff[v])
			e->offset.e = at ? dx_add(a, doff[v], dx_const(a, at)) : doff[v];
		else
			e->offset.c = out->offset[v] + at;
	} else {
		for (int i = 0; i < g->nin && e->index < 0; i++)
			if (g->in[i] == v) {
				e->kind = LK_INPUT;
				e->index = i;
			}
		for (int i = 0; i < g->nout && e->index < 0; i++)
			if (g->out[i] == v) {
				e->kind = LK_OUTPUT;
				e->index = i;
			}
		if (e->index < 0)
			return burn_fail(c, BURN_ERR_INTERNAL, "value '%s' has no "
			                 "storage", GV(g, v)->name);
	}
	return BURN_OK;
}

/* Does a global buffer of kernel kk live in storage s? */
static int
binds(const KProgram *p, const KKernel *kk, int s)
{
	for (int b = 0; b < kk->nbuf; b++)
		if (kk->buf[b].space == KS_GLOBAL && kk->buf[b].value >= 0 &&
		    kprog_storage(p, kk->buf[b].value) == s)
			return 1;
	return 0;
}

/*
 * Kernel k's guard (a run-time If's branch, KKernel.guard) as a binding
 * of its bool, when the value is sure to hold the condition while k runs:
 * a graph input, or a value some kernel before k binds (so it is computed
 * by then) and some kernel after k binds (so its memory is not reused in
 * between: the If's select reads it last).  Otherwise, a condition fused
 * away into a kernel or a constant, k runs unguarded, which is right too.
 */
static int
bind_guard(Ctx *c, const Graph *g, const KProgram *p, Arena *a, Plan *out,
           const DimExpr *const *doff, int k, Launch *l)
{
	const KKernel *kk = p->kernel[k];
	int v = kk->guard - 1, s, before = 0, after = 0;
	LaunchArg *e;

	if (v < 0 || v >= g->nval || GV(g, v)->dtype != DT_BOOL ||
	    value_numel(GV(g, v)) != 1)
		return BURN_OK;
	s = kprog_storage(p, v);
	if (s < 0 || s >= g->nval || GV(g, s)->data)
		return BURN_OK;
	for (int i = 0; i < g->nin; i++)
		if (g->in[i] == s)
			before = after = 1;
	if (!before && out->offset[s] >= 0)
		for (int j = 0; j < p->nkernel; j++)
			if (j != k && binds(p, p->kernel[j], s))
				*(j < k ? &before : &after) = 1;
	if (!before || !after)
		return BURN_OK;
	if (!(e = arena_alloc(a, sizeof *e)))
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	TRY(bind_value(c, g, p, a, out, doff, v, e));
	e->buf = -1;
	l->guard = e;
	l->guard_neg = kk->guard_neg;
	return BURN_OK;
}

/*
 * The launch list: each kernel's global buffers bound to memory.  Aliases
 * are followed first (a reshape is its input's memory); then constant data
 * is a weight, a planned value is at its arena offset, and what is left
 * must be a graph input or, failing that, a graph output (a value that is
 * both is passed as the input, which the caller already holds).
 */
static int
launch_list(Ctx *c, const Graph *g, const KProgram *p, Arena *a, Plan *out,
            const DimExpr *const *doff)
{
	Launch *ls = arena_alloc(a, sizeof *ls * (p->nkernel + 1));

	if (!ls)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	for (int k = 0; k < p->nkernel; k++) {
		const KKernel *kk = p->kernel[k];
		LaunchArg *arg = arena_alloc(a, sizeof *arg * (kk->nbuf + 1));
		int n = 0;
		if (!arg)
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		for (int b = 0; b < kk->nbuf; b++) {
			LaunchArg *e = &arg[n];
			if (kk->buf[b].space != KS_GLOBAL)
				continue;
			if (kk->buf[b].value < 0 || kk->buf[b].value >= g->nval)
				return burn_fail(c, BURN_ERR_INTERNAL, "kernel %s: global buffer "
				                 "b%d is bound to no value", kk->name, b);
			TRY(bind_value(c, g, p, a, out, doff, kk->buf[b].value, e));
			e->buf = b;
			n++;
		}
		ls[k].narg = n;
		ls[k].arg = arg;
		TRY(bind_guard(c, g, p, a, out, doff, k, &ls[k]));
		/* dim parameters by name: the kernel's hint is the dim's name */
		if (kk->ndim > 0) {
			const DimExpr **dv = arena_alloc(a, sizeof *dv * (size_t)kk->ndim);
			if (!dv)
				return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
			for (int i = 0; i < kk->ndim; i++) {
				int d = 0;
				while (d < out->ndims && strcmp(out->dims[d], kk->var[i].name))
					d++;
				if (d == out->ndims)
					return burn_fail(c, BURN_ERR_INTERNAL, "kernel %s: dim "
					                 "parameter '%s' is no dim of the graph's "
					                 "inputs", kk->name, kk->var[i].name);
				if (!(dv[i] = dx_dim(a, d)))
					return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
			}
			ls[k].ndim = kk->ndim;
			ls[k].dim = dv;
		}
	}
	out->launch = ls;
	return BURN_OK;
}

/*
 * Dims known at run time.  A value whose shape has symbolic dims is sized
 * per unit: its bytes with every symbolic dim 1, times the product of those
 * dims (its scale).  Values of one scale form a group, placed by the same
 * greedy search over their unit sizes; the group then occupies scale times
 * that, above the groups before it:
 *
 *     offset(v) = base(group) + scale(group) * unit offset(v)
 *
 * Two values of a group live at once have disjoint unit ranges, so their
 * scaled ranges are disjoint too, and groups never overlap.  Group 0 is
 * the static values (scale 1, base 0), so a program without symbolic dims
 * is planned exactly as before.  Unit sizes are multiples of
 * BURN_ARENA_ALIGN, so every offset stays aligned.
 */
#define PLAN_MAX_DIMS 8

/* Place items it[0..nit) (one group, sorted by size): offsets in it[].off
 * and the end of the highest in *end. */
static int place(Ctx *c, Item *it, int nit, int nkernel, int64_t *end_out)
{
	Item **placed = calloc((size_t)nit + 1, sizeof *placed);
	int *head = malloc(sizeof(int) * ((size_t)nkernel + 1));
	int *stamp = malloc(sizeof(int) * ((size_t)nit + 1));
	int *lnext = NULL, *litem = NULL, nlist = 0, caplist = 0, rc = BURN_OK;
	int64_t work = 0, top = 0;

	if (!placed || !head || !stamp) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		goto done;
	}
	for (int k = 0; k < nkernel; k++)
		head[k] = -1;
	for (int i = 0; i < nit; i++)
		stamp[i] = -1;
	for (int i = 0; i < nit; i++) {
		int np = 0;
		int64_t off = 0, end;
		if (work <= PLAN_WORK) {
			/* the placed values live at the same time as it[i] */
			for (int k = it[i].first; k <= it[i].last; k++) {
				work++;
				for (int e = head[k]; e >= 0; e = lnext[e], work++) {
					int j = litem[e];
					if (stamp[j] == i)
						continue;
					stamp[j] = i;
					placed[np++] = &it[j];
				}
			}
			qsort(placed, np, sizeof *placed, by_off);
			for (int j = 0; j < np; j++) {
				if (placed[j]->off - off >= it[i].size)
					break;          /* fits in the gap before placed[j] */
				if (placed[j]->off + placed[j]->size > off)
					off = placed[j]->off + placed[j]->size;
			}
			/* enter it[i] in the lists of the kernels where it lives */
			for (int k = it[i].first; k <= it[i].last; k++, work++) {
				if (nlist == caplist) {
					int want = caplist ? 2 * caplist : 1024;
					int *n2 = realloc(lnext, sizeof(int) * want);
					int *i2 = n2 ? realloc(litem, sizeof(int) * want) : NULL;
					if (n2)
						lnext = n2;
					if (!n2 || !i2) {
						rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
						goto done;
					}
					litem = i2;
					caplist = want;
				}
				litem[nlist] = i;
				lnext[nlist] = head[k];
				head[k] = nlist++;
			}
		} else {
			off = top;   /* above everything placed */
		}
		if (burn_add_ovf(off, it[i].size, &end) || end > c->limits.max_arena_bytes) {
			rc = too_big(c);
			goto done;
		}
		it[i].off = off;
		if (end > top)
			top = end;
	}
	*end_out = top;
done:
	free(placed);
	free(head);
	free(stamp);
	free(lnext);
	free(litem);
	return rc;
}

/* The plan's dims: the symbolic dims of the graph's inputs, in order. */
static int plan_dims(Ctx *c, const Graph *g, Arena *a, Plan *out)
{
	const char *d[PLAN_MAX_DIMS];
	int n = 0;

	for (int i = 0; i < g->nin; i++) {
		const Value *v = GV(g, g->in[i]);
		for (int k = 0; k < v->rank; k++) {
			int j = 0;
			if (!v->sym[k])
				continue;
			while (j < n && strcmp(d[j], v->sym[k]))
				j++;
			if (j < n)
				continue;
			if (n == PLAN_MAX_DIMS)
				return burn_fail(c, BURN_ERR_UNSUPPORTED, "more than %d "
				                 "symbolic dims", PLAN_MAX_DIMS);
			d[n++] = v->sym[k];
		}
	}
	out->ndims = n;
	if (n && !(out->dims = arena_alloc(a, sizeof *out->dims * (size_t)n)))
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	for (int i = 0; i < n; i++)
		out->dims[i] = d[i];
	return BURN_OK;
}

/* Value v's scale key (how many times each plan dim divides its size, four
 * bits per dim: 0 for a static value) and its bytes per unit; -1 when a
 * symbolic dim is no plan dim or the size overflows. */
static int64_t unit_of(const Graph *g, int v, const Plan *pl, int64_t *raw)
{
	const Value *val = GV(g, v);
	int packed = dtype_is_packed(val->dtype);
	int64_t key = 0, n = packed ? 1 : dtype_size(val->dtype);

	if (val->rank < 0 || n <= 0)
		return -1;
	for (int k = 0; k < val->rank; k++) {
		int j = 0;
		if (!val->sym[k]) {
			if (val->dim[k] < 0 || burn_mul_ovf(n, val->dim[k], &n))
				return -1;
			continue;
		}
		while (j < pl->ndims && strcmp(pl->dims[j], val->sym[k]))
			j++;
		if (j == pl->ndims || (key >> 4 * j & 15) == 15)
			return -1;
		key += (int64_t)1 << 4 * j;
	}
	/* packed (int4 ...): n elements per unit, neighbours sharing bytes;
	 * the unit's bytes rounded up bound the whole's ceil(bits / 8) from
	 * above (plan_value_bytes gives it exactly) */
	if (packed && burn_mul_ovf(n, dtype_bits(val->dtype), &n))
		return -1;
	*raw = packed ? n / 8 + (n % 8 != 0) : n;
	return key;
}

/* The scale of key: the product of its dims. */
static const DimExpr *scale_of(Arena *a, int64_t key)
{
	const DimExpr *e = dx_const(a, 1);

	for (int j = 0; j < PLAN_MAX_DIMS; j++)
		for (int m = 0; m < (key >> 4 * j & 15); m++)
			e = dx_mul(a, e, dx_dim(a, j));
	return e;
}

const DimExpr *plan_value_bytes(Arena *a, const Graph *g, int v, int ndims,
                                const char *const *dims)
{
	const Value *val = GV(g, v);
	Plan pl;
	int64_t raw, key, bits = dtype_bits(val->dtype);

	memset(&pl, 0, sizeof pl);
	pl.ndims = ndims;
	pl.dims = (const char **)dims;
	if ((key = unit_of(g, v, &pl, &raw)) < 0)
		return NULL;
	if (dtype_is_packed(val->dtype)) {
		/* exactly ceil(elements * bits / 8): a caller's buffer */
		for (int k = 0; k < val->rank; k++)
			if (!val->sym[k] && burn_mul_ovf(bits, val->dim[k], &bits))
				return NULL;
		return dx_cdiv(a, dx_mul(a, scale_of(a, key), dx_const(a, bits)),
		               dx_const(a, 8));
	}
	return dx_mul(a, scale_of(a, key), dx_const(a, raw));
}

int pass_plan(Ctx *c, Graph *g, const KProgram *p, Arena *a, Plan *out)
{
	int *slot = arena_alloc(a, sizeof(int) * (g->nval + 1));
	char *is_weight = arena_alloc(a, g->nval + 1);
	const DimExpr **doff = NULL;
	Item *it = NULL;
	int nit = 0, rc = BURN_OK, ngrp = 1;
	int64_t *live = NULL, *gone = NULL, keys[64] = { 0 };
	const DimExpr *base;

	memset(out, 0, sizeof *out);
	out->offset = arena_alloc(a, sizeof(int64_t) * (g->nval + 1));
	if (!slot || !is_weight || !out->offset)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	TRY(plan_dims(c, g, a, out));
	out->nkernels = p->nkernel;
	for (int v = 0; v < g->nval; v++) {
		out->offset[v] = -1;
		slot[v] = -1;
	}
	it = calloc(g->nval + 1, sizeof *it);
	live = calloc(p->nkernel + 2, sizeof *live);
	gone = calloc(p->nkernel + 2, sizeof *gone);
	doff = calloc(g->nval + 1, sizeof *doff);
	if (!it || !live || !gone || !doff) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		goto done;
	}

	/* live ranges */
	for (int k = 0; k < p->nkernel; k++) {
		const KKernel *kk = p->kernel[k];
		for (int b = 0; b < kk->nbuf; b++) {
			int v = kk->buf[b].value;
			const Value *val;
			if (kk->buf[b].space != KS_GLOBAL || v < 0)
				continue;
			v = kprog_storage(p, v);   /* a reshape shares its input's memory */
			val = GV(g, v);
			if (val->data) {
				if (!is_weight[v])
					out->weights_bytes += value_nbytes(val);
				is_weight[v] = 1;
				continue;
			}
			if (val->kind == VK_INPUT || val->is_output)
				continue;
			if (slot[v] < 0) {
				int64_t key = unit_of(g, v, out, &it[nit].raw);
				int grp = 0;
				if (key < 0 || align_up(it[nit].raw, &it[nit].size)) {
					rc = key < 0 && !value_shape_known(val)
					   ? burn_fail(c, BURN_ERR_INTERNAL, "value '%s': a "
					               "symbolic dim of no input", val->name)
					   : too_big(c);
					goto done;
				}
				while (grp < ngrp && keys[grp] != key)
					grp++;
				if (grp == ngrp) {
					if (ngrp == 64) {
						rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "more than 64 "
						               "combinations of symbolic dims");
						goto done;
					}
					keys[ngrp++] = key;
				}
				slot[v] = nit;
				it[nit].value = v;
				it[nit].grp = grp;
				it[nit].first = k;
				nit++;
			}
			it[slot[v]].last = k;
		}
	}

	/* the string heap lives to the end: outputs point into it */
	if (g->str_heap > 0 && g->str_heap <= g->nval && slot[g->str_heap - 1] >= 0)
		it[slot[g->str_heap - 1]].last = p->nkernel - 1;

	/* lower bound: the most bytes live at any one kernel, a running sum
	 * of the bytes that start living at each kernel (live[]) less those
	 * that stopped living before it (gone[]); every sum is checked (with
	 * symbolic dims: at every dim = 1) */
	for (int i = 0; i < nit; i++)
		if (burn_add_ovf(live[it[i].first], it[i].raw, &live[it[i].first]) ||
		    burn_add_ovf(gone[it[i].last + 1], it[i].raw, &gone[it[i].last + 1])) {
			rc = too_big(c);
			goto done;
		}
	{
		int64_t now = 0;
		for (int k = 0; k < p->nkernel; k++) {
			now -= gone[k];   /* they were counted in now: stays >= 0 */
			if (burn_add_ovf(now, live[k], &now)) {
				rc = too_big(c);
				goto done;
			}
			if (now > out->lower_bound)
				out->lower_bound = now;
		}
	}

	/* greedy by size, group by group, each above the ones before */
	qsort(it, nit, sizeof *it, by_size_desc);
	base = dx_const(a, 0);
	for (int i = 0, grp = 0; grp < ngrp; grp++) {
		int j = i;
		int64_t top = 0;
		const DimExpr *scale = scale_of(a, keys[grp]);
		while (j < nit && it[j].grp == grp)
			j++;
		if ((rc = place(c, it + i, j - i, p->nkernel, &top)))
			goto done;
		for (int m = i; m < j; m++) {
			out->offset[it[m].value] = it[m].off;
			if (grp > 0)
				doff[it[m].value] = dx_add(a, base, dx_mul(a, scale,
				                           dx_const(a, it[m].off)));
		}
		if (grp == 0)
			out->arena_bytes = top;
		base = dx_add(a, base, dx_mul(a, scale, dx_const(a, top)));
		if (!base) {
			rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
			goto done;
		}
		i = j;
	}
	if (ngrp > 1) {
		out->arena.e = base;
		out->arena_bytes = -1;
	} else {
		out->arena.c = out->arena_bytes;
	}
	for (int v = 0; v < g->nval; v++)
		if (kprog_storage(p, v) != v) {
			int s = kprog_storage(p, v);
			int64_t at = kprog_storage_off(p, v);
			out->offset[v] = out->offset[s] >= 0 ? out->offset[s] + at : out->offset[s];
			doff[v] = doff[s] && at ? dx_add(a, doff[s], dx_const(a, at)) : doff[s];
		}
	rc = launch_list(c, g, p, a, out, doff);
done:
	free(it);
	free(live);
	free(gone);
	free(doff);
	return rc;
}

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
	int first, last;   /* kernel indices, inclusive */
	int64_t size;      /* bytes, rounded up to BURN_ARENA_ALIGN */
	int64_t raw;       /* bytes */
	int64_t off;
} Item;

static int by_size_desc(const void *a, const void *b)
{
	const Item *x = a, *y = b;

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

/*
 * The launch list: each kernel's global buffers bound to memory.  Aliases
 * are followed first (a reshape is its input's memory); then constant data
 * is a weight, a planned value is at its arena offset, and what is left
 * must be a graph input or, failing that, a graph output (a value that is
 * both is passed as the input, which the caller already holds).
 */
static int
launch_list(Ctx *c, const Graph *g, const KProgram *p, Arena *a, Plan *out)
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
			int v;
			LaunchArg *e = &arg[n];
			if (kk->buf[b].space != KS_GLOBAL)
				continue;
			if (kk->buf[b].value < 0 || kk->buf[b].value >= g->nval)
				return burn_fail(c, BURN_ERR_INTERNAL, "kernel %s: global buffer "
				                 "b%d is bound to no value", kk->name, b);
			v = kprog_storage(p, kk->buf[b].value);
			memset(e, 0, sizeof *e);
			e->buf = b;
			e->value = v;
			e->index = -1;
			if (GV(g, v)->data) {
				e->kind = LK_WEIGHT;
			} else if (out->offset[v] >= 0) {
				e->kind = LK_ARENA;
				e->offset.c = out->offset[v];
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
			n++;
		}
		ls[k].narg = n;
		ls[k].arg = arg;
	}
	out->launch = ls;
	return BURN_OK;
}

int pass_plan(Ctx *c, Graph *g, const KProgram *p, Arena *a, Plan *out)
{
	int *slot = arena_alloc(a, sizeof(int) * (g->nval + 1));
	char *is_weight = arena_alloc(a, g->nval + 1);
	Item *it = NULL, **placed = NULL;
	int nit = 0, rc = BURN_OK;
	int64_t *live = NULL, *gone = NULL, work = 0;
	/* per kernel, the placed items live there: a list through lnext */
	int *head = NULL, *lnext = NULL, *litem = NULL, *stamp = NULL, nlist = 0, caplist = 0;

	memset(out, 0, sizeof *out);
	out->offset = arena_alloc(a, sizeof(int64_t) * (g->nval + 1));
	if (!slot || !is_weight || !out->offset)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	out->nkernels = p->nkernel;
	for (int v = 0; v < g->nval; v++) {
		out->offset[v] = -1;
		slot[v] = -1;
	}
	it = calloc(g->nval + 1, sizeof *it);
	placed = calloc(g->nval + 1, sizeof *placed);
	live = calloc(p->nkernel + 2, sizeof *live);
	gone = calloc(p->nkernel + 2, sizeof *gone);
	head = malloc(sizeof(int) * (p->nkernel + 1));
	stamp = malloc(sizeof(int) * (g->nval + 1));
	if (!it || !placed || !live || !gone || !head || !stamp) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		goto done;
	}
	for (int k = 0; k < p->nkernel; k++)
		head[k] = -1;

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
				slot[v] = nit;
				it[nit].value = v;
				it[nit].first = k;
				it[nit].raw = value_nbytes(val);
				if (it[nit].raw < 0 || align_up(it[nit].raw, &it[nit].size)) {
					rc = too_big(c);
					goto done;
				}
				nit++;
			}
			it[slot[v]].last = k;
		}
	}

	/* lower bound: the most bytes live at any one kernel, a running sum
	 * of the bytes that start living at each kernel (live[]) less those
	 * that stopped living before it (gone[]); every sum is checked */
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

	/* greedy by size */
	qsort(it, nit, sizeof *it, by_size_desc);
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
			off = out->arena_bytes;   /* above everything placed */
		}
		if (burn_add_ovf(off, it[i].size, &end) || end > c->limits.max_arena_bytes) {
			rc = too_big(c);
			goto done;
		}
		it[i].off = off;
		out->offset[it[i].value] = off;
		if (end > out->arena_bytes)
			out->arena_bytes = end;
	}
	for (int v = 0; v < g->nval; v++)
		if (kprog_storage(p, v) != v)
			out->offset[v] = out->offset[kprog_storage(p, v)];
	rc = launch_list(c, g, p, a, out);
done:
	free(it);
	free(placed);
	free(live);
	free(gone);
	free(head);
	free(stamp);
	free(lnext);
	free(litem);
	return rc;
}

/*
 * realise.c - the sync point: cut, look up or compile, run (internal.h).
 *
 * The cut.  The values to realise are the pending values that a live
 * tensor is (pv.t set, no buffer, not depending on a placeholder).  One
 * backward pass over pg's nodes marks what they need, stopping at leaves
 * (values with a buffer) and constants.  One forward pass over the marked
 * nodes writes the signature: an exact encoding of the cut (per node its
 * op, input references, attributes; per leaf, at its first use, dtype,
 * shape and, for a constant, its bytes; then the outputs), in which a
 * value is referred to by its position in the cut, never by pg's numbers.
 * Two cuts with equal signatures are the same program up to the values of
 * the inputs, so the signature's hash finds the program and a memcmp
 * confirms it.  Realised tensors are inputs of the program, not
 * constants, so a program never depends on their values.
 *
 * The program.  On a miss the cut is rebuilt as a standalone Graph
 * (inputs in leaf order, outputs in value order) and compiled by the
 * same passes as an ONNX model (burn_compile_graph) for the llvm target,
 * whose kernels ORC compiles (codegen/llvm/jit.h).  The launch list is
 * then flattened into a binding per kernel buffer (input i, output j, the
 * arena at an offset, a constant's data), so a hit binds with no graph
 * walk: the run is a loop of llvm_jit_call over those bindings.
 *
 * In place.  A program of one kernel whose nodes are all pointwise reads
 * and writes every element at the same index, so an input of an
 * output's dtype and shape may be that output's memory.  At run time an
 * input is given over when nothing else holds its buffer (its tensor was
 * released: the leaf's reference is the only one) and no other pending
 * node reads it.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../passes/passes.h"
#include "../codegen/target_iface.h"
#ifdef BURN_HAVE_LLVM
#include "../codegen/llvm/jit.h"
#define EAGER_TARGET "llvm"
#else
/* A build without LLVM (no llvm-config-19): libburn still works, its
 * programs compiled for the c target and run by the kernel-IR interpreter
 * (correct, and much slower: docs/ARCHITECTURE.md, "libburn"). */
#define EAGER_TARGET "c"
typedef struct LlvmJit LlvmJit;
#endif
#include "../runtime/parallel.h"
#include "internal.h"

enum { BIND_NONE = 0, BIND_IN, BIND_OUT, BIND_ARENA, BIND_PTR };

typedef struct Bind {
	int kind;
	int index;           /* BIND_IN, BIND_OUT */
	int64_t off;         /* BIND_ARENA */
	void *ptr;           /* BIND_PTR: a constant's data */
} Bind;

typedef struct KBind {
	int nbuf;
	Bind *bind;
	int64_t *dims;       /* the kernel's dim parameters, evaluated */
} KBind;

/* How output j gets its bytes when no kernel writes it. */
enum { SRC_KERNEL = 0, SRC_PTR, SRC_IN, SRC_OUT };

struct Prog {
	uint64_t hash;
	int nsig;
	uint64_t *sig;
	Compiled *m;
	LlvmJit *jit;
	const Backend *dev;  /* a device target that runs m itself (cuda:
	                      * Backend.run), or NULL: the kernels here */
	int nkernel, maxbuf;
	KBind *kb;
	int nin, nout;
	int64_t arena_bytes;
	int64_t *out_bytes;
	int *src_kind, *src_index;
	void **src_ptr;
	uint64_t *inplace;   /* per output: inputs (bit i) it may take over */
};

/* ---- scratch -------------------------------------------------------------- */

static int
grow(burn_ctx *ctx, void **p, int *cap, int want, size_t elem)
{
	if (want <= *cap)
		return BURN_OK;
	int n = *cap ? *cap : 64;
	while (n < want)
		n *= 2;
	void *q = realloc(*p, elem * (size_t)n);
	if (!q)
		return burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
	memset((char *)q + elem * (size_t)*cap, 0, elem * (size_t)(n - *cap));
	*p = q;
	*cap = n;
	return BURN_OK;
}

static int
sig_put(burn_ctx *ctx, int *n, uint64_t w)
{
	if (*n == ctx->capsig)
		TRY(grow(ctx, (void **)&ctx->sig, &ctx->capsig, *n + 1, sizeof *ctx->sig));
	ctx->sig[(*n)++] = w;
	return BURN_OK;
}

static int
sig_bytes(burn_ctx *ctx, int *n, const void *p, int64_t len)
{
	const unsigned char *b = p;

	TRY(sig_put(ctx, n, (uint64_t)len));
	for (int64_t i = 0; i < len; i += 8) {
		uint64_t w = 0;
		memcpy(&w, b + i, (size_t)(len - i < 8 ? len - i : 8));
		TRY(sig_put(ctx, n, w));
	}
	return BURN_OK;
}

static int
is_leaf(const burn_ctx *ctx, int v)
{
	return ctx->pv[v].buf || ctx->pv[v].ph || GV(ctx->pg, v)->data;
}

/* Refer to value v: a node output already numbered, or a leaf described
 * at its first use. */
static int
sig_ref(burn_ctx *ctx, int *n, int v, int *nleaf, int *nid)
{
	uint32_t want = 2 * ctx->stamp + 1;
	const Value *val;

	if (v < 0)
		return sig_put(ctx, n, ~(uint64_t)0);
	if (ctx->mark[v] == want)
		return sig_put(ctx, n, (uint64_t)ctx->id[v]);
	if (!is_leaf(ctx, v))
		return burn_fail(&ctx->c, BURN_ERR_INTERNAL, "realise: value %d used "
		                 "before it is defined", v);
	/* a new leaf: its description, then it has the next id */
	val = GV(ctx->pg, v);
	TRY(grow(ctx, (void **)&ctx->leaf, &ctx->capleaf, *nleaf + 1, sizeof *ctx->leaf));
	ctx->leaf[(*nleaf)++] = v;
	ctx->mark[v] = want;
	ctx->id[v] = (*nid)++;
	TRY(sig_put(ctx, n, (uint64_t)1 << 63 | (uint64_t)(ctx->pv[v].frozen != 0) << 33 |
	            (uint64_t)(val->data != NULL) << 32 | (uint64_t)val->dtype << 8 |
	            (uint64_t)val->rank));
	for (int d = 0; d < val->rank; d++)
		TRY(sig_put(ctx, n, (uint64_t)val->dim[d]));
	if (ctx->pv[v].frozen)   /* its id stands for its bytes */
		TRY(sig_put(ctx, n, ctx->pv[v].frozen));
	else if (val->data)
		TRY(sig_bytes(ctx, n, val->data, value_nbytes(val)));
	return BURN_OK;
}

static int
sig_attr(burn_ctx *ctx, int *n, const Attr *a)
{
	TRY(sig_bytes(ctx, n, a->name, (int64_t)strlen(a->name)));
	TRY(sig_put(ctx, n, (uint64_t)a->type));
	switch (a->type) {
	case AT_INT: return sig_put(ctx, n, (uint64_t)a->i);
	case AT_FLOAT: {
		uint64_t w;
		memcpy(&w, &a->f, 8);
		return sig_put(ctx, n, w);
	}
	case AT_STRING: return sig_bytes(ctx, n, a->s, a->slen);
	case AT_INTS: return sig_bytes(ctx, n, a->ints, (int64_t)a->n * 8);
	case AT_FLOATS: return sig_bytes(ctx, n, a->floats, (int64_t)a->n * 8);
	case AT_STRINGS:
		TRY(sig_put(ctx, n, (uint64_t)a->n));
		for (int k = 0; k < a->n; k++)
			TRY(sig_bytes(ctx, n, a->strs[k], (int64_t)strlen(a->strs[k])));
		return BURN_OK;
	case AT_TENSOR:
		TRY(sig_put(ctx, n, (uint64_t)a->t->dtype << 8 | (uint64_t)a->t->rank));
		for (int d = 0; d < a->t->rank; d++)
			TRY(sig_put(ctx, n, (uint64_t)a->t->dim[d]));
		return sig_bytes(ctx, n, a->t->data, a->t->nbytes);
	}
	return burn_fail(&ctx->c, BURN_ERR_UNSUPPORTED, "attribute '%s': %s",
	                 a->name, attr_type_name(a->type));
}

static uint64_t
hash_words(const uint64_t *w, int n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;

	for (int i = 0; i < n; i++) {
		h ^= w[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

/* A fresh mark: values marked with it are needed by this cut (the
 * stamp's odd twin, need + 1, marks values the cut defines). */
static uint32_t
new_stamp(burn_ctx *ctx)
{
	if (++ctx->stamp >= 0x7fffffff) {
		ctx->stamp = 1;
		memset(ctx->mark, 0, sizeof *ctx->mark * (size_t)ctx->capmark);
	}
	return 2 * ctx->stamp;
}

/* Walking back from the values marked `need`: every node of g that one of
 * them needs, stopping at leaves, marking its inputs needed in turn.
 * ctx->nodes[0..*nn) gets them in program order. */
static int
need_nodes(burn_ctx *ctx, const Graph *g, uint32_t need, int *nn)
{
	int m = 0;

	*nn = 0;
	for (int i = g->nnode - 1; i >= 0; i--) {
		const Node *n = &g->node[i];
		int used = 0;
		for (int k = 0; k < n->nout && !used; k++)
			used = n->out[k] >= 0 && ctx->mark[n->out[k]] == need &&
			       !is_leaf(ctx, n->out[k]);
		if (!used)
			continue;
		for (int k = 0; k < n->nin; k++)
			if (n->in[k] >= 0)
				ctx->mark[n->in[k]] = need;
		TRY(grow(ctx, (void **)&ctx->nodes, &ctx->capnodes, m + 1, sizeof *ctx->nodes));
		ctx->nodes[m++] = i;
	}
	for (int a = 0, b = m - 1; a < b; a++, b--) {
		int t = ctx->nodes[a];
		ctx->nodes[a] = ctx->nodes[b];
		ctx->nodes[b] = t;
	}
	*nn = m;
	return BURN_OK;
}

/*
 * The cut: ctx->outv[0..*nout) the values to realise, ctx->nodes[0..*nn)
 * the nodes, ctx->leaf[0..*nleaf) the leaves in order of first use, the
 * signature in ctx->sig[0..*nsig).
 */
static int
cut(burn_ctx *ctx, int *nout, int *nn, int *nleaf, int *nsig)
{
	Graph *g = ctx->pg;
	uint32_t need;
	int no = 0, nnode = 0, ns = 0, nid = 0;

	*nout = *nn = *nleaf = *nsig = 0;
	TRY(grow(ctx, (void **)&ctx->mark, &ctx->capmark, g->nval, sizeof *ctx->mark));
	TRY(grow(ctx, (void **)&ctx->id, &ctx->capid, ctx->capmark, sizeof *ctx->id));
	need = new_stamp(ctx);
	for (int v = 0; v < g->nval; v++) {
		const PVal *p = &ctx->pv[v];
		if (p->t && !p->buf && !p->sym) {
			TRY(grow(ctx, (void **)&ctx->outv, &ctx->capout, no + 1, sizeof *ctx->outv));
			ctx->outv[no++] = v;
			ctx->mark[v] = need;
		}
	}
	if (!no)
		return BURN_OK;
	TRY(need_nodes(ctx, g, need, &nnode));
	TRY(sig_put(ctx, &ns, (uint64_t)nnode << 32 | (uint64_t)no));
	for (int i = 0; i < nnode; i++) {
		const Node *n = &g->node[ctx->nodes[i]];
		TRY(sig_put(ctx, &ns, (uint64_t)n->op << 32 | (uint64_t)n->nin << 16 |
		            (uint64_t)n->nout));
		for (int k = 0; k < n->nin; k++)
			TRY(sig_ref(ctx, &ns, n->in[k], nleaf, &nid));
		TRY(sig_put(ctx, &ns, (uint64_t)n->nattr));
		for (int a = 0; a < n->nattr; a++)
			TRY(sig_attr(ctx, &ns, &n->attr[a]));
		for (int k = 0; k < n->nout; k++)
			if (n->out[k] >= 0) {
				ctx->mark[n->out[k]] = 2 * ctx->stamp + 1;
				ctx->id[n->out[k]] = nid++;
			}
	}
	for (int j = 0; j < no; j++)
		TRY(sig_ref(ctx, &ns, ctx->outv[j], nleaf, &nid));
	*nout = no;
	*nn = nnode;
	*nsig = ns;
	return BURN_OK;
}

/* ---- programs ------------------------------------------------------------- */

void
api_prog_free(Prog *p)
{
	if (!p)
		return;
#ifdef BURN_HAVE_LLVM
	llvm_jit_free(p->jit);
#endif
	burn_compiled_destroy(p->m);
	for (int k = 0; k < p->nkernel && p->kb; k++) {
		free(p->kb[k].bind);
		free(p->kb[k].dims);
	}
	free(p->kb);
	free(p->sig);
	free(p->out_bytes);
	free(p->src_kind);
	free(p->src_index);
	free(p->src_ptr);
	free(p->inplace);
	free(p);
}


/* The cut as a standalone graph: leaves that are constants stay
 * constants (copied), the others are inputs in leaf order.  src (NULL, or
 * trace_nin + nleaf entries): each constant's tensor, by value index. */
static int
cut_graph(burn_ctx *ctx, int nout, int nn, int nleaf, int trace_nin,
          const int *trace_in, Graph **out, burn_tensor **src)
{
	const Graph *pg = ctx->pg;
	Graph *g;
	int *map, rc = BURN_OK, nin = 0;

	*out = NULL;
	if (!(g = graph_create("eager")))
		return burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
	g->opset = pg->opset;
	if (!(map = malloc(sizeof *map * (size_t)(pg->nval + 1)))) {
		graph_destroy(g);
		return burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
	}
	for (int v = 0; v < pg->nval; v++)
		map[v] = -1;
	/* traced programs: the placeholders first, in the order given */
	for (int i = 0; i < trace_nin && !rc; i++) {
		const Value *pv = GV(pg, trace_in[i]);
		int v = graph_add_value(g, pv->name);
		if (v < 0) {
			rc = burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
			break;
		}
		GV(g, v)->dtype = pv->dtype;
		value_copy_shape(GV(g, v), pv);
		graph_add_input(g, v);
		map[trace_in[i]] = v;
	}
	for (int i = 0; i < nleaf && !rc; i++) {
		int lv = ctx->leaf[i], v;
		const Value *pv = GV(pg, lv);
		char nm[32];
		if (map[lv] >= 0)
			continue;
		if (ctx->pv[lv].ph && trace_nin >= 0) {
			rc = burn_fail(&ctx->c, BURN_ERR_INVALID, "trace: the outputs depend "
			               "on placeholder '%s', which is not an input", pv->name);
			break;
		}
		snprintf(nm, sizeof nm, pv->data || trace_nin >= 0 ? "c%d" : "in%d", i);
		if ((v = graph_add_value(g, nm)) < 0) {
			rc = burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
			break;
		}
		map[lv] = v;
		if (pv->data || trace_nin >= 0) {
			/* traced: realised tensors are constants */
			const void *d = pv->data ? pv->data : ctx->pv[lv].buf->data;
			rc = graph_set_const(&ctx->c, g, v, pv->dtype, pv->rank, pv->dim, d);
			if (src) {
				/* a realised tensor's leaf knows no tensor: find it */
				burn_tensor *t = ctx->pv[lv].t;
				for (t = t ? t : ctx->live; t && !src[v]; t = t->next)
					if (t == ctx->pv[lv].t ||
					    (t->epoch == ctx->epoch && t->val == lv))
						src[v] = t;
			}
		} else {
			GV(g, v)->dtype = pv->dtype;
			value_copy_shape(GV(g, v), pv);
			graph_add_input(g, v);
			nin++;
		}
	}
	for (int i = 0; i < nn && !rc; i++) {
		const Node *n = &pg->node[ctx->nodes[i]];
		int ins[64], outs[64], node;
		char nm[32];
		if (n->nin > 64 || n->nout > 64) {
			rc = burn_fail(&ctx->c, BURN_ERR_UNSUPPORTED, "%s with %d inputs",
			               op_table[n->op].name, n->nin);
			break;
		}
		for (int k = 0; k < n->nin; k++)
			ins[k] = n->in[k] < 0 ? -1 : map[n->in[k]];
		for (int k = 0; k < n->nout && !rc; k++) {
			const Value *pv;
			if (n->out[k] < 0) {
				outs[k] = -1;
				continue;
			}
			pv = GV(pg, n->out[k]);
			snprintf(nm, sizeof nm, "v%d", g->nval);
			if ((outs[k] = graph_add_value(g, nm)) < 0) {
				rc = burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
				break;
			}
			map[n->out[k]] = outs[k];
			(void)pv;
		}
		if (rc)
			break;
		snprintf(nm, sizeof nm, "%s_%d", op_table[n->op].name, i);
		if ((node = graph_add_node(g, n->op, nm, n->nin, ins, n->nout, outs)) < 0) {
			rc = burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
			break;
		}
		for (int k = 0; k < n->nout; k++)
			if (outs[k] >= 0) {
				GV(g, outs[k])->producer = node;
				GV(g, outs[k])->producer_out = k;
			}
		for (int a = 0; a < n->nattr && !rc; a++)
			rc = api_copy_attr(&ctx->c, g, node, &n->attr[a]);
	}
	for (int j = 0; j < nout && !rc; j++) {
		int v = map[ctx->outv[j]];
		if (v < 0)
			rc = burn_fail(&ctx->c, BURN_ERR_INTERNAL, "realise: output %d is "
			               "not in the cut", j);
		else
			graph_add_output(g, v);
	}
	free(map);
	if (rc) {
		graph_destroy(g);
		return rc;
	}
	*out = g;
	return BURN_OK;
}

static double
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Flatten m's launch list into p's bindings; decide in-place pairs. */
static int
bindings(burn_ctx *ctx, Prog *p, int nn)
{
	const Compiled *m = p->m;
	const Graph *g = m->g;
	Ctx *c = &ctx->c;
	int all_elem = 1;

	if (m->plan.ndims > 0 || m->plan.nkernels != m->prog.nkernel)
		return burn_fail(c, BURN_ERR_INTERNAL, "realise: a program with dims "
		                 "known at run time");
	p->nkernel = m->prog.nkernel;
	p->nin = g->nin;
	p->nout = g->nout;
	p->arena_bytes = m->plan.arena_bytes;
	p->maxbuf = 1;
	if (!(p->kb = calloc((size_t)p->nkernel + 1, sizeof *p->kb)) ||
	    !(p->out_bytes = calloc((size_t)p->nout + 1, sizeof *p->out_bytes)) ||
	    !(p->src_kind = calloc((size_t)p->nout + 1, sizeof *p->src_kind)) ||
	    !(p->src_index = calloc((size_t)p->nout + 1, sizeof *p->src_index)) ||
	    !(p->src_ptr = calloc((size_t)p->nout + 1, sizeof *p->src_ptr)) ||
	    !(p->inplace = calloc((size_t)p->nout + 1, sizeof *p->inplace)))
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	for (int j = 0; j < p->nout; j++) {
		p->out_bytes[j] = value_nbytes(GV(g, g->out[j]));
		p->src_kind[j] = -1;
	}
	for (int k = 0; k < p->nkernel; k++) {
		const KKernel *kk = m->prog.kernel[k];
		const Launch *l = &m->plan.launch[k];
		KBind *b = &p->kb[k];
		b->nbuf = kk->nbuf;
		if (kk->nbuf > p->maxbuf)
			p->maxbuf = kk->nbuf;
		if (!(b->bind = calloc((size_t)kk->nbuf + 1, sizeof *b->bind)) ||
		    !(b->dims = calloc((size_t)l->ndim + 1, sizeof *b->dims)))
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		for (int i = 0; i < l->narg; i++) {
			const LaunchArg *e = &l->arg[i];
			Bind *d;
			if (e->buf < 0 || e->buf >= kk->nbuf)
				return burn_fail(c, BURN_ERR_INTERNAL, "launch of %s: bad buffer",
				                 kk->name);
			d = &b->bind[e->buf];
			switch (e->kind) {
			case LK_WEIGHT:
				d->kind = BIND_PTR;
				d->ptr = GV(g, e->value)->data;
				break;
			case LK_ARENA:
				if (e->offset.e || e->bytes.e || e->offset.c < 0 ||
				    e->offset.c + e->bytes.c > m->plan.arena_bytes)
					return burn_fail(c, BURN_ERR_INTERNAL, "launch of %s: b%d "
					                 "is outside the arena", kk->name, e->buf);
				d->kind = BIND_ARENA;
				d->off = e->offset.c;
				break;
			case LK_INPUT:
				d->kind = BIND_IN;
				d->index = e->index;
				break;
			case LK_OUTPUT:
				d->kind = BIND_OUT;
				d->index = e->index;
				if (e->index >= 0 && e->index < p->nout)
					p->src_kind[e->index] = SRC_KERNEL;
				break;
			default:
				return burn_fail(c, BURN_ERR_INTERNAL, "launch of %s: bad kind",
				                 kk->name);
			}
		}
		for (int i = 0; i < kk->nbuf; i++)
			if (kk->buf[i].space == KS_GLOBAL && !b->bind[i].kind &&
			    (kk->buf[i].count > 0 || kk->buf[i].ext))
				return burn_fail(c, BURN_ERR_INTERNAL, "launch of %s: b%d unbound",
				                 kk->name, i);
		if (l->ndim != kk->ndim)
			return burn_fail(c, BURN_ERR_INTERNAL, "launch of %s: dims", kk->name);
		for (int i = 0; i < l->ndim; i++)
			TRY(dx_eval(c, l->dim[i], 0, NULL, NULL, &b->dims[i]));
	}
	/* outputs no kernel wrote: constants, inputs passed through, or an
	 * earlier output naming the same value (as llvm_run does) */
	for (int j = 0; j < p->nout; j++) {
		const Value *v = GV(g, g->out[j]);
		if (p->src_kind[j] == SRC_KERNEL)
			continue;
		for (int q = 0; q < j && p->src_kind[j] < 0; q++)
			if (g->out[q] == g->out[j]) {
				p->src_kind[j] = SRC_OUT;
				p->src_index[j] = q;
			}
		if (p->src_kind[j] < 0 && v->data) {
			p->src_kind[j] = SRC_PTR;
			p->src_ptr[j] = v->data;
		}
		for (int q = 0; q < g->nin && p->src_kind[j] < 0; q++)
			if (g->in[q] == g->out[j]) {
				p->src_kind[j] = SRC_IN;
				p->src_index[j] = q;
			}
		if (p->src_kind[j] < 0 && p->out_bytes[j] > 0)
			return burn_fail(c, BURN_ERR_INTERNAL, "realise: nothing computes "
			                 "output %d", j);
		if (p->src_kind[j] < 0)
			p->src_kind[j] = SRC_PTR;   /* empty */
	}
	/* in place: one kernel of pointwise nodes with one output, so its
	 * loop body reads every input element before its one store.  (With
	 * two outputs the second store's expression may load the input again
	 * after the first store wrote over it: x + 3 then x + 4 read x + 3
	 * as x.  O2's GVN happened to reuse the first load; a leaner pipeline
	 * did not, and test_api's max_pending_and_interrupt got 14 for 11.) */
	for (int i = 0; i < nn; i++)
		if (op_table[ctx->pg->node[ctx->nodes[i]].op].cls != OC_ELEM)
			all_elem = 0;
	if (p->nkernel == 1 && all_elem && p->nout == 1 && g->nin <= 64)
		for (int j = 0; j < p->nout; j++) {
			const Value *o = GV(g, g->out[j]);
			if (p->src_kind[j] != SRC_KERNEL || p->out_bytes[j] <= 0)
				continue;
			for (int i = 0; i < g->nin; i++) {
				const Value *x = GV(g, g->in[i]);
				if (x->dtype == o->dtype && x->rank == o->rank &&
				    !memcmp(x->dim, o->dim, sizeof *x->dim * (size_t)x->rank))
					p->inplace[j] |= (uint64_t)1 << i;
			}
		}
	return BURN_OK;
}

static int
compile(burn_ctx *ctx, int nout, int nn, int nleaf, int nsig, uint64_t hash, Prog **out)
{
	const Backend *be = backend_find(ctx->opt.device == BURN_DEVICE_CUDA ? "cuda"
	                                                                     : EAGER_TARGET);
	CompileOpts o = { 0 };
#ifdef BURN_HAVE_LLVM
	LlvmJitOpts jo = { 0 };
#else
	struct { int hit; } jo = { 0 };
#endif
	Graph *g;
	Prog *p;
	double t0 = now_ms();
	int rc;

	*out = NULL;
	if (!be || (ctx->opt.device == BURN_DEVICE_CUDA && !be->run))
		return burn_fail(&ctx->c, BURN_ERR_INTERNAL, "no %s target",
		                 ctx->opt.device == BURN_DEVICE_CUDA ? "cuda" : EAGER_TARGET);
	TRY(cut_graph(ctx, nout, nn, nleaf, -1, NULL, &g, NULL));
	if (!(p = calloc(1, sizeof *p)) ||
	    !(p->sig = malloc(sizeof *p->sig * (size_t)nsig))) {
		free(p);
		graph_destroy(g);
		return burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
	}
	memcpy(p->sig, ctx->sig, sizeof *p->sig * (size_t)nsig);
	p->nsig = nsig;
	p->hash = hash;
	o.target = be->target;
	o.no_fuse = ctx->opt.no_fuse;
	ctx->c.file = "eager";
	rc = burn_compile_graph(&ctx->c, g, &o, &p->m);
	/* burn_options.cache_dir NULL is the default directory ("" to the
	 * JIT), "" no disk cache (NULL to the JIT) */
	if (ctx->opt.device == BURN_DEVICE_CUDA)
		p->dev = be;    /* the driver's JIT loads the PTX at the first run */
#ifdef BURN_HAVE_LLVM
	jo.cache_dir = !ctx->opt.cache_dir ? "" : *ctx->opt.cache_dir ?
	               ctx->opt.cache_dir : NULL;
	jo.cache_max_bytes = ctx->opt.cache_bytes;
	if (!rc && !p->dev)
		rc = llvm_jit_compile_opts(&ctx->c, &p->m->prog, &jo, &p->jit);
#endif
	ctx->c.file = NULL;
	ctx->c.node = ctx->c.op = NULL;
	if (!rc)
		rc = bindings(ctx, p, nn);
	if (rc) {
		api_prog_free(p);
		return rc;
	}
	if (jo.hit)
		ctx->st.disk_hits++;
	else
		ctx->st.compiles++;
	ctx->st.compile_ms += now_ms() - t0;
	*out = p;
	return BURN_OK;
}

static int
cache_put(burn_ctx *ctx, Prog *p)
{
	if ((ctx->nprog + 1) * 2 > ctx->captab) {
		int cap = ctx->captab ? ctx->captab * 2 : 64;
		Prog **t = calloc((size_t)cap, sizeof *t);
		if (!t)
			return burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
		for (int i = 0; i < ctx->captab; i++)
			if (ctx->tab[i]) {
				int h = (int)(ctx->tab[i]->hash & (uint64_t)(cap - 1));
				while (t[h])
					h = (h + 1) & (cap - 1);
				t[h] = ctx->tab[i];
			}
		free(ctx->tab);
		ctx->tab = t;
		ctx->captab = cap;
	}
	int h = (int)(p->hash & (uint64_t)(ctx->captab - 1));
	while (ctx->tab[h])
		h = (h + 1) & (ctx->captab - 1);
	ctx->tab[h] = p;
	ctx->nprog++;
	return BURN_OK;
}

static Prog *
cache_find(burn_ctx *ctx, uint64_t hash, int nsig)
{
	if (!ctx->captab)
		return NULL;
	for (int h = (int)(hash & (uint64_t)(ctx->captab - 1)); ctx->tab[h];
	     h = (h + 1) & (ctx->captab - 1)) {
		Prog *p = ctx->tab[h];
		if (p->hash == hash && p->nsig == nsig &&
		    !memcmp(p->sig, ctx->sig, sizeof *p->sig * (size_t)nsig))
			return p;
	}
	return NULL;
}

/* ---- running ---------------------------------------------------------------- */

void
api_reset_pending(burn_ctx *ctx)
{
	Graph *g = ctx->pg;

	for (int v = 0; v < g->nval && v < ctx->cappv; v++) {
		api_buf_unref(ctx, ctx->pv[v].buf);
		memset(&ctx->pv[v], 0, sizeof ctx->pv[v]);
	}
	arena_reset(&g->arena);
	g->nval = g->nnode = g->nin = g->nout = 0;
	g->capval = g->capnode = 0;
	g->val = NULL;
	g->node = NULL;
	g->in = g->out = NULL;
	g->name = "pending";
	ctx->nph = 0;
	ctx->epoch++;
}

/* Readers of value v among pg's nodes. */
static int
uses(const Graph *g, int v)
{
	int n = 0;

	for (int i = 0; i < g->nnode; i++)
		for (int k = 0; k < g->node[i].nin; k++)
			n += g->node[i].in[k] == v;
	return n;
}

/* Run p's kernels over input data in[0..p->nin) into outp[0..p->nout)
 * (output j p->out_bytes[j] long), the context's scratch as the arena. */
int
api_prog_exec(burn_ctx *ctx, Prog *p, void **in, void **outp)
{
	void *bufs[64], **bp = bufs;
	int rc = BURN_OK;

	if (p->dev) {
		/* the device's run: inputs copied in, the launches, the
		 * outputs (and those no kernel wrote) copied back */
		TRY(p->dev->run(&ctx->c, p->m, (const void *const *)in, outp, NULL));
		ctx->st.syncs++;
		ctx->st.kernels_run += p->nkernel;
		ctx->st.last_kernels = p->nkernel;
		return BURN_OK;
	}
	if (p->maxbuf > 64 && !(bp = calloc((size_t)p->maxbuf + 1, sizeof *bp)))
		return burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
	if (p->arena_bytes > ctx->scratch_bytes) {
		size_t nb = ((size_t)p->arena_bytes + 63) / 64 * 64;
		void *s = aligned_alloc(64, nb);
		if (!s) {
			rc = burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
			goto done;
		}
		free(ctx->scratch);
		ctx->scratch = s;
		ctx->scratch_bytes = (int64_t)nb;
	}
	if (ctx->opt.threads > 0)
		burn_threads_local(ctx->opt.threads);
	for (int k = 0; k < p->nkernel && !rc; k++) {
		const KBind *b = &p->kb[k];
		if (atomic_load_explicit(&ctx->interrupt, memory_order_relaxed)) {
			atomic_store(&ctx->interrupt, 0);
			rc = burn_fail(&ctx->c, BURN_ERR_LIMIT, "interrupted");
			break;
		}
		for (int i = 0; i < b->nbuf; i++) {
			const Bind *d = &b->bind[i];
			switch (d->kind) {
			case BIND_IN: bp[i] = in[d->index]; break;
			case BIND_OUT: bp[i] = outp[d->index]; break;
			case BIND_ARENA: bp[i] = (char *)ctx->scratch + d->off; break;
			case BIND_PTR: bp[i] = d->ptr; break;
			default: bp[i] = NULL;
			}
		}
#ifdef BURN_HAVE_LLVM
		rc = llvm_jit_call(&ctx->c, p->jit, k, bp, b->dims);
#else
		rc = kir_interp_dims(&ctx->c, p->m->prog.kernel[k], bp, b->dims, NULL);
#endif
	}
	if (ctx->opt.threads > 0)
		burn_threads_local(0);
	if (rc)
		goto done;
	for (int j = 0; j < p->nout; j++) {
		const void *src = NULL;
		switch (p->src_kind[j]) {
		case SRC_PTR: src = p->src_ptr[j]; break;
		case SRC_IN: src = in[p->src_index[j]]; break;
		case SRC_OUT: src = outp[p->src_index[j]]; break;
		}
		if (src && p->out_bytes[j] > 0)
			memmove(outp[j], src, (size_t)p->out_bytes[j]);
	}
	ctx->st.syncs++;
	ctx->st.kernels_run += p->nkernel;
	ctx->st.last_kernels = p->nkernel;
done:
	if (bp != bufs)
		free(bp);
	return rc;
}

static int
run(burn_ctx *ctx, Prog *p, int nout, int nleaf)
{
	void *inb[64], **in = inb, *outb[64], **outp = outb;
	Buf *bb[64], **ob = bb;
	uint64_t taken = 0;
	int rc = BURN_OK, ni = 0;

	if (p->nin > 64 || p->nout > 64) {
		in = calloc((size_t)p->nin + 1, sizeof *in);
		outp = calloc((size_t)p->nout + 1, sizeof *outp);
		ob = calloc((size_t)p->nout + 1, sizeof *ob);
		if (!in || !outp || !ob) {
			rc = burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
			goto done;
		}
	}
	/* inputs: the leaves that are not constants, in order */
	for (int i = 0; i < nleaf; i++) {
		int lv = ctx->leaf[i];
		if (GV(ctx->pg, lv)->data)
			continue;
		if (ni >= p->nin) {
			rc = burn_fail(&ctx->c, BURN_ERR_INTERNAL, "realise: inputs");
			goto done;
		}
		in[ni++] = ctx->pv[lv].buf->data;
	}
	/* outputs: an input given over, or a pool buffer */
	for (int j = 0; j < nout; j++) {
		ob[j] = NULL;
		if (p->inplace[j]) {
			int i = 0;
			for (int l = 0; l < nleaf && !ob[j]; l++) {
				int lv = ctx->leaf[l];
				Buf *b;
				if (GV(ctx->pg, lv)->data)
					continue;
				b = ctx->pv[lv].buf;
				if ((p->inplace[j] >> i & 1) && !(taken >> i & 1) && b->refs == 1 &&
				    uses(ctx->pg, lv) == 1) {
					taken |= (uint64_t)1 << i;
					ob[j] = b;
					b->refs++;
					ctx->st.in_place++;
				}
				i++;
			}
		}
		if (!ob[j] && (rc = api_buf_new(ctx, p->out_bytes[j], &ob[j])) != 0) {
			for (int q = 0; q < j; q++)
				api_buf_unref(ctx, ob[q]);
			goto done;
		}
		outp[j] = ob[j]->data;
	}
	if ((rc = api_prog_exec(ctx, p, in, outp)) != 0)
		goto fail;
	/* the results: each output's tensor takes its buffer */
	for (int j = 0; j < nout; j++) {
		PVal *pv = &ctx->pv[ctx->outv[j]];
		pv->t->buf = ob[j];             /* the reference moves */
		pv->buf = ob[j];
		ob[j]->refs++;
	}
	goto done;
fail:
	for (int j = 0; j < nout; j++) {
		if (ob[j] && ob[j]->refs > 1)    /* an input given over */
			ctx->st.in_place--;
		api_buf_unref(ctx, ob[j]);
	}
done:
	if (in != inb) {
		free(in);
		free(outp);
		free(ob);
	}
	return rc;
}

/*
 * Replay p (found by an earlier realisation) on input data in[0..p->nin):
 * fresh pool buffers for its outputs in ob[0..p->nout) (each holding one
 * reference, the caller's).  Nothing is recorded, cut or looked up.
 */
int
api_prog_replay(burn_ctx *ctx, Prog *p, void **in, Buf **ob)
{
	void *outb[64], **outp = outb;
	int rc = BURN_OK, j;

	if (p->nout > 64 && !(outp = calloc((size_t)p->nout + 1, sizeof *outp)))
		return burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
	for (j = 0; j < p->nout && !rc; j++) {
		ob[j] = NULL;
		if (!(rc = api_buf_new(ctx, p->out_bytes[j], &ob[j])))
			outp[j] = ob[j]->data;
	}
	if (!rc) {
		ctx->last = p;
		rc = api_prog_exec(ctx, p, in, outp);
	}
	if (rc)
		for (int q = 0; q < j; q++) {
			api_buf_unref(ctx, ob[q]);
			ob[q] = NULL;
		}
	if (outp != outb)
		free(outp);
	return rc;
}

int
api_prog_nin(const Prog *p)
{
	return p->nin;
}

int
api_prog_nout(const Prog *p)
{
	return p->nout;
}

/* Cut, find or compile, run; the cut stays in ctx->leaf, ctx->outv. */
int
api_realise_cut(burn_ctx *ctx, Prog **prog, int *nleaf_out, int *nout_out)
{
	int nout, nn, nleaf, nsig;
	uint64_t hash;
	Prog *p = NULL;

	TRY(cut(ctx, &nout, &nn, &nleaf, &nsig));
	if (nout) {
		hash = hash_words(ctx->sig, nsig);
		if ((p = cache_find(ctx, hash, nsig)) != NULL)
			ctx->st.mem_hits++;
		else {
			TRY(compile(ctx, nout, nn, nleaf, nsig, hash, &p));
			if (cache_put(ctx, p)) {
				api_prog_free(p);
				return ctx->c.code;
			}
		}
		ctx->last = p;
		TRY(run(ctx, p, nout, nleaf));
	}
	if (prog)
		*prog = p;
	if (nleaf_out)
		*nleaf_out = nleaf;
	if (nout_out)
		*nout_out = nout;
	return BURN_OK;
}

/* Nothing left that a live tensor waits for: start afresh. */
void
api_realise_done(burn_ctx *ctx)
{
	int pending = 0;

	for (int v = 0; v < ctx->pg->nval && !pending; v++)
		pending = ctx->pv[v].t && !ctx->pv[v].buf;
	if (!pending && ctx->pg->nval)
		api_reset_pending(ctx);
}

int
api_realise(burn_ctx *ctx)
{
	TRY(api_realise_cut(ctx, NULL, NULL, NULL));
	api_realise_done(ctx);
	return BURN_OK;
}

int
api_prog_dump(burn_ctx *ctx, const Prog *p, int what, FILE *f)
{
	if (what & BURN_DUMP_GRAPH)
		ir_print(f, p->m->g, 16);
	if (what & BURN_DUMP_KERNELS)
		for (int k = 0; k < p->m->prog.nkernel; k++)
			kir_print(f, p->m->prog.kernel[k]);
	return BURN_OK;
}

/* ---- tracing -------------------------------------------------------------- */

burn_status
burn_trace(burn_ctx *ctx, int nin, burn_tensor *const *inputs, int nout,
           burn_tensor *const *outs, Graph **gout)
{
	return burn_trace_src(ctx, nin, inputs, nout, outs, gout, NULL);
}

burn_status
burn_trace_src(burn_ctx *ctx, int nin, burn_tensor *const *inputs, int nout,
               burn_tensor *const *outs, Graph **gout, burn_tensor ***srcout)
{
	int *ph = NULL, nn, nleaf, nsig, no, rc = BURN_OK;
	Graph *g = NULL;
	burn_tensor **src = NULL;

	if (!ctx)
		return BURN_STATUS_INVALID;
	api_begin(ctx);
	if (!gout || nin < 0 || nout <= 0 || (nin && !inputs) || !outs)
		return api_status(burn_fail(&ctx->c, BURN_ERR_INVALID, "trace: bad arguments"));
	*gout = NULL;
	if (srcout)
		*srcout = NULL;
	if (!(ph = malloc(sizeof *ph * (size_t)(nin + 1))))
		return api_status(burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory"));
	for (int i = 0; i < nin && !rc; i++) {
		burn_tensor *t = inputs[i];
		if (!(rc = api_check_tensor(ctx, t, "a trace input")) &&
		    (t->epoch != ctx->epoch || t->val < 0 || !ctx->pv[t->val].ph))
			rc = burn_fail(&ctx->c, BURN_ERR_INVALID, "trace: input %d is not a "
			               "placeholder", i);
		if (!rc)
			ph[i] = t->val;
		for (int q = 0; q < i && !rc; q++)
			if (ph[q] == ph[i])
				rc = burn_fail(&ctx->c, BURN_ERR_INVALID, "trace: input %d is "
				               "given twice", i);
	}
	for (int j = 0; j < nout && !rc; j++)
		if (!(rc = api_check_tensor(ctx, outs[j], "a trace output")))
			rc = api_value_of(ctx, outs[j], &no);
	if (rc) {
		free(ph);
		return api_status(rc);
	}
	/* a cut whose outputs are the given tensors: mark them, walk back */
	rc = grow(ctx, (void **)&ctx->outv, &ctx->capout, nout, sizeof *ctx->outv);
	{
		/* reuse cut()'s marking with a temporary view: the outputs are
		 * the values of outs, leaves include placeholders */
		Graph *pg = ctx->pg;
		uint32_t need;
		int ns = 0, nid = 0;
		if (!rc)
			rc = grow(ctx, (void **)&ctx->mark, &ctx->capmark, pg->nval, sizeof *ctx->mark);
		if (!rc)
			rc = grow(ctx, (void **)&ctx->id, &ctx->capid, ctx->capmark, sizeof *ctx->id);
		if (!rc) {
			need = new_stamp(ctx);
			for (int j = 0; j < nout; j++) {
				ctx->outv[j] = outs[j]->val;
				ctx->mark[outs[j]->val] = need;
			}
			rc = need_nodes(ctx, pg, need, &nn);
			nleaf = 0;
			for (int i = 0; i < nn && !rc; i++) {
				const Node *n = &pg->node[ctx->nodes[i]];
				for (int k = 0; k < n->nin && !rc; k++)
					rc = sig_ref(ctx, &ns, n->in[k], &nleaf, &nid);
				for (int k = 0; k < n->nout; k++)
					if (n->out[k] >= 0) {
						ctx->mark[n->out[k]] = 2 * ctx->stamp + 1;
						ctx->id[n->out[k]] = nid++;
					}
			}
			for (int j = 0; j < nout && !rc; j++)
				rc = sig_ref(ctx, &ns, ctx->outv[j], &nleaf, &nid);
			nsig = ns;
			(void)nsig;
		}
	}
	if (!rc && srcout) {
		/* the constants are among the first nin + nleaf values */
		*srcout = NULL;
		if (!(src = calloc((size_t)(nin + nleaf + 1), sizeof *src)))
			rc = burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
	}
	if (!rc)
		rc = cut_graph(ctx, nout, nn, nleaf, nin, ph, &g, src);
	free(ph);
	if (!rc && src) {
		burn_tensor **s2 = realloc(src, sizeof *src * (size_t)(g->nval + 1));
		if (!s2) {
			graph_destroy(g);
			rc = burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
		} else {
			src = s2;
			for (int v = nin + nleaf; v < g->nval; v++)
				src[v] = NULL;
		}
	}
	if (rc) {
		free(src);
		return api_status(rc);
	}
	if (srcout)
		*srcout = src;
	/* name the outputs out0, out1, ... */
	for (int j = 0; j < g->nout; j++) {
		char nm[32];
		snprintf(nm, sizeof nm, "out%d", j);
		GV(g, g->out[j])->name = arena_strdup(&g->arena, nm);
	}
	*gout = g;
	return BURN_STATUS_OK;
}

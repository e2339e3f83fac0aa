/*
 * call.c - a model bound for repeated calls (eager.h, burn_call): its
 * weights kept as frozen tensors, and the call boundary's replay.
 *
 * Recording a model's nodes costs per call what a small model's kernels
 * take to run (mlp: ~300 nodes' worth of inference and a signature walk,
 * ~15 us against 12 us of kernels).  So a call whose inputs are all
 * realised is keyed by what its program depends on besides their values:
 * each input's dtype and shape, and which inputs are the same tensor.
 *
 *   first call with a key   recorded as usual (lazy: it may fuse with
 *                           what follows), the key remembered
 *   second, same key        recorded, then realised at once when nothing
 *                           else is pending, so the cut is exactly the
 *                           model: its program (from the context's
 *                           cache) and how the program's inputs and
 *                           outputs map to the call's are captured
 *   later, same key         replayed: the program run on the inputs'
 *                           buffers into fresh ones, nothing recorded,
 *                           cut, hashed or compiled
 *
 * What makes a replay the same computation: the program's constants are
 * the model's (fixed: g is only read) and the kept tensors (frozen, owned
 * here, never written); its inputs are the call's inputs, none folded
 * into the program (call inputs are bound as run-time leaves, small
 * integer ones too; a capture where one was folded anyway is refused);
 * shapes and aliasing are in the key.  Replayed outputs are realised at
 * the call: they do not fuse with the ops that read them, which is the
 * price of a boundary.
 */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

enum { OUT_NONE = 0, OUT_PROG, OUT_IN, OUT_KEPT };

typedef struct OutType {
	int dtype, rank;
	int64_t dim[BURN_MAX_RANK];
} OutType;

struct burn_call {
	burn_ctx *ctx;
	const Graph *g;
	burn_tensor **kept;      /* g->nval slots */
	int64_t *key;            /* the last key seen, nkey words */
	int nkey, capkey;
	int seen;                /* calls with that key since it changed */
	int refused;             /* a capture with that key did not map */
	Prog *p;                 /* captured for key (the context's), or NULL */
	int *in_of;              /* program input i: call input in_of[i] */
	int *out_kind, *out_ix;  /* call output k: OUT_*, its index */
	OutType *out_type;       /* call output k's type (OUT_PROG) */
	int nout;                /* call outputs captured */
};

burn_status
burn_call_create(burn_ctx *ctx, const Graph *g, burn_call **out)
{
	burn_call *cl;

	if (!ctx)
		return BURN_STATUS_INVALID;
	api_begin(ctx);
	if (!out || !g)
		return api_status(burn_fail(&ctx->c, BURN_ERR_INVALID, "call: bad arguments"));
	*out = NULL;
	if (!(cl = calloc(1, sizeof *cl)) ||
	    !(cl->kept = calloc((size_t)g->nval + 1, sizeof *cl->kept))) {
		free(cl);
		return api_status(burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory"));
	}
	cl->ctx = ctx;
	cl->g = g;
	*out = cl;
	return BURN_STATUS_OK;
}

static void
forget(burn_call *cl)
{
	cl->p = NULL;
	free(cl->in_of);
	free(cl->out_kind);
	free(cl->out_ix);
	free(cl->out_type);
	cl->in_of = cl->out_kind = cl->out_ix = NULL;
	cl->out_type = NULL;
	cl->nout = 0;
}

void
burn_call_destroy(burn_call *cl)
{
	if (!cl)
		return;
	for (int v = 0; v < cl->g->nval; v++)
		burn_release(cl->kept[v]);
	forget(cl);
	free(cl->kept);
	free(cl->key);
	free(cl);
}

/* The key of a call on in[0..nin) into ctx's scratch-free words: per
 * input dtype, rank, dims, and the first input that is the same tensor.
 * 0 when a replay cannot serve it (an input pending or frozen). */
static int
make_key(burn_call *cl, int nin, burn_tensor *const *in, int64_t *w, int *nw)
{
	int n = 0;

	for (int i = 0; i < nin; i++) {
		const burn_tensor *t = in[i];
		int same = i;
		if (!t || t->ctx != cl->ctx || !t->buf || t->frozen)
			return 0;
		for (int q = 0; q < i && same == i; q++)
			if (in[q] == t)
				same = q;
		w[n++] = (int64_t)t->dtype << 32 | (int64_t)t->rank << 16 | same;
		for (int d = 0; d < t->rank; d++)
			w[n++] = t->dim[d];
	}
	*nw = n;
	return 1;
}

/* A realised tensor like `like`, sharing buffer b (a reference more). */
static int
share(burn_ctx *ctx, const burn_tensor *like, Buf *b, burn_tensor **out)
{
	TRY(api_tensor_new(ctx, like->dtype, like->rank, like->dim, out));
	(*out)->buf = b;
	b->refs++;
	return BURN_OK;
}

static int
replay(burn_call *cl, burn_tensor *const *in, int nout, burn_tensor **out)
{
	burn_ctx *ctx = cl->ctx;
	int pin = api_prog_nin(cl->p), pout = api_prog_nout(cl->p), rc;
	void *inb[64], **ip = inb;
	Buf *obb[64], **ob = obb;
	burn_tensor *tb[64], **made = tb;

	if ((pin > 64 && !(ip = calloc((size_t)pin, sizeof *ip))) ||
	    (pout > 64 && (!(ob = calloc((size_t)pout, sizeof *ob)) ||
	                   !(made = calloc((size_t)pout, sizeof *made))))) {
		rc = burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
		goto done;
	}
	for (int i = 0; i < pin; i++)
		ip[i] = in[cl->in_of[i]]->buf->data;
	if ((rc = api_prog_replay(ctx, cl->p, ip, ob)) != 0)
		goto done;
	for (int j = 0; j < pout; j++)
		made[j] = NULL;
	for (int k = 0; k < nout && !rc; k++) {
		int x = cl->out_ix[k];
		out[k] = NULL;
		switch (cl->out_kind[k]) {
		case OUT_PROG:
			if (made[x]) {
				out[k] = burn_retain(made[x]);
				break;
			}
			rc = api_tensor_new(ctx, cl->out_type[k].dtype, cl->out_type[k].rank,
			                    cl->out_type[k].dim, &made[x]);
			if (!rc) {
				made[x]->buf = ob[x];
				ob[x]->refs++;
				out[k] = made[x];
			}
			break;
		case OUT_IN:
			rc = share(ctx, in[x], in[x]->buf, &out[k]);
			break;
		case OUT_KEPT:
			rc = share(ctx, cl->kept[x], cl->kept[x]->buf, &out[k]);
			break;
		}
	}
	for (int j = 0; j < pout; j++)
		api_buf_unref(ctx, ob[j]);   /* the tensors hold theirs */
	if (rc)
		for (int k = 0; k < nout; k++) {
			burn_release(out[k]);
			out[k] = NULL;
		}
	else
		ctx->st.replays++;
done:
	if (ip != inb)
		free(ip);
	if (ob != obb)
		free(ob);
	if (made != tb)
		free(made);
	return rc;
}

/* Right after the call was recorded into an otherwise idle pending graph
 * (vin[i], vout[k] its inputs' and outputs' values there): realise it and
 * keep how its program maps to the call.  A call that does not map
 * cleanly is left realised and not captured. */
static int
capture(burn_call *cl, int nin, burn_tensor *const *in, const int *vin, int nout,
        burn_tensor **out, const int *vout)
{
	burn_ctx *ctx = cl->ctx;
	Prog *p = NULL;
	int nleaf, no, ok = 1, ni = 0, pin;

	TRY(api_realise_cut(ctx, &p, &nleaf, &no));
	if (!p || api_prog_nout(p) != no) {
		api_realise_done(ctx);
		return BURN_OK;
	}
	pin = api_prog_nin(p);
	forget(cl);
	if (!(cl->in_of = calloc((size_t)pin + 1, sizeof *cl->in_of)) ||
	    !(cl->out_kind = calloc((size_t)nout + 1, sizeof *cl->out_kind)) ||
	    !(cl->out_ix = calloc((size_t)nout + 1, sizeof *cl->out_ix)) ||
	    !(cl->out_type = calloc((size_t)nout + 1, sizeof *cl->out_type))) {
		forget(cl);
		api_realise_done(ctx);
		return burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
	}
	/* no input folded into the program */
	for (int i = 0; i < nin && ok; i++)
		ok = !GV(ctx->pg, vin[i])->data;
	/* the program's inputs: its leaves that are not constants, each
	 * one of the call's */
	for (int l = 0; l < nleaf && ok; l++) {
		int lv = ctx->leaf[l], q = 0;
		if (GV(ctx->pg, lv)->data)
			continue;
		while (q < nin && vin[q] != lv)
			q++;
		ok = q < nin && ni < pin;
		if (ok)
			cl->in_of[ni++] = q;
	}
	ok = ok && ni == pin;
	/* the call's outputs: a program output, or a leaf passed through */
	for (int k = 0; k < nout && ok; k++) {
		int j = 0;
		if (!out[k])
			continue;
		while (j < no && ctx->outv[j] != vout[k])
			j++;
		if (j < no) {
			cl->out_kind[k] = OUT_PROG;
			cl->out_ix[k] = j;
			cl->out_type[k].dtype = out[k]->dtype;
			cl->out_type[k].rank = out[k]->rank;
			memcpy(cl->out_type[k].dim, out[k]->dim, sizeof out[k]->dim);
			continue;
		}
		ok = 0;
		for (int q = 0; q < nin && !ok; q++)
			if (out[k]->buf && out[k]->buf == in[q]->buf) {
				cl->out_kind[k] = OUT_IN;
				cl->out_ix[k] = q;
				ok = 1;
			}
		for (int v = 0; v < cl->g->nval && !ok; v++)
			if (cl->kept[v] && out[k]->buf && out[k]->buf == cl->kept[v]->buf) {
				cl->out_kind[k] = OUT_KEPT;
				cl->out_ix[k] = v;
				ok = 1;
			}
	}
	if (ok) {
		cl->p = p;
		cl->nout = nout;
		ctx->st.captures++;
	} else {
		forget(cl);
		cl->refused = 1;
	}
	api_realise_done(ctx);
	return BURN_OK;
}

/* Whether a live tensor waits on the pending graph (or a placeholder is
 * recorded): then a realisation now would cut more than the call. */
static int
busy(const burn_ctx *ctx)
{
	if (ctx->nph)
		return 1;
	for (int v = 0; v < ctx->pg->nval; v++)
		if (ctx->pv[v].t && !ctx->pv[v].buf)
			return 1;
	return 0;
}

burn_status
burn_call_run(burn_call *cl, int nin, burn_tensor *const *in, int nout,
              burn_tensor **out)
{
	burn_ctx *ctx;
	int64_t kb[64], *key = kb;
	int nk = 0, can, same, rc = BURN_OK, words = 0;
	int vb[64], *vin = vb, ob[64], *vout = ob;

	if (!cl)
		return BURN_STATUS_INVALID;
	ctx = cl->ctx;
	api_begin(ctx);
	if (nin != cl->g->nin || nout < 0 || nout > cl->g->nout || (nin && !in) ||
	    (nout && !out))
		return api_status(burn_fail(&ctx->c, BURN_ERR_INVALID, "call: the graph "
		                  "takes %d inputs and gives %d outputs", cl->g->nin,
		                  cl->g->nout));
	for (int i = 0; i < nin; i++)
		if (in[i])
			words += 1 + (in[i]->rank > 0 ? in[i]->rank : 0);
	if ((words > 64 && !(key = malloc(sizeof *key * (size_t)words))) ||
	    (nin > 64 && !(vin = malloc(sizeof *vin * (size_t)nin))) ||
	    (nout > 64 && !(vout = malloc(sizeof *vout * (size_t)nout)))) {
		rc = burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
		goto done;
	}
	can = make_key(cl, nin, in, key, &nk);
	same = can && nk == cl->nkey && !memcmp(key, cl->key, sizeof *key * (size_t)nk);
	if (same && cl->p && nout <= cl->nout) {
		rc = replay(cl, in, nout, out);
		goto done;
	}
	if (!same) {
		forget(cl);
		cl->seen = cl->refused = 0;
		cl->nkey = 0;
		if (can) {
			if (nk > cl->capkey) {
				int64_t *k2 = realloc(cl->key, sizeof *k2 * (size_t)nk);
				if (!k2) {
					rc = burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
					goto done;
				}
				cl->key = k2;
				cl->capkey = nk;
			}
			memcpy(cl->key, key, sizeof *key * (size_t)nk);
			cl->nkey = nk;
		}
	}
	if (can && same && cl->seen >= 1 && !cl->p && !cl->refused && !busy(ctx)) {
		/* the second call with this key: record, realise, capture */
		if ((rc = api_call_graph(ctx, cl->g, cl->kept, 1, nin, in, nout, out)))
			goto done;
		for (int i = 0; i < nin; i++)
			vin[i] = in[i]->epoch == ctx->epoch ? in[i]->val : -1;
		for (int k = 0; k < nout; k++)
			vout[k] = out[k] && out[k]->epoch == ctx->epoch ? out[k]->val : -1;
		for (int i = 0; i < nin; i++)
			if (vin[i] < 0)
				goto recorded;     /* realised already (max_pending) */
		if ((rc = capture(cl, nin, in, vin, nout, out, vout))) {
			for (int k = 0; k < nout; k++) {
				burn_release(out[k]);
				out[k] = NULL;
			}
			goto done;
		}
		cl->seen++;
		goto done;
	}
	rc = api_call_graph(ctx, cl->g, cl->kept, 1, nin, in, nout, out);
recorded:
	if (!rc && can)
		cl->seen++;
done:
	if (key != kb)
		free(key);
	if (vin != vb)
		free(vin);
	if (vout != ob)
		free(vout);
	return api_status(rc);
}

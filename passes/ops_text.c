/*
 * ops_text.c - text features: TfIdfVectorizer (opset 9) over integer
 * tokens.
 *
 * TfIdfVectorizer(X [N] or [B, N]) counts, in each row, the occurrences of
 * the pool's n-grams: gram k (n tokens g[0..n-1]) occurs at position i
 * with skip s when X[i + t (s+1)] = g[t] for every t < n, for s in
 * 0 .. max_skip_count (unigrams only with s = 0, so a token counts once),
 * n between min_gram_length and max_gram_length.  Output element
 * ngram_indexes[k] of the row is the count (TF), weights[k] where the
 * count is not 0 (IDF), or count times weights[k] (TFIDF); the others 0.
 *
 * The pool is written out at compile time as constant tables, one entry
 * per gram of a counted length: its first token's offset in the pool, its
 * length, its output position and weight; the kernel runs parallel over
 * the rows, each zeroing its row and then counting every gram.
 */
#include <stdlib.h>
#include <string.h>
#include "kb_short.h"

typedef struct Tfidf {
	int64_t B, L, outdim;   /* rows, tokens a row, output length */
	int64_t ngram;          /* grams counted (table entries) */
	int64_t maxn, skip;     /* longest gram, max_skip_count */
	int mode;               /* 0 TF, 1 IDF, 2 TFIDF */
	int64_t *start, *len, *pos;   /* the tables, malloc'd by tfidf_plan */
	float *w;
	const int64_t *pool;
	int npool;
} Tfidf;

static void tfidf_free(Tfidf *t)
{
	free(t->start);
	free(t->len);
	free(t->pos);
	free(t->w);
}

/* Check the attributes against X and each other; with tables set, fill
 * them (the caller frees them with tfidf_free). */
static int tfidf_plan(Ctx *c, Graph *g, Node *n, Tfidf *t, int tables)
{
	const Value *x = NIN(g, n, 0);
	const int64_t *counts, *idx;
	const Attr *wa = node_attr(n, "weights");
	const char *mode = attr_str(n, "mode", "");
	int ncounts, nidx, k = 0;
	int64_t mn = attr_int(n, "min_gram_length", 0), mx = attr_int(n, "max_gram_length", 0);
	char ts[160];

	memset(t, 0, sizeof *t);
	if (!x)
		return burn_fail(c, BURN_ERR_INVALID, "input 0 is required");
	if (!dtype_is_int(x->dtype) || (x->rank != 1 && x->rank != 2))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "input '%s' is %s: integer "
		                 "tokens [N] or [B, N] expected (string tokens are not "
		                 "supported)", x->name, value_type_str(x, ts, sizeof ts));
	if (node_attr(n, "pool_strings"))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "pool_strings: string pools "
		                 "are not supported");
	t->B = x->rank == 2 ? x->dim[0] : 1;
	t->L = x->dim[x->rank - 1];
	t->mode = !strcmp(mode, "TF") ? 0 : !strcmp(mode, "IDF") ? 1 :
	          !strcmp(mode, "TFIDF") ? 2 : -1;
	if (t->mode < 0)
		return burn_fail(c, BURN_ERR_INVALID, "mode '%s': TF, IDF or TFIDF "
		                 "expected", mode);
	t->skip = attr_int(n, "max_skip_count", 0);
	if (mn < 1 || mx < mn || t->skip < 0 || t->skip > t->L)
		return burn_fail(c, BURN_ERR_INVALID, "gram lengths %lld .. %lld and "
		                 "max_skip_count %lld: 1 <= min <= max and 0 .. %lld "
		                 "skips expected", (long long)mn, (long long)mx,
		                 (long long)t->skip, (long long)t->L);
	t->npool = attr_ints(n, "pool_int64s", &t->pool);
	ncounts = attr_ints(n, "ngram_counts", &counts);
	nidx = attr_ints(n, "ngram_indexes", &idx);
	if (wa && (wa->type != AT_FLOATS || wa->n != nidx))
		return burn_fail(c, BURN_ERR_INVALID, "weights: %d floats expected, one "
		                 "a gram", nidx);
	/* grams of length j+1 take pool[counts[j] .. counts[j+1]) */
	for (int j = 0; j < ncounts; j++) {
		int64_t lo = counts[j], hi = j + 1 < ncounts ? counts[j + 1] : t->npool;
		if (lo < 0 || hi < lo || hi > t->npool || (hi - lo) % (j + 1))
			return burn_fail(c, BURN_ERR_INVALID, "ngram_counts: pool[%lld .. "
			                 "%lld) is not grams of %d in a pool of %d",
			                 (long long)lo, (long long)hi, j + 1, t->npool);
		k += (int)((hi - lo) / (j + 1));
	}
	if (k != nidx)
		return burn_fail(c, BURN_ERR_INVALID, "the pool holds %d grams and "
		                 "ngram_indexes %d", k, nidx);
	t->outdim = 0;
	for (int j = 0; j < nidx; j++) {
		if (idx[j] < 0 || idx[j] >= (int64_t)1 << 24)
			return burn_fail(c, BURN_ERR_INVALID, "ngram_indexes[%d] is %lld: "
			                 "0 .. %d expected", j, (long long)idx[j], 1 << 24);
		t->outdim = idx[j] + 1 > t->outdim ? idx[j] + 1 : t->outdim;
	}
	if (!tables)
		return BURN_OK;
	if (!(t->start = malloc(sizeof *t->start * (size_t)(nidx + 1))) ||
	    !(t->len = malloc(sizeof *t->len * (size_t)(nidx + 1))) ||
	    !(t->pos = malloc(sizeof *t->pos * (size_t)(nidx + 1))) ||
	    !(t->w = malloc(sizeof *t->w * (size_t)(nidx + 1)))) {
		tfidf_free(t);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	k = 0;
	for (int j = 0; j < ncounts; j++) {
		int64_t lo = counts[j], hi = j + 1 < ncounts ? counts[j + 1] : t->npool;
		for (int64_t p = lo; p < hi; p += j + 1, k++) {
			if (j + 1 < mn || j + 1 > mx)
				continue;
			t->start[t->ngram] = p;
			t->len[t->ngram] = j + 1;
			t->pos[t->ngram] = idx[k];
			t->w[t->ngram] = wa ? (float)wa->floats[k] : 1.0f;
			t->maxn = j + 1 > t->maxn ? j + 1 : t->maxn;
			t->ngram++;
		}
	}
	return BURN_OK;
}

int infer_tfidf(Ctx *c, Graph *g, Node *n)
{
	const Value *x = NIN(g, n, 0);
	int64_t dim[2];
	Tfidf t;

	TRY(tfidf_plan(c, g, n, &t, 0));
	dim[0] = t.B;
	dim[1] = t.outdim;
	if (x->rank == 1)
		dim[0] = t.outdim;
	set_out(NOUT(g, n, 0), DT_F32, x->rank, dim);
	return BURN_OK;
}

int lower_tfidf(Lower *lw, Node *n)
{
	Tfidf t;
	int bx, bo, bpool, bst, bln, bps, bw, cnt, ok, rc;
	KRef b, j, k, s, i, tt, st, ln, step, row, at, hit, v;
	KB kb;

	TRY(tfidf_plan(lw->ctx, lw->g, n, &t, 1));
	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	bo = lower_out(lw, &kb, n, 0);
	if (t.ngram == 0 || t.L == 0) {     /* nothing counted: zeros */
		tfidf_free(&t);
		b = loop(&kb, "e", t.B * t.outdim, KF_PARALLEL);
		kb_store(&kb, bo, b, kb_const_f(&kb, DT_F32, 0));
		kb_end(&kb);
		lower_end(lw, &kb);
		return BURN_OK;
	}
	rc = lower_const_table(lw, &kb, n, "pool", DT_I64, t.npool, t.pool, &bpool);
	if (!rc)
		rc = lower_const_table(lw, &kb, n, "gram_start", DT_I64, t.ngram, t.start, &bst);
	if (!rc)
		rc = lower_const_table(lw, &kb, n, "gram_len", DT_I64, t.ngram, t.len, &bln);
	if (!rc)
		rc = lower_const_table(lw, &kb, n, "gram_pos", DT_I64, t.ngram, t.pos, &bps);
	if (!rc)
		rc = lower_const_table(lw, &kb, n, "gram_weight", DT_F32, t.ngram, t.w, &bw);
	tfidf_free(&t);
	TRY(rc);
	cnt = kb_var(&kb, DT_I64, "cnt");
	ok = kb_var(&kb, DT_BOOL, "ok");

	b = loop(&kb, "b", t.B, KF_PARALLEL);
	row = mul(&kb, b, I(&kb, t.L));
	j = loop(&kb, "j", t.outdim, 0);
	kb_store(&kb, bo, add(&kb, mul(&kb, b, I(&kb, t.outdim)), j), kb_const_f(&kb, DT_F32, 0));
	kb_end(&kb);
	k = loop(&kb, "k", t.ngram, 0);
	st = kb_load(&kb, bst, k);
	ln = kb_load(&kb, bln, k);
	kb_set(&kb, cnt, I(&kb, 0));
	/* unigrams once: skips only for grams of 2 or more */
	s = get(&kb, kb_for(&kb, "s", I(&kb, 0),
	                    kb_select(&kb, kb_bin(&kb, KO_GT, ln, I(&kb, 1)),
	                              I(&kb, t.skip + 1), I(&kb, 1)), 0));
	step = add(&kb, s, I(&kb, 1));
	/* starts whose last token is inside the row */
	i = get(&kb, kb_for(&kb, "i", I(&kb, 0),
	                    sub(&kb, I(&kb, t.L), mul(&kb, sub(&kb, ln, I(&kb, 1)), step)), 0));
	kb_set(&kb, ok, kb_const_i(&kb, DT_BOOL, 1));
	tt = get(&kb, kb_for(&kb, "t", I(&kb, 0), ln, 0));
	at = add(&kb, row, add(&kb, i, mul(&kb, tt, step)));
	v = conv(&kb, kb_load(&kb, bx, at), DT_I64);
	hit = kb_bin(&kb, KO_EQ, v, kb_load(&kb, bpool, add(&kb, st, tt)));
	kb_set(&kb, ok, kb_bin(&kb, KO_AND, get(&kb, ok), hit));
	kb_end(&kb);   /* t */
	kb_set(&kb, cnt, add(&kb, get(&kb, cnt),
	                     kb_select(&kb, get(&kb, ok), I(&kb, 1), I(&kb, 0))));
	kb_end(&kb);   /* i */
	kb_end(&kb);   /* s */
	v = kb_cast(&kb, DT_F32, get(&kb, cnt));
	if (t.mode == 1)
		v = kb_select(&kb, kb_bin(&kb, KO_GT, get(&kb, cnt), I(&kb, 0)),
		              kb_load(&kb, bw, k), kb_const_f(&kb, DT_F32, 0));
	else if (t.mode == 2)
		v = mul(&kb, v, kb_load(&kb, bw, k));
	kb_store(&kb, bo, add(&kb, mul(&kb, b, I(&kb, t.outdim)), kb_load(&kb, bps, k)), v);
	kb_end(&kb);   /* k */
	kb_end(&kb);   /* b */
	lower_end(lw, &kb);
	return BURN_OK;
}

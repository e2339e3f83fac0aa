/*
 * ops_ml.c - ai.onnx.ml ops with kernels of their own: TreeEnsemble
 * (ai.onnx.ml opset 5).
 *
 * TreeEnsemble(X [N, F]) walks every tree for each row: at node k, feature
 * x = X[row, nodes_featureids[k]] against nodes_splits[k] by nodes_modes[k]
 * (<=, <, >=, >, ==, !=, or membership in the node's set of
 * membership_values, the sets separated by NaN, one per MEMBER node in
 * order), NaN going the true way where nodes_missing_value_tracks_true
 * says so; the true or false successor is a node or, where
 * nodes_trueleafs/falseleafs say so, a leaf, whose weight adds to output
 * column leaf_targetids.  SUM or AVERAGE over the trees; post_transform
 * NONE.  The trees are constant tables checked here (ids in range), and a
 * walk stops after as many steps as there are nodes, so a cycle cannot
 * hang the kernel.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kb_short.h"

enum { TM_LEQ, TM_LT, TM_GTE, TM_GT, TM_EQ, TM_NEQ, TM_MEMBER };

typedef struct Trees {
	int64_t N, F, T;          /* rows, features, targets */
	int64_t nn, nl, nt;       /* nodes, leaves, trees */
	int64_t maxset;           /* the largest membership set */
	int average;
	/* the node table, per node: mode, feature, true next, true is a
	 * leaf, false next, false is a leaf, set offset, set length,
	 * missing goes true (i64), split (f64); leaves: target (i64),
	 * weight (f64); the sets (f64); roots (i64).  malloc'd. */
	int64_t *ni, *lt, *roots;
	double *split, *lw, *sets;
	int64_t nsets;
} Trees;

enum { NI_MODE, NI_FEAT, NI_TNEXT, NI_TLEAF, NI_FNEXT, NI_FLEAF, NI_SOFF, NI_SLEN,
       NI_MISS, NI_COUNT };

static void trees_free(Trees *t)
{
	free(t->ni); free(t->lt); free(t->roots);
	free(t->split); free(t->lw); free(t->sets);
}

/* Element i of tensor attribute name of n as a double; 0 if absent. */
static int tattr(const Node *n, const char *name, Value *out)
{
	const Attr *a = node_attr(n, name);

	memset(out, 0, sizeof *out);
	if (!a || a->type != AT_TENSOR || !a->t)
		return 0;
	out->dtype = a->t->dtype;
	out->rank = a->t->rank;
	memcpy(out->dim, a->t->dim, sizeof out->dim[0] * (size_t)a->t->rank);
	out->data = a->t->data;
	return 1;
}

static int trees_plan(Ctx *c, Graph *g, Node *n, Trees *t, int tables)
{
	const Value *x = NIN(g, n, 0);
	const int64_t *feat, *tn, *tl, *fn, *fl, *lt, *roots, *miss = NULL;
	Value modes, splits, lw, mv;
	int nf, ntn, ntl, nfn, nfl, nlt, nr, nmiss;
	int64_t agg = attr_int(n, "aggregate_function", 1), post = attr_int(n, "post_transform", 0);
	char ts[160];

	memset(t, 0, sizeof *t);
	if (!x || x->rank != 2 || !dtype_is_float(x->dtype))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "input X must be a float [N, F] "
		                 "tensor%s%s", x ? ", is " : "",
		                 x ? value_type_str(x, ts, sizeof ts) : "");
	if (agg != 0 && agg != 1)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "aggregate_function %lld: AVERAGE "
		                 "(0) and SUM (1) are supported", (long long)agg);
	if (post != 0)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "post_transform %lld: NONE (0) is "
		                 "supported", (long long)post);
	t->average = agg == 0;
	t->N = x->dim[0];
	t->F = x->dim[1];
	t->T = attr_int(n, "n_targets", 0);
	if (t->T < 1 || t->T > (1 << 24))
		return burn_fail(c, BURN_ERR_INVALID, "n_targets %lld: 1 .. %d expected",
		                 (long long)t->T, 1 << 24);
	nf = attr_ints(n, "nodes_featureids", &feat);
	ntn = attr_ints(n, "nodes_truenodeids", &tn);
	ntl = attr_ints(n, "nodes_trueleafs", &tl);
	nfn = attr_ints(n, "nodes_falsenodeids", &fn);
	nfl = attr_ints(n, "nodes_falseleafs", &fl);
	nlt = attr_ints(n, "leaf_targetids", &lt);
	nr = attr_ints(n, "tree_roots", &roots);
	nmiss = attr_ints(n, "nodes_missing_value_tracks_true", &miss);
	if (!tattr(n, "nodes_modes", &modes) || !tattr(n, "nodes_splits", &splits) ||
	    !tattr(n, "leaf_weights", &lw))
		return burn_fail(c, BURN_ERR_INVALID, "nodes_modes, nodes_splits and "
		                 "leaf_weights are required tensors");
	t->nn = nf;
	t->nl = nlt;
	t->nt = nr;
	if (ntn != nf || ntl != nf || nfn != nf || nfl != nf || value_numel(&modes) != nf ||
	    value_numel(&splits) != nf || value_numel(&lw) != nlt || (nmiss && nmiss != nf) ||
	    nr < 1)
		return burn_fail(c, BURN_ERR_INVALID, "the node attributes disagree in "
		                 "length (%d nodes), or leaf_weights with leaf_targetids "
		                 "(%d), or there are no trees", nf, nlt);
	if (!tables) {
		for (int k = 0; k < nf; k++) {
			int64_t m = value_get_i(&modes, k);
			if (m < TM_LEQ || m > TM_MEMBER || feat[k] < 0 || feat[k] >= t->F ||
			    tn[k] < 0 || tn[k] >= (tl[k] ? nlt : nf) ||
			    fn[k] < 0 || fn[k] >= (fl[k] ? nlt : nf))
				return burn_fail(c, BURN_ERR_INVALID, "node %d: mode %lld, feature "
				                 "%lld or a successor is out of range", k,
				                 (long long)m, (long long)feat[k]);
		}
		for (int k = 0; k < nlt; k++)
			if (lt[k] < 0 || lt[k] >= t->T)
				return burn_fail(c, BURN_ERR_INVALID, "leaf %d: target %lld of %lld",
				                 k, (long long)lt[k], (long long)t->T);
		for (int k = 0; k < nr; k++)
			if (roots[k] < 0 || roots[k] >= nf)
				return burn_fail(c, BURN_ERR_INVALID, "tree %d: root %lld of %d "
				                 "nodes", k, (long long)roots[k], nf);
		return BURN_OK;
	}
	t->ni = malloc(sizeof *t->ni * (size_t)(NI_COUNT * nf + 1));
	t->split = malloc(sizeof *t->split * (size_t)(nf + 1));
	t->lt = malloc(sizeof *t->lt * (size_t)(nlt + 1));
	t->lw = malloc(sizeof *t->lw * (size_t)(nlt + 1));
	t->roots = malloc(sizeof *t->roots * (size_t)(nr + 1));
	tattr(n, "membership_values", &mv);
	t->sets = malloc(sizeof *t->sets * (size_t)(value_numel(&mv) + 1));
	if (!t->ni || !t->split || !t->lt || !t->lw || !t->roots || !t->sets) {
		trees_free(t);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	for (int64_t k = 0, p = 0, nmv = value_numel(&mv); k < nf; k++) {
		int64_t *r = &t->ni[NI_COUNT * k], len = 0;
		r[NI_MODE] = value_get_i(&modes, k);
		r[NI_FEAT] = feat[k];
		r[NI_TNEXT] = tn[k]; r[NI_TLEAF] = tl[k] != 0;
		r[NI_FNEXT] = fn[k]; r[NI_FLEAF] = fl[k] != 0;
		r[NI_MISS] = nmiss ? miss[k] != 0 : 0;
		r[NI_SOFF] = t->nsets;
		if (r[NI_MODE] == TM_MEMBER) {   /* the next set, up to its NaN */
			for (; p < nmv && !isnan(value_get_f(&mv, p)); p++, len++)
				t->sets[t->nsets++] = value_get_f(&mv, p);
			p++;
		}
		r[NI_SLEN] = len;
		t->maxset = len > t->maxset ? len : t->maxset;
		t->split[k] = value_get_f(&splits, k);
	}
	for (int k = 0; k < nlt; k++) {
		t->lt[k] = lt[k];
		t->lw[k] = value_get_f(&lw, k);
	}
	memcpy(t->roots, roots, sizeof *roots * (size_t)nr);
	return BURN_OK;
}

int infer_tree_ensemble(Ctx *c, Graph *g, Node *n)
{
	Trees t;
	int64_t dim[2];

	TRY(trees_plan(c, g, n, &t, 0));
	dim[0] = t.N;
	dim[1] = t.T;
	set_out(NOUT(g, n, 0), NIN(g, n, 0)->dtype, 2, dim);
	return BURN_OK;
}

int lower_tree_ensemble(Lower *lw, Node *n)
{
	Trees t;
	int bx, bo, bni, bsp, blt, blw, bset = -1, brt, cur, leaf, go, inset, acc, rc, ct;
	KRef r, tr, j, st, x, s, m, row, cond, sv;
	KB kb;

	TRY(trees_plan(lw->ctx, lw->g, n, &t, 1));
	ct = ctype(NOUT(lw->g, n, 0)->dtype);
	lower_begin(lw, &kb, n);
	bx = lower_in(lw, &kb, n, 0);
	bo = lower_out(lw, &kb, n, 0);
	rc = lower_const_table(lw, &kb, n, "nodes", DT_I64, NI_COUNT * t.nn, t.ni, &bni);
	if (!rc)
		rc = lower_const_table(lw, &kb, n, "splits", DT_F64, t.nn, t.split, &bsp);
	if (!rc)
		rc = lower_const_table(lw, &kb, n, "leaf_targets", DT_I64, t.nl, t.lt, &blt);
	if (!rc)
		rc = lower_const_table(lw, &kb, n, "leaf_weights", DT_F64, t.nl, t.lw, &blw);
	if (!rc)
		rc = lower_const_table(lw, &kb, n, "roots", DT_I64, t.nt, t.roots, &brt);
	if (!rc && t.nsets)
		rc = lower_const_table(lw, &kb, n, "sets", DT_F64, t.nsets, t.sets, &bset);
	trees_free(&t);
	TRY(rc);
	cur = kb_var(&kb, DT_I64, "cur");
	leaf = kb_var(&kb, DT_BOOL, "leaf");
	go = kb_var(&kb, DT_BOOL, "go");
	inset = kb_var(&kb, DT_BOOL, "inset");
	acc = kb_var(&kb, DT_F64, "acc");
	if (t.N == 0) {
		lower_end(lw, &kb);
		return BURN_OK;
	}
	r = loop(&kb, "r", t.N, KF_PARALLEL);
	row = mul(&kb, r, I(&kb, t.T));
	j = loop(&kb, "j", t.T, 0);
	kb_store(&kb, bo, add(&kb, row, j), kb_const_f(&kb, ct, 0));
	kb_end(&kb);
	tr = loop(&kb, "tree", t.nt, 0);
	kb_set(&kb, cur, kb_load(&kb, brt, tr));
	kb_set(&kb, leaf, kb_const_i(&kb, DT_BOOL, 0));
	st = loop(&kb, "step", t.nn, 0);
	(void)st;
	kb_if(&kb, kb_un(&kb, KO_NOT, get(&kb, leaf)));
#define NI(f) kb_load(&kb, bni, add(&kb, mul(&kb, get(&kb, cur), I(&kb, NI_COUNT)), I(&kb, f)))
	x = conv(&kb, kb_load(&kb, bx, add(&kb, mul(&kb, r, I(&kb, t.F)), NI(NI_FEAT))), DT_F64);
	s = kb_load(&kb, bsp, get(&kb, cur));
	m = NI(NI_MODE);
	kb_set(&kb, inset, kb_const_i(&kb, DT_BOOL, 0));
	if (bset >= 0) {
		KRef q = loop(&kb, "q", t.maxset, 0);
		KRef ok = kb_bin(&kb, KO_LT, q, NI(NI_SLEN));
		KRef at = kb_select(&kb, ok, add(&kb, NI(NI_SOFF), q), I(&kb, 0));
		kb_set(&kb, inset, kb_bin(&kb, KO_OR, get(&kb, inset),
		                          kb_bin(&kb, KO_AND, ok, kb_bin(&kb, KO_EQ, x,
		                                                         kb_load(&kb, bset, at)))));
		kb_end(&kb);
	}
	cond = kb_select(&kb, kb_bin(&kb, KO_EQ, m, I(&kb, TM_LEQ)), kb_bin(&kb, KO_LE, x, s),
	       kb_select(&kb, kb_bin(&kb, KO_EQ, m, I(&kb, TM_LT)), kb_bin(&kb, KO_LT, x, s),
	       kb_select(&kb, kb_bin(&kb, KO_EQ, m, I(&kb, TM_GTE)), kb_bin(&kb, KO_GE, x, s),
	       kb_select(&kb, kb_bin(&kb, KO_EQ, m, I(&kb, TM_GT)), kb_bin(&kb, KO_GT, x, s),
	       kb_select(&kb, kb_bin(&kb, KO_EQ, m, I(&kb, TM_EQ)), kb_bin(&kb, KO_EQ, x, s),
	       kb_select(&kb, kb_bin(&kb, KO_EQ, m, I(&kb, TM_NEQ)), kb_bin(&kb, KO_NE, x, s),
	                 get(&kb, inset)))))));
	cond = kb_bin(&kb, KO_OR, cond, kb_bin(&kb, KO_AND, kb_un(&kb, KO_ISNAN, x),
	                                       kb_bin(&kb, KO_NE, NI(NI_MISS), I(&kb, 0))));
	kb_set(&kb, go, cond);
	kb_set(&kb, leaf, kb_bin(&kb, KO_NE, kb_select(&kb, get(&kb, go), NI(NI_TLEAF),
	                                                NI(NI_FLEAF)), I(&kb, 0)));
	kb_set(&kb, cur, kb_select(&kb, get(&kb, go), NI(NI_TNEXT), NI(NI_FNEXT)));
#undef NI
	kb_end(&kb);   /* if */
	kb_end(&kb);   /* step */
	kb_if(&kb, get(&kb, leaf));
	sv = add(&kb, row, kb_load(&kb, blt, get(&kb, cur)));
	kb_set(&kb, acc, add(&kb, conv(&kb, kb_load(&kb, bo, sv), DT_F64),
	                     kb_load(&kb, blw, get(&kb, cur))));
	kb_store(&kb, bo, sv, conv(&kb, get(&kb, acc), ct));
	kb_end(&kb);   /* if */
	kb_end(&kb);   /* tree */
	if (t.average) {
		j = loop(&kb, "j", t.T, 0);
		kb_store(&kb, bo, add(&kb, row, j),
		         conv(&kb, kb_bin(&kb, KO_DIV, conv(&kb, kb_load(&kb, bo, add(&kb, row, j)),
		                                             DT_F64),
		                          kb_const_f(&kb, DT_F64, (double)t.nt)), ct));
		kb_end(&kb);
	}
	kb_end(&kb);   /* r */
	lower_end(lw, &kb);
	return BURN_OK;
}

/*
 * ops_str.c - the string ops: StringConcat, RegexFullMatch, StringSplit,
 * StringNormalizer (opset 10), LabelEncoder with string keys (ai.onnx.ml
 * 2-4), and Equal of strings (StringEqual, which infer_fold_node makes of
 * an Equal given strings).
 *
 * A string tensor is an array of pointers to NUL-terminated UTF-8 (ir/
 * base.h, DT_STRING); what the ops compute is runtime/strings.inc, the
 * C that burncc compiles in here and copies into the generated module.
 * Kernel IR has no strings: each op lowers to a call kernel (ir/kir.h,
 * KCall) of one routine of it, plus ordinary kernels for the numbers
 * around it (LabelEncoder's values).  With constant inputs, inference
 * computes the values with the same routines, so folding needs no
 * interpreter.
 *
 * Strings a kernel makes go to the string heap (strings.inc), an int64
 * value of --string-bytes bytes that the first string kernel makes
 * (str_heap) together with the kernel that empties it, and that lives to
 * the end of the run (passes/plan.c): outputs point into it.
 *
 * Data-dependent shapes: StringSplit's output and StringNormalizer's with
 * stopwords have as many elements as the data says, so their input must
 * be a constant (burncc compiles static shapes; burncc check freezes the
 * input, the message naming it), as for NonZero.
 */
#include <stdlib.h>
#include <string.h>
#include "kb_short.h"
#include "passes/regex.h"
#include "runtime/strings.inc"

/* ---- helpers ------------------------------------------------------------ */

static int nomem(Ctx *c)
{
	return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
}

/* Input k, which must be a string tensor of known shape. */
static int str_in(Ctx *c, Graph *g, Node *n, int k, const Value **out)
{
	const Value *v = NIN(g, n, k);
	char ts[160];

	if (!v)
		return burn_fail(c, BURN_ERR_INVALID, "input %d is required", k);
	if (!dtype_is_string(v->dtype) || !value_shape_known(v))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "input '%s' is %s: a string "
		                 "tensor expected", v->name, value_type_str(v, ts, sizeof ts));
	*out = v;
	return BURN_OK;
}

/* Input k must be a constant: its strings decide the output's shape. */
static int str_const_in(Ctx *c, Graph *g, Node *n, int k, const char *why,
                        const Value **out)
{
	TRY(str_in(c, g, n, k, out));
	if (!(*out)->data)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "input %d ('%s') must be a "
		                 "constant: %s, and burncc compiles static shapes", k,
		                 (*out)->name, why);
	return BURN_OK;
}

/* A copy of s (len bytes) in g's arena, NUL-terminated. */
static const char *str_dup(Graph *g, const char *s, int64_t len)
{
	return arena_strndup(&g->arena, s, (size_t)len);
}

/* Output k := a constant of dtype dt and shape dim (data copied; for
 * strings, the pointers, whose bytes must live in g's arena). */
static int str_out_const(Ctx *c, Graph *g, Node *n, int k, int dt, int rank,
                         const int64_t *dim, const void *data)
{
	if (k >= n->nout || n->out[k] < 0)
		return BURN_OK;
	return graph_set_const(c, g, n->out[k], dt, rank, dim, data);
}

/* The broadcast table of strings.inc's bs_bidx for operands a, b and
 * output y: {r, dim[r], stride_a[r], stride_b[r]} into t (1 + 3r). */
static void bcast_table(const Value *a, const Value *b, const Value *y, int64_t *t)
{
	int r = y->rank;
	const Value *op[2] = { a, b };

	t[0] = r;
	for (int d = 0; d < r; d++)
		t[1 + d] = y->dim[d];
	for (int w = 0; w < 2; w++) {
		int64_t st = 1;
		for (int d = r - 1; d >= 0; d--) {
			int od = d - (r - op[w]->rank);
			int64_t ext = od >= 0 ? op[w]->dim[od] : 1;
			t[1 + r * (1 + w) + d] = ext == 1 ? 0 : st;
			st *= ext;
		}
	}
}

/* Infer a broadcasting binary string op: inputs strings, output dtype
 * odt broadcast.  *folded: both inputs constant. */
static int infer_bin(Ctx *c, Graph *g, Node *n, int odt, int *folded)
{
	const Value *a, *b;
	int64_t dim[BURN_MAX_RANK];
	int rank;

	TRY(str_in(c, g, n, 0, &a));
	TRY(str_in(c, g, n, 1, &b));
	TRY(shape_broadcast(c, a->rank, a->dim, b->rank, b->dim, &rank, dim));
	set_out(NOUT(g, n, 0), odt, rank, dim);
	*folded = a->data && b->data;
	return BURN_OK;
}

/* ---- the string heap ------------------------------------------------------ */

/* Do any of g's nodes make strings at run time (so the heap needs bytes)? */
static int makes_strings(const Graph *g)
{
	for (int i = 0; i < g->nnode; i++)
		if (!g->node[i].dead && (g->node[i].op == OP_StringConcat ||
		                         g->node[i].op == OP_StringNormalizer))
			return 1;
	return 0;
}

/*
 * The string heap bound in kb (read and written), *buf its buffer.  The
 * first call makes the value ("string_heap": two words and the bytes,
 * --string-bytes of them when some node makes strings) and, before the
 * kernel kb builds, a kernel that empties it: h[0] = 0, h[1] = capacity.
 */
static int str_heap(Lower *lw, KB *kb, int *buf)
{
	Graph *g = lw->g;
	int v = g->str_heap - 1;

	if (v < 0) {
		int64_t cap = makes_strings(g) ? lw->ctx->limits.string_bytes : 0;
		int64_t words = 2 + (cap + 7) / 8;
		KB ib;
		int b;
		if ((v = graph_add_value(g, "string_heap")) < 0)
			return nomem(lw->ctx);
		set_out(GV(g, v), DT_I64, 1, &words);
		g->str_heap = v + 1;
		kb_begin(&ib, lw->prog, "string_heap_init", "string heap");
		b = kb_buf_value(&ib, v, DT_I64, words, KA_WRITE);
		kb_store(&ib, b, I(&ib, 0), kb_const_i(&ib, DT_I64, 0));
		kb_store(&ib, b, I(&ib, 1), kb_const_i(&ib, DT_I64, (cap + 7) / 8 * 8));
		kb_finish(&ib);
	}
	*buf = lower_bind(lw, kb, v, KA_RW);
	return BURN_OK;
}

/* Whether the target compiled for runs call kernels (refused naming it),
 * and n's shapes are known (the routines take element counts). */
static int str_target(Lower *lw, Node *n)
{
	const Target *t = target_or_default(lw->target);

	if (!t->str_calls)
		return burn_fail(lw->ctx, BURN_ERR_UNSUPPORTED, "string ops run on the "
		                 "C targets only (cpu, cpu-freestanding), not on target "
		                 "'%s', unless their inputs are constants", t->name);
	for (int k = 0; k < n->nin + n->nout; k++) {
		int v = k < n->nin ? n->in[k] : n->out[k - n->nin];
		if (v >= 0 && !value_shape_known(GV(lw->g, v)))
			return burn_fail(lw->ctx, BURN_ERR_UNSUPPORTED, "value '%s' has a "
			                 "dim known only at run time; string ops take "
			                 "static shapes", GV(lw->g, v)->name);
	}
	return BURN_OK;
}

/* Make the kernel kb builds a call of fn with buffers bufs and integers. */
static int str_call(Lower *lw, KB *kb, int fn, int nbuf, const int *bufs,
                    int narg, const int64_t *args)
{
	KCall *cl = arena_alloc(lw->prog->arena, sizeof *cl);

	if (!cl)
		return nomem(lw->ctx);
	cl->fn = fn;
	cl->nbuf = nbuf;
	cl->narg = narg;
	memcpy(cl->buf, bufs, sizeof(int) * (size_t)nbuf);
	memcpy(cl->arg, args, sizeof(int64_t) * (size_t)narg);
	kb->k->call = cl;
	return BURN_OK;
}

/* ---- Equal of strings ------------------------------------------------------ */

int infer_StringEqual(Ctx *c, Graph *g, Node *n)
{
	int folded;

	TRY(infer_bin(c, g, n, DT_BOOL, &folded));
	if (folded) {
		const Value *a = NIN(g, n, 0), *b = NIN(g, n, 1);
		Value *y = NOUT(g, n, 0);
		int64_t t[1 + 3 * BURN_MAX_RANK], ny = value_numel(y);
		uint8_t *out = arena_alloc(&g->arena, (size_t)ny + 1);
		if (!out)
			return nomem(c);
		bcast_table(a, b, y, t);
		bs_equal(a->data, b->data, t, out, ny);
		y->data = out;
	}
	return BURN_OK;
}

int lower_StringEqual(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	int64_t t[1 + 3 * BURN_MAX_RANK], ny = value_numel(NOUT(g, n, 0));
	int b[4];
	KB kb;

	TRY(str_target(lw, n));

	bcast_table(NIN(g, n, 0), NIN(g, n, 1), NOUT(g, n, 0), t);
	lower_begin(lw, &kb, n);
	b[0] = lower_in(lw, &kb, n, 0);
	b[1] = lower_in(lw, &kb, n, 1);
	TRY(lower_const_table(lw, &kb, n, "bcast", DT_I64, 1 + 3 * (int64_t)NOUT(g, n, 0)->rank,
	                      t, &b[2]));
	b[3] = lower_out(lw, &kb, n, 0);
	TRY(str_call(lw, &kb, KCALL_EQUAL, 4, b, 1, &ny));
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- StringConcat ---------------------------------------------------------- */

int infer_StringConcat(Ctx *c, Graph *g, Node *n)
{
	int folded;

	TRY(infer_bin(c, g, n, DT_STRING, &folded));
	if (folded) {
		const Value *a = NIN(g, n, 0), *b = NIN(g, n, 1);
		Value *y = NOUT(g, n, 0);
		int64_t t[1 + 3 * BURN_MAX_RANK], ny = value_numel(y);
		const char **out = arena_alloc(&g->arena, sizeof *out * (size_t)(ny + 1));
		const burn_str *x = a->data, *z = b->data;
		if (!out)
			return nomem(c);
		bcast_table(a, b, y, t);
		for (int64_t i = 0; i < ny; i++) {
			const char *s = x[bs_bidx(t, 0, i)], *u = z[bs_bidx(t, 1, i)];
			char *d = arena_printf(&g->arena, "%s%s", s, u);
			if (!d)
				return nomem(c);
			out[i] = d;
		}
		y->data = out;
	}
	return BURN_OK;
}

int lower_StringConcat(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	int64_t t[1 + 3 * BURN_MAX_RANK], ny = value_numel(NOUT(g, n, 0));
	int b[5];
	KB kb;

	TRY(str_target(lw, n));

	bcast_table(NIN(g, n, 0), NIN(g, n, 1), NOUT(g, n, 0), t);
	lower_begin(lw, &kb, n);
	TRY(str_heap(lw, &kb, &b[4]));
	b[0] = lower_in(lw, &kb, n, 0);
	b[1] = lower_in(lw, &kb, n, 1);
	TRY(lower_const_table(lw, &kb, n, "bcast", DT_I64, 1 + 3 * (int64_t)NOUT(g, n, 0)->rank,
	                      t, &b[2]));
	b[3] = lower_out(lw, &kb, n, 0);
	TRY(str_call(lw, &kb, KCALL_CONCAT, 5, b, 1, &ny));
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- RegexFullMatch ---------------------------------------------------------- */

/* The node's pattern compiled (from g's arena). */
static int regex_prog(Ctx *c, Graph *g, Node *n, int32_t **prog, int64_t *count)
{
	const Attr *a = node_attr(n, "pattern");

	if (!a || a->type != AT_STRING)
		return burn_fail(c, BURN_ERR_INVALID, "attribute 'pattern' is required");
	return regex_compile(c, &g->arena, a->s, prog, count);
}

int infer_RegexFullMatch(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	Value *y;
	int32_t *prog;
	int64_t count, nx;

	TRY(str_in(c, g, n, 0, &x));
	TRY(regex_prog(c, g, n, &prog, &count));   /* refuses a bad pattern now */
	y = NOUT(g, n, 0);
	set_out(y, DT_BOOL, x->rank, x->dim);
	if (x->data) {
		const burn_str *s = x->data;
		int32_t *scratch = malloc(sizeof *scratch * (5 * (size_t)prog[0] + 1));
		uint8_t *out;
		nx = value_numel(x);
		out = arena_alloc(&g->arena, (size_t)nx + 1);
		if (!scratch || !out) {
			free(scratch);
			return nomem(c);
		}
		for (int64_t i = 0; i < nx; i++) {
			int r = bs_re_full(prog, scratch, s[i]);
			if (r < 0) {
				free(scratch);
				return burn_fail(c, BURN_ERR_INVALID, "input '%s': element %lld "
				                 "is not UTF-8", x->name, (long long)i);
			}
			out[i] = (uint8_t)r;
		}
		free(scratch);
		y->data = out;
	}
	return BURN_OK;
}

int lower_RegexFullMatch(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	int32_t *prog;
	int64_t count, nx = value_numel(NIN(g, n, 0)), sw;
	int b[5], tmp;
	KB kb;

	TRY(str_target(lw, n));

	TRY(regex_prog(lw->ctx, g, n, &prog, &count));
	sw = 5 * (int64_t)prog[0] + 1;
	if ((tmp = lower_temp(lw, DT_I32, 1, &sw)) < 0)
		return nomem(lw->ctx);
	lower_begin(lw, &kb, n);
	TRY(str_heap(lw, &kb, &b[4]));
	b[0] = lower_in(lw, &kb, n, 0);
	TRY(lower_const_table(lw, &kb, n, "regex", DT_I32, count, prog, &b[1]));
	b[2] = lower_bind(lw, &kb, tmp, KA_RW);
	b[3] = lower_out(lw, &kb, n, 0);
	TRY(str_call(lw, &kb, KCALL_REGEX, 5, b, 1, &nx));
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- StringSplit ------------------------------------------------------------ */

static int is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' ||
	       ch == '\r';
}

/*
 * Split s as Python's str.split(sep, maxsplit) does: with a separator,
 * at each occurrence (empty pieces kept); without (sep NULL or ""), at
 * runs of ASCII whitespace, none leading or trailing.  At most maxsplit
 * splits (< 0: no bound), the rest the last piece.  Piece k is
 * s[at[k] .. at[k] + len[k]); returns the pieces (at, len NULL: count
 * only).
 */
static int64_t split(const char *s, const char *sep, int64_t maxsplit,
                     int64_t *at, int64_t *len)
{
	int64_t np = 0, i = 0, n = bs_len(s);

	if (sep && *sep) {
		int64_t ls = bs_len(sep), start = 0;
		while (i + ls <= n) {
			if ((maxsplit < 0 || np < maxsplit) && !memcmp(s + i, sep, (size_t)ls)) {
				if (at) {
					at[np] = start;
					len[np] = i - start;
				}
				np++;
				i += ls;
				start = i;
			} else {
				i++;
			}
		}
		if (at) {
			at[np] = start;
			len[np] = n - start;
		}
		return np + 1;
	}
	for (;;) {
		int64_t start;
		while (i < n && is_space(s[i]))
			i++;
		if (i == n)
			break;
		start = i;
		if (maxsplit >= 0 && np == maxsplit) {
			int64_t e = n;
			while (e > start && is_space(s[e - 1]))
				e--;
			i = e;
		} else {
			while (i < n && !is_space(s[i]))
				i++;
		}
		if (at) {
			at[np] = start;
			len[np] = i - start;
		}
		np++;
	}
	return np;
}

int infer_StringSplit(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	const Attr *d = node_attr(n, "delimiter");
	const char *sep = d && d->type == AT_STRING ? d->s : NULL;
	int64_t maxsplit = attr_int(n, "maxsplit", -1), nx, most = 0, dim[BURN_MAX_RANK];
	const burn_str *s;
	const char **y;
	int64_t *cnt, *at, *len, ny;

	TRY(str_const_in(c, g, n, 0, "the substrings' count depends on the "
	                 "strings", &x));
	if (x->rank + 1 > BURN_MAX_RANK)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "input '%s' has rank %d (max %d)",
		                 x->name, x->rank, BURN_MAX_RANK - 1);
	if (sep && memchr(sep, 0, (size_t)d->slen))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "the delimiter holds a NUL byte");
	s = x->data;
	nx = value_numel(x);
	if (!(cnt = arena_alloc(&g->arena, sizeof *cnt * (size_t)(nx + 1))))
		return nomem(c);
	for (int64_t i = 0; i < nx; i++) {
		cnt[i] = split(s[i], sep, maxsplit, NULL, NULL);
		most = cnt[i] > most ? cnt[i] : most;
	}
	memcpy(dim, x->dim, sizeof(int64_t) * (size_t)x->rank);
	dim[x->rank] = most;
	if (burn_mul_ovf(nx, most, &ny))
		return burn_fail(c, BURN_ERR_LIMIT, "too many substrings");
	y = arena_alloc(&g->arena, sizeof *y * (size_t)(ny + 1));
	at = malloc(sizeof *at * (size_t)(most + 1));
	len = malloc(sizeof *len * (size_t)(most + 1));
	if (!y || !at || !len) {
		free(at);
		free(len);
		return nomem(c);
	}
	for (int64_t i = 0; i < nx; i++) {
		split(s[i], sep, maxsplit, at, len);
		for (int64_t k = 0; k < most; k++) {
			y[i * most + k] = k < cnt[i] ? str_dup(g, s[i] + at[k], len[k]) : "";
			if (!y[i * most + k]) {
				free(at);
				free(len);
				return nomem(c);
			}
		}
	}
	free(at);
	free(len);
	TRY(str_out_const(c, g, n, 0, DT_STRING, x->rank + 1, dim, y));
	return str_out_const(c, g, n, 1, DT_I64, x->rank, x->dim, cnt);
}

int lower_StringSplit(Lower *lw, Node *n)
{
	(void)n;
	return burn_fail(lw->ctx, BURN_ERR_INTERNAL, "StringSplit is computed when "
	                 "inferring");
}

/* ---- StringNormalizer --------------------------------------------------------- */

/* The case change: 0 NONE, 1 LOWER, 2 UPPER; the locale checked. */
static int norm_mode(Ctx *c, Node *n, int *mode)
{
	const char *a = attr_str(n, "case_change_action", "NONE");
	const char *loc = attr_str(n, "locale", "");

	*mode = !strcmp(a, "LOWER") ? 1 : !strcmp(a, "UPPER") ? 2 : 0;
	if (*mode == 0 && strcmp(a, "NONE"))
		return burn_fail(c, BURN_ERR_INVALID, "case_change_action '%s' is none "
		                 "of LOWER, UPPER, NONE", a);
	/* the locales whose case rules differ from the simple mapping */
	if (*mode && (!strncmp(loc, "tr", 2) || !strncmp(loc, "az", 2) ||
	              !strncmp(loc, "lt", 2)))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "locale '%s': burncc changes "
		                 "case by the locale-independent mapping, which Turkish, "
		                 "Azeri and Lithuanian do not use", loc);
	return BURN_OK;
}

int infer_StringNormalizer(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	const Attr *sw = node_attr(n, "stopwords");
	int nstop = sw && sw->type == AT_STRINGS ? sw->n : 0, mode;
	int sens = attr_int(n, "is_case_sensitive", 0) != 0;
	int64_t nx, keep = 0, dim[2];
	const burn_str *s;
	const char **y;

	TRY(str_in(c, g, n, 0, &x));
	TRY(norm_mode(c, n, &mode));
	if (!(x->rank == 1 || (x->rank == 2 && x->dim[0] == 1)))
		return burn_fail(c, BURN_ERR_INVALID, "input '%s' must be [C] or [1, C]",
		                 x->name);
	if (nstop)
		TRY(str_const_in(c, g, n, 0, "stopwords are removed, so the output's "
		                 "length depends on the strings", &x));
	if (!x->data) {
		set_out(NOUT(g, n, 0), DT_STRING, x->rank, x->dim);
		return BURN_OK;
	}
	s = x->data;
	nx = value_numel(x);
	if (!(y = arena_alloc(&g->arena, sizeof *y * (size_t)(nx + 1))))
		return nomem(c);
	for (int64_t i = 0; i < nx; i++) {
		int stop = 0;
		int64_t len;
		char *d;
		for (int k = 0; k < nstop && !stop; k++)
			stop = sens ? !bs_cmp(s[i], sw->strs[k]) : bs_eq_nocase(s[i], sw->strs[k]);
		if (stop)
			continue;
		if (bs_case_len(s[i], mode, &len))
			return burn_fail(c, BURN_ERR_INVALID, "input '%s': element %lld is "
			                 "not UTF-8", x->name, (long long)i);
		if (!(d = arena_alloc(&g->arena, (size_t)len + 1)))
			return nomem(c);
		bs_case_put(d, s[i], mode);
		y[keep++] = d;
	}
	if (keep == 0)        /* all dropped: one empty string (the spec) */
		y[keep++] = "";
	dim[0] = x->rank == 2 ? 1 : keep;
	dim[1] = keep;
	return str_out_const(c, g, n, 0, DT_STRING, x->rank, dim, y);
}

int lower_StringNormalizer(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	int mode, b[3];
	int64_t a[2];
	KB kb;

	TRY(str_target(lw, n));

	TRY(norm_mode(lw->ctx, n, &mode));
	a[0] = value_numel(NIN(g, n, 0));
	a[1] = mode;
	lower_begin(lw, &kb, n);
	TRY(str_heap(lw, &kb, &b[2]));
	b[0] = lower_in(lw, &kb, n, 0);
	b[1] = lower_out(lw, &kb, n, 0);
	TRY(str_call(lw, &kb, KCALL_NORMALIZE, 3, b, 2, a));
	lower_end(lw, &kb);
	return BURN_OK;
}

/* ---- LabelEncoder (string keys) ----------------------------------------------- */

/*
 * The mapping: keys (strings, sorted by bs_cmp) and values (dtype vdt,
 * nkeys of them, then the default: values[nkeys]), from keys_strings or
 * keys_tensor, and values_int64s, values_floats, values_strings or
 * values_tensor, and default_int64 (-1), default_float (-0.0),
 * default_string ("_Unused") or default_tensor.  malloc'd: the caller
 * frees *keys and *vals (strings stay g's).
 */
typedef struct LEnc {
	int64_t nkeys;
	const char **keys;
	int vdt;
	void *vals;      /* nkeys + 1 elements of vdt */
} LEnc;

static int cmp_key(const void *a, const void *b)
{
	const char *const *x = a, *const *y = b;

	return bs_cmp((*x), (*y));
}

static void lenc_free(LEnc *e)
{
	free(e->keys);
	free(e->vals);
	e->keys = NULL;
	e->vals = NULL;
}

static int lenc_plan_(Ctx *c, Node *n, LEnc *e);

/* lenc_plan_, freeing what it made when it fails. */
static int lenc_plan(Ctx *c, Graph *g, Node *n, LEnc *e)
{
	int rc = lenc_plan_(c, n, e);

	(void)g;
	if (rc)
		lenc_free(e);
	return rc;
}

static int lenc_plan_(Ctx *c, Node *n, LEnc *e)
{
	const Attr *ks = node_attr(n, "keys_strings"), *kt = node_attr(n, "keys_tensor");
	const Attr *vi = node_attr(n, "values_int64s"), *vf = node_attr(n, "values_floats");
	const Attr *vs = node_attr(n, "values_strings"), *vt = node_attr(n, "values_tensor");
	const Attr *dt = node_attr(n, "default_tensor");
	const void *src;
	int64_t nv, es, *perm;
	const char **k;
	char *vals;

	memset(e, 0, sizeof *e);
	if (ks && ks->type == AT_STRINGS) {
		e->nkeys = ks->n;
		k = (const char **)ks->strs;
	} else if (kt && kt->type == AT_TENSOR && dtype_is_string(kt->t->dtype)) {
		e->nkeys = kt->t->nbytes / (int64_t)sizeof(burn_str);
		k = kt->t->data;
	} else {
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "keys that are not strings "
		                 "(keys_int64s, keys_floats) are not supported yet");
	}
	if (vi && vi->type == AT_INTS) {
		e->vdt = DT_I64;
		nv = vi->n;
		src = vi->ints;
	} else if (vf && vf->type == AT_FLOATS) {
		e->vdt = DT_F32;
		nv = vf->n;
		src = vf->floats;   /* doubles: converted below */
	} else if (vs && vs->type == AT_STRINGS) {
		e->vdt = DT_STRING;
		nv = vs->n;
		src = vs->strs;
	} else if (vt && vt->type == AT_TENSOR && dtype_size(vt->t->dtype) > 0) {
		e->vdt = vt->t->dtype;
		nv = vt->t->nbytes / dtype_size(e->vdt);
		src = vt->t->data;
	} else {
		return burn_fail(c, BURN_ERR_INVALID, "no values (values_int64s, "
		                 "values_floats, values_strings or values_tensor)");
	}
	if (nv != e->nkeys)
		return burn_fail(c, BURN_ERR_INVALID, "%lld keys and %lld values",
		                 (long long)e->nkeys, (long long)nv);
	es = dtype_size(e->vdt);
	perm = malloc(sizeof *perm * (size_t)(e->nkeys + 1));
	e->keys = malloc(sizeof *e->keys * (size_t)(e->nkeys + 1));
	e->vals = vals = calloc((size_t)(e->nkeys + 1), (size_t)es);
	if (!perm || !e->keys || !vals) {
		free(perm);
		return nomem(c);
	}
	/* sort the keys, carrying each one's position for its value */
	{
		const char **pair = malloc(sizeof *pair * 2 * (size_t)(e->nkeys + 1));
		if (!pair) {
			free(perm);
			return nomem(c);
		}
		for (int64_t i = 0; i < e->nkeys; i++) {
			pair[2 * i] = k[i];
			pair[2 * i + 1] = (const char *)(intptr_t)i;
		}
		qsort(pair, (size_t)e->nkeys, 2 * sizeof *pair, cmp_key);
		for (int64_t i = 0; i < e->nkeys; i++) {
			e->keys[i] = pair[2 * i];
			perm[i] = (int64_t)(intptr_t)pair[2 * i + 1];
			if (i > 0 && !bs_cmp(e->keys[i - 1], e->keys[i])) {
				free(pair);
				free(perm);
				return burn_fail(c, BURN_ERR_INVALID, "key '%s' appears twice",
				                 e->keys[i]);
			}
		}
		free(pair);
	}
	for (int64_t i = 0; i < e->nkeys; i++) {
		char *d = vals + es * i;
		if (e->vdt == DT_F32 && src == (const void *)vf->floats) {
			float f = (float)vf->floats[perm[i]];
			memcpy(d, &f, 4);
		} else {
			memcpy(d, (const char *)src + es * perm[i], (size_t)es);
		}
	}
	free(perm);
	/* the default, at position nkeys */
	{
		char *d = vals + es * e->nkeys;
		if (dt && dt->type == AT_TENSOR) {
			if (dt->t->dtype != e->vdt || dt->t->nbytes < es)
				return burn_fail(c, BURN_ERR_INVALID, "default_tensor is not "
				                 "one value of the values' type");
			memcpy(d, dt->t->data, (size_t)es);
		} else if (e->vdt == DT_I64) {
			int64_t v = attr_int(n, "default_int64", -1);
			memcpy(d, &v, 8);
		} else if (e->vdt == DT_F32) {
			const Attr *df = node_attr(n, "default_float");
			float f = df && df->type == AT_FLOAT ? (float)df->f : -0.0f;
			memcpy(d, &f, 4);
		} else if (e->vdt == DT_STRING) {
			const char *s = attr_str(n, "default_string", "_Unused");
			memcpy(d, &s, sizeof s);
		} else {
			memset(d, 0, (size_t)es);   /* a values_tensor without default */
		}
	}
	return BURN_OK;
}

int infer_LabelEncoder(Ctx *c, Graph *g, Node *n)
{
	const Value *x;
	Value *y;
	LEnc e;
	int rc = BURN_OK;

	TRY(str_in(c, g, n, 0, &x));
	TRY(lenc_plan(c, g, n, &e));
	y = NOUT(g, n, 0);
	set_out(y, e.vdt, x->rank, x->dim);
	if (x->data) {
		int64_t nx = value_numel(x), es = dtype_size(e.vdt);
		int64_t *idx = malloc(sizeof *idx * (size_t)(nx + 1));
		char *out = arena_alloc(&g->arena, (size_t)(es * nx + 1));
		if (!idx || !out) {
			rc = nomem(c);
		} else {
			bs_lookup(x->data, e.keys, idx, nx, e.nkeys);
			for (int64_t i = 0; i < nx; i++)
				memcpy(out + es * i, (char *)e.vals + es * (idx[i] < 0 ? e.nkeys : idx[i]),
				       (size_t)es);
			y->data = out;
		}
		free(idx);
	}
	lenc_free(&e);
	return rc;
}

/* A call of bs_lookup into an i64 index per element, then, in kernel IR,
 * y[i] = values[idx[i] < 0 ? nkeys : idx[i]] (values numbers: string
 * values are computed only from a constant input, when inferring). */
int lower_LabelEncoder(Lower *lw, Node *n)
{
	Graph *g = lw->g;
	int64_t nx = value_numel(NIN(g, n, 0)), a[2];
	int b[3], tmp, rc;
	LEnc e;
	KB kb;

	TRY(str_target(lw, n));

	TRY(lenc_plan(lw->ctx, g, n, &e));
	if (e.vdt == DT_STRING) {
		lenc_free(&e);
		return burn_fail(lw->ctx, BURN_ERR_UNSUPPORTED, "string values of a "
		                 "run-time input are not supported yet");
	}
	if ((tmp = lower_temp(lw, DT_I64, 1, &nx)) < 0) {
		lenc_free(&e);
		return nomem(lw->ctx);
	}
	lower_begin(lw, &kb, n);
	b[0] = lower_in(lw, &kb, n, 0);
	rc = lower_const_table(lw, &kb, n, "keys", DT_STRING, e.nkeys, e.keys, &b[1]);
	b[2] = lower_bind(lw, &kb, tmp, KA_WRITE);
	a[0] = nx;
	a[1] = e.nkeys;
	if (!rc)
		rc = str_call(lw, &kb, KCALL_LOOKUP, 3, b, 2, a);
	lower_end(lw, &kb);
	if (rc) {
		lenc_free(&e);
		return rc;
	}
	/* y[i] = values[idx[i] < 0 ? nkeys : idx[i]] */
	lower_begin(lw, &kb, n);
	{
		int ib = lower_bind(lw, &kb, tmp, KA_READ), vb, ob;
		KRef i, k;
		rc = lower_const_table(lw, &kb, n, "values", e.vdt, e.nkeys + 1, e.vals, &vb);
		if (!rc) {
			ob = lower_out(lw, &kb, n, 0);
			i = loop(&kb, "i", nx, KF_PARALLEL);
			k = kb_load(&kb, ib, i);
			k = kb_select(&kb, kb_bin(&kb, KO_LT, k, I(&kb, 0)), I(&kb, e.nkeys), k);
			kb_store(&kb, ob, i, kb_load(&kb, vb, k));
			kb_end(&kb);
		}
	}
	lower_end(lw, &kb);
	lenc_free(&e);
	return rc;
}

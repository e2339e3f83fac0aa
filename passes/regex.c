/*
 * regex.c - RegexFullMatch's pattern (RE2 syntax, the subset regex.h
 * lists) parsed into a tree and compiled into a Thompson-NFA program for
 * runtime/strings.inc's matcher.  Runs when compiling: the pattern is an
 * attribute, so a pattern outside the subset is an error naming the node
 * (the caller's Ctx) and the offset, never a run-time surprise.
 */
#include <stdlib.h>
#include <string.h>
#include "passes/regex.h"
#include "runtime/strings.inc"

#define MAX_REPEAT 1000      /* RE2's bound on {n,m} */
#define MAX_INST 20000       /* program size: scratch is 5 words each */
#define MAX_DEPTH 100        /* nested groups */
#define MAX_CP 0x10ffff

enum { N_EMPTY, N_CHAR, N_ANY, N_CLASS, N_CAT, N_ALT, N_REP, N_ASSERT };

/* A tree node.  N_CAT and N_ALT: children a, a's next, ... (a list, so a
 * long pattern is a loop, not a recursion); N_REP: child a, min, max (-1
 * unbounded); N_CHAR: c; N_CLASS: class index c; N_ASSERT: c an
 * instruction (BS_RE_BEGIN ...). */
typedef struct RNode {
	int kind, a, next, min, max;
	int32_t c;
} RNode;

/* A class: sorted ranges r[0..2n) (lo, hi pairs), negated or not. */
typedef struct RClass {
	int neg, n, cap;
	int32_t *r;
} RClass;

typedef struct P {
	Ctx *c;
	const char *s;
	int64_t i;
	RNode *nd;
	int nn, capn;
	RClass *cl;
	int ncl, capcl;
	int32_t *ins;     /* 3 words an instruction */
	int ni, capi;
	int depth;
} P;

/* --- tree building -------------------------------------------------------- */

static int bad(P *p, int code, const char *what)
{
	return burn_fail(p->c, code, "pattern '%s': %s at offset %lld (burncc "
	                 "takes literals, ., [classes], \\d \\w \\s \\b and their "
	                 "negations, groups, |, * + ? {n,m}, ^ $)", p->s, what,
	                 (long long)p->i);
}

static int node(P *p, int kind, int *out)
{
	if (p->nn == p->capn) {
		int cap = p->capn ? 2 * p->capn : 64;
		RNode *nd = realloc(p->nd, sizeof *nd * (size_t)cap);
		if (!nd)
			return burn_fail(p->c, BURN_ERR_NOMEM, "out of memory");
		p->nd = nd;
		p->capn = cap;
	}
	memset(&p->nd[p->nn], 0, sizeof *p->nd);
	p->nd[p->nn].kind = kind;
	p->nd[p->nn].a = p->nd[p->nn].next = -1;
	*out = p->nn++;
	return BURN_OK;
}

static int new_class(P *p, int *out)
{
	if (p->ncl == p->capcl) {
		int cap = p->capcl ? 2 * p->capcl : 8;
		RClass *cl = realloc(p->cl, sizeof *cl * (size_t)cap);
		if (!cl)
			return burn_fail(p->c, BURN_ERR_NOMEM, "out of memory");
		p->cl = cl;
		p->capcl = cap;
	}
	memset(&p->cl[p->ncl], 0, sizeof *p->cl);
	*out = p->ncl++;
	return BURN_OK;
}

static int add_range(P *p, int k, int32_t lo, int32_t hi)
{
	RClass *cl = &p->cl[k];

	if (cl->n == cl->cap) {
		int cap = cl->cap ? 2 * cl->cap : 8;
		int32_t *r = realloc(cl->r, sizeof *r * 2 * (size_t)cap);
		if (!r)
			return burn_fail(p->c, BURN_ERR_NOMEM, "out of memory");
		cl->r = r;
		cl->cap = cap;
	}
	cl->r[2 * cl->n] = lo;
	cl->r[2 * cl->n + 1] = hi;
	cl->n++;
	return BURN_OK;
}

/* The ranges of \d, \w, \s (letter e lower case), or their complement
 * (upper case), added to class k. */
static int add_perl(P *p, int k, int e)
{
	static const int32_t d[] = { '0', '9' };
	static const int32_t w[] = { '0', '9', 'A', 'Z', '_', '_', 'a', 'z' };
	static const int32_t s[] = { '\t', '\n', '\f', '\r', ' ', ' ' };
	const int32_t *r;
	int n, lc = e | 0x20;
	int32_t from = 0;

	r = lc == 'd' ? d : lc == 'w' ? w : s;
	n = lc == 'd' ? 1 : lc == 'w' ? 4 : 3;
	for (int j = 0; j < n; j++) {
		if (e == lc) {
			TRY(add_range(p, k, r[2 * j], r[2 * j + 1]));
			continue;
		}
		if (r[2 * j] > from)
			TRY(add_range(p, k, from, r[2 * j] - 1));
		from = r[2 * j + 1] + 1;
	}
	if (e != lc)
		TRY(add_range(p, k, from, MAX_CP));
	return BURN_OK;
}

/* The code point at p->i (UTF-8), stepped over. */
static int literal(P *p, int32_t *cp)
{
	int32_t x = bs_next(p->s, &p->i);

	if (x < 0)
		return bad(p, BURN_ERR_INVALID, "bytes that are not UTF-8");
	*cp = x;
	return BURN_OK;
}

static int hexval(int ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 :
	       ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/*
 * escape: the character after a backslash (p->i at it).  One code point
 * into *cp (return 0), or a class letter d w s D W S into *cp (return 1),
 * or an assertion b B A z into *cp (return 2).
 */
static int escape(P *p, int32_t *cp, int *what)
{
	int ch = (unsigned char)p->s[p->i];

	*what = 0;
	if (!ch)
		return bad(p, BURN_ERR_INVALID, "a trailing backslash");
	p->i++;
	switch (ch) {
	case 'd': case 'w': case 's': case 'D': case 'W': case 'S':
		*what = 1;
		*cp = ch;
		return BURN_OK;
	case 'b': case 'B': case 'A': case 'z':
		*what = 2;
		*cp = ch == 'b' ? BS_RE_WORDB : ch == 'B' ? BS_RE_NWORDB :
		      ch == 'A' ? BS_RE_BEGIN : BS_RE_END;
		return BURN_OK;
	case 'n': *cp = '\n'; return BURN_OK;
	case 't': *cp = '\t'; return BURN_OK;
	case 'r': *cp = '\r'; return BURN_OK;
	case 'f': *cp = '\f'; return BURN_OK;
	case 'v': *cp = '\v'; return BURN_OK;
	case 'x': {
		int32_t v = 0;
		int nd = 0, brace = p->s[p->i] == '{', h;
		p->i += brace;
		while ((h = hexval((unsigned char)p->s[p->i])) >= 0 && (brace || nd < 2)) {
			v = v * 16 + h;
			p->i++;
			if (++nd > 6 || v > MAX_CP)
				return bad(p, BURN_ERR_INVALID, "a \\x escape above U+10FFFF");
		}
		if ((brace && p->s[p->i] != '}') || (!brace && nd != 2) || nd == 0)
			return bad(p, BURN_ERR_INVALID, "a malformed \\x escape");
		p->i += brace;
		*cp = v;
		return BURN_OK;
	}
	}
	if (ch < 0x80 && !(ch >= '0' && ch <= '9') && !((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z') &&
	    ch > 0x20 && ch < 0x7f) {
		*cp = ch;    /* escaped punctuation: itself */
		return BURN_OK;
	}
	p->i--;
	return bad(p, BURN_ERR_UNSUPPORTED, "an escape outside the subset");
}

/* class := '[' '^'? ']'? item* ']' ; item := char ('-' char)? | \d ... */
static int parse_class(P *p, int *out)
{
	int k, first = 1;

	TRY(new_class(p, &k));
	p->i++;    /* '[' */
	if (p->s[p->i] == '^') {
		p->cl[k].neg = 1;
		p->i++;
	}
	if (p->s[p->i] == '[' && p->s[p->i + 1] == ':')
		return bad(p, BURN_ERR_UNSUPPORTED, "a POSIX class [:...:]");
	while (p->s[p->i] != ']' || first) {
		int32_t lo, hi;
		int what = 0;
		first = 0;
		if (!p->s[p->i])
			return bad(p, BURN_ERR_INVALID, "a class without its ']'");
		if (p->s[p->i] == '\\') {
			p->i++;
			TRY(escape(p, &lo, &what));
			if (what == 1) {
				TRY(add_perl(p, k, lo));
				continue;
			}
			if (what == 2)
				return bad(p, BURN_ERR_UNSUPPORTED, "an assertion in a class");
		} else {
			TRY(literal(p, &lo));
		}
		hi = lo;
		if (p->s[p->i] == '-' && p->s[p->i + 1] && p->s[p->i + 1] != ']') {
			p->i++;
			if (p->s[p->i] == '\\') {
				p->i++;
				TRY(escape(p, &hi, &what));
				if (what)
					return bad(p, BURN_ERR_INVALID, "a range ending in a class");
			} else {
				TRY(literal(p, &hi));
			}
			if (hi < lo)
				return bad(p, BURN_ERR_INVALID, "a range out of order");
		}
		TRY(add_range(p, k, lo, hi));
	}
	p->i++;    /* ']' */
	TRY(node(p, N_CLASS, out));
	p->nd[*out].c = k;
	return BURN_OK;
}

static int parse_alt(P *p, int *out);

/* atom := '(' ('?:')? alt ')' | class | '.' | '^' | '$' | '\' escape | char */
static int parse_atom(P *p, int *out)
{
	int ch = (unsigned char)p->s[p->i], what, k;
	int32_t cp;

	switch (ch) {
	case '(':
		if (p->s[p->i + 1] == '?' && p->s[p->i + 2] != ':')
			return bad(p, BURN_ERR_UNSUPPORTED, "flags or a named group");
		p->i += p->s[p->i + 1] == '?' ? 3 : 1;
		if (++p->depth > MAX_DEPTH)
			return bad(p, BURN_ERR_LIMIT, "groups nested too deep");
		TRY(parse_alt(p, out));
		p->depth--;
		if (p->s[p->i] != ')')
			return bad(p, BURN_ERR_INVALID, "a group without its ')'");
		p->i++;
		return BURN_OK;
	case '[':
		return parse_class(p, out);
	case '.':
		p->i++;
		return node(p, N_ANY, out);
	case '^': case '$':
		p->i++;
		TRY(node(p, N_ASSERT, out));
		p->nd[*out].c = ch == '^' ? BS_RE_BEGIN : BS_RE_END;
		return BURN_OK;
	case '*': case '+': case '?':
		return bad(p, BURN_ERR_INVALID, "a repetition of nothing");
	case '\\':
		p->i++;
		TRY(escape(p, &cp, &what));
		if (what == 1) {
			TRY(new_class(p, &k));
			TRY(add_perl(p, k, cp));
			TRY(node(p, N_CLASS, out));
			p->nd[*out].c = k;
			return BURN_OK;
		}
		TRY(node(p, what == 2 ? N_ASSERT : N_CHAR, out));
		p->nd[*out].c = cp;
		return BURN_OK;
	}
	TRY(literal(p, &cp));
	TRY(node(p, N_CHAR, out));
	p->nd[*out].c = cp;
	return BURN_OK;
}

/* A decimal count at p->i; -1 if none. */
static int count(P *p)
{
	int v = -1;

	while (p->s[p->i] >= '0' && p->s[p->i] <= '9') {
		v = (v < 0 ? 0 : v) * 10 + (p->s[p->i++] - '0');
		if (v > MAX_REPEAT)
			return MAX_REPEAT + 1;
	}
	return v;
}

/* repeat := atom (('*' | '+' | '?' | '{' n (',' m?)? '}') '?'?)? */
static int parse_repeat(P *p, int *out)
{
	int x, min, max, r;
	int64_t at;

	TRY(parse_atom(p, &x));
	at = p->i;
	switch (p->s[p->i]) {
	case '*': min = 0; max = -1; p->i++; break;
	case '+': min = 1; max = -1; p->i++; break;
	case '?': min = 0; max = 1; p->i++; break;
	case '{':
		p->i++;
		min = max = count(p);
		if (min >= 0 && p->s[p->i] == ',') {
			p->i++;
			max = count(p);
		}
		if (min < 0 || p->s[p->i] != '}') {
			p->i = at;   /* RE2: a '{' that starts no count is a literal */
			*out = x;
			return BURN_OK;
		}
		p->i++;
		if (min > MAX_REPEAT || max > MAX_REPEAT)
			return bad(p, BURN_ERR_UNSUPPORTED, "a repetition count over 1000");
		if (max >= 0 && max < min)
			return bad(p, BURN_ERR_INVALID, "a repetition {n,m} with m < n");
		break;
	default:
		*out = x;
		return BURN_OK;
	}
	if (p->s[p->i] == '?')
		p->i++;      /* non-greedy: the same set of full matches */
	if (strchr("*+?", p->s[p->i]) && p->s[p->i])
		return bad(p, BURN_ERR_INVALID, "a repetition of a repetition");
	TRY(node(p, N_REP, &r));
	p->nd[r].a = x;
	p->nd[r].min = min;
	p->nd[r].max = max;
	*out = r;
	return BURN_OK;
}

/* concat := repeat* (a list) */
static int parse_cat(P *p, int *out)
{
	int cat, last = -1, x = -1;

	TRY(node(p, N_CAT, &cat));
	while (p->s[p->i] && p->s[p->i] != '|' && p->s[p->i] != ')') {
		TRY(parse_repeat(p, &x));
		if (last < 0)
			p->nd[cat].a = x;
		else
			p->nd[last].next = x;
		last = x;
	}
	*out = cat;
	return BURN_OK;
}

/* alt := concat ('|' concat)* (a list) */
static int parse_alt(P *p, int *out)
{
	int alt, last, x;

	TRY(parse_cat(p, &x));
	if (p->s[p->i] != '|') {
		*out = x;
		return BURN_OK;
	}
	TRY(node(p, N_ALT, &alt));
	p->nd[alt].a = last = x;
	while (p->s[p->i] == '|') {
		p->i++;
		TRY(parse_cat(p, &x));
		p->nd[last].next = x;
		last = x;
	}
	*out = alt;
	return BURN_OK;
}

/* --- code ------------------------------------------------------------------ */

static int inst(P *p, int op, int32_t x, int32_t y, int *at)
{
	if (p->ni >= MAX_INST)
		return burn_fail(p->c, BURN_ERR_LIMIT, "pattern '%s': its program "
		                 "passes %d instructions", p->s, MAX_INST);
	if (p->ni == p->capi) {
		int cap = p->capi ? 2 * p->capi : 64;
		int32_t *w = realloc(p->ins, sizeof *w * 3 * (size_t)cap);
		if (!w)
			return burn_fail(p->c, BURN_ERR_NOMEM, "out of memory");
		p->ins = w;
		p->capi = cap;
	}
	p->ins[3 * p->ni] = op;
	p->ins[3 * p->ni + 1] = x;
	p->ins[3 * p->ni + 2] = y;
	if (at)
		*at = p->ni;
	p->ni++;
	return BURN_OK;
}

/* Emit node x: its instructions fall through to the next one. */
static int emit(P *p, int x)
{
	const RNode *n = &p->nd[x];
	int s, j, k, first;

	switch (n->kind) {
	case N_EMPTY:
		return BURN_OK;
	case N_CHAR:
		return inst(p, BS_RE_CHAR, n->c, 0, NULL);
	case N_ANY:
		return inst(p, BS_RE_ANY, 0, 0, NULL);
	case N_CLASS:
		return inst(p, BS_RE_CLASS, n->c, 0, NULL);  /* class index, for now */
	case N_ASSERT:
		return inst(p, n->c, 0, 0, NULL);
	case N_CAT:
		for (k = n->a; k >= 0; k = p->nd[k].next)
			TRY(emit(p, k));
		return BURN_OK;
	case N_ALT:
		/* SPLIT(branch, next split) per branch but the last; each
		 * branch jumps to the end, chained through the JMPs' x */
		first = -1;
		for (k = n->a; k >= 0; k = p->nd[k].next) {
			s = -1;
			if (p->nd[k].next >= 0)
				TRY(inst(p, BS_RE_SPLIT, p->ni + 1, 0, &s));
			TRY(emit(p, k));
			if (p->nd[k].next >= 0) {
				TRY(inst(p, BS_RE_JMP, first, 0, &j));
				first = j;
				p->ins[3 * s + 2] = p->ni;
			}
		}
		while (first >= 0) {
			j = p->ins[3 * first + 1];
			p->ins[3 * first + 1] = p->ni;
			first = j;
		}
		return BURN_OK;
	case N_REP:
		for (k = 0; k < n->min; k++)
			TRY(emit(p, n->a));
		if (n->max < 0) {
			TRY(inst(p, BS_RE_SPLIT, p->ni + 1, 0, &s));
			TRY(emit(p, p->nd[x].a));
			TRY(inst(p, BS_RE_JMP, s, 0, NULL));
			p->ins[3 * s + 2] = p->ni;
			return BURN_OK;
		}
		/* optional copies: each split skips to the end, chained
		 * through the splits' y until the end is known */
		first = -1;
		for (k = n->min; k < n->max; k++) {
			TRY(inst(p, BS_RE_SPLIT, p->ni + 1, first, &s));
			first = s;
			TRY(emit(p, p->nd[x].a));
		}
		while (first >= 0) {
			j = p->ins[3 * first + 2];
			p->ins[3 * first + 2] = p->ni;
			first = j;
		}
		return BURN_OK;
	}
	return burn_fail(p->c, BURN_ERR_INTERNAL, "regex: bad node");
}

int regex_compile(Ctx *c, Arena *a, const char *pattern, int32_t **prog,
                  int64_t *count_out)
{
	P p = { c, pattern, 0, NULL, 0, 0, NULL, 0, 0, NULL, 0, 0, 0 };
	int root, rc;
	int64_t n, at;
	int32_t *w = NULL;

	*prog = NULL;
	*count_out = 0;
	rc = parse_alt(&p, &root);
	if (!rc && p.s[p.i] == ')')
		rc = bad(&p, BURN_ERR_INVALID, "a ')' without its '('");
	if (!rc)
		rc = emit(&p, root);
	if (!rc)
		rc = inst(&p, BS_RE_MATCH, 0, 0, NULL);
	if (rc)
		goto done;
	/* layout: n, the instructions, then the classes */
	n = 1 + 3 * (int64_t)p.ni;
	for (int k = 0; k < p.ncl; k++)
		n += 2 + 2 * (int64_t)p.cl[k].n;
	if (!(w = arena_alloc(a, sizeof *w * (size_t)n))) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		goto done;
	}
	w[0] = p.ni;
	memcpy(w + 1, p.ins, sizeof *w * 3 * (size_t)p.ni);
	at = 1 + 3 * (int64_t)p.ni;
	for (int k = 0; k < p.ncl; k++) {
		int64_t o = at;
		w[at++] = p.cl[k].n;
		w[at++] = p.cl[k].neg;
		memcpy(w + at, p.cl[k].r, sizeof *w * 2 * (size_t)p.cl[k].n);
		at += 2 * (int64_t)p.cl[k].n;
		for (int i = 0; i < p.ni; i++)
			if (w[1 + 3 * i] == BS_RE_CLASS && w[2 + 3 * i] == k && !w[3 + 3 * i]) {
				w[2 + 3 * i] = (int32_t)o;
				w[3 + 3 * i] = 1;   /* placed (y is unused by CLASS) */
			}
	}
	*prog = w;
	*count_out = n;
done:
	for (int k = 0; k < p.ncl; k++)
		free(p.cl[k].r);
	free(p.cl);
	free(p.nd);
	free(p.ins);
	return rc;
}

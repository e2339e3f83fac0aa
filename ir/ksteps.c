/*
 * ksteps.c - schedules as data: a kernel's steps, their canonical text and
 * its parser (the grammar and the table of steps are in kir.h).
 */
#include <stdio.h>
#include <string.h>
#include "kir.h"

#define STR_(x) #x
#define STR(x) STR_(x)

typedef struct StepInfo {
	const char *name;
	int slot, min, max;
} StepInfo;

static const StepInfo step_info[KST_COUNT_] = {
	{ NULL, -1, 0, 0 },
#define X(id, name, slot, mn, mx) { name, slot, mn, mx },
	KSTEP_TABLE(X)
#undef X
};

KStep
kstep_make(int kind, int narg, int a0, int a1, int a2)
{
	KStep st;

	memset(&st, 0, sizeof st);
	st.kind = kind;
	st.narg = narg < 0 ? 0 : narg > 3 ? 3 : narg;
	st.arg[0] = a0;
	st.arg[1] = a1;
	st.arg[2] = a2;
	return st;
}

const char *
kstep_name(int kind)
{
	return kind > 0 && kind < KST_COUNT_ ? step_info[kind].name : NULL;
}

int
kstep_slot(int kind)
{
	return kind > 0 && kind < KST_COUNT_ ? step_info[kind].slot : -1;
}

/* grid and rows are one decision per top-level statement: arg 0 */
static int
keyed(int kind)
{
	return kind == KST_GRID || kind == KST_ROWS;
}

int
kstep_same(const KStep *a, const KStep *b)
{
	if (a->kind != b->kind || a->narg != b->narg)
		return 0;
	for (int i = 0; i < a->narg; i++)
		if (a->arg[i] != b->arg[i])
			return 0;
	return 1;
}

/* Canonical order: by slot, then (grid/rows) by statement. */
static int
before(const KStep *a, const KStep *b)
{
	int sa = kstep_slot(a->kind), sb = kstep_slot(b->kind);

	if (sa != sb)
		return sa < sb;
	return keyed(a->kind) && a->arg[0] < b->arg[0];
}

/* Whether a and b answer the same decision. */
static int
same_slot(const KStep *a, const KStep *b)
{
	return kstep_slot(a->kind) == kstep_slot(b->kind) &&
	       (!keyed(a->kind) || a->arg[0] == b->arg[0]);
}

static int
well_formed(const KStep *st)
{
	if (!kstep_name(st->kind) || st->narg < step_info[st->kind].min ||
	    st->narg > step_info[st->kind].max)
		return 0;
	for (int i = 0; i < st->narg; i++)
		if (st->arg[i] < 0)
			return 0;
	return 1;
}

int
ksteps_put(KSteps *s, const KStep *st)
{
	int i;

	if (!s || !well_formed(st))
		return 0;
	for (i = 0; i < s->n; i++)
		if (same_slot(&s->step[i], st)) {
			s->step[i] = *st;
			return 1;
		}
	if (s->n == KSTEPS_MAX)
		return 0;
	for (i = s->n; i > 0 && before(st, &s->step[i - 1]); i--)
		s->step[i] = s->step[i - 1];
	s->step[i] = *st;
	s->n++;
	return 1;
}

static void
drop_in(KStep *a, int *n, int kind)
{
	int j = 0;

	for (int i = 0; i < *n; i++)
		if (kstep_slot(a[i].kind) != kstep_slot(kind))
			a[j++] = a[i];
	*n = j;
}

void
ksteps_drop(KSteps *s, int kind)
{
	if (s)
		drop_in(s->step, &s->n, kind);
}

static const KStep *
find_in(const KStep *a, int n, int kind, int key)
{
	KStep probe = { kind, 1, { key } };

	for (int i = 0; i < n; i++)
		if (same_slot(&a[i], &probe))
			return &a[i];
	return NULL;
}

const KStep *
ksteps_find(const KSteps *s, int kind, int key)
{
	return s ? find_in(s->step, s->n, kind, key) : NULL;
}

void
kkernel_steps(const KKernel *k, KSteps *out)
{
	out->n = k->nstep > 0 && k->nstep <= KSTEPS_MAX ? k->nstep : 0;
	if (out->n)
		memcpy(out->step, k->step, sizeof *k->step * (size_t)out->n);
}

const KStep *
kkernel_step(const KKernel *k, int kind, int key)
{
	return find_in(k->step, k->nstep, kind, key);
}

void
kkernel_step_drop(KKernel *k, int kind)
{
	drop_in(k->step, &k->nstep, kind);
}

int
kprog_set_steps(KProgram *p, KKernel *k, const KSteps *s)
{
	KStep *a = NULL;

	if (s->n && !(a = arena_alloc(p->arena, sizeof *a * (size_t)s->n)))
		return 0;
	if (s->n)
		memcpy(a, s->step, sizeof *a * (size_t)s->n);
	k->step = a;
	k->nstep = s->n;
	return 1;
}

int
kprog_step_put(KProgram *p, KKernel *k, const KStep *st)
{
	KSteps s;

	kkernel_steps(k, &s);
	return ksteps_put(&s, st) && kprog_set_steps(p, k, &s);
}

size_t
ksteps_format(const KSteps *s, char *out, size_t cap)
{
	size_t len = 0;
	char tmp[32];

#define PUT(str) do { \
		const char *p_ = (str); \
		for (; *p_; p_++, len++) \
			if (len + 1 < cap) \
				out[len] = *p_; \
	} while (0)
	for (int i = 0; i < s->n; i++) {
		const KStep *st = &s->step[i];
		if (i)
			PUT(" ");
		PUT(kstep_name(st->kind) ? kstep_name(st->kind) : "?");
		for (int a = 0; a < st->narg; a++) {
			snprintf(tmp, sizeof tmp, "%s%d", a ? "," : "(", st->arg[a]);
			PUT(tmp);
		}
		if (st->narg)
			PUT(")");
	}
#undef PUT
	if (cap)
		out[len < cap ? len : cap - 1] = 0;
	return len;
}

/* ---- parsing -------------------------------------------------------------
 *
 *   steps = [step {' ' step}]           blanks (spaces, tabs) between
 *   step  = NAME ['(' INT {',' INT} ')']  '(' right after NAME; blanks
 *                                         allowed inside the parentheses
 */
typedef struct P {
	const char *s;
	size_t len, i;
	int col;          /* error column (1-based) */
	char *msg;
	size_t cap;
} P;

static int
fail(P *p, size_t at, const char *fmt, const char *arg)
{
	p->col = (int)at + 1;
	snprintf(p->msg, p->cap, fmt, arg);
	return BURN_ERR_PARSE;
}

static void
blanks(P *p)
{
	while (p->i < p->len && (p->s[p->i] == ' ' || p->s[p->i] == '\t'))
		p->i++;
}

static int
is_name(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
}

/* The ranges a step's arguments must be in, whatever the target (the
 * passes check what depends on it); threads' loops are put in increasing
 * order.  0, or the message. */
static const char *
check_args(KStep *st)
{
	int *a = st->arg;

	switch (st->kind) {
	case KST_THREADS:
		for (int i = 1; i < st->narg; i++)
			for (int j = i; j > 0 && a[j] < a[j - 1]; j--) {
				int t = a[j];
				a[j] = a[j - 1];
				a[j - 1] = t;
			}
		for (int i = 1; i < st->narg; i++)
			if (a[i] == a[i - 1])
				return "threads: a loop listed twice";
		return NULL;
	case KST_TILE:
		if (a[0] < 1 || a[0] > 64 || a[1] < 1 || a[1] > 1024 ||
		    (int64_t)a[0] * a[1] > 8192)
			return "tile(MR,NR): MR 1..64, NR 1..1024, MR*NR at most 8192";
		if (st->narg > 2 && a[2] > 65536)
			return "tile(MR,NR,KC): KC at most 65536";
		return NULL;
	case KST_DOT:
	case KST_VEC:
		return a[0] < 1 || a[0] > 256 ? "lanes must be 1..256" : NULL;
	case KST_UNROLL:
		return a[0] > 64 ? "unroll(N): N at most 64" : NULL;
	case KST_GRID:
	case KST_ROWS:
		return a[1] < 1 || a[2] < 1 ? "blocks and threads must be at least 1" : NULL;
	}
	return NULL;
}

static int
step(P *p, KStep *st)
{
	size_t at = p->i, n = 0;
	char name[16];
	const char *bad;

	while (p->i < p->len && is_name((unsigned char)p->s[p->i]))
		p->i++;
	n = p->i - at;
	if (!n)
		return fail(p, at, "expected a step (threads, serial, fma, nofma, tile, dot, "
		            "unroll, vec, im2col, direct, implicit, grid, rows, mma, nomma, async, sync, "
		            "onchip, offchip, inreg, poly, libm)%s", "");
	memset(st, 0, sizeof *st);
	if (n < sizeof name) {
		memcpy(name, p->s + at, n);
		name[n] = 0;
		for (int k = 1; k < KST_COUNT_; k++)
			if (!strcmp(step_info[k].name, name))
				st->kind = k;
	}
	if (!st->kind) {
		snprintf(name, sizeof name, "%.*s", (int)(n < 12 ? n : 12), p->s + at);
		return fail(p, at, "unknown step '%s'", name);
	}
	if (p->i < p->len && p->s[p->i] == '(') {
		p->i++;
		for (;;) {
			int64_t v = 0;
			size_t d = 0;
			blanks(p);
			if (st->narg == KSTEP_MAXARG)
				return fail(p, p->i, "too many arguments to '%s'",
				            step_info[st->kind].name);
			while (p->i < p->len && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
				v = v * 10 + (p->s[p->i++] - '0');
				if (v > INT32_MAX)
					return fail(p, p->i - d - 1, "number too large (at most "
					            "2147483647)%s", "");
				d++;
			}
			if (!d)
				return fail(p, p->i, "expected a non-negative integer%s", "");
			st->arg[st->narg++] = (int)v;
			blanks(p);
			if (p->i < p->len && p->s[p->i] == ',') {
				p->i++;
				continue;
			}
			if (p->i < p->len && p->s[p->i] == ')') {
				p->i++;
				break;
			}
			return fail(p, p->i, "expected ',' or ')'%s", "");
		}
	}
	if (st->narg < step_info[st->kind].min || st->narg > step_info[st->kind].max) {
		static const char *const want[] = { "no arguments", "1 argument",
		                                    "2 arguments", "3 arguments" };
		const StepInfo *si = &step_info[st->kind];
		char what[64];
		if (si->min == si->max)
			snprintf(what, sizeof what, "'%s' takes %s", si->name, want[si->min]);
		else
			snprintf(what, sizeof what, "'%s' takes %d to %d arguments", si->name,
			         si->min, si->max);
		return fail(p, at, "%s", what);
	}
	if ((bad = check_args(st)))
		return fail(p, at, "%s", bad);
	return BURN_OK;
}

int
ksteps_parse(const char *text, size_t len, KSteps *out, int *col, char *msg,
             size_t cap)
{
	P p = { text, len, 0, 0, msg, cap };

	memset(out, 0, sizeof *out);
	blanks(&p);
	while (p.i < p.len) {
		KStep st;
		size_t start = p.i;
		if (step(&p, &st))
			break;
		for (int i = 0; i < out->n; i++)
			if (same_slot(&out->step[i], &st)) {
				snprintf(msg, cap, "'%s' and '%s' both decide the same thing",
				         kstep_name(out->step[i].kind), kstep_name(st.kind));
				p.col = (int)start + 1;
				break;
			}
		if (p.col)
			break;
		if (out->n == KSTEPS_MAX) {
			fail(&p, start, "more than %s steps", STR(KSTEPS_MAX));
			break;
		}
		ksteps_put(out, &st);
		if (p.i < p.len && p.s[p.i] != ' ' && p.s[p.i] != '\t') {
			fail(&p, p.i, "expected a blank between steps%s", "");
			break;
		}
		blanks(&p);
	}
	*col = p.col;
	return p.col ? BURN_ERR_PARSE : BURN_OK;
}

const KSteps *
kprog_want(const KProgram *p, const char *name)
{
	for (int i = 0; name && i < p->nwant; i++)
		if (p->want[i].kernel && !strcmp(p->want[i].kernel, name))
			return &p->want[i].steps;
	return NULL;
}

/* ---- schedules asked for -------------------------------------------------
 *
 *   file = {line}        line = [NAME ':' steps] ['#' comment]
 *   spec = NAME '=' steps                 (eq set: one --schedule argument)
 */
static int
want_fail(Ctx *c, const char *where, int line, size_t col, const char *kernel,
          const char *msg)
{
	if (line)
		return burn_fail(c, BURN_ERR_PARSE, "%s:%d:%d: %s%s%s%s", where, line,
		                 (int)col, kernel ? "kernel " : "", kernel ? kernel : "",
		                 kernel ? ": " : "", msg);
	return burn_fail(c, BURN_ERR_PARSE, "%s: column %d: %s%s%s%s", where, (int)col,
	                 kernel ? "kernel " : "", kernel ? kernel : "",
	                 kernel ? ": " : "", msg);
}

static int
want_line(Ctx *c, Arena *a, const char *where, int line, const char *s, size_t len,
          int eq, KWant **want, int *nwant, int *cap)
{
	size_t i = 0, n;
	char msg[160], name[128];
	int col;
	KWant *w;

	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (!eq && (i == len || s[i] == '#'))
		return BURN_OK;
	n = i;
	while (n < len && ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
	                   s[n] == '_' || (n > i && s[n] >= '0' && s[n] <= '9')))
		n++;
	if (n == i || n - i >= sizeof name)
		return want_fail(c, where, line, i + 1, NULL, "expected a kernel name "
		                 "(--emit=schedule lists them)");
	memcpy(name, s + i, n - i);
	name[n - i] = 0;
	i = n;
	while (!eq && i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i == len || s[i] != (eq ? '=' : ':'))
		return want_fail(c, where, line, i + 1, name, eq ? "expected '=' and "
		                 "the steps" : "expected ':' and the steps");
	i++;
	if (!eq)   /* a comment ends the line */
		for (n = i; n < len; n++)
			if (s[n] == '#') {
				len = n;
				break;
			}
	for (int k = 0; k < *nwant; k++)
		if (!strcmp((*want)[k].kernel, name))
			return want_fail(c, where, line, 1, name, "given a schedule twice");
	if (*nwant == *cap) {
		int m = *cap ? 2 * *cap : 8;
		KWant *g = arena_grow(a, *want, sizeof **want, (size_t)*nwant, (size_t)m);
		if (!g)
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		*want = g;
		*cap = m;
	}
	w = &(*want)[*nwant];
	if (!(w->kernel = arena_strdup(a, name)))
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	if (ksteps_parse(s + i, len - i, &w->steps, &col, msg, sizeof msg))
		return want_fail(c, where, line, i + (size_t)col, name, msg);
	(*nwant)++;
	return BURN_OK;
}

int
kwant_parse(Ctx *c, Arena *a, const char *where, const char *text, size_t len,
            int eq, KWant **want, int *nwant)
{
	int cap = *nwant, line = 1;
	size_t i = 0;

	if (eq)
		return want_line(c, a, where, 0, text, len, 1, want, nwant, &cap);
	while (i < len) {
		size_t e = i;
		while (e < len && text[e] != '\n')
			e++;
		if (memchr(text + i, 0, e - i))
			return want_fail(c, where, line, 1, NULL, "a NUL byte in the line");
		TRY(want_line(c, a, where, line, text + i, e > i && text[e - 1] == '\r' ?
		              e - i - 1 : e - i, 0, want, nwant, &cap));
		i = e + 1;
		line++;
	}
	return BURN_OK;
}

void
kprog_print_schedule(FILE *f, const KProgram *p)
{
	char buf[4096];

	for (int i = 0; i < p->nkernel; i++) {
		const KKernel *k = p->kernel[i];
		KSteps s;
		kkernel_steps(k, &s);
		ksteps_format(&s, buf, sizeof buf);
		fprintf(f, "%s:%s%s\n", k->name, buf[0] ? " " : "", buf);
	}
}

/*
 * ir_text.c - the text form of the graph IR: ir_print() and ir_parse().
 *
 * Example:
 *
 *   graph main opset 17 (%x: f32[1,3,N], %m: f32[3] = [0, 0, 0]) -> (%y) {
 *     %w0 = const f32[2] [1, 2.5]
 *     %t1 = Add(%x, %w0) @name "add_1" : f32[1,3,N]
 *     %y, _ = Dropout(%t1, _, _) {ratio=0.5, seed=3} @name "d" : f32[1,3,N], _
 *   }
 *
 * Grammar (one graph per text; '#' starts a comment to end of line):
 *
 *   graph    = 'graph' name ['opset' INT] '(' [param {',' param}] ')'
 *              '->' '(' [VAL {',' VAL}] ')' '{' {const | node} '}'
 *   param    = VAL ':' type ['=' data]       graph input (with default data)
 *   const    = VAL '=' 'const' type data     constant value
 *   node     = [outs '='] OPNAME '(' [arg {',' arg}] ')' ['{' attrs '}']
 *              {'@name' STR | '@domain' STR | '@dead'} [':' otype {',' otype}]
 *   outs     = arg {',' arg}                 arg  = VAL | '_' (omitted)
 *   otype    = type | '_'                    (types of outs, in order)
 *   type     = '?' | dtype ['[' [dim {',' dim}] ']']
 *              dtype is f32, i64, ... or '?'; no brackets = rank unknown,
 *              '[]' = scalar; dim = INT | name (symbolic) | '?' (unknown)
 *   data     = '[' [NUM {',' NUM}] ']' | '<elided>'   (row-major, flat)
 *   attrs    = attr {',' attr}               attr = name '=' aval
 *   aval     = INT | FLOAT | STR | 'undef'
 *            | '[' item {',' item} ']'       list; kind from the items
 *            | ('ints'|'floats'|'strings'|'tensors'|'graphs') '[' ... ']'
 *            | 'tensor' type data | graph
 *   VAL      = '%' (IDCHARS | STR)           IDCHARS = [A-Za-z0-9_.]+
 *   name     = IDENT | STR                   IDENT = [A-Za-z_][A-Za-z0-9_.]*
 *   STR      = '"' ... '"' with \\ \" \n \t \r \xHH escapes
 *
 * A FLOAT attribute always prints with '.', 'e', "inf" or "nan", so it does
 * not read back as an INT; float lists likewise.  Floats print with %.9g
 * when the double is a float32 value (that round trips float32 exactly) and
 * %.17g otherwise; tensor data prints f32/f16/bf16 with %.9g and f64 with
 * %.17g.  Dead nodes print with '@dead'; their outputs do not count as
 * definitions when parsed.  Names that are not identifiers are quoted.
 * Values captured by a subgraph from an enclosing graph are just referenced
 * by name (they have no definition in the subgraph).
 *
 * The parser is recursive descent over a one-token lookahead lexer; every
 * error is BURN_ERR_PARSE "line N: ...", except limits (BURN_ERR_LIMIT) and
 * a graph that parses but does not verify (BURN_ERR_INVALID).  After
 * parsing, every graph is topologically sorted and the root is verified.
 */
#include "graph.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ==== printing ======================================================== */

static int
isidstart(int ch)
{
	return isalpha(ch) || ch == '_';
}

static int
isidchar(int ch)
{
	return isalnum(ch) || ch == '_' || ch == '.';
}

/* Words that read as numbers, so never bare names. */
static int
numword(const char *s, size_t n)
{
	return (n == 3 && (memcmp(s, "inf", 3) == 0 || memcmp(s, "nan", 3) == 0)) ||
	       (n == 8 && memcmp(s, "infinity", 8) == 0);
}

static void
pstr(FILE *f, const char *s, size_t n)
{
	size_t i;

	fputc('"', f);
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch == '\r')
			fputs("\\r", f);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\x%02x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* A name: bare if it is an identifier (value names may start with a digit
 * since the '%' already marks them), else quoted. */
static void
pname(FILE *f, const char *s, int isval)
{
	const char *p;
	int ok;

	if (!s)
		s = "";
	ok = *s && (isval ? isidchar((unsigned char)*s) : isidstart((unsigned char)*s));
	for (p = s; ok && *p; p++)
		ok = isidchar((unsigned char)*p);
	if (ok && (strcmp(s, "_") == 0 || numword(s, strlen(s))))
		ok = 0;
	if (ok)
		fputs(s, f);
	else
		pstr(f, s, strlen(s));
}

static void
pval(FILE *f, const Graph *g, int v)
{
	if (v < 0)
		fputc('_', f);
	else if (v >= g->nval)
		fprintf(f, "%%\"<bad value %d>\"", v);
	else {
		fputc('%', f);
		pname(f, g->val[v].name, 1);
	}
}

static void
ptype(FILE *f, int dtype, int rank, const int64_t *dim, const char *const *sym)
{
	int i;

	if (dtype == DT_UNDEF && rank < 0) {
		fputc('?', f);
		return;
	}
	fputs(dtype_name(dtype), f);
	if (rank < 0 || rank > BURN_MAX_RANK)
		return;
	fputc('[', f);
	for (i = 0; i < rank; i++) {
		if (i)
			fputc(',', f);
		if (dim[i] >= 0)
			fprintf(f, "%lld", (long long)dim[i]);
		else if (sym && sym[i])
			pname(f, sym[i], 0);
		else if (dim[i] == -1)
			fputc('?', f);
		else
			fprintf(f, "%lld", (long long)dim[i]);
	}
	fputc(']', f);
}

/* Significant digits of a decimal number's mantissa. */
static int
sigdigits(const char *s, size_t n)
{
	size_t i;
	int k = 0, lead = 1;

	for (i = 0; i < n && s[i] != 'e' && s[i] != 'E'; i++) {
		if (!isdigit((unsigned char)s[i]))
			continue;
		if (s[i] == '0' && lead)
			continue;
		lead = 0;
		k++;
	}
	return k;
}

/*
 * A float attribute that reads back as itself and not as an integer.  ONNX
 * float attributes are float32: those print with %.9g (at most 9 significant
 * digits) and parse back through float.  Any other double prints with more
 * than 9 significant digits (%.17g, or %.17e when that would be shorter) and
 * parses back as a double; see num_attrf.
 */
static void
pfloat(FILE *f, double x)
{
	char buf[64];

	if (isnan(x)) {
		fputs("nan", f);
		return;
	}
	if (isinf(x)) {
		fputs(x < 0 ? "-inf" : "inf", f);
		return;
	}
	if ((double)(float)x == x)
		snprintf(buf, sizeof buf, "%.9g", x);
	else {
		snprintf(buf, sizeof buf, "%.17g", x);
		if (sigdigits(buf, strlen(buf)) <= 9)
			snprintf(buf, sizeof buf, "%.17e", x);
	}
	fputs(buf, f);
	if (!strpbrk(buf, ".eni"))
		fputs(".0", f);
}

static double
half2f(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	double s = (h & 0x8000) ? -1 : 1;

	if (e == 0)
		return s * ldexp(m, -24);
	if (e == 31)
		return m ? NAN : s * INFINITY;
	return s * ldexp(m + 1024, e - 25);
}

/* Element i of a tensor payload, printed in its dtype's exact form. */
static void
pelem(FILE *f, int dt, const unsigned char *p)
{
	union { float f; double d; uint32_t u32; uint64_t u64; int64_t i64;
	        int32_t i32; uint16_t u16; int16_t i16; } u;
	double x;

	switch (dt) {
	case DT_F32: memcpy(&u.f, p, 4); x = u.f; goto flt9;
	case DT_F16: memcpy(&u.u16, p, 2); x = half2f(u.u16); goto flt9;
	case DT_BF16:
		memcpy(&u.u16, p, 2);
		u.u32 = (uint32_t)u.u16 << 16;
		x = u.f;
		goto flt9;
	case DT_F64:
		memcpy(&u.d, p, 8);
		x = u.d;
		if (isnan(x) || isinf(x))
			goto special;
		fprintf(f, "%.17g", x);
		return;
	case DT_U8: case DT_BOOL: fprintf(f, "%u", p[0]); return;
	case DT_I8: fprintf(f, "%d", (int8_t)p[0]); return;
	case DT_U16: memcpy(&u.u16, p, 2); fprintf(f, "%u", u.u16); return;
	case DT_I16: memcpy(&u.i16, p, 2); fprintf(f, "%d", u.i16); return;
	case DT_U32: memcpy(&u.u32, p, 4); fprintf(f, "%lu", (unsigned long)u.u32); return;
	case DT_I32: memcpy(&u.i32, p, 4); fprintf(f, "%ld", (long)u.i32); return;
	case DT_U64: memcpy(&u.u64, p, 8); fprintf(f, "%llu", (unsigned long long)u.u64); return;
	case DT_I64: memcpy(&u.i64, p, 8); fprintf(f, "%lld", (long long)u.i64); return;
	case DT_STRING: {   /* a pointer to the string: printed as a literal */
		const char *s;
		memcpy(&s, p, sizeof s);
		pstr(f, s ? s : "", s ? strlen(s) : 0);
		return;
	}
	}
	fputc('0', f);
	return;
flt9:
	if (isnan(x) || isinf(x))
		goto special;
	fprintf(f, "%.9g", x);
	return;
special:
	fputs(isnan(x) ? "nan" : x < 0 ? "-inf" : "inf", f);
}

/* data: "[e0, e1, ...]" or "<elided>". */
static void
pdata(FILE *f, int dt, int rank, const int64_t *dim, const void *data,
      int64_t nbytes, int64_t elide_over)
{
	int64_t n = 1, i;
	int sz = dtype_size(dt), k;

	for (k = 0; k < rank && k < BURN_MAX_RANK; k++)
		if (dim[k] < 0 || burn_mul_ovf(n, dim[k], &n))
			n = -1;
	if (sz == 0 || n < 0 || (elide_over >= 0 && n > elide_over)) {
		fputs("<elided>", f);
		return;
	}
	if (nbytes >= 0 && n > nbytes / sz)
		n = nbytes / sz;
	if (!data)
		n = 0;
	fputc('[', f);
	for (i = 0; i < n; i++) {
		if (i)
			fputs(", ", f);
		pelem(f, dt, (const unsigned char *)data + i * sz);
	}
	fputc(']', f);
}

static void pgraph(FILE *f, const Graph *g, int64_t elide_over, int ind);

static void
ptensor(FILE *f, const Tensor *t, int64_t elide_over)
{
	if (!t) {
		fputs("tensor ? <elided>", f);
		return;
	}
	fputs("tensor ", f);
	ptype(f, t->dtype, t->rank, t->dim, NULL);
	fputc(' ', f);
	pdata(f, t->dtype, t->rank, t->dim, t->data, t->nbytes, elide_over);
}

static void
pattr(FILE *f, const Attr *a, int64_t elide_over, int ind)
{
	int k;

	pname(f, a->name, 0);
	fputc('=', f);
	switch (a->type) {
	case AT_INT:
		fprintf(f, "%lld", (long long)a->i);
		return;
	case AT_FLOAT:
		pfloat(f, a->f);
		return;
	case AT_STRING:
		pstr(f, a->s ? a->s : "", a->s ? (size_t)(a->slen > 0 ? a->slen : 0) : 0);
		return;
	case AT_TENSOR:
		ptensor(f, a->t, elide_over);
		return;
	case AT_GRAPH:
		if (a->g)
			pgraph(f, a->g, elide_over, ind);
		else
			fputs("undef", f);
		return;
	case AT_UNDEF:
		fputs("undef", f);
		return;
	case AT_INTS: case AT_FLOATS: case AT_STRINGS: case AT_TENSORS:
	case AT_GRAPHS:
		break;
	default:
		fprintf(f, "<unsupported attribute type %d>", a->type);
		return;
	}
	if (a->n <= 0) {
		fputs(a->type == AT_INTS ? "ints[]" : a->type == AT_FLOATS ? "floats[]" :
		      a->type == AT_STRINGS ? "strings[]" :
		      a->type == AT_TENSORS ? "tensors[]" : "graphs[]", f);
		return;
	}
	fputc('[', f);
	for (k = 0; k < a->n; k++) {
		if (k)
			fputs(", ", f);
		switch (a->type) {
		case AT_INTS:
			fprintf(f, "%lld", a->ints ? (long long)a->ints[k] : 0LL);
			break;
		case AT_FLOATS:
			pfloat(f, a->floats ? a->floats[k] : 0);
			break;
		case AT_STRINGS: {
			const char *s = a->strs && a->strs[k] ? a->strs[k] : "";
			pstr(f, s, strlen(s));
			break;
		}
		case AT_TENSORS:
			ptensor(f, a->ts ? a->ts[k] : NULL, elide_over);
			break;
		case AT_GRAPHS:
			if (a->gs && a->gs[k])
				pgraph(f, a->gs[k], elide_over, ind);
			else
				fputs("undef", f);
			break;
		}
	}
	fputc(']', f);
}

static void
indent(FILE *f, int ind)
{
	while (ind-- > 0)
		fputs("  ", f);
}

static void
pnode(FILE *f, const Graph *g, const Node *n, int64_t elide_over, int ind)
{
	int k, typed = 0;

	indent(f, ind);
	for (k = 0; k < n->nout; k++) {
		if (k)
			fputs(", ", f);
		pval(f, g, n->out[k]);
	}
	if (n->nout)
		fputs(" = ", f);
	fputs(n->op > OP_NONE_ && n->op < OP_COUNT_ ? op_table[n->op].name : "<no op>", f);
	fputc('(', f);
	for (k = 0; k < n->nin; k++) {
		if (k)
			fputs(", ", f);
		pval(f, g, n->in[k]);
	}
	fputc(')', f);
	if (n->nattr > 0) {
		fputs(" {", f);
		for (k = 0; k < n->nattr; k++) {
			if (k)
				fputs(", ", f);
			pattr(f, &n->attr[k], elide_over, ind + 1);
		}
		fputc('}', f);
	}
	if (n->name && *n->name) {
		fputs(" @name ", f);
		pstr(f, n->name, strlen(n->name));
	}
	if (n->domain && *n->domain) {
		fputs(" @domain ", f);
		pstr(f, n->domain, strlen(n->domain));
	}
	if (n->dead)
		fputs(" @dead", f);
	for (k = 0; k < n->nout; k++) {
		int x = n->out[k];
		if (x >= 0 && x < g->nval &&
		    (g->val[x].dtype != DT_UNDEF || g->val[x].rank >= 0))
			typed = 1;
	}
	if (typed) {
		fputs(" : ", f);
		for (k = 0; k < n->nout; k++) {
			const Value *v;
			int x = n->out[k];
			if (k)
				fputs(", ", f);
			if (x < 0 || x >= g->nval) {
				fputc('_', f);
				continue;
			}
			v = &g->val[x];
			ptype(f, v->dtype, v->rank, v->dim, v->sym);
		}
	}
	fputc('\n', f);
}

static int
isinput(const Graph *g, int v)
{
	int i;

	for (i = 0; i < g->nin; i++)
		if (g->in[i] == v)
			return 1;
	return 0;
}

static void
pgraph(FILE *f, const Graph *g, int64_t elide_over, int ind)
{
	int i;
	unsigned char *inp = calloc((size_t)g->nval + 1, 1);

	fputs("graph ", f);
	pname(f, g->name, 0);
	if (g->opset && (!g->parent || g->parent->opset != g->opset))
		fprintf(f, " opset %d", g->opset);
	fputs(" (", f);
	for (i = 0; i < g->nin; i++) {
		int x = g->in[i];
		if (i)
			fputs(", ", f);
		pval(f, g, x);
		if (x < 0 || x >= g->nval)
			continue;
		if (inp)
			inp[x] = 1;
		fputs(": ", f);
		ptype(f, g->val[x].dtype, g->val[x].rank, g->val[x].dim, g->val[x].sym);
		if (g->val[x].data) {
			fputs(" = ", f);
			pdata(f, g->val[x].dtype, g->val[x].rank, g->val[x].dim,
			      g->val[x].data, -1, elide_over);
		}
	}
	fputs(") -> (", f);
	for (i = 0; i < g->nout; i++) {
		if (i)
			fputs(", ", f);
		pval(f, g, g->out[i]);
	}
	fputs(") {\n", f);
	for (i = 0; i < g->nval; i++) {
		const Value *v = &g->val[i];
		if (!v->data || (inp ? inp[i] : isinput(g, i)))
			continue;
		indent(f, ind + 1);
		pval(f, g, i);
		fputs(" = const ", f);
		ptype(f, v->dtype, v->rank, v->dim, v->sym);
		fputc(' ', f);
		pdata(f, v->dtype, v->rank, v->dim, v->data, -1, elide_over);
		fputc('\n', f);
	}
	for (i = 0; i < g->nnode; i++)
		pnode(f, g, &g->node[i], elide_over, ind + 1);
	indent(f, ind);
	fputc('}', f);
	free(inp);
}

void
ir_print(FILE *f, const Graph *g, int64_t elide_over)
{
	pgraph(f, g, elide_over, 0);
	fputc('\n', f);
}

/* ==== parsing ========================================================= */

enum { T_EOF = 0, T_ID = 256, T_NUM, T_STR, T_VAL, T_ANGLE, T_ARROW };

/* One scope per graph being parsed: name -> value index, open addressing. */
typedef struct Scope {
	Graph *g;
	int *tab;            /* value index + 1, 0 = empty; cap is a power of 2 */
	int cap;
	unsigned char *def;  /* def[v]: v has a definition (input/const/node) */
	int defcap;
} Scope;

typedef struct P {
	Ctx *c;
	const char *p, *end;  /* rest of the input */
	int line;             /* line of p */
	int t;                /* current token */
	const char *tp;       /* its text */
	size_t tn;
	int tline;
	char *buf;            /* decoded T_STR / T_VAL name, NUL-terminated */
	size_t blen, bcap;
	int depth;            /* graph nesting */
	int64_t nnodes;       /* nodes parsed, all graphs */
} P;

static int
perr(P *P_, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
perr(P *ps, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return burn_fail(ps->c, BURN_ERR_PARSE, "line %d: %s", ps->tline, msg);
}

/* Describe the current token for "expected X, got Y". */
static const char *
tokdesc(P *ps, char *buf, size_t n)
{
	switch (ps->t) {
	case T_EOF: return "end of input";
	case T_STR: return "a string";
	case T_VAL: return "a value name";
	case T_ANGLE: return "'<...>'";
	case T_ARROW: return "'->'";
	case T_ID: case T_NUM:
		snprintf(buf, n, "'%.*s'", (int)(ps->tn > 40 ? 40 : ps->tn), ps->tp);
		return buf;
	}
	snprintf(buf, n, "'%c'", ps->t);
	return buf;
}

static int
expected(P *ps, const char *what)
{
	char b[64];

	return perr(ps, "expected %s, got %s", what, tokdesc(ps, b, sizeof b));
}

static int
bufput(P *ps, char ch)
{
	if (ps->blen + 1 >= ps->bcap) {
		size_t cap = ps->bcap ? ps->bcap * 2 : 64;
		char *nb = realloc(ps->buf, cap);
		if (!nb)
			return burn_fail(ps->c, BURN_ERR_NOMEM, "ir_parse: out of memory");
		ps->buf = nb;
		ps->bcap = cap;
	}
	ps->buf[ps->blen++] = ch;
	ps->buf[ps->blen] = 0;
	return BURN_OK;
}

static int
hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* A quoted string at ps->p (on the '"'), decoded into ps->buf. */
static int
lexstr(P *ps)
{
	const char *p = ps->p + 1;

	ps->blen = 0;
	TRY(bufput(ps, 0));
	ps->blen = 0;
	for (;;) {
		int ch;
		if (p >= ps->end)
			return perr(ps, "unterminated string");
		ch = (unsigned char)*p++;
		if (ch == '"')
			break;
		if (ch == '\n')
			ps->line++;
		if (ch == '\\') {
			if (p >= ps->end)
				return perr(ps, "unterminated string");
			ch = (unsigned char)*p++;
			switch (ch) {
			case 'n': ch = '\n'; break;
			case 't': ch = '\t'; break;
			case 'r': ch = '\r'; break;
			case '0': ch = 0; break;
			case '\\': case '"': break;
			case 'x': {
				int h, l;
				if (ps->end - p < 2 || (h = hexval(p[0])) < 0 ||
				    (l = hexval(p[1])) < 0)
					return perr(ps, "bad \\x escape in string");
				ch = h * 16 + l;
				p += 2;
				break;
			}
			default:
				return perr(ps, "unknown escape '\\%c' in string",
				            isprint(ch) ? ch : '?');
			}
		}
		TRY(bufput(ps, (char)ch));
	}
	ps->p = p;
	return BURN_OK;
}

/* Advance to the next token. */
static int
next(P *ps)
{
	const char *p;
	int ch;

	for (;;) {
		while (ps->p < ps->end && isspace((unsigned char)*ps->p)) {
			if (*ps->p == '\n')
				ps->line++;
			ps->p++;
		}
		if (ps->p < ps->end && *ps->p == '#') {
			while (ps->p < ps->end && *ps->p != '\n')
				ps->p++;
			continue;
		}
		break;
	}
	ps->tp = p = ps->p;
	ps->tline = ps->line;
	if (p >= ps->end) {
		ps->t = T_EOF;
		ps->tn = 0;
		return BURN_OK;
	}
	ch = (unsigned char)*p;
	if (ch == '"') {
		TRY(lexstr(ps));
		ps->t = T_STR;
	} else if (ch == '%') {
		p++;
		if (p < ps->end && *p == '"') {
			ps->p = p;
			TRY(lexstr(ps));
		} else {
			const char *s = p;
			while (p < ps->end && isidchar((unsigned char)*p))
				p++;
			if (p == s)
				return perr(ps, "expected a value name after '%%'");
			ps->blen = 0;
			while (s < p)
				TRY(bufput(ps, *s++));
			ps->p = p;
		}
		ps->t = T_VAL;
	} else if (isdigit(ch) || ch == '.' ||
	           ((ch == '-' || ch == '+') && p + 1 < ps->end &&
	            (isdigit((unsigned char)p[1]) || p[1] == '.' ||
	             p[1] == 'i' || p[1] == 'n'))) {
		p++;
		if (!isdigit(ch) && ch != '.' && isalpha((unsigned char)*p))
			while (p < ps->end && isalpha((unsigned char)*p))
				p++;
		else
			while (p < ps->end) {
				int d = (unsigned char)*p;
				if (isalnum(d) || d == '.' ||
				    ((d == '-' || d == '+') &&
				     strchr("eEpP", p[-1])))
					p++;
				else
					break;
			}
		ps->p = p;
		ps->t = T_NUM;
	} else if (isidstart(ch)) {
		while (p < ps->end && isidchar((unsigned char)*p))
			p++;
		ps->p = p;
		ps->t = numword(ps->tp, (size_t)(p - ps->tp)) ? T_NUM : T_ID;
	} else if (ch == '-' && p + 1 < ps->end && p[1] == '>') {
		ps->p = p + 2;
		ps->t = T_ARROW;
	} else if (ch == '<') {
		while (p < ps->end && *p != '>' && *p != '\n')
			p++;
		if (p >= ps->end || *p != '>')
			return perr(ps, "unterminated '<'");
		ps->p = p + 1;
		ps->t = T_ANGLE;
	} else if (strchr("(){}[],:=@?_", ch)) {
		ps->p = p + 1;
		ps->t = ch;
	} else
		return perr(ps, "unexpected character %s%c%s (0x%02x)",
		            isprint(ch) ? "'" : "", isprint(ch) ? ch : ' ',
		            isprint(ch) ? "'" : "", ch);
	ps->tn = (size_t)(ps->p - ps->tp);
	return BURN_OK;
}

static int
isid(P *ps, const char *s)
{
	return ps->t == T_ID && ps->tn == strlen(s) && memcmp(ps->tp, s, ps->tn) == 0;
}

/* '_' lexes as an identifier (it is an identifier character). */
static int
isunder(P *ps)
{
	return ps->t == '_' || isid(ps, "_");
}

static int
expect(P *ps, int t, const char *what)
{
	if (ps->t != t)
		return expected(ps, what);
	return next(ps);
}

/* name = IDENT | STR, copied into arena a. */
static int
pname_(P *ps, Arena *a, const char **out, const char *what)
{
	if (ps->t == T_ID)
		*out = arena_strndup(a, ps->tp, ps->tn);
	else if (ps->t == T_STR)
		*out = arena_strdup(a, ps->buf);
	else
		return expected(ps, what);
	if (!*out)
		return burn_fail(ps->c, BURN_ERR_NOMEM, "ir_parse: out of memory");
	return next(ps);
}

static int
num_i64(P *ps, int64_t *out)
{
	char tmp[64], *e;
	long long v;

	if (ps->t != T_NUM || ps->tn >= sizeof tmp)
		return expected(ps, "an integer");
	memcpy(tmp, ps->tp, ps->tn);
	tmp[ps->tn] = 0;
	errno = 0;
	v = strtoll(tmp, &e, 10);
	if (*e || e == tmp)
		return expected(ps, "an integer");
	if (errno == ERANGE)
		return perr(ps, "integer %s out of range", tmp);
	*out = v;
	return next(ps);
}

static int
num_f64(P *ps, double *out)
{
	char tmp[128], *e;

	if (ps->t != T_NUM || ps->tn >= sizeof tmp)
		return expected(ps, "a number");
	memcpy(tmp, ps->tp, ps->tn);
	tmp[ps->tn] = 0;
	*out = strtod(tmp, &e);
	if (*e || e == tmp)
		return expected(ps, "a number");
	return next(ps);
}

/* A float attribute: at most 9 significant digits means a float32. */
static int
num_attrf(P *ps, double *out)
{
	int short_ = sigdigits(ps->tp, ps->tn) <= 9;

	TRY(num_f64(ps, out));
	if (short_ && !isnan(*out))
		*out = (double)(float)*out;
	return BURN_OK;
}

/* Does the current number token read as a float (vs an integer)? */
static int
numisfloat(P *ps)
{
	size_t i;

	if (ps->tn > 1 && ps->tp[0] == '0' && (ps->tp[1] == 'x' || ps->tp[1] == 'X'))
		return memchr(ps->tp, 'p', ps->tn) || memchr(ps->tp, 'P', ps->tn) ||
		       memchr(ps->tp, '.', ps->tn);
	for (i = 0; i < ps->tn; i++)
		if (strchr(".eEinIN", ps->tp[i]))
			return 1;
	return 0;
}

/* ---- scopes ---- */

static uint32_t
hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static void
scope_free(Scope *s)
{
	free(s->tab);
	free(s->def);
}

static int
scope_insert(Scope *s, int v)
{
	uint32_t h;

	if (2 * (s->g->nval + 1) > s->cap) {
		int i, cap = s->cap ? s->cap * 2 : 64, *nt;
		while (2 * (s->g->nval + 1) > cap)
			cap *= 2;
		if (!(nt = calloc((size_t)cap, sizeof *nt)))
			return -1;
		free(s->tab);
		s->tab = nt;
		s->cap = cap;
		for (i = 0; i < s->g->nval; i++)
			if (i != v)
				scope_insert(s, i);
	}
	h = hash(s->g->val[v].name) & (uint32_t)(s->cap - 1);
	while (s->tab[h])
		h = (h + 1) & (uint32_t)(s->cap - 1);
	s->tab[h] = v + 1;
	return 0;
}

/* Value named name, created if absent; -1 on allocation failure. */
static int
scope_get(P *ps, Scope *s, const char *name)
{
	uint32_t h;
	int v;

	if (s->cap) {
		h = hash(name) & (uint32_t)(s->cap - 1);
		for (; s->tab[h]; h = (h + 1) & (uint32_t)(s->cap - 1))
			if (strcmp(s->g->val[s->tab[h] - 1].name, name) == 0)
				return s->tab[h] - 1;
	}
	if ((v = graph_add_value(s->g, name)) < 0)
		goto nomem;
	if (v >= s->defcap) {
		int cap = s->defcap ? s->defcap * 2 : 64;
		unsigned char *nd;
		while (cap <= v)
			cap *= 2;
		if (!(nd = realloc(s->def, (size_t)cap)))
			goto nomem;
		memset(nd + s->defcap, 0, (size_t)(cap - s->defcap));
		s->def = nd;
		s->defcap = cap;
	}
	if (scope_insert(s, v) < 0)
		goto nomem;
	return v;
nomem:
	burn_fail(ps->c, BURN_ERR_NOMEM, "ir_parse: out of memory");
	return -1;
}

/* arg = VAL | '_'; *out = value index or -1. */
static int
parg(P *ps, Scope *s, int *out)
{
	if (isunder(ps)) {
		*out = -1;
		return next(ps);
	}
	if (ps->t != T_VAL)
		return expected(ps, "a value (%name) or '_'");
	if ((*out = scope_get(ps, s, ps->buf)) < 0)
		return ps->c->code;
	return next(ps);
}

/* ---- types and data ---- */

typedef struct Type {
	int dtype, rank;
	int64_t dim[BURN_MAX_RANK];
	const char *sym[BURN_MAX_RANK];
} Type;

/* type = '?' | dtype ['[' dims ']'] */
static int
ptype_(P *ps, Arena *a, Type *ty)
{
	memset(ty, 0, sizeof *ty);
	ty->rank = -1;
	if (ps->t == '?') {
		TRY(next(ps));
		if (ps->t != '[')
			return BURN_OK;
	} else if (ps->t == T_ID) {
		char tmp[16];
		if (ps->tn >= sizeof tmp)
			return expected(ps, "a type");
		memcpy(tmp, ps->tp, ps->tn);
		tmp[ps->tn] = 0;
		if (!(ty->dtype = dtype_from_name(tmp)))
			return perr(ps, "unknown dtype '%s'", tmp);
		TRY(next(ps));
		if (ps->t != '[')
			return BURN_OK;
	} else
		return expected(ps, "a type");
	TRY(next(ps));    /* '[' */
	ty->rank = 0;
	if (ps->t == ']')
		return next(ps);
	for (;;) {
		int k = ty->rank;
		if (k >= BURN_MAX_RANK)
			return perr(ps, "rank over %d", BURN_MAX_RANK);
		if (ps->t == T_NUM)
			TRY(num_i64(ps, &ty->dim[k]));
		else if (ps->t == '?') {
			ty->dim[k] = -1;
			TRY(next(ps));
		} else if (ps->t == T_ID || ps->t == T_STR) {
			ty->dim[k] = -1;
			TRY(pname_(ps, a, &ty->sym[k], "a dimension"));
		} else
			return expected(ps, "a dimension");
		ty->rank++;
		if (ps->t == ']')
			return next(ps);
		TRY(expect(ps, ',', "',' or ']'"));
	}
}

static void
settype(Value *v, const Type *ty)
{
	int i;

	v->dtype = ty->dtype;
	v->rank = ty->rank;
	for (i = 0; i < BURN_MAX_RANK; i++) {
		v->dim[i] = i < ty->rank ? ty->dim[i] : 0;
		v->sym[i] = i < ty->rank ? ty->sym[i] : NULL;
	}
}

static uint16_t
f2half(float x)
{
	uint32_t u, sign, mant;
	int e;

	memcpy(&u, &x, 4);
	sign = (u >> 16) & 0x8000;
	e = (int)((u >> 23) & 0xff) - 127 + 15;
	mant = u & 0x7fffff;
	if (((u >> 23) & 0xff) == 0xff)
		return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (e <= 0) {
		uint32_t m, r, half;
		int shift;
		if (e < -10)
			return (uint16_t)sign;
		m = mant | 0x800000;
		shift = 14 - e;
		r = m >> shift;
		half = 1u << (shift - 1);
		if ((m & ((half << 1) - 1)) > half ||
		    ((m & ((half << 1) - 1)) == half && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
	{
		uint32_t r = ((uint32_t)e << 10) | (mant >> 13), rem = mant & 0x1fff;
		if (rem > 0x1000 || (rem == 0x1000 && (r & 1)))
			r++;   /* may carry into the exponent: still correct */
		return (uint16_t)(sign | r);
	}
}

static uint16_t
f2bf16(float x)
{
	uint32_t u;

	memcpy(&u, &x, 4);
	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

/* Store the current number token as element i of a dt payload. */
static int
pelem_(P *ps, int dt, unsigned char *p)
{
	union { float f; double d; uint64_t u64; int64_t i64; int32_t i32;
	        uint32_t u32; int16_t i16; uint16_t u16; } u;
	int64_t v = 0;
	double d;

	if (dtype_is_float(dt)) {
		TRY(num_f64(ps, &d));
		switch (dt) {
		case DT_F32: u.f = (float)d; memcpy(p, &u.f, 4); break;
		case DT_F64: memcpy(p, &d, 8); break;
		case DT_F16: u.u16 = f2half((float)d); memcpy(p, &u.u16, 2); break;
		case DT_BF16: u.u16 = f2bf16((float)d); memcpy(p, &u.u16, 2); break;
		}
		return BURN_OK;
	}
	if (dt == DT_U64) {
		char tmp[64], *e;
		if (ps->t != T_NUM || ps->tn >= sizeof tmp)
			return expected(ps, "an integer");
		memcpy(tmp, ps->tp, ps->tn);
		tmp[ps->tn] = 0;
		if (tmp[0] == '-')
			return perr(ps, "negative value for u64");
		errno = 0;
		u.u64 = strtoull(tmp, &e, 10);
		if (*e || e == tmp || errno == ERANGE)
			return expected(ps, "a u64 integer");
		memcpy(p, &u.u64, 8);
		return next(ps);
	}
	TRY(num_i64(ps, &v));
	switch (dt) {
	case DT_U8: case DT_BOOL:
		if (v < 0 || v > 255) goto range;
		p[0] = (unsigned char)v;
		break;
	case DT_I8:
		if (v < -128 || v > 127) goto range;
		p[0] = (unsigned char)(int8_t)v;
		break;
	case DT_U16:
		if (v < 0 || v > 65535) goto range;
		u.u16 = (uint16_t)v; memcpy(p, &u.u16, 2);
		break;
	case DT_I16:
		if (v < -32768 || v > 32767) goto range;
		u.i16 = (int16_t)v; memcpy(p, &u.i16, 2);
		break;
	case DT_U32:
		if (v < 0 || v > 4294967295LL) goto range;
		u.u32 = (uint32_t)v; memcpy(p, &u.u32, 4);
		break;
	case DT_I32:
		if (v < INT32_MIN || v > INT32_MAX) goto range;
		u.i32 = (int32_t)v; memcpy(p, &u.i32, 4);
		break;
	case DT_I64:
		memcpy(p, &v, 8);
		break;
	}
	return BURN_OK;
range:
	return burn_fail(ps->c, BURN_ERR_PARSE, "line %d: %lld out of range for %s",
	                 ps->tline, (long long)v, dtype_name(dt));
}

/* data = '[' NUM {',' NUM} ']' for a tensor of type ty; allocated in a. */
static int
pdata_(P *ps, Arena *a, const Type *ty, void **out, int64_t *nbytes)
{
	int64_t n = 1, nb, i = 0;
	int sz = dtype_size(ty->dtype), k;
	unsigned char *buf;

	if (ps->t == T_ANGLE)
		return perr(ps, "constant data was elided when printed (%.*s); "
		            "print with elide_over < 0 to parse it back",
		            (int)(ps->tn > 40 ? 40 : ps->tn), ps->tp);
	if (sz == 0)
		return perr(ps, "constant of type %s is not supported",
		            dtype_name(ty->dtype));
	if (ty->rank < 0)
		return perr(ps, "constant needs a shape");
	for (k = 0; k < ty->rank; k++) {
		if (ty->dim[k] < 0)
			return perr(ps, "constant needs concrete dims");
		if (burn_mul_ovf(n, ty->dim[k], &n))
			return burn_fail(ps->c, BURN_ERR_LIMIT,
			                 "line %d: constant too large", ps->tline);
	}
	if (burn_mul_ovf(n, sz, &nb) || nb > ps->c->limits.max_tensor_bytes ||
	    (uint64_t)nb >= SIZE_MAX)
		return burn_fail(ps->c, BURN_ERR_LIMIT,
		                 "line %d: constant too large (%lld elements)",
		                 ps->tline, (long long)n);
	/* Do not trust the declared size before seeing the elements: a huge
	 * shape with no data must not allocate.  Bound it by the text left. */
	if (n > (int64_t)(ps->end - ps->p) + 1)
		return perr(ps, "constant declares %lld elements, the text is shorter",
		            (long long)n);
	if (!(buf = arena_alloc(a, (size_t)nb)))
		return burn_fail(ps->c, BURN_ERR_NOMEM, "ir_parse: out of memory");
	TRY(expect(ps, '[', "'[' (constant data)"));
	if (ps->t != ']')
		for (;;) {
			if (i >= n)
				return perr(ps, "more than %lld elements for %s constant",
				            (long long)n, dtype_name(ty->dtype));
			if (dtype_is_string(ty->dtype)) {
				/* a string literal, kept in a */
				char *s;
				if (ps->t != T_STR)
					return expected(ps, "a string");
				if (!(s = arena_strdup(a, ps->buf)))
					return burn_fail(ps->c, BURN_ERR_NOMEM, "ir_parse: out of memory");
				memcpy(buf + i * sz, &s, sizeof s);
				TRY(next(ps));
			} else {
				TRY(pelem_(ps, ty->dtype, buf + i * sz));
			}
			i++;
			if (ps->t == ']')
				break;
			TRY(expect(ps, ',', "',' or ']'"));
		}
	if (i != n)
		return perr(ps, "%lld elements for a constant of %lld", (long long)i,
		            (long long)n);
	*out = buf;
	*nbytes = nb;
	return next(ps);
}

/* 'tensor' type data */
static int
ptensor_(P *ps, Arena *a, Tensor **out)
{
	Type ty;
	Tensor *t;
	int k;

	TRY(next(ps));   /* 'tensor' */
	TRY(ptype_(ps, a, &ty));
	if (!(t = arena_alloc(a, sizeof *t)))
		return burn_fail(ps->c, BURN_ERR_NOMEM, "ir_parse: out of memory");
	TRY(pdata_(ps, a, &ty, &t->data, &t->nbytes));
	t->dtype = ty.dtype;
	t->rank = ty.rank;
	for (k = 0; k < ty.rank; k++)
		t->dim[k] = ty.dim[k];
	*out = t;
	return BURN_OK;
}

/* ---- graphs ---- */

static int pgraph_(P *ps, Graph *parent, Graph **out);

/* Free subgraphs held by an attr that never made it into a node. */
static void
attr_drop(Attr *a)
{
	int k;

	if (a->type == AT_GRAPH)
		graph_destroy(a->g);
	if (a->type == AT_GRAPHS && a->gs)
		for (k = 0; k < a->n; k++)
			graph_destroy(a->gs[k]);
	a->g = NULL;
	a->gs = NULL;
	a->n = 0;
}

/* Items of an attribute list, kept in malloc'd temporaries. */
typedef struct List {
	int n, cap;
	int64_t *ints;
	double *floats;
	const char **strs;
	Tensor **ts;
	Graph **gs;
} List;

static int
list_room(P *ps, List *l)
{
	if (l->n < l->cap)
		return BURN_OK;
	{
		int cap = l->cap ? l->cap * 2 : 8;
		int64_t *ni = realloc(l->ints, sizeof *ni * (size_t)cap);
		double *nf = ni ? realloc(l->floats, sizeof *nf * (size_t)cap) : NULL;
		const char **ns;
		Tensor **nt;
		Graph **ng;
		if (ni)
			l->ints = ni;
		if (nf)
			l->floats = nf;
		ns = nf ? realloc(l->strs, sizeof *ns * (size_t)cap) : NULL;
		if (ns)
			l->strs = ns;
		nt = ns ? realloc(l->ts, sizeof *nt * (size_t)cap) : NULL;
		if (nt)
			l->ts = nt;
		ng = nt ? realloc(l->gs, sizeof *ng * (size_t)cap) : NULL;
		if (!ng)
			return burn_fail(ps->c, BURN_ERR_NOMEM, "ir_parse: out of memory");
		l->gs = ng;
		l->cap = cap;
	}
	return BURN_OK;
}

/*
 * '[' item {',' item} ']' (after an optional kind word, *type = that kind,
 * else AT_UNDEF and the kind is taken from the first item).
 */
static int
plist(P *ps, Arena *a, int type, Attr *at)
{
	List l = {0};
	int rc = BURN_OK, k, isflt = 0, explicit = type != AT_UNDEF;

	if ((rc = expect(ps, '[', "'['")))
		return rc;
	while (ps->t != ']') {
		int it;
		if ((rc = list_room(ps, &l)))
			goto out;
		if (ps->t == T_NUM)
			it = numisfloat(ps) ? AT_FLOATS : AT_INTS;
		else if (ps->t == T_STR)
			it = AT_STRINGS;
		else if (isid(ps, "tensor"))
			it = AT_TENSORS;
		else if (isid(ps, "graph"))
			it = AT_GRAPHS;
		else {
			rc = expected(ps, "a list item");
			goto out;
		}
		if (type == AT_UNDEF)
			type = it == AT_FLOATS ? AT_INTS : it;  /* numbers: see below */
		if (type == AT_INTS || type == AT_FLOATS) {
			if (it != AT_INTS && it != AT_FLOATS) {
				rc = perr(ps, "mixed kinds in a list");
				goto out;
			}
			if (it == AT_FLOATS) {
				if (explicit && type == AT_INTS) {
					rc = perr(ps, "float in an ints list");
					goto out;
				}
				isflt = 1;
				l.ints[l.n] = 0;
				if ((rc = num_attrf(ps, &l.floats[l.n])))
					goto out;
			} else {
				if ((rc = num_i64(ps, &l.ints[l.n])))
					goto out;
				l.floats[l.n] = (double)l.ints[l.n];
			}
		} else if (type != it) {
			rc = perr(ps, "mixed kinds in a list");
			goto out;
		} else if (it == AT_STRINGS) {
			if (!(l.strs[l.n] = arena_strdup(a, ps->buf))) {
				rc = burn_fail(ps->c, BURN_ERR_NOMEM, "ir_parse: out of memory");
				goto out;
			}
			if ((rc = next(ps)))
				goto out;
		} else if (it == AT_TENSORS) {
			if ((rc = ptensor_(ps, a, &l.ts[l.n])))
				goto out;
		} else {
			if ((rc = pgraph_(ps, NULL, &l.gs[l.n])))
				goto out;
		}
		l.n++;
		if (ps->t == ']')
			break;
		if ((rc = expect(ps, ',', "',' or ']'")))
			goto out;
	}
	if (type == AT_INTS && isflt)
		type = AT_FLOATS;   /* an untyped list with a float in it */
	if (type == AT_UNDEF) {
		rc = perr(ps, "empty list needs a kind: ints[], floats[], strings[], "
		          "tensors[] or graphs[]");
		goto out;
	}
	at->type = type;
	at->n = l.n;
#define COPY(field) do { \
		at->field = arena_alloc(a, sizeof *at->field * (size_t)(l.n ? l.n : 1)); \
		if (!at->field) { \
			rc = burn_fail(ps->c, BURN_ERR_NOMEM, "ir_parse: out of memory"); \
			goto out; \
		} \
		if (l.n) memcpy(at->field, l.field, sizeof *at->field * (size_t)l.n); \
	} while (0)
	switch (type) {
	case AT_INTS: COPY(ints); break;
	case AT_FLOATS: COPY(floats); break;
	case AT_STRINGS: COPY(strs); break;
	case AT_TENSORS: COPY(ts); break;
	case AT_GRAPHS: COPY(gs); l.n = 0; break;   /* now owned by at */
	}
#undef COPY
	rc = next(ps);
out:
	if (type == AT_GRAPHS)
		for (k = 0; k < l.n; k++)
			graph_destroy(l.gs[k]);
	if (rc && at->type == AT_GRAPHS)
		attr_drop(at);
	free(l.ints);
	free(l.floats);
	free(l.strs);
	free(l.ts);
	free(l.gs);
	return rc;
}

/* attr value into *at (name set by the caller). */
static int
paval(P *ps, Graph *g, Attr *at)
{
	Arena *a = &g->arena;

	if (ps->t == T_NUM) {
		if (numisfloat(ps)) {
			at->type = AT_FLOAT;
			return num_attrf(ps, &at->f);
		}
		at->type = AT_INT;
		return num_i64(ps, &at->i);
	}
	if (ps->t == T_STR) {
		at->type = AT_STRING;
		at->slen = (int64_t)ps->blen;
		if (!(at->s = arena_strndup(a, ps->buf, ps->blen)))
			return burn_fail(ps->c, BURN_ERR_NOMEM, "ir_parse: out of memory");
		return next(ps);
	}
	if (ps->t == '[')
		return plist(ps, a, AT_UNDEF, at);
	if (isid(ps, "undef")) {
		at->type = AT_UNDEF;
		return next(ps);
	}
	if (isid(ps, "tensor")) {
		at->type = AT_TENSOR;
		return ptensor_(ps, a, &at->t);
	}
	if (isid(ps, "graph")) {
		int rc = pgraph_(ps, g, &at->g);
		if (!rc)
			at->type = AT_GRAPH;
		return rc;
	}
	{
		static const struct { const char *w; int t; } kinds[] = {
			{"ints", AT_INTS}, {"floats", AT_FLOATS},
			{"strings", AT_STRINGS}, {"tensors", AT_TENSORS},
			{"graphs", AT_GRAPHS},
		};
		size_t k;
		for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
			if (isid(ps, kinds[k].w)) {
				TRY(next(ps));
				return plist(ps, a, kinds[k].t, at);
			}
	}
	return expected(ps, "an attribute value");
}

/* Set the parent of the graphs just parsed inside a node of g. */
static void
adopt(Graph *g, Attr *at)
{
	int k;

	if (at->type == AT_GRAPH && at->g) {
		at->g->parent = g;
		if (!at->g->opset)
			at->g->opset = g->opset;
	}
	if (at->type == AT_GRAPHS)
		for (k = 0; k < at->n; k++)
			if (at->gs[k]) {
				at->gs[k]->parent = g;
				if (!at->gs[k]->opset)
					at->gs[k]->opset = g->opset;
			}
}

static int pconst(P *ps, Scope *s, int v);

/* node | const (the current token is the first output, '_' or the op) */
static int
pnode_(P *ps, Scope *s)
{
	Graph *g = s->g;
	int outs[64], ins[64], nout = 0, nin = 0, op, id, k, dead = 0;
	int oldp[64], oldpo[64];
	char opname[64];

	if (ps->t == T_VAL || isunder(ps)) {
		for (;;) {
			if (nout >= 64)
				return perr(ps, "too many outputs");
			TRY(parg(ps, s, &outs[nout]));
			nout++;
			if (ps->t != ',')
				break;
			TRY(next(ps));
		}
		TRY(expect(ps, '=', "'='"));
		if (isid(ps, "const")) {
			if (nout != 1 || outs[0] < 0)
				return perr(ps, "a constant defines exactly one value");
			if (s->def[outs[0]])
				return perr(ps, "value '%s' is defined twice",
				            g->val[outs[0]].name);
			s->def[outs[0]] = 1;
			return pconst(ps, s, outs[0]);
		}
	}
	if (ps->t != T_ID || ps->tn >= sizeof opname)
		return expected(ps, "an op name");
	memcpy(opname, ps->tp, ps->tn);
	opname[ps->tn] = 0;
	if ((op = op_lookup(opname)) == OP_NONE_)
		return perr(ps, "unknown op '%s'", opname);
	TRY(next(ps));
	TRY(expect(ps, '(', "'('"));
	while (ps->t != ')') {
		if (nin >= 64)
			return perr(ps, "too many inputs");
		TRY(parg(ps, s, &ins[nin]));
		nin++;
		if (ps->t == ')')
			break;
		TRY(expect(ps, ',', "',' or ')'"));
	}
	TRY(next(ps));
	if (++ps->nnodes > ps->c->limits.max_nodes)
		return burn_fail(ps->c, BURN_ERR_LIMIT, "line %d: more than %d nodes",
		                 ps->tline, ps->c->limits.max_nodes);
	for (k = 0; k < nout; k++)
		if (outs[k] >= 0) {
			oldp[k] = g->val[outs[k]].producer;
			oldpo[k] = g->val[outs[k]].producer_out;
		}
	if ((id = graph_add_node(g, op, "", nin, ins, nout, outs)) < 0)
		return burn_fail(ps->c, BURN_ERR_NOMEM, "ir_parse: out of memory");
	if (ps->t == '{') {
		TRY(next(ps));
		while (ps->t != '}') {
			Attr tmp, *at;
			int rc;
			memset(&tmp, 0, sizeof tmp);
			TRY(pname_(ps, &g->arena, &tmp.name, "an attribute name"));
			TRY(expect(ps, '=', "'='"));
			TRY(paval(ps, g, &tmp));
			adopt(g, &tmp);
			if (!(at = node_add_attr(g, id, tmp.name, tmp.type))) {
				attr_drop(&tmp);
				return burn_fail(ps->c, BURN_ERR_NOMEM, "ir_parse: out of memory");
			}
			*at = tmp;
			if (ps->t == '}')
				break;
			if ((rc = expect(ps, ',', "',' or '}'")))
				return rc;
		}
		TRY(next(ps));
	}
	while (ps->t == '@') {
		TRY(next(ps));
		if (isid(ps, "name") || isid(ps, "domain")) {
			int isname = isid(ps, "name");
			const char *str;
			TRY(next(ps));
			if (ps->t != T_STR)
				return expected(ps, "a string");
			if (!(str = arena_strdup(&g->arena, ps->buf)))
				return burn_fail(ps->c, BURN_ERR_NOMEM, "ir_parse: out of memory");
			if (isname)
				g->node[id].name = str;
			else
				g->node[id].domain = str;
			TRY(next(ps));
		} else if (isid(ps, "dead")) {
			dead = 1;
			TRY(next(ps));
		} else
			return expected(ps, "'name', 'domain' or 'dead' after '@'");
	}
	g->node[id].dead = dead;
	/* Definitions: a live node defines its outputs once; a dead one
	 * defines nothing and leaves defined values as they were. */
	for (k = 0; k < nout; k++) {
		int x = outs[k];
		if (x < 0)
			continue;
		if (dead) {
			if (s->def[x]) {
				g->val[x].producer = oldp[k];
				g->val[x].producer_out = oldpo[k];
			}
			continue;
		}
		if (s->def[x])
			return perr(ps, "value '%s' is defined twice", g->val[x].name);
		s->def[x] = 1;
	}
	if (ps->t == ':') {
		TRY(next(ps));
		for (k = 0; ; k++) {
			Type ty;
			if (k >= nout)
				return perr(ps, "more types than outputs");
			if (isunder(ps))
				TRY(next(ps));
			else {
				TRY(ptype_(ps, &g->arena, &ty));
				if (outs[k] >= 0 && (!dead || !s->def[outs[k]]))
					settype(&g->val[outs[k]], &ty);
			}
			if (ps->t != ',')
				break;
			TRY(next(ps));
		}
	}
	return BURN_OK;
}

/* param = VAL ':' type ['=' data] */
static int
pparam(P *ps, Scope *s)
{
	Graph *g = s->g;
	Type ty;
	int v;

	if (ps->t != T_VAL)
		return expected(ps, "an input (%name)");
	if ((v = scope_get(ps, s, ps->buf)) < 0)
		return ps->c->code;
	if (s->def[v])
		return perr(ps, "input '%s' is defined twice", g->val[v].name);
	s->def[v] = 1;
	TRY(next(ps));
	TRY(expect(ps, ':', "':'"));
	TRY(ptype_(ps, &g->arena, &ty));
	graph_add_input(g, v);
	settype(&g->val[v], &ty);
	if (ps->t == '=') {
		TRY(next(ps));
		TRY(pdata_(ps, &g->arena, &ty, &g->val[v].data, &(int64_t){0}));
	}
	return BURN_OK;
}

/* const = VAL '=' 'const' type data  (VAL already current) */
static int
pconst(P *ps, Scope *s, int v)
{
	Graph *g = s->g;
	Type ty;
	int64_t nb;

	TRY(next(ps));   /* 'const' */
	TRY(ptype_(ps, &g->arena, &ty));
	TRY(pdata_(ps, &g->arena, &ty, &g->val[v].data, &nb));
	settype(&g->val[v], &ty);
	g->val[v].kind = VK_CONST;
	g->val[v].producer = -1;
	return BURN_OK;
}

/* graph (see the grammar at the top); *out only on success. */
static int
pgraph_(P *ps, Graph *parent, Graph **out)
{
	Scope s = {0};
	Graph *g;
	int rc, k, nouts = 0, capouts = 0;
	char **outs = NULL;
	int64_t opset;

	if (!isid(ps, "graph"))
		return expected(ps, "'graph'");
	if (ps->depth >= ps->c->limits.max_depth)
		return burn_fail(ps->c, BURN_ERR_LIMIT,
		                 "line %d: graphs nested deeper than %d", ps->tline,
		                 ps->c->limits.max_depth);
	if (!(g = graph_create_sub(parent, "")))
		return burn_fail(ps->c, BURN_ERR_NOMEM, "ir_parse: out of memory");
	ps->depth++;
	s.g = g;
	if ((rc = next(ps)) || (rc = pname_(ps, &g->arena, &g->name, "a graph name")))
		goto fail;
	if (isid(ps, "opset")) {
		if ((rc = next(ps)) || (rc = num_i64(ps, &opset)))
			goto fail;
		if (opset < 0 || opset > 100000) {
			rc = perr(ps, "bad opset %lld", (long long)opset);
			goto fail;
		}
		g->opset = (int)opset;
	}
	if ((rc = expect(ps, '(', "'('")))
		goto fail;
	while (ps->t != ')') {
		if ((rc = pparam(ps, &s)))
			goto fail;
		if (ps->t == ')')
			break;
		if ((rc = expect(ps, ',', "',' or ')'")))
			goto fail;
	}
	if ((rc = next(ps)) || (rc = expect(ps, T_ARROW, "'->'")) ||
	    (rc = expect(ps, '(', "'('")))
		goto fail;
	/* Outputs are resolved after the body so that value numbering follows
	 * the order of definitions. */
	while (ps->t != ')') {
		if (ps->t != T_VAL) {
			rc = expected(ps, "an output (%name)");
			goto fail;
		}
		if (nouts == capouts) {
			char **no;
			capouts = capouts ? capouts * 2 : 8;
			if (!(no = realloc(outs, sizeof *outs * (size_t)capouts))) {
				rc = burn_fail(ps->c, BURN_ERR_NOMEM, "ir_parse: out of memory");
				goto fail;
			}
			outs = no;
		}
		if (!(outs[nouts] = arena_strdup(&g->arena, ps->buf))) {
			rc = burn_fail(ps->c, BURN_ERR_NOMEM, "ir_parse: out of memory");
			goto fail;
		}
		nouts++;
		if ((rc = next(ps)))
			goto fail;
		if (ps->t == ')')
			break;
		if ((rc = expect(ps, ',', "',' or ')'")))
			goto fail;
	}
	if ((rc = next(ps)) || (rc = expect(ps, '{', "'{'")))
		goto fail;
	while (ps->t != '}') {
		if (ps->t == T_EOF) {
			rc = expected(ps, "'}'");
			goto fail;
		}
		if ((rc = pnode_(ps, &s)))
			goto fail;
	}
	if ((rc = next(ps)))
		goto fail;
	for (k = 0; k < nouts; k++) {
		int v = scope_get(ps, &s, outs[k]);
		if (v < 0) {
			rc = ps->c->code;
			goto fail;
		}
		graph_add_output(g, v);
	}
	free(outs);
	scope_free(&s);
	ps->depth--;
	*out = g;
	return BURN_OK;
fail:
	free(outs);
	scope_free(&s);
	ps->depth--;
	graph_destroy(g);
	return rc ? rc : BURN_ERR_PARSE;
}

/* Toposort g and every subgraph below it. */
static int
sortall(Ctx *c, Graph *g)
{
	int i, k;

	TRY(graph_toposort(c, g));
	for (i = 0; i < g->nnode; i++)
		for (k = 0; k < g->node[i].nattr; k++) {
			Attr *a = &g->node[i].attr[k];
			int j;
			if (a->type == AT_GRAPH && a->g)
				TRY(sortall(c, a->g));
			if (a->type == AT_GRAPHS)
				for (j = 0; j < a->n; j++)
					if (a->gs[j])
						TRY(sortall(c, a->gs[j]));
		}
	return BURN_OK;
}

int
ir_parse(Ctx *c, const char *text, size_t len, Graph **out)
{
	P ps;
	Graph *g = NULL;
	int rc, before = c->code;

	*out = NULL;
	memset(&ps, 0, sizeof ps);
	ps.c = c;
	ps.p = text ? text : "";
	ps.end = ps.p + (text ? len : 0);
	ps.line = 1;
	if ((rc = next(&ps)) || (rc = pgraph_(&ps, NULL, &g)))
		goto done;
	if (ps.t != T_EOF) {
		rc = expected(&ps, "end of input after the graph");
		goto done;
	}
	if ((rc = sortall(c, g)) || (rc = graph_verify(c, g))) {
		/* A graph that parses but breaks the IR rules is bad input,
		 * not a compiler bug. */
		if (before == BURN_OK && c->code == BURN_ERR_INTERNAL)
			c->code = BURN_ERR_INVALID;
		rc = c->code ? c->code : rc;
		goto done;
	}
	*out = g;
	g = NULL;
done:
	graph_destroy(g);
	free(ps.buf);
	if (rc && c->code == BURN_OK)
		rc = burn_fail(c, rc, "ir_parse failed");
	return rc;
}

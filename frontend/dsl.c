/*
 * dsl.c - lexer and recursive-descent parser of the .burn language (see
 * dsl.h; the whole grammar in EBNF is in docs/DSL.md, each rule above the
 * function that parses it).
 *
 * The text is cut into tokens first (one array in the arena), so the
 * parser can look two tokens ahead (`name =` starts a keyword argument,
 * `Name {` a struct literal).  The first error stops the parse: it is
 * reported at the offending token with what was expected there.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dsl.h"

enum { TK_EOF, TK_IDENT, TK_NUM, TK_STR, TK_PUNCT };

typedef struct Tok {
	int kind;
	DslPos pos;
	const char *p;       /* its text in the source */
	int len;
	double num;          /* TK_NUM */
	int is_int;
	const char *s;       /* TK_STR unescaped; TK_IDENT the name (arena) */
} Tok;

typedef struct P {
	Ctx *c;
	Arena *a;
	const char *name;
	Tok *t;
	int nt, i;
	int depth;
	DslPos *err;
	const DslSrc *srcp;
} P;

/* ---- errors ---------------------------------------------------------- */

static int
fail_at(P *p, DslPos pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
fail_at(P *p, DslPos pos, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (p->err && p->c->code == BURN_OK)
		*p->err = pos;
	return burn_fail(p->c, BURN_ERR_PARSE, "%s:%d:%d: error: %s", p->name, pos.line,
	                 pos.col, msg);
}

/* How a token reads in a message: 'x', a number, end of input. */
static const char *
tok_desc(const Tok *t, char *buf, size_t cap)
{
	switch (t->kind) {
	case TK_EOF:
		return "end of input";
	case TK_STR:
		return "a string";
	case TK_NUM:
		snprintf(buf, cap, "the number %.*s", t->len > 40 ? 40 : t->len, t->p);
		return buf;
	default:
		snprintf(buf, cap, "'%.*s'", t->len > 40 ? 40 : t->len, t->p);
		return buf;
	}
}

/* ---- lexer ----------------------------------------------------------- */

static int
is_ident0(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

static int
is_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}

/* The two-character punctuators, then the one-character ones. */
static const char *const punct2[] = { "==", "!=", "<=", ">=", "::", NULL };
static const char punct1[] = "()[]{},;:.=<>+-*/%!";

/* Cut src into p->t; the last token is TK_EOF. */
static int
lex(P *p, const char *src, size_t n)
{
	size_t i = 0, cap = 64;
	int line = 1;
	size_t bol = 0;     /* offset of the current line's first byte */

	p->t = arena_alloc(p->a, cap * sizeof *p->t);
	p->nt = 0;
	if (!p->t)
		return burn_fail(p->c, BURN_ERR_NOMEM, "out of memory");
	for (;;) {
		Tok *t;
		unsigned char ch;

		/* skip blanks and // comments */
		while (i < n) {
			ch = (unsigned char)src[i];
			if (ch == '\n') {
				line++;
				bol = ++i;
			} else if (ch == ' ' || ch == '\t' || ch == '\r') {
				i++;
			} else if (ch == '/' && i + 1 < n && src[i + 1] == '/') {
				while (i < n && src[i] != '\n')
					i++;
			} else {
				break;
			}
		}
		if ((size_t)p->nt + 1 >= cap) {
			Tok *nt = arena_grow(p->a, p->t, sizeof *p->t, cap, cap * 2);
			if (!nt)
				return burn_fail(p->c, BURN_ERR_NOMEM, "out of memory");
			p->t = nt;
			cap *= 2;
		}
		t = &p->t[p->nt++];
		memset(t, 0, sizeof *t);
		t->pos.line = line;
		t->pos.col = (int)(i - bol) + 1;
		t->p = src + i;
		if (i >= n) {
			/* the end is shown just after the last token, on its line */
			t->kind = TK_EOF;
			if (p->nt > 1) {
				const Tok *l = &p->t[p->nt - 2];
				t->pos = l->pos;
				t->pos.col += l->len;   /* a token is on one line */
			}
			return BURN_OK;
		}
		ch = (unsigned char)src[i];
		if (is_ident0(ch)) {
			size_t s = i;
			while (i < n && (is_ident0((unsigned char)src[i]) || is_digit((unsigned char)src[i])))
				i++;
			if (i - s > 256)
				return fail_at(p, t->pos, "name longer than 256 characters");
			t->kind = TK_IDENT;
			t->len = (int)(i - s);
			t->s = arena_strndup(p->a, src + s, i - s);
		} else if (is_digit(ch)) {
			char buf[400];
			size_t s = i;
			t->is_int = 1;
			while (i < n && is_digit((unsigned char)src[i]))
				i++;
			/* a '.' belongs to the number only before a digit: 2.erf() is
			 * a method call on 2 */
			if (i + 1 < n && src[i] == '.' && is_digit((unsigned char)src[i + 1])) {
				t->is_int = 0;
				i++;
				while (i < n && is_digit((unsigned char)src[i]))
					i++;
			}
			if (i < n && (src[i] == 'e' || src[i] == 'E')) {
				size_t e = i + 1;
				if (e < n && (src[e] == '+' || src[e] == '-'))
					e++;
				if (e < n && is_digit((unsigned char)src[e])) {
					t->is_int = 0;
					i = e;
					while (i < n && is_digit((unsigned char)src[i]))
						i++;
				}
			}
			if (i < n && (is_ident0((unsigned char)src[i])))
				return fail_at(p, t->pos, "a number must not run into a name "
				               "(write '2 * x', not '2x')");
			if (i - s >= sizeof buf)
				return fail_at(p, t->pos, "number longer than %d characters",
				               (int)sizeof buf - 1);
			memcpy(buf, src + s, i - s);
			buf[i - s] = 0;
			t->kind = TK_NUM;
			t->len = (int)(i - s);
			t->num = strtod(buf, NULL);
			/* integers exactly representable stay integers */
			if (t->is_int && !(t->num <= 9007199254740992.0))
				t->is_int = 0;
		} else if (ch == '"') {
			char *out = arena_alloc(p->a, n - i + 1);
			size_t k = 0;
			if (!out)
				return burn_fail(p->c, BURN_ERR_NOMEM, "out of memory");
			i++;
			for (;;) {
				if (i >= n || src[i] == '\n')
					return fail_at(p, t->pos, "string not closed: expected '\"' "
					               "before the end of the line");
				if (src[i] == '"')
					break;
				if (src[i] == '\\') {
					DslPos ep = { line, (int)(i - bol) + 1 };
					char e = i + 1 < n ? src[i + 1] : 0;
					switch (e) {
					case 'n': out[k++] = '\n'; break;
					case 't': out[k++] = '\t'; break;
					case '\\': out[k++] = '\\'; break;
					case '"': out[k++] = '"'; break;
					default:
						return fail_at(p, ep, "unknown escape in a string: "
						               "expected \\n, \\t, \\\\ or \\\"");
					}
					i += 2;
					continue;
				}
				if (src[i] == 0)
					return fail_at(p, (DslPos){ line, (int)(i - bol) + 1 },
					               "NUL byte in a string");
				out[k++] = src[i++];
			}
			i++;
			out[k] = 0;
			t->kind = TK_STR;
			t->s = out;
			t->len = (int)(src + i - t->p);
		} else {
			int k;
			t->kind = TK_PUNCT;
			for (k = 0; punct2[k]; k++)
				if (i + 1 < n && src[i] == punct2[k][0] && src[i + 1] == punct2[k][1])
					break;
			if (punct2[k]) {
				t->len = 2;
			} else if (ch && strchr(punct1, ch)) {
				t->len = 1;
			} else if (ch >= 0x20 && ch < 0x7f) {
				return fail_at(p, t->pos, "unexpected character '%c'", ch);
			} else {
				return fail_at(p, t->pos, "unexpected byte 0x%02x (the language is "
				               "ASCII outside strings and comments)", ch);
			}
			i += (size_t)t->len;
		}
	}
}

/* ---- token helpers --------------------------------------------------- */

static Tok *
peek(P *p, int k)
{
	int j = p->i + k;
	return &p->t[j < p->nt ? j : p->nt - 1];
}

static int
is_punct(const Tok *t, const char *s)
{
	return t->kind == TK_PUNCT && t->len == (int)strlen(s) && !memcmp(t->p, s, t->len);
}

static int
is_kw(const Tok *t, const char *s)
{
	return t->kind == TK_IDENT && !strcmp(t->s, s);
}

static int
accept(P *p, const char *s)
{
	if (is_punct(peek(p, 0), s)) {
		p->i++;
		return 1;
	}
	return 0;
}

static int
expect(P *p, const char *s, const char *where)
{
	char buf[64];
	Tok *t = peek(p, 0);

	if (accept(p, s))
		return BURN_OK;
	return fail_at(p, t->pos, "expected '%s'%s%s, found %s", s, where ? " " : "",
	               where ? where : "", tok_desc(t, buf, sizeof buf));
}

static const char *const keywords[] = { "let", "fn", "module", "import", "as",
                                        "true", "false", NULL };

static int
is_keyword(const char *s)
{
	for (int k = 0; keywords[k]; k++)
		if (!strcmp(s, keywords[k]))
			return 1;
	return 0;
}

/* An identifier that is not a keyword; what says what it names. */
static int
expect_ident(P *p, const char *what, const char **out, DslPos *pos)
{
	char buf[64];
	Tok *t = peek(p, 0);

	if (t->kind != TK_IDENT || is_keyword(t->s))
		return fail_at(p, t->pos, "expected %s, found %s", what,
		               tok_desc(t, buf, sizeof buf));
	*out = t->s;
	if (pos)
		*pos = t->pos;
	p->i++;
	return BURN_OK;
}

static DslNode *
node(P *p, int kind, DslPos pos)
{
	DslNode *n = arena_alloc(p->a, sizeof *n);

	if (n) {
		n->kind = kind;
		n->pos = pos;
		n->depth = 1;
	}
	return n;
}

#define NEW(var, kind, pos) do { \
		if (!((var) = node(p, (kind), (pos)))) \
			return burn_fail(p->c, BURN_ERR_NOMEM, "out of memory"); \
	} while (0)

/* n is a parent of child: its depth is one more than child's at least. */
static int
deepen(P *p, DslNode *n, const DslNode *child)
{
	if (child && child->depth + 1 > n->depth)
		n->depth = child->depth + 1;
	if (n->depth > DSL_MAX_DEPTH)
		return fail_at(p, n->pos, "expression nested deeper than %d levels",
		               DSL_MAX_DEPTH);
	return BURN_OK;
}

/* A growing vector of pointers in the arena. */
typedef struct Vec {
	void **v;
	int n, cap;
} Vec;

static int
vpush(P *p, Vec *v, void *x)
{
	if (v->n == v->cap) {
		int nc = v->cap ? v->cap * 2 : 4;
		void **nv = arena_grow(p->a, v->v, sizeof *v->v, (size_t)v->cap, (size_t)nc);
		if (!nv)
			return burn_fail(p->c, BURN_ERR_NOMEM, "out of memory");
		v->v = nv;
		v->cap = nc;
	}
	v->v[v->n++] = x;
	return BURN_OK;
}

/* ---- expressions ----------------------------------------------------- */

static int parse_expr(P *p, DslNode **out);
static int parse_block(P *p, DslNode **out);

/*
 * args = "(" [ arg { "," arg } [ "," ] ] ")"
 * arg  = [ IDENT "=" ] expr
 * Fills n->kid, n->key, n->key_pos, n->nkid.  Positional arguments after a
 * keyword argument are refused (as in Python).
 */
static int
parse_args(P *p, DslNode *n)
{
	Vec kid = { 0 }, key = { 0 }, kpos = { 0 };
	int seen_kw = 0;

	TRY(expect(p, "(", NULL));
	while (!is_punct(peek(p, 0), ")")) {
		const char *k = NULL;
		DslPos *kp;
		DslNode *e;
		Tok *t = peek(p, 0);

		if (!(kp = arena_alloc(p->a, sizeof *kp)))
			return burn_fail(p->c, BURN_ERR_NOMEM, "out of memory");
		*kp = t->pos;
		if (t->kind == TK_IDENT && !is_keyword(t->s) && is_punct(peek(p, 1), "=")) {
			k = t->s;
			p->i += 2;
			for (int j = 0; j < key.n; j++)
				if (key.v[j] && !strcmp(key.v[j], k))
					return fail_at(p, t->pos, "argument '%s' given twice", k);
			seen_kw = 1;
		} else if (seen_kw) {
			return fail_at(p, t->pos, "expected a keyword argument (name=value): "
			               "positional arguments come before keyword ones");
		}
		TRY(parse_expr(p, &e));
		TRY(deepen(p, n, e));
		TRY(vpush(p, &kid, e));
		TRY(vpush(p, &key, (void *)k));
		TRY(vpush(p, &kpos, kp));
		if (!accept(p, ",")) {
			char buf[64];
			t = peek(p, 0);
			if (!is_punct(t, ")"))
				return fail_at(p, t->pos, "expected ',' or ')' in the argument "
				               "list, found %s", tok_desc(t, buf, sizeof buf));
		}
	}
	p->i++;
	n->kid = (DslNode **)kid.v;
	n->key = (const char **)key.v;
	n->nkid = kid.n;
	if (kid.n) {
		n->key_pos = arena_alloc(p->a, (size_t)kid.n * sizeof *n->key_pos);
		if (!n->key_pos)
			return burn_fail(p->c, BURN_ERR_NOMEM, "out of memory");
		for (int j = 0; j < kid.n; j++)
			n->key_pos[j] = *(DslPos *)kpos.v[j];
	}
	return BURN_OK;
}

/*
 * struct = IDENT "{" [ IDENT ":" expr { "," IDENT ":" expr } [ "," ] ] "}"
 */
static int
parse_struct(P *p, DslNode *n)
{
	Vec kid = { 0 }, key = { 0 }, kpos = { 0 };

	TRY(expect(p, "{", NULL));
	while (!accept(p, "}")) {
		const char *k;
		DslPos *kp = arena_alloc(p->a, sizeof *kp);
		DslNode *e;
		if (!kp)
			return burn_fail(p->c, BURN_ERR_NOMEM, "out of memory");
		TRY(expect_ident(p, "a field name", &k, kp));
		for (int j = 0; j < key.n; j++)
			if (!strcmp(key.v[j], k))
				return fail_at(p, *kp, "field '%s' given twice", k);
		TRY(expect(p, ":", "after the field name"));
		TRY(parse_expr(p, &e));
		TRY(deepen(p, n, e));
		TRY(vpush(p, &kid, e));
		TRY(vpush(p, &key, (void *)k));
		TRY(vpush(p, &kpos, kp));
		if (!accept(p, ",")) {
			TRY(expect(p, "}", "or ',' after the field's value"));
			break;
		}
	}
	n->kid = (DslNode **)kid.v;
	n->key = (const char **)key.v;
	n->nkid = kid.n;
	if (kid.n) {
		n->key_pos = arena_alloc(p->a, (size_t)kid.n * sizeof *n->key_pos);
		if (!n->key_pos)
			return burn_fail(p->c, BURN_ERR_NOMEM, "out of memory");
		for (int j = 0; j < kid.n; j++)
			n->key_pos[j] = *(DslPos *)kpos.v[j];
	}
	return BURN_OK;
}

/*
 * primary = NUMBER | STRING | "true" | "false"
 *         | IDENT [ "::" IDENT ] | struct
 *         | "(" expr ")"
 *         | "[" [ expr { "," expr } [ "," ] ] "]"
 */
static int
parse_primary(P *p, DslNode **out)
{
	char buf[64];
	Tok *t = peek(p, 0);
	DslNode *n;

	if (t->kind == TK_NUM) {
		NEW(n, DN_NUM, t->pos);
		n->num = t->num;
		n->is_int = t->is_int;
		p->i++;
	} else if (t->kind == TK_STR) {
		NEW(n, DN_STR, t->pos);
		n->name = t->s;
		p->i++;
	} else if (is_kw(t, "true") || is_kw(t, "false")) {
		NEW(n, DN_NUM, t->pos);
		n->num = is_kw(t, "true");
		n->is_int = 1;
		p->i++;
	} else if (t->kind == TK_IDENT && !is_keyword(t->s)) {
		p->i++;
		if (is_punct(peek(p, 0), "::")) {
			NEW(n, DN_PATH, t->pos);
			n->name2 = t->s;
			p->i++;
			TRY(expect_ident(p, "a function name after '::'", &n->name, NULL));
		} else if (is_punct(peek(p, 0), "{") &&
		           (is_punct(peek(p, 1), "}") ||
		            (peek(p, 1)->kind == TK_IDENT && is_punct(peek(p, 2), ":")))) {
			NEW(n, DN_STRUCT, t->pos);
			n->name = t->s;
			TRY(parse_struct(p, n));
		} else {
			NEW(n, DN_NAME, t->pos);
			n->name = t->s;
		}
	} else if (is_punct(t, "(")) {
		p->i++;
		TRY(parse_expr(p, &n));
		TRY(expect(p, ")", "to close the '('"));
	} else if (is_punct(t, "[")) {
		Vec kid = { 0 };
		NEW(n, DN_LIST, t->pos);
		p->i++;
		while (!accept(p, "]")) {
			DslNode *e;
			TRY(parse_expr(p, &e));
			TRY(deepen(p, n, e));
			TRY(vpush(p, &kid, e));
			if (!accept(p, ",")) {
				Tok *u = peek(p, 0);
				if (!is_punct(u, "]"))
					return fail_at(p, u->pos, "expected ',' or ']' in the list, "
					               "found %s", tok_desc(u, buf, sizeof buf));
			}
		}
		n->kid = (DslNode **)kid.v;
		n->nkid = kid.n;
	} else {
		return fail_at(p, t->pos, "expected an expression, found %s",
		               tok_desc(t, buf, sizeof buf));
	}
	*out = n;
	return BURN_OK;
}

/*
 * postfix = primary { "." IDENT [ args ] | args | "[" expr "]" }
 */
static int
parse_postfix(P *p, DslNode **out)
{
	DslNode *n = NULL, *m;

	TRY(parse_primary(p, &n));
	for (;;) {
		Tok *t = peek(p, 0);
		if (is_punct(t, ".")) {
			const char *name;
			DslPos np;
			p->i++;
			TRY(expect_ident(p, "a field or method name after '.'", &name, &np));
			if (is_punct(peek(p, 0), "(")) {
				NEW(m, DN_METHOD, np);
				m->name = name;
				m->a = n;
				TRY(deepen(p, m, n));
				TRY(parse_args(p, m));
			} else {
				NEW(m, DN_FIELD, np);
				m->name = name;
				m->a = n;
				TRY(deepen(p, m, n));
			}
		} else if (is_punct(t, "(")) {
			NEW(m, DN_CALL, n->pos);
			m->a = n;
			TRY(deepen(p, m, n));
			TRY(parse_args(p, m));
		} else if (is_punct(t, "[")) {
			NEW(m, DN_INDEX, t->pos);
			m->a = n;
			p->i++;
			TRY(deepen(p, m, n));
			TRY(parse_expr(p, &m->b));
			TRY(deepen(p, m, m->b));
			TRY(expect(p, "]", "to close the index"));
		} else {
			break;
		}
		n = m;
	}
	*out = n;
	return BURN_OK;
}

/*
 * unary = ( "-" | "!" ) unary | postfix
 */
static int
parse_unary(P *p, DslNode **out)
{
	Tok *t = peek(p, 0);
	DslNode *n;
	int rc;

	if (++p->depth > DSL_MAX_NEST)
		return fail_at(p, t->pos, "brackets and operators nested deeper than %d "
		               "levels", DSL_MAX_NEST / 2);
	if (is_punct(t, "-") || is_punct(t, "!")) {
		p->i++;
		NEW(n, DN_UNARY, t->pos);
		n->op = t->p[0];
		rc = parse_unary(p, &n->a);
		if (!rc)
			rc = deepen(p, n, n->a);
		*out = n;
	} else {
		rc = parse_postfix(p, out);
	}
	p->depth--;
	return rc;
}

/* One level of left-associative binary operators: ops[k] is the token of
 * code[k]; next parses the operands. */
static int
parse_binary(P *p, DslNode **out, const char *const *ops, const int *code,
             int (*next)(P *, DslNode **))
{
	DslNode *n;

	TRY(next(p, &n));
	for (;;) {
		Tok *t = peek(p, 0);
		int k;
		DslNode *m;
		for (k = 0; ops[k]; k++)
			if (is_punct(t, ops[k]))
				break;
		if (!ops[k])
			break;
		p->i++;
		NEW(m, DN_BINARY, t->pos);
		m->op = code[k];
		m->a = n;
		TRY(next(p, &m->b));
		TRY(deepen(p, m, m->a));
		TRY(deepen(p, m, m->b));
		n = m;
	}
	*out = n;
	return BURN_OK;
}

/* mul = unary { ( "*" | "/" | "%" ) unary } */
static int
parse_mul(P *p, DslNode **out)
{
	static const char *const ops[] = { "*", "/", "%", NULL };
	static const int code[] = { DB_MUL, DB_DIV, DB_MOD };
	return parse_binary(p, out, ops, code, parse_unary);
}

/* add = mul { ( "+" | "-" ) mul } */
static int
parse_add(P *p, DslNode **out)
{
	static const char *const ops[] = { "+", "-", NULL };
	static const int code[] = { DB_ADD, DB_SUB };
	return parse_binary(p, out, ops, code, parse_mul);
}

/* expr = add { ( "==" | "!=" | "<" | "<=" | ">" | ">=" ) add } */
static int
parse_expr(P *p, DslNode **out)
{
	static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=", NULL };
	static const int code[] = { DB_EQ, DB_NE, DB_LT, DB_LE, DB_GT, DB_GE };
	int rc;

	if (++p->depth > DSL_MAX_NEST)
		return fail_at(p, peek(p, 0)->pos, "brackets and operators nested deeper "
		               "than %d levels", DSL_MAX_NEST / 2);
	rc = parse_binary(p, out, ops, code, parse_add);
	p->depth--;
	return rc;
}

/* ---- statements and items ------------------------------------------- */

/*
 * let = "let" IDENT "=" expr ";"
 */
static int
parse_let(P *p, DslNode **out)
{
	DslNode *n;

	NEW(n, DN_LET, peek(p, 0)->pos);
	p->i++;
	TRY(expect_ident(p, "a name after 'let'", &n->name, NULL));
	TRY(expect(p, "=", "after the name in 'let'"));
	TRY(parse_expr(p, &n->a));
	TRY(expect(p, ";", "after the value of 'let'"));
	*out = n;
	return BURN_OK;
}

/*
 * A statement inside a block or at the top level; *tail is set when it is
 * an expression followed by `end` (a '}' or the end of input) instead of
 * ';'.
 *   stmt = let | expr ";"
 */
static int
parse_stmt(P *p, DslNode **out, const char *end, int *tail)
{
	char buf[64];
	DslNode *n, *e;
	Tok *t;

	*tail = 0;
	if (is_kw(peek(p, 0), "let"))
		return parse_let(p, out);
	t = peek(p, 0);
	TRY(parse_expr(p, &e));
	NEW(n, DN_EXPR, t->pos);
	n->a = e;
	*out = n;
	if (accept(p, ";"))
		return BURN_OK;
	t = peek(p, 0);
	if (end ? is_punct(t, end) : t->kind == TK_EOF) {
		*tail = 1;
		return BURN_OK;
	}
	if (end && t->kind == TK_EOF)
		return fail_at(p, t->pos, "expected ';' or '}': the block is not closed "
		               "at the end of input");
	return fail_at(p, t->pos, "expected ';' after the expression%s, found %s",
	               end ? " (or '}' to end the block with its value)" : "",
	               tok_desc(t, buf, sizeof buf));
}

/*
 * block = "{" { stmt } [ expr ] "}"
 * The value of a block is its tail expression (a block without one is an
 * error at run time when its value is used).
 */
static int
parse_block(P *p, DslNode **out)
{
	Vec kid = { 0 };
	DslNode *n;

	NEW(n, DN_BLOCK, peek(p, 0)->pos);
	TRY(expect(p, "{", "to start the body"));
	for (;;) {
		DslNode *s;
		int tail;
		Tok *t = peek(p, 0);
		if (accept(p, "}"))
			break;
		if (accept(p, ";"))
			continue;
		if (t->kind == TK_EOF)
			return fail_at(p, t->pos, "expected '}' to close the block opened "
			               "at line %d", n->pos.line);
		if (is_kw(t, "fn") || is_kw(t, "module") || is_kw(t, "import"))
			return fail_at(p, t->pos, "'%s' is allowed only at the top level",
			               t->s);
		TRY(parse_stmt(p, &s, "}", &tail));
		if (tail) {
			n->a = s->a;
			TRY(expect(p, "}", "after the block's value"));
			break;
		}
		TRY(vpush(p, &kid, s));
	}
	n->kid = (DslNode **)kid.v;
	n->nkid = kid.n;
	*out = n;
	return BURN_OK;
}

/*
 * type  = IDENT [ "[" [ INT { "," INT } ] "]" ]        (f32[1, 784])
 */
static int
parse_type(P *p, DslParam *q)
{
	TRY(expect_ident(p, "a type (f32, i64, ...) after ':'", &q->dtype, NULL));
	if (!accept(p, "["))
		return BURN_OK;
	q->rank = 0;
	while (!accept(p, "]")) {
		char buf[64];
		Tok *t = peek(p, 0);
		if (t->kind != TK_NUM || !t->is_int || t->num > 4e18)
			return fail_at(p, t->pos, "expected a dimension (a whole number), "
			               "found %s", tok_desc(t, buf, sizeof buf));
		if (q->rank == 8)
			return fail_at(p, t->pos, "more than 8 dimensions");
		q->dim[q->rank++] = (int64_t)t->num;
		p->i++;
		if (!accept(p, ",")) {
			TRY(expect(p, "]", "or ',' in the shape"));
			break;
		}
	}
	return BURN_OK;
}

/*
 * fn    = "fn" IDENT "(" [ param { "," param } [ "," ] ] ")" block
 * param = IDENT [ ":" type ]
 */
static int
parse_fn(P *p, DslNode **out)
{
	DslNode *n;
	int cap = 0;

	NEW(n, DN_FN, peek(p, 0)->pos);
	n->src = p->srcp;
	p->i++;
	TRY(expect_ident(p, "a function name after 'fn'", &n->name, NULL));
	TRY(expect(p, "(", "after the function's name"));
	while (!accept(p, ")")) {
		DslParam *q;
		if (n->nparam == cap) {
			int nc = cap ? 2 * cap : 4;
			DslParam *np = arena_grow(p->a, n->param, sizeof *np, (size_t)cap, (size_t)nc);
			if (!np)
				return burn_fail(p->c, BURN_ERR_NOMEM, "out of memory");
			n->param = np;
			cap = nc;
		}
		q = &n->param[n->nparam];
		q->rank = -1;
		TRY(expect_ident(p, "a parameter name", &q->name, &q->pos));
		for (int j = 0; j < n->nparam; j++)
			if (!strcmp(n->param[j].name, q->name))
				return fail_at(p, q->pos, "parameter '%s' given twice", q->name);
		n->nparam++;
		if (accept(p, ":"))
			TRY(parse_type(p, q));
		if (!accept(p, ",")) {
			TRY(expect(p, ")", "or ',' in the parameter list"));
			break;
		}
	}
	TRY(parse_block(p, &n->body));
	*out = n;
	return BURN_OK;
}

/*
 * module = "module" IDENT "{" { IDENT ":" IDENT [ "," ] } { fn } "}"
 */
static int
parse_module(P *p, DslNode **out)
{
	Vec key = { 0 }, ftype = { 0 }, meth = { 0 }, kpos = { 0 };
	DslNode *n;

	NEW(n, DN_MODULE, peek(p, 0)->pos);
	p->i++;
	TRY(expect_ident(p, "a module name after 'module'", &n->name, NULL));
	TRY(expect(p, "{", "after the module's name"));
	while (!is_punct(peek(p, 0), "}") && !is_kw(peek(p, 0), "fn")) {
		const char *f, *ty;
		DslPos *kp = arena_alloc(p->a, sizeof *kp);
		if (!kp)
			return burn_fail(p->c, BURN_ERR_NOMEM, "out of memory");
		TRY(expect_ident(p, "a field name, 'fn' or '}'", &f, kp));
		for (int j = 0; j < key.n; j++)
			if (!strcmp(key.v[j], f))
				return fail_at(p, *kp, "field '%s' declared twice", f);
		TRY(expect(p, ":", "after the field's name"));
		TRY(expect_ident(p, "the field's type (Linear, Tensor, a module ...)", &ty, NULL));
		TRY(vpush(p, &key, (void *)f));
		TRY(vpush(p, &ftype, (void *)ty));
		TRY(vpush(p, &kpos, kp));
		accept(p, ",");
	}
	while (!accept(p, "}")) {
		char buf[64];
		DslNode *f;
		Tok *t = peek(p, 0);
		if (!is_kw(t, "fn"))
			return fail_at(p, t->pos, "expected 'fn' or '}' in the module, found %s",
			               tok_desc(t, buf, sizeof buf));
		TRY(parse_fn(p, &f));
		for (int j = 0; j < meth.n; j++)
			if (!strcmp(((DslNode *)meth.v[j])->name, f->name))
				return fail_at(p, f->pos, "method '%s' defined twice", f->name);
		TRY(vpush(p, &meth, f));
	}
	n->key = (const char **)key.v;
	n->ftype = (const char **)ftype.v;
	n->nkid = key.n;
	n->method = (DslNode **)meth.v;
	n->nmethod = meth.n;
	if (key.n) {
		n->key_pos = arena_alloc(p->a, (size_t)key.n * sizeof *n->key_pos);
		if (!n->key_pos)
			return burn_fail(p->c, BURN_ERR_NOMEM, "out of memory");
		for (int j = 0; j < key.n; j++)
			n->key_pos[j] = *(DslPos *)kpos.v[j];
	}
	*out = n;
	return BURN_OK;
}

/*
 * import = "import" STRING "as" IDENT [ ";" ]
 */
static int
parse_import(P *p, DslNode **out)
{
	char buf[64];
	DslNode *n;
	Tok *t;

	NEW(n, DN_IMPORT, peek(p, 0)->pos);
	p->i++;
	t = peek(p, 0);
	if (t->kind != TK_STR)
		return fail_at(p, t->pos, "expected the model's file name as a string "
		               "after 'import', found %s", tok_desc(t, buf, sizeof buf));
	n->name2 = t->s;
	p->i++;
	if (!is_kw(peek(p, 0), "as"))
		return fail_at(p, peek(p, 0)->pos, "expected 'as' after the file name, "
		               "found %s", tok_desc(peek(p, 0), buf, sizeof buf));
	p->i++;
	TRY(expect_ident(p, "a name after 'as'", &n->name, NULL));
	accept(p, ";");
	*out = n;
	return BURN_OK;
}

/*
 * program = { item } [ expr ]
 * item    = fn | module | import | stmt
 */
int
dsl_parse(Ctx *c, Arena *a, const char *name, const char *src, size_t n,
          DslProgram **out, DslPos *err)
{
	P p = { c, a, name ? name : "<input>", NULL, 0, 0, 0, err, NULL };
	DslProgram *prog;
	DslSrc *sp;
	Vec item = { 0 };

	*out = NULL;
	if (err)
		err->line = err->col = 0;
	if (n > (size_t)1 << 30)
		return burn_fail(c, BURN_ERR_LIMIT, "%s: source larger than 1 GiB", p.name);
	if (!(sp = arena_alloc(a, sizeof *sp)))
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	sp->name = p.name;
	sp->text = src;
	sp->n = n;
	p.srcp = sp;
	TRY(lex(&p, src, n));
	if (!(prog = arena_alloc(a, sizeof *prog)))
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	prog->name = p.name;
	prog->src = sp;
	for (;;) {
		DslNode *it = NULL;
		int tail = 0;
		Tok *t = peek(&p, 0);
		if (t->kind == TK_EOF)
			break;
		if (accept(&p, ";"))
			continue;
		if (is_kw(t, "fn"))
			TRY(parse_fn(&p, &it));
		else if (is_kw(t, "module"))
			TRY(parse_module(&p, &it));
		else if (is_kw(t, "import"))
			TRY(parse_import(&p, &it));
		else
			TRY(parse_stmt(&p, &it, NULL, &tail));
		TRY(vpush(&p, &item, it));
		if (tail) {
			prog->tail = 1;
			break;
		}
	}
	prog->item = (DslNode **)item.v;
	prog->nitem = item.n;
	*out = prog;
	return BURN_OK;
}

int
dsl_incomplete(const char *src, size_t n)
{
	int depth = 0;

	for (size_t i = 0; i < n; i++) {
		char ch = src[i];
		if (ch == '/' && i + 1 < n && src[i + 1] == '/') {
			while (i < n && src[i] != '\n')
				i++;
		} else if (ch == '"') {
			for (i++; i < n && src[i] != '"' && src[i] != '\n'; i++)
				if (src[i] == '\\')
					i++;
			if (i >= n)
				return 1;
		} else if (ch == '(' || ch == '[' || ch == '{') {
			depth++;
		} else if (ch == ')' || ch == ']' || ch == '}') {
			depth--;
		}
	}
	return depth > 0;
}

char *
dsl_caret(const char *src, size_t n, DslPos pos, char *buf, size_t cap)
{
	size_t i = 0, end, from, k = 0;
	int line = 1;
	size_t col = pos.col > 0 ? (size_t)pos.col - 1 : 0;

	if (!cap)
		return buf;
	buf[0] = 0;
	while (i < n && line < pos.line) {
		if (src[i++] == '\n')
			line++;
	}
	if (line != pos.line)
		return buf;
	for (end = i; end < n && src[end] != '\n'; end++)
		;
	/* show at most 100 bytes, the column among them */
	from = col > 70 ? i + col - 60 : i;
	if (from > end)
		from = end;
	if (end - from > 100)
		end = from + 100;
#define PUT(ch) do { if (k + 1 < cap) buf[k++] = (ch); } while (0)
	PUT(' ');
	PUT(' ');
	if (from > i) {
		PUT('.'); PUT('.'); PUT('.');
	}
	for (size_t j = from; j < end; j++) {
		unsigned char ch = (unsigned char)src[j];
		PUT(ch == '\t' ? ' ' : ch < 0x20 || ch >= 0x7f ? '?' : (char)ch);
	}
	PUT('\n');
	PUT(' ');
	PUT(' ');
	if (from > i) {
		PUT(' '); PUT(' '); PUT(' ');
	}
	for (size_t j = from; j < i + col && j < from + 101; j++)
		PUT(' ');
	PUT('^');
	PUT('\n');
#undef PUT
	buf[k] = 0;
	return buf;
}

const char *
dsl_binop_name(int op)
{
	static const char *const names[] = { "?", "+", "-", "*", "/", "%", "==",
	                                     "!=", "<", "<=", ">", ">=" };
	return op > 0 && op <= DB_GE ? names[op] : "?";
}

/* ---- printing ---------------------------------------------------------- */

static void print_expr(FILE *f, const DslNode *n);

static void
print_num(FILE *f, double x, int is_int)
{
	char buf[64];

	if (is_int) {
		fprintf(f, "%.0f", x);
		return;
	}
	if (isinf(x)) {
		fputs("1e999", f);
		return;
	}
	snprintf(buf, sizeof buf, "%.17g", x);
	if (!strpbrk(buf, ".e"))
		strcat(buf, ".0");
	fputs(buf, f);
}

static void
print_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (*s == '\t')
			fputs("\\t", f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void
print_args(FILE *f, const DslNode *n, const char *open, const char *close, const char *sep)
{
	fputs(open, f);
	for (int i = 0; i < n->nkid; i++) {
		if (i)
			fputs(", ", f);
		if (n->key && n->key[i])
			fprintf(f, "%s%s", n->key[i], sep);
		print_expr(f, n->kid[i]);
	}
	fputs(close, f);
}

static void
print_expr(FILE *f, const DslNode *n)
{
	switch (n->kind) {
	case DN_NUM:
		print_num(f, n->num, n->is_int);
		break;
	case DN_STR:
		print_str(f, n->name);
		break;
	case DN_NAME:
		fputs(n->name, f);
		break;
	case DN_LIST:
		print_args(f, n, "[", "]", "");
		break;
	case DN_UNARY:
		fprintf(f, "(%c", n->op);
		print_expr(f, n->a);
		fputc(')', f);
		break;
	case DN_BINARY:
		fputc('(', f);
		print_expr(f, n->a);
		fprintf(f, " %s ", dsl_binop_name(n->op));
		print_expr(f, n->b);
		fputc(')', f);
		break;
	case DN_CALL:
		print_expr(f, n->a);
		print_args(f, n, "(", ")", "=");
		break;
	case DN_METHOD:
		print_expr(f, n->a);
		fprintf(f, ".%s", n->name);
		print_args(f, n, "(", ")", "=");
		break;
	case DN_FIELD:
		print_expr(f, n->a);
		fprintf(f, ".%s", n->name);
		break;
	case DN_INDEX:
		print_expr(f, n->a);
		fputc('[', f);
		print_expr(f, n->b);
		fputc(']', f);
		break;
	case DN_PATH:
		fprintf(f, "%s::%s", n->name2, n->name);
		break;
	case DN_STRUCT:
		fprintf(f, "%s ", n->name);
		print_args(f, n, "{ ", " }", ": ");
		break;
	default:
		fputs("?", f);
	}
}

static void
print_fn(FILE *f, const DslNode *n)
{
	fprintf(f, "fn %s(", n->name);
	for (int i = 0; i < n->nparam; i++) {
		const DslParam *q = &n->param[i];
		fprintf(f, "%s%s", i ? ", " : "", q->name);
		if (q->dtype)
			fprintf(f, ": %s", q->dtype);
		if (q->rank >= 0) {
			fputc('[', f);
			for (int d = 0; d < q->rank; d++)
				fprintf(f, "%s%lld", d ? ", " : "", (long long)q->dim[d]);
			fputc(']', f);
		}
	}
	fputs(") {", f);
	for (int i = 0; i < n->body->nkid; i++) {
		const DslNode *s = n->body->kid[i];
		if (s->kind == DN_LET)
			fprintf(f, " let %s =", s->name);
		fputc(' ', f);
		print_expr(f, s->a);
		fputc(';', f);
	}
	if (n->body->a) {
		fputc(' ', f);
		print_expr(f, n->body->a);
	}
	fputs(" }", f);
}

void
dsl_print(FILE *f, const DslProgram *prog)
{
	for (int i = 0; i < prog->nitem; i++) {
		const DslNode *n = prog->item[i];
		switch (n->kind) {
		case DN_LET:
			fprintf(f, "let %s = ", n->name);
			print_expr(f, n->a);
			fputs(";\n", f);
			break;
		case DN_EXPR:
			print_expr(f, n->a);
			fputs(prog->tail && i == prog->nitem - 1 ? "\n" : ";\n", f);
			break;
		case DN_FN:
			print_fn(f, n);
			fputc('\n', f);
			break;
		case DN_MODULE:
			fprintf(f, "module %s {", n->name);
			for (int k = 0; k < n->nkid; k++)
				fprintf(f, " %s: %s,", n->key[k], n->ftype[k]);
			for (int k = 0; k < n->nmethod; k++) {
				fputc(' ', f);
				print_fn(f, n->method[k]);
			}
			fputs(" }\n", f);
			break;
		case DN_IMPORT:
			fputs("import ", f);
			print_str(f, n->name2);
			fprintf(f, " as %s;\n", n->name);
			break;
		}
	}
}

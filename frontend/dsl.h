/*
 * dsl.h - the .burn model language: lexer and parser into an AST
 * (grammar in docs/DSL.md, and above each parser function in dsl.c).
 *
 * The parser reads a whole source text and returns a DslProgram whose
 * nodes live in the caller's Arena (freed whole with it).  Every node
 * carries the line and column (1-based, columns in bytes) of its first
 * token.  Errors: the status is returned, the Ctx message is
 * "NAME:LINE:COL: what was expected", and *err (if not NULL) receives the
 * position, so that a driver can print the source line with a caret under
 * the column (dsl_caret).  The parser never prints; no expression tree is
 * deeper than DSL_MAX_DEPTH and the parser nests at most DSL_MAX_NEST calls
 * (deeper input is an error), so walkers may recurse.
 *
 * The evaluator (api/dsl_eval.c) walks this tree; the AOT path traces a
 * script's `main` into a graph.
 */
#ifndef BURN_DSL_H
#define BURN_DSL_H

#include <stddef.h>
#include <stdio.h>
#include "../ir/base.h"

/* The deepest expression tree (a chain a + b + c ... counts one level per
 * operator), and the deepest nesting of brackets the parser recurses
 * into: a bound on the stack of the parser and of every walker. */
#define DSL_MAX_DEPTH 200
#define DSL_MAX_NEST (4 * DSL_MAX_DEPTH)

/* A source text and its name (borrowed: the text must outlive the AST). */
typedef struct DslSrc {
	const char *name;
	const char *text;
	size_t n;
} DslSrc;

/* Source positions, 1-based. */
typedef struct DslPos {
	int line, col;
} DslPos;

/*
 * Node kinds.  Expressions first, then statements and items.  Which
 * fields each kind uses:
 *
 *   DN_NUM     num, is_int                        1, 2.5, 1e-3
 *   DN_STR     name (the unescaped text)          "model.onnx"
 *   DN_NAME    name                               x, SQRT_2, Linear
 *   DN_LIST    kid[nkid]                          [1, 2, 3]
 *   DN_UNARY   op ('-' or '!'), a                 -x
 *   DN_BINARY  op (DT_* token), a, b              a + b
 *   DN_CALL    a (the callee), kid/key[nkid]      f(x, axis=-1)
 *   DN_METHOD  a (receiver), name, kid/key[nkid]  x.erf()
 *   DN_FIELD   a, name                            self.linear
 *   DN_INDEX   a, b                               xs[0]
 *   DN_PATH    name2 (the type), name             Mlp::new
 *   DN_STRUCT  name (the type), kid/key[nkid]     Mlp { fc: Linear(2, 3) }
 *   DN_BLOCK   kid[nkid] statements, a tail expression or NULL
 *
 *   DN_LET     name, a (the value)                let x = e;
 *   DN_EXPR    a                                  e;
 *   DN_FN      name, param[nparam], body (DN_BLOCK)
 *   DN_MODULE  name, key[nkid] field names, ftype[nkid] their type
 *              names, kid[nkid] NULL; method[nmethod] (DN_FN)
 *   DN_IMPORT  name (the alias), name2 (the path)
 *
 * key[i] of a call is NULL for a positional argument.
 */
enum DslKind {
	DN_NUM = 1, DN_STR, DN_NAME, DN_LIST, DN_UNARY, DN_BINARY, DN_CALL,
	DN_METHOD, DN_FIELD, DN_INDEX, DN_PATH, DN_STRUCT, DN_BLOCK,
	DN_LET, DN_EXPR, DN_FN, DN_MODULE, DN_IMPORT,
};

/* Binary operators (DN_BINARY's op); unary ones are '-' and '!'. */
enum DslBinOp {
	DB_ADD = 1, DB_SUB, DB_MUL, DB_DIV, DB_MOD,
	DB_EQ, DB_NE, DB_LT, DB_LE, DB_GT, DB_GE,
};

/* A parameter: name, optional type `f32[1, 784]` (rank -1: none given;
 * dtype NULL: none given).  The type is what AOT compilation needs. */
typedef struct DslParam {
	const char *name;
	const char *dtype;   /* "f32", "i64", ...  or NULL */
	int rank;            /* -1: no shape given */
	int64_t dim[8];
	DslPos pos;
} DslParam;

typedef struct DslNode DslNode;
struct DslNode {
	int kind;            /* DslKind */
	DslPos pos;
	int op;              /* DN_UNARY, DN_BINARY */
	double num;          /* DN_NUM */
	int is_int;          /* DN_NUM written without '.' or exponent */
	const char *name;
	const char *name2;
	DslNode *a, *b;
	DslNode **kid;
	const char **key;
	const char **ftype;  /* DN_MODULE */
	int nkid;
	DslParam *param;     /* DN_FN */
	int nparam;
	DslNode *body;       /* DN_FN */
	DslNode **method;    /* DN_MODULE */
	int nmethod;
	DslPos *key_pos;     /* positions of key[i] (DN_CALL/METHOD/STRUCT/MODULE) */
	int depth;           /* of the expression tree below (a leaf: 1) */
	const DslSrc *src;   /* DN_FN: the source it is written in */
};

/* A parsed source: its top-level items and statements, in order.  When
 * the text ends with an expression that has no ';' (the REPL's "show me
 * this"), it is the last item, a DN_EXPR with `tail` set. */
typedef struct DslProgram {
	const char *name;    /* the source's name (borrowed) */
	const DslSrc *src;   /* its text (in the arena; the text borrowed) */
	DslNode **item;
	int nitem;
	int tail;            /* the last item is an expression without ';' */
} DslProgram;

/* Parse src[0..n) (need not be NUL-terminated; NUL bytes are errors).
 * name labels messages.  On failure *out is NULL. */
int dsl_parse(Ctx *c, Arena *a, const char *name, const char *src, size_t n,
              DslProgram **out, DslPos *err);

/* Whether src[0..n) is unfinished: a bracket, brace or parenthesis left
 * open, or an unterminated string (the REPL reads another line then). */
int dsl_incomplete(const char *src, size_t n);

/*
 * The source line `line` of src, then a line with a caret under column
 * col ("  let y = x x\n            ^\n"), into buf (NUL-terminated,
 * truncated to cap; long lines are shown around the column and control
 * bytes as '?').  Returns buf.
 */
char *dsl_caret(const char *src, size_t n, DslPos pos, char *buf, size_t cap);

/*
 * Print prog in canonical form: one item a line, every compound
 * expression in parentheses, numbers that read back the same.  Parsing
 * the printed text gives a program that prints the same (the fuzzer
 * checks this).
 */
void dsl_print(FILE *f, const DslProgram *prog);

/* The text of a binary operator ("+", "==", ...). */
const char *dsl_binop_name(int op);

#endif

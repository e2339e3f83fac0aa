/*
 * dimexpr.c - run-time size expressions (see dimexpr.h).
 */
#include <inttypes.h>
#include <string.h>
#include "dimexpr.h"

static const DimExpr *
mk(Arena *a, int op, const DimExpr *x, const DimExpr *y)
{
	DimExpr *e = arena_alloc(a, sizeof *e);

	if (!e)
		return NULL;
	memset(e, 0, sizeof *e);
	e->op = op;
	e->a = x;
	e->b = y;
	return e;
}

const DimExpr *
dx_const(Arena *a, int64_t c)
{
	DimExpr *e = (DimExpr *)mk(a, DX_CONST, NULL, NULL);

	if (e)
		e->c = c;
	return e;
}

const DimExpr *
dx_dim(Arena *a, int dim)
{
	DimExpr *e = (DimExpr *)mk(a, DX_DIM, NULL, NULL);

	if (e)
		e->dim = dim;
	return e;
}

int
dx_is_const(const DimExpr *x, int64_t *c)
{
	if (!x || x->op != DX_CONST)
		return 0;
	if (c)
		*c = x->c;
	return 1;
}

/* Fold two constants with op when the result fits; 0 if it does not. */
static int
fold(int op, int64_t x, int64_t y, int64_t *r)
{
	switch (op) {
	case DX_ADD:
		return !burn_add_ovf(x, y, r);
	case DX_MUL:
		return !burn_mul_ovf(x, y, r);
	case DX_CDIV:
		if (y <= 0 || x < 0)
			return 0;
		*r = x / y + (x % y != 0);
		return 1;
	case DX_MAX:
		*r = x > y ? x : y;
		return 1;
	}
	return 0;
}

static const DimExpr *
bin(Arena *a, int op, const DimExpr *x, const DimExpr *y)
{
	int64_t cx, cy, r;

	if (!x || !y)
		return NULL;
	if (dx_is_const(x, &cx) && dx_is_const(y, &cy) && fold(op, cx, cy, &r))
		return dx_const(a, r);
	/* the identities that keep printed sizes readable */
	if (op == DX_ADD && dx_is_const(x, &cx) && cx == 0)
		return y;
	if ((op == DX_ADD && dx_is_const(y, &cy) && cy == 0) ||
	    ((op == DX_MUL || op == DX_CDIV) && dx_is_const(y, &cy) && cy == 1))
		return x;
	if (op == DX_MUL && dx_is_const(x, &cx) && cx == 1)
		return y;
	if (op == DX_MUL && ((dx_is_const(x, &cx) && cx == 0) ||
	                     (dx_is_const(y, &cy) && cy == 0)))
		return dx_const(a, 0);
	return mk(a, op, x, y);
}

const DimExpr *dx_add(Arena *a, const DimExpr *x, const DimExpr *y) { return bin(a, DX_ADD, x, y); }
const DimExpr *dx_mul(Arena *a, const DimExpr *x, const DimExpr *y) { return bin(a, DX_MUL, x, y); }
const DimExpr *dx_cdiv(Arena *a, const DimExpr *x, const DimExpr *y) { return bin(a, DX_CDIV, x, y); }
const DimExpr *dx_max(Arena *a, const DimExpr *x, const DimExpr *y) { return bin(a, DX_MAX, x, y); }

int
dx_eval(Ctx *c, const DimExpr *x, int ndim, const int64_t *dims,
        const char *const *names, int64_t *out)
{
	int64_t l, r;

	if (!x)
		return burn_fail(c, BURN_ERR_INTERNAL, "dim expression missing");
	switch (x->op) {
	case DX_CONST:
		*out = x->c;
		return BURN_OK;
	case DX_DIM:
		if (x->dim < 0 || x->dim >= ndim || !dims)
			return burn_fail(c, BURN_ERR_INVALID, "dim %d not given", x->dim);
		if (dims[x->dim] < 0)
			return burn_fail(c, BURN_ERR_INVALID, "dim %s = %" PRId64 " is negative",
			                 names ? names[x->dim] : "?", dims[x->dim]);
		*out = dims[x->dim];
		return BURN_OK;
	case DX_ADD: case DX_MUL: case DX_CDIV: case DX_MAX:
		TRY(dx_eval(c, x->a, ndim, dims, names, &l));
		TRY(dx_eval(c, x->b, ndim, dims, names, &r));
		if (x->op == DX_CDIV && (r <= 0 || l < 0))
			return burn_fail(c, BURN_ERR_INVALID, "size expression divides "
			                 "%" PRId64 " by %" PRId64, l, r);
		if (!fold(x->op, l, r, out))
			return burn_fail(c, BURN_ERR_LIMIT, "a size overflows int64 at "
			                 "these dims");
		return BURN_OK;
	}
	return burn_fail(c, BURN_ERR_INTERNAL, "bad dim expression op %d", x->op);
}

static void pr(FILE *f, const DimExpr *x, const char *const *names, int dbl);

void
dx_print_c(FILE *f, const DimExpr *x, const char *const *names)
{
	pr(f, x, names, 0);
}

void
dx_print_c_double(FILE *f, const DimExpr *x, const char *const *names)
{
	pr(f, x, names, 1);
}

static void
pr(FILE *f, const DimExpr *x, const char *const *names, int dbl)
{
	if (!x) {
		fputs("0", f);
		return;
	}
	switch (x->op) {
	case DX_CONST:
		fprintf(f, dbl ? "%" PRId64 ".0" : "(int64_t)%" PRId64, x->c);
		return;
	case DX_DIM:
		fprintf(f, dbl ? "(double)%s" : "%s", names[x->dim]);
		return;
	case DX_ADD: case DX_MUL:
		fputc('(', f);
		pr(f, x->a, names, dbl);
		fputs(x->op == DX_ADD ? " + " : " * ", f);
		pr(f, x->b, names, dbl);
		fputc(')', f);
		return;
	case DX_CDIV:
		/* operands are >= 0 and the divisor > 0 (dims are checked first) */
		fputs("((", f);
		pr(f, x->a, names, dbl);
		fputs(" + ", f);
		pr(f, x->b, names, dbl);
		fputs(" - 1) / ", f);
		pr(f, x->b, names, dbl);
		fputc(')', f);   /* in double: an upper bound, which is all it is for */
		return;
	case DX_MAX:
		/* pure operands: printing them twice is harmless */
		fputs("(", f);
		pr(f, x->a, names, dbl);
		fputs(" > ", f);
		pr(f, x->b, names, dbl);
		fputs(" ? ", f);
		pr(f, x->a, names, dbl);
		fputs(" : ", f);
		pr(f, x->b, names, dbl);
		fputc(')', f);
		return;
	}
	fputs("0", f);
}

/*
 * dimexpr.h - sizes known at run time: small expressions over the
 * symbolic dims of a compiled program.
 *
 * A program compiled with dims left symbolic (--dynamic-dim) has dims
 * d0, d1, ... (their names are the plan's `dims`); every size the launch
 * list holds that depends on them (an arena offset, the arena's size, a
 * buffer's extent, a kernel's dim argument, later a GPU grid) is a DimExpr:
 *
 *   DX_CONST  c
 *   DX_DIM    the value of dim `dim`
 *   DX_ADD    a + b        DX_MUL  a * b
 *   DX_CDIV   ceil(a / b)  (b > 0; grid sizes, tiles)
 *   DX_MAX    max(a, b)
 *
 * Dims are >= 0, so every expression is monotone in them and >= 0 when its
 * constants are.  Expressions are immutable trees in an arena, built by the
 * dx_* constructors, which fold constants (a constant is DX_CONST, so
 * dx_is_const says whether a size depends on no dim).  Every target's
 * emitter reads the same expressions: the C emitter prints them
 * (dx_print_c), the interpreter's runner evaluates them (dx_eval).
 */
#ifndef BURN_DIMEXPR_H
#define BURN_DIMEXPR_H

#include <stdio.h>
#include "base.h"

enum DimExprOp { DX_CONST = 1, DX_DIM, DX_ADD, DX_MUL, DX_CDIV, DX_MAX };

typedef struct DimExpr {
	int op;                       /* DimExprOp */
	int dim;                      /* DX_DIM */
	int64_t c;                    /* DX_CONST */
	const struct DimExpr *a, *b;  /* operands */
} DimExpr;

/* Constructors; NULL only when the arena cannot allocate (an operand NULL
 * gives NULL). */
const DimExpr *dx_const(Arena *a, int64_t c);
const DimExpr *dx_dim(Arena *a, int dim);
const DimExpr *dx_add(Arena *a, const DimExpr *x, const DimExpr *y);
const DimExpr *dx_mul(Arena *a, const DimExpr *x, const DimExpr *y);
const DimExpr *dx_cdiv(Arena *a, const DimExpr *x, const DimExpr *y);
const DimExpr *dx_max(Arena *a, const DimExpr *x, const DimExpr *y);

/* Whether x is a constant (its value in *c when c is not NULL). */
int dx_is_const(const DimExpr *x, int64_t *c);
/* Evaluate with dim i = dims[i] (ndim of them).  Returns BURN_ERR_LIMIT on
 * int64 overflow, BURN_ERR_INVALID for a dim out of range or a division
 * by a value <= 0; the message names the dim by names[i] if names is not
 * NULL. */
int dx_eval(Ctx *c, const DimExpr *x, int ndim, const int64_t *dims,
            const char *const *names, int64_t *out);
/* Print x as a C expression of type int64_t, dim i as names[i] (C
 * identifiers of int64_t variables), fully parenthesised. */
void dx_print_c(FILE *f, const DimExpr *x, const char *const *names);
/* The same in double arithmetic (dims cast to double), for generated code
 * that checks a size stays below 2^63 before computing it in int64_t. */
void dx_print_c_double(FILE *f, const DimExpr *x, const char *const *names);

#endif

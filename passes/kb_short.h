/*
 * kb_short.h - shorthands for building index arithmetic and loops in a
 * lowering, shared by the family files that include it (ops_attention.c,
 * ops_loss.c, ops_rnn.c).  Header-only: every function is static inline.
 */
#ifndef BURN_KB_SHORT_H
#define BURN_KB_SHORT_H

#include "lower.h"

/* The type float math on elements of dtype dt is done in. */
static inline int ctype(int dt) { return dt == DT_F64 ? DT_F64 : DT_F32; }

static inline KRef I(KB *kb, int64_t v) { return kb_idx(kb, v); }
static inline KRef add(KB *kb, KRef a, KRef b) { return kb_bin(kb, KO_ADD, a, b); }
static inline KRef sub(KB *kb, KRef a, KRef b) { return kb_bin(kb, KO_SUB, a, b); }
static inline KRef mul(KB *kb, KRef a, KRef b) { return kb_bin(kb, KO_MUL, a, b); }
static inline KRef get(KB *kb, int var) { return kb_get(kb, var); }

/* e converted to dt (no node when it already has that type). */
static inline KRef conv(KB *kb, KRef e, int dt)
{
	return kb_dtype(kb->k, e) == dt ? e : kb_cast(kb, dt, e);
}

/* A loop variable over [0, n), as an index expression. */
static inline KRef loop(KB *kb, const char *name, int64_t n, int flags)
{
	return get(kb, kb_for(kb, name, I(kb, 0), I(kb, n), flags));
}

/* Whether optional output k of n is present. */
static inline int has_out(const Node *n, int k)
{
	return k < n->nout && n->out[k] >= 0;
}

#endif

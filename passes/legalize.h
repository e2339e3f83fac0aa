/*
 * legalize.h - kernel IR -> kernel IR for one target's capabilities.
 *
 * The kernel IR defines some ops by their meaning only (kops.def rows with
 * KP_LEG_*; float->int casts that saturate): integer division by zero,
 * shift counts out of range, integer pow, NaN-propagating min/max, isnan,
 * isinf, f32 erf.  Legalisation rewrites each into primitive kernel IR ops
 * (selects, raw quotients, shifts by count mod width, a polynomial), unless
 * the target's KCaps says it has the op natively.  This expansion is the
 * only definition of those semantics: the C renderer prints the legalised
 * kernels, and constant folding interprets the same legalised kernels, so
 * generated code and folded constants agree bit for bit.
 */
#ifndef BURN_LEGALIZE_H
#define BURN_LEGALIZE_H

#include "../ir/kir.h"

/* Rewrite kernel k of program p in place (new nodes are appended to its
 * pool; statements are redirected to them).  caps NULL: the target has
 * none of the optional ops (the C target, the interpreter). */
int kir_legalize(Ctx *c, KProgram *p, KKernel *k, const KCaps *caps);
/* kir_legalize on every kernel of p. */
int pass_legalize(Ctx *c, KProgram *p, const KCaps *caps);

#endif

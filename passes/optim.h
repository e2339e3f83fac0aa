/*
 * optim.h - optimisers as graph IR: the update of every parameter appended
 * to a graph that already computes the gradients (passes/autodiff.c).
 *
 * pass_optim adds, per parameter p with gradient gp, the optimiser's state
 * as new graph inputs and the updated parameter and state as values the
 * caller makes outputs.  The update is ordinary pointwise graph IR (Mul,
 * Add, Sqrt, Div), so the fuser makes one kernel per parameter of it and
 * the train step (forward, backward, update) is one compiled program; no
 * runtime loop over parameters exists.
 *
 *   SGD:  b' = mu b + (g + wd p)          (momentum mu != 0; PyTorch's form,
 *         p' = p - lr b'                   no dampening; b is zero at first)
 *         p' = p - lr (g + wd p)          (mu == 0: no state)
 *   Adam: m' = b1 m + (1 - b1) g
 *         v' = b2 v + (1 - b2) g^2
 *         p' = p - a m' / (sqrt(v') / c + eps)
 * with Adam's bias corrections as two scalar inputs a = lr / (1 - b1^t)
 * and c = sqrt(1 - b2^t), which change every step t (1, 2, ...): the driver
 * computes them (optim_adam_scalars), so one program serves every step.
 * PyTorch 1.13 computes the same expressions in the same order.
 */
#ifndef BURN_OPTIM_H
#define BURN_OPTIM_H

#include "passes.h"

enum { OPTIM_SGD, OPTIM_ADAM };

typedef struct Optim {
	int kind;            /* OPTIM_* */
	double lr;
	double momentum;     /* SGD */
	double weight_decay; /* SGD: added to the gradient */
	double beta1, beta2, eps;   /* Adam */
} Optim;

/* State tensors per parameter: SGD 1 with momentum, else 0; Adam 2. */
int optim_nstate(const Optim *o);
/* Scalar inputs of the whole step: Adam 2 (a, c), SGD 0. */
int optim_nscalar(const Optim *o);
/* The scalars of step t (1-based) into out[optim_nscalar]. */
void optim_scalars(const Optim *o, int64_t t, float *out);

/*
 * Append the update of np parameters param[i] (float values of g, graph
 * inputs) with gradients grad[i] (same shape and dtype) to g (inferred).
 * New graph inputs, in order: the scalars (f32, shape []), named
 * "optim/a" ...; then per parameter its states (named "<param>/m" ...,
 * the parameter's shape and dtype).  out_new[i * (1 + ns) + 0] gets the
 * updated parameter, + 1 + k the updated state k; out_in_state likewise
 * the state inputs ([i * ns + k]), out_in_scalar the scalar inputs.
 */
int pass_optim(Ctx *c, Graph *g, const Optim *o, int np, const int *param,
               const int *grad, int *out_new, int *out_in_state,
               int *out_in_scalar);

#endif

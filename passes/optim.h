/*
 * optim.h - optimisers as graph IR: the update of every parameter appended
 * to a graph that already computes the gradients (passes/autodiff.c).
 *
 * pass_optim adds, per parameter p with gradient g, the optimiser's state
 * as new graph inputs and the updated parameter and state as values the
 * caller makes outputs.  The update is ordinary pointwise graph IR (Mul,
 * Add, Sqrt, Div), so the fuser makes one kernel per parameter of it and
 * the train step (forward, backward, update) is one compiled program; no
 * runtime loop over parameters exists.  PyTorch 1.13's update rules, in
 * its order of operations (wd: weight decay; states start at zero):
 *
 *   clipping (clip > 0, before the rest): every g becomes g * s with
 *         s = min(1, clip / (sqrt(sum over all parameters of sum(g^2))
 *         + 1e-6)): the gradients' global L2 norm at most clip
 *   SGD:  d = g + wd p;  b' = mu b + d           (momentum mu != 0)
 *         p' = p - lr d'   where d' = b' (plain), d + mu b' (Nesterov),
 *         d (mu == 0: no state)
 *   Adam: d = g + wd p;  m' = b1 m + (1 - b1) d;  v' = b2 v + (1 - b2) d^2
 *         p' = p - a m' / (sqrt(v') / c + eps)
 *   AdamW: as Adam with d = g, and p' = p e - a m' / (sqrt(v') / c + eps)
 *         with e = 1 - lr wd (decoupled weight decay)
 *   RMSProp: d = g + wd p;  v' = alpha v + (1 - alpha) d^2
 *         u = d / (sqrt(v') + eps);  b' = mu b + u;  p' = p - lr b'
 *         (mu == 0: p' = p - lr u, no b)
 * with Adam's bias corrections a = lr / (1 - b1^t) and c = sqrt(1 - b2^t).
 * Every quantity that changes with the step t (1, 2, ...) is a scalar
 * input the driver computes (optim_scalars): lr itself (the schedule), a,
 * c and e.  So one program serves every step.
 *
 * The learning rate of step t (optim_lr): linear warm-up lr t / W over
 * the first W steps, then with u = t - W (1, 2, ...):
 *   constant: lr;  step: lr gamma^floor((u - 1) / S);
 *   cosine: lr (1 + cos(pi (u - 1) / (T - W))) / 2, T the run's steps.
 */
#ifndef BURN_OPTIM_H
#define BURN_OPTIM_H

#include <stdio.h>
#include "passes.h"

enum { OPTIM_SGD, OPTIM_ADAM, OPTIM_ADAMW, OPTIM_RMSPROP };
enum { SCHED_CONST, SCHED_STEP, SCHED_COSINE };

typedef struct Optim {
	int kind;            /* OPTIM_* */
	double lr;
	double momentum;     /* SGD, RMSProp */
	int nesterov;        /* SGD (needs momentum) */
	double weight_decay; /* added to the gradient; AdamW: decoupled */
	double beta1, beta2, eps;   /* Adam, AdamW; eps RMSProp too */
	double alpha;        /* RMSProp's smoothing */
	double clip;         /* > 0: the gradients' global norm at most clip */
	/* the learning-rate schedule */
	int sched;           /* SCHED_* */
	int64_t warmup;      /* steps of linear warm-up (0: none) */
	int64_t step_size;   /* SCHED_STEP: steps between decays */
	double gamma;        /* SCHED_STEP: the decay */
	int64_t total;       /* SCHED_COSINE: the run's last step */
} Optim;

/* State tensors per parameter (<= 2), and their names' suffixes in order:
 * "b" SGD with momentum, "" without; "mv" Adam, AdamW; "v" or "vb"
 * RMSProp. */
int optim_nstate(const Optim *o);
const char *optim_state_names(const Optim *o);
/* Scalar inputs of the whole step (<= 3). */
int optim_nscalar(const Optim *o);
/* The learning rate of step t (1-based). */
double optim_lr(const Optim *o, int64_t t);
/* The scalars of step t (1-based) into out[optim_nscalar]. */
void optim_scalars(const Optim *o, int64_t t, float *out);
/* optim_scalars (with optim_lr) as the C function `void fn(int64_t t,
 * float *ks)`, written to f: the AOT train step's (needs <math.h>). */
void optim_scalars_c(FILE *f, const Optim *o, const char *fn);

/*
 * Append the update of np parameters param[i] (float values of g, graph
 * inputs) with gradients grad[i] (same shape and dtype) to g (inferred).
 * New graph inputs, in order: the scalars (f32, shape []), named
 * "optim/lr" ...; then per parameter its states (named "<param>/m" ...,
 * the parameter's shape and dtype).  out_new[i * (1 + ns) + 0] gets the
 * updated parameter, + 1 + k the updated state k; out_in_state likewise
 * the state inputs ([i * ns + k]), out_in_scalar the scalar inputs.
 */
int pass_optim(Ctx *c, Graph *g, const Optim *o, int np, const int *param,
               const int *grad, int *out_new, int *out_in_state,
               int *out_in_scalar);

#endif

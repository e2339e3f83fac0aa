/*
 * check_random.h - how `burncc check` compares outputs that depend on
 * random draws (ops with OF_RANDOM in ir/ops.def): the reference's values
 * come from NumPy's generator, which burncc does not reproduce, so such
 * an output is checked by shape and dtype (exactly) and by distribution,
 * per op:
 *   Bernoulli          values in {0, 1}; the number of ones within four
 *                      standard deviations (+1) of sum(p), and sum (y - p)
 *                      (p - mean p) within four of 0 (ones where p is high)
 *   RandomUniform(Like) values in [low, high]; the mean within four
 *                      standard errors of (low + high) / 2
 *   RandomNormal(Like) finite; the mean within four standard errors of
 *                      `mean` (and, from 16 values, the variance within
 *                      four of its standard errors of scale^2)
 *   Multinomial        classes in [0, C); each class's count within four
 *                      standard deviations (+1) of sum over rows of
 *                      sample_size softmax(x)
 *   Dropout            training_mode false or ratio 0: exactly as any
 *                      output; else every value 0 or x / (1 - ratio), the
 *                      mask consistent with the output, and the kept
 *                      fraction within four standard deviations (+1) of
 *                      1 - ratio
 *   anything else that depends on draws (an expanded Bernoulli: Cast of a
 *                      comparison of RandomUniformLike): a two-sample test
 *                      against the reference's values: integers where they
 *                      are, inside their range, and the mean within four
 *                      pooled standard errors (+1/n) of theirs
 * Where a rule needs the node's inputs (p, x, ratio) they must be graph
 * inputs or constants; otherwise the generic rule applies.
 */
#ifndef BURN_CHECK_RANDOM_H
#define BURN_CHECK_RANDOM_H

#include "ir/graph.h"

/* What check knows of graph output i of the model before compiling. */
typedef struct RandOut {
	int tainted;        /* depends on a node that draws random numbers */
	int op;             /* the OF_RANDOM op producing it directly, or 0 */
	int k;              /* which output of that node */
	int in_pos[3];      /* its inputs 0..2: graph input positions, or -1 */
	Tensor in_const[3]; /* ... or constants (data NULL: neither / absent) */
	int out_pos[2];     /* its outputs 0 and 1 as graph outputs, or -1 */
	double attr[4];     /* low, high / mean, scale (Random*) */
} RandOut;

/* Fill ro[0..g->nout-1] from the loaded graph (before compiling: passes
 * fold and fuse); constants are copied into a.  Returns whether any
 * output is tainted, or -1 when out of memory. */
int check_random_scan(const Graph *g, Arena *a, RandOut *ro);

/* Output i of the compiled model mg, tainted: its values outs[i] (all
 * outputs in outs[]) against the reference e, the data set's inputs in[]
 * (original positions).  dtype and shape were compared already.  0 when
 * it passes, 1 with the reason in why, -1 when the rule says to compare
 * values as for any output (Dropout not training, or with ratio 0). */
int check_random_compare(const RandOut *ro, int i, const Graph *mg,
                         const void *const *outs, const Tensor *e,
                         const Tensor *in, char *why, size_t n);

/* An element as double (tools/check.c's reader). */
double check_elem_f(const void *p, int dt, int64_t i);

#endif

/*
 * rng.h - the random ops' generator, built as kernel IR: Philox4x32-10
 * (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as
 * 1, 2, 3", SC 2011), a counter-based generator.  A draw is a pure
 * function of a 128-bit counter and a 64-bit key, so element i of a
 * random tensor is computed from (key, i) alone: reproducible, the same
 * in any order or number of threads, and the same on every target, since
 * it is integer kernel IR (32x32->64 multiplies, xors, shifts) that every
 * renderer and the interpreter define alike.
 *
 * How the ops use it (passes/ops_random.c): element i of a node's output
 * draws block Philox(ctr = {i mod 2^32, i / 2^32, stream, 0}, key = seed);
 * the seed attribute gives the key (rng_seed_key), and a node without one
 * gets key RNG_KEY_DEFAULT (xor the graph input rng_counter, where there
 * is one) and a stream made from its name (rng_node_stream), so two
 * unseeded nodes draw different numbers, and every run the same ones
 * unless the caller changes rng_counter.
 */
#ifndef BURN_RNG_H
#define BURN_RNG_H

#include <stdint.h>
#include "lower.h"

/* The key of nodes without a seed attribute (any fixed value would do). */
#define RNG_KEY_DEFAULT 0x2545f4914f6cdd1dull

/* The graph input that, where a graph has it (a uint64 scalar of this
 * name: `burncc --rng-counter` adds one, CompileOpts.rng_counter), is
 * xored into the key of every node without a seed: a caller passing a new
 * value each run draws new numbers.  rng_counter_input: its value index,
 * or -1. */
#define RNG_COUNTER_NAME "rng_counter"
int rng_counter_input(const Graph *g);

/*
 * Emit Philox4x32-10 of ctr[0..3] (u32 expressions) under key (k0, k1)
 * (u32 expressions, constants or variables: each is read ten times)
 * into the kernel kb builds, at the current position: ten rounds of
 * statements setting u32 variables.  out[0..3] get the variables that
 * hold the four result words afterwards.
 */
void rng_philox(KB *kb, const KRef ctr[4], KRef k0, KRef k1, int out[4]);

/* A uniform float in [0, 1) from one word: (w >> 8) * 2^-24, as f32
 * (exact).  From two words, 53 bits: ((w0 << 21) | (w1 >> 11)) * 2^-53,
 * as f64 (exact). */
KRef rng_unit_f32(KB *kb, KRef w);
KRef rng_unit_f64(KB *kb, KRef w0, KRef w1);

/* The key for a seed attribute's value (a float in the Random* ops and
 * Bernoulli, an int in Dropout): an integral seed is its integer, any
 * other its bits, so 1.5 and 1 differ. */
uint64_t rng_seed_key(double seed);

/* The stream (counter word 2) of node n: attribute "burn_stream" when set
 * (gradient rules copy a node with its stream), else 0 with a seed and
 * a hash of the node's name without. */
uint32_t rng_node_stream(const Node *n);

/* Whether node n draws random numbers: a row with OF_RANDOM, and for
 * Dropout a training_mode input that is not a constant false. */
int random_node_draws(const Graph *g, const Node *n);

#endif

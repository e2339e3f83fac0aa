/*
 * parallel.h - a loop's iterations on CPU threads, for code that runs in
 * process (the llvm target's threaded loops, codegen/llvm/).
 *
 * burn_parallel_for(fn, ctx, lo, hi) runs fn(ctx, a, b) over contiguous
 * chunks [a, b) that together cover [lo, hi) exactly once, on up to
 * burn_threads() threads (the caller runs one chunk), and returns when
 * all are done.  The iterations must be independent (the schedule's
 * KF_PARALLEL loops are).  Threads are started per call and joined: no
 * state outlives the call, so nothing leaks and calls from several
 * threads do not interfere.  Where a thread cannot be started its chunk
 * runs on the caller: the result is the same, only slower.
 */
#ifndef BURN_PARALLEL_H
#define BURN_PARALLEL_H

#include <stdint.h>

typedef void (*BurnRangeFn)(void *ctx, int64_t lo, int64_t hi);

void burn_parallel_for(BurnRangeFn fn, void *ctx, int64_t lo, int64_t hi);
/* Threads a loop may use: $BURN_THREADS, else $OMP_NUM_THREADS (the C
 * target's OpenMP knob), else the CPUs online; 1 to 256. */
int burn_threads(void);
/* Threads for loops run by the calling thread from now on (a libburn
 * context's burn_options.threads), over the environment's; 0: back to
 * burn_threads()'s answer.  Thread-local: other threads are not affected. */
void burn_threads_local(int n);

#endif

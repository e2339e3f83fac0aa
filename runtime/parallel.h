/*
 * parallel.h - a loop's iterations on CPU threads, for code that runs in
 * process (the llvm target's threaded loops, codegen/llvm/).
 *
 * burn_parallel_for(fn, ctx, lo, hi) runs fn(ctx, a, b) over contiguous
 * chunks [a, b) that together cover [lo, hi) exactly once, on up to
 * burn_threads() threads (the caller runs chunks too), and returns when
 * all are done.  The iterations must be independent (the schedule's
 * KF_PARALLEL loops are).
 *
 * The threads are a persistent pool, one per process: burn_threads() - 1
 * workers started by the first call that wants more than one thread, more
 * when a later call wants more (a larger burn_threads_local), kept asleep
 * on a condition variable between loops until the process exits; a child
 * after fork() starts its own.  One loop uses the pool at a time: a call made while it is busy
 * (from another thread, or from inside a chunk) runs its loop on the
 * calling thread alone, never waiting for the pool.  Where threads cannot
 * be started the caller runs every chunk: the result is the same, only
 * slower.  Safe to call from any number of threads.
 */
#ifndef BURN_PARALLEL_H
#define BURN_PARALLEL_H

#include <stdint.h>

typedef void (*BurnRangeFn)(void *ctx, int64_t lo, int64_t hi);

/* A loop on T threads is cut into at most T * BURN_CHUNKS_PER_THREAD
 * chunks of equal size give or take one iteration, claimed one at a time:
 * whoever runs takes the chunks a descheduled worker has not, and a
 * worker that loses its core holds up the caller for one small chunk. */
#define BURN_CHUNKS_PER_THREAD 4

void burn_parallel_for(BurnRangeFn fn, void *ctx, int64_t lo, int64_t hi);
/* Threads a loop may use: $BURN_THREADS, else $OMP_NUM_THREADS (the C
 * target's OpenMP knob), else the CPUs online; 1 to 256. */
int burn_threads(void);
/* Threads for loops run by the calling thread from now on (a libburn
 * context's burn_options.threads), over the environment's; 0: back to
 * burn_threads()'s answer.  Thread-local: other threads are not affected. */
void burn_threads_local(int n);

#endif

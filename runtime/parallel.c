/*
 * parallel.c - see parallel.h.
 *
 * One pool per process, made by the first call that wants threads and
 * grown by a later one that wants more: workers that, between loops, spin
 * about 50 us on the job's generation (loops of one step or model come
 * microseconds apart, a futex wake-up costs tens) and then sleep on a
 * condition variable, counted so that a caller broadcasts only to sleepers.
 * A loop is one job:
 *
 *   caller   takes the pool (a trylock: a pool already busy, with a loop
 *            of another thread or the loop this one is a chunk of, means
 *            run serially instead, so nothing ever waits for the pool),
 *            publishes the job under the lock with a new generation,
 *            wakes the workers, then claims chunks like a worker, and
 *            waits until every chunk is done
 *   worker   wakes on a new generation, copies the job, claims chunks
 *            until none is left, and sleeps again
 *
 * A loop is cut into up to BURN_CHUNKS_PER_THREAD chunks a thread, of equal
 * size give or take one iteration.  Chunks are claimed from one atomic
 * word holding (generation << 32 |
 * next chunk): a claim succeeds only for the generation the worker copied,
 * so a worker that wakes late cannot take a chunk of a later job with the
 * earlier job's function.  The caller runs chunks too, so a loop finishes
 * even when no worker wakes in time (a busy machine): then the caller
 * simply does all of it.
 *
 * After fork() the child has none of the parent's threads: a fork handler
 * forgets the pool there, and the child's first loop makes its own.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "parallel.h"

#define MAX_THREADS 256
/* Pauses a worker spins on the next loop before it sleeps: about 50 us. */
#define SPIN_WAIT 4000

static inline void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

typedef struct Pool {
	pthread_mutex_t mu;         /* guards the job's fields and gen */
	pthread_cond_t go;          /* a new job (gen changed) */
	pthread_cond_t done;        /* pending reached 0 */
	pthread_mutex_t busy;       /* held by the caller whose job it is */
	int nworkers;               /* workers started (under made_mu) */
	int stuck;                  /* a worker could not be started */
	/* the job */
	uint32_t gen;
	_Atomic uint32_t agen;      /* gen, for workers spinning without mu */
	int sleepers;               /* workers waiting on go (under mu) */
	BurnRangeFn fn;
	void *ctx;
	int64_t lo;
	uint64_t step, extra;       /* chunk i: step + (i < extra) iterations */
	int nchunk;
	_Atomic uint64_t claim;     /* gen << 32 | next chunk */
	atomic_int pending;         /* chunks not yet finished */
} Pool;

static Pool pool = {
	.mu = PTHREAD_MUTEX_INITIALIZER, .go = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER, .busy = PTHREAD_MUTEX_INITIALIZER,
};
static pthread_mutex_t made_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static int
env_threads(const char *name)
{
	const char *s = getenv(name);
	long v;
	char *end;

	if (!s || !*s)
		return 0;
	v = strtol(s, &end, 10);
	return *end || v < 1 ? 0 : v > MAX_THREADS ? MAX_THREADS : (int)v;
}

static _Thread_local int local_threads;

void
burn_threads_local(int n)
{
	local_threads = n < 0 ? 0 : n > MAX_THREADS ? MAX_THREADS : n;
}

int
burn_threads(void)
{
	if (local_threads)
		return local_threads;
	long cpus;
	int n = env_threads("BURN_THREADS");

	if (!n)
		n = env_threads("OMP_NUM_THREADS");
	if (n)
		return n;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return cpus < 1 ? 1 : cpus > MAX_THREADS ? MAX_THREADS : (int)cpus;
}

/* A chunk of job gen (its index), or -1 when gen's chunks are all taken
 * or a later job has begun. */
static int
claim(Pool *p, uint32_t gen, int nchunk)
{
	uint64_t v = atomic_load_explicit(&p->claim, memory_order_relaxed);

	for (;;) {
		if ((uint32_t)(v >> 32) != gen || (int)(uint32_t)v >= nchunk)
			return -1;
		if (atomic_compare_exchange_weak_explicit(&p->claim, &v, v + 1,
		                                          memory_order_acq_rel,
		                                          memory_order_relaxed))
			return (int)(uint32_t)v;
	}
}

typedef struct Job {
	uint32_t gen;
	BurnRangeFn fn;
	void *ctx;
	int64_t lo;
	uint64_t step, extra;
	int nchunk;
} Job;

/* Run the chunks of job j this thread can claim; returns how many. */
static int
work(Pool *p, const Job *j)
{
	int i, ran = 0;

	while ((i = claim(p, j->gen, j->nchunk)) >= 0) {
		ran++;
		uint64_t u = (uint64_t)i;
		uint64_t a = u * j->step + (u < j->extra ? u : j->extra);
		uint64_t len = j->step + (u < j->extra);
		j->fn(j->ctx, (int64_t)((uint64_t)j->lo + a),
		      (int64_t)((uint64_t)j->lo + a + len));
		if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
			pthread_mutex_lock(&p->mu);
			pthread_cond_signal(&p->done);
			pthread_mutex_unlock(&p->mu);
		}
	}
	return ran;
}

/*
 * A loop's record, found by its function (the llvm target outlines one
 * per threaded loop; a slot another function takes starts afresh): runs
 * left on the caller alone, and the pause after a loss.  A run loses
 * when the workers took no chunk, or when it took longer, publish to
 * last chunk done, than the caller's time per chunk times the chunks (one
 * thread alone): a worker descheduled with a chunk, a machine without a
 * free core.  Then the loop runs on the caller alone, waking nobody, for
 * 16 runs, twice as many after each further loss up to 4096; a win ends
 * the pause.  No result depends on it.
 */
typedef struct LoopRec {
	_Atomic uintptr_t fn;
	atomic_int skip, pause;
} LoopRec;

#define NREC 256
static LoopRec recs[NREC];

static LoopRec *
rec_of(BurnRangeFn fn)
{
	uintptr_t k = (uintptr_t)fn;
	LoopRec *r = &recs[(k >> 4 ^ k >> 12) % NREC];

	if (atomic_load_explicit(&r->fn, memory_order_relaxed) != k) {
		atomic_store_explicit(&r->skip, 0, memory_order_relaxed);
		atomic_store_explicit(&r->pause, 0, memory_order_relaxed);
		atomic_store_explicit(&r->fn, k, memory_order_relaxed);
	}
	return r;
}

static double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void
judge(LoopRec *r, int lost)
{
	int p = atomic_load_explicit(&r->pause, memory_order_relaxed);

	p = !lost ? 0 : p < 16 ? 16 : p < 4096 ? 2 * p : 4096;
	atomic_store_explicit(&r->pause, p, memory_order_relaxed);
	atomic_store_explicit(&r->skip, p, memory_order_relaxed);
}

static void *
worker_main(void *arg)
{
	Pool *p = arg;
	uint32_t seen;
	Job j;

	pthread_mutex_lock(&p->mu);
	seen = p->gen;
	for (;;) {
		while (p->gen == seen) {
			p->sleepers++;
			pthread_cond_wait(&p->go, &p->mu);
			p->sleepers--;
		}
		seen = p->gen;
		j = (Job){ p->gen, p->fn, p->ctx, p->lo, p->step, p->extra, p->nchunk };
		pthread_mutex_unlock(&p->mu);
		work(p, &j);
		/* a training step or a model runs its loops back to back, a few
		 * microseconds apart: waiting for the next one awake costs less
		 * than a futex wake-up per loop (tens of microseconds) */
		for (int spin = 0; spin < SPIN_WAIT &&
		     atomic_load_explicit(&p->agen, memory_order_acquire) == seen; spin++)
			cpu_relax();
		pthread_mutex_lock(&p->mu);
	}
	return NULL;
}

/* In a child after fork(): no workers exist there; start afresh. */
static void
forget_pool(void)
{
	pthread_mutex_init(&pool.mu, NULL);
	pthread_cond_init(&pool.go, NULL);
	pthread_cond_init(&pool.done, NULL);
	pthread_mutex_init(&pool.busy, NULL);
	pthread_mutex_init(&made_mu, NULL);
	pool.nworkers = 0;
	pool.sleepers = 0;
	pool.stuck = 0;
}

static void
register_atfork(void)
{
	pthread_atfork(NULL, NULL, forget_pool);
}

/* Workers enough for a loop on `want` threads: started up to want - 1
 * (a later loop that wants more starts more); returns how many exist.
 * A thread that cannot be made stops the growing for good (the caller
 * then runs more chunks itself). */
static int
make_pool(int want)
{
	int n;

	pthread_once(&atfork_once, register_atfork);
	pthread_mutex_lock(&made_mu);
	if (!pool.stuck && pool.nworkers < want - 1) {
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		while (pool.nworkers < want - 1) {
			pthread_t t;
			if (pthread_create(&t, &at, worker_main, &pool)) {
				pool.stuck = 1;
				break;
			}
			pool.nworkers++;
		}
		pthread_attr_destroy(&at);
	}
	n = pool.nworkers;
	pthread_mutex_unlock(&made_mu);
	return n;
}

void
burn_parallel_for(BurnRangeFn fn, void *ctx, int64_t lo, int64_t hi)
{
	Pool *p = &pool;
	uint64_t n;
	int nt = burn_threads(), nc, mine;
	double t0, t1;
	LoopRec *r;
	Job j;

	if (hi <= lo)
		return;
	n = (uint64_t)hi - (uint64_t)lo;   /* exact: hi > lo */
	if (n < (uint64_t)nt)
		nt = (int)n;
	if (nt > 1) {
		int w = make_pool(nt);
		if (nt > w + 1)
			nt = w + 1;
	}
	r = nt > 1 ? rec_of(fn) : NULL;
	if (r && atomic_load_explicit(&r->skip, memory_order_relaxed) > 0) {
		atomic_fetch_sub_explicit(&r->skip, 1, memory_order_relaxed);
		nt = 1;   /* paused: the caller alone */
	}
	if (nt <= 1 || pthread_mutex_trylock(&p->busy)) {
		fn(ctx, lo, hi);
		return;
	}
	t0 = now_s();
	pthread_mutex_lock(&p->mu);
	p->gen++;
	p->fn = fn;
	p->ctx = ctx;
	p->lo = lo;
	/* BURN_CHUNKS_PER_THREAD chunks a thread, where the loop has that many
	 * iterations: a worker that loses its core holds up the caller for
	 * one small chunk, not for half of the loop */
	nc = n < (uint64_t)nt * BURN_CHUNKS_PER_THREAD ? (int)n : nt * BURN_CHUNKS_PER_THREAD;
	p->step = n / (uint64_t)nc;
	p->extra = n % (uint64_t)nc;
	p->nchunk = nc;
	atomic_store(&p->pending, nc);
	atomic_store(&p->claim, (uint64_t)p->gen << 32);
	j = (Job){ p->gen, fn, ctx, lo, p->step, p->extra, nc };
	atomic_store_explicit(&p->agen, p->gen, memory_order_release);
	if (p->sleepers)
		pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	mine = work(p, &j);
	t1 = now_s();
	/* every chunk claimed; wait for the ones still running elsewhere */
	for (int spin = 0; spin < 2000 && atomic_load(&p->pending) > 0; spin++)
		;
	if (atomic_load(&p->pending) > 0) {
		pthread_mutex_lock(&p->mu);
		while (atomic_load(&p->pending) > 0)
			pthread_cond_wait(&p->done, &p->mu);
		pthread_mutex_unlock(&p->mu);
	}
	judge(r, mine >= nc || (mine > 0 && now_s() - t0 > (t1 - t0) / mine * nc));
	pthread_mutex_unlock(&p->busy);
}

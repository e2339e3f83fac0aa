/*
 * parallel.c - see parallel.h.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "parallel.h"

#define MAX_THREADS 256

typedef struct Chunk {
	BurnRangeFn fn;
	void *ctx;
	int64_t lo, hi;
} Chunk;

static void *
chunk_main(void *arg)
{
	Chunk *c = arg;

	c->fn(c->ctx, c->lo, c->hi);
	return NULL;
}

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

void
burn_parallel_for(BurnRangeFn fn, void *ctx, int64_t lo, int64_t hi)
{
	Chunk ch[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	unsigned char started[MAX_THREADS];
	uint64_t n, step, extra;
	int nt = burn_threads();

	if (hi <= lo)
		return;
	n = (uint64_t)hi - (uint64_t)lo;   /* exact: hi > lo */
	if (n < (uint64_t)nt)
		nt = (int)n;
	if (nt <= 1) {
		fn(ctx, lo, hi);
		return;
	}
	step = n / (uint64_t)nt;
	extra = n % (uint64_t)nt;
	for (int i = 0; i < nt; i++) {
		/* chunk i: step iterations, one more for the first `extra` */
		uint64_t a = (uint64_t)i * step + ((uint64_t)i < extra ? (uint64_t)i : extra);
		uint64_t len = step + ((uint64_t)i < extra);
		ch[i].fn = fn;
		ch[i].ctx = ctx;
		ch[i].lo = (int64_t)((uint64_t)lo + a);
		ch[i].hi = (int64_t)((uint64_t)lo + a + len);
	}
	for (int i = 1; i < nt; i++)
		started[i] = pthread_create(&tid[i], NULL, chunk_main, &ch[i]) == 0;
	fn(ctx, ch[0].lo, ch[0].hi);
	for (int i = 1; i < nt; i++) {
		if (started[i])
			pthread_join(tid[i], NULL);
		else
			fn(ctx, ch[i].lo, ch[i].hi);
	}
}

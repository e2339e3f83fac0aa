/*
 * test_parallel.c - runtime/parallel.c's persistent pool: every iteration
 * runs exactly once for any range and thread count, loops from many
 * threads at once and a loop inside a chunk finish (the busy pool means
 * serial, never a wait), the pool is reused across calls, and a child
 * after fork() gets a working pool of its own.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "runtime/parallel.h"

typedef struct Count {
	int64_t base;
	atomic_int *hit;            /* per iteration: times run */
	atomic_int chunks;
	pthread_t caller;
	atomic_int others;          /* chunks run on a thread not the caller's */
} Count;

static void
count(void *ctx, int64_t lo, int64_t hi)
{
	Count *c = ctx;

	for (int64_t i = lo; i < hi; i++)
		atomic_fetch_add(&c->hit[i - c->base], 1);
	atomic_fetch_add(&c->chunks, 1);
	if (!pthread_equal(pthread_self(), c->caller))
		atomic_fetch_add(&c->others, 1);
}

/* Run [lo, hi) and check each iteration ran once; returns chunks run on
 * other threads. */
static int
cover(int64_t lo, int64_t hi)
{
	int64_t n = hi > lo ? hi - lo : 0;
	Count c = { .base = lo, .caller = pthread_self() };
	int others;

	c.hit = calloc((size_t)n + 1, sizeof *c.hit);
	burn_parallel_for(count, &c, lo, hi);
	for (int64_t i = 0; i < n; i++)
		cr_assert_eq(atomic_load(&c.hit[i]), 1, "[%lld, %lld): iteration %lld ran %d times",
		             (long long)lo, (long long)hi, (long long)(lo + i),
		             atomic_load(&c.hit[i]));
	cr_assert_leq(atomic_load(&c.chunks), burn_threads() * BURN_CHUNKS_PER_THREAD);
	others = atomic_load(&c.others);
	free(c.hit);
	return others;
}

Test(parallel, every_iteration_once)
{
	static const char *threads[] = { "1", "2", "3", "8" };

	for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
		setenv("BURN_THREADS", threads[t], 1);
		cover(0, 0);
		cover(5, 4);
		cover(0, 1);
		cover(-7, 3);
		cover(0, 7);
		cover(100, 1100);
		cover(INT64_MAX - 9, INT64_MAX);
		for (int r = 0; r < 200; r++)
			cover(0, 1 + r % 37);
	}
}

/* The pool works: with enough work per chunk, some chunk runs on a
 * worker (over many tries: a busy machine may leave the caller alone
 * for a while). */
static void
slow(void *ctx, int64_t lo, int64_t hi)
{
	Count *c = ctx;

	usleep(2000);
	count(c, lo, hi);
}

Test(parallel, workers_take_part)
{
	int others = 0;

	setenv("BURN_THREADS", "4", 1);
	for (int r = 0; r < 50 && !others; r++) {
		Count c = { .base = 0, .caller = pthread_self() };
		c.hit = calloc(64, sizeof *c.hit);
		burn_parallel_for(slow, &c, 0, 64);
		for (int i = 0; i < 64; i++)
			cr_assert_eq(atomic_load(&c.hit[i]), 1);
		others = atomic_load(&c.others);
		free(c.hit);
	}
	cr_assert_gt(others, 0, "no chunk ever ran on a worker");
}

/* A loop inside a chunk: the pool is busy, so it runs serially. */
static void
outer(void *ctx, int64_t lo, int64_t hi)
{
	for (int64_t i = lo; i < hi; i++)
		cover(i * 100, i * 100 + 50);
	(void)ctx;
}

Test(parallel, nested_loops_finish)
{
	setenv("BURN_THREADS", "4", 1);
	burn_parallel_for(outer, NULL, 0, 16);
}

static void *
hammer(void *arg)
{
	for (int r = 0; r < 300; r++)
		cover(0, 10 + r % 50);
	return arg;
}

Test(parallel, many_callers_at_once)
{
	pthread_t t[8];

	setenv("BURN_THREADS", "3", 1);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, hammer, NULL), 0);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
}

Test(parallel, child_after_fork)
{
	pid_t pid;
	int st;

	setenv("BURN_THREADS", "4", 1);
	cover(0, 100);              /* the parent's pool exists */
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int ok = 1;
		for (int r = 0; r < 20; r++) {
			Count c = { .base = 0, .caller = pthread_self() };
			c.hit = calloc(64, sizeof *c.hit);
			burn_parallel_for(slow, &c, 0, 64);
			for (int i = 0; i < 64; i++)
				ok &= atomic_load(&c.hit[i]) == 1;
			free(c.hit);
		}
		_exit(ok ? 0 : 1);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's loops failed");
}

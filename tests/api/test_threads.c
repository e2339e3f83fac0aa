/*
 * test_threads.c - libburn contexts on several threads at once: each
 * thread makes its own context, records, compiles and runs the same
 * programs concurrently, and checks its values.  Built a second time with
 * -fsanitize=thread where that works (tests/CMakeLists.txt).  A plain
 * program (not Criterion, which forks): the threads must really overlap.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "burn.h"

enum { NTHREAD = 4, ITERS = 20 };

typedef struct Job {
	int id;
	int fails;
	long long compiles;
	char msg[256];
} Job;

static int
step(burn_ctx *c, Job *j, int64_t n, int it)
{
	burn_tensor *x, *a, *b, *d, *e, *f;
	float *r = malloc(sizeof *r * (size_t)n);
	burn_status rc;

	if (!r)
		return 1;
	rc = burn_arange(c, BURN_F32, -n / 2.0, n / 2.0, 1, &x);
	rc = rc ? rc : burn_mul_scalar(c, x, 0.01 * (j->id + 1), &a);
	rc = rc ? rc : burn_unary(c, "Erf", a, &b);
	rc = rc ? rc : burn_add_scalar(c, b, 1, &d);
	rc = rc ? rc : burn_mul(c, a, d, &e);
	rc = rc ? rc : burn_div_scalar(c, e, 2, &f);
	rc = rc ? rc : burn_read(c, f, r, sizeof *r * (size_t)n);
	if (rc) {
		snprintf(j->msg, sizeof j->msg, "thread %d: %s", j->id, burn_message(c));
		free(r);
		return 1;
	}
	for (int64_t i = 0; i < n; i++) {
		double v = (double)(float)((float)(-n / 2.0 + (double)i) * (float)(0.01 * (j->id + 1)));
		double ref = v * (erf(v) + 1) / 2;
		if (fabs(r[i] - ref) > 1e-5 + 1e-5 * fabs(ref)) {
			snprintf(j->msg, sizeof j->msg, "thread %d it %d: [%lld] %g, want %g",
			         j->id, it, (long long)i, r[i], ref);
			free(r);
			return 1;
		}
	}
	burn_release(x);
	burn_release(a);
	burn_release(b);
	burn_release(d);
	burn_release(e);
	burn_release(f);
	free(r);
	return 0;
}

static void *
worker(void *arg)
{
	Job *j = arg;
	burn_ctx *c;
	burn_options o = { .threads = 1, .cache_dir = "" };
	burn_stats s;

	if (burn_ctx_create(&o, &c)) {
		j->fails++;
		return NULL;
	}
	for (int it = 0; it < ITERS && !j->fails; it++)
		j->fails += step(c, j, 1000 + 24 * (it % 2), it);
	burn_get_stats(c, &s);
	j->compiles = s.compiles;
	burn_ctx_destroy(c);
	return NULL;
}

int
main(void)
{
	pthread_t t[NTHREAD];
	Job job[NTHREAD] = { 0 };
	int bad = 0;

	for (int i = 0; i < NTHREAD; i++) {
		job[i].id = i;
		if (pthread_create(&t[i], NULL, worker, &job[i])) {
			fprintf(stderr, "cannot start thread %d\n", i);
			return 1;
		}
	}
	for (int i = 0; i < NTHREAD; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < NTHREAD; i++) {
		if (job[i].fails) {
			fprintf(stderr, "FAIL %s\n", job[i].msg);
			bad = 1;
		}
		/* two shapes alternate: two programs per context */
		if (!job[i].fails && job[i].compiles != 2) {
			fprintf(stderr, "FAIL thread %d compiled %lld programs, not 2\n", i,
			        job[i].compiles);
			bad = 1;
		}
	}
	if (!bad)
		printf("ok: %d threads x %d realisations\n", NTHREAD, ITERS);
	return bad;
}

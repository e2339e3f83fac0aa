/*
 * test_simt.c - the interpreter's GPU semantics (ir/kir_interp.c, "Threads
 * and blocks"): blocks, threads with private variables, shared memory,
 * barriers, and the checks that make a wrong GPU schedule fail on a CPU:
 * shared-memory races, barriers under divergent control flow, reads of
 * unwritten shared memory.  The interleaving is random per run; the tests
 * repeat each kernel under many seeds.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/kir.h"
#include "kir_fixture.h"
#include "passes/legalize.h"


#define NB 4      /* blocks */
#define NT 64     /* threads per block */
#define LOG_NT 6

enum { SEEDED_NONE, SEEDED_NO_BARRIER, SEEDED_DIVERGENT, SEEDED_NO_FILL };

/*
 * y[b] = sum of x[b*NT .. b*NT+NT-1]: the classic shared-memory tree
 * reduction.  One block per output, each thread loads one element into
 * shared memory, then log2(NT) halving steps, each followed by a barrier.
 * `bug` seeds one of the errors a schedule can make.
 */
static KKernel *
k_block_sum(T *t, int bug)
{
	KB *kb = &t->kb;
	int x, y, sh, b, th, j, s;
	KRef tid, half;

	kb_begin(kb, &t->p, "block_sum", "ReduceSum");
	x = kb_buf_value(kb, 0, DT_F32, NB * NT, KA_READ);
	y = kb_buf_value(kb, 1, DT_F32, NB, KA_WRITE);
	sh = kb_buf(kb, DT_F32, NT, -1, KS_SHARED, KA_RW);
	b = kb_for(kb, "b", kb_idx(kb, 0), kb_idx(kb, NB), KF_BLOCK_X);
	th = kb_for(kb, "t", kb_idx(kb, 0), kb_idx(kb, NT), KF_THREAD_X);
	tid = kb_get(kb, th);
	if (bug != SEEDED_NO_FILL)
		kb_store(kb, sh, tid, kb_load(kb, x, kb_bin(kb, KO_ADD,
		         kb_bin(kb, KO_MUL, kb_get(kb, b), kb_idx(kb, NT)), tid)));
	kb_barrier(kb);
	s = kb_var(kb, DT_I64, "s");
	j = kb_for(kb, "j", kb_idx(kb, 0), kb_idx(kb, LOG_NT), 0);
	kb_set(kb, s, kb_bin(kb, KO_SHR, kb_idx(kb, NT / 2), kb_get(kb, j)));
	half = kb_get(kb, s);
	kb_if(kb, kb_bin(kb, KO_LT, tid, half));
	kb_store(kb, sh, tid, kb_bin(kb, KO_ADD, kb_load(kb, sh, tid),
	         kb_load(kb, sh, kb_bin(kb, KO_ADD, tid, half))));
	if (bug == SEEDED_DIVERGENT)
		kb_barrier(kb);
	kb_end(kb);
	if (bug != SEEDED_NO_BARRIER && bug != SEEDED_DIVERGENT)
		kb_barrier(kb);
	kb_end(kb);
	kb_if(kb, kb_bin(kb, KO_EQ, tid, kb_idx(kb, 0)));
	kb_store(kb, y, kb_get(kb, b), kb_load(kb, sh, kb_idx(kb, 0)));
	kb_end(kb);
	kb_end(kb);
	kb_end(kb);
	return kb_finish(kb);
}

static int
run(T *t, KKernel *k, float *x, float *y, unsigned seed)
{
	void *bufs[2] = { x, y };
	char s[32];

	snprintf(s, sizeof s, "%u", seed);
	setenv("BURN_SIMT_SEED", s, 1);
	/* the interpreter runs legalised kernels (the shifts of the tree) */
	if (kir_legalize(&t->c, &t->p, k, NULL) != BURN_OK)
		return t->c.code ? t->c.code : BURN_ERR_INTERNAL;
	return kir_interp(&t->c, k, bufs);
}

static void
fill(float *x)
{
	for (int i = 0; i < NB * NT; i++)
		x[i] = (float)(i % 7) - 3.0f + (float)i / 64.0f;
}

Test(simt, block_reduction_is_exact_under_every_order)
{
	T t;
	float x[NB * NT], y[NB];
	KKernel *k;

	t_init(&t);
	fill(x);
	k = k_block_sum(&t, SEEDED_NONE);
	cr_assert_eq(kir_verify(&t.c, k), BURN_OK, "%s", t.c.msg);
	for (unsigned seed = 1; seed <= 20; seed++) {
		memset(y, 0, sizeof y);
		cr_assert_eq(run(&t, k, x, y, seed), BURN_OK, "seed %u: %s", seed, t.c.msg);
		for (int b = 0; b < NB; b++) {
			double ref = 0;
			for (int i = 0; i < NT; i++)
				ref += x[b * NT + i];
			cr_assert_float_eq(y[b], (float)ref, 1e-3, "block %d", b);
		}
	}
	arena_free(&t.a);
}

/* The seeded bug of issue 7's "done when": delete a barrier from the
 * reduction and the interpreter must report a race. */
Test(simt, deleted_barrier_is_a_race)
{
	T t;
	float x[NB * NT], y[NB];
	KKernel *k;

	t_init(&t);
	fill(x);
	k = k_block_sum(&t, SEEDED_NO_BARRIER);
	for (unsigned seed = 1; seed <= 5; seed++) {
		cr_assert_neq(run(&t, k, x, y, seed), BURN_OK, "seed %u: race not found", seed);
		cr_assert(strstr(t.c.msg, "shared memory race"), "%s", t.c.msg);
		cr_assert(strstr(t.c.msg, "BURN_SIMT_SEED="), "%s", t.c.msg);
	}
	arena_free(&t.a);
}

Test(simt, barrier_under_divergent_control_flow)
{
	T t;
	float x[NB * NT], y[NB];

	t_init(&t);
	fill(x);
	cr_assert_neq(run(&t, k_block_sum(&t, SEEDED_DIVERGENT), x, y, 3), BURN_OK);
	cr_assert(strstr(t.c.msg, "divergent") || strstr(t.c.msg, "different barriers"),
	          "%s", t.c.msg);
	arena_free(&t.a);
}

Test(simt, unwritten_shared_memory)
{
	T t;
	float x[NB * NT], y[NB];

	t_init(&t);
	fill(x);
	cr_assert_neq(run(&t, k_block_sum(&t, SEEDED_NO_FILL), x, y, 3), BURN_OK);
	cr_assert(strstr(t.c.msg, "no thread has written"), "%s", t.c.msg);
	arena_free(&t.a);
}

/*
 * Every thread of a 2-D block writes its flat index to out[0] (a global
 * write race, which the interpreter does not police): the value left is
 * the last thread run, so different seeds must leave different values if
 * the order is really drawn at random.  Also checks hardware indices:
 * ids[ty*8+tx] = ty*100 + tx read through KE_SPECIAL, block index through
 * KX_BLOCK_X.
 */
Test(simt, random_order_and_hardware_indices)
{
	T t;
	KB *kb = &t.kb;
	int out, ids, b, ty, tx, distinct = 0;
	int64_t seen[16], o[1], id[3 * 32];
	void *bufs[2] = { o, id };
	KRef flat;
	KKernel *k;

	t_init(&t);
	kb_begin(kb, &t.p, "order", "test");
	out = kb_buf_value(kb, 0, DT_I64, 1, KA_WRITE);
	ids = kb_buf_value(kb, 1, DT_I64, 3 * 32, KA_WRITE);
	b = kb_for(kb, "b", kb_idx(kb, 0), kb_idx(kb, 3), KF_BLOCK_X);
	ty = kb_for(kb, "ty", kb_idx(kb, 0), kb_idx(kb, 4), KF_THREAD_Y);
	tx = kb_for(kb, "tx", kb_idx(kb, 0), kb_idx(kb, 8), KF_THREAD_X);
	flat = kb_bin(kb, KO_ADD, kb_bin(kb, KO_MUL, kb_get(kb, ty), kb_idx(kb, 8)),
	              kb_get(kb, tx));
	kb_store(kb, out, kb_idx(kb, 0), flat);
	kb_store(kb, ids, kb_bin(kb, KO_ADD, kb_bin(kb, KO_MUL, kb_special(kb, KX_BLOCK_X),
	         kb_idx(kb, 32)), flat),
	         kb_bin(kb, KO_ADD, kb_bin(kb, KO_MUL, kb_special(kb, KX_THREAD_Y),
	                kb_idx(kb, 100)), kb_special(kb, KX_THREAD_X)));
	(void)b;
	kb_end(kb);
	kb_end(kb);
	kb_end(kb);
	k = kb_finish(kb);
	cr_assert_eq(kir_verify(&t.c, k), BURN_OK, "%s", t.c.msg);
	cr_assert_eq(kir_legalize(&t.c, &t.p, k, NULL), BURN_OK, "%s", t.c.msg);
	for (unsigned seed = 1; seed <= 16; seed++) {
		char s[16];
		snprintf(s, sizeof s, "%u", seed);
		setenv("BURN_SIMT_SEED", s, 1);
		cr_assert_eq(kir_interp(&t.c, k, bufs), BURN_OK, "%s", t.c.msg);
		seen[seed - 1] = o[0];
		for (int i = 0; i < 3 * 32; i++)
			cr_assert_eq(id[i], (i % 32) / 8 * 100 + i % 8, "ids[%d] = %lld", i,
			             (long long)id[i]);
	}
	for (int i = 0; i < 16; i++) {
		int j;
		for (j = 0; j < i && seen[j] != seen[i]; j++)
			;
		distinct += j == i;
	}
	cr_assert_geq(distinct, 4, "only %d distinct last threads in 16 seeds", distinct);
	arena_free(&t.a);
}

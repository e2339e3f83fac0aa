/*
 * test_rng.c - the random ops' generator (passes/rng.h): Philox4x32-10
 * built as kernel IR, run by the interpreter and rendered as C, against
 * the published known-answer vectors (Random123's kat_vectors, the
 * "philox4x32 10" lines); the unit draws; a node's values are a function
 * of seed and index.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "kir_fixture.h"
#include "passes/rng.h"

/* counter[4], key[2] -> result[4] */
static const uint32_t kat[][10] = {
	{ 0, 0, 0, 0, 0, 0,
	  0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 },
	{ 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
	  0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd },
	{ 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
	  0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 },
};

/* A kernel storing Philox(ctr, key) into a u32[4] buffer; the counter
 * comes from a u32[6] input buffer (counter, key), so nothing folds at
 * build time; the key from there too (loaded) or constants. */
static KKernel *k_philox(T *t, const uint32_t *key, int loaded)
{
	KB *kb = &t->kb;
	int in, o, w[4];
	KRef c[4], k0, k1;

	kb_begin(kb, &t->p, loaded ? "philox_loaded" : "philox", "");
	in = kb_buf_value(kb, 0, DT_U32, 6, KA_READ);
	o = kb_buf_value(kb, 1, DT_U32, 4, KA_WRITE);
	for (int j = 0; j < 4; j++)
		c[j] = kb_load(kb, in, kb_idx(kb, j));
	k0 = loaded ? kb_load(kb, in, kb_idx(kb, 4)) : kb_const_i(kb, DT_U32, key[0]);
	k1 = loaded ? kb_load(kb, in, kb_idx(kb, 5)) : kb_const_i(kb, DT_U32, key[1]);
	rng_philox(kb, c, k0, k1, w);
	for (int j = 0; j < 4; j++)
		kb_store(kb, o, kb_idx(kb, j), kb_get(kb, w[j]));
	return kb_finish(kb);
}

Test(rng, philox_known_answers)
{
	for (size_t v = 0; v < 2 * sizeof kat / sizeof kat[0]; v++) {
		T t;
		uint32_t ctr[6], out[4] = { 0 };
		void *bufs[2] = { ctr, out };
		KKernel *k;

		t_init(&t);
		memcpy(ctr, kat[v / 2], sizeof ctr);
		k = k_philox(&t, &kat[v / 2][4], (int)(v % 2));
		cr_assert_not_null(k);
		cr_assert_eq(kir_interp(&t.c, k, bufs), BURN_OK, "%s", t.c.msg);
		for (int j = 0; j < 4; j++)
			cr_expect_eq(out[j], kat[v / 2][6 + j], "vector %zu (key %s) word "
			             "%d: %08x, expected %08x", v / 2, v % 2 ? "loaded" :
			             "constant", j, out[j], kat[v / 2][6 + j]);
		t_fini(&t);
	}
}

/* The seed attribute's key: integers as themselves, others by bits. */
Test(rng, seed_key)
{
	cr_expect_eq(rng_seed_key(0), 0);
	cr_expect_eq(rng_seed_key(7), 7);
	cr_expect_eq(rng_seed_key(-1), UINT64_MAX);
	cr_expect_neq(rng_seed_key(1.5), rng_seed_key(1));
}

/*
 * test_attention.c - Attention, RotaryEmbedding and the losses
 * (passes/ops_attention.c, passes/ops_loss.c): what the ONNX node suite
 * does not cover (a bool mask with is_causal, causal offsets from
 * nonpad_kv_seqlen, out-of-range indices, bad shapes), with kernels run
 * through the kernel-IR interpreter against values worked out by hand.
 */
#include <criterion/criterion.h>
#include <math.h>
#include "node_harness.h"

/*
 * One head, head size 1, Q = K = 0: every score is equal, so the output is
 * the plain mean of the V rows that survive the mask.  A bool mask with
 * is_causal: row 0 keeps key 0 only; row 1 keeps keys 0 and 1 minus the
 * masked key 0, i.e. key 1.
 */
Test(attention, bool_mask_and_causal)
{
	T t;
	float q[2] = {0, 0}, k[3] = {0, 0, 0}, v[3] = {1, 2, 4}, y[2];
	unsigned char m[6] = {1, 1, 1, 0, 1, 1};
	int64_t dq[] = {1, 1, 2, 1}, dk[] = {1, 1, 3, 1}, dm[] = {2, 3};

	t_init(&t, 23);
	t_input(&t, DT_F32, 4, dq, q);
	t_input(&t, DT_F32, 4, dk, k);
	t_input(&t, DT_F32, 4, dk, v);
	t_input(&t, DT_BOOL, 2, dm, m);
	t_node(&t, "Attention", 1);
	t_attr_i(&t, "is_causal", 1);
	t_run1(&t, y);
	cr_assert_float_eq(y[0], 1, 1e-6);
	cr_assert_float_eq(y[1], 2, 1e-6);
	t_fini(&t);
}

/* nonpad_kv_seqlen without a past: keys past the valid length are masked,
 * and the causal frontier is bottom-right aligned to it (offset = 2 - 1). */
Test(attention, nonpad_causal_offset)
{
	T t;
	float q[1] = {0}, k[3] = {0, 0, 0}, v[3] = {1, 3, 100}, y[1];
	int64_t nonpad[1] = {2};
	int64_t dq[] = {1, 1, 1, 1}, dk[] = {1, 1, 3, 1}, dn[] = {1};

	t_init(&t, 24);
	t_input(&t, DT_F32, 4, dq, q);
	t_input(&t, DT_F32, 4, dk, k);
	t_input(&t, DT_F32, 4, dk, v);
	t_absent(&t);
	t_absent(&t);
	t_absent(&t);
	t_input(&t, DT_I64, 1, dn, nonpad);
	t_node(&t, "Attention", 1);
	t_attr_i(&t, "is_causal", 1);
	t_run1(&t, y);
	cr_assert_float_eq(y[0], 2, 1e-6);
	t_fini(&t);
}

/* Bad shapes are errors, not crashes. */
Test(attention, bad_shapes)
{
	float x[64];
	int64_t dq[] = {1, 3, 2, 4}, dk[] = {1, 2, 2, 4}, d3[] = {1, 2, 8};
	T t;

	t_init(&t, 23);   /* 3 query heads over 2 kv heads */
	t_input(&t, DT_F32, 4, dq, x);
	t_input(&t, DT_F32, 4, dk, x);
	t_input(&t, DT_F32, 4, dk, x);
	t_node(&t, "Attention", 1);
	cr_assert_eq(t_infer(&t), BURN_ERR_SHAPE);
	t_fini(&t);

	t_init(&t, 23);   /* 3-D without the head counts */
	t_input(&t, DT_F32, 3, d3, x);
	t_input(&t, DT_F32, 3, d3, x);
	t_input(&t, DT_F32, 3, d3, x);
	t_node(&t, "Attention", 1);
	cr_assert_eq(t_infer(&t), BURN_ERR_INVALID);
	t_fini(&t);
}

/* A position id outside the cache is clamped to its last row. */
Test(rotary, position_clamped)
{
	T t;
	float x[2] = {1, 0}, cs[2] = {1, 0}, sn[2] = {0, 1}, y[2];
	int64_t pos[1] = {7};
	int64_t dx[] = {1, 1, 1, 2}, dc[] = {2, 1}, dp[] = {1, 1};

	t_init(&t, 23);
	t_input(&t, DT_F32, 4, dx, x);
	t_input(&t, DT_F32, 2, dc, cs);
	t_input(&t, DT_F32, 2, dc, sn);
	t_input(&t, DT_I64, 2, dp, pos);
	t_node(&t, "RotaryEmbedding", 1);
	t_run1(&t, y);   /* row 1: cos 0, sin 1 rotates (1, 0) to (0, 1) */
	cr_assert_float_eq(y[0], 0, 1e-6);
	cr_assert_float_eq(y[1], 1, 1e-6);
	t_fini(&t);
}

/* NLL mean with weights and ignore_index: sum(-x[t] w[t]) / sum(w[t]). */
Test(loss, nll_weighted_mean)
{
	T t;
	float x[6] = {-1, -2, -3, -4, -5, -6}, w[2] = {2, 3}, y[1];
	int64_t tg[3] = {0, 1, 1};
	int64_t dx[] = {3, 2}, dt[] = {3}, dw[] = {2};

	t_init(&t, 22);
	t_input(&t, DT_F32, 2, dx, x);
	t_input(&t, DT_I64, 1, dt, tg);
	t_input(&t, DT_F32, 1, dw, w);
	t_node(&t, "NegativeLogLikelihoodLoss", 1);
	t_attr_i(&t, "ignore_index", 0);
	t_run1(&t, y);   /* (4*3 + 6*3) / (3 + 3) */
	cr_assert_float_eq(y[0], 5, 1e-6);
	t_fini(&t);
}

/*
 * test_reduce.c - the reduction family (passes/ops_reduce.c): what the ONNX
 * node suite does not cover (old opsets, empty reductions, ties, errors),
 * with kernels run through the kernel-IR interpreter against values worked
 * out by hand.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include "node_harness.h"

/* Before opset 18 axes is an attribute; keepdims=0 drops the axis. */
Test(reduce, sum_attr_axes_opset11)
{
	T t;
	float x[6] = {1, 2, 3, 4, 5, 6}, y[3];
	int64_t d[] = {2, 3}, ax[] = {0};

	t_init(&t, 11);
	t_input(&t, DT_F32, 2, d, x);
	t_node(&t, "ReduceSum", 1);
	t_attr_ints(&t, "axes", 1, ax);
	t_attr_i(&t, "keepdims", 0);
	cr_assert_eq(t_run1(&t, y), 1);
	cr_assert_eq(GV(t.g, t.out[0])->rank, 1);
	cr_assert_eq(GV(t.g, t.out[0])->dim[0], 3);
	cr_assert_float_eq(y[0], 5, 1e-6);
	cr_assert_float_eq(y[2], 9, 1e-6);
	t_fini(&t);
}

/* Reducing an empty axis gives the identity: -inf for max, 1 for prod. */
Test(reduce, empty_identities)
{
	static const char *ops[] = {"ReduceMax", "ReduceProd", "ReduceSum", "ReduceMin"};
	static const float want[] = {-INFINITY, 1, 0, INFINITY};
	float x[1], y[3];
	int64_t d[] = {0, 3}, ax[] = {0};

	for (int i = 0; i < 4; i++) {
		T t;
		t_init(&t, 18);
		t_input(&t, DT_F32, 2, d, x);
		t_const_ints(&t, 1, ax);
		t_node(&t, ops[i], 1);
		cr_assert_eq(t_run1(&t, y), 1);
		for (int j = 0; j < 3; j++)
			cr_assert(y[j] == want[i], "%s: %g", ops[i], y[j]);
		t_fini(&t);
	}
}

/* noop_with_empty_axes passes the input through. */
Test(reduce, noop_empty_axes)
{
	T t;
	float x[4] = {1, 2, 3, 4}, y[4];
	int64_t d[] = {2, 2};

	t_init(&t, 18);
	t_input(&t, DT_F32, 2, d, x);
	t_node(&t, "ReduceMax", 1);
	t_attr_i(&t, "noop_with_empty_axes", 1);
	cr_assert_eq(t_run1(&t, y), 1);
	cr_assert_eq(GV(t.g, t.out[0])->rank, 2);
	for (int i = 0; i < 4; i++)
		cr_assert_float_eq(y[i], x[i], 0);
	t_fini(&t);
}

/* ReduceLogSumExp is stable for large inputs. */
Test(reduce, logsumexp_large)
{
	T t;
	float x[2] = {1000, 1000}, y[1];
	int64_t d[] = {2};

	t_init(&t, 18);
	t_input(&t, DT_F32, 1, d, x);
	t_node(&t, "ReduceLogSumExp", 1);
	cr_assert_eq(t_run1(&t, y), 1);
	cr_assert_float_eq(y[0], 1000 + logf(2), 1e-3);
	t_fini(&t);
}

Test(reduce, argmax_ties)
{
	float x[4] = {3, 1, 3, 0};
	int64_t d[] = {4}, y;

	for (int last = 0; last < 2; last++) {
		T t;
		t_init(&t, 13);
		t_input(&t, DT_F32, 1, d, x);
		t_node(&t, "ArgMax", 1);
		t_attr_i(&t, "select_last_index", last);
		cr_assert_eq(t_run1(&t, &y), 1);
		cr_assert_eq(GV(t.g, t.out[0])->dtype, DT_I64);
		cr_assert_eq(y, last ? 2 : 0);
		t_fini(&t);
	}
}

/* Opset < 13 Softmax flattens to 2-D at axis 1: one row of 4 here. */
Test(reduce, softmax_coerced_opset11)
{
	T t;
	float x[4] = {0, 0, 0, 0}, y[4];
	int64_t d[] = {1, 2, 2};

	t_init(&t, 11);
	t_input(&t, DT_F32, 3, d, x);
	t_node(&t, "Softmax", 1);
	cr_assert_eq(infer_same(&t.c, t.g, &t.g->node[t.node]), BURN_OK);
	cr_assert_eq(t_run1(&t, y), 1);
	for (int i = 0; i < 4; i++)
		cr_assert_float_eq(y[i], 0.25f, 1e-6);
	t_fini(&t);
}

Test(reduce, cumsum_reverse_exclusive)
{
	T t;
	int32_t x[4] = {1, 2, 3, 4}, y[4], want[4] = {9, 7, 4, 0};
	int64_t d[] = {4}, ax[] = {0};

	t_init(&t, 14);
	t_input(&t, DT_I32, 1, d, x);
	t_const_ints(&t, 1, ax);
	t_node(&t, "CumSum", 1);
	t_attr_i(&t, "reverse", 1);
	t_attr_i(&t, "exclusive", 1);
	cr_assert_eq(infer_same(&t.c, t.g, &t.g->node[t.node]), BURN_OK);
	cr_assert_eq(t_run1(&t, y), 1);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(y[i], want[i]);
	t_fini(&t);
}

/* Equal values come out lower index first, for largest and smallest. */
Test(reduce, topk_ties)
{
	float x[5] = {2, 5, 2, 5, 1}, v[3];
	int64_t d[] = {5}, k[] = {3}, ix[3];
	static const int64_t want[2][3] = {{4, 0, 2}, {1, 3, 0}};

	for (int largest = 0; largest < 2; largest++) {
		T t;
		t_init(&t, 11);
		t_input(&t, DT_F32, 1, d, x);
		t_const_ints(&t, 1, k);
		t_node(&t, "TopK", 2);
		t_attr_i(&t, "largest", largest);
		cr_assert_eq(t_run(&t, (void *[]){ v, ix }), 1);
		for (int i = 0; i < 3; i++) {
			cr_assert_eq(ix[i], want[largest][i]);
			cr_assert_float_eq(v[i], x[want[largest][i]], 0);
		}
		t_fini(&t);
	}
}

Test(reduce, errors)
{
	T t;
	float x[6] = {0};
	int64_t d[] = {2, 3}, ax[] = {2}, k[] = {4};

	t_init(&t, 18);
	t_input(&t, DT_F32, 2, d, x);
	t_const_ints(&t, 1, ax);
	t_node(&t, "ReduceSum", 1);
	cr_assert_eq(t_infer(&t), BURN_ERR_INVALID);
	t_fini(&t);

	t_init(&t, 11);
	t_input(&t, DT_F32, 2, d, x);
	t_const_ints(&t, 1, k);
	t_node(&t, "TopK", 2);
	cr_assert_eq(t_infer(&t), BURN_ERR_INVALID);
	t_fini(&t);

	/* axes that are not constant cannot be lowered */
	t_init(&t, 18);
	t_input(&t, DT_F32, 2, d, x);
	t_input(&t, DT_I64, 1, (int64_t[]){1}, ax);
	t_node(&t, "ReduceSum", 1);
	cr_assert_neq(t_infer(&t), BURN_OK);
	t_fini(&t);

	/* GroupNormalization with groups that do not divide the channels */
	{
		float s[3] = {1, 1, 1};
		int64_t d3[] = {3};
		t_init(&t, 21);
		t_input(&t, DT_F32, 2, d, x);
		t_input(&t, DT_F32, 1, d3, s);
		t_input(&t, DT_F32, 1, d3, s);
		t_node(&t, "GroupNormalization", 1);
		t_attr_i(&t, "num_groups", 2);
		cr_assert_eq(t_infer(&t), BURN_ERR_INVALID);
		t_fini(&t);
	}
}

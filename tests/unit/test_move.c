/*
 * test_move.c - the data-movement family (passes/ops_move.c): inference
 * errors on bad shapes and attributes, the constants made by Shape, Size and
 * Constant, and kernels run through the kernel-IR interpreter against values
 * worked out by hand (the spec's examples where it has them).
 */
#include <criterion/criterion.h>
#include <string.h>
#include "node_harness.h"

/* ---- inference ------------------------------------------------------- */

Test(move, reshape_zero_and_minus_one)
{
	T t;

	t_init(&t, 14);
	t_input(&t, DT_F32, 3, I64S(2, 3, 4), NULL);
	t_const_ints(&t, 3, I64S(0, -1, 2));
	t_node(&t, "Reshape", 1);
	cr_assert_eq(t_infer(&t), BURN_OK, "%s", t.c.msg);
	cr_assert_eq(t_y(&t, 0)->rank, 3);
	cr_assert_eq(t_y(&t, 0)->dim[0], 2);
	cr_assert_eq(t_y(&t, 0)->dim[1], 6);
	cr_assert_eq(t_y(&t, 0)->dim[2], 2);
	t_fini(&t);
}

Test(move, reshape_bad_count)
{
	T t;

	t_init(&t, 14);
	t_input(&t, DT_F32, 2, I64S(2, 3), NULL);
	t_const_ints(&t, 2, I64S(4, -1));
	t_node(&t, "Reshape", 1);
	cr_assert_eq(t_infer(&t), BURN_ERR_SHAPE);
	t_fini(&t);
}

Test(move, reshape_needs_constant_shape)
{
	T t;

	t_init(&t, 14);
	t_input(&t, DT_F32, 2, I64S(2, 3), NULL);
	t_input(&t, DT_I64, 1, I64S(2), NULL);
	t_node(&t, "Reshape", 1);
	cr_assert_eq(t_infer(&t), BURN_ERR_UNSUPPORTED);
	cr_assert(strstr(t.c.msg, "constant"), "%s", t.c.msg);
	t_fini(&t);
}

Test(move, squeeze_non_one)
{
	T t;

	t_init(&t, 11);
	t_input(&t, DT_F32, 3, I64S(1, 3, 1), NULL);
	t_node(&t, "Squeeze", 1);
	t_attr_ints(&t, "axes", 1, I64S(1));
	cr_assert_eq(t_infer(&t), BURN_ERR_SHAPE);
	t_fini(&t);
}

Test(move, unsqueeze_rank_limit)
{
	T t;

	t_init(&t, 13);
	t_input(&t, DT_F32, 7, I64S(1, 1, 1, 1, 1, 1, 1), NULL);
	t_const_ints(&t, 2, I64S(0, 1));
	t_node(&t, "Unsqueeze", 1);
	cr_assert_eq(t_infer(&t), BURN_ERR_UNSUPPORTED);
	t_fini(&t);
}

Test(move, transpose_bad_perm)
{
	T t;

	t_init(&t, 13);
	t_input(&t, DT_F32, 3, I64S(1, 2, 3), NULL);
	t_node(&t, "Transpose", 1);
	t_attr_ints(&t, "perm", 3, I64S(0, 1, 1));
	cr_assert_eq(t_infer(&t), BURN_ERR_INVALID);
	t_fini(&t);
}

Test(move, split_uneven_num_outputs)
{
	T t;

	t_init(&t, 18);
	t_input(&t, DT_F32, 1, I64S(7), NULL);
	t_node(&t, "Split", 4);
	t_attr_i(&t, "num_outputs", 4);
	cr_assert_eq(t_infer(&t), BURN_OK, "%s", t.c.msg);
	cr_assert_eq(t_y(&t, 0)->dim[0], 2);
	cr_assert_eq(t_y(&t, 3)->dim[0], 1);
	t_fini(&t);
}

Test(move, tile_overflow)
{
	T t;

	t_init(&t, 13);
	t_input(&t, DT_F32, 1, I64S(1 << 20), NULL);
	t_const_ints(&t, 1, I64S((int64_t)1 << 50));
	t_node(&t, "Tile", 1);
	cr_assert_neq(t_infer(&t), BURN_OK);
	t_fini(&t);
}

Test(move, shape_start_end)
{
	T t;
	Value *y;

	t_init(&t, 21);
	t_input(&t, DT_F32, 4, I64S(2, 3, 4, 5), NULL);
	t_node(&t, "Shape", 1);
	t_attr_i(&t, "start", -3);
	t_attr_i(&t, "end", -1);
	cr_assert_eq(t_infer(&t), BURN_OK, "%s", t.c.msg);
	y = t_y(&t, 0);
	cr_assert(y->data);
	cr_assert_eq(y->rank, 1);
	cr_assert_eq(y->dim[0], 2);
	cr_assert_eq(value_get_i(y, 0), 3);
	cr_assert_eq(value_get_i(y, 1), 4);
	t_fini(&t);
}

Test(move, constant_value_ints)
{
	T t;
	Value *y;

	t_init(&t, 13);
	t_node(&t, "Constant", 1);
	t_attr_ints(&t, "value_ints", 3, I64S(5, -6, 7));
	cr_assert_eq(t_infer(&t), BURN_OK, "%s", t.c.msg);
	y = t_y(&t, 0);
	cr_assert_eq(y->dtype, DT_I64);
	cr_assert_eq(y->dim[0], 3);
	cr_assert_eq(value_get_i(y, 1), -6);
	t_fini(&t);
}

Test(move, lower_none_fails)
{
	T t;
	Lower lw = { 0 };  /* new fields (epi) must be NULL */

	t_init(&t, 13);
	t_input(&t, DT_F32, 1, I64S(2), NULL);
	t_node(&t, "Size", 1);
	lw.ctx = &t.c;
	lw.g = t.g;
	lw.prog = NULL;
	cr_assert_eq(lower_none(&lw, t_n(&t)), BURN_ERR_INTERNAL);
	t_fini(&t);
}

/* ---- kernels ---------------------------------------------------------- */

Test(move, slice_negative_step)
{
	T t;
	float x[8] = {0, 1, 2, 3, 4, 5, 6, 7}, y[8];

	/* x[2, 4] rows, [::-1] on both axes of x[:, -1:0:-2] */
	t_init(&t, 13);
	t_input(&t, DT_F32, 2, I64S(2, 4), x);
	t_const_ints(&t, 2, I64S(-1, -1));
	t_const_ints(&t, 2, I64S(INT64_MIN, 0));
	t_const_ints(&t, 2, I64S(0, 1));
	t_const_ints(&t, 2, I64S(-1, -2));
	t_node(&t, "Slice", 1);
	t_run1(&t, y);
	cr_assert_eq(t_y(&t, 0)->dim[0], 2);
	cr_assert_eq(t_y(&t, 0)->dim[1], 2);
	cr_assert_eq(y[0], 7);
	cr_assert_eq(y[1], 5);
	cr_assert_eq(y[2], 3);
	cr_assert_eq(y[3], 1);
	t_fini(&t);
}

Test(move, pad_reflect)
{
	T t;
	int32_t x[3] = {1, 2, 3}, y[9], want[9] = {2, 3, 2, 1, 2, 3, 2, 1, 2};

	t_init(&t, 18);
	t_input(&t, DT_I32, 1, I64S(3), x);
	t_const_ints(&t, 2, I64S(3, 3));
	t_node(&t, "Pad", 1);
	t_attr_s(&t, "mode", "reflect");
	t_run1(&t, y);
	for (int i = 0; i < 9; i++)
		cr_assert_eq(y[i], want[i], "at %d: %d", i, y[i]);
	t_fini(&t);
}

Test(move, gather_negative_index)
{
	T t;
	float x[6] = {1, 2, 3, 4, 5, 6}, y[4];
	int64_t idx[2] = {-1, 0};

	t_init(&t, 13);
	t_input(&t, DT_F32, 2, I64S(2, 3), x);
	t_input(&t, DT_I64, 1, I64S(2), idx);
	t_node(&t, "Gather", 1);
	t_attr_i(&t, "axis", 1);
	t_run1(&t, y);
	cr_assert_eq(y[0], 3);
	cr_assert_eq(y[1], 1);
	cr_assert_eq(y[2], 6);
	cr_assert_eq(y[3], 4);
	t_fini(&t);
}

Test(move, gathernd_batch_dims)
{
	T t;
	int32_t x[8] = {0, 1, 2, 3, 4, 5, 6, 7}, y[4];
	int64_t idx[2] = {1, 0};

	/* the spec's example 5: data [2,2,2], indices [[1],[0]], batch_dims 1 */
	t_init(&t, 13);
	t_input(&t, DT_I32, 3, I64S(2, 2, 2), x);
	t_input(&t, DT_I64, 2, I64S(2, 1), idx);
	t_node(&t, "GatherND", 1);
	t_attr_i(&t, "batch_dims", 1);
	t_run1(&t, y);
	cr_assert_eq(y[0], 2);
	cr_assert_eq(y[1], 3);
	cr_assert_eq(y[2], 4);
	cr_assert_eq(y[3], 5);
	t_fini(&t);
}

Test(move, scatter_elements_duplicate_add)
{
	T t;
	float x[5] = {1, 2, 3, 4, 5}, u[2] = {1.1f, 2.1f}, y[5];
	int64_t idx[2] = {1, 1};

	t_init(&t, 18);
	t_input(&t, DT_F32, 2, I64S(1, 5), x);
	t_input(&t, DT_I64, 2, I64S(1, 2), idx);
	t_input(&t, DT_F32, 2, I64S(1, 2), u);
	t_node(&t, "ScatterElements", 1);
	t_attr_i(&t, "axis", 1);
	t_attr_s(&t, "reduction", "add");
	t_run1(&t, y);
	cr_assert_float_eq(y[1], 5.2f, 1e-6);
	cr_assert_eq(y[4], 5);
	t_fini(&t);
}

Test(move, depth_to_space_crd)
{
	T t;
	float x[8], y[8];

	/* [1, 4, 1, 2] -> [1, 1, 2, 4]: out[0,0,i,w*2+j] = x[0, i*2+j, 0, w] */
	for (int i = 0; i < 8; i++)
		x[i] = (float)i;
	t_init(&t, 13);
	t_input(&t, DT_F32, 4, I64S(1, 4, 1, 2), x);
	t_node(&t, "DepthToSpace", 1);
	t_attr_i(&t, "blocksize", 2);
	t_attr_s(&t, "mode", "CRD");
	t_run1(&t, y);
	/* row 0: ch 0,1 interleaved; row 1: ch 2,3 */
	float want[8] = {0, 2, 1, 3, 4, 6, 5, 7};
	for (int i = 0; i < 8; i++)
		cr_assert_eq(y[i], want[i], "at %d: %g", i, y[i]);
	t_fini(&t);
}

Test(move, range_int_negative_delta)
{
	T t;
	int32_t s = 10, l = 6, d = -3, y[2];

	t_init(&t, 11);
	t_const(&t, DT_I32, 0, NULL, &s);
	t_const(&t, DT_I32, 0, NULL, &l);
	t_const(&t, DT_I32, 0, NULL, &d);
	t_node(&t, "Range", 1);
	t_run1(&t, y);
	cr_assert_eq(t_y(&t, 0)->dim[0], 2);
	cr_assert_eq(y[0], 10);
	cr_assert_eq(y[1], 7);
	t_fini(&t);
}

Test(move, onehot_negative_axis)
{
	T t;
	float idx[2] = {1, -1}, vals[2] = {0, 5}, y[6];
	int64_t depth = 3;

	t_init(&t, 11);
	t_input(&t, DT_F32, 1, I64S(2), idx);
	t_const(&t, DT_I64, 0, NULL, &depth);
	t_input(&t, DT_F32, 1, I64S(2), vals);
	t_node(&t, "OneHot", 1);
	t_attr_i(&t, "axis", -2);
	t_run1(&t, y);
	/* output [3, 2]: column 0 is one-hot of 1, column 1 of -1 (= 2) */
	float want[6] = {0, 0, 5, 0, 0, 5};
	for (int i = 0; i < 6; i++)
		cr_assert_eq(y[i], want[i], "at %d: %g", i, y[i]);
	t_fini(&t);
}

Test(move, dropout_mask_all_true)
{
	T t;
	float x[3] = {1, 2, 3}, y[3];
	uint8_t m[3] = {0};
	void *outs[] = { y, m };

	t_init(&t, 13);
	t_input(&t, DT_F32, 1, I64S(3), x);
	t_absent(&t);
	t_absent(&t);
	t_node(&t, "Dropout", 2);
	t_run(&t, outs);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(y[i], x[i]);
		cr_assert_eq(m[i], 1);
	}
	t_fini(&t);
}

/* A step far beyond the dim takes one element and overflows nothing. */
Test(move, slice_huge_step)
{
	T t;
	float x[4] = {1, 2, 3, 4}, y[1];

	t_init(&t, 13);
	t_input(&t, DT_F32, 1, I64S(4), x);
	t_const_ints(&t, 1, I64S(1));
	t_const_ints(&t, 1, I64S(INT64_MAX));
	t_const_ints(&t, 1, I64S(0));
	t_const_ints(&t, 1, I64S(INT64_MAX));
	t_node(&t, "Slice", 1);
	t_run1(&t, y);
	cr_assert_eq(t_y(&t, 0)->dim[0], 1);
	cr_assert_eq(y[0], 2);
	t_fini(&t);
}

/* The distance from INT64_MIN to INT64_MAX does not fit in int64. */
Test(move, range_extreme_ints)
{
	T t;
	int64_t s = INT64_MIN, l = INT64_MAX, d = INT64_MAX;

	t_init(&t, 11);
	t_const(&t, DT_I64, 0, NULL, &s);
	t_const(&t, DT_I64, 0, NULL, &l);
	t_const(&t, DT_I64, 0, NULL, &d);
	t_node(&t, "Range", 1);
	cr_assert_eq(t_infer(&t), BURN_OK, "%s", t.c.msg);
	cr_assert_eq(t_y(&t, 0)->dim[0], 3);
	t_fini(&t);
}

Test(move, range_zero_delta)
{
	T t;
	float s = 0, l = 1, d = 0;

	t_init(&t, 11);
	t_const(&t, DT_F32, 0, NULL, &s);
	t_const(&t, DT_F32, 0, NULL, &l);
	t_const(&t, DT_F32, 0, NULL, &d);
	t_node(&t, "Range", 1);
	cr_assert_eq(t_infer(&t), BURN_ERR_INVALID);
	t_fini(&t);
}

Test(move, gather_elements_index_dim_too_big)
{
	T t;

	t_init(&t, 13);
	t_input(&t, DT_F32, 2, I64S(2, 2), NULL);
	t_input(&t, DT_I64, 2, I64S(3, 2), NULL);
	t_node(&t, "GatherElements", 1);
	t_attr_i(&t, "axis", 1);
	cr_assert_eq(t_infer(&t), BURN_ERR_SHAPE);
	t_fini(&t);
}

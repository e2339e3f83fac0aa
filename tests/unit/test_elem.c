/*
 * test_elem.c - the elementwise family (passes/ops_elem.c): inference
 * errors, and kernels run through the kernel-IR interpreter against values
 * worked out by hand (or by the ONNX reference for the tricky ones).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include "node_harness.h"

Test(elem, add_broadcast)
{
	T t;
	float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {10, 20, 30}, y[6];
	int64_t d23[] = {2, 3}, d3[] = {3};

	t_init(&t, 14);
	t_input(&t, DT_F32, 2, d23, a);
	t_input(&t, DT_F32, 1, d3, b);
	t_node(&t, "Add", 1);
	cr_assert_eq(t_run1(&t, y), 1);
	cr_assert_eq(t_y(&t, 0)->rank, 2);
	for (int i = 0; i < 6; i++)
		cr_assert_float_eq(y[i], a[i] + b[i % 3], 1e-6);
	t_fini(&t);
}

Test(elem, dtype_mismatch)
{
	T t;
	int64_t d[] = {2};

	t_init(&t, 14);
	t_input(&t, DT_F32, 1, d, NULL);
	t_input(&t, DT_I64, 1, d, NULL);
	t_node(&t, "Add", 1);
	cr_assert_eq(t_infer(&t), BURN_ERR_SHAPE);
	cr_assert(strstr(t.c.msg, "dtype mismatch f32 vs i64"), "%s", t.c.msg);
	t_fini(&t);
}

Test(elem, shape_mismatch)
{
	T t;
	int64_t a[] = {2, 3}, b[] = {4, 5};

	t_init(&t, 14);
	t_input(&t, DT_F32, 2, a, NULL);
	t_input(&t, DT_F32, 2, b, NULL);
	t_node(&t, "Mul", 1);
	cr_assert_eq(t_infer(&t), BURN_ERR_SHAPE);
	cr_assert(strstr(t.c.msg, "cannot broadcast"), "%s", t.c.msg);
	t_fini(&t);
}

/* float8 is supported (tests/unit/test_float8.c); float4 is not */
Test(elem, cast_float4_unsupported)
{
	T t;
	int64_t d[] = {2};

	t_init(&t, 21);
	t_input(&t, DT_F32, 1, d, NULL);
	t_node(&t, "Cast", 1);
	t_attr_i(&t, "to", 23);
	cr_assert_eq(t_infer(&t), BURN_ERR_UNSUPPORTED);
	cr_assert(strstr(t.c.msg, "float4e2m1"), "%s", t.c.msg);
	t_fini(&t);
}

Test(elem, sin_of_int)
{
	T t;
	int64_t d[] = {2};

	t_init(&t, 14);
	t_input(&t, DT_I32, 1, d, NULL);
	t_node(&t, "Sin", 1);
	cr_assert_eq(t_infer(&t), BURN_ERR_SHAPE);
	cr_assert(strstr(t.c.msg, "float"), "%s", t.c.msg);
	t_fini(&t);
}

/* Python-style modulo: the result takes the divisor's sign. */
Test(elem, mod_mixed_sign)
{
	T t;
	int32_t a[6] = {-4, 7, 5, 4, -7, 8}, b[6] = {2, -3, 8, -2, 3, 5}, y[6];
	int32_t want[6] = {0, -2, 5, 0, 2, 3};
	int64_t d[] = {6};

	t_init(&t, 13);
	t_input(&t, DT_I32, 1, d, a);
	t_input(&t, DT_I32, 1, d, b);
	t_node(&t, "Mod", 1);
	cr_assert_eq(t_run1(&t, y), 1);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(y[i], want[i], "at %d: %d", i, y[i]);
	t_fini(&t);
}

Test(elem, int_div_truncates_and_zero)
{
	T t;
	int32_t a[4] = {7, -7, 5, 3}, b[4] = {2, 2, 0, -2}, y[4];
	int32_t want[4] = {3, -3, 0, -1};
	int64_t d[] = {4};

	t_init(&t, 14);
	t_input(&t, DT_I32, 1, d, a);
	t_input(&t, DT_I32, 1, d, b);
	t_node(&t, "Div", 1);
	cr_assert_eq(t_run1(&t, y), 1);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(y[i], want[i], "at %d: %d", i, y[i]);
	t_fini(&t);
}

Test(elem, relu_keeps_nan)
{
	T t;
	float a[3] = {-1, NAN, 2}, y[3];
	int64_t d[] = {3};

	t_init(&t, 14);
	t_input(&t, DT_F32, 1, d, a);
	t_node(&t, "Relu", 1);
	cr_assert_eq(t_run1(&t, y), 1);
	cr_assert_float_eq(y[0], 0, 0);
	cr_assert(isnan(y[1]));
	cr_assert_float_eq(y[2], 2, 0);
	t_fini(&t);
}

Test(elem, clip_max_only)
{
	T t;
	float a[4] = {-5, 0, 5, 10}, hi = 4, y[4];
	int64_t d[] = {4};

	t_init(&t, 13);
	t_input(&t, DT_F32, 1, d, a);
	t_absent(&t);
	t_input(&t, DT_F32, 0, NULL, &hi);
	t_node(&t, "Clip", 1);
	cr_assert_eq(t_run1(&t, y), 1);
	cr_assert_float_eq(y[0], -5, 0);
	cr_assert_float_eq(y[2], 4, 0);
	cr_assert_float_eq(y[3], 4, 0);
	t_fini(&t);
}

Test(elem, where_broadcast_loops)
{
	T t;
	uint8_t cond[2] = {1, 0};
	int64_t x[3] = {1, 2, 3}, yv = -1, out[6];
	int64_t d21[] = {2, 1}, d3[] = {3};

	t_init(&t, 16);
	t_input(&t, DT_BOOL, 2, d21, cond);
	t_input(&t, DT_I64, 1, d3, x);
	t_input(&t, DT_I64, 0, NULL, &yv);
	t_node(&t, "Where", 1);
	cr_assert_eq(t_run1(&t, out), 1);
	cr_assert_eq(t_y(&t, 0)->dtype, DT_I64);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(out[i], x[i]);
		cr_assert_eq(out[3 + i], -1);
	}
	t_fini(&t);
}

Test(elem, mean_variadic)
{
	T t;
	float a[2] = {1, 2}, b[2] = {3, 4}, c[1] = {5}, y[2];
	int64_t d[] = {2}, d1[] = {1};

	t_init(&t, 13);
	t_input(&t, DT_F32, 1, d, a);
	t_input(&t, DT_F32, 1, d, b);
	t_input(&t, DT_F32, 1, d1, c);
	t_node(&t, "Mean", 1);
	cr_assert_eq(t_run1(&t, y), 1);
	cr_assert_float_eq(y[0], 3, 1e-6);
	cr_assert_float_eq(y[1], 11.0f / 3, 1e-6);
	t_fini(&t);
}

Test(elem, pow_int_base_float_exponent)
{
	T t;
	int32_t a[3] = {1, 2, 3}, y[3];
	float b[3] = {4, 5, 6};
	int64_t d[] = {3};

	t_init(&t, 15);
	t_input(&t, DT_I32, 1, d, a);
	t_input(&t, DT_F32, 1, d, b);
	t_node(&t, "Pow", 1);
	cr_assert_eq(t_run1(&t, y), 1);
	cr_assert_eq(y[0], 1);
	cr_assert_eq(y[1], 32);
	cr_assert_eq(y[2], 729);
	t_fini(&t);
}

/* CastLike takes only the dtype of its second input, never its shape. */
Test(elem, castlike_ignores_like_shape)
{
	T t;
	float a[3] = {1.5f, -2.5f, 3};
	int64_t d[] = {3}, d0[] = {0}, y[3];

	t_init(&t, 21);
	t_input(&t, DT_F32, 1, d, a);
	t_input(&t, DT_I64, 1, d0, NULL);
	t_node(&t, "CastLike", 1);
	cr_assert_eq(t_run1(&t, y), 1);
	cr_assert_eq(t_y(&t, 0)->rank, 1);
	cr_assert_eq(t_y(&t, 0)->dim[0], 3);
	cr_assert_eq(y[0], 1);
	cr_assert_eq(y[1], -2);
	cr_assert_eq(y[2], 3);
	t_fini(&t);
}

Test(elem, isinf_signs)
{
	T t;
	float a[4] = {INFINITY, -INFINITY, 1, NAN};
	uint8_t y[4];
	int64_t d[] = {4};

	t_init(&t, 20);
	t_input(&t, DT_F32, 1, d, a);
	t_node(&t, "IsInf", 1);
	t_attr_i(&t, "detect_positive", 0);
	cr_assert_eq(t_run1(&t, y), 1);
	cr_assert_eq(y[0], 0);
	cr_assert_eq(y[1], 1);
	cr_assert_eq(y[2], 0);
	cr_assert_eq(y[3], 0);
	t_fini(&t);
}

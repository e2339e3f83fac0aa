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

/* float8 and float4 are converted (tests/unit/test_float8.c,
 * test_packed.c), never computed on: Neg of a float4e2m1 is refused */
Test(elem, float4_only_converted)
{
	T t;
	int64_t d[] = {2};

	t_init(&t, 21);
	t_input(&t, DT_F32, 1, d, NULL);
	t_node(&t, "Cast", 1);
	t_attr_i(&t, "to", DT_F4E2M1);
	cr_assert_eq(t_infer(&t), BURN_OK, "%s", t.c.msg);
	t_fini(&t);
	t_init(&t, 25);
	t_input(&t, DT_F4E2M1, 1, d, NULL);
	t_node(&t, "Neg", 1);
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

/* ---- numerics at the edges of f32 ---------------------------------------- */

/* One f32 element through op (attribute-free, opset 22 so every op of the
 * family exists). */
static float
unary(const char *op, float x)
{
	T t;
	float y;
	int64_t d[] = {1};

	t_init(&t, 22);
	t_input(&t, DT_F32, 1, d, &x);
	t_node(&t, op, 1);
	cr_assert_eq(t_run1(&t, &y), 1, "%s", op);
	t_fini(&t);
	return y;
}

/* Against float64 NumPy (np.logaddexp, np.expm1, ...): finite where the
 * function is, and to a few ulps where the naive formula cancels.  Each
 * of these failed before: Softplus(96.5) was inf, Softplus(-20) 0,
 * Elu(-1e-6) off by 1.3%, Gelu(-1e30) +6e22, Softsign(inf) NaN. */
Test(elem, edges_vs_float64)
{
	static const struct { const char *op; float x; double want, rel; } c[] = {
		{"Softplus", 96.5f, 96.5, 1e-7},
		{"Softplus", 1e30f, 1e30, 1e-7},
		{"Softplus", 3.4e38f, 3.4e38, 1e-7},
		{"Softplus", 0, 0.6931471805599453, 1e-7},
		{"Softplus", -20, 2.061153620314381e-09, 1e-6},
		{"Softplus", -INFINITY, 0, 0},
		{"Mish", -20, -4.122307240628762e-08, 1e-6},
		{"Mish", 96.5f, 96.5, 1e-7},
		{"Sigmoid", 100, 1, 0},
		{"Sigmoid", -INFINITY, 0, 0},
		{"Sigmoid", INFINITY, 1, 0},
		{"Swish", -80, -1.4438811102763322e-33, 1e-5},
		{"Elu", -1e-6f, -9.999995000001667e-07, 1e-6},
		{"Elu", -1e-3f, -0.0009995001666250082, 1e-6},
		{"Elu", -1e-30f, -1e-30, 1e-6},
		{"Elu", -1e30f, -1, 0},
		{"Selu", -1e-6f, -1.7580984672936502e-06, 1e-6},
		{"Celu", -1e-6f, -9.999995000001667e-07, 1e-6},
		{"Softsign", INFINITY, 1, 0},
		{"Softsign", -INFINITY, -1, 0},
		{"Softsign", 3.4e38f, 1, 1e-7},
		{"HardSwish", -INFINITY, 0, 0},
		{"HardSwish", INFINITY, INFINITY, 0},
	};

	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		float y = unary(c[i].op, c[i].x);
		cr_assert(y == (float)c[i].want || fabs(y - c[i].want) <= c[i].rel * fabs(c[i].want),
		          "%s(%g) = %.9g, want %.9g", c[i].op, c[i].x, y, c[i].want);
	}
	/* Sigmoid far left is 0 or a denormal: exp(100) overflowing is fine */
	cr_assert(unary("Sigmoid", -100) >= 0 && unary("Sigmoid", -100) < 1e-38f);
	/* Gelu far left is -0 or a tiny negative, never positive */
	for (float x = -1e30f; x < -5; x /= 10) {
		float y = unary("Gelu", x);
		cr_assert(y <= 0 && y > -1e-6f, "Gelu(%g) = %g", x, y);
	}
}

/* NaN stays NaN through the rewritten formulas. */
Test(elem, edges_keep_nan)
{
	static const char *ops[] = {"Softplus", "Sigmoid", "Mish", "Swish", "Elu", "Selu",
	                            "Celu", "Softsign", "HardSwish", "Gelu"};

	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		cr_assert(isnan(unary(ops[i], NAN)), "%s(NaN)", ops[i]);
}

/* Softplus then LogSoftmax: finite, where inf - inf used to give NaN. */
Test(elem, logsoftmax_after_softplus_is_finite)
{
	T t;
	float x[4] = {96.5f, 1, -20, 0}, s[4], y[4];
	int64_t d[] = {1, 4};

	t_init(&t, 13);
	t_input(&t, DT_F32, 2, d, x);
	t_node(&t, "Softplus", 1);
	cr_assert_eq(t_run1(&t, s), 1);
	t_fini(&t);
	cr_assert_float_eq(s[0], 96.5f, 1e-5);

	t_init(&t, 13);
	t_input(&t, DT_F32, 2, d, s);
	t_node(&t, "LogSoftmax", 1);
	cr_assert_eq(t_run1(&t, y), 1);
	t_fini(&t);
	for (int i = 0; i < 4; i++)
		cr_assert(isfinite(y[i]), "y[%d] = %g", i, y[i]);
	cr_assert_float_eq(y[0], 0, 1e-6);
	cr_assert_float_eq(y[2], -96.5f, 1e-4);
}

/*
 * test_quant.c - the quantization family (passes/ops_quant.c) through the
 * kernel-IR interpreter: QuantizeLinear rounds half to even and saturates,
 * per-axis scales, DequantizeLinear, and shape errors.
 */
#include <criterion/criterion.h>
#include "node_harness.h"

Test(quant, round_half_even_and_saturate)
{
	float x[8] = { 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 300.f, -300.f, 3.49f };
	float s = 1;
	uint8_t zp = 10, y[8];
	const uint8_t want[8] = { 10, 12, 12, 10, 8, 255, 0, 13 };
	T t;

	t_init(&t, 21);
	t_input(&t, DT_F32, 1, I64S(8), x);
	t_input(&t, DT_F32, 0, NULL, &s);
	t_input(&t, DT_U8, 0, NULL, &zp);
	t_node(&t, "QuantizeLinear", 1);
	t_run1(&t, y);
	cr_assert_eq(t_y(&t, 0)->dtype, DT_U8);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(y[i], want[i], "y[%d] = %d, want %d", i, y[i], want[i]);
	t_fini(&t);
}

Test(quant, int8_per_axis)
{
	float x[6] = { 1, 2, 3, -1, -2, -300 };
	float s[2] = { 0.5f, 2 };
	int8_t zp[2] = { 0, 1 }, y[6];
	const int8_t want[6] = { 2, 4, 6, 1, 0, -128 };
	T t;

	t_init(&t, 21);
	t_input(&t, DT_F32, 2, I64S(2, 3), x);
	t_input(&t, DT_F32, 1, I64S(2), s);
	t_input(&t, DT_I8, 1, I64S(2), zp);
	t_node(&t, "QuantizeLinear", 1);
	t_attr_i(&t, "axis", 0);
	t_run1(&t, y);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(y[i], want[i], "y[%d] = %d, want %d", i, y[i], want[i]);
	t_fini(&t);
}

Test(quant, dequantize)
{
	uint8_t x[4] = { 0, 3, 128, 255 }, zp = 128;
	float s = 0.5f, y[4];
	const float want[4] = { -64, -62.5f, 0, 63.5f };
	T t;

	t_init(&t, 21);
	t_input(&t, DT_U8, 1, I64S(4), x);
	t_input(&t, DT_F32, 0, NULL, &s);
	t_input(&t, DT_U8, 0, NULL, &zp);
	t_node(&t, "DequantizeLinear", 1);
	t_run1(&t, y);
	for (int i = 0; i < 4; i++)
		cr_assert_float_eq(y[i], want[i], 1e-6, "y[%d] = %g", i, y[i]);
	t_fini(&t);
}

Test(quant, bad_per_axis_scale)
{
	T t;

	t_init(&t, 21);
	t_input(&t, DT_F32, 2, I64S(2, 3), NULL);
	t_input(&t, DT_F32, 1, I64S(2), NULL);
	t_node(&t, "QuantizeLinear", 1);
	cr_assert_eq(t_infer(&t), BURN_ERR_SHAPE);
	t_fini(&t);
}

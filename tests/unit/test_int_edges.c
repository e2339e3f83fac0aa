/*
 * test_int_edges.c - the values the kernel IR defines where C leaves
 * arithmetic undefined (docs/ARCHITECTURE.md, "Integer and cast
 * semantics"), one ONNX node each, run through the interpreter on the
 * legalised kernels: the regression cases of issue #15's "undefined
 * behaviour in generated code".  That the generated C computes the same
 * bits without UB is checked by test_kir's render_matches_interp (under
 * UBSan) and the ctest conformance_ubsan (node cases on edge values).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include "node_harness.h"

static void
bin32(const char *op, int32_t a, int32_t b, int32_t want)
{
	T t;
	int32_t x[1] = { a }, y[1] = { b }, r[1] = { 0 };

	t_init(&t, 15);
	t_input(&t, DT_I32, 1, I64S(1), x);
	t_input(&t, DT_I32, 1, I64S(1), y);
	t_node(&t, op, 1);
	t_run1(&t, r);
	cr_expect_eq(r[0], want, "%s(%d, %d) = %d, want %d", op, a, b, r[0], want);
	t_fini(&t);
}

Test(int_edges, int32_arithmetic_wraps)
{
	bin32("Add", INT32_MAX, 1, INT32_MIN);
	bin32("Sub", INT32_MIN, 1, INT32_MAX);
	bin32("Mul", INT32_MAX, 2, -2);
	bin32("Mul", 65536, 65536, 0);
	bin32("Div", INT32_MIN, -1, INT32_MIN);
	bin32("Div", 7, 0, 0);
	bin32("Mod", 7, 0, 0);
	bin32("Pow", 3, 40, (int32_t)12157665459056928801ull);   /* 3^40 mod 2^32 */
	bin32("Pow", 2, -1, 0);
	bin32("Pow", -1, -3, -1);
}

Test(int_edges, int64_neg_and_abs_of_min)
{
	int64_t x[2] = { INT64_MIN, INT64_MAX }, r[2];
	const char *ops[] = { "Neg", "Abs" };

	for (int i = 0; i < 2; i++) {
		T t;
		t_init(&t, 15);
		t_input(&t, DT_I64, 1, I64S(2), x);
		t_node(&t, ops[i], 1);
		t_run1(&t, r);
		cr_expect_eq(r[0], INT64_MIN, "%s(INT64_MIN) = %lld", ops[i], (long long)r[0]);
		cr_expect_eq(r[1], i ? INT64_MAX : -INT64_MAX);
		t_fini(&t);
	}
}

Test(int_edges, reduce_sum_wraps)
{
	T t;
	int32_t x[3] = { INT32_MAX, INT32_MAX, 2 }, r[1];

	t_init(&t, 13);
	t_input(&t, DT_I32, 1, I64S(3), x);
	t_node(&t, "ReduceSum", 1);
	t_attr_i(&t, "keepdims", 0);
	t_run1(&t, r);
	cr_expect_eq(r[0], 0, "INT32_MAX + INT32_MAX + 2 = %d", r[0]);   /* 2^32 */
	t_fini(&t);
}

/* Cast float -> integer: truncation, saturation, NaN -> 0 */
Test(int_edges, float_to_int_casts_saturate)
{
	float x[6] = { 1e20f, -1e20f, NAN, -1.0f, 2.9f, -2.9f };
	int32_t r32[6];
	uint8_t r8[6];
	T t;

	t_init(&t, 19);
	t_input(&t, DT_F32, 1, I64S(6), x);
	t_node(&t, "Cast", 1);
	t_attr_i(&t, "to", 6);   /* INT32 */
	t_run1(&t, r32);
	cr_expect_eq(r32[0], INT32_MAX);
	cr_expect_eq(r32[1], INT32_MIN);
	cr_expect_eq(r32[2], 0);
	cr_expect_eq(r32[3], -1);
	cr_expect_eq(r32[4], 2);
	cr_expect_eq(r32[5], -2);
	t_fini(&t);

	t_init(&t, 19);
	t_input(&t, DT_F32, 1, I64S(6), x);
	t_node(&t, "Cast", 1);
	t_attr_i(&t, "to", 2);   /* UINT8 */
	t_run1(&t, r8);
	cr_expect_eq(r8[0], 255);
	cr_expect_eq(r8[1], 0);
	cr_expect_eq(r8[2], 0);
	cr_expect_eq(r8[3], 0, "-1 -> uint8 gives %d, want 0 (saturated)", r8[3]);
	cr_expect_eq(r8[4], 2);
	cr_expect_eq(r8[5], 0);
	t_fini(&t);
}

Test(int_edges, shifts_past_the_width)
{
	T t;
	uint32_t x[3] = { 1, 0x80000000u, 5 }, s[3] = { 32, 40, 31 }, r[3];

	t_init(&t, 15);
	t_input(&t, DT_U32, 1, I64S(3), x);
	t_input(&t, DT_U32, 1, I64S(3), s);
	t_node(&t, "BitShift", 1);
	t_attr_s(&t, "direction", "LEFT");
	t_run1(&t, r);
	cr_expect_eq(r[0], 0);
	cr_expect_eq(r[1], 0);
	cr_expect_eq(r[2], 0x80000000u);
	t_fini(&t);
}

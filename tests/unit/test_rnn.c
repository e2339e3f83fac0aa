/*
 * test_rnn.c - RNN, GRU and LSTM (passes/ops_rnn.c): what the ONNX node
 * suite does not cover (reverse direction with sequence_lens, GRU's
 * linear_before_reset, activations with alpha and beta, bad attributes and
 * shapes), with the kernel run through the kernel-IR interpreter against
 * values worked out by hand.
 */
#include <criterion/criterion.h>
#include <math.h>
#include "node_harness.h"

static double sig(double x) { return 1 / (1 + exp(-x)); }

/*
 * Reverse RNN, one unit, sequence length 2 of 3: the steps run t = 1 then
 * t = 0, Y at t = 2 is zero, and Y_h is the state after t = 0.
 */
Test(rnn, reverse_with_sequence_lens)
{
	T t;
	float x[3] = {1, 2, 3}, w[1] = {1}, r[1] = {0.5f}, y[3] = {9, 9, 9}, yh[1];
	int32_t len[1] = {2};
	void *outs[2] = {y, yh};
	double h1 = tanh(2), h0 = tanh(1 + 0.5 * h1);

	t_init(&t, 14);
	t_input(&t, DT_F32, 3, I64S(3, 1, 1), x);
	t_input(&t, DT_F32, 3, I64S(1, 1, 1), w);
	t_input(&t, DT_F32, 3, I64S(1, 1, 1), r);
	t_absent(&t);
	t_input(&t, DT_I32, 1, I64S(1), len);
	t_node(&t, "RNN", 2);
	t_attr_i(&t, "hidden_size", 1);
	t_attr_s(&t, "direction", "reverse");
	cr_assert_eq(t_run(&t, outs), 1);
	cr_assert_float_eq(y[1], h1, 1e-6);
	cr_assert_float_eq(y[0], h0, 1e-6);
	cr_assert_float_eq(y[2], 0, 1e-6);
	cr_assert_float_eq(yh[0], h0, 1e-6);
	t_fini(&t);
}

/*
 * GRU, one unit, one step, with a recurrence bias on the h gate: with
 * linear_before_reset the reset gate scales (h R_h + Rb_h), without it
 * only h R_h.
 */
Test(gru, linear_before_reset)
{
	float x[1] = {1}, w[3] = {1, 1, 1}, r[3] = {1, 1, 2}, b[6] = {0, 0, 0, 0, 0, 1};
	float h[1] = {0.5f}, y[1];
	double z = sig(1.5), rg = sig(1.5);

	for (int lbr = 0; lbr < 2; lbr++) {
		double n = lbr ? tanh(1 + rg * (2 * 0.5 + 1)) : tanh(1 + 2 * (rg * 0.5) + 1);
		T t;

		t_init(&t, 14);
		t_input(&t, DT_F32, 3, I64S(1, 1, 1), x);
		t_input(&t, DT_F32, 3, I64S(1, 3, 1), w);
		t_input(&t, DT_F32, 3, I64S(1, 3, 1), r);
		t_input(&t, DT_F32, 2, I64S(1, 6), b);
		t_absent(&t);
		t_input(&t, DT_F32, 3, I64S(1, 1, 1), h);
		t_node(&t, "GRU", 1);
		t_attr_i(&t, "hidden_size", 1);
		t_attr_i(&t, "linear_before_reset", lbr);
		t_run1(&t, y);
		cr_assert_float_eq(y[0], (1 - z) * n + z * 0.5, 1e-6, "lbr %d", lbr);
		t_fini(&t);
	}
}

/*
 * LSTM with activations (HardSigmoid 0.5 0.5, Affine 2 1, Affine 1 0 - the
 * last takes the next alpha and the default beta), one unit, zero weights:
 * every gate's pre-activation is 0, so i = f = o = 0.5, c~ = 1,
 * c' = 0.5 c0 + 0.5, h' = 0.5 c'.
 */
Test(lstm, activations_alpha_beta)
{
	static const char *acts[3] = {"HardSigmoid", "Affine", "affine"};
	static double alpha[3] = {0.5, 2, 1}, beta[2] = {0.5, 1};
	float x[1] = {3}, w[4] = {0}, r[4] = {0}, h0[1] = {0}, c0[1] = {2}, yh[1], yc[1];
	void *outs[3] = {NULL, yh, yc};
	Attr *a;
	T t;

	t_init(&t, 14);
	t_input(&t, DT_F32, 3, I64S(1, 1, 1), x);
	t_input(&t, DT_F32, 3, I64S(1, 4, 1), w);
	t_input(&t, DT_F32, 3, I64S(1, 4, 1), r);
	t_absent(&t);
	t_absent(&t);
	t_input(&t, DT_F32, 3, I64S(1, 1, 1), h0);
	t_input(&t, DT_F32, 3, I64S(1, 1, 1), c0);
	t_node(&t, "LSTM", 3);
	t_n(&t)->out[0] = -1;   /* Y not wanted */
	t_attr_i(&t, "hidden_size", 1);
	a = node_add_attr(t.g, t.node, "activations", AT_STRINGS);
	a->n = 3; a->strs = acts;
	a = node_add_attr(t.g, t.node, "activation_alpha", AT_FLOATS);
	a->n = 3; a->floats = alpha;
	a = node_add_attr(t.g, t.node, "activation_beta", AT_FLOATS);
	a->n = 2; a->floats = beta;
	t_run(&t, outs);
	cr_assert_float_eq(yc[0], 1.5, 1e-6);
	cr_assert_float_eq(yh[0], 0.75, 1e-6);
	t_fini(&t);
}

/* Bad attributes and shapes are errors, not crashes. */
Test(lstm, bad_input)
{
	float buf[64];
	T t;

	t_init(&t, 14);   /* W has 3 gates' rows, LSTM needs 4 */
	t_input(&t, DT_F32, 3, I64S(2, 1, 2), buf);
	t_input(&t, DT_F32, 3, I64S(1, 6, 2), buf);
	t_input(&t, DT_F32, 3, I64S(1, 8, 2), buf);
	t_node(&t, "LSTM", 2);
	t_attr_i(&t, "hidden_size", 2);
	cr_assert_eq(t_infer(&t), BURN_ERR_SHAPE);
	t_fini(&t);

	t_init(&t, 14);
	t_input(&t, DT_F32, 3, I64S(2, 1, 2), buf);
	t_input(&t, DT_F32, 3, I64S(1, 2, 2), buf);
	t_input(&t, DT_F32, 3, I64S(1, 2, 2), buf);
	t_node(&t, "RNN", 2);
	t_attr_s(&t, "direction", "sideways");
	cr_assert_eq(t_infer(&t), BURN_ERR_INVALID);
	t_fini(&t);

	t_init(&t, 14);   /* bidirectional needs W for two directions */
	t_input(&t, DT_F32, 3, I64S(2, 1, 2), buf);
	t_input(&t, DT_F32, 3, I64S(1, 6, 2), buf);
	t_input(&t, DT_F32, 3, I64S(1, 6, 2), buf);
	t_node(&t, "GRU", 2);
	t_attr_s(&t, "direction", "bidirectional");
	cr_assert_eq(t_infer(&t), BURN_ERR_SHAPE);
	t_fini(&t);
}

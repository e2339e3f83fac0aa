/*
 * test_packed.c - the packed sub-byte types (int4, uint4, int2, uint2,
 * float4e2m1): loads and stores as passes/legalize.c defines them, run in
 * the interpreter after legalisation, against a reference written apart.
 * Every byte value unpacks to its fields (low bits first, sign-extended
 * for the signed types); every value of each type packs back, and values
 * outside it keep their low bits (ONNX's Cast wraps); an odd element
 * count uses ceil(n * bits / 8) bytes (the interpreter reports any access
 * beyond) and leaves the last byte's unused bits 0; float4e2m1 decodes its
 * 16 codes and rounds to nearest even with ties, saturation at 6, and NaN
 * to 0x8.  The table facts (bits, byte sizes) are checked too.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include "ir/kir.h"
#include "passes/legalize.h"

static const int ints[] = { DT_I4, DT_U4, DT_I2, DT_U2 };

/* ---- reference, written apart from the compiler's code ----------------- */

static int ref_field(const uint8_t *p, int w, int i)
{
	int per = 8 / w, f = (p[i / per] >> (i % per * w)) & ((1 << w) - 1);

	return f;
}

static int ref_int(int dt, int f)
{
	int w = dtype_bits(dt);

	return dtype_is_signed(dt) && (f & (1 << (w - 1))) ? f - (1 << w) : f;
}

/* float4e2m1: sign, 2 exponent bits (bias 1), 1 mantissa bit */
static float ref_f4(int c)
{
	static const float mag[8] = { 0, 0.5f, 1, 1.5f, 2, 3, 4, 6 };

	return c & 8 ? -mag[c & 7] : mag[c & 7];
}

/* ---- kernels ------------------------------------------------------------ */

/* un: o[i] = load(in[i]) as i32 (or f32), i < n */
static KKernel *unpack_kernel(KProgram *p, int dt, int n)
{
	KB kb;
	int in, o, i;
	KRef x;

	kb_begin(&kb, p, "unpack", "packed load");
	in = kb_buf_value(&kb, 0, dt, n, KA_READ);
	o = kb_buf_value(&kb, 1, dtype_is_float(dt) ? DT_F32 : DT_I32, n, KA_WRITE);
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, n), 0);
	x = kb_load(&kb, in, kb_get(&kb, i));
	kb_store(&kb, o, kb_get(&kb, i), kb_cast(&kb, dtype_is_float(dt) ? DT_F32 : DT_I32, x));
	kb_end(&kb);
	return kb_finish(&kb);
}

/* pack: out[i] = x[i] (x i32 cast to the expression type, or f32), i < n */
static KKernel *pack_kernel(KProgram *p, int dt, int n)
{
	KB kb;
	int in, o, i;
	KRef x;

	kb_begin(&kb, p, "pack", "packed store");
	in = kb_buf_value(&kb, 0, dtype_is_float(dt) ? DT_F32 : DT_I32, n, KA_READ);
	o = kb_buf_value(&kb, 1, dt, n, KA_WRITE);
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, n), 0);
	x = kb_load(&kb, in, kb_get(&kb, i));
	kb_store(&kb, o, kb_get(&kb, i), kb_cast(&kb, dtype_expr(dt), x));
	kb_end(&kb);
	return kb_finish(&kb);
}

static void run(KKernel *k, KProgram *p, void *a, void *b)
{
	Ctx c;
	void *bufs[2] = { a, b };

	burn_ctx_init(&c, "test");
	cr_assert_eq(kir_legalize(&c, p, k, NULL), BURN_OK, "%s", c.msg);
	cr_assert_eq(kir_verify(&c, k), BURN_OK, "%s", c.msg);
	for (int i = 0; i < k->nbuf; i++)
		cr_assert(!dtype_is_packed(k->buf[i].dtype), "b%d still packed", i);
	cr_assert_eq(kir_interp(&c, k, bufs), BURN_OK, "%s", c.msg);
}

Test(packed, table)
{
	int64_t b;

	cr_expect_eq(dtype_bits(DT_I4), 4);
	cr_expect_eq(dtype_bits(DT_U2), 2);
	cr_expect_eq(dtype_size(DT_I4), 0, "no whole bytes per element");
	cr_expect(dtype_is_packed(DT_F4E2M1) && dtype_is_storage(DT_F4E2M1));
	cr_expect(!dtype_is_packed(DT_U8) && !dtype_is_packed(DT_BOOL));
	cr_expect_eq(dtype_expr(DT_I4), DT_I8);
	cr_expect_eq(dtype_expr(DT_U2), DT_U8);
	cr_expect_eq(dtype_expr(DT_F4E2M1), DT_F32);
	cr_expect(dtype_is_signed(DT_I2) && !dtype_is_signed(DT_U4));
	cr_expect(dtype_cast_only(DT_I4) && !dtype_cast_only(DT_I8));
	cr_expect(!dtype_nbytes(DT_I4, 5, &b) && b == 3);
	cr_expect(!dtype_nbytes(DT_I2, 5, &b) && b == 2);
	cr_expect(!dtype_nbytes(DT_U2, 8, &b) && b == 2);
	cr_expect(!dtype_nbytes(DT_F4E2M1, 0, &b) && b == 0);
	cr_expect(!dtype_nbytes(DT_F32, 5, &b) && b == 20);
	cr_expect(dtype_nbytes(DT_F32, INT64_MAX / 2, &b), "overflow reported");
	cr_expect_eq(dtype_from_name(dtype_name(DT_I4)), DT_I4);
}

/* Every byte value 0..255, unpacked: the fields of each type. */
Test(packed, unpack_every_byte)
{
	for (int t = 0; t < 4; t++) {
		int dt = ints[t], w = dtype_bits(dt), n = 256 * (8 / w);
		static uint8_t in[256];
		static int32_t out[1024];
		Arena a;
		KProgram p;

		for (int i = 0; i < 256; i++)
			in[i] = (uint8_t)i;
		arena_init(&a);
		kprog_init(&p, &a);
		run(unpack_kernel(&p, dt, n), &p, in, out);
		for (int i = 0; i < n; i++)
			cr_expect_eq(out[i], ref_int(dt, ref_field(in, w, i)),
			             "%s element %d (byte %02x): %d, want %d", dtype_name(dt),
			             i, in[i / (8 / w)], out[i], ref_int(dt, ref_field(in, w, i)));
		arena_free(&a);
	}
	/* the edges by hand: int4 0x87 is 7, -8; uint4 0xf0 is 0, 15 */
	cr_expect_eq(ref_int(DT_I4, 0x87 & 15), 7);
	cr_expect_eq(ref_int(DT_I4, 0x87 >> 4), -8);
}

/* -8..7 (int4), 0..15 (uint4), -2..1, 0..3 and values beyond, packed into
 * an odd count: the fields hold the low bits, the last byte's unused bits
 * are 0 even where the buffer held ones, and no byte past ceil(n*w/8) is
 * touched (the interpreter bounds every access by the legalised count). */
Test(packed, pack_odd_count_and_wrap)
{
	for (int t = 0; t < 4; t++) {
		int dt = ints[t], w = dtype_bits(dt), n = 37, nb = (n * w + 7) / 8;
		int32_t x[37];
		uint8_t out[32];
		Arena a;
		KProgram p;

		for (int i = 0; i < n; i++)   /* the range and 3 values past each end */
			x[i] = (dtype_is_signed(dt) ? -(1 << (w - 1)) : 0) - 3 + i % ((1 << w) + 6);
		memset(out, 0xff, sizeof out);
		arena_init(&a);
		kprog_init(&p, &a);
		run(pack_kernel(&p, dt, n), &p, x, out);
		for (int i = 0; i < n; i++) {
			int want = x[i] & ((1 << w) - 1);
			cr_expect_eq(ref_field(out, w, i), want, "%s element %d = %d: field %d, want %d",
			             dtype_name(dt), i, x[i], ref_field(out, w, i), want);
			cr_expect_eq(ref_int(dt, ref_field(out, w, i)),
			             ref_int(dt, want), "%s element %d round trip", dtype_name(dt), i);
		}
		cr_expect_eq(out[nb - 1] >> ((n * w) % 8), 0,
		             "%s: unused bits of the last byte %02x", dtype_name(dt), out[nb - 1]);
		cr_expect_eq(out[nb], 0xff, "%s: byte past the tensor written", dtype_name(dt));
		arena_free(&a);
	}
}

Test(packed, float4_codes)
{
	uint8_t in[8];
	float out[16];
	Arena a;
	KProgram p;

	for (int i = 0; i < 8; i++)
		in[i] = (uint8_t)((2 * i) | (2 * i + 1) << 4);
	arena_init(&a);
	kprog_init(&p, &a);
	run(unpack_kernel(&p, DT_F4E2M1, 16), &p, in, out);
	for (int c = 0; c < 16; c++)
		cr_expect(out[c] == ref_f4(c) && !signbit(out[c]) == !(c & 8),
		          "code %x: %g, want %g", c, out[c], ref_f4(c));
	arena_free(&a);
}

/* Ties to the even code, saturation at +-6 (also inf), NaN -> 0x8, -0 ->
 * 0x8, and an odd count. */
Test(packed, float4_rounding)
{
	static const struct { float x; int code; } t[] = {
		{ 0.0f, 0x0 }, { -0.0f, 0x8 }, { 0.24f, 0x0 }, { 0.25f, 0x0 },
		{ 0.26f, 0x1 }, { 0.5f, 0x1 }, { 0.75f, 0x2 }, { 1.25f, 0x2 },
		{ 1.26f, 0x3 }, { 1.75f, 0x4 }, { 2.5f, 0x4 }, { 2.51f, 0x5 },
		{ 3.5f, 0x6 }, { 5.0f, 0x6 }, { 5.01f, 0x7 }, { 6.0f, 0x7 },
		{ 7.0f, 0x7 }, { 1e30f, 0x7 }, { INFINITY, 0x7 }, { -INFINITY, 0xf },
		{ -3.5f, 0xe }, { -8.0f, 0xf }, { 1e-7f, 0x0 }, { -1e-7f, 0x8 },
		{ NAN, 0x8 },
	};
	enum { N = sizeof t / sizeof t[0] };
	float x[N];
	uint8_t out[(N + 1) / 2 + 1];
	Arena a;
	KProgram p;

	cr_assert(N % 2, "an odd count");
	for (int i = 0; i < N; i++)
		x[i] = t[i].x;
	memset(out, 0xff, sizeof out);
	arena_init(&a);
	kprog_init(&p, &a);
	run(pack_kernel(&p, DT_F4E2M1, N), &p, x, out);
	for (int i = 0; i < N; i++)
		cr_expect_eq(ref_field(out, 4, i), t[i].code, "%g: code %x, want %x",
		             t[i].x, ref_field(out, 4, i), t[i].code);
	cr_expect_eq(out[N / 2] >> 4, 0, "unused high nibble");
	cr_expect_eq(out[(N + 1) / 2], 0xff, "byte past the tensor written");
	arena_free(&a);
}

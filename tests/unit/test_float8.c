/*
 * test_float8.c - the float8 storage types (e4m3fn, e4m3fnuz, e5m2,
 * e5m2fnuz, e8m0): loads, stores and casts with each rounding in the
 * interpreter, checked against a reference written apart (brute force for
 * the IEEE-like formats: all 256 codes, every midpoint between neighbours
 * and the floats beside it, the specials), and the rendered C checked
 * against the interpreter bit for bit.  The kernels are legalised first:
 * the conversions are passes/legalize.c's kernel IR (test_storage.c checks
 * it exhaustively, f16 and bf16 too).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/kir.h"
#include "codegen/c/render_c.h"
#include "passes/legalize.h"

static const int fmts[] = { DT_F8E4M3FN, DT_F8E4M3FNUZ, DT_F8E5M2, DT_F8E5M2FNUZ,
                            DT_F8E8M0 };
#define NF 5
/* the cast roundings tested per format (e8m0 only uses the last three) */
static const int hows[] = { 0, KC_NOSAT, KC_DOWN, KC_NEAREST, KC_NEAREST | KC_NOSAT };
#define NH 5
static int nhow(int dt) { return dt == DT_F8E8M0 ? NH : 2; }
#define NV 2100   /* test values per format: fits every case below */

/* ---- reference, written apart from the compiler's bit code -------------- */

static int mbits(int dt) { return dt == DT_F8E4M3FN || dt == DT_F8E4M3FNUZ ? 3 : 2; }
static int bias(int dt)
{
	return dt == DT_F8E4M3FN ? 7 : dt == DT_F8E4M3FNUZ ? 8 : dt == DT_F8E5M2 ? 15 : 16;
}
static int uz(int dt) { return dt == DT_F8E4M3FNUZ || dt == DT_F8E5M2FNUZ; }
static int maxcode(int dt)
{
	return dt == DT_F8E4M3FN ? 0x7e : dt == DT_F8E5M2 ? 0x7b :
	       dt == DT_F8E8M0 ? 0xfe : 0x7f;
}

static double ref_dec(int dt, int c)
{
	int m = mbits(dt), e = (c & 0x7f) >> m, f = c & ((1 << m) - 1);
	double v;

	if (dt == DT_F8E8M0)
		return c == 0xff ? NAN : ldexp(1, c - 127);
	if (uz(dt) && c == 0x80)
		return NAN;
	if (dt == DT_F8E4M3FN && (c & 0x7f) == 0x7f)
		return NAN;
	if (dt == DT_F8E5M2 && e == 31)
		return f ? NAN : c & 0x80 ? -INFINITY : INFINITY;
	v = e ? ldexp(f + (1 << m), e - bias(dt) - m) : ldexp(f, 1 - bias(dt) - m);
	return c & 0x80 ? -v : v;
}

/* Nearest code to x, ties to the even code; beyond the rounding range of
 * the largest finite value: that value if sat, else inf (e5m2) or NaN. */
static int ref_enc(int dt, double x, int sat)
{
	int mc = maxcode(dt), s = signbit(x) ? 0x80 : 0, best = 0, c;
	double ax = fabs(x), top = 2 * ref_dec(dt, mc) - ref_dec(dt, mc - 1);
	double bd = INFINITY;

	if (isnan(x))
		return uz(dt) ? 0x80 : s | 0x7f;
	for (c = 0; c <= mc + 1; c++) {
		double v = c <= mc ? ref_dec(dt, c) : top;
		double d = fabs(v - ax);
		if (d < bd || (d == bd && !(c & 1)))
			bd = d, best = c;
	}
	if (best > mc || isinf(ax) || ax > top) {
		if (sat)
			return s | mc;
		return dt == DT_F8E5M2 ? s | 0x7c : uz(dt) ? 0x80 : s | 0x7f;
	}
	return uz(dt) && best == 0 ? 0 : s | best;
}

/* e8m0 as ONNX's reference: the sign is dropped, NaN and inf give 0xff;
 * below 2^-126 (f32 subnormals) the code is 0 or 1; up rounds any
 * fraction up, down truncates, nearest rounds half up; without saturation
 * rounding up from 2^127 gives NaN. */
static int ref_e8(double x, int how)
{
	double a = fabs(x), fr;
	int k, up;

	if (isnan(x) || isinf(x))
		return 0xff;
	if (a < ldexp(1, -126)) {
		if (a == 0 || how & KC_DOWN)
			return 0;
		return how & KC_NEAREST ? a > ldexp(1, -127) : 1;
	}
	fr = frexp(a, &k);         /* a = fr 2^k, fr in [0.5, 1) */
	fr = 2 * fr - 1;           /* a = (1 + fr) 2^(k-1) */
	k = k - 1 + 127;
	up = how & KC_DOWN ? 0 : how & KC_NEAREST ? fr >= 0.5 : fr > 0;
	if (up && k == 0xfe && !(how & KC_NOSAT))
		up = 0;
	return k + up;
}

/* The expected code of cast x (with how) and of a plain store of x. */
static int ref_cast(int dt, double x, int how)
{
	return dt == DT_F8E8M0 ? ref_e8(x, how) : ref_enc(dt, x, !(how & KC_NOSAT));
}

/* ---- kernels ------------------------------------------------------------ */

/* dec: o32[i] = load(in8[i]); o8[i] = load(in8[i])  (256 codes)
 * enc: o8[i] = x[i] (plain store); s8[i] = cast<dt, how>(x[i]) */
static KKernel *dec_kernel(KProgram *p, int dt)
{
	KB kb;
	int in, o32, o8, i;
	KRef x;

	kb_begin(&kb, p, "dec", "float8 load");
	in = kb_buf_value(&kb, 0, dt, 256, KA_READ);
	o32 = kb_buf_value(&kb, 1, DT_F32, 256, KA_WRITE);
	o8 = kb_buf_value(&kb, 2, dt, 256, KA_WRITE);
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, 256), KF_PARALLEL);
	x = kb_load(&kb, in, kb_get(&kb, i));
	kb_store(&kb, o32, kb_get(&kb, i), x);
	kb_store(&kb, o8, kb_get(&kb, i), x);
	kb_end(&kb);
	return kb_finish(&kb);
}

static KKernel *enc_kernel(KProgram *p, int dt, int how)
{
	KB kb;
	int in, o8, s8, i;
	KRef x;

	kb_begin(&kb, p, "enc", "float8 store");
	in = kb_buf_value(&kb, 0, DT_F32, NV, KA_READ);
	o8 = kb_buf_value(&kb, 1, dt, NV, KA_WRITE);
	s8 = kb_buf_value(&kb, 2, dt, NV, KA_WRITE);
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, NV), KF_PARALLEL);
	x = kb_load(&kb, in, kb_get(&kb, i));
	kb_store(&kb, o8, kb_get(&kb, i), x);
	kb_store(&kb, s8, kb_get(&kb, i), how ? kb_cast_f8(&kb, dt, x, how)
	                                      : kb_cast(&kb, dt, x));
	kb_end(&kb);
	return kb_finish(&kb);
}

/* Test values: every code's value, the midpoints between neighbours and
 * the floats just either side of them (both signs), and the specials. */
static int values(int dt, float *v)
{
	static const float sp[] = { 0.0f, -0.0f, 1e-30f, -1e-30f, 1e-45f, 1e9f,
		-1e9f, 3.4e38f, 448.0f, 464.0f, 465.0f, 480.0f, 240.0f, 248.0f,
		256.0f, 57344.0f, 61440.0f, 61441.0f, 65536.0f };
	int n = 0, c, s;

	for (c = 0; c < 256; c++)
		v[n++] = (float)ref_dec(dt, c);
	for (s = 0; s < 2; s++)
		for (c = 0; c < maxcode(dt); c++) {
			float mid = (float)((ref_dec(dt, c) + ref_dec(dt, c + 1)) / 2);
			if (s)
				mid = -mid;
			v[n++] = mid;
			v[n++] = nextafterf(mid, INFINITY);
			v[n++] = nextafterf(mid, -INFINITY);
		}
	for (c = 0; c < (int)(sizeof sp / sizeof sp[0]); c++)
		v[n++] = sp[c];
	v[n++] = INFINITY;
	v[n++] = -INFINITY;
	v[n++] = NAN;
	v[n++] = -NAN;
	cr_assert_leq(n, NV);
	while (n < NV)
		v[n++] = 1.0f;
	return n;
}

/* Codes equal, or both NaN (NaN payloads are not specified). */
static int same_code(int dt, int a, int b)
{
	return a == b || (isnan(ref_dec(dt, a)) && isnan(ref_dec(dt, b)));
}

/* One format's kernels and the interpreter's results: ke[h] casts with
 * hows[h] (e8 is the plain store, the same for every h). */
typedef struct Run {
	KKernel *kd, *ke[NH];
	uint8_t in8[256], d8[256], e8[NV], s8[NH][NV];
	float d32[256], x[NV];
} Run;

static void run_interp(Ctx *c, KProgram *p, int dt, Run *r)
{
	void *bd[3] = { r->in8, r->d32, r->d8 };

	for (int i = 0; i < 256; i++)
		r->in8[i] = (uint8_t)i;
	values(dt, r->x);
	r->kd = dec_kernel(p, dt);
	cr_assert_eq(kir_legalize(c, p, r->kd, NULL), BURN_OK, "%s", c->msg);
	cr_assert_eq(kir_verify(c, r->kd), BURN_OK, "%s", c->msg);
	cr_assert_eq(kir_interp(c, r->kd, bd), BURN_OK, "%s", c->msg);
	for (int h = 0; h < nhow(dt); h++) {
		void *be[3] = { r->x, r->e8, r->s8[h] };
		r->ke[h] = enc_kernel(p, dt, hows[h]);
		cr_assert_eq(kir_legalize(c, p, r->ke[h], NULL), BURN_OK, "%s", c->msg);
		cr_assert_eq(kir_verify(c, r->ke[h]), BURN_OK, "%s", c->msg);
		cr_assert_eq(kir_interp(c, r->ke[h], be), BURN_OK, "%s", c->msg);
	}
}

Test(float8, codes_round_trip)
{
	for (int f = 0; f < NF; f++) {
		int dt = fmts[f];
		Arena a;
		Ctx c;
		KProgram p;
		static Run r;

		arena_init(&a);
		burn_ctx_init(&c, "test");
		kprog_init(&p, &a);
		run_interp(&c, &p, dt, &r);
		for (int i = 0; i < 256; i++) {
			double want = ref_dec(dt, i);
			cr_expect((isnan(want) && isnan(r.d32[i])) ||
			          (want == r.d32[i] && !signbit(want) == !signbit(r.d32[i])),
			          "%s code %02x: got %g, want %g", dtype_name(dt), i,
			          r.d32[i], want);
			cr_expect(same_code(dt, r.d8[i], i), "%s code %02x came back %02x",
			          dtype_name(dt), i, r.d8[i]);
		}
		arena_free(&a);
	}
}

Test(float8, rounding_and_saturation)
{
	for (int f = 0; f < NF; f++) {
		int dt = fmts[f];
		Arena a;
		Ctx c;
		KProgram p;
		static Run r;

		arena_init(&a);
		burn_ctx_init(&c, "test");
		kprog_init(&p, &a);
		run_interp(&c, &p, dt, &r);
		for (int i = 0; i < NV; i++) {
			int w = ref_cast(dt, r.x[i], KC_NOSAT | KC_NEAREST);
			cr_expect(same_code(dt, r.e8[i], w), "%s store %.9g: %02x, want %02x",
			          dtype_name(dt), r.x[i], r.e8[i], w);
			for (int h = 0; h < nhow(dt); h++) {
				w = ref_cast(dt, r.x[i], hows[h]);
				cr_expect(same_code(dt, r.s8[h][i], w), "%s cast %.9g (how %d): "
				          "%02x, want %02x", dtype_name(dt), r.x[i], hows[h],
				          r.s8[h][i], w);
			}
		}
		arena_free(&a);
	}
	/* the spec's table, spelled out */
	cr_expect_eq(ref_enc(DT_F8E4M3FN, INFINITY, 1), 0x7e);
	cr_expect_eq(ref_enc(DT_F8E4M3FN, -1e9, 0), 0xff);
	cr_expect_eq(ref_enc(DT_F8E4M3FN, 464, 0), 0x7e);   /* tie to even */
	cr_expect_eq(ref_enc(DT_F8E5M2, INFINITY, 0), 0x7c);
	cr_expect_eq(ref_enc(DT_F8E5M2, -INFINITY, 1), 0xfb);
	cr_expect_eq(ref_enc(DT_F8E4M3FNUZ, -1e9, 0), 0x80);
	cr_expect_eq(ref_enc(DT_F8E5M2FNUZ, -0.0, 0), 0x00);
	cr_expect_eq(ref_e8(3.0, 0), 129);
	cr_expect_eq(ref_e8(-3.0, KC_DOWN), 128);
	cr_expect_eq(ref_e8(1.5, KC_NEAREST), 128);
	cr_expect_eq(ref_e8(1.4, KC_NEAREST), 127);
	cr_expect_eq(ref_e8(3e38, 0), 0xfe);
	cr_expect_eq(ref_e8(3e38, KC_NOSAT), 0xff);
}

/* The rendered legal kernels give the interpreter's bits. */
Test(float8, render_matches_interp)
{
	char dir[] = "/tmp/burn_test_f8_XXXXXX", path[300], cmd[900];
	static Run r[NF];
	Arena a;
	Ctx c;
	KProgram p;
	FILE *f;
	int rc;

	arena_init(&a);
	burn_ctx_init(&c, "test");
	kprog_init(&p, &a);
	for (int i = 0; i < NF; i++)
		run_interp(&c, &p, fmts[i], &r[i]);
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/f8.c", dir);
	cr_assert_not_null(f = fopen(path, "w"));
	render_c_prelude(f);
	fprintf(f, "#include <stdio.h>\n");
	for (int i = 0; i < NF; i++) {
		cr_assert_eq(render_c_kernel(&c, r[i].kd, f), BURN_OK, "%s", c.msg);
		for (int h = 0; h < nhow(fmts[i]); h++)
			cr_assert_eq(render_c_kernel(&c, r[i].ke[h], f), BURN_OK, "%s", c.msg);
	}
	fprintf(f, "static void dump(const unsigned char *q, int n)\n{\n"
	        "\tfor (int i = 0; i < n; i++)\n\t\tprintf(\"%%02x\", q[i]);\n"
	        "\tprintf(\"\\n\");\n}\n"
	        "int main(void)\n{\n\tstatic unsigned char in8[256], d8[256], "
	        "e8[%d], s8[%d];\n\tstatic float d32[256], x[%d];\n"
	        "\tFILE *f = fopen(\"x.bin\", \"rb\");\n"
	        "\tfor (int i = 0; i < 256; i++)\n\t\tin8[i] = (unsigned char)i;\n",
	        NV, NV, NV);
	for (int i = 0; i < NF; i++) {
		fprintf(f, "\tif (fread(x, 4, %d, f) != %d)\n\t\treturn 1;\n"
		        "\t%s(in8, d32, d8);\n"
		        "\tdump((unsigned char *)d32, 1024);\n\tdump(d8, 256);\n",
		        NV, NV, r[i].kd->name);
		for (int h = 0; h < nhow(fmts[i]); h++)
			fprintf(f, "\t%s(x, e8, s8);\n\tdump(e8, %d);\n\tdump(s8, %d);\n",
			        r[i].ke[h]->name, NV, NV);
	}
	fprintf(f, "\tfclose(f);\n\treturn 0;\n}\n");
	fclose(f);
	snprintf(path, sizeof path, "%s/x.bin", dir);
	cr_assert_not_null(f = fopen(path, "wb"));
	for (int i = 0; i < NF; i++)
		fwrite(r[i].x, 4, NV, f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "cd %s && cc -std=c99 -O2 -Wall -Wextra -Werror "
	         "f8.c -o f8 -lm >log 2>&1", dir);
	rc = system(cmd);
	cr_assert_eq(rc, 0, "f8.c does not compile cleanly (%s)", dir);
	snprintf(cmd, sizeof cmd, "cd %s && ./f8", dir);
	cr_assert_not_null(f = popen(cmd, "r"));
	for (int i = 0; i < NF; i++) {
		static char line[2 * 4 * NV + 8];
		const unsigned char *want[2 + 2 * NH] = { (const unsigned char *)r[i].d32,
			r[i].d8 };
		int len[2 + 2 * NH] = { 1024, 256 }, nk = 2;
		for (int h = 0; h < nhow(fmts[i]); h++) {
			want[nk] = r[i].e8, len[nk++] = NV;
			want[nk] = r[i].s8[h], len[nk++] = NV;
		}
		for (int k = 0; k < nk; k++) {
			cr_assert_not_null(fgets(line, sizeof line, f));
			for (int n = 0; n < len[k]; n++) {
				unsigned v;
				sscanf(line + 2 * n, "%2x", &v);
				cr_expect_eq(v, want[k][n], "%s output %d byte %d: C %02x, "
				             "interpreter %02x", dtype_name(fmts[i]), k, n, v,
				             want[k][n]);
			}
		}
	}
	rc = pclose(f);
	cr_assert_eq(rc, 0);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd)) {
	}
	arena_free(&a);
}

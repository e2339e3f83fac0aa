/*
 * test_storage.c - the storage types' conversions (f16, bf16 and the five
 * float8 formats), which passes/legalize.c defines once as kernel IR:
 * every code decoded (all 65536 f16 and bf16 patterns, all 256 of each
 * float8), and f32 values encoded with each rounding (every f32 exponent
 * with edge mantissas, every code's value, the midpoints between
 * neighbouring codes and the floats beside them, subnormals, values
 * around the largest finite code, inf, NaN), by a store and by a rounding
 * cast.  The legalised kernels run in the interpreter and as C compiled
 * by cc, and both are checked against a reference computed here in double
 * precision from the formats' definitions (sign, exponent bits and bias,
 * mantissa bits, where NaN and infinity live).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ir/kir.h"
#include "codegen/c/render_c.h"
#include "passes/legalize.h"

/* ---- the formats, from their definitions -------------------------------- */

enum { IEEE, FN, FNUZ, E8M0 };   /* where NaN (and inf) live */

typedef struct Fmt {
	int dt, w, m, bias, kind;
} Fmt;

static const Fmt fmts[] = {
	{ DT_F16, 16, 10, 15, IEEE },
	{ DT_BF16, 16, 7, 127, IEEE },
	{ DT_F8E4M3FN, 8, 3, 7, FN },
	{ DT_F8E4M3FNUZ, 8, 3, 8, FNUZ },
	{ DT_F8E5M2, 8, 2, 15, IEEE },
	{ DT_F8E5M2FNUZ, 8, 2, 16, FNUZ },
	{ DT_F8E8M0, 8, 0, 127, E8M0 },
};
#define NF ((int)(sizeof fmts / sizeof fmts[0]))

/* The roundings of a cast (KCastRound) per format: float8 saturates by
 * default; float8e8m0 also rounds down or to nearest. */
static const int hows8[] = { 0, KC_NOSAT, KC_DOWN, KC_NEAREST,
                             KC_NEAREST | KC_NOSAT, KC_DOWN | KC_NOSAT };
static int
nhow(const Fmt *f)
{
	return f->kind == E8M0 ? 6 : f->w == 8 ? 2 : 1;
}

static double
ref_dec(const Fmt *f, uint32_t c)
{
	uint32_t sbit = 1u << (f->w - 1), mag = c & (sbit - 1);
	uint32_t emax = (sbit - 1) >> f->m, e = mag >> f->m, fr = mag & ((1u << f->m) - 1);
	double v;

	if (f->kind == E8M0)
		return c == 0xff ? NAN : ldexp(1, (int)c - 127);
	if (f->kind == IEEE && e == emax)
		return fr ? (c & sbit ? -NAN : NAN) : c & sbit ? -INFINITY : INFINITY;
	if (f->kind == FN && mag == sbit - 1)
		return c & sbit ? -NAN : NAN;
	if (f->kind == FNUZ && c == sbit)
		return NAN;
	v = e ? ldexp(fr + (1u << f->m), (int)e - f->bias - f->m)
	      : ldexp(fr, 1 - f->bias - f->m);
	return c & sbit ? -v : v;
}

static double
ref_max_scan(const Fmt *f, uint32_t *code)
{
	uint32_t n = f->kind == E8M0 ? 256 : 1u << (f->w - 1);   /* positive */
	double best = 0;

	for (uint32_t c = 0; c < n; c++) {
		double v = ref_dec(f, c);
		if (isfinite(v) && v > best)
			best = v, *code = c;
	}
	return best;
}

/* Largest finite value and its code (remembered per format). */
static double
ref_max(const Fmt *f, uint32_t *code)
{
	static const Fmt *last;
	static double lmax;
	static uint32_t lcode;

	if (f != last) {
		lmax = ref_max_scan(f, &lcode);
		last = f;
	}
	*code = lcode;
	return lmax;
}

/* e8m0 as ONNX defines it: the sign is dropped, NaN and inf give 0xff;
 * up rounds any fraction up, down truncates, nearest rounds half up (an
 * f32 subnormal is below 2^-126: code 0 or 1); without saturation rounding
 * up from 2^127 gives NaN. */
static uint32_t
ref_e8(double x, int how)
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
	fr = frexp(a, &k) * 2 - 1;   /* a = (1 + fr) 2^(k-1) */
	k = k - 1 + 127;
	up = how & KC_DOWN ? 0 : how & KC_NEAREST ? fr >= 0.5 : fr > 0;
	if (up && k == 0xfe && !(how & KC_NOSAT))
		up = 0;
	return (uint32_t)(k + up);
}

/* x rounded to the nearest value of the format, ties to the even
 * mantissa (at the quantum of x's binade, or of the subnormals); beyond
 * the largest finite value: that value when float8 saturates (not
 * KC_NOSAT), else inf (IEEE) or NaN.  NaN gives a NaN of x's sign. */
static uint32_t
ref_enc(const Fmt *f, float x, int how)
{
	uint32_t sbit = 1u << (f->w - 1), s = signbit(x) ? sbit : 0, maxc = 0;
	double ax = fabs((double)x), mx = ref_max(f, &maxc), q, r;
	int k, emin = 1 - f->bias;

	if (f->kind == E8M0)
		return ref_e8(x, how);
	if (isnan(x))
		return f->kind == FNUZ ? sbit : f->kind == FN ? s | (sbit - 1)
		     : s | (sbit - 1);   /* IEEE: all ones is a NaN too */
	if (!isinf(x)) {
		frexp(ax, &k);
		k = k - 1 < emin ? emin : k - 1;   /* x's binade, or subnormal */
		q = ldexp(1, k - f->m);
		r = nearbyint(ax / q) * q;
	} else {
		r = INFINITY;
	}
	if (r > mx) {
		if (f->w == 8 && !(how & KC_NOSAT))
			return s | maxc;
		return f->kind == IEEE ? s | ((sbit - 1) >> f->m << f->m)
		     : f->kind == FN ? s | (sbit - 1) : sbit;
	}
	if (r == 0)
		return f->kind == FNUZ ? 0 : s;
	if (r < ldexp(1, emin))
		return s | (uint32_t)(r / ldexp(1, emin - f->m));
	frexp(r, &k);
	k -= 1;
	return s | (uint32_t)(k + f->bias) << f->m |
	       ((uint32_t)(r / ldexp(1, k - f->m)) - (1u << f->m));
}

/* Code got is the expected one; NaN: any NaN, of the same sign where the
 * format's NaNs have one. */
static int
same_code(const Fmt *f, uint32_t got, uint32_t want)
{
	uint32_t sbit = 1u << (f->w - 1);

	if (isnan(ref_dec(f, want)))
		return isnan(ref_dec(f, got)) &&
		       (f->kind == FNUZ || f->kind == E8M0 || (got & sbit) == (want & sbit));
	return got == want;
}

/* f32 v is exactly want (NaN: a NaN, of want's sign unless FNUZ/E8M0). */
static int
same_f32(const Fmt *f, float v, double want)
{
	if (isnan(want))
		return isnan(v) && (f->kind == FNUZ || f->kind == E8M0 ||
		                    !signbit(v) == !signbit(want));
	return (double)v == want && !signbit(v) == !signbit(want);
}

/* ---- test values ------------------------------------------------------- */

static float
fbits(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* Encoding inputs for format f (n returned; v has room for maxv). */
static int
values(const Fmt *f, float *v, int maxv)
{
	int n = 0;
	uint32_t ncode = 1u << f->w, mc = 0;
	double mx = ref_max(f, &mc);

	/* every f32 exponent (both signs) with mantissas at every bit
	 * position: 1 << k, either side of it, and 3 << k (ties and carries
	 * at each possible rounding position), plus the extremes */
	for (uint32_t e = 0; e < 256; e++)
		for (int k = 0; k < 23; k++) {
			uint32_t ms[] = { 1u << k, (1u << k) - 1, (1u << k) + 1, 3u << k,
			                  0x7fffffu, 0x7fffffu - (1u << k) };
			for (int j = 0; j < 6; j++)
				for (int s = 0; s < 2; s++)
					v[n++] = fbits((uint32_t)s << 31 | e << 23 | (ms[j] & 0x7fffff));
		}
	/* every code's value and the midpoints to the next code up, with the
	 * floats either side */
	for (uint32_t c = 0; c < ncode; c++) {
		double a = ref_dec(f, c), b = ref_dec(f, c + 1), mid;
		if (!isfinite(a))
			continue;
		v[n++] = (float)a;
		if (c + 1 >= ncode || !isfinite(b) || (c + 1) == (ncode >> 1))
			continue;
		mid = (a + b) / 2;
		v[n++] = (float)mid;
		v[n++] = nextafterf((float)mid, INFINITY);
		v[n++] = nextafterf((float)mid, -INFINITY);
	}
	/* around the largest finite value and the rounding edge above it */
	for (int s = 0; s < 2; s++) {
		double e = mx + (mx - ref_dec(f, mc - 1)) / 2;   /* the edge */
		float cand[] = { (float)mx, nextafterf((float)mx, INFINITY),
			(float)e, nextafterf((float)e, INFINITY), nextafterf((float)e, 0),
			(float)(2 * mx), INFINITY, NAN, 0x1p-149f, 0.0f, 3.4e38f };
		for (size_t j = 0; j < sizeof cand / sizeof cand[0]; j++)
			v[n++] = s ? -cand[j] : cand[j];
	}
	cr_assert_leq(n, maxv);
	return n;
}

/* ---- kernels ------------------------------------------------------------ */

/* dec: o32[i] = load(in[i]) over every code */
static KKernel *
dec_kernel(Ctx *c, KProgram *p, const Fmt *f)
{
	KB kb;
	int in, o, i;
	KKernel *k;

	kb_begin(&kb, p, "dec", "storage load");
	in = kb_buf_value(&kb, 0, f->dt, 1 << f->w, KA_READ);
	o = kb_buf_value(&kb, 1, DT_F32, 1 << f->w, KA_WRITE);
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, 1 << f->w), KF_PARALLEL);
	kb_store(&kb, o, kb_get(&kb, i), kb_load(&kb, in, kb_get(&kb, i)));
	kb_end(&kb);
	k = kb_finish(&kb);
	cr_assert_eq(kir_legalize(c, p, k, NULL), BURN_OK, "%s", c->msg);
	cr_assert_eq(kir_verify(c, k), BURN_OK, "%s", c->msg);
	return k;
}

/* enc: o[i] = x[i] (a store: rounds, float8 without saturation);
 * r[i] = cast<dt, how>(x[i]) (an f32) */
static KKernel *
enc_kernel(Ctx *c, KProgram *p, const Fmt *f, int how, int nv)
{
	KB kb;
	int in, o, r, i;
	KRef x;
	KKernel *k;

	kb_begin(&kb, p, "enc", "storage store");
	in = kb_buf_value(&kb, 0, DT_F32, nv, KA_READ);
	o = kb_buf_value(&kb, 1, f->dt, nv, KA_WRITE);
	r = kb_buf_value(&kb, 2, DT_F32, nv, KA_WRITE);
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, nv), KF_PARALLEL);
	x = kb_load(&kb, in, kb_get(&kb, i));
	kb_store(&kb, o, kb_get(&kb, i), x);
	kb_store(&kb, r, kb_get(&kb, i), f->w == 8 ? kb_cast_f8(&kb, f->dt, x, how)
	                                            : kb_cast(&kb, f->dt, x));
	kb_end(&kb);
	k = kb_finish(&kb);
	cr_assert_eq(kir_legalize(c, p, k, NULL), BURN_OK, "%s", c->msg);
	cr_assert_eq(kir_verify(c, k), BURN_OK, "%s", c->msg);
	return k;
}

/* ---- checking ----------------------------------------------------------- */

#define MAXV 400000

typedef struct Res {      /* one format's outputs, from either runner */
	float *dec;           /* 1 << w */
	uint32_t *st[6];      /* per how: the store's codes */
	float *cast[6];       /* per how: the cast's values */
} Res;

static int
code_at(const Fmt *f, const void *p, int i)
{
	return f->w == 16 ? ((const uint16_t *)p)[i] : ((const uint8_t *)p)[i];
}

/* Every output of format f against the reference; returns the failures
 * (the first few are reported). */
static int
check(const char *who, const Fmt *f, const float *x, int nv, const Res *r)
{
	int bad = 0;

	for (uint32_t c = 0; c < (1u << f->w); c++)
		if (!same_f32(f, r->dec[c], ref_dec(f, c)) && bad++ < 5)
			cr_log_error("%s %s: code %#x decodes to %a, want %a", who,
			             dtype_name(f->dt), c, r->dec[c], ref_dec(f, c));
	for (int h = 0; h < nhow(f); h++) {
		int how = f->w == 8 ? hows8[h] : 0;
		for (int i = 0; i < nv; i++) {
			uint32_t ws = ref_enc(f, x[i], KC_NOSAT | KC_NEAREST);
			uint32_t wc = ref_enc(f, x[i], how);
			if (!same_code(f, r->st[h][i], ws) && bad++ < 5)
				cr_log_error("%s %s: store %a gives %#x, want %#x", who,
				             dtype_name(f->dt), x[i], r->st[h][i], ws);
			if (!same_f32(f, r->cast[h][i], ref_dec(f, wc)) && bad++ < 5)
				cr_log_error("%s %s: cast (how %d) %a gives %a, want %a", who,
				             dtype_name(f->dt), how, x[i], r->cast[h][i],
				             ref_dec(f, wc));
		}
	}
	return bad;
}

static void
res_alloc(Res *r, const Fmt *f, int nv)
{
	r->dec = calloc((size_t)1 << f->w, sizeof(float));
	cr_assert_not_null(r->dec);
	for (int h = 0; h < nhow(f); h++) {
		r->st[h] = calloc((size_t)nv, sizeof(uint32_t));
		r->cast[h] = calloc((size_t)nv, sizeof(float));
		cr_assert(r->st[h] && r->cast[h]);
	}
}

static void
res_free(Res *r, const Fmt *f)
{
	free(r->dec);
	for (int h = 0; h < nhow(f); h++) {
		free(r->st[h]);
		free(r->cast[h]);
	}
}

/* The reference itself, on points fixed by the specifications. */
Test(storage, reference)
{
	const Fmt *h = &fmts[0], *b = &fmts[1], *e4 = &fmts[2], *e5 = &fmts[4];
	uint32_t mc;

	cr_assert_eq(ref_max(h, &mc), 65504);
	cr_assert_eq(mc, 0x7bff);
	cr_assert_eq(ref_max(e4, &mc), 448);
	cr_assert_eq(ref_max(e5, &mc), 57344);
	cr_assert_eq(ref_max(&fmts[3], &mc), 240);
	cr_assert_eq(ref_enc(h, 1.0f, 0), 0x3c00);
	cr_assert_eq(ref_enc(h, 65520.0f, 0), 0x7c00);   /* tie to even: inf */
	cr_assert_eq(ref_enc(h, 65519.0f, 0), 0x7bff);
	cr_assert_eq(ref_enc(h, 0x1p-25f, 0), 0x0000);    /* tie to even: 0 */
	cr_assert_eq(ref_enc(h, 0x1.8p-24f, 0), 0x0002);
	cr_assert_eq(ref_enc(h, -0.0f, 0), 0x8000);
	cr_assert_eq(ref_enc(b, 1.00390625f, 0), 0x3f80); /* tie to even */
	cr_assert_eq(ref_enc(b, 1.01171875f, 0), 0x3f82);
	cr_assert_eq(ref_enc(e4, 464.0f, 0), 0x7e);
	cr_assert_eq(ref_enc(e4, 1e9f, KC_NOSAT), 0x7f);
	cr_assert_eq(ref_enc(e5, -INFINITY, 0), 0xfb);
	cr_assert_eq(ref_enc(e5, INFINITY, KC_NOSAT), 0x7c);
	cr_assert_eq(ref_enc(&fmts[5], -0.0f, 0), 0);
	cr_assert_eq(ref_dec(h, 0x0001), 0x1p-24);
	cr_assert_eq(ref_dec(&fmts[6], 0), 0x1p-127);
	cr_assert(isnan(ref_dec(&fmts[3], 0x80)));
}

/* The legalised kernels in the interpreter and as compiled C, against the
 * reference, for every format. */
Test(storage, interp_and_c_match_reference, .timeout = 600)
{
	char dir[] = "/tmp/burn_test_storage_XXXXXX", path[300], cmd[900];
	static float *x[NF];
	static int nv[NF];
	KKernel *kd[NF], *ke[NF][6];
	Arena a;
	Ctx c;
	KProgram p;
	FILE *f;
	int bad = 0;

	arena_init(&a);
	burn_ctx_init(&c, "test");
	kprog_init(&p, &a);
	/* interpreter */
	for (int i = 0; i < NF; i++) {
		const Fmt *ft = &fmts[i];
		Res r;
		void *codes = malloc((size_t)2 << ft->w), *st = malloc((size_t)MAXV * 2);
		cr_assert(codes && st);
		x[i] = malloc(MAXV * sizeof(float));
		cr_assert_not_null(x[i]);
		nv[i] = values(ft, x[i], MAXV);
		res_alloc(&r, ft, nv[i]);
		for (uint32_t cd = 0; cd < (1u << ft->w); cd++) {
			if (ft->w == 16)
				((uint16_t *)codes)[cd] = (uint16_t)cd;
			else
				((uint8_t *)codes)[cd] = (uint8_t)cd;
		}
		kd[i] = dec_kernel(&c, &p, ft);
		{
			void *bufs[2] = { codes, r.dec };
			cr_assert_eq(kir_interp(&c, kd[i], bufs), BURN_OK, "%s", c.msg);
		}
		for (int h = 0; h < nhow(ft); h++) {
			void *bufs[3] = { x[i], st, r.cast[h] };
			ke[i][h] = enc_kernel(&c, &p, ft, ft->w == 8 ? hows8[h] : 0, nv[i]);
			cr_assert_eq(kir_interp(&c, ke[i][h], bufs), BURN_OK, "%s", c.msg);
			for (int j = 0; j < nv[i]; j++)
				r.st[h][j] = (uint32_t)code_at(ft, st, j);
		}
		bad += check("interpreter", ft, x[i], nv[i], &r);
		res_free(&r, ft);
		free(codes);
		free(st);
	}
	/* C: the same kernels rendered, compiled, run on the same inputs */
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/st.c", dir);
	cr_assert_not_null(f = fopen(path, "w"));
	render_c_prelude(f);
	fprintf(f, "#include <stdio.h>\n#include <stdlib.h>\n");
	for (int i = 0; i < NF; i++) {
		cr_assert_eq(render_c_kernel(&c, kd[i], f), BURN_OK, "%s", c.msg);
		for (int h = 0; h < nhow(&fmts[i]); h++)
			cr_assert_eq(render_c_kernel(&c, ke[i][h], f), BURN_OK, "%s", c.msg);
	}
	fprintf(f, "int main(void)\n{\n"
	        "\tstatic float x[%d], r[%d], d[65536];\n"
	        "\tstatic uint16_t st[%d], codes16[65536];\n"
	        "\tstatic uint8_t codes8[256];\n"
	        "\tFILE *in = fopen(\"x.bin\", \"rb\"), *out = fopen(\"out.bin\", \"wb\");\n"
	        "\tif (!in || !out)\n\t\treturn 1;\n"
	        "\tfor (int i = 0; i < 65536; i++)\n\t\tcodes16[i] = (uint16_t)i;\n"
	        "\tfor (int i = 0; i < 256; i++)\n\t\tcodes8[i] = (uint8_t)i;\n",
	        MAXV, MAXV, MAXV);
	for (int i = 0; i < NF; i++) {
		int n = nv[i], w = fmts[i].w, bytes = w / 8;
		fprintf(f, "\t%s((void *)codes%d, d);\n\tfwrite(d, 4, %d, out);\n"
		        "\tif (fread(x, 4, %d, in) != %d)\n\t\treturn 1;\n",
		        kd[i]->name, w, 1 << w, n, n);
		for (int h = 0; h < nhow(&fmts[i]); h++)
			fprintf(f, "\t%s(x, (void *)st, r);\n\tfwrite(st, %d, %d, out);\n"
			        "\tfwrite(r, 4, %d, out);\n", ke[i][h]->name, bytes, n, n);
	}
	fprintf(f, "\treturn fclose(out) != 0;\n}\n");
	fclose(f);
	snprintf(path, sizeof path, "%s/x.bin", dir);
	cr_assert_not_null(f = fopen(path, "wb"));
	for (int i = 0; i < NF; i++)
		fwrite(x[i], 4, (size_t)nv[i], f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "cd %s && cc -std=c99 -O2 -Wall -Wextra -Werror "
	         "st.c -o st -lm >log 2>&1 && ./st", dir);
	cr_assert_eq(system(cmd), 0, "st.c does not compile cleanly or fails (%s)", dir);
	snprintf(path, sizeof path, "%s/out.bin", dir);
	cr_assert_not_null(f = fopen(path, "rb"));
	for (int i = 0; i < NF; i++) {
		const Fmt *ft = &fmts[i];
		int bytes = ft->w / 8;
		void *st = malloc((size_t)MAXV * 2);
		Res r;
		cr_assert_not_null(st);
		res_alloc(&r, ft, nv[i]);
		cr_assert_eq(fread(r.dec, 4, (size_t)1 << ft->w, f), (size_t)1 << ft->w);
		for (int h = 0; h < nhow(ft); h++) {
			cr_assert_eq(fread(st, (size_t)bytes, (size_t)nv[i], f), (size_t)nv[i]);
			cr_assert_eq(fread(r.cast[h], 4, (size_t)nv[i], f), (size_t)nv[i]);
			for (int j = 0; j < nv[i]; j++)
				r.st[h][j] = (uint32_t)code_at(ft, st, j);
		}
		bad += check("C", ft, x[i], nv[i], &r);
		res_free(&r, ft);
		free(st);
		free(x[i]);
	}
	fclose(f);
	cr_expect_eq(bad, 0, "%d conversions differ from the reference", bad);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd)) {
	}
	arena_free(&a);
}

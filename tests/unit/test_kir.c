/*
 * test_kir.c - the kernel IR: builder folding, verifier, interpreter, and
 * the C renderer (its output compiled with -Werror and run against the
 * interpreter, bit for bit).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ir/kir.h"
#include "kir_fixture.h"
#include "codegen/c/render_c.h"
#include "passes/legalize.h"



/* out[i] = a[i] + b[i] over a 3x4 index space. */
static KKernel *
k_add(T *t)
{
	KB *kb = &t->kb;
	int a, b, o, i0, i1;
	KRef idx;

	kb_begin(kb, &t->p, "add", "Add");
	a = kb_buf_value(kb, 0, DT_F32, 12, KA_READ);
	b = kb_buf_value(kb, 1, DT_F32, 12, KA_READ);
	o = kb_buf_value(kb, 2, DT_F32, 12, KA_WRITE);
	i0 = kb_for(kb, "i0", kb_idx(kb, 0), kb_idx(kb, 3), KF_PARALLEL);
	i1 = kb_for(kb, "i1", kb_idx(kb, 0), kb_idx(kb, 4), KF_PARALLEL);
	idx = kb_bin(kb, KO_ADD, kb_bin(kb, KO_MUL, kb_get(kb, i0), kb_idx(kb, 4)),
	             kb_get(kb, i1));
	kb_store(kb, o, idx, kb_bin(kb, KO_ADD, kb_load(kb, a, idx),
	                            kb_load(kb, b, idx)));
	kb_end(kb);
	kb_end(kb);
	return kb_finish(kb);
}

/* out[r] = sum_c x[r*5 + c] over a 4x5 input, accumulator variable. */
static KKernel *
k_rowsum(T *t)
{
	KB *kb = &t->kb;
	int x, o, r, col, acc;

	kb_begin(kb, &t->p, "rowsum", "ReduceSum");
	x = kb_buf_value(kb, 0, DT_F32, 20, KA_READ);
	o = kb_buf_value(kb, 1, DT_F32, 4, KA_WRITE);
	acc = kb_var(kb, DT_F32, "acc");
	r = kb_for(kb, "r", kb_idx(kb, 0), kb_idx(kb, 4), KF_PARALLEL);
	kb_set(kb, acc, kb_const_f(kb, DT_F32, 0));
	col = kb_for(kb, "c", kb_idx(kb, 0), kb_idx(kb, 5), 0);
	kb_set(kb, acc, kb_bin(kb, KO_ADD, kb_get(kb, acc),
	       kb_load(kb, x, kb_bin(kb, KO_ADD, kb_bin(kb, KO_MUL, kb_get(kb, r),
	                                               kb_idx(kb, 5)),
	                             kb_get(kb, col)))));
	kb_end(kb);
	kb_store(kb, o, kb_get(kb, r), kb_get(kb, acc));
	kb_end(kb);
	return kb_finish(kb);
}

/* out[i] = x[i] > 0 ? x[i] * 2 : -1 (as if/else), flags[i] = x[i] > 0. */
static KKernel *
k_ifelse(T *t)
{
	KB *kb = &t->kb;
	int x, o, fl, i;
	KRef v, pos;

	kb_begin(kb, &t->p, "ifelse", "Where");
	x = kb_buf_value(kb, 0, DT_F32, 6, KA_READ);
	o = kb_buf_value(kb, 1, DT_F32, 6, KA_WRITE);
	fl = kb_buf_value(kb, 2, DT_BOOL, 6, KA_WRITE);
	i = kb_for(kb, "i", kb_idx(kb, 0), kb_idx(kb, 6), KF_PARALLEL);
	v = kb_load(kb, x, kb_get(kb, i));
	pos = kb_bin(kb, KO_GT, v, kb_const_f(kb, DT_F32, 0));
	kb_store(kb, fl, kb_get(kb, i), pos);
	kb_if(kb, pos);
	kb_store(kb, o, kb_get(kb, i), kb_bin(kb, KO_MUL, v, kb_const_f(kb, DT_F32, 2)));
	kb_else(kb);
	kb_store(kb, o, kb_get(kb, i), kb_const_f(kb, DT_F32, -1));
	kb_end(kb);
	kb_end(kb);
	return kb_finish(kb);
}

Test(kir, fold)
{
	T t;
	KB *kb = &t.kb;
	int64_t v;
	KRef x, e;
	int var;

	t_init(&t);
	kb_begin(kb, &t.p, "f", "");
	var = kb_var(kb, DT_I64, "x");
	x = kb_get(kb, var);
	e = kb_bin(kb, KO_ADD, kb_idx(kb, 2), kb_idx(kb, 3));
	cr_assert(kb_is_const_i(kb->k, e, &v));
	cr_assert_eq(v, 5);
	cr_assert_eq(kb_bin(kb, KO_ADD, x, kb_idx(kb, 0)), x);
	cr_assert_eq(kb_bin(kb, KO_ADD, kb_idx(kb, 0), x), x);
	cr_assert_eq(kb_bin(kb, KO_MUL, x, kb_idx(kb, 1)), x);
	cr_assert_eq(kb_bin(kb, KO_MUL, kb_idx(kb, 1), x), x);
	cr_assert_eq(kb_bin(kb, KO_SUB, x, kb_idx(kb, 0)), x);
	cr_assert_eq(kb_bin(kb, KO_DIV, x, kb_idx(kb, 1)), x);
	e = kb_bin(kb, KO_MUL, x, kb_idx(kb, 0));
	cr_assert(kb_is_const_i(kb->k, e, &v) && v == 0);
	e = kb_bin(kb, KO_LT, kb_idx(kb, 2), kb_idx(kb, 3));
	cr_assert(kb_is_const_i(kb->k, e, &v) && v == 1);
	cr_assert_eq(kb_dtype(kb->k, e), DT_BOOL);
	e = kb_bin(kb, KO_ADD, kb_const_i(kb, DT_I8, 100), kb_const_i(kb, DT_I8, 100));
	cr_assert(kb_is_const_i(kb->k, e, &v) && v == -56);
	e = kb_bin(kb, KO_DIV, kb_idx(kb, -7), kb_idx(kb, 2));
	cr_assert(kb_is_const_i(kb->k, e, &v) && v == -3);
	e = kb_bin(kb, KO_MOD, kb_idx(kb, -7), kb_idx(kb, 2));
	cr_assert(kb_is_const_i(kb->k, e, &v) && v == -1);
	e = kb_bin(kb, KO_DIV, kb_idx(kb, 1), kb_idx(kb, 0));   /* not folded */
	cr_assert(!kb_is_const_i(kb->k, e, NULL));
	e = kb_bin(kb, KO_LT, kb_const_f(kb, DT_F32, 1.5), kb_const_f(kb, DT_F32, 2));
	cr_assert(kb_is_const_i(kb->k, e, &v) && v == 1);
	/* float x + 0 is not an identity (-0 + 0 = +0) */
	e = kb_bin(kb, KO_ADD, kb_const_f(kb, DT_F32, 1), kb_const_f(kb, DT_F32, 0));
	cr_assert_eq(kb->k->node[e].kind, KE_BIN);
	/* loads of f16 are f32 */
	e = kb_load(kb, kb_buf(kb, DT_F16, 4, -1, KS_LOCAL, KA_RW), kb_idx(kb, 0));
	cr_assert_eq(kb_dtype(kb->k, e), DT_F32);
	kb_finish(kb);
	t_fini(&t);
}

Test(kir, names_unique)
{
	T t;
	KKernel *a, *b, *c;

	t_init(&t);
	kb_begin(&t.kb, &t.p, "add", "");
	a = kb_finish(&t.kb);
	kb_begin(&t.kb, &t.p, "add", "");
	b = kb_finish(&t.kb);
	kb_begin(&t.kb, &t.p, "9-bad name", "");
	c = kb_finish(&t.kb);
	cr_assert_str_eq(a->name, "add");
	cr_assert_str_neq(b->name, "add");
	cr_assert_str_eq(c->name, "__bad_name");
	cr_assert_eq(t.p.nkernel, 3);
	t_fini(&t);
}

Test(kir, buf_value_dedup)
{
	T t;
	int a, b;

	t_init(&t);
	kb_begin(&t.kb, &t.p, "k", "");
	a = kb_buf_value(&t.kb, 7, DT_F32, 4, KA_READ);
	b = kb_buf_value(&t.kb, 7, DT_F32, 4, KA_WRITE);
	cr_assert_eq(a, b);
	cr_assert_eq(t.kb.k->buf[a].access, KA_RW);
	cr_assert_eq(t.kb.k->nbuf, 1);
	kb_finish(&t.kb);
	t_fini(&t);
}

Test(kir, interp_add)
{
	T t;
	float a[12], b[12], o[12];
	void *bufs[3] = { a, b, o };
	KKernel *k;
	int i;

	t_init(&t);
	k = k_add(&t);
	cr_assert_eq(kir_verify(&t.c, k), BURN_OK, "%s", t.c.msg);
	for (i = 0; i < 12; i++) {
		a[i] = (float)i;
		b[i] = 0.5f * (float)i;
		o[i] = -1;
	}
	cr_assert_eq(kir_interp(&t.c, k, bufs), BURN_OK, "%s", t.c.msg);
	for (i = 0; i < 12; i++)
		cr_assert_float_eq(o[i], 1.5f * (float)i, 0);
	t_fini(&t);
}

Test(kir, interp_reduce_and_if)
{
	T t;
	float x[20], o[4], y[6], out[6];
	unsigned char fl[6];
	void *b1[2] = { x, o }, *b2[3] = { y, out, fl };
	float yv[6] = { 1, -2, 0, 3.5f, -0.0f, 7 };
	KKernel *k;
	int i;

	t_init(&t);
	for (i = 0; i < 20; i++)
		x[i] = (float)i;
	k = k_rowsum(&t);
	cr_assert_eq(kir_verify(&t.c, k), BURN_OK, "%s", t.c.msg);
	cr_assert_eq(kir_interp(&t.c, k, b1), BURN_OK, "%s", t.c.msg);
	for (i = 0; i < 4; i++)
		cr_assert_float_eq(o[i], (float)(25 * i + 10), 0);

	memcpy(y, yv, sizeof y);
	k = k_ifelse(&t);
	cr_assert_eq(kir_verify(&t.c, k), BURN_OK, "%s", t.c.msg);
	cr_assert_eq(kir_interp(&t.c, k, b2), BURN_OK, "%s", t.c.msg);
	for (i = 0; i < 6; i++) {
		cr_assert_float_eq(out[i], yv[i] > 0 ? 2 * yv[i] : -1, 0);
		cr_assert_eq(fl[i], yv[i] > 0);
	}
	t_fini(&t);
}

Test(kir, interp_bounds)
{
	T t;
	KB *kb = &t.kb;
	KKernel *k;
	float x[4] = { 0 }, y[4];
	void *bufs[2] = { x, y };
	int a, o, i;

	t_init(&t);
	kb_begin(kb, &t.p, "oob", "");
	a = kb_buf_value(kb, 0, DT_F32, 4, KA_READ);
	o = kb_buf_value(kb, 1, DT_F32, 4, KA_WRITE);
	i = kb_for(kb, "i", kb_idx(kb, 0), kb_idx(kb, 4), 0);
	kb_store(kb, o, kb_get(kb, i),
	         kb_load(kb, a, kb_bin(kb, KO_ADD, kb_get(kb, i), kb_idx(kb, 1))));
	kb_end(kb);
	k = kb_finish(kb);
	cr_assert_eq(kir_verify(&t.c, k), BURN_OK);
	cr_assert_eq(kir_interp(&t.c, k, bufs), BURN_ERR_INTERNAL);

	/* a constant out-of-bounds index is a verifier error */
	burn_ctx_init(&t.c, "test");
	kb_begin(kb, &t.p, "oob2", "");
	o = kb_buf_value(kb, 1, DT_F32, 4, KA_WRITE);
	kb_store(kb, o, kb_idx(kb, 4), kb_const_f(kb, DT_F32, 1));
	k = kb_finish(kb);
	cr_assert_eq(kir_verify(&t.c, k), BURN_ERR_INTERNAL);

	/* mismatched operand types */
	burn_ctx_init(&t.c, "test");
	kb_begin(kb, &t.p, "bad", "");
	o = kb_buf_value(kb, 1, DT_F32, 4, KA_WRITE);
	kb_store(kb, o, kb_idx(kb, 0), kb_bin(kb, KO_ADD, kb_const_f(kb, DT_F32, 1),
	                                      kb_const_i(kb, DT_I32, 1)));
	k = kb_finish(kb);
	cr_assert_eq(kir_verify(&t.c, k), BURN_ERR_INTERNAL);
	t_fini(&t);
}

/* ---- rendering: compile, and run against the interpreter ---------------- */

static char tmpdir[64];

static const char *
mktmp(void)
{
	strcpy(tmpdir, "/tmp/burn_test_kir_XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
	return tmpdir;
}

static void
rmtmp(void)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	if (system(cmd)) {
	}
}

static int
compile(const char *dir, const char *src, const char *out, int link)
{
	char cmd[512];

	snprintf(cmd, sizeof cmd,
	         "cd %s && cc -std=c99 -O2 -Wall -Wextra -Werror %s %s -o %s %s "
	         ">%s.log 2>&1", dir, link == 2 ? "-fsanitize=undefined,"
	         "float-cast-overflow -fno-sanitize-recover=all" : link ? "" : "-c",
	         src, out, link ? "-lm" : "", out);
	return system(cmd);
}

static void
dump_log(const char *dir, const char *out)
{
	char path[256], buf[4096];
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "%s/%s.log", dir, out);
	if (!(f = fopen(path, "r")))
		return;
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	fprintf(stderr, "%s\n", buf);
}

Test(kir, render_compiles)
{
	T t;
	const char *dir;
	char path[256];
	KKernel *ks[3];
	FILE *f;
	int i, rc;

	t_init(&t);
	ks[0] = k_add(&t);
	ks[1] = k_rowsum(&t);
	ks[2] = k_ifelse(&t);
	dir = mktmp();
	snprintf(path, sizeof path, "%s/k.c", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	render_c_prelude(f);
	for (i = 0; i < 3; i++)
		cr_assert_eq(render_c_kernel(&t.c, ks[i], f), BURN_OK, "%s", t.c.msg);
	/* reference the static functions so -Wunused-function stays quiet */
	fprintf(f, "void *burn_test_fns[] = { (void *)%s, (void *)%s, (void *)%s };\n",
	        ks[0]->name, ks[1]->name, ks[2]->name);
	fclose(f);
	rc = compile(dir, "k.c", "k.o", 0);
	if (rc)
		dump_log(dir, "k.o");
	cr_assert_eq(rc, 0, "generated C does not compile cleanly (see %s)", path);
	rmtmp();
	t_fini(&t);
}

/*
 * The op zoo: one kernel per (op, dtype), out[i] = op(a[i], b[i]) over a
 * fixed set of awkward inputs.  The kernels are rendered into one program
 * whose main prints every output byte; the interpreter must agree byte for
 * byte (NaNs compare equal whatever their payload).
 */

typedef struct Zoo {
	KKernel *k;
	int dt_in, dt_out;
	unsigned char out[NZ * 8];
} Zoo;

static void
zoo_data(int dt, int which, unsigned char *p)
{
	static const double fv[2][NZ] = {
		{ 1.5, -2.5, 0.0, -0.0, 3.0, 0.5, -7.25, 1e30, NAN, INFINITY, 2.5, -0.5,
		  -INFINITY, 3e9, -3e9, 255.9 },
		{ 2.0, 0.5, -0.0, 0.0, -3.0, 0.5, 2.0, -1e30, 1.0, 1.0, NAN, -0.5,
		  1.0, 2.0, 1e19, -1.0 },
	};
	static const int64_t iv[2][NZ] = {
		{ 7, -7, 0, 127, -128, 100, 3, -1, 255, 1, 65535, 40000,
		  INT32_MIN, INT64_MIN, INT32_MAX, INT64_MAX },
		{ 2, 2, 5, 1, -1, 100, 0, 3, 1, -1, 2, 7, -1, -1, 31, 64 },
	};
	int i;

	for (i = 0; i < NZ; i++) {
		double f = fv[which][i];
		int64_t v = iv[which][i];
		switch (dt) {
		case DT_F32: ((float *)p)[i] = (float)f; break;
		case DT_F64: ((double *)p)[i] = f; break;
		case DT_F16: {
			/* f16 bit patterns: 1.5, -2.5, 0, -0, 3, 0.5, ... */
			static const uint16_t h[2][NZ] = {
				{ 0x3e00, 0xc100, 0, 0x8000, 0x4200, 0x3800, 0xc740, 0x7bff,
				  0x7e00, 0x7c00, 0x4100, 0xb800, 0xfc00, 0x0001, 0x8001,
				  0x5bff },
				{ 0x4000, 0x3800, 0x8000, 0, 0xc200, 0x3800, 0x4000, 0xfbff,
				  0x3c00, 0x3c00, 0x7e00, 0xb800, 0x3c00, 0x4000, 0x7bff,
				  0xbc00 } };
			((uint16_t *)p)[i] = h[which][i];
			break;
		}
		case DT_I8: ((int8_t *)p)[i] = (int8_t)v; break;
		case DT_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
		case DT_I16: ((int16_t *)p)[i] = (int16_t)v; break;
		case DT_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
		case DT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
		case DT_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
		case DT_I64: ((int64_t *)p)[i] = v; break;
		case DT_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
		case DT_BOOL: ((uint8_t *)p)[i] = (uint8_t)(v & 1); break;
		}
	}
}



Test(kir, render_matches_interp)
{
	static const int fdt[] = { DT_F32, DT_F64, DT_F16 };
	static const int idt[] = { DT_I8, DT_U8, DT_I16, DT_U16, DT_I32, DT_U32,
	                           DT_I64, DT_U64 };
	static const int fun[] = { KO_NEG, KO_ABS, KO_EXP, KO_LOG, KO_SQRT, KO_SIN,
		KO_COS, KO_TAN, KO_ASIN, KO_ACOS, KO_ATAN, KO_SINH, KO_COSH, KO_TANH,
		KO_ASINH, KO_ACOSH, KO_ATANH, KO_ERF, KO_FLOOR, KO_CEIL, KO_ROUND,
		KO_ISNAN, KO_ISINF };
	static const int fbin[] = { KO_ADD, KO_SUB, KO_MUL, KO_DIV, KO_FMOD,
		KO_POW, KO_MIN, KO_MAX, KO_LT, KO_LE, KO_GT, KO_GE, KO_EQ, KO_NE };
	static const int iun[] = { KO_NEG, KO_ABS, KO_BITNOT, KO_FLOOR };
	static const int ibin[] = { KO_ADD, KO_SUB, KO_MUL, KO_DIV, KO_MOD, KO_POW,
		KO_MIN, KO_MAX, KO_BAND, KO_BOR, KO_BXOR, KO_SHL, KO_SHR, KO_LT,
		KO_GE, KO_EQ, KO_NE };
	static const int castto[] = { DT_F32, DT_F64, DT_F16, DT_BF16, DT_I8,
		DT_U8, DT_I32, DT_I64, DT_U64, DT_BOOL };
	static Zoo z[600];
	T t;
	int nz = 0, i, j, n, d, rc;
	unsigned char in0[NZ * 8], in1[NZ * 8];
	const char *dir;
	char path[256], line[64];
	FILE *f;

	t_init(&t);
	for (d = 0; d < 3; d++) {
		int dt = fdt[d];
		for (j = 0; j < (int)(sizeof fun / sizeof fun[0]); j++, nz++) {
			z[nz].dt_in = dt;
			z[nz].k = kfix_op_kernel(&t, 1, fun[j], dt, &z[nz].dt_out);
		}
		for (j = 0; j < (int)(sizeof fbin / sizeof fbin[0]); j++, nz++) {
			z[nz].dt_in = dt;
			z[nz].k = kfix_op_kernel(&t, 2, fbin[j], dt, &z[nz].dt_out);
		}
	}
	for (d = 0; d < 8; d++) {
		int dt = idt[d];
		for (j = 0; j < (int)(sizeof iun / sizeof iun[0]); j++, nz++) {
			z[nz].dt_in = dt;
			z[nz].k = kfix_op_kernel(&t, 1, iun[j], dt, &z[nz].dt_out);
		}
		for (j = 0; j < (int)(sizeof ibin / sizeof ibin[0]); j++, nz++) {
			z[nz].dt_in = dt;
			z[nz].k = kfix_op_kernel(&t, 2, ibin[j], dt, &z[nz].dt_out);
		}
	}
	for (d = 0; d < 11; d++) {
		int dt = d < 3 ? fdt[d] : idt[d - 3];
		for (j = 0; j < (int)(sizeof castto / sizeof castto[0]); j++) {
			if (castto[j] == dt || (dt == DT_F16 && castto[j] == DT_F32))
				continue;
			/* float -> integer saturates (out of range, NaN: legalised) */
			z[nz].dt_in = dt;
			z[nz].k = kfix_op_kernel(&t, 3, castto[j], dt, &z[nz].dt_out);
			nz++;
		}
		z[nz].dt_in = dt;
		z[nz].k = kfix_op_kernel(&t, 4, 0, dt, &z[nz].dt_out);
		nz++;
	}
	/* bool logic */
	{
		static const int lop[] = { KO_AND, KO_OR, KO_XOR, KO_EQ };
		for (j = 0; j < 4; j++, nz++) {
			z[nz].dt_in = DT_BOOL;
			z[nz].k = kfix_op_kernel(&t, 2, lop[j], DT_BOOL, &z[nz].dt_out);
		}
		z[nz].dt_in = DT_BOOL;
		z[nz].k = kfix_op_kernel(&t, 1, KO_NOT, DT_BOOL, &z[nz].dt_out);
		nz++;
	}
	cr_assert_lt(nz, 600);

	/* interpreter, on the kernels legalised as for the C target */
	for (i = 0; i < nz; i++) {
		void *bufs[3] = { in0, in1, z[i].out };
		cr_assert_eq(kir_legalize(&t.c, &t.p, z[i].k, NULL), BURN_OK, "%s",
		             t.c.msg);
		cr_assert_eq(kir_verify(&t.c, z[i].k), BURN_OK, "%s", t.c.msg);
		zoo_data(z[i].dt_in, 0, in0);
		zoo_data(z[i].dt_in, 1, in1);
		cr_assert_eq(kir_interp(&t.c, z[i].k, bufs), BURN_OK, "%s", t.c.msg);
	}

	/* rendered program */
	dir = mktmp();
	snprintf(path, sizeof path, "%s/zoo.c", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	render_c_prelude(f);
	fprintf(f, "#include <stdio.h>\n");
	for (i = 0; i < nz; i++)
		cr_assert_eq(render_c_kernel(&t.c, z[i].k, f), BURN_OK, "%s", t.c.msg);
	fprintf(f, "static void dump(const void *p, int n)\n{\n"
	        "\tconst unsigned char *q = p;\n\tfor (int i = 0; i < n; i++)\n"
	        "\t\tprintf(\"%%02x\", q[i]);\n\tprintf(\"\\n\");\n}\n");
	/* volatile reads keep gcc from folding libm calls at compile time
	 * (correctly rounded) where the interpreter calls libm */
	fprintf(f, "static void load(unsigned char *d, const unsigned char *s, int n)\n{\n"
	        "\tconst volatile unsigned char *v = s;\n"
	        "\tfor (int i = 0; i < n; i++)\n\t\td[i] = v[i];\n}\n");
	fprintf(f, "int main(void)\n{\n\tuint64_t o[%d], a[%d], b[%d];\n",
	        NZ, NZ, NZ);
	for (d = 0; d < 12; d++) {
		int dt = d < 3 ? fdt[d] : d < 11 ? idt[d - 3] : DT_BOOL;
		for (j = 0; j < 2; j++) {
			zoo_data(dt, j, j ? in1 : in0);
			fprintf(f, "\tstatic const unsigned char in%d_%d[%d] = {", d, j,
			        NZ * 8);
			for (i = 0; i < NZ * dtype_size(dt); i++)
				fprintf(f, "%s%d", i ? "," : "", (j ? in1 : in0)[i]);
			fprintf(f, "};\n");
		}
	}
	for (i = 0; i < nz; i++) {
		int dt = z[i].dt_in, di;
		for (di = 0; di < 12; di++)
			if ((di < 3 ? fdt[di] : di < 11 ? idt[di - 3] : DT_BOOL) == dt)
				break;
		fprintf(f, "\tload((unsigned char *)a, in%d_0, %d);\n"
		        "\tload((unsigned char *)b, in%d_1, %d);\n"
		        "\t%s((const void *)a, (const void *)b, (void *)o);\n"
		        "\tdump(o, %d);\n", di, NZ * 8, di, NZ * 8, z[i].k->name,
		        NZ * dtype_size(z[i].dt_out));
	}
	fprintf(f, "\treturn 0;\n}\n");
	fclose(f);
	/* under UBSan: the C of every op is defined for these extreme values */
	rc = compile(dir, "zoo.c", "zoo", 2);
	if (getenv("BURN_KEEP"))
		fprintf(stderr, "kept %s\n", path);
	if (rc)
		dump_log(dir, "zoo");
	cr_assert_eq(rc, 0, "zoo.c does not compile cleanly (%s)", path);
	snprintf(line, sizeof line, "%s/zoo", dir);
	f = popen(line, "r");
	cr_assert_not_null(f);
	for (i = 0; i < nz; i++) {
		int es = dtype_size(z[i].dt_out);
		unsigned char got[NZ * 8];
		char hex[NZ * 16 + 8];
		cr_assert_not_null(fgets(hex, sizeof hex, f));
		for (n = 0; n < NZ * es; n++) {
			unsigned v;
			sscanf(hex + 2 * n, "%2x", &v);
			got[n] = (unsigned char)v;
		}
		for (n = 0; n < NZ; n++)
			cr_expect(kfix_same(z[i].dt_out, got + n * es, z[i].out + n * es),
			          "%s (%s -> %s) element %d differs", z[i].k->name,
			          dtype_name(z[i].dt_in), dtype_name(z[i].dt_out), n);
	}
	cr_assert_eq(pclose(f), 0, "zoo failed under UBSan (BURN_KEEP=1 keeps %s)",
	             path);
	if (!getenv("BURN_KEEP"))
		rmtmp();
	t_fini(&t);
}

/* f32 -> f16 -> f32 through the interpreter: rounding, subnormals, limits. */
Test(kir, f16_conversion)
{
	static const float in[] = { 1.0f, 65504.0f, 65519.0f, 65520.0f, -1e9f,
		0x1p-25f, 0x1.8p-25f, 0x1p-24f, 0x1.8p-24f, 0x1p-14f, 1.00048828125f,
		1.00146484375f, -0.0f, NAN, 0.1f, 0x1.ffcp-15f };
	static const uint16_t want[] = { 0x3c00, 0x7bff, 0x7bff, 0x7c00, 0xfc00,
		0x0000, 0x0001, 0x0001, 0x0002, 0x0400, 0x3c00, 0x3c02, 0x8000,
		0x7e00, 0x2e66, 0x0400 };
	enum { N = sizeof in / sizeof in[0] };
	uint16_t h[N];
	float back[N];
	void *bufs[3] = { (void *)in, h, back };
	T t;
	KB *kb = &t.kb;
	KKernel *k;
	int a, o, o2, i;

	t_init(&t);
	kb_begin(kb, &t.p, "f16", "");
	a = kb_buf_value(kb, 0, DT_F32, N, KA_READ);
	o = kb_buf_value(kb, 1, DT_F16, N, KA_WRITE);
	o2 = kb_buf_value(kb, 2, DT_F32, N, KA_WRITE);
	i = kb_for(kb, "i", kb_idx(kb, 0), kb_idx(kb, N), 0);
	kb_store(kb, o, kb_get(kb, i), kb_load(kb, a, kb_get(kb, i)));
	kb_store(kb, o2, kb_get(kb, i), kb_cast(kb, DT_F16, kb_load(kb, a, kb_get(kb, i))));
	kb_end(kb);
	k = kb_finish(kb);
	/* unlegalised storage conversions are refused */
	cr_assert_neq(kir_interp(&t.c, k, bufs), BURN_OK);
	cr_assert_eq(kir_legalize(&t.c, &t.p, k, NULL), BURN_OK, "%s", t.c.msg);
	cr_assert_eq(kir_verify(&t.c, k), BURN_OK, "%s", t.c.msg);
	cr_assert_eq(kir_interp(&t.c, k, bufs), BURN_OK, "%s", t.c.msg);
	for (i = 0; i < N; i++) {
		cr_expect_eq((h[i] & 0x7c00) == 0x7c00 && (h[i] & 0x3ff) ? 0x7e00 | (h[i] & 0x8000) : h[i],
		             want[i], "f16(%a) = %#x, want %#x", in[i], h[i], want[i]);
		if (!isnan(in[i]) && fabsf(in[i]) < 65504)
			cr_expect(fabsf(back[i] - in[i]) <= fabsf(in[i]) * 0x1p-11f + 0x1p-25f,
			          "round trip %a -> %a", in[i], back[i]);
	}
	t_fini(&t);
}

/* Regression: div and mod on bool operands legalised into quot/rem, which
 * take no bool, so the legal kernel failed to verify.  As the integers 0
 * and 1: a / b is a and b, a % b is 0. */
Test(kir, bool_div_mod_legalise)
{
	static const unsigned char a[4] = { 0, 1, 0, 1 }, b[4] = { 0, 0, 1, 1 };
	static const int op[2] = { KO_DIV, KO_MOD };
	static const unsigned char want[2][4] = { { 0, 0, 0, 1 }, { 0, 0, 0, 0 } };

	for (int j = 0; j < 2; j++) {
		T t;
		KB *kb = &t.kb;
		KKernel *k;
		unsigned char out[4] = { 9, 9, 9, 9 };
		void *bufs[3] = { (void *)a, (void *)b, out };
		int x, y, o, i;

		t_init(&t);
		kb_begin(kb, &t.p, "booldiv", "");
		x = kb_buf_value(kb, 0, DT_BOOL, 4, KA_READ);
		y = kb_buf_value(kb, 1, DT_BOOL, 4, KA_READ);
		o = kb_buf_value(kb, 2, DT_BOOL, 4, KA_WRITE);
		i = kb_for(kb, "i", kb_idx(kb, 0), kb_idx(kb, 4), 0);
		kb_store(kb, o, kb_get(kb, i), kb_bin(kb, op[j],
		         kb_load(kb, x, kb_get(kb, i)), kb_load(kb, y, kb_get(kb, i))));
		kb_end(kb);
		k = kb_finish(kb);
		cr_assert_not_null(k);
		cr_assert_eq(kir_legalize(&t.c, &t.p, k, NULL), BURN_OK, "%s", t.c.msg);
		cr_assert_eq(kir_verify(&t.c, k), BURN_OK, "%s", t.c.msg);
		cr_assert_eq(kir_interp(&t.c, k, bufs), BURN_OK, "%s", t.c.msg);
		cr_expect_arr_eq(out, want[j], 4, "%s on bool", kop_name(op[j]));
		t_fini(&t);
	}
}

/* f64 fma without an fma (KCaps.no_fma_f64: freestanding C, wasm;
 * passes/legalize.c fma64_soft) against C's fma bit for bit: random
 * operands over 2^-300 .. 2^300, with c near -a b (cancellation), near
 * a b's ulp (the rounding of the low part decides), and unrelated. */
Test(kir, fma64_soft)
{
	enum { N = 60000 };
	static const KCaps nofma = { .no_fma_f64 = 1 };
	double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
	double *c = malloc(N * sizeof *c), *o = malloc(N * sizeof *o);
	uint64_t s = 0x9e3779b97f4a7c15u;
	void *bufs[4] = { a, b, c, o };
	int ba, bb, bc, bo, i, bad = 0;
	KB *kb;
	KKernel *k;
	T t;

	cr_assert(a && b && c && o);
	for (int n = 0; n < N; n++) {
		double r[3];
		for (int j = 0; j < 3; j++) {
			uint64_t u;
			s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
			u = s * 0x2545f4914f6cdd1du;
			r[j] = ldexp(1.0 + (double)(u >> 12) * 0x1p-52, (int)(u % 601) - 300) *
			       (u & 2048 ? -1 : 1);
		}
		a[n] = r[0];
		b[n] = r[1];
		c[n] = n % 3 == 0 ? -(a[n] * b[n]) * (1 + (r[2] - trunc(r[2])) * 0x1p-40)
		     : n % 3 == 1 ? ldexp(r[2], ilogb(a[n] * b[n]) - 53 - ilogb(r[2]))
		     : r[2];
		if (n % 10 == 9) {
			/* a double-rounding trap: a b = 2^-20 (1 - 2^-104) and c =
			 * B - 2^-20 + 2^-53, B = 1 + k 2^-52 with k odd, so a b + c
			 * lies 2^-124 below the tie B + 2^-53; c + a b rounds to the
			 * tie's even side, and the low parts' sum loses the 2^-124
			 * unless it is rounded to odd (scaled by 2^e, either sign) */
			int e = (int)(s % 401) - 200;
			double sg = s & 4096 ? -1 : 1;
			double B = 1 + (double)((s >> 44) | 1) * 0x1p-52;
			a[n] = sg * ldexp(1 + 0x1p-52, e - 20);
			b[n] = 1 - 0x1p-52;
			c[n] = sg * ldexp(B - 0x1p-20 + 0x1p-53, e);
		}
	}
	t_init(&t);
	kb = &t.kb;
	kb_begin(kb, &t.p, "fma", "fma");
	ba = kb_buf_value(kb, 0, DT_F64, N, KA_READ);
	bb = kb_buf_value(kb, 1, DT_F64, N, KA_READ);
	bc = kb_buf_value(kb, 2, DT_F64, N, KA_READ);
	bo = kb_buf_value(kb, 3, DT_F64, N, KA_WRITE);
	i = kb_for(kb, "i", kb_idx(kb, 0), kb_idx(kb, N), KF_PARALLEL);
	kb_store(kb, bo, kb_get(kb, i), kb_fma(kb, kb_load(kb, ba, kb_get(kb, i)),
	         kb_load(kb, bb, kb_get(kb, i)), kb_load(kb, bc, kb_get(kb, i))));
	kb_end(kb);
	k = kb_finish(kb);
	cr_assert_eq(kir_legalize(&t.c, &t.p, k, &nofma), BURN_OK, "%s", t.c.msg);
	for (KRef r = 1; r < k->nnode; r++)   /* the store takes the emulation */
		if (k->node[r].kind == KS_STORE)
			cr_assert_neq(k->node[k->node[r].b].kind, KE_FMA, "an fma left");
	cr_assert_eq(kir_interp(&t.c, k, bufs), BURN_OK, "%s", t.c.msg);
	for (int n = 0; n < N; n++) {
		double w = fma(a[n], b[n], c[n]);
		if (memcmp(&w, &o[n], sizeof w) && bad++ < 5)
			cr_log_error("fma(%a, %a, %a) = %a, C %a", a[n], b[n], c[n], o[n], w);
	}
	cr_expect_eq(bad, 0, "%d of %d differ from C's fma", bad, N);
	t_fini(&t);
	free(a), free(b), free(c), free(o);
}

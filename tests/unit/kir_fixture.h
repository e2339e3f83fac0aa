/*
 * kir_fixture.h - what the kernel-IR unit tests share: a program to build
 * kernels into, the one-op kernels every renderer is checked on, and the
 * comparison of two results bit for bit.  Header-only (static functions),
 * included by test_kir.c, test_simt.c and test_llvm.c.
 */
#ifndef BURN_TEST_KIR_FIXTURE_H
#define BURN_TEST_KIR_FIXTURE_H

#include <math.h>
#include <string.h>
#include "ir/kir.h"

/* Elements of the one-op kernels' buffers. */
#define NZ 16

typedef struct T {
	Arena a;
	Ctx c;
	KProgram p;
	KB kb;
} T;

static inline void
t_init(T *t)
{
	memset(t, 0, sizeof *t);
	arena_init(&t->a);
	burn_ctx_init(&t->c, "test");
	kprog_init(&t->p, &t->a);
}

static inline void
t_fini(T *t)
{
	arena_free(&t->a);
}

/*
 * A kernel out[i] = f(a[i], b[i]) over NZ elements of dtype dt: kind 1 the
 * unary op `op`, 2 the binary op `op`, 3 a cast to the dtype `op`, 4 a
 * select (x < y ? x : x * x; on bool x != y ? x : y).  *dt_out gets the
 * output buffer's dtype.  NULL where op does not take dt: outside its
 * domain, quot/rem (made by legalisation only, with their precondition
 * established), arithmetic on bool (the graph makes none).
 */
static inline KKernel *
kfix_op_kernel(T *t, int kind, int op, int dt, int *dt_out)
{
	KB *kb = &t->kb;
	int a, b, o, i, odt, edt = dtype_is_storage(dt) ? DT_F32 : dt;
	KRef x, y, r;

	if (kind == 1 || kind == 2) {
		if (kop_info[op].arity != kind || kop_result(op, edt) == DT_UNDEF ||
		    (kop_info[op].props & KP_PRE))
			return NULL;
		if (dt == DT_BOOL && kop_info[op].domain != KD_BOOL &&
		    op != KO_EQ && op != KO_NE)
			return NULL;
	}
	kb_begin(kb, &t->p, kind == 3 ? "cast" : kind == 4 ? "sel" : kop_name(op), "");
	a = kb_buf_value(kb, 0, dt, NZ, KA_READ);
	b = kb_buf_value(kb, 1, dt, NZ, KA_READ);
	i = kb_for(kb, "i", kb_idx(kb, 0), kb_idx(kb, NZ), KF_PARALLEL);
	x = kb_load(kb, a, kb_get(kb, i));
	y = kb_load(kb, b, kb_get(kb, i));
	if (kind == 1)
		r = kb_un(kb, op, x);
	else if (kind == 2)
		r = kb_bin(kb, op, x, y);
	else if (kind == 3)
		r = kb_cast(kb, op, x);
	else if (dt == DT_BOOL)
		r = kb_select(kb, kb_bin(kb, KO_NE, x, y), x, y);
	else
		r = kb_select(kb, kb_bin(kb, KO_LT, x, y), x, kb_bin(kb, KO_MUL, x, x));
	odt = kind == 3 ? op : kb_dtype(kb->k, r);
	o = kb_buf_value(kb, 2, odt, NZ, KA_WRITE);
	kb_store(kb, o, kb_get(kb, i), r);
	kb_end(kb);
	*dt_out = odt;
	return kb_finish(kb);
}

/* The same value of dtype dt: bit for bit, any NaN for any NaN. */
static inline int
kfix_same(int dt, const unsigned char *p, const unsigned char *q)
{
	if (dt == DT_F32) {
		float a, b;
		memcpy(&a, p, 4);
		memcpy(&b, q, 4);
		return (isnan(a) && isnan(b)) || memcmp(p, q, 4) == 0;
	}
	if (dt == DT_F64) {
		double a, b;
		memcpy(&a, p, 8);
		memcpy(&b, q, 8);
		return (isnan(a) && isnan(b)) || memcmp(p, q, 8) == 0;
	}
	if (dt == DT_F16 || dt == DT_BF16) {
		uint16_t a, b, e = dt == DT_F16 ? 0x7c00 : 0x7f80;
		memcpy(&a, p, 2);
		memcpy(&b, q, 2);
		if ((a & 0x7fff) > e && (b & 0x7fff) > e)
			return 1;
	}
	return memcmp(p, q, (size_t)dtype_size(dt)) == 0;
}

#endif

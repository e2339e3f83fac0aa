/*
 * test_kir_text.c - the kernel-IR text form (ir/kir_text.c): a kernel made
 * by the builder prints, parses back and prints the same; constants of
 * random bit patterns come back bit for bit; variable hints survive;
 * errors carry line, column and a caret; the parser never accepts text it
 * cannot print back.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/kir.h"

typedef struct T {
	Arena a, a2;
	Ctx c;
	KProgram p, p2;
	KB kb;
} T;

static void
t_init(T *t)
{
	memset(t, 0, sizeof *t);
	arena_init(&t->a);
	arena_init(&t->a2);
	burn_ctx_init(&t->c, "test.kir");
	kprog_init(&t->p, &t->a);
	kprog_init(&t->p2, &t->a2);
}

static void
t_fini(T *t)
{
	arena_free(&t->a);
	arena_free(&t->a2);
}

static char *
print_str(const KProgram *p)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	cr_assert(f);
	kprog_print(f, p);
	fclose(f);
	return buf;
}

static int
parse_str(T *t, const char *s)
{
	return kprog_parse(&t->c, &t->p2, s, strlen(s));
}

/* Print p, parse into p2, print again: the same text.  Returns the text. */
static char *
round_trip(T *t)
{
	char *s1 = print_str(&t->p), *s2;

	cr_assert_eq(parse_str(t, s1), BURN_OK, "%s\n%s", t->c.msg, s1);
	s2 = print_str(&t->p2);
	cr_assert_str_eq(s1, s2);
	free(s2);
	return s1;
}

/* A softmax-like kernel with two variables of one hint, a let, an if. */
Test(kir_text, builder_kernel_round_trips)
{
	T t;
	KB *kb = &t.kb;
	int x, y, i, j, acc1, acc2;
	KRef l;
	char *s;

	t_init(&t);
	kb_begin(kb, &t.p, "k", "Softmax(s)\nsecond line\\");
	x = kb_buf_value(kb, 3, DT_F32, 8, KA_READ);
	y = kb_buf_value(kb, 4, DT_F16, 8, KA_WRITE);
	acc1 = kb_var(kb, DT_F32, "acc");
	acc2 = kb_var(kb, DT_F32, "acc");
	i = kb_for(kb, "i", kb_idx(kb, 0), kb_idx(kb, 2), KF_PARALLEL);
	kb_set(kb, acc1, kb_const_f(kb, DT_F32, -INFINITY));
	kb_set(kb, acc2, kb_const_f(kb, DT_F32, 0));
	j = kb_for(kb, "j", kb_idx(kb, 0), kb_idx(kb, 4), 0);
	l = kb_load(kb, x, kb_bin(kb, KO_ADD, kb_bin(kb, KO_MUL, kb_get(kb, i),
	                                             kb_idx(kb, 4)), kb_get(kb, j)));
	kb_if(kb, kb_bin(kb, KO_GT, l, kb_get(kb, acc1)));
	kb_set(kb, acc1, l);
	kb_else(kb);
	kb_set(kb, acc2, kb_bin(kb, KO_ADD, kb_get(kb, acc2), kb_un(kb, KO_EXP, l)));
	kb_end(kb);
	kb_store(kb, y, kb_bin(kb, KO_ADD, kb_bin(kb, KO_MUL, kb_get(kb, i),
	                                          kb_idx(kb, 4)), kb_get(kb, j)),
	         kb_cast_f8(kb, DT_F8E4M3FN, kb_bin(kb, KO_MUL, l, l), KC_NOSAT));
	kb_end(kb);
	kb_end(kb);
	kb_finish(kb);
	cr_assert_eq(kir_verify(&t.c, t.p.kernel[0]), BURN_OK, "%s", t.c.msg);
	s = round_trip(&t);
	cr_assert(strstr(s, "kernel 0 k: Softmax(s)\\nsecond line\\\\\n"), "%s", s);
	cr_assert(strstr(s, "var acc.0: f32\n  var acc.1: f32\n"), "%s", s);
	cr_assert(strstr(s, "float8e4m3fn.1(mul(t0, t0))"), "%s", s);
	cr_assert(strstr(s, "-inf:f32"), "%s", s);
	/* hints, ops and buffers come back */
	cr_assert_str_eq(t.p2.kernel[0]->var[1].name, "acc");
	cr_assert_str_eq(t.p2.kernel[0]->ops, "Softmax(s)\nsecond line\\");
	cr_assert_eq(t.p2.kernel[0]->buf[1].dtype, DT_F16);
	cr_assert_eq(t.p2.kernel[0]->buf[1].value, 4);
	free(s);
	t_fini(&t);
}

static uint64_t rng = 88172645463325252u;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* 2000 f32 and 2000 f64 constants of random bits (NaNs with payloads,
 * denormals, infinities included) read back to the same bits. */
Test(kir_text, float_constants_exact)
{
	T t;
	KB *kb = &t.kb;
	int bf, bd, n = 2000, k;
	char *s;

	t_init(&t);
	kb_begin(kb, &t.p, "consts", "");
	bf = kb_buf(kb, DT_F32, n, 0, KS_GLOBAL, KA_WRITE);
	bd = kb_buf(kb, DT_F64, n, 1, KS_GLOBAL, KA_WRITE);
	for (k = 0; k < n; k++) {
		uint32_t b32 = (uint32_t)rnd();
		uint64_t b64 = rnd();
		float f;
		double d;
		if (k % 7 == 0)   /* many small exponents: denormals and zeros */
			b32 &= 0x807fffffu, b64 &= UINT64_C(0x800fffffffffffff);
		if (k % 11 == 0)  /* infinities and NaNs */
			b32 |= 0x7f800000u, b64 |= UINT64_C(0x7ff0000000000000);
		memcpy(&f, &b32, 4);
		memcpy(&d, &b64, 8);
		kb_store(kb, bf, kb_idx(kb, k), kb_const_f(kb, DT_F32, f));
		kb_store(kb, bd, kb_idx(kb, k), kb_const_f(kb, DT_F64, d));
	}
	kb_finish(kb);
	s = round_trip(&t);
	{
		const KKernel *a = t.p.kernel[0], *b = t.p2.kernel[0];
		KRef x = a->body, y = b->body;
		for (k = 0; x && y; k++, x = a->node[x].next, y = b->node[y].next) {
			double fa = a->node[a->node[x].b].fval;
			double fb = b->node[b->node[y].b].fval;
			cr_assert(memcmp(&fa, &fb, sizeof fa) == 0,
			          "store %d: %a came back as %a", k, fa, fb);
		}
		cr_assert_eq(k, 2 * n);
		cr_assert(!x && !y);
	}
	free(s);
	t_fini(&t);
}

/* Integer constants at the edges of their dtypes. */
Test(kir_text, integer_constants)
{
	T t;
	const char *src =
		"kernel k\n"
		"  buf b0: i64[2] global v0 write\n"
		"  buf b1: u64[1] global v1 write\n"
		"  buf b2: i8[1] global v2 write\n"
		"{\n"
		"  b0[0] = -9223372036854775808\n"
		"  b0[1] = 0x7fffffffffffffff\n"
		"  b1[0] = 18446744073709551615u\n"
		"  b2[0] = -128:i8\n"
		"}\n";
	const KKernel *k;

	t_init(&t);
	cr_assert_eq(parse_str(&t, src), BURN_OK, "%s", t.c.msg);
	k = t.p2.kernel[0];
	cr_assert_eq(k->node[k->node[k->body].b].ival, INT64_MIN);
	cr_assert_eq(k->node[k->node[k->node[k->body].next].b].ival, INT64_MAX);
	t_fini(&t);
}

/* Errors: FILE:LINE:COL, then the line and a caret under the column. */
Test(kir_text, error_position)
{
	T t;

	t_init(&t);
	cr_assert_eq(parse_str(&t, "kernel k\n  var x: f32\n{\n  x = add(x, 1)\n}\n"),
	             BURN_ERR_PARSE);
	cr_assert_str_eq(t.c.msg, "test.kir:4:7: add(f32, i64)\n"
	                          "  x = add(x, 1)\n"
	                          "      ^");
	t_fini(&t);
	t_init(&t);
	cr_assert_eq(parse_str(&t, "kernel k\n{\n\tfor\n"), BURN_ERR_PARSE);
	cr_assert_str_eq(t.c.msg, "test.kir:4:1: expected a variable, found the end\n"
	                          "\n^");
	t_fini(&t);
	/* a limit is BURN_ERR_LIMIT, also with a position */
	t_init(&t);
	t.c.limits.max_tensor_bytes = 16;
	cr_assert_eq(parse_str(&t, "kernel k\n  buf b0: f32[5] local rw\n{\n}\n"),
	             BURN_ERR_LIMIT);
	cr_assert(strstr(t.c.msg, "test.kir:2:11: buffer of 5 elements"), "%s",
	          t.c.msg);
	t_fini(&t);
}

/* A failed parse keeps the kernels before the faulty one; none of it. */
Test(kir_text, error_keeps_earlier_kernels)
{
	T t;

	t_init(&t);
	cr_assert_eq(parse_str(&t, "kernel a\n{\n}\nkernel b\n{\n  barrier\n"),
	             BURN_ERR_PARSE);
	cr_assert_eq(t.p2.nkernel, 1);
	cr_assert_str_eq(t.p2.kernel[0]->name, "a");
	t_fini(&t);
}

/* Deep nesting is refused with a limit, not a stack overflow. */
Test(kir_text, deep_nesting_refused)
{
	T t;
	size_t n = 200000, i;
	char *s = malloc(3 * n + 64), *p = s;

	cr_assert(s);
	p += sprintf(p, "kernel k\n  var x: i64\n{\n  x = ");
	for (i = 0; i < n; i++)
		*p++ = '(';
	*p++ = '1';
	for (i = 0; i < n; i++)
		*p++ = ')';
	strcpy(p, "\n}\n");
	t_init(&t);
	cr_assert_eq(parse_str(&t, s), BURN_ERR_LIMIT, "%s", t.c.msg);
	t_fini(&t);
	/* a long left-leaning chain: the tree's depth counts, not the text's */
	p = s + sprintf(s, "kernel k\n  var x: i64\n{\n  x = 1");
	for (i = 0; i < 10000; i++)
		p += sprintf(p, " + 1");
	strcpy(p, "\n}\n");
	t_init(&t);
	cr_assert_eq(parse_str(&t, s), BURN_ERR_LIMIT, "%s", t.c.msg);
	t_fini(&t);
	free(s);
}

/* Aliases print, parse and refuse cycles. */
Test(kir_text, aliases)
{
	T t;
	char *s;

	t_init(&t);
	cr_assert_eq(kprog_parse(&t.c, &t.p, "alias v3 = v1\nalias v1 = v0\n", 28),
	             BURN_OK, "%s", t.c.msg);
	cr_assert_eq(kprog_storage(&t.p, 3), 0);
	s = round_trip(&t);
	cr_assert_str_eq(s, "alias v1 = v0\nalias v3 = v1\n\n");
	free(s);
	cr_assert_eq(kprog_parse(&t.c, &t.p, "alias v0 = v3\n", 14), BURN_ERR_PARSE);
	cr_assert(strstr(t.c.msg, "cycle"), "%s", t.c.msg);
	t_fini(&t);
}

/* An alias at an offset (a Concat's input in its output) prints and
 * parses back, and kprog_storage_off sums the chain's offsets. */
Test(kir_text, alias_offsets)
{
	T t;
	char *s;
	const char *in = "alias v2 = v1 + 64\nalias v1 = v0 + 4096\n";

	t_init(&t);
	cr_assert_eq(kprog_parse(&t.c, &t.p, in, strlen(in)), BURN_OK, "%s", t.c.msg);
	cr_assert_eq(kprog_storage(&t.p, 2), 0);
	cr_assert_eq(kprog_storage_off(&t.p, 2), 4160);
	cr_assert_eq(kprog_storage_off(&t.p, 1), 4096);
	cr_assert_eq(kprog_storage_off(&t.p, 0), 0);
	s = round_trip(&t);
	cr_assert_str_eq(s, "alias v1 = v0 + 4096\nalias v2 = v1 + 64\n\n");
	free(s);
	t_fini(&t);
}

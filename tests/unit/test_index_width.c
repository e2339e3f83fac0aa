/*
 * test_index_width.c - 32-bit indices only where they provably fit
 * (passes/index_width.c), and the interpreter computes narrowed kernels
 * in 32 bits, so narrowing too far is a wrong result, not a silent one.
 *
 * The seeded bug: the same kernel narrowed with the bound raised from 2^31
 * to 2^40 (as a wrong proof would) reads element i instead of 2^32 + i of
 * a 4 GiB buffer (mapped without reserving memory: only its last page is
 * touched); the check that passes on the sound decision fails on it.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include "ir/kir.h"
#include "passes/passes.h"
#include "passes/index_width.h"
#include "tools/compile.h"

typedef struct T {
	Arena a;
	Ctx c;
	KProgram p;
	KSched s;
} T;

static void
t_init(T *t)
{
	arena_init(&t->a);
	burn_ctx_init(&t->c, "test");
	kprog_init(&t->p, &t->a);
	memset(&t->s, 0, sizeof t->s);
	t->s.target = "test";
}

static KKernel *
t_add(T *t, KKernel *k)
{
	k->sched = &t->s;
	cr_assert_eq(kir_verify(&t->c, k), BURN_OK, "%s", t->c.msg);
	return k;
}

/* out[i*inner + j] = 1 for i < outer, j < inner */
static KKernel *
fill(T *t, int64_t outer, int64_t inner)
{
	KB kb;
	int out, i, j;

	kb_begin(&kb, &t->p, "fill", "test");
	out = kb_buf_value(&kb, 0, DT_U8, outer * inner, KA_WRITE);
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, outer), 0);
	j = kb_for(&kb, "j", kb_idx(&kb, 0), kb_idx(&kb, inner), 0);
	kb_store(&kb, out, kb_bin(&kb, KO_ADD, kb_bin(&kb, KO_MUL, kb_get(&kb, i),
	         kb_idx(&kb, inner)), kb_get(&kb, j)), kb_const_i(&kb, DT_U8, 1));
	kb_end(&kb);
	kb_end(&kb);
	return t_add(t, kb_finish(&kb));
}

Test(index_width, ranges)
{
	T t;
	int64_t lo, hi;
	KKernel *k;

	t_init(&t);
	k = fill(&t, 1000, 1000);
	cr_assert(kir_index_range(k, &lo, &hi));
	cr_expect_eq(lo, 0);
	cr_expect_eq(hi, 999999);
	/* 2^20 rows of 4096: the last index is 2^32 - 1 */
	k = fill(&t, (int64_t)1 << 20, 4096);
	cr_assert(kir_index_range(k, &lo, &hi));
	cr_expect_eq(hi, ((int64_t)1 << 32) - 1);
	cr_assert_eq(pass_index_width(&t.c, &t.p, 32, (int64_t)1 << 31), BURN_OK);
	cr_expect_eq(t.p.kernel[0]->sched->index_bits, 64, "shared sched: last wins");
	arena_free(&t.a);
}

Test(index_width, loaded_and_growing_values_prove_nothing)
{
	T t;
	KB kb;
	int in, out, i, v;
	int64_t lo, hi;
	KKernel *k;

	t_init(&t);
	/* out[in[i]]: an index loaded from memory */
	kb_begin(&kb, &t.p, "gather", "test");
	in = kb_buf_value(&kb, 0, DT_I64, 8, KA_READ);
	out = kb_buf_value(&kb, 1, DT_F32, 8, KA_WRITE);
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, 8), 0);
	kb_store(&kb, out, kb_load(&kb, in, kb_get(&kb, i)), kb_const_f(&kb, DT_F32, 1));
	kb_end(&kb);
	k = t_add(&t, kb_finish(&kb));
	cr_expect_not(kir_index_range(k, &lo, &hi));
	/* but an i32 index loaded and widened is bounded by its type */
	kb_begin(&kb, &t.p, "gather32", "test");
	in = kb_buf_value(&kb, 0, DT_I32, 8, KA_READ);
	out = kb_buf_value(&kb, 1, DT_F32, 8, KA_WRITE);
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, 8), 0);
	kb_store(&kb, out, kb_cast(&kb, DT_I64, kb_load(&kb, in, kb_get(&kb, i))),
	         kb_const_f(&kb, DT_F32, 1));
	kb_end(&kb);
	k = t_add(&t, kb_finish(&kb));
	cr_expect(kir_index_range(k, &lo, &hi));
	cr_expect_eq(lo, INT32_MIN);
	/* a counter grows every pass of the analysis: no bound */
	kb_begin(&kb, &t.p, "count", "test");
	out = kb_buf_value(&kb, 0, DT_F32, 8, KA_WRITE);
	v = kb_var(&kb, DT_I64, "v");
	kb_set(&kb, v, kb_idx(&kb, 0));
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, 8), 0);
	kb_store(&kb, out, kb_get(&kb, v), kb_const_f(&kb, DT_F32, 1));
	kb_set(&kb, v, kb_bin(&kb, KO_ADD, kb_get(&kb, v), kb_idx(&kb, 1)));
	kb_end(&kb);
	k = t_add(&t, kb_finish(&kb));
	cr_expect_not(kir_index_range(k, &lo, &hi));
	arena_free(&t.a);
}

/* out[i] = in[2^32 + i], i < 16, from a 4 GiB + 16 buffer */
Test(index_width, narrowing_past_2_31_is_caught)
{
	T t;
	KB kb;
	int in, out, i;
	const int64_t base = (int64_t)1 << 32, n = base + 16;
	uint8_t *big, res[16];
	void *bufs[2];
	KKernel *k;
	int wrong = 0;

	t_init(&t);
	kb_begin(&kb, &t.p, "far", "test");
	in = kb_buf_value(&kb, 0, DT_U8, n, KA_READ);
	out = kb_buf_value(&kb, 1, DT_U8, 16, KA_WRITE);
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, 16), 0);
	kb_store(&kb, out, kb_get(&kb, i), kb_load(&kb, in, kb_bin(&kb, KO_ADD,
	         kb_get(&kb, i), kb_idx(&kb, base))));
	kb_end(&kb);
	k = t_add(&t, kb_finish(&kb));
	big = mmap(NULL, (size_t)n, PROT_READ | PROT_WRITE,
	           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	cr_assert(big != MAP_FAILED, "mmap of 4 GiB (no reserve) failed");
	for (int j = 0; j < 16; j++)
		big[base + j] = (uint8_t)(j + 1);
	bufs[0] = big;
	bufs[1] = res;

	/* sound: 2^32 + 15 does not fit, the kernel keeps 64-bit indices */
	cr_assert_eq(pass_index_width(&t.c, &t.p, 32, (int64_t)1 << 31), BURN_OK);
	cr_assert_eq(k->sched->index_bits, 64);
	cr_assert_eq(kir_interp(&t.c, k, bufs), BURN_OK, "%s", t.c.msg);
	for (int j = 0; j < 16; j++)
		cr_expect_eq(res[j], j + 1, "res[%d] = %d", j, res[j]);

	/* the seeded bug: a bound of 2^40 narrows it, and the result is wrong */
	cr_assert_eq(pass_index_width(&t.c, &t.p, 32, (int64_t)1 << 40), BURN_OK);
	cr_assert_eq(k->sched->index_bits, 32);
	memset(res, 0, sizeof res);
	cr_assert_eq(kir_interp(&t.c, k, bufs), BURN_OK, "%s", t.c.msg);
	for (int j = 0; j < 16; j++)
		wrong |= res[j] != j + 1;
	cr_expect(wrong, "a kernel narrowed past 2^31 computed the right result: "
	          "the interpreter does not apply index_bits");
	munmap(big, (size_t)n);
	arena_free(&t.a);
}

/* The gpu target narrows the kernels of a small model; the cpu target
 * never narrows. */
Test(index_width, gpu_target_narrows_small_kernels)
{
	const char *path = BURN_SOURCE_DIR "/../shared/onnx-tests/node/"
	                   "test_softmax_axis_1/model.onnx";
	CompileOpts o;
	Ctx c;
	Compiled *m;
	int n32 = 0;

	burn_ctx_init(&c, "test");
	memset(&o, 0, sizeof o);
	o.target = target_find("gpu");
	cr_assert_not_null(o.target);
	cr_assert_eq(burn_compile_file(&c, path, &o, &m), BURN_OK, "%s", c.msg);
	for (int i = 0; i < m->prog.nkernel; i++)
		n32 += m->prog.kernel[i]->sched->index_bits == 32;
	cr_expect_eq(n32, m->prog.nkernel, "%d of %d kernels narrowed", n32,
	             m->prog.nkernel);
	burn_compiled_destroy(m);
	o.target = target_find("cpu");
	cr_assert_eq(burn_compile_file(&c, path, &o, &m), BURN_OK, "%s", c.msg);
	for (int i = 0; i < m->prog.nkernel; i++)
		cr_expect_eq(m->prog.kernel[i]->sched->index_bits, 64);
	burn_compiled_destroy(m);
}

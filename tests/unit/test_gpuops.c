/*
 * test_gpuops.c - the kernel IR's GPU statements (ir/kops.def, KGPU rows): vector
 * copies, atomics, async copies, subgroup shuffles and reductions and the
 * matrix-tile ops, each run by the interpreter with GPU semantics against
 * a reference computed here, each printed and parsed back; and the misuse
 * the interpreter must report: a shuffle under divergent control flow,
 * reading an async copy's destination before its wait, a copy never
 * waited for, atomics mixed with plain accesses, misaligned vectors,
 * non-uniform tile operands, a tile read racing with its producer.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/kir.h"
#include "passes/legalize.h"

typedef struct T {
	Arena a;
	Ctx c;
	KProgram p;
} T;

/* Parse `text` (one kernel), check that it prints back as it parses, and
 * return it; NULL with t->c.msg when the parser refuses it. */
static KKernel *
parse(T *t, const char *text)
{
	char *out = NULL, *out2 = NULL;
	size_t n = 0, n2 = 0;
	FILE *f;
	KProgram q;

	memset(t, 0, sizeof *t);
	arena_init(&t->a);
	burn_ctx_init(&t->c, "test");
	kprog_init(&t->p, &t->a);
	if (kprog_parse(&t->c, &t->p, text, strlen(text)) != BURN_OK)
		return NULL;
	f = open_memstream(&out, &n);
	kprog_print(f, &t->p);
	fclose(f);
	kprog_init(&q, &t->a);
	cr_assert_eq(kprog_parse(&t->c, &q, out, n), BURN_OK, "reparse: %s\n%s",
	             t->c.msg, out);
	f = open_memstream(&out2, &n2);
	kprog_print(f, &q);
	fclose(f);
	cr_assert_str_eq(out, out2, "print -> parse -> print");
	free(out);
	free(out2);
	/* integer division in the indices is legalised, as the pipeline does */
	cr_assert_eq(kir_legalize(&t->c, &t->p, t->p.kernel[0], NULL), BURN_OK,
	             "%s", t->c.msg);
	return t->p.kernel[0];
}

static int
run(T *t, KKernel *k, void **bufs, unsigned seed)
{
	char s[32];

	snprintf(s, sizeof s, "%u", seed);
	setenv("BURN_SIMT_SEED", s, 1);
	return kir_interp(&t->c, k, bufs);
}

/* f16 bits of a float exactly representable as a normal f16 (or 0). */
static uint16_t
h(float x)
{
	uint32_t u;

	memcpy(&u, &x, 4);
	if (!(u & 0x7fffffff))
		return (uint16_t)(u >> 16);
	return (uint16_t)(((u >> 16) & 0x8000) | ((((u >> 23) & 0xff) - 112) << 10) |
	                  ((u >> 13) & 0x3ff));
}

/* ---- subgroups ---------------------------------------------------------- */

static const char *k_sub =
	"kernel 0 sub\n"
	"  buf b0: f32[64] global v0 read\n"
	"  buf b1: f32[256] global v1 write\n"
	"  buf b2: i32[64] global v2 write\n"
	"  var blk: i64\n  var tid: i64\n  var x: f32\n  var y: f32\n"
	"  var z: f32\n  var w: f32\n  var r: f32\n  var m: i32\n"
	"{\n"
	"  for blk in 0..1 block.x {\n"
	"    for tid in 0..64 thread.x {\n"
	"      x = load b0[tid]\n"
	"      y = shfl.xor.w32 x, 1\n"
	"      z = shfl.down.w32 x, 4\n"
	"      w = shfl.idx.w32 x, 3\n"
	"      r = sgreduce.add.w32 x\n"
	"      m = sgreduce.max.w16 i32(tid)\n"
	"      b1[tid] = y\n"
	"      b1[tid + 64] = z\n"
	"      b1[tid + 128] = w\n"
	"      b1[tid + 192] = r\n"
	"      b2[tid] = m\n"
	"    }\n"
	"  }\n"
	"}\n";

Test(gpuops, shuffles_and_subgroup_reductions)
{
	T t;
	float x[64], y[256];
	int32_t m[64];
	void *bufs[3] = { x, y, m };
	KKernel *k = parse(&t, k_sub);

	cr_assert(k, "%s", t.c.msg);
	for (int i = 0; i < 64; i++)
		x[i] = (float)(i * 3 % 11) - 5.0f;
	for (unsigned seed = 1; seed <= 10; seed++) {
		cr_assert_eq(run(&t, k, bufs, seed), BURN_OK, "%s", t.c.msg);
		for (int i = 0; i < 64; i++) {
			int l = i % 32, g = i - l;
			float sum = 0;
			for (int j = 0; j < 32; j++)
				sum += x[g + j];
			cr_assert_eq(y[i], x[g + (l ^ 1)]);
			cr_assert_eq(y[64 + i], x[l + 4 < 32 ? i + 4 : i]);
			cr_assert_eq(y[128 + i], x[g + 3]);
			cr_assert_float_eq(y[192 + i], sum, 1e-4);
			cr_assert_eq(m[i], i / 16 * 16 + 15);
		}
	}
	arena_free(&t.a);
}

Test(gpuops, shuffle_under_divergence_is_an_error)
{
	static const char *text =
		"kernel 0 dvg\n"
		"  buf b0: f32[64] global v0 rw\n"
		"  var blk: i64\n  var tid: i64\n  var y: f32\n"
		"{\n"
		"  for blk in 0..1 block.x {\n"
		"    for tid in 0..64 thread.x {\n"
		"      y = 0.0f\n"
		"      if lt(tid, 16) {\n"
		"        y = shfl.xor.w32 load b0[tid], 1\n"
		"      }\n"
		"      b0[tid] = y\n"
		"    }\n"
		"  }\n"
		"}\n";
	T t;
	float x[64] = {0};
	void *bufs[1] = { x };
	KKernel *k = parse(&t, text);

	cr_assert(k, "%s", t.c.msg);
	for (unsigned seed = 1; seed <= 5; seed++) {
		cr_assert_neq(run(&t, k, bufs, seed), BURN_OK, "divergence not found");
		cr_assert(strstr(t.c.msg, "divergent"), "%s", t.c.msg);
		cr_assert(strstr(t.c.msg, "BURN_SIMT_SEED="), "%s", t.c.msg);
	}
	arena_free(&t.a);
}

/* ---- atomics ------------------------------------------------------------ */

static const char *k_atom =
	"kernel 0 atom\n"
	"  buf b0: f32[2] global v0 rw\n"
	"  buf b1: i32[2] global v1 rw\n"
	"  buf b2: i32[64] global v2 write\n"
	"  buf b3: i32[1] shared rw\n"
	"  var blk: i64\n  var tid: i64\n  var o: i32\n"
	"{\n"
	"  for blk in 0..2 block.x {\n"
	"    for tid in 0..32 thread.x {\n"
	"      if eq(tid, 0) {\n"
	"        b3[0] = 0:i32\n"
	"      }\n"
	"      barrier\n"
	"      atomic.add b0[0], 1.5f\n"
	"      atomic.max b0[1], f32(tid + blk*32)\n"
	"      o = atomic.cas b1[0], 0:i32, i32(tid + 1)\n"
	"      b2[tid + blk*32] = o\n"
	"      atomic.add b3[0], i32(tid)\n"
	"      barrier\n"
	"      if eq(tid, 0) {\n"
	"        atomic.add b1[1], load b3[0]\n"
	"      }\n"
	"    }\n"
	"  }\n"
	"}\n";

Test(gpuops, atomics_global_and_shared)
{
	T t;
	float f[2];
	int32_t i[2], o[64];
	void *bufs[3] = { f, i, o };
	KKernel *k = parse(&t, k_atom);

	cr_assert(k, "%s", t.c.msg);
	for (unsigned seed = 1; seed <= 10; seed++) {
		int zeros = 0;
		f[0] = 0;
		f[1] = -1;
		i[0] = i[1] = 0;
		cr_assert_eq(run(&t, k, bufs, seed), BURN_OK, "%s", t.c.msg);
		cr_assert_eq(f[0], 96.0f);
		cr_assert_eq(f[1], 63.0f);
		cr_assert_eq(i[1], 2 * (31 * 32 / 2));
		for (int j = 0; j < 64; j++)
			zeros += o[j] == 0;
		cr_assert_eq(zeros, 1, "exactly one compare-exchange wins");
		cr_assert(i[0] >= 1 && i[0] <= 32);
	}
	arena_free(&t.a);
}

Test(gpuops, atomic_mixed_with_plain_access_is_a_race)
{
	static const char *text =
		"kernel 0 mix\n"
		"  buf b0: i32[1] global v0 write\n"
		"  buf b1: i32[1] shared rw\n"
		"  var blk: i64\n  var tid: i64\n"
		"{\n"
		"  for blk in 0..1 block.x {\n"
		"    for tid in 0..32 thread.x {\n"
		"      if eq(tid, 0) {\n"
		"        b1[0] = 0:i32\n"
		"      }\n"
		"      barrier\n"
		"      atomic.add b1[0], 1:i32\n"
		"      b0[0] = load b1[0]\n"
		"    }\n"
		"  }\n"
		"}\n";
	T t;
	int32_t x[1];
	void *bufs[1] = { x };
	KKernel *k = parse(&t, text);

	cr_assert(k, "%s", t.c.msg);
	for (unsigned seed = 1; seed <= 5; seed++) {
		cr_assert_neq(run(&t, k, bufs, seed), BURN_OK, "race not found");
		cr_assert(strstr(t.c.msg, "race"), "%s", t.c.msg);
	}
	arena_free(&t.a);
}

/* ---- vector and async copies -------------------------------------------- */

/* Each thread moves 4 floats: global -> shared with cpasync (or a read of
 * the destination before the wait, or no wait), then shared -> registers
 * -> global with vcopy, reversed per thread. */
static const char *k_copy_fmt =
	"kernel 0 copy\n"
	"  buf b0: f32[128] global v0 read\n"
	"  buf b1: f32[128] global v1 write\n"
	"  buf b2: f32[128] shared rw\n"
	"  buf b3: f32[4] local rw\n"
	"  var blk: i64\n  var tid: i64\n  var x: f32\n"
	"{\n"
	"  for blk in 0..1 block.x {\n"
	"    for tid in 0..32 thread.x {\n"
	"      cpasync.4 b2[tid*4] = b0[tid*4]\n"
	"      %s\n"
	"      %s\n"
	"      barrier\n"
	"      vcopy.4 b3[0] = b2[(31 - tid)*4]\n"
	"      vcopy.4 b1[tid*%d] = b3[0]\n"
	"    }\n"
	"  }\n"
	"}\n";

static KKernel *
k_copy(T *t, const char *a, const char *b, int step)
{
	char text[2048];

	snprintf(text, sizeof text, k_copy_fmt, a, b, step);
	return parse(t, text);
}

Test(gpuops, async_and_vector_copies)
{
	T t;
	float x[128], y[128];
	void *bufs[2] = { x, y };
	KKernel *k = k_copy(&t, "x = 0.0f", "cpwait", 4);

	cr_assert(k, "%s", t.c.msg);
	for (int i = 0; i < 128; i++)
		x[i] = (float)i * 0.25f;
	for (unsigned seed = 1; seed <= 5; seed++) {
		cr_assert_eq(run(&t, k, bufs, seed), BURN_OK, "%s", t.c.msg);
		for (int i = 0; i < 128; i++)
			cr_assert_eq(y[i], x[(31 - i / 4) * 4 + i % 4], "%d", i);
	}
	arena_free(&t.a);
}

Test(gpuops, reading_an_async_destination_before_its_wait_is_an_error)
{
	T t;
	float x[128] = {0}, y[128];
	void *bufs[2] = { x, y };
	KKernel *k = k_copy(&t, "x = load b2[tid*4]", "cpwait", 4);

	cr_assert(k, "%s", t.c.msg);
	cr_assert_neq(run(&t, k, bufs, 1), BURN_OK, "read before the wait not found");
	cr_assert(strstr(t.c.msg, "async copy before its wait"), "%s", t.c.msg);
	arena_free(&t.a);
}

Test(gpuops, an_async_copy_never_waited_for_is_an_error)
{
	T t;
	float x[128] = {0}, y[128];
	void *bufs[2] = { x, y };
	KKernel *k = k_copy(&t, "x = 0.0f", "x = 1.0f", 4);

	cr_assert(k, "%s", t.c.msg);
	cr_assert_neq(run(&t, k, bufs, 1), BURN_OK, "missing wait not found");
	cr_assert(strstr(t.c.msg, "async copy") || strstr(t.c.msg, "never waited"),
	          "%s", t.c.msg);
	arena_free(&t.a);
}

/* cpwait.N closes the thread's group and keeps the N most recent groups
 * in flight: the copy is still pending after cpwait.1 (reading it then is
 * an error, and so is ending the kernel then), landed after cpwait */
Test(gpuops, cpwait_n_keeps_the_most_recent_groups_in_flight)
{
	T t;
	float x[128], y[128];
	void *bufs[2] = { x, y };
	KKernel *k = k_copy(&t, "cpwait.1", "cpwait", 4);

	cr_assert(k, "%s", t.c.msg);
	for (int i = 0; i < 128; i++)
		x[i] = (float)i;
	cr_assert_eq(run(&t, k, bufs, 1), BURN_OK, "%s", t.c.msg);
	for (int i = 0; i < 128; i++)
		cr_assert_eq(y[i], x[(31 - i / 4) * 4 + i % 4], "%d", i);
	arena_free(&t.a);
	k = k_copy(&t, "cpwait.1", "x = load b2[tid*4]", 4);
	cr_assert(k, "%s", t.c.msg);
	cr_assert_neq(run(&t, k, bufs, 1), BURN_OK, "read of a kept group not found");
	cr_assert(strstr(t.c.msg, "async copy before its wait"), "%s", t.c.msg);
	arena_free(&t.a);
	k = k_copy(&t, "cpwait.1", "x = 0.0f", 4);
	cr_assert(k, "%s", t.c.msg);
	cr_assert_neq(run(&t, k, bufs, 1), BURN_OK, "kept group never landed not found");
	cr_assert(strstr(t.c.msg, "never waited") || strstr(t.c.msg, "before its wait"),
	          "%s", t.c.msg);
	arena_free(&t.a);
}

Test(gpuops, a_misaligned_vector_is_an_error)
{
	T t;
	float x[256] = {0}, y[256];
	void *bufs[2] = { x, y };
	/* tid*3 is no multiple of 4 */
	KKernel *k = k_copy(&t, "x = 0.0f", "cpwait", 3);

	cr_assert(k, "%s", t.c.msg);
	cr_assert_neq(run(&t, k, bufs, 1), BURN_OK, "misaligned vcopy not found");
	cr_assert(strstr(t.c.msg, "misaligned"), "%s", t.c.msg);
	arena_free(&t.a);
}

Test(gpuops, the_verifier_refuses_bad_gpu_statements)
{
	static const char *bad[] = {
		/* 32 bytes in one vector */
		"kernel 0 k\n  buf b0: f32[64] global v0 rw\n  buf b1: f32[8] local rw\n"
		"{\n  vcopy.8 b1[0] = b0[0]\n}\n",
		/* cpasync into global memory */
		"kernel 0 k\n  buf b0: f32[64] global v0 rw\n  buf b1: f32[64] global v1 rw\n"
		"{\n  cpasync.4 b1[0] = b0[0]\n}\n",
		/* compare-exchange on floats */
		"kernel 0 k\n  buf b0: f32[4] global v0 rw\n{\n  atomic.cas b0[0], 0.0f, 1.0f\n}\n",
		/* a fragment read by a plain load */
		"kernel 0 k\n  buf b0: f32[128] frag rw\n  var x: f32\n{\n  x = load b0[0]\n}\n",
		/* a fragment of the wrong size for its role */
		"kernel 0 k\n  buf b0: f32[64] frag rw\n{\n  tilefill.m16n8k16 b0 = 0.0f\n}\n",
		/* subgroup width 48 */
		"kernel 0 k\n  var x: f32\n{\n  x = sgreduce.add.w48 x\n}\n",
		NULL
	};
	for (int i = 0; bad[i]; i++) {
		T t;
		cr_assert_null(parse(&t, bad[i]), "case %d accepted", i);
		arena_free(&t.a);
	}
}

/* ---- matrix tiles ------------------------------------------------------- */

/* C = A x B + 1 for one m16n8k16 f16 tile straight from global memory, and
 * the same product with the m16n8k8 f32 shape through shared memory. */
static const char *k_tile =
	"kernel 0 tile\n"
	"  buf b0: f16[256] global v0 read\n"
	"  buf b1: f16[128] global v1 read\n"
	"  buf b2: f32[128] global v2 write\n"
	"  buf b3: f16[256] frag rw\n"
	"  buf b4: f16[128] frag rw\n"
	"  buf b5: f32[128] frag rw\n"
	"  buf b6: f32[256] shared rw\n"
	"  buf b7: f32[128] shared rw\n"
	"  buf b8: f32[128] frag rw\n"
	"  buf b9: f32[64] frag rw\n"
	"  buf b10: f32[128] frag rw\n"
	"  buf b11: f32[128] global v3 write\n"
	"  var blk: i64\n  var tid: i64\n  var e: i64\n  var q: i64\n"
	"{\n"
	"  for blk in 0..1 block.x {\n"
	"    for tid in 0..64 thread.x {\n"
	"      tilefill.m16n8k16 b5 = 1.0f\n"
	"      tileload.m16n8k16.a b3 = b0[0], 16\n"
	"      tileload.m16n8k16.b b4 = b1[0], 8\n"
	"      tilemma.m16n8k16 b5 += b3 * b4\n"
	"      if eq(tid / 32, 0) {\n"
	"        tilestore.m16n8k16 b2[0], 8 = b5\n"
	"      }\n"
	"      for e in 0..4 {\n"
	"        b6[e*64 + tid] = load b0[e*64 + tid]\n"
	"        if lt(e, 2) {\n"
	"          b7[e*64 + tid] = load b1[e*64 + tid]\n"
	"        }\n"
	"      }\n"
	"      barrier\n"
	"      tilefill.m16n8k8 b10 = 1.0f\n"
	"      for q in 0..2 {\n"
	"        tileload.m16n8k8.a b8 = b6[q*8], 16\n"
	"        tileload.m16n8k8.b b9 = b7[q*64], 8\n"
	"        tilemma.m16n8k8 b10 += b8 * b9\n"
	"      }\n"
	"      if eq(tid / 32, 1) {\n"
	"        tilestore.m16n8k8 b11[0], 8 = b10\n"
	"      }\n"
	"    }\n"
	"  }\n"
	"}\n";

Test(gpuops, matrix_tiles_f16_and_f32)
{
	T t;
	uint16_t a[256], b[128];
	float af[256], bf[128], c[128], c2[128];
	void *bufs[12] = { a, b, c, [11] = c2 };
	KKernel *k = parse(&t, k_tile);

	cr_assert(k, "%s", t.c.msg);
	for (int i = 0; i < 256; i++) {
		af[i] = (float)(i * 7 % 9 - 4) * 0.5f;
		a[i] = h(af[i]);
	}
	for (int i = 0; i < 128; i++) {
		bf[i] = (float)(i * 5 % 7 - 3) * 0.25f;
		b[i] = h(bf[i]);
	}
	for (unsigned seed = 1; seed <= 3; seed++) {
		cr_assert_eq(run(&t, k, bufs, seed), BURN_OK, "%s", t.c.msg);
		for (int r = 0; r < 16; r++)
			for (int j = 0; j < 8; j++) {
				float ref = 1;
				for (int q = 0; q < 16; q++)
					ref += af[r * 16 + q] * bf[q * 8 + j];
				cr_assert_eq(c[r * 8 + j], ref, "f16 tile (%d, %d)", r, j);
				cr_assert_eq(c2[r * 8 + j], ref, "f32 tile (%d, %d)", r, j);
			}
	}
	arena_free(&t.a);
}

/* Remove the barrier between the shared stores and the tile loads: the
 * tile op reads what other threads wrote in the same interval. */
Test(gpuops, a_tile_load_racing_its_producer_is_a_race)
{
	T t;
	char *text = strdup(k_tile), *p = strstr(text, "      barrier\n");
	uint16_t a[256] = {0}, b[128] = {0};
	float c[128], c2[128];
	void *bufs[12] = { a, b, c, [11] = c2 };
	KKernel *k;

	memset(p, ' ', strlen("      barrier"));
	k = parse(&t, text);
	cr_assert(k, "%s", t.c.msg);
	cr_assert_neq(run(&t, k, bufs, 1), BURN_OK, "race not found");
	cr_assert(strstr(t.c.msg, "race"), "%s", t.c.msg);
	free(text);
	arena_free(&t.a);
}

Test(gpuops, non_uniform_tile_operands_are_an_error)
{
	T t;
	char *text = strdup(k_tile), *p = strstr(text, "b0[0], 16\n");
	uint16_t a[256] = {0}, b[128] = {0};
	float c[128], c2[128];
	void *bufs[12] = { a, b, c, [11] = c2 };
	KKernel *k;

	memcpy(p, "b0[tid], 16", 11);   /* "b0[0], 16\n  " -> per lane */
	p[11] = '\n';
	k = parse(&t, text);
	cr_assert(k, "%s", t.c.msg);
	cr_assert_neq(run(&t, k, bufs, 1), BURN_OK, "non-uniform operand not found");
	cr_assert(strstr(t.c.msg, "different tile operands"), "%s", t.c.msg);
	free(text);
	arena_free(&t.a);
}

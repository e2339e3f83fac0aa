/*
 * test_llvm.c - the llvm target (codegen/llvm/): every op of the op table
 * on every dtype it takes, every cast and a select, legalised as for the
 * cpu target, run by the interpreter and by the JIT on edge values (MIN,
 * MAX, -1, 0, NaN, infinities, out-of-range floats): the same bits.
 * Guarded loads read memory only where the guard holds; kernels the
 * renderer does not take are a status, not a crash.
 *
 * Built without LLVM (no llvm-config-19), the tests say they did not run.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/kir.h"
#include "kir_fixture.h"
#include "passes/legalize.h"
#include "codegen/target_iface.h"
#include "passes/passes.h"
#ifdef BURN_HAVE_LLVM
#include "codegen/llvm/jit.h"
#endif


static const int all_dt[] = { DT_F32, DT_F64, DT_F16, DT_BF16, DT_I8, DT_U8,
	DT_I16, DT_U16, DT_I32, DT_U32, DT_I64, DT_U64, DT_BOOL };
#define NDT ((int)(sizeof all_dt / sizeof all_dt[0]))

/* Edge values of dt, `which` 0 or 1 (two operands that differ). */
static void
edge_data(int dt, int which, unsigned char *p)
{
	static const double fv[2][NZ] = {
		{ 1.5, -2.5, 0.0, -0.0, 3.0, 0.5, -7.25, 1e30, NAN, INFINITY, 2.5,
		  -0.5, -INFINITY, 3e9, -3e9, 1e300 },
		{ 2.0, 0.0, -0.0, 0.0, -3.0, 0.5, 2.0, -1e30, 1.0, 1.0, NAN, -0.5,
		  1.0, 2.0, 1e19, -1.0 },
	};
	static const int64_t iv[2][NZ] = {
		{ 7, -7, 0, 127, -128, 100, 3, -1, 255, 1, 65535, 40000, INT32_MIN,
		  INT64_MIN, INT32_MAX, INT64_MAX },
		{ 2, 0, 5, 1, -1, 100, 0, 3, 1, -1, 2, 7, -1, -1, 31, 64 },
	};

	for (int i = 0; i < NZ; i++) {
		double f = fv[which][i];
		int64_t v = iv[which][i];
		switch (dt) {
		case DT_F32: ((float *)p)[i] = (float)f; break;
		case DT_F64: ((double *)p)[i] = f; break;
		case DT_F16: case DT_BF16: case DT_I16: case DT_U16:
			((uint16_t *)p)[i] = (uint16_t)(v * 4099 + which); break;
		case DT_I8: case DT_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
		case DT_I32: case DT_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
		case DT_I64: case DT_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
		case DT_BOOL: ((uint8_t *)p)[i] = (uint8_t)((v ^ which) & 1); break;
		}
	}
}



#ifdef BURN_HAVE_LLVM

typedef struct Z {
	KKernel *k;
	int dt_in, dt_out;
	unsigned char want[NZ * 8];
} Z;

/* Every zoo kernel legalised for caps: the JIT gives the interpreter's
 * bits. */
static void
ops_match(const KCaps *caps)
{
	static Z z[1200];
	unsigned char in0[NZ * 8], in1[NZ * 8], got[NZ * 8];
	LlvmJit *j = NULL;
	T t;
	int nz = 0;

	t_init(&t);
	for (int d = 0; d < NDT; d++) {
		int dt = all_dt[d];
		for (int op = 1; op < KO_COUNT_; op++)
			for (int kind = 1; kind <= 2; kind++)
				if ((z[nz].k = kfix_op_kernel(&t, kind, op, dt, &z[nz].dt_out)) != NULL)
					z[nz++].dt_in = dt;
		for (int e = 0; e < NDT; e++)
			if (all_dt[e] != dt) {
				z[nz].k = kfix_op_kernel(&t, 3, all_dt[e], dt, &z[nz].dt_out);
				z[nz++].dt_in = dt;
			}
		z[nz].k = kfix_op_kernel(&t, 4, 0, dt, &z[nz].dt_out);
		z[nz++].dt_in = dt;
	}
	cr_assert_lt(nz, 1200);
	cr_assert_gt(nz, 400, "only %d kernels", nz);
	for (int i = 0; i < nz; i++) {
		void *bufs[3] = { in0, in1, z[i].want };
		cr_assert_eq(kir_legalize(&t.c, &t.p, z[i].k, caps), BURN_OK,
		             "%s", t.c.msg);
		cr_assert_eq(kir_verify(&t.c, z[i].k), BURN_OK, "%s", t.c.msg);
		edge_data(z[i].dt_in, 0, in0);
		edge_data(z[i].dt_in, 1, in1);
		cr_assert_eq(kir_interp(&t.c, z[i].k, bufs), BURN_OK, "%s: %s",
		             z[i].k->name, t.c.msg);
	}
	cr_assert_eq(llvm_jit_compile(&t.c, &t.p, &j), BURN_OK, "%s", t.c.msg);
	for (int i = 0; i < nz; i++) {
		void *bufs[3] = { in0, in1, got };
		int es = dtype_size(z[i].dt_out);
		edge_data(z[i].dt_in, 0, in0);
		edge_data(z[i].dt_in, 1, in1);
		memset(got, 0xa5, sizeof got);
		cr_assert_eq(llvm_jit_call(&t.c, j, i, bufs, NULL), BURN_OK);
		for (int n = 0; n < NZ; n++)
			cr_expect(kfix_same(z[i].dt_out, got + n * es, z[i].want + n * es),
			          "%s (%s -> %s) element %d differs", z[i].k->name,
			          dtype_name(z[i].dt_in), dtype_name(z[i].dt_out), n);
	}
	llvm_jit_free(j);
	arena_free(&t.a);
}

/* The transcendentals as libm calls (f32 exp, tanh, ... stay calls; the
 * C target's legalisation) */
Test(llvm, ops_match_interp)
{
	ops_match(&kcaps_libm);
}

/* ... and as the llvm target's description legalises them: f32 exp, log,
 * tanh, ... as kernel-IR polynomials, which the JIT computes to the
 * interpreter's bits */
Test(llvm, ops_match_interp_polynomials)
{
	cr_assert_eq(target_llvm.ops.libm, 0, "the llvm target has no libm");
	cr_assert_eq(backend_find("llvm")->target, &target_llvm);
	ops_match(&target_llvm.ops);
}

/* out[i] = guard(i == 0) ? a[i << 40] : i: the load is reached only at
 * i == 0 (anywhere else the address is far outside any mapping). */
Test(llvm, guarded_load_reads_only_under_guard)
{
	float a[1] = { 42 }, out[8];
	void *bufs[2] = { a, out };
	LlvmJit *j = NULL;
	KB *kb;
	T t;
	int ba, bo, i;
	KRef iv, idx;

	t_init(&t);
	kb = &t.kb;
	kb_begin(kb, &t.p, "guard", "");
	ba = kb_buf_value(kb, 0, DT_F32, 1, KA_READ);
	bo = kb_buf_value(kb, 1, DT_F32, 8, KA_WRITE);
	i = kb_for(kb, "i", kb_idx(kb, 0), kb_idx(kb, 8), 0);
	iv = kb_get(kb, i);
	idx = kb_bin(kb, KO_SHLM, iv, kb_idx(kb, 40));
	kb_store(kb, bo, iv, kb_load_guard(kb, ba, idx,
	                                   kb_bin(kb, KO_EQ, iv, kb_idx(kb, 0)),
	                                   kb_cast(kb, DT_F32, iv)));
	kb_end(kb);
	kb_finish(kb);
	cr_assert_eq(llvm_jit_compile(&t.c, &t.p, &j), BURN_OK, "%s", t.c.msg);
	cr_assert_eq(llvm_jit_call(&t.c, j, 0, bufs, NULL), BURN_OK);
	cr_expect_eq(out[0], 42);
	for (int n = 1; n < 8; n++)
		cr_expect_eq(out[n], n);
	llvm_jit_free(j);
	arena_free(&t.a);
}

/* A loop the schedule runs on threads, with a private variable and a
 * private local buffer and a shared variable read inside, on 1, 3 and 8
 * threads: the interpreter's result.  (Seeded bug: chunks that drop the
 * remainder of 5000 / 3 iterations fail it.) */
Test(llvm, threaded_loop_matches_interp)
{
	enum { N = 5000 };
	static float a[N], want[N], got[N];
	static const int pvar[3] = { 2, 3, 4 }, pbuf[1] = { 2 };
	KThreads th = { 0, 3, 1, pvar, pbuf };
	KSched sc = { "cpu", 1, &th, NULL, 64 };
	LlvmJit *j = NULL;
	KKernel *k;
	KB *kb;
	T t;
	int ba, bo, tmp, i, jv, acc, sh;
	static const char *const nt[] = { "1", "3", "8" };

	for (int x = 0; x < N; x++)
		a[x] = (float)(x % 97) * 0.25f;
	t_init(&t);
	kb = &t.kb;
	kb_begin(kb, &t.p, "par", "");
	ba = kb_buf_value(kb, 0, DT_F32, N, KA_READ);
	bo = kb_buf_value(kb, 1, DT_F32, N, KA_WRITE);
	tmp = kb_buf(kb, DT_F32, 4, -1, KS_LOCAL, KA_RW);
	sh = kb_var(kb, DT_F32, "sh");
	kb_set(kb, sh, kb_const_f(kb, DT_F32, 3));
	i = kb_for(kb, "i", kb_idx(kb, 0), kb_idx(kb, N), KF_PARALLEL);
	acc = kb_var(kb, DT_F32, "acc");
	cr_assert_eq(acc, pvar[0]);
	cr_assert_eq(tmp, pbuf[0]);
	kb_set(kb, acc, kb_const_f(kb, DT_F32, 0));
	jv = kb_for(kb, "j", kb_idx(kb, 0), kb_idx(kb, 4), 0);
	kb_store(kb, tmp, kb_get(kb, jv),
	         kb_bin(kb, KO_MUL, kb_load(kb, ba, kb_get(kb, i)),
	                kb_cast(kb, DT_F32, kb_get(kb, jv))));
	kb_end(kb);
	jv = kb_for(kb, "j2", kb_idx(kb, 0), kb_idx(kb, 4), 0);
	kb_set(kb, acc, kb_bin(kb, KO_ADD, kb_get(kb, acc), kb_load(kb, tmp, kb_get(kb, jv))));
	kb_end(kb);
	kb_store(kb, bo, kb_get(kb, i), kb_bin(kb, KO_ADD, kb_get(kb, acc), kb_get(kb, sh)));
	kb_end(kb);
	k = kb_finish(kb);
	for (KRef s = 1; s < k->nnode; s++)
		if (k->node[s].kind == KS_FOR && k->node[s].var == i)
			th.loop = s;
	cr_assert_gt(th.loop, 0);
	k->sched = &sc;
	{
		void *bufs[3] = { a, want, NULL };
		cr_assert_eq(kir_interp(&t.c, k, bufs), BURN_OK, "%s", t.c.msg);
	}
	cr_assert_eq(llvm_jit_compile(&t.c, &t.p, &j), BURN_OK, "%s", t.c.msg);
	for (int r = 0; r < 3; r++) {
		void *bufs[3] = { a, got, NULL };
		setenv("BURN_THREADS", nt[r], 1);
		memset(got, 0, sizeof got);
		cr_assert_eq(llvm_jit_call(&t.c, j, 0, bufs, NULL), BURN_OK);
		cr_expect_eq(memcmp(got, want, sizeof got), 0, "%s threads differ", nt[r]);
	}
	unsetenv("BURN_THREADS");
	llvm_jit_free(j);
	arena_free(&t.a);
}


/*
 * mlp's first layer as burncc compiles it for the llvm target (its
 * --emit=kernels text): relu(x[4,784] w[784,256] + b), the cpu schedule's
 * 4x64 register tile b4 in a threaded loop.  After the JIT's O2, no basic
 * block that does the tile's FMAs stores anything: the tile lives in
 * registers through the k loop.  (With the outlined body reading its
 * buffers' pointers from the context, LICM hoisted the tile's loads out
 * of the k loop but left its stores in: 16 vector stores per k, the
 * kernel 2 to 3 times gcc's time.)
 */
Test(llvm, gemm_tile_stays_in_registers)
{
	static const char text[] =
		"kernel 0 k_gemm: Gemm(/net/net.0/Gemm) + Relu(/net/net.1/Relu)\n"
		"  schedule: threads(0) fma tile(8,32)\n"
		"  buf b0: f32[3136] global v6 read\n"
		"  buf b1: f32[200704] global v20 read\n"
		"  buf b2: f32[256] global v1 read\n"
		"  buf b3: f32[1024] global v8 rw\n"
		"  buf b4: f32[256] local rw\n"
		"  var j0: i64\n"
		"  var t: i64\n"
		"  var k: i64\n"
		"  var r.3: i64\n"
		"  var c.4: i64\n"
		"  var r.5: i64\n"
		"  var c.6: i64\n"
		"  var r.7: i64\n"
		"  var e: i64\n"
		"{\n"
		"  for j0 in 0..4 parallel {\n"
		"    for t in 0..256 parallel {\n"
		"      b4[t] = 0.0f\n"
		"    }\n"
		"    for k in 0..784 {\n"
		"      for r.3 in 0..4 parallel {\n"
		"        for c.4 in 0..64 parallel {\n"
		"          let t0 = c.4 + r.3*64\n"
		"          b4[t0] = add(load b4[t0], mul(load b0[r.3*784 + k], load b1[k*256 + (j0*64 + c.4)]))\n"
		"        }\n"
		"      }\n"
		"    }\n"
		"    for r.5 in 0..4 parallel {\n"
		"      for c.6 in 0..64 parallel {\n"
		"        let t1 = j0*64\n"
		"        b3[t1 + c.6 + r.5*256] = add(load b4[c.6 + r.5*64], load b2[t1 + c.6])\n"
		"      }\n"
		"    }\n"
		"  }\n"
		"  for r.7 in 0..4 parallel {\n"
		"    for e in 0..256 parallel {\n"
		"      let t2 = r.7*256 + e\n"
		"      let t3 = load b3[t2]\n"
		"      b3[t2] = select(lt(t3, 0.0f), 0.0f, t3)\n"
		"    }\n"
		"  }\n"
		"}\n";
	int fma_blocks = 0, bad = 0, fma = 0, store = 0;
	char *ir = NULL, *line, *save = NULL;
	T t;

	t_init(&t);
	cr_assert_eq(kprog_parse(&t.c, &t.p, text, sizeof text - 1), BURN_OK, "%s", t.c.msg);
	cr_assert_eq(t.p.nkernel, 1);
	cr_assert_not_null(backend_find("llvm"));
	cr_assert_eq(pass_schedule(&t.c, &t.p, backend_find("llvm")->target), BURN_OK,
	             "%s", t.c.msg);
	cr_assert(t.p.kernel[0]->sched && t.p.kernel[0]->sched->threads,
	          "the kernel is threaded");
	cr_assert_eq(llvm_jit_optimised_ir(&t.c, &t.p, &ir), BURN_OK, "%s", t.c.msg);
	/* blocks: from a label or a define to the next */
	for (line = strtok_r(ir, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "define", 6) || (line[0] != ' ' && line[0] != ';' &&
		                                     line[0] != '!' && strchr(line, ':'))) {
			fma_blocks += fma;
			bad += fma && store;
			fma = store = 0;
		}
		fma |= strstr(line, "call") && strstr(line, "fmuladd");
		store |= !strncmp(line, "  store ", 8);
	}
	fma_blocks += fma;
	bad += fma && store;
	cr_assert_gt(fma_blocks, 0, "no FMA in the GEMM");
	cr_assert_eq(bad, 0, "%d of %d blocks with the tile's FMAs also store",
	             bad, fma_blocks);
	free(ir);
	arena_free(&t.a);
}

/*
 * squeezenet's last Conv as burncc compiles it for the llvm target: a
 * 1000x512 by 512x169 GEMM whose 169 columns are 5 tiles of 8x32 and an
 * edge tile of 8x9.  After the JIT's O2 there is no gather or scatter:
 * the vectoriser had vectorised the edge tile across its rows, a gather
 * and a scatter of the tile per row and k (the kernel 1.7 times gcc's
 * time), until the target machine was told to prefer none (jit.c).
 */
Test(llvm, gemm_edge_tile_no_gather)
{
	static const char text[] =
		"kernel 0 k_conv_36: Conv(/classifier/classifier.1/Conv) + Relu(/classifier/classifier.2/Relu)\n"
		"  schedule: threads(0) fma tile(8,32)\n"
		"  buf b0: f32[86528] global v113 read\n"
		"  buf b1: f32[512000] global v32 read\n"
		"  buf b2: f32[1000] global v33 read\n"
		"  buf b3: f32[169000] global v115 rw\n"
		"  buf b4: f32[256] local rw\n"
		"  var i0: i64\n"
		"  var j0: i64\n"
		"  var t.2: i64\n"
		"  var k.3: i64\n"
		"  var r.4: i64\n"
		"  var c.5: i64\n"
		"  var r.6: i64\n"
		"  var c.7: i64\n"
		"  var t.8: i64\n"
		"  var k.9: i64\n"
		"  var r.10: i64\n"
		"  var c.11: i64\n"
		"  var r.12: i64\n"
		"  var c.13: i64\n"
		"  var r.14: i64\n"
		"  var e: i64\n"
		"{\n"
		"  for i0 in 0..125 parallel {\n"
		"    for j0 in 0..5 parallel {\n"
		"      for t.2 in 0..256 parallel {\n"
		"        b4[t.2] = 0.0f\n"
		"      }\n"
		"      for k.3 in 0..512 {\n"
		"        for r.4 in 0..8 parallel {\n"
		"          for c.5 in 0..32 parallel {\n"
		"            let t0 = c.5 + r.4*32\n"
		"            b4[t0] = add(load b4[t0], mul(load b1[(i0*8 + r.4)*512 + k.3], load b0[k.3*169 + (j0*32 + c.5)]))\n"
		"          }\n"
		"        }\n"
		"      }\n"
		"      for r.6 in 0..8 parallel {\n"
		"        for c.7 in 0..32 parallel {\n"
		"          let t1 = i0*8\n"
		"          b3[j0*32 + c.7 + (t1 + r.6)*169] = add(load b4[c.7 + r.6*32], load b2[t1 + r.6])\n"
		"        }\n"
		"      }\n"
		"    }\n"
		"    for t.8 in 0..72 parallel {\n"
		"      b4[t.8] = 0.0f\n"
		"    }\n"
		"    for k.9 in 0..512 {\n"
		"      for r.10 in 0..8 parallel {\n"
		"        for c.11 in 0..9 parallel {\n"
		"          let t2 = c.11 + r.10*9\n"
		"          b4[t2] = add(load b4[t2], mul(load b1[(i0*8 + r.10)*512 + k.9], load b0[k.9*169 + (160 + c.11)]))\n"
		"        }\n"
		"      }\n"
		"    }\n"
		"    for r.12 in 0..8 parallel {\n"
		"      for c.13 in 0..9 parallel {\n"
		"        let t3 = i0*8\n"
		"        b3[160 + c.13 + (t3 + r.12)*169] = add(load b4[c.13 + r.12*9], load b2[t3 + r.12])\n"
		"      }\n"
		"    }\n"
		"    for r.14 in 0..8 parallel {\n"
		"      for e in 0..169 parallel {\n"
		"        let t4 = (i0*8 + r.14)*169 + e\n"
		"        let t5 = load b3[t4]\n"
		"        b3[t4] = select(lt(t5, 0.0f), 0.0f, t5)\n"
		"      }\n"
		"    }\n"
		"  }\n"
		"}\n";
	char *ir = NULL;
	T t;

	t_init(&t);
	cr_assert_eq(kprog_parse(&t.c, &t.p, text, sizeof text - 1), BURN_OK, "%s", t.c.msg);
	cr_assert_eq(pass_schedule(&t.c, &t.p, backend_find("llvm")->target), BURN_OK,
	             "%s", t.c.msg);
	cr_assert_eq(llvm_jit_optimised_ir(&t.c, &t.p, &ir), BURN_OK, "%s", t.c.msg);
	cr_assert(strstr(ir, "fmuladd"), "no FMA in the GEMM");
	cr_assert_null(strstr(ir, "masked.gather"), "a gather");
	cr_assert_null(strstr(ir, "masked.scatter"), "a scatter");
	free(ir);
	arena_free(&t.a);
}

/* Render k with the llvm backend; returns the status. */
static int
render(T *t, const KKernel *k)
{
	const Backend *be = backend_find("llvm");
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	int rc;

	cr_assert_not_null(be);
	cr_assert_not_null(f);
	rc = be->render_kernel(&t->c, k, f);
	fclose(f);
	if (!rc)
		cr_expect(strstr(buf, "define"), "no function in:\n%s", buf);
	free(buf);
	return rc;
}

Test(llvm, bad_kernels_are_statuses)
{
	KB *kb;
	T t;
	int a, o, i;

	/* an integer division that was not legalised */
	t_init(&t);
	kb = &t.kb;
	kb_begin(kb, &t.p, "div", "");
	a = kb_buf_value(kb, 0, DT_I32, 4, KA_READ);
	o = kb_buf_value(kb, 1, DT_I32, 4, KA_WRITE);
	i = kb_for(kb, "i", kb_idx(kb, 0), kb_idx(kb, 4), 0);
	kb_store(kb, o, kb_get(kb, i), kb_bin(kb, KO_DIV, kb_load(kb, a, kb_get(kb, i)),
	                                      kb_load(kb, a, kb_idx(kb, 0))));
	kb_end(kb);
	cr_expect_eq(render(&t, kb_finish(kb)), BURN_ERR_INTERNAL);
	cr_expect(strstr(t.c.msg, "not legalised"), "%s", t.c.msg);
	arena_free(&t.a);

	/* a GPU hardware index */
	t_init(&t);
	kb = &t.kb;
	kb_begin(kb, &t.p, "tid", "");
	o = kb_buf_value(kb, 0, DT_I64, 4, KA_WRITE);
	kb_store(kb, o, kb_idx(kb, 0), kb_special(kb, KX_THREAD_X));
	cr_expect_eq(render(&t, kb_finish(kb)), BURN_ERR_UNSUPPORTED);
	arena_free(&t.a);

	/* shared memory */
	t_init(&t);
	kb = &t.kb;
	kb_begin(kb, &t.p, "shared", "");
	a = kb_buf(kb, DT_F32, 4, -1, KS_SHARED, KA_RW);
	kb_store(kb, a, kb_idx(kb, 0), kb_const_f(kb, DT_F32, 1));
	cr_expect_eq(render(&t, kb_finish(kb)), BURN_ERR_UNSUPPORTED);
	arena_free(&t.a);

	/* and a good one renders */
	t_init(&t);
	kb = &t.kb;
	kb_begin(kb, &t.p, "ok", "");
	o = kb_buf_value(kb, 0, DT_F32, 4, KA_WRITE);
	i = kb_for(kb, "i", kb_idx(kb, 0), kb_idx(kb, 4), 0);
	kb_store(kb, o, kb_get(kb, i), kb_un(kb, KO_EXP, kb_cast(kb, DT_F32, kb_get(kb, i))));
	kb_end(kb);
	cr_expect_eq(render(&t, kb_finish(kb)), BURN_OK, "%s", t.c.msg);
	arena_free(&t.a);
}

#else

Test(llvm, not_built)
{
	cr_assert_null(backend_find("llvm"));
	fprintf(stderr, "test_llvm: burncc built without LLVM: did not run\n");
	(void)edge_data;
	(void)all_dt;
}

#endif

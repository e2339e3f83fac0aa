/*
 * test_schedule.c - the gpu schedules (passes/schedule_gpu.c) on fused
 * kernels, run by the interpreter's GPU semantics: the schedule really
 * uses several blocks, several threads, shared memory and barriers (a
 * one-thread "schedule" cannot pass), the results match ONNX Runtime's,
 * and a schedule with a barrier removed is caught as a race.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tools/compile.h"
#include "frontend/onnx.h"
#include "passes/legalize.h"

static const GpuSchedOpts gpu = { 256, 64, 32, 0, 32 };
static const GpuSchedOpts gpu_nosg = { 256, 64, 32, 0, 0 };   /* no subgroups */
/* rows on chip: up to 36 KiB of shared memory per block for the copies;
 * 32 threads, so each thread copies and reads back 2 of a 64-wide row */
static const GpuSchedOpts gpu_onchip = { 32, 64, 32, 0, 32, 0, 36 * 1024 };
/* short rows a subgroup each (the cuda and gpu targets' row_lanes) */
static const GpuSchedOpts gpu_sgrow = { 256, 64, 32, 0, 32, 0, 0, 32, 32 };

typedef struct Shape {
	int64_t blocks, threads;   /* largest block and thread loop extents */
	int barriers, shared, sgreduce;
	int input_loads;           /* loads of the model's input (global) */
	int vcopies;               /* vector copies */
	int row_stores;            /* stores into shared rows (over 64 wide) */
	int local;                 /* local buffers */
	int unrolled;              /* KF_UNROLL loops */
} Shape;

static void
walk(const KKernel *k, KRef s, Shape *sh)
{
	for (; s; s = k->node[s].next) {
		const KNode *n = &k->node[s];
		int64_t lo, hi;
		if (n->kind == KS_BARRIER)
			sh->barriers++;
		if (n->kind == KS_SGRED)
			sh->sgreduce++;
		if (n->kind == KS_FOR && kb_is_const_i(k, n->a, &lo) &&
		    kb_is_const_i(k, n->b, &hi)) {
			if ((n->flags & KF_BLOCK_X) && hi - lo > sh->blocks)
				sh->blocks = hi - lo;
			if ((n->flags & KF_THREAD_X) && hi - lo > sh->threads)
				sh->threads = hi - lo;
		}
		sh->unrolled += n->kind == KS_FOR && (n->flags & KF_UNROLL);
		if (n->kind == KS_FOR || n->kind == KS_IF) {
			walk(k, n->body, sh);
			walk(k, n->orelse, sh);
		}
	}
}

/* Mark the nodes of the statements from s and of their expressions. */
static void
mark_expr(const KKernel *k, KRef e, unsigned char *live)
{
	if (e <= 0 || live[e])
		return;
	live[e] = 1;
	mark_expr(k, k->node[e].a, live);
	mark_expr(k, k->node[e].b, live);
	mark_expr(k, k->node[e].c, live);
}

static void
mark_live(const KKernel *k, KRef s, unsigned char *live)
{
	for (; s; s = k->node[s].next) {
		const KNode *n = &k->node[s];
		live[s] = 1;
		mark_expr(k, n->a, live);
		mark_expr(k, n->b, live);
		if (n->kind != KS_FOR && n->kind != KS_IF)
			mark_expr(k, n->c, live);
		if (n->kind == KS_FOR || n->kind == KS_IF) {
			mark_live(k, n->body, live);
			mark_live(k, n->orelse, live);
		}
	}
}

/* Compile a fusion case, schedule it with o (NULL: compile it for the gpu
 * target, which schedules it), run it; returns the interpreter's
 * status, the fused kernel's shape in *sh, and checks results when OK. */
static int
run_case_on(const char *name, const GpuSchedOpts *o, const Target *t, Shape *sh, Ctx *c)
{
	char path[1024];
	Compiled *m;
	KRun r;
	Arena a;
	Tensor in, want;
	int rc;
	const float *got;

	arena_init(&a);
	snprintf(path, sizeof path, "%s/tests/fusion/%s/model.onnx", BURN_SOURCE_DIR, name);
	if (o) {
		cr_assert_eq(burn_compile_file(c, path, NULL, &m), BURN_OK, "%s", c->msg);
		cr_assert_eq(m->prog.nkernel, 1, "one fused kernel");
		cr_assert_eq(pass_schedule_gpu(c, &m->prog, o), BURN_OK, "%s", c->msg);
		cr_assert_eq(pass_legalize(c, &m->prog, NULL), BURN_OK, "%s", c->msg);
	} else {   /* the gpu target's own pipeline and schedule */
		CompileOpts co = { 0 };
		co.target = t;
		cr_assert_eq(burn_compile_file(c, path, &co, &m), BURN_OK, "%s", c->msg);
		cr_assert_eq(m->prog.nkernel, 1, "one fused kernel");
	}
	memset(sh, 0, sizeof *sh);
	walk(m->prog.kernel[0], m->prog.kernel[0]->body, sh);
	for (int b = 0; b < m->prog.kernel[0]->nbuf; b++)
		sh->shared += m->prog.kernel[0]->buf[b].space == KS_SHARED,
		sh->local += m->prog.kernel[0]->buf[b].space == KS_LOCAL;
	{
		const KKernel *k = m->prog.kernel[0];
		unsigned char *live = calloc((size_t)k->nnode, 1);
		cr_assert(live);
		mark_live(k, k->body, live);
		for (KRef i = 1; i < k->nnode; i++) {
			int b = k->node[i].kind == KE_LOAD ? k->node[i].buf :
			        k->node[i].kind == KS_VCOPY ? k->node[i].buf2 : -1;
			if (!live[i])
				continue;
			sh->input_loads += b >= 0 && k->buf[b].space == KS_GLOBAL &&
			                   k->buf[b].value == m->g->in[0];
			sh->vcopies += k->node[i].kind == KS_VCOPY;
			sh->row_stores += k->node[i].kind == KS_STORE &&
			                  k->buf[k->node[i].buf].space == KS_SHARED &&
			                  k->buf[k->node[i].buf].count > 64;
		}
		free(live);
	}
	cr_assert(m->prog.kernel[0]->grid, "no grid recorded");
	snprintf(path, sizeof path, "%s/tests/fusion/%s/test_data_set_0/input_0.pb",
	         BURN_SOURCE_DIR, name);
	cr_assert_eq(onnx_load_tensor_file(c, path, &a, &in, NULL), BURN_OK, "%s", c->msg);
	snprintf(path, sizeof path, "%s/tests/fusion/%s/test_data_set_0/output_0.pb",
	         BURN_SOURCE_DIR, name);
	cr_assert_eq(onnx_load_tensor_file(c, path, &a, &want, NULL), BURN_OK, "%s", c->msg);
	cr_assert_eq(kir_run_init(c, &r, m->g), BURN_OK);
	r.mem[m->g->in[0]] = in.data;
	rc = kir_run_program(c, &r, m->g, &m->prog);
	if (rc == BURN_OK) {
		got = kir_run_value(&r, &m->prog, m->g->out[0]);
		for (int64_t i = 0; i < want.nbytes / 4; i++) {
			float e = ((const float *)want.data)[i];
			cr_assert(fabsf(got[i] - e) <= 1e-5f + 1e-3f * fabsf(e),
			          "%s[%lld]: %g, expected %g", name, (long long)i, got[i], e);
		}
	}
	kir_run_free(&r);
	burn_compiled_destroy(m);
	arena_free(&a);
	return rc;
}

static int
run_case(const char *name, const GpuSchedOpts *o, Shape *sh, Ctx *c)
{
	return run_case_on(name, o, &target_gpu, sh, c);
}

Test(schedule, layernorm_is_one_kernel_of_block_reductions)
{
	Ctx c;
	Shape sh;

	burn_ctx_init(&c, "test");
	/* rows of at most a subgroup: one sgreduce each, no barrier needed */
	cr_assert_eq(run_case("layernorm_composed", &gpu, &sh, &c), BURN_OK, "%s", c.msg);
	cr_assert_gt(sh.blocks, 1, "blocks %lld", (long long)sh.blocks);
	cr_assert_gt(sh.threads, 1, "threads %lld", (long long)sh.threads);
	cr_assert_geq(sh.sgreduce, 2, "subgroup reductions %d", sh.sgreduce);
	/* the fallback for targets without subgroups: a shared-memory tree */
	cr_assert_eq(run_case("layernorm_composed", &gpu_nosg, &sh, &c), BURN_OK, "%s", c.msg);
	cr_assert_eq(sh.sgreduce, 0);
	cr_assert_gt(sh.blocks, 1, "blocks %lld", (long long)sh.blocks);
	cr_assert_gt(sh.threads, 1, "threads %lld", (long long)sh.threads);
	cr_assert_gt(sh.barriers, 2, "barriers %d", sh.barriers);
	cr_assert_geq(sh.shared, 1, "shared buffers %d", sh.shared);
}

Test(schedule, rmsnorm_and_pointwise)
{
	Ctx c;
	Shape sh;

	burn_ctx_init(&c, "test");
	cr_assert_eq(run_case("rmsnorm_composed", &gpu, &sh, &c), BURN_OK, "%s", c.msg);
	cr_assert_gt(sh.blocks, 1);
	cr_assert_gt(sh.threads, 32, "a row of 64 gets 64 threads");
	/* two subgroups: subgroup reductions, then shared memory */
	cr_assert_gt(sh.barriers, 0);
	cr_assert_geq(sh.shared, 1, "shared buffers %d", sh.shared);
	cr_assert_geq(sh.sgreduce, 1, "subgroup reductions %d", sh.sgreduce);
	/* 1024 elements, 4 lanes a thread: 256 threads, 16-byte copies in and
	 * out */
	cr_assert_eq(run_case("gelu_composed", &gpu, &sh, &c), BURN_OK, "%s", c.msg);
	cr_assert_eq(sh.threads, 256, "threads %lld", (long long)sh.threads);
	cr_assert_eq(sh.vcopies, 2, "vector copies %d", sh.vcopies);
}

/* Rows of at most 16 x 32 elements with row_lanes 32: a subgroup a row,
 * eight rows a block of 256, each reduction a lane exchange: no shared
 * memory, no barrier, the same results (RMSNorm's 4 rows of 64; the
 * interpreter checks the subgroup ops run converged) */
Test(schedule, short_rows_a_subgroup_each)
{
	Ctx c;
	Shape sh;

	burn_ctx_init(&c, "test");
	cr_assert_eq(run_case("rmsnorm_composed", &gpu_sgrow, &sh, &c), BURN_OK, "%s", c.msg);
	cr_assert_eq(sh.threads, 256, "threads %lld", (long long)sh.threads);
	cr_assert_eq(sh.barriers, 0, "barriers %d", sh.barriers);
	cr_assert_eq(sh.shared, 0, "shared buffers %d", sh.shared);
	cr_assert_geq(sh.sgreduce, 1, "subgroup reductions %d", sh.sgreduce);
	cr_assert_eq(run_case("layernorm_composed", &gpu_sgrow, &sh, &c), BURN_OK, "%s", c.msg);
	cr_assert_eq(sh.barriers, 0, "barriers %d", sh.barriers);
	cr_assert_geq(sh.sgreduce, 2, "subgroup reductions %d", sh.sgreduce);
	/* (rows of 1024, more than 16 a lane, keep a block a row: the gpu
	 * target's softmax_wide in rows_in_registers below) */
}

/* A row two loops read (RMSNorm: the sum of squares, then the scaling)
 * is copied to shared memory once and read from there: one load of the
 * input in the kernel instead of two, the same results, no race (each
 * thread reads back only what it copied); not without the budget. */
Test(schedule, rows_on_chip)
{
	Ctx c;
	Shape sh;
	Target shared = target_gpu;   /* the gpu target without registers for rows */

	shared.tune.row_regs = 0;

	burn_ctx_init(&c, "test");
	cr_assert_eq(run_case("rmsnorm_composed", &gpu, &sh, &c), BURN_OK, "%s", c.msg);
	cr_assert_eq(sh.shared, 1, "the partials only: %d", sh.shared);
	cr_assert_geq(sh.input_loads, 2, "each loop loads the row: %d", sh.input_loads);
	cr_assert_eq(run_case("rmsnorm_composed", &gpu_onchip, &sh, &c), BURN_OK, "%s", c.msg);
	cr_assert_eq(sh.shared, 1, "the row's copy (one subgroup: no partials): %d",
	             sh.shared);
	/* once: each thread's two elements by two loads in a row (unrolled) */
	cr_assert_eq(sh.input_loads, 2, "the row loaded once: %d", sh.input_loads);
	cr_assert_eq(sh.vcopies, 0, "64-wide rows: no 16-byte pieces for 32 threads");
	cr_assert_eq(run_case("layernorm_composed", &gpu_onchip, &sh, &c), BURN_OK, "%s", c.msg);
	/* the gpu target's rows of 1024 over 256 threads in shared memory:
	 * one 16-byte copy per thread and a barrier (the loops read other
	 * threads' pieces) */
	cr_assert_eq(run_case_on("softmax_wide", NULL, &shared, &sh, &c), BURN_OK, "%s", c.msg);
	cr_assert_eq(sh.input_loads, 1, "one vector copy of the input: %d", sh.input_loads);
	cr_assert_eq(sh.vcopies, 1, "vector copies %d", sh.vcopies);
	/* the sum's exp(x - max) left in the copy for the write loop */
	cr_assert_eq(sh.row_stores, 1, "exponentials kept: %d stores", sh.row_stores);
	cr_assert_eq(run_case_on("layernorm_wide", NULL, &shared, &sh, &c), BURN_OK, "%s", c.msg);
	cr_assert_eq(sh.vcopies, 1, "vector copies %d", sh.vcopies);
}

/* With registers for rows (the gpu and cuda targets: inreg), each thread
 * keeps its 4 elements of a 1024-wide row in a private array: 4 loads of
 * the input, no copy in shared memory (the reductions' partials only),
 * and every loop over the row unrolled so the array's indices are
 * constants; the exponentials still computed once. */
Test(schedule, rows_in_registers)
{
	Ctx c;
	Shape sh;

	burn_ctx_init(&c, "test");
	cr_assert_eq(run_case("softmax_wide", NULL, &sh, &c), BURN_OK, "%s", c.msg);
	cr_assert_eq(sh.input_loads, 4, "the row's 4 elements loaded once: %d", sh.input_loads);
	cr_assert_eq(sh.vcopies, 0, "vector copies %d", sh.vcopies);
	cr_assert_eq(sh.shared, 1, "the partials only: %d", sh.shared);
	cr_assert_eq(sh.local, 1, "the row's registers: %d", sh.local);
	cr_assert_eq(sh.unrolled, 3, "max, sum and write loops unrolled: %d", sh.unrolled);
	cr_assert_eq(run_case("layernorm_wide", NULL, &sh, &c), BURN_OK, "%s", c.msg);
	cr_assert_eq(sh.input_loads, 4, "the row's 4 elements loaded once: %d", sh.input_loads);
	cr_assert_eq(sh.local, 1, "the row's registers: %d", sh.local);
	cr_assert_eq(sh.shared, 1, "the partials only: %d", sh.shared);
}

/* Issue 7's seeded bug: a block reduction without its barriers. */
Test(schedule, missing_barrier_is_caught)
{
	Ctx c;
	Shape sh;
	GpuSchedOpts bad = gpu;

	bad.drop_barrier = 1;
	burn_ctx_init(&c, "test");
	cr_assert_neq(run_case("rmsnorm_composed", &bad, &sh, &c), BURN_OK,
	              "the race was not found");
	cr_assert(strstr(c.msg, "shared memory race"), "%s", c.msg);
	bad = gpu_nosg;
	bad.drop_barrier = 1;
	cr_assert_neq(run_case("layernorm_composed", &bad, &sh, &c), BURN_OK,
	              "the race was not found (tree)");
	cr_assert(strstr(c.msg, "shared memory race"), "%s", c.msg);
}

/* A nest writing a thread-private (local) buffer that a later top-level
 * statement reads must stay serial: mapped, each thread would fill its
 * own copy and the reader would see none of them.  (The mapping used to
 * check only the statements already rebuilt, those before the nest.) */
Test(schedule, local_buffer_read_later_stays_with_its_reader)
{
	static const char text[] =
		"kernel 0 k_fill: Relu(r)\n"
		"  buf b0: f32[6] global v0 write\n"
		"  buf b1: f32[6] local rw\n"
		"  var t: i64\n"
		"  var c: i64\n"
		"{\n"
		"  for t in 0..6 parallel {\n"
		"    b1[t] = 1.5f\n"
		"  }\n"
		"  for c in 0..6 parallel {\n"
		"    b0[c] = load b1[c]\n"
		"  }\n"
		"}\n";
	Ctx c;
	Arena a;
	KProgram p;
	float y[6] = {0};
	void *bufs[2] = { y, NULL };

	burn_ctx_init(&c, "fill.kir");
	arena_init(&a);
	kprog_init(&p, &a);
	cr_assert_eq(kprog_parse(&c, &p, text, sizeof text - 1), BURN_OK, "%s", c.msg);
	cr_assert_eq(pass_schedule_gpu(&c, &p, &gpu), BURN_OK, "%s", c.msg);
	cr_assert_eq(kir_interp(&c, p.kernel[0], bufs), BURN_OK, "%s", c.msg);
	for (int i = 0; i < 6; i++)
		cr_expect_eq(y[i], 1.5f, "y[%d] = %g", i, y[i]);
	arena_free(&a);
}

/*
 * test_target.c - the target seam: descriptions and the backend registry,
 * lowering that reads its tiles from the Target, the schedule pass
 * (threads, private variables, FMA) and the C renderer printing it, and the
 * plan's launch list.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "passes/passes.h"
#include "codegen/target_iface.h"
#include "codegen/c/render_c.h"

/* ---- descriptions and registry ----------------------------------------- */

Test(target, registry)
{
	cr_assert_eq(target_find("cpu"), &target_cpu);
	cr_assert_eq(target_find("gpu"), &target_gpu);
	cr_assert_null(target_find("tpu"));
	cr_assert_eq(target_or_default(NULL), &target_cpu);
	cr_assert_eq(backend_list[0], backend_find("c"), "c is the default");
	cr_assert_eq(backend_find("c")->target, &target_cpu);
	cr_assert_not_null(backend_find("c")->emit_module);
	cr_assert_not_null(backend_find("c")->render_kernel);
	/* the GPU is a description only: nothing may pretend to render it */
	cr_assert_eq(backend_find("gpu")->target, &target_gpu);
	cr_assert_null(backend_find("gpu")->emit_module);
	cr_assert_null(backend_find("gpu")->render_kernel);
	cr_assert_null(backend_find("nope"));
	cr_assert_eq(target_gpu.subgroup, 32);
	cr_assert_eq(target_gpu.mma_m * target_gpu.mma_n * target_gpu.mma_k, 16 * 8 * 16);
	cr_assert_eq(target_cpu.tune.gemm_mr, 8);
	cr_assert_eq(target_cpu.tune.gemm_nr, 32);
}

/* The CPU descriptions (--cpu): found by name, native one of them, the
 * default's tuning that of target_cpu, and target_with_cpu changing the
 * tuning of the CPU targets only. */
Test(target, cpu_descriptions)
{
	const TargetCpu *avx2 = target_cpu_find("avx2"), *native = target_cpu_find("native");
	Target t;
	int n = 0;

	cr_assert_not_null(avx2);
	cr_assert_eq(avx2->tune.gemm_mr * avx2->tune.gemm_nr, 6 * 16);
	cr_assert_eq(target_cpu_find("generic")->tune.vec_lanes, 4);
	cr_assert_null(target_cpu_find("avx9"));
	cr_assert_null(target_cpu_find(NULL));
	cr_assert_eq(native, target_cpu_native());
	for (const TargetCpu *d = target_cpus; d->name; d++)
		n += d == native;
	cr_assert_eq(n, 1, "native is one of the rows");
	cr_assert_eq(target_cpu.cpu, &target_cpus[0], "the default is the first row");
	cr_assert_eq(memcmp(&target_cpu.tune, &target_cpus[0].tune, sizeof(TargetTune)), 0);
	cr_assert_eq(memcmp(&target_llvm.tune, &target_cpus[0].tune, sizeof(TargetTune)), 0);
	cr_assert_eq(target_with_cpu(&target_llvm, avx2, &t), 0);
	cr_assert_str_eq(t.name, "llvm");
	cr_assert_eq(t.ops.libm, 0, "the llvm target keeps its ops");
	cr_assert_eq(t.tune.gemm_mr, 6);
	cr_assert_eq(t.vector_bytes, 32);
	cr_assert_eq(t.cpu, avx2);
	cr_assert_eq(target_with_cpu(&target_cpu_free, avx2, &t), 0);
	cr_assert_eq(t.threads, 0);
	cr_assert_eq(target_with_cpu(&target_gpu, avx2, &t), -1, "not a CPU target");
	cr_assert_eq(target_with_cpu(&target_wasm, avx2, &t), -1, "wasm has its own");
}

/* ---- a small graph: x -> Relu -> t -> MatMul(W) -> y -------------------- */

static int input(Graph *g, const char *name, int rank, const int64_t *dim)
{
	int v = graph_add_value(g, name);
	Value *x = GV(g, v);

	x->kind = VK_INPUT;
	x->dtype = DT_F32;
	x->rank = rank;
	memcpy(x->dim, dim, sizeof(int64_t) * rank);
	graph_add_input(g, v);
	return v;
}

typedef struct MG {
	int x, w, t, y;
} MG;

/* M x K input through Relu, times a constant K x N. */
static Graph *matmul_graph(Ctx *c, int64_t M, int64_t K, int64_t N, MG *mg)
{
	Graph *g = graph_create("m");
	int64_t xd[2] = { M, K }, wd[2] = { K, N };
	float *wv = calloc(K * N, sizeof *wv);

	for (int64_t i = 0; i < K * N; i++)
		wv[i] = (float)(i % 7) - 3;
	mg->x = input(g, "x", 2, xd);
	mg->w = graph_add_value(g, "w");
	cr_assert_eq(graph_set_const(c, g, mg->w, DT_F32, 2, wd, wv), BURN_OK);
	mg->t = graph_add_value(g, "t");
	graph_add_node(g, OP_Relu, "relu", 1, &mg->x, 1, &mg->t);
	mg->y = graph_add_value(g, "y");
	graph_add_node(g, OP_MatMul, "mm", 2, (int[]){ mg->t, mg->w }, 1, &mg->y);
	graph_add_output(g, mg->y);
	free(wv);
	cr_assert_eq(graph_toposort(c, g), BURN_OK);
	return g;
}

static Compiled *compile_for(const Target *t, int64_t M, MG *mg)
{
	Ctx c;
	Compiled *m;
	CompileOpts o = { 0, NULL, 1, 1, t };

	burn_ctx_init(&c, "test");
	cr_assert_eq(burn_compile_graph(&c, matmul_graph(&c, M, 64, 96, mg), &o, &m),
	             BURN_OK, "%s", c.msg);
	cr_assert_eq(m->prog.nkernel, 2, "Relu, MatMul");
	return m;
}

/* The GEMM's register tile (its local accumulator array and the number of
 * row blocks) comes from the Target's tuning, not from the lowering. */
Test(target, lowering_reads_the_gemm_tile)
{
	Target small = target_cpu;
	MG mg;
	Compiled *m;
	const KKernel *k;
	int local = -1;

	small.name = "small";
	small.tune.gemm_mr = 4;
	small.tune.gemm_nr = 16;
	for (int pass = 0; pass < 2; pass++) {
		m = compile_for(pass ? &small : NULL, 16, &mg);
		k = m->prog.kernel[1];
		for (int b = 0; b < k->nbuf; b++)
			if (k->buf[b].space == KS_LOCAL)
				local = b;
		cr_assert_geq(local, 0, "the blocked GEMM has a local tile");
		cr_assert_eq(k->buf[local].count, pass ? 4 * 16 : 8 * 32);
		cr_assert_str_eq(k->sched->target, pass ? "small" : "cpu");
		burn_compiled_destroy(m);
	}
}

/* The launch list binds every global buffer of every kernel: the input,
 * the intermediate at its planned offset, the weight (packed) and the
 * output. */
Test(target, launch_list)
{
	MG mg;
	Compiled *m = compile_for(NULL, 16, &mg);
	const Launch *l0 = &m->plan.launch[0], *l1 = &m->plan.launch[1];

	cr_assert_eq(l0->narg, 2);
	cr_assert_eq(l0->arg[0].kind, LK_INPUT);
	cr_assert_eq(l0->arg[0].index, 0);
	cr_assert_eq(l0->arg[0].value, mg.x);
	cr_assert_eq(l0->arg[1].kind, LK_ARENA);
	cr_assert_eq(l0->arg[1].value, mg.t);
	cr_assert_eq(l0->arg[1].offset.c, m->plan.offset[mg.t]);
	cr_assert_eq(l1->narg, 3);
	for (int i = 0; i < 3; i++) {
		const LaunchArg *e = &l1->arg[i];
		cr_assert_eq(m->prog.kernel[1]->buf[e->buf].space, KS_GLOBAL);
		if (e->value == mg.t)
			cr_assert(e->kind == LK_ARENA && e->offset.c == m->plan.offset[mg.t]);
		else if (e->value == mg.w || e->kind == LK_WEIGHT)
			/* the weight, or its B panels packed at compile time */
			cr_assert(e->kind == LK_WEIGHT && (e->value == mg.w ||
			          strstr(GV(m->g, e->value)->name, ".panels")),
			          "weight arg: value %d", e->value);
		else
			cr_assert(e->value == mg.y && e->kind == LK_OUTPUT && e->index == 0);
	}
	burn_compiled_destroy(m);
}

/* ---- the schedule pass and the renderer -------------------------------- */

typedef struct T {
	Arena a;
	Ctx c;
	KProgram p;
	KB kb;
} T;

/*
 *   for i < rows (parallel): for j < 1024:
 *     a = x[i*1024 + j]
 *     y[i*1024 + j] = y[i*1024 + j] + a*x[j]
 * with `a` also set after the loop when shared_var.
 */
static KKernel *k_acc(T *t, int64_t rows, int shared_var)
{
	KB *kb = &t->kb;
	int x, y, a, i, j;
	KRef idx;

	memset(t, 0, sizeof *t);
	arena_init(&t->a);
	burn_ctx_init(&t->c, "test");
	kprog_init(&t->p, &t->a);
	kb_begin(kb, &t->p, "acc", "test");
	x = kb_buf_value(kb, 0, DT_F32, rows * 1024, KA_READ);
	y = kb_buf_value(kb, 1, DT_F32, rows * 1024, KA_RW);
	a = kb_var(kb, DT_F32, "a");
	i = kb_for(kb, "i", kb_idx(kb, 0), kb_idx(kb, rows), KF_PARALLEL);
	j = kb_for(kb, "j", kb_idx(kb, 0), kb_idx(kb, 1024), 0);
	idx = kb_bin(kb, KO_ADD, kb_bin(kb, KO_MUL, kb_get(kb, i), kb_idx(kb, 1024)),
	             kb_get(kb, j));
	kb_set(kb, a, kb_load(kb, x, idx));
	kb_store(kb, y, idx, kb_bin(kb, KO_ADD, kb_load(kb, y, idx),
	         kb_bin(kb, KO_MUL, kb_get(kb, a), kb_load(kb, x, kb_get(kb, j)))));
	kb_end(kb);
	kb_end(kb);
	if (shared_var) {
		kb_set(kb, a, kb_load(kb, x, kb_idx(kb, 0)));
		kb_store(kb, y, kb_idx(kb, 0), kb_get(kb, a));
	}
	return kb_finish(kb);
}

/* The kernel rendered to a string (freed by the caller). */
static char *render(T *t, const KKernel *k)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	cr_assert_not_null(f);
	cr_assert_eq(render_c_kernel(&t->c, k, f), BURN_OK, "%s", t->c.msg);
	fclose(f);
	return s;
}

/* 64 rows x 1024 = 65536 iterations: exactly the cpu's thread_min_work. */
Test(target, threads_from_the_target)
{
	T t;
	KKernel *k = k_acc(&t, 64, 0);
	Target more = target_cpu, none = target_cpu;
	char *s;

	/* unscheduled: plain serial C as written */
	s = render(&t, k);
	cr_assert_null(strstr(s, "omp"), "%s", s);
	cr_assert_null(strstr(s, "BURN_FMA"), "%s", s);
	free(s);

	cr_assert_eq(pass_schedule(&t.c, &t.p, &target_cpu), BURN_OK, "%s", t.c.msg);
	cr_assert_eq(k->sched->nthreads, 1);
	cr_assert_eq(k->sched->threads[0].nvar, 1, "a is private");
	cr_assert_str_eq(k->var[k->sched->threads[0].var[0]].name, "a");
	s = render(&t, k);
	/* a region timed by burn_omp_judge, and the loop again after it as
	 * plain code for one thread */
	cr_assert(strstr(s, "#pragma omp parallel num_threads(burn_nt) private("), "%s", s);
	cr_assert(strstr(s, "#pragma omp for schedule(static) nowait\n"), "%s", s);
	cr_assert(strstr(s, "burn_omp_judge(&burn_l"), "%s", s);
	{
		const char *e = strstr(s, "} else\n#endif\n");
		cr_assert(e && strstr(e, "for (int64_t"), "no serial copy of the loop: %s", s);
	}
	free(s);

	more.tune.thread_min_work = 65537;
	cr_assert_eq(pass_schedule(&t.c, &t.p, &more), BURN_OK);
	cr_assert_eq(k->sched->nthreads, 0, "one iteration short of the threshold");
	s = render(&t, k);
	cr_assert_null(strstr(s, "omp"), "%s", s);
	free(s);

	none.threads = 0;
	cr_assert_eq(pass_schedule(&t.c, &t.p, &none), BURN_OK);
	cr_assert_eq(k->sched->nthreads, 0, "a target without CPU threads");
	arena_free(&t.a);
}

/* A variable set inside the loop and outside it keeps the loop serial. */
Test(target, shared_variable_stays_serial)
{
	T t;
	KKernel *k = k_acc(&t, 128, 1);

	cr_assert_eq(pass_schedule(&t.c, &t.p, NULL), BURN_OK, "%s", t.c.msg);
	cr_assert_eq(k->sched->nthreads, 0);
	arena_free(&t.a);
}

/* FMA contraction is the target's choice: marked and printed with fma,
 * neither without. */
Test(target, fma_from_the_target)
{
	T t;
	KKernel *k = k_acc(&t, 2, 0);
	Target nofma = target_cpu;
	int marked = 0;
	char *s;

	cr_assert_eq(pass_schedule(&t.c, &t.p, &target_cpu), BURN_OK);
	for (KRef i = 1; i < k->nnode; i++)
		marked += ksched_fma(k->sched, i) != 0;
	cr_assert_eq(marked, 1, "one accumulation");
	s = render(&t, k);
	cr_assert(strstr(s, "BURN_FMA("), "%s", s);
	free(s);

	nofma.fma = 0;
	cr_assert_eq(pass_schedule(&t.c, &t.p, &nofma), BURN_OK);
	s = render(&t, k);
	cr_assert_null(strstr(s, "BURN_FMA"), "%s", s);
	free(s);
	arena_free(&t.a);
}

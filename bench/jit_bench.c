/*
 * jit_bench.c - the llvm target's compile time and its pointwise speed.
 *
 *   jit_bench compile [REPS]   first compilation of fused pointwise
 *       programs on a [1024,1024] f32 input: gelu = x*(erf(x/sqrt2)+1)/2
 *       and `more` (gelu, tanh, exp, sigmoid: 13 ops), each compiled REPS
 *       times with no cache (render + optimise + code generation, then
 *       linking), the very first one in the process apart (it pays
 *       LLVM's one-time set-up); then the same through a disk cache in a
 *       temporary directory: the load of a hit.  With the lean pipeline
 *       (the default for these) and with O2.
 *   jit_bench transc [REPS]    y = exp(x) + tanh(x) + erf(x) on 2^24
 *       floats, compiled for the cpu description at O2 (exp and tanh as
 *       libm calls, which LLVM does not vectorise: what the llvm target
 *       did before it had its own description) and for the llvm
 *       description (kernel-IR polynomials, vectorised) at O2 and with the
 *       lean pipeline (its default for such a program), best of REPS runs
 *       each, against memcpy of the same bytes; BURN_THREADS sets the
 *       threads.
 *
 *   jit_bench pfor [REPS]      the overhead of one burn_parallel_for
 *       (runtime/parallel.c) with empty chunks, REPS * 1000 calls.
 *
 * Built by CMake (with LLVM) as build/jit_bench.  Numbers:
 * docs/BENCHMARKS.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "passes/passes.h"
#include "codegen/llvm/jit.h"
#include "runtime/parallel.h"

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* CPU time of this thread: a compilation runs on the calling thread
 * only, so this is its cost free of what else the machine is doing */
static double
cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static const char *const body[][2] = {
	{ "gelu",
	  "  %a = Mul(%x, %s)\n  %b = Erf(%a)\n  %c = Add(%b, %one)\n"
	  "  %d = Mul(%x, %c)\n  %y = Mul(%d, %half)\n" },
	{ "more",
	  "  %a = Mul(%x, %s)\n  %b = Erf(%a)\n  %c = Add(%b, %one)\n"
	  "  %d = Mul(%x, %c)\n  %g = Mul(%d, %half)\n  %t = Tanh(%x)\n"
	  "  %q = Mul(%x, %x)\n  %nq = Neg(%q)\n  %e = Exp(%nq)\n"
	  "  %m = Mul(%t, %e)\n  %sg = Sigmoid(%x)\n  %u = Add(%g, %m)\n"
	  "  %y = Mul(%u, %sg)\n" },
	{ "transc",
	  "  %e = Exp(%x)\n  %t = Tanh(%x)\n  %f = Erf(%x)\n"
	  "  %u = Add(%e, %t)\n  %y = Add(%u, %f)\n" },
};

static Compiled *
build(int which, const char *shape, const Target *t)
{
	char text[4096];
	CompileOpts co = { 0 };
	Compiled *m;
	Graph *g;
	Ctx c;

	snprintf(text, sizeof text,
	         "graph %s opset 17 (%%x: f32[%s]) -> (%%y) {\n"
	         "  %%s = const f32[] [0.707106769]\n  %%one = const f32[] [1]\n"
	         "  %%half = const f32[] [0.5]\n%s}\n", body[which][0], shape,
	         body[which][1]);
	burn_ctx_init(&c, body[which][0]);
	co.target = t;
	if (ir_parse(&c, text, strlen(text), &g) || burn_compile_graph(&c, g, &co, &m)) {
		fprintf(stderr, "jit_bench: %s\n", c.msg);
		exit(1);
	}
	if (m->prog.nkernel != 1) {
		fprintf(stderr, "jit_bench: %s is %d kernels\n", body[which][0],
		        m->prog.nkernel);
		exit(1);
	}
	return m;
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void
compile_bench(int reps)
{
	char dir[] = "/tmp/jit_benchXXXXXX";

	if (!mkdtemp(dir))
		exit(1);
	for (int pw = 0; pw < 4; pw++) {
		int w = pw % 2, pipe = pw < 2 ? LLVM_PIPELINE_AUTO : LLVM_PIPELINE_O2;
		Compiled *m = build(w, "1024,1024", &target_llvm);
		double *cm = calloc((size_t)reps, sizeof *cm), *ld = calloc((size_t)reps, sizeof *ld);
		double *cpu = calloc((size_t)reps, sizeof *cpu);
		double first_c = 0, first_l = 0, first_cpu = 0, hit_l = 1e9, hit_cpu = 1e9;
		for (int r = -1; r < reps; r++) {
			LlvmJitOpts o = { .pipeline = pipe };
			LlvmJit *j;
			Ctx c;
			double t0 = cpu_ms();
			burn_ctx_init(&c, NULL);
			if (llvm_jit_compile_opts(&c, &m->prog, &o, &j)) {
				fprintf(stderr, "jit_bench: %s\n", c.msg);
				exit(1);
			}
			t0 = cpu_ms() - t0;
			llvm_jit_free(j);
			if (r < 0) {
				first_c = o.compile_ms;
				first_l = o.load_ms;
				first_cpu = t0;
			} else {
				cm[r] = o.compile_ms;
				ld[r] = o.load_ms;
				cpu[r] = t0;
			}
		}
		for (int r = 0; r < 6; r++) {   /* store once, then hits */
			LlvmJitOpts o = { .cache_dir = dir, .pipeline = pipe };
			LlvmJit *j;
			Ctx c;
			double t0 = cpu_ms();
			burn_ctx_init(&c, NULL);
			if (llvm_jit_compile_opts(&c, &m->prog, &o, &j)) {
				fprintf(stderr, "jit_bench: %s\n", c.msg);
				exit(1);
			}
			t0 = cpu_ms() - t0;
			llvm_jit_free(j);
			if (o.hit && o.load_ms < hit_l)
				hit_l = o.load_ms;
			if (o.hit && t0 < hit_cpu)
				hit_cpu = t0;
		}
		qsort(cm, (size_t)reps, sizeof *cm, cmp_d);
		qsort(ld, (size_t)reps, sizeof *ld, cmp_d);
		qsort(cpu, (size_t)reps, sizeof *cpu, cmp_d);
		printf("%-5s %-4s  first in process: compile %.1f + link %.1f ms "
		       "(cpu %.1f)  then: compile %.1f + link %.1f ms (cpu %.1f; "
		       "medians, min cpu %.1f)  cache hit: %.1f ms (cpu %.1f), "
		       "no compile\n", body[w][0],
		       pipe == LLVM_PIPELINE_O2 ? "O2" : "auto", first_c, first_l,
		       first_cpu, cm[reps / 2], ld[reps / 2], cpu[reps / 2], cpu[0],
		       hit_l, hit_cpu);
		free(cm);
		free(ld);
		free(cpu);
		burn_compiled_destroy(m);
	}
	{
		char cmd[64];
		snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
		if (system(cmd)) {}
	}
}

static void
transc_bench(int reps)
{
	const long n = 1L << 24;
	float *x = malloc(sizeof *x * n), *y = malloc(sizeof *y * n), *y2 = malloc(sizeof *y * n);
	double copy = 1e9, maxdiff = 0;
	const Target *ts[2] = { &target_cpu, &target_llvm };

	for (long i = 0; i < n; i++)
		x[i] = -4.0f + 8.0f * (float)((i * 2654435761u) % n) / (float)n;
	for (int r = 0; r < reps; r++) {
		double t0 = now_ms();
		memcpy(y, x, sizeof *x * n);
		t0 = now_ms() - t0;
		if (t0 < copy)
			copy = t0;
	}
	printf("2^24 floats, %d thread(s); memcpy %.2f ms (%.1f GB/s read+written)\n",
	       burn_threads(), copy, 8.0 * n / copy / 1e6);
	for (int v = 0; v < 3; v++) {
		int t = v > 0, pipe = v == 2 ? LLVM_PIPELINE_LEAN : LLVM_PIPELINE_O2;
		Compiled *m = build(2, "16777216", ts[t]);
		LlvmJitOpts o = { .pipeline = pipe };
		LlvmJit *j;
		double best = 1e9;
		Ctx c;
		const void *in[1] = { x };
		void *out[1] = { t ? y : y2 };
		burn_ctx_init(&c, NULL);
		if (llvm_jit_compile_opts(&c, &m->prog, &o, &j)) {
			fprintf(stderr, "jit_bench: %s\n", c.msg);
			exit(1);
		}
		for (int r = 0; r < reps; r++) {
			double t0 = now_ms();
			if (llvm_jit_run(&c, j, m, in, out, NULL)) {
				fprintf(stderr, "jit_bench: %s\n", c.msg);
				exit(1);
			}
			t0 = now_ms() - t0;
			if (t0 < best)
				best = t0;
		}
		printf("exp+tanh+erf, %-4s description (%s), %-4s pipeline: %.2f ms, "
		       "%.2f ns/element, %.0f%% of memcpy's throughput\n", ts[t]->name,
		       ts[t]->ops.libm ? "libm calls" : "polynomials",
		       pipe == LLVM_PIPELINE_O2 ? "O2" : "lean", best,
		       best * 1e6 / n, 100.0 * copy / best);
		llvm_jit_free(j);
		burn_compiled_destroy(m);
	}
	for (long i = 0; i < n; i++) {
		double d = fabs((double)y[i] - y2[i]) / (1 + fabs((double)y2[i]));
		if (d > maxdiff)
			maxdiff = d;
	}
	printf("largest relative difference between the two: %.2g\n", maxdiff);
	free(x);
	free(y);
	free(y2);
}

static void
nothing(void *ctx, int64_t lo, int64_t hi)
{
	volatile int64_t *sink = ctx;

	*sink += hi - lo;
}

/* About 50 ns of work per iteration. */
static void
busy(void *ctx, int64_t lo, int64_t hi)
{
	volatile double *sink = ctx;
	double acc = 0;

	for (int64_t i = lo; i < hi; i++)
		for (int k = 0; k < 50; k++)
			acc += (double)(i ^ k) * 1e-9;
	*sink += acc;
}

/* The cost of one burn_parallel_for: with nothing to do (the call's own
 * overhead; the caller may run every chunk itself before a worker is
 * awake), and over 1024 iterations of ~50 ns each (~50 us of work, so the
 * workers take part): its time against a serial run of the same. */
static void
pfor_bench(int reps)
{
	volatile int64_t sink = 0;
	volatile double dsink = 0;
	int n = reps * 1000;
	double best = 1e9, par = 1e9, ser = 1e9;

	for (int round = 0; round < 5; round++) {
		double t0 = now_ms();
		for (int i = 0; i < n; i++)
			burn_parallel_for(nothing, (void *)&sink, 0, 1 << 20);
		t0 = (now_ms() - t0) * 1e3 / n;
		if (t0 < best)
			best = t0;
	}
	for (int round = 0; round < 5; round++) {
		double t0 = now_ms();
		for (int i = 0; i < reps * 20; i++)
			burn_parallel_for(busy, (void *)&dsink, 0, 1024);
		t0 = (now_ms() - t0) * 1e3 / (reps * 20);
		if (t0 < par)
			par = t0;
		t0 = now_ms();
		for (int i = 0; i < reps * 20; i++)
			busy((void *)&dsink, 0, 1024);
		t0 = (now_ms() - t0) * 1e3 / (reps * 20);
		if (t0 < ser)
			ser = t0;
	}
	printf("burn_parallel_for on %d threads: empty chunks %.2f us per call "
	       "(best of 5 rounds of %d); 1024 x ~50 ns: %.1f us, serially %.1f us "
	       "(speed-up %.2f)\n", burn_threads(), best, n, par, ser, ser / par);
}

int
main(int argc, char **argv)
{
	int reps = argc > 2 ? atoi(argv[2]) : 10;

	if (reps < 1)
		reps = 1;
	if (argc > 1 && !strcmp(argv[1], "compile"))
		compile_bench(reps);
	else if (argc > 1 && !strcmp(argv[1], "transc"))
		transc_bench(reps);
	else if (argc > 1 && !strcmp(argv[1], "pfor"))
		pfor_bench(reps);
	else {
		fprintf(stderr, "usage: jit_bench compile|transc|pfor [REPS]\n");
		return 2;
	}
	return 0;
}

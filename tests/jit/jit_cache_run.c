/*
 * jit_cache_run.c - one fused pointwise program through the llvm target
 * with the disk kernel cache, for tests/jit/cache.sh: compiles it with
 * llvm_jit_compile_opts, runs it, checks the result against the kernel-IR
 * interpreter, and prints what the cache did:
 *
 *   hit=H compiles=C entries=E note=NOTE
 *
 * usage: jit_cache_run EXPR [--cache-dir DIR | --default-cache]
 *                           [--max-bytes N] [--n N]
 *   EXPR  gelu (x*(erf(x/sqrt2)+1)/2), more (gelu and a few more ops),
 *         transc (exp(x) + tanh(x) + erf(x))
 *
 * Exit status: 0 when it ran and agreed, 1 otherwise (the status message
 * on stderr), 2 on a usage error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "passes/passes.h"
#include "runtime/cache.h"
#include "codegen/llvm/jit.h"

/* The program's graph text for EXPR on a [n] f32 input, into buf. */
static int
graph_text(const char *expr, long n, char *buf, size_t size)
{
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

	for (size_t i = 0; i < sizeof body / sizeof body[0]; i++)
		if (!strcmp(expr, body[i][0]))
			return snprintf(buf, size,
			    "graph %s opset 17 (%%x: f32[%ld]) -> (%%y) {\n"
			    "  %%s = const f32[] [0.707106769]\n"
			    "  %%one = const f32[] [1]\n"
			    "  %%half = const f32[] [0.5]\n%s}\n",
			    expr, n, body[i][1]) >= (int)size ? -1 : 0;
	return -1;
}

int
main(int argc, char **argv)
{
	const char *expr = argc > 1 ? argv[1] : "", *dir = NULL;
	LlvmJitOpts o = { 0 };
	CompileOpts co = { 0 };
	char text[4096];
	long n = 4096;
	Compiled *m = NULL;
	LlvmJit *j = NULL;
	float *x, *want, *got;
	Graph *g;
	Ctx c;
	int bad = 0;

	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--cache-dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--default-cache"))
			dir = "";
		else if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc)
			o.cache_max_bytes = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--n") && i + 1 < argc)
			n = atol(argv[++i]);
		else {
			fprintf(stderr, "jit_cache_run: bad argument %s\n", argv[i]);
			return 2;
		}
	}
	if (n < 1 || graph_text(expr, n, text, sizeof text)) {
		fprintf(stderr, "usage: jit_cache_run gelu|more|transc [--cache-dir DIR | "
		        "--default-cache] [--max-bytes N] [--n N]\n");
		return 2;
	}
	o.cache_dir = dir;
	burn_ctx_init(&c, expr);
	co.target = &target_llvm;
	if (ir_parse(&c, text, strlen(text), &g) ||
	    burn_compile_graph(&c, g, &co, &m)) {
		fprintf(stderr, "jit_cache_run: %s\n", c.msg);
		return 1;
	}
	x = malloc(sizeof *x * (size_t)n);
	want = malloc(sizeof *x * (size_t)n);
	got = malloc(sizeof *x * (size_t)n);
	if (!x || !want || !got)
		return 1;
	for (long i = 0; i < n; i++)
		x[i] = -6.0f + 12.0f * (float)i / (float)n;
	{
		const void *in[1] = { x };
		void *ref[1] = { want }, *out[1] = { got };
		if (plan_run_interp(&c, m->g, &m->prog, &m->plan, NULL, in, ref, NULL) ||
		    llvm_jit_compile_opts(&c, &m->prog, &o, &j) ||
		    llvm_jit_run(&c, j, m, in, out, NULL)) {
			fprintf(stderr, "jit_cache_run: %s\n", c.msg);
			printf("hit=%d compiles=%d note=%s\n", o.hit, o.compiles, o.note);
			return 1;
		}
	}
	/* the same kernel IR: the interpreter's values, but for a fused
	 * multiply-add LLVM may contract where the interpreter rounds twice */
	for (long i = 0; i < n; i++)
		if (!(fabsf(got[i] - want[i]) <= 1e-5f * (1 + fabsf(want[i])))) {
			if (bad++ < 5)
				fprintf(stderr, "jit_cache_run: x=%g: %g, interpreter %g\n",
				        x[i], got[i], want[i]);
		}
	{
		BurnCache cc;
		int64_t entries = 0, bytes = 0;
		Ctx c2;
		burn_ctx_init(&c2, NULL);
		if (dir && burn_cache_open(&c2, &cc, dir, 0) == 0) {
			burn_cache_scan(&cc, &entries, &bytes);
			burn_cache_close(&cc);
		}
		printf("hit=%d compiles=%d entries=%lld note=%s\n", o.hit, o.compiles,
		       (long long)entries, o.note);
	}
	llvm_jit_free(j);
	burn_compiled_destroy(m);
	free(x);
	free(want);
	free(got);
	return bad ? 1 : 0;
}

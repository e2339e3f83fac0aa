/*
 * test_ksteps.c - schedules as data (KSteps, ir/ksteps.c): the canonical
 * text round-trips, bad text gives the column and what was expected and
 * never crashes, and a compile given the steps another compile printed
 * builds the same kernels, while a changed step changes its kernel.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/compile.h"

static void
fmt(const KSteps *s, char *out, size_t cap)
{
	size_t n = ksteps_format(s, out, cap);
	cr_assert_lt(n, cap, "schedule text truncated");
}

/* parse text, print it: the canonical form */
static void
canon(const char *text, char *out, size_t cap)
{
	KSteps s;
	char msg[160];
	int col;

	cr_assert_eq(ksteps_parse(text, strlen(text), &s, &col, msg, sizeof msg), BURN_OK,
	             "'%s': column %d: %s", text, col, msg);
	fmt(&s, out, cap);
}

Test(ksteps, print_parse_print_is_the_identity)
{
	static const char *const in[][2] = {
		{ "", "" },
		{ "threads(0) fma tile(8,32) im2col", "threads(0) fma tile(8,32) im2col" },
		/* any order, blanks inside parentheses: printed canonical */
		{ "im2col  tile( 8 , 32 ) fma threads(3,0,2)", "threads(0,2,3) fma tile(8,32) im2col" },
		{ "serial nofma dot(8) unroll(0) vec(4) direct", "serial nofma dot(8) unroll(0) vec(4) direct" },
		{ "sync rows(2,32,128) grid(0,13,256) mma(32,32,16)",
		  "grid(0,13,256) rows(2,32,128) mma(32,32,16) sync" },
		{ "nomma\tasync", "nomma async" },
	};
	char a[512], b[512];

	for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
		canon(in[i][0], a, sizeof a);
		cr_assert_str_eq(a, in[i][1], "'%s'", in[i][0]);
		canon(a, b, sizeof b);
		cr_assert_str_eq(a, b, "print -> parse -> print changed '%s'", a);
	}
}

/* Random schedules (every kind, random arguments): format, parse, equal. */
Test(ksteps, random_round_trips)
{
	unsigned seed = 12345;
	char a[8192], b[8192], msg[160];

	for (int iter = 0; iter < 2000; iter++) {
		KSteps s = { 0 }, t;
		int n = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 12, col;
		for (int j = 0; j < n; j++) {
			KStep st;
			int kind = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % (KST_COUNT_ - 1);
			int narg = kind == KST_THREADS ? 1 + (int)(seed >> 20) % 5 :
			           kind == KST_TILE ? 2 : kind == KST_GRID || kind == KST_ROWS ||
			           kind == KST_MMA || kind == KST_WGMMA ? 3 : kind == KST_DOT || kind == KST_VEC ||
			           kind == KST_UNROLL ? 1 : 0;
			memset(&st, 0, sizeof st);
			st.kind = kind;
			st.narg = narg;
			for (int k = 0; k < narg; k++)
				st.arg[k] = kind == KST_THREADS ? j * 5 + k : 1 + (int)((seed =
				            seed * 1103515245u + 12345u) >> 16) % 16;
			cr_assert(ksteps_put(&s, &st));
		}
		fmt(&s, a, sizeof a);
		cr_assert_eq(ksteps_parse(a, strlen(a), &t, &col, msg, sizeof msg), BURN_OK,
		             "'%s': column %d: %s", a, col, msg);
		fmt(&t, b, sizeof b);
		cr_assert_str_eq(a, b);
		cr_assert_eq(t.n, s.n);
		for (int j = 0; j < s.n; j++)
			cr_assert(kstep_same(&s.step[j], &t.step[j]), "'%s' step %d", a, j);
	}
}

Test(ksteps, errors_name_the_column_and_what_was_expected)
{
	static const struct { const char *text; int col; const char *msg; } bad[] = {
		{ "frob", 1, "unknown step 'frob'" },
		{ "fma tile(8", 11, "expected ',' or ')'" },
		{ "fma tile(8,", 12, "expected a non-negative integer" },
		{ "tile(8,32)im2col", 11, "expected a blank between steps" },
		{ "fma nofma", 5, "'fma' and 'nofma' both decide the same thing" },
		{ "tile(8)", 1, "'tile' takes 2 to 3 arguments" },
		{ "tile(8,32,128,1)", 1, "'tile' takes 2 to 3 arguments" },
		{ "tile(8,32,70000)", 1, "tile(MR,NR,KC): KC at most 65536" },
		{ "fma(1)", 1, "'fma' takes no arguments" },
		{ "tile(0,32)", 1, "tile(MR,NR): MR 1..64" },
		{ "threads(1,1)", 1, "threads: a loop listed twice" },
		{ "vec(-1)", 5, "expected a non-negative integer" },
		{ "unroll(99999999999)", 8, "number too large" },
		{ "grid(0,13,256) rows(0,1,32)", 16, "'grid' and 'rows' both decide" },
		{ "TILE(8,32)", 1, "expected a step" },
	};
	KSteps s;
	char msg[160];
	int col;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(ksteps_parse(bad[i].text, strlen(bad[i].text), &s, &col, msg,
		                          sizeof msg), BURN_ERR_PARSE, "'%s' parsed", bad[i].text);
		cr_assert_eq(col, bad[i].col, "'%s': column %d: %s", bad[i].text, col, msg);
		cr_assert(strstr(msg, bad[i].msg), "'%s': %s", bad[i].text, msg);
	}
}

/* Every prefix of a schedule, and each byte changed: an answer, no crash
 * (the text is not NUL-terminated: the parser reads len bytes only). */
Test(ksteps, prefixes_and_mutations_never_crash)
{
	static const char text[] = "threads(0,1) fma tile(8,32) dot(8) unroll(8) vec(8) "
	                           "im2col grid(0,13,256) rows(1,2,64) mma(32,32,16) async";
	size_t n = sizeof text - 1;
	KSteps s;
	char msg[160];
	int col;

	for (size_t len = 0; len <= n; len++) {
		char *copy = malloc(len ? len : 1);
		memcpy(copy, text, len);
		if (ksteps_parse(copy, len, &s, &col, msg, sizeof msg))
			cr_assert(col >= 1 && (size_t)col <= len + 1, "prefix %zu: column %d", len, col);
		free(copy);
	}
	for (size_t i = 0; i < n; i++)
		for (int ch = 0; ch < 256; ch += 7) {
			char copy[sizeof text];
			memcpy(copy, text, n);
			copy[i] = (char)ch;
			if (ksteps_parse(copy, n, &s, &col, msg, sizeof msg))
				cr_assert(col >= 1 && (size_t)col <= n + 1);
		}
}

Test(ksteps, schedule_files)
{
	static const char file[] =
		"# a comment\n"
		"k_conv: threads(0) fma tile(4,16) im2col   # the first conv\n"
		"\n"
		"  k_gemm :nofma\r\n"
		"k_relu:\n";
	Arena a;
	Ctx c;
	KWant *w = NULL;
	int n = 0;
	char buf[256];

	arena_init(&a);
	burn_ctx_init(&c, NULL);
	cr_assert_eq(kwant_parse(&c, &a, "s.txt", file, sizeof file - 1, 0, &w, &n), BURN_OK,
	             "%s", c.msg);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(w[0].kernel, "k_conv");
	fmt(&w[0].steps, buf, sizeof buf);
	cr_assert_str_eq(buf, "threads(0) fma tile(4,16) im2col");
	cr_assert_str_eq(w[1].kernel, "k_gemm");
	fmt(&w[1].steps, buf, sizeof buf);
	cr_assert_str_eq(buf, "nofma");
	cr_assert_eq(w[2].steps.n, 0);
	/* one more, as --schedule KERNEL=STEPS */
	cr_assert_eq(kwant_parse(&c, &a, "--schedule", "k_x=dot(4)", 10, 1, &w, &n), BURN_OK);
	cr_assert_eq(n, 4);
	cr_assert_str_eq(w[0].kernel, "k_conv", "earlier entries survive the growth");

	/* errors: file, line, column, the kernel, what was expected */
	cr_assert_eq(kwant_parse(&c, &a, "s.txt", "k_a: fma\nk_b: tile(4,x)\n", 24, 0,
	                         &w, &n), BURN_ERR_PARSE);
	cr_assert_str_eq(c.msg, "s.txt:2:13: kernel k_b: expected a non-negative integer");
	burn_ctx_init(&c, NULL);
	cr_assert_eq(kwant_parse(&c, &a, "s.txt", "k_conv: fma\n", 12, 0, &w, &n),
	             BURN_ERR_PARSE);
	cr_assert(strstr(c.msg, "s.txt:1:1: kernel k_conv: given a schedule twice"), "%s", c.msg);
	burn_ctx_init(&c, NULL);
	cr_assert_eq(kwant_parse(&c, &a, "s.txt", "9k: fma", 7, 0, &w, &n), BURN_ERR_PARSE);
	cr_assert(strstr(c.msg, "s.txt:1:1: expected a kernel name"), "%s", c.msg);
	burn_ctx_init(&c, NULL);
	cr_assert_eq(kwant_parse(&c, &a, "--schedule", "k_y fma", 7, 1, &w, &n), BURN_ERR_PARSE);
	cr_assert(strstr(c.msg, "--schedule: column 4: kernel k_y: expected '='"), "%s", c.msg);
	arena_free(&a);
}

/* ---- compiles ---------------------------------------------------------- */

static Compiled *
compile(const char *model, const Target *t, const KWant *want, int nwant, Ctx *c)
{
	char path[1024];
	CompileOpts o = { 0 };
	Compiled *m;

	o.target = t;
	o.want = want;
	o.nwant = nwant;
	snprintf(path, sizeof path, "%s/../shared/models/%s/model.onnx", BURN_SOURCE_DIR, model);
	burn_ctx_init(c, path);
	if (burn_compile_file(c, path, &o, &m))
		return NULL;
	return m;
}

static char *
kernels_text(const Compiled *m)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	cr_assert_not_null(f);
	kprog_print(f, &m->prog);
	fclose(f);
	return s;
}

/* Each kernel's printed steps, as the compile's wants. */
static KWant *
wants_of(const Compiled *m, Arena *a, int *n)
{
	KWant *w = arena_alloc(a, sizeof *w * (size_t)m->prog.nkernel);

	*n = m->prog.nkernel;
	for (int i = 0; i < *n; i++) {
		const KKernel *k = m->prog.kernel[i];
		w[i].kernel = k->name;
		kkernel_steps(k, &w[i].steps);
	}
	return w;
}

/* A compile given the steps another compile printed is identical, for
 * the cpu and the gpu targets. */
Test(ksteps, printed_schedules_reproduce_the_kernels)
{
	static const char *const models[] = { "lenet", "mlp", "squeezenet1_1" };
	const Target *targets[] = { &target_cpu, &target_gpu };

	for (size_t mi = 0; mi < sizeof models / sizeof *models; mi++)
		for (int ti = 0; ti < 2; ti++) {
			Ctx c;
			Arena a;
			int n, some = 0;
			Compiled *m1 = compile(models[mi], targets[ti], NULL, 0, &c), *m2;
			KWant *w;
			char *s1, *s2;
			cr_assert_not_null(m1, "%s", c.msg);
			arena_init(&a);
			w = wants_of(m1, &a, &n);
			for (int i = 0; i < n; i++)
				some += w[i].steps.n;
			cr_assert_gt(some, 0, "%s: no kernel has a schedule", models[mi]);
			m2 = compile(models[mi], targets[ti], w, n, &c);
			cr_assert_not_null(m2, "%s", c.msg);
			s1 = kernels_text(m1);
			s2 = kernels_text(m2);
			cr_assert_str_eq(s1, s2, "%s for %s", models[mi], targets[ti]->name);
			free(s1);
			free(s2);
			burn_compiled_destroy(m1);
			burn_compiled_destroy(m2);
			arena_free(&a);
		}
}

/* The kernel of a name in m, or fail. */
static const KKernel *
kernel(const Compiled *m, const char *name)
{
	for (int i = 0; i < m->prog.nkernel; i++)
		if (!strcmp(m->prog.kernel[i]->name, name))
			return m->prog.kernel[i];
	cr_assert_fail("no kernel %s", name);
	return NULL;
}

static int64_t
local_elems(const KKernel *k)
{
	for (int b = 0; b < k->nbuf; b++)
		if (k->buf[b].space == KS_LOCAL)
			return k->buf[b].count;
	return -1;
}

/* Changed steps change the kernels they name, and only those: a 4 x 16
 * register tile, no FMA, no threads, direct convolution; the results are
 * the default compile's (the interpreter runs both). */
Test(ksteps, a_changed_step_changes_its_kernel)
{
	Ctx c;
	Arena a;
	KWant w[3];
	Compiled *m1 = compile("mlp", NULL, NULL, 0, &c), *m2;
	char buf[256];
	int n;

	cr_assert_not_null(m1, "%s", c.msg);
	arena_init(&a);
	memset(w, 0, sizeof w);
	w[0].kernel = "k_gemm";
	n = 0;
	cr_assert_eq(ksteps_parse("tile(4,16) nofma serial", 23, &w[0].steps, &n, buf,
	                          sizeof buf), BURN_OK, "%s", buf);
	m2 = compile("mlp", NULL, w, 1, &c);
	cr_assert_not_null(m2, "%s", c.msg);
	{
		const KKernel *k1 = kernel(m1, "k_gemm"), *k2 = kernel(m2, "k_gemm");
		int f1 = 0, f2 = 0;
		cr_assert_eq(local_elems(k1), 8 * 32);
		cr_assert_eq(local_elems(k2), 4 * 16);
		cr_assert_eq(k1->sched->nthreads, 1);
		cr_assert_eq(k2->sched->nthreads, 0);
		for (int i = 0; i < k1->nnode; i++)
			f1 += ksched_fma(k1->sched, i) != 0;
		for (int i = 0; i < k2->nnode; i++)
			f2 += ksched_fma(k2->sched, i) != 0;
		cr_assert_gt(f1, 0);
		cr_assert_eq(f2, 0);
		KSteps st;
		kkernel_steps(k2, &st);
		ksteps_format(&st, buf, sizeof buf);
		cr_assert_str_eq(buf, "serial nofma tile(4,16)");
	}
	{   /* the other kernels are untouched */
		char *s1, *s2;
		const KKernel *o1 = kernel(m1, "k_gemm_1"), *o2 = kernel(m2, "k_gemm_1");
		cr_assert_eq(o1->nnode, o2->nnode);
		s1 = kernels_text(m1);
		s2 = kernels_text(m2);
		cr_assert_str_neq(s1, s2);
		free(s1);
		free(s2);
	}
	{   /* same results: run both with the interpreter on one input */
		KRun r1, r2;
		const Graph *g = m1->g;
		const Value *x = &g->val[g->in[0]];
		int64_t ne = value_numel(x);
		float *in = malloc(sizeof *in * (size_t)ne);
		const float *y1, *y2;
		int64_t ny = value_numel(&g->val[g->out[0]]);
		for (int64_t i = 0; i < ne; i++)
			in[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
		cr_assert_eq(kir_run_init(&c, &r1, m1->g), BURN_OK);
		cr_assert_eq(kir_run_init(&c, &r2, m2->g), BURN_OK);
		r1.mem[m1->g->in[0]] = in;
		r2.mem[m2->g->in[0]] = in;
		cr_assert_eq(kir_run_program(&c, &r1, m1->g, &m1->prog), BURN_OK, "%s", c.msg);
		cr_assert_eq(kir_run_program(&c, &r2, m2->g, &m2->prog), BURN_OK, "%s", c.msg);
		y1 = kir_run_value(&r1, &m1->prog, m1->g->out[0]);
		y2 = kir_run_value(&r2, &m2->prog, m2->g->out[0]);
		for (int64_t i = 0; i < ny; i++)
			cr_assert(fabsf(y1[i] - y2[i]) <= 1e-5f * (1 + fabsf(y1[i])),
			          "y[%lld]: %g vs %g", (long long)i, y1[i], y2[i]);
		r1.mem[m1->g->in[0]] = NULL;
		r2.mem[m2->g->in[0]] = NULL;
		kir_run_free(&r1);
		kir_run_free(&r2);
		free(in);
	}
	burn_compiled_destroy(m1);
	burn_compiled_destroy(m2);
	arena_free(&a);
}

/* A step that does not apply, or cannot be built, is an error naming the
 * kernel and the step; so is a kernel that does not exist. */
Test(ksteps, steps_that_do_not_apply_are_errors)
{
	static const struct { const char *kernel, *steps, *msg; int gpu; } bad[] = {
		{ "k_nope", "fma", "no kernel named 'k_nope'", 0 },
		{ "k_logsoftmax", "tile(4,4)", "kernel k_logsoftmax: step 'tile(4,4)' does not apply", 0 },
		{ "k_gemm", "threads(5)", "kernel k_gemm: threads: outermost loop 5 does not exist", 0 },
		{ "k_gemm", "grid(0,1,32)", "kernel k_gemm: step 'grid(0,1,32)' does not apply", 0 },
		{ "k_gemm_2", "mma(64,64,16)", "kernel k_gemm_2: step 'mma(64,64,16)' cannot be built", 1 },
		{ "k_gemm_2", "async", "kernel k_gemm_2: step 'async' cannot be built", 1 },
		{ "k_logsoftmax", "grid(0,1,48)", "threads a power of two", 1 },
		{ "k_gemm", "threads(0)", "does not apply", 1 },
	};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		Ctx c;
		KWant w;
		char msg[160];
		int col;
		Compiled *m;
		memset(&w, 0, sizeof w);
		w.kernel = bad[i].kernel;
		cr_assert_eq(ksteps_parse(bad[i].steps, strlen(bad[i].steps), &w.steps, &col,
		                          msg, sizeof msg), BURN_OK, "%s", msg);
		m = compile("mlp", bad[i].gpu ? &target_gpu : NULL, &w, 1, &c);
		cr_assert_null(m, "%s=%s compiled", bad[i].kernel, bad[i].steps);
		cr_assert(strstr(c.msg, bad[i].msg), "%s=%s: %s", bad[i].kernel, bad[i].steps, c.msg);
	}
}

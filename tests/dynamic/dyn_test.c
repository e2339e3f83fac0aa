/*
 * dyn_test.c - a dim known only at run time (burncc --dynamic-dim).
 *
 *	dyn_test BURNCC DIR WORK
 *
 * DIR/batch/model.onnx (make_models.py) has a symbolic batch dim N: x is
 * f32[N,5,7], z f32[7], and three outputs from pointwise ops and two
 * reductions (over axis 2, and over axis 1 with keepdims).  The model is
 * compiled ONCE per way and run at N = 1, 3 and 17:
 *
 *   - through the kernel-IR interpreter, bound by the launch list with its
 *     size expressions evaluated at each N (plan_run_interp), fused and
 *     with --no-fuse;
 *   - as C: `BURNCC --dynamic-dim N -o WORK/bm.c`, built once with cc into
 *     a driver that takes N on its command line.
 *
 * Each result is compared with a double-precision reference written out
 * below.  That the comparison bites is checked every run: the same
 * programs given N-1 as the dim (a wrong bound, as a mis-evaluated launch
 * list would pass) must leave the last item unwritten and be caught.
 * Then models the mode does not support must be refused, naming the node,
 * its op and the reason (and, on the cuda target, whose launches take
 * the items' count only, one the peeling refuses), and three the peeling refuses (a sum over the batch,
 * a Transpose moving it, a Gather of item 0) compile by sampling the dim
 * (passes/dynfit.c) and give the right result at three batches.  Prints one line per check; exits 1 on a failure.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/compile.h"

enum { R = 5, C = 7 };   /* x is [N, R, C] */

static int failures;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		printf("FAIL: "); \
		printf(__VA_ARGS__); \
		printf("\n"); \
		failures++; \
	} \
} while (0)

/* Inputs: a fixed pseudo-random sequence in [-3, 3]. */
static void
fill(float *x, int64_t n, uint32_t seed)
{
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		x[i] = (float)((seed >> 8) / 16777216.0 * 6.0 - 3.0);
	}
}

/* The model in double: y1 = sigmoid(x*w + z), y2 = sum over c of y1*x,
 * y3 = max over r of exp(x - 1). */
static void
reference(int64_t n, const float *x, const float *z, double *y1, double *y2,
          double *y3)
{
	for (int64_t b = 0; b < n; b++) {
		for (int c = 0; c < C; c++)
			y3[b * C + c] = -INFINITY;
		for (int r = 0; r < R; r++) {
			double s = 0;
			for (int c = 0; c < C; c++) {
				double xv = x[(b * R + r) * C + c];
				double w = (c - 3.0) / 4.0;
				double y = 1.0 / (1.0 + exp(-(xv * w + z[c])));
				double e = exp(xv - 1.0);
				y1[(b * R + r) * C + c] = y;
				s += y * xv;
				if (e > y3[b * C + c])
					y3[b * C + c] = e;
			}
			y2[b * R + r] = s;
		}
	}
}

/* Count the elements of got that differ from ref by more than float
 * rounding allows (NaN, an unwritten output, always differs). */
static int64_t
mismatches(const float *got, const double *ref, int64_t n)
{
	int64_t bad = 0;

	for (int64_t i = 0; i < n; i++)
		if (!(fabs(got[i] - ref[i]) <= 1e-5 * fmax(1.0, fabs(ref[i]))))
			bad++;
	return bad;
}

typedef struct Out {
	float *y1, *y2, *y3;
} Out;

static int
out_alloc(Out *o, int64_t n)
{
	o->y1 = malloc(sizeof(float) * (size_t)(n * R * C + 1));
	o->y2 = malloc(sizeof(float) * (size_t)(n * R + 1));
	o->y3 = malloc(sizeof(float) * (size_t)(n * C + 1));
	if (!o->y1 || !o->y2 || !o->y3)
		return 1;
	/* NaN everywhere: an element no kernel writes cannot pass */
	memset(o->y1, 0xff, sizeof(float) * (size_t)(n * R * C + 1));
	memset(o->y2, 0xff, sizeof(float) * (size_t)(n * R + 1));
	memset(o->y3, 0xff, sizeof(float) * (size_t)(n * C + 1));
	return 0;
}

static void
out_free(Out *o)
{
	free(o->y1);
	free(o->y2);
	free(o->y3);
}

static int64_t
compare(const Out *o, int64_t n, const float *x, const float *z)
{
	double *y1 = malloc(sizeof(double) * (size_t)(n * R * C + 1));
	double *y2 = malloc(sizeof(double) * (size_t)(n * R + 1));
	double *y3 = malloc(sizeof(double) * (size_t)(n * C + 1));
	int64_t bad = -1;

	if (y1 && y2 && y3) {
		reference(n, x, z, y1, y2, y3);
		bad = mismatches(o->y1, y1, n * R * C) + mismatches(o->y2, y2, n * R) +
		      mismatches(o->y3, y3, n * C);
	}
	free(y1);
	free(y2);
	free(y3);
	return bad;
}

/* One run through the interpreter, the dim passed as dim (n: the data's
 * batch).  Returns the mismatches, or -1 when the run failed. */
static int64_t
run_interp(Compiled *m, int64_t n, int64_t dim, const float *x, const float *z)
{
	Ctx c;
	Out o;
	int64_t ab, bad = -1;
	void *arena = NULL;
	const void *in[2] = { x, z };

	burn_ctx_init(&c, NULL);
	if (out_alloc(&o, n))
		return -1;
	if (plan_arena_at(&c, &m->plan, &dim, &ab) ||
	    (ab > 0 && !(arena = aligned_alloc(64, (size_t)(ab + 63) / 64 * 64)))) {
		printf("arena at %lld: %s\n", (long long)dim, c.msg);
	} else {
		void *out[3] = { o.y1, o.y2, o.y3 };
		if (plan_run_interp(&c, m->g, &m->prog, &m->plan, &dim, in, out, arena))
			printf("interpreter at N=%lld: %s\n", (long long)dim, c.msg);
		else
			bad = compare(&o, n, x, z);
	}
	free(arena);
	out_free(&o);
	return bad;
}

/* One run of the C driver (see write_driver). */
static int64_t
run_c(const char *work, int64_t n, int64_t dim, const float *x, const float *z)
{
	char cmd[4096], path[2048];
	FILE *f;
	Out o;
	int64_t bad = -1;

	snprintf(path, sizeof path, "%s/in.bin", work);
	if (!(f = fopen(path, "wb")))
		return -1;
	fwrite(x, sizeof(float), (size_t)(n * R * C), f);
	fwrite(z, sizeof(float), C, f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "'%s/drv' %lld %lld '%s/in.bin' '%s/out.bin'",
	         work, (long long)n, (long long)dim, work, work);
	if (system(cmd) != 0) {
		printf("driver at N=%lld failed\n", (long long)dim);
		return -1;
	}
	snprintf(path, sizeof path, "%s/out.bin", work);
	if (out_alloc(&o, n) || !(f = fopen(path, "rb"))) {
		out_free(&o);
		return -1;
	}
	if (fread(o.y1, sizeof(float), (size_t)(n * R * C), f) == (size_t)(n * R * C) &&
	    fread(o.y2, sizeof(float), (size_t)(n * R), f) == (size_t)(n * R) &&
	    fread(o.y3, sizeof(float), (size_t)(n * C), f) == (size_t)(n * C))
		bad = compare(&o, n, x, z);
	fclose(f);
	out_free(&o);
	return bad;
}

/* A driver around the generated module: drv N DIM IN OUT reads x (N items)
 * and z, runs bm_run with the dim DIM (outputs NaN-filled first) in an
 * arena of exactly bm_arena_bytes(DIM) bytes followed by a guard, and
 * writes y1, y2, y3 (exit 8: the run wrote past its arena). */
static int
write_driver(const char *work)
{
	char path[2048];
	FILE *f;

	snprintf(path, sizeof path, "%s/main.c", work);
	if (!(f = fopen(path, "w")))
		return 1;
	fputs("#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
	      "#include \"bm.h\"\n"
	      "int main(int argc, char **argv)\n{\n"
	      "\tlong long n, d;\n\tfloat *x, z[7], *y1, *y2, *y3;\n"
	      "\tint64_t ab;\n\tvoid *ar = NULL;\n\tFILE *f;\n\tint rc;\n"
	      "\tif (argc != 5) return 2;\n"
	      "\tn = atoll(argv[1]);\n\td = atoll(argv[2]);\n"
	      "\tx = malloc(n * 35 * 4 + 4);\n"
	      "\ty1 = malloc(n * 35 * 4 + 4);\n\ty2 = malloc(n * 5 * 4 + 4);\n"
	      "\ty3 = malloc(n * 7 * 4 + 4);\n"
	      "\tmemset(y1, 0xff, n * 35 * 4);\n\tmemset(y2, 0xff, n * 5 * 4);\n"
	      "\tmemset(y3, 0xff, n * 7 * 4);\n"
	      "\tif (!(f = fopen(argv[3], \"rb\"))) return 3;\n"
	      "\tif (fread(x, 4, n * 35, f) != (size_t)(n * 35) || fread(z, 4, 7, f) != 7) return 3;\n"
	      "\tfclose(f);\n"
	      "\tab = bm_arena_bytes(d);\n"
	      "\tif (ab < 0) return 4;\n"
	      "\t/* exactly the bytes asked for, then a guard that must stay */\n"
	      "\tif (!(ar = aligned_alloc(BM_ARENA_ALIGN, (ab + 64 + 63) / 64 * 64))) return 5;\n"
	      "\tmemset((char *)ar + ab, 0x5a, 64);\n"
	      "\trc = bm_run(d, x, z, y1, y2, y3, ab > 0 ? ar : NULL);\n"
	      "\tif (rc != BM_OK) return 6;\n"
	      "\tfor (int i = 0; i < 64; i++)\n"
	      "\t\tif (((unsigned char *)ar)[ab + i] != 0x5a) return 8;\n"
	      "\tif (!(f = fopen(argv[4], \"wb\"))) return 7;\n"
	      "\tfwrite(y1, 4, n * 35, f);\n\tfwrite(y2, 4, n * 5, f);\n"
	      "\tfwrite(y3, 4, n * 7, f);\n\tfclose(f);\n"
	      "\tfree(ar);\n\tfree(x);\n\tfree(y1);\n\tfree(y2);\n\tfree(y3);\n"
	      "\treturn 0;\n}\n", f);
	return fclose(f) != 0;
}

/* Compiling dir/name/model.onnx with N dynamic fails naming each of
 * want[] (NULL-terminated). */
static void
refused(const char *dir, const char *name, const char *dyn, const Target *t,
        const char *const *want)
{
	char path[2048];
	const char *d[1] = { dyn };
	CompileOpts o = { 0 };
	Compiled *m = NULL;
	Ctx c;
	int rc;

	snprintf(path, sizeof path, "%s/%s/model.onnx", dir, name);
	o.ndyn = 1;
	o.dyn = d;
	o.target = t;
	burn_ctx_init(&c, NULL);
	rc = burn_compile_file(&c, path, &o, &m);
	CHECK(rc != BURN_OK, "%s: compiled with --dynamic-dim %s", name, dyn);
	burn_compiled_destroy(m);
	for (int i = 0; want[i] && rc; i++)
		CHECK(strstr(c.msg, want[i]), "%s: message without '%s': %s", name,
		      want[i], c.msg);
	if (rc)
		printf("refused %s: %s\n", name, c.msg);
}

/* Models the peeling refuses but sampling takes (passes/dynfit.c): x is
 * f32[N,5,7] and y one output; each compiled once with N dynamic and run
 * by the interpreter at N = 1, 3 and 17 against the loop in C that `ref`
 * names: 0 y = sum over the batch of relu(x) [1,5,7]; 1 y = x transposed
 * [5,N,7]; 2 y = x[0] [1,5,7].  min: the smallest N the program must
 * take (gather_batch's x[0] needs one item), which the plan refuses below. */
static void
sampled(const char *dir, const char *name, int ref, int64_t min)
{
	static const int64_t sizes[] = { 1, 3, 17 };
	char path[2048];
	const char *d[1] = { "N" };
	CompileOpts o = { 0 };
	Compiled *m = NULL;
	Ctx c;

	snprintf(path, sizeof path, "%s/%s/model.onnx", dir, name);
	o.ndyn = 1;
	o.dyn = d;
	burn_ctx_init(&c, NULL);
	if (burn_compile_file(&c, path, &o, &m)) {
		CHECK(0, "%s: refused: %s", name, c.msg);
		return;
	}
	CHECK(m->plan.ndims == 1 && (m->plan.dim_min ? m->plan.dim_min[0] : 0) == min,
	      "%s: smallest N %lld, not %lld", name, (long long)(m->plan.dim_min ?
	      m->plan.dim_min[0] : 0), (long long)min);
	if (min > 0) {
		int64_t at = min - 1, ab;
		burn_ctx_init(&c, NULL);
		CHECK(plan_arena_at(&c, &m->plan, &at, &ab) != BURN_OK && strstr(c.msg, "'N'"),
		      "%s: N = %lld not refused naming the dim: %s", name, (long long)at, c.msg);
	}
	for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
		int64_t n = sizes[si], nx = n * R * C, ny = ref == 1 ? nx : R * C, ab, bad = 0;
		float *x = malloc(sizeof(float) * (size_t)nx), *y = malloc(sizeof(float) * (size_t)ny);
		void *arena = NULL;
		const void *in[1] = { x };
		void *out[1] = { y };
		if (!x || !y)
			exit(2);
		fill(x, nx, 7u + (uint32_t)n);
		memset(y, 0xff, sizeof(float) * (size_t)ny);
		burn_ctx_init(&c, NULL);
		if (plan_arena_at(&c, &m->plan, &n, &ab) ||
		    (ab > 0 && !(arena = aligned_alloc(64, (size_t)(ab + 63) / 64 * 64))) ||
		    plan_run_interp(&c, m->g, &m->prog, &m->plan, &n, in, out, arena)) {
			CHECK(0, "%s at N=%lld: %s", name, (long long)n, c.msg);
		} else {
			for (int64_t r = 0; r < R; r++)
				for (int64_t k = 0; k < C; k++) {
					double want = 0;
					for (int64_t b = 0; b < n; b++) {
						float v = x[(b * R + r) * C + k];
						if (ref == 0)
							want += v > 0 ? v : 0;
						else if (ref == 1)
							bad += fabs(y[(r * n + b) * C + k] - v) > 0;
					}
					if (ref == 0)
						bad += fabs(y[r * C + k] - want) > 1e-4 * (1 + fabs(want));
					else if (ref == 2)
						bad += y[r * C + k] != x[r * C + k];
				}
			CHECK(bad == 0, "%s at N=%lld: %lld mismatches", name, (long long)n,
			      (long long)bad);
			printf("sampled %s N=%lld: %lld mismatches\n", name, (long long)n,
			       (long long)bad);
		}
		free(arena);
		free(x);
		free(y);
	}
	burn_compiled_destroy(m);
}

int
main(int argc, char **argv)
{
	static const int64_t sizes[] = { 1, 3, 17 };
	const char *burncc, *dir, *work;
	char path[2048], cmd[8192];
	const char *dyn[1] = { "N" };
	Compiled *m[2] = { NULL, NULL };

	if (argc != 4) {
		fprintf(stderr, "usage: dyn_test BURNCC DIR WORK\n");
		return 2;
	}
	burncc = argv[1];
	dir = argv[2];
	work = argv[3];
	snprintf(path, sizeof path, "%s/batch/model.onnx", dir);

	/* the interpreter: compiled once fused, once one kernel per node */
	for (int v = 0; v < 2; v++) {
		CompileOpts o = { 0 };
		Ctx c;
		burn_ctx_init(&c, NULL);
		o.no_fuse = v;
		o.ndyn = 1;
		o.dyn = dyn;
		if (burn_compile_file(&c, path, &o, &m[v])) {
			printf("FAIL: compile%s: %s\n", v ? " --no-fuse" : "", c.msg);
			return 1;
		}
		CHECK(m[v]->plan.ndims == 1 && !strcmp(m[v]->plan.dims[0], "N"),
		      "the plan's dims are not [N]");
		for (int k = 0; k < m[v]->prog.nkernel; k++)
			CHECK(m[v]->prog.kernel[k]->ndim == 1, "kernel %s has no dim parameter",
			      m[v]->prog.kernel[k]->name);
	}

	/* the C: compiled once by burncc and once by cc */
	snprintf(cmd, sizeof cmd, "'%s' --dynamic-dim N -o '%s/bm.c' '%s'", burncc,
	         work, path);
	if (system(cmd) != 0 || write_driver(work)) {
		printf("FAIL: %s\n", cmd);
		return 1;
	}
	snprintf(cmd, sizeof cmd, "cc -std=c11 -O1 -Wall -Wextra -Werror -o '%s/drv' "
	         "'%s/main.c' '%s/bm.c' -lm", work, work, work);
	if (system(cmd) != 0) {
		printf("FAIL: %s\n", cmd);
		return 1;
	}

	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
		int64_t n = sizes[s], bad;
		float *x = malloc(sizeof(float) * (size_t)(n * R * C)), z[C];
		if (!x)
			return 1;
		fill(x, n * R * C, 12345u + (uint32_t)n);
		fill(z, C, 99u);
		for (int v = 0; v < 2; v++) {
			bad = run_interp(m[v], n, n, x, z);
			CHECK(bad == 0, "interpreter%s at N=%lld: %lld elements differ",
			      v ? " --no-fuse" : "", (long long)n, (long long)bad);
			printf("interpreter%s N=%lld: %lld mismatches\n", v ? " --no-fuse" : "",
			       (long long)n, (long long)bad);
		}
		bad = run_c(work, n, n, x, z);
		CHECK(bad == 0, "C at N=%lld: %lld elements differ", (long long)n,
		      (long long)bad);
		printf("C N=%lld: %lld mismatches\n", (long long)n, (long long)bad);
		/* the comparison bites: the dim one short leaves the last item */
		if (n > 1) {
			bad = run_interp(m[0], n, n - 1, x, z);
			CHECK(bad == R * C + R + C, "interpreter with dim N-1 at N=%lld: "
			      "%lld mismatches, not the last item's %d", (long long)n,
			      (long long)bad, R * C + R + C);
			bad = run_c(work, n, n - 1, x, z);
			CHECK(bad == R * C + R + C, "C with dim N-1 at N=%lld: %lld "
			      "mismatches, not the last item's %d", (long long)n,
			      (long long)bad, R * C + R + C);
		}
		free(x);
	}
	burn_compiled_destroy(m[0]);
	burn_compiled_destroy(m[1]);

	/* what the mode does not support is refused, by node, op and reason */
	{
		static const char *const nodim[] = { "no input", "M", NULL };
		static const char *const gpu[] = { "ReduceSum", "--dim N=VALUE", NULL };
		static const char *const rs[] = { "fold_batch", "Reshape", "fixes axis 0", NULL };
		static const char *const cc[] = { "twice", "Concat", "along the batch", NULL };
		refused(dir, "reshape_fixed", "N", NULL, rs);
		refused(dir, "concat_batch", "N", NULL, cc);
		refused(dir, "batch", "M", NULL, nodim);
		refused(dir, "reduce_batch", "N", &target_cuda, gpu);
	}
	/* the peeled form compiles for cuda (its items as blocks along y) */
	{
		char path[2048];
		const char *d[1] = { "N" };
		CompileOpts o = { 0 };
		Compiled *mc = NULL;
		Ctx c;
		snprintf(path, sizeof path, "%s/batch/model.onnx", dir);
		o.ndyn = 1;
		o.dyn = d;
		o.target = &target_cuda;
		burn_ctx_init(&c, NULL);
		CHECK(burn_compile_file(&c, path, &o, &mc) == BURN_OK, "batch for cuda with "
		      "--dynamic-dim N: %s", c.msg);
		burn_compiled_destroy(mc);
	}
	/* what the peeling refuses, sampling takes where it can */
	sampled(dir, "reduce_batch", 0, 0);
	sampled(dir, "transpose", 1, 0);
	sampled(dir, "gather_batch", 2, 1);
	printf(failures ? "dynamic dims: %d failures\n" : "dynamic dims: ok\n", failures);
	return failures != 0;
}

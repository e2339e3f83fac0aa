/*
 * models_jit.c - one ONNX model imported into a .burn script and run
 * through libburn's JIT, timed like bench/model_bench.c times the same
 * model compiled to C, on the same inputs (floats sin(i)/2, integers 0).
 *
 * The script it runs (the model's inputs written to raw files first):
 *
 *     import "MODEL.onnx" as m;
 *     let x0 = load_raw("in0.bin", [dims], dtype=f32); ...
 *     fn step() { m(x0, ...) }
 *
 * and then, once per inference, step() through dsl_vm_call (no parsing
 * per call) and a sync: the call records the model's nodes
 * (burn_call_graph_kept; the weights made into tensors at the first call
 * and kept by the import, constants of the program), the sync realises
 * them (the program found in the context's cache after the first call).
 * Prints "NAME median best count" (ms per inference, over at least 1 s
 * of runs), model_bench's format.  One thread unless BURN_THREADS says.
 *
 * Usage: models_jit MODEL.onnx [NAME [SECONDS]]   (bench/models_jit.sh)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "api/dsl.h"
#include "frontend/onnx.h"

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static const char *
dsl_dtype(int dt)
{
	switch (dt) {
	case DT_F32: return "f32";
	case DT_I32: return "i32";
	case DT_I64: return "i64";
	case DT_BOOL: return "bool";
	case DT_F64: return "f64";
	}
	return NULL;
}

/* The inputs of g (those that are not initialisers) as raw files in dir,
 * and the script's lines that load them, appended to s. */
static int
write_inputs(const Graph *g, const char *dir, char *s, size_t cap, int *nin)
{
	size_t n = strlen(s);

	*nin = 0;
	for (int i = 0; i < g->nin; i++) {
		const Value *v = GV(g, g->in[i]);
		char path[512];
		int64_t numel = 1;
		FILE *f;
		if (v->data)
			continue;
		if (!dsl_dtype(v->dtype) || v->rank < 0) {
			fprintf(stderr, "models_jit: input %s: dtype %d\n", v->name, v->dtype);
			return 1;
		}
		for (int d = 0; d < v->rank; d++) {
			if (v->sym[d] || v->dim[d] < 0) {
				fprintf(stderr, "models_jit: input %s has a symbolic dim\n", v->name);
				return 1;
			}
			numel *= v->dim[d];
		}
		snprintf(path, sizeof path, "%s/in%d.bin", dir, *nin);
		if (!(f = fopen(path, "wb")))
			return 1;
		for (int64_t k = 0; k < numel; k++) {
			float x = v->dtype == DT_F32 ? (float)(sin((double)k) / 2) : 0;
			double d = v->dtype == DT_F64 ? sin((double)k) / 2 : 0;
			int64_t z = 0;
			unsigned char b = 0;
			size_t w = v->dtype == DT_F32 ? fwrite(&x, 4, 1, f) :
			           v->dtype == DT_F64 ? fwrite(&d, 8, 1, f) :
			           v->dtype == DT_BOOL ? fwrite(&b, 1, 1, f) :
			           fwrite(&z, dtype_size(v->dtype), 1, f);
			if (w != 1) {
				fclose(f);
				return 1;
			}
		}
		fclose(f);
		n += (size_t)snprintf(s + n, cap - n, "let x%d = load_raw(\"%s\", [", *nin, path);
		for (int d = 0; d < v->rank && n < cap; d++)
			n += (size_t)snprintf(s + n, cap - n, "%s%lld", d ? ", " : "",
			                      (long long)v->dim[d]);
		if (n < cap)
			n += (size_t)snprintf(s + n, cap - n, "], dtype=%s);\n", dsl_dtype(v->dtype));
		(*nin)++;
	}
	return n >= cap;
}

int
main(int argc, char **argv)
{
	static double t[100000];
	static char script[65536];
	char dir[] = "/tmp/models_jit.XXXXXX";
	burn_options o = { .threads = 0, .cache_dir = "" };
	burn_ctx *bc;
	DslVm *vm;
	Graph *g = NULL;
	Ctx c;
	int nin, n = 0;
	size_t len;
	double start, secs = argc > 3 ? atof(argv[3]) : 1.0;

	if (argc < 2) {
		fprintf(stderr, "usage: models_jit MODEL.onnx [NAME [SECONDS]]\n");
		return 2;
	}
	burn_ctx_init(&c, argv[1]);
	if (onnx_load_file(&c, argv[1], &g)) {
		fprintf(stderr, "models_jit: %s\n", c.msg);
		return 1;
	}
	if (!mkdtemp(dir))
		return 1;
	snprintf(script, sizeof script, "import \"%s\" as m;\n", argv[1]);
	if (write_inputs(g, dir, script, sizeof script, &nin))
		return 1;
	graph_destroy(g);
	len = strlen(script);
	len += (size_t)snprintf(script + len, sizeof script - len, "fn step() { m(");
	for (int i = 0; i < nin; i++)
		len += (size_t)snprintf(script + len, sizeof script - len, "%sx%d",
		                        i ? ", " : "", i);
	snprintf(script + len, sizeof script - len, ") }\n");
	if (burn_ctx_create(&o, &bc) || !(vm = dsl_vm_create(bc, stdout, 1)))
		return 1;
	if (dsl_vm_run(vm, "models_jit", script, strlen(script), 0) ||
	    dsl_vm_call(vm, "step")) {   /* warm up: compiles */
		fprintf(stderr, "models_jit: %s\n", dsl_vm_message(vm));
		return 1;
	}
	start = now();
	while (n < 100000 && (now() - start < secs || n < 10)) {
		double t0 = now();
		if (dsl_vm_call(vm, "step")) {
			fprintf(stderr, "models_jit: %s\n", dsl_vm_message(vm));
			return 1;
		}
		t[n++] = now() - t0;
	}
	qsort(t, (size_t)n, sizeof *t, cmp);
	printf("%s %.4f %.4f %d\n", argc > 2 ? argv[2] : "model", t[n / 2] * 1e3,
	       t[0] * 1e3, n);
	{
		burn_stats st;
		burn_get_stats(bc, &st);
		fprintf(stderr, "%s: %lld compile(s), %lld cache hit(s), %lld kernels "
		        "per call\n", argc > 2 ? argv[2] : "model", (long long)st.compiles,
		        (long long)st.mem_hits, (long long)st.last_kernels);
	}
	dsl_vm_destroy(vm);
	burn_ctx_destroy(bc);
	for (int i = 0; i < nin; i++) {
		char path[512];
		snprintf(path, sizeof path, "%s/in%d.bin", dir, i);
		unlink(path);
	}
	rmdir(dir);
	return 0;
}

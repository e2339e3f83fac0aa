/*
 * cuda_runtime.c - the cuda target's runtime in eager-like use: models of
 * different shapes run one after another through the backend, as a
 * script changing shapes would, many steps.
 *
 *   cuda_runtime SRCDIR [STEPS [release]]
 *
 * Checks, on a machine with a CUDA driver and GPU:
 *  - every run's outputs match the case's reference (tests/fusion);
 *  - the caching allocator: after the first round (one run of each
 *    model), no step asks the driver for memory (cuMemAlloc counted);
 *  - the modules: after the first round no module is compiled (each run
 *    reuses its model's module, kept loaded by cuda_module_load).
 * Prints the figures.  Exit 0 when all hold, 1 when one does not, 77 when
 * there is no driver or GPU ("did not run", never a pass).  With
 * `release` the pool's cache is given back to the driver after every step
 * (cuda_pool_release): the seeded bug the allocator check must catch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "tools/compile.h"
#include "frontend/onnx.h"
#include "codegen/target_iface.h"
#include "targets/cuda/cuda_dev.h"

#define MAXIO 4

static const char *const cases[] = {
	"softmax_wide", "layernorm_wide", "gelu_composed", "conv_bn_relu_add",
	"matmul_bias_gelu_tanh", "mean_variance", "rmsnorm_composed",
};
#define NCASE ((int)(sizeof cases / sizeof cases[0]))

typedef struct Case {
	Compiled *m;
	Tensor in[MAXIO], want[MAXIO];
	void *out[MAXIO];
	int nin, nout;
} Case;

static int
load_case(Ctx *c, Arena *a, const char *src, const Backend *be, Case *k, const char *name)
{
	char path[1024];
	CompileOpts co = { 0 };

	co.target = be->target;
	snprintf(path, sizeof path, "%s/tests/fusion/%s/model.onnx", src, name);
	if (burn_compile_file(c, path, &co, &k->m))
		return -1;
	k->nin = k->m->g->nin;
	k->nout = k->m->g->nout;
	if (k->nin > MAXIO || k->nout > MAXIO)
		return burn_fail(c, BURN_ERR_INVALID, "%s: too many inputs or outputs", name), -1;
	for (int i = 0; i < k->nin; i++) {
		snprintf(path, sizeof path, "%s/tests/fusion/%s/test_data_set_0/input_%d.pb",
		         src, name, i);
		if (onnx_load_tensor_file(c, path, a, &k->in[i], NULL))
			return -1;
	}
	for (int i = 0; i < k->nout; i++) {
		snprintf(path, sizeof path, "%s/tests/fusion/%s/test_data_set_0/output_%d.pb",
		         src, name, i);
		if (onnx_load_tensor_file(c, path, a, &k->want[i], NULL))
			return -1;
		if (!(k->out[i] = calloc(1, (size_t)k->want[i].nbytes + 1)))
			return -1;
	}
	return 0;
}

/* f32 outputs within the fusion tests' tolerance */
static int
same(const Tensor *want, const void *got, const char *name, int step)
{
	const float *w = want->data, *g = got;

	if (want->dtype != DT_F32)
		return memcmp(want->data, got, (size_t)want->nbytes) == 0;
	for (int64_t i = 0; i < want->nbytes / 4; i++)
		if (!(fabsf(g[i] - w[i]) <= 1e-5f + 1e-3f * fabsf(w[i]))) {
			printf("FAIL %s step %d: [%lld] %g, expected %g\n", name, step, (long long)i,
			       g[i], w[i]);
			return 0;
		}
	return 1;
}

int
main(int argc, char **argv)
{
	const Backend *be = backend_find("cuda");
	int steps = argc > 2 ? atoi(argv[2]) : 70, bad = 0;
	int release = argc > 3 && !strcmp(argv[3], "release");
	int64_t allocs0 = 0, hits0 = 0, held0 = 0, allocs, hits, held;
	CudaModStats s0 = { 0 }, s;
	Case k[NCASE];
	CudaDev *d;
	Arena a;
	Ctx c;

	if (argc < 2 || steps < 2 * NCASE) {
		fprintf(stderr, "usage: cuda_runtime SRCDIR [STEPS >= %d [release]]\n", 2 * NCASE);
		return 2;
	}
	burn_ctx_init(&c, "cuda_runtime");
	if (!be || !be->run)
		return printf("cuda_runtime: did not run: no cuda backend in this build\n"), 77;
	if (cuda_open(&c, &d)) {
		printf("cuda_runtime: did not run: %s\n", c.msg);
		return 77;
	}
	printf("device: %s\n", cuda_describe(d));
	arena_init(&a);
	memset(k, 0, sizeof k);
	for (int i = 0; i < NCASE; i++)
		if (load_case(&c, &a, argv[1], be, &k[i], cases[i])) {
			printf("FAIL %s: %s\n", cases[i], c.msg);
			return 1;
		}
	for (int step = 0; step < steps; step++) {
		Case *x = &k[step % NCASE];
		const void *in[MAXIO];
		for (int i = 0; i < x->nin; i++)
			in[i] = x->in[i].data;
		if (be->run(&c, x->m, in, x->out, NULL)) {
			printf("FAIL %s step %d: %s\n", cases[step % NCASE], step, c.msg);
			return 1;
		}
		for (int i = 0; i < x->nout; i++)
			bad += !same(&x->want[i], x->out[i], cases[step % NCASE], step);
		if (release)
			cuda_pool_release(d);
		if (step == NCASE - 1) {   /* the warm-up round */
			cuda_pool_stats(d, &allocs0, &hits0, &held0);
			cuda_module_stats(d, &s0);
		}
	}
	cuda_pool_stats(d, &allocs, &hits, &held);
	cuda_module_stats(d, &s);
	printf("steps: %d over %d models (%d warm-up)\n", steps, NCASE, NCASE);
	printf("driver allocations: %lld in the warm-up, %lld after it (pool hits %lld after; "
	       "%lld bytes held)\n", (long long)allocs0, (long long)(allocs - allocs0),
	       (long long)(hits - hits0), (long long)held);
	printf("modules: %lld compiled in the warm-up (%.2f ms each, the driver's JIT with "
	       "its disk cache); %lld compiled, %lld reused after; %lld kept loaded\n",
	       (long long)s0.loaded, s0.loaded ? s0.load_ms / (double)s0.loaded : 0.0,
	       (long long)(s.loaded - s0.loaded), (long long)(s.reused - s0.reused),
	       (long long)s.kept);
	if (allocs != allocs0) {
		printf("FAIL: the pool asked the driver for memory after the warm-up\n");
		bad++;
	}
	if (s.loaded != s0.loaded || s.reused - s0.reused != steps - NCASE) {
		printf("FAIL: modules compiled after the warm-up\n");
		bad++;
	}
	for (int i = 0; i < NCASE; i++) {
		for (int j = 0; j < k[i].nout; j++)
			free(k[i].out[j]);
		burn_compiled_destroy(k[i].m);
	}
	arena_free(&a);
	printf("%s\n", bad ? "FAIL" : "PASS");
	return bad ? 1 : 0;
}

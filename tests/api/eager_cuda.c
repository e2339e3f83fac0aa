/*
 * eager_cuda.c - libburn's eager API with burn_options.device =
 * BURN_DEVICE_CUDA against the same calls on the CPU (ctest eager_cuda):
 * a pointwise chain (fused into one kernel), a MatMul with a bias, a
 * softmax over rows and a sum, recorded the same way in two contexts;
 * every result within 1e-5 (relative, or absolute near 0) of the CPU's.
 * Three rounds, so the second and third reuse the compiled programs
 * (counted: no compile after the first round).  Exit 77 when the first
 * sync says there is no CUDA driver or GPU: CI has none.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "burn.h"

enum { M = 96, K = 200, N = 72, E = 1 << 16 };

static int
check(burn_status rc, burn_ctx *ctx, const char *what)
{
	if (rc) {
		fprintf(stderr, "%s: status %d: %s\n", what, rc, burn_message(ctx));
		exit(rc == BURN_STATUS_UNSUPPORTED && strstr(burn_message(ctx), "cuda") ? 77 : 1);
	}
	return 0;
}

/* The results of one round, read back: chain (E), mm (M*N), sm (M*N),
 * total (1). */
static void
round_(burn_ctx *ctx, uint64_t seed, float *out)
{
	int64_t de[1] = { E }, da[2] = { M, K }, db[2] = { K, N }, dc[1] = { N }, ax[1] = { 1 };
	burn_tensor *x, *t1, *t2, *t3, *a, *b, *c, *ab, *mm, *sm, *tot;

	check(burn_rand(ctx, BURN_F32, 1, de, -4, 4, seed, &x), ctx, "rand");
	check(burn_mul_scalar(ctx, x, 0.5, &t1), ctx, "mul");
	check(burn_unary(ctx, "Tanh", t1, &t2), ctx, "tanh");
	check(burn_add(ctx, t2, x, &t3), ctx, "add");
	check(burn_randn(ctx, BURN_F32, 2, da, 0, 1, seed + 1, &a), ctx, "randn");
	check(burn_randn(ctx, BURN_F32, 2, db, 0, 1, seed + 2, &b), ctx, "randn");
	check(burn_randn(ctx, BURN_F32, 1, dc, 0, 1, seed + 3, &c), ctx, "randn");
	check(burn_matmul(ctx, a, b, &ab), ctx, "matmul");
	check(burn_add(ctx, ab, c, &mm), ctx, "bias");
	check(burn_softmax(ctx, mm, 1, &sm), ctx, "softmax");
	check(burn_sum(ctx, sm, 1, ax, 0, &tot), ctx, "sum");
	check(burn_read(ctx, t3, out, E * sizeof *out), ctx, "read chain");
	check(burn_read(ctx, mm, out + E, M * N * sizeof *out), ctx, "read mm");
	check(burn_read(ctx, sm, out + E + M * N, M * N * sizeof *out), ctx, "read softmax");
	check(burn_read(ctx, tot, out + E + 2 * M * N, M * sizeof *out), ctx, "read sum");
	burn_release(x); burn_release(t1); burn_release(t2); burn_release(t3);
	burn_release(a); burn_release(b); burn_release(c); burn_release(ab);
	burn_release(mm); burn_release(sm); burn_release(tot);
}

int
main(void)
{
	burn_options oc = { 0 }, og = { 0 };
	burn_ctx *cpu, *gpu;
	size_t n = E + 2 * M * N + M;
	float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
	burn_stats st;
	int bad = 0;

	og.device = BURN_DEVICE_CUDA;
	if (!a || !b || burn_ctx_create(&oc, &cpu) || burn_ctx_create(&og, &gpu))
		return 1;
	for (int r = 0; r < 3; r++) {
		size_t worst = 0;
		double wd = 0;
		round_(gpu, 7 + (uint64_t)r, b);
		round_(cpu, 7 + (uint64_t)r, a);
		for (size_t i = 0; i < n; i++) {
			double d = fabs((double)a[i] - b[i]) / fmax(1.0, fabs((double)a[i]));
			if (!(d <= 1e-5) && !bad++)
				fprintf(stderr, "round %d, element %zu: cuda %.9g, cpu %.9g\n", r, i,
				        (double)b[i], (double)a[i]);
			if (d > wd) {
				wd = d;
				worst = i;
			}
		}
		printf("round %d: largest difference %.3g (element %zu)\n", r, wd, worst);
		if (r == 0)
			burn_get_stats(gpu, &st);
	}
	{
		int64_t first = st.compiles;
		burn_get_stats(gpu, &st);
		if (st.compiles != first) {
			fprintf(stderr, "rounds 2 and 3 compiled %lld programs again\n",
			        (long long)(st.compiles - first));
			bad++;
		}
		printf("cuda context: %lld compiles, %lld syncs, %lld kernels run\n",
		       (long long)st.compiles, (long long)st.syncs, (long long)st.kernels_run);
	}
	burn_ctx_destroy(cpu);
	burn_ctx_destroy(gpu);
	free(a);
	free(b);
	if (bad)
		fprintf(stderr, "%d elements differ\n", bad);
	return bad ? 1 : 0;
}

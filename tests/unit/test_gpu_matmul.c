/*
 * test_gpu_matmul.c - the gpu target's MatMul and Gemm template
 * (passes/ops_linalg.c, gemm_gpu): blocks of 4 subgroups, A and B staged in
 * shared memory (cp.async where the shapes allow it, else plain loads with
 * zero padding), matrix-tile ops, run by the interpreter with GPU
 * semantics (races, barriers, lockstep subgroups) and compared with a
 * reference computed here.  Values are multiples of 1/8, so f32 sums are
 * exact and the results must match bit for bit.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "node_harness.h"
#include "targets/target.h"

static float
val(int64_t i, int salt)
{
	return (float)((i * (7 + salt) + salt) % 9 - 4) / 8.0f;
}

static float *
matrix(int64_t n, int salt)
{
	float *x = malloc((size_t)n * sizeof *x);

	cr_assert(x);
	for (int64_t i = 0; i < n; i++)
		x[i] = val(i, salt);
	return x;
}

/* Y[b] = A[b or 0] (M x K) x B[b or 0] (K x N) in double. */
static void
ref_mm(int64_t nb, int64_t M, int64_t K, int64_t N, const float *a, int abat,
       const float *b, int bbat, double *y)
{
	for (int64_t q = 0; q < nb; q++)
		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < N; j++) {
				double s = 0;
				for (int64_t k = 0; k < K; k++)
					s += (double)a[(abat ? q * M * K : 0) + i * K + k] *
					     b[(bbat ? q * K * N : 0) + k * N + j];
				y[(q * M + i) * N + j] = s;
			}
}

static void
mm_case(int64_t M, int64_t K, int64_t N, int want_async)
{
	T t;
	float *a = matrix(M * K, 1), *b = matrix(K * N, 2), *y = calloc((size_t)(M * N), 4);
	double *r = malloc((size_t)(M * N) * sizeof *r);

	cr_assert(y && r);
	t_init(&t, 17);
	t.target = &target_gpu;
	t_input(&t, DT_F32, 2, I64S(M, K), a);
	t_input(&t, DT_F32, 2, I64S(K, N), b);
	t_node(&t, "MatMul", 1);
	cr_assert_eq(t_run1(&t, y), 1);
	cr_assert_gt(t.ntmma, 0, "%lldx%lldx%lld: no tile op", (long long)M,
	             (long long)K, (long long)N);
	cr_assert_eq(t.ncpasync > 0, want_async, "cpasync");
	ref_mm(1, M, K, N, a, 0, b, 0, r);
	for (int64_t i = 0; i < M * N; i++)
		cr_assert_eq(y[i], (float)r[i], "y[%lld] = %g, want %g", (long long)i,
		             y[i], r[i]);
	t_fini(&t);
	free(a);
	free(b);
	free(y);
	free(r);
}

Test(gpu_matmul, whole_tiles_with_async_copies)
{
	mm_case(64, 32, 64, 1);
}

Test(gpu_matmul, ragged_edges_with_plain_loads)
{
	mm_case(33, 20, 45, 0);
	mm_case(1, 7, 3, 0);
	mm_case(17, 1, 9, 0);
}

Test(gpu_matmul, batched_with_broadcast)
{
	T t;
	int64_t M = 20, K = 16, N = 24;
	float *a = matrix(3 * M * K, 3), *b = matrix(K * N, 4), *y = calloc(3 * 20 * 24, 4);
	double r[3 * 20 * 24];

	t_init(&t, 17);
	t.target = &target_gpu;
	t_input(&t, DT_F32, 3, I64S(3, M, K), a);
	t_input(&t, DT_F32, 3, I64S(1, K, N), b);
	t_node(&t, "MatMul", 1);
	cr_assert_eq(t_run1(&t, y), 1);
	cr_assert_gt(t.ntmma, 0);
	ref_mm(3, M, K, N, a, 1, b, 0, r);
	for (int64_t i = 0; i < 3 * M * N; i++)
		cr_assert_eq(y[i], (float)r[i], "y[%lld]", (long long)i);
	t_fini(&t);
	free(a);
	free(b);
	free(y);
}

static uint16_t
to_h(float x)   /* exact for the multiples of 1/8 used here */
{
	uint32_t u;

	memcpy(&u, &x, 4);
	if (!(u & 0x7fffffff))
		return (uint16_t)(u >> 16);
	return (uint16_t)(((u >> 16) & 0x8000) | ((((u >> 23) & 0xff) - 112) << 10) |
	                  ((u >> 13) & 0x3ff));
}

static float
from_h(uint16_t h)   /* normal numbers and zero */
{
	uint32_t u = (uint32_t)(h & 0x8000) << 16;
	float f;

	if (h & 0x7fff)
		u |= ((uint32_t)(((h >> 10) & 0x1f) + 112) << 23) | (uint32_t)(h & 0x3ff) << 13;
	memcpy(&f, &u, 4);
	return f;
}

Test(gpu_matmul, f16_inputs_use_the_f16_tile)
{
	T t;
	int64_t M = 32, K = 32, N = 64;
	float *a = matrix(M * K, 5), *b = matrix(K * N, 6);
	uint16_t ah[32 * 32], bh[32 * 64], yh[32 * 64];
	double r[32 * 64];

	for (int i = 0; i < M * K; i++)
		ah[i] = to_h(a[i]);
	for (int i = 0; i < K * N; i++)
		bh[i] = to_h(b[i]);
	t_init(&t, 17);
	t.target = &target_gpu;
	t_input(&t, DT_F16, 2, I64S(M, K), ah);
	t_input(&t, DT_F16, 2, I64S(K, N), bh);
	t_node(&t, "MatMul", 1);
	cr_assert_eq(t_run1(&t, yh), 1);
	cr_assert_gt(t.ntmma, 0);
	cr_assert_gt(t.ncpasync, 0);
	ref_mm(1, M, K, N, a, 0, b, 0, r);
	for (int64_t i = 0; i < M * N; i++)
		cr_assert(fabs(from_h(yh[i]) - r[i]) <= 1e-3 * fabs(r[i]) + 1e-3,
		          "y[%lld] = %g, want %g", (long long)i, from_h(yh[i]), r[i]);
	t_fini(&t);
	free(a);
	free(b);
}

Test(gpu_matmul, gemm_transposed_with_bias)
{
	T t;
	int64_t M = 19, K = 24, N = 40;
	float *a = matrix(K * M, 7), *b = matrix(N * K, 8), *c = matrix(N, 9);
	float *y = calloc((size_t)(M * N), 4);

	t_init(&t, 13);
	t.target = &target_gpu;
	t_input(&t, DT_F32, 2, I64S(K, M), a);
	t_input(&t, DT_F32, 2, I64S(N, K), b);
	t_input(&t, DT_F32, 1, I64S(N), c);
	t_node(&t, "Gemm", 1);
	t_attr_i(&t, "transA", 1);
	t_attr_i(&t, "transB", 1);
	cr_assert_eq(t_run1(&t, y), 1);
	cr_assert_gt(t.ntmma, 0);
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			double s = 0;
			for (int64_t k = 0; k < K; k++)
				s += (double)a[k * M + i] * b[j * K + k];
			s += c[j];
			cr_assert_eq(y[i * N + j], (float)s, "y[%lld, %lld]", (long long)i,
			             (long long)j);
		}
	t_fini(&t);
	free(a);
	free(b);
	free(c);
	free(y);
}

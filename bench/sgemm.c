/*
 * sgemm.c - SGEMM 1024x1024x1024 (f32, one thread): burncc's generated C
 * for bench/sgemm/model.onnx (linked as prefix "model") against OpenBLAS's
 * cblas_sgemm, interleaved in one process on the same operands.  Prints
 * the best and median time of each and GFLOP/s (2*M*N*K per run), and the
 * largest difference between the two results.
 *   sgemm [ROUNDS]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 1024

int model_run(const float *A, const float *B, float *Y, void *arena);
/* OpenBLAS's CBLAS entry (declared here: no header needed) */
void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha,
                 const float *a, int lda, const float *b, int ldb, float beta,
                 float *c, int ldc);
enum { RowMajor = 101, NoTrans = 111 };

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	float *A = aligned_alloc(64, sizeof(float) * N * N);
	float *B = aligned_alloc(64, sizeof(float) * N * N);
	float *Y = aligned_alloc(64, sizeof(float) * N * N);
	float *R = aligned_alloc(64, sizeof(float) * N * N);
	void *arena = aligned_alloc(64, ((ARENA + 63) / 64) * 64 + 64);
	double *tb = calloc((size_t)rounds, sizeof *tb), *to = calloc((size_t)rounds, sizeof *to);
	double flop = 2.0 * N * N * N, diff = 0;

	if (!A || !B || !Y || !R || !arena || !tb || !to)
		return 1;
	for (int64_t i = 0; i < (int64_t)N * N; i++) {
		A[i] = (float)(sin((double)i) / 2);
		B[i] = (float)(cos((double)i * 0.7) / 2);
	}
	model_run(A, B, Y, arena);      /* warm up both */
	cblas_sgemm(RowMajor, NoTrans, NoTrans, N, N, N, 1, A, N, B, N, 0, R, N);
	for (int r = 0; r < rounds; r++) {
		double t0 = now();
		model_run(A, B, Y, arena);
		tb[r] = now() - t0;
		t0 = now();
		cblas_sgemm(RowMajor, NoTrans, NoTrans, N, N, N, 1, A, N, B, N, 0, R, N);
		to[r] = now() - t0;
	}
	for (int64_t i = 0; i < (int64_t)N * N; i++)
		diff = fmax(diff, fabs((double)Y[i] - R[i]));
	qsort(tb, (size_t)rounds, sizeof *tb, cmp);
	qsort(to, (size_t)rounds, sizeof *to, cmp);
	printf("%-9s %9s %9s %9s\n", "", "best ms", "median ms", "GFLOP/s");
	printf("%-9s %9.3f %9.3f %9.1f\n", "burncc", tb[0] * 1e3, tb[rounds / 2] * 1e3,
	       flop / tb[0] * 1e-9);
	printf("%-9s %9.3f %9.3f %9.1f\n", "openblas", to[0] * 1e3, to[rounds / 2] * 1e3,
	       flop / to[0] * 1e-9);
	printf("burncc / openblas (best): %.1f%%   max |diff| %.2e\n", 100 * to[0] / tb[0], diff);
	return diff > 1e-2;
}

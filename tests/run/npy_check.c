/*
 * npy_check.c - the checker of tests/run/run.sh.
 *
 *   npy_check GOT.npy EXPECTED.pb   compare an output `burncc run` wrote
 *                                   with ONNX Runtime's: same dtype and
 *                                   shape; floats within burncc check's
 *                                   tolerance (|a - b| <= 1e-5 + 1e-3 |b|),
 *                                   integers exact.  Prints the shape as
 *                                   "d0,d1,..." on success; exit 1 and a
 *                                   reason on a mismatch.
 *   npy_check --pb2npy IN.pb OUT.npy  an input .pb as .npy (so the .npy
 *                                   reader is tested without NumPy)
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "frontend/npy.h"
#include "frontend/onnx.h"

static double elem(const Tensor *t, int64_t i)
{
	switch (t->dtype) {
	case DT_F32: return ((const float *)t->data)[i];
	case DT_F64: return ((const double *)t->data)[i];
	case DT_I64: return (double)((const int64_t *)t->data)[i];
	case DT_I32: return ((const int32_t *)t->data)[i];
	case DT_U8: case DT_BOOL: return ((const uint8_t *)t->data)[i];
	case DT_I8: return ((const int8_t *)t->data)[i];
	}
	return NAN;
}

int main(int argc, char **argv)
{
	Tensor g, e;
	Arena a;
	Ctx c;
	int64_t numel = 1, bad = 0;

	arena_init(&a);
	burn_ctx_init(&c, NULL);
	if (argc == 4 && !strcmp(argv[1], "--pb2npy")) {
		if (onnx_load_tensor_file(&c, argv[2], &a, &e, NULL) ||
		    npy_save_file(&c, argv[3], e.dtype, e.rank, e.dim, e.data)) {
			fprintf(stderr, "npy_check: %s\n", c.msg);
			return 1;
		}
		arena_free(&a);
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: npy_check GOT.npy EXPECTED.pb | --pb2npy IN.pb OUT.npy\n");
		return 2;
	}
	if (npy_load_file(&c, argv[1], &a, &g) || onnx_load_tensor_file(&c, argv[2], &a, &e, NULL)) {
		fprintf(stderr, "npy_check: %s\n", c.msg);
		return 1;
	}
	if (g.dtype != e.dtype || g.rank != e.rank ||
	    memcmp(g.dim, e.dim, sizeof(int64_t) * (size_t)e.rank)) {
		fprintf(stderr, "npy_check: %s: dtype or shape differs from %s\n", argv[1], argv[2]);
		return 1;
	}
	for (int i = 0; i < e.rank; i++)
		numel *= e.dim[i];
	for (int64_t i = 0; i < numel; i++) {
		double x = elem(&g, i), y = elem(&e, i);
		int ok = dtype_is_float(e.dtype) ? fabs(x - y) <= 1e-5 + 1e-3 * fabs(y) : x == y;
		if (!ok && bad++ == 0)
			fprintf(stderr, "npy_check: %s: element %lld is %.9g, expected %.9g\n",
			        argv[1], (long long)i, x, y);
	}
	if (bad) {
		fprintf(stderr, "npy_check: %lld of %lld elements differ\n", (long long)bad,
		        (long long)numel);
		return 1;
	}
	for (int i = 0; i < e.rank; i++)
		printf("%s%lld", i ? "," : "", (long long)e.dim[i]);
	printf("\n");
	arena_free(&a);
	return 0;
}

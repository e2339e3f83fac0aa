/*
 * pbraw.c - an ONNX TensorProto (.pb, as in test_data_set_N/) as its raw
 * little-endian elements, for the browser test (tests/wasm/run.sh), whose
 * page reads them into a typed array of the tensor's dtype.
 *
 *   pbraw IN.pb OUT.bin     prints "DTYPE NBYTES" (ONNX's dtype code)
 */
#include <stdio.h>
#include "frontend/onnx.h"

int
main(int argc, char **argv)
{
	Ctx c;
	Arena a;
	Tensor t;
	FILE *f;
	int rc = 0;

	if (argc != 3)
		return fprintf(stderr, "usage: pbraw IN.pb OUT.bin\n"), 2;
	burn_ctx_init(&c, NULL);
	arena_init(&a);
	if (onnx_load_tensor_file(&c, argv[1], &a, &t, NULL)) {
		fprintf(stderr, "pbraw: %s\n", c.msg);
		rc = 1;
	} else if (!(f = fopen(argv[2], "wb")) ||
	           fwrite(t.data, 1, (size_t)t.nbytes, f) != (size_t)t.nbytes ||
	           fclose(f)) {
		fprintf(stderr, "pbraw: cannot write %s\n", argv[2]);
		rc = 1;
	} else {
		printf("%d %lld\n", t.dtype, (long long)t.nbytes);
	}
	arena_free(&a);
	return rc;
}

/*
 * ir_seeds.c - seed corpus for fuzz_ir_text: compiles each ONNX model named
 * on the command line and writes its graph IR after the passes, in full
 * (ir_print with no elision, so it parses back), to OUTDIR/<n>.ir.
 *
 *   ir_seeds OUTDIR MODEL.onnx...
 *
 * Models that do not compile or whose text exceeds 256 KiB are skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include "tools/compile.h"

int main(int argc, char **argv)
{
	int wrote = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: ir_seeds OUTDIR MODEL.onnx...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		char path[4096];
		Compiled *m;
		FILE *f;
		Ctx c;
		long n;

		burn_ctx_init(&c, argv[i]);
		if (burn_compile_file(&c, argv[i], NULL, &m))
			continue;
		snprintf(path, sizeof path, "%s/%d.ir", argv[1], wrote);
		if (!(f = fopen(path, "w"))) {
			burn_compiled_destroy(m);
			perror(path);
			return 1;
		}
		ir_print(f, m->g, -1);
		n = ftell(f);
		fclose(f);
		burn_compiled_destroy(m);
		if (n > 256 * 1024)
			remove(path);
		else
			wrote++;
	}
	printf("ir_seeds: %d seeds in %s\n", wrote, argv[1]);
	return 0;
}

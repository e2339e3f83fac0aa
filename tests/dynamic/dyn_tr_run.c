/*
 * dyn_tr_run.c - transformer.py's runner for targets that run in process
 * (llvm): compiles MODEL once with batch and seq dynamic, then runs it at
 * each (batch, seq) given, through Backend.run_dims.
 *
 *	dyn_tr_run TARGET MODEL D  B S X.bin Y.bin  [B S X.bin Y.bin ...]
 *
 * x and y are f32 [B, S, D].  Also checks that a negative dim is refused
 * with a message naming it.  Exit 1 on any error, 77 when the target is
 * not built in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "codegen/target_iface.h"
#include "tools/compile.h"

int
main(int argc, char **argv)
{
	static const char *const dyn[2] = { "batch", "seq" };
	const Backend *be;
	CompileOpts o = { 0 };
	Compiled *m = NULL;
	Ctx c;
	int64_t d;

	if (argc < 4 || (argc - 4) % 4)
		return 2;
	if (!(be = backend_find(argv[1])) || !be->run_dims) {
		printf("SKIP: target %s not built in or not run in process (did not run)\n",
		       argv[1]);
		return 77;
	}
	d = atoll(argv[3]);
	o.target = be->target;
	o.ndyn = 2;
	o.dyn = dyn;
	burn_ctx_init(&c, NULL);
	if (burn_compile_file(&c, argv[2], &o, &m)) {
		printf("compile: %s\n", c.msg);
		return 1;
	}
	for (int a = 4; a < argc; a += 4) {
		int64_t b = atoll(argv[a]), s = atoll(argv[a + 1]), n = b * s * d;
		int64_t dims[2];
		float *x = malloc(sizeof *x * (size_t)(n + 1));
		float *y = malloc(sizeof *y * (size_t)(n + 1));
		const void *in[1] = { x };
		void *out[1] = { y };
		FILE *f;
		/* the plan's dims in the order the inputs name them */
		for (int i = 0; i < m->plan.ndims; i++)
			dims[i] = !strcmp(m->plan.dims[i], "batch") ? b : s;
		if (!x || !y || !(f = fopen(argv[a + 2], "rb")) ||
		    fread(x, sizeof *x, (size_t)n, f) != (size_t)n)
			return 2;
		fclose(f);
		burn_ctx_init(&c, NULL);
		if (be->run_dims(&c, m, dims, in, out, NULL)) {
			printf("run at (%lld, %lld): %s\n", (long long)b, (long long)s, c.msg);
			return 1;
		}
		if (!(f = fopen(argv[a + 3], "wb")) ||
		    fwrite(y, sizeof *y, (size_t)n, f) != (size_t)n)
			return 2;
		fclose(f);
		free(x);
		free(y);
	}
	{   /* a dim out of range is refused, by name */
		int64_t bad[2] = { -1, -1 };
		burn_ctx_init(&c, NULL);
		if (!be->run_dims(&c, m, bad, (const void *const[]){ NULL },
		                  (void *const[]){ NULL }, NULL) ||
		    !strstr(c.msg, "dim '")) {
			printf("dims (-1, -1) not refused by name: %s\n", c.msg);
			return 1;
		}
	}
	burn_compiled_destroy(m);
	return 0;
}

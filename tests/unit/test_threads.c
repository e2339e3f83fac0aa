/*
 * test_threads.c - the generated run function is reentrant: one compiled
 * model run from 8 threads at once, each with its own arena, gives outputs
 * bit-identical to a single-threaded run, and ThreadSanitizer reports
 * nothing.  The model is compiled in-process (burn_compile_file +
 * emit_c_module) into a temporary folder, built with the system compiler
 * ($CC, default cc) and -fsanitize=thread together with the driver below,
 * and run.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "tools/compile.h"
#include "codegen/c/emit_c.h"

/* The threaded driver: inputs are filled from an LCG, a single-threaded
 * run gives the reference, then NTHREAD threads each run the model ITERS
 * times with their own arena and outputs and compare every result with the
 * reference byte for byte.  Exit 0 when all match. */
static const char driver[] =
"#include <pthread.h>\n"
"#include <stdint.h>\n"
"#include <stdio.h>\n"
"#include <stdlib.h>\n"
"#include <string.h>\n"
"#include \"model.h\"\n"
"#define NTHREAD 8\n"
"#define ITERS 20\n"
"static const void *in[MODEL_NUM_INPUTS ? MODEL_NUM_INPUTS : 1];\n"
"static void *ref[MODEL_NUM_OUTPUTS ? MODEL_NUM_OUTPUTS : 1];\n"
"static void *run_new(void **out) {\n"
"  void *arena = aligned_alloc(MODEL_ARENA_ALIGN, (MODEL_ARENA_BYTES + MODEL_ARENA_ALIGN - 1)\n"
"                              / MODEL_ARENA_ALIGN * MODEL_ARENA_ALIGN + MODEL_ARENA_ALIGN);\n"
"  for (int k = 0; k < MODEL_NUM_OUTPUTS; k++) out[k] = calloc(1, model_outputs[k].bytes + 1);\n"
"  return arena;\n"
"}\n"
"static void *worker(void *arg) {\n"
"  void *out[MODEL_NUM_OUTPUTS ? MODEL_NUM_OUTPUTS : 1];\n"
"  void *arena = run_new(out);\n"
"  long bad = 0;\n"
"  for (int it = 0; it < ITERS; it++) {\n"
"    for (int k = 0; k < MODEL_NUM_OUTPUTS; k++) memset(out[k], 0xA5, model_outputs[k].bytes);\n"
"    if (model_run_v(in, (void *const *)out, arena) != MODEL_OK) bad++;\n"
"    for (int k = 0; k < MODEL_NUM_OUTPUTS; k++)\n"
"      if (memcmp(out[k], ref[k], model_outputs[k].bytes)) bad++;\n"
"  }\n"
"  for (int k = 0; k < MODEL_NUM_OUTPUTS; k++) free(out[k]);\n"
"  free(arena);\n"
"  return (void *)bad;\n"
"}\n"
"int main(void) {\n"
"  pthread_t t[NTHREAD];\n"
"  uint32_t s = 12345;\n"
"  long bad = 0;\n"
"  void *arena;\n"
"  for (int k = 0; k < MODEL_NUM_INPUTS; k++) {\n"
"    int64_t n = model_inputs[k].bytes;\n"
"    unsigned char *p = malloc(n + 1);\n"
"    if (model_inputs[k].dtype == 1)\n"
"      for (int64_t i = 0; i < n / 4; i++) {\n"
"        float f; s = s * 1664525u + 1013904223u;\n"
"        f = (float)((s >> 8) / 16777216.0 * 2 - 1); memcpy(p + 4 * i, &f, 4);\n"
"      }\n"
"    else\n"
"      for (int64_t i = 0; i < n; i++) { s = s * 1664525u + 1013904223u; p[i] = (s >> 24) & 1; }\n"
"    in[k] = p;\n"
"  }\n"
"  arena = run_new(ref);\n"
"  if (model_run_v(in, (void *const *)ref, arena) != MODEL_OK) return 2;\n"
"  free(arena);\n"
"  for (int i = 0; i < NTHREAD; i++)\n"
"    if (pthread_create(&t[i], NULL, worker, NULL)) return 3;\n"
"  for (int i = 0; i < NTHREAD; i++) {\n"
"    void *r; pthread_join(t[i], &r); bad += (long)r;\n"
"  }\n"
"  printf(\"%d threads x %d runs: %ld mismatches\\n\", NTHREAD, ITERS, bad);\n"
"  return bad != 0;\n"
"}\n";

/* Write s to dir/name. */
static void write_file(const char *dir, const char *name, const char *s)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	cr_assert_not_null(f = fopen(path, "w"), "cannot write %s", path);
	fputs(s, f);
	cr_assert_eq(fclose(f), 0);
}

/* Compile model (relative to the source tree) to dir/model.{c,h}. */
static void compile_model(const char *model, const char *dir)
{
	char cpath[512], hpath[512];
	EmitC o = { "model", "model.h", model };
	Compiled *m;
	FILE *fc, *fh;
	Ctx c;

	burn_ctx_init(&c, model);
	cr_assert_eq(burn_compile_file(&c, model, NULL, &m), BURN_OK, "%s", c.msg);
	snprintf(cpath, sizeof cpath, "%s/model.c", dir);
	snprintf(hpath, sizeof hpath, "%s/model.h", dir);
	cr_assert_not_null(fc = fopen(cpath, "w"));
	cr_assert_not_null(fh = fopen(hpath, "w"));
	cr_assert_eq(emit_c_module(&c, m->g, &m->prog, &m->plan, &o, fc, fh), BURN_OK,
	             "%s", c.msg);
	fclose(fc);
	fclose(fh);
	burn_compiled_destroy(m);
}

/* Build the model with the driver under TSan and run it; return its exit
 * status (66: TSan found something). */
static int run_threaded(const char *model)
{
	char dir[] = "/tmp/burn_threads_XXXXXX", cmd[2048];
	const char *cc = getenv("CC");
	int rc;

	cr_assert_not_null(mkdtemp(dir));
	compile_model(model, dir);
	write_file(dir, "driver.c", driver);
	snprintf(cmd, sizeof cmd,
	         "cd %s && %s -std=c99 -D_POSIX_C_SOURCE=200809L -D_ISOC11_SOURCE -O1 -g "
	         "-fsanitize=thread driver.c model.c -o run -lm -lpthread "
	         ">build.log 2>&1 || { cat build.log; exit 99; }; "
	         "TSAN_OPTIONS='halt_on_error=1 exitcode=66' ASAN_OPTIONS= ./run",
	         dir, cc && *cc ? cc : "cc");
	rc = system(cmd);
	rc = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
	if (rc == 0) {
		snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
		system(cmd);
	}
	return rc;
}

Test(threads, lenet_8_threads_tsan, .timeout = 600)
{
	int rc = run_threaded(BURN_SOURCE_DIR "/../shared/models/lenet/model.onnx");
	cr_assert_eq(rc, 0, "threaded lenet run failed (exit %d; 66 = TSan report, "
	             "1 = outputs differ, 99 = build failed)", rc);
}

Test(threads, mlp_8_threads_tsan, .timeout = 600)
{
	int rc = run_threaded(BURN_SOURCE_DIR "/../shared/models/mlp/model.onnx");
	cr_assert_eq(rc, 0, "threaded mlp run failed (exit %d; 66 = TSan report, "
	             "1 = outputs differ, 99 = build failed)", rc);
}

/*
 * test_render_depth.c - the C renderer bounds expression nesting: a deep
 * expression gets named temporaries, and under a select's arm they are
 * guarded by the arm's condition, so a load the select keeps from running
 * still does not run.  The kernel reads b0[i] and b0[i - 4] for i in 0..8
 * from a 4-element buffer, each only where the select allows it; the
 * rendered C is built with cc and AddressSanitizer and run, so an
 * unguarded hoist is an out-of-bounds read that fails the test; and with
 * clang (clang-19, else clang), whose bracket limit is 256.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ir/kir.h"
#include "codegen/c/render_c.h"

#define CHAIN 300   /* steps of x * 0.5 + 0.25: 600 nodes deep */

static KRef
chain(KB *kb, KRef x, double add)
{
	for (int s = 0; s < CHAIN; s++)
		x = kb_bin(kb, KO_ADD, kb_bin(kb, KO_MUL, x, kb_const_f(kb, DT_F32, 0.5)),
		           kb_const_f(kb, DT_F32, add));
	return x;
}

/* b1[i] = i < 4 ? chain(b0[i]) : i < 6 ? chain'(b0[i - 4]) : 2 */
static KKernel *
deep_kernel(KProgram *p)
{
	KB kb;
	int in, out, i;
	KRef iv, a, b;

	kb_begin(&kb, p, "deep", "Deep");
	in = kb_buf_value(&kb, 0, DT_F32, 4, KA_READ);
	out = kb_buf_value(&kb, 1, DT_F32, 8, KA_WRITE);
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, 8), 0);
	iv = kb_get(&kb, i);
	a = chain(&kb, kb_load(&kb, in, iv), 0.25);
	b = chain(&kb, kb_load(&kb, in, kb_bin(&kb, KO_SUB, iv, kb_idx(&kb, 4))), 0.125);
	kb_store(&kb, out, iv,
	         kb_select(&kb, kb_bin(&kb, KO_LT, iv, kb_idx(&kb, 4)), a,
	                   kb_select(&kb, kb_bin(&kb, KO_LT, iv, kb_idx(&kb, 6)), b,
	                             kb_const_f(&kb, DT_F32, 2.0))));
	kb_end(&kb);
	return kb_finish(&kb);
}

static const char driver[] =
"#include <stdio.h>\n#include <stdlib.h>\n"
"static float step(float x, int n, float add)\n"
"{\n\tvolatile float v = x;\n\twhile (n--)\n\t\tv = v * 0.5f + add;\n\treturn v;\n}\n"
"int main(void)\n{\n"
"\tfloat *in = malloc(4 * sizeof *in), out[8];\n"
"\tint i, bad = 0;\n"
"\tfor (i = 0; i < 4; i++)\n\t\tin[i] = (float)i - 1.5f;\n"
"\tdeep(in, out);\n"
"\tfor (i = 0; i < 8; i++) {\n"
"\t\tfloat want = i < 4 ? step(in[i], %d, 0.25f) : i < 6 ? step(in[i - 4], %d, 0.125f) : 2.0f;\n"
"\t\tif (out[i] - want > 1e-5f || want - out[i] > 1e-5f) {\n"
"\t\t\tprintf(\"out[%%d] = %%g, want %%g\\n\", i, out[i], want);\n"
"\t\t\tbad = 1;\n\t\t}\n\t}\n"
"\tfree(in);\n\treturn bad;\n}\n";

/* Deepest nesting of (), [] and {} in the file at path. */
static int
bracket_depth(const char *path)
{
	FILE *f = fopen(path, "r");
	int ch, d = 0, most = 0;

	cr_assert_not_null(f);
	while ((ch = fgetc(f)) != EOF) {
		if (ch == '(' || ch == '[' || ch == '{')
			most = ++d > most ? d : most;
		else if (ch == ')' || ch == ']' || ch == '}')
			d--;
	}
	fclose(f);
	return most;
}

static int
has(const char *cmd)
{
	char buf[128];

	snprintf(buf, sizeof buf, "command -v %s >/dev/null 2>&1", cmd);
	return system(buf) == 0;
}

Test(render_depth, guarded_hoists_under_select)
{
	Arena a;
	Ctx c;
	KProgram p;
	KKernel *k;
	char dir[] = "/tmp/burn_test_depth_XXXXXX", path[128], cmd[512];
	const char *ccs[] = { "cc", "clang-19", "clang" };
	FILE *f;
	int built = 0, ok = 1, depth;

	arena_init(&a);
	burn_ctx_init(&c, "test");
	kprog_init(&p, &a);
	k = deep_kernel(&p);
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/k.c", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	render_c_prelude(f);
	cr_assert_eq(render_c_kernel(&c, k, f), BURN_OK, "%s", c.msg);
	fprintf(f, driver, CHAIN, CHAIN);
	fclose(f);
	/* about 300 brackets deep unbounded; the renderer keeps it far below */
	depth = bracket_depth(path);
	ok &= depth < 120;
	cr_expect_lt(depth, 120, "brackets nest %d deep in %s", depth, path);
	/* cc with AddressSanitizer at -O0 (an optimiser may sink an unguarded
	 * load back under the select); a clang (its runtime may be missing) plain,
	 * for its 256-bracket limit */
	for (size_t i = 0; i < sizeof ccs / sizeof *ccs; i++) {
		int rc;
		if (!has(ccs[i]) || (i == 2 && built > 1))
			continue;
		snprintf(cmd, sizeof cmd, "cd %s && %s -std=c99 %s -Wall -Wextra -Werror "
		         "k.c -o k -lm >cc.log 2>&1 && ASAN_OPTIONS=detect_leaks=0 ./k >run.log 2>&1",
		         dir, ccs[i], i ? "-O1" : "-O0 -fsanitize=address -fno-omit-frame-pointer");
		rc = system(cmd);
		ok &= rc == 0;
		cr_expect_eq(rc, 0, "%s: build or run failed (see %s/cc.log, run.log)",
		             ccs[i], dir);
		built++;
	}
	cr_expect_gt(built, 0, "no C compiler found");
	if (ok) {   /* keep the files of a failure */
		snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
		if (system(cmd)) {
		}
	}
	arena_free(&a);
}

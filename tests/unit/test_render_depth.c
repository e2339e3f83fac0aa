/*
 * test_render_depth.c - the C renderer bounds expression nesting: a deep
 * expression gets named temporaries, and on the guarded side of a guarded
 * load they are guarded by the load's guard, so a load the guard keeps
 * from running still does not run.  The kernel reads b0[b1[i]] for i in
 * 0..8 from 4-element buffers, only where i < 4, through an index 600
 * nodes deep; the rendered C is built with cc and AddressSanitizer and
 * run, so an unguarded hoist is an out-of-bounds read that fails the
 * test; and with clang (clang-19, else clang), whose bracket limit is 256.
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

/* x ^ c ^ c, CHAIN times: x again, 600 nodes deep */
static KRef
ichain(KB *kb, KRef x)
{
	for (int s = 0; s < CHAIN; s++) {
		x = kb_bin(kb, KO_BXOR, x, kb_idx(kb, s % 2 ? 5 : 6));
		x = kb_bin(kb, KO_BXOR, x, kb_idx(kb, s % 2 ? 5 : 6));
	}
	return x;
}

/* b2[i] = i < 4 ? chain(b0[ichain(b1[i])]) : 2, the load guarded by
 * i < 4 (b1[i] is out of bounds where it does not hold) */
static KKernel *
deep_kernel(KProgram *p)
{
	KB kb;
	int in, ix, out, i;
	KRef iv, g, v;

	kb_begin(&kb, p, "deep", "Deep");
	in = kb_buf_value(&kb, 0, DT_F32, 4, KA_READ);
	ix = kb_buf_value(&kb, 1, DT_I64, 4, KA_READ);
	out = kb_buf_value(&kb, 2, DT_F32, 8, KA_WRITE);
	i = kb_for(&kb, "i", kb_idx(&kb, 0), kb_idx(&kb, 8), 0);
	iv = kb_get(&kb, i);
	g = kb_bin(&kb, KO_LT, iv, kb_idx(&kb, 4));
	v = kb_load_guard(&kb, in, ichain(&kb, kb_load(&kb, ix, iv)), g,
	                  kb_const_f(&kb, DT_F32, 0.0));
	kb_store(&kb, out, iv, kb_select(&kb, g, chain(&kb, v, 0.25),
	                                 kb_const_f(&kb, DT_F32, 2.0)));
	kb_end(&kb);
	return kb_finish(&kb);
}

static const char driver[] =
"#include <stdio.h>\n#include <stdlib.h>\n"
"static float step(float x, int n, float add)\n"
"{\n\tvolatile float v = x;\n\twhile (n--)\n\t\tv = v * 0.5f + add;\n\treturn v;\n}\n"
"int main(void)\n{\n"
"\tfloat *in = malloc(4 * sizeof *in), out[8];\n"
"\tlong long *ix = malloc(4 * sizeof *ix);\n"
"\tint i, bad = 0;\n"
"\tfor (i = 0; i < 4; i++) {\n\t\tin[i] = (float)i - 1.5f;\n\t\tix[i] = 3 - i;\n\t}\n"
"\tdeep(in, (void *)ix, out);\n"
"\tfor (i = 0; i < 8; i++) {\n"
"\t\tfloat want = i < 4 ? step(in[ix[i]], %d, 0.25f) : 2.0f;\n"
"\t\tif (out[i] - want > 1e-5f || want - out[i] > 1e-5f) {\n"
"\t\t\tprintf(\"out[%%d] = %%g, want %%g\\n\", i, out[i], want);\n"
"\t\t\tbad = 1;\n\t\t}\n\t}\n"
"\tfree(in);\n\tfree(ix);\n\treturn bad;\n}\n";

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

Test(render_depth, guarded_hoists_under_a_guarded_load)
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
	fprintf(f, driver, CHAIN);
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

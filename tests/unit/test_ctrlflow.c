/*
 * test_ctrlflow.c - control flow through the passes (passes/ctrlflow.c):
 * a run-time If's branches guarded in the launch list and skipped by the
 * interpreter's walker, an unrolled Loop that leaves no control node, and
 * sequences bound to tensor inputs and flattened into tensor outputs.
 * The models are tests/malformed/control_flow's (make_cases.py).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../../frontend/onnx.h"
#include "../../passes/passes.h"

#define CASES BURN_SOURCE_DIR "/tests/malformed/control_flow/"

static Compiled *compile(const char *path)
{
	Ctx c;
	Graph *g;
	Compiled *m;

	burn_ctx_init(&c, path);
	cr_assert_eq(onnx_load_file(&c, path, &g), BURN_OK, "%s", c.msg);
	cr_assert_eq(burn_compile_graph(&c, g, NULL, &m), BURN_OK, "%s", c.msg);
	return m;
}

/* x (2x3) and w (3x4) as make_cases.py makes them */
static void xw(float *x, float *w)
{
	for (int i = 0; i < 6; i++)
		x[i] = (float)i - 2.5f;
	for (int i = 0; i < 12; i++)
		w[i] = ((float)i - 5) / 7;
}

/* y = cond ? x @ w : relu(-x @ w); the else branch (Neg, MatMul) is
 * guarded, the then branch's MatMul fused with the select is not */
Test(ctrlflow, if_guards_skip_untaken_branch)
{
	Compiled *m = compile(CASES "if_guarded_true/model.onnx");
	float x[6], w[12], y[8];
	int nguard = 0;

	xw(x, w);
	for (int k = 0; k < m->plan.nkernels; k++) {
		const Launch *l = &m->plan.launch[k];
		if (!l->guard)
			continue;
		nguard++;
		cr_expect_eq(l->guard_neg, 1, "kernel %s: guarded by the then "
		             "branch", m->prog.kernel[k]->name);
		cr_expect_eq(l->guard->kind, LK_INPUT);
	}
	cr_assert_eq(nguard, 2, "%d guarded launches", nguard);
	for (int cond = 0; cond < 2; cond++) {
		unsigned char cv = (unsigned char)cond;
		const void *in[2] = { x, &cv };
		void *out[1] = { y };
		void *arena = aligned_alloc(BURN_ARENA_ALIGN,
		                            (size_t)(m->plan.arena_bytes + 64) / 64 * 64);
		LaunchMem mem = { in, out, arena, m->plan.arena_bytes };
		int skipped = 0;
		Ctx c;

		burn_ctx_init(&c, NULL);
		for (int k = 0; k < m->plan.nkernels; k++) {
			int skip;
			cr_assert_eq(launch_skip(&c, m->g, &m->plan, &m->plan.launch[k],
			                         NULL, &mem, &skip), BURN_OK, "%s", c.msg);
			skipped += skip;
		}
		cr_expect_eq(skipped, cond ? 2 : 0, "cond %d: %d launches skipped",
		             cond, skipped);
		cr_assert_eq(plan_run_interp(&c, m->g, &m->prog, &m->plan, NULL, in,
		                             out, arena), BURN_OK, "%s", c.msg);
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 4; j++) {
				double s = 0;
				for (int k = 0; k < 3; k++)
					s += (double)x[i * 3 + k] * w[k * 4 + j];
				double want = cond ? s : (-s > 0 ? -s : 0);
				cr_expect(fabs(y[i * 4 + j] - want) < 1e-5,
				          "cond %d y[%d][%d] = %g, want %g", cond, i, j,
				          y[i * 4 + j], want);
			}
		free(arena);
	}
	burn_compiled_destroy(m);
}

/* Loop M=3: y = y*w + x, ys[t] = relu(y): unrolled, no control node left,
 * one multiply-add kernel per iteration reading the carried value */
Test(ctrlflow, loop_unrolled_reads_carried_value)
{
	Compiled *m = compile(CASES "loop_carried/model.onnx");
	float x[6], w[6], yv[6], y[6], ys[18];
	const void *in[1] = { x };
	void *out[2] = { y, ys };
	void *arena = aligned_alloc(BURN_ARENA_ALIGN,
	                            (size_t)(m->plan.arena_bytes + 64) / 64 * 64);
	int fused = 0;
	Ctx c;

	for (int i = 0; i < m->g->nnode; i++)
		cr_expect_neq(op_table[m->g->node[i].op].cls, OC_CONTROL, "node %s",
		              m->g->node[i].name);
	for (int k = 0; k < m->prog.nkernel; k++)
		fused += strstr(m->prog.kernel[k]->ops, "Mul(") &&
		         strstr(m->prog.kernel[k]->ops, "Add(");
	cr_expect_eq(fused, 3, "%d fused Mul+Add kernels", fused);
	for (int i = 0; i < 6; i++) {
		x[i] = (float)i - 2.5f;
		w[i] = ((float)i - 1) / 4;
		yv[i] = x[i];
	}
	burn_ctx_init(&c, NULL);
	cr_assert_eq(plan_run_interp(&c, m->g, &m->prog, &m->plan, NULL, in, out,
	                             arena), BURN_OK, "%s", c.msg);
	for (int t = 0; t < 3; t++)
		for (int i = 0; i < 6; i++) {
			yv[i] = yv[i] * w[i] + x[i];
			cr_expect(fabsf(ys[t * 6 + i] - (yv[i] > 0 ? yv[i] : 0)) < 1e-5,
			          "ys[%d][%d] = %g", t, i, ys[t * 6 + i]);
		}
	for (int i = 0; i < 6; i++)
		cr_expect(fabsf(y[i] - yv[i]) < 1e-5, "y[%d] = %g, want %g", i, y[i], yv[i]);
	free(arena);
	burn_compiled_destroy(m);
}

/* Sequences (passes/ops_seq.c): seq_loop's sequence input q bound to two
 * tensors becomes the inputs q/0 and q/1 after x; the Loop's list, the
 * Concat and the split leave no sequence node; the sequence output parts
 * becomes parts/0 and parts/1 between cat and last.  Unbound, q is refused
 * naming it. */
Test(ctrlflow, sequences_bound_and_flattened)
{
	const char *path = CASES "seq_loop/model.onnx";
	static const char *const outs[] = { "cat", "parts/0", "parts/1", "last" };
	Tensor t[2] = { { DT_F32, 2, { 2, 3 }, NULL, 24 }, { DT_F32, 2, { 2, 3 }, NULL, 24 } };
	Ctx c;
	Graph *g;
	Compiled *m;

	burn_ctx_init(&c, path);
	cr_assert_eq(onnx_load_file(&c, path, &g), BURN_OK, "%s", c.msg);
	cr_assert_eq(GV(g, g->in[1])->decl, VD_SEQ);
	cr_expect_neq(burn_compile_graph(&c, g, NULL, &m), BURN_OK);
	cr_expect(strstr(c.msg, "input 'q' is a sequence") != NULL, "%s", c.msg);

	burn_ctx_init(&c, path);
	cr_assert_eq(onnx_load_file(&c, path, &g), BURN_OK, "%s", c.msg);
	cr_assert_eq(graph_bind_input(&c, g, 1, VD_SEQ, 2, t), BURN_OK, "%s", c.msg);
	cr_assert_eq(g->nin, 3);
	cr_expect_str_eq(GV(g, g->in[1])->name, "q/0");
	cr_expect_str_eq(GV(g, g->in[2])->name, "q/1");
	cr_assert_eq(burn_compile_graph(&c, g, NULL, &m), BURN_OK, "%s", c.msg);
	for (int i = 0; i < m->g->nnode; i++)
		cr_expect_neq(op_table[m->g->node[i].op].cls, OC_SEQ, "node %s",
		              m->g->node[i].name);
	cr_assert_eq(m->g->nout, 4);
	for (int k = 0; k < 4; k++)
		cr_expect_str_eq(GV(m->g, m->g->out[k])->name, outs[k]);
	cr_expect_eq(GV(m->g, m->g->out[1])->dim[1], 2);
	cr_expect_eq(GV(m->g, m->g->out[2])->dim[1], 1);
	burn_compiled_destroy(m);
}

/*
 * diff_interp.c - run a whole compiled model through the kernel-IR
 * interpreter, for the differential tests (tests/diff, docs/NUMERICS.md).
 *
 *	diff_interp [--no-fuse] [--target NAME | --backend NAME] MODEL.onnx INDIR OUTDIR
 *
 * reads INDIR/in0.bin, INDIR/in1.bin, ... (raw little-endian elements of each
 * graph input, in ONNX order), compiles the model exactly as `burncc` does
 * (fused, or one kernel per node with --no-fuse; for the target NAME, also
 * one that has no renderer yet, such as gpu), runs every kernel in
 * program order with kir_interp and writes OUTDIR/out0.bin, ... (raw outputs).
 *
 * Memory is one zeroed block per storage value (kprog_storage), not the
 * planner's arena: what this checks is the kernels' semantics, while the
 * generated C, run from the same kernels, checks the arena plan.  Prints a
 * one-line message and exits 1 on any failure.
 *
 * --backend NAME runs the model through that backend's in-process run
 * (codegen/target_iface.h: the llvm target's JIT) instead, compiled for
 * its description; a backend that is not built in (or cannot run in
 * process) exits 77.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/compile.h"
#include "targets/target.h"
#include "codegen/target_iface.h"

static void *slurp(const char *path, int64_t want);

/* The whole model through be->run, inputs from dir, outputs to odir. */
static int
run_backend(Ctx *c, const Backend *be, const Compiled *m, const char *dir,
            const char *odir)
{
	const Graph *g = m->g;
	void **in = calloc(g->nin + 1, sizeof *in), **out = calloc(g->nout + 1, sizeof *out);
	char p[1200];
	int rc = 1;

	if (!in || !out)
		goto out;
	for (int i = 0; i < g->nin; i++) {
		snprintf(p, sizeof p, "%s/in%d.bin", dir, i);
		if (!(in[i] = slurp(p, value_nbytes(GV(g, g->in[i]))))) {
			fprintf(stderr, "diff_interp: cannot read %s\n", p);
			goto out;
		}
	}
	for (int i = 0; i < g->nout; i++)
		if (!(out[i] = calloc(1, value_nbytes(GV(g, g->out[i])) + 16)))
			goto out;
	if (be->run(c, m, (const void *const *)in, out, NULL)) {
		fprintf(stderr, "diff_interp: %s: %s\n", be->name, c->msg);
		goto out;
	}
	for (int i = 0; i < g->nout; i++) {
		int64_t nb = value_nbytes(GV(g, g->out[i]));
		FILE *f;
		snprintf(p, sizeof p, "%s/out%d.bin", odir, i);
		f = fopen(p, "wb");
		if (!f || (nb && fwrite(out[i], 1, nb, f) != (size_t)nb)) {
			fprintf(stderr, "diff_interp: cannot write %s\n", p);
			if (f)
				fclose(f);
			goto out;
		}
		fclose(f);
	}
	rc = 0;
out:
	for (int i = 0; in && i < g->nin; i++)
		free(in[i]);
	for (int i = 0; out && i < g->nout; i++)
		free(out[i]);
	free(in);
	free(out);
	return rc;
}

static void *
slurp(const char *path, int64_t want)
{
	FILE *f = fopen(path, "rb");
	char *b = calloc(1, want + 16);
	int64_t n;

	if (!f || !b) {
		if (f)
			fclose(f);
		free(b);
		return NULL;
	}
	n = want ? (int64_t)fread(b, 1, want, f) : 0;
	if (n != want || fgetc(f) != EOF) {
		fclose(f);
		free(b);
		return NULL;
	}
	fclose(f);
	return b;
}

int
main(int argc, char **argv)
{
	CompileOpts o = { 0 };
	Compiled *m = NULL;
	Ctx c;
	const char *model, *dir, *odir;
	char p[1200];
	Graph *g;
	KProgram *pr;
	void **mem;
	int64_t *need;
	const Backend *be = NULL;
	int a = 1, rc = 1;

	for (;;) {
		if (argc > a && !strcmp(argv[a], "--no-fuse")) {
			o.no_fuse = 1;
			a++;
		} else if (argc > a + 1 && !strcmp(argv[a], "--target")) {
			if (!(o.target = target_find(argv[a + 1]))) {
				fprintf(stderr, "diff_interp: no target '%s'\n", argv[a + 1]);
				return 2;
			}
			a += 2;
		} else if (argc > a + 1 && !strcmp(argv[a], "--backend")) {
			if (!(be = backend_find(argv[a + 1])) || !be->run) {
				fprintf(stderr, "diff_interp: no in-process backend '%s'\n",
				        argv[a + 1]);
				return 77;
			}
			o.target = be->target;
			a += 2;
		} else {
			break;
		}
	}
	if (argc != a + 3) {
		fprintf(stderr, "usage: diff_interp [--no-fuse] [--target NAME | --backend NAME] MODEL.onnx INDIR OUTDIR\n");
		return 2;
	}
	model = argv[a];
	dir = argv[a + 1];
	odir = argv[a + 2];
	burn_ctx_init(&c, model);
	if (burn_compile_file(&c, model, &o, &m)) {
		fprintf(stderr, "diff_interp: %s\n", c.msg);
		return 1;
	}
	if (be) {
		rc = run_backend(&c, be, m, dir, odir);
		burn_compiled_destroy(m);
		return rc;
	}
	g = m->g;
	pr = &m->prog;
	mem = calloc(g->nval + 1, sizeof *mem);
	need = calloc(g->nval + 1, sizeof *need);
	if (!mem || !need)
		goto out;
	/* the size of each storage value: the largest value living in it */
	for (int v = 0; v < g->nval; v++) {
		int s = kprog_storage(pr, v);
		if (value_nbytes(GV(g, v)) > need[s])
			need[s] = value_nbytes(GV(g, v));
	}
	for (int i = 0; i < g->nin; i++) {
		int v = g->in[i], s = kprog_storage(pr, v);
		snprintf(p, sizeof p, "%s/in%d.bin", dir, i);
		if (!(mem[s] = slurp(p, value_nbytes(GV(g, v))))) {
			fprintf(stderr, "diff_interp: cannot read %s (%lld bytes)\n", p,
			        (long long)value_nbytes(GV(g, v)));
			goto out;
		}
	}
	for (int v = 0; v < g->nval; v++) {
		int s = kprog_storage(pr, v);
		if (mem[s])
			continue;
		if (!(mem[s] = calloc(1, need[s] + 16)))
			goto out;
		if (GV(g, s)->data)
			memcpy(mem[s], GV(g, s)->data, value_nbytes(GV(g, s)));
	}
	for (int k = 0; k < pr->nkernel; k++) {
		KKernel *kk = pr->kernel[k];
		void **bufs = calloc(kk->nbuf + 1, sizeof *bufs);
		int r;
		if (!bufs)
			goto out;
		for (int b = 0; b < kk->nbuf; b++)
			if (kk->buf[b].space == KS_GLOBAL && kk->buf[b].value >= 0)
				bufs[b] = mem[kprog_storage(pr, kk->buf[b].value)];
		r = kir_verify(&c, kk) || kir_interp(&c, kk, bufs);
		free(bufs);
		if (r) {
			fprintf(stderr, "diff_interp: kernel %s: %s\n", kk->name, c.msg);
			goto out;
		}
	}
	for (int i = 0; i < g->nout; i++) {
		int v = g->out[i];
		int64_t nb = value_nbytes(GV(g, v));
		FILE *f;
		snprintf(p, sizeof p, "%s/out%d.bin", odir, i);
		f = fopen(p, "wb");
		if (!f || (nb && fwrite(mem[kprog_storage(pr, v)], 1, nb, f) != (size_t)nb)) {
			fprintf(stderr, "diff_interp: cannot write %s\n", p);
			if (f)
				fclose(f);
			goto out;
		}
		fclose(f);
	}
	rc = 0;
out:
	if (mem)
		for (int v = 0; v < g->nval; v++)
			free(mem[v]);
	free(mem);
	free(need);
	burn_compiled_destroy(m);
	return rc;
}

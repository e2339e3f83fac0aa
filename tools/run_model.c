/*
 * run_model.c - `burncc run MODEL.onnx --input NAME=FILE ... [--output DIR]`.
 *
 * The model is loaded, every input read from its file (.npy, or an ONNX
 * TensorProto .pb as in test_data_set_N/) and checked against the model's
 * declared dtype and shape (a symbolic dim takes the file's value), the
 * graph compiled for those shapes and run once, and each output written as
 * DIR/NAME.npy, with a one-line summary of each on stdout.
 *
 * Running is check's: check_run_once (tools/check.h) runs in process for a
 * target that can (llvm, the default where burncc has LLVM: its kernels go
 * through the disk cache, so a second run of the same model compiles
 * nothing), else emits C, builds it with $CC and check's harness and runs
 * the binary (kept in the same cache: a second run builds nothing).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "passes/passes.h"
#include "frontend/onnx.h"
#include "frontend/npy.h"
#include "codegen/target_iface.h"
#include "runtime/cache.h"
#include "tools/check.h"
#include "tools/run_model.h"

static const char run_usage[] =
"usage: burncc run MODEL.onnx --input NAME=FILE... [options]\n"
"Run MODEL once.  Each graph input NAME is read from FILE: a NumPy .npy\n"
"(format 1.0-3.0, little-endian, C order) or an ONNX TensorProto .pb (as\n"
"in test_data_set_N/input_K.pb).  Each output is written as DIR/NAME.npy\n"
"(characters other than letters, digits, '.', '-' and '_' become '_')\n"
"and summarised on stdout.\n"
"  --input NAME=FILE  an input (repeatable; every graph input needs one)\n"
"  --input FILE     a .pb: the input its tensor is named after; a .npy:\n"
"                   the model's only input\n"
"  --output DIR     where the .npy outputs go (default: .; made if missing)\n"
"  --target NAME    llvm (in process, kernels cached on disk; the default\n"
"                   where burncc has LLVM) or c (generated C built with $CC\n"
"                   and run)\n"
"  --cache-dir DIR  the cache of compiled kernels (llvm) and binaries (c)\n"
"                   (default: burncc cache path)\n"
"  --quiet          no summary\n";

static int rm_one(const char *p, const struct stat *s, int flag, struct FTW *f)
{
	(void)s; (void)flag; (void)f;
	return remove(p);
}

int run_model_wanted(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		size_t n = strlen(argv[i]);
		if (argv[i][0] != '-' && n > 5 && !strcmp(argv[i] + n - 5, ".onnx"))
			return 1;
	}
	return 0;
}

/* "f32[1, 3, 224, 224]" (symbolic dims by name) into buf. */
static const char *type_str(int dt, int rank, const int64_t *dim, const char *const *sym,
                            char *buf, size_t n)
{
	size_t k = (size_t)snprintf(buf, n, "%s[", dtype_name(dt));
	for (int i = 0; i < rank && k < n; i++) {
		if (sym && sym[i])
			k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? ", " : "", sym[i]);
		else
			k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "",
			                      (long long)dim[i]);
	}
	if (k < n)
		snprintf(buf + k, n - k, "]");
	return buf;
}

/* The model's inputs, for messages: "x f32[1, 784], ..." */
static void list_inputs(const Graph *g, char *buf, size_t n)
{
	size_t k = 0;
	buf[0] = 0;
	for (int i = 0; i < g->nin && k < n; i++) {
		const Value *v = GV(g, g->in[i]);
		char t[160];
		k += (size_t)snprintf(buf + k, n - k, "%s%s %s", i ? ", " : "", v->name,
		                      type_str(v->dtype, v->rank, v->dim, v->sym, t, sizeof t));
	}
}

static int is_npy(const char *path)
{
	size_t n = strlen(path);
	FILE *f;
	char m[6];
	int yes;

	if (n > 4 && !strcmp(path + n - 4, ".npy"))
		return 1;
	if (n > 3 && !strcmp(path + n - 3, ".pb"))
		return 0;
	/* another name: by the magic */
	if (!(f = fopen(path, "rb")))
		return 0;
	yes = fread(m, 1, 6, f) == 6 && !memcmp(m, "\x93NUMPY", 6);
	fclose(f);
	return yes;
}

/* One summary line: NAME = tensor([v0, v1, ..., vN], shape=[...], dtype=T) */
static void summary(const char *name, const Value *v, const void *data, const char *path)
{
	int64_t numel = 1;
	int es = dtype_size(v->dtype);

	for (int i = 0; i < v->rank; i++)
		numel *= v->dim[i];
	printf("%s = tensor([", name);
	for (int64_t i = 0; i < numel; i++) {
		const char *p = (const char *)data + i * es;
		if (numel > 8 && i == 6) {
			printf(", ...");
			i = numel - 2;   /* then the last one */
			continue;
		}
		if (i)
			printf(", ");
		switch (v->dtype) {
		case DT_F32: { float x; memcpy(&x, p, 4); printf("%.4g", x); break; }
		case DT_F64: { double x; memcpy(&x, p, 8); printf("%.4g", x); break; }
		case DT_BOOL: printf("%s", *p ? "true" : "false"); break;
		case DT_I8: printf("%d", *(const int8_t *)p); break;
		case DT_U8: printf("%u", *(const uint8_t *)p); break;
		case DT_I16: { int16_t x; memcpy(&x, p, 2); printf("%d", x); break; }
		case DT_U16: { uint16_t x; memcpy(&x, p, 2); printf("%u", x); break; }
		case DT_I32: { int32_t x; memcpy(&x, p, 4); printf("%d", x); break; }
		case DT_U32: { uint32_t x; memcpy(&x, p, 4); printf("%u", x); break; }
		case DT_I64: { int64_t x; memcpy(&x, p, 8); printf("%lld", (long long)x); break; }
		case DT_U64: { uint64_t x; memcpy(&x, p, 8); printf("%llu", (unsigned long long)x); break; }
		default: printf("?");
		}
	}
	printf("], shape=[");
	for (int i = 0; i < v->rank; i++)
		printf("%s%lld", i ? ", " : "", (long long)v->dim[i]);
	printf("], dtype=%s) -> %s\n", dtype_name(v->dtype), path);
}

typedef struct RunIn {
	const char *name, *file;   /* from the command line (borrowed) */
	Tensor t;
	int used;                  /* t read already */
} RunIn;

static int fail(Ctx *c)
{
	fprintf(stderr, "burncc: run: %s\n", c->msg[0] ? c->msg : burn_code_name(c->code));
	return 1;
}

int run_model_main(int argc, char **argv)
{
	const char *model = NULL, *outdir = ".", *cache_dir = NULL;
	const Backend *be = backend_find("llvm");
	RunIn *ins = calloc((size_t)argc, sizeof *ins);
	DimBind *bind = NULL;
	const void **inp = NULL;
	void **outp = NULL;
	int nins = 0, nbind = 0, quiet = 0, rc = 1;
	char wd[512] = "", buf[2048], msg[1200];
	Graph *g = NULL;
	Compiled *m = NULL;
	Arena a;
	Ctx c;

	arena_init(&a);
	if (!be)
		be = backend_find("c");
	if (!ins) {
		fprintf(stderr, "burncc: run: out of memory\n");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
			fputs(run_usage, stdout);
			rc = 0;
			goto out;
		} else if (!strcmp(s, "--input") && i + 1 < argc) {
			char *eq = strchr(argv[++i], '=');
			if (!eq) {   /* FILE alone: named after the model is read */
				ins[nins++].file = argv[i];
				continue;
			}
			if (eq == argv[i] || !eq[1]) {
				fprintf(stderr, "burncc: run: --input takes NAME=FILE, not '%s'\n",
				        argv[i]);
				rc = 2;
				goto out;
			}
			*eq = 0;
			for (int k = 0; k < nins; k++)
				if (!strcmp(ins[k].name, argv[i])) {
					fprintf(stderr, "burncc: run: --input %s given twice\n", argv[i]);
					rc = 2;
					goto out;
				}
			ins[nins].name = argv[i];
			ins[nins++].file = eq + 1;
		} else if (!strcmp(s, "--output") && i + 1 < argc && *argv[i + 1]) {
			outdir = argv[++i];
		} else if (!strcmp(s, "--target") && i + 1 < argc) {
			if (!(be = backend_find(argv[++i])) || (strcmp(be->name, "c") &&
			                                        strcmp(be->name, "llvm"))) {
				fprintf(stderr, "burncc: run: --target takes c%s, not %s\n",
				        backend_find("llvm") ? " or llvm" : "", argv[i]);
				rc = 2;
				goto out;
			}
		} else if (!strcmp(s, "--cache-dir") && i + 1 < argc && *argv[i + 1]) {
			cache_dir = argv[++i];
		} else if (!strcmp(s, "--quiet")) {
			quiet = 1;
		} else if (s[0] == '-' || model) {
			fprintf(stderr, "burncc: run: %s '%s'\ntry 'burncc run --help'\n",
			        s[0] == '-' ? "unknown option or missing value" :
			        "more than one model", s);
			rc = 2;
			goto out;
		} else {
			model = s;
		}
	}
	if (!model) {
		fprintf(stderr, "burncc: run: no model given\ntry 'burncc run --help'\n");
		rc = 2;
		goto out;
	}
	burn_ctx_init(&c, model);
	if (onnx_load_file(&c, model, &g)) {
		rc = fail(&c);
		goto out;
	}
	list_inputs(g, buf, sizeof buf);
	/* --input FILE: a .pb names its tensor; else the model's only input */
	for (int k = 0; k < nins; k++) {
		const char *nm = NULL;
		if (ins[k].name)
			continue;
		burn_ctx_init(&c, ins[k].file);
		if (!is_npy(ins[k].file)) {
			if (onnx_load_tensor_file(&c, ins[k].file, &a, &ins[k].t, &nm)) {
				fprintf(stderr, "burncc: run: %s\n", c.msg);
				goto out;
			}
			ins[k].used = 1;   /* read already */
		} else if (g->nin == 1) {
			nm = GV(g, g->in[0])->name;
		}
		if (!nm || !*nm) {
			fprintf(stderr, "burncc: run: --input %s: give the input's name "
			        "(--input NAME=%s; %s's inputs: %s)\n", ins[k].file,
			        ins[k].file, model, buf);
			goto out;
		}
		ins[k].name = nm;
	}
	for (int k = 0; k < nins; k++)
		for (int j = 0; j < k; j++)
			if (!strcmp(ins[j].name, ins[k].name)) {
				fprintf(stderr, "burncc: run: two files for input '%s' (%s, %s)\n",
				        ins[k].name, ins[j].file, ins[k].file);
				goto out;
			}
	/* every --input names a graph input, every graph input has one */
	for (int k = 0; k < nins; k++) {
		int found = 0;
		for (int i = 0; i < g->nin; i++)
			found |= !strcmp(GV(g, g->in[i])->name, ins[k].name);
		if (!found) {
			fprintf(stderr, "burncc: run: %s has no input '%s' (its inputs: %s)\n",
			        model, ins[k].name, buf);
			goto out;
		}
	}
	msg[0] = 0;
	for (int i = 0; i < g->nin; i++) {
		const char *nm = GV(g, g->in[i])->name;
		int found = 0;
		for (int k = 0; k < nins; k++)
			found |= !strcmp(ins[k].name, nm);
		if (!found)
			snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "%s'%s'",
			         msg[0] ? ", " : "", nm);
	}
	if (msg[0]) {
		fprintf(stderr, "burncc: run: no --input NAME=FILE for %s (%s's inputs: %s)\n",
		        msg, model, buf);
		goto out;
	}
	/* read each file; check it against its input; bind symbolic dims */
	bind = calloc((size_t)g->nin * BURN_MAX_RANK + 1, sizeof *bind);
	if (!bind) {
		fprintf(stderr, "burncc: run: out of memory\n");
		goto out;
	}
	for (int i = 0; i < g->nin; i++) {
		const Value *v = GV(g, g->in[i]);
		RunIn *r = NULL;
		char want[160], got[160];
		int ok;
		for (int k = 0; k < nins; k++)
			if (!strcmp(ins[k].name, v->name))
				r = &ins[k];
		burn_ctx_init(&c, r->file);
		if (!r->used && (is_npy(r->file) ? npy_load_file(&c, r->file, &a, &r->t)
		                 : onnx_load_tensor_file(&c, r->file, &a, &r->t, NULL))) {
			fprintf(stderr, "burncc: run: input '%s': %s\n", v->name, c.msg);
			goto out;
		}
		ok = r->t.dtype == v->dtype && r->t.rank == v->rank;
		for (int d = 0; ok && d < v->rank; d++) {
			if (!v->sym[d]) {
				ok = v->dim[d] == r->t.dim[d];
				continue;
			}
			/* a symbolic dim: the first file that has it binds it */
			int b = 0;
			while (b < nbind && strcmp(bind[b].name, v->sym[d]))
				b++;
			if (b == nbind) {
				bind[nbind].name = v->sym[d];
				bind[nbind++].value = r->t.dim[d];
			}
			ok = bind[b].value == r->t.dim[d];
		}
		if (!ok) {
			fprintf(stderr, "burncc: run: input '%s' from %s: expected %s, got %s\n",
			        v->name, r->file,
			        type_str(v->dtype, v->rank, v->dim, v->sym, want, sizeof want),
			        type_str(r->t.dtype, r->t.rank, r->t.dim, NULL, got, sizeof got));
			goto out;
		}
	}
	/* the llvm target's kernels, the c target's binaries: through the
	 * disk cache (an unusable default directory means no cache; one named
	 * here is an error) */
	{
		BurnCache cc;
		burn_ctx_init(&c, NULL);
		if (burn_cache_open(&c, &cc, cache_dir ? cache_dir : "", 0)) {
			rc = fail(&c);
			goto out;
		}
		if (cc.fd >= 0 && !getenv("BURNCC_CACHE_DIR"))
			setenv("BURNCC_CACHE_DIR", cc.path, 1);
		if (cc.fd >= 0 && cache_dir)
			setenv("BURNCC_CACHE_DIR", cc.path, 1);
		burn_cache_close(&cc);
	}
	{
		CompileOpts co = { nbind, bind, 0, 0, be->target, 0, NULL, 0, NULL };
		burn_ctx_init(&c, model);
		rc = burn_compile_graph(&c, g, &co, &m);
		g = NULL;   /* taken, also on failure */
		if (rc) {
			rc = fail(&c);
			goto out;
		}
		rc = 1;
	}
	/* the compiled graph's inputs, by name (its order is the model's) */
	inp = calloc((size_t)m->g->nin + 1, sizeof *inp);
	outp = calloc((size_t)m->g->nout + 1, sizeof *outp);
	if (!inp || !outp) {
		fprintf(stderr, "burncc: run: out of memory\n");
		goto out;
	}
	for (int i = 0; i < m->g->nin; i++)
		for (int k = 0; k < nins; k++)
			if (!strcmp(ins[k].name, GV(m->g, m->g->in[i])->name))
				inp[i] = ins[k].t.data;
	for (int i = 0; i < m->g->nin; i++)
		if (!inp[i]) {
			fprintf(stderr, "burncc: run: compiled input '%s' is none of the "
			        "model's\n", GV(m->g, m->g->in[i])->name);
			goto out;
		}
	for (int i = 0; i < m->g->nout; i++) {
		int64_t nb = value_nbytes(GV(m->g, m->g->out[i]));
		if (nb < 0 || !(outp[i] = calloc((size_t)nb + 1, 1))) {
			fprintf(stderr, "burncc: run: cannot allocate output %d\n", i);
			goto out;
		}
	}
	if (!be->run) {   /* the C target builds in a folder of its own */
		const char *t = getenv("TMPDIR");
		snprintf(wd, sizeof wd, "%s/burncc-run-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(wd)) {
			fprintf(stderr, "burncc: run: cannot create %s: %s\n", wd, strerror(errno));
			wd[0] = 0;
			goto out;
		}
	}
	burn_ctx_init(&c, model);
	if (check_run_once(&c, be, m, model, wd, inp, outp)) {
		rc = fail(&c);
		goto out;
	}
	if (mkdir(outdir, 0777) && errno != EEXIST) {
		fprintf(stderr, "burncc: run: cannot create %s: %s\n", outdir, strerror(errno));
		goto out;
	}
	for (int i = 0; i < m->g->nout; i++) {
		const Value *v = GV(m->g, m->g->out[i]);
		char name[256], path[1024];
		snprintf(name, sizeof name, "%s", v->name ? v->name : "output");
		for (char *p = name; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			      (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '_'))
				*p = '_';
		if (!strcmp(name, ".") || !strcmp(name, ".."))
			name[0] = '_';
		snprintf(path, sizeof path, "%s/%s.npy", outdir, name);
		burn_ctx_init(&c, NULL);
		if (npy_save_file(&c, path, v->dtype, v->rank, v->dim, outp[i])) {
			rc = fail(&c);
			goto out;
		}
		if (!quiet)
			summary(v->name, v, outp[i], path);
	}
	rc = 0;
out:
	if (wd[0])
		nftw(wd, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	if (outp && m)
		for (int i = 0; i < m->g->nout; i++)
			free(outp[i]);
	free(outp);
	free(inp);
	free(bind);
	free(ins);
	if (g)
		graph_destroy(g);
	burn_compiled_destroy(m);
	arena_free(&a);
	return rc;
}

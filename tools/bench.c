/*
 * bench.c - `burncc bench MODEL.onnx --target T [--runs N] [--dim n=v]`:
 * compile for the target, run once untimed, then time N runs on the
 * device's own clock (Backend.time) and print the median, min and max,
 * with the bandwidth the inputs and outputs imply and, beside it in the
 * same run, the device copying the largest input (the yardstick for a
 * memory-bound kernel: a copy of S bytes moves 2S, as does a pointwise
 * kernel from S bytes to S bytes).
 *
 * --profile: then each kernel alone (Backend.profile), a table of its
 * median time, its share of the kernels' sum and the graph nodes it fuses.
 *
 * --trace FILE: the profile as a Chrome trace (JSON, chrome://tracing or
 * Perfetto): each kernel one complete event of its median time, end to
 * end in launch order, with its nodes.
 *
 * Inputs are seeded pseudo-random (floats uniform in [-3, 3], integers 0,
 * booleans false): the timing of burncc's kernels does not depend on the
 * values.  Targets with a timer have Backend.time: cuda (the device's
 * events) and llvm (the host's clock, the default where burncc has it;
 * --threads N sets its pool's threads); the others are refused with a
 * message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/bench.h"
#include "tools/compile.h"
#include "codegen/target_iface.h"
#include "tools/autotune.h"
#include "runtime/parallel.h"

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int
usage(void)
{
	fprintf(stderr, "usage: burncc bench MODEL.onnx [--target T] [--runs N] [--threads N] [--cpu NAME]\n"
	        "                    [--dim NAME=V ...] [--schedule KERNEL=STEPS | FILE ...]\n"
	        "                    [--profile] [--trace FILE.json] [--autotune]\n");
	return 2;
}

/* s as a JSON string's contents */
static void
json_str(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
}

/* The profile as a Chrome trace: one complete event ("ph":"X", times in
 * microseconds) per kernel, its median, end to end in launch order.
 * Written to a temporary file, then renamed. */
static int
write_trace(const char *path, const Compiled *m, const double *kms, const char *dev)
{
	char tmp[4096];
	FILE *f;
	double ts = 0;
	int ok;

	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp || !(f = fopen(tmp, "w")))
		return -1;
	fprintf(f, "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"device\": \"");
	json_str(f, dev);
	fprintf(f, "\", \"note\": \"each kernel's median alone, end to end\"},\n"
	        "\"traceEvents\": [\n");
	for (int k = 0; k < m->prog.nkernel; k++) {
		const KKernel *kk = m->prog.kernel[k];
		fprintf(f, "%s{\"name\": \"", k ? ",\n" : "");
		json_str(f, kk->name);
		fprintf(f, "\", \"cat\": \"kernel\", \"ph\": \"X\", \"pid\": 1, \"tid\": 1, "
		        "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"nodes\": \"", ts, kms[k] * 1e3);
		json_str(f, kk->ops);
		fprintf(f, "\", \"grid\": \"");
		json_str(f, kk->grid ? kk->grid : "one thread");
		fprintf(f, "\"}}");
		ts += kms[k] * 1e3;
	}
	fprintf(f, "\n]}\n");
	ok = !ferror(f);
	ok &= fclose(f) == 0;
	if (!ok || rename(tmp, path)) {
		remove(tmp);
		return -1;
	}
	return 0;
}

int
bench_main(int argc, char **argv)
{
	const char *model = NULL, *target = backend_find("llvm") ? "llvm" : "cuda", *trace = NULL;
	int runs = 20, nbind = 0, rc = 1, profile = 0, tune = 0, threads = 0;
	const TargetCpu *cpu = NULL;   /* --cpu NAME */
	Target cpu_target;
	DimBind bind[32];
	const Backend *be;
	Compiled *m = NULL;
	void **in = NULL;
	double *ms = NULL, *cp = NULL;
	char dev[200] = "";
	int64_t bytes = 0, big = 0;
	KWant *want = NULL;
	int nwant = 0;
	Arena want_arena;
	Ctx c;

	arena_init(&want_arena);

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--target") && i + 1 < argc)
			target = argv[++i];
		else if (!strcmp(argv[i], "--profile"))
			profile = 1;
		else if (!strcmp(argv[i], "--autotune"))
			tune = 1;
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cpu")) {
			burn_ctx_init(&c, NULL);
			if (burn_cpu_arg(&c, ++i < argc ? argv[i] : NULL, &cpu)) {
				fprintf(stderr, "burncc bench: %s\n", c.msg);
				arena_free(&want_arena);
				return 2;
			}
		}
		else if (!strcmp(argv[i], "--trace") && i + 1 < argc)
			trace = argv[++i], profile = 1;
		else if (!strcmp(argv[i], "--dim") && i + 1 < argc && nbind < 32) {
			char *eq = strchr(argv[++i], '=');
			if (!eq)
				return usage();
			*eq = 0;
			bind[nbind].name = argv[i];
			bind[nbind++].value = atoll(eq + 1);
		} else if (!strcmp(argv[i], "--schedule") && i + 1 < argc) {
			burn_ctx_init(&c, NULL);
			if (burn_schedule_arg(&c, &want_arena, argv[++i], &want, &nwant)) {
				fprintf(stderr, "burncc bench: %s\n", c.msg);
				arena_free(&want_arena);
				return 2;
			}
		} else if (argv[i][0] == '-' || model) {
			arena_free(&want_arena);
			return usage();
		}
		else
			model = argv[i];
	}
	if (!model || runs < 1 || runs > 100000 || threads < 0 || threads > 256) {
		arena_free(&want_arena);
		return usage();
	}
	if (threads)
		burn_threads_local(threads);   /* the llvm target's pool */
	if (!(be = backend_find(target))) {
		fprintf(stderr, "burncc bench: unknown target '%s'\n", target);
		return 2;
	}
	if (!be->time || (profile && !be->profile)) {
		fprintf(stderr, "burncc bench: target '%s' has no device timer yet "
		        "(bench/models.sh times the C target)\n", target);
		return 2;
	}
	if (cpu && target_with_cpu(be->target, cpu, &cpu_target)) {
		fprintf(stderr, "burncc bench: --cpu is for the CPU targets (llvm)\n");
		arena_free(&want_arena);
		return 2;
	}
	burn_ctx_init(&c, model);
	{
		CompileOpts o = { nbind, bind, 0, 0, cpu ? &cpu_target : be->target, 0, NULL,
		                  nwant, want };
		if (tune) {
			/* the schedules timed here (or found in the cache) */
			TuneResult tr[64];
			int ntr = 0;
			if (burn_autotune(&c, model, &o, be, 10, &want_arena, &want, &nwant, tr, 64, &ntr))
				goto fail;
			for (int i = 0; i < ntr; i++) {
				if (tr[i].candidates)
					printf("autotune: %s: %s (%.4f ms; default %.4f ms; %d timed)\n",
					       tr[i].kernel, tr[i].steps, tr[i].ms, tr[i].default_ms,
					       tr[i].candidates);
				else
					printf("autotune: %s: %s (from the cache)\n", tr[i].kernel,
					       tr[i].steps);
			}
			o.want = want;
			o.nwant = nwant;
		}
		if (burn_compile_file(&c, model, &o, &m))
			goto fail;
	}
	ms = calloc((size_t)runs, sizeof *ms);
	cp = calloc((size_t)runs, sizeof *cp);
	if (!(in = bench_inputs(m)) || !ms || !cp) {
		fprintf(stderr, "burncc bench: %s: an input without a static size, or out of "
		        "memory\n", model);
		goto out;
	}
	for (int i = 0; i < m->g->nin; i++) {
		int64_t nb = value_nbytes(GV(m->g, m->g->in[i]));
		bytes += nb;
		big = nb > big ? nb : big;
	}
	for (int i = 0; i < m->g->nout; i++)
		bytes += value_nbytes(GV(m->g, m->g->out[i]));
	if (be->time(&c, m, (const void *const *)in, runs, ms, cp, dev, sizeof dev))
		goto fail;
	qsort(ms, (size_t)runs, sizeof *ms, cmp_d);
	qsort(cp, (size_t)runs, sizeof *cp, cmp_d);
	printf("device: %s\n", dev);
	printf("kernels: %d\n", m->prog.nkernel);
	printf("median_ms: %.4f\nmin_ms: %.4f\nmax_ms: %.4f\n", ms[runs / 2], ms[0],
	       ms[runs - 1]);
	printf("bytes_in_out: %lld\n", (long long)bytes);
	if (ms[runs / 2] > 0)
		printf("gb_per_s: %.1f\n", (double)bytes / (ms[runs / 2] * 1e6));
	if (big && cp[runs / 2] > 0) {
		printf("copy_ms: %.4f (the device copying %lld bytes, median)\n", cp[runs / 2],
		       (long long)big);
		printf("copy_gb_per_s: %.1f\n", 2.0 * (double)big / (cp[runs / 2] * 1e6));
		printf("of_copy: %.3f\n", cp[runs / 2] / ms[runs / 2] * (double)bytes /
		       (2.0 * (double)big));
	}
	if (profile) {
		double *kms = calloc((size_t)m->prog.nkernel + 1, sizeof *kms), sum = 0;
		if (!kms) {
			fprintf(stderr, "burncc bench: out of memory\n");
			goto out;
		}
		if (be->profile(&c, m, (const void *const *)in, runs, kms)) {
			free(kms);
			goto fail;
		}
		for (int k = 0; k < m->prog.nkernel; k++)
			sum += kms[k];
		printf("profile: each kernel alone, median of %d (ms; %% of their sum %.4f)\n",
		       runs, sum);
		printf("| kernel | ms | %% | grid | nodes |\n| --- | --- | --- | --- | --- |\n");
		for (int k = 0; k < m->prog.nkernel; k++) {
			const KKernel *kk = m->prog.kernel[k];
			printf("| %s | %.4f | %.1f | %s | %s |\n", kk->name, kms[k],
			       sum > 0 ? 100 * kms[k] / sum : 0.0, kk->grid ? kk->grid : "one thread",
			       kk->ops ? kk->ops : "");
		}
		if (trace && write_trace(trace, m, kms, dev)) {
			fprintf(stderr, "burncc bench: cannot write %s\n", trace);
			free(kms);
			goto out;
		}
		free(kms);
	}
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "burncc bench: %s\n", c.msg);
out:
	if (m)
		free_inputs(m, in);
	free(ms);
	free(cp);
	if (m)
		burn_compiled_destroy(m);
	arena_free(&want_arena);
	return rc;
}

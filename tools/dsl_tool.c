/*
 * dsl_tool.c - `burncc run SCRIPT.burn`, `burncc repl`, and the AOT path
 * for scripts (see dsl_tool.h, docs/DSL.md).
 *
 * The REPL reads with libedit when burncc was built with it (history in
 * $HOME/.burncc_history) and stdin is a terminal, else with fgets.  An
 * input is read until its brackets balance (dsl_incomplete), then run; an
 * expression without ';' at its end is printed.  SIGINT while a statement
 * runs interrupts it (dsl_vm_interrupt: the vm's flag and libburn's
 * burn_interrupt); at the prompt it drops the line being typed.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "dsl_tool.h"
#include "../api/dsl.h"
#include "train.h"
#ifdef BURN_HAVE_LIBEDIT
#include <editline/readline.h>
#endif

static const char run_usage[] =
"usage: burncc run [options] SCRIPT.burn   run a script\n"
"       burncc repl [options]              interactive\n"
"options:\n"
"  --seed N       first seed of the layers' initialisation and of rand\n"
"                 without a seed (default 0)\n"
"  --no-fuse      one kernel per op (for comparisons)\n"
"  --no-cache     no disk cache of compiled kernels\n"
"  --threads N    worker threads of the kernels (default: one per core)\n"
"  --plain        (repl) read lines with fgets, not libedit\n";

static const char repl_help[] =
"  an expression without ';' prints its value; 'let x = ...;' binds;\n"
"  fn / module / import define (docs/DSL.md).  Input continues while a\n"
"  bracket, brace or parenthesis is open.\n"
"  :ir          the graph IR of the last realisation (after the passes)\n"
"  :kernels     the kernels of the last realisation\n"
"  :time EXPR   evaluate EXPR, realise it, print the time\n"
"  :help        this\n"
"  :quit        leave (also Ctrl-D)\n"
"  Ctrl-C interrupts a running computation.\n";

/* The vm the SIGINT handler interrupts (NULL at the prompt). */
static DslVm *volatile running_vm;
static volatile sig_atomic_t got_sigint;

static void
on_sigint(int sig)
{
	DslVm *vm = running_vm;

	(void)sig;
	got_sigint = 1;
	if (vm)
		dsl_vm_interrupt(vm);
}

int
dsl_is_script(const char *path)
{
	size_t n = strlen(path);
	return n > 5 && !strcmp(path + n - 5, ".burn");
}

/* Print the vm's error: the message, then the source line and a caret. */
static void
report_vm(DslVm *vm)
{
	DslPos pos = dsl_vm_pos(vm);
	size_t n;
	const char *src = dsl_vm_source(vm, &n);
	char caret[512];

	fprintf(stderr, "%s\n", dsl_vm_message(vm));
	if (src && pos.line > 0)
		fputs(dsl_caret(src, n, pos, caret, sizeof caret), stderr);
}

typedef struct RunOpts {
	uint64_t seed;
	int no_fuse, no_cache, threads, plain;
	const char *script;
} RunOpts;

static int
parse_opts(int argc, char **argv, RunOpts *o, int want_script)
{
	memset(o, 0, sizeof *o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(run_usage, stdout);
			exit(0);
		} else if (!strcmp(a, "--seed") && i + 1 < argc) {
			o->seed = strtoull(argv[++i], NULL, 10);
		} else if (!strcmp(a, "--threads") && i + 1 < argc) {
			o->threads = atoi(argv[++i]);
		} else if (!strcmp(a, "--no-fuse")) {
			o->no_fuse = 1;
		} else if (!strcmp(a, "--no-cache")) {
			o->no_cache = 1;
		} else if (!strcmp(a, "--plain")) {
			o->plain = 1;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "burncc: unknown option '%s'\n%s", a, run_usage);
			return 2;
		} else if (want_script && !o->script) {
			o->script = a;
		} else {
			fprintf(stderr, "burncc: unexpected argument '%s'\n%s", a, run_usage);
			return 2;
		}
	}
	if (want_script && !o->script) {
		fprintf(stderr, "burncc: run needs a script\n%s", run_usage);
		return 2;
	}
	return 0;
}

static int
make_ctx(const RunOpts *o, burn_ctx **ctx)
{
	burn_options bo = { 0 };
	burn_status st;

	bo.threads = o->threads;
	bo.no_fuse = o->no_fuse;
	bo.cache_dir = o->no_cache ? "" : NULL;
	if ((st = burn_ctx_create(&bo, ctx))) {
		fprintf(stderr, "burncc: cannot make a libburn context (status %d)\n", st);
		return 1;
	}
	return 0;
}

static int
run_main(int argc, char **argv)
{
	RunOpts o;
	burn_ctx *ctx;
	DslVm *vm;
	int rc = parse_opts(argc, argv, &o, 1);

	if (rc)
		return rc;
	if (make_ctx(&o, &ctx))
		return 1;
	if (!(vm = dsl_vm_create(ctx, stdout, o.seed))) {
		burn_ctx_destroy(ctx);
		fprintf(stderr, "burncc: out of memory\n");
		return 1;
	}
	dsl_vm_set_train(vm, train_dsl, NULL);
	running_vm = vm;
	signal(SIGINT, on_sigint);
	rc = dsl_vm_run_file(vm, o.script);
	running_vm = NULL;
	fflush(stdout);
	if (rc)
		report_vm(vm);
	dsl_vm_destroy(vm);
	burn_ctx_destroy(ctx);
	return rc ? 1 : 0;
}

/* ---- the REPL ------------------------------------------------------------ */

typedef struct Reader {
	int edit;            /* libedit in use */
	char hist[1024];
} Reader;

/* One line (malloc'd, without its newline), or NULL at the end of input;
 * *intr set when Ctrl-C dropped the line. */
static char *
read_line(Reader *r, const char *prompt, int *intr)
{
	*intr = 0;
	got_sigint = 0;
#ifdef BURN_HAVE_LIBEDIT
	if (r->edit) {
		char *l = readline(prompt);
		if (!l && got_sigint) {
			*intr = 1;
			return NULL;
		}
		if (l && *l)
			add_history(l);
		return l;
	}
#endif
	{
		char buf[4096];
		size_t n = 0, cap = 0;
		char *line = NULL;
		fputs(prompt, stdout);
		fflush(stdout);
		for (;;) {
			if (!fgets(buf, sizeof buf, stdin)) {
				if (got_sigint) {
					clearerr(stdin);
					free(line);
					*intr = 1;
					return NULL;
				}
				if (!line)
					return NULL;
				break;
			}
			size_t k = strlen(buf);
			if (n + k + 1 > cap) {
				char *nl = realloc(line, cap = (n + k + 1) * 2);
				if (!nl) {
					free(line);
					return NULL;
				}
				line = nl;
			}
			memcpy(line + n, buf, k + 1);
			n += k;
			if (n && line[n - 1] == '\n') {
				line[--n] = 0;
				break;
			}
		}
		return line;
	}
}

static double
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Run one input of the REPL; errors are printed, never fatal. */
static void
repl_eval(burn_ctx *ctx, DslVm *vm, const char *text, int show)
{
	int rc;

	running_vm = vm;
	rc = dsl_vm_run(vm, "<repl>", text, strlen(text), show);
	running_vm = NULL;
	fflush(stdout);
	if (rc)
		report_vm(vm);
	(void)ctx;
}

static void
repl_command(burn_ctx *ctx, DslVm *vm, const char *cmd)
{
	burn_status st = BURN_STATUS_OK;
	burn_stats s;

	while (*cmd == ' ')
		cmd++;
	if (!strcmp(cmd, "help") || !strcmp(cmd, "h")) {
		fputs(repl_help, stdout);
	} else if (!strcmp(cmd, "ir")) {
		st = burn_dump_last(ctx, BURN_DUMP_GRAPH, stdout);
	} else if (!strcmp(cmd, "kernels")) {
		burn_get_stats(ctx, &s);
		printf("last realisation: %lld kernel%s\n", (long long)s.last_kernels,
		       s.last_kernels == 1 ? "" : "s");
		st = burn_dump_last(ctx, BURN_DUMP_KERNELS, stdout);
	} else if (!strncmp(cmd, "time", 4) && (cmd[4] == ' ' || !cmd[4])) {
		const char *e = cmd + 4;
		char *text;
		double t0, t1;
		burn_stats s0;
		int rc;
		while (*e == ' ')
			e++;
		if (!*e) {
			printf(":time needs an expression\n");
			return;
		}
		/* bind the value so the sync realises it, then drop it */
		if (!(text = malloc(strlen(e) + 32)))
			return;
		sprintf(text, "let _time_ = %s;", e);
		burn_get_stats(ctx, &s0);
		t0 = now_ms();
		running_vm = vm;
		rc = dsl_vm_run(vm, "<time>", text, strlen(text), 0);
		if (!rc && (st = burn_sync(ctx)))
			fprintf(stderr, "error: %s\n", burn_message(ctx));
		running_vm = NULL;
		t1 = now_ms();
		if (rc)
			report_vm(vm);
		else if (!st) {
			burn_get_stats(ctx, &s);
			printf("time: %.3f ms (%lld kernel%s, %lld compiled)\n", t1 - t0,
			       (long long)(s.kernels_run - s0.kernels_run),
			       s.kernels_run - s0.kernels_run == 1 ? "" : "s",
			       (long long)(s.compiles - s0.compiles));
		}
		dsl_vm_run(vm, "<time>", "let _time_ = 0;", 15, 0);
		free(text);
		return;
	} else {
		printf("unknown command ':%s' (:help lists them)\n", cmd);
	}
	if (st)
		fprintf(stderr, "error: %s\n", burn_message(ctx));
	fflush(stdout);
}

static int
repl_main(int argc, char **argv)
{
	RunOpts o;
	burn_ctx *ctx;
	DslVm *vm;
	Reader r = { 0 };
	struct sigaction sa;
	char *buf = NULL;
	size_t n = 0;
	int rc = parse_opts(argc, argv, &o, 0);

	if (rc)
		return rc;
	if (make_ctx(&o, &ctx))
		return 1;
	if (!(vm = dsl_vm_create(ctx, stdout, o.seed))) {
		burn_ctx_destroy(ctx);
		return 1;
	}
	dsl_vm_set_train(vm, train_dsl, NULL);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);   /* no SA_RESTART: a read returns */
#ifdef BURN_HAVE_LIBEDIT
	r.edit = !o.plain && isatty(0);
	if (r.edit) {
		const char *home = getenv("HOME");
		if (home) {
			snprintf(r.hist, sizeof r.hist, "%s/.burncc_history", home);
			read_history(r.hist);
		}
		rl_catch_signals = 0;
	}
#endif
	printf("burncc repl: :help for commands, :quit to leave%s\n",
#ifdef BURN_HAVE_LIBEDIT
	       ""
#else
	       " (built without libedit: no line editing or history)"
#endif
	);
	for (;;) {
		int intr;
		char *line = read_line(&r, n ? "  ... " : "burn> ", &intr);
		if (!line) {
			if (intr) {
				printf("\n");
				n = 0;
				continue;
			}
			printf("\n");
			break;
		}
		if (!n && line[0] == ':') {
			size_t k = strlen(line);
			while (k > 1 && (line[k - 1] == ' ' || line[k - 1] == '\t' ||
			                 line[k - 1] == '\r'))
				line[--k] = 0;
			if (!strcmp(line, ":quit") || !strcmp(line, ":q")) {
				free(line);
				break;
			}
			repl_command(ctx, vm, line + 1);
			free(line);
			continue;
		}
		{
			size_t k = strlen(line);
			char *nb = realloc(buf, n + k + 2);
			if (!nb) {
				free(line);
				break;
			}
			buf = nb;
			memcpy(buf + n, line, k);
			n += k;
			buf[n++] = '\n';
			buf[n] = 0;
		}
		free(line);
		if (dsl_incomplete(buf, n))
			continue;
		repl_eval(ctx, vm, buf, 1);
		n = 0;
	}
#ifdef BURN_HAVE_LIBEDIT
	if (r.edit && r.hist[0])
		write_history(r.hist);
#endif
	free(buf);
	dsl_vm_destroy(vm);
	burn_ctx_destroy(ctx);
	return 0;
}

int
dsl_main(int argc, char **argv)
{
	if (!strcmp(argv[0], "run"))
		return run_main(argc, argv);
	return repl_main(argc, argv);
}

/* ---- AOT ------------------------------------------------------------------ */

int
dsl_trace_file(Ctx *c, const char *path, const char *entry, int training,
               Graph **out, char **caret)
{
	burn_options bo = { 0 };
	burn_ctx *ctx;
	DslVm *vm;
	Graph *g = NULL;
	int rc;

	*out = NULL;
	if (caret)
		*caret = NULL;
	bo.cache_dir = "";
	if (burn_ctx_create(&bo, &ctx))
		return burn_fail(c, BURN_ERR_NOMEM, "cannot make a libburn context");
	if (!(vm = dsl_vm_create(ctx, stdout, 0))) {
		burn_ctx_destroy(ctx);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	rc = dsl_vm_run_file(vm, path);
	dsl_vm_set_training(vm, training);
	if (!rc)
		rc = dsl_vm_trace(vm, entry, &g);
	if (rc) {
		DslPos pos = dsl_vm_pos(vm);
		size_t n;
		const char *src = dsl_vm_source(vm, &n);
		/* the vm's message already names the file and position */
		const char *ofile = c->file;
		c->file = NULL;
		burn_fail(c, rc, "%s", dsl_vm_message(vm));
		c->file = ofile;
		if (caret && src && pos.line > 0 && (*caret = malloc(512)))
			dsl_caret(src, n, pos, *caret, 512);
	}
	dsl_vm_destroy(vm);
	burn_ctx_destroy(ctx);
	*out = g;
	return rc;
}

int
dsl_compile_file(Ctx *c, const char *path, const char *entry,
                 const CompileOpts *o, Compiled **out, char **caret)
{
	Graph *g;

	*out = NULL;
	TRY(dsl_trace_file(c, path, entry, 0, &g, caret));
	return burn_compile_graph(c, g, o, out);
}

/*
 * burncc.c - the command-line driver.  The only place that prints errors
 * and chooses exit codes; everything else returns a status.
 *
 *   burncc MODEL.onnx -o OUT.c [--target NAME] [--name PREFIX] [--dim NAME=N]...
 *   burncc MODEL.onnx --target wasm -o OUT.wasm
 *   burncc --emit=ir|kernels|c MODEL.onnx
 *   burncc --stats MODEL.onnx
 *   burncc check [-j N] [--xfail FILE] [--keep DIR] [--extreme] DIR...
 *   burncc kir [--run] [--in vN=X,...]... FILE
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tools/compile.h"
#include "codegen/c/emit_c.h"
#include "codegen/target_iface.h"
#include "runtime/cache.h"
#include "tools/check.h"
#include "tools/dump.h"
#include "tools/kir_tool.h"
#include "tools/dsl_tool.h"
#include "tools/train.h"
#include "tools/run_model.h"
#include "tools/bench.h"
#include "tools/autotune.h"
#include "tools/wasm_build.h"
#ifdef BURN_HAVE_VULKAN
#include "codegen/vulkan/spirv.h"
#endif

#include "burncc_git.h"   /* BURNCC_GIT: git describe at build time */
#ifndef BURNCC_VERSION
#define BURNCC_VERSION "0.1.0"
#endif
#if defined(__clang__)
#define BURNCC_CC "clang " __clang_version__
#elif defined(__GNUC__)
#define BURNCC_CC "gcc " __VERSION__
#else
#define BURNCC_CC "an unknown compiler"
#endif
#ifdef BURN_HAVE_LLVM
#define BURNCC_LLVM "llvm on"
#else
#define BURNCC_LLVM "llvm off"
#endif
#ifdef BURN_HAVE_VULKAN
#define BURNCC_VK "vulkan on"
#else
#define BURNCC_VK "vulkan off"
#endif

static const char usage[] =
"usage: burncc MODEL.onnx -o OUT.c [options]   compile to OUT.c and OUT.h\n"
"       burncc MODEL.onnx --target wasm -o OUT.wasm   a WebAssembly module\n"
"                                               (clang, wasm-ld; loader:\n"
"                                               targets/wasm/burncc.mjs)\n"
"       burncc --emit=WHAT MODEL.onnx [options] print a stage to stdout\n"
"       burncc --stats MODEL.onnx [options]     print statistics as JSON\n"
"       burncc check [options] DIR...           run conformance cases\n"
"       burncc bench MODEL.onnx [options]       time it (llvm: the CPU; cuda),\n"
"                                               --profile, --trace FILE.json\n"
"       burncc kir [--run] FILE                 read kernel-IR text (see\n"
"                                               burncc kir --help)\n"
"       burncc cache path|stats|clear [--cache-dir DIR]   the llvm\n"
"                                               target's kernel cache\n"
"       burncc run MODEL.onnx --input NAME=FILE... [--output DIR]\n"
"                                               run a model on .npy/.pb\n"
"                                               files, outputs as .npy\n"
"                                               (burncc run --help)\n"
"       burncc run [options] SCRIPT.burn        run a .burn script\n"
"       burncc repl [options]                   interactive .burn session\n"
"       burncc train MODEL --data DIR [options]  train a classifier\n"
"                                               (burncc train --help)\n"
"       burncc train MODEL -o STEP.c [options]  the train step as C\n"
"       burncc MODEL --train -o STEP.c [options]  the same\n"
"       burncc SCRIPT.burn -o OUT.c [options]   compile a script's fn main\n"
"                                               (docs/DSL.md, AOT)\n"
"\n"
"Compile options:\n"
"  -o FILE          write the C source to FILE and the header beside it\n"
"                   (FILE with .c replaced by .h); with --target wasm,\n"
"                   FILE.wasm is the module built by $BURNCC_WASM_CC\n"
"                   (default clang-19, else clang) --target=wasm32\n"
"  --name PREFIX    prefix of every exported symbol (default: from -o's\n"
"                   file name, else from the model's file name)\n"
"  --entry FN       (a .burn script) the function to compile (default:\n"
"                   main; its parameters need types: x: f32[1, 784])\n"
"  --dim NAME=N     value of a symbolic input dimension (repeatable)\n"
"  --dynamic-dim NAME  keep symbolic dim NAME: the generated code takes\n"
"                   its value at run time (repeatable, up to 3: a\n"
"                   batch and a sequence dim; README, \"Sizes known at\n"
"                   run time\")\n"
"  --rng-counter    one more input, rng_counter (uint64 scalar, last): the\n"
"                   random ops without a seed draw from it; pass another\n"
"                   value to draw other numbers (README, \"Random ops\")\n"
"  --target NAME    what to compile for (default: c); the built-in targets\n"
"                   are listed below\n"
"  --freestanding   C without libc or libm, for firmware (the target\n"
"                   c-freestanding): builds with -ffreestanding -nostdlib\n"
"  --cpu NAME       the CPU the kernels are sized for (targets c,\n"
"                   c-freestanding, llvm): native, or a description\n"
"                   listed below (default: avx512); native: the one this\n"
"                   machine runs.  Build the C with the flags listed (the\n"
"                   header says which); llvm compiles for this machine\n"
"  --weights=blob   (-o FILE.c) the weights in a binary file beside the C,\n"
"                   FILE.weights.bin, passed to PREFIX_run or linked in\n"
"                   with -DPREFIX_WEIGHTS_INCBIN (.incbin); default: in\n"
"                   the C as initialisers (--weights=c)\n"
"  --weights-file F the blob's file (default FILE.weights.bin)\n"
"  --emit=ir        the graph IR after the passes, as text\n"
"  --emit=kernels   the kernels as kernel-IR text (burncc kir reads it):\n"
"                   storage aliases, then each kernel with the graph ops\n"
"                   it implements on its first line\n"
"  --emit=render    each kernel as the target renders it (c: a C\n"
"                   function; llvm: an LLVM IR module; vulkan: GLSL\n"
"                   compute shaders)\n"
"  --emit=c         the generated C source (header first)\n"
"  --emit=schedule  each kernel's schedule, one 'KERNEL: steps' line each\n"
"                   (what --schedule FILE reads; README: Schedules)\n"
"  --schedule KERNEL=STEPS | --schedule FILE   build kernel KERNEL with\n"
"                   these schedule steps instead of the target's defaults\n"
"                   (repeatable; FILE: lines as --emit=schedule prints)\n"
"  --emit=ptx       the PTX module (--target cuda): the launch list as\n"
"                   comments, then every kernel's entries\n"
"  --emit=spirv     every shader of --target vulkan compiled to SPIR-V,\n"
"                   validated (SPIRV-Tools) and disassembled\n"
"  --stats          JSON: kernels, arena_bytes, arena_lower_bound_bytes,\n"
"                   weights_bytes\n"
"  --verify         run the IR verifier between passes\n"
"  --no-fuse        one kernel per graph op (no kernel fusion)\n"
"  --max-file-bytes N    largest model file accepted (default 2 GiB)\n"
"  --max-tensor-bytes N  largest tensor, constant or intermediate\n"
"                        (default 1 GiB)\n"
"  --max-depth N         deepest nesting of subgraphs (default 32)\n"
"  --max-nodes N         most nodes in one graph (default 1000000)\n"
"  --max-fold-steps N    interpreter steps to fold one node (default 2^24);\n"
"                        a node over it is compiled, not folded\n"
"  --max-fold-total N    interpreter steps for all folding (default 2^26)\n"
"  --max-arena-bytes N   largest arena of intermediates (default 4 GiB)\n"
"  --string-bytes N      bytes of strings one run may make (default 65536)\n"
"  --max-stack N         most bytes of local arrays a kernel keeps on the\n"
"                        stack: register tiles shrink to fit, else an\n"
"                        error naming the kernel (default: no bound)\n"
"\n"
"check DIR...: each DIR holds model.onnx and test_data_set_N/input_K.pb,\n"
"output_K.pb (the ONNX node-test layout), or holds such folders.  Each case\n"
"is compiled to C, built with the system C compiler ($CC, default cc) and\n"
"run; every output is compared with the expected one (floats: rtol 1e-3,\n"
"atol 1e-5; integers and bool: exact).  Prints PASS name or FAIL name:\n"
"reason per case and ends with 'N passed, N failed'.  $BURNCC_CFLAGS\n"
"replaces the -O1 the cases are built with (e.g. \"-O3 -fopenmp\").\n"
"  -j N             cases run in parallel (default: number of CPUs)\n"
"  --xfail FILE     expected failures, one case name per line (text after\n"
"                   the name is the reason); exit non-zero only on an\n"
"                   unexpected failure or an unexpected pass; lists given\n"
"                   twice add up\n"
"  --quiet-pass     do not print PASS lines\n"
"  --grad           check gradients instead: the autodiff pass's, of the\n"
"                   loss sum(out_k * W_k), against float64 finite\n"
"                   differences (PASS, FAIL or SKIP per case)\n"
"  --extreme        also run each passing case on inputs of edge values\n"
"                   (MIN, MAX, -1, inf, NaN, 1e30...); outputs are not\n"
"                   compared, the run must not fault (with BURNCC_CFLAGS=\n"
"                   -fsanitize=undefined: no undefined behaviour)\n"
"  --dynamic        compile each case with the leading dim of its first\n"
"                   input (and of the inputs of that size) symbolic\n"
"                   (--dynamic-dim), run with the data's value bound at\n"
"                   run time; what the mode refuses prints as REFUSED,\n"
"                   apart from failures (targets that write C, llvm)\n"
"  --keep DIR       keep the generated files of each case under DIR\n"
"  --target NAME    compile the cases for that target (default: c); a\n"
"                   target that runs in process (gpu: the interpreter;\n"
"                   cuda: the GPU) runs them there\n"
"  --freestanding   compile for c-freestanding: each module built alone\n"
"                   with -ffreestanding -Wcast-align -Wfloat-equal, linked\n"
"                   with -nostdlib (no library may be needed), then run\n"
"  --cpu NAME       compile for that CPU description (as above); the\n"
"                   cases are built with -O1 or $BURNCC_CFLAGS, no -march\n"
"  --every N        only every Nth case (0, N, 2N, ... in sorted order)\n"
"  --schedule KERNEL=STEPS | FILE   as for compiling (each case must have\n"
"                   the kernels named)\n"
"  --batch N        run N cases in each worker process (default 1): a\n"
"                   device target sets its device up once per process\n"
"  --cache-dir DIR  --target llvm: keep compiled kernels in DIR (made\n"
"                   0700; refused if a symlink, not ours or writable by\n"
"                   others) and load them from there when they recur\n"
"\n"
"  -h, --help       this text\n"
"  --version        print the version and how burncc was built\n"
"\n"
"Environment: BURNCC_DUMP=DIR writes every kernel's IR (N_NAME.kir), its\n"
"schedule (N_NAME.sched) and its rendered source (N_NAME.c) into DIR (for\n"
"check: DIR/CASE/).  BURNCC_CACHE_DIR=DIR: the llvm target's kernel cache\n"
"(what check --cache-dir sets).  burncc cache without --cache-dir: the\n"
"default directory, $XDG_CACHE_HOME/burncc, else ~/.cache/burncc.\n"
"\n"
"Exit status: 0 on success, 1 on an error in the input or a failed check,\n"
"2 on a usage error.\n";

/* The usage text, then the built-in targets from the registry. */
static void print_usage(void)
{
	fputs(usage, stdout);
	printf("\nTargets (--target NAME):\n");
	for (int i = 0; backend_list[i]; i++) {
		const Backend *b = backend_list[i];
		const char *s = b->about;
		printf("  %-6s %-9s ", b->name, b->target->name);
		/* continuation lines of `about` line up under its first */
		for (; *s; s++)
			if (*s == '\n')
				fputs("\n                   ", stdout);
			else
				putchar(*s);
		putchar('\n');
		{   /* the target's default schedule steps */
			KSteps d;
			char buf[512];
			target_steps(b->target, &d);
			ksteps_format(&d, buf, sizeof buf);
			printf("                   schedule: %s\n", buf);
		}
	}
	printf("\nCPU descriptions (--cpu NAME; native here: %s):\n", target_cpu_native()->name);
	for (const TargetCpu *d = target_cpus; d->name; d++) {
		Target t;
		KSteps st;
		char buf[512];
		target_with_cpu(&target_cpu, d, &t);
		target_steps(&t, &st);
		ksteps_format(&st, buf, sizeof buf);
		printf("  %-8s %s%s\n           build with: %s\n           schedule: %s\n",
		       d->name, d->about, d == target_cpus ? " (default)" : "",
		       *d->cflags ? d->cflags : "no -march flag needed", buf);
	}
}


static void die_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "burncc: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	fprintf(stderr, "try 'burncc --help'\n");
	exit(2);
}

/* Value of a --max-* option: a positive integer, at most max. */
static int64_t limit_arg(const char *opt, const char *s, int64_t max)
{
	char *end;
	long long v;

	if (!s)
		die_usage("option needs a positive integer", opt);
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || end == s || v <= 0 || v > max)
		die_usage("limit must be a positive integer", s);
	return v;
}

static int report(const Ctx *c)
{
	fprintf(stderr, "burncc: %s\n", c->msg[0] ? c->msg : burn_code_name(c->code));
	return 1;
}

/* Prefix from a path: basename without extension, as a C identifier. */
static void prefix_from_path(const char *path, char *buf, size_t n)
{
	const char *b = strrchr(path, '/');
	char tmp[256];
	char *dot;

	snprintf(tmp, sizeof tmp, "%s", b ? b + 1 : path);
	dot = strrchr(tmp, '.');
	if (dot && dot != tmp)
		*dot = 0;
	c_ident(tmp, buf, n);
	for (char *p = buf; *p; p++)
		*p = tolower((unsigned char)*p);
}

/* ---- output files ----------------------------------------------------
 *
 * The outputs are written so that no error leaves a file half written and
 * no input is ever lost:
 *
 *   - every destination is checked before anything is written: a symbolic
 *     link is written through (its target is replaced, the link stays), a
 *     dangling link, a directory, a device, FIFO or socket is refused, and
 *     so is a destination that is one of the files the compilation read
 *     (the model, its external data), compared by device and inode, or the
 *     other output;
 *   - each file is written to a temporary file beside its destination
 *     (same folder, so rename is atomic), flushed and fsync'd;
 *   - only when all of them are complete are they renamed over their
 *     destinations, the weights' blob (--weights=blob) and the header
 *     first; if a later rename still fails, the earlier files' old
 *     content is put back from hard links made before.
 */

/* The files the compilation read, from Ctx.on_read. */
typedef struct ReadSet {
	struct { uint64_t dev, ino; char *path; } *f;
	int n, cap;
} ReadSet;

static void note_read(void *arg, const char *path, uint64_t dev, uint64_t ino)
{
	ReadSet *r = arg;

	for (int i = 0; i < r->n; i++)
		if (r->f[i].dev == dev && r->f[i].ino == ino)
			return;
	if (r->n == r->cap) {
		int cap = r->cap ? 2 * r->cap : 8;
		void *nf = realloc(r->f, sizeof *r->f * cap);
		if (!nf)
			return;  /* then the check below misses it; nothing else */
		r->f = nf;
		r->cap = cap;
	}
	if (!(r->f[r->n].path = strdup(path)))
		return;
	r->f[r->n].dev = dev;
	r->f[r->n].ino = ino;
	r->n++;
}

static void readset_free(ReadSet *r)
{
	for (int i = 0; i < r->n; i++)
		free(r->f[i].path);
	free(r->f);
}

typedef struct OutFile {
	const char *path;   /* as named (borrowed) */
	char *dest;         /* what gets replaced: path, or a link's target */
	char *tmp;          /* the temporary file beside dest, or NULL */
	char *bak;          /* a hard link to dest's old content, or NULL */
	FILE *f;
	int exists;         /* dest exists (then dev, ino, mode are its) */
	struct stat st;
} OutFile;

/* Resolve and check one destination; nothing is written. */
static int out_prepare(Ctx *c, OutFile *o, const ReadSet *rs)
{
	struct stat lst;

	if (lstat(o->path, &lst) < 0) {
		if (errno != ENOENT)
			return burn_fail(c, BURN_ERR_IO, "cannot write %s: %s", o->path,
			                 strerror(errno));
		o->dest = strdup(o->path);
		return o->dest ? BURN_OK : burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	if (S_ISLNK(lst.st_mode)) {
		if (!(o->dest = realpath(o->path, NULL)))
			return burn_fail(c, BURN_ERR_IO, "cannot write %s: a symbolic link to a "
			                 "missing file (%s)", o->path, strerror(errno));
	} else if (!(o->dest = strdup(o->path)))
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	if (stat(o->dest, &o->st) < 0)
		return burn_fail(c, BURN_ERR_IO, "cannot write %s: %s", o->path, strerror(errno));
	if (S_ISDIR(o->st.st_mode))
		return burn_fail(c, BURN_ERR_IO, "cannot write %s: it is a directory", o->path);
	if (!S_ISREG(o->st.st_mode))
		return burn_fail(c, BURN_ERR_IO, "cannot write %s: not a regular file (a device, "
		                 "FIFO or socket is never replaced)", o->path);
	o->exists = 1;
	for (int i = 0; i < rs->n; i++)
		if (rs->f[i].dev == (uint64_t)o->st.st_dev && rs->f[i].ino == (uint64_t)o->st.st_ino)
			return burn_fail(c, BURN_ERR_IO, "cannot write %s: that is %s, which this "
			                 "compilation reads", o->path, rs->f[i].path);
	return BURN_OK;
}

/* Create o's temporary file beside its destination, with the mode the
 * destination has (or a new file would get). */
static int out_open(Ctx *c, OutFile *o)
{
	const char *sl = strrchr(o->dest, '/');
	size_t dl = sl ? (size_t)(sl - o->dest) + 1 : 0;
	mode_t mode;
	int fd;

	if (!(o->tmp = malloc(strlen(o->dest) + 16)))
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	sprintf(o->tmp, "%.*s.%s.XXXXXX", (int)dl, o->dest, o->dest + dl);
	if ((fd = mkstemp(o->tmp)) < 0) {
		int e = errno;
		free(o->tmp);
		o->tmp = NULL;
		return burn_fail(c, BURN_ERR_IO, "cannot write %s: %s", o->path, strerror(e));
	}
	if (o->exists) {
		mode = o->st.st_mode & 07777;
	} else {
		mode_t um = umask(0);
		umask(um);
		mode = 0666 & ~um;
	}
	if (fchmod(fd, mode) < 0 || !(o->f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		return burn_fail(c, BURN_ERR_IO, "cannot write %s: %s", o->path, strerror(e));
	}
	return BURN_OK;
}

/* Flush o's temporary file to the disk and close it. */
static int out_close(Ctx *c, OutFile *o)
{
	int bad = fflush(o->f) != 0 || fsync(fileno(o->f)) != 0;
	int e = errno;

	if (fclose(o->f) && !bad) {
		bad = 1;
		e = errno;
	}
	o->f = NULL;
	return bad ? burn_fail(c, BURN_ERR_IO, "cannot write %s: %s", o->path, strerror(e))
	           : BURN_OK;
}

/* A hard link to o's old content, to put back if a later rename fails;
 * best effort (a file system without hard links gets none). */
static void out_backup(OutFile *o)
{
	if (!o->exists || !(o->bak = malloc(strlen(o->tmp) + 7)))
		return;
	for (int k = 0; k < 8; k++) {
		int fd;
		sprintf(o->bak, "%sXXXXXX", o->tmp);
		if ((fd = mkstemp(o->bak)) < 0)
			break;
		close(fd);
		unlink(o->bak);
		if (!link(o->dest, o->bak))
			return;
		if (errno != EEXIST)
			break;
	}
	free(o->bak);
	o->bak = NULL;
}

/* fsync the folder holding path, so the renames survive a crash. */
static void sync_dir(const char *path)
{
	const char *sl = strrchr(path, '/');
	char *d = sl ? strndup(path, sl == path ? 1 : (size_t)(sl - path)) : strdup(".");
	int fd = d ? open(d, O_RDONLY | O_DIRECTORY) : -1;

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(d);
}

static void out_free(OutFile *o)
{
	if (o->f)
		fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);     /* NULL once renamed over the destination */
	if (o->bak)
		unlink(o->bak);
	free(o->tmp);
	free(o->bak);
	free(o->dest);
}

/* The SHA-256 of the file at path in hex (65 bytes), for the header's
 * PREFIX_MODEL_SHA256; "" if it cannot be read (the header then has none). */
static void file_sha256(const char *path, char *hex)
{
	static const char dig[] = "0123456789abcdef";
	unsigned char buf[1 << 16], h[32];
	FILE *f = fopen(path, "rb");
	BurnSha256 s;
	size_t n;

	hex[0] = 0;
	if (!f)
		return;
	burn_sha256_init(&s);
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		burn_sha256_update(&s, buf, n);
	if (!ferror(f)) {
		burn_sha256_final(&s, h);
		for (int i = 0; i < 32; i++) {
			hex[2 * i] = dig[h[i] >> 4];
			hex[2 * i + 1] = dig[h[i] & 15];
		}
		hex[64] = 0;
	}
	fclose(f);
}

/* The blob's path for -o OUT: OUT with .c replaced by .weights.bin (or
 * that appended), or `given` (--weights-file). */
static char *blob_path(const char *out, const char *given)
{
	size_t len = strlen(out);
	char *b;

	if (given)
		return strdup(given);
	if (!(b = malloc(len + 16)))
		return NULL;
	strcpy(b, out);
	if (len > 2 && !strcmp(out + len - 2, ".c"))
		b[len - 2] = 0;
	strcat(b, ".weights.bin");
	return b;
}

static int emit_to_files(Ctx *c, Compiled *m, const Backend *be, const char *out,
                         const char *prefix, const char *model, const ReadSet *rs,
                         int blob, const char *blob_file)
{
	size_t len = strlen(out);
	char *hpath = malloc(len + 3), *bpath = blob ? blob_path(out, blob_file) : NULL;
	/* the source, the header, the weights' blob (--weights=blob) */
	OutFile of[3] = { { 0 }, { 0 }, { 0 } };
	int n = blob ? 3 : 2;
	const char *hbase, *bbase = NULL;
	char sha[65];
	ModuleOpts o;
	int rc = BURN_OK;

	/* these messages are about -o, not about the model */
	c->file = c->node = c->op = NULL;
	if (!hpath || (blob && !bpath)) {
		free(hpath);
		free(bpath);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	strcpy(hpath, out);
	if (len > 2 && !strcmp(out + len - 2, ".c"))
		strcpy(hpath + len - 2, ".h");
	else
		strcat(hpath, ".h");
	hbase = strrchr(hpath, '/');
	hbase = hbase ? hbase + 1 : hpath;
	if (bpath) {
		bbase = strrchr(bpath, '/');
		bbase = bbase ? bbase + 1 : bpath;
	}
	of[0].path = out;
	of[1].path = hpath;
	of[2].path = bpath;
	for (int i = 0; i < n && !rc; i++)
		rc = out_prepare(c, &of[i], rs);
	for (int i = 0; i < n && !rc; i++)
		for (int j = 0; j < i && !rc; j++)
			if (!strcmp(of[i].dest, of[j].dest) || (of[i].exists && of[j].exists &&
			    of[i].st.st_dev == of[j].st.st_dev && of[i].st.st_ino == of[j].st.st_ino))
				rc = burn_fail(c, BURN_ERR_IO, "cannot write %s: it is the same "
				               "file as %s", of[i].path, of[j].path);
	for (int i = 0; i < n && !rc; i++)
		rc = out_open(c, &of[i]);
	if (!rc) {
		o.prefix = prefix;
		o.header_name = hbase;
		o.source = model;
		o.blob = blob ? of[2].f : NULL;
		o.blob_name = bbase;
		o.version = BURNCC_VERSION;
		file_sha256(model, sha);
		o.model_sha256 = sha[0] ? sha : NULL;
		rc = (be->emit_host ? be->emit_host : be->emit_module)(c, m, &o, of[0].f, of[1].f);
	}
	for (int i = 0; i < n && !rc; i++)
		rc = out_close(c, &of[i]);
	/* only complete files replace the outputs: the blob, the header, then
	 * the source; if one rename fails, the ones before it get their old
	 * content back (or go, where they are new) */
	for (int i = n - 1; i >= 0 && !rc; i--) {
		out_backup(&of[i]);
		if (!rename(of[i].tmp, of[i].dest)) {
			free(of[i].tmp);
			of[i].tmp = NULL;
			continue;
		}
		rc = burn_fail(c, BURN_ERR_IO, "cannot write %s: %s", of[i].path,
		               strerror(errno));
		for (int j = n - 1; j > i; j--) {
			if (of[j].bak && !rename(of[j].bak, of[j].dest)) {
				free(of[j].bak);
				of[j].bak = NULL;
			} else if (!of[j].exists)
				unlink(of[j].dest);
		}
	}
	for (int i = 0; i < n && !rc; i++)
		sync_dir(of[i].dest);
	for (int i = 0; i < n; i++)
		out_free(&of[i]);
	free(hpath);
	free(bpath);
	return rc;
}

static int emit_c_stdout(Ctx *c, Compiled *m, const Backend *be, const char *prefix,
                         const char *model)
{
	char hname[160], sha[65];
	ModuleOpts o;

	snprintf(hname, sizeof hname, "%s.h", prefix);
	o.prefix = prefix;
	o.header_name = hname;
	o.source = model;
	o.blob = NULL;
	o.blob_name = NULL;
	o.version = BURNCC_VERSION;
	file_sha256(model, sha);
	o.model_sha256 = sha[0] ? sha : NULL;
	return be->emit_module(c, m, &o, stdout, stdout);
}

/* burncc cache path|stats|clear [--cache-dir DIR]: the llvm target's
 * disk cache of compiled kernels (runtime/cache.h). */
static int cache_main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "", *dir = "";
	int64_t entries, bytes;
	BurnCache cc;
	Ctx c;

	if (argc == 4 && !strcmp(argv[2], "--cache-dir") && *argv[3])
		dir = argv[3];
	else if (argc != 2)
		cmd = "";
	if (strcmp(cmd, "path") && strcmp(cmd, "stats") && strcmp(cmd, "clear"))
		die_usage("cache takes path, stats or clear [--cache-dir DIR]", NULL);
	burn_ctx_init(&c, NULL);
	if (burn_cache_open(&c, &cc, dir, 0)) {
		fprintf(stderr, "burncc: %s\n", c.msg);
		return 1;
	}
	if (cc.fd < 0) {
		fprintf(stderr, "burncc: %s\n", cc.note);
		return 1;
	}
	if (!strcmp(cmd, "path")) {
		printf("%s\n", cc.path);
	} else if (!strcmp(cmd, "stats")) {
		burn_cache_scan(&cc, &entries, &bytes);
		printf("{\"path\": \"%s\", \"entries\": %lld, \"bytes\": %lld, "
		       "\"max_bytes\": %lld}\n", cc.path, (long long)entries,
		       (long long)bytes, (long long)cc.max_bytes);
	} else {
		burn_cache_clear(&cc, &entries);
		printf("removed %lld entries from %s\n", (long long)entries, cc.path);
	}
	burn_cache_close(&cc);
	return 0;
}

int main(int argc, char **argv)
{
	const char *model = NULL, *out = NULL, *name = NULL, *emit = NULL, *entry = NULL;
	const char *dump = getenv("BURNCC_DUMP");
	const Backend *be = backend_list[0];
	const TargetCpu *cpu = NULL;    /* --cpu NAME */
	Target cpu_target;              /* be->target with cpu's tuning */
	const Target *target;
	int stats = 0, autotune = 0, verify = 0, no_fuse = 0, nbind = 0, ndyn = 0, freestanding = 0;
	int rng_counter = 0;
	int blob = 0;                   /* --weights=blob */
	const char *blob_file = NULL;   /* --weights-file FILE */
	int64_t max_stack = 0;          /* --max-stack BYTES, 0: none */
	const char *dyn[4] = { NULL };   /* --dynamic-dim, at most 3 (dynfit.c) */
	/* --max-*: file, tensor, depth, nodes, fold steps, fold total, arena */
	int64_t lim[8] = { -1, -1, -1, -1, -1, -1, -1, -1 };
	DimBind *bind = calloc(argc, sizeof *bind);
	Arena want_arena;   /* --schedule's steps */
	KWant *want = NULL;
	int nwant = 0;
	char prefix[128];
	ReadSet rs = { 0 };
	Ctx c;
	Compiled *m;
	int rc;

	arena_init(&want_arena);
	if (argc > 1 && !strcmp(argv[1], "check")) {
		free(bind);     /* freed on every path: LeakSanitizer runs in CI */
		return check_main(argc - 1, argv + 1);
	}
	if (argc > 1 && !strcmp(argv[1], "train")) {
		free(bind);
		return train_main(argc - 1, argv + 1);
	}
	if (argc > 1 && !strcmp(argv[1], "bench")) {
		free(bind);
		return bench_main(argc - 1, argv + 1);
	}
	if (argc > 1 && !strcmp(argv[1], "cache")) {
		free(bind);
		return cache_main(argc - 1, argv + 1);
	}
	if (argc > 1 && !strcmp(argv[1], "kir")) {
		free(bind);
		return kir_main(argc - 1, argv + 1);
	}
	if (argc > 1 && !strcmp(argv[1], "run") && run_model_wanted(argc - 1, argv + 1)) {
		free(bind);
		return run_model_main(argc - 1, argv + 1);
	}
	if (argc > 1 && (!strcmp(argv[1], "run") || !strcmp(argv[1], "repl"))) {
		free(bind);
		return dsl_main(argc - 1, argv + 1);
	}
	/* burncc MODEL --train [train options] -o STEP.c: the AOT train step,
	 * the spelling of burncc train MODEL -o STEP.c */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--train")) {
			static char train_word[] = "train";
			int n = 1;
			free(bind);
			for (int j = 1; j < argc; j++)
				if (j != i)
					argv[n++] = argv[j];
			argv[0] = train_word;
			argv[n] = NULL;
			return train_main(n, argv);
		}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			print_usage();
			free(bind);
			return 0;
		} else if (!strcmp(a, "--version")) {
			/* the version, then how this binary was built */
			printf("burncc %s\nbuild: git %s, %s, %s, %s\n", BURNCC_VERSION,
			       BURNCC_GIT, BURNCC_CC, BURNCC_LLVM, BURNCC_VK);
			free(bind);
			return 0;
		} else if (!strcmp(a, "-o")) {
			if (++i >= argc || !*argv[i]) die_usage("-o needs a file", NULL);
			out = argv[i];
		} else if (!strcmp(a, "--target")) {
			if (++i >= argc) die_usage("--target needs a name", NULL);
			if (!(be = backend_find(argv[i])))
				die_usage("unknown target (burncc --help lists them)", argv[i]);
		} else if (!strcmp(a, "--freestanding")) {
			freestanding = 1;
		} else if (!strcmp(a, "--cpu")) {
			Ctx sc;
			burn_ctx_init(&sc, NULL);
			if (burn_cpu_arg(&sc, ++i < argc ? argv[i] : NULL, &cpu))
				die_usage(sc.msg, NULL);
		} else if (!strncmp(a, "--weights=", 10)) {
			if (strcmp(a + 10, "blob") && strcmp(a + 10, "c"))
				die_usage("--weights takes c (the default) or blob", a + 10);
			blob = !strcmp(a + 10, "blob");
		} else if (!strcmp(a, "--weights-file")) {
			if (++i >= argc || !*argv[i]) die_usage("--weights-file needs a file", NULL);
			blob_file = argv[i];
		} else if (!strcmp(a, "--entry")) {
			if (++i >= argc || !*argv[i]) die_usage("--entry needs a function name", NULL);
			entry = argv[i];
		} else if (!strcmp(a, "--name")) {
			if (++i >= argc) die_usage("--name needs a prefix", NULL);
			name = argv[i];
		} else if (!strcmp(a, "--dim")) {
			char *eq, *end;
			if (++i >= argc) die_usage("--dim needs NAME=N", NULL);
			eq = strchr(argv[i], '=');
			if (!eq || eq == argv[i]) die_usage("--dim needs NAME=N", argv[i]);
			*eq = 0;
			for (int j = 0; j < nbind; j++)
				if (!strcmp(bind[j].name, argv[i])) {
					free(bind);
					die_usage("--dim given twice for", argv[i]);
				}
			bind[nbind].name = argv[i];
			bind[nbind].value = strtoll(eq + 1, &end, 10);
			if (*end || end == eq + 1 || bind[nbind].value < 0)
				die_usage("--dim value must be a non-negative integer", eq + 1);
			nbind++;
		} else if (!strcmp(a, "--dynamic-dim")) {
			if (++i >= argc || !*argv[i]) die_usage("--dynamic-dim needs a NAME", NULL);
			if (ndyn == 3) die_usage("--dynamic-dim: at most 3 dims, also given", argv[i]);
			dyn[ndyn++] = argv[i];
		} else if (!strncmp(a, "--emit=", 7)) {
			emit = a + 7;
			if (strcmp(emit, "ir") && strcmp(emit, "kernels") && strcmp(emit, "c") &&
			    strcmp(emit, "schedule") && strcmp(emit, "ptx") && strcmp(emit, "render") &&
			    strcmp(emit, "spirv"))
				die_usage("--emit takes ir, kernels, schedule, render, c, ptx or spirv", emit);
		} else if (!strcmp(a, "--schedule")) {
			Ctx sc;
			if (++i >= argc || !*argv[i]) die_usage("--schedule needs KERNEL=STEPS or a FILE", NULL);
			burn_ctx_init(&sc, NULL);
			if (burn_schedule_arg(&sc, &want_arena, argv[i], &want, &nwant)) {
				free(bind);
				arena_free(&want_arena);
				return report(&sc);
			}
		} else if (!strcmp(a, "--autotune")) {
			autotune = 1;
		} else if (!strcmp(a, "--stats")) {
			stats = 1;
		} else if (!strcmp(a, "--verify")) {
			verify = 1;
		} else if (!strcmp(a, "--no-fuse")) {
			no_fuse = 1;
		} else if (!strcmp(a, "--rng-counter")) {
			rng_counter = 1;
		} else if (!strcmp(a, "--max-file-bytes")) {
			lim[0] = limit_arg(a, ++i < argc ? argv[i] : NULL, INT64_MAX);
		} else if (!strcmp(a, "--max-tensor-bytes")) {
			lim[1] = limit_arg(a, ++i < argc ? argv[i] : NULL, INT64_MAX);
		} else if (!strcmp(a, "--max-depth")) {
			lim[2] = limit_arg(a, ++i < argc ? argv[i] : NULL, 1000);
		} else if (!strcmp(a, "--max-nodes")) {
			lim[3] = limit_arg(a, ++i < argc ? argv[i] : NULL, INT_MAX);
		} else if (!strcmp(a, "--max-fold-steps")) {
			lim[4] = limit_arg(a, ++i < argc ? argv[i] : NULL, INT64_MAX);
		} else if (!strcmp(a, "--max-fold-total")) {
			lim[5] = limit_arg(a, ++i < argc ? argv[i] : NULL, INT64_MAX);
		} else if (!strcmp(a, "--max-stack")) {
			max_stack = limit_arg(a, ++i < argc ? argv[i] : NULL, INT64_MAX);
		} else if (!strcmp(a, "--max-arena-bytes")) {
			lim[6] = limit_arg(a, ++i < argc ? argv[i] : NULL, INT64_MAX);
		} else if (!strcmp(a, "--string-bytes")) {
			lim[7] = limit_arg(a, ++i < argc ? argv[i] : NULL, INT64_MAX / 2);
		} else if (a[0] == '-' && a[1]) {
			die_usage("unknown option", a);
		} else if (model) {
			die_usage("more than one model given", a);
		} else {
			model = a;
		}
	}
	if (!model)
		die_usage("no model given", NULL);
	if (freestanding) {   /* the C target, without libc or libm */
		if (strcmp(be->name, "c") && strcmp(be->name, "c-freestanding"))
			die_usage("--freestanding is for the c target", be->name);
		be = backend_find("c-freestanding");
	}
	target = be->target;
	if (cpu) {
		if (target_with_cpu(be->target, cpu, &cpu_target))
			die_usage("--cpu is for the CPU targets (c, c-freestanding, llvm)", be->name);
		target = &cpu_target;
	}
	if (!out && !emit && !stats)
		die_usage("nothing to do: give -o FILE, --emit=WHAT or --stats", NULL);
	if (blob_file && !blob)
		die_usage("--weights-file names the blob of --weights=blob", blob_file);
	if (blob && (strcmp(be->ext ? be->ext : "", "c") || !strcmp(be->name, "wasm") ||
	             !out || wasm_out_wanted(out)))
		die_usage("--weights=blob: the c target's -o FILE.c only (a blob beside "
		          "the C; --emit=c has nowhere to put it)", be->name);
	if (!be->emit_module && (out || (emit && !strcmp(emit, "c"))))
		die_usage("this target has no renderer yet: it takes --emit=ir, "
		          "--emit=kernels and --stats only", be->name);
	/* --emit=c / --emit=ptx name what the target renders (Backend.ext) */
	if (emit && !strcmp(emit, "spirv") && strcmp(be->name, "vulkan"))
		die_usage("--emit=spirv: target vulkan only", be->name);
	if (emit && (!strcmp(emit, "c") || !strcmp(emit, "ptx")) &&
	    (!be->ext || strcmp(be->ext, emit)))
		die_usage("this target does not render that (--emit=c: target c, "
		          "--emit=ptx: target cuda)", emit);
	if (out && wasm_out_wanted(out) && strcmp(be->name, "wasm"))
		die_usage("-o FILE.wasm is for --target wasm", out);
	if (out && be->ext && strcmp(be->ext, "c") && !be->emit_host)
		die_usage("-o writes a C module; this target has none yet", be->name);
	if (name) {
		c_ident(name, prefix, sizeof prefix);
		if (strcmp(prefix, name))
			die_usage("--name must be a C identifier", name);
	} else {
		prefix_from_path(out ? out : model, prefix, sizeof prefix);
	}

	burn_ctx_init(&c, model);
	c.on_read = note_read;
	c.on_read_arg = &rs;
	if (lim[0] > 0) c.limits.max_file_bytes = lim[0];
	if (lim[1] > 0) c.limits.max_tensor_bytes = lim[1];
	if (lim[2] > 0) c.limits.max_depth = (int)lim[2];
	if (lim[3] > 0) c.limits.max_nodes = (int)lim[3];
	if (lim[4] > 0) c.limits.max_fold_steps = lim[4];
	if (lim[5] > 0) c.limits.max_fold_total = lim[5];
	if (lim[6] > 0) c.limits.max_arena_bytes = lim[6];
	if (lim[7] > 0) c.limits.string_bytes = lim[7];
	{
		CompileOpts o = { nbind, bind, verify, no_fuse, target, ndyn, dyn,
		                  nwant, want, rng_counter };
		char *caret = NULL;
		if (autotune) {
			/* the mma schedules timed on this machine's GPU (or read
			 * from the cache), then compiled as --schedule would */
			TuneResult tr[64];
			int ntr = 0;
			if (dsl_is_script(model) || !be->profile)
				die_usage("--autotune: an ONNX model for a target with a device "
				          "timer (cuda)", be->name);
			if (burn_autotune(&c, model, &o, be, 10, &want_arena, &want, &nwant, tr, 64,
			                  &ntr)) {
				free(bind);
				arena_free(&want_arena);
				readset_free(&rs);
				return report(&c);
			}
			for (int t = 0; t < ntr; t++)
				fprintf(stderr, "burncc: autotune: %s: %s%s\n", tr[t].kernel, tr[t].steps,
				        tr[t].candidates ? "" : " (from the cache)");
			o.nwant = nwant;
			o.want = want;
		}
		if (dsl_is_script(model) ? dsl_compile_file(&c, model, entry, &o, &m, &caret) ||
		                           burn_check_stack(&c, m, max_stack)
		                         : burn_compile_file_bounded(&c, model, &o, max_stack, &m)) {
			free(bind);
			arena_free(&want_arena);
			readset_free(&rs);
			rc = report(&c);
			if (caret)
				fputs(caret, stderr);
			free(caret);
			return rc;
		}
	}
	rc = dump ? burn_dump(&c, dump, m, be) : BURN_OK;
	if (!rc && emit && !strcmp(emit, "ir"))
		ir_print(stdout, m->g, 16);
	else if (!rc && emit && !strcmp(emit, "kernels"))
		kprog_print(stdout, &m->prog);
	else if (!rc && emit && !strcmp(emit, "schedule"))
		kprog_print_schedule(stdout, &m->prog);
	else if (!rc && emit && !strcmp(emit, "spirv")) {
#ifdef BURN_HAVE_VULKAN
		rc = spirv_emit_program(&c, &m->prog, stdout);
#endif
	}
	else if (!rc && emit && !strcmp(emit, "render")) {
		for (int k = 0; k < m->prog.nkernel && !rc; k++)
			rc = be->render_kernel ? be->render_kernel(&c, m->prog.kernel[k], stdout)
			     : burn_fail(&c, BURN_ERR_UNSUPPORTED, "target %s has no "
			                 "renderer", be->name);
	}
	else if (!rc && emit)
		rc = emit_c_stdout(&c, m, be, prefix, model);
	if (!rc && stats)
		printf("{\"kernels\": %d, \"arena_bytes\": %lld, "
		       "\"arena_lower_bound_bytes\": %lld, \"weights_bytes\": %lld%s%s%s}\n",
		       m->prog.nkernel, (long long)m->plan.arena_bytes,
		       (long long)m->plan.lower_bound, (long long)m->plan.weights_bytes,
		       target->cpu ? ", \"cpu\": \"" : "", target->cpu ? target->cpu->name : "",
		       target->cpu ? "\"" : "");
	if (!rc && out && wasm_out_wanted(out))
		rc = wasm_build(&c, m, be, out, model);
	else if (!rc && out)
		rc = emit_to_files(&c, m, be, out, prefix, model, &rs, blob, blob_file);
	burn_compiled_destroy(m);
	free(bind);
	arena_free(&want_arena);
	readset_free(&rs);
	return rc ? report(&c) : 0;
}

/*
 * wasm_build.c - the wasm target's C built into a .wasm (wasm_build.h).
 *
 * The compiler is clang, which has the wasm32 back end in every build, and
 * its linker wasm-ld (Debian: clang-19 and lld-19; clang finds wasm-ld
 * beside itself).  The flags:
 *   --target=wasm32 -nostdlib -ffreestanding   no C library at all: the
 *       module is freestanding C, so an undefined name is a link error
 *   -O3 -msimd128      loops vectorised to SIMD128 (every browser since 2021)
 *   -mbulk-memory -mnontrapping-fptoint -msign-ext   byte copies as
 *       memory.copy, float-to-int casts as one instruction (floor, round)
 *   -Wl,--no-entry     a library: the exports are the entry points
 *   -Wl,-z,stack-size  1 MiB of stack (a kernel frame is ~1 KiB)
 *   -Wl,--strip-all    no name section: a smaller download
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tools/wasm_build.h"

int wasm_out_wanted(const char *path)
{
	size_t n = path ? strlen(path) : 0;

	return n > 5 && !strcmp(path + n - 5, ".wasm");
}

/* Whether name runs from $PATH (or is a path that runs). */
static int on_path(const char *name)
{
	const char *p = getenv("PATH");
	char buf[4096];

	if (strchr(name, '/'))
		return access(name, X_OK) == 0;
	while (p && *p) {
		size_t n = strcspn(p, ":");
		snprintf(buf, sizeof buf, "%.*s/%s", (int)n, n ? p : ".", name);
		if (access(buf, X_OK) == 0)
			return 1;
		p += n + (p[n] == ':');
	}
	return 0;
}

/* Run argv with stdout and stderr to log; the exit status, or -1. */
static int spawn(char *const *argv, const char *log)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(127);
		alarm(600);
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The first line of the log that says "error", else its first line. */
static void first_error(const char *log, char *buf, size_t n)
{
	FILE *f = fopen(log, "r");
	char line[512];

	buf[0] = 0;
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		if (strstr(line, "error")) {
			snprintf(buf, n, "%s", line);
			break;
		}
		if (!buf[0])
			snprintf(buf, n, "%s", line);
	}
	if (f)
		fclose(f);
}

int wasm_build(Ctx *c, const Compiled *m, const Backend *be, const char *out,
               const char *model)
{
	const char *env = getenv("BURNCC_WASM_CC");
	const char *cc = env && *env ? env : on_path("clang-19") ? "clang-19"
	                 : on_path("clang") ? "clang" : NULL;
	const char *sl = strrchr(out, '/');
	char dir[4096], src[4200], hdr[4200], obj[4200], log[4200], why[512];
	ModuleOpts o = { "model", "model.h", model };
	FILE *fc = NULL, *fh = NULL;
	int rc = BURN_OK, st;

	c->file = c->node = c->op = NULL;   /* messages about -o and the build */
	if (!cc)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "--target wasm -o %s: no clang "
		                 "(clang-19 and lld-19: sh tools/setup.sh), or name one in "
		                 "$BURNCC_WASM_CC", out);
	/* the work folder beside out, so the result is renamed, not copied */
	snprintf(dir, sizeof dir, "%.*s.burncc-wasm-XXXXXX",
	         sl ? (int)(sl - out + 1) : 0, out);
	if (!mkdtemp(dir))
		return burn_fail(c, BURN_ERR_IO, "cannot write %s: %s", out, strerror(errno));
	snprintf(src, sizeof src, "%s/model.c", dir);
	snprintf(hdr, sizeof hdr, "%s/model.h", dir);
	snprintf(obj, sizeof obj, "%s/model.wasm", dir);
	snprintf(log, sizeof log, "%s/cc.log", dir);
	if (!(fc = fopen(src, "w")) || !(fh = fopen(hdr, "w")))
		rc = burn_fail(c, BURN_ERR_IO, "cannot write in %s: %s", dir, strerror(errno));
	if (!rc)
		rc = be->emit_module(c, m, &o, fc, fh);
	if (fc && fclose(fc) && !rc)
		rc = burn_fail(c, BURN_ERR_IO, "cannot write %s", src);
	if (fh && fclose(fh) && !rc)
		rc = burn_fail(c, BURN_ERR_IO, "cannot write %s", hdr);
	if (!rc) {
		char *argv[] = { (char *)cc, "--target=wasm32", "-std=c99", "-O3",
		                 "-ffreestanding", "-nostdlib", "-msimd128", "-mbulk-memory",
		                 "-mnontrapping-fptoint", "-msign-ext", "-Wl,--no-entry",
		                 "-Wl,-z,stack-size=1048576", "-Wl,--strip-all",
		                 "-o", obj, src, NULL };
		st = spawn(argv, log);
		if (st) {
			first_error(log, why, sizeof why);
			rc = burn_fail(c, BURN_ERR_IO, "--target wasm: %s %s: %s", cc,
			               st == 127 || st < 0 ? "did not start" : "failed",
			               why[0] ? why : "(no message)");
		}
	}
	if (!rc && rename(obj, out))
		rc = burn_fail(c, BURN_ERR_IO, "cannot write %s: %s", out, strerror(errno));
	unlink(obj);
	unlink(src);
	unlink(hdr);
	unlink(log);
	rmdir(dir);
	return rc;
}

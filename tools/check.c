/*
 * check.c - `burncc check DIR...`: the conformance runner.
 *
 * Each case goes through the real path: load, passes, C emission, the
 * system C compiler (with -Wall -Wextra -Werror, so a warning in generated
 * code is a failure), a run of the binary on the case's inputs, and a
 * comparison of every output with the expected one.
 *
 * Cases run in forked worker processes (-j), so a crash in the compiler
 * fails one case and not the run.  The generated module is linked with a
 * small generic harness (compiled once) that reads raw inputs, calls
 * model_run_v and writes raw outputs.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "passes/passes.h"
#include "frontend/onnx.h"
#include "codegen/target_iface.h"
#include "runtime/cache.h"
#include "tools/check.h"
#include "tools/check_grad.h"
#include "tools/check_random.h"
#include "tools/compile.h"
#include "tools/dump.h"

#define RTOL 1e-3
#define ATOL 1e-5
#define CASE_TIMEOUT 600   /* seconds for one whole case */
#define RUN_TIMEOUT 120    /* seconds for one run of the compiled model */

/* The harnesses' reader of an input file of exactly `want` bytes. */
#define HARNESS_SLURP \
	"static void *slurp(const char *p, int64_t want) {\n" \
	"  FILE *f = fopen(p, \"rb\"); char *b = malloc(want > 0 ? want : 1); int64_t n;\n" \
	"  if (!f || !b) exit(10);\n" \
	"  n = (int64_t)fread(b, 1, want > 0 ? want : 1, f);\n" \
	"  if (n != want || fgetc(f) != EOF) exit(11);\n" \
	"  fclose(f); return b; }\n"

static const char harness_src[] =
"#include <stdio.h>\n#include <stdlib.h>\n#include <stdint.h>\n#include <string.h>\n"
"typedef struct model_tensor_info { const char *name; int dtype; int rank;\n"
"    const int64_t *dims; int64_t bytes; } model_tensor_info;\n"
"extern const model_tensor_info model_inputs[], model_outputs[];\n"
"int model_run_v(const void *const *in, void *const *out, void *arena);\n"
HARNESS_SLURP
"/* a string tensor's file: its n strings, each NUL-terminated */\n"
"static void *strings(const char *p, int64_t n) {\n"
"  FILE *f = fopen(p, \"rb\"); char *b; const char **s; long len; int64_t k = 0, i = 0;\n"
"  if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) exit(10);\n"
"  b = malloc(len + 1); s = calloc(n + 1, sizeof *s);\n"
"  if (!b || !s || (long)fread(b, 1, len, f) != len) exit(11);\n"
"  fclose(f); b[len] = 0;\n"
"  while (k < n && i < len) { s[k++] = b + i; i += (int64_t)strlen(b + i) + 1; }\n"
"  if (k != n || i != len) exit(11);\n"
"  return (void *)s; }\n"
"int main(int argc, char **argv) {\n"
"  int64_t arena_bytes; int nin, nout, i; void **in, **out; void *arena;\n"
"  if (argc < 4) return 12;\n"
"  arena_bytes = atoll(argv[1]); nin = atoi(argv[2]); nout = atoi(argv[3]);\n"
"  if (argc != 4 + nin + nout) return 12;\n"
"  in = calloc(nin + 1, sizeof *in); out = calloc(nout + 1, sizeof *out);\n"
"  for (i = 0; i < nin; i++)\n"
"    in[i] = model_inputs[i].dtype == 8 ? strings(argv[4 + i], model_inputs[i].bytes / 8)\n"
"                                       : slurp(argv[4 + i], model_inputs[i].bytes);\n"
"  for (i = 0; i < nout; i++) out[i] = calloc(1, model_outputs[i].bytes + 1);\n"
"  arena = malloc(arena_bytes + 128);\n"
"  if (!arena) return 13;\n"
"  arena = (char *)arena + (64 - (uintptr_t)arena % 64);\n"
"  if ((i = model_run_v((const void *const *)in, out, arena))) {\n"
"    fprintf(stderr, \"the model returned status %d\\n\", i); return 14; }\n"
"  for (i = 0; i < nout; i++) {\n"
"    FILE *f = fopen(argv[4 + nin + i], \"wb\");\n"
"    if (f && model_outputs[i].dtype == 8) {\n"
"      int64_t k;\n"
"      for (k = 0; k < model_outputs[i].bytes / 8; k++) {\n"
"        const char *s = ((const char **)out[i])[k];\n"
"        if (fwrite(s, 1, strlen(s) + 1, f) != strlen(s) + 1) return 15; }\n"
"      fclose(f); continue; }\n"
"    if (!f || (int64_t)fwrite(out[i], 1, model_outputs[i].bytes, f) != model_outputs[i].bytes) return 15;\n"
"    fclose(f); }\n"
"  return 0; }\n";

/* The harness for --dynamic: the same with the dim's value first instead
 * of the arena's size (the arena is model_arena_bytes(N)), and the byte
 * counts of every input and output last (the generated tables say -1). */
static const char dyn_harness_src[] =
"#include <stdio.h>\n#include <stdlib.h>\n#include <stdint.h>\n"
"int model_run_v(const int64_t *dims, const void *const *in, void *const *out, void *arena);\n"
"int64_t model_arena_bytes(int64_t n);\n"
HARNESS_SLURP
"int main(int argc, char **argv) {\n"
"  int64_t dims[1], ab, *nb; int nin, nout, i; void **in, **out; char *arena;\n"
"  if (argc < 4) return 12;\n"
"  dims[0] = atoll(argv[1]); nin = atoi(argv[2]); nout = atoi(argv[3]);\n"
"  if (argc != 4 + 2 * (nin + nout)) return 12;\n"
"  in = calloc(nin + 1, sizeof *in); out = calloc(nout + 1, sizeof *out);\n"
"  nb = calloc(nin + nout + 1, sizeof *nb);\n"
"  for (i = 0; i < nin + nout; i++) nb[i] = atoll(argv[4 + nin + nout + i]);\n"
"  for (i = 0; i < nin; i++) in[i] = slurp(argv[4 + i], nb[i]);\n"
"  for (i = 0; i < nout; i++) out[i] = calloc(1, nb[nin + i] + 1);\n"
"  if ((ab = model_arena_bytes(dims[0])) < 0) {\n"
"    fprintf(stderr, \"model_arena_bytes(%lld) is %lld\\n\", (long long)dims[0], (long long)ab); return 16; }\n"
"  if (!(arena = malloc(ab + 128))) return 13;\n"
"  arena += 64 - (uintptr_t)arena % 64;\n"
"  if ((i = model_run_v(dims, (const void *const *)in, out, arena))) {\n"
"    fprintf(stderr, \"the model returned status %d\\n\", i); return 14; }\n"
"  for (i = 0; i < nout; i++) {\n"
"    FILE *f = fopen(argv[4 + nin + i], \"wb\");\n"
"    if (!f || (int64_t)fwrite(out[i], 1, nb[nin + i], f) != nb[nin + i]) return 15;\n"
"    fclose(f); }\n"
"  return 0; }\n";

/* The name --dynamic gives the leading input dim (one no model uses). */
#define DYN_DIM "burncc_check_batch"

typedef struct Opts {
	int jobs;
	int quiet_pass;
	int extreme;       /* --extreme: also run on inputs of extreme values */
	int grad;          /* --grad: gradient checks (check_grad.c) */
	int target_given;  /* --target was on the command line */
	int dynamic;       /* --dynamic: the leading input dim symbolic (DYN_DIM) */
	const char *keep;
	const char *cc;
	const Backend *be;  /* --target: what the cases compile for */
	const TargetCpu *cpu;  /* --cpu, or NULL: be->target's own */
	Target cpu_target;  /* be->target with cpu's tuning (--cpu) */
	const Target *target;  /* be->target or &cpu_target */
	Arena want_arena;   /* --schedule: the steps asked for */
	KWant *want;
	int nwant;
	char work[512];
	char harness[600];
} Opts;

/* ---- extreme inputs ---------------------------------------------------- */

/*
 * Fill t (nbytes of dtype dt) with the edge values of its type: for
 * integers MIN, MAX, -1, 0, 1, MIN + 1, MAX - 1; for floats +-inf, NaN,
 * +-1e30, +-0, 3e9, -1, 0.5, 255.5; for f16/bf16/float8 the bit patterns
 * of those classes.  Variant v picks another order, so binary ops see
 * other pairs.  Outputs are not compared (there is no reference); the
 * run must not fault, which under BURNCC_CFLAGS=-fsanitize=undefined
 * means the generated C has no undefined behaviour for these values.
 */
static void fill_extreme(int dt, void *t, int64_t nbytes, int v)
{
	static const double fv[] = { INFINITY, -INFINITY, NAN, 1e30, -1e30, 0.0,
		-0.0, 3e9, -1.0, 0.5, 255.5, -3e9, 1e-40 };
	static const int64_t iv[] = { INT64_MIN, INT64_MAX, -1, 0, 1,
		INT64_MIN + 1, INT64_MAX - 1 };
	static const uint16_t hv[] = { 0x7c00, 0xfc00, 0x7e00, 0x7bff, 0xfbff,
		0x0000, 0x8000, 0x0001, 0x3c00, 0xffff, 0x7f80, 0xff80 };
	static const uint8_t bv[] = { 0x00, 0x80, 0x7f, 0xff, 0x7e, 0xfe, 0x01,
		0x7c, 0xfc, 0x38 };
	int es = dtype_size(dt) > 0 ? dtype_size(dt) : 1;
	int64_t n = nbytes / es;

	for (int64_t i = 0; i < n; i++) {
		char *p = (char *)t + i * es;
		int64_t k = i * (v + 1) + v;
		int64_t x = iv[k % 7];
		int w = 8 * es;
		switch (dt) {
		case DT_F32: { float f = (float)fv[k % 13]; memcpy(p, &f, 4); break; }
		case DT_F64: memcpy(p, &fv[k % 13], 8); break;
		case DT_F16: case DT_BF16: memcpy(p, &hv[k % 12], 2); break;
		case DT_BOOL: *p = (char)(k & 1); break;
		default:
			if (dtype_is_f8(dt)) {
				*p = (char)bv[k % 10];
				break;
			}
			/* the type's own MIN/MAX: keep the low bits of the 64-bit edge
			 * value, with the sign bit of the type for MIN and MAX */
			if (w < 64) {
				uint64_t m = ((uint64_t)1 << w) - 1, u = (uint64_t)x & m;
				int sgn = dtype_is_signed(dt);
				if (k % 7 == 0) u = sgn ? (uint64_t)1 << (w - 1) : 0;
				if (k % 7 == 1) u = sgn ? m >> 1 : m;
				memcpy(p, &u, (size_t)es);   /* little-endian */
			} else {
				memcpy(p, &x, 8);
			}
		}
	}
}

/* ---- small process helpers -------------------------------------------- */

/* Run argv with stdout/stderr to log (if not NULL) and a timeout; returns
 * the exit status, 128+signal when killed, -1 when it could not start. */
static int run(char *const *argv, const char *log, int timeout)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (log) {
			FILE *f = freopen(log, "w", stdout);
			if (!f || dup2(fileno(stdout), 2) < 0)
				_exit(127);
		}
		alarm(timeout);   /* survives exec */
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

/* The first line of a compiler log that says "error" (else the first
 * line), with the path of the work folder dropped. */
static void first_line(const char *path, const char *wd, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	char line[512];

	buf[0] = 0;
	if (!f)
		return;
	/* prefer the first line that says "error" */
	while (fgets(line, sizeof line, f)) {
		char *l = line;
		if (!strncmp(l, wd, strlen(wd)) && l[strlen(wd)] == '/')
			l += strlen(wd) + 1;
		if (strstr(l, "error") || strstr(l, "warning")) {
			l[strcspn(l, "\n")] = 0;
			snprintf(buf, n, "%s", l);
			break;
		}
		if (!buf[0]) {
			l[strcspn(l, "\n")] = 0;
			snprintf(buf, n, "%s", l);
		}
	}
	fclose(f);
}

static int rm_one(const char *p, const struct stat *s, int flag, struct FTW *f)
{
	(void)s; (void)flag; (void)f;
	return remove(p);
}

static void rm_rf(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int write_file(const char *path, const void *p, int64_t n)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = n == 0 || fwrite(p, 1, n, f) == (size_t)n;
	return (fclose(f) == 0 && ok) ? 0 : -1;
}

static void *read_file(const char *path, int64_t *n)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long len;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc(len > 0 ? len : 1);
	if (b && len > 0 && fread(b, 1, len, f) != (size_t)len) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*n = len;
	return b;
}

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

/* ---- comparing ---------------------------------------------------------- */

static double half_to_double(uint16_t h, int bf16)
{
	uint32_t bits;
	float f;

	if (bf16) {
		bits = (uint32_t)h << 16;
	} else {
		uint32_t s = (h >> 15) & 1, e = (h >> 10) & 31, m = h & 1023;
		if (e == 0) {
			double v = ldexp((double)m, -24);
			return s ? -v : v;
		}
		if (e == 31)
			return m ? NAN : (s ? -INFINITY : INFINITY);
		bits = (s << 31) | ((e + 112) << 23) | (m << 13);
	}
	memcpy(&f, &bits, 4);
	return f;
}

/* A float8 code's value, decoded independently of the compiler's helpers:
 * sign, exponent, mantissa (3 bits for e4m3, 2 for e5m2) with the bias of
 * the format; NaN is 0x80 for the FNUZ formats, s.1111.111 for e4m3fn,
 * exponent 31 with a mantissa for e5m2 (which alone has infinities);
 * e8m0 is 2^(c - 127), 0xff NaN. */
static double f8_to_double(uint8_t c, int dt)
{
	int m = dt == DT_F8E4M3FN || dt == DT_F8E4M3FNUZ ? 3 : 2;
	int bias = dt == DT_F8E4M3FN ? 7 : dt == DT_F8E4M3FNUZ ? 8 :
	           dt == DT_F8E5M2 ? 15 : 16;
	int e = (c & 0x7f) >> m, f = c & ((1 << m) - 1);
	double v;

	if (dt == DT_F8E8M0)
		return c == 0xff ? NAN : ldexp(1, c - 127);
	if ((dt == DT_F8E4M3FNUZ || dt == DT_F8E5M2FNUZ) && c == 0x80)
		return NAN;
	if (dt == DT_F8E4M3FN && (c & 0x7f) == 0x7f)
		return NAN;
	if (dt == DT_F8E5M2 && e == 31)
		return f ? NAN : (c & 0x80) ? -INFINITY : INFINITY;
	v = e ? ldexp(f + (1 << m), e - bias - m) : ldexp(f, 1 - bias - m);
	return c & 0x80 ? -v : v;
}

/* Field i of a packed tensor (ONNX: element 0 in the low bits of byte 0),
 * as the w-bit unsigned number it holds. */
static int packed_field(const void *p, int w, int64_t i)
{
	return (((const uint8_t *)p)[i / (8 / w)] >> (i % (8 / w) * w)) & ((1 << w) - 1);
}

static double elem_f(const void *p, int dt, int64_t i)
{
	if (dt == DT_F4E2M1) {   /* s.ee.m, bias 1: 0 0.5 1 1.5 2 3 4 6 */
		int c = packed_field(p, 4, i), e = (c >> 1) & 3, m = c & 1;
		double v = e ? ldexp(2 + m, e - 2) : 0.5 * m;
		return c & 8 ? -v : v;
	}
	if (dtype_is_f8(dt))
		return f8_to_double(((const uint8_t *)p)[i], dt);
	switch (dt) {
	case DT_F32: return ((const float *)p)[i];
	case DT_F64: return ((const double *)p)[i];
	case DT_F16: return half_to_double(((const uint16_t *)p)[i], 0);
	case DT_BF16: return half_to_double(((const uint16_t *)p)[i], 1);
	}
	return 0;
}

static int64_t elem_i(const void *p, int dt, int64_t i)
{
	if (dtype_is_packed(dt)) {   /* int4, uint4, int2, uint2 */
		int w = dtype_bits(dt), f = packed_field(p, w, i);
		return dtype_is_signed(dt) && f >> (w - 1) ? f - (1 << w) : f;
	}
	switch (dt) {
	case DT_U8: case DT_BOOL: return ((const uint8_t *)p)[i];
	case DT_I8: return ((const int8_t *)p)[i];
	case DT_U16: return ((const uint16_t *)p)[i];
	case DT_I16: return ((const int16_t *)p)[i];
	case DT_I32: return ((const int32_t *)p)[i];
	case DT_U32: return ((const uint32_t *)p)[i];
	case DT_I64: return ((const int64_t *)p)[i];
	case DT_U64: return (int64_t)((const uint64_t *)p)[i];
	}
	return 0;
}

double check_elem_f(const void *p, int dt, int64_t i)
{
	return dtype_is_float(dt) ? elem_f(p, dt, i) : (double)elem_i(p, dt, i);
}

/* v's dtype and shape against expected tensor e; reason on mismatch. */
static int compare_type(const Value *v, const Tensor *e, char *why, size_t n)
{
	char gs[128];

	if (v->dtype != e->dtype) {
		snprintf(why, n, "output '%s' has dtype %s, expected %s", v->name,
		         dtype_name(v->dtype), dtype_name(e->dtype));
		return 1;
	}
	if (v->rank != e->rank || memcmp(v->dim, e->dim, sizeof(int64_t) * e->rank)) {
		Value ev = *v;
		char es[128];
		ev.rank = e->rank;
		memcpy(ev.dim, e->dim, sizeof(int64_t) * e->rank);
		for (int i = 0; i < e->rank; i++)
			ev.sym[i] = NULL;
		snprintf(why, n, "output '%s' has shape %s, expected %s", v->name,
		         value_type_str(v, gs, sizeof gs), value_type_str(&ev, es, sizeof es));
		return 1;
	}
	return 0;
}

/* Compare got (dtype/shape of v) with expected tensor e; reason on mismatch. */
static int compare(const Value *v, const void *got, const Tensor *e,
                   char *why, size_t n)
{
	int64_t numel = 1, bad = 0, first = -1;
	double rtol = RTOL, atol = ATOL;

	if (compare_type(v, e, why, n))
		return 1;
	for (int i = 0; i < e->rank; i++)
		numel *= e->dim[i];
	if (dtype_is_string(e->dtype)) {
		const char *const *x = got, *const *y = e->data;
		for (int64_t i = 0; i < numel; i++)
			if (strcmp(x[i], y[i])) {
				snprintf(why, n, "output '%s'[%lld] is \"%.40s\", expected \"%.40s\"",
				         v->name, (long long)i, x[i], y[i]);
				return 1;
			}
		return 0;
	}
	/* 16-bit floats: a few ulps, since the reference may round after every
	 * op where a fused kernel keeps f32 in between */
	if (e->dtype == DT_F16) {
		rtol = 4e-3;
		atol = 1e-3;
	} else if (e->dtype == DT_BF16) {
		rtol = 2e-2;
		atol = 1e-2;
	}
	for (int64_t i = 0; i < numel; i++) {
		int ok;
		if (dtype_is_float(e->dtype)) {
			double a = elem_f(got, e->dtype, i), b = elem_f(e->data, e->dtype, i);
			ok = (isnan(a) && isnan(b)) || a == b || fabs(a - b) <= atol + rtol * fabs(b);
		} else {
			ok = elem_i(got, e->dtype, i) == elem_i(e->data, e->dtype, i);
		}
		if (!ok && bad++ == 0)
			first = i;
	}
	if (!bad)
		return 0;
	if (dtype_is_float(e->dtype))
		snprintf(why, n, "output '%s': %lld of %lld values differ; first at %lld: "
		         "got %.9g, expected %.9g", v->name, (long long)bad,
		         (long long)numel, (long long)first,
		         elem_f(got, e->dtype, first), elem_f(e->data, e->dtype, first));
	else
		snprintf(why, n, "output '%s': %lld of %lld values differ; first at %lld: "
		         "got %lld, expected %lld", v->name, (long long)bad,
		         (long long)numel, (long long)first,
		         (long long)elem_i(got, e->dtype, first),
		         (long long)elem_i(e->data, e->dtype, first));
	return 1;
}

/* Output i of the compiled model mg (values outs[]) against e; an output
 * that depends on random draws (ro[i].tainted) by its op's rule
 * (tools/check_random.h), in[] the data set's inputs. */
static int compare_out(const RandOut *ro, const Graph *mg, int i,
                       const void *const *outs, const Tensor *e, const Tensor *in,
                       char *why, size_t n)
{
	const Value *v = GV(mg, mg->out[i]);
	int rc;

	if (ro && ro[i].tainted) {
		if (compare_type(v, e, why, n))
			return 1;
		if ((rc = check_random_compare(&ro[i], i, mg, outs, e, in, why, n)) >= 0)
			return rc;
	}
	return compare(v, outs[i], e, why, n);
}

/* ---- one case ----------------------------------------------------------- */

static int count_pb(const char *dir, const char *kind)
{
	char p[1024];
	int k = 0;

	for (;; k++) {
		snprintf(p, sizeof p, "%s/%s_%d.pb", dir, kind, k);
		if (!exists(p))
			return k;
	}
}

/*
 * Sequences and optionals in the data files.  A graph input or output
 * declared a sequence is one SequenceProto file holding its elements, an
 * optional one OptionalProto.  burncc resolves both at compile time: set
 * 0's inputs bind each such input (graph_bind_input: a sequence of N
 * becomes N tensor inputs "NAME/K", an empty optional none), and a
 * sequence output comes out as one graph output per element, in order.
 * So the files of a data set are read into one flat list of tensors, the
 * elements in place of their sequence, which matches the compiled graph's
 * inputs and outputs one to one.
 */
typedef struct SetFiles {
	int nfile;
	int *decl;      /* per file: ValueDecl of its input or output */
	int *kind;      /* per file: VD_TENSOR, VD_SEQ or -1 (none), as read */
	int *count;     /* per file: its tensors (1, the elements, 0) */
	Tensor *t;      /* all files' tensors, flat (arena) */
	int n;
} SetFiles;

static int set_files_init(SetFiles *f, int nfile)
{
	memset(f, 0, sizeof *f);
	f->nfile = nfile;
	f->decl = calloc((size_t)nfile + 1, sizeof *f->decl);
	f->kind = calloc((size_t)nfile + 1, sizeof *f->kind);
	f->count = calloc((size_t)nfile + 1, sizeof *f->count);
	return f->decl && f->kind && f->count ? 0 : -1;
}

static void set_files_free(SetFiles *f)
{
	free(f->decl);
	free(f->kind);
	free(f->count);
	memset(f, 0, sizeof *f);
}

/* Read set's files WHAT_0.pb ... into f (f->decl given), flat. */
static int set_files_read(Ctx *c, const char *set, const char *what, Arena *a,
                          SetFiles *f)
{
	char p[1200];
	Tensor **ts = calloc((size_t)f->nfile + 1, sizeof *ts);
	int total = 0;

	if (!ts)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	for (int i = 0; i < f->nfile; i++) {
		snprintf(p, sizeof p, "%s/%s_%d.pb", set, what, i);
		if (onnx_load_value_file(c, p, a, f->decl[i], &f->kind[i], &ts[i],
		                         &f->count[i])) {
			free(ts);
			return c->code ? c->code : BURN_ERR_IO;
		}
		total += f->count[i];
	}
	f->n = total;
	if (!(f->t = arena_alloc(a, sizeof *f->t * (size_t)(total + 1)))) {
		free(ts);
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	for (int i = 0, k = 0; i < f->nfile; i++)
		for (int j = 0; j < f->count[i]; j++)
			f->t[k++] = ts[i][j];
	free(ts);
	return BURN_OK;
}

/* Bind g's sequence and optional inputs to f's (set 0's) data. */
static int bind_inputs(Ctx *c, Graph *g, const SetFiles *f)
{
	int at = f->n;

	for (int i = f->nfile - 1; i >= 0; i--) {
		at -= f->count[i];
		if (f->decl[i] != VD_TENSOR &&
		    graph_bind_input(c, g, i, f->kind[i], f->count[i], &f->t[at]))
			return c->code;
	}
	return BURN_OK;
}

/* A target that runs in process (Backend.run; the gpu target: its
 * schedules run by the interpreter with GPU semantics) instead of writing
 * C: every data set through be->run, no C compiler involved. */
static int dyn_in(const Graph *g, int j);
static char dyn_axes(const Value *v);
static int dyn_bind_outputs(Graph *g, const char *dynout, int64_t dim,
                            void **out, char *res, size_t n);

static void run_sets_in_process(const Backend *be, Compiled *m, const char *dir,
                                int nin, const Tensor *in0, const char *frozen,
                                const RandOut *ro, SetFiles *fin, SetFiles *fout,
                                Arena *a, Ctx *c, int dynamic, char *res, size_t n)
{
	char set[1024], why[600];
	const void **in = calloc((size_t)m->g->nin + 1, sizeof *in);
	void **out = calloc((size_t)m->g->nout + 1, sizeof *out);
	char *dynout = calloc((size_t)m->g->nout + 1, 1);

	if (!in || !out || !dynout) {
		snprintf(res, n, "FAIL: out of memory");
		goto done;
	}
	for (int i = 0; i < m->g->nout; i++) {
		const Value *v = GV(m->g, m->g->out[i]);
		int64_t nb = value_nbytes(v);
		/* --dynamic: the outputs of the dim get their sizes per data set */
		dynout[i] = dynamic ? dyn_axes(v) : 0;
		if (!dynout[i] && (nb < 0 || !(out[i] = calloc((size_t)nb + 1, 1)))) {
			snprintf(res, n, "FAIL: cannot allocate output %d", i);
			goto done;
		}
	}
	for (int s = 0;; s++) {
		int k = 0, nout;
		int64_t dim = -1;
		snprintf(set, sizeof set, "%s/test_data_set_%d", dir, s);
		if (!exists(set))
			break;
		if (count_pb(set, "output") != fout->nfile) {
			snprintf(res, n, "FAIL: %d output files for %d graph outputs",
			         count_pb(set, "output"), fout->nfile);
			goto done;
		}
		if (set_files_read(c, set, "output", a, fout))
			goto fail_ctx;
		nout = fout->n;
		if (nout != m->g->nout) {
			snprintf(res, n, "FAIL: %d output tensors for %d graph outputs "
			         "(sequence lengths differ)", nout, m->g->nout);
			goto done;
		}
		if (s > 0) {
			if (set_files_read(c, set, "input", a, fin))
				goto fail_ctx;
			if (fin->n != nin) {
				snprintf(res, n, "FAIL: data set %d's sequences have other "
				         "lengths than set 0's", s);
				goto done;
			}
		}
		for (int i = 0; i < nin; i++) {
			const Tensor *t = s > 0 ? &fin->t[i] : &in0[i];
			if (frozen[i])
				continue;
			if (dynamic && dyn_in(m->g, k)) {
				if (dim >= 0 && t->dim[0] != dim) {
					snprintf(res, n, "FAIL: data set %d: the batched inputs' "
					         "leading dims differ", s);
					goto done;
				}
				dim = t->dim[0];
			}
			in[k++] = t->data;
		}
		if (dynamic) {
			if (dyn_bind_outputs(m->g, dynout, dim, out, res, n))
				goto done;
			if (be->run_dims(c, m, &dim, in, out, NULL))
				goto fail_ctx;
		} else if (be->run(c, m, in, out, NULL)) {
			goto fail_ctx;
		}
		for (int i = 0; i < nout; i++) {
			const Tensor *e = &fout->t[i];
			if (compare_out(ro, m->g, i, (const void *const *)out, e,
			                s > 0 ? fin->t : in0, why, sizeof why)) {
				snprintf(res, n, "FAIL: %s%s", s ? "data set " : "", why);
				goto done;
			}
		}
	}
	goto done;
fail_ctx:
	snprintf(res, n, "FAIL: %s", c->msg);
done:
	if (out)
		for (int i = 0; i < m->g->nout; i++)
			free(out[i]);
	free(out);
	free(in);
	free(dynout);
}

/* "FAIL: " and c's message into res; returns 1. */
static int fail_res(const Ctx *c, char *res, size_t n)
{
	snprintf(res, n, "FAIL: %s", c->msg[0] ? c->msg : burn_code_name(c->code));
	return 1;
}

/* Emit m for be as C: model.c and model.h in wd.  0, or 1 with
 * "FAIL: reason" in res. */
static int emit_module_files(const Backend *be, const Compiled *m, const char *model,
                             const char *wd, Ctx *c, char *res, size_t n)
{
	char p[1200];
	ModuleOpts eo = { "model", "model.h", model };
	FILE *fc, *fh;
	int rc;
	snprintf(p, sizeof p, "%s/model.c", wd);
	fc = fopen(p, "w");
	snprintf(p, sizeof p, "%s/model.h", wd);
	fh = fopen(p, "w");
	if (!fc || !fh) {
		snprintf(res, n, "FAIL: cannot write to %s", wd);
		if (fc) fclose(fc);
		if (fh) fclose(fh);
		return 1;
	}
	rc = be->emit_module(c, m, &eo, fc, fh);
	fclose(fc);
	fclose(fh);
	if (rc)
		return fail_res(c, res, n);
	return 0;
}

/* Build wd/model.c with cc and the harness object into wd/model.  0, or 1
 * with "FAIL: reason" in res. */
static int compile_module(const Backend *be, const char *cc, const char *harness,
                          const char *wd, char *res, size_t n)
{
	char why[600];
	/* $BURNCC_CFLAGS (words split on spaces) replace -O1, e.g.
	 * "-O3 -march=native -fopenmp" to check the fast builds */
	char src[1200], bin[1200], log[1200], flags[512];
	char *argv[48];
	int k = 0;
	const char *ef = getenv("BURNCC_CFLAGS");
	snprintf(flags, sizeof flags, "%s", ef && *ef ? ef : "-O1");
	argv[k++] = (char *)cc;
	argv[k++] = "-std=c99";
	for (char *t = strtok(flags, " "); t && k < 36; t = strtok(NULL, " "))
		argv[k++] = t;
	/* -pedantic: the generated C is ISO C99 (no overlong string
	 * literal, no extension), which firmware toolchains insist on */
	argv[k++] = "-pedantic";
	argv[k++] = "-Wall"; argv[k++] = "-Wextra"; argv[k++] = "-Werror";
	snprintf(src, sizeof src, "%s/model.c", wd);
	snprintf(bin, sizeof bin, "%s/model", wd);
	snprintf(log, sizeof log, "%s/cc.log", wd);
	if (!strcmp(be->name, "c-freestanding") || !strcmp(be->name, "wasm")) {
		/* freestanding (wasm: its C, exports aside): the module alone, with the flags firmware
		 * builds use, then linked with no library at all (any
		 * name from libc, libm or libgcc is an undefined symbol),
		 * then with the hosted harness */
		char obj[1200];
		int f0 = k, bare = !(ef && strstr(ef, "-fsanitize"));
		snprintf(obj, sizeof obj, "%s/model.o", wd);
		argv[k++] = "-ffreestanding"; argv[k++] = "-Wcast-align";
		argv[k++] = "-Wfloat-equal"; argv[k++] = "-c";
		argv[k++] = "-o"; argv[k++] = obj; argv[k++] = src; argv[k] = NULL;
		if (run(argv, log, CASE_TIMEOUT)) {
			first_line(log, wd, why, sizeof why);
			snprintf(res, n, "FAIL: generated C does not build: %s", why);
			return 1;
		}
		char *link[] = { (char *)cc, "-nostdlib", "-static",
		                 "-Wl,-e,model_run_v", "-o", bin, obj, NULL };
		if (bare && run(link, log, CASE_TIMEOUT)) {
			first_line(log, wd, why, sizeof why);
			snprintf(res, n, "FAIL: freestanding C needs a library: %s", why);
			return 1;
		}
		k = f0;
		argv[k++] = "-o"; argv[k++] = bin; argv[k++] = obj;
	} else {
		argv[k++] = "-o"; argv[k++] = bin; argv[k++] = src;
	}
	argv[k++] = (char *)harness; argv[k++] = "-lm"; argv[k] = NULL;
	if (run(argv, log, CASE_TIMEOUT)) {
		first_line(log, wd, why, sizeof why);
		snprintf(res, n, "FAIL: generated C does not build: %s", why);
		return 1;
	}
	return 0;
}

/* Emit m for be as C and build it (emit_module_files, compile_module). */
static int build_module(const Backend *be, const Compiled *m, const char *model,
                        const char *cc, const char *harness, const char *wd,
                        Ctx *c, char *res, size_t n)
{
	return emit_module_files(be, m, model, wd, c, res, n) ||
	       compile_module(be, cc, harness, wd, res, n);
}

/* Run the binary build_module made on one set of inputs (in[i]: nbytes[i]
 * bytes, the compiled graph's inputs in order; written to wd/inI.bin), the
 * outputs read back from wd/outI.bin into out[i] (each value_nbytes of the
 * graph's output).  0, or 1 with "FAIL: reason" in res. */
/*
 * String tensors cross to the harness as files of their strings, each
 * NUL-terminated, one after another.  strings_write writes the n strings
 * of s (an array of pointers) to path; strings_read reads such a file
 * into the n pointers of out, pointing into the file's bytes, which stay
 * alive until the next run_built (check runs one case at a time in a
 * worker process).
 */
static char *str_bytes[64];
static int nstr_bytes;

static int strings_write(const char *path, const char *const *s, int64_t n)
{
	FILE *f = fopen(path, "wb");
	int bad = !f;

	for (int64_t k = 0; k < n && !bad; k++)
		bad = fwrite(s[k], 1, strlen(s[k]) + 1, f) != strlen(s[k]) + 1;
	if (f && fclose(f))
		bad = 1;
	return bad;
}

static int strings_read(const char *path, const char **out, int64_t n)
{
	int64_t len, i = 0, k = 0;
	char *b;

	if (nstr_bytes == 64 || !(b = read_file(path, &len)))
		return 1;
	str_bytes[nstr_bytes++] = b;
	while (k < n && i < len) {
		out[k++] = b + i;
		i += (int64_t)strnlen(b + i, (size_t)(len - i)) + 1;
	}
	return k != n || i != len;
}

/* run_built for a model with the dynamic dim DYN_DIM (dyn_harness_src)
 * at value dim, or (dim < 0) a static one: the byte counts of the outputs
 * are value_nbytes of m's outputs, which the caller has bound to dim. */
static int run_built_dim(const Compiled *m, const char *wd, int64_t dim,
                         const void *const *in, const int64_t *nbytes,
                         void *const *out, char *res, size_t n)
{
	char bin[1200], ab[32], ni[16], no[16], log[1200], p[1200];
	int nin = m->g->nin, nout = m->g->nout, k = 0, rc, bad = 0;
	char **argv = calloc((size_t)(6 + 2 * (nin + nout)), sizeof *argv);

	if (!argv) {
		snprintf(res, n, "FAIL: out of memory");
		return 1;
	}
	snprintf(bin, sizeof bin, "%s/model", wd);
	snprintf(ab, sizeof ab, "%lld", (long long)(dim >= 0 ? dim : m->plan.arena_bytes));
	snprintf(ni, sizeof ni, "%d", nin);
	snprintf(no, sizeof no, "%d", nout);
	argv[k++] = bin; argv[k++] = ab; argv[k++] = ni; argv[k++] = no;
	while (nstr_bytes > 0)
		free(str_bytes[--nstr_bytes]);
	for (int i = 0; i < nin && !bad; i++) {
		const Value *v = GV(m->g, m->g->in[i]);
		snprintf(p, sizeof p, "%s/in%d.bin", wd, i);
		bad = (dtype_is_string(v->dtype)
		       ? strings_write(p, in[i], nbytes[i] / (int64_t)sizeof(char *))
		       : write_file(p, in[i], nbytes[i])) || !(argv[k++] = strdup(p));
	}
	for (int i = 0; i < nout && !bad; i++) {
		snprintf(p, sizeof p, "%s/out%d.bin", wd, i);
		bad = !(argv[k++] = strdup(p));
	}
	for (int i = 0; dim >= 0 && i < nin + nout && !bad; i++) {
		snprintf(p, sizeof p, "%lld", (long long)(i < nin ? nbytes[i]
		         : value_nbytes(GV(m->g, m->g->out[i - nin]))));
		bad = !(argv[k++] = strdup(p));
	}
	if (bad) {
		snprintf(res, n, "FAIL: cannot write the inputs to %s", wd);
		goto done;
	}
	snprintf(log, sizeof log, "%s/run.log", wd);
	rc = run(argv, log, RUN_TIMEOUT);
	if (rc) {
		bad = 1;
		if (rc == 128 + SIGALRM)
			snprintf(res, n, "FAIL: timed out after %d s", RUN_TIMEOUT);
		else if (rc > 128)
			snprintf(res, n, "FAIL: generated code crashed (signal %d)", rc - 128);
		else
			snprintf(res, n, "FAIL: harness exit status %d", rc);
		goto done;
	}
	for (int i = 0; i < nout && !bad; i++) {
		int64_t len, want = value_nbytes(GV(m->g, m->g->out[i]));
		void *got;
		snprintf(p, sizeof p, "%s/out%d.bin", wd, i);
		if (dtype_is_string(GV(m->g, m->g->out[i])->dtype)) {
			if (strings_read(p, out[i], want / (int64_t)sizeof(char *))) {
				snprintf(res, n, "FAIL: no output %d", i);
				bad = 1;
			}
			continue;
		}
		if (!(got = read_file(p, &len)) || len != want) {
			snprintf(res, n, "FAIL: no output %d", i);
			bad = 1;
		} else {
			memcpy(out[i], got, (size_t)len);
		}
		free(got);
	}
done:
	for (int i = 4; i < k; i++)
		free(argv[i]);
	free(argv);
	return bad;
}

static int run_built(const Compiled *m, const char *wd, const void *const *in,
                     const int64_t *nbytes, void *const *out, char *res, size_t n)
{
	return run_built_dim(m, wd, -1, in, nbytes, out, res, n);
}

/* Write and compile check's harness (harness_src) in work: the object's
 * path into obj.  0, or -1 when the compiler fails. */
static int build_harness_src(const char *cc, const char *work, const char *text,
                             size_t len, char *obj, size_t nobj)
{
	char src[700], log[700];
	char *av[] = { (char *)cc, "-std=c99", "-O1", "-c", "-o", obj, src, NULL };

	snprintf(src, sizeof src, "%s/harness.c", work);
	snprintf(obj, nobj, "%s/harness.o", work);
	snprintf(log, sizeof log, "%s/harness.log", work);
	return write_file(src, text, (int64_t)len) || run(av, log, 120) ? -1 : 0;
}

static int build_harness(const char *cc, const char *work, char *obj, size_t nobj)
{
	return build_harness_src(cc, work, harness_src, sizeof harness_src - 1, obj,
	                         nobj);
}

/* The cache key of a C build: the generated files, the compiler, the
 * flags and the harness (so any change to what would be built misses). */
static int build_key(const char *wd, const char *cc, unsigned char key[32])
{
	static const char *const files[] = { "model.c", "model.h" };
	const char *ef = getenv("BURNCC_CFLAGS");
	BurnSha256 h;

	burn_sha256_init(&h);
	burn_sha256_update(&h, "burncc check_run_once C build 1", 31);
	for (int i = 0; i < 2; i++) {
		char p[1200];
		int64_t len;
		void *d;
		snprintf(p, sizeof p, "%s/%s", wd, files[i]);
		if (!(d = read_file(p, &len)))
			return -1;
		burn_sha256_update(&h, &len, sizeof len);
		burn_sha256_update(&h, d, (size_t)len);
		free(d);
	}
	burn_sha256_update(&h, cc, strlen(cc) + 1);
	burn_sha256_update(&h, ef ? ef : "", strlen(ef ? ef : "") + 1);
	burn_sha256_update(&h, harness_src, sizeof harness_src);
	burn_sha256_final(&h, key);
	return 0;
}

int check_run_once(Ctx *c, const Backend *be, const Compiled *m, const char *model,
                   const char *wd, const void *const *in, void *const *out)
{
	const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	const char *dir = getenv("BURNCC_CACHE_DIR");
	char harness[700], res[1024], bin[1200];
	unsigned char key[32];
	int64_t *nb = NULL;
	BurnCache bc;
	Ctx cc_ctx;
	void *data;
	size_t len;
	int64_t blen;
	int bad, hit = 0, keyed;

	if (be->run)
		return be->run(c, m, in, out, NULL);
	if (!be->emit_module)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "target %s can neither render "
		                 "nor run", be->name);
	if (emit_module_files(be, m, model, wd, c, res, sizeof res))
		return burn_fail(c, c->code ? c->code : BURN_ERR_IO, "%s", res + 6);
	/* the built binary is cached like the llvm target's objects: in
	 * $BURNCC_CACHE_DIR, else the default directory (off when unusable) */
	burn_ctx_init(&cc_ctx, NULL);
	if (burn_cache_open(&cc_ctx, &bc, dir ? dir : "", 0))
		bc.fd = -1;
	snprintf(bin, sizeof bin, "%s/model", wd);
	keyed = bc.fd >= 0 && !build_key(wd, cc, key);
	if (keyed && burn_cache_get(&bc, key, &data, &len)) {
		hit = !write_file(bin, data, (int64_t)len) && !chmod(bin, 0700);
		free(data);
	}
	res[0] = 0;
	if (!hit) {
		if (build_harness(cc, wd, harness, sizeof harness)) {
			char log[1200], why[600];
			snprintf(log, sizeof log, "%s/harness.log", wd);
			first_line(log, wd, why, sizeof why);
			burn_cache_close(&bc);
			return burn_fail(c, BURN_ERR_IO, "cannot build the harness with %s%s%s",
			                 cc, why[0] ? ": " : "", why);
		}
		if (compile_module(be, cc, harness, wd, res, sizeof res)) {
			burn_cache_close(&bc);
			return burn_fail(c, BURN_ERR_IO, "%s", res + 6);
		}
		if (keyed && (data = read_file(bin, &blen)) != NULL) {
			burn_cache_put(&bc, key, data, (size_t)blen);
			free(data);
		}
	}
	burn_cache_close(&bc);
	if (!(nb = calloc((size_t)m->g->nin + 1, sizeof *nb)))
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	for (int i = 0; i < m->g->nin; i++)
		nb[i] = value_nbytes(GV(m->g, m->g->in[i]));
	bad = run_built(m, wd, in, nb, out, res, sizeof res);
	free(nb);
	return bad ? burn_fail(c, BURN_ERR_IO, "%s", res + 6) : BURN_OK;
}

/* The most ways of choosing the batched inputs --dynamic tries. */
#define DYN_WAYS 8

/* Whether graph input v may carry the batch: a tensor (numeric or of
 * strings) with a leading axis. */
static int dyn_ok(const Value *v)
{
	return v->decl == VD_TENSOR && v->rank >= 1;
}

/*
 * --dynamic: the ways of choosing the inputs that carry the batch, as
 * masks over the inputs (in[i] the data of input i, the frozen ones made
 * constants and dropped from g's inputs); the inputs' leading axis is the
 * batch, so which input is data and which a weight of the same leading
 * size is the question.  For each input that may carry it (dyn_ok), in
 * order, the seed: every such input of the seed's leading size, then that
 * set less each of the others, then the seed alone.  At most max ways;
 * 0 when no input may carry it, with "SPECIALISED: why" or "REFUSED: why"
 * in res: the first when nothing could (every input a scalar or frozen:
 * data the shapes depend on), the second when a sequence or optional
 * input, which this mode does not batch, could.
 */
static int dyn_ways(const Graph *g, const Tensor *in, const char *frozen,
                    int nin, uint64_t *ways, int max, char *res, size_t n)
{
	const Value *other = NULL;
	int nw = 0;

	for (int s = 0, js = 0; s < nin && s < 64 && js < g->nin && nw < max; s++) {
		uint64_t same = 0;
		int nsame = 0;
		if (frozen[s])
			continue;
		if (!dyn_ok(GV(g, g->in[js++]))) {
			const Value *v = GV(g, g->in[js - 1]);
			if (!other && v->decl != VD_TENSOR)
				other = v;
			continue;
		}
		for (int i = 0, j = 0; i < nin && i < 64 && j < g->nin; i++) {
			if (frozen[i])
				continue;
			if (dyn_ok(GV(g, g->in[j++])) && in[i].dim[0] == in[s].dim[0]) {
				same |= (uint64_t)1 << i;
				nsame++;
			}
		}
		/* a seed of an earlier one's size gives the same ways again */
		if (same & (((uint64_t)1 << s) - 1))
			continue;
		ways[nw++] = same;
		/* (with two, less the other is the seed alone, below) */
		for (int i = 0; i < 64 && nsame > 2 && nw < max; i++)
			if (i != s && (same >> i & 1))
				ways[nw++] = same & ~((uint64_t)1 << i);
		if (nsame > 1 && nw < max)
			ways[nw++] = (uint64_t)1 << s;
	}
	if (nw == 0) {
		if (other)
			snprintf(res, n, "REFUSED: input '%s' is a sequence or an "
			         "optional: this mode batches tensors only", other->name);
		else
			snprintf(res, n, "SPECIALISED: no input left to size at run "
			         "time: each is a scalar, or data the shapes depend on "
			         "(made a constant, as the static check does)");
	}
	return nw;
}

/* --dynamic: make axis 0 the dim DYN_DIM on the inputs of way (dyn_ways;
 * in, frozen and nin as there), or with probe >= 0 that static size (the
 * probe of dyn_pinned), and every dim of the declared outputs unknown
 * (the batch may reach any axis; the comparison checks the shapes). */
static void dyn_setup(Graph *g, const char *frozen, int nin, uint64_t way,
                      int64_t probe)
{
	for (int i = 0, j = 0; i < nin && j < g->nin; i++) {
		Value *v;
		if (frozen[i])
			continue;
		v = GV(g, g->in[j++]);
		if (i >= 64 || !(way >> i & 1))
			continue;
		if (probe >= 0) {
			v->dim[0] = probe;
			v->sym[0] = NULL;
		} else {
			v->sym[0] = DYN_DIM;
		}
	}
	for (int i = 0; g->out_decl && i < g->nout; i++)
		for (int d = 0; d < g->out_decl[i].rank; d++) {
			g->out_decl[i].dim[d] = -1;
			g->out_decl[i].sym[d] = NULL;
		}
}

/* The leading size of the inputs of way (the first of them). */
static int64_t dyn_size(const Tensor *in, int nin, uint64_t way)
{
	for (int i = 0; i < nin && i < 64; i++)
		if (way >> i & 1)
			return in[i].dim[0];
	return -1;
}

/* Load the model again for another compile (burn_compile_graph consumes
 * its graph): the inputs bound to set 0's files, the frozen ones made
 * constants and dropped from the inputs. */
static int reload(Ctx *c, const char *model, const SetFiles *fin,
                  const Tensor *in, const char *frozen, int nin, Graph **out)
{
	Graph *g = NULL;
	int k = 0;

	*out = NULL;
	if (onnx_load_file(c, model, &g) || bind_inputs(c, g, fin))
		goto fail;
	for (int i = 0; i < nin; i++)
		if (frozen[i] && graph_set_const(c, g, g->in[i], in[i].dtype,
		                                 in[i].rank, in[i].dim, in[i].data))
			goto fail;
	for (int i = 0; i < g->nin; i++)
		if (!frozen[i])
			g->in[k++] = g->in[i];
	g->nin = k;
	*out = g;
	return 0;
fail:
	if (g)
		graph_destroy(g);
	return 1;
}

/*
 * --dynamic, after the mode refused the case: does the model itself fix
 * the batch?  It does when it compiles with static shapes at the data's
 * batch but not at another: the model is compiled again with the batched
 * inputs' leading size the data's, then one more, then (when at least 2)
 * one less; a Reshape to a constant shape, Split sizes, or another input
 * whose fixed dim the batch must match make that fail, and the failure
 * names the node or value that pins it.  Tried for each way of choosing
 * the batched inputs the mode tried (dyn_ways).  1 with the first pinned
 * way's message in why when every way is pinned; 0 when some way takes
 * other sizes or does not compile at the data's either (the refusal is
 * then a gap of the mode, not of the model).
 */
static int dyn_pinned(const Opts *o, const char *model, const SetFiles *fin,
                      const Tensor *in, const char *frozen, int nin,
                      const DimBind *bind, int nbind, const uint64_t *ways,
                      int nway, char *why, size_t n)
{
	int pinned = 0;

	why[0] = 0;
	for (int w = 0; w < nway; w++) {
		/* the data's own size first: a model that does not compile
		 * there either (an op the target lacks) says nothing of the
		 * batch */
		int64_t d0 = dyn_size(in, nin, ways[w]);
		int64_t probe[3] = { d0, d0 + 1, d0 - 1 };
		int nprobe = d0 >= 2 ? 3 : 2, bad = 0, skip = 0;
		for (int t = 0; t < nprobe && !bad && !skip; t++) {
			CompileOpts co = { 0, bind, 0, 0, o->target, 0, NULL,
			                   o->nwant, o->want };
			DimBind kept[64];
			Compiled *m = NULL;
			Graph *g;
			Ctx c;
			burn_ctx_init(&c, "model.onnx");
			if (reload(&c, model, fin, in, frozen, nin, &g))
				return 0;
			dyn_setup(g, frozen, nin, ways[w], probe[t]);
			/* the binds of dims the probe left symbolic */
			for (int b = 0; b < nbind && b < 64; b++) {
				int used = 0;
				for (int i = 0; i < g->nin && !used; i++)
					for (int d = 0; d < GV(g, g->in[i])->rank; d++)
						used |= GV(g, g->in[i])->sym[d] &&
						        !strcmp(GV(g, g->in[i])->sym[d], bind[b].name);
				if (used)
					kept[co.nbind++] = bind[b];
			}
			co.bind = kept;
			if (burn_compile_graph(&c, g, &co, &m)) {
				if (t == 0) {   /* not at its own size: this way says nothing */
					skip = 1;
					continue;
				}
				/* an input the probe would have to freeze first says
				 * nothing of the batch */
				if (strstr(c.msg, "must be a constant"))
					return 0;
				bad = 1;
				if (!why[0])
					snprintf(why, n, "at batch %lld: %s", (long long)probe[t],
					         c.msg[0] ? c.msg : burn_code_name(c.code));
			}
			burn_compiled_destroy(m);
		}
		if (skip)
			continue;
		if (!bad)
			return 0;
		pinned = 1;
	}
	return pinned;
}

/* The axes of compiled value v that are the dim DYN_DIM, as a mask (a
 * sampled program may put the batch on any axis of an output). */
static char dyn_axes(const Value *v)
{
	unsigned m = 0;

	for (int d = 0; d < v->rank && d < 8; d++)
		if (v->sym[d] && !strcmp(v->sym[d], DYN_DIM))
			m |= 1u << d;
	return (char)m;
}

/* Whether graph input j of the compiled g has the dim DYN_DIM. */
static int dyn_in(const Graph *g, int j)
{
	const Value *v = GV(g, g->in[j]);

	return v->rank > 0 && v->sym[0] && !strcmp(v->sym[0], DYN_DIM);
}

/* --dynamic, for one data set: the outputs with the dim (dynout[i]: the
 * mask of its axes, dyn_axes) get it bound to dim in g (what value_nbytes
 * and the comparison read) and out[i] reallocated for that size.  0, or 1
 * with "FAIL: why" in res. */
static int dyn_bind_outputs(Graph *g, const char *dynout, int64_t dim,
                            void **out, char *res, size_t n)
{
	for (int i = 0; i < g->nout; i++) {
		Value *v = GV(g, g->out[i]);
		int64_t nb;
		if (!dynout[i])
			continue;
		for (int d = 0; d < v->rank && d < 8; d++)
			if (dynout[i] >> d & 1) {
				v->dim[d] = dim;
				v->sym[d] = NULL;
			}
		free(out[i]);
		nb = value_nbytes(v);
		if (nb < 0 || !(out[i] = calloc((size_t)nb + 1, 1))) {
			snprintf(res, n, "FAIL: cannot allocate output %d", i);
			return 1;
		}
	}
	return 0;
}

/* Run the case in dir; writes "PASS" or "FAIL: reason" into res. */
static void run_case(const Opts *o, const char *dir, const char *wd,
                     char *res, size_t n)
{
	char model[1024], set[1024], p[1200], why[600];
	Ctx c;
	Graph *g = NULL;
	Compiled *m = NULL;
	Arena a;
	Tensor *in = NULL;
	const void **ins = NULL;   /* one data set's inputs, graph order */
	int64_t *inb = NULL;
	void **outs = NULL;
	DimBind bind[64];
	char *frozen = NULL;   /* inputs made constants */
	char *dynout = NULL;   /* --dynamic: outputs sized by the dim */
	RandOut *ro = NULL;    /* per output: does it depend on random draws */
	int nbind = 0, nin;
	uint64_t ways[DYN_WAYS];   /* --dynamic: the choices of batched inputs */
	int way = 0, nway = 0;     /* (dyn_ways), the one tried */
	char msg0[sizeof c.msg];   /* --dynamic: the first way's refusal */
	SetFiles fin, fout;    /* the data files, sequences flat */

	arena_init(&a);
	memset(&fin, 0, sizeof fin);
	memset(&fout, 0, sizeof fout);
	snprintf(model, sizeof model, "%s/model.onnx", dir);
	snprintf(set, sizeof set, "%s/test_data_set_0", dir);
	/* messages name the case, not the path: the line names the case */
	burn_ctx_init(&c, "model.onnx");
	snprintf(res, n, "PASS");
	if (onnx_load_file(&c, model, &g))
		goto fail_ctx;

	/* inputs of set 0 bind the symbolic dims */
	nin = count_pb(set, "input");
	if (nin != g->nin) {
		snprintf(res, n, "FAIL: %d input files for %d graph inputs", nin, g->nin);
		goto out;
	}
	if (set_files_init(&fin, nin) || set_files_init(&fout, g->nout)) {
		snprintf(res, n, "FAIL: out of memory");
		goto out;
	}
	for (int i = 0; i < nin; i++)
		fin.decl[i] = GV(g, g->in[i])->decl;
	for (int i = 0; g->out_decl && i < g->nout; i++)
		fout.decl[i] = g->out_decl[i].decl;
	if (set_files_read(&c, set, "input", &a, &fin) || bind_inputs(&c, g, &fin))
		goto fail_ctx;
	if (!(ro = arena_alloc(&a, sizeof *ro * ((size_t)g->nout + 1))) ||
	    check_random_scan(g, &a, ro) < 0) {
		snprintf(res, n, "FAIL: out of memory");
		goto out;
	}
	nin = fin.n;
	in = calloc(nin + 1, sizeof *in);
	frozen = calloc(nin + 1, 1);
	if (!in || !frozen) {
		snprintf(res, n, "FAIL: out of memory");
		goto out;
	}
	for (int i = 0; i < nin; i++) {
		Value *v = GV(g, g->in[i]);
		in[i] = fin.t[i];
		if (in[i].dtype != v->dtype || in[i].rank != v->rank) {
			snprintf(res, n, "FAIL: input_%d.pb does not match input '%s'", i, v->name);
			goto out;
		}
		for (int d = 0; d < v->rank; d++) {
			if (!v->sym[d] && v->dim[d] != in[i].dim[d]) {
				snprintf(res, n, "FAIL: input_%d.pb shape does not match input '%s'",
				         i, v->name);
				goto out;
			}
		}
	}
	/* burncc compiles static shapes: an input the model uses as a shape,
	 * axes, count or size (the error names it) is frozen to the test's
	 * value and the case compiled again */
	for (int tries = 0;; tries++) {
		static const char *const dynv[] = { DYN_DIM };
		CompileOpts co = { 0, bind, 1, 0, o->target, o->dynamic, dynv,
		                   o->nwant, o->want };
		Graph *gg = g;
		if (o->dynamic) {
			if (way == 0 && !(nway = dyn_ways(gg, in, frozen, nin, ways,
			                                  DYN_WAYS, res, n)))
				goto out;
			dyn_setup(gg, frozen, nin, ways[way], -1);
		}
		/* the symbolic dims of the inputs still inputs (burncc rejects a
		 * --dim that binds nothing); names copied, g is consumed below */
		nbind = 0;
		for (int i = 0, j = 0; i < nin; i++) {
			const Value *v;
			if (frozen[i])
				continue;
			v = GV(g, g->in[j++]);
			for (int d = 0; d < v->rank && nbind < 64; d++) {
				int dup = 0;
				for (int b = 0; b < nbind && v->sym[d]; b++)
					dup |= !strcmp(bind[b].name, v->sym[d]);
				if (!v->sym[d] || dup || !strcmp(v->sym[d], DYN_DIM))
					continue;
				if (!(bind[nbind].name = arena_strdup(&a, v->sym[d]))) {
					snprintf(res, n, "FAIL: out of memory");
					goto out;
				}
				bind[nbind++].value = in[i].dim[d];
			}
		}
		co.nbind = nbind;
		const char *q;
		char name[256];
		int k, found = -1;
		g = NULL;
		if (!burn_compile_graph(&c, gg, &co, &m))
			break;
		q = strstr(c.msg, "('");
		if (tries >= 8 || !strstr(c.msg, "must be a constant") || !q) {
			/* --dynamic: the other inputs of the batch's size may be
			 * weights that only happen to match it: the next way */
			if (o->dynamic && way + 1 < nway && tries < 8) {
				if (way == 0)
					snprintf(msg0, sizeof msg0, "%s", c.msg[0] ? c.msg
					         : burn_code_name(c.code));
				way++;
				burn_ctx_init(&c, "model.onnx");
				if (reload(&c, model, &fin, in, frozen, nin, &g))
					goto fail_ctx;
				continue;
			}
			goto compile_failed;
		}
		q += 2;
		for (k = 0; q[k] && q[k] != '\'' && k < (int)sizeof name - 1; k++)
			name[k] = q[k];
		name[k] = 0;
		burn_ctx_init(&c, "model.onnx");
		if (onnx_load_file(&c, model, &g) || bind_inputs(&c, g, &fin))
			goto fail_ctx;
		for (int i = 0; i < nin; i++)
			if (!strcmp(GV(g, g->in[i])->name, name))
				found = i;
		way = 0;   /* (--dynamic: the ways of the inputs left) */
		if (found >= 0 && !frozen[found]) {
			frozen[found] = 1;
		} else {
			/* computed from inputs: freeze the small integer ones */
			int more = 0;
			for (int i = 0; i < nin; i++)
				if (!frozen[i] && dtype_is_int(in[i].dtype) && in[i].nbytes <= 4096)
					frozen[i] = more = 1;
			/* then the scalars of any type (an expanded Range's start,
			 * limit and delta give a Loop's trip count) */
			if (!more)
				for (int i = 0; i < nin; i++)
					if (!frozen[i] && in[i].rank == 0)
						frozen[i] = more = 1;
			if (!more) {
				snprintf(res, n, "FAIL: '%s' must be a constant and is not "
				         "a graph input", name);
				goto out;
			}
		}
		/* freeze every input frozen so far, drop them from the inputs */
		graph_destroy(g);
		if (reload(&c, model, &fin, in, frozen, nin, &g))
			goto fail_ctx;
	}
	if (getenv("BURNCC_DUMP") && *getenv("BURNCC_DUMP")) {
		const char *b = strrchr(dir, '/');
		snprintf(p, sizeof p, "%s/%s", getenv("BURNCC_DUMP"), b ? b + 1 : dir);
		mkdir(getenv("BURNCC_DUMP"), 0777);
		if (burn_dump(&c, p, m, o->be))
			goto fail_ctx;
	}
	if (o->be->run) {
		run_sets_in_process(o->be, m, dir, nin, in, frozen, ro, &fin, &fout, &a, &c,
		                    o->dynamic, res, n);
		goto out; 	}
	if (build_module(o->be, m, model, o->cc, o->harness, wd, &c, res, n))
		goto out;
	/* every data set */
	if (!(ins = calloc((size_t)nin + 1, sizeof *ins)) ||
	    !(inb = calloc((size_t)nin + 1, sizeof *inb)) ||
	    !(outs = calloc((size_t)m->g->nout + 1, sizeof *outs))) {
		snprintf(res, n, "FAIL: out of memory");
		goto out;
	}
	if (!(dynout = calloc((size_t)m->g->nout + 1, 1))) {
		snprintf(res, n, "FAIL: out of memory");
		goto out;
	}
	for (int i = 0; i < m->g->nout; i++) {
		const Value *v = GV(m->g, m->g->out[i]);
		int64_t nb = value_nbytes(v);
		/* --dynamic: the outputs of the dim get their sizes per data set */
		dynout[i] = dyn_axes(v);
		if (!dynout[i] && (nb < 0 || !(outs[i] = calloc((size_t)nb + 1, 1)))) {
			snprintf(res, n, "FAIL: cannot allocate output %d", i);
			goto out;
		}
	}
	for (int s = 0;; s++) {
		int k = 0, nout;
		int64_t dim = -1;
		snprintf(set, sizeof set, "%s/test_data_set_%d", dir, s);
		if (!exists(set))
			break;
		if (count_pb(set, "output") != fout.nfile) {
			snprintf(res, n, "FAIL: %d output files for %d graph outputs",
			         count_pb(set, "output"), fout.nfile);
			goto out;
		}
		if (set_files_read(&c, set, "output", &a, &fout))
			goto fail_ctx;
		nout = fout.n;
		if (nout != m->g->nout) {
			snprintf(res, n, "FAIL: %d output tensors for %d graph outputs "
			         "(sequence lengths differ)", nout, m->g->nout);
			goto out;
		}
		if (s > 0) {
			if (set_files_read(&c, set, "input", &a, &fin))
				goto fail_ctx;
			if (fin.n != nin) {
				snprintf(res, n, "FAIL: data set %d's sequences have other "
				         "lengths than set 0's", s);
				goto out;
			}
		}
		for (int i = 0; i < nin; i++) {
			const Tensor *t = s > 0 ? &fin.t[i] : &in[i];
			if (frozen[i])
				continue;
			if (o->dynamic && dyn_in(m->g, k)) {
				if (dim >= 0 && t->dim[0] != dim) {
					snprintf(res, n, "FAIL: data set %d: the batched inputs' "
					         "leading dims differ", s);
					goto out;
				}
				dim = t->dim[0];
			}
			ins[k] = t->data;
			inb[k++] = t->nbytes;
		}
		/* --dynamic: the dim is the inputs' leading dim, the outputs
		 * sized for it */
		if (o->dynamic && dyn_bind_outputs(m->g, dynout, dim, outs, res, n))
			goto out;
		if (run_built_dim(m, wd, o->dynamic ? dim : -1, ins, inb, outs, res, n))
			goto out;
		for (int i = 0; i < nout; i++) {
			const Tensor *e = &fout.t[i];
			if (compare_out(ro, m->g, i, (const void *const *)outs, e,
			                s > 0 ? fin.t : in, why, sizeof why)) {
				snprintf(res, n, "FAIL: %s%s", s ? "data set " : "", why);
				goto out;
			}
		}
	}
	/* --extreme: the same binary on edge values, three orders */
	for (int v = 0; o->extreme && v < 3; v++) {
		char bin[1200], ab[32], ni[16], no[16], log[1200];
		char *argv[4 + 2 * 64 + 1];
		int k = 0, rc, nout = m->g->nout;
		if (nin > 64 || nout > 64)
			break;
		snprintf(bin, sizeof bin, "%s/model", wd);
		snprintf(ab, sizeof ab, "%lld", (long long)m->plan.arena_bytes);
		snprintf(ni, sizeof ni, "%d", m->g->nin);
		snprintf(no, sizeof no, "%d", nout);
		argv[k++] = bin; argv[k++] = ab; argv[k++] = ni; argv[k++] = no;
		for (int i = 0; i < nin; i++) {
			void *data;
			if (frozen[i])
				continue;
			snprintf(p, sizeof p, "%s/x%d.bin", wd, i);
			if (dtype_is_string(in[i].dtype)) {
				/* strings: empty, blanks, multi-byte UTF-8, long */
				static char lng[2049];
				static const char *sv[] = { "", "a", " \t\n ", "\xf0\x9f\x98\x80\xc3\xa9\xce\xa3",
				                            lng, "www.google.com", "_Unused" };
				int64_t ns = in[i].nbytes / (int64_t)sizeof(char *);
				const char **arr = calloc((size_t)ns + 1, sizeof *arr);
				memset(lng, 'x', sizeof lng - 1);
				if (!arr) {
					snprintf(res, n, "FAIL: out of memory");
					goto out_argv;
				}
				for (int64_t e = 0; e < ns; e++)
					arr[e] = sv[(e * (v + 1) + v) % 7];
				strings_write(p, arr, ns);
				free(arr);
				argv[k++] = strdup(p);
				continue;
			}
			data = malloc(in[i].nbytes > 0 ? (size_t)in[i].nbytes : 1);
			if (!data) {
				snprintf(res, n, "FAIL: out of memory");
				goto out_argv;
			}
			fill_extreme(in[i].dtype, data, in[i].nbytes, v);
			write_file(p, data, in[i].nbytes);
			free(data);
			argv[k++] = strdup(p);
		}
		for (int i = 0; i < nout; i++) {
			snprintf(p, sizeof p, "%s/xout%d.bin", wd, i);
			argv[k++] = strdup(p);
		}
		argv[k] = NULL;
		snprintf(log, sizeof log, "%s/xrun.log", wd);
		rc = run(argv, log, RUN_TIMEOUT);
		if (rc) {
			first_line(log, wd, why, sizeof why);
			if (why[0])
				snprintf(res, n, "FAIL: extreme inputs (order %d): %s", v, why);
			else
				snprintf(res, n, "FAIL: extreme inputs (order %d): %s %d", v,
				         rc > 128 ? "signal" : "exit status",
				         rc > 128 ? rc - 128 : rc);
		}
out_argv:
		for (int i = 4; i < k; i++)
			free(argv[i]);
		if (strncmp(res, "PASS", 4))
			goto out;
	}
	goto out;
compile_failed:
	/* --dynamic: what the mode refuses is counted apart from failures (a
	 * static shape the case needs shows in a plain check too) */
	if (o->dynamic) {
		/* a model that fixes the batch itself is specialised, not a gap
		 * of the mode */
		const char *m0 = way > 0 ? msg0 : c.msg;
		if (strstr(m0, DYN_FIXED_SIZE))
			snprintf(res, n, "SPECIALISED: %s", m0);
		else if (dyn_pinned(o, model, &fin, in, frozen, nin, bind, nbind,
		                    ways, nway, why, sizeof why))
			snprintf(res, n, "SPECIALISED: %s", why);
		else if (way > 0)
			snprintf(res, n, "REFUSED: %s", msg0);
		else
			snprintf(res, n, "REFUSED: %s", c.msg[0] ? c.msg
			         : burn_code_name(c.code));
		goto out;
	}
fail_ctx:
	snprintf(res, n, "FAIL: %s", c.msg[0] ? c.msg : burn_code_name(c.code));
out:
	if (outs && m)
		for (int i = 0; i < m->g->nout; i++)
			free(outs[i]);
	free(outs);
	free(ins);
	free(inb);
	free(in);
	free(frozen);
	free(dynout);
	set_files_free(&fin);
	set_files_free(&fout);
	if (g)
		graph_destroy(g);
	burn_compiled_destroy(m);
	arena_free(&a);
}

/* ---- the run over all cases --------------------------------------------- */

typedef struct Case {
	char *dir, *name;
	char *res;          /* result line after the case ran */
	const char *xfail;  /* reason if listed in the xfail file */
} Case;

static int add_case(Case **cs, int *n, int *cap, const char *dir)
{
	const char *b = strrchr(dir, '/');

	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		*cs = realloc(*cs, sizeof **cs * *cap);
		if (!*cs)
			return -1;
	}
	memset(&(*cs)[*n], 0, sizeof **cs);
	(*cs)[*n].dir = strdup(dir);
	(*cs)[*n].name = strdup(b ? b + 1 : dir);
	(*n)++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int collect(const char *arg, Case **cs, int *n, int *cap)
{
	char p[1024];
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	int nn = 0, capn = 0;
	char path[1024];

	snprintf(path, sizeof path, "%s", arg);
	while (strlen(path) > 1 && path[strlen(path) - 1] == '/')
		path[strlen(path) - 1] = 0;
	snprintf(p, sizeof p, "%s/model.onnx", path);
	if (exists(p))
		return add_case(cs, n, cap, path);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "%s/%s/model.onnx", path, e->d_name);
		if (!exists(p))
			continue;
		if (nn == capn) {
			capn = capn ? capn * 2 : 256;
			names = realloc(names, sizeof *names * capn);
		}
		names[nn++] = strdup(e->d_name);
	}
	closedir(d);
	if (nn)         /* qsort(NULL, 0, ...) is undefined */
		qsort(names, nn, sizeof *names, cmp_str);
	for (int i = 0; i < nn; i++) {
		snprintf(p, sizeof p, "%s/%s", path, names[i]);
		add_case(cs, n, cap, p);
		free(names[i]);
	}
	free(names);
	return nn ? 0 : -1;
}

static int load_xfail(const char *file, Case *cs, int n)
{
	int64_t len;
	char *text = read_file(file, &len), *line, *save = NULL;

	if (!text) {
		fprintf(stderr, "burncc: check: cannot read %s\n", file);
		return -1;
	}
	text = realloc(text, len + 1);
	text[len] = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *name = line, *why;
		while (*name == ' ' || *name == '\t')
			name++;
		if (!*name || *name == '#')
			continue;
		why = name + strcspn(name, " \t");
		if (*why) {
			*why++ = 0;
			while (*why == ' ' || *why == '\t')
				why++;
		}
		for (int i = 0; i < n; i++)
			if (!strcmp(cs[i].name, name))
				cs[i].xfail = *why ? why : "listed";
	}
	/* text stays allocated (and reachable, for LeakSanitizer): the reasons
	 * point into it; one per --xfail list */
	{
		static char *keep[4];
		static int nkeep;
		free(keep[nkeep % 4]);
		keep[nkeep++ % 4] = text;
	}
	return 0;
}

static void free_cases(Case *cs, int n)
{
	for (int i = 0; i < n; i++) {
		free(cs[i].dir);
		free(cs[i].name);
		free(cs[i].res);
	}
	free(cs);
}

/* Every return of check_main goes through here: LeakSanitizer runs on
 * burncc in `make test-sanitize`, error paths included. */
static int check_done(Opts *o, Case *cs, int n, int rc)
{
	free_cases(cs, n);
	arena_free(&o->want_arena);
	return rc;
}

int check_main(int argc, char **argv)
{
	Opts o = { 0 };
	Case *cs = NULL;
	int n = 0, cap = 0, next = 0, running = 0, printed = 0;
	int pass = 0, fail = 0, unexp_fail = 0, unexp_pass = 0, skip = 0, refused = 0;
	int special = 0, unexp_refused = 0;   /* --dynamic */
	const char *xfail = NULL, *xfails[4];
	int every = 1, batch = 1, nxfail = 0;
	pid_t *pids;
	int *nbatch;

	arena_init(&o.want_arena);
	o.jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
	o.cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	o.be = backend_list[0];
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-j") && i + 1 < argc) {
			o.jobs = atoi(argv[++i]);
		} else if (!strncmp(argv[i], "-j", 2) && argv[i][2]) {
			o.jobs = atoi(argv[i] + 2);
		} else if (!strcmp(argv[i], "--xfail") && i + 1 < argc) {
			/* several lists add up (the target's own gaps after the
			 * common list) */
			if (nxfail == 4) {
				fprintf(stderr, "burncc: check: more than 4 --xfail lists\n");
				return 2;
			}
			xfail = xfails[nxfail++] = argv[++i];
		} else if (!strcmp(argv[i], "--keep") && i + 1 < argc) {
			o.keep = argv[++i];
		} else if (!strcmp(argv[i], "--quiet-pass")) {
			o.quiet_pass = 1;
		} else if (!strcmp(argv[i], "--batch") && i + 1 < argc) {
			batch = atoi(argv[++i]);
			if (batch < 1)
				batch = 1;
		} else if (!strcmp(argv[i], "--every") && i + 1 < argc) {
			every = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--target") && i + 1 < argc) {
			o.target_given = 1;
			if (!(o.be = backend_find(argv[++i]))) {
				fprintf(stderr, "burncc: check: unknown target %s\n", argv[i]);
				return check_done(&o, cs, n, 2);
			}
			if (!o.be->emit_module && !o.be->run) {
				fprintf(stderr, "burncc: check: target %s can neither render "
				        "nor run (description only)\n", argv[i]);
				return check_done(&o, cs, n, 2);
			}
		} else if (!strcmp(argv[i], "--freestanding")) {
			o.target_given = 1;   /* the C target without libc or libm */
			o.be = backend_find("c-freestanding");
		} else if (!strcmp(argv[i], "--cpu") && i + 1 < argc) {
			Ctx sc;
			burn_ctx_init(&sc, NULL);
			if (burn_cpu_arg(&sc, argv[++i], &o.cpu)) {
				fprintf(stderr, "burncc: check: %s\n", sc.msg);
				return check_done(&o, cs, n, 2);
			}
		} else if (!strcmp(argv[i], "--cache-dir") && i + 1 < argc) {
			/* the llvm target's disk cache (runtime/cache.h), checked
			 * here; the workers' run finds it in the environment */
			BurnCache cc;
			Ctx sc;
			burn_ctx_init(&sc, NULL);
			if (!*argv[++i] || burn_cache_open(&sc, &cc, argv[i], 0)) {
				fprintf(stderr, "burncc: check: %s\n",
				        *argv[i] ? sc.msg : "--cache-dir needs a directory");
				return check_done(&o, cs, n, 1);
			}
			burn_cache_close(&cc);
			setenv("BURNCC_CACHE_DIR", argv[i], 1);
		} else if (!strcmp(argv[i], "--grad")) {
			o.grad = 1;
		} else if (!strcmp(argv[i], "--extreme")) {
			o.extreme = 1;
		} else if (!strcmp(argv[i], "--dynamic")) {
			o.dynamic = 1;
		} else if (!strcmp(argv[i], "--schedule") && i + 1 < argc) {
			Ctx sc;
			burn_ctx_init(&sc, NULL);
			if (burn_schedule_arg(&sc, &o.want_arena, argv[++i], &o.want, &o.nwant)) {
				fprintf(stderr, "burncc: check: %s\n", sc.msg);
				return check_done(&o, cs, n, 2);
			}
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "burncc: check: unknown option %s\n", argv[i]);
			return check_done(&o, cs, n, 2);
		} else if (collect(argv[i], &cs, &n, &cap)) {
			fprintf(stderr, "burncc: check: %s: no model.onnx in it or in its "
			        "subfolders\n", argv[i]);
			return check_done(&o, cs, n, 1);
		}
	}
	if (!n) {
		fprintf(stderr, "burncc: check: no cases given\ntry 'burncc --help'\n");
		return check_done(&o, cs, n, 2);
	}
	if (o.jobs < 1)
		o.jobs = 1;
	if (every > 1) {
		/* a sample: cases 0, N, 2N, ... of the sorted list */
		int k = 0;
		for (int i = 0; i < n; i++) {
			if (i % every == 0) {
				cs[k++] = cs[i];
			} else {
				free(cs[i].dir);
				free(cs[i].name);
			}
		}
		n = k;
	}
	for (int i = 0; i < nxfail; i++)
		if (load_xfail(xfails[i], cs, n))
			return check_done(&o, cs, n, 2);

	if (o.keep) {
		mkdir(o.keep, 0777);
		snprintf(o.work, sizeof o.work, "%s", o.keep);
	} else {
		const char *t = getenv("TMPDIR");
		snprintf(o.work, sizeof o.work, "%s/burncc-check-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(o.work)) {
			fprintf(stderr, "burncc: check: cannot create %s: %s\n", o.work,
			        strerror(errno));
			return check_done(&o, cs, n, 1);
		}
	}
	if (o.grad && !o.target_given && backend_find("llvm"))
		o.be = backend_find("llvm");   /* in process: no C compiler */
	o.target = o.be->target;
	if (o.cpu && o.grad) {
		fprintf(stderr, "burncc: check: --cpu does not go with --grad so far\n");
		return check_done(&o, cs, n, 2);
	}
	if (o.cpu) {
		if (target_with_cpu(o.be->target, o.cpu, &o.cpu_target)) {
			fprintf(stderr, "burncc: check: --cpu is for the CPU targets (c, "
			        "c-freestanding, llvm), not %s\n", o.be->name);
			return check_done(&o, cs, n, 2);
		}
		o.target = &o.cpu_target;
	}
	if (o.dynamic && (o.grad || o.extreme)) {
		fprintf(stderr, "burncc: check: --dynamic goes with neither --grad "
		        "nor --extreme so far\n");
		return check_done(&o, cs, n, 2);
	}
	if (o.dynamic && (o.be->run ? !o.be->run_dims : !o.be->emit_module)) {
		fprintf(stderr, "burncc: check: --dynamic: target %s %s\n", o.be->name,
		        o.be->run ? "runs in process, without run-time dims so far"
		        : "neither writes C nor runs in process");
		return check_done(&o, cs, n, 2);
	}
	if (o.dynamic && !o.be->run && build_harness_src(o.cc, o.work, dyn_harness_src,
	                                   sizeof dyn_harness_src - 1, o.harness,
	                                   sizeof o.harness)) {
		fprintf(stderr, "burncc: check: cannot build the harness with %s\n", o.cc);
		return check_done(&o, cs, n, 1);
	}
	if (!o.dynamic && !o.be->run && !o.grad &&
	    build_harness(o.cc, o.work, o.harness, sizeof o.harness)) {
		/* the C harness; targets that run in process need no C compiler */
		fprintf(stderr, "burncc: check: cannot build the harness with %s\n", o.cc);
		return check_done(&o, cs, n, 1);
	}

	fflush(stdout);
	pids = calloc(n, sizeof *pids);
	nbatch = calloc(n + 1, sizeof *nbatch);
	while (printed < n) {
		while (running < o.jobs && next < n) {
			/* --batch: one worker runs nb cases in a row (a device
			 * target sets its device up once per process) */
			int i = next, nb = n - next < batch ? n - next : batch;
			pid_t pid;
			next += nb;
			pid = fork();
			if (pid == 0) {
				for (int j = i; j < i + nb; j++) {
					char wd[800], res[1024], rp[900];
					snprintf(wd, sizeof wd, "%s/%s", o.work, cs[j].name);
					mkdir(wd, 0777);
					alarm(CASE_TIMEOUT);
					if (o.grad)   /* in process; C-only targets: the interpreter */
						grad_case(o.be->run ? o.be : NULL, cs[j].dir, res,
						          sizeof res);
					else
						run_case(&o, cs[j].dir, wd, res, sizeof res);
					snprintf(rp, sizeof rp, "%s/%s.res", o.work, cs[j].name);
					write_file(rp, res, strlen(res));
					if (!o.keep)
						rm_rf(wd);
				}
				_exit(0);
			}
			nbatch[i] = nb;
			if (pid < 0) {
				for (int j = i; j < i + nb; j++)
					cs[j].res = strdup("FAIL: cannot fork");
				continue;
			}
			pids[i] = pid;
			running++;
		}
		if (running) {
			int st;
			pid_t pid = wait(&st);
			for (int i0 = 0; pid > 0 && i0 < n; i0++) {
				if (pids[i0] != pid)
					continue;
				for (int i = i0; i < i0 + nbatch[i0]; i++) {
				char rp[900];
				int64_t len;
				char *r;
				snprintf(rp, sizeof rp, "%s/%s.res", o.work, cs[i].name);
				r = read_file(rp, &len);
				/* in a batch, a case that wrote its result finished */
				if (r && ((WIFEXITED(st) && WEXITSTATUS(st) == 0) || nbatch[i0] > 1)) {
					cs[i].res = realloc(r, len + 1);
					cs[i].res[len] = 0;
				} else {
					char buf[128];
					free(r);
					if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
						snprintf(buf, sizeof buf, "FAIL: timed out after %d s",
						         CASE_TIMEOUT);
					else if (WIFSIGNALED(st))
						snprintf(buf, sizeof buf, "FAIL: burncc crashed (signal %d)",
						         WTERMSIG(st));
					else
						snprintf(buf, sizeof buf, "FAIL: worker exit %d",
						         WEXITSTATUS(st));
					cs[i].res = strdup(buf);
				}
				remove(rp);
				}
				pids[i0] = 0;
				running--;
			}
		}
		/* print finished cases in order */
		while (printed < n && cs[printed].res) {
			Case *k = &cs[printed++];
			int ok = !strcmp(k->res, "PASS");
			if (!strncmp(k->res, "SKIP: ", 6)) {
				skip++;
				printf("SKIP %s: %s\n", k->name, k->res + 6);
			} else if (!strncmp(k->res, "SPECIALISED: ", 13)) {
				/* --dynamic: the model fixes the batch; a listed gap
				 * that is one is a stale entry */
				special++;
				unexp_pass += k->xfail != NULL;
				printf("SPECIALISED %s: %s%s\n", k->name, k->res + 13,
				       k->xfail ? " (unexpected: listed as a gap)" : "");
			} else if (!strncmp(k->res, "REFUSED: ", 9)) {
				/* --dynamic: a gap of the mode; with --xfail lists,
				 * one they do not name fails the run */
				refused++;
				unexp_refused += !k->xfail;
				printf("REFUSED %s: %s%s\n", k->name, k->res + 9,
				       k->xfail ? " (expected)" : "");
			} else if (ok) {
				pass++;
				if (k->xfail) {
					unexp_pass++;
					printf("PASS %s (unexpected: listed as an expected failure)\n", k->name);
				} else if (!o.quiet_pass) {
					printf("PASS %s\n", k->name);
				}
			} else {
				fail++;
				if (!k->xfail)
					unexp_fail++;
				printf("FAIL %s: %s%s\n", k->name, k->res + 6,
				       k->xfail ? " (expected)" : "");
			}
			fflush(stdout);
		}
	}
	if (!o.keep) {
		char p[700];
		snprintf(p, sizeof p, "%s/harness.c", o.work);
		remove(p);
		snprintf(p, sizeof p, "%s/harness.log", o.work);
		remove(p);
		remove(o.harness);
		rmdir(o.work);
	}
	if (xfail && o.dynamic)
		printf("expected failures and refusals: %d; unexpected failures: %d; "
		       "unexpected refusals: %d; unexpected passes: %d\n",
		       fail - unexp_fail + refused - unexp_refused, unexp_fail,
		       unexp_refused, unexp_pass);
	else if (xfail)
		printf("expected failures: %d; unexpected failures: %d; unexpected passes: %d\n",
		       fail - unexp_fail, unexp_fail, unexp_pass);
	if (o.dynamic)   /* specialised and refused: compiled only with static shapes */
		printf("%d passed, %d failed, %d specialised by the model, %d refused "
		       "by --dynamic, %d skipped\n", pass, fail, special, refused, skip);
	else if (skip)
		printf("%d passed, %d failed, %d skipped\n", pass, fail, skip);
	else
		printf("%d passed, %d failed\n", pass, fail);
	/* free everything, so LeakSanitizer (make test-sanitize) stays quiet */
	free_cases(cs, n);
	free(pids);
	arena_free(&o.want_arena);
	free(nbatch);
	if (xfail)
		return unexp_fail || unexp_pass || unexp_refused ? 1 : 0;
	return fail ? 1 : 0;
}

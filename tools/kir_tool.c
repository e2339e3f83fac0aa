/*
 * kir_tool.c - `burncc kir`: read a kernel-IR text file (what --emit=kernels
 * prints), verify it, and print it back or run it in the interpreter.
 *
 *   burncc kir FILE                      parse, verify, print (canonical)
 *   burncc kir --run [--in vN=X,Y,...]... [--dim NAME=N]... FILE
 *
 * --run legalises the kernels for the interpreter (passes/legalize.c: it
 * runs only primitive kernel IR) and runs them in program order on it
 * (ir/kir_interp.c)
 * with one memory block per graph value (values that alias share theirs),
 * and prints every value a kernel writes as `vN: DTYPE[COUNT] = X Y ...`.
 * Values start as zeros unless given by --in.  Elements print with %.9g
 * (f32), %.17g (f64), as integers, or for storage types (f16, bf16,
 * float8) as their bit patterns in hex; --in reads them the same way.
 * Kernels with dim parameters (`dim NAME`) take NAME's value from --dim.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/kir.h"
#include "passes/legalize.h"
#include "tools/kir_tool.h"

static const char kir_usage[] =
"usage: burncc kir [--run] [--in vN=X,Y,...]... [--dim NAME=N]... FILE\n"
"  FILE is kernel-IR text (burncc --emit=kernels prints it; '-' is stdin).\n"
"  Without --run: parse, verify and print it back.\n"
"  --run            run the kernels in order in the interpreter and print\n"
"                   every value they write (vN: DTYPE[COUNT] = ...)\n"
"  --in vN=X,Y,...  the elements of value vN (default: zeros); storage\n"
"                   types (f16, bf16, float8) as bit patterns\n"
"  --dim NAME=N     the value of dim parameter NAME (kernels that have one)\n";

typedef struct Mem {
	int value;        /* storage value */
	int64_t bytes;
	unsigned char *p;
} Mem;

typedef struct Input {
	int value;
	const char *list;
} Input;

/* --dim bindings */
typedef struct Dims {
	int n;
	const char **name;
	int64_t *value;
} Dims;

/* The dim arguments of k into kd (k->ndim of them). */
static int
kernel_dims(Ctx *c, const KKernel *k, const Dims *d, int64_t *kd)
{
	for (int i = 0; i < k->ndim; i++) {
		int j = 0;
		while (j < d->n && strcmp(d->name[j], k->var[i].name))
			j++;
		if (j == d->n)
			return burn_fail(c, BURN_ERR_INVALID, "kernel %s: give dim %s "
			                 "with --dim %s=N", k->name, k->var[i].name,
			                 k->var[i].name);
		kd[i] = d->value[j];
	}
	return BURN_OK;
}

/* Buffer i of k: its elements at the --dim values. */
static int
extent(Ctx *c, const KKernel *k, int i, const Dims *d, int64_t *n)
{
	int64_t kd[64];

	if (k->ndim > 64)
		return burn_fail(c, BURN_ERR_LIMIT, "more than 64 dim parameters");
	TRY(kernel_dims(c, k, d, kd));
	return kbuf_extent(c, k, i, kd, n);
}

static char *
read_all(const char *path, int64_t max, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	char *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (!f)
		return NULL;
	do {
		if (n == cap) {
			char *nb;
			cap = cap ? 2 * cap : 65536;
			if ((int64_t)cap > max + 1)
				cap = (size_t)max + 1;
			if (n == cap || !(nb = realloc(buf, cap))) {
				free(buf);
				buf = NULL;
				errno = EFBIG;
				break;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	if (f != stdin)
		fclose(f);
	*len = n;
	return buf;
}

static Mem *
mem_of(Mem *mem, int nmem, int storage)
{
	for (int i = 0; i < nmem; i++)
		if (mem[i].value == storage)
			return &mem[i];
	return NULL;
}

static void
print_elem(int dt, const unsigned char *p)
{
	switch (dt) {
	case DT_F32: { float x; memcpy(&x, p, 4); printf("%.9g", x); break; }
	case DT_F64: { double x; memcpy(&x, p, 8); printf("%.17g", x); break; }
	case DT_I8:  printf("%d", *(const int8_t *)p); break;
	case DT_U8:  printf("%u", *p); break;
	case DT_BOOL: printf("%u", *p); break;
	case DT_I16: { int16_t x; memcpy(&x, p, 2); printf("%d", x); break; }
	case DT_U16: { uint16_t x; memcpy(&x, p, 2); printf("%u", x); break; }
	case DT_I32: { int32_t x; memcpy(&x, p, 4); printf("%" PRId32, x); break; }
	case DT_U32: { uint32_t x; memcpy(&x, p, 4); printf("%" PRIu32, x); break; }
	case DT_I64: { int64_t x; memcpy(&x, p, 8); printf("%" PRId64, x); break; }
	case DT_U64: { uint64_t x; memcpy(&x, p, 8); printf("%" PRIu64, x); break; }
	default:     /* storage types: the bits */
		if (dtype_size(dt) == 2) {
			uint16_t x;
			memcpy(&x, p, 2);
			printf("0x%04x", x);
		} else {
			printf("0x%02x", *p);
		}
	}
}

/* Parse one element of dtype dt from s into p; 0 on success. */
static int
parse_elem(int dt, const char *s, unsigned char *p)
{
	char *end;

	errno = 0;
	if (dt == DT_F32) {
		float x = strtof(s, &end);
		memcpy(p, &x, 4);
	} else if (dt == DT_F64) {
		double x = strtod(s, &end);
		memcpy(p, &x, 8);
	} else if (dt == DT_U64) {
		uint64_t x = strtoull(s, &end, 0);
		memcpy(p, &x, 8);
	} else {
		int64_t x = strtoll(s, &end, 0);
		int n = dtype_size(dt);
		/* little-endian hosts: the low bytes are the value wrapped */
		memcpy(p, &x, (size_t)n);
	}
	return errno || end == s || (*end && *end != ',');
}

/* The first buffer bound to value v in any kernel, or NULL; its
 * elements in *count. */
static const KBuf *
buf_of(Ctx *c, const KProgram *p, int v, const Dims *d, int64_t *count)
{
	for (int k = 0; k < p->nkernel; k++)
		for (int i = 0; i < p->kernel[k]->nbuf; i++)
			if (p->kernel[k]->buf[i].space == KS_GLOBAL &&
			    p->kernel[k]->buf[i].value == v)
				return extent(c, p->kernel[k], i, d, count) ? NULL
				       : &p->kernel[k]->buf[i];
	return NULL;
}

static int
run(Ctx *c, KProgram *p, const Input *in, int nin, const Dims *dims)
{
	Mem *mem = NULL;
	int nmem = 0, rc = 0, *written = NULL, nw = 0;
	void **bufs = NULL;

	/* one block per storage value, as large as its largest buffer */
	for (int k = 0; k < p->nkernel; k++)
		for (int i = 0; i < p->kernel[k]->nbuf; i++) {
			const KBuf *b = &p->kernel[k]->buf[i];
			int s = kprog_storage(p, b->value);
			int64_t cnt, nb;
			Mem *m;
			if (b->space != KS_GLOBAL)
				continue;
			if ((rc = extent(c, p->kernel[k], i, dims, &cnt)))
				goto done;
			if (dtype_nbytes(b->dtype, cnt, &nb) ||
			    nb > c->limits.max_tensor_bytes) {
				rc = burn_fail(c, BURN_ERR_LIMIT, "v%d: more than "
				               "--max-tensor-bytes at these dims", b->value);
				goto done;
			}
			if (!(m = mem_of(mem, nmem, s))) {
				Mem *nm = realloc(mem, (size_t)(nmem + 1) * sizeof *mem);
				if (!nm)
					goto nomem;
				mem = nm;
				m = &mem[nmem++];
				m->value = s;
				m->bytes = 0;
				m->p = NULL;
			}
			if (nb > m->bytes)
				m->bytes = nb;
			if (b->access & KA_WRITE) {
				int seen = 0;
				for (int j = 0; j < nw; j++)
					seen |= written[j] == b->value;
				if (!seen) {
					int *nw_ = realloc(written, (size_t)(nw + 1) * sizeof *nw_);
					if (!nw_)
						goto nomem;
					written = nw_;
					written[nw++] = b->value;
				}
			}
		}
	for (int i = 0; i < nmem; i++)
		if (!(mem[i].p = calloc((size_t)mem[i].bytes + 1, 1)))
			goto nomem;
	for (int i = 0; i < nin; i++) {
		int64_t count = 0;
		const KBuf *b = buf_of(c, p, in[i].value, dims, &count);
		Mem *m = mem_of(mem, nmem, kprog_storage(p, in[i].value));
		const char *s = in[i].list;
		int64_t n = 0;
		int sz;
		if (!b || !m) {
			rc = burn_fail(c, BURN_ERR_INVALID, "--in v%d: no kernel uses v%d",
			               in[i].value, in[i].value);
			goto done;
		}
		sz = dtype_size(b->dtype);
		if (sz <= 0) {   /* packed: several elements a byte */
			rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "--in v%d: %s elements "
			               "cannot be given one by one; give the legalised "
			               "kernel's u8 bytes", in[i].value, dtype_name(b->dtype));
			goto done;
		}
		for (; *s; n++) {
			if (n >= count) {
				rc = burn_fail(c, BURN_ERR_INVALID, "--in v%d: more than %" PRId64
				               " elements", in[i].value, count);
				goto done;
			}
			if (parse_elem(b->dtype, s, m->p + n * sz)) {
				rc = burn_fail(c, BURN_ERR_INVALID, "--in v%d: bad %s element "
				               "'%.20s'", in[i].value, dtype_name(b->dtype), s);
				goto done;
			}
			s = strchr(s, ',');
			s = s ? s + 1 : "";
		}
		if (n != count) {
			rc = burn_fail(c, BURN_ERR_INVALID, "--in v%d: %" PRId64 " elements "
			               "given, %" PRId64 " needed", in[i].value, n, count);
			goto done;
		}
	}
	for (int k = 0; k < p->nkernel && !rc; k++) {
		KKernel *kk = p->kernel[k];
		void **nb;
		/* a call kernel's string buffers hold pointers, which no text
		 * gives (and zeroed ones are no strings) */
		if (kk->call) {
			rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "kernel %s calls %s: string "
			               "kernels do not run from text", kk->name,
			               kcall_name(kk->call->fn));
			break;
		}
		nb = realloc(bufs, ((size_t)kk->nbuf + 1) * sizeof *bufs);
		int64_t kd[64];
		if (!nb)
			goto nomem;
		bufs = nb;
		for (int i = 0; i < kk->nbuf; i++)
			bufs[i] = kk->buf[i].space == KS_GLOBAL
			        ? mem_of(mem, nmem, kprog_storage(p, kk->buf[i].value))->p
			        : NULL;
		if (kk->ndim > 64)
			rc = burn_fail(c, BURN_ERR_LIMIT, "more than 64 dim parameters");
		if (!rc)
			rc = kernel_dims(c, kk, dims, kd);
		if (!rc)
			rc = kir_legalize(c, p, kk, NULL);
		if (!rc)
			rc = kir_interp_dims(c, kk, bufs, kd, NULL);
	}
	/* the written values, in value order */
	for (int i = 0; i < nw && !rc; i++)
		for (int j = i + 1; j < nw; j++)
			if (written[j] < written[i]) {
				int t = written[i];
				written[i] = written[j];
				written[j] = t;
			}
	for (int i = 0; i < nw && !rc; i++) {
		int64_t count = 0;
		const KBuf *b = buf_of(c, p, written[i], dims, &count);
		const Mem *m = mem_of(mem, nmem, kprog_storage(p, written[i]));
		if (!b) {
			rc = c->code ? c->code : BURN_ERR_INTERNAL;
			break;
		}
		printf("v%d: %s[%" PRId64 "] =", written[i], dtype_name(b->dtype),
		       count);
		for (int64_t e = 0; e < count; e++) {
			putchar(' ');
			print_elem(b->dtype, m->p + e * dtype_size(b->dtype));
		}
		putchar('\n');
	}
	goto done;
nomem:
	rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
done:
	for (int i = 0; i < nmem; i++)
		free(mem[i].p);
	free(mem);
	free(written);
	free(bufs);
	return rc;
}

int
kir_main(int argc, char **argv)
{
	const char *path = NULL;
	Input *in = calloc((size_t)argc, sizeof *in);
	const char **dname = calloc((size_t)argc, sizeof *dname);
	int64_t *dval = calloc((size_t)argc, sizeof *dval);
	Dims dims = { 0, dname, dval };
	int nin = 0, dorun = 0, rc;
	Arena arena;
	KProgram prog;
	char *text;
	size_t len = 0;
	Ctx c;

	if (!in || !dname || !dval) {
		fprintf(stderr, "burncc: out of memory\n");
		free(in);
		free(dname);
		free(dval);
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(kir_usage, stdout);
			free(in);
			free(dname);
			free(dval);
			return 0;
		} else if (!strcmp(a, "--run")) {
			dorun = 1;
		} else if (!strcmp(a, "--in")) {
			char *end;
			long v;
			if (++i >= argc || argv[i][0] != 'v' || (errno = 0,
			    v = strtol(argv[i] + 1, &end, 10), *end != '=') ||
			    errno || v < 0 || v > INT32_MAX || end == argv[i] + 1) {
				fprintf(stderr, "burncc: --in needs vN=X,Y,...\n");
				free(in);
				free(dname);
				free(dval);
				return 2;
			}
			in[nin].value = (int)v;
			in[nin++].list = end + 1;
		} else if (!strcmp(a, "--dim")) {
			char *eq, *end;
			if (++i >= argc || !(eq = strchr(argv[i], '=')) || eq == argv[i] ||
			    (errno = 0, dval[dims.n] = strtoll(eq + 1, &end, 10), *end) ||
			    errno || end == eq + 1 || dval[dims.n] < 0) {
				fprintf(stderr, "burncc: --dim needs NAME=N (N >= 0)\n");
				free(in);
				free(dname);
				free(dval);
				return 2;
			}
			*eq = 0;
			dname[dims.n++] = argv[i];
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "burncc: unknown option: %s\ntry 'burncc kir --help'\n", a);
			free(in);
			free(dname);
			free(dval);
			return 2;
		} else if (path) {
			fprintf(stderr, "burncc: more than one kernel file given: %s\n", a);
			free(in);
			free(dname);
			free(dval);
			return 2;
		} else {
			path = a;
		}
	}
	if (!path) {
		fputs(kir_usage, stderr);
		free(in);
		free(dname);
		free(dval);
		return 2;
	}
	burn_ctx_init(&c, path);
	if (!(text = read_all(path, c.limits.max_file_bytes, &len))) {
		fprintf(stderr, "burncc: cannot read %s: %s\n", path, strerror(errno));
		free(in);
		free(dname);
		free(dval);
		return 1;
	}
	arena_init(&arena);
	kprog_init(&prog, &arena);
	rc = kprog_parse(&c, &prog, text, len);
	if (!rc && dorun)
		rc = run(&c, &prog, in, nin, &dims);
	else if (!rc)
		kprog_print(stdout, &prog);
	if (rc)
		fprintf(stderr, "burncc: %s\n", c.msg[0] ? c.msg : burn_code_name(c.code));
	arena_free(&arena);
	free(text);
	free(in);
	free(dname);
	free(dval);
	return rc ? 1 : 0;
}

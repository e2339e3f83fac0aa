/*
 * npy.c - NumPy .npy files (npy.h).
 *
 * The layout (numpy/lib/format.py, "NEP 1"):
 *
 *   "\x93NUMPY" major minor   8 bytes
 *   HEADER_LEN                u16 LE (1.0) or u32 LE (2.0, 3.0)
 *   header                    HEADER_LEN bytes of ASCII (UTF-8 for 3.0):
 *                             a Python dict literal with exactly the keys
 *                             'descr', 'fortran_order' and 'shape', padded
 *                             with spaces and ended by '\n' so that the data
 *                             starts at a multiple of 64 (16 in old files)
 *   data                      numel * itemsize bytes
 *
 * The header is parsed by a small scanner over the dict, every read bounded
 * by the header's length: a hostile file is refused, never read past.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "npy.h"

/* burncc's dtypes and NumPy's descr strings (without the byte-order
 * character, which is '|' for one-byte types and '<' otherwise). */
static const struct { int dt; const char *code; } codes[] = {
	{ DT_F32, "f4" }, { DT_F64, "f8" }, { DT_F16, "f2" },
	{ DT_I8, "i1" }, { DT_I16, "i2" }, { DT_I32, "i4" }, { DT_I64, "i8" },
	{ DT_U8, "u1" }, { DT_U16, "u2" }, { DT_U32, "u4" }, { DT_U64, "u8" },
	{ DT_BOOL, "b1" },
};
#define NCODES ((int)(sizeof codes / sizeof codes[0]))

/* The header scanner: s[0..n) and a position. */
typedef struct Scan {
	const char *s;
	size_t n, i;
} Scan;

static void skip_ws(Scan *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' ||
	                       p->s[p->i] == '\n' || p->s[p->i] == '\r'))
		p->i++;
}

static int eat(Scan *p, char ch)
{
	skip_ws(p);
	if (p->i < p->n && p->s[p->i] == ch) {
		p->i++;
		return 1;
	}
	return 0;
}

/* A quoted string ('...' or "...", no escapes) into buf. */
static int scan_str(Scan *p, char *buf, size_t nbuf)
{
	char q;
	size_t k = 0;

	skip_ws(p);
	if (p->i >= p->n || (p->s[p->i] != '\'' && p->s[p->i] != '"'))
		return 0;
	q = p->s[p->i++];
	while (p->i < p->n && p->s[p->i] != q) {
		if (k + 1 >= nbuf || p->s[p->i] == '\\')
			return 0;
		buf[k++] = p->s[p->i++];
	}
	if (p->i >= p->n)
		return 0;
	p->i++;
	buf[k] = 0;
	return 1;
}

/* A bare word (True, False) into buf. */
static int scan_word(Scan *p, char *buf, size_t nbuf)
{
	size_t k = 0;

	skip_ws(p);
	while (p->i < p->n && ((p->s[p->i] >= 'A' && p->s[p->i] <= 'Z') ||
	                       (p->s[p->i] >= 'a' && p->s[p->i] <= 'z'))) {
		if (k + 1 >= nbuf)
			return 0;
		buf[k++] = p->s[p->i++];
	}
	buf[k] = 0;
	return k > 0;
}

/* A shape tuple: (), (N,), (N, M) ... (a trailing comma allowed). */
static int scan_shape(Scan *p, int *rank, int64_t *dim)
{
	*rank = 0;
	if (!eat(p, '('))
		return 0;
	for (;;) {
		int64_t v = 0;
		int digits = 0;
		if (eat(p, ')'))
			return 1;
		skip_ws(p);
		while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
			if (v > (INT64_MAX - 9) / 10)
				return 0;
			v = v * 10 + (p->s[p->i++] - '0');
			digits++;
		}
		/* NumPy writes Python ints; 2L-style suffixes come from Python 2 */
		if (p->i < p->n && p->s[p->i] == 'L')
			p->i++;
		if (!digits || *rank >= BURN_MAX_RANK)
			return 0;
		dim[(*rank)++] = v;
		if (!eat(p, ',')) {
			return eat(p, ')');
		}
	}
}

int npy_load_file(Ctx *c, const char *path, Arena *a, Tensor *t)
{
	unsigned char pre[12];
	char *hdr = NULL, descr[32] = "", word[16];
	size_t hlen, pre_len;
	int have_descr = 0, have_fo = 0, have_shape = 0, fortran = 0, es = 0, rc;
	int64_t numel = 1, size, maxt;
	long end;
	FILE *f = fopen(path, "rb");
	Scan sc;

	memset(t, 0, sizeof *t);
	c->file = path;   /* every message names the file */
	if (!f)
		return burn_fail(c, BURN_ERR_IO, "%s", strerror(errno));
	if (fseek(f, 0, SEEK_END) || (end = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		rc = burn_fail(c, BURN_ERR_IO, "cannot read (not a regular file?)");
		goto out;
	}
	if (c->limits.max_file_bytes > 0 && end > c->limits.max_file_bytes) {
		rc = burn_fail(c, BURN_ERR_LIMIT, "%ld bytes, over the limit of %lld", end,
		               (long long)c->limits.max_file_bytes);
		goto out;
	}
	if (end < 10 || fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6)) {
		rc = burn_fail(c, BURN_ERR_PARSE, "not a .npy file (no \\x93NUMPY "
		               "magic)");
		goto out;
	}
	if (pre[6] == 1) {
		hlen = pre[8] | (size_t)pre[9] << 8;
		pre_len = 10;
	} else if (pre[6] == 2 || pre[6] == 3) {
		if (fread(pre + 10, 1, 2, f) != 2) {
			rc = burn_fail(c, BURN_ERR_PARSE, "truncated .npy header");
			goto out;
		}
		hlen = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 |
		       (size_t)pre[11] << 24;
		pre_len = 12;
	} else {
		rc = burn_fail(c, BURN_ERR_UNSUPPORTED, ".npy format version %d.%d "
		               "(burncc reads 1.0, 2.0 and 3.0)", pre[6], pre[7]);
		goto out;
	}
	if ((long)(pre_len + hlen) > end || !(hdr = malloc(hlen + 1)) ||
	    fread(hdr, 1, hlen, f) != hlen) {
		rc = burn_fail(c, BURN_ERR_PARSE, "truncated .npy header");
		goto out;
	}
	hdr[hlen] = 0;
	/* {'key': value, ...} with the three keys in any order */
	sc = (Scan){ hdr, hlen, 0 };
	if (!eat(&sc, '{'))
		goto bad_header;
	while (!eat(&sc, '}')) {
		char key[32];
		if (!scan_str(&sc, key, sizeof key) || !eat(&sc, ':'))
			goto bad_header;
		if (!strcmp(key, "descr") && !have_descr) {
			skip_ws(&sc);
			if (sc.i < sc.n && sc.s[sc.i] == '[') {
				rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "a structured dtype "
				               "(burncc reads plain numeric arrays)");
				goto out;
			}
			if (!scan_str(&sc, descr, sizeof descr))
				goto bad_header;
			have_descr = 1;
		} else if (!strcmp(key, "fortran_order") && !have_fo) {
			if (!scan_word(&sc, word, sizeof word) ||
			    (strcmp(word, "True") && strcmp(word, "False")))
				goto bad_header;
			fortran = !strcmp(word, "True");
			have_fo = 1;
		} else if (!strcmp(key, "shape") && !have_shape) {
			if (!scan_shape(&sc, &t->rank, t->dim))
				goto bad_header;
			have_shape = 1;
		} else {
			goto bad_header;
		}
		if (!eat(&sc, ',')) {
			if (!eat(&sc, '}'))
				goto bad_header;
			break;
		}
	}
	if (!have_descr || !have_fo || !have_shape)
		goto bad_header;
	if (fortran) {
		rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "Fortran-order array (burncc "
		               "reads C order: save np.ascontiguousarray(x))");
		goto out;
	}
	if (descr[0] == '>' && strcmp(descr + 1, "i1") && strcmp(descr + 1, "u1") &&
	    strcmp(descr + 1, "b1")) {
		rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "big-endian dtype '%s' "
		               "(burncc reads little-endian: x.astype('<%s'))",
		               descr, descr + 1);
		goto out;
	}
	if (descr[0] == '<' || descr[0] == '|' || descr[0] == '>' || descr[0] == '=')
		memmove(descr, descr + 1, strlen(descr));
	for (int i = 0; i < NCODES; i++)
		if (!strcmp(descr, codes[i].code))
			t->dtype = codes[i].dt;
	if (!t->dtype) {
		rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "dtype '%s' (burncc reads "
		               "f2, f4, f8, i1-i8, u1-u8 and b1)", descr);
		goto out;
	}
	es = dtype_size(t->dtype);
	maxt = c->limits.max_tensor_bytes > 0 ? c->limits.max_tensor_bytes : INT64_MAX;
	for (int i = 0; i < t->rank; i++) {
		if (t->dim[i] && numel > maxt / t->dim[i]) {
			rc = burn_fail(c, BURN_ERR_LIMIT, "shape too large");
			goto out;
		}
		numel *= t->dim[i];
	}
	if (numel > maxt / es) {
		rc = burn_fail(c, BURN_ERR_LIMIT, "%lld elements, over the tensor "
		               "limit of %lld bytes", (long long)numel, (long long)maxt);
		goto out;
	}
	size = numel * es;
	if ((int64_t)(end - (long)(pre_len + hlen)) != size) {
		rc = burn_fail(c, BURN_ERR_PARSE, "%lld bytes of data, the header's "
		               "shape and dtype say %lld",
		               (long long)(end - (long)(pre_len + hlen)), (long long)size);
		goto out;
	}
	t->nbytes = size;
	t->data = arena_alloc(a, size > 0 ? (size_t)size : 1);
	if (size > 0 && fread(t->data, 1, (size_t)size, f) != (size_t)size) {
		rc = burn_fail(c, BURN_ERR_IO, "read error");
		goto out;
	}
	rc = BURN_OK;
	goto out;
bad_header:
	rc = burn_fail(c, BURN_ERR_PARSE, "malformed .npy header (want {'descr': "
	               "..., 'fortran_order': ..., 'shape': (...)})");
out:
	free(hdr);
	fclose(f);
	return rc;
}

int npy_save_file(Ctx *c, const char *path, int dtype, int rank,
                  const int64_t *dim, const void *data)
{
	char hdr[512];
	const char *code = NULL;
	int64_t numel = 1;
	int n, ok;
	size_t total;
	FILE *f;

	for (int i = 0; i < NCODES; i++)
		if (codes[i].dt == dtype)
			code = codes[i].code;
	c->file = path;
	if (!code)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "NumPy has no dtype for %s",
		                 dtype_name(dtype));
	n = snprintf(hdr, sizeof hdr, "{'descr': '%c%s', 'fortran_order': False, "
	             "'shape': (", dtype_size(dtype) == 1 ? '|' : '<', code);
	for (int i = 0; i < rank; i++) {
		numel *= dim[i];
		n += snprintf(hdr + n, sizeof hdr - n, "%lld%s", (long long)dim[i],
		              rank == 1 ? "," : i + 1 < rank ? ", " : "");
	}
	n += snprintf(hdr + n, sizeof hdr - n, "), }");
	/* pad with spaces to the 64-byte boundary, '\n' last (format 1.0) */
	total = (10 + (size_t)n + 1 + 63) / 64 * 64;
	memset(hdr + n, ' ', total - 10 - n - 1);
	hdr[total - 10 - 1] = '\n';
	if (!(f = fopen(path, "wb")))
		return burn_fail(c, BURN_ERR_IO, "%s", strerror(errno));
	ok = fwrite("\x93NUMPY\x01\x00", 1, 8, f) == 8 &&
	     fputc((int)((total - 10) & 0xff), f) != EOF &&
	     fputc((int)((total - 10) >> 8), f) != EOF &&
	     fwrite(hdr, 1, total - 10, f) == total - 10 &&
	     (numel == 0 || fwrite(data, (size_t)dtype_size(dtype), (size_t)numel, f) ==
	                    (size_t)numel);
	if (fclose(f) || !ok)
		return burn_fail(c, BURN_ERR_IO, "write error");
	return BURN_OK;
}

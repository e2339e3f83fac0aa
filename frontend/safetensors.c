/*
 * safetensors.c - the safetensors reader (safetensors.h): a small JSON
 * parser over the header, checking every size and offset.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "safetensors.h"

#define ST_MAX_HEADER (100u << 20)
#define ST_MAX_NEST 64

typedef struct J {
	Ctx *c;
	Arena *a;
	const uint8_t *s;
	size_t n, i;
	int depth;
} J;

static int
jfail(J *j, const char *what)
{
	return burn_fail(j->c, BURN_ERR_PARSE, "safetensors header: %s at byte %zu",
	                 what, j->i + 8);
}

static void
ws(J *j)
{
	while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' ||
	                       j->s[j->i] == '\n' || j->s[j->i] == '\r'))
		j->i++;
}

static int
eat(J *j, char ch)
{
	ws(j);
	if (j->i < j->n && j->s[j->i] == ch) {
		j->i++;
		return 1;
	}
	return 0;
}

static void
put_utf8(char *o, size_t *k, uint32_t cp)
{
	if (cp < 0x80) {
		o[(*k)++] = (char)cp;
	} else if (cp < 0x800) {
		o[(*k)++] = (char)(0xc0 | cp >> 6);
		o[(*k)++] = (char)(0x80 | (cp & 63));
	} else if (cp < 0x10000) {
		o[(*k)++] = (char)(0xe0 | cp >> 12);
		o[(*k)++] = (char)(0x80 | ((cp >> 6) & 63));
		o[(*k)++] = (char)(0x80 | (cp & 63));
	} else {
		o[(*k)++] = (char)(0xf0 | cp >> 18);
		o[(*k)++] = (char)(0x80 | ((cp >> 12) & 63));
		o[(*k)++] = (char)(0x80 | ((cp >> 6) & 63));
		o[(*k)++] = (char)(0x80 | (cp & 63));
	}
}

static int
hex4(J *j, uint32_t *out)
{
	uint32_t v = 0;

	if (j->n - j->i < 4)
		return jfail(j, "short \\u escape");
	for (int k = 0; k < 4; k++) {
		int ch = j->s[j->i++], d;
		d = ch >= '0' && ch <= '9' ? ch - '0' : (ch | 32) >= 'a' && (ch | 32) <= 'f' ?
		    (ch | 32) - 'a' + 10 : -1;
		if (d < 0)
			return jfail(j, "bad \\u escape");
		v = v * 16 + (uint32_t)d;
	}
	*out = v;
	return BURN_OK;
}

/* A JSON string, unescaped into the arena (NUL bytes refused). */
static int
jstring(J *j, char **out)
{
	char *o;
	size_t k = 0;

	ws(j);
	if (j->i >= j->n || j->s[j->i] != '"')
		return jfail(j, "expected a string");
	j->i++;
	/* the unescaped text is never longer than the rest of the header */
	if (!(o = arena_alloc(j->a, j->n - j->i + 1)))
		return burn_fail(j->c, BURN_ERR_NOMEM, "out of memory");
	for (;;) {
		uint8_t ch;
		if (j->i >= j->n)
			return jfail(j, "string not closed");
		ch = j->s[j->i++];
		if (ch == '"')
			break;
		if (ch < 0x20)
			return jfail(j, "control byte in a string");
		if (ch != '\\') {
			o[k++] = (char)ch;
			continue;
		}
		if (j->i >= j->n)
			return jfail(j, "string not closed");
		ch = j->s[j->i++];
		switch (ch) {
		case '"': case '\\': case '/': o[k++] = (char)ch; break;
		case 'b': o[k++] = '\b'; break;
		case 'f': o[k++] = '\f'; break;
		case 'n': o[k++] = '\n'; break;
		case 'r': o[k++] = '\r'; break;
		case 't': o[k++] = '\t'; break;
		case 'u': {
			uint32_t cp, lo;
			TRY(hex4(j, &cp));
			if (cp >= 0xd800 && cp < 0xdc00) {
				if (j->n - j->i < 2 || j->s[j->i] != '\\' || j->s[j->i + 1] != 'u')
					return jfail(j, "unpaired surrogate");
				j->i += 2;
				TRY(hex4(j, &lo));
				if (lo < 0xdc00 || lo >= 0xe000)
					return jfail(j, "unpaired surrogate");
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				return jfail(j, "unpaired surrogate");
			}
			if (cp == 0)
				return jfail(j, "NUL in a string");
			put_utf8(o, &k, cp);
			break;
		}
		default:
			return jfail(j, "bad escape");
		}
	}
	o[k] = 0;
	*out = o;
	return BURN_OK;
}

/* A non-negative integer (no sign, fraction or exponent), below 2^62. */
static int
juint(J *j, int64_t *out)
{
	int64_t v = 0;
	size_t s;

	ws(j);
	s = j->i;
	while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9') {
		if (v > ((int64_t)1 << 62) / 10)
			return jfail(j, "integer too large");
		v = v * 10 + (j->s[j->i++] - '0');
	}
	if (j->i == s)
		return jfail(j, "expected a non-negative integer");
	if (j->i < j->n && (j->s[j->i] == '.' || j->s[j->i] == 'e' || j->s[j->i] == 'E'))
		return jfail(j, "expected an integer");
	*out = v;
	return BURN_OK;
}

/* Skip any JSON value (for __metadata__ and keys we do not use). */
static int
jskip(J *j)
{
	char *s;
	int64_t v;

	ws(j);
	if (j->i >= j->n)
		return jfail(j, "expected a value");
	if (++j->depth > ST_MAX_NEST)
		return jfail(j, "nested too deep");
	switch (j->s[j->i]) {
	case '"':
		TRY(jstring(j, &s));
		break;
	case '{':
		j->i++;
		if (!eat(j, '}'))
			do {
				TRY(jstring(j, &s));
				if (!eat(j, ':'))
					return jfail(j, "expected ':'");
				TRY(jskip(j));
			} while (eat(j, ','));
		if (!eat(j, '}'))
			return jfail(j, "expected ',' or '}'");
		break;
	case '[':
		j->i++;
		if (!eat(j, ']'))
			do
				TRY(jskip(j));
			while (eat(j, ','));
		if (!eat(j, ']'))
			return jfail(j, "expected ',' or ']'");
		break;
	case 't':
	case 'f':
	case 'n': {
		static const char *const lit[] = { "true", "false", "null" };
		int k = j->s[j->i] == 't' ? 0 : j->s[j->i] == 'f' ? 1 : 2;
		size_t len = strlen(lit[k]);
		if (j->n - j->i < len || memcmp(j->s + j->i, lit[k], len))
			return jfail(j, "bad literal");
		j->i += len;
		break;
	}
	default:
		if (j->s[j->i] == '-')
			j->i++;
		TRY(juint(j, &v));
	}
	j->depth--;
	return BURN_OK;
}

static int
st_dtype(const char *s, int *dt, int *size)
{
	static const struct { const char *name; int dt, size; } t[] = {
		{ "F64", DT_F64, 8 }, { "F32", DT_F32, 4 }, { "F16", DT_F16, 2 },
		{ "BF16", DT_BF16, 2 }, { "I64", DT_I64, 8 }, { "I32", DT_I32, 4 },
		{ "I16", DT_I16, 2 }, { "I8", DT_I8, 1 }, { "U64", DT_U64, 8 },
		{ "U32", DT_U32, 4 }, { "U16", DT_U16, 2 }, { "U8", DT_U8, 1 },
		{ "BOOL", DT_BOOL, 1 },
	};
	for (size_t k = 0; k < sizeof t / sizeof t[0]; k++)
		if (!strcmp(s, t[k].name)) {
			*dt = t[k].dt;
			*size = t[k].size;
			return 1;
		}
	return 0;
}

/* One tensor's description: {"dtype": ..., "shape": [...], "data_offsets": [b, e]} */
static int
jtensor(J *j, StTensor *t, uint64_t datalen, const uint8_t *data)
{
	int have_dt = 0, have_shape = 0, have_off = 0, esize = 0;
	int64_t off[2] = { 0, 0 }, bytes;

	if (!eat(j, '{'))
		return jfail(j, "expected '{' for a tensor");
	if (!eat(j, '}'))
		do {
			char *k;
			TRY(jstring(j, &k));
			if (!eat(j, ':'))
				return jfail(j, "expected ':'");
			if (!strcmp(k, "dtype")) {
				char *d;
				TRY(jstring(j, &d));
				if (!st_dtype(d, &t->dtype, &esize))
					return burn_fail(j->c, BURN_ERR_UNSUPPORTED, "safetensors: "
					                 "tensor '%s' has dtype '%.20s', not one burncc "
					                 "reads (F64 F32 F16 BF16 I64 ... U8 BOOL)",
					                 t->name, d);
				have_dt++;
			} else if (!strcmp(k, "shape")) {
				t->rank = 0;
				if (!eat(j, '['))
					return jfail(j, "expected '[' for the shape");
				if (!eat(j, ']')) {
					do {
						if (t->rank == 8)
							return jfail(j, "more than 8 dims");
						TRY(juint(j, &t->dim[t->rank]));
						t->rank++;
					} while (eat(j, ','));
					if (!eat(j, ']'))
						return jfail(j, "expected ',' or ']' in the shape");
				}
				have_shape++;
			} else if (!strcmp(k, "data_offsets")) {
				if (!eat(j, '['))
					return jfail(j, "expected '[' for data_offsets");
				TRY(juint(j, &off[0]));
				if (!eat(j, ','))
					return jfail(j, "data_offsets has two numbers");
				TRY(juint(j, &off[1]));
				if (!eat(j, ']'))
					return jfail(j, "data_offsets has two numbers");
				have_off++;
			} else {
				TRY(jskip(j));
			}
		} while (eat(j, ','));
	if (!eat(j, '}'))
		return jfail(j, "expected ',' or '}' in a tensor");
	if (have_dt != 1 || have_shape != 1 || have_off != 1)
		return burn_fail(j->c, BURN_ERR_PARSE, "safetensors: tensor '%s' needs "
		                 "dtype, shape and data_offsets once each", t->name);
	t->numel = 1;
	for (int d = 0; d < t->rank; d++)
		if (burn_mul_ovf(t->numel, t->dim[d], &t->numel))
			return burn_fail(j->c, BURN_ERR_PARSE, "safetensors: tensor '%s': its "
			                 "size overflows", t->name);
	if (burn_mul_ovf(t->numel, esize, &bytes) || off[0] > off[1] ||
	    (uint64_t)off[1] > datalen || off[1] - off[0] != bytes)
		return burn_fail(j->c, BURN_ERR_PARSE, "safetensors: tensor '%s': "
		                 "data_offsets [%lld, %lld] do not hold its %lld elements "
		                 "in the %llu bytes of data", t->name, (long long)off[0],
		                 (long long)off[1], (long long)t->numel,
		                 (unsigned long long)datalen);
	t->data = data + off[0];
	t->bytes = (uint64_t)bytes;
	return BURN_OK;
}

int
st_parse(Ctx *c, Arena *a, const uint8_t *buf, size_t n, StFile *out)
{
	uint64_t hlen = 0;
	J j = { c, a, NULL, 0, 0, 0 };
	int cap = 0;

	memset(out, 0, sizeof *out);
	out->buf = (uint8_t *)buf;
	out->size = n;
	if (n < 8)
		return burn_fail(c, BURN_ERR_PARSE, "safetensors: %zu bytes, shorter "
		                 "than the 8-byte header length", n);
	for (int k = 7; k >= 0; k--)
		hlen = hlen << 8 | buf[k];
	if (hlen > ST_MAX_HEADER || hlen > n - 8)
		return burn_fail(c, BURN_ERR_PARSE, "safetensors: header of %llu bytes "
		                 "in a file of %zu (at most 100 MB, inside the file)",
		                 (unsigned long long)hlen, n);
	j.s = buf + 8;
	j.n = (size_t)hlen;
	if (!eat(&j, '{'))
		return jfail(&j, "expected '{'");
	if (!eat(&j, '}'))
		do {
			char *name;
			StTensor *t;
			TRY(jstring(&j, &name));
			if (!eat(&j, ':'))
				return jfail(&j, "expected ':'");
			if (!strcmp(name, "__metadata__")) {
				TRY(jskip(&j));
				continue;
			}
			for (int k = 0; k < out->n; k++)
				if (!strcmp(out->t[k].name, name))
					return burn_fail(c, BURN_ERR_PARSE, "safetensors: tensor "
					                 "'%s' twice", name);
			if (out->n == cap) {
				int nc = cap ? 2 * cap : 16;
				StTensor *nt = arena_grow(a, out->t, sizeof *nt, (size_t)cap, (size_t)nc);
				if (!nt)
					return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
				out->t = nt;
				cap = nc;
			}
			t = &out->t[out->n++];
			memset(t, 0, sizeof *t);
			t->name = name;
			TRY(jtensor(&j, t, n - 8 - hlen, buf + 8 + hlen));
		} while (eat(&j, ','));
	if (!eat(&j, '}'))
		return jfail(&j, "expected ',' or '}'");
	ws(&j);
	if (j.i != j.n)
		return jfail(&j, "bytes after the header's object");
	return BURN_OK;
}

int
st_read(Ctx *c, Arena *a, const char *path, StFile *out)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0, got;
	int rc;

	memset(out, 0, sizeof *out);
	if (!f)
		return burn_fail(c, BURN_ERR_IO, "%s: %s", path, strerror(errno));
	do {
		if (n == cap) {
			uint8_t *nb;
			if ((int64_t)cap >= c->limits.max_file_bytes) {
				free(buf);
				fclose(f);
				return burn_fail(c, BURN_ERR_LIMIT, "%s: larger than %lld bytes",
				                 path, (long long)c->limits.max_file_bytes);
			}
			cap = cap ? 2 * cap : 1 << 16;
			if ((int64_t)cap > c->limits.max_file_bytes)
				cap = (size_t)c->limits.max_file_bytes + 1;
			if (!(nb = realloc(buf, cap))) {
				free(buf);
				fclose(f);
				return burn_fail(c, BURN_ERR_NOMEM, "%s: out of memory", path);
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return burn_fail(c, BURN_ERR_IO, "%s: read error", path);
	}
	fclose(f);
	rc = st_parse(c, a, buf, n, out);
	out->buf = buf;
	out->size = n;
	out->owned = 1;
	if (rc) {
		st_free(out);
		return rc;
	}
	return BURN_OK;
}

void
st_free(StFile *f)
{
	if (f->owned)
		free(f->buf);
	f->buf = NULL;
	f->owned = 0;
}

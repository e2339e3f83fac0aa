/*
 * base.c - error context, overflow-checked arithmetic, the arena, and
 * element-type tables.  See base.h for the contracts.
 */
#include "base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors --------------------------------------------------------- */

/* Default limits: generous enough for real models, small enough that a
 * hostile file cannot make us allocate the machine away. */
void
burn_ctx_init(Ctx *c, const char *file)
{
	memset(c, 0, sizeof *c);
	c->file = file;
	c->limits.max_file_bytes = (int64_t)2 << 30;
	c->limits.max_tensor_bytes = (int64_t)1 << 30;
	c->limits.max_depth = 32;
	c->limits.max_nodes = 1000000;
	c->limits.max_fold_steps = (int64_t)1 << 24;
	c->limits.max_fold_total = (int64_t)1 << 26;
	c->limits.max_arena_bytes = (int64_t)4 << 30;
	c->limits.string_bytes = 65536;
}

/*
 * Length of the valid UTF-8 sequence at p (1 to 4 bytes, p holds n), or 0
 * if the bytes there are not one: overlong forms, surrogates and code
 * points past U+10FFFF are not valid.
 */
static int
utf8_len(const unsigned char *p, size_t n)
{
	int len, k;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if ((size_t)len > n)
		return 0;
	for (k = 1; k < len; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[k] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

/*
 * Copy the NUL-terminated src into dst (cap bytes) as one printable line:
 * control characters (C0, DEL and the C1 range U+0080..U+009F) and bytes
 * that are not valid UTF-8 become C escapes (\n, \t, \r, \xNN), so a name
 * in a hostile model can neither break the message's one-line rule nor send
 * escape sequences to a terminal.  An escape is never cut in half.
 */
static void
escape_line(char *dst, size_t cap, const char *src)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t n = strlen(src), i = 0, o = 0;

	while (i < n) {
		int len = utf8_len(p + i, n - i);
		char esc[24];
		size_t k;

		if (len == 1 && p[i] >= 0x20 && p[i] != 0x7f) {
			esc[0] = (char)p[i];
			k = 1;
		} else if (len == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0) {
			k = (size_t)snprintf(esc, sizeof esc, "\\x%02x\\x%02x", p[i], p[i + 1]);
		} else if (len > 1) {
			memcpy(esc, p + i, (size_t)len);
			k = (size_t)len;
		} else {
			len = 1;
			k = (size_t)(p[i] == '\n' ? snprintf(esc, sizeof esc, "\\n")
			           : p[i] == '\t' ? snprintf(esc, sizeof esc, "\\t")
			           : p[i] == '\r' ? snprintf(esc, sizeof esc, "\\r")
			           : snprintf(esc, sizeof esc, "\\x%02x", p[i]));
		}
		if (o + k >= cap)
			break;
		memcpy(dst + o, esc, k);
		o += k;
		i += (size_t)len;
	}
	dst[o] = 0;
}

/*
 * Record the first error as "<file>: node '<node>' (<op>): <reason>", each
 * part present only when the context has it at the time of the call.  The
 * whole line goes through escape_line: names and strings in it may come
 * from the model, and this is the one place every message passes.
 */
int
burn_vfail(Ctx *c, int code, const char *fmt, va_list ap)
{
	char raw[sizeof c->msg];
	size_t n = 0, cap;
	int k;

	if (!c || c->code != BURN_OK)
		return code;
	if (code == BURN_OK)
		code = BURN_ERR_INTERNAL;  /* failing with "OK" is a bug */
	c->code = code;
	cap = sizeof raw;
	raw[0] = 0;
#define PUT(...) do { \
		k = snprintf(raw + n, cap - n, __VA_ARGS__); \
		if (k > 0) n += (size_t)k; \
		if (n >= cap) n = cap - 1; \
	} while (0)
	if (c->file)
		PUT("%s: ", c->file);
	if (c->node && c->op)
		PUT("node '%s' (%s): ", c->node, c->op);
	else if (c->node)
		PUT("node '%s': ", c->node);
	else if (c->op)
		PUT("(%s): ", c->op);
#undef PUT
	if (fmt)
		vsnprintf(raw + n, cap - n, fmt, ap);
	escape_line(c->msg, sizeof c->msg, raw);
	return code;
}

int
burn_fail(Ctx *c, int code, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = burn_vfail(c, code, fmt, ap);
	va_end(ap);
	return r;
}

const char *
burn_code_name(int code)
{
	switch (code) {
	case BURN_OK:              return "ok";
	case BURN_ERR_IO:          return "io";
	case BURN_ERR_PARSE:       return "parse";
	case BURN_ERR_UNSUPPORTED: return "unsupported";
	case BURN_ERR_INVALID:     return "invalid";
	case BURN_ERR_SHAPE:       return "shape";
	case BURN_ERR_LIMIT:       return "limit";
	case BURN_ERR_NOMEM:       return "nomem";
	case BURN_ERR_INTERNAL:    return "internal";
	}
	return "unknown";
}

int
burn_mul_ovf(int64_t a, int64_t b, int64_t *out)
{
	int64_t r;

	if (__builtin_mul_overflow(a, b, &r))
		return 1;
	*out = r;
	return 0;
}

int
burn_add_ovf(int64_t a, int64_t b, int64_t *out)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return 1;
	*out = r;
	return 0;
}

/* ---- arena ---------------------------------------------------------- */

/*
 * A block is one calloc'd chunk: this header, then cap bytes of payload of
 * which used are handed out.  Small requests are carved from the head block;
 * a request larger than a quarter block gets a block of its own, linked
 * behind the head so the head keeps serving small requests.
 */
struct ArenaBlock {
	ArenaBlock *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

enum { BLOCK_SIZE = 64 << 10, ALIGN = 16 };

void
arena_init(Arena *a)
{
	a->head = NULL;
	a->total = 0;
}

void
arena_free(Arena *a)
{
	ArenaBlock *b, *next;

	for (b = a->head; b; b = next) {
		next = b->next;
		free(b);
	}
	a->head = NULL;
	a->total = 0;
}

void
arena_reset(Arena *a)
{
	ArenaBlock *keep = NULL, *b, *next;

	for (b = a->head; b; b = next) {
		next = b->next;
		if (!keep && b->cap == BLOCK_SIZE)
			keep = b;
		else
			free(b);
	}
	a->head = keep;
	a->total = 0;
	if (keep) {
		memset(keep->data, 0, keep->used);
		keep->used = 0;
		keep->next = NULL;
		a->total = sizeof *keep + keep->cap;
	}
}

static ArenaBlock *
newblock(Arena *a, size_t cap)
{
	ArenaBlock *b;

	if (cap > SIZE_MAX - sizeof *b)
		return NULL;
	b = calloc(1, sizeof *b + cap);
	if (!b)
		return NULL;
	b->cap = cap;
	a->total += sizeof *b + cap;
	return b;
}

void *
arena_alloc(Arena *a, size_t n)
{
	ArenaBlock *b;
	void *p;

	if (n > SIZE_MAX - 2 * ALIGN)
		return NULL;
	n = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	if (n == 0)
		n = ALIGN;
	if (n > BLOCK_SIZE / 4) {
		/* A big request: its own block, behind the head. */
		if (!(b = newblock(a, n)))
			return NULL;
		b->used = n;
		if (a->head) {
			b->next = a->head->next;
			a->head->next = b;
		} else
			a->head = b;
		return b->data;
	}
	b = a->head;
	if (!b || b->cap - b->used < n) {
		if (!(b = newblock(a, BLOCK_SIZE)))
			return NULL;
		b->next = a->head;
		a->head = b;
	}
	p = b->data + b->used;
	b->used += n;
	return p;
}

char *
arena_strndup(Arena *a, const char *s, size_t n)
{
	char *p;

	if (n == SIZE_MAX)
		return NULL;
	p = arena_alloc(a, n + 1);
	if (p && n)
		memcpy(p, s, n);
	return p;
}

char *
arena_strdup(Arena *a, const char *s)
{
	if (!s)
		s = "";
	return arena_strndup(a, s, strlen(s));
}

char *
arena_printf(Arena *a, const char *fmt, ...)
{
	va_list ap;
	char small[256], *p;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	if ((size_t)n < sizeof small)
		return arena_strndup(a, small, (size_t)n);
	if (!(p = arena_alloc(a, (size_t)n + 1)))
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

/* The old vector is not freed (arenas free whole); the new one is a copy of
 * the first oldn elements with the rest zeroed. */
void *
arena_grow(Arena *a, void *old, size_t elem, size_t oldn, size_t want)
{
	void *p;

	if (want < oldn)
		want = oldn;
	if (elem && want > SIZE_MAX / elem)
		return NULL;
	if (!(p = arena_alloc(a, elem * want)))
		return NULL;
	if (old && oldn && elem)
		memcpy(p, old, elem * oldn);
	return p;
}

/* ---- element types -------------------------------------------------- */

/* The dtype table: one row per ONNX TensorProto.DataType burncc knows.
 *   bits   storage bits per element; below 8 the type is packed, several
 *          elements to a byte, the first in the low bits (ONNX's int4,
 *          uint4, float4e2m1, int2, uint2), so a tensor of n elements
 *          takes ceil(n * bits / 8) bytes (dtype_nbytes)
 *   expr   the type kernel expressions compute it in: f32 for the storage
 *          floats, i8 or u8 for the packed integers (kir.h)
 *   flags  DF_* below */
enum {
	DF_FLOAT = 1,    /* a floating type (dtype_is_float) */
	DF_INT = 2,      /* an integer type, not bool (dtype_is_int) */
	DF_SIGNED = 4,   /* signed integer or float */
	DF_STORAGE = 8,  /* float bits in memory, f32 in expressions */
	DF_CASTONLY = 16,/* converted only (Cast, CastLike, QuantizeLinear,
	                  * DequantizeLinear), as ONNX's type constraints say */
	DF_F8 = 32,      /* one of the five float8 formats */
	DF_STRING = 64,  /* string: taken only by ops whose row says TY_STR */
};

#define FLT (DF_FLOAT | DF_SIGNED)
#define SI (DF_INT | DF_SIGNED)
#define SF (FLT | DF_STORAGE)
#define NARROW (SF | DF_CASTONLY)

static const struct {
	const char *name, *ctype;
	int bits, flags, expr;
} dtinfo[] = {
	[DT_F32]    = {"f32", "float", 32, FLT, DT_F32},
	[DT_U8]     = {"u8", "uint8_t", 8, DF_INT, DT_U8},
	[DT_I8]     = {"i8", "int8_t", 8, SI, DT_I8},
	[DT_U16]    = {"u16", "uint16_t", 16, DF_INT, DT_U16},
	[DT_I16]    = {"i16", "int16_t", 16, SI, DT_I16},
	[DT_I32]    = {"i32", "int32_t", 32, SI, DT_I32},
	[DT_I64]    = {"i64", "int64_t", 64, SI, DT_I64},
	/* string: an array of pointers to NUL-terminated UTF-8 (strings.inc);
	 * a pointer is 8 bytes on the hosts burncc runs and builds for */
	[DT_STRING] = {"str", "burn_str", 64, DF_STRING, DT_UNDEF},
	[DT_BOOL]   = {"bool", "uint8_t", 8, 0, DT_BOOL},
	[DT_F16]    = {"f16", "uint16_t", 16, SF, DT_F32},
	[DT_F64]    = {"f64", "double", 64, FLT, DT_F64},
	[DT_U32]    = {"u32", "uint32_t", 32, DF_INT, DT_U32},
	[DT_U64]    = {"u64", "uint64_t", 64, DF_INT, DT_U64},
	[DT_C64]    = {"c64", NULL, 0, 0, DT_UNDEF},
	[DT_C128]   = {"c128", NULL, 0, 0, DT_UNDEF},
	[DT_BF16]   = {"bf16", "uint16_t", 16, SF, DT_F32},
	/* float8: one byte, converted to and from f32 like f16 */
	[DT_F8E4M3FN]   = {"float8e4m3fn", "uint8_t", 8, NARROW | DF_F8, DT_F32},
	[DT_F8E4M3FNUZ] = {"float8e4m3fnuz", "uint8_t", 8, NARROW | DF_F8, DT_F32},
	[DT_F8E5M2]     = {"float8e5m2", "uint8_t", 8, NARROW | DF_F8, DT_F32},
	[DT_F8E5M2FNUZ] = {"float8e5m2fnuz", "uint8_t", 8, NARROW | DF_F8, DT_F32},
	[DT_F8E8M0]     = {"float8e8m0", "uint8_t", 8, NARROW | DF_F8, DT_F32},
	/* packed: two or four to a byte, low bits first; the C type is the
	 * byte a buffer of them is made of */
	[DT_U4]      = {"u4", "uint8_t", 4, DF_INT | DF_CASTONLY, DT_U8},
	[DT_I4]      = {"i4", "uint8_t", 4, SI | DF_CASTONLY, DT_I8},
	[DT_F4E2M1]  = {"float4e2m1", "uint8_t", 4, NARROW, DT_F32},
	[DT_U2]      = {"u2", "uint8_t", 2, DF_INT | DF_CASTONLY, DT_U8},
	[DT_I2]      = {"i2", "uint8_t", 2, SI | DF_CASTONLY, DT_I8},
};

#undef FLT
#undef SI
#undef SF
#undef NARROW

#define NDT ((int)(sizeof dtinfo / sizeof dtinfo[0]))

static int
flags(int dt)
{
	return dt > 0 && dt < NDT ? dtinfo[dt].flags : 0;
}

int
dtype_bits(int dt)
{
	return dt > 0 && dt < NDT ? dtinfo[dt].bits : 0;
}

/* Whole bytes only: a packed type has no size of its own. */
int
dtype_size(int dt)
{
	int b = dtype_bits(dt);

	return b % 8 ? 0 : b / 8;
}

int
dtype_is_packed(int dt)
{
	int b = dtype_bits(dt);

	return b > 0 && b < 8;
}

int
dtype_nbytes(int dt, int64_t n, int64_t *out)
{
	int b = dtype_bits(dt);

	*out = 0;
	if (b <= 0 || n < 0)
		return 1;
	if (b % 8 == 0)
		return burn_mul_ovf(n, b / 8, out);
	if (n > INT64_MAX - 7)
		return 1;
	*out = n / (8 / b) + (n % (8 / b) != 0);
	return 0;
}

int
dtype_expr(int dt)
{
	return dt > 0 && dt < NDT ? dtinfo[dt].expr : DT_UNDEF;
}

const char *
dtype_name(int dt)
{
	if (dt > 0 && dt < NDT && dtinfo[dt].name)
		return dtinfo[dt].name;
	return dt == DT_UNDEF ? "?" : "invalid";
}

int
dtype_from_name(const char *s)
{
	int i;

	if (!s)
		return DT_UNDEF;
	for (i = 1; i < NDT; i++)
		if (dtinfo[i].name && strcmp(dtinfo[i].name, s) == 0)
			return i;
	return DT_UNDEF;
}

const char *
dtype_ctype(int dt)
{
	return dt > 0 && dt < NDT ? dtinfo[dt].ctype : NULL;
}

int
dtype_is_float(int dt)
{
	return (flags(dt) & DF_FLOAT) != 0;
}

int
dtype_is_f8(int dt)
{
	return (flags(dt) & DF_F8) != 0;
}

/* f16, bf16, float8 and float4 live in memory as bit patterns and compute
 * in f32. */
int
dtype_is_storage(int dt)
{
	return (flags(dt) & DF_STORAGE) != 0;
}

int
dtype_cast_only(int dt)
{
	return (flags(dt) & DF_CASTONLY) != 0;
}

int
dtype_is_int(int dt)
{
	return (flags(dt) & DF_INT) != 0;
}

/* Signed integers and the floating types (they have a sign too). */
int
dtype_is_signed(int dt)
{
	return (flags(dt) & DF_SIGNED) != 0;
}

int
dtype_is_string(int dt)
{
	return (flags(dt) & DF_STRING) != 0;
}

int
dtype_supported(int dt)
{
	return (flags(dt) & (DF_FLOAT | DF_INT)) || dt == DT_BOOL;
}

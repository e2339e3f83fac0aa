/*
 * emit_c.c - write the C module: header with the documented API, weights,
 * rendered kernels and the run function that calls them in order.
 *
 * Weights are emitted as string literals inside a union with a typed array:
 *
 *     static const union { unsigned char b[16]; float v[4]; } w7 = {"..."};
 *
 * Compilers read a string literal about as fast as they read the file, so
 * a model with tens of millions of parameters compiles in seconds, where an
 * initializer list of float literals takes minutes (a list of byte values:
 * 25 s for 5 MB, against about 1 s).  C99 promises string literals of
 * 4095 bytes only (gcc -pedantic enforces it, MSVC stops at 16380), so a
 * larger tensor is rows of at most that, each row its own literal:
 *
 *     static const union { unsigned char b[3][4095]; float v[3000]; } w9 =
 *         {{"...", "...", "..."}};
 *
 * (an array of arrays has no padding; the last row is zero-filled).  Reading the typed
 * member of a union initialised through another is defined in C99 (TC3)
 * and later.  The bytes are little-endian; the .c refuses to compile on a
 * big-endian target.
 *
 * With EmitC.blob (burncc --weights=blob) the weights leave the .c: they
 * go to one binary file, the blob, which the caller passes to PREFIX_run
 * as its first argument (loaded, mapped, or at a flash address), or which
 * the .c links into itself with the assembler's .incbin when compiled
 * with -DPREFIX_WEIGHTS_INCBIN (GCC, Clang; ELF).  The blob:
 *
 *     0   8 bytes  "BURNCCW1"
 *     8   u64      the blob's size in bytes
 *     16  u64      FNV-1a (64-bit) of bytes 64 .. size
 *     24  40 bytes zero
 *     64  each weight the module reads, in value order, at an offset
 *         aligned to BURN_ARENA_ALIGN, zero padding between
 *
 * (u64 little-endian).  Offsets are compile-time constants of the .c; the
 * run function checks the first 24 bytes against its own, so a blob of
 * another model or build is refused (PREFIX_ERR_WEIGHTS), not read.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "emit_c.h"
#include "render_c.h"
#include "runtime/strings_src.h"

void c_ident(const char *s, char *buf, size_t n)
{
	size_t j = 0;

	if (!s || !*s)
		s = "t";
	if (isdigit((unsigned char)*s) && j + 1 < n)
		buf[j++] = '_';
	for (; *s && j + 1 < n; s++)
		buf[j++] = isalnum((unsigned char)*s) ? *s : '_';
	buf[j] = 0;
}

static void upper(const char *s, char *buf, size_t n)
{
	size_t j = 0;

	for (; *s && j + 1 < n; s++)
		buf[j++] = toupper((unsigned char)*s);
	buf[j] = 0;
}

/*
 * Text from the model (value, node and initializer names, the model's file
 * name) reaches the generated files in three contexts, each with its own
 * escaping, so that no name can end a comment, start a directive, form a
 * trigraph (-std=c99 replaces `??/` and friends before anything else) or
 * make two parameters one:
 *
 *   comment text   put_comment: printable ASCII stays, except that `\` is
 *                  `\\`, a `/` next to a `*` is `\x2f` and a `?` next to a
 *                  `?` is `\x3f`; other bytes are \xNN, valid UTF-8 is \uXXXX
 *                  or \UXXXXXXXX.  Callers put neither `*`, `/` nor `?` right
 *                  before or after it.
 *   string literal put_string: the exact bytes, with octal escapes for all
 *                  but printable ASCII and for `"`, `\` and `?`.
 *   identifier     param_names: in_X / out_X with X the name's letters and
 *                  digits, unique within the module (see there).
 */
#define COMMENT_MAX 1000   /* source bytes of one name shown in a comment */

/* Length of the valid UTF-8 sequence at s (2-4) and its code point, or 0
 * if s does not start one (overlong forms and surrogates are invalid). */
static int utf8_seq(const unsigned char *s, uint32_t *cp)
{
	int n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
	uint32_t v;

	if (s[0] >= 0xf5 || n == 0)
		return 0;
	v = s[0] & (0x7f >> n);
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && v < 0x800) || (n == 4 && (v < 0x10000 || v > 0x10ffff)) ||
	    (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n;
}

/* s as comment text (see above); returns the characters written. */
static int put_comment(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t len = strlen((const char *)s), i = 0;
	int col = 0;

	while (i < len && i < COMMENT_MAX) {
		unsigned char ch = s[i], prev = i ? s[i - 1] : 0, next = s[i + 1];
		uint32_t cp;
		int n;
		if ((ch == '/' && (prev == '*' || next == '*')) ||
		    (ch == '?' && (prev == '?' || next == '?'))) {
			col += fprintf(f, "\\x%02x", ch);
		} else if (ch == '\\') {
			col += fprintf(f, "\\\\");
		} else if (ch >= 0x20 && ch < 0x7f) {
			fputc(ch, f);
			col++;
		} else if (ch >= 0x80 && (n = utf8_seq(s + i, &cp)) > 0) {
			col += fprintf(f, cp > 0xffff ? "\\U%08" PRIx32 : "\\u%04" PRIx32, cp);
			i += n;
			continue;
		} else {
			col += fprintf(f, "\\x%02x", ch);
		}
		i++;
	}
	if (i < len)
		col += fprintf(f, "... (%zu bytes)", len);
	return col;
}

static void put_source(FILE *f, const char *path);

int emit_c_comment(FILE *f, const char *s)
{
	return put_comment(f, s);
}

void emit_c_source(FILE *f, const char *path)
{
	put_source(f, path);
}

/* The name shown for the model: its last path component, as comment text. */
static void put_source(FILE *f, const char *path)
{
	const char *b = strrchr(path, '/');

	fputs(" from ", f);
	put_comment(f, b ? b + 1 : path);
}

/* s as a C string literal holding exactly its bytes (octal escapes never
 * swallow the next character, unlike \x). */
static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\' && ch != '?')
			fputc(ch, f);
		else
			fprintf(f, "\\%03o", ch);
	}
	fputc('"', f);
}

/*
 * Identifiers from names.  Parameter names are "in_" or "out_" followed by
 * the name's ASCII letters and digits, every run of other bytes one `_`
 * (none leading or trailing, so no `__`: C++ reserves it), at most
 * IDENT_CORE of them, "v" if none are left.  A name already taken gets
 * "_2", "_3", ...: taken are the module's own symbols (PREFIX_run, ...,
 * the kernels, the run function's locals) and the names given before, in
 * the order inputs then outputs.  So the map depends on the model alone,
 * every parameter is distinct (also an output listed twice), and the
 * longest is under the 63 characters C99 guarantees significant.
 */
#define IDENT_CORE 40

typedef struct NameSet {
	char **slot;     /* open addressing, NULL = empty; owned */
	size_t cap;      /* power of two, > 2 * entries */
} NameSet;

static size_t name_hash(const char *s)
{
	size_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static int nameset_has(const NameSet *t, const char *s)
{
	for (size_t i = name_hash(s) & (t->cap - 1); t->slot[i]; i = (i + 1) & (t->cap - 1))
		if (!strcmp(t->slot[i], s))
			return 1;
	return 0;
}

/* Add a copy of s (not present); returns the copy, NULL when out of memory. */
static char *nameset_add(NameSet *t, const char *s)
{
	size_t i = name_hash(s) & (t->cap - 1);

	while (t->slot[i])
		i = (i + 1) & (t->cap - 1);
	return t->slot[i] = strdup(s);
}

static void ident_core(const char *name, char *buf)
{
	size_t j = 0;
	int gap = 0;

	for (const char *s = name; *s && j < IDENT_CORE; s++) {
		if (isalnum((unsigned char)*s) && !((unsigned char)*s & 0x80)) {
			if (gap && j && j + 1 < IDENT_CORE)
				buf[j++] = '_';
			gap = 0;
			buf[j++] = *s;
		} else {
			gap = 1;
		}
	}
	if (!j)
		buf[j++] = 'v';
	buf[j] = 0;
}

/* Fill in[] and out[] (pointers into set) with the parameter names. */
static int param_names(Ctx *c, const Graph *g, const KProgram *p, const char *P,
                       const Plan *plan, NameSet *set, const char **in,
                       const char **out, const char **dim)
{
	static const char *const own[] = { "run", "run_v", "inputs", "outputs",
	                                   "tensor_info", "arena_bytes", "dim_names" };
	static const char *const locals[] = { "A", "arena", "inputs", "outputs",
	                                      "dims", "need" };
	size_t want = 2 * ((size_t)g->nin + g->nout + p->nkernel + plan->ndims + 16);
	char buf[256];

	for (set->cap = 64; set->cap <= want; set->cap *= 2)
		;
	if (!(set->slot = calloc(set->cap, sizeof *set->slot)))
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < sizeof own / sizeof *own; i++) {
		snprintf(buf, sizeof buf, "%s_%s", P, own[i]);
		if (!nameset_has(set, buf) && !nameset_add(set, buf))
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < sizeof locals / sizeof *locals; i++)
		if (!nameset_has(set, locals[i]) && !nameset_add(set, locals[i]))
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	for (int k = 0; k < p->nkernel; k++)
		if (!nameset_has(set, p->kernel[k]->name) && !nameset_add(set, p->kernel[k]->name))
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	/* dims known at run time: dim_X, like the parameters below */
	for (int i = 0; i < plan->ndims; i++) {
		char core[IDENT_CORE + 1];
		ident_core(plan->dims[i], core);
		snprintf(buf, sizeof buf, "dim_%s", core);
		for (int n = 2; nameset_has(set, buf); n++)
			snprintf(buf, sizeof buf, "dim_%s_%d", core, n);
		if (!(dim[i] = nameset_add(set, buf)))
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	for (int i = 0; i < g->nin + g->nout; i++) {
		int v = i < g->nin ? g->in[i] : g->out[i - g->nin];
		char core[IDENT_CORE + 1];
		const char **dst = i < g->nin ? &in[i] : &out[i - g->nin];
		ident_core(GV(g, v)->name, core);
		snprintf(buf, sizeof buf, "%s_%s", i < g->nin ? "in" : "out", core);
		for (int n = 2; nameset_has(set, buf); n++)
			snprintf(buf, sizeof buf, "%s_%s_%d", i < g->nin ? "in" : "out", core, n);
		if (!(*dst = nameset_add(set, buf)))
			return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	}
	return BURN_OK;
}

static void nameset_free(NameSet *t)
{
	for (size_t i = 0; t->slot && i < t->cap; i++)
		free(t->slot[i]);
	free(t->slot);
}

/* Is s a C identifier (ASCII letters, digits, _; no leading digit)? */
static int is_ident(const char *s)
{
	if (!s || !*s || isdigit((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

/* May s stand between the quotes of #include "s"?  Printable ASCII
 * without the characters whose meaning there is undefined or that a
 * trigraph could form. */
static int includable(const char *s)
{
	if (!s || !*s)
		return 0;
	for (const char *q = s; *q; q++)
		if (*q < 0x20 || *q >= 0x7f || strchr("\"\\'", *q) ||
		    (q[0] == '?' && q[1] == '?') || (q[0] == '/' && (q[1] == '/' || q[1] == '*')))
			return 0;
	return 1;
}

int emit_c_includable(const char *s)
{
	return includable(s);
}

/* The parameter identifier of a symbolic dim named name. */
static const char *dim_ident(const Plan *plan, const char *const *dimid, const char *name)
{
	for (int i = 0; i < plan->ndims; i++)
		if (!strcmp(plan->dims[i], name))
			return dimid[i];
	return "?";
}

static void dims_str(const Value *v, const Plan *plan, const char *const *dimid,
                     char *buf, size_t n)
{
	size_t j = 0;

	j += snprintf(buf + j, n - j, "[");
	for (int i = 0; i < v->rank && j < n; i++)
		if (v->sym[i])   /* a dim known at run time: its parameter */
			j += snprintf(buf + j, n - j, "%s%s", i ? ", " : "",
			              dim_ident(plan, dimid, v->sym[i]));
		else
			j += snprintf(buf + j, n - j, "%s%lld", i ? ", " : "",
			              (long long)v->dim[i]);
	if (j < n)
		snprintf(buf + j, n - j, "]");
}

/* The longest string literal C99 promises (5.2.4.1), in bytes. */
enum { LITERAL_MAX = 4095 };

/* A name too long for one C99 string literal (a hostile model's): emitted
 * as `static const char ID[] = {...}` and referred to by ID instead. */
static int long_name(const char *s)
{
	return strlen(s) > LITERAL_MAX - 1;
}

static void put_char_array(FILE *f, const char *id, const char *s)
{
	fprintf(f, "static const char %s[] = {", id);
	for (size_t i = 0; s[i]; i++)
		fprintf(f, "%s%d", !i ? "\n\t" : i % 24 ? "," : ",\n\t", (unsigned char)s[i]);
	fprintf(f, ",0};\n");
}

/* Bytes as a C string literal, 3-digit octal escapes for non-printables
 * (an octal escape never swallows the next character, unlike \x). */
static void emit_bytes(FILE *f, const unsigned char *p, int64_t n)
{
	int col = 0;

	fputs("\n\t\"", f);
	for (int64_t i = 0; i < n; i++) {
		unsigned char ch = p[i];
		if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\' && ch != '?') {
			fputc(ch, f);
			col++;
		} else {
			fprintf(f, "\\%03o", ch);
			col += 4;
		}
		if (col >= 4000 && i + 1 < n) {
			fputs("\"\n\t\"", f);
			col = 0;
		}
	}
	fputs("\"", f);
}

void emit_c_data(FILE *f, const char *id, const char *attr, int dtype,
                 const void *data, int64_t nb)
{
	int64_t es = dtype_size(dtype);

	if (es <= 0)   /* packed (int4 ...): the bytes */
		es = 1;
	if (nb > LITERAL_MAX) {
		int64_t rows = (nb + LITERAL_MAX - 1) / LITERAL_MAX;
		fprintf(f, "static const union { unsigned char b[%lld][%d]; %s v[%lld]; } "
		        "%s %s = {{", (long long)rows, LITERAL_MAX, dtype_ctype(dtype),
		        (long long)(nb / es), id, attr);
		for (int64_t r = 0; r < rows; r++) {
			int64_t o = r * LITERAL_MAX;
			emit_bytes(f, (const unsigned char *)data + o,
			           nb - o < LITERAL_MAX ? nb - o : LITERAL_MAX);
			if (r + 1 < rows)
				fputc(',', f);
		}
		fprintf(f, "}};\n\n");
		return;
	}
	fprintf(f, "static const union { unsigned char b[%lld]; %s v[%lld]; } %s %s = {",
	        (long long)(nb > 0 ? nb : 1), dtype_ctype(dtype),
	        (long long)(nb > 0 ? nb / es : 1), id, attr);
	if (nb > 0)
		emit_bytes(f, data, nb);
	else
		fputs("{0}", f);
	fprintf(f, "};\n\n");
}

/* Does any input or output of g hold strings? */
static int str_io(const Graph *g)
{
	for (int i = 0; i < g->nin + g->nout; i++)
		if (dtype_is_string(GV(g, i < g->nin ? g->in[i] : g->out[i - g->nin])->dtype))
			return 1;
	return 0;
}

/* A constant string tensor: the array of pointers, each string a literal
 * (or, over 4000 bytes, a char array of its own: C99 promises literals
 * of 4095 characters only). */
static void emit_c_strings(FILE *f, const char *id, const char *attr, const Value *v)
{
	const char *const *s = v->data;
	int64_t n = value_numel(v);

	for (int64_t k = 0; k < n; k++) {
		int64_t len = (int64_t)strlen(s[k]);
		if (len <= 4000)
			continue;
		fprintf(f, "static const char %s_s%lld[] = {", id, (long long)k);
		for (int64_t i = 0; i < len; i++)
			fprintf(f, "%s%d", i % 24 ? "," : "\n\t", (unsigned char)s[k][i]);
		fprintf(f, ",0};\n");
	}
	fprintf(f, "static const struct { burn_str v[%lld]; } %s %s = {{", (long long)(n > 0 ? n : 1),
	        id, attr);
	for (int64_t k = 0; k < n; k++) {
		int64_t len = (int64_t)strlen(s[k]);
		fputs(k ? ",\n\t" : "\n\t", f);
		if (len > 4000)
			fprintf(f, "%s_s%lld", id, (long long)k);
		else
			emit_bytes(f, (const unsigned char *)s[k], len);
	}
	fprintf(f, "%s}};\n\n", n ? "" : "0");
}

/* The blob's header and its hash (layout above). */
enum { BLOB_HEAD = 64, BLOB_ID = 24 };

static uint64_t fnv1a(uint64_t h, const unsigned char *p, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		h = (h ^ p[i]) * UINT64_C(0x100000001b3);
	return h;
}

#define FNV_BASIS UINT64_C(0xcbf29ce484222325)

static void put_u64(unsigned char *p, uint64_t x)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(x >> (8 * i));
}

/*
 * Lay out the weights used[] marks in the blob (woff[v]: the offset of
 * value v), hash them and write the blob to f; head gets its first
 * BLOB_ID bytes, for the .c's check.  *total: its size.
 */
static int emit_blob(Ctx *c, const Graph *g, const char *used, int64_t *woff,
                     FILE *f, unsigned char *head, int64_t *total)
{
	static const unsigned char zero[BURN_ARENA_ALIGN];
	unsigned char h[BLOB_HEAD] = "BURNCCW1";
	uint64_t hash = FNV_BASIS;
	int64_t at = BLOB_HEAD;

	for (int v = 0; v < g->nval; v++) {
		int64_t pad;
		if (!used[v])
			continue;
		pad = (BURN_ARENA_ALIGN - at % BURN_ARENA_ALIGN) % BURN_ARENA_ALIGN;
		hash = fnv1a(hash, zero, pad);
		woff[v] = at + pad;
		at = woff[v] + value_nbytes(GV(g, v));
		hash = fnv1a(hash, GV(g, v)->data, value_nbytes(GV(g, v)));
	}
	put_u64(h + 8, (uint64_t)at);
	put_u64(h + 16, hash);
	memcpy(head, h, BLOB_ID);
	*total = at;
	fwrite(h, 1, sizeof h, f);
	at = BLOB_HEAD;
	for (int v = 0; v < g->nval; v++) {
		if (!used[v])
			continue;
		fwrite(zero, 1, (size_t)(woff[v] - at), f);
		at = woff[v] + value_nbytes(GV(g, v));
		fwrite(GV(g, v)->data, 1, (size_t)value_nbytes(GV(g, v)), f);
	}
	return ferror(f) ? burn_fail(c, BURN_ERR_IO, "write error (the weights' blob)")
	                 : BURN_OK;
}

/*
 * The blob's part of the .c: its id, the check PREFIX_run makes, the
 * exported full check, and the .incbin that links the blob in when
 * PREFIX_WEIGHTS_INCBIN is defined.  The .incbin names the file without a
 * folder (so the .c is the same on every machine): the assembler looks in
 * the folder it runs in, then in the -I folders (GCC and Clang pass -I on).
 */
static void emit_blob_c(FILE *fc, const char *P, const char *up, const char *name,
                        const unsigned char *head)
{
	fprintf(fc, "/* The weights' blob (%s_run's first argument): its first %d bytes. */\n"
	        "static const unsigned char burn_weights_id[%d] = {", P, BLOB_ID, BLOB_ID);
	for (int i = 0; i < BLOB_ID; i++)
		fprintf(fc, "%s%d", i ? "," : "", head[i]);
	fprintf(fc, "};\n\n"
	        "static int burn_weights_ok(const unsigned char *W)\n{\n"
	        "\tint i;\n\n"
	        "\tif (!W || ((uintptr_t)W & (%s_WEIGHTS_ALIGN - 1)))\n\t\treturn 0;\n"
	        "\tfor (i = 0; i < %d; i++)\n"
	        "\t\tif (W[i] != burn_weights_id[i])\n\t\t\treturn 0;\n"
	        "\treturn 1;\n}\n\n", up, BLOB_ID);
	fprintf(fc, "int %s_weights_check(const void *weights, size_t bytes)\n{\n"
	        "\tconst unsigned char *W = (const unsigned char *)weights;\n"
	        "\tuint64_t h = 0xcbf29ce484222325u, want = 0;\n\tsize_t i;\n\n"
	        "\tif (!burn_weights_ok(W) || bytes != (size_t)%s_WEIGHTS_BYTES)\n"
	        "\t\treturn %s_ERR_WEIGHTS;\n"
	        "\tfor (i = 0; i < 8; i++)\n"
	        "\t\twant |= (uint64_t)W[16 + i] << (8 * i);\n"
	        "\tfor (i = %d; i < bytes; i++)\n"
	        "\t\th = (h ^ W[i]) * 0x100000001b3u;\n"
	        "\treturn h == want ? %s_OK : %s_ERR_WEIGHTS;\n}\n\n",
	        P, up, up, BLOB_HEAD, up, up);
	fprintf(fc, "/* -D%s_WEIGHTS_INCBIN: %s, linked into this object as\n"
	        " * %s_weights (GCC, Clang; ELF targets), in %s_WEIGHTS_SECTION if\n"
	        " * defined, else .rodata.  The assembler finds the file in the folder\n"
	        " * it runs in or an -I folder. */\n", up, name, P, up);
	fprintf(fc, "#if defined(%s_WEIGHTS_INCBIN)\n"
	        "#if !defined(__ELF__) || !defined(__GNUC__)\n"
	        "#error \"%s_WEIGHTS_INCBIN: .incbin needs GCC or Clang and an ELF target; "
	        "load the blob and pass it to %s_run instead\"\n#endif\n"
	        "#if defined(%s_WEIGHTS_SECTION)\n"
	        "#define %s_WEIGHTS_SEC_ %s_WEIGHTS_SECTION \",\\\"a\\\"\"\n"
	        "#else\n#define %s_WEIGHTS_SEC_ \".rodata\"\n#endif\n"
	        "__asm__(\"\\t.section \" %s_WEIGHTS_SEC_ \"\\n\"\n"
	        "\t\"\\t.balign %d\\n\"\n"
	        "\t\"\\t.globl %s_weights\\n\"\n"
	        "\t\"\\t.type %s_weights, STT_OBJECT\\n\"\n"
	        "\t\"%s_weights:\\n\"\n"
	        "\t\"\\t.incbin \\\"%s\\\"\\n\"\n"
	        "\t\"\\t.size %s_weights, . - %s_weights\\n\"\n"
	        "\t\"\\t.previous\\n\");\n"
	        "#endif\n\n",
	        up, up, P, up, up, up, up, up, BURN_ARENA_ALIGN, P, P, P, name, P, P);
}

/* Name of the C expression that points at value v inside the run function. */
typedef struct Names {
	char **expr;      /* per value: pointer expression, or NULL */
} Names;

/* One line of the header's list of inputs or outputs. */
static void list_value(FILE *h, const Value *v, const char *param, const Plan *plan,
                       const char *const *dimid)
{
	char dims[256];
	int n;

	dims_str(v, plan, dimid, dims, sizeof dims);
	fprintf(h, " *     %-12s %-10s ", param, dtype_ctype(v->dtype));
	n = put_comment(h, v->name);
	fprintf(h, "%*s %s %s\n", n < 24 ? 24 - n : 0, "", dtype_name(v->dtype), dims);
}

/* "int64_t dim_N, int64_t dim_S, " */
static void dim_params(FILE *f, const Plan *plan, const char *const *dim_id)
{
	for (int i = 0; i < plan->ndims; i++)
		fprintf(f, "int64_t %s, ", dim_id[i]);
}

/*
 * Compile-time sizes of the inputs and outputs with a known shape, for
 * static buffers: UP_IN_X_BYTES and UP_IN_X_NUMEL from the parameter name
 * in_x, upper-cased.  Parameter names are unique but their upper cases
 * need not be (in_x, in_X): a later one that repeats an earlier one's is
 * UP_INPUT_<i>_ / UP_OUTPUT_<i>_ instead, which no parameter name gives
 * (those start IN_ and OUT_).
 */
static int size_macros(Ctx *c, const Graph *g, const char *up, const char **in_id,
                       const char **out_id, FILE *h)
{
	int n = g->nin + g->nout, rc = BURN_OK;
	char (*name)[160] = calloc((size_t)n + 1, sizeof *name);

	if (!name)
		return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
	fprintf(h, "/* Sizes of the inputs and outputs of a known shape, for static\n"
	        " * buffers: bytes and elements, named after the parameter upper-\n"
	        " * cased (in_x: %s_IN_X_BYTES, %s_IN_X_NUMEL); one whose upper\n"
	        " * case repeats an earlier one's is %s_INPUT_i_... or\n"
	        " * %s_OUTPUT_i_... (i: its index). */\n", up, up, up, up);
	for (int i = 0; i < n; i++) {
		int in = i < g->nin, k = in ? i : i - g->nin;
		const Value *v = GV(g, in ? g->in[k] : g->out[k]);
		int dup = 0;
		upper(in ? in_id[k] : out_id[k], name[i], sizeof name[i]);
		for (int j = 0; j < i && !dup; j++)
			dup = !strcmp(name[i], name[j]);
		if (dup)
			snprintf(name[i], sizeof name[i], "%s_%d", in ? "INPUT" : "OUTPUT", k);
		/* a packed tensor (int4 ...) takes ceil(numel * bits / 8) bytes */
		if (!value_shape_known(v) || value_nbytes(v) < 0 || dtype_bits(v->dtype) <= 0)
			continue;
		fprintf(h, "#define %s_%s_BYTES %lld\n#define %s_%s_NUMEL %lld\n", up, name[i],
		        (long long)value_nbytes(v), up, name[i], (long long)value_numel(v));
	}
	fprintf(h, "/* Define %s_WEIGHTS_SECTION as a string (\".extflash\") when\n"
	        " * compiling the .c to put the weights in that linker section\n"
	        " * (GCC, Clang). */\n\n", up);
	free(name);
	return rc;
}

/* The header's account of the stack: each kernel's local arrays. */
static void stack_doc(FILE *h, const KProgram *p, const char *up)
{
	int64_t most = 0;

	fprintf(h, "/* Stack: the run function calls the kernels one after another;\n"
	        " * each keeps its local arrays (register tiles, partial sums) on the\n"
	        " * stack, the bytes below, and the compiler adds its own frame (saved\n"
	        " * registers, spills; -fstack-usage at -O2 on burncc's models: up to\n"
	        " * 150 bytes with gcc and arm-none-eabi-gcc, up to 1000 with clang,\n"
	        " * which may copy a tile).  burncc --max-stack BYTES bounds them.\n");
	for (int k = 0; k < p->nkernel; k++) {
		int64_t b = kkernel_local_bytes(p->kernel[k]);
		if (b > 0)
			fprintf(h, " *     %-24s %lld\n", p->kernel[k]->name, (long long)b);
		most = b > most ? b : most;
	}
	fprintf(h, " * (%s.)  The largest: */\n#define %s_STACK_LOCAL_BYTES %lld\n\n",
	        most ? "the other kernels: none" : "no kernel has any", up, (long long)most);
}

static int emit_header(Ctx *c, const Graph *g, const Plan *plan, const KProgram *p,
                       const EmitC *o, const char **in_id, const char **out_id,
                       const char *const *dim_id, int64_t blob_bytes, FILE *h)
{
	char up[128];
	const char *P = o->prefix;
	int dyn = plan->ndims > 0;
	const char *wa = o->blob ? "weights, " : "";

	upper(P, up, sizeof up);
	fprintf(h, "/*\n * %s.h - generated by burncc", P);
	if (o->source)
		put_source(h, o->source);
	fprintf(h, ".  Do not edit.\n *\n");
	if (dyn) {
		fprintf(h,
		  " * Usage (sizes known at run time):\n"
		  " *     int64_t n = %s_arena_bytes(dims...);\n"
		  " *     void *arena = n > 0 ? aligned_alloc(%s_ARENA_ALIGN, (n + %s_ARENA_ALIGN - 1)\n"
		  " *                           / %s_ARENA_ALIGN * %s_ARENA_ALIGN) : NULL;\n"
		  " *     int rc = %s_run(%sdims..., inputs..., outputs..., arena);\n"
		  " *\n"
		  " * The dims are the model's symbolic dims, given at run time (the\n"
		  " * shapes below name them).  %s_arena_bytes gives the scratch memory\n"
		  " * the caller provides for those dims (-1: a dim is negative or a size\n"
		  " * would pass 2^63 bytes), aligned to %s_ARENA_ALIGN; it may be larger\n"
		  " * and reused.  Inputs and outputs are sized for the same dims.\n"
		  " * Returns %s_OK, %s_ERR_ARG if a pointer is NULL, %s_ERR_DIM for\n"
		  " * dims %s_arena_bytes refuses, or %s_ERR_ARENA if the arena is NULL\n"
		  " * or misaligned.\n"
		  " *\n"
		  " * Reentrant: the module has no writable global state, so calls may run\n"
		  " * concurrently as long as each has its own arena and outputs.  No\n"
		  " * malloc; weights are const data.\n"
		  " *\n", P, up, up, up, up, P, wa, P, up, up, up, up, P, up);
		fprintf(h, " * Dims (parameter, ONNX name):\n");
		for (int i = 0; i < plan->ndims; i++) {
			fprintf(h, " *     %-10s ", dim_id[i]);
			put_comment(h, plan->dims[i]);
			fputc('\n', h);
		}
	} else
	fprintf(h,
	  " * Usage:\n"
	  " *     static unsigned char arena[%s_ARENA_BYTES ? %s_ARENA_BYTES : 1]\n"
	  " *         __attribute__((aligned(%s_ARENA_ALIGN)));\n"
	  " *     int rc = %s_run(%sinputs..., outputs..., arena);\n"
	  " *\n"
	  " * %s_run computes the model's outputs from its inputs.  The arena is\n"
	  " * scratch memory for intermediates, %s_ARENA_BYTES bytes aligned to\n"
	  " * %s_ARENA_ALIGN, owned by the caller; it need not be zeroed and may be\n"
	  " * reused between calls.  Returns %s_OK, %s_ERR_ARG if a pointer is NULL,\n"
	  " * or %s_ERR_ARENA if the arena is NULL or misaligned.\n"
	  " *\n"
	  " * Reentrant: the module has no writable global state, so calls may run\n"
	  " * concurrently as long as each has its own arena and outputs.  No\n"
	  " * malloc; weights are const data.\n"
	  " *\n", up, up, up, P, wa, P, up, up, up, up, up);
	if (o->blob)
		fprintf(h,
		  " * Weights: not in %s.c but in the file %s, passed as\n"
		  " * `weights` (the first argument): %s_WEIGHTS_BYTES bytes, aligned to\n"
		  " * %s_WEIGHTS_ALIGN, read only.  Load or map the file, or place it in\n"
		  " * flash, or build %s.c with -D%s_WEIGHTS_INCBIN to link it in as\n"
		  " * %s_weights (GCC, Clang; ELF).  A blob that is not this module's\n"
		  " * (first bytes) or is misaligned gives %s_ERR_WEIGHTS;\n"
		  " * %s_weights_check also checks its size and every byte (a hash).\n"
		  " *\n", P, o->blob_name, up, up, P, up, P, up, P);
	fprintf(h, " * Inputs (the parameter, its C type, the ONNX name, shape): the\n"
	        " * parameters are C identifiers made from the ONNX names.\n");
	for (int i = 0; i < g->nin; i++)
		list_value(h, GV(g, g->in[i]), in_id[i], plan, dim_id);
	fprintf(h, " * Outputs:\n");
	for (int i = 0; i < g->nout; i++)
		list_value(h, GV(g, g->out[i]), out_id[i], plan, dim_id);
	fprintf(h, " */\n#ifndef %s_H_\n#define %s_H_\n\n%s#include <stdint.h>\n\n"
	        "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n", up, up,
	        o->blob ? "#include <stddef.h>\n" : "");
	if (!dyn)
		fprintf(h, "#define %s_ARENA_BYTES %lld\n", up, (long long)plan->arena_bytes);
	else
		fprintf(h, "#define %s_NUM_DIMS %d\n#define %s_ERR_DIM 3\n", up,
		        plan->ndims, up);
	fprintf(h, "#define %s_ARENA_ALIGN %d\n", up, BURN_ARENA_ALIGN);
	fprintf(h, "#define %s_NUM_INPUTS %d\n", up, g->nin);
	fprintf(h, "#define %s_NUM_OUTPUTS %d\n", up, g->nout);
	fprintf(h, "#define %s_OK 0\n#define %s_ERR_ARG 1\n#define %s_ERR_ARENA 2\n",
	        up, up, up);
	if (g->str_heap)
		fprintf(h, "#define %s_ERR_STRING_SPACE 5\n#define %s_ERR_STRING_UTF8 6\n"
		        "/* Bytes of strings one run may make (burncc --string-bytes), part\n"
		        " * of the arena. */\n#define %s_STRING_BYTES %lld\n", up, up, up,
		        (long long)(8 * (GV(g, g->str_heap - 1)->dim[0] - 2)));
	if (str_io(g))
		fprintf(h, "\n/* A string tensor is an array of burn_str, one per element: a\n"
		        " * pointer to NUL-terminated UTF-8, which the caller fills for an\n"
		        " * input (its strings must live through the call).  For an output\n"
		        " * the run writes the pointers: into the caller's inputs, into the\n"
		        " * module's constants, or into the string heap, %s_STRING_BYTES\n"
		        " * of the arena; so an output's strings are valid until the arena\n"
		        " * is used again.  Strings the run makes that do not fit there give\n"
		        " * %s_ERR_STRING_SPACE, never a write past it (compile again with\n"
		        " * a larger --string-bytes); one that must be UTF-8 and is not\n"
		        " * (a case change, RegexFullMatch) gives %s_ERR_STRING_UTF8.\n"
		        " * burncc sizes a string element as 8 bytes: 64-bit pointers. */\n"
		        "#ifndef BURN_STR_DEFINED\n#define BURN_STR_DEFINED\n"
		        "typedef const char *burn_str;\n#endif\n", up, up, up);
	if (o->blob)
		fprintf(h, "#define %s_ERR_WEIGHTS 4\n"
		        "#define %s_WEIGHTS_BYTES %lld\n#define %s_WEIGHTS_ALIGN %d\n",
		        up, up, (long long)blob_bytes, up, BURN_ARENA_ALIGN);
	fprintf(h, "\n/* The generated API's version (its calling conventions; a burncc\n"
	        " * that changes them raises it)%s%s. */\n#define %s_API_VERSION 1\n",
	        o->version ? ", the burncc that wrote it" : "",
	        o->model_sha256 ? " and the model file's SHA-256" : "", up);
	if (o->version) {
		fprintf(h, "#define %s_BURNCC_VERSION ", up);
		put_string(h, o->version);
		fputc('\n', h);
	}
	if (o->model_sha256) {
		fprintf(h, "#define %s_MODEL_SHA256 ", up);
		put_string(h, o->model_sha256);
		fputc('\n', h);
	}
	if (o->cpu) {   /* what the tiles were sized for, and the flags */
		const TargetTune *u = &o->cpu->tune;
		fprintf(h, "/* The CPU description the kernels were sized for (burncc --cpu %s):\n"
		        " * %d x %d GEMM register tiles, %d-float vectors; ",
		        o->cpu->name, u->gemm_mr, u->gemm_nr, o->cpu->vector_bytes / 4);
		if (*o->cpu->cflags)
			fprintf(h, "build with\n * -O3 %s (or a -march that includes it) for them "
			        "to fit. */\n", o->cpu->cflags);
		else
			fprintf(h, "any -march.  */\n");
		fprintf(h, "#define %s_BURNCC_CPU ", up);
		put_string(h, o->cpu->name);
		fputc('\n', h);
	}
	fprintf(h, "/* What a status the functions return means, e.g. \"the arena is NULL\n"
	        " * or misaligned\"; never NULL. */\nconst char *%s_strerror(int status);\n\n", P);
	TRY(size_macros(c, g, up, in_id, out_id, h));
	stack_doc(h, p, up);
	fprintf(h,
	  "/* One input or output: dtype is ONNX's TensorProto.DataType (1 float,\n"
	  " * 6 int32, 7 int64, 9 bool stored as one byte, 11 double, ...). */\n"
	  "typedef struct %s_tensor_info {\n"
	  "\tconst char *name;\n\tint dtype;\n\tint rank;\n"
	  "\tconst int64_t *dims;\n\tint64_t bytes;\n} %s_tensor_info;\n\n", P, P);
	fprintf(h, "extern const %s_tensor_info %s_inputs[%s_NUM_INPUTS ? %s_NUM_INPUTS : 1];\n",
	        P, P, up, up);
	fprintf(h, "extern const %s_tensor_info %s_outputs[%s_NUM_OUTPUTS ? %s_NUM_OUTPUTS : 1];\n\n",
	        P, P, up, up);
	if (dyn) {
		fprintf(h, "/* The ONNX names of the dims, in parameter order. */\n"
		        "extern const char *const %s_dim_names[%s_NUM_DIMS];\n\n", P, up);
		fprintf(h, "int64_t %s_arena_bytes(", P);
		for (int i = 0; i < plan->ndims; i++)
			fprintf(h, "%sint64_t %s", i ? ", " : "", dim_id[i]);
		fprintf(h, ");\n\n");
	}
	if (o->blob)
		fprintf(h, "/* The blob linked in by -D%s_WEIGHTS_INCBIN (%s.c defines it\n"
		        " * only then). */\n"
		        "extern const unsigned char %s_weights[%s_WEIGHTS_BYTES];\n\n"
		        "/* %s_OK if weights is this module's blob, bytes long, intact;\n"
		        " * else %s_ERR_WEIGHTS.  Reads every byte: once, after loading. */\n"
		        "int %s_weights_check(const void *weights, size_t bytes);\n\n",
		        up, P, P, up, up, up, P);
	fprintf(h, "int %s_run(%s", P, o->blob ? "const void *weights, " : "");
	dim_params(h, plan, dim_id);
	for (int i = 0; i < g->nin; i++)
		fprintf(h, "const %s *%s, ", dtype_ctype(GV(g, g->in[i])->dtype), in_id[i]);
	for (int i = 0; i < g->nout; i++)
		fprintf(h, "%s *%s, ", dtype_ctype(GV(g, g->out[i])->dtype), out_id[i]);
	fprintf(h, "void *arena);\n\n");
	fprintf(h, "/* The same with %sinputs and outputs as arrays in the order above. */\n"
	        "int %s_run_v(%s%sconst void *const *inputs, void *const *outputs, void *arena);\n\n",
	        dyn ? "dims, " : "", P, o->blob ? "const void *weights, " : "",
	        dyn ? "const int64_t *dims, " : "");
	if (o->extra_h)
		fputs(o->extra_h, h);
	fprintf(h, "#ifdef __cplusplus\n}\n#endif\n#endif\n");
	return ferror(h) ? burn_fail(c, BURN_ERR_IO, "write error") : BURN_OK;
}

static void emit_info(FILE *f, const Graph *g, const char *P, const char *up,
                      const char *which, const int *vals, int n)
{
	for (int i = 0; i < n; i++) {
		const Value *v = GV(g, vals[i]);
		if (long_name(v->name)) {
			char id[64];
			snprintf(id, sizeof id, "%s_name_%d", which, i);
			put_char_array(f, id, v->name);
		}
		fprintf(f, "static const int64_t %s_dims_%d[] = {", which, i);
		for (int d = 0; d < v->rank; d++)
			fprintf(f, "%s%lld", d ? ", " : "", (long long)v->dim[d]);
		fprintf(f, "%s};\n", v->rank ? "" : "0");
	}
	fprintf(f, "const %s_tensor_info %s_%s[%s_NUM_%s ? %s_NUM_%s : 1] = {\n",
	        P, P, which, up, !strcmp(which, "inputs") ? "INPUTS" : "OUTPUTS",
	        up, !strcmp(which, "inputs") ? "INPUTS" : "OUTPUTS");
	for (int i = 0; i < n; i++) {
		const Value *v = GV(g, vals[i]);
		fprintf(f, "\t{");
		if (long_name(v->name))
			fprintf(f, "%s_name_%d", which, i);
		else
			put_string(f, v->name);
		fprintf(f, ", %d, %d, %s_dims_%d, %lld},\n", v->dtype, v->rank,
		        which, i, (long long)value_nbytes(v));
	}
	if (!n)
		fprintf(f, "\t{0, 0, 0, 0, 0},\n");
	fprintf(f, "};\n\n");
}

/*
 * Sizes known at run time: the dim names, and PREFIX_arena_bytes, which
 * also refuses dims at which a size of the program (the arena, an input,
 * an output) would pass 2^63 bytes: it checks each in double first, where
 * it cannot overflow, so the int64_t arithmetic after it (here, in the run
 * function's offsets and in the kernels' indices, all bounded by these
 * sizes) does not overflow either.
 */
static int emit_dyn_sizes(Ctx *c, const Graph *g, const Plan *plan, const char *P,
                          const char *up, const char **in_id, const char **out_id,
                          const char *const *dim_id, Arena *xa, FILE *fc)
{
	(void)in_id;
	(void)out_id;
	for (int i = 0; i < plan->ndims; i++)
		if (long_name(plan->dims[i])) {
			char id[64];
			snprintf(id, sizeof id, "name_dim_%d", i);
			put_char_array(fc, id, plan->dims[i]);
		}
	fprintf(fc, "const char *const %s_dim_names[%s_NUM_DIMS] = {", P, up);
	for (int i = 0; i < plan->ndims; i++) {
		fputs(i ? ", " : "", fc);
		if (long_name(plan->dims[i]))
			fprintf(fc, "name_dim_%d", i);
		else
			put_string(fc, plan->dims[i]);
	}
	fprintf(fc, "};\n\nint64_t %s_arena_bytes(", P);
	for (int i = 0; i < plan->ndims; i++)
		fprintf(fc, "%sint64_t %s", i ? ", " : "", dim_id[i]);
	fprintf(fc, ")\n{\n");
	for (int i = 0; i < plan->ndims; i++)
		fprintf(fc, "\tif (%s < %lld) return -1;\n", dim_id[i],
		        (long long)(plan->dim_min ? plan->dim_min[i] : 0));
	for (int i = 0; i < g->nin + g->nout; i++) {
		int v = i < g->nin ? g->in[i] : g->out[i - g->nin];
		const DimExpr *nb;
		if (value_shape_known(GV(g, v)))
			continue;
		if (!(nb = plan_value_bytes(xa, g, v, plan->ndims, plan->dims)))
			return burn_fail(c, BURN_ERR_INTERNAL, "value '%s' has no size",
			                 GV(g, v)->name);
		fprintf(fc, "\tif (");
		dx_print_c_double(fc, nb, dim_id);
		fprintf(fc, " > 9.0e18) return -1;\n");
	}
	if (plan->arena.e) {
		fprintf(fc, "\tif (");
		dx_print_c_double(fc, plan->arena.e, dim_id);
		fprintf(fc, " > 9.0e18) return -1;\n\treturn ");
		dx_print_c(fc, plan->arena.e, dim_id);
		fprintf(fc, ";\n}\n\n");
	} else {
		for (int i = 0; i < plan->ndims; i++)
			fprintf(fc, "\t(void)%s;\n", dim_id[i]);
		fprintf(fc, "\treturn %lld;\n}\n\n", (long long)plan->arena.c);
	}
	return BURN_OK;
}

/* The C expression of the memory launch argument e binds (kernel kname's
 * call, or a guard's condition). */
static int print_arg(Ctx *c, FILE *fc, const Graph *g, const LaunchArg *e,
                     int freestanding, const int64_t *woff, const char **in_id,
                     const char **out_id, const char *const *dim_id, const char *kname)
{
	const Value *val = GV(g, e->value);

	switch (e->kind) {
	case LK_WEIGHT:
		if (woff)   /* in the blob: W, the run's weights argument */
			fprintf(fc, "(const %s *)(const void *)(W + %lld)",
			        dtype_ctype(val->dtype), (long long)woff[e->value]);
		else
			fprintf(fc, "w%d.v", e->value);
		break;
	case LK_ARENA:
		/* freestanding: through void *, which -Wcast-align accepts
		 * (the plan aligns every offset to BURN_ARENA_ALIGN) */
		if (e->offset.e) {
			fprintf(fc, "(%s *)%s(A + ", dtype_ctype(val->dtype),
			        freestanding ? "(void *)" : "");
			dx_print_c(fc, e->offset.e, dim_id);
			fputc(')', fc);
			break;
		}
		fprintf(fc, "(%s *)%s(A + %lld)", dtype_ctype(val->dtype),
		        freestanding ? "(void *)" : "", (long long)e->offset.c);
		break;
	case LK_INPUT:
	case LK_OUTPUT:
		if (e->index < 0 || e->index >= (e->kind == LK_INPUT ? g->nin : g->nout))
			return burn_fail(c, BURN_ERR_INTERNAL, "launch of %s: bad "
			                 "argument index", kname);
		fputs(e->kind == LK_INPUT ? in_id[e->index] : out_id[e->index], fc);
		break;
	default:
		return burn_fail(c, BURN_ERR_INTERNAL, "value %d has no storage",
		                 e->value);
	}
	return BURN_OK;
}

int emit_c_module(Ctx *c, const Graph *g, const KProgram *p, const Plan *plan,
                  const EmitC *o, FILE *fc, FILE *fh)
{
	const char *P = o->prefix;
	char up[128];
	char *used = calloc(g->nval + 1, 1);   /* weights emitted */
	const char **in_id = calloc(g->nin + 1, sizeof *in_id);
	const char **out_id = calloc(g->nout + 1, sizeof *out_id);
	const char **dim_id = calloc((size_t)plan->ndims + 1, sizeof *dim_id);
	NameSet set = { NULL, 0 };
	int rc = BURN_OK, dyn = plan->ndims > 0;
	Arena xa;   /* size expressions made here */
	const char *copy = o->freestanding ? "burn_copy" : "memcpy";
	int64_t *woff = NULL, blob_bytes = -1;   /* the blob's layout */
	unsigned char head[BLOB_ID];

	arena_init(&xa);
	if (o->blob && !(woff = calloc(g->nval + 1, sizeof *woff))) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		goto done;
	}
	if (!used || !in_id || !out_id || !dim_id) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "out of memory");
		goto done;
	}
	if (!is_ident(P) || strlen(P) > 100) {
		rc = burn_fail(c, BURN_ERR_INVALID, "prefix is not a C identifier of "
		               "at most 100 characters (see --name)");
		goto done;
	}
	if (!includable(o->header_name)) {
		rc = burn_fail(c, BURN_ERR_INVALID, "header name cannot be #included: "
		               "use printable ASCII without quotes, backslashes or '?\?'");
		goto done;
	}
	if (o->blob && (!o->blob_name || !includable(o->blob_name))) {
		rc = burn_fail(c, BURN_ERR_INVALID, "the weights' file name cannot stand "
		               "in .incbin: use printable ASCII without quotes or backslashes");
		goto done;
	}
	if ((rc = param_names(c, g, p, P, plan, &set, in_id, out_id, dim_id)))
		goto done;
	upper(P, up, sizeof up);

	/* weights: every constant a kernel reads, and constant outputs */
	for (int k = 0; k < p->nkernel; k++) {
		const KKernel *kk = p->kernel[k];
		for (int b = 0; b < kk->nbuf; b++) {
			int v = kk->buf[b].value;
			if (kk->buf[b].space != KS_GLOBAL || v < 0)
				continue;
			v = kprog_storage(p, v);
			if (GV(g, v)->data)
				used[v] = 1;
		}
	}
	for (int i = 0; i < g->nout; i++)
		if (GV(g, g->out[i])->data && value_nbytes(GV(g, g->out[i])) > 0)
			used[g->out[i]] = 1;    /* copied out by the run function */
	for (int v = 0; v < g->nval && o->blob; v++)
		if (used[v] && dtype_is_string(GV(g, v)->dtype)) {
			rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "constant '%s' holds strings, "
			               "which --weights=blob cannot hold (pointers)", GV(g, v)->name);
			goto done;
		}
	if (o->blob && (rc = emit_blob(c, g, used, woff, o->blob, head, &blob_bytes)))
		goto done;
	if ((rc = emit_header(c, g, plan, p, o, in_id, out_id, dim_id, blob_bytes, fh)))
		goto done;

	fprintf(fc, "/* %s.c - generated by burncc", P);
	if (o->source)
		put_source(fc, o->source);
	if (dyn)
		fprintf(fc, ".  Do not edit.\n"
		        " * %d kernels, %lld bytes of weights, arena sized at run time. */\n",
		        p->nkernel, (long long)plan->weights_bytes);
	else
	fprintf(fc, ".  Do not edit.\n"
	        " * %d kernels, %lld bytes of weights, arena %lld bytes. */\n",
	        p->nkernel, (long long)plan->weights_bytes,
	        (long long)plan->arena_bytes);
	fprintf(fc, "#include \"%s\"\n", o->header_name);
	if (o->freestanding)
		render_c_prelude_free(fc);
	else
		render_c_prelude(fc);
	if (o->cpu && o->cpu->cprelude)   /* e.g. avx512's 512-bit vectors */
		fprintf(fc, "\n%s", o->cpu->cprelude);
	{
		int calls = 0, strs = str_io(g);
		for (int k = 0; k < p->nkernel; k++)
			calls |= p->kernel[k]->call != NULL;
		for (int v = 0; v < g->nval; v++)
			strs |= used[v] && dtype_is_string(GV(g, v)->dtype);
		if (calls) {
			fputs("\n/* runtime/strings.inc: the string routines */\n", fc);
			fputs(burn_strings_src, fc);
		}
		if (strs || calls)
			fprintf(fc, "\n#ifndef BURN_STR_DEFINED\n#define BURN_STR_DEFINED\n"
			        "typedef const char *burn_str;\n#endif\n"
			        "/* burncc planned 8 bytes a string element */\n"
			        "typedef char %s_string_pointers_are_8_bytes[sizeof(burn_str) == 8 ? 1 : -1];\n",
			        P);
	}
	fprintf(fc, "\n#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__\n"
	        "#error \"burncc: this file holds little-endian weights\"\n#endif\n\n");
	/* the weights' linker section, where the user names one (the header) */
	fprintf(fc, "#if defined(%s_WEIGHTS_SECTION) && defined(__GNUC__)\n"
	        "#define %s_WEIGHTS_AT_ __attribute__((section(%s_WEIGHTS_SECTION)))\n"
	        "#else\n#define %s_WEIGHTS_AT_\n#endif\n\n", up, up, up, up);

	if (o->blob)
		emit_blob_c(fc, P, up, o->blob_name, head);
	for (int v = 0; v < g->nval && !o->blob; v++) {
		const Value *val = GV(g, v);
		char id[32], at[140];
		if (!used[v])
			continue;
		fputs("/* ", fc);
		put_comment(fc, val->name);
		fprintf(fc, ": %s */\n", dtype_name(val->dtype));
		snprintf(id, sizeof id, "w%d", v);
		snprintf(at, sizeof at, "%s_WEIGHTS_AT_", up);
		if (dtype_is_string(val->dtype))
			emit_c_strings(fc, id, at, val);
		else
			emit_c_data(fc, id, at, val->dtype, val->data, value_nbytes(val));
	}

	for (int k = 0; k < p->nkernel && !rc; k++) {
		fputs("/* ", fc);
		put_comment(fc, p->kernel[k]->ops);
		fputs(" */\n", fc);
		rc = o->freestanding ? render_c_kernel_free(c, p->kernel[k], fc)
		                     : render_c_kernel(c, p->kernel[k], fc);
		fputc('\n', fc);
	}
	if (rc)
		goto done;

	fprintf(fc, "const char *%s_strerror(int status)\n{\n\tswitch (status) {\n"
	        "\tcase %s_OK: return \"ok\";\n"
	        "\tcase %s_ERR_ARG: return \"a NULL input or output\";\n"
	        "\tcase %s_ERR_ARENA: return \"the arena is NULL or misaligned\";\n",
	        P, up, up, up);
	if (dyn) {
		/* the dims' ranges, by name (C-escaped as the dim names are) */
		fprintf(fc, "\tcase %s_ERR_DIM: return \"a dim is out of range (", up);
		for (int i = 0; i < plan->ndims; i++) {
			fputs(i ? ", " : "", fc);
			for (const char *q = plan->dims[i]; *q; q++)
				if (*q >= 'A' && *q <= 'z' && *q != '\\')
					fputc(*q, fc);
				else if ((*q >= '0' && *q <= '9') || *q == '_')
					fputc(*q, fc);
				else
					fputc('?', fc);
			fprintf(fc, " >= %lld", (long long)(plan->dim_min ?
			        plan->dim_min[i] : 0));
		}
		fprintf(fc, ") or a size would pass 2^63 bytes\";\n");
	}
	if (o->blob)
		fprintf(fc, "\tcase %s_ERR_WEIGHTS: return \"the weights are NULL, misaligned "
		        "or not this module's blob\";\n", up);
	if (g->str_heap)
		fprintf(fc, "\tcase %s_ERR_STRING_SPACE: return \"the strings made do not fit "
		        "in %s_STRING_BYTES\";\n\tcase %s_ERR_STRING_UTF8: return \"a string "
		        "that must be UTF-8 is not\";\n", up, up, up);
	fprintf(fc, "\tdefault: return \"unknown status\";\n\t}\n}\n\n");
	emit_info(fc, g, P, up, "inputs", g->in, g->nin);
	emit_info(fc, g, P, up, "outputs", g->out, g->nout);

	if (dyn && (rc = emit_dyn_sizes(c, g, plan, P, up, in_id, out_id, dim_id, &xa, fc)))
		goto done;

	/* the run function */
	fprintf(fc, "int %s_run(%s", P, o->blob ? "const void *weights, " : "");
	dim_params(fc, plan, dim_id);
	for (int i = 0; i < g->nin; i++)
		fprintf(fc, "const %s *%s, ", dtype_ctype(GV(g, g->in[i])->dtype), in_id[i]);
	for (int i = 0; i < g->nout; i++)
		fprintf(fc, "%s *%s, ", dtype_ctype(GV(g, g->out[i])->dtype), out_id[i]);
	fprintf(fc, "void *arena)\n{\n\tunsigned char *A = (unsigned char *)arena;\n");
	if (o->blob)
		fprintf(fc, "\tconst unsigned char *W = (const unsigned char *)weights;\n\n"
		        "\tif (!burn_weights_ok(W)) return %s_ERR_WEIGHTS;\n", up);
	else
		fputc('\n', fc);
	for (int i = 0; i < g->nin; i++)
		fprintf(fc, "\tif (!%s) return %s_ERR_ARG;\n", in_id[i], up);
	for (int i = 0; i < g->nout; i++)
		fprintf(fc, "\tif (!%s) return %s_ERR_ARG;\n", out_id[i], up);
	if (dyn) {
		/* the dims first: every size below is then known to fit */
		fprintf(fc, "\t{\n\t\tint64_t need = %s_arena_bytes(", P);
		for (int i = 0; i < plan->ndims; i++)
			fprintf(fc, "%s%s", i ? ", " : "", dim_id[i]);
		fprintf(fc, ");\n\t\tif (need < 0) return %s_ERR_DIM;\n", up);
		fprintf(fc, "\t\tif (need > 0 && (!A || ((uintptr_t)A & (%s_ARENA_ALIGN - 1)))) "
		        "return %s_ERR_ARENA;\n\t}\n", up, up);
	} else if (plan->arena_bytes > 0)
		fprintf(fc, "\tif (!A || ((uintptr_t)A & (%s_ARENA_ALIGN - 1))) return %s_ERR_ARENA;\n",
		        up, up);
	else
		fprintf(fc, "\t(void)A;\n");
	/* the kernel calls: every argument as the plan's launch list binds it */
	for (int k = 0; k < p->nkernel; k++) {
		const Launch *l = &plan->launch[k];
		/* a run-time If's branch runs only when its condition says */
		if (l->guard) {
			fprintf(fc, "\tif (%s*(const unsigned char *)(const void *)(",
			        l->guard_neg ? "!" : "");
			if ((rc = print_arg(c, fc, g, l->guard, o->freestanding, woff, in_id,
			                    out_id, dim_id, p->kernel[k]->name)))
				goto done;
			fprintf(fc, "))\n\t");
		}
		fprintf(fc, "\t%s(", p->kernel[k]->name);
		for (int i = 0; i < l->narg; i++) {
			fprintf(fc, "%s", i ? ", " : "");
			if ((rc = print_arg(c, fc, g, &l->arg[i], o->freestanding, woff, in_id,
			                    out_id, dim_id, p->kernel[k]->name)))
				goto done;
		}
		/* dim arguments, after the buffers */
		for (int i = 0; i < l->ndim; i++) {
			fprintf(fc, "%s", l->narg || i ? ", " : "");
			dx_print_c(fc, l->dim[i], dim_id);
		}
		fprintf(fc, ");\n");
	}
	/* the string heap's status (runtime/strings.inc) */
	if (g->str_heap)
		fprintf(fc, "\t{\n\t\tconst int64_t *h = (const int64_t *)(const void *)(A + %lld);\n"
		        "\t\tif (h[0] < 0) return h[0] == -1 ? %s_ERR_STRING_SPACE : "
		        "%s_ERR_STRING_UTF8;\n\t}\n", (long long)plan->offset[g->str_heap - 1],
		        up, up);
	/* outputs no kernel wrote: constants, inputs passed through, and the
	 * second of two outputs naming one value */
	for (int i = 0; i < g->nout; i++) {
		const Value *v = GV(g, g->out[i]);
		int first_out = i;
		char src[160];
		for (int j = 0; j < i; j++)
			if (g->out[j] == g->out[i]) {
				first_out = j;
				break;
			}
		if (first_out != i)
			snprintf(src, sizeof src, "%s", out_id[first_out]);
		else if (v->data && woff)
			snprintf(src, sizeof src, "W + %lld", (long long)woff[g->out[i]]);
		else if (v->data)
			snprintf(src, sizeof src, "w%d.%s", g->out[i],
			         dtype_is_string(v->dtype) ? "v" : "b");
		else if (v->kind == VK_INPUT) {
			int j = 0;
			while (j < g->nin && g->in[j] != g->out[i])
				j++;
			if (j == g->nin)
				continue;
			snprintf(src, sizeof src, "%s", in_id[j]);
		} else
			continue;
		if (!value_shape_known(v)) {
			const DimExpr *nb = plan_value_bytes(&xa, g, g->out[i], plan->ndims,
			                                     plan->dims);
			if (!nb) {
				rc = burn_fail(c, BURN_ERR_INTERNAL, "output '%s' has no size",
				               v->name);
				goto done;
			}
			fprintf(fc, "\t%s(%s, %s, (size_t)", copy, out_id[i], src);
			dx_print_c(fc, nb, dim_id);
			fprintf(fc, ");\n");
		} else if (value_nbytes(v) > 0)
			fprintf(fc, "\t%s(%s, %s, %lld);\n", copy, out_id[i], src,
			        (long long)value_nbytes(v));
	}
	fprintf(fc, "\treturn %s_OK;\n}\n\n", up);

	fprintf(fc, "int %s_run_v(%s%sconst void *const *inputs, void *const *outputs, void *arena)\n{\n",
	        P, o->blob ? "const void *weights, " : "", dyn ? "const int64_t *dims, " : "");
	if (dyn)
		fprintf(fc, "\tif (!dims) return %s_ERR_ARG;\n", up);
	if (g->nin)
		fprintf(fc, "\tif (!inputs) return %s_ERR_ARG;\n", up);
	else
		fprintf(fc, "\t(void)inputs;\n");
	if (g->nout)
		fprintf(fc, "\tif (!outputs) return %s_ERR_ARG;\n", up);
	else
		fprintf(fc, "\t(void)outputs;\n");
	fprintf(fc, "\treturn %s_run(%s", P, o->blob ? "weights, " : "");
	for (int i = 0; i < plan->ndims; i++)
		fprintf(fc, "dims[%d], ", i);
	for (int i = 0; i < g->nin; i++)
		fprintf(fc, "(const %s *)inputs[%d], ", dtype_ctype(GV(g, g->in[i])->dtype), i);
	for (int i = 0; i < g->nout; i++)
		fprintf(fc, "(%s *)outputs[%d], ", dtype_ctype(GV(g, g->out[i])->dtype), i);
	fprintf(fc, "arena);\n}\n");
	if (o->extra_c)
		fputs(o->extra_c, fc);
	if (ferror(fc))
		rc = burn_fail(c, BURN_ERR_IO, "write error");
done:
	nameset_free(&set);
	arena_free(&xa);
	free(dim_id);
	free(in_id);
	free(out_id);
	free(used);
	free(woff);
	return rc;
}

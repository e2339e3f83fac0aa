/*
 * kir.c - the kernel IR: builder (with constant folding), op names and
 * verifier.  The text form (printer and parser) lives in kir_text.c, the
 * interpreter in kir_interp.c.
 *
 * Memory: every kernel, its node/buffer/variable tables and its strings
 * live in prog->arena.  Tables grow by copying (arena_grow), so code keeps
 * indices, never pointers, across calls that may append.
 */
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <math.h>
#include "kir.h"

/* ---- small type helpers ------------------------------------------------ */

static int
is_intlike(int dt)
{
	return dtype_is_int(dt) || dt == DT_BOOL;
}

const KOpInfo kop_info[KO_COUNT_] = {
	[KO_NONE] = { "none", 0, KR_SAME, KD_NUM, 0, "", "" },
#define KOP(id, name, arity, rule, domain, props, libm) \
	[KO_##id] = { name, arity, rule, domain, props, #libm, #libm "f" },
#include "kops.def"
#undef KOP
};

/* One row per op, in enum order: the count and the table agree. */
#define KOP(id, name, arity, rule, domain, props, libm) +1
_Static_assert(0
#include "kops.def"
               + 1 == KO_COUNT_, "kops.def and enum KOp disagree");
#undef KOP

const char *
kop_libm(int op, int dt)
{
	if (op <= KO_NONE || op >= KO_COUNT_ || !kop_info[op].libm64[0])
		return NULL;
	return dt == DT_F32 ? kop_info[op].libm32 :
	       dt == DT_F64 ? kop_info[op].libm64 : NULL;
}

static int
in_domain(int domain, int dt)
{
	if (!dtype_supported(dt) || dtype_is_storage(dt))
		return 0;
	switch (domain) {
	case KD_FLOAT: return dtype_is_float(dt);
	case KD_INT: return dtype_is_int(dt);
	case KD_BOOL: return dt == DT_BOOL;
	case KD_UBITS: return dt == DT_U32 || dt == DT_U64;
	}
	return 1;
}

int
kop_result(int op, int dt)
{
	const KOpInfo *o;

	if (op <= KO_NONE || op >= KO_COUNT_)
		return DT_UNDEF;
	o = &kop_info[op];
	if (!in_domain(o->domain, dt))
		return DT_UNDEF;
	switch (o->rule) {
	case KR_BOOL: return DT_BOOL;
	case KR_BITS: return dt == DT_F64 ? DT_U64 : DT_U32;
	case KR_FLOAT: return dt == DT_U64 ? DT_F64 : DT_F32;
	}
	return dt;
}

const KCaps kcaps_libm = { .libm = 1, .libm_f64 = 1 };

int
kop_needs_legal(int op, int dt, const KCaps *caps)
{
	static const KCaps none;
	int p;

	if (op <= KO_NONE || op >= KO_COUNT_)
		return 0;
	if (!caps)
		caps = &none;
	p = kop_info[op].props;
	if ((p & KP_LEG_INT) && (dtype_is_int(dt) || dt == DT_BOOL))
		return 1;
	if ((p & KP_LEG_F32) && dt == DT_F32)
		return !caps->erf_f32;
	if ((p & KP_LEG_MATH) && dt == DT_F32)
		return !caps->libm;
	if ((p & KP_LEG_F64) && dt == DT_F64)
		return !caps->libm_f64;
	if ((p & KP_LEG_FLT) && dtype_is_float(dt))
		return op == KO_ISNAN ? !caps->isnan : op == KO_ISINF ? !caps->isinf
		     : !caps->nan_minmax;
	return 0;
}

int
kir_stores_packed(const KKernel *k)
{
	for (KRef i = 1; i < k->nnode; i++)
		if (k->node[i].kind == KS_STORE && k->node[i].buf >= 0 &&
		    k->node[i].buf < k->nbuf && dtype_is_packed(k->buf[k->node[i].buf].dtype))
			return 1;
	return 0;
}

int
kir_bits_dtype(int dt)
{
	if (!dtype_is_storage(dt))
		return DT_UNDEF;
	return dtype_size(dt) == 2 ? DT_U16 : DT_U8;
}

/* The dtype a unary/binary op yields for operand dtype dt (dt itself when
 * outside the op's domain: the verifier reports that). */
int
kop_result_dtype(int op, int dt)
{
	int r = kop_result(op, dt);

	return r == DT_UNDEF ? dt : r;
}

/* Wrap v to the range of integer dtype dt (two's complement), as a C cast
 * to that type would; bool becomes 0/1. */
static int64_t
wrap_int(int dt, int64_t v)
{
	switch (dt) {
	case DT_BOOL: return v != 0;
	case DT_I8:  return (int8_t)v;
	case DT_U8:  return (uint8_t)v;
	case DT_I16: return (int16_t)v;
	case DT_U16: return (uint16_t)v;
	case DT_I32: return (int32_t)v;
	case DT_U32: return (uint32_t)v;
	default:     return v;
	}
}

/* ---- program and kernel ------------------------------------------------ */

void
kprog_init(KProgram *p, Arena *a)
{
	memset(p, 0, sizeof *p);
	p->arena = a;
}

int
kprog_storage(const KProgram *p, int v)
{
	while (v >= 0 && v < p->nalias && p->alias[v] != v)
		v = p->alias[v];
	return v;
}

int64_t
kprog_storage_off(const KProgram *p, int v)
{
	int64_t off = 0;

	while (v >= 0 && v < p->nalias && p->alias[v] != v) {
		if (p->alias_off)
			off += p->alias_off[v];
		v = p->alias[v];
	}
	return off;
}

/* Identifiers a kernel function must not take: C keywords, names from the
 * headers the generated C includes (math.h, stdint.h, string.h, stdio.h,
 * stdlib.h), and the names renderers give buffers, temporaries and helpers
 * (bN, tN, vN, wN, burn_*). */
static const char *const reserved[] = {
	"auto", "break", "case", "char", "const", "continue", "default", "do",
	"double", "else", "enum", "extern", "float", "for", "goto", "if",
	"inline", "int", "long", "register", "restrict", "return", "short",
	"signed", "sizeof", "static", "struct", "switch", "typedef", "union",
	"unsigned", "void", "volatile", "while", "bool", "true", "false",
	"main", "errno", "abs", "labs", "div", "ldiv", "exit", "abort", "free",
	"malloc", "calloc", "realloc", "printf", "puts", "memcpy", "memset",
	"memmove", "memcmp", "strlen", "strcpy", "strcmp", "qsort", "rand",
	"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logb", "sqrt",
	"cbrt", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh",
	"cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "floor",
	"ceil", "round", "lround", "llround", "trunc", "rint", "lrint",
	"nearbyint", "fmod", "remainder", "remquo", "pow", "fabs", "fmin",
	"fmax", "fdim", "fma", "hypot", "lgamma", "tgamma", "gamma", "j0", "j1",
	"jn", "y0", "y1", "yn", "modf", "frexp", "ldexp", "scalbn", "scalbln",
	"ilogb", "copysign", "nan", "nextafter", "nexttoward", "isnan",
	"isinf", "isfinite", "isnormal", "signbit", "fpclassify", "drem",
	"significand", "sincos", "exp10", "pow10", "finite", "isgreater",
	"isless", "select", NULL
};

static int
reserved_name(const char *s)
{
	size_t n = strlen(s);
	int i;

	if (n > 1 && strchr("bvtw", s[0]) && strspn(s + 1, "0123456789") == n - 1)
		return 1;
	if (strncmp(s, "burn_", 5) == 0 || (n >= 2 && strcmp(s + n - 2, "_t") == 0))
		return 1;
	for (i = 0; reserved[i]; i++) {
		size_t m = strlen(reserved[i]);
		/* also the float and long double variants: expf, expl */
		if (strncmp(s, reserved[i], m) == 0 &&
		    (s[m] == 0 || ((s[m] == 'f' || s[m] == 'l') && s[m + 1] == 0)))
			return 1;
	}
	return 0;
}

static size_t
name_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;   /* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return (size_t)h;
}

static int
name_taken(const KProgram *p, const char *s)
{
	size_t m, i;

	if (reserved_name(s))
		return 1;
	if (!p->capnames)
		return 0;
	m = (size_t)p->capnames - 1;
	for (i = name_hash(s) & m; p->names[i]; i = (i + 1) & m)
		if (strcmp(p->names[i], s) == 0)
			return 1;
	return 0;
}

/* Rebuild p's name set with room for cap names. */
static void
names_rehash(KProgram *p, int cap)
{
	const char **t = arena_alloc(p->arena, sizeof *t * (size_t)cap);
	size_t i, m = (size_t)cap - 1;

	if (!t)
		return;   /* out of memory: keep the old set */
	memset(t, 0, sizeof *t * (size_t)cap);
	for (int k = 0; k < p->nkernel; k++) {
		for (i = name_hash(p->kernel[k]->name) & m; t[i]; i = (i + 1) & m)
			;
		t[i] = p->kernel[k]->name;
	}
	p->names = t;
	p->capnames = cap;
}

/* Enter the name of a finished kernel into p's set, which is kept at most
 * half full. */
static void
name_add(KProgram *p, const char *s)
{
	size_t m, i;

	if (2 * (p->nkernel + 1) > p->capnames)
		names_rehash(p, p->capnames ? 2 * p->capnames : 64);
	if (p->nkernel + 1 >= p->capnames)
		return;   /* out of memory: the name goes unrecorded */
	m = (size_t)p->capnames - 1;
	for (i = name_hash(s) & m; p->names[i]; i = (i + 1) & m)
		;
	p->names[i] = s;
}

void
kprog_name_add(KProgram *p, const char *name)
{
	name_add(p, name);
}

int
kprog_name_ok(const KProgram *p, const char *s)
{
	size_t i;

	if (!s || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
	            s[0] == '_'))
		return 0;
	for (i = 1; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      s[i] == '_' || (s[i] >= '0' && s[i] <= '9')))
			return 0;
	return i < 128 && !name_taken(p, s);
}

/* A C identifier derived from name, unique among p's kernels, into out
 * (cap >= 128).  The suffix starts at the kernel count so that a program
 * of many same-named kernels does not probe quadratically many
 * candidates. */
void
kprog_next_name(const KProgram *p, const char *name, char *out, size_t cap)
{
	char base[96];
	size_t i, n;
	int k;

	if (!name || !*name)
		name = "kernel";
	n = strlen(name);
	if (n > sizeof base - 2)
		n = sizeof base - 2;
	for (i = 0; i < n; i++) {
		char ch = name[i];
		int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		         ch == '_' || (i > 0 && ch >= '0' && ch <= '9');
		base[i] = ok ? ch : '_';
	}
	base[n] = 0;
	if (base[0] >= '0' && base[0] <= '9')
		base[0] = '_';
	snprintf(out, cap, "%s", base);
	for (k = p->nkernel; name_taken(p, out); k++)
		snprintf(out, cap, "%s_%d", base, k);
}

static const char *
unique_name(KProgram *p, const char *name)
{
	char buf[128];

	kprog_next_name(p, name, buf, sizeof buf);
	return arena_strdup(p->arena, buf);
}

void
kb_begin(KB *kb, KProgram *p, const char *name, const char *ops)
{
	KKernel *k;

	memset(kb, 0, sizeof *kb);
	kb->prog = p;
	k = arena_alloc(p->arena, sizeof *k);
	kb->k = k;
	k->name = unique_name(p, name);
	k->ops = arena_strdup(p->arena, ops ? ops : "");
	k->capnode = 64;
	k->node = arena_alloc(p->arena, k->capnode * sizeof *k->node);
	k->nnode = 1;   /* node[0] is "none" */
}

KKernel *
kb_finish(KB *kb)
{
	KProgram *p = kb->prog;
	KKernel *k = kb->k;

	while (kb->depth > 0)   /* tolerate unclosed blocks */
		kb_end(kb);
	if (p->nkernel == p->capkernel) {
		int want = p->capkernel ? 2 * p->capkernel : 16;
		p->kernel = arena_grow(p->arena, p->kernel, sizeof *p->kernel,
		                       p->nkernel, want);
		p->capkernel = want;
	}
	name_add(p, k->name);
	p->kernel[p->nkernel++] = k;
	kb->k = NULL;
	return k;
}

void
kb_reopen(KB *kb, KProgram *p, KKernel *k)
{
	memset(kb, 0, sizeof *kb);
	kb->prog = p;
	kb->k = k;
	k->body = 0;
}

/* Append a zeroed node; returns its index. */
static KRef
newnode(KB *kb, int kind)
{
	KKernel *k = kb->k;
	KNode *n;

	if (k->nnode == k->capnode) {
		int want = 2 * k->capnode;
		k->node = arena_grow(kb->prog->arena, k->node, sizeof *k->node,
		                     k->nnode, want);
		k->capnode = want;
	}
	n = &k->node[k->nnode];
	memset(n, 0, sizeof *n);
	n->kind = kind;
	n->lanes = 1;
	return k->nnode++;
}

int
kb_buf(KB *kb, int dtype, int64_t count, int value, int space, int access)
{
	KKernel *k = kb->k;
	KBuf *b;

	if (k->nbuf == k->capbuf) {
		int want = k->capbuf ? 2 * k->capbuf : 8;
		k->buf = arena_grow(kb->prog->arena, k->buf, sizeof *k->buf,
		                    k->nbuf, want);
		k->capbuf = want;
	}
	b = &k->buf[k->nbuf];
	b->dtype = dtype;
	b->count = count;
	b->ext = 0;
	b->value = space == KS_GLOBAL ? value : -1;
	b->space = space;
	b->access = access;
	b->name = arena_printf(kb->prog->arena, "b%d", k->nbuf);
	return k->nbuf++;
}

int
kb_buf_value(KB *kb, int v, int dtype, int64_t count, int access)
{
	KKernel *k = kb->k;
	int i;

	for (i = 0; i < k->nbuf; i++)
		if (k->buf[i].space == KS_GLOBAL && k->buf[i].value == v) {
			k->buf[i].access |= access;
			return i;
		}
	return kb_buf(kb, dtype, count, v, KS_GLOBAL, access);
}

int
kb_var(KB *kb, int dtype, const char *name)
{
	KKernel *k = kb->k;

	if (k->nvar == k->capvar) {
		int want = k->capvar ? 2 * k->capvar : 8;
		k->var = arena_grow(kb->prog->arena, k->var, sizeof *k->var,
		                    k->nvar, want);
		k->capvar = want;
	}
	k->var[k->nvar].dtype = dtype;
	k->var[k->nvar].name = arena_strdup(kb->prog->arena,
	                                    name && *name ? name : "v");
	return k->nvar++;
}

int
kb_dim(KB *kb, const char *name)
{
	if (kb->k->nvar != kb->k->ndim)
		return -1;
	kb->k->ndim++;
	return kb_var(kb, DT_I64, name);
}

/* ext's value (see vext for what it may hold); 0 on success */
static int
ext_eval(const KKernel *k, KRef e, const int64_t *dims, int depth, int64_t *out)
{
	const KNode *n;
	int64_t x, y;

	if (e <= 0 || e >= k->nnode || depth > 64)
		return 1;
	n = &k->node[e];
	switch (n->kind) {
	case KE_CONST:
		*out = n->ival;
		return 0;
	case KE_VAR:
		if (n->var < 0 || n->var >= k->ndim || !dims)
			return 1;
		*out = dims[n->var];
		return 0;
	case KE_BIN:
		if (ext_eval(k, n->a, dims, depth + 1, &x) ||
		    ext_eval(k, n->b, dims, depth + 1, &y))
			return 1;
		switch (n->op) {
		case KO_ADD: return burn_add_ovf(x, y, out);
		case KO_SUB: return burn_add_ovf(x, y == INT64_MIN ? 0 : -y, out) || y == INT64_MIN;
		case KO_MUL: return burn_mul_ovf(x, y, out);
		case KO_DIV: if (!y || (x == INT64_MIN && y == -1)) return 1; *out = x / y; return 0;
		case KO_MOD: if (!y || (x == INT64_MIN && y == -1)) return 1; *out = x % y; return 0;
		case KO_MIN: *out = x < y ? x : y; return 0;
		case KO_MAX: *out = x > y ? x : y; return 0;
		case KO_SHRM: *out = x >> (y & 63); return x < 0;
		}
	}
	return 1;
}

int
kbuf_extent(Ctx *c, const KKernel *k, int b, const int64_t *dims, int64_t *out)
{
	if (b < 0 || b >= k->nbuf)
		return burn_fail(c, BURN_ERR_INTERNAL, "kir %s: no buffer b%d", k->name, b);
	if (!k->buf[b].ext) {
		*out = k->buf[b].count;
		return BURN_OK;
	}
	if (ext_eval(k, k->buf[b].ext, dims, 0, out) || *out < 0)
		return burn_fail(c, BURN_ERR_INVALID, "kir %s: the extent of b%d is "
		                 "negative or not computable at these dims", k->name, b);
	return BURN_OK;
}

/* ---- expressions ------------------------------------------------------- */

KRef
kb_const_i(KB *kb, int dtype, int64_t v)
{
	KRef r = newnode(kb, KE_CONST);
	KNode *n = &kb->k->node[r];

	n->dtype = dtype;
	if (dtype_is_float(dtype)) {
		if (dtype_is_storage(dtype))
			n->dtype = DT_F32;
		n->fval = n->dtype == DT_F32 ? (double)(float)v : (double)v;
	} else {
		n->ival = wrap_int(dtype, v);
	}
	return r;
}

KRef
kb_const_f(KB *kb, int dtype, double v)
{
	KRef r;
	KNode *n;

	if (!dtype_is_float(dtype))
		return kb_const_i(kb, dtype, (int64_t)v);
	r = newnode(kb, KE_CONST);
	n = &kb->k->node[r];
	n->dtype = (dtype == DT_F64) ? DT_F64 : DT_F32;
	n->fval = n->dtype == DT_F32 ? (double)(float)v : v;
	return r;
}

KRef
kb_idx(KB *kb, int64_t v)
{
	return kb_const_i(kb, DT_I64, v);
}

KRef
kb_get(KB *kb, int var)
{
	KRef r = newnode(kb, KE_VAR);
	KNode *n = &kb->k->node[r];

	n->var = var;
	n->dtype = (var >= 0 && var < kb->k->nvar) ? kb->k->var[var].dtype
	                                            : DT_UNDEF;
	return r;
}

KRef
kb_load(KB *kb, int buf, KRef idx)
{
	KRef r = newnode(kb, KE_LOAD);
	KNode *n = &kb->k->node[r];
	int dt = (buf >= 0 && buf < kb->k->nbuf) ? kb->k->buf[buf].dtype
	                                          : DT_UNDEF;

	n->buf = buf;
	n->a = idx;
	n->dtype = dtype_expr(dt);
	return r;
}

KRef
kb_load_guard(KB *kb, int buf, KRef idx, KRef guard, KRef dflt)
{
	int64_t v;
	KRef r;

	if (kb_is_const_i(kb->k, guard, &v) && kb_dtype(kb->k, guard) == DT_BOOL)
		return v ? kb_load(kb, buf, idx) : dflt;
	r = kb_load(kb, buf, idx);
	kb->k->node[r].b = guard;
	kb->k->node[r].c = dflt;
	return r;
}

static KRef
guard_rec(KB *kb, KRef g, KRef e, KRef *memo, int n0)
{
	KNode n;
	KRef a, b, c, r;

	if (e <= 0 || e >= n0)
		return e;
	if (memo[e])
		return memo[e];
	n = kb->k->node[e];
	a = n.a ? guard_rec(kb, g, n.a, memo, n0) : 0;
	b = n.b ? guard_rec(kb, g, n.b, memo, n0) : 0;
	c = n.c ? guard_rec(kb, g, n.c, memo, n0) : 0;
	switch (n.kind) {
	case KE_LOAD:
		if (n.b) {   /* already guarded: guard its guard too */
			r = kb_load_guard(kb, n.buf, a, kb_bin(kb, KO_AND, g, b), c);
		} else {
			int dt = n.dtype;
			KRef z = dtype_is_float(dt) ? kb_const_f(kb, dt, 0)
			                            : kb_const_i(kb, dt, 0);
			r = kb_load_guard(kb, n.buf, a, g, z);
		}
		if (kb->k->node[r].kind == KE_LOAD)
			kb->k->node[r].lanes = n.lanes;
		break;
	case KE_UN: r = kb_un(kb, n.op, a); break;
	case KE_BIN: r = kb_bin(kb, n.op, a, b); break;
	case KE_SELECT: r = kb_select(kb, a, b, c); break;
	case KE_FMA: r = kb_fma(kb, a, b, c); break;
	case KE_CAST:
		r = n.ival ? kb_cast_f8(kb, (int)n.ival, a, n.op) : kb_cast(kb, n.dtype, a);
		if (!n.ival && r != a && kb->k->node[r].kind == KE_CAST)
			kb->k->node[r].op = n.op;
		break;
	default: r = e;
	}
	memo[e] = r;
	return r;
}

KRef
kb_guard_loads(KB *kb, KRef guard, KRef e)
{
	int n0 = kb->k->nnode;
	KRef *memo = calloc((size_t)n0 + 1, sizeof *memo), r;

	if (!memo)   /* out of memory: a select the verifier cannot see */
		return e;
	r = guard_rec(kb, guard, e, memo, n0);
	free(memo);
	return r;
}

int
kb_dtype(const KKernel *k, KRef e)
{
	if (e <= 0 || e >= k->nnode)
		return DT_UNDEF;
	return k->node[e].dtype;
}

int
kb_is_const_i(const KKernel *k, KRef e, int64_t *v)
{
	const KNode *n;

	if (e <= 0 || e >= k->nnode)
		return 0;
	n = &k->node[e];
	if (n->kind != KE_CONST || n->lanes != 1 || !is_intlike(n->dtype))
		return 0;
	if (v)
		*v = n->ival;
	return 1;
}

static int
const_f(const KKernel *k, KRef e, double *v)
{
	const KNode *n;

	if (e <= 0 || e >= k->nnode)
		return 0;
	n = &k->node[e];
	if (n->kind != KE_CONST || n->lanes != 1 || !dtype_is_float(n->dtype))
		return 0;
	*v = n->fval;
	return 1;
}

/* Fold op over integer constants a, b of dtype dt.  Returns 1 and the
 * result in *out (already wrapped to the result dtype) when foldable. */
static int
fold_int(int op, int dt, int64_t a, int64_t b, int64_t *out)
{
	int uns = !dtype_is_signed(dt);
	uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
	int64_t r;

	if (dt == DT_U64 || dt == DT_U32 || dt == DT_U16 || dt == DT_U8 ||
	    dt == DT_BOOL)
		uns = 1;
	switch (op) {
	case KO_ADD: r = (int64_t)(ua + ub); break;
	case KO_SUB: r = (int64_t)(ua - ub); break;
	case KO_MUL: r = (int64_t)(ua * ub); break;
	case KO_DIV:
	case KO_MOD:
		if (b == 0 || (!uns && a == INT64_MIN && b == -1))
			return 0;
		if (uns)
			r = (int64_t)(op == KO_DIV ? ua / ub : ua % ub);
		else
			r = op == KO_DIV ? a / b : a % b;
		break;
	case KO_MIN: r = uns ? (ua < ub ? a : b) : (a < b ? a : b); break;
	case KO_MAX: r = uns ? (ua > ub ? a : b) : (a > b ? a : b); break;
	case KO_BAND: r = a & b; break;
	case KO_BOR:  r = a | b; break;
	case KO_BXOR: r = a ^ b; break;
	case KO_AND: r = (a != 0) && (b != 0); break;
	case KO_OR:  r = (a != 0) || (b != 0); break;
	case KO_XOR: r = (a != 0) != (b != 0); break;
	case KO_LT: r = uns ? ua < ub : a < b; break;
	case KO_LE: r = uns ? ua <= ub : a <= b; break;
	case KO_GT: r = uns ? ua > ub : a > b; break;
	case KO_GE: r = uns ? ua >= ub : a >= b; break;
	case KO_EQ: r = a == b; break;
	case KO_NE: r = a != b; break;
	default: return 0;
	}
	*out = wrap_int(kop_result_dtype(op, dt), r);
	return 1;
}

static int
fold_fcmp(int op, double a, double b, int64_t *out)
{
	switch (op) {
	case KO_LT: *out = a < b; return 1;
	case KO_LE: *out = a <= b; return 1;
	case KO_GT: *out = a > b; return 1;
	case KO_GE: *out = a >= b; return 1;
	case KO_EQ: *out = a == b; return 1;
	case KO_NE: *out = a != b; return 1;
	}
	return 0;
}

KRef
kb_un(KB *kb, int op, KRef a)
{
	KKernel *k = kb->k;
	int dt = kb_dtype(k, a);
	int64_t v;
	KRef r;
	KNode *n;

	if (kb_is_const_i(k, a, &v)) {
		switch (op) {
		case KO_NEG: return kb_const_i(kb, dt, (int64_t)(0 - (uint64_t)v));
		case KO_NOT: if (dt == DT_BOOL) return kb_const_i(kb, DT_BOOL, !v);
			break;
		case KO_BITNOT: if (dt != DT_BOOL) return kb_const_i(kb, dt, ~v);
			break;
		case KO_ABS:
			if (dtype_is_signed(dt) && v != INT64_MIN)
				return kb_const_i(kb, dt, v < 0 ? -v : v);
			if (!dtype_is_signed(dt))
				return a;
			break;
		case KO_FLOOR: case KO_CEIL: case KO_ROUND:
			return a;
		}
	}
	r = newnode(kb, KE_UN);
	n = &kb->k->node[r];
	n->op = op;
	n->a = a;
	n->dtype = kop_result_dtype(op, dt);
	return r;
}

KRef
kb_bin(KB *kb, int op, KRef a, KRef b)
{
	KKernel *k = kb->k;
	int dt = kb_dtype(k, a);
	int64_t x, y, v;
	double fx, fy;
	int ca, cb;
	KRef r;
	KNode *n;

	ca = kb_is_const_i(k, a, &x);
	cb = kb_is_const_i(k, b, &y);
	if (dt == kb_dtype(k, b)) {
		if (ca && cb && fold_int(op, dt, x, y, &v))
			return kb_const_i(kb, kop_result_dtype(op, dt), v);
		if (const_f(k, a, &fx) && const_f(k, b, &fy) &&
		    fold_fcmp(op, fx, fy, &v))
			return kb_const_i(kb, DT_BOOL, v);
		if (dtype_is_int(dt)) {
			switch (op) {
			case KO_ADD:
				if (cb && y == 0) return a;
				if (ca && x == 0) return b;
				break;
			case KO_SUB:
				if (cb && y == 0) return a;
				break;
			case KO_MUL:
				if (cb && y == 1) return a;
				if (ca && x == 1) return b;
				if (cb && y == 0) return b;
				if (ca && x == 0) return a;
				break;
			case KO_DIV:
				if (cb && y == 1) return a;
				break;
			}
		}
	}
	r = newnode(kb, KE_BIN);
	n = &kb->k->node[r];
	n->op = op;
	n->a = a;
	n->b = b;
	n->dtype = kop_result_dtype(op, dt);
	return r;
}

/* Are x and y the same node, or equal scalar constants (bit for bit)? */
static int
same_value(const KKernel *k, KRef x, KRef y)
{
	const KNode *p = &k->node[x], *q = &k->node[y];

	if (x == y)
		return 1;
	return p->kind == KE_CONST && q->kind == KE_CONST && p->dtype == q->dtype &&
	       p->lanes == 1 && q->lanes == 1 && p->ival == q->ival &&
	       memcmp(&p->fval, &q->fval, sizeof p->fval) == 0;
}

KRef
kb_select(KB *kb, KRef c, KRef a, KRef b)
{
	KRef r;
	KNode *n;
	int64_t v;

	if (kb_is_const_i(kb->k, c, &v) && kb_dtype(kb->k, c) == DT_BOOL)
		return v ? a : b;
	if (a == b)
		return a;
	if (kb->k->node[a].kind == KE_LOAD && kb->k->node[a].b == c &&
	    same_value(kb->k, kb->k->node[a].c, b))
		return a;   /* c ? (c ? x[i] : b) : b, a padded read */
	r = newnode(kb, KE_SELECT);
	n = &kb->k->node[r];
	n->a = c;
	n->b = a;
	n->c = b;
	n->dtype = kb_dtype(kb->k, a);
	return r;
}

KRef
kb_fma(KB *kb, KRef a, KRef b, KRef c)
{
	KRef r = newnode(kb, KE_FMA);
	KNode *n = &kb->k->node[r];

	n->a = a;
	n->b = b;
	n->c = c;
	n->dtype = kb_dtype(kb->k, a);
	return r;
}

/* A cast to f16/bf16/float8 yields an f32 expression rounded to that
 * precision (a KE_CAST of dtype f32 with ival = the storage dtype, op = the
 * float8 rounding how): no expression is f16, but fused f16 chains can
 * round between ops like the unfused graph. */
KRef
kb_cast_f8(KB *kb, int dtype, KRef a, int how)
{
	KRef r;

	if (kb_dtype(kb->k, a) != DT_F32)
		a = kb_cast(kb, DT_F32, a);
	r = newnode(kb, KE_CAST);
	kb->k->node[r].a = a;
	kb->k->node[r].dtype = DT_F32;
	kb->k->node[r].ival = dtype;
	kb->k->node[r].op = how;
	return r;
}

/* Whether every value of dtype `from` is one of `to` (floats) */
static int
widens_exactly(int from, int to)
{
	return ((from == DT_F16 || from == DT_BF16) && (to == DT_F32 || to == DT_F64)) ||
	       (from == DT_F32 && to == DT_F64);
}

KRef
kb_cast(KB *kb, int dtype, KRef a)
{
	KKernel *k = kb->k;
	int from = kb_dtype(k, a);
	int64_t v;
	double f;
	KRef r;

	if (dtype_is_storage(dtype))
		return kb_cast_f8(kb, dtype, a, 0);
	if (dtype_is_packed(dtype))   /* int4 ...: their expression type */
		dtype = dtype_expr(dtype);
	if (dtype == from)
		return a;
	/* a value widened and narrowed back is itself: every f16 and bf16 is
	 * an f32 (a copy kernel of 16-bit floats moves bits, not a rounding) */
	if (k->node[a].kind == KE_CAST && !k->node[a].ival &&
	    kb_dtype(k, k->node[a].a) == dtype && widens_exactly(dtype, from))
		return k->node[a].a;
	if (kb_is_const_i(k, a, &v)) {
		if (dtype_is_float(dtype)) {
			double d = dtype_is_signed(from) || from == DT_BOOL
			         ? (double)v : (double)(uint64_t)v;
			return kb_const_f(kb, dtype, d);
		}
		if (is_intlike(dtype))
			return kb_const_i(kb, dtype, v);
	}
	if (const_f(k, a, &f) && dtype_is_float(dtype))
		return kb_const_f(kb, dtype, f);
	if (const_f(k, a, &f) && dtype == DT_BOOL)
		return kb_const_i(kb, DT_BOOL, f != 0);
	r = newnode(kb, KE_CAST);
	kb->k->node[r].a = a;
	kb->k->node[r].dtype = dtype;
	return r;
}

KRef
kb_special(KB *kb, int which)
{
	KRef r = newnode(kb, KE_SPECIAL);

	kb->k->node[r].op = which;
	kb->k->node[r].dtype = DT_I64;
	return r;
}

/* ---- statements -------------------------------------------------------- */

/* Append statement s at the insertion point. */
static void
append(KB *kb, KRef s)
{
	KKernel *k = kb->k;
	int d = kb->depth;

	if (kb->last[d])
		k->node[kb->last[d]].next = s;
	else if (d == 0)
		k->body = s;
	else if (kb->in_else[d - 1])
		k->node[kb->open[d - 1]].orelse = s;
	else
		k->node[kb->open[d - 1]].body = s;
	kb->last[d] = s;
}

/* Append s and make its body the insertion point. */
static void
open_block(KB *kb, KRef s)
{
	append(kb, s);
	if (kb->depth >= KB_MAX_DEPTH)
		return;   /* kir_verify reports nothing; caller's nesting bug */
	kb->open[kb->depth] = s;
	kb->in_else[kb->depth] = 0;
	kb->depth++;
	kb->last[kb->depth] = 0;
}

int
kb_for(KB *kb, const char *name, KRef lo, KRef hi, int flags)
{
	int var = kb_var(kb, DT_I64, name ? name : "i");
	KRef s = newnode(kb, KS_FOR);
	KNode *n = &kb->k->node[s];

	n->a = lo;
	n->b = hi;
	n->var = var;
	n->flags = flags;
	open_block(kb, s);
	return var;
}

void
kb_if(KB *kb, KRef cond)
{
	KRef s = newnode(kb, KS_IF);

	kb->k->node[s].a = cond;
	open_block(kb, s);
}

void
kb_else(KB *kb)
{
	if (kb->depth == 0)
		return;
	kb->in_else[kb->depth - 1] = 1;
	kb->last[kb->depth] = 0;
}

void
kb_end(KB *kb)
{
	if (kb->depth > 0)
		kb->depth--;
}

void
kb_store(KB *kb, int buf, KRef idx, KRef val)
{
	KRef s = newnode(kb, KS_STORE);
	KNode *n = &kb->k->node[s];

	n->buf = buf;
	n->a = idx;
	n->b = val;
	append(kb, s);
	/* a packed element shares its byte with its neighbours: the loops
	 * around its store no longer have independent iterations */
	if (buf >= 0 && buf < kb->k->nbuf && dtype_is_packed(kb->k->buf[buf].dtype))
		for (int d = 0; d < kb->depth; d++)
			if (kb->k->node[kb->open[d]].kind == KS_FOR)
				kb->k->node[kb->open[d]].flags &= ~KF_PARALLEL;
}

void
kb_set(KB *kb, int var, KRef val)
{
	KRef s = newnode(kb, KS_SET);

	kb->k->node[s].var = var;
	kb->k->node[s].a = val;
	append(kb, s);
}

void
kb_splice(KB *kb, KRef first)
{
	KKernel *k = kb->k;

	if (!first)
		return;
	append(kb, first);
	while (k->node[first].next)
		first = k->node[first].next;
	kb->last[kb->depth] = first;
}

void
kb_barrier(KB *kb)
{
	append(kb, newnode(kb, KS_BARRIER));
}

/* ---- GPU statements (kops.def) ---------------------------------------- */

static const struct { const char *name; int coll; } kgpu_tab[] = {
#define KGPU(id, name, coll) [KS_##id - KS_VCOPY] = { name, coll },
#include "kops.def"
#undef KGPU
};

static int
is_gpu_stmt(int kind)
{
	return kind >= KS_VCOPY && kind < KN_COUNT_;
}

const char *
kgpu_name(int kind)
{
	return is_gpu_stmt(kind) ? kgpu_tab[kind - KS_VCOPY].name : NULL;
}

int
kgpu_collective(int kind)
{
	return is_gpu_stmt(kind) && kgpu_tab[kind - KS_VCOPY].coll;
}

static const KTileInfo tile_tab[KT_COUNT_] = {
	[KT_M16N8K16_F16] = { "m16n8k16", 16, 8, 16, DT_F16 },
	[KT_M16N8K8_F32] = { "m16n8k8", 16, 8, 8, DT_F32 },
	[KT_M16N8K16_BF16] = { "m16n8k16bf", 16, 8, 16, DT_BF16 },
	[KT_WG64N64_F16] = { "m64n64k16", 64, 64, 16, DT_F16, 1, KT_M16N8K16_F16 },
	[KT_WG64N128_F16] = { "m64n128k16", 64, 128, 16, DT_F16, 1, KT_M16N8K16_F16 },
	[KT_WG64N256_F16] = { "m64n256k16", 64, 256, 16, DT_F16, 1, KT_M16N8K16_F16 },
	[KT_WG64N64_BF16] = { "m64n64k16bf", 64, 64, 16, DT_BF16, 1, KT_M16N8K16_BF16 },
	[KT_WG64N128_BF16] = { "m64n128k16bf", 64, 128, 16, DT_BF16, 1, KT_M16N8K16_BF16 },
	[KT_WG64N256_BF16] = { "m64n256k16bf", 64, 256, 16, DT_BF16, 1, KT_M16N8K16_BF16 },
};

const KTileInfo *
ktile_info(int shape)
{
	return shape > 0 && shape < KT_COUNT_ ? &tile_tab[shape] : NULL;
}

int64_t
ktile_elems(int shape, int role)
{
	const KTileInfo *t = ktile_info(shape);

	if (!t)
		return 0;
	switch (role) {
	case KTR_A: return (int64_t)t->m * t->k;
	case KTR_B: return (int64_t)t->k * t->n;
	case KTR_C: return (int64_t)t->m * t->n;
	}
	return 0;
}

static KRef
gpu_node(KB *kb, int kind, int op, int ival)
{
	KRef s = newnode(kb, kind);

	kb->k->node[s].op = op;
	kb->k->node[s].ival = ival;
	kb->k->node[s].var = -1;
	return s;
}

static void
copy_stmt(KB *kb, int kind, int dst, KRef di, int src, KRef si, int lanes)
{
	KRef s = gpu_node(kb, kind, 0, lanes);
	KNode *n = &kb->k->node[s];

	n->buf = dst;
	n->a = di;
	n->buf2 = src;
	n->b = si;
	append(kb, s);
}

void
kb_vcopy(KB *kb, int dst, KRef di, int src, KRef si, int lanes)
{
	copy_stmt(kb, KS_VCOPY, dst, di, src, si, lanes);
}

void
kb_cpasync(KB *kb, int dst, KRef di, int src, KRef si, int lanes)
{
	copy_stmt(kb, KS_CPASYNC, dst, di, src, si, lanes);
}

void
kb_cpwait(KB *kb)
{
	append(kb, gpu_node(kb, KS_CPWAIT, 0, 0));
}

void
kb_cpwait_n(KB *kb, int n)
{
	append(kb, gpu_node(kb, KS_CPWAIT, 0, n));
}

void
kb_wgwait(KB *kb, int n)
{
	append(kb, gpu_node(kb, KS_WGWAIT, 0, n));
}

void
kb_atomic(KB *kb, int var, int op, int buf, KRef idx, KRef x, KRef y)
{
	KRef s = gpu_node(kb, KS_ATOMIC, op, 0);
	KNode *n = &kb->k->node[s];

	n->var = var;
	n->buf = buf;
	n->a = idx;
	n->b = x;
	n->c = y;
	append(kb, s);
}

void
kb_shfl(KB *kb, int var, int mode, KRef x, KRef lane, int width)
{
	KRef s = gpu_node(kb, KS_SHFL, mode, width);

	kb->k->node[s].var = var;
	kb->k->node[s].a = x;
	kb->k->node[s].b = lane;
	append(kb, s);
}

void
kb_sgred(KB *kb, int var, int op, KRef x, int width)
{
	KRef s = gpu_node(kb, KS_SGRED, op, width);

	kb->k->node[s].var = var;
	kb->k->node[s].a = x;
	append(kb, s);
}

void
kb_tfill(KB *kb, int shape, int frag, KRef x)
{
	KRef s = gpu_node(kb, KS_TFILL, KTR_C, shape);

	kb->k->node[s].buf = frag;
	kb->k->node[s].a = x;
	append(kb, s);
}

void
kb_tload(KB *kb, int shape, int role, int frag, int src, KRef idx, KRef stride)
{
	KRef s = gpu_node(kb, KS_TLOAD, role, shape);
	KNode *n = &kb->k->node[s];

	n->buf = frag;
	n->buf2 = src;
	n->a = idx;
	n->b = stride;
	append(kb, s);
}

void
kb_tmma(KB *kb, int shape, int c, int a, int b)
{
	KRef s = gpu_node(kb, KS_TMMA, 0, shape);
	KNode *n = &kb->k->node[s];

	n->buf = c;
	n->buf2 = a;
	n->buf3 = b;
	append(kb, s);
}

void
kb_wgmma(KB *kb, int shape, int c, int a, KRef ai, int b, KRef bi, KRef bstride)
{
	KRef s = gpu_node(kb, KS_WGMMA, 0, shape);
	KNode *n = &kb->k->node[s];

	n->buf = c;
	n->buf2 = a;
	n->a = ai;
	n->buf3 = b;
	n->b = bi;
	n->c = bstride;
	append(kb, s);
}

void
kb_tstore(KB *kb, int shape, int dst, KRef idx, KRef stride, int frag)
{
	KRef s = gpu_node(kb, KS_TSTORE, KTR_C, shape);
	KNode *n = &kb->k->node[s];

	n->buf = dst;
	n->a = idx;
	n->b = stride;
	n->buf2 = frag;
	append(kb, s);
}

/* ---- op names ---------------------------------------------------------- */

const char *
kop_name(int op)
{
	if (op < 0 || op >= KO_COUNT_)
		return "?";
	return kop_info[op].name;
}

/* ---- verification ------------------------------------------------------ */

/* Check expression e; operands must precede it, so the pool is a DAG.
 * Shared subexpressions are checked once: seen marks checked nodes. */
static int
vexpr(Ctx *c, const KKernel *k, unsigned char *seen, KRef e, KRef user)
{
	const KNode *n;
	int dt, da, db;

	if (e <= 0 || e >= k->nnode || (user && e >= user))
		return burn_fail(c, BURN_ERR_INTERNAL,
		                 "kir %s: node %d: bad expression ref %d",
		                 k->name, user, e);
	if (seen && seen[e])
		return BURN_OK;
	n = &k->node[e];
	if (n->kind < KE_CONST || n->kind > KE_SPECIAL)
		return burn_fail(c, BURN_ERR_INTERNAL,
		                 "kir %s: node %d is not an expression", k->name, e);
	dt = n->dtype;
	if (n->lanes < 1)
		return burn_fail(c, BURN_ERR_INTERNAL, "kir %s: node %d: lanes %d",
		                 k->name, e, n->lanes);
	if (!dtype_supported(dt) || dtype_is_storage(dt) || dtype_is_packed(dt))
		return burn_fail(c, BURN_ERR_INTERNAL,
		                 "kir %s: node %d: bad dtype %s", k->name, e,
		                 dtype_name(dt));
	switch (n->kind) {
	case KE_CONST:
		break;
	case KE_VAR:
		if (n->var < 0 || n->var >= k->nvar)
			return burn_fail(c, BURN_ERR_INTERNAL, "kir %s: node %d: bad var %d",
			                 k->name, e, n->var);
		if (k->var[n->var].dtype != dt)
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "kir %s: node %d: var dtype mismatch", k->name, e);
		break;
	case KE_LOAD: {
		int bd;
		int64_t i;
		if (n->buf < 0 || n->buf >= k->nbuf)
			return burn_fail(c, BURN_ERR_INTERNAL, "kir %s: node %d: bad buf %d",
			                 k->name, e, n->buf);
		TRY(vexpr(c, k, seen, n->a, e));
		if (!dtype_is_int(k->node[n->a].dtype))
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "kir %s: node %d: index not integer", k->name, e);
		if (k->buf[n->buf].space == KS_FRAG)
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "kir %s: node %d: load of fragment b%d (tile ops only)",
			                 k->name, e, n->buf);
		bd = k->buf[n->buf].dtype;
		if (dtype_is_packed(bd))    /* legalisation retypes the buffer */
			bd = dtype_expr(bd);
		else if (dtype_is_storage(bd))   /* f32, or the bits (legalised) */
			bd = dt == kir_bits_dtype(bd) ? dt : DT_F32;
		if (bd != dt)
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "kir %s: node %d: load dtype %s from %s buffer",
			                 k->name, e, dtype_name(dt),
			                 dtype_name(k->buf[n->buf].dtype));
		if (n->b) {   /* guarded: bool guard, default of the load's type */
			TRY(vexpr(c, k, seen, n->b, e));
			TRY(vexpr(c, k, seen, n->c, e));
			if (k->node[n->b].dtype != DT_BOOL || k->node[n->c].dtype != dt)
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "kir %s: node %d: guarded load types",
				                 k->name, e);
			break;
		}
		if (!k->buf[n->buf].ext && kb_is_const_i(k, n->a, &i) &&
		    (i < 0 || i + n->lanes > k->buf[n->buf].count))
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "kir %s: load b%d[%" PRId64 "] out of bounds (%" PRId64 ")",
			                 k->name, n->buf, i, k->buf[n->buf].count);
		break;
	}
	case KE_UN:
		TRY(vexpr(c, k, seen, n->a, e));
		da = k->node[n->a].dtype;
		if (n->op <= KO_NONE || n->op >= KO_COUNT_ || kop_info[n->op].arity != 1)
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "kir %s: node %d: bad unary op %d", k->name, e, n->op);
		if (dt != kop_result(n->op, da))
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "kir %s: node %d: %s on %s", k->name, e,
			                 kop_name(n->op), dtype_name(da));
		break;
	case KE_BIN:
		TRY(vexpr(c, k, seen, n->a, e));
		TRY(vexpr(c, k, seen, n->b, e));
		da = k->node[n->a].dtype;
		db = k->node[n->b].dtype;
		if (n->op <= KO_NONE || n->op >= KO_COUNT_ || kop_info[n->op].arity != 2)
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "kir %s: node %d: bad binary op %d", k->name, e, n->op);
		if (da != db || dt != kop_result(n->op, da))
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "kir %s: node %d: %s(%s, %s)", k->name, e,
			                 kop_name(n->op), dtype_name(da), dtype_name(db));
		break;
	case KE_SELECT:
		TRY(vexpr(c, k, seen, n->a, e));
		TRY(vexpr(c, k, seen, n->b, e));
		TRY(vexpr(c, k, seen, n->c, e));
		if (k->node[n->a].dtype != DT_BOOL || k->node[n->b].dtype != dt ||
		    k->node[n->c].dtype != dt)
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "kir %s: node %d: select types", k->name, e);
		break;
	case KE_FMA:
		TRY(vexpr(c, k, seen, n->a, e));
		TRY(vexpr(c, k, seen, n->b, e));
		TRY(vexpr(c, k, seen, n->c, e));
		if (!dtype_is_float(dt) || k->node[n->a].dtype != dt ||
		    k->node[n->b].dtype != dt || k->node[n->c].dtype != dt)
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "kir %s: node %d: fma types", k->name, e);
		break;
	case KE_CAST:
		TRY(vexpr(c, k, seen, n->a, e));
		if (n->op == KC_RAW && !n->ival) {   /* float -> int, in range */
			if (!dtype_is_float(k->node[n->a].dtype) ||
			    !(dtype_is_int(dt) || dt == DT_BOOL))
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "kir %s: node %d: raw cast %s -> %s", k->name,
				                 e, dtype_name(k->node[n->a].dtype),
				                 dtype_name(dt));
			break;
		}
		if ((n->ival && (!dtype_is_storage((int)n->ival) ||
		                 dt != DT_F32 || k->node[n->a].dtype != DT_F32)) ||
		    (n->op && !dtype_is_f8((int)n->ival)) || (n->op & ~7) ||
		    ((n->op & (KC_DOWN | KC_NEAREST)) && n->ival != DT_F8E8M0) ||
		    (n->op & KC_DOWN && n->op & KC_NEAREST))
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "kir %s: node %d: bad rounding cast", k->name, e);
		break;
	case KE_SPECIAL:
		if (n->op < KX_THREAD_X || n->op > KX_BLOCK_Z || dt != DT_I64)
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "kir %s: node %d: bad special", k->name, e);
		break;
	}
	if (seen)
		seen[e] = 1;
	return BURN_OK;
}

int
kir_verify_expr(Ctx *c, const KKernel *k, unsigned char *seen, KRef e)
{
	return vexpr(c, k, seen, e, 0);
}

/* ---- verifying GPU statements ---- */

#define GFAIL(...) burn_fail(c, BURN_ERR_INTERNAL, __VA_ARGS__)

static int
vbuf(Ctx *c, const KKernel *k, KRef s, int b)
{
	if (b < 0 || b >= k->nbuf)
		return GFAIL("kir %s: %s %d: bad buf %d", k->name,
		             kgpu_name(k->node[s].kind), s, b);
	return BURN_OK;
}

/* An index (or stride) expression: integer. */
static int
vindex(Ctx *c, const KKernel *k, unsigned char *seen, KRef s, KRef e)
{
	TRY(vexpr(c, k, seen, e, 0));
	if (!dtype_is_int(k->node[e].dtype))
		return GFAIL("kir %s: %s %d: index not integer", k->name,
		             kgpu_name(k->node[s].kind), s);
	return BURN_OK;
}

/* The statement's result variable: dtype dt, not a loop's. */
static int
vresult(Ctx *c, const KKernel *k, const unsigned char *inloop, KRef s, int dt)
{
	const KNode *n = &k->node[s];

	if (n->var < 0 || n->var >= k->nvar)
		return GFAIL("kir %s: %s %d: bad var", k->name, kgpu_name(n->kind), s);
	if (inloop[n->var])
		return GFAIL("kir %s: %s %d: sets the variable %s of an enclosing loop",
		             k->name, kgpu_name(n->kind), s, k->var[n->var].name);
	if (k->var[n->var].dtype != dt)
		return GFAIL("kir %s: %s %d: %s value into %s var %s", k->name,
		             kgpu_name(n->kind), s, dtype_name(dt),
		             dtype_name(k->var[n->var].dtype), k->var[n->var].name);
	return BURN_OK;
}

static int
is_pow2(int64_t v)
{
	return v > 0 && !(v & (v - 1));
}

/* A fragment buffer of role r of shape. */
static int
vfrag(Ctx *c, const KKernel *k, KRef s, int b, int shape, int role)
{
	const KTileInfo *t = ktile_info(shape);
	int dt = role == KTR_C ? DT_F32 : t->ab_dtype;

	TRY(vbuf(c, k, s, b));
	if (k->buf[b].space != KS_FRAG || k->buf[b].dtype != dt ||
	    k->buf[b].count != ktile_elems(shape, role))
		return GFAIL("kir %s: %s %d: b%d is not a %s fragment %s[%lld] of %s",
		             k->name, kgpu_name(k->node[s].kind), s, b,
		             role == KTR_A ? "a" : role == KTR_B ? "b" : "c",
		             dtype_name(dt), (long long)ktile_elems(shape, role), t->name);
	return BURN_OK;
}

/* A memory buffer a GPU statement reads (write 0) or writes. */
static int
vmem(Ctx *c, const KKernel *k, KRef s, int b, int write)
{
	TRY(vbuf(c, k, s, b));
	if (k->buf[b].space == KS_FRAG)
		return GFAIL("kir %s: %s %d: fragment b%d used as memory", k->name,
		             kgpu_name(k->node[s].kind), s, b);
	if (write && k->buf[b].space == KS_GLOBAL && !(k->buf[b].access & KA_WRITE))
		return GFAIL("kir %s: %s %d to read-only b%d", k->name,
		             kgpu_name(k->node[s].kind), s, b);
	return BURN_OK;
}

static int
vgpu(Ctx *c, const KKernel *k, unsigned char *seen, unsigned char *inloop, KRef s)
{
	const KNode *n = &k->node[s];
	const char *nm = kgpu_name(n->kind);
	int dt;

	switch (n->kind) {
	case KS_VCOPY:
	case KS_CPASYNC: {
		int64_t bytes;
		TRY(vmem(c, k, s, n->buf, 1));
		TRY(vmem(c, k, s, n->buf2, 0));
		TRY(vindex(c, k, seen, s, n->a));
		TRY(vindex(c, k, seen, s, n->b));
		dt = k->buf[n->buf].dtype;
		bytes = n->ival * dtype_size(dt);
		if (dt != k->buf[n->buf2].dtype || !is_pow2(n->ival) || bytes > 16 ||
		    n->ival > 16)
			return GFAIL("kir %s: %s %d: %lld lanes of %s from %s (at most 16 "
			             "bytes, a power of two, one dtype)", k->name, nm, s,
			             (long long)n->ival, dtype_name(dt),
			             dtype_name(k->buf[n->buf2].dtype));
		if (n->kind == KS_CPASYNC &&
		    (k->buf[n->buf].space != KS_SHARED || k->buf[n->buf2].space != KS_GLOBAL ||
		     (bytes != 4 && bytes != 8 && bytes != 16)))
			return GFAIL("kir %s: cpasync %d: copies 4, 8 or 16 bytes from "
			             "global to shared memory", k->name, s);
		break;
	}
	case KS_CPWAIT:
	case KS_WGWAIT:
		if (n->ival < 0 || n->ival > 7)
			return GFAIL("kir %s: %s %d: keeps 0 to 7 groups pending", k->name,
			             kgpu_name(n->kind), s);
		break;
	case KS_ATOMIC: {
		TRY(vmem(c, k, s, n->buf, 1));
		TRY(vindex(c, k, seen, s, n->a));
		dt = k->buf[n->buf].dtype;
		if (k->buf[n->buf].space == KS_LOCAL)
			return GFAIL("kir %s: atomic %d on local b%d", k->name, s, n->buf);
		if (n->op < KAT_ADD || n->op > KAT_CAS ||
		    !(dt == DT_I32 || dt == DT_U32 || dt == DT_I64 || dt == DT_U64 ||
		      (n->op != KAT_CAS && (dt == DT_F32 || dt == DT_F64))))
			return GFAIL("kir %s: atomic %d: op %d on %s", k->name, s, n->op,
			             dtype_name(dt));
		TRY(vexpr(c, k, seen, n->b, 0));
		if (k->node[n->b].dtype != dt)
			return GFAIL("kir %s: atomic %d: %s operand on %s", k->name, s,
			             dtype_name(k->node[n->b].dtype), dtype_name(dt));
		if (n->op == KAT_CAS) {
			TRY(vexpr(c, k, seen, n->c, 0));
			if (k->node[n->c].dtype != dt)
				return GFAIL("kir %s: atomic %d: cas operands", k->name, s);
		} else if (n->c) {
			return GFAIL("kir %s: atomic %d: extra operand", k->name, s);
		}
		if (n->var != -1)
			TRY(vresult(c, k, inloop, s, dt));
		break;
	}
	case KS_SHFL:
	case KS_SGRED:
		TRY(vexpr(c, k, seen, n->a, 0));
		dt = k->node[n->a].dtype;
		if (!is_pow2(n->ival) || n->ival < 2 || n->ival > 64)
			return GFAIL("kir %s: %s %d: subgroup width %lld (a power of two, "
			             "2 to 64)", k->name, nm, s, (long long)n->ival);
		if (n->kind == KS_SHFL) {
			if (n->op < KSH_IDX || n->op > KSH_DOWN)
				return GFAIL("kir %s: shfl %d: bad mode", k->name, s);
			TRY(vindex(c, k, seen, s, n->b));
		} else if ((n->op != KO_ADD && n->op != KO_MUL && n->op != KO_MIN &&
		            n->op != KO_MAX) || dt == DT_BOOL) {
			return GFAIL("kir %s: sgreduce %d: %s on %s", k->name, s,
			             kop_name(n->op), dtype_name(dt));
		}
		TRY(vresult(c, k, inloop, s, dt));
		break;
	case KS_WGMMA: {
		const KTileInfo *t = ktile_info((int)n->ival);
		if (!t || !t->wg)
			return GFAIL("kir %s: wgmma %d: not a warpgroup tile shape", k->name, s);
		for (int j = 0; j < t->n / 8; j++)
			TRY(vfrag(c, k, s, n->buf + j, t->sub, KTR_C));
		for (int j = 0; j < 2; j++) {
			int mb = j ? n->buf3 : n->buf2;
			TRY(vmem(c, k, s, mb, 0));
			if (k->buf[mb].space != KS_SHARED || k->buf[mb].dtype != t->ab_dtype)
				return GFAIL("kir %s: wgmma %d: b%d is not shared %s", k->name, s, mb,
				             dtype_name(t->ab_dtype));
		}
		TRY(vindex(c, k, seen, s, n->a));
		TRY(vindex(c, k, seen, s, n->b));
		TRY(vindex(c, k, seen, s, n->c));
		break;
	}
	case KS_TFILL:
	case KS_TLOAD:
	case KS_TMMA:
	case KS_TSTORE:
		if (!ktile_info((int)n->ival) || ktile_info((int)n->ival)->wg)
			return GFAIL("kir %s: %s %d: bad tile shape", k->name, nm, s);
		if (n->kind == KS_TFILL) {
			TRY(vfrag(c, k, s, n->buf, (int)n->ival, KTR_C));
			TRY(vexpr(c, k, seen, n->a, 0));
			if (k->node[n->a].dtype != DT_F32)
				return GFAIL("kir %s: tilefill %d: value not f32", k->name, s);
		} else if (n->kind == KS_TMMA) {
			TRY(vfrag(c, k, s, n->buf, (int)n->ival, KTR_C));
			TRY(vfrag(c, k, s, n->buf2, (int)n->ival, KTR_A));
			TRY(vfrag(c, k, s, n->buf3, (int)n->ival, KTR_B));
		} else {
			int load = n->kind == KS_TLOAD;
			int fb = load ? n->buf : n->buf2, mb = load ? n->buf2 : n->buf;
			int role = load ? n->op : KTR_C;
			if (role < KTR_A || role > KTR_C)
				return GFAIL("kir %s: tileload %d: bad role", k->name, s);
			TRY(vfrag(c, k, s, fb, (int)n->ival, role));
			TRY(vmem(c, k, s, mb, !load));
			if (k->buf[mb].space == KS_LOCAL ||
			    k->buf[mb].dtype != k->buf[fb].dtype)
				return GFAIL("kir %s: %s %d: b%d is not global or shared %s",
				             k->name, nm, s, mb, dtype_name(k->buf[fb].dtype));
			TRY(vindex(c, k, seen, s, n->a));
			TRY(vindex(c, k, seen, s, n->b));
		}
		break;
	default:
		return GFAIL("kir %s: node %d is not a statement", k->name, s);
	}
	return BURN_OK;
}

/* inloop[v]: v is the variable of a loop enclosing s.  The body of a loop
 * never writes its variable (by a set or an inner loop), so every loop
 * with constant bounds ends (a fuzzed kernel once made the interpreter
 * spin). */
static int
vblock(Ctx *c, const KKernel *k, unsigned char *seen, unsigned char *inloop,
       KRef s, int depth, int *count)
{
	for (; s; s = k->node[s].next) {
		const KNode *n;
		if (s < 0 || s >= k->nnode)
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "kir %s: bad statement ref %d", k->name, s);
		if (++*count > k->nnode || depth > 256)
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "kir %s: statement cycle at %d", k->name, s);
		n = &k->node[s];
		switch (n->kind) {
		case KS_FOR:
			if (n->var < 0 || n->var >= k->nvar ||
			    k->var[n->var].dtype != DT_I64)
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "kir %s: for %d: bad loop var", k->name, s);
			TRY(vexpr(c, k, seen, n->a, 0));
			TRY(vexpr(c, k, seen, n->b, 0));
			if (k->node[n->a].dtype != DT_I64 || k->node[n->b].dtype != DT_I64)
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "kir %s: for %d: bounds not i64", k->name, s);
			if (n->var < k->ndim)
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "kir %s: for %d: loops over the dim parameter %s",
				                 k->name, s, k->var[n->var].name);
			if (inloop[n->var])
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "kir %s: for %d: variable %s of an enclosing loop",
				                 k->name, s, k->var[n->var].name);
			inloop[n->var] = 1;
			TRY(vblock(c, k, seen, inloop, n->body, depth + 1, count));
			inloop[n->var] = 0;
			break;
		case KS_IF:
			TRY(vexpr(c, k, seen, n->a, 0));
			if (k->node[n->a].dtype != DT_BOOL)
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "kir %s: if %d: condition not bool", k->name, s);
			TRY(vblock(c, k, seen, inloop, n->body, depth + 1, count));
			TRY(vblock(c, k, seen, inloop, n->orelse, depth + 1, count));
			break;
		case KS_STORE: {
			int bd;
			int64_t i;
			if (n->buf < 0 || n->buf >= k->nbuf)
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "kir %s: store %d: bad buf %d", k->name, s, n->buf);
			TRY(vexpr(c, k, seen, n->a, 0));
			TRY(vexpr(c, k, seen, n->b, 0));
			if (!dtype_is_int(k->node[n->a].dtype))
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "kir %s: store %d: index not integer", k->name, s);
			if (k->buf[n->buf].space == KS_FRAG)
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "kir %s: store %d to fragment b%d (tile ops only)",
				                 k->name, s, n->buf);
			bd = k->buf[n->buf].dtype;
			if (dtype_is_packed(bd))
				bd = dtype_expr(bd);
			else if (dtype_is_storage(bd))   /* f32, or the bits */
				bd = k->node[n->b].dtype == kir_bits_dtype(bd)
				   ? kir_bits_dtype(bd) : DT_F32;
			if (k->node[n->b].dtype != bd)
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "kir %s: store %d: %s value into %s buffer",
				                 k->name, s, dtype_name(k->node[n->b].dtype),
				                 dtype_name(k->buf[n->buf].dtype));
			if (!(k->buf[n->buf].access & KA_WRITE) &&
			    k->buf[n->buf].space == KS_GLOBAL)
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "kir %s: store %d to read-only b%d",
				                 k->name, s, n->buf);
			if (!k->buf[n->buf].ext && kb_is_const_i(k, n->a, &i) &&
			    (i < 0 || i + k->node[n->b].lanes > k->buf[n->buf].count))
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "kir %s: store b%d[%" PRId64 "] out of bounds (%" PRId64 ")",
				                 k->name, n->buf, i, k->buf[n->buf].count);
			break;
		}
		case KS_SET:
			if (n->var < 0 || n->var >= k->nvar)
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "kir %s: set %d: bad var", k->name, s);
			if (n->var < k->ndim)
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "kir %s: set %d: to the dim parameter %s",
				                 k->name, s, k->var[n->var].name);
			if (inloop[n->var])
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "kir %s: set %d: to the variable %s of an "
				                 "enclosing loop", k->name, s, k->var[n->var].name);
			TRY(vexpr(c, k, seen, n->a, 0));
			if (k->node[n->a].dtype != k->var[n->var].dtype)
				return burn_fail(c, BURN_ERR_INTERNAL,
				                 "kir %s: set %d: %s value into %s var %s",
				                 k->name, s, dtype_name(k->node[n->a].dtype),
				                 dtype_name(k->var[n->var].dtype),
				                 k->var[n->var].name);
			break;
		case KS_BARRIER:
			break;
		default:
			TRY(vgpu(c, k, seen, inloop, s));
		}
	}
	return BURN_OK;
}

/* A buffer extent: an i64 expression of constants, dim parameters and
 * + - * / % min max over them, and >> of a count (a packed buffer's bytes,
 * legalize.c) (evaluated once, before the body), on a global buffer. */
static int
vext(Ctx *c, const KKernel *k, unsigned char *seen, KRef e, int b)
{
	const KNode *n;

	if (k->buf[b].space != KS_GLOBAL)
		return burn_fail(c, BURN_ERR_INTERNAL, "kir %s: b%d: only global "
		                 "buffers have run-time extents", k->name, b);
	TRY(vexpr(c, k, seen, e, 0));
	n = &k->node[e];
	if (n->dtype != DT_I64 || n->lanes != 1)
		return burn_fail(c, BURN_ERR_INTERNAL, "kir %s: b%d: extent is not "
		                 "an i64 scalar", k->name, b);
	switch (n->kind) {
	case KE_CONST:
		return BURN_OK;
	case KE_VAR:
		if (n->var >= k->ndim)
			return burn_fail(c, BURN_ERR_INTERNAL, "kir %s: b%d: extent uses "
			                 "variable %s, not a dim parameter", k->name, b,
			                 k->var[n->var].name);
		return BURN_OK;
	case KE_BIN:
		if (n->op == KO_ADD || n->op == KO_SUB || n->op == KO_MUL ||
		    n->op == KO_DIV || n->op == KO_MOD || n->op == KO_MIN ||
		    n->op == KO_MAX || n->op == KO_SHRM) {
			TRY(vext(c, k, seen, n->a, b));
			return vext(c, k, seen, n->b, b);
		}
		break;
	}
	return burn_fail(c, BURN_ERR_INTERNAL, "kir %s: b%d: extent is not "
	                 "arithmetic over dim parameters", k->name, b);
}

int
kir_verify(Ctx *c, const KKernel *k)
{
	int i, rc, count = 0;
	unsigned char *seen;

	if (!k->name || !k->node || k->nnode < 1)
		return burn_fail(c, BURN_ERR_INTERNAL, "kir: empty kernel");
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *b = &k->buf[i];
		if ((!dtype_supported(b->dtype) && !(k->call && dtype_is_string(b->dtype))) ||
		    b->count < 0 ||
		    b->space < KS_GLOBAL || b->space > KS_FRAG ||
		    b->access < 1 || b->access > 3)
			return burn_fail(c, BURN_ERR_INTERNAL,
			                 "kir %s: bad buffer b%d (%s[%" PRId64 "])", k->name,
			                 i, dtype_name(b->dtype), b->count);
	}
	for (i = 0; i < k->nvar; i++)
		if (!dtype_supported(k->var[i].dtype) ||
		    dtype_is_storage(k->var[i].dtype) || dtype_is_packed(k->var[i].dtype))
			return burn_fail(c, BURN_ERR_INTERNAL, "kir %s: bad var %s dtype",
			                 k->name, k->var[i].name);
	/* a call kernel: a body-less call, its arguments global buffers */
	if (k->call) {
		const KCall *cl = k->call;
		if (k->body || !kcall_name(cl->fn) || cl->nbuf < 0 || cl->nbuf > 6 ||
		    cl->narg < 0 || cl->narg > 4 || k->nvar)
			return burn_fail(c, BURN_ERR_INTERNAL, "kir %s: bad call", k->name);
		for (i = 0; i < cl->nbuf; i++)
			if (cl->buf[i] < 0 || cl->buf[i] >= k->nbuf ||
			    k->buf[cl->buf[i]].space != KS_GLOBAL)
				return burn_fail(c, BURN_ERR_INTERNAL, "kir %s: call argument "
				                 "%d is no global buffer", k->name, i);
	}
	if (k->ndim < 0 || k->ndim > k->nvar)
		return burn_fail(c, BURN_ERR_INTERNAL, "kir %s: %d dim parameters of "
		                 "%d variables", k->name, k->ndim, k->nvar);
	for (i = 0; i < k->ndim; i++)
		if (k->var[i].dtype != DT_I64)
			return burn_fail(c, BURN_ERR_INTERNAL, "kir %s: dim parameter %s "
			                 "is not i64", k->name, k->var[i].name);
	seen = calloc((size_t)k->nnode + (size_t)k->nvar, 1);
	if (!seen)
		return burn_fail(c, BURN_ERR_NOMEM, "kir %s: out of memory", k->name);
	for (i = 0, rc = BURN_OK; i < k->nbuf && !rc; i++)
		if (k->buf[i].ext)
			rc = vext(c, k, seen, k->buf[i].ext, i);
	/* dim parameters count as enclosing loops' variables: the body may
	 * neither set them nor loop over them */
	memset(seen + k->nnode, 1, (size_t)k->ndim);
	if (!rc)
		rc = vblock(c, k, seen, seen + k->nnode, k->body, 0, &count);
	free(seen);
	return rc;
}

/* ---- a kernel ready for a renderer ---- */

typedef struct Legal {
	Ctx *c;
	const KKernel *k;
	const char *who;
	const KCaps *caps;
	int simt;
	unsigned char *seen;
} Legal;

#define LFAIL(code, ...) burn_fail(L->c, code, __VA_ARGS__)

/* A value of dtype dt loaded from or stored to a buffer of storage dtype
 * bd: its bits, or f32 where the target converts bd itself. */
static int
storage_ok(const KCaps *caps, int bd, int dt)
{
	return dt == kir_bits_dtype(bd) ||
	       (dt == DT_F32 && ((bd == DT_F16 && caps->f16) ||
	                         (bd == DT_BF16 && caps->bf16)));
}

static int
legal_expr(Legal *L, KRef e)
{
	const KKernel *k = L->k;
	const KNode *n;

	if (e <= 0 || e >= k->nnode || L->seen[e])
		return BURN_OK;   /* kir_verify checked the refs */
	L->seen[e] = 1;
	n = &k->node[e];
	if (n->lanes != 1)
		return LFAIL(BURN_ERR_UNSUPPORTED, "%s %s: node %d: vector expressions",
		             L->who, k->name, e);
	if (dtype_is_storage(n->dtype))
		return LFAIL(BURN_ERR_INTERNAL, "%s %s: node %d: a %s value (not "
		             "legalised)", L->who, k->name, e, dtype_name(n->dtype));
	switch (n->kind) {
	case KE_CONST:
	case KE_VAR:
		return BURN_OK;
	case KE_LOAD: {
		int bd = k->buf[n->buf].dtype;
		if (dtype_is_packed(bd) ||
		    (dtype_is_storage(bd) && !storage_ok(L->caps, bd, n->dtype)))
			return LFAIL(BURN_ERR_INTERNAL, "%s %s: node %d: %s load not "
			             "legalised", L->who, k->name, e, dtype_name(bd));
		if (n->b) {
			TRY(legal_expr(L, n->b));
			TRY(legal_expr(L, n->c));
		}
		return legal_expr(L, n->a);
	}
	case KE_CAST:
		if ((n->ival && !((n->ival == DT_F16 && L->caps->f16) ||
		                  (n->ival == DT_BF16 && L->caps->bf16))) ||
		    (n->op != KC_RAW && !dtype_is_float(n->dtype) &&
		    n->dtype != DT_BOOL && dtype_is_float(k->node[n->a].dtype) &&
		    !L->caps->sat_f2i))
			return LFAIL(BURN_ERR_INTERNAL, "%s %s: node %d: %s cast not "
			             "legalised", L->who, k->name, e,
			             n->ival ? dtype_name((int)n->ival) : "float->int");
		return legal_expr(L, n->a);
	case KE_UN:
	case KE_BIN:
		if (kop_needs_legal(n->op, k->node[n->a].dtype, L->caps))
			return LFAIL(BURN_ERR_INTERNAL, "%s %s: node %d: %s not legalised",
			             L->who, k->name, e, kop_name(n->op));
		TRY(legal_expr(L, n->a));
		return n->kind == KE_BIN ? legal_expr(L, n->b) : BURN_OK;
	case KE_SELECT:
	case KE_FMA:
		TRY(legal_expr(L, n->a));
		TRY(legal_expr(L, n->b));
		return legal_expr(L, n->c);
	case KE_SPECIAL:
		if (!L->simt)
			return LFAIL(BURN_ERR_UNSUPPORTED, "%s %s: hardware indices",
			             L->who, k->name);
		return BURN_OK;
	}
	return BURN_OK;
}

static int
legal_block(Legal *L, KRef s)
{
	const KKernel *k = L->k;

	for (; s > 0 && s < k->nnode; s = k->node[s].next) {
		const KNode *n = &k->node[s];
		switch (n->kind) {
		case KS_FOR:
			if ((n->flags & ~(KF_PARALLEL | KF_UNROLL)) && !L->simt)
				return LFAIL(BURN_ERR_UNSUPPORTED, "%s %s: thread-mapped "
				             "loop", L->who, k->name);
			TRY(legal_expr(L, n->a));
			TRY(legal_expr(L, n->b));
			TRY(legal_block(L, n->body));
			break;
		case KS_IF:
			TRY(legal_expr(L, n->a));
			TRY(legal_block(L, n->body));
			TRY(legal_block(L, n->orelse));
			break;
		case KS_STORE: {
			int bd = k->buf[n->buf].dtype;
			TRY(legal_expr(L, n->a));
			TRY(legal_expr(L, n->b));
			if (dtype_is_packed(bd) || (dtype_is_storage(bd) &&
			    !storage_ok(L->caps, bd, k->node[n->b].dtype)))
				return LFAIL(BURN_ERR_INTERNAL, "%s %s: store %d: %s store "
				             "not legalised", L->who, k->name, s,
				             dtype_name(bd));
			break;
		}
		case KS_SET:
			TRY(legal_expr(L, n->a));
			break;
		case KS_BARRIER:
			break;
		default:
			if (!L->simt)
				return LFAIL(BURN_ERR_UNSUPPORTED, "%s %s: the GPU statement "
				             "%s (the target schedules none)", L->who,
				             k->name, kgpu_name(n->kind));
		}
	}
	return BURN_OK;
}

int
kir_check_legal(Ctx *c, const KKernel *k, const char *who, const KCaps *caps,
                int simt)
{
	Legal L = { c, k, who, caps, simt, NULL };
	int rc;

	TRY(kir_verify(c, k));
	/* the C renderer prints call kernels before asking (render_c.c) */
	if (k->call)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s %s: %s is a call of the "
		                 "string routines (runtime/strings.inc), which only the "
		                 "c target runs", who, k->name, k->ops);
	for (int i = 0; i < k->nbuf && !simt; i++)
		if (k->buf[i].space == KS_SHARED || k->buf[i].space == KS_FRAG)
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s %s: %s buffers",
			                 who, k->name, k->buf[i].space == KS_SHARED ?
			                 "shared" : "fragment");
	if (!(L.seen = calloc((size_t)k->nnode, 1)))
		return burn_fail(c, BURN_ERR_NOMEM, "%s %s: out of memory", who, k->name);
	rc = legal_block(&L, k->body);
	free(L.seen);
	return rc;
}

const char *
kcall_name(int fn)
{
	static const char *const name[KCALL_COUNT_] = {
		[KCALL_EQUAL] = "bs_equal", [KCALL_CONCAT] = "bs_concat",
		[KCALL_NORMALIZE] = "bs_normalize", [KCALL_LOOKUP] = "bs_lookup",
		[KCALL_REGEX] = "bs_regex",
	};

	return fn > 0 && fn < KCALL_COUNT_ ? name[fn] : NULL;
}

int64_t
kkernel_local_bytes(const KKernel *k)
{
	int64_t n = 0;

	for (int b = 0; b < k->nbuf; b++) {
		int es = dtype_size(k->buf[b].dtype);
		if (k->buf[b].space == KS_LOCAL)
			n += k->buf[b].count * (es > 0 ? es : 1);
	}
	return n;
}

/* ---- appending to a finished kernel ---------------------------------------- */

KRef
kir_push(Arena *a, KKernel *k, const KNode *n)
{
	if (k->nnode == k->capnode) {
		int want = 2 * k->capnode + 8;
		KNode *nn = want > (1 << 28) ? NULL
		          : arena_grow(a, k->node, sizeof *k->node, (size_t)k->nnode,
		                       (size_t)want);
		if (!nn)
			return 0;
		k->node = nn;
		k->capnode = want;
	}
	k->node[k->nnode] = *n;
	return k->nnode++;
}

KRef
kir_push_i64(Arena *a, KKernel *k, int kind, int op, KRef x, KRef y, int var, int64_t v)
{
	KNode n;

	memset(&n, 0, sizeof n);
	n.kind = kind;
	n.op = op;
	n.dtype = DT_I64;
	n.lanes = 1;
	n.a = x;
	n.b = y;
	n.var = var;
	n.ival = v;
	return kir_push(a, k, &n);
}

void
kir_relink(KKernel *k, const KRef *map, int n0)
{
	for (int i = 1; i < n0; i++) {
		KNode *n;
		if (!map[i] || k->node[i].kind < KS_FOR)
			continue;
		n = &k->node[map[i]];
		n->next = n->next > 0 && n->next < n0 ? map[n->next] : 0;
		n->body = n->body > 0 && n->body < n0 ? map[n->body] : 0;
		n->orelse = n->orelse > 0 && n->orelse < n0 ? map[n->orelse] : 0;
	}
}

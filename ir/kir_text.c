/*
 * kir_text.c - the text form of the kernel IR: kir_print(), kprog_print()
 * and kprog_parse().  The printed form is what `burncc --emit=kernels`
 * shows and what `burncc kir FILE` reads; print -> parse -> print gives
 * the same text, and the parsed kernel is the printed one (same buffers,
 * variables with their hints, statements, expression trees, constants to
 * the bit), except that subexpressions shared between statements come back
 * as one copy per statement.  Example:
 *
 *   alias v7 = v5
 *
 *   kernel 0 k_fused: Exp(e) + Add(a)
 *     buf b0: f32[6] global v3 read
 *     buf b1: f32[6] global v7 write
 *     var i: i64
 *     var acc.1: f32
 *     var acc.2: f32
 *   {
 *     for i in 0..6 parallel {
 *       let t0 = load b0[i]
 *       b1[i] = add(exp(t0), t0)
 *     }
 *   }
 *
 * The grammar is written above the parser, in the second half of this file.
 *
 * Memory: printing allocates scratch with malloc and frees it; a kernel
 * printed without scratch (out of memory) prints every expression inline
 * and every variable as hint.N, which parses back the same.  Parsing puts
 * the kernels in p->arena and its own scratch in malloc'd tables freed
 * before it returns.
 */
#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "kir.h"

static const char *const space_name[] = { "global", "local", "shared", "frag" };
static const char *const shfl_name[] = { "?", "idx", "xor", "down" };
static const char *const atomic_name[] = { "?", "add", "max", "min", "cas" };
static const char *const role_name[] = { "?", "a", "b", "c" };
static const char *const access_name[] = { "none", "read", "write", "rw" };
/* KLoopFlag bit i prints as flag_name[i]; KSpecial k as flag_name[k]. */
static const char *const flag_name[] = { "parallel", "thread.x", "thread.y",
	"thread.z", "block.x", "block.y", "block.z", "unroll" };

/* The grammar's words.  A variable whose hint is one of these, or looks
 * like a buffer or a let (b3, t3), or is not an identifier, or is shared
 * with another variable, prints as hint.N (N its index). */
static const char *const keyword[] = {
	"alias", "barrier", "block", "buf", "call", "dim", "else", "false", "fma", "for",
	"global",
	"if", "in", "inf", "kernel", "let", "load", "loadbits", "local", "nan",
	"none",
	"parallel", "read", "rw", "select", "shared", "thread", "true", "unroll",
	"var", "write", "frag",
#define KGPU(id, name, coll) name,
#include "kops.def"
#undef KGPU
	NULL
};

static int
isidstart(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

static int
isidchar(int ch)
{
	return isidstart(ch) || (ch >= '0' && ch <= '9');
}

static int
is_ident(const char *s)
{
	if (!s || !isidstart((unsigned char)*s))
		return 0;
	while (*++s)
		if (!isidchar((unsigned char)*s))
			return 0;
	return 1;
}

static int
is_keyword(const char *s, size_t n)
{
	int i;

	for (i = 0; keyword[i]; i++)
		if (strlen(keyword[i]) == n && memcmp(keyword[i], s, n) == 0)
			return 1;
	return 0;
}

/* b3, t3: the names of buffers and lets. */
static int
is_numbered(const char *s, size_t n, char prefix)
{
	size_t i;

	if (n < 2 || s[0] != prefix)
		return 0;
	for (i = 1; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

static int
reserved_var(const char *s, size_t n)
{
	return is_keyword(s, n) || is_numbered(s, n, 'b') || is_numbered(s, n, 't');
}

static int
is_intlike(int dt)
{
	return dtype_is_int(dt) || dt == DT_BOOL;
}

/* ==== printing ========================================================== */

/* Printer state.  Subexpressions used more than once by a statement print
 * once, before it, as `let tN = ...` (N counts the kernel's lets); let[e]
 * is N + 1 while stamp[e] == sid.  plain[v]: variable v prints as its hint
 * alone.  let == NULL: everything inline; plain == NULL: every variable
 * as hint.N. */
typedef struct Printer {
	FILE *f;
	const KKernel *k;
	int *stamp, *cnt, *let;
	unsigned char *plain;
	int sid, nlet;
	KRef defining;
} Printer;

static void
pstring(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\x%02x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void
pvar(Printer *P, int v)
{
	const KKernel *k = P->k;
	const char *h;

	if (v < 0 || v >= k->nvar) {
		fprintf(P->f, "?var%d", v);
		return;
	}
	h = k->var[v].name ? k->var[v].name : "";
	if (P->plain && P->plain[v]) {
		fputs(h, P->f);
		return;
	}
	if (is_ident(h))
		fputs(h, P->f);
	else
		pstring(P->f, h);
	fprintf(P->f, ".%d", v);
}

typedef struct VarKey {
	const char *name;
	int v;
} VarKey;

static int
varkey_cmp(const void *a, const void *b)
{
	const VarKey *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	return r ? r : x->v - y->v;
}

/* plain[v] for every variable of k: its hint is an identifier that is no
 * word of the grammar and no other variable's hint.  NULL if out of memory. */
static unsigned char *
plain_vars(const KKernel *k)
{
	VarKey *key = malloc(((size_t)k->nvar + 1) * sizeof *key);
	unsigned char *plain = calloc((size_t)k->nvar + 1, 1);
	int i;

	if (!key || !plain) {
		free(key);
		free(plain);
		return NULL;
	}
	for (i = 0; i < k->nvar; i++) {
		key[i].name = k->var[i].name ? k->var[i].name : "";
		key[i].v = i;
	}
	qsort(key, (size_t)k->nvar, sizeof *key, varkey_cmp);
	for (i = 0; i < k->nvar; i++) {
		const char *s = key[i].name;
		int dup = (i > 0 && strcmp(key[i - 1].name, s) == 0) ||
		          (i + 1 < k->nvar && strcmp(key[i + 1].name, s) == 0);
		plain[key[i].v] = !dup && is_ident(s) && !reserved_var(s, strlen(s));
	}
	free(key);
	return plain;
}

/* A float constant that reads back to the same bits: %.9g is exact for a
 * float32, %.17g for a double; NaN keeps its payload, inf its sign, and
 * both name their dtype since they carry no suffix. */
static void
pfloat(FILE *f, int dt, double x)
{
	char buf[48];

	if (isnan(x)) {
		uint64_t bits;
		memcpy(&bits, &x, sizeof bits);
		if (bits == UINT64_C(0x7ff8000000000000))
			fprintf(f, "nan:%s", dtype_name(dt));
		else
			fprintf(f, "nan(0x%016" PRIx64 "):%s", bits, dtype_name(dt));
		return;
	}
	if (isinf(x)) {
		fprintf(f, "%sinf:%s", x < 0 ? "-" : "", dtype_name(dt));
		return;
	}
	snprintf(buf, sizeof buf, dt == DT_F32 ? "%.9g" : "%.17g", x);
	fprintf(f, "%s%s%s", buf, strpbrk(buf, ".e") ? "" : ".0",
	        dt == DT_F32 ? "f" : "");
}

/* Index-style operators print infix on integers; everything else as
 * name(args).  A vector (lanes > 1) is followed by @lanes. */
static void
pexpr(Printer *P, KRef e, int prec)
{
	FILE *f = P->f;
	const KKernel *k = P->k;
	const KNode *n;

	if (e <= 0 || e >= k->nnode) {
		fprintf(f, "<bad %d>", e);
		return;
	}
	n = &k->node[e];
	if (P->let && P->stamp[e] == P->sid && P->let[e] && e != P->defining) {
		fprintf(f, "t%d", P->let[e] - 1);
		return;
	}
	switch (n->kind) {
	case KE_CONST:
		if (dtype_is_float(n->dtype))
			pfloat(f, n->dtype, n->fval);
		else if (n->dtype == DT_BOOL)
			fprintf(f, n->ival ? "true" : "false");
		else if (n->dtype == DT_U64)
			fprintf(f, "%" PRIu64 "u", (uint64_t)n->ival);
		else if (n->dtype == DT_I64)
			fprintf(f, "%" PRId64, n->ival);
		else
			fprintf(f, "%" PRId64 ":%s", n->ival, dtype_name(n->dtype));
		break;
	case KE_VAR:
		pvar(P, n->var);
		break;
	case KE_LOAD:
		/* a load of a storage buffer's bits (legalised) */
		fprintf(f, "%s b%d[", n->dtype == kir_bits_dtype(P->k->buf[n->buf].dtype)
		        ? "loadbits" : "load", n->buf);
		pexpr(P, n->a, 0);
		fprintf(f, "]");
		if (n->b) {   /* guarded: guard(cond, default) */
			fprintf(f, " guard(");
			pexpr(P, n->b, 0);
			fprintf(f, ", ");
			pexpr(P, n->c, 0);
			fprintf(f, ")");
		}
		break;
	case KE_UN:
		fprintf(f, "%s(", kop_name(n->op));
		pexpr(P, n->a, 0);
		fprintf(f, ")");
		break;
	case KE_BIN:
		if (is_intlike(n->dtype) && (n->op == KO_ADD || n->op == KO_SUB ||
		    n->op == KO_MUL || n->op == KO_DIV || n->op == KO_MOD)) {
			int p = (n->op == KO_ADD || n->op == KO_SUB) ? 1 : 2;
			int paren = p < prec || n->lanes > 1;
			const char *s = n->op == KO_ADD ? " + " : n->op == KO_SUB ? " - "
			              : n->op == KO_MUL ? "*" : n->op == KO_DIV ? "/" : "%";
			if (paren)
				fprintf(f, "(");
			pexpr(P, n->a, p);
			fprintf(f, "%s", s);
			pexpr(P, n->b, p + 1);
			if (paren)
				fprintf(f, ")");
			break;
		}
		fprintf(f, "%s(", kop_name(n->op));
		pexpr(P, n->a, 0);
		fprintf(f, ", ");
		pexpr(P, n->b, 0);
		fprintf(f, ")");
		break;
	case KE_SELECT:
	case KE_FMA:
		fprintf(f, n->kind == KE_FMA ? "fma(" : "select(");
		pexpr(P, n->a, 0);
		fprintf(f, ", ");
		pexpr(P, n->b, 0);
		fprintf(f, ", ");
		pexpr(P, n->c, 0);
		fprintf(f, ")");
		break;
	case KE_CAST:
		/* a rounding cast names its storage dtype; .how its KCastRound */
		fprintf(f, n->op ? "%s.%d(" : "%s(",
		        dtype_name(n->ival ? (int)n->ival : n->dtype), n->op);
		pexpr(P, n->a, 0);
		fprintf(f, ")");
		break;
	case KE_SPECIAL:
		fprintf(f, "%s", n->op >= KX_THREAD_X && n->op <= KX_BLOCK_Z
		                 ? flag_name[n->op] : "?special");
		break;
	default:
		fprintf(f, "<stmt %d>", e);
	}
	if (n->lanes > 1)
		fprintf(f, "@%d", n->lanes);
}

/* Count the uses of each node reachable from e within one statement
 * (operands of a node are visited once, on its first use). */
static void
pcount(Printer *P, KRef e)
{
	const KNode *n;

	if (e <= 0 || e >= P->k->nnode)
		return;
	if (P->stamp[e] != P->sid) {
		P->stamp[e] = P->sid;
		P->cnt[e] = 0;
		P->let[e] = 0;
	}
	if (P->cnt[e]++)
		return;
	n = &P->k->node[e];
	if (n->kind < KE_CONST || n->kind > KE_SPECIAL)
		return;
	pcount(P, n->a);
	if (n->kind == KE_BIN || n->kind == KE_SELECT || n->kind == KE_FMA ||
	    (n->kind == KE_LOAD && n->b))
		pcount(P, n->b);
	if (n->kind == KE_SELECT || n->kind == KE_FMA || (n->kind == KE_LOAD && n->b))
		pcount(P, n->c);
}

/* Print `let tN = expr` for the shared nodes under e, operands first. */
static void
pshared(Printer *P, KRef e, int ind)
{
	const KNode *n;

	if (e <= 0 || e >= P->k->nnode || P->stamp[e] != P->sid || P->cnt[e] < 0)
		return;
	n = &P->k->node[e];
	if (n->kind < KE_CONST || n->kind > KE_SPECIAL)
		return;
	P->cnt[e] = -P->cnt[e];   /* visited */
	pshared(P, n->a, ind);
	if (n->kind == KE_BIN || n->kind == KE_SELECT || n->kind == KE_FMA ||
	    (n->kind == KE_LOAD && n->b))
		pshared(P, n->b, ind);
	if (n->kind == KE_SELECT || n->kind == KE_FMA || (n->kind == KE_LOAD && n->b))
		pshared(P, n->c, ind);
	if (-P->cnt[e] > 1 && n->kind != KE_CONST && n->kind != KE_VAR) {
		fprintf(P->f, "%*slet t%d = ", 2 * ind, "", P->nlet);
		P->defining = e;
		pexpr(P, e, 0);
		P->defining = 0;
		fprintf(P->f, "\n");
		P->let[e] = ++P->nlet;
	}
}

/* Name the subexpressions statement n shares. */
static void
pstmt_begin(Printer *P, const KNode *n, int ind)
{
	if (!P->let)
		return;
	P->sid++;
	pcount(P, n->a);
	if (n->kind == KS_FOR || n->kind == KS_STORE || kgpu_name(n->kind))
		pcount(P, n->b);
	if (kgpu_name(n->kind))
		pcount(P, n->c);
	pshared(P, n->a, ind);
	if (n->kind == KS_FOR || n->kind == KS_STORE || kgpu_name(n->kind))
		pshared(P, n->b, ind);
	if (kgpu_name(n->kind))
		pshared(P, n->c, ind);
}

/* A GPU statement (kops.def; the forms are listed there). */
static void
pgpu(Printer *P, const KNode *n)
{
	FILE *f = P->f;
	const KTileInfo *t = ktile_info((int)n->ival);
	const char *tn = t ? t->name : "?";

	if ((n->kind == KS_SHFL || n->kind == KS_SGRED || n->kind == KS_ATOMIC) &&
	    n->var >= 0) {
		pvar(P, n->var);
		fprintf(f, " = ");
	}
	fputs(kgpu_name(n->kind), f);
	switch (n->kind) {
	case KS_CPWAIT:
	case KS_WGWAIT:
		if (n->ival)
			fprintf(f, ".%" PRId64, n->ival);
		break;
	case KS_VCOPY:
	case KS_CPASYNC:
		fprintf(f, ".%" PRId64 " b%d[", n->ival, n->buf);
		pexpr(P, n->a, 0);
		fprintf(f, "] = b%d[", n->buf2);
		pexpr(P, n->b, 0);
		fprintf(f, "]");
		break;
	case KS_ATOMIC:
		fprintf(f, ".%s b%d[", atomic_name[n->op >= KAT_ADD && n->op <= KAT_CAS
		                                   ? n->op : 0], n->buf);
		pexpr(P, n->a, 0);
		fprintf(f, "], ");
		pexpr(P, n->b, 0);
		if (n->op == KAT_CAS) {
			fprintf(f, ", ");
			pexpr(P, n->c, 0);
		}
		break;
	case KS_SHFL:
		fprintf(f, ".%s.w%" PRId64 " ", shfl_name[n->op >= KSH_IDX &&
		        n->op <= KSH_DOWN ? n->op : 0], n->ival);
		pexpr(P, n->a, 0);
		fprintf(f, ", ");
		pexpr(P, n->b, 0);
		break;
	case KS_SGRED:
		fprintf(f, ".%s.w%" PRId64 " ", kop_name(n->op), n->ival);
		pexpr(P, n->a, 0);
		break;
	case KS_TFILL:
		fprintf(f, ".%s b%d = ", tn, n->buf);
		pexpr(P, n->a, 0);
		break;
	case KS_TLOAD:
		fprintf(f, ".%s.%s b%d = b%d[", tn, role_name[n->op >= KTR_A &&
		        n->op <= KTR_C ? n->op : 0], n->buf, n->buf2);
		pexpr(P, n->a, 0);
		fprintf(f, "], ");
		pexpr(P, n->b, 0);
		break;
	case KS_TMMA:
		fprintf(f, ".%s b%d += b%d * b%d", tn, n->buf, n->buf2, n->buf3);
		break;
	case KS_TSTORE:
		fprintf(f, ".%s b%d[", tn, n->buf);
		pexpr(P, n->a, 0);
		fprintf(f, "], ");
		pexpr(P, n->b, 0);
		fprintf(f, " = b%d", n->buf2);
		break;
	case KS_WGMMA:
		fprintf(f, ".%s b%d += b%d[", tn, n->buf, n->buf2);
		pexpr(P, n->a, 0);
		fprintf(f, "] * b%d[", n->buf3);
		pexpr(P, n->b, 0);
		fprintf(f, "], ");
		pexpr(P, n->c, 0);
		break;
	}
	fprintf(f, "\n");
}

static void
pblock(Printer *P, KRef s, int ind)
{
	FILE *f = P->f;
	const KKernel *k = P->k;
	int guard = 0;

	for (; s > 0 && s < k->nnode && guard < k->nnode; s = k->node[s].next,
	     guard++) {
		const KNode *n = &k->node[s];
		if (n->kind != KS_BARRIER)
			pstmt_begin(P, n, ind);
		fprintf(f, "%*s", 2 * ind, "");
		switch (n->kind) {
		case KS_FOR:
			fprintf(f, "for ");
			pvar(P, n->var);
			fprintf(f, " in ");
			pexpr(P, n->a, 0);
			fprintf(f, "..");
			pexpr(P, n->b, 0);
			for (int i = 0; i < 8; i++)
				if (n->flags & (1 << i))
					fprintf(f, " %s", flag_name[i]);
			fprintf(f, " {\n");
			pblock(P, n->body, ind + 1);
			fprintf(f, "%*s}\n", 2 * ind, "");
			break;
		case KS_IF:
			fprintf(f, "if ");
			pexpr(P, n->a, 0);
			fprintf(f, " {\n");
			pblock(P, n->body, ind + 1);
			if (n->orelse) {
				fprintf(f, "%*s} else {\n", 2 * ind, "");
				pblock(P, n->orelse, ind + 1);
			}
			fprintf(f, "%*s}\n", 2 * ind, "");
			break;
		case KS_STORE:
			fprintf(f, "b%d[", n->buf);
			pexpr(P, n->a, 0);
			fprintf(f, "] = ");
			pexpr(P, n->b, 0);
			fprintf(f, "\n");
			break;
		case KS_SET:
			pvar(P, n->var);
			fprintf(f, " = ");
			pexpr(P, n->a, 0);
			fprintf(f, "\n");
			break;
		case KS_BARRIER:
			fprintf(f, "barrier\n");
			break;
		default:
			if (kgpu_name(n->kind))
				pgpu(P, n);
			else
				fprintf(f, "<expr %d as statement>\n", s);
		}
	}
}

/* The graph ops a kernel implements run to the end of its header line:
 * backslashes and control characters are escaped. */
static void
pops(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '\\')
			fputs("\\\\", f);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch == '\r')
			fputs("\\r", f);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\x%02x", ch);
		else
			fputc(ch, f);
	}
}

static void
print_kernel(FILE *f, const KKernel *k, int index)
{
	Printer P;
	int i;

	fprintf(f, "kernel ");
	if (index >= 0)
		fprintf(f, "%d ", index);
	fputs(k->name ? k->name : "?", f);
	if (k->ops && *k->ops) {
		fprintf(f, ": ");
		pops(f, k->ops);
	}
	fprintf(f, "\n");
	if (k->grid)   /* the GPU schedule's launch, for reading only */
		fprintf(f, "  # grid: %s\n", k->grid);
	if (k->nstep) {
		char buf[4096];
		KSteps st;
		kkernel_steps(k, &st);
		ksteps_format(&st, buf, sizeof buf);
		fprintf(f, "  schedule: %s\n", buf);
	}
	memset(&P, 0, sizeof P);
	P.f = f;
	P.k = k;
	P.plain = plain_vars(k);
	for (i = 0; i < k->ndim && i < k->nvar; i++) {
		fprintf(f, "  dim ");
		pvar(&P, i);
		fprintf(f, "\n");
	}
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *b = &k->buf[i];
		fprintf(f, "  buf b%d: %s[", i, dtype_name(b->dtype));
		if (b->ext)
			pexpr(&P, b->ext, 0);
		else
			fprintf(f, "%" PRId64, b->count);
		fprintf(f, "] %s", b->space >= 0 && b->space <= 3 ? space_name[b->space]
		                                                  : "?");
		if (b->space == KS_GLOBAL)
			fprintf(f, " v%d", b->value);
		fprintf(f, " %s\n", access_name[b->access & 3]);
	}
	for (i = k->ndim > 0 ? k->ndim : 0; i < k->nvar; i++) {
		fprintf(f, "  var ");
		pvar(&P, i);
		fprintf(f, ": %s\n", dtype_name(k->var[i].dtype));
	}
	if (k->call) {   /* a call kernel (kir.h): its body is empty */
		const KCall *cl = k->call;
		fprintf(f, "  call %s(", kcall_name(cl->fn) ? kcall_name(cl->fn) : "?");
		for (i = 0; i < cl->nbuf; i++)
			fprintf(f, "%sb%d", i ? ", " : "", cl->buf[i]);
		fprintf(f, ")");
		for (i = 0; i < cl->narg; i++)
			fprintf(f, " %" PRId64, cl->arg[i]);
		fprintf(f, "\n");
	}
	fprintf(f, "{\n");
	P.stamp = calloc((size_t)k->nnode + 1, sizeof *P.stamp);
	P.cnt = calloc((size_t)k->nnode + 1, sizeof *P.cnt);
	P.let = calloc((size_t)k->nnode + 1, sizeof *P.let);
	if (!P.stamp || !P.cnt || !P.let) {
		free(P.let);
		P.let = NULL;   /* out of memory: print inline */
	}
	pblock(&P, k->body, 1);
	free(P.stamp);
	free(P.cnt);
	free(P.let);
	free(P.plain);
	fprintf(f, "}\n");
}

void
kir_print(FILE *f, const KKernel *k)
{
	print_kernel(f, k, -1);
}

void
kprog_print(FILE *f, const KProgram *p)
{
	int v, any = 0;

	for (v = 0; v < p->nalias; v++)
		if (p->alias[v] != v) {
			if (p->alias_off && p->alias_off[v])
				fprintf(f, "alias v%d = v%d + %lld\n", v, p->alias[v],
				        (long long)p->alias_off[v]);
			else
				fprintf(f, "alias v%d = v%d\n", v, p->alias[v]);
			any = 1;
		}
	if (any)
		fprintf(f, "\n");
	for (v = 0; v < p->nkernel; v++) {
		print_kernel(f, p->kernel[v], v);
		fprintf(f, "\n");
	}
}

/* ==== parsing ============================================================
 *
 * Grammar ('#' starts a comment to the end of the line; a kernel header
 * is one line; elsewhere line breaks are spaces):
 *
 *   program = {alias | kernel}
 *   alias   = 'alias' VAL '=' VAL [ '+' INT ]   value v lives in w's memory (INT bytes in)
 *   kernel  = 'kernel' [INT] NAME [':' OPS] [sched] {dim} {buf} {var}
 *             [call] '{' block '}'
 *             INT, when given, is the kernel's index in the program;
 *             OPS is the rest of the line (\\ \n \t \r \xHH escapes)
 *   sched   = 'schedule' ':' STEPS       the kernel's schedule steps
 *             (KSteps, ir/kir.h), the rest of the line
 *   dim     = 'dim' VARNAME              an i64 dim parameter (kir.h)
 *   buf     = 'buf' BUF ':' DTYPE '[' (INT | expr) ']' space ACCESS
 *             BUF is b0, b1, ... in order; an expr (over the dims) is
 *             an extent known at run time
 *   space   = 'global' VAL | 'local' | 'shared' | 'frag'
 *   ACCESS  = 'read' | 'write' | 'rw' | 'none'
 *   call    = 'call' NAME '(' BUF {',' BUF} ')' {INT}
 *             a call kernel (kir.h, KCall): NAME a routine of
 *             runtime/strings.inc, its buffers, then its integers; the
 *             kernel's block is empty
 *   var     = 'var' VARNAME ':' DTYPE
 *   VARNAME = IDENT                      a hint no other variable has
 *           | (IDENT | STR) '.' INT      any hint; INT is the var's index
 *   block   = {stmt}
 *   stmt    = {let} (for | if | store | set | 'barrier' | gpu)
 *   gpu     = the GPU statements of ir/kops.def, e.g.
 *             'vcopy' '.' INT store-like, VARNAME '=' 'shfl' '.' MODE
 *             '.' 'w' INT expr ',' expr, 'tilemma' '.' SHAPE BUF '+=' BUF
 *             '*' BUF (all forms are listed in kops.def)
 *   let     = 'let' TMP '=' expr         TMP = t0, t1, ... increasing;
 *                                        visible in the next statement's
 *                                        own expressions only
 *   for     = 'for' VARNAME 'in' expr '..' expr {flag} '{' block '}'
 *             (the body neither sets VARNAME nor loops over it again)
 *   flag    = 'parallel' | ('thread' | 'block') '.' ('x' | 'y' | 'z')
 *   if      = 'if' expr '{' block '}' ['else' '{' block '}']
 *   store   = BUF '[' expr ']' '=' expr
 *   set     = VARNAME '=' expr
 *   expr    = term {('+' | '-') term}    integer ops, left-associative
 *   term    = vec {('*' | '/' | '%') vec}
 *   vec     = primary ['@' INT]          a vector of INT lanes
 *   primary = '(' expr ')' | const | TMP | VARNAME
 *           | 'load' BUF '[' expr ']'
 *           | 'loadbits' BUF '[' expr ']'   a storage buffer's bit patterns
 *           | 'select' '(' expr ',' expr ',' expr ')'
 *           | 'fma' '(' expr ',' expr ',' expr ')'   a*b + c, one rounding
 *           | OPNAME '(' expr [',' expr] ')'   kop_name(); unary or binary
 *           | DTYPE ['.' INT] '(' expr ')'     cast; .INT: KCastRound bits
 *                                              of a rounding cast
 *           | ('thread' | 'block') '.' ('x' | 'y' | 'z')
 *   const   = ['-'] INT [':' DTYPE]      i64 unless typed
 *           | INT 'u'                    u64
 *           | ['-'] FLOAT ['f']          f64, or f32 with the f
 *           | ['-'] 'inf' ':' DTYPE | 'nan' ['(' INT ')'] ':' DTYPE
 *             (nan's INT: the double's bits)
 *           | 'true' | 'false'
 *   VAL     = v0, v1, ...                a graph value
 *   INT     = decimal or 0x hex          FLOAT = C decimal with . or e
 *   STR     = '"' ... '"' with \\ \" \xHH escapes
 *
 * Each expression node is checked as it is made (kir_verify_expr), each
 * statement's types when it is complete, and the whole kernel by
 * kir_verify at its end; a fault is reported at the token where it starts.
 * The text is split into tokens first (so the parser can look ahead), then
 * parsed by recursive descent.  Expression trees deeper than
 * KT_MAX_DEPTH and blocks nested deeper than KT_MAX_NEST are refused,
 * so that the recursive printer, verifier and interpreter stay within
 * their stacks.
 */

#define KT_MAX_DEPTH 4000
#define KT_MAX_NEST 256

enum { TK_EOF, TK_ID, TK_INT, TK_FLT, TK_STR, TK_OPS, TK_PUNCT };
enum { P_DOTS = 256 };   /* TK_PUNCT ".." */

typedef struct Tok {
	int kind;
	int ch;           /* TK_PUNCT: the character or P_DOTS; TK_INT, TK_FLT:
	                     the suffix 'u', 'f' or 0 */
	const char *p;    /* first character in the text */
	int len;
	uint64_t u;       /* TK_INT: the value */
	size_t s;         /* TK_STR, TK_OPS: offset of the unescaped, NUL-
	                     terminated string in P.sbuf */
} Tok;

typedef struct Let {
	int num;          /* tNUM */
	KRef e;
} Let;

typedef struct P {
	Ctx *c;
	const char *text, *end;
	Tok *tok;
	int ntok, captok, i;
	char *sbuf;
	size_t slen, scap;
	KProgram *prog;
	/* the kernel being parsed, and per-node scratch of capacity ncap */
	KKernel *k;
	unsigned char *seen;    /* nodes checked by kir_verify_expr */
	int *depth;             /* expression tree depth */
	const char **pos;       /* where each node starts in the text */
	int ncap;
	int *vtab, vcap;        /* hash of plain variable names -> index + 1 */
	Let *let;
	int nlet, capl, lastlet;
	int nest;               /* expressions open in the recursion */
	unsigned char *inloop;  /* per variable: an enclosing loop's */
} P;

/* ---- errors ---- */

/* "FILE:LINE:COL: message", then the line and a caret under column COL. */
static int
verr_at(P *ps, int code, const char *at, const char *fmt, va_list ap)
{
	const char *bol = ps->text, *eol, *q, *file;
	const char *save_file = ps->c->file, *save_node = ps->c->node,
	           *save_op = ps->c->op;
	char msg[512], line[168], caret[168];
	int ln = 1, col, n = 0, skip = 0;

	if (!at || at < ps->text || at > ps->end)
		at = ps->end;
	for (q = ps->text; q < at; q++)
		if (*q == '\n') {
			ln++;
			bol = q + 1;
		}
	for (eol = at; eol < ps->end && *eol != '\n'; eol++)
		;
	col = (int)(at - bol) + 1;
	/* long lines: show the 120 characters before the fault and what fits */
	if (at - bol > 120)
		skip = (int)(at - bol) - 120;
	for (q = bol + skip; q < eol && n < (int)sizeof line - 1; q++, n++) {
		unsigned char ch = (unsigned char)*q;
		line[n] = ch == '\t' ? '\t' : (ch < 0x20 || ch >= 0x7f) ? '?' : ch;
		if (q < at)
			caret[n] = ch == '\t' ? '\t' : ' ';
	}
	line[n] = 0;
	n = (int)(at - bol) - skip;
	if (n > (int)sizeof caret - 2)
		n = (int)sizeof caret - 2;
	caret[n] = '^';
	caret[n + 1] = 0;
	vsnprintf(msg, sizeof msg, fmt, ap);
	file = save_file ? save_file : "<text>";
	ps->c->file = ps->c->node = ps->c->op = NULL;
	if (ps->c->code == BURN_OK) {
		/* burn_fail keeps messages on one line; the source line and the
		 * caret follow it */
		size_t n0;
		burn_fail(ps->c, code, "%s:%d:%d: %s", file, ln, col, msg);
		n0 = strlen(ps->c->msg);
		snprintf(ps->c->msg + n0, sizeof ps->c->msg - n0, "\n%s\n%s", line,
		         caret);
	}
	ps->c->file = save_file;
	ps->c->node = save_node;
	ps->c->op = save_op;
	return code;
}

static int
err_at(P *ps, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int
err_at(P *ps, const char *at, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = verr_at(ps, BURN_ERR_PARSE, at, fmt, ap);
	va_end(ap);
	return rc;
}

static int
limit_at(P *ps, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int
limit_at(P *ps, const char *at, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = verr_at(ps, BURN_ERR_LIMIT, at, fmt, ap);
	va_end(ap);
	return rc;
}

static int
nomem(P *ps)
{
	return burn_fail(ps->c, BURN_ERR_NOMEM, "kprog_parse: out of memory");
}

/* ---- tokens ---- */

static int
sput(P *ps, char ch)
{
	if (ps->slen == ps->scap) {
		size_t cap = ps->scap ? 2 * ps->scap : 256;
		char *nb = realloc(ps->sbuf, cap);
		if (!nb)
			return nomem(ps);
		ps->sbuf = nb;
		ps->scap = cap;
	}
	ps->sbuf[ps->slen++] = ch;
	return BURN_OK;
}

static int
hexval(int ch)
{
	if (ch >= '0' && ch <= '9') return ch - '0';
	if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
	return -1;
}

/* Unescape [p, end) into sbuf up to the closing quote (quoted) or the end;
 * returns where it stopped in *stop. */
static int
unescape(P *ps, const char *p, const char *end, int quoted, const char **stop)
{
	while (p < end && !(quoted && *p == '"')) {
		int ch = (unsigned char)*p;
		if (quoted && ch == '\n')
			break;
		if (ch == '\\') {
			int h, l;
			if (p + 1 >= end)
				return err_at(ps, p, "unfinished escape");
			switch (p[1]) {
			case '\\': ch = '\\'; break;
			case '"': ch = '"'; break;
			case 'n': ch = '\n'; break;
			case 't': ch = '\t'; break;
			case 'r': ch = '\r'; break;
			case 'x':
				if (end - p < 4 || (h = hexval((unsigned char)p[2])) < 0 ||
				    (l = hexval((unsigned char)p[3])) < 0)
					return err_at(ps, p, "bad \\x escape: two hex digits needed");
				ch = h * 16 + l;
				p += 2;
				break;
			default:
				return err_at(ps, p, "unknown escape");
			}
			p += 2;
		} else {
			p++;
		}
		TRY(sput(ps, (char)ch));
	}
	*stop = p;
	return sput(ps, 0);
}

static int
push(P *ps, int kind, int ch, const char *p, const char *q)
{
	Tok *t;

	if (ps->ntok == ps->captok) {
		int cap = ps->captok ? 2 * ps->captok : 256;
		Tok *nt;
		if (cap > INT_MAX / 2 ||
		    !(nt = realloc(ps->tok, (size_t)cap * sizeof *nt)))
			return nomem(ps);
		ps->tok = nt;
		ps->captok = cap;
	}
	t = &ps->tok[ps->ntok++];
	memset(t, 0, sizeof *t);
	t->kind = kind;
	t->ch = ch;
	t->p = p;
	t->len = (int)(q - p);
	return BURN_OK;
}

/* A number: decimal or 0x hex INT with an optional u, or a FLOAT (a '.'
 * followed by a digit, or an exponent) with an optional f. */
static int
lexnum(P *ps, const char *p, const char **out)
{
	const char *s = p, *end = ps->end;
	uint64_t u = 0;
	int ovf = 0, isf = 0, sfx = 0, kind;

	if (p + 1 < end && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		p += 2;
		if (p >= end || hexval((unsigned char)*p) < 0)
			return err_at(ps, s, "bad hex number");
		for (; p < end && hexval((unsigned char)*p) >= 0; p++) {
			ovf |= u >> 60 != 0;
			u = u << 4 | (uint64_t)hexval((unsigned char)*p);
		}
	} else {
		for (; p < end && *p >= '0' && *p <= '9'; p++) {
			uint64_t d = (uint64_t)(*p - '0');
			ovf |= u > (UINT64_MAX - d) / 10;
			u = u * 10 + d;
		}
		if (p + 1 < end && *p == '.' && p[1] >= '0' && p[1] <= '9') {
			isf = 1;
			for (p++; p < end && *p >= '0' && *p <= '9'; p++)
				;
		}
		if (p < end && (*p == 'e' || *p == 'E')) {
			const char *q = p + 1;
			if (q < end && (*q == '+' || *q == '-'))
				q++;
			if (q < end && *q >= '0' && *q <= '9') {
				isf = 1;
				for (p = q; p < end && *p >= '0' && *p <= '9'; p++)
					;
			}
		}
	}
	kind = isf ? TK_FLT : TK_INT;
	if (p < end && *p == (isf ? 'f' : 'u')) {
		sfx = *p;
		p++;
	}
	if (p < end && isidchar((unsigned char)*p))
		return err_at(ps, s, "bad number");
	if (!isf && ovf)
		return err_at(ps, s, "integer too large");
	if (p - s > 64)
		return err_at(ps, s, "number too long");
	TRY(push(ps, kind, sfx, s, p));
	ps->tok[ps->ntok - 1].u = u;
	*out = p;
	return BURN_OK;
}

/* Split the text into tokens.  The one context rule: on a line that
 * starts with 'kernel', the first ':' makes the rest of the line an OPS
 * token. */
static int
lex(P *ps)
{
	const char *p = ps->text, *end = ps->end;
	int first = 1, header = 0;

	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' ||
		                   *p == '\f' || *p == '\v'))
			p++;
		if (p < end && *p == '\n') {
			p++;
			first = 1;
			header = 0;
			continue;
		}
		if (p < end && *p == '#') {
			while (p < end && *p != '\n')
				p++;
			continue;
		}
		if (p >= end)
			return push(ps, TK_EOF, 0, end, end);
		if (isidstart((unsigned char)*p)) {
			const char *s = p;
			while (p < end && isidchar((unsigned char)*p))
				p++;
			if (header == 2)
				header = 0;
			if (first && p - s == 6 && memcmp(s, "kernel", 6) == 0)
				header = 1;
			if (first && p - s == 8 && memcmp(s, "schedule", 8) == 0)
				header = 2;
			if (p - s > 4096)
				return err_at(ps, s, "name too long");
			TRY(push(ps, TK_ID, 0, s, p));
		} else if (*p >= '0' && *p <= '9') {
			header = header == 2 ? 0 : header;
			TRY(lexnum(ps, p, &p));
		} else if (*p == '"') {
			const char *s = p, *q;
			size_t off = ps->slen;
			TRY(unescape(ps, p + 1, end, 1, &q));
			if (q >= end || *q != '"')
				return err_at(ps, s, "unterminated string");
			p = q + 1;
			TRY(push(ps, TK_STR, 0, s, p));
			ps->tok[ps->ntok - 1].s = off;
		} else if (*p == '.' && p + 1 < end && p[1] == '.') {
			TRY(push(ps, TK_PUNCT, P_DOTS, p, p + 2));
			p += 2;
		} else if (*p && strchr("(){}[],:=+-*/%@.", *p)) {
			TRY(push(ps, TK_PUNCT, *p, p, p + 1));
			p++;
			if (header == 2 && p[-1] == ':') {
				/* a schedule line: the rest of the line is its steps,
				 * raw (ksteps_parse reads them) */
				const char *e = p;
				header = 0;
				while (e < end && *e != '\n')
					e++;
				if (e > p && e[-1] == '\r')
					e--;
				TRY(push(ps, TK_OPS, 0, p, e));
				p = e;
			} else if (header == 2) {
				header = 0;
			} else if (header && p[-1] == ':') {
				const char *s = p, *q, *e = p;
				size_t off = ps->slen;
				header = 0;
				while (e < end && *e != '\n')
					e++;
				if (e > p && e[-1] == '\r')
					e--;   /* CRLF: a real \r in OPS is escaped */
				if (p < e && *p == ' ')
					p++;
				TRY(unescape(ps, p, e, 0, &q));
				TRY(push(ps, TK_OPS, 0, s, e));
				ps->tok[ps->ntok - 1].s = off;
				p = e;
			}
		} else {
			unsigned char ch = (unsigned char)*p;
			if (ch >= 0x20 && ch < 0x7f)
				return err_at(ps, p, "unexpected character '%c'", ch);
			return err_at(ps, p, "unexpected byte 0x%02x", ch);
		}
		first = 0;
	}
}

/* ---- token helpers ---- */

static Tok *
tk(P *ps)
{
	return &ps->tok[ps->i];
}

/* The token n ahead of the current one (EOF past the end). */
static Tok *
peek(P *ps, int n)
{
	int j = ps->i + n;

	return &ps->tok[j < ps->ntok ? j : ps->ntok - 1];
}

static void
adv(P *ps)
{
	if (ps->i < ps->ntok - 1)
		ps->i++;
}

static int
ispunct_(const Tok *t, int ch)
{
	return t->kind == TK_PUNCT && t->ch == ch;
}

static int
isword(const Tok *t, const char *w)
{
	return t->kind == TK_ID && (size_t)t->len == strlen(w) &&
	       memcmp(t->p, w, (size_t)t->len) == 0;
}

static int
expected(P *ps, const char *what)
{
	Tok *t = tk(ps);

	if (t->kind == TK_EOF)
		return err_at(ps, t->p, "expected %s, found the end", what);
	return err_at(ps, t->p, "expected %s, found '%.*s'", what,
	              t->len > 40 ? 40 : t->len, t->p);
}

static int
expect(P *ps, int ch, const char *what)
{
	if (!ispunct_(tk(ps), ch))
		return expected(ps, what);
	adv(ps);
	return BURN_OK;
}

static int
expect_word(P *ps, const char *w)
{
	char what[40];

	if (!isword(tk(ps), w)) {
		snprintf(what, sizeof what, "'%s'", w);
		return expected(ps, what);
	}
	adv(ps);
	return BURN_OK;
}

/* INT token in [0, max] into *out. */
static int
pint(P *ps, uint64_t max, uint64_t *out, const char *what)
{
	Tok *t = tk(ps);

	if (t->kind != TK_INT || t->ch)
		return expected(ps, what);
	if (t->u > max)
		return err_at(ps, t->p, "%.*s is too large for %s", t->len, t->p, what);
	*out = t->u;
	adv(ps);
	return BURN_OK;
}

/* An identifier prefix followed by digits (b3, v12) in [0, max]. */
static int
pnumbered(P *ps, char prefix, int64_t max, int *out, const char *what)
{
	Tok *t = tk(ps);
	int64_t v = 0;
	int i;

	if (t->kind != TK_ID || !is_numbered(t->p, (size_t)t->len, prefix))
		return expected(ps, what);
	for (i = 1; i < t->len; i++) {
		v = v * 10 + (t->p[i] - '0');
		if (v > max)
			return err_at(ps, t->p, "%.*s: number too large", t->len > 40 ? 40 : t->len, t->p);
	}
	*out = (int)v;
	adv(ps);
	return BURN_OK;
}

/* The dtype named by token t, DT_UNDEF if none. */
static int
tok_dtype(const Tok *t)
{
	char name[32];

	if (t->kind != TK_ID || t->len >= (int)sizeof name)
		return DT_UNDEF;
	memcpy(name, t->p, (size_t)t->len);
	name[t->len] = 0;
	return dtype_from_name(name);
}

/* A dtype; strings only where str says (a buffer: a call kernel's). */
static int
pdtype_(P *ps, int *out, int str)
{
	Tok *t = tk(ps);

	if (t->kind != TK_ID)
		return expected(ps, "a dtype");
	*out = tok_dtype(t);
	if (!dtype_supported(*out) && !(str && dtype_is_string(*out)))
		return err_at(ps, t->p, "unknown dtype '%.*s'",
		              t->len > 40 ? 40 : t->len, t->p);
	adv(ps);
	return BURN_OK;
}

static int
pdtype(P *ps, int *out)
{
	return pdtype_(ps, out, 0);
}

/* ---- kernel scratch ---- */

/* A new zeroed node of the given kind, starting at `at` in the text. */
static int
mk(P *ps, int kind, const char *at, KRef *out)
{
	KKernel *k = ps->k;
	KNode *n;

	if (k->nnode >= ps->c->limits.max_nodes || k->nnode >= INT_MAX / 4)
		return limit_at(ps, at, "kernel %s has more than %d nodes (--max-nodes)",
		                k->name, k->nnode);
	if (k->nnode == k->capnode) {
		int want = 2 * k->capnode;
		KNode *nn = arena_grow(ps->prog->arena, k->node, sizeof *k->node,
		                       (size_t)k->nnode, (size_t)want);
		if (!nn)
			return nomem(ps);
		k->node = nn;
		k->capnode = want;
	}
	if (k->nnode >= ps->ncap) {
		int want = ps->ncap ? 2 * ps->ncap : 256;
		unsigned char *s = realloc(ps->seen, (size_t)want);
		int *d = s ? realloc(ps->depth, (size_t)want * sizeof *d) : NULL;
		const char **q = d ? realloc(ps->pos, (size_t)want * sizeof *q) : NULL;
		if (s) ps->seen = s;
		if (d) ps->depth = d;
		if (q) ps->pos = q;
		if (!s || !d || !q)
			return nomem(ps);
		ps->ncap = want;
	}
	n = &k->node[k->nnode];
	memset(n, 0, sizeof *n);
	n->kind = kind;
	n->lanes = 1;
	ps->seen[k->nnode] = 0;
	ps->depth[k->nnode] = 1;
	ps->pos[k->nnode] = at;
	*out = k->nnode++;
	return BURN_OK;
}

static int
depth_of(P *ps, KRef e)
{
	return e > 0 && e < ps->k->nnode ? ps->depth[e] : 0;
}

/* Expression e is complete: check its depth and verify it. */
static int
done(P *ps, KRef e)
{
	const KNode *n = &ps->k->node[e];
	int d = depth_of(ps, n->a);
	Ctx c2;

	if (depth_of(ps, n->b) > d) d = depth_of(ps, n->b);
	if (depth_of(ps, n->c) > d) d = depth_of(ps, n->c);
	if (d >= KT_MAX_DEPTH)
		return limit_at(ps, ps->pos[e], "expression nested deeper than %d",
		                KT_MAX_DEPTH);
	ps->depth[e] = d + 1;
	burn_ctx_init(&c2, NULL);
	if (kir_verify_expr(&c2, ps->k, ps->seen, e)) {
		/* "kir NAME: node N: why": keep the why */
		const char *m = c2.msg, *q = strstr(m, ": node ");
		if (q && (q = strchr(q + 7, ':')))
			m = q + 2;
		else if ((q = strchr(m, ':')))
			m = q + 2;
		return err_at(ps, ps->pos[e], "%s", m);
	}
	return BURN_OK;
}

static uint32_t
hashn(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* Variable with plain name s[0..n), or -1. */
static int
vlookup(P *ps, const char *s, size_t n)
{
	uint32_t h;

	if (!ps->vcap)
		return -1;
	for (h = hashn(s, n) & (uint32_t)(ps->vcap - 1); ps->vtab[h];
	     h = (h + 1) & (uint32_t)(ps->vcap - 1)) {
		const char *name = ps->k->var[ps->vtab[h] - 1].name;
		if (strlen(name) == n && memcmp(name, s, n) == 0)
			return ps->vtab[h] - 1;
	}
	return -1;
}

/* Enter variable v under its plain name (the table stays half empty). */
static int
vinsert(P *ps, int v)
{
	const char *name;
	uint32_t h;

	if (2 * (v + 1) > ps->vcap) {
		int cap = ps->vcap ? 2 * ps->vcap : 64, *nt, i;
		while (2 * (v + 1) > cap)
			cap *= 2;
		if (!(nt = calloc((size_t)cap, sizeof *nt)))
			return nomem(ps);
		for (i = 0; i < ps->vcap; i++)
			if (ps->vtab[i]) {
				const char *s = ps->k->var[ps->vtab[i] - 1].name;
				h = hashn(s, strlen(s)) & (uint32_t)(cap - 1);
				while (nt[h])
					h = (h + 1) & (uint32_t)(cap - 1);
				nt[h] = ps->vtab[i];
			}
		free(ps->vtab);
		ps->vtab = nt;
		ps->vcap = cap;
	}
	name = ps->k->var[v].name;
	h = hashn(name, strlen(name)) & (uint32_t)(ps->vcap - 1);
	while (ps->vtab[h])
		h = (h + 1) & (uint32_t)(ps->vcap - 1);
	ps->vtab[h] = v + 1;
	return BURN_OK;
}

/* ---- declarations ---- */

static int pexpr_(P *ps, KRef *out);

/* buf = 'buf' BUF ':' DTYPE '[' INT ']' space ACCESS */
static int
pbuf(P *ps)
{
	KKernel *k = ps->k;
	KBuf b;
	int idx, i;
	const char *at;
	uint64_t count;
	int64_t bytes;

	memset(&b, 0, sizeof b);
	adv(ps);
	at = tk(ps)->p;
	TRY(pnumbered(ps, 'b', INT_MAX, &idx, "a buffer name b0, b1, ..."));
	if (idx != k->nbuf)
		return err_at(ps, at, "buffer b%d declared where b%d is next", idx,
		              k->nbuf);
	TRY(expect(ps, ':', "':'"));
	at = tk(ps)->p;
	TRY(pdtype_(ps, &b.dtype, 1));
	TRY(expect(ps, '[', "'['"));
	if (!(tk(ps)->kind == TK_INT && ispunct_(peek(ps, 1), ']'))) {
		/* an extent known at run time: checked with the kernel */
		TRY(pexpr_(ps, &b.ext));
		count = 0;
	} else {
		TRY(pint(ps, INT64_MAX, &count, "an element count"));
	}
	b.count = (int64_t)count;
	if (burn_mul_ovf(b.count, dtype_size(b.dtype), &bytes) ||
	    bytes > ps->c->limits.max_tensor_bytes)
		return limit_at(ps, at, "buffer of %" PRId64 " elements of %s exceeds "
		                "the tensor size limit --max-tensor-bytes (%" PRId64 ")",
		                b.count, dtype_name(b.dtype),
		                ps->c->limits.max_tensor_bytes);
	TRY(expect(ps, ']', "']'"));
	b.value = -1;
	if (isword(tk(ps), "global")) {
		adv(ps);
		b.space = KS_GLOBAL;
		TRY(pnumbered(ps, 'v', INT_MAX, &b.value, "a graph value v0, v1, ..."));
	} else if (isword(tk(ps), "local")) {
		adv(ps);
		b.space = KS_LOCAL;
	} else if (isword(tk(ps), "shared")) {
		adv(ps);
		b.space = KS_SHARED;
	} else if (isword(tk(ps), "frag")) {
		adv(ps);
		b.space = KS_FRAG;
	} else {
		return expected(ps, "'global', 'local', 'shared' or 'frag'");
	}
	for (i = 0; i < 4; i++)
		if (isword(tk(ps), access_name[i]))
			break;
	if (i == 4)
		return expected(ps, "'read', 'write' or 'rw'");
	b.access = i;
	adv(ps);
	if (k->nbuf == k->capbuf) {
		int want = k->capbuf ? 2 * k->capbuf : 8;
		KBuf *nb = want > INT_MAX / 4 ? NULL
		         : arena_grow(ps->prog->arena, k->buf, sizeof *k->buf,
		                      (size_t)k->nbuf, (size_t)want);
		if (!nb)
			return nomem(ps);
		k->buf = nb;
		k->capbuf = want;
	}
	if (!(b.name = arena_printf(ps->prog->arena, "b%d", k->nbuf)))
		return nomem(ps);
	k->buf[k->nbuf++] = b;
	return BURN_OK;
}

/* VARNAME of a declaration: the hint into *hint, and whether it was
 * written with its index. */
static int
pvarname_decl(P *ps, int index, const char **hint, int *indexed)
{
	Tok *t = tk(ps);
	Arena *a = ps->prog->arena;
	uint64_t v;

	*indexed = t->kind == TK_STR ||
	           (t->kind == TK_ID && ispunct_(peek(ps, 1), '.'));
	if (t->kind == TK_STR)
		*hint = arena_strdup(a, ps->sbuf + t->s);
	else if (t->kind == TK_ID)
		*hint = arena_strndup(a, t->p, (size_t)t->len);
	else
		return expected(ps, "a variable name");
	if (!*hint)
		return nomem(ps);
	if (!*indexed && reserved_var(t->p, (size_t)t->len))
		return err_at(ps, t->p, "'%.*s' is a word of the text form: write "
		              "%.*s.%d", t->len, t->p, t->len, t->p, index);
	adv(ps);
	if (*indexed) {
		const char *at;
		TRY(expect(ps, '.', "'.'"));
		at = tk(ps)->p;
		TRY(pint(ps, INT_MAX, &v, "the variable's index"));
		if ((int)v != index)
			return err_at(ps, at, "variable %d written as index %d", index, (int)v);
	}
	return BURN_OK;
}

/* var = 'var' VARNAME ':' DTYPE;  dim = 'dim' VARNAME (dim: 1) */
static int
pvardecl(P *ps, int dim)
{
	KKernel *k = ps->k;
	KVar var = { DT_I64, NULL };
	const char *at;
	int indexed;

	adv(ps);
	at = tk(ps)->p;
	TRY(pvarname_decl(ps, k->nvar, &var.name, &indexed));
	if (!indexed && vlookup(ps, var.name, strlen(var.name)) >= 0)
		return err_at(ps, at, "variable '%s' declared twice (write %s.%d for "
		              "a second variable with that hint)", var.name, var.name,
		              k->nvar);
	if (!dim) {
		TRY(expect(ps, ':', "':'"));
		at = tk(ps)->p;
		TRY(pdtype(ps, &var.dtype));
	}
	if (dtype_is_storage(var.dtype))
		return err_at(ps, at, "%s is a storage type: variables are f32",
		              dtype_name(var.dtype));
	if (k->nvar == k->capvar) {
		int want = k->capvar ? 2 * k->capvar : 8;
		KVar *nv = want > INT_MAX / 4 ? NULL
		         : arena_grow(ps->prog->arena, k->var, sizeof *k->var,
		                      (size_t)k->nvar, (size_t)want);
		if (!nv)
			return nomem(ps);
		k->var = nv;
		k->capvar = want;
	}
	k->var[k->nvar++] = var;
	k->ndim += dim;
	if (!indexed)
		TRY(vinsert(ps, k->nvar - 1));
	return BURN_OK;
}

/* ---- expressions ---- */

static int pexpr_(P *ps, KRef *out);

/* VARNAME in a statement or expression. */
static int
pvarref(P *ps, int *out)
{
	Tok *t = tk(ps);
	const char *at = t->p;
	uint64_t v;

	if (t->kind == TK_STR ||
	    (t->kind == TK_ID && ispunct_(peek(ps, 1), '.') &&
	     peek(ps, 2)->kind == TK_INT)) {
		const char *h = t->kind == TK_STR ? ps->sbuf + t->s : NULL;
		size_t hn = h ? strlen(h) : (size_t)t->len;
		if (!h)
			h = t->p;
		adv(ps);
		TRY(expect(ps, '.', "'.'"));
		TRY(pint(ps, INT_MAX, &v, "a variable index"));
		if ((int)v >= ps->k->nvar || strlen(ps->k->var[v].name) != hn ||
		    memcmp(ps->k->var[v].name, h, hn) != 0)
			return err_at(ps, at, "no variable %.*s.%d", (int)(hn > 40 ? 40 : hn),
			              h, (int)v);
		*out = (int)v;
		return BURN_OK;
	}
	if (t->kind != TK_ID)
		return expected(ps, "a variable");
	if ((*out = vlookup(ps, t->p, (size_t)t->len)) < 0)
		return err_at(ps, at, "unknown variable '%.*s'",
		              t->len > 40 ? 40 : t->len, t->p);
	adv(ps);
	return BURN_OK;
}

/* The op named s[0..n), 0 if none (names come from kop_name). */
static int
op_by_name(const char *s, size_t n)
{
	int op;

	for (op = 1; op < KO_COUNT_; op++) {
		const char *name = kop_name(op);
		if (strlen(name) == n && memcmp(name, s, n) == 0)
			return op;
	}
	return 0;
}

/* Fits integer constant v in dtype dt (bool: 0 or 1)? */
static int
fits(int dt, int64_t v, int neg)
{
	switch (dt) {
	case DT_BOOL: return v == 0 || v == 1;
	case DT_I8:  return v == (int8_t)v;
	case DT_U8:  return v == (uint8_t)v;
	case DT_I16: return v == (int16_t)v;
	case DT_U16: return v == (uint16_t)v;
	case DT_I32: return v == (int32_t)v;
	case DT_U32: return v == (uint32_t)v;
	case DT_U64: return !neg;
	case DT_I64: return 1;
	}
	return 0;
}

/* const (the current token is '-', INT, FLOAT, inf or nan). */
static int
pconst(P *ps, KRef *out)
{
	const char *at = tk(ps)->p;
	int neg = 0, dt;
	KNode n;
	Tok *t;

	memset(&n, 0, sizeof n);
	if (ispunct_(tk(ps), '-')) {
		neg = 1;
		adv(ps);
	}
	t = tk(ps);
	if (t->kind == TK_INT) {
		uint64_t u = t->u;
		int64_t v = neg ? (int64_t)(0 - u) : (int64_t)u;
		int sfx = t->ch;
		dt = sfx == 'u' ? DT_U64 : DT_I64;
		adv(ps);
		if (!sfx && ispunct_(tk(ps), ':')) {
			const char *dat;
			adv(ps);
			dat = tk(ps)->p;
			TRY(pdtype(ps, &dt));
			if (!is_intlike(dt))
				return err_at(ps, dat, "an integer constant of type %s",
				              dtype_name(dt));
		}
		if ((dt == DT_U64 && neg) ||
		    (dt != DT_U64 && u > (uint64_t)INT64_MAX + (uint64_t)neg) ||
		    !fits(dt, v, neg))
			return err_at(ps, at, "integer out of the range of %s",
			              dtype_name(dt));
		n.dtype = dt;
		n.ival = v;
	} else if (t->kind == TK_FLT) {
		char tmp[72];
		int len = t->len - (t->ch == 'f');
		snprintf(tmp, sizeof tmp, "%s%.*s", neg ? "-" : "", len, t->p);
		n.dtype = t->ch == 'f' ? DT_F32 : DT_F64;
		n.fval = t->ch == 'f' ? (double)strtof(tmp, NULL) : strtod(tmp, NULL);
		adv(ps);
	} else if (isword(t, "inf") || (isword(t, "nan") && !neg)) {
		int isnan_ = isword(t, "nan");
		const char *dat;
		n.fval = isnan_ ? NAN : neg ? -INFINITY : INFINITY;
		if (isnan_) {
			uint64_t bits = UINT64_C(0x7ff8000000000000);
			adv(ps);
			if (ispunct_(tk(ps), '(')) {
				const char *bat;
				adv(ps);
				bat = tk(ps)->p;
				TRY(pint(ps, UINT64_MAX, &bits, "the NaN's bits"));
				TRY(expect(ps, ')', "')'"));
				memcpy(&n.fval, &bits, sizeof bits);
				if (!isnan(n.fval))
					return err_at(ps, bat, "not the bits of a NaN");
			}
			memcpy(&n.fval, &bits, sizeof bits);
		} else {
			adv(ps);
		}
		TRY(expect(ps, ':', "':' and the constant's dtype"));
		dat = tk(ps)->p;
		TRY(pdtype(ps, &dt));
		if (dt != DT_F32 && dt != DT_F64)
			return err_at(ps, dat, "inf and nan are f32 or f64");
		n.dtype = dt;
	} else {
		return expected(ps, "a number");
	}
	TRY(mk(ps, KE_CONST, at, out));
	n.kind = KE_CONST;
	n.lanes = 1;
	ps->k->node[*out] = n;
	return done(ps, *out);
}

/* The let tNUM of the statement being parsed, 0 if none. */
static KRef
let_lookup(P *ps, int num)
{
	int lo = 0, hi = ps->nlet - 1;

	while (lo <= hi) {   /* let numbers increase */
		int mid = (lo + hi) / 2;
		if (ps->let[mid].num == num)
			return ps->let[mid].e;
		if (ps->let[mid].num < num)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0;
}

/* '(' expr {',' expr} ')': up to 3 operands into e[], their count in *n. */
static int
pargs(P *ps, KRef *e, int *n)
{
	*n = 0;
	TRY(expect(ps, '(', "'('"));
	for (;;) {
		if (*n == 3)
			return err_at(ps, tk(ps)->p, "too many operands");
		TRY(pexpr_(ps, &e[(*n)++]));
		if (!ispunct_(tk(ps), ','))
			break;
		adv(ps);
	}
	return expect(ps, ')', "',' or ')'");
}

static int
pprimary(P *ps, KRef *out)
{
	Tok *t = tk(ps), *t1 = peek(ps, 1);
	const char *at = t->p;
	KKernel *k = ps->k;
	KRef e[4], r;   /* pargs fills up to 3, from e or e + 1 */
	int n, op, dt;

	if (ispunct_(t, '(')) {
		adv(ps);
		TRY(pexpr_(ps, out));
		return expect(ps, ')', "')'");
	}
	if (t->kind == TK_INT || t->kind == TK_FLT || ispunct_(t, '-'))
		return pconst(ps, out);
	if (t->kind == TK_STR)
		goto var;
	if (t->kind != TK_ID)
		return expected(ps, "an expression");
	/* name.N is a variable, even when name is a word of the grammar */
	if (ispunct_(t1, '.') && peek(ps, 2)->kind == TK_INT &&
	    !ispunct_(peek(ps, 3), '('))
		goto var;
	if (isword(t, "inf") || isword(t, "nan"))
		return pconst(ps, out);
	if (ispunct_(t1, '(') ||
	    (ispunct_(t1, '.') && peek(ps, 2)->kind == TK_INT &&
	     ispunct_(peek(ps, 3), '('))) {
		int how = 0;
		if (isword(t, "select") || isword(t, "fma")) {
			int fma = isword(t, "fma");
			adv(ps);
			TRY(pargs(ps, e, &n));
			if (n != 3)
				return err_at(ps, at, fma ? "fma takes 3 operands" :
				              "select takes 3 operands");
			TRY(mk(ps, fma ? KE_FMA : KE_SELECT, at, &r));
			k = ps->k;
			k->node[r].a = e[0];
			k->node[r].b = e[1];
			k->node[r].c = e[2];
			k->node[r].dtype = kb_dtype(k, e[fma ? 0 : 1]);
			*out = r;
			return done(ps, r);
		}
		dt = tok_dtype(t);
		if (dt != DT_UNDEF) {
			uint64_t h = 0;
			adv(ps);
			if (ispunct_(tk(ps), '.')) {
				adv(ps);
				TRY(pint(ps, INT_MAX, &h, "the cast's rounding bits"));
				how = (int)h;
			}
			TRY(pargs(ps, e, &n));
			if (n != 1)
				return err_at(ps, at, "a cast takes 1 operand");
			TRY(mk(ps, KE_CAST, at, &r));
			k = ps->k;
			k->node[r].a = e[0];
			k->node[r].op = how;
			if (dtype_is_storage(dt)) {
				k->node[r].dtype = DT_F32;
				k->node[r].ival = dt;
			} else {
				k->node[r].dtype = dt;
			}
			*out = r;
			return done(ps, r);
		}
		if (!(op = op_by_name(t->p, (size_t)t->len)))
			return err_at(ps, at, "unknown operation '%.*s'",
			              t->len > 40 ? 40 : t->len, t->p);
		adv(ps);
		TRY(pargs(ps, e, &n));
		if (n == 3)
			return err_at(ps, at, "%s takes 1 or 2 operands", kop_name(op));
		TRY(mk(ps, n == 1 ? KE_UN : KE_BIN, at, &r));
		k = ps->k;
		k->node[r].op = op;
		k->node[r].a = e[0];
		k->node[r].b = n == 2 ? e[1] : 0;
		k->node[r].dtype = kop_result_dtype(op, kb_dtype(k, e[0]));
		*out = r;
		return done(ps, r);
	}
	if ((isword(t, "thread") || isword(t, "block")) && ispunct_(t1, '.') &&
	    peek(ps, 2)->kind == TK_ID) {
		Tok *axis = peek(ps, 2);
		int base = isword(t, "thread") ? KX_THREAD_X : KX_BLOCK_X;
		if (axis->len != 1 || axis->p[0] < 'x' || axis->p[0] > 'z')
			return err_at(ps, axis->p, "expected x, y or z");
		adv(ps);
		adv(ps);
		adv(ps);
		TRY(mk(ps, KE_SPECIAL, at, &r));
		ps->k->node[r].op = base + (axis->p[0] - 'x');
		ps->k->node[r].dtype = DT_I64;
		*out = r;
		return done(ps, r);
	}
	if (isword(t, "load") || isword(t, "loadbits")) {
		int b, bits = isword(t, "loadbits");
		const char *bat;
		adv(ps);
		bat = tk(ps)->p;
		TRY(pnumbered(ps, 'b', INT_MAX, &b, "a buffer"));
		if (b >= ps->k->nbuf)
			return err_at(ps, bat, "no buffer b%d", b);
		TRY(expect(ps, '[', "'['"));
		TRY(pexpr_(ps, &e[0]));
		TRY(expect(ps, ']', "']'"));
		e[1] = e[2] = 0;
		/* `guard(` cannot begin a statement: a set is `name =` */
		if (isword(tk(ps), "guard") && ispunct_(peek(ps, 1), '(')) {
			adv(ps);
			TRY(pargs(ps, e + 1, &n));
			if (n != 2)
				return err_at(ps, at, "a guarded load takes guard(cond, default)");
		}
		TRY(mk(ps, KE_LOAD, at, &r));
		k = ps->k;
		k->node[r].buf = b;
		k->node[r].a = e[0];
		k->node[r].b = e[1];
		k->node[r].c = e[2];
		dt = k->buf[b].dtype;
		if (bits && !dtype_is_storage(dt))
			return err_at(ps, bat, "loadbits of a %s buffer", dtype_name(dt));
		k->node[r].dtype = bits ? kir_bits_dtype(dt)
		                 : dtype_is_storage(dt) ? DT_F32 : dt;
		*out = r;
		return done(ps, r);
	}
	if (isword(t, "true") || isword(t, "false")) {
		adv(ps);
		TRY(mk(ps, KE_CONST, at, &r));
		ps->k->node[r].dtype = DT_BOOL;
		ps->k->node[r].ival = isword(t, "true");
		*out = r;
		return done(ps, r);
	}
	if (is_numbered(t->p, (size_t)t->len, 't')) {
		int num;
		TRY(pnumbered(ps, 't', INT_MAX, &num, "a let"));
		if (!(*out = let_lookup(ps, num)))
			return err_at(ps, at, "no let t%d before this statement", num);
		return BURN_OK;
	}
var:
	TRY(pvarref(ps, &n));
	TRY(mk(ps, KE_VAR, at, &r));
	ps->k->node[r].var = n;
	ps->k->node[r].dtype = ps->k->var[n].dtype;
	*out = r;
	return done(ps, r);
}

/* vec = primary ['@' INT] */
static int
pvec(P *ps, KRef *out)
{
	uint64_t lanes;
	int before = ps->k->nnode;

	TRY(pprimary(ps, out));
	if (!ispunct_(tk(ps), '@'))
		return BURN_OK;
	if (*out < before)
		return err_at(ps, tk(ps)->p, "lanes belong on the let's definition");
	adv(ps);
	TRY(pint(ps, 65536, &lanes, "a lane count"));
	if (lanes < 1)
		return err_at(ps, tk(ps)->p, "a vector has at least 1 lane");
	ps->k->node[*out].lanes = (int)lanes;
	ps->seen[*out] = 0;     /* check again with its lanes */
	return done(ps, *out);
}

/* One left-associative level: prec 1 is + -, prec 2 is * / %. */
static int
pinfix(P *ps, int prec, KRef *out)
{
	const char *at = tk(ps)->p;

	TRY(prec == 1 ? pinfix(ps, 2, out) : pvec(ps, out));
	for (;;) {
		Tok *t = tk(ps);
		int op = 0;
		KRef b, r;
		if (t->kind == TK_PUNCT && prec == 1)
			op = t->ch == '+' ? KO_ADD : t->ch == '-' ? KO_SUB : 0;
		else if (t->kind == TK_PUNCT && prec == 2)
			op = t->ch == '*' ? KO_MUL : t->ch == '/' ? KO_DIV
			   : t->ch == '%' ? KO_MOD : 0;
		if (!op)
			return BURN_OK;
		adv(ps);
		TRY(prec == 1 ? pinfix(ps, 2, &b) : pvec(ps, &b));
		TRY(mk(ps, KE_BIN, at, &r));
		ps->k->node[r].op = op;
		ps->k->node[r].a = *out;
		ps->k->node[r].b = b;
		ps->k->node[r].dtype = kop_result_dtype(op, kb_dtype(ps->k, *out));
		TRY(done(ps, r));
		*out = r;
	}
}

static int
pexpr_(P *ps, KRef *out)
{
	int rc;

	if (ps->nest >= KT_MAX_DEPTH)
		return limit_at(ps, tk(ps)->p, "expression nested deeper than %d",
		                KT_MAX_DEPTH);
	ps->nest++;
	rc = pinfix(ps, 1, out);
	ps->nest--;
	return rc;
}

/* ---- statements ---- */

static int pblock_(P *ps, int nest, KRef *first);

/* '{' block '}' */
static int
pbraced(P *ps, int nest, KRef *first)
{
	TRY(expect(ps, '{', "'{'"));
	TRY(pblock_(ps, nest + 1, first));
	return expect(ps, '}', "'}'");
}

static int
want_dtype(P *ps, KRef e, int dt, const char *what)
{
	int got = kb_dtype(ps->k, e);

	if (got != dt)
		return err_at(ps, ps->pos[e], "%s is %s, not %s", what, dtype_name(got),
		              dtype_name(dt));
	return BURN_OK;
}

/* let = 'let' TMP '=' expr */
static int
plet(P *ps)
{
	const char *at;
	int num;
	KRef e;

	adv(ps);
	at = tk(ps)->p;
	TRY(pnumbered(ps, 't', INT_MAX, &num, "a let name t0, t1, ..."));
	if (num <= ps->lastlet && ps->lastlet >= 0)
		return err_at(ps, at, "let t%d after t%d: let numbers increase", num,
		              ps->lastlet);
	TRY(expect(ps, '=', "'='"));
	TRY(pexpr_(ps, &e));
	if (ps->nlet == ps->capl) {
		int cap = ps->capl ? 2 * ps->capl : 16;
		Let *nl = cap > INT_MAX / 16 ? NULL
		        : realloc(ps->let, (size_t)cap * sizeof *nl);
		if (!nl)
			return nomem(ps);
		ps->let = nl;
		ps->capl = cap;
	}
	ps->let[ps->nlet].num = num;
	ps->let[ps->nlet++].e = e;
	ps->lastlet = num;
	return BURN_OK;
}

/* ---- GPU statements (kops.def) ---- */

/* The GPU statement kind word t names, or 0. */
static int
gpu_kind(const Tok *t)
{
	if (t->kind != TK_ID)
		return 0;
	for (int kd = KS_VCOPY; kd < KN_COUNT_; kd++)
		if (isword(t, kgpu_name(kd)))
			return kd;
	return 0;
}

/* Does a GPU statement start here?  `result`: after `VAR =`, where only
 * the kinds with a result may.  NAME.N = ... is a variable. */
static int
gpu_start(P *ps, int result)
{
	Tok *t1 = peek(ps, 1), *t2 = peek(ps, 2);
	int kd = gpu_kind(tk(ps));

	if (!kd)
		return 0;
	if (result)
		return (kd == KS_SHFL || kd == KS_SGRED || kd == KS_ATOMIC) &&
		       ispunct_(t1, '.') && t2->kind == TK_ID;
	if (kd == KS_CPWAIT || kd == KS_WGWAIT)   /* cpwait, cpwait.N */
		return (!ispunct_(t1, '.') && !ispunct_(t1, '=')) ||
		       (ispunct_(t1, '.') && t2->kind == TK_INT && !ispunct_(peek(ps, 3), '='));
	if (kd == KS_SHFL || kd == KS_SGRED)
		return 0;   /* these have a result */
	return ispunct_(t1, '.') && (t2->kind == TK_ID ||
	       (t2->kind == TK_INT && !ispunct_(peek(ps, 3), '=')));
}

/* '.' WORD with WORD one of names[1 .. n) */
static int
pmod(P *ps, const char *const *names, int n, int *out, const char *what)
{
	TRY(expect(ps, '.', "'.'"));
	for (int i = 1; i < n; i++)
		if (names[i] && isword(tk(ps), names[i])) {
			*out = i;
			adv(ps);
			return BURN_OK;
		}
	return expected(ps, what);
}

/* BUF, an existing buffer */
static int
pbufname(P *ps, int *out)
{
	const char *at = tk(ps)->p;

	TRY(pnumbered(ps, 'b', INT_MAX, out, "a buffer"));
	if (*out >= ps->k->nbuf)
		return err_at(ps, at, "no buffer b%d", *out);
	return BURN_OK;
}

/* BUF '[' expr ']' */
static int
pbufidx(P *ps, int *buf, KRef *e)
{
	TRY(pbufname(ps, buf));
	TRY(expect(ps, '[', "'['"));
	TRY(pexpr_(ps, e));
	return expect(ps, ']', "']'");
}

/* The GPU statement at the token (its word), with result variable var
 * (-1 none); the forms are listed in kops.def.  Types are checked by
 * kir_verify when the kernel is complete. */
static int
pgpu_stmt(P *ps, const char *at, int var, KRef *out)
{
	const char *tname[KT_COUNT_];
	int kd = gpu_kind(tk(ps)), m = 0, buf = 0, buf2 = 0, buf3 = 0, shape = 0;
	int64_t ival = 0;
	KRef a = 0, b = 0, c = 0, s;
	uint64_t u;

	tname[0] = NULL;
	for (int i = 1; i < KT_COUNT_; i++)
		tname[i] = ktile_info(i)->name;
	adv(ps);
	switch (kd) {
	case KS_VCOPY:
	case KS_CPASYNC:
		TRY(expect(ps, '.', "'.'"));
		TRY(pint(ps, 64, &u, "a lane count"));
		ival = (int64_t)u;
		TRY(pbufidx(ps, &buf, &a));
		TRY(expect(ps, '=', "'='"));
		TRY(pbufidx(ps, &buf2, &b));
		break;
	case KS_CPWAIT:
	case KS_WGWAIT:
		if (ispunct_(tk(ps), '.')) {
			adv(ps);
			TRY(pint(ps, 7, &u, "a group count"));
			ival = (int64_t)u;
		}
		break;
	case KS_ATOMIC:
		TRY(pmod(ps, atomic_name, 5, &m, "add, max, min or cas"));
		TRY(pbufidx(ps, &buf, &a));
		TRY(expect(ps, ',', "','"));
		TRY(pexpr_(ps, &b));
		if (m == KAT_CAS) {
			TRY(expect(ps, ',', "','"));
			TRY(pexpr_(ps, &c));
		}
		break;
	case KS_SHFL:
	case KS_SGRED: {
		Tok *t;
		if (kd == KS_SHFL) {
			TRY(pmod(ps, shfl_name, 4, &m, "idx, xor or down"));
		} else {
			TRY(expect(ps, '.', "'.'"));
			t = tk(ps);
			if (t->kind != TK_ID || !(m = op_by_name(t->p, (size_t)t->len)))
				return expected(ps, "add, mul, min or max");
			adv(ps);
		}
		TRY(expect(ps, '.', "'.'"));
		t = tk(ps);
		if (t->kind != TK_ID || t->len < 2 || t->len > 3 || t->p[0] != 'w' ||
		    !isdigit((unsigned char)t->p[1]) ||
		    (t->len == 3 && !isdigit((unsigned char)t->p[2])))
			return expected(ps, "a subgroup width w2 .. w64");
		ival = strtol(t->p + 1, NULL, 10);
		adv(ps);
		TRY(pexpr_(ps, &a));
		if (kd == KS_SHFL) {
			TRY(expect(ps, ',', "','"));
			TRY(pexpr_(ps, &b));
		}
		break;
	}
	default:   /* tile ops */
		TRY(pmod(ps, tname, KT_COUNT_, &shape, "a tile shape"));
		ival = shape;
		if (kd == KS_TFILL) {
			m = KTR_C;
			TRY(pbufname(ps, &buf));
			TRY(expect(ps, '=', "'='"));
			TRY(pexpr_(ps, &a));
		} else if (kd == KS_TLOAD) {
			TRY(pmod(ps, role_name, 4, &m, "a, b or c"));
			TRY(pbufname(ps, &buf));
			TRY(expect(ps, '=', "'='"));
			TRY(pbufidx(ps, &buf2, &a));
			TRY(expect(ps, ',', "','"));
			TRY(pexpr_(ps, &b));
		} else if (kd == KS_TMMA) {
			TRY(pbufname(ps, &buf));
			TRY(expect(ps, '+', "'+='"));
			TRY(expect(ps, '=', "'+='"));
			TRY(pbufname(ps, &buf2));
			TRY(expect(ps, '*', "'*'"));
			TRY(pbufname(ps, &buf3));
		} else if (kd == KS_WGMMA) {
			TRY(pbufname(ps, &buf));
			TRY(expect(ps, '+', "'+='"));
			TRY(expect(ps, '=', "'+='"));
			TRY(pbufidx(ps, &buf2, &a));
			TRY(expect(ps, '*', "'*'"));
			TRY(pbufidx(ps, &buf3, &b));
			TRY(expect(ps, ',', "','"));
			TRY(pexpr_(ps, &c));
		} else {
			m = KTR_C;
			TRY(pbufidx(ps, &buf, &a));
			TRY(expect(ps, ',', "','"));
			TRY(pexpr_(ps, &b));
			TRY(expect(ps, '=', "'='"));
			TRY(pbufname(ps, &buf2));
		}
		break;
	}
	TRY(mk(ps, kd, at, &s));
	{
		KNode *n = &ps->k->node[s];
		n->op = m;
		n->ival = ival;
		n->var = var;
		n->buf = buf;
		n->buf2 = buf2;
		n->buf3 = buf3;
		n->a = a;
		n->b = b;
		n->c = c;
	}
	ps->nlet = 0;
	*out = s;
	return BURN_OK;
}

/* stmt = {let} (for | if | store | set | 'barrier' | gpu) */
static int
pstmt(P *ps, int nest, KRef *out)
{
	Tok *t, *t1;
	const char *at;
	KRef s, a, b;
	int v;

	ps->nlet = 0;
	while (isword(tk(ps), "let"))
		TRY(plet(ps));
	if (ps->nlet && ispunct_(tk(ps), '}'))
		return err_at(ps, tk(ps)->p, "a let needs a statement after it");
	t = tk(ps);
	t1 = peek(ps, 1);
	at = t->p;
	if (gpu_start(ps, 0))
		return pgpu_stmt(ps, at, -1, out);
	/* a keyword followed by '.' or '=' is a variable (for.3 = ...) */
	if (t->kind == TK_ID && !ispunct_(t1, '.') && !ispunct_(t1, '=')) {
		if (isword(t, "for")) {
			const char *vat;
			int flags = 0;
			adv(ps);
			vat = tk(ps)->p;
			TRY(pvarref(ps, &v));
			if (ps->k->var[v].dtype != DT_I64)
				return err_at(ps, vat, "loop variable is %s, not i64",
				              dtype_name(ps->k->var[v].dtype));
			if (ps->inloop[v])
				return err_at(ps, vat, "the variable of an enclosing loop");
			TRY(expect_word(ps, "in"));
			TRY(pexpr_(ps, &a));
			TRY(want_dtype(ps, a, DT_I64, "the loop's start"));
			TRY(expect(ps, P_DOTS, "'..'"));
			TRY(pexpr_(ps, &b));
			TRY(want_dtype(ps, b, DT_I64, "the loop's end"));
			for (;;) {
				t = tk(ps);
				if (isword(t, "parallel")) {
					flags |= KF_PARALLEL;
					adv(ps);
				} else if (isword(t, "unroll")) {
					flags |= KF_UNROLL;
					adv(ps);
				} else if ((isword(t, "thread") || isword(t, "block")) &&
				           ispunct_(peek(ps, 1), '.')) {
					Tok *axis = peek(ps, 2);
					if (axis->kind != TK_ID || axis->len != 1 ||
					    axis->p[0] < 'x' || axis->p[0] > 'z')
						return err_at(ps, axis->p, "expected x, y or z");
					flags |= (isword(t, "thread") ? KF_THREAD_X : KF_BLOCK_X)
					         << (axis->p[0] - 'x');
					adv(ps);
					adv(ps);
					adv(ps);
				} else {
					break;
				}
			}
			TRY(mk(ps, KS_FOR, at, &s));
			ps->k->node[s].var = v;
			ps->k->node[s].a = a;
			ps->k->node[s].b = b;
			ps->k->node[s].flags = flags;
			ps->nlet = 0;
			ps->inloop[v] = 1;
			TRY(pbraced(ps, nest, &a));
			ps->inloop[v] = 0;
			ps->k->node[s].body = a;
			*out = s;
			return BURN_OK;
		}
		if (isword(t, "if")) {
			adv(ps);
			TRY(pexpr_(ps, &a));
			TRY(want_dtype(ps, a, DT_BOOL, "the condition"));
			TRY(mk(ps, KS_IF, at, &s));
			ps->k->node[s].a = a;
			ps->nlet = 0;
			TRY(pbraced(ps, nest, &b));
			ps->k->node[s].body = b;
			if (isword(tk(ps), "else")) {
				adv(ps);
				TRY(pbraced(ps, nest, &b));
				ps->k->node[s].orelse = b;
			}
			*out = s;
			return BURN_OK;
		}
		if (isword(t, "barrier")) {
			adv(ps);
			ps->nlet = 0;
			return mk(ps, KS_BARRIER, at, out);
		}
	}
	if (t->kind == TK_ID && is_numbered(t->p, (size_t)t->len, 'b') &&
	    ispunct_(t1, '[')) {
		const KBuf *bf;
		int buf, bd;
		int64_t i;
		TRY(pnumbered(ps, 'b', INT_MAX, &buf, "a buffer"));
		if (buf >= ps->k->nbuf)
			return err_at(ps, at, "no buffer b%d", buf);
		TRY(expect(ps, '[', "'['"));
		TRY(pexpr_(ps, &a));
		if (!dtype_is_int(kb_dtype(ps->k, a)))
			return err_at(ps, ps->pos[a], "index is %s, not an integer",
			              dtype_name(kb_dtype(ps->k, a)));
		TRY(expect(ps, ']', "']'"));
		TRY(expect(ps, '=', "'='"));
		TRY(pexpr_(ps, &b));
		bf = &ps->k->buf[buf];
		bd = !dtype_is_storage(bf->dtype) ? bf->dtype
		   : kb_dtype(ps->k, b) == kir_bits_dtype(bf->dtype)
		   ? kir_bits_dtype(bf->dtype) : DT_F32;
		if (kb_dtype(ps->k, b) != bd)
			return err_at(ps, ps->pos[b], "%s value stored into a %s buffer",
			              dtype_name(kb_dtype(ps->k, b)), dtype_name(bf->dtype));
		if (bf->space == KS_GLOBAL && !(bf->access & KA_WRITE))
			return err_at(ps, at, "b%d is read-only", buf);
		if (kb_is_const_i(ps->k, a, &i) &&
		    (i < 0 || i + ps->k->node[b].lanes > bf->count))
			return err_at(ps, ps->pos[a], "index %" PRId64 " out of bounds "
			              "(b%d has %" PRId64 ")", i, buf, bf->count);
		TRY(mk(ps, KS_STORE, at, &s));
		ps->k->node[s].buf = buf;
		ps->k->node[s].a = a;
		ps->k->node[s].b = b;
		ps->nlet = 0;
		*out = s;
		return BURN_OK;
	}
	if (t->kind == TK_ID || t->kind == TK_STR) {
		TRY(pvarref(ps, &v));
		if (ps->inloop[v])
			return err_at(ps, at, "a loop's variable is set by the loop alone");
		TRY(expect(ps, '=', "'='"));
		if (gpu_start(ps, 1))
			return pgpu_stmt(ps, at, v, out);
		TRY(pexpr_(ps, &a));
		if (kb_dtype(ps->k, a) != ps->k->var[v].dtype)
			return err_at(ps, ps->pos[a], "%s value set to %s variable",
			              dtype_name(kb_dtype(ps->k, a)),
			              dtype_name(ps->k->var[v].dtype));
		TRY(mk(ps, KS_SET, at, &s));
		ps->k->node[s].var = v;
		ps->k->node[s].a = a;
		ps->nlet = 0;
		*out = s;
		return BURN_OK;
	}
	return expected(ps, "a statement");
}

/* block = {stmt}, up to the '}' that closes it */
static int
pblock_(P *ps, int nest, KRef *first)
{
	KRef last = 0, s;

	*first = 0;
	if (nest > KT_MAX_NEST)
		return limit_at(ps, tk(ps)->p, "blocks nested deeper than %d",
		                KT_MAX_NEST);
	while (!ispunct_(tk(ps), '}')) {
		if (tk(ps)->kind == TK_EOF)
			return expected(ps, "'}'");
		TRY(pstmt(ps, nest, &s));
		if (last)
			ps->k->node[last].next = s;
		else
			*first = s;
		last = s;
	}
	return BURN_OK;
}

/* ---- kernels and the program ---- */

/* call = 'call' NAME '(' BUF {',' BUF} ')' {INT} */
static int
pcall(P *ps)
{
	KCall *cl = arena_alloc(ps->prog->arena, sizeof *cl);
	Tok *t;
	uint64_t v;

	if (!cl)
		return nomem(ps);
	adv(ps);
	t = tk(ps);
	for (cl->fn = 1; cl->fn < KCALL_COUNT_; cl->fn++)
		if (t->kind == TK_ID && (size_t)t->len == strlen(kcall_name(cl->fn)) &&
		    !memcmp(t->p, kcall_name(cl->fn), (size_t)t->len))
			break;
	if (cl->fn == KCALL_COUNT_)
		return expected(ps, "a routine of runtime/strings.inc (bs_concat, ...)");
	adv(ps);
	TRY(expect(ps, '(', "'('"));
	for (;;) {
		if (cl->nbuf == 6)
			return expected(ps, "')' (at most 6 buffers)");
		TRY(pnumbered(ps, 'b', ps->k->nbuf - 1, &cl->buf[cl->nbuf], "a buffer b0, b1, ..."));
		cl->nbuf++;
		if (tk(ps)->kind == TK_PUNCT && tk(ps)->ch == ')')
			break;
		TRY(expect(ps, ',', "',' or ')'"));
	}
	adv(ps);
	while (tk(ps)->kind == TK_INT) {
		if (cl->narg == 4)
			return expected(ps, "'{' (at most 4 integers)");
		TRY(pint(ps, INT64_MAX, &v, "an integer"));
		cl->arg[cl->narg++] = (int64_t)v;
	}
	ps->k->call = cl;
	return BURN_OK;
}

/* kernel = 'kernel' [INT] NAME [':' OPS] [sched] {dim} {buf} {var} [call] '{' block '}' */
static int
pkernel(P *ps)
{
	Arena *a = ps->prog->arena;
	KProgram *p = ps->prog;
	const char *at = tk(ps)->p, *nat;
	KKernel *k;
	Ctx c2;
	Tok *t;

	adv(ps);
	if (tk(ps)->kind == TK_INT) {
		uint64_t idx;
		const char *iat = tk(ps)->p;
		TRY(pint(ps, INT_MAX, &idx, "a kernel index"));
		if ((int)idx != p->nkernel)
			return err_at(ps, iat, "kernel %d where %d is next", (int)idx,
			              p->nkernel);
	}
	t = tk(ps);
	nat = t->p;
	if (t->kind != TK_ID)
		return expected(ps, "a kernel name");
	if (!(k = arena_alloc(a, sizeof *k)) ||
	    !(k->name = arena_strndup(a, t->p, (size_t)t->len)))
		return nomem(ps);
	if (!kprog_name_ok(p, k->name)) {
		for (int i = 0; i < p->nkernel; i++)
			if (strcmp(p->kernel[i]->name, k->name) == 0)
				return err_at(ps, nat, "kernel %d is named %s already", i,
				              k->name);
		return err_at(ps, nat, "'%.*s' cannot name a kernel (a C keyword, "
		              "a library or renderer name, or longer than 127)",
		              t->len > 40 ? 40 : t->len, t->p);
	}
	adv(ps);
	k->ops = "";
	if (ispunct_(tk(ps), ':')) {
		adv(ps);
		if (tk(ps)->kind != TK_OPS)
			return expected(ps, "the kernel's ops on the line of its name");
		if (!(k->ops = arena_strdup(a, ps->sbuf + tk(ps)->s)))
			return nomem(ps);
		adv(ps);
	}
	if (isword(tk(ps), "schedule") && ispunct_(peek(ps, 1), ':')) {
		KSteps steps;
		char msg[160];
		int col;
		adv(ps);
		adv(ps);
		t = tk(ps);
		if (t->kind != TK_OPS)
			return expected(ps, "the kernel's schedule steps");
		if (ksteps_parse(t->p, (size_t)t->len, &steps, &col, msg, sizeof msg))
			return err_at(ps, t->p + col - 1, "schedule: %s", msg);
		if (!kprog_set_steps(p, k, &steps))
			return nomem(ps);
		adv(ps);
	}
	k->capnode = 64;
	if (!(k->node = arena_alloc(a, (size_t)k->capnode * sizeof *k->node)))
		return nomem(ps);
	k->nnode = 1;
	ps->k = k;
	ps->vcap = 0;
	free(ps->vtab);
	ps->vtab = NULL;
	ps->lastlet = -1;
	while (isword(tk(ps), "dim"))
		TRY(pvardecl(ps, 1));
	while (isword(tk(ps), "buf"))
		TRY(pbuf(ps));
	while (isword(tk(ps), "var"))
		TRY(pvardecl(ps, 0));
	if (isword(tk(ps), "call"))
		TRY(pcall(ps));
	free(ps->inloop);
	if (!(ps->inloop = calloc((size_t)k->nvar + 1, 1)))
		return nomem(ps);
	TRY(expect(ps, '{', "'dim', 'buf', 'var' or '{'"));
	TRY(pblock_(ps, 1, &k->body));
	TRY(expect(ps, '}', "'}'"));
	burn_ctx_init(&c2, NULL);
	if (kir_verify(&c2, k))
		return err_at(ps, at, "%s", c2.msg);
	if (p->nkernel == p->capkernel) {
		int want = p->capkernel ? 2 * p->capkernel : 16;
		KKernel **nk = want > INT_MAX / 4 ? NULL
		             : arena_grow(a, p->kernel, sizeof *p->kernel,
		                          (size_t)p->nkernel, (size_t)want);
		if (!nk)
			return nomem(ps);
		p->kernel = nk;
		p->capkernel = want;
	}
	kprog_name_add(p, k->name);
	p->kernel[p->nkernel++] = k;
	ps->k = NULL;
	return BURN_OK;
}

/* alias = 'alias' VAL '=' VAL [ '+' INT ]   (the INT: bytes into VAL's memory) */
static int
palias(P *ps)
{
	KProgram *p = ps->prog;
	/* the alias table is dense: bound it like the graph it came from */
	int64_t max = 4 * (int64_t)ps->c->limits.max_nodes;
	const char *at;
	int v, w, x, steps;
	uint64_t off = 0;

	if (max > INT_MAX / 2)
		max = INT_MAX / 2;
	adv(ps);
	at = tk(ps)->p;
	TRY(pnumbered(ps, 'v', max, &v, "a graph value v0, v1, ..."));
	TRY(expect(ps, '=', "'='"));
	TRY(pnumbered(ps, 'v', max, &w, "a graph value v0, v1, ..."));
	if (ispunct_(tk(ps), '+')) {
		adv(ps);
		TRY(pint(ps, INT64_MAX / 2, &off, "a byte offset"));
	}
	if (v == w)
		return err_at(ps, at, "v%d cannot live in itself", v);
	if (v < p->nalias && p->alias[v] != v)
		return err_at(ps, at, "v%d already lives in v%d", v, p->alias[v]);
	if ((v > w ? v : w) >= p->nalias) {
		int n = (v > w ? v : w) + 1, i;
		int *na = arena_grow(p->arena, p->alias, sizeof *na,
		                     (size_t)p->nalias, (size_t)n);
		if (!na)
			return nomem(ps);
		int64_t *no = p->alias_off ? arena_grow(p->arena, p->alias_off, sizeof *no,
		                                        (size_t)p->nalias, (size_t)n) : NULL;
		if (!na || (p->alias_off && !no))
			return nomem(ps);
		for (i = p->nalias; i < n; i++) {
			na[i] = i;
			if (no)
				no[i] = 0;
		}
		p->alias = na;
		if (no)
			p->alias_off = no;
		p->nalias = n;
	}
	if (off && !p->alias_off) {
		if (!(p->alias_off = arena_alloc(p->arena, sizeof(int64_t) * (size_t)p->nalias)))
			return nomem(ps);
		memset(p->alias_off, 0, sizeof(int64_t) * (size_t)p->nalias);
	}
	for (x = w, steps = 0; x != v && steps <= p->nalias && p->alias[x] != x;
	     steps++)
		x = p->alias[x];
	if (x == v)
		return err_at(ps, at, "v%d = v%d makes a cycle of aliases", v, w);
	p->alias[v] = w;
	if (p->alias_off)
		p->alias_off[v] = (int64_t)off;
	return BURN_OK;
}

int
kprog_parse(Ctx *c, KProgram *p, const char *text, size_t len)
{
	P ps;
	int rc;

	memset(&ps, 0, sizeof ps);
	ps.c = c;
	ps.prog = p;
	ps.text = text ? text : "";
	ps.end = ps.text + (text ? len : 0);
	if (len > (size_t)c->limits.max_file_bytes || len > INT_MAX / 2)
		return burn_fail(c, BURN_ERR_LIMIT, "kernel text of %zu bytes exceeds "
		                 "the file size limit --max-file-bytes (%" PRId64 ")",
		                 len, c->limits.max_file_bytes);
	rc = lex(&ps);
	while (!rc && tk(&ps)->kind != TK_EOF) {
		if (isword(tk(&ps), "kernel"))
			rc = pkernel(&ps);
		else if (isword(tk(&ps), "alias"))
			rc = palias(&ps);
		else
			rc = expected(&ps, "'kernel' or 'alias'");
	}
	free(ps.tok);
	free(ps.sbuf);
	free(ps.seen);
	free(ps.depth);
	free(ps.pos);
	free(ps.vtab);
	free(ps.let);
	free(ps.inloop);
	return rc;
}

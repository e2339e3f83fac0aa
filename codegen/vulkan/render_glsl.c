/*
 * render_glsl.c - kernel IR -> GLSL 450 compute shaders (render_glsl.h).
 *
 * The renderer prints the schedule and decides nothing: segments, grids
 * and threads come from ptx_segments, the ops from the legalised kernel
 * IR (kir_check_legal with the vulkan target's KCaps first).  Each
 * expression node becomes a temporary `tN` once per statement (a memo
 * stamped with the statement's generation), so shared subexpressions are
 * computed once and selects are eager, as the kernel IR says.  Integer
 * arithmetic in SPIR-V wraps like the kernel IR's, so + - * print as they
 * are; what GLSL leaves undefined (signed %, pow of a negative base) is
 * printed as a formula or helper with the kernel IR's meaning.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "render_glsl.h"
#include "../../targets/target.h"

typedef struct G {
	Ctx *c;
	const KKernel *k;
	FILE *f;                 /* the shader's body being written */
	int err;
	int *memo;               /* per node: its temporary */
	unsigned *stamp;         /* per node: generation of memo */
	unsigned gen;
	int ntmp;
	int depth;               /* indentation */
	int rec;                 /* expression recursion */
} G;

static int
fail(G *g, int code, const char *what)
{
	if (!g->err)
		g->err = burn_fail(g->c, code, "render_glsl %s: %s", g->k->name, what);
	return 0;
}

static void
ind(G *g)
{
	for (int i = 0; i < g->depth + 1; i++)
		fputc('\t', g->f);
}

/* GLSL's type of an expression of dtype dt. */
static const char *
gty(int dt)
{
	switch (dt) {
	case DT_BOOL: return "bool";
	case DT_I8: return "int8_t";
	case DT_U8: return "uint8_t";
	case DT_I16: return "int16_t";
	case DT_U16: return "uint16_t";
	case DT_I32: return "int";
	case DT_U32: return "uint";
	case DT_I64: return "int64_t";
	case DT_U64: return "uint64_t";
	case DT_F32: return "float";
	case DT_F64: return "double";
	}
	return NULL;
}

/* The element type a buffer of dtype dt holds in memory (bool as a byte,
 * storage floats as their bits). */
static const char *
mty(int dt)
{
	if (dt == DT_BOOL)
		return "uint8_t";
	if (dtype_is_storage(dt))
		return gty(kir_bits_dtype(dt));
	return gty(dt);
}

static const char *
bufpre(int space)
{
	return space == KS_GLOBAL ? "b" : space == KS_SHARED ? "s" : "l";
}

/* ---- expressions --------------------------------------------------------- */

static int ex(G *g, KRef e);

/* Start `T tN = ` for node e; returns N.  Float temporaries are
 * `precise` (SPIR-V NoContraction): the expansions' error terms, such as
 * Fast2Sum's b - ((a + b) - a) in f64 and log1p's log(1 + u) * u /
 * ((1 + u) - 1) in f32, are exact only as written, and Mesa's compiler
 * simplifies (a + b) - a to b in an expression not marked exact (lavapipe
 * lost acosh's low parts that way, 4e-9 relative error near 1, and
 * Softplus's correction, 2e-5 relative at x = -8: tests/diff/cases) */
static int
def(G *g, KRef e)
{
	int t = ++g->ntmp, dt = g->k->node[e].dtype;
	ind(g);
	fprintf(g->f, "%s%s t%d = ", dtype_is_float(dt) ? "precise " : "", gty(dt), t);
	return t;
}

static void
pconst(G *g, const KNode *n)
{
	uint64_t u = (uint64_t)n->ival;

	switch (n->dtype) {
	case DT_BOOL:
		fprintf(g->f, "%s", n->ival ? "true" : "false");
		return;
	case DT_F32: {
		float x = (float)n->fval;
		uint32_t b;
		memcpy(&b, &x, 4);
		fprintf(g->f, "uintBitsToFloat(0x%08xu)", b);
		return;
	}
	case DT_F64: {
		uint64_t b;
		memcpy(&b, &n->fval, 8);
		fprintf(g->f, "uint64BitsToDouble(0x%016llxul)", (unsigned long long)b);
		return;
	}
	default:
		fprintf(g->f, "%s(0x%016llxul)", gty(n->dtype), (unsigned long long)u);
	}
}

/* The buffer element buf[idx] as an lvalue text. */
static void
elem(G *g, int b, int ti)
{
	fprintf(g->f, "%s%d[int(t%d)]", bufpre(g->k->buf[b].space), b, ti);
}

/* A load as an rvalue of the expression's type. */
static void
pload(G *g, int b, int ti)
{
	if (g->k->buf[b].dtype == DT_BOOL && g->k->buf[b].space == KS_GLOBAL) {
		fputc('(', g->f);
		elem(g, b, ti);
		fprintf(g->f, " != uint8_t(0))");
	} else {
		elem(g, b, ti);
	}
}

/* op(a) of dtype dt into the open definition. */
static void
un(G *g, int op, int dt, int a)
{
	int fl = dt == DT_F32 || dt == DT_F64;
	const char *fn = NULL;

	switch (op) {
	case KO_NEG: fprintf(g->f, "-t%d", a); return;
	case KO_NOT: fprintf(g->f, "!t%d", a); return;
	case KO_BITNOT: fprintf(g->f, "~t%d", a); return;
	case KO_ABS: fn = "abs"; break;
	case KO_SQRT: fn = "sqrt"; break;
	case KO_FLOOR: case KO_CEIL: case KO_ROUND:
		if (!fl) {
			fprintf(g->f, "t%d", a);   /* integers: identity */
			return;
		}
		fn = op == KO_FLOOR ? "floor" : op == KO_CEIL ? "ceil" : "roundEven";
		break;
	case KO_ISNAN: fn = "isnan"; break;
	case KO_ISINF: fn = "isinf"; break;
	case KO_BITS: fn = dt == DT_F32 ? "floatBitsToUint" : "doubleBitsToUint64"; break;
	case KO_FROMBITS: fn = dt == DT_U32 ? "uintBitsToFloat" : "uint64BitsToDouble"; break;
	/* no transcendentals: GLSL's are of loose precision (exp, log: 3 ulp +
	 * 2 |x| ulp; sin, cos: absolute error only) and there are none for
	 * double, so every one arrives legalised (KCaps.libm clear), as f64
	 * exp, log and pow do; other f64 ones are refused below */
	}
	if (!fn && dt != DT_F64) {
		fail(g, BURN_ERR_UNSUPPORTED, "an operator it cannot print");
		return;
	}
	if (dt == DT_F64 && op != KO_ABS && op != KO_SQRT && op != KO_FLOOR && op != KO_CEIL &&
	    op != KO_ROUND && op != KO_ISNAN && op != KO_ISINF && op != KO_BITS) {
		char m[80];
		snprintf(m, sizeof m, "f64 %s (GLSL has no double transcendentals)", kop_name(op));
		fail(g, BURN_ERR_UNSUPPORTED, m);
		return;
	}
	fprintf(g->f, "%s(t%d)", fn, a);
}

static void
bin(G *g, int op, int dt, int a, int b)
{
	static const struct { int op; const char *s; } inf[] = {
		{ KO_ADD, "+" }, { KO_SUB, "-" }, { KO_MUL, "*" }, { KO_DIV, "/" },
		{ KO_QUOT, "/" }, { KO_AND, "&&" }, { KO_OR, "||" }, { KO_XOR, "^^" },
		{ KO_BAND, "&" }, { KO_BOR, "|" }, { KO_BXOR, "^" }, { KO_LT, "<" },
		{ KO_LE, "<=" }, { KO_GT, ">" }, { KO_GE, ">=" }, { KO_EQ, "==" }, { KO_NE, "!=" },
	};

	for (size_t i = 0; i < sizeof inf / sizeof *inf; i++)
		if (inf[i].op == op) {
			fprintf(g->f, "t%d %s t%d", a, inf[i].s, b);
			return;
		}
	switch (op) {
	case KO_REM:
		/* GLSL's % on negative operands is undefined (glslang prints
		 * OpSMod, the divisor's sign): C's remainder from the quotient */
		fprintf(g->f, "t%d - (t%d / t%d) * t%d", a, a, b, b);
		return;
	case KO_SHLM: case KO_SHRM:
		fprintf(g->f, "t%d %s (int(t%d) & %d)", a, op == KO_SHLM ? "<<" : ">>", b,
		        8 * dtype_size(dt) - 1);
		return;
	case KO_MIN: case KO_MAX:
		fprintf(g->f, "%s(t%d, t%d)", op == KO_MIN ? "min" : "max", a, b);
		return;
	}
	{
		char m[80];
		snprintf(m, sizeof m, "%s %s", dtype_name(dt), kop_name(op));
		fail(g, BURN_ERR_UNSUPPORTED, m);
	}
}

static void
cast(G *g, const KNode *n, int a)
{
	int to = n->dtype, from = kb_dtype(g->k, n->a);

	if (to == DT_BOOL && from != DT_BOOL)
		fprintf(g->f, "t%d != %s(0)", a, gty(from));
	else if (from == DT_BOOL && to != DT_BOOL)
		fprintf(g->f, "t%d ? %s(1) : %s(0)", a, gty(to), gty(to));
	else
		fprintf(g->f, "%s(t%d)", gty(to), a);
}

static int
ex_(G *g, KRef e)
{
	const KKernel *k = g->k;
	const KNode *n = &k->node[e];
	int a, b, c, t;

	if (n->lanes > 1)
		return fail(g, BURN_ERR_UNSUPPORTED, "a vector expression");
	if (!gty(n->dtype))
		return fail(g, BURN_ERR_UNSUPPORTED, "an expression of a type it cannot print");
	switch (n->kind) {
	case KE_CONST:
		t = def(g, e);
		pconst(g, n);
		break;
	case KE_VAR:
		t = def(g, e);
		fprintf(g->f, "v%d", n->var);
		break;
	case KE_SPECIAL:
		t = def(g, e);
		switch (n->op) {
		case KX_THREAD_X: fprintf(g->f, "int64_t(gl_LocalInvocationID.x)"); break;
		case KX_THREAD_Y: fprintf(g->f, "int64_t(gl_LocalInvocationID.y)"); break;
		case KX_THREAD_Z: fprintf(g->f, "int64_t(gl_LocalInvocationID.z)"); break;
		case KX_BLOCK_X: fprintf(g->f, "int64_t(gl_WorkGroupID.x)"); break;
		case KX_BLOCK_Y: fprintf(g->f, "int64_t(gl_WorkGroupID.y)"); break;
		default: fprintf(g->f, "int64_t(gl_WorkGroupID.z)"); break;
		}
		break;
	case KE_LOAD:
		a = ex(g, n->a);
		if (n->b) {
			/* guarded: the memory is read only where the guard holds */
			b = ex(g, n->b);
			c = ex(g, n->c);
			t = def(g, e);
			fprintf(g->f, "t%d;\n", c);
			ind(g);
			fprintf(g->f, "if (t%d) t%d = ", b, t);
			pload(g, n->buf, a);
		} else {
			t = def(g, e);
			pload(g, n->buf, a);
		}
		break;
	case KE_UN:
		a = ex(g, n->a);
		t = def(g, e);
		un(g, n->op, kb_dtype(k, n->a), a);
		break;
	case KE_BIN:
		a = ex(g, n->a);
		b = ex(g, n->b);
		t = def(g, e);
		bin(g, n->op, kb_dtype(k, n->a), a, b);
		break;
	case KE_SELECT:
		a = ex(g, n->a);
		b = ex(g, n->b);
		c = ex(g, n->c);
		t = def(g, e);
		fprintf(g->f, "t%d ? t%d : t%d", a, b, c);
		break;
	case KE_FMA:   /* one rounding (GLSL.std.450 Fma; exact on lavapipe) */
		a = ex(g, n->a);
		b = ex(g, n->b);
		c = ex(g, n->c);
		t = def(g, e);
		fprintf(g->f, "fma(t%d, t%d, t%d)", a, b, c);
		break;
	case KE_CAST:
		a = ex(g, n->a);
		t = def(g, e);
		cast(g, n, a);
		break;
	default:
		return fail(g, BURN_ERR_INTERNAL, "not an expression");
	}
	fprintf(g->f, ";\n");
	return t;
}

/* Expression e's temporary, evaluated once per statement. */
static int
ex(G *g, KRef e)
{
	if (g->err)
		return 0;
	if (g->stamp[e] == g->gen)
		return g->memo[e];
	if (g->rec > 400)
		return fail(g, BURN_ERR_LIMIT, "expression nested too deep");
	{
		int t;
		g->rec++;
		t = ex_(g, e);
		g->rec--;
		g->stamp[e] = g->gen;
		g->memo[e] = t;
		return t;
	}
}

/* ---- statements ---------------------------------------------------------- */

static void block(G *g, KRef s);

static void
store(G *g, int b, int ti, int tv)
{
	ind(g);
	elem(g, b, ti);
	if (g->k->buf[b].dtype == DT_BOOL && g->k->buf[b].space == KS_GLOBAL)
		fprintf(g->f, " = t%d ? uint8_t(1) : uint8_t(0);\n", tv);
	else
		fprintf(g->f, " = t%d;\n", tv);
}

static void
gpu_stmt(G *g, KRef s)
{
	const KNode *n = &g->k->node[s];

	switch (n->kind) {
	case KS_VCOPY:
	case KS_CPASYNC: {
		/* lane by lane; an async copy lands at once, which its wait
		 * allows (nobody touches the destination before it) */
		int d = ex(g, n->a), r = ex(g, n->b);
		if (g->err)
			return;
		for (int64_t i = 0; i < n->ival; i++) {
			ind(g);
			fprintf(g->f, "%s%d[int(t%d) + %lld] = %s%d[int(t%d) + %lld];\n",
			        bufpre(g->k->buf[n->buf].space), n->buf, d, (long long)i,
			        bufpre(g->k->buf[n->buf2].space), n->buf2, r, (long long)i);
		}
		return;
	}
	case KS_CPWAIT:
	case KS_WGWAIT:
		return;
	}
	{
		char m[80];
		snprintf(m, sizeof m, "GPU statement %s", kgpu_name(n->kind));
		fail(g, BURN_ERR_UNSUPPORTED, m);
	}
}

static void
stmt(G *g, KRef s)
{
	const KKernel *k = g->k;
	const KNode *n = &k->node[s];
	int a, b;

	g->gen++;
	switch (n->kind) {
	case KS_FOR:
		if (n->flags & ~(KF_PARALLEL | KF_UNROLL)) {
			fail(g, BURN_ERR_UNSUPPORTED, "a block or thread loop not at the top of the kernel");
			return;
		}
		a = ex(g, n->a);
		b = ex(g, n->b);
		ind(g);
		fprintf(g->f, "for (v%d = t%d; v%d < t%d; v%d++) {\n", n->var, a, n->var, b, n->var);
		g->depth++;
		block(g, n->body);
		g->depth--;
		ind(g);
		fprintf(g->f, "}\n");
		return;
	case KS_IF:
		a = ex(g, n->a);
		ind(g);
		fprintf(g->f, "if (t%d) {\n", a);
		g->depth++;
		block(g, n->body);
		g->depth--;
		if (n->orelse) {
			ind(g);
			fprintf(g->f, "} else {\n");
			g->depth++;
			block(g, n->orelse);
			g->depth--;
		}
		ind(g);
		fprintf(g->f, "}\n");
		return;
	case KS_STORE:
		b = ex(g, n->b);
		a = ex(g, n->a);
		if (!g->err)
			store(g, n->buf, a, b);
		return;
	case KS_SET:
		a = ex(g, n->a);
		ind(g);
		fprintf(g->f, "v%d = t%d;\n", n->var, a);
		return;
	case KS_BARRIER:
		ind(g);
		fprintf(g->f, "memoryBarrierShared(); barrier();\n");
		return;
	default:
		if (kgpu_name(n->kind)) {
			gpu_stmt(g, s);
			return;
		}
	}
	fail(g, BURN_ERR_INTERNAL, "not a statement");
}

static void
block(G *g, KRef s)
{
	if (g->depth > 200) {
		fail(g, BURN_ERR_LIMIT, "statements nested too deep");
		return;
	}
	for (; s && !g->err; s = g->k->node[s].next)
		stmt(g, s);
}

/* ---- shaders ------------------------------------------------------------- */

/* Spill word v <-> variable v (8 bytes a variable). */
static void
spill(G *g, int v, int st)
{
	int dt = g->k->var[v].dtype;

	ind(g);
	if (st) {
		fprintf(g->f, "sp[%d] = ", v);
		if (dt == DT_F32) fprintf(g->f, "uint64_t(floatBitsToUint(v%d));\n", v);
		else if (dt == DT_F64) fprintf(g->f, "doubleBitsToUint64(v%d);\n", v);
		else if (dt == DT_BOOL) fprintf(g->f, "v%d ? 1ul : 0ul;\n", v);
		else fprintf(g->f, "uint64_t(v%d);\n", v);
	} else {
		fprintf(g->f, "v%d = ", v);
		if (dt == DT_F32) fprintf(g->f, "uintBitsToFloat(uint(sp[%d]));\n", v);
		else if (dt == DT_F64) fprintf(g->f, "uint64BitsToDouble(sp[%d]);\n", v);
		else if (dt == DT_BOOL) fprintf(g->f, "sp[%d] != 0ul;\n", v);
		else fprintf(g->f, "%s(sp[%d]);\n", gty(dt), v);
	}
}

static int
render_shader(Ctx *c, const KKernel *k, const PtxSeg *sg, int si, int nseg,
              const unsigned char *cross, GlslShader *out)
{
	G g;
	char *body = NULL, *text = NULL;
	size_t blen = 0, tlen = 0;
	FILE *f = NULL;
	int mapped = 0, rc = BURN_OK;
	const KNode *bl = &k->node[sg->first];

	memset(&g, 0, sizeof g);
	g.c = c;
	g.k = k;
	g.memo = calloc((size_t)k->nnode + 1, sizeof *g.memo);
	g.stamp = calloc((size_t)k->nnode + 1, sizeof *g.stamp);
	g.f = open_memstream(&body, &blen);
	if (!g.memo || !g.stamp || !g.f) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "render_glsl: out of memory");
		goto out;
	}
	ptx_entry_name(NULL, k, si, nseg, out->name, sizeof out->name);
	out->grid = sg->grid;
	out->block = sg->block;
	out->spill = sg->spill;
	out->ydim = sg->ydim;
	out->ylo = sg->ylo;
	if (sg->ydim >= 0)
		bl = &k->node[sg->inner];   /* the items' statement */
	mapped = bl->kind == KS_FOR && (bl->flags & KF_BLOCK_X) && sg->nstmt == 1 &&
	         (sg->ydim < 0 || !bl->next);
	for (int v = 0; v < k->nvar; v++) {
		ind(&g);
		if (!gty(k->var[v].dtype)) {
			fail(&g, BURN_ERR_UNSUPPORTED, "a variable of a type it cannot print");
			break;
		}
		if (v < k->ndim)   /* a dim parameter: the dispatch's push constant */
			fprintf(g.f, "%s v%d = %s(pd.d[%d]);\n", gty(k->var[v].dtype), v,
			        gty(k->var[v].dtype), v);
		else
			fprintf(g.f, "%s v%d = %s(0);\n", gty(k->var[v].dtype), v,
			        gty(k->var[v].dtype));
	}
	for (int b = 0; b < k->nbuf; b++) {
		const KBuf *kb = &k->buf[b];
		if ((kb->space == KS_LOCAL || kb->space == KS_SHARED) && kb->ext) {
			fail(&g, BURN_ERR_UNSUPPORTED, "a local or shared buffer sized by run-time dims");
			break;
		}
		if (kb->space != KS_LOCAL)
			continue;
		if (cross[k->nvar + b]) {
			fail(&g, BURN_ERR_UNSUPPORTED, "a local buffer shared by several launches");
			break;
		}
		ind(&g);
		fprintf(g.f, "%s l%d[%lld];\n", gty(kb->dtype), b, (long long)kb->count);
		ind(&g);
		fprintf(g.f, "for (int i = 0; i < %lld; i++) l%d[i] = %s(0);\n", (long long)kb->count, b,
		        gty(kb->dtype));
	}
	for (int v = 0; sg->spill && v < k->nvar; v++)
		if (cross[v])
			spill(&g, v, 0);
	if (sg->ydim >= 0) {
		/* the item: the workgroup's y index from the loop's start */
		const KNode *it = &k->node[sg->first];
		int t;
		g.gen++;
		t = ex(&g, it->a);
		ind(&g);
		fprintf(g.f, "v%d = int64_t(gl_WorkGroupID.y) + t%d;\n", it->var, t);
	}
	if (mapped) {
		const KNode *th = &k->node[bl->body];
		int t;
		g.gen++;
		t = ex(&g, bl->a);
		ind(&g);
		fprintf(g.f, "v%d = int64_t(gl_WorkGroupID.x) + t%d;\n", bl->var, t);
		t = ex(&g, th->a);
		ind(&g);
		fprintf(g.f, "v%d = int64_t(gl_LocalInvocationID.x) + t%d;\n", th->var, t);
		block(&g, th->body);
	} else if (sg->ydim >= 0) {
		block(&g, sg->inner);   /* a workgroup of one invocation an item;
		                         * it sets no variable another reads
		                         * (ptx_segments) */
	} else {
		KRef s = sg->first;
		for (int j = 0; j < sg->nstmt && !g.err; j++, s = k->node[s].next)
			stmt(&g, s);
		for (int v = 0; sg->spill && v < k->nvar; v++)
			if (cross[v])
				spill(&g, v, 1);   /* one invocation: no race */
	}
	fclose(g.f);
	g.f = NULL;
	if (g.err) {
		rc = g.err;
		goto out;
	}
	if (!(f = open_memstream(&text, &tlen))) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "render_glsl: out of memory");
		goto out;
	}
	fprintf(f, "#version 450\n"
	        "#extension GL_EXT_shader_explicit_arithmetic_types : require\n"
	        "#extension GL_EXT_shader_8bit_storage : require\n"
	        "#extension GL_EXT_shader_16bit_storage : require\n"
	        "// %s: %s\n"
	        "layout(local_size_x = %lld) in;\n", out->name, k->ops ? k->ops : "",
	        (long long)sg->block);
	for (int b = 0; b < k->nbuf; b++) {
		const KBuf *kb = &k->buf[b];
		if (kb->space == KS_GLOBAL)
			fprintf(f, "layout(std430, set = 0, binding = %d) %sbuffer B%d { %s b%d[]; };\n",
			        b, kb->access == KA_READ ? "readonly " : "", b, mty(kb->dtype), b);
		else if (kb->space == KS_SHARED)
			fprintf(f, "shared %s s%d[%lld];\n", gty(kb->dtype), b, (long long)kb->count);
		else if (kb->space == KS_FRAG) {
			rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "render_glsl %s: matrix-tile "
			               "fragments (no cooperative matrices yet)", k->name);
			fclose(f);
			goto out;
		}
	}
	if (sg->spill)
		fprintf(f, "layout(std430, set = 0, binding = %d) buffer Spill { uint64_t sp[]; };\n",
		        k->nbuf);
	if (k->ndim)
		fprintf(f, "layout(push_constant) uniform Dims { int64_t d[%d]; } pd;\n", k->ndim);
	fprintf(f, "void main() {\n%s}\n", body);
	fclose(f);
	out->text = text;
	text = NULL;
out:
	if (g.f)
		fclose(g.f);
	free(body);
	free(text);
	free(g.memo);
	free(g.stamp);
	return rc;
}

void
glsl_shaders_free(GlslShader *s, int n)
{
	for (int i = 0; s && i < n; i++)
		free(s[i].text);
	free(s);
}

int
glsl_render_shaders(Ctx *c, const KKernel *k, GlslShader **out, int *nout)
{
	PtxSeg *seg = malloc(PTX_MAX_SEG * sizeof *seg);
	unsigned char *cross = calloc((size_t)k->nvar + k->nbuf + 1, 1);
	GlslShader *sh = NULL;
	int n = 0, rc;

	*out = NULL;
	*nout = 0;
	if (!seg || !cross) {
		free(seg);
		free(cross);
		return burn_fail(c, BURN_ERR_NOMEM, "render_glsl: out of memory");
	}
	rc = kir_check_legal(c, k, "render_glsl", &target_vulkan.ops, 1);
	if (!rc && k->ndim > GLSL_MAX_DIMS)
		rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "render_glsl %s: %d run-time dims (at most "
		               "%d)", k->name, k->ndim, GLSL_MAX_DIMS);
	if (!rc)
		rc = ptx_segments(c, k, seg, PTX_MAX_SEG, &n);
	if (!rc && n > 1)
		rc = ptx_cross(c, k, seg, n, cross);
	if (!rc && n && !(sh = calloc((size_t)n, sizeof *sh)))
		rc = burn_fail(c, BURN_ERR_NOMEM, "render_glsl: out of memory");
	for (int i = 0; i < n && !rc; i++)
		rc = render_shader(c, k, &seg[i], i, n, cross, &sh[i]);
	free(seg);
	free(cross);
	if (rc) {
		glsl_shaders_free(sh, n);
		return rc;
	}
	*out = sh;
	*nout = n;
	return BURN_OK;
}

int
glsl_render_kernel(Ctx *c, const KKernel *k, FILE *f)
{
	GlslShader *sh;
	int n;

	TRY(glsl_render_shaders(c, k, &sh, &n));
	for (int i = 0; i < n; i++) {
		const char *dn = sh[i].ydim >= 0 ? k->var[sh[i].ydim].name : NULL;
		fprintf(f, "// ---- shader %s: dispatch %lld x %lld", sh[i].name,
		        (long long)sh[i].grid, (long long)sh[i].block);
		if (sh[i].ydim >= 0 && sh[i].ylo)
			fprintf(f, ", y: %s - %lld items", dn ? dn : "dim", (long long)sh[i].ylo);
		else if (sh[i].ydim >= 0)
			fprintf(f, ", y: %s items", dn ? dn : "dim");
		fprintf(f, "%s%s\n%s\n", sh[i].spill ? ", spill buffer" : "",
		        k->ndim ? ", dims in push constants" : "", sh[i].text);
	}
	glsl_shaders_free(sh, n);
	return BURN_OK;
}

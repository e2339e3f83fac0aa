/*
 * render_c.c - kernel IR -> C99 (see render_c.h).
 *
 * Expressions print inline, with only the parentheses C needs (plus those
 * gcc's -Wparentheses asks for).  An expression used more than once by one
 * statement and evaluated unconditionally there is named once, as
 * `const T tN = ...;` in a block around the statement, so shared DAGs do
 * not grow exponentially in the text.  Selects are eager in the kernel IR
 * (both arms are safe to compute); padding reads are guarded loads,
 * printed `g ? b[i] : d`, whose index and default are evaluated only on
 * their side of the guard.  Expressions there are never hoisted out of it.
 *
 * Nesting is bounded too (clang stops at 256 brackets; a fused chain of
 * 130 Sigmoids is deeper): an expression more than DEPTH_MAX nodes deep
 * gets a name.  On one side of a guarded load the name is guarded by the
 * load's guard, `const int gK = g;  const T tN = gK ? ... : (T)0;`, so
 * the index's loads still run only where the guard holds.
 *
 * The kernels come legalised (passes/legalize.c): integer division by
 * zero, shift counts, pow, min/max, isnan/isinf, f32 erf, saturating
 * float->int casts and the f16/bf16/float8 conversions (loads and stores
 * of their bits, integer ops) are already kernel IR made of primitive
 * ops, and an op that is not is refused.  What is printed here is free of undefined
 * behaviour for every input: signed 32- and 64-bit add, sub, mul and neg
 * compute in the unsigned type and convert back (two's complement wrap,
 * as the interpreter computes), except index arithmetic over loop
 * variables and constants, whose values are bounded by the buffers they
 * index; results of ops on types narrower than int are cast back to the
 * type; quot/rem are printed as / and % where the legalised IR guarantees
 * a divisor that is neither 0 nor -1 with MIN; shlm/shrm mask the count.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "render_c.h"

static const char prelude[] =
"#include <math.h>\n"
"#include <stdint.h>\n"
"#include <string.h>\n"
"\n"
"#ifndef BURN_PRELUDE_\n"
"#define BURN_PRELUDE_\n"
"#if defined(__GNUC__)\n"
"#define BURN_HELPER static inline __attribute__((unused))\n"
"#else\n"
"#define BURN_HELPER static inline\n"
"#endif\n"
"/* Bit reinterpretation (the kernel IR's bits/frombits). */\n"
"BURN_HELPER uint32_t burn_bits_f32(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }\n"
"BURN_HELPER uint64_t burn_bits_f64(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }\n"
"BURN_HELPER float burn_frombits_u32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }\n"
"BURN_HELPER double burn_frombits_u64(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }\n"
"\n"
"/* Fused multiply-add for accumulations, where the target has it fast\n"
" * (FP_FAST_FMAF, e.g. -march with FMA). */\n"
"#ifdef FP_FAST_FMAF\n"
"#define BURN_FMA(a, b, c) fmaf(a, b, c)\n"
"#else\n"
"#define BURN_FMA(a, b, c) ((a) * (b) + (c))\n"
"#endif\n"
"\n"
"#ifdef _OPENMP\n"
"#include <omp.h>\n"
"/* A threaded loop's record: runs left on one thread, and the pause (in\n"
" * runs) after a loss.  A run whose team took longer, fork to join, than\n"
" * the caller's share took times the team (one thread alone: a worker\n"
" * whose core was busy came late, or the fork costs more than the loop)\n"
" * pauses the team for 16 runs, twice as many after each further loss, up\n"
" * to 4096; a win ends the pauses.  The threads split no sum: no result\n"
" * depends on it. */\n"
"typedef struct burn_omp_loop { int skip, pause; } burn_omp_loop;\n"
"BURN_HELPER int burn_omp_team(burn_omp_loop *l)\n"
"{\n"
"\tint s;\n"
"#pragma omp atomic read\n"
"\ts = l->skip;\n"
"\tif (s <= 0)\n"
"\t\treturn omp_get_max_threads();\n"
"#pragma omp atomic write\n"
"\tl->skip = s - 1;\n"
"\treturn 1;\n"
"}\n"
"BURN_HELPER void burn_omp_judge(burn_omp_loop *l, int team, double all, double mine)\n"
"{\n"
"\tint p;\n"
"\tif (team < 2)\n"
"\t\treturn;\n"
"#pragma omp atomic read\n"
"\tp = l->pause;\n"
"\tp = all <= team * mine ? 0 : p < 16 ? 16 : p < 4096 ? 2 * p : 4096;\n"
"#pragma omp atomic write\n"
"\tl->pause = p;\n"
"#pragma omp atomic write\n"
"\tl->skip = p;\n"
"}\n"
"#endif\n"
"#endif\n";

void
render_c_prelude(FILE *f)
{
	fputs(prelude, f);
}

/*
 * The freestanding prelude (burncc --freestanding): only the headers C99
 * requires of a freestanding implementation (stddef.h, stdint.h), and
 * burncc's own definitions of what the hosted C takes from libc and libm.
 * The transcendentals never reach it: the cpu-freestanding target has no
 * libm in its KCaps, so they arrive as kernel-IR polynomials.  What is
 * left are the operations C has no operator for:
 *  - bits/frombits through a union (C99 TC3), not memcpy;
 *  - fabs by clearing the sign bit; floor, ceil and round (half to even)
 *    exactly, through an integer conversion below 2^23 (2^52), where
 *    every larger float is already an integer;
 *  - sqrt correctly rounded: f32 by integer square root of the
 *    significand (25 result bits, the remainder for sticky), so a
 *    Cortex-M4 needs no double arithmetic; f64 the same on 64-bit words,
 *    one result bit at a time (the restoring method), 54 bits;
 *  - fma: the compiler's when it says the hardware has it (__FP_FAST_FMAF:
 *    VFMA on a Cortex-M4, FMA3 on x86 with -mfma), else the product in
 *    double (exact for floats) plus c, rounded twice (off by one ulp in
 *    rare ties; only erf's polynomial uses it);
 *  - float == and != as functions of <= and >=, which -Wfloat-equal
 *    accepts and which treat NaN as == does;
 *  - a byte copy for outputs that no kernel writes (the run function).
 * GCC may still turn a copy or zeroing loop into a call to memcpy or
 * memset (GCC requires those four of any environment, freestanding or
 * not: its manual, "Standards"); -fno-tree-loop-distribute-patterns stops
 * it.  Constants NaN and infinity are bit patterns (no math.h macros).
 */
static const char prelude_free[] =
"#include <stddef.h>\n"
"#include <stdint.h>\n"
"\n"
"#ifndef BURN_PRELUDE_\n"
"#define BURN_PRELUDE_\n"
"#if defined(__GNUC__)\n"
"#define BURN_HELPER static inline __attribute__((unused))\n"
"#else\n"
"#define BURN_HELPER static inline\n"
"#endif\n"
"/* Bit reinterpretation (the kernel IR's bits/frombits), through unions. */\n"
"BURN_HELPER uint32_t burn_bits_f32(float f) { union { float f; uint32_t u; } x; x.f = f; return x.u; }\n"
"BURN_HELPER uint64_t burn_bits_f64(double f) { union { double f; uint64_t u; } x; x.f = f; return x.u; }\n"
"BURN_HELPER float burn_frombits_u32(uint32_t u) { union { float f; uint32_t u; } x; x.u = u; return x.f; }\n"
"BURN_HELPER double burn_frombits_u64(uint64_t u) { union { double f; uint64_t u; } x; x.u = u; return x.f; }\n"
"\n"
"/* Fused multiply-add for accumulations, where the compiler says the\n"
" * hardware has it fast. */\n"
"#if defined(__GNUC__) && defined(__FP_FAST_FMAF)\n"
"#define BURN_FMA(a, b, c) __builtin_fmaf(a, b, c)\n"
"#else\n"
"#define BURN_FMA(a, b, c) ((a) * (b) + (c))\n"
"#endif\n"
"BURN_HELPER float burn_fmaf(float a, float b, float c)\n"
"{\n"
"#if defined(__GNUC__) && defined(__FP_FAST_FMAF)\n"
"\treturn __builtin_fmaf(a, b, c);\n"
"#else\n"
"\treturn (float)((double)a * (double)b + (double)c);\n"
"#endif\n"
"}\n"
"\n"
"/* == and != on floats without -Wfloat-equal's complaint; NaN as ==. */\n"
"BURN_HELPER int burn_feq_f32(float a, float b) { return a <= b && a >= b; }\n"
"BURN_HELPER int burn_fne_f32(float a, float b) { return !(a <= b && a >= b); }\n"
"BURN_HELPER int burn_feq_f64(double a, double b) { return a <= b && a >= b; }\n"
"BURN_HELPER int burn_fne_f64(double a, double b) { return !(a <= b && a >= b); }\n"
"\n"
"BURN_HELPER float burn_fabsf(float x) { return burn_frombits_u32(burn_bits_f32(x) & 0x7fffffffu); }\n"
"BURN_HELPER double burn_fabs(double x) { return burn_frombits_u64(burn_bits_f64(x) & UINT64_C(0x7fffffffffffffff)); }\n"
"\n"
"/* floor, ceil, round half to even: |x| >= 2^23 (2^52), infinities and\n"
" * NaN are their own; below, the truncation is an exact integer conversion.\n"
" * The sign is x's, so that -0.5 rounds to -0. */\n"
"BURN_HELPER float burn_signf(float r, float x) { return burn_frombits_u32(burn_bits_f32(r) | (burn_bits_f32(x) & 0x80000000u)); }\n"
"BURN_HELPER int burn_bigf(float x) { return (burn_bits_f32(x) & 0x7fffffffu) >= 0x4b000000u; }\n"
"BURN_HELPER float burn_floorf(float x) { float t; if (burn_bigf(x)) return x; t = (float)(int32_t)x; return burn_signf(t > x ? t - 1.0f : t, x); }\n"
"BURN_HELPER float burn_ceilf(float x) { float t; if (burn_bigf(x)) return x; t = (float)(int32_t)x; return burn_signf(t < x ? t + 1.0f : t, x); }\n"
"BURN_HELPER float burn_nearbyintf(float x) { float a; if (burn_bigf(x)) return x; a = burn_fabsf(x); return burn_signf((a + 8388608.0f) - 8388608.0f, x); }\n"
"BURN_HELPER double burn_sign(double r, double x) { return burn_frombits_u64(burn_bits_f64(r) | (burn_bits_f64(x) & UINT64_C(0x8000000000000000))); }\n"
"BURN_HELPER int burn_big(double x) { return (burn_bits_f64(x) & UINT64_C(0x7fffffffffffffff)) >= UINT64_C(0x4330000000000000); }\n"
"BURN_HELPER double burn_floor(double x) { double t; if (burn_big(x)) return x; t = (double)(int64_t)x; return burn_sign(t > x ? t - 1.0 : t, x); }\n"
"BURN_HELPER double burn_ceil(double x) { double t; if (burn_big(x)) return x; t = (double)(int64_t)x; return burn_sign(t < x ? t + 1.0 : t, x); }\n"
"BURN_HELPER double burn_nearbyint(double x) { double a; if (burn_big(x)) return x; a = burn_fabs(x); return burn_sign((a + 4503599627370496.0) - 4503599627370496.0, x); }\n"
"\n"
"/* Correctly rounded square roots.  x = m 2^e with m a whole significand\n"
" * and e made even by shifting m; q = floor(sqrt(m 2^s)) has one bit more\n"
" * than the result (the rounding bit), the remainder says whether it was\n"
" * exact.  Ties cannot occur (a square root of a p-bit number is never a\n"
" * (p+1)-bit number with its last bit set). */\n"
"BURN_HELPER float burn_sqrtf(float x)\n"
"{\n"
"\tuint32_t u = burn_bits_f32(x), m, r;\n"
"\tuint64_t rem, q = 0, bit = (uint64_t)1 << 50;\n"
"\tint32_t e;\n"
"\tif ((u & 0x7fffffffu) == 0 || u >= 0x7f800000u)   /* +-0, +inf, NaN, x < 0 */\n"
"\t\treturn u == 0x7f800000u || (u & 0x7fffffffu) == 0 || (u & 0x7fffffffu) > 0x7f800000u\n"
"\t\t       ? x : burn_frombits_u32(0x7fc00000u);\n"
"\te = (int32_t)(u >> 23);\n"
"\tm = u & 0x7fffffu;\n"
"\tif (e == 0)   /* subnormal: normalise */\n"
"\t\tfor (e = 1; !(m & 0x800000u); e--)\n"
"\t\t\tm <<= 1;\n"
"\tm |= 0x800000u;\n"
"\te -= 150;   /* x = m 2^e, 2^23 <= m < 2^24 */\n"
"\trem = (uint64_t)m << (26 - (e & 1));   /* 2^48 <= m 2^s < 2^50, e - s even */\n"
"\te = (e - 26 + (e & 1)) / 2;   /* sqrt x = sqrt(m 2^s) 2^e */\n"
"\twhile (bit) {   /* q = floor(sqrt(m 2^s)): 2^24 <= q < 2^25 */\n"
"\t\tif (rem >= q + bit) {\n"
"\t\t\trem -= q + bit;\n"
"\t\t\tq = (q >> 1) + bit;\n"
"\t\t} else\n"
"\t\t\tq >>= 1;\n"
"\t\tbit >>= 2;\n"
"\t}\n"
"\tr = (uint32_t)(q >> 1) + (uint32_t)(q & 1);   /* round: no ties */\n"
"\t/* r 2^(e+1), 2^23 <= r <= 2^24: r's implicit bit adds one to the field */\n"
"\treturn burn_frombits_u32(((uint32_t)(e + 1 + 150 - 1) << 23) + r);\n"
"}\n"
"BURN_HELPER double burn_sqrt(double x)\n"
"{\n"
"\tuint64_t u = burn_bits_f64(x), m, q = 0, s = 0, t, bit, r;\n"
"\tint64_t e;\n"
"\tif ((u & UINT64_C(0x7fffffffffffffff)) == 0 || u >= UINT64_C(0x7ff0000000000000))\n"
"\t\treturn u == UINT64_C(0x7ff0000000000000) || (u & UINT64_C(0x7fffffffffffffff)) == 0 ||\n"
"\t\t       (u & UINT64_C(0x7fffffffffffffff)) > UINT64_C(0x7ff0000000000000)\n"
"\t\t       ? x : burn_frombits_u64(UINT64_C(0x7ff8000000000000));\n"
"\te = (int64_t)(u >> 52);\n"
"\tm = u & UINT64_C(0xfffffffffffff);\n"
"\tif (e == 0)\n"
"\t\tfor (e = 1; !(m & UINT64_C(0x10000000000000)); e--)\n"
"\t\t\tm <<= 1;\n"
"\tm |= UINT64_C(0x10000000000000);\n"
"\te -= 1075;   /* x = m 2^e, 2^52 <= m < 2^53 */\n"
"\tif (e & 1) {\n"
"\t\tm <<= 1;\n"
"\t\te--;\n"
"\t}\n"
"\t/* M = m 2^-52 in [1, 4): its root y in [1, 2) one bit at a time, in\n"
"\t * units of 2^-53: bit is 2^-k, s twice the root so far, m the\n"
"\t * remainder M - q^2 over the bit's value (2M at first) */\n"
"\tm <<= 1;\n"
"\tfor (bit = UINT64_C(1) << 53; bit; bit >>= 1) {\n"
"\t\tt = s + bit;\n"
"\t\tif (t <= m) {\n"
"\t\t\ts = t + bit;\n"
"\t\t\tm -= t;\n"
"\t\t\tq += bit;\n"
"\t\t}\n"
"\t\tm <<= 1;\n"
"\t}\n"
"\t/* q = y 2^53, 54 bits: the last one rounds (no ties); sqrt x =\n"
"\t * y 2^((e+52)/2) = r 2^(e/2-26), 2^52 <= r <= 2^53 */\n"
"\tr = (q >> 1) + (q & 1);\n"
"\treturn burn_frombits_u64(((uint64_t)(e / 2 + 1049 - 1) << 52) + r);\n"
"}\n"
"\n"
"/* Bytes, for the outputs that no kernel writes. */\n"
"BURN_HELPER void burn_copy(void *d, const void *s, size_t n)\n"
"{\n"
"\tunsigned char *p = (unsigned char *)d;\n"
"\tconst unsigned char *q = (const unsigned char *)s;\n"
"\twhile (n--)\n"
"\t\t*p++ = *q++;\n"
"}\n"
"#endif\n";

void
render_c_prelude_free(FILE *f)
{
	fputs(prelude_free, f);
}

/* ---- per-kernel state -------------------------------------------------- */

typedef struct R {
	Ctx *c;
	const KKernel *k;
	FILE *f;
	char (*vname)[48];     /* C name per variable */
	unsigned char *vread;  /* variable is read somewhere */
	unsigned char *isloop; /* variable is a loop index */
	unsigned char *inscope;/* loop variable whose loop is open */
	unsigned char *bread;  /* buffer is loaded somewhere */
	unsigned char *bused;  /* buffer is loaded or stored */
	unsigned char *seen;   /* pre-pass: expression visited */
	/* per statement hoisting, valid where stamp[e] == sid */
	int *stamp, *cnt, *estamp;
	int *list, nlist;      /* nodes visited for the current statement */
	/* scope of each node: 0 evaluated unconditionally, MIXED under arms of
	 * unrelated selects, else arm_scope(S, arm): under that arm of S */
	int *home;
	unsigned char *hoist;
	int *hstamp, *dep;     /* nesting depth, valid where hstamp[e] == sid */
	int *gstamp;           /* guard gK printed, per scope, where == sid */
	int sid;
	KRef defining;         /* the hoisted node being defined, or 0 */
	int free;              /* freestanding: no libc or libm names */
	int err;
} R;

/*
 * Threads and FMA contraction are the schedule's (k->sched, made by
 * passes/schedule.c for the target): a loop it lists becomes an OpenMP
 * parallel region with its private variables and local buffers, the loop
 * shared out in equal static chunks (inside #ifdef _OPENMP, so the file
 * stays plain C99 and warning-free without -fopenmp), and a store it
 * marks prints as BURN_FMA.
 *
 * The region's team is the prelude's burn_omp_team: OpenMP's threads,
 * except for a while after a run that lost to one thread.  An OpenMP fork
 * (libgomp: the dock barrier) and join wait for every worker, and on a
 * machine whose other cores are busy a worker may not run for
 * milliseconds: two threads were then up to 50 times slower than one
 * (docs/BENCHMARKS.md).  So each run is timed, the caller's share (its
 * static chunk, ended by `nowait`) and the whole region, fork to join:
 *
 *   { static burn_omp_loop burn_l; int burn_nt = burn_omp_team(&burn_l);
 *     if (burn_nt > 1) { double burn_t0 = omp_get_wtime(), burn_mine = 0;
 *   #pragma omp parallel num_threads(burn_nt) private(...)
 *       { double burn_s = omp_get_wtime();
 *   #pragma omp for schedule(static) nowait
 *         for (...) { ... }
 *         if (omp_get_thread_num() == 0) burn_mine = omp_get_wtime() - burn_s;
 *       }
 *       burn_omp_judge(&burn_l, burn_nt, omp_get_wtime() - burn_t0, burn_mine);
 *     } else
 *       for (...) { ... }     (the loop as without OpenMP)
 *   }
 *
 * The loop is printed twice: on one thread (OMP_NUM_THREADS=1, a paused
 * loop) it runs as plain code, not as GCC's outlined region, which reads
 * the buffers through a shared struct without their `restrict` and was
 * 10% slower on SqueezeNet.
 */

/* The schedule's thread entry for loop statement s, or NULL. */
static const KThreads *
threaded(const KKernel *k, KRef s)
{
	for (int i = 0; k->sched && i < k->sched->nthreads; i++)
		if (k->sched->threads[i].loop == s)
			return &k->sched->threads[i];
	return NULL;
}

static const char *
ctype(int dt)
{
	switch (dt) {
	case DT_F32: return "float";
	case DT_F64: return "double";
	case DT_I8: return "int8_t";
	case DT_I16: return "int16_t";
	case DT_I32: return "int32_t";
	case DT_I64: return "int64_t";
	case DT_U8: return "uint8_t";
	case DT_U16: return "uint16_t";
	case DT_U32: return "uint32_t";
	case DT_U64: return "uint64_t";
	case DT_BOOL: return "uint8_t";
	case DT_F16: case DT_BF16: return "uint16_t";
	case DT_F8E4M3FN: case DT_F8E4M3FNUZ: case DT_F8E5M2: case DT_F8E5M2FNUZ:
	case DT_F8E8M0:
		return "uint8_t";
	case DT_STRING: return "burn_str";   /* runtime/strings.inc */
	}
	return NULL;
}

/* Types whose arithmetic C performs in int: results are cast back. */
static int
narrow(int dt)
{
	return dt == DT_I8 || dt == DT_U8 || dt == DT_I16 || dt == DT_U16 ||
	       dt == DT_BOOL;
}

static int
is_unsigned(int dt)
{
	return dt == DT_U8 || dt == DT_U16 || dt == DT_U32 || dt == DT_U64 ||
	       dt == DT_BOOL;
}

static int
bits(int dt)
{
	return 8 * dtype_size(dt);
}

static const char *const c_reserved[] = {
	"auto", "break", "case", "char", "const", "continue", "default", "do",
	"double", "else", "enum", "extern", "float", "for", "goto", "if",
	"inline", "int", "long", "register", "restrict", "return", "short",
	"signed", "sizeof", "static", "struct", "switch", "typedef", "union",
	"unsigned", "void", "volatile", "while", "errno", "memcpy", "isnan",
	"isinf", "exp", "log", "sqrt", "sin", "cos", "tan", "asin", "acos",
	"atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf",
	"floor", "ceil", "nearbyint", "fabs", "fmod", "pow", "expf", "logf",
	"sqrtf", "sinf", "cosf", "tanf", "asinf", "acosf", "atanf", "sinhf",
	"coshf", "tanhf", "asinhf", "acoshf", "atanhf", "erff", "floorf",
	"ceilf", "nearbyintf", "fabsf", "fmodf", "powf", "bool", "true",
	"false", "main", NULL
};

/* May variable hint s be used verbatim as a C name?  Lower-case
 * identifiers only (no macro clashes), not a keyword or a function we
 * call, not a type (_t), not our own bN/gN/tN/vN/wN or burn_ names. */
static int
plain_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 40 || !((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return 0;
	if (s[0] == '_')
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_'))
			return 0;
	if (n >= 2 && s[n - 2] == '_' && s[n - 1] == 't')
		return 0;
	if (strncmp(s, "burn_", 5) == 0)
		return 0;
	if (strchr("bgvtw", s[0]) && n > 1 && strspn(s + 1, "0123456789") == n - 1)
		return 0;
	for (i = 0; c_reserved[i]; i++)
		if (strcmp(s, c_reserved[i]) == 0)
			return 0;
	return 1;
}

static void
name_vars(R *r)
{
	const KKernel *k = r->k;
	int i, j;

	for (i = 0; i < k->nvar; i++) {
		const char *h = k->var[i].name ? k->var[i].name : "";
		int dup = 0;
		for (j = 0; j < k->nvar && !dup; j++)
			dup = j != i && k->var[j].name && strcmp(k->var[j].name, h) == 0;
		if (!dup && plain_name(h))
			snprintf(r->vname[i], sizeof r->vname[i], "%s", h);
		else
			snprintf(r->vname[i], sizeof r->vname[i], "v%d", i);
	}
}

/* ---- pre-pass: what is used (kir_check_legal has checked the kernel) ---- */

static const char *free_func(int op, int dt);

/* Freestanding: refuse an op whose only definition is the C library's
 * (none should arrive: the legalisation expands every transcendental
 * without libm and libm_f64), and an f64
 * fma (the file defines only an f32 one; the description's no_fma_f64
 * has the legalisation emulate every f64 fma, so none should arrive). */
static void
pre_free(R *r, KRef e)
{
	const KNode *n = &r->k->node[e];
	int dt = n->kind == KE_FMA ? n->dtype : r->k->node[n->a].dtype;
	const char *lib;

	if (!r->free || r->err || !dtype_is_float(dt))
		return;
	if (n->kind == KE_FMA) {
		if (dt != DT_F32)
			r->err = burn_fail(r->c, BURN_ERR_UNSUPPORTED, "render_c %s: "
			                   "--freestanding: an f64 fma", r->k->name);
		return;
	}
	lib = kop_libm(n->op, dt);
	if (lib && !free_func(n->op, dt))
		r->err = burn_fail(r->c, BURN_ERR_UNSUPPORTED, "render_c %s: "
		                   "--freestanding: %s %s has no definition without "
		                   "libm yet", r->k->name, dtype_name(dt), kop_name(n->op));
}

static void
pre_expr(R *r, KRef e)
{
	const KKernel *k = r->k;
	const KNode *n;

	if (r->seen[e])
		return;
	r->seen[e] = 1;
	n = &k->node[e];
	switch (n->kind) {
	case KE_VAR:
		r->vread[n->var] = 1;
		return;
	case KE_LOAD:
		r->bread[n->buf] = r->bused[n->buf] = 1;
		if (n->b) {
			pre_expr(r, n->b);
			pre_expr(r, n->c);
		}
		pre_expr(r, n->a);
		return;
	case KE_UN:
	case KE_BIN:
		pre_free(r, e);
		pre_expr(r, n->a);
		if (n->kind == KE_BIN)
			pre_expr(r, n->b);
		return;
	case KE_CAST:
		pre_expr(r, n->a);
		return;
	case KE_SELECT:
	case KE_FMA:
		pre_free(r, e);
		pre_expr(r, n->a);
		pre_expr(r, n->b);
		pre_expr(r, n->c);
		return;
	default:
		return;
	}
}

static void
pre_block(R *r, KRef s)
{
	const KKernel *k = r->k;

	for (; s; s = k->node[s].next) {
		const KNode *n = &k->node[s];
		switch (n->kind) {
		case KS_FOR:
			r->isloop[n->var] = 1;
			pre_expr(r, n->a);
			pre_expr(r, n->b);
			pre_block(r, n->body);
			break;
		case KS_IF:
			pre_expr(r, n->a);
			pre_block(r, n->body);
			pre_block(r, n->orelse);
			break;
		case KS_STORE:
			r->bused[n->buf] = 1;
			pre_expr(r, n->a);
			pre_expr(r, n->b);
			break;
		case KS_SET:
			pre_expr(r, n->a);
			break;
		default:
			break;
		}
	}
}

/* ---- expressions ------------------------------------------------------- */

/* C precedence levels of the forms we print. */
enum { P_TERN = 3, P_LOR = 4, P_LAND = 5, P_BOR = 6, P_BXOR = 7, P_BAND = 8,
       P_EQ = 9, P_REL = 10, P_SHIFT = 11, P_ADD = 12, P_MUL = 13,
       P_UNARY = 14, P_ATOM = 16 };

static void emit(R *r, KRef e, int need);

static void
tabs(FILE *f, int n)
{
	while (n-- > 0)
		fputc('\t', f);
}

/* Freestanding: the float functions of the freestanding prelude, by op
 * and dtype; NULL where it has none (the op then has a libm name only). */
static const char *
free_func(int op, int dt)
{
	int d = dt == DT_F64;

	switch (op) {
	case KO_ABS:   return d ? "burn_fabs" : "burn_fabsf";
	case KO_SQRT:  return d ? "burn_sqrt" : "burn_sqrtf";
	case KO_FLOOR: return d ? "burn_floor" : "burn_floorf";
	case KO_CEIL:  return d ? "burn_ceil" : "burn_ceilf";
	case KO_ROUND: return d ? "burn_nearbyint" : "burn_nearbyintf";
	case KO_EQ:    return d ? "burn_feq_f64" : "burn_feq_f32";
	case KO_NE:    return d ? "burn_fne_f64" : "burn_fne_f32";
	}
	return NULL;
}

/* The float function for op, by dtype; NULL if op is not a function: the
 * C library's (the op table's libm column), and the bit reinterpretation
 * of the file's prelude; freestanding, the prelude's own (free_func). */
static const char *
ffunc(const R *r, int op, int dt)
{
	if (op == KO_BITS)
		return dt == DT_F64 ? "burn_bits_f64" : "burn_bits_f32";
	if (r->free)
		return free_func(op, dt);
	return kop_libm(op, dt);
}

static int
infix_prec(int op, const char **sym)
{
	switch (op) {
	case KO_ADD: *sym = "+"; return P_ADD;
	case KO_SUB: *sym = "-"; return P_ADD;
	case KO_MUL: *sym = "*"; return P_MUL;
	case KO_DIV: *sym = "/"; return P_MUL;
	case KO_MOD: *sym = "%"; return P_MUL;
	case KO_LT: *sym = "<"; return P_REL;
	case KO_LE: *sym = "<="; return P_REL;
	case KO_GT: *sym = ">"; return P_REL;
	case KO_GE: *sym = ">="; return P_REL;
	case KO_EQ: *sym = "=="; return P_EQ;
	case KO_NE: *sym = "!="; return P_EQ;
	case KO_BAND: *sym = "&"; return P_BAND;
	case KO_BOR: *sym = "|"; return P_BOR;
	case KO_BXOR: *sym = "^"; return P_BXOR;
	case KO_AND: *sym = "&&"; return P_LAND;
	case KO_OR: *sym = "||"; return P_LOR;
	case KO_SHL: *sym = "<<"; return P_SHIFT;
	case KO_SHR: *sym = ">>"; return P_SHIFT;
	}
	return 0;
}

static int
hoisted(R *r, KRef e)
{
	return r->stamp[e] == r->sid && r->hoist[e] && e != r->defining;
}

/* Signed types whose arithmetic C does not promote: their add, sub, mul
 * and neg may overflow, which is undefined. */
static int
wide_signed(int dt)
{
	return dt == DT_I32 || dt == DT_I64;
}

static const char *
utype(int dt)
{
	return dt == DT_I64 ? "uint64_t" : "uint32_t";
}

/* Is n index arithmetic: add/sub/mul over constants and loop variables
 * only?  Loop variables range over buffer extents, which the tensor size
 * limit bounds, so these never overflow and print as plain signed C
 * (which keeps them readable, and lets the compiler reason about them). */
static int
index_only(R *r, const KNode *n)
{
	const KKernel *k = r->k;

	switch (n->kind) {
	case KE_CONST:
		return 1;
	case KE_VAR:
		return r->isloop[n->var];
	case KE_BIN:
		if (n->op != KO_ADD && n->op != KO_SUB && n->op != KO_MUL)
			return 0;
		return index_only(r, &k->node[n->a]) && index_only(r, &k->node[n->b]);
	}
	return 0;
}

/* How binary node n prints: 0 infix (sym, prec), 2 float function sym,
 * 3 a masked shift (shlm/shrm), 4 wrapping arithmetic through the unsigned
 * type (signed 32/64-bit add, sub, mul outside index arithmetic). */
static int
bin_form(R *r, const KNode *n, const char **sym, int *prec)
{
	int dt = r->k->node[n->a].dtype;

	*prec = 0;
	if (dtype_is_float(dt)) {
		if ((*sym = ffunc(r, n->op, dt)) != NULL)
			return 2;
		*prec = infix_prec(n->op, sym);
		return 0;
	}
	switch (n->op) {
	case KO_SHLM: *sym = "<<"; return 3;
	case KO_SHRM: *sym = ">>"; return 3;
	case KO_QUOT: *sym = "/"; *prec = P_MUL; return 0;
	case KO_REM: *sym = "%"; *prec = P_MUL; return 0;
	case KO_ADD: case KO_SUB: case KO_MUL:
		if (wide_signed(dt) && !index_only(r, n)) {
			*prec = infix_prec(n->op, sym);
			return 4;
		}
		break;
	}
	*prec = infix_prec(n->op, sym);
	return 0;
}

/* Does node e's result need a cast back to its type (C int promotion)? */
static int
needs_wrap(R *r, const KNode *n)
{
	const char *sym;
	int prec;

	if (!narrow(n->dtype))
		return 0;
	if (n->kind == KE_UN)
		return n->op == KO_NEG || n->op == KO_BITNOT;
	if (n->kind == KE_BIN && bin_form(r, n, &sym, &prec) == 0)
		return prec == P_ADD || prec == P_MUL ||
		       n->op == KO_BAND || n->op == KO_BOR || n->op == KO_BXOR;
	return 0;
}

/* Precedence of the text that emit_raw prints for e. */
static int
prec_of(R *r, KRef e)
{
	const KNode *n = &r->k->node[e];
	const char *sym;
	int prec;

	if (hoisted(r, e))
		return P_ATOM;
	switch (n->kind) {
	case KE_CONST: case KE_VAR: case KE_SELECT: case KE_FMA:
		return P_ATOM;
	case KE_LOAD:
		return P_ATOM;
	case KE_CAST:
		return n->dtype == DT_BOOL || n->ival ? P_ATOM : P_UNARY;
	case KE_UN:
		if (needs_wrap(r, n))
			return P_UNARY;
		if (n->op == KO_NEG || n->op == KO_NOT || n->op == KO_BITNOT)
			return P_UNARY;
		if (!dtype_is_float(r->k->node[n->a].dtype) &&
		    (n->op == KO_FLOOR || n->op == KO_CEIL || n->op == KO_ROUND))
			return prec_of(r, n->a);
		return P_ATOM;
	case KE_BIN:
		if (needs_wrap(r, n))
			return P_UNARY;
		if (bin_form(r, n, &sym, &prec) >= 3)
			return P_UNARY;
		if (prec == 0)
			return P_ATOM;
		if (n->op == KO_XOR)
			return P_EQ;
		return prec;
	}
	return P_ATOM;
}

static void
emit_const(R *r, const KNode *n)
{
	FILE *f = r->f;
	char buf[64];

	if (dtype_is_float(n->dtype)) {
		double v = n->dtype == DT_F32 ? (double)(float)n->fval : n->fval;
		if (r->free && (isnan(v) || isinf(v))) {   /* no math.h macros */
			int d = n->dtype == DT_F64;
			uint64_t b = isnan(v) ? (d ? 0x7ff8000000000000u : 0x7fc00000u)
			                      : (d ? 0x7ff0000000000000u : 0x7f800000u);
			if (v < 0)
				b |= d ? 0x8000000000000000u : 0x80000000u;
			if (d)
				fprintf(f, "burn_frombits_u64(UINT64_C(0x%" PRIx64 "))", b);
			else
				fprintf(f, "burn_frombits_u32(0x%" PRIx64 "u)", b);
			return;
		}
		if (isnan(v)) {
			fputs("NAN", f);
			return;
		}
		if (isinf(v)) {
			fputs(v < 0 ? "(-INFINITY)" : "INFINITY", f);
			return;
		}
		snprintf(buf, sizeof buf, n->dtype == DT_F32 ? "%.9g" : "%.17g", v);
		if (!strpbrk(buf, ".en"))
			strcat(buf, ".0");
		fprintf(f, v < 0 || (v == 0 && signbit(v)) ? "(%s%s)" : "%s%s", buf,
		        n->dtype == DT_F32 ? "f" : "");
		return;
	}
	switch (n->dtype) {
	case DT_U64:
		fprintf(f, "UINT64_C(%" PRIu64 ")", (uint64_t)n->ival);
		return;
	case DT_U32:
		fprintf(f, "%" PRIu64 "u", (uint64_t)n->ival & 0xffffffffu);
		return;
	}
	if (n->ival == INT64_MIN)
		fputs("(-INT64_C(9223372036854775807) - 1)", f);
	else if (n->ival > 2147483647 || n->ival < -2147483647)
		fprintf(f, n->ival < 0 ? "(-INT64_C(%" PRId64 "))" : "INT64_C(%" PRId64 ")",
		        n->ival < 0 ? -n->ival : n->ival);
	else
		fprintf(f, n->ival < 0 ? "(%" PRId64 ")" : "%" PRId64, n->ival);
}

/* Operands of bitwise, shift, logical and comparison operators get
 * parentheses unless atomic (or arithmetic under a comparison), which is
 * what -Wparentheses wants. */
static int
operand_need(int prec)
{
	if (prec == P_ADD || prec == P_MUL)
		return prec;
	if (prec == P_REL || prec == P_EQ)
		return P_ADD;
	return P_UNARY;
}

static void
emit_raw(R *r, KRef e)
{
	const KKernel *k = r->k;
	const KNode *n = &k->node[e];
	FILE *f = r->f;
	int wrap, adt;
	const char *sym;

	if (hoisted(r, e)) {
		fprintf(f, "t%d", e);
		return;
	}
	switch (n->kind) {
	case KE_CONST:
		emit_const(r, n);
		return;
	case KE_VAR:
		if (r->isloop[n->var] && !r->inscope[n->var]) {
			if (!r->err)
				r->err = burn_fail(r->c, BURN_ERR_INTERNAL,
				                   "render_c %s: loop var %s used outside its loop",
				                   k->name, k->var[n->var].name);
		}
		fputs(r->vname[n->var], f);
		return;
	case KE_LOAD: {
		if (n->b) {   /* guarded: C's ?: reads only where the guard holds */
			fputs("(", f);
			emit(r, n->b, P_LOR);
			fputs(" ? ", f);
		}
		fprintf(f, "b%d[", n->buf);   /* storage: the bits (legalised) */
		emit(r, n->a, 0);
		fputs("]", f);
		if (n->b) {
			fputs(" : ", f);
			emit(r, n->c, P_LOR);
			fputs(")", f);
		}
		return;
	}
	case KE_FMA:     /* one rounding: C99's fmaf / fma */
		if (r->free)
			fputs("burn_fmaf(", f);   /* f32 only (pre_expr) */
		else
			fputs(n->dtype == DT_F32 ? "fmaf(" : "fma(", f);
		emit(r, n->a, 0);
		fputs(", ", f);
		emit(r, n->b, 0);
		fputs(", ", f);
		emit(r, n->c, 0);
		fputs(")", f);
		return;
	case KE_SELECT:
		fputs("(", f);
		emit(r, n->a, P_LOR);
		fputs(" ? ", f);
		emit(r, n->b, P_LOR);
		fputs(" : ", f);
		emit(r, n->c, P_LOR);
		fputs(")", f);
		return;
	case KE_CAST:
		if (n->dtype == DT_BOOL) {
			fputs("(", f);
			emit(r, n->a, P_ADD);
			fputs(" != 0)", f);
		} else {
			fprintf(f, "(%s)", ctype(n->dtype));
			emit(r, n->a, P_ATOM);
		}
		return;
	case KE_UN:
		adt = k->node[n->a].dtype;
		wrap = needs_wrap(r, n);
		if (wrap)
			fprintf(f, "(%s)(", ctype(n->dtype));
		if (n->op == KO_NEG && wide_signed(adt)) {   /* wraps */
			fprintf(f, "(%s)-(%s)", ctype(n->dtype), utype(adt));
			emit(r, n->a, P_ATOM);
		} else if (n->op == KO_NEG || n->op == KO_NOT || n->op == KO_BITNOT) {
			fputs(n->op == KO_NEG ? "-" : n->op == KO_NOT ? "!" : "~", f);
			emit(r, n->a, P_ATOM);
		} else if (n->op == KO_FROMBITS) {
			fprintf(f, "burn_frombits_%s(", adt == DT_U64 ? "u64" : "u32");
			emit(r, n->a, 0);
			fputs(")", f);
		} else if (dtype_is_float(adt) && ffunc(r, n->op, adt)) {
			fprintf(f, "%s(", ffunc(r, n->op, adt));
			emit(r, n->a, 0);
			fputs(")", f);
		} else {   /* floor/ceil/round of integers: identity */
			emit_raw(r, n->a);
		}
		if (wrap)
			fputs(")", f);
		return;
	case KE_BIN: {
		int prec, form = bin_form(r, n, &sym, &prec);
		adt = k->node[n->a].dtype;
		if (form == 2) {
			fprintf(f, "%s(", sym);
			emit(r, n->a, 0);
			fputs(", ", f);
			emit(r, n->b, 0);
			fputs(")", f);
			return;
		}
		if (form == 3) {   /* (T)(a << (b & (w-1))), shl in the unsigned type */
			fprintf(f, "(%s)(", ctype(n->dtype));
			if (n->op == KO_SHLM && !is_unsigned(adt))
				fprintf(f, "(u%s)", ctype(adt));
			emit(r, n->a, P_ATOM);
			fprintf(f, " %s (", sym);
			emit(r, n->b, P_UNARY);   /* -Wparentheses */
			fprintf(f, " & %d))", bits(adt) - 1);
			return;
		}
		if (form == 4) {   /* (T)((U)a op (U)b): wraps */
			fprintf(f, "(%s)((%s)", ctype(n->dtype), utype(adt));
			emit(r, n->a, P_ATOM);
			fprintf(f, " %s (%s)", sym, utype(adt));
			emit(r, n->b, P_ATOM);
			fputs(")", f);
			return;
		}
		wrap = needs_wrap(r, n);
		if (wrap)
			fprintf(f, "(%s)(", ctype(n->dtype));
		if (n->op == KO_XOR) {
			fputs("!", f);
			emit(r, n->a, P_ATOM);
			fputs(" != !", f);
			emit(r, n->b, P_ATOM);
		} else if (n->op == KO_MUL && adt == DT_U16) {
			/* u16*u16 overflows int: multiply as uint32_t */
			fputs("(uint32_t)", f);
			emit(r, n->a, P_ATOM);
			fputs(" * ", f);
			emit(r, n->b, P_ATOM);
		} else {
			int need = operand_need(prec);
			emit(r, n->a, need);
			fprintf(f, " %s ", sym);
			emit(r, n->b, need == prec ? prec + 1 : need);
		}
		if (wrap)
			fputs(")", f);
		return;
	}
	}
}

static void
emit(R *r, KRef e, int need)
{
	if (prec_of(r, e) < need) {
		fputs("(", r->f);
		emit_raw(r, e);
		fputs(")", r->f);
	} else {
		emit_raw(r, e);
	}
}

/* ---- hoisting shared subexpressions ------------------------------------ */

#define MIXED (-1)
#define DEPTH_MAX 32   /* nodes; at most 3 brackets each */

/* Scope of one side of guarded load `sel`: arm 0 where its guard holds
 * (the index), 1 where it does not (the default). */
static int
arm_scope(KRef sel, int arm)
{
	return 2 * sel + arm + 1;
}

/* Is scope a the same as scope b or one that encloses it? */
static int
encloses(R *r, int a, int b)
{
	while (b > 0 && b != a)
		b = r->home[(b - 1) / 2];
	return a == b;
}

static void
count(R *r, KRef e, int scope)
{
	const KNode *n = &r->k->node[e];
	int first = r->stamp[e] != r->sid, old = first ? scope : r->home[e], h;

	if (first) {
		r->stamp[e] = r->sid;
		r->cnt[e] = 0;
		r->hoist[e] = 0;
		r->estamp[e] = 0;
		r->list[r->nlist++] = e;
	}
	r->cnt[e]++;
	if (old == MIXED || scope == MIXED)
		h = MIXED;
	else if (encloses(r, old, scope))
		h = old;
	else if (encloses(r, scope, old))
		h = scope;        /* also needed further out */
	else
		h = MIXED;        /* two arms that need not both run */
	r->home[e] = h;
	if (!first && h == old)
		return;
	switch (n->kind) {
	case KE_LOAD:
		if (n->b) {   /* guarded: the index only where the guard holds */
			count(r, n->b, h);
			count(r, n->a, h == MIXED ? MIXED : arm_scope(e, 0));
			count(r, n->c, h == MIXED ? MIXED : arm_scope(e, 1));
			break;
		}
		count(r, n->a, h);
		break;
	case KE_UN: case KE_CAST:
		count(r, n->a, h);
		break;
	case KE_BIN:
		count(r, n->a, h);
		count(r, n->b, h);
		break;
	case KE_SELECT:   /* eager in the kernel IR: both arms are computed */
	case KE_FMA:
		count(r, n->a, h);
		count(r, n->b, h);
		count(r, n->c, h);
		break;
	}
}

/* Nesting depth of e as printed, in nodes; hoists e (marks it to be
 * named) where that passes DEPTH_MAX and e has a scope to be named in. */
static int
depth(R *r, KRef e)
{
	const KNode *n = &r->k->node[e];
	int d = 0, x;

	if (r->hstamp[e] == r->sid)
		return r->dep[e];
	r->hstamp[e] = r->sid;
	switch (n->kind) {
	case KE_SELECT: case KE_FMA: case KE_LOAD:   /* a guarded load: b, c too */
		if (n->c) {
			x = depth(r, n->c);
			d = x > d ? x : d;
		}
		/* fall through */
	case KE_BIN:
		if (n->b) {
			x = depth(r, n->b);
			d = x > d ? x : d;
		}
		/* fall through */
	case KE_UN: case KE_CAST:
		x = depth(r, n->a);
		d = x > d ? x : d;
		break;
	}
	d++;
	if (!r->hoist[e] && d > DEPTH_MAX && r->home[e] != MIXED &&
	    n->kind != KE_CONST && n->kind != KE_VAR)
		r->hoist[e] = 1;
	if (r->hoist[e])
		d = 1;
	return r->dep[e] = d;
}

static int define_hoists(R *r, KRef e, int ind, int any);

static int
open_block(R *r, int ind, int any)
{
	if (!any) {
		tabs(r->f, ind);
		fputs("{\n", r->f);
	}
	return 1;
}

/* Print `const int gK = ...;` for scope K > 0 (and the scopes around it)
 * unless done: non-zero exactly when the code under K runs. */
static int
define_guard(R *r, int scope, int ind, int any)
{
	KRef sel = (scope - 1) / 2;   /* a guarded load: its guard */
	KRef cond = r->k->node[sel].b;
	int outer = r->home[sel];

	if (r->gstamp[scope] == r->sid)
		return any;
	r->gstamp[scope] = r->sid;
	if (outer > 0)
		any = define_guard(r, outer, ind, any);
	any = define_hoists(r, cond, ind, any);
	any = open_block(r, ind, any);
	tabs(r->f, ind + 1);
	fprintf(r->f, "const int g%d = ", scope);
	if (outer > 0)
		fprintf(r->f, "g%d && ", outer);
	if ((scope - 1) % 2) {
		fputs("!", r->f);
		emit(r, cond, P_ATOM);
	} else {
		emit(r, cond, outer > 0 ? P_UNARY : 0);
	}
	fputs(";\n", r->f);
	return any;
}

/* Print the definitions of hoisted nodes under e, operands first. */
static int
define_hoists(R *r, KRef e, int ind, int any)
{
	const KNode *n = &r->k->node[e];
	int scope = r->home[e];

	if (r->estamp[e] || scope == MIXED)
		return any;
	r->estamp[e] = 1;
	switch (n->kind) {
	case KE_LOAD: case KE_SELECT: case KE_FMA:
		if (n->b) {
			any = define_hoists(r, n->b, ind, any);
			any = define_hoists(r, n->c, ind, any);
		}
		any = define_hoists(r, n->a, ind, any);
		break;
	case KE_UN: case KE_CAST:
		any = define_hoists(r, n->a, ind, any);
		break;
	case KE_BIN:
		any = define_hoists(r, n->a, ind, any);
		any = define_hoists(r, n->b, ind, any);
		break;
	}
	if (r->hoist[e]) {
		if (scope > 0)
			any = define_guard(r, scope, ind, any);
		any = open_block(r, ind, any);
		tabs(r->f, ind + 1);
		fprintf(r->f, "const %s t%d = ", ctype(n->dtype), e);
		if (scope > 0)
			fprintf(r->f, "g%d ? ", scope);
		r->defining = e;
		emit(r, e, scope > 0 ? P_LOR : 0);
		r->defining = 0;
		if (scope > 0)
			fprintf(r->f, " : (%s)0", ctype(n->dtype));
		fputs(";\n", r->f);
	}
	return any;
}

/* Set up hoisting for a statement with expression roots e[0..ne-1]; prints
 * `{` and the definitions if any.  Returns whether a block was opened. */
static int
begin_stmt(R *r, const KRef *e, int ne, int ind)
{
	const KKernel *k = r->k;
	int i, any = 0;

	r->sid++;
	r->nlist = 0;
	for (i = 0; i < ne; i++)
		count(r, e[i], 0);
	for (i = 0; i < r->nlist; i++) {
		KRef x = r->list[i];
		const KNode *n = &k->node[x];
		if (r->cnt[x] > 1 && r->home[x] == 0 && n->kind != KE_CONST &&
		    n->kind != KE_VAR)
			r->hoist[x] = 1;
	}
	for (i = 0; i < ne; i++)
		depth(r, e[i]);
	for (i = 0; i < ne; i++)
		any = define_hoists(r, e[i], ind, any);
	return any;
}

/* ---- statements -------------------------------------------------------- */

/*
 * Does store s print as BURN_FMA(x, y, b[i])?  When the schedule marks it
 * as an accumulation b[i] = b[i] + x*y (*prod: the product x*y), and
 * neither the sum nor the product was named as a temporary (then it is
 * printed plain, as written).  BURN_FMA is one fused multiply-add where the
 * C compiler has them fast (the prelude).
 */
static int
accumulate(R *r, KRef s, KRef *prod)
{
	const KKernel *k = r->k;
	const KNode *n = &k->node[s];
	int which = ksched_fma(k->sched, s);

	if (!which || hoisted(r, n->b))
		return 0;
	*prod = which == 1 ? k->node[n->b].a : k->node[n->b].b;
	return !hoisted(r, *prod);
}

static void block(R *r, KRef s, int ind);

/* `for (v = a; v < b; ++v) { body }` at indent in. */
static void
for_loop(R *r, const KNode *n, int in)
{
	FILE *f = r->f;

	tabs(f, in);
	fprintf(f, "for (int64_t %s = ", r->vname[n->var]);
	emit(r, n->a, 0);
	fprintf(f, "; %s < ", r->vname[n->var]);
	emit(r, n->b, P_SHIFT);
	fprintf(f, "; ++%s) {\n", r->vname[n->var]);
	r->inscope[n->var] = 1;
	block(r, n->body, in + 1);
	r->inscope[n->var] = 0;
	tabs(f, in);
	fputs("}\n", f);
}

static void
block(R *r, KRef s, int ind)
{
	const KKernel *k = r->k;
	FILE *f = r->f;

	for (; s; s = k->node[s].next) {
		const KNode *n = &k->node[s];
		KRef roots[2] = { n->a, n->b };
		int open = 0, in = ind;

		switch (n->kind) {
		case KS_FOR: {
			const KThreads *th = threaded(k, s);
			open = begin_stmt(r, roots, 2, ind);
			in = ind + open;
			if (th) {
				/* variables never read and buffers never used are
				 * not declared, so not named */
				int first = 1;
				fputs("#ifdef _OPENMP\n", f);
				tabs(f, in);
				fputs("{ static burn_omp_loop burn_l; int burn_nt = burn_omp_team(&burn_l);\n", f);
				tabs(f, in);
				fputs("if (burn_nt > 1) { double burn_t0 = omp_get_wtime(), burn_mine = 0;\n", f);
				fputs("#pragma omp parallel num_threads(burn_nt)", f);
				for (int i = 0; i < th->nvar; i++)
					if (r->vread[th->var[i]]) {
						fprintf(f, "%s%s", first ? " private(" : ", ",
						        r->vname[th->var[i]]);
						first = 0;
					}
				for (int i = 0; i < th->nbuf; i++)
					if (r->bused[th->buf[i]]) {
						fprintf(f, "%sb%d", first ? " private(" : ", ", th->buf[i]);
						first = 0;
					}
				fputs(first ? "\n" : ")\n", f);
				tabs(f, in);
				fputs("{ double burn_s = omp_get_wtime();\n", f);
				fputs("#pragma omp for schedule(static) nowait\n", f);
				for_loop(r, n, in);
				tabs(f, in);
				fputs("if (omp_get_thread_num() == 0)\n", f);
				tabs(f, in + 1);
				fputs("burn_mine = omp_get_wtime() - burn_s;\n", f);
				tabs(f, in);
				fputs("}\n", f);
				tabs(f, in);
				fputs("burn_omp_judge(&burn_l, burn_nt, omp_get_wtime() - burn_t0, burn_mine);\n", f);
				tabs(f, in);
				fputs("} else\n#endif\n", f);
			}
			for_loop(r, n, in);
			if (th)
				fputs("#ifdef _OPENMP\n}\n#endif\n", f);
			break;
		}
		case KS_IF:
			open = begin_stmt(r, roots, 1, ind);
			in = ind + open;
			tabs(f, in);
			fputs("if (", f);
			emit(r, n->a, 0);
			fputs(") {\n", f);
			block(r, n->body, in + 1);
			if (n->orelse) {
				tabs(f, in);
				fputs("} else {\n", f);
				block(r, n->orelse, in + 1);
			}
			tabs(f, in);
			fputs("}\n", f);
			break;
		case KS_STORE: {
			KRef prod;
			open = begin_stmt(r, roots, 2, ind);
			in = ind + open;
			tabs(f, in);
			fprintf(f, "b%d[", n->buf);
			emit(r, n->a, 0);
			fputs("] = ", f);
			if (accumulate(r, s, &prod)) {
				fputs("BURN_FMA(", f);
				emit(r, k->node[prod].a, 0);
				fputs(", ", f);
				emit(r, k->node[prod].b, 0);
				fputs(", ", f);
				emit(r, k->node[n->b].a == prod ? k->node[n->b].b : k->node[n->b].a, 0);
				fputs(")", f);
			} else {
				emit(r, n->b, P_TERN);
			}
			fputs(";\n", f);
			break;
		}
		case KS_SET:
			if (!r->vread[n->var])
				break;   /* never read: drop (expressions are pure) */
			open = begin_stmt(r, roots, 1, ind);
			in = ind + open;
			tabs(f, in);
			fprintf(f, "%s = ", r->vname[n->var]);
			emit(r, n->a, P_TERN);
			fputs(";\n", f);
			break;
		case KS_BARRIER:
			break;
		}
		if (open) {
			tabs(f, ind);
			fputs("}\n", f);
		}
	}
}

/* A call kernel (kir.h): the call of its routine of runtime/strings.inc,
 * which the module carries (emit_c.c). */
static int
render_call(Ctx *c, const KKernel *k, FILE *f)
{
	const KCall *cl = k->call;
	int i, n;

	TRY(kir_verify(c, k));
	fprintf(f, "static void %s(", k->name);
	for (i = 0, n = 0; i < k->nbuf; i++) {
		const KBuf *b = &k->buf[i];
		if (!ctype(b->dtype))
			return burn_fail(c, BURN_ERR_UNSUPPORTED, "render_c %s: dtype %s",
			                 k->name, dtype_name(b->dtype));
		fprintf(f, "%s%s%s *restrict b%d", n++ ? ", " : "",
		        b->access == KA_READ ? "const " : "", ctype(b->dtype), i);
	}
	fprintf(f, "%s)\n{\n\t%s(", n ? "" : "void", kcall_name(cl->fn));
	for (i = 0; i < cl->nbuf; i++)
		fprintf(f, "%sb%d", i ? ", " : "", cl->buf[i]);
	for (i = 0; i < cl->narg; i++)
		fprintf(f, "%s%" PRId64, i || cl->nbuf ? ", " : "", cl->arg[i]);
	fputs(");\n}\n", f);
	return ferror(f) ? burn_fail(c, BURN_ERR_IO, "write error") : BURN_OK;
}

static int
render(Ctx *c, const KKernel *k, FILE *f, int free_)
{
	/* freestanding: the C library's math expanded too (target_cpu_free) */
	static const KCaps none = { 0 };
	R r;
	int i, n, rc;
	size_t nn = (size_t)k->nnode, nv = (size_t)k->nvar + 1;
	size_t nb = (size_t)k->nbuf + 1;

	if (k->call)
		return render_call(c, k, f);
	TRY(kir_check_legal(c, k, "render_c", free_ ? &none : &kcaps_libm, 0));
	memset(&r, 0, sizeof r);
	r.free = free_;
	r.c = c;
	r.k = k;
	r.f = f;
	r.vname = calloc(nv, sizeof *r.vname);
	r.vread = calloc(nv, 1);
	r.isloop = calloc(nv, 1);
	r.inscope = calloc(nv, 1);
	r.bread = calloc(nb, 1);
	r.bused = calloc(nb, 1);
	r.seen = calloc(nn, 1);
	r.home = calloc(nn, sizeof *r.home);
	r.hstamp = calloc(nn, sizeof *r.hstamp);
	r.dep = calloc(nn, sizeof *r.dep);
	r.gstamp = calloc(2 * nn + 2, sizeof *r.gstamp);
	r.hoist = calloc(nn, 1);
	r.stamp = calloc(nn, sizeof *r.stamp);
	r.cnt = calloc(nn, sizeof *r.cnt);
	r.estamp = calloc(nn, sizeof *r.estamp);
	r.list = calloc(nn, sizeof *r.list);
	if (!r.vname || !r.vread || !r.isloop || !r.inscope || !r.bread ||
	    !r.bused || !r.seen || !r.home || !r.hstamp || !r.dep || !r.gstamp ||
	    !r.hoist || !r.stamp || !r.cnt ||
	    !r.estamp || !r.list) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "render_c: out of memory");
		goto done;
	}
	for (i = 0; i < k->nbuf; i++)
		if (!ctype(k->buf[i].dtype)) {
			rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "render_c %s: dtype %s",
			               k->name, dtype_name(k->buf[i].dtype));
			goto done;
		}
	pre_block(&r, k->body);
	name_vars(&r);

	/* signature */
	fprintf(f, "static void %s(", k->name);
	for (i = 0, n = 0; i < k->nbuf; i++) {
		const KBuf *b = &k->buf[i];
		if (b->space != KS_GLOBAL)
			continue;
		fprintf(f, "%s%s%s *restrict b%d", n++ ? ", " : "",
		        b->access == KA_READ ? "const " : "", ctype(b->dtype), i);
	}
	/* dim parameters after the buffers (kir.h: variables 0 .. ndim-1) */
	for (i = 0; i < k->ndim; i++)
		fprintf(f, "%sint64_t %s", n++ ? ", " : "", r.vname[i]);
	fprintf(f, "%s)\n{\n", n ? "" : "void");
	for (i = 0; i < k->ndim; i++)
		if (!r.vread[i])
			fprintf(f, "\t(void)%s;\n", r.vname[i]);

	/* unused parameters, locals, variables */
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *b = &k->buf[i];
		if (b->space == KS_GLOBAL) {
			if (!r.bused[i])
				fprintf(f, "\t(void)b%d;\n", i);
		} else if (r.bused[i]) {
			fprintf(f, "\t%s b%d[%" PRId64 "];\n", ctype(b->dtype), i,
			        b->count > 0 ? b->count : 1);
			if (!r.bread[i])
				fprintf(f, "\t(void)b%d;\n", i);
		}
	}
	for (i = k->ndim; i < k->nvar; i++)
		if (r.vread[i] && !r.isloop[i])
			fprintf(f, "\t%s %s = 0;\n", ctype(k->var[i].dtype), r.vname[i]);

	block(&r, k->body, 1);
	fputs("}\n", f);
	rc = r.err;
done:
	free(r.vname);
	free(r.vread);
	free(r.isloop);
	free(r.inscope);
	free(r.bread);
	free(r.bused);
	free(r.seen);
	free(r.home);
	free(r.hstamp);
	free(r.dep);
	free(r.gstamp);
	free(r.hoist);
	free(r.stamp);
	free(r.cnt);
	free(r.estamp);
	free(r.list);
	return rc;
}

int
render_c_kernel(Ctx *c, const KKernel *k, FILE *f)
{
	return render(c, k, f, 0);
}

int
render_c_kernel_free(Ctx *c, const KKernel *k, FILE *f)
{
	return render(c, k, f, 1);
}

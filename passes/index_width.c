/*
 * index_width.c - an interval analysis of a kernel's i64 values (see
 * index_width.h).
 *
 * Each variable gets the join of every value it takes: a loop variable
 * its [lo, hi - 1], a set variable the intervals of the expressions
 * assigned to it.  The kernel is walked until no variable's interval
 * grows (at most PASSES times: a value that grows every iteration, like a
 * counter, never settles and proves nothing).  Expressions are evaluated
 * with interval arithmetic; anything the rules below do not cover (an i64
 * loaded from memory, a float converted to an integer, a division whose
 * divisor may be 0) is unbounded.  Endpoints beyond +-2^61 are unbounded
 * too, so no interval arithmetic here overflows (sums stay within 2^62,
 * and products are formed only of factors up to 2^31, or of +-1).
 */
#include <stdlib.h>
#include <string.h>
#include "index_width.h"
#include "passes.h"

#define BIG ((int64_t)1 << 61)
#define PASSES 4

typedef struct Iv {
	int64_t lo, hi;
	int top;         /* unbounded */
	int none;        /* no value yet (a variable not yet assigned) */
} Iv;

typedef struct A {
	const KKernel *k;
	Iv *var;         /* per variable */
	Iv *memo;        /* per node, valid where stamp == pass */
	int *stamp, pass;
	int grew;        /* a variable's interval grew this pass */
	int64_t lo, hi;  /* over every i64 value seen */
	int top;
} A;

static const Iv TOP = { 0, 0, 1, 0 };

static Iv
iv(int64_t lo, int64_t hi)
{
	Iv r = { lo, hi, 0, 0 };
	if (lo < -BIG || hi > BIG || lo > hi)
		r.top = 1;
	return r;
}

static Iv
join(Iv a, Iv b)
{
	if (a.none)
		return b;
	if (b.none)
		return a;
	if (a.top || b.top)
		return TOP;
	return iv(a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi);
}

/* The range of integer dtype dt. */
static Iv
of_type(int dt)
{
	switch (dt) {
	case DT_BOOL: return iv(0, 1);
	case DT_I8: return iv(-128, 127);
	case DT_U8: return iv(0, 255);
	case DT_I16: return iv(-32768, 32767);
	case DT_U16: return iv(0, 65535);
	case DT_I32: return iv(INT32_MIN, INT32_MAX);
	case DT_U32: return iv(0, UINT32_MAX);
	}
	return TOP;
}

static int64_t
min4(int64_t a, int64_t b, int64_t c, int64_t d)
{
	int64_t m = a < b ? a : b;
	m = m < c ? m : c;
	return m < d ? m : d;
}

static int64_t
max4(int64_t a, int64_t b, int64_t c, int64_t d)
{
	int64_t m = a > b ? a : b;
	m = m > c ? m : c;
	return m > d ? m : d;
}

static int64_t
absmax(Iv a)
{
	int64_t x = a.lo < 0 ? -a.lo : a.lo, y = a.hi < 0 ? -a.hi : a.hi;
	return x > y ? x : y;
}

static Iv
mul(Iv a, Iv b)
{
	if (absmax(a) > ((int64_t)1 << 31) && absmax(b) > 1)
		return TOP;
	if (absmax(b) > ((int64_t)1 << 31) && absmax(a) > 1)
		return TOP;
	return iv(min4(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi),
	          max4(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi));
}

static Iv
bin(int op, Iv a, Iv b)
{
	if (a.top || b.top || a.none || b.none)
		return TOP;
	switch (op) {
	case KO_ADD: return iv(a.lo + b.lo, a.hi + b.hi);
	case KO_SUB: return iv(a.lo - b.hi, a.hi - b.lo);
	case KO_MUL: return mul(a, b);
	case KO_DIV: case KO_QUOT:
		if (b.lo > 0 || b.hi < 0)   /* divisor never 0: |a / b| <= |a| */
			return iv(min4(a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi),
			          max4(a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi));
		return iv(-absmax(a), absmax(a));   /* x / 0 is 0 */
	case KO_MOD: case KO_REM: {
		/* sign of the dividend, |r| < |b| and |r| <= |a| (x % 0 is 0) */
		int64_t m = absmax(b) - 1 < absmax(a) ? absmax(b) - 1 : absmax(a);
		if (m < 0)
			m = 0;
		return iv(a.lo >= 0 ? 0 : -m, a.hi <= 0 ? 0 : m);
	}
	case KO_MIN: return iv(a.lo < b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi);
	case KO_MAX: return iv(a.lo > b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi);
	case KO_SHL: case KO_SHLM:
		if (b.lo == b.hi && b.lo >= 0 && b.lo < 31)
			return mul(a, iv((int64_t)1 << b.lo, (int64_t)1 << b.lo));
		return TOP;
	case KO_SHR: case KO_SHRM:
		if (b.lo == b.hi && b.lo >= 0 && b.lo < 63)
			return iv(a.lo >> b.lo, a.hi >> b.lo);
		if (b.lo >= 0 && b.hi < 63)   /* between a >> hi and a */
			return iv(a.lo < 0 ? a.lo : 0, a.hi > 0 ? a.hi : 0);
		return TOP;
	case KO_BAND:
		if (a.lo >= 0 && b.lo >= 0)
			return iv(0, a.hi < b.hi ? a.hi : b.hi);
		if (a.lo >= 0)
			return iv(0, a.hi);
		if (b.lo >= 0)
			return iv(0, b.hi);
		return TOP;
	case KO_BOR: case KO_BXOR:
		if (a.lo >= 0 && b.lo >= 0) {
			int64_t m = a.hi > b.hi ? a.hi : b.hi, p = 1;
			while (p <= m)
				p <<= 1;
			return iv(0, p - 1);
		}
		return TOP;
	}
	return TOP;
}

static void
see(A *s, KRef e, Iv r)
{
	if (s->k->node[e].dtype != DT_I64)
		return;
	if (r.top || r.none) {
		s->top = 1;
		return;
	}
	s->lo = r.lo < s->lo ? r.lo : s->lo;
	s->hi = r.hi > s->hi ? r.hi : s->hi;
}

static Iv
eval(A *s, KRef e)
{
	const KNode *n;
	Iv r = TOP, a, b;

	if (e <= 0 || e >= s->k->nnode)
		return TOP;
	if (s->stamp[e] == s->pass)
		return s->memo[e];
	n = &s->k->node[e];
	switch (n->kind) {
	case KE_CONST:
		if (!dtype_is_float(n->dtype))
			r = iv(n->ival, n->ival);
		break;
	case KE_VAR:
		r = s->var[n->var];
		if (r.none)
			r = TOP;   /* read before any assignment */
		break;
	case KE_LOAD:
		eval(s, n->a);
		r = of_type(n->dtype);
		if (n->b) {
			eval(s, n->b);
			r = join(r, eval(s, n->c));
		}
		break;
	case KE_UN:
		a = eval(s, n->a);
		if (a.top || dtype_is_float(n->dtype))
			break;
		switch (n->op) {
		case KO_NEG: r = iv(-a.hi, -a.lo); break;
		case KO_ABS: r = iv(a.lo >= 0 ? a.lo : 0, absmax(a)); break;
		case KO_BITNOT: r = iv(-a.hi - 1, -a.lo - 1); break;
		case KO_FLOOR: case KO_CEIL: case KO_ROUND: r = a; break;
		default: r = n->dtype == DT_BOOL ? iv(0, 1) : TOP;
		}
		break;
	case KE_BIN:
		a = eval(s, n->a);
		b = eval(s, n->b);
		if (n->dtype == DT_BOOL)
			r = iv(0, 1);
		else if (!dtype_is_float(n->dtype))
			r = bin(n->op, a, b);
		break;
	case KE_SELECT:
		eval(s, n->a);
		r = join(eval(s, n->b), eval(s, n->c));
		break;
	case KE_FMA:   /* a float: only its operands' indices matter */
		eval(s, n->a);
		eval(s, n->b);
		eval(s, n->c);
		break;
	case KE_CAST:
		a = eval(s, n->a);
		if (dtype_is_float(n->dtype))
			break;
		r = of_type(n->dtype);   /* wraps or saturates into the type */
		if (!dtype_is_float(kb_dtype(s->k, n->a)) && !a.top &&
		    (n->dtype == DT_I64 || (!r.top && a.lo >= r.lo && a.hi <= r.hi)))
			r = a;               /* the value is kept */
		break;
	case KE_SPECIAL:
		r = iv(0, INT32_MAX);   /* thread and block indices */
		break;
	}
	see(s, e, r);
	s->stamp[e] = s->pass;
	s->memo[e] = r;
	return r;
}

static void
assign(A *s, int v, Iv r)
{
	Iv old = s->var[v], j = join(old, r);

	if (old.none != j.none || old.top != j.top || old.lo != j.lo ||
	    old.hi != j.hi)
		s->grew = 1;
	s->var[v] = j;
}

/* A GPU statement (kops.def, KGPU rows): its operands; the last element
 * a vector or tile op touches (base + (rows-1)*stride + cols-1, at most
 * 16 rows and columns); a result variable as unbounded, except a shuffle's
 * (one of the lanes' values). */
static void
gpu_stmt(A *s, const KNode *n)
{
	Iv a = n->a ? eval(s, n->a) : TOP, b = n->b ? eval(s, n->b) : TOP, c = TOP;

	if (n->c)
		c = eval(s, n->c);
	if (n->kind == KS_WGMMA) {
		/* A's 64 rows of 64 from a; B's 16 rows of 64 in up to 4 groups
		 * c apart from b (kir.h) */
		if (a.top || b.top || c.top || c.hi < 0 || c.hi > INT32_MAX || a.hi > BIG / 2 ||
		    b.hi > BIG / 2)
			s->top = 1;
		else {
			if (a.hi + 64 * 64 > s->hi)
				s->hi = a.hi + 64 * 64;
			if (b.hi + 3 * c.hi + 1024 > s->hi)
				s->hi = b.hi + 3 * c.hi + 1024;
		}
	}
	if (n->kind == KS_TLOAD || n->kind == KS_TSTORE) {
		if (a.top || b.top || b.lo < 0 || b.hi > INT32_MAX || a.lo < -BIG / 2 ||
		    a.hi > BIG / 2)
			s->top = 1;
		else if (a.hi + 15 * b.hi + 15 > s->hi)
			s->hi = a.hi + 15 * b.hi + 15;
	}
	if ((n->kind == KS_VCOPY || n->kind == KS_CPASYNC) && !a.top && !b.top) {
		int64_t m = (a.hi > b.hi ? a.hi : b.hi) + n->ival;
		if (m > s->hi)
			s->hi = m;
	}
	if (n->var >= 0 && n->var < s->k->nvar &&
	    (n->kind == KS_SHFL || n->kind == KS_SGRED || n->kind == KS_ATOMIC))
		assign(s, n->var, n->kind == KS_SHFL ? a : TOP);
}

static void
walk(A *s, KRef st)
{
	for (; st > 0 && st < s->k->nnode; st = s->k->node[st].next) {
		const KNode *n = &s->k->node[st];
		Iv lo, hi;
		switch (n->kind) {
		case KS_FOR:
			lo = eval(s, n->a);
			hi = eval(s, n->b);
			if (lo.top || hi.top)
				assign(s, n->var, TOP);
			else if (hi.hi > lo.lo)
				assign(s, n->var, iv(lo.lo, hi.hi - 1));
			walk(s, n->body);
			break;
		case KS_STORE:
			eval(s, n->a);
			eval(s, n->b);
			break;
		case KS_SET:
			assign(s, n->var, eval(s, n->a));
			break;
		case KS_IF:
			eval(s, n->a);
			walk(s, n->body);
			walk(s, n->orelse);
			break;
		default:
			if (kgpu_name(n->kind))
				gpu_stmt(s, n);
			break;
		}
	}
}

int
kir_index_range(const KKernel *k, int64_t *lo, int64_t *hi)
{
	A s;
	int ok = 0;

	memset(&s, 0, sizeof s);
	s.k = k;
	s.var = calloc((size_t)k->nvar + 1, sizeof *s.var);
	s.memo = calloc((size_t)k->nnode + 1, sizeof *s.memo);
	s.stamp = calloc((size_t)k->nnode + 1, sizeof *s.stamp);
	if (s.var && s.memo && s.stamp) {
		for (int v = 0; v < k->nvar; v++)
			s.var[v].none = 1;
		for (s.pass = 1; s.pass <= PASSES; s.pass++) {
			s.grew = 0;
			s.top = 0;
			s.lo = INT64_MAX;
			s.hi = INT64_MIN;
			walk(&s, k->body);
			if (!s.grew)
				break;
		}
		ok = !s.grew && !s.top;
		if (s.lo > s.hi)   /* no i64 value at all */
			s.lo = s.hi = 0;
		*lo = s.lo;
		*hi = s.hi;
	}
	free(s.var);
	free(s.memo);
	free(s.stamp);
	return ok;
}

int
pass_index_width(Ctx *c, KProgram *p, int bits, int64_t limit)
{
	for (int i = 0; i < p->nkernel; i++) {
		KKernel *k = p->kernel[i];
		KSched *ks = (KSched *)k->sched;
		int64_t lo, hi;
		if (!ks)
			continue;
		ks->index_bits = 64;
		if (bits == 32 && kir_index_range(k, &lo, &hi) &&
		    lo >= -limit && hi < limit)
			ks->index_bits = 32;
	}
	(void)c;
	return BURN_OK;
}

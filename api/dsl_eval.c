/*
 * dsl_eval.c - the .burn tree walker (api/dsl.h): values, bindings,
 * expressions, calls of functions, modules and methods, the top-level
 * items, and tracing for AOT.  Builtins, layers and ops are in dsl_lib.c.
 *
 * Scoping: a function sees its own parameters and `let`s (its frame) and
 * the top-level bindings, nothing of its callers.  `let` of a name already
 * bound in the same frame replaces the binding (shadowing), and the old
 * value is released at once: that is what lets libburn update a tensor in
 * place in `let x = x * 2;`.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "dsl_int.h"
#include "../frontend/onnx.h"

/* ---- values ---------------------------------------------------------- */

Val
val_num(double x, int is_int)
{
	Val v = { 0 };

	v.kind = VK_NUM;
	v.num = x;
	v.is_int = is_int;
	return v;
}

/* The kinds whose Val owns a reference to an Obj. */
static int
owns_obj(int kind)
{
	return kind == VK_LIST || kind == VK_MODULE || kind == VK_LAYER || kind == VK_GRAPH;
}

Val
val_dup(Val v)
{
	if (v.kind == VK_TENSOR && v.t)
		burn_retain(v.t);
	else if (owns_obj(v.kind) && v.o)
		v.o->refs++;
	return v;
}

static void
obj_free(Obj *o)
{
	for (int i = 0; i < o->n; i++)
		val_drop(o->v[i]);
	free(o->v);
	for (int k = 0; k < 4; k++)
		burn_release(o->param[k]);
	burn_call_destroy(o->call);
	if (o->g)
		graph_destroy(o->g);
	free(o);
}

void
val_drop(Val v)
{
	if (v.kind == VK_TENSOR)
		burn_release(v.t);
	else if (owns_obj(v.kind) && v.o && --v.o->refs == 0)
		obj_free(v.o);
}

Obj *
obj_new(DslVm *vm, int kind, int n)
{
	Obj *o = calloc(1, sizeof *o);

	if (!o || (n > 0 && !(o->v = calloc((size_t)n, sizeof *o->v)))) {
		free(o);
		burn_fail(&vm->c, BURN_ERR_NOMEM, "out of memory");
		return NULL;
	}
	o->refs = 1;
	o->kind = kind;
	o->n = n;
	return o;
}

const char *
val_kind_name(const Val *v)
{
	switch (v->kind) {
	case VK_NONE: return "nothing";
	case VK_NUM: return "a number";
	case VK_STR: return "a string";
	case VK_DTYPE: return "a dtype";
	case VK_TENSOR: return "a tensor";
	case VK_LIST: return "a list";
	case VK_FN: return "a function";
	case VK_MODTYPE: return "a module type";
	case VK_MODULE: return "a module";
	case VK_LAYER: return "a layer";
	case VK_GRAPH: return "an imported model";
	case VK_BUILTIN: return "a builtin function";
	case VK_OP: return "an op";
	}
	return "a value";
}

/* ---- errors ---------------------------------------------------------- */

const char *
vm_srcname(const DslVm *vm)
{
	return vm->cur && vm->cur->name ? vm->cur->name : "<input>";
}

int
vm_fail(DslVm *vm, DslPos pos, int code, const char *fmt, ...)
{
	char msg[800];
	va_list ap;

	if (vm->c.code != BURN_OK)
		return vm->c.code;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	vm->pos = pos;
	vm->errsrc = vm->cur;
	if (pos.line > 0)
		return burn_fail(&vm->c, code, "%s:%d:%d: error: %s", vm_srcname(vm),
		                 pos.line, pos.col, msg);
	return burn_fail(&vm->c, code, "%s: error: %s", vm_srcname(vm), msg);
}

int
vm_burn(DslVm *vm, DslPos pos, burn_status st, const char *what)
{
	const char *m = burn_message(vm->bc);

	if (st == BURN_STATUS_LIMIT && vm->stop)
		return vm_fail(vm, pos, BURN_ERR_LIMIT, "interrupted");
	return vm_fail(vm, pos, (int)st, "%s%s%s", what ? what : "", what && *m ? ": " : "",
	               *m ? m : burn_code_name((int)st));
}

/* ---- lists to tensors ------------------------------------------------ */

/* The shape of a nested list of numbers (and 0-d things), checking that it
 * is rectangular.  depth: dims found so far. */
static int
list_shape(DslVm *vm, DslPos pos, const Val *v, int depth, int *rank, int64_t *dim,
           int64_t *count)
{
	if (v->kind == VK_NUM) {
		if (*rank < 0)
			*rank = depth;
		else if (*rank != depth)
			return vm_fail(vm, pos, BURN_ERR_SHAPE, "ragged list: a number where "
			               "a list of %d levels was expected", *rank - depth);
		(*count)++;
		return BURN_OK;
	}
	if (v->kind != VK_LIST)
		return vm_fail(vm, pos, BURN_ERR_SHAPE, "a tensor literal holds numbers "
		               "and lists of numbers, not %s", val_kind_name(v));
	if (depth >= BURN_MAX_RANK)
		return vm_fail(vm, pos, BURN_ERR_SHAPE, "list nested deeper than %d "
		               "levels", BURN_MAX_RANK);
	if (*rank >= 0 && depth >= *rank)
		return vm_fail(vm, pos, BURN_ERR_SHAPE, "ragged list: a list where a "
		               "number was expected");
	if (*rank >= 0 && dim[depth] != v->o->n)
		return vm_fail(vm, pos, BURN_ERR_SHAPE, "ragged list: %d items at depth "
		               "%d where an earlier list had %lld", v->o->n, depth + 1,
		               (long long)dim[depth]);
	dim[depth] = v->o->n;
	if (v->o->n == 0) {
		if (*rank < 0)
			*rank = depth + 1;
		else if (*rank != depth + 1)
			return vm_fail(vm, pos, BURN_ERR_SHAPE, "ragged list: an empty list "
			               "where numbers were expected");
	}
	for (int i = 0; i < v->o->n; i++)
		TRY(list_shape(vm, pos, &v->o->v[i], depth + 1, rank, dim, count));
	return BURN_OK;
}

static void
list_flatten(const Val *v, double *buf, int64_t *k)
{
	if (v->kind == VK_NUM) {
		buf[(*k)++] = v->num;
		return;
	}
	for (int i = 0; i < v->o->n; i++)
		list_flatten(&v->o->v[i], buf, k);
}

/* Convert n doubles to dtype dt into out (which has room). */
static void
pack(burn_dtype dt, const double *x, int64_t n, void *out)
{
	for (int64_t i = 0; i < n; i++) {
		double d = x[i];
		switch (dt) {
		case BURN_F32: ((float *)out)[i] = (float)d; break;
		case BURN_F64: ((double *)out)[i] = d; break;
		case BURN_I8: ((int8_t *)out)[i] = (int8_t)(d < -128 ? -128 : d > 127 ? 127 : d); break;
		case BURN_U8: ((uint8_t *)out)[i] = (uint8_t)(d < 0 ? 0 : d > 255 ? 255 : d); break;
		case BURN_I16: ((int16_t *)out)[i] = (int16_t)(d < -32768 ? -32768 : d > 32767 ? 32767 : d); break;
		case BURN_U16: ((uint16_t *)out)[i] = (uint16_t)(d < 0 ? 0 : d > 65535 ? 65535 : d); break;
		case BURN_I32: ((int32_t *)out)[i] = (int32_t)(d < -2147483648.0 ? -2147483648.0 : d > 2147483647.0 ? 2147483647.0 : d); break;
		case BURN_U32: ((uint32_t *)out)[i] = (uint32_t)(d < 0 ? 0 : d > 4294967295.0 ? 4294967295.0 : d); break;
		case BURN_I64: ((int64_t *)out)[i] = d != d ? 0 : d < -9.2e18 ? INT64_MIN : d > 9.2e18 ? INT64_MAX : (int64_t)d; break;
		case BURN_U64: ((uint64_t *)out)[i] = d != d || d < 0 ? 0 : d > 1.8e19 ? UINT64_MAX : (uint64_t)d; break;
		case BURN_BOOL: ((uint8_t *)out)[i] = d != 0; break;
		default: break;
		}
	}
}

int
vm_to_tensor(DslVm *vm, DslPos pos, const Val *v, burn_dtype dt, burn_tensor **out)
{
	int64_t dim[BURN_MAX_RANK] = { 0 }, count = 0, k = 0;
	int rank = -1, rc;
	burn_dtype mk = dt == BURN_F16 || dt == BURN_BF16 ? BURN_F32 : dt;
	double *buf;
	void *raw;
	burn_status st;

	*out = NULL;
	if (v->kind == VK_TENSOR) {
		*out = burn_retain(v->t);
		return BURN_OK;
	}
	TRY(list_shape(vm, pos, v, 0, &rank, dim, &count));
	if (count > (1 << 26))
		return vm_fail(vm, pos, BURN_ERR_LIMIT, "tensor literal of more than 2^26 "
		               "numbers");
	buf = malloc((size_t)(count ? count : 1) * sizeof *buf);
	raw = malloc((size_t)(count ? count : 1) * 8);
	if (!buf || !raw) {
		free(buf);
		free(raw);
		return burn_fail(&vm->c, BURN_ERR_NOMEM, "out of memory");
	}
	list_flatten(v, buf, &k);
	pack(mk, buf, count, raw);
	st = burn_from_buffer(vm->bc, mk, rank, dim, raw, out);
	free(buf);
	free(raw);
	if (st)
		return vm_burn(vm, pos, st, "tensor literal");
	if (mk != dt) {
		burn_tensor *c;
		st = burn_cast(vm->bc, *out, dt, &c);
		burn_release(*out);
		*out = st ? NULL : c;
		if (st)
			return vm_burn(vm, pos, st, "tensor literal");
	}
	rc = BURN_OK;
	return rc;
}

/* ---- printing -------------------------------------------------------- */

int
vm_print_val(DslVm *vm, DslPos pos, const Val *v, FILE *f)
{
	burn_status st;

	switch (v->kind) {
	case VK_NONE:
		fprintf(f, "()");
		break;
	case VK_NUM:
		if (v->is_int && fabs(v->num) < 1e18)
			fprintf(f, "%lld", (long long)v->num);
		else if (isnan(v->num))
			fputs("nan", f);   /* never "-nan" */
		else
			fprintf(f, "%.9g", v->num);
		break;
	case VK_STR:
		fputs(v->s, f);
		break;
	case VK_DTYPE:
		fputs(dtype_name((int)v->num), f);
		break;
	case VK_TENSOR:
		if ((st = burn_print(vm->bc, v->t, f, 0)))
			return vm_burn(vm, pos, st, "print");
		break;
	case VK_LIST:
		fputc('[', f);
		for (int i = 0; i < v->o->n; i++) {
			const Val *x = &v->o->v[i];
			if (i)
				fputs(x->kind == VK_TENSOR ? ",\n " : ", ", f);
			if (x->kind == VK_TENSOR) {
				/* a tensor's print ends its line: not inside a list */
				char *buf = NULL;
				size_t len = 0;
				FILE *m = open_memstream(&buf, &len);
				if (!m)
					return burn_fail(&vm->c, BURN_ERR_NOMEM, "out of memory");
				st = burn_print(vm->bc, x->t, m, 0);
				fclose(m);
				while (!st && len && buf[len - 1] == '\n')
					buf[--len] = 0;
				if (!st)
					fputs(buf, f);
				free(buf);
				if (st)
					return vm_burn(vm, pos, st, "print");
			} else {
				TRY(vm_print_val(vm, pos, x, f));
			}
		}
		fputc(']', f);
		break;
	case VK_FN:
		fprintf(f, "<fn %s>", v->fn->name);
		break;
	case VK_MODTYPE:
		fprintf(f, "<module %s>", v->fn->name);
		break;
	case VK_MODULE:
		fprintf(f, "%s {", v->o->def->name);
		for (int i = 0; i < v->o->n; i++) {
			const Val *x = &v->o->v[i];
			fprintf(f, "%s %s: ", i ? "," : "", v->o->def->key[i]);
			if (x->kind == VK_TENSOR)
				fprintf(f, "<tensor %s[%d dims]>", dtype_name(burn_tensor_dtype(x->t)),
				        burn_tensor_rank(x->t));
			else
				TRY(vm_print_val(vm, pos, x, f));
		}
		fprintf(f, " }");
		break;
	case VK_LAYER: {
		const Obj *o = v->o;
		fprintf(f, "%s", lib_layer_name(o->layer));
		if (o->layer == LY_LINEAR || o->layer == LY_EMBEDDING)
			fprintf(f, "(%lld, %lld)", (long long)o->cfg[0], (long long)o->cfg[1]);
		else if (o->layer == LY_CONV2D)
			fprintf(f, "(%lld, %lld, kernel_size=[%lld, %lld])", (long long)o->cfg[0],
			        (long long)o->cfg[1], (long long)o->cfg[2], (long long)o->cfg[3]);
		else if (o->layer == LY_LAYERNORM || o->layer == LY_BATCHNORM)
			fprintf(f, "(%lld)", (long long)o->cfg[0]);
		else if (o->layer == LY_DROPOUT)
			fprintf(f, "(%g)", o->fcfg);
		else if (o->layer == LY_SOFTMAX)
			fprintf(f, "(axis=%lld)", (long long)o->cfg[0]);
		else
			fprintf(f, "()");
		break;
	}
	case VK_GRAPH:
		fprintf(f, "<model %s>", v->o->path);
		break;
	case VK_BUILTIN:
		fprintf(f, "<builtin %s>", lib_builtin_name(v->id));
		break;
	case VK_OP:
		fprintf(f, "<op %s>", op_table[v->id].name);
		break;
	}
	return BURN_OK;
}

/* ---- bindings -------------------------------------------------------- */

static int
bind(DslVm *vm, Bind **arr, int *n, int *cap, int from, const char *name, Val v)
{
	for (int i = *n - 1; i >= from; i--)
		if (!strcmp((*arr)[i].name, name)) {
			val_drop((*arr)[i].v);
			(*arr)[i].v = v;
			return BURN_OK;
		}
	if (*n == *cap) {
		int nc = *cap ? 2 * *cap : 32;
		Bind *nb = realloc(*arr, (size_t)nc * sizeof *nb);
		if (!nb) {
			val_drop(v);
			return burn_fail(&vm->c, BURN_ERR_NOMEM, "out of memory");
		}
		*arr = nb;
		*cap = nc;
	}
	(*arr)[*n].name = name;
	(*arr)[*n].v = v;
	(*n)++;
	return BURN_OK;
}

/* Bind name in the running frame (the top level when no function runs);
 * takes v's reference. */
static int
bind_here(DslVm *vm, const char *name, Val v)
{
	if (vm->calls)
		return bind(vm, &vm->loc, &vm->nloc, &vm->caploc, vm->frame, name, v);
	return bind(vm, &vm->glob, &vm->nglob, &vm->capglob, 0, name, v);
}

/* The value of name (a new reference), or 0. */
static int
lookup(DslVm *vm, const char *name, Val *out)
{
	if (vm->calls)
		for (int i = vm->nloc - 1; i >= vm->frame; i--)
			if (!strcmp(vm->loc[i].name, name)) {
				*out = val_dup(vm->loc[i].v);
				return 1;
			}
	for (int i = vm->nglob - 1; i >= 0; i--)
		if (!strcmp(vm->glob[i].name, name)) {
			*out = val_dup(vm->glob[i].v);
			return 1;
		}
	return lib_constant(name, out) || lib_lookup(name, out);
}

/* ---- expressions ----------------------------------------------------- */

static int eval(DslVm *vm, const DslNode *n, Val *out);

static int
check_stop(DslVm *vm, DslPos pos)
{
	if (vm->stop)
		return vm_fail(vm, pos, BURN_ERR_LIMIT, "interrupted");
	return BURN_OK;
}

static const char *const bin_onnx[] = {
	[DB_ADD] = "Add", [DB_SUB] = "Sub", [DB_MUL] = "Mul", [DB_DIV] = "Div",
	[DB_MOD] = "Mod", [DB_EQ] = "Equal", [DB_NE] = "Equal", [DB_LT] = "Less",
	[DB_LE] = "LessOrEqual", [DB_GT] = "Greater", [DB_GE] = "GreaterOrEqual",
};

static double
num_binop(int op, double a, double b)
{
	switch (op) {
	case DB_ADD: return a + b;
	case DB_SUB: return a - b;
	case DB_MUL: return a * b;
	case DB_DIV: return a / b;
	case DB_MOD: return fmod(a, b);
	case DB_EQ: return a == b;
	case DB_NE: return a != b;
	case DB_LT: return a < b;
	case DB_LE: return a <= b;
	case DB_GT: return a > b;
	case DB_GE: return a >= b;
	}
	return 0;
}

/* a op b where at least one side is a tensor (or a list). */
static int
tensor_binop(DslVm *vm, const DslNode *n, Val *a, Val *b, Val *out)
{
	burn_tensor *ta = NULL, *tb = NULL, *r = NULL, *in[2];
	burn_dtype dt = BURN_F32;
	burn_status st;
	int rc = BURN_OK;
	int op = n->op;

	if (a->kind == VK_TENSOR)
		dt = burn_tensor_dtype(a->t);
	else if (b->kind == VK_TENSOR)
		dt = burn_tensor_dtype(b->t);
	/* tensor (op) number: the scalar forms, which libburn folds */
	if (a->kind == VK_TENSOR && b->kind == VK_NUM &&
	    (op == DB_ADD || op == DB_SUB || op == DB_MUL || op == DB_DIV)) {
		st = op == DB_ADD ? burn_add_scalar(vm->bc, a->t, b->num, &r)
		   : op == DB_SUB ? burn_add_scalar(vm->bc, a->t, -b->num, &r)
		   : op == DB_MUL ? burn_mul_scalar(vm->bc, a->t, b->num, &r)
		   : burn_div_scalar(vm->bc, a->t, b->num, &r);
		if (st)
			return vm_burn(vm, n->pos, st, NULL);
		out->kind = VK_TENSOR;
		out->t = r;
		return BURN_OK;
	}
	if (a->kind != VK_TENSOR && a->kind != VK_NUM && a->kind != VK_LIST)
		return vm_fail(vm, n->a->pos, BURN_ERR_SHAPE, "'%s' needs numbers or "
		               "tensors, not %s", dsl_binop_name(op), val_kind_name(a));
	if (b->kind != VK_TENSOR && b->kind != VK_NUM && b->kind != VK_LIST)
		return vm_fail(vm, n->b->pos, BURN_ERR_SHAPE, "'%s' needs numbers or "
		               "tensors, not %s", dsl_binop_name(op), val_kind_name(b));
	if ((rc = vm_to_tensor(vm, n->a->pos, a, dt, &ta)) ||
	    (rc = vm_to_tensor(vm, n->b->pos, b, dt, &tb)))
		goto done;
	in[0] = ta;
	in[1] = tb;
	if (op == DB_MOD && (dt == BURN_F32 || dt == BURN_F64 || dt == BURN_F16 ||
	                     dt == BURN_BF16)) {
		burn_attr fm = { "fmod", BURN_ATTR_INT, 1 };
		st = burn_op(vm->bc, "Mod", 2, in, 1, &fm, 1, &r);
	} else {
		st = burn_op(vm->bc, bin_onnx[op], 2, in, 0, NULL, 1, &r);
	}
	if (!st && op == DB_NE) {
		burn_tensor *e = r;
		st = burn_unary(vm->bc, "Not", e, &r);
		burn_release(e);
	}
	if (st) {
		rc = vm_burn(vm, n->pos, st, NULL);
		goto done;
	}
	out->kind = VK_TENSOR;
	out->t = r;
done:
	burn_release(ta);
	burn_release(tb);
	return rc;
}

static int
eval_binary(DslVm *vm, const DslNode *n, Val *out)
{
	Val a = { 0 }, b = { 0 };
	int rc;

	TRY(eval(vm, n->a, &a));
	if ((rc = eval(vm, n->b, &b))) {
		val_drop(a);
		return rc;
	}
	if (a.kind == VK_NUM && b.kind == VK_NUM) {
		int cmp = n->op >= DB_EQ;
		int is_int = cmp || (a.is_int && b.is_int && n->op != DB_DIV);
		if (is_int && !cmp && n->op == DB_MOD && b.num == 0)
			rc = vm_fail(vm, n->pos, BURN_ERR_INVALID, "integer modulo by zero");
		else
			*out = val_num(num_binop(n->op, a.num, b.num), is_int);
	} else if ((a.kind == VK_STR && b.kind == VK_STR) && (n->op == DB_EQ || n->op == DB_NE)) {
		*out = val_num((strcmp(a.s, b.s) == 0) == (n->op == DB_EQ), 1);
	} else {
		rc = tensor_binop(vm, n, &a, &b, out);
	}
	val_drop(a);
	val_drop(b);
	return rc;
}

static int
eval_unary(DslVm *vm, const DslNode *n, Val *out)
{
	Val a = { 0 };
	burn_tensor *t = NULL, *r;
	burn_status st;
	int rc;

	TRY(eval(vm, n->a, &a));
	if (a.kind == VK_NUM) {
		*out = n->op == '-' ? val_num(-a.num, a.is_int) : val_num(a.num == 0, 1);
		return BURN_OK;
	}
	if (a.kind != VK_TENSOR && a.kind != VK_LIST) {
		rc = vm_fail(vm, n->pos, BURN_ERR_SHAPE, "'%c' needs a number or a tensor, "
		             "not %s", n->op, val_kind_name(&a));
		val_drop(a);
		return rc;
	}
	rc = vm_to_tensor(vm, n->a->pos, &a, BURN_F32, &t);
	val_drop(a);
	if (rc)
		return rc;
	st = burn_unary(vm->bc, n->op == '-' ? "Neg" : "Not", t, &r);
	burn_release(t);
	if (st)
		return vm_burn(vm, n->pos, st, NULL);
	out->kind = VK_TENSOR;
	out->t = r;
	return BURN_OK;
}

/* Evaluate the arguments of a call node into arg[] (n->nkid of them). */
static int
eval_args(DslVm *vm, const DslNode *n, Val *arg)
{
	for (int i = 0; i < n->nkid; i++) {
		int rc = eval(vm, n->kid[i], &arg[i]);
		if (rc) {
			for (int j = 0; j < i; j++)
				val_drop(arg[j]);
			return rc;
		}
	}
	return BURN_OK;
}

static void
drop_all(Val *v, int n)
{
	for (int i = 0; i < n; i++)
		val_drop(v[i]);
}

/* The index of field name in module definition def, or -1. */
static int
field_index(const DslNode *def, const char *name)
{
	for (int i = 0; i < def->nkid; i++)
		if (!strcmp(def->key[i], name))
			return i;
	return -1;
}

static const DslNode *
method_of(const DslNode *def, const char *name)
{
	for (int i = 0; i < def->nmethod; i++)
		if (!strcmp(def->method[i]->name, name))
			return def->method[i];
	return NULL;
}

static int
has_self(const DslNode *fn)
{
	return fn->nparam > 0 && !strcmp(fn->param[0].name, "self");
}

/* Call the user function fn with arg[0..n) (self, if any, among them). */
static int
call_fn(DslVm *vm, DslPos pos, const DslNode *fn, int n, Val *arg,
        const char *const *key, const DslPos *apos, Val *out)
{
	int base = vm->nloc, oframe = vm->frame, rc = BURN_OK;
	const DslSrc *ocur;
	Val *slot;

	if (vm->calls >= DSL_MAX_CALLS)
		return vm_fail(vm, pos, BURN_ERR_LIMIT, "calls nested deeper than %d "
		               "(endless recursion?)", DSL_MAX_CALLS);
	if (!(slot = calloc((size_t)(fn->nparam ? fn->nparam : 1), sizeof *slot)))
		return burn_fail(&vm->c, BURN_ERR_NOMEM, "out of memory");
	for (int i = 0; i < n && !rc; i++) {
		int k = i;
		if (key && key[i]) {
			for (k = 0; k < fn->nparam; k++)
				if (!strcmp(fn->param[k].name, key[i]))
					break;
			if (k == fn->nparam)
				rc = vm_fail(vm, apos ? apos[i] : pos, BURN_ERR_INVALID,
				             "%s has no parameter '%s'", fn->name, key[i]);
		} else if (k >= fn->nparam) {
			rc = vm_fail(vm, apos ? apos[i] : pos, BURN_ERR_INVALID,
			             "%s takes %d argument%s, got %d", fn->name,
			             fn->nparam - has_self(fn), fn->nparam - has_self(fn) == 1 ? "" : "s",
			             n - has_self(fn));
		}
		if (!rc && slot[k].kind != VK_NONE)
			rc = vm_fail(vm, apos ? apos[i] : pos, BURN_ERR_INVALID,
			             "parameter '%s' of %s given twice", fn->param[k].name, fn->name);
		if (!rc)
			slot[k] = val_dup(arg[i]);
	}
	for (int k = 0; k < fn->nparam && !rc; k++)
		if (slot[k].kind == VK_NONE)
			rc = vm_fail(vm, pos, BURN_ERR_INVALID, "%s takes %d argument%s, got "
			             "%d: '%s' is missing", fn->name, fn->nparam - has_self(fn),
			             fn->nparam - has_self(fn) == 1 ? "" : "s", n - has_self(fn),
			             fn->param[k].name);
	if (rc) {
		drop_all(slot, fn->nparam);
		free(slot);
		return rc;
	}
	vm->calls++;
	vm->frame = base;
	ocur = vm->cur;
	if (fn->src)
		vm->cur = fn->src;   /* errors inside point into fn's source */
	for (int k = 0; k < fn->nparam && !rc; k++) {
		rc = bind(vm, &vm->loc, &vm->nloc, &vm->caploc, base, fn->param[k].name, slot[k]);
		memset(&slot[k], 0, sizeof slot[k]);   /* moved into the frame */
	}
	drop_all(slot, fn->nparam);
	free(slot);
	if (!rc) {
		const DslNode *b = fn->body;
		for (int i = 0; i < b->nkid && !rc; i++) {
			const DslNode *s = b->kid[i];
			Val v = { 0 };
			if ((rc = check_stop(vm, s->pos)))
				break;
			rc = eval(vm, s->a, &v);
			if (!rc && s->kind == DN_LET)
				rc = bind_here(vm, s->name, v);
			else
				val_drop(v);
		}
		if (!rc && b->a)
			rc = eval(vm, b->a, out);
		else if (!rc)
			out->kind = VK_NONE;
	}
	while (vm->nloc > base)
		val_drop(vm->loc[--vm->nloc].v);
	vm->frame = oframe;
	vm->cur = ocur;
	vm->calls--;
	return rc;
}

/* A module instance called like a function runs its forward. */
static int
call_module(DslVm *vm, DslPos pos, Val *self, const DslNode *m, int n, Val *arg,
            const char *const *key, const DslPos *apos, Val *out)
{
	Val *all = calloc((size_t)n + 1, sizeof *all);
	const char **k2 = calloc((size_t)n + 1, sizeof *k2);
	DslPos *p2 = calloc((size_t)n + 1, sizeof *p2);
	int rc;

	if (!all || !k2 || !p2) {
		free(all);
		free(k2);
		free(p2);
		return burn_fail(&vm->c, BURN_ERR_NOMEM, "out of memory");
	}
	all[0] = *self;
	p2[0] = pos;
	for (int i = 0; i < n; i++) {
		all[i + 1] = arg[i];
		k2[i + 1] = key ? key[i] : NULL;
		p2[i + 1] = apos ? apos[i] : pos;
	}
	rc = call_fn(vm, pos, m, n + 1, all, k2, p2, out);
	free(all);
	free(k2);
	free(p2);
	return rc;
}

static int
call_graph(DslVm *vm, DslPos pos, Obj *o, int n, Val *arg, Val *out)
{
	burn_tensor *in[64] = { 0 }, *res[64] = { 0 };
	const Graph *g = o->g;
	int nout = g->nout > 64 ? 64 : g->nout, rc = BURN_OK;
	burn_status st;

	if (n != g->nin || n > 64)
		return vm_fail(vm, pos, BURN_ERR_INVALID, "the model %s takes %d input%s, "
		               "got %d", o->path, g->nin, g->nin == 1 ? "" : "s", n);
	for (int i = 0; i < n && !rc; i++) {
		const Value *v = GV(g, g->in[i]);
		burn_dtype dt = v->dtype ? (burn_dtype)v->dtype : BURN_F32;
		rc = vm_to_tensor(vm, pos, &arg[i], dt, &in[i]);
	}
	if (!rc && !o->call && (st = burn_call_create(vm->bc, g, &o->call)))
		rc = vm_burn(vm, pos, st, o->path);
	if (!rc && (st = burn_call_run(o->call, n, in, nout, res)))
		rc = vm_burn(vm, pos, st, o->path);
	for (int i = 0; i < n; i++)
		burn_release(in[i]);
	if (rc)
		return rc;
	if (nout == 1) {
		out->kind = VK_TENSOR;
		out->t = res[0];
		return BURN_OK;
	}
	if (!(out->o = obj_new(vm, OB_LIST, nout))) {
		for (int i = 0; i < nout; i++)
			burn_release(res[i]);
		return vm->c.code;
	}
	out->kind = VK_LIST;
	for (int i = 0; i < nout; i++) {
		out->o->v[i].kind = VK_TENSOR;
		out->o->v[i].t = res[i];
	}
	return BURN_OK;
}

int
vm_call(DslVm *vm, DslPos pos, const Val *f, int n, Val *arg,
        const char *const *key, const DslPos *apos, Val *out)
{
	TRY(check_stop(vm, pos));
	switch (f->kind) {
	case VK_FN:
		return call_fn(vm, pos, f->fn, n, arg, key, apos, out);
	case VK_MODULE: {
		const DslNode *m = method_of(f->o->def, "forward");
		Val self = *f;
		if (!m || !has_self(m))
			return vm_fail(vm, pos, BURN_ERR_INVALID, "module %s has no "
			               "forward(self, ...) to call", f->o->def->name);
		return call_module(vm, pos, &self, m, n, arg, key, apos, out);
	}
	case VK_LAYER:
		for (int i = 0; i < n; i++)
			if (key && key[i])
				return vm_fail(vm, apos ? apos[i] : pos, BURN_ERR_INVALID,
				               "a layer takes its input as a positional argument");
		return lib_layer_forward(vm, pos, f->o, n, arg, out);
	case VK_GRAPH:
		return call_graph(vm, pos, f->o, n, arg, out);
	case VK_BUILTIN:
		return lib_call_builtin(vm, pos, f->id, n, arg, key, apos, out);
	case VK_OP:
		return lib_call_op(vm, pos, f->id, n, arg, key, apos, out);
	case VK_MODTYPE:
		return vm_fail(vm, pos, BURN_ERR_INVALID, "%s is a module type: build one "
		               "with %s { field: value, ... } or a function that returns one",
		               f->fn->name, f->fn->name);
	default:
		return vm_fail(vm, pos, BURN_ERR_INVALID, "%s is not callable",
		               val_kind_name(f));
	}
}

static int
eval_call(DslVm *vm, const DslNode *n, Val *out)
{
	Val f = { 0 }, *arg;
	int rc;

	TRY(eval(vm, n->a, &f));
	if (!(arg = calloc((size_t)(n->nkid ? n->nkid : 1), sizeof *arg))) {
		val_drop(f);
		return burn_fail(&vm->c, BURN_ERR_NOMEM, "out of memory");
	}
	if (!(rc = eval_args(vm, n, arg))) {
		rc = vm_call(vm, n->pos, &f, n->nkid, arg, n->key, n->key_pos, out);
		drop_all(arg, n->nkid);
	}
	free(arg);
	val_drop(f);
	return rc;
}

/* recv.name(args) */
static int
eval_method(DslVm *vm, const DslNode *n, Val *out)
{
	Val recv = { 0 }, *arg;
	int rc = BURN_OK, fi;

	TRY(eval(vm, n->a, &recv));
	if (!(arg = calloc((size_t)n->nkid + 1, sizeof *arg))) {
		val_drop(recv);
		return burn_fail(&vm->c, BURN_ERR_NOMEM, "out of memory");
	}
	if ((rc = eval_args(vm, n, arg + 1))) {
		free(arg);
		val_drop(recv);
		return rc;
	}
	if (recv.kind == VK_MODULE && (fi = field_index(recv.o->def, n->name)) >= 0) {
		/* self.linear(x): call the field */
		rc = vm_call(vm, n->pos, &recv.o->v[fi], n->nkid, arg + 1, n->key, n->key_pos, out);
	} else if (recv.kind == VK_MODULE) {
		const DslNode *m = method_of(recv.o->def, n->name);
		if (!m)
			rc = vm_fail(vm, n->pos, BURN_ERR_INVALID, "module %s has no field or "
			             "method '%s'", recv.o->def->name, n->name);
		else if (!has_self(m))
			rc = vm_fail(vm, n->pos, BURN_ERR_INVALID, "%s::%s takes no self: call "
			             "it as %s::%s(...)", recv.o->def->name, n->name,
			             recv.o->def->name, n->name);
		else
			rc = call_module(vm, n->pos, &recv, m, n->nkid, arg + 1, n->key,
			                 n->key_pos, out);
	} else if ((recv.kind == VK_LAYER || recv.kind == VK_GRAPH) &&
	           !strcmp(n->name, "forward")) {
		rc = vm_call(vm, n->pos, &recv, n->nkid, arg + 1, n->key, n->key_pos, out);
	} else if (recv.kind == VK_TENSOR || recv.kind == VK_NUM || recv.kind == VK_LIST) {
		Val f = { 0 };
		const char **k2 = calloc((size_t)n->nkid + 1, sizeof *k2);
		DslPos *p2 = calloc((size_t)n->nkid + 1, sizeof *p2);
		if (!k2 || !p2) {
			rc = burn_fail(&vm->c, BURN_ERR_NOMEM, "out of memory");
		} else if (lib_tensor_method(vm, n->pos, n->name, &recv, n->nkid, arg + 1,
		                             n->key, out, &rc)) {
			/* done */
		} else if (lib_lookup(n->name, &f) && f.kind == VK_OP) {
			arg[0] = val_dup(recv);
			p2[0] = n->a->pos;
			for (int i = 0; i < n->nkid; i++) {
				k2[i + 1] = n->key ? n->key[i] : NULL;
				p2[i + 1] = n->key_pos[i];
			}
			rc = lib_call_op(vm, n->pos, f.id, n->nkid + 1, arg, k2, p2, out);
			val_drop(arg[0]);
		} else {
			rc = vm_fail(vm, n->pos, BURN_ERR_INVALID, "unknown method '%s' of %s "
			             "(methods are the ops by their snake_case names, e.g. "
			             "x.erf(), and clone, shape, dtype, numel, item)", n->name,
			             val_kind_name(&recv));
		}
		free(k2);
		free(p2);
	} else {
		rc = vm_fail(vm, n->pos, BURN_ERR_INVALID, "%s has no method '%s'",
		             val_kind_name(&recv), n->name);
	}
	drop_all(arg + 1, n->nkid);
	free(arg);
	val_drop(recv);
	return rc;
}

static int
eval_field(DslVm *vm, const DslNode *n, Val *out)
{
	Val a = { 0 };
	int rc = BURN_OK, fi;

	TRY(eval(vm, n->a, &a));
	if (a.kind == VK_MODULE && (fi = field_index(a.o->def, n->name)) >= 0) {
		*out = val_dup(a.o->v[fi]);
	} else if (a.kind == VK_LAYER && lib_param_index(n->name) >= 0) {
		burn_tensor *t = a.o->param[lib_param_index(n->name)];
		if (!t)
			rc = vm_fail(vm, n->pos, BURN_ERR_INVALID, "this %s has no %s",
			             lib_layer_name(a.o->layer), n->name);
		else {
			out->kind = VK_TENSOR;
			out->t = burn_retain(t);
		}
	} else if (a.kind == VK_MODULE) {
		rc = vm_fail(vm, n->pos, BURN_ERR_INVALID, "module %s has no field '%s'%s",
		             a.o->def->name, n->name, method_of(a.o->def, n->name) ?
		             " (it is a method: call it with ())" : "");
	} else {
		rc = vm_fail(vm, n->pos, BURN_ERR_INVALID, "%s has no field '%s'%s",
		             val_kind_name(&a), n->name, a.kind == VK_TENSOR ?
		             " (methods need parentheses: x.shape())" : "");
	}
	val_drop(a);
	return rc;
}

static int
eval_index(DslVm *vm, const DslNode *n, Val *out)
{
	Val a = { 0 }, i = { 0 };
	int rc = BURN_OK;

	TRY(eval(vm, n->a, &a));
	if ((rc = eval(vm, n->b, &i))) {
		val_drop(a);
		return rc;
	}
	if (i.kind != VK_NUM || !i.is_int) {
		rc = vm_fail(vm, n->b->pos, BURN_ERR_INVALID, "an index is a whole number, "
		             "not %s", i.kind == VK_NUM ? "a fraction" : val_kind_name(&i));
	} else if (a.kind == VK_LIST) {
		int64_t k = (int64_t)i.num, len = a.o->n;
		if (k < 0)
			k += len;
		if (k < 0 || k >= len)
			rc = vm_fail(vm, n->b->pos, BURN_ERR_INVALID, "index %lld out of range "
			             "for a list of %lld", (long long)i.num, (long long)len);
		else
			*out = val_dup(a.o->v[k]);
	} else if (a.kind == VK_TENSOR) {
		/* x[i]: Gather along the first axis with a scalar index */
		Val args[2];
		args[0] = a;
		args[1] = i;
		rc = lib_call_op(vm, n->pos, OP_Gather, 2, args, NULL, NULL, out);
	} else {
		rc = vm_fail(vm, n->pos, BURN_ERR_INVALID, "%s cannot be indexed",
		             val_kind_name(&a));
	}
	val_drop(a);
	val_drop(i);
	return rc;
}

/* Whether value v fits a module field declared with type name ty; on a
 * mismatch, the error.  Lists become tensors for a Tensor field. */
static int
field_fits(DslVm *vm, DslPos pos, const char *field, const char *ty, Val *v)
{
	Val t = { 0 };

	if (!strcmp(ty, "Tensor")) {
		if (v->kind == VK_TENSOR)
			return BURN_OK;
		if (v->kind == VK_LIST || v->kind == VK_NUM) {
			TRY(vm_to_tensor(vm, pos, v, BURN_F32, &t.t));
			t.kind = VK_TENSOR;
			val_drop(*v);
			*v = t;
			return BURN_OK;
		}
	} else if (v->kind == VK_LAYER && !strcmp(lib_layer_name(v->o->layer), ty)) {
		return BURN_OK;
	} else if (v->kind == VK_MODULE && !strcmp(v->o->def->name, ty)) {
		return BURN_OK;
	} else if (v->kind == VK_GRAPH && !strcmp(ty, "Model")) {
		return BURN_OK;
	} else if (!strcmp(ty, "Any")) {
		return BURN_OK;
	}
	return vm_fail(vm, pos, BURN_ERR_INVALID, "field '%s' is declared %s, given %s%s%s",
	               field, ty, val_kind_name(v), v->kind == VK_LAYER ? " " : "",
	               v->kind == VK_LAYER ? lib_layer_name(v->o->layer) :
	               v->kind == VK_MODULE ? "" : "");
}

/* Name { field: value, ... } */
static int
eval_struct(DslVm *vm, const DslNode *n, Val *out)
{
	Val ty = { 0 };
	const DslNode *def;
	Obj *o;
	int rc = BURN_OK;

	if (!lookup(vm, n->name, &ty) || ty.kind != VK_MODTYPE) {
		val_drop(ty);
		return vm_fail(vm, n->pos, BURN_ERR_INVALID, "'%s' is not a module type "
		               "(declare it with 'module %s { ... }')", n->name, n->name);
	}
	def = ty.fn;
	if (!(o = obj_new(vm, OB_MODULE, def->nkid)))
		return vm->c.code;
	o->def = def;
	for (int i = 0; i < n->nkid && !rc; i++) {
		int fi = field_index(def, n->key[i]);
		if (fi < 0) {
			rc = vm_fail(vm, n->key_pos[i], BURN_ERR_INVALID, "module %s has no "
			             "field '%s'", def->name, n->key[i]);
			break;
		}
		if (!(rc = eval(vm, n->kid[i], &o->v[fi])))
			rc = field_fits(vm, n->kid[i]->pos, def->key[fi], def->ftype[fi], &o->v[fi]);
	}
	for (int i = 0; i < def->nkid && !rc; i++)
		if (o->v[i].kind == VK_NONE)
			rc = vm_fail(vm, n->pos, BURN_ERR_INVALID, "field '%s' of %s is not "
			             "given", def->key[i], def->name);
	if (rc) {
		Val tmp = { 0 };
		tmp.kind = VK_MODULE;
		tmp.o = o;
		val_drop(tmp);
		return rc;
	}
	out->kind = VK_MODULE;
	out->o = o;
	return BURN_OK;
}

static int
eval1(DslVm *vm, const DslNode *n, Val *out)
{
	Val v = { 0 };

	memset(out, 0, sizeof *out);
	switch (n->kind) {
	case DN_NUM:
		*out = val_num(n->num, n->is_int);
		return BURN_OK;
	case DN_STR:
		out->kind = VK_STR;
		out->s = n->name;
		return BURN_OK;
	case DN_NAME:
		if (!lookup(vm, n->name, out))
			return vm_fail(vm, n->pos, BURN_ERR_INVALID, "unknown name '%s'", n->name);
		return BURN_OK;
	case DN_LIST: {
		Obj *o = obj_new(vm, OB_LIST, n->nkid);
		if (!o)
			return vm->c.code;
		v.kind = VK_LIST;
		v.o = o;
		for (int i = 0; i < n->nkid; i++) {
			int rc = eval(vm, n->kid[i], &o->v[i]);
			if (rc) {
				val_drop(v);
				return rc;
			}
		}
		*out = v;
		return BURN_OK;
	}
	case DN_UNARY:
		return eval_unary(vm, n, out);
	case DN_BINARY:
		return eval_binary(vm, n, out);
	case DN_CALL:
		return eval_call(vm, n, out);
	case DN_METHOD:
		return eval_method(vm, n, out);
	case DN_FIELD:
		return eval_field(vm, n, out);
	case DN_INDEX:
		return eval_index(vm, n, out);
	case DN_PATH: {
		const DslNode *m;
		if (!lookup(vm, n->name2, &v) || v.kind != VK_MODTYPE) {
			val_drop(v);
			return vm_fail(vm, n->pos, BURN_ERR_INVALID, "'%s' is not a module type",
			               n->name2);
		}
		if (!(m = method_of(v.fn, n->name)))
			return vm_fail(vm, n->pos, BURN_ERR_INVALID, "module %s has no function "
			               "'%s'", n->name2, n->name);
		out->kind = VK_FN;
		out->fn = m;
		return BURN_OK;
	}
	case DN_STRUCT:
		return eval_struct(vm, n, out);
	default:
		return vm_fail(vm, n->pos, BURN_ERR_INTERNAL, "not an expression (node %d)",
		               n->kind);
	}
}

/* eval1 with a bound on the C stack: expressions are at most DSL_MAX_DEPTH
 * deep, but calls nest them. */
static int
eval(DslVm *vm, const DslNode *n, Val *out)
{
	int rc;

	if (vm->edepth >= DSL_MAX_EVAL) {
		memset(out, 0, sizeof *out);
		return vm_fail(vm, n->pos, BURN_ERR_LIMIT, "evaluation nested deeper than "
		               "%d levels (calls in calls)", DSL_MAX_EVAL);
	}
	vm->edepth++;
	rc = eval1(vm, n, out);
	vm->edepth--;
	return rc;
}

/* ---- items ----------------------------------------------------------- */

static int
run_import(DslVm *vm, const DslNode *n)
{
	Ctx c;
	Graph *g = NULL;
	Obj *o;
	Val v = { 0 };
	char *path;
	const char *name = vm_srcname(vm), *sl = strrchr(name, '/');

	/* a relative path is relative to the script's folder */
	if (n->name2[0] != '/' && sl)
		path = arena_printf(&vm->a, "%.*s/%s", (int)(sl - name), name, n->name2);
	else
		path = arena_strdup(&vm->a, n->name2);
	burn_ctx_init(&c, path);
	if (onnx_load_file(&c, path, &g) || graph_toposort(&c, g)) {
		if (g)
			graph_destroy(g);
		return vm_fail(vm, n->pos, c.code, "import: %s", c.msg);
	}
	if (!(o = obj_new(vm, OB_GRAPH, 0))) {
		graph_destroy(g);
		return vm->c.code;
	}
	o->g = g;
	o->path = path;
	v.kind = VK_GRAPH;
	v.o = o;
	return bind_here(vm, n->name, v);
}

static int
run_item(DslVm *vm, const DslNode *n, int show)
{
	Val v = { 0 };
	int rc;

	TRY(check_stop(vm, n->pos));
	switch (n->kind) {
	case DN_LET:
		TRY(eval(vm, n->a, &v));
		return bind_here(vm, n->name, v);
	case DN_EXPR:
		TRY(eval(vm, n->a, &v));
		rc = BURN_OK;
		if (show && v.kind != VK_NONE) {
			rc = vm_print_val(vm, n->pos, &v, vm->out);
			if (!rc && v.kind != VK_TENSOR)
				fputc('\n', vm->out);
		}
		val_drop(v);
		return rc;
	case DN_FN:
		v.kind = VK_FN;
		v.fn = n;
		return bind_here(vm, n->name, v);
	case DN_MODULE:
		v.kind = VK_MODTYPE;
		v.fn = n;
		return bind_here(vm, n->name, v);
	case DN_IMPORT:
		return run_import(vm, n);
	}
	return vm_fail(vm, n->pos, BURN_ERR_INTERNAL, "unknown item %d", n->kind);
}

/* ---- the vm ---------------------------------------------------------- */

DslVm *
dsl_vm_create(burn_ctx *ctx, FILE *out, uint64_t seed)
{
	DslVm *vm = calloc(1, sizeof *vm);

	if (!vm)
		return NULL;
	vm->bc = ctx;
	vm->out = out;
	vm->seed = seed;
	arena_init(&vm->a);
	burn_ctx_init(&vm->c, NULL);
	return vm;
}

void
dsl_vm_set_train(DslVm *vm, DslTrainFn fn, void *arg)
{
	vm->train = fn;
	vm->train_arg = arg;
}

/* Make every reference to old reachable from v (a tensor, a layer's
 * parameter, a list's or module's element) one to nt; returns how many.
 * Values form no cycles (an Obj is made from values that exist); depth
 * bounds the walk anyway. */
static int
swap_tensor(Val *v, burn_tensor *old, burn_tensor *nt, int depth)
{
	int n = 0;

	if (depth > 64)
		return 0;
	switch (v->kind) {
	case VK_TENSOR:
		if (v->t == old) {
			burn_release(v->t);
			v->t = burn_retain(nt);
			n++;
		}
		break;
	case VK_LIST:
	case VK_MODULE:
		for (int i = 0; i < v->o->n; i++)
			n += swap_tensor(&v->o->v[i], old, nt, depth + 1);
		break;
	case VK_LAYER:
		for (int k = 0; k < 4; k++)
			if (v->o->param[k] == old) {
				burn_release(v->o->param[k]);
				v->o->param[k] = burn_retain(nt);
				n++;
			}
		break;
	default:
		break;
	}
	return n;
}

int
dsl_vm_set_tensor(DslVm *vm, burn_tensor *old, const void *data, int *out_n)
{
	burn_tensor *nt = NULL;
	burn_status st;
	int n = 0;

	*out_n = 0;
	burn_ctx_init(&vm->c, NULL);
	if ((st = burn_from_buffer(vm->bc, burn_tensor_dtype(old), burn_tensor_rank(old),
	                           burn_tensor_dims(old), data, &nt)))
		return vm_burn(vm, (DslPos){ 0, 0 }, st, "set a tensor");
	for (int i = 0; i < vm->nglob; i++)
		n += swap_tensor(&vm->glob[i].v, old, nt, 0);
	for (int i = 0; i < vm->nloc; i++)
		n += swap_tensor(&vm->loc[i].v, old, nt, 0);
	burn_release(nt);
	*out_n = n;
	return BURN_OK;
}

void
dsl_vm_set_training(DslVm *vm, int on)
{
	vm->training = on;
}

static void
drop_noise(DslVm *vm)
{
	for (int i = 0; i < vm->nnoise; i++)
		burn_release(vm->noise[i]);
	vm->nnoise = 0;
	for (int i = 0; i < vm->nstat; i++)
		burn_release(vm->stat_new[i]);
	vm->nstat = 0;
}

void
dsl_vm_destroy(DslVm *vm)
{
	if (!vm)
		return;
	drop_noise(vm);
	for (int i = 0; i < vm->nglob; i++)
		val_drop(vm->glob[i].v);
	for (int i = 0; i < vm->nloc; i++)
		val_drop(vm->loc[i].v);
	free(vm->glob);
	free(vm->loc);
	arena_free(&vm->a);
	free(vm);
}

int
dsl_vm_run(DslVm *vm, const char *name, const char *src, size_t n, int show)
{
	DslProgram *prog;
	DslSrc *s;
	char *copy;
	int rc = BURN_OK;

	burn_ctx_init(&vm->c, NULL);
	vm->pos.line = vm->pos.col = 0;
	/* an interrupt of the last statement that its realisations never
	 * took (Ctrl-C after its last sync) must not stop this one */
	vm->stop = 0;
	burn_interrupt_clear(vm->bc);
	vm->cur = vm->errsrc = NULL;
	if (!(s = arena_alloc(&vm->a, sizeof *s)) || !(copy = arena_alloc(&vm->a, n + 1)) ||
	    !(s->name = arena_strdup(&vm->a, name ? name : "<input>")))
		return burn_fail(&vm->c, BURN_ERR_NOMEM, "out of memory");
	memcpy(copy, src, n);
	s->text = copy;
	s->n = n;
	vm->cur = vm->errsrc = s;
	if ((rc = dsl_parse(&vm->c, &vm->a, s->name, copy, n, &prog, &vm->pos)))
		return rc;
	for (int i = 0; i < prog->nitem && !rc; i++)
		rc = run_item(vm, prog->item[i], show && prog->tail && i == prog->nitem - 1);
	return rc;
}

int
dsl_vm_call(DslVm *vm, const char *name)
{
	Val f = { 0 }, r = { 0 };
	DslPos pos = { 0 };
	burn_status st;
	int rc;

	burn_ctx_init(&vm->c, NULL);
	vm->pos.line = vm->pos.col = 0;
	/* an interrupt of the last statement that its realisations never
	 * took (Ctrl-C after its last sync) must not stop this one */
	vm->stop = 0;
	burn_interrupt_clear(vm->bc);
	if (!lookup(vm, name, &f) || f.kind != VK_FN || f.fn->nparam) {
		val_drop(f);
		return burn_fail(&vm->c, BURN_ERR_INVALID, "%s is not a function of no parameters", name);
	}
	rc = call_fn(vm, pos, f.fn, 0, NULL, NULL, NULL, &r);
	val_drop(f);
	/* realised while the result is held (a released one is not wanted) */
	if (!rc && (st = burn_sync(vm->bc)))
		rc = vm_burn(vm, pos, st, "sync");
	val_drop(r);
	return rc;
}

int
dsl_vm_run_file(DslVm *vm, const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, got;
	int rc;

	burn_ctx_init(&vm->c, NULL);
	vm->pos.line = vm->pos.col = 0;
	vm->cur = vm->errsrc = NULL;
	if (!f)
		return burn_fail(&vm->c, BURN_ERR_IO, "%s: %s", path, strerror(errno));
	do {
		if (n == cap) {
			char *nb = cap < ((size_t)1 << 30) ? realloc(buf, cap = cap ? 2 * cap : 65536) : NULL;
			if (!nb) {
				free(buf);
				fclose(f);
				return burn_fail(&vm->c, BURN_ERR_LIMIT, "%s: larger than 1 GiB or "
				                 "out of memory", path);
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return burn_fail(&vm->c, BURN_ERR_IO, "%s: read error", path);
	}
	fclose(f);
	rc = dsl_vm_run(vm, path, buf, n, 0);
	free(buf);
	return rc;
}

const char *
dsl_vm_message(const DslVm *vm)
{
	return vm->c.msg[0] ? vm->c.msg : burn_code_name(vm->c.code);
}

DslPos
dsl_vm_pos(const DslVm *vm)
{
	return vm->pos;
}

const char *
dsl_vm_source(const DslVm *vm, size_t *n)
{
	*n = vm->errsrc ? vm->errsrc->n : 0;
	return vm->errsrc ? vm->errsrc->text : NULL;
}

void
dsl_vm_interrupt(DslVm *vm)
{
	vm->stop = 1;
	burn_interrupt(vm->bc);
}

int
dsl_vm_trace(DslVm *vm, const char *entry, Graph **out)
{
	return dsl_vm_trace_src(vm, entry, out, NULL);
}

int
dsl_vm_trace_src(DslVm *vm, const char *entry, Graph **out, burn_tensor ***src)
{
	Val f = { 0 }, res = { 0 }, *arg = NULL;
	burn_tensor **in = NULL, *outs[64 + DSL_MAX_STAT], **src2 = NULL;
	const DslNode *fn;
	int rc = BURN_OK, nout = 0, nfn;
	burn_status st;

	*out = NULL;
	if (src)
		*src = NULL;
	burn_ctx_init(&vm->c, NULL);
	drop_noise(vm);
	entry = entry ? entry : "main";
	if (!lookup(vm, entry, &f) || f.kind != VK_FN) {
		val_drop(f);
		return vm_fail(vm, (DslPos){ 0, 0 }, BURN_ERR_INVALID, "no function '%s' to "
		               "compile (AOT compiles fn %s(x: f32[1, 784], ...))", entry, entry);
	}
	fn = f.fn;
	in = calloc((size_t)fn->nparam + DSL_MAX_NOISE + 1, sizeof *in);
	arg = calloc((size_t)fn->nparam + 1, sizeof *arg);
	if (!in || !arg) {
		free(in);
		free(arg);
		return burn_fail(&vm->c, BURN_ERR_NOMEM, "out of memory");
	}
	for (int i = 0; i < fn->nparam && !rc; i++) {
		const DslParam *q = &fn->param[i];
		int dt = q->dtype ? dtype_from_name(q->dtype) : DT_UNDEF;
		if (!q->dtype || q->rank < 0)
			rc = vm_fail(vm, q->pos, BURN_ERR_INVALID, "parameter '%s' of %s needs "
			             "a type with a shape to be compiled, e.g. %s: f32[1, 784]",
			             q->name, fn->name, q->name);
		else if (dt == DT_UNDEF || !dtype_supported(dt))
			rc = vm_fail(vm, q->pos, BURN_ERR_INVALID, "unknown dtype '%s' (f32, "
			             "f16, bf16, f64, i8 ... i64, u8 ... u64, bool)", q->dtype);
		else if ((st = burn_placeholder(vm->bc, (burn_dtype)dt, q->rank, q->dim,
		                                q->name, &in[i])))
			rc = vm_burn(vm, q->pos, st, q->name);
		else {
			arg[i].kind = VK_TENSOR;
			arg[i].t = burn_retain(in[i]);
		}
	}
	if (!rc)
		rc = call_fn(vm, fn->pos, fn, fn->nparam, arg, NULL, NULL, &res);
	if (!rc) {
		if (res.kind == VK_TENSOR) {
			outs[nout++] = res.t;
		} else if (res.kind == VK_LIST && res.o->n <= 64) {
			for (int i = 0; i < res.o->n && !rc; i++) {
				if (res.o->v[i].kind != VK_TENSOR)
					rc = vm_fail(vm, fn->pos, BURN_ERR_INVALID, "%s returns a list "
					             "with %s in it: AOT outputs are tensors", fn->name,
					             val_kind_name(&res.o->v[i]));
				else
					outs[nout++] = res.o->v[i].t;
			}
		} else {
			rc = vm_fail(vm, fn->pos, BURN_ERR_INVALID, "%s returns %s: AOT needs a "
			             "tensor or a list of tensors", fn->name, val_kind_name(&res));
		}
	}
	for (int i = 0; i < vm->nnoise; i++)   /* training mode's Dropouts */
		in[fn->nparam + i] = vm->noise[i];
	nfn = nout;
	for (int i = 0; i < vm->nstat; i++)    /* and BatchNorms */
		outs[nout++] = vm->stat_new[i];
	if (!rc && (st = burn_trace_src(vm->bc, fn->nparam + vm->nnoise, in, nout, outs, out,
	                                &src2)))
		rc = vm_burn(vm, fn->pos, st, "trace");
	/* a running statistic's new value is named "next:" and the name of
	 * the constant holding the statistic (api/dsl.h) */
	for (int i = 0; i < vm->nstat && !rc; i++) {
		Graph *g = *out;
		const char *nm = NULL;
		for (int v = 0; v < g->nval && !nm; v++)
			if (src2[v] == vm->stat_old[i])
				nm = GV(g, v)->name;
		if (!nm || !(GV(g, g->out[nfn + i])->name = arena_printf(&g->arena, "next:%s", nm)))
			rc = burn_fail(&vm->c, BURN_ERR_INTERNAL, "trace: a BatchNorm's running "
			               "statistic is not in the traced graph");
	}
	if (rc && *out) {
		graph_destroy(*out);
		*out = NULL;
	}
	if (src && !rc)
		*src = src2;
	else
		free(src2);
	val_drop(res);
	for (int i = 0; i < fn->nparam; i++) {
		burn_release(in[i]);
		val_drop(arg[i]);
	}
	drop_noise(vm);
	free(in);
	free(arg);
	return rc;
}

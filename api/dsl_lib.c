/*
 * dsl_lib.c - what a .burn script can call besides its own functions:
 * the builtins (print, tensor, zeros, rand, ...), the standard layers, the
 * constants, and every op of the op table through one generic call
 * (lib_call_op) driven by the table api/dsl_ops.def: positional and
 * keyword arguments are matched to the op's ONNX inputs by position and
 * name, every other keyword is an ONNX attribute whose type comes from
 * attr_type_expected (ir/graph.h).  No op has code of its own here.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "dsl_int.h"
#include "../frontend/safetensors.h"

/* ---- the op table's DSL names ----------------------------------------- */

typedef struct DslOp {
	const char *name;    /* snake_case */
	const char *inputs;  /* "name:FLAGS ..." (dsl_ops.def) */
	const char *attrs;   /* "name name ..." */
} DslOp;

static const DslOp dsl_ops[OP_COUNT_] = {
#define D(op, snake, ins, attrs) [OP_##op] = { snake, ins, attrs },
#include "dsl_ops.def"
#undef D
};

/* One input of an op, parsed from its row. */
typedef struct OpIn {
	char name[32];
	char kind;           /* 'T', 'I' or 'B' */
	int variadic;
} OpIn;

static int
op_inputs_parse(int op, OpIn *in, int cap)
{
	const char *s = dsl_ops[op].inputs;
	int n = 0;

	while (s && *s && n < cap) {
		const char *colon = strchr(s, ':'), *sp = strchr(s, ' ');
		size_t len = colon ? (size_t)(colon - s) : strlen(s);
		if (len >= sizeof in[n].name)
			len = sizeof in[n].name - 1;
		memcpy(in[n].name, s, len);
		in[n].name[len] = 0;
		in[n].kind = colon ? colon[1] : 'T';
		in[n].variadic = colon && colon[2] == '*';
		n++;
		s = sp ? sp + 1 : NULL;
	}
	return n;
}

/* Whether ONNX defines attribute name for op (the row's last column). */
static int
has_attr(int op, const char *name)
{
	const char *s = dsl_ops[op].attrs;
	size_t len = strlen(name);

	while (s && *s) {
		const char *sp = strchr(s, ' ');
		size_t l = sp ? (size_t)(sp - s) : strlen(s);
		if (l == len && !memcmp(s, name, len))
			return 1;
		s = sp ? sp + 1 : NULL;
	}
	return 0;
}

/* ---- builtins ---------------------------------------------------------- */

#define BUILTINS(X) \
	X(BI_PRINT, "print") X(BI_TENSOR, "tensor") X(BI_ZEROS, "zeros") \
	X(BI_ONES, "ones") X(BI_FULL, "full") X(BI_ARANGE, "arange") \
	X(BI_RAND, "rand") X(BI_RANDN, "randn") X(BI_SEED, "seed") \
	X(BI_SYNC, "sync") X(BI_LEN, "len") \
	X(BI_LOAD_ST, "load_safetensors") X(BI_LOAD_RAW, "load_raw") \
	X(BI_TRAIN, "train") \
	X(BI_LINEAR, "Linear") X(BI_CONV2D, "Conv2d") X(BI_LAYERNORM, "LayerNorm") \
	X(BI_BATCHNORM, "BatchNorm") \
	X(BI_EMBEDDING, "Embedding") X(BI_DROPOUT, "Dropout") X(BI_GELU, "Gelu") \
	X(BI_RELU, "Relu") X(BI_SIGMOID, "Sigmoid") X(BI_TANH, "Tanh") \
	X(BI_SOFTMAX, "Softmax")

enum {
	BI_NONE_ = 0,
#define X(id, name) id,
	BUILTINS(X)
#undef X
	BI_COUNT_
};

static const char *const builtin_names[BI_COUNT_] = {
#define X(id, name) [id] = name,
	BUILTINS(X)
#undef X
};

static const char *const layer_names[LY_COUNT_] = {
#define X(k, n) [k] = n,
	DSL_LAYERS(X)
#undef X
};

const char *
lib_layer_name(int kind)
{
	return kind > 0 && kind < LY_COUNT_ ? layer_names[kind] : "?";
}

int
lib_param_index(const char *name)
{
	static const char *const nm[] = { "weight", "bias", "running_mean", "running_var",
	                                  "gamma", "beta" };
	for (int i = 0; i < 6; i++)
		if (!strcmp(name, nm[i]))
			return i & 3;
	return -1;
}

const char *
lib_builtin_name(int id)
{
	return id > 0 && id < BI_COUNT_ ? builtin_names[id] : "?";
}

int
lib_lookup(const char *name, Val *out)
{
	memset(out, 0, sizeof *out);
	for (int i = 1; i < BI_COUNT_; i++)
		if (!strcmp(builtin_names[i], name)) {
			out->kind = VK_BUILTIN;
			out->id = i;
			return 1;
		}
	for (int i = 1; i < OP_COUNT_; i++)
		if (dsl_ops[i].name && !strcmp(dsl_ops[i].name, name)) {
			out->kind = VK_OP;
			out->id = i;
			return 1;
		}
	return 0;
}

int
lib_constant(const char *name, Val *out)
{
	static const struct { const char *name; double v; } num[] = {
		{ "PI", 3.14159265358979323846 }, { "E", 2.71828182845904523536 },
		{ "SQRT_2", 1.41421356237309504880 }, { "LN_2", 0.69314718055994530942 },
		{ "INF", INFINITY }, { "NAN", NAN },
	};
	static const struct { const char *name; int dt; } dts[] = {
		{ "f32", BURN_F32 }, { "f16", BURN_F16 }, { "bf16", BURN_BF16 },
		{ "f64", BURN_F64 }, { "i8", BURN_I8 }, { "i16", BURN_I16 },
		{ "i32", BURN_I32 }, { "i64", BURN_I64 }, { "u8", BURN_U8 },
		{ "u16", BURN_U16 }, { "u32", BURN_U32 }, { "u64", BURN_U64 },
		{ "bool", BURN_BOOL },
	};

	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < sizeof num / sizeof num[0]; i++)
		if (!strcmp(num[i].name, name)) {
			*out = val_num(num[i].v, 0);
			return 1;
		}
	for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++)
		if (!strcmp(dts[i].name, name)) {
			out->kind = VK_DTYPE;
			out->num = dts[i].dt;
			return 1;
		}
	return 0;
}

/*
 * Match a builtin's arguments to its parameters names[0..np): positional
 * ones in order, keyword ones by name.  slot[k] points at the argument of
 * parameter k, or is NULL.  Names starting with '*' take all remaining
 * positionals (print).
 */
static int
match_args(DslVm *vm, DslPos pos, const char *fname, const char *const *names,
           int np, int n, Val *arg, const char *const *key, const DslPos *apos,
           Val **slot)
{
	int next = 0;

	for (int k = 0; k < np; k++)
		slot[k] = NULL;
	for (int i = 0; i < n; i++) {
		DslPos ap = apos ? apos[i] : pos;
		int k;
		if (key && key[i]) {
			for (k = 0; k < np; k++)
				if (!strcmp(names[k], key[i]))
					break;
			if (k == np)
				return vm_fail(vm, ap, BURN_ERR_INVALID, "%s has no argument '%s'",
				               fname, key[i]);
		} else {
			k = next++;
			if (k >= np)
				return vm_fail(vm, ap, BURN_ERR_INVALID, "%s takes at most %d "
				               "argument%s, got %d", fname, np, np == 1 ? "" : "s", n);
		}
		if (slot[k])
			return vm_fail(vm, ap, BURN_ERR_INVALID, "argument '%s' of %s given "
			               "twice", names[k], fname);
		slot[k] = &arg[i];
	}
	return BURN_OK;
}

/* A whole number argument. */
static int
get_int(DslVm *vm, DslPos pos, const char *what, const Val *v, int64_t dflt, int64_t *out)
{
	*out = dflt;
	if (!v) {
		*out = dflt;
		return BURN_OK;
	}
	if (v->kind != VK_NUM || v->num != floor(v->num) || fabs(v->num) > 9e18)
		return vm_fail(vm, pos, BURN_ERR_INVALID, "%s must be a whole number, not %s",
		               what, v->kind == VK_NUM ? "a fraction" : val_kind_name(v));
	*out = (int64_t)v->num;
	return BURN_OK;
}

static int
get_num(DslVm *vm, DslPos pos, const char *what, const Val *v, double dflt, double *out)
{
	*out = dflt;
	if (!v) {
		*out = dflt;
		return BURN_OK;
	}
	if (v->kind != VK_NUM)
		return vm_fail(vm, pos, BURN_ERR_INVALID, "%s must be a number, not %s",
		               what, val_kind_name(v));
	*out = v->num;
	return BURN_OK;
}

static int
get_dtype(DslVm *vm, DslPos pos, const Val *v, burn_dtype dflt, burn_dtype *out)
{
	int dt;

	if (!v) {
		*out = dflt;
		return BURN_OK;
	}
	if (v->kind == VK_DTYPE) {
		*out = (burn_dtype)v->num;
		return BURN_OK;
	}
	if (v->kind == VK_STR && (dt = dtype_from_name(v->s)) != DT_UNDEF &&
	    dtype_supported(dt) && dt != DT_STRING) {
		*out = (burn_dtype)dt;
		return BURN_OK;
	}
	return vm_fail(vm, pos, BURN_ERR_INVALID, "expected a dtype (f32, f16, bf16, "
	               "f64, i8 ... i64, u8 ... u64, bool), not %s", val_kind_name(v));
}

/* A shape: a list of whole numbers, or one number. */
static int
get_shape(DslVm *vm, DslPos pos, const Val *v, int *rank, int64_t *dim)
{
	if (!v)
		return vm_fail(vm, pos, BURN_ERR_INVALID, "a shape is needed, e.g. [2, 3]");
	if (v->kind == VK_NUM) {
		*rank = 1;
		return get_int(vm, pos, "a dimension", v, 0, &dim[0]);
	}
	if (v->kind != VK_LIST)
		return vm_fail(vm, pos, BURN_ERR_INVALID, "a shape is a list of whole "
		               "numbers, not %s", val_kind_name(v));
	if (v->o->n > BURN_MAX_RANK)
		return vm_fail(vm, pos, BURN_ERR_INVALID, "a shape has at most %d dims",
		               BURN_MAX_RANK);
	*rank = v->o->n;
	for (int i = 0; i < v->o->n; i++) {
		TRY(get_int(vm, pos, "a dimension", &v->o->v[i], 0, &dim[i]));
		if (dim[i] < 0)
			return vm_fail(vm, pos, BURN_ERR_INVALID, "dimension %lld is negative",
			               (long long)dim[i]);
	}
	return BURN_OK;
}

static int
ret_tensor(Val *out, burn_tensor *t)
{
	memset(out, 0, sizeof *out);
	out->kind = VK_TENSOR;
	out->t = t;
	return BURN_OK;
}

/* A parameter drawn uniform in [-bound, bound) with the vm's next seed. */
static int
param_uniform(DslVm *vm, DslPos pos, int rank, const int64_t *dim, double bound,
              burn_tensor **out)
{
	burn_status st = burn_rand(vm->bc, BURN_F32, rank, dim, -bound, bound,
	                           vm->seed++, out);
	return st ? vm_burn(vm, pos, st, "initialising a parameter") : BURN_OK;
}

static int
new_layer(DslVm *vm, int kind, Val *out)
{
	Obj *o = obj_new(vm, OB_LAYER, 0);

	if (!o)
		return vm->c.code;
	o->layer = kind;
	memset(out, 0, sizeof *out);
	out->kind = VK_LAYER;
	out->o = o;
	return BURN_OK;
}

/* The layer constructors.  Initialisation as Burn's defaults: Linear and
 * Conv2d uniform in +-1/sqrt(fan_in) (Kaiming uniform with gain
 * 1/sqrt(3)), for weight and bias; Embedding normal(0, 1); LayerNorm's
 * gamma ones and beta zeros; BatchNorm's weight and running_var ones, bias
 * and running_mean zeros (PyTorch's). */
static int
make_layer(DslVm *vm, DslPos pos, int id, int n, Val *arg, const char *const *key,
           const DslPos *apos, Val *out)
{
	static const char *const lin[] = { "d_input", "d_output", "bias" };
	static const char *const conv[] = { "channels_in", "channels_out", "kernel_size",
	                                    "stride", "padding", "dilation", "groups", "bias" };
	static const char *const ln[] = { "d_model", "epsilon" };
	static const char *const bn[] = { "num_features", "epsilon", "momentum" };
	static const char *const emb[] = { "n_embedding", "d_model" };
	static const char *const drop[] = { "prob" };
	static const char *const sm[] = { "axis" };
	Val *s[8];
	const char *fname = builtin_names[id];
	Obj *o;
	int64_t b;

	switch (id) {
	case BI_LINEAR: {
		int64_t d[2];
		TRY(match_args(vm, pos, fname, lin, 3, n, arg, key, apos, s));
		TRY(get_int(vm, pos, "d_input", s[0], -1, &d[0]));
		TRY(get_int(vm, pos, "d_output", s[1], -1, &d[1]));
		TRY(get_int(vm, pos, "bias", s[2], 1, &b));
		if (d[0] <= 0 || d[1] <= 0)
			return vm_fail(vm, pos, BURN_ERR_INVALID, "Linear(d_input, d_output) "
			               "needs two positive sizes");
		TRY(new_layer(vm, LY_LINEAR, out));
		o = out->o;
		o->cfg[0] = d[0];
		o->cfg[1] = d[1];
		TRY(param_uniform(vm, pos, 2, d, 1 / sqrt((double)d[0]), &o->param[0]));
		if (b)
			TRY(param_uniform(vm, pos, 1, &d[1], 1 / sqrt((double)d[0]), &o->param[1]));
		return BURN_OK;
	}
	case BI_CONV2D: {
		int64_t ci, co, k[2], st, pad, dil, g, w[4];
		TRY(match_args(vm, pos, fname, conv, 8, n, arg, key, apos, s));
		TRY(get_int(vm, pos, "channels_in", s[0], -1, &ci));
		TRY(get_int(vm, pos, "channels_out", s[1], -1, &co));
		if (s[2] && s[2]->kind == VK_LIST) {
			int r;
			TRY(get_shape(vm, pos, s[2], &r, k));
			if (r != 2)
				return vm_fail(vm, pos, BURN_ERR_INVALID, "kernel_size is one "
				               "number or [kh, kw]");
		} else {
			TRY(get_int(vm, pos, "kernel_size", s[2], -1, &k[0]));
			k[1] = k[0];
		}
		TRY(get_int(vm, pos, "stride", s[3], 1, &st));
		TRY(get_int(vm, pos, "padding", s[4], 0, &pad));
		TRY(get_int(vm, pos, "dilation", s[5], 1, &dil));
		TRY(get_int(vm, pos, "groups", s[6], 1, &g));
		TRY(get_int(vm, pos, "bias", s[7], 1, &b));
		if (ci <= 0 || co <= 0 || k[0] <= 0 || k[1] <= 0 || st <= 0 || pad < 0 ||
		    dil <= 0 || g <= 0 || ci % g || co % g)
			return vm_fail(vm, pos, BURN_ERR_INVALID, "Conv2d(channels_in, "
			               "channels_out, kernel_size, ...) needs positive sizes, "
			               "channels divisible by groups");
		TRY(new_layer(vm, LY_CONV2D, out));
		o = out->o;
		o->cfg[0] = ci; o->cfg[1] = co; o->cfg[2] = k[0]; o->cfg[3] = k[1];
		o->cfg[4] = st; o->cfg[5] = pad; o->cfg[6] = dil; o->cfg[7] = g;
		w[0] = co; w[1] = ci / g; w[2] = k[0]; w[3] = k[1];
		{
			double fan_in = (double)(ci / g) * (double)k[0] * (double)k[1];
			TRY(param_uniform(vm, pos, 4, w, 1 / sqrt(fan_in), &o->param[0]));
			if (b)
				TRY(param_uniform(vm, pos, 1, &co, 1 / sqrt(fan_in), &o->param[1]));
		}
		return BURN_OK;
	}
	case BI_LAYERNORM: {
		int64_t d;
		double eps;
		burn_status st;
		TRY(match_args(vm, pos, fname, ln, 2, n, arg, key, apos, s));
		TRY(get_int(vm, pos, "d_model", s[0], -1, &d));
		TRY(get_num(vm, pos, "epsilon", s[1], 1e-5, &eps));
		if (d <= 0)
			return vm_fail(vm, pos, BURN_ERR_INVALID, "LayerNorm(d_model) needs a "
			               "positive size");
		TRY(new_layer(vm, LY_LAYERNORM, out));
		o = out->o;
		o->cfg[0] = d;
		o->fcfg = eps;
		if ((st = burn_ones(vm->bc, BURN_F32, 1, &d, &o->param[0])) ||
		    (st = burn_zeros(vm->bc, BURN_F32, 1, &d, &o->param[1])))
			return vm_burn(vm, pos, st, "LayerNorm");
		return BURN_OK;
	}
	case BI_BATCHNORM: {
		int64_t d;
		double eps, mom;
		burn_status st;
		TRY(match_args(vm, pos, fname, bn, 3, n, arg, key, apos, s));
		TRY(get_int(vm, pos, "num_features", s[0], -1, &d));
		TRY(get_num(vm, pos, "epsilon", s[1], 1e-5, &eps));
		TRY(get_num(vm, pos, "momentum", s[2], 0.1, &mom));
		if (d <= 0 || !(eps > 0) || !(mom >= 0 && mom <= 1))
			return vm_fail(vm, pos, BURN_ERR_INVALID, "BatchNorm(num_features, "
			               "epsilon, momentum) needs a positive size and epsilon, "
			               "0 <= momentum <= 1");
		TRY(new_layer(vm, LY_BATCHNORM, out));
		o = out->o;
		o->cfg[0] = d;
		o->fcfg = eps;
		o->fcfg2 = mom;
		if ((st = burn_ones(vm->bc, BURN_F32, 1, &d, &o->param[0])) ||
		    (st = burn_zeros(vm->bc, BURN_F32, 1, &d, &o->param[1])) ||
		    (st = burn_zeros(vm->bc, BURN_F32, 1, &d, &o->param[2])) ||
		    (st = burn_ones(vm->bc, BURN_F32, 1, &d, &o->param[3])))
			return vm_burn(vm, pos, st, "BatchNorm");
		return BURN_OK;
	}
	case BI_EMBEDDING: {
		int64_t d[2];
		burn_status st;
		TRY(match_args(vm, pos, fname, emb, 2, n, arg, key, apos, s));
		TRY(get_int(vm, pos, "n_embedding", s[0], -1, &d[0]));
		TRY(get_int(vm, pos, "d_model", s[1], -1, &d[1]));
		if (d[0] <= 0 || d[1] <= 0)
			return vm_fail(vm, pos, BURN_ERR_INVALID, "Embedding(n_embedding, "
			               "d_model) needs two positive sizes");
		TRY(new_layer(vm, LY_EMBEDDING, out));
		o = out->o;
		o->cfg[0] = d[0];
		o->cfg[1] = d[1];
		if ((st = burn_randn(vm->bc, BURN_F32, 2, d, 0, 1, vm->seed++, &o->param[0])))
			return vm_burn(vm, pos, st, "Embedding");
		return BURN_OK;
	}
	case BI_DROPOUT: {
		double p;
		TRY(match_args(vm, pos, fname, drop, 1, n, arg, key, apos, s));
		TRY(get_num(vm, pos, "prob", s[0], 0.5, &p));
		if (!(p >= 0 && p < 1))
			return vm_fail(vm, pos, BURN_ERR_INVALID, "Dropout(prob) needs 0 <= "
			               "prob < 1");
		TRY(new_layer(vm, LY_DROPOUT, out));
		out->o->fcfg = p;
		return BURN_OK;
	}
	case BI_SOFTMAX: {
		int64_t ax;
		TRY(match_args(vm, pos, fname, sm, 1, n, arg, key, apos, s));
		TRY(get_int(vm, pos, "axis", s[0], -1, &ax));
		TRY(new_layer(vm, LY_SOFTMAX, out));
		out->o->cfg[0] = ax;
		return BURN_OK;
	}
	default:
		TRY(match_args(vm, pos, fname, NULL, 0, n, arg, key, apos, s));
		return new_layer(vm, id == BI_GELU ? LY_GELU : id == BI_RELU ? LY_RELU :
		                     id == BI_SIGMOID ? LY_SIGMOID : LY_TANH, out);
	}
}

/*
 * BatchNorm over axis 1 of x [N, C, ...].  Eval mode: ONNX
 * BatchNormalization with the running statistics.  Training mode (a trace
 * for the train step): BatchNormalization with training_mode=1 (the batch
 * mean and biased variance normalise; its gradient is the training-mode
 * rule), and the running statistics' new values, as PyTorch's:
 *   mean' = (1 - m) mean + m batch_mean
 *   var'  = (1 - m) var + m batch_var n / (n - 1)   (n = N * spatial)
 * recorded in vm->stat_old/stat_new for dsl_vm_trace_src to output.
 * *r: the output (a new reference).
 */
static int
batchnorm_forward(DslVm *vm, DslPos pos, Obj *ly, burn_tensor *x, burn_tensor **r)
{
	int rk = burn_tensor_rank(x), na = 0;
	const int64_t *dim = burn_tensor_dims(x);
	int64_t ax[BURN_MAX_RANK], n = 1;
	double m = ly->fcfg2;
	burn_attr at[2] = {
		{ "epsilon", BURN_ATTR_FLOAT, .f = ly->fcfg },
		{ "training_mode", BURN_ATTR_INT, .i = 1 },
	};
	burn_tensor *in[5] = { x, ly->param[0], ly->param[1], ly->param[2], ly->param[3] };
	burn_tensor *mean = NULL, *mk = NULL, *d = NULL, *d2 = NULL, *var = NULL;
	burn_tensor *a = NULL, *b = NULL, *nm = NULL, *nv = NULL;
	burn_status st;

	if (rk < 2 || dim[1] != ly->cfg[0])
		return vm_fail(vm, pos, BURN_ERR_SHAPE, "BatchNorm(%lld) takes x [N, %lld, "
		               "...], got rank %d%s", (long long)ly->cfg[0],
		               (long long)ly->cfg[0], rk, rk >= 2 ? " with another axis 1" : "");
	if (!vm->training) {
		if ((st = burn_op(vm->bc, "BatchNormalization", 5, in, 1, at, 1, r)))
			return vm_burn(vm, pos, st, "BatchNorm");
		return BURN_OK;
	}
	for (int i = 0; i < rk; i++)
		if (i != 1) {
			ax[na++] = i;
			n *= dim[i];
		}
	if (n < 2)
		return vm_fail(vm, pos, BURN_ERR_SHAPE, "BatchNorm in training needs more "
		               "than one value per channel (x has %lld)", (long long)n);
	if (vm->nstat + 2 > DSL_MAX_STAT)
		return vm_fail(vm, pos, BURN_ERR_LIMIT, "more than %d BatchNorm layers in one "
		               "traced call", DSL_MAX_STAT / 2);
	for (int k = 0; k < vm->nstat; k++)
		if (vm->stat_old[k] == ly->param[2])
			return vm_fail(vm, pos, BURN_ERR_INVALID, "a BatchNorm layer runs twice "
			               "in one traced call: its running statistics would be "
			               "updated twice");
	if ((st = burn_op(vm->bc, "BatchNormalization", 5, in, 2, at, 1, r)) ||
	    (st = burn_mean(vm->bc, x, na, ax, 0, &mean)) ||
	    (st = burn_mean(vm->bc, x, na, ax, 1, &mk)) ||
	    (st = burn_sub(vm->bc, x, mk, &d)) ||
	    (st = burn_mul(vm->bc, d, d, &d2)) ||
	    (st = burn_mean(vm->bc, d2, na, ax, 0, &var)))
		goto done;
	if ((st = burn_mul_scalar(vm->bc, ly->param[2], 1 - m, &a)) ||
	    (st = burn_mul_scalar(vm->bc, mean, m, &b)) ||
	    (st = burn_add(vm->bc, a, b, &nm)))
		goto done;
	burn_release(a);
	burn_release(b);
	a = b = NULL;
	if ((st = burn_mul_scalar(vm->bc, ly->param[3], 1 - m, &a)) ||
	    (st = burn_mul_scalar(vm->bc, var, m * (double)n / (double)(n - 1), &b)) ||
	    (st = burn_add(vm->bc, a, b, &nv)))
		goto done;
	vm->stat_old[vm->nstat] = ly->param[2];
	vm->stat_new[vm->nstat++] = nm;
	vm->stat_old[vm->nstat] = ly->param[3];
	vm->stat_new[vm->nstat++] = nv;
	nm = nv = NULL;
done:
	burn_release(mean);
	burn_release(mk);
	burn_release(d);
	burn_release(d2);
	burn_release(var);
	burn_release(a);
	burn_release(b);
	burn_release(nm);
	burn_release(nv);
	if (st) {
		burn_release(*r);
		*r = NULL;
		return vm_burn(vm, pos, st, "BatchNorm");
	}
	return BURN_OK;
}

int
lib_layer_forward(DslVm *vm, DslPos pos, Obj *ly, int n, Val *arg, Val *out)
{
	burn_tensor *x = NULL, *r = NULL, *tmp;
	burn_status st = BURN_STATUS_OK;
	const char *name = lib_layer_name(ly->layer);

	if (n != 1)
		return vm_fail(vm, pos, BURN_ERR_INVALID, "a %s layer takes 1 input, got %d",
		               name, n);
	TRY(vm_to_tensor(vm, pos, &arg[0], ly->layer == LY_EMBEDDING ? BURN_I64 : BURN_F32, &x));
	switch (ly->layer) {
	case LY_LINEAR:
		st = burn_matmul(vm->bc, x, ly->param[0], &r);
		if (!st && ly->param[1]) {
			tmp = r;
			st = burn_add(vm->bc, tmp, ly->param[1], &r);
			burn_release(tmp);
		}
		break;
	case LY_CONV2D: {
		int64_t strides[2] = { ly->cfg[4], ly->cfg[4] };
		int64_t pads[4] = { ly->cfg[5], ly->cfg[5], ly->cfg[5], ly->cfg[5] };
		int64_t dil[2] = { ly->cfg[6], ly->cfg[6] };
		int64_t ks[2] = { ly->cfg[2], ly->cfg[3] };
		burn_attr at[5] = {
			{ "strides", BURN_ATTR_INTS, .n = 2, .ints = strides },
			{ "pads", BURN_ATTR_INTS, .n = 4, .ints = pads },
			{ "dilations", BURN_ATTR_INTS, .n = 2, .ints = dil },
			{ "group", BURN_ATTR_INT, .i = ly->cfg[7] },
			{ "kernel_shape", BURN_ATTR_INTS, .n = 2, .ints = ks },
		};
		burn_tensor *in[3] = { x, ly->param[0], ly->param[1] };
		st = burn_op(vm->bc, "Conv", ly->param[1] ? 3 : 2, in, 5, at, 1, &r);
		break;
	}
	case LY_LAYERNORM: {
		burn_attr at[2] = {
			{ "axis", BURN_ATTR_INT, .i = -1 },
			{ "epsilon", BURN_ATTR_FLOAT, .f = ly->fcfg },
		};
		burn_tensor *in[3] = { x, ly->param[0], ly->param[1] };
		st = burn_op(vm->bc, "LayerNormalization", 3, in, 2, at, 1, &r);
		break;
	}
	case LY_BATCHNORM: {
		int rc = batchnorm_forward(vm, pos, ly, x, &r);
		if (rc) {
			burn_release(x);
			return rc;
		}
		break;
	}
	case LY_EMBEDDING: {
		burn_tensor *in[2] = { ly->param[0], x };
		st = burn_op(vm->bc, "Gather", 2, in, 0, NULL, 1, &r);
		break;
	}
	case LY_DROPOUT:
		/* eval: the identity; training (a trace for burncc train): the
		 * mask from a noise input the driver fills each step */
		if (vm->training) {
			burn_tensor *u = NULL, *pt = NULL, *keep = NULL, *xs = NULL, *zero = NULL;
			char nm[32];
			double p = ly->fcfg;
			if (p < 0 || p >= 1) {
				burn_release(x);
				return vm_fail(vm, pos, BURN_ERR_INVALID, "Dropout(%g) in training: "
				               "the probability must be in [0, 1)", p);
			}
			if (vm->nnoise == DSL_MAX_NOISE) {
				burn_release(x);
				return vm_fail(vm, pos, BURN_ERR_LIMIT, "more than %d Dropout layers "
				               "in one traced call", DSL_MAX_NOISE);
			}
			snprintf(nm, sizeof nm, "dropout_noise%d", vm->nnoise);
			if (!(st = burn_placeholder(vm->bc, BURN_F32, burn_tensor_rank(x),
			                            burn_tensor_dims(x), nm, &u))) {
				vm->noise[vm->nnoise++] = u;
				st = burn_full(vm->bc, BURN_F32, 0, NULL, p, &pt);
			}
			if (!st) {
				burn_tensor *in2[2] = { u, pt };
				st = burn_op(vm->bc, "GreaterOrEqual", 2, in2, 0, NULL, 1, &keep);
			}
			if (!st)
				st = burn_mul_scalar(vm->bc, x, 1 / (1 - p), &xs);
			if (!st)
				st = burn_full(vm->bc, BURN_F32, 0, NULL, 0, &zero);
			if (!st) {
				burn_tensor *in3[3] = { keep, xs, zero };
				st = burn_op(vm->bc, "Where", 3, in3, 0, NULL, 1, &r);
			}
			burn_release(pt);
			burn_release(keep);
			burn_release(xs);
			burn_release(zero);
		} else {
			r = burn_retain(x);
		}
		break;
	case LY_GELU:
		st = burn_unary(vm->bc, "Gelu", x, &r);
		break;
	case LY_RELU:
		st = burn_unary(vm->bc, "Relu", x, &r);
		break;
	case LY_SIGMOID:
		st = burn_unary(vm->bc, "Sigmoid", x, &r);
		break;
	case LY_TANH:
		st = burn_unary(vm->bc, "Tanh", x, &r);
		break;
	case LY_SOFTMAX:
		st = burn_softmax(vm->bc, x, ly->cfg[0], &r);
		break;
	}
	burn_release(x);
	if (st)
		return vm_burn(vm, pos, st, name);
	return ret_tensor(out, r);
}

/* Numbers and lists of numbers as doubles, for rand/arange and friends. */
static int
print_args(DslVm *vm, DslPos pos, int n, Val *arg, const char *const *key,
           const DslPos *apos)
{
	int last_tensor = 0;

	for (int i = 0; i < n; i++) {
		if (key && key[i])
			return vm_fail(vm, apos ? apos[i] : pos, BURN_ERR_INVALID, "print takes "
			               "no keyword arguments");
		if (i && !last_tensor)
			fputc(' ', vm->out);
		TRY(vm_print_val(vm, apos ? apos[i] : pos, &arg[i], vm->out));
		last_tensor = arg[i].kind == VK_TENSOR;
	}
	if (!last_tensor)
		fputc('\n', vm->out);
	fflush(vm->out);
	return BURN_OK;
}

static int load_safetensors(DslVm *vm, DslPos pos, Val *module, Val *path);

/* A path relative to the running script's folder (as import's). */
static const char *
script_path(DslVm *vm, const char *p)
{
	const char *name = vm_srcname(vm), *sl = strrchr(name, '/');
	const char *r = p[0] != '/' && sl ? arena_printf(&vm->a, "%.*s/%s",
	                    (int)(sl - name), name, p) : p;
	return r ? r : p;
}

/* The raw little-endian elements of a tensor from a file of exactly
 * numel * element size bytes. */
static int
load_raw(DslVm *vm, DslPos pos, const char *path, burn_dtype dt, int rank,
         const int64_t *dim, burn_tensor **out)
{
	const char *p = script_path(vm, path);
	int64_t n = 1, bytes;
	FILE *f;
	void *buf;
	long got;
	burn_status st;

	for (int d = 0; d < rank; d++)
		if (burn_mul_ovf(n, dim[d], &n))
			return vm_fail(vm, pos, BURN_ERR_LIMIT, "load_raw: shape too large");
	if (burn_mul_ovf(n, dtype_size(dt), &bytes) || bytes > ((int64_t)1 << 32))
		return vm_fail(vm, pos, BURN_ERR_LIMIT, "load_raw: more than 4 GiB");
	if (!(f = fopen(p, "rb")))
		return vm_fail(vm, pos, BURN_ERR_IO, "load_raw: cannot open %s", p);
	if (fseek(f, 0, SEEK_END) || (got = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return vm_fail(vm, pos, BURN_ERR_IO, "load_raw: cannot read %s", p);
	}
	if (got != bytes) {
		fclose(f);
		return vm_fail(vm, pos, BURN_ERR_SHAPE, "load_raw: %s has %ld bytes, the "
		               "shape and dtype need %lld", p, got, (long long)bytes);
	}
	if (!(buf = malloc((size_t)(bytes ? bytes : 1)))) {
		fclose(f);
		return burn_fail(&vm->c, BURN_ERR_NOMEM, "out of memory");
	}
	if (fread(buf, 1, (size_t)bytes, f) != (size_t)bytes) {
		free(buf);
		fclose(f);
		return vm_fail(vm, pos, BURN_ERR_IO, "load_raw: short read of %s", p);
	}
	fclose(f);
	st = burn_from_buffer(vm->bc, dt, rank, dim, buf, out);
	free(buf);
	return st ? vm_burn(vm, pos, st, "load_raw") : BURN_OK;
}

/* train()'s metrics, the columns of DslTrainCall.hist */
static const char *const train_metrics[3] = { "loss", "test_loss", "accuracy" };

/*
 * train(model, data, key=value, ..., metrics=["loss", "test_loss", "accuracy"])
 *
 * model is a function with typed parameters (what AOT compiles: `fn main(x:
 * f32[64, 784])`), data a directory.  The other keywords go to the driver's
 * hook as they are (numbers, strings, booleans); the hook names the one at
 * fault, and the error is put at it.  Returns one list per metric asked
 * (all three by default), each the metric's value after every epoch.
 */
static int
call_train(DslVm *vm, DslPos pos, int n, Val *arg, const char *const *key,
           const DslPos *apos, Val *out)
{
	DslTrainCall tc;
	Ctx c;
	const Val *model = NULL, *data = NULL, *metrics = NULL;
	const char **k = NULL, **str = NULL;
	double *num = NULL;
	DslPos *kpos = NULL, mpos = pos;
	int npos = 0, rc = BURN_OK, want[3] = { 0, 1, 2 }, nwant = 3;
	Obj *res;

	memset(&tc, 0, sizeof tc);
	k = calloc((size_t)n + 1, sizeof *k);
	str = calloc((size_t)n + 1, sizeof *str);
	num = calloc((size_t)n + 1, sizeof *num);
	kpos = calloc((size_t)n + 1, sizeof *kpos);
	if (!k || !str || !num || !kpos) {
		rc = burn_fail(&vm->c, BURN_ERR_NOMEM, "out of memory");
		goto done;
	}
	for (int i = 0; i < n && !rc; i++) {
		DslPos ap = apos ? apos[i] : pos;
		const char *kw = key ? key[i] : NULL;
		if (!kw) {
			if (npos == 2)
				rc = vm_fail(vm, ap, BURN_ERR_INVALID, "train takes two positional "
				             "arguments (model, data), then keywords");
			else if (npos++ == 0)
				model = &arg[i];
			else
				data = &arg[i];
		} else if (!strcmp(kw, "model") || !strcmp(kw, "data")) {
			const Val **slot = kw[0] == 'm' ? &model : &data;
			if (*slot)
				rc = vm_fail(vm, ap, BURN_ERR_INVALID, "argument '%s' of train given "
				             "twice", kw);
			*slot = &arg[i];
		} else if (!strcmp(kw, "metrics")) {
			metrics = &arg[i];
			mpos = ap;
		} else if (arg[i].kind == VK_STR || arg[i].kind == VK_NUM) {
			k[tc.nkey] = kw;
			str[tc.nkey] = arg[i].kind == VK_STR ? arg[i].s : NULL;
			num[tc.nkey] = arg[i].num;
			kpos[tc.nkey++] = ap;
		} else {
			rc = vm_fail(vm, ap, BURN_ERR_INVALID, "train's '%s' takes a number, a "
			             "string or a boolean, not %s", kw, val_kind_name(&arg[i]));
		}
	}
	if (rc)
		goto done;
	if (!model || model->kind != VK_FN) {
		rc = vm_fail(vm, pos, BURN_ERR_INVALID, "train(model, data, ...) needs the "
		             "model as a function with typed parameters (fn main(x: f32[64, "
		             "784]) { ... }), not %s", model ? val_kind_name(model) : "nothing");
		goto done;
	}
	if (!data || data->kind != VK_STR) {
		rc = vm_fail(vm, pos, BURN_ERR_INVALID, "train(model, data, ...) needs the "
		             "data as a directory name (\"/usr/share/datasets/fashion-mnist\")");
		goto done;
	}
	if (metrics) {
		if (metrics->kind != VK_LIST || metrics->o->n < 1 || metrics->o->n > 3) {
			rc = vm_fail(vm, mpos, BURN_ERR_INVALID, "metrics is a list of 1 to 3 "
			             "names: \"loss\", \"test_loss\", \"accuracy\"");
			goto done;
		}
		nwant = metrics->o->n;
		for (int i = 0; i < nwant && !rc; i++) {
			const Val *m = &metrics->o->v[i];
			want[i] = -1;
			for (int j = 0; j < 3; j++)
				if (m->kind == VK_STR && !strcmp(m->s, train_metrics[j]))
					want[i] = j;
			if (want[i] < 0)
				rc = vm_fail(vm, mpos, BURN_ERR_INVALID, "unknown metric %s%s%s: "
				             "\"loss\", \"test_loss\" or \"accuracy\"",
				             m->kind == VK_STR ? "'" : "",
				             m->kind == VK_STR ? m->s : val_kind_name(m),
				             m->kind == VK_STR ? "'" : "");
		}
		if (rc)
			goto done;
	}
	if (!vm->train) {
		rc = vm_fail(vm, pos, BURN_ERR_INVALID, "train() runs under burncc run or "
		             "burncc repl (this program set no trainer)");
		goto done;
	}
	tc.src = vm_srcname(vm);
	tc.entry = model->fn->name;
	tc.data = data->s;
	tc.key = k;
	tc.str = str;
	tc.num = num;
	tc.bad = -1;
	burn_ctx_init(&c, NULL);
	if ((rc = vm->train(vm->train_arg, vm, &tc, &c))) {
		DslPos at = tc.bad >= 0 && tc.bad < tc.nkey ? kpos[tc.bad] : pos;
		rc = vm_fail(vm, at, rc, "train: %s", c.msg[0] ? c.msg : burn_code_name(rc));
		goto done;
	}
	if (!(res = obj_new(vm, OB_LIST, nwant))) {
		rc = vm->c.code;
		goto done;
	}
	out->kind = VK_LIST;
	out->o = res;
	for (int i = 0; i < nwant && !rc; i++) {
		Obj *col = obj_new(vm, OB_LIST, tc.nepoch);
		if (!col) {
			rc = vm->c.code;
			break;
		}
		res->v[i].kind = VK_LIST;
		res->v[i].o = col;
		for (int e = 0; e < tc.nepoch; e++)
			col->v[e] = val_num(tc.hist[3 * e + want[i]], 0);
	}
done:
	free(tc.hist);
	free(k);
	free(str);
	free(num);
	free(kpos);
	return rc;
}

int
lib_call_builtin(DslVm *vm, DslPos pos, int id, int n, Val *arg,
                 const char *const *key, const DslPos *apos, Val *out)
{
	static const char *const p_tensor[] = { "data", "dtype" };
	static const char *const p_zeros[] = { "shape", "dtype" };
	static const char *const p_full[] = { "shape", "value", "dtype" };
	static const char *const p_arange[] = { "start", "stop", "step", "dtype" };
	static const char *const p_rand[] = { "shape", "low", "high", "seed", "dtype" };
	static const char *const p_randn[] = { "shape", "mean", "std", "seed", "dtype" };
	static const char *const p_one[] = { "x" };
	static const char *const p_st[] = { "module", "path" };
	static const char *const p_raw[] = { "path", "shape", "dtype" };
	const char *fname = builtin_names[id];
	Val *s[8];
	burn_tensor *t = NULL;
	burn_dtype dt;
	burn_status st = BURN_STATUS_OK;
	int64_t dim[BURN_MAX_RANK];
	int rank;

	memset(out, 0, sizeof *out);
	switch (id) {
	case BI_PRINT:
		return print_args(vm, pos, n, arg, key, apos);
	case BI_TENSOR:
		TRY(match_args(vm, pos, fname, p_tensor, 2, n, arg, key, apos, s));
		if (!s[0])
			return vm_fail(vm, pos, BURN_ERR_INVALID, "tensor(data, dtype=f32) needs "
			               "its data");
		TRY(get_dtype(vm, pos, s[1], s[0]->kind == VK_TENSOR ?
		              burn_tensor_dtype(s[0]->t) : BURN_F32, &dt));
		if (s[0]->kind == VK_TENSOR && dt != burn_tensor_dtype(s[0]->t)) {
			if ((st = burn_cast(vm->bc, s[0]->t, dt, &t)))
				return vm_burn(vm, pos, st, fname);
			return ret_tensor(out, t);
		}
		TRY(vm_to_tensor(vm, s[0] == arg ? (apos ? apos[0] : pos) : pos, s[0], dt, &t));
		return ret_tensor(out, t);
	case BI_ZEROS:
	case BI_ONES:
		TRY(match_args(vm, pos, fname, p_zeros, 2, n, arg, key, apos, s));
		TRY(get_shape(vm, pos, s[0], &rank, dim));
		TRY(get_dtype(vm, pos, s[1], BURN_F32, &dt));
		st = id == BI_ZEROS ? burn_zeros(vm->bc, dt, rank, dim, &t)
		                    : burn_ones(vm->bc, dt, rank, dim, &t);
		break;
	case BI_FULL: {
		double v;
		TRY(match_args(vm, pos, fname, p_full, 3, n, arg, key, apos, s));
		TRY(get_shape(vm, pos, s[0], &rank, dim));
		if (!s[1])
			return vm_fail(vm, pos, BURN_ERR_INVALID, "full(shape, value) needs a value");
		TRY(get_num(vm, pos, "value", s[1], 0, &v));
		TRY(get_dtype(vm, pos, s[2], BURN_F32, &dt));
		st = burn_full(vm->bc, dt, rank, dim, v, &t);
		break;
	}
	case BI_ARANGE: {
		double a, b, step;
		int all_int;
		TRY(match_args(vm, pos, fname, p_arange, 4, n, arg, key, apos, s));
		if (!s[0])
			return vm_fail(vm, pos, BURN_ERR_INVALID, "arange(start, stop, step) "
			               "needs at least a stop");
		TRY(get_num(vm, pos, "start", s[0], 0, &a));
		if (!s[1]) {
			b = a;
			a = 0;
		} else {
			TRY(get_num(vm, pos, "stop", s[1], 0, &b));
		}
		TRY(get_num(vm, pos, "step", s[2], 1, &step));
		all_int = s[0]->is_int && (!s[1] || s[1]->is_int) && (!s[2] || s[2]->is_int);
		TRY(get_dtype(vm, pos, s[3], all_int ? BURN_I64 : BURN_F32, &dt));
		st = burn_arange(vm->bc, dt, a, b, step, &t);
		break;
	}
	case BI_RAND:
	case BI_RANDN: {
		double a, b;
		int64_t seed;
		TRY(match_args(vm, pos, fname, id == BI_RAND ? p_rand : p_randn, 5, n, arg,
		               key, apos, s));
		TRY(get_shape(vm, pos, s[0], &rank, dim));
		TRY(get_num(vm, pos, id == BI_RAND ? "low" : "mean", s[1], 0, &a));
		TRY(get_num(vm, pos, id == BI_RAND ? "high" : "std", s[2], 1, &b));
		TRY(get_int(vm, pos, "seed", s[3], (int64_t)vm->seed, &seed));
		if (!s[3])
			vm->seed++;
		TRY(get_dtype(vm, pos, s[4], BURN_F32, &dt));
		st = id == BI_RAND ? burn_rand(vm->bc, dt, rank, dim, a, b, (uint64_t)seed, &t)
		                   : burn_randn(vm->bc, dt, rank, dim, a, b, (uint64_t)seed, &t);
		break;
	}
	case BI_SEED: {
		int64_t sd;
		TRY(match_args(vm, pos, fname, p_one, 1, n, arg, key, apos, s));
		TRY(get_int(vm, pos, "the seed", s[0], 0, &sd));
		vm->seed = (uint64_t)sd;
		out->kind = VK_NONE;
		return BURN_OK;
	}
	case BI_LEN:
		TRY(match_args(vm, pos, fname, p_one, 1, n, arg, key, apos, s));
		if (!s[0])
			return vm_fail(vm, pos, BURN_ERR_INVALID, "%s(x) needs an argument", fname);
		if (id == BI_LEN && s[0]->kind == VK_LIST) {
			*out = val_num(s[0]->o->n, 1);
			return BURN_OK;
		}
		{
			int rc;
			if (lib_tensor_method(vm, pos, "len", s[0], 0, NULL, NULL, out, &rc))
				return rc;
		}
		return vm_fail(vm, pos, BURN_ERR_INVALID, "%s() of %s", fname,
		               val_kind_name(s[0]));
	case BI_SYNC:
		TRY(match_args(vm, pos, fname, NULL, 0, n, arg, key, apos, s));
		if ((st = burn_sync(vm->bc)))
			return vm_burn(vm, pos, st, "sync");
		out->kind = VK_NONE;
		return BURN_OK;
	case BI_LOAD_RAW:
		TRY(match_args(vm, pos, fname, p_raw, 3, n, arg, key, apos, s));
		if (!s[0] || s[0]->kind != VK_STR)
			return vm_fail(vm, pos, BURN_ERR_INVALID, "load_raw(\"file\", shape, "
			               "dtype=f32) needs a file name");
		TRY(get_shape(vm, pos, s[1], &rank, dim));
		TRY(get_dtype(vm, pos, s[2], BURN_F32, &dt));
		TRY(load_raw(vm, pos, s[0]->s, dt, rank, dim, &t));
		return ret_tensor(out, t);
	case BI_LOAD_ST:
		TRY(match_args(vm, pos, fname, p_st, 2, n, arg, key, apos, s));
		if (!s[0] || !s[1])
			return vm_fail(vm, pos, BURN_ERR_INVALID, "load_safetensors(module, "
			               "\"file.safetensors\") needs both");
		TRY(load_safetensors(vm, pos, s[0], s[1]));
		*out = val_dup(*s[0]);
		return BURN_OK;
	case BI_TRAIN:
		return call_train(vm, pos, n, arg, key, apos, out);
	default:
		return make_layer(vm, pos, id, n, arg, key, apos, out);
	}
	if (st)
		return vm_burn(vm, pos, st, fname);
	return ret_tensor(out, t);
}

/* ---- tensor methods that are not ops ---------------------------------- */

/* Nested lists of x[0..] over dims, numbers as doubles. */
static int
build_list(DslVm *vm, const double *x, const int64_t *dim, int rank, int isint,
           Val *out)
{
	int64_t inner = 1;
	Obj *o;

	if (rank == 0) {
		*out = val_num(x[0], isint);
		return BURN_OK;
	}
	for (int d = 1; d < rank; d++)
		inner *= dim[d];
	if (!(o = obj_new(vm, OB_LIST, (int)dim[0])))
		return vm->c.code;
	out->kind = VK_LIST;
	out->o = o;
	for (int64_t i = 0; i < dim[0]; i++)
		TRY(build_list(vm, x + i * inner, dim + 1, rank - 1, isint, &o->v[i]));
	return BURN_OK;
}

/* t's values as nested lists of numbers (reads t back: a sync point). */
static int
to_list(DslVm *vm, DslPos pos, burn_tensor *t, Val *out)
{
	int64_t n = burn_tensor_numel(t);
	burn_tensor *d = NULL;
	double *x;
	burn_status st;
	int rc, isint = dtype_is_int(burn_tensor_dtype(t)) || burn_tensor_dtype(t) == BURN_BOOL;

	if (n > (1 << 22))
		return vm_fail(vm, pos, BURN_ERR_LIMIT, "tolist() of more than 2^22 "
		               "elements");
	for (int k = 0; k < burn_tensor_rank(t); k++)
		if (burn_tensor_dims(t)[k] > INT32_MAX)
			return vm_fail(vm, pos, BURN_ERR_LIMIT, "tolist(): a dim too large");
	if (!(x = malloc((size_t)(n ? n : 1) * sizeof *x)))
		return burn_fail(&vm->c, BURN_ERR_NOMEM, "out of memory");
	if ((st = burn_cast(vm->bc, t, BURN_F64, &d)) ||
	    (st = burn_read(vm->bc, d, x, (size_t)(n ? n : 1) * sizeof *x))) {
		burn_release(d);
		free(x);
		return vm_burn(vm, pos, st, "tolist");
	}
	burn_release(d);
	rc = build_list(vm, x, burn_tensor_dims(t), burn_tensor_rank(t), isint, out);
	if (rc) {
		val_drop(*out);
		memset(out, 0, sizeof *out);
	}
	free(x);
	return rc;
}

int
lib_tensor_method(DslVm *vm, DslPos pos, const char *name, Val *recv,
                  int n, Val *arg, const char *const *key, Val *out, int *rc)
{
	burn_tensor *t;

	if (strcmp(name, "clone") && strcmp(name, "shape") && strcmp(name, "dims") &&
	    strcmp(name, "rank") && strcmp(name, "numel") && strcmp(name, "dtype") &&
	    strcmp(name, "item") && strcmp(name, "len") && strcmp(name, "tolist"))
		return 0;
	memset(out, 0, sizeof *out);
	if (n) {
		*rc = vm_fail(vm, pos, BURN_ERR_INVALID, "%s() takes no arguments", name);
		return 1;
	}
	if (recv->kind == VK_NUM) {
		*rc = BURN_OK;
		if (!strcmp(name, "clone") || !strcmp(name, "item"))
			*out = *recv;
		else if (!strcmp(name, "numel"))
			*out = val_num(1, 1);
		else if (!strcmp(name, "rank"))
			*out = val_num(0, 1);
		else
			*rc = vm_fail(vm, pos, BURN_ERR_INVALID, "%s() of a number", name);
		return 1;
	}
	if ((*rc = vm_to_tensor(vm, pos, recv, BURN_F32, &t)))
		return 1;
	if (!strcmp(name, "clone")) {
		/* tensors are immutable values: a clone is another handle */
		out->kind = VK_TENSOR;
		out->t = t;
		return 1;
	}
	if (!strcmp(name, "shape") || !strcmp(name, "dims")) {
		Obj *o = obj_new(vm, OB_LIST, burn_tensor_rank(t));
		if (!o) {
			*rc = vm->c.code;
		} else {
			for (int i = 0; i < o->n; i++)
				o->v[i] = val_num((double)burn_tensor_dims(t)[i], 1);
			out->kind = VK_LIST;
			out->o = o;
		}
	} else if (!strcmp(name, "rank")) {
		*out = val_num(burn_tensor_rank(t), 1);
	} else if (!strcmp(name, "len")) {
		*out = val_num(burn_tensor_rank(t) ? (double)burn_tensor_dims(t)[0] : 1, 1);
	} else if (!strcmp(name, "numel")) {
		*out = val_num((double)burn_tensor_numel(t), 1);
	} else if (!strcmp(name, "dtype")) {
		out->kind = VK_DTYPE;
		out->num = burn_tensor_dtype(t);
	} else if (!strcmp(name, "tolist")) {
		*rc = to_list(vm, pos, t, out);
	} else {   /* item */
		burn_tensor *d = NULL;
		double x;
		burn_status st;
		if (burn_tensor_numel(t) != 1)
			*rc = vm_fail(vm, pos, BURN_ERR_SHAPE, "item() needs a tensor of one "
			              "element, this one has %lld", (long long)burn_tensor_numel(t));
		else if ((st = burn_cast(vm->bc, t, BURN_F64, &d)) ||
		         (st = burn_read(vm->bc, d, &x, sizeof x)))
			*rc = vm_burn(vm, pos, st, "item");
		else
			*out = val_num(x, dtype_is_int(burn_tensor_dtype(t)) ||
			                  burn_tensor_dtype(t) == BURN_BOOL);
		burn_release(d);
	}
	burn_release(t);
	return 1;
}

/* ---- ops ---------------------------------------------------------------- */

/* v as an attribute of type want (AT_*), in *a; storage for lists comes
 * from ints/floats (room for BURN_ATTR_MAXN). */
#define ATTR_MAXN 64

static int
to_attr(DslVm *vm, DslPos pos, const char *opname, const char *name, int want,
        const Val *v, burn_attr *a, int64_t *ints, double *floats)
{
	int dt;

	a->name = name;
	switch (want) {
	case AT_INT:
		a->type = BURN_ATTR_INT;
		if (v->kind == VK_DTYPE) {
			a->i = (int64_t)v->num;
			return BURN_OK;
		}
		if (v->kind == VK_STR && (dt = dtype_from_name(v->s)) != DT_UNDEF) {
			a->i = dt;
			return BURN_OK;
		}
		return get_int(vm, pos, name, v, 0, &a->i);
	case AT_FLOAT:
		a->type = BURN_ATTR_FLOAT;
		return get_num(vm, pos, name, v, 0, &a->f);
	case AT_STRING:
		a->type = BURN_ATTR_STRING;
		if (v->kind != VK_STR)
			return vm_fail(vm, pos, BURN_ERR_INVALID, "attribute '%s' of %s is a "
			               "string, not %s", name, opname, val_kind_name(v));
		a->s = v->s;
		return BURN_OK;
	case AT_INTS:
	case AT_FLOATS: {
		int n = v->kind == VK_LIST ? v->o->n : 1;
		a->type = want == AT_INTS ? BURN_ATTR_INTS : BURN_ATTR_FLOATS;
		if (n > ATTR_MAXN)
			return vm_fail(vm, pos, BURN_ERR_LIMIT, "attribute '%s' has more than %d "
			               "items", name, ATTR_MAXN);
		for (int i = 0; i < n; i++) {
			const Val *x = v->kind == VK_LIST ? &v->o->v[i] : v;
			if (want == AT_INTS)
				TRY(get_int(vm, pos, name, x, 0, &ints[i]));
			else
				TRY(get_num(vm, pos, name, x, 0, &floats[i]));
		}
		a->n = n;
		a->ints = ints;
		a->floats = floats;
		return BURN_OK;
	}
	default:
		return vm_fail(vm, pos, BURN_ERR_UNSUPPORTED, "attribute '%s' of %s is %s: "
		               "not something a script can give", name, opname,
		               attr_type_name(want));
	}
}

int
lib_call_op(DslVm *vm, DslPos pos, int op, int n, Val *arg,
            const char *const *key, const DslPos *apos, Val *out)
{
	enum { MAXIN = 64 };
	const OpInfo *info = &op_table[op];
	const char *oname = info->name, *sname = dsl_ops[op].name;
	OpIn spec[16];
	int nspec = op_inputs_parse(op, spec, 16);
	Val *slot[MAXIN] = { 0 };
	DslPos spos[MAXIN];
	burn_tensor *in[MAXIN] = { 0 }, *res[64] = { 0 };
	burn_attr attr[32];
	int64_t (*ints)[ATTR_MAXN] = NULL;
	double (*floats)[ATTR_MAXN] = NULL;
	int nattr = 0, nin = 0, nout, rc = BURN_OK, next = 0;
	int64_t want_out = -1;
	burn_dtype data_dt = BURN_F32;
	burn_status st;

	memset(out, 0, sizeof *out);
	memset(attr, 0, sizeof attr);
	ints = calloc(32, sizeof *ints);
	floats = calloc(32, sizeof *floats);
	if (!ints || !floats) {
		rc = burn_fail(&vm->c, BURN_ERR_NOMEM, "out of memory");
		goto done;
	}
	/* arguments to input slots and attributes */
	for (int i = 0; i < n && !rc; i++) {
		DslPos ap = apos ? apos[i] : pos;
		int k = -1;
		if (!key || !key[i]) {
			k = next++;
			if (nspec == 0 || (k >= nspec && !spec[nspec - 1].variadic))
				rc = vm_fail(vm, ap, BURN_ERR_INVALID, "%s takes at most %d input%s, "
				             "got %d", sname, nspec, nspec == 1 ? "" : "s", n);
			else if (k >= MAXIN)
				rc = vm_fail(vm, ap, BURN_ERR_LIMIT, "more than %d inputs", MAXIN);
		} else if (!strcmp(key[i], "nout")) {
			rc = get_int(vm, ap, "nout", &arg[i], 1, &want_out);
			if (!rc && (want_out < 1 || want_out > 64))
				rc = vm_fail(vm, ap, BURN_ERR_INVALID, "nout must be 1 to 64");
			continue;
		} else {
			for (int j = 0; j < nspec; j++)
				if (!strcmp(spec[j].name, key[i]) && !spec[j].variadic)
					k = j;
			if (k < 0) {
				int want = has_attr(op, key[i]) ? attr_type_expected(op, 0, key[i])
				                                : AT_UNDEF;
				if (want == AT_UNDEF) {
					char list[200] = "";
					for (int j = 0; j < nspec; j++)
						snprintf(list + strlen(list), sizeof list - strlen(list),
						         "%s%s", j ? ", " : "", spec[j].name);
					rc = vm_fail(vm, ap, BURN_ERR_INVALID, "'%s' is neither an input "
					             "nor an attribute of %s (inputs: %s; attributes: "
					             "%s)", key[i], sname, nspec ? list : "none",
					             *dsl_ops[op].attrs ? dsl_ops[op].attrs : "none");
				} else if (nattr == 32) {
					rc = vm_fail(vm, ap, BURN_ERR_LIMIT, "more than 32 attributes");
				} else {
					rc = to_attr(vm, ap, sname, key[i], want, &arg[i], &attr[nattr],
					             ints[nattr], floats[nattr]);
					if (!rc && !strcmp(key[i], "num_outputs"))
						want_out = attr[nattr].i;
					nattr++;
				}
				continue;
			}
		}
		if (rc)
			break;
		if (slot[k]) {
			rc = vm_fail(vm, ap, BURN_ERR_INVALID, "input '%s' of %s given twice",
			             spec[k].name, sname);
			break;
		}
		slot[k] = &arg[i];
		spos[k] = ap;
		if (k + 1 > nin)
			nin = k + 1;
	}
	if (rc)
		goto done;
	/* the data type: the first T input given as a tensor */
	for (int k = 0; k < nin; k++) {
		const OpIn *sp = &spec[k < nspec ? k : nspec - 1];
		if (slot[k] && slot[k]->kind == VK_TENSOR && sp->kind == 'T') {
			data_dt = burn_tensor_dtype(slot[k]->t);
			break;
		}
	}
	for (int k = 0; k < nin && !rc; k++) {
		const OpIn *sp = &spec[k < nspec ? k : nspec - 1];
		burn_dtype dt = sp->kind == 'I' ? BURN_I64 : sp->kind == 'B' ? BURN_BOOL : data_dt;
		if (!slot[k])
			continue;
		if (slot[k]->kind != VK_TENSOR && slot[k]->kind != VK_NUM &&
		    slot[k]->kind != VK_LIST)
			rc = vm_fail(vm, spos[k], BURN_ERR_INVALID, "input '%s' of %s is a "
			             "tensor, not %s", sp->name, sname, val_kind_name(slot[k]));
		else
			rc = vm_to_tensor(vm, spos[k], slot[k], dt, &in[k]);
	}
	if (rc)
		goto done;
	/* how many outputs: the op's least, num_outputs, Split's split, nout */
	nout = info->min_out > 0 ? info->min_out : 1;
	if (op == OP_Split && in[1] && want_out < 0)
		want_out = burn_tensor_numel(in[1]);
	if (want_out > 0) {
		if (want_out > info->max_out || want_out > 64)
			rc = vm_fail(vm, pos, BURN_ERR_INVALID, "%s has at most %d outputs",
			             sname, info->max_out);
		nout = (int)want_out;
	}
	if (rc)
		goto done;
	st = burn_op(vm->bc, oname, nin, in, nattr, attr, nout, res);
	if (st) {
		rc = vm_burn(vm, pos, st, NULL);
		goto done;
	}
	if (nout == 1) {
		ret_tensor(out, res[0]);
	} else if (!(out->o = obj_new(vm, OB_LIST, nout))) {
		for (int i = 0; i < nout; i++)
			burn_release(res[i]);
		rc = vm->c.code;
	} else {
		out->kind = VK_LIST;
		for (int i = 0; i < nout; i++) {
			out->o->v[i].kind = VK_TENSOR;
			out->o->v[i].t = res[i];
		}
	}
done:
	for (int k = 0; k < MAXIN; k++)
		burn_release(in[k]);
	free(ints);
	free(floats);
	return rc;
}

/* ---- safetensors -------------------------------------------------------- */

/* The slot of the parameter a dotted name points at in v: a module's
 * Tensor field, or a layer's weight/bias (gamma/beta). */
static burn_tensor **
param_slot(Val *v, const char *name)
{
	const char *dot = strchr(name, '.');
	size_t len = dot ? (size_t)(dot - name) : strlen(name);

	if (v->kind == VK_MODULE) {
		for (int i = 0; i < v->o->n; i++) {
			const char *f = v->o->def->key[i];
			if (strlen(f) != len || memcmp(f, name, len))
				continue;
			if (!dot)
				return v->o->v[i].kind == VK_TENSOR ? &v->o->v[i].t : NULL;
			return param_slot(&v->o->v[i], dot + 1);
		}
		return NULL;
	}
	if (v->kind == VK_LAYER && !dot) {
		int k = lib_param_index(name);
		return k >= 0 && v->o->param[k] ? &v->o->param[k] : NULL;
	}
	return NULL;
}

static int
load_safetensors(DslVm *vm, DslPos pos, Val *module, Val *path)
{
	Ctx c;
	Arena a;
	StFile f;
	const char *p;
	int rc = BURN_OK;

	if (module->kind != VK_MODULE && module->kind != VK_LAYER)
		return vm_fail(vm, pos, BURN_ERR_INVALID, "load_safetensors loads into a "
		               "module or a layer, not %s", val_kind_name(module));
	if (path->kind != VK_STR)
		return vm_fail(vm, pos, BURN_ERR_INVALID, "load_safetensors needs a file "
		               "name as a string");
	p = script_path(vm, path->s);
	arena_init(&a);
	burn_ctx_init(&c, NULL);
	if (st_read(&c, &a, p, &f)) {
		arena_free(&a);
		return vm_fail(vm, pos, c.code, "load_safetensors: %s", c.msg);
	}
	for (int i = 0; i < f.n && !rc; i++) {
		const StTensor *t = &f.t[i];
		burn_tensor **slot = param_slot(module, t->name), *nt = NULL, *ct;
		burn_status st;
		int same = 1;
		if (!slot) {
			rc = vm_fail(vm, pos, BURN_ERR_INVALID, "load_safetensors: '%s' in %s "
			             "names no parameter of the %s", t->name, p,
			             module->kind == VK_LAYER ? "layer" : "module");
			break;
		}
		same = burn_tensor_rank(*slot) == t->rank;
		for (int d = 0; same && d < t->rank; d++)
			same = burn_tensor_dims(*slot)[d] == t->dim[d];
		if (!same) {
			char want[160] = "", got[160] = "";
			for (int d = 0; d < burn_tensor_rank(*slot); d++)
				snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld",
				         d ? ", " : "", (long long)burn_tensor_dims(*slot)[d]);
			for (int d = 0; d < t->rank; d++)
				snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld",
				         d ? ", " : "", (long long)t->dim[d]);
			rc = vm_fail(vm, pos, BURN_ERR_SHAPE, "load_safetensors: '%s' is [%s] "
			             "in %s, the parameter is [%s]", t->name, got, p, want);
			break;
		}
		if ((st = burn_from_buffer(vm->bc, (burn_dtype)t->dtype, t->rank, t->dim,
		                           t->data, &nt))) {
			rc = vm_burn(vm, pos, st, "load_safetensors");
			break;
		}
		if ((burn_dtype)t->dtype != burn_tensor_dtype(*slot)) {
			st = burn_cast(vm->bc, nt, burn_tensor_dtype(*slot), &ct);
			burn_release(nt);
			nt = ct;
			if (st) {
				rc = vm_burn(vm, pos, st, "load_safetensors");
				break;
			}
		}
		burn_release(*slot);
		*slot = nt;
	}
	st_free(&f);
	arena_free(&a);
	return rc;
}

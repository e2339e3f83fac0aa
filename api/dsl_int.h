/*
 * dsl_int.h - the evaluator's values and state, shared by dsl_eval.c (the
 * tree walker) and dsl_lib.c (builtins, layers, the op-call table).
 *
 * Values.  A Val is a small struct passed by value.  Numbers, strings
 * (borrowed from the vm's arena: they come from literals), functions and
 * module types (AST nodes, in the arena too) and dtypes need no memory
 * management.  Tensors are libburn handles: a Val owns one reference
 * (burn_retain / burn_release).  Lists, module instances, layers and
 * imported graphs are Obj, reference-counted.  val_dup adds a reference,
 * val_drop removes one; every function that returns a Val through an out
 * parameter gives the caller one reference.
 */
#ifndef BURN_API_DSL_INT_H
#define BURN_API_DSL_INT_H

#include <signal.h>
#include "dsl.h"
#include "eager.h"
#include "../ir/ops.h"

enum ValKind {
	VK_NONE = 0,   /* the value of print(...) */
	VK_NUM,        /* num, is_int */
	VK_STR,        /* s */
	VK_DTYPE,      /* num: a burn_dtype (the names f32, i64, ...) */
	VK_TENSOR,     /* t */
	VK_LIST,       /* o: OB_LIST */
	VK_FN,         /* fn: DN_FN (a module's method when self_type set) */
	VK_MODTYPE,    /* fn: DN_MODULE */
	VK_MODULE,     /* o: OB_MODULE */
	VK_LAYER,      /* o: OB_LAYER */
	VK_GRAPH,      /* o: OB_GRAPH, an imported ONNX model */
	VK_BUILTIN,    /* id: a builtin function (dsl_lib.c) */
	VK_OP,         /* id: an OpId of ir/ops.def */
};

typedef struct Obj Obj;

typedef struct Val {
	int kind;
	int is_int;
	double num;
	const char *s;
	burn_tensor *t;
	Obj *o;
	const DslNode *fn;
	int id;
} Val;

enum ObjKind { OB_LIST = 1, OB_MODULE, OB_LAYER, OB_GRAPH };

/* Layer kinds: LAYERS(X) X(kind, "Name") */
#define DSL_LAYERS(X) \
	X(LY_LINEAR, "Linear") X(LY_CONV2D, "Conv2d") X(LY_LAYERNORM, "LayerNorm") \
	X(LY_BATCHNORM, "BatchNorm") \
	X(LY_EMBEDDING, "Embedding") X(LY_DROPOUT, "Dropout") X(LY_GELU, "Gelu") \
	X(LY_RELU, "Relu") X(LY_SIGMOID, "Sigmoid") X(LY_TANH, "Tanh") \
	X(LY_SOFTMAX, "Softmax")

enum LayerKind {
	LY_NONE_ = 0,
#define X(k, n) k,
	DSL_LAYERS(X)
#undef X
	LY_COUNT_
};

struct Obj {
	int refs;
	int kind;
	/* OB_LIST: v[n]; OB_MODULE: v[n] are the fields of def (def->key) */
	Val *v;
	int n;
	const DslNode *def;
	/* OB_LAYER */
	int layer;
	burn_tensor *param[4];    /* weight/gamma, bias/beta, BatchNorm's
	                           * running_mean, running_var (NULL: none);
	                           * lib_param_index names them */
	int64_t cfg[8];           /* sizes, stride, padding, ... */
	double fcfg;              /* epsilon, dropout probability */
	double fcfg2;             /* BatchNorm's momentum */
	/* OB_GRAPH */
	Graph *g;
	const char *path;
	burn_call *call;          /* g bound for calls: its weights as kept
	                           * tensors, its call boundary replayed
	                           * (burn_call_run), made at the first call */
};

/* A name bound to a value. */
typedef struct Bind {
	const char *name;
	Val v;
} Bind;

#define DSL_MAX_NOISE 16   /* Dropout layers run by one traced call */
#define DSL_MAX_STAT 32    /* BatchNorm running statistics (2 a layer)
                            * updated by one traced call */

struct DslVm {
	burn_ctx *bc;
	FILE *out;
	Ctx c;                    /* the status and message of the last call */
	DslPos pos;
	const DslSrc *cur;        /* the source running (messages, relative paths) */
	const DslSrc *errsrc;     /* the source of the last error's position */
	Arena a;                  /* sources, ASTs; freed with the vm */
	Bind *glob;               /* top-level bindings, newest last */
	int nglob, capglob;
	Bind *loc;                /* the frames of running functions */
	int nloc, caploc;
	int frame;                /* first binding of the running frame */
	int calls;                /* call depth */
	int edepth;               /* eval depth */
	uint64_t seed;            /* the next parameter's seed */
	volatile sig_atomic_t stop;
	DslTrainFn train;         /* train()'s hook (dsl_vm_set_train), or NULL */
	int training;             /* dsl_vm_set_training: Dropout masks */
	burn_tensor *noise[DSL_MAX_NOISE];  /* the Dropouts' noise placeholders
	                           * of the running trace (owned) */
	int nnoise;
	/* training mode's BatchNorms: each running statistic read (a layer's
	 * tensor, borrowed) and its new value (owned) */
	burn_tensor *stat_old[DSL_MAX_STAT], *stat_new[DSL_MAX_STAT];
	int nstat;
	void *train_arg;
};

#define DSL_MAX_CALLS 100   /* user function calls in calls */
#define DSL_MAX_EVAL 2000   /* expression evaluations in evaluations */

/* ---- values (dsl_eval.c) ---- */
Val val_num(double x, int is_int);
Val val_dup(Val v);
void val_drop(Val v);
Obj *obj_new(DslVm *vm, int kind, int n);
const char *val_kind_name(const Val *v);

/* The name of the running source ("<input>" if none). */
const char *vm_srcname(const DslVm *vm);
/* An error at pos: the message gets "NAME:LINE:COL: error: " before it. */
int vm_fail(DslVm *vm, DslPos pos, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* libburn's status st with its message, at pos. */
int vm_burn(DslVm *vm, DslPos pos, burn_status st, const char *what);

/* v as a tensor (a new reference in *out): tensors as they are, numbers
 * and (nested) lists of numbers as new tensors of dtype dt. */
int vm_to_tensor(DslVm *vm, DslPos pos, const Val *v, burn_dtype dt, burn_tensor **out);
/* Print v like NumPy (tensors) or as the language writes it. */
int vm_print_val(DslVm *vm, DslPos pos, const Val *v, FILE *f);
/* Call a callable value with evaluated arguments (key[i] NULL for a
 * positional one). */
int vm_call(DslVm *vm, DslPos pos, const Val *f, int n, Val *arg,
            const char *const *key, const DslPos *apos, Val *out);

/* ---- builtins, layers, ops (dsl_lib.c) ---- */
/* A builtin name, layer constructor or op: *out is VK_BUILTIN or VK_OP.
 * 0 if name is none of them. */
int lib_lookup(const char *name, Val *out);
/* A constant (PI, SQRT_2, f32 ...): 1 and *out if name is one. */
int lib_constant(const char *name, Val *out);
int lib_call_builtin(DslVm *vm, DslPos pos, int id, int n, Val *arg,
                     const char *const *key, const DslPos *apos, Val *out);
int lib_call_op(DslVm *vm, DslPos pos, int op, int n, Val *arg,
                const char *const *key, const DslPos *apos, Val *out);
/* Run a layer on its input x. */
int lib_layer_forward(DslVm *vm, DslPos pos, Obj *ly, int n, Val *arg, Val *out);
/* The name of a layer kind ("Linear"), or NULL. */
const char *lib_layer_name(int kind);
/* A layer parameter's index in Obj.param for its field name (weight and
 * gamma 0, bias and beta 1, running_mean 2, running_var 3), else -1. */
int lib_param_index(const char *name);
/* The name of a builtin, for messages. */
const char *lib_builtin_name(int id);
/* A tensor method that is not an op (clone, shape, ...): 1 if name is one
 * (then *rc is its status). */
int lib_tensor_method(DslVm *vm, DslPos pos, const char *name, Val *recv,
                      int n, Val *arg, const char *const *key, Val *out, int *rc);

#endif

/*
 * dsl.h - the .burn language's evaluator, on libburn (docs/DSL.md).
 *
 * A DslVm holds a script's state: its top-level bindings, functions,
 * modules and imports, and the parsed sources they came from (kept as
 * long as the vm, so a REPL can call what an earlier line defined).  It
 * evaluates on a burn_ctx it borrows: every tensor of the script is a
 * libburn handle, every op a recorded node, realised when printed or read.
 *
 * Errors: each call returns a status (BURN_OK = 0, the BurnCode numbers);
 * the message ("NAME:LINE:COL: error: what went wrong") is in
 * dsl_vm_message and the position in dsl_vm_pos, so the driver can show
 * the source line with a caret (dsl_caret, frontend/dsl.h).  A failed
 * statement leaves the bindings made before it; the vm stays usable (the
 * REPL goes on).  Nothing here prints except `print`, to the vm's out.
 *
 * Not thread-safe, like its burn_ctx; dsl_vm_interrupt alone may be called
 * from a signal handler.
 */
#ifndef BURN_API_DSL_H
#define BURN_API_DSL_H

#include <stdio.h>
#include "../include/burn.h"
#include "../frontend/dsl.h"
#include "../ir/graph.h"

typedef struct DslVm DslVm;

/* A vm evaluating on ctx (borrowed; must outlive it), printing to out.
 * seed: the first seed of the layers' initialisations (`seed(n)` in a
 * script sets it again).  NULL only if out of memory. */
DslVm *dsl_vm_create(burn_ctx *ctx, FILE *out, uint64_t seed);
void dsl_vm_destroy(DslVm *vm);

/*
 * Parse src[0..n) (named name in messages) and run its items in order.
 * show: if the text ends with an expression without ';', print its value
 * like NumPy (the REPL).  The source is copied.
 */
int dsl_vm_run(DslVm *vm, const char *name, const char *src, size_t n, int show);

/* Call the script's function `name`, which takes no parameters, and
 * realise what it returns (then dropped): what an embedding program does
 * in a loop, with no parsing per call. */
int dsl_vm_call(DslVm *vm, const char *name);

/* Read and run the file at path (show 0). */
int dsl_vm_run_file(DslVm *vm, const char *path);

/* The last error's message and position (0:0 when it has none, e.g. a
 * file that cannot be read). */
const char *dsl_vm_message(const DslVm *vm);
DslPos dsl_vm_pos(const DslVm *vm);
/* The source text the last error is in (NULL if none), and its length. */
const char *dsl_vm_source(const DslVm *vm, size_t *n);

/* Stop the running statement: it fails with "interrupted" at its next
 * statement or op boundary, and libburn's realisation stops between
 * kernels.  Async-signal-safe. */
void dsl_vm_interrupt(DslVm *vm);

/*
 * AOT: after the script has run (dsl_vm_run_file), call its function
 * entry (NULL: "main") on placeholders, one per parameter, each with the
 * dtype and shape its annotation gives (`fn main(x: f32[1, 784])`), and
 * trace what it returns (a tensor, or a list of tensors) into a Graph
 * (caller owns it: graph_destroy) whose inputs are named as the
 * parameters.
 */
int dsl_vm_trace(DslVm *vm, const char *entry, Graph **out);
/* The same, and *src (malloc'd, the graph's nval entries; the caller frees
 * it): for each constant the tensor the script held it in (borrowed, valid
 * while the vm holds it: a layer's parameter ...), NULL for other values. */
int dsl_vm_trace_src(DslVm *vm, const char *entry, Graph **out, burn_tensor ***src);
/*
 * Give a tensor the script holds new values (train()'s trained parameters):
 * every reference the vm's bindings and running frames hold to old (a
 * bound tensor, a layer's parameter, an element of a list or module,
 * nested) becomes one to a new tensor of old's dtype and shape holding a
 * copy of data (numel elements of that dtype).  Tensors are values, so
 * old itself is not written: a handle held outside the vm, or a copy made
 * before, keeps the old values.  *out_n: the references changed (0 when
 * the vm holds none, e.g. an imported model's weight, kept by the import).
 */
int dsl_vm_set_tensor(DslVm *vm, burn_tensor *old, const void *data, int *out_n);

/*
 * Training mode (0 off, the default) for what dsl_vm_trace traces: each
 * Dropout(p) layer the traced call runs becomes where(u >= p, x / (1 - p),
 * 0) with u a new f32 input of x's shape, named "dropout_noise<k>" (k from
 * 0 in the order the layers run), after the function's own inputs: the
 * driver fills u with uniform [0, 1) numbers every step.  Off, Dropout is
 * the identity.  Each BatchNorm layer normalises with the batch's
 * statistics (BatchNormalization, training_mode=1) and its running mean
 * and variance get new values (momentum m: (1 - m) old + m batch, the
 * variance unbiased, as PyTorch's): the traced graph outputs them after
 * the function's outputs, each named "next:" and the name of the constant
 * holding the old value, for the driver to carry from step to step.  Off,
 * BatchNorm uses the running statistics.
 */
void dsl_vm_set_training(DslVm *vm, int on);

/*
 * train(model, data, key=value, ..., metrics=[...]) in a script (docs/DSL.md,
 * "Training").  The library checks the call's shape (a model function, a
 * data directory, keywords whose values are numbers, strings or booleans,
 * metric names) and hands it to the hook its driver set; the training itself
 * is the driver's (tools/train.c, what `burncc train` runs).  Without a hook
 * train() is an error.
 */
typedef struct DslTrainCall {
	const char *src;          /* the running script's name (messages) */
	const char *entry;        /* the model function's name: dsl_vm_trace */
	const char *data;         /* the data directory */
	int nkey;                 /* keywords but model, data and metrics */
	const char *const *key;   /* borrowed, for the call */
	const char *const *str;   /* str[i]: the value if a string, else NULL */
	const double *num;        /* num[i]: the value if a number (true 1, false 0) */
	/* filled by the hook: */
	int bad;                  /* the keyword at fault when it fails, else -1 */
	int nepoch;               /* epochs run: hist[3 e + 0..2] is epoch e's */
	double *hist;             /* mean train loss, test loss, test accuracy
	                           * (malloc'd by the hook, freed by the library) */
} DslTrainCall;

/* The hook trains as asked, or fails with its message in c; arg is the
 * one given to dsl_vm_set_train.  It may call dsl_vm_trace on vm. */
typedef int (*DslTrainFn)(void *arg, DslVm *vm, DslTrainCall *call, Ctx *c);
void dsl_vm_set_train(DslVm *vm, DslTrainFn fn, void *arg);

#endif

/*
 * burn.h - libburn, burncc's eager tensor API.
 *
 * Tensors are handles.  An op does not compute: it records a node in its
 * context's pending graph and returns a new handle at once.  At a sync
 * point (burn_read, burn_print, burn_sync, or the pending graph growing
 * past burn_options.max_pending nodes) the pending nodes that live
 * handles need are compiled by the same passes as an ONNX model (so
 * pointwise chains fuse into one kernel), rendered by the llvm target,
 * run, and their results become buffers.  Compiled programs are cached by
 * the structure of what was recorded (ops, attributes, dtypes and shapes,
 * never values): a loop that records the same graph compiles once.  With
 * a cache directory, compiled kernels are kept on disk as well, and a
 * later process finds them.
 *
 * Conventions:
 *   - Every call that can fail returns a burn_status (BURN_OK is 0) and,
 *     on failure, leaves a message in its context (burn_message).  A
 *     failed call changes nothing and sets *out to NULL.  libburn never
 *     prints and never aborts.
 *   - A handle is owned by the caller, who releases it with burn_release.
 *     Ops never take ownership of their inputs.  A tensor whose handle
 *     has been released while a pending op still reads it may have its
 *     memory reused for that op's result (in-place update): release a
 *     handle as soon as it is no longer needed.
 *   - Shapes broadcast as in NumPy and ONNX.  Dims are int64_t; rank is
 *     at most BURN_MAX_RANK.
 *   - A context and its tensors belong to one thread at a time.
 *     Different contexts are independent and may run on different threads
 *     at once (they share only the disk cache, which is safe across
 *     processes).
 */
#ifndef BURN_H
#define BURN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BURN_VERSION_MAJOR 0
#define BURN_VERSION_MINOR 1
#define BURN_MAX_RANK 8

typedef struct burn_ctx burn_ctx;
typedef struct burn_tensor burn_tensor;

/* Statuses; the same codes as burncc's compiler library. */
typedef enum burn_status {
	BURN_STATUS_OK = 0,
	BURN_STATUS_IO = 1,          /* a file (cache, weights) unreadable */
	BURN_STATUS_PARSE = 2,       /* a malformed file */
	BURN_STATUS_UNSUPPORTED = 3, /* op, dtype or attribute not handled */
	BURN_STATUS_INVALID = 4,     /* bad argument: unknown op, NULL ... */
	BURN_STATUS_SHAPE = 5,       /* shapes or dtypes do not fit the op */
	BURN_STATUS_LIMIT = 6,       /* a limit was hit: the memory cap ... */
	BURN_STATUS_NOMEM = 7,       /* the system allocator failed */
	BURN_STATUS_INTERNAL = 8,    /* a bug in burncc */
} burn_status;

/* Element types; the values are ONNX's TensorProto codes. */
typedef enum burn_dtype {
	BURN_F32 = 1, BURN_U8 = 2, BURN_I8 = 3, BURN_U16 = 4, BURN_I16 = 5,
	BURN_I32 = 6, BURN_I64 = 7, BURN_BOOL = 9, BURN_F16 = 10,
	BURN_F64 = 11, BURN_U32 = 12, BURN_U64 = 13, BURN_BF16 = 16,
} burn_dtype;

typedef enum burn_device {
	BURN_DEVICE_CPU = 0,         /* the llvm target, on the host */
	BURN_DEVICE_CUDA = 1,        /* the cuda target on an NVIDIA GPU: the
	                              * same fused programs as PTX, run through
	                              * the driver (libcuda.so.1, opened at the
	                              * first sync); tensors stay in host
	                              * memory and are copied at each sync */
} burn_device;

/* ---- contexts ------------------------------------------------------ */

typedef struct burn_options {
	int threads;             /* worker threads of kernels; 0: one per core */
	int64_t memory_cap;      /* bytes of tensor memory the context may
	                          * hold; exceeding it is BURN_STATUS_LIMIT.
	                          * 0: no cap */
	const char *cache_dir;   /* disk cache of compiled kernels; NULL:
	                          * $XDG_CACHE_HOME/burncc (~/.cache/burncc),
	                          * "": no disk cache */
	int64_t cache_bytes;     /* disk cache size before eviction; 0: 256 MiB */
	int max_pending;         /* pending nodes that force a sync; 0: 4096 */
	int no_fuse;             /* one kernel per op (for comparisons) */
	burn_device device;      /* where the realised programs run */
} burn_options;

/* o may be NULL (all defaults).  On failure *out is NULL; a context that
 * could not be made has no message, so the status is all there is. */
burn_status burn_ctx_create(const burn_options *o, burn_ctx **out);
/* Frees the context and every tensor still alive in it. */
void burn_ctx_destroy(burn_ctx *ctx);
/* The message of the last failed call ("" if none).  Valid until the next
 * call on ctx. */
const char *burn_message(const burn_ctx *ctx);

/* ---- tensors ------------------------------------------------------- */

burn_dtype burn_tensor_dtype(const burn_tensor *t);
int burn_tensor_rank(const burn_tensor *t);
/* The dims (rank of them); valid while t lives. */
const int64_t *burn_tensor_dims(const burn_tensor *t);
int64_t burn_tensor_numel(const burn_tensor *t);
burn_device burn_tensor_device(const burn_tensor *t);
/* Another handle to the same tensor (both must be released). */
burn_tensor *burn_retain(burn_tensor *t);
/* Drop a handle; NULL is ignored. */
void burn_release(burn_tensor *t);

/* ---- creation (realised at once, or folded into the pending graph) -- */

burn_status burn_from_buffer(burn_ctx *ctx, burn_dtype dt, int rank,
                             const int64_t *dims, const void *data,
                             burn_tensor **out);
burn_status burn_full(burn_ctx *ctx, burn_dtype dt, int rank,
                      const int64_t *dims, double value, burn_tensor **out);
burn_status burn_zeros(burn_ctx *ctx, burn_dtype dt, int rank,
                       const int64_t *dims, burn_tensor **out);
burn_status burn_ones(burn_ctx *ctx, burn_dtype dt, int rank,
                      const int64_t *dims, burn_tensor **out);
/* start, start+step, ... while < stop (> stop for a negative step). */
burn_status burn_arange(burn_ctx *ctx, burn_dtype dt, double start,
                        double stop, double step, burn_tensor **out);
/* Uniform in [lo, hi) and normal(mean, std), from a seed: the same seed
 * gives the same values on every machine. */
burn_status burn_rand(burn_ctx *ctx, burn_dtype dt, int rank,
                      const int64_t *dims, double lo, double hi,
                      uint64_t seed, burn_tensor **out);
burn_status burn_randn(burn_ctx *ctx, burn_dtype dt, int rank,
                       const int64_t *dims, double mean, double std,
                       uint64_t seed, burn_tensor **out);

/* ---- ops ------------------------------------------------------------ */

/* An attribute of an op, as ONNX names it (axis, perm, alpha, ...). */
typedef enum burn_attr_type {
	BURN_ATTR_INT = 1, BURN_ATTR_FLOAT, BURN_ATTR_STRING,
	BURN_ATTR_INTS, BURN_ATTR_FLOATS,
} burn_attr_type;

typedef struct burn_attr {
	const char *name;
	burn_attr_type type;
	int64_t i;               /* BURN_ATTR_INT */
	double f;                /* BURN_ATTR_FLOAT */
	const char *s;           /* BURN_ATTR_STRING */
	int n;                   /* BURN_ATTR_INTS, BURN_ATTR_FLOATS */
	const int64_t *ints;
	const double *floats;
} burn_attr;

/*
 * Any op of burncc's op table, by its ONNX name ("Erf", "Softmax",
 * "Conv", ...), at the newest opset burncc knows.  Inputs that ONNX takes
 * as tensors stay tensors (Reshape's shape, Slice's starts); an optional
 * input left out is NULL.  out receives nout handles.  Shape and dtype
 * errors are found here, not at the sync point, and the message names
 * the op and the shapes.
 */
burn_status burn_op(burn_ctx *ctx, const char *op, int nin,
                    burn_tensor *const *in, int nattr, const burn_attr *attr,
                    int nout, burn_tensor **out);

/* The common ops as calls (each is burn_op underneath). */
burn_status burn_add(burn_ctx *ctx, burn_tensor *a, burn_tensor *b, burn_tensor **out);
burn_status burn_sub(burn_ctx *ctx, burn_tensor *a, burn_tensor *b, burn_tensor **out);
burn_status burn_mul(burn_ctx *ctx, burn_tensor *a, burn_tensor *b, burn_tensor **out);
burn_status burn_div(burn_ctx *ctx, burn_tensor *a, burn_tensor *b, burn_tensor **out);
burn_status burn_pow(burn_ctx *ctx, burn_tensor *a, burn_tensor *b, burn_tensor **out);
burn_status burn_matmul(burn_ctx *ctx, burn_tensor *a, burn_tensor *b, burn_tensor **out);
/* a op scalar, the scalar in a's dtype. */
burn_status burn_add_scalar(burn_ctx *ctx, burn_tensor *a, double s, burn_tensor **out);
burn_status burn_mul_scalar(burn_ctx *ctx, burn_tensor *a, double s, burn_tensor **out);
burn_status burn_div_scalar(burn_ctx *ctx, burn_tensor *a, double s, burn_tensor **out);
/* One-input ops by ONNX name: "Erf", "Exp", "Relu", "Tanh", ... */
burn_status burn_unary(burn_ctx *ctx, const char *op, burn_tensor *a, burn_tensor **out);
burn_status burn_cast(burn_ctx *ctx, burn_tensor *a, burn_dtype to, burn_tensor **out);
burn_status burn_reshape(burn_ctx *ctx, burn_tensor *a, int rank,
                         const int64_t *dims, burn_tensor **out);
/* perm NULL: reverse the dims. */
burn_status burn_transpose(burn_ctx *ctx, burn_tensor *a, const int64_t *perm,
                           burn_tensor **out);
burn_status burn_softmax(burn_ctx *ctx, burn_tensor *a, int64_t axis, burn_tensor **out);
/* Sum and mean over the given axes (naxes 0: all), keeping them or not. */
burn_status burn_sum(burn_ctx *ctx, burn_tensor *a, int naxes, const int64_t *axes,
                     int keepdims, burn_tensor **out);
burn_status burn_mean(burn_ctx *ctx, burn_tensor *a, int naxes, const int64_t *axes,
                      int keepdims, burn_tensor **out);

/* ---- sync points ---------------------------------------------------- */

/* Realise t and copy its elements (row-major, t's dtype) to buf, which
 * holds `bytes` bytes (at least numel * element size). */
burn_status burn_read(burn_ctx *ctx, burn_tensor *t, void *buf, size_t bytes);
/* Realise every pending tensor that a live handle refers to. */
burn_status burn_sync(burn_ctx *ctx);
/* Print t like NumPy: shape and dtype, then the values, the middle left
 * out past `edge` items per dim (0: 3). */
burn_status burn_print(burn_ctx *ctx, burn_tensor *t, FILE *f, int edge);

/* ---- ONNX models -------------------------------------------------------
 *
 * A model file compiled once by the same passes as `burncc MODEL.onnx`,
 * for the host (the llvm target, kernels through ctx's disk cache), then
 * run on caller buffers as often as needed; the Python module
 * (python/burncc) is this API through ctypes.
 *
 *     burn_model *m;
 *     burn_model_load(ctx, "lenet.onnx", 0, NULL, NULL, &m);
 *     burn_model_run(m, inputs, outputs);   // bytes, in ONNX order
 *     burn_model_destroy(m);
 */
typedef struct burn_model burn_model;

/* An input or output of a model: all borrowed, valid while the model is. */
typedef struct burn_model_info {
	const char *name;         /* the ONNX name */
	burn_dtype dtype;
	int rank;
	const int64_t *dims;
	int64_t bytes;            /* dense, C order */
} burn_model_info;

/* Load and compile the ONNX model at path.  A symbolic input dim needs a
 * value: names[i] = values[i] for i < ndims (ndims 0: names and values
 * may be NULL).  *out is the caller's (burn_model_destroy); it borrows
 * ctx, which must outlive it, and runs on ctx's thread. */
burn_status burn_model_load(burn_ctx *ctx, const char *path, int ndims,
                            const char *const *names, const int64_t *values,
                            burn_model **out);
void burn_model_destroy(burn_model *m);
int burn_model_num_inputs(const burn_model *m);
int burn_model_num_outputs(const burn_model *m);
/* Input (io 0) or output (io 1) number i.  BURN_STATUS_INVALID out of
 * range (no message: the model may have no context to hold one). */
burn_status burn_model_tensor(const burn_model *m, int io, int i, burn_model_info *out);
/* Run once: inputs[i] holds input i's bytes (burn_model_info.bytes, its
 * dtype, C order), outputs[i] receives output i's.  Nothing is allocated;
 * failures leave their message in the model's context. */
burn_status burn_model_run(burn_model *m, const void *const *inputs,
                           void *const *outputs);

/* ---- what happened ---------------------------------------------------- */

typedef struct burn_stats {
	int64_t syncs;            /* realisations run */
	int64_t kernels_run;      /* kernel launches, all syncs */
	int64_t last_kernels;     /* kernels of the last realisation */
	int64_t compiles;         /* programs compiled (cache misses) */
	int64_t mem_hits;         /* programs found in memory */
	int64_t disk_hits;        /* programs found in the disk cache */
	double compile_ms;        /* time spent compiling, all of it */
	int64_t bytes_live;       /* tensor memory held now */
	int64_t bytes_peak;
	int64_t in_place;         /* results written over a released input */
	int64_t captures;         /* model calls whose program was captured */
	int64_t replays;          /* model calls replayed, nothing recorded */
} burn_stats;

void burn_get_stats(const burn_ctx *ctx, burn_stats *s);

/* Print the last realisation: BURN_DUMP_GRAPH its graph IR after the
 * passes, BURN_DUMP_KERNELS its kernels' IR (one per fused group). */
enum { BURN_DUMP_GRAPH = 1, BURN_DUMP_KERNELS = 2 };
burn_status burn_dump_last(burn_ctx *ctx, int what, FILE *f);

#ifdef __cplusplus
}
#endif
#endif

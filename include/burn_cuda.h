/*
 * burn_cuda.h - the runtime of the host modules that
 * `burncc MODEL.onnx --target cuda -o MODEL.c` writes.
 *
 * Such a module is data: the PTX of its kernels, the launches in program
 * order with what each argument binds, the weights and the sizes of the
 * inputs, outputs and arena (a burn_cuda_module).  Its run function hands
 * that to this runtime, in libburn (link with -lburn, pkg-config burn),
 * which loads the driver with dlopen (so the module builds and links on
 * machines without CUDA; there a run returns BURN_STATUS_UNSUPPORTED and
 * says why), loads the PTX with the driver's JIT once, copies the
 * weights to the device once, and keeps the device buffers (from the
 * caching pool) for the next run.
 *
 * Every call that can fail returns a burn_status (include/burn.h's codes;
 * 0 is success) and leaves a message naming the device, the kernel and
 * the driver's reason in the state (burn_cuda_message).  Nothing aborts.
 * A state belongs to one thread at a time.
 */
#ifndef BURN_CUDA_H
#define BURN_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a launch argument binds (the same numbers as the compiler's
 * launch list). */
enum {
	BURN_CUDA_WEIGHT = 1,    /* weight `index` of the module */
	BURN_CUDA_ARENA = 2,     /* the arena, at byte `offset` */
	BURN_CUDA_INPUT = 3,     /* input `index` */
	BURN_CUDA_OUTPUT = 4,    /* output `index` */
};

typedef struct burn_cuda_arg {
	int kind;                /* BURN_CUDA_WEIGHT ... */
	int index;
	int64_t offset;
} burn_cuda_arg;

/* One kernel entry of the PTX, launched on grid x 1 x 1 blocks of block
 * x 1 x 1 threads with `shared` bytes of dynamic shared memory; its
 * arguments are the narg bindings, then the spill scratch.  spill_zero:
 * bytes of the scratch to zero before it (0: none). */
typedef struct burn_cuda_launch {
	const char *entry;
	uint32_t grid, block, shared;
	int narg;
	const burn_cuda_arg *arg;
	int64_t spill_zero;
} burn_cuda_launch;

/* Where an output's bytes come from: a kernel writes it (from 0), or it
 * is a copy of input `index` (1), of weight `index` (2), or of output
 * `index` before it (3). */
typedef struct burn_cuda_output {
	int64_t bytes;
	int from, index;
} burn_cuda_output;

typedef struct burn_cuda_module {
	const char *name;        /* for messages */
	const char *ptx;         /* NUL-terminated */
	int nlaunch;
	const burn_cuda_launch *launch;
	int nweight;
	const void *const *weight;
	const int64_t *weight_bytes;
	int nin;
	const int64_t *in_bytes;
	int nout;
	const burn_cuda_output *out;
	int64_t arena_bytes, spill_bytes;
} burn_cuda_module;

typedef struct burn_cuda_state burn_cuda_state;

/* Open the device, load m's PTX and copy its weights; *out is set even on
 * failure (NULL only when out of memory), so that burn_cuda_message can
 * tell why.  m must outlive the state. */
int burn_cuda_open(const burn_cuda_module *m, burn_cuda_state **out);
/* Run m once: the inputs copied in, the kernels launched in order, the
 * outputs copied back; returns when the outputs are written.  in[i] and
 * out[i] hold in_bytes[i] and out[i].bytes bytes. */
int burn_cuda_run(burn_cuda_state *s, const void *const *in, void *const *out);
/* Enqueue the same on stream (a CUstream; NULL: the default stream)
 * and return at once: the inputs are read and the outputs written by the
 * time burn_cuda_wait returns, so both must stay valid until then.
 * Copies of pinned host memory (burn_cuda_host_alloc) are asynchronous;
 * of pageable memory the driver may wait for part of the work. */
int burn_cuda_run_async(burn_cuda_state *s, void *stream, const void *const *in,
                        void *const *out);
/* Wait for the work burn_cuda_run_async enqueued (the whole device). */
int burn_cuda_wait(burn_cuda_state *s);
/* A stream of one's own, for burn_cuda_run_async (no CUDA headers
 * needed), and pinned host memory for its inputs and outputs. */
int burn_cuda_stream_create(burn_cuda_state *s, void **stream);
void burn_cuda_stream_destroy(burn_cuda_state *s, void *stream);
int burn_cuda_host_alloc(burn_cuda_state *s, size_t bytes, void **p);
void burn_cuda_host_free(burn_cuda_state *s, void *p);
/* The last failure's message ("" after success). */
const char *burn_cuda_message(const burn_cuda_state *s);
/* The device's buffers back to the pool, the module unloaded. */
void burn_cuda_close(burn_cuda_state *s);

#ifdef __cplusplus
}
#endif
#endif

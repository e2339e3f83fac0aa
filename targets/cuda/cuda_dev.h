/*
 * cuda_dev.h - the CUDA driver API, loaded at run time.
 *
 * libcuda.so.1 is opened with dlopen on first use, so burncc links
 * nothing of CUDA and builds and runs its CPU tests on machines without
 * a driver; there every call below fails with BURN_ERR_UNSUPPORTED and a
 * message saying why.  One device (ordinal 0, or $BURNCC_CUDA_DEVICE) and
 * its primary context per process.  Device memory comes from a caching
 * pool (runtime/devpool.h).
 *
 * Every failure is a status with a message naming the device, the
 * operation (a kernel's name for launches) and the driver's reason.  A
 * sticky error (an illegal address, say) leaves the context unusable: the
 * device is marked lost, the message says so, and the next cuda_open
 * drops the pool and recreates the context.
 */
#ifndef BURN_CUDA_DEV_H
#define BURN_CUDA_DEV_H

#include <stddef.h>
#include <stdint.h>
#include "../../ir/base.h"

typedef uint64_t CudaPtr;          /* a device address (CUdeviceptr) */
typedef struct CudaDev CudaDev;
typedef struct CudaMod CudaMod;

/* The process's device, opened (driver loaded, context current) on the
 * first call.  Returns status. */
int cuda_open(Ctx *c, CudaDev **out);
/* "NVIDIA H200 (sm_90, driver 12080)" */
const char *cuda_describe(const CudaDev *d);
int cuda_driver_version(const CudaDev *d);

/* Load PTX text (NUL-terminated) with the driver's JIT; the message of a
 * failure carries the JIT's log.  A module is kept loaded after its
 * cuda_module_unload, and a later load of the same PTX (SHA-256) returns
 * it without compiling (up to 64 modules; the least recently loaded one
 * no caller holds goes first).  Across processes the driver's own JIT
 * cache (on disk: $CUDA_CACHE_PATH, default ~/.nv/ComputeCache) keeps the
 * compiled code; burncc does not store cubins itself, since a cubin made
 * by the driver's JIT linker (cuLink*, the only way to get one from the
 * driver) ran 1.25-1.75 times slower than the same PTX loaded directly
 * (H200, docs/BENCHMARKS.md). */
int cuda_module_load(Ctx *c, CudaDev *d, const char *ptx, CudaMod **out);
void cuda_module_unload(CudaDev *d, CudaMod *m);
typedef struct CudaModStats {
	int64_t loaded;       /* modules the driver's JIT compiled */
	int64_t reused;       /* loads served by a module kept loaded */
	int64_t evicted;      /* kept modules unloaded to make room */
	int64_t kept;         /* modules loaded now */
	double load_ms;       /* wall time of the JIT loads, total */
} CudaModStats;
void cuda_module_stats(const CudaDev *d, CudaModStats *s);
/* Launch entry `name` of m on a grid x 1 x 1 of block x 1 x 1 threads
 * with `shared` bytes of dynamic shared memory; args[i] points at
 * argument i's value (CUDA's kernelParams). */
int cuda_launch(Ctx *c, CudaDev *d, CudaMod *m, const char *name,
                unsigned grid, unsigned block, unsigned shared, void **args);
/* The same on a grid of grid x grid_y x 1 blocks (a peeled kernel's
 * items along y: render_ptx.h, PtxSeg.ydim). */
int cuda_launch_y(Ctx *c, CudaDev *d, CudaMod *m, const char *name, unsigned grid,
                  unsigned grid_y, unsigned block, unsigned shared, void **args);
/* Wait for the work queued so far; what names the work for messages. */
int cuda_sync(Ctx *c, CudaDev *d, const char *what);

/* CUDA graphs: between cuda_capture_begin and cuda_capture_end, launches
 * and memsets (nothing else: no allocation, copy or synchronisation) are
 * recorded on a stream of their own instead of running; the end gives
 * the recording as a graph (ok 0: the work failed, the capture is only
 * closed and nothing is returned), which cuda_graph_launch runs on the
 * default stream as one submission, as often as wanted: for a model
 * whose kernels are short, the host's launch overhead goes (issue 9).
 * Returns status. */
typedef struct CudaGraph CudaGraph;
int cuda_capture_begin(Ctx *c, CudaDev *d);
int cuda_capture_end(Ctx *c, CudaDev *d, int ok, CudaGraph **out);
int cuda_graph_launch(Ctx *c, CudaDev *d, CudaGraph *g);
void cuda_graph_free(CudaDev *d, CudaGraph *g);

/* Device memory from the pool (size 0 gives a valid 256-byte block). */
int cuda_alloc(Ctx *c, CudaDev *d, size_t bytes, CudaPtr *out);
void cuda_free(CudaDev *d, CudaPtr p);
int cuda_htod(Ctx *c, CudaDev *d, CudaPtr dst, const void *src, size_t n);
int cuda_dtoh(Ctx *c, CudaDev *d, void *dst, CudaPtr src, size_t n);
/* The same queued on the current queue (cuda_queue; host modules'
 * run_async): the call may return before the copy is done, so src and
 * dst stay valid until a cuda_sync. */
int cuda_htod_async(Ctx *c, CudaDev *d, CudaPtr dst, const void *src, size_t n);
int cuda_dtoh_async(Ctx *c, CudaDev *d, void *dst, CudaPtr src, size_t n);
int cuda_memset0(Ctx *c, CudaDev *d, CudaPtr dst, size_t n);

/* Queues: cuda_queue makes stream (a CUstream; NULL: the default
 * stream) the one later launches, memsets, async copies and graph
 * launches go to, and returns the one before (not during a capture).
 * cuda_stream_new / _free make and drop a stream of one's own. */
void *cuda_queue(CudaDev *d, void *stream);
int cuda_stream_new(Ctx *c, CudaDev *d, void **out);
void cuda_stream_free(CudaDev *d, void *stream);
/* Pinned (page-locked) host memory: copies from and to it are truly
 * asynchronous.  Returns status. */
int cuda_host_alloc(Ctx *c, CudaDev *d, size_t n, void **out);
void cuda_host_free(CudaDev *d, void *p);
int cuda_dtod(Ctx *c, CudaDev *d, CudaPtr dst, CudaPtr src, size_t n);

/* Run work(c, arg), which enqueues, between two events on the default
 * stream; *ms the device time between them.  Returns status. */
int cuda_elapsed(Ctx *c, CudaDev *d, int (*work)(Ctx *, void *), void *arg, double *ms);

/* Give the pool's cached blocks back to the driver (live ones stay). */
void cuda_pool_release(CudaDev *d);
/* Pool statistics: allocations the driver made, and requests served from
 * the cache. */
void cuda_pool_stats(const CudaDev *d, int64_t *driver_allocs, int64_t *hits,
                     int64_t *bytes_held);

#endif

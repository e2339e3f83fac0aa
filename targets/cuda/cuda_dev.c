/*
 * cuda_dev.c - the CUDA driver API through dlopen (cuda_dev.h).
 *
 * The driver's types are declared here as what the ABI makes them
 * (handles are pointers, CUdeviceptr a 64-bit integer, CUresult an int),
 * so no CUDA header is needed to build.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cuda_dev.h"
#include "../../runtime/cache.h"
#include "../../runtime/devpool.h"

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent, *CUgraph, *CUgraphExec;

#define CU_ATTR_CC_MAJOR 75
#define CU_ATTR_CC_MINOR 76
#define CU_JIT_ERROR_LOG_BUFFER 5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6
#define CU_STREAM_NON_BLOCKING 1
#define CU_STREAM_CAPTURE_MODE_THREAD_LOCAL 1

/* The driver entry points used, one X-macro row each: name, symbol, args */
#define CUFNS(X) \
	X(Init, "cuInit", (unsigned)) \
	X(DriverGetVersion, "cuDriverGetVersion", (int *)) \
	X(DeviceGetCount, "cuDeviceGetCount", (int *)) \
	X(DeviceGet, "cuDeviceGet", (CUdevice *, int)) \
	X(DeviceGetName, "cuDeviceGetName", (char *, int, CUdevice)) \
	X(DeviceGetAttribute, "cuDeviceGetAttribute", (int *, int, CUdevice)) \
	X(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext *, CUdevice)) \
	X(PrimaryCtxReset, "cuDevicePrimaryCtxReset_v2", (CUdevice)) \
	X(CtxSetCurrent, "cuCtxSetCurrent", (CUcontext)) \
	X(CtxSynchronize, "cuCtxSynchronize", (void)) \
	X(ModuleLoadDataEx, "cuModuleLoadDataEx", (CUmodule *, const void *, unsigned, int *, void **)) \
	X(ModuleUnload, "cuModuleUnload", (CUmodule)) \
	X(ModuleGetFunction, "cuModuleGetFunction", (CUfunction *, CUmodule, const char *)) \
	X(FuncSetAttribute, "cuFuncSetAttribute", (CUfunction, int, int)) \
	X(LaunchKernel, "cuLaunchKernel", (CUfunction, unsigned, unsigned, unsigned, unsigned, \
	  unsigned, unsigned, unsigned, CUstream, void **, void **)) \
	X(MemAlloc, "cuMemAlloc_v2", (CudaPtr *, size_t)) \
	X(MemFree, "cuMemFree_v2", (CudaPtr)) \
	X(MemcpyHtoD, "cuMemcpyHtoD_v2", (CudaPtr, const void *, size_t)) \
	X(MemcpyDtoH, "cuMemcpyDtoH_v2", (void *, CudaPtr, size_t)) \
	X(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", (CudaPtr, const void *, size_t, CUstream)) \
	X(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", (void *, CudaPtr, size_t, CUstream)) \
	X(MemsetD8, "cuMemsetD8_v2", (CudaPtr, unsigned char, size_t)) \
	X(MemsetD8Async, "cuMemsetD8Async", (CudaPtr, unsigned char, size_t, CUstream)) \
	X(StreamCreate, "cuStreamCreate", (CUstream *, unsigned)) \
	X(StreamDestroy, "cuStreamDestroy_v2", (CUstream)) \
	X(MemHostAlloc, "cuMemHostAlloc", (void **, size_t, unsigned)) \
	X(MemFreeHost, "cuMemFreeHost", (void *)) \
	X(StreamBeginCapture, "cuStreamBeginCapture_v2", (CUstream, int)) \
	X(StreamEndCapture, "cuStreamEndCapture", (CUstream, CUgraph *)) \
	X(GraphInstantiate, "cuGraphInstantiateWithFlags", (CUgraphExec *, CUgraph, \
	  unsigned long long)) \
	X(GraphLaunch, "cuGraphLaunch", (CUgraphExec, CUstream)) \
	X(GraphExecDestroy, "cuGraphExecDestroy", (CUgraphExec)) \
	X(GraphDestroy, "cuGraphDestroy", (CUgraph)) \
	X(MemcpyDtoD, "cuMemcpyDtoD_v2", (CudaPtr, CudaPtr, size_t)) \
	X(EventCreate, "cuEventCreate", (CUevent *, unsigned)) \
	X(EventRecord, "cuEventRecord", (CUevent, CUstream)) \
	X(EventSynchronize, "cuEventSynchronize", (CUevent)) \
	X(EventElapsedTime, "cuEventElapsedTime", (float *, CUevent, CUevent)) \
	X(EventDestroy, "cuEventDestroy_v2", (CUevent)) \
	X(GetErrorName, "cuGetErrorName", (CUresult, const char **)) \
	X(GetErrorString, "cuGetErrorString", (CUresult, const char **))

#define MAX_MODULES 64   /* loaded modules kept for reuse */

struct CudaDev {
	void *lib;
#define X(n, s, a) CUresult (*n) a;
	CUFNS(X)
#undef X
	CUdevice dev;
	CUcontext ctx;
	int version, lost;
	char desc[160];
	DevPool pool;
	/* the stream being captured into a graph (cuda_capture_begin): launches
	 * and memsets go there meanwhile; NULL: the default stream */
	CUstream cap, cur;
	/* loaded modules by the SHA-256 of their PTX (cuda_module_load) */
	CudaMod *mods[MAX_MODULES];
	int nmods;
	uint64_t tick;
	CudaModStats stats;
};

struct CudaMod {
	CUmodule mod;
	unsigned char key[32];
	int refs;             /* users between load and unload */
	uint64_t used;        /* d->tick at the last load */
	/* functions looked up so far (a kernel launches once per run) */
	int n, cap;
	char **name;
	CUfunction *fn;
};

static void mods_drop(CudaDev *d);

static CudaDev the_dev;
static int opened;   /* 1: open; -1: failed for good (no driver) */
static char why_not[256];

/* "CUDA_ERROR_X (text)" for result r */
static const char *
reason(CudaDev *d, CUresult r, char *buf, size_t n)
{
	const char *nm = NULL, *str = NULL;

	if (d->GetErrorName)
		d->GetErrorName(r, &nm);
	if (d->GetErrorString)
		d->GetErrorString(r, &str);
	snprintf(buf, n, "%s (%s)", nm ? nm : "CUDA error", str ? str : "no description");
	return buf;
}

/* Errors after which the context is unusable (the 700s of CUresult). */
static int
sticky(CUresult r)
{
	return r >= 700 && r <= 719;
}

static int
cufail(Ctx *c, CudaDev *d, CUresult r, const char *what)
{
	char buf[200];

	if (sticky(r))
		d->lost = 1;
	return burn_fail(c, r == 2 ? BURN_ERR_NOMEM : BURN_ERR_INVALID,
	                 "cuda %s: %s: %s%s", d->desc[0] ? d->desc : "device", what,
	                 reason(d, r, buf, sizeof buf),
	                 d->lost ? "; the context is lost and is recreated at the next run" : "");
}

static int
pool_alloc(void *user, size_t bytes, uint64_t *out)
{
	CudaDev *d = user;

	return d->MemAlloc((CudaPtr *)out, bytes) != 0;
}

static void
pool_free(void *user, uint64_t p)
{
	CudaDev *d = user;

	d->MemFree((CudaPtr)p);
}

static int
load(Ctx *c, CudaDev *d)
{
	const char *e = getenv("BURNCC_CUDA_DEVICE");
	int ord = e && *e ? atoi(e) : 0, n = 0, maj = 0, min = 0;
	char name[100] = "?";
	CUresult r;

	d->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!d->lib) {
		snprintf(why_not, sizeof why_not, "cuda: no CUDA driver (dlopen libcuda.so.1: %s)",
		         dlerror());
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s", why_not);
	}
#define X(nm, s, a) \
	if (!(*(void **)&d->nm = dlsym(d->lib, s))) { \
		snprintf(why_not, sizeof why_not, "cuda: the driver lacks %s (too old?)", s); \
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s", why_not); \
	}
	CUFNS(X)
#undef X
	if ((r = d->Init(0)))
		return cufail(c, d, r, "cuInit");
	d->DriverGetVersion(&d->version);
	if ((r = d->DeviceGetCount(&n)))
		return cufail(c, d, r, "cuDeviceGetCount");
	if (ord < 0 || ord >= n) {
		snprintf(why_not, sizeof why_not, "cuda: no device %d (%d present)", ord, n);
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s", why_not);
	}
	if ((r = d->DeviceGet(&d->dev, ord)))
		return cufail(c, d, r, "cuDeviceGet");
	d->DeviceGetName(name, sizeof name, d->dev);
	d->DeviceGetAttribute(&maj, CU_ATTR_CC_MAJOR, d->dev);
	d->DeviceGetAttribute(&min, CU_ATTR_CC_MINOR, d->dev);
	snprintf(d->desc, sizeof d->desc, "%s (device %d, sm_%d%d, driver %d.%d)", name, ord,
	         maj, min, d->version / 1000, d->version % 1000 / 10);
	if (maj < 8) {
		snprintf(why_not, sizeof why_not, "cuda %s: compute capability %d.%d: "
		         "burncc's PTX needs 8.0 or later", d->desc, maj, min);
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s", why_not);
	}
	if ((r = d->PrimaryCtxRetain(&d->ctx, d->dev)))
		return cufail(c, d, r, "cuDevicePrimaryCtxRetain");
	if ((r = d->CtxSetCurrent(d->ctx)))
		return cufail(c, d, r, "cuCtxSetCurrent");
	/* a cap: $BURNCC_CUDA_POOL_MB, else none (the driver's own limit) */
	e = getenv("BURNCC_CUDA_POOL_MB");
	devpool_init(&d->pool, pool_alloc, pool_free, d,
	             e && *e ? (uint64_t)atoll(e) << 20 : 0);
	return BURN_OK;
}

int
cuda_open(Ctx *c, CudaDev **out)
{
	CudaDev *d = &the_dev;
	CUresult r;

	*out = NULL;
	if (opened < 0)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s", why_not);
	if (!opened) {
		if (load(c, d)) {
			/* no driver, no device, too old: the same answer each time */
			if (!why_not[0])
				snprintf(why_not, sizeof why_not, "%s", c->msg);
			opened = -1;
			return c->code ? c->code : BURN_ERR_UNSUPPORTED;
		}
		opened = 1;
	}
	if (d->lost) {
		/* after a sticky error: a fresh context; the old one's memory
		 * is gone with it */
		devpool_drop(&d->pool);
		mods_drop(d);
		d->cap = d->cur = NULL;
		d->PrimaryCtxReset(d->dev);
		if ((r = d->PrimaryCtxRetain(&d->ctx, d->dev)) || (r = d->CtxSetCurrent(d->ctx)))
			return cufail(c, d, r, "recreating the context");
		d->lost = 0;
	}
	*out = d;
	return BURN_OK;
}

const char *
cuda_describe(const CudaDev *d)
{
	return d->desc;
}

int
cuda_driver_version(const CudaDev *d)
{
	return d->version;
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Free module m's host memory, unloading it from the device when unload
 * is set and the context is not lost. */
static void
mod_free(CudaDev *d, CudaMod *m, int unload)
{
	if (unload && !d->lost)
		d->ModuleUnload(m->mod);
	for (int i = 0; i < m->n; i++)
		free(m->name[i]);
	free(m->name);
	free(m->fn);
	free(m);
}

/* Forget every module (the context they lived in is gone). */
static void
mods_drop(CudaDev *d)
{
	for (int i = 0; i < d->nmods; i++)
		mod_free(d, d->mods[i], 0);
	d->nmods = 0;
}

/* A module of the PTX: the one loaded before for the same text (key:
 * SHA-256 of the PTX; a model run again, or by another caller, compiles
 * nothing), else the driver's JIT.  At most MAX_MODULES stay loaded: a
 * new one unloads the least recently loaded module no one holds. */
int
cuda_module_load(Ctx *c, CudaDev *d, const char *ptx, CudaMod **out)
{
	char log[4096] = "", buf[200];
	int opt[2] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *val[2] = { log, (void *)(uintptr_t)sizeof log };
	unsigned char key[32];
	BurnSha256 h;
	CudaMod *m;
	double t0 = now_ms();
	CUresult r;

	*out = NULL;
	burn_sha256_init(&h);
	burn_sha256_update(&h, ptx, strlen(ptx));
	burn_sha256_final(&h, key);
	d->tick++;
	for (int i = 0; i < d->nmods; i++)
		if (!memcmp(d->mods[i]->key, key, sizeof key)) {
			m = d->mods[i];
			m->refs++;
			m->used = d->tick;
			d->stats.reused++;
			*out = m;
			return BURN_OK;
		}
	if (d->nmods == MAX_MODULES) {
		int old = -1;
		for (int i = 0; i < d->nmods; i++)
			if (!d->mods[i]->refs && (old < 0 || d->mods[i]->used < d->mods[old]->used))
				old = i;
		if (old >= 0) {
			mod_free(d, d->mods[old], 1);
			d->mods[old] = d->mods[--d->nmods];
			d->stats.evicted++;
		}
	}
	if (!(m = calloc(1, sizeof *m)))
		return burn_fail(c, BURN_ERR_NOMEM, "cuda: out of memory");
	if ((r = d->ModuleLoadDataEx(&m->mod, ptx, 2, opt, val))) {
		free(m);
		if (sticky(r))
			d->lost = 1;
		return burn_fail(c, BURN_ERR_INVALID, "cuda %s: loading the PTX module: %s%s%s",
		                 d->desc, reason(d, r, buf, sizeof buf), log[0] ? ": " : "", log);
	}
	memcpy(m->key, key, sizeof key);
	m->refs = 1;
	m->used = d->tick;
	d->stats.loaded++;
	d->stats.load_ms += now_ms() - t0;
	if (d->nmods < MAX_MODULES)
		d->mods[d->nmods++] = m;
	else
		m->refs = -1;    /* all held: this one is unloaded when released */
	*out = m;
	return BURN_OK;
}

/* Release a module from cuda_module_load: it stays loaded for the next
 * load of the same PTX (unless it could not be kept). */
void
cuda_module_unload(CudaDev *d, CudaMod *m)
{
	if (!m)
		return;
	if (m->refs < 0) {
		mod_free(d, m, 1);
		return;
	}
	if (m->refs > 0)
		m->refs--;
}

void
cuda_module_stats(const CudaDev *d, CudaModStats *s)
{
	*s = d->stats;
	s->kept = d->nmods;
}

static int
function(Ctx *c, CudaDev *d, CudaMod *m, const char *name, CUfunction *out)
{
	CUresult r;
	char what[200];

	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->name[i], name)) {
			*out = m->fn[i];
			return BURN_OK;
		}
	if (m->n == m->cap) {
		int cap = m->cap ? 2 * m->cap : 16;
		char **nn = realloc(m->name, (size_t)cap * sizeof *nn);
		CUfunction *nf;
		if (nn)
			m->name = nn;
		nf = nn ? realloc(m->fn, (size_t)cap * sizeof *nf) : NULL;
		if (!nf)
			return burn_fail(c, BURN_ERR_NOMEM, "cuda: out of memory");
		m->fn = nf;
		m->cap = cap;
	}
	if ((r = d->ModuleGetFunction(out, m->mod, name))) {
		snprintf(what, sizeof what, "kernel %s: cuModuleGetFunction", name);
		return cufail(c, d, r, what);
	}
	if (!(m->name[m->n] = strdup(name)))
		return burn_fail(c, BURN_ERR_NOMEM, "cuda: out of memory");
	m->fn[m->n++] = *out;
	return BURN_OK;
}

int
cuda_launch(Ctx *c, CudaDev *d, CudaMod *m, const char *name, unsigned grid,
            unsigned block, unsigned shared, void **args)
{
	return cuda_launch_y(c, d, m, name, grid, 1, block, shared, args);
}

int
cuda_launch_y(Ctx *c, CudaDev *d, CudaMod *m, const char *name, unsigned grid,
              unsigned grid_y, unsigned block, unsigned shared, void **args)
{
	CUfunction f;
	CUresult r;
	char what[200];

	TRY(function(c, d, m, name, &f));
	/* above 48 KB of dynamic shared memory a function must opt in
	 * (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES); setting it again
	 * with the same size is cheap */
	if (shared > 48 * 1024 && (r = d->FuncSetAttribute(f, 8, (int)shared))) {
		snprintf(what, sizeof what, "kernel %s: %u bytes of shared memory", name, shared);
		return cufail(c, d, r, what);
	}
	if ((r = d->LaunchKernel(f, grid, grid_y, 1, block, 1, 1, shared, d->cur, args, NULL))) {
		snprintf(what, sizeof what, "kernel %s: launch of %u x %u x %u threads", name, grid,
		         grid_y, block);
		return cufail(c, d, r, what);
	}
	return BURN_OK;
}

int
cuda_sync(Ctx *c, CudaDev *d, const char *what)
{
	CUresult r = d->CtxSynchronize();

	return r ? cufail(c, d, r, what) : BURN_OK;
}

int
cuda_alloc(Ctx *c, CudaDev *d, size_t bytes, CudaPtr *out)
{
	int r = devpool_get(&d->pool, bytes, out);

	if (r == -2)
		return burn_fail(c, BURN_ERR_NOMEM, "cuda: out of memory");
	if (r)
		return burn_fail(c, BURN_ERR_NOMEM, "cuda %s: out of device memory for %zu "
		                 "bytes (pool holds %llu%s)", d->desc, bytes,
		                 (unsigned long long)d->pool.held,
		                 d->pool.cap ? ", at its cap $BURNCC_CUDA_POOL_MB" : "");
	return BURN_OK;
}

void
cuda_free(CudaDev *d, CudaPtr p)
{
	if (p)
		devpool_put(&d->pool, p);
}

int
cuda_htod(Ctx *c, CudaDev *d, CudaPtr dst, const void *src, size_t n)
{
	CUresult r = n ? d->MemcpyHtoD(dst, src, n) : 0;

	return r ? cufail(c, d, r, "copy to the device") : BURN_OK;
}

int
cuda_dtoh(Ctx *c, CudaDev *d, void *dst, CudaPtr src, size_t n)
{
	CUresult r = n ? d->MemcpyDtoH(dst, src, n) : 0;

	return r ? cufail(c, d, r, "copy from the device") : BURN_OK;
}

int
cuda_htod_async(Ctx *c, CudaDev *d, CudaPtr dst, const void *src, size_t n)
{
	CUresult r = n ? d->MemcpyHtoDAsync(dst, src, n, d->cur) : 0;

	return r ? cufail(c, d, r, "copy to the device") : BURN_OK;
}

int
cuda_dtoh_async(Ctx *c, CudaDev *d, void *dst, CudaPtr src, size_t n)
{
	CUresult r = n ? d->MemcpyDtoHAsync(dst, src, n, d->cur) : 0;

	return r ? cufail(c, d, r, "copy from the device") : BURN_OK;
}

void *
cuda_queue(CudaDev *d, void *stream)
{
	void *old = d->cur;

	d->cur = stream;
	return old;
}

int
cuda_stream_new(Ctx *c, CudaDev *d, void **out)
{
	CUstream st = NULL;
	CUresult r = d->StreamCreate(&st, 0);

	*out = st;
	return r ? cufail(c, d, r, "creating a stream") : BURN_OK;
}

void
cuda_stream_free(CudaDev *d, void *stream)
{
	if (stream && !d->lost)
		d->StreamDestroy(stream);
}

int
cuda_host_alloc(Ctx *c, CudaDev *d, size_t n, void **out)
{
	CUresult r = d->MemHostAlloc(out, n ? n : 1, 0);

	if (r)
		*out = NULL;
	return r ? cufail(c, d, r, "allocating pinned host memory") : BURN_OK;
}

void
cuda_host_free(CudaDev *d, void *p)
{
	if (p)
		d->MemFreeHost(p);
}

int
cuda_memset0(Ctx *c, CudaDev *d, CudaPtr dst, size_t n)
{
	CUresult r = !n ? 0 : d->cur ? d->MemsetD8Async(dst, 0, n, d->cur) : d->MemsetD8(dst, 0, n);

	return r ? cufail(c, d, r, "memset") : BURN_OK;
}

/* ---- graphs -------------------------------------------------------------- */

struct CudaGraph {
	CUgraph g;
	CUgraphExec x;
};

int
cuda_capture_begin(Ctx *c, CudaDev *d)
{
	CUresult r;

	if (d->cur)
		return burn_fail(c, BURN_ERR_INTERNAL, "cuda: a capture is already open");
	if (!d->cap && (r = d->StreamCreate(&d->cap, CU_STREAM_NON_BLOCKING)))
		return cufail(c, d, r, "creating the capture stream");
	if ((r = d->StreamBeginCapture(d->cap, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)))
		return cufail(c, d, r, "beginning a graph capture");
	d->cur = d->cap;
	return BURN_OK;
}

int
cuda_capture_end(Ctx *c, CudaDev *d, int ok, CudaGraph **out)
{
	CudaGraph *g = calloc(1, sizeof *g);
	CUresult r;
	int rc = BURN_OK;

	*out = NULL;
	if (!d->cur) {
		free(g);
		return burn_fail(c, BURN_ERR_INTERNAL, "cuda: no capture is open");
	}
	d->cur = NULL;
	if (!g) {
		CUgraph tmp = NULL;
		if (!d->StreamEndCapture(d->cap, &tmp) && tmp)
			d->GraphDestroy(tmp);
		return burn_fail(c, BURN_ERR_NOMEM, "cuda: out of memory");
	}
	if ((r = d->StreamEndCapture(d->cap, &g->g)))
		rc = cufail(c, d, r, "ending a graph capture");
	else if (ok && (r = d->GraphInstantiate(&g->x, g->g, 0)))
		rc = cufail(c, d, r, "instantiating the captured graph");
	if (rc || !ok) {
		cuda_graph_free(d, g);
		return rc;
	}
	*out = g;
	return BURN_OK;
}

int
cuda_graph_launch(Ctx *c, CudaDev *d, CudaGraph *g)
{
	CUresult r = d->GraphLaunch(g->x, d->cur);

	return r ? cufail(c, d, r, "launching the model's graph") : BURN_OK;
}

void
cuda_graph_free(CudaDev *d, CudaGraph *g)
{
	if (!g)
		return;
	if (!d->lost) {
		if (g->x)
			d->GraphExecDestroy(g->x);
		if (g->g)
			d->GraphDestroy(g->g);
	}
	free(g);
}

int
cuda_dtod(Ctx *c, CudaDev *d, CudaPtr dst, CudaPtr src, size_t n)
{
	CUresult r = n ? d->MemcpyDtoD(dst, src, n) : 0;

	return r ? cufail(c, d, r, "copy on the device") : BURN_OK;
}

int
cuda_elapsed(Ctx *c, CudaDev *d, int (*work)(Ctx *, void *), void *arg, double *ms)
{
	CUevent e[2] = { 0, 0 };
	CUresult r;
	float f = 0;
	int rc = BURN_OK;

	if ((r = d->EventCreate(&e[0], 0)) || (r = d->EventCreate(&e[1], 0)) ||
	    (r = d->EventRecord(e[0], NULL)))
		rc = cufail(c, d, r, "timing events");
	if (!rc)
		rc = work(c, arg);
	if (!rc && ((r = d->EventRecord(e[1], NULL)) || (r = d->EventSynchronize(e[1])) ||
	            (r = d->EventElapsedTime(&f, e[0], e[1]))))
		rc = cufail(c, d, r, "timed work");
	for (int i = 0; i < 2; i++)
		if (e[i] && !d->lost)
			d->EventDestroy(e[i]);
	*ms = f;
	return rc;
}

void
cuda_pool_release(CudaDev *d)
{
	if (!d->lost)
		devpool_release(&d->pool);
}

void
cuda_pool_stats(const CudaDev *d, int64_t *driver_allocs, int64_t *hits,
                int64_t *bytes_held)
{
	*driver_allocs = d->pool.driver_allocs;
	*hits = d->pool.hits;
	*bytes_held = (int64_t)d->pool.held;
}

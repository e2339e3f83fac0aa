/*
 * devpool.h - a caching allocator for device memory, independent of the
 * device: the caller gives the functions that really allocate and free.
 *
 * Sizes round up to a size class (powers of two from 256 bytes); a freed
 * block goes to its class's free list and the next request of that class
 * takes it without calling the driver.  Blocks are handed out whole; the
 * pool remembers each live block's class.  A cap (bytes held, live and
 * cached) makes a request over it first release the cache, then fail.
 * Not thread-safe: one pool per device per thread of control.
 */
#ifndef BURN_DEVPOOL_H
#define BURN_DEVPOOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct DevPool DevPool;
/* The device's allocator: 0 on success. */
typedef int (*DevAllocFn)(void *user, size_t bytes, uint64_t *out);
typedef void (*DevFreeFn)(void *user, uint64_t p);

struct DevPool {
	DevAllocFn alloc;
	DevFreeFn free;
	void *user;
	uint64_t cap;               /* bytes held at most; 0: no cap */
	/* statistics */
	int64_t driver_allocs, hits, driver_frees;
	uint64_t held;              /* bytes held from the driver */
	/* internals */
	struct DevBlock *live, *cached[48];
};

void devpool_init(DevPool *p, DevAllocFn a, DevFreeFn f, void *user, uint64_t cap);
/* A block of at least bytes; 0 on success, -1 when the driver fails or
 * the cap is reached (even after releasing the cache), -2 out of host
 * memory. */
int devpool_get(DevPool *p, size_t bytes, uint64_t *out);
/* Return a block from devpool_get (unknown addresses are ignored). */
void devpool_put(DevPool *p, uint64_t ptr);
/* Give every cached block back to the driver. */
void devpool_release(DevPool *p);
/* Forget every block without freeing (the device context is gone). */
void devpool_drop(DevPool *p);

#endif

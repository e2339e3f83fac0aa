/*
 * pool.h - host memory for tensors in size classes, for libburn (api/).
 *
 * A request rounds up to a size class: four classes per power of two
 * (2^k, 1.25, 1.5 and 1.75 times 2^k) from 64 bytes, so a class wastes at
 * most a quarter of a block.  A block given back goes to its class's free
 * list and the next request of that class takes it without calling the
 * system allocator.  Blocks are 64-byte aligned; each carries its header
 * (PoolBuf) in front of its data, so a buffer costs no second allocation.
 *
 * The cap: bytes held (live and cached blocks, at class size) never exceed
 * pool->cap (0: no cap).  A request over it first frees the cache, then
 * fails with POOL_LIMIT: a status, never an abort.
 *
 * Not thread-safe: one pool per libburn context.
 */
#ifndef BURN_POOL_H
#define BURN_POOL_H

#include <stddef.h>
#include <stdint.h>

enum { POOL_OK = 0, POOL_LIMIT = 1, POOL_NOMEM = 2 };
enum { POOL_NCLASS = 4 * 48 };

/* A block's header; data follows at the next 64-byte boundary. */
typedef struct PoolBuf {
	struct PoolBuf *next;   /* free list link while cached */
	int cls;                /* size class */
	int refs;               /* the user's reference count (pool_get: 1) */
	int64_t bytes;          /* bytes asked for (<= class size) */
	void *data;             /* 64-byte aligned */
} PoolBuf;

typedef struct Pool {
	int64_t cap;            /* bytes held at most; 0: no cap */
	int64_t held;           /* class bytes of live and cached blocks */
	int64_t live, peak;     /* class bytes of live blocks; their maximum */
	int64_t sys_allocs;     /* blocks obtained from the system */
	int64_t hits;           /* requests served from a free list */
	PoolBuf *free[POOL_NCLASS];
} Pool;

void pool_init(Pool *p, int64_t cap);
/* A block of at least bytes (refs 1), in *out; POOL_OK, POOL_LIMIT or
 * POOL_NOMEM (then *out is NULL). */
int pool_get(Pool *p, int64_t bytes, PoolBuf **out);
/* Give b back (to its class's free list). */
void pool_put(Pool *p, PoolBuf *b);
/* Free every cached block. */
void pool_trim(Pool *p);
/* Free the cache; live blocks must have been put back. */
void pool_deinit(Pool *p);
/* The class size a request of bytes gets; -1 when too large. */
int64_t pool_class_bytes(int64_t bytes);

#endif

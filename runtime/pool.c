/*
 * pool.c - see pool.h.
 */
#include <stdlib.h>
#include <string.h>
#include "pool.h"

enum { HDR = 64, MIN_SHIFT = 6 };

/* Class c covers sizes up to (4 + c%4) << (c/4 + MIN_SHIFT - 2). */
static int64_t
class_size(int c)
{
	return (int64_t)(4 + c % 4) << (c / 4 + MIN_SHIFT - 2);
}

static int
size_class(int64_t bytes)
{
	int k = MIN_SHIFT;

	if (bytes <= (1 << MIN_SHIFT))
		return 0;
	/* k: the power of two at or below bytes */
	while (k < 62 && ((int64_t)1 << (k + 1)) <= bytes)
		k++;
	for (int q = 0; q < 4; q++) {
		int c = (k - MIN_SHIFT) * 4 + q;
		if (c >= POOL_NCLASS)
			return -1;
		if (class_size(c) >= bytes)
			return c;
	}
	return (k + 1 - MIN_SHIFT) * 4 < POOL_NCLASS ? (k + 1 - MIN_SHIFT) * 4 : -1;
}

int64_t
pool_class_bytes(int64_t bytes)
{
	int c = bytes < 0 ? -1 : size_class(bytes);
	return c < 0 ? -1 : class_size(c);
}

void
pool_init(Pool *p, int64_t cap)
{
	memset(p, 0, sizeof *p);
	p->cap = cap > 0 ? cap : 0;
}

void
pool_trim(Pool *p)
{
	for (int c = 0; c < POOL_NCLASS; c++) {
		PoolBuf *b, *next;
		for (b = p->free[c]; b; b = next) {
			next = b->next;
			p->held -= class_size(c);
			free(b);
		}
		p->free[c] = NULL;
	}
}

int
pool_get(Pool *p, int64_t bytes, PoolBuf **out)
{
	int c = bytes < 0 ? -1 : size_class(bytes);
	int64_t cb;
	PoolBuf *b;

	*out = NULL;
	if (c < 0)
		return POOL_LIMIT;
	cb = class_size(c);
	if ((b = p->free[c]) != NULL) {
		p->free[c] = b->next;
		p->hits++;
	} else {
		if (p->cap && p->held + cb > p->cap)
			pool_trim(p);
		if (p->cap && p->held + cb > p->cap)
			return POOL_LIMIT;
		/* aligned_alloc wants a multiple of the alignment (C11);
		 * the small classes (80, 96, 112) are not */
		if (!(b = aligned_alloc(HDR, (size_t)(HDR + ((cb + HDR - 1) & ~(int64_t)(HDR - 1))))))
			return POOL_NOMEM;
		b->cls = c;
		b->data = (char *)b + HDR;
		p->held += cb;
		p->sys_allocs++;
	}
	b->next = NULL;
	b->refs = 1;
	b->bytes = bytes;
	p->live += cb;
	if (p->live > p->peak)
		p->peak = p->live;
	*out = b;
	return POOL_OK;
}

void
pool_put(Pool *p, PoolBuf *b)
{
	if (!b)
		return;
	p->live -= class_size(b->cls);
	b->next = p->free[b->cls];
	p->free[b->cls] = b;
}

void
pool_deinit(Pool *p)
{
	pool_trim(p);
}

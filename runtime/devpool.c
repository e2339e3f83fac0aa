/*
 * devpool.c - the caching device allocator (devpool.h).
 */
#include <stdlib.h>
#include "devpool.h"

typedef struct DevBlock {
	uint64_t ptr;
	int cls;
	struct DevBlock *next;
} DevBlock;

#define MIN_SHIFT 8

static int
size_class(size_t bytes)
{
	int c = 0;

	while (((size_t)1 << (c + MIN_SHIFT)) < bytes && c < 47)
		c++;
	return c;
}

void
devpool_init(DevPool *p, DevAllocFn a, DevFreeFn f, void *user, uint64_t cap)
{
	*p = (DevPool){0};
	p->alloc = a;
	p->free = f;
	p->user = user;
	p->cap = cap;
}

void
devpool_release(DevPool *p)
{
	for (int c = 0; c < 48; c++)
		while (p->cached[c]) {
			DevBlock *b = p->cached[c];
			p->cached[c] = b->next;
			p->free(p->user, b->ptr);
			p->held -= (uint64_t)1 << (c + MIN_SHIFT);
			p->driver_frees++;
			free(b);
		}
}

int
devpool_get(DevPool *p, size_t bytes, uint64_t *out)
{
	int c = size_class(bytes ? bytes : 1);
	uint64_t sz = (uint64_t)1 << (c + MIN_SHIFT);
	DevBlock *b = p->cached[c];

	if (b) {
		p->cached[c] = b->next;
		p->hits++;
	} else {
		if (sz < bytes)
			return -1;
		if (p->cap && p->held + sz > p->cap)
			devpool_release(p);
		if (p->cap && p->held + sz > p->cap)
			return -1;
		if (!(b = malloc(sizeof *b)))
			return -2;
		if (p->alloc(p->user, (size_t)sz, &b->ptr)) {
			/* the cache may be what fills the device: give it back, retry */
			devpool_release(p);
			if (p->alloc(p->user, (size_t)sz, &b->ptr)) {
				free(b);
				return -1;
			}
		}
		b->cls = c;
		p->held += sz;
		p->driver_allocs++;
	}
	b->next = p->live;
	p->live = b;
	*out = b->ptr;
	return 0;
}

void
devpool_put(DevPool *p, uint64_t ptr)
{
	for (DevBlock **q = &p->live; *q; q = &(*q)->next)
		if ((*q)->ptr == ptr) {
			DevBlock *b = *q;
			*q = b->next;
			b->next = p->cached[b->cls];
			p->cached[b->cls] = b;
			return;
		}
}

void
devpool_drop(DevPool *p)
{
	DevBlock *b, *n;

	for (b = p->live; b; b = n) {
		n = b->next;
		free(b);
	}
	p->live = NULL;
	for (int c = 0; c < 48; c++) {
		for (b = p->cached[c]; b; b = n) {
			n = b->next;
			free(b);
		}
		p->cached[c] = NULL;
	}
	p->held = 0;
}

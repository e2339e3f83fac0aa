/*
 * idx.h - the IDX files of MNIST and Fashion-MNIST (LeCun's format), plain
 * or gzip-compressed (through zlib, which reads both).
 *
 * The format: bytes 0 and 1 zero, byte 2 the element type (0x08 unsigned
 * byte is the only one accepted: images and labels are), byte 3 the rank
 * (1..4), then rank big-endian u32 dims, then the elements in row-major
 * order.  A file is rejected (BURN_ERR_PARSE, naming the file and what is
 * wrong) when the header is wrong, a dim is 0 or the elements exceed the
 * limit, the data is shorter than the dims say, or anything follows it.
 */
#ifndef BURN_IDX_H
#define BURN_IDX_H

#include <stdint.h>
#include "../ir/base.h"

#define IDX_MAX_BYTES ((int64_t)1 << 31)

typedef struct Idx {
	int rank;
	int64_t dim[4];
	int64_t n;          /* elements: the product of dim */
	uint8_t *data;      /* malloc'd, n bytes; idx_free releases it */
} Idx;

int idx_load(Ctx *c, const char *path, Idx *out);
void idx_free(Idx *x);

#endif

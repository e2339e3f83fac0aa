/*
 * safetensors.h - read a safetensors file: an 8-byte little-endian header
 * length N, N bytes of JSON
 *   {"NAME": {"dtype": "F32", "shape": [2, 3], "data_offsets": [BEGIN, END]},
 *    ..., "__metadata__": {"key": "value", ...}}
 * then the data; each tensor's bytes are data[BEGIN..END), row-major,
 * little-endian.
 *
 * Everything is checked before use: the header fits in the file and is at
 * most 100 MB, is JSON of that form (nesting at most 64 deep), names are
 * unique, every dtype is known, dims are non-negative and at most 8 of
 * them, numel * element size does not overflow and equals END - BEGIN, and
 * BEGIN <= END <= the data's size.  A file that breaks any of it is
 * BURN_ERR_PARSE with the reason; nothing here crashes on hostile input
 * (tests/fuzz: fuzz_safetensors).
 */
#ifndef BURN_SAFETENSORS_H
#define BURN_SAFETENSORS_H

#include <stdint.h>
#include "../ir/base.h"

typedef struct StTensor {
	const char *name;        /* in the arena */
	int dtype;               /* DType (ONNX numbering) */
	int rank;
	int64_t dim[8];
	int64_t numel;
	const uint8_t *data;     /* into the file's buffer */
	uint64_t bytes;
} StTensor;

typedef struct StFile {
	uint8_t *buf;            /* the whole file (st_read), or borrowed */
	size_t size;
	int owned;
	StTensor *t;             /* in the arena */
	int n;
} StFile;

/* Parse buf[0..n) (borrowed: must outlive *out). */
int st_parse(Ctx *c, Arena *a, const uint8_t *buf, size_t n, StFile *out);
/* Read path (at most c->limits.max_file_bytes) and parse it. */
int st_read(Ctx *c, Arena *a, const char *path, StFile *out);
void st_free(StFile *f);

#endif

/*
 * idx.c - the IDX reader (idx.h).
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "idx.h"

/* Read exactly n bytes; 0 on a short read or an error. */
static int read_all(gzFile f, void *buf, int64_t n)
{
	char *p = buf;

	while (n > 0) {
		unsigned chunk = n > (1 << 30) ? 1u << 30 : (unsigned)n;
		int got = gzread(f, p, chunk);
		if (got <= 0)
			return 0;
		p += got;
		n -= got;
	}
	return 1;
}

int idx_load(Ctx *c, const char *path, Idx *out)
{
	unsigned char h[4], d[4], extra;
	gzFile f;
	int rc = BURN_OK, got;

	memset(out, 0, sizeof *out);
	if (!(f = gzopen(path, "rb")))
		return burn_fail(c, BURN_ERR_IO, "%s: cannot open", path);
	if (!read_all(f, h, 4)) {
		rc = burn_fail(c, BURN_ERR_PARSE, "%s: not an IDX file (shorter than its header)", path);
		goto done;
	}
	if (h[0] || h[1] || h[3] < 1 || h[3] > 4) {
		rc = burn_fail(c, BURN_ERR_PARSE, "%s: not an IDX file (magic %02x%02x%02x%02x)",
		               path, h[0], h[1], h[2], h[3]);
		goto done;
	}
	if (h[2] != 0x08) {
		rc = burn_fail(c, BURN_ERR_UNSUPPORTED,
		               "%s: IDX element type 0x%02x (only 0x08, unsigned byte, is read)",
		               path, h[2]);
		goto done;
	}
	out->rank = h[3];
	out->n = 1;
	for (int i = 0; i < out->rank; i++) {
		if (!read_all(f, d, 4)) {
			rc = burn_fail(c, BURN_ERR_PARSE, "%s: truncated header", path);
			goto done;
		}
		out->dim[i] = (int64_t)d[0] << 24 | d[1] << 16 | d[2] << 8 | d[3];
		if (out->dim[i] == 0 || out->dim[i] > IDX_MAX_BYTES / out->n) {
			rc = burn_fail(c, BURN_ERR_PARSE, "%s: dim %d is %lld (0, or over %lld elements in all)",
			               path, i, (long long)out->dim[i], (long long)IDX_MAX_BYTES);
			goto done;
		}
		out->n *= out->dim[i];
	}
	if (!(out->data = malloc((size_t)out->n))) {
		rc = burn_fail(c, BURN_ERR_NOMEM, "%s: out of memory", path);
		goto done;
	}
	if (!read_all(f, out->data, out->n)) {
		int e;
		const char *z = gzerror(f, &e);
		rc = burn_fail(c, BURN_ERR_PARSE, "%s: data shorter than the header's %lld elements%s%s",
		               path, (long long)out->n, e < 0 ? ": " : "", e < 0 ? z : "");
		goto done;
	}
	/* the end, and for gzip the trailer's CRC and length checked */
	if ((got = gzread(f, &extra, 1)) != 0) {
		int e;
		const char *z = gzerror(f, &e);
		if (got > 0)
			rc = burn_fail(c, BURN_ERR_PARSE, "%s: bytes after the %lld elements",
			               path, (long long)out->n);
		else
			rc = burn_fail(c, BURN_ERR_PARSE, "%s: corrupt (%s)", path, z);
		goto done;
	}
done:
	gzclose(f);
	if (rc)
		idx_free(out);
	return rc;
}

void idx_free(Idx *x)
{
	free(x->data);
	x->data = NULL;
}

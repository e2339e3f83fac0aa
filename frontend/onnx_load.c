/*
 * onnx_load.c - the ONNX frontend: protobuf bytes -> graph IR.
 *
 * Loading a model is four steps:
 *
 *   check_nesting   walk the raw wire format once and refuse messages nested
 *                   absurdly deep (protobuf-c recurses without a limit, so a
 *                   hostile file could otherwise overflow the stack);
 *   unpack          protobuf-c decodes the bytes against frontend/onnx.proto;
 *   build_model     opset, then build_graph on the main graph;
 *   free            the protobuf-c message is freed on every path.
 *
 * build_graph converts one GraphProto, in passes so that a node may use a
 * value produced by a later node (the order is fixed by graph_toposort):
 *
 *   1. initializers become constants; graph inputs without an initializer of
 *      the same name become VK_INPUT values;
 *   2. every node is checked (domain, op, arity) and its outputs get values;
 *   3. nodes are added with their inputs resolved by name, then their
 *      attributes (subgraphs recursively, see below);
 *   4. graph outputs are resolved, and the nodes sorted.
 *
 * Names resolve through a chain of Scopes, one per graph under construction,
 * each a hash table from name to value index.  Outer-scope references: when a
 * subgraph (If/Loop/Scan body) uses a name defined only in an enclosing graph,
 * the subgraph gets a local value of that name with kind VK_TEMP, producer -1
 * and no data, listed in neither g->in nor any node's outputs.  That is the
 * "capture" convention of graph.c (graph_toposort, graph_verify): a value
 * with no local definition whose name matches a value of an ancestor, found
 * through g->parent by name.  A name defined in no enclosing scope is an
 * error here, not left for later.
 *
 * Nothing here trusts the input: every count, index, dtype and size read from
 * the file is checked before use.  Errors name the node being converted
 * through c->node/c->op, which are restored before returning (they would
 * otherwise point into freed memory).
 */
#include "onnx.h"
#include "onnx.pb-c.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	MIN_OPSET = 1,
	MAX_OPSET = 27,        /* newest ai.onnx opset in onnx-tests (onnx 1.22) */
	MAX_WIRE_NESTING = 2000, /* hard cap on protobuf message nesting */
};

/* One graph under construction: its name table, chained to the enclosing
 * graph's scope (NULL for the main graph). */
typedef struct Scope Scope;
struct Scope {
	Scope *up;
	Graph *g;
	int *slot;     /* open addressing: value index + 1, 0 = empty */
	size_t cap;    /* power of two, or 0 */
	size_t n;      /* used slots */
};

typedef struct Loader {
	Ctx *c;
	const char *dir;   /* folder for external data (borrowed); NULL: none */
	int opset;         /* ai.onnx opset, copied into every graph */
	int depth;         /* subgraph nesting of the graph being built */
	int nunk;          /* unnamed symbolic dims so far, for "unk_N" */
} Loader;

static const char *
S(const char *s)
{
	return s ? s : "";
}

static int
nomem(Ctx *c)
{
	return burn_fail(c, BURN_ERR_NOMEM, "out of memory");
}

/* ---- name tables ---------------------------------------------------- */

static size_t
hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;   /* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return (size_t)h;
}

/* Value index of name in this scope only, or -1. */
static int
scope_find(const Scope *s, const char *name)
{
	size_t m, i;

	if (!s->cap)
		return -1;
	m = s->cap - 1;
	for (i = hash(name) & m; s->slot[i]; i = (i + 1) & m)
		if (!strcmp(s->g->val[s->slot[i] - 1].name, name))
			return s->slot[i] - 1;
	return -1;
}

static void
slot_put(int *slot, size_t cap, const char *name, int v)
{
	size_t i;

	for (i = hash(name) & (cap - 1); slot[i]; i = (i + 1) & (cap - 1))
		;
	slot[i] = v + 1;
}

/* Enter value v (named, not yet in the table) into s. */
static int
scope_put(Ctx *c, Scope *s, int v)
{
	size_t k;

	if (2 * (s->n + 1) > s->cap) {
		size_t ncap = s->cap ? 2 * s->cap : 64;
		int *ns = calloc(ncap, sizeof *ns);
		if (!ns)
			return nomem(c);
		for (k = 0; k < s->cap; k++)
			if (s->slot[k])
				slot_put(ns, ncap, s->g->val[s->slot[k] - 1].name,
				         s->slot[k] - 1);
		free(s->slot);
		s->slot = ns;
		s->cap = ncap;
	}
	slot_put(s->slot, s->cap, s->g->val[v].name, v);
	s->n++;
	return BURN_OK;
}

/* Add a value named name to s's graph and table; *out gets its index. */
static int
new_value(Ctx *c, Scope *s, const char *name, int *out)
{
	int v = graph_add_value(s->g, name);

	if (v < 0)
		return nomem(c);
	*out = v;
	return scope_put(c, s, v);
}

/* Resolve a use of name in s: a local value, or a capture of a value of an
 * enclosing scope (created on first use).  *out = -1 if defined nowhere. */
static int
resolve(Ctx *c, Scope *s, const char *name, int *out)
{
	const Scope *p;

	*out = scope_find(s, name);
	if (*out >= 0)
		return BURN_OK;
	for (p = s->up; p; p = p->up)
		if (scope_find(p, name) >= 0)
			return new_value(c, s, name, out);
	return BURN_OK;
}

/* ---- files ---------------------------------------------------------- */

/* Read a whole file (at most c->limits.max_file_bytes) into a malloc'd
 * buffer *out of *len bytes; the caller frees it. */
static int
read_file(Ctx *c, const char *path, uint8_t **out, size_t *len)
{
	int64_t limit = c->limits.max_file_bytes > 0 ? c->limits.max_file_bytes
	                                             : INT64_MAX;
	struct stat st;
	size_t n = 0, cap;
	uint8_t *buf;
	int fd;

	*out = NULL;
	*len = 0;
	if ((fd = open(path, O_RDONLY)) < 0)
		return burn_fail(c, BURN_ERR_IO, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return burn_fail(c, BURN_ERR_IO, "cannot open: %s", strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return burn_fail(c, BURN_ERR_IO, "cannot open: %s", strerror(EISDIR));
	}
	if (c->on_read)
		c->on_read(c->on_read_arg, path, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	if (S_ISREG(st.st_mode) && st.st_size > limit) {
		close(fd);
		return burn_fail(c, BURN_ERR_LIMIT, "file is %lld bytes, over --max-file-bytes (%lld)",
		                 (long long)st.st_size, (long long)limit);
	}
	/* Regular files: one read of st_size (+1 to see EOF); others grow. */
	cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 1 << 16;
	if (!(buf = malloc(cap))) {
		close(fd);
		return nomem(c);
	}
	for (;;) {
		ssize_t r;
		if (n == cap) {
			uint8_t *nb;
			if ((int64_t)n > limit)
				break;
			if (!(nb = realloc(buf, cap * 2))) {
				free(buf);
				close(fd);
				return nomem(c);
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			close(fd);
			return burn_fail(c, BURN_ERR_IO, "cannot read: %s", strerror(e));
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if ((int64_t)n > limit) {
		free(buf);
		return burn_fail(c, BURN_ERR_LIMIT, "file is over --max-file-bytes (%lld)",
		                 (long long)limit);
	}
	*out = buf;
	*len = n;
	return BURN_OK;
}

/* The folder part of path ("." if none), malloc'd. */
static char *
dir_of(const char *path)
{
	const char *sl = strrchr(path, '/');

	if (!sl)
		return strdup(".");
	if (sl == path)
		return strdup("/");
	return strndup(path, (size_t)(sl - path));
}

/* ---- protobuf nesting ----------------------------------------------- */

static int
varint(const uint8_t *p, size_t n, size_t *i, uint64_t *out)
{
	uint64_t v = 0;
	int sh;

	for (sh = 0; sh < 64 && *i < n; sh += 7) {
		uint8_t b = p[(*i)++];
		v |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80)) {
			*out = v;
			return 1;
		}
	}
	return 0;
}

/*
 * Depth of message nesting in p[0..n), a message of type d, is over max?
 * Only fields that d declares as messages are descended into (protobuf-c
 * keeps the others as opaque bytes).  Malformed wire data stops the walk
 * with "not too deep": protobuf-c will reject it itself.  Each byte is read
 * at one level only, so this is linear in n.
 */
static int
too_deep(const uint8_t *p, size_t n, const ProtobufCMessageDescriptor *d,
         int depth, int max)
{
	size_t i = 0;
	uint64_t tag, x;

	if (depth > max)
		return 1;
	while (i < n) {
		if (!varint(p, n, &i, &tag))
			return 0;
		switch (tag & 7) {
		case 0:
			if (!varint(p, n, &i, &x))
				return 0;
			break;
		case 1:
			if (n - i < 8)
				return 0;
			i += 8;
			break;
		case 5:
			if (n - i < 4)
				return 0;
			i += 4;
			break;
		case 2: {
			const ProtobufCFieldDescriptor *f = NULL;
			if (!varint(p, n, &i, &x) || x > n - i)
				return 0;
			if ((tag >> 3) <= 0x1fffffff)
				f = protobuf_c_message_descriptor_get_field(d, (unsigned)(tag >> 3));
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
			    too_deep(p + i, (size_t)x, f->descriptor, depth + 1, max))
				return 1;
			i += (size_t)x;
			break;
		}
		default:
			return 0;
		}
	}
	return 0;
}

static int
check_nesting(Ctx *c, const uint8_t *p, size_t n,
              const ProtobufCMessageDescriptor *d)
{
	/* Graph -> Node -> Attribute -> Graph: three levels per subgraph, plus
	 * slack for types (TypeProto nests through sequence/optional). */
	int64_t max = 3 * (int64_t)(c->limits.max_depth > 0 ? c->limits.max_depth : 32) + 32;

	if (max > MAX_WIRE_NESTING)
		max = MAX_WIRE_NESTING;
	if (too_deep(p, n, d, 0, (int)max))
		return burn_fail(c, BURN_ERR_LIMIT,
		                 "protobuf messages nested deeper than %d (3 x --max-depth + 32)", (int)max);
	return BURN_OK;
}

/* ---- tensors -------------------------------------------------------- */

/* Parse a non-negative decimal int64 (the offset/length of external data). */
static int
parse_size(const char *s, int64_t *out)
{
	int64_t v = 0;

	if (!s || !*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || burn_mul_ovf(v, 10, &v) ||
		    burn_add_ovf(v, *s - '0', &v))
			return 0;
	}
	*out = v;
	return 1;
}

/* Does relative path loc have a ".." component?  '\' counts as a separator
 * too, so a model written on Windows cannot sneak one past. */
static int
has_dotdot(const char *loc)
{
	const char *p = loc;

	while (*p) {
		size_t k = strcspn(p, "/\\");
		if (k == 2 && p[0] == '.' && p[1] == '.')
			return 1;
		p += k;
		if (*p)
			p++;
	}
	return 0;
}

/*
 * Read t->nbytes bytes of external data for tensor tp into t->data.  The
 * file is named relative to L->dir; it must stay inside that folder both as
 * written (no absolute path, no "..") and after resolving symbolic links.
 */
static int
read_external(Loader *L, const Onnx__TensorProto *tp, const char *what,
              Tensor *t)
{
	Ctx *c = L->c;
	const char *nm = S(tp->name), *loc = NULL;
	int64_t off = 0, len = -1, done;
	char *full = NULL, *rdir = NULL, *rfull = NULL;
	struct stat st;
	size_t k, dl;
	int fd = -1, rc = BURN_OK;

	for (k = 0; k < tp->n_external_data; k++) {
		const Onnx__StringStringEntryProto *e = tp->external_data[k];
		const char *key = S(e->key);
		if (!strcmp(key, "location"))
			loc = S(e->value);
		else if (!strcmp(key, "offset") && !parse_size(e->value, &off))
			return burn_fail(c, BURN_ERR_INVALID, "%s '%s': bad external data offset '%s'",
			                 what, nm, S(e->value));
		else if (!strcmp(key, "length") && !parse_size(e->value, &len))
			return burn_fail(c, BURN_ERR_INVALID, "%s '%s': bad external data length '%s'",
			                 what, nm, S(e->value));
	}
	if (!loc || !*loc)
		return burn_fail(c, BURN_ERR_INVALID, "%s '%s': external data without a location",
		                 what, nm);
	if (loc[0] == '/' || loc[0] == '\\')
		return burn_fail(c, BURN_ERR_INVALID,
		                 "%s '%s': external data path '%s' is absolute", what, nm, loc);
	if (has_dotdot(loc))
		return burn_fail(c, BURN_ERR_INVALID,
		                 "%s '%s': external data path '%s' leaves the model's folder",
		                 what, nm, loc);
	if (!L->dir)
		return burn_fail(c, BURN_ERR_UNSUPPORTED,
		                 "%s '%s': external data, but no model folder to read it from",
		                 what, nm);
	if (!(full = malloc(strlen(L->dir) + strlen(loc) + 2)))
		return nomem(c);
	sprintf(full, "%s/%s", L->dir, loc);
	rdir = realpath(L->dir, NULL);
	rfull = realpath(full, NULL);
	if (!rdir || !rfull) {
		rc = burn_fail(c, BURN_ERR_IO, "%s '%s': cannot open external data '%s': %s",
		               what, nm, loc, strerror(errno));
		goto done;
	}
	dl = strlen(rdir);
	if (strncmp(rfull, rdir, dl) != 0 || (rfull[dl] != '/' && dl > 1)) {
		rc = burn_fail(c, BURN_ERR_INVALID,
		               "%s '%s': external data path '%s' leaves the model's folder",
		               what, nm, loc);
		goto done;
	}
	/* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
	 * writer forever; it is refused below, like anything not a regular
	 * file (for which the flag changes nothing). */
	if ((fd = open(rfull, O_RDONLY | O_NONBLOCK | O_NOCTTY)) < 0 || fstat(fd, &st) < 0) {
		rc = burn_fail(c, BURN_ERR_IO, "%s '%s': cannot open external data '%s': %s",
		               what, nm, loc, strerror(errno));
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = burn_fail(c, BURN_ERR_INVALID,
		               "%s '%s': external data '%s' is not a regular file",
		               what, nm, loc);
		goto done;
	}
	if (c->on_read)
		c->on_read(c->on_read_arg, rfull, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	if (len < 0)
		len = off <= st.st_size ? st.st_size - off : 0;
	if (off > st.st_size || len > st.st_size - off) {
		rc = burn_fail(c, BURN_ERR_INVALID,
		               "%s '%s': external data (offset %lld, length %lld) is outside "
		               "'%s' (%lld bytes)", what, nm, (long long)off, (long long)len,
		               loc, (long long)st.st_size);
		goto done;
	}
	if (len != t->nbytes) {
		rc = burn_fail(c, BURN_ERR_INVALID,
		               "%s '%s': data size mismatch: external data has %lld bytes, "
		               "its shape needs %lld", what, nm, (long long)len,
		               (long long)t->nbytes);
		goto done;
	}
	for (done = 0; done < len;) {
		ssize_t r = pread(fd, (char *)t->data + done, (size_t)(len - done),
		                  (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = burn_fail(c, BURN_ERR_IO, "%s '%s': cannot read external data '%s': %s",
			               what, nm, loc, r < 0 ? strerror(errno) : "short file");
			goto done;
		}
		done += r;
	}
done:
	if (fd >= 0)
		close(fd);
	free(full);
	free(rdir);
	free(rfull);
	return rc;
}

/*
 * Copy count typed elements (from one of TensorProto's repeated fields) into
 * dst as es-byte little-endian elements.  int32_data carries every type of
 * 16 bits or less (bool, int8/16, uint8/16, float16 and bfloat16 as bits),
 * truncated here to the element size; uint64_data carries uint32 too.
 */
static void
put_ints(uint8_t *dst, int es, const void *src, int srcsize, size_t count)
{
	size_t k;

	for (k = 0; k < count; k++) {
		uint64_t x;
		if (srcsize == 4) {
			int32_t v;
			memcpy(&v, (const char *)src + 4 * k, 4);
			x = (uint64_t)(int64_t)v;
		} else
			memcpy(&x, (const char *)src + 8 * k, 8);
		memcpy(dst + (size_t)es * k, &x, (size_t)es);  /* little-endian host */
	}
}

/*
 * Decode TensorProto tp into t, with the payload allocated from a.  what
 * ("initializer", "attribute", "tensor") names the tensor in messages.  The
 * data comes from external data, raw_data, or the typed field that ONNX
 * assigns to the dtype; its size must match the declared dims exactly.
 */
static int
decode_tensor(Loader *L, const Onnx__TensorProto *tp, Arena *a, const char *what,
              Tensor *t)
{
	Ctx *c = L->c;
	const char *nm = S(tp->name);
	int64_t numel = 1, nbytes, maxb = c->limits.max_tensor_bytes, want;
	const void *src = NULL;
	size_t have = 0;
	int dt, es, srcsize = 0, k, cplx;

	memset(t, 0, sizeof *t);
	dt = tp->has_data_type ? tp->data_type : DT_UNDEF;
	if (dt == DT_UNDEF)
		return burn_fail(c, BURN_ERR_INVALID, "%s '%s' has no data type", what, nm);
	if (dt == DT_STRING && sizeof(const char *) != 8)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s '%s': string tensors need "
		                 "a burncc built with 64-bit pointers", what, nm);
	if (dtype_bits(dt) <= 0)
		return burn_fail(c, BURN_ERR_UNSUPPORTED,
		                 "%s '%s': data type %d is not supported", what, nm, dt);
	es = dtype_is_packed(dt) ? 1 : dtype_size(dt);   /* packed: bytes */
	if (tp->segment)
		return burn_fail(c, BURN_ERR_UNSUPPORTED,
		                 "%s '%s': segmented tensors are not supported", what, nm);
	if (tp->n_dims > BURN_MAX_RANK)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s '%s' has rank %zu (max %d)",
		                 what, nm, tp->n_dims, BURN_MAX_RANK);
	for (k = 0; k < (int)tp->n_dims; k++) {
		int64_t d = tp->dims[k];
		if (d < 0)
			return burn_fail(c, BURN_ERR_INVALID, "%s '%s' has negative dim %lld",
			                 what, nm, (long long)d);
		if (burn_mul_ovf(numel, d, &numel))
			return burn_fail(c, BURN_ERR_LIMIT, "%s '%s': element count overflows",
			                 what, nm);
		t->dim[k] = d;
	}
	if (maxb <= 0)
		maxb = INT64_MAX;
	if (dtype_nbytes(dt, numel, &nbytes) || nbytes > maxb ||
	    (uint64_t)nbytes >= SIZE_MAX / 2)
		return burn_fail(c, BURN_ERR_LIMIT,
		                 "%s '%s': %lld elements of %s exceed the tensor size limit "
		                 "--max-tensor-bytes (%lld)", what, nm, (long long)numel, dtype_name(dt),
		                 (long long)maxb);
	t->dtype = dt;
	t->rank = (int)tp->n_dims;
	t->nbytes = nbytes;
	/* Never NULL, even when empty: a constant is a value with data. */
	if (!(t->data = arena_alloc(a, (size_t)(nbytes ? nbytes : 1))))
		return nomem(c);

	/* strings: string_data, each NUL-terminated in a (a string tensor is
	 * an array of pointers: ir/base.h); a NUL byte inside one cannot be
	 * kept */
	if (dt == DT_STRING) {
		const char **s = t->data;
		if ((uint64_t)tp->n_string_data != (uint64_t)numel)
			return burn_fail(c, BURN_ERR_INVALID, "%s '%s': data size mismatch: "
			                 "%zu strings, its shape needs %lld", what, nm,
			                 tp->n_string_data, (long long)numel);
		for (int64_t j = 0; j < numel; j++) {
			const ProtobufCBinaryData *b = &tp->string_data[j];
			if (b->len && memchr(b->data, 0, b->len))
				return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s '%s': string %lld "
				                 "holds a NUL byte", what, nm, (long long)j);
			if (!(s[j] = arena_strndup(a, (const char *)b->data, b->len)))
				return nomem(c);
		}
		return BURN_OK;
	}
	if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		return read_external(L, tp, what, t);
	if (tp->has_raw_data) {
		if ((uint64_t)tp->raw_data.len != (uint64_t)nbytes)
			return burn_fail(c, BURN_ERR_INVALID,
			                 "%s '%s': data size mismatch: raw_data has %zu bytes, "
			                 "its shape needs %lld", what, nm, tp->raw_data.len,
			                 (long long)nbytes);
		if (nbytes)
			memcpy(t->data, tp->raw_data.data, (size_t)nbytes);
		return BURN_OK;
	}
	/* Typed fields: complex types store (re, im) pairs. */
	cplx = dt == DT_C64 || dt == DT_C128;
	switch (dt) {
	case DT_F32: case DT_C64:
		src = tp->float_data, have = tp->n_float_data, srcsize = 4;
		break;
	case DT_F64: case DT_C128:
		src = tp->double_data, have = tp->n_double_data, srcsize = 8;
		break;
	case DT_I64:
		src = tp->int64_data, have = tp->n_int64_data, srcsize = 8;
		break;
	case DT_U32: case DT_U64:
		src = tp->uint64_data, have = tp->n_uint64_data, srcsize = 8;
		break;
	default:
		if (es > 4)
			return burn_fail(c, BURN_ERR_UNSUPPORTED,
			                 "%s '%s': no typed data field for data type %d", what, nm, dt);
		src = tp->int32_data, have = tp->n_int32_data, srcsize = 4;
		break;
	}
	/* packed types: one byte (two or four elements) per int32 */
	want = cplx ? 2 * numel : dtype_is_packed(dt) ? nbytes : numel;
	if ((uint64_t)have != (uint64_t)want)
		return burn_fail(c, BURN_ERR_INVALID,
		                 "%s '%s': data size mismatch: %zu values, its shape needs %lld",
		                 what, nm, have, (long long)want);
	if (!have)
		return BURN_OK;
	if (cplx || (srcsize == es && dt != DT_U32))
		memcpy(t->data, src, (size_t)nbytes);   /* same layout */
	else
		put_ints(t->data, es, src, srcsize, have);
	return BURN_OK;
}

/* ---- graphs --------------------------------------------------------- */

static int build_graph(Loader *L, Scope *up, const Onnx__GraphProto *gp, Graph *g);

/*
 * Set value v's dtype and shape from a graph input's declared type.  Only
 * tensor types are accepted.  Inputs of subgraphs may leave the type out
 * (Loop bodies often do); the main graph's must have one.
 */
static int
input_type(Loader *L, Graph *g, int v, const Onnx__ValueInfoProto *vi, int root)
{
	Ctx *c = L->c;
	const char *nm = S(vi->name);
	const Onnx__TypeProto *tp = vi->type;
	const Onnx__TypeProto__Tensor *tt;
	Value *val;
	int dt, k;

	if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET) {
		if (root)
			return burn_fail(c, BURN_ERR_INVALID, "input '%s' has no type", nm);
		return BURN_OK;
	}
	switch (tp->value_case) {
	case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
		break;
	case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
	case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
		/* a sequence's length, an optional's presence come with the
		 * data: graph_bind_input (a subgraph's get its caller's value) */
		if (root) {
			const Onnx__TypeProto *et = tp->value_case ==
				ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && tp->optional_type ?
				tp->optional_type->elem_type : NULL;
			GV(g, v)->decl = tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ?
			                 VD_SEQ : et && et->value_case ==
			                 ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ? VD_OPT_SEQ : VD_OPT;
		}
		return BURN_OK;
	case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
		return burn_fail(c, BURN_ERR_UNSUPPORTED,
		                 "input '%s' is a map; only tensors are supported", nm);
	case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
		return burn_fail(c, BURN_ERR_UNSUPPORTED,
		                 "input '%s' is a sparse tensor; only dense tensors are supported", nm);
	default:
		return burn_fail(c, BURN_ERR_INVALID, "input '%s' has an unknown type", nm);
	}
	tt = tp->tensor_type;
	dt = tt->has_elem_type ? tt->elem_type : DT_UNDEF;
	if (dt == DT_UNDEF && root)
		return burn_fail(c, BURN_ERR_INVALID, "input '%s' has no element type", nm);
	if (dt != DT_UNDEF && dtype_bits(dt) <= 0)
		return burn_fail(c, BURN_ERR_UNSUPPORTED,
		                 "input '%s': data type %d is not supported", nm, dt);
	val = GV(g, v);
	val->dtype = dt;
	if (!tt->shape)
		return BURN_OK;          /* rank unknown */
	if (tt->shape->n_dim > BURN_MAX_RANK)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "input '%s' has rank %zu (max %d)",
		                 nm, tt->shape->n_dim, BURN_MAX_RANK);
	val->rank = (int)tt->shape->n_dim;
	for (k = 0; k < val->rank; k++) {
		const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k];
		val->dim[k] = -1;
		val->sym[k] = NULL;
		if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
			if (d->dim_value < 0)
				return burn_fail(c, BURN_ERR_INVALID, "input '%s' has negative dim %lld",
				                 nm, (long long)d->dim_value);
			val->dim[k] = d->dim_value;
		} else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
		           d->dim_param && *d->dim_param)
			val->sym[k] = arena_strdup(&g->arena, d->dim_param);
		else    /* neither: an unnamed symbol, unique in the model */
			val->sym[k] = arena_printf(&g->arena, "unk_%d", L->nunk++);
		if (val->dim[k] < 0 && !val->sym[k])
			return nomem(c);
	}
	return BURN_OK;
}

/*
 * The type a graph output declares, into d (for graph_check_outputs):
 * DT_UNDEF, rank -1 and dim -1 where it says nothing; a symbolic dim keeps
 * its name for the message.  Only tensor types say something.
 */
static int
output_decl(Graph *g, const Onnx__ValueInfoProto *vi, Value *d)
{
	const Onnx__TypeProto *tp = vi->type;
	const Onnx__TypeProto__Tensor *tt;

	memset(d, 0, sizeof *d);
	d->name = "";
	d->rank = -1;
	if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE)
		d->decl = VD_SEQ;
	if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE)
		d->decl = tp->optional_type && tp->optional_type->elem_type &&
		          tp->optional_type->elem_type->value_case ==
		          ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ? VD_OPT_SEQ : VD_OPT;
	if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
	    !(tt = tp->tensor_type))
		return BURN_OK;
	if (tt->has_elem_type)
		d->dtype = tt->elem_type;
	if (!tt->shape || tt->shape->n_dim > BURN_MAX_RANK)
		return BURN_OK;
	d->rank = (int)tt->shape->n_dim;
	for (int k = 0; k < d->rank; k++) {
		const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[k];
		d->dim[k] = -1;
		if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		    dm->dim_value >= 0)
			d->dim[k] = dm->dim_value;
		else if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
		         dm->dim_param && *dm->dim_param &&
		         !(d->sym[k] = arena_strdup(&g->arena, dm->dim_param)))
			return BURN_ERR_NOMEM;
	}
	return BURN_OK;
}

/* An attribute without a type field (very old writers): guess from what is set. */
static int
guess_attr_type(const Onnx__AttributeProto *ap)
{
	if (ap->has_f) return AT_FLOAT;
	if (ap->has_i) return AT_INT;
	if (ap->has_s) return AT_STRING;
	if (ap->t) return AT_TENSOR;
	if (ap->g) return AT_GRAPH;
	if (ap->n_floats) return AT_FLOATS;
	if (ap->n_ints) return AT_INTS;
	if (ap->n_strings) return AT_STRINGS;
	if (ap->n_tensors) return AT_TENSORS;
	if (ap->n_graphs) return AT_GRAPHS;
	return AT_UNDEF;
}

static char *
bytes_dup(Arena *a, const ProtobufCBinaryData *b)
{
	return arena_strndup(a, b->data ? (const char *)b->data : "", b->len);
}

/* Build subgraph gp as an attribute payload of s->g's node; *slot holds it
 * from creation on, so graph_destroy of the root frees it on any path. */
static int
sub_graph(Loader *L, Scope *s, const Onnx__GraphProto *gp, const char *aname,
          Graph **slot)
{
	Ctx *c = L->c;
	const char *onode = c->node, *oop = c->op;
	int rc;

	if (L->depth + 1 > (c->limits.max_depth > 0 ? c->limits.max_depth : 32))
		return burn_fail(c, BURN_ERR_LIMIT, "subgraphs nested deeper than --max-depth (%d)",
		                 c->limits.max_depth);
	if (!(*slot = graph_create_sub(s->g, gp->name && *gp->name ? gp->name : aname)))
		return nomem(c);
	(*slot)->opset = L->opset;
	L->depth++;
	rc = build_graph(L, s, gp, *slot);
	L->depth--;
	if (!rc) {
		c->node = onode;
		c->op = oop;
	}
	return rc;
}

/* Convert attribute ap of node (index) of s->g. */
static int
convert_attr(Loader *L, Scope *s, int node, const Onnx__AttributeProto *ap)
{
	Ctx *c = L->c;
	Graph *g = s->g;
	Arena *ar = &g->arena;
	const char *an = S(ap->name);
	Attr *a;
	size_t n = 0, k;
	int type;

	if (!*an)
		return burn_fail(c, BURN_ERR_INVALID, "attribute without a name");
	if (ap->ref_attr_name && *ap->ref_attr_name)
		return burn_fail(c, BURN_ERR_UNSUPPORTED,
		                 "attribute '%s' refers to function attribute '%s'",
		                 an, ap->ref_attr_name);
	if (node_attr(&g->node[node], an))
		return burn_fail(c, BURN_ERR_INVALID, "duplicate attribute '%s'", an);
	type = ap->has_type ? (int)ap->type : guess_attr_type(ap);
	switch (type) {
	case AT_FLOATS: n = ap->n_floats; break;
	case AT_INTS: n = ap->n_ints; break;
	case AT_STRINGS: n = ap->n_strings; break;
	case AT_TENSORS: n = ap->n_tensors; break;
	case AT_GRAPHS: n = ap->n_graphs; break;
	case AT_TENSOR:
		if (!ap->t)
			return burn_fail(c, BURN_ERR_INVALID, "attribute '%s' has no tensor", an);
		break;
	case AT_GRAPH:
		if (!ap->g)
			return burn_fail(c, BURN_ERR_INVALID, "attribute '%s' has no graph", an);
		break;
	case AT_FLOAT: case AT_INT: case AT_STRING:
	case AT_TYPE_PROTO: case AT_TYPE_PROTOS:
		break;
	case AT_SPARSE_TENSOR: case AT_SPARSE_TENSORS:
		return burn_fail(c, BURN_ERR_UNSUPPORTED,
		                 "attribute '%s': sparse tensors are not supported", an);
	default:
		return burn_fail(c, BURN_ERR_INVALID, "attribute '%s' has unknown type %d",
		                 an, type);
	}
	if (n > INT_MAX / 16)
		return burn_fail(c, BURN_ERR_LIMIT, "attribute '%s' has %zu elements", an, n);
	/* Graph payloads are attached only once built far enough to destroy. */
	if (!(a = node_add_attr(g, node, an, type == AT_GRAPH || type == AT_GRAPHS
	                                     ? AT_UNDEF : type)))
		return nomem(c);
	switch (type) {
	case AT_FLOAT:
		a->f = ap->f;
		break;
	case AT_INT:
		a->i = ap->i;
		break;
	case AT_STRING:
		if (!(a->s = bytes_dup(ar, &ap->s)))
			return nomem(c);
		a->slen = (int64_t)ap->s.len;
		break;
	case AT_FLOATS:
		if (!(a->floats = arena_alloc(ar, sizeof *a->floats * (n ? n : 1))))
			return nomem(c);
		for (k = 0; k < n; k++)
			a->floats[k] = ap->floats[k];
		a->n = (int)n;
		break;
	case AT_INTS:
		if (!(a->ints = arena_alloc(ar, sizeof *a->ints * (n ? n : 1))))
			return nomem(c);
		if (n)
			memcpy(a->ints, ap->ints, sizeof *a->ints * n);
		a->n = (int)n;
		break;
	case AT_STRINGS:
		if (!(a->strs = arena_alloc(ar, sizeof *a->strs * (n ? n : 1))))
			return nomem(c);
		for (k = 0; k < n; k++)
			if (!(a->strs[k] = bytes_dup(ar, &ap->strings[k])))
				return nomem(c);
		a->n = (int)n;
		break;
	case AT_TENSOR:
		if (!(a->t = arena_alloc(ar, sizeof *a->t)))
			return nomem(c);
		return decode_tensor(L, ap->t, ar, "attribute", a->t);
	case AT_TENSORS:
		if (!(a->ts = arena_alloc(ar, sizeof *a->ts * (n ? n : 1))))
			return nomem(c);
		for (k = 0; k < n; k++) {
			if (!(a->ts[k] = arena_alloc(ar, sizeof *a->ts[k])))
				return nomem(c);
			TRY(decode_tensor(L, ap->tensors[k], ar, "attribute", a->ts[k]));
		}
		a->n = (int)n;
		break;
	case AT_GRAPH: {
		Graph *sub = NULL;
		int rc = sub_graph(L, s, ap->g, an, &sub);
		a->type = AT_GRAPH;
		a->g = sub;
		return rc;
	}
	case AT_GRAPHS:
		if (!(a->gs = arena_alloc(ar, sizeof *a->gs * (n ? n : 1))))
			return nomem(c);
		a->type = AT_GRAPHS;
		for (k = 0; k < n; k++) {
			Graph *sub = NULL;
			int rc = sub_graph(L, s, ap->graphs[k], an, &sub);
			a->gs[k] = sub;
			a->n = (int)k + (sub != NULL);
			TRY(rc);
		}
		break;
	default:        /* type protos: kept as a typed attribute, no payload */
		break;
	}
	return BURN_OK;
}

/* What pass 2 learns about a node for pass 3. */
typedef struct NodeInfo {
	const char *name;  /* arena copy, invented if empty */
	int op, nin, nout;
} NodeInfo;

/* Number of entries of names[0..n) after dropping trailing "" (omitted
 * optional inputs/outputs). */
static int
trim(char **names, size_t n)
{
	while (n > 0 && !*S(names[n - 1]))
		n--;
	return (int)n;
}

static int
arity(Ctx *c, const char *what, int lo, int hi, int got)
{
	if (lo == hi)
		return burn_fail(c, BURN_ERR_INVALID, "wrong number of %s: %d, expected %d",
		                 what, got, lo);
	return burn_fail(c, BURN_ERR_INVALID, "wrong number of %s: %d, expected %d to %d",
	                 what, got, lo, hi);
}

/* Pass 2 for node k: check it, give its outputs values. */
static int
declare_node(Loader *L, Scope *s, const Onnx__NodeProto *np, size_t k,
             NodeInfo *ni)
{
	Ctx *c = L->c;
	Graph *g = s->g;
	const char *opname = S(np->op_type), *dom = S(np->domain), *old;
	const OpInfo *oi;
	int j, v, min_in, max_in;

	if (np->name && *np->name)
		ni->name = arena_strdup(&g->arena, np->name);
	else
		ni->name = arena_printf(&g->arena, "%s_%zu", *opname ? opname : "node", k);
	if (!ni->name)
		return nomem(c);
	c->node = ni->name;
	c->op = opname;
	if (!strcmp(dom, "ai.onnx"))
		dom = "";
	if (!*opname)
		return burn_fail(c, BURN_ERR_INVALID, "node without an op type");
	ni->op = op_lookup(opname);
	if (*dom && (ni->op <= OP_NONE_ || strcmp(op_table[ni->op].domain, dom)))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "unsupported domain '%s'", dom);
	if (ni->op <= OP_NONE_ || ni->op >= OP_COUNT_)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "unknown op '%s'", opname);
	oi = &op_table[ni->op];
	if (strcmp(oi->domain, dom))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "op '%s' is in domain '%s', "
		                 "not the default one", opname, oi->domain);
	if (np->n_input > INT_MAX / 16 || np->n_output > INT_MAX / 16)
		return burn_fail(c, BURN_ERR_LIMIT, "too many inputs or outputs");
	ni->nin = trim(np->input, np->n_input);
	ni->nout = trim(np->output, np->n_output);
	if ((old = op_old_unsupported(ni->op, L->opset)))
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "%s is not supported (the model "
		                 "imports opset %d)", old, L->opset);
	op_inputs(ni->op, L->opset, &min_in, &max_in);
	if (ni->nin < min_in || ni->nin > max_in)
		return arity(c, "inputs", min_in, max_in, ni->nin);
	if (ni->nout < oi->min_out || ni->nout > oi->max_out)
		return arity(c, "outputs", oi->min_out, oi->max_out, ni->nout);
	for (j = 0; j < ni->nout; j++) {
		const char *on = S(np->output[j]);
		if (!*on) {
			if (j < oi->min_out)
				return burn_fail(c, BURN_ERR_INVALID, "required output %d is empty", j);
			continue;
		}
		if (scope_find(s, on) >= 0)
			return burn_fail(c, BURN_ERR_INVALID,
			                 "duplicate output '%s': the name is already defined", on);
		TRY(new_value(c, s, on, &v));
	}
	return BURN_OK;
}

/*
 * Reshape-1 (before opset 5) takes the target shape as its ints attribute
 * `shape`; later opsets as a second input.  Make it a constant input (a
 * value outside the name table, so no model name can clash with it), so
 * that the passes see one form.
 */
static int
reshape1_shape(Loader *L, Scope *s, const Onnx__NodeProto *np, const char *node,
               int *out)
{
	Ctx *c = L->c;
	const Onnx__AttributeProto *ap = NULL;
	char *name;
	int64_t n;
	size_t k;

	for (k = 0; k < np->n_attribute; k++)
		if (!strcmp(S(np->attribute[k]->name), "shape"))
			ap = np->attribute[k];
	if (!ap)
		return burn_fail(c, BURN_ERR_INVALID, "Reshape before opset 5 needs the "
		                 "attribute 'shape' (the model imports opset %d)", L->opset);
	if ((ap->has_type ? (int)ap->type : guess_attr_type(ap)) != AT_INTS)
		return burn_fail(c, BURN_ERR_INVALID, "attribute 'shape' is %s, expected ints",
		                 attr_type_name(ap->has_type ? (int)ap->type : guess_attr_type(ap)));
	if (ap->n_ints > BURN_MAX_RANK)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "attribute 'shape' has %zu entries "
		                 "(max rank %d)", ap->n_ints, BURN_MAX_RANK);
	n = (int64_t)ap->n_ints;
	if (!(name = arena_printf(&s->g->arena, "%s:shape", node)))
		return nomem(c);
	if ((*out = graph_add_value(s->g, name)) < 0)
		return nomem(c);
	return graph_set_const(c, s->g, *out, DT_I64, 1, &n, ap->ints);
}

/* Pass 3 for node k: add it with resolved inputs, then its attributes. */
static int
define_node(Loader *L, Scope *s, const Onnx__NodeProto *np, const NodeInfo *ni,
            int *buf)
{
	Ctx *c = L->c;
	Graph *g = s->g;
	const OpInfo *oi = &op_table[ni->op];
	int nin = ni->nin, *in = buf, *out, j, idx, min_in, max_in;
	size_t k;

	c->node = ni->name;
	c->op = oi->name;
	op_inputs(ni->op, L->opset, &min_in, &max_in);
	if (ni->op == OP_Reshape && nin == 1)
		nin = 2;        /* Reshape-1: room for the shape as an input */
	out = buf + nin;
	for (j = 0; j < ni->nin; j++) {
		const char *iname = S(np->input[j]);
		if (!*iname) {
			if (j < min_in)
				return burn_fail(c, BURN_ERR_INVALID, "required input %d is empty", j);
			in[j] = -1;
			continue;
		}
		TRY(resolve(c, s, iname, &in[j]));
		if (in[j] < 0)
			return burn_fail(c, BURN_ERR_INVALID, "input '%s' is not defined", iname);
	}
	if (nin > ni->nin)
		TRY(reshape1_shape(L, s, np, ni->name, &in[1]));
	for (j = 0; j < ni->nout; j++)
		out[j] = *S(np->output[j]) ? scope_find(s, np->output[j]) : -1;
	if ((idx = graph_add_node(g, ni->op, ni->name, nin, in, ni->nout, out)) < 0)
		return nomem(c);
	for (k = 0; k < np->n_attribute; k++)
		TRY(convert_attr(L, s, idx, np->attribute[k]));
	return BURN_OK;
}

/* Convert GraphProto gp into g (empty, created by the caller), in the passes
 * described at the top of the file.  up is the enclosing scope or NULL. */
static int
build_graph(Loader *L, Scope *up, const Onnx__GraphProto *gp, Graph *g)
{
	Ctx *c = L->c;
	Scope s = { up, g, NULL, 0, 0 };
	NodeInfo *info = NULL;
	int *buf = NULL, rc = BURN_OK, v, root = up == NULL;
	size_t k, maxio = 1;

	c->node = c->op = NULL;
	if (c->limits.max_nodes > 0 && gp->n_node > (size_t)c->limits.max_nodes)
		return burn_fail(c, BURN_ERR_LIMIT, "graph '%s' has %zu nodes, over --max-nodes (%d)",
		                 S(gp->name), gp->n_node, c->limits.max_nodes);
	if (gp->n_sparse_initializer)
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "sparse initializers are not supported");

	/* 1. constants, then the inputs that are not constants */
	for (k = 0; k < gp->n_initializer && !rc; k++) {
		const Onnx__TensorProto *tp = gp->initializer[k];
		const char *nm = S(tp->name);
		Arena scratch;
		Tensor t;
		if (!*nm) {
			rc = burn_fail(c, BURN_ERR_INVALID, "initializer %zu has no name", k);
			break;
		}
		if (scope_find(&s, nm) >= 0) {
			rc = burn_fail(c, BURN_ERR_INVALID, "duplicate initializer '%s'", nm);
			break;
		}
		if ((rc = new_value(c, &s, nm, &v)))
			break;
		arena_init(&scratch);
		if (!(rc = decode_tensor(L, tp, &scratch, "initializer", &t)))
			rc = graph_set_const(c, g, v, t.dtype, t.rank, t.dim, t.data);
		arena_free(&scratch);
	}
	for (k = 0; k < gp->n_input && !rc; k++) {
		const char *nm = S(gp->input[k]->name);
		int x;
		if (!*nm) {
			rc = burn_fail(c, BURN_ERR_INVALID, "graph input %zu has no name", k);
			break;
		}
		if ((x = scope_find(&s, nm)) >= 0) {
			if (GV(g, x)->kind != VK_CONST)
				rc = burn_fail(c, BURN_ERR_INVALID, "duplicate graph input '%s'", nm);
			continue;   /* an initializer: a constant, not an input */
		}
		if ((rc = new_value(c, &s, nm, &v)) ||
		    (rc = input_type(L, g, v, gp->input[k], root)))
			break;
		graph_add_input(g, v);
		if (g->nin == 0 || g->in[g->nin - 1] != v) {
			rc = nomem(c);
			break;
		}
		GV(g, v)->kind = VK_INPUT;
	}
	if (rc)
		goto done;

	/* 2. check nodes, declare their outputs */
	if (!(info = calloc(gp->n_node + 1, sizeof *info))) {
		rc = nomem(c);
		goto done;
	}
	for (k = 0; k < gp->n_node && !rc; k++) {
		rc = declare_node(L, &s, gp->node[k], k, &info[k]);
		if (!rc && (size_t)(info[k].nin + info[k].nout) > maxio)
			maxio = (size_t)(info[k].nin + info[k].nout);
	}
	if (rc)
		goto done;

	/* 3. nodes with inputs and attributes */
	if (!(buf = malloc(sizeof *buf * (maxio + 1)))) {   /* + 1: reshape1_shape */
		rc = nomem(c);
		goto done;
	}
	for (k = 0; k < gp->n_node && !rc; k++)
		rc = define_node(L, &s, gp->node[k], &info[k], buf);
	c->node = c->op = NULL;
	if (rc)
		goto done;

	/* 4. outputs, order */
	for (k = 0; k < gp->n_output && !rc; k++) {
		const char *nm = S(gp->output[k]->name);
		if (!*nm) {
			rc = burn_fail(c, BURN_ERR_INVALID, "graph output %zu has no name", k);
			break;
		}
		if ((rc = resolve(c, &s, nm, &v)))
			break;
		if (v < 0) {
			rc = burn_fail(c, BURN_ERR_INVALID, "graph output '%s' is not defined", nm);
			break;
		}
		graph_add_output(g, v);
		if (g->nout == 0 || g->out[g->nout - 1] != v) {
			rc = nomem(c);
			break;
		}
		GV(g, v)->is_output = 1;
	}
	if (!rc && root && g->nout == 0)
		rc = burn_fail(c, BURN_ERR_INVALID, "the graph has no outputs");
	if (!rc && root) {
		if (!(g->out_decl = arena_alloc(&g->arena, sizeof *g->out_decl * (size_t)g->nout)))
			rc = nomem(c);
		for (k = 0; k < (size_t)g->nout && !rc; k++)
			if (output_decl(g, gp->output[k], &g->out_decl[k]))
				rc = nomem(c);
	}
	if (!rc)
		rc = graph_toposort(c, g);
done:
	free(info);
	free(buf);
	free(s.slot);
	return rc;
}

/* The ai.onnx opset of m, checked; the graph and all subgraphs use it. */
static int
model_opset(Ctx *c, const Onnx__ModelProto *m, int *out)
{
	int found = 0;
	size_t known = 0;
	int64_t v = 0;
	size_t k;

	for (k = 0; k < m->n_opset_import; k++) {
		const char *d = S(m->opset_import[k]->domain);
		if (*d && strcmp(d, "ai.onnx") != 0) {
			known += op_domain_known(d);
			continue;
		}
		if (!m->opset_import[k]->has_version)
			return burn_fail(c, BURN_ERR_INVALID, "opset import without a version");
		v = m->opset_import[k]->version;
		found = 1;
	}
	if (!found && known == m->n_opset_import && known) {
		/* only domains of ops burncc has (ai.onnx.ml, the training
		 * ops): the ops it adds for them take today's semantics */
		*out = MAX_OPSET;
		return BURN_OK;
	}
	if (!found && m->n_opset_import)
		return burn_fail(c, BURN_ERR_UNSUPPORTED,
		                 "the model imports no ai.onnx opset, only domain '%s'",
		                 S(m->opset_import[0]->domain));
	if (!found)
		return burn_fail(c, BURN_ERR_INVALID, "the model imports no ai.onnx opset");
	if (v < MIN_OPSET || v > MAX_OPSET)
		return burn_fail(c, BURN_ERR_UNSUPPORTED,
		                 "unsupported opset %lld (supported: %d to %d)",
		                 (long long)v, MIN_OPSET, MAX_OPSET);
	*out = (int)v;
	return BURN_OK;
}

/* Decode and convert a model held in memory. */
static int
load_model(Loader *L, const uint8_t *data, size_t len, Graph **out)
{
	Ctx *c = L->c;
	Onnx__ModelProto *m;
	Graph *g = NULL;
	int rc;

	if (len == 0)
		return burn_fail(c, BURN_ERR_PARSE, "not an ONNX model: empty file");
	TRY(check_nesting(c, data, len, &onnx__model_proto__descriptor));
	if (!(m = onnx__model_proto__unpack(NULL, len, data)))
		return burn_fail(c, BURN_ERR_PARSE, "not an ONNX model or truncated protobuf");
	if (!m->graph && !m->has_ir_version && !m->n_opset_import)
		rc = burn_fail(c, BURN_ERR_PARSE, "not an ONNX model or truncated protobuf");
	else if (!(rc = model_opset(c, m, &L->opset))) {
		if (!m->graph)
			rc = burn_fail(c, BURN_ERR_INVALID, "the model has no graph");
		else if (!(g = graph_create(m->graph->name && *m->graph->name
		                            ? m->graph->name : "main")))
			rc = nomem(c);
		else {
			g->opset = L->opset;
			rc = build_graph(L, NULL, m->graph, g);
		}
	}
	onnx__model_proto__free_unpacked(m, NULL);
	if (rc) {
		graph_destroy(g);
		g = NULL;
	}
	*out = g;
	return rc;
}

int
onnx_load_bytes(Ctx *c, const uint8_t *data, size_t len, const char *dir,
                Graph **out)
{
	Loader L = { c, dir, 0, 0, 0 };
	const char *onode = c->node, *oop = c->op;
	int rc;

	*out = NULL;
	rc = load_model(&L, data, len, out);
	c->node = onode;
	c->op = oop;
	return rc;
}

int
onnx_load_file(Ctx *c, const char *path, Graph **out)
{
	const char *ofile = c->file;
	uint8_t *data;
	size_t len;
	char *dir;
	int rc;

	*out = NULL;
	if (!c->file)
		c->file = path;
	if (!(rc = read_file(c, path, &data, &len))) {
		if (!(dir = dir_of(path)))
			rc = nomem(c);
		else
			rc = onnx_load_bytes(c, data, len, dir, out);
		free(dir);
		free(data);
	}
	c->file = ofile;
	return rc;
}

int
onnx_load_tensor_file(Ctx *c, const char *path, Arena *a, Tensor *t,
                      const char **name)
{
	const char *ofile = c->file;
	Onnx__TensorProto *tp = NULL;
	uint8_t *data = NULL;
	char *dir = NULL;
	size_t len;
	Loader L = { c, NULL, 0, 0, 0 };
	int rc;

	memset(t, 0, sizeof *t);
	if (name)
		*name = NULL;
	c->file = path;   /* a broken tensor file is named, not the model */
	if ((rc = read_file(c, path, &data, &len)))
		goto done;
	if (!(tp = onnx__tensor_proto__unpack(NULL, len, data))) {
		rc = burn_fail(c, BURN_ERR_PARSE, "not a TensorProto or truncated protobuf");
		goto done;
	}
	if (!(L.dir = dir = dir_of(path))) {
		rc = nomem(c);
		goto done;
	}
	if ((rc = decode_tensor(&L, tp, a, "tensor", t)))
		goto done;
	if (name && !(*name = arena_strdup(a, S(tp->name))))
		rc = nomem(c);
done:
	if (tp)
		onnx__tensor_proto__free_unpacked(tp, NULL);
	free(data);
	free(dir);
	c->file = ofile;
	return rc;
}

/*
 * The data file of a graph input or output declared `decl` (ValueDecl):
 * a TensorProto, or a SequenceProto (VD_SEQ), or an OptionalProto
 * (VD_OPT, VD_OPT_SEQ).  *kind gets VD_TENSOR (one tensor), VD_SEQ (*n
 * tensors, the elements) or -1 (an empty optional, none); *ts is
 * allocated in a.
 */
int
onnx_load_value_file(Ctx *c, const char *path, Arena *a, int decl, int *kind,
                     Tensor **ts, int *n)
{
	const char *ofile = c->file;
	Onnx__SequenceProto *sp = NULL;
	Onnx__OptionalProto *op = NULL;
	const Onnx__SequenceProto *seq = NULL;
	const Onnx__TensorProto *one = NULL;
	uint8_t *data = NULL;
	char *dir = NULL;
	size_t len;
	Loader L = { c, NULL, 0, 0, 0 };
	int rc;

	*kind = -1;
	*n = 0;
	*ts = NULL;
	if (decl == VD_TENSOR) {
		if (!(*ts = arena_alloc(a, sizeof **ts)))
			return nomem(c);
		*kind = VD_TENSOR;
		*n = 1;
		return onnx_load_tensor_file(c, path, a, *ts, NULL);
	}
	c->file = path;
	if ((rc = read_file(c, path, &data, &len)))
		goto done;
	if (decl == VD_SEQ) {
		if (!(seq = sp = onnx__sequence_proto__unpack(NULL, len, data))) {
			rc = burn_fail(c, BURN_ERR_PARSE, "not a SequenceProto or truncated protobuf");
			goto done;
		}
	} else {
		if (!(op = onnx__optional_proto__unpack(NULL, len, data))) {
			rc = burn_fail(c, BURN_ERR_PARSE, "not an OptionalProto or truncated protobuf");
			goto done;
		}
		seq = op->sequence_value;
		one = op->tensor_value;
	}
	if (seq && seq->n_tensor_values > 65536) {
		rc = burn_fail(c, BURN_ERR_LIMIT, "a sequence of %zu tensors (at most 65536)",
		               seq->n_tensor_values);
		goto done;
	}
	if (!(L.dir = dir = dir_of(path))) {
		rc = nomem(c);
		goto done;
	}
	if (seq) {
		*kind = VD_SEQ;
		*n = (int)seq->n_tensor_values;
		if (!(*ts = arena_alloc(a, sizeof **ts * (size_t)(*n + 1)))) {
			rc = nomem(c);
			goto done;
		}
		for (int k = 0; k < *n; k++)
			if ((rc = decode_tensor(&L, seq->tensor_values[k], a, "sequence element",
			                        &(*ts)[k])))
				goto done;
	} else if (one) {
		*kind = VD_TENSOR;
		*n = 1;
		if (!(*ts = arena_alloc(a, sizeof **ts))) {
			rc = nomem(c);
			goto done;
		}
		rc = decode_tensor(&L, one, a, "tensor", *ts);
	}
done:
	if (sp)
		onnx__sequence_proto__free_unpacked(sp, NULL);
	if (op)
		onnx__optional_proto__free_unpacked(op, NULL);
	free(data);
	free(dir);
	c->file = ofile;
	return rc;
}

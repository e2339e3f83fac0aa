/*
 * ctx.c - libburn's contexts, tensor handles, creation ops, reading and
 * printing (include/burn.h; the flow is in internal.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../passes/passes.h"
#include "internal.h"

/* ---- statuses and messages ------------------------------------------ */

int
api_begin(burn_ctx *ctx)
{
	ctx->c.code = BURN_OK;
	ctx->c.msg[0] = 0;
	ctx->c.node = ctx->c.op = NULL;
	return BURN_OK;
}

/* The compiler's codes are burn.h's statuses, number for number. */
burn_status
api_status(int code)
{
	return (burn_status)code;
}

const char *
burn_message(const burn_ctx *ctx)
{
	return ctx ? ctx->c.msg : "";
}

/* ---- contexts -------------------------------------------------------- */

burn_status
burn_ctx_create(const burn_options *o, burn_ctx **out)
{
	burn_ctx *ctx;

	if (!out)
		return BURN_STATUS_INVALID;
	*out = NULL;
	if (!(ctx = calloc(1, sizeof *ctx)))
		return BURN_STATUS_NOMEM;
	if (o)
		ctx->opt = *o;
	if (ctx->opt.max_pending <= 0)
		ctx->opt.max_pending = 4096;
	if (ctx->opt.memory_cap < 0 || ctx->opt.threads < 0 || ctx->opt.cache_bytes < 0 ||
	    (ctx->opt.device != BURN_DEVICE_CPU && ctx->opt.device != BURN_DEVICE_CUDA)) {
		free(ctx);
		return BURN_STATUS_INVALID;
	}
	/* the cache directory is kept as a copy: the caller's string need
	 * not outlive the call */
	if (ctx->opt.cache_dir && !(ctx->cache_dir = strdup(ctx->opt.cache_dir))) {
		free(ctx);
		return BURN_STATUS_NOMEM;
	}
	ctx->opt.cache_dir = ctx->cache_dir;
	burn_ctx_init(&ctx->c, NULL);
	pool_init(&ctx->pool, ctx->opt.memory_cap);
	atomic_init(&ctx->interrupt, 0);
	if (!(ctx->pg = graph_create("pending"))) {
		free(ctx->cache_dir);
		free(ctx);
		return BURN_STATUS_NOMEM;
	}
	ctx->pg->opset = API_OPSET;
	ctx->epoch = 1;
	*out = ctx;
	return BURN_STATUS_OK;
}

void
burn_ctx_destroy(burn_ctx *ctx)
{
	burn_tensor *t, *next;

	if (!ctx)
		return;
	api_reset_pending(ctx);
	graph_destroy(ctx->pg);
	for (t = ctx->live; t; t = next) {
		next = t->next;
		api_buf_unref(ctx, t->buf);
		free(t);
	}
	for (t = ctx->spare; t; t = next) {
		next = t->next;
		free(t);
	}
	for (int i = 0; i < ctx->captab; i++)
		api_prog_free(ctx->tab[i]);
	free(ctx->tab);
	free(ctx->pv);
	free(ctx->sig);
	free(ctx->mark);
	free(ctx->id);
	free(ctx->leaf);
	free(ctx->outv);
	free(ctx->nodes);
	free(ctx->scratch);
	pool_deinit(&ctx->pool);
	free(ctx->cache_dir);
	free(ctx);
}

void
burn_get_stats(const burn_ctx *ctx, burn_stats *s)
{
	if (!s)
		return;
	if (!ctx) {
		memset(s, 0, sizeof *s);
		return;
	}
	*s = ctx->st;
	s->bytes_live = ctx->pool.live;
	s->bytes_peak = ctx->pool.peak;
}

void
burn_interrupt(burn_ctx *ctx)
{
	if (ctx)
		atomic_store(&ctx->interrupt, 1);
}

void
burn_interrupt_clear(burn_ctx *ctx)
{
	if (ctx)
		atomic_store(&ctx->interrupt, 0);
}

int
api_pv_fit(burn_ctx *ctx)
{
	if (ctx->pg->nval <= ctx->cappv)
		return BURN_OK;
	int cap = ctx->cappv ? ctx->cappv : 64;
	while (cap < ctx->pg->nval)
		cap *= 2;
	PVal *pv = realloc(ctx->pv, sizeof *pv * (size_t)cap);
	if (!pv)
		return burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
	memset(pv + ctx->cappv, 0, sizeof *pv * (size_t)(cap - ctx->cappv));
	ctx->pv = pv;
	ctx->cappv = cap;
	return BURN_OK;
}

/* ---- buffers and tensors --------------------------------------------- */

int
api_buf_new(burn_ctx *ctx, int64_t bytes, Buf **out)
{
	int rc = pool_get(&ctx->pool, bytes, out);

	if (rc == POOL_LIMIT)
		return burn_fail(&ctx->c, BURN_ERR_LIMIT, "memory cap: %lld bytes more "
		                 "would exceed the cap of %lld bytes (%lld live)",
		                 (long long)pool_class_bytes(bytes),
		                 (long long)ctx->pool.cap, (long long)ctx->pool.live);
	if (rc)
		return burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory (%lld bytes)",
		                 (long long)bytes);
	return BURN_OK;
}

void
api_buf_unref(burn_ctx *ctx, Buf *b)
{
	if (b && --b->refs == 0)
		pool_put(&ctx->pool, b);
}

int
api_tensor_new(burn_ctx *ctx, int dtype, int rank, const int64_t *dims,
               burn_tensor **out)
{
	burn_tensor *t;
	int64_t n = 1;

	*out = NULL;
	if (!dtype_supported(dtype) || dtype_cast_only(dtype) || dtype == DT_STRING)
		return burn_fail(&ctx->c, BURN_ERR_UNSUPPORTED, "dtype %d is not one "
		                 "libburn computes with", dtype);
	if (rank < 0 || rank > BURN_MAX_RANK || (rank > 0 && !dims))
		return burn_fail(&ctx->c, BURN_ERR_INVALID, "rank %d (0 to %d, with dims)",
		                 rank, BURN_MAX_RANK);
	for (int i = 0; i < rank; i++)
		if (dims[i] < 0 || burn_mul_ovf(n, dims[i], &n))
			return burn_fail(&ctx->c, BURN_ERR_INVALID, "dim %d is %lld", i,
			                 (long long)dims[i]);
	if ((t = ctx->spare) != NULL)
		ctx->spare = t->next;
	else if (!(t = malloc(sizeof *t)))
		return burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory");
	t->ctx = ctx;
	t->refs = 1;
	t->dtype = dtype;
	t->rank = rank;
	for (int i = 0; i < rank; i++)
		t->dim[i] = dims[i];
	t->numel = n;
	t->buf = NULL;
	t->frozen = 0;
	t->val = -1;
	t->epoch = 0;
	t->prev = NULL;
	t->next = ctx->live;
	if (ctx->live)
		ctx->live->prev = t;
	ctx->live = t;
	*out = t;
	return BURN_OK;
}

int
api_check_tensor(burn_ctx *ctx, const burn_tensor *t, const char *what)
{
	if (!t)
		return burn_fail(&ctx->c, BURN_ERR_INVALID, "%s is NULL", what);
	if (t->ctx != ctx)
		return burn_fail(&ctx->c, BURN_ERR_INVALID, "%s belongs to another "
		                 "context", what);
	if (t->refs <= 0)
		return burn_fail(&ctx->c, BURN_ERR_INVALID, "%s was released", what);
	return BURN_OK;
}

burn_dtype burn_tensor_dtype(const burn_tensor *t) { return t ? (burn_dtype)t->dtype : 0; }
int burn_tensor_rank(const burn_tensor *t) { return t ? t->rank : -1; }
const int64_t *burn_tensor_dims(const burn_tensor *t) { return t ? t->dim : NULL; }
int64_t burn_tensor_numel(const burn_tensor *t) { return t ? t->numel : -1; }
burn_device burn_tensor_device(const burn_tensor *t) { return t->ctx->opt.device; }

int
burn_tensor_symbolic(const burn_tensor *t)
{
	const burn_ctx *ctx = t ? t->ctx : NULL;

	return ctx && !t->buf && t->epoch == ctx->epoch && t->val >= 0 &&
	       ctx->pv[t->val].sym;
}

burn_tensor *
burn_retain(burn_tensor *t)
{
	if (t)
		t->refs++;
	return t;
}

void
burn_release(burn_tensor *t)
{
	burn_ctx *ctx;

	if (!t || --t->refs > 0)
		return;
	ctx = t->ctx;
	/* a pending value stays in pg for the nodes that read it; nothing
	 * realises it for this handle any more */
	if (t->epoch == ctx->epoch && t->val >= 0 && ctx->pv[t->val].t == t)
		ctx->pv[t->val].t = NULL;
	api_buf_unref(ctx, t->buf);
	t->buf = NULL;
	if (t->prev)
		t->prev->next = t->next;
	else
		ctx->live = t->next;
	if (t->next)
		t->next->prev = t->prev;
	t->next = ctx->spare;
	ctx->spare = t;
}

/* ---- creation ---------------------------------------------------------- */

/* A realised tensor of dt and dims with uninitialised elements. */
static int
new_realised(burn_ctx *ctx, int dt, int rank, const int64_t *dims, burn_tensor **out)
{
	burn_tensor *t;
	int64_t nb;

	TRY(api_tensor_new(ctx, dt, rank, dims, &t));
	if (burn_mul_ovf(t->numel, dtype_size(dt), &nb) ||
	    nb > ctx->c.limits.max_tensor_bytes) {
		burn_release(t);
		return burn_fail(&ctx->c, BURN_ERR_LIMIT, "a tensor of %lld elements "
		                 "is too large", (long long)t->numel);
	}
	int rc = api_buf_new(ctx, nb, &t->buf);
	if (rc) {
		burn_release(t);
		return rc;
	}
	*out = t;
	return BURN_OK;
}

/* Store x as element i of data in dtype dt (round to nearest for the
 * integer types, saturating; f16 and bf16 rounded to nearest even). */
static void
put_elem(void *data, int dt, int64_t i, double x)
{
	switch (dt) {
	case DT_F32: ((float *)data)[i] = (float)x; break;
	case DT_F64: ((double *)data)[i] = x; break;
	case DT_BOOL: ((uint8_t *)data)[i] = x != 0; break;
	case DT_F16: case DT_BF16: {
		float f = (float)x;
		uint32_t u;
		memcpy(&u, &f, 4);
		if (dt == DT_BF16) {
			uint32_t r = (u >> 16) & 1;
			((uint16_t *)data)[i] = (uint16_t)(isnan(f) ? 0x7fc0 : (u + 0x7fff + r) >> 16);
		} else {
			/* f32 -> f16, round to nearest even */
			uint32_t s = (u >> 16) & 0x8000, e = (u >> 23) & 0xff, m = u & 0x7fffff;
			uint16_t h;
			if (e == 0xff)
				h = (uint16_t)(s | 0x7c00 | (m ? 0x200 : 0));
			else if ((int)e - 127 + 15 >= 31)
				h = (uint16_t)(s | 0x7c00);
			else if ((int)e - 127 + 15 <= 0)
				/* a subnormal half: units of 2^-24, nearest even */
				h = (uint16_t)(s | (uint16_t)lrintf(fabsf(f) * 16777216.0f));
			else {
				uint32_t he = (uint32_t)((int)e - 127 + 15), hm = m >> 13, rem = m & 0x1fff;
				uint32_t v = (he << 10) | hm;
				if (rem > 0x1000 || (rem == 0x1000 && (hm & 1)))
					v++;
				h = (uint16_t)(s | v);
			}
			((uint16_t *)data)[i] = h;
		}
		break;
	}
	default: {
		double r = nearbyint(x);
		switch (dt) {
#define SAT(T, lo, hi) ((T *)data)[i] = (T)(r != r ? 0 : r < (lo) ? (lo) : r > (hi) ? (hi) : r)
		case DT_I8: SAT(int8_t, -128.0, 127.0); break;
		case DT_U8: SAT(uint8_t, 0.0, 255.0); break;
		case DT_I16: SAT(int16_t, -32768.0, 32767.0); break;
		case DT_U16: SAT(uint16_t, 0.0, 65535.0); break;
		case DT_I32: SAT(int32_t, -2147483648.0, 2147483647.0); break;
		case DT_U32: SAT(uint32_t, 0.0, 4294967295.0); break;
		case DT_I64: SAT(int64_t, -9223372036854775808.0, 9223372036854774784.0); break;
		case DT_U64: SAT(uint64_t, 0.0, 18446744073709549568.0); break;
#undef SAT
		}
	}
	}
}

void api_put_elem(void *data, int dt, int64_t i, double x) { put_elem(data, dt, i, x); }

static int
check_dtype(burn_ctx *ctx, int dt)
{
	if (!dtype_supported(dt) || dtype_cast_only(dt) || dt == DT_STRING ||
	    dt == DT_C64 || dt == DT_C128)
		return burn_fail(&ctx->c, BURN_ERR_INVALID, "bad dtype %d", dt);
	return BURN_OK;
}

#define BEGIN(ctx, out) do { \
		if (!(ctx)) return BURN_STATUS_INVALID; \
		api_begin(ctx); \
		if (!(out)) return api_status(burn_fail(&(ctx)->c, BURN_ERR_INVALID, "out is NULL")); \
		*(out) = NULL; \
	} while (0)

burn_status
burn_from_buffer(burn_ctx *ctx, burn_dtype dt, int rank, const int64_t *dims,
                 const void *data, burn_tensor **out)
{
	burn_tensor *t;

	BEGIN(ctx, out);
	if (check_dtype(ctx, dt) || (!data && rank >= 0 &&
	    burn_fail(&ctx->c, BURN_ERR_INVALID, "data is NULL")))
		return api_status(ctx->c.code);
	if (new_realised(ctx, dt, rank, dims, &t))
		return api_status(ctx->c.code);
	if (t->buf->bytes)
		memcpy(t->buf->data, data, (size_t)t->buf->bytes);
	*out = t;
	return BURN_STATUS_OK;
}

burn_status
burn_full(burn_ctx *ctx, burn_dtype dt, int rank, const int64_t *dims,
          double value, burn_tensor **out)
{
	burn_tensor *t;

	BEGIN(ctx, out);
	if (check_dtype(ctx, dt) || new_realised(ctx, dt, rank, dims, &t))
		return api_status(ctx->c.code);
	if (value == 0)
		memset(t->buf->data, 0, (size_t)t->buf->bytes);
	else {
		int sz = dtype_size(dt);
		put_elem(t->buf->data, dt, 0, value);
		for (int64_t i = 1; i < t->numel; i++)
			memcpy((char *)t->buf->data + i * sz, t->buf->data, (size_t)sz);
	}
	*out = t;
	return BURN_STATUS_OK;
}

burn_status
burn_zeros(burn_ctx *ctx, burn_dtype dt, int rank, const int64_t *dims, burn_tensor **out)
{
	return burn_full(ctx, dt, rank, dims, 0, out);
}

burn_status
burn_ones(burn_ctx *ctx, burn_dtype dt, int rank, const int64_t *dims, burn_tensor **out)
{
	return burn_full(ctx, dt, rank, dims, 1, out);
}

burn_status
burn_arange(burn_ctx *ctx, burn_dtype dt, double start, double stop, double step,
            burn_tensor **out)
{
	burn_tensor *t;
	double n;
	int64_t dim;

	BEGIN(ctx, out);
	if (check_dtype(ctx, dt))
		return api_status(ctx->c.code);
	if (step == 0 || !isfinite(step) || !isfinite(start) || !isfinite(stop))
		return api_status(burn_fail(&ctx->c, BURN_ERR_INVALID, "arange(%g, %g, "
		                  "%g): step must be finite and non-zero", start, stop, step));
	n = ceil((stop - start) / step);
	if (n < 0)
		n = 0;
	if (n > 1e15)
		return api_status(burn_fail(&ctx->c, BURN_ERR_LIMIT, "arange: %g elements", n));
	dim = (int64_t)n;
	if (new_realised(ctx, dt, 1, &dim, &t))
		return api_status(ctx->c.code);
	for (int64_t i = 0; i < dim; i++)
		put_elem(t->buf->data, dt, i, start + (double)i * step);
	*out = t;
	return BURN_STATUS_OK;
}

/*
 * The generator of burn_rand and burn_randn: splitmix64 (Steele, Lea and
 * Flood), state seed, one 64-bit output per step; a uniform double in
 * [0, 1) is the top 53 bits times 2^-53.  Normal values come in pairs
 * from Box-Muller: u1, u2 uniform, r = sqrt(-2 ln(1 - u1)), the pair
 * r cos(2 pi u2), r sin(2 pi u2) (element 2i and 2i+1).  Pure integer
 * steps and libm's log/sqrt/cos/sin in double: the same seed gives the
 * same values wherever libm is correctly rounded to within an ulp.
 */
static uint64_t
splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double
uniform01(uint64_t *s)
{
	return (double)(splitmix64(s) >> 11) * 0x1p-53;
}

burn_status
burn_rand(burn_ctx *ctx, burn_dtype dt, int rank, const int64_t *dims,
          double lo, double hi, uint64_t seed, burn_tensor **out)
{
	burn_tensor *t;
	uint64_t s = seed;

	BEGIN(ctx, out);
	if (check_dtype(ctx, dt) || new_realised(ctx, dt, rank, dims, &t))
		return api_status(ctx->c.code);
	for (int64_t i = 0; i < t->numel; i++)
		put_elem(t->buf->data, dt, i, lo + (hi - lo) * uniform01(&s));
	*out = t;
	return BURN_STATUS_OK;
}

burn_status
burn_randn(burn_ctx *ctx, burn_dtype dt, int rank, const int64_t *dims,
           double mean, double std, uint64_t seed, burn_tensor **out)
{
	burn_tensor *t;
	uint64_t s = seed;

	BEGIN(ctx, out);
	if (check_dtype(ctx, dt) || new_realised(ctx, dt, rank, dims, &t))
		return api_status(ctx->c.code);
	for (int64_t i = 0; i < t->numel; i += 2) {
		double u1 = uniform01(&s), u2 = uniform01(&s);
		double r = sqrt(-2.0 * log(1.0 - u1));
		put_elem(t->buf->data, dt, i, mean + std * r * cos(2 * M_PI * u2));
		if (i + 1 < t->numel)
			put_elem(t->buf->data, dt, i + 1, mean + std * r * sin(2 * M_PI * u2));
	}
	*out = t;
	return BURN_STATUS_OK;
}

burn_status
burn_placeholder(burn_ctx *ctx, burn_dtype dt, int rank, const int64_t *dims,
                 const char *name, burn_tensor **out)
{
	burn_tensor *t;
	int v;
	char nm[32];
	Value *val;

	BEGIN(ctx, out);
	if (check_dtype(ctx, dt) || api_tensor_new(ctx, dt, rank, dims, &t))
		return api_status(ctx->c.code);
	if (!name) {
		snprintf(nm, sizeof nm, "in%d", ctx->nph);
		name = nm;
	}
	if ((v = graph_add_value(ctx->pg, name)) < 0 || api_pv_fit(ctx)) {
		if (v >= 0)
			ctx->pg->nval--;
		burn_release(t);
		return api_status(burn_fail(&ctx->c, BURN_ERR_NOMEM, "out of memory"));
	}
	val = GV(ctx->pg, v);
	val->kind = VK_INPUT;
	val->dtype = dt;
	val->rank = rank;
	for (int i = 0; i < rank; i++)
		val->dim[i] = dims[i];
	memset(&ctx->pv[v], 0, sizeof ctx->pv[v]);
	ctx->pv[v].ph = 1;
	ctx->pv[v].sym = 1;
	ctx->pv[v].t = t;
	ctx->nph++;
	t->val = v;
	t->epoch = ctx->epoch;
	*out = t;
	return BURN_STATUS_OK;
}

/* ---- sync points -------------------------------------------------------- */

burn_status
burn_sync(burn_ctx *ctx)
{
	if (!ctx)
		return BURN_STATUS_INVALID;
	api_begin(ctx);
	return api_status(api_realise(ctx));
}

/* Realise t (with everything else live). */
static int
realise_one(burn_ctx *ctx, burn_tensor *t)
{
	TRY(api_check_tensor(ctx, t, "the tensor"));
	if (t->buf)
		return BURN_OK;
	if (burn_tensor_symbolic(t))
		return burn_fail(&ctx->c, BURN_ERR_INVALID, "the tensor depends on a "
		                 "placeholder: it has no value (trace it instead)");
	TRY(api_realise(ctx));
	if (!t->buf)
		return burn_fail(&ctx->c, BURN_ERR_INTERNAL, "the tensor was not realised");
	return BURN_OK;
}

burn_status
burn_read(burn_ctx *ctx, burn_tensor *t, void *buf, size_t bytes)
{
	size_t need;

	if (!ctx)
		return BURN_STATUS_INVALID;
	api_begin(ctx);
	if (realise_one(ctx, t))
		return api_status(ctx->c.code);
	need = (size_t)t->numel * (size_t)dtype_size(t->dtype);
	if (!buf || bytes < need)
		return api_status(burn_fail(&ctx->c, BURN_ERR_INVALID, "read: the "
		                  "buffer holds %zu bytes of the %zu needed", buf ? bytes : 0,
		                  need));
	if (need)
		memcpy(buf, t->buf->data, need);
	return BURN_STATUS_OK;
}

/* ---- printing ------------------------------------------------------------- */

static double
get_elem(const void *data, int dt, int64_t i, int *is_int)
{
	*is_int = dtype_is_int(dt) || dt == DT_BOOL;
	switch (dt) {
	case DT_F32: return ((const float *)data)[i];
	case DT_F64: return ((const double *)data)[i];
	case DT_F16: case DT_BF16: {
		uint16_t h = ((const uint16_t *)data)[i];
		uint32_t u;
		float f;
		if (dt == DT_BF16)
			u = (uint32_t)h << 16;
		else {
			uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
			if (e == 0x1f)
				u = s | 0x7f800000 | (m << 13);
			else if (e == 0) {
				f = ldexpf((float)m, -24);
				return s ? -f : f;
			} else
				u = s | ((e - 15 + 127) << 23) | (m << 13);
		}
		memcpy(&f, &u, 4);
		return f;
	}
	case DT_BOOL: case DT_U8: return ((const uint8_t *)data)[i];
	case DT_I8: return ((const int8_t *)data)[i];
	case DT_I16: return ((const int16_t *)data)[i];
	case DT_U16: return ((const uint16_t *)data)[i];
	case DT_I32: return ((const int32_t *)data)[i];
	case DT_U32: return ((const uint32_t *)data)[i];
	case DT_I64: return (double)((const int64_t *)data)[i];
	case DT_U64: return (double)((const uint64_t *)data)[i];
	}
	return 0;
}

static void
print_elem(FILE *f, const burn_tensor *t, int64_t i)
{
	int is_int;
	double x = get_elem(t->buf->data, t->dtype, i, &is_int);

	if (t->dtype == DT_BOOL)
		fputs(x ? "true" : "false", f);
	else if (t->dtype == DT_I64)
		fprintf(f, "%lld", (long long)((const int64_t *)t->buf->data)[i]);
	else if (t->dtype == DT_U64)
		fprintf(f, "%llu", (unsigned long long)((const uint64_t *)t->buf->data)[i]);
	else if (is_int)
		fprintf(f, "%.0f", x);
	else
		fprintf(f, "%.4g", x);
}

/* Dim d of t from element base (stride: elements per index of d). */
static void
print_dim(FILE *f, const burn_tensor *t, int d, int64_t base, int edge, int indent)
{
	int64_t n = t->dim[d], stride = 1;

	for (int q = d + 1; q < t->rank; q++)
		stride *= t->dim[q];
	fputc('[', f);
	for (int64_t i = 0; i < n; i++) {
		if (n > 2 * edge && i == edge) {
			fputs(d + 1 == t->rank ? "..., " : "...,\n", f);
			if (d + 1 < t->rank)
				fprintf(f, "%*s", indent + 1, "");
			i = n - edge - 1;
			continue;
		}
		if (d + 1 == t->rank)
			print_elem(f, t, base + i);
		else
			print_dim(f, t, d + 1, base + i * stride, edge, indent + 1);
		if (i + 1 < n) {
			if (d + 1 == t->rank)
				fputs(", ", f);
			else
				fprintf(f, ",\n%*s", indent + 1, "");
		}
	}
	fputc(']', f);
}

/*
 * Printed as
 *     tensor([[0.1, 0.2, ..., 0.9],
 *             ...,
 *             [1, 2, ..., 3]], shape=[200, 4], dtype=f32)
 * with at most `edge` items at each end of every dim (NumPy's
 * summarisation, applied whatever the size), floats as %.4g, integers
 * exactly, booleans as true/false.  A scalar prints as tensor(3.5, shape=[],
 * dtype=f32).
 */
burn_status
burn_print(burn_ctx *ctx, burn_tensor *t, FILE *f, int edge)
{
	if (!ctx)
		return BURN_STATUS_INVALID;
	api_begin(ctx);
	if (!f)
		return api_status(burn_fail(&ctx->c, BURN_ERR_INVALID, "the stream is NULL"));
	if (realise_one(ctx, t))
		return api_status(ctx->c.code);
	if (edge <= 0)
		edge = 3;
	fputs("tensor(", f);
	if (t->rank == 0)
		print_elem(f, t, 0);
	else
		print_dim(f, t, 0, 0, edge, 7);
	fputs(", shape=[", f);
	for (int i = 0; i < t->rank; i++)
		fprintf(f, "%s%lld", i ? ", " : "", (long long)t->dim[i]);
	fprintf(f, "], dtype=%s)\n", dtype_name(t->dtype));
	return BURN_STATUS_OK;
}

/* ---- dumps ---------------------------------------------------------------- */

const Graph *
burn_ctx_graph(const burn_ctx *ctx)
{
	return ctx && ctx->pg->nnode > 0 ? ctx->pg : NULL;
}

burn_status
burn_dump_pending(burn_ctx *ctx, FILE *f)
{
	if (!ctx)
		return BURN_STATUS_INVALID;
	api_begin(ctx);
	if (!f)
		return api_status(burn_fail(&ctx->c, BURN_ERR_INVALID, "the stream is NULL"));
	if (ctx->pg->nnode == 0)
		fputs("(nothing pending)\n", f);
	else
		ir_print(f, ctx->pg, 16);
	return BURN_STATUS_OK;
}

burn_status
burn_dump_last(burn_ctx *ctx, int what, FILE *f)
{
	if (!ctx)
		return BURN_STATUS_INVALID;
	api_begin(ctx);
	if (!f || !(what & (BURN_DUMP_GRAPH | BURN_DUMP_KERNELS)))
		return api_status(burn_fail(&ctx->c, BURN_ERR_INVALID, "dump: bad "
		                  "stream or what"));
	if (!ctx->last) {
		fputs("(nothing realised yet)\n", f);
		return BURN_STATUS_OK;
	}
	return api_status(api_prog_dump(ctx, ctx->last, what, f));
}

/*
 * base.h - the things every layer of burncc shares: the status type and the
 * error context, the arena allocator, and element types.
 *
 * Error handling.  Every library function that can fail returns an int
 * status: BURN_OK (0) or one of the BurnCode values.  The message goes into
 * the caller's Ctx, never to stdout/stderr: only the driver prints.  A
 * failing function calls burn_fail(), which formats the message, prefixes it
 * with the file and the node being processed (if any) and returns the code, so
 * the idiom is
 *
 *     if (bad) return burn_fail(c, BURN_ERR_SHAPE, "axis %d out of range", a);
 *     TRY(other(c, ...));
 *
 * Only the first error is kept: later burn_fail() calls do not overwrite it.
 *
 * Memory.  The compiler allocates from arenas (Arena) that are freed whole.
 * arena_alloc() never returns NULL: on exhaustion of the system allocator it
 * returns NULL and sets ctx error only through arena_xalloc callers that
 * check; in practice we check sizes before allocating (see burn_mul_ovf).
 */
#ifndef BURN_BASE_H
#define BURN_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

enum BurnCode {
	BURN_OK = 0,
	BURN_ERR_IO,          /* file missing, unreadable, unwritable */
	BURN_ERR_PARSE,       /* not ONNX, truncated protobuf, bad IR text */
	BURN_ERR_UNSUPPORTED, /* op, opset, dtype or attribute we do not handle */
	BURN_ERR_INVALID,     /* model violates the ONNX spec: missing input... */
	BURN_ERR_SHAPE,       /* shape or dtype mismatch */
	BURN_ERR_LIMIT,       /* a configured limit was hit */
	BURN_ERR_NOMEM,       /* the system allocator failed */
	BURN_ERR_INTERNAL,    /* a bug in burncc: verifier failure, ... */
};

/* Limits on what the compiler accepts; a hit is BURN_ERR_LIMIT. */
typedef struct BurnLimits {
	int64_t max_file_bytes;   /* size of the model file */
	int64_t max_tensor_bytes; /* one tensor, constant or intermediate */
	int max_depth;            /* nesting of subgraphs */
	int max_nodes;            /* nodes in one graph */
	/* Constant folding runs the kernel IR interpreter: these bound the
	 * statements it executes (loop iterations included) for one node and
	 * for the whole model.  A node over budget is not folded but compiled
	 * as a kernel, like a node with an input that is not constant. */
	int64_t max_fold_steps;
	int64_t max_fold_total;
	int64_t max_arena_bytes;  /* the planned arena of intermediates */
	/* The string heap of a generated module (runtime/strings.inc): the
	 * bytes of strings one run may make (StringConcat, a case change),
	 * part of the arena; a run that needs more returns an error. */
	int64_t string_bytes;
} BurnLimits;

/*
 * Ctx: one per compilation.  Holds the first error, the location used to
 * prefix messages, and the limits.  Not thread-safe; use one per thread.
 */
typedef struct Ctx {
	int code;            /* first error code, BURN_OK if none */
	char msg[1024];      /* its message, with location prefix */
	const char *file;    /* file being compiled (borrowed), or NULL */
	const char *node;    /* name of the node being processed, or NULL */
	const char *op;      /* its op type, or NULL */
	BurnLimits limits;
	/* Called, if set, for every file a loader reads (the model and each
	 * external data file), with its device and inode numbers: the driver
	 * uses it to refuse an output path that names an input. */
	void (*on_read)(void *arg, const char *path, uint64_t dev, uint64_t ino);
	void *on_read_arg;
} Ctx;

void burn_ctx_init(Ctx *c, const char *file);
/* Record an error (if none recorded yet) and return code. */
int burn_fail(Ctx *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int burn_vfail(Ctx *c, int code, const char *fmt, va_list ap);
const char *burn_code_name(int code);

#define TRY(expr) do { int try_rc_ = (expr); if (try_rc_) return try_rc_; } while (0)

/* Overflow-checked size arithmetic: return 1 on overflow. */
int burn_mul_ovf(int64_t a, int64_t b, int64_t *out);
int burn_add_ovf(int64_t a, int64_t b, int64_t *out);

/* ---- arena ---------------------------------------------------------- */

typedef struct ArenaBlock ArenaBlock;
typedef struct Arena {
	ArenaBlock *head;   /* newest block first */
	size_t total;       /* bytes obtained from the system */
} Arena;

void arena_init(Arena *a);
void arena_free(Arena *a);           /* frees every block */
/* Forget everything allocated, keeping (zeroed) the newest standard-size
 * block for reuse: a graph rebuilt often does not go back to the system. */
void arena_reset(Arena *a);
/* Zeroed memory, aligned to 16; NULL only if the system allocator fails. */
void *arena_alloc(Arena *a, size_t n);
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Grow a vector living in the arena: returns a copy with room for want elems. */
void *arena_grow(Arena *a, void *old, size_t elem, size_t oldn, size_t want);

/* ---- element types: the numbers are ONNX's TensorProto.DataType ------ */

enum DType {
	DT_UNDEF = 0,
	DT_F32 = 1, DT_U8 = 2, DT_I8 = 3, DT_U16 = 4, DT_I16 = 5, DT_I32 = 6,
	DT_I64 = 7, DT_STRING = 8, DT_BOOL = 9, DT_F16 = 10, DT_F64 = 11,
	DT_U32 = 12, DT_U64 = 13, DT_C64 = 14, DT_C128 = 15, DT_BF16 = 16,
	DT_COUNT_ = 27
};

int dtype_size(int dt);            /* bytes per element, 0 if unsupported or packed */
int dtype_bits(int dt);            /* bits per element in memory, 0 if unsupported */
/* The bytes n elements of dt take, ceil(n * bits / 8) (packed types share
 * bytes); 1 on overflow or an unsupported dt. */
int dtype_nbytes(int dt, int64_t n, int64_t *out);
int dtype_expr(int dt);            /* the type kernel expressions compute dt in */
const char *dtype_name(int dt);    /* "f32", "i64", ...; "?" if unknown */
int dtype_from_name(const char *s);/* inverse of dtype_name, DT_UNDEF if none */
const char *dtype_ctype(int dt);   /* "float", "int64_t", ...; NULL if none */
int dtype_is_float(int dt);        /* f16 bf16 f32 f64 */
int dtype_is_int(int dt);          /* signed or unsigned integers, not bool */
int dtype_is_signed(int dt);
int dtype_supported(int dt);       /* one we can compute with */
/* Strings (ONNX's string): a tensor of them is an array of pointers to
 * NUL-terminated UTF-8 (runtime/strings.inc), 8 bytes an element; only
 * the ops whose row says TY_STR take them (ir/ops.def). */
int dtype_is_string(int dt);

/* The float8 types (ONNX numbers), supported as storage types like f16:
 * one byte each, loaded as f32 and stored from f32 (kir.h).  They count
 * as float for dtype_is_float.  float8e8m0 is a power of two (no sign, no
 * mantissa, 0xff NaN). */
enum { DT_F8E4M3FN = 17, DT_F8E4M3FNUZ = 18, DT_F8E5M2 = 19, DT_F8E5M2FNUZ = 20,
       DT_F8E8M0 = 24 };
int dtype_is_f8(int dt);           /* the five float8 types above */
int dtype_is_storage(int dt);      /* f16 bf16 float8 float4: bits in memory, f32 in expressions */

/* The packed sub-byte types (ONNX numbers): two (4-bit) or four (2-bit)
 * elements to a byte, the first element in the low bits, so a tensor of n
 * takes ceil(n * bits / 8) bytes; the last byte's unused bits are 0.  They
 * are types of buffers only: kernels compute int4/int2 in i8, uint4/uint2
 * in u8 and float4e2m1 (a storage float, like float8) in f32, and
 * passes/legalize.c turns their loads and stores into byte ones (kir.h). */
enum { DT_U4 = 21, DT_I4 = 22, DT_F4E2M1 = 23, DT_U2 = 25, DT_I2 = 26 };
int dtype_is_packed(int dt);       /* fewer than 8 bits: the five above */
/* Converted only, never computed on (float8, float4, the packed ints):
 * Cast, CastLike, QuantizeLinear and DequantizeLinear take them. */
int dtype_cast_only(int dt);

#endif

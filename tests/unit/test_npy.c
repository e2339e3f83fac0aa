/*
 * test_npy.c - frontend/npy.c: every dtype written and read back, the
 * format versions 1.0, 2.0 and 3.0 and the header variations NumPy and
 * other writers produce, and each malformed header or size refused with
 * its message (never a crash: every truncation of a valid file too).
 * (burncc run with .npy files end to end: tests/run/run.sh.)
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "frontend/npy.h"

static char path[64];

static void setup(void)
{
	snprintf(path, sizeof path, "/tmp/test_npy_%d.npy", (int)getpid());
}

static void teardown(void)
{
	unlink(path);
}

/* Write a file: the magic, version, header (padded as given), data. */
static void write_raw(int major, const char *hdr, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	size_t hl = strlen(hdr);
	cr_assert(f);
	fwrite("\x93NUMPY", 1, 6, f);
	fputc(major, f);
	fputc(0, f);
	fputc((int)(hl & 0xff), f);
	fputc((int)((hl >> 8) & 0xff), f);
	if (major >= 2) {
		fputc((int)((hl >> 16) & 0xff), f);
		fputc((int)((hl >> 24) & 0xff), f);
	}
	fwrite(hdr, 1, hl, f);
	if (n)
		fwrite(data, 1, n, f);
	fclose(f);
}

/* Load path; returns the status, the message into msg. */
static int load(Tensor *t, Arena *a, char *msg, size_t n)
{
	Ctx c;
	int rc;
	burn_ctx_init(&c, NULL);
	rc = npy_load_file(&c, path, a, t);
	snprintf(msg, n, "%s", c.msg);
	return rc;
}

TestSuite(npy, .init = setup, .fini = teardown);

Test(npy, every_dtype_round_trips)
{
	static const int dts[] = { DT_F32, DT_F64, DT_F16, DT_I8, DT_I16, DT_I32, DT_I64,
	                           DT_U8, DT_U16, DT_U32, DT_U64, DT_BOOL };
	unsigned char data[6 * 8];

	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (unsigned char)(i * 37 + 1);
	for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
		int64_t dim[2] = { 2, 3 };
		int es = dtype_size(dts[k]);
		Tensor t;
		Arena a;
		Ctx c;
		char msg[256];
		if (dts[k] == DT_BOOL)
			for (int i = 0; i < 6; i++)
				data[i] = (unsigned char)(i & 1);
		burn_ctx_init(&c, NULL);
		cr_assert_eq(npy_save_file(&c, path, dts[k], 2, dim, data), 0, "%s", c.msg);
		arena_init(&a);
		cr_assert_eq(load(&t, &a, msg, sizeof msg), 0, "%s: %s", dtype_name(dts[k]), msg);
		cr_assert_eq(t.dtype, dts[k]);
		cr_assert_eq(t.rank, 2);
		cr_assert(t.dim[0] == 2 && t.dim[1] == 3);
		cr_assert_eq(t.nbytes, 6 * es);
		cr_assert(!memcmp(t.data, data, (size_t)(6 * es)));
		arena_free(&a);
	}
}

Test(npy, header_is_64_aligned_and_scalar_and_empty)
{
	int64_t none[1] = { 0 };
	float v = 2.5f;
	FILE *f;
	long end;
	Tensor t;
	Arena a;
	Ctx c;
	char msg[256];

	burn_ctx_init(&c, NULL);
	cr_assert_eq(npy_save_file(&c, path, DT_F32, 0, none, &v), 0);
	f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	end = ftell(f);
	fclose(f);
	cr_assert_eq((end - 4) % 64, 0, "data starts at %ld", end - 4);
	arena_init(&a);
	cr_assert_eq(load(&t, &a, msg, sizeof msg), 0, "%s", msg);
	cr_assert(t.rank == 0 && t.nbytes == 4 && *(float *)t.data == 2.5f);
	/* an empty array: shape (0, 3) */
	{
		int64_t d[2] = { 0, 3 };
		cr_assert_eq(npy_save_file(&c, path, DT_I32, 2, d, NULL), 0);
		cr_assert_eq(load(&t, &a, msg, sizeof msg), 0, "%s", msg);
		cr_assert(t.rank == 2 && t.dim[0] == 0 && t.nbytes == 0);
	}
	arena_free(&a);
}

Test(npy, versions_and_header_variations)
{
	static const char *const hdrs[] = {
		/* NumPy's own, version 1.0 and 2.0 */
		"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }        \n",
		/* keys in another order, double quotes, no trailing comma */
		"{\"shape\": (2,3), \"descr\": \"<f4\", \"fortran_order\": False}\n",
		/* native byte order '=' and Python 2's long suffix */
		"{'descr': '=f4', 'fortran_order': False, 'shape': (2L, 3L), }\n",
	};
	float d[6] = { 1, 2, 3, 4, 5, 6 };

	for (int major = 1; major <= 3; major++)
		for (size_t k = 0; k < sizeof hdrs / sizeof hdrs[0]; k++) {
			Tensor t;
			Arena a;
			char msg[256];
			write_raw(major, hdrs[k], d, sizeof d);
			arena_init(&a);
			cr_assert_eq(load(&t, &a, msg, sizeof msg), 0, "v%d %s: %s", major, hdrs[k], msg);
			cr_assert(t.dtype == DT_F32 && t.rank == 2 && t.dim[1] == 3);
			cr_assert(!memcmp(t.data, d, sizeof d));
			arena_free(&a);
		}
}

Test(npy, refusals_name_the_reason)
{
	static const struct { const char *hdr; size_t data; const char *want; } cases[] = {
		{ "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", 8, "big-endian" },
		{ "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }\n", 8, "Fortran-order" },
		{ "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }\n", 16, "dtype 'c8'" },
		{ "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }\n", 8,
		  "structured" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n", 8, "8 bytes of data" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", 8, "8 bytes of data" },
		{ "{'descr': '<f4', 'shape': (2,), }\n", 8, "malformed" },
		{ "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }\n", 8, "malformed" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n", 8, "malformed" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }\n", 8, "malformed" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)\n", 8, "malformed" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': "
		  "(1,1,1,1,1,1,1,1,2), }\n", 8, "malformed" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': "
		  "(99999999999999999999,), }\n", 8, "malformed" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': "
		  "(4611686018427387904, 4), }\n", 8, "too large" },
		{ "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n",
		  8, "malformed" },
		{ "{'descr': '<f4\\'', 'fortran_order': False, 'shape': (2,), }\n", 8, "malformed" },
		{ "", 8, "malformed" },
	};
	unsigned char zeros[16] = { 0 };

	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		Tensor t;
		Arena a;
		char msg[256];
		write_raw(1, cases[k].hdr, zeros, cases[k].data);
		arena_init(&a);
		cr_assert_neq(load(&t, &a, msg, sizeof msg), 0, "accepted: %s", cases[k].hdr);
		cr_assert(strstr(msg, cases[k].want), "'%s': message '%s' lacks '%s'",
		          cases[k].hdr, msg, cases[k].want);
		cr_assert(strstr(msg, path), "message '%s' does not name the file", msg);
		arena_free(&a);
	}
}

Test(npy, every_truncation_refused)
{
	float d[6] = { 1, 2, 3, 4, 5, 6 };
	int64_t dim[2] = { 2, 3 };
	unsigned char buf[256];
	size_t n;
	FILE *f;
	Ctx c;

	burn_ctx_init(&c, NULL);
	cr_assert_eq(npy_save_file(&c, path, DT_F32, 2, dim, d), 0);
	f = fopen(path, "rb");
	n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	for (size_t len = 0; len < n; len++) {
		Tensor t;
		Arena a;
		char msg[256];
		f = fopen(path, "wb");
		fwrite(buf, 1, len, f);
		fclose(f);
		arena_init(&a);
		cr_assert_neq(load(&t, &a, msg, sizeof msg), 0, "a %zu-byte prefix accepted", len);
		arena_free(&a);
	}
	/* and a missing file */
	{
		Tensor t;
		Arena a;
		char msg[256];
		unlink(path);
		arena_init(&a);
		cr_assert_eq(load(&t, &a, msg, sizeof msg), BURN_ERR_IO);
		arena_free(&a);
	}
}

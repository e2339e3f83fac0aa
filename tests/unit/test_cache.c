/*
 * test_cache.c - runtime/cache.c: SHA-256 against the FIPS 180-4 example
 * values, entries stored and read back, every corruption of an entry
 * detected (and the entry deleted), the size limit evicting the least
 * recently used, and several processes storing and reading one key at
 * once without ever reading a partial entry.  (Directory checks and the
 * cache through the JIT: tests/jit/cache.sh.)
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "runtime/cache.h"

static void
sha_hex(const void *p, size_t n, char out[65])
{
	BurnSha256 s;
	unsigned char d[32];

	burn_sha256_init(&s);
	burn_sha256_update(&s, p, n);
	burn_sha256_final(&s, d);
	burn_hex32(d, out);
}

Test(cache, sha256_known_values)
{
	static const char m448[] =
		"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	char h[65];
	BurnSha256 s;
	unsigned char d[32];
	char *a = malloc(1000000);

	sha_hex("", 0, h);
	cr_assert_str_eq(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha_hex("abc", 3, h);
	cr_assert_str_eq(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	sha_hex(m448, strlen(m448), h);
	cr_assert_str_eq(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* a million 'a', fed in uneven pieces (the block buffer's edges) */
	memset(a, 'a', 1000000);
	burn_sha256_init(&s);
	for (size_t off = 0, step = 1; off < 1000000; off += step, step = step * 3 % 200 + 1)
		burn_sha256_update(&s, a + off, off + step > 1000000 ? 1000000 - off : step);
	burn_sha256_final(&s, d);
	burn_hex32(d, h);
	cr_assert_str_eq(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

typedef struct T {
	char dir[64];
	BurnCache cc;
	Ctx c;
} T;

static void
t_open(T *t, int64_t max)
{
	strcpy(t->dir, "/tmp/burn_cacheXXXXXX");
	cr_assert_not_null(mkdtemp(t->dir));
	burn_ctx_init(&t->c, NULL);
	cr_assert_eq(burn_cache_open(&t->c, &t->cc, t->dir, max), BURN_OK, "%s", t->c.msg);
	cr_assert_geq(t->cc.fd, 0);
}

static void
t_close(T *t)
{
	int64_t n;

	burn_cache_clear(&t->cc, &n);
	burn_cache_close(&t->cc);
	rmdir(t->dir);
}

static void
key_of(int i, unsigned char key[32])
{
	char s[16];
	BurnSha256 h;

	snprintf(s, sizeof s, "k%d", i);
	burn_sha256_init(&h);
	burn_sha256_update(&h, s, strlen(s));
	burn_sha256_final(&h, key);
}

static void
entry_path(T *t, const unsigned char key[32], char *out, size_t n)
{
	char hex[65];

	burn_hex32(key, hex);
	snprintf(out, n, "%s/%s.bko", t->dir, hex);
}

Test(cache, put_get_and_miss)
{
	T t;
	unsigned char k1[32], k2[32];
	char payload[1000];
	void *d;
	size_t n;

	t_open(&t, 0);
	key_of(1, k1);
	key_of(2, k2);
	for (int i = 0; i < (int)sizeof payload; i++)
		payload[i] = (char)(i * 7);
	cr_assert_eq(burn_cache_get(&t.cc, k1, &d, &n), 0, "empty cache");
	cr_assert_str_eq(t.cc.note, "", "absent is not worth a note");
	cr_assert_eq(burn_cache_put(&t.cc, k1, payload, sizeof payload), 0, "%s", t.cc.note);
	cr_assert_eq(burn_cache_get(&t.cc, k1, &d, &n), 1, "%s", t.cc.note);
	cr_assert_eq(n, sizeof payload);
	cr_assert_eq(memcmp(d, payload, n), 0);
	free(d);
	cr_assert_eq(burn_cache_get(&t.cc, k2, &d, &n), 0, "another key");
	/* an empty payload is an entry too */
	cr_assert_eq(burn_cache_put(&t.cc, k2, "", 0), 0);
	cr_assert_eq(burn_cache_get(&t.cc, k2, &d, &n), 1);
	cr_assert_eq(n, 0);
	free(d);
	cr_assert_eq(t.cc.hits, 2);
	cr_assert_eq(t.cc.stores, 2);
	t_close(&t);
}

/* Every byte of an entry changed, and every length cut: never a hit. */
Test(cache, every_corruption_is_detected)
{
	T t;
	unsigned char k[32];
	char payload[64], path[256];
	void *d;
	size_t n;
	struct stat st;

	t_open(&t, 0);
	key_of(3, k);
	memset(payload, 'x', sizeof payload);
	entry_path(&t, k, path, sizeof path);
	cr_assert_eq(burn_cache_put(&t.cc, k, payload, sizeof payload), 0);
	cr_assert_eq(stat(path, &st), 0);
	for (off_t at = 0; at < st.st_size; at++) {
		unsigned char b;
		int fd;
		cr_assert_eq(burn_cache_put(&t.cc, k, payload, sizeof payload), 0);
		fd = open(path, O_RDWR);
		cr_assert_geq(fd, 0);
		cr_assert_eq(pread(fd, &b, 1, at), 1);
		b ^= 0x10;
		cr_assert_eq(pwrite(fd, &b, 1, at), 1);
		close(fd);
		cr_assert_eq(burn_cache_get(&t.cc, k, &d, &n), 0, "byte %ld changed: a hit",
		             (long)at);
		cr_assert(strstr(t.cc.note, "corrupt"), "byte %ld: %s", (long)at, t.cc.note);
		cr_assert_neq(access(path, F_OK), 0, "byte %ld: the entry not deleted",
		              (long)at);
	}
	for (off_t len = 0; len < st.st_size; len += 7) {
		cr_assert_eq(burn_cache_put(&t.cc, k, payload, sizeof payload), 0);
		cr_assert_eq(truncate(path, len), 0);
		cr_assert_eq(burn_cache_get(&t.cc, k, &d, &n), 0, "cut to %ld: a hit", (long)len);
		cr_assert(strstr(t.cc.note, "truncated"), "cut to %ld: %s", (long)len, t.cc.note);
	}
	/* longer than its header says */
	cr_assert_eq(burn_cache_put(&t.cc, k, payload, sizeof payload), 0);
	{
		FILE *f = fopen(path, "a");
		fputs("more", f);
		fclose(f);
	}
	cr_assert_eq(burn_cache_get(&t.cc, k, &d, &n), 0);
	t_close(&t);
}

/* Room for three entries: a fourth evicts the least recently used, and
 * a hit counts as a use. */
Test(cache, evicts_least_recently_used)
{
	T t;
	unsigned char k[5][32];
	char payload[1000], path[256];
	struct timespec ts[2] = { { 1000, 0 }, { 1000, 0 } };
	void *d;
	size_t n;

	memset(payload, 'y', sizeof payload);
	t_open(&t, 3 * (1000 + 88));
	for (int i = 0; i < 5; i++)
		key_of(10 + i, k[i]);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(burn_cache_put(&t.cc, k[i], payload, sizeof payload), 0);
		/* distinct ages: entry i used at time 1000 + i */
		entry_path(&t, k[i], path, sizeof path);
		ts[0].tv_sec = ts[1].tv_sec = 1000 + i;
		cr_assert_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
	}
	/* use entry 0: now the newest */
	cr_assert_eq(burn_cache_get(&t.cc, k[0], &d, &n), 1);
	free(d);
	cr_assert_eq(burn_cache_put(&t.cc, k[3], payload, sizeof payload), 0);
	cr_assert_eq(t.cc.evicted, 1);
	cr_assert_eq(burn_cache_get(&t.cc, k[1], &d, &n), 0, "1 was the least recent");
	cr_assert_eq(burn_cache_get(&t.cc, k[0], &d, &n), 1, "0 was used: kept");
	free(d);
	cr_assert_eq(burn_cache_get(&t.cc, k[2], &d, &n), 1);
	free(d);
	cr_assert_eq(burn_cache_get(&t.cc, k[3], &d, &n), 1);
	free(d);
	{
		int64_t e, b;
		burn_cache_scan(&t.cc, &e, &b);
		cr_assert_eq(e, 3);
		cr_assert_leq(b, t.cc.max_bytes);
	}
	t_close(&t);
}

/* Eight processes store the same key with payloads of different sizes
 * and read it, over and over: every read is a whole payload of one of
 * them, never a mixture or a corrupt entry. */
Test(cache, concurrent_processes)
{
	T t;
	unsigned char k[32];
	pid_t pid[8];

	t_open(&t, 0);
	key_of(99, k);
	for (int p = 0; p < 8; p++) {
		if ((pid[p] = fork()) == 0) {
			size_t len = 5000 + (size_t)p * 1000;
			char *mine = malloc(len);
			BurnCache cc;
			Ctx c;
			int bad = 0;
			memset(mine, 'a' + p, len);
			burn_ctx_init(&c, NULL);
			if (burn_cache_open(&c, &cc, t.dir, 0))
				_exit(3);
			for (int i = 0; i < 200; i++) {
				void *d;
				size_t n;
				if (burn_cache_put(&cc, k, mine, len))
					bad |= 4;
				if (burn_cache_get(&cc, k, &d, &n)) {
					const char *q = d;
					int w = (int)(n - 5000) / 1000;
					if (n < 5000 || (n - 5000) % 1000 || w > 7)
						bad |= 1;
					for (size_t j = 0; j < n && !(bad & 1); j++)
						if (q[j] != 'a' + w)
							bad |= 1;
					free(d);
				}
				if (cc.corrupt)
					bad |= 2;
			}
			burn_cache_close(&cc);
			free(mine);
			_exit(bad);
		}
		cr_assert_gt(pid[p], 0);
	}
	for (int p = 0; p < 8; p++) {
		int st;
		cr_assert_eq(waitpid(pid[p], &st, 0), pid[p]);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "process %d: status %d", p,
		          WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	{
		int64_t e, b;
		burn_cache_scan(&t.cc, &e, &b);
		cr_assert_eq(e, 1, "one entry, no temporary files counted");
	}
	t_close(&t);
}

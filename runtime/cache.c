/*
 * cache.c - see cache.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cache.h"

/* ---- SHA-256 ------------------------------------------------------------
 * FIPS 180-4, section 6.2: 64 rounds over 512-bit blocks, big-endian
 * words, the message padded with 1, zeros and its bit length. */

static const uint32_t K256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void
sha_block(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, k;

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0]; b = h[1]; c = h[2]; d = h[3];
	e = h[4]; f = h[5]; g = h[6]; k = h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = k + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) +
		              ((e & f) ^ (~e & g)) + K256[i] + w[i];
		uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) +
		              ((a & b) ^ (a & c) ^ (b & c));
		k = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	h[0] += a; h[1] += b; h[2] += c; h[3] += d;
	h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

void
burn_sha256_init(BurnSha256 *s)
{
	static const uint32_t h0[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->h, h0, sizeof h0);
	s->len = 0;
	s->nbuf = 0;
}

void
burn_sha256_update(BurnSha256 *s, const void *data, size_t n)
{
	const unsigned char *p = data;

	s->len += n;
	while (n > 0) {
		size_t take = 64 - s->nbuf < n ? 64 - s->nbuf : n;
		if (s->nbuf == 0 && n >= 64) {
			sha_block(s->h, p);
			p += 64;
			n -= 64;
			continue;
		}
		memcpy(s->buf + s->nbuf, p, take);
		s->nbuf += take;
		p += take;
		n -= take;
		if (s->nbuf == 64) {
			sha_block(s->h, s->buf);
			s->nbuf = 0;
		}
	}
}

void
burn_sha256_final(BurnSha256 *s, unsigned char out[32])
{
	uint64_t bits = s->len * 8;
	unsigned char pad[72] = { 0x80 };
	size_t npad = (s->nbuf < 56 ? 56 : 120) - s->nbuf;

	for (int i = 0; i < 8; i++)
		pad[npad + i] = (unsigned char)(bits >> (56 - 8 * i));
	burn_sha256_update(s, pad, npad + 8);
	for (int i = 0; i < 8; i++) {
		out[4 * i] = (unsigned char)(s->h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
		out[4 * i + 3] = (unsigned char)s->h[i];
	}
}

void
burn_hex32(const unsigned char key[32], char out[65])
{
	static const char hx[] = "0123456789abcdef";

	for (int i = 0; i < 32; i++) {
		out[2 * i] = hx[key[i] >> 4];
		out[2 * i + 1] = hx[key[i] & 15];
	}
	out[64] = 0;
}

/* ---- entries ------------------------------------------------------------
 *
 * An entry's file: the header, then the payload.
 *
 *   0   8  magic "BURNKC\r\n" (the \r\n catches text-mode mangling)
 *   8   4  format version (CACHE_FORMAT), little-endian
 *  12   4  zero
 *  16   8  payload length, little-endian
 *  24  32  the key
 *  56  32  SHA-256 of the payload
 *  88      payload
 */
#define HDR 88
#define CACHE_FORMAT 1
#define SUFFIX ".bko"
#define NAME_LEN (64 + 4)
#define TMP_PREFIX ".tmp."
/* an entry larger than this is not read (nor written): no kernel object
 * comes near it, and it bounds what a hostile file can make us allocate */
#define ENTRY_MAX ((int64_t)1 << 30)
/* temporary files older than this are a crashed writer's */
#define TMP_STALE_S 600

static const unsigned char magic[8] = { 'B', 'U', 'R', 'N', 'K', 'C', '\r', '\n' };

static void
note(BurnCache *cc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cc->note, sizeof cc->note, fmt, ap);
	va_end(ap);
}

static void
put_le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t
get_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void
entry_name(const unsigned char key[32], char name[NAME_LEN + 1])
{
	burn_hex32(key, name);
	memcpy(name + 64, SUFFIX, sizeof SUFFIX);
}

static int
is_entry_name(const char *s)
{
	size_t n = strlen(s);

	if (n != NAME_LEN || strcmp(s + 64, SUFFIX))
		return 0;
	for (int i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* ---- the directory ------------------------------------------------------ */

int
burn_cache_default_dir(char *buf, size_t n)
{
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	int w;

	/* the XDG spec: a relative XDG_CACHE_HOME is invalid, ignore it */
	if (x && x[0] == '/')
		w = snprintf(buf, n, "%s/burncc", x);
	else if (h && h[0] == '/')
		w = snprintf(buf, n, "%s/.cache/burncc", h);
	else
		return -1;
	return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* Why directory fd (at path) is not one to load code from, or NULL. */
static const char *
unsafe_dir(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return "cannot stat it";
	if (!S_ISDIR(st.st_mode))
		return "not a directory";
	if (st.st_uid != geteuid())
		return "not owned by this user";
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return "writable by group or others";
	return NULL;
}

/* Make path's parent (only the default's $XDG_CACHE_HOME or ~/.cache,
 * one level) when missing, 0700. */
static void
make_parent(const char *path)
{
	char p[BURN_CACHE_PATH_MAX];
	char *s;

	snprintf(p, sizeof p, "%s", path);
	if ((s = strrchr(p, '/')) != NULL && s != p) {
		*s = 0;
		(void)mkdir(p, 0700);
	}
}

int
burn_cache_open(Ctx *c, BurnCache *cc, const char *dir, int64_t max_bytes)
{
	int asked = dir && *dir;
	const char *why = NULL;
	struct stat st;
	int n;

	memset(cc, 0, sizeof *cc);
	cc->fd = -1;
	cc->max_bytes = max_bytes > 0 ? max_bytes : BURN_CACHE_MAX_DEFAULT;
	if (asked) {
		n = snprintf(cc->path, sizeof cc->path, "%s", dir);
		if (n < 0 || (size_t)n >= sizeof cc->path)
			return burn_fail(c, BURN_ERR_IO, "cache directory: path too long");
	} else if (burn_cache_default_dir(cc->path, sizeof cc->path)) {
		note(cc, "no cache directory (neither XDG_CACHE_HOME nor HOME is "
		     "an absolute path)");
		return BURN_OK;
	} else
		make_parent(cc->path);
	if (mkdir(cc->path, 0700) && errno != EEXIST)
		why = strerror(errno);
	else if (lstat(cc->path, &st))
		why = strerror(errno);
	else if (S_ISLNK(st.st_mode))
		why = "a symbolic link";
	else if ((cc->fd = open(cc->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	                        O_CLOEXEC)) < 0)
		why = strerror(errno);
	else if ((why = unsafe_dir(cc->fd)) != NULL) {
		close(cc->fd);
		cc->fd = -1;
	}
	if (!why)
		return BURN_OK;
	note(cc, "cache directory %s refused: %s", cc->path, why);
	if (asked)
		return burn_fail(c, BURN_ERR_IO, "%s", cc->note);
	return BURN_OK;
}

void
burn_cache_close(BurnCache *cc)
{
	if (cc->fd >= 0)
		close(cc->fd);
	cc->fd = -1;
}

/* Read all of fd (size bytes) into a new buffer, or NULL. */
static unsigned char *
read_all(int fd, size_t size)
{
	unsigned char *b = malloc(size ? size : 1);
	size_t got = 0;

	while (b && got < size) {
		ssize_t r = read(fd, b + got, size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			free(b);
			return NULL;
		}
		got += (size_t)r;
	}
	return b;
}

int
burn_cache_get(BurnCache *cc, const unsigned char key[32], void **data,
               size_t *n)
{
	char name[NAME_LEN + 1];
	unsigned char sum[32], *b = NULL;
	const char *bad = NULL;
	struct stat st;
	BurnSha256 s;
	uint64_t len;
	int fd;

	*data = NULL;
	*n = 0;
	cc->note[0] = 0;
	if (cc->fd < 0) {
		cc->misses++;
		return 0;
	}
	entry_name(key, name);
	fd = openat(cc->fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno != ENOENT)
			note(cc, "entry %s ignored: %s", name, strerror(errno));
		cc->ignored += errno != ENOENT;
		cc->misses++;
		return 0;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 07777) != 0600) {
		/* not ours, or not as we write them: leave it alone */
		note(cc, "entry %s ignored: not a regular file of this user with "
		     "mode 0600", name);
		close(fd);
		cc->ignored++;
		cc->misses++;
		return 0;
	}
	if (st.st_size < HDR || st.st_size > ENTRY_MAX)
		bad = "truncated";
	else if (!(b = read_all(fd, (size_t)st.st_size)))
		bad = "unreadable";
	else if (memcmp(b, magic, 8) || get_le(b + 8, 4) != CACHE_FORMAT ||
	         get_le(b + 12, 4) != 0)
		bad = "bad header";
	else if ((len = get_le(b + 16, 8)) != (uint64_t)st.st_size - HDR)
		bad = "truncated";
	else if (memcmp(b + 24, key, 32))
		bad = "another key's";
	else {
		burn_sha256_init(&s);
		burn_sha256_update(&s, b + HDR, (size_t)len);
		burn_sha256_final(&s, sum);
		if (memcmp(sum, b + 56, 32))
			bad = "checksum mismatch";
	}
	if (bad) {
		note(cc, "entry %s corrupt (%s): deleted", name, bad);
		(void)unlinkat(cc->fd, name, 0);
		free(b);
		close(fd);
		cc->corrupt++;
		cc->misses++;
		return 0;
	}
	/* least recently used: a hit is a use */
	(void)futimens(fd, NULL);
	close(fd);
	len = (uint64_t)st.st_size - HDR;
	memmove(b, b + HDR, (size_t)len);
	*data = b;
	*n = (size_t)len;
	cc->hits++;
	return 1;
}

static int
write_all(int fd, const void *p, size_t n)
{
	const char *q = p;

	while (n > 0) {
		ssize_t w = write(fd, q, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		q += w;
		n -= (size_t)w;
	}
	return 0;
}

typedef struct Ent {
	char name[NAME_LEN + 1];
	int64_t bytes;
	struct timespec mtime;
} Ent;

static int
older(const void *a, const void *b)
{
	const Ent *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The entries of the directory (ours, regular files) into *out (malloc'd,
 * *n of them); stale temporary files are deleted on the way, and with
 * clear_tmp every temporary file.  Returns -1 when it cannot be read. */
static int
list(BurnCache *cc, Ent **out, int *n, int all_tmp)
{
	int dfd = dup(cc->fd), cap = 0;
	time_t now = time(NULL);
	struct dirent *d;
	DIR *dir;

	*out = NULL;
	*n = 0;
	if (dfd < 0)
		return -1;
	if (!(dir = fdopendir(dfd))) {
		close(dfd);
		return -1;
	}
	rewinddir(dir);
	while ((d = readdir(dir)) != NULL) {
		struct stat st;
		if (fstatat(cc->fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		if (!strncmp(d->d_name, TMP_PREFIX, strlen(TMP_PREFIX))) {
			if (all_tmp || now - st.st_mtime > TMP_STALE_S)
				(void)unlinkat(cc->fd, d->d_name, 0);
			continue;
		}
		if (!is_entry_name(d->d_name))
			continue;
		if (*n == cap) {
			Ent *e = realloc(*out, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *e);
			if (!e)
				break;
			*out = e;
		}
		memcpy((*out)[*n].name, d->d_name, NAME_LEN + 1);
		(*out)[*n].bytes = (int64_t)st.st_size;
		(*out)[*n].mtime = st.st_mtim;
		(*n)++;
	}
	closedir(dir);
	return 0;
}

/* Delete the least recently used entries until the rest fit max_bytes. */
static void
evict(BurnCache *cc)
{
	Ent *e;
	int n;
	int64_t total = 0;

	if (list(cc, &e, &n, 0))
		return;
	for (int i = 0; i < n; i++)
		total += e[i].bytes;
	if (total > cc->max_bytes) {
		qsort(e, (size_t)n, sizeof *e, older);
		for (int i = 0; i < n && total > cc->max_bytes; i++)
			if (!unlinkat(cc->fd, e[i].name, 0)) {
				total -= e[i].bytes;
				cc->evicted++;
			}
	}
	free(e);
}

int
burn_cache_put(BurnCache *cc, const unsigned char key[32], const void *data,
               size_t n)
{
	char name[NAME_LEN + 1], tmp[96];
	unsigned char h[HDR];
	struct timespec ts;
	BurnSha256 s;
	int fd = -1, bad;

	cc->note[0] = 0;
	if (cc->fd < 0)
		return -1;
	if ((int64_t)n + HDR > cc->max_bytes || (int64_t)n + HDR > ENTRY_MAX) {
		note(cc, "entry of %zu bytes not stored: larger than the cache", n);
		return -1;
	}
	memcpy(h, magic, 8);
	put_le(h + 8, CACHE_FORMAT, 4);
	put_le(h + 12, 0, 4);
	put_le(h + 16, n, 8);
	memcpy(h + 24, key, 32);
	burn_sha256_init(&s);
	burn_sha256_update(&s, data, n);
	burn_sha256_final(&s, h + 56);
	entry_name(key, name);
	/* unique among processes (pid) and, mostly, threads of one and reuses
	 * of a pid (the clock); O_EXCL makes sure, and a clash tries again */
	for (int tries = 0; tries < 8 && fd < 0; tries++) {
		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(tmp, sizeof tmp, TMP_PREFIX "%ld.%d.%ld", (long)getpid(),
		         tries, (long)ts.tv_nsec);
		fd = openat(cc->fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		            O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		note(cc, "entry not stored: %s", strerror(errno));
		return -1;
	}
	/* the umask may have taken bits away; get exactly 0600 */
	bad = fchmod(fd, 0600) || write_all(fd, h, HDR) || write_all(fd, data, n);
	bad |= close(fd) != 0;
	if (bad) {
		note(cc, "entry not stored: %s", strerror(errno));
		(void)unlinkat(cc->fd, tmp, 0);
		return -1;
	}
	if (renameat(cc->fd, tmp, cc->fd, name)) {
		note(cc, "entry not stored: %s", strerror(errno));
		(void)unlinkat(cc->fd, tmp, 0);
		return -1;
	}
	cc->stores++;
	evict(cc);
	return 0;
}

void
burn_cache_scan(BurnCache *cc, int64_t *entries, int64_t *bytes)
{
	Ent *e;
	int n;

	*entries = *bytes = 0;
	if (cc->fd < 0 || list(cc, &e, &n, 0))
		return;
	*entries = n;
	for (int i = 0; i < n; i++)
		*bytes += e[i].bytes;
	free(e);
}

void
burn_cache_clear(BurnCache *cc, int64_t *removed)
{
	Ent *e;
	int n;

	*removed = 0;
	if (cc->fd < 0 || list(cc, &e, &n, 1))
		return;
	for (int i = 0; i < n; i++)
		*removed += !unlinkat(cc->fd, e[i].name, 0);
	free(e);
}

/*
 * cache.h - a directory of compiled kernels that outlives the process
 * (the llvm target's object files, codegen/llvm/jit.c), and the SHA-256
 * its keys are made with.
 *
 * Loading native code from a file is running it, so the cache trusts
 * nothing it did not write itself:
 *
 *   the directory  $XDG_CACHE_HOME/burncc (an absolute XDG_CACHE_HOME),
 *                  else $HOME/.cache/burncc, or one the caller names; made
 *                  0700 when missing; refused when it is a symlink, not a
 *                  directory, not owned by the effective user, or writable
 *                  by group or others.  The check is made on the open
 *                  directory (fstat of its descriptor) and every entry is
 *                  reached relative to that descriptor (openat), so a
 *                  path swapped after the check is never followed.
 *   an entry       a regular file named by its key (64 hex digits +
 *                  ".bko"), opened without following symlinks, owned by
 *                  us and mode 0600; anything else is ignored.  It starts
 *                  with a header (magic, format version, payload length,
 *                  the key itself, the payload's SHA-256): an entry whose
 *                  header or checksum does not hold (truncated, corrupt,
 *                  another key's) is deleted and reported as a miss.
 *   writing        to a unique temporary file in the directory (O_EXCL,
 *                  0600), then rename(2) over the entry's name: a reader in
 *                  another process sees the old entry, the new one or none,
 *                  never a partial one.
 *   size           at most max_bytes of entries (default 256 MiB): after a
 *                  store the least recently used entries (oldest mtime; a
 *                  hit touches its entry) are deleted until the rest fit.
 *
 * Every failure of the cache is a miss or a store not made, with the
 * reason in `note`; only burn_cache_open of a directory the caller named
 * explicitly returns an error (BURN_ERR_IO) when that directory is unsafe
 * or cannot be made.  A BurnCache is used by one thread at a time; any
 * number of processes may share one directory.
 */
#ifndef BURN_CACHE_H
#define BURN_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include "../ir/base.h"

/* ---- SHA-256 (FIPS 180-4) --------------------------------------------- */

typedef struct BurnSha256 {
	uint32_t h[8];
	uint64_t len;               /* bytes hashed so far */
	unsigned char buf[64];
	size_t nbuf;
} BurnSha256;

void burn_sha256_init(BurnSha256 *s);
void burn_sha256_update(BurnSha256 *s, const void *p, size_t n);
void burn_sha256_final(BurnSha256 *s, unsigned char out[32]);
/* Lowercase hex of 32 bytes into out (65 bytes with the NUL). */
void burn_hex32(const unsigned char key[32], char out[65]);

/* ---- the directory ----------------------------------------------------- */

#define BURN_CACHE_MAX_DEFAULT ((int64_t)256 << 20)
#define BURN_CACHE_PATH_MAX 4096

typedef struct BurnCache {
	int fd;                     /* the directory; -1: no cache */
	int64_t max_bytes;          /* entries kept at most (bytes) */
	char path[BURN_CACHE_PATH_MAX];
	char note[320];             /* why the cache was not used, or the last
	                             * entry was missed/not stored ("" if
	                             * nothing went wrong) */
	/* counts over this BurnCache's life */
	int64_t hits, misses, stores, corrupt, ignored, evicted;
} BurnCache;

/* The default directory's path ($XDG_CACHE_HOME/burncc, else
 * $HOME/.cache/burncc) into buf.  Returns 0, or -1 when neither variable
 * gives an absolute path or buf is too small. */
int burn_cache_default_dir(char *buf, size_t n);

/* Open the cache in dir, creating it (0700) when missing.  dir NULL or
 * "": the default directory, whose failures leave the cache off (fd -1,
 * `note` says why) and return BURN_OK.  Any other dir was asked for: when
 * it is unsafe or cannot be made the status is BURN_ERR_IO, with the
 * reason.  max_bytes <= 0: BURN_CACHE_MAX_DEFAULT. */
int burn_cache_open(Ctx *c, BurnCache *cc, const char *dir, int64_t max_bytes);
void burn_cache_close(BurnCache *cc);

/* The payload stored under key: returns 1 with *data (malloc'd, the
 * caller frees) and *n, or 0 on a miss (`note` says why when it was not
 * simply absent: an entry ignored or found corrupt and deleted). */
int burn_cache_get(BurnCache *cc, const unsigned char key[32], void **data,
                   size_t *n);
/* Store n bytes under key, then evict down to max_bytes.  Returns 0, or
 * -1 when not stored (`note` says why). */
int burn_cache_put(BurnCache *cc, const unsigned char key[32],
                   const void *data, size_t n);
/* Entries and their bytes. */
void burn_cache_scan(BurnCache *cc, int64_t *entries, int64_t *bytes);
/* Delete every entry (and stale temporary files); *removed: how many. */
void burn_cache_clear(BurnCache *cc, int64_t *removed);

#endif

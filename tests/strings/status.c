/*
 * status.c - a generated module's string statuses, end to end (run by
 * status.sh): StringConcat compiled with --string-bytes 16 (cat.h) makes
 * strings that fit, then strings that do not: CAT_ERR_STRING_SPACE and
 * no byte written past the arena; RegexFullMatch (re.h) given bytes that
 * are not UTF-8: RE_ERR_STRING_UTF8.  Exit 0 when all hold.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "cat.h"
#include "re.h"

#define GUARD 64

static uint64_t mem[(CAT_ARENA_BYTES + RE_ARENA_BYTES + 2 * GUARD + 64) / 8 + 1];

static int fails;

static void expect(int ok, const char *what)
{
	if (!ok) {
		printf("FAIL: %s\n", what);
		fails++;
	}
}

int main(void)
{
	/* the arena: aligned, followed by GUARD bytes that must stay 0xa5 */
	unsigned char *base = (unsigned char *)mem;
	unsigned char *arena = base + (CAT_ARENA_ALIGN - (uintptr_t)base % CAT_ARENA_ALIGN);
	burn_str x[CAT_IN_X_NUMEL] = { "ab", "cd" }, y[CAT_IN_Y_NUMEL] = { "ef", "gh" };
	burn_str out[CAT_OUT_RESULT_NUMEL];
	burn_str longx[CAT_IN_X_NUMEL] = { "0123456789", "abcdefghij" };
	burn_str bad[RE_IN_X_NUMEL] = { "www.google.com", "www.\xff.com", "www.bbc.co.uk" };
	uint8_t match[RE_OUT_Y_NUMEL];
	int rc, k;

	memset(arena + CAT_ARENA_BYTES, 0xa5, GUARD);
	rc = cat_run(x, y, out, arena);
	expect(rc == CAT_OK, "short strings fit");
	expect(rc == CAT_OK && !strcmp(out[0], "abef") && !strcmp(out[1], "cdgh"),
	       "their concatenations");
	rc = cat_run(longx, y, out, arena);
	expect(rc == CAT_ERR_STRING_SPACE, "long strings: CAT_ERR_STRING_SPACE");
	expect(strlen(cat_strerror(rc)) > 0, "a message for it");
	for (k = 0; k < GUARD; k++)
		expect(arena[CAT_ARENA_BYTES + k] == 0xa5, "no byte written past the arena");
	rc = cat_run(x, y, out, arena);
	expect(rc == CAT_OK && !strcmp(out[1], "cdgh"), "the arena reused after an error");

	rc = re_run(bad, match, arena);
	expect(rc == RE_ERR_STRING_UTF8, "bytes that are not UTF-8: RE_ERR_STRING_UTF8");
	bad[1] = "www.facebook.com";
	rc = re_run(bad, match, arena);
	expect(rc == RE_OK && match[0] && match[1] && !match[2], "UTF-8 again: matches");
	if (!fails)
		printf("ok: string statuses\n");
	return fails != 0;
}

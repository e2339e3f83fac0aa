/*
 * test_regex.c - RegexFullMatch's compiler (passes/regex.c) and matcher
 * (runtime/strings.inc, the text the generated modules carry), and the
 * string heap's bound: patterns against strings with the answers RE2
 * gives, patterns outside the subset refused with a message, text that is
 * not UTF-8 reported, a full heap an error and never a write past it.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "passes/regex.h"
#include "runtime/strings.inc"

/* Full match of pattern on s through the compiled program: 1, 0, or
 * BS_ERR_UTF8; the pattern must compile. */
static int full(const char *pattern, const char *s)
{
	Ctx c;
	Arena a;
	int32_t *prog, *scratch;
	int64_t n;
	int r;

	burn_ctx_init(&c, "test");
	arena_init(&a);
	cr_assert_eq(regex_compile(&c, &a, pattern, &prog, &n), BURN_OK,
	             "pattern '%s': %s", pattern, c.msg);
	scratch = malloc(sizeof *scratch * (5 * (size_t)prog[0] + 1));
	cr_assert(scratch);
	r = bs_re_full(prog, scratch, s);
	free(scratch);
	arena_free(&a);
	return r;
}

static const struct {
	const char *pattern, *s;
	int want;
} cases[] = {
	/* the ONNX node suite's patterns */
	{ "www\\.[\\w.-]+\\.\\bcom\\b", "www.google.com", 1 },
	{ "www\\.[\\w.-]+\\.\\bcom\\b", "www.bbc.co.uk", 0 },
	{ "(\\W|^)[\\w.\\-]{0,25}@(yahoo|gmail)\\.com(\\W|$)", "account@gmail.com", 1 },
	{ "(\\W|^)[\\w.\\-]{0,25}@(yahoo|gmail)\\.com(\\W|$)", "account@hotmail.com", 0 },
	{ "(\\W|^)[\\w.\\-]{0,25}@(yahoo|gmail)\\.com(\\W|$)", " a.b@yahoo.com!", 1 },
	/* full match, not search */
	{ "abc", "abc", 1 }, { "abc", "abcd", 0 }, { "abc", "xabc", 0 },
	{ "", "", 1 }, { "", "a", 0 }, { "a*", "", 1 },
	/* alternation and groups */
	{ "a|b|cd", "cd", 1 }, { "a|b|cd", "c", 0 }, { "(a|b)*c", "ababc", 1 },
	{ "(?:ab)+", "ababab", 1 }, { "(?:ab)+", "aba", 0 }, { "((a)|b)+", "abba", 1 },
	/* repetition */
	{ "a{3}", "aaa", 1 }, { "a{3}", "aa", 0 }, { "a{2,}", "aaaaa", 1 },
	{ "a{2,3}", "aaaa", 0 }, { "a{0,2}b", "b", 1 }, { "a+?b", "aab", 1 },
	{ "x{,3}", "x{,3}", 1 },     /* RE2: a '{' that starts no count is literal */
	{ "ab?c", "ac", 1 }, { "ab?c", "abbc", 0 },
	/* classes */
	{ "[a-c]+", "abcabc", 1 }, { "[a-c]+", "abd", 0 }, { "[^a-c]+", "xyz", 1 },
	{ "[^a-c]", "b", 0 }, { "[]a]+", "a]a", 1 }, { "[\\d\\s]+", "1 2\t3", 1 },
	{ "\\d+", "0123", 1 }, { "\\D", "5", 0 }, { "\\S+", "a b", 0 },
	{ "[\\W]", "_", 0 }, { "[\\W]", "-", 1 }, { "[a\\-z]", "-", 1 }, { "[a\\-z]", "m", 0 },
	{ ".", "\n", 0 }, { "...", "\xc3\xa9t\xc3\xa9", 1 },  /* code points, not bytes */
	{ "[\xc3\xa0-\xc3\xbf]+", "\xc3\xa9\xc3\xa8", 1 }, { "\\x41\\x{1F600}", "A\xf0\x9f\x98\x80", 1 },
	/* assertions */
	{ "^abc$", "abc", 1 }, { "a^b", "ab", 0 }, { "a$|b", "a", 1 },
	{ "\\bfoo\\b", "foo", 1 }, { "a\\Bb", "ab", 1 }, { "a\\bb", "ab", 0 },
	{ "a\\b.", "a b", 0 }, { "\\Aab\\z", "ab", 1 },
	/* linear time where backtracking is exponential: (a?){n}a{n} on a^n */
	{ "(a?){30}a{30}", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1 },
	{ "(a*)*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac", 0 },
};

Test(regex, matches)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		cr_expect_eq(full(cases[i].pattern, cases[i].s), cases[i].want,
		             "'%s' on '%s': want %d", cases[i].pattern, cases[i].s,
		             cases[i].want);
}

Test(regex, not_utf8)
{
	cr_expect_eq(full("a.c", "a\xff" "c"), BS_ERR_UTF8);
	cr_expect_eq(full(".*", "\xc0\xaf"), BS_ERR_UTF8);         /* overlong */
	cr_expect_eq(full(".*", "\xed\xa0\x80"), BS_ERR_UTF8);     /* surrogate */
	cr_expect_eq(full(".*", "ab\xe2\x82"), BS_ERR_UTF8);       /* truncated */
}

/* Patterns burncc refuses: the message names what and where. */
Test(regex, refused)
{
	static const struct { const char *pattern, *says; } bad[] = {
		{ "(?i)abc", "flags" }, { "\\pL", "escape" }, { "a{1001}", "over 1000" },
		{ "[[:alpha:]]", "POSIX" }, { "(abc", "')'" }, { "abc)", "'('" },
		{ "a**", "repetition of a repetition" }, { "*a", "repetition of nothing" },
		{ "[b-a]", "out of order" }, { "abc\\", "backslash" }, { "[ab", "']'" },
		{ "\xff", "UTF-8" }, { "a{3,2}", "m < n" }, { "(?P<n>a)", "named" },
	};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		Ctx c;
		Arena a;
		int32_t *prog;
		int64_t n;
		burn_ctx_init(&c, "test");
		arena_init(&a);
		cr_expect_neq(regex_compile(&c, &a, bad[i].pattern, &prog, &n), BURN_OK,
		              "'%s' compiled", bad[i].pattern);
		cr_expect(strstr(c.msg, bad[i].says), "'%s': %s", bad[i].pattern, c.msg);
		arena_free(&a);
	}
}

/* A heap too small: BS_ERR_SPACE, the bytes past its capacity untouched,
 * every output still a valid string. */
Test(strings, heap_bound)
{
	int64_t h[2 + 2 + 1];    /* 16 bytes of heap, then a guard word */
	burn_str a[2] = { "abcdef", "ghijkl" }, b[1] = { "xyz" }, y[2];
	int64_t bc[] = { 1, 2, 1, 0 };

	h[0] = 0;
	h[1] = 16;
	h[4] = 0x5a5a5a5a;
	bs_concat(a, b, bc, y, h, 2);
	cr_expect_eq(h[0], BS_ERR_SPACE);
	cr_expect_str_eq(y[0], "abcdefxyz");
	cr_expect_str_eq(y[1], "");
	cr_expect_eq(h[4], 0x5a5a5a5a);

	h[0] = 0;
	h[1] = 32;
	bs_concat(a, b, bc, y, h, 2);
	cr_expect_eq(h[0], 20);
	cr_expect_str_eq(y[1], "ghijklxyz");
}

Test(strings, case_change)
{
	int64_t h[2 + 8];
	burn_str x[3] = { "Stra\xc3\x9f" "e \xc3\x89t\xc3\xa9", "\xce\xa3\xce\xbf\xcf\x82", "a\xff" }, y[3];

	h[0] = 0;
	h[1] = 64;
	bs_normalize(x, y, h, 2, 2);
	cr_expect_str_eq(y[0], "STRA\xc3\x9f" "E \xc3\x89T\xc3\x89");   /* sharp s kept */
	cr_expect_str_eq(y[1], "\xce\xa3\xce\x9f\xce\xa3");             /* final sigma */
	bs_normalize(x + 1, y, h, 1, 1);
	cr_expect_str_eq(y[0], "\xcf\x83\xce\xbf\xcf\x82");
	bs_normalize(x + 2, y, h, 1, 1);
	cr_expect_eq(h[0], BS_ERR_UTF8);
}

/*
 * regex.h - RegexFullMatch's patterns (RE2 syntax, a subset) compiled
 * into the Thompson-NFA programs that runtime/strings.inc runs.
 */
#ifndef BURN_REGEX_H
#define BURN_REGEX_H
#include "ir/base.h"

/*
 * Compile pattern (NUL-terminated UTF-8) into a program of *count int32
 * words allocated from a (layout: runtime/strings.inc, "regular
 * expressions").  The subset: literals, `.`, classes `[...]` and `[^...]`
 * with ranges, the escapes \d \D \w \W \s \S \b \B \A \z \n \t \r \f \v
 * \xHH \x{H...} and an escaped punctuation character, groups `(...)` and
 * `(?:...)`, `|`, `*` `+` `?` `{n}` `{n,}` `{n,m}` (each optionally
 * non-greedy with `?`, which a full match cannot tell apart), `^` and `$`
 * (the text's start and end: RE2 without the m flag).  A pattern outside
 * it (flags, \p classes, named groups, repetition over 1000) or that is
 * not UTF-8 is BURN_ERR_UNSUPPORTED or BURN_ERR_INVALID, the message
 * naming the offset.  The program's scratch is 5 * prog[0] + 1 words.
 */
int regex_compile(Ctx *c, Arena *a, const char *pattern, int32_t **prog,
                  int64_t *count);

#endif

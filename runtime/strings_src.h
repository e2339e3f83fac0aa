/*
 * strings_src.h - the text of runtime/strings.inc, NUL-terminated, made by
 * the build (runtime/embed.cmake): the C renderer copies it into modules
 * that have string kernels, so they compute what burncc folds with.
 */
#ifndef BURN_STRINGS_SRC_H
#define BURN_STRINGS_SRC_H

extern const char burn_strings_src[];

#endif

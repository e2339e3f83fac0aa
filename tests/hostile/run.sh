#!/bin/sh
# run.sh BURNCC - the models of make_models.py (hostile names, long fused
# chains) must give C that is harmless and correct.  For every case folder:
#
#   1. burncc check builds it with gcc and with clang (-std=c99 -Wall
#      -Wextra -Werror -Wtrigraphs), runs it and compares the outputs with
#      numpy's;
#   2. the generated .c and .h are plain text: only tab, newline and
#      printable ASCII, and no "??" (a trigraph's start) anywhere;
#   3. compiling the model from another folder gives byte-identical files
#      (stable identifiers; the model's path is not in the text);
#   4. the object file, with each compiler, defines exactly the five
#      exported symbols hm_run, hm_run_v, hm_inputs, hm_outputs,
#      hm_strerror and has
#      no writable data section or common symbol at all (an injected
#      `int x = 42;`, even a static one, would be one);
#   5. hm_inputs[i].name and hm_outputs[i].name are the model's names byte
#      for byte (names.txt), read by a driver that includes hm.h.
#
# Then a header name that #include cannot hold and a prefix over 100
# characters are errors that leave no file.
#
# clang is clang-19, else clang; without any clang the gcc half still runs
# and the script exits 77 (ctest: skipped) to say the clang half did not.
set -u
if [ $# -ne 1 ]; then
	echo "usage: $0 path/to/burncc" >&2
	exit 2
fi
burncc=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
flags="-std=c99 -Wall -Wextra -Werror -Wtrigraphs"
ccs=gcc
clang=
for c in clang-19 clang; do
	if command -v "$c" >/dev/null 2>&1; then
		clang=$c
		break
	fi
done
[ -n "$clang" ] && ccs="gcc $clang"
fail=0
bad() {
	echo "FAIL $*"
	fail=$((fail + 1))
}

cat >"$tmp/names.c" <<'EOF'
#include <stdio.h>
#include "hm.h"
static void put(const char *what, const char *s)
{
	printf("%s ", what);
	for (; *s; s++)
		printf("%02x", (unsigned char)*s);
	printf("\n");
}
int main(void)
{
	int i;
	for (i = 0; i < HM_NUM_INPUTS; i++)
		put("in", hm_inputs[i].name);
	for (i = 0; i < HM_NUM_OUTPUTS; i++)
		put("out", hm_outputs[i].name);
	return 0;
}
EOF
printf 'hm_inputs\nhm_outputs\nhm_run\nhm_run_v\nhm_strerror\n' >"$tmp/want_syms"

# 1. results, with each compiler
for cc in $ccs; do
	if CC=$cc BURNCC_CFLAGS="-O1 -Wtrigraphs" "$burncc" check -j 2 "$here" >"$tmp/check.log" 2>&1; then
		echo "ok   check with $cc: $(tail -n 1 "$tmp/check.log")"
	else
		bad "check with $cc:"
		grep -v '^PASS' "$tmp/check.log" | head -n 20
	fi
done

for d in "$here"/*/; do
	case=$(basename "$d")
	[ -f "$d/model.onnx" ] || continue
	w=$tmp/$case
	mkdir -p "$w/a" "$w/b/deeper/still" || exit 2
	cp "$d/model.onnx" "$w/b/deeper/still/model.onnx" || exit 2
	if ! "$burncc" "$d/model.onnx" --name hm -o "$w/a/hm.c" >"$w/err" 2>&1 ||
	   ! "$burncc" "$w/b/deeper/still/model.onnx" --name hm -o "$w/b/hm.c" >>"$w/err" 2>&1; then
		bad "$case: burncc: $(head -c 300 "$w/err")"
		continue
	fi
	why=
	# 2. plain text
	if LC_ALL=C grep -n '[^[:print:]	]' "$w/a/hm.c" "$w/a/hm.h" >"$w/grep" 2>&1; then
		why="$why; bytes outside printable ASCII: $(head -c 200 "$w/grep")"
	fi
	if grep -n '??' "$w/a/hm.c" "$w/a/hm.h" >"$w/grep" 2>&1; then
		why="$why; a '??' sequence: $(head -c 200 "$w/grep")"
	fi
	# 3. stable, path-free
	if ! cmp -s "$w/a/hm.c" "$w/b/hm.c" || ! cmp -s "$w/a/hm.h" "$w/b/hm.h"; then
		why="$why; output differs when compiled from another path"
	fi
	for cc in $ccs; do
		# 4. symbols
		if ! $cc $flags -O1 -c "$w/a/hm.c" -I "$w/a" -o "$w/hm.o" >"$w/cc.log" 2>&1; then
			why="$why; $cc cannot build it: $(grep -m1 -E 'error|warning' "$w/cc.log" | head -c 300)"
			continue
		fi
		nm -g --defined-only "$w/hm.o" | awk '{print $3}' | sort >"$w/syms"
		if ! cmp -s "$w/syms" "$tmp/want_syms"; then
			why="$why; $cc: exported symbols: $(tr '\n' ' ' <"$w/syms" | head -c 300)"
		fi
		# writable sections (.data.rel.ro is read-only once relocated)
		{ size -A "$w/hm.o" | awk '$1 ~ /^\.(data|bss|tdata|tbss)($|\.)/ &&
		      $1 !~ /^\.data\.rel\.ro/ && $2 > 0 {print $1}'
		  nm "$w/hm.o" | awk '$2 == "C" {print $3}'; } >"$w/wsyms"
		if [ -s "$w/wsyms" ]; then
			why="$why; $cc: writable data: $(tr '\n' ' ' <"$w/wsyms" | head -c 300)"
		fi
		# 5. names
		if ! $cc $flags -I "$w/a" "$tmp/names.c" "$w/hm.o" -lm -o "$w/names" >"$w/cc.log" 2>&1; then
			why="$why; $cc: the names driver does not build: $(grep -m1 -E 'error|warning' "$w/cc.log" | head -c 300)"
		elif ! "$w/names" >"$w/names.txt" || ! cmp -s "$w/names.txt" "$d/names.txt"; then
			why="$why; $cc: names in hm_inputs/hm_outputs differ from names.txt"
		fi
	done
	if [ -n "$why" ]; then
		bad "$case${why}"
	else
		echo "ok   $case"
	fi
done
# the user's own names: a header name that cannot be #included, and an
# over-long prefix, are errors that leave no file behind
m=$here/dup_output/model.onnx
mkdir -p "$tmp/user" || exit 2
for args in "-o $tmp/user/q\"uote.c" "-o $tmp/user/tri??=graph.c" \
            "-o $tmp/user/ok.c --name $(printf 'p%.0s' $(seq 101))"; do
	# shellcheck disable=SC2086 # args: words split on purpose
	if "$burncc" "$m" $args >"$tmp/user/err" 2>&1; then
		bad "accepted: burncc $args"
	elif ! grep -qE "cannot be #included|C identifier" "$tmp/user/err"; then
		bad "burncc $args: $(head -c 200 "$tmp/user/err")"
	elif [ -n "$(ls "$tmp/user")" ] && [ "$(ls "$tmp/user")" != err ]; then
		bad "burncc $args left $(ls "$tmp/user" | tr '\n' ' ')"
	else
		echo "ok   rejected: burncc ${args#"$tmp/user/"}" | cut -c1-80
	fi
done
echo "$fail failed"
[ "$fail" -eq 0 ] || exit 1
if [ -z "$clang" ]; then
	echo "NOT RUN: the clang half (no clang-19 or clang on PATH)"
	exit 77
fi
exit 0

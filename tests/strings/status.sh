#!/bin/sh
# status.sh BURNCC NODE_DIR - the string statuses of generated modules
# (status.c): a full string heap and text that is not UTF-8 are statuses,
# never a write past the arena.  Skipped (77) without a C compiler.
burncc=$1 node=$2
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || { echo "SKIPPED: no C compiler ($cc)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/burncc-strings-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
set -e
"$burncc" --string-bytes 16 --name cat "$node/test_string_concat/model.onnx" -o "$tmp/cat.c"
"$burncc" --name re "$node/test_regex_full_match_basic/model.onnx" -o "$tmp/re.c"
$cc -std=c99 -pedantic -Wall -Wextra -Werror -O1 -I"$tmp" "$tmp/cat.c" "$tmp/re.c" \
	"$(dirname "$0")/status.c" -o "$tmp/status"
"$tmp/status"

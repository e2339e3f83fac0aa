#!/bin/sh
# run.sh BURNCC - feed every case of cases.txt to the compiler and check that
# it is rejected cleanly: non-zero exit status that is not a crash (< 128),
# exactly one line on stderr containing the expected substring, and no
# output files left behind.  An optional third column of cases.txt holds
# extra burncc flags for the case (e.g. --max-nodes 3).  A case that runs
# over 60 s counts as a hang.  Prints ok/FAIL per case and a summary; exits
# non-zero if any case failed.
set -u
if [ $# -ne 1 ]; then
	echo "usage: $0 path/to/burncc" >&2
	exit 2
fi
burncc=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0
fail=0
tab=$(printf '\t')
while IFS="$tab" read -r file want flags; do
	case $file in ''|'#'*) continue ;; esac
	rm -f "$tmp/out.c" "$tmp/out.h" "$tmp/err"
	# shellcheck disable=SC2086 # flags: zero or more words, split on purpose
	timeout 60 "$burncc" ${flags:-} "$here/$file" -o "$tmp/out.c" >/dev/null 2>"$tmp/err" </dev/null
	rc=$?
	lines=$(wc -l <"$tmp/err" | tr -d ' ')
	why=
	if [ "$rc" -eq 0 ]; then
		why="accepted (exit 0)"
	elif [ "$rc" -eq 124 ]; then
		why="hung (killed after 60 s)"
	elif [ "$rc" -ge 128 ]; then
		why="crashed (exit $rc)"
	elif [ "$lines" -ne 1 ]; then
		why="stderr has $lines lines: $(head -c 300 "$tmp/err" | tr '\n' '|')"
	elif ! grep -qF -- "$want" "$tmp/err"; then
		why="message lacks '$want': $(cat "$tmp/err")"
	elif [ -e "$tmp/out.c" ] || [ -e "$tmp/out.h" ]; then
		why="left an output file behind"
	fi
	if [ -z "$why" ]; then
		echo "ok   $file"
		pass=$((pass + 1))
	else
		echo "FAIL $file: $why"
		fail=$((fail + 1))
	fi
done <"$here/cases.txt"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]

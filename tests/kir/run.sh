#!/bin/sh
# Golden kernel files for `burncc kir` (the kernel-IR text parser).
#   tests/kir/NAME.kir      a kernel file; a line '# args: ...' gives extra
#                           arguments (e.g. --run --in v0=1,2,3)
#   tests/kir/NAME.out      the expected stdout (the canonical print, or
#                           with --run the values the kernels write)
#   tests/kir/bad/NAME.kir  input the parser must refuse: exit status 1
#   tests/kir/bad/NAME.err  the expected stderr (message with line, column,
#                           the source line and a caret)
# Usage: run.sh BURNCC [--update]   (--update rewrites the expected files)
burncc=${1:?usage: run.sh BURNCC [--update]}
case $burncc in /*) ;; *) burncc=$(pwd)/$burncc ;; esac
cd "$(dirname "$0")" || exit 1
pass=0 fail=0
check() {  # name got expected-file
	if [ "$update" ]; then
		printf '%s\n' "$2" > "$3"
	fi
	if [ "$2" = "$(cat "$3" 2>/dev/null)" ]; then
		pass=$((pass + 1))
	else
		echo "FAIL $1: output differs from $3:"
		printf '%s\n' "$2" | diff "$3" - | sed 's/^/    /'
		fail=$((fail + 1))
	fi
}
update=
[ "$2" = "--update" ] && update=1
for f in *.kir; do
	name=${f%.kir}
	args=$(sed -n 's/^# args: //p' "$f")
	# shellcheck disable=SC2086
	got=$("$burncc" kir $args "$f" 2>&1)
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL $name: exit status $rc: $got"
		fail=$((fail + 1))
		continue
	fi
	check "$name" "$got" "$name.out"
	# the canonical print parses back to itself
	if [ -z "$args" ]; then
		again=$(printf '%s\n' "$got" | "$burncc" kir - 2>&1)
		check "$name (reprint)" "$again" "$name.out"
	fi
done
for f in bad/*.kir; do
	name=${f%.kir}
	got=$("$burncc" kir "$f" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -ne 1 ]; then
		echo "FAIL $name: exit status $rc, expected 1"
		fail=$((fail + 1))
		continue
	fi
	check "$name" "$got" "$name.err"
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

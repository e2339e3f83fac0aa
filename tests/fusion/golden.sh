#!/bin/sh
# Golden kernel lists: for each model in tests/fusion, the kernels burncc
# makes (one line each: index, name, the graph ops it fuses) must equal
# kernels.txt beside the model, so a change in fusion shows as a diff.
#   tests/fusion/golden.sh BURNCC           check
#   tests/fusion/golden.sh BURNCC --update  rewrite kernels.txt
burncc=${1:?usage: golden.sh BURNCC [--update]}
here=$(cd "$(dirname "$0")" && pwd)
pass=0 fail=0
for d in "$here"/*/; do
	name=$(basename "$d")
	[ -f "$d/model.onnx" ] || continue
	got=$("$burncc" --emit=kernels "$d/model.onnx" | grep '^kernel [0-9]')
	if [ "$2" = "--update" ]; then
		printf '%s\n' "$got" > "$d/kernels.txt"
	fi
	if [ "$got" = "$(cat "$d/kernels.txt" 2>/dev/null)" ]; then
		echo "PASS $name"
		pass=$((pass + 1))
	else
		echo "FAIL $name: kernel list differs from kernels.txt:"
		printf '%s\n' "$got" | diff "$d/kernels.txt" - | sed 's/^/    /'
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

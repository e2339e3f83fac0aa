#!/bin/sh
# bf16 rows on the GPU schedules (passes/schedule_gpu.c): Softmax over
# rows of 512 and 96 takes a subgroup a row (rows(0,B,256,32): lane
# exchanges, no barrier) with the row in registers as f32 (inreg);
# LayerNormalization over 768 a block a row, inreg.  Checked on the c and
# gpu targets (the interpreter runs the subgroups and checks races)
# against float64 references, and the cuda PTX through ptxas where it is.
#   rows16.sh BURNCC
burncc=${1:?usage: rows16.sh BURNCC}
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
$py -c 'import onnx, numpy' 2>/dev/null || { echo "SKIP: python3 with onnx and numpy needed"; exit 77; }
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
fail=0
$py "$here/make_rows16.py" "$d" || exit 1
"$burncc" check --target c "$d"/* || fail=1
"$burncc" check --target gpu "$d"/* || fail=1
for c in "softmax512 k_softmax: rows(0,5,256,32) inreg" "softmax96 k_softmax: rows(0,2,256,32) inreg" \
         "layernorm768 k_layernormalization: rows(0,24,256) inreg"; do
	n=${c%% *} want=${c#* }
	got=$("$burncc" --target gpu --emit=schedule "$d/$n/model.onnx")
	[ "$got" = "$want" ] || { echo "FAIL $n: schedule '$got', expected '$want'"; fail=1; }
done
ptxas=$(command -v ptxas || ls /usr/local/cuda/bin/ptxas 2>/dev/null)
if [ -n "$ptxas" ]; then
	for n in softmax512 layernorm768; do
		"$burncc" --target cuda --emit=ptx "$d/$n/model.onnx" > "$d/$n.ptx" &&
		"$ptxas" -arch=sm_90 "$d/$n.ptx" -o "$d/$n.cubin" || { echo "FAIL $n: ptxas"; fail=1; }
	done
else
	echo "ptxas not found: the PTX was not assembled (the rest ran)"
fi
[ $fail = 0 ] && echo "rows16: all passed"
exit $fail

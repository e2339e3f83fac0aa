#!/bin/sh
# model_kinds: the four models of bench/make_kinds.py (a MobileNetV2-like
# CNN, a U-Net, a GPT-2-style decoder, an LSTM; exported from PyTorch,
# seeded) compiled by burncc and checked against PyTorch's outputs, on
# the c and llvm targets.  77 (ctest's SKIP): no torch or onnx for
# /usr/bin/python3, so the models could not be made.
#   kinds.sh BURNCC SOURCE_DIR OUT_DIR
set -e
burncc=$1
src=$2
out=$3
rm -rf "$out"
mkdir -p "$out"
rc=0
/usr/bin/python3 "$src/bench/make_kinds.py" "$out" 2>"$out/export.log" || rc=$?
if [ "$rc" = 77 ]; then
	echo "no torch/onnx for /usr/bin/python3: the models were not made (did not run)"
	exit 77
fi
[ "$rc" = 0 ] || { cat "$out/export.log"; exit 1; }
"$burncc" check "$out"
"$burncc" check --target llvm "$out"

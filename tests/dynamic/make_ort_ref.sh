#!/bin/sh
# Store ONNX Runtime's outputs of tests/dynamic/transformer.py's encoder
# block at (1, 7), (8, 128) and (3, 1), on the test's own inputs, in
# tests/dynamic/transformer_ort/y_B_S.f32 (raw little-endian f32
# [B, S, 32]); ctest dynamic_transformer checks burncc against them.  Run
# again after changing the model, its weights or its inputs.
#   tests/dynamic/make_ort_ref.sh
# onnxruntime-node is installed from npm into bench/peers (not committed),
# as bench/models.sh does.
set -e
here=$(cd "$(dirname "$0")" && pwd)
peers="$here/../../bench/peers"
if [ ! -d "$peers/node_modules/onnxruntime-node" ]; then
	mkdir -p "$peers"
	(cd "$peers" && npm install --no-audit --no-fund --ignore-scripts \
		onnxruntime-node@1.30.0 >/dev/null)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$here/transformer.py" --make-only "$work"
mkdir -p "$here/transformer_ort"
set --
for bs in 1:7 8:128 3:1; do
	b=${bs%:*}; s=${bs#*:}
	set -- "$@" "$b" "$s" "$work/x_${b}_$s.bin" "$here/transformer_ort/y_${b}_$s.f32"
done
ORT_PATH="$peers/node_modules/onnxruntime-node" node "$here/ort_ref.js" "$work/model.onnx" "$@"
v=$(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$peers/node_modules/onnxruntime-node/package.json" | head -1)
echo "onnxruntime-node $v" > "$here/transformer_ort/VERSION"
ls -l "$here/transformer_ort"

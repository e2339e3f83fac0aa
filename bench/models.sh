#!/bin/sh
# Side by side: burncc-generated C vs ONNX Runtime (onnxruntime-node, CPU)
# on the models in ../shared/models, same inputs, same machine, same run.
#   bench/models.sh [build] [threads]
# ONNX Runtime is installed from npm into bench/peers (not committed).
set -e
BUILD=${1:-build}
THREADS=${2:-1}
here=$(cd "$(dirname "$0")" && pwd)
models="$here/../../shared/models"
out="$BUILD/bench/models"
mkdir -p "$out"
if [ ! -d "$here/peers/node_modules/onnxruntime-node" ]; then
	mkdir -p "$here/peers"
	(cd "$here/peers" && npm install --no-audit --no-fund --ignore-scripts \
		onnxruntime-node@1.30.0 >/dev/null)
fi
flags="-O3 -march=native"
[ "$THREADS" -gt 1 ] && flags="$flags -fopenmp"
printf "%-14s %12s %12s %8s   (ms per inference, median; %s thread(s); cc %s)\n" \
	model burncc onnxruntime ratio "$THREADS" "$flags"
for m in "$models"/*/; do
	name=$(basename "$m")
	"$BUILD/burncc" "$m/model.onnx" -o "$out/$name.c" --name model
	nin=$(sed -n 's/#define MODEL_NUM_INPUTS \(.*\)/\1/p' "$out/$name.h")
	nout=$(sed -n 's/#define MODEL_NUM_OUTPUTS \(.*\)/\1/p' "$out/$name.h")
	arena=$(sed -n 's/#define MODEL_ARENA_BYTES \(.*\)/\1/p' "$out/$name.h")
	${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=199309L $flags -DNIN=$nin -DNOUT=$nout \
		-DARENA=$arena "$here/model_bench.c" "$out/$name.c" -lm -o "$out/$name"
	b=$(OMP_NUM_THREADS=$THREADS "$out/$name" "$name" | awk '{print $2}')
	o=$(ORT_PATH="$here/peers/node_modules/onnxruntime-node" \
		node "$here/ort_bench.js" "$m/model.onnx" "$THREADS" | awk '{print $1}')
	printf "%-14s %12s %12s %8s\n" "$name" "$b" "$o" \
		"$(awk -v a="$b" -v b="$o" 'BEGIN { printf "%.2fx", b / a }')"
done

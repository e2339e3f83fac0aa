#!/bin/sh
# Side by side: burncc-generated C vs ONNX Runtime (onnxruntime-node, CPU)
# on the models in ../shared/models, same inputs, same machine, same run.
#   bench/models.sh [build] [threads] [DIR...]
# Each DIR is a model folder (DIR/model.onnx) or a folder of them
# (bench/make_kinds.py writes one); none: ../shared/models.
# ONNX Runtime is installed from npm into bench/peers (not committed).
# CPU=NAME compiles with --cpu NAME (avx512, avx2, generic, native);
# BENCH_CFLAGS replaces -O3 -march=native.
set -e
BUILD=${1:-build}
THREADS=${2:-1}
[ $# -gt 2 ] && shift 2 || set --
here=$(cd "$(dirname "$0")" && pwd)
[ $# -gt 0 ] || set -- "$here/../../shared/models"
dirs=
for d in "$@"; do
	if [ -f "$d/model.onnx" ]; then dirs="$dirs ${d%/}"
	else for m in "$d"/*/; do if [ -f "$m/model.onnx" ]; then dirs="$dirs ${m%/}"; fi; done
	fi
done
out="$BUILD/bench/models"
mkdir -p "$out"
if [ ! -d "$here/peers/node_modules/onnxruntime-node" ]; then
	mkdir -p "$here/peers"
	(cd "$here/peers" && npm install --no-audit --no-fund --ignore-scripts \
		onnxruntime-node@1.30.0 >/dev/null)
fi
flags=${BENCH_CFLAGS:--O3 -march=native}
cpu=${CPU:+--cpu $CPU}
[ "$THREADS" -gt 1 ] && flags="$flags -fopenmp"
printf "%s thread(s); cc %s%s; ms per inference, median and best over >= 1 s;\n" "$THREADS" "$flags" "${cpu:+; burncc $cpu}"
printf "ratio = ONNX Runtime / burncc, of the best times; %s\n" "$(uptime | sed 's/.*load/load/')"
printf "%-14s %10s %10s %10s %10s %8s\n" model burncc best onnxrt best ratio
for m in $dirs; do
	name=$(basename "$m")
	"$BUILD/burncc" $cpu "$m/model.onnx" -o "$out/$name.c" --name model
	nin=$(sed -n 's/#define MODEL_NUM_INPUTS \(.*\)/\1/p' "$out/$name.h")
	nout=$(sed -n 's/#define MODEL_NUM_OUTPUTS \(.*\)/\1/p' "$out/$name.h")
	arena=$(sed -n 's/#define MODEL_ARENA_BYTES \(.*\)/\1/p' "$out/$name.h")
	${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=199309L $flags -DNIN=$nin -DNOUT=$nout \
		-DARENA=$arena "$here/model_bench.c" "$out/$name.c" -lm -o "$out/$name"
	b=$(OMP_NUM_THREADS=$THREADS "$out/$name" "$name" | awk '{print $2, $3}')
	o=$(ORT_PATH="$here/peers/node_modules/onnxruntime-node" \
		node "$here/ort_bench.js" "$m/model.onnx" "$THREADS" | awk '{print $1, $2}')
	echo "$name $b $o" | awk '{ printf "%-14s %10s %10s %10s %10s %7.2fx\n", $1, $2, $3, $4, $5, $5 / $3 }'
done

#!/bin/sh
# The models of ../shared/models imported into a .burn script and run
# through libburn's JIT (build/models_jit) against the same model
# compiled to C by burncc (cc -O3 -march=native, bench/model_bench.c), on
# the same inputs, one thread each.  The two run alternately, ROUNDS
# times each (each run: median ms per inference over at least 1 s); the
# table gives the median of those medians, their [min, max], and
# JIT / C.  Usage: bench/models_jit.sh [build] [rounds]
set -e
BUILD=${1:-build}
ROUNDS=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
models="$here/../../shared/models"
out="$BUILD/bench/models"
mkdir -p "$out"
export BURN_THREADS=1 OMP_NUM_THREADS=1
echo "== $(date -u '+%F %T') UTC, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
stats() {  # values... -> "median [min, max]"
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.4f [%.4f, %.4f]", m, v[1], v[NR] }'
}
printf "%-14s %-28s %-28s %s\n" model "C (ms)" "JIT (ms)" "JIT / C"
for m in "$models"/*/; do
	name=$(basename "$m")
	"$BUILD/burncc" "$m/model.onnx" -o "$out/$name.c" --name model
	nin=$(sed -n 's/#define MODEL_NUM_INPUTS \(.*\)/\1/p' "$out/$name.h")
	nout=$(sed -n 's/#define MODEL_NUM_OUTPUTS \(.*\)/\1/p' "$out/$name.h")
	arena=$(sed -n 's/#define MODEL_ARENA_BYTES \(.*\)/\1/p' "$out/$name.h")
	${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=199309L -O3 -march=native -DNIN=$nin \
		-DNOUT=$nout -DARENA=$arena "$here/model_bench.c" "$out/$name.c" -lm \
		-o "$out/$name"
	cs= js=
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		cs="$cs $("$out/$name" "$name" | awk '{print $2}')"
		js="$js $("$BUILD/models_jit" "$m/model.onnx" "$name" 2>>"$out/models_jit.log" | awk '{print $2}')"
		r=$((r + 1))
	done
	# shellcheck disable=SC2086
	c=$(stats $cs)
	# shellcheck disable=SC2086
	j=$(stats $js)
	printf "%-14s %-28s %-28s %s\n" "$name" "$c" "$j" \
		"$(awk -v a="${j%% *}" -v b="${c%% *}" 'BEGIN { printf "%.3f", a / b }')"
done
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

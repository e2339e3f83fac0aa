#!/bin/sh
# Two builds of burncc side by side on the models in ../shared/models:
# each model compiled by both, the two executables run alternately
# (ROUNDS times each, the median of each run's median), same machine, same
# run.  For "no model slower than before" checks of compiler changes.
#   bench/builds.sh OLD_BUILD NEW_BUILD [threads] [rounds]
# e.g. git worktree add /tmp/old 5610f80 && cmake -S /tmp/old -B /tmp/old/build
#      && cmake --build /tmp/old/build && bench/builds.sh /tmp/old/build build
set -e
OLD=$1
NEW=$2
THREADS=${3:-1}
ROUNDS=${4:-5}
[ -x "$OLD/burncc" ] && [ -x "$NEW/burncc" ] || {
	echo "usage: bench/builds.sh OLD_BUILD NEW_BUILD [threads] [rounds]" >&2
	exit 2
}
here=$(cd "$(dirname "$0")" && pwd)
models="$here/../../shared/models"
out="$NEW/bench/builds"
mkdir -p "$out"
flags="-O3 -march=native"
[ "$THREADS" -gt 1 ] && flags="$flags -fopenmp"
build_one() {   # build_one BUILD NAME MODEL TAG: $out/NAME.TAG
	"$1/burncc" "$3/model.onnx" -o "$out/$2.$4.c" --name model
	h="$out/$2.$4.h"
	nin=$(sed -n 's/#define MODEL_NUM_INPUTS \(.*\)/\1/p' "$h")
	nout=$(sed -n 's/#define MODEL_NUM_OUTPUTS \(.*\)/\1/p' "$h")
	arena=$(sed -n 's/#define MODEL_ARENA_BYTES \(.*\)/\1/p' "$h")
	${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=199309L $flags -DNIN=$nin -DNOUT=$nout \
		-DARENA=$arena "$here/model_bench.c" "$out/$2.$4.c" -lm -o "$out/$2.$4"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf "%-14s %10s %10s %8s   (ms per inference, median of %s runs each, alternating; %s thread(s); cc %s)\n" \
	model old new new/old "$ROUNDS" "$THREADS" "$flags"
for m in "$models"/*/; do
	name=$(basename "$m")
	build_one "$OLD" "$name" "$m" old
	build_one "$NEW" "$name" "$m" new
	: > "$out/$name.old.t"
	: > "$out/$name.new.t"
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		OMP_NUM_THREADS=$THREADS "$out/$name.old" "$name" | awk '{print $2}' >> "$out/$name.old.t"
		OMP_NUM_THREADS=$THREADS "$out/$name.new" "$name" | awk '{print $2}' >> "$out/$name.new.t"
		r=$((r + 1))
	done
	a=$(median < "$out/$name.old.t")
	b=$(median < "$out/$name.new.t")
	printf "%-14s %10s %10s %8s\n" "$name" "$a" "$b" \
		"$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')"
done

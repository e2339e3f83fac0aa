#!/bin/sh
# Interleaved rounds: two builds of burncc and ONNX Runtime on the same
# models, one after the other in each round (>= 1 s each), so that the
# load of a shared machine falls on all three alike; prints each round's
# best ms and, per model, the best of the rounds, the median of the
# rounds' medians, and ONNX Runtime / burncc for both.
#   bench/rounds.sh OLD_BUILD NEW_BUILD [threads] [rounds] [DIR...]
# DIR as in bench/models.sh (a model folder or a folder of them; none:
# ../shared/models).  CPU=NAME compiles both with --cpu NAME; BENCH_CFLAGS
# replaces -O3 -march=native.  ONNX Runtime as bench/models.sh installs it.
set -e
OLD=$1
NEW=$2
THREADS=${3:-1}
ROUNDS=${4:-5}
[ -x "$OLD/burncc" ] && [ -x "$NEW/burncc" ] || {
	echo "usage: bench/rounds.sh OLD_BUILD NEW_BUILD [threads] [rounds] [DIR...]" >&2
	exit 2
}
[ $# -gt 4 ] && shift 4 || set --
here=$(cd "$(dirname "$0")" && pwd)
[ $# -gt 0 ] || set -- "$here/../../shared/models"
dirs=
for d in "$@"; do
	if [ -f "$d/model.onnx" ]; then dirs="$dirs ${d%/}"
	else for m in "$d"/*/; do if [ -f "$m/model.onnx" ]; then dirs="$dirs ${m%/}"; fi; done
	fi
done
ort="$here/peers/node_modules/onnxruntime-node"
[ -d "$ort" ] || { echo "bench/rounds.sh: run bench/models.sh once (it installs ONNX Runtime)" >&2; exit 2; }
out="$NEW/bench/rounds"
mkdir -p "$out"
flags=${BENCH_CFLAGS:--O3 -march=native}
[ "$THREADS" -gt 1 ] && flags="$flags -fopenmp"
cpu=${CPU:+--cpu $CPU}
build_one() {   # build_one BUILD NAME MODEL TAG: $out/NAME.TAG
	"$1/burncc" $cpu "$3/model.onnx" -o "$out/$2.$4.c" --name model
	h="$out/$2.$4.h"
	nin=$(sed -n 's/#define MODEL_NUM_INPUTS \(.*\)/\1/p' "$h")
	nout=$(sed -n 's/#define MODEL_NUM_OUTPUTS \(.*\)/\1/p' "$h")
	arena=$(sed -n 's/#define MODEL_ARENA_BYTES \(.*\)/\1/p' "$h")
	${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=199309L $flags -DNIN=$nin -DNOUT=$nout \
		-DARENA=$arena "$here/model_bench.c" "$out/$2.$4.c" -lm -o "$out/$2.$4"
}
printf "%s thread(s), %s rounds; cc %s%s; best ms of each round (>= 1 s)\n" \
	"$THREADS" "$ROUNDS" "$flags" "${cpu:+; $cpu}"
for m in $dirs; do
	name=$(basename "$m")
	build_one "$OLD" "$name" "$m" old
	build_one "$NEW" "$name" "$m" new
	: > "$out/$name.t"
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		a=$(OMP_NUM_THREADS=$THREADS "$out/$name.old" "$name" | awk '{print $3, $2}')
		b=$(OMP_NUM_THREADS=$THREADS "$out/$name.new" "$name" | awk '{print $3, $2}')
		o=$(ORT_PATH="$ort" node "$here/ort_bench.js" "$m/model.onnx" "$THREADS" | awk '{print $2, $1}')
		echo "$a $b $o" >> "$out/$name.t"
		r=$((r + 1))
	done
	awk -v name="$name" -v load="$(uptime | sed 's/.*load average: //')" '
	function lo(s, v) { return s == "" || v + 0 < s + 0 ? v : s }
	function med(s,    a, n, i, j, t) {   # median of the numbers in s
		n = split(s, a, " ")
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{ ro = ro " " $1; rn = rn " " $3; rt = rt " " $5
	  mo = mo " " $2; mn = mn " " $4; mt = mt " " $6
	  a = lo(a, $1); b = lo(b, $3); o = lo(o, $5) }
	END {
		printf "%s (load %s)\n  old %s\n  new %s\n  ort %s\n", name, load, ro, rn, rt
		printf "  best: old %s, new %s, ort %s; ORT / burncc: old %.2fx, new %.2fx\n",
			a, b, o, o / a, o / b
		printf "  median of the medians: old %s, new %s, ort %s; ORT / burncc: old %.2fx, new %.2fx\n",
			med(mo), med(mn), med(mt), med(mt) / med(mo), med(mt) / med(mn)
	}' "$out/$name.t"
done

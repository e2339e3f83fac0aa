#!/bin/sh
# Side by side: each of the four models compiled with its batch known
# (--dim N=VALUE) and compiled once for any batch (--dynamic-dim N), run
# at the same N, same machine, same run: CPU ms per run (one thread),
# static and dynamic alternated ROUNDS times (default 3), best of each.
#   bench/dynamic.sh [build] [rounds]
# The models are made batch-symbolic by tests/dynamic/models.py
# (--make-only; bert_tiny's batch-2 constants rewritten, as the test does)
# unless BUILD/bench/dynamic/NAME/model.onnx are there already.  The
# first size of each model is its static one (the ONNX file's batch).
set -e
BUILD=${1:-build}
ROUNDS=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
out="$BUILD/bench/dynamic"
mkdir -p "$out"
[ -f "$out/squeezenet1_1/model.onnx" ] ||
	/usr/bin/python3 "$here/../tests/dynamic/models.py" --make-only \
		"$here/../../shared/models" "$out"
flags="-O2 -march=native"
printf "cc %s; CPU ms per run, static (--dim) / dynamic (--dynamic-dim), best of %s alternated; %s\n" \
	"$flags" "$ROUNDS" "$(uptime | sed 's/.*load/load/')"
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }'; }
for spec in mlp:4:400 mlp:32:200 lenet:2:200 lenet:32:50 bert_tiny:2:100 \
            bert_tiny:8:30 squeezenet1_1:1:5 squeezenet1_1:4:3; do
	name=${spec%%:*}; rest=${spec#*:}; n=${rest%%:*}; it=${rest#*:}
	d="$out/$name"
	mkdir -p "$d/s$n" "$d/dyn"
	"$BUILD/burncc" --dim N="$n" -o "$d/s$n/model.c" "$d/model.onnx"
	cc $flags -I"$d/s$n" -o "$d/s$n/run" "$d/s$n/model.c" "$here/dyn_bench.c" -lm
	if [ ! -x "$d/dyn/run" ]; then
		"$BUILD/burncc" --dynamic-dim N -o "$d/dyn/model.c" "$d/model.onnx"
		cc $flags -DDYN -I"$d/dyn" -o "$d/dyn/run" "$d/dyn/model.c" \
			"$here/dyn_bench.c" -lm
	fi
	s=; y=; r=0
	while [ $r -lt "$ROUNDS" ]; do
		s=$(best "$s" "$("$d/s$n/run" "$n" "$it")")
		y=$(best "$y" "$("$d/dyn/run" "$n" "$it")")
		r=$((r + 1))
	done
	printf "%-14s N=%-3s static %8s  dynamic %8s  %6s\n" "$name" "$n" "$s" "$y" \
		"$(awk -v s="$s" -v y="$y" 'BEGIN { printf "%.2fx", y / s }')"
done

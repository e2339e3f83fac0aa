#!/bin/sh
# The encoder block of tests/dynamic/transformer.py (d 32, 2 heads, ff 64)
# compiled with its dims known (--dim batch=B --dim seq=S) and once for any
# (--dynamic-dim batch --dynamic-dim seq: sampled, passes/dynfit.c), run at
# the same (B, S), same machine, same run: CPU ms per run (one thread),
# static and dynamic alternated ROUNDS times (default 3), best of each.
#   bench/dyn_transformer.sh [build] [rounds]
# The model is written by transformer.py --make-only unless
# BUILD/bench/dyn_transformer/model.onnx is there already.
set -e
BUILD=${1:-build}
ROUNDS=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
out="$BUILD/bench/dyn_transformer"
mkdir -p "$out/dyn"
[ -f "$out/model.onnx" ] ||
	/usr/bin/python3 "$here/../tests/dynamic/transformer.py" --make-only "$out"
flags="-O2 -march=native"
printf "cc %s; CPU ms per run, static (--dim) / dynamic (2 dims), best of %s alternated; %s\n" \
	"$flags" "$ROUNDS" "$(uptime | sed 's/.*load/load/')"
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }'; }
"$BUILD/burncc" --dynamic-dim batch --dynamic-dim seq --name model \
	-o "$out/dyn/model.c" "$out/model.onnx"
cc $flags -DDYN -I"$out/dyn" -o "$out/dyn/run" "$out/dyn/model.c" \
	"$here/dyn_tr_bench.c" -lm
for spec in 1:7:2000 8:128:20 3:1:5000 32:128:5; do
	b=${spec%%:*}; rest=${spec#*:}; s=${rest%%:*}; it=${rest#*:}
	d="$out/s${b}_$s"
	mkdir -p "$d"
	"$BUILD/burncc" --dim batch="$b" --dim seq="$s" --name model \
		-o "$d/model.c" "$out/model.onnx"
	cc $flags -I"$d" -o "$d/run" "$d/model.c" "$here/dyn_tr_bench.c" -lm
	st=; dy=; r=0
	while [ $r -lt "$ROUNDS" ]; do
		st=$(best "$st" "$("$d/run" "$b" "$s" "$it")")
		dy=$(best "$dy" "$("$out/dyn/run" "$b" "$s" "$it")")
		r=$((r + 1))
	done
	printf "(batch, seq) = (%3s, %3s)  static %8s  dynamic %8s  %6s\n" "$b" "$s" "$st" "$dy" \
		"$(awk -v s="$st" -v y="$dy" 'BEGIN { printf "%.2fx", y / s }')"
done

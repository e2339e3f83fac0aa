#!/bin/sh
# The CPU descriptions side by side (burncc --cpu): one model compiled for
# each description, each C built with each -march (haswell: AVX2 only;
# native; none: SSE2), timed one thread at a time, interleaved, ROUNDS
# rounds (bench/model_bench.c: median and best ms over >= 1 s).  Prints
# per build the best wall time (and its range over the rounds) and the
# CPU time per inference (user + sys over the runs; robust to load, which
# delays a process without charging it), median and range.
#   bench/cpu.sh [build] [rounds] [model.onnx]
set -e
BUILD=${1:-build}
ROUNDS=${2:-6}
here=$(cd "$(dirname "$0")" && pwd)
M=${3:-$here/../../shared/models/squeezenet1_1/model.onnx}
out="$BUILD/bench/cpu"
mkdir -p "$out"
descs="avx512 avx2 generic"
for d in $descs; do
	"$BUILD/burncc" --cpu $d "$M" -o "$out/m_$d.c" --name model
	nin=$(sed -n 's/#define MODEL_NUM_INPUTS \(.*\)/\1/p' "$out/m_$d.h")
	nout=$(sed -n 's/#define MODEL_NUM_OUTPUTS \(.*\)/\1/p' "$out/m_$d.h")
	arena=$(sed -n 's/#define MODEL_ARENA_BYTES \(.*\)/\1/p' "$out/m_$d.h")
	for a in haswell native sse; do
		march=-march=$a
		[ $a = sse ] && march=
		${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=199309L -O3 $march -DNIN=$nin -DNOUT=$nout \
			-DARENA=$arena "$here/model_bench.c" "$out/m_$d.c" -lm -o "$out/m_${d}_$a"
	done
done
echo "$(basename "$(dirname "$M")"), one thread, $ROUNDS rounds; start: $(date -u +%H:%M) UTC, $(uptime | sed 's/.*load/load/')"
for r in $(seq "$ROUNDS"); do
	for a in haswell native sse; do
		for d in $descs; do
			/usr/bin/time -f "%U %S" -o "$out/time" env OMP_NUM_THREADS=1 \
				"$out/m_${d}_$a" m > "$out/o"
			echo "$a $d $(cat "$out/o") $(cat "$out/time")"
		done
	done
done > "$out/rounds"
echo "end: $(date -u +%H:%M) UTC, $(uptime | sed 's/.*load/load/')"
printf "%-8s %-8s %-22s %s\n" "-march" "--cpu" "best ms (range)" "CPU ms/inference (range)"
awk '{ k = $1 " " $2; n[k]++; b[k, n[k]] = $5; c[k, n[k]] = 1000 * ($7 + $8) / ($6 + 1) }
END { for (k in n) {
	m = n[k]; bl = bh = b[k, 1]; cl = ch = c[k, 1]
	for (i = 1; i <= m; i++) {
		if (b[k, i] < bl) bl = b[k, i]; if (b[k, i] > bh) bh = b[k, i]
		if (c[k, i] < cl) cl = c[k, i]; if (c[k, i] > ch) ch = c[k, i]
		s[i] = c[k, i]
	}
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (s[j] < s[i]) { t = s[i]; s[i] = s[j]; s[j] = t }
	split(k, kk, " ")
	printf "%-8s %-8s %6.2f (%.2f-%.2f)   %6.2f (%.2f-%.2f)\n", kk[1], kk[2], bl, bl, bh, s[int((m + 1) / 2)], cl, ch
} }' "$out/rounds" | sort

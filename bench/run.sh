#!/bin/sh
# Benchmarks, run side by side in one process each.  Usage: bench/run.sh [build]
set -e
BUILD=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
out="$BUILD/bench"
mkdir -p "$out"
CFLAGS=${CFLAGS:--O3 -march=native}
echo "== fused composed GELU vs memcpy (cc $CFLAGS)"
"$BUILD/burncc" "$here/gelu/model.onnx" -o "$out/gelu_model.c"
${CC:-cc} -std=c99 -D_POSIX_C_SOURCE=199309L $CFLAGS -Wall -Wextra -I"$out" \
	"$here/gelu.c" "$out/gelu_model.c" -lm -o "$out/gelu"
"$out/gelu" 10
echo
echo "== the same, with -fopenmp (OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)})"
${CC:-cc} -std=c99 -D_POSIX_C_SOURCE=199309L $CFLAGS -fopenmp -Wall -Wextra -I"$out" \
	"$here/gelu.c" "$out/gelu_model.c" -lm -o "$out/gelu_omp"
"$out/gelu_omp" 10

#!/bin/sh
# SGEMM 1024x1024x1024, one thread: the C burncc generates for a MatMul
# (bench/sgemm/model.onnx) vs OpenBLAS (Debian's libopenblas, its own
# kernel choice: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset), same run.
#   bench/sgemm.sh [build] [rounds]
set -e
BUILD=${1:-build}
ROUNDS=${2:-20}
here=$(cd "$(dirname "$0")" && pwd)
out="$BUILD/bench/sgemm"
mkdir -p "$out"
[ -f "$here/sgemm/model.onnx" ] || /usr/bin/python3 "$here/make_sgemm.py"
"$BUILD/burncc" "$here/sgemm/model.onnx" -o "$out/sgemm_model.c" --name model
arena=$(sed -n 's/#define MODEL_ARENA_BYTES \(.*\)/\1/p' "$out/sgemm_model.h")
CFLAGS=${CFLAGS:--O3 -march=native}
${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=199309L $CFLAGS -DARENA=$arena \
	"$here/sgemm.c" "$out/sgemm_model.c" -lopenblas -lm -o "$out/sgemm"
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
echo "SGEMM 1024^3 f32, one thread (cc $CFLAGS; $(uptime | sed 's/.*load/load/'))"
OPENBLAS_VERBOSE=2 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 "$out/sgemm" "$ROUNDS" 2>&1 |
	sed "s/^Core: /openblas kernel: /"

#!/bin/sh
# Compile time of the C of a 20M-parameter model (bench/make_big.py): burncc
# to C, then `cc -O2 -c` of it, each timed (the weights are C string
# literals, which compilers take in fast).
#   bench/bigc.sh [build]
set -e
BUILD=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
out="$BUILD/bench/bigc"
mkdir -p "$out"
[ -f "$out/big.onnx" ] || /usr/bin/python3 "$here/make_big.py" "$out/big.onnx"
echo "20M parameters, $(uptime | sed 's/.*load/load/')"
/usr/bin/time -f "burncc: %e s wall, %U s user" "$BUILD/burncc" "$out/big.onnx" -o "$out/big.c"
ls -l "$out/big.c" | awk '{printf "C: %.0f MB\n", $5 / 1e6}'
/usr/bin/time -f "${CC:-cc} -O2 -c: %e s wall, %U s user" ${CC:-cc} -O2 -c "$out/big.c" -o "$out/big.o"

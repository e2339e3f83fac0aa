#!/bin/sh
# Compile time of the C of a 20M-parameter model (bench/make_big.py): burncc
# to C, then `cc -O2 -c` of it, each timed, with the weights as C string
# literals (the default) and with --weights=blob (the weights in a binary
# file linked in by .incbin), one after the other.
#   bench/bigc.sh [build]
set -e
BUILD=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
out="$BUILD/bench/bigc"
mkdir -p "$out"
[ -f "$out/big.onnx" ] || /usr/bin/python3 "$here/make_big.py" "$out/big.onnx"
echo "20M parameters, $(uptime | sed 's/.*load/load/')"
echo "-- weights as string literals"
/usr/bin/time -f "burncc: %e s wall, %U s user" "$BUILD/burncc" "$out/big.onnx" -o "$out/big.c"
ls -l "$out/big.c" | awk '{printf "C: %.0f MB\n", $5 / 1e6}'
/usr/bin/time -f "${CC:-cc} -O2 -c: %e s wall, %U s user" ${CC:-cc} -O2 -c "$out/big.c" -o "$out/big.o"
echo "-- --weights=blob, linked in with -DBIGB_WEIGHTS_INCBIN"
/usr/bin/time -f "burncc: %e s wall, %U s user" "$BUILD/burncc" "$out/big.onnx" --weights=blob -o "$out/bigb.c"
ls -l "$out/bigb.c" "$out/bigb.weights.bin" | awk '{printf "%s: %.2f MB\n", $NF, $5 / 1e6}'
/usr/bin/time -f "${CC:-cc} -O2 -c: %e s wall, %U s user" ${CC:-cc} -O2 -c \
	-DBIGB_WEIGHTS_INCBIN -I"$out" "$out/bigb.c" -o "$out/bigb.o"
echo "$(uptime | sed 's/.*load/load/')"

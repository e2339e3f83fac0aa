#!/bin/sh
# fmod64.sh BURNCC NODE_DIR WORKDIR - f64 fmod without an fma
# (passes/legalize.c, fmodx with KCaps.no_fma_f64): ONNX's
# test_mod_mixed_sign_float64 (Mod, fmod=1) compiled --freestanding and
# --target wasm (its C, built for the host), each built with gcc and clang
# with the firmware flags, then tests/firmware/fmod64.c compares it with
# the C library's fmod bit for bit on edge and random pairs.
set -eu
burncc=$1 node=$2 w=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$w" && mkdir -p "$w"
ccs=gcc
for c in clang-19 clang; do
	if command -v $c >/dev/null 2>&1; then ccs="$ccs $c"; break; fi
done
flags="-std=c99 -pedantic -Wall -Wextra -Werror -O2 -ffreestanding -Wcast-align -Wfloat-equal"
for t in freestanding wasm; do
	mkdir -p "$w/$t"
	if [ $t = wasm ]; then opt="--target wasm"; else opt=--freestanding; fi
	"$burncc" "$node/test_mod_mixed_sign_float64/model.onnx" $opt --name m -o "$w/$t/m.c"
	if grep -q 'fma(' "$w/$t/m.c"; then echo "FAIL: $t: an fma call in m.c"; exit 1; fi
	for cc in $ccs; do
		$cc $flags -c "$w/$t/m.c" -o "$w/$t/m-$cc.o"
		$cc -O1 -I"$w/$t" "$here/fmod64.c" "$w/$t/m-$cc.o" -lm -o "$w/$t/t-$cc"
		printf '%s, %s: ' $t $cc
		"$w/$t/t-$cc"
	done
done

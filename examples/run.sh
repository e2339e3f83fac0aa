#!/bin/sh
# `make run`: compile the bundled model with burncc, build the generated C
# with the example driver, and run it on the bundled input.
set -e
BUILD=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
out="$BUILD/example"
mkdir -p "$out"
echo "+ burncc examples/lenet/lenet.onnx -o $out/lenet.c"
"$BUILD/burncc" "$here/lenet/lenet.onnx" -o "$out/lenet.c"
echo "+ cc -std=c99 -O3 -Wall -Wextra -Werror examples/main.c $out/lenet.c -lm"
${CC:-cc} -std=c99 -D_POSIX_C_SOURCE=199309L -O3 -Wall -Wextra -Werror -I"$out" \
	"$here/main.c" "$out/lenet.c" -lm -o "$out/lenet"
echo "+ $out/lenet examples/lenet/input.bin"
"$out/lenet" "$here/lenet/input.bin"

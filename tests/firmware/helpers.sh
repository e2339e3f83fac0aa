#!/bin/sh
# The freestanding prelude's math against libm (tests/firmware/helpers.c).
# usage: helpers.sh BURNCC MODEL_DIR WORKDIR
set -e
burncc=$1 model=$2 work=$3
mkdir -p "$work"
"$burncc" "$model/model.onnx" -o "$work/fs_model.c" --freestanding
${CC:-cc} -std=c99 -O2 -I"$work" -DMODEL_C="\"$work/fs_model.c\"" \
	-o "$work/helpers" "$(dirname "$0")/helpers.c" -lm
"$work/helpers"

#!/bin/sh
# blob.sh BURNCC PBRAW MODELS WORKDIR MODEL... - burncc --weights=blob
# (README: "Weights in a file beside the C"):
#   1. each MODEL compiled with --weights=blob (hosted, then --freestanding)
#      and with its weights as initialisers; built with gcc and clang
#      (-std=c99 -pedantic -Wall -Wextra -Werror, and the firmware flags
#      for --freestanding) from another folder, the blob found through -I;
#      tests/firmware/blob.c runs it on test_data_set_0 with the blob
#      linked in (-DMODEL_WEIGHTS_INCBIN) and with the blob read from the
#      file, and compares with the reference outputs and, bit for bit,
#      with the initialiser build;
#   2. the refusals (NULL, misaligned, another blob, a flipped bit);
#   3. -DMODEL_WEIGHTS_SECTION puts the linked blob in that section, and
#      arm-none-eabi-gcc assembles it too (where installed);
#   4. the three files are the same bytes when written from another
#      folder through an absolute path; a blob destination that cannot be
#      written leaves the .c and .h as they were, and no temporary file.
set -eu
burncc=$1 pbraw=$2 models=$3 w=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$w" && mkdir -p "$w/gen" "$w/obj"
w=$(cd "$w" && pwd)
case $burncc in /*) ;; *) burncc=$(pwd)/$burncc ;; esac
case $models in /*) ;; *) models=$(pwd)/$models ;; esac
ccs=gcc
for c in clang-19 clang; do
	if command -v $c >/dev/null 2>&1; then ccs="$ccs $c"; break; fi
done
flags="-std=c99 -pedantic -Wall -Wextra -Werror -O2"
ffree="-ffreestanding -Wcast-align -Wfloat-equal"
first=$1
for m in "$@"; do
	for mode in hosted free; do
		g="$w/gen/$m-$mode"
		mkdir -p "$g"
		opt= xf=
		[ $mode = hosted ] || { opt=--freestanding; xf=$ffree; }
		"$burncc" "$models/$m/model.onnx" $opt --weights=blob --name model -o "$g/model.c"
		"$burncc" "$models/$m/model.onnx" $opt --name lit -o "$g/lit.c"
		[ -f "$g/model.weights.bin" ] || { echo "FAIL: no $g/model.weights.bin"; exit 1; }
		if grep -q 'static const union' "$g/model.c"; then
			echo "FAIL: $m: weights left in model.c"; exit 1
		fi
		set -- ; for f in "$models/$m"/test_data_set_0/input_*.pb; do
			"$pbraw" "$f" "$g/$(basename "$f" .pb).bin" >/dev/null
			set -- "$@" "$g/$(basename "$f" .pb).bin"
		done
		nin=$#
		for f in "$models/$m"/test_data_set_0/output_*.pb; do
			"$pbraw" "$f" "$g/$(basename "$f" .pb).bin" >/dev/null
			set -- "$@" "$g/$(basename "$f" .pb).bin"
		done
		for cc in $ccs; do
			o="$w/obj/$m-$mode-$cc"
			mkdir -p "$o"
			# built in another folder: .incbin finds the blob through -I
			(cd "$o" && $cc $flags $xf -DMODEL_WEIGHTS_INCBIN -I"$g" -c "$g/model.c" -o model.o &&
			 $cc $flags $xf -I"$g" -c "$g/lit.c" -o lit.o &&
			 $cc -std=c99 -O1 -D_ISOC11_SOURCE -DMODEL_WEIGHTS_INCBIN -I"$g" \
			     "$here/blob.c" model.o lit.o -lm -o prog)
			echo "$m ($mode, $cc):"
			"$o/prog" incbin $nin "$@"
			"$o/prog" file "$g/model.weights.bin" $nin "$@"
			"$o/prog" errors "$g/model.weights.bin"
		done
		set --
	done
done

# 3. the section hook on the linked blob
m=$first g="$w/gen/$first-hosted"
bytes=$(sed -n 's/#define MODEL_WEIGHTS_BYTES //p' "$g/model.h")
(cd "$w/obj" && gcc $flags -DMODEL_WEIGHTS_INCBIN -DMODEL_WEIGHTS_SECTION='".extflash"' \
	-I"$g" -c "$g/model.c" -o ext.o)
sz=$(objdump -h "$w/obj/ext.o" | awk '$2 == ".extflash" { print $3 }')
[ -n "$sz" ] && [ $((0x$sz)) -eq "$bytes" ] ||
	{ echo "FAIL: .extflash holds ${sz:-no} bytes, the blob $bytes"; exit 1; }
echo "ok: MODEL_WEIGHTS_SECTION: .extflash holds the blob's $bytes bytes"
if command -v arm-none-eabi-gcc >/dev/null 2>&1; then
	g="$w/gen/$m-free"
	(cd "$w/obj" && arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 \
		-mfloat-abi=hard $flags $ffree -DMODEL_WEIGHTS_INCBIN -I"$g" -c "$g/model.c" -o arm.o)
	sz=$(arm-none-eabi-objdump -t "$w/obj/arm.o" | awk '$NF == "model_weights" { print $(NF-1) }')
	[ -n "$sz" ] && [ $((0x$sz)) -eq "$bytes" ] ||
		{ echo "FAIL: arm-none-eabi: model_weights is ${sz:-missing}"; exit 1; }
	echo "ok: arm-none-eabi-gcc links the blob in (model_weights, $bytes bytes)"
else
	echo "note: no arm-none-eabi-gcc, the Cortex-M build of the blob not tried"
fi

# 4. reproducible, and never half written
g="$w/gen/$m-hosted"
mkdir -p "$w/again"
(cd /tmp && "$burncc" "$models/$m/model.onnx" --weights=blob --name model -o "$w/again/model.c")
for f in model.c model.h model.weights.bin; do
	cmp "$g/$f" "$w/again/$f" || { echo "FAIL: $f differs when written from elsewhere"; exit 1; }
done
echo "ok: the .c, .h and blob are the same bytes written from another folder"
cp "$g/model.c" "$w/keep.c"
cp "$g/model.h" "$w/keep.h"
mkdir -p "$w/gen/adir"
if "$burncc" "$models/$m/model.onnx" --weights=blob --name other \
	--weights-file "$w/gen/adir" -o "$g/model.c" 2>"$w/err.txt"; then
	echo "FAIL: a directory taken as the blob"; exit 1
fi
cmp "$g/model.c" "$w/keep.c" && cmp "$g/model.h" "$w/keep.h" ||
	{ echo "FAIL: a failed blob left the .c or .h changed"; exit 1; }
if ls -a "$g" "$w/gen/adir" | grep -q '^\.model\|^\.adir'; then
	echo "FAIL: a temporary file left behind"; ls -a "$g"; exit 1
fi
echo "ok: refused ($(cat "$w/err.txt")), .c and .h untouched"

#!/bin/sh
# Run a model's freestanding C on an emulated Cortex-M4 (QEMU mps2-an386,
# semihosting) and compare its outputs with the model's test data set 0.
#
#   m4.sh BURNCC REFH MODEL_DIR WORKDIR [-Ox]
#
# Builds MODEL_DIR/model.onnx with burncc --freestanding, the reference
# data into ref.h (refh), and main.c + startup.c + link.ld around it with
# arm-none-eabi-gcc -mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard
# -nostdlib (libgcc only); runs it under qemu-system-arm -icount shift=0.
# Prints one line per model: sizes, stack, arena and the SysTick count
# (docs/BENCHMARKS.md).  Exit 77 (skipped) without the tools.
set -e
burncc=$1 refh=$2 dir=$3 work=$4 opt=${5:--O2}
here=$(cd "$(dirname "$0")" && pwd)
# paths as given, from here (the script works in WORKDIR)
abs() { case $1 in /*) echo "$1" ;; *) echo "$(pwd)/$1" ;; esac; }
burncc=$(abs "$burncc") refh=$(abs "$refh") dir=$(abs "$dir")
name=$(basename "$dir")
for t in arm-none-eabi-gcc arm-none-eabi-size qemu-system-arm; do
	if ! command -v $t >/dev/null 2>&1; then
		echo "no $t: the Cortex-M4 test did not run (tools/setup.sh installs it)"
		exit 77
	fi
done
mkdir -p "$work"
cd "$work"
"$burncc" "$dir/model.onnx" -o model.c --freestanding --name model ${BURNCC_FLAGS:-}
"$refh" "$dir/test_data_set_0" "$(sed -n 's/^#define MODEL_NUM_INPUTS //p' model.h)" \
	"$(sed -n 's/^#define MODEL_NUM_OUTPUTS //p' model.h)" > ref.h
cpu="-mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard -mthumb"
arm-none-eabi-gcc $cpu -std=c99 -pedantic -Wall -Wextra -Werror -ffreestanding \
	-Wcast-align -Wfloat-equal $opt -fstack-usage -c model.c -o model.o
arm-none-eabi-gcc $cpu -std=c99 -Wall -Wextra -Werror $opt -ffreestanding -I. \
	-c "$here/main.c" -o main.o
arm-none-eabi-gcc $cpu -std=c99 -Wall -Wextra -Werror $opt -ffreestanding \
	-c "$here/startup.c" -o startup.o
arm-none-eabi-gcc $cpu -nostdlib -T "$here/link.ld" -o m4.elf startup.o main.o \
	model.o -lgcc
out=$(timeout 120 qemu-system-arm -M mps2-an386 -nographic -monitor none \
	-icount shift=0 -semihosting-config enable=on,target=native -kernel m4.elf 2>&1) || true
echo "$out"
# the model's own sections, and its deepest kernel frame (-fstack-usage)
text=$(arm-none-eabi-size -A model.o | awk '$1 ~ /^\.text/ { s += $2 } END { print s + 0 }')
rodata=$(arm-none-eabi-size -A model.o | awk '$1 ~ /^\.rodata/ { s += $2 } END { print s + 0 }')
frame=$(sort -t"$(printf '\t')" -k2 -n model.su | tail -1 | awk -F"$(printf '\t')" '{ print $2 " (" $1 ")" }')
echo "$name $opt: .text $text B, .rodata $rodata B, deepest kernel frame $frame B;" \
	"$(echo "$out" | sed -n 's/^[A-Z]* //p')"
echo "$out" | grep -q '^PASS'

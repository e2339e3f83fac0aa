#!/bin/sh
# stack.sh BURNCC PBRAW MODELS WORKDIR MODEL... - the stack use the
# generated header documents, and --max-stack (README: "Stack"):
#   1. each MODEL compiled --freestanding; every kernel's frame as gcc's
#      and clang's -fstack-usage measure it at -O2 -fno-inline (and
#      arm-none-eabi-gcc's for a Cortex-M4, where installed) is the
#      header's local-array bytes for that kernel plus the compiler's own
#      frame, at most 256 bytes for gcc and 1024 for clang (which may keep
#      a second copy of a tile: squeezenet's k_conv_5, 2024 bytes for a
#      1024-byte tile; it may also use less, keeping a tile that the shapes
#      only partly use in registers); built as usual (kernels inlined into
#      the run function), no frame passes twice the header's largest + that;
#   2. the first MODEL with --max-stack 256: no kernel keeps more in the
#      header or in -fstack-usage (plus the frame), and its outputs still
#      match the reference (tests/firmware/blob.c, with --weights=blob);
#   3. --max-stack 3 is refused, naming a kernel and its bytes.
set -eu
burncc=$1 pbraw=$2 models=$3 w=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$w" && mkdir -p "$w"
w=$(cd "$w" && pwd)
first=$1
ccs=gcc
for c in clang-19 clang; do
	if command -v $c >/dev/null 2>&1; then ccs="$ccs $c"; break; fi
done
arm="-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard"
command -v arm-none-eabi-gcc >/dev/null 2>&1 && ccs="$ccs arm-none-eabi-gcc"
flags="-std=c99 -pedantic -Wall -Wextra -Werror -O2 -ffreestanding -Wcast-align -Wfloat-equal"

# check H SU LABEL LIMIT SLACK: every kernel of SU (gcc's NAME.su) against
# header H: within its local arrays + SLACK; LIMIT > 0 also bounds each
# frame by LIMIT + SLACK
check() {
	awk -v label="$3" -v limit="$4" -v slack="$5" '
		FNR == NR { if ($1 == "*" && $2 ~ /^k_/ && $3 ~ /^[0-9]+$/) local[$2] = $3; next }
		{
			n = split($1, p, ":"); f = p[n]; sub(/\..*/, "", f)
			if (f !~ /^k_/) next
			l = (f in local) ? local[f] : 0; b = $2 + 0; k++
			if (b > l + slack) { printf "FAIL: %s: %s uses %d bytes, the header says %d + frame\n", label, f, b, l; bad = 1 }
			if (limit > 0 && b > limit + slack) { printf "FAIL: %s: %s uses %d bytes over --max-stack %d\n", label, f, b, limit; bad = 1 }
			if (b - l > over) over = b - l
			if (b > most) { most = b; mf = f }
		}
		END {
			if (!k) { printf "FAIL: %s: no kernel in -fstack-usage\n", label; exit 1 }
			if (bad) exit 1
			printf "ok: %s: %d kernels, deepest %s %d bytes, frame beyond the local arrays <= %d\n", label, k, mf, most, over
		}' "$1" "$2"
}

for m in "$@"; do
	"$burncc" "$models/$m/model.onnx" --freestanding --name model -o "$w/$m.c"
	for cc in $ccs; do
		o="$w/$m-$cc"
		mkdir -p "$o"
		x=
		[ $cc != arm-none-eabi-gcc ] || x=$arm
		# each kernel its own frame (-fno-inline), then as built: the
		# deepest frame (a kernel, or the run function with kernels
		# inlined, as clang does, which need not overlap their arrays:
		# bert_tiny 1608 bytes with clang 19) within twice the largest
		# local arrays + the slack
		(cd "$o" && $cc $x $flags -fno-inline -fstack-usage -c "$w/$m.c" -o model.o)
		# the compiler's own frame beyond the arrays: clang at -O2
		# without -march (16 SSE registers) spills the 8 x 32 register
		# tile of the transposed 1x1 Conv (squeezenet1_1's k_conv_42, 48,
		# 54: 1064-1192 bytes beyond their 2048 of arrays), and the
		# values of a fused epilogue applied in the tile's stores (mlp's
		# k_gemm_1: GELU's erf expanded inline, 1400 bytes beyond its
		# 1024), gcc does not
		slack=256
		case $cc in clang*) slack=1536 ;; esac
		check "$w/$m.h" "$o/model.su" "$m ($cc)" 0 $slack
		(cd "$o" && $cc $x $flags -fstack-usage -c "$w/$m.c" -o model.o)
		most=$(sed -n 's/#define MODEL_STACK_LOCAL_BYTES //p' "$w/$m.h")
		deep=$(awk '$2 + 0 > d { d = $2 + 0 } END { print d + 0 }' "$o/model.su")
		[ "$deep" -le $((2 * most + slack)) ] ||
			{ echo "FAIL: $m ($cc): a frame of $deep bytes, the header's largest $most"; exit 1; }
		echo "ok: $m ($cc, inlined): deepest frame $deep bytes, the header's largest $most"
	done
done

# --max-stack
g="$w/bounded"
mkdir -p "$g"
"$burncc" "$models/$first/model.onnx" --freestanding --max-stack 256 --weights=blob \
	--name model -o "$g/model.c"
"$burncc" "$models/$first/model.onnx" --freestanding --name lit -o "$g/lit.c"
most=$(sed -n 's/#define MODEL_STACK_LOCAL_BYTES //p' "$g/model.h")
[ "$most" -le 256 ] || { echo "FAIL: --max-stack 256 left $most bytes"; exit 1; }
[ "$(sed -n 's/#define LIT_STACK_LOCAL_BYTES //p' "$g/lit.h")" -gt 256 ] ||
	{ echo "FAIL: $first needs no bound: pick a model with a larger tile"; exit 1; }
(cd "$g" && gcc $flags -fno-inline -fstack-usage -DMODEL_WEIGHTS_INCBIN -c model.c -o model.o &&
 gcc $flags -c lit.c -o lit.o &&
 gcc -std=c99 -O1 -D_ISOC11_SOURCE -DMODEL_WEIGHTS_INCBIN -I. "$here/blob.c" model.o lit.o \
     -lm -o prog)
check "$g/model.h" "$g/model.su" "$first --max-stack 256 (gcc)" 256 256
set --
for f in "$models/$first"/test_data_set_0/input_*.pb; do
	"$pbraw" "$f" "$g/$(basename "$f" .pb).bin" >/dev/null
	set -- "$@" "$g/$(basename "$f" .pb).bin"
done
nin=$#
for f in "$models/$first"/test_data_set_0/output_*.pb; do
	"$pbraw" "$f" "$g/$(basename "$f" .pb).bin" >/dev/null
	set -- "$@" "$g/$(basename "$f" .pb).bin"
done
"$g/prog" incbin $nin "$@"
if "$burncc" "$models/$first/model.onnx" --freestanding --max-stack 3 -o "$g/no.c" \
	2>"$g/err.txt"; then
	echo "FAIL: --max-stack 3 accepted"; exit 1
fi
grep -q 'kernel k_[a-z0-9_]* keeps [0-9]* bytes of local arrays' "$g/err.txt" ||
	{ echo "FAIL: the refusal does not name the kernel and its bytes:"; cat "$g/err.txt"; exit 1; }
[ ! -e "$g/no.c" ] || { echo "FAIL: a refused compile wrote no.c"; exit 1; }
echo "ok: --max-stack 3 refused: $(cat "$g/err.txt")"

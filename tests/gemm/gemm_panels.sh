#!/bin/sh
# gemm_panels.sh BURNCC CASES - the CPU GEMM core (passes/ops_linalg.c) and
# MaxPool (NaN propagation) on the cases of tests/gemm/make_cases.py:
#  - a constant B (MatMul, Gemm) and Conv's constant weights are packed
#    into panels at compile time: the C holds "NAME.panels" weights and
#    not the original;
#  - a B known at run time, large enough, is copied into panels by the
#    kernel (a K x N f32 scratch buffer, its last panel padded with zero
#    columns to a multiple of 16); a pointwise Conv with few rows copies
#    only the last panel (K x 16) and reads the full ones from X;
#  - a 2-D f32 Conv wider than 1x1 is an implicit GEMM (the step
#    `implicit`: padded phase planes read through a constant taps table,
#    no im2col matrix), and the step `im2col` still gives im2col;
#  - every case matches its float64 reference on the c target and, when
#    built, llvm; the implicit cases (strides, asymmetric pads, dilations,
#    channel counts that are no multiple of a vector, two images) with the
#    im2col step too.
set -u
B=$1 C=$2
out=$(mktemp "${TMPDIR:-/tmp}/burncc-gemm-XXXXXX")
trap 'rm -f "$out" "$out.c" "$out.h"' EXIT
fail() { cat "$out"; echo "FAIL: $*"; exit 1; }
targets=c
"$B" --help 2>&1 | grep -q '^  llvm ' && targets="c llvm"

for c in matmul_b_const gemm_const_transab conv_pointwise; do
	"$B" "$C/$c/model.onnx" -o "$out.c" > "$out" 2>&1 || fail "$c: compile"
	grep -q '^/\* [a-zA-Z0-9_.]*\.panels: f32 \*/' "$out.c" || fail "$c: no weights in panels"
done
"$B" "$C/matmul_b_const/model.onnx" -o "$out.c" > "$out" 2>&1 || fail "compile"
grep -q '^/\* b: f32 \*/' "$out.c" && fail "matmul_b_const: the unpacked B is still emitted"
"$B" --emit=kernels "$C/matmul_b_runtime/model.onnx" | grep -q 'f32\[7840\] global .* rw' ||
	fail "matmul_b_runtime: B is not copied into panels"
"$B" --emit=kernels "$C/gemm_transb_runtime/model.onnx" | grep -q 'f32\[4800\] global .* rw' ||
	fail "gemm_transb_runtime: B is not copied into panels"
# a pointwise Conv of 20 rows copies only X's last panel: 37 x 16 floats
"$B" --emit=kernels "$C/conv_pointwise_few_rows/model.onnx" | grep -q 'f32\[592\] global .* rw' ||
	fail "conv_pointwise_few_rows: not only the last panel copied"

M=$C/conv_implicit_s2_pads/model.onnx
"$B" --emit=schedule "$M" | grep -q '^k_conv: .*implicit' ||
	fail "conv_implicit_s2_pads: not the implicit GEMM: $("$B" --emit=schedule "$M")"
"$B" "$M" -o "$out.c" > "$out" 2>&1 || fail "conv_implicit_s2_pads: compile"
grep -q '^/\* [a-zA-Z0-9_.]*\.taps: i64 \*/' "$out.c" || fail "conv_implicit_s2_pads: no taps table"
"$B" --emit=schedule --schedule 'k_conv=im2col' "$M" | grep -q '^k_conv: .*im2col' ||
	fail "conv_implicit_s2_pads: the im2col step is not taken"

for t in $targets; do
	"$B" check --target $t --quiet-pass "$C"/* > "$out" 2>&1 || fail "$t: check"
	"$B" check --target $t --quiet-pass --schedule 'k_conv=im2col' "$C"/conv_implicit_* \
		"$C/conv_3x3_pads" > "$out" 2>&1 || fail "$t: check (im2col)"
done
echo "PASS gemm_panels ($targets)"

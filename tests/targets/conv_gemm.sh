#!/bin/sh
# conv_gemm.sh BURNCC ONNX_TESTS_DIR - the GEMM forms of the convolutions
# that training runs (passes/ops_linalg.c):
#  - ConvTranspose f32 2-D without groups: a GEMM per image and a col2im
#    (lower_convt_gemm), chosen by the im2col step; with the step `direct`
#    the scatter loops instead.  Both forms match the reference on every
#    2-D ConvTranspose case (strides, dilations, pads, output_padding and
#    output_shape among them), on the c target and, when built, llvm.
#  - Conv whose output plane is narrower than the register tile with more
#    than one image: the images as columns of one GEMM (batched im2col);
#    test_Conv2d's kernel shows its M x N*P result scratch and the 2-D
#    Conv cases match the reference.
#  - Gradients through both (`check --grad`: the weight gradient is such a
#    batched Conv, the input gradient a ConvTranspose) against finite
#    differences.
set -u
B=$1 T=$2
out=$(mktemp "${TMPDIR:-/tmp}/burncc-convgemm-XXXXXX")
trap 'rm -f "$out"' EXIT
fail() { cat "$out"; echo "FAIL: $*"; exit 1; }
targets=c
"$B" --help 2>&1 | grep -q '^  llvm ' && targets="c llvm"

ct="$T/node/test_convtranspose $T/node/test_convtranspose_dilations
    $T/node/test_convtranspose_pads $T/node/test_convtranspose_pad
    $T/node/test_convtranspose_kernel_shape $T/node/test_convtranspose_output_shape
    $T/node/test_convtranspose_autopad_same $T/pytorch-converted/test_ConvTranspose2d
    $T/pytorch-converted/test_ConvTranspose2d_no_bias
    $T/pytorch-operator/test_operator_convtranspose"
cv="$T/pytorch-converted/test_Conv2d $T/pytorch-converted/test_Conv2d_no_bias
    $T/pytorch-converted/test_Conv2d_padding $T/pytorch-converted/test_Conv2d_strided
    $T/pytorch-converted/test_Conv2d_dilated"
for c in $ct $cv; do [ -d "$c" ] || fail "missing case $c"; done

M=$T/pytorch-operator/test_operator_convtranspose/model.onnx
"$B" --emit=schedule "$M" | grep -q '^k_convtranspose: .*im2col' ||
	fail "ConvTranspose 2-D: not the GEMM form: $("$B" --emit=schedule "$M")"
"$B" --emit=kernels "$M" | grep -q 'tile(' || fail "ConvTranspose 2-D: no GEMM tile"
"$B" --emit=schedule --schedule 'k_convtranspose=direct' "$M" |
	grep -q '^k_convtranspose: .*direct' || fail "ConvTranspose: the direct step is not taken"
"$B" --emit=kernels --schedule 'k_convtranspose=direct' "$M" | grep -q 'tile(' &&
	fail "ConvTranspose direct: still a GEMM"

# test_Conv2d: N=2, M=4, output 5x4 (P=20 < 32): y2 is f32[4*2*20]
"$B" --emit=kernels "$T/pytorch-converted/test_Conv2d/model.onnx" |
	grep -q '^  buf b[0-9]*: f32\[160\] global .* rw' || fail "Conv2d: no batched im2col"

for t in $targets; do
	# shellcheck disable=SC2086
	"$B" check --target $t --quiet-pass $ct $cv > "$out" 2>&1 || fail "$t: check (GEMM forms)"
	for c in $ct; do
		"$B" check --target $t --quiet-pass --schedule 'k_convtranspose=direct' "$c" \
			> "$out" 2>&1 ||
			fail "$t: check $c (direct)"
	done
	# shellcheck disable=SC2086
	"$B" check --grad --target $t --quiet-pass $cv > "$out" 2>&1 || fail "$t: check --grad"
done
echo "PASS conv_gemm ($targets)"

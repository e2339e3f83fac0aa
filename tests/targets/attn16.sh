#!/bin/sh
# Attention in one kernel on targets with 16-bit matrix tiles
# (passes/ops_attention.c attention_tiles, passes/attn_rewrite.c): ONNX's
# Attention on bf16 and f16 (heads of 64 and 32, three key steps), and the
# same written in primitives as PyTorch exports it (the head split and
# merge, MatMul, Mul by the scale, Softmax, MatMul), which the gpu and
# cuda targets rewrite into one Attention node; each against a float64
# reference on gpu (the interpreter runs the blocks, subgroups, tile ops
# and the cp.async stages) and c (the primitives, or the row kernel); a
# Split of a fused QKV projection is read in place; the cuda PTX through
# ptxas where it is installed.
#   attn16.sh BURNCC
burncc=${1:?usage: attn16.sh BURNCC}
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
$py -c 'import onnx, numpy' 2>/dev/null || { echo "SKIP: python3 with onnx and numpy needed"; exit 77; }
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
fail=0
for c in "2 128 128 2 64 bf16 op" "1 64 192 2 32 f16 op" "2 128 128 2 64 bf16 graph" \
         "1 64 128 3 32 f16 graph" "1 64 64 2 64 bf16 split"; do
	set -- $c
	$py "$here/make_attn16.py" $1 $2 $3 $4 $5 $6 $7 "$d/at_$1_$2_$3_$4_$5_$6_$7" || exit 1
done
"$burncc" check --target c "$d"/at_* || fail=1
"$burncc" check --target gpu "$d"/at_* || fail=1
# one kernel for the attention: the primitives rewritten, the Split read
# in place; on c the primitives stay
for n in at_2_128_128_2_64_bf16_graph at_1_64_64_2_64_bf16_split; do
	k=$("$burncc" --target gpu --emit=kernels "$d/$n/model.onnx" | grep '^kernel')
	case $k in *"k_attention: Attention"*) ;; *) echo "FAIL $n: no Attention kernel: $k"; fail=1 ;; esac
	case $k in *k_softmax*|*k_split*|*k_transpose*) echo "FAIL $n: kernels left: $k"; fail=1 ;; esac
done
case $("$burncc" --target c --emit=kernels "$d/at_2_128_128_2_64_bf16_graph/model.onnx") in
*"k_softmax"*) ;; *) echo "FAIL: the c target rewrote the primitives"; fail=1 ;; esac
ptxas=$(command -v ptxas || ls /usr/local/cuda/bin/ptxas 2>/dev/null)
if [ -n "$ptxas" ]; then
	for n in at_2_128_128_2_64_bf16_graph at_1_64_192_2_32_f16_op; do
		"$burncc" --target cuda --emit=ptx "$d/$n/model.onnx" > "$d/$n.ptx" &&
		"$ptxas" -arch=sm_90 "$d/$n.ptx" -o "$d/$n.cubin" ||
			{ echo "FAIL $n: ptxas"; fail=1; }
	done
else
	echo "ptxas not found: the PTX was not assembled (the rest ran)"
fi
[ $fail = 0 ] && echo "attn16: all passed"
exit $fail

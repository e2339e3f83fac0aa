#!/bin/sh
# The warpgroup MatMul form on a CUDA machine (issue 9), in one run:
# correctness of wgmma(BM,BN,S) on the mma16 shapes through `burncc check
# --target cuda` (against float64 references), then bf16 8192^3 with the
# fused bias + GELU epilogue: the default mma(...) form, the wgmma shapes,
# and PyTorch's torch.matmul (cuBLAS) beside them.
#   bench/gpu/wgmma.sh BURNCC [N] [RUNS]
# (run from the repository root; PyTorch is optional)
set -u
B=${1:?usage: wgmma.sh BURNCC [N] [RUNS]}
N=${2:-8192} RUNS=${3:-20}
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
for c in "256 128 256 bf16" "128 320 256 bf16" "256 64 128 f16" "128 64 64 bf16"; do
	set -- $c
	python3 tests/targets/make_mm16.py $1 $2 $3 $4 "$D/mm_$1_$2_$3_$4" >/dev/null || exit 1
done
echo "== check, default schedule"
"$B" check --target cuda "$D"/mm_* 2>&1 | tail -2
for sch in "wgmma(128,256,3)" "wgmma(128,128,4)" "wgmma(64,64,2)"; do
	echo "== check $sch"
	timeout 120 "$B" check --target cuda --schedule "k_matmul=tile(1,1) $sch async" \
		"$D"/mm_* 2>&1 | tail -5
done
python3 bench/gpu/matmul_bf16.py "$D/big" "$N" "$RUNS" 2>&1 | tail -6
for sch in "" "wgmma(128,256,3)" "wgmma(128,256,4)" "wgmma(128,128,4)" "wgmma(64,256,4)"; do
	echo "== burncc ${sch:-default}"
	if [ -z "$sch" ]; then
		timeout 180 "$B" bench "$D/big/mm_bf16.onnx" --target cuda --runs "$RUNS" 2>&1 | tail -3
	else
		timeout 180 "$B" bench "$D/big/mm_bf16.onnx" --target cuda --runs "$RUNS" \
			--schedule "k_matmul=tile(1,1) $sch async" 2>&1 | tail -3
	fi
done

#!/bin/sh
# burncc's GPU checks on a CUDA machine, from tools/gpu_pack.sh's folder
# (carried as build-gpu), run from the repository root; each part stays
# under ten minutes:
#   bench/gpu/verify.sh conformance   the node suite (every case the C target
#                                     passes, xfail_cuda.txt expected), the
#                                     simple suite and the four models
#   bench/gpu/verify.sh runtime       cuda_runtime (allocator, modules), the
#                                     eager API on the device, the f64 and
#                                     mma16 shapes, 300 random graphs
#   bench/gpu/verify.sh wgmma         bench/gpu/wgmma.sh (check, then 8192^3)
#   bench/gpu/verify.sh bench         issue 9's bandwidth models and BERT
#                                     layers beside PyTorch
#   bench/gpu/verify.sh attention     the attention kernel (ctest attn16's
#                                     cases), then BERT-base bf16 and the
#                                     heads-of-64 layer beside PyTorch, with
#                                     burncc's per-kernel profile
set -u
P=${BURNCC_GPU_DIR:-build-gpu}
D=${TMPDIR:-/tmp}/burncc-gpu
G=$D/bin
mkdir -p "$G"
[ -d "$D/models" ] || tar -C "$D" -xJf "$P/data.tar.xz" || exit 1
tar -C "$G" -xJf "$P/bin.tar.xz" || exit 1
export LD_LIBRARY_PATH=$G/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
B=$G/burncc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
case ${1:-conformance} in
conformance)
	"$B" check --target cuda --quiet-pass --xfail "$G/xfail_cuda.txt" "$D/onnx-tests/node" | tail -4
	"$B" check --target cuda "$D/onnx-tests/simple" "$D/models" | tail -4 ;;
runtime)
	"$G/cuda_runtime" . | tail -6
	"$G/eager_cuda" | tail -4
	for c in "256 96 384 bf16" "128 320 256 bf16" "256 64 128 f16" "40 24 72 bf16"; do
		set -- $c
		python3 tests/targets/make_mm16.py $1 $2 $3 $4 "$D/mm/mm_$1_$2_$3_$4" >/dev/null
	done
	"$B" check --target cuda "$D"/mm/mm_* | tail -2
	BURNCC_DIFF_VARIANTS=cuda-fused,cuda-nofuse python3 tests/diff/run.py "$G" random \
		--graphs 300 --jobs 8 | tail -3 ;;
wgmma)
	sh bench/gpu/wgmma.sh "$B" ;;
attention)
	for c in "2 128 128 2 64 bf16 op" "1 64 192 2 32 f16 op" "2 128 128 2 64 bf16 graph" \
	         "1 64 128 3 32 f16 graph" "1 64 64 2 64 bf16 split"; do
		set -- $c
		python3 tests/targets/make_attn16.py $1 $2 $3 $4 $5 $6 $7 "$D/at/at_$1_$2_$3_$4_$5_$6_$7"
	done
	"$B" check --target cuda "$D"/at/at_* | tail -2
	BERT_LAYER_ONLY=base_bf16,attn_bf16 python3 bench/gpu/bert_layer.py "$D/bert" 20 | tail -6
	for n in attn_bf16 base_bf16; do
		echo "== burncc $n"
		"$B" check --target cuda "$D/bert/$n" | tail -1
		"$B" bench "$D/bert/$n/model.onnx" --target cuda --runs 20 --profile | tail -12
	done ;;
bench)
	python3 bench/gpu/make_models.py "$D/bw" >/dev/null && sh bench/gpu/run.sh "$B" "$D/bw"
	python3 bench/gpu/bert_layer.py "$D/bert" 20 | tail -8
	for n in layer128 base_bf16; do
		echo "== burncc $n"
		"$B" check --target cuda "$D/bert/$n" | tail -1
		"$B" bench "$D/bert/$n/model.onnx" --target cuda --runs 20 | grep -E "median|min"
	done ;;
*)
	echo "usage: bench/gpu/verify.sh conformance|runtime|wgmma|attention|bench"; exit 2 ;;
esac

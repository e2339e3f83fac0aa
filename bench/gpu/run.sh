#!/bin/sh
# Issue 9's bandwidth figures on a CUDA machine, burncc and PyTorch in one
# run:  bench/gpu/run.sh BURNCC MODELDIR [RUNS]
# (MODELDIR from bench/gpu/make_models.py; PyTorch is optional: skipped
# with a note where it is absent.)
set -e
burncc=$1 dir=$2 runs=${3:-20}
here=$(dirname "$0")
for m in gelu softmax layernorm; do
	echo "== burncc $m"
	"$burncc" bench "$dir/$m.onnx" --target cuda --runs "$runs"
	"$burncc" --target cuda --emit=ptx "$dir/$m.onnx" -o /dev/null 2>/dev/null || true
done
echo "== pytorch"
python3 "$here/torch_peer.py" "$runs" || echo "pytorch: did not run"

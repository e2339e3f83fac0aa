#!/bin/sh
# ctest cuda_autotune: `burncc bench --autotune` and `burncc -o --autotune`
# on a bf16 MatMul (512 x 480 x 512, tests/targets/make_mm16.py: K not a
# multiple of 64, so the cuda target's default warpgroup form,
# wgmma(128,256,4), does not fit and mma.sync's 128 x 128 is the default)
# against the stand-in driver tests/ptx/fake_cuda.c, which times a launch
# by its blocks: the tuner must time the candidates, pick the one with the
# fewest blocks (mma(128,256,32,2,4,3): 8 blocks against the default's
# 16), keep it in the cache (a second run reads it, timing nothing), and
# the host module written with --autotune must carry that schedule.  At
# 512^3 the default is the warpgroup form, which the tuner times against
# the mma shapes too.  What real timings choose is in docs/BENCHMARKS.md.
#   autotune.sh BURNCC FAKE_CUDA_DIR SOURCE_DIR [PYTHON]
set -u
BURNCC=$1 FAKE=$2 SRC=$3 PY=${4:-/usr/bin/python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$PY" -c 'import onnx, numpy' 2>/dev/null || { echo "SKIP: python3 with onnx and numpy absent"; exit 77; }
"$PY" "$SRC/tests/targets/make_mm16.py" 512 480 512 bf16 "$T/mm" || exit 1
"$PY" "$SRC/tests/targets/make_mm16.py" 512 512 512 bf16 "$T/mm512" || exit 1
export XDG_CACHE_HOME="$T/cache" LD_LIBRARY_PATH="$FAKE"
want='k_matmul: tile(1,1) mma(128,256,32,2,4,3) async'
out=$("$BURNCC" bench "$T/mm/model.onnx" --target cuda --runs 3 --autotune) || { echo "FAIL: bench --autotune"; exit 1; }
echo "$out" | grep '^autotune'
echo "$out" | grep -q "^autotune: $want (.* timed)" || { echo "FAIL: the first run did not time and pick '$want'"; exit 1; }
out=$("$BURNCC" bench "$T/mm/model.onnx" --target cuda --runs 3 --autotune) || { echo "FAIL: bench --autotune again"; exit 1; }
echo "$out" | grep -q "^autotune: $want (from the cache)" || { echo "FAIL: the second run did not read the cache"; echo "$out"; exit 1; }
"$BURNCC" "$T/mm/model.onnx" --target cuda --autotune -o "$T/m.c" 2> "$T/log" || { echo "FAIL: -o --autotune: $(cat "$T/log")"; exit 1; }
grep -q "from the cache" "$T/log" || { echo "FAIL: -o --autotune did not use the cache"; exit 1; }
# the module's PTX holds the chosen block shape: 256 columns a block is
# 8 blocks for 512 x 512 (the default's 128 x 128 is 16)
grep -q '"model_k_matmul", 8,' "$T/m.c" || grep -q '"m_k_matmul", 8,' "$T/m.c" ||
	{ echo "FAIL: the module's launch is not the tuned one"; grep '_k_matmul"' "$T/m.c"; exit 1; }
out=$("$BURNCC" bench "$T/mm512/model.onnx" --target cuda --runs 3 --autotune) ||
	{ echo "FAIL: bench --autotune at 512^3"; exit 1; }
echo "$out" | grep '^autotune'
echo "$out" | grep -q "^autotune: k_matmul: tile(1,1) wgmma(128,256,4) async (.*default.*timed)" ||
	{ echo "FAIL: at 512^3 the default is not the warpgroup form, or was not timed"; exit 1; }
echo "PASS: timed, chosen, cached and compiled in"

#!/bin/sh
# libburn's eager API against its peers, one thread, in one run:
# bench/eager_bench (dispatch latency; gelu_custom on 2^24 f32 vs memcpy),
# the AOT C build of the same expression (bench/gelu, as bench/run.sh),
# and PyTorch eager (bench/eager_torch.py).  Usage: bench/eager.sh [build]
set -e
BUILD=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
out="$BUILD/bench"
mkdir -p "$out"
export BURN_THREADS=1 OMP_NUM_THREADS=1
echo "== libburn eager (build/bench/eager_bench)"
"$BUILD/eager_bench" 10
echo
echo "== AOT: burncc bench/gelu/model.onnx -o gelu_model.c, cc -O3 -march=native"
"$BUILD/burncc" "$here/gelu/model.onnx" -o "$out/gelu_model.c"
${CC:-cc} -std=c99 -D_POSIX_C_SOURCE=199309L -O3 -march=native -Wall -Wextra -I"$out" \
	"$here/gelu.c" "$out/gelu_model.c" -lm -o "$out/gelu"
"$out/gelu" 10
echo
echo "== PyTorch eager, 1 thread"
py=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import torch' 2>/dev/null; then py=$p; break; fi
done
if [ -n "$py" ]; then
	"$py" "$here/eager_torch.py" 10
else
	echo "(no torch: not run)"
fi

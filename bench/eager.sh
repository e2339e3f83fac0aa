#!/bin/sh
# libburn's eager API against its peers, one thread, in one run:
# bench/eager_bench built with burncc's AOT C of the same gelu_custom
# (bench/gelu/model.onnx -> gelu_model.c, cc -O3 -march=native) linked
# in, so memcpy, the eager (JIT) kernel and the AOT C kernel run
# interleaved in one process (medians with min and max); then PyTorch
# eager (bench/eager_torch.py).  Usage: bench/eager.sh [build] [rounds]
set -e
BUILD=${1:-build}
REPS=${2:-21}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out="$BUILD/bench"
mkdir -p "$out"
lib=$(cd "$BUILD" && pwd)
export BURN_THREADS=1 OMP_NUM_THREADS=1
echo "== $(date -u '+%F %T') UTC, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== libburn eager vs memcpy vs AOT C (cc -O3 -march=native), interleaved"
"$BUILD/burncc" "$here/gelu/model.onnx" -o "$out/gelu_model.c"
${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=199309L -DBENCH_AOT -O3 -march=native \
	-Wall -Wextra -I"$out" -I"$root/include" "$here/eager_bench.c" \
	"$out/gelu_model.c" -L"$lib" -Wl,-rpath,"$lib" -lburn -lm \
	-o "$out/eager_bench_aot"
"$out/eager_bench_aot" "$REPS"
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
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

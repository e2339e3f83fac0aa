#!/bin/sh
# What a GPU machine without a package manager needs to run burncc's GPU
# checks (bench/gpu/verify.sh), built here and carried there:
#   tools/gpu_pack.sh [BUILD] [OUT]
# (bin.tar.xz, data.tar.xz; bench/gpu/verify.sh unpacks them)
# BUILD (default build-dev) is configured without LLVM (-DBURN_LLVM=OFF:
# no LLVM libraries to carry) and gets burncc, libburn.so, cuda_runtime,
# eager_cuda and diff_interp built (OUT is then a build folder to
# tests/diff/run.py); OUT (default build-gpu, ignored by git, under 64
# MiB with the tree) receives them stripped, the shared libraries they
# need beyond glibc's, data.tar.xz (../shared's node and simple suites and
# models) and xfail_cuda.txt (the C target's expected failures and the
# cuda renderer's, tests/ptx/unsupported.txt).
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build-dev} OUT=${2:-build-gpu}
SHARED=$(cd ../shared && pwd)
[ -f "$BUILD/CMakeCache.txt" ] ||
	cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBURN_LLVM=OFF >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target burncc burn cuda_runtime eager_cuda diff_interp >/dev/null
rm -rf "$OUT"
mkdir -p "$OUT/libs" "$OUT/tests"
cp "$BUILD/burncc" "$BUILD/libburn.so" "$BUILD/tests/cuda_runtime" "$BUILD/tests/eager_cuda" "$OUT/"
cp "$BUILD/tests/diff_interp" "$OUT/tests/"
strip "$OUT/burncc" "$OUT/cuda_runtime" "$OUT/eager_cuda" "$OUT/libburn.so" "$OUT/tests/diff_interp"
for f in "$OUT/burncc" "$OUT/cuda_runtime" "$OUT/eager_cuda" "$OUT/tests/diff_interp"; do
	ldd "$f" | awk '$3 ~ /^\// {print $3}'
done | sort -u | grep -v -E '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so' |
	while read -r l; do cp -L "$l" "$OUT/libs/"; done
cat tests/conformance/xfail.txt tests/ptx/unsupported.txt > "$OUT/xfail_cuda.txt"
# the binaries compressed (a carry holds 64 MiB with the tree)
tar -C "$OUT" -cJf "$OUT/bin.tar.xz" burncc libburn.so cuda_runtime eager_cuda tests libs \
	xfail_cuda.txt
(cd "$OUT" && rm -rf burncc libburn.so cuda_runtime eager_cuda tests libs xfail_cuda.txt)
tar -C "$SHARED" -cJf "$OUT/data.tar.xz" onnx-tests/node onnx-tests/simple models
du -sh "$OUT"

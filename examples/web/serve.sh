#!/bin/sh
# The draw-a-digit page (examples/web/index.html) on http://127.0.0.1:8000/:
# builds lenet into lenet.wasm with burncc --target wasm (clang-19 or
# $BURNCC_WASM_CC, wasm-ld), copies the page and the loader
# (targets/wasm/burncc.mjs) into BUILD/web, and serves that folder on
# localhost only.  Where bench/web/run.sh has installed onnxruntime-web
# (BUILD/bench_web/node_modules), it is served too and the page runs each
# drawing there as well, timed beside burncc's.  Ctrl-C stops it.
#   examples/web/serve.sh [BUILD] [MODEL.onnx] [PORT]
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BUILD=${1:-build}
model=${2:-$root/examples/lenet/lenet.onnx}
port=${3:-8000}
out="$BUILD/web"
mkdir -p "$out"
"$BUILD/burncc" "$model" --target wasm -o "$out/lenet.wasm"
cp "$here/index.html" "$root/targets/wasm/burncc.mjs" "$out/"
cp "$model" "$out/lenet.onnx"
dist="$BUILD/bench_web/node_modules/onnxruntime-web/dist"
if [ -d "$dist" ]; then
	mkdir -p "$out/ort"
	cp "$dist/ort.wasm.min.mjs" "$out/ort/ort.mjs"
	cp "$dist"/ort-wasm-simd-threaded.wasm "$dist"/ort-wasm-simd-threaded.mjs "$out/ort/"
else
	echo "(no onnxruntime-web in $BUILD/bench_web: bench/web/run.sh installs it)"
fi
echo "open http://127.0.0.1:$port/ (draw with the mouse, a pen or a finger)"
exec python3 -m http.server --bind 127.0.0.1 --directory "$out" "$port"

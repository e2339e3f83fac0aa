#!/bin/sh
# burncc --target wasm beside onnxruntime-web (npm, wasm backend, one
# thread) in headless Chromium, same page, same inputs (bench/web/bench.html).
#
#   bench/web/run.sh BUILD [MODELS_DIR [WORKDIR [MODEL...]]]
#
# BUILD holds burncc and tests/pbraw (cmake --build BUILD).  onnxruntime-web
# is installed with npm into WORKDIR (the version of bench/web/package.json).
# Prints one line per model and the page's JSON; figures: docs/BENCHMARKS.md.
set -eu
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
models=${2:-$root/../shared/models}
w=${3:-$build/bench_web}
shift $(( $# < 3 ? $# : 3 ))
[ $# -gt 0 ] || set -- lenet mlp squeezenet1_1 bert_tiny
mkdir -p "$w"
w=$(cd "$w" && pwd)
# onnxruntime-web, once
if [ ! -d "$w/node_modules/onnxruntime-web" ]; then
	cp "$here/package.json" "$w/"
	(cd "$w" && npm install --no-audit --no-fund --loglevel=error)
fi
dist=$w/node_modules/onnxruntime-web/dist
rm -rf "$w/ort" && mkdir -p "$w/ort"
cp "$dist/ort.wasm.min.mjs" "$w/ort/ort.mjs"
cp "$dist"/ort-wasm-simd-threaded.wasm "$dist"/ort-wasm-simd-threaded.mjs "$w/ort/"
# the models: burncc's wasm, the ONNX file for onnxruntime-web, raw inputs
printf '{"batches": 21, "models": [' >"$w/bench.json"
sep=
for m in "$@"; do
	"$build/burncc" "$models/$m/model.onnx" --target wasm -o "$w/$m.wasm"
	cp "$models/$m/model.onnx" "$w/$m.onnx"
	mkdir -p "$w/$m"
	ins=
	for f in "$models/$m"/test_data_set_0/input_*.pb; do
		b=$(basename "$f" .pb)
		"$build/tests/pbraw" "$f" "$w/$m/$b.bin" >/dev/null
		ins="$ins${ins:+, }\"$m/$b.bin\""
	done
	case $m in squeezenet*) reps=4 ;; bert*) reps=20 ;; *) reps=100 ;; esac
	printf '%s\n {"name": "%s", "wasm": "%s.wasm", "onnx": "%s.onnx", "inputs": [%s], "reps": %d, "wasm_bytes": %d}' \
		"$sep" "$m" "$m" "$m" "$ins" $reps "$(wc -c <"$w/$m.wasm")" >>"$w/bench.json"
	sep=,
done
printf ']}\n' >>"$w/bench.json"
cp "$root/targets/wasm/burncc.mjs" "$here/bench.html" "$w/"
browser=${CHROMIUM:-chromium}
rm -f "$w/port"
python3 "$root/tests/wasm/serve.py" "$w" "$w/port" 600 >"$w/serve.log" 2>&1 &
spid=$!
while [ ! -f "$w/port" ]; do sleep 0.1; done
"$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
	--no-first-run --no-default-browser-check --user-data-dir="$w/profile" \
	"http://127.0.0.1:$(cat "$w/port")/bench.html" >"$w/chromium.log" 2>&1 &
bpid=$!
st=0
wait $spid || st=$?
kill $bpid 2>/dev/null || true
wait $bpid 2>/dev/null || true
cat "$w/serve.log"
exit $st

#!/bin/sh
# The browser test: each MODEL of MODELS built by burncc --target wasm into
# a .wasm, loaded in headless Chromium by targets/wasm/burncc.mjs
# (tests/wasm/test.html) and run on test_data_set_0's inputs; every output
# is compared in the page with the expected one, within burncc check's
# tolerance.  The page posts its result to tests/wasm/serve.py, a
# one-shot HTTP server on 127.0.0.1.  With lenet among the models, the
# draw-a-digit page (examples/web) too (tests/wasm/digit.sh).
#
#   run.sh BURNCC PBRAW MODELS WORKDIR MODEL...
#
# Exit 77 (ctest: not run) without clang able to link wasm32 (clang-19 and
# lld-19), Chromium or python3; $BURNCC_WASM_CC names the compiler,
# $CHROMIUM the browser.
set -eu
burncc=$1 pbraw=$2 models=$3 w=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
skip() { echo "$1: the browser test did not run (sh tools/setup.sh installs it)"; exit 77; }

rm -rf "$w" && mkdir -p "$w"
cc=${BURNCC_WASM_CC:-}
for c in clang-19 clang; do
	[ -n "$cc" ] || ! command -v $c >/dev/null 2>&1 || cc=$c
done
[ -n "$cc" ] || skip "no clang"
printf 'int f(void) { return 1; }\n' >"$w/probe.c"
"$cc" --target=wasm32 -nostdlib -Wl,--no-entry -Wl,--export=f -o "$w/probe.wasm" \
	"$w/probe.c" >"$w/probe.log" 2>&1 || skip "$cc cannot link wasm32 (no wasm-ld: lld-19)"
browser=${CHROMIUM:-}
for b in chromium chromium-browser; do
	[ -n "$browser" ] || ! command -v $b >/dev/null 2>&1 || browser=$b
done
[ -n "$browser" ] || skip "no chromium"
py=$(command -v /usr/bin/python3 || command -v python3 || true)
[ -n "$py" ] || skip "no python3"

# the models, their inputs and expected outputs as raw elements
printf '{"models": [' >"$w/manifest.json"
sep=
for m in "$@"; do
	BURNCC_WASM_CC=$cc "$burncc" "$models/$m/model.onnx" --target wasm -o "$w/$m.wasm"
	mkdir -p "$w/$m"
	ins= outs=
	for f in "$models/$m"/test_data_set_0/input_*.pb; do
		b=$(basename "$f" .pb)
		"$pbraw" "$f" "$w/$m/$b.bin" >/dev/null
		ins="$ins${ins:+, }\"$m/$b.bin\""
	done
	for f in "$models/$m"/test_data_set_0/output_*.pb; do
		b=$(basename "$f" .pb)
		"$pbraw" "$f" "$w/$m/$b.bin" >/dev/null
		outs="$outs${outs:+, }\"$m/$b.bin\""
	done
	printf '%s\n {"name": "%s", "wasm": "%s.wasm", "inputs": [%s], "outputs": [%s]}' \
		"$sep" "$m" "$m" "$ins" "$outs" >>"$w/manifest.json"
	sep=,
	echo "$m: $(wc -c <"$w/$m.wasm") bytes of wasm"
done
printf ']}\n' >>"$w/manifest.json"
cp "$root/targets/wasm/burncc.mjs" "$here/test.html" "$w/"

# serve, open the page, wait for its result
"$py" "$here/serve.py" "$w" "$w/port" 120 >"$w/serve.log" 2>&1 &
spid=$!
i=0
while [ ! -f "$w/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -f "$w/port" ] || { kill $spid 2>/dev/null; echo "FAIL: serve.py did not start"; exit 1; }
"$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
	--no-first-run --no-default-browser-check --user-data-dir="$w/profile" \
	"http://127.0.0.1:$(cat "$w/port")/test.html" >"$w/chromium.log" 2>&1 &
bpid=$!
st=0
wait $spid || st=$?
kill $bpid 2>/dev/null || true
wait $bpid 2>/dev/null || true
cat "$w/serve.log"
if [ $st -ne 0 ]; then
	echo "FAIL: no result from the page; Chromium said:"
	tail -20 "$w/chromium.log"
	exit 1
fi
rc=0
tail -1 "$w/serve.log" | "$py" -c '
import json, sys
r = json.load(sys.stdin)
print("browser:", r["userAgent"])
bad = 0
for m in r["results"]:
    print(json.dumps(m))
    bad += not m["ok"]
print("%d passed, %d failed" % (len(r["results"]) - bad, bad))
sys.exit(1 if bad or not r["results"] else 0)' || rc=1
# the draw-a-digit page (examples/web) on lenet, when lenet is tested
for m in "$@"; do
	[ "$m" != lenet ] || "$here/digit.sh" "$burncc" "$models" "$w/digit" "$cc" "$browser" "$py" || rc=1
done
exit $rc

#!/bin/sh
# The draw-a-digit page (examples/web/index.html) in headless Chromium,
# from tests/wasm/run.sh (ctest browser_wasm):
#   1. lenet built into lenet.wasm, the page and burncc.mjs served on
#      127.0.0.1 (serve.py) with digit.png, a 28 x 28 "3" made here;
#   2. the page (?test=1) draws a 7 with the code the pointer events take
#      and picks digit.png with the code the file input takes, runs the
#      model on each and POSTs the inputs it fed, the outputs and the
#      class it shows;
#   3. here: the drawing lit the input, the picked image's input follows
#      digit.png (correlation > 0.9), and `burncc run` on the same inputs
#      gives the same outputs (burncc check's tolerance) and the same
#      predicted class, which the page shows;
#   4. where onnxruntime-web is installed (BUILD/bench_web, by
#      bench/web/run.sh), the page runs the same inputs there too: the
#      same class, outputs within 1e-5 (else says it did not).
#
#   digit.sh BURNCC MODELS WORKDIR CC BROWSER PYTHON
set -eu
burncc=$1 models=$2 w=$3 cc=$4 browser=$5 py=$6
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rm -rf "$w" && mkdir -p "$w"
BURNCC_WASM_CC=$cc "$burncc" "$models/lenet/model.onnx" --target wasm -o "$w/lenet.wasm"
cp "$root/examples/web/index.html" "$root/targets/wasm/burncc.mjs" "$w/"
cp "$models/lenet/model.onnx" "$w/lenet.onnx"
dist="$(dirname "$burncc")/bench_web/node_modules/onnxruntime-web/dist"
if [ -d "$dist" ]; then
	mkdir -p "$w/ort"
	cp "$dist/ort.wasm.min.mjs" "$w/ort/ort.mjs"
	cp "$dist"/ort-wasm-simd-threaded.wasm "$dist"/ort-wasm-simd-threaded.mjs "$w/ort/"
fi
# digit.png: a 3 in white on black, 8-bit gray, no gamma or colour chunks
"$py" - "$w/digit.png" <<'PY'
import struct, sys, zlib
glyph = ["#####", "....#", "....#", ".###.", "....#", "....#", "#####"]
img = [[0] * 28 for _ in range(28)]
for r, row in enumerate(glyph):
    for c, ch in enumerate(row):
        if ch == "#":
            for dy in range(3):
                for dx in range(3):
                    img[4 + 3 * r + dy][7 + 3 * c + dx] = 255
raw = b"".join(b"\0" + bytes(row) for row in img)
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 28, 28, 8, 0, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
open(sys.argv[1], "wb").write(png)
open(sys.argv[1] + ".txt", "w").write("".join("%d\n" % v for row in img for v in row))
PY

"$py" "$here/serve.py" "$w" "$w/port" 120 >"$w/serve.log" 2>&1 &
spid=$!
i=0
while [ ! -f "$w/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -f "$w/port" ] || { kill $spid 2>/dev/null; echo "FAIL: serve.py did not start"; exit 1; }
"$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
	--no-first-run --no-default-browser-check --user-data-dir="$w/profile" \
	"http://127.0.0.1:$(cat "$w/port")/index.html?test=1" >"$w/chromium.log" 2>&1 &
bpid=$!
st=0
wait $spid || st=$?
kill $bpid 2>/dev/null || true
wait $bpid 2>/dev/null || true
if [ $st -ne 0 ]; then
	echo "FAIL: no result from the digit page; Chromium said:"
	tail -20 "$w/chromium.log"
	exit 1
fi
tail -1 "$w/serve.log" >"$w/result.json"

# the page's inputs through burncc run, compared with the page's outputs
"$py" - "$w" "$burncc" "$models/lenet/model.onnx" <<'PY'
import json, math, os, struct, subprocess, sys
w, burncc, model = sys.argv[1:4]
r = json.load(open(os.path.join(w, "result.json")))
if "error" in r:
    sys.exit("FAIL: the page: " + r["error"])
dims = r["dims"]
hw = dims[-1] * dims[-2]

def npy_write(path, data, shape):
    h = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        "".join("%d, " % d for d in shape))
    h += " " * (63 - (10 + len(h)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode())
        f.write(struct.pack("<%df" % len(data), *data))

def npy_read(path):
    b = open(path, "rb").read()
    n = struct.unpack("<H", b[8:10])[0]
    hdr = b[10:10 + n].decode()
    assert "'<f4'" in hdr, hdr
    body = b[10 + n:]
    return list(struct.unpack("<%df" % (len(body) // 4), body))

bad = 0
for what in ("drawn", "picked"):
    p = r[what]
    x = p["input"]
    lit = sum(1 for v in x[:hw] if v > 0.5)
    d = os.path.join(w, what)
    os.makedirs(d, exist_ok=True)
    npy_write(os.path.join(d, "x.npy"), x, dims)
    out = subprocess.run([burncc, "run", model, "--input", "x=" + os.path.join(d, "x.npy"),
                          "--output", d], capture_output=True, text=True)
    if out.returncode:
        sys.exit("FAIL: burncc run: " + out.stderr)
    ys = [f for f in os.listdir(d) if f.endswith(".npy") and f != "x.npy"]
    want = npy_read(os.path.join(d, ys[0]))
    got = p["output"]
    n = r["outDims"][-1]
    worst = max(abs(a - b) for a, b in zip(got, want))
    ok = len(got) == len(want) and all(abs(a - b) <= 1e-5 + 1e-3 * abs(b) for a, b in zip(got, want))
    cls = max(range(n), key=lambda i: want[i])
    ok = ok and cls == p["predicted"]
    note = ""
    if what == "drawn":
        ok = ok and 40 <= lit <= 400
    else:
        png = [int(v) / 255 for v in open(os.path.join(w, "digit.png.txt"))]
        g = x[:hw]
        ma, mb = sum(g) / hw, sum(png) / hw
        cov = sum((a - ma) * (b - mb) for a, b in zip(g, png))
        corr = cov / math.sqrt(sum((a - ma) ** 2 for a in g) * sum((b - mb) ** 2 for b in png))
        note = ", correlation with digit.png %.3f" % corr
        ok = ok and corr > 0.9 and r["guessShown"] == str(p["predicted"])
    o = r.get(what + "Ort")
    if o:
        ook = o["predicted"] == p["predicted"] and o["maxDiff"] <= 1e-5
        note += "; onnxruntime-web: class %d, %.3f ms, outputs within %.2g%s" % (
            o["predicted"], o["ms"], o["maxDiff"], "" if ook else " (FAIL)")
        ok = ok and ook
    elif os.path.isdir(os.path.join(w, "ort")):
        ok = False
        note += "; onnxruntime-web served but did not run (FAIL)"
    else:
        note += "; onnxruntime-web not installed: not compared"
    print("%s %s: %d pixels lit%s, class %d (burncc run: %d), max |page - burncc run| %.3g, %.3f ms"
          % ("PASS" if ok else "FAIL", what, lit, note, p["predicted"], cls, worst, p["ms"]))
    bad += not ok
print("browser:", r["userAgent"])
sys.exit(1 if bad else 0)
PY

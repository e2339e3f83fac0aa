#!/usr/bin/python3
"""safetensors_load.py BURNCC WORK - load_safetensors into a module: a
Linear's weight and bias (f32) and a Tensor field (f16, cast to f32) from
a file written here, and the module's output against NumPy; then hostile
files (truncated, header past the end, offsets past the data, a shape that
differs, a name that matches nothing): each must be a one-line error at
the call's position with exit 1, never a crash."""
import json, os, struct, subprocess, sys
import numpy as np

burncc, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(5)
W = rng.standard_normal((4, 3)).astype(np.float32)
b = rng.standard_normal(3).astype(np.float32)
s = rng.standard_normal(3).astype(np.float16)
x = rng.standard_normal((2, 4)).astype(np.float32)

def write(path, tensors, mutate=None):
    header, data = {}, b""
    for name, a, dt in tensors:
        raw = a.tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    header["__metadata__"] = {"format": "test"}
    h = json.dumps(header).encode()
    blob = struct.pack("<Q", len(h)) + h + data
    if mutate:
        blob = mutate(blob, h)
    open(path, "wb").write(blob)

script = """module M { fc: Linear, scale: Tensor
  fn forward(self, x) { self.fc(x) * self.scale } }
let m = M { fc: Linear(4, 3), scale: ones([3]) };
let m = load_safetensors(m, "%s");
print(m(%s).tolist());
"""
good = os.path.join(work, "w.safetensors")
write(good, [("fc.weight", W, "F32"), ("fc.bias", b, "F32"), ("scale", s, "F16")])
xs = "tensor(%s)" % json.dumps(x.astype(np.float64).tolist())
open(os.path.join(work, "good.burn"), "w").write(script % (good, xs))
r = subprocess.run([burncc, "run", "--no-cache", os.path.join(work, "good.burn")], capture_output=True, text=True)
if r.returncode:
    sys.exit("FAIL load: " + r.stderr)
got = np.array(json.loads(r.stdout.strip().splitlines()[-1]))
want = (x @ W + b) * s.astype(np.float32)
if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
    sys.exit("FAIL load: %s, expected %s" % (got, want))
print("ok   the loaded module computes (x @ W + b) * scale as NumPy does")

bad = 0
cases = {
    "truncated": ([("fc.weight", W, "F32")], lambda blob, h: blob[:len(blob) - 5]),
    "header_past_end": ([("fc.weight", W, "F32")], lambda blob, h: struct.pack("<Q", 1 << 40) + blob[8:]),
    "offsets_past_data": ([("fc.weight", W, "F32")], lambda blob, h: blob.replace(b"[0, 48]", b"[0, 4800]")),
    "shape_differs": ([("fc.weight", W.T.copy(), "F32")], None),
    "unknown_name": ([("fc.kernel", W, "F32")], None),
    "bad_dtype": ([("fc.weight", W, "F8_E4M3")], None),
}
for name, (ts, mut) in cases.items():
    path = os.path.join(work, name + ".safetensors")
    write(path, ts, mut)
    sp = os.path.join(work, name + ".burn")
    open(sp, "w").write(script % (path, xs))
    r = subprocess.run([burncc, "run", "--no-cache", sp], capture_output=True, text=True)
    first = (r.stderr.splitlines() or [""])[0]
    if r.returncode != 1 or ":4:9: error: load_safetensors" not in first:
        print("FAIL %s: exit %d, %r" % (name, r.returncode, r.stderr))
        bad = 1
    else:
        print("ok   %s: %s" % (name, first.split("error: ", 1)[1]))
sys.exit(bad)

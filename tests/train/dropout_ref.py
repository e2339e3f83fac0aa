#!/usr/bin/python3
"""dropout_ref.py BURNCC WORKDIR - Dropout in training mode (api/dsl.h,
dsl_vm_set_training; tools/train.c fills its noise): burncc train against
float64 numpy.

The model is Linear(4, 3) then Dropout(0.5) on 8 images of 2x2 pixels, one
batch of all 8, SGD (lr 0.5, no momentum) for 6 steps from a checkpoint
written here.  The reference replays the run: the rows in the order the
seeded shuffle gives (splitmix64, Fisher-Yates, as tools/train.c), the
step's noise u (splitmix64 from seed * 0x9E3779B97F4A7C15 ^ t << 8 ^ k, the
top 24 bits over 2^24), the mask u >= 0.5 scaling the kept logits by 2, the
cross-entropy, its gradient through the mask, the update.  Checked: every
step's loss, the final parameters, and the test loss after each epoch,
which is the model without Dropout (eval mode: the identity).  A missing
scale, an unmasked gradient, a mask in eval or the wrong noise is off by far
more than the tolerance (2e-5 relative plus 2e-6).  The same model as ONNX
(Dropout with its ratio input; python3-onnx writes it) gives the same
losses from the same checkpoint."""
import json, os, struct, subprocess, sys
import numpy as np
from safetensors_np import st_read, st_write, splitmix, M64

burncc, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(5)
N, H, K, STEPS, P, LR, SEED = 8, 2, 3, 6, 0.5, 0.5, 7

img = rng.integers(0, 256, size=(N, H, H), dtype=np.uint8)
lab = np.array([0, 1, 2, 1, 0, 2, 2, 1], dtype=np.uint8)
data = os.path.join(work, "data")
os.makedirs(data, exist_ok=True)
for pre in ("train", "t10k"):
    with open(os.path.join(data, pre + "-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">BBBBIII", 0, 0, 8, 3, N, H, H) + img.tobytes())
    with open(os.path.join(data, pre + "-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">BBBBI", 0, 0, 8, 1, N) + lab.tobytes())
x = img.reshape(N, H * H).astype(np.float32) / np.float32(255.0)
model = os.path.join(work, "drop.burn")
with open(model, "w") as f:
    f.write("seed(1);\nlet l = Linear(4, 3);\nlet d = Dropout(%g);\n"
            "fn main(x: f32[8, 4]) { d(l(x)) }\n" % P)


common = [burncc, "train", model, "--data", data, "--no-dashboard", "--optimizer", "sgd",
          "--momentum", "0", "--seed", str(SEED)]
probe = os.path.join(work, "probe.safetensors")
r = subprocess.run(common + ["--epochs", "1", "--save", probe], capture_output=True, text=True)
if r.returncode:
    sys.exit("FAIL probe: %s" % r.stderr)
p = st_read(probe)
wname = [k for k in p if k != "train/pos" and len(p[k].shape) == 2][0]
bname = [k for k in p if k != "train/pos" and len(p[k].shape) == 1][0]
W = rng.uniform(-0.8, 0.8, size=(H * H, K)).astype(np.float32)
b = rng.uniform(-0.5, 0.5, size=(K,)).astype(np.float32)
start = os.path.join(work, "start.safetensors")
st_write(start, {wname: W, bname: b, "train/pos": np.array([0, 0], dtype=np.int64)})
out = os.path.join(work, "run")
r = subprocess.run(common + ["--epochs", str(STEPS), "--lr", str(LR), "--load", start,
                             "--save", out + ".safetensors", "--losses", out + ".loss"],
                   capture_output=True, text=True)
if r.returncode:
    sys.exit("FAIL run: exit %d: %s" % (r.returncode, r.stderr))
losses = [float(l.split()[2]) for l in open(out + ".loss")]
tests = [float(l.split("test loss ")[1].split()[0]) for l in r.stdout.splitlines()
         if "test loss " in l]
got = st_read(out + ".safetensors")


def ce(z, y):
    m = z.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(z - m).sum(axis=1))
    return float(np.mean(lse - z[np.arange(len(y)), y]))


Wd, bd = W.astype(np.float64), b.astype(np.float64)
perm, rs = list(range(N)), SEED
ref, ref_test = [], []
for t in range(1, STEPS + 1):
    for i in range(N - 1, 0, -1):
        rs, v = splitmix(rs)
        j = v % (i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    xb, yb = x[perm].astype(np.float64), lab[perm].astype(np.int64)
    ns = ((SEED * 0x9E3779B97F4A7C15) & M64) ^ ((t << 8) & M64) ^ 0
    u = np.empty(N * K)
    for e in range(N * K):
        ns, v = splitmix(ns)
        u[e] = (v >> 40) * 2.0 ** -24
    keep = (u.reshape(N, K) >= P).astype(np.float64) / (1 - P)
    z = (xb @ Wd + bd) * keep
    ref.append(ce(z, yb))
    sm = np.exp(z - z.max(axis=1, keepdims=True))
    sm /= sm.sum(axis=1, keepdims=True)
    sm[np.arange(N), yb] -= 1
    dz = sm / N * keep
    Wd, bd = Wd - LR * xb.T @ dz, bd - LR * dz.sum(axis=0)
    ref_test.append(ce(x.astype(np.float64) @ Wd + bd, lab.astype(np.int64)))

bad = 0


def close(what, a, e, tol=2e-5):
    global bad
    a, e = np.asarray(a, dtype=np.float64), np.asarray(e, dtype=np.float64)
    err = np.abs(a - e) / (tol * np.abs(e) + 2e-6)
    if a.shape != e.shape or err.max() > 1:
        print("FAIL %s: got %s, expected %s" % (what, a, e))
        bad = 1


close("step losses", losses, ref)
close("test losses (eval: no dropout)", tests, ref_test, 2e-4)   # printed to 4 places
close("final weight", got[wname], Wd)
close("final bias", got[bname], bd)

# The same model as ONNX (MatMul, Add, Dropout with its ratio an input),
# its initializers named as the script's parameters so that the same
# checkpoint starts it: the same losses (tools/train.c onnx_dropouts).
try:
    import onnx
    from onnx import helper, numpy_helper, TensorProto
except ImportError:
    onnx = None
    print("no python3-onnx: the ONNX model's Dropout was not checked")
if onnx is not None:
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", wname], ["h"]),
         helper.make_node("Add", ["h", bname], ["z"]),
         helper.make_node("Dropout", ["z", "ratio"], ["y", "mask"])],
        "drop", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, H * H])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [N, K])],
        [numpy_helper.from_array(W, wname), numpy_helper.from_array(b, bname),
         numpy_helper.from_array(np.array(P, dtype=np.float32), "ratio")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    omodel = os.path.join(work, "drop.onnx")
    onnx.save(m, omodel)
    oout = os.path.join(work, "onnx")
    r = subprocess.run([a if a != model else omodel for a in common] +
                       ["--epochs", str(STEPS), "--lr", str(LR), "--load", start,
                        "--save", oout + ".safetensors", "--losses", oout + ".loss"],
                       capture_output=True, text=True)
    if r.returncode:
        print("FAIL onnx run: exit %d: %s" % (r.returncode, r.stderr))
        bad = 1
    else:
        close("the ONNX model's step losses", [float(l.split()[2]) for l in open(oout + ".loss")], ref)
        close("the ONNX model's test losses", [float(l.split("test loss ")[1].split()[0])
                                               for l in r.stdout.splitlines() if "test loss " in l],
              ref_test, 2e-4)
print("dropout_ref: %s (losses %s)" % ("FAIL" if bad else "OK",
                                       " ".join("%.5f" % l for l in losses)))
sys.exit(bad)

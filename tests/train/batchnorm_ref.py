#!/usr/bin/python3
"""batchnorm_ref.py BURNCC WORKDIR - a script's BatchNorm layers in training
(api/dsl.h, dsl_vm_set_training; tools/train.c carries the running
statistics): burncc train against PyTorch 1.13 in float64.

The model is Conv2d(1, 2, 3), BatchNorm(2), ReLU, Linear(8, 5),
BatchNorm(5), ReLU, Linear(5, 3) on 16 images of 4x4 pixels in batches of
8, SGD (lr 0.1, momentum 0.9) for 3 epochs (6 steps) from a checkpoint written here
(random parameters and running statistics, the running variance positive).
The reference replays the run: the rows in the order the seeded shuffle
gives (splitmix64, Fisher-Yates, as tools/train.c), torch's BatchNorm2d and
BatchNorm1d in train mode (batch mean and biased variance normalise, the
running statistics move by momentum 0.1 with the unbiased variance), the
cross-entropy, SGD (not Adam: a bias before a BatchNorm has a true gradient
of 0, and the ~1e-8 that f32 rounding gives it Adam scales up to steps of
the learning rate's order, as torch's f32 Adam does).  Checked: every step's loss, the test loss after each
epoch (eval mode: the running statistics normalise), the final parameters
and running statistics in the checkpoint (which holds no optimiser states
for the statistics), the exported ONNX model's (--save-onnx) running
statistics, the same run as train() in the script (its losses, and the
script's layer holding the trained running mean after it), and the C train
step (-o, built with examples/train_aot.c by $CC, default cc) giving the same
losses.  The batch variance instead of the unbiased one, a running
statistic trained by the optimiser or left unchanged, or the batch statistics in eval
are off by far more than the tolerance (1e-4 relative plus 1e-5).
Without python3-torch: exit 77 (ctest SKIP)."""
import json, os, struct, subprocess, sys
import numpy as np
from c_step import c_step, torch_ref
from safetensors_np import st_read, st_write, splitmix, M64

try:
    import torch
except ImportError:
    print("no python3-torch: not run")
    sys.exit(77)

burncc, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(11)
N, B, H, K, EPOCHS, LR, MOM, SEED = 16, 8, 4, 3, 3, 0.1, 0.9, 5

img = rng.integers(0, 256, size=(N, H, H), dtype=np.uint8)
lab = rng.integers(0, K, size=N).astype(np.uint8)
data = os.path.join(work, "data")
os.makedirs(data, exist_ok=True)
for pre in ("train", "t10k"):
    with open(os.path.join(data, pre + "-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">BBBBIII", 0, 0, 8, 3, N, H, H) + img.tobytes())
    with open(os.path.join(data, pre + "-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">BBBBI", 0, 0, 8, 1, N) + lab.tobytes())
x = (img.astype(np.float32) / np.float32(255.0)).reshape(N, 1, H, H)
SCRIPT = """seed(1);
module Net {
    conv: Conv2d, bn1: BatchNorm, fc1: Linear, bn2: BatchNorm, fc2: Linear
    fn forward(self, x) {
        let x = relu(self.bn1(self.conv(x)));
        let x = reshape(x, [8, 8]);
        self.fc2(relu(self.bn2(self.fc1(x))))
    }
}
let net = Net { conv: Conv2d(1, 2, 3), bn1: BatchNorm(2), fc1: Linear(8, 5),
                bn2: BatchNorm(5), fc2: Linear(5, 3) };
fn main(x: f32[8, 1, 4, 4]) { net(x) }
"""
model = os.path.join(work, "bn.burn")
with open(model, "w") as f:
    f.write(SCRIPT)


bad = 0


def fail(msg):
    global bad
    print("FAIL " + msg)
    bad = 1


common = ["--data", data, "--no-dashboard", "--optimizer", "sgd", "--momentum", str(MOM),
          "--seed", str(SEED)]
# the checkpoint's names, in the parameters' order (the order the layers
# read them: conv weight, bias; bn1 weight, bias, running mean, variance ...)
probe = os.path.join(work, "probe.safetensors")
r = subprocess.run([burncc, "train", model] + common + ["--epochs", "1", "--save", probe],
                   capture_output=True, text=True)
if r.returncode:
    sys.exit("FAIL probe: %s" % r.stderr)
names = [k for k in st_read(probe) if k != "train/pos" and "/" not in k]
shapes = [(2, 1, 3, 3), (2,), (2,), (2,), (2,), (2,), (8, 5), (5,), (5,), (5,), (5,), (5,),
          (5, 3), (3,)]
role = ["conv.w", "conv.b", "bn1.w", "bn1.b", "bn1.rm", "bn1.rv", "fc1.w", "fc1.b",
        "bn2.w", "bn2.b", "bn2.rm", "bn2.rv", "fc2.w", "fc2.b"]
if len(names) != len(shapes):
    sys.exit("FAIL probe: %d parameters, expected %d: %s" % (len(names), len(shapes), names))
stats = [names[i] for i in (4, 5, 10, 11)]
for s in stats:
    if s + "/b" in st_read(probe):
        fail("the checkpoint holds a momentum state for running statistic '%s'" % s)
init = {}
for nm, sh, ro in zip(names, shapes, role):
    lo, hi = (0.5, 1.5) if ro.endswith(".rv") or ro.endswith("bn1.w") else (-0.6, 0.6)
    init[nm] = rng.uniform(lo, hi, size=sh).astype(np.float32)
start = os.path.join(work, "start.safetensors")
ck = dict(init)
for nm in names:
    if nm not in stats:
        ck[nm + "/b"] = np.zeros_like(init[nm])
ck["train/pos"] = np.array([0, 0], dtype=np.int64)
st_write(start, ck)
out = os.path.join(work, "run")
r = subprocess.run([burncc, "train", model] + common +
                   ["--epochs", str(EPOCHS), "--lr", str(LR), "--load", start,
                    "--save", out + ".safetensors", "--losses", out + ".loss",
                    "--save-onnx", out + ".onnx"], capture_output=True, text=True)
if r.returncode:
    sys.exit("FAIL run: exit %d: %s" % (r.returncode, r.stderr))
losses = [float(l.split()[2]) for l in open(out + ".loss")]
tests = [float(l.split("test loss ")[1].split()[0]) for l in r.stdout.splitlines()
         if "test loss " in l]
got = st_read(out + ".safetensors")

# the reference, in float64
torch.set_default_dtype(torch.float64)
P = {ro: torch.tensor(init[nm].astype(np.float64)) for nm, ro in zip(names, role)}
conv = torch.nn.Conv2d(1, 2, 3)
bn1 = torch.nn.BatchNorm2d(2)
fc1 = torch.nn.Linear(8, 5)
bn2 = torch.nn.BatchNorm1d(5)
fc2 = torch.nn.Linear(5, 3)
with torch.no_grad():
    conv.weight.copy_(P["conv.w"]), conv.bias.copy_(P["conv.b"])
    fc1.weight.copy_(P["fc1.w"].T), fc1.bias.copy_(P["fc1.b"])
    fc2.weight.copy_(P["fc2.w"].T), fc2.bias.copy_(P["fc2.b"])
    for bn, k in ((bn1, "bn1"), (bn2, "bn2")):
        bn.weight.copy_(P[k + ".w"]), bn.bias.copy_(P[k + ".b"])
        bn.running_mean.copy_(P[k + ".rm"]), bn.running_var.copy_(P[k + ".rv"])
net = torch.nn.Sequential(conv, bn1, torch.nn.ReLU(), torch.nn.Flatten(), fc1, bn2,
                          torch.nn.ReLU(), fc2)
opt = torch.optim.SGD(net.parameters(), lr=LR, momentum=MOM)
xt, yt = torch.tensor(x.astype(np.float64)), torch.tensor(lab.astype(np.int64))
ref, ref_test = torch_ref(net, opt, xt, yt, N, B, EPOCHS, SEED)


def close(what, a, e, tol=1e-4):
    a, e = np.asarray(a, dtype=np.float64), np.asarray(e, dtype=np.float64)
    err = np.abs(a - e) / (tol * np.abs(e) + 1e-5)
    if a.shape != e.shape or err.max() > 1:
        fail("%s: got %s, expected %s" % (what, a, e))


final = {"conv.w": conv.weight, "conv.b": conv.bias, "fc1.w": fc1.weight.T,
         "fc1.b": fc1.bias, "fc2.w": fc2.weight.T, "fc2.b": fc2.bias}
for bn, k in ((bn1, "bn1"), (bn2, "bn2")):
    final.update({k + ".w": bn.weight, k + ".b": bn.bias, k + ".rm": bn.running_mean,
                  k + ".rv": bn.running_var})
close("step losses", losses, ref)
close("test losses (eval: the running statistics)", tests, ref_test, 2e-4)  # 4 places
for nm, ro in zip(names, role):
    close("final %s (%s)" % (ro, nm), got[nm], final[ro].detach().numpy())

# the exported evaluation graph holds the trained running statistics
try:
    import onnx
    from onnx import numpy_helper
except ImportError:
    onnx = None
    print("no python3-onnx: the exported model was not checked")
if onnx is not None:
    m = onnx.load(out + ".onnx")
    ini = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    bns = [n for n in m.graph.node if n.op_type == "BatchNormalization"]
    if len(bns) != 2:
        fail("the exported model has %d BatchNormalization nodes, not 2" % len(bns))
    for n, k in zip(bns, ("bn1", "bn2")):
        close("exported %s running mean" % k, ini[n.input[3]], final[k + ".rm"].detach().numpy())
        close("exported %s running var" % k, ini[n.input[4]], final[k + ".rv"].detach().numpy())

# the same run from the script: train() (api/dsl.h, tools/train.c train_dsl);
# after it the layer holds the trained running mean
dsl = os.path.join(work, "bn_dsl.burn")
with open(dsl, "w") as f:
    f.write(SCRIPT + 'train(main, "%s", optimizer="sgd", lr=%g, momentum=%g, epochs=%d, '
            'seed=%d, load="%s", losses="%s", dashboard=false);\n'
            'print(net.bn2.running_mean);\n'
            % (data, LR, MOM, EPOCHS, SEED, start, out + "_dsl.loss"))
r = subprocess.run([burncc, "run", dsl], capture_output=True, text=True)
if r.returncode:
    fail("train() in the script: exit %d: %s" % (r.returncode, r.stderr))
else:
    close("train()'s step losses", [float(l.split()[2]) for l in open(out + "_dsl.loss")], ref)
    line = [l for l in r.stdout.splitlines() if l.startswith("tensor([")]
    nums = [float(t) for t in line[-1][8:].split("]")[0].split(",")] if line else []
    close("bn2.running_mean after train() (printed to 4 digits)", nums,
          final["bn2.rm"].detach().numpy(), 1e-3)

# the C train step (-o, with examples/train_aot.c): the statistics are
# parameters of the step's layout, carried by the caller's two buffer sets;
# the same losses and test losses as burncc train's
cc = os.environ.get("CC", "cc")
aot = os.path.join(work, "aot")
os.makedirs(aot, exist_ok=True)
r = subprocess.run([burncc, "train", model, "-o", os.path.join(aot, "step.c"), "--eval-o",
                    os.path.join(aot, "step_eval.c"), "--optimizer", "sgd", "--momentum",
                    str(MOM), "--lr", str(LR), "--seed", str(SEED), "--load", start],
                   capture_output=True, text=True)
if r.returncode:
    fail("-o: exit %d, %s" % (r.returncode, r.stderr.strip()))
else:
    c_step(cc, aot, data, EPOCHS, SEED, ref, ref_test, fail, close)
# a layer run twice in one step would update its statistics twice: refused
twice = os.path.join(work, "twice.burn")
with open(twice, "w") as f:
    f.write("let l = Linear(16, 3);\nlet bn = BatchNorm(3);\n"
            "fn main(x: f32[8, 16]) { bn(bn(l(x))) }\n")
r = subprocess.run([burncc, "train", twice] + common + ["--epochs", "1"], capture_output=True,
                   text=True)
if r.returncode != 1 or "twice.burn:3:" not in r.stderr or "runs twice" not in r.stderr:
    fail("a BatchNorm run twice: exit %d, %s" % (r.returncode, r.stderr.strip()))
print("batchnorm_ref: %s (losses %s)" % ("FAIL" if bad else "OK",
                                         " ".join("%.5f" % l for l in losses)))
sys.exit(bad)

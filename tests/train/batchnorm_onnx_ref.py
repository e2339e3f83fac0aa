#!/usr/bin/python3
"""batchnorm_onnx_ref.py BURNCC WORKDIR - an ONNX model's BatchNormalization
nodes in training (tools/train.c bn_training): burncc train against PyTorch
1.13 in float64, the sibling of batchnorm_ref.py (a script's BatchNorm
layers) with the model exported by torch.onnx.

The model is Conv2d(1, 2, 3), BatchNorm2d(2), ReLU, Flatten, Linear(8, 5),
BatchNorm1d(5), ReLU, Linear(5, 3), exported in eval mode with
TrainingMode.PRESERVE (EVAL would fold the first BatchNorm into the Conv):
BatchNormalization nodes in inference form, momentum 0.9 (PyTorch's 0.1).
The first BatchNorm keeps PyTorch's initialisation, so the exporter makes
its running variance an Identity of its weight (both ones) and its running
mean one of its bias (both zeros): burncc must part them (bn_own_stats).
The rest are random, the running variances positive.  16 images of 4x4
pixels in batches of 8, SGD (lr 0.1, momentum 0.9), 3 epochs (6 steps),
seeded shuffles replayed here (splitmix64, Fisher-Yates, as tools/train.c).
Checked: every step's loss, the test loss after each epoch (eval mode: the
running statistics normalise), the final parameters and running statistics
in the checkpoint (no optimiser states for the statistics), the exported
model's (--save-onnx) running statistics, the C train step (`burncc MODEL
--train ... -o`, built with examples/train_aot.c by $CC, default cc), and a
script that imports the model and trains it with train().  The ONNX
variance update (biased) instead of PyTorch's (unbiased), a statistic
trained by the optimiser or left unchanged, or the batch statistics in
eval are off by far more than the tolerance (1e-4 relative plus 1e-5).
Without python3-torch or python3-onnx: exit 77 (ctest SKIP)."""
import os, struct, subprocess, sys
import numpy as np
from c_step import c_step, torch_ref
from safetensors_np import st_read, splitmix

try:
    import torch
    import onnx
    from onnx import numpy_helper
except ImportError as e:
    print("no python3-torch or python3-onnx (%s): not run" % e)
    sys.exit(77)

burncc, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(12)
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

bad = 0


def fail(msg):
    global bad
    print("FAIL " + msg)
    bad = 1


def close(what, a, e, tol=1e-4):
    a, e = np.asarray(a, dtype=np.float64), np.asarray(e, dtype=np.float64)
    err = np.abs(a - e) / (tol * np.abs(e) + 1e-5) if a.shape == e.shape else [2]
    if np.max(err) > 1:
        fail("%s: got %s, expected %s" % (what, a, e))


def make_net():
    return torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2),
                               torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(8, 5),
                               torch.nn.BatchNorm1d(5), torch.nn.ReLU(),
                               torch.nn.Linear(5, 3))


# the model: f32 values, exported; its state (by ONNX initializer name,
# which is the state_dict's) is the reference's start
net = make_net()
with torch.no_grad():
    for k, t in net.state_dict().items():
        if k.startswith("1.") or k.endswith("num_batches_tracked"):
            continue    # BatchNorm2d(2): PyTorch's initialisation
        lo, hi = (0.5, 1.5) if k.endswith("running_var") or k == "5.weight" else (-0.6, 0.6)
        t.copy_(torch.tensor(rng.uniform(lo, hi, size=tuple(t.shape)).astype(np.float32)))
net.eval()
model = os.path.join(work, "bn.onnx")
torch.onnx.export(net, torch.zeros(B, 1, H, H), model, input_names=["x"],
                  output_names=["logits"], training=torch.onnx.TrainingMode.PRESERVE,
                  do_constant_folding=False, opset_version=15)
m0 = onnx.load(model)
bns = [n for n in m0.graph.node if n.op_type == "BatchNormalization"]
if len(bns) != 2 or any(a.name == "training_mode" and a.i for n in bns for a in n.attribute):
    sys.exit("FAIL the export: %d BatchNormalization nodes, expected 2 in inference form"
             % len(bns))
if "1.running_var" in [t.name for t in m0.graph.initializer]:
    print("note: the exporter kept 1.running_var apart from 1.weight: bn_own_stats not "
          "exercised")
start = {k: v.detach().clone().double() for k, v in net.state_dict().items()
         if not k.endswith("num_batches_tracked")}
stats = [k for k in start if "running" in k]

common = ["--data", data, "--no-dashboard", "--optimizer", "sgd", "--momentum", str(MOM),
          "--seed", str(SEED), "--lr", str(LR)]
out = os.path.join(work, "run")
r = subprocess.run([burncc, "train", model] + common +
                   ["--epochs", str(EPOCHS), "--save", out + ".safetensors",
                    "--losses", out + ".loss", "--save-onnx", out + ".onnx"],
                   capture_output=True, text=True)
if r.returncode:
    sys.exit("FAIL run: exit %d: %s" % (r.returncode, r.stderr))
losses = [float(l.split()[2]) for l in open(out + ".loss")]
tests = [float(l.split("test loss ")[1].split()[0]) for l in r.stdout.splitlines()
         if "test loss " in l]
got = st_read(out + ".safetensors")
for k in start:
    if k not in got:
        fail("the checkpoint has no '%s' (has %s)" % (k, sorted(got)))
for s in stats:
    if s + "/b" in got:
        fail("the checkpoint holds a momentum state for running statistic '%s'" % s)

# the reference, in float64
torch.set_default_dtype(torch.float64)
ref_net = make_net()
ref_net.load_state_dict(start, strict=False)
opt = torch.optim.SGD(ref_net.parameters(), lr=LR, momentum=MOM)
xt, yt = torch.tensor(x.astype(np.float64)), torch.tensor(lab.astype(np.int64))
ref, ref_test = torch_ref(ref_net, opt, xt, yt, N, B, EPOCHS, SEED)
final = {k: v.detach().numpy() for k, v in ref_net.state_dict().items()}

close("step losses", losses, ref)
close("test losses (eval: the running statistics)", tests, ref_test, 2e-4)
for k in start:
    if k in got:
        close("final %s" % k, got[k], final[k])

# the exported evaluation graph holds the trained running statistics
mo = onnx.load(out + ".onnx")
ini = {t.name: numpy_helper.to_array(t) for t in mo.graph.initializer}
for n in [n for n in mo.graph.node if n.op_type == "BatchNormalization"]:
    for k, what in ((3, "mean"), (4, "var")):
        nm = n.input[k]
        if nm not in ini or nm not in final:
            fail("exported: BatchNormalization '%s' reads '%s', no trained statistic"
                 % (n.name, nm))
        else:
            close("exported running %s %s" % (what, nm), ini[nm], final[nm])

# the C train step: `burncc MODEL --train ... -o`, with examples/train_aot.c
cc = os.environ.get("CC", "cc")
aot = os.path.join(work, "aot")
os.makedirs(aot, exist_ok=True)
r = subprocess.run([burncc, model, "--train", "-o", os.path.join(aot, "step.c"), "--eval-o",
                    os.path.join(aot, "step_eval.c"), "--optimizer", "sgd", "--momentum",
                    str(MOM), "--lr", str(LR), "--seed", str(SEED)],
                   capture_output=True, text=True)
if r.returncode:
    fail("-o: exit %d, %s" % (r.returncode, r.stderr.strip()))
else:
    c_step(cc, aot, data, EPOCHS, SEED, ref, ref_test, fail, close)

# a script that imports the model and trains it: the import's
# BatchNormalizations train as the ONNX model's do (its weights stay the
# import's, so only the losses are compared)
dsl = os.path.join(work, "bn_import.burn")
with open(dsl, "w") as f:
    f.write('import "bn.onnx" as net;\nfn main(x: f32[%d, 1, %d, %d]) { net(x) }\n'
            'train(main, "%s", optimizer="sgd", lr=%g, momentum=%g, epochs=%d, seed=%d, '
            'losses="%s", dashboard=false);\n'
            % (B, H, H, data, LR, MOM, EPOCHS, SEED, out + "_dsl.loss"))
r = subprocess.run([burncc, "run", dsl], capture_output=True, text=True)
if r.returncode:
    fail("train() of an imported model: exit %d: %s" % (r.returncode, r.stderr))
else:
    close("train()'s step losses (imported model)",
          [float(l.split()[2]) for l in open(out + "_dsl.loss")], ref)

# statistics that are not initializers cannot be carried: refused, named
bad_m = onnx.load(model)
g = bad_m.graph
bn0 = [n for n in g.node if n.op_type == "BatchNormalization"][1]
g.node.insert(0, onnx.helper.make_node("Neg", [bn0.input[3]], ["negmean"], name="neg"))
g.node.insert(1, onnx.helper.make_node("Neg", ["negmean"], ["mean2"], name="neg2"))
bn0.input[3] = "mean2"
badp = os.path.join(work, "bad.onnx")
onnx.save(bad_m, badp)
r = subprocess.run([burncc, "train", badp] + common + ["--epochs", "1"], capture_output=True,
                   text=True)
if r.returncode != 1 or "running mean must be an initializer" not in r.stderr:
    fail("a computed running mean: exit %d, %s" % (r.returncode, r.stderr.strip()))
print("batchnorm_onnx_ref: %s (losses %s)" % ("FAIL" if bad else "OK",
                                              " ".join("%.5f" % l for l in losses)))
sys.exit(bad)

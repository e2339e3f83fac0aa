#!/usr/bin/python3
"""optim_ref.py BURNCC WORKDIR - burncc train's optimisers, weight decay,
clipping, learning-rate schedules and losses (label smoothing, MSE,
BCE with logits, L1) against updates computed here, in
float64 numpy, from the update rules (PyTorch 1.13's, as passes/optim.h
writes them) and the model's gradient derived by hand.

The model is one Linear(4, 3) (y = x W + b) on 8 images of 2x2 pixels, one
batch of all 8: a step's mean loss and gradient do not depend on the
shuffled order.  Every case starts from the same checkpoint written here
(random parameters, zero optimiser state, position 0), runs 6 steps (one
per epoch) with --load and --save, and compares every step's loss and the
final parameters and optimiser states with the reference (float32 against
float64: tolerance 2e-5 relative plus 2e-6; a wrong rule is off by orders
of magnitude more)."""
import json, math, os, struct, subprocess, sys
import numpy as np
from safetensors_np import st_read, st_write

burncc, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(11)
N, H, K, STEPS = 8, 2, 3, 6

# the data: IDX files, the test set the same as the training set
img = rng.integers(0, 256, size=(N, H, H), dtype=np.uint8)
lab = np.array([0, 1, 2, 1, 0, 2, 2, 1], dtype=np.uint8)
data = os.path.join(work, "data")
os.makedirs(data, exist_ok=True)
for pre in ("train", "t10k"):
    with open(os.path.join(data, pre + "-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">BBBBIII", 0, 0, 8, 3, N, H, H) + img.tobytes())
    with open(os.path.join(data, pre + "-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">BBBBI", 0, 0, 8, 1, N) + lab.tobytes())
x = img.reshape(N, H * H).astype(np.float64) / 255.0
model = os.path.join(work, "tiny.burn")
with open(model, "w") as f:
    f.write("seed(1);\nlet l = Linear(4, 3);\nfn main(x: f32[8, 4]) { l(x) }\n")
# the same layer ending in log_softmax: NLL of it is cross-entropy
model_ls = os.path.join(work, "tiny_logsoftmax.burn")
with open(model_ls, "w") as f:
    f.write("seed(1);\nlet l = Linear(4, 3);\n"
            "fn main(x: f32[8, 4]) { log_softmax(l(x), axis=1) }\n")


def train(name, args, model=model):
    out = os.path.join(work, name)
    r = subprocess.run([burncc, "train", model, "--data", data, "--epochs", str(STEPS),
                        "--no-dashboard", "--load", os.path.join(work, "start.safetensors"),
                        "--save", out + ".safetensors", "--losses", out + ".loss"] + args,
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit("FAIL %s: exit %d: %s" % (name, r.returncode, r.stderr))
    losses = [float(l.split()[2]) for l in open(out + ".loss")]
    tests = [float(l.split("test loss ")[1].split()[0]) for l in r.stdout.splitlines()
             if "test loss " in l]
    return st_read(out + ".safetensors"), losses, tests


# the parameters' names: a probe run's checkpoint
probe = os.path.join(work, "probe.safetensors")
subprocess.run([burncc, "train", model, "--data", data, "--epochs", "1", "--no-dashboard",
                "--optimizer", "sgd", "--momentum", "0", "--save", probe],
               check=True, capture_output=True)
names = [k for k in st_read(probe) if k != "train/pos"]
wname = [k for k in names if len(st_read(probe)[k].shape) == 2][0]
bname = [k for k in names if len(st_read(probe)[k].shape) == 1][0]
W0 = rng.uniform(-0.8, 0.8, size=(H * H, K)).astype(np.float32)
b0 = rng.uniform(-0.3, 0.3, size=(K,)).astype(np.float32)


def loss_grad(c, W, b):
    """the loss of the case and its gradient by hand (dz: d loss / d z)"""
    z = x @ W + b
    t = np.eye(K)[lab]
    kind, eps = c.get("loss", "cross_entropy"), c.get("smoothing", 0.0)
    if kind == "cross_entropy":
        zs = z - z.max(axis=1, keepdims=True)
        logp = zs - np.log(np.exp(zs).sum(axis=1, keepdims=True))
        q = (1 - eps) * t + eps / K          # the smoothed targets
        loss = -np.mean((q * logp).sum(axis=1))
        dz = (np.exp(logp) - q) / N
    elif kind == "mse":
        loss = np.mean((z - t) ** 2)
        dz = 2 * (z - t) / (N * K)
    elif kind == "nll":  # of z itself, PyTorch's NLLLoss: -mean z[i, label i]
        loss = -np.mean((z * t).sum(axis=1))
        dz = -t / N
    elif kind == "l1":
        loss = np.mean(np.abs(z - t))
        dz = np.sign(z - t) / (N * K)
    else:  # bce with logits
        loss = np.mean(np.maximum(z, 0) - z * t + np.log1p(np.exp(-np.abs(z))))
        dz = (1 / (1 + np.exp(-z)) - t) / (N * K)
    return loss, x.T @ dz, dz.sum(axis=0)


def lr_at(c, t):
    """the learning rate of step t, from the schedules' definitions"""
    lr, w = c["lr"], c.get("warmup", 0)
    if t <= w:
        return lr * t / w
    u = t - w
    if c.get("sched") == "step":
        return lr * c["gamma"] ** ((u - 1) // c["step"])
    if c.get("sched") == "cosine":
        return lr * (1 + math.cos(math.pi * (u - 1) / (STEPS - w))) / 2
    return lr


def reference(c):
    P = [W0.astype(np.float64), b0.astype(np.float64)]
    st = [dict(m=0 * p, v=0 * p, b=0 * p) for p in P]
    mu, wd, kind = c.get("momentum", 0.0), c.get("wd", 0.0), c["opt"]
    b1, b2, eps, alpha = 0.9, 0.999, 1e-8, c.get("alpha", 0.99)
    losses = []
    for t in range(1, STEPS + 1):
        loss, gW, gb = loss_grad(c, *P)
        losses.append(loss)
        G = [gW, gb]
        if c.get("clip"):
            norm = math.sqrt(sum((g * g).sum() for g in G))
            G = [g * min(1.0, c["clip"] / (norm + 1e-6)) for g in G]
        lr = lr_at(c, t)
        for p, g, s in zip(P, G, st):
            if kind != "adamw":
                g = g + wd * p
            if kind == "sgd":
                if mu:
                    s["b"] = mu * s["b"] + g
                    g = g + mu * s["b"] if c.get("nesterov") else s["b"]
                p -= lr * g
            elif kind in ("adam", "adamw"):
                if kind == "adamw":
                    p *= 1 - lr * wd
                s["m"] = b1 * s["m"] + (1 - b1) * g
                s["v"] = b2 * s["v"] + (1 - b2) * g * g
                mh = s["m"] / (1 - b1 ** t)
                vh = s["v"] / (1 - b2 ** t)
                p -= lr * mh / (np.sqrt(vh) + eps)
            else:  # rmsprop
                s["v"] = alpha * s["v"] + (1 - alpha) * g * g
                u = g / (np.sqrt(s["v"]) + eps)
                if mu:
                    s["b"] = mu * s["b"] + u
                    u = s["b"]
                p -= lr * u
    return P, st, losses


CASES = [
    ("sgd", dict(opt="sgd", lr=0.5), ["--optimizer", "sgd", "--lr", "0.5", "--momentum", "0"]),
    ("sgd_momentum_wd", dict(opt="sgd", lr=0.3, momentum=0.9, wd=0.05),
     ["--optimizer", "sgd", "--lr", "0.3", "--momentum", "0.9", "--weight-decay", "0.05"]),
    ("sgd_nesterov", dict(opt="sgd", lr=0.3, momentum=0.8, wd=0.05, nesterov=1),
     ["--optimizer", "sgd", "--lr", "0.3", "--momentum", "0.8", "--weight-decay", "0.05", "--nesterov"]),
    ("adam_wd", dict(opt="adam", lr=0.05, wd=0.1),
     ["--optimizer", "adam", "--lr", "0.05", "--weight-decay", "0.1"]),
    ("adamw", dict(opt="adamw", lr=0.05, wd=0.5),
     ["--optimizer", "adamw", "--lr", "0.05", "--weight-decay", "0.5"]),
    ("rmsprop", dict(opt="rmsprop", lr=0.01), ["--optimizer", "rmsprop", "--lr", "0.01"]),
    ("rmsprop_momentum", dict(opt="rmsprop", lr=0.01, momentum=0.5, wd=0.05, alpha=0.9),
     ["--optimizer", "rmsprop", "--lr", "0.01", "--momentum", "0.5", "--weight-decay", "0.05",
      "--alpha", "0.9"]),
    ("clip", dict(opt="sgd", lr=0.5, momentum=0.9, clip=0.05),
     ["--optimizer", "sgd", "--lr", "0.5", "--clip-norm", "0.05"]),
    ("step_schedule", dict(opt="sgd", lr=0.5, sched="step", step=2, gamma=0.3),
     ["--optimizer", "sgd", "--lr", "0.5", "--momentum", "0", "--lr-schedule", "step",
      "--lr-step", "2", "--lr-gamma", "0.3"]),
    ("cosine_warmup", dict(opt="adam", lr=0.05, sched="cosine", warmup=2),
     ["--optimizer", "adam", "--lr", "0.05", "--lr-schedule", "cosine", "--warmup", "2"]),
    ("label_smoothing", dict(opt="sgd", lr=0.5, smoothing=0.2),
     ["--optimizer", "sgd", "--lr", "0.5", "--momentum", "0", "--label-smoothing", "0.2"]),
    ("mse", dict(opt="sgd", lr=0.5, loss="mse"),
     ["--optimizer", "sgd", "--lr", "0.5", "--momentum", "0", "--loss", "mse"]),
    ("bce", dict(opt="sgd", lr=0.5, loss="bce"),
     ["--optimizer", "sgd", "--lr", "0.5", "--momentum", "0", "--loss", "bce"]),
    ("l1", dict(opt="sgd", lr=0.5, loss="l1"),
     ["--optimizer", "sgd", "--lr", "0.5", "--momentum", "0", "--loss", "l1"]),
    ("nll", dict(opt="sgd", lr=0.5, loss="nll"),
     ["--optimizer", "sgd", "--lr", "0.5", "--momentum", "0", "--loss", "nll"]),
    # NLL of log_softmax: cross-entropy's reference, the model tiny_logsoftmax
    ("nll_log_softmax", dict(opt="adam", lr=0.05, model=model_ls),
     ["--optimizer", "adam", "--lr", "0.05", "--loss", "nll"]),
    ("warmup_clip_adamw", dict(opt="adamw", lr=0.05, wd=0.01, warmup=3, clip=0.1),
     ["--optimizer", "adamw", "--lr", "0.05", "--warmup", "3", "--clip-norm", "0.1"]),
]

fail = 0
for name, c, args in CASES:
    letters = {"sgd": "b" if c.get("momentum") else "", "adam": "mv", "adamw": "mv",
               "rmsprop": "vb" if c.get("momentum") else "v"}[c["opt"]]
    start = {"train/pos": np.array([0, 0], dtype=np.int64), wname: W0, bname: b0}
    for n, p in ((wname, W0), (bname, b0)):
        for s in letters:
            start[n + "/" + s] = np.zeros_like(p)
    st_write(os.path.join(work, "start.safetensors"), start)
    ck, losses, tests = train(name, args, c.get("model", model))
    P, S, rl = reference(c)
    worst = 0.0
    pairs = [(ck[wname], P[0]), (ck[bname], P[1])]
    for n, s in ((wname, S[0]), (bname, S[1])):
        for l in letters:
            pairs.append((ck[n + "/" + l], s[l]))
    pairs.append((np.array(losses), np.array(rl)))
    for got, want in pairs:
        err = np.abs(got.astype(np.float64) - want) / (2e-5 * np.abs(want) + 2e-6)
        worst = max(worst, float(err.max()))
    moved = float(np.abs(P[0] - W0).max())
    # the test set is the training set: epoch e's test loss (4 decimals)
    # is the loss of step e + 1
    tl = all(abs(a - b) <= 6e-5 for a, b in zip(tests, rl[1:])) and len(tests) == STEPS
    if not tl:
        print("test losses %s, want %s" % (tests, ["%.4f" % v for v in rl[1:]]))
    ok = tl and worst <= 1 and len(losses) == STEPS and list(ck["train/pos"]) == [STEPS, STEPS]
    print("%s %-18s worst error %.3g of the tolerance; W moved by %.3g; loss %.4f -> %.4f"
          % ("ok  " if ok else "FAIL", name, worst, moved, rl[0], rl[-1]))
    fail |= not ok
sys.exit(1 if fail else 0)

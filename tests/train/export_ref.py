#!/usr/bin/python3
"""export_ref.py BURNCC SRCDIR WORKDIR cli|dsl - the trained model as ONNX
(burncc train --save-onnx) and the trained parameters back in a script
(train() under burncc run).

cli: examples/mlp_train.burn and examples/cnn_train.burn, trained 6 steps on
a Fashion-MNIST subset with --save (checkpoint) and --save-onnx.  The
exported model, run by `burncc run` on the 128 test images the run
evaluated, gives the test loss and accuracy the epoch line printed (the
trained evaluation's); its initializers are the checkpoint's parameters,
bit for bit; the MLP's logits are float64 numpy's forward with the
checkpoint's parameters (to 1e-4); python3-onnx's checker accepts the model
(full_check).  Errors: --save-onnx with -o (exit 2), naming the --save file
(exit 1); a model that cannot be
written (FILE.tmp a directory) fails with exit 1 and leaves FILE as it was.

dsl: the MLP script calls train(..., save_onnx=FILE) then main(x) again: the
logits changed (the layers hold the trained values), equal the exported
model's (imported by the same script) to 1e-6, a binding made before train()
of a layer's weight reads the trained values and a tensor computed from it
before keeps the old ones.

Fashion-MNIST from $BURNCC_FASHION_MNIST (default the Debian package's
/usr/share/datasets/fashion-mnist); absent: exit 77.  Without python3-onnx
the rest runs, then exit 77 (the checker did not run)."""
import gzip, json, os, re, struct, subprocess, sys
import numpy as np
from safetensors_np import st_read

burncc, src, work, mode = sys.argv[1:5]
data = os.environ.get("BURNCC_FASHION_MNIST", "/usr/share/datasets/fashion-mnist")
os.makedirs(work, exist_ok=True)
fails = []


def bad(msg):
    print("FAIL: " + msg)
    fails.append(msg)


def idx_images(name, n):
    for p in (os.path.join(data, name + ".gz"), os.path.join(data, name)):
        if os.path.exists(p):
            b = (gzip.open if p.endswith(".gz") else open)(p, "rb").read()
            return np.frombuffer(b[16:16 + n * 784], dtype=np.uint8).reshape(n, 784)
    return None


def idx_labels(name, n):
    for p in (os.path.join(data, name + ".gz"), os.path.join(data, name)):
        if os.path.exists(p):
            b = (gzip.open if p.endswith(".gz") else open)(p, "rb").read()
            return np.frombuffer(b[8:8 + n], dtype=np.uint8).astype(np.int64)
    return None


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


NTEST = 128
xte = idx_images("t10k-images-idx3-ubyte", NTEST)
yte = idx_labels("t10k-labels-idx1-ubyte", NTEST)
if xte is None or yte is None:
    print("no Fashion-MNIST at %s (dataset-fashion-mnist): did not run" % data)
    sys.exit(77)
x = xte.astype(np.float32) / np.float32(255.0)
try:
    import onnx
    from onnx import numpy_helper
except ImportError:
    onnx = None
common = ["--data", data, "--train-limit", "640", "--test-limit", str(NTEST),
          "--max-steps", "6", "--epochs", "1", "--seed", "2", "--no-dashboard"]


def onnx_logits(model, shape, tag):
    """the exported model run by burncc run on the NTEST images, batch 64"""
    outs = []
    for b in range(0, NTEST, 64):
        xb = os.path.join(work, "%s_x%d.npy" % (tag, b))
        np.save(xb, x[b:b + 64].reshape(shape))
        od = os.path.join(work, "%s_out%d" % (tag, b))
        r = run([burncc, "run", model, "--input", xb, "--output", od, "--quiet"])
        if r.returncode:
            bad("%s: burncc run: %s" % (tag, r.stderr.strip()))
            return None
        outs.append(np.load(os.path.join(od, "out0.npy")))
    return np.concatenate(outs).astype(np.float64)


def check_cli(name, shape):
    model = os.path.join(src, "examples", name + ".burn")
    ck, mo = os.path.join(work, name + ".st"), os.path.join(work, name + ".onnx")
    for p in (ck, mo):
        if os.path.exists(p):
            os.remove(p)
    r = run([burncc, "train", model] + common + ["--save", ck, "--save-onnx", mo])
    if r.returncode:
        bad("%s: burncc train: %s" % (name, r.stderr.strip()))
        return
    if os.path.exists(mo + ".tmp"):
        bad("%s: %s.tmp left behind" % (name, mo))
    m = re.search(r"test loss ([0-9.]+)  test accuracy ([0-9.]+)%", r.stdout)
    if not m:
        bad("%s: no epoch line in: %s" % (name, r.stdout))
        return
    tl, ta = float(m.group(1)), float(m.group(2))
    z = onnx_logits(mo, shape, name)
    if z is None:
        return
    mx = z.max(axis=1)
    lse = mx + np.log(np.exp(z - mx[:, None]).sum(axis=1))
    loss = float(np.mean(lse - z[np.arange(NTEST), yte]))
    acc = 100.0 * float(np.mean(z.argmax(axis=1) == yte))
    print("%s: the exported model: test loss %.6f accuracy %.2f%%; the run printed "
          "%.4f %.2f%%" % (name, loss, acc, tl, ta))
    if abs(loss - tl) > 6e-5 or abs(acc - ta) > 0.006:
        bad("%s: the exported model's test loss %.6f / accuracy %.2f%% are not the "
            "run's %.4f / %.2f%%" % (name, loss, acc, tl, ta))
    p = st_read(ck)
    if name == "mlp_train":
        h = x.astype(np.float64)
        for k, (w, b) in enumerate((("c1", "c2"), ("c3", "c4"), ("c5", "c6"))):
            h = h @ p[w].astype(np.float64) + p[b].astype(np.float64)
            if k < 2:
                h = np.maximum(h, 0)
        err = float(np.max(np.abs(h - z) / (1e-4 + 1e-4 * np.abs(h))))
        print("%s: logits against numpy's forward from the checkpoint: %.3g of the "
              "tolerance" % (name, err))
        if err > 1:
            bad("%s: the exported model's logits are not numpy's (%.3g of the "
                "tolerance)" % (name, err))
    if onnx is not None:
        m = onnx.load(mo)
        try:
            onnx.checker.check_model(m, full_check=True)
        except Exception as e:
            bad("%s: onnx.checker: %s" % (name, e))
        init = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
        for k, v in p.items():
            if "/" in k:
                continue   # optimiser states and the position
            if k not in init or init[k].tobytes() != v.tobytes():
                bad("%s: initializer %s is not the checkpoint's parameter" % (name, k))


def check_errors():
    model = os.path.join(src, "examples", "mlp_train.burn")
    mo = os.path.join(work, "err.onnx")
    r = run([burncc, "train", model, "-o", os.path.join(work, "s.c"), "--save-onnx", mo])
    if r.returncode != 2 or "--save-onnx" not in r.stderr:
        bad("--save-onnx with -o: exit %d, %s" % (r.returncode, r.stderr.strip()))
    r = run([burncc, "train", model] + common + ["--save", mo, "--save-onnx", mo])
    if r.returncode != 1 or "is the --save checkpoint" not in r.stderr:
        bad("--save-onnx the --save file: exit %d, %s" % (r.returncode, r.stderr.strip()))
    with open(mo, "w") as f:
        f.write("old")
    os.makedirs(mo + ".tmp", exist_ok=True)
    r = run([burncc, "train", model] + common + ["--save-onnx", mo])
    print("a model that cannot be written: exit %d: %s" % (r.returncode, r.stderr.strip().splitlines()[-1]))
    if r.returncode != 1 or "cannot write" not in r.stderr:
        bad("unwritable --save-onnx: exit %d, %s" % (r.returncode, r.stderr.strip()))
    if open(mo).read() != "old":
        bad("unwritable --save-onnx: %s changed" % mo)
    os.rmdir(mo + ".tmp")


def check_dsl():
    xb = os.path.join(work, "x.bin")
    x[:64].tofile(xb)
    mo = os.path.join(work, "dsl.onnx")
    if os.path.exists(mo):
        os.remove(mo)
    script = os.path.join(work, "params.burn")
    body = open(os.path.join(src, "examples", "mlp_train.burn")).read()
    opts = ", ".join("%s=%s" % (common[i][2:].replace("-", "_"), common[i + 1])
                     for i in range(2, len(common) - 1, 2))
    body += """
let x = load_raw("%s", [64, 784]);
let before = main(x);
let w0 = mlp.fc1.weight;
let w1 = mlp.fc1.weight * 1;
let m = train(main, "%s", %s, dashboard=false, save_onnx="%s");
let after = main(x);
print("changed", reduce_max(abs(after - before)).item());
import "%s" as exported;
print("exported", reduce_max(abs(after - exported(x))).item());
print("binding", reduce_max(abs(w0 - mlp.fc1.weight)).item());
print("computed", reduce_max(abs(w1 - mlp.fc1.weight)).item());
""" % (xb, data, opts, mo, mo)
    open(script, "w").write(body)
    r = run([burncc, "run", script])
    if r.returncode:
        bad("dsl: burncc run: %s" % r.stderr.strip())
        return
    print(r.stdout.strip())
    got = dict((l.split()[0], float(l.split()[1])) for l in r.stdout.splitlines()
               if len(l.split()) == 2 and l.split()[0] in ("changed", "exported", "binding", "computed"))
    if len(got) != 4:
        bad("dsl: missing lines in: %s" % r.stdout)
        return
    if not got["changed"] > 1e-3:
        bad("dsl: main(x) after train() is main(x) before (%g): the layers kept their "
            "values" % got["changed"])
    if not got["exported"] <= 1e-6:
        bad("dsl: main(x) after train() differs from the exported model by %g" % got["exported"])
    if got["binding"] != 0:
        bad("dsl: a binding of fc1.weight made before train() is not the trained weight")
    if not got["computed"] > 0:
        bad("dsl: fc1.weight * 1, computed before train(), equals fc1.weight after it")
    if "not the script's own" in r.stderr:
        bad("dsl: %s" % r.stderr.strip())


if mode == "cli":
    check_errors()
    check_cli("mlp_train", (64, 784))
    check_cli("cnn_train", (64, 1, 28, 28))
else:
    check_dsl()
if fails:
    sys.exit(1)
if mode == "cli" and onnx is None:
    print("no python3-onnx: everything but the checker ran and passed")
    sys.exit(77)
print("train_%s: OK" % ("onnx" if mode == "cli" else "params"))

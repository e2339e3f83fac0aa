"""The reference training loop in PyTorch and the C train step of
`burncc train -o` run against it, for the training tests
(tests/train/batchnorm_ref.py, batchnorm_onnx_ref.py)."""
import os, subprocess
from safetensors_np import splitmix


def torch_ref(net, opt, xt, yt, n, b, epochs, seed):
    """burncc train's loop in PyTorch: each epoch a Fisher-Yates shuffle of
    the n examples by splitmix64 from seed, steps of b examples (mean
    cross-entropy, opt), then the test loss over all n in eval mode.
    Returns (step losses, test losses)."""
    import torch
    perm, rs = list(range(n)), seed
    ref, ref_test = [], []
    for ep in range(epochs):
        for i in range(n - 1, 0, -1):
            rs, v = splitmix(rs)
            j = v % (i + 1)
            perm[i], perm[j] = perm[j], perm[i]
        net.train()
        for k in range(n // b):
            idx = perm[k * b:(k + 1) * b]
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(net(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
            ref.append(loss.item())
        net.eval()
        with torch.no_grad():
            ref_test.append(sum(torch.nn.functional.cross_entropy(
                net(xt[s:s + b]), yt[s:s + b], reduction="sum").item()
                for s in range(0, n, b)) / n)
    return ref, ref_test


def c_step(cc, aot, data, epochs, seed, ref, ref_test, fail, close):
    """Build examples/train_aot.c with AOT/step.c and step_eval.c, train on
    DATA for EPOCHS from SEED, and compare its losses with ref (1e-4) and
    its test losses with ref_test (2e-4) through close; fail(msg) on an
    error.  Says so and returns when there is no C compiler."""
    if subprocess.run(["sh", "-c", "command -v " + cc], capture_output=True).returncode:
        print("no C compiler (%s): the C train step was not run" % cc)
        return
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                       "train_aot.c")
    exe = os.path.join(aot, "train_aot")
    r = subprocess.run([cc, "-O2", "-I" + aot, src, os.path.join(aot, "step.c"),
                        os.path.join(aot, "step_eval.c"), "-lz", "-lm", "-o", exe],
                       capture_output=True, text=True)
    if r.returncode:
        fail("the C train step does not build: %s" % r.stderr[:2000])
        return
    r = subprocess.run([exe, data, "--epochs", str(epochs), "--seed", str(seed),
                        "--losses", os.path.join(aot, "loss")], capture_output=True,
                       text=True)
    if r.returncode:
        fail("train_aot: exit %d: %s" % (r.returncode, r.stderr))
        return
    close("the C step's losses", [float(l.split()[2])
                                  for l in open(os.path.join(aot, "loss"))], ref)
    close("the C step's test losses", [float(l.split("test loss ")[1].split()[0])
                                       for l in r.stdout.splitlines()
                                       if "test loss " in l], ref_test, 2e-4)

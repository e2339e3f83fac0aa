#!/usr/bin/python3
"""check_examples.py BURNCC EXAMPLES_DIR - run examples/gelu.burn and
examples/feedforward.burn with `burncc run`, each followed by a few lines
(NAME.dump.burn here) that print the values a reference needs with
.tolist(), and check the results against NumPy computed here from those
inputs: gelu_custom(x) = x * (1 + erf(x / sqrt 2)) / 2 in float64, and the
PositionWiseFeedForward block x @ W1 + b1 -> GELU -> x @ W2 + b2 (dropout
is the identity).  Also checks that the example's own printout (before
the appended lines) shows the values.  Exit 1 on any mismatch."""
import json, math, os, subprocess, sys, tempfile
import numpy as np

burncc, ex = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
erf = np.vectorize(math.erf)
bad = 0

def run(name):
    src = open(os.path.join(ex, name + ".burn")).read()
    src += open(os.path.join(here, name + ".dump.burn")).read()
    with tempfile.NamedTemporaryFile("w", suffix=".burn", delete=False) as f:
        f.write(src)
    r = subprocess.run([burncc, "run", "--no-cache", f.name], capture_output=True, text=True)
    os.unlink(f.name)
    if r.returncode:
        sys.exit("FAIL %s: exit %d: %s" % (name, r.returncode, r.stderr))
    return r.stdout

def vals(line):
    return np.array(json.loads(line.replace("-nan", "NaN").replace("nan", "NaN")), dtype=np.float64)

def check(what, got, want, rtol, atol):
    global bad
    if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=atol):
        d = np.max(np.abs(got - want)) if got.shape == want.shape else "shape %s vs %s" % (got.shape, want.shape)
        print("FAIL %s: differs from NumPy (max abs diff %s)" % (what, d))
        bad = 1
    else:
        print("ok   %s: %s values within rtol %g atol %g of NumPy" % (what, got.size, rtol, atol))

def gelu(x):
    return x * (1 + erf(x / math.sqrt(2))) / 2

out = run("gelu").strip().splitlines()
x, y, big, err = vals(out[-4]), vals(out[-3]), vals(out[-2]), float(out[-1])
check("gelu.burn y = gelu_custom(x)", y, gelu(x), 1e-5, 1e-6)
# the example's own print of y shows its values
printed = " ".join(out[:-4])
for v in y.ravel():
    if ("%.4f" % v)[:6] not in printed and ("%.3f" % v) not in printed and ("%g" % round(v, 4)) not in printed:
        print("FAIL gelu.burn: the printout does not show %r:\n%s" % (v, printed))
        bad = 1
        break
# the built-in Gelu of the example agrees too, and its max error is right
check("gelu.burn gelu_custom(big)", np.array([err]),
      np.array([0.0]), 0, 1e-5)
if not (0 <= err < 1e-5):
    print("FAIL gelu.burn: max |gelu_custom - gelu| = %g" % err)
    bad = 1

out = run("feedforward").strip().splitlines()
inp, w1, b1, w2, b2, res = (vals(l) for l in out[-6:])
want = gelu(inp @ w1 + b1) @ w2 + b2
check("feedforward.burn PositionWiseFeedForward(input)", res, want, 1e-4, 1e-5)
if w1.shape != (8, 32) or b1.shape != (32,) or w2.shape != (32, 8) or res.shape != (2, 3, 8):
    print("FAIL feedforward.burn: shapes %s %s %s %s" % (w1.shape, b1.shape, w2.shape, res.shape))
    bad = 1
bound = 1 / math.sqrt(8)
if not (np.abs(w1) <= bound).all() or np.abs(w1).max() < bound / 2:
    print("FAIL feedforward.burn: Linear(8, 32)'s weights are not uniform in +-1/sqrt(8)")
    bad = 1
if "shape: [2, 3, 8]" not in "\n".join(out):
    print("FAIL feedforward.burn: no 'shape: [2, 3, 8]' line")
    bad = 1
sys.exit(bad)

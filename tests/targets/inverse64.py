#!/usr/bin/python3
"""inverse64.py BURNCC OUTDIR TARGET... - the f64 inverse functions (asin,
acos, atan, asinh, acosh, atanh: kernel-IR expansions, passes/legalize.c)
and the other f64 expansions on each target that has no f64 libm, to
about 4 ulps: each case's model computes (op(x) - r) / (|r| + 1e-300) *
1e10 with r numpy's float64 result, and `burncc check` wants 0 within its
atol 1e-5, i.e. a relative error below 1e-15.  The inputs spread over
each op's domain, near 1 and near 0 included.  Exit 77 without onnx or
numpy; a target whose device is missing ("no Vulkan ...") is skipped.
"""
import math
import os
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    print("inverse64: no numpy or onnx: not run")
    sys.exit(77)


def case(d, op, x, r):
    os.makedirs(d + "/test_data_set_0", exist_ok=True)
    n = len(x)
    vi = lambda nm: helper.make_tensor_value_info(nm, TensorProto.DOUBLE, [n])
    c = lambda nm, v: helper.make_node("Constant", [], [nm], value=numpy_helper.from_array(
        np.array(v, dtype=np.float64), nm))
    nodes = [helper.make_node(op, ["x"], ["f"]), helper.make_node("Sub", ["f", "r"], ["e"]),
             helper.make_node("Abs", ["r"], ["ar"]), c("tiny", 1e-300),
             helper.make_node("Add", ["ar", "tiny"], ["den"]),
             helper.make_node("Div", ["e", "den"], ["q"]), c("s", 1e10),
             helper.make_node("Mul", ["q", "s"], ["y"])]
    g = helper.make_graph(nodes, os.path.basename(d), [vi("x"), vi("r")], [vi("y")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, d + "/model.onnx")
    onnx.save_tensor(numpy_helper.from_array(x, "x"), d + "/test_data_set_0/input_0.pb")
    onnx.save_tensor(numpy_helper.from_array(r, "r"), d + "/test_data_set_0/input_1.pb")
    onnx.save_tensor(numpy_helper.from_array(np.zeros(n), "y"), d + "/test_data_set_0/output_0.pb")


def main():
    burncc, out, targets = sys.argv[1], sys.argv[2], sys.argv[3:]
    rng = np.random.default_rng(2)

    def spread(lo, hi, n=1024):
        return np.concatenate([rng.uniform(lo, hi, n), np.sign(rng.uniform(-1, 1, n)) *
                               np.exp(rng.uniform(-30, math.log(hi), n))])

    near1 = 1 + np.exp(np.linspace(-36, -2, 256))
    unit = np.clip(spread(-1, 1), -1 + 2 ** -52, 1 - 2 ** -52)
    ops = [("Asin", np.arcsin, np.concatenate([unit, 2 - near1, near1 - 2])),
           ("Acos", np.arccos, np.concatenate([unit, 2 - near1, near1 - 2])),
           ("Atan", np.arctan, spread(-1e20, 1e20)),
           ("Asinh", np.arcsinh, spread(-1e20, 1e20)),
           ("Acosh", np.arccosh, np.concatenate([1 + np.abs(spread(0, 1e20)), near1])),
           ("Atanh", np.arctanh, np.concatenate([unit, 2 - near1, near1 - 2])),
           ("Exp", np.exp, spread(-700, 700)), ("Log", np.log, np.abs(spread(0, 1e300))),
           ("Sin", np.sin, spread(-1e6, 1e6)), ("Tan", np.tan, spread(-1e3, 1e3)),
           ("Sinh", np.sinh, spread(-700, 700)), ("Tanh", np.tanh, spread(-20, 20)),
           ("Erf", np.vectorize(math.erf), spread(-6, 6))]
    dirs = []
    for op, f, x in ops:
        x = x.astype(np.float64)
        d = os.path.join(out, "f64_" + op.lower())
        case(d, op, x, f(x))
        dirs.append(d)
    bad = 0
    for t in targets:
        p = subprocess.run([burncc, "check", "--target", t] + dirs, capture_output=True, text=True)
        text = p.stdout + p.stderr
        if "no Vulkan" in text or "no CUDA" in text:
            print(f"{t}: no device: not run")
            continue
        print(f"{t}:\n{text}", end="")
        bad += p.returncode != 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

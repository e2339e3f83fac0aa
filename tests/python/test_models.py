#!/usr/bin/env python3
"""The Python module (python/burncc) on the models of MODELS_DIR: each one
loaded with burncc.load, run on test_data_set_0's inputs, every output
compared with the expected one as burncc check does (|got - want| <=
1e-5 + 1e-3 |want|, NaN equal to NaN; integers exact).  Then the errors:
a wrong shape, a missing input and a missing file raise, naming what.

    test_models.py MODELS_DIR [MODEL...]      (PYTHONPATH: python/;
                                               BURNCC_LIBRARY: libburn.so)
Exit 77 (ctest: not run) without NumPy or the onnx package (which reads
the .pb files)."""
import os
import sys

try:
    import numpy as np
    from onnx import TensorProto, numpy_helper
except ImportError as e:
    print("%s: the Python module test did not run (python3-numpy, python3-onnx: "
          "sh tools/setup.sh)" % e)
    sys.exit(77)
import burncc


def pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def close(got, want):
    if got.shape != want.shape or got.dtype != want.dtype:
        return "got %s %s, want %s %s" % (got.dtype, got.shape, want.dtype, want.shape)
    if want.dtype.kind != "f":
        return None if np.array_equal(got, want) else "integers differ"
    g, w = got.astype(np.float64), want.astype(np.float64)
    ok = (np.abs(g - w) <= 1e-5 + 1e-3 * np.abs(w)) | (np.isnan(g) & np.isnan(w))
    if ok.all():
        return None
    i = np.flatnonzero(~ok.ravel())[0]
    return "element %d: got %r, want %r (%d of %d differ)" % (
        i, g.ravel()[i], w.ravel()[i], (~ok).sum(), ok.size)


def main():
    root = sys.argv[1]
    names = sys.argv[2:] or sorted(os.listdir(root))
    passed = failed = 0

    def check(name, why):
        nonlocal passed, failed
        print("%s %s%s" % ("PASS" if why is None else "FAIL", name,
                           "" if why is None else ": " + why), flush=True)
        passed += why is None
        failed += why is not None

    for name in names:
        d = os.path.join(root, name)
        try:
            model = burncc.load(os.path.join(d, "model.onnx"))
            s = os.path.join(d, "test_data_set_0")
            ins = [pb(os.path.join(s, "input_%d.pb" % i)) for i in range(len(model.inputs))]
            want = [pb(os.path.join(s, "output_%d.pb" % i)) for i in range(len(model.outputs))]
            got = model(*ins)
            # by name, and a second run on the same model: the same outputs
            again = model.run({t.name: a for t, a in zip(model.inputs, ins)})
            why = next((w for w in (close(g, e) for g, e in zip(got, want)) if w), None)
            if why is None and not all(np.array_equal(a, b, equal_nan=True)
                                       for a, b in zip(got, again)):
                why = "a second run differs"
            check(name, why)
        except Exception as e:  # noqa: BLE001 - a failure of the case
            check(name, "%s: %s" % (type(e).__name__, e))

    # errors name what is wrong
    first = os.path.join(root, names[0], "model.onnx")
    model = burncc.load(first)
    t = model.inputs[0]
    rest = [np.zeros(u.shape, u.dtype) for u in model.inputs[1:]]
    for what, call, needle in [
            ("wrong shape", lambda: model(np.zeros((1,) + t.shape, t.dtype), *rest), t.name),
            ("missing input", lambda: model.run({}), t.name),
            ("no such file", lambda: burncc.load(os.path.join(root, "nonexistent.onnx")),
             "nonexistent.onnx")]:
        try:
            call()
            check("error: " + what, "no exception")
        except (ValueError, TypeError, burncc.BurnError) as e:
            check("error: " + what, None if needle in str(e) else
                  "the message does not name %r: %s" % (needle, e))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

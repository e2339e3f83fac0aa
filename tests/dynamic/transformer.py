#!/usr/bin/python3
"""A transformer encoder block with two run-time dims (ctest
dynamic_transformer): d = 32, 2 heads of 16, feed-forward 64, post-norm
LayerNormalization, GELU written with Erf, softmax attention.  Its input x
is [batch, seq, 32] with both dims symbolic; burncc compiles it ONCE with
`--dynamic-dim batch --dynamic-dim seq`, and the one module runs at
(batch, seq) = (1, 7), (8, 128) and (3, 1), each against ONNX Runtime's
outputs (onnxruntime-node, stored in transformer_ort/ by make_ort_ref.sh:
ONNX Runtime is not installed as Python here) and a float64 NumPy
evaluation of the same graph, which the stored outputs must also match
(else they are stale).

  transformer.py BURNCC WORK [--seed-bug]          the c target
  transformer.py BURNCC WORK llvm RUNNER [--seed-bug] the llvm target, in
      process through RUNNER (dyn_tr_run.c: compiles once, runs each size)
  transformer.py --make-only WORK     only write WORK/model.onnx

The weights come from a seeded NumPy generator.  The graph splits and merges
the heads with Reshape targets [0, 0, 2, 16] and [0, 0, 32] (0: copy the
run-time dim) and Transposes [0, 2, 1, 3] / [0, 2, 3, 1], so Q @ K^T is
[batch, 2, seq, seq]: seq is an axis the product sums over (P @ V) and the
axis Softmax normalises.  --seed-bug perturbs one input element after the
reference is made, which must fail the run (the test's own check that it
bites).  Exit 77: python3's onnx or numpy, or the C compiler, missing.
"""
import math
import os
import shutil
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import helper as h, numpy_helper as nh, TensorProto as TP
except ImportError as e:
    print("SKIP: %s (did not run)" % e)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
D, HEADS, FF = 32, 2, 64
HD = D // HEADS
SIZES = [(1, 7), (8, 128), (3, 1)]


def weights():
    r = np.random.default_rng(1234)

    def w(*s):
        return (r.standard_normal(s) / math.sqrt(s[0])).astype(np.float32)

    def b(n):
        return (0.1 * r.standard_normal(n)).astype(np.float32)

    return {
        "wq": w(D, D), "bq": b(D), "wk": w(D, D), "bk": b(D),
        "wv": w(D, D), "bv": b(D), "wo": w(D, D), "bo": b(D),
        "g1": (1 + b(D)).astype(np.float32), "be1": b(D),
        "w1": w(D, FF), "b1": b(FF), "w2": w(FF, D), "b2": b(D),
        "g2": (1 + b(D)).astype(np.float32), "be2": b(D),
    }


def make_model(W):
    nodes = []
    inits = [nh.from_array(v, k) for k, v in W.items()]
    inits += [nh.from_array(np.array(x, np.int64), n) for n, x in [
        ("split_heads", [0, 0, HEADS, HD]), ("merge_heads", [0, 0, D])]]
    inits += [nh.from_array(np.array(v, np.float32), n) for n, v in [
        ("scale", math.sqrt(HD)), ("half", 0.5), ("one", 1.0),
        ("sqrt2", math.sqrt(2.0))]]

    def n(op, ins, out, **kw):
        nodes.append(h.make_node(op, ins, [out], name=out, **kw))
        return out

    def linear(x, w, b, out):
        return n("Add", [n("MatMul", [x, w], out + "_mm"), b], out)

    q = linear("x", "wq", "bq", "q")
    k = linear("x", "wk", "bk", "k")
    v = linear("x", "wv", "bv", "v")
    qh = n("Transpose", [n("Reshape", [q, "split_heads"], "q_r")], "q_h",
           perm=[0, 2, 1, 3])
    kt = n("Transpose", [n("Reshape", [k, "split_heads"], "k_r")], "k_t",
           perm=[0, 2, 3, 1])
    vh = n("Transpose", [n("Reshape", [v, "split_heads"], "v_r")], "v_h",
           perm=[0, 2, 1, 3])
    s = n("Div", [n("MatMul", [qh, kt], "qk"), "scale"], "scores")
    p = n("Softmax", [s], "probs", axis=-1)
    c = n("Transpose", [n("MatMul", [p, vh], "ctx_h")], "ctx_t",
          perm=[0, 2, 1, 3])
    c = n("Reshape", [c, "merge_heads"], "ctx")
    a = linear(c, "wo", "bo", "attn")
    h1 = n("LayerNormalization", [n("Add", ["x", a], "res1"), "g1", "be1"],
           "ln1", axis=-1, epsilon=1e-5)
    f = linear(h1, "w1", "b1", "ff1")
    e = n("Erf", [n("Div", [f, "sqrt2"], "ff_s")], "ff_erf")
    g = n("Mul", [n("Mul", [f, "half"], "ff_h"),
                  n("Add", [e, "one"], "ff_e1")], "gelu")
    f2 = linear(g, "w2", "b2", "ff2")
    n("LayerNormalization", [n("Add", [h1, f2], "res2"), "g2", "be2"], "y",
      axis=-1, epsilon=1e-5)
    sym = ["batch", "seq", D]
    graph = h.make_graph(
        nodes, "encoder_block",
        [h.make_tensor_value_info("x", TP.FLOAT, sym)],
        [h.make_tensor_value_info("y", TP.FLOAT, sym)], inits)
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def reference(W, x):
    """The block in float64 NumPy, node for node."""
    W = {k: v.astype(np.float64) for k, v in W.items()}
    x = x.astype(np.float64)
    nb, ns = x.shape[:2]

    def ln(t, g, b):
        m = t.mean(-1, keepdims=True)
        var = ((t - m) ** 2).mean(-1, keepdims=True)
        return (t - m) / np.sqrt(var + 1e-5) * g + b

    def heads(t):
        return t.reshape(nb, ns, HEADS, HD).transpose(0, 2, 1, 3)

    q = heads(x @ W["wq"] + W["bq"])
    k = heads(x @ W["wk"] + W["bk"])
    v = heads(x @ W["wv"] + W["bv"])
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(HD)
    s = np.exp(s - s.max(-1, keepdims=True))
    p = s / s.sum(-1, keepdims=True)
    c = (p @ v).transpose(0, 2, 1, 3).reshape(nb, ns, D)
    h1 = ln(x + c @ W["wo"] + W["bo"], W["g1"], W["be1"])
    f = h1 @ W["w1"] + W["b1"]
    erf = np.vectorize(math.erf)
    g = 0.5 * f * (1 + erf(f / math.sqrt(2.0)))
    return ln(h1 + g @ W["w2"] + W["b2"], W["g2"], W["be2"])


DRIVER = r'''
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "model.h"
/* run BATCH SEQ IN.bin OUT.bin: y = block(x) at the dims given, arena of
 * model_arena_bytes(BATCH, SEQ); any status but MODEL_OK exits 1 with it */
int main(int argc, char **argv)
{
	int64_t b, s, n, ab;
	float *x, *y;
	void *arena;
	FILE *f;
	int rc;

	if (argc != 5) return 2;
	b = atoll(argv[1]); s = atoll(argv[2]);
	n = b * s * %d;
	ab = model_arena_bytes(b, s);
	if (ab < 0) { fprintf(stderr, "arena_bytes refused\n"); return 1; }
	arena = aligned_alloc(MODEL_ARENA_ALIGN, (ab / MODEL_ARENA_ALIGN + 1)
	                      * MODEL_ARENA_ALIGN);
	x = malloc(n * 4 + 4); y = malloc(n * 4 + 4);
	if (!arena || !x || !y || !(f = fopen(argv[3], "rb")) ||
	    fread(x, 4, n, f) != (size_t)n) return 2;
	fclose(f);
	rc = model_run(b, s, x, y, arena);
	if (rc) { fprintf(stderr, "model_run: %%d\n", rc); return 1; }
	if (!(f = fopen(argv[4], "wb")) || fwrite(y, 4, n, f) != (size_t)n)
		return 2;
	fclose(f);
	/* a dim the model cannot take is refused by the run, not run */
	if (model_run(-1, s, x, y, arena) != MODEL_ERR_DIM) {
		fprintf(stderr, "batch -1 not refused\n");
		return 1;
	}
	return 0;
}
''' % D


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    seed_bug = "--seed-bug" in sys.argv
    W = weights()
    model = make_model(W)
    if "--make-only" in sys.argv:   # the model and the test's inputs
        os.makedirs(args[0], exist_ok=True)
        onnx.save(model, os.path.join(args[0], "model.onnx"))
        r = np.random.default_rng(99)
        for nb, ns in SIZES:
            r.standard_normal((nb, ns, D)).astype(np.float32).tofile(
                os.path.join(args[0], "x_%d_%d.bin" % (nb, ns)))
        return 0
    burncc, work = args[0], args[1]
    target = args[2] if len(args) > 2 else "c"
    runner = args[3] if len(args) > 3 else None
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "model.onnx")
    onnx.save(model, path)
    r = np.random.default_rng(99)
    failures = 0
    runs = []
    if target == "c":
        cc = os.environ.get("CC", "cc")
        if not shutil.which(cc):
            print("SKIP: no C compiler '%s' (did not run)" % cc)
            return 77
        cmd = [burncc, path, "--dynamic-dim", "batch", "--dynamic-dim", "seq",
               "--name", "model", "-o", os.path.join(work, "model.c")]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            print("FAIL: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
            return 1
        with open(os.path.join(work, "driver.c"), "w") as f:
            f.write(DRIVER)
        exe = os.path.join(work, "run")
        p = subprocess.run([cc, "-O2", "-std=c11", "-I", work, "-o", exe,
                            os.path.join(work, "driver.c"),
                            os.path.join(work, "model.c"), "-lm"],
                           capture_output=True, text=True)
        if p.returncode:
            print("FAIL: building the driver\n%s" % p.stderr)
            return 1
    for nb, ns in SIZES:
        x = r.standard_normal((nb, ns, D)).astype(np.float32)
        ref = reference(W, x)
        if seed_bug:
            x = x.copy()
            x[-1, -1, 0] += 1
        xin = os.path.join(work, "x_%d_%d.bin" % (nb, ns))
        yout = os.path.join(work, "y_%d_%d.bin" % (nb, ns))
        x.tofile(xin)
        runs.append((nb, ns, xin, yout, ref))
    if target != "c":   # one compilation, every size: the runner's args
        cmd = [runner, target, path, str(D)]
        for nb, ns, xin, yout, _ in runs:
            cmd += [str(nb), str(ns), xin, yout]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode == 77:
            print(p.stdout.strip())
            return 77
        if p.returncode:
            print("FAIL: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
            return 1
    for nb, ns, xin, yout, ref in runs:
        if target == "c":
            cmd = [exe, str(nb), str(ns), xin, yout]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode:
                print("FAIL: (%d, %d): %s\n%s%s" % (nb, ns, " ".join(cmd),
                                                    p.stdout, p.stderr))
                failures += 1
                continue
        y = np.fromfile(yout, np.float32).reshape(nb, ns, D)
        err = float(np.max(np.abs(y - ref)))
        ok = err <= 1e-4
        # ONNX Runtime's outputs, stored by make_ort_ref.sh; they must
        # also agree with the NumPy reference (else they are stale)
        ort = os.path.join(HERE, "transformer_ort", "y_%d_%d.f32" % (nb, ns))
        if not os.path.exists(ort):
            print("FAIL: %s missing (tests/dynamic/make_ort_ref.sh)" % ort)
            failures += 1
            continue
        yo = np.fromfile(ort, np.float32)
        if yo.size != y.size:
            print("FAIL: %s: %d floats, want %d" % (ort, yo.size, y.size))
            failures += 1
            continue
        yo = yo.reshape(nb, ns, D)
        eo = float(np.max(np.abs(y - yo)))
        stale = float(np.max(np.abs(yo - ref)))
        ok = ok and eo <= 1e-4
        print("%s (batch, seq) = (%d, %d): max |y - ref| = %.3g, max |y - "
              "onnxruntime| = %.3g" % ("ok  " if ok else "FAIL", nb, ns, err, eo))
        if stale > 1e-4:
            print("FAIL: (%d, %d): the stored onnxruntime output is %.3g from "
                  "NumPy's: stale? (tests/dynamic/make_ort_ref.sh)" % (nb, ns, stale))
            ok = False
        failures += not ok
    print("%d of %d sizes wrong" % (failures, len(SIZES)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

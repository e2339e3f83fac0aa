#!/usr/bin/python3
"""The four models of ../shared/models with a run-time batch (ctest
dynamic_models): each compiled ONCE with `burncc --dynamic-dim N`, then run
at the reference's batch on the reference inputs (must give the reference
outputs) and on a stacked batch of 3 items (each item's output must be what
that item alone gives at N=1).

  models.py BURNCC MODELS WORK [TARGET] [--seed-bug]
  models.py --make-only MODELS WORK   only write WORK/NAME/model.onnx
                                      (bench/dynamic.sh)

The ONNX files fix their batch (mlp 4, lenet 2, squeezenet1_1 1, bert_tiny
2); this script makes it symbolic (axis 0 of every input and output becomes
N).  bert_tiny's exporter also wrote the batch of 2 into constants: the
Reshape targets [2,16,-1,64] and [2,16,-1] (here [0,...]: copy axis 0), the
Expand shapes [2,16] and [2,-1,16,16] (here [1,...]: broadcast), and the
attention mask's [batch, seq] lookup as a Gather of the flattened mask at
the constant rows [0, 1] (here an Unsqueeze of the mask to [N,1,1,16]); the
rewritten graph means the same at batch 2 and keeps items apart at any.

The driver (dyn_run.c) is built with each generated model: it reads raw
inputs, runs PREFIX_run_v at the N it is given with an arena of
PREFIX_arena_bytes(N), and writes raw outputs.  --seed-bug adds 1 to the
last item's first output element in the driver, which must fail the run
(the test's own check that it bites).  Exit 77: python3's onnx or numpy,
or the C compiler, missing.
"""
import os
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import helper as h, numpy_helper as nh
except ImportError as e:
    print("SKIP: %s" % e)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
CC = os.environ.get("CC", "cc")
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL: " + msg)


def sym_batch(vi):
    d = vi.type.tensor_type.shape.dim
    if len(d):
        d[0].ClearField("dim_value")
        d[0].dim_param = "N"


def patch_bert(g):
    """bert_tiny's batch-2 constants made batch-agnostic (see above)."""
    def const(name):
        for n in g.node:
            if n.op_type == "Constant" and n.output[0] == name:
                return n
        raise KeyError(name)

    def set_const(name, vals):
        n = const(name)
        n.attribute[0].t.CopyFrom(nh.from_array(np.array(vals, np.int64), name))

    users = {}
    for n in g.node:
        for i in n.input:
            users.setdefault(i, []).append(n)
    for n in g.node:
        if n.op_type == "Reshape" and n.input[1] != "/m/Concat_output_0":
            v = nh.to_array(const(n.input[1]).attribute[0].t).tolist()
            if len(v) >= 3 and v[0] == 2:
                set_const(n.input[1], [0] + v[1:])
    set_const("/m/embeddings/Constant_5_output_0", [1, 16])
    set_const("/m/Constant_7_output_0", [1, -1, 16, 16])
    # the mask: Cast_2 = Cast(Reshape_1(...Gather(Flatten(mask), rows))) is
    # mask[:, None, None, :]
    for i, n in enumerate(g.node):
        if n.output[0] == "/m/Cast_2_output_0":
            g.node.remove(n)
            g.node.insert(i, h.make_node("Unsqueeze", ["/m/Cast_output_0",
                                         "dyn_axes_12"], ["/m/Cast_2_output_0"],
                                         name="dyn_mask_unsqueeze"))
            g.node.insert(i, h.make_node("Constant", [], ["dyn_axes_12"],
                                         value=nh.from_array(np.array([1, 2], np.int64))))
            break
    # drop what nothing uses any more
    while True:
        used = {i for n in g.node for i in n.input} | {o.name for o in g.output}
        dead = [n for n in g.node if not any(o in used for o in n.output)]
        if not dead:
            break
        for n in dead:
            g.node.remove(n)


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return nh.to_array(t)


def make_model(src, dst):
    m = onnx.load(os.path.join(src, "model.onnx"))
    g = m.graph
    inits = {i.name for i in g.initializer}
    for vi in list(g.input) + list(g.output):
        if vi.name not in inits:
            sym_batch(vi)
    del g.value_info[:]
    if os.path.basename(src) == "bert_tiny":
        patch_bert(g)
    onnx.checker.check_model(m)
    onnx.save(m, dst)
    ins = [vi.name for vi in g.input if vi.name not in inits]
    return ins, len(g.output)


def run(drv, work, n, inputs, nout):
    paths = []
    for k, x in enumerate(inputs):
        p = os.path.join(work, "in%d.bin" % k)
        np.ascontiguousarray(x).tofile(p)
        paths.append(p)
    outp = os.path.join(work, "out")
    r = subprocess.run([drv, str(n)] + paths + [outp], capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stdout + r.stderr
    outs = []
    for k in range(nout):
        outs.append(np.fromfile("%s%d.bin" % (outp, k), dtype=np.float32))
    return outs, ""


def close(a, b, rtol, atol):
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= atol + rtol * np.abs(b)))


def one(burncc, models, work, name, target, seed_bug):
    src = os.path.join(models, name)
    w = os.path.join(work, name)
    os.makedirs(w, exist_ok=True)
    onnx_path = os.path.join(w, "model.onnx")
    ins, nout = make_model(src, onnx_path)
    c = os.path.join(w, "model.c")
    r = subprocess.run([burncc, "--target", target, "--dynamic-dim", "N", "-o", c,
                        onnx_path], capture_output=True, text=True)
    if r.returncode != 0:
        fail("%s: burncc --dynamic-dim N: %s" % (name, r.stderr.strip()))
        return
    drv = os.path.join(w, "run")
    cmd = [CC, "-std=c11", "-O1", "-I", w, "-o", drv, c,
           os.path.join(HERE, "dyn_run.c"), "-lm"]
    if seed_bug:
        cmd.insert(1, "-DDYN_SEED_BUG")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail("%s: %s" % (name, r.stderr.strip()[-2000:]))
        return
    ds = os.path.join(src, "test_data_set_0")
    ref_in = [load_pb(os.path.join(ds, "input_%d.pb" % k)) for k in range(len(ins))]
    ref_out = [load_pb(os.path.join(ds, "output_%d.pb" % k)) for k in range(nout)]
    nb = ref_in[0].shape[0]
    # 1. the reference batch
    got, err = run(drv, w, nb, ref_in, nout)
    if got is None:
        fail("%s at N=%d: %s" % (name, nb, err))
        return
    ok = all(close(g_, r_.astype(np.float32).ravel(), 1e-3, 1e-4)
             for g_, r_ in zip(got, ref_out))
    if not ok:
        fail("%s at N=%d: outputs differ from the reference" % (name, nb))
    # 2. three items stacked against each alone: item k is reference item
    # k % nb, its float inputs scaled (so that items differ)
    items = []
    for k in range(3):
        it = []
        for x in ref_in:
            v = x[k % nb:k % nb + 1].copy()
            if v.dtype == np.float32:
                v = v * np.float32(1.0 - 0.25 * k)
            elif name == "bert_tiny" and k == 2:
                v = v[:, ::-1].copy()
            it.append(v)
        items.append(it)
    stacked = [np.concatenate([it[j] for it in items]) for j in range(len(ins))]
    got3, err = run(drv, w, 3, stacked, nout)
    if got3 is None:
        fail("%s at N=3: %s" % (name, err))
        return
    bad = []
    for k in range(3):
        alone, err = run(drv, w, 1, items[k], nout)
        if alone is None:
            fail("%s item %d at N=1: %s" % (name, k, err))
            return
        for j in range(nout):
            per = got3[j].size // 3
            if not close(got3[j][k * per:(k + 1) * per], alone[j], 1e-5, 1e-6):
                bad.append("item %d of output %d" % (k, j))
    if bad:
        fail("%s at N=3: %s differ from the item run alone" % (name, ", ".join(bad)))
    print("%s %s: N=%d reference %s, N=3 items %s" % (name, target, nb,
          "ok" if ok else "WRONG", "ok" if not bad else "WRONG"))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--make-only":
        for name in ("mlp", "lenet", "squeezenet1_1", "bert_tiny"):
            os.makedirs(os.path.join(sys.argv[3], name), exist_ok=True)
            make_model(os.path.join(sys.argv[2], name),
                       os.path.join(sys.argv[3], name, "model.onnx"))
        return 0
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    burncc, models, work = sys.argv[1:4]
    target = "c"
    seed_bug = "--seed-bug" in sys.argv
    rest = [a for a in sys.argv[4:] if not a.startswith("--")]
    if rest:
        target = rest[0]
    if subprocess.run(["sh", "-c", "command -v %s" % CC], capture_output=True).returncode:
        print("SKIP: no C compiler %s" % CC)
        return 77
    for name in ("mlp", "lenet", "squeezenet1_1", "bert_tiny"):
        one(burncc, models, work, name, target, seed_bug)
    # the cuda target compiles the flag (the items as blocks along y, run in
    # process: ctests ptxas_dynamic, cuda_dynamic_fake) but its host module
    # (-o) refuses it, saying what to do
    r = subprocess.run([burncc, "--target", "cuda", "--dynamic-dim", "N", "--stats",
                        os.path.join(work, "mlp", "model.onnx")],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail("cuda target: --dynamic-dim N --stats failed: %s" % r.stderr.strip())
    r = subprocess.run([burncc, "--target", "cuda", "--dynamic-dim", "N", "-o",
                        os.path.join(work, "mlp_cuda.c"),
                        os.path.join(work, "mlp", "model.onnx")],
                       capture_output=True, text=True)
    if r.returncode == 0 or "--dim" not in r.stderr:
        fail("cuda target -o: want a refusal naming --dim, got rc %d: %s"
             % (r.returncode, r.stderr.strip()))
    else:
        print("cuda -o refused: " + r.stderr.strip())
    print("dynamic models: %s" % ("%d failures" % failures if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

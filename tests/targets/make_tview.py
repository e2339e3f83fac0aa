#!/usr/bin/python3
"""Conformance cases for a MatMul that reads a Transpose's input through
the permuted strides (passes/fuse.c transpose_views, ops_linalg.c
mm_view): attention's head split [B,S,H,D] -> [B,H,S,D] on A, on B or on
both, a 3-D A over a 2-D B, a batch that broadcasts, and f32 or 16-bit
(bf16: the GPU template's large form reads the strided rows by cp.async).
Each case's expected output is float64 NumPy of the rounded inputs; the
graph inputs are f32 (cast in the graph for bf16).

    make_tview.py DIR      writes DIR/tview_* case folders
"""
import os, sys
import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T
sys.dont_write_bytecode = True   # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import round16

out = sys.argv[1]
rng = np.random.default_rng(5)


def bf16(a):
    return round16.bf16(a)[0]


def case(name, xs, perms, eq, dt="f32"):
    """xs: input shapes; perms[i]: the Transpose on input i (None: none);
    eq: einsum-free reference through np.matmul of the transposed inputs"""
    d = os.path.join(out, "tview_" + name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    nodes, ins, vals = [], [], []
    names = []
    for i, (shp, p) in enumerate(zip(xs, perms)):
        x = rng.standard_normal(shp).astype(np.float32)
        vals.append(x)
        ins.append(h.make_tensor_value_info("x%d" % i, T.FLOAT, list(shp)))
        nm = "x%d" % i
        if dt == "bf16":
            nodes.append(h.make_node("Cast", [nm], ["c%d" % i], to=T.BFLOAT16))
            nm = "c%d" % i
        if p is not None:
            nodes.append(h.make_node("Transpose", [nm], ["t%d" % i], perm=p))
            nm = "t%d" % i
        names.append(nm)
    nodes.append(h.make_node("MatMul", names, ["y"]))
    ref_in = [bf16(v) if dt == "bf16" else v for v in vals]
    ref_in = [np.transpose(v, p) if p is not None else v for v, p in zip(ref_in, perms)]
    y = np.matmul(ref_in[0].astype(np.float64), ref_in[1].astype(np.float64))
    ydt = T.BFLOAT16 if dt == "bf16" else T.FLOAT
    g = h.make_graph(nodes, name, ins, [h.make_tensor_value_info("y", ydt, list(y.shape))])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), os.path.join(d, "model.onnx"))
    for i, v in enumerate(vals):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(nh.from_array(v, "x%d" % i).SerializeToString())
    if dt == "bf16":
        t = round16.tensor16("y", round16.bf16_bits(y), "bf16", list(y.shape))
    else:
        t = nh.from_array(y.astype(np.float32), "y")
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(t.SerializeToString())


split = [0, 2, 1, 3]
case("a_split", [(2, 12, 3, 8), (2, 3, 8, 5)], [split, None], None)
case("b_split", [(2, 3, 12, 7), (2, 7, 3, 9)], [None, split], None)
case("both", [(2, 10, 4, 16), (2, 16, 4, 10)], [split, split], None)
case("a3d_b2d", [(6, 5, 8), (8, 7)], [[1, 0, 2], None], None)
case("bcast", [(1, 9, 2, 8), (3, 2, 8, 6)], [split, None], None)
case("bf16_big", [(1, 128, 2, 64), (1, 2, 64, 128)], [split, None], None, "bf16")
case("bf16_both", [(2, 128, 2, 32), (2, 32, 2, 128)], [split, split], None, "bf16")

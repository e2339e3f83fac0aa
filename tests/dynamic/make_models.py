#!/usr/bin/python3
"""Models with a symbolic batch dim N for the dynamic-dim test (dyn_test.c).
Run with Debian's python3 (onnx 1.12); the models are checked in, CI does
not run this.

  batch/         x f32[N,5,7], z f32[7] ->
                   y1 = Sigmoid(x * w + z)             f32[N,5,7]
                   y2 = ReduceSum(y1 * x, axes=[2])    f32[N,5]
                   y3 = ReduceMax(Exp(x - 1), axes=[1], keepdims=1)  f32[N,1,7]
  reduce_batch/  ReduceSum over axis 0: must be refused
  transpose/     Transpose of x: must be refused
  reshape_fixed/ Reshape of x to [5, -1] (the batch leaves axis 0): refused
  concat_batch/  Concat of x and x along axis 0: refused
  gather_batch/  Gather of x's item 0 (axis 0): refused
  merge_rows/    x f32[N,4,6] -> Reshape [-1,6] (4 rows per item), Relu,
                 MatMul by W[6,5], Reshape [-1,4,5], Softmax: a case for
                 burncc check --dynamic (test_data_set_0: N = 3, numpy)
  pool_items/    GlobalMaxPool, GlobalAveragePool, MaxPool (ceil) of
                 x f32[N,1,3,3] at N = 3 and 1: accumulators per item
  gemm_rows/     x f32[N,37] -> Gemm by W1[37,45] + b1, Add z f32[N,45],
                 Relu, MatMul by W3[45,33], Gemm by W2[20,33]^T + b2: each
                 product one GEMM over the rows of every item (lower_gemm's
                 and lower_matmul's run-time rows), a case for
                 burncc check --dynamic at N = 23 (two tiles of 8 rows, a
                 rest of 7 as tiles of 4, 2 and 1 rows) and N = 4 (a rest
                 only), so a wrong tail or a wrong block shows
"""
import os
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

here = os.path.dirname(os.path.abspath(__file__))
W = (np.arange(7, dtype=np.float32) - 3.0) / 4.0   # -0.75 .. 0.75

def save(name, nodes, inputs, outputs, inits=()):
    g = h.make_graph(nodes, name, inputs, outputs,
                     initializer=[nh.from_array(v, n) for n, v in inits])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)],
                     producer_name="burncc-tests")
    m.ir_version = 7
    onnx.checker.check_model(m)
    os.makedirs(os.path.join(here, name), exist_ok=True)
    onnx.save(m, os.path.join(here, name, "model.onnx"))

x = h.make_tensor_value_info("x", T.FLOAT, ["N", 5, 7])
z = h.make_tensor_value_info("z", T.FLOAT, [7])
save("batch", [
    h.make_node("Mul", ["x", "w"], ["xw"], name="mul_w"),
    h.make_node("Add", ["xw", "z"], ["a"], name="add_z"),
    h.make_node("Sigmoid", ["a"], ["y1"], name="sigmoid"),
    h.make_node("Mul", ["y1", "x"], ["p"], name="mul_x"),
    h.make_node("ReduceSum", ["p", "axes"], ["y2"], name="sum_last", keepdims=0),
    h.make_node("Sub", ["x", "one"], ["xm"], name="sub_one"),
    h.make_node("Exp", ["xm"], ["e"], name="exp"),
    h.make_node("ReduceMax", ["e"], ["y3"], name="max_mid", axes=[1], keepdims=1),
], [x, z], [h.make_tensor_value_info("y1", T.FLOAT, ["N", 5, 7]),
            h.make_tensor_value_info("y2", T.FLOAT, ["N", 5]),
            h.make_tensor_value_info("y3", T.FLOAT, ["N", 1, 7])],
   [("w", W), ("axes", np.array([2], np.int64)), ("one", np.array(1.0, np.float32))])

save("reduce_batch", [
    h.make_node("Relu", ["x"], ["r"], name="relu"),
    h.make_node("ReduceSum", ["r", "axes"], ["y"], name="sum_batch", keepdims=1),
], [x], [h.make_tensor_value_info("y", T.FLOAT, [1, 5, 7])],
   [("axes", np.array([0], np.int64))])

save("transpose", [
    h.make_node("Transpose", ["x"], ["y"], name="swap", perm=[1, 0, 2]),
], [x], [h.make_tensor_value_info("y", T.FLOAT, [5, "N", 7])])

save("reshape_fixed", [
    h.make_node("Reshape", ["x", "shape"], ["y"], name="fold_batch"),
], [x], [h.make_tensor_value_info("y", T.FLOAT, [5, None])],
   [("shape", np.array([5, -1], np.int64))])

save("concat_batch", [
    h.make_node("Concat", ["x", "x"], ["y"], name="twice", axis=0),
], [x], [h.make_tensor_value_info("y", T.FLOAT, [None, 5, 7])])

save("gather_batch", [
    h.make_node("Gather", ["x", "first"], ["y"], name="item0", axis=0),
], [x], [h.make_tensor_value_info("y", T.FLOAT, [1, 5, 7])],
   [("first", np.array([0], np.int64))])

rng = np.random.default_rng(12)
WM = rng.standard_normal((6, 5)).astype(np.float32)
save("merge_rows", [
    h.make_node("Reshape", ["x6", "rows"], ["a"], name="to_rows"),
    h.make_node("Relu", ["a"], ["r"], name="relu"),
    h.make_node("MatMul", ["r", "w"], ["m"], name="matmul"),
    h.make_node("Reshape", ["m", "back"], ["y"], name="to_items"),
    h.make_node("Softmax", ["y"], ["z"], name="softmax", axis=-1),
], [h.make_tensor_value_info("x6", T.FLOAT, ["N", 4, 6])],
   [h.make_tensor_value_info("z", T.FLOAT, ["N", 4, 5])],
   [("rows", np.array([-1, 6], np.int64)), ("w", WM),
    ("back", np.array([-1, 4, 5], np.int64))])
X6 = rng.standard_normal((3, 4, 6)).astype(np.float32)
Z = (np.maximum(X6.reshape(-1, 6), 0) @ WM).reshape(3, 4, 5)
Z = np.exp(Z - Z.max(-1, keepdims=True))
Z = (Z / Z.sum(-1, keepdims=True)).astype(np.float32)
ds = os.path.join(here, "merge_rows", "test_data_set_0")
os.makedirs(ds, exist_ok=True)
with open(os.path.join(ds, "input_0.pb"), "wb") as f:
    f.write(nh.from_array(X6, "x6").SerializeToString())
with open(os.path.join(ds, "output_0.pb"), "wb") as f:
    f.write(nh.from_array(Z, "z").SerializeToString())

W1 = rng.standard_normal((37, 45)).astype(np.float32)
B1 = rng.standard_normal(45).astype(np.float32)
W2 = rng.standard_normal((20, 33)).astype(np.float32)
B2 = rng.standard_normal(20).astype(np.float32)
W3 = rng.standard_normal((45, 33)).astype(np.float32)
save("gemm_rows", [
    h.make_node("Gemm", ["x", "w1", "b1"], ["g1"], name="gemm1"),
    h.make_node("Add", ["g1", "z"], ["s"], name="add_z"),
    h.make_node("Relu", ["s"], ["r"], name="relu"),
    h.make_node("MatMul", ["r", "w3"], ["m"], name="matmul"),
    h.make_node("Gemm", ["m", "w2", "b2"], ["y"], name="gemm2", transB=1),
], [h.make_tensor_value_info("x", T.FLOAT, ["N", 37]),
    h.make_tensor_value_info("z", T.FLOAT, ["N", 45])],
   [h.make_tensor_value_info("y", T.FLOAT, ["N", 20])],
   [("w1", W1), ("b1", B1), ("w2", W2), ("b2", B2), ("w3", W3)])
for d, nb in enumerate((23, 4)):
    XG = rng.standard_normal((nb, 37)).astype(np.float32)
    ZG = rng.standard_normal((nb, 45)).astype(np.float32)
    YG = ((np.maximum(XG.astype(np.float64) @ W1 + B1 + ZG, 0) @ W3)
          @ W2.T.astype(np.float64) + B2).astype(np.float32)
    ds = os.path.join(here, "gemm_rows", "test_data_set_%d" % d)
    os.makedirs(ds, exist_ok=True)
    for k, (v, nm) in enumerate(((XG, "x"), (ZG, "z"))):
        with open(os.path.join(ds, "input_%d.pb" % k), "wb") as f:
            f.write(nh.from_array(v, nm).SerializeToString())
    with open(os.path.join(ds, "output_0.pb"), "wb") as f:
        f.write(nh.from_array(YG, "y").SerializeToString())

# pool_items/: x f32[N,1,3,3] -> GlobalMaxPool, GlobalAveragePool,
# MaxPool 2x2 (ceil): kernels whose one-thread statements share an
# accumulator per item, at N = 3 and N = 1.  On GPU targets the items must
# not be split statement by statement (schedule_gpu's items_apart): each
# item's accumulator would be overwritten by the others' (at N = 1 it
# shows nothing, hence N = 3)
save("pool_items", [
    h.make_node("GlobalMaxPool", ["x"], ["gmax"], name="gmax"),
    h.make_node("GlobalAveragePool", ["x"], ["gavg"], name="gavg"),
    h.make_node("MaxPool", ["x"], ["mp"], name="mp", kernel_shape=[2, 2],
                strides=[2, 2], ceil_mode=1),
], [h.make_tensor_value_info("x", T.FLOAT, ["N", 1, 3, 3])],
   [h.make_tensor_value_info("gmax", T.FLOAT, ["N", 1, 1, 1]),
    h.make_tensor_value_info("gavg", T.FLOAT, ["N", 1, 1, 1]),
    h.make_tensor_value_info("mp", T.FLOAT, ["N", 1, 2, 2])])
rp = np.random.default_rng(31)
for d, nb in enumerate((3, 1)):
    XP = rp.standard_normal((nb, 1, 3, 3)).astype(np.float32)
    XPad = np.full((nb, 1, 4, 4), -np.inf, np.float32)
    XPad[:, :, :3, :3] = XP
    outs = (("gmax", XP.max(axis=(2, 3), keepdims=True)),
            ("gavg", XP.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(np.float32)),
            ("mp", XPad.reshape(nb, 1, 2, 2, 2, 2).max(axis=(3, 5))))
    ds = os.path.join(here, "pool_items", "test_data_set_%d" % d)
    os.makedirs(ds, exist_ok=True)
    with open(os.path.join(ds, "input_0.pb"), "wb") as f:
        f.write(nh.from_array(XP, "x").SerializeToString())
    for k, (nm, v) in enumerate(outs):
        with open(os.path.join(ds, "output_%d.pb" % k), "wb") as f:
            f.write(nh.from_array(v, nm).SerializeToString())

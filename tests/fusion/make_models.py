#!/usr/bin/python3
"""Small models for the fusion golden tests, each a case in the ONNX
node-test layout (model.onnx + test_data_set_0) with numpy reference
outputs.  Run with Debian's python3 (onnx 1.12, numpy); the outputs are
checked in, CI does not run this."""
import os, math
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

rng = np.random.default_rng(7)
here = os.path.dirname(os.path.abspath(__file__))

def erf(x):
    return np.vectorize(math.erf)(x.astype(np.float64)).astype(np.float32)

def save(name, nodes, inputs, outputs, feeds, refs, inits=()):
    g = h.make_graph(nodes, name,
                     [h.make_tensor_value_info(n, T.FLOAT, v.shape) for n, v in inputs],
                     [h.make_tensor_value_info(n, T.FLOAT, r.shape) for n, r in zip(outputs, refs)],
                     initializer=[nh.from_array(v, n) for n, v in inits])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], producer_name="burncc-tests")
    m.ir_version = 8
    onnx.checker.check_model(m)
    d = os.path.join(here, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for i, (n, v) in enumerate(inputs):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(nh.from_array(v, n).SerializeToString())
    for i, (n, v) in enumerate(zip(outputs, refs)):
        with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % i), "wb") as f:
            f.write(nh.from_array(v.astype(np.float32), n).SerializeToString())

def c(name, v):
    return (name, np.array(v, dtype=np.float32))

# gelu_custom(x) = x * (erf(x / sqrt(2)) + 1) / 2
x = rng.standard_normal((4, 256)).astype(np.float32)
save("gelu_composed",
     [h.make_node("Div", ["x", "sqrt2"], ["a"]), h.make_node("Erf", ["a"], ["b"]),
      h.make_node("Add", ["b", "one"], ["c"]), h.make_node("Mul", ["x", "c"], ["d"]),
      h.make_node("Div", ["d", "two"], ["y"])],
     [("x", x)], ["y"], None, [x * (erf(x / np.float32(math.sqrt(2))) + 1) / 2],
     [c("sqrt2", math.sqrt(2)), c("one", 1.0), c("two", 2.0)])

# softmax over the last axis from primitives
x = rng.standard_normal((3, 5, 17)).astype(np.float32)
e = np.exp(x - x.max(-1, keepdims=True))
save("softmax_composed",
     [h.make_node("ReduceMax", ["x"], ["m"], axes=[-1]), h.make_node("Sub", ["x", "m"], ["s"]),
      h.make_node("Exp", ["s"], ["e"]), h.make_node("ReduceSum", ["e", "ax"], ["z"]),
      h.make_node("Div", ["e", "z"], ["y"])],
     [("x", x)], ["y"], None, [e / e.sum(-1, keepdims=True)],
     [("ax", np.array([-1], dtype=np.int64))])

# layernorm from primitives
x = rng.standard_normal((2, 7, 32)).astype(np.float32)
gamma = rng.standard_normal(32).astype(np.float32)
beta = rng.standard_normal(32).astype(np.float32)
mu = x.mean(-1, keepdims=True); d = x - mu
ref = d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-5) * gamma + beta
save("layernorm_composed",
     [h.make_node("ReduceMean", ["x"], ["mu"], axes=[-1]), h.make_node("Sub", ["x", "mu"], ["d"]),
      h.make_node("Mul", ["d", "d"], ["dd"]), h.make_node("ReduceMean", ["dd"], ["var"], axes=[-1]),
      h.make_node("Add", ["var", "eps"], ["ve"]), h.make_node("Sqrt", ["ve"], ["sd"]),
      h.make_node("Div", ["d", "sd"], ["n"]), h.make_node("Mul", ["n", "gamma"], ["ng"]),
      h.make_node("Add", ["ng", "beta"], ["y"])],
     [("x", x)], ["y"], None, [ref],
     [c("eps", 1e-5), ("gamma", gamma), ("beta", beta)])

# Conv + BatchNormalization + Relu + Add (residual)
x = rng.standard_normal((1, 4, 9, 9)).astype(np.float32)
w = (rng.standard_normal((4, 4, 3, 3)) * 0.3).astype(np.float32)
b = rng.standard_normal(4).astype(np.float32)
sc, bi = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
mean, var = rng.standard_normal(4).astype(np.float32), (rng.random(4) + 0.5).astype(np.float32)
conv = np.zeros((1, 4, 9, 9), np.float32)
xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
for o in range(4):
    for i in range(9):
        for j in range(9):
            conv[0, o, i, j] = (xp[0, :, i:i + 3, j:j + 3] * w[o]).sum() + b[o]
bn = (conv - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5) \
     * sc[None, :, None, None] + bi[None, :, None, None]
save("conv_bn_relu_add",
     [h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
      h.make_node("BatchNormalization", ["c", "sc", "bi", "mean", "var"], ["n"], epsilon=1e-5),
      h.make_node("Relu", ["n"], ["r"]), h.make_node("Add", ["r", "x"], ["y"])],
     [("x", x)], ["y"], None, [np.maximum(bn, 0) + x],
     [("w", w), ("b", b), ("sc", sc), ("bi", bi), ("mean", mean), ("var", var)])

# MatMul + bias + tanh-GELU from primitives
x = rng.standard_normal((8, 32)).astype(np.float32)
w = (rng.standard_normal((32, 16)) * 0.2).astype(np.float32)
b = rng.standard_normal(16).astype(np.float32)
t = x @ w + b
k = np.float32(math.sqrt(2 / math.pi))
ref = 0.5 * t * (1 + np.tanh(k * (t + np.float32(0.044715) * t * t * t)))
save("matmul_bias_gelu_tanh",
     [h.make_node("MatMul", ["x", "w"], ["mm"]), h.make_node("Add", ["mm", "b"], ["t"]),
      h.make_node("Mul", ["t", "t"], ["t2"]), h.make_node("Mul", ["t2", "t"], ["t3"]),
      h.make_node("Mul", ["t3", "c044"], ["u"]), h.make_node("Add", ["t", "u"], ["v"]),
      h.make_node("Mul", ["v", "k"], ["kv"]), h.make_node("Tanh", ["kv"], ["th"]),
      h.make_node("Add", ["th", "one"], ["p"]), h.make_node("Mul", ["t", "p"], ["q"]),
      h.make_node("Mul", ["q", "half"], ["y"])],
     [("x", x)], ["y"], None, [ref],
     [("w", w), ("b", b), c("c044", 0.044715), c("k", float(k)), c("one", 1.0), c("half", 0.5)])

# RMSNorm from primitives: x / sqrt(mean(x^2) + eps) * g
x = rng.standard_normal((4, 64)).astype(np.float32)
gm = rng.standard_normal(64).astype(np.float32)
ref = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * gm
save("rmsnorm_composed",
     [h.make_node("Pow", ["x", "two"], ["x2"]), h.make_node("ReduceMean", ["x2"], ["ms"], axes=[-1]),
      h.make_node("Add", ["ms", "eps"], ["mse"]), h.make_node("Sqrt", ["mse"], ["r"]),
      h.make_node("Div", ["x", "r"], ["n"]), h.make_node("Mul", ["n", "g"], ["y"])],
     [("x", x)], ["y"], None, [ref],
     [c("two", 2.0), c("eps", 1e-6), ("g", gm)])

# mean and variance over the spatial axes of an NCHW tensor, both outputs
x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
mu = x.mean((2, 3), keepdims=True)
save("mean_variance",
     [h.make_node("ReduceMean", ["x"], ["mean"], axes=[2, 3]), h.make_node("Sub", ["x", "mean"], ["d"]),
      h.make_node("Mul", ["d", "d"], ["dd"]), h.make_node("ReduceMean", ["dd"], ["var"], axes=[2, 3])],
     [("x", x)], ["mean", "var"], None, [mu, ((x - mu) ** 2).mean((2, 3), keepdims=True)])

# Numerics at the edges (issue 7).  Relu -> ReduceLogSumExp fuses into one
# kernel, which must keep the max shift: 100 + log 4, not inf.
x = np.full((1, 4), 100, np.float32)
save("relu_logsumexp",
     [h.make_node("Relu", ["x"], ["r"]),
      h.make_node("ReduceLogSumExp", ["r"], ["y"], axes=[1], keepdims=1)],
     [("x", x)], ["y"], None, [np.array([[100 + math.log(4)]])])

# Softplus(96.5) is 96.5 (log(1 + exp(x)) overflows to inf from x = 89 in
# f32), and the LogSoftmax after it is finite, not NaN.
x = np.array([[96.5, 1.0, -20.0, 0.0]], np.float32)
sp = np.logaddexp(0, x.astype(np.float64))
d = sp - sp.max(1, keepdims=True)
save("softplus_logsoftmax",
     [h.make_node("Softplus", ["x"], ["s"]), h.make_node("LogSoftmax", ["s"], ["y"], axis=1)],
     [("x", x)], ["s", "y"], None, [sp, d - np.log(np.exp(d).sum(1, keepdims=True))])

# Fused reductions at the edges of f32, each after a pointwise op so that
# the fused path (reduce_emit from the table) is the one checked: ReduceL2
# of 1e20s and 1e-30s (f64 accumulator), ReduceLogSum of 1e38s, ReduceProd
# that overflows f32 on its way to 0 or 1, ReduceMax propagating NaN.
x = np.array([[1e20, 1e20, 0, 0], [1e-30, 1e-30, 0, 0], [1e38, 1e38, 1e-38, 1e-38],
              [1e30, -1e30, 0, 1], [1, np.nan, -np.inf, 3]], np.float32)
x64 = x.astype(np.float64)
with np.errstate(invalid="ignore"):
    refs = [np.sqrt((x64 * x64).sum(1, keepdims=True)), np.log(np.abs(x64).sum(1, keepdims=True)),
            (-x64).prod(1, keepdims=True), np.maximum(x64, 0).max(1, keepdims=True)]
save("reduce_edges",
     [h.make_node("Neg", ["x"], ["n"]), h.make_node("ReduceL2", ["n"], ["l2"], axes=[1]),
      h.make_node("Abs", ["x"], ["a"]), h.make_node("ReduceLogSum", ["a"], ["ls"], axes=[1]),
      h.make_node("Sub", ["zero", "x"], ["z"]), h.make_node("ReduceProd", ["z"], ["p"], axes=[1]),
      h.make_node("Relu", ["x"], ["r"]), h.make_node("ReduceMax", ["r"], ["mx"], axes=[1])],
     [("x", x)], ["l2", "ls", "p", "mx"], None, refs, [c("zero", 0.0)])

# rows wide enough for a GPU block to copy them to shared memory in
# 16-byte pieces (passes/schedule_gpu.c, the onchip step)
x = (rng.standard_normal((6, 1024)) * 4).astype(np.float32)
e = np.exp(x - x.max(-1, keepdims=True))
save("softmax_wide", [h.make_node("Softmax", ["x"], ["y"], axis=-1)],
     [("x", x)], ["y"], None, [e / e.sum(-1, keepdims=True)])
x = rng.standard_normal((5, 1024)).astype(np.float32)
gamma = rng.standard_normal(1024).astype(np.float32)
beta = rng.standard_normal(1024).astype(np.float32)
mu = x.mean(-1, keepdims=True); d = x - mu
ref = d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-5) * gamma + beta
save("layernorm_wide",
     [h.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y"], axis=-1, epsilon=1e-5)],
     [("x", x)], ["y"], None, [ref], [("gamma", gamma), ("beta", beta)])

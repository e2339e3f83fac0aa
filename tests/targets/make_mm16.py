#!/usr/bin/python3
"""A conformance case for the GPU MatMul template of 16-bit inputs:
Y = Gelu(X @ W + b), X cast to bf16 or f16 from f32, W and b constants,
Y in the 16-bit type; the expected output is computed in float64 from the
rounded operands, rounded as each op's output would be (MatMul, Add,
Gelu), so burncc check's tolerance for the type applies.

    make_mm16.py M K N DTYPE DIR       (DTYPE bf16 or f16)
"""
import math, os, sys
import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T
sys.dont_write_bytecode = True   # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import round16

M, K, N = (int(v) for v in sys.argv[1:4])
dt, d = sys.argv[4], sys.argv[5]
os.makedirs(d + "/test_data_set_0", exist_ok=True)
rng = np.random.default_rng(M * 7 + K * 3 + N)

def rnd(a):
    return round16.rnd(a, dt)

onnx_dt = T.BFLOAT16 if dt == "bf16" else T.FLOAT16
X = rng.standard_normal((M, K)).astype(np.float32)
W = (rng.standard_normal((K, N)) / math.sqrt(K)).astype(np.float32)
B = (rng.standard_normal(N) * 0.5).astype(np.float32)
nodes = [h.make_node("Cast", ["X"], ["xh"], to=onnx_dt),
         h.make_node("Cast", ["W"], ["wh"], to=onnx_dt),
         h.make_node("Cast", ["B"], ["bh"], to=onnx_dt),
         h.make_node("MatMul", ["xh", "wh"], ["mm"]),
         h.make_node("Add", ["mm", "bh"], ["s"]),
         h.make_node("Gelu", ["s"], ["Y"])]
g = h.make_graph(nodes, "mm16", [h.make_tensor_value_info("X", T.FLOAT, [M, K])],
                 [h.make_tensor_value_info("Y", onnx_dt, [M, N])],
                 [nh.from_array(W, "W"), nh.from_array(B, "B")])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 20)]), d + "/model.onnx")
xh, wh, bh = rnd(X)[0], rnd(W)[0], rnd(B)[0]
mm = rnd((xh.astype(np.float64) @ wh.astype(np.float64)).astype(np.float32))[0]
s = rnd(mm + bh)[0].astype(np.float64)
erf = np.vectorize(math.erf)
y, bits = rnd((0.5 * s * (1 + erf(s / math.sqrt(2)))).astype(np.float32))
open(d + "/test_data_set_0/input_0.pb", "wb").write(nh.from_array(X, "X").SerializeToString())
t = round16.tensor16("Y", bits, dt, [M, N])
open(d + "/test_data_set_0/output_0.pb", "wb").write(t.SerializeToString())

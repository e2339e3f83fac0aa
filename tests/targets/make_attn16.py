#!/usr/bin/python3
"""A conformance case for attention on 16-bit inputs: Q, K and V (B, S,
H*D) cast to bf16 or f16 from f32, then either

  op     ONNX's Attention (opset 23; 3-D inputs, q_num_heads = kv_num_heads
         = H, the default scale 1/sqrt(D))
  graph  the same written as PyTorch exports it: Reshape to (B, S, H, D),
         Transpose to heads first (K to (B, H, D, S)), MatMul, Mul by the
         scale (a 16-bit constant), Softmax, MatMul by V, Transpose and
         Reshape back
  split  graph, with Q, K and V the three parts of one input (B, S, 3E)
         split on its last axis (a fused QKV projection; S = T)

The expected output is computed in float64 from the rounded operands and
rounded to the type (in `graph` each op's output too, the scale a 16-bit
constant), so burncc check's tolerance for the type applies.

    make_attn16.py B S T H D DTYPE FORM DIR    (DTYPE bf16 | f16, FORM op | graph | split)
"""
import math, os, sys
import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as TP
sys.dont_write_bytecode = True   # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import round16

Bn, S, T, H, D = (int(v) for v in sys.argv[1:6])
dt, form, d = sys.argv[6], sys.argv[7], sys.argv[8]
os.makedirs(d + "/test_data_set_0", exist_ok=True)
rng = np.random.default_rng(Bn * 1000 + S * 7 + T * 5 + H * 3 + D)

def rnd(a):
    return round16.rnd(a, dt)

odt = TP.BFLOAT16 if dt == "bf16" else TP.FLOAT16
E = H * D
X = {n: (rng.standard_normal((Bn, L, E)) * (1.5 if n == "V" else 0.6)).astype(np.float32)
     for n, L in (("Q", S), ("K", T), ("V", T))}
if form == "split":   # one input (B, S, 3E), cast, split into Q, K and V
    assert S == T
    QKV = np.concatenate([X[n] for n in "QKV"], axis=2)
    nodes = [h.make_node("Cast", ["QKV"], ["qkv"], to=odt),
             h.make_node("Split", ["qkv"], ["q", "k", "v"], axis=2)]
else:
    nodes = [h.make_node("Cast", [n], [n.lower()], to=odt) for n in "QKV"]
inits = []
scale = 1 / math.sqrt(D)
if form == "op":
    nodes.append(h.make_node("Attention", ["q", "k", "v"], ["Y"], q_num_heads=H,
                             kv_num_heads=H))
    opset = 23
else:
    scale = float(rnd(np.array([scale], np.float32))[0][0])
    st = round16.tensor16("scale", rnd(np.array([scale], np.float32))[1], dt, [])
    inits += [nh.from_array(np.array([Bn, S, H, D], np.int64), "shq"),
              nh.from_array(np.array([Bn, T, H, D], np.int64), "shk"),
              nh.from_array(np.array([Bn, S, E], np.int64), "sho"), st]
    nodes += [h.make_node("Reshape", ["q", "shq"], ["q4"]),
              h.make_node("Reshape", ["k", "shk"], ["k4"]),
              h.make_node("Reshape", ["v", "shk"], ["v4"]),
              h.make_node("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),
              h.make_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
              h.make_node("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
              h.make_node("MatMul", ["qh", "kt"], ["s0"]),
              h.make_node("Mul", ["s0", "scale"], ["s1"]),
              h.make_node("Softmax", ["s1"], ["p"], axis=-1),
              h.make_node("MatMul", ["p", "vh"], ["o4"]),
              h.make_node("Transpose", ["o4"], ["ot"], perm=[0, 2, 1, 3]),
              h.make_node("Reshape", ["ot", "sho"], ["Y"])]
    opset = 17
ins = ([h.make_tensor_value_info("QKV", TP.FLOAT, list(QKV.shape))] if form == "split" else
       [h.make_tensor_value_info(n, TP.FLOAT, list(X[n].shape)) for n in "QKV"])
g = h.make_graph(nodes, "attn16", ins,
                 [h.make_tensor_value_info("Y", odt, [Bn, S, E])], inits)
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", opset)]), d + "/model.onnx")
q, k, v = (rnd(X[n])[0].astype(np.float64).reshape(Bn, -1, H, D).transpose(0, 2, 1, 3)
           for n in "QKV")
def r64(a):   # each op's output rounded to the type in `graph`
    return a if form == "op" else rnd(a.astype(np.float32))[0].astype(np.float64)
s = r64(r64(q @ k.transpose(0, 1, 3, 2)) * scale)
p = np.exp(s - s.max(-1, keepdims=True))
p = r64(p / p.sum(-1, keepdims=True))
y = (p @ v).transpose(0, 2, 1, 3).reshape(Bn, S, E)
feeds = [("QKV", QKV)] if form == "split" else [(n, X[n]) for n in "QKV"]
for i, (n, x) in enumerate(feeds):
    open(d + "/test_data_set_0/input_%d.pb" % i, "wb").write(
        nh.from_array(x, n).SerializeToString())
t = round16.tensor16("Y", rnd(y.astype(np.float32))[1], dt, [Bn, S, E])
open(d + "/test_data_set_0/output_0.pb", "wb").write(t.SerializeToString())

#!/usr/bin/python3
"""The GPU benchmark models of issue 9, written from ONNX primitives into DIR:
gelu.onnx      x * (erf(x / sqrt(2)) + 1) / 2 on 2^28 f32 (five ops)
softmax.onnx   Softmax over the last axis of 8192x8192 f32
layernorm.onnx LayerNormalization over the last axis of 8192x8192 f32
usage: make_models.py DIR"""
import os, sys
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from make_gelu import gelu_graph  # the same five-op graph as bench/gelu

out = sys.argv[1]
os.makedirs(out, exist_ok=True)

def save(g, name, opset=17):
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], producer_name="burncc-bench")
    m.ir_version = 8
    onnx.save(m, os.path.join(out, name))

save(gelu_graph(1 << 28), "gelu.onnx")
r = c = 8192
save(h.make_graph([h.make_node("Softmax", ["x"], ["y"], axis=-1)], "softmax",
                  [h.make_tensor_value_info("x", T.FLOAT, [r, c])],
                  [h.make_tensor_value_info("y", T.FLOAT, [r, c])]), "softmax.onnx")
save(h.make_graph([h.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1,
                               epsilon=1e-5)], "layernorm",
                  [h.make_tensor_value_info("x", T.FLOAT, [r, c])],
                  [h.make_tensor_value_info("y", T.FLOAT, [r, c])],
                  initializer=[nh.from_array(np.ones(c, np.float32), "g"),
                               nh.from_array(np.zeros(c, np.float32), "b")]), "layernorm.onnx")

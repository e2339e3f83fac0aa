#!/usr/bin/python3
"""bench/gelu/model.onnx: gelu_custom(x) = x * (erf(x / sqrt(2)) + 1) / 2
written from primitives, on 2^24 floats.  gelu_graph(n) is the graph on n
floats (bench/gpu/make_models.py uses it on 2^28)."""
import math, os
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh


def gelu_graph(n):
    return h.make_graph(
        [h.make_node("Div", ["x", "sqrt2"], ["a"]), h.make_node("Erf", ["a"], ["b"]),
         h.make_node("Add", ["b", "one"], ["c"]), h.make_node("Mul", ["x", "c"], ["d"]),
         h.make_node("Div", ["d", "two"], ["y"])],
        "gelu", [h.make_tensor_value_info("x", T.FLOAT, [n])],
        [h.make_tensor_value_info("y", T.FLOAT, [n])],
        initializer=[nh.from_array(np.array(v, np.float32), k)
                     for k, v in (("sqrt2", math.sqrt(2)), ("one", 1.0), ("two", 2.0))])


if __name__ == "__main__":
    m = h.make_model(gelu_graph(1 << 24), opset_imports=[h.make_opsetid("", 17)],
                     producer_name="burncc-bench")
    m.ir_version = 8
    onnx.save(m, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gelu", "model.onnx"))

#!/usr/bin/python3
"""bench/sgemm/model.onnx: Y = MatMul(A, B) on 1024x1024 f32, both operands
graph inputs (so burncc packs B at run time, as a BLAS does)."""
import os
import onnx
from onnx import helper as h, TensorProto as T

if __name__ == "__main__":
    n = 1024
    g = h.make_graph([h.make_node("MatMul", ["A", "B"], ["Y"])], "sgemm",
                     [h.make_tensor_value_info("A", T.FLOAT, [n, n]),
                      h.make_tensor_value_info("B", T.FLOAT, [n, n])],
                     [h.make_tensor_value_info("Y", T.FLOAT, [n, n])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], producer_name="burncc-bench")
    m.ir_version = 8
    onnx.save(m, os.path.join(os.path.dirname(os.path.abspath(__file__)), "sgemm", "model.onnx"))

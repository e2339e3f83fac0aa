#!/usr/bin/python3
"""make_big.py OUT.onnx: an MLP of 20M f32 parameters (five 2000x2000
MatMuls with Relus, batch 1), for bench/bigc.sh (compile time of the C
of a large model).  The weights are seeded random: 80 MB, not checked in."""
import sys
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

if __name__ == "__main__":
    n, layers = 2000, 5
    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], "x"
    for i in range(layers):
        inits.append(nh.from_array((rng.standard_normal((n, n)) * 0.01).astype(np.float32),
                                   "w%d" % i))
        nodes += [h.make_node("MatMul", [x, "w%d" % i], ["m%d" % i]),
                  h.make_node("Relu", ["m%d" % i], ["r%d" % i])]
        x = "r%d" % i
    g = h.make_graph(nodes, "big", [h.make_tensor_value_info("x", T.FLOAT, [1, n])],
                     [h.make_tensor_value_info(x, T.FLOAT, [1, n])], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], producer_name="burncc-bench")
    m.ir_version = 8
    onnx.save(m, sys.argv[1])

#!/usr/bin/python3
"""make_rows16.py DIR: bf16 row kernels as conformance-style cases, for
tests/targets/rows16.sh: Softmax over rows of 512 and 96 (a subgroup a row
on the gpu and cuda targets) and LayerNormalization over rows of 768 (a
block a row), bf16 in and out, the reference in float64 rounded to bf16."""
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper
sys.dont_write_bytecode = True   # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import round16


bf16_bits = round16.bf16_bits
from_bits = round16.from_bf16_bits


def tensor(name, a):
    t = onnx.TensorProto()
    t.name, t.data_type = name, TensorProto.BFLOAT16
    t.dims.extend(a.shape)
    t.raw_data = bf16_bits(a).tobytes()
    return t


def case(out, name, shape, op, rng):
    x = from_bits(bf16_bits(rng.standard_normal(shape) * 3)).astype(np.float64)
    inits = []
    if op == "Softmax":
        node = helper.make_node("Softmax", ["x"], ["y"], axis=-1)
        e = np.exp(x - x.max(-1, keepdims=True))
        y = e / e.sum(-1, keepdims=True)
    else:
        g = from_bits(bf16_bits(rng.standard_normal(shape[-1:]))).astype(np.float64)
        b = from_bits(bf16_bits(rng.standard_normal(shape[-1:]))).astype(np.float64)
        inits = [tensor("g", g), tensor("b", b)]
        node = helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1,
                                epsilon=1e-5)
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        y = (x - m) / np.sqrt(v + 1e-5) * g + b
    vi = lambda n: helper.make_tensor_value_info(n, TensorProto.BFLOAT16, shape)
    model = helper.make_model(helper.make_graph([node], name, [vi("x")], [vi("y")], inits),
                              opset_imports=[helper.make_opsetid("", 17)])
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for f, t in (("input_0.pb", tensor("x", x)), ("output_0.pb", tensor("y", y))):
        with open(os.path.join(d, "test_data_set_0", f), "wb") as fh:
            fh.write(t.SerializeToString())


rng = np.random.default_rng(7)
for name, shape, op in (("softmax512", (40, 512), "Softmax"),
                        ("softmax96", (16, 96), "Softmax"),
                        ("layernorm768", (24, 768), "LayerNormalization")):
    case(sys.argv[1], name, shape, op, rng)

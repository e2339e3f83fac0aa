#!/usr/bin/python3
"""make_cases.py - the random-op cases of tests/random (ctest random_ops):
larger than the node suite's (10 to 60 elements), so that burncc check's
distribution rules (tools/check_random.h) have power: RandomUniform,
RandomNormal and their Like forms (seeded and not), Bernoulli to f32 and
int32, Multinomial, training-mode Dropout with a mask, and two unseeded draws
subtracted (the generic rule: if the two nodes drew the same numbers the
difference would be 0 and its variance would not match).  The expected
outputs are NumPy draws of the same distributions, as ONNX's reference
makes them.  Needs python3-onnx; the case folders are committed."""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

R = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(12)


def case(name, nodes, inputs, outputs):
    """inputs, outputs: lists of (name, array)"""
    d = os.path.join(R, name)
    os.makedirs(d + "/test_data_set_0", exist_ok=True)
    vi = lambda n, a: helper.make_tensor_value_info(
        n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape)
    g = helper.make_graph(nodes, name, [vi(n, a) for n, a in inputs],
                          [vi(n, a) for n, a in outputs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)])
    m.ir_version = 10
    onnx.save(m, d + "/model.onnx")
    for kind, lst in (("input", inputs), ("output", outputs)):
        for k, (n, a) in enumerate(lst):
            with open("%s/test_data_set_0/%s_%d.pb" % (d, kind, k), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())


case("uniform_f32",
     [helper.make_node("RandomUniform", [], ["y"], shape=[32, 64], low=-2.0,
                       high=3.0, seed=3.0)],
     [], [("y", rng.uniform(-2, 3, (32, 64)).astype(np.float32))])
case("normal_f64",
     [helper.make_node("RandomNormal", [], ["y"], shape=[4096], mean=1.0,
                       scale=2.0, seed=5.0, dtype=TensorProto.DOUBLE)],
     [], [("y", rng.normal(1, 2, 4096))])
x = rng.uniform(-1, 1, 1000)
case("uniform_like_f64",
     [helper.make_node("RandomUniformLike", ["x"], ["y"], low=10.0, high=11.0)],
     [("x", x)], [("y", rng.uniform(10, 11, 1000))])
x = rng.uniform(-1, 1, (40, 50)).astype(np.float32)
case("normal_like_f32",
     [helper.make_node("RandomNormalLike", ["x"], ["y"], mean=-3.0, scale=0.5)],
     [("x", x)], [("y", rng.normal(-3, 0.5, (40, 50)).astype(np.float32))])
p = np.resize(np.array([0.05, 0.5, 0.95], np.float32), 4096)
case("bernoulli_f32",
     [helper.make_node("Bernoulli", ["p"], ["y"], seed=1.0)],
     [("p", p)], [("y", rng.binomial(1, p).astype(np.float32))])
p = np.linspace(0, 1, 1000)
case("bernoulli_i32",
     [helper.make_node("Bernoulli", ["p"], ["y"], dtype=TensorProto.INT32)],
     [("p", p)], [("y", rng.binomial(1, p).astype(np.int32))])
x = rng.normal(0, 1, (64, 64)).astype(np.float32)
keep = rng.uniform(0, 1, x.shape) >= 0.3
case("dropout_mask",
     [helper.make_node("Dropout", ["x", "r", "t"], ["y", "m"], seed=7)],
     [("x", x), ("r", np.array(0.3, np.float32)), ("t", np.array(True))],
     [("y", (x * keep / np.float32(0.7)).astype(np.float32)), ("m", keep)])
x = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25], [0.01, 0.01, 0.98]] * 4,
                    np.float32))
case("multinomial",
     [helper.make_node("Multinomial", ["x"], ["y"], sample_size=300, seed=2.0)],
     [("x", x)], [("y", np.stack([rng.choice(3, 300, p=np.exp(r) / np.exp(r).sum())
                                  for r in x.astype(np.float64)]).astype(np.int32))])
case("two_unseeded",
     [helper.make_node("RandomUniform", [], ["a"], shape=[2000]),
      helper.make_node("RandomUniform", [], ["b"], shape=[2000]),
      helper.make_node("Sub", ["a", "b"], ["y"])],
     [], [("y", (rng.uniform(0, 1, 2000) - rng.uniform(0, 1, 2000)).astype(np.float32))])

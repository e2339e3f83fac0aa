#!/usr/bin/python3
"""make_models.py - models with hostile names, for tests/hostile/run.sh.

Run with Debian's python3 (onnx 1.12, numpy):  /usr/bin/python3 make_models.py
It (re)writes one folder per case in this folder, in the ONNX node-test
layout (model.onnx, test_data_set_0/{input,output}_N.pb with numpy reference
outputs), plus names.txt: the exact bytes of every graph input and output
name in order, one per line as hex (`in HEX` / `out HEX`), which the
generated PREFIX_inputs/PREFIX_outputs tables must reproduce.  The generated
files are committed; CI does not run this script.

Every hostile string s of a case becomes a little chain
    input s -> Add(s, initializer s+"#w") named s -> value s+"#t"
            -> Relu named s -> output s+"#y"
so that s reaches every place a name can reach the generated text: input and
output parameters, the info tables, weight comments, kernel comments.
"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(15)
SHAPE = (2, 3)

# Placeholders swapped for invalid UTF-8 after serialisation (protobuf will
# not put invalid UTF-8 in a string field); same length, so the framing holds.
INVALID = {b"@INVALID-A@": b"\xff\xfe\x80bad\xc3(\xed\xa0z",
           b"@INVALID-B@": b"x\xc0\xaf*/\xf8\x88\x80\x80ab"}


def value_info(name):
    return h.make_tensor_value_info(name, T.FLOAT, SHAPE)


def save(case, nodes, inputs, outputs, feeds, refs, inits=(), patch=False):
    """Write case/: model, data set 0, names.txt.  inputs and outputs are
    names, feeds and refs arrays in the same order."""
    g = h.make_graph(nodes, "hostile", [value_info(n) for n in inputs],
                     [value_info(n) for n in outputs],
                     initializer=[nh.from_array(v, n) for n, v in inits])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)],
                     producer_name="burncc-hostile")
    m.ir_version = 8
    data = m.SerializeToString()
    d = os.path.join(HERE, case)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))

    def fix(b):
        if patch:
            for k, v in INVALID.items():
                assert len(k) == len(v)
                b = b.replace(k, v)
        return b

    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(fix(data))
    for i, (n, v) in enumerate(zip(inputs, feeds)):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(fix(nh.from_array(v, n).SerializeToString()))
    for i, (n, v) in enumerate(zip(outputs, refs)):
        with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % i), "wb") as f:
            f.write(fix(nh.from_array(v.astype(np.float32), n).SerializeToString()))
    with open(os.path.join(d, "names.txt"), "w") as f:
        for n in inputs:
            f.write("in %s\n" % fix(n.encode()).hex())
        for n in outputs:
            f.write("out %s\n" % fix(n.encode()).hex())


def chains(case, strings, extra_nodes=(), extra_out=(), patch=False):
    """One Add+Relu chain per hostile string (see the docstring)."""
    nodes, inputs, outputs, feeds, refs, inits = [], [], [], [], [], []
    for s in strings:
        x = rng.standard_normal(SHAPE).astype(np.float32)
        w = rng.standard_normal(SHAPE).astype(np.float32)
        nodes.append(h.make_node("Add", [s, s + "#w"], [s + "#t"], name=s))
        nodes.append(h.make_node("Relu", [s + "#t"], [s + "#y"], name=s))
        inputs.append(s)
        outputs.append(s + "#y")
        feeds.append(x)
        refs.append(np.maximum(x + w, 0))
        inits.append((s + "#w", w))
    for o in extra_out:           # (output name, index of the chain)
        outputs.append(o[0])
        refs.append(refs[o[1]])
    save(case, nodes + list(extra_nodes), inputs, outputs, feeds, refs, inits, patch)


# 1. The examples: a writable global, a build stopped by #error.
x = rng.standard_normal(SHAPE).astype(np.float32)
save("issue_node_name",
     [h.make_node("Relu", ["x"], ["y"], name="*/ int inject_counter = 42; /*")],
     ["x"], ["y"], [x], [np.maximum(x, 0)])
chains("comment_inject", ["*/ int inject_counter = 42; /*",
                          "x */ static int inject2 = 7; /* y"])
chains("comment_nested", ["/* nested /* comment", "ends with star *",
                          "/ starts with slash", "*//**//*"])
chains("comment_hash", ["*/\n#error name broke out of a comment\n/*"])

# 2. Trigraphs (-std=c99 replaces them before anything else), line splices.
chains("trigraph", ["??/", "a??/", "??=define X 1", "??'??!??-??(??)??<??>",
                    "trail ??", "????/", "x?", "?", "back\\", "back\\\nslash",
                    "\\", "\\\\\\\n#error spliced"])

# 3. Control characters, quotes, preprocessor directives.
chains("control", ["new\nline", "cr\rret", "tab\tbed", "nul-free \x01\x02\x1f",
                   "del\x7f", "esc\x1b[31mred", "\"quoted\"", "'single'",
                   "#include <stdlib.h>", "#define run exit",
                   "\n#pragma once\n", "\f\v"])

# 4. Non-ASCII: UTF-8 of every length, and invalid UTF-8 (patched in).
chains("nonascii", ["h\u00e9llo", "\u540d\u524d", "emoji \U0001F600",
                    "\u00a0nbsp", "\ufeffbom", "rtl \u202e override",
                    "@INVALID-A@", "@INVALID-B@"], patch=True)

# 5. C keywords, the module's own symbols (prefix `hm` in run.sh; `model`
#    in burncc check), the generated code's own names, libc names.
chains("keywords", ["int", "return", "if", "_Bool", "restrict", "main", "NULL",
                    "EOF", "errno", "A", "arena", "inputs", "outputs", "w0", "b0",
                    "t1", "v1", "in_x", "out_x", "k_add", "k_relu", "k_fused",
                    "hm_run", "hm_run_v", "hm_inputs", "hm_outputs",
                    "hm_tensor_info", "HM_OK", "model_run", "model_run_v",
                    "model_inputs", "MODEL_ERR_ARG", "burn_f16_to_f32",
                    "BURN_HELPER", "uint8_t", "memcpy", "__LINE__", "_Exit",
                    "inputs_dims_0", "outputs_dims_0"])

# 6. Names that collide once only C's characters are kept.
long_prefix = "p" * 200
chains("collide", ["a.b", "a_b", "a-b", "a b", "a__b", "a_b_2", "a_b_1",
                   "1", "_1", "__1", "1x", "_1x", "X", "x",
                   long_prefix + "-first", long_prefix + "-second",
                   long_prefix + ".first", "L" * 5000])

# 7. One output listed twice, an input passed through, the same value under
#    two output slots and a constant output.
x = rng.standard_normal(SHAPE).astype(np.float32)
w = rng.standard_normal(SHAPE).astype(np.float32)
save("dup_output",
     [h.make_node("Relu", ["x"], ["y"], name="")],
     ["x"], ["y", "y", "x", "w"],
     [x], [np.maximum(x, 0), np.maximum(x, 0), x, w], inits=[("w", w)])


# 8. Long fused pointwise chains: one kernel, one expression.
def sigmoid_chain(case, n):
    x = rng.standard_normal(SHAPE).astype(np.float32)
    nodes, prev, y = [], "x", x.astype(np.float64)
    for i in range(n):
        out = "y" if i == n - 1 else "s%d" % i
        nodes.append(h.make_node("Sigmoid", [prev], [out], name="sig%d" % i))
        prev = out
        y = 1 / (1 + np.exp(-y))
    save(case, nodes, ["x"], ["y"], [x], [y.astype(np.float32)])


sigmoid_chain("sigmoid_130", 130)
sigmoid_chain("sigmoid_1000", 1000)

# 9. A deep chain inside the arm of a select (Where): arms that load must not
#    be hoisted out of the select, yet the text must stay shallow.
x = rng.standard_normal(SHAPE).astype(np.float32)
c = rng.standard_normal(SHAPE).astype(np.float32)
nodes, prev, y = [h.make_node("Greater", ["c", "zero"], ["cond"], name="gt")], "x", x.astype(np.float64)
for i in range(300):
    nodes.append(h.make_node("Sigmoid", [prev], ["s%d" % i], name="sig%d" % i))
    prev = "s%d" % i
    y = 1 / (1 + np.exp(-y))
nodes.append(h.make_node("Where", ["cond", prev, "c"], ["y"], name="where"))
save("where_deep", nodes, ["x", "c"], ["y"], [x, c],
     [np.where(c > 0, y, c).astype(np.float32)],
     inits=[("zero", np.zeros(SHAPE, np.float32))])

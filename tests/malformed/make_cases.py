#!/usr/bin/python3
"""make_cases.py - generate the malformed-input corpus of tests/malformed.

Run with Debian's python3 and onnx 1.12:  /usr/bin/python3 make_cases.py
It (re)writes the *.onnx cases, ext_data.bin and cases.txt in this folder.
The generated files are committed; CI does not run this script.

Each case is a model burncc must reject with one line on stderr containing
the expected substring (cases.txt: file<TAB>substring), see run.sh.
"""
import os
import struct

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT
cases = []   # (file, expected substring)


def model(nodes, inputs=None, outputs=None, inits=(), opset=17, **kw):
    """A model around nodes: input x f32[2,3], output y unless told."""
    if inputs is None:
        inputs = [helper.make_tensor_value_info("x", F, [2, 3])]
    if outputs is None:
        outputs = [helper.make_tensor_value_info("y", F, [2, 3])]
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                             producer_name="burncc-malformed", **kw)


def raw(name, data):
    """Write bytes as a case file."""
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def case(name, m, want):
    """Save model m (or raw bytes) as name and record its expectation."""
    raw(name, m if isinstance(m, bytes) else m.SerializeToString())
    cases.append((name, want))


def tensor(name, dims, vals=None, rawbytes=None):
    t = TensorProto()
    t.name = name
    t.data_type = F
    t.dims.extend(dims)
    if rawbytes is not None:
        t.raw_data = rawbytes
    elif vals is not None:
        t.float_data.extend(vals)
    return t


def external(name, dims, location, offset=None, length=None):
    t = tensor(name, dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    return t


def relu(i="x", o="y", name="r"):
    return helper.make_node("Relu", [i], [o], name=name)


# ---- not a model at all ------------------------------------------------
cases.append(("missing.onnx", "cannot open"))           # never created
case("empty.onnx", b"", "not an ONNX model")
case("text.onnx", b"this is a text file, not an ONNX model\n", "not an ONNX model")
big = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
            inits=[tensor("w", [2, 3], rawbytes=bytes(24))] +
                  [tensor("pad%d" % i, [256], rawbytes=bytes(1024)) for i in range(2)])
b = big.SerializeToString()
case("truncated.onnx", b[:len(b) // 2], "truncated protobuf")

# protobuf nested 3000 levels deep: TypeProto.sequence_type.elem_type...
def nested_type(depth):
    inner = b""
    for _ in range(depth):
        seq = b"\x0a" + enc_len(inner)               # Sequence.elem_type = 1
        inner = b"\x22" + enc_len(seq)               # TypeProto.sequence_type = 4
    return inner

def enc_len(payload):
    n, out = len(payload), b""
    while True:
        byte = n & 0x7f
        n >>= 7
        out += bytes([byte | (0x80 if n else 0)])
        if not n:
            return out + payload

vi = b"\x0a\x01x" + b"\x12" + enc_len(nested_type(3000))   # ValueInfo name, type
graph = b"\x5a" + enc_len(vi)                                # GraphProto.input = 11
case("deep_nesting.onnx", b"\x08\x08" + b"\x42\x04\x0a\x00\x10\x11" +
     b"\x3a" + enc_len(graph), "nested deeper than")

# ---- model level -------------------------------------------------------
case("opset99.onnx", model([relu()], opset=99), "unsupported opset 99")
m = model([relu()])
del m.opset_import[:]
case("no_opset.onnx", m, "imports no ai.onnx opset")
case("unknown_op.onnx", model([helper.make_node("FooBar", ["x"], ["y"], name="foo")]),
     "unknown op 'FooBar'")
case("unknown_domain.onnx",
     model([helper.make_node("FusedMatMul", ["x", "x"], ["y"], name="fmm",
                             domain="com.microsoft")]),
     "unsupported domain 'com.microsoft'")

# ---- graph structure ---------------------------------------------------
case("undefined_input.onnx",
     model([helper.make_node("Add", ["x", "nowhere"], ["y"], name="add")]),
     "input 'nowhere' is not defined")
case("missing_initializer.onnx",
     model([helper.make_node("Gemm", ["x", "W", "B"], ["y"], name="gemm")]),
     "input 'W' is not defined")
case("duplicate_output.onnx",
     model([relu("x", "y", "r1"), relu("x", "y", "r2")]), "duplicate output 'y'")
case("cycle.onnx",
     model([relu("b", "a", "r1"), relu("a", "b", "r2"),
            helper.make_node("Add", ["x", "a"], ["y"], name="add")]),
     "cycle")
case("output_undefined.onnx",
     model([relu()], outputs=[helper.make_tensor_value_info("nope", F, [2, 3])]),
     "graph output 'nope' is not defined")
case("wrong_arity.onnx", model([helper.make_node("Add", ["x"], ["y"], name="add")]),
     "wrong number of inputs")
case("empty_required_input.onnx",
     model([helper.make_node("Add", ["", "x"], ["y"], name="add")]),
     "required input 0 is empty")
case("string_input.onnx",
     model([relu()], inputs=[helper.make_tensor_value_info("x", TensorProto.STRING, [2])]),
     "input 'x' is a string tensor, which Relu does not take")
case("sequence_input.onnx",
     model([relu()], inputs=[helper.make_tensor_sequence_value_info("x", F, [2, 3])]),
     "is a sequence")
sm = helper.make_node("Softmax", ["x"], ["y"], name="sm")
a = sm.attribute.add()
a.name, a.ref_attr_name, a.type = "axis", "my_axis", helper.AttributeProto.INT
case("function_attr.onnx", model([sm]), "refers to function attribute")

# ---- initializers ------------------------------------------------------
add_w = [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
case("negative_dim.onnx", model(add_w, inits=[tensor("w", [-2, 3], rawbytes=bytes(24))]),
     "negative dim")
case("init_size_mismatch.onnx", model(add_w, inits=[tensor("w", [2, 3], rawbytes=bytes(20))]),
     "data size mismatch")
case("init_count_mismatch.onnx", model(add_w, inits=[tensor("w", [2, 3], vals=[1.0] * 5)]),
     "data size mismatch")
case("dim_overflow.onnx", model(add_w, inits=[tensor("w", [1 << 40, 1 << 40])]),
     "element count overflows")
case("huge_tensor.onnx", model(add_w, inits=[tensor("w", [1 << 20, 1 << 20])]),
     "tensor size limit")
case("duplicate_initializer.onnx",
     model(add_w, inits=[tensor("w", [2, 3], rawbytes=bytes(24))] * 2),
     "duplicate initializer 'w'")
raw("ext_data.bin", bytes(range(32)))
case("ext_escape.onnx", model(add_w, inits=[external("w", [2, 3], "../../../../etc/passwd")]),
     "leaves the model's folder")
case("ext_absolute.onnx", model(add_w, inits=[external("w", [2, 3], "/etc/passwd")]),
     "is absolute")
case("ext_out_of_bounds.onnx",
     model(add_w, inits=[external("w", [2, 3], "ext_data.bin", offset=16, length=24)]),
     "outside")
case("ext_missing_file.onnx", model(add_w, inits=[external("w", [2, 3], "no_such.bin")]),
     "cannot open external data")

# ---- rejected by shape inference ---------------------------------------
case("shape_mismatch.onnx",
     model([helper.make_node("Add", ["x", "z"], ["y"], name="add")],
           inputs=[helper.make_tensor_value_info("x", F, [2, 3]),
                   helper.make_tensor_value_info("z", F, [4, 5])]),
     "cannot broadcast")
shape = TensorProto()
shape.name, shape.data_type = "shape", TensorProto.INT64
shape.dims.append(2)
shape.int64_data.extend([4, 5])
case("reshape_bad.onnx",
     model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
           inits=[shape], outputs=[helper.make_tensor_value_info("y", F, [4, 5])]),
     "reshape of 6 elements into 20")

# ---- reliability corpus (issue 4, docs/RELIABILITY.md) ------------------
# A case may carry burncc flags: cases.txt's third column (see run.sh).
def flagged(name, m, want, flags):
    """Like case(), with extra burncc flags."""
    raw(name, m if isinstance(m, bytes) else m.SerializeToString())
    cases.append((name, want, flags))


def chain(n, op="Relu"):
    """x -> op -> op ... -> y, n nodes."""
    names = ["x"] + ["t%d" % i for i in range(n - 1)] + ["y"]
    return [helper.make_node(op, [names[i]], [names[i + 1]], name="n%d" % i)
            for i in range(n)]


def nested_if(depth):
    """Relu nodes whose graph attribute nests depth graphs deep (the loader
    builds every subgraph attribute; If/Loop are not supported ops)."""
    out = helper.make_tensor_value_info("o0", F, [2, 3])
    body = helper.make_graph([relu("x", "o0", "r0")], "b0", [], [out])
    for d in range(1, depth):
        o = helper.make_tensor_value_info("o%d" % d, F, [2, 3])
        node = helper.make_node("Relu", ["x"], ["o%d" % d], name="r%d" % d, body=body)
        body = helper.make_graph([node], "b%d" % d, [], [o])
    return model([helper.make_node("Relu", ["x"], ["y"], name="top", body=body)])


valid = model([relu()]).SerializeToString()

# limits given on the command line; each message names its flag
flagged("limit_file_bytes.onnx", valid, "--max-file-bytes (64)", "--max-file-bytes 64")
flagged("limit_tensor_init.onnx", model(add_w, inits=[tensor("w", [2, 3], rawbytes=bytes(24))]),
        "--max-tensor-bytes (16)", "--max-tensor-bytes 16")
flagged("limit_tensor_value.onnx",
        model([relu()], inputs=[helper.make_tensor_value_info("x", F, [64, 64])],
              outputs=[helper.make_tensor_value_info("y", F, [64, 64])]),
        "--max-tensor-bytes (1000)", "--max-tensor-bytes 1000")
flagged("limit_nodes.onnx", model(chain(5)), "--max-nodes (3)", "--max-nodes 3")
flagged("limit_depth.onnx", nested_if(3), "--max-depth (2)", "--max-depth 2")
case("deep_subgraphs.onnx", nested_if(40), "--max-depth (32)")
case("limit_default_tensor.onnx",
     model([relu()], inputs=[helper.make_tensor_value_info("x", F, [1 << 16, 1 << 15])],
           outputs=[helper.make_tensor_value_info("y", F, [1 << 16, 1 << 15])]),
     "--max-tensor-bytes (1073741824)")

# damaged bytes
case("truncated_1.onnx", valid[:1], "not an ONNX model")
case("truncated_varint.onnx", b"\x08\xff\xff", "not an ONNX model")
case("truncated_last.onnx", valid[:-1], "not an ONNX model")
case("truncated_quarter.onnx", b[:len(b) // 4], "not an ONNX model")
case("zeros.onnx", bytes(1024), "not an ONNX model")
case("random.onnx", bytes((i * 131 + 17) * 2654435761 >> 13 & 255 for i in range(4096)),
     "not an ONNX model")
case("wrong_wire_type.onnx", b"\x0a\x03abc" + valid, "not an ONNX model")
case("huge_length.onnx", b"\x08\x08\x3a\xff\xff\xff\xff\x0f", "not an ONNX model")
case("graph_wire_varint.onnx", b"\x08\x08\x3a\x05", "not an ONNX model")

# shapes of inputs and values
case("input_negative_dim.onnx",
     model([relu()], inputs=[helper.make_tensor_value_info("x", F, [2, -3])]),
     "negative")
case("input_dim_overflow.onnx",
     model([relu()], inputs=[helper.make_tensor_value_info("x", F, [1 << 40, 1 << 40])],
           outputs=[helper.make_tensor_value_info("y", F, [1 << 40, 1 << 40])]),
     "overflows")
case("input_unbound_dim.onnx",
     model([relu()], inputs=[helper.make_tensor_value_info("x", F, ["batch", 3])]),
     "batch")
case("input_complex.onnx",
     model([relu()], inputs=[helper.make_tensor_value_info("x", TensorProto.COMPLEX64, [2])]),
     "not supported")

# graph structure
case("cycle_self.onnx", model([relu("a", "a", "r1"),
                               helper.make_node("Add", ["x", "a"], ["y"], name="add")]),
     "cycle")
case("cycle_three.onnx",
     model([relu("c", "a", "r1"), relu("a", "b", "r2"), relu("b", "c", "r3"),
            helper.make_node("Add", ["x", "a"], ["y"], name="add")]),
     "cycle")
case("duplicate_input.onnx",
     model([relu()], inputs=[helper.make_tensor_value_info("x", F, [2, 3])] * 2),
     "duplicate")
case("output_shadows_input.onnx", model([relu("x", "x", "r1"), relu("x", "y", "r2")]),
     "duplicate output 'x'")
case("no_outputs.onnx", model([relu()], outputs=[]), "no outputs")
case("empty_op_type.onnx", model([helper.make_node("", ["x"], ["y"], name="e")]),
     "without an op type")

# dtypes and shapes that do not match
i64 = TensorProto.INT64
case("dtype_mismatch.onnx",
     model([helper.make_node("Add", ["x", "z"], ["y"], name="add")],
           inputs=[helper.make_tensor_value_info("x", F, [2, 3]),
                   helper.make_tensor_value_info("z", i64, [2, 3])]),
     "dtype")
case("matmul_mismatch.onnx",
     model([helper.make_node("MatMul", ["x", "z"], ["y"], name="mm")],
           inputs=[helper.make_tensor_value_info("x", F, [2, 3]),
                   helper.make_tensor_value_info("z", F, [4, 5])]),
     "matmul")

# absurd attribute values
case("softmax_axis.onnx", model([helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1000)]),
     "axis")
case("transpose_perm.onnx",
     model([helper.make_node("Transpose", ["x"], ["y"], name="tr", perm=[0, 1 << 40])]),
     "perm")
case("concat_axis.onnx",
     model([helper.make_node("Concat", ["x", "x"], ["y"], name="cat", axis=-7)]),
     "axis")
case("cast_to.onnx", model([helper.make_node("Cast", ["x"], ["y"], name="cast", to=999)]),
     "target dtype")
case("conv_stride0.onnx",
     model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv", strides=[0, 0])],
           inputs=[helper.make_tensor_value_info("x", F, [1, 1, 4, 4])],
           inits=[tensor("w", [1, 1, 2, 2], rawbytes=bytes(16))]),
     "stride")
case("conv_kernel_huge.onnx",
     model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv",
                             kernel_shape=[1 << 40, 1 << 40])],
           inputs=[helper.make_tensor_value_info("x", F, [1, 1, 4, 4])],
           inits=[tensor("w", [1, 1, 2, 2], rawbytes=bytes(16))]),
     "kernel")
reshape2 = TensorProto()
reshape2.name, reshape2.data_type = "shape", i64
reshape2.dims.append(2)
reshape2.int64_data.extend([-1, -1])
case("reshape_two_minus1.onnx",
     model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
           inits=[reshape2]),
     "reshape")
expand = TensorProto()
expand.name, expand.data_type = "shape", i64
expand.dims.append(3)
expand.int64_data.extend([1 << 30, 2, 3])
case("expand_huge.onnx",
     model([helper.make_node("Expand", ["x", "shape"], ["y"], name="expand")],
           inits=[expand]),
     "--max-tensor-bytes")
cos = TensorProto()
cos.name, cos.data_type = "shape", i64
cos.dims.append(2)
cos.int64_data.extend([1 << 31, 1 << 31])
case("constantofshape_huge.onnx",
     model([helper.make_node("ConstantOfShape", ["shape"], ["y"], name="cos")],
           inputs=[], inits=[cos]),
     "--max-tensor-bytes")

# initializers
t = tensor("w", [2, 3])
t.data_type = 999
case("init_dtype_999.onnx", model(add_w, inits=[t]), "999")
t = TensorProto()
t.name, t.data_type = "w", i64
t.dims.extend([2, 3])
t.float_data.extend([1.0] * 6)
case("init_wrong_field.onnx", model(add_w, inits=[t]), "data size mismatch")
raw_i64 = TensorProto()
raw_i64.name, raw_i64.data_type, raw_i64.raw_data = "shape", i64, b"\x01" * 12
raw_i64.dims.append(2)
case("init_raw_i64_short.onnx",
     model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
           inits=[raw_i64]),
     "data size mismatch")
# a packed tensor (int4: two elements a byte) whose raw_data is shorter
# than ceil(5 * 4 / 8) = 3 bytes: the error names it and both sizes
xq = TensorProto()
INT4 = 22   # TensorProto.INT4 (onnx 1.16; Debian's 1.12 lacks the name)
xq.name, xq.data_type, xq.raw_data = "xq", INT4, b"\x21\x43"
xq.dims.append(5)
case("init_int4_raw_short.onnx",
     helper.make_model(helper.make_graph(
         [helper.make_node("DequantizeLinear", ["xq", "scale"], ["y"], name="dq")], "g", [],
         [helper.make_tensor_value_info("y", F, [5])],
         initializer=[xq, numpy_helper.from_array(np.array(2.0, np.float32), "scale")]),
         opset_imports=[helper.make_opsetid("", 25)], producer_name="burncc-malformed"),
     "initializer 'xq': data size mismatch: raw_data has 2 bytes, its shape needs 3")
case("ext_empty_location.onnx", model(add_w, inits=[external("w", [2, 3], "")]),
     "external data")
case("ext_negative_offset.onnx",
     model(add_w, inits=[external("w", [2, 3], "ext_data.bin", offset=-8, length=24)]),
     "offset")
case("ext_huge_length.onnx",
     model(add_w, inits=[external("w", [2, 3], "ext_data.bin", offset=0, length=1 << 62)]),
     "length")
case("ext_dir_escape.onnx",
     model(add_w, inits=[external("w", [2, 3], "sub/../../x.bin")]),
     "leaves the model's folder")

# ---- a hostile model must not harm the user (issue 15) -------------------
# control characters from the model are escaped: the message stays one line
case("ctrl_op_type.onnx",
     model([helper.make_node("Foo\nBar\x1b[2J\u009b", ["x"], ["y"], name="n")]),
     r"unknown op 'Foo\nBar\x1b[2J\xc2\x9b'")
case("ctrl_input_name.onnx",
     model([helper.make_node("Add", ["x", "a\tb\rc"], ["y"], name="add")]),
     r"input 'a\tb\rc' is not defined")

# attributes of the wrong type name the attribute, its type and the expected one
def attr_of(node, name, **kw):
    """Add attribute name to node, with the fields given (type included)."""
    a = node.attribute.add()
    a.name = name
    for k, v in kw.items():
        if isinstance(v, list):
            getattr(a, k).extend(v)
        else:
            setattr(a, k, v)
    return node

AP = helper.AttributeProto
case("attr_perm_floats.onnx",
     model([attr_of(helper.make_node("Transpose", ["x"], ["y"], name="tr"), "perm",
                    type=AP.FLOATS, floats=[1.0, 0.0])]),
     "attribute 'perm' is floats, expected ints")
case("attr_kernel_floats.onnx",
     model([attr_of(helper.make_node("MaxPool", ["x"], ["y"], name="mp"), "kernel_shape",
                    type=AP.FLOATS, floats=[2.0, 2.0])],
           inputs=[helper.make_tensor_value_info("x", F, [1, 1, 4, 4])],
           outputs=[helper.make_tensor_value_info("y", F, [1, 1, 3, 3])]),
     "attribute 'kernel_shape' is floats, expected ints")
case("attr_axis_float.onnx",
     model([helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1.5)]),
     "attribute 'axis' is a float, expected an int")
case("attr_mode_int.onnx",
     model([attr_of(helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=2),
                    "mode", type=AP.INT, i=1)],
           inputs=[helper.make_tensor_value_info("x", F, [1, 4, 2, 2])],
           outputs=[helper.make_tensor_value_info("y", F, [1, 1, 4, 4])]),
     "attribute 'mode' is an int, expected a string")
case("attr_cast_to_string.onnx",
     model([helper.make_node("Cast", ["x"], ["y"], name="cast", to="FLOAT")]),
     "attribute 'to' is a string, expected an int")

# old opsets: Reshape-1's shape attribute is understood; Tile-1 is named
case("reshape1_bad.onnx",
     model([helper.make_node("Reshape", ["x"], ["y"], name="reshape", shape=[4, 5])],
           outputs=[helper.make_tensor_value_info("y", F, [4, 5])], opset=1),
     "reshape of 6 elements into 20")
case("reshape1_no_shape.onnx",
     model([helper.make_node("Reshape", ["x"], ["y"], name="reshape")], opset=4),
     "needs the attribute 'shape'")
case("reshape1_shape_floats.onnx",
     model([attr_of(helper.make_node("Reshape", ["x"], ["y"], name="reshape"), "shape",
                    type=AP.FLOATS, floats=[3.0, 2.0])], opset=4),
     "attribute 'shape' is floats, expected ints")
case("tile1.onnx",
     model([helper.make_node("Tile", ["x", "t", "a"], ["y"], name="tile")],
           inputs=[helper.make_tensor_value_info("x", F, [2, 3]),
                   helper.make_tensor_value_info("t", i64, [1]),
                   helper.make_tensor_value_info("a", i64, [1])], opset=5),
     "Tile before opset 6")

# declared output types must agree with the computed ones
case("output_dtype.onnx",
     model([relu()], outputs=[helper.make_tensor_value_info("y", i64, [2, 3])]),
     "graph output 'y' is declared i64[2,3], computed f32[2,3]")
case("output_shape.onnx",
     model([relu()], outputs=[helper.make_tensor_value_info("y", F, [3, 2])]),
     "graph output 'y' is declared f32[3,2], computed f32[2,3]")
case("output_rank.onnx",
     model([relu()], outputs=[helper.make_tensor_value_info("y", F, [6])]),
     "graph output 'y' is declared f32[6], computed f32[2,3]")

# --dim that names no symbolic dim of the model
flagged("dim_unknown.onnx",
        model([relu()], inputs=[helper.make_tensor_value_info("x", F, ["batch", 3])],
              outputs=[helper.make_tensor_value_info("y", F, ["batch", 3])]),
        "--dim nope: no input of the model has a symbolic dim of that name",
        "--dim batch=2 --dim nope=3")

# ---- models the command-line tests of driver.sh use (not cases) --------
raw("ok_relu.onnx", valid)
# symbolic, unknown and missing output declarations are not errors
raw("ok_output_decl.onnx",
    model([relu(), relu("x", "z", "r2"), relu("x", "w", "r3")],
          inputs=[helper.make_tensor_value_info("x", F, ["batch", 3])],
          outputs=[helper.make_tensor_value_info("y", F, ["n", None]),
                   helper.make_tensor_value_info("z", F, None),
                   helper.make_tensor_value_info("w", 0, None)]).SerializeToString())
# external data in a file named like an output's header (w.h for -o w.c)
raw("ok_ext.h", bytes(24))
raw("ok_ext.onnx", model(add_w, inits=[external("w", [2, 3], "ok_ext.h")]).SerializeToString())
# names that would end a C comment and put code into the generated C
inj = "w */ int pwned = 1; /*"
# and trigraphs ("??/" is a backslash in C99) that would swallow a quote
raw("ok_comment_inject.onnx",
    model([helper.make_node("Add", ["x??/", inj], ["y\x01\x01/"], name="n */ int pwned2; /*")],
          inputs=[helper.make_tensor_value_info("x??/", F, [2, 3])],
          outputs=[helper.make_tensor_value_info("y\x01\x01/", F, [2, 3])],
          inits=[tensor(inj, [2, 3], rawbytes=bytes(24))]).SerializeToString())
# external data that driver.sh makes a FIFO
raw("ext_fifo.onnx", model(add_w, inits=[external("w", [2, 3], "fifo.bin")]).SerializeToString())


# cases for `burncc check` (driver.sh): each folder holds node-test cases
def check_case(folder, name, m, ins, outs):
    d = os.path.join(HERE, folder, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    raw(os.path.join(folder, name, "model.onnx"), m.SerializeToString())
    for kind, ts in (("input", ins), ("output", outs)):
        for k, t in enumerate(ts):
            data = t if isinstance(t, bytes) else numpy_helper.from_array(t).SerializeToString()
            raw(os.path.join(folder, name, "test_data_set_0", "%s_%d.pb" % (kind, k)), data)


x23 = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
# the old forms before opset 10/11 that take attributes for today's inputs
check_case("old_forms", "reshape1",
           model([helper.make_node("Reshape", ["x"], ["y"], name="r", shape=[3, 2])],
                 outputs=[helper.make_tensor_value_info("y", F, [3, 2])], opset=1),
           [x23], [x23.reshape(3, 2)])
check_case("old_forms", "slice1",
           model([helper.make_node("Slice", ["x"], ["y"], name="s", starts=[0, 1],
                                   ends=[1, 3], axes=[0, 1])],
                 outputs=[helper.make_tensor_value_info("y", F, [1, 2])], opset=9),
           [x23], [x23[0:1, 1:3]])
check_case("old_forms", "topk1",
           model([helper.make_node("TopK", ["x"], ["v", "i"], name="t", k=2)],
                 outputs=[helper.make_tensor_value_info("v", F, [2, 2]),
                          helper.make_tensor_value_info("i", i64, [2, 2])], opset=9),
           [x23], [-np.sort(-x23, axis=1)[:, :2], np.argsort(-x23, axis=1)[:, :2]])
check_case("old_forms", "pad2",
           model([helper.make_node("Pad", ["x"], ["y"], name="p", pads=[0, 1, 1, 0],
                                   value=7.0)],
                 outputs=[helper.make_tensor_value_info("y", F, [3, 4])], opset=2),
           [x23], [np.pad(x23, ((0, 1), (1, 0)), constant_values=7.0)])
# a broken input_0.pb: check names that file, not model.onnx
check_case("check_broken", "relu", model([relu()]), [b"\xff\xff\xff"], [np.maximum(x23, 0)])


# ---- control flow (passes/ctrlflow.c) ------------------------------------
B = TensorProto.BOOL
vi = helper.make_tensor_value_info


def i64_init(name, v):
    return numpy_helper.from_array(np.array(v, dtype=np.int64), name)


def loop_model(m_init=None, m_input=False):
    """Loop y <- y + x, trip count M an initializer or a graph input."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"], name="bc"),
         helper.make_node("Add", ["y_in", "x"], ["y_out"], name="badd")],
        "body", [vi("i", i64, []), vi("c_in", B, []), vi("y_in", F, [2, 3])],
        [vi("c_out", B, []), vi("y_out", F, [2, 3])])
    ins = [vi("x", F, [2, 3])] + ([vi("M", i64, [])] if m_input else [])
    inits = [i64_init("M", m_init)] if m_init is not None else []
    return model([helper.make_node("Loop", ["M", "", "x"], ["y"], name="loop",
                                   body=body)], inputs=ins, inits=inits)


case("cf_loop_negative.onnx", loop_model(-1), "node 'loop' (Loop): the trip count is -1")
case("cf_loop_huge.onnx", loop_model(1 << 40), "at most 65536 iterations")
case("cf_loop_runtime.onnx", loop_model(m_input=True), "the trip count ('M') must be a constant")
# loops nested in loops, bodies with no nodes: the copies are counted over
# the whole graph, so this ends at once instead of after 60000^2 copies
inner = helper.make_graph(
    [], "inner", [vi("j", i64, []), vi("d_in", B, []), vi("z_in", F, [2, 3])],
    [vi("d_in", B, []), vi("z_in", F, [2, 3])])
outer = helper.make_graph(
    [helper.make_node("Loop", ["N", "", "y_in"], ["y_out"], name="inner", body=inner),
     helper.make_node("Identity", ["c_in"], ["c_out"], name="oc")],
    "outer", [vi("i", i64, []), vi("c_in", B, []), vi("y_in", F, [2, 3])],
    [vi("c_out", B, []), vi("y_out", F, [2, 3])])
case("cf_loop_nested.onnx",
     model([helper.make_node("Loop", ["N", "", "x"], ["y"], name="outer", body=outer)],
           inits=[i64_init("N", 60000)]),
     "more than 65536 copies of subgraphs")
then_b = helper.make_graph([relu("nowhere", "t0", "tr")], "then", [], [vi("t0", F, [2, 3])])
else_b = helper.make_graph([relu("x", "e0", "er")], "else", [], [vi("e0", F, [2, 3])])
case("cf_undefined_name.onnx",
     model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_b,
                             else_branch=else_b)],
           inputs=[vi("x", F, [2, 3]), vi("c", B, [])]),
     "input 'nowhere' is not defined")
then2 = helper.make_graph([relu("x", "t0", "tr"), relu("x", "t1", "tr1")], "then", [],
                          [vi("t0", F, [2, 3]), vi("t1", F, [2, 3])])
case("cf_if_outputs.onnx",
     model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=then2,
                             else_branch=else_b)],
           inputs=[vi("x", F, [2, 3]), vi("c", B, [])]),
     "node 'if' (If): the then branch has 0 inputs and 2 outputs; the If has 1 outputs")
then_s = helper.make_graph([relu("x", "t0", "tr"),
                            helper.make_node("Concat", ["t0", "t0"], ["t1"], name="tc", axis=0)],
                           "then", [], [vi("t1", F, [4, 3])])
case("cf_if_types.onnx",
     model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_s,
                             else_branch=else_b)],
           inputs=[vi("x", F, [2, 3]), vi("c", B, [])]),
     "output 0 is f32[4,3] in the then branch and f32[2,3] in the else branch")

# control flow that runs: burncc check against NumPy's results
w23 = (np.arange(6, dtype=np.float32).reshape(2, 3) - 1.0) / 4
body = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"], name="bc"),
     helper.make_node("Mul", ["y_in", "w"], ["t"], name="bmul"),
     helper.make_node("Add", ["t", "x"], ["y_out"], name="badd"),
     helper.make_node("Relu", ["y_out"], ["s"], name="brelu")],
    "body", [vi("i", i64, []), vi("c_in", B, []), vi("y_in", F, [2, 3])],
    [vi("c_out", B, []), vi("y_out", F, [2, 3]), vi("s", F, [2, 3])])
ys, y = [], x23.copy()
for _ in range(3):
    y = y * w23 + x23
    ys.append(np.maximum(y, 0))
check_case("control_flow", "loop_carried",
           model([helper.make_node("Loop", ["M", "", "x"], ["y", "ys"], name="loop", body=body)],
                 outputs=[vi("y", F, [2, 3]), vi("ys", F, [3, 2, 3])],
                 inits=[i64_init("M", 3), numpy_helper.from_array(w23, "w")]),
           [x23], [y, np.stack(ys)])
# an If inside a Loop body, its condition from the iteration number (folds),
# its branches reading the body's carried value (nested outer scope)
two = numpy_helper.from_array(np.array(2, dtype=np.int64), "two")
then_b = helper.make_graph([helper.make_node("Add", ["y_in", "y_in"], ["a"], name="ta")],
                           "then", [], [vi("a", F, [2, 3])])
else_b = helper.make_graph([helper.make_node("Sub", ["y_in", "x"], ["b"], name="eb")],
                           "else", [], [vi("b", F, [2, 3])])
body = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"], name="bc"),
     helper.make_node("Less", ["i", "two"], ["lt"], name="blt"),
     helper.make_node("If", ["lt"], ["y_out"], name="bif", then_branch=then_b,
                      else_branch=else_b)],
    "body", [vi("i", i64, []), vi("c_in", B, []), vi("y_in", F, [2, 3])],
    [vi("c_out", B, []), vi("y_out", F, [2, 3])], initializer=[two])
y = x23.copy()
for i in range(4):
    y = y + y if i < 2 else y - x23
check_case("control_flow", "if_in_loop",
           model([helper.make_node("Loop", ["M", "", "x"], ["y"], name="loop", body=body)],
                 inits=[i64_init("M", 4)]),
           [x23], [y])
# an If whose condition is known only at run time: both branches, a select
then_b = helper.make_graph([relu("x", "a", "tr")], "then", [], [vi("a", F, [2, 3])])
else_b = helper.make_graph([helper.make_node("Neg", ["x"], ["b"], name="en")],
                           "else", [], [vi("b", F, [2, 3])])
ifm = model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_b,
                              else_branch=else_b)],
            inputs=[vi("x", F, [2, 3]), vi("c", B, [])])
check_case("control_flow", "if_runtime_true", ifm, [x23, np.array(True)], [np.maximum(x23, 0)])
check_case("control_flow", "if_runtime_false", ifm, [x23, np.array(False)], [-x23])
# a run-time If whose branches are kernels of their own (MatMuls): the
# launch list guards them with the condition, so only the taken one runs
w34 = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 7
then_b = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["a"], name="tmm")],
                           "then", [], [vi("a", F, [2, 4])])
else_b = helper.make_graph([helper.make_node("Neg", ["x"], ["nx"], name="en"),
                            helper.make_node("MatMul", ["nx", "w"], ["b0"], name="emm"),
                            helper.make_node("Relu", ["b0"], ["b"], name="er")],
                           "else", [], [vi("b", F, [2, 4])])
ifm = model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_b,
                              else_branch=else_b)],
            inputs=[vi("x", F, [2, 3]), vi("c", B, [])],
            outputs=[vi("y", F, [2, 4])], inits=[numpy_helper.from_array(w34, "w")])
check_case("control_flow", "if_guarded_true", ifm, [x23, np.array(True)], [x23 @ w34])
check_case("control_flow", "if_guarded_false", ifm, [x23, np.array(False)],
           [np.maximum(-x23 @ w34, 0)])
# Scan-9 over axis 1 backwards, its scan output along axis 1
x34 = np.arange(12, dtype=np.float32).reshape(3, 4) / 3 - 1
body = helper.make_graph(
    [helper.make_node("Add", ["s_in", "xt"], ["s_out"], name="badd"),
     helper.make_node("Mul", ["s_out", "s_out"], ["sq"], name="bsq")],
    "body", [vi("s_in", F, [3]), vi("xt", F, [3])],
    [vi("s_out", F, [3]), vi("sq", F, [3])])
s, sq = np.zeros(3, np.float32), []
for t in reversed(range(4)):
    s = s + x34[:, t]
    sq.append(s * s)
check_case("control_flow", "scan_reverse",
           model([helper.make_node("Scan", ["s0", "x"], ["s", "sq"], name="scan", body=body,
                                   num_scan_inputs=1, scan_input_axes=[1],
                                   scan_input_directions=[1], scan_output_axes=[1])],
                 inputs=[vi("s0", F, [3]), vi("x", F, [3, 4])],
                 outputs=[vi("s", F, [3]), vi("sq", F, [3, 4])], opset=11),
           [np.zeros(3, np.float32), x34], [s, np.stack(sq, axis=1)])
# Scan-8: batch axis 0 (2 items), sequence axis 1 scanned backwards
x243 = np.arange(24, dtype=np.float32).reshape(2, 4, 3) / 5 - 2
body = helper.make_graph(
    [helper.make_node("Add", ["s_in", "xt"], ["s_out"], name="badd"),
     helper.make_node("Abs", ["s_out"], ["a"], name="babs")],
    "body", [vi("s_in", F, [3]), vi("xt", F, [3])],
    [vi("s_out", F, [3]), vi("a", F, [3])])
fin8, outs8 = [], []
for b in range(2):
    s8, a8 = np.ones(3, np.float32) * (b + 1), []
    for t in reversed(range(4)):
        s8 = s8 + x243[b, t]
        a8.append(np.abs(s8))   # scan outputs in iteration order
    fin8.append(s8)
    outs8.append(np.stack(a8))
check_case("control_flow", "scan8_batch",
           model([helper.make_node("Scan", ["", "s0", "x"], ["s", "a"], name="scan", body=body,
                                   num_scan_inputs=1, directions=[1])],
                 inputs=[vi("s0", F, [2, 3]), vi("x", F, [2, 4, 3])],
                 outputs=[vi("s", F, [2, 3]), vi("a", F, [2, 4, 3])], opset=8),
           [np.array([[1, 1, 1], [2, 2, 2]], np.float32), x243],
           [np.stack(fin8), np.stack(outs8)])
# a Loop in a Loop body: the inner body reads the outer body's value (one
# level up) and the graph's input (two levels up)
inner = helper.make_graph(
    [helper.make_node("Identity", ["d_in"], ["d_out"], name="ic"),
     helper.make_node("Mul", ["z_in", "half"], ["zh"], name="imul"),
     helper.make_node("Add", ["zh", "o"], ["zo"], name="iadd"),
     helper.make_node("Sub", ["zo", "x"], ["z_out"], name="isub")],
    "inner", [vi("j", i64, []), vi("d_in", B, []), vi("z_in", F, [2, 3])],
    [vi("d_out", B, []), vi("z_out", F, [2, 3])])
outer = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"], name="oc"),
     helper.make_node("Neg", ["y_in"], ["o"], name="oneg"),
     helper.make_node("Loop", ["N", "", "y_in"], ["y_out"], name="inner", body=inner)],
    "outer", [vi("i", i64, []), vi("c_in", B, []), vi("y_in", F, [2, 3])],
    [vi("c_out", B, []), vi("y_out", F, [2, 3])],
    initializer=[numpy_helper.from_array(np.array(0.5, np.float32), "half")])
y = x23.copy()
for i in range(3):
    o, z = -y, y
    for j in range(2):
        z = z * 0.5 + o - x23
    y = z
check_case("control_flow", "loop_in_loop",
           model([helper.make_node("Loop", ["M", "", "x"], ["y"], name="outer", body=outer)],
                 inits=[i64_init("M", 3), i64_init("N", 2)]),
           [x23], [y])

# sequences and optionals, resolved at compile time: a position out of
# range and the element of an empty optional are refused, naming the node
case("seq_at_range.onnx",
     model([helper.make_node("SequenceConstruct", ["x", "x"], ["s"], name="mk"),
            helper.make_node("SequenceAt", ["s", "p"], ["y"], name="at")],
           inits=[i64_init("p", 2)]),
     "node 'at' (SequenceAt): position 2 is out of range for a sequence of 2 tensors")
case("seq_insert_range.onnx",
     model([helper.make_node("SequenceConstruct", ["x"], ["s"], name="mk"),
            helper.make_node("SequenceInsert", ["s", "x", "p"], ["t"], name="ins"),
            helper.make_node("SequenceAt", ["t", "z"], ["y"], name="at")],
           inits=[i64_init("p", -3), i64_init("z", 0)]),
     "node 'ins' (SequenceInsert): position -3 is out of range for a sequence of 1 tensors")
case("opt_get_empty.onnx",
     model([helper.make_node("Optional", [], ["o"], name="none",
                             type=helper.make_tensor_type_proto(F, [2, 3])),
            helper.make_node("OptionalGetElement", ["o"], ["y"], name="get")],
           opset=18),
     "node 'get' (OptionalGetElement): the optional ('o') is empty")
case("seq_runtime_pos.onnx",
     model([helper.make_node("SequenceConstruct", ["x", "x"], ["s"], name="mk"),
            helper.make_node("SequenceAt", ["s", "p"], ["y"], name="at")],
           inputs=[vi("x", F, [2, 3]), vi("p", i64, [])]),
     "node 'at' (SequenceAt): the position ('p') must be a constant")
case("seq_input_runtime.onnx",
     model([helper.make_node("SequenceAt", ["s", "z"], ["y"], name="at")],
           inputs=[helper.make_tensor_sequence_value_info("s", F, [2, 3])],
           inits=[i64_init("z", 0)]),
     "input 's' is a sequence: its length is known only at run time")
case("seq_to_tensor_op.onnx",
     model([helper.make_node("SequenceConstruct", ["x"], ["s"], name="mk"),
            helper.make_node("Relu", ["s"], ["y"], name="relu")]),
     "node 'relu' (Relu): input 's' is a sequence; Relu takes tensors")

# sequences that run: a sequence input bound from its SequenceProto (two
# tensors), a Loop appending y*i to a sequence (compile-time list carried
# from copy to copy), ConcatFromSequence, SplitToSequence to a sequence
# output (one output per element), SequenceAt with a negative position
sbody = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"], name="bc"),
     helper.make_node("Cast", ["i"], ["fi"], name="bcast", to=F),
     helper.make_node("Mul", ["x", "fi"], ["xi"], name="bmul"),
     helper.make_node("SequenceInsert", ["s_in", "xi"], ["s_out"], name="bins")],
    "body", [vi("i", i64, []), vi("c_in", B, []),
             helper.make_tensor_sequence_value_info("s_in", F, [2, 3])],
    [vi("c_out", B, []), helper.make_tensor_sequence_value_info("s_out", F, [2, 3])])
seq_in = [x23 + 1, x23 * 2]
cat = np.concatenate([x23 * i for i in range(3)], axis=0)
check_case("control_flow", "seq_loop",
           model([helper.make_node("SequenceEmpty", [], ["e"], name="empty", dtype=F),
                  helper.make_node("Loop", ["M", "", "e"], ["s"], name="loop", body=sbody),
                  helper.make_node("ConcatFromSequence", ["s"], ["cat"], name="cat", axis=0),
                  helper.make_node("SplitToSequence", ["cat", "two"], ["parts"], name="split",
                                   axis=1),
                  helper.make_node("SequenceAt", ["q", "m1"], ["last"], name="at")],
                 inputs=[vi("x", F, [2, 3]),
                         helper.make_tensor_sequence_value_info("q", F, [2, 3])],
                 outputs=[vi("cat", F, [6, 3]),
                          helper.make_tensor_sequence_value_info("parts", F, None),
                          vi("last", F, [2, 3])],
                 inits=[i64_init("M", 3), i64_init("two", 2), i64_init("m1", -1)]),
           [x23, numpy_helper.from_list(seq_in).SerializeToString()],
           [cat, numpy_helper.from_list([cat[:, 0:2], cat[:, 2:3]]).SerializeToString(),
            seq_in[-1]])

# SequenceErase (default: the last, and position 1), ConcatFromSequence
# with new_axis = 1 on axis -1 (a stack), SequenceLength, Optional and
# OptionalHasElement
check_case("control_flow", "seq_ops",
           model([helper.make_node("Neg", ["x"], ["nx"], name="neg"),
                  helper.make_node("Abs", ["x"], ["ax"], name="abs"),
                  helper.make_node("SequenceConstruct", ["x", "nx", "ax", "x"], ["s"],
                                   name="mk"),
                  helper.make_node("SequenceErase", ["s"], ["s1"], name="erase_last"),
                  helper.make_node("SequenceErase", ["s1", "one"], ["s2"], name="erase1"),
                  helper.make_node("ConcatFromSequence", ["s2"], ["st"], name="stack",
                                   axis=-1, new_axis=1),
                  helper.make_node("SequenceLength", ["s2"], ["n"], name="len"),
                  helper.make_node("Optional", ["x"], ["o"], name="opt"),
                  helper.make_node("OptionalHasElement", ["o"], ["h"], name="has")],
                 outputs=[vi("st", F, [2, 3, 2]), vi("n", i64, []), vi("h", B, [])],
                 inits=[i64_init("one", 1)], opset=18),
           [x23], [np.stack([x23, np.abs(x23)], axis=-1), np.array(2, np.int64),
                   np.array(True)])

# ---- function and signal ops (passes/ops_func.c, passes/ops_signal.c) ---
# sizes and shapes that do not fit the op are errors naming the value
def causal(ins, inputs, act=None, w=(4, 1, 3)):
    kw = {"activation": act} if act else {}
    return model([helper.make_node("CausalConvWithState", ins, ["y", "s"], name="cc", **kw)],
                 inputs=[vi("x", F, [2, 4, 8])] + inputs,
                 outputs=[vi("y", F, [2, 4, 8]), vi("s", F, None)],
                 inits=[tensor("w", list(w), [0.5] * int(np.prod(w)))], opset=27)


case("causal_conv_weight.onnx", causal(["x", "w"], [], w=(4, 2, 3)),
     "node 'cc' (CausalConvWithState): weight 'w' is f32[4,2,3]")
case("causal_conv_past.onnx", causal(["x", "w", "", "p"], [vi("p", F, [2, 4, 5])]),
     "past_state 'p' is f32[2,4,5]: f32[2,4,2] expected")
case("causal_conv_activation.onnx", causal(["x", "w"], [], act="gelu"),
     "activation 'gelu': none, silu or swish expected")



def linatt(ins, inputs, **kw):
    return model([helper.make_node("LinearAttention", ins, ["y", "s"], name="la", **kw)],
                 inputs=[vi("q", F, [2, 4, 32]), vi("k", F, [2, 4, 32]),
                         vi("v", F, [2, 4, 32])] + inputs,
                 outputs=[vi("y", F, None), vi("s", F, None)], opset=27)


case("linatt_heads.onnx", linatt(["q", "k", "v"], [], q_num_heads=3, kv_num_heads=2,
                                 update_rule="linear"),
     "node 'la' (LinearAttention): q_num_heads 3 and kv_num_heads 2")
case("linatt_rule.onnx", linatt(["q", "k", "v"], [], q_num_heads=4, kv_num_heads=4,
                                update_rule="mamba"),
     "update_rule 'mamba': linear, gated, delta or gated_delta expected")
case("linatt_no_decay.onnx", linatt(["q", "k", "v"], [], q_num_heads=4, kv_num_heads=4),
     "update_rule 'gated_delta' needs decay")
case("linatt_decay_shape.onnx", linatt(["q", "k", "v", "", "d"], [vi("d", F, [2, 4, 7])],
                                       q_num_heads=4, kv_num_heads=4, update_rule="gated"),
     "decay 'd' is f32[2,4,7]")



def dft(inits, attrs=None, opset=20, ins=("x", "n", "a")):
    return model([helper.make_node("DFT", list(ins), ["y"], name="dft", **(attrs or {}))],
                 inputs=[vi("x", F, [1, 10, 1])], outputs=[vi("y", F, None)],
                 inits=inits, opset=opset)


case("dft_axis.onnx", dft([i64_init("n", 10), i64_init("a", 2)]),
     "node 'dft' (DFT): axis 2 is out of range for a signal of rank 3")
case("dft_axis_last.onnx", dft([], {"axis": -1}, opset=19, ins=("x",)),
     "axis -1 is out of range")
case("dft_length_zero.onnx", dft([i64_init("n", 0), i64_init("a", 1)]),
     "dft_length 0: 1 .. 16777216 expected")
case("dft_length_huge.onnx", dft([i64_init("n", 1 << 40), i64_init("a", 1)]),
     "dft_length 1099511627776: 1 .. 16777216 expected")
case("dft_length_runtime.onnx",
     model([helper.make_node("DFT", ["x", "n"], ["y"], name="dft")],
           inputs=[vi("x", F, [1, 10, 1]), vi("n", i64, [])],
           outputs=[vi("y", F, None)], opset=20),
     "input 1 ('n') must be a constant")


def stft(step, length, sig=(1, 16, 1)):
    return model([helper.make_node("STFT", ["x", "s", "", "l"], ["y"], name="stft")],
                 inputs=[vi("x", F, list(sig))], outputs=[vi("y", F, None)],
                 inits=[i64_init("s", step), i64_init("l", length)], opset=17)


case("stft_step.onnx", stft(0, 8), "node 'stft' (STFT): frame_step 0: positive expected")
case("stft_frame_long.onnx", stft(4, 32), "the frame length 32 is longer than the signal (16)")
case("stft_frame_negative.onnx", stft(4, -3), "the frame length -3: 1 .. 16777216 expected")



def one_node(op, ins, inputs, inits, opset=17, domain=None, outs=("y",), **kw):
    opsets = [helper.make_opsetid("", opset)]
    if domain:
        opsets.append(helper.make_opsetid(domain, 1))
    g = helper.make_graph([helper.make_node(op, ins, list(outs), name="n", domain=domain,
                                            **kw)],
                          "g", inputs, [vi(o, F, None) for o in outs], initializer=inits)
    return helper.make_model(g, opset_imports=opsets, producer_name="burncc-malformed")


def i32_init(name, v):
    return numpy_helper.from_array(np.array(v, dtype=np.int32), name)


case("window_negative.onnx", one_node("HannWindow", ["s"], [], [i32_init("s", -4)]),
     "node 'n' (HannWindow): the size is -4: 0 .. 16777216 expected")
case("window_huge.onnx", one_node("BlackmanWindow", ["s"], [], [i64_init("s", 1 << 40)]),
     "the size is 1099511627776: 0 .. 16777216 expected")
case("window_runtime.onnx", one_node("HammingWindow", ["s"], [vi("s", i64, [])], []),
     "the size ('s') must be a constant")
case("mel_nyquist.onnx",
     one_node("MelWeightMatrix", ["m", "l", "r", "lo", "hi"], [],
              [i32_init("m", 8), i32_init("l", 16), i32_init("r", 8192),
               numpy_helper.from_array(np.array(0, np.float32), "lo"),
               numpy_helper.from_array(np.array(16000, np.float32), "hi")]),
     "outside the 9 bins of dft_length 16")
case("compress_beyond.onnx",
     one_node("Compress", ["x", "c"], [vi("x", F, [2, 3])],
              [numpy_helper.from_array(np.array([0, 0, 0, 1], bool), "c")], axis=1),
     "node 'n' (Compress): the condition ('c') selects position 3 of an axis of 3")
case("compress_runtime.onnx",
     one_node("Compress", ["x", "c"], [vi("x", F, [2, 3]), vi("c", B, [3])], [], axis=1),
     "the condition ('c') must be a constant")
case("affine_grid_size.onnx",
     one_node("AffineGrid", ["t", "s"], [vi("t", F, [1, 2, 3])], [i64_init("s", [1, 1, -5, 4])],
              opset=20),
     "node 'n' (AffineGrid): size[2] is -5")
case("affine_grid_theta.onnx",
     one_node("AffineGrid", ["t", "s"], [vi("t", F, [1, 3, 4])], [i64_init("s", [1, 1, 5, 4])],
              opset=20),
     "theta 't' is f32[1,3,4]: float [1,2,3] expected")
case("flex_heads.onnx",
     one_node("FlexAttention", ["q", "k", "v"],
              [vi("q", F, [1, 3, 4, 8]), vi("k", F, [1, 2, 4, 8]), vi("v", F, [1, 2, 4, 8])],
              [], opset=26, domain="ai.onnx.preview"),
     "node 'n' (FlexAttention): Q f32[1,3,4,8], K f32[1,2,4,8]")
case("flex_default_domain.onnx",
     one_node("FlexAttention", ["q", "k", "v"],
              [vi("q", F, [1, 2, 4, 8]), vi("k", F, [1, 2, 4, 8]), vi("v", F, [1, 2, 4, 8])],
              [], opset=26),
     "op 'FlexAttention' is in domain 'ai.onnx.preview', not the default one")
case("adam_inputs.onnx",
     helper.make_model(helper.make_graph(
         [helper.make_node("Adam", ["r", "t", "x", "g", "v", "h", "x"], ["x1", "v1", "h1"],
                           name="n", domain="ai.onnx.preview.training")],
         "g", [vi("r", F, []), vi("t", i64, []), vi("x", F, [2]), vi("g", F, [2]),
               vi("v", F, [2]), vi("h", F, [2])],
         [vi(o, F, None) for o in ("x1", "v1", "h1")]),
         opset_imports=[helper.make_opsetid("ai.onnx.preview.training", 1)]),
     "node 'n' (Adam): 7 inputs and 3 outputs: R, T and N tensors of each of the 4 kinds")
case("momentum_mode.onnx",
     helper.make_model(helper.make_graph(
         [helper.make_node("Momentum", ["r", "t", "x", "g", "v"], ["x1", "v1"], name="n",
                           domain="ai.onnx.preview.training", mode="heavy", alpha=0.9,
                           beta=0.1, norm_coefficient=0.0)],
         "g", [vi("r", F, []), vi("t", i64, []), vi("x", F, [2]), vi("g", F, [2]),
               vi("v", F, [2])],
         [vi(o, F, None) for o in ("x1", "v1")]),
         opset_imports=[helper.make_opsetid("ai.onnx.preview.training", 1)]),
     "mode 'heavy': standard or nesterov expected")



def tfidf(**kw):
    a = dict(max_gram_length=2, min_gram_length=1, max_skip_count=0, mode="TF",
             ngram_counts=[0, 2], ngram_indexes=[0, 1, 2], pool_int64s=[2, 3, 5, 6])
    a.update(kw)
    return one_node("TfIdfVectorizer", ["x"], [vi("x", i64, [2, 6])], [], opset=9, **a)


case("tfidf_index.onnx", tfidf(ngram_indexes=[0, -1, 2]),
     "node 'n' (TfIdfVectorizer): ngram_indexes[1] is -1")
case("tfidf_counts.onnx", tfidf(ngram_counts=[0, 9]),
     "ngram_counts: pool[0 .. 9) is not grams of 1 in a pool of 4")
case("tfidf_pool.onnx", tfidf(pool_int64s=[2, 3, 5, 6, 7, 8]),
     "the pool holds 4 grams and ngram_indexes 3")
case("tfidf_mode.onnx", tfidf(mode="BM25"), "mode 'BM25': TF, IDF or TFIDF expected")
case("tfidf_lengths.onnx", tfidf(min_gram_length=3, max_gram_length=2),
     "gram lengths 3 .. 2 and max_skip_count 0")


case("det_square.onnx", one_node("Det", ["x"], [vi("x", F, [2, 3, 4])], [], opset=11),
     "node 'n' (Det): input 'x' is f32[2,3,4]: float [..., n, n] expected")
case("tensor_scatter_update.onnx",
     one_node("TensorScatter", ["p", "u", "w"],
              [vi("p", F, [2, 4, 5]), vi("u", F, [2, 6, 5]), vi("w", i64, [2])], [], opset=24),
     "node 'n' (TensorScatter): update f32[2,6,5] does not fit past_cache f32[2,4,5] along dim 1")
case("tensor_scatter_mode.onnx",
     one_node("TensorScatter", ["p", "u"], [vi("p", F, [2, 4, 5]), vi("u", F, [2, 1, 5])], [],
              opset=24, mode="ring"),
     "mode 'ring': linear or circular expected")

case("maxunpool_shape.onnx",
     one_node("MaxUnpool", ["x", "i", "s"], [vi("x", F, [1, 1, 2, 2]), vi("i", i64, [1, 1, 2, 2])],
              [i64_init("s", [1, 2, 5, 5])], opset=11, kernel_shape=[2, 2], strides=[2, 2]),
     "node 'n' (MaxUnpool): output_shape[1] is 2: X's expected")
case("roialign_mode.onnx",
     one_node("RoiAlign", ["x", "r", "b"], [vi("x", F, [1, 1, 4, 4]), vi("r", F, [2, 4]),
                                          vi("b", i64, [2])], [], opset=16, mode="median"),
     "node 'n' (RoiAlign): mode 'median': avg or max expected")
case("deform_conv_offset.onnx",
     one_node("DeformConv", ["x", "w", "o"], [vi("x", F, [1, 1, 3, 3]), vi("w", F, [1, 1, 2, 2]),
                                              vi("o", F, [1, 4, 2, 2])], [], opset=19),
     "node 'n' (DeformConv): offset f32[1,4,2,2]: [1,8,2,2] expected")

# shapes that depend on values: the input must be a constant
case("nonzero_runtime.onnx", one_node("NonZero", ["x"], [vi("x", F, [2, 3])], [], opset=13),
     "node 'n' (NonZero): input 0 ('x') must be a constant: the output's shape depends on its values")
case("nms_shape.onnx",
     one_node("NonMaxSuppression", ["b", "s"], [],
              [numpy_helper.from_array(np.zeros((1, 3, 4), np.float32), "b"),
               numpy_helper.from_array(np.zeros((1, 1, 2), np.float32), "s")], opset=11),
     "boxes f32[1,3,4] and scores f32[1,1,2]: [B, N, 4] and [B, C, N] floats expected")



def tree(**kw):
    a = dict(aggregate_function=1, n_targets=2, leaf_targetids=[0, 1],
             leaf_weights=numpy_helper.from_array(np.array([1, 2], np.float32), "lw"),
             nodes_featureids=[0], nodes_modes=numpy_helper.from_array(np.array([0], np.uint8), "m"),
             nodes_splits=numpy_helper.from_array(np.array([0.5], np.float32), "s"),
             nodes_truenodeids=[0], nodes_trueleafs=[1], nodes_falsenodeids=[1],
             nodes_falseleafs=[1], post_transform=0, tree_roots=[0])
    a.update(kw)
    return helper.make_model(helper.make_graph(
        [helper.make_node("TreeEnsemble", ["x"], ["y"], name="n", domain="ai.onnx.ml", **a)],
        "g", [vi("x", F, [3, 2])], [vi("y", F, None)]),
        opset_imports=[helper.make_opsetid("ai.onnx.ml", 5)])


case("tree_feature.onnx", tree(nodes_featureids=[7]),
     "node 'n' (TreeEnsemble): node 0: mode 0, feature 7 or a successor is out of range")
case("tree_leaf.onnx", tree(nodes_falsenodeids=[5]),
     "node 0: mode 0, feature 0 or a successor is out of range")
case("tree_target.onnx", tree(leaf_targetids=[0, 9]), "leaf 1: target 9 of 2")
case("tree_post.onnx", tree(post_transform=2), "post_transform 2: NONE (0) is supported")

with open(os.path.join(HERE, "cases.txt"), "w") as f:
    f.write("# file<TAB>substring its one-line error must contain[<TAB>burncc flags] (see run.sh)\n")
    for c in cases:
        f.write("\t".join(c) + "\n")
print(len(cases), "cases")

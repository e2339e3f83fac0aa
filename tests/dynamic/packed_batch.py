#!/usr/bin/python3
"""packed_batch.py - packed types (int4, int2, ...) with a run-time batch.

    packed_batch.py BURNCC SUITE WORK

Takes node-suite cases whose tensors are packed several to a byte and
whose items do not fill whole bytes (int4 [5,5]: 20 bits an item; int2
[7,1]: 2 bits), and writes each again at batches 1, 2, 3 and its own:
the first rows of every input and output, packed elements repacked low
bits first.  `burncc check --dynamic` then compiles each with the batch
symbolic and runs it at that batch, so items start inside a byte that the
one before writes; every case must pass (README, "Sizes known at run
time").  Exits 77 when onnx is missing, 1 on any other line.
"""
import os
import shutil
import subprocess
import sys

try:
    import onnx
    from onnx import numpy_helper
except ImportError:
    print("no onnx for /usr/bin/python3 (did not run)")
    sys.exit(77)

# ONNX's packed element types and their bits (onnx.proto's numbers: this
# onnx may predate them)
PACKED = {21: 4, 22: 4, 23: 4, 25: 2, 26: 2}
CASES = ["test_cast_FLOAT_to_INT4", "test_cast_INT4_to_FLOAT",
         "test_cast_FLOAT_to_INT2", "test_cast_INT2_to_FLOAT",
         "test_cast_FLOAT_to_UINT2", "test_cast_UINT4_to_FLOAT",
         "test_cast_FLOAT_to_FLOAT4E2M1"]


def first_rows(t, b):
    """Tensor t cut to its first b rows (axis 0)."""
    row = 1
    for d in t.dims[1:]:
        row *= d
    if t.data_type not in PACKED:
        a = numpy_helper.to_array(t)[:b]
        out = numpy_helper.from_array(a, t.name)
        return out
    bits = PACKED[t.data_type]
    per = 8 // bits
    codes = []
    for byte in t.raw_data:
        for k in range(per):
            codes.append((byte >> (k * bits)) & ((1 << bits) - 1))
    codes = codes[:b * row]
    raw = bytearray((len(codes) + per - 1) // per)
    for i, c in enumerate(codes):
        raw[i // per] |= c << ((i % per) * bits)
    out = onnx.TensorProto()
    out.CopyFrom(t)
    out.dims[0] = b
    out.raw_data = bytes(raw)
    return out


def main():
    burncc, suite, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    n = 0
    for case in CASES:
        src = os.path.join(suite, case)
        if not os.path.isdir(src):
            print("missing %s (did not run)" % src)
            return 77
        ds = os.path.join(src, "test_data_set_0")
        files = sorted(f for f in os.listdir(ds) if f.endswith(".pb"))
        tensors = {f: onnx.load_tensor(os.path.join(ds, f)) for f in files}
        d0 = tensors["input_0.pb"].dims[0]
        for b in sorted({1, 2, 3, d0}):
            if b > d0:
                continue
            m = onnx.load(os.path.join(src, "model.onnx"))
            for v in list(m.graph.input) + list(m.graph.output):
                v.type.tensor_type.shape.dim[0].dim_value = b
            dst = os.path.join(work, "%s_b%d" % (case, b))
            os.makedirs(os.path.join(dst, "test_data_set_0"))
            onnx.save(m, os.path.join(dst, "model.onnx"))
            for f, t in tensors.items():
                with open(os.path.join(dst, "test_data_set_0", f), "wb") as fh:
                    fh.write(first_rows(t, b).SerializeToString())
            n += 1
    r = subprocess.run([burncc, "check", "--dynamic", "-j", "1", work],
                       capture_output=True, text=True)
    print(r.stdout + r.stderr, end="")
    want = "%d passed, 0 failed, 0 specialised by the model, 0 refused " \
           "by --dynamic, 0 skipped" % n
    if want not in r.stdout.splitlines():
        print("FAIL: expected '%s'" % want)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

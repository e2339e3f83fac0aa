"""16-bit float rounding for the case generators of tests/targets
(make_mm16.py, make_attn16.py, make_rows16.py, make_tview.py): NumPy has
no bf16, so values are rounded here, nearest-even, as burncc's kernels
round on store."""
import numpy as np
import onnx


def bf16_bits(a):
    """f32 -> the nearest-even bf16's bit patterns (uint16)"""
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(u):
    """bf16 bit patterns -> their values as f32"""
    return (np.asarray(u, np.uint16).astype(np.uint32) << 16).view(np.float32)


def bf16(a):
    """f32 -> nearest-even bf16: (values as f32, bit patterns)"""
    r = bf16_bits(a)
    return from_bf16_bits(r), r


def rnd(a, dt):
    """a rounded to dt ("bf16" or "f16"): (values as f32, bit patterns)"""
    if dt == "bf16":
        return bf16(a)
    v = np.asarray(a, np.float32).astype(np.float16)
    return v.astype(np.float32), v.view(np.uint16)


def tensor16(name, bits, dt, dims):
    """A TensorProto of dtype dt ("bf16" or "f16") holding bit patterns"""
    t = onnx.TensorProto()
    t.name = name
    t.data_type = onnx.TensorProto.BFLOAT16 if dt == "bf16" else onnx.TensorProto.FLOAT16
    t.dims.extend(dims)
    t.raw_data = np.asarray(bits, np.uint16).tobytes()
    return t

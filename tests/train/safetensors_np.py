"""safetensors_np.py - what the train tests' references share: safetensors
files read and written with numpy (the F32 and I64 tensors burncc's
checkpoints hold) and tools/train.c's splitmix64 step."""
import json, struct
import numpy as np

M64 = (1 << 64) - 1


def st_read(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    hdr = json.loads(b[8:8 + n])
    out = {}
    for k, v in hdr.items():
        if k == "__metadata__":
            continue
        s, e = v["data_offsets"]
        dt = {"F32": np.float32, "I64": np.int64}[v["dtype"]]
        out[k] = np.frombuffer(b[8 + n + s:8 + n + e], dtype=dt).reshape(v["shape"])
    return out


def st_write(path, tensors):
    hdr, blobs, off = {}, [], 0
    for k, a in tensors.items():
        raw = a.tobytes()
        hdr[k] = {"dtype": "I64" if a.dtype == np.int64 else "F32",
                  "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(hdr).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def splitmix(s):
    """(new state, output) of tools/train.c's rng_next"""
    s = (s + 0x9E3779B97F4A7C15) & M64
    z = s
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return s, z ^ (z >> 31)

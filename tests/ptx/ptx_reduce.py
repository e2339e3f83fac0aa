#!/usr/bin/env python3
"""ptx_reduce.py - shrink a PTX module that crashes the CUDA driver's loader.

    python3 tests/ptx/ptx_reduce.py MODULE.ptx [OUT.ptx]

Each candidate is loaded with cuModuleLoadDataEx (ctypes, libcuda.so.1) in a
process of its own; a candidate "still crashes" when that process dies by a
signal.  Instructions that define an f32, b32 or b64 register are replaced
by moves of a constant (chunks of them at a time, halving the chunk size
when no chunk can go, as ddmin does) while the load still crashes.  What is
left names the pattern the driver trips on: this found the mask-of-bits
select that driver 580.159.04's JIT crashed on (docs/BENCHMARKS.md,
KCaps.sel_f32).  Needs a GPU machine; ptxas should still accept the result.
"""
import concurrent.futures as cf
import ctypes
import os
import re
import subprocess
import sys
import tempfile

LOAD = r'''
import ctypes, sys
cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
dev = ctypes.c_int(); cu.cuDeviceGet(ctypes.byref(dev), 0)
ctx = ctypes.c_void_p(); cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
cu.cuCtxSetCurrent(ctx)
ptx = open(sys.argv[1], "rb").read() + b"\0"
mod = ctypes.c_void_p(); log = ctypes.create_string_buffer(4096)
opts = (ctypes.c_int * 2)(5, 6)   # CU_JIT_ERROR_LOG_BUFFER, its size
vals = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(4096))
sys.exit(cu.cuModuleLoadDataEx(ctypes.byref(mod), ctypes.c_char_p(ptx), 2, opts, vals) != 0)
'''


def crashes(text, tmp, tag):
    fn = os.path.join(tmp, "c%s.ptx" % tag)
    with open(fn, "w") as f:
        f.write(text)
    p = subprocess.run([sys.executable, "-c", LOAD, fn], capture_output=True, timeout=120)
    return p.returncode < 0


def neutral(line):
    m = re.match(r"\s*([a-z][\w.]*)\s+(%(f|rd|r)\d+)\s*,", line)
    if not m or m.group(1).startswith(("st.", "setp", "bra", "mov")):
        return None
    fmt = {"f": "mov.f32 %s, 0f3F800000;", "r": "mov.b32 %s, 1;", "rd": "mov.b64 %s, 1;"}
    return "\t" + fmt[m.group(3)] % m.group(2)


def main():
    src = open(sys.argv[1]).read().split("\n")
    out = sys.argv[2] if len(sys.argv) > 2 else "reduced.ptx"
    tmp = tempfile.mkdtemp()
    if not crashes("\n".join(src), tmp, "s"):
        print("the module loads without a crash: nothing to reduce")
        return 1
    cur = list(src)
    cand = [i for i, l in enumerate(cur) if neutral(l)]
    n = max(1, len(cand) // 4)
    with cf.ThreadPoolExecutor(os.cpu_count() or 4) as ex:
        while n >= 1:
            chunks = [cand[i:i + n] for i in range(0, len(cand), n)]

            def trial(j):
                t = list(cur)
                for i in chunks[j]:
                    t[i] = neutral(t[i])
                return crashes("\n".join(t), tmp, j)
            hit = [j for j, r in enumerate(ex.map(trial, range(len(chunks)))) if r]
            if hit:
                for i in chunks[hit[0]]:
                    cur[i] = neutral(cur[i])
                cand = [i for i in cand if i not in chunks[hit[0]]]
            else:
                n //= 2
            print("chunk %d, %d instructions left" % (n, len(cand)), flush=True)
    open(out, "w").write("\n".join(cur))
    print("still crashing, written to %s; the instructions kept:" % out)
    for i in cand:
        print(cur[i])
    return 0


if __name__ == "__main__":
    sys.exit(main())

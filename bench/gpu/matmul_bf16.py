#!/usr/bin/python3
"""Issue 9's tensor-core figure: bf16 Y = GELU(X @ W + b), X and W
N x N (default 8192), b N, in one ONNX model (MatMul, Add, Gelu; opset 20)
for `burncc bench --target cuda`, and PyTorch on the same GPU in the same
run: torch.matmul (cuBLAS, the issue's yardstick), the eager epilogue
(three kernels) and torch.compile of it.

    bench/gpu/matmul_bf16.py DIR [N] [RUNS]   writes DIR/mm_bf16.onnx and
                                              prints PyTorch's times

PyTorch is optional (the model is written with onnx alone)."""
import os, statistics, sys
import onnx
from onnx import TensorProto as T, helper as h

d = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 8192
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 20
os.makedirs(d, exist_ok=True)
bias = h.make_tensor("b", T.BFLOAT16, [n], [0.0] * n)
g = h.make_graph(
    [h.make_node("MatMul", ["X", "W"], ["mm"]),
     h.make_node("Add", ["mm", "b"], ["s"]),
     h.make_node("Gelu", ["s"], ["Y"])],
    "mm_bf16",
    [h.make_tensor_value_info("X", T.BFLOAT16, [n, n]),
     h.make_tensor_value_info("W", T.BFLOAT16, [n, n])],
    [h.make_tensor_value_info("Y", T.BFLOAT16, [n, n])], [bias])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 20)]),
          os.path.join(d, "mm_bf16.onnx"))
print("wrote", os.path.join(d, "mm_bf16.onnx"), "N =", n)
try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("pytorch: not installed, no peer figures")
    sys.exit(0)
if not torch.cuda.is_available():
    print("pytorch: no CUDA device, no peer figures")
    sys.exit(0)

def time(f, *a):
    for _ in range(3):
        f(*a)
    torch.cuda.synchronize()
    ts = []
    for _ in range(runs):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); f(*a); e.record(); e.synchronize()
        ts.append(s.elapsed_time(e))
    return statistics.median(ts)

dev = torch.device("cuda")
x = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
w = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
b = torch.randn(n, device=dev, dtype=torch.bfloat16)
flop = 2.0 * n * n * n
print("torch", torch.__version__, torch.cuda.get_device_name(0))
def epi(x, w, b):
    return F.gelu(x @ w + b)
for name, f in (("torch.matmul", lambda: torch.matmul(x, w)),
                ("gelu(x@w+b) eager", lambda: epi(x, w, b))):
    ms = time(f)
    print("%-24s %.4f ms  %.1f TFLOP/s" % (name, ms, flop / ms / 1e9))
try:
    c = torch.compile(epi)
    ms = time(c, x, w, b)
    print("%-24s %.4f ms  %.1f TFLOP/s" % ("gelu(x@w+b) compile", ms, flop / ms / 1e9))
except Exception as e:
    print("torch.compile did not run:", type(e).__name__, str(e).split("\n")[0][:200])

#!/usr/bin/python3
"""PyTorch on the same GPU, same run: the yardsticks of issue 9's bandwidth
figures.  Times with CUDA events (median of N after warm-up):
copy of 2^28 f32 (x.clone()), composed GELU (five kernels in eager),
F.gelu, torch.compile of the composed GELU (if it compiles here),
softmax and layer_norm over 8192x8192 f32."""
import math, sys, statistics
import torch
import torch.nn.functional as F

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
dev = torch.device("cuda")

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

def gelu_custom(x):
    return x * (torch.erf(x / math.sqrt(2)) + 1) / 2

print("torch", torch.__version__, torch.cuda.get_device_name(0))
x = torch.rand(1 << 28, device=dev) * 6 - 3
nb = x.numel() * 4
for name, f in (("copy", lambda t: t.clone()), ("gelu_composed_eager", gelu_custom),
                ("F.gelu", F.gelu)):
    ms = time(f, x)
    print("%-24s %.4f ms  %.1f GB/s" % (name, ms, 2 * nb / ms / 1e6))
try:
    g = torch.compile(gelu_custom)
    ms = time(g, x)
    print("%-24s %.4f ms  %.1f GB/s" % ("gelu_torch.compile", ms, 2 * nb / ms / 1e6))
except Exception as e:
    print("gelu_torch.compile       did not run:", type(e).__name__, str(e).split("\n")[0][:200])
del x
y = torch.rand(8192, 8192, device=dev)
nb = y.numel() * 4
w, b = torch.ones(8192, device=dev), torch.zeros(8192, device=dev)
for name, f in (("softmax_eager", lambda t: torch.softmax(t, -1)),
                ("layernorm_eager", lambda t: F.layer_norm(t, (8192,), w, b, 1e-5))):
    ms = time(f, y)
    print("%-24s %.4f ms  %.1f GB/s" % (name, ms, 2 * nb / ms / 1e6))

# eager_torch.py - PyTorch eager at one thread, the peers of eager_bench.c:
# a 16-element add (and the same read back as NumPy), gelu_custom composed
# from five ops and F.gelu on 2^24 f32.  Best of several timed loops.
import math, sys, time
import torch
import torch.nn.functional as F

torch.set_num_threads(1)
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 10

def best_loop(fn, iters, loops=5):
    best = 1e9
    for _ in range(loops):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        best = min(best, (time.perf_counter() - t0) / iters)
    return best

a = torch.arange(16, dtype=torch.float32)
b = torch.ones(16, dtype=torch.float32)
t = best_loop(lambda: a + b, 200000)
print("torch %s dispatch: 16-element a + b: %.3f us" % (torch.__version__, t * 1e6))
t = best_loop(lambda: (a + b).numpy(), 200000)
print("torch dispatch: 16-element (a + b).numpy(): %.3f us" % (t * 1e6))

x = torch.randn(1 << 24, dtype=torch.float32)
def composed():
    return x * (torch.erf(x / math.sqrt(2)) + 1) / 2
def best_once(fn):
    fn()
    best = 1e9
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best
t = best_once(composed)
print("torch composed gelu_custom 2^24 f32 (5 kernels): %.2f ms" % (t * 1e3))
t = best_once(lambda: F.gelu(x))
print("torch F.gelu 2^24 f32: %.2f ms" % (t * 1e3))

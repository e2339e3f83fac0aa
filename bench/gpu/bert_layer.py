#!/usr/bin/python3
"""Issue 9's encoder layers, made on the GPU machine with PyTorch and timed
there beside burncc:

    python3 bench/gpu/bert_layer.py OUTDIR [RUNS]

For each layer (BERT's: fused QKV projection, softmax attention, output
projection, residual and LayerNorm, a GELU (erf) feed-forward, residual
and LayerNorm; post-norm, f32, written out in PyTorch ops so that the
TorchScript exporter takes it, as nn.TransformerEncoderLayer's
scaled_dot_product_attention path does not in PyTorch 2.11):
  layer128   hidden 128, 2 heads, ff 512, batch 1, sequence 128 (launch-bound)
writes OUTDIR/NAME/model.onnx (exported with PyTorch's fused fast path off,
TorchScript exporter, opset 17) and test_data_set_0 with the input and
PyTorch's output, so that `burncc check --target cuda OUTDIR` checks it and
`burncc bench OUTDIR/NAME/model.onnx --target cuda` times it; and prints
PyTorch's times in the same run: eager, torch.compile (default) and
torch.compile(mode="reduce-overhead") (CUDA graphs), each the median of
RUNS runs between CUDA events after warm-up."""
import os, statistics, sys
import torch
from onnx import numpy_helper

out = sys.argv[1]
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 100
dev = torch.device("cuda")
torch.manual_seed(0)

LAYERS = [("layer128", 128, 2, 512, 1, 128)]


class Layer(torch.nn.Module):
    def __init__(self, d, h, ff):
        super().__init__()
        self.h = h
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.o = torch.nn.Linear(d, d)
        self.ln1 = torch.nn.LayerNorm(d)
        self.f1 = torch.nn.Linear(d, ff)
        self.f2 = torch.nn.Linear(ff, d)
        self.ln2 = torch.nn.LayerNorm(d)

    def forward(self, x):
        b, n, d = x.shape
        h, hd = self.h, d // self.h
        q, k, v = self.qkv(x).split(d, dim=-1)
        q = q.reshape(b, n, h, hd).transpose(1, 2)
        k = k.reshape(b, n, h, hd).transpose(1, 2)
        v = v.reshape(b, n, h, hd).transpose(1, 2)
        a = torch.softmax((q @ k.transpose(-1, -2)) * (hd ** -0.5), dim=-1)
        y = (a @ v).transpose(1, 2).reshape(b, n, d)
        x = self.ln1(x + self.o(y))
        return self.ln2(x + self.f2(torch.nn.functional.gelu(self.f1(x))))


def time(f, x):
    with torch.no_grad():
        for _ in range(10):
            f(x)
        torch.cuda.synchronize()
        ts = []
        for _ in range(runs):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(); f(x); e.record(); e.synchronize()
            ts.append(s.elapsed_time(e))
    return statistics.median(ts)


print("torch", torch.__version__, torch.cuda.get_device_name(0))
for name, d, h, ff, b, s in LAYERS:
    layer = Layer(d, h, ff).to(dev).eval()
    x = torch.randn(b, s, d, device=dev)
    dd = os.path.join(out, name)
    os.makedirs(os.path.join(dd, "test_data_set_0"), exist_ok=True)
    with torch.no_grad():
        y = layer(x)
        torch.onnx.export(layer, (x,), os.path.join(dd, "model.onnx"), opset_version=17,
                          input_names=["x"], output_names=["y"], dynamo=False)
    for i, (t, nm) in enumerate([(x, "x")]):
        with open(os.path.join(dd, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(t.cpu().numpy(), nm).SerializeToString())
    with open(os.path.join(dd, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y.cpu().numpy(), "y").SerializeToString())
    print("%-10s eager                      %.4f ms" % (name, time(layer, x)))
    for mode in ("default", "reduce-overhead"):
        try:
            cl = torch.compile(layer, mode=mode)
            print("%-10s torch.compile %-15s %.4f ms" % (name, mode, time(cl, x)))
        except Exception as ex:   # no compiler on the machine: say so
            print("%-10s torch.compile %-15s did not run: %s" % (name, mode,
                  str(ex).split("\n")[0][:200]))

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
  base_bf16  BERT-base: hidden 768, 12 heads, ff 3072, batch 8, sequence
             512, in bf16 (weights, activations and the ONNX model)
  small_bf16 hidden 64, 2 heads, ff 256, batch 2, sequence 16, bf16 (a quick
             check of the bf16 export: BERT_LAYER_DEVICE=cpu
             BERT_LAYER_ONLY=small_bf16 runs it on a CPU, untimed)
  attn_bf16  hidden 128, 2 heads of 64, ff 256, batch 2, sequence 128, bf16
             (the attention rewritten into one tiled kernel on cuda and gpu)
writes OUTDIR/NAME/model.onnx (exported with PyTorch's fused fast path off,
TorchScript exporter, opset 17) and test_data_set_0 with the input and
PyTorch's output, so that `burncc check --target cuda OUTDIR` checks it and
`burncc bench OUTDIR/NAME/model.onnx --target cuda` times it; and prints
PyTorch's times in the same run: eager, torch.compile (default) and
torch.compile(mode="reduce-overhead") (CUDA graphs), each the median of
RUNS runs between CUDA events after warm-up."""
import os, statistics, sys
import torch
import onnx
from onnx import numpy_helper

out = sys.argv[1]
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 100
dev = torch.device(os.environ.get("BERT_LAYER_DEVICE", "cuda"))
torch.manual_seed(0)

LAYERS = [("layer128", 128, 2, 512, 1, 128, torch.float32),
          ("base_bf16", 768, 12, 3072, 8, 512, torch.bfloat16)]
LAYERS.append(("small_bf16", 64, 2, 256, 2, 16, torch.bfloat16))   # a quick check on a CPU
LAYERS.append(("attn_bf16", 128, 2, 256, 2, 128, torch.bfloat16))  # heads of 64: one Attention kernel
if os.environ.get("BERT_LAYER_ONLY"):   # BERT_LAYER_ONLY=small_bf16: that one alone
    LAYERS = [l for l in LAYERS if l[0] in os.environ["BERT_LAYER_ONLY"].split(",")]


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
        # the scale as a tensor of x's dtype: PyTorch 1.13's exporter turns a
        # Python float factor of a bf16 tensor into a Cast to f32
        scale = torch.tensor(hd ** -0.5, dtype=x.dtype, device=x.device)
        a = torch.softmax((q @ k.transpose(-1, -2)) * scale, dim=-1)
        y = (a @ v).transpose(1, 2).reshape(b, n, d)
        x = self.ln1(x + self.o(y))
        return self.ln2(x + self.f2(torch.nn.functional.gelu(self.f1(x))))


def tensor_proto(t, name):
    """numpy has no bf16: bf16 tensors are written from their bits."""
    if t.dtype != torch.bfloat16:
        return numpy_helper.from_array(t.cpu().numpy(), name)
    p = onnx.TensorProto()
    p.name, p.data_type = name, onnx.TensorProto.BFLOAT16
    p.dims.extend(t.shape)
    p.raw_data = t.cpu().contiguous().view(torch.int16).numpy().tobytes()
    return p


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


# the TorchScript exporter: PyTorch 2's default is the dynamo one (1.13 has only the first)
old_exporter = {"dynamo": False} if int(torch.__version__.split(".")[0]) >= 2 else {}
print("torch", torch.__version__, torch.cuda.get_device_name(0) if dev.type == "cuda" else "cpu")
for name, d, h, ff, b, s, dt in LAYERS:
    layer = Layer(d, h, ff).to(dev).to(dt).eval()
    x = torch.randn(b, s, d, device=dev).to(dt)
    dd = os.path.join(out, name)
    os.makedirs(os.path.join(dd, "test_data_set_0"), exist_ok=True)
    with torch.no_grad():
        y = layer(x)
        torch.onnx.export(layer, (x,), os.path.join(dd, "model.onnx"), opset_version=17,
                          input_names=["x"], output_names=["y"], **old_exporter)
    for i, (t, nm) in enumerate([(x, "x")]):
        with open(os.path.join(dd, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(tensor_proto(t, nm).SerializeToString())
    with open(os.path.join(dd, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(tensor_proto(y, "y").SerializeToString())
    if dev.type != "cuda":
        continue
    print("%-10s eager                      %.4f ms" % (name, time(layer, x)))
    for mode in ("default", "reduce-overhead"):
        try:
            cl = torch.compile(layer, mode=mode)
            print("%-10s torch.compile %-15s %.4f ms" % (name, mode, time(cl, x)))
        except Exception as ex:   # no compiler on the machine: say so
            print("%-10s torch.compile %-15s did not run: %s" % (name, mode,
                  str(ex).split("\n")[0][:200]))

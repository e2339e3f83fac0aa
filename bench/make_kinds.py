#!/usr/bin/python3
"""make_kinds.py OUT [KIND...]: four small models of the kinds issue 13
names, exported from PyTorch (seeded) with torch.onnx.export, each into
OUT/KIND in ../shared/models' layout: model.onnx and test_data_set_0 with
input_*.pb and PyTorch's own output_*.pb.

  mobilenet  MobileNetV2-like: inverted residuals (1x1 expand, depthwise
             3x3, 1x1 project), BatchNorm (folded by the export), ReLU6,
             global average pool, a linear head; 1x3x96x96
  unet       a 3-level U-Net: two 3x3 convs a level, MaxPool, one level
             up by ConvTranspose 2x2/2, one by bilinear Resize, Concat
             skips; 1x3x64x64
  gpt2       GPT-2-style decoder: 2 layers, d 128, 4 heads, causal mask,
             GELU MLP, pre-LayerNorm, LM head tied to the token embedding;
             int64 tokens 1x64, vocabulary 1024
  lstm       2-layer LSTM, input 64, hidden 128, sequence 48, batch 2,
             and a linear head on every step

Each runs in 0.5-20 ms on one core.  Needs torch (Debian's python3-torch
1.13) and onnx; exits 77 when they are absent (ctest's SKIP)."""
import os
import sys

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:
    print("make_kinds.py: %s" % e, file=sys.stderr)
    sys.exit(77)

OPSET = 17


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        mid = cin * expand
        layers = []
        if expand != 1:
            layers += [nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU6()]
        layers += [nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False),
                   nn.BatchNorm2d(mid), nn.ReLU6(),
                   nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


class MobileNet(nn.Module):
    # (expand, channels, repeats, stride), MobileNetV2's table at width 0.5
    CFG = [(1, 8, 1, 1), (6, 16, 2, 2), (6, 16, 2, 2), (6, 32, 3, 2),
           (6, 48, 2, 1), (6, 80, 2, 2), (6, 160, 1, 1)]

    def __init__(self, classes=100):
        super().__init__()
        layers = [nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU6()]
        cin = 16
        for t, c, n, s in self.CFG:
            for i in range(n):
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        layers += [nn.Conv2d(cin, 640, 1, bias=False), nn.BatchNorm2d(640), nn.ReLU6()]
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(640, classes)

    def forward(self, x):
        x = self.features(x)
        return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def double_conv(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU())


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.d1, self.d2, self.d3 = double_conv(3, 16), double_conv(16, 32), double_conv(32, 64)
        self.up2 = nn.ConvTranspose2d(64, 32, 2, stride=2)
        self.u2 = double_conv(64, 32)
        self.u1 = double_conv(32 + 16, 16)
        self.out = nn.Conv2d(16, 2, 1)

    def forward(self, x):
        a = self.d1(x)
        b = self.d2(F.max_pool2d(a, 2))
        c = self.d3(F.max_pool2d(b, 2))
        y = self.u2(torch.cat([self.up2(c), b], 1))
        y = F.interpolate(y, scale_factor=2.0, mode="bilinear", align_corners=False)
        return self.out(self.u1(torch.cat([y, a], 1)))


class Block(nn.Module):
    def __init__(self, d, heads, seq):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq)).bool())

    def forward(self, x):
        b, t, d = x.shape
        h, hd = self.heads, d // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.reshape(b, t, h, hd).transpose(1, 2)
        k = k.reshape(b, t, h, hd).transpose(1, 2)
        v = v.reshape(b, t, h, hd).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / hd ** 0.5)
        att = att.masked_fill(~self.mask[:t, :t], float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.fc2(F.gelu(self.fc(self.ln2(x))))


class GPT2(nn.Module):
    def __init__(self, vocab=1024, d=128, heads=4, layers=2, seq=64):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.blocks = nn.Sequential(*[Block(d, heads, seq) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1]).unsqueeze(0)
        x = self.blocks(self.wte(idx) + self.wpe(pos))
        return self.ln(x) @ self.wte.weight.t()    # tied LM head


class LSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(64, 128, num_layers=2)
        self.head = nn.Linear(128, 32)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y)


def kinds():
    # each input from its own seeded generator, so a kind made alone is the same
    g = lambda: torch.Generator().manual_seed(1)
    return {
        "mobilenet": (MobileNet, lambda: torch.randn(1, 3, 96, 96, generator=g())),
        "unet": (UNet, lambda: torch.randn(1, 3, 64, 64, generator=g())),
        "gpt2": (GPT2, lambda: torch.randint(0, 1024, (1, 64), generator=g())),
        "lstm": (LSTM, lambda: torch.randn(48, 2, 64, generator=g())),
    }


def randomise_bn(model, seed):
    # BatchNorm statistics other than (0, 1), so that folding them is tested.
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(n, generator=g) + 0.5)
            m.bias.data.copy_(torch.randn(n, generator=g) * 0.1)


def write(out, name, make, inp):
    torch.manual_seed(0)
    model = make()
    randomise_bn(model, 2)
    model.eval()
    x = inp()
    with torch.no_grad():
        y = model(x)
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    torch.onnx.export(model, (x,), os.path.join(d, "model.onnx"), opset_version=OPSET,
                      input_names=["input"], output_names=["output"],
                      do_constant_folding=True)
    m = onnx.load(os.path.join(d, "model.onnx"))
    m.producer_name = "burncc bench/make_kinds.py"
    onnx.save(m, os.path.join(d, "model.onnx"))
    for kind, t in (("input", x), ("output", y)):
        p = numpy_helper.from_array(t.numpy(), kind)
        with open(os.path.join(d, "test_data_set_0", kind + "_0.pb"), "wb") as f:
            f.write(p.SerializeToString())


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    torch.set_num_threads(1)
    table = kinds()
    for name in sys.argv[2:] or list(table):
        if name not in table:
            print("make_kinds.py: no kind %r (%s)" % (name, ", ".join(table)), file=sys.stderr)
            sys.exit(2)
        write(sys.argv[1], name, *table[name])

#!/usr/bin/python3
"""torch_step.py mlp|cnn THREADS STEPS - PyTorch's train step of burncc train's
MLP or CNN (bench/train_torch.py's model, Adam 1e-3, batch 64) on fixed
inputs (no data set); prints "steps N total S s best MS ms" like
bench/step_bench.c (bench/threads_device.sh)."""
import sys, time
import torch

kind, threads, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(threads)
torch.manual_seed(1)
if kind == "cnn":
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 32, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                torch.nn.Conv2d(32, 64, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                torch.nn.Flatten(), torch.nn.Linear(1600, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    x = (torch.sin(torch.arange(64 * 784, dtype=torch.float32)) * 0.5 + 0.5).reshape(64, 1, 28, 28)
else:
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    x = (torch.sin(torch.arange(64 * 784, dtype=torch.float32)) * 0.5 + 0.5).reshape(64, 784)
y = torch.arange(64) % 10
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
lossf = torch.nn.CrossEntropyLoss()
best, t0 = 1e9, time.perf_counter()
for _ in range(steps):
    a = time.perf_counter()
    opt.zero_grad()
    loss = lossf(model(x), y)
    loss.backward()
    opt.step()
    best = min(best, time.perf_counter() - a)
print(f"steps {steps} total {time.perf_counter() - t0:.3f} s best {best * 1e3:.3f} ms loss {loss.item():.6f}")

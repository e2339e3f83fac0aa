#!/usr/bin/python3
"""train_torch.py DATA_DIR [EPOCHS] [mlp|cnn] [THREADS] - PyTorch's run of burncc train's set-up.

The MLP 784-256-128-10 with ReLU (examples/mlp_train.burn) or the CNN of
examples/cnn_train.burn (conv 3x3 32, ReLU, max pool 2, conv 3x3 64, ReLU,
max pool 2, linear 1600-128, ReLU, linear 10; PyTorch's default
initialisation, uniform in +-1/sqrt(fan_in) as burncc's Linear and
Conv2d), batch 64 (the last partial batch
dropped, as burncc train does), Adam lr 1e-3 (betas 0.9, 0.999, eps 1e-8),
5 epochs, seeded, one thread (or THREADS); the test set evaluated after every epoch.
Prints lines in burncc train's format (bench/train.sh puts them side by
side).  Debian's python3-torch (1.13, CPU).
"""
import gzip, sys, time
import numpy as np
import torch

def idx(path):
    with gzip.open(path, "rb") as f:
        b = f.read()
    if b[0] or b[1] or b[2] != 8:
        sys.exit(f"{path}: not an IDX ubyte file")
    r = b[3]
    dims = [int.from_bytes(b[4 + 4 * i:8 + 4 * i], "big") for i in range(r)]
    return np.frombuffer(b, np.uint8, offset=4 + 4 * r).reshape(dims)

def main():
    d = sys.argv[1]
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    cnn = len(sys.argv) > 3 and sys.argv[3] == "cnn"
    torch.set_num_threads(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    torch.manual_seed(1)
    xtr = torch.tensor(idx(f"{d}/train-images-idx3-ubyte.gz").reshape(-1, 784), dtype=torch.float32) / 255
    ytr = torch.tensor(idx(f"{d}/train-labels-idx1-ubyte.gz"), dtype=torch.int64)
    xte = torch.tensor(idx(f"{d}/t10k-images-idx3-ubyte.gz").reshape(-1, 784), dtype=torch.float32) / 255
    yte = torch.tensor(idx(f"{d}/t10k-labels-idx1-ubyte.gz"), dtype=torch.int64)
    if cnn:
        xtr, xte = xtr.reshape(-1, 1, 28, 28), xte.reshape(-1, 1, 28, 28)
        model = torch.nn.Sequential(torch.nn.Conv2d(1, 32, 3), torch.nn.ReLU(),
                                    torch.nn.MaxPool2d(2),
                                    torch.nn.Conv2d(32, 64, 3), torch.nn.ReLU(),
                                    torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                                    torch.nn.Linear(1600, 128), torch.nn.ReLU(),
                                    torch.nn.Linear(128, 10))
    else:
        model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                    torch.nn.Linear(256, 128), torch.nn.ReLU(),
                                    torch.nn.Linear(128, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    lossf = torch.nn.CrossEntropyLoss()
    B = 64
    nb = xtr.shape[0] // B
    g = torch.Generator().manual_seed(1)
    for ep in range(1, epochs + 1):
        t0, c0 = time.perf_counter(), time.process_time()
        perm = torch.randperm(xtr.shape[0], generator=g)
        model.train()
        ls = 0.0
        for b in range(nb):
            i = perm[b * B:(b + 1) * B]
            opt.zero_grad()
            loss = lossf(model(xtr[i]), ytr[i])
            loss.backward()
            opt.step()
            ls += loss.item()
        tt, tc = time.perf_counter() - t0, time.process_time() - c0
        t1 = time.perf_counter()
        model.eval()
        with torch.no_grad():
            out = model(xte)
            tl = lossf(out, yte).item()
            acc = (out.argmax(1) == yte).float().mean().item()
        print(f"epoch {ep}/{epochs}  steps {nb}  train loss {ls / nb:.4f}  test loss {tl:.4f}  "
              f"test accuracy {100 * acc:.2f}%  train {tt:.2f} s (cpu {tc:.2f} s)  "
              f"eval {time.perf_counter() - t1:.2f} s", flush=True)

main()

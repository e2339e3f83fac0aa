#!/bin/sh
# bench/train.sh [BURNCC] [DATA_DIR] [EPOCHS] [mlp|cnn] [THREADS] - Fashion-MNIST, the
# MLP 784-256-128-10 (ReLU) or the CNN of examples/cnn_train.burn, batch 64,
# Adam 1e-3, seeded, one thread (or THREADS): burncc
# train (examples/MODEL_train.burn, the llvm target, BURN_THREADS) and PyTorch 1.13
# (bench/train_torch.py, Debian's python3-torch, torch.set_num_threads)
# in the same run, one after the other.  Per epoch: train loss, test loss
# and accuracy, the epoch's wall time and the process's CPU time (the CPU
# time is the fairer figure on a shared machine).  docs/BENCHMARKS.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
burncc=${1:-$here/../build/burncc}
data=${2:-/usr/share/datasets/fashion-mnist}
epochs=${3:-5}
model=${4:-mlp}
threads=${5:-1}   # burncc's BURN_THREADS and PyTorch's set_num_threads
case $model in mlp|cnn) ;; *) echo "bench/train.sh: model mlp or cnn, not $model" >&2; exit 2;; esac
echo "== burncc train ($epochs epochs, $threads thread(s))"
BURN_THREADS=$threads "$burncc" train "$here/../examples/${model}_train.burn" --data "$data" --epochs "$epochs" --seed 1
echo "== PyTorch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)') ($epochs epochs, $threads thread(s))"
/usr/bin/python3 "$here/train_torch.py" "$data" "$epochs" "$model" "$threads"
echo "== load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"

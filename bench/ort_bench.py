#!/usr/bin/python3
"""ort_bench.py MODEL THREADS - ONNX Runtime's Python package (CPU) on MODEL
with the inputs model_bench.c uses (floats sin(i)/2, integers 0); prints
"median best runs" in ms over at least 1 s of runs, as bench/ort_bench.js
does for onnxruntime-node (bench/threads_device.sh: where only Python's
onnxruntime is installed)."""
import sys, time
import numpy as np
import onnxruntime as ort

model, threads = sys.argv[1], int(sys.argv[2])
so = ort.SessionOptions()
so.intra_op_num_threads = threads
so.inter_op_num_threads = 1
so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
feeds = {}
for i in s.get_inputs():
    dims = [d if isinstance(d, int) else 1 for d in i.shape]
    n = int(np.prod(dims))
    if i.type == "tensor(float)":
        feeds[i.name] = (np.sin(np.arange(n, dtype=np.float64)) / 2).astype(np.float32).reshape(dims)
    elif i.type == "tensor(int64)":
        feeds[i.name] = np.zeros(dims, np.int64)
    else:
        sys.exit(f"input type {i.type}")
s.run(None, feeds)
t = []
start = time.perf_counter()
while len(t) < 100000 and (time.perf_counter() - start < 1.0 or len(t) < 10):
    t0 = time.perf_counter()
    s.run(None, feeds)
    t.append(time.perf_counter() - t0)
t.sort()
print(f"{t[len(t) // 2] * 1e3:.3f} {t[0] * 1e3:.3f} {len(t)}")

#!/bin/sh
# threads_device.sh DIR - 1 against 2 threads on two otherwise idle cores of
# a larger machine (the GPU machine's CPUs: the 2-core VM is shared, docs/
# BENCHMARKS.md), then with one of the two cores kept busy by a spinning
# process (what the shared VM does to burncc's threads).  DIR holds, built
# on the VM (-O3 -march=x86-64-v4 or -v3, -fopenmp -static; OLD and NEW
# two burncc commits):
#   sq_{old,new}_ISA    bench/model_bench.c + squeezenet1_1's C
#   cnn_, mlp_{old,new}_ISA   bench/step_bench.c + burncc train -o's step
#   sq.onnx, ort_bench.py, torch_step.py, hog (a spinning loop)
# One core: taskset -c 2, OMP_NUM_THREADS=1; two: taskset -c 2,3, 2.
# Prints one line per run: what, threads, the program's output.
set -u
cd "$1" || exit 1
isa=v3
grep -q avx512f /proc/cpuinfo && isa=v4
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) ($(nproc) cores), $isa; $(uptime)"
one() { taskset -c 2 env OMP_NUM_THREADS=1 "$@"; }
two() { taskset -c 2,3 env OMP_NUM_THREADS=2 "$@"; }
sq() {   # rounds
	for r in $(seq "$1"); do
		for v in old new; do
			echo "sq $v 1 $(one ./sq_${v}_$isa sq)"
			echo "sq $v 2 $(two ./sq_${v}_$isa sq)"
		done
		echo "sq ort 1 $(one python3 ort_bench.py sq.onnx 1)"
		echo "sq ort 2 $(two python3 ort_bench.py sq.onnx 2)"
	done
}
steps() {   # rounds, model, steps
	for r in $(seq "$1"); do
		for v in old new; do
			echo "$2 $v 1 $(one ./$2_${v}_$isa "$3")"
			echo "$2 $v 2 $(two ./$2_${v}_$isa "$3")"
		done
	done
}
torch() {   # model, steps
	echo "$1 torch 1 $(one python3 torch_step.py "$1" 1 "$2")"
	echo "$1 torch 2 $(two python3 torch_step.py "$1" 2 "$2")"
}
echo "== idle"
sq 3
steps 3 cnn 100
steps 2 mlp 500
torch cnn 60
torch mlp 300
echo "== core 3 busy (hog)"
taskset -c 3 ./hog 60 &
hog=$!
sq 2
steps 2 cnn 100
kill $hog
echo "== $(uptime)"

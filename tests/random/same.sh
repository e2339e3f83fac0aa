#!/bin/sh
# same.sh BURNCC DIR - every case of tests/random run by `burncc run` on the
# c target (generated C) and the llvm target (LLVM's JIT): the random draws
# must be the same bytes (they are a function of seed and index, built from
# kernel IR that both render).  Then the rng_counter input: a model
# compiled with --rng-counter, run from C (counter_main.c).  Registered
# only where burncc has LLVM; 77 (not run) without a C compiler.
set -eu
burncc=$1 dir=$2
tmp=${TMPDIR:-/tmp}/random_same.$$
trap 'rm -rf "$tmp"' EXIT
n=0
for d in "$dir"/*/; do
	c=$(basename "$d")
	ins=""
	for f in "$d"test_data_set_0/input_*.pb; do
		[ -e "$f" ] && ins="$ins --input $f"
	done
	for t in c llvm; do
		mkdir -p "$tmp/$c/$t"
		# shellcheck disable=SC2086
		"$burncc" run "$d/model.onnx" $ins --output "$tmp/$c/$t" --target $t > /dev/null
	done
	for f in "$tmp/$c/c"/*.npy; do
		cmp -s "$f" "$tmp/$c/llvm/$(basename "$f")" ||
			{ echo "FAIL $c: $(basename "$f") differs between c and llvm"; exit 1; }
	done
	n=$((n + 1))
done
echo "$n cases: the same draws on c and llvm"
# the rng_counter input (--rng-counter): tests/random/counter_main.c
cc=${CC:-cc}
command -v "$cc" > /dev/null || { echo "no C compiler ($cc): rng_counter not run"; exit 77; }
mkdir -p "$tmp/ctr"
"$burncc" "$dir/two_unseeded/model.onnx" --rng-counter -o "$tmp/ctr/m.c"
"$cc" -O1 -I"$tmp/ctr" "$dir/counter_main.c" "$tmp/ctr/m.c" -lm -o "$tmp/ctr/t"
"$tmp/ctr/t" "$tmp/two_unseeded/c/y.npy"

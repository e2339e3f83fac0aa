#!/bin/sh
# schedule.sh BURNCC MODELS_DIR - schedules as data from the command line:
# --emit=schedule prints each kernel's steps; given back with --schedule
# FILE the kernels (cpu and gpu) and the C are identical; changed steps
# (a 4x16 register tile, no FMA, no threads, direct convolution, other
# grids, no matrix-tile template) change the kernels they name and the
# results still match the reference (`burncc check`); bad schedules are
# errors that name the kernel, the column and what was expected.
set -u
B=$1 MODELS=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/burncc-sched-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for m in lenet mlp squeezenet1_1; do
	M=$MODELS/$m/model.onnx
	for t in c gpu; do
		"$B" --target $t --emit=schedule "$M" > "$T/s" || fail "$m $t: --emit=schedule"
		grep -q ': .' "$T/s" || fail "$m $t: no kernel has a schedule"
		"$B" --target $t --emit=kernels "$M" > "$T/k1" || fail "$m $t: --emit=kernels"
		"$B" --target $t --emit=kernels --schedule "$T/s" "$M" > "$T/k2" ||
			fail "$m $t: --schedule FILE: $(cat "$T/s")"
		cmp -s "$T/k1" "$T/k2" || fail "$m $t: the printed schedule does not reproduce the kernels"
		grep -q '^  schedule: ' "$T/k1" || fail "$m $t: --emit=kernels shows no schedule"
	done
	"$B" --emit=schedule "$M" > "$T/s"
	"$B" --emit=c "$M" > "$T/c1"
	"$B" --emit=c --schedule "$T/s" "$M" > "$T/c2" || fail "$m: --emit=c --schedule"
	cmp -s "$T/c1" "$T/c2" || fail "$m: the printed schedule does not reproduce the C"
done

L=$MODELS/lenet/model.onnx
# lenet's kernels: k_conv, k_conv_2 (im2col), k_gemm, k_softmax...
"$B" --emit=schedule "$L" | grep -qx 'k_gemm: fma tile(8,32)' || fail "lenet k_gemm's default schedule"
"$B" --emit=c "$L" > "$T/c1"
"$B" --emit=c --schedule 'k_gemm=tile(4,16) nofma' "$L" > "$T/c2" || fail "tile(4,16)"
cmp -s "$T/c1" "$T/c2" && fail "tile(4,16) nofma changed nothing"
grep -q 'acc\[64\]\|\[64\]' "$T/c2" || fail "tile(4,16): no 64-element tile in the C"
"$B" --emit=schedule --schedule 'k_conv=direct unroll(2) vec(16)' "$L" |
	grep -qx 'k_conv: serial fma unroll(2) vec(16) direct' || fail "k_conv=direct"
# threads off: one omp loop fewer
M=$MODELS/mlp/model.onnx
n1=$("$B" --emit=c "$M" | grep -c 'pragma omp')
n2=$("$B" --emit=c --schedule 'k_gemm=serial' "$M" | grep -c 'pragma omp')
[ "$n2" -lt "$n1" ] || fail "k_gemm=serial kept its threads ($n1 -> $n2 pragmas)"
# the changed kernels still compute the reference's results
"$B" check -j 1 --schedule 'k_gemm=tile(4,16) nofma' --schedule 'k_conv=direct unroll(1) vec(3)' \
	--schedule 'k_conv_2=tile(3,5)' "$MODELS/lenet" > "$T/out" 2>&1 || fail "check lenet: $(cat "$T/out")"
grep -q '^PASS lenet' "$T/out" || fail "check lenet: $(cat "$T/out")"
"$B" check -j 1 --schedule 'k_gemm=serial nofma tile(1,7)' --schedule 'k_gemm_1=tile(16,64)' \
	"$MODELS/mlp" > "$T/out" 2>&1 || fail "check mlp: $(cat "$T/out")"
grep -q '^PASS mlp' "$T/out" || fail "check mlp: $(cat "$T/out")"
"$B" check -j 1 --target gpu --schedule 'k_gemm=nomma' --schedule 'k_softmax=grid(0,2,64)' \
	--schedule 'k_maxpool=grid(0,1,32)' "$MODELS/lenet" > "$T/out" 2>&1 || fail "check gpu lenet: $(cat "$T/out")"
grep -q '^PASS lenet' "$T/out" || fail "check gpu lenet: $(cat "$T/out")"

# errors: exit status 1, the kernel, the column, what was expected
bad() {  # expected-substring args...
	want=$1; shift
	"$B" "$@" > /dev/null 2> "$T/err"
	rc=$?
	[ $rc -eq 1 ] || fail "$*: exit status $rc, expected 1"
	grep -qF -- "$want" "$T/err" || fail "$*: '$(cat "$T/err")' lacks '$want'"
}
bad "--schedule: column 17: kernel k_gemm: expected ',' or ')'" --emit=c --schedule 'k_gemm=tile(4,16' "$L"
bad "no kernel named 'k_nope'" --emit=c --schedule 'k_nope=fma' "$L"
bad "kernel k_softmax: step 'tile(4,4)' does not apply" --emit=c --schedule 'k_softmax=tile(4,4)' "$L"
bad "kernel k_gemm: step 'async' cannot be built" --target gpu --emit=kernels --schedule 'k_gemm=async' "$L"
bad "not KERNEL=STEPS" --emit=c --schedule "$T/nosuchfile" "$L"
printf 'k_gemm: fma\nk_conv: tile(4,16) frob\n' > "$T/bad.s"
bad "$T/bad.s:2:20: kernel k_conv: unknown step 'frob'" --emit=c --schedule "$T/bad.s" "$L"
printf 'k_gemm: fma\nk_gemm: nofma\n' > "$T/bad.s"
bad "$T/bad.s:2:1: kernel k_gemm: given a schedule twice" --emit=c --schedule "$T/bad.s" "$L"
head -c 3000 /dev/urandom > "$T/bad.s"
"$B" --emit=c --schedule "$T/bad.s" "$L" > /dev/null 2>&1
[ $? -le 2 ] || fail "random bytes as a schedule file crashed burncc"
echo "schedule: ok"

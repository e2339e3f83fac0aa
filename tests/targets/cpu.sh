#!/bin/sh
# cpu.sh BURNCC MODELS GEMM_CASES - the CPU descriptions (--cpu NAME):
#  - --emit=schedule shows each one's register tile (avx512 8x32, the
#    default; avx2 6x16; generic 4x16), native is one of them (the one
#    --help names), and the C of each differs from the others;
#  - the header names the description and the flags to build with, and
#    --stats its name;
#  - an unknown name and a target --cpu does not apply to are usage
#    errors that list the choices / name the target;
#  - with each description lenet, mlp, squeezenet1_1 and the GEMM and
#    Conv cases of tests/gemm/cases (rest rows and columns, panels,
#    implicit Convs) match their references, on c built with the
#    description's -march where this machine runs it (-O1 where not), on
#    llvm when built, and on c-freestanding for generic.
set -u
B=$1 MODELS=$2 CASES=$3
T=$(mktemp -d "${TMPDIR:-/tmp}/burncc-cpu-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
L=$MODELS/lenet/model.onnx

"$B" --help > "$T/help" || fail "--help"
native=$(sed -n 's/^CPU descriptions (--cpu NAME; native here: \(.*\)):$/\1/p' "$T/help")
[ -n "$native" ] || fail "--help names no native CPU description"

tile() {  # NAME TILE: lenet's k_gemm under --cpu NAME has TILE
	"$B" --cpu "$1" --emit=schedule "$L" > "$T/s" || fail "--cpu $1 --emit=schedule"
	grep -qx "k_gemm: fma $2" "$T/s" || fail "--cpu $1: k_gemm is not $2: $(grep k_gemm "$T/s")"
}
"$B" --emit=schedule "$L" | grep -qx 'k_gemm: fma tile(8,32)' || fail "the default tile is not 8x32"
tile avx512 'tile(8,32)'
tile avx2 'tile(6,16)'
tile generic 'tile(4,16)'
"$B" --cpu native --emit=schedule "$L" > "$T/sn" || fail "--cpu native"
"$B" --cpu "$native" --emit=schedule "$L" > "$T/sd" || fail "--cpu $native"
cmp -s "$T/sn" "$T/sd" || fail "--cpu native is not --cpu $native, as --help says"
# the dot lanes reach the other kernels too: SqueezeNet's global pool
S=$MODELS/squeezenet1_1/model.onnx
"$B" --emit=schedule "$S" | grep -qx 'k_globalaveragepool: threads(0) dot(8)' ||
	fail "the default k_globalaveragepool is not dot(8)"
"$B" --cpu generic --emit=schedule "$S" | grep -qx 'k_globalaveragepool: threads(0) dot(4)' ||
	fail "--cpu generic: k_globalaveragepool is not dot(4)"
"$B" --emit=c "$L" > "$T/d.c"
"$B" --cpu avx512 --emit=c "$L" > "$T/avx512.c"
cmp -s "$T/d.c" "$T/avx512.c" || fail "--cpu avx512 is not the default's C"
for d in avx2 generic; do
	"$B" --cpu $d --emit=c "$L" > "$T/$d.c" || fail "--cpu $d --emit=c"
	cmp -s "$T/d.c" "$T/$d.c" && fail "--cpu $d gives the default's C"
done
cmp -s "$T/avx2.c" "$T/generic.c" && fail "--cpu avx2 and generic give the same C"

"$B" --cpu avx2 "$L" -o "$T/m.c" --name m || fail "--cpu avx2 -o"
grep -q '^#define M_BURNCC_CPU "avx2"$' "$T/m.h" || fail "the header does not name avx2"
grep -q -- '-march=x86-64-v3' "$T/m.h" || fail "the header does not say -march=x86-64-v3"
"$B" --cpu generic --stats "$L" | grep -q '"cpu": "generic"}' || fail "--stats has no cpu"
"$B" --freestanding --cpu generic --stats "$L" | grep -q '"cpu": "generic"}' ||
	fail "--freestanding --cpu generic"

bad() {  # expected-substring args...: a usage error (2) saying it
	want=$1; shift
	"$B" "$@" > /dev/null 2> "$T/err"
	rc=$?
	[ $rc -eq 2 ] || fail "$*: exit status $rc, expected 2"
	grep -qF -- "$want" "$T/err" || fail "$*: '$(cat "$T/err")' lacks '$want'"
}
bad "unknown --cpu 'avx9': the choices are native, avx512, avx2, generic" --cpu avx9 --stats "$L"
bad "--cpu is for the CPU targets" --target gpu --cpu avx2 --stats "$L"
bad "--cpu is for the CPU targets" --target wasm --cpu avx2 --stats "$L"
bad "unknown --cpu" check --cpu sse9 "$MODELS/lenet"
bad "--cpu is for the CPU targets" check --target gpu --cpu avx2 "$MODELS/lenet"

# the flags a description's C is built with, if this machine runs them
has() { grep -qw "$1" /proc/cpuinfo 2>/dev/null; }
cflags() {
	case $1 in
	avx512) has avx512f && has avx512bw && has avx512vl && has avx512dq && echo -march=x86-64-v4 ;;
	avx2) has avx2 && has fma && has bmi2 && echo -march=x86-64-v3 ;;
	esac
}
targets=c
grep -q '^  llvm ' "$T/help" && targets="c llvm"
for d in avx512 avx2 generic; do
	f=$(cflags $d)
	f=${f:+-O2 $f}
	for t in $targets; do
		BURNCC_CFLAGS=${f:--O1} "$B" check -j 2 --target $t --cpu $d "$MODELS/lenet" \
			"$MODELS/mlp" "$MODELS/squeezenet1_1" "$CASES" > "$T/out" 2>&1 ||
			{ cat "$T/out"; fail "check --target $t --cpu $d (${f:--O1})"; }
		grep -q '^0 failed\|, 0 failed' "$T/out" || { cat "$T/out"; fail "check --cpu $d: failures"; }
		grep -q '^PASS lenet' "$T/out" || { cat "$T/out"; fail "check --cpu $d: lenet did not pass"; }
		echo "check --target $t --cpu $d (${f:--O1}): $(tail -1 "$T/out")"
	done
done
"$B" check -j 2 --freestanding --cpu generic "$CASES" > "$T/out" 2>&1 ||
	{ cat "$T/out"; fail "check --freestanding --cpu generic"; }
# the train step for a description: other tiles than the default's, and
# ISO C that builds with that description's flags; bench takes it too
ex=$(cd "$(dirname "$0")/../../examples" && pwd)
"$B" train "$ex/mlp_train.burn" -o "$T/step_def.c" > /dev/null 2>&1 &&
"$B" train "$ex/mlp_train.burn" -o "$T/step_avx2.c" --cpu avx2 > /dev/null 2>&1 ||
	fail "train -o --cpu avx2"
cmp -s "$T/step_def.c" "$T/step_avx2.c" && fail "train -o --cpu avx2: the same C as the default"
${CC:-cc} -std=c99 -O1 -c -I"$T" "$T/step_avx2.c" -o "$T/step_avx2.o" 2> "$T/out" ||
	{ cat "$T/out"; fail "train -o --cpu avx2: the C does not build"; }
bad "unknown --cpu" train "$ex/mlp_train.burn" -o "$T/x.c" --cpu sse9
if grep -q '^  llvm ' "$T/help"; then
	"$B" bench "$MODELS/mlp/model.onnx" --cpu generic --runs 3 > "$T/out" 2>&1 &&
	grep -q '^median_ms:' "$T/out" || { cat "$T/out"; fail "bench --cpu generic"; }
fi
echo "cpu: ok"

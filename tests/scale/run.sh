#!/bin/bash
# run.sh BURNCC GEN_MODEL - scale and budget checks (ctest `scale`).
#
# gen_model writes each model here, so no big model is committed:
#   - deep chains (50,000 Relu; alternating Relu/Neg) compile: no pass
#     recurses once per node (a 20,000-Relu chain used to overflow the stack
#     in fusion's expression builder);
#   - compile time grows near-linearly: 200,000 vs 20,000 Relus, and 40,000
#     vs 4,000 alternating MatMul/Relu (a chain fusion cannot make one
#     kernel), each ratio of CPU time (user+sys, steadier than wall time on
#     a busy machine) at most RATIO (linear is 10, quadratic 100);
#   - LRN with size 2^62 is an error naming the attribute, not an endless
#     loop;
#   - a MatMul of two constant 1500x1500 matrices is not folded (over the
#     folding budget) but compiled as a kernel, quickly; a small one folds;
#   - an arena of three live 2^62-byte intermediates is an error, also when
#     --max-arena-bytes allows everything (the plan's sums would overflow).
# Prints ok/FAIL per check; exits non-zero if any failed.
set -u
if [ $# -ne 2 ]; then
	echo "usage: $0 path/to/burncc path/to/gen_model" >&2
	exit 2
fi
burncc=$1
gen=$2
RATIO=${RATIO:-30}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
pass=0
TIMEFORMAT='%U %S'

ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

# cputime MODEL ARGS...: compile, print user+sys seconds; status of burncc
cputime() {
	local t rc
	t=$( { time timeout 300 "$burncc" "$@" >/dev/null 2>"$tmp/err"; } 2>&1 )
	rc=$?
	echo "$t" | awk '{ s = $1 + $2; if (s < 0.05) s = 0.05; print s }'
	return $rc
}

# gen_model keeps its protobuf structs until exit: no leak check for it
# (under `make test-sanitize`)
gen_or_die() {
	ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" "$gen" "$@" ||
		{ echo "FAIL gen_model $*"; exit 1; }
}

# ---- deep chains ------------------------------------------------------
gen_or_die relu 50000 "$tmp/relu50k.onnx"
if timeout 300 "$burncc" "$tmp/relu50k.onnx" -o "$tmp/out.c" 2>"$tmp/err"; then
	ok "relu chain 50000 compiles"
else
	bad "relu chain 50000: exit $? $(head -c 300 "$tmp/err")"
fi
gen_or_die reluneg 50000 "$tmp/reluneg.onnx"
if timeout 300 "$burncc" --verify "$tmp/reluneg.onnx" -o "$tmp/out.c" 2>"$tmp/err"; then
	ok "relu/neg chain 50000 compiles with --verify"
else
	bad "relu/neg chain 50000: exit $? $(head -c 300 "$tmp/err")"
fi

# ---- near-linear scaling --------------------------------------------------
scaling() {   # KIND SMALL LARGE
	local a b r
	gen_or_die "$1" "$2" "$tmp/s.onnx"
	gen_or_die "$1" "$3" "$tmp/l.onnx"
	if ! a=$(cputime "$tmp/s.onnx" -o "$tmp/out.c") ||
	   ! b=$(cputime "$tmp/l.onnx" -o "$tmp/out.c"); then
		bad "$1 scaling: compile failed: $(head -c 300 "$tmp/err")"
		return
	fi
	r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", b / a }')
	if awk -v r="$r" -v m="$RATIO" 'BEGIN { exit !(r <= m) }'; then
		ok "$1 $2 -> $3 nodes: ${a}s -> ${b}s CPU, ratio $r <= $RATIO"
	else
		bad "$1 $2 -> $3 nodes: ${a}s -> ${b}s CPU, ratio $r > $RATIO"
	fi
}
scaling relu 20000 200000
scaling matmulrelu 4000 40000

# ---- attribute-driven loops ----------------------------------------------
gen_or_die lrn 4611686018427387904 "$tmp/lrn.onnx"
timeout 60 "$burncc" "$tmp/lrn.onnx" -o "$tmp/out.c" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "node 'lrn' (LRN): attribute 'size'" "$tmp/err"; then
	ok "LRN size 2^62 rejected: $(cat "$tmp/err")"
else
	bad "LRN size 2^62: exit $rc $(head -c 300 "$tmp/err")"
fi

# ---- folding budget ---------------------------------------------------
gen_or_die foldmm 1500 "$tmp/fold.onnx"
if t=$(cputime --stats "$tmp/fold.onnx") &&
   "$burncc" --stats "$tmp/fold.onnx" 2>/dev/null | grep -q '"kernels": 1,'; then
	if awk -v t="$t" 'BEGIN { exit !(t < 30) }'; then
		ok "1500x1500 constant MatMul compiled as a kernel in ${t}s CPU"
	else
		bad "1500x1500 constant MatMul took ${t}s CPU"
	fi
else
	bad "1500x1500 constant MatMul: not one kernel or failed"
fi
gen_or_die foldmm 20 "$tmp/fold20.onnx"
if "$burncc" --stats "$tmp/fold20.onnx" 2>/dev/null | grep -q '"kernels": 0,'; then
	ok "20x20 constant MatMul folded"
else
	bad "20x20 constant MatMul not folded"
fi
if "$burncc" --stats --max-fold-steps 1000 "$tmp/fold20.onnx" 2>/dev/null |
   grep -q '"kernels": 1,'; then
	ok "--max-fold-steps 1000 leaves the 20x20 MatMul a kernel"
else
	bad "--max-fold-steps 1000 did not stop folding"
fi

# ---- arena limit and overflow ------------------------------------------
gen_or_die bigplan 0x1000000000000000 "$tmp/plan.onnx"
for extra in "" "--max-arena-bytes 9223372036854775807"; do
	# shellcheck disable=SC2086 # extra: zero or two words
	timeout 60 "$burncc" --max-tensor-bytes 9223372036854775807 $extra \
		"$tmp/plan.onnx" -o "$tmp/out.c" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q "arena of intermediates needs more than" "$tmp/err"; then
		ok "three 2^62-byte intermediates ${extra:-(default limit)}: rejected"
	else
		bad "three 2^62-byte intermediates ${extra}: exit $rc $(head -c 300 "$tmp/err")"
	fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/bin/sh
# gpu_kernels.sh BURNCC GEN_MODEL FUSION_DIR - issue 7's "done when": the
# gpu target's schedules, as --emit=kernels prints them, use several
# blocks, several threads, shared memory, barriers and, for a MatMul, the
# matrix-tile op (and cp.async where the shapes allow it); reductions use
# subgroup reductions.  The checker is also run on doctored kernels (one
# thread, one block, no barrier, no tile op) and must refuse each, so a
# one-thread "schedule" cannot pass.
set -u
B=$1 GEN=$2 FUSION=$3
T=$(mktemp -d "${TMPDIR:-/tmp}/burncc-gpuk-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# check FILE WORD...: the largest block.x and thread.x extents are > 1,
# and each WORD occurs (shared: a shared buffer; the rest: a statement).
check() {
	f=$1; shift
	awk '
	/ block\.x/ { split($4, r, "\\.\\."); if (r[2] + 0 > b) b = r[2] + 0 }
	/ thread\.x/ { split($4, r, "\\.\\."); if (r[2] + 0 > t) t = r[2] + 0 }
	END { if (b < 2 || t < 2) { print "blocks " b ", threads " t; exit 1 } }
	' "$f" || return 1
	for w in "$@"; do
		case $w in
		shared) grep -q '^  buf b[0-9]*: [a-z0-9]*\[[0-9]*\] shared' "$f" || { echo "no shared buffer"; return 1; } ;;
		*) grep -q "^ *\\([a-z0-9.]* = \\)\\{0,1\\}$w\\b" "$f" || { echo "no $w"; return 1; } ;;
		esac
	done
	return 0
}

# gen_model keeps its protobuf structs until exit: no leak check for it
ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" "$GEN" mm 64 "$T/mm.onnx" || fail "gen_model mm"
"$B" --target gpu --emit=kernels "$T/mm.onnx" > "$T/mm.k" || fail "--emit=kernels mm"
check "$T/mm.k" shared barrier tilemma tileload tilestore cpasync cpwait ||
	fail "MatMul: $(cat "$T/mm.k")"
"$B" kir "$T/mm.k" > /dev/null 2>&1 || fail "the MatMul kernel does not parse back"

# RMSNorm's 4 rows of 64: by default a subgroup a row (8 rows a block:
# one block, lane exchanges, no barrier); a block a row asked for
"$B" --target gpu --emit=kernels "$FUSION/rmsnorm_composed/model.onnx" > "$T/rms1.k" ||
	fail "--emit=kernels rmsnorm"
grep -q 'sgreduce' "$T/rms1.k" && grep -q 'lane' "$T/rms1.k" &&
	! grep -q 'barrier' "$T/rms1.k" || fail "rmsnorm, a subgroup a row: $(cat "$T/rms1.k")"
"$B" --target gpu --emit=kernels --schedule "k_fused_reduce=rows(0,4,64)" \
	"$FUSION/rmsnorm_composed/model.onnx" > "$T/rms.k" || fail "--emit=kernels rmsnorm rows(0,4,64)"
check "$T/rms.k" shared barrier sgreduce || fail "rmsnorm: $(cat "$T/rms.k")"

# the checker bites
sed 's/in 0\.\.\([0-9]*\) thread\.x/in 0..1 thread.x/' "$T/mm.k" > "$T/one_thread.k"
check "$T/one_thread.k" shared barrier tilemma > /dev/null && fail "a one-thread schedule passes"
sed 's/in 0\.\.\([0-9]*\) block\.x/in 0..1 block.x/' "$T/mm.k" > "$T/one_block.k"
check "$T/one_block.k" shared barrier tilemma > /dev/null && fail "a one-block schedule passes"
grep -v 'barrier' "$T/mm.k" > "$T/no_barrier.k"
check "$T/no_barrier.k" shared barrier tilemma > /dev/null && fail "no barrier passes"
grep -v 'tilemma' "$T/mm.k" > "$T/no_mma.k"
check "$T/no_mma.k" shared barrier tilemma > /dev/null && fail "no tile op passes"
sed 's/ shared rw/ local rw/' "$T/mm.k" > "$T/no_shared.k"
check "$T/no_shared.k" shared barrier tilemma > /dev/null && fail "no shared memory passes"
echo "ok"

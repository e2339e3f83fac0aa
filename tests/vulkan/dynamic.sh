#!/bin/sh
# dynamic.sh BURNCC NODE_DIR MODELS_DIR XFAIL EVERY [CASE_DIR...]
#
# Run-time batch on the vulkan target: `burncc check --dynamic --target
# vulkan` compiles each case with its first input's leading dim symbolic
# (peeled: each kernel's items are workgroups along y, the dim's value
# pushed as a push constant at dispatch) and runs it on a Vulkan device
# (lavapipe in CI) at the data's value.  The models of MODELS_DIR must all
# pass or be refused (lenet, mlp and squeezenet1_1 must pass), then every
# EVERY-th node case and the CASE_DIRs: no failure.  Without a Vulkan
# loader or device it says so and exits 77: skipped, not passed.
#
# The whole node suite (EVERY 1; lavapipe, 2 shared cores, 423 s):
#   burncc check --dynamic --target vulkan -j 1 --quiet-pass \
#     --xfail tests/conformance/xfail.txt ../shared/onnx-tests/node \
#     ../shared/models tests/dynamic/merge_rows tests/dynamic/gemm_rows \
#     tests/dynamic/pool_items
# gave 849 passed, 0 failed, 923 refused by --dynamic: node 843 and 922,
# models 3 passed and bert_tiny refused (a Shape of the batch), the three
# dynamic cases passed (docs/BENCHMARKS.md); this test (EVERY 6): ~42 s.
burncc=$1 node=$2 models=$3 xfail=$4 every=$5
shift 5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/burncc-vkdyn-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# is there a device?  (a one-node model of the suite through the target)
probe=$node/test_add
[ -d "$probe" ] || probe=$(ls -d "$node"/*/ | head -1)
if ! "$burncc" check --target vulkan "$probe" >"$tmp/probe.log" 2>&1; then
	if grep -q "no Vulkan\|unknown target\|lacks" "$tmp/probe.log"; then
		echo "SKIPPED: $(grep -m1 'FAIL\|unknown' "$tmp/probe.log")"
		exit 77
	fi
	cat "$tmp/probe.log"
	exit 1
fi

jobs=${JOBS:-2}
"$burncc" check --dynamic --target vulkan -j "$jobs" "$models" >"$tmp/models.log" 2>&1
rc=$?
cat "$tmp/models.log"
[ $rc -eq 0 ] || exit 1
for m in lenet mlp squeezenet1_1; do
	if [ -d "$models/$m" ] && ! grep -qx "PASS $m" "$tmp/models.log"; then
		echo "FAIL: model $m did not pass with a run-time batch"
		exit 1
	fi
done
# no --xfail: given lists, check --dynamic fails on a refusal they do not
# name, and vulkan refuses the sampled programs, which the lists (the C
# target's gaps, tests/conformance/xfail_dynamic.txt) leave out; XFAIL
# (tests/conformance/xfail.txt) is empty
[ -s "$xfail" ] && grep -qv '^#' "$xfail" && echo "note: $xfail is not empty and not used"
"$burncc" check --dynamic --target vulkan -j "$jobs" --quiet-pass --every "$every" \
	"$node" "$@" >"$tmp/node.log" 2>&1
rc=$?
grep -v '^REFUSED ' "$tmp/node.log"
[ $rc -eq 0 ] || exit 1
# passes, not only refusals: a target that refused everything would pass
tail -1 "$tmp/node.log" | grep -q '^[1-9][0-9]* passed, 0 failed' || exit 1
exit 0

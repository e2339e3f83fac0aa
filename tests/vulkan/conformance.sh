#!/bin/sh
# conformance.sh BURNCC NODE_DIR XFAIL UNSUPPORTED [EVERY [WHAT]]
#
# The ONNX node suite (every EVERY-th case) through `burncc check --target
# vulkan`: compiled, rendered to GLSL, compiled to SPIR-V by glslang,
# validated by SPIRV-Tools and run on a Vulkan device (lavapipe in CI)
# against the expected outputs.  Expected failures: XFAIL (the suite's,
# tests/conformance/xfail.txt) plus UNSUPPORTED (the vulkan target's
# gaps, each with the missing feature); an unexpected failure or pass
# fails the test.  WHAT=models: the directory holds models (no lists).
# Without a Vulkan loader or device it says so and exits 77: skipped,
# not passed.
burncc=$1 node=$2 xfail=$3 unsup=$4 every=${5:-1}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/burncc-vk-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# is there a device?  (a one-node model of the suite through the target)
probe=$node/test_add
[ -d "$probe" ] || probe=$(ls -d "$node"/*/ | head -1)
if ! "$burncc" check --target vulkan "$probe" >"$tmp/probe.log" 2>&1; then
	if grep -q "no Vulkan\|unknown target\|lacks" "$tmp/probe.log"; then
		echo "SKIPPED: $(grep -m1 'FAIL\|unknown' "$tmp/probe.log")"
		exit 77
	fi
fi
if [ "${6:-}" = models ]; then
	exec "$burncc" check --target vulkan -j "${JOBS:-2}" "$node"
fi
cat "$xfail" "$unsup" >"$tmp/xfail.txt"
exec "$burncc" check --target vulkan -j "${JOBS:-2}" --batch 20 --every "$every" \
	--quiet-pass --xfail "$tmp/xfail.txt" "$node"

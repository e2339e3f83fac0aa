#!/bin/sh
# spirv_val.sh BURNCC NODE_DIR XFAIL UNSUPPORTED [EVERY]
#
# Every shader the vulkan target emits for the node suite (each case not
# in XFAIL, or every EVERY-th) passes SPIRV-Tools' validator.  The cases
# go through `burncc check --target vulkan` (inputs frozen as the check
# does) with BURNCC_VULKAN_DEVICE=none: the target renders every kernel
# to GLSL, compiles it with glslang and validates each module
# (spvValidate) before it opens a device, so a case whose modules are all
# valid ends with "no Vulkan device"; a refusal names the shader and the
# validator's reason.  A case whose rendering is refused must be listed
# in UNSUPPORTED.  Needs no Vulkan device.  Without the vulkan target
# (built without glslang) it says so and exits 77.
burncc=$1 node=$2 xfail=$3 unsup=$4 every=${5:-1}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/burncc-spv-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

if ! "$burncc" --target vulkan --emit=spirv "$node/test_add/model.onnx" >"$tmp/probe" 2>&1; then
	echo "SKIPPED: $(tail -1 "$tmp/probe")"
	exit 77
fi
grep -q "OpEntryPoint GLCompute" "$tmp/probe" || { echo "FAIL: no entry point in test_add's SPIR-V"; exit 1; }
BURNCC_VULKAN_DEVICE=none "$burncc" check --target vulkan -j "${JOBS:-2}" --batch 20 \
	--every "$every" --xfail "$xfail" "$node" >"$tmp/check.log" 2>&1
grep '^FAIL ' "$tmp/check.log" | grep -v '(expected)$' >"$tmp/fail"
nok=$(grep -c 'no Vulkan device (BURNCC_VULKAN_DEVICE=none)' "$tmp/fail")
bad=0 nun=0
while read -r _ name rest; do
	name=${name%:}
	case "$rest" in *"BURNCC_VULKAN_DEVICE=none"*) continue ;; esac
	if grep -q "^$name	" "$unsup"; then
		nun=$((nun + 1))
	else
		echo "FAIL $name $rest"
		bad=$((bad + 1))
	fi
done <"$tmp/fail"
# nothing may pass: with no device, a pass would mean nothing ran
npass=$(grep -c '^PASS ' "$tmp/check.log")
echo "$nok cases: every SPIR-V module valid; $nun unsupported (listed); $bad failed; $npass ran without a device"
[ "$nok" -gt 0 ] && [ "$bad" -eq 0 ] && [ "$npass" -eq 0 ]

#!/bin/sh
# ptxas.sh BURNCC NODE_DIR XFAIL UNSUPPORTED [EVERY]
#
# Every ONNX node case that the gpu check passes (those not listed in
# XFAIL, the conformance expected-failure list), or every EVERY-th case,
# compiled for --target cuda by `burncc check` (which freezes the inputs a
# case needs constant) with BURNCC_DUMP, so each kernel's PTX module is
# written, then assembled by ptxas -arch=sm_90: GROUP modules to one
# ptxas run (their entries renamed apart), a failing group retried module
# by module to name the culprit.  A case whose rendering fails must be
# listed in UNSUPPORTED (the renderer's known gaps, with reasons).  Where
# a CUDA driver is present the cases also run on the GPU and must pass.
# Without ptxas ($PTXAS, ptxas on PATH, /usr/local/cuda/bin/ptxas) it says
# so and exits 77: skipped, not passed.  DYNAMIC=1: `burncc check
# --dynamic` (the first input's leading dim known at run time: each
# kernel's items along grid y, the dims as .u64 parameters); what that
# mode refuses is counted apart, not checked.
burncc=$1 node=$2 xfail=$3 unsup=$4 every=${5:-1}
dyn=
[ "${DYNAMIC:-0}" = 1 ] && dyn=--dynamic
GROUP=${GROUP:-80}
ptxas=${PTXAS:-}
[ -z "$ptxas" ] && ptxas=$(command -v ptxas 2>/dev/null)
[ -z "$ptxas" ] && ptxas=/usr/local/cuda/bin/ptxas
if [ ! -x "$ptxas" ]; then
	echo "SKIPPED: no ptxas (set PTXAS, or install the CUDA toolkit): PTX not checked"
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/burncc-ptxas-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
bad=0

BURNCC_DUMP=$tmp/dump "$burncc" check $dyn --target cuda -j "${JOBS:-2}" --every "$every" \
	--quiet-pass --xfail "$xfail" "$node" >"$tmp/check.log" 2>&1
# FAIL lines not expected: a rendering failure (listed as unsupported or
# not), or a run on a device that failed; "no CUDA driver" means rendered
grep '^FAIL ' "$tmp/check.log" | grep -v '(expected)$' | grep -v 'no CUDA driver' |
while read -r _ name rest; do
	name=${name%:}
	if grep -q "^$name	" "$unsup"; then
		echo "unsupported $name" >>"$tmp/unsup.log"
	else
		echo "FAIL $name $rest"
		echo x >>"$tmp/bad.log"
	fi
done
[ -f "$tmp/bad.log" ] && bad=$(wc -l <"$tmp/bad.log")
nun=0
[ -f "$tmp/unsup.log" ] && nun=$(wc -l <"$tmp/unsup.log")

# group the modules; entries renamed apart: every name in a kernel's
# module starts with the kernel's name (render_ptx.h)
g=0 k=0
for f in "$tmp"/dump/*/*.ptx; do
	[ -f "$f" ] || continue
	kname=$(basename "$f" .ptx | sed 's/^[0-9]*_//')
	if [ $((k % GROUP)) -eq 0 ]; then
		g=$((g + 1))
		: >"$tmp/group$g.s"
		echo ".version 7.8" >>"$tmp/group$g.s"
		echo ".target sm_90" >>"$tmp/group$g.s"
		echo ".address_size 64" >>"$tmp/group$g.s"
	fi
	grep -v '^\.version\|^\.target\|^\.address_size' "$f" |
		sed "s/\\b$kname/m${k}_$kname/g" >>"$tmp/group$g.s"
	echo "$f" >>"$tmp/group$g.list"
	k=$((k + 1))
done
j=1
while [ $j -le $g ]; do
	if ! "$ptxas" -arch=sm_90 "$tmp/group$j.s" -o "$tmp/out.cubin" 2>"$tmp/log"; then
		for f in $(cat "$tmp/group$j.list"); do
			if ! "$ptxas" -arch=sm_90 "$f" -o "$tmp/out.cubin" 2>"$tmp/log"; then
				echo "FAIL ${f#$tmp/dump/}: ptxas: $(head -3 "$tmp/log")"
				bad=$((bad + 1))
			fi
		done
	fi
	j=$((j + 1))
done
tail -1 "$tmp/check.log"
echo "$k kernel modules of the cases above (every $every), assembled in $g ptxas" \
     "runs; $nun cases known unsupported; $bad failures"
[ "$k" -gt 0 ] && [ "$bad" -eq 0 ]

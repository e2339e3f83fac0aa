#!/bin/sh
# The node suite through --freestanding (burncc check --freestanding: each
# module built with -ffreestanding -Wcast-align -Wfloat-equal, linked with
# -nostdlib, then run against the expected outputs), every EVERY-th case,
# against tests/conformance/xfail.txt plus the ops freestanding C lacks
# (tests/firmware/unsupported.txt).
#
#   conformance.sh BURNCC NODE_DIR XFAIL UNSUPPORTED EVERY WORKDIR
set -e
burncc=$1 node=$2 xfail=$3 unsup=$4 every=$5 work=$6
mkdir -p "$work"
cat "$xfail" "$unsup" > "$work/xfail_freestanding.txt"
exec "$burncc" check --freestanding -j 2 --every "$every" --quiet-pass \
	--xfail "$work/xfail_freestanding.txt" "$node"

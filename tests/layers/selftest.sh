#!/bin/sh
# selftest.sh - the layer check on the tree, then on a copy with an upward
# include seeded into ir/, which it must reject (so the check can fail).
here=$(dirname "$0")
src=${1:-$here/../..}
"$here/check_layers.sh" "$src" || exit 1
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/ir" "$src/passes" "$tmp/"
printf '#include "../passes/passes.h"\n' >> "$tmp/ir/graph.c"
if "$here/check_layers.sh" "$tmp" >/dev/null; then
	echo "selftest: a seeded upward include was not found"
	exit 1
fi
echo "selftest: the seeded upward include was found"

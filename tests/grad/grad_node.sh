#!/bin/sh
# grad_node.sh BURNCC OPS_DEF NODE_DIR NODE_INDEX XFAIL [check options]
#
# `burncc check --grad` over the node cases of the differentiable ops: the
# cases (node_index.tsv, column main_op) whose op has a gradient rule in
# the op table (a grad_* entry in ir/ops.def's grad column), against the
# expected-failure list.  Fails on an unexpected failure or pass.
set -eu
burncc=$1 opsdef=$2 node=$3 index=$4 xfail=$5
shift 5
tmp=${TMPDIR:-/tmp}/grad_node.$$
trap 'rm -f "$tmp"' EXIT
sed -n 's/^OP(\([A-Za-z]*\),.*, grad_[a-z0-9_]*)$/\1/p' "$opsdef" > "$tmp"
[ -s "$tmp" ] || { echo "grad_node.sh: no grad_* rows in $opsdef" >&2; exit 2; }
cases=$(awk -F'\t' -v node="$node" 'NR == FNR { ok[$1] = 1; next }
	FNR > 1 && ok[$2] { print node "/" $1 }' "$tmp" "$index")
echo "$(echo "$cases" | wc -l) cases of $(wc -l < "$tmp") ops with a gradient rule"
# shellcheck disable=SC2086
exec "$burncc" check --grad --quiet-pass --xfail "$xfail" "$@" $cases

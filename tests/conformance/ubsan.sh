#!/bin/sh
# ctest conformance_ubsan: node cases built under UBSan (float-cast-overflow
# is not in gcc's or clang's -fsanitize=undefined) and, where they pass, run
# again on inputs of edge values (burncc check --extreme): the generated C
# must have no undefined behaviour.  For now the op families of integer
# arithmetic, casts, comparisons and padding (about 460 cases); the whole
# suite is the goal.  Usage: ubsan.sh BURNCC XFAIL NODE_DIR
set -e
burncc=$1 xfail=$2 node=$3
cd "$node"
cases=
for f in abs add argmax bitshift bitwise cast castlike clip constant_pad \
         convinteger cumsum div edge_pad erf gelu isinf isnan max min mod mul \
         neg pow qlinear quantize reduce_sum reflect_pad round sign sub sum; do
	for c in "test_$f" "test_$f"_*; do
		[ -d "$c" ] && cases="$cases $c"
	done
done
BURNCC_CFLAGS="-O0 -fsanitize=undefined,float-cast-overflow -fno-sanitize-recover=all" \
	exec "$burncc" check --quiet-pass --extreme --xfail "$xfail" $cases

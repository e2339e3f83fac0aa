#!/bin/sh
# dynamic_fake.sh BURNCC FAKE_CUDA_DIR DYNAMIC_DIR
#
# The cuda target's launches with a run-time batch (check --dynamic),
# against the stand-in driver (tests/ptx/fake_cuda.c: kernels do not run,
# so the outputs are wrong and the cases "fail"; what is checked is the
# launch path): every argument an entry declares is passed, and each
# peeled kernel's grid y is the batch of the data set, the launch list's
# dim expression evaluated at launch (merge_rows: N = 3; gemm_rows: N = 23,
# its first data set: a failed set ends the case).  Results on a GPU: ctest
# ptxas_dynamic where a driver is.
burncc=$1 fake=$2 dyn=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/burncc-fakedyn-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
FAKE_LOG=1 LD_LIBRARY_PATH="$fake" "$burncc" check --dynamic --target cuda \
	"$dyn/merge_rows" "$dyn/gemm_rows" >"$tmp/log" 2>&1
cat "$tmp/log"
bad=0
grep -q 'FAKE: .*NULL\|FAKE: no entry\|REFUSED' "$tmp/log" && bad=1
for want in 'k_relu np=3 grid=1x3 block=' 'k_softmax np=3 grid=1x3 block=' \
            'k_gemm np=[0-9]* grid=[0-9]*x23 block=' 'k_gemm_2 np=[0-9]* grid=1x23 block='; do
	if ! grep -q "FAKE launch $want" "$tmp/log"; then
		echo "FAIL: no launch matching '$want'"
		bad=1
	fi
done
[ $bad -eq 0 ] && echo "launches with the run-time grid y: ok"
exit $bad

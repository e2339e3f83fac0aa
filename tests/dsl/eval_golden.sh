#!/bin/sh
# eval_golden.sh BURNCC - run-time errors of .burn scripts: each
# tests/dsl/eval_errors/NAME.burn must fail `burncc run` (exit 1) with
# exactly the stderr of NAME.err: the position, the message and the caret.
# UPDATE=1 rewrites the expected files.
set -u
exe=${1:?usage: eval_golden.sh BURNCC}
exe=$(cd "$(dirname "$exe")" && pwd)/$(basename "$exe")
cd "$(dirname "$0")/eval_errors" || exit 2
fail=0 n=0
for f in *.burn; do
	exp=${f%.burn}.err
	out=$("$exe" run --no-cache "$f" 2>&1 >/dev/null); rc=$?
	if [ $rc -ne 1 ]; then echo "FAIL $f: exit $rc, expected 1: $out"; fail=1; continue; fi
	if [ "${UPDATE:-0}" = 1 ]; then printf '%s\n' "$out" > "$exp"; fi
	if [ "$out" != "$(cat "$exp" 2>/dev/null)" ]; then
		echo "FAIL $f: got"; printf '%s\n' "$out"; echo "expected"; cat "$exp"; fail=1
	fi
	n=$((n + 1))
done
echo "dsl_eval_errors: $n scripts, $([ $fail = 0 ] && echo ok || echo FAILED)"
exit $fail

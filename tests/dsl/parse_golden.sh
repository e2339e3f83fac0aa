#!/bin/sh
# parse_golden.sh DSL_PARSE - the .burn parser's golden files in
# tests/dsl/parse: each bad_*.burn must fail with exactly the message, source
# line and caret of its bad_*.err; each good_*.burn must parse, and its
# canonical print (good_*.out) must parse again and print the same.
# UPDATE=1 rewrites the expected files.
set -u
exe=${1:?usage: parse_golden.sh DSL_PARSE}
exe=$(cd "$(dirname "$exe")" && pwd)/$(basename "$exe")
dir=$(cd "$(dirname "$0")/parse" && pwd)
fail=0 n=0
cd "$dir" || exit 2
for f in bad_*.burn; do
	exp=${f%.burn}.err
	out=$("$exe" "$f" 2>&1) && { echo "FAIL $f: parsed, expected an error"; fail=1; continue; }
	if [ "${UPDATE:-0}" = 1 ]; then printf '%s\n' "$out" > "$exp"; fi
	if [ "$out" != "$(cat "$exp" 2>/dev/null)" ]; then
		echo "FAIL $f: got"; printf '%s\n' "$out"; echo "expected"; cat "$exp"; fail=1
	fi
	n=$((n + 1))
done
for f in good_*.burn; do
	exp=${f%.burn}.out
	out=$("$exe" "$f" 2>&1) || { echo "FAIL $f: $out"; fail=1; continue; }
	if [ "${UPDATE:-0}" = 1 ]; then printf '%s\n' "$out" > "$exp"; fi
	if [ "$out" != "$(cat "$exp" 2>/dev/null)" ]; then
		echo "FAIL $f: canonical print differs:"; printf '%s\n' "$out"; fail=1
	fi
	tmp=$(mktemp /tmp/dslgold.XXXXXX.burn)
	printf '%s\n' "$out" > "$tmp"
	again=$("$exe" "$tmp" 2>&1)
	rm -f "$tmp"
	if [ "$again" != "$out" ]; then
		echo "FAIL $f: the canonical print does not read back the same:"; printf '%s\n' "$again"; fail=1
	fi
	n=$((n + 1))
done
echo "dsl_parse_golden: $n files, $([ $fail = 0 ] && echo ok || echo FAILED)"
exit $fail

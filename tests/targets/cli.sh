#!/bin/sh
# cli.sh BURNCC MODEL CASE - the target options of the driver:
# --help lists the built-in targets, --target picks one (the default is c
# and gives the same C), a target without a renderer refuses to write C,
# gpu's kernels show their grid and `check --target gpu` runs them in the
# interpreter, and BURNCC_DUMP writes IR, schedule and source.
set -u
B=$1 MODEL=$2 CASE=$3
T=$(mktemp -d "${TMPDIR:-/tmp}/burncc-targets-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$B" --help > "$T/help" || fail "--help"
sed -n '/^Targets/,$p' "$T/help" > "$T/targets"
grep -q '^  c  *cpu ' "$T/targets" || fail "--help does not list target c"
grep -q '^  gpu  *gpu .*no renderer' "$T/targets" || fail "--help does not say gpu has no renderer"

"$B" --emit=c "$MODEL" > "$T/default.c" || fail "--emit=c"
"$B" --target c --emit=c "$MODEL" > "$T/c.c" || fail "--target c --emit=c"
cmp -s "$T/default.c" "$T/c.c" || fail "--target c differs from the default"

"$B" --target gpu --emit=kernels "$MODEL" > "$T/gpu.k" || fail "--target gpu --emit=kernels"
"$B" --emit=kernels "$MODEL" > "$T/c.k" || fail "--emit=kernels"
cmp -s "$T/gpu.k" "$T/c.k" && fail "the gpu description's tiles do not reach lowering"
"$B" --target gpu -o "$T/x.c" "$MODEL" 2> "$T/err"
[ $? -eq 2 ] || fail "--target gpu -o must be a usage error"
grep -q "no renderer" "$T/err" || fail "--target gpu -o: $(cat "$T/err")"
[ ! -e "$T/x.c" ] || fail "--target gpu wrote a file"
"$B" --target nosuch --stats "$MODEL" 2> /dev/null
[ $? -eq 2 ] || fail "an unknown target must be a usage error"

"$B" --target gpu --emit=kernels "$CASE/model.onnx" > "$T/gpu_case.k" || fail "gpu --emit=kernels"
grep -q '# grid: .*blocks=' "$T/gpu_case.k" || fail "--target gpu: no block/thread grid in --emit=kernels"
grep -q 'thread.x' "$T/gpu_case.k" || fail "--target gpu: no thread loop"
"$B" check --target gpu "$CASE" > "$T/gcheck" 2>&1 || fail "check --target gpu: $(cat "$T/gcheck")"
grep -q '^PASS' "$T/gcheck" || fail "check --target gpu ran nothing: $(cat "$T/gcheck")"
"$B" check --target c "$CASE" > "$T/check" 2>&1 || fail "check --target c: $(cat "$T/check")"
grep -q '^PASS' "$T/check" || fail "check --target c: $(cat "$T/check")"

BURNCC_DUMP="$T/dump" "$B" --stats "$MODEL" > "$T/stats" || fail "BURNCC_DUMP"
n=$(sed 's/.*"kernels": \([0-9]*\).*/\1/' "$T/stats")
for ext in kir sched c; do
	[ "$(ls "$T/dump" | grep -c "\.$ext\$")" -eq "$n" ] || fail "BURNCC_DUMP: not $n .$ext files"
done
grep -q '^target cpu' "$T/dump/000_"*.sched || fail "BURNCC_DUMP: schedule names no target"
grep -q '^static void' "$T/dump/000_"*.c || fail "BURNCC_DUMP: no rendered kernel"
BURNCC_DUMP="$T/dump2" "$B" check "$CASE" > /dev/null 2>&1 || fail "check with BURNCC_DUMP"
ls "$T/dump2/$(basename "$CASE")/"*.kir > /dev/null 2>&1 || fail "check: BURNCC_DUMP wrote nothing for the case"
echo "targets cli: ok"

#!/bin/sh
# run.sh BURNCC NPY_CHECK MODELS WORKDIR - `burncc run` end to end.
#   1. each model of MODELS (../shared/models) run on its test_data_set_0
#      inputs (.pb; lenet's also converted to .npy first), every output
#      .npy compared with output_K.pb by npy_check (burncc check's
#      tolerance), and, where /usr/bin/python3 has NumPy, loaded by
#      numpy.load with the expected shape (the writer checked by a reader
#      that is not ours);
#   2. mlp again with --target c (generated C, built and run), twice: the
#      second run finds the binary in the cache and calls no compiler;
#   3. bad inputs: each exits non-zero with a message naming the file or
#      the input.
set -u
burncc=$1 check=$2 models=$3 w=$4
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
rm -rf "$w" && mkdir -p "$w"
py=""
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then py=/usr/bin/python3; else
	echo "note: no NumPy: the .npy outputs are checked by npy_check alone"; fi

# run_model NAME [burncc options...]: run, compare each output
run_model() {
	m=$1; shift
	set -- "$@"
	ins=""
	for f in "$models/$m"/test_data_set_0/input_*.pb; do ins="$ins --input $f"; done
	if ! "$burncc" run "$models/$m/model.onnx" $ins --output "$w/$m" "$@" >"$w/$m.log" 2>&1; then
		fail "$m: burncc run: $(cat "$w/$m.log")"; return; fi
	compare "$m" "$w/$m"
}
# compare NAME DIR: every output_K.pb against DIR/<output name>.npy (the
# file names come from the summary lines: "NAME = tensor(...) -> PATH")
compare() {
	k=0
	for p in $(sed -n 's/.* -> \(.*\.npy\)$/\1/p' "$w/$1.log"); do
		e="$models/$1/test_data_set_0/output_$k.pb"
		if ! shape=$("$check" "$p" "$e" 2>&1); then
			fail "$1: $shape"; k=$((k + 1)); continue; fi
		if [ -n "$py" ]; then
			got=$($py -c "import numpy, sys; a = numpy.load(sys.argv[1]); print(','.join(map(str, a.shape)), a.dtype.byteorder in '<=|')" "$p" 2>&1)
			[ "$got" = "$shape True" ] || fail "$1: numpy.load($p): '$got', expected '$shape True'"
		fi
		k=$((k + 1))
	done
	[ "$k" -gt 0 ] || fail "$1: no output written"
	[ -e "$models/$1/test_data_set_0/output_$k.pb" ] && fail "$1: output_$k.pb not produced"
	echo "ok: $1 ($k outputs)"
}

for m in lenet mlp squeezenet1_1 bert_tiny; do
	[ -f "$models/$m/model.onnx" ] || { fail "$m: missing from $models"; continue; }
	run_model "$m"
done

# lenet from a .npy input (made by our writer; NumPy-made below when there)
"$check" --pb2npy "$models/lenet/test_data_set_0/input_0.pb" "$w/x.npy" || fail "pb2npy"
if [ -n "$py" ]; then
	$py -c "import numpy; a = numpy.load('$w/x.npy'); numpy.save('$w/x.npy', numpy.ascontiguousarray(a, dtype='<f4'))" ||
		fail "numpy cannot read our .npy input"
fi
mkdir -p "$w/npy"
if "$burncc" run "$models/lenet/model.onnx" --input "x=$w/x.npy" --output "$w/npy/lenet" >"$w/npy/lenet.log" 2>&1; then
	cp "$w/npy/lenet.log" "$w/lenet.log" && compare lenet "$w/npy/lenet"
else
	fail "lenet from .npy: $(cat "$w/npy/lenet.log")"
fi
mlp_in="$models/mlp/test_data_set_0/input_0.pb"
# the C target: emitted, built with $CC, run; the binary cached, so a
# second run calls no compiler (CC counts its calls)
mkdir -p "$w/c"
printf '#!/bin/sh\necho >>"%s/cc.calls"\nexec %s "$@"\n' "$w" "${CC:-cc}" >"$w/cc-count"
chmod +x "$w/cc-count"
for i in 1 2; do
	if CC=$w/cc-count "$burncc" run "$models/mlp/model.onnx" --input "$mlp_in" --target c \
	   --cache-dir "$w/cache" --output "$w/c/mlp$i" >"$w/mlp.log" 2>&1; then
		compare mlp "$w/c/mlp$i"
	else
		fail "mlp --target c: $(cat "$w/mlp.log")"
	fi
	calls=$(wc -l <"$w/cc.calls" 2>/dev/null || echo 0)
	[ "$i" = 1 ] && first=$calls
done
[ "$first" -gt 0 ] || fail "--target c: the compiler was not called"
[ "$calls" -eq "$first" ] && echo "ok: --target c: the second run called no compiler (cached)" ||
	fail "--target c: the second run called the compiler ($first, then $calls calls)"
cmp -s "$w/c/mlp1/19.npy" "$w/c/mlp2/19.npy" || fail "--target c: cached run differs"

# bad inputs: expect_error WHAT TEXT ARGS...: non-zero exit, TEXT in stderr
expect_error() {
	what=$1 text=$2; shift 2
	if "$burncc" run "$@" >"$w/err.out" 2>"$w/err.log"; then
		fail "$what: exit status 0"; return; fi
	grep -qF -- "$text" "$w/err.log" || { fail "$what: message lacks '$text': $(cat "$w/err.log")"; return; }
	echo "ok: $what: $(head -n 1 "$w/err.log")"
}
mlp=$models/mlp/model.onnx
expect_error "missing file" "$w/none.npy" "$mlp" --input "x=$w/none.npy"
expect_error "wrong shape" "expected f32[4, 784], got f32[2, 1, 28, 28]" \
	"$mlp" --input "x=$models/lenet/test_data_set_0/input_0.pb"
printf 'not numpy at all' >"$w/garbage.npy"
expect_error "corrupt npy (no magic)" "$w/garbage.npy: not a .npy file" "$mlp" --input "x=$w/garbage.npy"
"$check" --pb2npy "$mlp_in" "$w/mlp_x.npy"
head -c 1000 "$w/mlp_x.npy" >"$w/short.npy"
expect_error "corrupt npy (truncated data)" "$w/short.npy: 872 bytes of data" "$mlp" --input "x=$w/short.npy"
head -c 40 "$w/mlp_x.npy" >"$w/header.npy"
expect_error "corrupt npy (truncated header)" "$w/header.npy: truncated .npy header" "$mlp" --input "x=$w/header.npy"
sed 's/False/True /' "$w/mlp_x.npy" >"$w/fortran.npy"
expect_error "fortran order" "$w/fortran.npy: Fortran-order" "$mlp" --input "x=$w/fortran.npy"
sed "s/'<f4'/'>f4'/" "$w/mlp_x.npy" >"$w/big.npy"
expect_error "big-endian" "$w/big.npy: big-endian dtype '>f4'" "$mlp" --input "x=$w/big.npy"
sed "s/'<f4'/'<f8'/" "$w/mlp_x.npy" >"$w/f64.npy"
expect_error "wrong dtype" "$w/f64.npy: 12544 bytes of data, the header's shape and dtype say 25088" \
	"$mlp" --input "x=$w/f64.npy"
expect_error "missing input" "no --input NAME=FILE for 'attention_mask'" \
	"$models/bert_tiny/model.onnx" --input "$models/bert_tiny/test_data_set_0/input_0.pb"
expect_error "unknown input" "has no input 'y'" "$mlp" --input "y=$mlp_in"
head -c 100 "$mlp_in" >"$w/short.pb"
expect_error "corrupt pb" "$w/short.pb" "$mlp" --input "x=$w/short.pb"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ok"

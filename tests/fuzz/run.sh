#!/bin/sh
# run.sh BUILD [SECONDS] - build the libFuzzer targets into BUILD with clang
# (-fsanitize=fuzzer,address,undefined), seed their corpora and run each
# target for SECONDS (default 60), one after the other.  `make fuzz` calls
# this.  The corpora grow in BUILD/corpus/<target>; a crash, leak, timeout
# or out-of-memory is written to BUILD/findings/<target>-* and makes the
# script exit non-zero.  See docs/RELIABILITY.md.
set -eu
b=${1:?usage: run.sh BUILD [SECONDS]}
secs=${2:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
shared=$root/../shared
cc=${FUZZ_CC:-clang-19}
command -v "$cc" >/dev/null 2>&1 || cc=clang-14

san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
cmake -S "$root" -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBURN_FUZZ=ON \
	-DCMAKE_C_COMPILER="$cc" \
	-DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link $san -fno-omit-frame-pointer" \
	-DCMAKE_EXE_LINKER_FLAGS="$san" >/dev/null
cmake --build "$b" -j 2 --target fuzz_onnx fuzz_ir_text fuzz_names fuzz_names_replay fuzz_kir_text fuzz_dsl fuzz_safetensors ir_seeds burncc

# Seeds: the real models, every 8th node-conformance model, the malformed
# corpus and the regressions; for the IR parser, the full IR text of all of
# these that compile.
mkdir -p "$b/seeds/onnx" "$b/seeds/ir_text" "$b/seeds/names" "$b/names_models" \
	"$b/corpus/onnx" "$b/corpus/ir_text" "$b/corpus/names" "$b/findings"
mkdir -p "$b/seeds/kir_text" "$b/corpus/kir_text"
# the .burn parser: the examples and the parser's golden files; the
# safetensors reader: its regressions
mkdir -p "$b/seeds/dsl" "$b/corpus/dsl" "$b/seeds/safetensors" "$b/corpus/safetensors"
cp "$root"/examples/*.burn "$root"/tests/dsl/parse/*.burn "$b/seeds/dsl/"
cp "$root"/tests/fuzz/regressions/safetensors/* "$b/seeds/safetensors/"
if [ ! -e "$b/seeds/.done" ]; then
	for m in "$shared"/models/*/model.onnx; do
		cp "$m" "$b/seeds/onnx/model_$(basename "$(dirname "$m")").onnx"
	done
	i=0
	for m in "$shared"/onnx-tests/node/*/model.onnx; do
		[ $((i % 8)) -eq 0 ] && cp "$m" "$b/seeds/onnx/$(basename "$(dirname "$m")").onnx"
		i=$((i + 1))
	done
	cp "$root"/tests/malformed/*.onnx "$b/seeds/onnx/"
	ASAN_OPTIONS=detect_leaks=0 "$b/tests/ir_seeds" "$b/seeds/ir_text" "$b"/seeds/onnx/*.onnx
	# fuzz_names edits these models (its inputs are edit lists, seeded
	# by its regressions): the four real ones and every 32nd node case.
	for m in "$shared"/models/*/model.onnx; do
		cp "$m" "$b/names_models/model_$(basename "$(dirname "$m")").onnx"
	done
	i=0
	for m in "$shared"/onnx-tests/node/*/model.onnx; do
		[ $((i % 32)) -eq 0 ] && cp "$m" "$b/names_models/$(basename "$(dirname "$m")").onnx"
		i=$((i + 1))
	done
	# kernel-IR text: --emit=kernels of the same models, and tests/kir
	for m in "$b"/seeds/onnx/*.onnx; do
		ASAN_OPTIONS=detect_leaks=0 "$b/burncc" --emit=kernels "$m" \
			>"$b/seeds/kir_text/$(basename "$m" .onnx).kir" 2>/dev/null ||
			rm -f "$b/seeds/kir_text/$(basename "$m" .onnx).kir"
	done
	cp "$root"/tests/kir/*.kir "$b/seeds/kir_text/"
	touch "$b/seeds/.done"
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export BURN_FUZZ_NAMES_SEEDS="$b/names_models"
fail=0
for t in onnx ir_text names kir_text dsl safetensors; do
	echo "fuzz: fuzz_$t for $secs s"
	"$b/tests/fuzz_$t" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=30 \
		-max_len=131072 -print_final_stats=1 \
		-artifact_prefix="$b/findings/$t-" \
		"$b/corpus/$t" "$b/seeds/$t" "$root/tests/fuzz/regressions/$t" \
		>"$b/fuzz_$t.log" 2>&1 || { fail=1; echo "fuzz: fuzz_$t FOUND something:"; }
	grep -E "^stat::|^#[0-9]+ *DONE|ERROR|SUMMARY" "$b/fuzz_$t.log" | tail -12
done
# The names corpus again, now building every generated module with cc
# (too slow inside the fuzzing loop): the generated C must compile.
n=$(ls "$b/corpus/names" | wc -l)
echo "fuzz: building the generated C of $n fuzz_names corpus entries"
BURN_FUZZ_CC=cc ASAN_OPTIONS=detect_leaks=0 "$b/tests/fuzz_names_replay" "$b/corpus/names" \
	>"$b/fuzz_names_cc.log" 2>&1 || { fail=1; echo "fuzz: generated C that does not compile:"; tail -20 "$b/fuzz_names_cc.log"; }
tail -1 "$b/fuzz_names_cc.log"
ls "$b/findings"
exit $fail

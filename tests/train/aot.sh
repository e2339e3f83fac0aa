#!/bin/sh
# aot.sh BURNCC SRCDIR WORKDIR - the AOT train step in C (burncc train -o)
# against burncc train (the DSL's model, the llvm target or the
# interpreter), on Fashion-MNIST ($BURNCC_FASHION_MNIST, default the Debian
# package's /usr/share/datasets/fashion-mnist; absent, or no C compiler:
# the test did not run, 77):
#   1. burncc train examples/mlp_train.burn -o step.c --eval-o step_eval.c,
#      built with examples/train_aot.c by $CC (default cc) with -O2
#      -march=native -Wall -Wextra -Werror;
#   2. 100 steps of Adam, batch 64, seed 3, on the first 6400 training
#      images, by both: every step's loss equal to 1e-4 (a wrong scalar,
#      initial value, shuffle or kernel differs by far more from the first
#      steps on), the accuracy on 1000 test images within 0.5 points;
#   3. SGD with momentum and a cosine schedule with warm-up, 40 steps: the
#      same (the emitted optimiser scalars, optim_scalars_c); this step is
#      written by `burncc MODEL --train ... -o`, the issue's spelling;
#   4. the CNN of examples/cnn_train.burn, 30 steps: the same;
#   5. -o with --load: a checkpoint's parameters, states and position as
#      the initial values: the losses of burncc train resumed from it;
#   6. the MLP with Dropout(0.5), 40 steps: the step draws the masks' noise
#      as burncc train does (the losses differ from those without it).
set -u
burncc=$1 src=$2 work=$3
data=${BURNCC_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
model=$src/examples/mlp_train.burn
cc=${CC:-cc}
if [ ! -r "$data/train-images-idx3-ubyte.gz" ]; then
	echo "no Fashion-MNIST at $data (dataset-fashion-mnist): did not run"
	exit 77
fi
if ! command -v "$cc" > /dev/null; then
	echo "no C compiler ($cc): did not run"
	exit 77
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
acc() { sed -n 's/.*test accuracy \([0-9.]*\)%.*/\1/p' "$1" | tail -1; }
limits="--train-limit 6400 --test-limit 1000 --epochs 1"
# The llvm target contracts a*b+c to an FMA where the host has one; the C
# step does (fmaf) where the compiler says FMA is fast (FP_FAST_FMAF): with
# -march=native.  Without the same contraction the two runs round apart
# and Adam amplifies it (8e-3 after 100 steps, against 2.4e-7 with it).
arch=${BURNCC_AOT_ARCH--march=native}

# build NAME [burncc train options]: the step and evaluation as C, and the driver
build() {
	name=$1; shift
	mkdir -p "$work/$name" || exit 1
	if [ "$name" = sgd ]; then   # the issue's spelling, burncc MODEL --train
		set -- "${mdl:-$model}" --train "$@"
	else
		set -- train "${mdl:-$model}" "$@"
	fi
	"$burncc" "$@" -o "$work/$name/step.c" --eval-o "$work/$name/step_eval.c" \
		2> "$work/$name.emit.err" || { bad "$name: burncc train -o: $(cat "$work/$name.emit.err")"; return 1; }
	$cc -O2 $arch -Wall -Wextra -Werror -I"$work/$name" "$src/examples/train_aot.c" \
		"$work/$name/step.c" "$work/$name/step_eval.c" -lz -lm -o "$work/$name/train_aot" \
		2> "$work/$name.cc.err" || { bad "$name: the C does not build: $(head -20 "$work/$name.cc.err")"; return 1; }
}

# compare NAME "OPTIONS FOR BOTH" [options for burncc train]: the two runs'
# losses and test accuracy
compare() {
	name=$1 both=$2; shift 2
	"$burncc" train "${mdl:-$model}" --data "$data" $both --no-dashboard \
		--losses "$work/$name.dsl.loss" "$@" > "$work/$name.dsl.out" 2> "$work/$name.dsl.err" ||
		{ bad "$name: burncc train: $(cat "$work/$name.dsl.err")"; return; }
	"$work/$name/train_aot" "$data" $both \
		--losses "$work/$name.aot.loss" > "$work/$name.aot.out" 2> "$work/$name.aot.err" ||
		{ bad "$name: train_aot: $(cat "$work/$name.aot.err")"; return; }
	n=$(wc -l < "$work/$name.aot.loss")
	[ "$n" -gt 0 ] && [ "$n" -eq "$(wc -l < "$work/$name.dsl.loss")" ] ||
		bad "$name: $n steps from C, $(wc -l < "$work/$name.dsl.loss") from burncc train"
	cut -d' ' -f1 "$work/$name.aot.loss" > "$work/$name.aot.steps"
	cut -d' ' -f1 "$work/$name.dsl.loss" | cmp -s - "$work/$name.aot.steps" ||
		bad "$name: the steps are numbered differently"
	d=$(paste "$work/$name.dsl.loss" "$work/$name.aot.loss" | awk '
		{ d = $3 - $6; if (d < 0) d = -d; if (d >= m) { m = d; at = $1 } }
		END { printf "%.3g %d", m, at }')
	a1=$(acc "$work/$name.dsl.out") a2=$(acc "$work/$name.aot.out")
	echo "$name: $n steps (from $(head -1 "$work/$name.aot.steps")), largest loss difference ${d% *} (step ${d#* }); test accuracy $a1% (burncc train), $a2% (C)"
	awk -v d="${d% *}" 'BEGIN { exit !(d <= 1e-4) }' || bad "$name: the losses differ by ${d% *} at step ${d#* }"
	awk -v a="${a1:-0}" -v b="${a2:-100}" 'BEGIN { e = a - b; exit !(e <= 0.5 && e >= -0.5) }' ||
		bad "$name: test accuracy ${a1:-none}% (burncc train) against ${a2:-none}% (C)"
}

build adam && compare adam "$limits --max-steps 100 --seed 3"

sgd="--optimizer sgd --lr 0.05 --momentum 0.9 --lr-schedule cosine --warmup 10"
build sgd $sgd --data "$data" $limits --max-steps 40 &&
	compare sgd "$limits --max-steps 40 --seed 3" $sgd

# the CNN (Conv, MaxPool and their gradients rendered as C), 30 steps
mdl=$src/examples/cnn_train.burn
build cnn && compare cnn "--train-limit 3200 --test-limit 500 --epochs 1 --max-steps 30 --seed 3"
mdl=

# Dropout(0.5) after fc2: STEP_train_step draws the masks' noise as burncc
# train does (from -o's --seed and the step), 40 steps; not the losses
# without it
mdl=$work/mlp_dropout.burn
sed -e 's/    fc3: Linear$/    fc3: Linear,\n    drop: Dropout/' \
	-e 's/let x = relu(self.fc2(x));/let x = self.drop(relu(self.fc2(x)));/' \
	-e 's/fc3: Linear(128, 10) }/fc3: Linear(128, 10), drop: Dropout(0.5) }/' "$model" > "$mdl"
grep -q 'self.drop(' "$mdl" || bad "the Dropout model was not made"
if build dropout --seed 3; then
	grep -q 'define STEP_TRAIN_NOISE 1$' "$work/dropout/step.h" || bad "dropout: STEP_TRAIN_NOISE is not 1"
	compare dropout "$limits --max-steps 40 --seed 3"
	head -40 "$work/adam.dsl.loss" | cmp -s - "$work/dropout.dsl.loss" &&
		bad "dropout: the losses are those without Dropout"
fi
mdl=

# resume: a checkpoint after one epoch of 3200 images (50 steps), then the
# second epoch from it, by both
short="--train-limit 3200 --test-limit 1000 --seed 3"
"$burncc" train "$model" --data "$data" $short --epochs 1 --no-dashboard \
	--save "$work/ck.safetensors" > /dev/null 2> "$work/ck.err" ||
	bad "checkpoint: $(cat "$work/ck.err")"
if build resume --load "$work/ck.safetensors"; then
	grep -q 'define STEP_TRAIN_START_STEP 50$' "$work/resume/step.h" || bad "resume: START_STEP is not 50"
	compare resume "$short --epochs 2" --load "$work/ck.safetensors"
fi

[ $fail -eq 0 ] && echo "PASS: the AOT train step" || exit 1

#!/bin/sh
# dsl_train.sh BURNCC SRCDIR WORKDIR - train() in a script (docs/DSL.md,
# "Training") against burncc train on the same model and seed.
#
#   1. bad calls, each an error at the line and column of the argument at
#      fault, exit 1: an unknown keyword, an unknown optimizer, a bad
#      number, an unknown metric, a model that is not a function, a
#      missing data directory;
#   2. on Fashion-MNIST ($BURNCC_FASHION_MNIST, default the Debian
#      package's /usr/share/datasets/fashion-mnist; absent: exit 77 after
#      1): examples/mlp_train.burn with train(main, DATA, ...) appended, run
#      by burncc run, gives every step's loss as burncc train with the same
#      options does (to 1e-6; they are the same program, so the same bits),
#      for Adam with a cosine schedule and warm-up, and for SGD with
#      Nesterov momentum, weight decay and clipping; the metrics train()
#      returns are the epoch line's; with Dropout(0.5) too (training mode:
#      other losses than without); burncc train on a script that calls
#      train() fails there: it sets no trainer.
set -u
burncc=$1 src=$2 work=$3
data=${BURNCC_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
model=$src/examples/mlp_train.burn
rm -rf "$work" && mkdir -p "$work" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
nl=$(($(wc -l < "$model") + 1))   # the line train() is appended at

# errors: script line, expected column, expected message part
err() {
	cp "$model" "$work/e.burn"
	printf '%s\n' "$1" >> "$work/e.burn"
	"$burncc" run "$work/e.burn" > "$work/e.out" 2>&1
	rc=$?
	head -1 "$work/e.out"
	[ $rc -eq 1 ] || bad "'$1': exit $rc, not 1"
	grep -qF "e.burn:$nl:$2: error: $3" "$work/e.out" ||
		bad "'$1': no 'e.burn:$nl:$2: error: $3' in: $(head -1 "$work/e.out")"
}
err 'train(main, "/d", epochz=1);' 19 "train: unknown keyword 'epochz'"
err 'train(main, "/d", epochs=1, optimizer="adagrad");' 29 \
	"train: optimizer sgd, adam, adamw or rmsprop, not 'adagrad'"
err 'train(main, "/d", lr="fast");' 19 "train: lr wants a number, got 'fast'"
err 'train(main, "/d", metrics=["loss", "f1"]);' 19 "unknown metric 'f1'"
err 'train(mlp, "/d");' 1 "train(model, data, ...) needs the model as a function"
err 'train(main, "/d", nesterov="yes");' 19 "train: nesterov is true or false"
err 'train(main, "/nonexistent");' 1 "train: /nonexistent/train-images-idx3-ubyte"
if [ ! -r "$data/train-images-idx3-ubyte.gz" ] && [ ! -r "$data/train-images-idx3-ubyte" ]; then
	echo "no Fashion-MNIST at $data (dataset-fashion-mnist): the training part did not run"
	exit 77
fi
# burncc train traces the script; train() in it has no trainer there
cp "$model" "$work/t.burn" && echo 'train(main, "/d");' >> "$work/t.burn"
"$burncc" train "$work/t.burn" --data "$data" > "$work/t.out" 2>&1
grep -qF "t.burn:$nl:1: error: train() runs under burncc run" "$work/t.out" ||
	bad "burncc train on a script calling train(): $(head -1 "$work/t.out")"


# same: name, train()'s keywords, burncc train's options
same() {
	name=$1 m=${mdl:-$model}
	cp "$m" "$work/$name.burn"
	printf 'let m = train(main, "%s", %s, losses="%s", metrics=["accuracy", "loss", "test_loss"]);\nprint(m);\n' \
		"$data" "$2" "$work/$name.dsl.loss" >> "$work/$name.burn"
	"$burncc" run "$work/$name.burn" > "$work/$name.dsl.out" 2> "$work/$name.dsl.err" ||
		{ bad "$name: burncc run: $(cat "$work/$name.dsl.err")"; return; }
	shift 2
	"$burncc" train "$m" --data "$data" --losses "$work/$name.cli.loss" "$@" \
		> "$work/$name.cli.out" 2> "$work/$name.cli.err" ||
		{ bad "$name: burncc train: $(cat "$work/$name.cli.err")"; return; }
	cat "$work/$name.dsl.out"
	n=$(wc -l < "$work/$name.cli.loss")
	[ "$n" -gt 0 ] && [ "$(wc -l < "$work/$name.dsl.loss")" -eq "$n" ] ||
		bad "$name: $n steps from burncc train, $(wc -l < "$work/$name.dsl.loss") from train()"
	paste "$work/$name.dsl.loss" "$work/$name.cli.loss" | awk -v nm="$name" '
		{ d = $3 - $6; if (d < 0) d = -d; if (d > 1e-6 || $1 != $4) { print nm ": step " $1 ": " $3 " vs " $6; bad = 1 } }
		END { exit bad }' || bad "$name: the losses differ"
	# the returned metrics (asked in another order than the lines') against
	# the last epoch line
	last=$(grep '^epoch' "$work/$name.cli.out" | tail -1)
	ret=$(grep '^\[\[' "$work/$name.dsl.out" | tr -d '[],')
	echo "$last" | awk -v r="$ret" '{
		split(r, v, " "); n = length(v) / 3;
		a = $13; sub("%", "", a);
		if ((v[2 * n] - $7) ^ 2 > 1e-8 || (v[3 * n] - $10) ^ 2 > 1e-8 || (100 * v[n] - a) ^ 2 > 1e-4) exit 1 }' ||
		bad "$name: train() returned '$ret', burncc train printed '$last'"
}

same adam 'epochs=2, max_steps=40, train_limit=1280, test_limit=256, seed=3, lr_schedule="cosine", warmup=5, dashboard=false' \
	--epochs 2 --max-steps 40 --train-limit 1280 --test-limit 256 --seed 3 --lr-schedule cosine --warmup 5 --no-dashboard
same sgd 'epochs=1, max_steps=25, train_limit=1600, test_limit=256, optimizer="sgd", lr=0.05, nesterov=true, weight_decay=1e-4, clip_norm=5' \
	--epochs 1 --max-steps 25 --train-limit 1600 --test-limit 256 --optimizer sgd --lr 0.05 --nesterov --weight-decay 1e-4 --clip-norm 5
# the MLP with Dropout(0.5) after fc2: training mode in both (the noise
# from the seed and the step), and not the losses without it
mdl=$work/mlp_dropout.burn
sed -e 's/    fc3: Linear$/    fc3: Linear,\n    drop: Dropout/' \
	-e 's/let x = relu(self.fc2(x));/let x = self.drop(relu(self.fc2(x)));/' \
	-e 's/fc3: Linear(128, 10) }/fc3: Linear(128, 10), drop: Dropout(0.5) }/' "$model" > "$mdl"
grep -q 'Dropout(0.5)' "$mdl" && grep -q 'self.drop(' "$mdl" || bad "the Dropout model was not made"
same dropout 'epochs=1, max_steps=25, train_limit=1600, test_limit=256' \
	--epochs 1 --max-steps 25 --train-limit 1600 --test-limit 256
mdl=
same nodropout 'epochs=1, max_steps=25, train_limit=1600, test_limit=256' \
	--epochs 1 --max-steps 25 --train-limit 1600 --test-limit 256
cmp -s "$work/dropout.dsl.loss" "$work/nodropout.dsl.loss" &&
	bad "Dropout(0.5) changed no loss: not active in training"
[ $fail -eq 0 ] && echo "dsl_train: OK"
exit $fail

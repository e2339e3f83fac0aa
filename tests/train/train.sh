#!/bin/sh
# train.sh BURNCC SRCDIR WORKDIR - burncc train, short enough for CI.
#
# On Fashion-MNIST ($BURNCC_FASHION_MNIST, default the Debian package's
# /usr/share/datasets/fashion-mnist; absent: the test did not run, 77):
#   1. Adam, 300 steps of batch 64 on the first 9600 training images: the
#      mean loss of the last 50 steps is under 0.7 of the first 50's, and the
#      accuracy on 1000 test images is at least 75% (a wrong gradient or
#      update stays near 10%: a sign flip, a missing step);
#   2. SGD with momentum, the same steps: at least 70%;
#   3. determinism: the same seed twice gives byte-identical losses (hex
#      floats), another seed different ones, and so do 1 and 2 threads
#      (BURN_THREADS; the MLP and 20 steps of the CNN);
#   4. checkpoints: 1 epoch, --save, --load, 1 more gives the losses of 2
#      epochs straight, byte for byte;
#   ($BURNCC_TRAIN_QUICK=1, the sanitizer build, where each compilation
#   takes most of a minute: only 1 and 5)
#   5. bad input: a truncated or corrupt gzip file, a file that is not IDX,
#      a missing directory, a label out of range, a model with the wrong
#      input size, a truncated checkpoint or one of another model or
#      optimiser, a NaN loss (the first node and op that made a NaN named;
#      --check-nan): exit 1 with a message, never a crash.
set -u
burncc=$1 src=$2 work=$3
data=${BURNCC_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
model=$src/examples/mlp_train.burn
if [ ! -r "$data/train-images-idx3-ubyte.gz" ]; then
	echo "no Fashion-MNIST at $data (dataset-fashion-mnist): did not run"
	exit 77
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# mean of column 3 over lines $2..$3 of file $1
mean() { awk -v a="$2" -v b="$3" 'NR >= a && NR <= b { s += $3; n++ } END { printf "%.6f", s / n }' "$1"; }
acc() { sed -n 's/.*test accuracy \([0-9.]*\)%.*/\1/p' "$1" | tail -1; }

run() {   # name, then options
	name=$1; shift
	"$burncc" train "$model" --data "$data" --train-limit 9600 --test-limit 1000 \
		--epochs 2 --losses "$work/$name.loss" "$@" \
		> "$work/$name.out" 2> "$work/$name.err"
	rc=$?
	cat "$work/$name.out"
	[ $rc -eq 0 ] || { bad "$name: exit $rc: $(cat "$work/$name.err")"; return; }
}

run adam --seed 3 --max-steps 300 --save "$work/ck.safetensors"
a=$(acc "$work/adam.out")
first=$(mean "$work/adam.loss" 1 50) last=$(mean "$work/adam.loss" 251 300)
echo "adam: loss $first -> $last, test accuracy $a%"
awk -v f="$first" -v l="$last" 'BEGIN { exit !(l < 0.7 * f) }' || bad "adam: the loss did not fall ($first -> $last)"
awk -v a="${a:-0}" 'BEGIN { exit !(a >= 75) }' || bad "adam: test accuracy ${a:-none}% < 75%"

if [ "${BURNCC_TRAIN_QUICK:-0}" = 1 ]; then
	echo "quick (sanitizer build): SGD, determinism and resume not run"
else
run sgd --seed 3 --max-steps 300 --optimizer sgd --lr 0.05 --momentum 0.9
a=$(acc "$work/sgd.out")
echo "sgd: test accuracy $a%"
awk -v a="${a:-0}" 'BEGIN { exit !(a >= 70) }' || bad "sgd: test accuracy ${a:-none}% < 70%"

# determinism
run det1 --seed 3 --max-steps 60
run det2 --seed 3 --max-steps 60
cmp -s "$work/det1.loss" "$work/det2.loss" || bad "two runs with seed 3 differ: $(diff "$work/det1.loss" "$work/det2.loss" | head -3)"
head -60 "$work/adam.loss" | cmp -s - "$work/det1.loss" || bad "the first 60 losses of seed 3 differ between runs of 300 and 60 steps"
run det4 --seed 4 --max-steps 60
cmp -s "$work/det1.loss" "$work/det4.loss" && bad "seeds 3 and 4 gave the same losses"
# threads split no sum: one and two threads give the same losses, the MLP
# and the CNN (its convolutions' images in slices on threads)
for m in mlp cnn; do
	for t in 1 2; do
		env BURN_THREADS=$t "$burncc" train "$src/examples/${m}_train.burn" --data "$data" \
			--train-limit 1280 --test-limit 64 --epochs 1 --seed 3 --max-steps 20 \
			--losses "$work/$m$t.loss" > "$work/$m$t.out" 2>&1 ||
			bad "$m, $t thread(s): $(cat "$work/$m$t.out")"
	done
	cmp -s "$work/${m}1.loss" "$work/${m}2.loss" ||
		bad "$m: 1 and 2 threads differ: $(diff "$work/${m}1.loss" "$work/${m}2.loss" | head -3)"
done

# checkpoints: 2 epochs straight = 1 epoch, --save, then --load and the
# second: the same losses, byte for byte
short() { "$burncc" train "$model" --data "$data" --train-limit 3200 --test-limit 640 --seed 5 "$@" > /dev/null 2> "$work/ck.err" || bad "checkpoint run $*: $(cat "$work/ck.err")"; }
short --epochs 2 --losses "$work/straight.loss"
short --epochs 1 --save "$work/ck1.safetensors"
short --epochs 2 --load "$work/ck1.safetensors" --losses "$work/resumed.loss"
[ -f "$work/ck1.safetensors.tmp" ] && bad "the checkpoint's temporary file was left"
tail -n 50 "$work/straight.loss" | cmp -s - "$work/resumed.loss" ||
	bad "resuming from the checkpoint changed the losses: $(tail -n 50 "$work/straight.loss" | diff - "$work/resumed.loss" | head -3)"
fi

# bad input: exit 1 and a message
badrun() {   # what, expected message part, then burncc train arguments
	what=$1 want=$2; shift 2
	"$burncc" train "$@" > "$work/bad.out" 2> "$work/bad.err"
	rc=$?
	if [ $rc -ne "${want_rc:-1}" ] || ! grep -q -- "$want" "$work/bad.err"; then
		bad "$what: exit $rc, stderr: $(cat "$work/bad.err")"
	else
		echo "ok $what: $(cat "$work/bad.err")"
	fi
}
d=$work/data
mkdir -p "$d"
for f in train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
	ln -sf "$data/$f.gz" "$d/$f.gz"
done
head -c 100000 "$data/train-images-idx3-ubyte.gz" > "$d/train-images-idx3-ubyte.gz"
badrun "truncated gzip" "data shorter" "$model" --data "$d"
gzip -dc "$data/train-images-idx3-ubyte.gz" | head -c 2000000 | gzip -c > "$d/train-images-idx3-ubyte.gz"
badrun "truncated data" "data shorter than the header" "$model" --data "$d"
{ gzip -dc "$data/train-images-idx3-ubyte.gz"; printf 'x'; } | gzip -c > "$d/train-images-idx3-ubyte.gz"
badrun "trailing bytes" "bytes after" "$model" --data "$d"
printf 'hello, not an IDX file' > "$d/train-images-idx3-ubyte.gz"
badrun "not IDX" "not an IDX file" "$model" --data "$d"
printf '\000\000\010\003\000\000\000\000\000\000\000\034\000\000\000\034' > "$d/train-images-idx3-ubyte.gz"
badrun "zero dim" "dim 0 is 0" "$model" --data "$d"
badrun "missing directory" "cannot open" "$model" --data "$work/nowhere"
# 64 images, one label 12 (for 10 classes)
{ printf '\000\000\010\003\000\000\000\100\000\000\000\034\000\000\000\034'; head -c 50176 /dev/zero; } > "$d/train-images-idx3-ubyte"
rm -f "$d/train-images-idx3-ubyte.gz" "$d/train-labels-idx1-ubyte.gz"
{ printf '\000\000\010\001\000\000\000\100'; head -c 10 /dev/zero; printf '\014'; head -c 53 /dev/zero; } > "$d/train-labels-idx1-ubyte"
badrun "label out of range" "label 10 is 12" "$model" --data "$d"
printf 'seed(1);\nlet l = Linear(100, 10);\nfn main(x: f32[64, 100]) { l(x) }\n' > "$work/wrong.burn"
badrun "wrong input size" "takes 100 features" "$work/wrong.burn" --data "$data"
printf 'seed(1);\nlet l = Linear(784, 1);\nfn main(x: f32[64, 784]) { l(x) }\n' > "$work/one.burn"
badrun "one class" "output must be f32 logits" "$work/one.burn" --data "$data"
badrun "checkpoint of another optimiser" "saved with another optimiser" "$model" --data "$data" --optimizer sgd --load "$work/ck.safetensors"
head -c 1000 "$work/ck.safetensors" > "$work/cut.safetensors"
badrun "truncated checkpoint" "cut.safetensors: safetensors: header" "$model" --data "$data" --load "$work/cut.safetensors"
printf 'seed(1);\nlet l = Linear(784, 10);\nfn main(x: f32[64, 784]) { l(x) }\n' > "$work/other.burn"
badrun "checkpoint of another model" "the model's is f32" "$work/other.burn" --data "$data" --load "$work/ck.safetensors"
# a NaN: the step and the first node and op that produced one (the step
# rerun unfused); --check-nan: a parameter the update made non-finite, at
# its step (an lr of 1e39 is infinite in f32), else the step after it
printf 'seed(1);\nlet l = Linear(784, 10);\nfn main(x: f32[64, 784]) { sqrt(l(x)) }\n' > "$work/nan.burn"
few="--data $data --train-limit 640 --test-limit 64 --no-dashboard"
badrun "NaN from an op" "loss is .*nan at step 1 .*made by node .*(op Sqrt)" "$work/nan.burn" $few
badrun "NaN in the update, --check-nan" "step 1 (epoch 1) made parameter .*non-finite.*made by node .*(op Mul)" \
	"$model" $few --optimizer sgd --momentum 0 --lr 1e39 --check-nan
badrun "NaN in the update" "loss is .*nan at step 2 .*the step read parameter .* holding" \
	"$model" $few --optimizer sgd --momentum 0 --lr 1e39
want_rc=2 badrun "bad option" "unknown option" "$model" --data "$data" --frobnicate 1
exit $fail

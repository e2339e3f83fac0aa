#!/bin/sh
# dash_tmux.sh BURNCC SRCDIR WORKDIR - burncc train's dashboard in a real
# terminal (tmux send-keys, capture-pane).
#
# A run of 5000 epochs of 10 steps (Fashion-MNIST, 640 training images,
# 64 test images), far more than the test waits for, with --save:
#   1. the dashboard is drawn: the title, the epoch and step with steps/s
#      and ETA, a progress bar that has advanced, the loss plot with its
#      axis and its points, the keys;
#   2. the keys switch the plot: 2 the accuracy, Tab the learning rate,
#      1 back to the loss;
#   3. q: the run stops, exit 0, a message naming the step, the checkpoint
#      written whole (no .tmp left);
#   4. the checkpoint, saved in the middle of an epoch, resumes there: the
#      losses of the quit run then the resumed one are those of one run,
#      byte for byte;
#   5. --no-dashboard on the terminal: the plain epoch lines.
# Waits poll the pane (up to 300 s each: a loaded machine or a sanitizer
# build is slow), never a fixed sleep.  Exit 77 (did not run) without
# tmux, without the data, or when burncc was built without ncurses.
set -u
burncc=$1 src=$2 work=$3
data=${BURNCC_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
model=$src/examples/mlp_train.burn
command -v tmux >/dev/null 2>&1 || { echo "dash_tmux: tmux not installed (sh tools/setup.sh): did not run"; exit 77; }
[ -r "$data/train-images-idx3-ubyte.gz" ] || { echo "dash_tmux: no Fashion-MNIST at $data: did not run"; exit 77; }
if "$burncc" train --help | grep -q 'no dashboard'; then
	echo "dash_tmux: burncc built without ncurses: did not run"
	exit 77
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
sock=burndash$$
step=0
cleanup() { tmux -L $sock kill-server 2>/dev/null; tmux -L ${sock}b kill-server 2>/dev/null; }
trap cleanup EXIT

opts="--data $data --train-limit 640 --test-limit 64 --seed 7"
# the pane runs a script: no quoting through tmux
cat > "$work/run.sh" <<EOF
#!/bin/sh
"$burncc" train "$model" $opts --epochs 5000 --save "$work/ck.safetensors" --losses "$work/dash.loss"
echo "TRAIN-EXITED rc=\$?"
sleep 600
EOF
chmod +x "$work/run.sh"
tmux -L $sock new-session -d -x 120 -y 40 "$work/run.sh"

pane() { tmux -L $sock capture-pane -p -t 0; }
expect() {   # extended regex, what
	step=$((step + 1))
	i=0
	while [ $i -lt 1500 ]; do
		if pane | grep -Eq -- "$1"; then echo "ok   $step: $2"; return 0; fi
		sleep 0.2
		i=$((i + 1))
	done
	echo "FAIL $step: $2: no line matching '$1' in:"
	pane
	exit 1
}
key() { tmux -L $sock send-keys -t 0 "$1"; }

expect '^burncc train .*mlp_train\.burn +\(adam lr 0\.001\)' 'the title'
expect '^epoch [0-9]+/5000  step [0-9]+/50000  [0-9.]+ steps/s  elapsed [0-9:]+  ETA [0-9:]+' 'epoch, step, steps/s, ETA'
expect '^\[#+\.+\] +[0-9.]+%' 'the progress bar has advanced'
expect '^epoch ([3-9]|[1-9][0-9]+)/' 'at least two epochs done'
expect 'test loss [0-9.]+  test accuracy [0-9.]+%  lr 0\.001' 'the numbers'
expect '^ +step +\+0-{20,}[0-9]+$' 'the plot axis, 0 to the last step'
expect '^ *[0-9.e+-]* +\|.*\*' 'the train loss plot has points'
expect '1 loss .*\* train loss  o test loss' 'the loss plot is shown'
key 2
expect 'o test accuracy %' 'key 2: the accuracy plot'
expect '^ *[0-9.e+-]* +\|.*o' '... with its points'
key Tab
expect '\* learning rate$' 'Tab: the learning-rate plot'
key 1
expect '\* train loss  o test loss' 'key 1: the loss plot again'
expect '^keys: Tab or 1-3 switch the plot, q quit' 'the keys line'
key q
expect 'TRAIN-EXITED rc=0' 'q: exit 0'
expect '^train: quit at step [0-9]+ \(epoch [0-9]+\): checkpoint saved to ' 'q: the message'
step=$((step + 1))
[ -s "$work/ck.safetensors" ] && [ ! -e "$work/ck.safetensors.tmp" ] ||
	{ echo "FAIL $step: no whole checkpoint after q"; ls -l "$work"; exit 1; }
echo "ok   $step: the checkpoint written"
n=$(pane | sed -n 's/^train: quit at step \([0-9]*\) .*/\1/p' | tail -1)
[ "$(wc -l < "$work/dash.loss")" -eq "$n" ] ||
	{ echo "FAIL: $n steps but $(wc -l < "$work/dash.loss") losses"; exit 1; }

# 4. resume from the q checkpoint (mid-epoch unless q fell on an epoch's
# last step): 20 more steps; the same as one run of n + 20
m=$((n + 20))
"$burncc" train "$model" $opts --epochs 5000 --max-steps $m --load "$work/ck.safetensors" \
	--losses "$work/resumed.loss" > "$work/resumed.out" 2>&1 || { echo "FAIL: resume: $(cat "$work/resumed.out")"; exit 1; }
"$burncc" train "$model" $opts --epochs 5000 --max-steps $m \
	--losses "$work/straight.loss" > "$work/straight.out" 2>&1 || { echo "FAIL: straight: $(cat "$work/straight.out")"; exit 1; }
step=$((step + 1))
if cat "$work/dash.loss" "$work/resumed.loss" | cmp -s - "$work/straight.loss"; then
	echo "ok   $step: quit at step $n, resumed: the losses of one run of $m steps"
else
	echo "FAIL $step: quit at step $n and resumed differ from one run:"
	cat "$work/dash.loss" "$work/resumed.loss" | diff - "$work/straight.loss" | head -5
	exit 1
fi
# 5. --no-dashboard in the terminal: plain lines (a second server)
tmux -L $sock kill-server 2>/dev/null
sock=${sock}b
cat > "$work/run2.sh" <<EOF
#!/bin/sh
"$burncc" train "$model" $opts --epochs 2 --no-dashboard
echo "TRAIN-EXITED rc=\$?"
sleep 600
EOF
chmod +x "$work/run2.sh"
tmux -L $sock new-session -d -x 120 -y 40 "$work/run2.sh"
expect '^epoch 2/2  steps 10  train loss [0-9.]+  test loss [0-9.]+  test accuracy' '--no-dashboard: the plain lines'
expect 'TRAIN-EXITED rc=0' '... and exit 0'
echo "dash_tmux: all $step steps passed"

#!/bin/sh
# repl_tmux.sh BURNCC - drive `burncc repl` from a terminal (tmux send-keys,
# capture-pane): define gelu_custom and a tensor, see the printed values,
# see :kernels report one kernel, make an error and go on, continue a
# multi-line function, interrupt a long computation with Ctrl-C and go on,
# :quit.  Exit 77 (skipped) when tmux is missing.
burncc=${1:?usage: repl_tmux.sh BURNCC}
command -v tmux >/dev/null 2>&1 || { echo "repl_tmux: SKIPPED: tmux not installed (sh tools/setup.sh)"; exit 77; }
sock=burnrepl$$
home=$(mktemp -d /tmp/burnrepl.XXXXXX)
step=0
cleanup() { tmux -L $sock kill-server 2>/dev/null; rm -rf "$home"; }
trap cleanup EXIT
# HOME: the history file goes to a scratch folder; the pane is wide so
# no line wraps
HOME=$home tmux -L $sock new-session -d -x 220 -y 60 "$burncc repl --no-cache; echo REPL-EXITED; sleep 30"
# (tmux takes an argument's final ';' for a command separator: a space
# after it keeps it)
send() { tmux -L $sock send-keys -t 0 -l "$1 "; tmux -L $sock send-keys -t 0 Enter; }
pane() { tmux -L $sock capture-pane -p -t 0 -S -2000; }
# wait until the pane matches the extended regex $1 (after $2 matches, if
# given); 60 s at most
expect() {
	step=$((step + 1))
	i=0
	while [ $i -lt 300 ]; do
		if pane | grep -Eq -- "$1"; then echo "ok   $step: $3"; return 0; fi
		sleep 0.2
		i=$((i + 1))
	done
	echo "FAIL $step: $3: no line matching '$1' in:"
	pane | grep -v '^$' | tail -40
	exit 1
}
expect '^burn>' '' 'the prompt'
send 'fn gelu_custom(x) { let x = x * ((x / SQRT_2).erf() + 1); x / 2 }'
send 'let x = tensor([-1.0, 0.0, 1.0, 2.0]);'
send 'gelu_custom(x)'
# gelu(-1) = -0.158655, gelu(1) = 0.841345, gelu(2) = 1.954500 (4 digits shown)
expect '0\.8413' '' 'gelu_custom(x) prints its values'
expect '1\.954' '' '... all of them'
send ':kernels'
expect 'last realisation: 1 kernel$' '' ':kernels shows one kernel'
send 'let y = x + undefined_name;'
expect "<repl>:1:13: error: unknown name 'undefined_name'" '' 'an error with its position'
expect '^ +\^$' '' '... and a caret'
send 'matmul(x, [1, 2, 3])'
expect 'error: .*(MatMul|matmul|shape)' '' 'a shape error'
send 'fn twice(a) {'
expect '^  \.\.\.' '' 'an open brace continues on the next line'
send '  a * 2 }'
send 'twice(x) + 0.25'
expect '4\.25' '' 'the multi-line function runs'
send ':time gelu_custom(rand([1000, 1000]))'
expect '^time: [0-9.]+ ms' '' ':time'
# Ctrl-C: three big matmuls (separate kernels, 137 GFLOP each: at 1600
# the JIT's GEMM finished them before the key arrived), interrupted in
# the first.
# A build without LLVM runs kernels in the interpreter, which checks for
# an interrupt only between kernels: the first matmul would run for an
# hour there, so the step does not run (and says so).
if [ -n "${BURNCC_NO_LLVM:-}" ]; then
	echo "SKIP Ctrl-C step: burncc built without LLVM (interpreted kernels): did not run"
else
send 'let a = rand([4096, 4096]); let b = matmul(matmul(matmul(a, a), a), a); print(reduce_sum(b, keepdims=false));'
sleep 0.5
tmux -L $sock send-keys -t 0 C-c
expect 'error: interrupted' '' 'Ctrl-C interrupts the computation'
fi
send 'x * 3 + 0.5'
expect '6\.5' '' 'the REPL goes on after the interrupt'
send ':quit'
expect 'REPL-EXITED' '' ':quit leaves'
echo "repl_tmux: all $step steps passed"

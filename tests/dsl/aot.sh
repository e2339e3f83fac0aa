#!/bin/sh
# aot.sh BURNCC WORKDIR - AOT from a script: `burncc tests/dsl/aot/ffn.burn
# -o aot.c` writes C that builds with -Wall -Wextra -Werror, its kernels
# are fused as an ONNX model's are (--emit=kernels: gelu_custom and the
# softmax in the last Linear's epilogue or one kernel), and run on an input
# it gives what `burncc run` computes eagerly for main(x) on the same x.
# Also: a main without a typed parameter is an error with the position.
set -eu
burncc=${1:?usage: aot.sh BURNCC WORKDIR}
burncc=$(cd "$(dirname "$burncc")" && pwd)/$(basename "$burncc")
work=${2:?usage: aot.sh BURNCC WORKDIR}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work"
"$burncc" "$here/aot/ffn.burn" -o aot.c --name aot
cc -std=c99 -O2 -Wall -Wextra -Werror -I. "$here/aot/driver.c" aot.c -lm -o aot
"$burncc" "$here/aot/ffn.burn" --emit=kernels --name aot > kernels.txt
nk=$(grep -c '^kernel ' kernels.txt || true)
echo "aot: $nk kernels"
# the eager run of the same script on a seeded input, with the input's bytes
cat "$here/aot/ffn.burn" > eager.burn
cat >> eager.burn <<'EOS'
let x = rand([4, 16], low=-2, high=2, seed=11);
print(x.tolist());
print(main(x).tolist());
EOS
"$burncc" run --no-cache eager.burn > eager.txt
/usr/bin/python3 - <<'EOP'
import json, struct, subprocess, sys
lines = open("eager.txt").read().strip().splitlines()
x, want = json.loads(lines[-2]), json.loads(lines[-1])
flat = [v for row in x for v in row]
open("in.bin", "wb").write(struct.pack("<%df" % len(flat), *flat))
got = [float(v) for v in subprocess.run(["./aot", "in.bin"], capture_output=True, text=True, check=True).stdout.split()]
wflat = [v for row in want for v in row]
assert len(got) == len(wflat) == 64, (len(got), len(wflat))
bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, wflat)) if abs(g - w) > 1e-5 + 1e-4 * abs(w)]
if bad:
    sys.exit("aot: AOT and eager differ: %r" % bad[:5])
print("aot: 64 outputs of the AOT build match the eager run")
EOP
# an untyped main is refused at its parameter
printf 'fn main(x) { x }\n' > untyped.burn
if "$burncc" untyped.burn -o u.c 2> err.txt; then echo "aot: untyped main compiled"; exit 1; fi
grep -q "untyped.burn:1:9: error: parameter 'x' of main needs a type" err.txt ||
	{ echo "aot: wrong error:"; cat err.txt; exit 1; }
echo "aot: ok"

#!/bin/sh
# ctest cuda_aot: `burncc MODEL --target cuda -o model.c` for the four
# models of ../shared/models; each host module is compiled as ISO C99
# (-pedantic -Werror) with tests/ptx/aot_main.c and linked with libburn,
# then run on the model's test inputs (run, run again, run_async + wait:
# the same bytes) and its outputs compared with ONNX Runtime's within
# the C target's f32 tolerance.  Without a CUDA driver the modules are
# still written, compiled and linked, and the test reports that it did
# not run them (exit 77).
#   aot.sh BURNCC BUILD_DIR SOURCE_DIR [MODELS_DIR] [PYTHON]
# AOT_CFLAGS: flags for the programs linked with libburn (a sanitized
# libburn needs its consumers built with the same runtime).
set -u
BURNCC=$1 BUILD=$2 SRC=$3
MODELS=${4:-$SRC/../shared/models}
PY=${5:-/usr/bin/python3}
CC=${CC:-cc}
XFLAGS=${AOT_CFLAGS:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$PY" -c 'import onnx, numpy' 2>/dev/null || { echo "SKIP: python3 with onnx and numpy absent"; exit 77; }
ran=0 built=0 fail=0
# hostile names: an initializer and inputs named to end a comment, start a
# directive and form a trigraph must stay inside comments (the module
# builds with -Werror and has no line starting with #define)
"$PY" - "$T/evil.onnx" <<'PYEOF'
import sys, numpy as np
from onnx import helper, TensorProto, numpy_helper, save
wn = 'w */ int evil; /* \n#define x'
w = numpy_helper.from_array(np.ones((4, 4), np.float32), name=wn)
n = helper.make_node('MatMul', ['x */ evil', wn], ['y??/'])
g = helper.make_graph([n], 'g', [helper.make_tensor_value_info('x */ evil', TensorProto.FLOAT, [4, 4])],
                      [helper.make_tensor_value_info('y??/', TensorProto.FLOAT, [4, 4])], [w])
save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), sys.argv[1])
PYEOF
if ! "$BURNCC" "$T/evil.onnx" --target cuda -o "$T/evil.c" 2> "$T/log" ||
   ! $CC $XFLAGS -std=c99 -pedantic -Wall -Wextra -Werror -I"$SRC/include" -c "$T/evil.c" -o "$T/evil.o" 2>> "$T/log" ||
   grep -q '^#define x' "$T/evil.c" "$T/evil.h"; then
	echo "FAIL hostile names: $(head -c 300 "$T/log")"; fail=1
else
	echo "PASS hostile names stay in comments"
fi
for m in mlp lenet squeezenet1_1 bert_tiny; do
	d=$MODELS/$m
	[ -f "$d/model.onnx" ] || { echo "FAIL $m: no $d/model.onnx"; fail=1; continue; }
	mkdir -p "$T/$m"
	if ! "$BURNCC" "$d/model.onnx" --target cuda -o "$T/$m/model.c" 2> "$T/$m/log"; then
		echo "FAIL $m: burncc: $(head -c 300 "$T/$m/log")"; fail=1; continue
	fi
	if ! $CC $XFLAGS -std=c99 -pedantic -Wall -Wextra -Werror -O1 -I"$SRC/include" -I"$T/$m" \
	     "$T/$m/model.c" "$SRC/tests/ptx/aot_main.c" -L"$BUILD" -lburn \
	     -Wl,-rpath,"$BUILD" -o "$T/$m/run" 2> "$T/$m/log"; then
		echo "FAIL $m: the module does not build: $(head -c 300 "$T/$m/log")"; fail=1; continue
	fi
	built=$((built + 1))
	# the test inputs as raw files, the outputs' names
	args=$("$PY" - "$d/test_data_set_0" "$T/$m" <<'PYEOF'
import glob, os, sys
import onnx
from onnx import numpy_helper
src, dst = sys.argv[1], sys.argv[2]
a = []
for i, p in enumerate(sorted(glob.glob(os.path.join(src, "input_*.pb")))):
    t = onnx.TensorProto(); t.ParseFromString(open(p, "rb").read())
    f = os.path.join(dst, "in%d.bin" % i); numpy_helper.to_array(t).tofile(f); a.append(f)
for i, p in enumerate(sorted(glob.glob(os.path.join(src, "output_*.pb")))):
    a.append(os.path.join(dst, "out%d.bin" % i))
print(" ".join(a))
PYEOF
)
	"$T/$m/run" $args 2> "$T/$m/log"
	rc=$?
	if [ $rc = 77 ]; then
		echo "not run $m: $(head -c 200 "$T/$m/log")"; continue
	elif [ $rc != 0 ]; then
		echo "FAIL $m: exit $rc: $(head -c 300 "$T/$m/log")"; fail=1; continue
	fi
	if "$PY" - "$d/test_data_set_0" "$T/$m" <<'PYEOF'
import glob, os, sys
import numpy as np, onnx
from onnx import numpy_helper
src, dst = sys.argv[1], sys.argv[2]
bad = 0
for i, p in enumerate(sorted(glob.glob(os.path.join(src, "output_*.pb")))):
    t = onnx.TensorProto(); t.ParseFromString(open(p, "rb").read())
    want = numpy_helper.to_array(t)
    got = np.fromfile(os.path.join(dst, "out%d.bin" % i), dtype=want.dtype).reshape(want.shape)
    if not np.allclose(got, want, rtol=1e-3, atol=1e-4):
        print("  output %d: max |diff| %g" % (i, float(np.max(np.abs(got.astype(np.float64) - want)))))
        bad = 1
sys.exit(bad)
PYEOF
	then
		echo "PASS $m"; ran=$((ran + 1))
	else
		echo "FAIL $m: outputs differ from ONNX Runtime's"; fail=1
	fi
done
[ $fail = 0 ] || exit 1
if [ $ran = 0 ]; then
	echo "SKIP: $built host modules written, compiled and linked; none run (no CUDA driver or GPU)"
	exit 77
fi
echo "$ran of 4 models ran on the GPU and match"

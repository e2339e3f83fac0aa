#!/bin/sh
# tests/diff/run.sh BUILD MODE [ARGS...]: run.py under a python3 that has
# onnx and numpy (Debian's python3-onnx, python3-numpy; tools/setup.sh
# installs them).  Without one the test says it did not run (exit 77,
# ctest's SKIP_RETURN_CODE).
here=$(dirname "$0")
for py in /usr/bin/python3 python3; do
	if "$py" -c 'import onnx, numpy' >/dev/null 2>&1; then
		exec "$py" "$here/run.py" "$@"
	fi
done
echo "tests/diff: no python3 with onnx and numpy: did not run" >&2
exit 77

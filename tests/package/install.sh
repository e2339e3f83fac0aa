#!/bin/sh
# install.sh BUILD_DIR SOURCE_DIR [CFLAGS] - the installed burncc, as a user
# gets it: `cmake --install` of this build into a prefix under a temporary
# directory, then
#   1. the installed files are there, and bin/burncc --version and
#      bin/burncc run (mlp) work from the prefix;
#   2. a C program built with `pkg-config --cflags --libs burncc` and
#   3. one built by CMake with find_package(burncc) (burncc::burn, then
#      burncc::burn_static)
# each add two tensors through the installed libburn and print the result,
# which is checked; 4. the installed Python module (lib/python3/dist-
# packages/burncc) runs mlp through the installed libburn.so.  CFLAGS: what a consumer of this build needs (the
# sanitizer runtime when libburn was built with -fsanitize).  Without
# pkg-config or cmake the step says it did not run and the test exits 77.
set -eu
b=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
xflags=${3:-}
t=$(mktemp -d "${TMPDIR:-/tmp}/burncc-install-XXXXXX")
trap 'rm -rf "$t"' EXIT
p=$t/prefix
notrun=""
cmake --install "$b" --prefix "$p" >"$t/install.log" 2>&1 ||
	{ cat "$t/install.log"; echo "FAIL: cmake --install"; exit 1; }
for f in bin/burncc include/burn.h lib/libburn.a lib/libburn.so \
         lib/pkgconfig/burncc.pc lib/pkgconfig/burn.pc \
         lib/cmake/burncc/burncc-config.cmake lib/cmake/burncc/burncc-config-version.cmake \
         lib/python3/dist-packages/burncc/__init__.py share/burncc/wasm/burncc.mjs; do
	[ -e "$p/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
"$p/bin/burncc" --version | grep -q '^burncc [0-9]' || { echo "FAIL: burncc --version"; exit 1; }
m=$src/../shared/models/mlp
if [ -f "$m/model.onnx" ]; then
	"$p/bin/burncc" run "$m/model.onnx" --input "$m/test_data_set_0/input_0.pb" \
		--output "$t/out" --quiet && [ -s "$t/out/19.npy" ] ||
		{ echo "FAIL: installed burncc run"; exit 1; }
	echo "ok: installed burncc --version, burncc run"
fi
cat >"$t/prog.c" <<'C'
#include <burn.h>
/* a + b through libburn: compiled by the JIT, read back and printed */
int main(void)
{
	burn_ctx *ctx;
	burn_tensor *a, *b, *c;
	float r[4];
	if (burn_ctx_create(NULL, &ctx))
		return 1;
	if (burn_arange(ctx, BURN_F32, 0, 4, 1, &a) || burn_full(ctx, BURN_F32, 1,
	    (const int64_t[]){ 4 }, 0.5, &b) || burn_add(ctx, a, b, &c) ||
	    burn_read(ctx, c, r, sizeof r)) {
		fprintf(stderr, "%s\n", burn_message(ctx));
		return 1;
	}
	burn_print(ctx, c, stdout, 0);
	burn_release(a);
	burn_release(b);
	burn_release(c);
	burn_ctx_destroy(ctx);
	return r[3] == 3.5f ? 0 : 1;
}
C
want="tensor([0.5, 1.5, 2.5, 3.5], shape=[4], dtype=f32)"
export XDG_CACHE_HOME=$t/cache
if command -v pkg-config >/dev/null; then
	export PKG_CONFIG_PATH=$p/lib/pkgconfig
	flags=$(pkg-config --cflags --libs burncc)
	cc $xflags -o "$t/prog_pc" "$t/prog.c" $flags
	out=$(LD_LIBRARY_PATH=$p/lib "$t/prog_pc")
	[ "$out" = "$want" ] || { echo "FAIL pkg-config: '$out'"; exit 1; }
	echo "ok: pkg-config --cflags --libs burncc ($flags): $out"
else
	notrun="$notrun pkg-config"
fi
if command -v cmake >/dev/null; then
	mkdir -p "$t/proj"
	cp "$t/prog.c" "$t/proj/prog.c"
	cat >"$t/proj/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(use_burncc C)
find_package(burncc 0.1 REQUIRED)
add_executable(prog prog.c)
target_link_libraries(prog burncc::burn)
add_executable(prog_static prog.c)
target_link_libraries(prog_static burncc::burn_static)
CM
	cmake -S "$t/proj" -B "$t/proj/build" -DCMAKE_PREFIX_PATH="$p" \
		-DCMAKE_C_FLAGS="$xflags" >"$t/cmake.log" 2>&1 &&
	cmake --build "$t/proj/build" >>"$t/cmake.log" 2>&1 ||
		{ cat "$t/cmake.log"; echo "FAIL: find_package(burncc) project"; exit 1; }
	for x in prog prog_static; do
		out=$("$t/proj/build/$x")
		[ "$out" = "$want" ] || { echo "FAIL find_package $x: '$out'"; exit 1; }
	done
	if ldd "$t/proj/build/prog_static" | grep -q libburn; then
		echo "FAIL: burncc::burn_static links libburn.so"; exit 1; fi
	echo "ok: find_package(burncc): burncc::burn and burncc::burn_static: $out"
else
	notrun="$notrun cmake"
fi
# the Python module, as installed, finds the installed libburn.so
# (not under the sanitizers: python3 would need their runtime preloaded)
if [ -z "$xflags" ] && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	out=$(cd "$t" && env -u BURNCC_LIBRARY PYTHONPATH="$p/lib/python3/dist-packages" \
		XDG_CACHE_HOME="$t/cache" /usr/bin/python3 -c '
import sys, numpy as np, burncc
m = burncc.load(sys.argv[1])
(y,) = m(np.ones(m.inputs[0].shape, np.float32))
print(burncc.__file__.startswith(sys.argv[2]), y.shape)' "$m/model.onnx" "$p") ||
		{ echo "FAIL: the installed Python module"; exit 1; }
	[ "$out" = "True (4, 10)" ] || { echo "FAIL: installed Python module: '$out'"; exit 1; }
	echo "ok: import burncc from $p/lib/python3/dist-packages: mlp -> (4, 10)"
fi
if [ -n "$notrun" ]; then
	echo "install.sh: no$notrun: those steps did not run"
	exit 77
fi
echo "ok: installed tree under a temporary prefix"

#!/bin/sh
# Install, from Debian's packages, whatever the build and the tests need and
# this machine lacks.  Safe to run again: it does nothing when all is there.
#   sh tools/setup.sh        what `make build/run/test` need
#   sh tools/setup.sh fuzz   also libFuzzer for clang-19 (`make fuzz` only)
set -e
need=""
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_hdr() { [ -f "/usr/include/$1" ]; }

have_cmd cc       || need="$need build-essential"
have_cmd make     || need="$need make"
have_cmd cmake    || need="$need cmake"
have_cmd protoc-c || need="$need protobuf-c-compiler"
have_cmd pkg-config || need="$need pkgconf"   # the package_install test
have_hdr protobuf-c/protobuf-c.h || need="$need libprotobuf-c-dev"
have_hdr criterion/criterion.h   || need="$need libcriterion-dev"
# the llvm target (codegen/llvm/): LLVM 19's C API and shared library
have_cmd llvm-config-19          || need="$need llvm-19-dev"
# the vulkan target: glslang's C interface, SPIRV-Tools, the Vulkan headers
# and loader, lavapipe (Mesa's Vulkan on the CPU) and vulkaninfo
have_hdr glslang/Include/glslang_c_interface.h || need="$need glslang-dev"
have_hdr spirv-tools/libspirv.h  || need="$need spirv-tools"
have_hdr vulkan/vulkan.h         || need="$need libvulkan-dev"
[ -f /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] || need="$need mesa-vulkan-drivers"
have_cmd vulkaninfo              || need="$need vulkan-tools"
# burncc repl's line editing and history (libedit), and its terminal test
have_hdr editline/readline.h     || need="$need libedit-dev"
have_cmd tmux                    || need="$need tmux"
# burncc train's terminal dashboard (ncurses) and its terminal test
have_hdr curses.h                || need="$need libncurses-dev"
# burncc train: gzip-compressed IDX through zlib; Fashion-MNIST (ctest train,
# bench/train.sh)
have_hdr zlib.h                  || need="$need zlib1g-dev"
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] ||
	need="$need dataset-fashion-mnist"
# freestanding C on an emulated Cortex-M4 (tests/firmware: ctest cortex_m4_*)
have_cmd arm-none-eabi-gcc       || need="$need gcc-arm-none-eabi"
[ -f /usr/lib/arm-none-eabi/newlib/libc.a ] || need="$need libnewlib-arm-none-eabi"
have_cmd qemu-system-arm         || need="$need qemu-system-arm"
# WebAssembly (burncc --target wasm -o X.wasm) and its browser test
# (tests/wasm): clang-19 with wasm-ld (lld-19), Debian's Chromium
have_cmd clang-19                || need="$need clang-19"
have_cmd wasm-ld-19              || need="$need lld-19"
have_cmd chromium                || need="$need chromium"
# ImageDecoder (passes/image.c): the decoders' headers; the libraries are
# opened at run time (dlopen), so burncc runs without them and says which
# one a format needs
[ -f /usr/include/jpeglib.h ]    || need="$need libjpeg62-turbo-dev"
[ -f /usr/include/png.h ]        || need="$need libpng-dev"
[ -f /usr/include/x86_64-linux-gnu/tiffio.h ] || [ -f /usr/include/tiffio.h ] ||
	need="$need libtiff-dev"
[ -f /usr/include/webp/decode.h ] || need="$need libwebp-dev"
ls /usr/include/openjpeg-2.*/openjpeg.h >/dev/null 2>&1 || need="$need libopenjp2-7-dev"
# ... and its test's reference decoder (tests/image/pil_cases.py)
/usr/bin/python3 -c 'import PIL' 2>/dev/null || need="$need python3-pil"
# bench/sgemm.sh: OpenBLAS, the SGEMM peer
[ -f /usr/lib/x86_64-linux-gnu/libopenblas.so ] || need="$need libopenblas-dev"
# the differential tests (tests/diff) generate models and references
/usr/bin/python3 -c 'import onnx, numpy' 2>/dev/null || need="$need python3-onnx python3-numpy"
if [ "${1:-}" = fuzz ]; then
	[ -f /usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.fuzzer-x86_64.a ] ||
		need="$need libclang-rt-19-dev"
fi

if [ -n "$need" ]; then
	echo "setup: installing$need"
	if [ "$(id -u)" != 0 ]; then
		echo "setup: need root to install:$need" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends $need >/dev/null
fi

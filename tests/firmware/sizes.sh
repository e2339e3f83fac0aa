#!/bin/sh
# sizes.sh BURNCC MODELS WORKDIR - the generated header's compile-time sizes
# and the weights' linker section (README: "Compile a model to C"):
#   1. lenet, and a script whose parameters x and X clash when upper-cased,
#      compiled to C; a C99 program declares its static buffers with
#      PREFIX_IN_X_BYTES / _NUMEL etc., is built with -std=c99 -pedantic
#      -Wall -Wextra -Werror, checks every macro against the run-time
#      tables (PREFIX_inputs[i].bytes, the product of .dims) and runs lenet
#      on those buffers;
#   2. the version macros, the model's SHA-256 and PREFIX_strerror: the
#      version is burncc --version's, the hash sha256sum's, each status
#      has its message (a blob build's ERR_WEIGHTS and a dynamic build's
#      ERR_DIM too), an unknown one "unknown status";
#   3. lenet.c built with -DLENET_WEIGHTS_SECTION='".extflash"': the
#      object has a .extflash section holding the weights (at least
#      weights_bytes of --stats, all that left .rodata), and none without
#      the define.
set -eu
burncc=$1 models=$2 w=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$w" && mkdir -p "$w" && cd "$w"
"$burncc" "$models/lenet/model.onnx" -o lenet.c
printf 'fn main(x: f32[2, 3], X: i64[4]) { [x * 2.0, X + 1] }\n' >dup.burn
"$burncc" dup.burn -o dup.c
cat >prog.c <<'C'
#include <stdio.h>
#include "lenet.h"
#include "dup.h"
/* static buffers sized by the header alone (C99: no VLA, no malloc) */
static float x[LENET_IN_X_NUMEL];
static float y[LENET_OUT_21_NUMEL];
static unsigned char xb[LENET_IN_X_BYTES];
static unsigned char arena[LENET_ARENA_BYTES ? LENET_ARENA_BYTES : 1]
	__attribute__((aligned(LENET_ARENA_ALIGN)));
static float dx[DUP_IN_X_NUMEL];
static int64_t dX[DUP_INPUT_1_NUMEL];
/* compile-time checks: a false one is a negative array size */
typedef char x_bytes_ok[sizeof x == LENET_IN_X_BYTES && sizeof xb == sizeof x ? 1 : -1];
typedef char dup_ok[sizeof dX == DUP_INPUT_1_BYTES && sizeof dx == DUP_IN_X_BYTES ? 1 : -1];

static int same(const char *what, long long bytes, long long numel,
                const lenet_tensor_info *t, const dup_tensor_info *u)
{
	long long n = 1, b = t ? t->bytes : u->bytes;
	int r = t ? t->rank : u->rank;
	for (int i = 0; i < r; i++)
		n *= t ? t->dims[i] : u->dims[i];
	printf("%s: %lld bytes, %lld elements\n", what, bytes, numel);
	return bytes == b && numel == n;
}

int main(void)
{
	int ok = 1;
	ok &= same("LENET_IN_X", LENET_IN_X_BYTES, LENET_IN_X_NUMEL, &lenet_inputs[0], NULL);
	ok &= same("LENET_OUT_21", LENET_OUT_21_BYTES, LENET_OUT_21_NUMEL, &lenet_outputs[0], NULL);
	ok &= same("DUP_IN_X", DUP_IN_X_BYTES, DUP_IN_X_NUMEL, NULL, &dup_inputs[0]);
	ok &= same("DUP_INPUT_1", DUP_INPUT_1_BYTES, DUP_INPUT_1_NUMEL, NULL, &dup_inputs[1]);
	ok &= same("DUP_OUT_OUT0", DUP_OUT_OUT0_BYTES, DUP_OUT_OUT0_NUMEL, NULL, &dup_outputs[0]);
	ok &= same("DUP_OUT_OUT1", DUP_OUT_OUT1_BYTES, DUP_OUT_OUT1_NUMEL, NULL, &dup_outputs[1]);
	for (int i = 0; i < LENET_IN_X_NUMEL; i++)
		x[i] = (float)(i % 7) / 7;
	ok &= lenet_run(x, y, arena) == LENET_OK && y[0] == y[0];
	(void)xb; (void)dx; (void)dX;
	return ok ? 0 : 1;
}
C
flags="-std=c99 -pedantic -Wall -Wextra -Werror -O1"
cc $flags -c lenet.c -o lenet.o
cc $flags -c dup.c -o dup.o
cc $flags prog.c lenet.o dup.o -lm -o prog
./prog || { echo "FAIL: a size macro differs from the run-time tables"; exit 1; }
echo "ok: size macros in a -std=c99 -pedantic -Werror program"
# the version, the model's hash, the status messages
ver=$("$burncc" --version | sed -n '1s/^burncc //p')
sum=$(sha256sum "$models/lenet/model.onnx" | cut -d' ' -f1)
"$burncc" "$models/lenet/model.onnx" --weights=blob --name blob -o blob.c
"$burncc" "$here/../dynamic/batch/model.onnx" --dynamic-dim N --name dyn -o dyn.c
cat >ver.c <<'C'
#include <stdio.h>
#include <string.h>
#include "lenet.h"
#include "blob.h"
#include "dyn.h"
typedef char api_ok[LENET_API_VERSION >= 1 ? 1 : -1];
int main(int argc, char **argv)
{
	int ok = argc == 3;
	ok &= !strcmp(LENET_BURNCC_VERSION, argv[1]);
	ok &= !strcmp(LENET_MODEL_SHA256, argv[2]) && !strcmp(BLOB_MODEL_SHA256, argv[2]);
	ok &= !strcmp(lenet_strerror(LENET_OK), "ok");
	ok &= !strcmp(lenet_strerror(LENET_ERR_ARG), "a NULL input or output");
	ok &= !strcmp(lenet_strerror(LENET_ERR_ARENA), "the arena is NULL or misaligned");
	ok &= !strcmp(lenet_strerror(4), "unknown status");
	ok &= !strcmp(blob_strerror(BLOB_ERR_WEIGHTS),
	              "the weights are NULL, misaligned or not this module's blob");
	ok &= !strcmp(dyn_strerror(DYN_ERR_DIM),
	               "a dim is out of range (N >= 0) or a size would pass 2^63 bytes");
	ok &= !strcmp(dyn_strerror(-1), "unknown status");
	printf("%s %s, %s\n", LENET_BURNCC_VERSION, LENET_MODEL_SHA256, lenet_strerror(LENET_ERR_ARENA));
	return ok ? 0 : 1;
}
C
cc $flags -c blob.c -o blob.o
cc $flags -c dyn.c -o dyn.o
cc $flags ver.c lenet.o blob.o dyn.o -lm -o ver
./ver "$ver" "$sum" || { echo "FAIL: version, hash or a status message"; exit 1; }
echo "ok: PREFIX_BURNCC_VERSION $ver, PREFIX_MODEL_SHA256 is sha256sum's, PREFIX_strerror"
# the weights' section
wb=$("$burncc" --stats "$models/lenet/model.onnx" | sed 's/.*"weights_bytes": \([0-9]*\).*/\1/')
cc $flags -DLENET_WEIGHTS_SECTION='".extflash"' -c lenet.c -o lenet_ext.o
sz=$(objdump -h lenet_ext.o | awk '$2 == ".extflash" { print $3 }')
[ -n "$sz" ] || { echo "FAIL: no .extflash section with LENET_WEIGHTS_SECTION"; exit 1; }
sz=$((0x$sz))
[ "$sz" -ge "$wb" ] || { echo "FAIL: .extflash holds $sz bytes, weights_bytes is $wb"; exit 1; }
if objdump -h lenet.o | grep -q extflash; then echo "FAIL: .extflash without the define"; exit 1; fi
# every weight moved: .rodata shrank by what .extflash holds
r0=$(objdump -h lenet.o | awk '$2 == ".rodata" { print $3 }')
r1=$(objdump -h lenet_ext.o | awk '$2 == ".rodata" { print $3 }')
[ $((0x$r0 - 0x${r1:-0})) -eq "$sz" ] ||
	{ echo "FAIL: .rodata $((0x$r0)) -> $((0x${r1:-0})) bytes, .extflash $sz"; exit 1; }
echo "ok: LENET_WEIGHTS_SECTION: .extflash holds $sz bytes (weights_bytes $wb)"

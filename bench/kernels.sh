#!/bin/sh
# Per-kernel times of the C target: each kernel call of model_run timed
# alone, the minimum over the runs of bench/model_bench.c (>= 1 s, twice:
# the second run's table is printed), in ms, then their sum.  ONNX
# Runtime's per-node times come from its profiler (enableProfiling).
#   bench/kernels.sh BUILD MODEL.onnx [OUTDIR]
# BENCH_CFLAGS replaces -O3 -march=native; CPU=NAME compiles with --cpu NAME.
set -e
B=$1
M=$2
[ -x "$B/burncc" ] && [ -f "$M" ] || {
	echo "usage: bench/kernels.sh BUILD MODEL.onnx [OUTDIR]" >&2
	exit 2
}
D=${3:-$B/bench/kernels}
here=$(cd "$(dirname "$0")" && pwd)
flags=${BENCH_CFLAGS:--O3 -march=native}
mkdir -p "$D"
"$B/burncc" ${CPU:+--cpu $CPU} "$M" -o "$D/m.c" --name model
# each kernel call of model_run between two clock reads
awk '
/^int model_run\(/ { inrun = 1 }
inrun && /^\tk_[a-z0-9_]*\(/ {
	name = $0; sub(/^\t/, "", name); sub(/\(.*/, "", name)
	printf "\t{ double kt0 = kt_now(); %s kt_add(%d, \"%s\", kt_now() - kt0); }\n",
	       substr($0, 2), n++, name
	next
}
inrun && /^}/ { inrun = 0 }
{ print }' "$D/m.c" > "$D/mt.c"
cat > "$D/kt.h" <<'EOP'
#include <time.h>
static double kt_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}
extern double kt_min[];
extern const char *kt_name[];
extern int kt_n;
static void kt_add(int i, const char *name, double t)
{
	if (!kt_name[i] || t < kt_min[i])
		kt_min[i] = t;
	kt_name[i] = name;
	if (i + 1 > kt_n)
		kt_n = i + 1;
}
EOP
cat > "$D/kt.c" <<'EOP'
#include <stdio.h>
double kt_min[4096];
const char *kt_name[4096];
int kt_n;
__attribute__((destructor)) static void kt_print(void)
{
	double s = 0;
	for (int i = 0; i < kt_n; i++) {
		printf("%-24s %.4f\n", kt_name[i], kt_min[i] * 1e3);
		s += kt_min[i];
	}
	printf("sum %.4f\n", s * 1e3);
}
EOP
h="$D/m.h"
nin=$(sed -n 's/#define MODEL_NUM_INPUTS \(.*\)/\1/p' "$h")
nout=$(sed -n 's/#define MODEL_NUM_OUTPUTS \(.*\)/\1/p' "$h")
arena=$(sed -n 's/#define MODEL_ARENA_BYTES \(.*\)/\1/p' "$h")
${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=199309L $flags -include "$D/kt.h" -c "$D/mt.c" -o "$D/mt.o"
${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=199309L $flags -DNIN=$nin -DNOUT=$nout -DARENA=$arena \
	"$here/model_bench.c" "$D/mt.o" "$D/kt.c" -lm -o "$D/bench"
"$D/bench" model > /dev/null
"$D/bench" model | sed 1d

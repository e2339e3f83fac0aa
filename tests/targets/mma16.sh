#!/bin/sh
# The GPU MatMul template for 16-bit inputs (passes/ops_linalg.c, the
# large form mma(128,BN,BK,WM,WN,S) and the small mma(32,32,16)): bf16 and
# f16 Y = Gelu(X @ W + b) with the epilogue fused, on the gpu target (the
# kernel-IR interpreter runs the blocks, subgroups, ldmatrix-aligned tile
# loads, the cp.async pipeline and its waits) against float64 references,
# for the default shape and others asked for by --schedule; the same cases
# on c; and the cuda target's PTX through ptxas where it is installed.
# The warpgroup form wgmma(BM,BN,S) (sm_90a) is asked for by --schedule:
# interpreted on the gpu target, its PTX through ptxas for sm_90a.
#   mma16.sh BURNCC
burncc=${1:?usage: mma16.sh BURNCC}
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
$py -c 'import onnx, numpy' 2>/dev/null || { echo "SKIP: python3 with onnx and numpy needed"; exit 77; }
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
fail=0
# M K N: K 96 = 3 slices of 32 (fewer than a 4-stage pipeline's prologue
# fills twice); K 320 = 10 slices, 5 of 64; N 384 takes 128-wide blocks,
# N 64 (an attention head) 64-wide ones, N 96 32-wide ones
for c in "256 96 384 bf16" "128 320 256 bf16" "256 64 128 f16" "40 24 72 bf16" \
         "256 128 64 bf16" "128 64 96 f16"; do
	set -- $c
	n=mm_$1_$2_$3_$4
	$py "$here/make_mm16.py" $1 $2 $3 $4 "$d/$n" || exit 1
done
"$burncc" check --target c "$d"/mm_* || fail=1
"$burncc" check --target gpu "$d"/mm_* || fail=1
# the large form is what the default builds for the aligned cases, the
# small one for 40 x 24 x 72, and the epilogue is fused into the MatMul
for n in mm_256_96_384_bf16 mm_128_320_256_bf16 mm_256_64_128_f16; do
	s=$("$burncc" --target gpu --emit=schedule "$d/$n/model.onnx")
	case $s in *"k_matmul: tile(1,1) mma(128,128,32,2,2,4) async"*) ;;
	*) echo "FAIL $n: not the large form: $s"; fail=1 ;; esac
	case $s in *k_add*|*k_gelu*) echo "FAIL $n: epilogue not fused: $s"; fail=1 ;; esac
done
for c in "256_128_64_bf16 64,32,2,2" "128_64_96_f16 32,32,2,1"; do
	set -- $c
	case $("$burncc" --target gpu --emit=schedule "$d/mm_$1/model.onnx") in
	*"k_matmul: tile(1,1) mma(128,$2,4) async"*) ;;
	*) echo "FAIL mm_$1: not the large form with mma(128,$2,4)"; fail=1 ;; esac
done
case $("$burncc" --target gpu --emit=schedule "$d/mm_40_24_72_bf16/model.onnx") in
*"mma(32,32,16)"*) ;; *) echo "FAIL mm_40_24_72_bf16: not the small form"; fail=1 ;; esac
for sch in "mma(128,64,32,2,2,2)" "mma(128,128,64,2,2,3)" "mma(128,256,64,2,4,3)" \
           "mma(128,128,32,4,2,4)" "wgmma(128,256,3)" "wgmma(64,128,2)" "wgmma(128,64,4)"; do
	"$burncc" check --target gpu --schedule "k_matmul=tile(1,1) $sch async" \
		"$d/mm_128_320_256_bf16" || { echo "FAIL with $sch"; fail=1; }
done
# the warpgroup form (wgmma: A and B swizzled in shared memory) on f16,
# K 64 (one slice: only the prologue fills), and refused where N is not
# a multiple of its BN
"$burncc" check --target gpu --schedule "k_matmul=tile(1,1) wgmma(128,128,3) async" \
	"$d/mm_256_64_128_f16" || { echo "FAIL f16 with wgmma(128,128,3)"; fail=1; }
# its kernel-IR text prints, parses back and prints the same
"$burncc" --target gpu --schedule "k_matmul=tile(1,1) wgmma(128,256,3) async" --emit=kernels \
	"$d/mm_128_320_256_bf16/model.onnx" > "$d/k1.txt" && "$burncc" kir "$d/k1.txt" > "$d/k2.txt" &&
grep -q "wgmma.m64n256k16bf" "$d/k2.txt" &&
grep -v '^ *#' "$d/k1.txt" | cmp -s - "$d/k2.txt" ||
	{ echo "FAIL: the wgmma kernel's text does not round-trip"; fail=1; }
# one batch in flight (wgwait.1): the interpreter catches a schedule
# that reloads a stage a wgmma in flight reads (no wgwait.1 in the K
# loop) or reads the accumulators before the last wgwait
"$burncc" --target gpu --schedule "k_matmul=tile(1,1) wgmma(128,128,4) async" --emit=kernels \
	"$d/mm_128_320_256_bf16/model.onnx" > "$d/k3.txt"
in=$(awk 'BEGIN { for (i = 0; i < 40960; i++) printf "%s%d", i ? "," : "", i % 7 + 1 }')
"$burncc" kir --run --in "v2=$in" "$d/k3.txt" > /dev/null ||
	{ echo "FAIL: the wgmma kernel does not run from its text"; fail=1; }
for w in "wgwait.1" "wgwait"; do
	awk -v w="$w" '!d && $1 == w { d = 1; next } 1' "$d/k3.txt" > "$d/k4.txt"
	if "$burncc" kir --run --in "v2=$in" "$d/k4.txt" > "$d/k4.log" 2>&1 ||
	   ! grep -qE "changed before its wgwait|in flight" "$d/k4.log"; then
		echo "FAIL: a kernel without its $w ran: $(tail -1 "$d/k4.log" | cut -c1-200)"; fail=1
	fi
done
if "$burncc" check --target gpu --schedule "k_matmul=tile(1,1) wgmma(128,256,3) async" \
	"$d/mm_256_64_128_f16" > "$d/refuse.log" 2>&1 ||
   ! grep -q "cannot be built" "$d/refuse.log"; then
	echo "FAIL: wgmma(128,256,3) on N 128 not refused: $(tail -2 "$d/refuse.log")"; fail=1
fi
ptxas=$(command -v ptxas || ls /usr/local/cuda/bin/ptxas 2>/dev/null)
if [ -n "$ptxas" ]; then
	for n in mm_256_96_384_bf16 mm_256_64_128_f16; do
		"$burncc" --target cuda --emit=ptx "$d/$n/model.onnx" > "$d/$n.ptx" &&
		"$ptxas" -arch=sm_90 "$d/$n.ptx" -o "$d/$n.cubin" ||
			{ echo "FAIL $n: ptxas"; fail=1; }
		grep -q "ldmatrix.sync.aligned.m8n8.x4.trans" "$d/$n.ptx" ||
			{ echo "FAIL $n: no paired B tiles"; fail=1; }
	done
	# wgmma: PTX 8.0 for sm_90a, the batch fenced and committed, one in flight
	n=mm_128_320_256_bf16
	"$burncc" --target cuda --emit=ptx --schedule "k_matmul=tile(1,1) wgmma(128,256,3) async" \
		"$d/$n/model.onnx" > "$d/wg.ptx" &&
	"$ptxas" -arch=sm_90a "$d/wg.ptx" -o "$d/wg.cubin" ||
		{ echo "FAIL $n: wgmma PTX through ptxas"; fail=1; }
	for want in ".target sm_90a" "wgmma.fence.sync.aligned" \
	            "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16" \
	            "wgmma.wait_group.sync.aligned 1" "wgmma.wait_group.sync.aligned 0" \
	            "fence.proxy.async.shared::cta"; do
		grep -qF "$want" "$d/wg.ptx" || { echo "FAIL $n: no '$want' in the wgmma PTX"; fail=1; }
	done
else
	echo "ptxas not found: the PTX was not assembled (the rest ran)"
fi
[ $fail = 0 ] && echo "mma16: all passed"
exit $fail

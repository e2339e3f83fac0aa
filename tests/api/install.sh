#!/bin/sh
# install.sh BUILD_DIR SOURCE_DIR [CFLAGS] - `make install` into a DESTDIR
# under the build dir, then a small C program built against the installed
# tree with pkg-config (shared, then static with --static) and run.  CFLAGS
# are what a consumer of this particular build needs (the sanitizer runtime
# when libburn itself was built with -fsanitize).
set -e
b=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
xflags=${3:-}
command -v pkg-config >/dev/null || { echo "install.sh: no pkg-config: not run"; exit 77; }
d=$b/install-test
rm -rf "$d"
DESTDIR=$d cmake --install "$b" --prefix /opt/burn >/dev/null
for f in include/burn.h lib/libburn.a lib/libburn.so lib/pkgconfig/burn.pc; do
	[ -e "$d/opt/burn/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
export PKG_CONFIG_PATH=$d/opt/burn/lib/pkgconfig
cflags=$(pkg-config --cflags burn)
libs=$(pkg-config --libs burn)
slibs=$(pkg-config --static --libs burn)
cat > "$d/prog.c" <<'C'
#include <burn.h>
#include <math.h>
int main(void)
{
	burn_ctx *ctx;
	burn_tensor *x, *y;
	int64_t n = 4;
	float r[4];
	if (burn_ctx_create(NULL, &ctx) || burn_arange(ctx, BURN_F32, 0, 4, 1, &x) ||
	    burn_mul(ctx, x, x, &y) || burn_read(ctx, y, r, sizeof r))
		return 1;
	burn_print(ctx, y, stdout, 0);
	burn_ctx_destroy(ctx);
	return r[3] == 9 ? 0 : 1;
}
C
want="tensor([0, 1, 4, 9], shape=[4], dtype=f32)"
cc $xflags -o "$d/prog" "$d/prog.c" $cflags $libs
out=$(LD_LIBRARY_PATH=$d/opt/burn/lib "$d/prog")
[ "$out" = "$want" ] || { echo "FAIL shared: '$out'"; exit 1; }
# static: the archive alone, and what Libs.private names
cc $xflags -o "$d/prog_static" "$d/prog.c" $cflags -L$d/opt/burn/lib -Wl,-Bstatic -lburn -Wl,-Bdynamic \
	$(echo "$slibs" | sed 's/-lburn//')
if ldd "$d/prog_static" | grep -q libburn; then echo "FAIL: static build uses libburn.so"; exit 1; fi
out=$("$d/prog_static")
[ "$out" = "$want" ] || { echo "FAIL static: '$out'"; exit 1; }
echo "ok: installed tree, pkg-config ($cflags $libs), shared and static"

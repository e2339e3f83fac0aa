#!/bin/sh
# check_layers.sh - no include runs upward (docs/ARCHITECTURE.md, "Layers").
#
# Each source folder has a floor; a file may include files of its own floor
# or lower ones, never a higher one:
#   1 ir/, runtime/   2 frontend/, targets/   3 passes/   4 codegen/
#   5 api/ (libburn)   6 tools/
# and only api/ and tools/ include frontend/ (passes and renderers read no
# files).  Prints each violation as
#   FILE:LINE: includes PATH (floor N above floor M)
# and exits 1 if there is any.  Usage: check_layers.sh [SOURCE_DIR]
top=${1:-$(dirname "$0")/../..}
cd "$top" || exit 2

floor() {
	case "$1" in
	ir/*|runtime/*) echo 1 ;;
	frontend/*|targets/*) echo 2 ;;
	passes/*) echo 3 ;;
	codegen/*) echo 4 ;;
	api/*) echo 5 ;;
	tools/*) echo 6 ;;
	*) echo 0 ;;
	esac
}

bad=0
files=$(find ir runtime frontend targets passes codegen api tools \
             -name '*.c' -o -name '*.h' -o -name '*.def' 2>/dev/null | sort)
[ -n "$files" ] || { echo "check_layers: no sources under $top"; exit 2; }
n=0
for f in $files; do
	ff=$(floor "$f")
	dir=$(dirname "$f")
	# Quoted includes only: system headers have no floor.
	grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
	while IFS= read -r line; do
		num=${line%%:*}
		inc=$(printf '%s\n' "$line" | sed 's/^[^"]*"\([^"]*\)".*/\1/')
		# Resolve relative to the file, else to the source root.
		if [ -e "$dir/$inc" ]; then
			p=$(realpath -m --relative-to=. "$dir/$inc")
		else
			p=$inc
		fi
		pf=$(floor "$p")
		if [ "$pf" -gt "$ff" ]; then
			echo "$f:$num: includes $p (floor $pf above floor $ff)"
		fi
		# The passes and the renderers never read files: no frontend.
		case "$f:$p" in
		passes/*:frontend/*|codegen/*:frontend/*|targets/*:frontend/*)
			echo "$f:$num: includes $p (only tools/ joins a frontend to the passes)" ;;
		esac
	done
	n=$((n + 1))
done > /tmp/check_layers.$$
if [ -s /tmp/check_layers.$$ ]; then
	cat /tmp/check_layers.$$
	bad=1
fi
rm -f /tmp/check_layers.$$
echo "check_layers: $n files checked"
exit $bad

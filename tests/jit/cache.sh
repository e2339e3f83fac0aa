#!/bin/sh
# cache.sh - the llvm target's disk kernel cache (runtime/cache.c through
# codegen/llvm/jit.c), across processes, with tests/jit/jit_cache_run.c.
#
#   cache.sh RUN BURNCC MODELDIR hit      a second process finds the
#            kernel: hit=1 and no compile; the directory 0700 and the
#            entry 0600; burncc check --cache-dir and burncc cache
#   cache.sh ... corrupt   a flipped payload byte, a truncated entry, a bad
#            header: each detected, deleted, compiled again (the result
#            still checked), then a hit; an entry of mode 0644 is ignored
#   cache.sh ... unsafe    a cache dir that is group/world-writable, a
#            symlink, another user's (when run as root) is refused with a
#            status when named; the default dir ($XDG_CACHE_HOME/burncc)
#            in such a state only turns the cache off (compiles, the note
#            says why)
run=$1 burncc=$2 model=$3 what=$4
T=$(mktemp -d) || exit 1
trap 'chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# run EXPR ARGS...: the program's line in $out, its status in $rc
go() { out=$("$run" "$@" 2>"$T/err"); rc=$?; echo "  $* -> $out (rc $rc)"; }
want() { case "$out" in *"$1"*) ;; *) fail "$2: wanted '$1' in '$out' ($(cat "$T/err"))";; esac; }

C="$T/cache"
case $what in
hit)
	go gelu --cache-dir "$C"
	[ $rc = 0 ] || fail "first run: $(cat "$T/err")"
	want "hit=0 compiles=1 entries=1" "first run compiles and stores"
	go gelu --cache-dir "$C"
	[ $rc = 0 ] || fail "second run: $(cat "$T/err")"
	want "hit=1 compiles=0 entries=1 note=" "second process: a hit, no compile"
	go more --cache-dir "$C"
	want "hit=0 compiles=1 entries=2" "another program is another entry"
	go more --cache-dir "$C"
	want "hit=1 compiles=0" "and hits in turn"
	[ "$(stat -c %a "$C")" = 700 ] || fail "cache dir mode $(stat -c %a "$C")"
	for f in "$C"/*.bko; do
		[ "$(stat -c %a "$f")" = 600 ] || fail "entry mode $(stat -c %a "$f")"
	done
	# no temporary files left behind
	[ -z "$(ls -A "$C" | grep -v '\.bko$')" ] || fail "stray files: $(ls -A "$C")"
	# the size limit: with room for one entry, storing a second evicts
	go transc --cache-dir "$T/small" --max-bytes 1
	want "compiles=1 entries=0" "an entry larger than the cache is not stored"
	sz=$(stat -c %s "$C"/*.bko | sort -n | tail -1)
	go gelu --cache-dir "$T/lru" --max-bytes $((sz + 100))
	go more --cache-dir "$T/lru" --max-bytes $((sz + 100))
	want "entries=1" "least recently used evicted"
	go more --cache-dir "$T/lru" --max-bytes $((sz + 100))
	want "hit=1" "the newest entry kept"
	# the driver: check --cache-dir twice, and burncc cache
	"$burncc" check --target llvm --cache-dir "$T/drv" "$model" >"$T/o1" 2>&1 ||
		fail "check --cache-dir: $(cat "$T/o1")"
	n1=$("$burncc" cache stats --cache-dir "$T/drv")
	"$burncc" check --target llvm --cache-dir "$T/drv" "$model" >"$T/o2" 2>&1 ||
		fail "check --cache-dir, second: $(cat "$T/o2")"
	n2=$("$burncc" cache stats --cache-dir "$T/drv")
	echo "  burncc cache stats: $n1 / $n2"
	case $n1 in *'"entries": 0,'*|'') fail "check stored nothing: $n1";; esac
	[ "$n1" = "$n2" ] || fail "the second check stored again: $n1 / $n2"
	"$burncc" cache clear --cache-dir "$T/drv" | grep -q '^removed [1-9]' ||
		fail "cache clear"
	"$burncc" cache stats --cache-dir "$T/drv" | grep -q '"entries": 0,' ||
		fail "entries left after clear"
	XDG_CACHE_HOME="$T/xdg" "$burncc" cache path | grep -qx "$T/xdg/burncc" ||
		fail "cache path does not follow XDG_CACHE_HOME"
	;;
corrupt)
	go gelu --cache-dir "$C"
	want "compiles=1 entries=1" "first run"
	e=$(ls "$C"/*.bko)
	size=$(stat -c %s "$e")
	# 1. a payload byte flipped (the header is 88 bytes)
	b=$(od -An -tu1 -j 200 -N1 "$e" | tr -d ' ')
	printf "$(printf '\\%03o' $(( (b + 1) % 256 )))" |
		dd of="$e" bs=1 seek=200 conv=notrunc 2>/dev/null
	go gelu --cache-dir "$C"
	[ $rc = 0 ] || fail "flipped byte: $(cat "$T/err")"
	want "hit=0 compiles=1" "a flipped byte is a miss and a compile"
	want "corrupt (checksum mismatch): deleted" "a flipped byte is detected"
	go gelu --cache-dir "$C"
	want "hit=1 compiles=0" "the entry written again"
	# 2. truncated: header whole, payload short; and header short
	for n in $((size - 10)) 40 0; do
		truncate -s $n "$e"
		go gelu --cache-dir "$C"
		[ $rc = 0 ] || fail "truncated to $n: $(cat "$T/err")"
		want "hit=0 compiles=1" "truncated to $n: recompiled"
		want "corrupt (truncated): deleted" "truncated to $n: detected"
		[ "$(stat -c %s "$e")" = "$size" ] || fail "entry not rewritten"
	done
	# 3. a bad magic
	printf 'XXXX' | dd of="$e" bs=1 seek=0 conv=notrunc 2>/dev/null
	go gelu --cache-dir "$C"
	want "corrupt (bad header): deleted" "a bad magic is detected"
	# 4. another key's entry under this name (a valid entry, renamed)
	go more --cache-dir "$C"
	other=$(ls "$C"/*.bko | grep -v "$(basename "$e")")
	cp -p "$other" "$e"
	go gelu --cache-dir "$C"
	want "corrupt (another key's): deleted" "an entry under another key's name"
	# 5. mode 0644: not as we write them, ignored (then replaced)
	chmod 644 "$e"
	go gelu --cache-dir "$C"
	want "hit=0 compiles=1" "a 0644 entry is not loaded"
	want "ignored" "a 0644 entry is reported"
	go gelu --cache-dir "$C"
	want "hit=1" "the entry replaced by ours"
	# 6. a symlink in the entry's place is not followed
	rm "$e"; ln -s "$other" "$e"
	go gelu --cache-dir "$C"
	want "hit=0 compiles=1" "a symlinked entry is not loaded"
	;;
unsafe)
	mkdir -m 700 "$C"
	chmod 777 "$C"
	go gelu --cache-dir "$C"
	[ $rc = 1 ] || fail "a world-writable dir was accepted"
	grep -q "refused: writable by group or others" "$T/err" || fail "$(cat "$T/err")"
	chmod 770 "$C"
	go gelu --cache-dir "$C"
	[ $rc = 1 ] || fail "a group-writable dir was accepted"
	chmod 700 "$C"
	ln -s "$C" "$T/link"
	go gelu --cache-dir "$T/link"
	[ $rc = 1 ] || fail "a symlinked dir was accepted"
	grep -q "refused: a symbolic link" "$T/err" || fail "$(cat "$T/err")"
	: >"$T/file"
	go gelu --cache-dir "$T/file"
	[ $rc = 1 ] || fail "a file as the cache dir was accepted"
	if [ "$(id -u)" = 0 ]; then
		chown 65534 "$C"
		go gelu --cache-dir "$C"
		[ $rc = 1 ] || fail "another user's dir was accepted"
		grep -q "refused: not owned by this user" "$T/err" || fail "$(cat "$T/err")"
		chown 0 "$C"
		go gelu --cache-dir "$C"
		want "compiles=1 entries=1" "our dir again"
		chown 65534 "$C"/*.bko
		go gelu --cache-dir "$C"
		want "ignored" "another user's entry"
		chown 0 "$C"
	else
		echo "  (not root: another user's directory not tried)"
	fi
	# the default directory in a bad state: the cache off, not an error
	mkdir -p "$T/xdg/burncc"; chmod 777 "$T/xdg/burncc"
	XDG_CACHE_HOME="$T/xdg" go gelu --default-cache
	[ $rc = 0 ] || fail "an unsafe default dir is an error: $(cat "$T/err")"
	want "hit=0 compiles=1" "unsafe default dir: compiled"
	want "refused: writable by group or others" "unsafe default dir: the note"
	[ -z "$(ls -A "$T/xdg/burncc")" ] || fail "wrote into an unsafe dir"
	# ... and a fine one is made 0700 with its parent
	XDG_CACHE_HOME="$T/xdg2" go gelu --default-cache
	want "compiles=1 entries=1 note=" "default dir made"
	[ "$(stat -c %a "$T/xdg2/burncc")" = 700 ] || fail "default dir mode"
	# check --cache-dir with an unsafe dir: a clear status
	chmod 777 "$C"
	"$burncc" check --target llvm --cache-dir "$C" "$model" >"$T/o" 2>&1 &&
		fail "check accepted an unsafe --cache-dir"
	grep -q "refused" "$T/o" || fail "check: $(cat "$T/o")"
	;;
*)
	echo "usage: cache.sh RUN BURNCC MODELDIR hit|corrupt|unsafe"; exit 2;;
esac
echo "cache.sh $what: ok"

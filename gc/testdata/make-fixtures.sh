#!/bin/sh
# make-fixtures.sh ORACLE_DIR [a] [b] [empty]: rebuilds gc/testdata's kernel-written fixtures with
# zr-oracle (Linux 6.12.117, stock f2fs module), all three sets by default. One qemu at a time.
# Stage 1 writes files of different ages and zeroes parts of them (stage1-*.ops, from
# gen-stage1.sh) on a fresh mkfs.f2fs image: a = 512 MiB, 1 segment per section; b = 2 GiB,
# 4 segments per section (-s 4). Stage 2 runs the gc series (fg.ops, bg.ops, rr.ops; zero.ops for a) on stage 1's
# after-image; empty.ops runs on a fresh 128 MiB image. background_gc=off keeps the kernel's own
# GC thread out of the series. WORK=DIR keeps the runs; with KEEP_STAGE1=1 an existing stage 1
# in WORK is reused.
set -eu
O=${1:?usage: make-fixtures.sh ORACLE_DIR [a] [b] [empty]}
shift
sets=${*:-a b empty}
here=$(cd "$(dirname "$0")" && pwd)
w=${WORK:-$(mktemp -d)}
export ZR_MOUNT_OPTS=background_gc=off
run() { # image ops outdir (a fresh one: zr-oracle clears only files)
	rm -rf "$3"
	"$O/zr-oracle" "$1" "$2" "$3" >"$3.log" 2>&1 || { echo "zr-oracle $2 failed, see $3.log" >&2; exit 1; }
}
keep() { # outdir name: the ops' results, the victim trace, the snapshots and (foreground) the after-image
	case $2 in *-fg) zstd -q -19 -f "$1/after.img" -o "$here/$2.after.img.zst" ;; esac
	cp "$1/result.txt" "$here/$2.result.txt"
	grep -E 'f2fs_get_victim|zr_op|f2fs_gc_end' "$1/log/trace.raw" | sed 's/^ *//' >"$here/$2.trace" || true
	for f in show clock; do if [ -f "$1/log/$f.txt" ]; then cp "$1/log/$f.txt" "$here/$2.$f.txt"; fi; done
	(cd "$1/log/snap" && for f in $(ls | grep -v status | sort -n); do echo "== $f"; cat "$f"; done) | zstd -q -19 -f -o "$here/$2.snaps.zst"
}
for g in $sets; do
	case $g in
	empty)
		rm -f "$w/e.img"; truncate -s 128M "$w/e.img"; mkfs.f2fs -q -f "$w/e.img"
		zstd -q -19 -f "$w/e.img" -o "$here/empty.img.zst"
		run "$w/e.img" "$here/empty.ops" "$w/empty"
		keep "$w/empty" empty
		continue ;;
	a) size=512M mkfs="mkfs.f2fs -q -f" ;;
	b) size=2G mkfs="mkfs.f2fs -q -f -s 4" ;;
	*) echo "unknown set $g" >&2; exit 2 ;;
	esac
	if [ "${KEEP_STAGE1:-}" != 1 ] || [ ! -f "$w/s1-$g/after.img" ]; then
		rm -f "$w/$g.img"; truncate -s $size "$w/$g.img"; $mkfs "$w/$g.img"
		run "$w/$g.img" "$here/stage1-$g.ops" "$w/s1-$g"
	fi
	zstd -q -19 -f "$w/s1-$g/after.img" -o "$here/$g.img.zst"
	cp "$w/s1-$g/result.txt" "$here/stage1-$g.result.txt"
	series="fg bg rr"
	if [ $g = a ]; then series="fg bg rr zero"; fi
	for s in $series; do
		run "$w/s1-$g/after.img" "$here/$s.ops" "$w/$g-$s"
		keep "$w/$g-$s" "$g-$s"
	done
done

#!/usr/bin/env bash
# Builds the small F2FS fixtures in imgio/testdata with mkfs.f2fs + sload.f2fs (f2fs-tools 1.15).
# The images are 128 MiB sparse files (64 MiB ones leave sload.f2fs 1.15 too few free segments for this tree) and gzip to about 130 KB; the tests use them when f2fs-tools is
# missing. Timestamps, UUIDs and the checkpoint seed are fixed so a rebuild gives the same bytes
# (up to gzip headers, which carry no name or time with -n).
# Usage: scripts/mkfixtures.sh [outdir]   (default imgio/testdata)
#        RAW=1 scripts/mkfixtures.sh DIR  leaves the raw NAME.img files instead (the tests use this)
set -euo pipefail
out=$(realpath -m "${1:-$(dirname "$0")/../imgio/testdata}")
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# stamp FILE BLOCKS: BLOCKS 4 KiB blocks, each a 16-byte stamp "name-padded + index" repeated, so
# the content compresses well and every block says where it belongs.
stamp() {
	local name tag
	name=$(basename "$1")
	tag=$(printf '%-8.8s' "$name" | tr ' ' '_')
	awk -v tag="$tag" -v n="$2" 'BEGIN {
		for (i = 0; i < n; i++) {
			s = sprintf("%s%08x", tag, i); b = ""
			for (j = 0; j < 256; j++) b = b s
			printf "%s", b
		}
	}' >"$1"
}

# sload.f2fs starts a fresh segment for the data of every file and directory, and a 64 MiB volume
# has only 16 free ones: keep the number of non-inline files and directories small.
# tree DIR: the common source tree: inline files, a multi-node file, holes, nested dirs, a big dir.
tree() {
	local d=$1
	mkdir -p "$d/data" "$d/a/b/c" "$d/many" "$d/emptydir"
	printf 'hello inline\n' >"$d/hello.txt"
	: >"$d/empty"
	stamp "$d/data/seq.bin" 75
	stamp "$d/data/big.bin" "${BIG:-1000}" # 1000: inode slots, then i_nid[0]
	# A file with holes: sload writes only the blocks that are not all zero.
	stamp "$d/data/holes.bin" 4
	dd if=/dev/zero of="$d/data/holes.bin" bs=4096 seek=4 count=60 conv=notrunc status=none
	mkdir -p "$d.x"
	stamp "$d.x/tail" 2
	cat "$d.x/tail" >>"$d/data/holes.bin"
	printf 'deep\n' >"$d/a/b/c/leaf.txt"
	printf 'x%.0s' $(seq 1 5000) >"$d/a/b/mid.txt"
	ln -s data/seq.bin "$d/link"
	ln -s "$(printf 'long/%.0s' $(seq 1 200))target" "$d/a/longlink"
	for i in $(seq -w 1 150); do printf '%s\n' "$i" >"$d/many/file-$i.txt"; done
	printf 'n\n' >"$d/a/$(printf 'n%.0s' $(seq 1 255))"
}

build() { # name size mkfs-options sload-options
	local name=$1 size=$2 mk=$3 sl=$4
	local img="$work/$name.img" src="$work/src-$name"
	mkdir -p "$src"
	tree "$src"
	truncate -s "$size" "$img"
	# shellcheck disable=SC2086
	mkfs.f2fs -q -f -r -T 1 -U 6c6f6361-6c7a-7276-697a-000000000001 -l "$name" $mk "$img" >/dev/null
	# shellcheck disable=SC2086
	sload.f2fs -T 1 $sl -f "$src" "$img" >"$work/sload-$name.log" 2>&1 || { cat "$work/sload-$name.log"; exit 1; }
	fsck.f2fs --dry-run -f "$img" >/dev/null
	# sload.f2fs exits 0 even when it loaded nothing; make sure the tree is there.
	fsck.f2fs --dry-run -t "$img" >"$work/tree-$name.txt" 2>&1
	grep -q 'seq.bin' "$work/tree-$name.txt" || { echo "$name: sload.f2fs loaded nothing" >&2; exit 1; }
	if [ -n "${RAW:-}" ]; then
		mv "$img" "$out/$name.img"
		return
	fi
	gzip -9 -n -c "$img" >"$out/$name.img.gz"
	echo "$out/$name.img.gz: $(stat -c %s "$out/$name.img.gz") bytes"
}

# The three builds are independent: run them at once and fail if any fails.
pids=()
build basic 128M "" "" &
pids+=($!)
# sload.f2fs 1.15 lays file data out wrongly with flexible_inline_xattr (format spec §14), so the
# feature image leaves it out; extra_attr alone still moves the slots (914 per inode).
# Debian's sload.f2fs 1.15 is built without LZO/LZ4, so it cannot write compressed files (-c fails);
# the image has the compression feature (and its inode layout rules) but no compressed cluster.
build features 128M "-O extra_attr,inode_checksum,sb_checksum,compression,project_quota,quota,inode_crtime,lost_found" "" &
pids+=($!)
# Sections of 4 segments leave fewer free sections: 192 MiB.
build segs4 192M "-s 4" "" &
pids+=($!)
for p in "${pids[@]}"; do wait "$p"; done

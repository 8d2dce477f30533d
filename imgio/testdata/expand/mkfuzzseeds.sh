#!/usr/bin/env bash
# Regenerates the FuzzExpand seed corpus (../fuzz/FuzzExpand/) from small inputs packed by the real
# tools: gzip, xz, zstd, pzstd and img2simg. The raw material is the start of a real F2FS image
# (superblock and checkpoint area) plus a few blocks of text, so every seed is a few KB at most.
# Usage: cd imgio/testdata/expand && ./mkfuzzseeds.sh
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

truncate -s 64M "$tmp/f2fs.img"
mkfs.f2fs -q -f "$tmp/f2fs.img"
head -c 16384 "$tmp/f2fs.img" > "$tmp/raw-head"            # superblocks at 0x400 and 0x1400
seq 1 2000 | head -c 8192 > "$tmp/text"
cat "$tmp/raw-head" "$tmp/text" > "$tmp/raw"
head -c 8192 "$tmp/raw" > "$tmp/half1"; tail -c +8193 "$tmp/raw" > "$tmp/half2"
head -c $((4 << 20)) /dev/zero > "$tmp/zeros"                # 4 MiB: a bomb for the 256 KiB fuzz limit

s="$tmp/seeds"; mkdir "$s"
gzip -c -9 "$tmp/raw" > "$s/gzip"
{ gzip -c "$tmp/half1"; gzip -c "$tmp/half2"; } > "$s/gzip-multi-member"
gzip -c -9 "$tmp/zeros" > "$s/gzip-bomb"
xz -c -0 "$tmp/raw" > "$s/xz"
xz -c -0 --check=sha256 "$tmp/raw" > "$s/xz-sha256"
{ xz -c -0 "$tmp/half1"; xz -c -0 --check=none "$tmp/half2"; } > "$s/xz-multi-stream"
xz -c -1 "$tmp/zeros" > "$s/xz-bomb"
zstd -q -c -19 "$tmp/raw" > "$s/zstd"
{ zstd -q -c "$tmp/half1"; zstd -q -c --no-check "$tmp/half2"; } > "$s/zstd-multi-frame"
pzstd -q -c -p 2 "$tmp/raw" > "$s/zstd-pzstd"
zstd -q -c -19 "$tmp/zeros" > "$s/zstd-bomb"
img2simg "$tmp/raw" "$s/android-sparse"
img2simg "$tmp/raw" "$s/android-sparse-1k" 1024
cp "$tmp/raw-head" "$s/raw"

go run fuzzseed.go "$s"/*
ls -l ../fuzz/FuzzExpand

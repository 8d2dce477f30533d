#!/bin/bash
# seq/after-images.sh KERNEL_CASES_DIR [N...]
# Reruns kernel-cases/N.ops on demo.img under the stock and the batched module
# (ZR_EVENTS='', the kprobe with len) and writes N.after.img.zst and
# N.after.batched.img.zst; compares the last op's calls with N.trace and
# N.trace.batched (N.cmp says SAME or shows the diff).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
K=$(realpath "$1"); shift
[ $# -gt 0 ] || set -- 1 2 3 4 5 6 7 8 9 10 11 12
W=${ZR_SEQ_WORK:-/tmp/zr-seq}/kc; mkdir -p "$W"
[ -f "$W/demo.img" ] || zstd -qdf "${ZR_DEMO_IMG:-$here/demo.img.zst}" -o "$W/demo.img"
export ZR_KPROBE='p:zr f2fs_invalidate_blocks addr=%si:u32 len=%dx:u32' ZR_EVENTS=
KO=${ZR_BATCHED_KO:-$here/build/f2fs-batched/fs/f2fs/f2fs.ko}
for n in "$@"; do
	for mode in stock batched; do
		o=$W/$n-$mode
		ko=; [ $mode = batched ] && ko=$KO
		for try in 1 2 3; do
			ZR_F2FS_KO=$ko "$here/zr-oracle" "$W/demo.img" "$K/$n.ops" "$o" && break
			echo "$n $mode: zr-oracle failed (try $try)"
		done
		last=$(tail -n1 "$o/result.txt" | cut -f1)
		if [ $mode = stock ]; then
			awk -v op="op=$last" '$1 == op {sub("addr=", "", $2); print $2}' "$o/trace.txt" >"$o/last.trace"
			sfx= ref=$K/$n.trace
		else
			awk -v op="op=$last" '$1 == op {sub("addr=", "", $2); sub("len=", "", $3); print $2, $3}' "$o/trace.txt" >"$o/last.trace"
			sfx=.batched ref=$K/$n.trace.batched
		fi
		res=$(tail -n1 "$o/result.txt" | cut -f2)
		if cmp -s "$o/last.trace" "$ref" && [ "$res" = "$(cat "$K/$n.result")" ]; then
			echo "$n $mode SAME ($(wc -l <"$ref") calls, $res)"
		else
			echo "$n $mode DIFF result $res vs $(cat "$K/$n.result")"; diff "$ref" "$o/last.trace" | head -20
		fi
		fsck.f2fs --dry-run -f "$o/after.img" >"$o/fsck.txt" 2>&1 || echo "$n $mode fsck rc $?"
		zstd -19 -q -f -T2 "$o/after.img" -o "$K/$n.after$sfx.img.zst"
		chmod 644 "$K/$n.after$sfx.img.zst"
	done
done

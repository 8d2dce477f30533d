#!/bin/bash
# seq/run-case.sh CASEDIR
# Runs CASEDIR/ops on its base image under the stock f2fs module and the batched
# one (build/f2fs-batched), kprobe on f2fs_invalidate_blocks with len, and writes
# into CASEDIR: result, result.batched, trace, trace.batched, ftrace,
# ftrace.batched, after.img.zst, after.batched.img.zst, after.txt,
# after.batched.txt (and dmesg.txt, dmesg.batched.txt: the f2fs lines of dmesg,
# with ZR_SEQ_DMESG=1).
# The base image: CASEDIR/before.img.zst, or CASEDIR/base naming `demo`
# ($ZR_DEMO_IMG, default the demo image scripts/oracle/prepare copied beside seq/).
# Work files go to $ZR_SEQ_WORK (default /tmp/zr-seq)/<case>-{stock,batched}.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
c=$(realpath "$1") name=$(basename "$c")
W=${ZR_SEQ_WORK:-/tmp/zr-seq}
KO=${ZR_BATCHED_KO:-$here/build/f2fs-batched/fs/f2fs/f2fs.ko}
mkdir -p "$W"
if [ -f "$c/before.img.zst" ]; then
	zstd -qdf "$c/before.img.zst" -o "$W/$name.before.img"
else
	base=$(awk '{print $1; exit}' "$c/base")
	[ "$base" = demo ] || { echo "unknown base $base" >&2; exit 2; }
	zstd -qdf "${ZR_DEMO_IMG:-$here/demo.img.zst}" -o "$W/$name.before.img"
fi
# punch and truncate (issue 28): which dnode ranges and node blocks each op freed
TRUNC_EVENTS='f2fs_truncate f2fs_truncate_blocks_enter f2fs_truncate_blocks_exit f2fs_truncate_data_blocks_range f2fs_truncate_inode_blocks_enter f2fs_truncate_inode_blocks_exit f2fs_truncate_nodes_enter f2fs_truncate_nodes_exit f2fs_truncate_node f2fs_truncate_partial_nodes'
# unlink (issue 36): the name's removal and the inode's eviction
UNLINK_EVENTS='f2fs_unlink_enter f2fs_unlink_exit f2fs_evict_inode'
export ZR_KPROBE='p:zr f2fs_invalidate_blocks addr=%si:u32 len=%dx:u32'
export ZR_EVENTS=${ZR_EVENTS-f2fs_fallocate f2fs_reserve_new_blocks f2fs_sync_file_enter f2fs_sync_file_exit f2fs_writepage f2fs_submit_page_write f2fs_submit_page_bio f2fs_write_checkpoint f2fs_gc_begin f2fs_gc_end f2fs_get_victim f2fs_background_gc $TRUNC_EVENTS $UNLINK_EVENTS}
for mode in ${ZR_MODES:-stock batched}; do
	o=$W/$name-$mode sfx=; [ $mode = batched ] && sfx=.batched
	ko=; [ $mode = batched ] && ko=$KO
	for try in 1 2 3; do  # a TCG guest rarely dies while booting (seen once: a double fault before any f2fs code)
		ZR_F2FS_KO=$ko "$here/zr-oracle" "$W/$name.before.img" "$c/ops" "$o" && break
		echo "zr-oracle $mode: failed (try $try)" >&2
		[ $try = 3 ] && exit 1
	done
	cut -f1-4 "$o/result.txt" >"$c/result$sfx"
	# the guest helper's clock (CLOCK_BOOTTIME seconds around every op) and show lines, when it
	# has them (the oracle-gc copy's helper): the model's seconds since mount per op
	for x in clock show; do
		if [ -f "$o/log/$x.txt" ]; then cp "$o/log/$x.txt" "$c/$x$sfx.txt"; fi
	done
	if [ $mode = batched ]; then
		sed -E 's/^op=(\S+) addr=([0-9]+) len=([0-9]+)$/\1 \2 \3/' "$o/trace.txt" >"$c/trace$sfx"
	else  # the stock function has no length: rdx is garbage, drop it
		sed -E 's/^op=(\S+) addr=([0-9]+) len=[0-9]+$/\1 \2/' "$o/trace.txt" >"$c/trace$sfx"
	fi
	# the raw ftrace; the stock len= field is meaningless and is dropped
	if [ $mode = stock ]; then
		sed -E 's/( zr: \([^)]*\) addr=[0-9]+) len=[0-9]+$/\1/' "$o/log/trace.raw" >"$c/ftrace"
	else
		cp "$o/log/trace.raw" "$c/ftrace$sfx"
	fi
	grep -E 'F2FS-fs|f2fs' "$o/log/dmesg.txt" | grep -v 'loading out-of-tree\|module verification' >"$o/f2fs-dmesg.txt" || true
	# the corrupt-image cases keep the kernel's f2fs messages (ZR_SEQ_DMESG=1)
	if [ -n "${ZR_SEQ_DMESG:-}" ]; then cp "$o/f2fs-dmesg.txt" "$c/dmesg$sfx.txt"; fi
	fsck.f2fs --dry-run -f "$o/after.img" >"$o/fsck.txt" 2>&1 && echo "fsck $mode: rc 0" || echo "fsck $mode: rc $?"
	python3 "$here/seq/seqdump.py" "$W/$name.before.img" "$o/after.img" "$c/ftrace$sfx" \
		"$name, after-image of the $mode module (Linux 6.12.117+deb12-amd64)" >"$c/after$sfx.txt"
	zstd -19 -q -f -T2 "$o/after.img" -o "$c/after$sfx.img.zst"
	# a case with garbage collection logs every moved page: keep its ftrace compressed
	if [ -n "${ZR_SEQ_ZSTD_FTRACE:-}" ]; then zstd -19 -q -f --rm "$c/ftrace$sfx" -o "$c/ftrace$sfx.zst"; fi
done
echo "== $name"; [ -f "$c/result.batched" ] && paste "$c/result" <(cut -f2 "$c/result.batched") || cat "$c/result"
for f in trace trace.batched; do [ -f "$c/$f" ] || continue; echo "$f per op: $(awk '{n[$1]++} END {for (k in n) printf "%s:%d ", k, n[k]}' "$c/$f")"; done
ls -la "$c"

#!/usr/bin/env bash
# Builds android.img.zst: an Android-like /data volume written by Linux 6.12.117's f2fs itself (the
# zr-oracle, qemu), for the survey's equality test (cmd/zrviz TestSurveyEqualsRun). mkfs.f2fs with
# extra_attr and compression makes an empty volume; every directory, file and block in it is then the
# kernel's: /data/app/*/base.apk compressed (FS_COMPR_FL), photos written in interleaved fsynced
# chunks (fragmented), a video preallocated then partly written (NEW_ADDR slots), databases with holes
# and punched pages, logs appended to and truncated, a symlink; then sync and a clean unmount.
#   survey/testdata/mkandroid.sh /work/oracle/oracle   # writes survey/testdata/android.img.zst
set -euo pipefail
oracle=${1:?usage: $0 ORACLE_DIR}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
truncate -s 512M "$work/android.img"
mkfs.f2fs -q -f -O extra_attr,compression "$work/android.img"
python3 - "$work/ops" <<'PY'
import sys
ops = []
o = ops.append
for d in ["/data", "/data/app", "/data/data", "/data/media", "/data/media/0", "/data/media/0/DCIM",
          "/data/media/0/Movies", "/data/misc", "/data/misc/logd"]:
    o(f"mkdir {d}")
apps = 12
for i in range(apps):
    o(f"mkdir /data/app/com.example.app{i:02d}-1")
    o(f"mkdir /data/data/com.example.app{i:02d}")
    o(f"mkdir /data/data/com.example.app{i:02d}/databases")
    o(f"setflags /data/app/com.example.app{i:02d}-1/base.apk compr")
# The apks, compressed, written whole and fsynced, each its own size.
for i in range(apps):
    n = 16384 * (1 + (i * 7) % 23) + 4096 * (i % 3)
    o(f"pwrite /data/app/com.example.app{i:02d}-1/base.apk 0 {n} pattern fsync")
    o(f"pwrite /data/app/com.example.app{i:02d}-1/lib.so 0 {8192 * (1 + i % 5)} pattern fsync")
# Photos: two at a time in 16 KiB chunks, each chunk fsynced, so their blocks interleave.
for p in range(0, 8, 2):
    a, b = f"/data/media/0/DCIM/IMG_{p:04d}.jpg", f"/data/media/0/DCIM/IMG_{p+1:04d}.jpg"
    for k in range(12 + p):
        o(f"pwrite {a} {k * 16384} 16384 pattern fsync")
        o(f"pwrite {b} {k * 16384} 16384 pattern fsync")
# A video: 4 MiB preallocated (NEW_ADDR), its first half and a middle stretch written.
o("falloc /data/media/0/Movies/clip.mp4 0 4194304")
o("pwrite /data/media/0/Movies/clip.mp4 0 2097152 pattern fsync")
o("pwrite /data/media/0/Movies/clip.mp4 3145728 262144 pattern fsync")
# A big contiguous file.
o("pwrite /data/media/0/Movies/long.mp4 0 12582912 pattern fsync")
# Databases: pages here and there (holes), some punched after.
for i in range(apps):
    db = f"/data/data/com.example.app{i:02d}/databases/app.db"
    for k in (0, 1, 2, 7, 8, 31, 64 + i):
        o(f"pwrite {db} {k * 4096} 4096 pattern fsync")
    if i % 3 == 0:
        o(f"punch {db} 4096 8192")
    o(f"pwrite /data/data/com.example.app{i:02d}/shared_prefs.xml 0 {300 + 97 * i} pattern fsync")
# Logs: appended in turns, one truncated, one zeroed in the middle.
for k in range(10):
    for l in range(3):
        o(f"pwrite /data/misc/logd/log.{l} {k * 8192} 8192 pattern fsync")
o("truncate /data/misc/logd/log.2 20000")
o("zero /data/misc/logd/log.1 16384 16384")
o("symlink ../media/0/DCIM /data/data/com.example.app00/photos")
o("sync")
open(sys.argv[1], "w").write("\n".join(ops) + "\n")
print(len(ops), "ops", file=sys.stderr)
PY
"$oracle/zr-oracle" "$work/android.img" "$work/ops" "$work/out"
cat "$work/out/result.txt" | awk -F'\t' '$2 != "OK"' | head
fsck.f2fs --dry-run -f "$work/out/after.img" >/dev/null
cp "$work/ops" "$here/android.ops"
zstd -19 -q -f "$work/out/after.img" -o "$here/android.img.zst"
ls -la "$here/android.img.zst"

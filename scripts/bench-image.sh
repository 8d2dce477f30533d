#!/usr/bin/env bash
# Builds the imgio benchmark image: a 16 GiB sparse F2FS image holding 10,000 small files in 200
# directories plus one 1 GiB file, with mkfs.f2fs + sload.f2fs. Not part of the normal test run.
#   scripts/bench-image.sh /tmp/bench.img
#   ZRVIZ_BENCH_IMAGE=/tmp/bench.img go test -run XXX -bench . -benchmem ./imgio
# It also times `fsck.f2fs --dry-run -f -t` on the image, the yardstick for listing every path.
set -euo pipefail
img=${1:?usage: $0 IMAGE}
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT

python3 - "$src" <<'PY'
import os, sys
root = sys.argv[1]
for d in range(200):
    dd = os.path.join(root, "dir%03d" % d)
    os.makedirs(dd)
    for f in range(50):
        # Mostly inline-sized files (up to 3 KB); every tenth one needs data blocks (4-20 KB).
        n = 100 + (d * 50 + f) * 37 % 2900
        if f % 10 == 0:
            n = 4096 + (d * 50 + f) * 131 % 16384
        with open(os.path.join(dd, "file%05d.txt" % f), "wb") as fh:
            fh.write((b"%03d/%05d " % (d, f)) * (n // 10 + 1))
# The 1 GiB file: 64 KiB blocks of a non-zero pattern (sload.f2fs writes every block it reads).
with open(os.path.join(root, "big.bin"), "wb") as fh:
    chunk = bytes(range(256)) * 256
    for _ in range(16384):
        fh.write(chunk)
PY
rm -f "$img"
truncate -s 16G "$img"
mkfs.f2fs -q -f "$img"
time sload.f2fs -f "$src" "$img" >/dev/null 2>&1
echo "fsck.f2fs --dry-run -f -t:"
time fsck.f2fs --dry-run -f -t "$img" >/dev/null 2>&1

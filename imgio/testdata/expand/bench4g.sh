#!/usr/bin/env bash
# Whole-process expansion measurement on a real 4 GiB F2FS image: mkfs.f2fs, sload.f2fs of about
# 150 MiB of files (64 MiB random, Go tool binaries, Go sources), then zstd at the default level and
# at -19. Each is expanded by BenchmarkExpandFile in a compiled test binary, timed as a whole process;
# `zstd -d` to /dev/null is timed alongside for reference.
# Usage: imgio/testdata/expand/bench4g.sh [workdir]   (needs about 5 GiB free in workdir)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
dir=${1:-$(mktemp -d)}
img=$dir/f2fs4g.img
src=$dir/src

if [ ! -f "$img.zst" ]; then
  rm -rf "$src"; mkdir -p "$src"
  head -c $((64 << 20)) /dev/urandom > "$src/random.bin"
  cp -r /usr/local/go/pkg/tool "$src/tool"
  cp -r /usr/local/go/src/net "$src/net"
  rm -f "$img"; truncate -s 4G "$img"
  mkfs.f2fs -q -f "$img"
  sload.f2fs -f "$src" "$img" > /dev/null
  zstd -q -f "$img" -o "$img.zst"
  zstd -q -f -19 -T0 "$img" -o "$img.19.zst"
fi
ls -ls "$img" "$img.zst" "$img.19.zst"

(cd "$repo" && go test -c -o "$dir/imgio.test" ./imgio)
for f in "$img.zst" "$img.19.zst"; do
  echo "== $f"
  /usr/bin/time -f "zstd -d: %e s wall, %U s user, %M KiB max RSS" zstd -q -d -c "$f" > /dev/null
  ZRVIZ_EXPAND_BENCH=$f /usr/bin/time -f "imgio.test: %e s wall, %U s user, %S s sys, %M KiB max RSS" \
    "$dir/imgio.test" -test.run '^$' -test.bench '^BenchmarkExpandFile$' -test.benchtime 3x -test.benchmem
done

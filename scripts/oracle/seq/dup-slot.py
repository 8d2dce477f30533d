#!/usr/bin/env python3
"""dup-slot.py IMG NID SLOT FROM: make slot SLOT of node NID map the block of slot FROM.

Writes a doubly mapped data block into an f2fs image without node checksums (the
demo image has no features, so no inode_checksum): the 4-byte slot is edited in
place in the node block the NAT names. NID is an inode (slots start at i_addr,
byte 360 of the block, no extra attributes) or a direct node (slots at byte 0).
dump.f2fs reads the slots back before and after; fsck.f2fs will report the
block as mapped twice, which is the point (issue 28's "doubly mapped block").
"""
import os
import re
import subprocess
import sys
import tempfile


def dump(img, *args):
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run(["dump.f2fs", *args, img], cwd=d, capture_output=True, text=True).stdout
        files = {f: open(os.path.join(d, f), errors="replace").read() for f in os.listdir(d)}
    return out, files


def slots(img, nid):
    out = dump(img, "-i", str(nid))[0]
    inode = re.search(r"Node ID \[0x[0-9a-f]+:\d+\] is inode", out) is not None
    v = re.findall(r"^i_addr\[0x([0-9a-f]+)\]\s+\[0x\s*[0-9a-f]+ : (\d+)\]", out, re.M)
    if not inode:  # a direct node prints its slots as [i] [0x.. : addr]
        v = re.findall(r"^\[(\d+)\]\s+\[0x\s*[0-9a-f]+ : (\d+)\]", out, re.M)
        return inode, {int(i): int(a) for i, a in v}
    return inode, {int(i, 16): int(a) for i, a in v}


def main():
    img, nid, slot, src = os.path.abspath(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    nat = {int(n): int(b) for n, b in
           re.findall(r"nid:\s*(\d+)\s.*blkaddr:\s*(\d+)", dump(img, "-n", "0~-1")[1]["dump_nat"])}
    inode, before = slots(img, nid)
    if slot not in before or src not in before:
        sys.exit(f"dup-slot: nid {nid} has no slot {slot} or {src} in dump.f2fs -i")
    base = 360 if inode else 0  # i_addr offset in f2fs_inode without extra attributes
    off = nat[nid] * 4096 + base + 4 * slot
    with open(img, "r+b") as f:
        f.seek(off)
        old = int.from_bytes(f.read(4), "little")
        if old != before[slot]:
            sys.exit(f"dup-slot: byte {off} holds {old}, dump.f2fs says slot {slot} = {before[slot]}")
        f.seek(off)
        f.write(before[src].to_bytes(4, "little"))
    _, after = slots(img, nid)
    changed = {i for i in after if after[i] != before[i]}
    if changed != {slot} or after[slot] != before[src]:
        sys.exit(f"dup-slot: dump.f2fs reads back {sorted(changed)} changed")
    print(f"nid {nid} (block {nat[nid]}) slot {slot}: {before[slot]} -> {before[src]} (= slot {src})")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""seqdump.py BEFORE.img AFTER.img FTRACE LABEL > after.txt

After-state of a sequence case, read from AFTER.img with dump.f2fs (1.15):
  * every file inode the ftrace names (f2fs_fallocate, f2fs_truncate*, f2fs_sync_file_*,
    f2fs_writepage, DATA f2fs_submit_page_write), and the inode numbers in
    $ZR_SEQ_INOS (space separated): the inode fields from
    `dump.f2fs -i` (timestamps, generation and the checksum dropped), its node
    ids, then its data slots;
  * `dump.f2fs -s` entries (vblocks, seg_type, valid map) of every segment whose
    SIT entry differs between BEFORE and AFTER, plus every segment holding a
    block the ftrace names (invalidated, or written by writeback).
Slot lines: `INDEX ADDR` (decimal), `NEW` (0xffffffff), `COMPRESS` (0xfffffffe, the first
slot of a compressed cluster) or `NULL` (0), for every
index from 0 to max(ceil(i_size/4096), last non-NULL + 1) - 1 when that is at
most 65536 slots; for larger files only the non-NULL slots are listed, and runs
of NULL slots are omitted (a `# ... non-NULL slots only` line says so).
INDEX is the file's page index: for an inode with extra attributes (i_inline
F2FS_EXTRA_ATTR) dump.f2fs numbers i_addr from the raw slot, so the
i_extra_isize/4 slots in front are subtracted, and the inode holds
923 - i_extra_isize/4 - 50 (inline xattrs) data slots, rounded down to the
cluster size for a compressed file (addrs_per_inode); its direct nodes hold
1018, rounded down the same way (addrs_per_block).
"""
import os, re, subprocess, sys, tempfile

NULL, NEW, COMPRESS = 0, 0xFFFFFFFF, 0xFFFFFFFE
A_INODE, A_BLOCK, N_BLOCK = 873, 1018, 1018  # without extra attributes (the demo image)
DROP = re.compile(r"^(i_[acm]time|i_crtime|i_generation|i_inode_checksum)")


def dump(img, *args):
    with tempfile.TemporaryDirectory() as d:  # dump.f2fs drops files in cwd
        out = subprocess.run(["dump.f2fs", *args, os.path.abspath(img)], cwd=d,
                             capture_output=True, text=True, stdin=subprocess.DEVNULL).stdout
        sit = open(os.path.join(d, "dump_sit")).read() if args[0] == "-s" else ""
    return out, sit


def node_entries(img, nid, n=N_BLOCK):
    out, _ = dump(img, "-i", str(nid))
    v = [0] * n
    for k, x in re.findall(r"^\[(\d+)\]\s+\[\s*0x\s*([0-9a-f]+) :", out, re.M):
        if int(k) < n:
            v[int(k)] = int(x, 16)
    return v


def geometry(out):
    """The inode's data slots, a direct node's data slots and the i_addr index of page 0."""
    inl = int(re.search(r"^i_inline\s+\[0x\s*[0-9a-f]+ : (\d+)\]", out, re.M).group(1))
    m = re.search(r"^i_extra_isize\s+\[0x\s*[0-9a-f]+ : (\d+)\]", out, re.M)
    extra = int(m.group(1)) // 4 if inl & 0x20 and m else 0  # F2FS_EXTRA_ATTR
    per_inode = 923 - extra - (50 if inl & 0x1 else 0)  # F2FS_INLINE_XATTR, default size
    per_block = A_BLOCK
    m = re.search(r"^i_log_cluster_size\s+\[0x\s*[0-9a-f]+ : (\d+)\]", out, re.M)
    flags = int(re.search(r"^i_flags\s+\[0x\s*([0-9a-f]+) :", out, re.M).group(1), 16)
    if m and flags & 0x4:  # F2FS_COMPR_FL
        c = 1 << int(m.group(1))
        per_inode, per_block = per_inode // c * c, per_block // c * c
    return per_inode, per_block, extra


def inode(img, ino):
    out, _ = dump(img, "-i", str(ino))
    fields, slots, nids = [], {}, []
    extra = geometry(out)[2] if "is inode" in out else 0
    for line in out.splitlines():
        m = re.match(r"^i_addr\[0x([0-9a-f]+)\][^\[]*\[0x\s*([0-9a-f]+) :", line)
        if line.startswith("i_addr"):
            if m and int(m.group(2), 16):
                slots[int(m.group(1), 16) - extra] = int(m.group(2), 16)
            continue
        m = re.match(r"^i_nid\[(\d)\]\s+\[0x\s*([0-9a-f]+) :", line)
        if m:
            nids.append(int(m.group(2), 16))
        if re.match(r"^(i_|[a-z_]+\s+\[)", line) and not DROP.match(line):
            fields.append(re.sub(r"\s+", " ", line.strip()))
    return out, fields, slots, nids


def file_slots(img, slots, nids, a_inode=A_INODE, a_block=A_BLOCK):
    """slots: index -> addr (non-NULL only); nodes: list of (role, nid)."""
    nodes = []
    def direct(nid, base, role):
        nodes.append((role, nid))
        for k, a in enumerate(node_entries(img, nid, a_block)):
            if a:
                slots[base + k] = a
    def indirect(nid, base, role, depth):
        nodes.append((role, nid))
        per = a_block * N_BLOCK ** (depth - 1)
        for k, c in enumerate(node_entries(img, nid)):
            if c:
                if depth == 1:
                    direct(c, base + k * a_block, f"{role}/{k}")
                else:
                    indirect(c, base + k * per, f"{role}/{k}", depth - 1)
    bases = [a_inode, a_inode + a_block, a_inode + 2 * a_block,
             a_inode + 2 * a_block + a_block * N_BLOCK,
             a_inode + 2 * a_block + 2 * a_block * N_BLOCK]
    for i, nid in enumerate(nids[:5]):
        if not nid:
            continue
        if i < 2:
            direct(nid, bases[i], f"i_nid[{i}]")
        else:
            indirect(nid, bases[i], f"i_nid[{i}]", 1 if i < 4 else 2)
    return nodes


def sit(img):
    _, text = dump(img, "-s", "0~-1")
    segs = {}
    for chunk in re.split(r"\n(?=segno:)", text):
        m = re.match(r"segno:\s+(\d+)\s+vblocks:\s*(\d+)\s+seg_type:(\d+)", chunk)
        if m:
            bm = " ".join(re.findall(r"\b[0-9a-f]{2}\b", chunk.split("\n", 1)[1] if "\n" in chunk else ""))
            segs[int(m.group(1))] = (int(m.group(2)), int(m.group(3)), bm)
    return segs


def main():
    before, after, ftrace, label = sys.argv[1:5]
    ft = open(ftrace).read()
    inos = set()
    for m in re.finditer(r"(f2fs_fallocate|f2fs_sync_file_enter|f2fs_writepage|f2fs_reserve_new_blocks|f2fs_truncate\w*): dev = \(\d+,\d+\), ino = (\d+)", ft):
        inos.add(int(m.group(2)))
    # a file no event names (truncate to a larger size calls no f2fs_truncate*): ZR_SEQ_INOS="28 …"
    inos |= {int(x) for x in os.environ.get("ZR_SEQ_INOS", "").split()}
    addrs = set()
    for m in re.finditer(r"f2fs_submit_page_write: .*?ino = (\d+), page_index = 0x([0-9a-f]+), oldaddr = 0x([0-9a-f]+), newaddr = 0x([0-9a-f]+), rw = [^,]*, type = (\w+)", ft):
        if m.group(5).endswith("DATA"):
            inos.add(int(m.group(1)))
            addrs |= {int(m.group(3), 16), int(m.group(4), 16)}
    for m in re.finditer(r" zr: \([^)]*\) addr=(\d+)(?: len=(\d+))?", ft):
        a, n = int(m.group(1)), int(m.group(2) or 1)
        addrs |= set(range(a, a + n)) if m.group(2) else {a}
    main_blk = 4096
    sup = open(after, "rb").read(4096)
    main_blk = int.from_bytes(sup[1024 + 92:1024 + 96], "little")
    print(f"# {label}")
    print("# after-state read with dump.f2fs 1.15 (-i, -s); see kernel-seq/README.md")
    for ino in sorted(i for i in inos if i >= 3):  # 1, 2: node and meta inodes
        out, fields, slots, nids = inode(after, ino)
        if "is inode" not in out:
            print(f"\n## ino={ino}: not an inode in the after-image")
            continue
        size = int(re.search(r"^i_size\s+\[0x\s*[0-9a-f]+ : (\d+)\]", out, re.M).group(1))
        blocks = int(re.search(r"^i_blocks\s+\[0x\s*[0-9a-f]+ : (\d+)\]", out, re.M).group(1))
        inl = int(re.search(r"^i_inline\s+\[0x\s*[0-9a-f]+ : (\d+)\]", out, re.M).group(1))
        a_inode, a_block, _ = geometry(out)
        nodes = file_slots(after, slots, nids, a_inode, a_block)
        print(f"\n## ino={ino} size={size} i_blocks={blocks}" + (" inline" if inl & 0x6 else ""))
        print("# dump.f2fs -i (timestamps, generation, checksum dropped):")
        for f in fields:
            print("  " + f)
        print("# nodes: " + (", ".join(f"{r}={n}" for r, n in nodes) or "none"))
        if inl & 0x6:  # F2FS_INLINE_DATA | F2FS_INLINE_DENTRY
            continue
        last = max(slots) + 1 if slots else 0
        n = max(-(-size // 4096), last)
        if n <= 65536:
            print(f"# slots 0..{n - 1}")
            idx = range(n)
        else:
            print(f"# {n} slots: non-NULL slots only")
            idx = sorted(slots)
        for i in idx:
            a = slots.get(i, NULL)
            print(f"{i} {'NULL' if a == NULL else 'NEW' if a == NEW else 'COMPRESS' if a == COMPRESS else a}")
    sb, sa = sit(before), sit(after)
    touched = {s for s in set(sb) | set(sa) if sb.get(s) != sa.get(s)}
    touched |= {(a - main_blk) // 512 for a in addrs if main_blk <= a < 0xFFFFFFF0}
    print("\n## SIT (dump.f2fs -s) of touched segments: segments whose entry changed, and those")
    print("## holding a block the trace names; vblocks before -> after, then the after valid map")
    for s in sorted(touched):
        b, a = sb.get(s, (0, 0, "")), sa.get(s, (0, 0, ""))
        print(f"segno {s} vblocks {b[0]} -> {a[0]} seg_type {b[1]} -> {a[1]} (blocks {main_blk + s * 512}..{main_blk + s * 512 + 511})")
        print("  map " + (a[2] or "(no entry)"))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""cmp-after.py N.after.txt AFTER.img: does the after-image give the committed N.after.txt
(header `# ino= size= i_blocks= [inline]` and one `INDEX ADDR|NEW|NULL` line per slot)?"""
import re, sys
sys.path.insert(0, __import__("os").path.dirname(__file__))
from seqdump import inode, file_slots, NULL, NEW
want = open(sys.argv[1]).read().splitlines()
ino = int(re.match(r"# ino=(\d+)", want[0]).group(1))
out, fields, slots, nids = inode(sys.argv[2], ino)
size = int(re.search(r"^i_size\s+\[0x\s*[0-9a-f]+ : (\d+)\]", out, re.M).group(1))
blocks = int(re.search(r"^i_blocks\s+\[0x\s*[0-9a-f]+ : (\d+)\]", out, re.M).group(1))
inl = int(re.search(r"^i_inline\s+\[0x\s*[0-9a-f]+ : (\d+)\]", out, re.M).group(1))
got = [f"# ino={ino} size={size} i_blocks={blocks}" + (" inline" if inl & 0x6 else "")]
if not inl & 0x6:
    file_slots(sys.argv[2], slots, nids)
    n = max(-(-size // 4096), max(slots) + 1 if slots else 0)
    got += [f"{i} {'NULL' if slots.get(i, 0) == NULL else 'NEW' if slots[i] == NEW else slots[i]}" for i in range(n)]
if got == want:
    print("after.txt SAME")
else:
    diff = [(i, w, g) for i, (w, g) in enumerate(zip(want, got)) if w != g]
    print(f"after.txt DIFF: {len(want)} vs {len(got)} lines, first differences {diff[:5]}")

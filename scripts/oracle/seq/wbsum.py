#!/usr/bin/env python3
"""wbsum.py FTRACE: per op, the f2fs_invalidate_blocks calls and every DATA page
written (ino, page index, old -> new address; "in place" when equal)."""
import re, sys
op, calls, wb = "0", {}, {}
order = ["0"]
for line in open(sys.argv[1]):
    m = re.search(r"tracing_mark_write: zr_op (\S+)", line)
    if m:
        op = m.group(1); order.append(op); continue
    if " zr: (" in line:
        calls[op] = calls.get(op, 0) + 1; continue
    m = re.search(r"(f2fs_submit_page_(?:write|bio)): .*?ino = (\d+), page_index = 0x([0-9a-f]+), oldaddr = 0x([0-9a-f]+), newaddr = 0x([0-9a-f]+), rw = [^,]*, type = (\w+)", line)
    if m and m.group(6).endswith("DATA"):
        o, n = int(m.group(4), 16), int(m.group(5), 16)
        os_ = "NEW" if o == 0xFFFFFFFF else str(o)
        wb.setdefault(op, []).append(f"ino {m.group(2)} page {int(m.group(3), 16)}: {os_} -> {n}" + (" (in place)" if o == n else ""))
for o in order:
    print(f"op {o}: {calls.get(o, 0)} calls" + ("".join("\n    " + w for w in wb.get(o, [])) if o in wb else ""))

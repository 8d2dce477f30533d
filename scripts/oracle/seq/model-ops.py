#!/usr/bin/env python3
"""model-ops.py CASEDIR: write CASEDIR/model.ops and model.batched.ops, the case's ops in zrviz's ops
language with each kernel's clock, for a case the oracle-gc guest helper ran (it writes show.txt and
clock.txt): its own sysctl/show/snap/sleep lines dropped, `pwrite P O L pattern nosync` as
`write P O L`, and `now SECONDS` (CLOCK_BOOTTIME before the op minus mounted_time_sec) before every
op. afterck's tests check that the files are exactly this."""
import os, sys

c = sys.argv[1].rstrip("/")
name = os.path.basename(c)
for sfx, kernel, mode in (("", "stock", "per-block"), (".batched", "batched", "batched")):
    mounted = None
    for l in open(f"{c}/show{sfx}.txt"):
        f = l.split()
        if len(f) == 3 and f[1] == "mounted_time_sec":
            mounted = int(f[2])
    clock = {}
    for l in open(f"{c}/clock{sfx}.txt"):
        f = l.split("\t")
        if len(f) == 3 and int(f[1]) >= mounted:
            clock[int(f[0])] = int(f[1]) - mounted
    out, n = [], 0
    # A case mounted with options the image does not record (ZR_MOUNT_OPTS, its `mount` file).
    if os.path.exists(f"{c}/mount"):
        out += ["mount " + o for o in open(f"{c}/mount").read().split()]
    for l in open(f"{c}/ops"):
        l = l.rstrip("\n")
        if "#" in l:
            l = l[: l.index("#")]
        f = l.split()
        if not f:
            continue
        n += 1
        if f[0] in ("sysctl", "show", "snap", "sleep"):
            continue
        if f[0] == "pwrite" and len(f) == 6 and f[4] == "pattern" and f[5] == "nosync":
            l = " ".join(["write", f[1], f[2], f[3]])
        if n in clock:
            out.append(f"now {clock[n]}")
        out.append(" ".join(l.split()))
    with open(f"{c}/model{sfx}.ops", "w") as w:
        w.write(f"# {name}/ops in the ops language for the model, with the {kernel} kernel's clock: the guest helper's\n")
        w.write("# sysctl and show lines dropped, pwrite … pattern nosync as write, now SECONDS before every op\n")
        w.write(f"# (clock{sfx}.txt − show{sfx}.txt's mounted_time_sec). zrviz run --ops model{sfx}.ops --mode {mode}\n")
        w.write("\n".join(out) + "\n")

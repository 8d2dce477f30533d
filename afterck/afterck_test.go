package afterck_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/afterck"
	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgdiff"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/imgedit"
	"github.com/zrviz/zrviz/internal/testutil"
)

const (
	demo  = "../imgio/demo/demo.img.zst"
	cases = "../core/testdata/kernel-cases"
)

func readOps(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func model(t *testing.T, img *imgio.Image, n int, mode core.Mode) []afterck.Op {
	t.Helper()
	ops, err := zeroOps(img, readOps(t, filepath.Join(cases, fmt.Sprintf("%d.ops", n))), mode)
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// apply writes the model's after-state into the raw image name, in place: what a kernel that
// wrote nothing but what the call itself changes would leave (slots in their dnodes, i_size,
// i_blocks, the SIT entries, the checkpoint's counts).
func apply(t *testing.T, name string, ops []afterck.Op) {
	t.Helper()
	imgedit.Edit(t, name, func(e imgedit.Editor) {
		for _, op := range ops {
			r := op.Result
			for _, x := range r.After.Extents {
				for k := x.Index; k < x.Index+x.Count; k++ {
					want := imgio.NullAddr
					switch x.State {
					case "new":
						want = imgio.NewAddr
					case "addr":
						want = x.Addr + uint32(k-x.Index)
					}
					cur, err := e.Slot(op.Ino, k)
					if err != nil {
						if want == imgio.NullAddr {
							continue // no dnode holds it, and none is needed
						}
						t.Fatal(err)
					}
					if cur != want {
						if err := e.SetSlot(op.Ino, k, want); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			if err := e.SetInode(op.Ino, imgedit.ISize, uint64(r.SizeAfter)); err != nil {
				t.Fatal(err)
			}
			if err := e.SetInode(op.Ino, imgedit.IBlocks, r.BlocksAfter); err != nil {
				t.Fatal(err)
			}
			for _, s := range r.Segments {
				m, _ := hex.DecodeString(s.Map)
				if err := e.SetSIT(s.Segno, [64]byte(m)); err != nil {
					t.Fatal(err)
				}
			}
		}
		r := ops[len(ops)-1].Result
		if err := e.SetCheckpoint(imgedit.CPValidBlockCount, r.ValidBlocks); err != nil {
			t.Fatal(err)
		}
		if err := e.SetCheckpoint(imgedit.CPValidNodeCount, uint64(r.ValidNodes)); err != nil {
			t.Fatal(err)
		}
	})
}

// after makes a model after-image of case n in mode and returns the before image, its name, the
// operations and the after-image's name.
func after(t *testing.T, n int, mode core.Mode) (*imgio.Image, []afterck.Op, string) {
	t.Helper()
	before := imgedit.Open(t, imgedit.Copy(t, demo))
	ops := model(t, before, n, mode)
	name := imgedit.Copy(t, demo)
	apply(t, name, ops)
	return before, ops, name
}

func check(t *testing.T, before *imgio.Image, ops []afterck.Op, name string) *afterck.Report {
	t.Helper()
	rep, err := checkOps(context.Background(), before, imgedit.Open(t, name), ops)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func wantAgree(t *testing.T, rep *afterck.Report) {
	t.Helper()
	if !rep.Agree || rep.Total != 0 {
		t.Errorf("agree %v, %d differences: %v", rep.Agree, rep.Total, rep.Differences)
	}
}

// TestModelAfterImage: an after-image holding exactly the model's after-state agrees, in both modes.
func TestModelAfterImage(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a copy of a 256 MiB image per after-image")
	}
	for _, n := range []int{1, 6, 7, 9} {
		for _, mode := range core.Modes {
			t.Run(fmt.Sprintf("%d/%s", n, mode), func(t *testing.T) {
				before, ops, name := after(t, n, mode)
				wantAgree(t, check(t, before, ops, name))
			})
		}
	}
}

func one(t *testing.T, rep *afterck.Report) afterck.Difference {
	t.Helper()
	if rep.Agree || rep.Total != 1 || len(rep.Differences) != 1 {
		t.Fatalf("want one difference, got agree %v, %d: %v", rep.Agree, rep.Total, rep.Differences)
	}
	return rep.Differences[0]
}

// TestDoctored: one SIT bit, one slot, one i_size changed in an agreeing after-image are each
// reported as what they are.
func TestDoctored(t *testing.T) {
	before, ops, name := after(t, 6, core.PerBlock) // /cases/fragmented.bin, 256 blocks from 5634
	const ino = 30
	t.Run("sit-bit", func(t *testing.T) {
		doc := copyFile(t, name)
		// Block 5634 was invalidated: set its bit again.
		imgedit.Edit(t, doc, func(e imgedit.Editor) {
			if err := e.SetBlockValid(5634, true); err != nil {
				t.Fatal(err)
			}
		})
		d := one(t, check(t, before, ops, doc))
		seg, bit := uint32((5634-4096)/512), (5634-4096)%512
		if d.What != "sit-bit" || *d.Segno != seg || *d.Bit != bit || *d.Addr != 5634 || d.Model != "clear" || d.Image != "set" {
			t.Errorf("got %s, want segment %d bit %d model clear image set", d, seg, bit)
		}
	})
	t.Run("slot", func(t *testing.T) {
		doc := copyFile(t, name)
		imgedit.Edit(t, doc, func(e imgedit.Editor) {
			if err := e.SetSlot(ino, 17, imgio.NullAddr); err != nil {
				t.Fatal(err)
			}
		})
		d := one(t, check(t, before, ops, doc))
		if d.What != "slot" || d.Ino != ino || *d.Index != 17 || d.Field != "i_addr[17]" || d.Model != "NEW" || d.Image != "NULL" {
			t.Errorf("got %s, want /cases/fragmented.bin block 17 (i_addr[17]) model NEW image NULL", d)
		}
	})
	t.Run("i_size", func(t *testing.T) {
		doc := copyFile(t, name)
		imgedit.Edit(t, doc, func(e imgedit.Editor) {
			if err := e.SetInode(ino, imgedit.ISize, 4096); err != nil {
				t.Fatal(err)
			}
		})
		d := one(t, check(t, before, ops, doc))
		if d.What != "i_size" || d.Ino != ino || d.Model != "1048576" || d.Image != "4096" {
			t.Errorf("got %s, want i_size model 1048576 image 4096", d)
		}
	})
	t.Run("another-case", func(t *testing.T) {
		_, _, other := after(t, 7, core.PerBlock) // holes.bin zeroed instead
		rep := check(t, before, ops, other)
		if rep.Agree {
			t.Fatal("another case's after-image agrees")
		}
		var slots, nat int
		for _, d := range rep.Differences {
			switch {
			case d.What == "slot" && d.Ino == ino:
				slots++
			case d.What == "nat":
				nat++
			}
		}
		// fragmented.bin untouched there: all 256 slots hold their blocks, not NEW.
		if slots != 256 {
			t.Errorf("%d slot differences of fragmented.bin, want 256: %v", slots, rep.Differences[:min(5, len(rep.Differences))])
		}
	})
	t.Run("before-image", func(t *testing.T) {
		rep := check(t, before, ops, imgedit.Copy(t, demo))
		var slots, bits, counts int
		for _, d := range rep.Differences {
			switch d.What {
			case "slot":
				slots++
			case "sit-bit":
				bits++
			case "valid_block_count":
				counts++
			}
		}
		if rep.Agree || slots != 256 || bits != 256 || counts != 0 {
			t.Errorf("the before-image: %d slots, %d SIT bits, %d counts differ; want 256, 256, 0 (zeroing keeps valid_block_count: a NEW slot counts)", slots, bits, counts)
		}
	})
}

// TestExplained: what the kernel does after the call — a reserved partial page written to a new
// block, the file's inode rewritten elsewhere — is explained, and the image agrees.
func TestExplained(t *testing.T) {
	// Case 3: contiguous.bin (inode 28) zeroed past EOF; page 1028 partial, reserved NEW.
	before, ops, name := after(t, 3, core.Batched)
	const ino = 28
	var free uint32
	imgedit.Edit(t, name, func(e imgedit.Editor) {
		segs, err := e.Img.Segments()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range segs {
			if s.ValidBlocks == 0 && !s.Current {
				free = e.Img.Volume().MainBlkaddr + s.Segno*512
				break
			}
		}
		if err := e.SetSlot(ino, 1028, free); err != nil {
			t.Fatal(err)
		}
		if err := e.SetBlockValid(free, true); err != nil {
			t.Fatal(err)
		}
		if err := e.MoveNode(ino, free+1); err != nil {
			t.Fatal(err)
		}
	})
	rep := check(t, before, ops, name)
	wantAgree(t, rep)
	kinds := map[string]bool{}
	for _, x := range rep.Explained {
		kinds[x.Kind] = true
		if x.Func == "" || x.Text == "" {
			t.Errorf("explanation without its kernel function or words: %+v", x)
		}
	}
	if !kinds["writeback-new"] || !kinds["node-cow"] {
		t.Errorf("explained %+v, want writeback-new and node-cow", rep.Explained)
	}
}

func TestUnrelated(t *testing.T) {
	mkfs := testutil.NeedTool(t, "mkfs.f2fs")
	other := filepath.Join(t.TempDir(), "other.img")
	if err := os.WriteFile(other, make([]byte, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(other, 256<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mkfs, "-q", "-f", other).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.f2fs: %v\n%s", err, out)
	}
	before := imgedit.Open(t, imgedit.Copy(t, demo))
	_, err := checkOps(context.Background(), before, imgedit.Open(t, other), model(t, before, 6, core.PerBlock))
	if !errors.Is(err, imgdiff.ErrUnrelated) {
		t.Errorf("another filesystem: %v, want ErrUnrelated", err)
	}
}

// TestKernelAfterImages: every after-image the kernel wrote for a fixture case agrees in both modes.
func TestKernelAfterImages(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a copy of a 256 MiB image per after-image")
	}
	found := 0
	for n := 1; n <= 12; n++ {
		for _, mode := range core.Modes {
			suffix := ".after.img.zst"
			if mode == core.Batched {
				suffix = ".after.batched.img.zst"
			}
			img := filepath.Join(cases, fmt.Sprint(n)+suffix)
			if _, err := os.Stat(img); err != nil {
				continue
			}
			found++
			t.Run(fmt.Sprintf("%d/%s", n, mode), func(t *testing.T) {
				before := imgedit.Open(t, imgedit.Copy(t, demo))
				ops := model(t, before, n, mode)
				rep := check(t, before, ops, imgedit.Copy(t, img))
				if !rep.Agree {
					var b strings.Builder
					for _, d := range rep.Differences[:min(10, len(rep.Differences))] {
						fmt.Fprintln(&b, " ", d)
					}
					t.Errorf("%d differences:\n%s", rep.Total, b.String())
				}
			})
		}
	}
	if found == 0 {
		testutil.NeedFixtures(t, filepath.Join(cases, "*.after.img.zst"))
	}
}

func copyFile(t *testing.T, name string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "doc.img")
	// cp keeps the holes of the sparse copy.
	if b, err := exec.Command("cp", "--sparse=always", name, out).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, b)
	}
	return out
}

// seqModelOps is a kernel-seq case's ops in the model's language, for the kernel run with suffix
// sfx: the guest helper's own lines (sysctl, show, snap, sleep) dropped, its buffered pattern write
// (pwrite PATH OFF LEN pattern nosync) as write PATH OFF LEN, and, where the case has the
// kernel's clock (clock.txt, show.txt's mounted_time_sec), a `now SECONDS` before every op: the
// seconds since mount the kernel's op started at.
func seqModelOps(t *testing.T, dir, sfx string) string {
	text, _ := seqModelOpsAt(t, dir, sfx)
	return text
}

// seqModelOpsAt is seqModelOps and, for each operation of the kernel's run (1-based, the
// guest-only lines counted), its number in the model's text (the clock's now lines counted).
func seqModelOpsAt(t *testing.T, dir, sfx string) (string, map[int]int) {
	t.Helper()
	clock := map[int]uint64{}
	if sb, err := os.ReadFile(filepath.Join(dir, "show"+sfx+".txt")); err == nil {
		var mounted uint64
		for _, l := range strings.Split(string(sb), "\n") {
			if f := strings.Fields(l); len(f) == 3 && f[1] == "mounted_time_sec" {
				mounted, _ = strconv.ParseUint(f[2], 10, 64)
			}
		}
		for _, l := range strings.Split(readOps(t, filepath.Join(dir, "clock"+sfx+".txt")), "\n") {
			var n int
			var b0, b1 uint64
			if _, err := fmt.Sscanf(l, "%d\t%d\t%d", &n, &b0, &b1); err == nil && b0 >= mounted {
				clock[n] = b0 - mounted
			}
		}
	}
	var out []string
	if b, err := os.ReadFile(filepath.Join(dir, "mount")); err == nil {
		for _, o := range strings.Fields(string(b)) {
			out = append(out, "mount "+o)
		}
	}
	n := 0
	at := map[int]int{}
	for _, l := range strings.Split(readOps(t, filepath.Join(dir, "ops")), "\n") {
		if i := strings.Index(l, "#"); i >= 0 {
			l = l[:i]
		}
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		n++
		switch {
		case f[0] == "sysctl" || f[0] == "show" || f[0] == "snap" || f[0] == "sleep":
			continue
		case f[0] == "pwrite" && len(f) == 6 && f[4] == "pattern" && f[5] == "nosync":
			l = strings.Join([]string{"write", f[1], f[2], f[3]}, " ")
		}
		if c, ok := clock[n]; ok {
			out = append(out, fmt.Sprintf("now %d", c))
		}
		out = append(out, strings.Join(strings.Fields(l), " ")) // as model-ops.py writes it
		at[n] = len(out)
	}
	return strings.Join(out, "\n"), at
}

// TestKernelSeqAfterImages: every kernel-written sequence (core/testdata/kernel-seq/*: the demo or
// its own before-image, the ops, the after-image of the stock and the batched kernel), whatever its
// operations (zero, write, fsync, sync, tune), agrees in both modes with afterck.ModelSeq, what the
// kernel did after each call explained.
func TestKernelSeqAfterImages(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a copy of a 256 MiB image per after-image")
	}
	dirs := testutil.NeedFixtures(t, "../core/testdata/kernel-seq/*/ops")
	for _, opsName := range dirs {
		dir := filepath.Dir(opsName)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			base := demo
			if _, err := os.Stat(filepath.Join(dir, "before.img.zst")); err == nil {
				base = filepath.Join(dir, "before.img.zst") // the sequence's own before-image
			} else if b, _ := os.ReadFile(filepath.Join(dir, "base")); strings.TrimSpace(string(b)) != "demo" {
				t.Skipf("base %q and no before.img.zst", b)
			}
			for _, mode := range core.Modes {
				suffix, sfx := "after.img.zst", ""
				if mode == core.Batched {
					suffix, sfx = "after.batched.img.zst", ".batched"
				}
				text, opAt := seqModelOpsAt(t, dir, sfx)
				// A case with the kernel's clock commits the model's ops too (model.ops,
				// model.batched.ops, what zrviz run --ops runs): they must be these.
				if b, err := os.ReadFile(filepath.Join(dir, "model"+sfx+".ops")); err == nil {
					var lines []string
					for _, l := range strings.Split(string(b), "\n") {
						if l != "" && !strings.HasPrefix(l, "#") {
							lines = append(lines, l)
						}
					}
					if got := strings.Join(lines, "\n"); got != text {
						t.Fatalf("model%s.ops is not the case's ops with the kernel's clock:\n%s\nwant\n%s", sfx, got, text)
					}
				}
				t.Run(mode.String(), func(t *testing.T) {
					before := imgedit.Open(t, imgedit.Copy(t, base))
					st, err := afterck.ModelSeq(context.Background(), before, text, mode)
					if r, ok := testutil.KernelSeqRefusal(t, dir); ok {
						// The model refuses an operation of the case rather than guess: no state.
						// Its number in the model's text counts the clock's now lines.
						r.Op = opAt[r.Op]
						if !r.Refused(err, func(err error) bool { return errors.Is(err, core.ErrUnmodelled) }) {
							t.Fatalf("want operation %d refused naming %s, got %v", r.Op, r.Function, err)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					rep, err := afterck.CheckState(context.Background(), before, imgedit.Open(t, imgedit.Copy(t, filepath.Join(dir, suffix))), st)
					if err != nil {
						t.Fatal(err)
					}
					if !rep.Agree {
						var b strings.Builder
						for _, d := range rep.Differences[:min(10, len(rep.Differences))] {
							fmt.Fprintln(&b, " ", d)
						}
						t.Errorf("%d differences:\n%s", rep.Total, b.String())
					}
					cow := false
					for _, c := range rep.ExplainedSummary { // every explanation, listed or not
						cow = cow || c.Kind == "node-cow"
					}
					for _, x := range rep.Explained {
						// The model moves what garbage collection moves (f2fs_balance_fs inside an
						// op, gc ops): a data block the image has elsewhere is a difference the
						// byte comparison must not have to explain.
						if x.Kind == "gc-move" {
							t.Errorf("a gc move the model did not make: %s", x.Text)
						}
					}
					if !cow {
						t.Errorf("the zeroed file's inode was rewritten at unmount, but no node-cow is explained: %+v", rep.Explained)
					}
				})
			}
		})
	}
}

// TestDoctoredKernelAfterImage: the kernel's own after-image of kernel-seq/c1-data-partial
// (/cases/contiguous.bin, inode 28, zeroed over [5000, 1500000)), doctored one way at a time, is
// reported with the right segment and bit, file and slot, field; another sequence's after-image
// and the before-image differ too.
func TestDoctoredKernelAfterImage(t *testing.T) {
	const seq = "../core/testdata/kernel-seq/c1-data-partial"
	if _, err := os.Stat(seq + "/after.img.zst"); err != nil {
		t.Skip("no kernel-seq/c1-data-partial fixture")
	}
	before := imgedit.Open(t, imgedit.Copy(t, demo))
	ops, err := zeroOps(before, readOps(t, seq+"/ops"), core.PerBlock)
	if err != nil {
		t.Fatal(err)
	}
	kernel := imgedit.Copy(t, seq+"/after.img.zst")
	wantAgree(t, check(t, before, ops, kernel))
	const ino = 28 // block k of the file is 22528+k in the demo
	doctor := func(fn func(e imgedit.Editor)) *afterck.Report {
		doc := copyFile(t, kernel)
		imgedit.Edit(t, doc, fn)
		return check(t, before, ops, doc)
	}
	t.Run("sit-bit", func(t *testing.T) {
		// Block 22600 (file block 72) was invalidated: its bit set again.
		d := one(t, doctor(func(e imgedit.Editor) {
			if err := e.SetBlockValid(22600, true); err != nil {
				t.Fatal(err)
			}
		}))
		if d.What != "sit-bit" || *d.Segno != (22600-4096)/512 || *d.Bit != (22600-4096)%512 || *d.Addr != 22600 || d.Model != "clear" {
			t.Errorf("got %s", d)
		}
	})
	t.Run("slot", func(t *testing.T) {
		// File block 900 lies in the direct node i_nid[0] (the inode holds 873).
		d := one(t, doctor(func(e imgedit.Editor) {
			if err := e.SetSlot(ino, 900, imgio.NewAddr); err != nil {
				t.Fatal(err)
			}
		}))
		if d.What != "slot" || *d.Index != 900 || d.Field != "i_nid[0] addr[27]" || d.Model != "23428" || d.Image != "NEW" {
			t.Errorf("got %s, want file block 900 (i_nid[0] addr[27]) model 23428 image NEW", d)
		}
	})
	t.Run("i_size", func(t *testing.T) {
		d := one(t, doctor(func(e imgedit.Editor) {
			if err := e.SetInode(ino, imgedit.ISize, 4194305); err != nil {
				t.Fatal(err)
			}
		}))
		if d.What != "i_size" || d.Ino != ino || d.Model != "4194304" || d.Image != "4194305" {
			t.Errorf("got %s", d)
		}
	})
	t.Run("moved-without-gc", func(t *testing.T) {
		// File block 400 (22928, which no operation touched) found at a free block with its
		// bytes: garbage collection would move it so, but no operation ran a collection, so it
		// is a difference, not an explanation (issue 29: only events the model shows happened).
		// With a collection in the operations the same image is explained by it.
		const free = 30000
		doc := copyFile(t, kernel)
		imgedit.Edit(t, doc, func(e imgedit.Editor) {
			for _, err := range []error{e.CopyBlock(22928, free), e.SetSlot(ino, 400, free), e.SetBlockValid(free, true), e.SetBlockValid(22928, false)} {
				if err != nil {
					t.Fatal(err)
				}
			}
		})
		rep := check(t, before, ops, doc)
		var slot bool
		for _, d := range rep.Differences {
			slot = slot || d.What == "slot" && *d.Index == 400 && d.Model == "22928" && d.Image == "30000"
		}
		if rep.Agree || !slot {
			t.Errorf("no collection ran, yet: agree %v, %v", rep.Agree, rep.Differences)
		}
		for _, x := range rep.Explained {
			if x.Kind == "gc-move" {
				t.Errorf("explained by a collection that did not run: %s", x.Text)
			}
		}
		withGC := slices.Clone(ops)
		withGC[len(withGC)-1].GC = true
		rep = check(t, before, withGC, doc)
		wantAgree(t, rep)
		moved := false
		for _, x := range rep.Explained {
			moved = moved || x.Kind == "gc-move" && x.From != nil && *x.From == 22928
		}
		if !moved {
			t.Errorf("with a collection in the operations: %+v", rep.Explained)
		}
	})
	t.Run("another-sequence", func(t *testing.T) {
		rep := check(t, before, ops, imgedit.Copy(t, "../core/testdata/kernel-seq/a-holes-partial/after.img.zst"))
		if rep.Agree || len(rep.Differences) == 0 || rep.Differences[0].What != "slot" || rep.Differences[0].Ino != ino {
			t.Errorf("a-holes-partial's after-image against c1's model: agree %v, first %v", rep.Agree, rep.Differences[:min(1, len(rep.Differences))])
		}
	})
	t.Run("before-image", func(t *testing.T) {
		rep := check(t, before, ops, imgedit.Copy(t, demo))
		d := rep.Differences
		// Pages 2 … 365 zeroed whole: their slots differ, the first being file block 2.
		if rep.Agree || len(d) == 0 || d[0].What != "slot" || *d[0].Index != 2 || d[0].Model != "NEW" || d[0].Image != "22530" {
			t.Errorf("the before-image: first difference %v", d[:min(1, len(d))])
		}
	})
}

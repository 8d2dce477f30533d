package imgdiff_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/imgdiff"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/imgedit"
	"github.com/zrviz/zrviz/internal/testutil"
)

const demo = "../imgio/demo/demo.img.zst"

// contiguous.bin: inode 28, 1024 blocks from 22528.
const ino = 28

// freeBlock is the first block of the first free segment that is not a current log.
func freeBlock(t *testing.T, img *imgio.Image) uint32 {
	t.Helper()
	segs, err := img.Segments()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		if s.ValidBlocks == 0 && !s.Current {
			return img.Volume().MainBlkaddr + s.Segno*512
		}
	}
	t.Fatal("no free segment")
	return 0
}

// doctor makes B from the demo: contiguous.bin's inode moved to a free block (a node COW) and its
// slot 5 made NEW with block 22533's SIT bit cleared (an invalidate).
func doctor(t *testing.T) (a, b string, moved uint32) {
	a = imgedit.Copy(t, demo)
	b = imgedit.Copy(t, demo)
	imgedit.Edit(t, b, func(e imgedit.Editor) {
		moved = freeBlock(t, e.Img)
		if err := e.MoveNode(ino, moved); err != nil {
			t.Fatal(err)
		}
	})
	imgedit.Edit(t, b, func(e imgedit.Editor) {
		if err := e.SetSlot(ino, 5, imgio.NewAddr); err != nil {
			t.Fatal(err)
		}
		if err := e.SetBlockValid(22533, false); err != nil {
			t.Fatal(err)
		}
	})
	return a, b, moved
}

func compare(t *testing.T, a, b string) *imgdiff.Diff {
	t.Helper()
	d, err := imgdiff.Compare(context.Background(), imgedit.Open(t, a), imgedit.Open(t, b))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSameImage(t *testing.T) {
	a := imgedit.Copy(t, demo)
	d := compare(t, a, a)
	if !d.Empty() {
		t.Errorf("an image against itself: %+v", d)
	}
}

func TestDoctored(t *testing.T) {
	a, b, moved := doctor(t)
	d := compare(t, a, b)
	old := imgedit.Open(t, a)
	f, err := old.File(ino)
	if err != nil {
		t.Fatal(err)
	}
	oldAddr := f.Inode().Blkaddr
	if len(d.NAT) != 1 || d.NAT[0] != (imgdiff.NATChange{Nid: ino, InoA: ino, InoB: ino, AddrA: oldAddr, AddrB: moved, Op: imgdiff.OpNodeCOW}) {
		t.Errorf("NAT = %+v", d.NAT)
	}
	if len(d.Nodes) != 1 {
		t.Fatalf("nodes = %+v", d.Nodes)
	}
	n := d.Nodes[0]
	want := []imgdiff.SlotChange{{Index: 5, Field: "i_addr[5]", A: 22533, B: imgio.NewAddr, Op: imgdiff.OpInvalidate}}
	if n.Kind != "inode" || n.File != "/cases/contiguous.bin" || !slices.Equal(n.Slots, want) {
		t.Errorf("node = %+v, want the inode of /cases/contiguous.bin with slots %+v", n, want)
	}
	if len(d.Owners) != 1 || d.Owners[0].Addr != 22533 || d.Owners[0].A == nil || d.Owners[0].A.Index != 5 || d.Owners[0].B != nil {
		t.Errorf("owners = %+v", d.Owners)
	}
	// Three SIT bits: the data block (invalidate), the old inode block and the new one (node COW).
	got := map[uint32]imgdiff.Op{}
	main := old.Volume().MainBlkaddr
	for _, s := range d.Segments {
		for i, bit := range s.Cleared {
			got[s.FirstBlock+uint32(bit)] = s.ClearedOps[i]
		}
		for i, bit := range s.Set {
			got[s.FirstBlock+uint32(bit)] = s.SetOps[i]
		}
		if s.FirstBlock != main+s.Segno*512 {
			t.Errorf("segment %d: first block %d", s.Segno, s.FirstBlock)
		}
	}
	wantBits := map[uint32]imgdiff.Op{22533: imgdiff.OpInvalidate, oldAddr: imgdiff.OpNodeCOW, moved: imgdiff.OpNodeCOW}
	if fmt.Sprint(got) != fmt.Sprint(wantBits) {
		t.Errorf("SIT bits = %v, want %v", got, wantBits)
	}
}

func TestUnrelated(t *testing.T) {
	mkfs := testutil.NeedTool(t, "mkfs.f2fs")
	other := filepath.Join(t.TempDir(), "other.img")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(other, 256<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mkfs, "-q", "-f", other).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.f2fs: %v\n%s", err, out)
	}
	_, err := imgdiff.Compare(context.Background(), imgedit.Open(t, imgedit.Copy(t, demo)), imgedit.Open(t, other))
	var ue *imgdiff.UnrelatedError
	if !errors.As(err, &ue) || !errors.Is(err, imgdiff.ErrUnrelated) || ue.Field != "uuid" {
		t.Errorf("demo against another mkfs: %v, want an UnrelatedError on the uuid", err)
	}
}

// TestAcrossFormats diffs a raw image against the Android sparse form of the doctored one.
func TestAcrossFormats(t *testing.T) {
	img2simg := testutil.NeedTool(t, "img2simg")
	a, b, _ := doctor(t)
	sparse := b + ".simg"
	if out, err := exec.Command(img2simg, b, sparse).CombinedOutput(); err != nil {
		t.Fatalf("img2simg: %v\n%s", err, out)
	}
	raw := compare(t, a, b)
	sb, err := imgio.OpenFileContext(context.Background(), sparse, &imgio.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if sb.Format() != imgio.FormatAndroidSparse {
		t.Fatalf("format %s", sb.Format())
	}
	d, err := imgdiff.Compare(context.Background(), imgedit.Open(t, a), sb)
	if err != nil {
		t.Fatal(err)
	}
	d.B, raw.B = imgdiff.Side{}, imgdiff.Side{}
	js, _ := json.Marshal(d)
	jr, _ := json.Marshal(raw)
	if !bytes.Equal(js, jr) || raw.Empty() {
		t.Errorf("raw against sparse:\n%s\nraw against raw:\n%s", js, jr)
	}
}

// dumpSIT is what dump.f2fs -s says of every main segment: "vblocks seg_type bitmap".
func dumpSIT(t *testing.T, dump, img string) map[uint32]string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(dump, "-s", "0~-1", img)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dump.f2fs -s: %v\n%s", err, out)
	}
	f, err := os.Open(filepath.Join(dir, "dump_sit"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[uint32]string{}
	head := regexp.MustCompile(`^segno:\s+(\d+)\s+vblocks:\s*(\d+)\s+seg_type:(\d+)`)
	var cur uint32
	var have bool
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := head.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseUint(m[1], 10, 32)
			cur, have = uint32(n), true
			out[cur] = m[2] + " " + m[3] + " "
			continue
		}
		if strings.HasPrefix(line, "valid_blocks:") {
			have = false // the summary after the last segment
		}
		if have && strings.TrimSpace(line) != "" {
			out[cur] += strings.Join(strings.Fields(line), "")
		}
	}
	return out
}

// TestSITAgainstDumpF2FS: the changed SIT entries are those dump.f2fs -s shows different.
func TestSITAgainstDumpF2FS(t *testing.T) {
	dump := testutil.NeedTool(t, "dump.f2fs")
	a, b, _ := doctor(t)
	d := compare(t, a, b)
	sa, sb := dumpSIT(t, dump, a), dumpSIT(t, dump, b)
	if len(sa) == 0 || len(sa) != len(sb) {
		t.Fatalf("dump.f2fs -s: %d and %d segments", len(sa), len(sb))
	}
	var want, got []uint32
	for segno, v := range sa {
		if sb[segno] != v {
			want = append(want, segno)
		}
	}
	slices.Sort(want)
	for _, s := range d.Segments {
		got = append(got, s.Segno)
	}
	if !slices.Equal(got, want) || len(got) == 0 {
		t.Errorf("changed segments %v, dump.f2fs -s says %v", got, want)
	}
}

// dumpAddrs is the i_addr slots dump.f2fs -i prints for inode ino.
func dumpAddrs(t *testing.T, dump, img string, ino uint32) map[int]uint32 {
	t.Helper()
	cmd := exec.Command(dump, "-i", fmt.Sprintf("%#x", ino), img)
	cmd.Dir, cmd.Stdin = t.TempDir(), strings.NewReader("n\n")
	out, err := cmd.CombinedOutput()
	if err != nil && len(out) == 0 {
		t.Fatalf("dump.f2fs -i: %v\n%s", err, out)
	}
	re := regexp.MustCompile(`i_addr\[0x([0-9a-f]+)\][^\[]*\[0x\s*([0-9a-f]+) : (\d+)\]`)
	m := map[int]uint32{}
	for _, l := range bytes.Split(out, []byte("\n")) {
		if s := re.FindSubmatch(l); s != nil {
			k, _ := strconv.ParseUint(string(s[1]), 16, 32)
			v, _ := strconv.ParseUint(string(s[3]), 10, 32)
			m[int(k)] = uint32(v)
		}
	}
	if !bytes.Contains(out, []byte("i_nid[0]")) {
		t.Fatalf("dump.f2fs -i %d printed no inode:\n%s", ino, out) // (an inode may have no i_addr: all NULL)
	}
	return m
}

// TestSlotsAgainstDumpF2FS: the changed inode slots are those dump.f2fs -i shows different.
func TestSlotsAgainstDumpF2FS(t *testing.T) {
	dump := testutil.NeedTool(t, "dump.f2fs")
	a, b, _ := doctor(t)
	d := compare(t, a, b)
	da, db := dumpAddrs(t, dump, a, ino), dumpAddrs(t, dump, b, ino)
	var want []string
	for _, k := range slotKeys(da, db) {
		if da[k] != db[k] {
			want = append(want, fmt.Sprintf("i_addr[%d] %d→%d", k, da[k], db[k]))
		}
	}
	var got []string
	for _, n := range d.Nodes {
		if n.Ino == ino && n.Kind == "inode" {
			for _, s := range n.Slots {
				got = append(got, fmt.Sprintf("%s %d→%d", s.Field, s.A, s.B))
			}
		}
	}
	if !slices.Equal(got, want) || len(got) == 0 {
		t.Errorf("changed slots %v, dump.f2fs -i says %v", got, want)
	}
}

// kernelPair is an after-image the kernel wrote and the image it started from.
type kernelPair struct{ before, after string }

// kernelAfterImages lists the after-images the kernel wrote: kernel-seq sequences (on the demo or
// on their own before.img.zst) and the kernel cases' N.after*.img.zst (on the demo).
func kernelAfterImages(t *testing.T) []kernelPair {
	t.Helper()
	var out []kernelPair
	seqs, _ := filepath.Glob("../core/testdata/kernel-seq/*/after*.img.zst")
	for _, s := range seqs {
		dir := filepath.Dir(s)
		if _, err := os.Stat(filepath.Join(dir, "before.img.zst")); err == nil {
			out = append(out, kernelPair{filepath.Join(dir, "before.img.zst"), s})
		} else if b, _ := os.ReadFile(filepath.Join(dir, "base")); strings.TrimSpace(string(b)) == "demo" {
			out = append(out, kernelPair{demo, s})
		}
	}
	cases, _ := filepath.Glob("../core/testdata/kernel-cases/*.after*.img.zst")
	for _, c := range cases {
		out = append(out, kernelPair{demo, c})
	}
	return out
}

// TestKernelPairsAgainstDumpF2FS: for every after-image the kernel wrote on the demo, the diff's
// changed SIT entries are those dump.f2fs -s shows different, and the changed inode slots of every
// changed file those dump.f2fs -i shows different.
func TestKernelPairsAgainstDumpF2FS(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a copy of a 256 MiB image per after-image")
	}
	dump := testutil.NeedTool(t, "dump.f2fs")
	afters := kernelAfterImages(t)
	if len(afters) == 0 {
		testutil.NeedFixtures(t, "../core/testdata/kernel-cases/*.after.img.zst")
	}
	befores := map[string][2]any{}
	pt := t // the before-images live as long as the whole test
	for _, pair := range afters {
		rel, _ := filepath.Rel("../core/testdata", pair.after)
		t.Run(rel, func(t *testing.T) {
			if _, ok := befores[pair.before]; !ok {
				a := imgedit.Copy(pt, pair.before)
				befores[pair.before] = [2]any{a, dumpSIT(t, dump, a)}
			}
			a, sa := befores[pair.before][0].(string), befores[pair.before][1].(map[uint32]string)
			b := imgedit.Copy(t, pair.after)
			d := compare(t, a, b)
			sb := dumpSIT(t, dump, b)
			var want, got []uint32
			for segno, v := range sa {
				if sb[segno] != v {
					want = append(want, segno)
				}
			}
			slices.Sort(want)
			for _, s := range d.Segments {
				// dump.f2fs -s shows the count, type and map: a change of the mtime or of the
				// current logs alone is not in it.
				if s.ValidA != s.ValidB || s.TypeA != s.TypeB || len(s.Set)+len(s.Cleared) > 0 {
					got = append(got, s.Segno)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("changed segments %v, dump.f2fs -s says %v", got, want)
			}
			inodes := 0
			for _, n := range d.Nodes {
				if n.Kind != "inode" {
					continue
				}
				inodes++
				if inlineEither(t, a, b, n.Ino) {
					// dump.f2fs prints an inline inode's data words as i_addr; the diff
					// counts no slot there (checked in TestInlineConversion).
					continue
				}
				if unlinked(t, b, n.Ino) {
					// An unlink freed the inode (kernel-seq u*): its NAT entry is NULL in the
					// after-image, where dump.f2fs -i reads no inode (block 0's bytes). The diff
					// must show every slot it lists cleared.
					for _, s := range n.Slots {
						if s.B != 0 {
							t.Errorf("inode %d, unlinked: slot %s %d→%d, want cleared", n.Ino, s.Field, s.A, s.B)
						}
					}
					continue
				}
				da, db := dumpAddrs(t, dump, a, n.Ino), dumpAddrs(t, dump, b, n.Ino)
				var want, got []string
				for _, k := range slotKeys(da, db) {
					if da[k] != db[k] {
						want = append(want, fmt.Sprintf("i_addr[%d] %d→%d", k, da[k], db[k]))
					}
				}
				for _, s := range n.Slots {
					got = append(got, fmt.Sprintf("%s %d→%d", s.Field, s.A, s.B))
				}
				if !slices.Equal(got, want) {
					t.Errorf("inode %d: changed slots %v, dump.f2fs -i says %v", n.Ino, got, want)
				}
			}
			if inodes == 0 && len(want) > 0 {
				t.Error("SIT entries changed but no inode was rewritten: the zeroed file's inode is")
			}
		})
	}
}

// slotKeys is every slot index either dump printed, in order (dump.f2fs leaves NULL slots out).
func slotKeys(a, b map[int]uint32) []int {
	var ks []int
	for k := range a {
		ks = append(ks, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

// inlineEither reports whether inode ino has inline data or dentries in image a or b.
// unlinked reports whether inode ino's NAT entry in image name names no block: the inode is gone.
func unlinked(t *testing.T, name string, ino uint32) bool {
	t.Helper()
	e, err := imgedit.Open(t, name).NAT(ino)
	return err == nil && e.BlockAddr == 0
}

func inlineEither(t *testing.T, a, b string, ino uint32) bool {
	t.Helper()
	for _, name := range []string{a, b} {
		f, err := imgedit.Open(t, name).File(ino)
		if err == nil && f.Inode().Inline&0x06 != 0 {
			return true
		}
	}
	return false
}

// TestInlineConversion: kernel case 12 zeroes the inline /cases/tiny.txt (inode 44): the kernel
// converts it, so slot 0 goes from none (NULL) to NEW, and i_inline loses inline_data.
func TestInlineConversion(t *testing.T) {
	const after = "../core/testdata/kernel-cases/12.after.img.zst"
	testutil.NeedFixture(t, after)
	d := compare(t, imgedit.Copy(t, demo), imgedit.Copy(t, after))
	var n *imgdiff.NodeChange
	for i := range d.Nodes {
		if d.Nodes[i].Ino == 44 && d.Nodes[i].Kind == "inode" {
			n = &d.Nodes[i]
		}
	}
	want := []imgdiff.SlotChange{{Index: 0, Field: "i_addr[0]", A: imgio.NullAddr, B: imgio.NewAddr, Op: imgdiff.OpReserve}}
	if n == nil || !slices.Equal(n.Slots, want) {
		t.Fatalf("tiny.txt's inode: %+v, want slots %+v", n, want)
	}
	found := false
	for _, in := range d.Inodes {
		for _, f := range in.Fields {
			found = found || (in.Ino == 44 && f.Name == "i_inline" && strings.Contains(f.A, "inline_data") && !strings.Contains(f.B, "inline_data"))
		}
	}
	if !found {
		t.Errorf("i_inline's change is not listed: %+v", d.Inodes)
	}
}

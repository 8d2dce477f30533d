package imgio

import (
	"bytes"
	"context"
	"fmt"
	"github.com/zrviz/zrviz/internal/testutil"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// runTool runs a tool in dir (dump.f2fs writes its tables into the current directory) and returns
// stdout and stderr together. A non-zero exit is tolerated: dump.f2fs asks questions and exits 1.
func runTool(t testing.TB, dir string, stdin string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// toolImages are the images cross-checked against f2fs-tools: the kernel-written demo and the
// fixtures freshly built by scripts/mkfixtures.sh.
func toolImages(t *testing.T) map[string]string {
	t.Helper()
	testutil.NeedTools(t, "mkfs.f2fs", "sload.f2fs", "fsck.f2fs", "dump.f2fs", "zstd", "gzip")
	if testing.Short() {
		// The fast tier: the committed fixture with the most kinds of structure and the
		// kernel-written demo, as the tests share them; outside -short the fixtures are made afresh
		// by scripts/mkfixtures.sh, with an image of every feature beside them.
		return map[string]string{
			"features": testutil.RawImage(t, "testdata/features.img.gz"),
			"demo":     testutil.DemoImage(t),
		}
	}
	dir := t.TempDir()
	cmd := exec.Command("../scripts/mkfixtures.sh", dir)
	cmd.Env = append(os.Environ(), "RAW=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mkfixtures.sh: %v\n%s", err, out)
	}
	imgs := map[string]string{}
	for _, n := range []string{"basic", "features", "segs4"} {
		imgs[n] = filepath.Join(dir, n+".img")
	}
	imgs["allfeatures"] = allFeaturesImage(t, dir)
	demo := filepath.Join(dir, "demo.img")
	if out, err := exec.Command("zstd", "-q", "-d", "demo/demo.img.zst", "-o", demo).CombinedOutput(); err != nil {
		t.Fatalf("zstd: %v\n%s", err, out)
	}
	imgs["demo"] = demo
	return imgs
}

// allFeaturesImage builds an image with every feature mkfs.f2fs 1.15 offers on a plain file
// (flexible_inline_xattr, casefold, encrypt, verity, quotas, compression, sb_checksum), holding a
// file that spills from the inode into i_nid[0]. sload.f2fs 1.15 mis-places data with
// flexible_inline_xattr and exits 1, so the comparison is with dump.f2fs and fsck,
// which read the layout the way the kernel does.
func allFeaturesImage(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "src-all")
	if err := os.MkdirAll(filepath.Join(src, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "d", "big"), bytes.Repeat([]byte("allfeat!"), 900*512), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "hi"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(dir, "allfeatures.img")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 128<<20); err != nil {
		t.Fatal(err)
	}
	mkfs := exec.Command("mkfs.f2fs", "-q", "-f", "-O",
		"extra_attr,inode_checksum,flexible_inline_xattr,quota,project_quota,compression,encrypt,verity,sb_checksum,inode_crtime,lost_found",
		"-C", "utf8", img)
	if out, err := mkfs.CombinedOutput(); err != nil {
		t.Fatalf("mkfs.f2fs: %v\n%s", err, out)
	}
	exec.Command("sload.f2fs", "-f", src, img).Run() // exits 1 on this feature set; checked below
	if out := runTool(t, dir, "", "fsck.f2fs", "--dry-run", "-t", img); !strings.Contains(out, "big <ino") {
		t.Fatalf("sload.f2fs did not load the tree:\n%s", out)
	}
	return img
}

func TestAgainstF2FSTools(t *testing.T) {
	for name, path := range toolImages(t) {
		t.Run(name, func(t *testing.T) {
			// The tools mostly wait on I/O; overlapping the four images saves wall time.
			t.Parallel()
			img, err := OpenFileContext(context.Background(), path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer img.Close()
			work := t.TempDir()
			checkLayout(t, img, runTool(t, work, "", "fsck.f2fs", "--dry-run", "-l", path))
			ents, err := img.Files()
			if err != nil {
				t.Fatal(err)
			}
			checkTree(t, ents, runTool(t, work, "", "fsck.f2fs", "--dry-run", "-t", path))
			checkMap(t, img, ents, runTool(t, work, "", "fsck.f2fs", "--dry-run", "-M", path))
			runTool(t, work, "", "dump.f2fs", "-s", "0~-1", path)
			runTool(t, work, "", "dump.f2fs", "-n", "0~-1", path)
			checkSIT(t, img, filepath.Join(work, "dump_sit"))
			checkNAT(t, img, filepath.Join(work, "dump_nat"))
			for _, e := range ents {
				// One dump.f2fs run per inode is slow; a few of the 150 look-alike files are enough.
				if strings.HasPrefix(e.Path, "/many/") && !strings.HasPrefix(e.Path, "/many/file-00") {
					continue
				}
				checkInode(t, img, e, runTool(t, work, "n\n", "dump.f2fs", "-i", strconv.Itoa(int(e.Ino)), path))
			}
		})
	}
}

var kvLine = regexp.MustCompile(`^([a-z_]+(?:\[\d\])?):\s+(\d+)\s*$`)

func checkLayout(t *testing.T, img *Image, out string) {
	t.Helper()
	v := img.Volume()
	got := map[string]uint64{
		"block_count": v.BlockCount, "section_count": uint64(v.SectionCount), "segment_count": uint64(v.SegmentCount),
		"segment_count_main": uint64(v.MainSegmentCount), "segs_per_sec": uint64(v.SegsPerSec),
		"segment0_blkaddr": uint64(v.Segment0Blkaddr), "cp_blkaddr": uint64(v.CPBlkaddr),
		"sit_blkaddr": uint64(v.SITBlkaddr), "nat_blkaddr": uint64(v.NATBlkaddr), "ssa_blkaddr": uint64(v.SSABlkaddr),
		"main_blkaddr": uint64(v.MainBlkaddr), "root_ino": uint64(v.RootIno),
		"checkpoint_ver": v.CheckpointVersion, "user_block_count": v.UserBlockCount,
		"valid_block_count": v.ValidBlockCount, "rsvd_segment_count": uint64(v.RsvdSegmentCount),
		"overprov_segment_count": uint64(v.OverprovSegmentCount), "free_segment_count": uint64(v.FreeSegmentCount),
		"ckpt_flags": uint64(v.CheckpointFlags), "valid_node_count": uint64(v.ValidNodeCount),
		"valid_inode_count": uint64(v.ValidInodeCount), "elapsed_time": v.ElapsedTime,
	}
	for _, c := range v.CurrentSegments {
		kind, i := "data", c.Log
		if c.Log >= 3 {
			kind, i = "node", c.Log-3
		}
		got[fmt.Sprintf("cur_%s_segno[%d]", kind, i)] = uint64(c.Segno)
		got[fmt.Sprintf("cur_%s_blkoff[%d]", kind, i)] = uint64(c.Blkoff)
	}
	seen := 0
	for _, line := range strings.Split(out, "\n") {
		m := kvLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		g, ok := got[m[1]]
		if !ok {
			continue
		}
		seen++
		want, _ := strconv.ParseUint(m[2], 10, 64)
		if g != want {
			t.Errorf("%s: got %d, fsck.f2fs -l says %d", m[1], g, want)
		}
	}
	if seen < len(got)-2 {
		t.Errorf("only %d of %d fields found in fsck.f2fs -l output", seen, len(got))
	}
}

var treeLine = regexp.MustCompile(`^((?:[|` + "`" + ` ]   )*)[|` + "`" + `]-- (.*) <ino = 0x([0-9a-f]+)>`)

// checkTree compares every path and inode number with fsck.f2fs -t.
func checkTree(t *testing.T, ents []Entry, out string) {
	t.Helper()
	want := map[string]uint32{}
	var stack []string
	for _, line := range strings.Split(out, "\n") {
		m := treeLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		depth := len(m[1]) / 4
		stack = append(stack[:depth], m[2])
		ino, _ := strconv.ParseUint(m[3], 16, 32)
		want["/"+strings.Join(stack, "/")] = uint32(ino)
	}
	if len(want) == 0 {
		t.Fatalf("no tree in fsck.f2fs -t output:\n%s", out)
	}
	got := map[string]uint32{}
	for _, e := range ents[1:] {
		got[e.Path] = e.Ino
	}
	for p, ino := range want {
		if got[p] != ino {
			t.Errorf("%s: ino %d, fsck.f2fs -t says %d", p, got[p], ino)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d paths, fsck.f2fs -t lists %d", len(got), len(want))
	}
}

// checkMap compares the physical runs of every regular file with fsck.f2fs -M. fsck stops at the first
// file it cannot map (a large hole trips an assertion in 1.15), so only files it printed are compared.
func checkMap(t *testing.T, img *Image, ents []Entry, out string) {
	t.Helper()
	out = strings.ReplaceAll(out, "\x1b[2K", "\n")
	want := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[0], "/") {
			continue
		}
		var runs []string
		ok := true
		for _, r := range f[1:] {
			if !runToken.MatchString(r) {
				ok = false // cut short by an fsck assertion
			}
			if r != "0" {
				runs = append(runs, r)
			}
		}
		if ok {
			want[f[0]] = runs
		}
	}
	compared := 0
	for _, e := range ents {
		w, ok := want[e.Path]
		if !ok || e.Type != TypeFile {
			continue
		}
		f, err := img.Lookup(e.Path)
		if err != nil {
			t.Fatal(err)
		}
		ext, err := f.Extents()
		if err != nil {
			t.Fatalf("%s: %v", e.Path, err)
		}
		var got []string
		for _, x := range ext {
			switch {
			case x.State != StateAddr:
			case x.Count == 1:
				got = append(got, strconv.Itoa(int(x.Addr)))
			default:
				got = append(got, fmt.Sprintf("%d-%d", x.Addr, uint64(x.Addr)+x.Count-1))
			}
		}
		if strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("%s: runs %v, fsck.f2fs -M says %v", e.Path, got, w)
		}
		compared++
	}
	if compared == 0 {
		t.Errorf("no file compared with fsck.f2fs -M")
	}
}

var runToken = regexp.MustCompile(`^\d+(-\d+)?$`)

var sitHead = regexp.MustCompile(`segno:\s+(\d+)\s+vblocks:\s*(\d+)\s+seg_type:(\d+)\s+sit_pack:(\d+)`)

// checkSIT compares every segment's count, type and bitmap with dump.f2fs -s, which lists only
// segments holding valid blocks.
func checkSIT(t *testing.T, img *Image, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	segs, err := img.Segments()
	if err != nil {
		t.Fatal(err)
	}
	listed := map[int]bool{}
	cur := -1
	var vb, typ int
	var bm []byte
	flush := func() {
		if cur < 0 {
			return
		}
		if cur >= len(segs) {
			t.Fatalf("dump_sit segno %d beyond %d segments", cur, len(segs))
		}
		listed[cur] = true
		s := segs[cur]
		if len(bm) == 0 {
			bm = make([]byte, 64)
		}
		if int(s.ValidBlocks) != vb || (vb > 0 && s.Type != typ) || !bytes.Equal(s.Map[:], bm) {
			t.Errorf("segment %d: %d blocks type %d map %x, dump.f2fs says %d type %d map %x", cur, s.ValidBlocks, s.Type, s.Map, vb, typ, bm)
		}
	}
	for _, line := range strings.Split(string(b), "\n") {
		if m := sitHead.FindStringSubmatch(line); m != nil {
			flush()
			cur, _ = strconv.Atoi(m[1])
			vb, _ = strconv.Atoi(m[2])
			typ, _ = strconv.Atoi(m[3])
			bm = nil
			continue
		}
		if cur >= 0 && hexRow.MatchString(line) {
			for _, h := range strings.Fields(line) {
				v, _ := strconv.ParseUint(h, 16, 8)
				bm = append(bm, byte(v))
			}
		}
	}
	flush()
	if len(listed) == 0 {
		t.Error("no segments in dump_sit")
	}
	for _, s := range segs {
		if !listed[int(s.Segno)] && s.ValidBlocks != 0 {
			t.Errorf("segment %d: %d valid blocks, dump.f2fs does not list it", s.Segno, s.ValidBlocks)
		}
	}
}

var hexRow = regexp.MustCompile(`^\s*(?:[0-9a-f]{2}\s+)*[0-9a-f]{2}\s*$`)

var natLine = regexp.MustCompile(`nid:\s*(\d+)\s+ino:\s*(\d+)\s+offset:\s*(\d+)\s+blkaddr:\s*(\d+)`)

// checkNAT compares every allocated NAT entry with dump.f2fs -n.
func checkNAT(t *testing.T, img *Image, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		m := natLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		nid, _ := strconv.ParseUint(m[1], 10, 32)
		ino, _ := strconv.ParseUint(m[2], 10, 32)
		addr, _ := strconv.ParseUint(m[4], 10, 32)
		e, err := img.natEntry(uint32(nid))
		if err != nil {
			t.Fatal(err)
		}
		if e.Ino != uint32(ino) || e.BlockAddr != uint32(addr) {
			t.Errorf("nid %d: ino %d addr %d, dump.f2fs says %d %d", nid, e.Ino, e.BlockAddr, ino, addr)
		}
		n++
	}
	if n == 0 {
		t.Error("no NAT entries in dump_nat")
	}
}

var (
	dumpField = regexp.MustCompile(`^(i_[a-z_]+)\s+\[0x\s*[0-9a-f]+ : (\d+)\]`)
	dumpAddr  = regexp.MustCompile(`^i_addr\[0x([0-9a-f]+)\](?: reserved flag)?\s+\[0x\s*[0-9a-f]+ : (\d+)\]`)
	dumpNid   = regexp.MustCompile(`^i_nid\[(\d)\]\s+\[0x\s*[0-9a-f]+ : (\d+)\]`)
)

// checkInode compares an inode's fields and slots with dump.f2fs -i.
func checkInode(t *testing.T, img *Image, e Entry, out string) {
	t.Helper()
	f, err := img.File(e.Ino)
	if err != nil {
		t.Fatal(err)
	}
	in := f.Inode()
	slots := f.inodeSlots()
	extra := int(in.ExtraISize) / 4
	fields := map[string]uint64{"i_mode": uint64(in.Mode), "i_size": uint64(in.Size), "i_blocks": in.Blocks,
		"i_links": uint64(in.Links), "i_flags": uint64(in.Flags), "i_inline": uint64(in.Inline),
		"i_advise": uint64(in.Advise), "i_generation": uint64(in.Generation)}
	dumped := map[int]uint32{}
	nf := 0
	for _, line := range strings.Split(out, "\n") {
		if m := dumpAddr.FindStringSubmatch(line); m != nil {
			k, _ := strconv.ParseUint(m[1], 16, 32)
			v, _ := strconv.ParseUint(m[2], 10, 32)
			dumped[int(k)-extra] = uint32(v)
			continue
		}
		if m := dumpNid.FindStringSubmatch(line); m != nil {
			k, _ := strconv.Atoi(m[1])
			v, _ := strconv.ParseUint(m[2], 10, 32)
			if in.Nids[k] != uint32(v) {
				t.Errorf("%s: i_nid[%d] = %d, dump.f2fs says %d", e.Path, k, in.Nids[k], v)
			}
			continue
		}
		if m := dumpField.FindStringSubmatch(line); m != nil {
			if g, ok := fields[m[1]]; ok {
				nf++
				if v, _ := strconv.ParseUint(m[2], 10, 64); v != g {
					t.Errorf("%s: %s = %d, dump.f2fs says %d", e.Path, m[1], g, v)
				}
			}
		}
	}
	if nf < len(fields) {
		t.Errorf("%s: only %d of %d inode fields in dump.f2fs -i output", e.Path, nf, len(fields))
	}
	if f.hasInline() {
		return
	}
	for i, a := range slots {
		if dumped[i] != a {
			t.Errorf("%s: slot %d = %d, dump.f2fs says %d", e.Path, i, a, dumped[i])
		}
	}
	if in.Checksum == "bad" {
		t.Errorf("%s: inode checksum bad", e.Path)
	}
}

// TestCheckpointBitmapLayouts covers the two other places of the NAT/SIT version bitmaps (__bitmap_ptr,
// imgio/checkpoint.go): mkfs.f2fs -i sets CP_LARGE_NAT_BITMAP_FLAG, and a 4 TiB volume needs cp_payload blocks for
// its SIT bitmap. Both images are sparse (the 4 TiB one writes about 270 MB). The 4 TiB one is only
// formatted: sload.f2fs and fsck -t need minutes on it.
func TestCheckpointBitmapLayouts(t *testing.T) {
	testutil.NeedTools(t, "mkfs.f2fs", "sload.f2fs", "fsck.f2fs", "dump.f2fs")
	tests := []struct {
		name  string
		size  int64
		mkfs  []string
		check func(t *testing.T, img *Image)
		full  bool // also -M, dump.f2fs -i/-s/-n: minutes on 4 TiB (the tools walk every NAT and SIT entry)
	}{
		{"large-nat-bitmap", 1 << 30, []string{"-i"}, func(t *testing.T, img *Image) {
			if img.Volume().CheckpointFlags&cpLargeNATBitmap == 0 {
				t.Error("CP_LARGE_NAT_BITMAP_FLAG not set")
			}
		}, true},
		{"cp-payload", 4 << 40, nil, func(t *testing.T, img *Image) {
			if img.sb.raw.CPPayload == 0 {
				t.Error("cp_payload is 0")
			}
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "src")
			os.MkdirAll(filepath.Join(src, "sub"), 0o755)
			os.WriteFile(filepath.Join(src, "sub", "data.bin"), bytes.Repeat([]byte("layout!!"), 200*512), 0o644)
			os.WriteFile(filepath.Join(src, "small.txt"), []byte("small\n"), 0o644)
			path := filepath.Join(dir, "x.img")
			os.WriteFile(path, nil, 0o644)
			if err := os.Truncate(path, tc.size); err != nil {
				t.Fatal(err)
			}
			args := append(append([]string{"-q", "-f"}, tc.mkfs...), path)
			if out, err := exec.Command("mkfs.f2fs", args...).CombinedOutput(); err != nil {
				t.Fatalf("mkfs.f2fs: %v\n%s", err, out)
			}
			want := []string{"/ 4096"}
			if tc.full {
				if out, err := exec.Command("sload.f2fs", "-f", src, path).CombinedOutput(); err != nil {
					t.Fatalf("sload.f2fs: %v\n%s", err, out)
				}
				want = []string{"/ 4096", "/small.txt 6", "/sub 4096", "/sub/data.bin 819200"}
			}
			img, err := OpenFileContext(context.Background(), path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer img.Close()
			tc.check(t, img)
			checkLayout(t, img, runTool(t, dir, "", "fsck.f2fs", "--dry-run", "-l", path))
			ents, err := img.Files()
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, e := range ents {
				paths = append(paths, fmt.Sprintf("%s %d", e.Path, e.Size))
			}
			if !slices.Equal(paths, want) {
				t.Errorf("Files: %v, want %v", paths, want)
			}
			if tc.full {
				checkTree(t, ents, runTool(t, dir, "", "fsck.f2fs", "--dry-run", "-t", path))
				checkMap(t, img, ents, runTool(t, dir, "", "fsck.f2fs", "--dry-run", "-M", path))
				for _, e := range ents {
					checkInode(t, img, e, runTool(t, dir, "n\n", "dump.f2fs", "-i", strconv.Itoa(int(e.Ino)), path))
				}
				runTool(t, dir, "", "dump.f2fs", "-s", "0~-1", path)
				checkSIT(t, img, filepath.Join(dir, "dump_sit"))
				runTool(t, dir, "", "dump.f2fs", "-n", "0~-1", path)
				checkNAT(t, img, filepath.Join(dir, "dump_nat"))
			}
			segs, err := img.Segments()
			if err != nil {
				t.Fatal(err)
			}
			var sum uint64
			for _, s := range segs {
				sum += uint64(s.ValidBlocks)
			}
			if sum != img.Volume().ValidBlockCount {
				t.Errorf("Σ SIT valid blocks %d, checkpoint valid_block_count %d", sum, img.Volume().ValidBlockCount)
			}
		})
	}
}

package imgio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"
)

// openDemo opens the demo image for one test, in place from the raw copy the test binaries share
// (testutil.DemoImage; TestExpandDemo checks it is OpenDemo's expansion byte for byte).
func openDemo(t testing.TB) *Image {
	t.Helper()
	img, err := OpenFileContext(context.Background(), testutil.DemoImage(t), nil)
	if err != nil {
		t.Fatalf("open the demo: %v", err)
	}
	t.Cleanup(func() { img.Close() })
	return img
}

type demoFile struct {
	ino     uint32
	typ     FileType
	size    int64
	iblocks uint64
	path    string
}

func readDemoFiles(t *testing.T) []demoFile {
	t.Helper()
	f, err := os.Open("demo/demo.files.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []demoFile
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) != 5 {
			t.Fatalf("bad line %q", sc.Text())
		}
		ino, _ := strconv.ParseUint(fl[0], 10, 32)
		size, _ := strconv.ParseInt(fl[2], 10, 64)
		ib, _ := strconv.ParseUint(fl[3], 10, 64)
		out = append(out, demoFile{uint32(ino), FileType(fl[1]), size, ib, fl[4]})
	}
	return out
}

func TestDemoFiles(t *testing.T) {
	img := openDemo(t)
	ents, err := img.Files()
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]Entry{}
	for _, e := range ents {
		byPath[e.Path] = e
	}
	want := readDemoFiles(t)
	if len(ents) != len(want)+1 {
		t.Errorf("Files: %d entries, want %d (+ root)", len(ents), len(want))
	}
	if ents[0].Path != "/" || ents[0].Ino != 3 {
		t.Errorf("first entry %+v, want root", ents[0])
	}
	for _, w := range want {
		e, ok := byPath[w.path]
		if !ok {
			t.Errorf("%s: missing", w.path)
			continue
		}
		if e.Ino != w.ino || e.Type != w.typ || (w.typ != TypeDir && e.Size != w.size) {
			t.Errorf("%s: got %+v, want %+v", w.path, e, w)
		}
		f, err := img.Lookup(w.path)
		if err != nil {
			t.Errorf("Lookup(%s): %v", w.path, err)
			continue
		}
		if in := f.Inode(); in.Ino != w.ino || in.Blocks != w.iblocks {
			t.Errorf("%s: ino %d i_blocks %d, want %d %d", w.path, in.Ino, in.Blocks, w.ino, w.iblocks)
		}
	}
}

func lookup(t *testing.T, img *Image, path string) *File {
	t.Helper()
	f, err := img.Lookup(path)
	if err != nil {
		t.Fatalf("Lookup(%s): %v", path, err)
	}
	return f
}

func addrRuns(ext []Extent) []Extent {
	var out []Extent
	for _, e := range ext {
		if e.State == StateAddr {
			out = append(out, e)
		}
	}
	return out
}

// TestDemoLayout checks the physical runs and node structure listed in imgio/demo/README.md.
func TestDemoLayout(t *testing.T) {
	img := openDemo(t)
	tests := []struct {
		path   string
		runs   []Extent // addr runs only
		dnodes int
		nRuns  int // when runs is nil: just the count
	}{
		{"/seed/bench64.bin", []Extent{{0, 512, StateAddr, 34304}, {512, 12800, StateAddr, 6144}, {13312, 3072, StateAddr, 19456}}, 17, 0},
		{"/cases/contiguous.bin", []Extent{{0, 1024, StateAddr, 22528}}, 2, 0},
		{"/cases/indirect.bin", []Extent{{0, 3072, StateAddr, 24768}}, 4, 0},
		{"/cases/fragmented.bin", nil, 1, 64},
		{"/cases/rewritten.bin", nil, 1, 128},
		{"/cases/sparse-9g.bin", []Extent{{2359296, 4, StateAddr, 24090}, {2359552, 1, StateAddr, 24094}}, 2, 0},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			f := lookup(t, img, tc.path)
			ext, err := f.Extents()
			if err != nil {
				t.Fatal(err)
			}
			runs := addrRuns(ext)
			if tc.runs != nil && !slices.Equal(runs, tc.runs) {
				t.Errorf("runs %v, want %v", runs, tc.runs)
			}
			if tc.runs == nil && len(runs) != tc.nRuns {
				t.Errorf("%d runs, want %d", len(runs), tc.nRuns)
			}
			// Extents tile [0, end) without gaps.
			var next uint64
			for _, e := range ext {
				if e.Index != next || e.Count == 0 {
					t.Fatalf("extent %+v does not start at %d", e, next)
				}
				next += e.Count
			}
			if size := uint64(f.Inode().Size); next < (size+4095)/4096 {
				t.Errorf("extents end at %d, file has %d blocks", next, (size+4095)/4096)
			}
			dn, err := f.Dnodes()
			if err != nil {
				t.Fatal(err)
			}
			if len(dn) != tc.dnodes {
				t.Errorf("%d dnodes, want %d", len(dn), tc.dnodes)
			}
		})
	}
}

func TestDemoHolesAndPrealloc(t *testing.T) {
	img := openDemo(t)
	ext, err := lookup(t, img, "/cases/holes.bin").Extents()
	if err != nil {
		t.Fatal(err)
	}
	want := []Extent{{0, 64, StateAddr, 23552}, {64, 64, StateNull, 0}, {128, 64, StateAddr, 23616}}
	if !slices.Equal(ext, want) {
		t.Errorf("holes.bin: %v, want %v", ext, want)
	}
	ext, err = lookup(t, img, "/cases/prealloc.bin").Extents()
	if err != nil {
		t.Fatal(err)
	}
	var written, reserved uint64
	for _, e := range ext {
		switch e.State {
		case StateAddr:
			written += e.Count
		case StateNew:
			reserved += e.Count
		}
	}
	if written != 24 || reserved != 232 {
		t.Errorf("prealloc.bin: %d written, %d NEW_ADDR; want 24, 232", written, reserved)
	}
}

func TestDemoDnodeSlots(t *testing.T) {
	img := openDemo(t)
	f := lookup(t, img, "/cases/indirect.bin")
	tests := []struct {
		index   uint64
		start   uint64
		path    string
		kind    string
		missing int
		slot0   uint32
	}{
		{0, 0, "inode", "inode", 0, 24768},
		{873, 873, "i_nid[0]", "direct", 0, 24768 + 873},
		{1891, 1891, "i_nid[1]", "direct", 0, 24768 + 1891},
		{2909, 2909, "i_nid[2]/0", "direct", 0, 24768 + 2909},
		{3927, 3927, "i_nid[2]/1", "direct", 1, 0},                               // indirect exists, direct does not
		{2909 + 1018*1018, 2909 + 1018*1018, "i_nid[3]/0", "direct", 2, 0},       // neither exists
		{2909 + 2*1018*1018, 2909 + 2*1018*1018, "i_nid[4]/0/0", "direct", 3, 0}, // three levels missing
	}
	for _, tc := range tests {
		d, err := f.Dnode(tc.index)
		if err != nil {
			t.Fatalf("Dnode(%d): %v", tc.index, err)
		}
		if d.Start != tc.start || d.Path != tc.path || d.Kind != tc.kind || d.Missing != tc.missing || d.Slots[0] != tc.slot0 {
			t.Errorf("Dnode(%d) = start %d path %s kind %s missing %d slot0 %d; want %+v", tc.index, d.Start, d.Path, d.Kind, d.Missing, d.Slots[0], tc)
		}
		want := 1018
		if tc.kind == "inode" {
			want = 873
		}
		start, slots, missing, err := f.DnodeSlots(tc.index)
		if err != nil || start != tc.start || len(slots) != want || missing != tc.missing {
			t.Errorf("DnodeSlots(%d) = %d, %d slots, %d, %v", tc.index, start, len(slots), missing, err)
		}
	}
	sp := lookup(t, img, "/cases/sparse-9g.bin")
	d, err := sp.Dnode(2359296)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Path, "i_nid[4]/") || len(d.Parents) != 2 || d.Missing != 0 || d.Slots[2359296-d.Start] != 24090 {
		t.Errorf("sparse-9g dnode %+v", d)
	}
	if _, err := sp.Dnode(1 << 40); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Dnode beyond max file: %v", err)
	}
}

func TestDemoInline(t *testing.T) {
	img := openDemo(t)
	f := lookup(t, img, "/cases/tiny.txt")
	b, err := f.ReadInline()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 12 {
		t.Errorf("tiny.txt inline: %q", b)
	}
	if want := fmt.Sprintf("%08x%08x", fnv1a32("/cases/tiny.txt"), 0)[:12]; string(b) != want {
		t.Errorf("tiny.txt inline: %q, want %q", b, want)
	}
	if ext, err := f.Extents(); err != nil || len(ext) != 0 {
		t.Errorf("inline Extents: %v, %v", ext, err)
	}
	if _, err := lookup(t, img, "/cases/holes.bin").ReadInline(); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("ReadInline on a regular file: %v", err)
	}
	if _, err := img.Lookup("/cases/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Lookup missing: %v", err)
	}
	var pe *fs.PathError
	if _, err := img.Lookup("/cases/tiny.txt/x"); !errors.As(err, &pe) {
		t.Errorf("Lookup through a file: %v", err)
	}
}

func fnv1a32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

func TestDemoVolumeAndSIT(t *testing.T) {
	img := openDemo(t)
	v := img.Volume()
	if v.MainBlkaddr != 4096 || v.MaxBlkaddr != 65536 || v.MainSegmentCount != 120 || v.CheckpointFlags != 0x1c5 || v.RootIno != 3 {
		t.Errorf("volume %+v", v)
	}
	segs, err := img.Segments()
	if err != nil {
		t.Fatal(err)
	}
	var sum uint64
	sources := map[string]int{}
	current := 0
	for _, s := range segs {
		sum += uint64(s.ValidBlocks)
		sources[s.Source]++
		if s.Current {
			current++
		}
	}
	// Σ vblocks + NEW_ADDR slots = valid_block_count (prealloc.bin holds the demo's only NEW slots).
	if sum+232 != v.ValidBlockCount {
		t.Errorf("Σ valid blocks %d + 232 NEW, checkpoint says %d", sum, v.ValidBlockCount)
	}
	if sources["journal"] == 0 {
		t.Errorf("SIT sources %v: the kernel-written demo has a SIT journal", sources)
	}
	// Its NAT lives in the second copy (dump.f2fs -n says pack 2): the version bitmap must say so.
	if !testBitMSB(img.cp.natBitmap, 0) {
		t.Error("NAT version bitmap bit 0 clear; dump.f2fs reads NAT block 0 from copy 2")
	}
	if current != 6 {
		t.Errorf("%d current segments, want 6", current)
	}
	n, m, err := img.SegmentValidMap(segs[1].Segno)
	if err != nil || n != segs[1].ValidBlocks || m != segs[1].Map {
		t.Errorf("SegmentValidMap: %d %x %v", n, m, err)
	}
	if _, err := img.Segment(v.MainSegmentCount); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Segment out of range: %v", err)
	}
}

package reliability

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/zrviz/zrviz/imgio"
)

// manySlotsChildren is the count of direct nodes under i_nid[2]: 873 + 2·1,018 + 1,000·1,018
// = 1,020,909 slots.
const manySlotsChildren = 1000

// manySlotsPath is the file the many-slots image rewrites.
const manySlotsPath = "/big.bin"

// manySlotsImage is the crafted image: its raw file (9 GiB, sparse), its zstd upload and its layout.
type manySlotsImage struct {
	raw string
	zst []byte
	ms  ManySlots
}

// manySlots builds the many-slots image in t.TempDir(): mkfs.f2fs on a 9 GiB sparse file (about
// 30 MB on disk), sload.f2fs of one 8 KiB file, BuildManySlots, WriteZstd.
func manySlots(t *testing.T, layout SlotLayout) *manySlotsImage {
	t.Helper()
	t0 := time.Now()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "big.bin"), bytes.Repeat([]byte("many-slots"), 820), 0o644); err != nil {
		t.Fatal(err)
	}
	raw := mkfsImage(t, dir, 9<<10, src)
	ms, err := BuildManySlots(raw, manySlotsPath, manySlotsChildren, layout)
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	if err := WriteZstd(raw, &z, zstd.SpeedBestCompression); err != nil {
		t.Fatal(err)
	}
	t.Logf("many-slots image (%s): %d slots, %d direct nodes, %d data segments; zstd upload %d bytes; built in %v",
		layout, ms.Slots, ms.Directs, ms.DataSegs, z.Len(), time.Since(t0).Round(time.Millisecond))
	return &manySlotsImage{raw: raw, zst: z.Bytes(), ms: ms}
}

// checkManySlots: the crafted image is what issue 13 describes and imgio accepts it: 1,020,909
// slots, each its own extent (no two addresses adjacent), every address in the main area with its
// SIT bit set, 1,002 direct nodes; its zstd upload is about 380 KB (rows) or 3.2 MB (sequential).
// TestHostileManySlots then uploads it: the server expands it back and lists it.
func checkManySlots(t *testing.T, m *manySlotsImage) {
	layout := m.ms.Layout
	if m.ms.Slots != 1020909 {
		t.Errorf("%d slots, want the issue's 1,020,909", m.ms.Slots)
	}
	img, err := imgio.OpenFileContext(context.Background(), m.raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	f, err := img.Lookup(manySlotsPath)
	if err != nil {
		t.Fatal(err)
	}
	ext, err := f.Extents()
	if err != nil {
		t.Fatal(err)
	}
	if uint64(len(ext)) != m.ms.Slots {
		t.Errorf("%d extents, want one per slot (%d)", len(ext), m.ms.Slots)
	}
	v := img.Volume()
	seen := map[uint32][64]byte{}
	addrs := map[uint32]bool{}
	for k, e := range ext {
		if want := m.ms.Addr(f.Inode().AddrsPerInode, uint64(k)); e.State != imgio.StateAddr || e.Count != 1 || e.Addr != want {
			t.Fatalf("extent %d: %+v, want one slot at %d", k, e, want)
		}
		if addrs[e.Addr] || addrs[e.Addr-1] || addrs[e.Addr+1] {
			t.Fatalf("slot %d at %d: the address or a neighbour is another slot's", k, e.Addr)
		}
		addrs[e.Addr] = true
		segno := (e.Addr - v.MainBlkaddr) / 512
		bm, ok := seen[segno]
		if !ok {
			_, bm, err = img.SegmentValidMap(segno)
			if err != nil {
				t.Fatal(err)
			}
			seen[segno] = bm
		}
		if o := (e.Addr - v.MainBlkaddr) % 512; bm[o/8]&(0x80>>(o%8)) == 0 {
			t.Fatalf("slot %d at %d: SIT bit clear", k, e.Addr)
		}
	}
	dn, err := f.Dnodes()
	if err != nil {
		t.Fatal(err)
	}
	if len(dn) != 1+m.ms.Directs {
		t.Errorf("%d dnodes, want the inode and %d direct nodes", len(dn), m.ms.Directs)
	}
	if n, most := len(m.zst), map[SlotLayout]int{LayoutRows: 512 << 10, LayoutSequential: 4 << 20}[layout]; n > most {
		t.Errorf("the zstd upload is %d bytes, want at most %d", n, most)
	}
}

package source_test

import (
	"context"
	"github.com/zrviz/zrviz/internal/testutil"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/source"
)

// TestMkfsExtraAttr runs the engine on an image made by mkfs.f2fs with
// extra_attr (fewer slots in the inode than the demo's 873) and filled by
// sload.f2fs, and checks the calls against ones derived independently from
// the reader's extents and the dnode chunk boundaries.
func TestMkfsExtraAttr(t *testing.T) {
	mkfs, sload := testutil.NeedTool(t, "mkfs.f2fs"), testutil.NeedTool(t, "sload.f2fs")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(filepath.Join(src, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 8000000)
	for i := range data {
		data[i] = byte(i*7 + i>>12)
	}
	if err := os.WriteFile(filepath.Join(src, "d", "big.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(dir, "x.img")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 128<<20); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{
		{mkfs, "-q", "-f", "-O", "extra_attr,inode_checksum", img},
		{sload, "-f", src, img},
	} {
		if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd, err, out)
		}
	}
	im, err := imgio.OpenFileContext(context.Background(), img, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	in, err := source.Input(im, "/d/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	api := in.Inode.AddrsPerInode
	if api >= 873 {
		t.Fatalf("addrs_per_inode %d: extra_attr should leave fewer than 873", api)
	}
	f, _ := im.Lookup("/d/big.bin")
	ext, err := f.Extents()
	if err != nil {
		t.Fatal(err)
	}
	slot := map[uint64]uint32{}
	for _, e := range ext {
		for k := uint64(0); k < e.Count; k++ {
			if e.State == "addr" {
				slot[e.Index+k] = e.Addr + uint32(k)
			}
		}
	}
	req := core.Request{Offset: 1000, Length: 7000000}
	lo, hi := uint64(req.Offset+4095)/4096, uint64(req.Offset+req.Length)/4096
	chunkOf := func(i uint64) uint64 {
		if i < uint64(api) {
			return 0
		}
		return 1 + (i-uint64(api))/1018
	}
	var perBlock, batched [][2]uint32
	for i := lo; i < hi; i++ {
		a, ok := slot[i]
		if !ok {
			t.Fatalf("slot %d is not a block: the test expects a fully written file", i)
		}
		perBlock = append(perBlock, [2]uint32{a, 1})
		if k := len(batched) - 1; k >= 0 && batched[k][0]+batched[k][1] == a && chunkOf(i) == chunkOf(i-1) {
			batched[k][1]++
		} else {
			batched = append(batched, [2]uint32{a, 1})
		}
	}
	if len(batched) < 2 {
		t.Fatalf("only %d runs: the range should cross the inode's chunk boundary", len(batched))
	}
	for _, mode := range core.Modes {
		r, err := core.Simulate(in, req, mode)
		if err != nil {
			t.Fatal(err)
		}
		want := perBlock
		if mode == core.Batched {
			want = batched
		}
		var got [][2]uint32
		for c := range r.Calls.All() {
			got = append(got, [2]uint32{c.Start, c.Len})
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: calls %v…, want %v…", mode, got[:min(len(got), 4)], want[:min(len(want), 4)])
		}
		if r.Errno != "" || r.SizeAfter != in.Inode.Size || r.BlocksAfter != in.Inode.Blocks {
			t.Errorf("%s: errno %q size %d blocks %d", mode, r.Errno, r.SizeAfter, r.BlocksAfter)
		}
		// Whole pages become NEW; the partial edge pages keep their blocks.
		for _, e := range r.After.Extents {
			for k := uint64(0); k < e.Count; k++ {
				i := e.Index + k
				inRange := i >= lo && i < hi
				if inRange != (e.State == "new") || (!inRange && e.Addr+uint32(k) != slot[i]) {
					t.Fatalf("%s: slot %d after = %v", mode, i, e)
				}
			}
		}
		if r.Stats.DnodeChunks != chunkOf(hi-1)-chunkOf(lo)+1 {
			t.Errorf("%s: %d chunks, want %d", mode, r.Stats.DnodeChunks, chunkOf(hi-1)-chunkOf(lo)+1)
		}
	}
}

package imgio

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"
)

// checkBlockInfo fails on answers the page could not show: fields outside the block, links to no
// block, a main-area block without its segment, or problems without words; and on an owner
// look-up (DataOwner, the segment manager's) that disagrees with the inspector's.
func checkBlockInfo(t *testing.T, img *Image, b BlockInfo) {
	t.Helper()
	bs := int(img.bs)
	for _, f := range b.Fields {
		if f.Offset < 0 || f.Size < 0 || f.Offset+f.Size > bs || (f.Size == 0 && f.Name != "role") {
			t.Fatalf("block %d: field %+v outside the %d-byte block", b.Addr, f, bs)
		}
	}
	for _, l := range b.Links {
		if l.Addr >= img.sb.maxBlk || l.Addr == 0 && l.Name != "segment0_blkaddr" {
			t.Fatalf("block %d: link %+v to no block", b.Addr, l)
		}
	}
	for _, p := range b.Problems {
		if p.Message == "" || p.Offsets == nil {
			t.Fatalf("block %d: empty problem %+v", b.Addr, p)
		}
	}
	if (b.Area == AreaMain) != (b.Segno != nil && b.Valid != nil) {
		t.Fatalf("block %d: area %s with segno %v valid %v", b.Addr, b.Area, b.Segno, b.Valid)
	}
	if b.Fields == nil || b.Links == nil || b.Problems == nil {
		t.Fatalf("block %d: nil lists (JSON null)", b.Addr)
	}
	if _, err := json.Marshal(b); err != nil {
		t.Fatalf("block %d: %v", b.Addr, err)
	}
	// The segment manager's owner look-up (DataOwner) answers as the inspector does, block for block.
	ino, index, ok, err := img.DataOwner(context.Background(), b.Addr)
	if err != nil {
		t.Fatalf("block %d: DataOwner: %v (Block answered)", b.Addr, err)
	}
	if has := b.Owner != nil && b.Owner.Index != nil; ok != has || ok && (ino != b.Owner.Ino || index != *b.Owner.Index) {
		t.Fatalf("block %d: DataOwner says inode %d block %d (%v), Block says owner %+v", b.Addr, ino, index, ok, b.Owner)
	}
}

// blockSeeds packs the fixtures' metadata with their SSA blocks and a few data blocks, and pairs each
// with addresses of every area.
func blockSeeds(f *testing.F) {
	paths := testutil.NeedFixtures(f, "testdata/*.img.gz")
	add := func(img *Image) {
		v := img.Volume()
		blocks := metadataBlocks(f, img, 60)
		for b := v.SSABlkaddr; b < v.MainBlkaddr && b < v.SSABlkaddr+64; b++ {
			blocks = append(blocks, b)
		}
		var data []uint32
		for a := v.MainBlkaddr; a < v.MaxBlkaddr && len(data) < 8; a += 509 {
			if b, err := img.Block(context.Background(), a); err == nil && (b.Kind == KindData || b.Kind == KindDentry) {
				data = append(data, a)
			}
		}
		packed := packBlocks(img.r, img.size, append(blocks, data...))
		for _, a := range append([]uint32{0, 1, 7, v.CPBlkaddr, v.CPBlkaddr + 1, v.CPBlkaddr + blocksPerSeg, v.SITBlkaddr,
			v.NATBlkaddr, v.NATBlkaddr + blocksPerSeg, v.SSABlkaddr, v.MainBlkaddr, v.MainBlkaddr + 1, v.MaxBlkaddr, 1 << 31}, data...) {
			f.Add(packed, a)
		}
	}
	for _, p := range paths {
		img, err := OpenFileContext(context.Background(), testutil.RawImage(f, p), nil)
		if err != nil {
			f.Fatal(err)
		}
		add(img)
		img.Close()
	}
	img, err := OpenFileContext(context.Background(), testutil.DemoImage(f), nil)
	if err != nil {
		f.Fatal(err)
	}
	defer img.Close()
	add(img)
}

// FuzzBlock inspects blocks of fuzzed images: never a panic, never an error (the image's faults are
// problems), always an answer the page can show.
func FuzzBlock(f *testing.F) {
	blockSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, addr uint32) {
		r := newFuzzReader(data)
		img, err := NewImage(r, r.size)
		if err != nil {
			return
		}
		for _, a := range []uint32{addr, addr + 1, addr ^ 0x200} {
			b, err := img.Block(context.Background(), a)
			if err != nil {
				t.Fatalf("Block(%d): %v", a, err)
			}
			checkBlockInfo(t, img, b)
		}
	})
}

package imgio

import (
	"context"
	"encoding/binary"
	"io"
	"slices"
	"testing"
)

// overlay is an image with some blocks replaced: corruption tests change bytes of the demo without
// copying 256 MiB.
type overlay struct {
	base   io.ReaderAt
	size   int64
	blocks map[int64][]byte
}

func (o *overlay) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		if pos >= o.size {
			return n, io.EOF
		}
		bn, bo := pos/fuzzBS, pos%fuzzBS
		c := min(len(p)-n, int(fuzzBS-bo))
		if b, ok := o.blocks[bn]; ok {
			copy(p[n:n+c], b[bo:])
		} else if _, err := o.base.ReadAt(p[n:n+c], pos); err != nil {
			return n, err
		}
		n += c
	}
	return n, nil
}

// at returns the bytes at image offset off, in a block copy the overlay now serves.
func (o *overlay) at(off int64, n int) []byte {
	bn := off / fuzzBS
	b, ok := o.blocks[bn]
	if !ok {
		b = make([]byte, fuzzBS)
		o.base.ReadAt(b, bn*fuzzBS)
		o.blocks[bn] = b
	}
	return b[off%fuzzBS : off%fuzzBS+int64(n)]
}

func (o *overlay) put32(off int64, v uint32) { binary.LittleEndian.PutUint32(o.at(off, 4), v) }

// setSITBit sets or clears the SIT bit of main-area block addr and keeps vblocks consistent, where
// the live entry is (SIT block or journal). It returns the image offset of the bitmap byte.
func setSITBit(t *testing.T, img *Image, o *overlay, addr uint32, set bool, typ int) int64 {
	t.Helper()
	rel := addr - img.sb.raw.MainBlkaddr
	segno, off := rel/blocksPerSeg, rel%blocksPerSeg
	loc, err := img.sitLoc(segno)
	if err != nil {
		t.Fatal(err)
	}
	e := img.blockOff(loc.blk) + int64(loc.off)
	vb := binary.LittleEndian.Uint16(o.at(e, 2))
	bit := o.at(e+2+int64(off/8), 1)
	mask := byte(0x80 >> (off % 8))
	was := bit[0]&mask != 0
	switch {
	case set && !was:
		bit[0] |= mask
		vb++
	case !set && was:
		bit[0] &^= mask
		vb--
	}
	if typ >= 0 {
		vb = vb&0x3FF | uint16(typ)<<10
	}
	binary.LittleEndian.PutUint16(o.at(e, 2), vb)
	return e + 2 + int64(off/8)
}

func hasProblemAt(b BlockInfo, offs ...int64) bool {
	for _, p := range b.Problems {
		ok := true
		for _, o := range offs {
			if !slices.Contains(p.Offsets, o) {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// TestBlockProblems corrupts copies of the demo by hand and checks that the inspector reports each
// disagreement with the offsets of the fields involved (never by matching the words), keeps what it
// can confirm and withholds the owner it cannot.
func TestBlockProblems(t *testing.T) {
	base := openDemo(t)
	ctx := context.Background()
	look := func(img *Image, path string) *File {
		f, err := img.Lookup(path)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	contig := look(base, "/cases/contiguous.bin") // inode 28, blocks 22528…, all slots in the inode for index < 873
	bench := look(base, "/seed/bench64.bin")      // inode 10, i_nid[0] and more
	const data0 = 22528
	slot0 := base.blockOff(contig.Inode().Blkaddr) + inodeAddrOff
	inoOff := base.blockOff(contig.Inode().Blkaddr)
	sum0, err := base.summaryEntry((data0-base.sb.raw.MainBlkaddr)/blocksPerSeg, 0)
	if err != nil || sum0.Source != "ssa" || sum0.Nid != 28 {
		t.Fatalf("fixture changed: block %d summary %+v %v", data0, sum0, err)
	}
	sumOff := base.blockOff(sum0.Blkaddr) + int64(sum0.Offset)
	natOf := func(img *Image, nid uint32) int64 {
		loc, err := img.natLoc(nid)
		if err != nil {
			t.Fatal(err)
		}
		return img.blockOff(loc.blk) + int64(loc.off)
	}
	dn, err := bench.Dnode(uint64(bench.Inode().AddrsPerInode)) // i_nid[0]
	if err != nil || dn.Nid == 0 {
		t.Fatalf("bench64 i_nid[0]: %+v %v", dn, err)
	}

	tests := []struct {
		name    string
		corrupt func(o *overlay) (addr uint32, offs []int64)
		check   func(t *testing.T, b BlockInfo)
	}{
		{"summary names another owner", func(o *overlay) (uint32, []int64) {
			o.put32(sumOff, bench.Inode().Ino)
			return data0, []int64{sumOff, base.blockOff(bench.Inode().Blkaddr) + inodeAddrOff}
		}, noOwner},
		{"owner slot points elsewhere", func(o *overlay) (uint32, []int64) {
			o.put32(slot0, data0+100)
			return data0, []int64{slot0, sumOff}
		}, noOwner},
		{"NAT points elsewhere", func(o *overlay) (uint32, []int64) {
			n := natOf(base, 28)
			o.put32(n+5, contig.Inode().Blkaddr+1)
			return contig.Inode().Blkaddr, []int64{n}
		}, func(t *testing.T, b BlockInfo) {
			noOwner(t, b)
			if b.Kind != KindInode {
				t.Errorf("kind %s, want inode (from the footer)", b.Kind)
			}
		}},
		{"valid SIT bit with no owner", func(o *overlay) (uint32, []int64) {
			addr := freeUnownedBlock(t, base)
			bit := setSITBit(t, base, o, addr, true, 1)
			s, err := base.summaryEntry((addr-base.sb.raw.MainBlkaddr)/blocksPerSeg, (addr-base.sb.raw.MainBlkaddr)%blocksPerSeg)
			if err != nil {
				t.Fatal(err)
			}
			return addr, []int64{bit, base.blockOff(s.Blkaddr) + int64(s.Offset)}
		}, noOwner},
		{"summary and node footer disagree", func(o *overlay) (uint32, []int64) {
			a := contig.Inode().Blkaddr
			rel := a - base.sb.raw.MainBlkaddr
			s, err := base.summaryEntry(rel/blocksPerSeg, rel%blocksPerSeg)
			if err != nil {
				t.Fatal(err)
			}
			off := base.blockOff(s.Blkaddr) + int64(s.Offset)
			o.put32(off, 29)
			return a, []int64{off, base.blockOff(a) + fuzzBS - footerSize}
		}, func(t *testing.T, b BlockInfo) {
			// The NAT still confirms the node: the owner stays, the summary is what is wrong.
			if b.Owner == nil || *b.Owner.Nid != 28 {
				t.Errorf("owner %s, want nid 28 (the NAT agrees with the footer)", ownerString(b.Owner))
			}
		}},
		{"path cannot be confirmed", func(o *overlay) (uint32, []int64) {
			o.put32(inoOff+0x54, bench.Inode().Pino) // i_pino → /seed, which has no contiguous.bin
			return data0, []int64{inoOff + 0x54}
		}, func(t *testing.T, b BlockInfo) {
			if b.Owner == nil || b.Owner.Path != "" || b.Owner.Ino != 28 || *b.Owner.Index != 0 {
				t.Errorf("owner %s, want inode 28 index 0 with no path", ownerString(b.Owner))
			}
		}},
		{"stale slot: SIT bit clear", func(o *overlay) (uint32, []int64) {
			bit := setSITBit(t, base, o, data0, false, -1)
			return data0, []int64{slot0, bit}
		}, func(t *testing.T, b BlockInfo) {
			noOwner(t, b)
			if b.Kind != KindFree {
				t.Errorf("kind %s, want free", b.Kind)
			}
		}},
		{"stale node: SIT bit clear", func(o *overlay) (uint32, []int64) {
			bit := setSITBit(t, base, o, contig.Inode().Blkaddr, false, -1)
			return contig.Inode().Blkaddr, []int64{natOf(base, 28), bit}
		}, func(t *testing.T, b BlockInfo) {
			if b.Kind != KindFree {
				t.Errorf("kind %s, want free", b.Kind)
			}
		}},
		{"unreachable direct node", func(o *overlay) (uint32, []int64) {
			off := base.blockOff(bench.Inode().Blkaddr) + inodeNidOff
			o.put32(off, 0)
			return dn.Blkaddr, []int64{off}
		}, func(t *testing.T, b BlockInfo) {
			if b.Kind != KindDirect {
				t.Errorf("kind %s, want direct", b.Kind)
			}
		}},
		{"footer nid not a node id", func(o *overlay) (uint32, []int64) {
			off := base.blockOff(dn.Blkaddr) + fuzzBS - footerSize
			o.put32(off, 0xFFFFFFF0)
			return dn.Blkaddr, []int64{off}
		}, noOwner},
		{"summary slot beyond the node", func(o *overlay) (uint32, []int64) {
			binary.LittleEndian.PutUint16(o.at(sumOff+5, 2), 2000) // ofs_in_node; the inode has 873 slots
			return data0, []int64{sumOff}
		}, noOwner},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := &overlay{base: base.r, size: base.size, blocks: map[int64][]byte{}}
			addr, offs := tc.corrupt(o)
			img, err := NewImage(o, o.size)
			if err != nil {
				t.Fatal(err)
			}
			b, err := img.Block(ctx, addr)
			if err != nil {
				t.Fatalf("Block(%d): %v", addr, err)
			}
			if !hasProblemAt(b, offs...) {
				t.Errorf("Block(%d): no problem at offsets %v; problems: %+v", addr, offs, b.Problems)
			}
			t.Logf("block %d: kind %s, problems %+v", addr, b.Kind, b.Problems)
			checkBlockInfo(t, img, b)
			tc.check(t, b)
			// The untouched image has none of it.
			clean, err := base.Block(ctx, addr)
			if err != nil || len(clean.Problems) != 0 {
				t.Errorf("clean Block(%d): %v %+v", addr, err, clean.Problems)
			}
		})
	}
}

func noOwner(t *testing.T, b BlockInfo) {
	t.Helper()
	if b.Owner != nil {
		t.Errorf("owner %s reported though it could not be confirmed", ownerString(b.Owner))
	}
}

// freeUnownedBlock finds a free block of a non-current segment whose summary entry is empty.
func freeUnownedBlock(t *testing.T, img *Image) uint32 {
	t.Helper()
	ctx := context.Background()
	for a := img.sb.raw.MainBlkaddr; a < img.sb.maxBlk; a += 97 {
		b, err := img.Block(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if b.Kind == KindFree && b.SSA != nil && b.SSA.Source == "ssa" && b.SSA.Nid == 0 {
			return a
		}
	}
	t.Fatal("no free block with an empty summary entry")
	return 0
}

// TestBlockDentryHash corrupts the stored hash of an entry in the demo's one dentry block: the
// kernel would no longer find the name, so the path of its inode is reported as found only by a scan
// and the dentry block's field check names the entry.
func TestBlockDentryHash(t *testing.T) {
	base := openDemo(t)
	ctx := context.Background()
	ents, err := base.Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Type != TypeDir {
			continue
		}
		f, err := base.File(e.Ino)
		if err != nil {
			t.Fatal(err)
		}
		ext, err := f.Extents()
		if err != nil || len(ext) == 0 || ext[0].State != StateAddr {
			continue
		}
		blkAddr := ext[0].Addr
		blk, err := base.readBlock(blkAddr, "dentry")
		if err != nil {
			t.Fatal(err)
		}
		var child dentryRef
		scanDentries(blk, dentryBlockArea, nil, func(d dentryRef) bool {
			if string(d.name) != "." && string(d.name) != ".." {
				child = d
				return false
			}
			return true
		})
		if child.ino == 0 {
			continue
		}
		o := &overlay{base: base.r, size: base.size, blocks: map[int64][]byte{}}
		hashOff := base.blockOff(blkAddr) + int64(child.entOff)
		o.put32(hashOff, child.hash^0x5a5a5a5a)
		img, err := NewImage(o, o.size)
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Block(ctx, blkAddr)
		if err != nil {
			t.Fatal(err)
		}
		if d.Kind != KindDentry || !hasProblemAt(d, hashOff) {
			t.Errorf("dentry block %d: kind %s, problems %+v; want the bad hash at %#x", blkAddr, d.Kind, d.Problems, hashOff)
		}
		c, err := img.File(child.ino)
		if err != nil {
			t.Fatal(err)
		}
		n, err := img.Block(ctx, c.Inode().Blkaddr)
		if err != nil {
			t.Fatal(err)
		}
		if !hasProblemAt(n, hashOff) || n.Owner == nil || n.Owner.Path == "" {
			t.Errorf("inode %d (%q): owner %s problems %+v; want the path found by a scan and the entry named", child.ino, child.name, ownerString(n.Owner), n.Problems)
		}
		return
	}
	t.Fatal("the demo has no directory with a dentry block")
}

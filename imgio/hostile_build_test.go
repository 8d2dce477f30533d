package imgio

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

// Hostile images for listings and path resolution, crafted in code from the fixtures: the demo (a
// kernel-written image) and testdata/basic.img.gz. Each starts from the intact image held as a
// sparseImage (corrupt_test.go), patches a few inodes and dentry blocks, and reopens it. Neither
// image has inode checksums or extra attributes, so no CRC needs fixing; the node blocks, dentry
// blocks and inodes changed here carry none.

// tdirent is one entry to write into a crafted directory.
type tdirent struct {
	name  string
	ino   uint32
	ftype uint8 // F2FS_FT_*: 1 file, 2 dir
}

// writeDentries lays out ents in an area of nr slots (bitmap, dentries, names), as
// f2fs_update_dentry does; the hash is left 0 (this package never reads it).
func writeDentries(area []byte, nr, bitmapOff, dentryOff, nameOff int, ents []tdirent) {
	clear(area)
	slot := 0
	for _, e := range ents {
		slots := max(1, (len(e.name)+dentrySlotLen-1)/dentrySlotLen)
		if slot+slots > nr {
			panic(fmt.Sprintf("writeDentries: %d entries do not fit in %d slots", len(ents), nr))
		}
		for k := slot; k < slot+slots; k++ {
			area[bitmapOff+k/8] |= 1 << (k % 8)
		}
		de := area[dentryOff+slot*dentrySize:]
		binary.LittleEndian.PutUint32(de[4:], e.ino)
		binary.LittleEndian.PutUint16(de[8:], uint16(len(e.name)))
		de[10] = e.ftype
		copy(area[nameOff+slot*dentrySlotLen:], e.name)
		slot += slots
	}
}

// dentryBlock writes ents as the struct f2fs_dentry_block at block addr.
func (s *sparseImage) dentryBlock(addr uint32, ents []tdirent) {
	writeDentries(s.bytes(int64(addr)*fuzzBS, fuzzBS), nrDentryInBlock, 0, dentryBitmapLen+dentryBlockRsvd,
		dentryBitmapLen+dentryBlockRsvd+nrDentryInBlock*dentrySize, ents)
}

// inlineDir turns the inode in (of the intact image) into a directory whose inline dentry area holds
// ents: S_IFDIR, INLINE_DENTRY instead of inline data, the area laid out as make_dentry_ptr_inline
// does. The image must have neither extra attributes nor flexible inline xattrs (basic and the demo
// have none), so the area keeps the default inline xattr size.
func (s *sparseImage) inlineDir(tb testing.TB, in Inode, ents []tdirent) {
	tb.Helper()
	if in.ExtraISize != 0 {
		tb.Fatalf("inlineDir: inode %d has extra attributes", in.Ino)
	}
	off := int64(in.Blkaddr) * fuzzBS
	blk := s.bytes(off, fuzzBS)
	binary.LittleEndian.PutUint16(blk[0x00:], 0x41ED) // drwxr-xr-x
	blk[0x03] = in.Inline&inlineXattr | inlineDentry
	size := 4 * (defAddrsPerInode - inlineXattrDef - 1) // MAX_INLINE_DATA with the default xattr area
	binary.LittleEndian.PutUint64(blk[0x10:], uint64(size))
	nr := size * 8 / ((dentrySize+dentrySlotLen)*8 + 1)
	bm := (nr + 7) / 8
	rsvd := size - (dentrySize+dentrySlotLen)*nr - bm
	o := inlineOff(in)
	writeDentries(blk[o:o+size], nr, 0, bm+rsvd, bm+rsvd+nr*dentrySize, ents)
}

// mustLookup returns the intact image's inode at path.
func mustLookup(tb testing.TB, img *Image, path string) Inode {
	tb.Helper()
	f, err := img.Lookup(path)
	if err != nil {
		tb.Fatal(err)
	}
	return f.Inode()
}

// countingReaderAt counts the reads an Image makes and the reads of each block, and, given a probe
// context, the largest number of reads between two checks of that context.
type countingReaderAt struct {
	r io.ReaderAt

	mu       sync.Mutex
	reads    int
	perBlock map[int64]int
	sinceCtx int // reads since the probe context was last asked
	maxGap   int
}

func newCountingReaderAt(r io.ReaderAt) *countingReaderAt {
	return &countingReaderAt{r: r, perBlock: map[int64]int{}}
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.mu.Lock()
	c.reads++
	c.perBlock[off/fuzzBS]++
	c.sinceCtx++
	c.maxGap = max(c.maxGap, c.sinceCtx)
	c.mu.Unlock()
	return c.r.ReadAt(p, off)
}

func (c *countingReaderAt) reset() {
	c.mu.Lock()
	c.reads, c.perBlock, c.sinceCtx, c.maxGap = 0, map[int64]int{}, 0, 0
	c.mu.Unlock()
}

// probeCtx is a context whose Err says how often it is asked (it resets the reader's gap count) and
// that reports Canceled from the cancelAt-th call on (never when cancelAt is 0).
type probeCtx struct {
	context.Context
	c        *countingReaderAt
	calls    int
	cancelAt int
}

func (p *probeCtx) Err() error {
	p.calls++
	p.c.mu.Lock()
	p.c.sinceCtx = 0
	p.c.mu.Unlock()
	if p.cancelAt > 0 && p.calls >= p.cancelAt {
		return context.Canceled
	}
	return nil
}

// hostileImage is a crafted image opened through a counting reader.
type hostileImage struct {
	img *Image
	cr  *countingReaderAt
}

func openHostile(tb testing.TB, s *sparseImage) hostileImage {
	tb.Helper()
	cr := newCountingReaderAt(s.r)
	img, err := NewImage(cr, s.r.size)
	if err != nil {
		tb.Fatalf("the crafted image does not open: %v", err)
	}
	cr.reset()
	return hostileImage{img, cr}
}

// fanOutImage is the fan-out image, made from the demo: /seed/bench64.bin (64 MiB, with
// direct nodes under i_nid[0], i_nid[1] and the indirect i_nid[2]) becomes a directory of 3,000 blocks
// whose 3,000 slots all point at one dentry block of 214 entries (f000..f213, hard links to
// /cases/contiguous.bin). Before the listing read each dentry block once, it listed 642,000 entries.
func fanOutImage(tb testing.TB) (s *sparseImage, dentry uint32, dirIno uint32) {
	tb.Helper()
	good := openDemo(tb)
	s = sparseOf(tb, good)
	f, err := good.Lookup("/seed/bench64.bin")
	if err != nil {
		tb.Fatal(err)
	}
	in := f.Inode()
	ext, err := f.Extents()
	if err != nil {
		tb.Fatal(err)
	}
	dentry = ext[0].Addr
	const slots = 3000
	dn, err := f.Dnodes()
	if err != nil {
		tb.Fatal(err)
	}
	set := 0
	for _, d := range dn {
		base := int64(d.Blkaddr) * fuzzBS
		if d.Kind == "inode" {
			base += inodeAddrOff + int64(in.ExtraISize)
		}
		for i := 0; i < d.Len && set < slots; i++ {
			s.put32(base+4*int64(i), dentry)
			set++
		}
	}
	if set != slots {
		tb.Fatalf("only %d slots in bench64.bin's dnodes", set)
	}
	blk := s.bytes(int64(in.Blkaddr)*fuzzBS, fuzzBS)
	binary.LittleEndian.PutUint16(blk[0x00:], 0x41ED)
	binary.LittleEndian.PutUint64(blk[0x10:], slots*fuzzBS)
	target := mustLookup(tb, good, "/cases/contiguous.bin").Ino
	var ents []tdirent
	for i := range nrDentryInBlock {
		ents = append(ents, tdirent{fmt.Sprintf("f%03d", i), target, 1})
	}
	s.dentryBlock(dentry, ents)
	return s, dentry, in.Ino
}

// chainImage turns /many of basic (two dentry blocks, 150 files with inline data) into a chain of
// directories: /many holds one entry, a name of nameLen bytes, for the inode of /many/file-001.txt,
// which becomes a directory holding the same name for file-002's inode, and so on for all 150.
// It returns the chain's inodes, /many's first.
func chainImage(tb testing.TB, nameLen int) (*sparseImage, []uint32) {
	tb.Helper()
	base, good := loadSparse(tb, "testdata/basic.img.gz")
	s := base.clone()
	many := mustLookup(tb, good, "/many")
	chain := []Inode{many}
	for i := 1; i <= 150; i++ {
		chain = append(chain, mustLookup(tb, good, fmt.Sprintf("/many/file-%03d.txt", i)))
	}
	name := strings.Repeat("d", nameLen)
	var inos []uint32
	for i, in := range chain {
		var ents []tdirent
		if i+1 < len(chain) {
			ents = []tdirent{{name, chain[i+1].Ino, 2}}
		}
		s.inlineDir(tb, in, ents)
		inos = append(inos, in.Ino)
	}
	return s, inos
}

// emptydirImage rewrites /emptydir of basic into an inline directory holding ents; the callback
// gets the intact image to find inode numbers.
func emptydirImage(tb testing.TB, ents func(good *Image) []tdirent) *sparseImage {
	tb.Helper()
	base, good := loadSparse(tb, "testdata/basic.img.gz")
	s := base.clone()
	s.inlineDir(tb, mustLookup(tb, good, "/emptydir"), ents(good))
	return s
}

package imgio

import (
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"maps"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"
)

// sparseImage is a mutable in-memory image holding only the blocks a reader needs (see
// metadataBlocks); corruption tests change bytes in a copy and reopen it.
type sparseImage struct{ r *fuzzReader }

func loadSparse(t testing.TB, gz string) (*sparseImage, *Image) {
	t.Helper()
	img, err := OpenFileContext(context.Background(), testutil.RawImage(t, gz), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })
	return sparseOf(t, img), img
}

func sparseOf(t testing.TB, img *Image) *sparseImage {
	t.Helper()
	ents, err := img.Files()
	if err != nil {
		t.Fatal(err)
	}
	return &sparseImage{newFuzzReader(packBlocks(img.r, img.size, metadataBlocks(t, img, len(ents))))}
}

func (s *sparseImage) clone() *sparseImage {
	c := &fuzzReader{size: s.r.size, blocks: maps.Clone(s.r.blocks)}
	for k, v := range c.blocks {
		c.blocks[k] = append([]byte(nil), v...)
	}
	return &sparseImage{c}
}

func (s *sparseImage) bytes(off int64, n int) []byte {
	b := s.r.blocks[off/fuzzBS]
	if b == nil {
		b = make([]byte, fuzzBS)
		s.r.blocks[off/fuzzBS] = b
	}
	o := off % fuzzBS
	return b[o : o+int64(n)]
}

func (s *sparseImage) put32(off int64, v uint32) { binary.LittleEndian.PutUint32(s.bytes(off, 4), v) }
func (s *sparseImage) put16(off int64, v uint16) { binary.LittleEndian.PutUint16(s.bytes(off, 2), v) }
func (s *sparseImage) get32(off int64) uint32    { return binary.LittleEndian.Uint32(s.bytes(off, 4)) }

// fixCPCRC recomputes the CRC of the checkpoint block at byte off after a field was changed.
func (s *sparseImage) fixCPCRC(off int64) {
	blk := s.bytes(off, fuzzBS)
	co := binary.LittleEndian.Uint32(blk[0xA4:])
	crc := f2fsCRC(f2fsMagic, blk[:co])
	if co < cpChecksumOff {
		crc = f2fsCRC(crc, blk[co+4:])
	}
	binary.LittleEndian.PutUint32(blk[co:], crc)
}

func (s *sparseImage) open() (*Image, error) { return NewImage(s.r, s.r.size) }

type errKind int

const (
	wantOK errKind = iota
	wantNotF2FS
	wantFormat
	wantUnsupported
)

func checkKind(t *testing.T, err error, want errKind, wantOff int64) {
	t.Helper()
	var fe *FormatError
	var ue *UnsupportedError
	switch want {
	case wantOK:
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	case wantNotF2FS:
		if !errors.Is(err, ErrNotF2FS) {
			t.Fatalf("got %v, want ErrNotF2FS", err)
		}
	case wantFormat:
		if !errors.As(err, &fe) {
			t.Fatalf("got %v, want *FormatError", err)
		}
		if wantOff >= 0 && fe.Off != wantOff {
			t.Errorf("FormatError at 0x%x, want 0x%x (%v)", fe.Off, wantOff, err)
		}
	case wantUnsupported:
		if !errors.As(err, &ue) {
			t.Fatalf("got %v, want *UnsupportedError", err)
		}
	}
}

func TestCorruptOpen(t *testing.T) {
	base, good := loadSparse(t, "testdata/basic.img.gz")
	v := good.Volume()
	cp := int64(good.cp.start) * fuzzBS // live pack
	other := int64(v.CPBlkaddr) * fuzzBS
	if good.cp.pack == 1 {
		other += blocksPerSeg * fuzzBS
	}
	bothSB := func(s *sparseImage, field int64, val uint32) {
		s.put32(1024+field, val)
		s.put32(4096+1024+field, val)
	}
	tests := []struct {
		name   string
		mutate func(s *sparseImage)
		want   errKind
		off    int64
	}{
		{"intact", func(s *sparseImage) {}, wantOK, -1},
		{"no magic", func(s *sparseImage) { bothSB(s, 0, 0x12345678) }, wantNotF2FS, -1},
		{"tiny image", func(s *sparseImage) { s.r.size = 2000 }, wantNotF2FS, -1},
		{"first superblock bad, backup good", func(s *sparseImage) { s.put32(1024+0x14, 8) }, wantOK, -1},
		{"both superblocks bad", func(s *sparseImage) { bothSB(s, 0x14, 8) }, wantFormat, 1024 + 0x14},
		{"block size 16 KiB", func(s *sparseImage) { bothSB(s, 0x10, 14); bothSB(s, 0x0C, 5) }, wantUnsupported, -1},
		{"areas overlap", func(s *sparseImage) { bothSB(s, 0x54, v.NATBlkaddr+1) }, wantFormat, 1024 + 0x54},
		{"truncated before the end", func(s *sparseImage) { s.r.size -= fuzzBS }, wantFormat, 1024 + 0x24},
		{"truncated in the checkpoint", func(s *sparseImage) { s.r.size = int64(v.CPBlkaddr+3) * fuzzBS }, wantFormat, 1024 + 0x24},
		{"absurd segment count", func(s *sparseImage) { bothSB(s, 0x30, 1<<30) }, wantFormat, 1024 + 0x30},
		{"live checkpoint crc", func(s *sparseImage) { s.put32(cp+8, 1) }, wantOK, -1}, // falls back to the other pack
		{"both checkpoints bad", func(s *sparseImage) { s.put32(cp+8, 1); s.put32(other+8, 1) }, wantFormat, -1},
		{"checksum_offset absurd", func(s *sparseImage) {
			s.put32(cp+0xA4, 1<<20)
			s.put32(other+0xA4, 1<<20)
		}, wantFormat, int64(v.CPBlkaddr)*fuzzBS + 0xA4}, // pack 1 is reported
		{"cp_pack_total_block_count absurd", func(s *sparseImage) {
			s.put32(cp+0x88, 100000)
			s.fixCPCRC(cp)
			s.put32(other+8, 1)
		}, wantFormat, cp + 0x88},
		{"current segment out of range", func(s *sparseImage) {
			s.put32(cp+0x24, v.MainSegmentCount)
			s.fixCPCRC(cp)
			last := cp + int64(good.cp.raw.CPPackTotalBlockCount-1)*fuzzBS
			s.put32(last+0x24, v.MainSegmentCount)
			s.fixCPCRC(last)
			s.put32(other+8, 1)
		}, wantFormat, cp + 0x24},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := base.clone()
			tc.mutate(s)
			img, err := s.open()
			checkKind(t, err, tc.want, tc.off)
			if tc.name == "live checkpoint crc" && img.cp.pack == good.cp.pack {
				t.Errorf("still using pack %d after its CRC broke", img.cp.pack)
			}
		})
	}
}

// TestCorruptTrees corrupts nodes, dentries and tables that are read lazily.
func TestCorruptTrees(t *testing.T) {
	base, good := loadSparse(t, "testdata/basic.img.gz")
	v := good.Volume()
	root, _ := good.File(v.RootIno)
	rootOff := int64(root.Inode().Blkaddr) * fuzzBS
	big, _ := good.Lookup("/data/big.bin")
	bigOff := int64(big.Inode().Blkaddr) * fuzzBS
	hello, _ := good.Lookup("/hello.txt")
	helloOff := int64(hello.Inode().Blkaddr) * fuzzBS
	adir, _ := good.Lookup("/a")
	aExt, _ := adir.Extents()
	aDentry := int64(aExt[0].Addr) * fuzzBS

	tests := []struct {
		name   string
		mutate func(s *sparseImage)
		op     func(img *Image) error
		off    int64
	}{
		{"root footer nid", func(s *sparseImage) { s.put32(rootOff+4072, 99) }, filesOp, rootOff + 4072},
		{"inode points at itself as indirect node", func(s *sparseImage) {
			s.put32(bigOff+inodeNidOff+8, big.Inode().Ino)
		}, extentsOp("/data/big.bin"), bigOff + 4072},
		{"data slot out of range", func(s *sparseImage) { s.put32(bigOff+inodeAddrOff+4, 5) }, extentsOp("/data/big.bin"), bigOff + inodeAddrOff + 4},
		{"nid beyond NAT", func(s *sparseImage) { s.put32(bigOff+inodeNidOff, 0x7FFFFFFF) }, extentsOp("/data/big.bin"), bigOff},
		{"inline size beyond inline area", func(s *sparseImage) { s.put32(helloOff+16, 1<<20) }, filesOp, helloOff},
		{"dentry name too long", func(s *sparseImage) {
			// Entry 2 (after "." and ".."): name_len 300.
			s.put16(aDentry+30+2*dentrySize+8, 300)
		}, filesOp, aDentry + 30 + 2*dentrySize},
		{"directory cycle", func(s *sparseImage) {
			// Every entry of /a now points at /a itself.
			for i := 2; i < nrDentryInBlock; i++ {
				if s.get32(aDentry+30+int64(i)*dentrySize+4) != 0 {
					s.put32(aDentry+30+int64(i)*dentrySize+4, adir.Inode().Ino)
					s.bytes(aDentry+30+int64(i)*dentrySize+10, 1)[0] = 2
				}
			}
		}, filesOp, -1},
		{"SIT count does not match bitmap", func(s *sparseImage) {
			// Segment 0's entry in the first SIT block: bump the count.
			if _, ok := good.cp.sitJournal[0]; ok {
				t.Fatal("segment 0 is in the SIT journal")
			}
			o := int64(v.SITBlkaddr) * fuzzBS
			s.put16(o, binary.LittleEndian.Uint16(s.bytes(o, 2))+1)
		}, segmentsOp, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := base.clone()
			tc.mutate(s)
			img, err := s.open()
			if tc.op == nil {
				checkKind(t, err, wantFormat, tc.off)
				return
			}
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			checkKind(t, tc.op(img), wantFormat, tc.off)
		})
	}
}

func filesOp(img *Image) error { _, err := img.Files(); return err }

func segmentsOp(img *Image) error { _, err := img.Segments(); return err }

func extentsOp(path string) func(*Image) error {
	return func(img *Image) error {
		f, err := img.Lookup(path)
		if err != nil {
			return err
		}
		_, err = f.Extents()
		return err
	}
}

// TestCorruptJournals corrupts the journals in the demo's compact summary block.
func TestCorruptJournals(t *testing.T) {
	good := openDemo(t)
	base := sparseOf(t, good)
	if good.cp.raw.CkptFlags&cpCompactSum == 0 {
		t.Fatal("demo checkpoint has no compact summaries")
	}
	natJ := int64(good.cp.start+good.cp.raw.CPPackStartSum) * fuzzBS
	sitJ := natJ + sumJournalSize
	tests := []struct {
		name   string
		mutate func(s *sparseImage)
		off    int64
	}{
		{"NAT journal too long", func(s *sparseImage) { s.put16(natJ, natJournalMax+1) }, natJ},
		{"SIT journal too long", func(s *sparseImage) { s.put16(sitJ, sitJournalMax+1) }, sitJ},
		{"SIT journal segno out of range", func(s *sparseImage) { s.put32(sitJ+2, good.Volume().MainSegmentCount+5) }, sitJ + 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := base.clone()
			tc.mutate(s)
			_, err := s.open()
			checkKind(t, err, wantFormat, tc.off)
		})
	}
	t.Run("SIT journal entry count mismatch", func(t *testing.T) {
		s := base.clone()
		seg := s.get32(sitJ + 2) // the first journal entry
		s.put16(sitJ+2+4, good.cp.sitJournal[seg].VBlocks+1)
		img, err := s.open()
		if err != nil {
			t.Fatal(err)
		}
		_, err = img.Segment(seg)
		checkKind(t, err, wantFormat, -1)
	})
}

// TestCompressedInode marks a file of the feature image compressed (sload.f2fs here cannot write
// compressed files): the slot counts follow the cluster size, COMPRESS_ADDR shows as its own state, and
// reading the data is unsupported rather than wrong.
func TestCompressedInode(t *testing.T) {
	base, good := loadSparse(t, "testdata/features.img.gz")
	f, err := good.Lookup("/data/seq.bin")
	if err != nil {
		t.Fatal(err)
	}
	off := int64(f.Inode().Blkaddr) * fuzzBS
	s := base.clone()
	s.put32(off+0x50, f.Inode().Flags|flagCompressed)
	s.bytes(off+0x189, 1)[0] = 6 // 64-block clusters
	slot0 := off + inodeAddrOff + int64(f.Inode().ExtraISize)
	s.put32(slot0, CompressAddr)
	img, err := s.open()
	if err != nil {
		t.Fatal(err)
	}
	c, err := img.Lookup("/data/seq.bin")
	if err != nil {
		t.Fatal(err)
	}
	in := c.Inode()
	// 923 - 9 (extra) - 50 (inline xattr) = 864 rounds down to 832; 1018 to 960.
	if in.ClusterSize != 64 || in.AddrsPerInode != 832 || in.AddrsPerBlock != 960 {
		t.Errorf("cluster %d, addrs %d/%d; want 64, 832/960", in.ClusterSize, in.AddrsPerInode, in.AddrsPerBlock)
	}
	if in.Checksum != "bad" {
		t.Errorf("checksum %q after editing the inode, want bad", in.Checksum)
	}
	ext, err := c.Extents()
	if err != nil {
		t.Fatal(err)
	}
	if len(ext) == 0 || ext[0] != (Extent{Index: 0, Count: 1, State: StateCompress}) {
		t.Errorf("extents %v, want a compress run first", ext)
	}
	_, err = fs.ReadFile(img.FS(), "data/seq.bin")
	var ue *UnsupportedError
	if !errors.As(err, &ue) {
		t.Errorf("reading a compressed cluster: %v, want *UnsupportedError", err)
	}
	// The compressed flag without the volume feature is corrupt.
	b, _ := loadSparse(t, "testdata/basic.img.gz")
	bf, _ := b.clone().open()
	plain, _ := bf.Lookup("/data/seq.bin")
	s2 := b.clone()
	s2.put32(int64(plain.Inode().Blkaddr)*fuzzBS+0x50, flagCompressed)
	img2, err := s2.open()
	if err != nil {
		t.Fatal(err)
	}
	_, err = img2.Lookup("/data/seq.bin")
	checkKind(t, err, wantFormat, int64(plain.Inode().Blkaddr)*fuzzBS)
}

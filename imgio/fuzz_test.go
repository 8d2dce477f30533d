package imgio

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"
)

// Fuzz inputs are images in a compact form, because real images are megabytes of mostly zeros:
//
//	u32 size in 4 KiB blocks, then chunks of {u32 byte offset, u16 length, bytes}.
//
// Everything not covered by a chunk reads as zero. fuzzReader decodes it into sparse blocks.
const (
	fuzzBS        = 4096
	fuzzMaxBlocks = 1 << 18 // 1 GiB of virtual image
	fuzzMaxTouch  = 4096    // distinct blocks a fuzz input may fill
)

type fuzzReader struct {
	size   int64
	blocks map[int64][]byte
}

func newFuzzReader(data []byte) *fuzzReader {
	r := &fuzzReader{blocks: map[int64][]byte{}}
	if len(data) < 4 {
		return r
	}
	r.size = int64(min(binary.LittleEndian.Uint32(data), fuzzMaxBlocks)) * fuzzBS
	data = data[4:]
	for len(data) >= 6 {
		off := int64(binary.LittleEndian.Uint32(data))
		n := int(binary.LittleEndian.Uint16(data[4:]))
		data = data[6:]
		n = min(n, len(data))
		chunk := data[:n]
		data = data[n:]
		for i := 0; i < len(chunk); {
			b := (off + int64(i)) / fuzzBS
			blk := r.blocks[b]
			if blk == nil {
				if len(r.blocks) >= fuzzMaxTouch {
					break
				}
				blk = make([]byte, fuzzBS)
				r.blocks[b] = blk
			}
			i += copy(blk[(off+int64(i))%fuzzBS:], chunk[i:])
		}
	}
	return r
}

func (r *fuzzReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= r.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && off+int64(n) < r.size {
		pos := off + int64(n)
		var c int
		if blk := r.blocks[pos/fuzzBS]; blk != nil {
			c = copy(p[n:], blk[pos%fuzzBS:])
		} else {
			c = min(len(p)-n, int(fuzzBS-pos%fuzzBS))
			clear(p[n : n+c])
		}
		n += c
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// packBlocks encodes the given blocks of an image in the fuzz form, one chunk per run of non-zero
// bytes (runs closer than 16 zero bytes are joined), so mostly empty inodes and tables stay small.
func packBlocks(r io.ReaderAt, size int64, blocks []uint32) []byte {
	out := binary.LittleEndian.AppendUint32(nil, uint32(size/fuzzBS))
	buf := make([]byte, fuzzBS)
	seen := map[uint32]bool{}
	for _, b := range blocks {
		if seen[b] {
			continue
		}
		seen[b] = true
		if _, err := r.ReadAt(buf, int64(b)*fuzzBS); err != nil {
			continue
		}
		for i := 0; i < fuzzBS; {
			if buf[i] == 0 {
				i++
				continue
			}
			end, zeros := i, 0
			for j := i; j < fuzzBS && zeros < 16; j++ {
				if buf[j] == 0 {
					zeros++
				} else {
					zeros, end = 0, j+1
				}
			}
			out = binary.LittleEndian.AppendUint32(out, uint32(int64(b)*fuzzBS+int64(i)))
			out = binary.LittleEndian.AppendUint16(out, uint16(end-i))
			out = append(out, buf[i:end]...)
			i = end
		}
	}
	return out
}

// metadataBlocks lists the blocks a reader touches: the superblocks, the checkpoint packs (not the
// nat_bits at the end of their segments), SIT and NAT, and every inode, node and dentry block of the
// first maxFiles paths. SSA and file data are left out; the reader never reads them.
func metadataBlocks(tb testing.TB, img *Image, maxFiles int) []uint32 {
	tb.Helper()
	v := img.Volume()
	out := []uint32{0, 1}
	for b := uint32(0); b < 16; b++ {
		out = append(out, v.CPBlkaddr+b, v.CPBlkaddr+blocksPerSeg+b)
	}
	for b := v.SITBlkaddr; b < v.SSABlkaddr; b++ {
		out = append(out, b)
	}
	ents, err := img.Files()
	if err != nil {
		tb.Fatal(err)
	}
	for i, e := range ents {
		if i >= maxFiles {
			break
		}
		f, err := img.File(e.Ino)
		if err != nil {
			tb.Fatal(err)
		}
		dn, err := f.Dnodes()
		if err != nil {
			tb.Fatal(err)
		}
		for _, d := range dn {
			out = append(out, d.Blkaddr)
			for _, p := range d.Parents {
				if ne, err := img.natEntry(p); err == nil {
					out = append(out, ne.BlockAddr)
				}
			}
		}
		if e.Type == TypeDir {
			ext, err := f.Extents()
			if err != nil {
				tb.Fatal(err)
			}
			for _, x := range ext {
				for k := uint64(0); x.State == StateAddr && k < x.Count; k++ {
					out = append(out, x.Addr+uint32(k))
				}
			}
		}
	}
	return out
}

// fuzzSeeds packs the committed fixtures (and the demo) for f.Add.
func fuzzSeeds(f *testing.F) {
	paths := testutil.NeedFixtures(f, "testdata/*.img.gz")
	for _, p := range paths {
		img, err := OpenFileContext(context.Background(), testutil.RawImage(f, p), nil)
		if err != nil {
			f.Fatal(err)
		}
		// The first files include the root, /a (nested dirs, long names) and /data.
		f.Add(packBlocks(img.r, img.size, metadataBlocks(f, img, 40)))
		img.Close()
	}
	img, err := OpenFileContext(context.Background(), testutil.DemoImage(f), nil)
	if err != nil {
		f.Fatal(err)
	}
	defer img.Close()
	f.Add(packBlocks(img.r, img.size, metadataBlocks(f, img, 1000)))
}

// checkErr fails unless err is one of the package's error kinds (or a documented fs error).
func checkErr(t *testing.T, err error) {
	t.Helper()
	var fe *FormatError
	var ue *UnsupportedError
	if err == nil || errors.Is(err, ErrNotF2FS) || errors.As(err, &fe) || errors.As(err, &ue) ||
		errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || errors.Is(err, ErrNameTooLong) ||
		errors.Is(err, ErrSymlinkLoop) {
		return
	}
	t.Fatalf("unclassified error: %v", err)
}

func FuzzNewImage(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newFuzzReader(data)
		img, err := NewImage(r, r.size)
		checkErr(t, err)
		if err == nil {
			_ = img.Volume()
		}
	})
}

// FuzzFiles walks directories and node trees of fuzzed images: Files, Walk, ReadDir, Lookup, Resolve,
// File, Extents, Dnodes, DnodeSlots and ReadInline. A listing's problems must be typed too.
func FuzzFiles(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newFuzzReader(data)
		img, err := NewImage(r, r.size)
		if err != nil {
			checkErr(t, err)
			return
		}
		ents, err := img.Files()
		checkErr(t, err)
		probs, err := img.Walk(context.Background(), func(Entry) error { return nil })
		checkErr(t, err)
		for _, p := range probs.List {
			checkErr(t, p)
		}
		if probs.Len() > 0 && len(probs.List) != min(probs.Len(), MaxListProblems) {
			t.Fatalf("%d problems, %d kept", probs.Len(), len(probs.List))
		}
		for i, e := range ents {
			if i > 64 {
				break
			}
			if e.Type == TypeDir {
				p, err := img.ReadDir(context.Background(), e.Path, "", 8)
				checkErr(t, err)
				if len(p.Entries) > 8 {
					t.Fatalf("ReadDir: %d entries in a page of 8", len(p.Entries))
				}
			}
			_, err = img.Resolve(e.Path)
			checkErr(t, err)
			fl, err := img.Lookup(e.Path)
			checkErr(t, err)
			if err != nil {
				continue
			}
			_, err = fl.Extents()
			checkErr(t, err)
			_, err = fl.Dnodes()
			checkErr(t, err)
			_, _, _, err = fl.DnodeSlots(uint64(fl.Inode().Size) / fuzzBS)
			checkErr(t, err)
			if fl.Inode().Inline&inlineData != 0 {
				_, err = fl.ReadInline()
				checkErr(t, err)
			}
		}
	})
}

// FuzzSegments reads the SIT of fuzzed images, journal included.
func FuzzSegments(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newFuzzReader(data)
		img, err := NewImage(r, r.size)
		if err != nil {
			checkErr(t, err)
			return
		}
		segs, err := img.Segments()
		checkErr(t, err)
		if err == nil && len(segs) != int(img.Volume().MainSegmentCount) {
			t.Fatalf("%d segments, volume has %d", len(segs), img.Volume().MainSegmentCount)
		}
	})
}

// TestFuzzSeedsOpen makes sure the packed seeds are real images, so fuzzing starts from valid input.
func TestFuzzSeedsOpen(t *testing.T) {
	img, err := OpenFileContext(context.Background(), testutil.RawImage(t, "testdata/basic.img.gz"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	want, err := img.Files()
	if err != nil {
		t.Fatal(err)
	}
	packed := packBlocks(img.r, img.size, metadataBlocks(t, img, len(want)))
	r := newFuzzReader(packed)
	p, err := NewImage(r, r.size)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Files()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("packed image lists %d files, want %d", len(got), len(want))
	}
	t.Logf("packed seed: %d bytes", len(packed))
}

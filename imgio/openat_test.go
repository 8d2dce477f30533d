package imgio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sync/atomic"
	"testing"
)

// countingAt counts the bytes read through a ReaderAt, to show what is read lazily.
type countingAt struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// openAtFile opens the file name with OpenAt over an *os.File, counting the bytes read.
func openAtFile(t *testing.T, name string, maxMem int64) (*Image, *countingAt, int64, error) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	c := &countingAt{r: f}
	img, err := OpenAt(context.Background(), c, st.Size(), filepath.Base(name), &Options{MaxMemory: maxMem})
	return img, c, st.Size(), err
}

// TestOpenAtFormats opens one real image in every format the tools make of it through OpenAt and
// through OpenFileContext, and checks the same volume and the same bytes in every block; raw and
// Android sparse images must open reading a small part of the input, not all of it.
func TestOpenAtFormats(t *testing.T) {
	dir := t.TempDir()
	raw := xMakeImage(t, dir, 64, 1)
	p := func(s string) string { return filepath.Join(dir, s) }
	xPipe(t, raw, p("img.gz"), "gzip", "-c", "-1")
	xPipe(t, raw, p("img.xz"), "xz", "-c", "-0", "-T1")
	xPipe(t, raw, p("img.zst"), "zstd", "-c", "-q", "-1")
	xRun(t, "img2simg", raw, p("img.simg"))
	xRun(t, "img2simg", raw, p("img1k.simg"), "1024")

	for _, c := range []struct {
		name   string
		path   string
		format Format
		lazy   bool
	}{
		{"raw", raw, FormatRaw, true},
		{"gzip", p("img.gz"), FormatGzip, false},
		{"xz", p("img.xz"), FormatXZ, false},
		{"zstd", p("img.zst"), FormatZstd, false},
		{"android-sparse", p("img.simg"), FormatAndroidSparse, true},
		{"android-sparse-1k", p("img1k.simg"), FormatAndroidSparse, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, err := OpenFileContext(context.Background(), c.path, &Options{TempDir: t.TempDir()})
			if err != nil {
				t.Fatalf("OpenFileContext: %v", err)
			}
			defer want.Close()
			got, counted, inSize, err := openAtFile(t, c.path, DefaultMaxMemory)
			if err != nil {
				t.Fatalf("OpenAt: %v", err)
			}
			defer got.Close()
			if got.Format() != c.format || got.Size() != want.Size() || got.Name() != filepath.Base(c.path) {
				t.Errorf("OpenAt: format %s, size %d, name %q; want %s, %d, %q",
					got.Format(), got.Size(), got.Name(), c.format, want.Size(), filepath.Base(c.path))
			}
			if c.lazy {
				// The superblocks and a checkpoint: a few blocks, not 64 MiB.
				if n := counted.n.Load(); n > 1<<20 {
					t.Errorf("opening read %d bytes of a %d-byte input; want a few blocks", n, inSize)
				}
			}
			if !reflect.DeepEqual(got.Volume(), want.Volume()) {
				t.Errorf("volume differs:\n got %+v\nwant %+v", got.Volume(), want.Volume())
			}
			blocks := uint32(want.Size() / int64(want.Volume().BlockSize))
			for a := range blocks {
				g, err1 := got.ReadBlock(a)
				w, err2 := want.ReadBlock(a)
				if err1 != nil || err2 != nil {
					t.Fatalf("block %d: OpenAt %v, OpenFileContext %v", a, err1, err2)
				}
				if !bytes.Equal(g, w) {
					t.Fatalf("block %d differs", a)
				}
			}
			gf, err1 := got.Files()
			wf, err2 := want.Files()
			if err1 != nil || err2 != nil || !reflect.DeepEqual(gf, wf) || len(wf) == 0 {
				t.Errorf("files: OpenAt %d (%v), OpenFileContext %d (%v)", len(gf), err1, len(wf), err2)
			}
		})
	}
}

// TestSparseReaderAtRandom reads hand-made sparse images (raw, zero and non-zero fill, don't-care
// and CRC32 chunks, odd block sizes, longer headers) at random offsets and lengths and compares
// every read with the same bytes of the expanded image.
func TestSparseReaderAtRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 7))
	for trial := range 40 {
		bs := uint32(4 * (1 + rng.IntN(300)))
		s := xSimg{major: 1, blkSz: bs}
		if trial%3 == 0 {
			s.fileHdrSz, s.chunkHdrSz, s.fileExtra, s.chunkEx = 40, 16, 0xaa, 0xbb
		}
		for range 1 + rng.IntN(12) {
			n := uint32(rng.IntN(5))
			switch rng.IntN(5) {
			case 0, 1:
				s.chunks = append(s.chunks, xRaw(n, xPattern(int(n*bs), rng.Uint64())))
			case 2:
				s.chunks = append(s.chunks, xFill(n, rng.Uint32()))
			case 3:
				s.chunks = append(s.chunks, xFill(n, 0))
			default:
				s.chunks = append(s.chunks, xSkip(n))
			}
			s.totalBlks += n
		}
		in := s.bytes()
		out := xMemWriter{max: 1 << 40}
		if _, n, err := expandAny(&out, bytes.NewReader(in), nil); err != nil {
			t.Fatalf("trial %d: expand: %v", trial, err)
		} else {
			out.b = append(out.b, make([]byte, n-int64(len(out.b)))...)
		}
		sp, err := newSparseReaderAt(context.Background(), bytes.NewReader(in), int64(len(in)), nil)
		if err != nil {
			t.Fatalf("trial %d: newSparseReaderAt: %v", trial, err)
		}
		if sp.size != int64(len(out.b)) {
			t.Fatalf("trial %d: size %d, expanded %d", trial, sp.size, len(out.b))
		}
		for range 200 {
			off := rng.Int64N(sp.size + 2)
			buf := make([]byte, rng.IntN(int(3*bs)+1))
			n, err := sp.ReadAt(buf, off)
			want := out.b[min(off, sp.size):min(off+int64(len(buf)), sp.size)]
			if n != len(want) || !bytes.Equal(buf[:n], want) {
				t.Fatalf("trial %d: ReadAt(%d bytes at %d) = %d bytes, want %d (equal %v)", trial, len(buf), off, n, len(want), bytes.Equal(buf[:n], want))
			}
			if n < len(buf) && err != io.EOF {
				t.Fatalf("trial %d: short ReadAt at %d returned %v, want io.EOF", trial, off, err)
			}
		}
	}
}

// TestSparseReaderAtCorrupt checks that a corrupt chunk table is a *FormatError at the offset of the
// bad field, and a truncated one wraps io.ErrUnexpectedEOF, before anything is read of the image.
func TestSparseReaderAtCorrupt(t *testing.T) {
	data := xPattern(8*64, 3)
	base := func() xSimg {
		return xSimg{major: 1, blkSz: 64, totalBlks: 16, chunks: []xChunk{xRaw(8, data), xSkip(8)}}
	}
	const c0, c1 = 28, 28 + 12 + 8*64 // offsets of the two chunk headers
	for _, c := range []struct {
		name string
		img  func() []byte
		off  int64 // want a *FormatError at this offset; -1 = want io.ErrUnexpectedEOF
	}{
		{"magic", func() []byte { b := base().bytes(); b[0] = 0; return b }, 0},
		{"file header longer than the input", func() []byte { b := base().bytes(); b[8], b[9] = 0xff, 0x7f; return b[:64] }, -1},
		{"major version", func() []byte { s := base(); s.major = 2; return s.bytes() }, 0x04},
		{"file_hdr_sz", func() []byte { b := base().bytes(); b[8] = 20; return b }, 0x08},
		{"chunk_hdr_sz", func() []byte { b := base().bytes(); b[10] = 8; return b }, 0x0A},
		{"blk_sz", func() []byte { s := base(); s.blkSz = 66; return s.bytes() }, 0x0C},
		{"total_chunks beyond the input", func() []byte { s := base(); s.totalChunks = 1 << 30; return s.bytes() }, 0x14},
		{"total_sz below the header", func() []byte { s := base(); s.chunks[1].totalSz = 4; return s.bytes() }, c1 + 8},
		{"raw total_sz", func() []byte {
			s := base()
			s.chunks[0].totalSz = 12 + 8*64 + 4
			s.chunks[0].data = append(data, 1, 2, 3, 4)
			return s.bytes()
		}, c0 + 8},
		{"chunk past the declared size", func() []byte { s := base(); s.chunks[1].sz = 9; return s.bytes() }, c1 + 4},
		{"unknown chunk type", func() []byte { s := base(); s.chunks[1].typ = 0xCAC9; return s.bytes() }, c1},
		{"fill total_sz", func() []byte {
			s := base()
			s.chunks[1] = xChunk{typ: simgChunkFill, sz: 8, totalSz: 12 + 8, data: make([]byte, 8)}
			return s.bytes()
		}, c1 + 8},
		{"don't-care with data", func() []byte { s := base(); s.chunks[1].data = []byte{1, 2, 3, 4}; return s.bytes() }, c1 + 8},
		{"chunks end early", func() []byte { s := base(); s.totalBlks = 20; return s.bytes() }, c1 + 12},
		{"raw data past the input", func() []byte { b := base().bytes(); return b[:c0+100] }, c0 + 8},
		{"chunk header cut", func() []byte { b := base().bytes(); return b[:c1+6] }, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := c.img()
			_, err := newSparseReaderAt(context.Background(), bytes.NewReader(b), int64(len(b)), nil)
			if c.off < 0 {
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("err = %v, want io.ErrUnexpectedEOF", err)
				}
				return
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a *FormatError", err)
			}
			if fe.Off != c.off {
				t.Errorf("FormatError at %d (%v), want offset %d", fe.Off, err, c.off)
			}
		})
	}
	t.Run("declared size over MaxExpanded", func(t *testing.T) {
		b := base().bytes()
		_, err := newSparseReaderAt(context.Background(), bytes.NewReader(b), int64(len(b)), &Options{MaxExpanded: 512})
		var le *LimitError
		if !errors.As(err, &le) || le.Declared != 16*64 {
			t.Fatalf("err = %v, want a *LimitError declaring %d bytes", err, 16*64)
		}
	})
}

// TestOpenAtMemoryBound opens compressed bombs — a real F2FS image holding 48 MiB of a repeated
// pattern, a few hundred KiB packed — with a 4 MiB bound on the blocks held in memory: each is
// refused with the bound named, and what was allocated meanwhile stays far below what the image's
// non-zero blocks would take.
func TestOpenAtMemoryBound(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "big"), bytes.Repeat([]byte("zrviz, a bomb of a pattern!\n"), 48<<20/28), 0o644); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(dir, "bomb.img")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 128<<20); err != nil {
		t.Fatal(err)
	}
	xRun(t, "mkfs.f2fs", "-q", "-f", img)
	xRun(t, "sload.f2fs", "-f", src, img)
	// Only the image's first 48 MiB are packed (the metadata and some 38 MiB of the pattern): the
	// bound is met long before the stream ends, and a stream that ended first would be refused as
	// truncated, not with a MemoryError. Packing all 128 MiB cost a CPU-second of gzip and xz.
	head := filepath.Join(dir, "head.img")
	xPipe(t, img, head, "head", "-c", "48M")
	const limit = 4 << 20
	for _, c := range []struct{ ext, tool string }{{".gz", "gzip"}, {".xz", "xz"}, {".zst", "zstd"}} {
		t.Run(c.tool, func(t *testing.T) {
			packed := img + c.ext
			xPipe(t, head, packed, c.tool, "-c", "-1")
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, _, _, err := openAtFile(t, packed, limit)
			runtime.ReadMemStats(&after)
			var me *MemoryError
			if !errors.As(err, &me) || me.Limit != limit || me.Off <= 0 || me.Off >= 128<<20 {
				t.Fatalf("OpenAt = %v; want a memory bound error at %d bytes", err, limit)
			}
			// The decoders' windows and buffers come on top of the bound; the 48 MiB do not.
			if a := after.TotalAlloc - before.TotalAlloc; a > 24<<20 {
				t.Errorf("allocated %d bytes before refusing; the bound is %d", a, limit)
			} else {
				t.Logf("allocated %d bytes before refusing", a)
			}
		})
	}
}

// TestOpenAtEmptyAndShort checks the inputs too short to detect or to hold a superblock.
func TestOpenAtEmptyAndShort(t *testing.T) {
	if _, err := OpenAt(context.Background(), bytes.NewReader(nil), 0, "empty", nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty: %v, want ErrEmpty", err)
	}
	b := []byte("hello")
	if _, err := OpenAt(context.Background(), bytes.NewReader(b), int64(len(b)), "short", nil); !errors.Is(err, ErrNotF2FS) {
		t.Errorf("short: %v, want ErrNotF2FS", err)
	}
	// A reader shorter than the size it claims: the header read fails.
	if _, err := OpenAt(context.Background(), bytes.NewReader(b), 100, "liar", nil); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short reader: %v, want io.ErrUnexpectedEOF", err)
	}
}

// TestSparseReaderAtExtents checks that runs of don't-care chunks and of one fill pattern make one
// extent each, so a table of many tiny chunks costs little, and that past maxSparseExtents the
// image is refused before the index grows further.
func TestSparseReaderAtExtents(t *testing.T) {
	s := xSimg{major: 1, blkSz: 4}
	for i := range 1000 {
		switch i % 4 {
		case 0, 1:
			s.chunks = append(s.chunks, xSkip(1))
		default:
			s.chunks = append(s.chunks, xFill(1, 0xdeadbeef))
		}
		s.totalBlks++
	}
	b := s.bytes()
	sp, err := newSparseReaderAt(context.Background(), bytes.NewReader(b), int64(len(b)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sp.ext) != 500 {
		t.Errorf("%d extents for 500 alternating runs", len(sp.ext))
	}

	// Alternating fills cannot merge: one past the bound is refused.
	s = xSimg{major: 1, blkSz: 4}
	for i := range maxSparseExtents + 1 {
		s.chunks = append(s.chunks, xFill(1, uint32(i%2+1)))
		s.totalBlks++
	}
	b = s.bytes()
	_, err = newSparseReaderAt(context.Background(), bytes.NewReader(b), int64(len(b)), nil)
	var ue *UnsupportedError
	if !errors.As(err, &ue) || ue.Off != int64(28+maxSparseExtents*16) {
		t.Fatalf("err = %v; want an *UnsupportedError at the chunk past the bound", err)
	}
}

// FuzzSparseReaderAt reads arbitrary input as an Android sparse image: it must never panic, and
// whatever it accepts must read as the expansion makes it.
func FuzzSparseReaderAt(f *testing.F) {
	f.Add(xSimg{major: 1, blkSz: 8, totalBlks: 6, chunks: []xChunk{xRaw(2, xPattern(16, 1)), xFill(1, 7), xSkip(2), xCRC(0), xFill(1, 0)}}.bytes())
	f.Add(xSimg{major: 1, blkSz: 4096, totalBlks: 1, chunks: []xChunk{xSkip(1)}}.bytes())
	f.Add(xSimg{major: 1, blkSz: 12, fileHdrSz: 32, chunkHdrSz: 16, totalBlks: 2, chunks: []xChunk{xFill(2, 0x01020304)}}.bytes())
	f.Fuzz(func(t *testing.T, in []byte) {
		sp, err := newSparseReaderAt(context.Background(), bytes.NewReader(in), int64(len(in)), &Options{MaxExpanded: 1 << 20})
		if err != nil {
			return
		}
		out := xMemWriter{max: 1 << 20}
		_, n, err := expandAny(&out, bytes.NewReader(in), &Options{MaxExpanded: 1 << 20})
		if err != nil {
			// The expansion verifies CRC32 chunks; read in place, they are not.
			var fe *FormatError
			if errors.As(err, &fe) && fe.Struct == "android-sparse CRC32 chunk" {
				return
			}
			t.Fatalf("accepted in place, refused by the expansion: %v", err)
		}
		want := append(out.b, make([]byte, n-int64(len(out.b)))...)
		got := make([]byte, sp.size)
		if m, err := sp.ReadAt(got, 0); m != len(got) || (err != nil && err != io.EOF) {
			t.Fatalf("ReadAt = %d, %v; want %d bytes", m, err, len(got))
		}
		if !bytes.Equal(got, want) {
			t.Fatal("read in place differs from the expansion")
		}
	})
}

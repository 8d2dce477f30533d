package imgio

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
	"github.com/zrviz/zrviz/internal/testutil"
)

// Hostile inputs for expansion, crafted in code for every container: raw, gzip, xz, zstd and
// Android sparse. Real bytes come from testdata/basic.img.gz (a 128 MiB volume: block_count 32768);
// long runs of zeros are made by repeating one small compressed member (gzip members, xz streams and
// zstd frames may be concatenated), so a 64 GiB bomb costs a few hundred KB of test memory and no
// time to build.

// basicBytes returns the first basicPrefixMax bytes of testdata/basic.img.gz expanded: superblocks,
// both checkpoint packs, SIT, NAT and SSA. Read into one buffer of that size (io.ReadAll of the whole
// 128 MiB grew its buffer seven times, 0.8 CPU-s of the package's run).
var basicBytes = sync.OnceValues(func() ([]byte, error) {
	f, err := os.Open("testdata/basic.img.gz")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	b := make([]byte, basicPrefixMax)
	_, err = io.ReadFull(zr, b)
	return b, err
})

// basicPrefixMax is the longest prefix of basic the tests take.
const basicPrefixMax = 16 << 20

func basicPrefix(tb testing.TB, n int64) []byte {
	tb.Helper()
	b, err := basicBytes()
	if err != nil {
		tb.Fatal(err)
	}
	if n > int64(len(b)) {
		tb.Fatalf("basicPrefix(%d): the tests keep %d bytes of basic; raise basicPrefixMax", n, len(b))
	}
	return b[:n]
}

// basicVolume is basic's block_count × block size.
const basicVolume = 32768 * 4096

// part is a piece of the output an input is made to expand to.
type part struct {
	data  []byte // these bytes
	zeros int64  // or this many zero bytes (a multiple of 4096)
	fill  uint32 // with zeros: this 32-bit word repeated instead (a FILL chunk in sparse images)
}

// zeroMember is how many zero bytes one repeated compressed member holds.
const zeroMember = 4 << 20

var members sync.Map // "format/fill/size" → compressed member

// compress packs b in one member of format f.
func compress(tb testing.TB, f Format, b []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	var err error
	switch f {
	case FormatGzip:
		w, err = gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	case FormatXZ:
		w, err = xz.WriterConfig{DictCap: 1 << 20}.NewWriter(&buf)
	case FormatZstd:
		w, err = zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
	default:
		tb.Fatalf("compress: %s", f)
	}
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// filled returns n bytes of the word v repeated (zeros for v == 0).
func filled(n int64, v uint32) []byte {
	b := make([]byte, n)
	if v != 0 {
		for i := 0; i+4 <= len(b); i += 4 {
			binary.LittleEndian.PutUint32(b[i:], v)
		}
	}
	return b
}

func member(tb testing.TB, f Format, n int64, v uint32) []byte {
	tb.Helper()
	key := fmt.Sprintf("%s/%x/%d", f, v, n)
	if m, ok := members.Load(key); ok {
		return m.([]byte)
	}
	m := compress(tb, f, filled(n, v))
	members.Store(key, m)
	return m
}

// repeatReader reads b n times.
type repeatReader struct {
	b   []byte
	n   int64
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := copy(p, r.b[r.off:])
	if r.off += k; r.off == len(r.b) {
		r.off = 0
		r.n--
	}
	return k, nil
}

// input builds a stream of format f that expands to parts. Raw and compressed streams are produced
// lazily (long runs repeat one member); a sparse image is built whole (it is small: runs are chunks).
// size is the input's length in bytes.
func input(tb testing.TB, f Format, parts ...part) (r io.Reader, size int64) {
	tb.Helper()
	if f == FormatAndroidSparse {
		b := sparseOf2(parts, -1)
		return bytes.NewReader(b), int64(len(b))
	}
	var rs []io.Reader
	add := func(rd io.Reader, n int64) {
		rs = append(rs, rd)
		size += n
	}
	for _, p := range parts {
		if p.data != nil {
			if f == FormatRaw {
				add(bytes.NewReader(p.data), int64(len(p.data)))
			} else {
				key := fmt.Sprintf("%s/data/%p/%d", f, unsafe.SliceData(p.data), len(p.data))
				m, ok := members.Load(key)
				if !ok {
					m = compress(tb, f, p.data)
					members.Store(key, m)
				}
				add(bytes.NewReader(m.([]byte)), int64(len(m.([]byte))))
			}
			continue
		}
		full, rest := p.zeros/zeroMember, p.zeros%zeroMember
		if f == FormatRaw {
			m := filled(zeroMember, p.fill)
			add(&repeatReader{b: m, n: full}, full*zeroMember)
			if rest > 0 {
				add(bytes.NewReader(m[:rest]), rest)
			}
			continue
		}
		m := member(tb, f, zeroMember, p.fill)
		add(&repeatReader{b: m, n: full}, full*int64(len(m)))
		if rest > 0 {
			m := member(tb, f, rest, p.fill)
			add(bytes.NewReader(m), int64(len(m)))
		}
	}
	return io.MultiReader(rs...), size
}

// sparseOf2 packs parts as an Android sparse image with 4096-byte blocks: data as raw chunks, zeros
// as don't-care chunks, fills as fill chunks. total_blks is the sum, or declared when not negative.
func sparseOf2(parts []part, declared int64) []byte {
	s := xSimg{major: 1, blkSz: 4096}
	var blocks int64
	for _, p := range parts {
		switch {
		case p.data != nil:
			d := p.data
			if r := len(d) % 4096; r != 0 {
				d = append(bytes.Clone(d), make([]byte, 4096-r)...)
			}
			s.chunks = append(s.chunks, xRaw(uint32(len(d)/4096), d))
			blocks += int64(len(d) / 4096)
		case p.fill != 0:
			s.chunks = append(s.chunks, xFill(uint32(p.zeros/4096), p.fill))
			blocks += p.zeros / 4096
		default:
			s.chunks = append(s.chunks, xSkip(uint32(p.zeros/4096)))
			blocks += p.zeros / 4096
		}
	}
	if declared >= 0 {
		blocks = declared / 4096
	}
	s.totalBlks = uint32(blocks)
	return s.bytes()
}

// countingWriterAt records what was written: bytes, the furthest offset, and calls onWrite (if set)
// before each write. It keeps nothing.
type countingWriterAt struct {
	written int64
	end     int64
	onWrite func(off int64)
}

func (w *countingWriterAt) WriteAt(p []byte, off int64) (int, error) {
	if w.onWrite != nil {
		w.onWrite(off)
	}
	w.written += int64(len(p))
	w.end = max(w.end, off+int64(len(p)))
	return len(p), nil
}

// countingReader counts the input bytes Expand pulls, and calls onRead (if set) after each read.
type inputCounter struct {
	r      io.Reader
	n      int64
	onRead func(n int64)
}

func (c *inputCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.onRead != nil {
		c.onRead(c.n)
	}
	return n, err
}

var allFormats = []Format{FormatRaw, FormatGzip, FormatXZ, FormatZstd, FormatAndroidSparse}

// TestHostileExpand: for every container, inputs whose output is not an F2FS volume, or more than
// its volume, are refused as soon as that shows, with nothing (or nothing past the volume) written;
// the same content within its volume expands.
func TestHostileExpand(t *testing.T) {
	head := basicPrefix(t, headLen)
	meta := basicPrefix(t, 16<<20) // superblocks, both checkpoint packs, SIT, NAT, SSA
	const bomb = 64 << 30
	type result struct {
		err     error
		n       int64 // returned size (the output offset reached)
		written int64 // bytes written to dst
		end     int64 // furthest byte written
		read    int64 // input consumed
		in      int64 // input size
	}
	cases := []struct {
		name  string
		parts []part
		opt   Options
		slow  bool // decodes the whole 128 MiB volume
		check func(t *testing.T, f Format, r result)
	}{
		{"zero start", []part{{zeros: bomb}}, Options{}, false, func(t *testing.T, f Format, r result) {
			if !errors.Is(r.err, ErrNotF2FS) || r.written != 0 || r.n > headLen || r.read > 1<<20 {
				t.Errorf("%v: returned %d, wrote %d, read %d of %d input bytes; want ErrNotF2FS with nothing written after at most 8 KiB of output and 1 MiB of input",
					r.err, r.n, r.written, r.read, r.in)
			}
		}},
		{"not F2FS", []part{{zeros: bomb, fill: 0x76727a7a}}, Options{}, false, func(t *testing.T, f Format, r result) {
			if !errors.Is(r.err, ErrNotF2FS) || r.written != 0 || r.n > headLen || r.read > 1<<20 {
				t.Errorf("%v: returned %d, wrote %d, read %d; want ErrNotF2FS with nothing written", r.err, r.n, r.written, r.read)
			}
		}},
		{"magic everywhere", []part{{zeros: bomb, fill: f2fsMagic}}, Options{}, false, func(t *testing.T, f Format, r result) {
			// Both copies have the magic and neither decodes: a corrupt superblock, not "not F2FS".
			wantFormatAt(t, "Expand", r.err, "superblock", -1)
			if errors.Is(r.err, ErrNotF2FS) || r.written != 0 || r.n > headLen {
				t.Errorf("%v: returned %d, wrote %d", r.err, r.n, r.written)
			}
		}},
		{"superblock then zeros", []part{{data: head}, {zeros: bomb - headLen}}, Options{}, false, func(t *testing.T, f Format, r result) {
			if f == FormatAndroidSparse {
				var ve *VolumeError // it declares 64 GiB, more than the volume: refused at the superblock
				if !errors.As(r.err, &ve) || r.written != 0 {
					t.Errorf("%v, wrote %d: want a *VolumeError before writing", r.err, r.written)
				}
				return
			}
			// Refused once the output passes the second checkpoint pack's first block (4 MiB in).
			wantFormatAt(t, "Expand", r.err, "checkpoint", -1)
			if r.written > headLen || r.n > 5<<20 {
				t.Errorf("%v: returned %d, wrote %d; want the superblocks only, refused within 5 MiB", r.err, r.n, r.written)
			}
		}},
		{"volume over MaxExpanded", []part{{data: meta}, {zeros: basicVolume - 16<<20}}, Options{MaxExpanded: 64 << 20}, false,
			func(t *testing.T, f Format, r result) {
				var le *LimitError
				// A sparse image declares the size: refused from its header, before the superblock.
				if !errors.As(r.err, &le) || !errors.Is(r.err, ErrTooLarge) || le.Limit != 64<<20 || le.Written != 0 || r.written != 0 ||
					f != FormatAndroidSparse && le.Volume != basicVolume || f == FormatAndroidSparse && le.Declared != basicVolume {
					t.Errorf("%v (%+v): wrote %d; want a *LimitError naming the volume, nothing written", r.err, le, r.written)
				}
			}},
		{"more than the volume", []part{{data: meta}, {zeros: basicVolume - 16<<20}, {zeros: 1 << 20, fill: 0x76727a7a}}, Options{}, true,
			func(t *testing.T, f Format, r result) {
				var ve *VolumeError
				if !errors.As(r.err, &ve) || ve.Volume != basicVolume || errors.Is(r.err, ErrTooLarge) {
					t.Fatalf("%v: want a *VolumeError for volume %d, not ErrTooLarge", r.err, basicVolume)
				}
				wantFormatAt(t, "VolumeError", r.err, "superblock", sbOffset+0x24)
				if r.end > basicVolume || r.n > basicVolume {
					t.Errorf("wrote up to %d (returned %d), past the volume %d", r.end, r.n, basicVolume)
				}
				if f == FormatAndroidSparse && (ve.Declared != basicVolume+1<<20 || r.written != 0) {
					t.Errorf("sparse: %+v, wrote %d; want the declared size refused before writing", ve, r.written)
				}
			}},
		{"exactly the volume", []part{{data: meta}, {zeros: basicVolume - 16<<20}}, Options{}, true, func(t *testing.T, f Format, r result) {
			if r.err != nil || r.n != basicVolume {
				t.Errorf("Expand = %d, %v; want %d", r.n, r.err, basicVolume)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.slow && testing.Short() {
				t.Skip("slow: expands a 128 MiB volume in every format")
			}
			for _, f := range allFormats {
				t.Run(string(f), func(t *testing.T) {
					r, size := input(t, f, tc.parts...)
					in := &inputCounter{r: r}
					w := &countingWriterAt{}
					opt := tc.opt
					got, n, err := ExpandContext(context.Background(), w, in, &opt)
					if got != f {
						t.Fatalf("format %s, want %s", got, f)
					}
					tc.check(t, f, result{err: err, n: n, written: w.written, end: w.end, read: in.n, in: size})
				})
			}
		})
	}
}

// TestHostileSparseDeclared: the sparse header's size against the volume the superblock declares.
func TestHostileSparseDeclared(t *testing.T) {
	meta := basicPrefix(t, 16<<20)
	// The upload: 44 bytes, one non-zero fill chunk over 64 GiB. Not F2FS: refused after
	// 8 KiB of output, nothing written.
	b := sparseOf2([]part{{zeros: 64 << 30, fill: 0xdeadbeef}}, -1)
	if len(b) != 44 {
		t.Fatalf("the 44-byte image is %d bytes", len(b))
	}
	w := &countingWriterAt{}
	_, n, err := ExpandContext(context.Background(), w, bytes.NewReader(b), nil)
	if !errors.Is(err, ErrNotF2FS) || w.written != 0 || n > headLen {
		t.Errorf("44-byte sparse image: %v, returned %d, wrote %d", err, n, w.written)
	}
	for _, c := range []struct {
		name     string
		parts    []part
		declared int64
	}{
		{"real metadata, then a 64 GiB fill", []part{{data: meta}, {zeros: 64<<30 - 16<<20, fill: 0xdeadbeef}}, -1},
		{"real metadata, declared one block over", []part{{data: meta}, {zeros: basicVolume - 16<<20}}, basicVolume + 4096},
	} {
		w := &countingWriterAt{}
		_, _, err := ExpandContext(context.Background(), w, bytes.NewReader(sparseOf2(c.parts, c.declared)), nil)
		var ve *VolumeError
		if !errors.As(err, &ve) || ve.Volume != basicVolume || ve.Declared <= basicVolume || w.written != 0 {
			t.Errorf("%s: %v (%+v), wrote %d; want a *VolumeError before writing", c.name, err, ve, w.written)
		}
	}
	// Declared one block short of the volume: the superblock's block_count is beyond the image, as
	// NewImage would say at the end, said before expanding it.
	_, _, err = ExpandContext(context.Background(), &countingWriterAt{}, bytes.NewReader(sparseOf2([]part{{data: meta}, {zeros: basicVolume - 16<<20 - 4096}}, -1)), nil)
	wantFormatAt(t, "short sparse image", err, "superblock", sbOffset+0x24)
}

// TestHostileZstdBomb: the 2 MB zstd bomb of zeros (frames of zeros repeated) is refused
// after 8 KiB of output.
func TestHostileZstdBomb(t *testing.T) {
	const frame = 128 << 20
	m := member(t, FormatZstd, frame, 0)
	frames := int64(2<<20) / int64(len(m))
	t.Logf("zstd bomb: %d frames of %d bytes, %d MB in, %d GiB out", frames, len(m), frames*int64(len(m))/1e6, frames*frame>>30)
	in := &inputCounter{r: &repeatReader{b: m, n: frames}}
	w := &countingWriterAt{}
	_, n, err := ExpandContext(context.Background(), w, in, nil)
	if !errors.Is(err, ErrNotF2FS) || w.written != 0 || n > headLen || in.n > 1<<20 {
		t.Errorf("%v: returned %d, wrote %d, read %d", err, n, w.written, in.n)
	}
}

// TestHostileExpandContext: for every container, ExpandContext stops within one write (256 KiB of
// output) of its context ending, and LoadContext removes its partial file; a context that has ended
// already stops it before any output.
func TestHostileExpandContext(t *testing.T) {
	meta := basicPrefix(t, 16<<20)
	for _, f := range allFormats {
		t.Run(string(f), func(t *testing.T) {
			// Cancel once 8 MiB of output went by: output past the metadata's SIT and NAT.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var at int64 = -1
			w := &countingWriterAt{onWrite: func(off int64) {
				if off >= 8<<20 && at < 0 {
					at = off
					cancel()
				}
			}}
			r, _ := input(t, f, part{data: meta}, part{zeros: basicVolume - 16<<20})
			_, n, err := ExpandContext(ctx, w, r, nil)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("ExpandContext = %d, %v; want context.Canceled", n, err)
			}
			if at < 0 || n-at > 1<<20 {
				t.Errorf("cancelled at output %d, stopped at %d", at, n)
			}

			// LoadContext cancelled from its input: no file left behind.
			dir := t.TempDir()
			ctx2, cancel2 := context.WithCancel(context.Background())
			defer cancel2()
			r, size := input(t, f, part{data: meta}, part{zeros: basicVolume - 16<<20})
			in := &inputCounter{r: r, onRead: func(n int64) {
				if n > size/2 {
					cancel2()
				}
			}}
			if img, err := LoadContext(ctx2, in, "cancelled", &Options{TempDir: dir}); !errors.Is(err, context.Canceled) {
				if err == nil {
					img.Close()
				}
				t.Errorf("LoadContext cancelled from its input: %v", err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("%d files left in the temp dir", len(ents))
			}
			done, stop := context.WithCancel(context.Background())
			stop()
			r, _ = input(t, f, part{data: meta})
			w = &countingWriterAt{}
			if _, n, err := ExpandContext(done, w, r, nil); !errors.Is(err, context.Canceled) || w.written != 0 || n != 0 {
				t.Errorf("ended context: %d, %v, wrote %d", n, err, w.written)
			}
		})
	}
}

// TestHostileLoad: Load and OpenFile refuse the hostile inputs and leave nothing in TempDir; a
// whole real image in every format loads and lists.
func TestHostileLoad(t *testing.T) {
	dir := t.TempDir()
	hostile := map[string][]part{
		"zero start":            {{zeros: 64 << 30}},
		"superblock then zeros": {{data: basicPrefix(t, headLen)}, {zeros: 64 << 30}},
	}
	for name, parts := range hostile {
		for _, f := range allFormats {
			r, _ := input(t, f, parts...)
			var buf bytes.Buffer
			if _, err := io.CopyN(&buf, r, 4<<20); err != nil && !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			src := filepath.Join(t.TempDir(), "in")
			if err := os.WriteFile(src, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			r, _ = input(t, f, parts...)
			for how, open := range map[string]func() (*Image, error){
				"Load":     func() (*Image, error) { return Load(r, name, &Options{TempDir: dir}) },
				"OpenFile": func() (*Image, error) { return OpenFileContext(context.Background(), src, &Options{TempDir: dir}) },
			} {
				if img, err := open(); err == nil {
					img.Close()
					t.Errorf("%s %s (%s): accepted", how, name, f)
				}
				if ents, _ := os.ReadDir(dir); len(ents) != 0 {
					t.Errorf("%s %s (%s): %d files left in the temp dir", how, name, f, len(ents))
				}
			}
		}
	}
	if testing.Short() {
		return
	}
	whole := testutil.Gunzip(t, "testdata/basic.img.gz")
	for _, f := range allFormats {
		r, _ := input(t, f, part{data: whole})
		img, err := Load(r, "basic", &Options{TempDir: dir})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if ents, err := img.Files(); err != nil || len(ents) < 100 {
			t.Errorf("%s: %d files, %v", f, len(ents), err)
		}
		img.Close()
	}
}

// BenchmarkExpandCancel measures how long ExpandContext takes to return once its context is
// cancelled in the middle of a 128 MiB volume (after its 16 MiB of metadata), in every container:
// stop-ns is the time from cancel() to the return.
func BenchmarkExpandCancel(b *testing.B) {
	meta := basicPrefix(b, 16<<20)
	for _, f := range allFormats {
		b.Run(string(f), func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				ctx, cancel := context.WithCancel(context.Background())
				var at time.Time
				w := &countingWriterAt{onWrite: func(off int64) {
					if off >= 12<<20 && at.IsZero() {
						at = time.Now()
						cancel()
					}
				}}
				r, _ := input(b, f, part{data: meta}, part{zeros: basicVolume - 16<<20})
				if _, _, err := ExpandContext(ctx, w, r, nil); !errors.Is(err, context.Canceled) {
					b.Fatal(err)
				}
				total += time.Since(at)
				cancel()
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "stop-ns")
		})
	}
}

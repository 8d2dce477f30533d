package reliability

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/web"
)

// bombMember is 16 MiB: the first 8 KiB of a real 64 MiB F2FS image (its
// two superblocks, so imgio reads the volume's size and refuses the bomb by
// its bound; an input that does not start as F2FS is refused sooner, as
// ErrNotF2FS, see imgio's TestHostileExpand), then non-zero bytes (zeros
// would become holes and cost no disk, which would hide a missing bound).
func bombMember(tb testing.TB) []byte {
	tb.Helper()
	img, err := os.ReadFile(mkfsImage(tb, tb.TempDir(), 64, ""))
	if err != nil {
		tb.Fatal(err)
	}
	b := bytes.Repeat([]byte("zrviz-bomb-"), (16<<20)/11+1)[:16<<20]
	copy(b, img[:8192])
	return b
}

// bomb returns a tiny input of the given format that expands to copies ×
// 16 MiB: one compressed member repeated (gzip members, zstd frames and xz
// streams may all be concatenated).
func bomb(tb testing.TB, format imgio.Format, copies int) []byte {
	tb.Helper()
	var one bytes.Buffer
	var w io.WriteCloser
	var err error
	switch format {
	case imgio.FormatGzip:
		w, err = gzip.NewWriterLevel(&one, gzip.BestCompression)
	case imgio.FormatZstd:
		w, err = zstd.NewWriter(&one, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	case imgio.FormatXZ:
		w, err = xz.NewWriter(&one)
	default:
		tb.Fatalf("no bomb for %s", format)
	}
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := w.Write(bombMember(tb)); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return bytes.Repeat(one.Bytes(), copies)
}

// dirBytes sums the allocated size of the files under dir.
func dirBytes(tb testing.TB, dir string) (files int, bytes int64) {
	tb.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		files++
		if st, err := os.Stat(p); err == nil {
			bytes += st.Size()
		}
		return nil
	})
	return files, bytes
}

const bombLimit = 8 << 20

// TestBombsRefused: compressed inputs expanding to 1 GiB of non-zero
// bytes are refused with imgio.ErrTooLarge (a *LimitError naming the
// bound) by Load and OpenFile, nothing past the bound is written, and no
// temp file is left behind.
func TestBombsRefused(t *testing.T) {
	for _, f := range []imgio.Format{imgio.FormatGzip, imgio.FormatZstd, imgio.FormatXZ} {
		t.Run(string(f), func(t *testing.T) {
			in := bomb(t, f, 64) // 1 GiB out
			t.Logf("%s bomb: %d bytes in, %d bytes out", f, len(in), 64<<24)
			tmp := t.TempDir()
			check := func(how string, err error) {
				t.Helper()
				var le *imgio.LimitError
				if !errors.Is(err, imgio.ErrTooLarge) || !errors.As(err, &le) {
					t.Fatalf("%s: err = %v, want a *imgio.LimitError", how, err)
				}
				if le.Limit != bombLimit || le.Written > bombLimit {
					t.Errorf("%s: limit %d written %d, want limit %d and nothing past it", how, le.Limit, le.Written, bombLimit)
				}
				if n, sz := dirBytes(t, tmp); n != 0 {
					t.Errorf("%s: %d files (%d bytes) left in the temp dir", how, n, sz)
				}
			}
			_, err := imgio.Load(bytes.NewReader(in), "bomb", &imgio.Options{TempDir: tmp, MaxExpanded: bombLimit})
			check("Load", err)

			src := filepath.Join(t.TempDir(), "bomb."+string(f))
			if err := os.WriteFile(src, in, 0o444); err != nil {
				t.Fatal(err)
			}
			_, err = imgio.OpenFileContext(context.Background(), src, &imgio.Options{TempDir: tmp, MaxExpanded: bombLimit})
			check("OpenFile", err)
		})
	}
}

// TestSparseHostile: Android sparse headers and chunks that lie.
func TestSparseHostile(t *testing.T) {
	blk := bytes.Repeat([]byte{0x5a}, 4096)
	cases := []struct {
		name     string
		in       []byte
		tooLarge bool // want ErrTooLarge (else a FormatError or a truncation)
	}{
		{"petabyte declared", sparseImage(1<<20, 1<<30, []sparseChunk{{kind: chunkDontCare, blocks: 1 << 30}}), true},
		{"max declared", sparseImage(0xFFFFFFFC, 0xFFFFFFFF, nil), true},
		{"just over the bound", sparseImage(4096, bombLimit/4096+1, []sparseChunk{{kind: chunkDontCare, blocks: bombLimit/4096 + 1}}), true},
		{"chunk beyond declared size", sparseImage(4096, 4, []sparseChunk{{kind: chunkRaw, blocks: 8, data: bytes.Repeat(blk, 8)}}), false},
		{"chunks sum beyond declared size", sparseImage(4096, 4, []sparseChunk{
			{kind: chunkFill, blocks: 3, fill: 1}, {kind: chunkFill, blocks: 3, fill: 2}}), false},
		{"huge fill chunk", sparseImage(4096, 4, []sparseChunk{{kind: chunkFill, blocks: 0xFFFFFFFF, fill: 7}}), false},
		{"raw size disagrees with total_sz", sparseImage(4096, 4, []sparseChunk{{kind: chunkRaw, blocks: 2, data: blk, totalSz: 12 + 4096}}), false},
		{"raw data missing", sparseImage(4096, 4, []sparseChunk{{kind: chunkRaw, blocks: 4, data: bytes.Repeat(blk, 4), omitData: true}}), false},
		{"total_sz huge", sparseImage(4096, 4, []sparseChunk{{kind: chunkDontCare, blocks: 1, totalSz: 0xFFFFFFFF}}), false},
		{"fewer blocks than declared", sparseImage(4096, 4, []sparseChunk{{kind: chunkDontCare, blocks: 2}}), false},
		{"bad crc chunk", sparseImage(4096, 2, []sparseChunk{{kind: chunkRaw, blocks: 1, data: blk}, {kind: chunkCRC, blocks: 0}, {kind: chunkDontCare, blocks: 1}}), false},
		{"unknown chunk type", sparseImage(4096, 2, []sparseChunk{{kind: 0xCAC9, blocks: 2}}), false},
		{"block size 0", sparseImage(0, 2, nil), false},
		{"block size 6", sparseImage(6, 2, nil), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := &memWriterAt{limit: 2 * bombLimit}
			_, n, err := imgio.ExpandContext(context.Background(), w, bytes.NewReader(c.in), &imgio.Options{MaxExpanded: bombLimit})
			if w.max > bombLimit || errors.Is(err, errWriterFull) {
				t.Fatalf("wrote up to %d (n %d), bound %d: %v", w.max, n, bombLimit, err)
			}
			var fe *imgio.FormatError
			switch {
			case err == nil:
				t.Fatalf("accepted (%d bytes)", n)
			case c.tooLarge && !errors.Is(err, imgio.ErrTooLarge):
				t.Fatalf("err = %v, want imgio.ErrTooLarge", err)
			case !c.tooLarge && !errors.As(err, &fe) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, imgio.ErrTooLarge) &&
				!errors.Is(err, imgio.ErrNotF2FS):
				// ErrNotF2FS: the chunks made 8 KiB of output that holds no superblock.
				t.Fatalf("err = %v (%T), want a *imgio.FormatError, a truncation or ErrNotF2FS", err, err)
			}
			if c.tooLarge {
				if w.used != 0 {
					t.Errorf("%d bytes written before refusing a declared size over the bound", w.used)
				}
			}
			t.Logf("%v", err)
			// And through Load into a directory: nothing left behind.
			tmp := t.TempDir()
			if img, err := imgio.Load(bytes.NewReader(c.in), "x.simg", &imgio.Options{TempDir: tmp, MaxExpanded: bombLimit}); err == nil {
				img.Close()
				t.Fatal("Load accepted it")
			}
			if n, sz := dirBytes(t, tmp); n != 0 {
				t.Errorf("%d files (%d bytes) left in the temp dir", n, sz)
			}
		})
	}
}

// TestUploadSparsePetabyte: an Android sparse header declaring a
// petabyte is refused by the upload API with 413 and a message naming the
// declared size and the limit, before anything is written.
func TestUploadSparsePetabyte(t *testing.T) {
	ls := startServer(t, web.Config{})
	in := sparseImage(1<<20, 1<<30, []sparseChunk{{kind: chunkDontCare, blocks: 1 << 30}})
	code, body, err := postBytes(ls.url, "/api/images?name=peta.simg", in)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d %s", code, body)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "1125899906842624") || !strings.Contains(body, "limit") {
		t.Errorf("petabyte sparse upload: %d %s, want 413 naming the declared size and the limit", code, body)
	}
	if n, sz := dirBytes(t, ls.dataDir); n != 0 {
		t.Errorf("%d files (%d bytes) left in the data dir", n, sz)
	}
}

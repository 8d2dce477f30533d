package imgio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zrviz/zrviz/internal/testutil"
)

// xRun runs a command and fails the test with its output when it fails.
func xRun(tb testing.TB, name string, args ...string) {
	tb.Helper()
	cmd := exec.Command(testutil.NeedTool(tb, name), args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("%s %q: %v\n%s", name, args, err, out)
	}
}

// xPipe runs a command with stdin from the file in and stdout to the file out.
func xPipe(tb testing.TB, in, out string, name string, args ...string) {
	tb.Helper()
	cmd := exec.Command(testutil.NeedTool(tb, name), args...)
	fin, err := os.Open(in)
	if err != nil {
		tb.Fatal(err)
	}
	defer fin.Close()
	fout, err := os.Create(out)
	if err != nil {
		tb.Fatal(err)
	}
	defer fout.Close()
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = fin, fout, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("%s %q: %v\n%s", name, args, err, stderr.Bytes())
	}
}

// xMakeImage builds a real F2FS image of sizeMiB with mkfs.f2fs and loads dataMiB of files into it with
// sload.f2fs: pseudo-random data (incompressible, seeded so runs are repeatable), text and a file of
// zeros, in a small tree. It returns the image path.
func xMakeImage(tb testing.TB, dir string, sizeMiB, dataMiB int) string {
	tb.Helper()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(filepath.Join(src, "a", "b"), 0o755); err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(sizeMiB), uint64(dataMiB)))
	data := make([]byte, dataMiB<<20)
	for i := 0; i+8 <= len(data); i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			data[i+j] = byte(v >> (8 * j))
		}
	}
	var text bytes.Buffer
	for i := range 5000 {
		fmt.Fprintf(&text, "line %d of a text file that compresses well\n", i)
	}
	files := map[string][]byte{
		"a/random.bin":  data,
		"a/b/notes.txt": text.Bytes(),
		"zeros.bin":     make([]byte, 256<<10),
		"small.txt":     []byte("hello, zero range\n"),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(src, name), b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	img := filepath.Join(dir, "f2fs.img")
	f, err := os.Create(img)
	if err != nil {
		tb.Fatal(err)
	}
	if err := f.Truncate(int64(sizeMiB) << 20); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	xRun(tb, "mkfs.f2fs", "-q", "-f", img)
	xRun(tb, "sload.f2fs", "-f", src, img)
	return img
}

// xImagePrefix makes a real image and keeps its first n bytes (mkfs.f2fs and sload.f2fs put all
// metadata and data of a 64 MiB image near its start): tests that expand the input many times
// need real content, not a full image.
func xImagePrefix(tb testing.TB, dir string, n int64) string {
	tb.Helper()
	img := xMakeImage(tb, dir, 64, 1)
	if err := os.Truncate(img, n); err != nil {
		tb.Fatal(err)
	}
	return img
}

// xExpandFile expands the file in into a new file in dir and returns the output path and size.
func xExpandFile(tb testing.TB, in, dir string, opt *Options) (string, Format, int64, error) {
	tb.Helper()
	return xExpandFileCheck(tb, in, dir, opt, true)
}

// xExpandFileAny is xExpandFile without the F2FS checks, for inputs that are not F2FS images.
func xExpandFileAny(tb testing.TB, in, dir string, opt *Options) (string, Format, int64, error) {
	tb.Helper()
	return xExpandFileCheck(tb, in, dir, opt, false)
}

// expandAny is Expand without the F2FS checks (superblock, volume, checkpoint): the container tests
// feed it bytes that are not F2FS images.
func expandAny(dst io.WriterAt, r io.Reader, opt *Options) (Format, int64, error) {
	return expand(context.Background(), dst, r, opt, false)
}

func xExpandFileCheck(tb testing.TB, in, dir string, opt *Options, check bool) (string, Format, int64, error) {
	tb.Helper()
	r, err := os.Open(in)
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	out, err := os.CreateTemp(dir, "expanded-*.img")
	if err != nil {
		tb.Fatal(err)
	}
	defer out.Close()
	f, n, err := expand(context.Background(), out, r, opt, check)
	return out.Name(), f, n, err
}

// xNonZeroBlocks counts the 4 KiB blocks of b that are not all zeros.
func xNonZeroBlocks(b []byte) int64 {
	var n int64
	zero := make([]byte, expandBlock)
	for i := 0; i < len(b); i += expandBlock {
		if !bytes.Equal(b[i:min(i+expandBlock, len(b))], zero[:min(expandBlock, len(b)-i)]) {
			n++
		}
	}
	return n
}

// xAllocated is the disk space a file uses (st_blocks, 512-byte units).
func xAllocated(tb testing.TB, name string) int64 {
	tb.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		tb.Fatal(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		tb.Fatalf("no Stat_t for %s", name)
	}
	return st.Blocks * 512
}

// xCheckExpanded compares the expanded file with the original and checks that zero blocks stayed
// holes: the output may use the space of its non-zero blocks plus a little file-system metadata.
func xCheckExpanded(tb testing.TB, orig []byte, out string, n int64) {
	tb.Helper()
	got, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	if n != int64(len(orig)) || int64(len(got)) != n {
		tb.Fatalf("expanded size: returned %d, file %d, want %d", n, len(got), len(orig))
	}
	if !bytes.Equal(got, orig) {
		i := 0
		for i < len(got) && got[i] == orig[i] {
			i++
		}
		tb.Fatalf("expanded image differs from the original at byte %d", i)
	}
	want := xNonZeroBlocks(orig) * expandBlock
	if a := xAllocated(tb, out); a > want+256<<10 {
		tb.Errorf("expanded file uses %d bytes of disk; its non-zero blocks need %d: holes were not kept", a, want)
	}
}

// xFixtures makes one real image and every compressed form of it that the tools produce.
type xFixture struct {
	name   string
	path   string
	format Format
}

func xMakeFixtures(tb testing.TB, dir, img string) []xFixture {
	tb.Helper()
	p := func(s string) string { return filepath.Join(dir, s) }
	half := p("half2")
	// Second half of the image, for multi-member/multi-stream/multi-frame inputs.
	orig, err := os.ReadFile(img)
	if err != nil {
		tb.Fatal(err)
	}
	first, second := p("half1"), half
	if err := os.WriteFile(first, orig[:len(orig)/2+12345], 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(second, orig[len(orig)/2+12345:], 0o644); err != nil {
		tb.Fatal(err)
	}
	concat := func(out string, parts ...string) {
		var b []byte
		for _, q := range parts {
			c, err := os.ReadFile(q)
			if err != nil {
				tb.Fatal(err)
			}
			b = append(b, c...)
		}
		if err := os.WriteFile(out, b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}

	xPipe(tb, img, p("img.gz"), "gzip", "-c", "-1")
	xPipe(tb, first, p("h1.gz"), "gzip", "-c", "-1")
	xPipe(tb, second, p("h2.gz"), "gzip", "-c", "-1")
	concat(p("multi.gz"), p("h1.gz"), p("h2.gz"))

	xPipe(tb, img, p("blocks.xz"), "xz", "-c", "-0", "-T2", "--block-size=4MiB")
	xPipe(tb, first, p("h1.xz"), "xz", "-c", "-0")
	xPipe(tb, second, p("h2.xz"), "xz", "-c", "-0", "--check=sha256")
	concat(p("multi.xz"), p("h1.xz"), p("h2.xz"))

	xPipe(tb, img, p("img.zst"), "zstd", "-c", "-q", "-3")
	xPipe(tb, first, p("h1-19.zst"), "zstd", "-c", "-q", "-19", "--no-check")
	xPipe(tb, img, p("long.zst"), "zstd", "-c", "-q", "--long=27")
	xPipe(tb, first, p("h1.zst"), "zstd", "-c", "-q", "-1")
	xPipe(tb, second, p("h2.zst"), "zstd", "-c", "-q", "-5")
	concat(p("multi.zst"), p("h1.zst"), p("h2.zst"))
	concat(p("multi19.zst"), p("h1-19.zst"), p("h2.zst"))
	// pzstd splits the input into independent frames behind skippable frames.
	xPipe(tb, img, p("p.zst"), "pzstd", "-c", "-q", "-p", "2", "-3")
	// A hand-made skippable frame (magic 0x184D2A5A, 5 bytes) in front of an ordinary frame.
	skip := []byte{0x5a, 0x2a, 0x4d, 0x18, 5, 0, 0, 0, 'z', 'r', 'v', 'i', 'z'}
	if err := os.WriteFile(p("skip.bin"), skip, 0o644); err != nil {
		tb.Fatal(err)
	}
	concat(p("skip.zst"), p("skip.bin"), p("h1.zst"), p("skip.bin"), p("h2.zst"), p("skip.bin"))

	xRun(tb, "img2simg", img, p("img.simg"))
	xRun(tb, "img2simg", img, p("img1k.simg"), "1024")

	return []xFixture{
		{"raw", img, FormatRaw},
		{"gzip", p("img.gz"), FormatGzip},
		{"gzip-multi-member", p("multi.gz"), FormatGzip},
		{"xz-multi-block", p("blocks.xz"), FormatXZ},
		{"xz-multi-stream", p("multi.xz"), FormatXZ},
		{"zstd", p("img.zst"), FormatZstd},
		{"zstd-19-no-check", p("multi19.zst"), FormatZstd},
		{"zstd-long", p("long.zst"), FormatZstd},
		{"zstd-multi-frame", p("multi.zst"), FormatZstd},
		{"zstd-pzstd", p("p.zst"), FormatZstd},
		{"zstd-skippable", p("skip.zst"), FormatZstd},
		{"android-sparse", p("img.simg"), FormatAndroidSparse},
		{"android-sparse-1k", p("img1k.simg"), FormatAndroidSparse},
	}
}

// TestExpandTools expands a real F2FS image after each real tool packed it, and checks that the
// result is byte-identical and sparse.
func TestExpandTools(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: compresses a 64 MiB image with every tool")
	}
	dir := t.TempDir()
	img := xMakeImage(t, dir, 64, 1)
	orig, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	for _, fx := range xMakeFixtures(t, dir, img) {
		t.Run(fx.name, func(t *testing.T) {
			var calls []Progress
			opt := &Options{Progress: func(p Progress) { calls = append(calls, p) }}
			out, f, n, err := xExpandFile(t, fx.path, t.TempDir(), opt)
			if err != nil {
				t.Fatalf("Expand: %v", err)
			}
			if f != fx.format {
				t.Errorf("format %q, want %q", f, fx.format)
			}
			xCheckExpanded(t, orig, out, n)
			if len(calls) == 0 {
				t.Fatal("Progress never called")
			}
			last := calls[len(calls)-1]
			if last.Written != n || last.Format != fx.format {
				t.Errorf("last progress %+v, want Written %d, Format %s", last, n, fx.format)
			}
			in, _ := os.Stat(fx.path)
			if last.Read != in.Size() {
				t.Errorf("last progress Read %d, input is %d bytes", last.Read, in.Size())
			}
		})
	}
}

// TestExpandDemo expands the embedded demo image and compares it with what the zstd tool makes of it.
func TestExpandDemo(t *testing.T) {
	const demo = "demo/demo.img.zst"
	dir := t.TempDir()
	out, f, n, err := xExpandFile(t, demo, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f != FormatZstd || n != 256<<20 {
		t.Fatalf("format %s size %d, want zstd %d", f, n, 256<<20)
	}
	// The raw copy the tests share (testutil.DemoImage) must be the same image, and outside the fast
	// tier both are held to what the zstd program expands.
	shared, err := os.ReadFile(testutil.DemoImage(t))
	if err != nil {
		t.Fatal(err)
	}
	orig := shared
	if !testing.Short() {
		ref := filepath.Join(dir, "ref.img")
		xRun(t, "zstd", "-q", "-d", "-o", ref, demo)
		if orig, err = os.ReadFile(ref); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(shared, orig) {
			t.Fatal("testutil.DemoImage differs from the demo zstd expands")
		}
	}
	xCheckExpanded(t, orig, out, n)
}

// TestExpandProgress checks the rate of Progress calls and their fields.
func TestExpandProgress(t *testing.T) {
	dir := t.TempDir()
	img := xMakeImage(t, dir, 64, 1)
	xPipe(t, img, img+".zst", "zstd", "-c", "-q")
	xRun(t, "img2simg", img, img+".simg")
	for _, tc := range []struct {
		in    string
		total int64
	}{
		{img + ".zst", -1},
		{img + ".simg", 64 << 20},
		{img, -1},
	} {
		t.Run(filepath.Ext(tc.in), func(t *testing.T) {
			var calls []Progress
			_, _, n, err := xExpandFile(t, tc.in, t.TempDir(), &Options{Progress: func(p Progress) { calls = append(calls, p) }})
			if err != nil {
				t.Fatal(err)
			}
			// At most one call per 8 MiB of output, and one at the end. Streams report at about that
			// rate; a sparse image that skips 100 MiB in one chunk reports less often.
			want := n / progressEvery
			if int64(len(calls)) > want+2 || len(calls) < 2 || (tc.total < 0 && int64(len(calls)) < want) {
				t.Errorf("%d Progress calls for %d bytes, want about %d", len(calls), n, want+1)
			}
			for i, p := range calls {
				if p.Total != tc.total {
					t.Errorf("call %d: Total %d, want %d", i, p.Total, tc.total)
				}
				if i > 0 && (p.Written < calls[i-1].Written || p.Read < calls[i-1].Read) {
					t.Errorf("call %d went backwards: %+v after %+v", i, p, calls[i-1])
				}
			}
			if calls[len(calls)-1].Written != n {
				t.Errorf("last call %+v, want Written %d", calls[len(calls)-1], n)
			}
		})
	}
}

// TestExpandBombs feeds tiny inputs that expand to 16 MiB of zeros (and of non-zero bytes) with a
// 1 MiB bound. Without the F2FS checks each must stop with a *LimitError without writing past the
// bound; with them (Expand) each is refused as not F2FS after its first 8 KiB of output, with nothing
// written.
func TestExpandBombs(t *testing.T) {
	const limit = 1 << 20
	dir := t.TempDir()
	zeros := filepath.Join(dir, "zeros")
	ones := filepath.Join(dir, "ones")
	if err := os.WriteFile(zeros, make([]byte, 16<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ones, bytes.Repeat([]byte{0xff}, 16<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	var inputs []string
	for _, src := range []string{zeros, ones} {
		for _, c := range []struct{ ext, tool string }{{".gz", "gzip"}, {".xz", "xz"}, {".zst", "zstd"}} {
			out := src + c.ext
			xPipe(t, src, out, c.tool, "-c", "-1")
			inputs = append(inputs, out)
		}
		xRun(t, "img2simg", src, src+".simg")
		inputs = append(inputs, src+".simg", src)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			out, f, n, err := xExpandFileAny(t, in, t.TempDir(), &Options{MaxExpanded: limit})
			var le *LimitError
			if !errors.As(err, &le) || !errors.Is(err, ErrTooLarge) {
				t.Fatalf("Expand = %s, %d, %v; want a *LimitError", f, n, err)
			}
			if le.Limit != limit || le.Written > limit || n > limit || le.Format != f {
				t.Errorf("LimitError %+v (n %d), want Limit %d, Written <= limit", le, n, limit)
			}
			if f == FormatAndroidSparse && (le.Declared != 16<<20 || le.Written != 0) {
				t.Errorf("sparse: LimitError %+v, want Declared %d and nothing written", le, 16<<20)
			}
			fi, err := os.Stat(out)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() > limit || xAllocated(t, out) > limit {
				t.Errorf("output has size %d, %d bytes allocated: past the limit %d", fi.Size(), xAllocated(t, out), limit)
			}
			if f == FormatAndroidSparse {
				return // refused from its header, before any output, with or without the checks
			}
			out, _, n, err = xExpandFile(t, in, t.TempDir(), &Options{MaxExpanded: 64 << 20})
			if !errors.Is(err, ErrNotF2FS) || n > headLen {
				t.Fatalf("Expand = %d, %v; want ErrNotF2FS within %d bytes", n, err, headLen)
			}
			if a := xAllocated(t, out); a != 0 {
				t.Errorf("%d bytes written before refusing a start that is not F2FS", a)
			}
		})
	}
}

// TestExpandExactLimit checks that the bound is inclusive: an image of exactly MaxExpanded bytes is
// fine, one byte less is refused.
func TestExpandExactLimit(t *testing.T) {
	dir := t.TempDir()
	img := xMakeImage(t, dir, 64, 1)
	xPipe(t, img, img+".zst", "zstd", "-c", "-q")
	xRun(t, "img2simg", img, img+".simg")
	for _, in := range []string{img, img + ".zst", img + ".simg"} {
		if _, _, n, err := xExpandFile(t, in, dir, &Options{MaxExpanded: 64 << 20}); err != nil || n != 64<<20 {
			t.Errorf("%s with limit = size: %d, %v", filepath.Base(in), n, err)
		}
		if _, _, _, err := xExpandFile(t, in, dir, &Options{MaxExpanded: 64<<20 - 1}); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s with limit = size-1: %v, want ErrTooLarge", filepath.Base(in), err)
		}
	}
}

// TestExpandTruncated cuts every compressed form of a real image at many offsets: each cut must give
// an error wrapping io.ErrUnexpectedEOF, never a panic, a hang or a silent short image.
func TestExpandTruncated(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: every format cut at many offsets")
	}
	dir := t.TempDir()
	img := xImagePrefix(t, dir, 8<<20)
	type input struct {
		name string
		b    []byte
	}
	var inputs []input
	for _, c := range []struct{ name, tool string }{{"gzip", "gzip"}, {"xz", "xz"}, {"zstd", "zstd"}} {
		out := img + "." + c.name
		xPipe(t, img, out, c.tool, "-c")
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{c.name, b})
	}
	// A sparse image declares its size, and Expand refuses a declared size below the volume the
	// superblock claims before expanding the rest; so pack the whole image, not the prefix.
	full := xMakeImage(t, t.TempDir(), 64, 1)
	xRun(t, "img2simg", full, img+".simg")
	b, err := os.ReadFile(img + ".simg")
	if err != nil {
		t.Fatal(err)
	}
	inputs = append(inputs, input{"android-sparse", b})

	outPath := filepath.Join(dir, "out")
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			// Every offset in the headers, then about 150 spread over the rest.
			var cuts []int
			for i := 6; i < 64 && i < len(in.b); i++ {
				cuts = append(cuts, i)
			}
			for i := 64; i < len(in.b); i += max(1, len(in.b)/150) {
				cuts = append(cuts, i)
			}
			cuts = append(cuts, len(in.b)-1)
			for _, cut := range cuts {
				out, err := os.Create(outPath)
				if err != nil {
					t.Fatal(err)
				}
				_, n, err := ExpandContext(context.Background(), out, bytes.NewReader(in.b[:cut]), &Options{MaxExpanded: 256 << 20})
				out.Close()
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("cut at %d of %d: Expand = %d, %v; want io.ErrUnexpectedEOF", cut, len(in.b), n, err)
				}
			}
			t.Logf("%d cuts, all refused", len(cuts))
		})
	}
}

// TestExpandCorrupt flips bytes inside real compressed streams: the error must be a *FormatError
// carrying an input offset (or, for a flip that only shortens the data, a truncation; or the F2FS
// checks' own error when the flip decodes into a damaged superblock before the stream's checksum is
// read), never a panic and never a silent success with different bytes. mkfs.f2fs makes a new image
// (UUID, times) each run, so the flips land on other bytes each time.
func TestExpandCorrupt(t *testing.T) {
	dir := t.TempDir()
	img := xImagePrefix(t, dir, 8<<20)
	orig, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, tool string }{{"gzip", "gzip"}, {"xz", "xz"}, {"zstd", "zstd"}} {
		t.Run(c.name, func(t *testing.T) {
			in := img + "." + c.name
			xPipe(t, img, in, c.tool, "-c")
			b, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var formatErrs int
			flips := 40
			if testing.Short() {
				flips = 10 // the fast tier: the same spread over the stream, coarser
			}
			for i := 1; i <= flips; i++ {
				bad := bytes.Clone(b)
				at := 8 + (len(b)-16)*i/(flips+1)
				bad[at] ^= 0x55
				var out bytes.Buffer
				w := &xMemWriter{max: 256 << 20}
				_, n, err := ExpandContext(context.Background(), w, bytes.NewReader(bad), nil)
				out.Write(w.b[:min(int64(len(w.b)), n)])
				if err == nil {
					// gzip, xz and zstd carry checksums of the data: a flip that decodes must not
					// change the image.
					if !bytes.Equal(out.Bytes(), orig[:len(out.Bytes())]) || n != int64(len(orig)) {
						t.Fatalf("flip at %d: no error but the image changed", at)
					}
					continue
				}
				var fe *FormatError
				switch {
				case errors.As(err, &fe) && strings.HasSuffix(fe.Struct, " stream"):
					formatErrs++
					if fe.Off <= 0 || fe.Off > int64(len(b)) {
						t.Errorf("flip at %d: FormatError offset %d outside the input", at, fe.Off)
					}
				case errors.As(err, &fe):
					// The flip decoded into a damaged superblock or checkpoint, which the F2FS checks
					// met before the stream's own checksum: an offset in the image.
					if fe.Off < 0 || fe.Off >= int64(len(orig)) {
						t.Errorf("flip at %d: %v: offset outside the image", at, err)
					}
				case errors.As(err, new(*UnsupportedError)):
					// The flip decoded into a superblock that claims a feature the reader refuses
					// (multi-device, a block size) before the stream's checksum: said as such.
				case errors.Is(err, ErrNotF2FS), errors.Is(err, io.ErrUnexpectedEOF):
				default:
					t.Errorf("flip at %d: %v: neither a FormatError nor a truncation", at, err)
				}
			}
			if formatErrs == 0 {
				t.Error("no flip gave a FormatError")
			}
		})
	}
}

// TestExpandNoTruncate uses a dst without a Truncate method: Expand still returns the full size and
// writes every non-zero byte; extending the file is left to the caller.
func TestExpandNoTruncate(t *testing.T) {
	dir := t.TempDir()
	img := xMakeImage(t, dir, 64, 1)
	orig, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	in, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	_, n, err := ExpandContext(context.Background(), struct{ io.WriterAt }{out}, in, nil)
	if err != nil || n != int64(len(orig)) {
		t.Fatalf("Expand = %d, %v", n, err)
	}
	if err := out.Truncate(n); err != nil {
		t.Fatal(err)
	}
	xCheckExpanded(t, orig, out.Name(), n)
}

// TestExpandWriteError checks that a failing dst is reported, wrapped.
func TestExpandWriteError(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "ro")
	if err := os.WriteFile(name, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ro, err := os.Open(name) // read-only: every WriteAt fails
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	data := bytes.Repeat([]byte("not zero"), 4096)
	_, _, err = expandAny(ro, bytes.NewReader(data), nil)
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		t.Fatalf("Expand into a read-only file: %v, want a wrapped *fs.PathError", err)
	}
}

// TestExpandSmallInputs covers inputs shorter than HeaderSize, including the empty one.
func TestExpandSmallInputs(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want Format
		n    int64
	}{
		{"empty", nil, FormatRaw, 0},
		{"one byte", []byte{0x1f}, FormatRaw, 1},
		{"zero block and a bit", append(make([]byte, 5000), 1), FormatRaw, 5001},
		{"skippable only", []byte{0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0}, FormatZstd, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// None of these is an F2FS image: Expand refuses each once it ends.
			if f, _, err := ExpandContext(context.Background(), &xMemWriter{max: 1 << 20}, bytes.NewReader(tc.in), nil); !errors.Is(err, ErrNotF2FS) || f != tc.want {
				t.Errorf("Expand = %s, %v; want %s and ErrNotF2FS", f, err, tc.want)
			}
			w := &xMemWriter{max: 1 << 20}
			f, n, err := expandAny(w, bytes.NewReader(tc.in), nil)
			if err != nil || f != tc.want || n != tc.n {
				t.Fatalf("Expand = %s, %d, %v; want %s, %d", f, n, err, tc.want, tc.n)
			}
			if tc.want == FormatRaw {
				got := make([]byte, n)
				copy(got, w.b)
				if !bytes.Equal(got, tc.in[:n]) {
					t.Errorf("output differs from input")
				}
			}
		})
	}
}

// xMemWriter is an in-memory dst for tests that need no disk. It fails (and records) any write past
// max.
type xMemWriter struct {
	b    []byte
	max  int64
	over bool
}

func (w *xMemWriter) WriteAt(p []byte, off int64) (int, error) {
	end := off + int64(len(p))
	if off < 0 || end > w.max {
		w.over = true
		return 0, fmt.Errorf("xMemWriter: write [%d,%d) past %d", off, end, w.max)
	}
	if end > int64(len(w.b)) {
		w.b = append(w.b, make([]byte, end-int64(len(w.b)))...)
	}
	copy(w.b[off:], p)
	return len(p), nil
}

// TestExpandXZDictionary reads the dictionary size from real xz block headers and refuses a first
// block that asks for more than xzMaxDict before the decoder allocates it.
func TestExpandXZDictionary(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.WriteFile(in, xPattern(100000, 9), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		dict uint64
	}{
		{[]string{"-0"}, 256 << 10},
		{[]string{"-6"}, 8 << 20},
		{[]string{"--lzma2=preset=1,dict=3MiB"}, 3 << 20},
		{[]string{"-1", "-T2"}, 1 << 20}, // block header with both sizes present
		{[]string{"--x86", "-0"}, 256 << 10},
	} {
		out := filepath.Join(dir, "out.xz")
		xPipe(t, in, out, "xz", append([]string{"-c"}, tc.args...)...)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := xzFirstDict(b); !ok || d != tc.dict {
			t.Errorf("xz %q: dictionary %d, %v; want %d", tc.args, d, ok, tc.dict)
		}
		// Ask for 4 GiB - 1 (property byte 40) and 1.5 GiB (37): refused up front.
		for _, prop := range []byte{40, 37} {
			bad := bytes.Clone(b)
			i := bytes.Index(bad[12:12+int(bad[12]+1)*4], []byte{0x21, 0x01}) + 12 + 2
			bad[i] = prop
			_, _, err = ExpandContext(context.Background(), &xMemWriter{max: 1 << 30}, bytes.NewReader(bad), nil)
			var ue *UnsupportedError
			if !errors.As(err, &ue) || ue.Off != 12 {
				t.Errorf("xz %q with dictionary property %d: %v, want an *UnsupportedError at 12", tc.args, prop, err)
			}
		}
	}
	for _, b := range [][]byte{nil, magicXZ, append(bytes.Clone(magicXZ), make([]byte, 20)...)} {
		if _, ok := xzFirstDict(b); ok {
			t.Errorf("xzFirstDict(% x) found a dictionary", b)
		}
	}
}

// FuzzExpand feeds arbitrary input to Expand with a 256 KiB bound (small, so that bombs stop quickly). It must never panic, hang, write past
// the bound or return an error of an unexpected kind; raw input must come back unchanged.
func FuzzExpand(f *testing.F) {
	// More seeds are in testdata/fuzz/FuzzExpand: real gzip, xz, zstd and img2simg output.
	f.Add([]byte{})
	f.Add(xSimg{major: 1, blkSz: 4096, totalBlks: 6,
		chunks: []xChunk{xRaw(2, xPattern(8192, 1)), xSkip(3), xFill(1, 0x12345678), xCRC(0)}}.bytes())
	f.Add(xSimg{major: 1, blkSz: 1024, totalBlks: 3, chunks: []xChunk{xRaw(1, xPattern(1024, 2)), xFill(2, 0)}}.bytes())
	f.Add([]byte{0x50, 0x2a, 0x4d, 0x18, 1, 0, 0, 0, 9, 0x28, 0xb5, 0x2f, 0xfd})
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 256 << 10
		// With the F2FS checks: the same bound, and the checks' own kinds of error.
		w := &xMemWriter{max: limit}
		_, n, err := ExpandContext(context.Background(), w, bytes.NewReader(data), &Options{MaxExpanded: limit})
		if w.over || n < 0 || n > limit {
			t.Fatalf("checked: wrote past the limit or size %d outside [0, %d]: %v", n, limit, err)
		}
		if err != nil {
			var (
				le *LimitError
				ve *VolumeError
				fe *FormatError
				ue *UnsupportedError
			)
			if !errors.As(err, &le) && !errors.As(err, &ve) && !errors.As(err, &fe) && !errors.As(err, &ue) &&
				!errors.Is(err, ErrNotF2FS) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("checked: unexpected kind of error %T: %v", err, err)
			}
		}
		// Without them: the containers alone, and raw input comes back unchanged.
		w = &xMemWriter{max: limit}
		format, n, err := expandAny(w, bytes.NewReader(data), &Options{MaxExpanded: limit})
		if w.over {
			t.Fatalf("wrote past the limit: %v", err)
		}
		if n < 0 || n > limit {
			t.Fatalf("size %d outside [0, %d] (err %v)", n, limit, err)
		}
		if format != DetectFormat(data[:min(len(data), HeaderSize)]) {
			t.Fatalf("format %q, DetectFormat says otherwise", format)
		}
		if err != nil {
			var (
				le *LimitError
				fe *FormatError
				ue *UnsupportedError
			)
			if !errors.As(err, &le) && !errors.As(err, &fe) && !errors.As(err, &ue) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("unexpected kind of error %T: %v", err, err)
			}
			return
		}
		if format == FormatRaw {
			got := make([]byte, n)
			copy(got, w.b)
			if !bytes.Equal(got, data) {
				t.Fatal("raw input changed")
			}
		}
	})
}

// BenchmarkExpand expands a 256 MiB F2FS image holding 16 MiB of files (random data, text, zeros) from
// each format the tools make. MB/s counts output bytes.
func BenchmarkExpand(b *testing.B) {
	dir := b.TempDir()
	img := xMakeImage(b, dir, 256, 16)
	fi, err := os.Stat(img)
	if err != nil {
		b.Fatal(err)
	}
	xPipe(b, img, img+".gz", "gzip", "-c")
	xPipe(b, img, img+".xz", "xz", "-c", "-0")
	xPipe(b, img, img+".zst", "zstd", "-c", "-q")
	xPipe(b, img, img+".19.zst", "zstd", "-c", "-q", "-19")
	xRun(b, "img2simg", img, img+".simg")
	for _, bc := range []struct{ name, in string }{
		{"raw", img},
		{"gzip", img + ".gz"},
		{"xz", img + ".xz"},
		{"zstd", img + ".zst"},
		{"zstd-19", img + ".19.zst"},
		{"android-sparse", img + ".simg"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(fi.Size())
			cpu := xCPUTime(b)
			for b.Loop() {
				xBenchExpand(b, bc.in, filepath.Join(dir, "out"), fi.Size())
			}
			xReportCPU(b, xCPUTime(b)-cpu, fi.Size())
		})
	}
}

// BenchmarkExpandFile expands the file named by $ZRVIZ_EXPAND_BENCH (testdata/expand/bench4g.sh makes
// a 4 GiB F2FS image and runs this on its zstd forms). MB/s counts output bytes.
func BenchmarkExpandFile(b *testing.B) {
	in := os.Getenv("ZRVIZ_EXPAND_BENCH")
	if in == "" {
		b.Skip("set ZRVIZ_EXPAND_BENCH to an image file (see testdata/expand/bench4g.sh)")
	}
	out := filepath.Join(b.TempDir(), "out")
	n := xBenchExpand(b, in, out, -1)
	b.SetBytes(n)
	cpu := xCPUTime(b)
	for b.Loop() {
		xBenchExpand(b, in, out, n)
	}
	xReportCPU(b, xCPUTime(b)-cpu, n)
	b.ReportMetric(float64(xAllocated(b, out))/(1<<20), "MiB-on-disk")
}

// xCPUTime is the user+system CPU time of this process so far. On the shared, loaded build machine
// wall time swings widely; CPU time (all threads, GC included) is the steadier figure.
func xCPUTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// xReportCPU reports output megabytes per CPU second over the b.N runs.
func xReportCPU(b *testing.B, cpu time.Duration, size int64) {
	if cpu > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
	}
}

func xBenchExpand(b *testing.B, in, out string, want int64) int64 {
	r, err := os.Open(in)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	w, err := os.Create(out) // truncates: every run starts from an empty file
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	_, n, err := ExpandContext(context.Background(), w, r, nil)
	if err != nil || (want >= 0 && n != want) {
		b.Fatalf("Expand = %d, %v; want %d bytes", n, err, want)
	}
	return n
}

// TestExpandZstdWindow checks the bound on the zstd history window: a frame asking for a 1 GiB window
// is refused as corrupt before anything is allocated for it, and a frame whose window (its content
// size, for a single-segment frame) is over a small MaxExpanded is a *LimitError.
func TestExpandZstdWindow(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	data := append(xPattern(1<<20, 7), make([]byte, 29<<20)...)
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// From a file the size is known: one single-segment frame with a 30 MiB window.
	long := filepath.Join(dir, "long.zst")
	xRun(t, "zstd", "-q", "-f", "--long=27", in, "-o", long)
	if _, _, n, err := xExpandFileAny(t, long, dir, nil); err != nil || n != int64(len(data)) {
		t.Fatalf("default limit: %d, %v", n, err)
	}
	if _, _, _, err := xExpandFileAny(t, long, dir, &Options{MaxExpanded: 10 << 20}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("10 MiB limit: %v, want ErrTooLarge", err)
	}
	// Through a pipe the size is unknown: the frame header carries a window descriptor (byte 5).
	piped := filepath.Join(dir, "piped.zst")
	xPipe(t, in, piped, "zstd", "-c", "-q")
	b, err := os.ReadFile(piped)
	if err != nil {
		t.Fatal(err)
	}
	if b[4]&0x20 != 0 {
		t.Fatalf("frame header %#x: single segment, no window descriptor", b[4])
	}
	b[5] = (30 - 10) << 3 // window log 30: 1 GiB
	_, _, err = expandAny(&xMemWriter{max: 1 << 30}, bytes.NewReader(b), nil)
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Errorf("1 GiB window: %v, want a *FormatError", err)
	}
}

// BenchmarkExpandMemory measures the pipeline alone (input buffer, zero-block check, run coalescing)
// on 256 MiB of raw input from memory, one block in 16 non-zero, into a dst that discards.
func BenchmarkExpandMemory(b *testing.B) {
	img := make([]byte, 256<<20)
	data := xPattern(4096, 11)
	for off := 0; off < len(img); off += 16 * 4096 {
		copy(img[off:], data)
	}
	b.SetBytes(int64(len(img)))
	cpu := xCPUTime(b)
	for b.Loop() {
		if _, n, err := ExpandContext(context.Background(), xDiscard{}, bytes.NewReader(img), nil); err != nil || n != int64(len(img)) {
			b.Fatalf("Expand = %d, %v", n, err)
		}
	}
	xReportCPU(b, xCPUTime(b)-cpu, int64(len(img)))
}

// xDiscard is a dst that accepts and drops every write.
type xDiscard struct{}

func (xDiscard) WriteAt(p []byte, off int64) (int, error) { return len(p), nil }

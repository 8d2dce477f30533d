package imgedit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/testutil"
	"golang.org/x/sys/unix"
)

// Copy makes a new raw file of the compressed image src (.zst or .gz) in a test's temporary
// directory, to edit, and returns its name. It copies the raw file the tests share
// (testutil.RawImage) extent by extent: the copy is as sparse as the image, and its data is copied
// by the kernel (copy_file_range) rather than expanded again.
func Copy(tb testing.TB, src string) string {
	tb.Helper()
	in, err := os.Open(testutil.RawImage(tb, src))
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	name := filepath.Join(tb.TempDir(), filepath.Base(src)+".raw")
	out, err := os.Create(name)
	if err != nil {
		tb.Fatal(err)
	}
	if err := out.Truncate(st.Size()); err != nil {
		tb.Fatal(err)
	}
	fd := int(in.Fd())
	for off := int64(0); off < st.Size(); {
		data, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if err == unix.ENXIO { // no data after off: the rest is a hole
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		hole, err := unix.Seek(fd, data, unix.SEEK_HOLE)
		if err != nil {
			tb.Fatal(err)
		}
		for roff, woff := data, data; roff < hole; {
			n, err := unix.CopyFileRange(fd, &roff, int(out.Fd()), &woff, int(hole-roff), 0)
			if err != nil {
				tb.Fatal(err)
			}
			if n == 0 {
				tb.Fatalf("copy %s: no progress at %d", src, roff)
			}
		}
		off = hole
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
	return name
}

// Edit opens the raw image name for editing, calls fn and closes it.
func Edit(tb testing.TB, name string, fn func(e Editor)) {
	tb.Helper()
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	img, err := imgio.NewImage(f, st.Size())
	if err != nil {
		tb.Fatal(err)
	}
	fn(Editor{Img: img, F: f})
}

// Open opens an image, closed at the end of the test: a raw one in place, a compressed fixture
// (.zst, .gz) through the raw file the tests share (testutil.RawImage).
func Open(tb testing.TB, name string) *imgio.Image {
	tb.Helper()
	if strings.HasSuffix(name, ".zst") || strings.HasSuffix(name, ".gz") {
		name = testutil.RawImage(tb, name)
	}
	img, err := imgio.OpenFileContext(context.Background(), name, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { img.Close() })
	return img
}

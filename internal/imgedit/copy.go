package imgedit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/testutil"
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
	copyData(tb, src, in, out, st.Size())
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

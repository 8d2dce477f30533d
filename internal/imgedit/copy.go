package imgedit

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/zrviz/zrviz/imgio"
)

// Copy expands the zstd image src into a new raw file in a test's temporary directory and returns
// its name.
func Copy(tb testing.TB, src string) string {
	tb.Helper()
	in, err := os.Open(src)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	d, err := zstd.NewReader(in)
	if err != nil {
		tb.Fatal(err)
	}
	defer d.Close()
	name := filepath.Join(tb.TempDir(), filepath.Base(src)+".raw")
	out, err := os.Create(name)
	if err != nil {
		tb.Fatal(err)
	}
	// Only the blocks that are not all zero are written: the copy is sparse, like the image.
	buf := make([]byte, 1<<20)
	zero := make([]byte, 4096)
	var off int64
	for {
		n, err := io.ReadFull(d, buf)
		for i := 0; i < n; i += 4096 {
			b := buf[i:min(i+4096, n)]
			if !bytes.Equal(b, zero[:len(b)]) {
				if _, err := out.WriteAt(b, off+int64(i)); err != nil {
					tb.Fatal(err)
				}
			}
		}
		off += int64(n)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	if err := out.Truncate(off); err != nil {
		tb.Fatal(err)
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

// Open opens a raw image, closed at the end of the test.
func Open(tb testing.TB, name string) *imgio.Image {
	tb.Helper()
	img, err := imgio.OpenFileContext(context.Background(), name, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { img.Close() })
	return img
}

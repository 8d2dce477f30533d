package testutil

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestDemoImage(t *testing.T) {
	dir := t.TempDir()
	name, err := rawImage(dir, demoSource(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 256<<20 {
		t.Fatalf("%s: %d bytes, want 256 MiB", name, len(b))
	}
	// The superblock's magic, F2FS_SUPER_MAGIC, at byte 1024 (and the backup's at 5120).
	for _, off := range []int{1024, 5120} {
		if !bytes.Equal(b[off:off+4], []byte{0x10, 0x20, 0xf5, 0xf2}) {
			t.Fatalf("magic at %d: % x, want 10 20 f5 f2", off, b[off:off+4])
		}
	}
	if st, _ := os.Stat(name); st.Mode().Perm() != 0o444 {
		t.Errorf("mode %v, want read-only", st.Mode())
	}

	// A changed byte is found and the file made again.
	if err := os.Chmod(name, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff}, 200<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	again, err := rawImage(dir, demoSource(t))
	if err != nil {
		t.Fatal(err)
	}
	b2, err := os.ReadFile(again)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatal("a changed demo file was reused")
	}
}

func demoSource(t *testing.T) string {
	t.Helper()
	return filepath.Join("..", "..", "imgio", "demo", "demo.img.zst")
}

// TestRawImageGzip: a gzip fixture's raw file is what gzip expands it to.
func TestRawImageGzip(t *testing.T) {
	src := filepath.Join("..", "..", "imgio", "testdata", "basic.img.gz")
	name, err := rawImage(t.TempDir(), src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	want, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Fatalf("raw file %d bytes differs from gzip's %d", len(got), len(want))
	}
}

package testutil

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestDemoImage: the shared demo is the 256 MiB volume, both superblocks in place, read-only.
// (imgio's TestExpandDemo checks it byte for byte against what zstd expands.)
func TestDemoImage(t *testing.T) {
	name := DemoImage(t)
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 256<<20 {
		t.Fatalf("%s: %d bytes, want 256 MiB", name, len(b))
	}
	// F2FS_SUPER_MAGIC at byte 1024 of blocks 0 and 1.
	for _, off := range []int{1024, 5120} {
		if !bytes.Equal(b[off:off+4], []byte{0x10, 0x20, 0xf5, 0xf2}) {
			t.Fatalf("magic at %d: % x, want 10 20 f5 f2", off, b[off:off+4])
		}
	}
	if st, _ := os.Stat(name); st.Mode().Perm() != 0o444 {
		t.Errorf("mode %v, want read-only", st.Mode())
	}
}

// TestRawImage: a gzip fixture's raw file is what gzip expands it to, and a changed byte is found
// and the file made again.
func TestRawImage(t *testing.T) {
	src := filepath.Join("..", "..", "imgio", "testdata", "basic.img.gz")
	want := Gunzip(t, src)
	dir := t.TempDir()
	name, err := rawImage(dir, src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Fatalf("raw file %d bytes differs from gzip's %d", len(got), len(want))
	}

	if err := os.Chmod(name, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt([]byte{0xff}, int64(len(want))/2); err != nil {
		t.Fatal(err)
	}
	w.Close()
	again, err := rawImage(dir, src)
	if err != nil {
		t.Fatal(err)
	}
	if got, err = os.ReadFile(again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("a changed raw file was reused")
	}
}

package imgedit

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestCopy: a copy holds the fixture's bytes, is as sparse as the shared raw file, and is its own
// file (an edit does not reach the shared one).
func TestCopy(t *testing.T) {
	src := filepath.Join("..", "..", "imgio", "testdata", "basic.img.gz")
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
	name := Copy(t, src)
	got, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("copy (%d bytes) differs from the fixture (%d)", len(got), len(want))
	}
	st, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if used := st.Sys().(*syscall.Stat_t).Blocks * 512; used >= st.Size()/2 {
		t.Errorf("copy uses %d bytes of disk for %d: not sparse", used, st.Size())
	}
	Edit(t, name, func(e Editor) {
		if _, err := e.F.WriteAt([]byte{0xff}, 0); err != nil {
			t.Fatal(err)
		}
	})
	again, err := os.ReadFile(Copy(t, src))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, want) {
		t.Fatal("an edit of one copy reached the next")
	}
}

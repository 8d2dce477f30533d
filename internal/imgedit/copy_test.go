package imgedit

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"
)

// TestCopy: a copy holds the fixture's bytes, is as sparse as the shared raw file, and is its own
// file (an edit does not reach the shared one).
func TestCopy(t *testing.T) {
	src := filepath.Join("..", "..", "imgio", "testdata", "basic.img.gz")
	want := testutil.Gunzip(t, src)
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
	if used := int64(st.Sys().(*syscall.Stat_t).Blocks) * 512; used >= st.Size()/2 {
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

package testutil

import (
	"bytes"
	"os"
	"testing"
)

func TestDemoImage(t *testing.T) {
	dir := t.TempDir()
	name, err := demoImage(dir)
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
	again, err := demoImage(dir)
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

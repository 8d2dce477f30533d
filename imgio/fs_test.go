package imgio

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/zrviz/zrviz/internal/testutil"
)

func TestFS(t *testing.T) {
	img, err := OpenFileContext(context.Background(), testutil.RawImage(t, "testdata/basic.img.gz"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	fsys := img.FS()
	if err := fstest.TestFS(fsys, "hello.txt", "data/big.bin", "a/b/c/leaf.txt", "many/file-150.txt"); err != nil {
		t.Fatal(err)
	}
	b, err := fs.ReadFile(fsys, "hello.txt")
	if err != nil || string(b) != "hello inline\n" {
		t.Errorf("hello.txt: %q, %v", b, err)
	}
	// big.bin: 1000 blocks of "big.bin_" + index stamps (scripts/mkfixtures.sh).
	b, err = fs.ReadFile(fsys, "data/big.bin")
	if err != nil || len(b) != 1000*4096 || !bytes.HasPrefix(b[999*4096:], []byte("big.bin_000003e7")) {
		t.Errorf("big.bin: %d bytes, %v", len(b), err)
	}
	// holes.bin: 4 stamped blocks, 60 zero blocks, 2 stamped blocks.
	b, err = fs.ReadFile(fsys, "data/holes.bin")
	if err != nil || len(b) != 66*4096 || b[4*4096] != 0 || !strings.HasPrefix(string(b[64*4096:]), "tail____00000000") {
		t.Errorf("holes.bin: %d bytes, %v", len(b), err)
	}
	target, err := fs.ReadLink(fsys, "link")
	if err != nil || target != "data/seq.bin" {
		t.Errorf("ReadLink: %q, %v", target, err)
	}
	if _, err := fsys.Open("nope"); !errorsIsNotExist(err) {
		t.Errorf("Open missing: %v", err)
	}
}

func errorsIsNotExist(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Path == "nope" && errors.Is(err, fs.ErrNotExist)
}

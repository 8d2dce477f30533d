package imgio

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"
)

func TestResolveDemoSymlink(t *testing.T) {
	img, err := OpenFileContext(context.Background(), testutil.DemoImage(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	f, err := img.Resolve("/docs/contiguous.link") // → ../cases/contiguous.bin
	if err != nil {
		t.Fatal(err)
	}
	if f.Path() != "/cases/contiguous.bin" || f.Inode().Ino != 28 {
		t.Errorf("Resolve(/docs/contiguous.link) = %s ino %d, want /cases/contiguous.bin ino 28", f.Path(), f.Inode().Ino)
	}
	l, err := img.Lookup("/docs/contiguous.link")
	if err != nil || l.Inode().Type != TypeSymlink {
		t.Fatalf("Lookup must not follow the link: %v %v", l, err)
	}
	if f, err := img.Resolve("/docs/../cases/./holes.bin"); err != nil || f.Inode().Ino != 32 {
		t.Errorf("Resolve with .. and .: %v, %v", f, err)
	}
	if _, err := img.Resolve("/cases/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Resolve(missing) = %v, want fs.ErrNotExist", err)
	}
}

// TestResolveSymlinks follows links made by sload.f2fs: relative, absolute, through a directory link,
// dangling, and a loop.
func TestResolveSymlinks(t *testing.T) {
	testutil.NeedTools(t, "mkfs.f2fs", "sload.f2fs")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "sub", "file"), []byte(strings.Repeat("x", 5000)), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"rel":      "sub/file",
		"abs":      "/sub/file",
		"dirlink":  "sub",
		"chain":    "rel",
		"dangling": "sub/absent",
		"loop1":    "loop2",
		"loop2":    "loop1",
		"long":     "./" + strings.Repeat("./", 1000) + "sub/file", // too long to be inline: in a data block
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(src, name)); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "links.img")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 64<<20); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"mkfs.f2fs", "-q", "-f", path}, {"sload.f2fs", "-f", src, path}} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", args[0], err, out)
		}
	}
	img, err := OpenFileContext(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	want, err := img.Lookup("/sub/file")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/rel", "/abs", "/dirlink/file", "/chain", "/long", "/dirlink/../rel"} {
		f, err := img.Resolve(p)
		if err != nil {
			t.Errorf("Resolve(%s): %v", p, err)
			continue
		}
		if f.Inode().Ino != want.Inode().Ino || f.Path() != "/sub/file" {
			t.Errorf("Resolve(%s) = %s ino %d, want /sub/file ino %d", p, f.Path(), f.Inode().Ino, want.Inode().Ino)
		}
	}
	if _, err := img.Resolve("/dangling"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Resolve(/dangling) = %v, want fs.ErrNotExist", err)
	}
	if _, err := img.Resolve("/loop1"); !errors.Is(err, ErrSymlinkLoop) {
		t.Errorf("Resolve(/loop1) = %v, want ErrSymlinkLoop", err)
	}
}

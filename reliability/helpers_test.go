package reliability

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"
)

// demoBytes is the demo image, mapped once per test binary from the raw copy the tests share
// (testutil.DemoImage; 256 MiB, shared read-only by every corrupt variant).
var demoBytes = sync.OnceValues(func() ([]byte, error) {
	name, err := testutil.DemoImageFile()
	if err != nil {
		return nil, err
	}
	return mapFile(name)
})

// mapFile maps the file name read-only (a write through the slice faults). The images the tests
// share are sparse raw files of 128 to 256 MiB whose corrupt variants read a few blocks each:
// reading them whole cost TestCorruptCorpus 1.5 s of system time and 1.9 GB of memory. It is never
// unmapped: the slices are shared by once-values and live as long as the test binary.
func mapFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() == 0 {
		return []byte{}, nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", name, err)
	}
	return b, nil
}

func mustDemo(tb testing.TB) []byte {
	tb.Helper()
	b, err := demoBytes()
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// gunzipFile reads a gzipped fixture.
func gunzipFile(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := gunzip(name)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// gunzip reads a gzipped fixture, through the raw copy the tests share (testutil.RawImage).
func gunzip(name string) ([]byte, error) {
	raw, err := testutil.RawImageFile(name)
	if err != nil {
		return nil, err
	}
	return mapFile(raw)
}

// mkfsImage makes a sizeMiB F2FS image in dir with mkfs.f2fs (extra args
// such as "-O", "extra_attr,...") and fills it from src with sload.f2fs
// when src is not "". It returns the image's path.
func mkfsImage(tb testing.TB, dir string, sizeMiB int64, src string, mkfsArgs ...string) string {
	tb.Helper()
	mkfs := testutil.NeedTool(tb, "mkfs.f2fs")
	img := filepath.Join(dir, "img.f2fs")
	f, err := os.Create(img)
	if err != nil {
		tb.Fatal(err)
	}
	if err := f.Truncate(sizeMiB << 20); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	args := append([]string{"-q", "-f"}, mkfsArgs...)
	if out, err := exec.Command(mkfs, append(args, img)...).CombinedOutput(); err != nil {
		tb.Fatalf("mkfs.f2fs: %v\n%s", err, out)
	}
	if src != "" {
		sload := testutil.NeedTool(tb, "sload.f2fs")
		if out, err := exec.Command(sload, "-f", src, img).CombinedOutput(); err != nil {
			tb.Fatalf("sload.f2fs: %v\n%s", err, out)
		}
	}
	return img
}

// populate writes a small tree for sload: many names (several dentry
// blocks), nested dirs, a file spanning an indirect node, a symlink and
// a name that would escape a host directory if used as a path.
func populate(tb testing.TB, dir string) {
	tb.Helper()
	must := func(err error) {
		if err != nil {
			tb.Helper()
			tb.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "many"), 0o755))
	for i := 0; i < 300; i++ {
		must(os.WriteFile(filepath.Join(dir, "many", "name-with-some-length-"+itoa(i)), []byte("x"), 0o644))
	}
	must(os.MkdirAll(filepath.Join(dir, "a", "b", "c"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "a", "b", "c", "small.txt"), []byte("hello inline\n"), 0o644))
	big := bytes.Repeat([]byte("0123456789abcdef"), (6<<20)/16) // 6 MiB: inode, i_nid[0..1], indirect
	must(os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o644))
	must(os.WriteFile(filepath.Join(dir, "mid.bin"), big[:3<<20], 0o644))
	must(os.Symlink("big.bin", filepath.Join(dir, "link")))
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
}

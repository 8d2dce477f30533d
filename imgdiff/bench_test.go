package imgdiff_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/zrviz/zrviz/imgdiff"
	"github.com/zrviz/zrviz/internal/imgedit"
	"github.com/zrviz/zrviz/internal/testutil"
)

// pair16G builds two 16 GiB sparse images of one filesystem with mkfs.f2fs and sload.f2fs: A holds
// 200 files of 200 KB and a 64 MiB file, B is A with 100 more files and a second 64 MiB file.
func pair16G(b *testing.B) (string, string) {
	b.Helper()
	testutil.NeedTools(b, "mkfs.f2fs", "sload.f2fs", "cp")
	dir := b.TempDir()
	src := filepath.Join(dir, "src")
	write := func(name string, n int) {
		buf := make([]byte, n)
		for i := range buf {
			buf[i] = byte(i*7 + len(name))
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(name, buf, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 200 {
		write(filepath.Join(src, fmt.Sprintf("d%02d/f%03d", i%20, i)), 200_000)
	}
	write(filepath.Join(src, "big1.bin"), 64<<20)
	a := filepath.Join(dir, "a.img")
	run := func(name string, args ...string) {
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", name, err, out)
		}
	}
	if err := os.WriteFile(a, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Truncate(a, 16<<30); err != nil {
		b.Fatal(err)
	}
	run("mkfs.f2fs", "-q", "-f", a)
	run("sload.f2fs", "-f", src, a)
	for i := range 100 {
		write(filepath.Join(src, fmt.Sprintf("new/f%03d", i)), 100_000)
	}
	write(filepath.Join(src, "big2.bin"), 64<<20)
	bb := filepath.Join(dir, "b.img")
	run("cp", "--sparse=always", a, bb)
	run("sload.f2fs", "-f", src, bb)
	return a, bb
}

// BenchmarkCompare16GiB diffs two 16 GiB images (8,176 segments, a NAT of 8,704 blocks a copy).
func BenchmarkCompare16GiB(b *testing.B) {
	a, bb := pair16G(b)
	ia, ib := imgedit.Open(b, a), imgedit.Open(b, bb)
	b.ResetTimer()
	for b.Loop() {
		d, err := imgdiff.Compare(context.Background(), ia, ib)
		if err != nil {
			b.Fatal(err)
		}
		if len(d.Segments) == 0 || len(d.Nodes) < 100 {
			b.Fatalf("%d segments, %d nodes changed", len(d.Segments), len(d.Nodes))
		}
	}
}

package imgio

import (
	"bytes"
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time. The shared machine is loaded, so wall ns/op swings;
// the benchmarks also report CPU time per op.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// benchImages returns the images to benchmark: the demo, and the big image built by
// scripts/bench-image.sh when ZRVIZ_BENCH_IMAGE names it. bigFile is the largest file of each.
func benchImages(b *testing.B) []struct {
	name, bigFile string
	img           *Image
} {
	b.Helper()
	out := []struct {
		name, bigFile string
		img           *Image
	}{{"demo", "/seed/bench64.bin", openDemo(b)}}
	if p := os.Getenv("ZRVIZ_BENCH_IMAGE"); p != "" {
		img, err := OpenFileContext(context.Background(), p, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { img.Close() })
		out = append(out, struct {
			name, bigFile string
			img           *Image
		}{"big", "/big.bin", img})
	}
	return out
}

// BenchmarkFiles lists every path (reading every inode for its type and size).
func BenchmarkFiles(b *testing.B) {
	for _, bi := range benchImages(b) {
		b.Run(bi.name, func(b *testing.B) {
			var n int
			c := cpuTime()
			for b.Loop() {
				ents, err := bi.img.Files()
				if err != nil {
					b.Fatal(err)
				}
				n = len(ents)
			}
			reportCPU(b, c)
			b.ReportMetric(float64(n), "paths")
		})
	}
}

// BenchmarkExtents maps the largest file of each image.
func BenchmarkExtents(b *testing.B) {
	for _, bi := range benchImages(b) {
		b.Run(bi.name, func(b *testing.B) {
			f, err := bi.img.Lookup(bi.bigFile)
			if err != nil {
				b.Fatal(err)
			}
			var n int
			c := cpuTime()
			for b.Loop() {
				ext, err := f.Extents()
				if err != nil {
					b.Fatal(err)
				}
				n = len(ext)
			}
			reportCPU(b, c)
			b.ReportMetric(float64(n), "extents")
			b.ReportMetric(float64(f.Inode().Size>>20), "MiB")
		})
	}
}

// BenchmarkOpen measures NewImage (superblock, checkpoint, journals) on the demo.
func BenchmarkOpen(b *testing.B) {
	img := openDemo(b)
	c := cpuTime()
	for b.Loop() {
		if _, err := NewImage(img.r, img.size); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, c)
}

// BenchmarkOpenDemo opens the embedded demo (an Android sparse image inside zstd) into a temporary
// file, against Load of demo/demo.img.zst, the same volume as a raw image inside zstd.
func BenchmarkOpenDemo(b *testing.B) {
	raw, err := os.ReadFile("demo/demo.img.zst")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	for _, c := range []struct {
		name string
		open func() (*Image, error)
	}{
		{"embedded", func() (*Image, error) { return OpenDemo(&Options{TempDir: dir}) }},
		{"raw-zst", func() (*Image, error) { return Load(bytes.NewReader(raw), "demo.img", &Options{TempDir: dir}) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				img, err := c.open()
				if err != nil {
					b.Fatal(err)
				}
				img.Close()
			}
			reportCPU(b, cpu)
		})
	}
}

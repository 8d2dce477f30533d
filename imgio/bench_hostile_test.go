package imgio

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// BenchmarkHostile measures the hostile inputs of issue 13 through the calls the CLI and the web make
// (Files, Resolve, Expand); docs/reliability.md has the figures before and after the listings were
// bounded and expansion checked the superblock. entries and paths-MB say what a listing produced,
// reads how many blocks a lookup read, output-MB how much output an expansion produced (holes
// included; the benchmark's writer keeps nothing); B/op is what the call allocated, cpu-ns/op its CPU time
// (steadier than wall time on a loaded machine).
//
// It uses only calls that existed before the change, so the same file measures the old code.
func BenchmarkHostile(b *testing.B) {
	b.Run("fanout-files", func(b *testing.B) {
		s, _, _ := fanOutImage(b)
		h := openHostile(b, s)
		benchFiles(b, h.img)
	})
	b.Run("chain255-files", func(b *testing.B) {
		s, _ := chainImage(b, 255)
		h := openHostile(b, s)
		benchFiles(b, h.img)
	})
	b.Run("selfloop-resolve-2000", func(b *testing.B) {
		var hello uint32
		s := emptydirImage(b, func(good *Image) []tdirent {
			self := mustLookup(b, good, "/emptydir").Ino
			hello = mustLookup(b, good, "/hello.txt").Ino
			return []tdirent{{"s", self, 2}, {"t", hello, 1}}
		})
		h := openHostile(b, s)
		long := "/emptydir" + strings.Repeat("/s", 2000) + "/t"
		b.ReportAllocs()
		c := cpuTime()
		for b.Loop() {
			h.cr.reset()
			f, err := h.img.Resolve(long)
			if err != nil || f.Inode().Ino != hello {
				b.Fatalf("Resolve: %v %v", f, err)
			}
		}
		reportCPU(b, c)
		b.ReportMetric(float64(h.cr.reads), "reads")
	})
	b.Run("sparse44-expand", func(b *testing.B) {
		// The upload: one non-zero fill chunk declared over 64 GiB.
		in := xSimg{major: 1, blkSz: 4096, totalBlks: 16 << 20, chunks: []xChunk{xFill(16<<20, 0xdeadbeef)}}.bytes()
		benchExpand(b, in)
	})
	b.Run("zstd-zero-bomb-expand", func(b *testing.B) {
		// The 2 MB zstd bomb: frames of 128 MiB of zeros, 4 KB each, repeated.
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
		if err != nil {
			b.Fatal(err)
		}
		frame := enc.EncodeAll(make([]byte, 128<<20), nil)
		benchExpand(b, bytes.Repeat(frame, (2<<20)/len(frame)))
	})
}

func benchFiles(b *testing.B, img *Image) {
	b.ReportAllocs()
	var ents []Entry
	c := cpuTime()
	for b.Loop() {
		var err error
		if ents, err = img.Files(); len(ents) == 0 {
			b.Fatalf("Files: %v", err)
		}
	}
	reportCPU(b, c)
	var n int
	for _, e := range ents {
		n += len(e.Path)
	}
	b.ReportMetric(float64(len(ents)), "entries")
	b.ReportMetric(float64(n)/1e6, "paths-MB")
}

// benchWriterAt keeps nothing and counts how far the output went.
type benchWriterAt struct{ end int64 }

func (w *benchWriterAt) WriteAt(p []byte, off int64) (int, error) {
	w.end = max(w.end, off+int64(len(p)))
	return len(p), nil
}

func benchExpand(b *testing.B, in []byte) {
	b.ReportAllocs()
	var n int64
	c := cpuTime()
	for b.Loop() {
		// Before the superblock was checked as the output streamed in, Expand accepted these (NewImage
		// refused them afterwards); now Expand refuses them.
		_, n, _ = ExpandContext(context.Background(), &benchWriterAt{}, bytes.NewReader(in), nil)
	}
	reportCPU(b, c)
	b.ReportMetric(float64(n)/1e6, "output-MB")
	b.ReportMetric(float64(len(in)), "input-bytes")
}

//go:build !js

package survey

import (
	"context"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/testutil"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSurvey surveys the demo and, when ZRVIZ_BENCH_IMAGE names it, the 16 GiB image of
// scripts/bench-image.sh (10,001 files: 9,000 inline, 1,000 of 1–5 blocks, one of 1 GiB). The image
// is opened once and surveyed once before the timer, so its caches (NAT, SIT, node blocks) are warm
// and counted apart: peak-heap-MB is the heap the survey grew by at its highest (sampled every 256
// files), retained-MB what its answer holds after a collection, cpu-ns/op the process's CPU time
// (the machine is shared: wall ns/op swings).
func BenchmarkSurvey(b *testing.B) {
	images := map[string]string{"demo": testutil.DemoImage(b)}
	if p := os.Getenv("ZRVIZ_BENCH_IMAGE"); p != "" {
		images["big"] = p
	}
	for name, p := range images {
		b.Run(name, func(b *testing.B) {
			img, err := imgio.OpenFileContext(context.Background(), p, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer img.Close()
			ctx := context.Background()
			if _, err := Run(ctx, img, Options{}); err != nil {
				b.Fatal(err)
			}
			var ms runtime.MemStats
			var peak, retained uint64
			var files int
			cpu := cpuTime()
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&ms)
				base := ms.HeapAlloc
				b.StartTimer()
				s, err := Run(ctx, img, Options{Progress: func(done, total int) {
					if done%256 == 0 || done == total {
						runtime.ReadMemStats(&ms)
						peak = max(peak, ms.HeapAlloc-min(ms.HeapAlloc, base))
					}
				}})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&ms)
				retained = max(retained, ms.HeapAlloc-min(ms.HeapAlloc, base))
				files = len(s.Files)
				runtime.KeepAlive(s)
				b.StartTimer()
			}
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(retained)/(1<<20), "retained-MB")
			b.ReportMetric(float64(files), "files")
		})
	}
}

package source_test

import (
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/source"
)

// BenchmarkDemoBench64 runs kernel case 1 (the demo's 64 MiB file, 17
// chunks, 3 physical runs) reading the real image, with every event
// handed to a callback.
func BenchmarkDemoBench64(b *testing.B) {
	img := openDemo(b)
	in, err := source.Input(img, "/seed/bench64.bin")
	if err != nil {
		b.Fatal(err)
	}
	req := core.Request{Length: 64 << 20}
	for _, mode := range core.Modes {
		b.Run("walk/"+mode.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				r, err := core.Walk(in, req, mode, func(*core.Event) bool { n++; return true })
				if err != nil || r.Stats.DnodeChunks != 17 {
					b.Fatal(err)
				}
			}
		})
		b.Run("simulate/"+mode.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := core.Simulate(in, req, mode); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

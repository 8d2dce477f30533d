package core

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// genFile is a generator DnodeSource: a contiguous mapping of n blocks
// starting at base. It reuses one buffer (the engine copies).
type genFile struct {
	api  int
	n    uint64
	base uint32
	buf  []uint32
}

func (g *genFile) DnodeSlots(index uint64) (uint64, []uint32, int, error) {
	p := locate(index, dnodeGeom{api: uint64(g.api), apb: addrsPerBlock})
	if cap(g.buf) < p.cap {
		g.buf = make([]uint32, 1018)
	}
	s := g.buf[:p.cap]
	for i := range s {
		if k := p.start + uint64(i); k < g.n {
			s[i] = g.base + uint32(k)
		} else {
			s[i] = NullAddr
		}
	}
	missing := 0
	if p.start >= g.n {
		missing = p.depth
	}
	return p.start, s, missing, nil
}

// fullSIT says every segment is full.
type fullSIT struct{}

func (fullSIT) SegmentValidMap(uint32) (uint32, [64]byte, error) {
	var m [64]byte
	for i := range m {
		m[i] = 0xFF
	}
	return 512, m, nil
}

func contiguousInput(n uint64) Input {
	segs := uint32(n/512 + 64)
	v := Volume{BlockSize: 4096, BlocksPerSeg: 512, Segment0Blkaddr: 512, MainBlkaddr: 4096,
		MaxBlkaddr: 512 + (segs+7)*512, MainSegments: segs, SegsPerSec: 1,
		UserBlockCount: uint64(segs) * 512, ValidBlockCount: n + 100, ValidNodeCount: 100,
		CurrentSegments: []uint32{segs - 1, segs - 2, segs - 3, segs - 4, segs - 5, segs - 6}}
	return Input{Path: "/gen", Volume: v,
		Inode: Inode{Ino: 10, Type: "file", Size: int64(n) * 4096, Blocks: n + 1, AddrsPerInode: 873, SlotsEnd: n},
		Slots: &genFile{api: 873, n: n, base: 6144}, SIT: fullSIT{}}
}

func reportPerSlot(b *testing.B, slots uint64, before *runtime.MemStats, cpu0 time.Duration) {
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	total := float64(slots) * float64(b.N)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/slot")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/total, "allocs/slot")
}

// BenchmarkEvents64MiB runs a contiguous 64 MiB file (16,384 slots, 17
// chunks) with the full event stream handed to a callback.
func BenchmarkEvents64MiB(b *testing.B) {
	const n = 16384
	in := contiguousInput(n)
	for _, mode := range Modes {
		b.Run(mode.String(), func(b *testing.B) {
			var events int
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				events = 0
				res, err := Walk(in, Request{Length: n * 4096}, mode, func(*Event) bool { events++; return true })
				if err != nil || res.Stats.DnodeChunks != 17 {
					b.Fatalf("%v, %d chunks", err, res.Stats.DnodeChunks)
				}
			}
			b.ReportMetric(float64(events), "events/op")
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkRunNext64MiB is the same through the player's Run.Next.
func BenchmarkRunNext64MiB(b *testing.B) {
	const n = 16384
	in := contiguousInput(n)
	for _, mode := range Modes {
		b.Run(mode.String(), func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				run, err := NewRun(in, Request{Length: n * 4096}, mode)
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, ok := run.Next(); !ok {
						break
					}
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkSimulate64GiB runs a hand-built contiguous 64 GiB mapping
// (16.7M slots, about 16,500 chunks) without keeping events.
func BenchmarkSimulate64GiB(b *testing.B) {
	const n = 64 << 30 >> 12
	in := contiguousInput(n)
	for _, mode := range Modes {
		b.Run(mode.String(), func(b *testing.B) {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			cpu0 := cpuTime()
			b.ReportAllocs()
			for b.Loop() {
				res, err := Simulate(in, Request{Length: n * 4096}, mode)
				if err != nil || res.Stats.BlocksInvalidated != n {
					b.Fatalf("%v %+v", err, res.Stats)
				}
				if b.N == 1 {
					b.ReportMetric(float64(res.Stats.DnodeChunks), "chunks")
				}
			}
			reportPerSlot(b, n, &ms, cpu0)
		})
	}
}

// BenchmarkSeek64MiB seeks a 64 MiB per-block run to random steps.
func BenchmarkSeek64MiB(b *testing.B) {
	const n = 16384
	run, err := NewRun(contiguousInput(n), Request{Length: n * 4096}, PerBlock)
	if err != nil {
		b.Fatal(err)
	}
	if err := run.SeekTo(1 << 62); err != nil {
		b.Fatal(err)
	}
	total := run.Step()
	r := rand.New(rand.NewPCG(1, 1))
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		if err := run.SeekTo(r.Int64N(total)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkSnapshot64MiB takes a snapshot mid-way through a 64 MiB run.
func BenchmarkSnapshot64MiB(b *testing.B) {
	const n = 16384
	run, _ := NewRun(contiguousInput(n), Request{Length: n * 4096}, Batched)
	run.SeekTo(10000)
	b.ReportAllocs()
	for b.Loop() {
		_ = run.Snapshot()
	}
}

// BenchmarkSeekEnd64GiB: a fresh Run over the 64 GiB mapping seeks to its
// last step (the scrubber's worst case), then back to the middle.
func BenchmarkSeekEnd64GiB(b *testing.B) {
	const n = 64 << 30 >> 12
	in := contiguousInput(n)
	for _, mode := range Modes {
		b.Run(mode.String(), func(b *testing.B) {
			cpu0 := cpuTime()
			b.ReportAllocs()
			for b.Loop() {
				run, err := NewRun(in, Request{Length: n * 4096}, mode)
				if err != nil {
					b.Fatal(err)
				}
				if err := run.SeekTo(1 << 62); err != nil || !run.Done() {
					b.Fatal(err)
				}
				if err := run.SeekTo(run.Step() / 2); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

package core

import (
	"math/rand/v2"
	"testing"

	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/internal/f2fs"
)

// nearlyFull60GiB is a 60 GiB volume (30,720 main segments) nearly full: every segment but the
// logs' and 35 free sections (more than the 20 reserved, so f2fs_balance_fs does not collect; at
// most 2 × 20 + the dirty metadata, so f2fs_need_SSR is true) holds 505–511 valid blocks of warm
// data, and an empty file, mounted with its segment manager. Every segment the warm data log
// fills is replaced by get_ssr_segment's victim: a 200 MiB write-back takes some 12,800 of them.
func nearlyFull60GiB(tb testing.TB) (Input, *Seq) {
	tb.Helper()
	const main = 30720
	r := rand.New(rand.NewPCG(60, 37))
	st := newState(nil, 0)
	v := &st.vol
	v.SegsPerSec, v.MainSegments = 1, main
	v.MaxBlkaddr = v.MainBlkaddr + main*blocksPerSeg
	current := []uint32{0, 1, 2, 3, 4, 5}
	v.CurrentSegments = current
	v.HotDataSegno, v.WarmDataSegno, v.ColdDataSegno = 0, 1, 2
	v.HotDataBlkoff, v.WarmDataBlkoff, v.ColdDataBlkoff = 0, 0, 0
	gv := gc.Volume{SegsPerSec: 1, Segments: make([]gc.Segment, main), ElapsedTime: 1000, ReservedSegments: 20}
	var valid uint64
	for no := uint32(6); no < main-35; no++ {
		var bm [64]byte
		n := 505 + r.Uint32N(7)
		for k := uint32(0); k < n; k++ {
			setBit(&bm, k)
		}
		st.sit.maps[no] = &bm
		gv.Segments[no] = gc.Segment{Valid: n, Map: bm, Type: gc.WarmData, Mtime: 500}
		valid += uint64(n)
	}
	for log, no := range current {
		gv.Segments[no].Type = log
		gv.Current[log] = gc.CurSeg{Segno: no}
	}
	v.UserBlockCount, v.ValidBlockCount = main*blocksPerSeg, valid
	st.ino.Size, st.ino.Blocks = 0, 1
	in := st.input()
	q := NewSeq(PerBlock)
	if err := q.MountGC(*v, st.sit, gv, &memOwners{in: in, index: map[uint32]uint64{}}); err != nil {
		tb.Fatal(err)
	}
	return in, q
}

// BenchmarkSSRWriteFsync60GiB measures a 200 MiB write and its fsync on nearly60GiB's nearly full
// volume: the write-back allocates on the segment manager, each full warm log replaced through
// need_new_seg → get_ssr_segment (f2fs_get_victim in SSR mode). Issue 37: 18 CPU-s when each
// search scanned every segment; docs/performance.md has the figure.
func BenchmarkSSRWriteFsync60GiB(b *testing.B) {
	const size = 200 << 20
	for b.Loop() {
		b.StopTimer()
		in, q := nearlyFull60GiB(b)
		b.StartTimer()
		w, err := q.Write(in, 0, size)
		if err != nil || w.Errno != "" {
			b.Fatalf("write: %v %+v", err, w.Errno)
		}
		res, err := q.Fsync(in)
		if err != nil || res.Errno != "" {
			b.Fatalf("fsync: %v %v", err, res)
		}
		if len(res.Pages) != size/4096 {
			b.Fatalf("%d pages written back, want %d", len(res.Pages), size/4096)
		}
		b.StopTimer()
		if n := len(q.SSRVictims()); n < 1000 {
			b.Fatalf("%d SSR victims, want thousands", n)
		}
		b.ReportMetric(float64(len(q.SSRVictims())), "ssr-victims/op")
		_ = f2fs.BlocksPerSeg
		b.StartTimer()
	}
}

package gc

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// bitFree is a FreeMap over plain sets: used segments, and sections in use (free_secmap may keep a
// section's bit when its segments are all free, so it is given on its own).
type bitFree struct {
	usedSeg, usedSec map[uint32]bool
}

func (f bitFree) SegFree(segno uint32) bool { return !f.usedSeg[segno] }
func (f bitFree) SecFree(secno uint32) bool { return !f.usedSec[secno] }

// freeOf marks the given segments in use, and their sections, as __set_inuse does.
func freeOf(per uint32, used ...uint32) bitFree {
	f := bitFree{usedSeg: map[uint32]bool{}, usedSec: map[uint32]bool{}}
	for _, no := range used {
		f.usedSeg[no] = true
		f.usedSec[no/per] = true
	}
	return f
}

// TestNewSegmentRules: each rule of new_curseg's choice, with the line of Linux 6.12.117's
// fs/f2fs/segment.c (or super.c) that makes it.
func TestNewSegmentRules(t *testing.T) {
	const big = 10000 // more than SMALL_VOLUME_SEGMENTS: alloc_mode=default
	cases := []struct {
		name    string
		g       Geometry
		log     int
		cur     uint32
		current []uint32
		free    bitFree
		want    uint32
	}{
		// super.c:2168–2170 alloc_mode=reuse; segment.c:2872 hint 0; 2735 first free section from it.
		{"small volume, warm data: reuse from 0", Geometry{MainSegs: 120, SegsPerSec: 1}, WarmData, 50,
			[]uint32{1, 50, 60, 100, 101, 102}, freeOf(1, 0, 1, 2, 50, 60, 100, 101, 102), 3},
		// segment.c:2875: a large volume's warm log hints its own segment; 2735 the next free section.
		{"large volume, warm data: after its segment", Geometry{MainSegs: big, SegsPerSec: 1}, WarmData, 50,
			[]uint32{1, 50, 60, 100, 101, 102}, freeOf(1, 1, 50, 51, 60, 100, 101, 102), 52},
		// segment.c:2865: hot data hints 0 on any volume.
		{"large volume, hot data: from 0", Geometry{MainSegs: big, SegsPerSec: 1}, HotData, 50,
			[]uint32{50, 51, 60, 100, 101, 102}, freeOf(1, 0, 50, 51, 60, 100, 101, 102), 1},
		// segment.c:2865: so do the node logs.
		{"large volume, cold node: from 0", Geometry{MainSegs: big, SegsPerSec: 1}, ColdNode, 102,
			[]uint32{1, 50, 60, 100, 101, 102}, freeOf(1, 1, 50, 60, 100, 101, 102), 0},
		// segment.c:2754–2756: past the last free section, wrap to the first.
		{"large volume, cold data: wraps", Geometry{MainSegs: big, SegsPerSec: 1}, ColdData, big - 2,
			[]uint32{1, 50, big - 2, 100, 101, 102}, freeOf(1, append([]uint32{0, 1, 50, 100, 101, 102}, big-2, big-1)...), 2},
		// segment.c:2844–2853: a large section hints the current segment even on a small volume;
		// 2712–2716: the next free segment of its section.
		{"large section: inside its section", Geometry{MainSegs: 120, SegsPerSec: 4}, WarmData, 41,
			[]uint32{4, 41, 60, 100, 104, 108}, freeOf(4, 4, 41, 42, 60, 100, 104, 108), 43},
		// 2735: else the next section none of whose segments is in use, not a free segment of a
		// section in use.
		{"large section: next free section", Geometry{MainSegs: 120, SegsPerSec: 4}, WarmData, 41,
			[]uint32{4, 41, 60, 100, 104, 108}, freeOf(4, 4, 41, 42, 43, 44, 60, 100, 104, 108), 48},
		// 2712: the hint is its section's last segment: straight to the sections.
		{"large section: last segment of its section", Geometry{MainSegs: 120, SegsPerSec: 4}, WarmData, 43,
			[]uint32{4, 43, 60, 100, 104, 108}, freeOf(4, 4, 43, 60, 100, 104, 108), 44},
		// 2769–2785: with 2 sections a zone, a section in a zone another log is in is given up once,
		// for the first free section from the next zone.
		{"zones: skip a zone in use", Geometry{MainSegs: 40, SegsPerSec: 1, SecsPerZone: 2}, WarmData, 10,
			[]uint32{0, 10, 3, 30, 32, 34}, freeOf(1, 0, 1, 3, 10, 30, 32, 34), 4},
		// 2771: a section in the hint's own zone is taken.
		{"zones: the hint's zone", Geometry{MainSegs: 40, SegsPerSec: 1, SecsPerZone: 4}, WarmData, 0,
			[]uint32{0, 5, 21, 30, 32, 34}, freeOf(1, 0, 5, 21, 30, 32, 34), 1},
		// 2767: after one retry the next free section is taken, in use or not.
		{"zones: give up after one retry", Geometry{MainSegs: 16, SegsPerSec: 1, SecsPerZone: 2}, WarmData, 8,
			[]uint32{0, 8, 10, 12, 14, 5}, freeOf(1, 0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 12, 14), 11},
	}
	for _, c := range cases {
		got, err := NewSegment(c.g, c.log, c.cur, c.current, c.free)
		if err != nil || got != c.want {
			t.Errorf("%s: segment %d (%v), want %d", c.name, got, err, c.want)
		}
	}
	// segment.c:2757–2758: no free section is ENOSPC, even with a free segment in a section in use.
	f := freeOf(4, 0, 4, 8, 12)
	if got, err := NewSegment(Geometry{MainSegs: 16, SegsPerSec: 4}, WarmData, 15, []uint32{0, 15}, f); !errors.Is(err, ErrNoSpace) {
		t.Errorf("no free section: segment %d, %v", got, err)
	}
	if _, err := NewSegment(Geometry{MainSegs: 16, SegsPerSec: 4}, WarmData, 16, nil, f); !errors.Is(err, ErrVolume) {
		t.Errorf("a log past the main area: %v", err)
	}
}

// TestNewSegmentProperties: on random geometries and free maps (one segment a zone), the segment
// NewSegment opens is characterised by get_new_segment's search, checked from the outside rather
// than computed again: it is free; it is in the hint's section only when it is the first free
// segment after the hint there; otherwise no such segment exists, it starts a free section, and
// every section between the hint's and its own (in the search's wrapping order) is in use. ENOSPC
// comes exactly when no segment qualifies.
func TestNewSegmentProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 29))
	for it := range 3000 {
		per := []uint32{1, 2, 4, 8}[r.IntN(4)]
		secs := 1 + uint32(r.IntN(40))
		g := Geometry{MainSegs: secs * per, SegsPerSec: per}
		if r.IntN(4) == 0 { // past SMALL_VOLUME_SEGMENTS: alloc_mode=default
			secs = smallVolumeSegments/per + 1 + uint32(r.IntN(4))
			g.MainSegs = secs * per
		}
		fill := r.Float64()
		f := bitFree{usedSeg: map[uint32]bool{}, usedSec: map[uint32]bool{}}
		for no := range g.MainSegs {
			if r.Float64() < fill {
				f.usedSeg[no] = true
				f.usedSec[no/per] = true
			}
		}
		// A section whose segments are all free but whose bit stays set (__set_test_and_free
		// skipped it while a log was there).
		if r.IntN(3) == 0 {
			f.usedSec[uint32(r.IntN(int(secs)))] = true
		}
		log := r.IntN(NumLogs)
		cur := uint32(r.IntN(int(g.MainSegs)))
		f.usedSeg[cur], f.usedSec[cur/per] = true, true
		hint := NextSegHint(g, log, cur)
		switch {
		case per > 1 && hint != cur:
			t.Fatalf("it %d: large section hint %d, want the current segment %d (segment.c:2853)", it, hint, cur)
		case per == 1 && (log == HotData || log >= HotNode || g.MainSegs <= smallVolumeSegments) && hint != 0:
			t.Fatalf("it %d: hint %d, want 0 (segment.c:2865, 2872)", it, hint)
		case per == 1 && log != HotData && log < HotNode && g.MainSegs > smallVolumeSegments && hint != cur:
			t.Fatalf("it %d: hint %d, want the current segment (segment.c:2875)", it, hint)
		}
		got, err := NewSegment(g, log, cur, []uint32{cur}, f)
		hsec := hint / per
		inSec := uint32(g.MainSegs) // the first free segment after the hint in its section
		if (hint+1)%per != 0 {
			for no := hint + 1; no < (hsec+1)*per; no++ {
				if f.SegFree(no) {
					inSec = no
					break
				}
			}
		}
		anyFreeSec := false
		for s := range secs {
			anyFreeSec = anyFreeSec || f.SecFree(s)
		}
		if err != nil {
			if !errors.Is(err, ErrNoSpace) || inSec < g.MainSegs || anyFreeSec {
				t.Fatalf("it %d: %v with a segment to open (in section %d, free sections %v)", it, err, inSec, anyFreeSec)
			}
			continue
		}
		if !f.SegFree(got) {
			t.Fatalf("it %d: opened segment %d, which is in use", it, got)
		}
		if inSec < g.MainSegs {
			if got != inSec {
				t.Fatalf("it %d: opened %d, want %d, the first free segment after the hint %d in its section", it, got, inSec, hint)
			}
			continue
		}
		if got%per != 0 || !f.SecFree(got/per) {
			t.Fatalf("it %d: opened %d, not the start of a free section", it, got)
		}
		for s := hsec; s != got/per; s = (s + 1) % secs {
			if f.SecFree(s) {
				t.Fatalf("it %d: opened section %d, but section %d comes first from the hint's %d", it, got/per, s, hsec)
			}
		}
	}
}

// TestStateUsesNewSegment: the segment manager's own logs open the segment NewSegment picks on its
// free maps: foreground gc fills the cold data log, which moves on (alloc_mode=reuse: from 0).
func TestStateUsesNewSegment(t *testing.T) {
	valid := make([]uint32, 24)
	for i := range valid {
		valid[i] = BlocksPerSeg
	}
	valid[5], valid[9], valid[11] = 0, 0, 0 // free
	valid[7] = 10                           // the victim: 10 blocks
	v := vol(t, 1, valid, nil)
	cold := v.Current[ColdData].Segno
	v.Current[ColdData].Blkoff = BlocksPerSeg - 4 // 4 blocks left in the cold log
	v.Segments[cold].Valid = BlocksPerSeg - 4
	v.Segments[cold].Map[BlocksPerSeg/8-1] = 0xF0
	s := mount(t, v)
	var cur []uint32
	for _, c := range s.cur {
		cur = append(cur, c.Segno)
	}
	want, err := NewSegment(s.Geometry(), ColdData, cold, cur, s)
	if err != nil || want != 5 {
		t.Fatalf("the reference: %d, %v (want 5, the first free segment from 0)", want, err)
	}
	p := s.GC(Foreground)
	if p.Victim == nil || *p.Victim != 7 || p.Moved != 10 {
		t.Fatalf("gc: %+v", p)
	}
	if got := s.Current()[ColdData]; got.Segno != want || got.Blkoff != 6 {
		t.Errorf("cold data log at %+v, want segment %d block 6", got, want)
	}
	if s.SegFree(want) || s.SecFree(want) {
		t.Errorf("segment %d is still free after the log took it", want)
	}
}

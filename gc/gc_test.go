package gc

import (
	"encoding/json"
	"testing"
)

// vol builds a volume of n segments with segsPerSec per section: valid[i] blocks (the first ones
// of the segment) of warm data, mtime[i], the six logs in the last segments.
func vol(t *testing.T, segsPerSec uint32, valid []uint32, mtime []uint64) Volume {
	t.Helper()
	n := uint32(len(valid))
	v := Volume{SegsPerSec: segsPerSec, Segments: make([]Segment, n), ElapsedTime: 100}
	for i := range n {
		s := Segment{Valid: valid[i], Type: WarmData}
		for k := range valid[i] {
			setMap(&s.Map, k)
		}
		if mtime != nil {
			s.Mtime = mtime[i]
		}
		v.Segments[i] = s
	}
	// Six logs, one per section from the end (each log's own section, as the kernel keeps them).
	for t := range NumLogs {
		seg := (n/segsPerSec - 1 - uint32(t)) * segsPerSec
		v.Current[t] = CurSeg{Segno: seg}
		v.Segments[seg].Type = t
	}
	return v
}

func mount(t *testing.T, v Volume) *State {
	t.Helper()
	s, err := Mount(v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func victimOf(t *testing.T, p Pick) int {
	t.Helper()
	if p.Victim == nil {
		return -1
	}
	return int(*p.Victim)
}

func TestNothingToCollect(t *testing.T) {
	s := mount(t, vol(t, 1, make([]uint32, 16), nil))
	for _, k := range []Kind{Foreground, Background} {
		p := s.GC(k)
		if p.Victim != nil || p.Errno == nil || *p.Errno != ENODATA {
			t.Errorf("%s on an empty volume: %+v, want ENODATA", k, p)
		}
	}
	// Full and empty segments are not dirty either.
	s = mount(t, vol(t, 1, []uint32{512, 0, 512, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, nil))
	if p := s.GC(Foreground); p.Errno == nil || *p.Errno != ENODATA {
		t.Errorf("full segments only: %+v, want ENODATA", p)
	}
}

// TestGreedyRoundRobin: greedy takes the fewest valid blocks, the first found on a tie, and the
// search starts at last_victim, which moves as gc.c:933–942 moves it.
func TestGreedyRoundRobin(t *testing.T) {
	valid := make([]uint32, 20)
	copy(valid, []uint32{0, 100, 50, 50, 300, 0, 50})
	s := mount(t, vol(t, 1, valid, nil))
	p := s.GC(Foreground)
	if victimOf(t, p) != 2 || p.Cost != 50 || p.Errno != nil || p.Moved != 50 {
		t.Fatalf("first pick %+v, want segment 2 (first of the 50s), cost 50, 50 moved", p)
	}
	// Five dirty segments were searched from 0; the last was 6, so last_victim = 7.
	if s.lastVictim[gcGreedy] != 7 {
		t.Errorf("last_victim %d, want 7", s.lastVictim[gcGreedy])
	}
	if s.Class(2) != "prefree" {
		t.Errorf("victim is %s, want prefree", s.Class(2))
	}
	// From 7 nothing is dirty but the cold log's segment (current: skipped, not dirty), so the
	// search wraps to 0 and finds 3 first.
	if p := s.GC(Foreground); victimOf(t, p) != 3 {
		t.Errorf("second pick %d, want 3", victimOf(t, p))
	}
	freed, _ := s.Checkpoint()
	if len(freed) != 2 || freed[0] != 2 || freed[1] != 3 || s.Class(2) != "free" {
		t.Errorf("checkpoint freed %v, want [2 3]", freed)
	}
}

// TestBackgroundThenForeground: background calls mark sections and skip marked ones; a
// foreground call takes the lowest marked section first, at get_max_cost's cost.
func TestBackgroundThenForeground(t *testing.T) {
	valid := make([]uint32, 20)
	copy(valid, []uint32{0, 400, 100, 300})
	mtime := make([]uint64, 20)
	copy(mtime, []uint64{0, 10, 90, 20})
	s := mount(t, vol(t, 1, valid, mtime))
	var got []int
	for range 4 {
		got = append(got, victimOf(t, s.GC(Background)))
	}
	// min_mtime 0 (free segments), max_mtime = elapsed 100: segment 3 (u 58, age 80) beats
	// segment 1 (u 78, age 90) and segment 2 (u 19, age 10).
	if want := []int{3, 1, 2, -1}; !equal(got, want) {
		t.Errorf("background picks %v, want %v", got, want)
	}
	if len(s.Pending()) != 800 {
		t.Errorf("%d blocks marked, want 800", len(s.Pending()))
	}
	p := s.GC(Foreground)
	if victimOf(t, p) != 1 || !p.FromBackground || p.Cost != 1024 {
		t.Errorf("foreground after background: %+v, want marked segment 1 at cost 1024", p)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestLargeSection: the unit is the section; a section holding a current segment is skipped;
// the victim is the section's first segment and a foreground call empties all of it.
func TestLargeSection(t *testing.T) {
	valid := make([]uint32, 40) // 10 sections of 4
	copy(valid, []uint32{512, 512, 512, 10, 0, 100, 0, 0, 0, 0, 0, 0})
	v := vol(t, 4, valid, nil)
	s := mount(t, v)
	p := s.GC(Foreground)
	if victimOf(t, p) != 4 || p.Cost != 100 || p.Moved != 100 || p.Errno != nil {
		t.Fatalf("pick %+v, want section 1 (segment 4) at cost 100", p)
	}
	p = s.GC(Foreground)
	if victimOf(t, p) != 0 || p.Cost != 1546 || p.Moved != 1546 {
		t.Fatalf("pick %+v, want section 0 at cost 1546", p)
	}
	// The moves filled the cold data log's segment and went on to the next free one.
	if s.Current()[ColdData].Segno == v.Current[ColdData].Segno {
		t.Errorf("cold data log still in segment %d after 1646 blocks", v.Current[ColdData].Segno)
	}
}

func TestPickJSON(t *testing.T) {
	s := mount(t, vol(t, 1, make([]uint32, 16), nil))
	b, err := json.Marshal(s.Apply(Op{Verb: "gc", Sync: 1}))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"op", "type", "policy", "victim", "cost", "errno", "moved", "candidates"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON %s has no %q", b, k)
		}
	}
	if m["victim"] != nil || m["errno"] != "ENODATA" || m["type"] != "FG" || m["policy"] != "greedy" {
		t.Errorf("JSON %s", b)
	}
}

// A State is the core engine's SIT source (core.SITSource's method, checked without importing core).
var _ interface {
	SegmentValidMap(segno uint32) (uint32, [64]byte, error)
} = (*State)(nil)

package gc

import (
	"strings"
	"testing"
)

// TestMaySSR: need_new_seg's three ways to a new segment, each on its own, and SSR possible only
// when none holds: free sections at or below 2 × reserved + the dirty metadata, and a partly
// valid segment of the log's kind.
func TestMaySSR(t *testing.T) {
	// 16 segments, one a section: the logs at 10–15 (vol's), 6 full, 7 partly valid, the rest free.
	valid := make([]uint32, 16)
	valid[6], valid[7] = BlocksPerSeg, 100
	v := vol(t, 1, valid, nil)
	for _, tc := range []struct {
		name     string
		rsv      uint32
		metaSecs uint32
		dirty    bool // segment 7 partly valid (else full)
		want     bool
	}{
		{"plenty of free sections", 2, 0, true, false},
		{"at f2fs_need_SSR's bound, a victim", 4, 0, true, true},
		{"dirty metadata raises the bound", 3, 2, true, true},
		{"one above the bound", 3, 1, true, false},
		{"no partly valid segment", 8, 2, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := v
			w.Segments = append([]Segment(nil), v.Segments...)
			w.ReservedSegments = tc.rsv
			if !tc.dirty {
				w.Segments[7] = w.Segments[6]
			}
			s := mount(t, w)
			free := s.FreeSections()
			may, why := s.MaySSR(WarmData, tc.metaSecs)
			if may != tc.want {
				t.Errorf("free %d, reserved %d, metadata %d: MaySSR = %v (%s), want %v", free, tc.rsv, tc.metaSecs, may, why, tc.want)
			}
			if may && !strings.Contains(why, "get_ssr_segment") {
				t.Errorf("the refusal does not name the kernel function: %s", why)
			}
			// A node log never reuses a data segment.
			if may, _ := s.MaySSR(WarmNode, tc.metaSecs); may {
				t.Error("a node log may take SSR from a data segment")
			}
		})
	}
	// Large sections: the next segment of the section, free, is opened whatever f2fs_need_SSR says.
	valid = make([]uint32, 32)
	valid[9] = 100
	w := vol(t, 4, valid, nil)
	w.ReservedSegments = 4 * 8
	s := mount(t, w)
	if may, why := s.MaySSR(HotData, 2); may {
		t.Errorf("hot data's segment %d has a free next segment in its section: %s", s.Current()[HotData].Segno, why)
	}
}

// TestGCRefusesSSR: a foreground collection on a volume within f2fs_need_SSR's bound whose cold
// data log fills says so (Unmodelled), naming the kernel function; with room it does not.
func TestGCRefusesSSR(t *testing.T) {
	valid := make([]uint32, 24)
	for i := 6; i < 14; i++ {
		valid[i] = 400 // eight partly valid victims: their 3,200 blocks fill the cold log's segment
	}
	v := vol(t, 1, valid, nil)
	for _, rsv := range []uint32{2, 8} {
		w := v
		w.ReservedSegments = rsv
		s := mount(t, w)
		for range 3 {
			s.GC(Foreground)
		}
		switch got := s.Unmodelled(); {
		case rsv == 2 && got != "":
			t.Errorf("reserved 2 (free %d): refused: %s", s.FreeSections(), got)
		case rsv == 8 && !strings.Contains(got, "need_new_seg → get_ssr_segment"):
			t.Errorf("reserved 8 (free %d): Unmodelled %q, want the refusal naming need_new_seg", s.FreeSections(), got)
		}
	}
}

// TestTimelineStopsAtSSR: the next panel's timeline stops ("short": where the model stops) at the
// call whose moves would open a segment where the kernel may take SSR, instead of showing them: with
// 8 reserved sections it stops calls earlier than the same volume with 2, which runs until its free
// sections are too few for a call's moves.
func TestTimelineStopsAtSSR(t *testing.T) {
	valid := make([]uint32, 24)
	for i := 6; i < 14; i++ {
		valid[i] = 400
	}
	v := vol(t, 1, valid, nil)
	moves := map[uint32]int{}
	for _, rsv := range []uint32{2, 8} {
		w := v
		w.ReservedSegments = rsv
		tl := NewTimeline(mount(t, w), Foreground, 8)
		for _, f := range tl.Frames {
			if f.Kind == FrameMove {
				moves[rsv]++
			}
		}
		if last := tl.Frames[len(tl.Frames)-1]; last.Kind != FrameShort {
			t.Errorf("reserved %d: the timeline ends in %q after %d moves, want the model's stop", rsv, last.Kind, moves[rsv])
		}
	}
	if moves[8] >= moves[2] || moves[8] >= 3 {
		t.Errorf("moves shown: %d with 8 reserved sections, %d with 2; want the SSR stop before the third call", moves[8], moves[2])
	}
}

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
			may, why := s.MaySSR(WarmData, upTo(tc.metaSecs, 1))
			if may != tc.want {
				t.Errorf("free %d, reserved %d, metadata %d: MaySSR = %v (%s), want %v", free, tc.rsv, tc.metaSecs, may, why, tc.want)
			}
			if may && !strings.Contains(why, "get_ssr_segment") {
				t.Errorf("the refusal does not name the kernel function: %s", why)
			}
			// A node log never reuses a data segment.
			if may, _ := s.MaySSR(WarmNode, upTo(tc.metaSecs, 1)); may {
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
	if may, why := s.MaySSR(HotData, upTo(2, 4)); may {
		t.Errorf("hot data's segment %d has a free next segment in its section: %s", s.Current()[HotData].Segno, why)
	}
}

// TestGCRefusesSSR: a foreground collection whose cold data log fills takes SSR where
// f2fs_need_SSR is certainly true (8 reserved sections: 10 free ≤ 2 × 8), opens a new segment where
// it is certainly false (2 reserved: 10 > 2 × 2 + the 2 sections of dirty metadata the segment
// manager allows for), and says the answer is open (Unmodelled, naming the kernel functions) where
// it depends on the dirty metadata (4 reserved: 8 < 10 ≤ 8 + 2) and get_ssr_segment would find a
// victim.
func TestGCRefusesSSR(t *testing.T) {
	valid := make([]uint32, 24)
	for i := 6; i < 14; i++ {
		valid[i] = 400 // eight partly valid victims: their 3,200 blocks fill the cold log's segment
	}
	v := vol(t, 1, valid, nil)
	for _, rsv := range []uint32{2, 4, 8} {
		w := v
		w.ReservedSegments = rsv
		s := mount(t, w)
		// Each victim segment's blocks are one file's, in one dnode: the moves dirty eight node
		// pages at most (without NodeOf every move would count as a page of its own, and 3,200
		// of them could fill sections: has_not_enough_free_secs would be open).
		s.NodeOf = func(b Block) (uint32, uint64, bool) { return b.Segno, 0, true }
		for range 3 {
			s.GC(Foreground)
		}
		got, ssr := s.Unmodelled(), s.SSRVictims()
		switch {
		case rsv == 2 && (got != "" || len(ssr) != 0):
			t.Errorf("reserved 2 (free %d): refused %q, SSR victims %+v", s.FreeSections(), got, ssr)
		case rsv == 4 && !strings.Contains(got, "need_new_seg → get_ssr_segment"):
			t.Errorf("reserved 4 (free %d): Unmodelled %q, want the refusal naming need_new_seg", s.FreeSections(), got)
		case rsv == 8 && (got != "" || len(ssr) == 0):
			t.Errorf("reserved 8 (free %d): refused %q, SSR victims %+v; want SSR taken", s.FreeSections(), got, ssr)
		}
		// Every SSR victim is a data segment the cold log then wrote into: cheaper than a whole
		// segment by its checkpointed blocks.
		for _, sv := range ssr {
			if sv.Cost >= BlocksPerSeg || sv.Log != ColdData || sv.Type > ColdData {
				t.Errorf("reserved %d: SSR victim %+v", rsv, sv)
			}
		}
	}
}

// TestTimelineStopsAtSSR: the next panel's timeline stops ("short": where the model stops) at the
// call whose moves would fill a log where need_new_seg's answer is open (4 reserved sections),
// instead of showing them; with 2 it runs until its free sections are too few for a call's moves.
func TestTimelineStopsAtSSR(t *testing.T) {
	valid := make([]uint32, 24)
	for i := 6; i < 14; i++ {
		valid[i] = 400
	}
	v := vol(t, 1, valid, nil)
	moves := map[uint32]int{}
	for _, rsv := range []uint32{2, 4} {
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
	if moves[4] >= moves[2] || moves[4] >= 3 {
		t.Errorf("moves shown: %d with 4 reserved sections, %d with 2; want the stop before the third call", moves[4], moves[2])
	}
}

// TestSSRVictimSearch holds get_ssr_segment to the kernel's rules on a hand-built volume of 16
// segments, one a section (the logs at 10–15): the cheapest segment by ckpt_valid_blocks, not by
// valid blocks (blocks invalidated since the checkpoint stay taken); the same type first, then the
// other data temperatures from cold down; a section background gc marked is skipped; last_victim
// moves as f2fs_get_victim moves it; change_curseg starts the log at the first block free in both
// maps and skips the taken ones.
func TestSSRVictimSearch(t *testing.T) {
	valid := make([]uint32, 16)
	valid[2], valid[4], valid[6] = 300, 200, 100
	v := vol(t, 1, valid, nil)
	v.Segments[6].Type = ColdData
	v.ReservedSegments = 8 // 7 free sections ≤ 16: f2fs_need_SSR is true
	s := mount(t, v)
	// Segment 4 loses 150 blocks after the checkpoint: 50 valid, but its cost stays 200.
	if err := s.InvalidateRange(4, 0, 150); err != nil {
		t.Fatal(err)
	}
	if s.CkptValid(4) != 200 || s.Segment(4).Valid != 50 {
		t.Fatalf("segment 4: ckpt %d valid %d", s.CkptValid(4), s.Segment(4).Valid)
	}
	w := s.Current()[WarmData].Segno
	s.cur[WarmData].Blkoff = BlocksPerSeg - 1
	s.setValid(w, BlocksPerSeg-1) // as if the last block was just written
	newSeg, victim, err := s.needNewSeg(WarmData, Dirty{})
	if err != nil || newSeg || victim != 4 {
		t.Fatalf("warm log: new %v victim %d err %v; want SSR into segment 4 (cost 200 < 300)", newSeg, victim, err)
	}
	if got := s.SSRVictims(); len(got) != 1 || got[0] != (SSRVictim{Type: WarmData, Segno: 4, Cost: 200, Log: WarmData}) {
		t.Errorf("victims %+v", got)
	}
	if s.lastVictim[gcGreedy] != 5 {
		t.Errorf("last_victim[GC_GREEDY] = %d, want 5 (two dirty warm segments searched, the last 4)", s.lastVictim[gcGreedy])
	}
	s.changeCurseg(WarmData, victim)
	if c := s.Current()[WarmData]; c.Segno != 4 || c.Blkoff != 200 || !s.SSRLog(WarmData) {
		t.Errorf("after change_curseg: %+v SSR %v; want segment 4 block 200 (blocks 0–149 invalidated but checkpointed)", c, s.SSRLog(WarmData))
	}
	// The next search: segment 2 (warm, 300) from last_victim 5, wrapping; a background mark on
	// its section sends the search to the cold segment 6.
	s.victimSec.set(2)
	s.cur[WarmData].Blkoff = BlocksPerSeg - 1
	newSeg, victim, err = s.needNewSeg(WarmData, Dirty{})
	if err != nil || newSeg || victim != 6 {
		t.Errorf("second search: new %v victim %d err %v; want the cold segment 6 (2 is marked)", newSeg, victim, err)
	}
	if got := s.SSRVictims(); len(got) != 2 || got[1].Type != ColdData || got[1].Cost != 100 {
		t.Errorf("victims %+v", got)
	}
}

// TestSetCurrentSSR: a caller that wrote a block of an SSR log's segment itself (core's inline
// conversion) moves the log's next block past the blocks valid or checkpointed after it, as
// f2fs_find_next_ssr_block does; an LFS log's next block is the one given.
func TestSetCurrentSSR(t *testing.T) {
	valid := make([]uint32, 16)
	valid[4] = 100 // blocks 0–99
	v := vol(t, 1, valid, nil)
	v.ReservedSegments = 8
	s := mount(t, v)
	if err := s.InvalidateRange(4, 0, 10); err != nil { // 0–9 invalid but checkpointed
		t.Fatal(err)
	}
	s.changeCurseg(WarmData, 4)
	if c := s.Current()[WarmData]; c.Blkoff != 100 {
		t.Fatalf("change_curseg: next block %d, want 100", c.Blkoff)
	}
	e := s.Entry(4) // the caller writes block 100 on the manager's entry and hands it back
	e.SetValid(100)
	if err := s.Adopt(4, e, false); err != nil {
		t.Fatal(err)
	}
	s.segs[4].SetValid(101) // block 101 written, then invalidated: checkpointed, not valid
	s.segs[4].Invalidate(101, 1)
	if err := s.SetCurrent(WarmData, CurSeg{Segno: 4, Blkoff: 101}); err != nil {
		t.Fatal(err)
	}
	if c := s.Current()[WarmData]; c.Blkoff != 102 || !s.SSRLog(WarmData) {
		t.Errorf("SSR log after a block written by the caller: %+v (SSR %v), want next block 102", c, s.SSRLog(WarmData))
	}
	if err := s.SetCurrent(HotData, CurSeg{Segno: s.Current()[HotData].Segno, Blkoff: 7}); err != nil || s.Current()[HotData].Blkoff != 7 {
		t.Errorf("LFS log: %+v, %v", s.Current()[HotData], err)
	}
}

// upTo is a dirty-page state known only to lie between none and secs sections' worth of node
// pages, on a volume of segsPerSec segments a section.
func upTo(secs, segsPerSec uint32) Dirty {
	return Dirty{Nodes: Range{0, uint64(secs) * BlocksPerSeg * uint64(segsPerSec)}}
}

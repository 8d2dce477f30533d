package gc

import (
	"reflect"
	"testing"
)

// shortVolume: 16 segments, the last 6 the logs; segments 0–4 partly valid (valid[i]), the rest
// free, reserved segments rsv.
func shortVolume(t *testing.T, valid []uint32, rsv uint32) *State {
	t.Helper()
	v := make([]uint32, 16)
	copy(v, valid)
	vv := vol(t, 1, v, nil)
	vv.ReservedSegments = rsv
	return mount(t, vv)
}

// TestBalance: f2fs_balance_fs's f2fs_gc on a volume short of free sections turns foreground,
// collects greedy victims (fewest valid first), writes the checkpoint that frees each collected
// segment when it comes round again, and stops when enough sections are free or no victim is left
// (ENODATA). With enough free sections it does not run.
func TestBalance(t *testing.T) {
	// 5 dirty segments, 6 logs, 5 free: free sections 5.
	s := shortVolume(t, []uint32{400, 100, 300, 200, 500}, 4)
	if s.FreeSections() != 5 || s.ShortOfSpace() {
		t.Fatalf("free %d, short %v", s.FreeSections(), s.ShortOfSpace())
	}
	if _, ok := s.Balance(); ok {
		t.Fatal("balance ran with enough free sections")
	}
	// Reserved 6: 5 ≤ 6, short. The first victim is segment 1 (100 valid); its blocks go to the
	// cold data log; then free 5 + 1 freed > 6? no: 6 ≤ 6, still short: the checkpoint at the top
	// of the next round frees it, and the next victim is segment 3 (200).
	s = shortVolume(t, []uint32{400, 100, 300, 200, 500}, 6)
	p, ok := s.Balance()
	if !ok {
		t.Fatal("balance did not run")
	}
	if p.Type != "FG" || p.Policy != "greedy" || p.Victim == nil || *p.Victim != 1 || p.Cost != 100 {
		t.Fatalf("first victim %+v", p)
	}
	var later []uint32
	for _, r := range p.Rounds {
		if r.Victim != nil {
			later = append(later, *r.Victim)
		}
	}
	if len(later) == 0 || later[0] != 3 {
		t.Errorf("later victims %v, want 3 first", later)
	}
	if len(p.Checkpoints) == 0 || len(p.Checkpoints[0]) == 0 || p.Checkpoints[0][0] != 1 {
		t.Errorf("checkpoints %v: the first frees segment 1", p.Checkpoints)
	}
	if p.Errno != nil && *p.Errno != ENODATA {
		t.Errorf("errno %s", *p.Errno)
	}
	// f2fs_gc stops when has_enough_free_secs(sbi, sec_freed, 0): the sections freed since the
	// last checkpoint count, though they are prefree until the next.
	if p.Errno == nil && s.FreeSections()+uint32(len(s.PrefreeSegments())) <= s.ReservedSections() {
		t.Errorf("stopped short of space without ENODATA: %d free, %v prefree", s.FreeSections(), s.PrefreeSegments())
	}
	total := uint32(0)
	for segno := range s.Segments() {
		total += s.Segment(segno).Valid
	}
	if total != 1500 || p.Moved == 0 {
		t.Errorf("valid blocks %d after moving %d (want the 1500 kept)", total, p.Moved)
	}

	// The ioctl on the same short volume goes round the same loop: gc 0 turns foreground.
	s = shortVolume(t, []uint32{400, 100, 300, 200, 500}, 6)
	q := s.GC(Background)
	if q.Type != "FG" || q.Policy != "greedy" || q.Victim == nil || *q.Victim != 1 {
		t.Errorf("gc 0 on a short volume: %+v", q)
	}

	// Nothing dirty on a short volume: ENODATA, nothing moved.
	s = shortVolume(t, nil, 12)
	if p, ok := s.Balance(); !ok || p.Victim != nil || p.Errno == nil || *p.Errno != ENODATA || p.Moved != 0 {
		t.Errorf("balance with nothing dirty: %+v, ran %v", p, ok)
	}
}

// TestGCNoSegment: a foreground call whose cold data log fills up with no free segment left stops
// checkpoints (get_new_segment's ENOSPC: f2fs_stop_checkpoint) and returns EIO when f2fs_gc goes
// round again; the victim keeps the blocks that did not move. Under mode=lfs the log goes straight
// to get_new_segment; without it need_new_seg first takes SSR into segment 1 (the only partly
// valid segment that is not the victim), whose 112 free blocks take more of the victim's blocks.
func TestGCNoSegment(t *testing.T) {
	// 8 segments: 0 and 1 partly valid, 2 full, the logs in 2..7: no free segment at all.
	v := vol(t, 1, []uint32{300, 400, 0, 0, 0, 0, 0, 0}, nil)
	v.Segments[2] = Segment{Valid: 512, Type: v.Segments[2].Type}
	for k := range uint32(512) {
		setMap(&v.Segments[2].Map, k)
	}
	v.Current[ColdData].Blkoff = 412 // room for 100 blocks
	cold := &v.Segments[v.Current[ColdData].Segno]
	for k := range uint32(412) { // the log's blocks before its next one are valid
		setMap(&cold.Map, k)
	}
	cold.Valid = 412
	for _, lfs := range []bool{true, false} {
		s := mount(t, v)
		s.LFS = lfs
		p := s.GC(Foreground)
		if p.Victim == nil || *p.Victim != 0 || p.Errno == nil || *p.Errno != EIO || !s.CheckpointError() {
			t.Fatalf("lfs %v: %+v, checkpoint error %v", lfs, p, s.CheckpointError())
		}
		want, ssr := 100, []SSRVictim(nil)
		if !lfs {
			want, ssr = 100+112, []SSRVictim{{Type: WarmData, Segno: 1, Cost: 400, Log: ColdData}}
		}
		if p.Moved != want || s.Segment(0).Valid != 300-uint32(want) {
			t.Errorf("lfs %v: moved %d, segment 0 keeps %d; want %d moved", lfs, p.Moved, s.Segment(0).Valid, want)
		}
		if got := s.SSRVictims(); !reflect.DeepEqual(got, ssr) {
			t.Errorf("lfs %v: SSR victims %+v, want %+v", lfs, got, ssr)
		}
		if q := s.GC(Background); q.Errno == nil || *q.Errno != EIO || q.Moved != 0 {
			t.Errorf("lfs %v: after the checkpoint error: %+v", lfs, q)
		}
	}
}

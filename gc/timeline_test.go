package gc

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// randomVolume builds a volume of random geometry and contents: sections of 1, 2 or 4
// segments, segments empty, full or partly valid (random maps), of random log types and mtimes,
// the six logs in six different random sections.
func randomVolume(r *rand.Rand) Volume {
	sps := []uint32{1, 2, 4}[r.IntN(3)]
	secs := uint32(16 + r.IntN(40))
	n := secs * sps
	v := Volume{SegsPerSec: sps, Segments: make([]Segment, n), ElapsedTime: uint64(r.IntN(5000))}
	for i := range v.Segments {
		s := &v.Segments[i]
		s.Type = r.IntN(NumLogs)
		switch r.IntN(5) {
		case 0, 1: // empty
		case 2:
			for k := range uint32(BlocksPerSeg) {
				setMap(&s.Map, k)
			}
			s.Valid = BlocksPerSeg
		default:
			for k := range uint32(BlocksPerSeg) {
				if r.IntN(8) < 3 {
					setMap(&s.Map, k)
					s.Valid++
				}
			}
		}
		if s.Valid > 0 {
			s.Mtime = uint64(r.IntN(int(v.ElapsedTime) + 1))
		}
	}
	perm := r.Perm(int(secs))
	for t := range NumLogs {
		// An active log holds blocks below its next free one only (LFS).
		seg := uint32(perm[t]) * sps
		off := uint32(r.IntN(BlocksPerSeg))
		s := Segment{Type: t, Mtime: v.ElapsedTime}
		for k := range off {
			setMap(&s.Map, k)
			s.Valid++
		}
		v.Segments[seg] = s
		v.Current[t] = CurSeg{Segno: seg, Blkoff: off}
	}
	return v
}

// after mounts v at the clock now and invalidates some random valid blocks, as a zero range's
// calls do: the state a run leaves.
func after(t *testing.T, r *rand.Rand, v Volume, now uint64) *State {
	t.Helper()
	s := mount(t, v)
	s.Now = now
	for range r.IntN(400) {
		segno := uint32(r.IntN(int(s.mainSegs)))
		if s.isCurSeg(segno) {
			continue
		}
		for off := range uint32(BlocksPerSeg) {
			if s.segs[segno].Test(off) {
				if err := s.Invalidate(segno, off); err != nil {
					t.Fatal(err)
				}
				break
			}
		}
	}
	return s
}

// TestTimelineIsTheOps: every frame of a timeline shows what a fresh copy of its start state
// shows after the frame's ops (MapOps), and every call's pick is what that call gives on a fresh
// copy — for random volumes, clocks and both policies; the timeline leaves its start state alone.
func TestTimelineIsTheOps(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 1))
	frames := 0
	for iter := range 40 {
		v := randomVolume(r)
		now := uint64(r.IntN(3000))
		seed := r.Uint64()
		for _, kind := range []Kind{Foreground, Background} {
			start := after(t, rand.New(rand.NewPCG(seed, 2)), v, now)
			keep := start.Snap()
			tl := NewTimeline(start, kind, 0)
			if !reflect.DeepEqual(start.Snap(), keep) {
				t.Fatalf("volume %d %s: NewTimeline changed its start state", iter, kind)
			}
			if tl.Frames[0].Kind != FrameStart || tl.Frames[1].Kind != FrameCheckpoint {
				t.Fatalf("volume %d %s: frames begin %s, %s", iter, kind, tl.Frames[0].Kind, tl.Frames[1].Kind)
			}
			for k, f := range tl.Frames {
				frames++
				fresh := after(t, rand.New(rand.NewPCG(seed, 2)), v, now)
				var last any
				for _, op := range tl.MapOps(k) {
					if op.Verb == "sync" {
						last = fresh.syncMarked()
						continue
					}
					last = fresh.Apply(op)
				}
				if got := fresh.Snap(); !reflect.DeepEqual(got, f.Map) {
					t.Fatalf("volume %d %s frame %d (%s, ops %v): the map differs from a fresh run of its ops", iter, kind, k, f.Kind, tl.MapOps(k))
				}
				if f.Kind == FrameSearch || f.Kind == FrameNone {
					pk := fresh.GC(kind)
					pk.Moves, f.Pick.Moves = nil, nil
					if !reflect.DeepEqual(&pk, f.Pick) {
						t.Fatalf("volume %d %s frame %d: pick %+v, a fresh call gives %+v", iter, kind, k, *f.Pick, pk)
					}
				}
				if f.Kind == FrameMove && last != nil {
					if p := last.(*Pick); p.Moved != f.Pick.Moved || len(f.Moves) == 0 && p.Moved > 0 {
						t.Fatalf("volume %d frame %d: %d moved, a fresh call moves %d", iter, k, f.Pick.Moved, p.Moved)
					}
				}
			}
			// Every move frame's runs add up to the call's moved blocks.
			for k, f := range tl.Frames {
				if f.Kind != FrameMove && f.Kind != FrameSync {
					continue
				}
				n := 0
				for _, m := range f.Moves {
					n += m.Count
				}
				want := 0
				if f.Kind == FrameMove {
					want = f.Pick.Moved
				} else {
					want = f.Checkpoint.Moved
				}
				if n != want {
					t.Errorf("volume %d %s frame %d: move runs count %d blocks, the call %d", iter, kind, k, n, want)
				}
			}
		}
	}
	t.Logf("%d frames checked", frames)
}

// TestTimelineShape: after the checkpoint come search, victim and move (foreground) or search,
// victim and sync (background) per call, at most MaxTimelineRounds calls, ending at ENODATA when
// nothing is left; the victim frame of a foreground call shows the map of its search.
func TestTimelineShape(t *testing.T) {
	valid := make([]uint32, 20)
	copy(valid, []uint32{0, 100, 50, 50, 300, 0, 50})
	s := mount(t, vol(t, 1, valid, nil))
	tl := NewTimeline(s, Foreground, 0)
	var kinds []string
	for _, f := range tl.Frames {
		kinds = append(kinds, f.Kind)
	}
	want := []string{FrameStart, FrameCheckpoint}
	for range 5 { // segments 1, 2, 3, 4, 6 are dirty; the moved blocks fill the cold data log's segment
		want = append(want, FrameSearch, FrameVictim, FrameMove)
	}
	if len(kinds) < len(want) || !reflect.DeepEqual(kinds[:len(want)], want) {
		t.Fatalf("frames %v, want them to begin %v", kinds, want)
	}
	if tl.Frames[3].Map != tl.Frames[2].Map {
		t.Error("a foreground victim frame does not show its search's map")
	}
	if *tl.Frames[3].Pick.Victim != 2 {
		t.Errorf("first victim %d, want 2", *tl.Frames[3].Pick.Victim)
	}
	if tl.Frames[4].Map.Classes[2] != ClassPrefree {
		t.Errorf("segment 2 after its move: %c, want prefree", tl.Frames[4].Map.Classes[2])
	}
	empty := mount(t, vol(t, 1, make([]uint32, 16), nil))
	for _, k := range []Kind{Foreground, Background} {
		tl := NewTimeline(empty, k, 0)
		if len(tl.Frames) != 3 || tl.Frames[2].Kind != FrameNone || *tl.Frames[2].Pick.Errno != ENODATA {
			t.Errorf("%s on an empty volume: %d frames, want start, checkpoint, none (ENODATA)", k, len(tl.Frames))
		}
	}
	// Many dirty segments: the timeline stops after MaxTimelineRounds calls.
	many := make([]uint32, 64)
	for i := range 50 {
		many[i] = uint32(10 + i)
	}
	tl = NewTimeline(mount(t, vol(t, 1, many, nil)), Background, 0)
	if n := len(tl.Frames); n != 2+3*MaxTimelineRounds {
		t.Errorf("background on 50 dirty segments: %d frames, want %d", n, 2+3*MaxTimelineRounds)
	}
	for _, f := range tl.Frames[2:] {
		if f.Round < 1 || f.Round > MaxTimelineRounds {
			t.Fatalf("frame %s in round %d", f.Kind, f.Round)
		}
	}
	// No free section: the model stops before a call whose moves it could not place.
	crowded := make([]uint32, 20)
	for i := range crowded {
		crowded[i] = 100
	}
	tl = NewTimeline(mount(t, vol(t, 1, crowded, nil)), Foreground, 0)
	if n := len(tl.Frames); n != 3 || tl.Frames[2].Kind != FrameShort {
		t.Errorf("a volume with no free section: %d frames, the third %q; want it to stop (short)", n, tl.Frames[len(tl.Frames)-1].Kind)
	}
}

// TestSyncMovesEveryMarkedBlock: after background calls mark sections, the timeline's sync moves
// every marked block (data to the cold data log, nodes to their own log), nothing stays pending,
// and the victims end free — for random volumes.
func TestSyncMovesEveryMarkedBlock(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 3))
	checked := 0
	defer func() {
		if checked < 10 {
			t.Errorf("only %d volumes had a victim to sync", checked)
		}
	}()
	for iter := range 60 {
		s := after(t, r, randomVolume(r), uint64(r.IntN(100)))
		if s.freeSecs() < s.segsPerSec+NumLogs {
			continue
		}
		s.Checkpoint()
		pk := s.GC(Background)
		if pk.Victim == nil {
			continue
		}
		marked := s.Pending()
		checked++
		c := s.syncMarked()
		if len(c.Moves) != len(marked) || len(s.Pending()) != 0 {
			t.Fatalf("volume %d: %d blocks marked, sync moved %d, %d still pending", iter, len(marked), len(c.Moves), len(s.Pending()))
		}
		for i, m := range c.Moves {
			want := ColdData
			if isNodeType(m.Log) {
				want = m.Log
			}
			if m.Log != want || s.segs[m.From.Segno].Test(m.From.Blkoff) || !s.segs[m.To.Segno].Test(m.To.Blkoff) {
				t.Fatalf("volume %d move %d: %+v", iter, i, m)
			}
		}
		for seg := *pk.Victim; seg < *pk.Victim+s.segsPerSec; seg++ {
			if !s.isCurSeg(seg) && s.Class(seg) != "free" {
				t.Errorf("volume %d: victim segment %d is %s after the sync, want free", iter, seg, s.Class(seg))
			}
		}
	}
}

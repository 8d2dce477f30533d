package gc

import "slices"

// A sequence's decisions do not read the clock unless a cost-benefit search ranks by age: every
// other thing it does (allocation, SSR's and foreground collection's greedy search, checkpoints)
// reads valid counts and bitmaps only. What the clock changes is the mtimes update_segment_mtime
// writes (segment.c:2419: elapsed_time + the seconds since mount, averaged into the segment's
// mtime by its valid blocks). So a state reached without a cost-benefit search can be had at any
// clock by redoing those updates alone: [State.TrackMtimes] records them, [State.AtClock] redoes
// them (issue 37: the next panel replayed a whole sequence for each clock a user tried).

// mtimeUpdate is one update_segment_mtime call: the segment, its valid blocks then (the average's
// weight) and its mtime before (the start of the redo for the segment's first update).
type mtimeUpdate struct {
	segno, valid uint32
	before       uint64
}

// mtimeTrack is the record of a tracked state: its updates in order, max_mtime when tracking
// began, and whether a search read the clock (the record then says nothing of another clock).
type mtimeTrack struct {
	updates  []mtimeUpdate
	maxMtime uint64
	// mtimeUnsure is State.mtimeUnsure when tracking began.
	mtimeUnsure bool
	now         uint64 // the clock when tracking began: an update at another clock marks read
	read        bool
}

func (t *mtimeTrack) clone() *mtimeTrack {
	if t == nil {
		return nil
	}
	c := *t
	c.updates = slices.Clip(c.updates) // either's next update copies: the record stays each one's
	return &c
}

func (t *mtimeTrack) record(segno, valid uint32, before, now uint64) {
	if t != nil {
		t.updates = append(t.updates, mtimeUpdate{segno: segno, valid: valid, before: before})
		t.read = t.read || now != t.now
	}
}

// TrackMtimes starts recording the mtime updates of the operations from here on (16 bytes each),
// for [State.AtClock].
func (s *State) TrackMtimes() {
	s.clock = &mtimeTrack{maxMtime: s.maxMtime, mtimeUnsure: s.mtimeUnsure, now: s.Now}
}

// nodesEvent is the segno of a record that is not a segment's update: node pages written where the
// model does not place them ([State.NodesWritten]), whose effect on max_mtime depends on the
// clock; valid is 1 when at least one page was surely written.
const nodesEvent = ^uint32(0)

// TrackedBytes is what the record of mtime updates holds.
func (s *State) TrackedBytes() int64 {
	if s.clock == nil {
		return 0
	}
	return 16 * int64(cap(s.clock.updates))
}

// AtClock returns the state the operations since [State.TrackMtimes] would have left had the clock
// ([State.Now]) been now all along: a copy of s with every tracked mtime update redone at now,
// untracked. ok is false when s is not tracked, an update ran at another clock than tracking began
// at (an operation set it), or a cost-benefit search read the clock since (its choice, and so what
// followed, may differ at another clock): the caller replays the operations at now. An operation
// that set the clock back to where it was is not seen here: the caller leaves such sequences out.
func (s *State) AtClock(now uint64) (c *State, ok bool) {
	if s.clock == nil || s.clock.read {
		return nil, false
	}
	c = s.Clone()
	c.clock = nil
	c.Now = now
	c.maxMtime, c.mtimeUnsure = s.clock.maxMtime, s.clock.mtimeUnsure
	seen := newBitset(c.mainSegs)
	for _, u := range s.clock.updates {
		if u.segno != nodesEvent && !seen.test(u.segno) {
			seen.set(u.segno)
			c.segs[u.segno].restoreMtime(u.before)
		}
	}
	ctime := c.mtimeNow()
	for _, u := range s.clock.updates {
		if u.segno == nodesEvent {
			c.nodesMtime(u.valid > 0, ctime)
			continue
		}
		c.segs[u.segno].mtimeAt(ctime, u.valid)
		if ctime > c.maxMtime {
			c.maxMtime = ctime
		}
	}
	return c, true
}

// Stamp is one update_segment_mtime a walk of core made on an entry it read from the State
// ([State.SITEntry]): the segment and its valid blocks then (the average's weight). The walk
// stamps its own copy of the entry and hands it back whole ([State.Adopt]), so a tracked State
// learns of its mtime updates only through [State.RecordStamps].
type Stamp struct{ Segno, Valid uint32 }

// Tracking reports whether the State records its mtime updates ([State.TrackMtimes]).
func (s *State) Tracking() bool { return s.clock != nil }

// RecordStamps records a walk's update_segment_mtime calls, in the walk's order, for
// [State.AtClock]; the caller gives them before it hands the walk's entries back with [State.Adopt]
// (the first stamp of a segment starts from the mtime the State holds). Untracked: nothing.
func (s *State) RecordStamps(stamps []Stamp) {
	for _, x := range stamps {
		if x.Segno < s.mainSegs {
			s.clock.record(x.Segno, x.Valid, s.segs[x.Segno].Mtime(), s.Now)
		}
	}
}

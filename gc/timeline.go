package gc

// A Timeline is "what happens next" after a state, as a viewer steps through it: a checkpoint
// (the prefree segments become free), then the cleaner call by call, each call in three frames —
// the search with its ranked candidates, the victim, and where its valid blocks go. The frames are
// computed once, by the State methods the ops language runs (Checkpoint, GC, Sync), so a frame is what the ops up to it leave (MapOps).
//
// A foreground timeline (greedy) runs F2FS_IOC_GARBAGE_COLLECT with sync = 1: the victim's blocks
// move within the call. A background timeline (cost-benefit) runs sync = 0, which only marks the
// victim's blocks; the frame after it is a sync(2), where writeback moves the marked data to the
// cold data log and the checkpoint after it writes the nodes and frees the victim. The kernel
// picks its policy from the call's type (select_gc_type), so the two policies are two timelines.

// MaxTimelineRounds is how many cleaner calls a timeline shows at most.
const MaxTimelineRounds = 8

// The kinds of frame.
const (
	FrameStart      = "start"      // the state given: what the run left
	FrameCheckpoint = "checkpoint" // F2FS_IOC_WRITE_CHECKPOINT: prefree → free
	FrameSearch     = "search"     // f2fs_get_victim's search: the candidates, ranked
	FrameVictim     = "victim"     // the section it chose (background: marked in victim_secmap)
	FrameMove       = "move"       // foreground: the victim's valid blocks moved within the call
	FrameSync       = "sync"       // background: the marked blocks written at sync, then a checkpoint
	FrameNone       = "none"       // ENODATA: no section to collect
	FrameShort      = "short"      // the model stops: too few free sections for a call's moves
)

// Class letters of a Snapshot, one per segment: what State.Class says, in one byte.
const (
	ClassFree    = 'f'
	ClassDirty   = 'd'
	ClassFull    = 'F'
	ClassPrefree = 'p'
	ClassCurrent = 'c'
)

var classLetter = map[string]byte{"free": ClassFree, "dirty": ClassDirty, "full": ClassFull, "prefree": ClassPrefree, "current": ClassCurrent}

// Snapshot is the segment map at one frame: each segment's class letter and valid blocks, and
// the sections a background call has marked (victim_secmap), as first segments.
type Snapshot struct {
	Classes string
	Valid   []uint16
	Marked  []uint32
}

// Snap takes the segment map of the state.
func (s *State) Snap() *Snapshot {
	b := make([]byte, s.mainSegs)
	v := make([]uint16, s.mainSegs)
	for segno := range s.mainSegs {
		b[segno] = classLetter[s.Class(segno)]
		v[segno] = uint16(s.segs[segno].Valid())
	}
	var marked []uint32
	for secno := range s.mainSecs {
		if s.victimSec.test(secno) {
			marked = append(marked, secno*s.segsPerSec)
		}
	}
	return &Snapshot{Classes: string(b), Valid: v, Marked: marked}
}

// MoveRun is the blocks of one call that went from one segment to another, in one log.
type MoveRun struct {
	From  uint32 `json:"from"`
	To    uint32 `json:"to"`
	Log   int    `json:"log"`
	Count int    `json:"count"`
}

// groupMoves counts moves by (from, to, log), in the order each pair first moved.
func groupMoves(ms []Move) []MoveRun {
	var out []MoveRun
	at := map[[3]uint32]int{}
	for _, m := range ms {
		k := [3]uint32{m.From.Segno, m.To.Segno, uint32(m.Log)}
		if i, ok := at[k]; ok {
			out[i].Count++
			continue
		}
		at[k] = len(out)
		out = append(out, MoveRun{From: m.From.Segno, To: m.To.Segno, Log: m.Log, Count: 1})
	}
	return out
}

// Frame is one position of a timeline.
type Frame struct {
	Kind  string
	Round int       // the cleaner call, from 1; 0 for the start and the first checkpoint
	Map   *Snapshot // the segment map this frame shows
	// Pick is the call's result (search, victim, move, sync and none frames). A search frame
	// shows its candidates; which one won is the victim frame's news.
	Pick *Pick
	// Other is what the other policy would pick on the same state (search frames): a call of
	// the other type on a copy, which changes nothing here.
	Other *Pick
	// Checkpoint is what the checkpoint or the sync did (checkpoint and sync frames).
	Checkpoint *CheckpointStep
	Moves      []MoveRun // move and sync frames
}

// Timeline is the frames after a state for one policy.
type Timeline struct {
	Kind       Kind
	SegsPerSec uint32
	Frames     []Frame
}

// NewTimeline builds the timeline after s (which it does not change) for calls of kind, at most
// rounds calls (MaxTimelineRounds if rounds ≤ 0), stopping at the first ENODATA.
func NewTimeline(s *State, kind Kind, rounds int) *Timeline {
	if rounds <= 0 {
		rounds = MaxTimelineRounds
	}
	st := s.Clone()
	tl := &Timeline{Kind: kind, SegsPerSec: st.segsPerSec}
	tl.Frames = append(tl.Frames, Frame{Kind: FrameStart, Map: st.Snap()})
	ck := st.Apply(Op{Verb: "checkpoint"}).(*CheckpointStep)
	if st.unmodelled != "" && s.unmodelled == "" {
		// The checkpoint's moves filled a log where need_new_seg's answer (SSR or a new segment)
		// is open (ssr.go): the model stops rather than show a guess.
		tl.Frames = append(tl.Frames, Frame{Kind: FrameShort, Map: tl.Frames[0].Map})
		return tl
	}
	tl.Frames = append(tl.Frames, Frame{Kind: FrameCheckpoint, Map: st.Snap(), Checkpoint: ck, Moves: groupMoves(ck.Moves)})
	other := Background
	if kind == Background {
		other = Foreground
	}
	for r := 1; r <= rounds; r++ {
		before := tl.Frames[len(tl.Frames)-1].Map
		if st.freeSecs() < st.segsPerSec+NumLogs {
			tl.Frames = append(tl.Frames, Frame{Kind: FrameShort, Round: r, Map: before})
			break
		}
		alt := st.Clone().GC(other)
		pk := st.GC(kind)
		if st.unmodelled != "" && s.unmodelled == "" {
			// The call's moves filled a log where need_new_seg's answer is open (ssr.go).
			tl.Frames = append(tl.Frames, Frame{Kind: FrameShort, Round: r, Map: before})
			break
		}
		if pk.Victim == nil {
			tl.Frames = append(tl.Frames, Frame{Kind: FrameNone, Round: r, Map: before, Pick: &pk, Other: &alt})
			break
		}
		tl.Frames = append(tl.Frames, Frame{Kind: FrameSearch, Round: r, Map: before, Pick: &pk, Other: &alt})
		if kind == Foreground {
			// The victim on the map as the search found it, then the map after the moves.
			tl.Frames = append(tl.Frames, Frame{Kind: FrameVictim, Round: r, Map: before, Pick: &pk},
				Frame{Kind: FrameMove, Round: r, Map: st.Snap(), Pick: &pk, Moves: groupMoves(pk.Moves)})
			continue
		}
		tl.Frames = append(tl.Frames, Frame{Kind: FrameVictim, Round: r, Map: st.Snap(), Pick: &pk})
		sy := st.syncMarked()
		if st.unmodelled != "" && s.unmodelled == "" {
			// The sync's moves or its checkpoint's node writes left the model guessing: the
			// timeline stops at the map before the sync.
			tl.Frames = append(tl.Frames, Frame{Kind: FrameShort, Round: r, Map: tl.Frames[len(tl.Frames)-1].Map})
			break
		}
		tl.Frames = append(tl.Frames, Frame{Kind: FrameSync, Round: r, Map: st.Snap(), Pick: &pk, Checkpoint: sy, Moves: groupMoves(sy.Moves)})
	}
	return tl
}

// syncMarked is sync(2) as State.Sync does it — writeback moves the data blocks background calls
// marked to the cold data log, then the checkpoint writes the marked node blocks to their logs and
// frees the prefree segments — as a timeline step.
func (s *State) syncMarked() *CheckpointStep {
	c := &CheckpointStep{Op: "sync"}
	c.Freed, c.Moves = s.Sync()
	if c.Freed == nil {
		c.Freed = []uint32{}
	}
	c.Moved = len(c.Moves)
	return c
}

// freeSecs counts the free sections (free_secmap clear). A call's moves need at most a section's
// worth of new segments plus one partly filled segment per log: with fewer free sections the
// kernel would go round f2fs_gc's loop with checkpoints inside (has_not_enough_free_secs), which a
// timeline of single calls does not show, so it stops there; it stops too at a call whose moves
// filled a log where need_new_seg's answer is open (ErrSSRUnknown, State.MaySSR for node logs).
func (s *State) freeSecs() uint32 { return s.mainSecs - s.inuseSec.count(s.mainSecs) }

// MapOps returns the ops of the language whose effect frame k's map shows, from the timeline's
// start state: a fresh copy of it after them has that map. (A foreground call's search and victim
// frames show the map before the call, its move frame the map after; a background call's victim
// frame shows its marks.)
func (tl *Timeline) MapOps(k int) []Op {
	var ops []Op
	call := Op{Verb: "gc", Sync: 0}
	if tl.Kind == Foreground {
		call.Sync = 1
	}
	for i := 1; i <= k && i < len(tl.Frames); i++ {
		switch f := tl.Frames[i]; {
		case f.Kind == FrameCheckpoint:
			ops = append(ops, Op{Verb: "checkpoint"})
		case f.Kind == FrameMove, f.Kind == FrameVictim && tl.Kind == Background:
			ops = append(ops, call)
		case f.Kind == FrameSync:
			ops = append(ops, Op{Verb: "sync"})
		}
	}
	return ops
}

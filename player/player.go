package player

import (
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"slices"

	"github.com/zrviz/zrviz/core"
)

// CallHistory is how many of the latest calls a viewer's engines keep (the call log shows them).
const CallHistory = 16

// lockstep is one or two engines behind one step counter. Each step advances the engine whose next
// event concerns the lower slot (per-block first on ties), so both walk the file's slots together.
type lockstep struct {
	modes []core.Mode
	runs  []*core.Run
	step  int64
}

func newLockstep(spec Spec, opt core.RunOptions) (*lockstep, error) {
	l := &lockstep{modes: spec.Modes}
	for _, m := range spec.Modes {
		r, err := core.NewRunOptions(spec.Input, spec.Request, m, opt)
		if err != nil {
			return nil, err
		}
		l.runs = append(l.runs, r)
	}
	return l, nil
}

// pick returns the engine that takes the next step, or -1 at the end.
func (l *lockstep) pick() int {
	best := -1
	var bestSlot uint64
	for i, r := range l.runs {
		if r.Done() || r.Err() != nil {
			continue
		}
		if s := r.NextSlot(); best < 0 || s < bestSlot {
			best, bestSlot = i, s
		}
	}
	return best
}

// next takes one step: the event, the index of the engine that made it, false at the end, or the
// source error that stopped an engine.
func (l *lockstep) next() (core.Event, int, bool, error) {
	for {
		i := l.pick()
		if i < 0 {
			for _, r := range l.runs {
				if err := r.Err(); err != nil {
					return core.Event{}, -1, false, err
				}
			}
			return core.Event{}, -1, false, nil
		}
		ev, ok := l.runs[i].Next()
		if !ok {
			if err := l.runs[i].Err(); err != nil {
				return core.Event{}, -1, false, err
			}
			continue
		}
		l.step++
		return ev, i, true, nil
	}
}

// Event is one step of a player: an engine's event, the player step it took (in both mode the
// shared counter; the engine's own count is Event.Step) and the engine's mode.
type Event struct {
	core.Event
	PlayerStep int64
	Mode       core.Mode
}

// Player is one viewer's position in a run. It is not safe for concurrent use; its memory is its
// engines' (bounded call history, a checkpoint every few dnode chunks, the segments touched so far),
// not the run's slots.
type Player struct {
	o *Outline
	l *lockstep
}

// New returns a player at step 0 of the outline's run.
func New(o *Outline) (*Player, error) {
	l, err := newLockstep(o.spec, core.RunOptions{CallHistory: CallHistory, CheckpointChunks: o.checkpointChunks})
	if err != nil {
		return nil, err
	}
	return &Player{o: o, l: l}, nil
}

// Step is the player step the view shows: 0 before anything, Total at the end.
func (p *Player) Step() int64 { return p.l.step }

// Done reports whether the view is at the end.
func (p *Player) Done() bool { return p.l.step >= p.o.Total }

// Forward takes up to n steps, handing each event to fn (nil: none), and returns how many it took.
// fn may stop early by returning false (after that step).
func (p *Player) Forward(n int64, fn func(Event) bool) (int64, error) {
	var k int64
	for k < n {
		ev, i, ok, err := p.l.next()
		if err != nil {
			return k, err
		}
		if !ok {
			break
		}
		k++
		if fn != nil && !fn(Event{Event: ev, PlayerStep: p.l.step, Mode: p.l.modes[i]}) {
			break
		}
	}
	return k, nil
}

// NextCall steps to just after the next f2fs_invalidate_blocks call of the last mode (the batched
// one in both mode) and all its SIT updates, so counters and SIT maps agree where it stops; at the
// last call it goes to the end.
func (p *Player) NextCall(fn func(Event) bool) (int64, error) {
	last := len(p.l.runs) - 1
	called := false
	var k int64
	for {
		if called && !p.l.runs[last].InCall() {
			return k, nil
		}
		n, err := p.Forward(1, func(ev Event) bool {
			if ev.Kind == core.EvInvalidate && ev.Mode == p.l.modes[last] {
				called = true
			}
			return fn == nil || fn(ev)
		})
		k += n
		if err != nil || n == 0 {
			return k, err
		}
	}
}

// Goto moves to player step step, clamped to [0, Total].
func (p *Player) Goto(step int64) error {
	step = min(max(step, 0), p.o.Total)
	if len(p.l.runs) == 1 {
		if err := p.l.runs[0].SeekTo(step); err != nil {
			return err
		}
		p.l.step = p.l.runs[0].Step()
		return nil
	}
	c := min(int(step/cpEvery), len(p.o.cps)-1)
	for i, r := range p.l.runs {
		if err := r.SeekTo(p.o.cps[c][i]); err != nil {
			return err
		}
	}
	p.l.step = int64(c) * cpEvery
	_, err := p.Forward(step-p.l.step, nil)
	return err
}

// Cursor is the lowest file block index the engines still running will look at next.
func (p *Player) Cursor() uint64 {
	var c uint64
	first := true
	for _, r := range p.l.runs {
		if s := r.NextSlot(); first || s < c {
			c, first = s, false
		}
	}
	return c
}

// GotoSlot moves to the first step whose cursor is at or past file block index slot (the end when
// no step is), the "go to slot" of a player.
func (p *Player) GotoSlot(slot uint64) error {
	lo, hi := int64(0), p.o.Total
	for lo < hi {
		mid := lo + (hi-lo)/2
		if err := p.Goto(mid); err != nil {
			return err
		}
		if p.Cursor() >= slot {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return p.Goto(lo)
}

// Follow moves p to the point of from's run that from shows, for a mode switch (from and p play
// the same request in other modes): the start to the start, the end to the end, a dnode chunk's
// first step to the same chunk's, and otherwise the first step whose cursor reaches from's cursor
// (the same slot). So a switch at the end stays at the end, and switching back and forth at a
// chunk boundary comes back to the same step. Among the steps at one cursor, the step keeps its
// place (the k-th step at the slot lands on p's k-th there, or its last).
func (p *Player) Follow(from *Player) error {
	fo, s := from.o, from.Step()
	switch {
	case s <= 0:
		return p.Goto(0)
	case s >= fo.Total:
		return p.Goto(p.o.Total)
	}
	if k, ok := slices.BinarySearchFunc(fo.Chunks, s, func(c Chunk, s int64) int { return cmp.Compare(c.Step, s) }); ok && k < len(p.o.Chunks) {
		return p.Goto(p.o.Chunks[k].Step)
	}
	// Several steps share a cursor: the steps before the walk reaches the first slot (the
	// arguments, the page arithmetic: cursor 0 all along) and each slot's visit, call and SIT
	// update. Landing on the first of them sent b at the run's second step back to step 0; so the
	// step keeps its place among those of its slot, as far as p has as many.
	slot := from.Cursor()
	if err := from.GotoSlot(slot); err != nil {
		return err
	}
	into := s - from.Step()
	if err := from.Goto(s); err != nil { // from is left where it was
		return err
	}
	if err := p.GotoSlot(slot + 1); err != nil {
		return err
	}
	last := p.Step() - 1 // p's last step at the slot (or before it)
	if err := p.GotoSlot(slot); err != nil {
		return err
	}
	return p.Goto(max(p.Step(), min(p.Step()+into, last)))
}

// Changed returns what the run has written so far over [lo, hi) (the first mode's engine: both
// modes leave the same slots, and differ only for the instant between a visit and its call); laid
// over [Outline.InitialSlots] it is the slot map now.
func (p *Player) Changed(lo, hi uint64) []core.Extent {
	return p.l.runs[0].Changed(lo, hi)
}

// Counters are the per-mode numbers a player compares.
type Counters struct {
	Calls               uint64 `json:"calls"`
	SITLockAcquisitions uint64 `json:"sitLockAcquisitions"`
	SITPieces           uint64 `json:"sitPieces"`
	BlocksInvalidated   uint64 `json:"blocksInvalidated"`
	SlotsVisited        uint64 `json:"slotsVisited"`
	DnodeChunks         uint64 `json:"dnodeChunks"`
	Reserved            uint64 `json:"reserved"`
	NodesAllocated      uint64 `json:"nodesAllocated"`
	SegmentsTouched     uint64 `json:"segmentsTouched"`
	SegmentsPrefree     uint64 `json:"segmentsPrefree"`
	// A punch's or truncate's: node blocks truncate_node freed, addresses validation refused
	// (cleared, not freed), and bits a call found already clear ("Bitmap was wrongly cleared").
	NodesFreed     uint64 `json:"nodesFreed"`
	SlotsSkipped   uint64 `json:"slotsSkipped"`
	WronglyCleared uint64 `json:"wronglyCleared"`
}

// SITTotals are a mode's SIT valid counts summed over every segment the run touches (from its
// first step to its end), exact for any number of segments (the panel lists at most
// [MaxSegments] of them).
type SITTotals struct {
	Before   uint64 `json:"before"`   // before the run: the same at every step
	Valid    uint64 `json:"valid"`    // now
	Touched  int    `json:"touched"`  // segments touched so far
	Segments int    `json:"segments"` // segments the run touches by its end
}

// ModeState is one engine's state at the player's step, ready to encode.
type ModeState struct {
	Mode    core.Mode `json:"mode"`
	Step    int64     `json:"step"` // the engine's own event count
	Done    bool      `json:"done"`
	Errno   string    `json:"errno"`
	Message string    `json:"message,omitempty"` // the kernel's log line for an error
	// ReturnedBy names the function whose errno ends the run (core.ReturnedBy: open, vfs_fallocate,
	// f2fs_fallocate or f2fs_zero_range), when Errno is set.
	ReturnedBy  string        `json:"returnedBy,omitempty"`
	Cursor      uint64        `json:"cursor"`  // file block index of the engine's next event
	Chunk       int32         `json:"chunk"`   // index into Outline.Chunks, -1 before the first
	Pending     *core.Pending `json:"pending"` // the batched mode's run, nil when none
	Counters    Counters      `json:"counters"`
	SIT         SITTotals     `json:"sit"`
	ISize       int64         `json:"iSize"`
	IBlocks     uint64        `json:"iBlocks"`
	ValidBlocks uint64        `json:"validBlockCount"`
	// Segments are SIT entries of the outline's segments (Outline.Segments, the ones the hello
	// lists) whose state differs from what the client holds: in a full state, from the hello's
	// (every listed segment as it was before the run), so a client starts again from those; in
	// others, from the previous state of the same Tracker. A client that lays them over what it
	// holds has every listed segment as it is at the step, however it got there. MapBefore is
	// left empty (the hello's is the one), and so is Map when no bit is set.
	Segments  []core.SegmentState `json:"segments"`
	Calls     []core.Call         `json:"calls"` // the latest calls, oldest first
	Narration string              `json:"narration"`
}

// Tracker remembers what one viewer holds, so a state carries only the segments that changed
// since. Its memory is one entry per listed segment that differs from the hello's.
type Tracker struct {
	sent []map[uint32]segKey
}

// segKey tells two states of a segment apart: its count, class and a digest of its map.
type segKey struct {
	valid int32
	class core.SegClass
	sum   uint64
}

func keyOf(valid int32, class core.SegClass, m *[64]byte) segKey {
	// FNV-1a over the map's words: a digest, not a hash table's: two maps of one segment that
	// collide would need the same valid count and class too.
	h := uint64(14695981039346656037)
	for i := 0; i < 64; i += 8 {
		h ^= binary.LittleEndian.Uint64(m[i:])
		h *= 1099511628211
	}
	return segKey{valid, class, h}
}

// State returns every mode's state at the player's step. With full (after a seek, or the first
// time) the segments are those that differ from the hello's and t starts over; otherwise those
// that changed since t's last state.
func (p *Player) State(t *Tracker, full bool) []ModeState {
	if len(t.sent) != len(p.l.runs) {
		t.sent = make([]map[uint32]segKey, len(p.l.runs))
		full = true
	}
	out := make([]ModeState, len(p.l.runs))
	for i, r := range p.l.runs {
		sn := r.Snapshot()
		st := ModeState{Mode: sn.Mode, Step: sn.Step, Done: sn.Done, Errno: sn.Errno, Cursor: sn.NextSlot,
			Chunk: sn.Chunk, ISize: sn.ISize, IBlocks: sn.IBlocks, ValidBlocks: sn.ValidBlockCount,
			Narration: sn.Narration, Calls: sn.LastCalls,
			Counters: Counters{Calls: sn.Stats.Calls, SITLockAcquisitions: sn.Stats.SITLockAcquisitions,
				SITPieces: sn.Stats.SITPieces, BlocksInvalidated: sn.Stats.BlocksInvalidated,
				SlotsVisited: p.o.visited(&sn), DnodeChunks: sn.Stats.DnodeChunks, Reserved: sn.Stats.Reserved,
				NodesAllocated: sn.Stats.NodesAlloc, SegmentsTouched: sn.Stats.SegmentsTouched,
				SegmentsPrefree: sn.Stats.SegmentsPrefree, NodesFreed: sn.Stats.NodesFreed,
				SlotsSkipped: sn.Stats.SlotsSkipped, WronglyCleared: sn.Stats.WronglyCleared}}
		if sn.Done && sn.Errno != "" {
			st.Message = p.o.Errors[i].Message()
			st.ReturnedBy = returnsFn(p.o.spec.Input, p.o.spec.Request, false)
		}
		if sn.Pending.Len > 0 {
			pd := sn.Pending
			st.Pending = &pd
		}
		st.SIT = p.o.sitTotals(i, r)
		if full || t.sent[i] == nil {
			t.sent[i] = map[uint32]segKey{}
		}
		st.Segments = p.o.segmentChanges(r, t.sent[i])
		out[i] = st
	}
	return out
}

// sitTotals are mode i's SIT totals now: the segments not touched yet are as before the run.
func (o *Outline) sitTotals(i int, r *core.Run) SITTotals {
	tb, tn, touched := r.SITTotals()
	all := o.sit[i]
	return SITTotals{Before: all.Before, Valid: all.Before - (tb - tn), Touched: touched, Segments: all.Segments}
}

// segmentChanges lists the outline's segments whose state differs from what the client holds
// (held: the ones that differ from the hello's), and updates held.
func (o *Outline) segmentChanges(r *core.Run, held map[uint32]segKey) []core.SegmentState {
	out := []core.SegmentState{}
	for k, sg := range o.Segments {
		base := o.segBase[k]
		now, ok := r.Segment(sg.Segno)
		key := base
		if ok {
			key = keyOf(now.Valid, now.Class, &now.Map)
		}
		had, ok2 := held[sg.Segno]
		if !ok2 {
			had = base
		}
		if key == had {
			continue
		}
		if key == base {
			delete(held, sg.Segno)
		} else {
			held[sg.Segno] = key
		}
		// The map before is the hello's (the client has it); an emptied map is all zeros, which an
		// empty string says too: a full state at the end of a run that empties thousands of segments
		// stays small.
		s := sg
		s.MapBefore = ""
		if ok {
			s.Valid, s.Class, s.Map = now.Valid, now.Class, ""
			if now.Map != ([64]byte{}) {
				s.Map = hex.EncodeToString(now.Map[:])
			}
		}
		out = append(out, s)
	}
	return out
}

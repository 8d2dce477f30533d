package core

import (
	"context"
	"errors"
	"math"
	"slices"
	"sort"
)

// Simulate runs the request to the end without keeping events.
func Simulate(in Input, req Request, mode Mode) (*Result, error) {
	return SimulateContext(context.Background(), in, req, mode)
}

// ctxEvery is how many turns of a loop pass between two looks at its context: a turn is one event
// or one dnode chunk's pass 2 (at most 1018 slots), so a cancelled walk stops within microseconds
// and the look costs nothing measurable.
const ctxEvery = 256

// SimulateContext is [Simulate] that stops, returning ctx.Err(), once ctx is done: a 64 GiB range
// is millions of events, and a server must not finish it for a client that has gone. The result
// does not depend on ctx otherwise.
func SimulateContext(ctx context.Context, in Input, req Request, mode Mode) (*Result, error) {
	e, err := newEngine(in, req, mode)
	if err != nil {
		return nil, err
	}
	e.ctx = ctx
	var ev Event
	for turn := 1; ; turn++ { // the context is looked at on turn 1, ctxEvery+1, …
		if turn%ctxEvery == 1 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		// Pass 2 without pausing, then one stepped event.
		if e.runPass2(math.MaxInt64, nil) || !e.next(&ev) {
			break
		}
	}
	if e.err != nil {
		return nil, e.err
	}
	return e.result()
}

// Walk runs the request to the end and hands every event to fn, which may
// stop the run early by returning false (then the Result is nil).
func Walk(in Input, req Request, mode Mode, fn func(*Event) bool) (*Result, error) {
	return WalkContext(context.Background(), in, req, mode, fn)
}

// WalkContext is [Walk] that stops, returning ctx.Err(), once ctx is done (see [SimulateContext]).
func WalkContext(ctx context.Context, in Input, req Request, mode Mode, fn func(*Event) bool) (*Result, error) {
	e, err := newEngine(in, req, mode)
	if err != nil {
		return nil, err
	}
	e.ctx = ctx
	var ev Event
	for turn := 1; ; turn++ { // the context is looked at on turn 1, ctxEvery+1, …
		if turn%ctxEvery == 1 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if e.runPass2(math.MaxInt64, fn) {
			return nil, e.err
		}
		if !e.next(&ev) {
			break
		}
		if !fn(&ev) {
			return nil, nil
		}
	}
	if e.err != nil {
		return nil, e.err
	}
	return e.result()
}

// DefaultCheckpointChunks spaces a Run's checkpoints: one before every fourth dnode chunk keeps a
// 64 GiB run's checkpoints and undo log near 10 MB while a seek replays at most four chunks
// (≈12,000 events). A run whose chunks each touch hundreds of segments logs more per checkpoint and
// is better played with a wider spacing (RunOptions.CheckpointChunks).
const DefaultCheckpointChunks = 4

// checkpoint is the engine's state just before a chunk's first event.
type checkpoint struct {
	s          scalars
	recLen     int
	allocLen   int
	sitLen     int
	touchedLen int
	callRuns   int
	lastCall   callRun
	callTail   []callRun // a bounded call list's runs, which trimming renumbers
	callTotal  uint64
	fills      int
}

// Run steps one request lazily, for a player. It keeps a checkpoint before
// every few dnode chunks so SeekTo is fast in both directions; memory grows
// with chunks, not events. A Run is not safe for concurrent use; Snapshot
// returns a value the caller may share.
type Run struct {
	e    *engine
	cps  []checkpoint
	last Event
}

// RunOptions tune a [Run].
type RunOptions struct {
	// CallHistory, when > 0, keeps only about the latest CallHistory calls (at least that many):
	// a player shows the latest calls, and its memory must not grow with the run. [Run.Result]
	// then simulates afresh for the full call list.
	CallHistory int
	// CheckpointChunks spaces the checkpoints SeekTo restores: one before every CheckpointChunks
	// dnode chunks (0 = DefaultCheckpointChunks). Wider spacing means a smaller undo log and longer
	// replays after a seek.
	CheckpointChunks int
	// Forward is for a run that never seeks back (an outline's pass): it keeps no checkpoints and
	// no undo log at all.
	Forward bool
}

// NewRunOptions prepares a run with options; no event has happened yet (Step 0).
func NewRunOptions(in Input, req Request, mode Mode, opt RunOptions) (*Run, error) {
	e, err := newEngine(in, req, mode)
	if err != nil {
		return nil, err
	}
	e.calls.limit = max(opt.CallHistory, 0)
	r := &Run{e: e}
	r.cps = append(r.cps, r.save())
	if opt.Forward {
		return r, nil
	}
	every := int32(DefaultCheckpointChunks)
	if opt.CheckpointChunks > 0 {
		every = int32(min(opt.CheckpointChunks, 1<<30))
	}
	e.slots.journal = true
	e.sit.journal = true
	e.onChunk = func() {
		if (e.s.chunk.ord+1)%every != 0 {
			return
		}
		// A new undo generation starts at every checkpoint, so the first
		// change of each segment after it is logged.
		e.sit.gen++
		if last := &r.cps[len(r.cps)-1]; e.s.step > last.s.step {
			r.cps = append(r.cps, r.save())
		}
	}
	return r, nil
}

func (r *Run) save() checkpoint {
	e := r.e
	c := checkpoint{s: e.s, recLen: len(e.slots.recLog), allocLen: len(e.slots.allocLog),
		sitLen: len(e.sit.log), touchedLen: len(e.sit.touched),
		callRuns: len(e.calls.runs), callTotal: e.calls.total, fills: len(e.fills)}
	if n := len(e.calls.runs); n > 0 {
		c.lastCall = e.calls.runs[n-1]
	}
	if e.calls.limit > 0 {
		c.callTail = slices.Clone(e.calls.runs[max(0, len(e.calls.runs)-e.calls.limit):])
	}
	return c
}

func (r *Run) restore(c *checkpoint) {
	e := r.e
	e.s = c.s
	e.err = nil
	e.slots.undo(c.recLen, c.allocLen)
	e.sit.undo(c.sitLen, c.touchedLen)
	e.sit.gen++
	if e.calls.limit > 0 {
		e.calls.runs = append(e.calls.runs[:0], c.callTail...)
	} else {
		e.calls.runs = e.calls.runs[:c.callRuns]
		if c.callRuns > 0 {
			e.calls.runs[c.callRuns-1] = c.lastCall
		}
	}
	e.calls.total = c.callTotal
	e.fills = e.fills[:c.fills]
	r.last = Event{}
}

// Step returns the number of events emitted so far.
func (r *Run) Step() int64 { return r.e.s.step }

// Done reports whether the final EvDone event has been emitted.
func (r *Run) Done() bool {
	r.e.settle()
	return r.e.s.phase == phEnd
}

// Err returns the source error that stopped the run, if any.
func (r *Run) Err() error { return r.e.err }

// Next returns the next event; false at the end or on a source error (see
// [Run.Err]).
func (r *Run) Next() (Event, bool) {
	var ev Event
	if !r.e.next(&ev) {
		return Event{}, false
	}
	r.last = ev
	return ev, true
}

// NextSlot returns the slot the next event will be about (the last one's
// at the end).
func (r *Run) NextSlot() uint64 {
	r.e.settle()
	return r.e.slotOfNext()
}

// InCall reports whether the next event is a SIT update of the call just made: a player that stops
// "after a call" steps until this is false, so counters and SIT maps agree.
func (r *Run) InCall() bool {
	r.e.settle()
	return r.e.s.phase == phInvSeg
}

// Changed returns the current content of every dnode the run has written so far, clipped to the
// file block indices [lo, hi), in index order with neighbours merged. Laid over the input's slots it
// gives the current slot map; it reads nothing from the input, and its size is that of what changed
// (a finished chunk is one NEW extent), not of the range.
func (r *Run) Changed(lo, hi uint64) []Extent {
	return r.e.changed(lo, hi)
}

// ErrForward is returned by SeekTo for a step back on a run made with RunOptions.Forward.
var ErrForward = errors.New("core: a forward-only run cannot seek back")

// ErrSeek is returned by SeekTo for a negative step.
var ErrSeek = errors.New("core: seek to a negative step")

// SeekTo moves to just after event number step (0 = before the first),
// restoring the nearest checkpoint behind it when going backwards. Past the
// end it stops at the last event.
func (r *Run) SeekTo(step int64) error {
	if step < 0 {
		return ErrSeek
	}
	e := r.e
	if step < e.s.step && !e.sit.journal && len(r.cps) == 1 && e.s.step > 0 {
		return ErrForward
	}
	if step < e.s.step || (step > 0 && step == e.s.step && r.last.Step != step) {
		// The checkpoint strictly before step, so at least one event is
		// replayed and r.last is right.
		i := sort.Search(len(r.cps), func(i int) bool { return r.cps[i].s.step >= step }) - 1
		i = max(i, 0)
		r.restore(&r.cps[i])
	}
	for e.s.step < step {
		// Pass 2 runs without pausing up to the event before step; that
		// one is stepped, so r.last is the event at step.
		if e.runPass2(step-1, nil) {
			break
		}
		if _, ok := r.Next(); !ok {
			break
		}
	}
	return e.err
}

// Snapshot window sizes.
const (
	SnapshotSegments = 256 // most recently touched segments
	SnapshotCalls    = 16  // most recent calls
)

// Pending is the batched mode's pending run (blkstart, blklen) and the slot that started it.
type Pending struct {
	Start uint32 `json:"start"`
	Len   uint32 `json:"len"`
	Slot  uint64 `json:"slot"`
}

// Snapshot is a value copy of a run's state after Step events. The web can
// JSON-encode it without locks.
type Snapshot struct {
	Mode      Mode   `json:"mode"`
	Step      int64  `json:"step"`
	Done      bool   `json:"done"`
	Errno     string `json:"errno"`
	Event     Event  `json:"event"` // the last event
	Narration string `json:"narration"`
	Slot      uint64 `json:"slot"`     // slot of the last event
	NextSlot  uint64 `json:"nextSlot"` // slot of the next event

	Chunk      int32   `json:"chunk"`      // current or last chunk, -1 before the first
	Node       string  `json:"node"`       // its dnode
	ChunkStart uint64  `json:"chunkStart"` // its range [ChunkStart, ChunkEnd)
	ChunkEnd   uint64  `json:"chunkEnd"`
	InChunk    bool    `json:"inChunk"`
	Pending    Pending `json:"pending"`

	ValidBlockCount uint64 `json:"validBlockCount"`
	ValidNodeCount  uint32 `json:"validNodeCount"`
	IBlocks         uint64 `json:"iBlocks"`
	ISize           int64  `json:"iSize"`
	NewSize         int64  `json:"newSize"`
	Advise          uint8  `json:"advise"`
	Stats           Stats  `json:"stats"`

	Segments  []SegmentState `json:"segments"`
	LastCalls []Call         `json:"lastCalls"`
}

// Snapshot returns the state after the current step.
func (r *Run) Snapshot() Snapshot {
	e := r.e
	e.settle()
	s := &e.s
	sn := Snapshot{Mode: e.mode, Step: s.step, Done: s.phase == phEnd, Errno: s.errno,
		Event: r.last, Slot: s.lastSlot, NextSlot: e.slotOfNext(),
		Chunk: s.chunk.ord, ChunkStart: s.chunk.lo, ChunkEnd: s.chunk.hi, InChunk: s.chunk.in,
		ValidBlockCount: s.counters.validBlocks, ValidNodeCount: s.counters.validNodes, IBlocks: s.counters.iBlocks,
		ISize: s.counters.iSize, NewSize: s.zr.newSize, Advise: s.counters.advise, Stats: s.stats,
		Segments: e.segmentStates(SnapshotSegments), LastCalls: e.calls.Last(SnapshotCalls)}
	if sn.LastCalls == nil {
		sn.LastCalls = []Call{}
	}
	if s.step > 0 {
		sn.Narration = r.last.Narrate()
		if r.last.Kind == EvDone && s.errno != "" {
			// A request refused before f2fs_zero_range is the VFS's or open(2)'s answer.
			sn.Narration = ReturnedBy(e.in, e.req) + " returns -" + s.errno
		}
	}
	if s.chunk.ord >= 0 {
		sn.Node = s.chunk.node.name()
	}
	sn.Stats.SegmentsTouched = uint64(len(e.sit.touched))
	if e.mode == Batched && s.chunk.in {
		sn.Pending = Pending{Start: s.run.start, Len: s.run.len, Slot: s.run.slot}
	}
	return sn
}

// ReadSlots reads the input's slot map over the file block indices [lo, hi) — the state a run
// starts from — as extents, a page at a time: it stops before the slot that would start extent
// maxExtents+1, or after maxDnodes dnodes, and returns the index to go on from (hi when done). A
// player sends the map of a long range in pages, so no one holds it whole.
func ReadSlots(in Input, lo, hi uint64, maxExtents, maxDnodes int) ([]Extent, uint64, error) {
	if err := in.check(); err != nil {
		return nil, lo, err
	}
	inline := in.Inode.Inline&(InlineData|InlineDentry) != 0
	o := newSlotOverlay(in.Slots, in.Inode.geom(), inline)
	var b extentBuilder
	var buf []uint32
	idx := lo
	for dn := 0; idx < hi && dn < max(maxDnodes, 1); dn++ {
		var pos dnodePos
		var err error
		pos, buf, _, err = o.read(idx, buf)
		if err != nil {
			return nil, idx, err
		}
		end := min(hi, pos.start+uint64(pos.cap))
		for ; idx < end; idx++ {
			n := len(b.ext)
			b.add(idx, buf[idx-pos.start])
			if len(b.ext) > maxExtents && maxExtents > 0 {
				b.ext = b.ext[:n]
				return b.ext, idx, nil
			}
		}
	}
	if b.ext == nil {
		b.ext = []Extent{}
	}
	return b.ext, idx, nil
}

// Segments returns up to limit of the segments the run has touched so far, in the order it first
// touched them, each as it was before the run and as it is now (limit ≤ 0: all).
func (r *Run) Segments(limit int) []SegmentState {
	t := r.e.sit.touched
	if limit > 0 && len(t) > limit {
		t = t[:limit]
	}
	return r.e.statesOf(t)
}

// SegmentNow is one segment's SIT entry as a run has it now: its valid count, class and
// cur_valid_map.
type SegmentNow struct {
	Valid int32
	Class SegClass
	Map   [64]byte
}

// Segment returns segment segno's entry now; ok is false when the run has not read the segment
// (then it is as it was before the run, which the caller knows).
func (r *Run) Segment(segno uint32) (s SegmentNow, ok bool) {
	st := r.e.sit.segs[segno]
	if st == nil {
		return SegmentNow{}, false
	}
	return SegmentNow{Valid: st.Count(), Class: st.class, Map: st.Map()}, true
}

// SITTotals sums the SIT valid counts of the segments the run has touched so far, before the run
// and now (a segment's count below zero — a corrupt image — counts as 0). It is exact for any
// number of segments: a player's totals come from here, not from the segments it lists.
func (r *Run) SITTotals() (before, now uint64, touched int) {
	for _, no := range r.e.sit.touched {
		st := r.e.sit.segs[no]
		before += uint64(st.origValid)
		now += uint64(st.Valid())
	}
	return before, now, len(r.e.sit.touched)
}

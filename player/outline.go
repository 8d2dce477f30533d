// Package player plays a walked call — a zero range, a punch hole or a truncate — for people
// watching it: one engine per mode (per-block, batched or both) behind a single step counter, kept
// in lockstep by slot, with seeking, stepping to the end of the next f2fs_invalidate_blocks call, and
// the slot and SIT state at any step. Its [Outline] — chunks, slider markers, tour stops, the SIT
// before the run — is computed once per run and shared read-only by every viewer; a [Player] is one
// viewer's cursor, whose memory does not grow with the number of slots. The package knows nothing
// of HTTP or websockets.
package player

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/zrviz/zrviz/core"
)

// Describer gives facts about the image that the engine does not need but people do: which node a
// dnode is and what log a segment belongs to. *imgio-backed values implement it in web; nil is fine.
type Describer interface {
	// DnodeID returns the kind ("inode" or "direct") and node id of the existing dnode that holds
	// file block index; ok is false when the dnode does not exist (the run allocates it).
	DnodeID(index uint64) (kind string, nid uint32, ok bool)
	// SegmentType returns a main-area segment's log type, 0 to 5 (hot/warm/cold data, hot/warm/cold
	// node), or -1 when unknown.
	SegmentType(segno uint32) int
}

// Spec is a run to play: what the engines read, the request and the modes.
type Spec struct {
	Input    core.Input
	Request  core.Request
	Modes    []core.Mode // one or two; per-block first
	Describe Describer   // may be nil
	// Compression is the file's compression as the pages name it ("compressed (lz4, cluster 4
	// blocks)"), "" when it is not compressed or not known; the outcome quotes it.
	Compression string
}

// Range is the file block indices [Start, End) of the request's pages: the whole pages the dnode
// loop walks and the partial head and tail pages fill_zero handles, up to where the run can reach
// (see [PagesOf]).
type Range struct {
	Start uint64 `json:"start"`
	End   uint64 `json:"end"`
}

// Chunk is one dnode chunk of the run: the part of one dnode that one f2fs_do_zero_range call handles.
type Chunk struct {
	Start   uint64   `json:"start"` // first file block index of the range in this chunk
	Len     uint64   `json:"len"`
	Node    string   `json:"node"` // "inode", "i_nid[0]", "i_nid[2]/3", "i_nid[4]/1/7"
	Kind    string   `json:"kind"` // "inode" or "direct"
	Nid     uint32   `json:"nid"`  // 0 when the run allocates the node
	Missing int      `json:"missing"`
	Step    int64    `json:"step"`  // player step of its chunk-enter event
	Calls   []uint64 `json:"calls"` // f2fs_invalidate_blocks calls made in it, per mode
	// End is the player step of the last mode's leaving it (every mode has left it by then), -1
	// when some mode never does (an error ends the run inside it). Until then Calls may still grow,
	// so a quiz withholds them while a question asked before End is open (web/quizhold.go).
	End int64 `json:"-"`
}

// Marker is a tick on the seek slider.
type Marker struct {
	Step int64  `json:"step"`
	Kind string `json:"kind"` // "chunk", "flush", "error"
	Mode string `json:"mode,omitempty"`
}

// Limits of an outline: whatever the run's length, an outline stays small.
const (
	MaxMarkers  = 4096 // slider ticks
	MaxSegments = 4096 // touched segments whose SIT before the run is kept
	cpEvery     = 1024 // player steps between lockstep checkpoints of a two-mode run
)

// Outline is a run from start to end, computed in one lockstep pass and shared read-only by every
// viewer of the same run.
type Outline struct {
	spec     Spec
	Total    int64               // steps of the run; step Total is the end
	Range    Range               // the request's pages
	Chunks   []Chunk             // in order
	Markers  []Marker            // in step order, at most MaxMarkers
	Thinned  bool                // markers were left out to stay within MaxMarkers
	Stops    []Stop              // the guided tour, in step order
	Segments []core.SegmentState // touched segments (first MaxSegments), before the run, first touch first
	SegTypes map[uint32]int      // log type of each segment in Segments
	Final    []core.Snapshot     // each mode's state at the end
	Errors   []core.Event        // each mode's error event (zero when it succeeded)
	prefix   []uint64            // prefix[i] = slots of the chunks before chunk i
	cps      [][]int64           // engine steps at player step k·cpEvery (two modes)
	stopsAt  map[int64]int       // stop index by step
	segBase  []segKey            // Segments[k] before the run
	sit      []SITTotals         // per mode: the SIT totals over every segment the run touches
	// stopEvents holds the event each kind of stop was made from, while Build runs.
	stopEvents map[string]core.Event
	// checkpointChunks spaces a viewer's engine checkpoints so its SIT undo log stays within
	// maxViewerUndo; undoEntries is the log a viewer holds at the end with that spacing (an
	// estimate, the larger mode's).
	checkpointChunks int
	undoEntries      int64
}

// maxViewerUndo bounds the SIT undo log of one viewer's engine. A run whose dnode chunks each touch
// hundreds of segments (a crafted file whose every block lies in another segment) logs a copy of
// every touched segment per checkpoint: its viewers checkpoint less often instead, and replay more
// after a seek.
const maxViewerUndo = 1 << 20

// Modes returns the run's modes, per-block first.
func (o *Outline) Modes() []core.Mode { return o.spec.Modes }

// ViewerBytes estimates the memory one viewer's player holds: its engines' touched segments, SIT
// undo log, checkpoints and slot records, and what a Tracker remembers — not the run's slots.
func (o *Outline) ViewerBytes() int64 {
	var segs uint64
	for _, f := range o.Final {
		segs = max(segs, f.Stats.SegmentsTouched)
	}
	modes := int64(len(o.spec.Modes))
	chunks := int64(len(o.Chunks))
	every := int64(max(o.checkpointChunks, 1))
	return 256<<10 + modes*(int64(segs)*(400+48)+o.undoEntries*core.SITUndoBytes+chunks/every*1024+chunks*160)
}

// undoCounter estimates, during Build's pass, the SIT undo log a viewer's engine would keep: the
// segments each mode changes within each window of DefaultCheckpointChunks chunks.
type undoCounter struct {
	window  []map[uint32]bool
	entries []int64
	last    []int32 // the window of the previous change, per mode
}

func newUndoCounter(modes int) *undoCounter {
	u := &undoCounter{window: make([]map[uint32]bool, modes), entries: make([]int64, modes), last: make([]int32, modes)}
	for i := range u.window {
		u.window[i] = map[uint32]bool{}
		u.last[i] = -1
	}
	return u
}

func (u *undoCounter) add(ev core.Event, i int) {
	if ev.Kind != core.EvSITUpdate {
		return
	}
	w := ev.Chunk / core.DefaultCheckpointChunks
	if w != u.last[i] {
		clear(u.window[i])
		u.last[i] = w
	}
	if !u.window[i][ev.Segno] {
		u.window[i][ev.Segno] = true
		u.entries[i]++
	}
}

// spacing picks the checkpoint spacing that keeps a viewer's undo log within maxViewerUndo, and
// the log it then holds: a segment touched in every window is logged once per checkpoint, so the
// log shrinks in proportion to the spacing.
func (u *undoCounter) spacing() (chunks int, entries int64) {
	for _, e := range u.entries {
		entries = max(entries, e)
	}
	chunks = core.DefaultCheckpointChunks
	for entries*core.SITUndoBytes > maxViewerUndo && chunks < 1<<16 {
		chunks *= 2
		entries = (entries + 1) / 2
	}
	return chunks, entries
}

// Bytes estimates the memory the outline holds, for a server's budget.
func (o *Outline) Bytes() int64 {
	return 1024 + int64(len(o.Chunks))*(96+16*int64(len(o.spec.Modes))) + int64(len(o.Markers))*40 +
		int64(len(o.Stops))*600 + int64(len(o.Segments))*400 + int64(len(o.cps))*(24+8*int64(len(o.spec.Modes)))
}

// ErrNoModes is returned by Build for a Spec without modes.
var ErrNoModes = errors.New("player: no mode to play")

// Build walks the whole run once, in lockstep, and records its outline. It checks ctx every few
// thousand steps, so a cancelled request stops the work.
func Build(ctx context.Context, spec Spec) (*Outline, error) {
	if len(spec.Modes) == 0 || len(spec.Modes) > 2 {
		return nil, ErrNoModes
	}
	o := &Outline{spec: spec, Range: PagesOf(spec), Markers: []Marker{}, Chunks: []Chunk{},
		SegTypes: map[uint32]int{}}
	// The pass never seeks back: its engines keep no undo log.
	l, err := newLockstep(spec, core.RunOptions{Forward: true})
	if err != nil {
		return nil, err
	}
	undo := newUndoCounter(len(spec.Modes))
	o.Errors = make([]core.Event, len(spec.Modes))
	o.stopEvents = map[string]core.Event{}
	tour := newTourBuilder(o)
	var perBlockFlushes []Marker // per-block calls: ticks only when few
	chunkLeft := map[int]int{}   // modes that have left each chunk (Chunk.End)
	for {
		if len(l.runs) > 1 && l.step%cpEvery == 0 && int64(len(o.cps)) == l.step/cpEvery {
			cp := make([]int64, len(l.runs))
			for i, r := range l.runs {
				cp[i] = r.Step()
			}
			o.cps = append(o.cps, cp)
		}
		if l.step%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		ev, i, ok, err := l.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		mode := spec.Modes[i]
		switch ev.Kind {
		case core.EvChunkEnter:
			if i == 0 {
				c := Chunk{Start: ev.Slot, Len: ev.Count, Node: ev.Node, Kind: "direct", Step: l.step,
					Calls: make([]uint64, len(spec.Modes)), End: -1}
				if ev.Node == "inode" {
					c.Kind = "inode"
				}
				if spec.Describe != nil {
					if k, nid, ok := spec.Describe.DnodeID(ev.Slot); ok {
						c.Kind, c.Nid = k, nid
					}
				}
				o.Chunks = append(o.Chunks, c)
				o.Markers = append(o.Markers, Marker{Step: l.step, Kind: "chunk"})
			}
		case core.EvChunkLeave:
			if c := int(ev.Chunk); c >= 0 && c < len(o.Chunks) {
				chunkLeft[c]++
				if chunkLeft[c] == len(spec.Modes) {
					o.Chunks[c].End = l.step
				}
			}
		case core.EvNodeAlloc:
			if i == 0 && len(o.Chunks) > 0 && ev.Chunk == int32(len(o.Chunks)-1) {
				o.Chunks[len(o.Chunks)-1].Missing++
			}
		case core.EvInvalidate:
			if c := int(ev.Chunk); c >= 0 && c < len(o.Chunks) {
				o.Chunks[c].Calls[i]++
			}
			m := Marker{Step: l.step, Kind: "flush", Mode: mode.String()}
			if ev.Action == core.ActPerBlock {
				if len(perBlockFlushes) <= MaxMarkers {
					perBlockFlushes = append(perBlockFlushes, m)
				}
			} else {
				o.Markers = append(o.Markers, m)
			}
		case core.EvError:
			o.Markers = append(o.Markers, Marker{Step: l.step, Kind: "error", Mode: mode.String()})
			o.Errors[i] = ev
		}
		tour.add(ev, i, l.step)
		undo.add(ev, i)
		if len(o.Markers) > 4*MaxMarkers {
			o.Markers, o.Thinned = thinMarkers(o.Markers, MaxMarkers), true
		}
	}
	o.Total = l.step
	if len(o.Markers)+len(perBlockFlushes) <= MaxMarkers {
		o.Markers = append(o.Markers, perBlockFlushes...)
		slices.SortStableFunc(o.Markers, func(a, b Marker) int { return int(a.Step - b.Step) })
	} else {
		o.Thinned = o.Thinned || len(perBlockFlushes) > 0
		if len(o.Markers) > MaxMarkers {
			o.Markers, o.Thinned = thinMarkers(o.Markers, MaxMarkers), true
		}
	}
	o.prefix = make([]uint64, len(o.Chunks)+1)
	for i, c := range o.Chunks {
		o.prefix[i+1] = o.prefix[i] + c.Len
	}
	o.Segments = l.runs[0].Segments(MaxSegments)
	for _, sg := range o.Segments {
		t := -1
		if spec.Describe != nil {
			t = spec.Describe.SegmentType(sg.Segno)
		}
		o.SegTypes[sg.Segno] = t
	}
	o.segBase = make([]segKey, len(o.Segments))
	for k, sg := range o.Segments {
		var m [64]byte
		if _, err := hex.Decode(m[:], []byte(sg.MapBefore)); err != nil {
			return nil, fmt.Errorf("player: segment %d: %w", sg.Segno, err)
		}
		o.segBase[k] = keyOf(int32(sg.ValidBefore), sg.ClassBefore, &m)
		// What a listed segment is before the run, whatever the engine says of it now.
		sg.Valid, sg.Map, sg.Class = int32(sg.ValidBefore), sg.MapBefore, sg.ClassBefore
		o.Segments[k] = sg
	}
	for _, r := range l.runs {
		o.Final = append(o.Final, r.Snapshot())
		before, _, touched := r.SITTotals()
		o.sit = append(o.sit, SITTotals{Before: before, Segments: touched})
	}
	o.checkpointChunks, o.undoEntries = undo.spacing()
	o.Stops = tour.finish()
	o.stopEvents = nil
	o.stopsAt = make(map[int64]int, len(o.Stops))
	for k, s := range o.Stops {
		o.stopsAt[s.Step] = k
	}
	return o, nil
}

// PagesOf is the pages of spec's request a run can reach: [core.PagesOf] (empty when the kernel
// refuses the request's arguments) up to [core.Pages.Reach] (a range past the volume's free space
// ends with ENOSPC long before its end). The outline, a viewer's page and the server's budget all
// use it, so they agree on what the run really walks. A truncate (whose request has no length)
// walks from the page its new size falls in (truncate_partial_data_page) to the end of the dnode
// of the file's last slot or page: f2fs_truncate_blocks frees everything past the size; a size past
// the end walks nothing. An unlink walks as a truncate to 0.
func PagesOf(spec Spec) Range {
	if req := spec.Request; req.Op == core.OpTruncate || req.Op == core.OpUnlink {
		// An unlink walks as a truncate to 0 does (f2fs_evict_inode → f2fs_truncate).
		in := &spec.Input.Inode
		if req.Op == core.OpUnlink {
			req.Offset = 0
		}
		if req.Offset < 0 {
			return Range{}
		}
		start := uint64(req.Offset) >> 12
		end := max(in.SlotsEnd, (uint64(max(in.Size, 0))+4095)>>12)
		// f2fs_setattr truncates when the size does not grow (ia_size <= i_size): at i_size too,
		// which frees the blocks preallocated past it.
		if req.Offset > in.Size || end <= start {
			return Range{Start: start, End: start}
		}
		// f2fs_truncate_inode_blocks clears each dnode from the size to its last slot: the range
		// ends with the dnode of the file's last slot or page.
		s, n := core.DnodeOf(end-1, in.AddrsPerInode)
		return Range{Start: start, End: max(end, s+uint64(n))}
	}
	p := core.PagesOf(spec.Input, spec.Request).Reach(spec.Input)
	return Range{Start: p.Start, End: p.End}
}

// thinMarkers keeps chunk and error markers first, then spreads the rest evenly.
func thinMarkers(ms []Marker, limit int) []Marker {
	var keep, rest []Marker
	for _, m := range ms {
		if m.Kind != "flush" && len(keep) < limit {
			keep = append(keep, m)
		} else {
			rest = append(rest, m)
		}
	}
	if room := limit - len(keep); room > 0 && len(rest) > 0 {
		for k := 0; k < room; k++ {
			keep = append(keep, rest[k*len(rest)/room])
		}
	}
	slices.SortStableFunc(keep, func(a, b Marker) int { return int(a.Step - b.Step) })
	return keep
}

// InitialSlots returns a page of the slot map the run starts from, over the outline's range from
// file block index from: at most maxExtents extents, and the index the next page starts at
// (Range.End when this was the last).
func (o *Outline) InitialSlots(from uint64, maxExtents int) ([]core.Extent, uint64, error) {
	from = max(from, o.Range.Start)
	if from >= o.Range.End {
		return []core.Extent{}, o.Range.End, nil
	}
	ext, next, err := core.ReadSlots(o.spec.Input, from, o.Range.End, maxExtents, 1024)
	if err != nil {
		return nil, from, fmt.Errorf("player: slots from %d: %w", from, err)
	}
	return ext, next, nil
}

// visited counts the slots of the range pass 2 is done with in a snapshot.
func (o *Outline) visited(sn *core.Snapshot) uint64 {
	c := int(sn.Chunk)
	switch {
	case c < 0:
		return 0
	case c >= len(o.Chunks):
		return o.prefix[len(o.Chunks)]
	case sn.InChunk:
		return o.prefix[c] + min(sn.NextSlot-min(sn.NextSlot, sn.ChunkStart), o.Chunks[c].Len)
	}
	return o.prefix[c+1]
}

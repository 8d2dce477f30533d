package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-chi/chi/v5"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

// The player's "what happens next" panel (static/js/nextpanel.js) asks
// GET /api/images/{id}/next?path=&offset=&length=&keepSize=&before=…&policy=&now=&at=&quiz=
// for one frame of the timeline after the run: the run's end state (per-block and batched leave
// the same SIT), a checkpoint, then the cleaner call by call (gc.NewTimeline). The server
// computes everything the panel shows, the words too; the page only draws it. A frame depends on
// nothing but the URL, so any path of the panel's controls to a frame shows what a fresh load of
// it shows.

// The panel's policies: greedy runs foreground calls (gc 1), cost-benefit background ones (gc 0).
const (
	policyGreedy      = "greedy"
	policyCostBenefit = "cost-benefit"
)

// maxNextTimelines bounds the timelines a nextCache keeps.
const maxNextTimelines = 16

// maxNextQuestions is how many cleaner calls of a timeline ask "which section next?".
const maxNextQuestions = 3

// maxNextBases bounds the clock-free states a nextCache keeps.
const maxNextBases = 4

// nextCache keeps the timelines of recent (run, clock, policy) triples: the panel asks for one
// frame at a time, and stepping through a timeline should not replay the run each time. It also
// keeps, per run, the segment manager its sequence leaves before the clock is applied
// (gc.State.AtClock): a new clock redoes the sequence's mtime updates, not the sequence (issue 37:
// 6.6–7.0 CPU-s a value), as the resolved-input cache keeps a run's operations. A kept state is
// charged to the budget (gcBytes and its record of updates) until it is evicted.
type nextCache struct {
	mu     sync.Mutex
	m      map[string]*gc.Timeline
	order  []string // oldest first
	builds int      // timelines built, for tests

	bases     map[string]nextBase
	baseOrder []string
	replays   int     // sequences replayed for the panel, for tests
	budget    *budget // nil: kept states are not charged
}

type nextBase struct {
	st      *gc.State
	charged int64
}

func newNextCache(b *budget) *nextCache {
	return &nextCache{m: map[string]*gc.Timeline{}, bases: map[string]nextBase{}, budget: b}
}

// base returns the clock-free state for key, computing it with build on a miss (charged as
// size says while kept; one that does not fit is handed to its request and not kept).
func (c *nextCache) base(key string, build func() (*gc.State, int64, error)) (*gc.State, error) {
	c.mu.Lock()
	e, ok := c.bases[key]
	c.mu.Unlock()
	if ok {
		return e.st, nil
	}
	st, size, err := build()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.bases[key]; ok || !c.budget.take(size, false) {
		return st, nil
	}
	c.bases[key] = nextBase{st: st, charged: size}
	c.baseOrder = append(c.baseOrder, key)
	if len(c.baseOrder) > maxNextBases {
		old := c.bases[c.baseOrder[0]]
		c.budget.give(old.charged)
		delete(c.bases, c.baseOrder[0])
		c.baseOrder = c.baseOrder[1:]
	}
	return st, nil
}

// replayed counts a sequence replay.
func (c *nextCache) replayed() {
	c.mu.Lock()
	c.replays++
	c.mu.Unlock()
}

func (c *nextCache) get(key string, build func() (*gc.Timeline, error)) (*gc.Timeline, error) {
	c.mu.Lock()
	tl, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return tl, nil
	}
	tl, err := build()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.builds++
	if _, ok := c.m[key]; !ok {
		c.m[key] = tl
		c.order = append(c.order, key)
		if len(c.order) > maxNextTimelines {
			delete(c.m, c.order[0])
			c.order = c.order[1:]
		}
	}
	return c.m[key], nil
}

// afterRun is the segment manager as the run leaves it: the run's image mounted with its earlier
// operations and the run itself played on one mount (source.NewSeq, per block as the kernel's
// update_segment_mtime sees each f2fs_invalidate_blocks call; writes, writeback, syncs, checkpoints
// and gc as the ops language runs them), at the clock now unless an operation set a later one.
// A sequence whose choices do not read the clock (clockFree) is run once, tracked, and each clock
// redoes its mtime updates on the kept state (gc.State.AtClock); any other is replayed at now.
func (s *Server) afterRun(ctx context.Context, t *runTarget, now uint64) (*gc.State, error) {
	if t.si == nil {
		return nil, badParam("image", "a sandbox run has no image to collect")
	}
	// The earlier operations, then the played zero (punch, truncate), on one mount.
	ops := append(slices.Clip(t.before), request.RunOp(t.run))
	if clockFree(ops) {
		base, err := s.next.base(fmt.Sprintf("%p\x00%s", t.si, t.key()), func() (*gc.State, int64, error) {
			st, err := s.replayAt(ctx, t, ops, 0, true)
			if err != nil {
				return nil, 0, err
			}
			return st, gcBytes(st.Segments()) + st.TrackedBytes(), nil
		})
		if err != nil {
			return nil, err
		}
		if st, ok := base.AtClock(now); ok {
			return st, nil
		}
	}
	return s.replayAt(ctx, t, ops, now, false)
}

// replayAt runs ops on a fresh mount of t's image at the clock now (tracked: recording the mtime
// updates for gc.State.AtClock) and returns the segment manager they leave.
func (s *Server) replayAt(ctx context.Context, t *runTarget, ops []request.Op, now uint64, tracked bool) (*gc.State, error) {
	s.next.replayed()
	q, err := source.NewSeq(ctx, t.si.Image, core.PerBlock)
	if err != nil {
		return nil, err
	}
	q.SetNow(now)
	if tracked {
		q.TrackMtimes()
	}
	if err := source.RunOps(ctx, q, t.si.Image, ops, nil); err != nil {
		return nil, err
	}
	st := q.GCState()
	if st.Now < now {
		st.Now = now
	}
	return st, nil
}

// clockFree reports whether nothing in ops reads or sets the clock: no `now` and no background
// (cost-benefit, gc 0) collection, whose victim depends on ages. Their mtimes alone depend on it
// (f2fs_balance_fs's and SSR's searches are greedy).
func clockFree(ops []request.Op) bool {
	for _, op := range ops {
		if op.Kind == request.OpNow || (op.Kind == request.OpGC && op.Value == 0) {
			return false
		}
	}
	return true
}

// nextQuery is what a frame request asks beyond the run: the policy, the clock, the frame and
// whether the quiz is on.
type nextQuery struct {
	policy string
	now    uint64
	at     int
	quiz   bool
}

func parseNextQuery(q url.Values) (nextQuery, error) {
	n := nextQuery{policy: policyGreedy, quiz: q.Get("quiz") == "1"}
	switch p := q.Get("policy"); p {
	case "", policyGreedy:
	case policyCostBenefit:
		n.policy = p
	default:
		return n, badParam("policy", fmt.Sprintf("%q: want greedy or cost-benefit", p))
	}
	var err error
	if n.now, err = gcNow(q.Get("now")); err != nil {
		return n, err
	}
	if v := q.Get("at"); v != "" {
		at, err := strconv.Atoi(v)
		if err != nil || at < 0 {
			return n, badParam("at", fmt.Sprintf("%q: want a frame number from 0", v))
		}
		n.at = at
	}
	return n, nil
}

func (n nextQuery) kind() gc.Kind {
	if n.policy == policyGreedy {
		return gc.Foreground
	}
	return gc.Background
}

// timeline returns the run's timeline for the query's clock and policy.
func (s *Server) timeline(ctx context.Context, t *runTarget, n nextQuery) (*gc.Timeline, error) {
	key := fmt.Sprintf("%p\x00%s\x00%d\x00%s", t.si, t.key(), n.now, n.policy)
	return s.next.get(key, func() (*gc.Timeline, error) {
		done, err := s.reserveHeavy(ctx, nextBytes(t))
		if err != nil {
			return nil, err
		}
		defer done()
		st, err := s.afterRun(ctx, t, n.now)
		if err != nil {
			return nil, err
		}
		return gc.NewTimeline(st, n.kind(), 0), nil
	})
}

func (s *Server) handleNext(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	q.Set("image", chi.URLParam(r, "id"))
	n, err := parseNextQuery(q)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	t, err := s.resolveRun(r.Context(), q)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	tl, err := s.timeline(r.Context(), t, n)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	// A frame past the end (a permalink of a longer timeline, a policy or clock changed at a late
	// frame) is the last one; the body says which frame it is.
	n.at = min(n.at, len(tl.Frames)-1)
	writeJSON(w, http.StatusOK, nextBodyOf(tl, n))
}

// nextBody is one frame of the timeline, with the list of all frames (their labels say nothing a
// question asks) and the tour's stops.
type nextBody struct {
	Policy     string          `json:"policy"`
	Call       string          `json:"call"` // "gc 1" or "gc 0"
	Now        uint64          `json:"now"`
	SegsPerSec uint32          `json:"segsPerSec"`
	Segments   int             `json:"segments"`
	At         int             `json:"at"`
	Quiz       bool            `json:"quiz"`
	Frames     []nextFrameHead `json:"frames"`
	Stops      []nextStop      `json:"stops"`
	Frame      nextFrame       `json:"frame"`
}

type nextFrameHead struct {
	Kind  string `json:"kind"`
	Round int    `json:"round"`
	Label string `json:"label"`
}

// nextStop is a tour stop of the timeline; a question is asked at its frame and answered by the
// next one (the victim frame).
type nextStop struct {
	At       int           `json:"at"`
	Title    string        `json:"title"`
	Text     string        `json:"text"`
	Terms    []string      `json:"terms"`
	Question *nextQuestion `json:"question,omitempty"`
}

type nextQuestion struct {
	Text    string   `json:"text"`
	Choices []string `json:"choices"` // "segment N", in segment order
	Reveal  int      `json:"reveal"`  // the frame that shows the answer
}

type nextCandidate struct {
	Segno uint32  `json:"segno"`
	Valid uint32  `json:"valid"`
	Mtime uint64  `json:"mtime"`
	U     *uint32 `json:"u,omitempty"`
	Age   *uint32 `json:"age,omitempty"`
	Cost  *uint32 `json:"cost,omitempty"` // absent while a question is open
	Rank  int     `json:"rank,omitempty"` // 1 = cheapest; 0 while a question is open
}

type nextOther struct {
	Policy     string          `json:"policy"`
	Call       string          `json:"call"`
	Victim     *uint32         `json:"victim"`
	Candidates []nextCandidate `json:"candidates"`
}

type nextMove struct {
	gc.MoveRun
	LogName string `json:"logName"`
}

type nextCount struct {
	Class string `json:"class"`
	N     int    `json:"n"`
}

// nextFrame is what the panel shows at one frame.
type nextFrame struct {
	Kind      string `json:"kind"`
	Round     int    `json:"round"`
	Label     string `json:"label"`
	Narration string `json:"narration"`
	// The segment map: one class letter per segment (f free, d dirty, F full, p prefree,
	// c current), the valid blocks, the sections a background call marked.
	Classes string      `json:"classes"`
	Valid   []uint16    `json:"valid"`
	Marked  []uint32    `json:"marked"`
	Counts  []nextCount `json:"counts"`
	// Victim is the chosen section's first segment, from the victim frame on (null before, and
	// on search frames, whose ranking is the question a quiz asks).
	Victim     *uint32         `json:"victim"`
	Candidates []nextCandidate `json:"candidates"`
	Veiled     bool            `json:"veiled"` // a quiz question is open: no ranking, no cost terms
	Searched   int             `json:"searched"`
	Other      *nextOther      `json:"other,omitempty"`
	Moves      []nextMove      `json:"moves"`
	Freed      []uint32        `json:"freed"`
	Ops        []string        `json:"ops"` // the ops language's lines that reach this frame's map
}

func callOf(k gc.Kind) string {
	if k == gc.Foreground {
		return "gc 1"
	}
	return "gc 0"
}

func policyOf(k gc.Kind) string {
	if k == gc.Foreground {
		return policyGreedy
	}
	return policyCostBenefit
}

// frameLabel names a frame without telling what it found.
func frameLabel(f gc.Frame, call string) string {
	switch f.Kind {
	case gc.FrameStart:
		return "after the run"
	case gc.FrameCheckpoint:
		return "checkpoint"
	case gc.FrameSearch:
		return fmt.Sprintf("%s #%d: search", call, f.Round)
	case gc.FrameVictim:
		return fmt.Sprintf("%s #%d: victim", call, f.Round)
	case gc.FrameMove:
		return fmt.Sprintf("%s #%d: blocks move", call, f.Round)
	case gc.FrameSync:
		return fmt.Sprintf("%s #%d: sync", call, f.Round)
	case gc.FrameNone:
		return fmt.Sprintf("%s #%d: nothing to collect", call, f.Round)
	}
	return fmt.Sprintf("%s #%d: the model stops", call, f.Round)
}

// questionAt reports whether the quiz asks "which section next?" at frame k: the search frames of
// the first maxNextQuestions calls with at least two candidates to choose from.
func questionAt(tl *gc.Timeline, k int) bool {
	f := tl.Frames[k]
	return f.Kind == gc.FrameSearch && f.Round <= maxNextQuestions && len(f.Pick.Candidates) > 1
}

func nextBodyOf(tl *gc.Timeline, n nextQuery) nextBody {
	call := callOf(tl.Kind)
	b := nextBody{Policy: n.policy, Call: call, Now: n.now, SegsPerSec: tl.SegsPerSec, At: n.at, Quiz: n.quiz,
		Segments: len(tl.Frames[0].Map.Classes)}
	for _, f := range tl.Frames {
		b.Frames = append(b.Frames, nextFrameHead{Kind: f.Kind, Round: f.Round, Label: frameLabel(f, call)})
	}
	b.Stops = nextStops(tl)
	b.Frame = frameOf(tl, n.at, n.quiz && questionAt(tl, n.at))
	return b
}

func candidatesOf(cs []gc.Candidate, veiled bool) []nextCandidate {
	out := make([]nextCandidate, len(cs))
	for i, c := range cs {
		// A question shows every term a policy weighs — valid blocks, u, mtime and age (issue
		// 30: cost-benefit's answer depends on the age) — and withholds the cost and the rank.
		u, age := c.U, c.Age
		out[i] = nextCandidate{Segno: c.Segno, Valid: c.Valid, Mtime: c.Mtime, U: &u, Age: &age}
		if !veiled {
			cost := c.Cost
			out[i].Cost, out[i].Rank = &cost, i+1
		}
	}
	if veiled {
		sort.Slice(out, func(i, j int) bool { return out[i].Segno < out[j].Segno })
	}
	return out
}

func frameOf(tl *gc.Timeline, k int, veiled bool) nextFrame {
	f := tl.Frames[k]
	call := callOf(tl.Kind)
	nf := nextFrame{Kind: f.Kind, Round: f.Round, Label: frameLabel(f, call), Classes: f.Map.Classes, Valid: f.Map.Valid,
		Marked: f.Map.Marked, Candidates: []nextCandidate{}, Moves: []nextMove{}, Freed: []uint32{}, Ops: []string{}, Veiled: veiled}
	if nf.Marked == nil {
		nf.Marked = []uint32{}
	}
	counts := map[byte]int{}
	for i := 0; i < len(f.Map.Classes); i++ {
		counts[f.Map.Classes[i]]++
	}
	for _, c := range segmentClassLetters() {
		nf.Counts = append(nf.Counts, nextCount{Class: c.class.String(), N: counts[c.letter]})
	}
	for _, op := range tl.MapOps(k) {
		nf.Ops = append(nf.Ops, request.GCOpLine(op))
	}
	for _, m := range f.Moves {
		nf.Moves = append(nf.Moves, nextMove{MoveRun: m, LogName: logTypeNames()[m.Log]})
	}
	if f.Checkpoint != nil && f.Checkpoint.Freed != nil {
		nf.Freed = f.Checkpoint.Freed
	}
	if p := f.Pick; p != nil {
		nf.Searched = p.Searched
		nf.Candidates = candidatesOf(p.Candidates, veiled)
		if f.Kind != gc.FrameSearch {
			nf.Victim = p.Victim
		}
		if f.Other != nil && !veiled && f.Kind == gc.FrameSearch {
			other := gc.Background
			if tl.Kind == gc.Background {
				other = gc.Foreground
			}
			nf.Other = &nextOther{Policy: policyOf(other), Call: callOf(other), Victim: f.Other.Victim,
				Candidates: candidatesOf(f.Other.Candidates, false)}
		}
	}
	nf.Narration = narration(tl, k, veiled)
	return nf
}

func segList(s []uint32) string {
	const most = 12
	parts := make([]string, 0, most+1)
	for i, x := range s {
		if i == most {
			parts = append(parts, fmt.Sprintf("… %d more", len(s)-most))
			break
		}
		parts = append(parts, strconv.FormatUint(uint64(x), 10))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// movesText says where a call's blocks went: "412 to segment 9 (cold data)".
func movesText(ms []gc.MoveRun) string {
	to := map[[2]uint32]int{}
	var order [][2]uint32
	for _, m := range ms {
		k := [2]uint32{m.To, uint32(m.Log)}
		if _, ok := to[k]; !ok {
			order = append(order, k)
		}
		to[k] += m.Count
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%d to segment %d (%s log)", to[k], k[0], logTypeNames()[k[1]])
	}
	return strings.Join(parts, ", ")
}

// narration is one frame's sentence or two, naming the kernel's functions and the numbers.
func narration(tl *gc.Timeline, k int, veiled bool) string {
	f := tl.Frames[k]
	call := callOf(tl.Kind)
	switch f.Kind {
	case gc.FrameStart:
		pre := strings.Count(f.Map.Classes, string(rune(gc.ClassPrefree)))
		dirty := strings.Count(f.Map.Classes, string(rune(gc.ClassDirty)))
		return fmt.Sprintf("What the run leaves in the SIT, the same in per-block and batched mode: %s prefree (no valid block left, free only after the next checkpoint) and %s dirty (partly valid: what the cleaner can collect).",
			plural(pre, "segment", "segments"), plural(dirty, "segment", "segments"))
	case gc.FrameCheckpoint:
		fr := f.Checkpoint.Freed
		if len(fr) == 0 {
			return "F2FS_IOC_WRITE_CHECKPOINT: f2fs_write_checkpoint finds no prefree segment, so nothing becomes free."
		}
		return fmt.Sprintf("F2FS_IOC_WRITE_CHECKPOINT: f2fs_write_checkpoint writes the dirty SIT entries and f2fs_clear_prefree_segments frees the prefree ones: %s (%s) become free.",
			plural(len(fr), "segment", "segments"), segList(fr))
	case gc.FrameSearch:
		p := f.Pick
		what := "greedy (FG_GC → GC_GREEDY): a section's cost is its valid blocks"
		if tl.Kind == gc.Background {
			what = "cost-benefit (BG_GC → GC_CB): cost = UINT_MAX − 100·(100 − u)·age/(100 + u) from get_cb_cost, so old, mostly empty sections are cheapest"
		}
		s := fmt.Sprintf("%s: f2fs_get_victim searches the dirty sections round-robin from last_victim, skipping current sections; %s. It looked at %s.",
			call, what, plural(p.Searched, "section", "sections"))
		if veiled {
			return s + " Which one does it pick? Choose under the question; the ranking shows after."
		}
		return s + " The cheapest first:"
	case gc.FrameVictim:
		p := f.Pick
		if tl.Kind == gc.Foreground {
			return fmt.Sprintf("The victim is the section at segment %d, cost %d (valid blocks), the first of the cheapest found; it becomes cur_victim_sec until the call ends.", *p.Victim, p.Cost)
		}
		return fmt.Sprintf("The victim is the section at segment %d, cost %d; a background call only marks it in victim_secmap and its %s dirty: they move when written back.", *p.Victim, p.Cost, plural(p.Marked, "valid block", "valid blocks"))
	case gc.FrameMove:
		p := f.Pick
		if p.Moved == 0 {
			return fmt.Sprintf("do_garbage_collect: the section at segment %d has no valid block left to move; it is prefree until the next checkpoint.", *p.Victim)
		}
		return fmt.Sprintf("do_garbage_collect moves the %s within the call (gc_data_segment: data pages marked gcing go to the cold data log; gc_node_segment: nodes to their node log): %s. Segment %d is prefree now, free at the next checkpoint.",
			plural(p.Moved, "valid block", "valid blocks"), movesText(f.Moves), *p.Victim)
	case gc.FrameSync:
		c := f.Checkpoint
		s := fmt.Sprintf("sync(2): writeback writes the marked blocks (%s)", plural(c.Moved, "block", "blocks"))
		if c.Moved > 0 {
			s += ": " + movesText(f.Moves)
		}
		return s + fmt.Sprintf("; then the checkpoint frees %s (%s).", plural(len(c.Freed), "prefree segment", "prefree segments"), segList(c.Freed))
	case gc.FrameNone:
		if n := len(f.Pick.Candidates); n > 0 {
			return fmt.Sprintf("%s: f2fs_get_victim looks at %s, but each costs UINT_MAX — its benefit 100·(100 − u)·age/(100 + u) rounds to 0: as young as the newest data, or all but full — no less than get_max_cost's starting value, and only a lower cost is taken: no victim, F2FS_IOC_GARBAGE_COLLECT returns -ENODATA. A foreground call (greedy) would still take one.",
				call, plural(n, "dirty section", "dirty sections"))
		}
		return fmt.Sprintf("%s: f2fs_get_victim finds no dirty section it may take, so F2FS_IOC_GARBAGE_COLLECT returns -ENODATA. Nothing is left to collect.", call)
	}
	free := strings.Count(f.Map.Classes, string(rune(gc.ClassFree)))
	return fmt.Sprintf("The model stops here: %s left. With so few, the kernel runs a checkpoint or SSR inside f2fs_gc (has_not_enough_free_secs), which zrviz does not model.", plural(free, "free segment", "free segments"))
}

// nextStops is the timeline's tour: the run's end state, the checkpoint, the first call's frames,
// and where it ends; the first calls' searches ask which section the cleaner picks.
func nextStops(tl *gc.Timeline) []nextStop {
	call := callOf(tl.Kind)
	var stops []nextStop
	for k, f := range tl.Frames {
		var st nextStop
		switch {
		case f.Kind == gc.FrameStart:
			st = nextStop{Title: "What the run leaves", Text: "Zeroing a range released blocks: segments with no valid block left are prefree, partly valid ones dirty. Nothing is free yet — that takes a checkpoint.", Terms: []string{"prefree", "dirty", "segment", "section"}}
		case f.Kind == gc.FrameCheckpoint:
			st = nextStop{Title: "A checkpoint frees the prefree segments", Text: "Until a checkpoint is written, a crash would mount the old one, which still points into the prefree segments; so f2fs reuses them only after the next checkpoint.", Terms: []string{"checkpoint", "prefree", "free"}}
		case f.Kind == gc.FrameSearch && f.Round == 1:
			if tl.Kind == gc.Foreground {
				st = nextStop{Title: "Greedy: fewest valid blocks", Text: "A foreground call (" + call + ", as F2FS_IOC_GARBAGE_COLLECT with sync = 1 and the cleaner under space pressure run it) takes the section that is cheapest to clean now: the fewest valid blocks to copy.", Terms: []string{"greedy", "victim", "section"}}
			} else {
				st = nextStop{Title: "Cost-benefit: old and empty first", Text: "A background call (" + call + ", as the gc thread runs it) weighs what cleaning frees against its cost and prefers old data, which is unlikely to be overwritten soon: the LFS cleaner's cost-benefit policy.", Terms: []string{"cost-benefit", "age", "victim"}}
			}
		case f.Kind == gc.FrameVictim && f.Round == 1:
			st = nextStop{Title: "The victim", Text: "The chosen section is named by its first segment, as the kernel's f2fs_get_victim tracepoint names it; the next call's search starts after it (last_victim).", Terms: []string{"victim", "section", "last-victim"}}
		case (f.Kind == gc.FrameMove || f.Kind == gc.FrameSync) && f.Round == 1:
			st = nextStop{Title: "Where the blocks go", Text: "Cleaning copies the valid blocks to the active logs — data to the cold data log, since data the cleaner moved is unlikely to change soon — and leaves the victim prefree: free space, after the next checkpoint.", Terms: []string{"cold-data-log", "current-segment", "prefree"}}
		case f.Kind == gc.FrameNone && len(f.Pick.Candidates) > 0:
			st = nextStop{Title: "Too young to collect", Text: "Cost-benefit gives a section whose data is as new as the newest (or that is all but full) no benefit at all, and the search takes only a cost below its starting value: the background cleaner leaves such sections alone and returns ENODATA.", Terms: []string{"cost-benefit", "age"}}
		case f.Kind == gc.FrameNone:
			st = nextStop{Title: "Nothing left to collect", Text: "No section is partly valid any more (or the only ones are active logs): the cleaner returns ENODATA.", Terms: []string{"victim", "dirty"}}
		case f.Kind == gc.FrameShort:
			st = nextStop{Title: "Where the model stops", Text: "With few free sections the kernel changes strategy inside the call (a checkpoint, SSR allocation); zrviz stops rather than guess.", Terms: []string{"free", "section"}}
		default:
			if !questionAt(tl, k) {
				continue
			}
			st = nextStop{Title: fmt.Sprintf("Call %d: the search", f.Round), Text: "The search ranks the dirty sections it looked at by the policy's cost.", Terms: []string{policyOf(tl.Kind), "victim"}}
		}
		st.At = k
		if questionAt(tl, k) {
			var ch []string
			for _, c := range candidatesOf(f.Pick.Candidates, true) {
				ch = append(ch, "segment "+strconv.FormatUint(uint64(c.Segno), 10))
			}
			st.Question = &nextQuestion{Text: "Which section does the cleaner pick next?", Choices: ch, Reveal: k + 1}
		}
		stops = append(stops, st)
	}
	return stops
}

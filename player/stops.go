package player

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/internal/units"
)

// Stop is a stop of the guided tour: a step worth pausing at, with what the kernel does there.
type Stop struct {
	Step  int64    `json:"step"` // the player step the stop shows: just after what it is about
	Kind  string   `json:"kind"` // what it is about (see the Stop* constants)
	Mode  string   `json:"mode,omitempty"`
	Slot  uint64   `json:"slot"`
	Title string   `json:"title"`
	Text  string   `json:"text"`  // two or three sentences tied to the kernel code
	Terms []string `json:"terms"` // glossary entries the text uses
	// Question is the prediction a quiz asks just before the stop, when it has one.
	Question *Question `json:"question,omitempty"`
}

// Tour stop kinds.
const (
	StopStart         = "start"
	StopInline        = "inline-convert"
	StopFillZero      = "fill-zero"
	StopNodeAlloc     = "node-alloc"
	StopReserve       = "reserve"
	StopNewInRun      = "new-in-run"
	StopNewSkipped    = "new-skipped"
	StopSITUpdate     = "sit-update"
	StopDiscontiguous = "flush-discontiguous"
	StopEndOfChunk    = "flush-end-of-chunk"
	StopEndOfRange    = "flush-end-of-range"
	StopAfterError    = "flush-after-error"
	StopChunk         = "chunk"
	StopPrefree       = "prefree"
	StopError         = "error"
	StopEnd           = "end"
)

// tourBuilder finds the tour's stops during Build's pass.
type tourBuilder struct {
	o    *Outline
	seen map[string]bool
	// per mode: the batched pending run, and the stop of a call whose SIT updates are still coming
	pending []core.Pending
	open    [][]int
	stops   []Stop
	// End-of-chunk flushes: whether one ends "a chunk" or "the range" is known once the last chunk
	// is: the first one, and the latest one, with their chunks.
	firstECF, lastECF int
	ecfChunk          map[int]int32
	lastChunk         int32
	q                 *quizBuilder
	// per mode: the action of the engine's latest slot visit (a run-break after a NULL slot)
	lastSlot []core.Action
	// per mode: the run a punch's or truncate's slot starts while the previous one is still to be
	// flushed (its slot visit comes before that flush's call)
	afterCall []core.Pending
}

func newTourBuilder(o *Outline) *tourBuilder {
	n := len(o.spec.Modes)
	t := &tourBuilder{o: o, seen: map[string]bool{}, pending: make([]core.Pending, n), open: make([][]int, n),
		firstECF: -1, lastECF: -1, ecfChunk: map[int]int32{}, lastChunk: -1, lastSlot: make([]core.Action, n), afterCall: make([]core.Pending, n)}
	t.q = newQuizBuilder(o)
	return t
}

// first reports whether kind is met for the first time (and marks it met).
func (t *tourBuilder) first(kind string) bool {
	if t.seen[kind] {
		return false
	}
	t.seen[kind] = true
	return true
}

func (t *tourBuilder) add(ev core.Event, i int, step int64) {
	mode := t.o.spec.Modes[i]
	t.q.add(ev, i, step)
	// A call's stops show the state after its last SIT update: the first event of the same engine
	// that is not one of them closes them.
	if len(t.open[i]) > 0 {
		if ev.Kind == core.EvSITUpdate {
			for _, k := range t.open[i] {
				s := &t.stops[k]
				s.Step = step
				if s.Kind == StopSITUpdate && s.Text == "" {
					s.Text = sitText(ev, mode)
				}
			}
			t.prefree(ev, i, step)
			t.wronglyCleared(ev, i, step)
			return
		}
		t.open[i] = t.open[i][:0]
	}
	t.q.follow(ev, i)
	stop := func(kind, title, text string, terms ...string) int {
		if _, ok := t.o.stopEvents[kind]; !ok {
			t.o.stopEvents[kind] = ev
			t.q.made(kind, i, step, t.pending[i])
		}
		t.stops = append(t.stops, Stop{Step: step, Kind: kind, Mode: mode.String(), Slot: ev.Slot,
			Title: title, Text: text, Terms: terms})
		return len(t.stops) - 1
	}
	pd := &t.pending[i]
	trunc := t.o.isTrunc()
	op := t.o.spec.Request.Op
	switch ev.Kind {
	case core.EvInlineConvert:
		if t.first(StopInline) {
			stop(StopInline, "Inline data moves out", inlineText(ev), "inline-data", "new-addr", "slot")
		}
	case core.EvFillZero:
		if ev.Action == core.ActPartialCluster && t.first(StopFillZero) {
			stop(StopFillZero, "A compressed cluster is read and dirtied", partialClusterText(ev), "compress-addr", "new-addr")
		} else if t.first(StopFillZero) {
			text := fillText(ev, t.o.spec.Input.Volume.MainSegments)
			if t.o.spec.Input.Inode.Flags&core.FlagCompressed != 0 && ev.Action == core.ActPartialPage {
				// A raw cluster's partial page of a compressed file (only truncate reaches one).
				text = fmt.Sprintf("The new size falls inside page %s of a cluster stored raw, so truncate_partial_data_page zeroes bytes %s–4,095 of it in the page cache and dirties it. No block is invalidated now. Writeback later writes it out of place to the cold data log, as every page of a compressed file (f2fs_should_update_outplace).", units.Group(ev.Count), units.Group(uint64(ev.Addr)))
			}
			stop(StopFillZero, "A partial page: fill_zero", text, "fill-zero", "new-addr", "null-addr")
		}
	case core.EvNodeAlloc:
		if t.first(StopNodeAlloc) {
			stop(StopNodeAlloc, "A missing node is allocated", fmt.Sprintf("f2fs_get_dnode_of_data is called with ALLOC_NODE: node %s does not exist, so f2fs_new_node_page allocates it (a new nid; valid_block_count %s → %s, i_blocks +1). Then the chunk's holes are reserved as usual.", ev.Node, units.Group(ev.Before), units.Group(ev.After)), "dnode", "enospc")
		}
	case core.EvChunkEnter:
		t.lastChunk = ev.Chunk
		*pd = core.Pending{}
		if ev.Chunk == 1 && trunc && t.first(StopChunk) {
			stop(StopChunk, "A new dnode chunk", chunkTruncText(ev, op), "dnode-chunk", "dnode", "physical-run")
		} else if ev.Chunk == 1 && t.first(StopChunk) {
			stop(StopChunk, "A new dnode chunk", fmt.Sprintf("f2fs_zero_range's loop calls f2fs_get_dnode_of_data for slot %s: its slots live in %s, so this is a new call of f2fs_do_zero_range, covering %s slots. Whatever was pending was flushed when the previous chunk ended: a physical run never spans two chunks.", units.Group(ev.Slot), nodeName(ev.Node), units.Group(ev.Count)), "dnode-chunk", "dnode", "physical-run")
		}
	case core.EvReserve:
		if t.first(StopReserve) {
			stop(StopReserve, "Holes are reserved first", reserveText(ev), "null-addr", "new-addr", "dnode-chunk", "enospc")
		}
	case core.EvSlot:
		t.lastSlot[i] = ev.Action
		switch ev.Action {
		case core.ActSkipBounds, core.ActSkipSITBit:
			if t.first(StopValidatedFirst) {
				stop(StopValidatedFirst, "Validated before the flush", skipText(ev, mode), "f2fs-is-valid-blkaddr", "valid-map", "pending-run", "null-addr")
			}
		case core.ActClearStartRun:
			if pd.Len > 0 { // the pending run is flushed next (a discontiguous flush), then this one pends
				t.afterCall[i] = core.Pending{Start: ev.Addr, Len: 1, Slot: ev.Slot}
			} else {
				*pd = core.Pending{Start: ev.Addr, Len: 1, Slot: ev.Slot}
			}
		case core.ActClearExtendRun:
			pd.Len = ev.Len
		case core.ActSkipNew:
			if mode == core.Batched && pd.Len > 0 && t.first(StopNewInRun) {
				stop(StopNewInRun, "NEW_ADDR does not end a run", fmt.Sprintf("Slot %s holds NEW_ADDR: pass 2 skips it (if (blkaddr == NEW_ADDR) continue), and the batched mode keeps its pending run (blkstart %s, blklen %s) open across it. If the next valid slot holds blkstart+blklen = %s, one call still covers the blocks on both sides of the reserved slot.", units.Group(ev.Slot), units.Group(pd.Start), units.Group(pd.Len), units.Group(uint64(pd.Start)+uint64(pd.Len))), "new-addr", "pending-run", "physical-run")
			} else if len(t.o.spec.Modes) == 1 && mode == core.PerBlock && t.first(StopNewSkipped) {
				stop(StopNewSkipped, "NEW_ADDR is skipped", fmt.Sprintf("Slot %s holds NEW_ADDR: a reserved block that was never written has no SIT bit, so pass 2 skips it (if (blkaddr == NEW_ADDR) continue) and calls nothing.", units.Group(ev.Slot)), "new-addr", "sit")
			}
		case core.ActStartRun:
			*pd = core.Pending{Start: ev.Addr, Len: 1, Slot: ev.Slot}
		case core.ActExtendRun:
			pd.Len = ev.Len
		}
	case core.EvInvalidate:
		was := *pd
		*pd, t.afterCall[i] = t.afterCall[i], core.Pending{}
		var open []int
		if t.first(StopSITUpdate) {
			open = append(open, stop(StopSITUpdate, "The SIT is updated", "", "sit", "sit-entry", "valid-map", "sit-lock", "f2fs-invalidate-blocks"))
		}
		if ev.State == core.StateNew && (mode == core.Batched || len(t.o.spec.Modes) == 1) && t.first(StopNewOwnCall) {
			open = append(open, stop(StopNewOwnCall, "NEW_ADDR is its own call", newOwnCallText(ev, mode), "new-addr", "f2fs-invalidate-blocks", "pending-run"))
		}
		switch ev.Action {
		case core.ActRunBreak:
			if t.lastSlot[i] == core.ActSkipNull && t.first(StopNullEndsRun) {
				open = append(open, stop(StopNullEndsRun, "NULL ends a run here", nullEndsRunText(ev), "null-addr", "pending-run", "flush", "f2fs-truncate-data-blocks-range"))
			}
		case core.ActDiscontiguous:
			if trunc && t.first(StopDiscontiguous) {
				open = append(open, stop(StopDiscontiguous, "Not contiguous: validated, then flushed", discontiguousTruncText(ev, was), "flush", "pending-run", "physical-run", "f2fs-invalidate-blocks", "f2fs-is-valid-blkaddr"))
			} else if t.first(StopDiscontiguous) {
				open = append(open, stop(StopDiscontiguous, "Not contiguous: flush first", discontiguousText(ev, was), "flush", "pending-run", "physical-run", "f2fs-invalidate-blocks", "sit-lock"))
			}
		case core.ActEndOfChunk:
			// Only the first and the latest end-of-chunk flush can become stops: reuse the latest's
			// place, so a run of 16,000 chunks keeps two.
			text := fmt.Sprintf("%s|%s|%s", units.Group(ev.Addr), units.Group(ev.Len), nodeOf(t.o, ev.Chunk))
			terms := []string{"flush", "dnode-chunk", "f2fs-invalidate-blocks"}
			k := t.lastECF
			if k >= 0 && k != t.firstECF {
				t.stops[k] = Stop{Step: step, Kind: StopEndOfChunk, Mode: mode.String(), Slot: ev.Slot, Text: text, Terms: terms}
			} else {
				k = stop(StopEndOfChunk, "", text, terms...)
			}
			t.ecfChunk[k] = ev.Chunk
			if t.firstECF < 0 {
				t.firstECF = k
			}
			t.lastECF = k
			open = append(open, k)
		case core.ActFlushOnError:
			if t.first(StopAfterError) {
				open = append(open, stop(StopAfterError, "The pending run is flushed after the error", fmt.Sprintf("Pass 2 stopped on an error with a run still pending, and the flush after the loop (if (blklen) f2fs_invalidate_blocks(...)) releases it all the same: f2fs_invalidate_blocks(%s, %s). The blocks validated before the bad slot lose their SIT bits as in the per-block mode; only the order of the call and the error differs.", units.Group(ev.Addr), units.Group(ev.Len)), "flush", "efscorrupted", "pending-run"))
			}
		}
		t.open[i] = open
	case core.EvSITUpdate:
		t.prefree(ev, i, step)
		t.wronglyCleared(ev, i, step)
	case core.EvNodeFree:
		// The last mode's: its node is freed after its dnode's loop has ended in every mode, so
		// the stop (and its question) come after the chunk's question is revealed.
		if i == len(t.o.spec.Modes)-1 && t.first(StopNodeFree) {
			stop(StopNodeFree, "A node block is freed", nodeFreeText(ev), "truncate-node", "dnode", "f2fs-invalidate-blocks")
		}
	case core.EvError:
		if t.first(StopError) {
			stop(StopError, "The call fails: -"+ev.Errno, errorText(ev, t.o.spec.Request.Op), errTerms(ev)...)
		}
	}
}

// wronglyCleared adds the stop for a punch's or truncate's first SIT update that finds bits already
// clear: a block invalidated twice because it was validated before the pending run was flushed.
func (t *tourBuilder) wronglyCleared(ev core.Event, i int, step int64) {
	if ev.Count == 0 || !t.o.isTrunc() || !t.first(StopFreedTwice) {
		return
	}
	t.o.stopEvents[StopFreedTwice] = ev
	t.stops = append(t.stops, Stop{Step: step, Kind: StopFreedTwice, Mode: t.o.spec.Modes[i].String(), Slot: ev.Slot,
		Title: "Validated before the flush: freed twice", Text: wronglyClearedText(ev),
		Terms: []string{"f2fs-is-valid-blkaddr", "wrongly-cleared", "valid-map", "pending-run", "sit"}})
}

// prefree adds the stop for the first segment a call empties.
func (t *tourBuilder) prefree(ev core.Event, i int, step int64) {
	if ev.SegAfter != core.SegPrefree || ev.SegBefore == core.SegPrefree || !t.first(StopPrefree) {
		return
	}
	t.o.stopEvents[StopPrefree] = ev
	t.stops = append(t.stops, Stop{Step: step, Kind: StopPrefree, Mode: t.o.spec.Modes[i].String(), Slot: ev.Slot,
		Title: "A segment becomes prefree", Terms: []string{"prefree", "segment", "checkpoint", "free", "dirty"},
		Text: fmt.Sprintf("Segment %s has just lost its last valid block (valid %s → 0): locate_dirty_segment moves it to the prefree list. A prefree segment is not reusable yet: it becomes free only when the next checkpoint is written, so a crash before it still finds the old blocks in the checkpointed SIT.", units.Group(ev.Segno), units.Group(ev.Before))})
}

// finish names the end-of-chunk flushes, adds the start and end stops and returns the tour in step
// order.
func (t *tourBuilder) finish() []Stop {
	o := t.o
	for k := range t.stops {
		s := &t.stops[k]
		if s.Kind != StopEndOfChunk {
			continue
		}
		f := strings.SplitN(s.Text, "|", 3)
		trunc := o.isTrunc()
		switch {
		case k == t.firstECF && t.ecfChunk[k] != t.lastChunk && trunc:
			s.Title = "The dnode ends: flush"
			s.Text = endOfChunkTruncText(f)
		case k == t.lastECF && t.ecfChunk[k] == t.lastChunk && trunc:
			s.Kind, s.Title = StopEndOfRange, "The walk ends: the last flush"
			s.Text = endOfRangeTruncText(f, o.spec.Request.Op)
		case k == t.firstECF && t.ecfChunk[k] != t.lastChunk:
			s.Title = "The chunk ends: flush"
			s.Text = fmt.Sprintf("The chunk in %s has no slot left, so after the loop f2fs_do_zero_range flushes what is pending: f2fs_invalidate_blocks(%s, %s). The next chunk is another call of f2fs_do_zero_range (one per dnode), so a run never spans two chunks even when the addresses go on: a contiguous 64 MiB file takes 17 calls, one per dnode chunk.", f[2], f[0], f[1])
		case k == t.lastECF && t.ecfChunk[k] == t.lastChunk:
			s.Kind, s.Title = StopEndOfRange, "The range ends: the last flush"
			s.Text = fmt.Sprintf("The last chunk of the range (%s) is done, and the flush after the loop makes the last call: f2fs_invalidate_blocks(%s, %s). f2fs_zero_range then sets i_size (or, with KEEP_SIZE, only the FADVISE_KEEP_SIZE flag) and returns.", f[2], f[0], f[1])
		default:
			s.Kind = ""
		}
	}
	out := []Stop{startStop(o)}
	for _, s := range t.stops {
		if s.Kind == "" || (s.Kind == StopSITUpdate && s.Text == "") {
			continue
		}
		out = append(out, s)
	}
	out = append(out, endStop(o))
	slices.SortStableFunc(out, func(a, b Stop) int { return cmp.Compare(a.Step, b.Step) })
	t.q.attach(out)
	return out
}

func nodeName(node string) string {
	if node == "inode" {
		return "the inode block itself"
	}
	return "direct node " + node
}

func nodeOf(o *Outline, chunk int32) string {
	if c := int(chunk); c >= 0 && c < len(o.Chunks) {
		return nodeName(o.Chunks[c].Node)
	}
	return "this dnode"
}

func startStop(o *Outline) Stop {
	req := o.spec.Request
	modes := make([]string, len(o.spec.Modes))
	for i, m := range o.spec.Modes {
		modes[i] = m.String()
	}
	text := fmt.Sprintf("%s, in %s mode. ", callWords(req, o.spec.Input.Path), strings.Join(modes, " and "))
	if o.isTrunc() {
		text += startTruncText(o)
	} else if n := len(o.Chunks); n > 0 {
		text += fmt.Sprintf("The range covers %s in %s: f2fs_zero_range calls f2fs_do_zero_range once per chunk, which reserves the chunk's holes, then releases every mapped block with f2fs_invalidate_blocks — once per block upstream, once per physical run with the patch.", plural(o.prefix[n], "slot", "slots"), plural(uint64(n), "dnode chunk", "dnode chunks"))
	} else {
		text += "No whole page is zeroed, so no dnode chunk is walked."
	}
	return Stop{Step: 0, Kind: StopStart, Title: "What is about to happen", Text: text,
		Terms: []string{"dnode-chunk", "slot", "f2fs-invalidate-blocks", "physical-run"}}
}

func endStop(o *Outline) Stop {
	var b strings.Builder
	for i, m := range o.spec.Modes {
		sn := o.Final[i]
		fmt.Fprintf(&b, "%s: %s, %s, %s released. ", m, plural(sn.Stats.Calls, "f2fs_invalidate_blocks call", "f2fs_invalidate_blocks calls"),
			plural(sn.Stats.SITLockAcquisitions, "SIT lock hold", "SIT lock holds"), plural(sn.Stats.BlocksInvalidated, "block", "blocks"))
	}
	if len(o.Final) == 2 {
		a, z := o.Final[0].Stats.SITLockAcquisitions, o.Final[1].Stats.SITLockAcquisitions
		switch {
		case z > 0 && a > z && o.wronglyCleared():
			fmt.Fprintf(&b, "Batching took the SIT lock %s less often; it also invalidated a block twice (\"Bitmap was wrongly cleared\"), which the per-block loop skipped. ", timesFewer(a, z))
		case z > 0 && a > z:
			fmt.Fprintf(&b, "Batching took the SIT lock %s less often, with the same slots and SIT at the end. ", timesFewer(a, z))
		case a == 0 && z == 0 && o.Final[0].Stats.Calls > 0:
			// A punch over preallocated slots: calls, but none takes the SIT lock.
			b.WriteString("Every call was for a NEW_ADDR slot, which f2fs_invalidate_blocks returns from at once: no SIT lock was taken, and batching joined nothing (NEW_ADDR + 1 wraps to 0). ")
		case a == 0 && z == 0:
			b.WriteString("No mapped block was reached, so neither mode called f2fs_invalidate_blocks: there was no run to batch. ")
		case a == z:
			b.WriteString("Here batching saved nothing: every run is one block long. ")
		}
	}
	for i, m := range o.spec.Modes {
		if n := o.Final[i].Stats.NodesFreed; n > 0 {
			fmt.Fprintf(&b, "%s: truncate_node freed %s. ", m, plural(n, "node block", "node blocks"))
			break
		}
	}
	return Stop{Step: o.Total, Kind: StopEnd, Title: "Done: " + o.Outcome().Returns, Text: strings.TrimSpace(b.String()),
		Terms: []string{"f2fs-invalidate-blocks", "sit-lock"}}
}

func inlineText(ev core.Event) string {
	if ev.Addr == 0 {
		return "The file keeps its data inline in the inode, but has none: f2fs_convert_inline_inode only clears the inline flag, and slot 0 becomes an ordinary hole."
	}
	return fmt.Sprintf("The file's data lives inline in the inode block. f2fs_convert_inline_inode writes it out of place first: slot 0 now points at block %s, written synchronously (valid_block_count %s → %s). That block is then zeroed like any other — the only invalidation here of a block this very call wrote.", units.Group(ev.Addr), units.Group(ev.Before), units.Group(ev.After))
}

// partialClusterText explains f2fs_truncate_partial_cluster on a compressed cluster (the event's
// Before, After: the cluster's pages; Count: the page holding the new size).
func partialClusterText(ev core.Event) string {
	return fmt.Sprintf("The new size falls inside compressed cluster %s (pages %s–%s), whose blocks cannot be cut one by one: f2fs_truncate_partial_cluster reads and decompresses the whole cluster into the page cache, zeroes page %s from byte %s on and every page after it, and dirties all of its pages. No block, slot or SIT entry changes now. Writeback later writes the cluster raw, every page out of place to the cold data log, when a page lies past the new size; a cluster wholly inside it is compressed again, which depends on the data (zrviz refuses that writeback).",
		units.Group(ev.Before/max(ev.After-ev.Before, 1)), units.Group(ev.Before), units.Group(ev.After-1), units.Group(ev.Count), units.Group(uint64(ev.Addr)))
}

func fillText(ev core.Event, mainSegments uint32) string {
	s := fmt.Sprintf("The range starts or ends inside page %s, so fill_zero zeroes bytes %s–%s of it in the page cache. No block is invalidated now.", units.Group(ev.Slot), units.Group(ev.Addr), units.Group(ev.Addr+ev.Len-1))
	if ev.State == core.StateNull {
		return s + " Its slot was a hole, so f2fs_get_new_data_page reserves it first: NULL_ADDR becomes NEW_ADDR, and writeback later gives the page a new block (or, past i_size with KEEP_SIZE, none: it stays NEW_ADDR)."
	}
	if ev.State == core.StateAddr {
		return s + " " + writebackText(mainSegments)
	}
	return s
}

// writebackText says what writeback does later to a partial page that has a block, by the default
// ipu_policy core models ([core.IPUPolicyOf]): on a volume of at most SMALL_VOLUME_SEGMENTS main
// segments f2fs_tuning_parameters sets ipu_policy to
// F2FS_IPU_FORCE | F2FS_IPU_HONOR_OPU_WRITE, so the page is rewritten in place (the kernel
// fixtures, ≤ 16 GB: kernel case 2 kept both partial pages' addresses); on a larger one the default
// policy (F2FS_IPU_FSYNC) writes it out of place, and the allocator — not f2fs_invalidate_blocks —
// releases the old block.
func writebackText(mainSegments uint32) string {
	if mainSegments > 0 && core.IPUPolicyOf(&core.Volume{MainSegments: mainSegments})&core.IPUForce != 0 {
		return fmt.Sprintf("Writeback later rewrites it in place: this volume has %s main segments (at most 16 GB), so f2fs_tuning_parameters sets ipu_policy to F2FS_IPU_FORCE (unless mounted mode=lfs), and the page keeps its block.", units.Group(uint64(mainSegments)))
	}
	return "Writeback later writes it out of place (a volume over 16 GB keeps the default ipu_policy, F2FS_IPU_FSYNC), and the allocator releases the old block, not f2fs_invalidate_blocks."
}

func reserveText(ev core.Event) string {
	if uint64(ev.Len) < ev.Count {
		return fmt.Sprintf("Pass 1 of f2fs_do_zero_range counts %s NULL_ADDR slots in this chunk and asks f2fs_reserve_new_blocks for them, but only %s fit (valid_block_count %s → %s): those become NEW_ADDR, the rest stay NULL, and pass 2 will stop at the first of them with -ENOSPC.", units.Group(ev.Count), units.Group(ev.Len), units.Group(ev.Before), units.Group(ev.After))
	}
	return fmt.Sprintf("Pass 1 of f2fs_do_zero_range counts the NULL_ADDR slots of this chunk — %s — and f2fs_reserve_new_blocks turns them into NEW_ADDR: counted in valid_block_count (%s → %s) and i_blocks, but with no SIT bit, since nothing is written. A hole never reaches f2fs_invalidate_blocks.", units.Group(ev.Count), units.Group(ev.Before), units.Group(ev.After))
}

func sitText(ev core.Event, mode core.Mode) string {
	per := "The per-block mode does this once for every block."
	if mode == core.Batched {
		per = "The batched mode does this once per segment a run touches."
	}
	where := fmt.Sprintf("locate_dirty_segment files the segment as %s", ev.SegAfter)
	if ev.SegAfter == core.SegCurrent {
		where = "the segment is a current segment (an active log), so locate_dirty_segment leaves it off the dirty and prefree lists"
	}
	s := fmt.Sprintf("f2fs_invalidate_blocks takes the SIT lock (sentry_lock, for writing). update_sit_entry clears %s of segment %s's valid map — its valid count goes %s → %s — and %s. %s", plural(uint64(ev.Len), "bit", "bits"), units.Group(ev.Segno), units.Group(ev.Before), units.Group(ev.After), where, per)
	if ev.Count > 0 {
		s += fmt.Sprintf(" %s already clear: the kernel logs \"Bitmap was wrongly cleared\" and gives the block back to the count.", plural(ev.Count, "bit was", "bits were"))
	}
	return s
}

func discontiguousText(ev core.Event, pd core.Pending) string {
	return fmt.Sprintf("Slot %s does not hold blkstart+blklen (%s), so the batched mode flushes the pending run before it even looks at the new address: f2fs_invalidate_blocks(%s, %s), one SIT lock hold. Flushing before validating is what still catches a repeated address: its SIT bit is already clear when f2fs_is_valid_blkaddr checks it.", units.Group(ev.Slot), units.Group(uint64(pd.Start)+uint64(pd.Len)), units.Group(ev.Addr), units.Group(ev.Len))
}

func errorText(ev core.Event, op core.Op) string {
	switch ev.Action {
	case core.ActSITBit:
		return fmt.Sprintf("f2fs_is_valid_blkaddr(DATA_GENERIC_ENHANCE) finds the SIT bit of block %s clear: the kernel logs \"%s\", marks the file system for fsck (SBI_NEED_FSCK) and f2fs_do_zero_range returns -EFSCORRUPTED. This is how a block listed twice is caught: the first visit cleared its bit.", units.Group(ev.Addr), ev.Message())
	case core.ActBounds:
		return fmt.Sprintf("Block %s lies outside the main area, so f2fs_is_valid_blkaddr refuses it (\"%s\"), sets SBI_NEED_FSCK, and the call returns -EFSCORRUPTED with the slot left as it was.", units.Group(ev.Addr), ev.Message())
	case core.ActReserve:
		return "f2fs_reserve_new_blocks finds no free block at all for this chunk's holes: f2fs_do_zero_range returns -ENOSPC before pass 2, so no slot of the chunk changes and nothing is invalidated."
	case core.ActNullSlot:
		return fmt.Sprintf("Slot %s is still NULL_ADDR after a partial reservation: pass 2 stops there with -ENOSPC. Blocks visited before it are released; i_size grows only to the last finished chunk.", units.Group(ev.Slot))
	case core.ActNodeAlloc:
		return fmt.Sprintf("f2fs_get_dnode_of_data cannot allocate node %s: -%s. The chunks finished before it stay done.", ev.Node, ev.Errno)
	case core.ActFillReserve:
		return fmt.Sprintf("fill_zero cannot reserve page %s (no free block): -ENOSPC.", units.Group(ev.Slot))
	case core.ActBadArgs:
		if op == core.OpTruncate {
			return truncArgsText(ev.Errno)
		}
		if op == core.OpUnlink {
			return unlinkArgsText(ev.Errno)
		}
		if op == core.OpPunch && ev.Errno == "EOPNOTSUPP" {
			return "f2fs_fallocate refuses FALLOC_FL_PUNCH_HOLE on a compressed or pinned file with -EOPNOTSUPP, before touching anything."
		}
		return badArgsText(ev.Errno)
	}
	return ev.Narrate()
}

func badArgsText(errno string) string {
	switch errno {
	case "EOPNOTSUPP":
		return "f2fs_fallocate refuses FALLOC_FL_ZERO_RANGE on a compressed or pinned file (and on flags it does not know) with -EOPNOTSUPP, before touching anything: a compressed file's clusters cannot be zeroed block by block."
	case "EINVAL":
		return "vfs_fallocate refuses the arguments before f2fs sees them: a negative offset or a length that is not positive is -EINVAL."
	case "EISDIR":
		return "The path names a directory: open(O_RDWR) fails with -EISDIR before any fallocate."
	case "EFBIG":
		return "offset + length goes past the largest file f2fs allows (s_maxbytes): -EFBIG."
	case "EPERM":
		return "The inode is immutable or append-only: vfs_fallocate refuses with -EPERM."
	case "EIO":
		return "The file system has a checkpoint error (it was shut down): f2fs_fallocate returns -EIO at once."
	}
	return "The call is refused before anything changes: -" + errno + "."
}

func errTerms(ev core.Event) []string {
	switch ev.Errno {
	case "EFSCORRUPTED":
		return []string{"efscorrupted", "sit", "valid-map"}
	case "ENOSPC":
		return []string{"enospc", "null-addr"}
	case "EOPNOTSUPP":
		return []string{"eopnotsupp", "compress-addr"}
	}
	return nil
}

func plural(v uint64, one, many string) string {
	if v == 1 {
		return "1 " + one
	}
	return units.Group(v) + " " + many
}

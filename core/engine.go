package core

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/zrviz/zrviz/internal/f2fs"
)

type phase uint8

const (
	phStart phase = iota
	phArgErr
	phInline
	phPages
	phFillEnter
	phFillAlloc
	phFillPage
	phChunkEnter
	phChunkAlloc
	phReserve
	phSlots
	phFinalFlush
	phInvCall
	phInvSeg
	phChunkLeave
	phOut
	phDone
	phEnd
	// Punch and truncate (trunc.go).
	phTrPages      // punch's page arithmetic (no event)
	phTrSize       // truncate_setsize
	phTrPlan       // truncate's walk is listed (no event)
	phTrNext       // the next chunk or node of the walk (no event)
	phTrChunkEnter // a dnode of f2fs_truncate_data_blocks_range
	phTrSlots      // its loop, one slot per event
	phTrFinal      // batched: the run pending after the loop is flushed (no event)
	phTrLeave      // dec_valid_block_count(nr_free)
	phTrNode       // truncate_node's call is prepared (no event)
	phTrNodeDone   // dec_valid_node_count
	phTrPartial    // truncate_partial_data_page, if it has a page (no event before it)
	phTrPartialPage
	phTrCluster // f2fs_truncate_partial_cluster on a compressed cluster: read, zeroed, dirtied
)

// Which partial page a fill_zero is for.
const (
	fillSingle uint8 = iota
	fillHead
	fillTail
)

// scalars is every piece of engine state that is a plain value, so a
// checkpoint is one copy. It is grouped by the kernel function whose
// state each part is.
type scalars struct {
	step     int64  // events emitted so far
	lastSlot uint64 // the last event's slot
	errno    string // the call's error so far ("" = none)
	msg      string // its kernel log line, for Result.Message
	phase    phase  // what the next event is

	counters counters   // what the call changes besides slots and SIT
	zr       zeroRange  // f2fs_zero_range: pages and progress
	alloc    nodeAlloc  // missing nodes of the path being resolved
	fill     fillState  // the partial page fill_zero works on
	chunk    chunkState // the dnode chunk f2fs_do_zero_range works on
	run      pendingRun // batched pass 2's pending run
	call     invCall    // the f2fs_invalidate_blocks call being made
	track    runTrack   // contiguous invalidated blocks (Stats.Runs), both modes
	tr       truncState // punch and truncate (trunc.go)

	stats Stats
}

// counters are the volume's and the inode's values the call changes,
// what Result and the next request's Input report.
type counters struct {
	validBlocks uint64 // valid_block_count
	iBlocks     uint64 // i_blocks
	iSize       int64  // i_size
	hiWater     uint64 // one past the highest slot made non-NULL
	validNodes  uint32 // valid_node_count
	// Next free block offsets of the hot and cold data logs (the inline
	// conversion writes there).
	hotBlkoff, coldBlkoff, warmBlkoff uint32
	advise                            uint8  // i_advise
	inline                            uint8  // i_inline
	needFsck                          bool   // SBI_NEED_FSCK
	curReserved                       uint64 // current_reserved_blocks
	comprBlocks                       uint64 // i_compr_blocks
}

// zeroRange is f2fs_zero_range's page arithmetic (§3) and progress.
type zeroRange struct {
	pgStart, pgEnd   uint64
	index            uint64 // first page of the next dnode chunk
	newSize          int64  // i_size once the call returns (unless KEEP_SIZE)
	offStart, offEnd uint32
}

// nodeAlloc lists the nodes ALLOC_NODE creates on one path, parents
// first: keys[next:n] are still to come.
type nodeAlloc struct {
	keys    [3]nodeKey
	n, next int
}

// fillState is fill_zero(idx, start, len) of a partial page.
type fillState struct {
	idx        uint64
	start, len uint32
	which      uint8 // fillSingle, fillHead or fillTail
}

// chunkState is f2fs_do_zero_range(dn, lo, hi) over one dnode; the
// engine's buf holds the dnode's slots while in is set.
type chunkState struct {
	node   dnodePos
	lo, hi uint64 // the chunk's slots [lo, hi)
	pos    uint64 // pass 2's next slot
	leave  uint64 // the slot where pass 2 stopped or ended (chunk-leave's)
	nulls  uint32 // NULL slots in [lo, hi) before pass 1 (at most 1018)
	ord    int32  // ordinal; -1 before the first chunk
	in     bool   // between chunk-enter and chunk-leave
	dirty  bool   // buf differs from the overlay's record
}

// runTrack is the physically contiguous run of invalidated blocks
// [start, end) being counted for Stats.Runs. Empty, it is [0, 0), which no
// invalidated block continues (block 0 is NULL_ADDR).
type runTrack struct{ start, end uint32 }

type engine struct {
	in    Input
	req   Request
	mode  Mode
	slots *slotOverlay
	sit   *sitOverlay
	buf   []uint32 // the current chunk's dnode slots
	fbuf  []uint32 // a fill_zero page's dnode slots
	calls CallList
	fills []FillZero
	// plan is truncate's walk, listed once its size is set (trunc.go); the scalars say how far it
	// has gone.
	plan []walkItem
	s    scalars
	err  error
	// fastEv is where pass 2 builds its events (pass2.go).
	fastEv Event
	// onChunk, when set, is called before each chunk's first event (the
	// checkpoint hook of a seekable Run).
	onChunk func()
	// ctx, when set, bounds the loops that make no events (truncate's node walk, trunc.go).
	ctx context.Context
}

func newEngine(in Input, req Request, mode Mode) (*engine, error) {
	if mode != PerBlock && mode != Batched {
		return nil, ErrBadMode
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	inline := in.Inode.Inline&(InlineData|InlineDentry) != 0
	e := &engine{in: in, req: req, mode: mode,
		slots: newSlotOverlay(in.Slots, in.Inode.geom(), inline),
		sit:   newSITOverlay(in.SIT, &in.Volume)}
	e.s = scalars{
		counters: counters{
			validBlocks: in.Volume.ValidBlockCount,
			validNodes:  in.Volume.ValidNodeCount,
			iBlocks:     in.Inode.Blocks,
			iSize:       in.Inode.Size,
			advise:      in.Inode.Advise,
			inline:      in.Inode.Inline,
			hotBlkoff:   in.Volume.HotDataBlkoff,
			coldBlkoff:  in.Volume.ColdDataBlkoff,
			warmBlkoff:  in.Volume.WarmDataBlkoff,
			curReserved: in.Volume.CurrentReservedBlocks,
			comprBlocks: in.Inode.ComprBlocks,
		},
		chunk: chunkState{ord: -1},
	}
	return e, nil
}

// argCheck returns the errno of the VFS and f2fs argument checks, in the
// kernel's order (open, vfs_fallocate, f2fs_fallocate), or "".
func (e *engine) argCheck() string {
	r, ino := &e.req, &e.in.Inode
	switch ino.Type {
	case "dir":
		return "EISDIR" // open(O_RDWR) fails before fallocate
	case "symlink":
		return "ELOOP" // modelled as open(O_RDWR|O_NOFOLLOW)
	}
	if ino.Flags&FlagImmutable != 0 || ino.Flags&FlagAppend != 0 {
		return "EPERM"
	}
	if r.Offset < 0 || r.Length <= 0 {
		return "EINVAL"
	}
	if r.ExtraFlags&^fallocKeepSize != 0 {
		return "EOPNOTSUPP"
	}
	if ino.Type != "file" {
		return "ENODEV"
	}
	if r.Offset > maxBytes-r.Length {
		return "EFBIG"
	}
	if e.in.Volume.CheckpointError {
		return "EIO"
	}
	if ino.Flags&FlagCompressed != 0 || ino.Inline&InlinePinFile != 0 {
		return "EOPNOTSUPP"
	}
	return ""
}

func (e *engine) keepSize() bool {
	return e.req.KeepSize || e.req.ExtraFlags&fallocKeepSize != 0
}

// settlePhases are the phases settle may move on from without an event.
const settlePhases = 1<<phPages | 1<<phReserve | 1<<phSlots | 1<<phFinalFlush | 1<<phOut |
	1<<phTrPages | 1<<phTrPlan | 1<<phTrNext | 1<<phTrSlots | 1<<phTrFinal | 1<<phTrNode | 1<<phTrPartial |
	1<<phDone

// settle runs the transitions that emit no event, so the phase names the
// next event.
func (e *engine) settle() {
	s := &e.s
	z := &s.zr
	for {
		switch s.phase {
		case phPages:
			off, end := uint64(e.req.Offset), uint64(e.req.Offset+e.req.Length)
			z.pgStart, z.pgEnd = off>>12, end>>12
			z.offStart, z.offEnd = uint32(off&4095), uint32(end&4095)
			z.newSize = s.counters.iSize
			switch {
			case z.pgStart == z.pgEnd:
				e.startFill(z.pgStart, z.offStart, z.offEnd-z.offStart, fillSingle)
			case z.offStart != 0:
				e.startFill(z.pgStart, z.offStart, blockSize-z.offStart, fillHead)
			default:
				z.index = z.pgStart
				e.nextChunkOrTail()
			}
		case phReserve:
			if s.chunk.nulls == 0 {
				s.phase = phSlots
				continue
			}
			return
		case phSlots, phFinalFlush:
			if !e.settlePass2() {
				continue
			}
			return
		case phOut:
			if z.newSize <= s.counters.iSize {
				s.phase = phDone
			}
			return
		case phTrPages, phTrPlan, phTrNext, phTrSlots, phTrFinal, phTrNode, phTrPartial:
			if !e.settleTrunc() || e.err != nil {
				return
			}
		case phDone:
			if !e.unlinkInode() {
				return
			}
		default:
			return
		}
	}
}

func (e *engine) startFill(idx uint64, start, length uint32, which uint8) {
	e.s.fill = fillState{idx: idx, start: start, len: length, which: which}
	e.s.phase = phFillEnter
}

func (e *engine) nextChunkOrTail() {
	s := &e.s
	z := &s.zr
	switch {
	case z.index < z.pgEnd:
		s.phase = phChunkEnter
	case z.offEnd != 0:
		e.startFill(z.pgEnd, 0, z.offEnd, fillTail)
	default:
		s.phase = phOut
	}
}

// slotOfNext is the slot the next event will be about (after settle).
func (e *engine) slotOfNext() uint64 {
	s := &e.s
	var v uint64
	switch s.phase {
	case phStart, phArgErr, phInline:
		v = 0
	case phFillEnter, phFillAlloc, phFillPage:
		v = s.fill.idx
		if s.fill.which == fillPunchTail {
			// A punch fills its tail page before the hole between: the walk's position stays at
			// the hole's start (Event.Count names the page), so slots never go back.
			v = s.zr.pgStart
		}
	case phTrChunkEnter:
		v = s.zr.index
	case phTrSlots:
		v = s.chunk.pos
	case phTrLeave:
		v = s.chunk.hi - 1
	case phChunkEnter:
		v = s.zr.index
	case phChunkAlloc, phReserve:
		v = s.chunk.lo
	case phSlots:
		v = s.chunk.pos
	case phFinalFlush, phChunkLeave:
		v = s.chunk.leave
	case phInvCall, phInvSeg:
		v = s.call.slot
	default:
		v = s.lastSlot
	}
	return max(v, s.lastSlot)
}

// next fills ev with the next event; false when the run is over or a
// source failed (e.err).
func (e *engine) next(ev *Event) bool {
	if e.err != nil {
		return false
	}
	s := &e.s
	if settlePhases&(1<<s.phase) != 0 {
		e.settle()
	}
	if s.phase == phEnd {
		return false
	}
	if (s.phase == phChunkEnter || s.phase == phTrChunkEnter) && e.onChunk != nil {
		e.onChunk()
	}
	if pass2Phases&(1<<s.phase) != 0 {
		ev.clear()
		k := sink{ev: ev, limit: s.step + 1}
		ok := e.pass2(&k)
		ev.Step, ev.Chunk = s.step, s.chunk.ord
		return ok
	}
	*ev = Event{Slot: e.slotOfNext(), Chunk: s.chunk.ord}
	if !e.step(ev) {
		return false
	}
	s.step++
	ev.Step = s.step
	ev.Chunk = s.chunk.ord
	s.lastSlot = ev.Slot
	s.stats.Steps = s.step
	return true
}

// fail makes ev the call's error (its fields for the message set).
func (e *engine) fail(ev *Event, errno string, act Action) {
	ev.Kind, ev.Errno, ev.Action = EvError, errno, act
	e.s.errno = errno
	e.s.msg = ev.Message()
}

// reserve is inc_valid_block_count(partial): how many of want fit.
func (e *engine) reserve(want uint64) uint64 {
	v := &e.in.Volume
	avail := int64(v.UserBlockCount) - int64(v.CurrentReservedBlocks) - int64(v.RootReservedBlocks)
	over := int64(e.s.counters.validBlocks) + int64(want) - avail
	if over > 0 {
		want -= min(uint64(over), want)
	}
	return want
}

// findMissing reads which nodes of pos's path the overlay still lacks
// into s.alloc.
func (e *engine) findMissing(pos *dnodePos, missing int) {
	a := &e.s.alloc
	a.n, a.next = copy(a.keys[:], e.slots.missingNodes(pos, missing)), 0
}

func (e *engine) allocNode(ev *Event) bool {
	s := &e.s
	c := &s.counters
	k := s.alloc.keys[s.alloc.next]
	s.alloc.next++
	ev.Node = k.String()
	v := &e.in.Volume
	if int64(c.validBlocks)+1+int64(v.CurrentReservedBlocks)+int64(v.RootReservedBlocks) > int64(v.UserBlockCount) ||
		(v.MaxNodeCount > 0 && c.validNodes+1 > v.MaxNodeCount) {
		e.fail(ev, "ENOSPC", ActNodeAlloc)
		return false
	}
	ev.Kind = EvNodeAlloc
	ev.Before = c.validBlocks
	c.validBlocks++
	c.validNodes++
	c.iBlocks++
	s.stats.NodesAlloc++
	ev.After = c.validBlocks
	e.slots.allocate(k)
	return true
}

func segnoOf(v *Volume, a uint32) uint32 { return f2fs.SegNo(a, v.MainBlkaddr) }

// validate is f2fs_is_valid_blkaddr(DATA_GENERIC_ENHANCE).
func (e *engine) validate(a uint32) (Action, error) {
	v := &e.in.Volume
	if a < v.MainBlkaddr || a >= v.MaxBlkaddr {
		return ActBounds, nil
	}
	st, err := e.sit.get(segnoOf(v, a))
	if err != nil {
		return ActNone, err
	}
	if !st.Test(f2fs.SegOff(a, v.Segment0Blkaddr)) {
		return ActSITBit, nil
	}
	return ActNone, nil
}

// track counts physically contiguous runs of invalidated blocks.
func (e *engine) track(a uint32) {
	if t := &e.s.track; a == t.end {
		t.end++
		return
	}
	e.newTrack(a)
}

// newTrack closes the run being counted and starts one at a. Not inlined,
// so track (run once per invalidated block) is.
//
//go:noinline
func (e *engine) newTrack(a uint32) {
	e.closeTrack()
	e.s.track = runTrack{start: a, end: a + 1}
}

func (e *engine) closeTrack() {
	s := &e.s
	if t := s.track; t.end > t.start {
		s.stats.Runs++
		s.stats.RunLengths.add(t.end - t.start)
		s.track = runTrack{}
	}
}

func (e *engine) markHi(idx uint64) {
	if c := &e.s.counters; idx+1 > c.hiWater {
		c.hiWater = idx + 1
	}
}

// step performs the phase's work and describes it in ev.
func (e *engine) step(ev *Event) bool {
	s := &e.s
	cn := &s.counters
	z := &s.zr
	c := &s.chunk
	v := &e.in.Volume
	switch s.phase {
	case phStart:
		ev.Kind = EvStart
		ev.Before, ev.After = uint64(max(e.req.Offset, 0)), uint64(max(e.req.Length, 0))
		if e.req.Op != OpZero {
			ev.Action = opAction(e.req.Op)
			s.phase = e.startOp()
			break
		}
		switch {
		case e.argCheck() != "":
			s.phase = phArgErr
		case cn.inline&InlineData != 0:
			s.phase = phInline
		default:
			s.phase = phPages
		}
	case phArgErr:
		if e.req.Op != OpZero {
			e.fail(ev, e.opArgCheck(), ActBadArgs)
		} else {
			e.fail(ev, e.argCheck(), ActBadArgs)
		}
		s.phase = phDone
	case phInline:
		ev.Kind = EvInlineConvert
		s.phase = e.afterInline()
		if cn.inline&InlineDataExist != 0 {
			if e.reserve(1) == 0 {
				ev.Count = 1
				e.fail(ev, "ENOSPC", ActReserve)
				s.phase = phDone
				break
			}
			// __get_segment_type_6: a cold file goes to the cold data
			// log before FI_HOT_DATA is looked at.
			segno, k := v.HotDataSegno, cn.hotBlkoff
			if cn.advise&AdviseCold != 0 {
				segno, k = v.ColdDataSegno, cn.coldBlkoff
			}
			from := k
			k, st, err := e.takeBlock(segno, from)
			if err != nil {
				e.err = err
				return false
			}
			if k >= blocksPerSeg {
				e.err = fmt.Errorf("%w: data log segment %d has no free block at or after %d", ErrInput, segno, from)
				return false
			}
			a := f2fs.SegBlock(v.MainBlkaddr, segno) + k
			st.class = classify(st.Count(), st.class == SegCurrent)
			if cn.advise&AdviseCold != 0 {
				cn.coldBlkoff = k + 1
			} else {
				cn.hotBlkoff = k + 1
			}
			ev.Before = cn.validBlocks
			cn.validBlocks++
			cn.iBlocks++
			s.stats.Reserved++
			ev.After = cn.validBlocks
			ev.Addr = a
			if err := e.setSlot(0, a); err != nil {
				e.err = err
				return false
			}
		}
		// From here the inode's i_addr holds slots; the overlay keeps
		// reading the old inline bytes as NULL slots.
		cn.inline &^= InlineData | InlineDataExist
	case phFillEnter:
		pos, buf, missing, err := e.slots.read(s.fill.idx, e.fbuf)
		e.fbuf = buf
		if err != nil {
			e.err = err
			return false
		}
		e.findMissing(&pos, missing)
		s.phase = phFillPage
		if s.alloc.n > 0 {
			s.phase = phFillAlloc
		}
		return e.step(ev)
	case phFillAlloc:
		if !e.allocNode(ev) {
			e.stopFill()
			break
		}
		if s.alloc.next == s.alloc.n {
			s.phase = phFillPage
		}
	case phFillPage:
		f := &s.fill
		pos, buf, _, err := e.slots.read(f.idx, e.fbuf)
		e.fbuf = buf
		if err != nil {
			e.err = err
			return false
		}
		a := buf[pos.ofs]
		ev.State = stateOf(a)
		ev.Addr, ev.Len = f.start, f.len
		ev.Count = f.idx
		fz := FillZero{Index: f.idx, Start: f.start, Len: f.len, Before: ev.State}
		if a == NullAddr {
			if e.reserve(1) == 0 {
				e.fail(ev, "ENOSPC", ActFillReserve)
				e.stopFill()
				break
			}
			ev.Before = cn.validBlocks
			cn.validBlocks++
			cn.iBlocks++
			s.stats.Reserved++
			ev.After = cn.validBlocks
			buf[pos.ofs] = NewAddr
			e.slots.store(pos.start, buf)
			e.markHi(f.idx)
		} else if isBlock(a) {
			fz.Addr = a
		}
		e.fills = append(e.fills, fz)
		s.stats.FillZeroPages++
		ev.Kind = EvFillZero
		end := uint64(e.req.Offset + e.req.Length)
		if f.which >= fillPunchSingle {
			e.punchFillDone(f.which)
			break
		}
		switch f.which {
		case fillSingle:
			z.newSize = max(z.newSize, int64(end))
			s.phase = phOut
		case fillHead:
			z.pgStart++
			z.newSize = max(z.newSize, int64(z.pgStart<<12))
			z.index = z.pgStart
			e.nextChunkOrTail()
		case fillTail:
			z.newSize = max(z.newSize, int64(end))
			s.phase = phOut
		}
	case phChunkEnter:
		pos, buf, missing, err := e.slots.read(z.index, e.buf)
		e.buf = buf
		if err != nil {
			e.err = err
			return false
		}
		lo := z.index
		hi := min(z.pgEnd, pos.start+uint64(pos.cap))
		*c = chunkState{node: pos, lo: lo, hi: hi, pos: lo, leave: c.leave, ord: c.ord + 1, in: true}
		s.run.len = 0
		s.stats.DnodeChunks++
		for _, a := range buf[lo-pos.start : hi-pos.start] {
			switch a {
			case NullAddr:
				c.nulls++
			case NewAddr:
				s.stats.SlotsNew++
			case CompressAddr:
				s.stats.SlotsCompress++
			default:
				s.stats.SlotsAddr++
			}
		}
		s.stats.SlotsNull += uint64(c.nulls)
		e.findMissing(&pos, missing)
		ev.Kind = EvChunkEnter
		ev.Chunk = c.ord
		ev.Count = hi - lo
		ev.Node = pos.name()
		s.phase = phReserve
		if s.alloc.n > 0 {
			s.phase = phChunkAlloc
		}
	case phChunkAlloc:
		if !e.allocNode(ev) {
			c.leave = c.lo
			s.phase = phChunkLeave
			break
		}
		if s.alloc.next == s.alloc.n {
			s.phase = phReserve
		}
	case phReserve:
		want := uint64(c.nulls)
		got := e.reserve(want)
		ev.Count = want
		if got == 0 {
			e.fail(ev, "ENOSPC", ActReserve)
			c.leave = c.lo
			s.phase = phChunkLeave
			break
		}
		ev.Kind = EvReserve
		ev.Len = uint32(got)
		ev.Before = cn.validBlocks
		cn.validBlocks += got
		cn.iBlocks += got
		s.stats.Reserved += got
		ev.After = cn.validBlocks
		left := got
		for i := c.lo - c.node.start; left > 0 && i < c.hi-c.node.start; i++ {
			if e.buf[i] == NullAddr {
				e.buf[i] = NewAddr
				e.markHi(c.node.start + i)
				left--
			}
		}
		c.dirty = true
		s.phase = phSlots
	case phChunkLeave:
		ev.Kind = EvChunkLeave
		ev.Errno = s.errno
		ev.Count = c.pos - c.lo
		if c.dirty {
			e.slots.store(c.node.start, e.buf)
		}
		c.in = false
		if s.errno != "" {
			s.phase = phOut
			break
		}
		z.index = c.hi
		z.newSize = max(z.newSize, int64(z.index<<12))
		e.nextChunkOrTail()
	case phOut:
		ev.Kind = EvSize
		ev.Before = uint64(cn.iSize)
		if e.keepSize() {
			ev.Action = ActKeepSize
			ev.After = uint64(cn.iSize)
			cn.advise |= AdviseKeepSize
		} else {
			ev.Action = ActSetSize
			cn.iSize = z.newSize
			ev.After = uint64(cn.iSize)
		}
		s.phase = phDone
	case phTrSize:
		e.truncSize(ev)
	case phTrChunkEnter:
		if !e.chunkEnterTrunc(ev) {
			return false
		}
	case phTrSlots:
		if !e.truncSlot(ev) {
			return false
		}
	case phTrLeave:
		e.chunkLeaveTrunc(ev)
	case phTrNodeDone:
		e.nodeDone(ev)
	case phTrPartialPage:
		e.partialPageEvent(ev)
	case phTrCluster:
		e.partialClusterEvent(ev)
	case phDone:
		// A physical run goes on across chunks (core/runs.go): it is closed here, at the end.
		e.closeTrack()
		ev.Kind = EvDone
		ev.Errno = s.errno
		if e.req.Op != OpZero {
			ev.Action = opAction(e.req.Op)
		}
		s.phase = phEnd
	default:
		return false
	}
	return true
}

// setSlot writes one slot through the overlay.
func (e *engine) setSlot(idx uint64, a uint32) error {
	pos, buf, _, err := e.slots.read(idx, e.fbuf)
	e.fbuf = buf
	if err != nil {
		return err
	}
	buf[pos.ofs] = a
	e.slots.store(pos.start, buf)
	e.markHi(idx)
	return nil
}

// segmentStates lists the touched segments, before and after.
func (e *engine) segmentStates(limit int) []SegmentState {
	t := e.sit.touched
	if limit > 0 && len(t) > limit {
		t = t[len(t)-limit:]
	}
	return e.statesOf(t)
}

// statesOf describes the given touched segments, before and now.
func (e *engine) statesOf(t []uint32) []SegmentState {
	out := make([]SegmentState, 0, len(t))
	for _, no := range t {
		st := e.sit.segs[no]
		m := st.Map()
		out = append(out, SegmentState{Segno: no, ValidBefore: st.origValid, Valid: st.Count(),
			MapBefore: hex.EncodeToString(st.orig[:]), Map: hex.EncodeToString(m[:]),
			ClassBefore: st.origClass, Class: st.class})
	}
	return out
}

// extents builds the slot map over [from, to), reading through the overlay
// (and the current chunk's working copy).
func (e *engine) extents(from, to uint64) ([]Extent, error) {
	var b extentBuilder
	var buf []uint32
	starts := e.slots.recStarts()
	var exist []uint64
	listed := false
	if l, ok := e.slots.base.(DnodeLister); ok {
		exist, listed = l.DnodeStarts()
	}
	if c := &e.s.chunk; c.in {
		if k, found := slices.BinarySearch(starts, c.node.start); !found {
			starts = slices.Insert(starts, k, c.node.start)
		}
	}
	for idx := from; idx < to; {
		var slots []uint32
		var pos dnodePos
		if p := locate(idx, e.slots.geom); !(e.s.chunk.in && p.start == e.s.chunk.node.start) {
			rec := e.slots.recs[p.start]
			if rec == nil {
				// Nodes that do not exist hold only NULL slots: skip to the next dnode that may hold
				// another, or past the missing subtree.
				var end uint64
				if listed {
					end = ^uint64(0)
					if k, found := slices.BinarySearch(exist, p.start); found {
						end = idx
					} else if k < len(exist) {
						end = exist[k]
					}
					if k, _ := slices.BinarySearch(starts, idx); k < len(starts) {
						end = max(min(end, starts[k]), idx)
					}
				} else {
					var err error
					if end, err = e.slots.holeEnd(idx, starts); err != nil {
						return nil, err
					}
				}
				if end > idx {
					end = min(end, to)
					b.addSame(idx, NullAddr, end-idx)
					idx = end
					continue
				}
			}
			if rec != nil {
				// Walk the compressed record instead of every slot.
				end := min(to, p.start+uint64(p.cap))
				i := p.start
				for _, run := range rec.runs {
					lo, hi := max(i, idx), min(i+uint64(run.n), end)
					if lo < hi {
						if run.inc {
							b.addInc(lo, run.addr+uint32(lo-i), hi-lo)
						} else {
							b.addSame(lo, run.addr, hi-lo)
						}
					}
					i += uint64(run.n)
				}
				idx = end
				continue
			}
		}
		if c := &e.s.chunk; c.in && idx >= c.node.start && idx < c.node.start+uint64(c.node.cap) {
			pos, slots = c.node, e.buf
		} else {
			var err error
			pos, buf, _, err = e.slots.read(idx, buf)
			if err != nil {
				return nil, err
			}
			slots = buf
		}
		end := min(to, pos.start+uint64(pos.cap))
		for i := idx; i < end; i++ {
			b.add(i, slots[i-pos.start])
		}
		idx = end
	}
	return b.ext, nil
}

// result builds the Result once the engine has finished.
func (e *engine) result() (*Result, error) {
	s := &e.s
	r := &Result{Mode: e.mode, Errno: s.errno, Calls: e.calls,
		SizeBefore: e.in.Inode.Size, SizeAfter: s.counters.iSize,
		BlocksBefore: e.in.Inode.Blocks, BlocksAfter: s.counters.iBlocks,
		ValidBlocks: s.counters.validBlocks, ValidNodes: s.counters.validNodes,
		Advise: s.counters.advise, Inline: s.counters.inline, NeedFsck: s.counters.needFsck,
		Stats: s.stats, FillZero: e.fills, Segments: e.segmentStates(0)}
	if r.FillZero == nil {
		r.FillZero = []FillZero{}
	}
	r.Message = s.msg
	r.Stats.SegmentsTouched = uint64(len(e.sit.touched))
	ext, err := e.afterExtents()
	if err != nil {
		return nil, err
	}
	r.After.Extents = ext
	r.nextFn = e.nextInput
	return r, nil
}

// afterExtents is the file's slot map as the engine leaves it, in after.txt's span:
// 0 .. max(ceil(i_size/4096), last non-NULL slot + 1).
func (e *engine) afterExtents() ([]Extent, error) {
	s := &e.s
	ext := []Extent{}
	if e.in.Inode.Type == "file" && s.counters.inline&(InlineData|InlineDentry) == 0 {
		// Only slots below the file's last non-NULL slot or the highest one the run touched can hold
		// anything but NULL_ADDR: read those, and state the rest up to EOF as one NULL extent, so a
		// huge (or corrupt) i_size costs nothing.
		eof := uint64(s.counters.iSize+blockSize-1) / blockSize
		dataEnd := max(e.in.Inode.SlotsEnd, s.counters.hiWater)
		var err error
		ext, err = e.extents(0, dataEnd)
		if err != nil {
			return nil, err
		}
		if eof > dataEnd {
			b := extentBuilder{ext: ext}
			b.addSame(dataEnd, NullAddr, eof-dataEnd)
			ext = b.ext
		}
		// Past EOF only up to the last non-NULL slot.
		for k := len(ext) - 1; k >= 0 && ext[k].State == "null" && ext[k].Index >= eof; k-- {
			ext = ext[:k]
		}
		if k := len(ext) - 1; k >= 0 && ext[k].State == "null" && ext[k].Index+ext[k].Count > eof {
			ext[k].Count = eof - ext[k].Index
		}
	}
	if ext == nil {
		ext = []Extent{}
	}
	return ext, nil
}

// SlotMap is in's file's slot map over 0 .. max(ceil(i_size/4096), last non-NULL slot + 1), as
// Result.After gives it after a run: for the state a sequence left (a Seq's File after Unmount is
// what an image shows).
func SlotMap(in Input) ([]Extent, error) {
	e, err := newEngine(in, Request{}, PerBlock)
	if err != nil {
		return nil, err
	}
	return e.afterExtents()
}

// nextInput is the state after the run as an Input for a further request.
func (e *engine) nextInput() Input {
	c := &e.s.counters
	next := e.in
	next.Slots = e.slots.frozen()
	next.SIT = e.sit.frozen()
	next.Volume.ValidBlockCount = c.validBlocks
	next.Volume.ValidNodeCount = c.validNodes
	next.Volume.HotDataBlkoff = c.hotBlkoff
	next.Volume.ColdDataBlkoff = c.coldBlkoff
	next.Volume.WarmDataBlkoff = c.warmBlkoff
	next.Inode.Size = c.iSize
	next.Inode.Blocks = c.iBlocks
	next.Inode.Advise = c.advise
	next.Inode.Inline = c.inline
	next.Inode.SlotsEnd = max(e.in.Inode.SlotsEnd, c.hiWater)
	next.Volume.NeedFsck = e.in.Volume.NeedFsck || c.needFsck
	// fill_zero's pages are dirty in the page cache until writeback; whole pages of the range
	// were written back before the walk (filemap_write_and_wait_range) and dropped by it.
	next.Inode.Dirty = addDirty(e.dropPages(e.in.Inode.Dirty), e.fills)
	if r := e.s.tr.cluster; r.lo < r.hi {
		// f2fs_truncate_partial_cluster's set_cluster_dirty, after truncate_setsize's drop.
		next.Inode.Dirty = addDirtyRange(next.Inode.Dirty, r.lo, r.hi-1)
	}
	next.Volume.CurrentReservedBlocks = c.curReserved
	next.Inode.ComprBlocks = c.comprBlocks
	if segs := e.sit.prefreeNow(); len(segs) > 0 {
		next.Volume.Prefree = addSegs(e.in.Volume.Prefree, segs)
	}
	return next
}

// stopFill ends the call after a partial-page fill_zero failed: a head or single page returns at once
// (no size update), the tail page goes to out, which may still grow i_size for the finished chunks.
func (e *engine) stopFill() {
	e.s.phase = phDone
	if e.s.fill.which == fillTail && e.req.Op == OpZero {
		e.s.phase = phOut
	}
}

// changed lists the current content of every dnode the engine has written (its overlay records and
// the chunk being worked on), clipped to [lo, hi), as merged extents in index order.
func (e *engine) changed(lo, hi uint64) []Extent {
	s := &e.s
	starts := make([]uint64, 0, len(e.slots.recs)+1)
	for start := range e.slots.recs {
		starts = append(starts, start)
	}
	if s.chunk.in {
		if _, ok := e.slots.recs[s.chunk.node.start]; !ok {
			starts = append(starts, s.chunk.node.start)
		}
	}
	slices.Sort(starts)
	var b extentBuilder
	for _, start := range starts {
		p := locate(start, e.slots.geom)
		end := start + uint64(p.cap)
		from, to := max(lo, start), min(hi, end)
		if from >= to {
			continue
		}
		if s.chunk.in && start == s.chunk.node.start {
			for i := from; i < to; i++ {
				b.add(i, e.buf[i-start])
			}
			continue
		}
		i := start
		for _, run := range e.slots.recs[start].runs {
			a, z := max(i, from), min(i+uint64(run.n), to)
			if a < z {
				if run.inc {
					b.addInc(a, run.addr+uint32(a-i), z-a)
				} else {
					b.addSame(a, run.addr, z-a)
				}
			}
			i += uint64(run.n)
		}
	}
	if b.ext == nil {
		return []Extent{}
	}
	return b.ext
}

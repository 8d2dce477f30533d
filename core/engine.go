package core

import (
	"encoding/hex"
	"fmt"
	"slices"
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
)

// Which partial page a fill_zero is for.
const (
	fillSingle uint8 = iota
	fillHead
	fillTail
)

// scalars is every piece of engine state that is a plain value, so a
// checkpoint is one copy.
type scalars struct {
	step     int64
	phase    phase
	ret      phase
	lastSlot uint64
	errno    string
	errEv    Event // the error event, for Result.Message

	validBlocks uint64
	validNodes  uint32
	iBlocks     uint64
	iSize       int64
	newSize     int64
	advise      uint8
	inline      uint8
	needFsck    bool
	hotBlkoff   uint32
	coldBlkoff  uint32
	hiWater     uint64 // one past the highest slot made non-NULL

	pgStart, pgEnd   uint64
	offStart, offEnd uint32
	index            uint64

	// allocation of missing nodes on a path (chunk or fill page)
	alloc  [3]nodeKey
	allocN int
	allocI int

	fillIdx   uint64
	fillStart uint32
	fillLen   uint32
	fillWhich uint8

	chunkOrd  int32
	inChunk   bool
	chunk     dnodePos
	lo, hi    uint64
	pos       uint64
	leaveSlot uint64
	chunkDirt bool

	blkstart, blklen uint32 // batched pending run
	blkslot          uint64 // the slot that started it
	vstart, vlen     uint32 // run tracking for stats, both modes

	invStart, invLen, invNext uint32
	invReason                 Action
	invSlot                   uint64

	stats Stats
}

type engine struct {
	in    Input
	req   Request
	mode  Mode
	slots *slotOverlay
	sit   *sitOverlay
	buf   []uint32
	fbuf  []uint32
	calls CallList
	fills []FillZero
	s     scalars
	err   error
	// fastEv is the event fastSlotEvents fills and hands out.
	fastEv Event
	// onChunk, when set, is called before each chunk's first event (the
	// checkpoint hook of a seekable Run).
	onChunk func()
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
		validBlocks: in.Volume.ValidBlockCount,
		validNodes:  in.Volume.ValidNodeCount,
		iBlocks:     in.Inode.Blocks,
		iSize:       in.Inode.Size,
		advise:      in.Inode.Advise,
		inline:      in.Inode.Inline,
		hotBlkoff:   in.Volume.HotDataBlkoff,
		coldBlkoff:  in.Volume.ColdDataBlkoff,
		chunkOrd:    -1,
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
const settlePhases = 1<<phPages | 1<<phReserve | 1<<phSlots | 1<<phFinalFlush | 1<<phOut

// settle runs the transitions that emit no event, so the phase names the
// next event.
func (e *engine) settle() {
	s := &e.s
	for {
		switch s.phase {
		case phPages:
			off, end := uint64(e.req.Offset), uint64(e.req.Offset+e.req.Length)
			s.pgStart, s.pgEnd = off>>12, end>>12
			s.offStart, s.offEnd = uint32(off&4095), uint32(end&4095)
			s.newSize = s.iSize
			switch {
			case s.pgStart == s.pgEnd:
				e.startFill(s.pgStart, s.offStart, s.offEnd-s.offStart, fillSingle)
			case s.offStart != 0:
				e.startFill(s.pgStart, s.offStart, blockSize-s.offStart, fillHead)
			default:
				s.index = s.pgStart
				e.nextChunkOrTail()
			}
		case phReserve:
			if e.countNull() == 0 {
				s.phase = phSlots
				continue
			}
			return
		case phSlots:
			if s.pos >= s.hi {
				s.leaveSlot = s.hi - 1
				s.phase = phChunkLeave
				if e.mode == Batched {
					s.phase = phFinalFlush
				}
				continue
			}
			return
		case phFinalFlush:
			if s.blklen == 0 {
				s.phase = phChunkLeave
				continue
			}
			return
		case phOut:
			if s.newSize <= s.iSize {
				s.phase = phDone
			}
			return
		default:
			return
		}
	}
}

func (e *engine) startFill(idx uint64, start, length uint32, which uint8) {
	s := &e.s
	s.fillIdx, s.fillStart, s.fillLen, s.fillWhich = idx, start, length, which
	s.phase = phFillEnter
}

func (e *engine) nextChunkOrTail() {
	s := &e.s
	switch {
	case s.index < s.pgEnd:
		s.phase = phChunkEnter
	case s.offEnd != 0:
		e.startFill(s.pgEnd, 0, s.offEnd, fillTail)
	default:
		s.phase = phOut
	}
}

func (e *engine) countNull() int {
	s := &e.s
	cnt := 0
	for _, a := range e.buf[s.lo-s.chunk.start : s.hi-s.chunk.start] {
		if a == NullAddr {
			cnt++
		}
	}
	return cnt
}

// slotOfNext is the slot the next event will be about (after settle).
func (e *engine) slotOfNext() uint64 {
	s := &e.s
	var v uint64
	switch s.phase {
	case phStart, phArgErr, phInline:
		v = 0
	case phFillEnter, phFillAlloc, phFillPage:
		v = s.fillIdx
	case phChunkEnter:
		v = s.index
	case phChunkAlloc, phReserve:
		v = s.lo
	case phSlots:
		v = s.pos
	case phFinalFlush:
		v = s.leaveSlot
	case phInvCall, phInvSeg:
		v = s.invSlot
	case phChunkLeave:
		v = s.leaveSlot
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
	if s.phase == phChunkEnter && e.onChunk != nil {
		e.onChunk()
	}
	*ev = Event{Slot: e.slotOfNext(), Chunk: s.chunkOrd}
	if !e.step(ev) {
		return false
	}
	s.step++
	ev.Step = s.step
	ev.Chunk = s.chunkOrd
	s.lastSlot = ev.Slot
	s.stats.Steps = s.step
	return true
}

func (e *engine) fail(ev *Event, errno string, act Action) {
	ev.Kind, ev.Errno, ev.Action = EvError, errno, act
	e.s.errno = errno
	e.s.errEv = *ev
}

// reserve is inc_valid_block_count(partial): how many of want fit.
func (e *engine) reserve(want uint64) uint64 {
	v := &e.in.Volume
	avail := int64(v.UserBlockCount) - int64(v.CurrentReservedBlocks) - int64(v.RootReservedBlocks)
	over := int64(e.s.validBlocks) + int64(want) - avail
	if over > 0 {
		want -= min(uint64(over), want)
	}
	return want
}

func (e *engine) allocNode(ev *Event) bool {
	s := &e.s
	k := s.alloc[s.allocI]
	s.allocI++
	ev.Node = k.String()
	v := &e.in.Volume
	if int64(s.validBlocks)+1+int64(v.CurrentReservedBlocks)+int64(v.RootReservedBlocks) > int64(v.UserBlockCount) ||
		(v.MaxNodeCount > 0 && s.validNodes+1 > v.MaxNodeCount) {
		e.fail(ev, "ENOSPC", ActNodeAlloc)
		return false
	}
	ev.Kind = EvNodeAlloc
	ev.Before = s.validBlocks
	s.validBlocks++
	s.validNodes++
	s.iBlocks++
	s.stats.NodesAlloc++
	ev.After = s.validBlocks
	e.slots.allocate(k)
	return true
}

func segnoOf(v *Volume, a uint32) uint32 { return (a - v.MainBlkaddr) / blocksPerSeg }

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
	if !testBit(&st.cur, (a-v.Segment0Blkaddr)%blocksPerSeg) {
		return ActSITBit, nil
	}
	return ActNone, nil
}

// track counts physically contiguous runs of invalidated blocks.
func (e *engine) track(a uint32) {
	s := &e.s
	if s.vlen > 0 && a == s.vstart+s.vlen {
		s.vlen++
		return
	}
	e.closeTrack()
	s.vstart, s.vlen = a, 1
}

func (e *engine) closeTrack() {
	s := &e.s
	if s.vlen > 0 {
		s.stats.Runs++
		s.stats.RunLengths.add(s.vlen)
		s.vlen = 0
	}
}

func (e *engine) markHi(idx uint64) {
	if idx+1 > e.s.hiWater {
		e.s.hiWater = idx + 1
	}
}

// step performs the phase's work and describes it in ev.
func (e *engine) step(ev *Event) bool {
	s := &e.s
	v := &e.in.Volume
	switch s.phase {
	case phStart:
		ev.Kind = EvStart
		ev.Before, ev.After = uint64(max(e.req.Offset, 0)), uint64(max(e.req.Length, 0))
		switch {
		case e.argCheck() != "":
			s.phase = phArgErr
		case s.inline&InlineData != 0:
			s.phase = phInline
		default:
			s.phase = phPages
		}
	case phArgErr:
		e.fail(ev, e.argCheck(), ActBadArgs)
		s.phase = phDone
	case phInline:
		ev.Kind = EvInlineConvert
		s.phase = phPages
		if s.inline&InlineDataExist != 0 {
			if e.reserve(1) == 0 {
				ev.Count = 1
				e.fail(ev, "ENOSPC", ActReserve)
				s.phase = phDone
				break
			}
			// __get_segment_type_6: a cold file goes to the cold data
			// log before FI_HOT_DATA is looked at.
			segno, k := v.HotDataSegno, s.hotBlkoff
			if s.advise&AdviseCold != 0 {
				segno, k = v.ColdDataSegno, s.coldBlkoff
			}
			st, err := e.sit.get(segno)
			if err != nil {
				e.err = err
				return false
			}
			from := k
			for k < blocksPerSeg && testBit(&st.cur, k) {
				k++
			}
			if k >= blocksPerSeg {
				e.err = fmt.Errorf("%w: data log segment %d has no free block at or after %d", ErrInput, segno, from)
				return false
			}
			a := v.MainBlkaddr + segno*blocksPerSeg + k
			e.sit.modify(segno, st)
			setBit(&st.cur, k)
			setBit(&st.disc, k)
			st.valid++
			st.class = classify(st.valid, st.class == SegCurrent)
			if s.advise&AdviseCold != 0 {
				s.coldBlkoff = k + 1
			} else {
				s.hotBlkoff = k + 1
			}
			ev.Before = s.validBlocks
			s.validBlocks++
			s.iBlocks++
			s.stats.Reserved++
			ev.After = s.validBlocks
			ev.Addr = a
			if err := e.setSlot(0, a); err != nil {
				e.err = err
				return false
			}
		}
		// From here the inode's i_addr holds slots; the overlay keeps
		// reading the old inline bytes as NULL slots.
		s.inline &^= InlineData | InlineDataExist
	case phFillEnter:
		pos, buf, missing, err := e.slots.read(s.fillIdx, e.fbuf)
		e.fbuf = buf
		if err != nil {
			e.err = err
			return false
		}
		ks := e.slots.missingNodes(&pos, missing)
		s.allocN, s.allocI = copy(s.alloc[:], ks), 0
		s.phase = phFillPage
		if s.allocN > 0 {
			s.phase = phFillAlloc
		}
		return e.step(ev)
	case phFillAlloc:
		if !e.allocNode(ev) {
			e.stopFill()
			break
		}
		if s.allocI == s.allocN {
			s.phase = phFillPage
		}
	case phFillPage:
		pos, buf, _, err := e.slots.read(s.fillIdx, e.fbuf)
		e.fbuf = buf
		if err != nil {
			e.err = err
			return false
		}
		a := buf[pos.ofs]
		ev.State = stateOf(a)
		ev.Addr, ev.Len = s.fillStart, s.fillLen
		fz := FillZero{Index: s.fillIdx, Start: s.fillStart, Len: s.fillLen, Before: ev.State}
		if a == NullAddr {
			if e.reserve(1) == 0 {
				e.fail(ev, "ENOSPC", ActFillReserve)
				e.stopFill()
				break
			}
			ev.Before = s.validBlocks
			s.validBlocks++
			s.iBlocks++
			s.stats.Reserved++
			ev.After = s.validBlocks
			buf[pos.ofs] = NewAddr
			e.slots.store(pos.start, buf)
			e.markHi(s.fillIdx)
		} else if isBlock(a) {
			fz.Addr = a
		}
		e.fills = append(e.fills, fz)
		s.stats.FillZeroPages++
		ev.Kind = EvFillZero
		end := uint64(e.req.Offset + e.req.Length)
		switch s.fillWhich {
		case fillSingle:
			s.newSize = max(s.newSize, int64(end))
			s.phase = phOut
		case fillHead:
			s.pgStart++
			s.newSize = max(s.newSize, int64(s.pgStart<<12))
			s.index = s.pgStart
			e.nextChunkOrTail()
		case fillTail:
			s.newSize = max(s.newSize, int64(end))
			s.phase = phOut
		}
	case phChunkEnter:
		pos, buf, missing, err := e.slots.read(s.index, e.buf)
		e.buf = buf
		if err != nil {
			e.err = err
			return false
		}
		s.chunkOrd++
		s.chunk = pos
		s.inChunk = true
		s.chunkDirt = false
		s.lo = s.index
		s.hi = min(s.pgEnd, pos.start+uint64(pos.cap))
		s.pos = s.lo
		s.blklen = 0
		s.stats.DnodeChunks++
		for _, a := range buf[s.lo-pos.start : s.hi-pos.start] {
			switch a {
			case NullAddr:
				s.stats.SlotsNull++
			case NewAddr:
				s.stats.SlotsNew++
			case CompressAddr:
				s.stats.SlotsCompress++
			default:
				s.stats.SlotsAddr++
			}
		}
		ks := e.slots.missingNodes(&pos, missing)
		s.allocN, s.allocI = copy(s.alloc[:], ks), 0
		ev.Kind = EvChunkEnter
		ev.Chunk = s.chunkOrd
		ev.Count = s.hi - s.lo
		ev.Node = pos.name()
		s.phase = phReserve
		if s.allocN > 0 {
			s.phase = phChunkAlloc
		}
	case phChunkAlloc:
		if !e.allocNode(ev) {
			s.leaveSlot = s.lo
			s.phase = phChunkLeave
			break
		}
		if s.allocI == s.allocN {
			s.phase = phReserve
		}
	case phReserve:
		want := uint64(e.countNull())
		got := e.reserve(want)
		ev.Count = want
		if got == 0 {
			e.fail(ev, "ENOSPC", ActReserve)
			s.leaveSlot = s.lo
			s.phase = phChunkLeave
			break
		}
		ev.Kind = EvReserve
		ev.Len = uint32(got)
		ev.Before = s.validBlocks
		s.validBlocks += got
		s.iBlocks += got
		s.stats.Reserved += got
		ev.After = s.validBlocks
		left := got
		for i := s.lo - s.chunk.start; left > 0 && i < s.hi-s.chunk.start; i++ {
			if e.buf[i] == NullAddr {
				e.buf[i] = NewAddr
				e.markHi(s.chunk.start + i)
				left--
			}
		}
		s.chunkDirt = true
		s.phase = phSlots
	case phSlots:
		a := e.buf[s.pos-s.chunk.start]
		ev.State = stateOf(a)
		ev.Addr = a
		if a == NewAddr {
			ev.Kind, ev.Action = EvSlot, ActSkipNew
			ev.Addr = 0
			s.pos++
			break
		}
		if a == NullAddr {
			e.fail(ev, "ENOSPC", ActNullSlot)
			e.stopChunk()
			break
		}
		if e.mode == Batched && s.blklen > 0 && a != s.blkstart+s.blklen {
			s.invReason = ActDiscontiguous
			s.invSlot = s.pos
			s.ret = phSlots
			s.phase = phInvCall
			return e.step(ev)
		}
		act, err := e.validate(a)
		if err != nil {
			e.err = err
			return false
		}
		if act != ActNone {
			e.fail(ev, "EFSCORRUPTED", act)
			s.needFsck = true
			e.stopChunk()
			break
		}
		ev.Kind = EvSlot
		if e.mode == PerBlock {
			ev.Action = ActInvalidate
			s.invStart, s.invLen, s.invReason, s.invSlot = a, 1, ActPerBlock, s.pos
			s.ret = phSlots
			s.phase = phInvCall
			break
		}
		if s.blklen == 0 {
			s.blkstart, s.blklen = a, 1
			s.blkslot = s.pos
			ev.Action = ActStartRun
		} else {
			s.blklen++
			ev.Action = ActExtendRun
		}
		ev.Len = s.blklen
		e.buf[s.pos-s.chunk.start] = NewAddr
		s.chunkDirt = true
		e.track(a)
		s.pos++
	case phFinalFlush:
		s.invReason = ActEndOfChunk
		if s.errno != "" {
			s.invReason = ActFlushOnError
		}
		s.invSlot = s.leaveSlot
		s.ret = phChunkLeave
		s.phase = phInvCall
		return e.step(ev)
	case phInvCall:
		if s.invReason != ActPerBlock {
			s.invStart, s.invLen = s.blkstart, s.blklen
			s.blklen = 0
		}
		ev.Kind, ev.Action = EvInvalidate, s.invReason
		ev.Slot = max(ev.Slot, s.invSlot)
		ev.Addr, ev.Len = s.invStart, s.invLen
		e.calls.add(s.invStart, s.invLen, s.invReason)
		s.stats.Calls++
		s.stats.SITLockAcquisitions++
		ev.Count = s.stats.Calls
		s.invNext = s.invStart
		s.phase = phInvSeg
	case phInvSeg:
		e.sitPiece(ev)
		if s.invNext == s.invStart+s.invLen {
			s.phase = s.ret
			if s.invReason == ActPerBlock {
				e.buf[s.pos-s.chunk.start] = NewAddr
				s.chunkDirt = true
				e.track(s.invStart)
				s.pos++
			}
		}
	case phChunkLeave:
		ev.Kind = EvChunkLeave
		ev.Errno = s.errno
		ev.Count = s.pos - s.lo
		e.closeTrack()
		if s.chunkDirt {
			e.slots.store(s.chunk.start, e.buf)
		}
		s.inChunk = false
		if s.errno != "" {
			s.phase = phOut
			break
		}
		s.index = s.hi
		s.newSize = max(s.newSize, int64(s.index<<12))
		e.nextChunkOrTail()
	case phOut:
		ev.Kind = EvSize
		ev.Before = uint64(s.iSize)
		if e.keepSize() {
			ev.Action = ActKeepSize
			ev.After = uint64(s.iSize)
			s.advise |= AdviseKeepSize
		} else {
			ev.Action = ActSetSize
			s.iSize = s.newSize
			ev.After = uint64(s.iSize)
		}
		s.phase = phDone
	case phDone:
		ev.Kind = EvDone
		ev.Errno = s.errno
		s.phase = phEnd
	default:
		return false
	}
	return true
}

// stopChunk ends pass 2 at the current slot after an error.
func (e *engine) stopChunk() {
	s := &e.s
	s.leaveSlot = s.pos
	if e.mode == Batched {
		s.phase = phFinalFlush
	} else {
		s.phase = phChunkLeave
	}
}

// piece is one segment's share of an f2fs_invalidate_blocks call.
type piece struct {
	segno, cnt, wrong, blk uint32
	before, after          int32
	cb, ca                 SegClass
}

// applyPiece releases blocks [a0, a0+cnt) of one segment:
// update_segment_mtime (not modelled: no clock), update_sit_entry(−cnt)
// and locate_dirty_segment.
func (e *engine) applyPiece(a0, cnt uint32) (piece, error) {
	s := &e.s
	v := &e.in.Volume
	p := piece{segno: segnoOf(v, a0), cnt: cnt}
	off := (a0 - v.Segment0Blkaddr) % blocksPerSeg
	st, err := e.sit.get(p.segno)
	if err != nil {
		return p, err
	}
	e.sit.modify(p.segno, st)
	p.before, p.cb = st.valid, st.class
	for k := off; k < off+cnt; k++ {
		m, b := &st.cur[k>>3], byte(0x80>>(k&7))
		if *m&b != 0 {
			*m &^= b
		} else {
			// "Bitmap was wrongly cleared": the kernel gives the block
			// back to the count and goes on (production f2fs_bug_on).
			if p.wrong == 0 {
				p.blk = v.MainBlkaddr + p.segno*blocksPerSeg + k
			}
			p.wrong++
		}
		if d := &st.disc[k>>3]; *d&b != 0 {
			*d &^= b
			s.stats.DiscardBlocks++
		}
	}
	st.valid -= int32(cnt - p.wrong)
	if st.class != SegCurrent {
		switch {
		case st.valid <= 0:
			if st.class != SegPrefree {
				s.stats.SegmentsPrefree++
			}
			st.class = SegPrefree
		case st.valid < blocksPerSeg:
			st.class = SegDirty
		default:
			st.class = SegFull
		}
	}
	p.after, p.ca = st.valid, st.class
	s.stats.SITPieces++
	s.stats.BlocksInvalidated += uint64(cnt - p.wrong)
	s.stats.WronglyCleared += uint64(p.wrong)
	return p, nil
}

// sitPiece applies the next segment piece of the current call and
// describes it in ev.
func (e *engine) sitPiece(ev *Event) {
	s := &e.s
	v := &e.in.Volume
	a0 := s.invNext
	off := (a0 - v.Segment0Blkaddr) % blocksPerSeg
	cnt := min(s.invStart+s.invLen-a0, blocksPerSeg-off)
	p, err := e.applyPiece(a0, cnt)
	if err != nil {
		e.err = err
		return
	}
	ev.Kind = EvSITUpdate
	ev.Segno, ev.Addr, ev.Len = p.segno, a0, cnt
	ev.Before, ev.After = uint64(max(p.before, 0)), uint64(max(p.after, 0))
	ev.SegBefore, ev.SegAfter = p.cb, p.ca
	ev.Count, ev.Blk = uint64(p.wrong), p.blk
	s.invNext = a0 + cnt
}

// fastSlotEvents is fastSlots for Walk: the same common cases, building
// the very events the stepped path would emit and handing them to fn. It
// returns whether it moved and whether fn asked to stop.
func (e *engine) fastSlotEvents(fn func(*Event) bool) (moved, stop bool) {
	s := &e.s
	base := s.chunk.start
	// ev lives on the heap (fn may keep the pointer for the call): fill it
	// field by field, never touching its strings (always "" here), so no
	// write barriers run per event.
	ev := &e.fastEv
	*ev = Event{}
	set := func(kind EventKind, slot uint64, act Action, state SlotState, addr, length uint32) {
		ev.Kind, ev.Slot, ev.Action, ev.State, ev.Addr, ev.Len = kind, slot, act, state, addr, length
		ev.Segno, ev.Count, ev.Before, ev.After, ev.SegBefore, ev.SegAfter, ev.Blk = 0, 0, 0, 0, 0, 0, 0
	}
	emit := func() bool {
		s.step++
		ev.Step = s.step
		ev.Chunk = s.chunkOrd
		s.lastSlot = ev.Slot
		s.stats.Steps = s.step
		return fn(ev)
	}
	for s.pos < s.hi {
		a := e.buf[s.pos-base]
		if a == NewAddr {
			set(EvSlot, s.pos, ActSkipNew, StateNew, 0, 0)
			s.pos++
			if !emit() {
				return true, true
			}
			moved = true
			continue
		}
		if !isBlock(a) || (e.mode == Batched && s.blklen > 0 && a != s.blkstart+s.blklen) {
			break
		}
		if act, err := e.validate(a); err != nil || act != ActNone {
			break
		}
		moved = true
		slot := s.pos
		if e.mode == PerBlock {
			set(EvSlot, slot, ActInvalidate, StateAddr, a, 0)
			if !emit() {
				return true, true
			}
			e.calls.add(a, 1, ActPerBlock)
			s.stats.Calls++
			s.stats.SITLockAcquisitions++
			set(EvInvalidate, slot, ActPerBlock, StateNull, a, 1)
			ev.Count = s.stats.Calls
			if !emit() {
				return true, true
			}
			p, err := e.applyPiece(a, 1)
			if err != nil {
				e.err = err
				return true, true
			}
			e.buf[slot-base] = NewAddr
			s.chunkDirt = true
			e.track(a)
			s.pos++
			set(EvSITUpdate, slot, ActNone, StateNull, a, 1)
			ev.Segno, ev.Before, ev.After = p.segno, uint64(max(p.before, 0)), uint64(max(p.after, 0))
			ev.SegBefore, ev.SegAfter, ev.Count, ev.Blk = p.cb, p.ca, uint64(p.wrong), p.blk
			if !emit() {
				return true, true
			}
			continue
		}
		act := ActExtendRun
		if s.blklen == 0 {
			s.blkstart, s.blklen = a, 1
			s.blkslot = slot
			act = ActStartRun
		} else {
			s.blklen++
		}
		e.buf[slot-base] = NewAddr
		s.chunkDirt = true
		e.track(a)
		s.pos++
		set(EvSlot, slot, act, StateAddr, a, s.blklen)
		if !emit() {
			return true, true
		}
	}
	return moved, false
}

// fastSlots does pass 2's common cases without building events, exactly
// as the stepped path would (same state, same step count): NEW slots,
// and valid blocks that need no flush first. It stops at anything else
// and reports whether it moved. It never takes the step count past limit.
func (e *engine) fastSlots(limit int64) bool {
	s := &e.s
	base := s.chunk.start
	moved := false
	for s.pos < s.hi && s.step+3 <= limit {
		a := e.buf[s.pos-base]
		if a == NewAddr {
			s.step++
			s.lastSlot = s.pos
			s.pos++
			moved = true
			continue
		}
		if !isBlock(a) || (e.mode == Batched && s.blklen > 0 && a != s.blkstart+s.blklen) {
			break
		}
		if act, err := e.validate(a); err != nil || act != ActNone {
			break
		}
		if e.mode == PerBlock {
			// slot, invalidate, sit-update
			e.calls.add(a, 1, ActPerBlock)
			s.stats.Calls++
			s.stats.SITLockAcquisitions++
			if _, err := e.applyPiece(a, 1); err != nil {
				e.err = err
				return false
			}
			s.step += 3
		} else {
			if s.blklen == 0 {
				s.blkstart, s.blklen = a, 1
				s.blkslot = s.pos
			} else {
				s.blklen++
			}
			s.step++
		}
		e.buf[s.pos-base] = NewAddr
		s.chunkDirt = true
		e.track(a)
		s.lastSlot = s.pos
		s.pos++
		moved = true
	}
	s.stats.Steps = s.step
	return moved
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
		out = append(out, SegmentState{Segno: no, ValidBefore: st.origValid, Valid: st.valid,
			MapBefore: hex.EncodeToString(st.orig[:]), Map: hex.EncodeToString(st.cur[:]),
			ClassBefore: st.origClass, Class: st.class})
	}
	return out
}

// extents builds the slot map over [from, to), reading through the overlay
// (and the current chunk's working copy).
func (e *engine) extents(from, to uint64) ([]Extent, error) {
	var b extentBuilder
	var buf []uint32
	for idx := from; idx < to; {
		var slots []uint32
		var pos dnodePos
		if p := locate(idx, e.slots.geom); !(e.s.inChunk && p.start == e.s.chunk.start) {
			if rec := e.slots.recs[p.start]; rec != nil {
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
		if e.s.inChunk && idx >= e.s.chunk.start && idx < e.s.chunk.start+uint64(e.s.chunk.cap) {
			pos, slots = e.s.chunk, e.buf
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
		SizeBefore: e.in.Inode.Size, SizeAfter: s.iSize,
		BlocksBefore: e.in.Inode.Blocks, BlocksAfter: s.iBlocks,
		ValidBlocks: s.validBlocks, ValidNodes: s.validNodes,
		Advise: s.advise, Inline: s.inline, NeedFsck: s.needFsck,
		Stats: s.stats, FillZero: e.fills, Segments: e.segmentStates(0)}
	if r.FillZero == nil {
		r.FillZero = []FillZero{}
	}
	r.Message = s.errEv.Message()
	r.Stats.SegmentsTouched = uint64(len(e.sit.touched))
	if e.in.Inode.Type == "file" && s.inline&(InlineData|InlineDentry) == 0 {
		// Only slots below the file's last non-NULL slot or the highest one the run touched can hold
		// anything but NULL_ADDR: read those, and state the rest up to EOF as one NULL extent, so a
		// huge (or corrupt) i_size costs nothing.
		eof := uint64(s.iSize+blockSize-1) / blockSize
		dataEnd := max(e.in.Inode.SlotsEnd, s.hiWater)
		ext, err := e.extents(0, dataEnd)
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
		r.After.Extents = ext
	}
	if r.After.Extents == nil {
		r.After.Extents = []Extent{}
	}
	r.nextFn = e.nextInput
	return r, nil
}

// nextInput is the state after the run as an Input for a further request.
func (e *engine) nextInput() Input {
	s := &e.s
	next := e.in
	next.Slots = e.slots.frozen()
	next.SIT = e.sit.frozen()
	next.Volume.ValidBlockCount = s.validBlocks
	next.Volume.ValidNodeCount = s.validNodes
	next.Volume.HotDataBlkoff = s.hotBlkoff
	next.Volume.ColdDataBlkoff = s.coldBlkoff
	next.Inode.Size = s.iSize
	next.Inode.Blocks = s.iBlocks
	next.Inode.Advise = s.advise
	next.Inode.Inline = s.inline
	next.Inode.SlotsEnd = max(e.in.Inode.SlotsEnd, s.hiWater)
	return next
}

// stopFill ends the call after a partial-page fill_zero failed: a head or single page returns at once
// (no size update), the tail page goes to out, which may still grow i_size for the finished chunks.
func (e *engine) stopFill() {
	e.s.phase = phDone
	if e.s.fillWhich == fillTail {
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
	if s.inChunk {
		if _, ok := e.slots.recs[s.chunk.start]; !ok {
			starts = append(starts, s.chunk.start)
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
		if s.inChunk && start == s.chunk.start {
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

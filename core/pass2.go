package core

import (
	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/internal/f2fs"
)

// Pass 2 of f2fs_do_zero_range (docs/kernel-semantics.md §7.2 per-block, §7.3 batched) lives here, once.
// Every way of running the engine goes through pass2, which performs events and hands each to a
// sink; the sink decides how many may happen before pass 2 pauses:
//
//   - Run.Next (next) lets one event happen into the caller's Event, so a player can stop anywhere;
//   - Walk lets any number happen, each built in one reused Event and handed to its callback;
//   - Simulate and SeekTo let any number (up to a step) happen with no Event built at all.
//
// The pause points are the phases: the state between two events says what the next one is, so a
// paused pass 2 resumes from any of them (a checkpoint copy included). One slot takes one event —
// NEW skipped, NULL or an invalid address stopping the chunk, a batched run started or extended —
// except two cases that make an f2fs_invalidate_blocks call:
//
//   - per-block, a valid address: its slot event (then phInvCall), the call (then phInvSeg), the
//     call's one SIT piece; the slot becomes NEW_ADDR after the piece (then phSlots again);
//   - batched, an address that does not continue the pending run: the flush (the call, made in the
//     same event as the decision) and its pieces, all at that slot; then the slot is visited again.
//
// After the loop, normal end or a stop (phFinalFlush), a pending run is flushed once more.

// pass2Phases are the phases whose events pass2 performs.
const pass2Phases = 1<<phSlots | 1<<phFinalFlush | 1<<phInvCall | 1<<phInvSeg

// pendingRun is the batched mode's pending run (blkstart, blklen) and the slot that started it.
// The per-block mode never has one (len is always 0).
type pendingRun struct {
	slot       uint64
	start, len uint32
}

// invCall is the f2fs_invalidate_blocks(start, len) call being made, at slot: a per-block call, or
// a batched flush of the pending run. next is the first block of its next segment piece.
type invCall struct {
	slot             uint64
	start, len, next uint32
	reason           Action
	// ret, when set, is the phase after the call (punch and truncate); zero's calls go on by reason.
	ret phase
}

// settlePass2 makes pass 2's moves that emit no event and reports whether the next event is pass
// 2's: the loop ends after the chunk's last slot; after the loop a pending run is flushed, and a
// zero-length one never (§8.6: it could release a whole segment).
func (e *engine) settlePass2() bool {
	s := &e.s
	c := &s.chunk
	if s.phase == phSlots && c.pos >= c.hi {
		c.leave = c.hi - 1
		s.phase = phFinalFlush
	}
	if s.phase == phFinalFlush && s.run.len == 0 {
		s.phase = phChunkLeave
	}
	return pass2Phases&(1<<s.phase) != 0
}

// sink is where pass 2's events go, and how many may happen before pass 2 pauses.
type sink struct {
	// ev is where each event is built; nil: nobody looks, no event is built (an error's is,
	// elsewhere: its fields make Result.Message).
	ev *Event
	// fn, when set, gets each event (then ev must be e.fastEv), after which ev is cleared for the
	// next; false stops the run. Without fn, a sink with ev lets one event happen (limit is one
	// step on) and the caller numbers and reads it.
	fn    func(*Event) bool
	limit int64 // pass 2 pauses when the step count reaches limit
	stop  bool  // fn returned false
}

// emit ends an event: it counts it, hands it to fn, and reports whether pass 2 may go on. (A sink
// without fn has at most one event, which its caller numbers.)
func (e *engine) emit(k *sink) bool {
	e.s.step++
	if k.fn != nil {
		return e.deliver(k)
	}
	return e.s.step < k.limit
}

// deliver is emit's part for a callback (kept apart so emit is inlined).
func (e *engine) deliver(k *sink) bool {
	// A sink with fn builds in e.fastEv (runPass2). Passing that, not k.ev, keeps the Event of a
	// sink without fn (next's caller's) from escaping to the heap.
	ev := &e.fastEv
	ev.Step, ev.Chunk = e.s.step, e.s.chunk.ord
	if !k.fn(ev) {
		k.stop = true
		return false
	}
	ev.clear()
	return e.s.step < k.limit
}

// pass2 performs pass 2's events from the current phase until the sink pauses or stops it, the
// chunk's pass 2 is over, or a source fails (then it returns false; e.err says why).
func (e *engine) pass2(k *sink) bool {
	s := &e.s
	for s.step < k.limit && !k.stop && e.settlePass2() {
		switch s.phase {
		case phSlots:
			e.visit(k)
		case phFinalFlush:
			reason := ActEndOfChunk
			if s.errno != "" {
				reason = ActFlushOnError
			}
			e.flush(reason, s.chunk.leave)
			e.invoke(k)
		case phInvCall:
			e.invoke(k)
		case phInvSeg:
			e.sitPiece(k)
		}
		if e.err != nil {
			return false
		}
	}
	s.stats.Steps = s.step
	return true
}

// at records that the event is about slot (never before the last event's: slots do not go back).
func (e *engine) at(ev *Event, slot uint64) {
	s := &e.s
	s.lastSlot = max(slot, s.lastSlot)
	if ev != nil {
		ev.Slot = s.lastSlot
	}
}

// visit is pass 2's loop over the chunk's slots from pos, with the rules of §6.2 and §6.3 in their
// order. It goes on while the sink lets it; it returns when the sink pauses, at the end of the loop,
// after an error (the final flush is pass2's), and after a batched flush's call (its pieces are).
func (e *engine) visit(k *sink) {
	s := &e.s
	c := &s.chunk
	for c.pos < c.hi {
		ev := k.ev
		a := e.buf[c.pos-c.node.start]
		e.at(ev, c.pos)
		switch {
		case a == NewAddr:
			// Reserved, never written: skipped. It does not end a pending run.
			if ev != nil {
				ev.Kind, ev.Action, ev.State = EvSlot, ActSkipNew, StateNew
			}
			c.pos++
			if !e.emit(k) {
				return
			}
			continue
		case a == NullAddr:
			// Left NULL by a partial reservation (§6.1).
			ev = e.errEvent(ev)
			ev.State = StateNull
			e.fail(ev, "ENOSPC", ActNullSlot)
			e.stop()
			e.emit(k)
			return
		case s.run.len > 0 && a != s.run.start+s.run.len:
			// Batched (only it has a pending run): an address that does not continue the run
			// flushes it before being validated — so a duplicate of a pending block always fails
			// validation (its bit was just cleared). The slot is visited again after the call.
			e.flush(ActDiscontiguous, c.pos)
			e.invoke(k)
			return
		}
		act, err := e.validate(a)
		if err != nil {
			e.err = err
			return
		}
		if act != ActNone {
			// An address continuing the run fails here with the run still pending: the error
			// comes first, the flush after the loop (§10 example 11).
			ev = e.errEvent(ev)
			ev.State, ev.Addr = stateOf(a), a
			e.fail(ev, "EFSCORRUPTED", act)
			s.counters.needFsck = true
			e.stop()
			e.emit(k)
			return
		}
		if e.mode == PerBlock {
			// f2fs_invalidate_blocks(a, 1) now: the call, its one SIT piece, after which the slot
			// is NEW_ADDR and the loop goes on.
			if ev != nil {
				ev.Kind, ev.Action, ev.State, ev.Addr = EvSlot, ActInvalidate, StateAddr, a
			}
			s.call = invCall{slot: c.pos, start: a, len: 1, reason: ActPerBlock}
			s.phase = phInvCall
			if !e.emit(k) || !e.invoke(k) || !e.sitPiece(k) {
				return
			}
			continue
		}
		act = ActExtendRun
		if s.run.len == 0 {
			s.run = pendingRun{slot: c.pos, start: a}
			act = ActStartRun
		}
		s.run.len++
		if ev != nil {
			ev.Kind, ev.Action, ev.State, ev.Addr, ev.Len = EvSlot, act, StateAddr, a, s.run.len
		}
		e.take()
		e.track(a)
		if !e.emit(k) {
			return
		}
	}
}

// errEvent is ev, or when nobody looks at events a scratch one: an error event is always built,
// since its fields make Result.Message.
func (e *engine) errEvent(ev *Event) *Event {
	if ev == nil {
		ev = &e.fastEv
		ev.clear()
		ev.Slot = e.s.lastSlot
	}
	return ev
}

// stop leaves pass 2's loop at the current slot after an error; a pending run is still flushed.
func (e *engine) stop() {
	c := &e.s.chunk
	c.leave = c.pos
	e.s.phase = phFinalFlush
}

// flush prepares the call that invalidates the pending run, made at slot, and empties the run.
func (e *engine) flush(reason Action, slot uint64) {
	s := &e.s
	s.call = invCall{slot: slot, start: s.run.start, len: s.run.len, reason: reason}
	s.run.len = 0
}

// invoke makes the call prepared in s.call: f2fs_invalidate_blocks takes the SIT lock once; its
// segment pieces follow (phInvSeg). It returns emit's answer.
func (e *engine) invoke(k *sink) bool {
	s := &e.s
	c := &s.call
	e.calls.add(c.start, c.len, c.reason)
	s.stats.Calls++
	if !isBlock(c.start) {
		// f2fs_invalidate_blocks returns at once for NEW_ADDR and COMPRESS_ADDR (truncate passes
		// them): no SIT lock, no piece.
		if ev := k.ev; ev != nil {
			e.at(ev, c.slot)
			ev.Kind, ev.Action, ev.State = EvInvalidate, c.reason, stateOf(c.start)
			ev.Addr, ev.Len, ev.Count = c.start, c.len, s.stats.Calls
		}
		s.phase = c.ret
		return e.emit(k)
	}
	s.stats.SITLockAcquisitions++
	if ev := k.ev; ev != nil {
		// At the slot of the event that led to the call: the last one.
		e.at(ev, c.slot)
		ev.Kind, ev.Action, ev.State = EvInvalidate, c.reason, StateNull
		ev.Addr, ev.Len, ev.Count = c.start, c.len, s.stats.Calls
	}
	c.next = c.start
	s.phase = phInvSeg
	return e.emit(k)
}

// sitPiece applies the next segment piece of the call and describes it in ev: blocks [a0, a0+cnt)
// of one segment are released — update_sit_entry(−cnt) and locate_dirty_segment
// (update_segment_mtime only in a mounted sequence, whose segment manager has the clock: stampedSIT).
// After the last piece the call returns:
// per-block, its slot becomes NEW_ADDR and the loop goes on; a discontiguous flush returns to the
// slot that forced it; the flush after the loop leaves the chunk. It returns emit's answer, or
// false when a source failed (e.err).
func (e *engine) sitPiece(k *sink) bool {
	s := &e.s
	c := &s.call
	v := &e.in.Volume
	a0 := c.next
	segno := segnoOf(v, a0)
	off := f2fs.SegOff(a0, v.Segment0Blkaddr)
	cnt := min(c.start+c.len-a0, blocksPerSeg-off)
	st, err := e.sit.get(segno)
	if err != nil {
		e.err = err
		return false
	}
	e.sit.modify(segno, st)
	before, cb := st.Count(), st.class
	if e.sit.stamp {
		if e.sit.track {
			e.sit.stamps = append(e.sit.stamps, gc.Stamp{Segno: segno, Valid: st.Valid()})
		}
		st.UpdateMtime(e.sit.now) // update_segment_mtime(sbi, blkaddr, 0), before the count changes
	}
	// "Bitmap was wrongly cleared": the kernel gives the block back to the count and goes on
	// (production f2fs_bug_on); the entry counts those blocks in wrong.
	wrong, first, disc := st.Invalidate(off, cnt)
	blk := uint32(0)
	if wrong > 0 {
		blk = f2fs.SegBlock(v.MainBlkaddr, segno) + first
	}
	s.stats.DiscardBlocks += uint64(disc)
	after := st.Count()
	if st.class != SegCurrent {
		switch {
		case after <= 0:
			if st.class != SegPrefree {
				s.stats.SegmentsPrefree++
			}
			st.class = SegPrefree
		case after < blocksPerSeg:
			st.class = SegDirty
		default:
			st.class = SegFull
		}
	}
	s.stats.SITPieces++
	s.stats.BlocksInvalidated += uint64(cnt - wrong)
	s.stats.WronglyCleared += uint64(wrong)
	if ev := k.ev; ev != nil {
		// At the slot of the event that led to the call: the last one.
		e.at(ev, c.slot)
		ev.Kind, ev.Action, ev.State = EvSITUpdate, ActNone, StateNull
		ev.Segno, ev.Addr, ev.Len, ev.Count, ev.Blk = segno, a0, cnt, uint64(wrong), blk
		ev.Before, ev.After = uint64(max(before, 0)), uint64(max(after, 0))
		ev.SegBefore, ev.SegAfter = cb, st.class
	}
	c.next = a0 + cnt
	if c.next == c.start+c.len && c.ret != 0 {
		s.phase = c.ret
	} else if c.next == c.start+c.len {
		switch c.reason {
		case ActPerBlock:
			e.take()
			e.track(c.start)
			s.phase = phSlots
		case ActDiscontiguous:
			s.phase = phSlots
		default: // ActEndOfChunk, ActFlushOnError
			s.phase = phChunkLeave
		}
	}
	return e.emit(k)
}

// take makes the slot at pos NEW_ADDR (its block was invalidated, or joined the pending run) and
// moves to the next slot. The caller counts the block with track (kept apart so both inline).
func (e *engine) take() {
	c := &e.s.chunk
	e.buf[c.pos-c.node.start] = NewAddr
	c.dirty = true
	c.pos++
}

// runPass2 lets pass 2 run without pausing until the chunk's pass 2 is over or the step count
// reaches limit. With fn, each event is built in e.fastEv, as next builds it, and handed to fn;
// without, no event is built. It reports whether fn returned false or a source failed (e.err).
func (e *engine) runPass2(limit int64, fn func(*Event) bool) (stop bool) {
	k := sink{fn: fn, limit: limit}
	if fn != nil {
		k.ev = &e.fastEv
		k.ev.clear()
	}
	return !e.pass2(&k) || k.stop
}

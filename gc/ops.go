package gc

import (
	"fmt"
)

// An Op is an operation of zrviz's ops language that the segment manager runs alone: checkpoint,
// gc (Sync 1 foreground, 0 background), sync, now (Secs) and tune max_victim_search (Secs). The
// language is declared and parsed once, in package request (request.Ops, request.ParseGCOp);
// this package, which imports nothing of zrviz, only runs what it is given.
type Op struct {
	Verb string `json:"op"`             // "checkpoint", "gc", "sync", "now", "tune"
	Sync int    `json:"sync"`           // gc: 1 foreground, 0 background
	Secs uint64 `json:"secs,omitempty"` // now; tune: the value
}

// CheckpointStep is what a checkpoint or sync op did.
type CheckpointStep struct {
	Op    string   `json:"op"` // "checkpoint" or "sync"
	Freed []uint32 `json:"freed"`
	Moved int      `json:"moved"`
	Moves []Move   `json:"-"`
}

// Apply runs one op and returns its JSON value: a *Pick, a *CheckpointStep or, for now, a
// map holding the clock.
func (s *State) Apply(op Op) any {
	switch op.Verb {
	case "gc":
		k := Background
		if op.Sync == 1 {
			k = Foreground
		}
		p := s.GC(k)
		return &p
	case "checkpoint", "sync":
		var c CheckpointStep
		if op.Verb == "sync" {
			c.Freed, c.Moves = s.Sync()
		} else {
			c.Freed, c.Moves = s.Checkpoint()
		}
		c.Op, c.Moved = op.Verb, len(c.Moves)
		if c.Freed == nil {
			c.Freed = []uint32{}
		}
		return &c
	case "now":
		s.Now = op.Secs
		return map[string]any{"op": "now", "secs": op.Secs}
	case "tune":
		s.MaxVictimSearch = uint32(op.Secs)
		return map[string]any{"op": "tune", "max_victim_search": op.Secs}
	}
	return nil
}

// Invalidate is f2fs_invalidate_blocks (segment.c:2544) on main-area block blkoff of segment
// segno: update_segment_mtime, the SIT bit and count, locate_dirty_segment. It is how a zero
// range run before the GC ops (the core engine's calls) reaches this model.
func (s *State) Invalidate(segno, blkoff uint32) error {
	if segno >= s.mainSegs || blkoff >= BlocksPerSeg {
		return fmt.Errorf("gc: invalidate segment %d block %d: outside the main area", segno, blkoff)
	}
	se := &s.segs[segno]
	if !se.Test(blkoff) {
		return fmt.Errorf("gc: invalidate segment %d block %d: not valid", segno, blkoff)
	}
	s.updateSegmentMtime(segno)
	se.Invalidate(blkoff, 1)
	s.locateDirtySegment(segno)
	return nil
}

// InvalidateRange is one segment piece of f2fs_invalidate_blocks (segment.c:2544, with a length
// as the batched mode's patch gives it): update_segment_mtime once with the valid count before,
// the n bits from blkoff cleared (update_sit_entry gives a bit already clear back, "Bitmap was
// wrongly cleared"), locate_dirty_segment. Per-block calls are pieces of one block.
func (s *State) InvalidateRange(segno, blkoff, n uint32) error {
	if segno >= s.mainSegs || blkoff >= BlocksPerSeg || n == 0 || n > BlocksPerSeg-blkoff {
		return fmt.Errorf("gc: invalidate segment %d blocks %d+%d: outside the main area", segno, blkoff, n)
	}
	s.updateSegmentMtime(segno)
	s.segs[segno].Invalidate(blkoff, n)
	s.locateDirtySegment(segno)
	return nil
}

// updateSIT is f2fs_allocate_data_block's SIT part for a block written to to, old its block before
// (nil: a new block): update_segment_mtime on old then new, update_sit_entry +1 at to (its segment
// in use) and −1 at old. locate_dirty_segment comes after, when the caller has placed its log.
func (s *State) updateSIT(to Block, old *Block) {
	if old != nil {
		s.updateSegmentMtime(old.Segno)
	}
	s.updateSegmentMtime(to.Segno)
	s.setValid(to.Segno, to.Blkoff)
	s.setInuse(to.Segno)
	if old != nil {
		s.segs[old.Segno].Invalidate(old.Blkoff, 1)
	}
}

// SetCurrent makes c the current segment and next block of log, as the caller's allocator left
// it (new_curseg opened a segment): the new segment is in use and of the log's type and leaves
// the dirty lists, the old one is placed by locate_dirty_segment, and the log is in LFS
// allocation. Within the same segment only the next block moves (past the blocks an SSR log
// cannot take).
func (s *State) SetCurrent(log int, c CurSeg) error {
	if log < 0 || log >= NumLogs || c.Segno >= s.mainSegs || c.Blkoff > BlocksPerSeg {
		return fmt.Errorf("gc: log %d at segment %d block %d: outside the main area", log, c.Segno, c.Blkoff)
	}
	old := s.cur[log]
	if old.Segno == c.Segno {
		// The caller wrote blocks of the log's segment itself (an inline conversion's block). In
		// SSR allocation the kernel's next_blkoff is then the next block free in both maps
		// (f2fs_find_next_ssr_block), not merely the one after.
		if s.allocSSR[log] {
			c.Blkoff = s.nextFreeBlkoff(c.Segno, c.Blkoff)
		}
		s.cur[log] = c
		return nil
	}
	s.cur[log] = c
	s.setInuse(c.Segno)
	s.prefree.clear(c.Segno)
	s.dirty.clear(c.Segno)
	if s.large() {
		s.dirtySec.clear(c.Segno / s.segsPerSec)
	}
	s.segs[c.Segno].SetType(log)
	s.touch(c.Segno)
	s.allocSSR[log] = false // new_curseg: LFS allocation
	s.locateDirtySegment(old.Segno)
	return nil
}

// SITEntry returns segment segno's whole entry (ok true: the segment manager holds mtimes, types
// and checkpointed maps), so a State is the SIT source of core's walks in a mounted sequence: a
// walk reads its entries here and hands back what it changed ([State.Adopt]).
func (s *State) SITEntry(segno uint32) (Entry, bool, error) {
	if segno >= s.mainSegs {
		return Entry{}, false, fmt.Errorf("gc: segment %d: %w (main area has %d)", segno, ErrVolume, s.mainSegs)
	}
	return s.segs[segno], true, nil
}

// MtimeNow is get_mtime(sbi, false): the time update_segment_mtime stamps now.
func (s *State) MtimeNow() uint64 { return s.mtimeNow() }

// Adopt takes segment segno's entry as a walk or a write the caller ran on the segment manager's
// entries left it (core's f2fs_invalidate_blocks pieces, each after update_segment_mtime at
// [State.MtimeNow], or an inline conversion's block): its valid count, map and mtime ([Entry]'s
// take), then __set_inuse for a segment with valid blocks and locate_dirty_segment. stamped says the
// walk stamped mtimes (max_mtime follows). The caller's entry must have been read from this State's
// ([State.SITEntry]) and changed only by [Entry]'s methods: the State does not replay the change.
func (s *State) Adopt(segno uint32, e Entry, stamped bool) error {
	if segno >= s.mainSegs {
		return fmt.Errorf("gc: segment %d: outside the main area", segno)
	}
	se := &s.segs[segno]
	se.take(&e)
	s.touch(segno)
	if se.Valid() > 0 {
		s.setInuse(segno)
	}
	if now := s.mtimeNow(); stamped && now > s.maxMtime {
		s.maxMtime = now
	}
	s.locateDirtySegment(segno)
	return nil
}

// PrefreeSegments lists the prefree segments (dirty_segmap[PRE]) in order.
func (s *State) PrefreeSegments() []uint32 {
	var out []uint32
	for segno := range s.mainSegs {
		if s.prefree.test(segno) {
			out = append(out, segno)
		}
	}
	return out
}

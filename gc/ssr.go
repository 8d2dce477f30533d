package gc

import (
	"errors"
	"fmt"
	"slices"
)

// Slack space recycling (SSR, issue 29). When a log's segment is full, Linux 6.12's
// f2fs_allocate_data_block (segment.c:3675) asks need_new_seg (segment.c:3166) whether to open a
// new segment (new_curseg, [NewSegment]) or to reuse the free blocks of a partly valid segment:
// get_ssr_segment (segment.c:3108) → f2fs_get_victim (gc.c:779) in SSR mode, then change_curseg
// (segment.c:2947). The kernel opens a new segment when
//
//   - the log is in LFS allocation and the next segment of its section is free
//     (is_next_segment_free, segment.c:2678), or
//   - f2fs_need_SSR (segment.c:171) is false: free_sections > node_secs + 2·dent_secs + imeta_secs +
//     min_ssr_sections + reserved_sections, with min_ssr_sections = reserved_sections
//     (f2fs_build_segment_manager) and each *_secs the dirty pages of that kind rounded up to
//     sections (get_blocktype_secs), or
//   - get_ssr_segment finds no victim.
//
// The dirty metadata are the page counts F2FS_DIRTY_NODES, F2FS_DIRTY_DENTS and F2FS_DIRTY_IMETA,
// which the caller follows through every operation ([Dirty], [State.Dirty]: core knows which
// files have dirty node pages and which inodes are on the dirty inode-meta list; the segment
// manager's own moves and checkpoints change them as the kernel's do). Each count is known within
// a range; get_blocktype_secs rounds it up to sections, so a count known to be nonzero and below a
// section's blocks is exactly one section. Where the two ends of the ranges give the same sum,
// f2fs_need_SSR is decided; where they do not and the free sections lie between, the model decides
// only where both answers lead to the same place (get_ssr_segment would find nothing and leave
// last_victim as it was), else it refuses ([ErrSSRUnknown]). Node logs keep the conservative test of
// [State.MaySSR]: their dirty page counts and the warm node rule (CP_CRC_RECOVERY_FLAG) are not
// followed. mode=lfs (f2fs_lfs_mode), which turns SSR off, is not known from an image: the ops
// language's `mount mode=lfs` says it ([State.LFS]).

// ErrSSRUnknown reports a full log whose next segment the model cannot know: need_new_seg's
// f2fs_need_SSR depends on dirty metadata the model only bounds, and the two answers differ.
var ErrSSRUnknown = errors.New("gc: need_new_seg → get_ssr_segment: SSR or a new segment depends on the dirty node, dentry and inode pages (f2fs_need_SSR), which the model knows only within a range here")

// Range is a page count the model knows to lie in [Min, Max].
type Range struct{ Min, Max uint64 }

// Exact is a Range of one value.
func Exact(n uint64) Range { return Range{n, n} }

// Add is the range of a sum.
func (r Range) Add(o Range) Range { return Range{r.Min + o.Min, r.Max + o.Max} }

// Dirty is what f2fs_need_SSR (segment.c:171) and __get_secs_required (segment.h) read of the page
// cache: the dirty node pages (F2FS_DIRTY_NODES: dnodes, inodes, indirect nodes), dentry pages
// (F2FS_DIRTY_DENTS: directories' data pages) and inodes on the dirty inode-meta list
// (F2FS_DIRTY_IMETA), each as a range.
type Dirty struct {
	Nodes, Dents, IMeta Range
}

// Clean reports whether every count is certainly zero.
func (d Dirty) Clean() bool { return d.Nodes.Max == 0 && d.Dents.Max == 0 && d.IMeta.Max == 0 }

// blocktypeSecs is get_blocktype_secs (segment.h): the pages rounded up to sections.
func (s *State) blocktypeSecs(n uint64) uint32 {
	per := uint64(BlocksPerSeg) * uint64(s.segsPerSec)
	return uint32((n + per - 1) / per)
}

// metaSecs is f2fs_need_SSR's node_secs + 2·dent_secs + imeta_secs at both ends of d's ranges.
func (s *State) metaSecs(d Dirty) (lo, hi uint32) {
	lo = s.blocktypeSecs(d.Nodes.Min) + 2*s.blocktypeSecs(d.Dents.Min) + s.blocktypeSecs(d.IMeta.Min)
	hi = s.blocktypeSecs(d.Nodes.Max) + 2*s.blocktypeSecs(d.Dents.Max) + s.blocktypeSecs(d.IMeta.Max)
	return lo, hi
}

// SSRVictim is one victim get_ssr_segment's f2fs_get_victim found in SSR mode, as the
// f2fs_get_victim tracepoint reports it ("type = Warm DATA, policy = (Background GC, SSR-mode,
// Greedy), victim = 4, cost = 256"): the type searched (a CURSEG_* number, the log's own or
// another temperature), the segment and its cost (its ckpt_valid_blocks). A search that finds
// nothing fires no event.
type SSRVictim struct {
	Type  int    `json:"type"`
	Segno uint32 `json:"segno"`
	Cost  uint32 `json:"cost"`
	Log   int    `json:"log"` // the log that moved there (change_curseg)
}

// SSRVictims returns the SSR victims found since the mount, in order.
func (s *State) SSRVictims() []SSRVictim { return append([]SSRVictim(nil), s.ssrFound...) }

// CkptValid returns segment segno's ckpt_valid_blocks: the blocks valid at the last checkpoint or
// written since (update_sit_entry sets ckpt_valid_map's bit with every new block, segment.c:2494;
// a checkpoint copies cur_valid_map over it, seg_info_to_raw_sit, segment.h:410). SSR never reuses
// such a block (__next_free_blkoff reads ckpt_valid_map | cur_valid_map).
func (s *State) CkptValid(segno uint32) uint32 {
	return s.segs[segno].CkptValid()
}

// SSRLog reports whether log is in SSR allocation (curseg->alloc_type == SSR): change_curseg moved
// it into a partly valid segment, or the checkpoint it was mounted from said so (alloc_type[]).
func (s *State) SSRLog(log int) bool { return log >= 0 && log < NumLogs && s.allocSSR[log] }

// nextFreeBlkoff is __next_free_blkoff (segment.c:2916): the first block at or after start that is
// neither valid nor checkpointed, or BlocksPerSeg.
func (s *State) nextFreeBlkoff(segno, start uint32) uint32 {
	se := &s.segs[segno]
	for k := start; k < BlocksPerSeg; k++ {
		if !se.Test(k) && !se.TestCkpt(k) {
			return k
		}
	}
	return BlocksPerSeg
}

// setValid is update_sit_entry(+1)'s bitmaps: the block is valid, and checkpointed for SSR's sake
// ("SSR should never reuse block which is checkpointed or newly invalidated", segment.c:2490).
func (s *State) setValid(segno, k uint32) {
	s.segs[segno].SetValid(k)
	s.touch(segno)
}

// ssrVictim is f2fs_get_victim(sbi, &segno, BG_GC, typ, SSR, 0, false) (gc.c:779) with
// select_policy's SSR branch (gc.c:280): greedy over dirty_segmap[typ] (the dirty segments of that
// type), max_search nr_dirty[typ] capped at max_victim_search (a BG_GC search), ofs_unit 1, from
// segment 0 for hot data and node types and last_victim[GC_GREEDY] otherwise (shared with
// foreground gc's greedy searches); a segment of a current section or cur_victim_sec
// (sec_usage_check) or of a section background gc marked (victim_secmap) is skipped; the cost is
// get_gc_cost's ckpt_valid_blocks and the first cost below get_max_cost's BLKS_PER_SEG wins.
// last_victim moves as the LFS search's does.
func (s *State) ssrVictim(typ int) (uint32, uint32, bool) {
	ix := s.index() // gc/ssrindex.go: the scan's answer in O(log n)
	total := ix.cnt[typ][1]
	maxSearch := min(total, s.MaxVictimSearch)
	if maxSearch == 0 {
		return NullSegno, 0, false // -ENODATA before the search: last_victim untouched
	}
	offset := s.lastVictim[gcGreedy]
	if typ == HotData || isNodeType(typ) {
		offset = 0
	}
	lastVictim := s.lastVictim[gcGreedy]
	skip := func(segno uint32) bool {
		secno := segno / s.segsPerSec
		return s.secUsageCheck(secno) || s.victimSec.test(secno)
	}
	// The search visits the dirty segments of the type from offset to the end, then (when
	// last_victim was not 0) from 0 up to last_victim, and stops at the maxSearch-th: last.
	after := total - ix.count(typ, 0, offset)
	var last, best uint32
	wrapped := maxSearch > after
	if !wrapped {
		last = ix.kth(typ, total-after+maxSearch)
		best = ix.bestIn(typ, offset, last+1, skip)
	} else {
		last = ix.kth(typ, maxSearch-after)
		best = ix.bestIn(typ, offset, s.mainSegs, skip)
		// A tie goes to the first visited: the part before the wrap.
		if b := ix.bestIn(typ, 0, last+1, skip); b != noSeg && (best == noSeg || ix.ckptN[b] < ix.ckptN[best]) {
			best = b
		}
	}
	if (wrapped || lastVictim == 0) && last <= lastVictim {
		s.lastVictim[gcGreedy] = lastVictim + 1
	} else {
		s.lastVictim[gcGreedy] = last + 1
	}
	s.lastVictim[gcGreedy] %= s.mainSegs
	// get_max_cost's BLKS_PER_SEG: a segment whose every block is checkpointed is no victim.
	if best == noSeg || uint32(ix.ckptN[best]) >= BlocksPerSeg {
		return NullSegno, BlocksPerSeg, false
	}
	return best, uint32(ix.ckptN[best]), true
}

// getSSRSegment is get_ssr_segment(sbi, log, SSR, 0) (segment.c:3108): the log's own type first,
// then the other data temperatures (from cold down for warm and cold logs, from hot up for the hot
// log) or node temperatures likewise. Each victim found is recorded as its tracepoint would.
func (s *State) getSSRSegment(log int) (uint32, bool) {
	if segno, cost, ok := s.ssrVictim(log); ok {
		s.ssrFound = append(s.ssrFound, SSRVictim{Type: log, Segno: segno, Cost: cost, Log: log})
		return segno, true
	}
	first, step := HotData, 1
	if isNodeType(log) {
		first = HotNode
	}
	if log == WarmData || log == ColdData {
		first, step = ColdData, -1
	} else if log == WarmNode || log == ColdNode {
		first, step = ColdNode, -1
	}
	for i, n := first, 0; n < 3; i, n = i+step, n+1 {
		if i == log {
			continue
		}
		if segno, cost, ok := s.ssrVictim(i); ok {
			s.ssrFound = append(s.ssrFound, SSRVictim{Type: i, Segno: segno, Cost: cost, Log: log})
			return segno, true
		}
	}
	return NullSegno, false
}

// changeCurseg is change_curseg (segment.c:2947): the log moves into segno, a partly valid segment
// (__set_test_and_inuse; out of the prefree and dirty lists under its old type; reset_curseg makes
// it the log's type), in SSR allocation, at its first block free in both the valid and the
// checkpointed map.
func (s *State) changeCurseg(log int, segno uint32) {
	s.setInuse(segno)
	s.prefree.clear(segno)
	s.removeDirty(segno)
	c := &s.cur[log]
	c.Segno = segno
	s.segs[segno].SetType(log) // reset_curseg → __set_sit_entry_type
	s.touch(segno)
	s.allocSSR[log] = true
	c.Blkoff = s.nextFreeBlkoff(segno, 0)
}

// needNewSeg is need_new_seg (segment.c:3166) for a data log whose segment is full, with d the
// dirty pages f2fs_need_SSR reads: new is true for a new segment (new_curseg), else victim is
// get_ssr_segment's segment (change_curseg). err is [ErrSSRUnknown] (wrapped, saying why) where d's
// ranges leave the answer open.
func (s *State) needNewSeg(log int, d Dirty) (newSeg bool, victim uint32, err error) {
	if s.LFS {
		return true, 0, nil // f2fs_need_SSR: f2fs_lfs_mode (segment.c:177)
	}
	c := s.cur[log]
	if !s.allocSSR[log] {
		if next := c.Segno + 1; next < s.mainSegs && next%s.segsPerSec != 0 && !s.inuse.test(next) {
			return true, 0, nil // is_next_segment_free (segment.c:3173)
		}
	}
	need, known := s.NeedSSR(d)
	if known && !need {
		return true, 0, nil // f2fs_need_SSR false (segment.c:184)
	}
	free, rsv := s.FreeSections(), s.ReservedSections()
	lo, hi := s.metaSecs(d)
	if !known {
		// Open: f2fs_need_SSR is true only if the dirty metadata reach free − 2·rsv sections. The
		// answer is known only when get_ssr_segment would find nothing and leave last_victim alone.
		try := s.Clone()
		if segno, ok := try.getSSRSegment(log); ok {
			return false, 0, fmt.Errorf("%w: log %d's segment %d is full with %d free sections, above 2 × %d reserved plus %d and at most that plus %d sections of dirty node, dentry and inode-meta pages, and get_ssr_segment would take segment %d", ErrSSRUnknown, log, c.Segno, free, rsv, lo, hi, segno)
		}
		if try.lastVictim != s.lastVictim {
			return false, 0, fmt.Errorf("%w: log %d's segment %d is full with %d free sections, above 2 × %d reserved plus %d and at most that plus %d sections of dirty node, dentry and inode-meta pages; get_ssr_segment would find no victim but move last_victim (f2fs_get_victim) from %d to %d", ErrSSRUnknown, log, c.Segno, free, rsv, lo, hi, s.lastVictim[gcGreedy], try.lastVictim[gcGreedy])
		}
		return true, 0, nil
	}
	if segno, ok := s.getSSRSegment(log); ok {
		return false, segno, nil
	}
	return true, 0, nil
}

// NeedSSR is f2fs_need_SSR (segment.c:171) with d the dirty pages it reads: need is its answer
// when known is true; known is false when d's ranges leave it open (free sections above
// 2 × reserved_sections plus the low end of node_secs + 2·dent_secs + imeta_secs and at most that
// plus the high end).
func (s *State) NeedSSR(d Dirty) (need, known bool) {
	if s.LFS {
		return false, true
	}
	free, freeHi, rsv := s.FreeSections(), s.freeSectionsHi(), s.ReservedSections()
	lo, hi := s.metaSecs(d)
	switch {
	case free > hi+2*rsv:
		return false, true
	case freeHi <= lo+2*rsv:
		return true, true
	}
	return false, false
}

// MaySSR reports whether the kernel could take SSR instead of a new segment for log, whose
// current segment is full, on the state s holds now; d is the dirty pages f2fs_need_SSR reads. It
// is the conservative test kept where the model does not follow need_new_seg: node logs, and
// core's allocator without a segment manager. The string says why, naming the kernel functions.
func (s *State) MaySSR(log int, d Dirty) (bool, string) {
	if log < 0 || log >= NumLogs || s.LFS {
		return false, "" // f2fs_need_SSR: "if (f2fs_lfs_mode(sbi)) return false" (segment.c:177)
	}
	c := s.cur[log]
	// is_next_segment_free: the next segment of the same section, free.
	if next := c.Segno + 1; !s.allocSSR[log] && next < s.mainSegs && next%s.segsPerSec != 0 && !s.inuse.test(next) {
		return false, ""
	}
	free, rsv := s.FreeSections(), s.ReservedSections()
	_, metaSecs := s.metaSecs(d)
	if free > metaSecs+2*rsv { // f2fs_need_SSR false
		return false, ""
	}
	for segno := range s.mainSegs {
		if !s.dirty.test(segno) || s.isCurSeg(segno) || isNodeType(s.segs[segno].Type()) != isNodeType(log) {
			continue
		}
		return true, fmt.Sprintf("log %d's segment %d is full with %d free sections ≤ f2fs_need_SSR's %d "+
			"(2 × %d reserved + at most %d of dirty metadata), and segment %d is partly valid: "+
			"need_new_seg → get_ssr_segment could reuse it (change_curseg, SSR), which the model does not follow for this log",
			log, c.Segno, free, metaSecs+2*rsv, rsv, metaSecs, segno)
	}
	return false, ""
}

// Unmodelled says why the last operations' allocation would have been a guess ("" when it was
// not): a log the segment manager itself moved (garbage collection's moves, a checkpoint's) where
// need_new_seg's answer is open ([ErrSSRUnknown], [State.MaySSR]). It is kept until the state is
// mounted again.
func (s *State) Unmodelled() string { return s.unmodelled }

// replaceFull is the end of f2fs_allocate_data_block for a log whose segment the last block filled
// (segment_full): need_new_seg, then change_curseg or new_curseg. With no free section (ENOSPC)
// get_new_segment stops checkpoints (segment.c:2806): the model records the checkpoint error and
// leaves the log full, so no later move takes a block from it. d is the dirty pages f2fs_need_SSR
// reads; an open answer is returned as an [ErrSSRUnknown] error and the log is left full.
func (s *State) replaceFull(log int, d Dirty) error {
	if isNodeType(log) {
		if may, why := s.MaySSR(log, d); may {
			return fmt.Errorf("%w: %s", ErrSSRUnknown, why)
		}
		return s.newCurseg(log)
	}
	newSeg, victim, err := s.needNewSeg(log, d)
	if err != nil {
		return err
	}
	if !newSeg {
		s.changeCurseg(log, victim)
		return nil
	}
	return s.newCurseg(log)
}

// Alloc is f2fs_allocate_data_block (segment.c:3675) for a data page written out of place to log
// (core's write-back: fsync, sync, a zero's write-back, unmount), old its block before (nil: a new
// block): the log's next block (next_blkoff, which in SSR allocation skips blocks valid or
// checkpointed, f2fs_find_next_ssr_block), update_segment_mtime on old then new, the SIT (+1 new,
// −1 old), need_new_seg and change_curseg or new_curseg when the segment is full, then
// locate_dirty_segment on both. d is the dirty pages f2fs_need_SSR reads. It returns the block
// written; [ErrSSRUnknown] or [ErrNoSpace] (wrapped) when the log's next segment is not known,
// after which the state must not be used.
func (s *State) Alloc(log int, old *Block, d Dirty) (Block, error) {
	if log < HotData || log > ColdData {
		return Block{}, fmt.Errorf("%w: Alloc for log %d", ErrVolume, log)
	}
	if old != nil && (old.Segno >= s.mainSegs || old.Blkoff >= BlocksPerSeg) {
		return Block{}, fmt.Errorf("gc: write from segment %d block %d: outside the main area", old.Segno, old.Blkoff)
	}
	c := &s.cur[log]
	if s.cpError || c.Blkoff >= BlocksPerSeg {
		return Block{}, fmt.Errorf("log %d has no free block: %w", log, ErrNoSpace)
	}
	to := Block{c.Segno, c.Blkoff}
	full := s.advance(log)
	s.updateSIT(to, old)
	if full {
		if err := s.replaceFull(log, d); err != nil {
			return Block{}, err
		}
	}
	if old != nil {
		s.locateDirtySegment(old.Segno)
		// A page background gc marked, written by core's write-back (to the cold data log), is
		// no longer waiting for a sync.
		if i := slices.Index(s.pending, *old); i >= 0 {
			s.pending = slices.Delete(s.pending, i, i+1)
		}
	}
	s.locateDirtySegment(to.Segno)
	return to, nil
}

// advance moves log's next_blkoff past the block just taken (f2fs_allocate_data_block: +1 in LFS
// allocation, f2fs_find_next_ssr_block in SSR) and reports whether the segment is full.
func (s *State) advance(log int) bool {
	c := &s.cur[log]
	if s.allocSSR[log] {
		c.Blkoff = s.nextFreeBlkoff(c.Segno, c.Blkoff+1)
	} else {
		c.Blkoff++
	}
	return c.Blkoff >= BlocksPerSeg
}

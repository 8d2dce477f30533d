package gc

import "fmt"

// Node page writes the model does not place (issue 36).
//
// When a checkpoint (block_operations → f2fs_sync_node_pages), a sync (its checkpoint) or an fsync
// (f2fs_fsync_node_pages) writes dirty node pages, each goes out of place through
// __write_node_page → f2fs_do_write_node_page → do_write_page → f2fs_allocate_data_block: to the
// next block of its node log (__get_segment_type_6: a dnode or inode of a directory to
// CURSEG_HOT_NODE, of a file to CURSEG_WARM_NODE, an indirect node to CURSEG_COLD_NODE), in the
// node mapping's index (nid) order per step, its old block invalidated (update_sit_entry −1,
// update_segment_mtime on both). The model does not follow which node pages are dirty one by one
// (their nids, new nodes' nids from the free nid list), only how many at most ([Dirty]); it records
// such a write with [State.NodesWritten], and from then on every node segment's valid count may be
// lower than the model holds, by at most the number of node pages written (nodeSlack), and each
// node log may be that many blocks further on. The segment manager then answers only what those
// writes cannot change:
//
//   - a node log that may have filled (fewer free blocks than node pages written) is refused
//     (f2fs_do_write_node_page → new_curseg or SSR: the free sections would be unknown);
//   - a node segment that may have been emptied (prefree, then free at the checkpoint) makes the
//     free sections a range ([State.freeSectionsHi]); a decision that reads them (has_not_enough_free_secs,
//     f2fs_need_SSR, f2fs_gc's checkpoint, get_new_segment over both free maps) is refused where the
//     two ends differ;
//   - a victim search (f2fs_get_victim) whose pick, cost, search length or last_victim a lower
//     valid count of a node section could change is refused: a greedy pick when some node section
//     could cost no more than the pick or could turn from full to dirty, any cost-benefit pick
//     with a node section among the candidates (its age moves too);
//   - a cost-benefit pick after such a write raised max_mtime by an amount the model cannot know.

// nodeFns names the kernel path a refusal is about.
const nodeFns = "f2fs_sync_node_pages / f2fs_fsync_node_pages → f2fs_do_write_node_page"

// NodesWritten records that n (a range) node pages were written out of place to their node logs,
// which the model does not place: by fn ("f2fs_sync_node_pages", "f2fs_fsync_node_pages"). See
// the comment above.
func (s *State) NodesWritten(n Range, fn string) {
	if n.Max == 0 {
		return
	}
	s.nodeSlack += n.Max
	if s.clock != nil {
		// What the writes do to max_mtime depends on the clock: State.AtClock redoes it.
		sure := uint32(0)
		if n.Min > 0 {
			sure = 1
		}
		s.clock.record(nodesEvent, sure, 0, s.Now)
	}
	s.nodesMtime(n.Min > 0, s.mtimeNow())
	s.nodeCheck(fn)
}

// nodesMtime is what node pages written where the model does not place them do to max_mtime at
// time now: update_segment_mtime of the first one raises it when one was surely written (sure),
// and may have (mtimeUnsure) when none surely was.
func (s *State) nodesMtime(sure bool, now uint64) {
	switch {
	case sure && now > s.maxMtime:
		s.maxMtime = now
	case now > s.maxMtime:
		s.mtimeUnsure = true
	}
}

// NodeUnsure reports whether segment segno's valid count and map may not be the kernel's: a node
// segment after node pages were written where the model does not place them.
func (s *State) NodeUnsure(segno uint32) bool {
	return s.nodeSlack > 0 && segno < s.mainSegs && isNodeType(s.segs[segno].Type())
}

// NodeSlack is how many node blocks, at most, were written where the model did not place them
// since the mount (0: the node segments' SIT is the kernel's).
func (s *State) NodeSlack() uint64 { return s.nodeSlack }

// nodeCheck refuses a state in which the unplaced node writes may have filled a node log.
func (s *State) nodeCheck(fn string) {
	if s.nodeSlack == 0 || s.unmodelled != "" {
		return
	}
	for log := HotNode; log <= ColdNode; log++ {
		c := s.cur[log]
		room := uint64(0)
		for k := c.Blkoff; k < BlocksPerSeg; k++ {
			if s.allocSSR[log] && (s.segs[c.Segno].Test(k) || s.segs[c.Segno].TestCkpt(k)) {
				continue
			}
			room++
		}
		if room < s.nodeSlack {
			s.unmodelled = fmt.Sprintf("%s (%s): up to %d node pages were written to the node logs where the model does not place them, and node log %d's segment %d has %d free blocks: it may have filled (new_curseg or SSR), so the free sections are not known", fn, nodeFns, s.nodeSlack, log, c.Segno, room)
			return
		}
	}
}

// mayEmpty reports whether segment segno may have been emptied by the unplaced node writes: a
// node segment, not current, with no more valid blocks than node pages were written (it would be
// prefree, then free at the checkpoint that wrote them).
func (s *State) mayEmpty(segno uint32) bool {
	se := &s.segs[segno]
	return s.nodeSlack > 0 && isNodeType(se.Type()) && se.Valid() > 0 && uint64(se.Valid()) <= s.nodeSlack && !s.isCurSeg(segno)
}

// freeSectionsHi is the most free sections the kernel may have: the model's, and every section
// whose segments are all free or may have been emptied by unplaced node writes.
func (s *State) freeSectionsHi() uint32 {
	free := s.FreeSections()
	if s.nodeSlack == 0 {
		return free
	}
	for secno := range s.mainSecs {
		if !s.inuseSec.test(secno) {
			continue
		}
		all, some := true, false
		for i := range s.segsPerSec {
			segno := secno*s.segsPerSec + i
			switch {
			case s.mayEmpty(segno):
				some = true
			case s.inuse.test(segno):
				all = false
			}
		}
		if all && some {
			free++
		}
	}
	return free
}

// mayEmptyFree is the free map with the segments unplaced node writes may have emptied as free:
// the other end of the range [NewSegment] searches.
type mayEmptyFree struct{ s *State }

func (f mayEmptyFree) SegFree(segno uint32) bool { return f.s.SegFree(segno) || f.s.mayEmpty(segno) }
func (f mayEmptyFree) SecFree(secno uint32) bool {
	if f.s.SecFree(secno) {
		return true
	}
	for i := range f.s.segsPerSec {
		if !f.SegFree(secno*f.s.segsPerSec + i) {
			return false
		}
	}
	return true
}

// nodeVictimCheck refuses a victim search whose answer the unplaced node writes could change (see
// the comment above); p is the search's result.
func (s *State) nodeVictimCheck(kind Kind, p victim) {
	if s.nodeSlack == 0 || s.unmodelled != "" {
		return
	}
	if kind == Background && s.mtimeUnsure {
		s.unmodelled = fmt.Sprintf("the cost-benefit victim search (f2fs_get_victim, get_cb_cost): node pages written where the model does not place them (%s) may have raised max_mtime (update_segment_mtime) by an amount it does not know", nodeFns)
		return
	}
	pickSec := NullSegno
	if p.segno != NullSegno {
		pickSec = p.segno / s.segsPerSec
	}
	for secno := range s.mainSecs {
		if s.secUsageCheck(secno) && secno != pickSec {
			continue
		}
		nodeValid := uint32(0)
		for i := range s.segsPerSec {
			se := &s.segs[secno*s.segsPerSec+i]
			if isNodeType(se.Type()) {
				nodeValid += se.Valid()
			}
		}
		if nodeValid == 0 {
			continue
		}
		valid := s.secValid(secno)
		low := valid - uint32(min(uint64(nodeValid), s.nodeSlack))
		why := ""
		switch {
		case p.fromBG && secno != pickSec:
			// check_bg_victims: the marked section is taken whatever the costs.
		case secno == pickSec:
			why = fmt.Sprintf("the victim, section %d, holds %d valid node blocks", secno, nodeValid)
		case kind == Background:
			why = fmt.Sprintf("section %d holds %d valid node blocks, whose cost-benefit cost (valid blocks and age) may be lower", secno, nodeValid)
		case valid == BlocksPerSeg*s.segsPerSec:
			why = fmt.Sprintf("section %d is full of valid blocks, %d of them node blocks: it may have become dirty, a candidate", secno, nodeValid)
		case p.segno == NullSegno || low <= p.cost:
			why = fmt.Sprintf("section %d holds %d valid blocks, %d of them node blocks: it may hold as few as %d, no more than the victim's %d", secno, valid, nodeValid, low, p.cost)
		}
		if why != "" {
			s.unmodelled = fmt.Sprintf("the %s victim search (f2fs_get_victim): up to %d node pages were rewritten out of place (%s) where the model does not place them, and %s", kind, s.nodeSlack, nodeFns, why)
			return
		}
	}
}

// WriteNodes is f2fs_do_write_node_page for node pages the caller knows one by one, in the order
// f2fs_sync_node_pages writes them, all to log: each through f2fs_allocate_data_block (the log's
// next block, update_segment_mtime on the old block then the new, the SIT −1 and +1, a new segment
// when the log fills, locate_dirty_segment on both). olds are their blocks before; it returns
// where each went. A full node log where SSR may apply is an error ([ErrSSRUnknown]).
func (s *State) WriteNodes(log int, olds []Block) ([]Block, error) {
	if !isNodeType(log) {
		return nil, fmt.Errorf("%w: WriteNodes for log %d", ErrVolume, log)
	}
	out := make([]Block, 0, len(olds))
	for _, old := range olds {
		if old.Segno >= s.mainSegs || old.Blkoff >= BlocksPerSeg {
			return nil, fmt.Errorf("gc: node block %d/%d outside the main area", old.Segno, old.Blkoff)
		}
		c := &s.cur[log]
		if s.cpError || c.Blkoff >= BlocksPerSeg {
			return nil, fmt.Errorf("node log %d has no free block: %w", log, ErrNoSpace)
		}
		to := Block{c.Segno, c.Blkoff}
		full := s.advance(log)
		o := old
		s.updateSIT(to, &o)
		if full {
			if err := s.replaceFull(log, s.dirtyNow()); err != nil {
				return nil, err
			}
		}
		s.locateDirtySegment(old.Segno)
		s.locateDirtySegment(to.Segno)
		out = append(out, to)
	}
	return out, nil
}

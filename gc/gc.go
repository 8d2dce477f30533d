package gc

import (
	"errors"
	"fmt"
)

// Move is one block a collection moved: from its old place to the log's next free block.
type Move struct {
	From Block `json:"from"`
	To   Block `json:"to"`
	Log  int   `json:"log"`
}

// Errno values a gc op reports.
const (
	ENODATA = "ENODATA"
	EAGAIN  = "EAGAIN"
)

// Pick is what one F2FS_IOC_GARBAGE_COLLECT call (or one f2fs_gc run of f2fs_balance_fs) did,
// in the JSON the CLI prints: the policy, the victim (the first segment of the chosen section) or
// null, the kernel's cost for it (the f2fs_get_victim tracepoint's cost), the errno, how many
// blocks moved within the call and the cheapest candidates with their cost terms. These are of
// the call's first victim search; a call that found the volume short of free sections goes on
// (f2fs_gc's gc_more loop), and Rounds lists the later searches.
type Pick struct {
	Op         string      `json:"op"`     // "gc"
	Type       string      `json:"type"`   // "FG" or "BG"
	Policy     string      `json:"policy"` // "greedy" or "cost-benefit"
	Victim     *uint32     `json:"victim"`
	Cost       uint32      `json:"cost"`
	Errno      *string     `json:"errno"`
	Moved      int         `json:"moved"`
	Candidates []Candidate `json:"candidates"`
	// FromBackground: a foreground call took a section an earlier background call marked
	// (check_bg_victims); Cost is then get_max_cost's value, as in the kernel.
	FromBackground bool `json:"fromBackground,omitempty"`
	// Searched is how many dirty units the round-robin search visited (nsearched).
	Searched int `json:"searched"`
	// Marked is how many blocks a background call marked to move later.
	Marked int `json:"marked,omitempty"`
	// Rounds are the victim searches after the first, when the call went round f2fs_gc's loop
	// (too few free sections: has_not_enough_free_secs); the last may have found nothing.
	Rounds []Round `json:"rounds,omitempty"`
	// Checkpoints lists what each checkpoint f2fs_gc wrote inside the call freed (prefree
	// segments become free), in order.
	Checkpoints [][]uint32 `json:"checkpoints,omitempty"`
	Moves       []Move     `json:"-"`
}

// Round is one later victim search of a call: its type and policy (FG greedy once the volume is
// short of space), the victim or null, its cost and the blocks it moved.
type Round struct {
	Type   string  `json:"type"`
	Policy string  `json:"policy"`
	Victim *uint32 `json:"victim"`
	Cost   uint32  `json:"cost"`
	Moved  int     `json:"moved"`
}

// EINVAL is what f2fs_gc returns when f2fs_balance_fs asked for background GC (no_bg_gc); EIO
// what it returns on a file system with a checkpoint error.
const (
	EINVAL = "EINVAL"
	EIO    = "EIO"
)

// control is the part of struct f2fs_gc_control (gc.h) the model uses.
type control struct {
	initType     Kind
	noBGGC       bool   // f2fs_balance_fs: background GC is not run in the critical path
	errGCSkipped bool   // the ioctl with sync = 1: 0 only when a section was freed
	nrFreeSecs   uint32 // sections to free before stopping (balance: 1; the ioctl: 0)
}

// GC is F2FS_IOC_GARBAGE_COLLECT with sync = 1 (Foreground) or 0 (Background): f2fs_ioc_gc
// (file.c:2781, __f2fs_ioc_gc) runs f2fs_gc (gc.c:1907) with init_gc_type FG_GC or BG_GC,
// err_gc_skipped = sync and nr_free_secs 0. On a volume with enough free sections that is one
// victim and do_garbage_collect (gc.c:1759) on its section; on one short of them f2fs_gc turns
// foreground and loops (see [State.Balance]).
func (s *State) GC(kind Kind) Pick {
	return s.run(control{initType: kind, errGCSkipped: kind == Foreground})
}

// Balance is the garbage collection f2fs_balance_fs (segment.c:418) runs inside an operation
// when has_enough_free_secs(sbi, 0, 0) fails: f2fs_gc with init_gc_type BG_GC, no_bg_gc and
// nr_free_secs 1, which turns foreground at once (the volume is short of space), writes a
// checkpoint first when segments are prefree, and collects greedy victims until enough sections
// are free or none is left (ENODATA, which f2fs_balance_fs ignores). ok is false when the volume
// has enough free sections: nothing ran.
func (s *State) Balance() (p Pick, ok bool) {
	if !s.hasNotEnoughFreeSecs(0, 0) {
		return Pick{}, false
	}
	return s.run(control{initType: Background, noBGGC: true, nrFreeSecs: 1}), true
}

// ShortOfSpace reports has_not_enough_free_secs(sbi, 0, 0): whether an operation's
// f2fs_balance_fs would run garbage collection now.
func (s *State) ShortOfSpace() bool { return s.hasNotEnoughFreeSecs(0, 0) }

// FreeSections is free_sections(sbi): sections none of whose segments is in use (free_secmap).
func (s *State) FreeSections() uint32 { return s.mainSecs - s.inuseSec.count(s.mainSecs) }

// ReservedSections is reserved_sections(sbi) (segment.h): the reserved segments in sections.
func (s *State) ReservedSections() uint32 { return s.rsvSegs / s.segsPerSec }

// secsRequired is __get_secs_required (segment.h:610) for dirty page counts nodes, dents, imeta
// (the dirty node, dentry and inode-meta pages; no data term outside mode=lfs): lower and upper
// sections and has_curseg_enough_space (room for the node blocks in every current node section
// and for the dentry blocks in the hot data log's, by ckpt_valid_blocks).
func (s *State) secsRequired(nodes, dents, imeta uint64) (lower, upper uint32, cursegSpace bool) {
	per := uint64(BlocksPerSeg) * uint64(s.segsPerSec)
	total := nodes + dents + imeta
	lower = uint32(total/per + dents/per)
	nodeBlocks, dentBlocks := total%per, dents%per
	upper = lower
	if nodeBlocks > 0 {
		upper++
	}
	if dentBlocks > 0 {
		upper++
	}
	left := func(log int) uint64 {
		sec := s.cur[log].Segno / s.segsPerSec
		v := uint64(0)
		for i := range s.segsPerSec {
			v += uint64(s.CkptValid(sec*s.segsPerSec + i))
		}
		return per - min(v, per)
	}
	cursegSpace = true
	for log := HotNode; log <= ColdNode; log++ {
		if nodeBlocks > left(log) {
			cursegSpace = false
		}
	}
	if dentBlocks > left(HotData) {
		cursegSpace = false
	}
	return lower, upper, cursegSpace
}

// hasNotEnoughFreeSecs is has_not_enough_free_secs (segment.h:642) with the dirty pages of
// [State.dirtyNow]: short of space when free_sections + freed ≤ reserved_sections + needed +
// lower, not when above that plus upper, else when the current segments lack the room
// (__get_secs_required). Evaluated at both ends of the dirty ranges; where they disagree the state
// is marked unmodelled and the high end's answer taken.
func (s *State) hasNotEnoughFreeSecs(freed, needed uint32) bool {
	d := s.dirtyNow()
	at := func(free, n, de, im uint64) bool {
		lower, upper, curseg := s.secsRequired(n, de, im)
		rsv := uint64(s.ReservedSections() + needed)
		switch {
		case free > rsv+uint64(upper):
			return false
		case free <= rsv+uint64(lower):
			return true
		}
		return !curseg
	}
	// Fewest free sections and most dirty pages, and the other way round (unplaced node writes
	// may have freed node sections, nodes.go).
	lo := at(uint64(s.freeSectionsHi()+freed), d.Nodes.Min, d.Dents.Min, d.IMeta.Min)
	hi := at(uint64(s.FreeSections()+freed), d.Nodes.Max, d.Dents.Max, d.IMeta.Max)
	if lo != hi && s.unmodelled == "" {
		s.unmodelled = fmt.Sprintf("has_not_enough_free_secs with %d free sections (%d if node sections the unplaced node writes may have emptied are free): __get_secs_required's dirty node, dentry and inode-meta pages (%d–%d, %d–%d, %d–%d) decide it, and the model knows them only within those ranges", s.FreeSections(), s.freeSectionsHi(), d.Nodes.Min, d.Nodes.Max, d.Dents.Min, d.Dents.Max, d.IMeta.Min, d.IMeta.Max)
	}
	return hi
}

// checkpointSecs is f2fs_gc's "free_sections(sbi) <= upper_secs + NR_GC_CHECKPOINT_SECS" (gc.c:2024)
// with __get_secs_required's upper_secs of the dirty pages now, at both ends of their ranges
// (unmodelled where they disagree).
func (s *State) checkpointSecs() bool {
	d := s.dirtyNow()
	_, lo, _ := s.secsRequired(d.Nodes.Min, d.Dents.Min, d.IMeta.Min)
	_, hi, _ := s.secsRequired(d.Nodes.Max, d.Dents.Max, d.IMeta.Max)
	free := s.FreeSections()
	a, b := s.freeSectionsHi() <= lo+gcCheckpointSecs, free <= hi+gcCheckpointSecs
	if a != b && s.unmodelled == "" {
		s.unmodelled = fmt.Sprintf("f2fs_gc's checkpoint to reclaim prefree segments with %d free sections: __get_secs_required's upper_secs is %d–%d, as the dirty node, dentry and inode-meta pages the model knows only within a range decide", free, lo, hi)
	}
	return b
}

// gcCheckpointSecs is NR_GC_CHECKPOINT_SECS (gc.h:45).
const (
	gcCheckpointSecs = 3
	// maxRounds bounds f2fs_gc's loop in the model (each round collects a distinct section).
	maxRounds = 1 << 20
)

// run is f2fs_gc (gc.c:1907) for one call.
func (s *State) run(ctl control) Pick {
	gcType := ctl.initType
	pk := Pick{Op: "gc", Type: gcType.String(), Candidates: []Candidate{}}
	secFreed, totalSecFreed := uint32(0), uint32(0)
	var errno string
	first := true
	for round := 0; round < maxRounds; round++ {
		if s.cpError {
			errno = EIO // f2fs_cp_error (gc.c:1938)
			break
		}
		// "Let's run FG_GC, if we don't have enough space."
		if s.hasNotEnoughFreeSecs(0, 0) {
			gcType = Foreground
			if s.prefree.count(s.mainSegs) > 0 {
				s.gcCheckpoint(&pk)
				secFreed = 0
			}
		}
		if gcType == Background && ctl.noBGGC {
			errno = EINVAL
			break
		}
		v := s.getVictim(gcType)
		s.nodeVictimCheck(gcType, v)
		r := Round{Type: gcType.String(), Policy: policyName(v.policy), Cost: v.cost}
		if first {
			pk.Type, pk.Policy, pk.Cost = r.Type, r.Policy, v.cost
			pk.FromBackground, pk.Searched = v.fromBG, v.searched
			if v.candidates != nil {
				pk.Candidates = v.candidates
			}
		}
		if v.segno == NullSegno {
			errno = ENODATA
			if !first {
				pk.Rounds = append(pk.Rounds, r)
			}
			break
		}
		seg := v.segno
		r.Victim = &seg
		moved := len(pk.Moves)
		segFreed := s.collect(v.segno, gcType, &pk)
		r.Moved = len(pk.Moves) - moved
		if first {
			pk.Victim = &seg
		} else {
			pk.Rounds = append(pk.Rounds, r)
		}
		first = false
		if segFreed == s.segsPerSec {
			secFreed++
			totalSecFreed++
		}
		if gcType == Foreground {
			s.curVictimSec = NullSegno
			if !s.hasNotEnoughFreeSecs(secFreed, 0) {
				if !ctl.noBGGC && totalSecFreed < ctl.nrFreeSecs {
					continue
				}
				break
			}
		} else if !s.hasNotEnoughFreeSecs(0, 0) {
			break
		}
		// "Write checkpoint to reclaim prefree segments. We need more three extra sections
		// for writer's data/node/dentry."
		if s.prefree.count(s.mainSegs) > 0 && s.checkpointSecs() {
			s.gcCheckpoint(&pk)
			secFreed = 0
		}
	}
	// stop: last_victim[ALLOC_NEXT] and [FLUSH_DEVICE] are not the GC policies' slots.
	pk.Moved = len(pk.Moves)
	if ctl.errGCSkipped && errno == "" && totalSecFreed == 0 {
		errno = EAGAIN // err_gc_skipped (gc.c:2058): no whole section freed in the call
	}
	if errno != "" {
		pk.Errno = &errno
	}
	return pk
}

func policyName(p int) string {
	if p == gcGreedy {
		return "greedy"
	}
	return "cost-benefit"
}

// gcCheckpoint is a f2fs_write_checkpoint inside f2fs_gc.
func (s *State) gcCheckpoint(pk *Pick) {
	freed, moved := s.Checkpoint()
	if freed == nil {
		freed = []uint32{}
	}
	pk.Checkpoints = append(pk.Checkpoints, freed)
	pk.Moves = append(pk.Moves, moved...)
}

// collect returns the segments of the section it freed (seg_freed); see collectSection.
func (s *State) collect(start uint32, kind Kind, pk *Pick) uint32 {
	return s.collectSection(start, kind, pk)
}

// collectSection is do_garbage_collect for one section: a foreground call moves every valid
// block of every segment (gc_data_segment / gc_node_segment in block order), a background call
// marks them. It returns how many segments of the section ended with no valid block (seg_freed;
// a whole section freed is f2fs_usable_segs_in_sec).
func (s *State) collectSection(start uint32, kind Kind, pk *Pick) uint32 {
	freed := uint32(0)
	for segno := start; segno < start+s.segsPerSec; segno++ {
		if s.isCurSec(segno / s.segsPerSec) {
			continue // "segment %u is used by log": never a victim
		}
		se := &s.segs[segno]
		if se.Valid() != 0 {
			typ := se.Type()
			for off := range uint32(BlocksPerSeg) {
				if !se.Test(off) {
					continue
				}
				b := Block{segno, off}
				if kind == Background && !isNodeType(typ) && s.postReadMove(b) {
					// gc_data_segment: f2fs_post_read_required → move_data_block, synchronous
					// even in a background call (gc.c: "if (f2fs_post_read_required(inode))").
					if m, ok := s.move(b, ColdData); ok {
						pk.Moves = append(pk.Moves, m)
					}
					continue
				}
				if kind == Background {
					if !s.isPending(b) {
						s.pending = append(s.pending, b)
					}
					pk.Marked++
					continue
				}
				log := ColdData // __get_segment_type_6: a gcing data page goes cold
				if isNodeType(typ) {
					log = typ
				}
				if m, ok := s.move(b, log); ok {
					pk.Moves = append(pk.Moves, m)
				}
			}
		}
		if kind == Foreground && se.Valid() == 0 {
			freed++
		}
	}
	return freed
}

// postReadMove says whether background gc moves data block b at once: its file needs post-read
// processing. Where the model cannot tell (no owner look-up on a volume that may hold such
// files, or a look-up that failed) the call is left unmodelled and the block marked.
func (s *State) postReadMove(b Block) bool {
	if s.PostRead == nil {
		if s.postReadFiles && s.unmodelled == "" {
			s.unmodelled = "background gc on a volume with compressed, encrypted or verity files: whose blocks gc_data_segment moves at once (f2fs_post_read_required) is not known here"
		}
		return false
	}
	ok, err := s.PostRead(b)
	if err != nil {
		if s.unmodelled == "" {
			s.unmodelled = fmt.Sprintf("background gc: the file of block %d/%d is unknown (f2fs_post_read_required): %v", b.Segno, b.Blkoff, err)
		}
		return false
	}
	return ok
}

func (s *State) isPending(b Block) bool {
	for _, p := range s.pending {
		if p == b {
			return true
		}
	}
	return false
}

// move is f2fs_allocate_data_block (segment.c:3675) for a block leaving its place: the log's next
// free block (next_blkoff; in SSR allocation the next block free in both the valid and the
// checkpointed map), both segments' mtimes (update_segment_mtime, old then new), the SIT (+1 new,
// −1 old), need_new_seg when the log is full (a new segment or SSR, [State.replaceFull]), then
// locate_dirty_segment on both. Where need_new_seg's answer is open the move is made into a new
// segment and the state is marked unmodelled ([State.Unmodelled]).
func (s *State) move(b Block, log int) (Move, bool) {
	old := &s.segs[b.Segno]
	if !old.Test(b.Blkoff) {
		return Move{}, false // already moved or invalidated
	}
	c := &s.cur[log]
	if c.Blkoff >= BlocksPerSeg {
		return Move{}, false // the log is full and no free segment was found (ENOSPC)
	}
	to := Block{c.Segno, c.Blkoff}
	full := s.advance(log)
	s.updateSegmentMtime(b.Segno)
	s.updateSegmentMtime(to.Segno)
	s.setValid(to.Segno, to.Blkoff)
	old.Invalidate(b.Blkoff, 1)
	d := s.dirtyNow() // need_new_seg reads the counts before this block's node is updated
	if isNodeType(log) {
		// __write_node_page: the page is written (if it was dirty, no longer), and the node log
		// may now meet the unplaced node writes.
		s.Dirty.Nodes.Min -= min(s.Dirty.Nodes.Min, 1)
		defer s.nodeCheck("f2fs_move_node_page")
	} else {
		// f2fs_update_data_blkaddr dirties the block's dnode (F2FS_DIRTY_NODES); the extent
		// cache may put its inode on the meta list (F2FS_DIRTY_IMETA).
		s.Dirty.Nodes.Min = max(s.Dirty.Nodes.Min, 1)
		newPage, newIno := s.noteDnode(b)
		if newPage {
			s.Dirty.Nodes.Max++
		}
		if newIno {
			s.Dirty.IMeta.Max++
		}
	}
	if full {
		if err := s.replaceFull(log, d); err != nil && !errors.Is(err, ErrNoSpace) {
			if s.unmodelled == "" {
				s.unmodelled = err.Error()
			}
			_ = s.newCurseg(log) // the model goes on, but the state says it guessed
		}
	}
	s.locateDirtySegment(b.Segno)
	s.locateDirtySegment(to.Segno)
	for i, p := range s.pending {
		if p == b {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			break
		}
	}
	return Move{From: b, To: to, Log: log}, true
}

// noteDnode records the node page a data move dirtied (NodeOf) and reports whether the page and
// its inode are new since the last checkpoint.
func (s *State) noteDnode(b Block) (newPage, newIno bool) {
	if s.NodeOf != nil {
		if ino, dn, ok := s.NodeOf(b); ok {
			if s.gcDnodes == nil {
				s.gcDnodes = map[[2]uint64]bool{}
			}
			k, ki := [2]uint64{uint64(ino), dn}, [2]uint64{uint64(ino), ^uint64(0)}
			newPage, newIno = !s.gcDnodes[k], !s.gcDnodes[ki]
			s.gcDnodes[k], s.gcDnodes[ki] = true, true
			return newPage, newIno
		}
	}
	s.gcBlind++
	return true, true
}

// GCDirtied is how many node pages, and inodes, the segment manager's data moves since the last
// checkpoint dirtied at most (f2fs_update_data_blkaddr; the extent cache's meta list).
func (s *State) GCDirtied() (pages, inodes uint64) {
	for k := range s.gcDnodes {
		if k[1] == ^uint64(0) {
			inodes++
		} else {
			pages++
		}
	}
	return pages + s.gcBlind, inodes + s.gcBlind
}

// newCurseg is new_curseg(sbi, type, false) (segment.c:2889) for one of the segment manager's logs:
// [NewSegment] picks the segment (__get_next_segno's hint, get_new_segment's section and zone
// rules) from the free maps, and the log moves there in LFS allocation (__set_inuse, reset_curseg →
// __set_sit_entry_type). With no free section (ENOSPC) get_new_segment stops checkpoints
// (segment.c:2806): the model records the checkpoint error, leaves the log full, so no later move
// takes a block from it, and returns [ErrNoSpace].
func (s *State) newCurseg(log int) error {
	c := &s.cur[log]
	cur := make([]uint32, 0, NumLogs)
	for _, l := range s.cur {
		cur = append(cur, l.Segno)
	}
	segno, err := NewSegment(s.Geometry(), log, c.Segno, cur, s)
	if s.nodeSlack > 0 && s.unmodelled == "" {
		// get_new_segment over the free maps the unplaced node writes may have changed.
		if alt, aerr := NewSegment(s.Geometry(), log, c.Segno, cur, mayEmptyFree{s}); alt != segno || (aerr == nil) != (err == nil) {
			s.unmodelled = fmt.Sprintf("get_new_segment for log %d: segment %d, or %d if the node segments the unplaced node writes (%s) may have emptied are free", log, segno, alt, nodeFns)
		}
	}
	if err != nil {
		s.cpError = true
		c.Blkoff = BlocksPerSeg
		return err
	}
	s.setInuse(segno)
	c.Segno, c.Blkoff = segno, 0
	s.allocSSR[log] = false
	s.segs[segno].SetType(log) // reset_curseg → __set_sit_entry_type
	s.touch(segno)
	return nil
}

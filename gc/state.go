package gc

import (
	"errors"
	"fmt"

	"github.com/zrviz/zrviz/internal/f2fs"
)

// BlocksPerSeg is the only segment size F2FS has (log_blocks_per_seg = 9).
const BlocksPerSeg = f2fs.BlocksPerSeg

// NullSegno is NULL_SEGNO: no segment.
const NullSegno = f2fs.NullSegno

// The logs, numbered as the kernel's CURSEG_* (segment.h).
const (
	HotData  = f2fs.CursegHotData
	WarmData = f2fs.CursegWarmData
	ColdData = f2fs.CursegColdData
	HotNode  = f2fs.CursegHotNode
	WarmNode = f2fs.CursegWarmNode
	ColdNode = f2fs.CursegColdNode
	NumLogs  = f2fs.NrCursegType
)

// Segment is one main-area segment's SIT entry (struct f2fs_sit_entry): its valid block count,
// valid map (bit k = byte k/8, mask 0x80>>(k%8), as f2fs_test_bit reads it), mtime and log type.
type Segment struct {
	Valid uint32   `json:"valid"`
	Map   [64]byte `json:"-"`
	Mtime uint64   `json:"mtime"`
	Type  int      `json:"type"` // 0..5, CURSEG_*
}

// CurSeg is one active log: its segment and next free block (cur_data_segno/cur_data_blkoff,
// cur_node_segno/cur_node_blkoff of the checkpoint).
type CurSeg struct {
	Segno  uint32 `json:"segno"`
	Blkoff uint32 `json:"blkoff"`
}

// Volume is what a mount reads for the segment manager: the geometry, every main-area segment's
// SIT entry, the six current segments and the checkpoint's elapsed_time.
type Volume struct {
	SegsPerSec uint32
	// SecsPerZone is the superblock's secs_per_zone (0 is taken as 1): get_new_segment avoids a
	// zone another log is in (see [NewSegment]).
	SecsPerZone uint32
	Segments    []Segment
	Current     [NumLogs]CurSeg
	ElapsedTime uint64
	// MountSeconds is how many seconds the mount took from build_sit_info, which takes
	// mounted_time (segment.c:4765), to init_min_max_mtime, which sets max_mtime = get_mtime()
	// (segment.c:5502): 0 normally, but a slow mount that crosses a second boundary starts
	// max_mtime one higher, and every cost-benefit age with it.
	MountSeconds uint64
	// ReservedSegments is the checkpoint's rsvd_segment_count (SM_I(sbi)->reserved_segments):
	// has_not_enough_free_secs compares the free sections with it (reserved_sections). 0 makes
	// only a volume without a free section short of space.
	ReservedSegments uint32
	// AllocSSR is the checkpoint's alloc_type[] per log: true for a log the kernel left in SSR
	// allocation (its next block skips valid and checkpointed blocks, and need_new_seg does not
	// look at the next segment). mkfs.f2fs writes LFS for every log.
	AllocSSR [NumLogs]bool
	// PostReadFiles says the volume may hold files whose data needs processing after a read —
	// compressed, encrypted or verity files (the superblock's compression, encrypt or verity
	// feature): background gc moves their blocks at once ([State.PostRead]).
	PostReadFiles bool
}

// The victim policies (gc_mode, enum in segment.h:153): GC_CB = 0, GC_GREEDY = 1; last_victim
// has one slot per policy.
const (
	gcCB = iota
	gcGreedy
)

// DefMaxVictimSearch is DEF_MAX_VICTIM_SEARCH (gc.h:44), the default of max_victim_search.
const DefMaxVictimSearch = 4096

// ErrVolume reports a volume the model cannot take.
var ErrVolume = errors.New("gc: unusable volume")

// State is the kernel's in-memory segment manager state after a mount, changed by the ops.
type State struct {
	// Now is the seconds since mount: get_mtime() = elapsed_time + Now (segment.h:876).
	Now uint64
	// LFS is the mount option mode=lfs: no log ever takes SSR ([State.MaySSR]).
	LFS bool
	// MaxVictimSearch is sbi->max_victim_search (sysfs max_victim_search).
	MaxVictimSearch uint32
	// Dirty is the dirty node, dentry and inode-meta pages (F2FS_DIRTY_NODES, F2FS_DIRTY_DENTS,
	// F2FS_DIRTY_IMETA) the caller's operations left, each a range (core follows them); the node
	// pages background calls marked are added to it where the kernel reads the counts
	// ([State.dirtyNow]), and the segment manager's own moves and checkpoints change it as the
	// kernel's do (f2fs_need_SSR, __get_secs_required).
	Dirty Dirty

	segsPerSec, mainSegs, mainSecs uint32
	secsPerZone                    uint32
	// segs is every main-area segment's SIT entry (gc/sit.go: the one writer of valid counts,
	// maps and mtimes).
	segs               []Entry
	cur                [NumLogs]CurSeg
	elapsed            uint64
	minMtime, maxMtime uint64
	lastVictim         [2]uint32
	curVictimSec       uint32
	rsvSegs            uint32
	// cpError is the checkpoint error f2fs_stop_checkpoint(STOP_CP_REASON_NO_SEGMENT) sets when
	// get_new_segment finds no free section (segment.c:2806): the file system is shut down.
	cpError bool
	// unmodelled says why an allocation the model made may not be the kernel's (gc/ssr.go).
	unmodelled string
	// nodeSlack is how many node pages at most were written where the model did not place them,
	// mtimeUnsure whether those writes may have raised max_mtime by an unknown amount (nodes.go).
	nodeSlack   uint64
	mtimeUnsure bool
	// allocSSR is each log's curseg->alloc_type == SSR.
	allocSSR [NumLogs]bool
	// ssrFound are the SSR victims get_ssr_segment found since the mount, in order.
	ssrFound []SSRVictim

	dirty     bitset // dirty_segmap[DIRTY]
	prefree   bitset // dirty_segmap[PRE]
	dirtySec  bitset // dirty_secmap (large sections only)
	victimSec bitset // victim_secmap: sections background GC chose
	inuse     bitset // free_segmap: set = not free
	inuseSec  bitset // free_secmap

	// pending are the blocks background calls marked dirty, in the order they were marked.
	pending []Block

	// clock records update_segment_mtime's calls while tracked (gc/clock.go; nil: not tracked).
	clock *mtimeTrack
	// ssrIdx is get_ssr_segment's search index (gc/ssrindex.go; nil: not built yet).
	ssrIdx *ssrIndex

	// PostRead says whether the data block b belongs to a file that needs post-read processing
	// (f2fs_post_read_required: compressed, encrypted, verity): gc_data_segment moves such a block
	// at once with move_data_block even in a background call, where it only marks the others.
	// Nil on a volume whose files cannot need it; on one that may (Volume.PostReadFiles), nil
	// leaves a background call unmodelled rather than guessed.
	PostRead      func(b Block) (bool, error)
	postReadFiles bool
	// NodeOf names the node page that holds data block b's slot (its file's inode number and the
	// dnode's first file block index): a move dirties that page (f2fs_update_data_blkaddr), and
	// the dirty node count grows by one only for a page not yet dirtied in the call. Nil: every
	// move counts as a page of its own.
	NodeOf   func(b Block) (ino uint32, dnode uint64, ok bool)
	gcDnodes map[[2]uint64]bool // the node pages data moves dirtied since the checkpoint (NodeOf)
	gcBlind  uint64             // data moves whose node page NodeOf did not name
}

// Block is one block of the main area: segment and offset.
type Block struct {
	Segno  uint32 `json:"segno"`
	Blkoff uint32 `json:"blkoff"`
}

type bitset []uint64

func newBitset(n uint32) bitset     { return make(bitset, (n+63)/64) }
func (b bitset) test(i uint32) bool { return b[i/64]&(1<<(i%64)) != 0 }
func (b bitset) set(i uint32)       { b[i/64] |= 1 << (i % 64) }
func (b bitset) clear(i uint32)     { b[i/64] &^= 1 << (i % 64) }
func (b bitset) clone() bitset      { return append(bitset(nil), b...) }

// next is find_next_bit: the first set bit in [from, n), or n.
func (b bitset) next(from, n uint32) uint32 {
	for i := from; i < n; i++ {
		if b.test(i) {
			return i
		}
	}
	return n
}

func (b bitset) count(n uint32) uint32 {
	c := uint32(0)
	for i := range n {
		if b.test(i) {
			c++
		}
	}
	return c
}

// Mount builds the state f2fs_build_segment_manager leaves (segment.c): the free segment map
// (build_free_segmap: a segment with valid blocks or a current one is in use), the dirty maps
// (init_dirty_segmap, segment.c:5010: in-use segments neither empty nor full; for large sections
// dirty_secmap = sections neither empty nor full, current sections left out), min/max mtime
// (init_min_max_mtime, segment.c:5481), last_victim all 0 and no victim marked.
func Mount(v Volume) (*State, error) {
	n := uint32(len(v.Segments))
	if v.SegsPerSec == 0 || n == 0 || n%v.SegsPerSec != 0 {
		return nil, fmt.Errorf("%w: %d main segments, %d per section", ErrVolume, n, v.SegsPerSec)
	}
	s := &State{
		MaxVictimSearch: DefMaxVictimSearch,
		segsPerSec:      v.SegsPerSec, mainSegs: n, mainSecs: n / v.SegsPerSec, secsPerZone: max(v.SecsPerZone, 1),
		segs: make([]Entry, n), cur: v.Current, elapsed: v.ElapsedTime,
		curVictimSec: NullSegno, rsvSegs: v.ReservedSegments, postReadFiles: v.PostReadFiles,
		allocSSR: v.AllocSSR,
	}
	for t, c := range s.cur {
		if c.Segno >= n || c.Blkoff > BlocksPerSeg {
			return nil, fmt.Errorf("%w: log %d at segment %d block %d", ErrVolume, t, c.Segno, c.Blkoff)
		}
	}
	for i, sg := range v.Segments {
		if sg.Valid > BlocksPerSeg {
			return nil, fmt.Errorf("%w: segment %d has %d valid blocks", ErrVolume, i, sg.Valid)
		}
		// build_sit_entries (seg_info_from_raw_sit, segment.h:368): the checkpointed map is the SIT's.
		s.segs[i] = entryOf(sg)
	}
	s.dirty, s.prefree, s.inuse = newBitset(n), newBitset(n), newBitset(n)
	s.dirtySec, s.victimSec, s.inuseSec = newBitset(s.mainSecs), newBitset(s.mainSecs), newBitset(s.mainSecs)
	for segno := range n {
		if s.segs[segno].Valid() > 0 || s.isCurSeg(segno) {
			s.setInuse(segno)
		}
	}
	for segno := range n {
		if !s.inuse.test(segno) {
			continue
		}
		if v := s.segs[segno].Valid(); v == BlocksPerSeg || v == 0 {
			continue
		}
		s.locateDirty(segno) // __locate_dirty_segment(DIRTY)
	}
	if s.large() {
		for secno := range s.mainSecs {
			if v := s.secValid(secno); v == 0 || v == s.segsPerSec*BlocksPerSeg || s.isCurSec(secno) {
				continue
			}
			s.dirtySec.set(secno)
		}
	}
	s.minMtime = ^uint64(0)
	for secno := range s.mainSecs {
		if m := s.secMtime(secno); m < s.minMtime {
			s.minMtime = m
		}
	}
	s.maxMtime = s.elapsed + v.MountSeconds
	return s, nil
}

// Clone returns an independent copy of the state.
func (s *State) Clone() *State {
	c := *s
	c.segs = append([]Entry(nil), s.segs...)
	c.dirty, c.prefree, c.inuse = s.dirty.clone(), s.prefree.clone(), s.inuse.clone()
	c.dirtySec, c.victimSec, c.inuseSec = s.dirtySec.clone(), s.victimSec.clone(), s.inuseSec.clone()
	c.pending = append([]Block(nil), s.pending...)
	c.ssrFound = append([]SSRVictim(nil), s.ssrFound...)
	c.gcDnodes = nil
	for k, v := range s.gcDnodes {
		if c.gcDnodes == nil {
			c.gcDnodes = map[[2]uint64]bool{}
		}
		c.gcDnodes[k] = v
	}
	c.clock = s.clock.clone()
	c.ssrIdx = s.ssrIndexClone()
	return &c
}

// Segment returns segment segno's SIT entry as the model holds it.
func (s *State) Segment(segno uint32) Segment { return s.segs[segno].Segment() }

// Entry returns segment segno's SIT entry (a copy: only the State changes its own).
func (s *State) Entry(segno uint32) Entry { return s.segs[segno] }

// Segments returns the number of main-area segments.
func (s *State) Segments() uint32 { return s.mainSegs }

// Current returns the six active logs.
func (s *State) Current() [NumLogs]CurSeg { return s.cur }

// Class returns "current", "prefree", "free", "dirty" or "full" for segment segno.
func (s *State) Class(segno uint32) string {
	switch {
	case s.isCurSeg(segno):
		return "current"
	case s.prefree.test(segno):
		return "prefree"
	case !s.inuse.test(segno):
		return "free"
	case s.segs[segno].Valid() < BlocksPerSeg:
		return "dirty"
	}
	return "full"
}

// VictimMarked reports whether a background call marked the section holding segno
// (victim_secmap).
func (s *State) VictimMarked(segno uint32) bool { return s.victimSec.test(segno / s.segsPerSec) }

// Pending returns the blocks background calls marked and that have not moved yet.
func (s *State) Pending() []Block { return append([]Block(nil), s.pending...) }

// MinMaxMtime returns sit_i->min_mtime and max_mtime.
func (s *State) MinMaxMtime() (uint64, uint64) { return s.minMtime, s.maxMtime }

func (s *State) large() bool { return s.segsPerSec > 1 } // __is_large_section

// mtimeNow is get_mtime(sbi, false) with the clock never set back.
func (s *State) mtimeNow() uint64 { return s.elapsed + s.Now }

func (s *State) isCurSeg(segno uint32) bool {
	for _, c := range s.cur {
		if c.Segno == segno {
			return true
		}
	}
	return false
}

// isCurSec is IS_CURSEC (segment.h:45).
func (s *State) isCurSec(secno uint32) bool {
	for _, c := range s.cur {
		if c.Segno/s.segsPerSec == secno {
			return true
		}
	}
	return false
}

// secUsageCheck is sec_usage_check (segment.h:916).
func (s *State) secUsageCheck(secno uint32) bool {
	return s.isCurSec(secno) || s.curVictimSec == secno
}

// secValid is get_valid_blocks(sbi, segno, true): the section's valid blocks.
func (s *State) secValid(secno uint32) uint32 {
	v := uint32(0)
	for i := range s.segsPerSec {
		v += s.segs[secno*s.segsPerSec+i].Valid()
	}
	return v
}

// secMtime is the mean SIT mtime of a section's segments (get_cb_cost, init_min_max_mtime).
func (s *State) secMtime(secno uint32) uint64 {
	m := uint64(0)
	for i := range s.segsPerSec {
		m += s.segs[secno*s.segsPerSec+i].Mtime()
	}
	return m / uint64(s.segsPerSec)
}

// setInuse is __set_inuse.
func (s *State) setInuse(segno uint32) {
	s.inuse.set(segno)
	s.inuseSec.set(segno / s.segsPerSec)
}

// setFree is __set_test_and_free(sbi, segno, false) (segment.h:456).
func (s *State) setFree(segno uint32) {
	if !s.inuse.test(segno) {
		return
	}
	s.inuse.clear(segno)
	secno := segno / s.segsPerSec
	if s.isCurSec(secno) {
		return
	}
	start := secno * s.segsPerSec
	if s.inuse.next(start, start+s.segsPerSec) < start+s.segsPerSec {
		return
	}
	s.inuseSec.clear(secno)
}

// locateDirty is __locate_dirty_segment(sbi, segno, DIRTY) (segment.c:767).
func (s *State) locateDirty(segno uint32) {
	if s.isCurSeg(segno) {
		return
	}
	s.dirty.set(segno)
	s.touch(segno)
	if s.large() && !s.isCurSec(segno/s.segsPerSec) {
		s.dirtySec.set(segno / s.segsPerSec)
	}
}

// removeDirty is __remove_dirty_segment(sbi, segno, DIRTY) (segment.c:806).
func (s *State) removeDirty(segno uint32) {
	s.dirty.clear(segno)
	s.touch(segno)
	secno := segno / s.segsPerSec
	v := s.secValid(secno)
	if v == 0 {
		s.victimSec.clear(secno)
	}
	if s.large() {
		if v == 0 || v == s.segsPerSec*BlocksPerSeg {
			s.dirtySec.clear(secno)
			return
		}
		if !s.isCurSec(secno) {
			s.dirtySec.set(secno)
		}
	}
}

// locateDirtySegment is locate_dirty_segment (segment.c:850).
func (s *State) locateDirtySegment(segno uint32) {
	if segno == NullSegno || s.isCurSeg(segno) {
		return
	}
	switch v := s.segs[segno].Valid(); {
	case v == 0:
		s.prefree.set(segno) // __locate_dirty_segment(PRE)
		s.removeDirty(segno)
	case v < BlocksPerSeg:
		s.locateDirty(segno)
	default:
		s.removeDirty(segno)
	}
}

// updateSegmentMtime is update_segment_mtime(sbi, blkaddr, 0) (segment.c:2419).
func (s *State) updateSegmentMtime(segno uint32) {
	ctime := s.mtimeNow()
	se := &s.segs[segno]
	s.clock.record(segno, se.Valid(), se.Mtime(), s.Now)
	se.UpdateMtime(ctime)
	if ctime > s.maxMtime {
		s.maxMtime = ctime
	}
}

// Checkpoint is F2FS_IOC_WRITE_CHECKPOINT as it changes the segment manager: the node blocks
// background calls marked are written first (block_operations → f2fs_sync_node_pages), then the
// prefree segments become free (set_prefree_as_free_segments, segment.c:2166, then
// f2fs_clear_prefree_segments, segment.c:2177, from f2fs_write_checkpoint) and the SIT entries
// are written (the model's SIT is the written one). It returns the segments made free and the
// blocks moved.
func (s *State) Checkpoint() (freed []uint32, moved []Move) {
	// block_operations: f2fs_sync_dirty_inodes writes the dirty dentry pages (dirtying their
	// directories' dnodes), f2fs_sync_inode_meta the inodes on the meta list into their pages,
	// then f2fs_sync_node_pages writes every dirty node page out of place. The marked node blocks
	// are placed below; the others are not.
	d := s.Dirty
	written := Range{Min: d.Nodes.Min, Max: d.Nodes.Max + d.IMeta.Max + d.Dents.Max}
	if d.IMeta.Min > 0 || d.Dents.Min > 0 {
		written.Min = max(written.Min, 1)
	}
	if d.Dents.Max > 0 && s.unmodelled == "" {
		s.unmodelled = fmt.Sprintf("the checkpoint writes up to %d directory pages background gc marked (block_operations → f2fs_sync_dirty_inodes) to the cold data log, which the model does not follow", d.Dents.Max)
	}
	s.NodesWritten(written, "f2fs_sync_node_pages")
	s.Dirty = Dirty{}
	s.gcDnodes, s.gcBlind = nil, 0
	var keep []Block
	// move takes each moved block out of s.pending, so walk a copy: ranging over s.pending itself
	// skipped every other marked block.
	for _, b := range append([]Block(nil), s.pending...) {
		if t := s.segs[b.Segno].Type(); isNodeType(t) {
			if m, ok := s.move(b, t); ok {
				moved = append(moved, m)
			}
			continue
		}
		keep = append(keep, b)
	}
	s.pending = keep
	// f2fs_flush_sit_entries → seg_info_to_raw_sit (segment.h:410): the checkpointed maps become
	// the valid ones, so SSR may reuse what was invalidated before this checkpoint.
	for segno := range s.mainSegs {
		s.segs[segno].Checkpointed()
	}
	s.ssrIdx = nil // every cost may have changed: rebuilt at the next search
	for segno := range s.mainSegs {
		if s.prefree.test(segno) {
			s.setFree(segno)
			s.prefree.clear(segno)
			freed = append(freed, segno)
		}
	}
	return freed, moved
}

// Sync is sync(2) as it changes the segment manager: writeback moves the data blocks background
// calls marked (a page marked gcing goes to the cold data log), then the checkpoint of
// f2fs_sync_fs.
func (s *State) Sync() (freed []uint32, moved []Move) {
	var keep []Block
	for _, b := range append([]Block(nil), s.pending...) { // a copy: move takes moved blocks out of s.pending
		if isNodeType(s.segs[b.Segno].Type()) {
			keep = append(keep, b)
			continue
		}
		if m, ok := s.move(b, ColdData); ok {
			moved = append(moved, m)
		}
	}
	s.pending = keep
	freed, more := s.Checkpoint()
	return freed, append(moved, more...)
}

func isNodeType(t int) bool { return t >= HotNode && t <= ColdNode }

// pendingNodes counts the node blocks background calls marked that have not moved: dirty node
// pages (set_page_dirty in gc_node_segment → f2fs_move_node_page).
func (s *State) pendingNodes() uint64 {
	n := uint64(0)
	for _, b := range s.pending {
		if isNodeType(s.segs[b.Segno].Type()) && s.segs[b.Segno].Test(b.Blkoff) {
			n++
		}
	}
	return n
}

// dirtyNow is what the kernel's counters hold now: the caller's [State.Dirty] and the node pages
// background calls marked.
func (s *State) dirtyNow() Dirty {
	d := s.Dirty
	if n := s.pendingNodes(); n > 0 {
		d.Nodes = Range{Min: max(d.Nodes.Min, n), Max: d.Nodes.Max + n}
	}
	return d
}

// SegmentValidMap returns segment segno's valid count and map as the model holds them, so a
// State can serve as the core engine's SITSource for a zero range after GC ops (the SIT side
// only: the moved blocks' new addresses are not in any file's dnode slots, see the package doc).
func (s *State) SegmentValidMap(segno uint32) (valid uint32, bitmap [64]byte, err error) {
	if segno >= s.mainSegs {
		return 0, bitmap, fmt.Errorf("gc: segment %d: %w (main area has %d)", segno, ErrVolume, s.mainSegs)
	}
	return s.segs[segno].Valid(), s.segs[segno].Map(), nil
}

// CheckpointError reports the checkpoint error a log that found no free segment left
// (f2fs_stop_checkpoint, STOP_CP_REASON_NO_SEGMENT): from then on f2fs_gc returns EIO.
func (s *State) CheckpointError() bool { return s.cpError }

// SegsPerSec returns the segments of a section.
func (s *State) SegsPerSec() uint32 { return s.segsPerSec }

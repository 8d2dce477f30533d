package gc

// smallVolumeSegments is SMALL_VOLUME_SEGMENTS (segment.h:712): a volume of at most this many main
// segments gets alloc_mode=reuse by default.
const smallVolumeSegments = 16 * 512

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

// Pick is what one F2FS_IOC_GARBAGE_COLLECT call did, in the JSON the CLI prints: the policy,
// the victim (the first segment of the chosen section) or null, the kernel's cost for it (the
// f2fs_get_victim tracepoint's cost), the errno, how many blocks moved within the call and the
// cheapest candidates with their cost terms.
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
	Marked int    `json:"marked,omitempty"`
	Moves  []Move `json:"-"`
}

// GC is F2FS_IOC_GARBAGE_COLLECT with sync = 1 (Foreground) or 0 (Background) as f2fs_gc
// (gc.c:1907) runs it from f2fs_ioc_gc (file.c:2781): one victim (the volume is assumed to have
// enough free sections, so neither a checkpoint nor a second round runs inside the call), then
// do_garbage_collect (gc.c:1759) on its section.
func (s *State) GC(kind Kind) Pick {
	v := s.getVictim(kind)
	pk := Pick{Op: "gc", Type: kind.String(), Policy: "cost-benefit", Cost: v.cost,
		Candidates: v.candidates, FromBackground: v.fromBG, Searched: v.searched}
	if v.policy == gcGreedy {
		pk.Policy = "greedy"
	}
	if pk.Candidates == nil {
		pk.Candidates = []Candidate{}
	}
	if v.segno == NullSegno {
		e := ENODATA
		pk.Errno = &e
		return pk
	}
	seg := v.segno
	pk.Victim = &seg
	secFreed := s.collect(v.segno, kind, &pk)
	if kind == Foreground {
		s.curVictimSec = NullSegno
		if !secFreed {
			e := EAGAIN // err_gc_skipped: no whole section freed
			pk.Errno = &e
		}
	}
	return pk
}

// collect is do_garbage_collect for one section: a foreground call moves every valid block of
// every segment (gc_data_segment / gc_node_segment in block order), a background call marks them.
// It reports whether every segment of the section ended with no valid block (seg_freed ==
// f2fs_usable_segs_in_sec).
func (s *State) collect(start uint32, kind Kind, pk *Pick) bool {
	freed := uint32(0)
	for segno := start; segno < start+s.segsPerSec; segno++ {
		if s.isCurSec(segno / s.segsPerSec) {
			continue // "segment %u is used by log": never a victim
		}
		se := &s.segs[segno]
		if se.Valid != 0 {
			typ := se.Type
			for off := range uint32(BlocksPerSeg) {
				if !testMap(&se.Map, off) {
					continue
				}
				b := Block{segno, off}
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
					pk.Moved++
				}
			}
		}
		if kind == Foreground && se.Valid == 0 {
			freed++
		}
	}
	return freed == s.segsPerSec
}

func (s *State) isPending(b Block) bool {
	for _, p := range s.pending {
		if p == b {
			return true
		}
	}
	return false
}

// move is f2fs_allocate_data_block (segment.c:3675) in LFS mode for a block leaving its place:
// the log's next free block, both segments' mtimes (update_segment_mtime, old then new), the SIT
// (+1 new, −1 old), a new segment when the log is full, then locate_dirty_segment on both.
func (s *State) move(b Block, log int) (Move, bool) {
	old := &s.segs[b.Segno]
	if !testMap(&old.Map, b.Blkoff) {
		return Move{}, false // already moved or invalidated
	}
	c := &s.cur[log]
	to := Block{c.Segno, c.Blkoff}
	c.Blkoff++
	full := c.Blkoff >= BlocksPerSeg
	s.updateSegmentMtime(b.Segno)
	s.updateSegmentMtime(to.Segno)
	ns := &s.segs[to.Segno]
	setMap(&ns.Map, to.Blkoff)
	ns.Valid++
	clearMap(&old.Map, b.Blkoff)
	old.Valid--
	if full {
		s.newCurseg(log)
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

// newCurseg is new_curseg(sbi, type, false) (segment.c:2887) with get_new_segment
// (segment.c:2693): the next free segment of the section, else the first free section from the
// hint (__get_next_segno, segment.c:2838: the current segment for large sections; else 0 for hot
// data, node logs and any log of a volume of at most SMALL_VOLUME_SEGMENTS main segments, which
// mounts with alloc_mode=reuse (super.c:2168); else the current segment), wrapping to the first
// free section. One section per zone.
func (s *State) newCurseg(log int) {
	c := &s.cur[log]
	hintSeg := c.Segno
	if !s.large() && (log == HotData || isNodeType(log) || s.mainSegs <= smallVolumeSegments) {
		hintSeg = 0
	}
	var segno uint32
	if (hintSeg+1)%s.segsPerSec != 0 {
		end := (hintSeg/s.segsPerSec + 1) * s.segsPerSec
		if n := s.inuse.nextZero(hintSeg+1, end); n < end {
			segno = n
			goto gotIt
		}
	}
	{
		secno := s.inuseSec.nextZero(hintSeg/s.segsPerSec, s.mainSecs)
		if secno >= s.mainSecs {
			secno = s.inuseSec.nextZero(0, s.mainSecs)
		}
		if secno >= s.mainSecs {
			return // -ENOSPC: out of the model's scope
		}
		segno = secno * s.segsPerSec
	}
gotIt:
	s.setInuse(segno)
	c.Segno, c.Blkoff = segno, 0
	s.segs[segno].Type = log // reset_curseg → __set_sit_entry_type
}

package core

import (
	"fmt"
	"maps"
	"slices"
	"unsafe"

	"github.com/zrviz/zrviz/gc"
)

// slotRun is a compressed stretch of slots: n slots holding addr, addr+1, …
// when inc is set, else n copies of addr.
type slotRun struct {
	n    uint32
	addr uint32
	inc  bool
}

// nodeRec is the overlay's copy of one dnode's slots; prev is the copy it
// replaced, kept so a seek backwards can undo it.
type nodeRec struct {
	prev *nodeRec
	runs []slotRun
}

func compressSlots(s []uint32) []slotRun {
	var out []slotRun
	for i := 0; i < len(s); {
		a := s[i]
		j := i + 1
		if isBlock(a) {
			for j < len(s) && s[j] == a+uint32(j-i) && isBlock(s[j]) {
				j++
			}
			out = append(out, slotRun{n: uint32(j - i), addr: a, inc: true})
		} else {
			for j < len(s) && s[j] == a {
				j++
			}
			out = append(out, slotRun{n: uint32(j - i), addr: a})
		}
		i = j
	}
	return out
}

func (r *nodeRec) expand(dst []uint32) {
	i := 0
	for _, run := range r.runs {
		for k := uint32(0); k < run.n && i < len(dst); k++ {
			if run.inc {
				dst[i] = run.addr + k
			} else {
				dst[i] = run.addr
			}
			i++
		}
	}
}

// isBlock reports whether a slot value is a block address rather than one
// of the special values (__is_valid_data_blkaddr).
func isBlock(a uint32) bool { return a != NullAddr && a != NewAddr && a != CompressAddr }

// slotOverlay layers the engine's slot changes and node allocations over
// the input's DnodeSource. It satisfies DnodeSource itself, which is how a
// Result continues into the next request.
type slotOverlay struct {
	base DnodeSource
	geom dnodeGeom
	// inlineBase: the inode block's i_addr holds inline data, not slots,
	// until the inline conversion rewrites it.
	inlineBase bool
	recs       map[uint64]*nodeRec
	// alloc overrides whether a node exists: true, allocated (ALLOC_NODE) by this overlay's
	// operations; false, freed (truncate_node), whatever the base says.
	alloc map[nodeKey]bool
	// moved lists the nodes whose block address the model no longer knows: dirtied, then
	// written out of place by a checkpoint or an fsync (f2fs_write_node_pages,
	// f2fs_fsync_node_pages), which the model does not place.
	moved map[nodeKey]bool
	// Undo logs, appended only while a Run may seek.
	journal  bool
	recLog   []uint64
	allocLog []allocUndo
}

// allocUndo is what a node's alloc entry was before a change: had false, no entry.
type allocUndo struct {
	k        nodeKey
	had, was bool
}

func newSlotOverlay(base DnodeSource, g dnodeGeom, inline bool) *slotOverlay {
	return &slotOverlay{base: base, geom: g, inlineBase: inline,
		recs: map[uint64]*nodeRec{}, alloc: map[nodeKey]bool{}}
}

// read copies the slots of the dnode holding index into buf (grown to the
// node's capacity) and returns its position and the nodes still missing.
func (o *slotOverlay) read(index uint64, buf []uint32) (dnodePos, []uint32, int, error) {
	pos := locate(index, o.geom)
	if cap(buf) < pos.cap {
		buf = make([]uint32, pos.cap)
	}
	buf = buf[:pos.cap]
	missing := 0
	if pos.start == 0 && o.inlineBase {
		clear(buf)
	} else {
		start, slots, m, err := o.base.DnodeSlots(index)
		if err != nil {
			return pos, buf, 0, &SourceError{Op: "DnodeSlots", Index: index, Err: err}
		}
		if start != pos.start || len(slots) != pos.cap || m < 0 || m > pos.depth {
			return pos, buf, 0, &SourceError{Op: "DnodeSlots", Index: index,
				Err: fmt.Errorf("answer (start %d, %d slots, %d missing) does not match %s (start %d, %d slots)",
					start, len(slots), m, pos.name(), pos.start, pos.cap)}
		}
		copy(buf, slots)
		missing = o.missingFrom(&pos, m)
	}
	if r := o.recs[pos.start]; r != nil {
		r.expand(buf)
	}
	return pos, buf, missing, nil
}

// holeEnd says how far the slots from index on are NULL_ADDR because the nodes that would hold
// them exist neither in the base nor in the overlay: one past the subtree of the highest missing
// node on index's path (a direct, indirect or double-indirect node), clipped to the first dnode the
// overlay has a record of. It returns index when the dnode holding index exists. A range over
// holes is thus walked a missing subtree at a time, as f2fs_get_dnode_of_data would find it,
// never slot by slot.
func (o *slotOverlay) holeEnd(index uint64, recStarts []uint64) (uint64, error) {
	pos := locate(index, o.geom)
	if pos.depth == 0 || (pos.start == 0 && o.inlineBase) {
		return index, nil
	}
	_, _, m, err := o.base.DnodeSlots(index)
	if err != nil {
		return index, &SourceError{Op: "DnodeSlots", Index: index, Err: err}
	}
	if m < 0 || m > pos.depth {
		return index, nil
	}
	// The highest node that exists neither in the base nor in the overlay (or was freed).
	missing := o.missingFrom(&pos, m)
	if missing == 0 {
		return index, nil
	}
	i := pos.depth - missing
	end := subtreeEnd(&pos, i, o.geom)
	if k, _ := slices.BinarySearch(recStarts, index); k < len(recStarts) && recStarts[k] < end {
		end = max(recStarts[k], index)
	}
	return end, nil
}

// DnodeStarts lists the dnodes of the base that exist and those the overlay has records of:
// every dnode that may hold a slot other than NULL_ADDR (one allocated but never written holds
// none). A frozen overlay is thus a DnodeLister for the next request.
func (o *slotOverlay) DnodeStarts() ([]uint64, bool) {
	l, ok := o.base.(DnodeLister)
	if !ok {
		return nil, false
	}
	base, ok := l.DnodeStarts()
	if !ok {
		return nil, false
	}
	out := slices.Clone(base)
	for start := range o.recs {
		if k, found := slices.BinarySearch(out, start); !found {
			out = slices.Insert(out, k, start)
		}
	}
	return out, true
}

// recStarts lists the first slots of the dnodes the overlay has records of, sorted.
func (o *slotOverlay) recStarts() []uint64 {
	out := slices.Collect(maps.Keys(o.recs))
	slices.Sort(out)
	return out
}

// missingFrom counts the nodes on pos's path that do not exist, given that the base lacks its
// last baseMissing: the overlay's allocations and frees override the base. Missing nodes are a
// suffix of the path: a node cannot exist below one that does not.
func (o *slotOverlay) missingFrom(pos *dnodePos, baseMissing int) int {
	for i := 0; i < pos.depth; i++ {
		exists := i < pos.depth-baseMissing
		if v, ok := o.alloc[pos.path[i]]; ok {
			exists = v
		}
		if !exists {
			return pos.depth - i
		}
	}
	return 0
}

// missingNodes lists the nodes on pos's path that do not exist (read's missing), parents first:
// what ALLOC_NODE creates.
func (o *slotOverlay) missingNodes(pos *dnodePos, missing int) []nodeKey {
	if missing == 0 {
		return nil
	}
	out := make([]nodeKey, 0, missing)
	for i := pos.depth - missing; i < pos.depth; i++ {
		out = append(out, pos.path[i])
	}
	return out
}

// store records a dnode's slots. The record it replaces is kept (prev) only while a Run may seek
// back to it (journal): otherwise nothing reads it again, and keeping every earlier version held a
// node's copy per change until the operation ended (issue 37).
func (o *slotOverlay) store(start uint64, slots []uint32) {
	r := &nodeRec{runs: compressSlots(slots)}
	if o.journal {
		r.prev = o.recs[start]
		o.recLog = append(o.recLog, start)
	}
	o.recs[start] = r
}

func (o *slotOverlay) allocate(k nodeKey) { o.setNode(k, true) }

// free marks node k as gone (truncate_node); a dnode's slots read as NULL_ADDR from then on.
func (o *slotOverlay) free(k nodeKey, start uint64, capacity int) {
	o.setNode(k, false)
	if start != noDnode {
		o.store(start, make([]uint32, capacity))
	}
}

// noDnode is free's start for a node that holds no data slots (an indirect node).
const noDnode = ^uint64(0)

func (o *slotOverlay) setNode(k nodeKey, exists bool) {
	if o.journal {
		was, had := o.alloc[k]
		o.allocLog = append(o.allocLog, allocUndo{k: k, had: had, was: was})
	}
	o.alloc[k] = exists
}

// undo rolls the overlay back to the given log lengths.
func (o *slotOverlay) undo(recLen, allocLen int) {
	for i := len(o.recLog) - 1; i >= recLen; i-- {
		s := o.recLog[i]
		if p := o.recs[s].prev; p != nil {
			o.recs[s] = p
		} else {
			delete(o.recs, s)
		}
	}
	o.recLog = o.recLog[:recLen]
	for i := len(o.allocLog) - 1; i >= allocLen; i-- {
		if u := o.allocLog[i]; u.had {
			o.alloc[u.k] = u.was
		} else {
			delete(o.alloc, u.k)
		}
	}
	o.allocLog = o.allocLog[:allocLen]
}

// DnodeSlots makes a frozen overlay a DnodeSource for the next request.
func (o *slotOverlay) DnodeSlots(index uint64) (uint64, []uint32, int, error) {
	pos, buf, missing, err := o.read(index, nil)
	if err != nil {
		return 0, nil, 0, err
	}
	return pos.start, buf, missing, nil
}

// frozen returns a copy that later changes to o do not affect.
func (o *slotOverlay) frozen() *slotOverlay {
	f := &slotOverlay{base: o.base, geom: o.geom, inlineBase: o.inlineBase,
		recs: make(map[uint64]*nodeRec, len(o.recs)), alloc: maps.Clone(o.alloc),
		moved: maps.Clone(o.moved)}
	for k, r := range o.recs {
		f.recs[k] = &nodeRec{runs: r.runs}
	}
	return f
}

// SegClass is a segment's place in the segment manager's lists.
type SegClass uint8

// Segment classes. Free and Full are neither dirty nor prefree; Current
// segments are skipped by locate_dirty_segment.
const (
	SegFree SegClass = iota
	SegDirty
	SegFull
	SegPrefree
	SegCurrent
)

var segClassNames = [...]string{"free", "dirty", "full", "prefree", "current"}

// String returns "free", "dirty", "full", "prefree" or "current".
func (c SegClass) String() string {
	if int(c) < len(segClassNames) {
		return segClassNames[c]
	}
	return "?"
}

// MarshalText encodes the class by name.
func (c SegClass) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// segState is the engine's in-memory seg_entry for one segment: the SIT entry itself (valid count,
// maps; gc.Entry, whose methods are the only writers of them), the segment's class in the segment
// manager's lists, and its entry as the image held it (the before picture, never changed).
type segState struct {
	gc.Entry
	origValid uint32
	orig      [64]byte
	class     SegClass
	origClass SegClass
	touched   bool
	gen       int32 // chunk generation of the last undo entry
}

// sitUndo is what a segment's first change in a checkpoint generation overwrites: only the parts of
// segState a run changes (what it was before the run never changes), so a player's undo log of a
// run that touches thousands of segments per chunk stays small.
type sitUndo struct {
	segno   uint32
	gen     int32
	class   SegClass
	touched bool
	entry   gc.Entry
}

// SITUndoBytes is the size of one entry of a Run's SIT undo log, for estimating a player's memory.
const SITUndoBytes = int64(unsafe.Sizeof(sitUndo{})) + 8

// entrySource is a SIT source that may hold whole entries (mtime, type, checkpointed map): the
// segment manager of a mounted sequence (gc.State), or an overlay over it. whole is false where the
// source holds only counts and maps (an image's SIT, an overlay over one).
type entrySource interface {
	SITEntry(segno uint32) (e gc.Entry, whole bool, err error)
}

// stampedSIT is a mounted sequence's SIT source for one operation: the walk stamps each segment
// piece's mtime with now (update_segment_mtime in f2fs_invalidate_blocks), on entries read from
// the segment manager, which takes them back after the operation (gc.State.Adopt).
type stampedSIT struct {
	SITSource
	now uint64
	// track: the segment manager records its mtime updates (gc.State.Tracking): the walk keeps
	// its stamps for gc.State.RecordStamps.
	track bool
}

// SITEntry passes the source's whole entries on.
func (s stampedSIT) SITEntry(segno uint32) (gc.Entry, bool, error) {
	if es, ok := s.SITSource.(entrySource); ok {
		return es.SITEntry(segno)
	}
	return gc.Entry{}, false, nil
}

// sitOverlay holds every segment the run has read, loaded lazily.
type sitOverlay struct {
	src SITSource
	// stamp: update_segment_mtime runs at now (a mounted sequence's walk, stampedSIT).
	stamp bool
	now   uint64
	// stamps are the walk's update_segment_mtime calls, kept when the manager tracks its mtime
	// updates (stampedSIT.track): 8 bytes a call piece, for gc.State.RecordStamps.
	track   bool
	stamps  []gc.Stamp
	mainSeg uint32
	current []uint32
	prefree []uint32 // Volume.Prefree
	trimmed bool
	segs    map[uint32]*segState
	touched []uint32
	journal bool
	gen     int32
	log     []sitUndo
	lastNo  uint32
	last    *segState
}

func newSITOverlay(src SITSource, v *Volume) *sitOverlay {
	o := &sitOverlay{src: src, mainSeg: v.MainSegments, current: v.CurrentSegments,
		prefree: v.Prefree, trimmed: v.Trimmed, segs: map[uint32]*segState{}, lastNo: nullSegno}
	if st, ok := src.(stampedSIT); ok {
		o.src, o.stamp, o.now, o.track = st.SITSource, true, st.now, st.track
	}
	return o
}

func (s *sitOverlay) isCurrent(segno uint32) bool {
	for _, c := range s.current {
		if c == segno {
			return true
		}
	}
	return false
}

func classify(valid int32, current bool) SegClass {
	switch {
	case current:
		return SegCurrent
	case valid <= 0:
		return SegFree
	case valid >= blocksPerSeg:
		return SegFull
	}
	return SegDirty
}

// get returns segment segno's state, loading it on first use. The check of
// the last segment returned is inlined: consecutive blocks mostly share a
// segment.
func (s *sitOverlay) get(segno uint32) (*segState, error) {
	if segno == s.lastNo {
		return s.last, nil
	}
	return s.load(segno)
}

func (s *sitOverlay) load(segno uint32) (*segState, error) {
	st := s.segs[segno]
	if st == nil {
		ent, whole, origValid := gc.Entry{}, false, uint32(0)
		if es, ok := s.src.(entrySource); ok {
			var err error
			if ent, whole, err = es.SITEntry(segno); err != nil {
				return nil, &SourceError{Op: "SegmentValidMap", Index: uint64(segno), Err: err}
			}
			ent.Reload(s.trimmed)
			origValid = ent.Valid()
		}
		if !whole {
			v, bm, err := s.src.SegmentValidMap(segno)
			if err != nil {
				return nil, &SourceError{Op: "SegmentValidMap", Index: uint64(segno), Err: err}
			}
			ent, origValid = gc.ReadEntry(v, bm, s.trimmed), v
		}
		st = &segState{Entry: ent, origValid: origValid, orig: ent.Map(), gen: -1}
		st.class = classify(st.Count(), s.isCurrent(segno))
		if st.class == SegFree && slices.Contains(s.prefree, segno) {
			st.class = SegPrefree
		}
		st.origClass = st.class
		s.segs[segno] = st
	}
	s.lastNo, s.last = segno, st
	return st, nil
}

// reread takes segment segno's entry from the segment manager sm, which changed it (an allocation
// the engine asked it for): the overlay keeps no count or map of its own making.
func (s *sitOverlay) reread(segno uint32, sm *gc.State) error {
	st, err := s.get(segno)
	if err != nil {
		return err
	}
	ent, _, err := sm.SITEntry(segno)
	if err != nil {
		return &SourceError{Op: "SegmentValidMap", Index: uint64(segno), Err: err}
	}
	s.modify(segno, st)
	st.Entry = ent
	return nil
}

// modify journals st's state before its first change in this generation.
// The checks are inlined; the rare work is not (it would give every caller
// a frame holding a segState copy).
func (s *sitOverlay) modify(segno uint32, st *segState) {
	if (s.journal && st.gen != s.gen) || !st.touched {
		s.firstChange(segno, st)
	}
}

//go:noinline
func (s *sitOverlay) firstChange(segno uint32, st *segState) {
	if s.journal && st.gen != s.gen {
		s.log = append(s.log, sitUndo{segno: segno, gen: st.gen, class: st.class,
			touched: st.touched, entry: st.Entry})
		st.gen = s.gen
	}
	if !st.touched {
		st.touched = true
		s.touched = append(s.touched, segno)
	}
}

func (s *sitOverlay) undo(logLen, touchedLen int) {
	for i := len(s.log) - 1; i >= logLen; i-- {
		u := &s.log[i]
		st := s.segs[u.segno]
		st.Entry, st.gen, st.class, st.touched = u.entry, u.gen, u.class, u.touched
	}
	s.log = s.log[:logLen]
	s.touched = s.touched[:touchedLen]
}

// SegmentValidMap makes a frozen overlay a SITSource for the next request.
func (s *sitOverlay) SegmentValidMap(segno uint32) (uint32, [64]byte, error) {
	if st := s.segs[segno]; st != nil {
		return st.Valid(), st.Map(), nil
	}
	return s.src.SegmentValidMap(segno)
}

// SITEntry makes a frozen overlay an entrySource for the next request: the entry of a segment it
// holds, else its source's.
func (s *sitOverlay) SITEntry(segno uint32) (gc.Entry, bool, error) {
	if st := s.segs[segno]; st != nil {
		if es, ok := s.src.(entrySource); ok {
			if _, whole, err := es.SITEntry(segno); err != nil || !whole {
				return gc.Entry{}, false, err
			}
			return st.Entry, true, nil
		}
		return gc.Entry{}, false, nil
	}
	if es, ok := s.src.(entrySource); ok {
		return es.SITEntry(segno)
	}
	return gc.Entry{}, false, nil
}

func (s *sitOverlay) frozen() *sitOverlay {
	f := &sitOverlay{src: s.src, mainSeg: s.mainSeg, current: s.current, prefree: s.prefree, trimmed: s.trimmed,
		segs: make(map[uint32]*segState, len(s.segs)), lastNo: nullSegno, stamps: s.stamps}
	for k, st := range s.segs {
		c := *st
		f.segs[k] = &c
	}
	return f
}

// prefreeNow lists the touched segments that are prefree now.
func (s *sitOverlay) prefreeNow() []uint32 {
	var out []uint32
	for _, no := range s.touched {
		if s.segs[no].class == SegPrefree {
			out = append(out, no)
		}
	}
	return out
}

// UnmarshalText is the inverse of [SegClass.MarshalText].
func (c *SegClass) UnmarshalText(b []byte) error {
	i, err := unmarshalName("segment class", segClassNames[:], b)
	*c = SegClass(i)
	return err
}

// NodeAddr makes an overlay a [NodeAddrSource] for the next request: a node it allocated is at
// NEW_ADDR until written (f2fs_new_node_page), a node it freed does not exist, a node written
// out of place since it was dirtied is refused; anything else is the base's answer.
func (o *slotOverlay) NodeAddr(index uint64, level int) (uint32, bool, error) {
	pos := locate(index, o.geom)
	if level < 0 || level >= pos.depth {
		return 0, false, fmt.Errorf("%w: node level %d of block index %d (%d levels)", ErrInput, level, index, pos.depth)
	}
	k := pos.path[level]
	if o.moved[k] {
		return 0, false, errUnmodelled("where node " + k.String() + " went: it was dirtied, then written out of place by a checkpoint or an fsync (f2fs_write_node_pages / f2fs_fsync_node_pages), which the model does not place")
	}
	if v, ok := o.alloc[k]; ok {
		if v {
			return NewAddr, true, nil
		}
		return 0, false, nil
	}
	src, ok := o.base.(NodeAddrSource)
	if !ok {
		return 0, false, errUnmodelled("the block address of node " + k.String() + ": the slot source gives no node addresses")
	}
	return src.NodeAddr(index, level)
}

// dirtyNodes lists the nodes the overlay's changes dirtied, those of its base overlays too: every
// dnode whose slots it changed, every node it allocated or freed, and the parent that points at
// such a node (set_nid). The inode is left out: it is never freed.
func (o *slotOverlay) dirtyNodes(dnodesOnly bool) []nodeKey {
	var out []nodeKey
	add := func(k nodeKey) {
		if k.top >= 0 && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	for cur := o; cur != nil; {
		for start := range cur.recs {
			if p := locate(start, cur.geom); p.depth > 0 {
				add(p.path[p.depth-1])
			}
		}
		for k := range cur.alloc {
			if dnodesOnly && !k.isDnode() {
				continue
			}
			add(k)
			if !dnodesOnly {
				if p, ok := k.parent(); ok {
					add(p)
				}
			}
		}
		cur, _ = cur.base.(*slotOverlay)
	}
	return out
}

// withMoved returns a copy of o whose nodes in moved have unknown addresses.
func (o *slotOverlay) withMoved(moved []nodeKey) *slotOverlay {
	f := o.frozen()
	if f.moved == nil {
		f.moved = map[nodeKey]bool{}
	}
	for _, k := range moved {
		f.moved[k] = true
	}
	return f
}

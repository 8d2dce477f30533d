package core

import (
	"fmt"
	"slices"

	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/internal/f2fs"
)

// The segment manager of a sequence. Package gc models what the kernel's segment manager keeps in
// memory for a whole volume (every segment's SIT entry with its mtime, the six logs, the dirty,
// prefree and free maps, victim selection) and owns the SIT: gc.Entry (gc/sit.go) is the only
// writer of a valid count, map or mtime. A Seq mounted with [Seq.MountGC] keeps no SIT of its own:
// the gc.State is its SIT source, each walk reads its entries from it and stamps them with its clock
// ([Seq.stamped]), and [Seq.feedEnd] hands the changed entries back (gc.State.Adopt); a write-back
// allocates on it (gc.State.Alloc) and reads the entries back. A checkpoint or a garbage collection
// runs on the gc.State, and core then takes a snapshot of it as the next walk's source and moves the
// data slots of the files whose blocks moved. gc knows nothing of core: the data it moves is named
// by block, and the Seq finds each block's owner through [Owners].

// Owners finds, on the image a sequence started from, the file whose data slot holds a block, and
// a file's input by inode number. source.Owners implements it with the image's summary blocks.
type Owners interface {
	// Owner returns the inode and file block index whose slot holds data block addr on the image
	// (ok false: none does).
	Owner(addr uint32) (ino uint32, index uint64, ok bool, err error)
	// File returns the input for inode ino as the image holds it.
	File(ino uint32) (Input, error)
}

type blockOwner struct {
	ino   uint32
	index uint64
}

// MountGC mounts the volume for the sequence: vol and sit are the image's volume and SIT (as a
// file's Input has them), v what the segment manager reads at mount (source.GCVolume), o the
// image's block owners. From then on the sequence runs checkpoint and gc operations
// ([Seq.Checkpoint], [Seq.GC]), also before any file is named, and the garbage collection
// f2fs_balance_fs runs inside an operation when the volume is short of free sections. It must be
// called before the first operation.
func (q *Seq) MountGC(vol Volume, sit SITSource, v gc.Volume, o Owners) error {
	if q.vol != nil {
		return fmt.Errorf("%w: MountGC after the first operation", ErrInput)
	}
	if sit == nil || o == nil {
		return fmt.Errorf("%w: MountGC without a SIT or block owners", ErrInput)
	}
	s, err := gc.Mount(v)
	if err != nil {
		return err
	}
	if s.Segments() != vol.MainSegments {
		return fmt.Errorf("%w: the segment manager has %d main segments, the volume %d", ErrInput, s.Segments(), vol.MainSegments)
	}
	q.sm, q.owners, q.placed = s, o, map[uint32]blockOwner{}
	main := vol.MainBlkaddr
	if v.PostReadFiles {
		s.PostRead = func(b gc.Block) (bool, error) { return q.postRead(f2fs.SegBlock(main, b.Segno) + b.Blkoff) }
	}
	s.NodeOf = func(b gc.Block) (uint32, uint64, bool) { return q.nodeOf(f2fs.SegBlock(main, b.Segno) + b.Blkoff) }
	q.tune(&vol)
	// From the mount on the segment manager is the sequence's SIT: every walk reads its entries
	// from it (a snapshot, so a result keeps what it saw) and hands back what it changed.
	q.vol = &Input{Volume: vol, SIT: sitSnapshot(s)}
	return nil
}

// nodeOf names the node page holding data block addr's slot: its file's inode number and the
// first file block index of the dnode (locate); ok false when the owner is not known.
func (q *Seq) nodeOf(addr uint32) (uint32, uint64, bool) {
	o, ok := q.placed[addr]
	if !ok {
		ino, idx, found, err := q.owners.Owner(addr)
		if err != nil || !found {
			return 0, 0, false
		}
		o = blockOwner{ino, idx}
	}
	in, err := q.inodeOf(o.ino)
	if err != nil {
		return 0, 0, false
	}
	return o.ino, in.DnodeStart(o.index), true
}

// inodeOf returns inode ino as the sequence has it: its own when an operation opened the file,
// else the image's (read through the owners, the last one kept).
func (q *Seq) inodeOf(ino uint32) (*Inode, error) {
	if f, ok := q.files[ino]; ok {
		return &f.Inode, nil
	}
	if c := &q.ownerInode; c.inode != nil && c.ino == ino {
		return c.inode, nil
	}
	f, err := q.owners.File(ino)
	if err != nil {
		return nil, err
	}
	q.ownerInode.ino, q.ownerInode.inode = ino, &f.Inode
	return &f.Inode, nil
}

// postRead is f2fs_post_read_required for the file that owns data block addr now: compressed,
// encrypted (FADVISE_ENCRYPT_BIT) or verity (F2FS_VERITY_FL).
func (q *Seq) postRead(addr uint32) (bool, error) {
	o, ok := q.placed[addr]
	if !ok {
		ino, idx, found, err := q.owners.Owner(addr)
		if err != nil {
			return false, err
		}
		if !found {
			return false, fmt.Errorf("no file's slot holds block %d", addr)
		}
		o = blockOwner{ino, idx}
	}
	in, err := q.inodeOf(o.ino)
	if err != nil {
		return false, err
	}
	return in.Flags&(FlagCompressed|FlagVerity) != 0 || in.Advise&AdviseEncrypt != 0, nil
}

// SetNow sets the clock: the seconds since mount that update_segment_mtime and cost-benefit read
// from here on (0 at mount). Without a segment manager it does nothing.
func (q *Seq) SetNow(secs uint64) {
	q.balance = nil // an operation of its own (now SECONDS): no collection ran in it
	if q.sm != nil {
		q.sm.Now = secs
	}
}

// TrackMtimes has the segment manager record the mtime updates of the operations from here on, so
// the state they leave can be had at another clock ([gc.State.AtClock]); nothing without
// [Seq.MountGC].
func (q *Seq) TrackMtimes() {
	if q.sm != nil {
		q.sm.TrackMtimes()
	}
}

// GCState returns a copy of the segment manager as the operations so far left it (nil without
// [Seq.MountGC]).
func (q *Seq) GCState() *gc.State {
	if q.sm == nil {
		return nil
	}
	return q.sm.Clone()
}

// BalanceGC is the garbage collection f2fs_balance_fs ran inside the last operation (nil: none
// ran, the volume had enough free sections or no segment manager is mounted).
func (q *Seq) BalanceGC() *gc.Pick { return q.balance }

// ErrNoSegmentManager is returned by checkpoint and gc operations on a Seq without [Seq.MountGC].
var ErrNoSegmentManager = fmt.Errorf("%w: checkpoint and gc need the whole SIT (Seq.MountGC)", ErrUnmodelled)

// Checkpoint is F2FS_IOC_WRITE_CHECKPOINT: f2fs_write_checkpoint, which writes the node blocks
// background gc marked (block_operations) and frees the prefree segments. Dirty data pages stay
// dirty.
func (q *Seq) Checkpoint() (*WriteResult, error) {
	q.started = true
	if q.sm == nil {
		return nil, ErrNoSegmentManager
	}
	q.balance = nil
	res := &WriteResult{Op: "checkpoint", Pages: []PageWrite{}, Checkpoint: true}
	q.nodesWritten(0, true)
	if err := q.setDirty(); err != nil {
		return nil, err
	}
	freed, moves := q.sm.Checkpoint()
	if err := q.applyMoves(moves); err != nil {
		return nil, err
	}
	q.dirtyClean() // the checkpoint writes every dirty node, dentry and inode page
	if err := q.metaCheckpoint(); err != nil {
		return nil, err
	}
	if err := q.ssrCheck(); err != nil {
		return nil, err
	}
	res.Freed = append([]uint32{}, freed...)
	res.Moved = len(moves)
	return res, nil
}

// GC is F2FS_IOC_GARBAGE_COLLECT with sync = 1 (foreground: greedy, the victim's blocks moved
// within the call) or 0 (background: cost-benefit, the victim's blocks marked; they move at the
// next sync or checkpoint). The result's GC holds the pick.
func (q *Seq) GC(sync int) (*WriteResult, error) {
	q.started = true
	if q.sm == nil {
		return nil, ErrNoSegmentManager
	}
	q.balance = nil
	if q.vol.Volume.CheckpointError {
		e := "EIO"
		return &WriteResult{Op: "gc", Errno: e, Pages: []PageWrite{}, GC: &gc.Pick{Op: "gc", Errno: &e, Candidates: []gc.Candidate{}}}, nil
	}
	kind := gc.Background
	if sync == 1 {
		kind = gc.Foreground
		// A foreground gc may end in a checkpoint (f2fs_gc → f2fs_write_checkpoint), which
		// writes the dirty nodes where the model does not follow them.
		q.nodesWritten(0, true)
	}
	if err := q.setDirty(); err != nil {
		return nil, err
	}
	before := len(q.sm.Pending())
	p := q.sm.GC(kind)
	if err := q.applyMoves(p.Moves); err != nil {
		return nil, err
	}
	q.gcDirty(p)
	if len(q.sm.Pending()) != before {
		// The pages a background call marked are dirtied (set_page_dirty): their files join
		// the dirty inode list, in the order they were marked.
		ms, err := q.marked()
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			q.dirtied(m.owner.ino)
		}
	}
	if len(p.Checkpoints) > 0 {
		// f2fs_gc checkpointed inside the call (§14.3), perhaps after moves that dirtied their
		// owners' nodes: every dirty node was written.
		q.nodesWritten(0, true)
		if err := q.metaCheckpoint(); err != nil {
			return nil, err
		}
	}
	if err := q.ssrCheck(); err != nil {
		return nil, err
	}
	res := &WriteResult{Op: "gc", Pages: []PageWrite{}, GC: &p, Moved: p.Moved}
	if p.Errno != nil {
		res.Errno = *p.Errno
	}
	return res, nil
}

// stamped gives an operation's walk its SIT source in a mounted sequence: the sequence's, whose
// entries the segment manager holds, stamped with the manager's clock (update_segment_mtime). Without
// a segment manager the source is left as it is.
func (q *Seq) stamped(in Input) Input {
	if q.sm != nil {
		in.SIT = stampedSIT{SITSource: in.SIT, now: q.sm.MtimeNow(), track: q.sm.Tracking()}
	}
	return in
}

// notePages records who owns each block writeback wrote out of place (the segment manager
// allocated it: [engine.allocSM]).
func (q *Seq) notePages(v *Volume, ino uint32, pages []PageWrite) {
	if q.sm == nil {
		return
	}
	for _, p := range pages {
		if p.How != WroteOutPlace {
			continue
		}
		if isBlock(p.Old) {
			delete(q.placed, p.Old)
		}
		q.placed[p.New] = blockOwner{ino, p.Index}
	}
}

func blockOf(v *Volume, a uint32) gc.Block {
	return gc.Block{Segno: f2fs.SegNo(a, v.MainBlkaddr), Blkoff: f2fs.SegOff(a, v.MainBlkaddr)}
}

// feedEnd hands the segment manager what an operation left: the entries of the segments it
// touched (read from the manager, changed by the walk's f2fs_invalidate_blocks pieces, each stamped
// with the manager's clock when stamped, or by an inline conversion's block; gc.State.Adopt takes
// them and places each segment in its lists), then a log core moved (a data log's next block, past a
// block the operation wrote itself). The entries are the manager's own: the manager replays nothing.
func (q *Seq) feedEnd(touched []uint32, stamped bool) error {
	if q.sm == nil || q.vol == nil {
		return nil
	}
	if o, ok := q.vol.SIT.(*sitOverlay); ok && stamped {
		q.sm.RecordStamps(o.stamps) // a tracked manager learns the walk's mtime updates (gc/clock.go)
	}
	es, ok := q.vol.SIT.(entrySource)
	for _, no := range touched {
		var ent gc.Entry
		whole := false
		if ok {
			var err error
			if ent, whole, err = es.SITEntry(no); err != nil {
				return err
			}
		}
		if !whole {
			return fmt.Errorf("%w: segment %d: the sequence's SIT is not its segment manager's", ErrInput, no)
		}
		if err := q.sm.Adopt(no, ent, stamped); err != nil {
			return err
		}
	}
	v := &q.vol.Volume
	cur := q.sm.Current()
	for log, c := range [3]gc.CurSeg{{Segno: v.HotDataSegno, Blkoff: v.HotDataBlkoff},
		{Segno: v.WarmDataSegno, Blkoff: v.WarmDataBlkoff}, {Segno: v.ColdDataSegno, Blkoff: v.ColdDataBlkoff}} {
		if cur[log] != c {
			if err := q.ssrOpen(log, cur[log].Segno, c.Segno); err != nil {
				return err
			}
			if err := q.sm.SetCurrent(log, c); err != nil {
				return err
			}
		}
	}
	// The segment manager's next blocks are the kernel's (an SSR log's skips the blocks it cannot
	// take): the volume's logs follow them.
	cur = q.sm.Current()
	v.HotDataBlkoff, v.WarmDataBlkoff, v.ColdDataBlkoff = cur[gc.HotData].Blkoff, cur[gc.WarmData].Blkoff, cur[gc.ColdData].Blkoff
	return nil
}

// ssrCheck refuses an operation in which the segment manager opened a log's segment where the
// kernel may have taken SSR instead (gc/ssr.go): the answer would be a guess.
func (q *Seq) ssrCheck() error {
	if why := q.sm.Unmodelled(); why != "" {
		return fmt.Errorf("%w: %s", ErrUnmodelled, why)
	}
	return nil
}

// ssrOpen refuses an operation in which core's allocator moved a data log from segment old to
// segment now (new_curseg) where the kernel may have taken SSR instead (need_new_seg,
// gc.State.MaySSR), except when now is the next segment of old's section (is_next_segment_free:
// the kernel opens it whatever f2fs_need_SSR says).
func (q *Seq) ssrOpen(log int, old, now uint32) error {
	if old == now {
		return nil
	}
	if per := max(q.vol.Volume.SegsPerSec, 1); now == old+1 && now%per != 0 {
		return nil
	}
	if may, why := q.sm.MaySSR(log, q.dirtyState()); may {
		return fmt.Errorf("%w: %s", ErrUnmodelled, why)
	}
	return nil
}

// gcDirty follows the dirty page counters through a collection: each data block moved dirtied its
// dnode (f2fs_update_data_blkaddr: applyMoves marks the file, the segment manager counts the
// distinct pages, gc.State.GCDirtied) and perhaps put its inode on the meta list; a checkpoint
// inside the collection wrote what was dirty before it, and the model does not know which moves
// came after it, so the low ends of the counts are lost until the next checkpoint.
func (q *Seq) gcDirty(p gc.Pick) {
	if len(p.Checkpoints) > 0 {
		q.dirtyUnsure = true
	}
}

// balanceFS is f2fs_balance_fs at the end of an operation that may allocate (a zero's dnode
// loop, a write's reservation, writeback): when the volume is short of free sections, the
// garbage collection of [gc.State.Balance], its moves taken into the files. chunks is how many
// balance points the operation had: the kernel collects at the first of them, the model at the
// end, which is the same only when nothing the operation did after the first changed the SIT; a
// collection that moved blocks in an operation of several is refused as not modelled.
func (q *Seq) balanceFS(chunks uint64) error {
	if q.sm == nil || q.vol == nil || q.vol.Volume.CheckpointError || !q.sm.ShortOfSpace() {
		return nil
	}
	if err := q.setDirty(); err != nil {
		return err
	}
	p, _ := q.sm.Balance()
	if err := q.ssrCheck(); err != nil {
		return err
	}
	if len(p.Moves) > 0 && chunks > 1 {
		return fmt.Errorf("%w: f2fs_balance_fs collected garbage after the first of %d dnode chunks or pages; the model collects after the last", ErrUnmodelled, chunks)
	}
	if err := q.applyMoves(p.Moves); err != nil {
		return err
	}
	q.gcDirty(p)
	if len(p.Checkpoints) > 0 {
		q.nodesWritten(0, true) // the collection's checkpoint wrote every dirty node
		if err := q.metaCheckpoint(); err != nil {
			return err
		}
	}
	q.balance = &p
	return nil
}

// applyMoves takes the segment manager's SIT and logs back after it moved blocks or freed
// segments, and moves the data slots of the blocks it moved: each owner's slot gets the new
// address (a page moved by foreground gc's move_data_page is written, so no longer dirty; one
// move_data_block moved stays dirty).
func (q *Seq) applyMoves(moves []gc.Move) error {
	if q.vol == nil {
		return nil
	}
	v := &q.vol.Volume
	type slotMove struct {
		index    uint64
		from, to uint32
	}
	byIno := map[uint32][]slotMove{}
	var inos []uint32
	var touched []uint32
	for _, m := range moves {
		touched = append(touched, m.From.Segno, m.To.Segno)
		if m.Log > gc.ColdData {
			q.nodesMoved = true // a node block: no data slot names it, and truncate cannot find it
			continue
		}
		from := f2fs.SegBlock(v.MainBlkaddr, m.From.Segno) + m.From.Blkoff
		to := f2fs.SegBlock(v.MainBlkaddr, m.To.Segno) + m.To.Blkoff
		o, ok := q.placed[from]
		if ok {
			delete(q.placed, from)
		} else {
			ino, idx, found, err := q.owners.Owner(from)
			if err != nil {
				return err
			}
			if !found {
				return fmt.Errorf("%w: gc moved block %d, which no file's slot holds", ErrUnmodelled, from)
			}
			o = blockOwner{ino, idx}
		}
		q.placed[to] = o
		if _, seen := byIno[o.ino]; !seen {
			inos = append(inos, o.ino)
		}
		byIno[o.ino] = append(byIno[o.ino], slotMove{o.index, from, to})
	}
	q.rebase()
	if q.sm.CheckpointError() {
		q.vol.Volume.CheckpointError = true // a log found no free segment: f2fs_stop_checkpoint
	}
	for _, ino := range inos {
		f, ok := q.files[ino]
		if !ok {
			g, err := q.owners.File(ino)
			if err != nil {
				return err
			}
			f = g
		}
		in := q.vol.WithFile(f)
		e, err := newEngine(in, Request{}, PerBlock)
		if err != nil {
			return err
		}
		dirty := in.Inode.Dirty
		// move_data_block (a post-read file: compressed, encrypted, verity) copies the block
		// through the meta mapping and leaves the file's cached page as it was: a dirty page —
		// a compressed cluster f2fs_truncate_partial_cluster dirtied — stays dirty (x14).
		postRead := in.Inode.Flags&(FlagCompressed|FlagVerity) != 0 || in.Inode.Advise&AdviseEncrypt != 0
		for _, m := range byIno[ino] {
			pos, buf, _, err := e.slots.read(m.index, e.fbuf)
			e.fbuf = buf
			if err != nil {
				return err
			}
			if buf[pos.ofs] != m.from {
				return fmt.Errorf("%w: gc moved block %d of inode %d, but its slot %d holds %d", ErrUnmodelled, m.from, ino, m.index, buf[pos.ofs])
			}
			buf[pos.ofs] = m.to
			e.slots.store(pos.start, buf)
			if k, found := slices.BinarySearch(dirty, m.index); found && !postRead {
				dirty = slices.Delete(slices.Clone(dirty), k, k+1)
			}
		}
		next := e.nextInput()
		next.Inode.Dirty = dirty
		if len(dirty) == 0 {
			next.Inode.Dirty = nil
		}
		q.files[ino] = next
		// Each moved block updates the file's extents (f2fs_update_data_blkaddr).
		var pws []PageWrite
		for _, m := range byIno[ino] {
			pws = append(pws, PageWrite{Index: m.index, How: WroteOutPlace, Old: m.from, New: m.to})
		}
		if err := q.metaPages(q.vol.WithFile(next), pws); err != nil {
			return err
		}
		// move_data_page dirties the page it moves (set_page_dirty: I_DIRTY_PAGES), so the file
		// joins the dirty inode list here if it was clean, in the order of the moves.
		q.dirtied(ino)
		q.nodesDirtied(ino, true) // f2fs_update_data_blkaddr on the file's dnode
		q.nodesByOthers = true
	}
	for _, no := range touched {
		if !slices.Contains(q.touched, no) {
			q.touched = append(q.touched, no)
		}
	}
	return nil
}

// rebase makes the segment manager the sequence's SIT source, its logs the volume's current
// segments and its prefree segments the volume's.
func (q *Seq) rebase() {
	s := sitSnapshot(q.sm)
	v := &q.vol.Volume
	cur := s.Current()
	v.CurrentSegments = make([]uint32, 0, gc.NumLogs)
	for _, c := range cur {
		v.CurrentSegments = append(v.CurrentSegments, c.Segno)
	}
	v.HotDataSegno, v.HotDataBlkoff = cur[gc.HotData].Segno, cur[gc.HotData].Blkoff
	v.WarmDataSegno, v.WarmDataBlkoff = cur[gc.WarmData].Segno, cur[gc.WarmData].Blkoff
	v.ColdDataSegno, v.ColdDataBlkoff = cur[gc.ColdData].Segno, cur[gc.ColdData].Blkoff
	v.Prefree = s.PrefreeSegments()
	q.vol.SIT = s
}

// markedPage is a data block background gc marked (move_data_page, gc.c:1518: set_page_dirty and
// set_page_private_gcing) and its owner's page.
type markedPage struct {
	block gc.Block
	owner blockOwner
}

// marked lists the data blocks background gc marked that have not moved yet, with their owners,
// in the order they were marked.
func (q *Seq) marked() ([]markedPage, error) {
	if q.sm == nil || q.vol == nil {
		return nil, nil
	}
	var out []markedPage
	main := q.vol.Volume.MainBlkaddr
	for _, b := range q.sm.Pending() {
		se := q.sm.Segment(b.Segno)
		if se.Type > gc.ColdData || se.Map[b.Blkoff/8]&(0x80>>(b.Blkoff%8)) == 0 {
			continue // a node block (moved at a checkpoint), or no longer valid
		}
		addr := f2fs.SegBlock(main, b.Segno) + b.Blkoff
		o, ok := q.placed[addr]
		if !ok {
			ino, idx, found, err := q.owners.Owner(addr)
			if err != nil {
				return nil, err
			}
			if !found {
				return nil, fmt.Errorf("%w: background gc marked block %d, which no file's slot holds", ErrUnmodelled, addr)
			}
			o = blockOwner{ino, idx}
		}
		out = append(out, markedPage{b, o})
	}
	return out, nil
}

// markedOf lists the pages of file ino whose blocks background gc marked and that have not moved,
// in index order: dirty pages of the file (gc.c:1518), which any writeback of it writes with its
// others — out of place (f2fs_should_update_outplace, data.c:2687) to the cold data log
// (__get_segment_type_6, segment.c:3581) — and counts for FI_HOT_DATA (data.c:3082).
func (q *Seq) markedOf(ino uint32) ([]uint64, error) {
	ms, err := q.marked()
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, m := range ms {
		if m.owner.ino == ino {
			out = append(out, m.owner.index)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// sitSnapshot is a copy of the segment manager to serve as a walk's SIT source, without its
// callbacks (NodeOf, PostRead): a walk reads entries and runs no collection, and the callbacks
// reach the whole sequence (its placed-block map, 45 bytes a block written), which an input kept
// by a caller (web's resolved cache) would otherwise retain uncharged.
func sitSnapshot(s *gc.State) *gc.State {
	c := s.Clone()
	c.NodeOf, c.PostRead = nil, nil
	return c
}

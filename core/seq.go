package core

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/zrviz/zrviz/gc"
)

// Seq is one mount over a sequence of operations in one mode, as the kernel runs them: the volume
// (counters, SIT, current segments, ipu_policy) as the last operation left it, every file an
// operation touched as it was left, with its dirty pages, and the order the files were dirtied
// (the order writeback takes them). Zero writes back the dirty pages of its range first
// (filemap_write_and_wait_range), Write dirties pages, Fsync and Sync write them back, Unmount
// writes back everything and checkpoints: the state an image shows afterwards.
//
// A Seq holds no image: the caller resolves each path and passes the reader's Input for the file;
// Seq substitutes its own copy of a file it has seen.
type Seq struct {
	// ctx bounds the long loops of every operation (a walk, a writeback, a write's reservations,
	// garbage collection's look-ups): a mount is one caller's, for as long as it waits. The result
	// does not depend on it otherwise.
	ctx   context.Context
	mode  Mode
	vol   *Input           // after the last operation; nil before the first
	files map[uint32]Input // by inode number
	// order is the mount's dirty inode list (the bdi's b_dirty): the files an operation dirtied
	// since the last sync, in the order they first were, the order sync's writeback takes them.
	// A file joins when __mark_inode_dirty first finds it clean — its pages dirtied, or its inode
	// (f2fs_mark_inode_dirty_sync: a zero, punch or truncate that ran, a write, a gc move) — and
	// keeps its place until the flusher cleans it (__writeback_single_inode, at a sync): writing
	// its pages back in a zero's filemap_write_and_wait_range, an fsync or a gc move clears no
	// VFS dirty state (kernel-seq w3, w5, w6).
	order []uint32
	// meta, metaOrder, metaLate, uncertain and largest follow f2fs's dirty inode-meta list and
	// what checkpoints do to order (inodemeta.go).
	meta      map[uint32]bool
	metaOrder []uint32
	metaLate  []uint32
	uncertain map[uint32]bool
	largest   map[uint32]largestExt
	// Touched lists every segment an operation changed, in first-touch order.
	touched []uint32
	ipu     *uint32 // ipu_policy as tuned
	rsv     *uint64 // reserved_blocks written and not yet applied (before the first operation)

	// The segment manager (gcseq.go): nil unless MountGC was called.
	sm     *gc.State
	owners Owners
	// ownerInode is the last inode read through owners for a file the sequence has not opened:
	// a gc moves a victim's blocks file by file, so one entry spares a re-read for nearly every
	// block (the image's inode does not change under a sequence that has not opened the file).
	ownerInode struct {
		ino   uint32
		inode *Inode
	}
	placed  map[uint32]blockOwner // blocks the sequence wrote or moved, and their owners
	balance *gc.Pick              // f2fs_balance_fs's collection in the last operation
	// nodesMoved: garbage collection or a checkpoint moved node blocks (unknownNodes).
	nodesMoved bool
	// lfs is mode=lfs ([Seq.Mount]); started: an operation other than Mount ran.
	lfs, started bool
	// unlinked are the files an unlink removed: an operation naming one again is refused.
	// inodesWritten are the files whose inode block a checkpoint or an fsync may have written
	// out of place since the mount (nodesWritten): its address is then not known.
	unlinked, inodesWritten map[uint32]bool
	// dirtyMeta bounds the node and inode pages the operations dirtied since the last
	// checkpoint: every direct node whose slots an operation may have changed (a walk's dnode
	// chunks, the dnodes a write's or a write-back's pages lie in), each node allocated or freed
	// with its parent, and each file's inode per operation on it. It bounds f2fs_need_SSR's dirty
	// node and inode-meta counts, which the model does not otherwise track (metaSecs).
	dirtyMeta uint64
	// nodeDirty, imetaExtra, dirtyUnsure and dents follow the kernel's dirty node, inode-meta and
	// dentry page counters (dirtymeta.go).
	nodeDirty   map[uint32]int8
	imetaExtra  uint64
	dirtyUnsure bool
	dents       uint64
	// syncInodes are the inodes the running sync's writeback found dirty (f2fs_write_inode writes
	// each into its node page before the checkpoint); timesDirty the files whose inode a write
	// certainly dirtied (file_update_time: I_DIRTY_SYNC); inodeAt the inode blocks the model placed
	// (syncInodePages).
	syncInodes []uint32
	timesDirty map[uint32]bool
	inodeAt    map[uint32]uint32
	// beyondInode: files whose dirty node pages may include others than the inode page (a dnode,
	// an indirect node): their node writes are not placed (syncInodePages).
	beyondInode map[uint32]bool
	// nodesByOthers: since the last checkpoint a node page was dirtied other than by a buffered
	// write's reservations (a zero, punch or truncate, a write-back, gc): the node inode may then
	// be ahead of a file on the dirty inode list, and sync's writeback order is not followed.
	nodesByOthers bool
}

// NewSeq starts a mount whose zero-range walks run in mode.
func NewSeq(mode Mode) *Seq {
	return &Seq{ctx: context.Background(), mode: mode, files: map[uint32]Input{}}
}

// SetContext bounds the operations from here on by ctx: once it is done they stop with its error.
func (q *Seq) SetContext(ctx context.Context) { q.ctx = ctx }

// File is the input for an operation on f (the reader's input for the file): the file as the
// operations so far left it, on the volume as they left it.
func (q *Seq) File(f Input) Input {
	q.started = true
	if q.vol == nil {
		q.tune(&f.Volume)
		f.Volume.LFS = f.Volume.LFS || q.lfs
		q.vol = &f
		return f
	}
	if g, ok := q.files[f.Inode.Ino]; ok {
		if g.Path == "" {
			// Known by its inode only (garbage collection moved its blocks: Owners.File): the
			// caller's path names it from here on ("path": "" was a zero after a gc).
			g.Path = f.Path
		}
		f = g
	}
	if q.nodesMoved || q.inodesWritten[f.Inode.Ino] {
		// The inode block was written out of place (f2fs_write_node_page) where the model does
		// not follow it: its address is not known (an unlink, which frees it, is refused).
		f.Inode.Blkaddr = 0
	}
	return q.vol.WithFile(f)
}

// done records the state an operation left.
func (q *Seq) done(next Input, touched []uint32) {
	q.vol = &next
	q.files[next.Inode.Ino] = next
	if len(next.Inode.Dirty) > 0 {
		q.dirtied(next.Inode.Ino) // I_DIRTY_PAGES
	}
	for _, no := range touched {
		if !slices.Contains(q.touched, no) {
			q.touched = append(q.touched, no)
		}
	}
}

// dirtied puts file ino at the end of the dirty inode list unless it is on it: __mark_inode_dirty
// (fs/fs-writeback.c) sets dirtied_when and moves the inode to b_dirty only when it was clean, and
// sync's writeback (wb_writeback → queue_io → move_expired_inodes) takes the oldest first.
func (q *Seq) dirtied(ino uint32) {
	if !slices.Contains(q.order, ino) {
		q.order = append(q.order, ino)
	}
}

// Touched lists the segments the sequence has changed so far, in first-touch order.
func (q *Seq) Touched() []uint32 { return slices.Clone(q.touched) }

// State is the volume and every file as the operations so far left them (nil files before any).
func (q *Seq) State() (Input, []Input, bool) {
	if q.vol == nil {
		return Input{}, nil, false
	}
	var files []Input
	for _, f := range q.files {
		files = append(files, q.vol.WithFile(f))
	}
	slices.SortFunc(files, func(a, b Input) int { return cmp.Compare(a.Inode.Ino, b.Inode.Ino) })
	return *q.vol, files, true
}

// PrepareZero is what f2fs_zero_range does before its page arithmetic for a request on f: when
// the argument checks pass, the dirty pages of the byte range are written back
// (filemap_write_and_wait_range, WB_SYNC_ALL). It returns the input the walk runs on.
func (q *Seq) PrepareZero(f Input, req Request) (Input, []PageWrite, error) {
	if q.unlinked[f.Inode.Ino] {
		return f, nil, errGone
	}
	in := q.File(f)
	e, err := newEngine(in, req, q.mode)
	if err != nil {
		return in, nil, err
	}
	if e.argCheck() != "" {
		return in, nil, nil
	}
	lo, hi := uint64(req.Offset)>>12, uint64(req.Offset+req.Length-1)>>12
	gcing, err := q.markedOf(in.Inode.Ino)
	if err != nil {
		return in, nil, err
	}
	if len(in.Inode.Dirty) == 0 && len(gcing) == 0 {
		return in, nil, nil
	}
	sm := q.wbSM()
	d0, d1, err := q.wbDirty(in, gcing, lo, hi)
	if err != nil {
		return in, nil, err
	}
	next, pages, err := writeback(in, lo, hi, wbMode{ctx: q.ctx, sync: true, sm: sm, dirty: d0, dirtyAfter: d1, gcing: gcing})
	if err != nil {
		return in, nil, err
	}
	if err := q.doneWriteback(next, pages, sm); err != nil {
		return in, nil, err
	}
	// f2fs_zero_post_eof_page (file.c:1714, after the writeback): dirty pages wholly past i_size
	// and below the range's end are dropped, never written; their slots stay as they are.
	if d := dropPostEOF(next.Inode.Dirty, next.Inode.Size, req.Offset+req.Length); len(d) != len(next.Inode.Dirty) {
		next.Inode.Dirty = d
		if len(d) == 0 {
			next.Inode.Dirty = nil
		}
		q.done(next, nil)
	}
	return next, pages, nil
}

// dnodesSpanned bounds the node pages holding the slots of pages lo..hi: the inode and every
// direct node between.
func dnodesSpanned(lo, hi uint64) uint64 {
	if hi < lo {
		return 1
	}
	return (hi-lo)/addrsPerBlock + 2
}

// wbDirty is the dirty page counters for a write-back of in's dirty pages in [lo, hi]
// ([Seq.dirtyWriteback]): before its first page written out of place and after it.
func (q *Seq) wbDirty(in Input, gcing []uint64, lo, hi uint64) (before, after gc.Dirty, err error) {
	var ps []PageWrite
	for _, p := range dirtyPages(in, gcing) {
		if p >= lo && p <= hi {
			ps = append(ps, PageWrite{Index: p, How: WroteOutPlace})
		}
	}
	if q.sm != nil {
		if q.dents, err = q.pendingDents(); err != nil {
			return before, after, err
		}
	}
	before, after = q.dirtyWriteback(in.Inode.Ino, wbDirtied(ps))
	return before, after, nil
}

// wbDirtied bounds the node pages a write-back's out-of-place pages dirtied (each updates its
// slot: f2fs_update_data_blkaddr), and its inode.
func wbDirtied(pages []PageWrite) uint64 {
	var n uint64
	var lo, hi uint64
	for _, p := range pages {
		if p.How != WroteOutPlace {
			continue
		}
		if n == 0 || p.Index < lo {
			lo = p.Index
		}
		if n == 0 || p.Index > hi {
			hi = p.Index
		}
		n++
	}
	if n == 0 {
		return 0
	}
	return min(n+1, dnodesSpanned(lo, hi))
}

// doneWriteback records what a writeback of one file left. sm is the segment manager the
// writeback allocated on ([Seq.wbSM]): it becomes the sequence's (nil: the sequence has none).
func (q *Seq) doneWriteback(next Input, pages []PageWrite, sm *gc.State) error {
	t := touchedOf(next, pages)
	q.done(next, t)
	if err := q.metaPages(next, pages); err != nil {
		return err
	}
	q.dirtyMeta += wbDirtied(pages)
	for _, p := range pages {
		if p.How == WroteOutPlace {
			q.nodesDirtied(next.Inode.Ino, true) // f2fs_update_data_blkaddr
			q.nodesByOthers = true
			if !inInode(next.Inode, p.Index, p.Index) {
				q.nodesBeyond(next.Inode.Ino)
			}
		}
	}
	if sm != nil {
		q.sm = sm
	}
	q.notePages(&next.Volume, next.Inode.Ino, pages)
	return q.feedEnd(t, false)
}

// wbSM is the segment manager a writeback allocates on: a copy of the sequence's (nil without
// one), kept only when the writeback succeeds, so a refused writeback leaves the sequence as it
// was.
func (q *Seq) wbSM() *gc.State {
	if q.sm == nil {
		return nil
	}
	return q.sm.Clone()
}

// SSRVictims lists the victims get_ssr_segment found (f2fs_get_victim in SSR mode) since the
// mount, in order (nil without a segment manager).
func (q *Seq) SSRVictims() []gc.SSRVictim {
	if q.sm == nil {
		return nil
	}
	return q.sm.SSRVictims()
}

// Zero runs fallocate(FALLOC_FL_ZERO_RANGE) on f: PrepareZero, then the walk in the sequence's
// mode. in is the input the walk ran on (what a player replays; ktrace.Check takes it).
func (q *Seq) Zero(f Input, req Request) (res *Result, in Input, pages []PageWrite, err error) {
	q.balance = nil
	in, pages, err = q.PrepareZero(f, req)
	if err != nil {
		return nil, in, nil, err
	}
	in = q.stamped(in)
	res, err = SimulateContext(q.ctx, in, req, q.mode)
	if err != nil {
		return nil, in, nil, err
	}
	segs := make([]uint32, 0, len(res.Segments))
	for _, s := range res.Segments {
		segs = append(segs, s.Segno)
	}
	q.done(res.NextInput(), segs)
	if walkDirtied(res) {
		q.dirtied(in.Inode.Ino)
	}
	q.metaWalk(in, wholePages(req.Offset, req.Offset+req.Length), res)
	q.dirtyMeta += res.Stats.DnodeChunks + 2*res.Stats.NodesAlloc + 1
	q.walkNodes(in.Inode.Ino, res)
	if err := q.feedEnd(segs, true); err != nil {
		return nil, in, nil, err
	}
	// f2fs_zero_range calls f2fs_balance_fs after each dnode chunk, also after one that failed,
	// and the writeback before the walk after each page it wrote (f2fs_write_single_data_page);
	// an operation refused before the loop (argument checks, fill_zero of the first page) has
	// no chunk.
	if points := res.Stats.DnodeChunks + uint64(len(pages)); points > 0 {
		if err := q.balanceFS(points); err != nil {
			return nil, in, nil, err
		}
	}
	return res, in, pages, nil
}

// Write is a buffered write(2) of length bytes at off on f (no fsync): pages reserved and dirtied.
func (q *Seq) Write(f Input, off, length int64) (*WriteResult, error) {
	q.balance = nil
	if q.unlinked[f.Inode.Ino] {
		return nil, errGone
	}
	in := q.File(f)
	next, res, err := bufferedWrite(q.ctx, in, off, length)
	if err != nil {
		return nil, err
	}
	// An inline conversion (f2fs_preallocate_blocks → f2fs_convert_inline_inode) wrote page 0 to
	// the hot data log: its segment, and the one the log moved to, changed.
	var touched []uint32
	if v, w := &in.Volume, &next.Volume; v.HotDataSegno != w.HotDataSegno || v.HotDataBlkoff != w.HotDataBlkoff {
		touched = append(touched, v.HotDataSegno, w.HotDataSegno)
	}
	q.done(next, touched)
	if res.Written > 0 || res.Reserved > 0 || res.SizeAfter != in.Inode.Size {
		q.dirtied(in.Inode.Ino) // f2fs_i_blocks_write, f2fs_i_size_write
	}
	if res.Written > 0 && res.Errno == "" {
		// file_update_time: a new mtime dirties the inode (I_DIRTY_SYNC), which sync's
		// writeback writes into its node page (f2fs_write_inode).
		if q.timesDirty == nil {
			q.timesDirty = map[uint32]bool{}
		}
		q.timesDirty[in.Inode.Ino] = true
	}
	if res.Reserved > 0 || res.SizeAfter != in.Inode.Size {
		q.metaOn(in.Inode.Ino)
	}
	q.dirtyMeta += dnodesSpanned(uint64(off)>>12, uint64(off+max(length, 1)-1)>>12) + 2*res.NodesAlloc + 1
	switch {
	case res.Reserved > 0 || res.NodesAlloc > 0 || len(touched) > 0:
		q.nodesDirtied(in.Inode.Ino, true) // f2fs_reserve_new_blocks, f2fs_new_node_page, the inline conversion
		if res.NodesAlloc > 0 || !inInode(in.Inode, uint64(off)>>12, uint64(off+max(length, 1)-1)>>12) {
			q.nodesBeyond(in.Inode.Ino)
		}
	case res.Errno != "":
		q.nodesDirtied(in.Inode.Ino, false)
		q.nodesBeyond(in.Inode.Ino)
	}
	if err := q.feedEnd(touched, false); err != nil {
		return nil, err
	}
	// f2fs_map_blocks (F2FS_GET_BLOCK_PRE_AIO) calls f2fs_balance_fs after each dnode it reserved in.
	if res.Errno == "" && res.Written > 0 {
		if err := q.balanceFS(1); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Fsync is fsync(2) on f: f2fs_do_sync_file writes the file's dirty pages back (WB_SYNC_ALL),
// under FI_NEED_IPU when it has at most min_fsync_blocks (8) dirty pages. The node writes and
// the roll-forward marks it makes change no data slot or data segment; no checkpoint is modelled
// (need_do_checkpoint is false for a regular file with one link in a checkpointed directory).
func (q *Seq) Fsync(f Input) (*WriteResult, error) {
	q.balance = nil
	if q.unlinked[f.Inode.Ino] {
		return nil, errGone
	}
	in := q.File(f)
	res := &WriteResult{Op: "fsync", Path: in.Path, Pages: []PageWrite{}}
	switch {
	case in.Inode.Type == "symlink":
		res.Errno = "ELOOP"
	case in.Volume.CheckpointError:
		res.Errno = "EIO"
	}
	var gcing []uint64
	if res.Errno == "" {
		var err error
		if gcing, err = q.markedOf(in.Inode.Ino); err != nil {
			return nil, err
		}
		// f2fs_do_sync_file writes the file's dirty dnodes (f2fs_fsync_node_pages) after its
		// data, and perhaps its inode.
		defer q.nodesWritten(in.Inode.Ino, false)
		defer q.metaFsync(in.Inode.Ino)
		defer q.fsyncNodes(in.Inode.Ino)
	}
	all := dirtyPages(in, gcing)
	if res.Errno != "" || len(all) == 0 {
		res.SizeAfter, res.BlocksAfter = in.Inode.Size, in.Inode.Blocks
		return res, nil
	}
	sm := q.wbSM()
	d0, d1, err := q.wbDirty(in, gcing, 0, ^uint64(0))
	if err != nil {
		return nil, err
	}
	next, pages, err := writeback(in, 0, ^uint64(0), wbMode{ctx: q.ctx, sync: true, needIPU: len(all) <= minFsyncBlocks, sm: sm, dirty: d0, dirtyAfter: d1, gcing: gcing})
	if err != nil {
		return nil, err
	}
	res.Pages = append(res.Pages, pages...)
	res.SizeAfter, res.BlocksAfter = next.Inode.Size, next.Inode.Blocks
	if err := q.doneWriteback(next, pages, sm); err != nil {
		return nil, err
	}
	if err := q.balanceFS(uint64(len(pages))); err != nil {
		return nil, err
	}
	return res, nil
}

// Sync is sync(2): every file's dirty pages written back, file by file in the order they were
// dirtied (the flusher's WB_SYNC_NONE pass runs first, so IPU_ASYNC applies), then a checkpoint
// (f2fs_sync_fs): prefree segments become free.
func (q *Seq) Sync() (*WriteResult, error) {
	q.started = true
	q.balance = nil
	res := &WriteResult{Op: "sync", Pages: []PageWrite{}}
	q.syncInodes = slices.Clone(q.order)
	// Sync's own writeback writes a file's pages before its f2fs_write_inode, in the file's turn
	// (__writeback_single_inode): its node page updates keep the order nodesByOthers guards.
	by := q.nodesByOthers
	if err := q.flushAll(res); err != nil {
		return nil, err
	}
	q.nodesByOthers = by
	if err := q.balanceFS(uint64(len(res.Pages))); err != nil {
		return nil, err
	}
	if err := q.checkpoint(res, true); err != nil {
		return nil, err
	}
	return res, nil
}

// Unmount is what a clean umount does to data: Sync's writeback and checkpoint. After it the
// sequence's State is what the image holds.
func (q *Seq) Unmount() (*WriteResult, error) {
	res, err := q.Sync()
	if res != nil {
		res.Op = "unmount"
	}
	return res, err
}

// flushAll is sync's writeback: the dirty inode list, oldest first, each file's dirty pages; the
// flusher leaves every inode clean, so the list starts empty again.
func (q *Seq) flushAll(res *WriteResult) error {
	wrote := map[uint32]map[string]bool{} // per file, the logs it wrote out of place to
	var before []uint32
	if q.vol != nil {
		before = slices.Clone(q.vol.Volume.CurrentSegments)
	}
	// A directory with fewer than a segment's dirty pages is skipped by the flusher's
	// WB_SYNC_NONE pass (__f2fs_write_data_pages: nr_pages_to_skip) and written by sync's
	// WB_SYNC_ALL pass (sync_inodes_sb) after every file.
	order := slices.Clone(q.order)
	if q.sm != nil {
		var files, dirs []uint32
		for _, ino := range order {
			dir, err := q.isDir(ino)
			if err != nil {
				return err
			}
			if dir {
				dirs = append(dirs, ino)
			} else {
				files = append(files, ino)
			}
		}
		order = append(files, dirs...)
	}
	for _, ino := range order {
		gcing, err := q.markedOf(ino)
		if err != nil {
			return err
		}
		f, ok := q.files[ino]
		if !ok && len(gcing) > 0 {
			// Known only by the blocks background gc marked (Owners.File).
			if f, err = q.owners.File(ino); err != nil {
				return err
			}
			ok = true
		}
		if !ok || len(f.Inode.Dirty)+len(gcing) == 0 {
			continue // only the inode is dirty: f2fs_write_inode writes no data block
		}
		in := q.vol.WithFile(f)
		sm := q.wbSM()
		d0, d1, err := q.wbDirty(in, gcing, 0, ^uint64(0))
		if err != nil {
			return err
		}
		next, pages, err := writeback(in, 0, ^uint64(0), wbMode{ctx: q.ctx, sm: sm, dirty: d0, dirtyAfter: d1, gcing: gcing})
		if err != nil {
			return err
		}
		res.Pages = append(res.Pages, pages...)
		for _, p := range pages {
			if p.How == WroteOutPlace {
				if wrote[ino] == nil {
					wrote[ino] = map[string]bool{}
				}
				wrote[ino][p.Log] = true
			}
		}
		if err := q.doneWriteback(next, pages, sm); err != nil {
			return err
		}
	}
	// Refused after the fact: a refused operation ends the sequence.
	if err := q.checkSyncOrder(wrote, q.vol != nil && !slices.Equal(before, q.vol.Volume.CurrentSegments)); err != nil {
		return err
	}
	q.syncDone()
	return nil
}

// checkpoint frees the prefree segments (f2fs_write_checkpoint → f2fs_clear_prefree_segments).
// With a segment manager, a sync's writeback first moves the data blocks background gc marked
// (their pages are dirty), the checkpoint the node blocks.
func (q *Seq) checkpoint(res *WriteResult, sync bool) error {
	res.Checkpoint = true
	if q.vol == nil {
		return nil
	}
	q.nodesWritten(0, true)
	if q.sm == nil {
		q.vol.Volume.Prefree = nil
		return nil
	}
	// A sync's moves of marked data blocks come before its checkpoint writes the dirty nodes;
	// the sync's writeback wrote every dirty inode into its node page (f2fs_write_inode).
	if err := q.setDirty(); err != nil {
		return err
	}
	if sync {
		placed, err := q.syncInodePages()
		if err != nil {
			return err
		}
		if placed {
			q.sm.Dirty = gc.Dirty{} // every dirty node page was an inode page, now written
		} else {
			q.sm.Dirty.Nodes.Max += uint64(len(q.syncInodes))
		}
		q.syncInodes = nil
		q.timesDirty = nil
	}
	var freed []uint32
	var moves []gc.Move
	if sync {
		freed, moves = q.sm.Sync()
	} else {
		freed, moves = q.sm.Checkpoint()
	}
	res.Freed = append(res.Freed, freed...)
	res.Moved += len(moves)
	if err := q.applyMoves(moves); err != nil {
		return err
	}
	q.dirtyClean() // the checkpoint wrote every dirty node, dentry and inode page
	return q.ssrCheck()
}

// Mount sets a mount option the image does not record; only mode=lfs is modelled, and only
// before the first operation (a remount is not).
func (q *Seq) Mount(option string) (*WriteResult, error) {
	q.balance = nil
	if option != "mode=lfs" {
		return nil, fmt.Errorf("%w: mount option %q", ErrUnmodelled, option)
	}
	if q.started {
		return nil, fmt.Errorf("%w: mount %s after the first operation (a remount, f2fs_remount)", ErrUnmodelled, option)
	}
	q.lfs = true
	if q.vol != nil {
		q.vol.Volume.LFS = true
	}
	if q.sm != nil {
		q.sm.LFS = true
	}
	return &WriteResult{Op: "mount", Pages: []PageWrite{}}, nil
}

// Tune writes a sysfs tunable of the mount (/sys/fs/f2fs/<dev>/NAME): ipu_policy (a bit mask of
// F2FS_IPU_*, below 256), reserved_blocks (current_reserved_blocks becomes
// min(N, user_block_count − valid_block_count); more than user_block_count is EINVAL) or
// max_victim_search (the segment manager's: MountGC). The result's Errno is the write's.
func (q *Seq) Tune(name string, value uint64) (*WriteResult, error) {
	q.started = true
	q.balance = nil
	res := &WriteResult{Op: "tune", Pages: []PageWrite{}}
	switch name {
	case "ipu_policy":
		if value >= 1<<8 {
			res.Errno = "EINVAL"
			return res, nil
		}
		v := uint32(value)
		q.ipu = &v
	case "reserved_blocks":
		q.rsv = &value
	case "max_victim_search":
		// sbi->max_victim_search: how many dirty sections one background victim search looks at.
		if q.sm == nil {
			return nil, ErrNoSegmentManager
		}
		if value == 0 || value >= 1<<32 {
			res.Errno = "EINVAL"
			return res, nil
		}
		q.sm.MaxVictimSearch = uint32(value)
		return res, nil
	default:
		return nil, fmt.Errorf("%w: tunable %q", ErrUnmodelled, name)
	}
	if q.vol != nil {
		if !q.tune(&q.vol.Volume) {
			res.Errno = "EINVAL"
		}
	}
	return res, nil
}

// tune applies the tunables written so far to v; false when reserved_blocks exceeds the space.
func (q *Seq) tune(v *Volume) bool {
	if q.ipu != nil {
		v.IPUTuned, v.IPUPolicy = true, *q.ipu
	}
	if q.rsv != nil {
		t := *q.rsv
		q.rsv = nil
		if t > v.UserBlockCount-v.RootReservedBlocks {
			return false
		}
		v.CurrentReservedBlocks = min(t, v.UserBlockCount-min(v.ValidBlockCount, v.UserBlockCount))
		v.ReservedBlocks = t
	}
	return true
}

// touchedOf lists the segments a writeback changed: where pages went, where their old blocks were.
func touchedOf(in Input, pages []PageWrite) []uint32 {
	var out []uint32
	for _, p := range pages {
		if p.How != WroteOutPlace {
			continue
		}
		if isBlock(p.Old) {
			out = append(out, segnoOf(&in.Volume, p.Old))
		}
		out = append(out, p.Segno)
	}
	return out
}

// Punch is fallocate(FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE) of length bytes at off on f, in the
// sequence's mode: fill_zero the partial pages, then f2fs_truncate_hole. in is the input the walk
// ran on (what a player replays).
func (q *Seq) Punch(f Input, off, length int64) (res *Result, in Input, err error) {
	return q.truncOp(f, Request{Op: OpPunch, Offset: off, Length: length})
}

// Unlink is unlink(2) of f's last link (f2fs_unlink, then the last iput's f2fs_evict_inode): a
// truncate of every block from 0, then the inode's own block (f2fs_remove_inode_page). The file
// leaves the sequence: its dirty pages are dropped unwritten (truncate_inode_pages_final), it
// leaves the dirty inode lists, and an operation naming it again is refused. dentryInline says
// the directory that names it keeps inline dentries ([Request.DentryInline]); a dentry block is
// refused.
func (q *Seq) Unlink(f Input, dentryInline bool) (res *Result, in Input, err error) {
	return q.truncOp(f, Request{Op: OpUnlink, DentryInline: dentryInline})
}

// errGone refuses an operation on a file an unlink removed.
var errGone = errUnmodelled("an operation on a path unlinked earlier in the sequence (the name is gone: f2fs_lookup gives -ENOENT, or open(O_CREAT) makes a new inode), which the model does not follow")

// Unlinked reports whether an unlink of the sequence removed file ino.
func (q *Seq) Unlinked(ino uint32) bool { return q.unlinked[ino] }

// unlinkCheck refuses an unlink of in that the model does not follow.
func (q *Seq) unlinkCheck(in Input, req Request) error {
	switch {
	case q.unlinked[in.Inode.Ino]:
		return errGone
	}
	return nil // the engine refuses the rest (unlinkRefusal)
}

// unlinkDone forgets file ino after its unlink: its page cache, its places on the dirty inode
// list and the inode-meta list, its extent cache.
func (q *Seq) unlinkDone(ino uint32) {
	if q.unlinked == nil {
		q.unlinked = map[uint32]bool{}
	}
	q.unlinked[ino] = true
	delete(q.files, ino)
	gone := func(i uint32) bool { return i == ino }
	q.order = slices.DeleteFunc(q.order, gone)
	q.metaOrder = slices.DeleteFunc(q.metaOrder, gone)
	q.metaLate = slices.DeleteFunc(q.metaLate, gone)
	delete(q.meta, ino)
	delete(q.uncertain, ino)
	delete(q.largest, ino)
	// f2fs_delete_entry: the directory's inode (its inline dentries, mtime) is dirty meta now.
	q.dirtyMeta += 2
}

// Truncate is truncate(2) of f to size bytes: f2fs_setattr → f2fs_truncate, data blocks past the
// size and the nodes that held them freed.
func (q *Seq) Truncate(f Input, size int64) (res *Result, in Input, err error) {
	return q.truncOp(f, Request{Op: OpTruncate, Offset: size})
}

func (q *Seq) truncOp(f Input, req Request) (*Result, Input, error) {
	q.balance = nil
	in := q.File(f)
	if req.Op == OpUnlink && in.Inode.Type == "file" && !q.unlinked[in.Inode.Ino] && !in.Volume.CheckpointError &&
		in.Inode.Flags&(FlagImmutable|FlagAppend) == 0 {
		// f2fs_unlink calls f2fs_balance_fs(sbi, true) before it deletes the entry: a collection
		// there moves blocks (perhaps the file's own) before the walk.
		if err := q.balanceFS(1); err != nil {
			return nil, in, err
		}
		in = q.File(f)
	}
	if req.Op == OpTruncate && in.Inode.Type == "symlink" {
		return nil, in, errUnmodelled("truncate(2) of a symbolic link follows it (do_sys_truncate): name the target's path")
	}
	if err := q.unlinkCheck(in, req); err != nil {
		return nil, in, err
	}
	if q.nodesMoved {
		in.Slots = unknownNodes{in.Slots}
	}
	in = q.stamped(in)
	res, err := SimulateContext(q.ctx, in, req, q.mode)
	if err != nil {
		return nil, in, err
	}
	segs := make([]uint32, 0, len(res.Segments))
	for _, s := range res.Segments {
		segs = append(segs, s.Segno)
	}
	next := res.NextInput()
	if u, ok := next.Slots.(unknownNodes); ok {
		next.Slots = u.DnodeSource
	}
	q.done(next, segs)
	// A punch at or past i_size returns 0 before f2fs_fallocate's f2fs_mark_inode_dirty_sync
	// (file.c:2069, goto out): the inode stays clean.
	if walkDirtied(res) && (req.Op != OpPunch || req.Offset < in.Inode.Size) {
		q.dirtied(in.Inode.Ino)
	}
	switch {
	case req.Op == OpUnlink && res.Errno == "":
		q.unlinkDone(in.Inode.Ino)
	case req.Op == OpPunch:
		q.metaWalk(in, wholePages(req.Offset, req.Offset+req.Length), res)
	default:
		q.metaWalk(in, wholePages(req.Offset, maxBytes), res) // truncate: every page past the size
	}
	q.dirtyMeta += res.Stats.DnodeChunks + 2*res.Stats.NodesFreed + 1
	q.walkNodes(in.Inode.Ino, res)
	if err := q.feedEnd(segs, true); err != nil {
		return nil, in, err
	}
	// f2fs_balance_fs: in fill_zero (each partial page) and before f2fs_truncate_hole (punch);
	// at the end of f2fs_setattr (truncate).
	points := uint64(len(res.FillZero))
	if req.Op == OpTruncate || res.Stats.DnodeChunks > 0 {
		points++
	}
	if req.Op == OpUnlink {
		points = 0 // f2fs_unlink's f2fs_balance_fs ran before the walk
	}
	if res.Errno == "" && points > 0 {
		if err := q.balanceFS(points); err != nil {
			return nil, in, err
		}
	}
	return res, in, nil
}

// walkDirtied reports whether a zero, punch or truncate dirtied its inode
// (f2fs_mark_inode_dirty_sync): every one that succeeded (f2fs_fallocate's mtime and ctime,
// f2fs_setattr), and one that failed after it changed a slot, i_blocks or i_size
// (f2fs_i_blocks_write, f2fs_i_size_write). Its dirty pages count besides ([Seq.done]).
func walkDirtied(res *Result) bool {
	return res.Errno == "" || res.Calls.Len() > 0 || res.BlocksAfter != res.BlocksBefore || res.SizeAfter != res.SizeBefore
}

// nodesWritten records that the dirty nodes of file ino (of every file, with all) were written
// out of place: by an fsync (its dnodes, f2fs_fsync_node_pages) or a checkpoint (every dirty
// node, f2fs_sync_node_pages). The model does not place node writes, so from then on those
// nodes' addresses are unknown and a truncate that frees one is refused.
func (q *Seq) nodesWritten(ino uint32, all bool) {
	if q.inodesWritten == nil {
		q.inodesWritten = map[uint32]bool{}
	}
	if !all {
		q.inodesWritten[ino] = true // f2fs_fsync_node_pages writes the inode when it is dirty
	}
	for i, f := range q.files {
		if !all && i != ino {
			continue
		}
		q.inodesWritten[i] = true // f2fs_sync_node_pages: every dirty inode
		o, ok := f.Slots.(*slotOverlay)
		if !ok {
			continue
		}
		if keys := o.dirtyNodes(!all); len(keys) > 0 {
			f.Slots = o.withMoved(keys)
			q.files[i] = f
		}
	}
}

// unknownNodes is a slot source whose node addresses are unknown: garbage collection moved node
// blocks, and the model does not follow which.
type unknownNodes struct{ DnodeSource }

// NodeAddr refuses: see unknownNodes.
func (unknownNodes) NodeAddr(uint64, int) (uint32, bool, error) {
	return 0, false, errUnmodelled("node addresses after garbage collection moved node blocks (gc_node_segment → f2fs_move_node_page), which the model does not place per file")
}

// DnodeStarts passes the source's dnode list on.
func (u unknownNodes) DnodeStarts() ([]uint64, bool) {
	if l, ok := u.DnodeSource.(DnodeLister); ok {
		return l.DnodeStarts()
	}
	return nil, false
}

// Walk runs a walked request on f by its op: [Seq.Zero], [Seq.Punch], [Seq.Truncate] or
// [Seq.Unlink]. pages are
// the ones a zero wrote back before its walk (none for the others).
func (q *Seq) Walk(f Input, req Request) (res *Result, in Input, pages []PageWrite, err error) {
	switch req.Op {
	case OpZero:
		return q.Zero(f, req)
	case OpPunch, OpTruncate, OpUnlink:
		res, in, err = q.truncOp(f, req)
		return res, in, nil, err
	}
	return nil, f, nil, fmt.Errorf("%w: op %v", ErrInput, req.Op)
}

package core

import (
	"fmt"
	"slices"
)

// Punch hole and truncate (docs/kernel-semantics.md §16) live here. Both release blocks through
// f2fs_truncate_data_blocks_range (fs/f2fs/file.c), one call per dnode, whose loop this file models
// in the two modes:
//
//   - per-block (Linux 6.12): every slot that is not NULL_ADDR is cleared first; an address that
//     fails f2fs_is_valid_blkaddr_raw is skipped (no call, not counted); anything else — a block,
//     NEW_ADDR or COMPRESS_ADDR — goes to f2fs_invalidate_blocks(addr) on its own, which returns at
//     once for NEW_ADDR and COMPRESS_ADDR;
//   - batched (upstream 6.14, "f2fs: Optimize f2fs_truncate_data_blocks_range()"): the same slots
//     build a pending run (blkstart, blklen) of consecutive values; a value that does not continue
//     it flushes the run and starts a new one; a NULL slot or a skipped address flushes the run and
//     starts none. The run is NOT flushed before an address is validated (the seed's zero range
//     does flush first), so a block mapped twice inside one pending run passes validation the
//     second time and is invalidated twice ("Bitmap was wrongly cleared").
//
// dec_valid_block_count(nr_free) follows the loop. Truncate then frees whole dnodes and indirect
// nodes (f2fs_truncate_inode_blocks: truncate_dnode, truncate_nodes, truncate_partial_nodes), each
// node block with a call of its own (truncate_node), in both modes.

// Which partial page a punch's fill_zero is for (beside fillSingle, fillHead and fillTail).
const (
	fillPunchSingle uint8 = iota + 8
	fillPunchHead
	fillPunchTail
)

// truncState is f2fs_truncate_data_blocks_range's and the truncate walk's progress.
type truncState struct {
	plan    int    // truncate: the next item of e.plan
	nrFree  uint64 // the chunk's nr_free
	node    nodeKey
	nodeIdx uint64 // a file block index under node (its path names it)
	nodeCap int    // slots of node when it is a dnode (else 0)
	// The page-cache pages dropped, dirty ones unwritten: f2fs_zero_post_eof_page's before a
	// punch, truncate_pagecache_range's over its hole, truncate_setsize's past a new size.
	drops  [2]pageRange
	nDrops uint8
	// A compressed file's cluster walk (f2fs_truncate_data_blocks_range): the slot's index in
	// the chunk, whether the current cluster is compressed, its valid blocks so far.
	clusterIdx   uint32
	compressed   bool
	clusterValid uint32
	// from is f2fs_do_truncate_blocks's from, in bytes: the size, or for a compressed file first
	// the size rounded up to a cluster (f2fs_truncate_blocks), then the size itself when the cut
	// cluster is stored raw (f2fs_truncate_partial_cluster); second says that pass has begun.
	from   int64
	second bool
	// inodeFreed: an unlink's f2fs_remove_inode_page has begun (the inode's truncate_node).
	inodeFreed bool
	// cluster is the compressed cluster's pages f2fs_truncate_partial_cluster read and dirtied.
	cluster pageRange
}

// pageRange is the pages [lo, hi).
type pageRange struct{ lo, hi uint64 }

// dropRange records that the pages [lo, hi) leave the page cache.
func (t *truncState) dropRange(lo, hi uint64) {
	if lo < hi && int(t.nDrops) < len(t.drops) {
		t.drops[t.nDrops] = pageRange{lo, hi}
		t.nDrops++
	}
}

// postEOFDrop is f2fs_zero_post_eof_page(inode, newSize) (fs/f2fs/file.c:72) outside fsync_mode
// strict: when newSize passes i_size, truncate_inode_pages_range(i_size, newSize − 1) drops the
// cached pages wholly inside [i_size, newSize) — a dirty one is never written — and keeps (zeroed
// in part) the pages the two ends cut.
func postEOFDrop(iSize, newSize int64) (lo, hi uint64) {
	if newSize <= iSize {
		return 0, 0
	}
	return uint64(iSize+blockSize-1) >> 12, uint64(newSize) >> 12
}

// dropPostEOF is what f2fs_zero_post_eof_page leaves of the dirty pages dirty when a call reaches
// newSize on a file of iSize bytes (see postEOFDrop).
func dropPostEOF(dirty []uint64, iSize, newSize int64) []uint64 {
	lo, hi := postEOFDrop(iSize, newSize)
	if lo >= hi {
		return dirty
	}
	return slices.DeleteFunc(slices.Clone(dirty), func(p uint64) bool { return p >= lo && p < hi })
}

// walkItem is one step of truncate's walk: a dnode's data slots [lo, hi), or a node freed.
type walkItem struct {
	node   bool
	lo, hi uint64
	key    nodeKey
	idx    uint64 // a block index under key
	cap    int    // key's data slots when it is a dnode (0: an indirect node)
}

// opArgCheck is argCheck for punch and truncate.
func (e *engine) opArgCheck() string {
	r, ino := &e.req, &e.in.Inode
	if r.Op == OpUnlink {
		// f2fs_unlink, and before it the VFS's may_delete (fs/namei.c): a directory is rmdir's.
		switch {
		case ino.Type == "dir":
			return "EISDIR"
		case ino.Flags&FlagImmutable != 0 || ino.Flags&FlagAppend != 0:
			return "EPERM"
		case e.in.Volume.CheckpointError:
			return "EIO"
		}
		return ""
	}
	if r.Op == OpTruncate {
		// do_sys_truncate, vfs_truncate, f2fs_setattr (setattr_prepare → inode_newsize_ok).
		switch {
		case r.Offset < 0:
			return "EINVAL"
		case ino.Type == "dir":
			return "EISDIR"
		case ino.Type != "file":
			return "EINVAL"
		case ino.Flags&FlagImmutable != 0 || ino.Flags&FlagAppend != 0:
			return "EPERM"
		case e.in.Volume.CheckpointError:
			return "EIO"
		case r.Offset > maxBytes:
			return "EFBIG"
		}
		return ""
	}
	// Punch: open(O_RDWR), vfs_fallocate and f2fs_fallocate check it as they check a zero
	// (PUNCH_HOLE|KEEP_SIZE takes no flag a zero does not).
	return e.argCheck()
}

// afterInline is the phase after f2fs_convert_inline_inode.
func (e *engine) afterInline() phase {
	switch e.req.Op {
	case OpPunch:
		return phTrPages
	case OpTruncate, OpUnlink:
		return phTrSize
	}
	return phPages
}

// startOp is phStart's choice for punch and truncate.
func (e *engine) startOp() phase {
	cn := &e.s.counters
	switch {
	case e.opArgCheck() != "":
		return phArgErr
	case e.req.Op == OpPunch && e.req.Offset >= cn.iSize:
		// f2fs_fallocate: "if (offset >= inode->i_size) goto out" — nothing to punch.
		return phDone
	case e.req.Op == OpPunch && cn.inline&InlineData != 0:
		return phInline
	case e.req.Op == OpTruncate && cn.inline&InlineData != 0 && e.req.Offset > maxInlineData(&e.in.Inode):
		// f2fs_setattr converts before truncate_setsize when the new size does not fit inline.
		return phInline
	case e.req.Op == OpUnlink && e.unlinkRefusal() != nil:
		e.err = e.unlinkRefusal()
		return phEnd
	case e.req.Op == OpTruncate || e.req.Op == OpUnlink:
		// An unlink's f2fs_evict_inode: i_size_write(inode, 0), then f2fs_truncate from 0; an
		// inline file keeps its data in the inode (f2fs_may_inline_data holds at size 0).
		return phTrSize
	}
	return phTrPages
}

// punchPages is f2fs_punch_hole's page arithmetic: fill_zero the partial head, then the partial
// tail, then f2fs_truncate_hole over the whole pages between.
func (e *engine) punchPages() {
	z := &e.s.zr
	e.s.tr.dropRange(postEOFDrop(e.s.counters.iSize, e.req.Offset+e.req.Length))
	off, end := uint64(e.req.Offset), uint64(e.req.Offset+e.req.Length)
	z.pgStart, z.pgEnd = off>>12, end>>12
	z.offStart, z.offEnd = uint32(off&4095), uint32(end&4095)
	switch {
	case z.pgStart == z.pgEnd:
		e.startFill(z.pgStart, z.offStart, z.offEnd-z.offStart, fillPunchSingle)
	case z.offStart != 0:
		e.startFill(z.pgStart, z.offStart, blockSize-z.offStart, fillPunchHead)
	default:
		e.punchAfterHead()
	}
}

// punchAfterHead goes on after the head page: the tail page, then the hole.
func (e *engine) punchAfterHead() {
	z := &e.s.zr
	if z.offEnd != 0 {
		e.startFill(z.pgEnd, 0, z.offEnd, fillPunchTail)
		return
	}
	e.punchHole()
}

// punchHole starts f2fs_truncate_hole(pg_start, pg_end), after truncate_pagecache_range has
// dropped the pages (dirty ones too) of the whole-page range.
func (e *engine) punchHole() {
	s := &e.s
	z := &s.zr
	if z.pgStart >= z.pgEnd {
		s.phase = phDone
		return
	}
	s.tr.dropRange(z.pgStart, z.pgEnd)
	z.index = z.pgStart
	s.phase = phTrNext
}

// fillDone is what follows a punch's fill_zero page.
func (e *engine) punchFillDone(which uint8) {
	switch which {
	case fillPunchSingle:
		e.s.phase = phDone
	case fillPunchHead:
		e.s.zr.pgStart++
		e.punchAfterHead()
	case fillPunchTail:
		e.punchHole()
	}
}

// settleTrunc makes the punch and truncate moves that emit no event; it reports whether it moved.
func (e *engine) settleTrunc() bool {
	s := &e.s
	switch s.phase {
	case phTrPages:
		e.punchPages()
	case phTrPlan:
		if err := e.buildPlan(); err != nil {
			e.err = err
			s.phase = phEnd
			return false
		}
		s.phase = phTrNext
	case phTrNext:
		if err := e.nextItem(); err != nil {
			e.err = err
			s.phase = phEnd
			return false
		}
	case phTrSlots:
		if s.chunk.pos < s.chunk.hi {
			return false
		}
		s.phase = phTrFinal
	case phTrFinal:
		if s.run.len > 0 {
			e.flush(ActEndOfChunk, s.chunk.hi-1)
			s.call.ret = phTrLeave
			s.phase = phInvCall
			return true
		}
		s.phase = phTrLeave
	case phTrNode:
		return e.nodeCall()
	case phTrPartial:
		if e.partialPage() {
			s.phase = phTrPartialPage
		} else if e.err == nil {
			s.phase = e.afterPass()
		}
	default:
		return false
	}
	return true
}

// nextItem moves to the next chunk or node of the walk, or past the walk.
func (e *engine) nextItem() error {
	s := &e.s
	if e.req.Op == OpTruncate || e.req.Op == OpUnlink {
		if s.tr.plan >= len(e.plan) {
			s.phase = phTrPartial
			return nil
		}
		it := e.plan[s.tr.plan]
		s.tr.plan++
		if it.node {
			s.tr.node, s.tr.nodeIdx, s.tr.nodeCap = it.key, it.idx, it.cap
			s.phase = phTrNode
			return nil
		}
		s.zr.index, s.zr.pgEnd = it.lo, it.hi
		s.phase = phTrChunkEnter
		return nil
	}
	// Punch: f2fs_truncate_hole asks f2fs_get_dnode_of_data(LOOKUP_NODE) for each dnode of the
	// range; a missing one sends it to f2fs_get_next_page_offset, past the missing subtree.
	z := &s.zr
	var recs []uint64
	for z.index < z.pgEnd {
		pos, buf, missing, err := e.slots.read(z.index, e.buf)
		e.buf = buf
		if err != nil {
			return err
		}
		if missing == 0 {
			s.phase = phTrChunkEnter
			return nil
		}
		if recs == nil {
			recs = e.slots.recStarts()
		}
		next, err := e.slots.holeEnd(z.index, recs)
		if err != nil {
			return err
		}
		if next <= z.index {
			next = pos.start + uint64(pos.cap)
		}
		z.index = next
	}
	s.phase = phDone
	return nil
}

// chunkEnterTrunc is f2fs_get_dnode_of_data for one f2fs_truncate_data_blocks_range call: the
// dnode's slots [zr.index, min(zr.pgEnd, node end)).
func (e *engine) chunkEnterTrunc(ev *Event) bool {
	s := &e.s
	z := &s.zr
	c := &s.chunk
	pos, buf, _, err := e.slots.read(z.index, e.buf)
	e.buf = buf
	if err != nil {
		e.err = err
		return false
	}
	lo := z.index
	hi := min(z.pgEnd, pos.start+uint64(pos.cap))
	*c = chunkState{node: pos, lo: lo, hi: hi, pos: lo, leave: c.leave, ord: c.ord + 1, in: true}
	s.run = pendingRun{}
	s.tr.nrFree = 0
	s.tr.clusterIdx, s.tr.compressed, s.tr.clusterValid = 0, false, 0
	s.stats.DnodeChunks++
	for _, a := range buf[lo-pos.start : hi-pos.start] {
		switch a {
		case NullAddr:
			s.stats.SlotsNull++
		case NewAddr:
			s.stats.SlotsNew++
		case CompressAddr:
			s.stats.SlotsCompress++
		default:
			s.stats.SlotsAddr++
		}
	}
	if e.req.Op == OpPunch {
		z.index = hi
	}
	ev.Kind = EvChunkEnter
	ev.Chunk = c.ord
	ev.Count = hi - lo
	ev.Node = pos.name()
	s.phase = phTrSlots
	return true
}

// truncSlot is one turn of f2fs_truncate_data_blocks_range's loop, at chunk.pos.
func (e *engine) truncSlot(ev *Event) bool {
	s := &e.s
	c := &s.chunk
	i := c.pos - c.node.start
	a := e.buf[i]
	ev.Kind, ev.State = EvSlot, stateOf(a)
	c.pos++
	if cs := uint32(e.in.Inode.ClusterSize); e.in.Inode.Flags&FlagCompressed != 0 && cs > 0 {
		// "Assumption: truncation starts with cluster": a cluster begins every cs slots of the
		// chunk; the one before it gives i_compr_blocks back what it saved.
		if s.tr.clusterIdx%cs == 0 {
			e.comprUpdate()
			s.tr.compressed, s.tr.clusterValid = a == CompressAddr, 0
		}
		s.tr.clusterIdx++
	}
	if a == NullAddr {
		ev.Action = ActSkipNull
		e.breakRun(c.pos - 1)
		return true
	}
	// f2fs_set_data_blkaddr(dn, NULL_ADDR) comes before the address is checked.
	e.buf[i] = NullAddr
	c.dirty = true
	if isBlock(a) {
		ev.Addr = a
		act, err := e.validate(a)
		if err != nil {
			e.err = err
			return false
		}
		if act != ActNone {
			// f2fs_is_valid_blkaddr_raw failed: "continue" (6.12) or "goto next" (6.14): no call,
			// not counted in nr_free; the kernel marks the volume for fsck.
			ev.Action = ActSkipBounds
			if act == ActSITBit {
				ev.Action = ActSkipSITBit
			}
			s.counters.needFsck = true
			if s.msg == "" {
				s.msg = ev.Message()
			}
			s.stats.SlotsSkipped++
			e.breakRun(c.pos - 1)
			return true
		}
		e.track(a)
		if s.tr.compressed {
			s.tr.clusterValid++
		}
	}
	// A released file (FI_COMPRESS_RELEASED) no longer counts its COMPRESS_ADDR slots as blocks.
	if released := e.in.Inode.Inline&InlineComprReleased != 0; !released || a != CompressAddr {
		s.tr.nrFree++
	}
	if e.mode == PerBlock {
		ev.Action = ActClear
		s.call = invCall{slot: c.pos - 1, start: a, len: 1, reason: ActPerBlock, ret: phTrSlots}
		s.phase = phInvCall
		return true
	}
	switch {
	case s.run.len > 0 && s.run.start+s.run.len == a:
		s.run.len++
		ev.Action, ev.Len = ActClearExtendRun, s.run.len
	case s.run.len > 0:
		// The pending run ends here: it is flushed now, and this value starts the next one.
		e.flush(ActDiscontiguous, c.pos-1)
		s.call.ret = phTrSlots
		s.phase = phInvCall
		s.run = pendingRun{slot: c.pos - 1, start: a, len: 1}
		ev.Action, ev.Len = ActClearStartRun, 1
	default:
		s.run = pendingRun{slot: c.pos - 1, start: a, len: 1}
		ev.Action, ev.Len = ActClearStartRun, 1
	}
	return true
}

// breakRun is the batched loop's "next:" label: a NULL slot or a skipped address flushes the
// pending run.
func (e *engine) breakRun(slot uint64) {
	s := &e.s
	if e.mode != Batched || s.run.len == 0 {
		return
	}
	e.flush(ActRunBreak, slot)
	s.call.ret = phTrSlots
	s.phase = phInvCall
}

// chunkLeaveTrunc is the end of f2fs_truncate_data_blocks_range: dec_valid_block_count(nr_free).
func (e *engine) chunkLeaveTrunc(ev *Event) {
	s := &e.s
	c := &s.chunk
	cn := &s.counters
	e.comprUpdate()
	ev.Kind, ev.Action = EvChunkLeave, ActDecValid
	ev.Count = c.hi - c.lo
	ev.Len = uint32(s.tr.nrFree)
	ev.Before = cn.validBlocks
	e.decValid(s.tr.nrFree)
	cn.iBlocks -= min(cn.iBlocks, s.tr.nrFree)
	ev.After = cn.validBlocks
	if c.dirty {
		e.slots.store(c.node.start, e.buf)
	}
	c.in = false
	c.leave = c.hi - 1
	s.phase = phTrNext
}

// comprUpdate is f2fs_i_compr_blocks_update(inode, valid_blocks, false) for a compressed cluster
// the loop leaves: i_compr_blocks loses what the cluster saved.
func (e *engine) comprUpdate() {
	t := &e.s.tr
	if !t.compressed {
		return
	}
	t.compressed = false
	cn := &e.s.counters
	if saved := uint64(e.in.Inode.ClusterSize) - uint64(t.clusterValid); cn.comprBlocks > 0 {
		cn.comprBlocks -= min(cn.comprBlocks, saved)
	}
}

// decValid lowers valid_block_count by n and gives reserved_blocks back its share, as
// dec_valid_block_count and dec_valid_node_count do.
func (e *engine) decValid(n uint64) {
	cn := &e.s.counters
	cn.validBlocks -= min(cn.validBlocks, n)
	if t := e.in.Volume.ReservedBlocks; t > 0 && cn.curReserved < t {
		cn.curReserved = min(t, cn.curReserved+n)
	}
}

// nodeCall is truncate_node's f2fs_invalidate_blocks(ni.blk_addr) for the node being freed.
func (e *engine) nodeCall() bool {
	s := &e.s
	if s.tr.node.top < 0 {
		// An unlink's f2fs_remove_inode_page: truncate_node of the inode, at its NAT address.
		if e.in.Inode.Blkaddr == 0 {
			e.err = errInodeAddr
			s.phase = phEnd
			return false
		}
		s.call = invCall{slot: s.lastSlot, start: e.in.Inode.Blkaddr, len: 1, reason: ActNodeFree, ret: phTrNodeDone}
		s.phase = phInvCall
		return true
	}
	addr, exists, err := e.slots.NodeAddr(s.tr.nodeIdx, s.tr.node.level())
	if err != nil {
		e.err = err
		s.phase = phEnd
		return false
	}
	if !exists {
		e.err = fmt.Errorf("%w: truncate would free node %s, which does not exist", ErrInput, s.tr.node)
		s.phase = phEnd
		return false
	}
	s.call = invCall{slot: s.lastSlot, start: addr, len: 1, reason: ActNodeFree, ret: phTrNodeDone}
	s.phase = phInvCall
	return true
}

// nodeDone is the rest of truncate_node: dec_valid_node_count, the NAT entry cleared.
func (e *engine) nodeDone(ev *Event) {
	s := &e.s
	cn := &s.counters
	ev.Kind, ev.Node, ev.Addr = EvNodeFree, s.tr.node.String(), s.call.start
	ev.Before = uint64(cn.validNodes)
	cn.validNodes--
	e.decValid(1)
	if s.tr.node.top < 0 && cn.iBlocks > 1 {
		// f2fs_remove_inode_page: "inconsistent i_blocks" (neither 0 nor the inode's 8
		// sectors) sets SBI_NEED_FSCK; the inode goes anyway.
		cn.needFsck = true
	}
	cn.iBlocks -= min(cn.iBlocks, 1)
	ev.After = uint64(cn.validNodes)
	if s.tr.node.top < 0 {
		// The inode (dec_valid_inode_count, f2fs_remove_orphan_inode): the unlink is over, and
		// nothing of the file is left.
		cn.iBlocks = 0
		ev.Action = ActUnlink
		s.stats.NodesFreed++
		s.phase = phDone
		return
	}
	start := noDnode
	if s.tr.nodeCap > 0 {
		start = locate(s.tr.nodeIdx, e.slots.geom).start
	}
	e.slots.free(s.tr.node, start, s.tr.nodeCap)
	s.stats.NodesFreed++
	s.phase = phTrNext
}

// truncSize is truncate_setsize: i_size becomes the new size, the page cache past it is dropped.
func (e *engine) truncSize(ev *Event) {
	s := &e.s
	cn := &s.counters
	size := e.req.Offset
	unlink := e.req.Op == OpUnlink
	if unlink {
		size = 0 // f2fs_evict_inode: i_size_write(inode, 0)
	}
	ev.Kind, ev.Action, ev.Before, ev.After = EvSize, ActTruncSize, uint64(cn.iSize), uint64(size)
	if unlink {
		ev.Action = ActUnlink
	}
	old := cn.iSize
	cn.iSize = size
	// f2fs_setattr: a growing size first drops the cached pages wholly inside [i_size, size)
	// (f2fs_zero_post_eof_page, file.c:1171) — a dirty one never written. Then truncate_setsize past
	// the size; an unlink's truncate_inode_pages_final, every page.
	s.tr.dropRange(postEOFDrop(old, size))
	s.tr.dropRange(uint64(size+blockSize-1)>>12, ^uint64(0))
	switch {
	case unlink && cn.iBlocks <= 1:
		// F2FS_HAS_BLOCKS: nothing but the inode counted in i_blocks, f2fs_truncate is not called.
		s.phase = phDone
	case size > old:
		// f2fs_setattr truncates blocks only when the size does not grow.
		s.phase = phDone
	case cn.inline&InlineData != 0:
		// f2fs_truncate_inline_inode: the data stays in the inode, no block changes.
		s.phase = phDone
	case e.in.Inode.Flags&FlagCompressed != 0 && e.in.Inode.ClusterSize <= 0:
		e.err = fmt.Errorf("%w: compressed inode %d without a cluster size", ErrInput, e.in.Inode.Ino)
		s.phase = phEnd
	case e.in.Inode.Flags&FlagCompressed != 0 && e.in.Inode.Inline&InlineComprReleased != 0:
		// A compressed file of incompressible data (i_compr_blocks 0, every cluster raw) is
		// not released: it goes on below as any compressed file.
		e.err = errUnmodelled("a truncate of a compressed file whose blocks were released (FI_COMPRESS_RELEASED: f2fs_setattr, f2fs_truncate_blocks)")
		s.phase = phEnd
	case e.in.Inode.Flags&FlagCompressed != 0:
		// f2fs_truncate_blocks (file.c:867): blocks go from the size rounded up to a cluster.
		cb := int64(e.in.Inode.ClusterSize) * blockSize
		s.tr.from = (size + cb - 1) / cb * cb
		s.phase = phTrPlan
	default:
		s.tr.from = size
		s.phase = phTrPlan
	}
}

// afterPass is what follows f2fs_do_truncate_blocks: for a compressed file cut inside a cluster,
// f2fs_truncate_partial_cluster (compress.c:1203). A raw cluster is truncated again from the size
// itself (f2fs_do_truncate_blocks). A compressed one goes through f2fs_prepare_compress_overwrite:
// its pages are read (decompressed) into the page cache, those from the size on zeroed, and
// f2fs_compress_write_end → set_cluster_dirty dirties every page of the cluster and marks it
// page_private_gcing. Nothing else changes at this op: no f2fs_invalidate_blocks call, the
// slots (COMPRESS_ADDR, the compressed blocks, NEW_ADDR) and the SIT stay as they are, and
// 6.12 reserves no block here. What those pages become is writeback's ([clusterWrite]).
func (e *engine) afterPass() phase {
	s := &e.s
	size := e.req.Offset
	if s.tr.second || s.tr.from == size {
		return phDone
	}
	cs := uint64(e.in.Inode.ClusterSize)
	start := uint64(size) >> 12 / cs * cs
	pos, buf, _, err := e.slots.read(start, e.fbuf)
	e.fbuf = buf
	if err != nil {
		e.err = err
		return phEnd
	}
	if buf[pos.ofs] == CompressAddr {
		s.tr.cluster = pageRange{start, start + cs}
		return phTrCluster
	}
	s.tr.second, s.tr.from = true, size
	return phTrPlan
}

// partialClusterEvent describes f2fs_truncate_partial_cluster on a compressed cluster (afterPass).
func (e *engine) partialClusterEvent(ev *Event) {
	s := &e.s
	size := uint64(e.req.Offset)
	idx := size >> 12
	pos, buf, _, _ := e.slots.read(idx, e.fbuf)
	e.fbuf = buf
	off := uint32(size & (blockSize - 1))
	ev.Kind, ev.Action, ev.State = EvFillZero, ActPartialCluster, stateOf(buf[pos.ofs])
	ev.Addr, ev.Len, ev.Count = off, blockSize-off, idx
	ev.Before, ev.After = s.tr.cluster.lo, s.tr.cluster.hi
	s.phase = phDone
}

// partialPage is truncate_partial_data_page(from): the page holding an unaligned new size is
// zeroed from the size on and dirtied, when its slot maps something (NULL: -ENOENT, ignored).
// It reports whether an event follows.
func (e *engine) partialPage() bool {
	s := &e.s
	off := uint32(s.tr.from & (blockSize - 1))
	if off == 0 {
		return false
	}
	idx := uint64(s.tr.from) >> 12
	pos, buf, _, err := e.slots.read(idx, e.fbuf)
	e.fbuf = buf
	if err != nil {
		e.err = err
		return false
	}
	if buf[pos.ofs] == NullAddr {
		return false
	}
	s.fill = fillState{idx: idx, start: off, len: blockSize - off}
	return true
}

// partialPageEvent describes truncate_partial_data_page and leaves its page dirty.
func (e *engine) partialPageEvent(ev *Event) {
	s := &e.s
	f := &s.fill
	pos, buf, _, _ := e.slots.read(f.idx, e.fbuf)
	e.fbuf = buf
	a := buf[pos.ofs]
	// The page lies at or before the walk's position: Count names it, Slot stays.
	ev.Kind, ev.Action, ev.State = EvFillZero, ActPartialPage, stateOf(a)
	ev.Addr, ev.Len, ev.Count = f.start, f.len, f.idx
	fz := FillZero{Index: f.idx, Start: f.start, Len: f.len, Before: ev.State}
	if isBlock(a) {
		fz.Addr = a
	}
	e.fills = append(e.fills, fz)
	s.phase = e.afterPass()
}

// buildPlan lists truncate's walk from free_from (f2fs_do_truncate_blocks): the rest of the dnode
// free_from falls in when it starts inside it (or in the inode), then f2fs_truncate_inode_blocks's
// nodes in the kernel's order: each dnode's slots and then the dnode, an indirect node after its
// children when it goes whole.
func (e *engine) buildPlan() error {
	e.plan = e.plan[:0]
	e.s.tr.plan = 0
	from := (uint64(e.s.tr.from) + blockSize - 1) >> 12
	if from >= maxFileBlocks {
		return nil
	}
	g := e.slots.geom
	pos, _, missing, err := e.slots.read(from, e.buf)
	if err != nil {
		return err
	}
	if missing == 0 && (pos.ofs != 0 || pos.depth == 0) {
		e.plan = append(e.plan, walkItem{lo: from, hi: pos.start + uint64(pos.cap)})
		from = pos.start + uint64(pos.cap)
		if from >= maxFileBlocks {
			return nil
		}
		pos = locate(from, g)
	}
	w := planWalker{e: e}
	return w.inodeBlocks(pos)
}

// planWalker builds the node walk of f2fs_truncate_inode_blocks.
type planWalker struct {
	e      *engine
	starts []uint64 // dnodes that may exist (nil: unknown)
	reads  int      // exists look-ups so far
}

// exists says whether node k exists now, as the overlay and its base say. Every 256 look-ups it
// looks at the caller's context: a hostile tree of a million dnodes is walked only while someone
// waits for it.
func (w *planWalker) exists(k nodeKey) (bool, error) {
	if w.reads++; w.reads%256 == 0 && w.e.ctx != nil {
		if err := w.e.ctx.Err(); err != nil {
			return false, err
		}
	}
	idx := w.firstIndex(k)
	pos, _, missing, err := w.e.slots.read(idx, w.e.fbuf)
	if err != nil {
		return false, err
	}
	return k.level() < pos.depth-missing, nil
}

// firstIndex is the first file block index under node k.
func (w *planWalker) firstIndex(k nodeKey) uint64 {
	g := w.e.slots.geom
	api, apb := g.api, g.apb
	ind := apb * nidsPerBlock
	switch k.top {
	case 0, 1:
		return api + uint64(k.top)*apb
	case 2, 3:
		base := api + 2*apb + uint64(k.top-2)*ind
		if k.a >= 0 {
			base += uint64(k.a) * apb
		}
		return base
	}
	base := api + 2*apb + 2*ind
	if k.a >= 0 {
		base += uint64(k.a) * ind
	}
	if k.b >= 0 {
		base += uint64(k.b) * apb
	}
	return base
}

// mayExist rules out, without reading, a dnode the file's dnode list does not have.
func (w *planWalker) mayExist(k nodeKey) bool {
	if w.starts == nil {
		return true
	}
	_, found := slices.BinarySearch(w.starts, w.firstIndex(k))
	return found || w.e.slots.alloc[k]
}

// dnode is truncate_dnode: its data slots, then the node.
func (w *planWalker) dnode(k nodeKey) error {
	if !w.mayExist(k) {
		return nil
	}
	ok, err := w.exists(k)
	if err != nil || !ok {
		return err
	}
	lo := w.firstIndex(k)
	capacity := int(w.e.slots.geom.apb)
	w.e.plan = append(w.e.plan, walkItem{lo: lo, hi: lo + uint64(capacity)},
		walkItem{node: true, key: k, idx: lo, cap: capacity})
	return nil
}

// nodes is truncate_nodes(k, ofs, depth): the children from ofs on, then k itself when ofs is 0.
func (w *planWalker) nodes(k nodeKey, ofs int32) error {
	ok, err := w.exists(k)
	if err != nil || !ok {
		return err
	}
	for i := ofs; i < nidsPerBlock; i++ {
		if k.top == 4 && k.a < 0 {
			if err := w.nodes(nodeKey{4, i, -1}, 0); err != nil {
				return err
			}
			continue
		}
		child := nodeKey{k.top, i, -1}
		if k.top == 4 {
			child = nodeKey{4, k.a, i}
		}
		if err := w.dnode(child); err != nil {
			return err
		}
	}
	if ofs == 0 {
		w.e.plan = append(w.e.plan, walkItem{node: true, key: k, idx: w.firstIndex(k)})
	}
	return nil
}

// inodeBlocks is f2fs_truncate_inode_blocks(from), pos locating from (never in the inode).
func (w *planWalker) inodeBlocks(pos dnodePos) error {
	if l, ok := w.e.slots.DnodeStarts(); ok {
		w.starts = l
	}
	top, off1 := pos.path[0].top, int32(0)
	switch pos.depth {
	case 2:
		off1 = pos.path[1].a
		if off1 != 0 {
			// truncate_partial_nodes(depth 2): the dnodes from off1 on; the indirect node stays.
			parent := nodeKey{top, -1, -1}
			ok, err := w.exists(parent)
			if err != nil {
				return err
			}
			if ok {
				for i := off1; i < nidsPerBlock; i++ {
					if err := w.dnode(nodeKey{top, i, -1}); err != nil {
						return err
					}
				}
			}
			top, off1 = top+1, 0
		}
	case 3:
		off1 = pos.path[1].a
		if off2 := pos.path[2].b; off2 != 0 {
			// truncate_partial_nodes(depth 3): the dnodes of indirect node off1 from off2 on.
			// When that node (or the double-indirect one) is missing, the kernel returns
			// -ENOENT with the offsets unchanged, and the walk goes on from off1.
			mid := nodeKey{4, off1, -1}
			ok, err := w.exists(mid)
			if err != nil {
				return err
			}
			if ok {
				for i := off2; i < nidsPerBlock; i++ {
					if err := w.dnode(nodeKey{4, off1, i}); err != nil {
						return err
					}
				}
				off1++
			}
		}
	}
	for ; top <= 4; top++ {
		var err error
		switch top {
		case 0, 1:
			err = w.dnode(nodeKey{top, -1, -1})
		default:
			err = w.nodes(nodeKey{top, -1, -1}, off1)
		}
		if err != nil {
			return err
		}
		off1 = 0
	}
	return nil
}

// dropPages is what truncate_pagecache(_range) left of the dirty pages.
func (e *engine) dropPages(dirty []uint64) []uint64 {
	t := &e.s.tr
	if t.nDrops == 0 {
		return dirty
	}
	return slices.DeleteFunc(slices.Clone(dirty), func(p uint64) bool {
		for _, r := range t.drops[:t.nDrops] {
			if p >= r.lo && p < r.hi {
				return true
			}
		}
		return false
	})
}

// unlinkInode is an unlink's f2fs_remove_inode_page after f2fs_truncate: the xattr node
// (f2fs_truncate_xattr_node), f2fs_truncate_data_blocks_range(dn, 1) over the inode's slot 0 (NULL
// after the truncate: no call), then truncate_node of the inode. It reports whether it moved the
// walk on (to the inode's node call).
func (e *engine) unlinkInode() bool {
	s := &e.s
	if e.req.Op != OpUnlink || s.tr.inodeFreed || s.errno != "" {
		return false
	}
	s.tr.inodeFreed = true
	if x := e.in.Inode.XattrNid; x != 0 {
		e.err = errXattrNode(x)
		s.phase = phEnd
		return false
	}
	s.tr.node, s.tr.nodeIdx, s.tr.nodeCap = nodeKey{-1, -1, -1}, 0, 0
	s.phase = phTrNode
	return true
}

// unlinkRefusal is what an unlink (past its argument checks) asks that the model does not follow.
func (e *engine) unlinkRefusal() error {
	switch {
	case e.in.Inode.Type != "file":
		return errUnmodelled("unlink of a " + e.in.Inode.Type + " (f2fs_evict_inode of an inode that is not a regular file)")
	case e.in.Inode.Links == 0:
		return errUnmodelled("the inode's link count (i_links 0 or not given): f2fs_unlink refuses a zero i_nlink with -EFSCORRUPTED, and f2fs_drop_nlink evicts only at the last link")
	case e.in.Inode.Links > 1:
		return errUnmodelled(fmt.Sprintf("an unlink of one of %d links: f2fs_drop_nlink leaves the inode and its blocks (f2fs_release_orphan_inode), dirtying it, which the model does not follow", e.in.Inode.Links))
	case !e.req.DentryInline:
		return errUnmodelled("the directory's dentry block that f2fs_delete_entry clears and dirties (and f2fs_truncate_hole frees once empty): a checkpoint's f2fs_sync_dirty_inodes writes it out of place, which the model does not place; only a directory with inline dentries is modelled")
	}
	return nil
}

// errInodeAddr refuses an unlink whose inode block the model cannot place.
var errInodeAddr = errUnmodelled("where the inode block is, which f2fs_remove_inode_page → truncate_node frees: a checkpoint, an fsync or garbage collection wrote it out of place (f2fs_write_node_page), which the model does not place, or the input does not give it")

// errXattrNode refuses an unlink of an inode with an xattr node.
func errXattrNode(nid uint32) error {
	return errUnmodelled(fmt.Sprintf("the inode's xattr node (nid %d), which f2fs_truncate_xattr_node frees before the inode: the model does not read its block address", nid))
}

// CheckUnlink says, before any walk, whether the engine will refuse the unlink req of in (the
// error it will give, naming the kernel function) — nil when it answers, with 0 or an errno. A
// page that plays an unlink refuses it up front rather than open a player that cannot build.
func CheckUnlink(in Input, req Request) error {
	if req.Op != OpUnlink {
		return nil
	}
	e := &engine{in: in, req: req}
	switch {
	case e.opArgCheck() != "":
		return nil // the kernel's errno
	case e.unlinkRefusal() != nil:
		return e.unlinkRefusal()
	case in.Inode.XattrNid != 0:
		return errXattrNode(in.Inode.XattrNid)
	case in.Inode.Blkaddr == 0:
		return errInodeAddr
	}
	return nil
}

package core

import (
	"fmt"
	"slices"
)

// The dirty inode-meta list and what a checkpoint does to the dirty inode list.
//
// f2fs_mark_inode_dirty_sync(inode, true) (fs/f2fs/inode.c:26 → f2fs_inode_dirtied) puts an inode on
// f2fs's own list of inodes whose metadata changed (sbi->inode_list[DIRTY_META], gdirty_list): an
// i_size or i_blocks change (f2fs_i_size_write, f2fs_i_blocks_write), or a change of the read
// extent cache's largest extent (__update_extent_tree_range, extent_cache.c:771). Every checkpoint
// (block_operations → f2fs_sync_inode_meta, checkpoint.c:1180) calls sync_inode_metadata on each:
// the VFS writes the inode and leaves it clean, so an inode with no dirty page leaves the bdi's
// dirty inode list, and one with dirty pages goes back to its newest end (redirty_tail,
// fs/fs-writeback.c). Either changes the order a later sync writes files back in (kernel-seq w10).
//
// The largest extent starts as the inode's i_ext. An update of pages [fofs, fofs+len) first drops
// it when they overlap (__drop_largest_extent: the inode is marked), then inserts the new extent,
// merged with cached neighbours, which becomes the largest when it is longer
// (__try_update_largest_extent). The model follows the largest extent while it is known: from the
// image until the first change that drops it (after which the pieces the cache keeps decide) or an
// insertion that may outgrow it. A file whose mark the model cannot decide is perhaps on the list;
// after a checkpoint its place on the dirty inode list is not known, and a sync whose result
// depends on it is refused.

// largestExt is what the model knows of a file's largest read extent.
type largestExt struct {
	fofs, len uint32
	known     bool
}

func (q *Seq) largestOf(in Input) largestExt {
	if l, ok := q.largest[in.Inode.Ino]; ok {
		return l
	}
	return largestExt{in.Inode.ReadExt.Fofs, in.Inode.ReadExt.Len, true}
}

func (q *Seq) setLargest(ino uint32, l largestExt) {
	if q.largest == nil {
		q.largest = map[uint32]largestExt{}
	}
	q.largest[ino] = l
}

// metaOn records that file ino is certainly on the dirty inode-meta list.
func (q *Seq) metaOn(ino uint32) {
	if q.meta == nil {
		q.meta = map[uint32]bool{}
	}
	on, seen := q.meta[ino]
	switch {
	case !seen:
		q.meta[ino] = true
		q.metaOrder = append(q.metaOrder, ino)
	case !on:
		// Perhaps on it since earlier: on it now, but not known since when.
		q.meta[ino] = true
		q.metaLate = append(q.metaLate, ino)
	}
}

// metaPerhaps records that file ino may be on the dirty inode-meta list.
func (q *Seq) metaPerhaps(ino uint32) {
	if q.meta == nil {
		q.meta = map[uint32]bool{}
	}
	if _, seen := q.meta[ino]; !seen {
		q.meta[ino] = false
	}
}

// wholePages is the range of whole pages in bytes [from, to): the pages a walk updates (partial
// pages go through fill_zero, which updates no slot); lo > hi when there is none.
func wholePages(from, to int64) wholeRange {
	end := uint64(max(to, 0)) >> 12
	if end == 0 {
		return wholeRange{1, 0}
	}
	return wholeRange{uint64(max(from, 0)+4095) >> 12, end - 1}
}

type wholeRange struct{ lo, hi uint64 }

// metaWalk records a zero's, punch's or truncate's effect: i_blocks or i_size changed, or the
// slots of whole pages r that held blocks were updated (f2fs_update_data_blkaddr → the extent
// cache's drop rule; NEW and NULL slots insert no extent). A walk that stopped early (an errno)
// updated only some of r: it marks the inode perhaps.
func (q *Seq) metaWalk(in Input, r wholeRange, res *Result) {
	ino := in.Inode.Ino
	if res.BlocksAfter != res.BlocksBefore || res.SizeAfter != res.SizeBefore {
		q.metaOn(ino)
	}
	if res.Calls.Len() == 0 {
		return
	}
	l := q.largestOf(in)
	overlap := r.lo <= r.hi && r.lo < uint64(l.fofs)+uint64(l.len) && r.hi >= uint64(l.fofs)
	switch {
	case !l.known:
		q.metaPerhaps(ino)
	case l.len == 0:
		// Cached extents split into pieces, any of which would become the largest.
		q.metaPerhaps(ino)
		q.setLargest(ino, largestExt{})
	case overlap && res.Errno == "":
		q.metaOn(ino) // __drop_largest_extent; the pieces left decide the next largest
		q.setLargest(ino, largestExt{})
	case overlap:
		q.metaPerhaps(ino)
		q.setLargest(ino, largestExt{})
	default:
		// Outside the largest: pieces of cached extents are no longer than it.
		q.setLargest(ino, l)
	}
}

// metaPages records a write-back's or gc move's: each page written out of place updates its
// extent (f2fs_update_data_blkaddr). next is the file after them.
func (q *Seq) metaPages(next Input, pages []PageWrite) error {
	ino := next.Inode.Ino
	var rs *runScanner
	var lastLo, lastHi uint64 // the last run measured: pages in it need no second look
	measured := false
	for _, p := range pages {
		if p.How != WroteOutPlace {
			continue
		}
		l := q.largestOf(next)
		switch {
		case !l.known:
			q.metaPerhaps(ino)
			return nil // every later page is decided alike
		case l.len == 0:
			q.metaOn(ino) // the new extent is longer than none
			q.setLargest(ino, largestExt{})
			return nil
		case p.Index >= uint64(l.fofs) && p.Index < uint64(l.fofs)+uint64(l.len):
			q.metaOn(ino) // __drop_largest_extent
			q.setLargest(ino, largestExt{})
			return nil
		}
		if measured && p.Index >= lastLo && p.Index <= lastHi {
			continue
		}
		if rs == nil {
			e, err := newEngine(next, Request{}, PerBlock)
			if err != nil {
				return err
			}
			rs = &runScanner{e: e}
		}
		lo, hi, err := rs.run(p.Index, uint64(l.len))
		if err != nil {
			return err
		}
		if hi-lo+1 > uint64(l.len) {
			// Merged with cached neighbours the new extent may outgrow the largest.
			q.metaPerhaps(ino)
			q.setLargest(ino, largestExt{})
			return nil
		}
		q.setLargest(ino, l)
		lastLo, lastHi, measured = lo, hi, true
	}
	return nil
}

// runScanner reads a file's slots to measure runs of consecutive addresses.
type runScanner struct{ e *engine }

func (r *runScanner) at(i uint64) (uint32, error) {
	pos, buf, _, err := r.e.slots.read(i, r.e.fbuf)
	r.e.fbuf = buf
	if err != nil {
		return 0, err
	}
	return buf[pos.ofs], nil
}

// run is the run of consecutive addresses that holds page idx, [lo, hi], measured up to limit+1
// pages.
func (r *runScanner) run(idx, limit uint64) (lo, hi uint64, err error) {
	a, err := r.at(idx)
	if err != nil || !isBlock(a) {
		return idx, idx, err
	}
	lo, hi = idx, idx
	for hi-lo+1 <= limit {
		b, err := r.at(hi + 1)
		if err != nil {
			return 0, 0, err
		}
		if b != a+uint32(hi+1-idx) {
			break
		}
		hi++
	}
	for lo > 0 && hi-lo+1 <= limit {
		b, err := r.at(lo - 1)
		if err != nil {
			return 0, 0, err
		}
		if b+uint32(idx-lo+1) != a {
			break
		}
		lo--
	}
	return lo, hi, nil
}

// metaFsync: f2fs_do_sync_file writes the inode (f2fs_write_inode → f2fs_inode_synced) unless
// f2fs_skip_inode_update says it need not: whether it left the list is not known.
func (q *Seq) metaFsync(ino uint32) {
	if _, seen := q.meta[ino]; seen {
		q.meta[ino] = false
		q.metaOrder = slices.DeleteFunc(q.metaOrder, func(i uint32) bool { return i == ino })
		q.metaLate = slices.DeleteFunc(q.metaLate, func(i uint32) bool { return i == ino })
	}
}

// metaCheckpoint is f2fs_sync_inode_meta's sync_inode_metadata on every inode of the list: a file
// certainly on it leaves the dirty inode list (no dirty page) or goes to its newest end (in the
// order the files joined the meta list); a file perhaps on it keeps a place the model no longer
// knows. The meta list is empty after it (f2fs_inode_synced).
func (q *Seq) metaCheckpoint() error {
	if len(q.meta) == 0 {
		return nil
	}
	var requeue []uint32
	for _, ino := range append(slices.Clone(q.metaOrder), q.metaLate...) {
		if !slices.Contains(q.order, ino) {
			continue
		}
		dirty, err := q.hasPages(ino)
		if err != nil {
			return err
		}
		q.order = slices.DeleteFunc(q.order, func(i uint32) bool { return i == ino })
		if dirty {
			requeue = append(requeue, ino)
		}
	}
	q.order = append(q.order, requeue...)
	late := false
	for _, ino := range requeue {
		late = late || slices.Contains(q.metaLate, ino)
	}
	if late && len(requeue) > 1 {
		for _, ino := range requeue {
			q.markUncertain(ino) // their order on the meta list is not known
		}
	}
	for ino, on := range q.meta {
		if !on && slices.Contains(q.order, ino) {
			q.markUncertain(ino)
		}
	}
	q.meta, q.metaOrder, q.metaLate = nil, nil, nil
	return nil
}

func (q *Seq) markUncertain(ino uint32) {
	if q.uncertain == nil {
		q.uncertain = map[uint32]bool{}
	}
	q.uncertain[ino] = true
}

// hasPages reports whether file ino has pages a writeback would write: dirty ones, or ones
// background gc marked.
func (q *Seq) hasPages(ino uint32) (bool, error) {
	if f, ok := q.files[ino]; ok && len(f.Inode.Dirty) > 0 {
		return true, nil
	}
	gcing, err := q.markedOf(ino)
	return len(gcing) > 0, err
}

// checkSyncOrder refuses a sync whose result depends on an order of files the model does not
// know: a file placed on the dirty inode list by a checkpoint the model could not follow wrote
// pages out of place to a log another file's pages went to as well, or, with two files or more
// writing out of place, a log opened a new segment. wrote lists, per file, the logs its pages went
// to out of place; moved, whether a log's current segment changed.
func (q *Seq) checkSyncOrder(wrote map[uint32]map[string]bool, moved bool) error {
	unsure := false
	for ino := range wrote {
		unsure = unsure || q.uncertain[ino]
	}
	if !unsure || len(wrote) < 2 {
		return nil
	}
	shared := moved
	for a, la := range wrote {
		if !q.uncertain[a] {
			continue
		}
		for b, lb := range wrote {
			for log := range la {
				if b != a && lb[log] {
					shared = true
				}
			}
		}
	}
	if !shared {
		return nil
	}
	return fmt.Errorf("%w: the order sync writes %d files back in: a checkpoint's f2fs_sync_inode_meta (checkpoint.c:1180) put some of them back on the dirty inode list or took them off it (sync_inode_metadata), as the read extent cache decides (f2fs_mark_inode_dirty_sync from __update_extent_tree_range), which the model does not follow", ErrUnmodelled, len(wrote))
}

// syncDone: the flusher wrote every inode; none is dirty or on the meta list.
func (q *Seq) syncDone() {
	q.order, q.uncertain = nil, nil
	q.meta, q.metaOrder, q.metaLate = nil, nil, nil
}

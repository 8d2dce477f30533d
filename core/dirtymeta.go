package core

import (
	"fmt"
	"slices"

	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/internal/f2fs"
)

// The kernel's dirty metadata counters (issue 36): F2FS_DIRTY_NODES, F2FS_DIRTY_DENTS and
// F2FS_DIRTY_IMETA, which f2fs_need_SSR (need_new_seg's SSR test, IPU_SSR) and
// __get_secs_required (has_not_enough_free_secs, f2fs_gc's checkpoint) read. get_blocktype_secs
// rounds each up to sections, so what decides is whether each count is zero and whether it
// reaches a section; the model follows, through every operation, which files certainly or perhaps
// have dirty node pages, which inodes are on the dirty inode-meta list (inodemeta.go) and which
// dentry pages background gc marked, and bounds the node pages by the nodes its operations may
// have dirtied (Seq.dirtyMeta). Each count is then a range ([gc.Range]); where a decision depends
// on the part of a range the model cannot pin down, the segment manager refuses.
//
// Node pages dirtied (set_page_dirty on a node page):
//   - a zero, punch or truncate that changed a data slot (f2fs_set_data_blkaddr: NEW_ADDR
//     reserved, a block or NEW_ADDR replaced), allocated a node (f2fs_new_node_page, and its
//     parent's set_nid) or freed one (truncate_node: the parent's set_nid);
//   - a buffered write that reserved a slot (f2fs_reserve_new_blocks) or allocated a node, and an
//     inline conversion (f2fs_convert_inline_inode: the inode page);
//   - every page written out of place (f2fs_update_data_blkaddr), by a writeback or by gc;
//   - background gc's marked node pages (the segment manager counts those).
//
// Cleaned: by a checkpoint (f2fs_sync_node_pages writes them all) and for one file by its fsync
// (f2fs_fsync_node_pages).

const (
	nodesPerhaps = 1 // the file may have dirty node pages
	nodesCertain = 2 // it has at least one
)

// nodesDirtied records that file ino's operation dirtied a node page (certain) or may have.
func (q *Seq) nodesDirtied(ino uint32, certain bool) {
	if q.nodeDirty == nil {
		q.nodeDirty = map[uint32]int8{}
	}
	st := int8(nodesPerhaps)
	if certain {
		st = nodesCertain
	}
	q.nodeDirty[ino] = max(q.nodeDirty[ino], st)
}

// walkNodes records a zero's, punch's or truncate's node pages: certain when it changed a slot,
// i_blocks or a node; none when it succeeded without (every slot of its range already what it
// would write); perhaps when it failed.
func (q *Seq) walkNodes(ino uint32, res *Result) {
	switch {
	case res.Calls.Len() > 0 || res.BlocksAfter != res.BlocksBefore || res.Stats.NodesAlloc > 0 || res.Stats.NodesFreed > 0:
		q.nodesDirtied(ino, true)
		q.nodesBeyond(ino)
		q.nodesByOthers = true
	case res.Errno != "":
		q.nodesDirtied(ino, false)
		q.nodesBeyond(ino)
		q.nodesByOthers = true
	}
}

// nodesBeyond records that file ino's dirty node pages may include others than its inode page.
func (q *Seq) nodesBeyond(ino uint32) {
	if q.beyondInode == nil {
		q.beyondInode = map[uint32]bool{}
	}
	q.beyondInode[ino] = true
}

// inInode reports whether file blocks lo..hi have their slots in the inode page itself (i_addr),
// for an ordinary (not compressed) file.
func inInode(in Inode, lo, hi uint64) bool {
	return in.ClusterSize == 0 && lo <= hi && hi < uint64(max(in.AddrsPerInode, 0))
}

// dirtyState is the kernel's counters as the model knows them now ([gc.Dirty]); the segment
// manager adds the node pages background gc marked.
func (q *Seq) dirtyState() gc.Dirty {
	var d gc.Dirty
	certain := uint64(0)
	for _, st := range q.nodeDirty {
		if st == nodesCertain {
			certain++
		}
	}
	if len(q.nodeDirty) > 0 {
		d.Nodes = gc.Range{Min: certain, Max: max(q.dirtyMeta, certain)}
	}
	on := uint64(0)
	for _, certain := range q.meta {
		if certain {
			on++
		}
	}
	d.IMeta = gc.Range{Min: on, Max: uint64(len(q.meta)) + q.imetaExtra}
	if q.imetaExtra > 0 {
		d.IMeta.Min = 0
	}
	d.Dents = gc.Exact(q.dents)
	if q.sm != nil {
		pages, inodes := q.sm.GCDirtied()
		if pages > 0 && len(q.nodeDirty) == 0 {
			d.Nodes.Max = 0
		}
		d.Nodes.Max += pages
		d.IMeta.Max += inodes
	}
	if q.dirtyUnsure {
		d.Nodes.Min, d.IMeta.Min = 0, 0
		d.Nodes.Max = max(d.Nodes.Max, q.dirtyMeta)
	}
	return d
}

// dirtyWriteback is the counters for a writeback of file ino that writes up to pages pages out of
// place: before its first out-of-place page and after it (the file's dnode dirty, its inode
// perhaps on the meta list through the extent cache).
func (q *Seq) dirtyWriteback(ino uint32, pages uint64) (before, after gc.Dirty) {
	before = q.dirtyState()
	if pages == 0 {
		return before, before
	}
	before.Nodes.Max += pages
	before.IMeta.Max++
	if before.Nodes.Max < 1 {
		before.Nodes.Max = 1
	}
	after = before
	if q.nodeDirty[ino] != nodesCertain && !q.dirtyUnsure {
		after.Nodes.Min++
	}
	return before, after
}

// dirtyClean is a checkpoint: every dirty node, dentry and inode-meta page written.
func (q *Seq) dirtyClean() {
	q.dirtyMeta, q.nodeDirty, q.imetaExtra, q.dirtyUnsure, q.beyondInode, q.nodesByOthers = 0, nil, 0, false, nil, false
}

// setDirty gives the segment manager the counters before one of its operations.
func (q *Seq) setDirty() error {
	if q.sm == nil {
		return nil
	}
	n, err := q.pendingDents()
	if err != nil {
		return err
	}
	q.dents = n
	q.sm.Dirty = q.dirtyState()
	return nil
}

// pendingDents counts the directories' data blocks background gc marked that have not moved:
// dirty dentry pages (F2FS_DIRTY_DENTS, inode_inc_dirty_pages of a directory).
func (q *Seq) pendingDents() (uint64, error) {
	ms, err := q.marked()
	if err != nil {
		return 0, err
	}
	n := uint64(0)
	for _, m := range ms {
		dir, err := q.isDir(m.owner.ino)
		if err != nil {
			return 0, err
		}
		if dir {
			n++
		}
	}
	return n, nil
}

func (q *Seq) isDir(ino uint32) (bool, error) {
	in, err := q.inodeOf(ino)
	if err != nil {
		return false, err
	}
	return in.Type == "dir", nil
}

// fsyncNodes is f2fs_fsync_node_pages for file ino: its dirty node pages, the inode among them
// unless f2fs_skip_inode_update let f2fs_do_sync_file skip f2fs_write_inode, written out of place
// to the warm node log, which the model does not place. A file the sequence never changed writes
// none.
func (q *Seq) fsyncNodes(ino uint32) {
	st, dirty := q.nodeDirty[ino]
	_, meta := q.meta[ino]
	if !dirty && !meta && !q.dirtyUnsure {
		if _, seen := q.files[ino]; !seen {
			return
		}
	}
	n := gc.Range{Max: max(q.dirtyMeta, 1)}
	if st == nodesCertain {
		n.Min = 1
	}
	if q.sm != nil {
		q.sm.NodesWritten(n, "f2fs_fsync_node_pages")
	}
	delete(q.nodeDirty, ino)
	delete(q.beyondInode, ino)
}

// InodeBlocker is an optional part of [Owners]: the block address of inode ino's node block on the
// image (its NAT entry).
type InodeBlocker interface {
	InodeBlock(ino uint32) (uint32, error)
}

// syncInodePages places the node pages a sync's checkpoint writes where the model knows them all:
// nothing dirty but the inodes of files a write certainly touched (f2fs_write_inode put them into
// their pages), no node page written unplaced or moved before, every file a regular file whose
// inode no earlier sync of the mount wrote (its block is then the NAT's, and a second write within
// one timestamp tick would not dirty it again). Then
// f2fs_sync_node_pages writes them (step 2, file dnodes and inodes) in nid (= inode number) order
// to the warm node log (__get_segment_type_6: a file's node page, cold bit set), each through
// f2fs_do_write_node_page → f2fs_allocate_data_block: the old inode block invalidated, the log's
// next block taken, both mtimes updated. It reports whether it placed them (false: the caller
// records the writes as unplaced).
func (q *Seq) syncInodePages() (bool, error) {
	ib, ok := q.owners.(InodeBlocker)
	if !ok || q.sm.NodeSlack() > 0 || q.nodesMoved || q.dirtyUnsure || q.nodesByOthers || q.dents > 0 || len(q.sm.Pending()) > 0 {
		return false, nil
	}
	if pages, inodes := q.sm.GCDirtied(); pages+inodes > 0 {
		return false, nil
	}
	// Every inode whose page the checkpoint writes, each certainly written: its node page dirty
	// (its only dirty node page), or on the meta list (f2fs_sync_inode_meta), or dirtied by a
	// write's new mtime (the sync's f2fs_write_inode). Only buffered writes dirtied node pages since
	// the last checkpoint (nodesByOthers): each file joined the dirty inode list (file_update_time)
	// before the node inode did (its reservations), so its f2fs_write_inode comes before the node
	// pages' writeback and each inode page is written once. (Kernel-seq c1, k1, p1 show an inode
	// written twice where a zero dirtied its node page first.)
	set := map[uint32]bool{}
	for ino, st := range q.nodeDirty {
		if st != nodesCertain || q.beyondInode[ino] {
			return false, nil
		}
		set[ino] = true
	}
	for ino, certain := range q.meta {
		if !certain {
			return false, nil
		}
		set[ino] = true
	}
	for _, ino := range q.syncInodes {
		if !set[ino] && !q.timesDirty[ino] {
			return false, nil // on the dirty list by its pages only, or perhaps its inode: not known
		}
		set[ino] = true
	}
	if len(set) == 0 {
		return false, nil
	}
	inos := make([]uint32, 0, len(set))
	for ino := range set {
		inos = append(inos, ino)
	}
	slices.Sort(inos)
	var olds []gc.Block
	for _, ino := range inos {
		f, ok := q.files[ino]
		if !ok || f.Inode.Type != "file" {
			return false, nil
		}
		// A file whose inode an earlier sync wrote may be written again within the same
		// timestamp tick: file_update_time would then not dirty it (inode_needs_update_time).
		if _, placed := q.inodeAt[ino]; placed {
			return false, nil
		}
		addr, err := ib.InodeBlock(ino)
		if err != nil {
			return false, err
		}
		v := &q.vol.Volume
		if addr < v.MainBlkaddr {
			return false, fmt.Errorf("%w: inode %d's block %d lies below the main area", ErrInput, ino, addr)
		}
		olds = append(olds, blockOf(v, addr))
	}
	news, err := q.sm.WriteNodes(gc.WarmNode, olds)
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrUnmodelled, err)
	}
	if q.inodeAt == nil {
		q.inodeAt = map[uint32]uint32{}
	}
	main := q.vol.Volume.MainBlkaddr
	for i, ino := range inos {
		q.inodeAt[ino] = f2fs.SegBlock(main, news[i].Segno) + news[i].Blkoff
		for _, no := range []uint32{olds[i].Segno, news[i].Segno} {
			if !slices.Contains(q.touched, no) {
				q.touched = append(q.touched, no)
			}
		}
	}
	return true, nil
}

// InodeBlocks are the inode blocks the model placed (a sync's f2fs_sync_node_pages, [gc.State.WriteNodes]),
// by inode number: where each inode's node block is after the operations, as far as the model
// follows it. An after-image's copy-on-write of such an inode (the unmount's checkpoint writing it
// again) starts from there, not from the NAT of the image before.
func (q *Seq) InodeBlocks() map[uint32]uint32 {
	out := make(map[uint32]uint32, len(q.inodeAt))
	for ino, a := range q.inodeAt {
		out[ino] = a
	}
	return out
}

package core

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/internal/f2fs"
)

// ipu_policy bits (segment.h, enum F2FS_IPU_*).
const (
	IPUForce         uint32 = 1 << 0 // F2FS_IPU_FORCE
	IPUSSR           uint32 = 1 << 1 // F2FS_IPU_SSR
	IPUUtil          uint32 = 1 << 2 // F2FS_IPU_UTIL
	IPUSSRUtil       uint32 = 1 << 3 // F2FS_IPU_SSR_UTIL
	IPUFsync         uint32 = 1 << 4 // F2FS_IPU_FSYNC
	IPUAsync         uint32 = 1 << 5 // F2FS_IPU_ASYNC
	IPUNoCache       uint32 = 1 << 6 // F2FS_IPU_NOCACHE
	IPUHonorOPUWrite uint32 = 1 << 7 // F2FS_IPU_HONOR_OPU_WRITE
)

const (
	smallVolumeSegments       = f2fs.SmallVolumeSegments
	minIPUUtil                = 70   // DEF_MIN_IPU_UTIL
	minFsyncBlocks            = 8    // DEF_MIN_FSYNC_BLOCKS
	minHotBlocks              = 16   // DEF_MIN_HOT_BLOCKS
	adviseHot           uint8 = 0x20 // FADVISE_HOT_BIT
)

// IPUPolicyOf is the ipu_policy a mount of v runs with: the tuned value, or the kernel's default.
func IPUPolicyOf(v *Volume) uint32 {
	if v.IPUTuned {
		return v.IPUPolicy
	}
	if v.MainSegments <= smallVolumeSegments {
		return IPUForce | IPUHonorOPUWrite
	}
	return IPUFsync
}

// Data logs (CURSEG_*_DATA).
const (
	logHotData  uint8 = f2fs.CursegHotData
	logWarmData uint8 = f2fs.CursegWarmData
	logColdData uint8 = f2fs.CursegColdData
)

// How a dirty page left the page cache.
const (
	WroteInPlace  = "in-place"     // f2fs_inplace_write_data: same block, no SIT change
	WroteOutPlace = "out-of-place" // f2fs_outplace_write_data: a fresh block; the old one released
	DroppedEOF    = "past-eof"     // f2fs_write_single_data_page: beyond i_size, not written
	DroppedHole   = "truncated"    // the slot is NULL_ADDR: "This page is already truncated"
)

// PageWrite is one dirty page writeback handled, in the order it did.
type PageWrite struct {
	Path  string `json:"path"`
	Index uint64 `json:"index"`
	How   string `json:"how"`
	Old   uint32 `json:"old"`           // the slot before (NEW_ADDR, a block address)
	New   uint32 `json:"new,omitempty"` // the block written (in place: Old)
	Log   string `json:"log,omitempty"` // out of place: the current segment's log
	Segno uint32 `json:"segno,omitempty"`
}

// wbMode is how writeback was asked for.
type wbMode struct {
	ctx     context.Context // nil: never done
	sync    bool            // WB_SYNC_ALL (REQ_SYNC): filemap_write_and_wait_range, fsync
	needIPU bool            // FI_NEED_IPU: an fsync with at most min_fsync_blocks dirty pages
	hot     bool            // FI_HOT_DATA: f2fs_write_cache_pages found at most min_hot_blocks dirty pages
	// sm, when set, is the sequence's segment manager (a copy the caller keeps only if the
	// writeback succeeds): every page written out of place is allocated there (gc.State.Alloc:
	// f2fs_allocate_data_block with need_new_seg, SSR included), and the engine's overlay follows.
	// dirty is the dirty node, dentry and inode-meta pages f2fs_need_SSR reads before the first
	// page written out of place, dirtyAfter after it (the file's dnode dirty). Without sm the
	// engine's own allocator opens new segments only (no whole SIT to search for SSR).
	sm                *gc.State
	dirty, dirtyAfter gc.Dirty
	// gcing are the file's pages background gc marked (sorted indexes, [Seq.markedOf]): dirty too,
	// written out of place to the cold data log, counted for FI_HOT_DATA. They need sm.
	gcing []uint64
}

// writeback writes in's dirty pages with index in [lo, hi] as f2fs_write_cache_pages does, in
// index order: each through f2fs_write_single_data_page and f2fs_do_write_data_page, in place or
// out of place (f2fs_allocate_data_block: update_sit_entry(new, +1), update_sit_entry(old, −1),
// locate_dirty_segment; no f2fs_invalidate_blocks call). It returns the state after.
func writeback(in Input, lo, hi uint64, m wbMode) (Input, []PageWrite, error) {
	all := dirtyPages(in, m.gcing)
	var pages []uint64
	for _, p := range all {
		if p >= lo && p <= hi {
			pages = append(pages, p)
		}
	}
	if len(pages) == 0 {
		return in, nil, nil
	}
	if len(m.gcing) > 0 && m.sm == nil {
		return in, nil, fmt.Errorf("%w: writeback of pages background gc marked without the segment manager", ErrInput)
	}
	// f2fs_write_cache_pages: a file with few dirty pages (all of its pages, not the range's,
	// those background gc marked included) is written to the hot data log.
	m.hot = len(all) <= minHotBlocks
	e, err := newEngine(in, Request{}, PerBlock)
	if err != nil {
		return in, nil, err
	}
	// The volume's log positions change: work on copies of what the input shares.
	e.in.Volume.CurrentSegments = slices.Clone(in.Volume.CurrentSegments)
	e.sit.current = e.in.Volume.CurrentSegments
	var out []PageWrite
	size := in.Inode.Size
	endIndex := uint64(size) >> 12
	var cw clusterWrite
	// The dnode of the pages being written: its slots are read once and stored once, when the pages
	// move on to the next dnode (they come in index order), so a dnode's record is written once per
	// writeback, not once per page (issue 37: a copy of the node per page, ~7 KB a page).
	var node struct {
		pos          dnodePos
		buf          []uint32
		loaded, dirt bool
	}
	flush := func() {
		if node.dirt {
			e.slots.store(node.pos.start, node.buf)
			node.dirt = false
		}
	}
	for k, idx := range pages {
		if k%ctxEvery == 0 && m.ctx != nil {
			if err := m.ctx.Err(); err != nil {
				return in, nil, err
			}
		}
		pw := PageWrite{Path: in.Path, Index: idx}
		if err := e.clusterWriteOf(&cw, idx, all, lo, hi); err != nil {
			return in, nil, err
		}
		rewrite := cw.raw && idx >= cw.start && idx < cw.start+uint64(e.in.Inode.ClusterSize)
		if !rewrite && (idx > endIndex || (idx == endIndex && size&4095 == 0)) {
			pw.How = DroppedEOF
			out = append(out, pw)
			continue
		}
		if p := locate(idx, e.slots.geom); !node.loaded || p.start != node.pos.start {
			flush()
			pos, buf, _, err := e.slots.read(idx, node.buf) // its own buffer: nothing else reads into it
			if err != nil {
				return in, nil, err
			}
			node.pos, node.buf, node.loaded = pos, buf, true
		}
		buf := node.buf
		ofs := idx - node.pos.start
		old := buf[ofs]
		pw.Old = old
		if old == NullAddr {
			pw.How = DroppedHole
			out = append(out, pw)
			continue
		}
		_, gcing := slices.BinarySearch(m.gcing, idx)
		// set_cluster_dirty marked the rewritten cluster's pages page_private_gcing.
		gcing = gcing || rewrite
		if rewrite && old == CompressAddr {
			// f2fs_do_write_data_page: f2fs_i_compr_blocks_update(inode, compr_blocks − 1,
			// false); nothing once i_compr_blocks is 0.
			if cn := &e.s.counters; cn.comprBlocks > 0 {
				cn.comprBlocks -= min(cn.comprBlocks, uint64(e.in.Inode.ClusterSize)-cw.blocks)
			}
		}
		if isBlock(old) {
			act, err := e.validate(old)
			if err != nil {
				return in, nil, err
			}
			if act != ActNone {
				// f2fs_do_write_data_page: -EFSCORRUPTED; the page is not written.
				return in, nil, fmt.Errorf("%w: writeback of page %d: block %d fails f2fs_is_valid_blkaddr", ErrUnmodelled, idx, old)
			}
			// A page background gc marked always goes out of place (data.c:2687).
			ipu := false
			if !gcing {
				if ipu, err = e.inPlace(m); err != nil {
					return in, nil, err
				}
			}
			if ipu {
				pw.How, pw.New = WroteInPlace, old
				out = append(out, pw)
				continue
			}
		}
		log := e.dataLog(m)
		if gcing {
			log = logColdData // __get_segment_type_6: page_private_gcing (segment.c:3581)
		}
		var a, segno uint32
		if m.sm != nil {
			a, segno, err = e.allocSM(m, log, old)
		} else {
			a, segno, err = e.allocData(log)
		}
		if err != nil {
			return in, nil, err
		}
		if isBlock(old) {
			if err := e.releaseBlock(old, m.sm != nil); err != nil {
				return in, nil, err
			}
		}
		buf[ofs] = a
		node.dirt = true
		pw.How, pw.New, pw.Log, pw.Segno = WroteOutPlace, a, f2fs.LogName(int(log)), segno
		out = append(out, pw)
		m.dirty = m.dirtyAfter // f2fs_update_data_blkaddr dirtied the page's dnode
	}
	flush()
	next := e.nextInput()
	next.Inode.Dirty = slices.DeleteFunc(slices.Clone(in.Inode.Dirty), func(p uint64) bool { return p >= lo && p <= hi })
	if len(next.Inode.Dirty) == 0 {
		next.Inode.Dirty = nil
	}
	return next, out, nil
}

// clusterWrite is f2fs_write_cache_pages's view of a compressed file's cluster (compress.c): the
// cluster of the page being written, and whether it is a compressed cluster (COMPRESS_ADDR in its
// first slot) written back raw by f2fs_write_raw_pages, with its compressed blocks' count.
type clusterWrite struct {
	start  uint64 // first page of the cluster; valid when set
	set    bool
	raw    bool
	blocks uint64 // __f2fs_get_cluster_blocks: the cluster's slots holding a block
}

// clusterWriteOf moves cw to the cluster of page idx of a compressed file. A compressed cluster's
// pages are dirty only because f2fs_truncate_partial_cluster dirtied them all (writes to a
// compressed file are refused), so its i_size lies inside the cluster or before it. Its
// f2fs_write_multi_pages: cluster_may_compress is false when a page lies at or past
// DIV_ROUND_UP(i_size, PAGE_SIZE) (cluster_has_invalid_data), and the cluster goes to
// f2fs_write_raw_pages with compr_blocks = 1 + its blocks: every page is written, past EOF too
// (f2fs_write_single_data_page writes when compr_blocks), out of place (page_private_gcing) to the
// cold data log. A cluster wholly inside i_size is compressed again (f2fs_compress_pages), whose
// outcome the page data decides: refused; so is a cluster written only in part.
func (e *engine) clusterWriteOf(cw *clusterWrite, idx uint64, all []uint64, lo, hi uint64) error {
	ino := &e.in.Inode
	cs := uint64(ino.ClusterSize)
	if ino.Flags&FlagCompressed == 0 || cs == 0 {
		return nil
	}
	start := idx / cs * cs
	if cw.set && cw.start == start {
		return nil
	}
	*cw = clusterWrite{start: start, set: true}
	pos, buf, _, err := e.slots.read(start, e.fbuf)
	e.fbuf = buf
	if err != nil {
		return err
	}
	if buf[pos.ofs] != CompressAddr {
		return nil
	}
	for i := start; i < start+cs; i++ {
		if _, ok := slices.BinarySearch(all, i); !ok || i < lo || i > hi {
			return errUnmodelled(fmt.Sprintf("writeback of part of compressed cluster %d (pages %d–%d: f2fs_write_cache_pages → f2fs_prepare_compress_overwrite)", start/cs, start, start+cs-1))
		}
	}
	nrPages := (uint64(e.s.counters.iSize) + blockSize - 1) >> 12
	if start+cs <= nrPages {
		return errUnmodelled(fmt.Sprintf("writeback of compressed cluster %d (pages %d–%d) inside i_size: f2fs_write_multi_pages → f2fs_compress_pages compresses it again, and the page data decide whether it fits (f2fs_write_compressed_pages) or is written raw", start/cs, start, start+cs-1))
	}
	for _, a := range buf[pos.ofs : pos.ofs+int(cs)] {
		if isBlock(a) {
			cw.blocks++
		}
	}
	cw.raw = true
	return nil
}

// dirtyPages is every dirty page of in, those background gc marked (gcing, sorted) included, in
// index order: what get_dirty_pages counts.
func dirtyPages(in Input, gcing []uint64) []uint64 {
	if len(gcing) == 0 {
		return in.Inode.Dirty
	}
	all := append(slices.Clone(in.Inode.Dirty), gcing...)
	slices.Sort(all)
	return slices.Compact(all)
}

// inPlace is need_inplace_update for a page whose old block is valid: f2fs_should_update_outplace
// first (data.c:2654: a pinned file is not forced out of place; SBI_NEED_FSCK, mode=lfs and a
// compressed file are), then f2fs_should_update_inplace (pinned, cold file) and
// check_inplace_update_policy (data.c): FORCE, SSR and SSR_UTIL (when f2fs_need_SSR, evaluated on the segment manager: an answer its
// dirty-metadata bound leaves open is refused, and so is any without a segment manager), UTIL,
// ASYNC, FSYNC. Not modelled: FI_OPU_WRITE (set only by GC and defragmentation).
func (e *engine) inPlace(m wbMode) (bool, error) {
	v, ino := &e.in.Volume, &e.in.Inode
	if ino.Inline&InlinePinFile == 0 && (v.NeedFsck || e.s.counters.needFsck || v.LFS) {
		return false, nil
	}
	if ino.Inline&InlinePinFile == 0 && ino.Flags&FlagCompressed != 0 {
		// "If IO comes from compressed write path and fallback to raw write, force out-place"
		// (data.c:2676 in Debian's 6.12.117, a stable backport): every data page of a compressed
		// file, a raw cluster's too (kernel-seq x11).
		return false, nil
	}
	if ino.Inline&InlinePinFile != 0 || e.s.counters.advise&AdviseCold != 0 {
		return true, nil
	}
	p := IPUPolicyOf(v)
	util := e.s.counters.validBlocks*100/max(v.UserBlockCount, 1) > minIPUUtil
	switch {
	case p&IPUForce != 0:
		return true, nil
	case p&IPUUtil != 0 && util:
		return true, nil
	case p&IPUAsync != 0 && !m.sync:
		return true, nil
	case p&IPUFsync != 0 && m.needIPU:
		return true, nil
	}
	// Only f2fs_need_SSR can still make it in place.
	if p&IPUSSR == 0 && (p&IPUSSRUtil == 0 || !util) {
		return false, nil
	}
	if m.sm == nil {
		return false, fmt.Errorf("%w: ipu_policy %#x asks f2fs_need_SSR (check_inplace_update_policy), which needs the whole SIT (a segment manager)", ErrUnmodelled, p)
	}
	need, known := m.sm.NeedSSR(m.dirty)
	if !known {
		return false, fmt.Errorf("%w: ipu_policy %#x asks f2fs_need_SSR (check_inplace_update_policy), which the dirty node, dentry and inode pages decide here (%w)", ErrUnmodelled, p, gc.ErrSSRUnknown)
	}
	return need, nil
}

// dataLog is __get_segment_type_6 for a data page (6.12): cold files to the cold log; hot files
// and FI_HOT_DATA (set by f2fs_write_cache_pages for a file of at most min_hot_blocks dirty pages)
// to the hot log; the rest to the warm log (no write hint). Not modelled: age extent cache
// (a mount option), atomic and COW files.
func (e *engine) dataLog(m wbMode) uint8 {
	adv := e.s.counters.advise
	switch {
	case adv&AdviseCold != 0:
		return logColdData
	case e.in.Inode.Flags&FlagCompressed != 0:
		// f2fs_need_compress_data: a compressed file under compress_mode=fs (the default; the
		// image does not record the mount option).
		return logColdData
	case adv&adviseHot != 0 || m.hot:
		return logHotData
	}
	return logWarmData
}

// logPos is the data log's current segment and next block offset.
func (e *engine) logPos(log uint8) (*uint32, *uint32) {
	v, c := &e.in.Volume, &e.s.counters
	switch log {
	case logHotData:
		return &v.HotDataSegno, &c.hotBlkoff
	case logColdData:
		return &v.ColdDataSegno, &c.coldBlkoff
	}
	return &v.WarmDataSegno, &c.warmBlkoff
}

// allocData is f2fs_allocate_data_block for a data log in LFS allocation: the block at the log's
// next offset (past any block whose bit is set, as the inline conversion takes it), SIT +1 there;
// a segment filled up is replaced at once by the one new_curseg opens ([engine.newCurseg]).
func (e *engine) allocData(log uint8) (uint32, uint32, error) {
	v := &e.in.Volume
	segp, offp := e.logPos(log)
	segno := *segp
	k, _, err := e.takeBlock(segno, *offp)
	if err != nil {
		return 0, 0, err
	}
	if k >= blocksPerSeg {
		return 0, 0, fmt.Errorf("%w: %s log segment %d has no free block at or after %d", ErrInput, f2fs.LogName(int(log)), segno, *offp)
	}
	a := f2fs.SegBlock(v.MainBlkaddr, segno) + k
	*offp = k + 1
	if *offp >= blocksPerSeg {
		if err := e.newCurseg(log, segp, offp); err != nil {
			return 0, 0, err
		}
	}
	return a, segno, nil
}

// takeBlock is the engine's own block allocation (f2fs_allocate_data_block in LFS allocation, where
// the sequence has no segment manager, and an inline conversion's block): the first block of segment
// segno at or after from whose valid bit is clear, made valid (update_sit_entry +1). k is
// blocksPerSeg when the segment has none (nothing changed).
func (e *engine) takeBlock(segno, from uint32) (k uint32, st *segState, err error) {
	if st, err = e.sit.get(segno); err != nil {
		return 0, nil, err
	}
	k = from
	for k < blocksPerSeg && st.Test(k) {
		k++
	}
	if k < blocksPerSeg {
		e.sit.modify(segno, st)
		st.SetValid(k)
	}
	return k, st, nil
}

// allocSM is f2fs_allocate_data_block for a data page of log whose block was old, on the
// sequence's segment manager (m.sm, gc.State.Alloc): the block, and where the log went when the
// block filled its segment — a new segment or, by need_new_seg → get_ssr_segment → change_curseg,
// a partly valid one (SSR). The engine's overlay takes the same block and log move. An allocation
// whose next segment the model cannot know (f2fs_need_SSR's dirty metadata, ENOSPC) is refused.
func (e *engine) allocSM(m wbMode, log uint8, old uint32) (uint32, uint32, error) {
	v := &e.in.Volume
	var from *gc.Block
	if isBlock(old) {
		b := blockOf(v, old)
		from = &b
	}
	before := m.sm.Current()[log].Segno
	to, err := m.sm.Alloc(int(log), from, m.dirty)
	switch {
	case errors.Is(err, gc.ErrSSRUnknown):
		return 0, 0, fmt.Errorf("%w: %w", ErrUnmodelled, err)
	case errors.Is(err, gc.ErrNoSpace):
		return 0, 0, fmt.Errorf("%w: no free section for the %s log's new segment (%w)", ErrUnmodelled, f2fs.LogName(int(log)), err)
	case err != nil:
		return 0, 0, fmt.Errorf("%w: %w", ErrInput, err)
	}
	// The segment manager wrote the block and released the old one (its entries are the SIT):
	// the overlay reads both entries back.
	if err := e.sit.reread(to.Segno, m.sm); err != nil {
		return 0, 0, err
	}
	if from != nil {
		if err := e.sit.reread(from.Segno, m.sm); err != nil {
			return 0, 0, err
		}
	}
	segp, offp := e.logPos(log)
	now := m.sm.Current()[log]
	if now.Segno != before {
		if err := e.moveLog(before, now.Segno); err != nil {
			return 0, 0, err
		}
	}
	*segp, *offp = now.Segno, now.Blkoff
	return f2fs.SegBlock(v.MainBlkaddr, to.Segno) + to.Blkoff, to.Segno, nil
}

// moveLog moves a log from segment old to segment no in the overlay: no is a current segment, old
// is classed by its valid blocks (locate_dirty_segment).
func (e *engine) moveLog(old, no uint32) error {
	v := &e.in.Volume
	st, err := e.sit.get(no)
	if err != nil {
		return err
	}
	for j, c := range v.CurrentSegments {
		if c == old {
			v.CurrentSegments[j] = no
		}
	}
	e.sit.current = v.CurrentSegments
	e.sit.modify(no, st)
	st.class = SegCurrent
	ost, err := e.sit.get(old)
	if err != nil {
		return err
	}
	e.sit.modify(old, ost)
	ost.class = classify(ost.Count(), false)
	return nil
}

// newCurseg replaces a full current segment as new_curseg(sbi, type, false) does (segment.c:2889):
// the segment is package gc's [gc.NewSegment] (__get_next_segno's hint, get_new_segment's section
// rule), the one allocator the segment manager uses too, asked through a view of the engine's SIT
// overlay ([overlayFree]). The old segment leaves the current ones (locate_dirty_segment). No free
// section is the kernel's ENOSPC, after which it stops checkpoints: refused as not modelled.
// secs_per_zone is taken as 1 (mkfs.f2fs's default): [Volume] does not carry it.
func (e *engine) newCurseg(log uint8, segp, offp *uint32) error {
	v := &e.in.Volume
	old := *segp
	free := &overlayFree{e: e}
	g := gc.Geometry{MainSegs: v.MainSegments, SegsPerSec: max(v.SegsPerSec, 1), SecsPerZone: 1}
	no, err := gc.NewSegment(g, int(log), old, v.CurrentSegments, free)
	if free.err != nil {
		return free.err
	}
	if errors.Is(err, gc.ErrNoSpace) {
		return fmt.Errorf("%w: no free section for the %s log's new segment (%w)", ErrUnmodelled, f2fs.LogName(int(log)), err)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInput, err)
	}
	if err := e.moveLog(old, no); err != nil {
		return err
	}
	*segp, *offp = no, 0
	return nil
}

// overlayFree is free_i as the engine's SIT overlay knows it, for [gc.NewSegment]: a segment is free
// (its free_segmap bit clear) when it has no valid block and is neither a current segment nor
// prefree (a segment emptied since the last checkpoint stays in use until the checkpoint frees it);
// a section is free (free_secmap) only when all its segments are. The kernel's free_secmap can lag
// behind that in one case the overlay does not track: a section whose last segment was freed while
// a log was in the section keeps its bit (__set_test_and_free skips IS_CURSEC) until another of its
// segments is freed. A SIT read error is kept and reported by the caller.
type overlayFree struct {
	e   *engine
	err error
}

// SegFree reports whether segment segno is free. Volume.Prefree needs no look-up here: the overlay
// classes a listed segment prefree when it loads it, and a segment emptied since as it empties.
func (f *overlayFree) SegFree(segno uint32) bool {
	if slices.Contains(f.e.in.Volume.CurrentSegments, segno) {
		return false
	}
	st, err := f.e.sit.get(segno)
	if err != nil {
		if f.err == nil {
			f.err = err
		}
		return false
	}
	return st.Count() == 0 && st.class != SegPrefree
}

// SecFree reports whether every segment of section secno is free.
func (f *overlayFree) SecFree(secno uint32) bool {
	per := max(f.e.in.Volume.SegsPerSec, 1)
	for segno := secno * per; segno < (secno+1)*per; segno++ {
		if !f.SegFree(segno) {
			return false
		}
	}
	return true
}

// releaseBlock is update_sit_entry(old, −1) and locate_dirty_segment(old's segment) inside the
// allocator: the old block of a page written out of place. told: the segment manager released it
// (allocSM read its entry back), so only the segment's class follows.
func (e *engine) releaseBlock(a uint32, told bool) error {
	v := &e.in.Volume
	segno := segnoOf(v, a)
	st, err := e.sit.get(segno)
	if err != nil {
		return err
	}
	e.sit.modify(segno, st)
	if !told {
		// writeback validated the old block (its bit is set): one block off the count.
		st.Invalidate(f2fs.SegOff(a, v.Segment0Blkaddr), 1)
	}
	if st.class != SegCurrent {
		st.class = classify(st.Count(), false)
		if st.Count() <= 0 {
			st.class = SegPrefree
		}
	}
	return nil
}

// ErrUnmodelled reports an operation whose effect the model does not know.
var ErrUnmodelled = errors.New("core: not modelled")

// addDirty merges the successful fill_zero pages into a dirty list.
func addDirty(dirty []uint64, fills []FillZero) []uint64 {
	if len(fills) == 0 {
		return dirty
	}
	out := slices.Clone(dirty)
	for _, f := range fills {
		if k, found := slices.BinarySearch(out, f.Index); !found {
			out = slices.Insert(out, k, f.Index)
		}
	}
	return out
}

// addSegs merges segment numbers into a sorted list.
func addSegs(list, add []uint32) []uint32 {
	out := slices.Clone(list)
	for _, no := range add {
		if k, found := slices.BinarySearch(out, no); !found {
			out = slices.Insert(out, k, no)
		}
	}
	return out
}

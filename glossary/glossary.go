package glossary

// Entry is one term. Text is one or two plain sentences; OnDisk says what the term is in the image
// (a value or a structure, with the C names of include/linux/f2fs_fs.h); Source names the kernel
// function or field it comes from (fs/f2fs/).
type Entry struct {
	Slug   string `json:"slug"` // lower case with hyphens: "new-addr"; the page's anchor is "term-" + Slug
	Term   string `json:"term"` // as people write it: "NEW_ADDR"
	Group  string `json:"group"`
	Text   string `json:"text"`
	OnDisk string `json:"onDisk"`
	Source string `json:"source"`
	// Match lists the words that name the term in running text (narration, tour stops), longest
	// first, matched case-sensitively on word boundaries. Empty: the term is linked only where a page
	// names it explicitly.
	Match []string `json:"match,omitempty"`
	See   []string `json:"see,omitempty"` // related slugs
}

// Groups, in the order the glossary page shows them.
const (
	GroupSlots    = "Slots and dnodes"
	GroupRuns     = "Runs and calls"
	GroupSIT      = "The SIT and segments"
	GroupOutcomes = "Requests and outcomes"
)

// Groups returns the group names in page order.
func Groups() []string {
	return []string{GroupSlots, GroupRuns, GroupSIT, GroupOutcomes}
}

// Lookup returns the entry with slug.
func Lookup(slug string) (Entry, bool) {
	for _, e := range All() {
		if e.Slug == slug {
			return e, true
		}
	}
	return Entry{}, false
}

// Anchor returns the id of slug's entry on the glossary page and its data-testid: "term-" + slug.
func Anchor(slug string) string { return "term-" + slug }

// All returns every entry, grouped as [Groups] orders them, a fresh copy on every call.
func All() []Entry {
	return []Entry{
		// Slots and dnodes.
		{Slug: "slot", Term: "slot", Group: GroupSlots,
			Text:   "One 4-byte entry of a dnode's address array: slot i of a file holds where file block i lives — a block address, or NULL_ADDR, NEW_ADDR or COMPRESS_ADDR.",
			OnDisk: "__le32 i_addr[] of struct f2fs_inode (923 entries less the extra attributes and inline xattrs: 873 on the demo image) and addr[1018] of struct direct_node.",
			Source: "data_blkaddr(); f2fs_get_dnode_of_data() sets dn.ofs_in_node to the slot.",
			Match:  []string{"slots", "slot"}, See: []string{"dnode", "null-addr", "new-addr"}},
		{Slug: "null-addr", Term: "NULL_ADDR", Group: GroupSlots,
			Text:   "A slot holding 0: a hole. No block is allocated and nothing counts it; zero-range first reserves it, so it becomes NEW_ADDR.",
			OnDisk: "0x00000000 in a slot.",
			Source: "NULL_ADDR (include/linux/f2fs_fs.h); pass 1 of f2fs_do_zero_range counts these and calls f2fs_reserve_new_blocks().",
			Match:  []string{"NULL_ADDR"}, See: []string{"new-addr", "enospc"}},
		{Slug: "new-addr", Term: "NEW_ADDR", Group: GroupSlots,
			Text:   "A block reserved but never written: it counts in valid_block_count and i_blocks and reads as zeros, but it has no SIT bit. Every slot zero-range releases becomes NEW_ADDR, and pass 2 skips NEW_ADDR slots without ending a pending run.",
			OnDisk: "0xFFFFFFFF in a slot.",
			Source: "NEW_ADDR; f2fs_reserve_new_blocks() writes it, f2fs_do_zero_range() skips it (if (blkaddr == NEW_ADDR) continue).",
			Match:  []string{"NEW_ADDR"}, See: []string{"null-addr", "pending-run"}},
		{Slug: "compress-addr", Term: "COMPRESS_ADDR", Group: GroupSlots,
			Text:   "The compressed-cluster marker: slot 0 of a compressed cluster holds it instead of an address; the cluster's compressed blocks follow. It is not a block, and f2fs refuses to zero-range a compressed file at all.",
			OnDisk: "0xFFFFFFFE in the first slot of a cluster of a file with F2FS_COMPR_FL (i_flags 0x4); the cluster is 1 << i_log_cluster_size blocks.",
			Source: "COMPRESS_ADDR; f2fs_compressed_file(); f2fs_fallocate() returns -EOPNOTSUPP for it.",
			Match:  []string{"COMPRESS_ADDR"}, See: []string{"eopnotsupp"}},
		{Slug: "dnode", Term: "dnode", Group: GroupSlots,
			Text:   "A node block that holds data slots: the inode itself (its first slots) or a direct node. Indirect nodes hold node ids of direct nodes, not slots, so only the inode and direct nodes are dnodes.",
			OnDisk: "struct f2fs_node: an f2fs_inode (i_addr[], i_nid[5]) or a direct_node (addr[1018]); an indirect_node holds nid[1018].",
			Source: "struct dnode_of_data; f2fs_get_dnode_of_data() finds (or with ALLOC_NODE creates) the dnode of a file block.",
			Match:  []string{"dnodes", "dnode"}, See: []string{"inode", "direct-node", "indirect-node", "dnode-chunk"}},
		{Slug: "inode", Term: "inode", Group: GroupSlots,
			Text:   "The file's own node block: its attributes, its first slots, and the ids of up to five more nodes (two direct, two indirect, one double indirect).",
			OnDisk: "struct f2fs_inode in a node block: i_size, i_blocks, i_addr[], i_nid[5] (i_nid[0], i_nid[1] direct; i_nid[2], i_nid[3] indirect; i_nid[4] double indirect).",
			Source: "F2FS_INODE(); ADDRS_PER_INODE().",
			See:    []string{"dnode", "direct-node"}},
		{Slug: "direct-node", Term: "direct node", Group: GroupSlots,
			Text:   "A node block of 1,018 slots; the player names it by its path from the inode, such as i_nid[0] or i_nid[2]/3.",
			OnDisk: "struct direct_node { __le32 addr[1018]; } plus the node footer.",
			Source: "ADDRS_PER_BLOCK(); get_node_path() computes the path of a file block.",
			Match:  []string{"direct nodes", "direct node"}, See: []string{"dnode", "indirect-node"}},
		{Slug: "indirect-node", Term: "indirect node", Group: GroupSlots,
			Text:   "A node block of 1,018 node ids pointing at direct nodes (or, double indirect, at indirect nodes). It holds no slots, so it is never a dnode chunk itself.",
			OnDisk: "struct indirect_node { __le32 nid[1018]; }.",
			Source: "NIDS_PER_BLOCK; get_node_path().",
			Match:  []string{"indirect nodes", "indirect node"}, See: []string{"dnode", "direct-node"}},
		{Slug: "dnode-chunk", Term: "dnode chunk", Group: GroupSlots,
			Text:   "The slots of one dnode that the range covers. f2fs_zero_range calls f2fs_do_zero_range once per chunk, with that dnode held, so a pending run never spans two chunks.",
			OnDisk: "slots ofs_in_node … end_offset − 1 of one inode or direct node.",
			Source: "f2fs_zero_range(): f2fs_get_dnode_of_data(ALLOC_NODE), end = min(pg_end, index + ADDRS_PER_PAGE − ofs_in_node), f2fs_do_zero_range(&dn, index, end).",
			Match:  []string{"dnode chunks", "dnode chunk"}, See: []string{"dnode", "flush-end-of-chunk"}},
		{Slug: "inline-data", Term: "inline data", Group: GroupSlots,
			Text:   "A small file's data kept inside its inode block instead of in data blocks. Zeroing it first moves the data out to a block of its own.",
			OnDisk: "F2FS_INLINE_DATA (0x2) in i_inline; the data sits where i_addr[1…] would be.",
			Source: "f2fs_convert_inline_inode().",
			Match:  []string{"inline data"}, See: []string{"slot"}},

		// Runs and calls.
		{Slug: "per-block", Term: "per-block mode", Group: GroupRuns,
			Text:   "Upstream f2fs_do_zero_range: one f2fs_invalidate_blocks(addr, 1) per valid block, so one SIT lock hold per block.",
			OnDisk: "nothing on disk differs: both modes leave the same slots and SIT bits.",
			Source: "fs/f2fs/file.c f2fs_do_zero_range(), pass 2.",
			Match:  []string{"per-block mode"}, See: []string{"batched", "sit-lock"}},
		{Slug: "batched", Term: "batched mode", Group: GroupRuns,
			Text:   "The patch zrviz shows: contiguous addresses are gathered into a pending run and released with one f2fs_invalidate_blocks(blkstart, blklen) per run.",
			OnDisk: "nothing on disk differs: both modes leave the same slots and SIT bits.",
			Source: "f2fs_do_zero_range() with blkstart/blklen (f2fs list, 2026), on the len argument f2fs_invalidate_blocks has had since 6.14.",
			Match:  []string{"batched mode"}, See: []string{"per-block", "pending-run", "flush"}},
		{Slug: "physical-run", Term: "physical run", Group: GroupRuns,
			Text:   "Slots whose addresses follow each other — a, a+1, a+2 … — in file order; NEW_ADDR and NULL_ADDR slots between them do not break it. The batched mode releases a run with one call per dnode chunk it crosses.",
			OnDisk: "consecutive block addresses in the main area.",
			Source: "the test blkaddr == blkstart + blklen in the patched f2fs_do_zero_range().",
			Match:  []string{"physical runs", "physical run"}, See: []string{"pending-run", "flush"}},
		{Slug: "pending-run", Term: "pending run", Group: GroupRuns,
			Text:   "The run the batched mode has gathered but not released yet: it grows while each next valid slot holds blkstart+blklen, and is flushed when one does not, when the chunk ends, or after an error.",
			OnDisk: "nothing: two local variables, blkstart and blklen.",
			Source: "blkstart, blklen in the patched f2fs_do_zero_range().",
			Match:  []string{"pending runs", "pending run"}, See: []string{"flush", "physical-run"}},
		{Slug: "flush", Term: "flush", Group: GroupRuns,
			Text:   "Releasing the pending run with one f2fs_invalidate_blocks(blkstart, blklen) call — one SIT lock hold. It happens for one of four reasons: discontiguous, end of chunk, end of range, after an error.",
			OnDisk: "the SIT bits of blkstart … blkstart+blklen−1 clear.",
			Source: "the patched f2fs_do_zero_range(): if (blklen) f2fs_invalidate_blocks(sbi, blkstart, blklen).",
			Match:  []string{"flushes", "flushed", "flush"}, See: []string{"flush-discontiguous", "flush-end-of-chunk", "flush-end-of-range", "flush-after-error"}},
		{Slug: "flush-discontiguous", Term: "flush: discontiguous", Group: GroupRuns,
			Text:   "The next valid slot does not hold blkstart+blklen, so the run is released before the new address is even validated. Flushing first is what still catches an address listed twice: its SIT bit is already clear when f2fs_is_valid_blkaddr looks.",
			OnDisk: "—",
			Source: "the patched f2fs_do_zero_range(): if (blklen && blkaddr != blkstart + blklen) flush, then validate.",
			Match:  []string{"discontiguous"}, See: []string{"flush", "efscorrupted"}},
		{Slug: "flush-end-of-chunk", Term: "flush: end of chunk", Group: GroupRuns,
			Text:   "The chunk has no slot left, so the flush after the loop releases what is pending. The next chunk is another f2fs_do_zero_range call, which is why a contiguous 64 MiB file still takes 17 calls.",
			OnDisk: "—",
			Source: "the flush after pass 2's loop in the patched f2fs_do_zero_range().",
			Match:  []string{"end of the chunk", "end of chunk", "end-of-chunk"}, See: []string{"flush", "dnode-chunk"}},
		{Slug: "flush-end-of-range", Term: "flush: end of range", Group: GroupRuns,
			Text:   "The end-of-chunk flush of the range's last chunk: the last call of the run.",
			OnDisk: "—",
			Source: "the flush after pass 2's loop, in the last f2fs_do_zero_range() call of f2fs_zero_range().",
			Match:  []string{"end of the range", "end of range"}, See: []string{"flush", "flush-end-of-chunk"}},
		{Slug: "flush-after-error", Term: "flush: after an error", Group: GroupRuns,
			Text:   "Pass 2 stopped on an error while a run was pending; the flush after the loop releases it all the same, so the blocks before the bad slot lose their SIT bits as in the per-block mode.",
			OnDisk: "—",
			Source: "the patched f2fs_do_zero_range(): the flush after the loop runs on the error path too.",
			Match:  []string{"after the error", "after an error", "after-error"}, See: []string{"flush", "efscorrupted"}},
		{Slug: "f2fs-invalidate-blocks", Term: "f2fs_invalidate_blocks", Group: GroupRuns,
			Text:   "The kernel function that releases blocks: it takes the SIT lock, clears the blocks' valid bits, lowers each segment's valid count and files the segment as dirty or prefree.",
			OnDisk: "changes the SIT entries (in memory; written at the next checkpoint).",
			Source: "fs/f2fs/segment.c f2fs_invalidate_blocks(sbi, addr, len) — len since 6.14; upstream zero-range still passes 1.",
			Match:  []string{"f2fs_invalidate_blocks"}, See: []string{"sit-lock", "valid-map"}},

		// The SIT and segments.
		{Slug: "sit", Term: "SIT", Group: GroupSIT,
			Text:   "The segment information table: for every segment, how many of its blocks are valid and which ones, its log type and age. It is the allocator's record of which blocks hold live data.",
			OnDisk: "struct f2fs_sit_block (55 f2fs_sit_entry a block) at sit_blkaddr, in two copies the checkpoint's SIT bitmap chooses between; recent changes sit in the SIT journal of the checkpoint's summaries.",
			Source: "struct sit_info and struct seg_entry in memory (fs/f2fs/segment.h).",
			Match:  []string{"SIT"}, See: []string{"sit-entry", "valid-map", "sit-lock"}},
		{Slug: "sit-entry", Term: "SIT entry", Group: GroupSIT,
			Text:   "One segment's record in the SIT: its valid-block count and log type, its 512-bit valid map and its mtime.",
			OnDisk: "struct f2fs_sit_entry, 74 bytes: __le16 vblocks (bits 0–9 valid count, bits 10–15 log type), __u8 valid_map[64], __le64 mtime.",
			Source: "struct seg_entry (valid_blocks, cur_valid_map, ckpt_valid_map, mtime); update_sit_entry().",
			Match:  []string{"SIT entries", "SIT entry"}, See: []string{"sit", "valid-map", "log-type"}},
		{Slug: "valid-map", Term: "valid map", Group: GroupSIT,
			Text:   "512 bits, one per block of a segment: set means the block holds live data. Releasing a block clears its bit.",
			OnDisk: "valid_map[64] of struct f2fs_sit_entry; block k is bit 0x80 >> (k & 7) of byte k >> 3.",
			Source: "seg_entry.cur_valid_map; f2fs_test_and_clear_bit() in update_sit_entry().",
			Match:  []string{"valid maps", "valid map", "cur_valid_map", "SIT bits", "SIT bit"}, See: []string{"sit-entry"}},
		{Slug: "sit-lock", Term: "SIT lock (sentry_lock)", Group: GroupSIT,
			Text:   "The read-write semaphore that guards the in-memory SIT. f2fs_invalidate_blocks takes it for writing once per call: per-block zeroing takes it once per block, the batched mode once per run.",
			OnDisk: "nothing: a lock in memory.",
			Source: "sit_info.sentry_lock; down_write(&sit_i->sentry_lock) in f2fs_invalidate_blocks().",
			Match:  []string{"SIT lock holds", "SIT lock hold", "SIT locks", "SIT lock", "sentry_lock"}, See: []string{"f2fs-invalidate-blocks", "sit"}},
		{Slug: "segment", Term: "segment", Group: GroupSIT,
			Text:   "512 consecutive blocks of the main area (2 MiB with 4 KiB blocks): the unit the SIT describes and the logs fill.",
			OnDisk: "segno = (addr − main_blkaddr) >> log_blocks_per_seg; block offset = (addr − segment0_blkaddr) & 511.",
			Source: "GET_SEGNO(), GET_BLKOFF_FROM_SEG0(); struct seg_entry.",
			Match:  []string{"segments", "segment"}, See: []string{"section", "sit-entry"}},
		{Slug: "section", Term: "section", Group: GroupSIT,
			Text:   "segs_per_sec consecutive segments that are allocated and cleaned together; on most images (the demo's too) a section is one segment.",
			OnDisk: "log_segs_per_sec in the superblock.",
			Source: "struct sec_entry; GET_SEC_FROM_SEG().",
			Match:  []string{"sections", "section"}, See: []string{"segment"}},
		{Slug: "log-type", Term: "log type", Group: GroupSIT,
			Text:   "Which of the six logs wrote a segment: hot, warm or cold data, hot, warm or cold node. The image page colours segments by it, and so can the player.",
			OnDisk: "bits 10–15 of vblocks in struct f2fs_sit_entry: CURSEG_HOT_DATA 0 … CURSEG_COLD_NODE 5.",
			Source: "seg_entry.type; CURSEG_HOT_DATA … CURSEG_COLD_NODE in fs/f2fs/segment.h.",
			Match:  []string{"log types", "log type"}, See: []string{"current-segment", "sit-entry"}},
		{Slug: "current-segment", Term: "current segment", Group: GroupSIT,
			Text:   "A segment an active log is writing into. locate_dirty_segment leaves current segments off the dirty and prefree lists, even when they lose every valid block.",
			OnDisk: "cur_data_segno[3] and cur_node_segno[3] of struct f2fs_checkpoint.",
			Source: "struct curseg_info; IS_CURSEG() in locate_dirty_segment().",
			Match:  []string{"current segments", "current segment", "active log"}, See: []string{"log-type", "dirty"}},
		{Slug: "dirty", Term: "dirty", Group: GroupSIT,
			Text:   "A segment with some valid and some invalid blocks: the garbage collector may move its valid blocks out to reclaim it.",
			OnDisk: "not stored: rebuilt at mount from the SIT.",
			Source: "the DIRTY list of dirty_seglist_info; locate_dirty_segment().",
			Match:  []string{"dirty"}, See: []string{"prefree", "free", "full"}},
		{Slug: "prefree", Term: "prefree", Group: GroupSIT,
			Text:   "A segment that has just lost its last valid block. It becomes free only when the next checkpoint is written, so a crash before that still finds the old blocks where the checkpoint says they are.",
			OnDisk: "not stored: valid count 0 in the SIT, not yet free in the checkpoint.",
			Source: "the PRE list of dirty_seglist_info; locate_dirty_segment(); set_prefree_as_free_segments() at checkpoint.",
			Match:  []string{"prefree"}, See: []string{"checkpoint", "free", "dirty"}},
		{Slug: "free", Term: "free", Group: GroupSIT,
			Text:   "A segment with no valid block that the allocator may hand to a log.",
			OnDisk: "free_segment_count in struct f2fs_checkpoint; a clear bit in the in-memory free_segmap.",
			Source: "struct free_segmap_info; __set_free() / __set_inuse().",
			See:    []string{"prefree", "dirty"}},
		{Slug: "full", Term: "full", Group: GroupSIT,
			Text:   "Every block of the segment is valid (512 of 512). zrviz's word: the kernel keeps no list of full segments, they are simply neither dirty nor free.",
			OnDisk: "valid count 512 in the SIT entry.",
			Source: "se.valid_blocks == usable blocks; locate_dirty_segment() removes such a segment from the DIRTY list.",
			See:    []string{"dirty", "free"}},
		{Slug: "checkpoint", Term: "checkpoint", Group: GroupSIT,
			Text:   "A consistent snapshot of the file system's metadata; after a crash f2fs mounts from the latest valid one. Prefree segments become free when the next one is written.",
			OnDisk: "two checkpoint packs from cp_blkaddr (struct f2fs_checkpoint, summaries, the NAT and SIT journals); the valid pack with the higher version wins.",
			Source: "f2fs_write_checkpoint(), do_checkpoint().",
			Match:  []string{"checkpoints", "checkpoint"}, See: []string{"prefree"}},
		{Slug: "victim", Term: "victim (GC)", Group: GroupSIT,
			Text:   "The section the garbage collector chooses to clean: its valid blocks are moved elsewhere so that the whole section can become free. zrviz names it by its first segment, as the kernel's tracepoint does.",
			OnDisk: "nothing on disk until the moves: in memory cur_victim_sec (foreground) or a bit of victim_secmap (background).",
			Source: "f2fs_get_victim() in gc.c, called from f2fs_gc() for F2FS_IOC_GARBAGE_COLLECT.",
			See:    []string{"greedy", "cost-benefit", "section"}},
		{Slug: "greedy", Term: "greedy (GC policy)", Group: GroupSIT,
			Text:   "The foreground cleaner's policy: take the dirty section with the fewest valid blocks, because it is the cheapest to clean now. Ties go to the first found, searching from where the last search stopped.",
			OnDisk: "reads the SIT's valid counts of the section's segments.",
			Source: "get_gc_cost() with GC_GREEDY: get_valid_blocks(sbi, segno, true).",
			See:    []string{"victim", "cost-benefit"}},
		{Slug: "cost-benefit", Term: "cost-benefit (GC policy)", Group: GroupSIT,
			Text:   "The background cleaner's policy, from LFS: prefer sections that are old and mostly empty, since their remaining blocks are unlikely to change soon. Benefit = (100 − u) · age / (100 + u); the kernel compares UINT_MAX minus it.",
			OnDisk: "reads the SIT's valid counts and mtimes: u = valid blocks per segment in percent, age from the section's mean mtime between the oldest and the newest.",
			Source: "get_cb_cost() in gc.c; min/max mtime from init_min_max_mtime() at mount.",
			See:    []string{"victim", "greedy", "age"}},
		{Slug: "age", Term: "age (cost-benefit)", Group: GroupSIT,
			Text:   "How old a section looks to cost-benefit, 0 (newest) to 100 (oldest): 100 − 100 · (mtime − min_mtime) / (max_mtime − min_mtime). Every write or invalidation pulls a segment's mtime toward the current time.",
			OnDisk: "the SIT entry's mtime (seconds of the volume's running time: the checkpoint's elapsed_time plus the seconds since mount).",
			Source: "get_cb_cost(); update_segment_mtime() in segment.c.",
			See:    []string{"cost-benefit", "sit-entry"}},

		// Requests and outcomes.
		{Slug: "keep-size", Term: "KEEP_SIZE", Group: GroupOutcomes,
			Text:   "FALLOC_FL_KEEP_SIZE: zero (and reserve) past the end of the file without changing i_size.",
			OnDisk: "mode bit 0x01 of fallocate(2); f2fs sets FADVISE_KEEP_SIZE (0x10) in i_advise when the range ran past i_size.",
			Source: "f2fs_zero_range(): without KEEP_SIZE it ends with f2fs_i_size_write(), with it file_set_keep_isize().",
			Match:  []string{"FALLOC_FL_KEEP_SIZE", "KEEP_SIZE"}, See: []string{"fill-zero"}},
		{Slug: "fill-zero", Term: "fill_zero (partial page)", Group: GroupOutcomes,
			Text:   "A page the range covers only in part is zeroed in the page cache by fill_zero, not released: no f2fs_invalidate_blocks call. Writeback later rewrites a page that has a block in place on a volume of at most 16 GB (ipu_policy F2FS_IPU_FORCE, as on the demo image), out of place on a larger one (the allocator then releases the old block); a hole gets a new block, or stays NEW_ADDR past i_size with KEEP_SIZE.",
			OnDisk: "nothing until writeback; a hole is reserved first (NULL_ADDR becomes NEW_ADDR).",
			Source: "fill_zero() in fs/f2fs/file.c: f2fs_get_new_data_page(), zero_user(); f2fs_tuning_parameters() in fs/f2fs/super.c sets ipu_policy = F2FS_IPU_FORCE | F2FS_IPU_HONOR_OPU_WRITE when MAIN_SEGS <= SMALL_VOLUME_SEGMENTS (16 GB).",
			Match:  []string{"fill_zero"}, See: []string{"keep-size", "new-addr"}},
		{Slug: "eopnotsupp", Term: "EOPNOTSUPP", Group: GroupOutcomes,
			Text:   "Operation not supported (95): f2fs_fallocate refuses FALLOC_FL_ZERO_RANGE on compressed and pinned files, and vfs_fallocate mode flags it does not take, before anything changes.",
			OnDisk: "F2FS_COMPR_FL (0x4) in i_flags marks a compressed file; F2FS_PIN_FILE in i_inline a pinned one.",
			Source: "f2fs_fallocate(): if (f2fs_compressed_file(inode) || f2fs_is_pinned_file(inode)) return -EOPNOTSUPP for ZERO_RANGE.",
			Match:  []string{"EOPNOTSUPP"}, See: []string{"compress-addr"}},
		{Slug: "einval", Term: "EINVAL", Group: GroupOutcomes,
			Text:   "Invalid argument (22): a negative offset or a length that is not positive. The VFS answers it, not f2fs: vfs_fallocate checks the arguments before it calls the file system's fallocate (kernel case 10: length 0).",
			OnDisk: "nothing: the call never reaches f2fs.",
			Source: "vfs_fallocate() in fs/open.c: if (offset < 0 || len <= 0) return -EINVAL.",
			Match:  []string{"EINVAL"}, See: []string{"efbig"}},
		{Slug: "efbig", Term: "EFBIG", Group: GroupOutcomes,
			Text:   "File too large (27): offset + length passes the largest file f2fs allows (s_maxbytes, about 2^32 blocks). vfs_fallocate refuses it before f2fs is called.",
			OnDisk: "nothing: the call never reaches f2fs.",
			Source: "vfs_fallocate() in fs/open.c: check_add_overflow(offset, len, &sum) or sum > inode->i_sb->s_maxbytes return -EFBIG; f2fs sets s_maxbytes from max_file_blocks().",
			Match:  []string{"EFBIG"}, See: []string{"einval"}},
		{Slug: "eisdir", Term: "EISDIR", Group: GroupOutcomes,
			Text:   "Is a directory (21): a directory cannot be opened for writing, so open(O_RDWR) fails and fallocate is never called (kernel case 11); vfs_fallocate would refuse a directory with -EISDIR too.",
			OnDisk: "nothing: the call never reaches f2fs.",
			Source: "may_open() in fs/namei.c (a directory opened with MAY_WRITE: -EISDIR); vfs_fallocate() in fs/open.c: if (S_ISDIR(inode->i_mode)) return -EISDIR.",
			Match:  []string{"EISDIR"}, See: []string{"einval"}},
		{Slug: "enospc", Term: "ENOSPC", Group: GroupOutcomes,
			Text:   "No space left (28): no free block for the holes the chunk must reserve (or for a node it must create). A partial reservation leaves NULL_ADDR slots, and pass 2 stops at the first with -ENOSPC.",
			OnDisk: "valid_block_count would pass user_block_count less the reserved blocks.",
			Source: "inc_valid_block_count() in f2fs_reserve_new_blocks(); f2fs_new_node_page().",
			Match:  []string{"ENOSPC"}, See: []string{"null-addr", "new-addr"}},
		{Slug: "efscorrupted", Term: "EFSCORRUPTED", Group: GroupOutcomes,
			Text:   "Structure needs cleaning (117, EUCLEAN): a slot's address lies outside the main area, or its SIT bit is already clear. f2fs logs it, marks the file system for fsck and stops the call.",
			OnDisk: "the next checkpoint sets CP_FSCK_FLAG; s_errors records ERROR_INVALID_BLKADDR.",
			Source: "f2fs_is_valid_blkaddr(sbi, blkaddr, DATA_GENERIC_ENHANCE); SBI_NEED_FSCK.",
			Match:  []string{"EFSCORRUPTED"}, See: []string{"valid-map", "flush-discontiguous"}},
	}
}

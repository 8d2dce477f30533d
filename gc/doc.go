// Package gc models what F2FS does to a volume's segment information table (SIT) when it takes a
// checkpoint and when it garbage-collects, as Linux 6.12 (fs/f2fs/gc.c, segment.c, segment.h of
// 6.12.117) does it: F2FS_IOC_WRITE_CHECKPOINT ([State.Checkpoint]) and F2FS_IOC_GARBAGE_COLLECT
// with sync = 1 (foreground, greedy) and sync = 0 (background, cost-benefit) ([State.GC]).
//
// The model is pure and deterministic. It starts from the SIT as a mount reads it ([Mount]: every
// main-area segment's valid count, valid map, mtime and log type, the six current segments and
// the checkpoint's elapsed_time), keeps the kernel's in-memory state (dirty and prefree segment
// maps, dirty_secmap and victim_secmap, last_victim per policy, min/max mtime, the free segment
// map), and changes it only through the ops. The clock is a parameter: the seconds since mount
// ([State.Now], 0 by default), which decide the mtime update_segment_mtime writes and so, once
// the SIT has changed in the session, cost-benefit's ages. max_mtime starts at the checkpoint's
// elapsed_time ([Volume.MountSeconds] more if the mount itself crossed a second boundary, which a
// slow mount does now and then).
//
// Victim selection follows f2fs_get_victim (gc.c:786–974) exactly: select_policy (gc.c:275) with
// the section as the unit (ofs_unit = segs_per_sec; dirty_secmap for large sections, the DIRTY
// segment map otherwise), max_search capped at max_victim_search (4096, DEF_MAX_VICTIM_SEARCH) for
// background calls only, the round-robin start at last_victim[gc_mode] and its update when the
// search ends (gc.c:933–942), sec_usage_check (segment.h:916: current sections and cur_victim_sec
// skipped), background skipping sections already in victim_secmap (gc.c:910), ties to the first
// found (p.min_cost > cost, gc.c:921), greedy cost = the section's valid blocks, cost-benefit from
// get_cb_cost (gc.c:362) with min_mtime/max_mtime from init_min_max_mtime (segment.c:5481, max =
// the checkpoint's elapsed_time plus the seconds since mount), and foreground calls first taking a
// section an earlier background call marked (check_bg_victims, gc.c:345). The cost a pick reports
// is the kernel's p.min_cost, as the f2fs_get_victim tracepoint prints it: for a check_bg_victims
// pick that is get_max_cost's initial value (2·ofs_unit·512 for greedy), not the section's cost.
//
// What a victim's blocks do (do_garbage_collect, gc.c:1759): a foreground call moves every valid
// block within the ioctl — data to the cold data log (__get_segment_type_6 sends a page marked
// gcing to CURSEG_COLD_DATA), node blocks rewritten to their node log (taken as the log the victim
// segment belongs to) — with f2fs_allocate_data_block's SIT updates (segment.c:3675:
// update_segment_mtime on the old and the new address, update_sit_entry +1/−1, a new segment for
// a full log as get_new_segment picks it, [NewSegment], locate_dirty_segment). The victim ends prefree; the call
// returns 0 when a whole section was freed, else EAGAIN (f2fs_gc, err_gc_skipped). A background
// call only marks the section in victim_secmap and its blocks dirty: node blocks move at the next
// checkpoint (f2fs_sync_node_pages in block_operations), data blocks at the next sync (writeback;
// a checkpoint does not write regular files' data). ENODATA when no section is a candidate.
//
// f2fs_gc's loop (gc.c:1907) is modelled: a call on a volume short of free sections
// (has_not_enough_free_secs: free sections ≤ reserved_sections, [Volume.ReservedSegments]) turns
// foreground, writes a checkpoint first when segments are prefree, and collects greedy victims
// until enough sections are free or none is left, with the checkpoint "to reclaim prefree
// segments" when free sections ≤ upper_secs + NR_GC_CHECKPOINT_SECS; [State.Balance] is the same
// loop as f2fs_balance_fs starts it (BG_GC, no_bg_gc, nr_free_secs 1). Pick.Rounds lists the
// searches after the first, Pick.Checkpoints what each checkpoint inside freed. A foreground
// ioctl returns EAGAIN when the call freed no whole section (err_gc_skipped, gc.c:2058),
// ENODATA when a search found nothing (also after earlier rounds moved blocks), EIO once a log
// found no free segment (get_new_segment's ENOSPC stops checkpoints, segment.c:2806;
// [State.CheckpointError]; need_new_seg tries SSR first, see below).
// __get_secs_required's dirty node, dentry and inode-meta pages are the caller's counts
// ([State.Dirty], ranges), changed by the segment manager's own moves and checkpoints; where the two
// ends of a range give two answers the state is marked unmodelled.
//
// A full data log goes where need_new_seg (segment.c:3166) sends it: a new segment ([NewSegment])
// or, by slack space recycling, a partly valid segment get_ssr_segment finds (f2fs_get_victim in SSR
// mode over the checkpointed valid maps; change_curseg), for the segment manager's own moves and for
// core's write-back ([State.Alloc]); where f2fs_need_SSR's dirty-metadata term leaves the answer
// open, the model refuses ([ErrSSRUnknown], ssr.go). Node logs keep the conservative
// [State.MaySSR] refusal.
//
// Node page writes of a checkpoint, a sync or an fsync (f2fs_sync_node_pages, f2fs_fsync_node_pages
// → f2fs_do_write_node_page) are not placed one by one: [State.NodesWritten] records how many at
// most, and every answer they could change — a node log that may have filled, a node segment that
// may have emptied, a victim search a node section could turn — is refused (nodes.go).
//
// Package gc knows blocks, not files: a data move is a [Move] from one block to another, and the
// caller (core.Seq) finds the owner and moves its slot. The State is the one owner of the SIT
// ([Entry], sit.go: the only writer of valid counts, maps and mtimes): a mounted core.Seq's walks
// read their entries from it ([State.SITEntry]), stamp update_segment_mtime with its clock
// ([State.MtimeNow]) and hand the entries back ([State.Adopt]); its write-backs allocate here
// ([State.Alloc]) and read the entries back; a log core moved within a segment is told by
// [State.SetCurrent]. Nothing is replayed, so the SIT is never held twice.
//
// Left out: zoned devices (blkzoned, zone capacity), pinned files and sections, checkpoint=disable
// (SBI_CP_DISABLED), gc_urgent and gc_idle modes, age-threshold GC (atgc: not modelled, a mount
// with atgc is not handled, nor AT_SSR), SSR for node logs (refused where possible), mode=
// fragment, the placement of the node pages a checkpoint writes (the dnodes a data move dirties
// among them: counted, not placed; see above), and the order writeback moves background-marked
// data in (the model moves it in the victim's block order). The model moves every valid block of
// a victim, so a foreground call frees its section; the kernel skips blocks it cannot move (an
// inode's i_gc_rwsem contended, atomic or pinned files, pages under writeback). Node blocks go
// back to the log their segment belongs to, which is where __get_segment_type_6 sends them
// unless something other than the kernel's own allocator placed them.
//
// The kernel-written fixtures in testdata (its README) hold every pick of foreground and
// background series on images with 1 and 4 segments per section against the model.
package gc

package player

import (
	"fmt"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/internal/units"
)

// The tour of a punch hole or a truncate (issue 28): both go through
// f2fs_truncate_data_blocks_range, whose two batchings (6.12 per block, 6.14's runs) differ where
// these stops are. Their texts name the kernel's code as docs/kernel-semantics.md §16 does.
const (
	// StopNullEndsRun: batched, a NULL_ADDR slot ends the pending run (its "goto next" flushes).
	StopNullEndsRun = "null-ends-run"
	// StopValidatedFirst: f2fs_is_valid_blkaddr_raw runs before the pending run is flushed: an
	// address it refuses is cleared and skipped, and a block mapped twice inside one pending run
	// passes and is invalidated twice ("Bitmap was wrongly cleared").
	StopValidatedFirst = "validated-first"
	// StopFreedTwice: the other face of StopValidatedFirst, in the batched mode: a block mapped
	// twice passed validation while its first copy was pending, and a call frees it again ("Bitmap
	// was wrongly cleared").
	StopFreedTwice = "freed-twice"
	// StopNodeFree: truncate_node frees a node block with a call of its own.
	StopNodeFree = "node-free"
	// StopNewOwnCall: a NEW_ADDR slot makes its own f2fs_invalidate_blocks call, which returns at
	// once (NEW_ADDR + 1 wraps, so no run ever extends past it).
	StopNewOwnCall = "new-own-call"
)

// walkFn names the function whose loop walks the dnodes, and the one it calls per dnode.
func walkFn(op core.Op) (outer, perDnode string) {
	switch op {
	case core.OpPunch:
		return "f2fs_truncate_hole", "f2fs_truncate_data_blocks_range"
	case core.OpTruncate:
		return "f2fs_truncate_inode_blocks", "f2fs_truncate_data_blocks_range"
	case core.OpUnlink:
		return "f2fs_evict_inode's f2fs_truncate", "f2fs_truncate_data_blocks_range"
	}
	return "f2fs_zero_range", "f2fs_do_zero_range"
}

// callWords is the system call a run plays, as a program writes it.
func callWords(req core.Request, path string) string {
	switch req.Op {
	case core.OpPunch:
		return fmt.Sprintf("fallocate(fd, FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE, %s, %s) on %s", units.Group(req.Offset), units.Group(req.Length), path)
	case core.OpTruncate:
		return fmt.Sprintf("truncate(%s, %s)", path, units.Group(req.Offset))
	case core.OpUnlink:
		return fmt.Sprintf("unlink(%s), its last link", path)
	}
	return fmt.Sprintf("fallocate(fd, FALLOC_FL_ZERO_RANGE%s, %s, %s) on %s",
		map[bool]string{true: "|FALLOC_FL_KEEP_SIZE"}[req.KeepSize], units.Group(req.Offset), units.Group(req.Length), path)
}

// startTruncText is the start stop's second sentence for a punch or a truncate.
func startTruncText(o *Outline) string {
	n := len(o.Chunks)
	if n == 0 {
		switch o.spec.Request.Op {
		case core.OpTruncate:
			return "No slot lies past the new size, so no dnode is walked."
		case core.OpUnlink:
			return "The file has no data block (inline data, or nothing written), so f2fs_evict_inode walks no dnode: f2fs_remove_inode_page frees the inode's own block, truncate_node's one call."
		}
		return "No whole page is punched, so no dnode is walked."
	}
	outer, per := walkFn(o.spec.Request.Op)
	s := fmt.Sprintf("The walk covers %s in %s: %s calls %s once per dnode, which sets every slot to NULL_ADDR and frees what it held with f2fs_invalidate_blocks — once per block in 6.12, once per physical run with 6.14's batching, where a NULL slot or an address that fails validation ends the run.",
		plural(o.prefix[n], "slot", "slots"), plural(uint64(n), "dnode chunk", "dnode chunks"), outer, per)
	switch o.spec.Request.Op {
	case core.OpTruncate:
		s += " A dnode left empty is freed too: truncate_node releases its block."
	case core.OpUnlink:
		s += " The unlink removed the name and put the inode on the orphan list (f2fs_add_orphan_inode); its last iput evicts it: i_size 0, the page cache dropped (dirty pages too), every block from 0 freed, every dnode and indirect node freed (truncate_node), and last f2fs_remove_inode_page frees the inode's own block and takes it off the orphan list."
	}
	return s
}

// chunkTruncText is the new-chunk stop's text for a punch or a truncate.
func chunkTruncText(ev core.Event, op core.Op) string {
	outer, per := walkFn(op)
	return fmt.Sprintf("%s's loop calls f2fs_get_dnode_of_data for slot %s: its slots live in %s, so this is a new call of %s, covering %s slots. The previous dnode's run was flushed when its loop ended, and dec_valid_block_count took its freed blocks off: a run never spans two dnodes.",
		outer, units.Group(ev.Slot), nodeName(ev.Node), per, units.Group(ev.Count))
}

// endOfChunkTruncText is the first end-of-chunk flush's text, and lastTrunc the last one's, for a
// punch or a truncate; f holds the call's start, length and node.
func endOfChunkTruncText(f []string) string {
	return fmt.Sprintf("The dnode in %s has no slot left, so after its loop f2fs_truncate_data_blocks_range flushes what is pending: f2fs_invalidate_blocks(%s, %s), then dec_valid_block_count(nr_free). The next dnode is another call, so a run never spans two dnodes even when the addresses go on.", f[2], f[0], f[1])
}

func endOfRangeTruncText(f []string, op core.Op) string {
	after := "f2fs_truncate_hole returns, and i_size stays (punch hole always keeps the size)."
	switch op {
	case core.OpTruncate:
		after = "The walk then frees the dnodes left empty, and truncate returns."
	case core.OpUnlink:
		after = "The walk then frees every node, and f2fs_remove_inode_page frees the inode's own block: nothing of the file is left."
	}
	return fmt.Sprintf("The last dnode of the walk (%s) is done, and the flush after its loop makes the last data call: f2fs_invalidate_blocks(%s, %s). %s", f[2], f[0], f[1], after)
}

// discontiguousTruncText: in f2fs_truncate_data_blocks_range the new address has been validated
// (and its slot cleared) before the pending run is flushed — the other order from the seed's zero.
func discontiguousTruncText(ev core.Event, pd core.Pending) string {
	return fmt.Sprintf("Slot %s does not hold blkstart+blklen (%s), so the batched loop flushes the pending run: f2fs_invalidate_blocks(%s, %s), one SIT lock hold. Unlike the zero's batching, the slot's address was validated (and the slot cleared) before this flush: a block repeated inside the pending run still has its SIT bit, so validation passes.",
		units.Group(ev.Slot), units.Group(uint64(pd.Start)+uint64(pd.Len)), units.Group(ev.Addr), units.Group(ev.Len))
}

func nullEndsRunText(ev core.Event) string {
	return fmt.Sprintf("Slot %s is NULL_ADDR. f2fs_truncate_data_blocks_range's batched loop has nothing to free there, but it does not just skip it as the zero's loop skips NEW_ADDR: \"goto next\" flushes the pending run, f2fs_invalidate_blocks(%s, %s). A hole in the file splits a run even when the addresses on both sides are contiguous.",
		units.Group(ev.Slot), units.Group(uint64(ev.Addr)), units.Group(uint64(ev.Len)))
}

func skipText(ev core.Event, mode core.Mode) string {
	what := "its SIT bit is clear"
	if ev.Action == core.ActSkipBounds {
		what = "it lies outside the main area"
	}
	s := fmt.Sprintf("Slot %s holds block %s, and %s: f2fs_is_valid_blkaddr_raw fails (\"%s\"). The slot was already set to NULL_ADDR; the block is not freed and not counted in nr_free, and the volume is marked for fsck — no error is returned.",
		units.Group(ev.Slot), units.Group(uint64(ev.Addr)), what, ev.Message())
	if mode == core.Batched {
		s += " The batched loop validates before it flushes: were the repeated block still in the pending run, its bit would be set and it would pass."
	}
	return s
}

func wronglyClearedText(ev core.Event) string {
	return fmt.Sprintf("This call frees %s of segment %s that %s already clear: a block mapped twice came back while its first copy was still in the pending run. f2fs_truncate_data_blocks_range validated it before flushing, so f2fs_is_valid_blkaddr_raw still saw the bit set; the flush then invalidates it a second time, and update_sit_entry logs \"Bitmap was wrongly cleared\". The seed's zero flushes first and catches it as -EFSCORRUPTED.",
		plural(uint64(ev.Len), "block", "blocks"), units.Group(ev.Segno), plural(ev.Count, "bit was", "bits were"))
}

func nodeFreeText(ev core.Event) string {
	return fmt.Sprintf("Node %s holds no slot the file keeps, so truncate_node frees it: f2fs_invalidate_blocks(%s, 1) releases its block — a call of its own, never batched with data — then dec_valid_node_count (valid_node_count %s → %s) and its NAT entry becomes NULL_ADDR.",
		ev.Node, slotWord(ev.Addr), units.Group(ev.Before), units.Group(ev.After))
}

func newOwnCallText(ev core.Event, mode core.Mode) string {
	s := fmt.Sprintf("Slot %s holds NEW_ADDR: reserved, never written. f2fs_truncate_data_blocks_range clears it and counts it in nr_free (valid_block_count holds it), and calls f2fs_invalidate_blocks(NEW_ADDR, 1), which returns at once: no SIT bit to clear.", units.Group(ev.Slot))
	if mode == core.Batched {
		s += " Batched, it is a run of its own: NEW_ADDR + 1 wraps to 0, so the next slot never extends it, and a punch over preallocated slots makes one call per slot."
	}
	return s
}

func slotWord(a uint32) string {
	switch a {
	case core.NullAddr:
		return "NULL_ADDR"
	case core.NewAddr:
		return "NEW_ADDR"
	}
	return units.Group(uint64(a))
}

// returnsFn is who returns the run's result: on success (ok) the zero's f2fs_zero_range, a
// punch's f2fs_punch_hole, a truncate's f2fs_setattr; on an error core.ReturnedBy's (open,
// vfs_fallocate, f2fs_fallocate, f2fs_zero_range) for a zero, the same with f2fs_punch_hole for a
// punch, and the system call for a truncate (core.ReturnedBy knows fallocate's checks only).
func returnsFn(in core.Input, req core.Request, ok bool) string {
	switch req.Op {
	case core.OpPunch:
		if by := core.ReturnedBy(in, req); !ok && by != "f2fs_zero_range" {
			return by
		}
		return "f2fs_punch_hole"
	case core.OpTruncate:
		if ok {
			return "f2fs_setattr"
		}
		return "truncate"
	case core.OpUnlink:
		if ok {
			return "f2fs_unlink"
		}
		return "unlink"
	}
	if ok {
		return "f2fs_zero_range"
	}
	return core.ReturnedBy(in, req)
}

// isTrunc says whether the outline plays a punch or a truncate.
func (o *Outline) isTrunc() bool { return o.spec.Request.Op != core.OpZero }

// wronglyCleared says whether some mode invalidated a block whose SIT bit was already clear.
func (o *Outline) wronglyCleared() bool {
	for _, f := range o.Final {
		if f.Stats.WronglyCleared > 0 {
			return true
		}
	}
	return false
}

// truncArgsText is why truncate(2) is refused before f2fs truncates anything (do_sys_truncate,
// vfs_truncate, f2fs_setattr's setattr_prepare → inode_newsize_ok; core's opArgCheck).
// unlinkArgsText is why an unlink is refused before anything changes (may_delete, f2fs_unlink).
func unlinkArgsText(errno string) string {
	switch errno {
	case "EISDIR":
		return "The path names a directory: unlink(2) fails with -EISDIR (rmdir removes directories)."
	case "EPERM":
		return "The inode is immutable or append-only: may_delete refuses the unlink with -EPERM."
	case "EIO":
		return "The file system has a checkpoint error (it was shut down): f2fs_unlink returns -EIO at once."
	}
	return "The call is refused before anything changes: -" + errno + "."
}

func truncArgsText(errno string) string {
	switch errno {
	case "EINVAL":
		return "truncate(2) refuses a negative size, or a file that is not a regular file, with -EINVAL before f2fs sees it."
	case "EISDIR":
		return "The path names a directory: truncate(2) fails with -EISDIR."
	case "EPERM":
		return "The inode is immutable or append-only: truncate(2) is refused with -EPERM."
	case "EIO":
		return "The file system has a checkpoint error (it was shut down): f2fs_setattr returns -EIO at once."
	case "EFBIG":
		return "The new size is past the largest file f2fs allows (s_maxbytes): inode_newsize_ok returns -EFBIG."
	}
	return "The call is refused before anything changes: -" + errno + "."
}

package core

import (
	"fmt"
	"strconv"

	"github.com/zrviz/zrviz/internal/units"
)

// EventKind says what an [Event] is about.
type EventKind uint8

// Event kinds, in the order they can occur within a run. What each field
// means for each kind is listed at [Event].
const (
	EvStart         EventKind = iota // fallocate entered
	EvError                          // the call fails here
	EvInlineConvert                  // f2fs_convert_inline_inode
	EvFillZero                       // fill_zero of a partial page
	EvChunkEnter                     // f2fs_get_dnode_of_data: a dnode chunk begins
	EvNodeAlloc                      // a missing node is allocated (ALLOC_NODE)
	EvReserve                        // pass 1: f2fs_reserve_new_blocks
	EvSlot                           // pass 2 visits a slot
	EvInvalidate                     // f2fs_invalidate_blocks is called
	EvSITUpdate                      // one segment piece of that call, under the SIT lock
	EvChunkLeave                     // the chunk ends
	EvSize                           // i_size or the keep-size flag changes
	EvDone                           // f2fs_zero_range returns
	EvNodeFree                       // truncate_node: a node block is freed
)

var eventKindNames = [...]string{"start", "error", "inline-convert", "fill-zero", "chunk-enter",
	"node-alloc", "reserve", "slot", "invalidate", "sit-update", "chunk-leave", "size", "done", "node-free"}

// String returns the kind's JSON name ("chunk-enter", ...).
func (k EventKind) String() string {
	if int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// MarshalText encodes the kind by name.
func (k EventKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Action refines an event: what a slot visit does, why a call is made, or
// what caused an error.
type Action uint8

// Actions.
const (
	ActNone Action = iota
	// EvSlot
	ActSkipNew    // NEW_ADDR: skipped (does not end a batched run)
	ActInvalidate // per-block: valid, invalidated on its own
	ActStartRun   // batched: valid, starts a run
	ActExtendRun  // batched: valid, extends the pending run
	// EvInvalidate
	ActPerBlock      // per-block call
	ActDiscontiguous // batched flush: the next address is not blkstart+blklen
	ActEndOfChunk    // batched flush after the chunk's last slot
	ActFlushOnError  // batched flush after pass 2 stopped on an error
	// EvError
	ActBadArgs     // VFS/f2fs argument checks
	ActReserve     // f2fs_reserve_new_blocks found no space at all
	ActNullSlot    // pass 2 met a NULL slot left by a partial reservation
	ActNodeAlloc   // no space for a node block
	ActBounds      // blkaddr outside the main area
	ActSITBit      // blkaddr's SIT bit is clear
	ActFillReserve // fill_zero could not reserve its page
	// EvSize
	ActSetSize  // i_size grows
	ActKeepSize // KEEP_SIZE: i_size kept, FADVISE_KEEP_SIZE_BIT set
	// Punch hole and truncate (f2fs_truncate_data_blocks_range, truncate).
	ActPunch          // EvStart, EvDone: the call is fallocate(PUNCH_HOLE|KEEP_SIZE)
	ActTruncate       // EvStart, EvDone: the call is truncate(2)
	ActSkipNull       // EvSlot: NULL_ADDR, nothing to free (batched: it ends the pending run)
	ActSkipBounds     // EvSlot: the address is outside the main area: cleared, not freed
	ActSkipSITBit     // EvSlot: the address's SIT bit is clear: cleared, not freed
	ActClear          // EvSlot, per-block: cleared to NULL_ADDR, its value freed on its own
	ActClearStartRun  // EvSlot, batched: cleared, its value starts a run
	ActClearExtendRun // EvSlot, batched: cleared, its value extends the pending run
	ActRunBreak       // EvInvalidate, batched: a NULL slot or a skipped address ends the run
	ActNodeFree       // EvInvalidate: truncate_node frees a node block
	ActDecValid       // EvChunkLeave: dec_valid_block_count(nr_free)
	ActTruncSize      // EvSize: truncate_setsize
	ActPartialPage    // EvFillZero: truncate_partial_data_page
	ActUnlink         // EvStart, EvDone: the call is unlink(2) of the last link; EvSize: evict's i_size 0
	ActPartialCluster // EvFillZero: f2fs_truncate_partial_cluster read and dirtied a compressed cluster
)

// opAction is the action EvStart and EvDone carry for a punch or a truncate.
func opAction(o Op) Action {
	switch o {
	case OpTruncate:
		return ActTruncate
	case OpUnlink:
		return ActUnlink
	}
	return ActPunch
}

var actionNames = [...]string{"", "skip-new", "invalidate", "start-run", "extend-run",
	"per-block", "discontiguous", "end-of-chunk", "after-error", "bad-args", "reserve", "null-slot",
	"node-alloc", "bounds", "sit-bit", "fill-reserve", "set-size", "keep-size",
	"punch", "truncate", "skip-null", "skip-bounds", "skip-sit-bit", "clear", "clear-start-run",
	"clear-extend-run", "run-break", "node-free", "dec-valid", "truncate-size", "partial-page", "unlink",
	"partial-cluster"}

// String returns the action's JSON name ("extend-run", ...).
func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "action(" + strconv.Itoa(int(a)) + ")"
}

// MarshalText encodes the action by name.
func (a Action) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// SlotState classifies a slot value: "addr", "null", "new" or "compress".
type SlotState uint8

// Slot states.
const (
	StateNull SlotState = iota
	StateNew
	StateAddr
	StateCompress
)

var slotStateNames = [...]string{"null", "new", "addr", "compress"}

// String returns "null", "new", "addr" or "compress".
func (s SlotState) String() string {
	if int(s) < len(slotStateNames) {
		return slotStateNames[s]
	}
	return "?"
}

// MarshalText encodes the state by name.
func (s SlotState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

func stateOf(a uint32) SlotState {
	switch a {
	case NullAddr:
		return StateNull
	case NewAddr:
		return StateNew
	case CompressAddr:
		return StateCompress
	}
	return StateAddr
}

// Event is one step of a run. Step counts from 1; Slot is the file block
// index the event is about (non-decreasing over a run, so two modes can be
// stepped in lockstep by slot); Chunk is the dnode chunk's ordinal (0-based,
// -1 before the first).
//
// Every other field has one meaning per kind, and is zero (State: null,
// Action: none) when the kind does not list it (TestEventFields checks):
//
//	start           Before = offset (truncate: the size), After = length (bytes, as requested;
//	                negative ones as 0); Action = punch or truncate for those calls
//	error           Errno; Action = the cause:
//	                  bad-args       nothing more (the VFS/f2fs argument checks)
//	                  reserve        Count = NULL slots to reserve (1 for the inline conversion)
//	                  node-alloc     Node = the node that could not be allocated
//	                  null-slot      State = null (Slot is the NULL slot)
//	                  bounds,sit-bit Addr = the block address that failed, State = its slot's state
//	                  fill-reserve   Addr, Len, State as fill-zero's (the page's byte range, slot state)
//	inline-convert  Addr = the block written to slot 0 (0: only the inline flag cleared);
//	                Before, After = valid_block_count
//	fill-zero       Count = the page (Slot too, except for a punch's tail page and truncate's
//	                partial page, which come when the walk is past them); Addr = byte offset in
//	                the page, Len = bytes zeroed; State = the page's slot before; a NULL one is
//	                reserved: Before, After = valid_block_count (else 0); Action = partial-page
//	                for truncate_partial_data_page, partial-cluster for f2fs_truncate_partial_cluster
//	                on a compressed cluster (Count, Addr, Len: the page holding the new size and
//	                its bytes zeroed; Before, After = the cluster's pages [Before, After), every one
//	                read and dirtied, those past the size zeroed whole)
//	chunk-enter     Slot = the chunk's first slot, Count = its slots; Node names the dnode
//	node-alloc      Node; Before, After = valid_block_count
//	reserve         Count = NULL slots in the chunk, Len = how many were reserved (< Count: partial);
//	                Before, After = valid_block_count
//	slot            State = the slot's value; Action = skip-new, invalidate (per-block), start-run
//	                or extend-run (batched); Addr = the block (not for skip-new); Len = the pending
//	                run's length after the slot (batched). Punch and truncate: skip-null,
//	                skip-bounds or skip-sit-bit (cleared, not freed), clear (per-block),
//	                clear-start-run or clear-extend-run (batched, Len as above); Addr = the block
//	                when the slot held one
//	invalidate      f2fs_invalidate_blocks(Addr, Len); Action = why (per-block, discontiguous,
//	                end-of-chunk, after-error, run-break, node-free); Count = the call's number in
//	                the run, from 1; State = new or compress when Addr is NEW_ADDR or
//	                COMPRESS_ADDR (the call returns at once)
//	sit-update      Segno; Addr = the piece's first block, Len = its blocks; Before, After = the
//	                segment's valid blocks; SegBefore, SegAfter = its class; Count = bits found
//	                already clear ("Bitmap was wrongly cleared"), Blk = the first of them
//	chunk-leave     Count = slots processed (the extent cache drops them); Errno if the chunk failed;
//	                punch and truncate: Action = dec-valid, Len = nr_free, Before, After =
//	                valid_block_count
//	node-free       truncate_node: Node, Addr = its block (NEW_ADDR: never written); Before,
//	                After = valid_node_count
//	size            Action = set-size (Before, After = i_size) or keep-size (i_size kept: Before =
//	                After = i_size, FADVISE_KEEP_SIZE_BIT set) or truncate-size (truncate_setsize)
//	done            Errno ("" = 0); Action = punch or truncate for those calls
//
// docs/architecture.md has the same table.
type Event struct {
	Step      int64     `json:"step"`
	Kind      EventKind `json:"kind"`
	Slot      uint64    `json:"slot"`
	Chunk     int32     `json:"chunk"`
	Action    Action    `json:"action,omitempty"`
	State     SlotState `json:"state"`
	Addr      uint32    `json:"addr,omitempty"`
	Len       uint32    `json:"len,omitempty"`
	Segno     uint32    `json:"segno,omitempty"`
	Count     uint64    `json:"count,omitempty"`
	Before    uint64    `json:"before,omitempty"`
	After     uint64    `json:"after,omitempty"`
	SegBefore SegClass  `json:"segBefore,omitempty"`
	SegAfter  SegClass  `json:"segAfter,omitempty"`
	Blk       uint32    `json:"blk,omitempty"`
	Errno     string    `json:"errno,omitempty"`
	Node      string    `json:"node,omitempty"`
}

// clear zeroes ev's payload for pass 2 to fill again: every field but
// Step, Kind, Slot and Chunk, which every event sets. It writes the strings
// only when set, so an event reused on the heap (Walk's) costs no write
// barriers.
func (ev *Event) clear() {
	ev.Action, ev.State, ev.Addr, ev.Len, ev.Segno = 0, 0, 0, 0, 0
	ev.Count, ev.Before, ev.After, ev.SegBefore, ev.SegAfter, ev.Blk = 0, 0, 0, 0, 0, 0
	if ev.Errno != "" {
		ev.Errno = ""
	}
	if ev.Node != "" {
		ev.Node = ""
	}
}

// Message returns the kernel log line an error event prints, or "".
func (e Event) Message() string {
	switch {
	case e.Kind == EvSlot && e.Action == ActSkipBounds:
		return "access invalid blkaddr:" + strconv.FormatUint(uint64(e.Addr), 10)
	case e.Kind == EvSlot && e.Action == ActSkipSITBit:
		return "Inconsistent error blkaddr:" + strconv.FormatUint(uint64(e.Addr), 10) + ", sit bitmap:0"
	case e.Kind == EvError && e.Action == ActBounds:
		return "access invalid blkaddr:" + strconv.FormatUint(uint64(e.Addr), 10)
	case e.Kind == EvError && e.Action == ActSITBit:
		return "Inconsistent error blkaddr:" + strconv.FormatUint(uint64(e.Addr), 10) + ", sit bitmap:0"
	case e.Kind == EvSITUpdate && e.Count > 0:
		return fmt.Sprintf("Bitmap was wrongly cleared, blk:%d", e.Blk)
	}
	return ""
}

func plural(v uint64, one, many string) string {
	if v == 1 {
		return "1 " + one
	}
	return units.Group(v) + " " + many
}

// badArgsNarration says which layer refuses a request before any change (see [ReturnedBy]).
func badArgsNarration(errno string) string {
	why := ""
	switch errno {
	case "EISDIR":
		why = "open(O_RDWR) of a directory fails with -EISDIR, so fallocate is never reached"
	case "ELOOP":
		why = "open(O_RDWR|O_NOFOLLOW) of a symbolic link fails with -ELOOP, so fallocate is never reached"
	case "EINVAL":
		why = "vfs_fallocate refuses a negative offset or a length that is not positive with -EINVAL, before f2fs sees the call"
	case "EFBIG":
		why = "vfs_fallocate refuses offset + length past s_maxbytes with -EFBIG, before f2fs sees the call"
	case "EPERM":
		why = "vfs_fallocate refuses an immutable or append-only inode with -EPERM, before f2fs sees the call"
	case "ENODEV":
		why = "vfs_fallocate refuses what is not a regular file or block device with -ENODEV"
	case "EIO":
		why = "f2fs_fallocate finds a checkpoint error (the file system is shut down): -EIO"
	case "EOPNOTSUPP":
		why = "-EOPNOTSUPP: vfs_fallocate refuses flags it does not take, f2fs_fallocate a compressed or pinned file"
	default:
		why = "-" + errno
	}
	return "the call is refused before any change: " + why
}

// Narrate returns one present-tense sentence describing the event, naming
// the kernel function and its numbers.
func (e Event) Narrate() string {
	switch e.Kind {
	case EvStart:
		switch e.Action {
		case ActPunch:
			return fmt.Sprintf("fallocate(FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE) for offset %s, length %s: vfs_fallocate checks the arguments, then f2fs_fallocate calls f2fs_punch_hole", units.Group(e.Before), units.Group(e.After))
		case ActTruncate:
			return fmt.Sprintf("truncate(2) to %s bytes: f2fs_setattr sets the size, then f2fs_truncate frees what lies past it", units.Group(e.Before))
		case ActUnlink:
			return "unlink(2) of the last link: f2fs_unlink → f2fs_delete_entry clears the dentry in the directory's inode, f2fs_drop_nlink puts the inode on the orphan list (f2fs_add_orphan_inode), and the last iput evicts it"
		}
		return fmt.Sprintf("fallocate(FALLOC_FL_ZERO_RANGE) for offset %s, length %s: vfs_fallocate checks the arguments before f2fs_fallocate sees them", units.Group(e.Before), units.Group(e.After))
	case EvError:
		switch e.Action {
		case ActBounds, ActSITBit:
			return fmt.Sprintf("f2fs_is_valid_blkaddr rejects slot %s: \"%s\"; f2fs_do_zero_range stops with -EFSCORRUPTED", units.Group(e.Slot), e.Message())
		case ActReserve:
			return fmt.Sprintf("f2fs_reserve_new_blocks finds no free block for %s: the chunk returns -ENOSPC with no slot changed", plural(e.Count, "NULL slot", "NULL slots"))
		case ActNullSlot:
			return fmt.Sprintf("slot %s is still NULL_ADDR after a partial reservation: f2fs_do_zero_range stops with -ENOSPC", units.Group(e.Slot))
		case ActNodeAlloc:
			return fmt.Sprintf("f2fs_get_dnode_of_data cannot allocate node %s: -%s", e.Node, e.Errno)
		case ActFillReserve:
			return fmt.Sprintf("fill_zero cannot reserve page %s: -ENOSPC", units.Group(e.Slot))
		}
		if e.Action == ActBadArgs {
			return badArgsNarration(e.Errno)
		}
		return fmt.Sprintf("the call is refused before any change: -%s", e.Errno)
	case EvInlineConvert:
		if e.Addr == 0 {
			return "f2fs_convert_inline_inode clears the inline-data flag (no data to move)"
		}
		return fmt.Sprintf("f2fs_convert_inline_inode writes the inline data out of place to block %s and points slot 0 at it (valid_block_count %s → %s)", units.Group(e.Addr), units.Group(e.Before), units.Group(e.After))
	case EvFillZero:
		if e.Action == ActPartialCluster {
			return fmt.Sprintf("f2fs_truncate_partial_cluster reads compressed cluster %s (pages %s–%s) into the page cache, zeroes bytes %s–4,095 of page %s and every page after it, and dirties the whole cluster: no block, slot or SIT entry changes now; writeback writes the cluster again",
				units.Group(e.Before/max(e.After-e.Before, 1)), units.Group(e.Before), units.Group(e.After-1), units.Group(e.Addr), units.Group(e.Count))
		}
		if e.Action == ActPartialPage {
			return fmt.Sprintf("truncate_partial_data_page zeroes bytes %s–4,095 of page %s past the new size and dirties it; writeback writes it later", units.Group(e.Addr), units.Group(e.Count))
		}
		s := fmt.Sprintf("fill_zero zeroes bytes %s–%s of page %s in the page cache (no invalidation now)", units.Group(e.Addr), units.Group(e.Addr+e.Len-1), units.Group(e.Count))
		if e.State == StateNull {
			s += fmt.Sprintf("; its NULL slot is reserved as NEW_ADDR (valid_block_count %s → %s)", units.Group(e.Before), units.Group(e.After))
		}
		return s
	case EvChunkEnter:
		// Chunks are numbered from 1 in every sentence a person reads, as the player's cursor line
		// ("chunk 1 of 17") and the CLI do; Event.Chunk stays an index from 0.
		return fmt.Sprintf("f2fs_get_dnode_of_data resolves %s: chunk %d covers slots %s–%s", e.Node, e.Chunk+1, units.Group(e.Slot), units.Group(e.Slot+e.Count-1))
	case EvNodeAlloc:
		return fmt.Sprintf("f2fs_new_node_page allocates missing node %s (valid_block_count %s → %s)", e.Node, units.Group(e.Before), units.Group(e.After))
	case EvReserve:
		if uint64(e.Len) < e.Count {
			return fmt.Sprintf("f2fs_reserve_new_blocks: only %s of %s NULL slots fit and become NEW_ADDR (valid_block_count %s → %s)", units.Group(e.Len), units.Group(e.Count), units.Group(e.Before), units.Group(e.After))
		}
		return fmt.Sprintf("f2fs_reserve_new_blocks: %s in this chunk become NEW_ADDR (valid_block_count %s → %s)", plural(e.Count, "NULL slot", "NULL slots"), units.Group(e.Before), units.Group(e.After))
	case EvSlot:
		switch e.Action {
		case ActSkipNew:
			return fmt.Sprintf("slot %s is already NEW_ADDR: skipped", units.Group(e.Slot))
		case ActInvalidate:
			return fmt.Sprintf("slot %s holds block %s; its SIT bit is set", units.Group(e.Slot), units.Group(e.Addr))
		case ActStartRun:
			return fmt.Sprintf("slot %s holds block %s: it starts a run and becomes NEW_ADDR", units.Group(e.Slot), units.Group(e.Addr))
		case ActExtendRun:
			return fmt.Sprintf("slot %s holds block %s, contiguous: the run grows to %s and the slot becomes NEW_ADDR", units.Group(e.Slot), units.Group(e.Addr), plural(uint64(e.Len), "block", "blocks"))
		case ActSkipNull:
			return fmt.Sprintf("slot %s is NULL_ADDR: nothing to free (in the batched loop a NULL slot ends the pending run)", units.Group(e.Slot))
		case ActSkipBounds, ActSkipSITBit:
			return fmt.Sprintf("slot %s is cleared, but f2fs_is_valid_blkaddr_raw rejects block %s (\"%s\"): it is skipped, not freed and not counted", units.Group(e.Slot), units.Group(e.Addr), e.Message())
		case ActClear:
			return fmt.Sprintf("f2fs_truncate_data_blocks_range clears slot %s to NULL_ADDR and frees its %s on its own", units.Group(e.Slot), slotWhat(e))
		case ActClearStartRun:
			return fmt.Sprintf("slot %s is cleared to NULL_ADDR; its %s starts a pending run", units.Group(e.Slot), slotWhat(e))
		case ActClearExtendRun:
			return fmt.Sprintf("slot %s is cleared to NULL_ADDR; its %s continues the run, now %s long (checked against the SIT before the run is flushed)", units.Group(e.Slot), slotWhat(e), plural(uint64(e.Len), "block", "blocks"))
		}
	case EvInvalidate:
		why := ""
		switch e.Action {
		case ActDiscontiguous:
			why = " (flush: the next address is not contiguous)"
		case ActEndOfChunk:
			why = " (flush at the end of the chunk)"
		case ActFlushOnError:
			why = " (flush after the error)"
		case ActRunBreak:
			why = " (flush: a NULL or skipped slot ends the run)"
		case ActNodeFree:
			why = " (truncate_node frees the node block)"
		}
		if e.State == StateNew || e.State == StateCompress {
			return fmt.Sprintf("f2fs_invalidate_blocks(%s, %s)%s: call %s returns at once for %s, no SIT lock", slotValue(e.Addr), units.Group(e.Len), why, units.Group(e.Count), slotValue(e.Addr))
		}
		return fmt.Sprintf("f2fs_invalidate_blocks(%s, %s)%s: call %s takes the SIT lock", units.Group(e.Addr), units.Group(e.Len), why, units.Group(e.Count))
	case EvSITUpdate:
		s := fmt.Sprintf("update_sit_entry: segment %s loses %s (valid %s → %s)", units.Group(e.Segno), plural(uint64(e.Len)-e.Count, "block", "blocks"), units.Group(e.Before), units.Group(e.After))
		if e.Count > 0 {
			s += fmt.Sprintf("; %s already clear (\"Bitmap was wrongly cleared\")", plural(e.Count, "bit was", "bits were"))
		}
		if e.SegAfter != e.SegBefore {
			s += fmt.Sprintf("; locate_dirty_segment moves it from %s to %s", e.SegBefore, e.SegAfter)
		}
		return s
	case EvChunkLeave:
		if e.Action == ActDecValid {
			return fmt.Sprintf("the dnode's loop is done: dec_valid_block_count(%s) (valid_block_count %s → %s)", units.Group(uint64(e.Len)), units.Group(e.Before), units.Group(e.After))
		}
		if e.Errno != "" {
			return fmt.Sprintf("chunk %d ends with -%s after %s", e.Chunk+1, e.Errno, plural(e.Count, "slot", "slots"))
		}
		return fmt.Sprintf("chunk %d is done: the extent cache drops %s", e.Chunk+1, plural(e.Count, "slot", "slots"))
	case EvNodeFree:
		s := fmt.Sprintf("truncate_node frees node %s (block %s): dec_valid_node_count (valid_node_count %s → %s), its NAT entry becomes NULL_ADDR", e.Node, slotValue(e.Addr), units.Group(e.Before), units.Group(e.After))
		if e.Action == ActUnlink {
			s = "f2fs_remove_inode_page: " + s + "; f2fs_remove_orphan_inode takes it off the orphan list"
		}
		return s
	case EvSize:
		if e.Action == ActUnlink {
			return fmt.Sprintf("f2fs_evict_inode: i_nlink is 0, the page cache is dropped (dirty pages too), i_size %s → 0; f2fs_truncate frees every block from 0", units.Group(e.Before))
		}
		if e.Action == ActTruncSize {
			return fmt.Sprintf("truncate_setsize: i_size %s → %s; the page cache past it is dropped, dirty pages too", units.Group(e.Before), units.Group(e.After))
		}
		if e.Action == ActKeepSize {
			return fmt.Sprintf("KEEP_SIZE: i_size stays %s and FADVISE_KEEP_SIZE_BIT is set", units.Group(e.Before))
		}
		return fmt.Sprintf("i_size grows %s → %s", units.Group(e.Before), units.Group(e.After))
	case EvDone:
		fn, ok := "f2fs_zero_range", "f2fs_zero_range"
		switch e.Action {
		case ActPunch:
			fn, ok = "fallocate(PUNCH_HOLE)", "f2fs_punch_hole"
		case ActTruncate:
			fn, ok = "truncate", "f2fs_setattr"
		case ActUnlink:
			fn, ok = "unlink", "f2fs_evict_inode"
		}
		if e.Errno == "" {
			return ok + " returns 0"
		}
		return fn + " returns -" + e.Errno
	}
	return e.Kind.String()
}

// unmarshalName finds name among names, for the UnmarshalText methods of the enumerations.
func unmarshalName(what string, names []string, b []byte) (int, error) {
	for i, n := range names {
		if n == string(b) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("core: unknown %s %q", what, b)
}

// UnmarshalText is the inverse of [EventKind.MarshalText].
func (k *EventKind) UnmarshalText(b []byte) error {
	i, err := unmarshalName("event kind", eventKindNames[:], b)
	*k = EventKind(i)
	return err
}

// UnmarshalText is the inverse of [Action.MarshalText] ("" is ActNone).
func (a *Action) UnmarshalText(b []byte) error {
	i, err := unmarshalName("action", actionNames[:], b)
	*a = Action(i)
	return err
}

// UnmarshalText is the inverse of [SlotState.MarshalText].
func (s *SlotState) UnmarshalText(b []byte) error {
	i, err := unmarshalName("slot state", slotStateNames[:], b)
	*s = SlotState(i)
	return err
}

// slotWhat names what a cleared slot held: a block, NEW_ADDR or COMPRESS_ADDR.
func slotWhat(e Event) string {
	switch e.State {
	case StateNew:
		return "NEW_ADDR (f2fs_invalidate_blocks returns at once for it)"
	case StateCompress:
		return "COMPRESS_ADDR (f2fs_invalidate_blocks returns at once for it)"
	}
	return "block " + units.Group(uint64(e.Addr))
}

// slotValue writes a special address by name, a block by number.
func slotValue(a uint32) string {
	switch a {
	case NewAddr:
		return "NEW_ADDR"
	case CompressAddr:
		return "COMPRESS_ADDR"
	}
	return units.Group(uint64(a))
}

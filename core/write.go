package core

import (
	"context"

	"github.com/zrviz/zrviz/gc"
)

// WriteResult is the outcome of an operation other than a zero-range walk (a buffered write,
// fsync, sync, unmount): what it reserved and the dirty pages it wrote back.
type WriteResult struct {
	Op      string `json:"op"`
	Path    string `json:"path,omitempty"`
	Errno   string `json:"errno"`
	Written int64  `json:"written,omitempty"` // write: bytes copied into the page cache
	// File facts after the operation (write, fsync).
	SizeAfter   int64  `json:"sizeAfter,omitempty"`
	BlocksAfter uint64 `json:"blocksAfter,omitempty"`
	Reserved    uint64 `json:"reserved,omitempty"`       // NULL→NEW (f2fs_preallocate_blocks, prepare_write_begin)
	NodesAlloc  uint64 `json:"nodesAllocated,omitempty"` // ALLOC_NODE
	// Pages are the dirty pages written back, in the order writeback wrote them.
	Pages []PageWrite `json:"pages"`
	// Checkpoint: the operation ended with a checkpoint (sync, unmount): prefree segments free.
	Checkpoint bool `json:"checkpoint,omitempty"`
	// Freed lists the segments a checkpoint operation made free (prefree → free); Moved counts
	// the blocks a checkpoint or gc operation moved (with a segment manager, Seq.MountGC).
	Freed []uint32 `json:"freed,omitempty"`
	Moved int      `json:"moved,omitempty"`
	// GC is a gc operation's pick: the JSON a gc operation's result is shown as (zrviz run --ops
	// --json: {"op":"gc","type","policy","victim","cost","errno","moved","candidates"}).
	GC *gc.Pick `json:"-"`
}

// maxInlineData is MAX_INLINE_DATA: the inode's i_addr space less one reserved slot.
func maxInlineData(ino *Inode) int64 { return 4 * int64(ino.AddrsPerInode-1) }

// bufferedWrite is write(2) of length bytes at off on a file opened O_RDWR, buffered
// (f2fs_file_write_iter → f2fs_preallocate_blocks → generic_perform_write): NULL slots of the
// whole pages are reserved dnode by dnode (F2FS_GET_BLOCK_PRE_AIO, partial on ENOSPC), then each
// page's prepare_write_begin reserves a slot still NULL; every page copied is dirty, i_size grows
// to the end written. No block is allocated: that is writeback's.
func bufferedWrite(ctx context.Context, in Input, off, length int64) (Input, *WriteResult, error) {
	res := &WriteResult{Op: "write", Path: in.Path, Pages: []PageWrite{}}
	ino := &in.Inode
	switch {
	case ino.Type == "dir":
		res.Errno = "EISDIR"
	case ino.Type == "symlink":
		res.Errno = "ELOOP"
	case ino.Flags&FlagImmutable != 0 || ino.Flags&FlagAppend != 0:
		res.Errno = "EPERM" // may_open: O_RDWR without O_APPEND
	case off < 0:
		res.Errno = "EINVAL"
	case ino.Type != "file":
		res.Errno = "EINVAL"
	case in.Volume.CheckpointError:
		res.Errno = "EIO"
	case length > 0 && off >= maxBytes:
		res.Errno = "EFBIG" // generic_write_checks_count
	}
	if res.Errno != "" || length <= 0 {
		res.SizeAfter, res.BlocksAfter = ino.Size, ino.Blocks
		return in, res, nil
	}
	length = min(length, maxBytes-off)
	if ino.Flags&FlagCompressed != 0 {
		return in, nil, errUnmodelled("a write to a compressed file")
	}
	if ino.Inline&InlineData != 0 && off+length <= maxInlineData(ino) {
		// The data stays in the inode (f2fs_write_inline_data at writeback): no slot, no SIT.
		next := in
		next.Inode.Size = max(ino.Size, off+length)
		next.Inode.Inline |= InlineDataExist
		res.Written, res.SizeAfter, res.BlocksAfter = length, next.Inode.Size, ino.Blocks
		return next, res, nil
	}
	e, err := newEngine(in, Request{}, PerBlock)
	if err != nil {
		return in, nil, err
	}
	if ino.Inline&InlineData != 0 {
		// f2fs_preallocate_blocks → f2fs_convert_inline_inode, as a zero's conversion: with
		// DATA_EXIST slot 0 is reserved and page 0 written out of place to the hot log at once.
		e.s.phase = phInline
		var ev Event
		if !e.step(&ev) {
			return in, nil, e.err
		}
		if ev.Kind == EvError {
			res.Errno = ev.Errno
			res.SizeAfter, res.BlocksAfter = ino.Size, ino.Blocks
			return in, res, nil
		}
	}
	first, last := uint64(off)>>12, uint64(off+length-1)>>12
	// f2fs_preallocate_blocks: the whole pages [F2FS_BLK_ALIGN(pos), (pos+count)>>12).
	if lo, hi := uint64(off+4095)>>12, uint64(off+length)>>12; hi > lo {
		idx := lo
		for turn := 1; idx < hi; turn++ {
			if turn%ctxEvery == 1 {
				if err := ctx.Err(); err != nil {
					return in, nil, err
				}
			}
			end, ok, err := e.reserveRange(idx, hi)
			if err != nil {
				return in, nil, err
			}
			if !ok {
				break
			}
			idx = end
		}
	}
	// prepare_write_begin, page by page: a dnode is read once for all its pages (a page's read
	// through a sequence's overlays costs a node copy per overlay).
	written := int64(0)
write:
	for p := first; p <= last; {
		if err := ctx.Err(); err != nil {
			return in, nil, err
		}
		pos, buf, missing, err := e.slots.read(p, e.fbuf)
		e.fbuf = buf
		if err != nil {
			return in, nil, err
		}
		end := min(last+1, pos.start+uint64(pos.cap))
		stored := false
		for ; p < end; p++ {
			if buf[p-pos.start] == NullAddr {
				if !e.allocPath(&pos, missing) || e.reserve(1) == 0 {
					if stored {
						e.slots.store(pos.start, buf)
					}
					break write
				}
				missing = 0 // allocPath made the path
				e.countReserved(1)
				buf[p-pos.start] = NewAddr
				e.markHi(p)
				stored = true
			}
			written = min(int64(p+1)<<12, off+length) - off
		}
		if stored {
			e.slots.store(pos.start, buf)
		}
	}
	res.Reserved, res.NodesAlloc = e.s.stats.Reserved, e.s.stats.NodesAlloc
	if written == 0 {
		res.Errno = "ENOSPC"
	}
	e.s.counters.iSize = max(e.s.counters.iSize, off+written)
	next := e.nextInput()
	if written > 0 {
		d := addDirtyRange(in.Inode.Dirty, first, uint64(off+written-1)>>12)
		next.Inode.Dirty = d
	}
	res.Written, res.SizeAfter, res.BlocksAfter = written, next.Inode.Size, next.Inode.Blocks
	return next, res, nil
}

// reserveRange reserves the NULL slots of one dnode's part of [idx, hi), allocating the nodes
// its path lacks: f2fs_map_blocks' F2FS_GET_BLOCK_PRE_AIO for one dnode. It returns where the
// dnode ends and false when nothing could be reserved (ENOSPC).
func (e *engine) reserveRange(idx, hi uint64) (uint64, bool, error) {
	pos, buf, missing, err := e.slots.read(idx, e.fbuf)
	e.fbuf = buf
	if err != nil {
		return idx, false, err
	}
	end := min(hi, pos.start+uint64(pos.cap))
	if !e.allocPath(&pos, missing) {
		return end, false, nil
	}
	var nulls uint64
	for i := idx; i < end; i++ {
		if buf[i-pos.start] == NullAddr {
			nulls++
		}
	}
	if nulls == 0 {
		return end, true, nil
	}
	got := e.reserve(nulls)
	if got == 0 {
		return end, false, nil
	}
	e.countReserved(got)
	for i := idx; got > 0 && i < end; i++ {
		if buf[i-pos.start] == NullAddr {
			buf[i-pos.start] = NewAddr
			e.markHi(i)
			got--
		}
	}
	e.slots.store(pos.start, buf)
	return end, true, nil
}

// countReserved counts n reserved blocks (inc_valid_block_count).
func (e *engine) countReserved(n uint64) {
	c := &e.s.counters
	c.validBlocks += n
	c.iBlocks += n
	e.s.stats.Reserved += n
}

// allocPath allocates the nodes pos's path lacks; false on ENOSPC.
func (e *engine) allocPath(pos *dnodePos, missing int) bool {
	e.findMissing(pos, missing)
	var ev Event
	for e.s.alloc.next < e.s.alloc.n {
		if !e.allocNode(&ev) {
			e.s.errno, e.s.msg = "", ""
			return false
		}
	}
	return true
}

// addDirtyRange adds the pages [lo, hi] to a dirty list.
func addDirtyRange(dirty []uint64, lo, hi uint64) []uint64 {
	out := make([]uint64, 0, len(dirty)+int(min(hi-lo+1, 1<<20)))
	i := 0
	for ; i < len(dirty) && dirty[i] < lo; i++ {
		out = append(out, dirty[i])
	}
	for p := lo; p <= hi; p++ {
		out = append(out, p)
	}
	for ; i < len(dirty); i++ {
		if dirty[i] > hi {
			out = append(out, dirty[i])
		}
	}
	return out
}

func errUnmodelled(what string) error {
	return &unmodelledError{what}
}

type unmodelledError struct{ what string }

func (e *unmodelledError) Error() string { return "core: not modelled: " + e.what }
func (e *unmodelledError) Unwrap() error { return ErrUnmodelled }

package core

// Pages is the file block indices [Start, End) of a request's pages: the whole pages the dnode
// loop walks and the partial head and tail pages fill_zero handles. It is the one derivation of
// a request's range: the player's outline, the server's memory budget and the API all use it.
type Pages struct {
	Start uint64 `json:"start"`
	End   uint64 `json:"end"`
}

// ArgCheck returns the errno with which the kernel refuses the request before looking at a page
// (open(2), vfs_fallocate, f2fs_fallocate, in that order: EISDIR, EINVAL, EOPNOTSUPP, EFBIG, …),
// or "" when the request gets to f2fs_zero_range. It is the engine's own check.
func ArgCheck(in Input, req Request) string {
	return (&engine{in: in, req: req}).argCheck()
}

// PagesOf returns the request's pages, [offset>>12, ceil((offset+length)/4096)), or an empty
// range when [ArgCheck] refuses the request (then no page is ever looked at). A range the checks
// let through ends at most at s_maxbytes, about 2^32 pages.
func PagesOf(in Input, req Request) Pages {
	if ArgCheck(in, req) != "" {
		return Pages{}
	}
	// argCheck guarantees 0 ≤ offset, 0 < length and offset+length ≤ s_maxbytes.
	off, end := uint64(req.Offset), uint64(req.Offset)+uint64(req.Length)
	return Pages{Start: off >> 12, End: (end + blockSize - 1) >> 12}
}

// Reach returns the pages of p a run can get to before the volume runs out of free blocks: past
// the file's last mapped slot every page is a hole that f2fs_reserve_new_blocks must reserve (one
// block each, and node blocks for missing dnodes), so a run stops with ENOSPC within the dnode
// chunk in which the free blocks run out. A zero-range of 1 TiB on a 256 MiB volume walks a few
// tens of thousands of pages, not 2^28: what a server reserves memory for and what a page draws
// must be this, not the request's length. Reach is an upper bound (holes below the last mapped
// slot use free blocks too), exact for the common case of a range past the end of a file.
func (p Pages) Reach(in Input) Pages {
	if p.End <= p.Start {
		return p
	}
	v := &in.Volume
	free := int64(v.UserBlockCount) - int64(v.CurrentReservedBlocks) - int64(v.RootReservedBlocks) -
		int64(v.ValidBlockCount)
	free = max(free, 0)
	// The chunk in which the reservation comes up short is walked to its first unreserved hole, and
	// the tail page's fill_zero may lie one chunk further: two direct nodes of slack.
	bound := max(p.Start, in.Inode.SlotsEnd) + uint64(free) + 2*addrsPerBlock + 1
	if bound < p.End {
		p.End = bound
	}
	return p
}

// ReturnedBy names the kernel function whose return value ends the request: "open" when open(2)
// already fails (a directory cannot be opened for writing: -EISDIR; a symbolic link with
// O_NOFOLLOW: -ELOOP), "vfs_fallocate" for the VFS's checks (fs/open.c: offset < 0 or len ≤ 0
// -EINVAL, flags it does not take -EOPNOTSUPP, an immutable or append-only inode -EPERM, not a
// regular file -ENODEV, offset+len past s_maxbytes -EFBIG), "f2fs_fallocate" for f2fs's own
// (a checkpoint error -EIO, a compressed or pinned file -EOPNOTSUPP), else "f2fs_zero_range".
func ReturnedBy(in Input, req Request) string {
	switch ArgCheck(in, req) {
	case "":
		return "f2fs_zero_range"
	case "EISDIR", "ELOOP":
		return "open"
	case "EIO":
		return "f2fs_fallocate"
	case "EOPNOTSUPP":
		if req.ExtraFlags&^fallocKeepSize != 0 {
			return "vfs_fallocate"
		}
		return "f2fs_fallocate"
	}
	return "vfs_fallocate"
}

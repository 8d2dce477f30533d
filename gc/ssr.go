package gc

import "fmt"

// Slack space recycling (SSR) is not modelled: when a log's segment is full, Linux 6.12's
// f2fs_allocate_data_block asks need_new_seg (segment.c) whether to open a new segment
// (new_curseg, which the model does) or to reuse the free blocks of a partly valid segment
// (get_ssr_segment → f2fs_get_victim in SSR mode, then change_curseg, which it does not). The
// kernel opens a new segment when
//
//   - the log is in LFS allocation and the next segment of its section is free
//     (is_next_segment_free), or
//   - f2fs_need_SSR (segment.c) is false: free_sections > node_secs + 2·dent_secs + imeta_secs +
//     min_ssr_sections + reserved_sections, with min_ssr_sections = reserved_sections
//     (build_segment_manager) and each *_secs the dirty pages of that kind rounded up to
//     sections (get_blocktype_secs), or
//   - get_ssr_segment finds no victim: no dirty (partly valid, not current) segment of the log's
//     kind (data logs search every data temperature, node logs every node temperature).
//
// Anywhere else the kernel may take SSR, and the model's answer would be a guess: [State.MaySSR]
// says so, and the callers refuse (core.ErrUnmodelled) rather than open a segment the kernel
// would not. mode=lfs (f2fs_lfs_mode), which turns SSR off, is not known from an image: the ops
// language's `mount mode=lfs` says it ([State.LFS]).

// MaySSR reports whether the kernel could take SSR instead of a new segment for log, whose
// current segment is full, on the state s holds now; metaSecs bounds f2fs_need_SSR's
// node_secs + 2·dent_secs + imeta_secs (the dirty metadata the caller's operations left, which
// the segment manager does not track). The string says why, naming the kernel functions.
func (s *State) MaySSR(log int, metaSecs uint32) (bool, string) {
	if log < 0 || log >= NumLogs || s.LFS {
		return false, "" // f2fs_need_SSR: "if (f2fs_lfs_mode(sbi)) return false" (segment.c:177)
	}
	c := s.cur[log]
	// is_next_segment_free: the next segment of the same section, free.
	if next := c.Segno + 1; next < s.mainSegs && next%s.segsPerSec != 0 && !s.inuse.test(next) {
		return false, ""
	}
	free, rsv := s.FreeSections(), s.ReservedSections()
	if free > metaSecs+2*rsv { // f2fs_need_SSR false
		return false, ""
	}
	for segno := range s.mainSegs {
		if !s.dirty.test(segno) || s.isCurSeg(segno) || isNodeType(s.segs[segno].Type) != isNodeType(log) {
			continue
		}
		return true, fmt.Sprintf("log %d's segment %d is full with %d free sections ≤ f2fs_need_SSR's %d "+
			"(2 × %d reserved + at most %d of dirty metadata), and segment %d is partly valid: "+
			"need_new_seg → get_ssr_segment could reuse it (change_curseg, SSR), which the model does not do",
			log, c.Segno, free, metaSecs+2*rsv, rsv, metaSecs, segno)
	}
	return false, ""
}

// Unmodelled says why the last operations' allocation would have been a guess ("" when it was
// not): a log the segment manager itself opened (garbage collection's moves, a checkpoint's) where
// the kernel may have taken SSR ([State.MaySSR]). It is kept until the state is mounted again.
func (s *State) Unmodelled() string { return s.unmodelled }

// gcMetaSecs is what the segment manager's own allocations take for f2fs_need_SSR's dirty
// metadata: garbage collection dirties the node pages of the blocks it moves (fewer than a
// section's worth in the moves one call makes) and their inodes.
const gcMetaSecs = 2

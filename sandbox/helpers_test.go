package sandbox

import "github.com/zrviz/zrviz/core"

// fileIndex returns the file block that holds list slot k (0-based), or false past the end: the
// inverse of [List.ListSlot], which the tests check the layout against.
func fileIndex(l *List, k uint64) (uint64, bool) {
	for _, g := range l.Layout() {
		if k < g.Len {
			return g.Index + k, true
		}
		k -= g.Len
	}
	return 0, false
}

// inputFree is [List.Input] with exactly free blocks left for reservations (user_block_count =
// valid_block_count + free), so a list with more NULL slots than free blocks shows the kernel's
// partial reservation and ENOSPC (rows 13 and 14 of docs/kernel-semantics.md §11).
func inputFree(l *List, free uint64) core.Input { return l.input(int64(min(free, 1<<62))) }

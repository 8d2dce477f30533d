// Package sandbox runs the zero-range engine on a slot list typed by hand instead of a file read
// from an image.
//
// # The slot list language
//
// Tokens are separated by white space (spaces, tabs or newlines):
//
//	7200        a block address (decimal)
//	7200-7263   the contiguous addresses 7200..7263, inclusive (64 slots)
//	NEW         NEW_ADDR: a reserved block that was never written (no SIT bit)
//	NULL        NULL_ADDR: a hole
//	NEW*3       K repeats of NEW (or of NULL: NULL*5)
//	|           a dnode boundary: the next slot starts a new dnode chunk
//
// Example: "34304-34815 NEW*3 34816 | 6144-6200 NULL 9000". NEW and NULL may be written in any case.
// Addresses are 1..4294967293: 0 is NULL_ADDR, 4294967295 NEW_ADDR and 4294967294 COMPRESS_ADDR (write
// NULL and NEW for the first two; the third is a compressed-cluster marker, which zero-range never
// meets). A `|` needs slots on both sides. Bad syntax is a [*SyntaxError] naming the token, its number
// and its byte offset. Limits: [MaxInput] bytes, [MaxTokens] tokens, [MaxBoundaries] `|`, [MaxSlots]
// slots. A list is held as runs (one per token at most), so a 10-million-slot range costs a few bytes.
//
// # The synthetic file and volume
//
// [List.Input] and [List.Request] give the engine a file and a volume in which the list means what
// it says, and [List.Layout] says where each group of slots sits:
//
//   - The file has the common geometry of a file made by mkfs.f2fs with extra_attr off and inline
//     xattrs on: 873 data slots in the inode ([AddrsPerInode]) and 1018 in each direct node
//     ([AddrsPerBlock]), so chunks break at file blocks 873, 1891, 2909, … as on a real file.
//   - Without `|` the list is the file's data from block 0: slot k of the list is file block k.
//   - With `|`, each group after a `|` starts at a dnode boundary. The first group is placed so that
//     it ends exactly at the first boundary at or after its length (a 10-slot first group fills file
//     blocks 863..872, the end of the inode), so the first `|` costs nothing. A middle group that ends
//     before a boundary is followed by NEW_ADDR padding up to the next one: the kernel skips NEW slots
//     without ending a run, and the chunk's end flushes the run anyway, so padding changes no call,
//     no errno and no reservation; it shows only as NEW slots visited ([Group.Pad] counts them).
//   - The zeroed range is exactly the list's slots: from the first slot to the last, page aligned;
//     i_size is the end of that range, so it does not grow. File blocks before the first slot are
//     holes outside the range. Every node from the inode to the last dnode exists (no node is
//     allocated). i_blocks counts the nodes and every non-NULL slot.
//
// The volume: 4096-byte blocks, 512-block segments, segment 0 at block 512 and the main area from
// block [MainBlkaddr] (4096), as on the 256 MiB reference image. Every listed address in the main area
// has its bit set in its segment's SIT valid map, and nothing else does: a segment's valid count is
// the number of distinct listed addresses in it (so a segment whose listed blocks are all zeroed
// becomes prefree). An address below 4096 is outside the main area and fails the kernel's bounds
// check ("access invalid blkaddr"); the main area extends past the highest listed address (up to
// 4294966784, the last segment that fits below the special values; a higher address fails the same
// way). A repeated address is one block with one SIT bit: its second invalidation fails the SIT
// check ("Inconsistent error blkaddr"), EFSCORRUPTED, as in the kernel. The six current segments
// are segments that hold no listed address. user_block_count is the whole main area (no
// overprovisioning), which leaves room for every NULL slot to be reserved.
package sandbox

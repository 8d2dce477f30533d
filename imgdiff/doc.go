// Package imgdiff compares two images of one F2FS filesystem structure by structure: the checkpoint
// fields that differ, every SIT entry that differs (valid count, bits set and cleared, state, current
// segments), NAT entries, node blocks (the slots of inodes and direct nodes, the nids of indirect
// nodes), inode fields, directory entries added or removed, and data blocks whose owner changed.
// Every change names its field as the block inspector does (imgio's field tables) and, where one
// explains it, the kernel operation that makes such a change ([Op]).
//
// What changed is found from the metadata areas, not by comparing every byte: the SIT (a few
// megabytes even on large volumes), the NAT a block at a time (blocks equal in both images and not
// overridden by a journal are skipped after one bytes.Equal), then only the node blocks whose NAT
// entry moved and the inodes and directories they belong to. F2FS writes node blocks out of place,
// so a node whose NAT entry did not move did not change (a node doctored in place is not seen).
//
// [Diff] refuses two images of different filesystems (another UUID or block count) with an
// [*UnrelatedError]. The images may be of different formats: imgio expands each the same way.
//
// Package afterck holds a model's after-state against an image; this package knows nothing of the
// model and imports only imgio.
package imgdiff

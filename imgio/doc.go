// Package imgio reads Linux F2FS filesystem images.
//
// An [Image] is opened from a raw file read in place ([OpenFileContext]), from a stream expanded into a
// temporary file ([Load], [OpenDemo]) or from any [io.ReaderAt] ([NewImage]). The superblock and the live
// checkpoint are decoded eagerly; NAT, SIT, node and dentry blocks are read lazily with ReadAt, so one
// Image can serve many goroutines at once.
//
// Decoding has two layers, as in debug/elf: raw structs mirroring include/linux/f2fs_fs.h, decoded with
// [encoding/binary], and validated friendly types ([Volume], [Inode], [Dnode], [Extent], [Segment]).
// The image is treated as hostile: every count, offset and address is checked against the image before
// use. Errors are [ErrNotF2FS], [*FormatError] (a corrupt structure, with its byte offset) or
// [*UnsupportedError] (a valid feature this package does not handle).
//
// What a crafted image can make expensive is bounded as the kernel bounds it, and every long loop takes
// a [context.Context]: listings ([Image.Walk], [Image.ReadDir], [Image.FilesContext]) read each dentry
// block once, leave out paths of [PathMax] bytes or more and step over damage, returning it as
// [ListProblems]; [Image.LookupContext] and [Image.ResolveContext] go one component at a time; expansion
// ([ExpandContext], [LoadContext]) checks the superblock in the first 8 KiB of output and never writes
// past the volume it declares.
package imgio

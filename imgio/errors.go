package imgio

import (
	"errors"
	"fmt"

	"github.com/zrviz/zrviz/internal/f2fs"
	"github.com/zrviz/zrviz/internal/units"
)

// Special block addresses stored in data slots (include/linux/f2fs_fs.h).
const (
	// NullAddr marks a hole: no block, not counted anywhere.
	NullAddr = f2fs.NullAddr
	// NewAddr marks a reserved block that was never written; it reads as zeros.
	NewAddr = f2fs.NewAddr
	// CompressAddr starts a compressed cluster; it is a marker, not a block.
	CompressAddr = f2fs.CompressAddr
)

// ErrNotF2FS reports that neither superblock copy carries the F2FS magic.
var ErrNotF2FS = errors.New("imgio: not an F2FS image")

// ErrEmpty reports an input of no bytes at all: an empty file or upload. errors.Is(err, ErrNotF2FS)
// is true of it too, so callers that only tell images from non-images need not know it; a caller
// that speaks to a user says "empty" rather than where a superblock was looked for.
var ErrEmpty error = emptyError{}

type emptyError struct{}

func (emptyError) Error() string { return "imgio: the input is empty (0 bytes)" }

// Is makes an empty input an ErrNotF2FS.
func (emptyError) Is(target error) bool { return target == ErrNotF2FS }

// FormatError reports a corrupt on-disk structure. Off is the byte offset of the structure (or of the
// bad field when that is more useful) from the start of the image.
type FormatError struct {
	Off    int64  // byte offset in the image
	Struct string // "superblock", "checkpoint", "NAT entry", "inode", ...
	Msg    string // what is wrong
	Val    any    // the offending value, or nil
}

// Error reads "imgio: STRUCT at 0xOFF: MSG (VAL)".
func (e *FormatError) Error() string {
	s := fmt.Sprintf("imgio: %s at 0x%x: %s", e.Struct, e.Off, e.Msg)
	if e.Val != nil {
		s += fmt.Sprintf(" (%v)", e.Val)
	}
	return s
}

// TruncatedError reports an image shorter than the volume its superblock declares (block_count ×
// block size): a copy or a download cut short. The kernel refuses to mount it, and so does [NewImage].
// It unwraps to the *FormatError on the superblock's block_count, the field that says how long the
// image should be.
type TruncatedError struct {
	Size       int64  // the image's length in bytes: where it ends
	Need       int64  // block_count × block size: where the volume ends
	BlockCount uint64 // the superblock's block_count
	BlockSize  uint32
	// Area is the part of the volume the image ends in ("the checkpoint area", "the SIT", "the
	// NAT", "the SSA", "the main area", …), bytes [AreaFrom, AreaTo): what is cut.
	Area             string
	AreaFrom, AreaTo int64
	Off              int64 // byte offset of block_count in the superblock copy read
}

// Error reads "imgio: truncated image: it ends at byte X, inside the SIT (bytes F to T); the
// superblock's block_count (N blocks of B bytes) needs bytes up to Y".
func (e *TruncatedError) Error() string {
	where := ""
	if e.Area != "" {
		where = fmt.Sprintf(", inside %s (bytes %s to %s)", e.Area, units.Group(e.AreaFrom), units.Group(e.AreaTo))
	}
	return fmt.Sprintf("imgio: truncated image: it ends at byte %s%s; the superblock's block_count (%s blocks of %s bytes) needs bytes up to %s",
		units.Group(e.Size), where, units.Group(e.BlockCount), units.Group(e.BlockSize), units.Group(e.Need))
}

// Unwrap returns the *FormatError on block_count.
func (e *TruncatedError) Unwrap() error {
	return formatErr(e.Off, "superblock", fmt.Sprintf("block_count × block size beyond the image (%d bytes)", e.Size), e.BlockCount)
}

// UnsupportedError reports a valid F2FS feature that this package does not handle, such as reading a
// compressed cluster or a block size other than 4096. Off locates the structure that uses it.
type UnsupportedError struct {
	Feature string
	Off     int64
}

// Error names the feature and where it was met.
func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("imgio: unsupported feature %s at 0x%x", e.Feature, e.Off)
}

func formatErr(off int64, st, msg string, val any) error {
	return &FormatError{Off: off, Struct: st, Msg: msg, Val: val}
}

package imgio

import (
	"errors"
	"fmt"

	"github.com/zrviz/zrviz/internal/f2fs"
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

package imgio

import (
	"bytes"
	"encoding/binary"
)

// Format names the container an image arrives in. The values are stable strings used in JSON and on
// the command line.
type Format string

// The formats [DetectFormat] recognises.
const (
	FormatRaw           Format = "raw"            // a plain image (or anything unrecognised)
	FormatGzip          Format = "gzip"           // RFC 1952, one or more members
	FormatXZ            Format = "xz"             // .xz, one or more streams
	FormatZstd          Format = "zstd"           // Zstandard frames, skippable frames allowed
	FormatAndroidSparse Format = "android-sparse" // libsparse image (img2simg), major version 1
)

// HeaderSize is how many leading bytes [DetectFormat] looks at. Fewer are fine when the input is
// shorter; more are ignored. It is large enough to step over a few zstd skippable frames (the zstd
// tool and pzstd put small ones in front of the data frames).
const HeaderSize = 4096

// Magic numbers, as they appear on disk.
var (
	magicGzip = []byte{0x1f, 0x8b}                     // RFC 1952 ID1 ID2
	magicXZ   = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00} // xz file format 2.1.1.1
	magicZstd = []byte{0x28, 0xb5, 0x2f, 0xfd}         // RFC 8878 0xFD2FB528, little-endian
	magicSimg = []byte{0x3a, 0xff, 0x26, 0xed}         // sparse_format.h SPARSE_HEADER_MAGIC 0xed26ff3a
)

// DetectFormat reports the container format of an input from its first bytes (up to [HeaderSize]).
// It looks at content only, never at a file name. Anything it does not recognise is [FormatRaw]: it
// does not check for an F2FS superblock (whose magic sits at byte 1024); the reader does that.
//
// An Android sparse image is recognised by its magic alone, so that a wrong version is reported by
// [ExpandContext] as a corrupt header rather than as "not F2FS".
func DetectFormat(header []byte) Format {
	switch {
	case bytes.HasPrefix(header, magicGzip):
		return FormatGzip
	case bytes.HasPrefix(header, magicXZ):
		return FormatXZ
	case bytes.HasPrefix(header, magicSimg):
		return FormatAndroidSparse
	case isZstd(header):
		return FormatZstd
	}
	return FormatRaw
}

// isZstd reports whether b starts with a zstd frame, possibly after skippable frames
// (magic 0x184D2A5?, then a 4-byte little-endian length). A skippable frame that runs past the end of
// b still counts: a raw F2FS image starts with zeros (or a boot sector), never with that magic.
func isZstd(b []byte) bool {
	skipped := false
	for {
		if bytes.HasPrefix(b, magicZstd) {
			return true
		}
		if len(b) < 4 || b[0]&0xf0 != 0x50 || b[1] != 0x2a || b[2] != 0x4d || b[3] != 0x18 {
			// A stream that is nothing but skippable frames decodes to nothing, which is still zstd.
			return skipped && len(b) == 0
		}
		if len(b) < 8 {
			return true
		}
		n := uint64(binary.LittleEndian.Uint32(b[4:8]))
		if n > uint64(len(b)-8) {
			return true
		}
		b = b[8+n:]
		skipped = true
	}
}

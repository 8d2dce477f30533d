package imgio

import (
	"bytes"
	"testing"
)

// TestDetectFormat checks detection by content on magic numbers and their near misses.
func TestDetectFormat(t *testing.T) {
	f2fs := make([]byte, HeaderSize)
	copy(f2fs[1024:], []byte{0x10, 0x20, 0xf5, 0xf2}) // F2FS_SUPER_MAGIC at 0x400
	skip := func(n int, rest ...byte) []byte {
		b := []byte{0x5f, 0x2a, 0x4d, 0x18, byte(n), byte(n >> 8), 0, 0}
		return append(append(b, make([]byte, n)...), rest...)
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want Format
	}{
		{"empty", nil, FormatRaw},
		{"f2fs", f2fs, FormatRaw},
		{"gzip", []byte{0x1f, 0x8b, 0x08, 0x00}, FormatGzip},
		{"gzip magic only", []byte{0x1f, 0x8b}, FormatGzip},
		{"half gzip magic", []byte{0x1f}, FormatRaw},
		{"xz", []byte{0xfd, '7', 'z', 'X', 'Z', 0x00, 0x00, 0x04}, FormatXZ},
		{"xz without NUL", []byte{0xfd, '7', 'z', 'X', 'Z', 0x01}, FormatRaw},
		{"zstd", []byte{0x28, 0xb5, 0x2f, 0xfd, 0x04}, FormatZstd},
		{"zstd byte-swapped", []byte{0xfd, 0x2f, 0xb5, 0x28}, FormatRaw},
		{"zstd after skippable", skip(5, 0x28, 0xb5, 0x2f, 0xfd), FormatZstd},
		{"zstd after two skippables", append(skip(3), skip(0, 0x28, 0xb5, 0x2f, 0xfd)...), FormatZstd},
		{"skippable only", skip(12), FormatZstd},
		{"skippable longer than the header", skip(HeaderSize)[:HeaderSize], FormatZstd},
		{"skippable header cut", skip(0)[:6], FormatZstd},
		{"skippable then junk", skip(4, 'j', 'u', 'n', 'k'), FormatRaw},
		{"skippable magic out of range", []byte{0x60, 0x2a, 0x4d, 0x18, 0, 0, 0, 0}, FormatRaw},
		{"android sparse", []byte{0x3a, 0xff, 0x26, 0xed, 1, 0, 0, 0, 28, 0, 12, 0}, FormatAndroidSparse},
		{"android sparse, other version", []byte{0x3a, 0xff, 0x26, 0xed, 2, 0}, FormatAndroidSparse},
		{"sparse magic big-endian", []byte{0xed, 0x26, 0xff, 0x3a}, FormatRaw},
		{"text", []byte("hello world"), FormatRaw},
		{"zeros", make([]byte, 100), FormatRaw},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DetectFormat(tc.in); got != tc.want {
				t.Errorf("DetectFormat(% x...) = %q, want %q", tc.in[:min(len(tc.in), 12)], got, tc.want)
			}
		})
	}
}

// TestDetectFormatIgnoresTail checks that only the first HeaderSize bytes matter.
func TestDetectFormatIgnoresTail(t *testing.T) {
	b := append(bytes.Repeat([]byte{0x5a, 0x2a, 0x4d, 0x18, 0, 0, 0, 0}, HeaderSize/8), 0x28, 0xb5, 0x2f, 0xfd)
	if got := DetectFormat(b[:HeaderSize]); got != FormatZstd {
		t.Errorf("skippable frames filling the header: %q, want zstd", got)
	}
}

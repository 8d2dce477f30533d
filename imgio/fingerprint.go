package imgio

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
)

// The regions [Fingerprint] reads.
const (
	fpHead    = 2 << 20  // the first 2 MiB: superblocks, checkpoints, most of the SIT and NAT
	fpSamples = 64       // evenly spaced samples over the whole input…
	fpSample  = 64 << 10 // …of 64 KiB each
	fpTail    = 1 << 20  // the last 1 MiB
)

// Fingerprint names an input by its content without reading all of it: the hex SHA-256 of its size
// (8 bytes, little-endian), its first 2 MiB, 64 evenly spaced 64 KiB samples (the first at 0, the
// last ending at the end) and its last 1 MiB, read through r in that order. It is a fingerprint, not
// a hash of every byte: two inputs of one size that differ only outside those 7 MiB get the same
// one. For the images a user opens again after a reload (the same file, or a copy of it) that is
// enough, and it costs the same 7 MiB of reads for an 8 GiB image as for a 64 MiB one.
//
// Regions overlap on small inputs, and an input under 7 MiB is read more than once; the result is
// still a function of size and content alone.
func Fingerprint(r io.ReaderAt, size int64) (string, error) {
	if size < 0 {
		return "", fmt.Errorf("imgio: fingerprint: negative size %d", size)
	}
	h := sha256.New()
	h.Write(binary.LittleEndian.AppendUint64(nil, uint64(size)))
	buf := make([]byte, max(fpHead, fpSample, fpTail))
	region := func(off, n int64) error {
		off, n = max(off, 0), min(n, size)
		if n <= 0 {
			return nil
		}
		p := buf[:n]
		if m, err := r.ReadAt(p, off); m < len(p) {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("imgio: fingerprint: reading %d bytes at offset %d: %w", n, off, err)
		}
		h.Write(p)
		return nil
	}
	if err := region(0, fpHead); err != nil {
		return "", err
	}
	span := max(size-fpSample, 0)
	for i := range int64(fpSamples) {
		// i × span / 63, split so that the product cannot overflow for any int64 size.
		off := span/(fpSamples-1)*i + span%(fpSamples-1)*i/(fpSamples-1)
		if err := region(off, fpSample); err != nil {
			return "", err
		}
	}
	if err := region(size-fpTail, fpTail); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

package imgio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Android sparse image format (libsparse, system/core/libsparse/sparse_format.h). A 28-byte file
// header is followed by total_chunks chunks, each a 12-byte header and its data. All fields are
// little-endian. Longer headers are allowed (file_hdr_sz, chunk_hdr_sz) and their extra bytes skipped,
// as libsparse does.
const (
	simgFileHeaderLen  = 28 // sizeof(sparse_header_t)
	simgChunkHeaderLen = 12 // sizeof(chunk_header_t)
	simgMajorVersion   = 1  // SPARSE_HEADER_MAJOR_VER; libsparse ignores the minor version, so do we

	simgChunkRaw      = 0xCAC1 // CHUNK_TYPE_RAW: chunk_sz blocks of data follow
	simgChunkFill     = 0xCAC2 // CHUNK_TYPE_FILL: a 4-byte value repeated over chunk_sz blocks
	simgChunkDontCare = 0xCAC3 // CHUNK_TYPE_DONT_CARE: chunk_sz blocks of nothing (zeros for us)
	simgChunkCRC32    = 0xCAC4 // CHUNK_TYPE_CRC32: CRC-32 of all output so far

	// simgFillBuf is the size of the buffer a non-zero fill pattern is written from (a multiple of 4
	// and of the hole block, so writes stay aligned).
	simgFillBuf = 256 << 10
)

// simgHeader is sparse_header_t.
type simgHeader struct {
	Magic        uint32 // 0x00 magic, 0xed26ff3a
	MajorVersion uint16 // 0x04 major_version
	MinorVersion uint16 // 0x06 minor_version
	FileHdrSz    uint16 // 0x08 file_hdr_sz, 28 or more
	ChunkHdrSz   uint16 // 0x0A chunk_hdr_sz, 12 or more
	BlkSz        uint32 // 0x0C blk_sz, a multiple of 4
	TotalBlks    uint32 // 0x10 total_blks in the output
	TotalChunks  uint32 // 0x14 total_chunks in the input
	Checksum     uint32 // 0x18 image_checksum; libsparse never writes or checks it
}

// simgChunk is chunk_header_t.
type simgChunk struct {
	Type    uint16 // 0x0 chunk_type
	_       uint16 // 0x2 reserved1
	ChunkSz uint32 // 0x4 chunk_sz, in blocks of output
	TotalSz uint32 // 0x8 total_sz, bytes of input including this header
}

// simgReader reads the sparse input and keeps the input offset for error messages.
type simgReader struct {
	r   *bufio.Reader
	off int64
}

// readFull fills p, reporting a short read as io.ErrUnexpectedEOF at the offset where it started.
func (sr *simgReader) readFull(p []byte, what string) error {
	n, err := io.ReadFull(sr.r, p)
	start := sr.off
	sr.off += int64(n)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("imgio: android-sparse %s at input offset %d: %w", what, start, err)
	}
	return nil
}

// discard skips n bytes of input.
func (sr *simgReader) discard(n int64, what string) error {
	start := sr.off
	k, err := sr.r.Discard(int(n))
	sr.off += int64(k)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("imgio: android-sparse %s at input offset %d: %w", what, start, err)
	}
	return nil
}

func simgErr(off int64, st, msg string, val any) error {
	return &FormatError{Off: off, Struct: "android-sparse " + st, Msg: msg, Val: val}
}

// expandSparse expands an Android sparse image into s. Don't-care chunks and zero fills become holes.
// The header's declared size is checked against the bound before anything is written (and against the
// volume once the superblock streams past, in s), every chunk is checked against the declared size
// before its data is read, and a CRC32 chunk, when present, is verified against the output so far.
// ctx is checked before every chunk.
func expandSparse(s *sink, br *bufio.Reader) error {
	sr := &simgReader{r: br}
	var raw [simgFileHeaderLen]byte
	if err := sr.readFull(raw[:], "file header"); err != nil {
		return err
	}
	var h simgHeader
	if _, err := binary.Decode(raw[:], binary.LittleEndian, &h); err != nil {
		return simgErr(0, "file header", err.Error(), nil)
	}
	switch {
	case h.MajorVersion != simgMajorVersion:
		return simgErr(0x04, "file header", "unsupported major version", h.MajorVersion)
	case h.FileHdrSz < simgFileHeaderLen:
		return simgErr(0x08, "file header", "file_hdr_sz below 28", h.FileHdrSz)
	case h.ChunkHdrSz < simgChunkHeaderLen:
		return simgErr(0x0A, "file header", "chunk_hdr_sz below 12", h.ChunkHdrSz)
	case h.BlkSz == 0 || h.BlkSz%4 != 0:
		return simgErr(0x0C, "file header", "blk_sz is not a positive multiple of 4", h.BlkSz)
	}
	// Both factors are below 2^32, so the product fits in a uint64.
	total := uint64(h.BlkSz) * uint64(h.TotalBlks)
	if total > uint64(s.limit) {
		s.err = &LimitError{Format: s.format, Limit: s.limit, Read: sr.off, Declared: int64(min(total, 1<<63-1)), Volume: -1}
		return s.err
	}
	s.total = int64(total)
	if err := sr.discard(int64(h.FileHdrSz)-simgFileHeaderLen, "file header"); err != nil {
		return err
	}

	bs := uint64(h.BlkSz)
	var (
		cur    uint64 // output block where the next chunk starts
		crc    uint32 // CRC-32 (IEEE) of the output so far, as libsparse computes it
		zeros  *crcZeros
		hdrBuf [simgChunkHeaderLen]byte
		fill   []byte // fillV repeated, made on the first non-zero fill
		fillV  [4]byte
	)
	if s.buf == nil {
		s.buf = make([]byte, expandBuf)
	}
	for i := uint32(0); i < h.TotalChunks; i++ {
		if err := s.ctx.Err(); err != nil {
			return s.stopped(err)
		}
		at := sr.off
		if err := sr.readFull(hdrBuf[:], fmt.Sprintf("chunk %d header", i)); err != nil {
			return err
		}
		var c simgChunk
		if _, err := binary.Decode(hdrBuf[:], binary.LittleEndian, &c); err != nil {
			return simgErr(at, "chunk header", err.Error(), nil)
		}
		if err := sr.discard(int64(h.ChunkHdrSz)-simgChunkHeaderLen, fmt.Sprintf("chunk %d header", i)); err != nil {
			return err
		}
		if c.TotalSz < uint32(h.ChunkHdrSz) {
			return simgErr(at+8, "chunk header", "total_sz smaller than the chunk header", c.TotalSz)
		}
		data := uint64(c.TotalSz) - uint64(h.ChunkHdrSz)
		if c.Type == simgChunkCRC32 {
			// libsparse counts no output blocks for a CRC chunk, whatever chunk_sz says.
			if data != 4 {
				return simgErr(at+8, "CRC32 chunk", "total_sz must be the header plus 4", c.TotalSz)
			}
			var v [4]byte
			if err := sr.readFull(v[:], fmt.Sprintf("chunk %d CRC32 value", i)); err != nil {
				return err
			}
			if got := binary.LittleEndian.Uint32(v[:]); got != crc {
				return simgErr(sr.off-4, "CRC32 chunk", "checksum mismatch",
					fmt.Sprintf("stored 0x%08x, computed 0x%08x", got, crc))
			}
			continue
		}
		if uint64(c.ChunkSz) > uint64(h.TotalBlks)-cur {
			return simgErr(at+4, "chunk header", "chunk runs past the declared image size",
				fmt.Sprintf("blocks %d..%d of %d", cur, cur+uint64(c.ChunkSz), h.TotalBlks))
		}
		n := uint64(c.ChunkSz) * bs // at most total, which fits the limit
		switch c.Type {
		case simgChunkRaw:
			if data != n {
				return simgErr(at+8, "raw chunk", "total_sz does not match chunk_sz blocks of data",
					fmt.Sprintf("total_sz %d, chunk_sz %d, blk_sz %d", c.TotalSz, c.ChunkSz, h.BlkSz))
			}
			for left := n; left > 0; {
				k := min(left, uint64(len(s.buf)))
				if err := sr.readFull(s.buf[:k], fmt.Sprintf("chunk %d data", i)); err != nil {
					return err
				}
				crc = crc32.Update(crc, crc32.IEEETable, s.buf[:k])
				if _, err := s.Write(s.buf[:k]); err != nil {
					return err
				}
				left -= k
			}
		case simgChunkFill:
			if data != 4 {
				return simgErr(at+8, "fill chunk", "total_sz must be the header plus 4", c.TotalSz)
			}
			var v [4]byte
			if err := sr.readFull(v[:], fmt.Sprintf("chunk %d fill value", i)); err != nil {
				return err
			}
			if v == [4]byte{} {
				if zeros == nil {
					zeros = newCRCZeros()
				}
				crc = zeros.update(crc, n)
				if err := s.skip(int64(n)); err != nil {
					return err
				}
				break
			}
			if fill == nil || fillV != v {
				if fill == nil {
					fill = make([]byte, simgFillBuf)
				}
				for j := 0; j < len(fill); j += 4 {
					copy(fill[j:], v[:])
				}
				fillV = v
			}
			for left := n; left > 0; {
				k := min(left, uint64(len(fill)))
				crc = crc32.Update(crc, crc32.IEEETable, fill[:k])
				if _, err := s.Write(fill[:k]); err != nil {
					return err
				}
				left -= k
			}
		case simgChunkDontCare:
			if data != 0 {
				return simgErr(at+8, "don't-care chunk", "total_sz must equal the chunk header size", c.TotalSz)
			}
			if zeros == nil {
				zeros = newCRCZeros()
			}
			crc = zeros.update(crc, n)
			if err := s.skip(int64(n)); err != nil {
				return err
			}
		default:
			return simgErr(at, "chunk header", "unknown chunk type", fmt.Sprintf("0x%04x", c.Type))
		}
		cur += uint64(c.ChunkSz)
	}
	if cur != uint64(h.TotalBlks) {
		return simgErr(sr.off, "chunks", "chunks end before the declared image size",
			fmt.Sprintf("%d of %d blocks", cur, h.TotalBlks))
	}
	// Bytes after the last chunk are ignored, as libsparse ignores them.
	return nil
}

// crcZeros advances a CRC-32 (IEEE) over n zero bytes in O(log n) steps, so a 16 GiB don't-care chunk
// costs microseconds instead of a pass over 16 GiB of zeros. Feeding a zero byte to the (inverted) CRC
// register is a linear map over GF(2)^32; pow[k] is that map raised to 2^k, as 32 column vectors.
type crcZeros struct {
	pow [64][32]uint32
}

func newCRCZeros() *crcZeros {
	z := new(crcZeros)
	for i := range 32 {
		c := uint32(1) << i
		z.pow[0][i] = crc32.IEEETable[c&0xff] ^ c>>8
	}
	for k := 1; k < 64; k++ {
		for i := range 32 {
			z.pow[k][i] = gf2Apply(&z.pow[k-1], z.pow[k-1][i])
		}
	}
	return z
}

// update returns crc32.Update(crc, crc32.IEEETable, make([]byte, n)).
func (z *crcZeros) update(crc uint32, n uint64) uint32 {
	c := ^crc
	for k := 0; n != 0; k, n = k+1, n>>1 {
		if n&1 != 0 {
			c = gf2Apply(&z.pow[k], c)
		}
	}
	return ^c
}

// gf2Apply multiplies the 32×32 bit matrix m (columns) by the vector v.
func gf2Apply(m *[32]uint32, v uint32) uint32 {
	var r uint32
	for i := 0; v != 0; i, v = i+1, v>>1 {
		if v&1 != 0 {
			r ^= m[i]
		}
	}
	return r
}

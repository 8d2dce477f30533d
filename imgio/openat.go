package imgio

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
)

// OpenAt opens an image of the given size read through r, in any supported format, without a file
// system: the static site's WebAssembly build reads a file the user picked through Blob.slice, where
// every read is a round trip to JavaScript and nothing may be written to disk.
//
// The format is detected from the first bytes ([DetectFormat]):
//   - raw: read in place through r ([NewImage]), lazily, never whole;
//   - Android sparse: the chunk headers are read (only they) into an index, and the image is read in
//     place through a ReaderAt that maps each read to its chunk: a raw chunk's bytes in r, a fill
//     chunk's pattern, zeros for a don't-care chunk. A CRC32 chunk is not verified (that would read
//     every byte). A corrupt chunk table is a *FormatError carrying the input offset;
//   - gzip, xz, zstd: expanded with every check of [ExpandContext] into memory, keeping only the
//     non-zero blocks, bounded by opt.MaxMemory ([LoadMemory]; a compressed stream cannot be read in
//     place).
//
// [Image.Close] closes nothing: r belongs to the caller. ctx bounds the expansion and the walk over
// the sparse chunk table.
func OpenAt(ctx context.Context, r io.ReaderAt, size int64, name string, opt *Options) (*Image, error) {
	if size < 0 {
		return nil, fmt.Errorf("%s: imgio: negative image size %d", name, size)
	}
	if size == 0 {
		return nil, fmt.Errorf("%s: %w", name, ErrEmpty)
	}
	hdr := make([]byte, min(size, HeaderSize))
	if n, err := r.ReadAt(hdr, 0); n < len(hdr) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%s: imgio: reading the first %d bytes: %w", name, len(hdr), err)
	}
	f := DetectFormat(hdr)
	var (
		img *Image
		err error
	)
	switch f {
	case FormatRaw:
		img, err = NewImage(r, size)
	case FormatAndroidSparse:
		var sp *sparseReaderAt
		sp, err = newSparseReaderAt(ctx, r, size, opt)
		if err == nil {
			img, err = NewImage(sp, sp.size)
		}
	default:
		return LoadMemory(ctx, io.NewSectionReader(r, 0, size), name, opt)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	img.name, img.format = name, f
	return img, nil
}

// sparseExtent is one chunk of an Android sparse image that produces output: bytes [out, out+n) of
// the expanded image.
type sparseExtent struct {
	out, n int64
	kind   uint16  // simgChunkRaw, simgChunkFill or simgChunkDontCare
	in     int64   // raw: offset of the chunk's data in the input
	fill   [4]byte // fill: the 4-byte pattern, repeated from the chunk's first byte
}

// maxSparseExtents bounds the chunk index of an Android sparse image read in place: 2^19 extents of
// 40 bytes, 20 MiB, far above the few thousand chunks img2simg writes for a fragmented userdata
// image, and far below what a hostile table of 12-byte chunks could ask for.
const maxSparseExtents = 1 << 19

// sparseReaderAt reads an Android sparse image as the raw image it stands for, chunk by chunk.
type sparseReaderAt struct {
	r    io.ReaderAt
	size int64          // total_blks × blk_sz
	ext  []sparseExtent // in output order, contiguous, covering [0, size)
}

// newSparseReaderAt reads and checks the file header and every chunk header of the sparse image in
// r (size bytes of input). Checks are those of the expansion (expandSparse): header sizes, block
// size, chunk sizes against the declared image size and the input, the chunks' sum; every
// failure is a *FormatError at the input offset of the bad field, or a *LimitError when the declared
// size is over opt.MaxExpanded.
func newSparseReaderAt(ctx context.Context, r io.ReaderAt, size int64, opt *Options) (*sparseReaderAt, error) {
	limit := DefaultMaxExpanded
	if opt != nil && opt.MaxExpanded > 0 {
		limit = opt.MaxExpanded
	}
	read := func(p []byte, off int64, what string) error {
		if off > size || int64(len(p)) > size-off {
			return fmt.Errorf("imgio: android-sparse %s at input offset %d: %w", what, off, io.ErrUnexpectedEOF)
		}
		if n, err := r.ReadAt(p, off); n < len(p) {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("imgio: android-sparse %s at input offset %d: %w", what, off, err)
		}
		return nil
	}
	var raw [simgFileHeaderLen]byte
	if err := read(raw[:], 0, "file header"); err != nil {
		return nil, err
	}
	var h simgHeader
	if _, err := binary.Decode(raw[:], binary.LittleEndian, &h); err != nil {
		return nil, simgErr(0, "file header", err.Error(), nil)
	}
	switch {
	case h.Magic != binary.LittleEndian.Uint32(magicSimg):
		return nil, simgErr(0, "file header", "bad magic", fmt.Sprintf("0x%08x", h.Magic))
	case h.MajorVersion != simgMajorVersion:
		return nil, simgErr(0x04, "file header", "unsupported major version", h.MajorVersion)
	case h.FileHdrSz < simgFileHeaderLen:
		return nil, simgErr(0x08, "file header", "file_hdr_sz below 28", h.FileHdrSz)
	case h.ChunkHdrSz < simgChunkHeaderLen:
		return nil, simgErr(0x0A, "file header", "chunk_hdr_sz below 12", h.ChunkHdrSz)
	case h.BlkSz == 0 || h.BlkSz%4 != 0:
		return nil, simgErr(0x0C, "file header", "blk_sz is not a positive multiple of 4", h.BlkSz)
	}
	if int64(h.FileHdrSz) > size {
		return nil, fmt.Errorf("imgio: android-sparse file header at input offset %d: %w", simgFileHeaderLen, io.ErrUnexpectedEOF)
	}
	bs := int64(h.BlkSz)
	total := uint64(h.BlkSz) * uint64(h.TotalBlks) // both below 2^32: no overflow
	if total > uint64(limit) {
		return nil, &LimitError{Format: FormatAndroidSparse, Limit: limit, Read: simgFileHeaderLen, Declared: int64(min(total, 1<<63-1)), Volume: -1}
	}
	// Every chunk takes at least a chunk header of input, so a count the input cannot hold is
	// refused before anything is allocated for it.
	if maxChunks := (size - int64(h.FileHdrSz)) / int64(h.ChunkHdrSz); int64(h.TotalChunks) > max(maxChunks, 0) {
		return nil, simgErr(0x14, "file header", fmt.Sprintf("total_chunks more than the %d bytes of input can hold", size), h.TotalChunks)
	}
	sp := &sparseReaderAt{r: r, size: int64(total)}
	var (
		at  = int64(h.FileHdrSz)
		cur int64 // output block where the next chunk starts
		hb  [simgChunkHeaderLen]byte
	)
	for i := uint32(0); i < h.TotalChunks; i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("imgio: android-sparse chunk table stopped at chunk %d: %w", i, err)
			}
		}
		if err := read(hb[:], at, fmt.Sprintf("chunk %d header", i)); err != nil {
			return nil, err
		}
		var c simgChunk
		if _, err := binary.Decode(hb[:], binary.LittleEndian, &c); err != nil {
			return nil, simgErr(at, "chunk header", err.Error(), nil)
		}
		if c.TotalSz < uint32(h.ChunkHdrSz) {
			return nil, simgErr(at+8, "chunk header", "total_sz smaller than the chunk header", c.TotalSz)
		}
		data := int64(c.TotalSz) - int64(h.ChunkHdrSz)
		dataAt := at + int64(h.ChunkHdrSz)
		if dataAt+data > size {
			return nil, simgErr(at+8, "chunk header", fmt.Sprintf("chunk %d's data runs past the end of the input (%d bytes)", i, size), c.TotalSz)
		}
		next := dataAt + data
		if c.Type == simgChunkCRC32 {
			if data != 4 {
				return nil, simgErr(at+8, "CRC32 chunk", "total_sz must be the header plus 4", c.TotalSz)
			}
			at = next
			continue
		}
		if int64(c.ChunkSz) > int64(h.TotalBlks)-cur {
			return nil, simgErr(at+4, "chunk header", "chunk runs past the declared image size",
				fmt.Sprintf("blocks %d..%d of %d", cur, cur+int64(c.ChunkSz), h.TotalBlks))
		}
		e := sparseExtent{out: cur * bs, n: int64(c.ChunkSz) * bs, kind: c.Type}
		switch c.Type {
		case simgChunkRaw:
			if data != e.n {
				return nil, simgErr(at+8, "raw chunk", "total_sz does not match chunk_sz blocks of data",
					fmt.Sprintf("total_sz %d, chunk_sz %d, blk_sz %d", c.TotalSz, c.ChunkSz, h.BlkSz))
			}
			e.in = dataAt
		case simgChunkFill:
			if data != 4 {
				return nil, simgErr(at+8, "fill chunk", "total_sz must be the header plus 4", c.TotalSz)
			}
			if err := read(e.fill[:], dataAt, fmt.Sprintf("chunk %d fill value", i)); err != nil {
				return nil, err
			}
			if e.fill == [4]byte{} {
				e.kind = simgChunkDontCare
			}
		case simgChunkDontCare:
			if data != 0 {
				return nil, simgErr(at+8, "don't-care chunk", "total_sz must equal the chunk header size", c.TotalSz)
			}
		default:
			return nil, simgErr(at, "chunk header", "unknown chunk type", fmt.Sprintf("0x%04x", c.Type))
		}
		switch last := len(sp.ext) - 1; {
		case e.n == 0:
		case last >= 0 && e.kind != simgChunkRaw && sp.ext[last].kind == e.kind && sp.ext[last].fill == e.fill:
			// A run of don't-care chunks, or of fills of one pattern, is one extent: the pattern's
			// phase carries on, since every chunk starts on a block and blk_sz is a multiple of 4.
			sp.ext[last].n += e.n
		case len(sp.ext) == maxSparseExtents:
			return nil, &UnsupportedError{Feature: fmt.Sprintf("Android sparse image of more than %d chunks read in place", maxSparseExtents), Off: at}
		default:
			sp.ext = append(sp.ext, e)
		}
		cur += int64(c.ChunkSz)
		at = next
	}
	if cur != int64(h.TotalBlks) {
		return nil, simgErr(at, "chunks", "chunks end before the declared image size",
			fmt.Sprintf("%d of %d blocks", cur, h.TotalBlks))
	}
	return sp, nil
}

// ReadAt reads the expanded image: each piece of p from the chunk that holds it.
func (sp *sparseReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("imgio: android-sparse read at negative offset %d", off)
	}
	n := 0
	// The first extent that ends after off.
	i := sort.Search(len(sp.ext), func(i int) bool { return sp.ext[i].out+sp.ext[i].n > off })
	for n < len(p) {
		at := off + int64(n)
		if at >= sp.size || i >= len(sp.ext) {
			return n, io.EOF
		}
		e := &sp.ext[i]
		in := at - e.out
		k := int(min(int64(len(p)-n), e.n-in))
		switch e.kind {
		case simgChunkRaw:
			m, err := sp.r.ReadAt(p[n:n+k], e.in+in)
			if m < k {
				if err == nil || errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return n + m, fmt.Errorf("imgio: android-sparse raw chunk data at input offset %d: %w", e.in+in+int64(m), err)
			}
		case simgChunkFill:
			for j := range k {
				p[n+j] = e.fill[(in+int64(j))%4]
			}
		default:
			clear(p[n : n+k])
		}
		n += k
		i++
	}
	return n, nil
}

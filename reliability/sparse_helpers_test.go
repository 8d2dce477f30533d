package reliability

import (
	"bytes"
	"encoding/binary"
)

// Android sparse chunk types (libsparse sparse_format.h).
const (
	chunkRaw      = 0xCAC1
	chunkFill     = 0xCAC2
	chunkDontCare = 0xCAC3
	chunkCRC      = 0xCAC4
)

// sparseChunk is one chunk of a hand-built Android sparse image.
type sparseChunk struct {
	kind     uint16
	blocks   uint32 // chunk_sz
	data     []byte // raw payload (raw chunks); may disagree with blocks on purpose
	fill     uint32
	totalSz  uint32 // 0 = computed from the payload
	omitData bool   // declare the payload but do not write it (truncated input)
}

// sparseImage builds an Android sparse image (sparse_header_t + chunks)
// with the given block size and declared total_blks. The header and chunk
// fields are written as given, so callers can lie in them.
func sparseImage(blkSz, totalBlks uint32, chunks []sparseChunk) []byte {
	var b bytes.Buffer
	h := make([]byte, 28)
	binary.LittleEndian.PutUint32(h[0:], 0xed26ff3a)
	binary.LittleEndian.PutUint16(h[4:], 1)
	binary.LittleEndian.PutUint16(h[8:], 28)
	binary.LittleEndian.PutUint16(h[10:], 12)
	binary.LittleEndian.PutUint32(h[12:], blkSz)
	binary.LittleEndian.PutUint32(h[16:], totalBlks)
	binary.LittleEndian.PutUint32(h[20:], uint32(len(chunks)))
	b.Write(h)
	for _, c := range chunks {
		var payload []byte
		switch c.kind {
		case chunkRaw:
			payload = c.data
		case chunkFill:
			payload = binary.LittleEndian.AppendUint32(nil, c.fill)
		case chunkCRC:
			payload = make([]byte, 4)
		}
		ch := make([]byte, 12)
		binary.LittleEndian.PutUint16(ch[0:], c.kind)
		binary.LittleEndian.PutUint32(ch[4:], c.blocks)
		tot := c.totalSz
		if tot == 0 {
			tot = uint32(12 + len(payload))
		}
		binary.LittleEndian.PutUint32(ch[8:], tot)
		b.Write(ch)
		if !c.omitData {
			b.Write(payload)
		}
	}
	return b.Bytes()
}

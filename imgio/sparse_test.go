package imgio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// xSimg builds Android sparse images by hand, field by field, so tests can make the hostile ones
// img2simg never would.
type xSimg struct {
	major, minor       uint16
	fileHdrSz          uint16 // 0 = 28
	chunkHdrSz         uint16 // 0 = 12
	blkSz              uint32
	totalBlks          uint32
	totalChunks        int64 // 0 = len(chunks)
	chunks             []xChunk
	fileExtra, chunkEx byte // filler for header bytes past 28 / 12
}

type xChunk struct {
	typ     uint16
	sz      uint32 // chunk_sz in blocks
	totalSz int64  // -1 = computed from the header size and the data
	data    []byte
}

func (s xSimg) bytes() []byte {
	fh, ch := s.fileHdrSz, s.chunkHdrSz
	if fh == 0 {
		fh = simgFileHeaderLen
	}
	if ch == 0 {
		ch = simgChunkHeaderLen
	}
	n := s.totalChunks
	if n == 0 {
		n = int64(len(s.chunks))
	}
	var b bytes.Buffer
	le := binary.LittleEndian
	b.Write(le.AppendUint32(nil, 0xed26ff3a))
	b.Write(le.AppendUint16(nil, s.major))
	b.Write(le.AppendUint16(nil, s.minor))
	b.Write(le.AppendUint16(nil, fh))
	b.Write(le.AppendUint16(nil, ch))
	b.Write(le.AppendUint32(nil, s.blkSz))
	b.Write(le.AppendUint32(nil, s.totalBlks))
	b.Write(le.AppendUint32(nil, uint32(n)))
	b.Write(le.AppendUint32(nil, 0))
	for b.Len() < int(fh) {
		b.WriteByte(s.fileExtra)
	}
	for _, c := range s.chunks {
		ts := c.totalSz
		if ts < 0 {
			ts = int64(ch) + int64(len(c.data))
		}
		start := b.Len()
		b.Write(le.AppendUint16(nil, c.typ))
		b.Write(le.AppendUint16(nil, 0))
		b.Write(le.AppendUint32(nil, c.sz))
		b.Write(le.AppendUint32(nil, uint32(ts)))
		for b.Len() < start+int(ch) {
			b.WriteByte(s.chunkEx)
		}
		b.Write(c.data)
	}
	return b.Bytes()
}

func xRaw(blocks uint32, data []byte) xChunk {
	return xChunk{typ: simgChunkRaw, sz: blocks, totalSz: -1, data: data}
}
func xFill(blocks uint32, v uint32) xChunk {
	return xChunk{typ: simgChunkFill, sz: blocks, totalSz: -1, data: binary.LittleEndian.AppendUint32(nil, v)}
}
func xSkip(blocks uint32) xChunk { return xChunk{typ: simgChunkDontCare, sz: blocks, totalSz: -1} }
func xCRC(v uint32) xChunk {
	return xChunk{typ: simgChunkCRC32, totalSz: -1, data: binary.LittleEndian.AppendUint32(nil, v)}
}

func xPattern(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32() | 1) // never zero, so no block of it is a hole
	}
	return b
}

// The sparse tests below check the container on arbitrary bytes (expandAny: no F2FS checks);
// hostile_expand_test.go checks what Expand makes of sparse images whose output must be F2FS.

// TestSparseValid expands hand-made sparse images that libsparse accepts, including the rarer shapes:
// longer headers, small and unaligned block sizes, non-zero fills and CRC32 chunks.
func TestSparseValid(t *testing.T) {
	d1 := xPattern(2*4096, 1)
	d2 := xPattern(3*1024, 2)
	fill := bytes.Repeat([]byte{0x78, 0x56, 0x34, 0x12}, 4096)
	expect := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	crcOf := func(b []byte) uint32 { return crc32.ChecksumIEEE(b) }
	z := func(n int) []byte { return make([]byte, n) }

	for _, tc := range []struct {
		name string
		img  xSimg
		want []byte
	}{
		{"empty", xSimg{major: 1, blkSz: 4096}, nil},
		{"raw", xSimg{major: 1, blkSz: 4096, totalBlks: 2, chunks: []xChunk{xRaw(2, d1)}}, d1},
		{"raw skip fill", xSimg{major: 1, blkSz: 4096, totalBlks: 6,
			chunks: []xChunk{xRaw(2, d1), xSkip(3), xFill(1, 0x12345678)}},
			expect(d1, z(3*4096), fill[:4096])},
		{"zero fill", xSimg{major: 1, blkSz: 4096, totalBlks: 3, chunks: []xChunk{xFill(2, 0), xRaw(1, d1[:4096])}},
			expect(z(8192), d1[:4096])},
		{"trailing skip", xSimg{major: 1, blkSz: 4096, totalBlks: 102, chunks: []xChunk{xRaw(2, d1), xSkip(100)}},
			expect(d1, z(100*4096))},
		{"long headers", xSimg{major: 1, fileHdrSz: 40, chunkHdrSz: 20, fileExtra: 0xaa, chunkEx: 0xbb,
			blkSz: 4096, totalBlks: 3, chunks: []xChunk{xRaw(2, d1), xFill(1, 0x12345678)}},
			expect(d1, fill[:4096])},
		{"minor version ignored", xSimg{major: 1, minor: 7, blkSz: 4096, totalBlks: 1, chunks: []xChunk{xSkip(1)}}, z(4096)},
		{"blk_sz 1024", xSimg{major: 1, blkSz: 1024, totalBlks: 9,
			chunks: []xChunk{xRaw(3, d2), xSkip(1), xFill(2, 0x12345678), xSkip(1), xRaw(2, d2[:2048])}},
			expect(d2, z(1024), fill[:2048], z(1024), d2[:2048])},
		{"blk_sz 4", xSimg{major: 1, blkSz: 4, totalBlks: 5,
			chunks: []xChunk{xRaw(1, d2[:4]), xSkip(2), xFill(2, 0x12345678)}},
			expect(d2[:4], z(8), fill[:8])},
		{"crc", xSimg{major: 1, blkSz: 4096, totalBlks: 6,
			chunks: []xChunk{xRaw(2, d1), xSkip(3), xFill(1, 0x12345678), xCRC(crcOf(expect(d1, z(3*4096), fill[:4096])))}},
			expect(d1, z(3*4096), fill[:4096])},
		{"crc in the middle and at the start", xSimg{major: 1, blkSz: 4096, totalBlks: 4,
			chunks: []xChunk{xCRC(0), xRaw(2, d1), xCRC(crcOf(d1)), xFill(2, 0), xCRC(crcOf(expect(d1, z(8192))))}},
			expect(d1, z(8192))},
		{"big fill", xSimg{major: 1, blkSz: 4096, totalBlks: 200, chunks: []xChunk{xFill(200, 0x12345678)}},
			bytes.Repeat(fill[:4096], 200)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &xMemWriter{max: 64 << 20}
			in := tc.img.bytes()
			f, n, err := expandAny(w, bytes.NewReader(in), nil)
			if err != nil {
				t.Fatalf("Expand: %v", err)
			}
			if f != FormatAndroidSparse || n != int64(len(tc.want)) {
				t.Fatalf("Expand = %s, %d; want android-sparse, %d", f, n, len(tc.want))
			}
			got := make([]byte, n)
			copy(got, w.b)
			if !bytes.Equal(got, tc.want) {
				t.Fatal("expanded bytes differ")
			}
			// Zero blocks were not written: the writer's buffer ends at the last non-zero byte's block.
			if last := bytes.LastIndexFunc(tc.want, func(r rune) bool { return r != 0 }); int64(len(w.b)) > (int64(last)/4096+1)*4096 {
				t.Errorf("wrote %d bytes; the last non-zero byte is at %d", len(w.b), last)
			}
		})
	}
}

// TestSparseHostile feeds sparse images that are corrupt or lie about their size. Each must fail with
// the expected error before writing anything it should not.
func TestSparseHostile(t *testing.T) {
	d := xPattern(4*4096, 3)
	for _, tc := range []struct {
		name   string
		img    xSimg
		off    int64  // expected FormatError.Off, or -1 for a LimitError, -2 for io.ErrUnexpectedEOF
		strct  string // expected FormatError.Struct
		maxOut int64  // bytes that may be written before the error is found
		limit  int64  // MaxExpanded; 0 = 1 GiB
	}{
		{"petabyte", xSimg{major: 1, blkSz: 1 << 20, totalBlks: 1 << 30, chunks: []xChunk{xSkip(1 << 30)}}, -1, "", 0, 0},
		{"largest declared", xSimg{major: 1, blkSz: 0xfffffffc, totalBlks: 0xffffffff}, -1, "", 0, 0},
		{"major version 2", xSimg{major: 2, blkSz: 4096}, 4, "android-sparse file header", 0, 0},
		{"file header short", xSimg{major: 1, fileHdrSz: 27, blkSz: 4096}, 8, "android-sparse file header", 0, 0},
		{"chunk header short", xSimg{major: 1, chunkHdrSz: 11, blkSz: 4096}, 10, "android-sparse file header", 0, 0},
		{"blk_sz 0", xSimg{major: 1, blkSz: 0}, 12, "android-sparse file header", 0, 0},
		{"blk_sz 4094", xSimg{major: 1, blkSz: 4094, totalBlks: 1}, 12, "android-sparse file header", 0, 0},
		{"chunk past the end", xSimg{major: 1, blkSz: 4096, totalBlks: 3,
			chunks: []xChunk{xRaw(2, d[:8192]), xRaw(2, d[:8192])}}, 28 + 12 + 8192 + 4, "android-sparse chunk header", 8192, 0},
		{"skip past the end", xSimg{major: 1, blkSz: 4096, totalBlks: 3,
			chunks: []xChunk{xSkip(2), xSkip(2)}}, 28 + 12 + 4, "android-sparse chunk header", 0, 0},
		{"huge skip", xSimg{major: 1, blkSz: 4096, totalBlks: 3,
			chunks: []xChunk{xSkip(0xffffffff)}}, 28 + 4, "android-sparse chunk header", 0, 0},
		{"chunks short of the declared size", xSimg{major: 1, blkSz: 4096, totalBlks: 4,
			chunks: []xChunk{xRaw(2, d[:8192])}}, 28 + 12 + 8192, "android-sparse chunks", 8192, 0},
		{"raw total_sz too small", xSimg{major: 1, blkSz: 4096, totalBlks: 2,
			chunks: []xChunk{{typ: simgChunkRaw, sz: 2, totalSz: 12 + 4096, data: d[:8192]}}}, 28 + 8, "android-sparse raw chunk", 0, 0},
		{"raw total_sz too big", xSimg{major: 1, blkSz: 4096, totalBlks: 2,
			chunks: []xChunk{{typ: simgChunkRaw, sz: 1, totalSz: 12 + 8192, data: d[:8192]}}}, 28 + 8, "android-sparse raw chunk", 0, 0},
		// chunk_sz × blk_sz is 2^32: in 32-bit arithmetic it would match total_sz 12 + 0.
		{"raw chunk_sz overflow", xSimg{major: 1, blkSz: 1 << 20, totalBlks: 1 << 12,
			chunks: []xChunk{{typ: simgChunkRaw, sz: 1 << 12, totalSz: 12, data: nil}}}, 28 + 8, "android-sparse raw chunk", 0, 1 << 33},
		{"total_sz below header", xSimg{major: 1, blkSz: 4096, totalBlks: 1,
			chunks: []xChunk{{typ: simgChunkDontCare, sz: 1, totalSz: 8}}}, 28 + 8, "android-sparse chunk header", 0, 0},
		{"fill with 8 bytes", xSimg{major: 1, blkSz: 4096, totalBlks: 1,
			chunks: []xChunk{{typ: simgChunkFill, sz: 1, totalSz: -1, data: make([]byte, 8)}}}, 28 + 8, "android-sparse fill chunk", 0, 0},
		{"don't care with data", xSimg{major: 1, blkSz: 4096, totalBlks: 1,
			chunks: []xChunk{{typ: simgChunkDontCare, sz: 1, totalSz: -1, data: make([]byte, 4)}}}, 28 + 8, "android-sparse don't-care chunk", 0, 0},
		{"crc with 0 bytes", xSimg{major: 1, blkSz: 4096, totalBlks: 0,
			chunks: []xChunk{{typ: simgChunkCRC32, totalSz: 12}}}, 28 + 8, "android-sparse CRC32 chunk", 0, 0},
		{"crc mismatch", xSimg{major: 1, blkSz: 4096, totalBlks: 1,
			chunks: []xChunk{xRaw(1, d[:4096]), xCRC(0x12345678)}}, 28 + 12 + 4096 + 12, "android-sparse CRC32 chunk", 4096, 0},
		{"crc mismatch after skip", xSimg{major: 1, blkSz: 4096, totalBlks: 3,
			chunks: []xChunk{xSkip(3), xCRC(crc32.ChecksumIEEE(make([]byte, 3*4096-1)))}}, 28 + 12 + 12, "android-sparse CRC32 chunk", 0, 0},
		{"unknown chunk type", xSimg{major: 1, blkSz: 4096, totalBlks: 1,
			chunks: []xChunk{{typ: 0xCAC5, sz: 1, totalSz: -1}}}, 28, "android-sparse chunk header", 0, 0},
		{"more chunks declared than present", xSimg{major: 1, blkSz: 4096, totalBlks: 1, totalChunks: 2,
			chunks: []xChunk{xSkip(1)}}, -2, "", 0, 0},
		{"raw data missing", xSimg{major: 1, blkSz: 4096, totalBlks: 4,
			chunks: []xChunk{{typ: simgChunkRaw, sz: 4, totalSz: 12 + 4*4096, data: d[:5000]}}}, -2, "", 4096, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &xMemWriter{max: 1 << 40}
			if tc.limit == 0 {
				tc.limit = 1 << 30
			}
			_, n, err := expandAny(w, bytes.NewReader(tc.img.bytes()), &Options{MaxExpanded: tc.limit})
			switch tc.off {
			case -1:
				var le *LimitError
				if !errors.As(err, &le) || le.Written != 0 || le.Declared <= le.Limit {
					t.Fatalf("Expand: %v (%+v); want a *LimitError before writing", err, le)
				}
			case -2:
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("Expand: %v; want io.ErrUnexpectedEOF", err)
				}
			default:
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("Expand: %v; want a *FormatError", err)
				}
				if fe.Off != tc.off || fe.Struct != tc.strct {
					t.Errorf("FormatError at %d in %q (%v); want %d in %q", fe.Off, fe.Struct, err, tc.off, tc.strct)
				}
			}
			if int64(len(w.b)) > tc.maxOut || n > max(tc.maxOut, 3*4096) {
				t.Errorf("wrote %d bytes (offset %d) before failing; want at most %d", len(w.b), n, tc.maxOut)
			}
		})
	}
}

// TestSparseImg2simg expands what the real img2simg makes of an image full of patterns libsparse
// treats specially: blocks of one repeated 32-bit word (fill chunks), zero blocks (skip or zero fill)
// and data.
func TestSparseImg2simg(t *testing.T) {
	dir := t.TempDir()
	var img []byte
	img = append(img, xPattern(3*4096, 4)...)
	img = append(img, bytes.Repeat([]byte{1, 2, 3, 4}, 5*1024)...)
	img = append(img, make([]byte, 7*4096)...)
	img = append(img, bytes.Repeat([]byte{0xff}, 4096)...)
	img = append(img, xPattern(4096, 5)...)
	img = append(img, make([]byte, 9*4096)...)
	raw := filepath.Join(dir, "raw.img")
	if err := os.WriteFile(raw, img, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bs := range []string{"4096", "1024", "8192"} {
		t.Run(bs, func(t *testing.T) {
			simg := filepath.Join(dir, "s"+bs)
			xRun(t, "img2simg", raw, simg, bs)
			out, f, n, err := xExpandFileAny(t, simg, dir, nil)
			if err != nil || f != FormatAndroidSparse {
				t.Fatalf("Expand = %s, %v", f, err)
			}
			xCheckExpanded(t, img, out, n)
		})
	}
}

// TestCRCZeros checks the O(log n) zero extension against crc32 over real zeros.
func TestCRCZeros(t *testing.T) {
	z := newCRCZeros()
	zeros := make([]byte, 1<<20+7)
	for _, seed := range []uint32{0, 1, 0xdeadbeef, 0xffffffff} {
		for _, n := range []int{0, 1, 2, 3, 4, 7, 8, 255, 256, 4096, 65537, 1 << 20, 1<<20 + 7} {
			want := crc32.Update(seed, crc32.IEEETable, zeros[:n])
			if got := z.update(seed, uint64(n)); got != want {
				t.Errorf("update(%#x, %d) = %#x, want %#x", seed, n, got, want)
			}
		}
	}
	// Composition: n zeros in two steps equal one step of the sum, for sizes too big to check directly.
	a, b := uint64(3<<40+12345), uint64(1<<33+1)
	if got, want := z.update(z.update(7, a), b), z.update(7, a+b); got != want {
		t.Errorf("update is not additive: %#x != %#x", got, want)
	}
}

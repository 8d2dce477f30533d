package imgio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/ulikunitz/xz"
)

// xzCompress compresses b with github.com/ulikunitz/xz in blocks of blockSize bytes.
func xzCompress(t *testing.T, b []byte, blockSize int64) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := xz.WriterConfig{BlockSize: blockSize}.NewWriter(&out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// xzBlockHeaders returns the offsets of the block headers in b: the places where a header size
// byte, an LZMA2 filter and a matching CRC32 line up.
func xzBlockHeaders(b []byte) []int {
	var at []int
	for i := 0; i < len(b); i++ {
		size := (int(b[i]) + 1) * 4
		if b[i] == 0 || i+size > len(b) {
			continue
		}
		h := b[i : i+size]
		if crc32.ChecksumIEEE(h[:size-4]) == binary.LittleEndian.Uint32(h[size-4:]) && bytes.Contains(h, []byte{0x21, 0x01}) {
			at = append(at, i)
		}
	}
	return at
}

// xzSetDict sets the dictionary property of the block header at i to prop and fixes its CRC32.
func xzSetDict(b []byte, i int, prop byte) {
	size := (int(b[i]) + 1) * 4
	h := b[i : i+size]
	j := bytes.Index(h, []byte{0x21, 0x01}) + 2
	h[j] = prop
	binary.LittleEndian.PutUint32(h[size-4:], crc32.ChecksumIEEE(h[:size-4]))
}

// TestExpandXZLaterDictionary: a dictionary past xzMaxDict is refused before it is allocated in
// every block, not only the first: a second stream's (the 313 KB file whose second stream asked
// for 3 GiB and grew the server by 2.2 GB) and a later block of a multi-block stream. A valid
// multi-stream, multi-block file still expands.
func TestExpandXZLaterDictionary(t *testing.T) {
	data := xPattern(300<<10, 3)
	one := xzCompress(t, data[:100<<10], 1<<62)
	multi := xzCompress(t, data, 64<<10)
	good := append(bytes.Clone(one), multi...)
	w := &xMemWriter{max: 1 << 20}
	if _, n, err := expandAny(w, bytes.NewReader(good), &Options{MaxExpanded: 1 << 20}); err != nil || n != int64(len(data)+100<<10) {
		t.Fatalf("a valid two-stream file: %d bytes, %v", n, err)
	}
	heads := xzBlockHeaders(multi)
	if len(heads) < 3 {
		t.Fatalf("found %d block headers in a 300 KiB stream of 64 KiB blocks", len(heads))
	}
	for _, tc := range []struct {
		name string
		at   int // in good
	}{
		{"second stream's first block", len(one) + heads[0]},
		{"a later block of the second stream", len(one) + heads[2]},
	} {
		for _, prop := range []byte{40, 37} { // 4 GiB - 1, 1.5 GiB
			bad := bytes.Clone(good)
			xzSetDict(bad, tc.at, prop)
			w := &xMemWriter{max: 1 << 20}
			_, _, err := expandAny(w, bytes.NewReader(bad), &Options{MaxExpanded: 1 << 20})
			var ue *UnsupportedError
			if !errors.As(err, &ue) || ue.Off != int64(tc.at) {
				t.Errorf("%s with dictionary property %d: %v; want an *UnsupportedError at %d", tc.name, prop, err, tc.at)
			}
		}
	}
}

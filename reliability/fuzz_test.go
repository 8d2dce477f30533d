package reliability

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
	"github.com/zrviz/zrviz/imgio"
)

// fuzzBase is imgio/testdata/basic.img (128 MiB, mkfs + sload), analysed
// once per fuzz worker.
var fuzzBase = sync.OnceValues(func() (*Base, error) {
	data, err := gunzip(filepath.Join("../imgio/testdata", "basic.img.gz"))
	if err != nil {
		return nil, err
	}
	return NewBase("basic", data)
})

// fuzzTargets lists the blocks a patch record may land in: superblocks,
// both checkpoint packs, the journals' blocks, NAT blocks in use, every
// node and dentry block. The fuzzer picks one by index.
func fuzzTargets(b *Base) []int64 {
	t := []int64{0, blockSize, b.CPOff, b.CPTailOff, b.CPOtherOff}
	if b.NATJournal >= 0 {
		t = append(t, b.NATJournal&^(blockSize-1))
	}
	for _, off := range b.NAT {
		t = append(t, off&^(blockSize-1))
	}
	for _, n := range b.Nodes {
		t = append(t, n.Off)
	}
	for _, f := range b.Files {
		for _, d := range f.Dentries {
			t = append(t, d&^(blockSize-1))
		}
	}
	t = append(t, int64(b.Vol.SITBlkaddr)*blockSize, int64(b.Vol.SITBlkaddr+512)*blockSize)
	return t
}

// patchesFrom decodes fuzz input as patch records: target u8, offset in
// block u16, length u8 (1..16), data. A record with target 0xFF and
// offset 0 also sets a flag: recompute the CP CRC afterwards.
func patchesFrom(b *Base, targets []int64, in []byte) (ps []Patch, trunc int64, fixCRC bool) {
	trunc = int64(len(b.Data))
	for len(in) >= 4 {
		tg, off, n := in[0], int64(binary.LittleEndian.Uint16(in[1:])), int(in[3]%16)+1
		in = in[4:]
		switch {
		case tg == 0xFF && off == 0:
			fixCRC = true
			continue
		case tg == 0xFE:
			trunc = min(trunc, off*blockSize+int64(n))
			continue
		}
		n = min(n, len(in))
		base := targets[int(tg)%len(targets)]
		ps = append(ps, Patch{base + off%blockSize, append([]byte(nil), in[:n]...)})
		in = in[n:]
	}
	if fixCRC {
		head := make([]byte, blockSize)
		(&Overlay{Base: bytes.NewReader(b.Data), Size: int64(len(b.Data)), Patches: ps}).ReadAt(head, b.CPOff)
		fixCPCRC(head)
		ps = append(ps, Patch{b.CPOff, head})
	}
	return ps, trunc, fixCRC
}

// FuzzImagePatches corrupts a real image with fuzzer-chosen patches over
// its metadata and node blocks, then walks it through imgio, sim and the
// engine (both modes). Anything but a result or a typed error fails.
func FuzzImagePatches(f *testing.F) {
	b, err := fuzzBase()
	if err != nil {
		f.Fatal(err)
	}
	targets := fuzzTargets(b)
	f.Add([]byte{})
	f.Add([]byte{0, 0x10, 0x04, 3, 0, 0, 0, 0})                  // log_blocksize = 0
	f.Add([]byte{2, 136, 0, 3, 0xff, 0xff, 0, 0, 0xff, 0, 0, 0}) // cp total, crc fixed
	f.Add([]byte{0xFE, 3, 0, 0})                                 // truncated after 3 blocks
	for i := range min(len(targets), 40) {
		f.Add([]byte{byte(i), 0xe8, 0x0f, 3, 0xff, 0xff, 0xff, 0xff})                 // footer nid
		f.Add([]byte{byte(i), 0x1e, 0x00, 11, 0, 0, 0, 0, 3, 0, 0, 0, 0xff, 0xff, 2}) // dentry 0
	}
	lim := Limits{MaxFiles: 32, EngineRuns: true, EngineMaxSize: 1 << 30}
	f.Fuzz(func(t *testing.T, in []byte) {
		ps, size, _ := patchesFrom(b, targets, in)
		ov := &Overlay{Base: bytes.NewReader(b.Data), Size: size, Patches: ps}
		if _, v := Exercise(ov, size, lim); v != nil {
			t.Fatalf("%v\n%s", v, v.Stack)
		}
	})
}

// FuzzNewImageRaw hands arbitrary bytes to imgio.NewImage as a whole image.
func FuzzNewImageRaw(f *testing.F) {
	b, err := fuzzBase()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b.Data[:2*blockSize])
	f.Add(b.Data[:8*blockSize])
	f.Add([]byte{})
	lim := Limits{MaxFiles: 32, EngineRuns: true, EngineMaxSize: 1 << 30}
	f.Fuzz(func(t *testing.T, in []byte) {
		if _, v := Exercise(bytes.NewReader(in), int64(len(in)), lim); v != nil {
			t.Fatalf("%v\n%s", v, v.Stack)
		}
	})
}

// memWriterAt keeps what is written in 4 KiB pages, up to limit bytes of
// pages, so a bomb that slips past imgio's bound fails the test instead of
// filling memory.
type memWriterAt struct {
	pages map[int64][]byte
	limit int64
	used  int64
	max   int64 // highest end offset written
}

var errWriterFull = errors.New("memWriterAt: over its limit")

func (m *memWriterAt) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("memWriterAt: negative offset")
	}
	if m.pages == nil {
		m.pages = map[int64][]byte{}
	}
	for i := 0; i < len(p); {
		pg := (off + int64(i)) / blockSize
		in := (off + int64(i)) % blockSize
		page, ok := m.pages[pg]
		if !ok {
			if m.used+blockSize > m.limit {
				return i, errWriterFull
			}
			page = make([]byte, blockSize)
			m.pages[pg] = page
			m.used += blockSize
		}
		i += copy(page[in:], p[i:])
	}
	m.max = max(m.max, off+int64(len(p)))
	return len(p), nil
}

// fuzzMaxExpanded is the expansion bound the fuzz and bomb tests set.
const fuzzMaxExpanded = 8 << 20

// FuzzExpand feeds arbitrary bytes to imgio.ExpandContext (format detection and
// the gzip, xz, zstd and Android sparse decoders) with an 8 MiB bound: it
// must return within the bound or with an error, never write past it.
func FuzzExpand(f *testing.F) {
	payload := bytes.Repeat([]byte("zrviz"), 3000)
	var gz, zs, x bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(payload)
	gw.Close()
	zw, _ := zstd.NewWriter(&zs)
	zw.Write(payload)
	zw.Close()
	xw, _ := xz.NewWriter(&x)
	xw.Write(payload)
	xw.Close()
	f.Add(gz.Bytes())
	f.Add(zs.Bytes())
	f.Add(x.Bytes())
	f.Add(sparseImage(4096, 4, []sparseChunk{{kind: chunkRaw, blocks: 1, data: bytes.Repeat([]byte{1}, 4096)},
		{kind: chunkFill, blocks: 2, fill: 0xdeadbeef}, {kind: chunkDontCare, blocks: 1}}))
	f.Add(payload)
	f.Fuzz(func(t *testing.T, in []byte) {
		w := &memWriterAt{limit: 2 * fuzzMaxExpanded}
		_, n, err := imgio.ExpandContext(context.Background(), w, bytes.NewReader(in), &imgio.Options{MaxExpanded: fuzzMaxExpanded})
		if errors.Is(err, errWriterFull) || w.max > fuzzMaxExpanded {
			t.Fatalf("wrote past the bound: max offset %d, n %d, err %v", w.max, n, err)
		}
		if err == nil && n > fuzzMaxExpanded {
			t.Fatalf("expanded %d bytes without error, bound %d", n, fuzzMaxExpanded)
		}
	})
}

package core

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zrviz/zrviz/gc"
)

// sweep is how many random cases a property test runs: n in the full run, a quarter under -short
// (the fast tier), drawn from the same seeded generator, so the short cases are the first of the full.
func sweep(n int) int {
	if testing.Short() {
		return max(n/4, 1)
	}
	return n
}

// memFile is a hand-built file: slots[i] is file block i. A node exists
// when any slot it covers (directly or through children) is non-NULL, or
// when it is listed in extra.
type memFile struct {
	api   int
	apb   int // slots per direct node; 0 = 1018
	slots map[uint64]uint32
	n     uint64 // slots beyond n are NULL
	nodes map[nodeKey]bool
}

func newMemFile(api int, slots ...uint32) *memFile {
	f := &memFile{api: api, slots: map[uint64]uint32{}, nodes: map[nodeKey]bool{}}
	for i, a := range slots {
		f.set(uint64(i), a)
	}
	return f
}

// geom is the file's dnode capacities, as the engine derives them from Inode.
func (f *memFile) geom() dnodeGeom {
	in := Inode{AddrsPerInode: f.api, AddrsPerBlock: f.apb}
	return in.geom()
}

func (f *memFile) set(i uint64, a uint32) {
	f.slots[i] = a
	f.n = max(f.n, i+1)
	p := locate(i, f.geom())
	for d := 0; d < p.depth; d++ {
		f.nodes[p.path[d]] = true
	}
}

func (f *memFile) DnodeSlots(index uint64) (uint64, []uint32, int, error) {
	p := locate(index, f.geom())
	out := make([]uint32, p.cap)
	for i := range out {
		out[i] = f.slots[p.start+uint64(i)]
	}
	missing := 0
	for d := 0; d < p.depth; d++ {
		if !f.nodes[p.path[d]] {
			missing++
		}
	}
	return p.start, out, missing, nil
}

// memSIT is a hand-built SIT: a segment's valid count is its popcount
// unless overridden.
type memSIT struct {
	maps  map[uint32]*[64]byte
	count map[uint32]uint32
}

func newMemSIT() *memSIT { return &memSIT{maps: map[uint32]*[64]byte{}, count: map[uint32]uint32{}} }

func (s *memSIT) SegmentValidMap(segno uint32) (uint32, [64]byte, error) {
	m := s.maps[segno]
	if m == nil {
		return 0, [64]byte{}, nil
	}
	if c, ok := s.count[segno]; ok {
		return c, *m, nil
	}
	c := uint32(0)
	for k := uint32(0); k < 512; k++ {
		if testBit(m, k) {
			c++
		}
	}
	return c, *m, nil
}

func (s *memSIT) set(v *Volume, addrs ...uint32) {
	for _, a := range addrs {
		if a < v.MainBlkaddr || a >= v.MaxBlkaddr {
			continue
		}
		seg := segnoOf(v, a)
		if s.maps[seg] == nil {
			s.maps[seg] = new([64]byte)
		}
		setBit(s.maps[seg], (a-v.Segment0Blkaddr)%512)
	}
}

func (s *memSIT) clear(v *Volume, a uint32) {
	if m := s.maps[segnoOf(v, a)]; m != nil {
		clearBit(m, (a-v.Segment0Blkaddr)%512)
	}
}

// refVolume is the reference 256 MiB geometry of the spec.
func refVolume() Volume {
	return Volume{BlockSize: 4096, BlocksPerSeg: 512, Segment0Blkaddr: 512, MainBlkaddr: 4096,
		MaxBlkaddr: 65536, MainSegments: 120, SegsPerSec: 1,
		UserBlockCount: 50000, ValidBlockCount: 20000, ValidNodeCount: 100,
		CurrentSegments: []uint32{0, 1, 2, 100, 101, 102}, HotDataSegno: 1, HotDataBlkoff: 10}
}

// state is a hand-built single-file state.
type state struct {
	vol  Volume
	file *memFile
	sit  *memSIT
	ino  Inode
}

func newState(slots []uint32, sizeBlocks int64) *state {
	st := &state{vol: refVolume(), file: newMemFile(873, slots...), sit: newMemSIT()}
	for _, a := range slots {
		if isBlock(a) {
			st.sit.set(&st.vol, a)
		}
	}
	st.ino = Inode{Ino: 10, Type: "file", Size: sizeBlocks * 4096, Blocks: uint64(len(slots)) + 1,
		AddrsPerInode: 873, SlotsEnd: st.file.n}
	return st
}

func (st *state) input() Input {
	return Input{Path: "/f", Volume: st.vol, Inode: st.ino, Slots: st.file, SIT: st.sit}
}

// randomState builds a file of a few chunks with runs, duplicates, NEW,
// NULL, out-of-main addresses and cleared SIT bits.
func randomState(r *rand.Rand) (*state, Request) { return randomStateN(r, 3000) }

// randomStateN is randomState with up to maxN slots.
func randomStateN(r *rand.Rand, maxN int) (*state, Request) {
	n := 1 + r.IntN(maxN)
	slots := make([]uint32, n)
	next := uint32(4096 + r.IntN(40000))
	var clearLater []uint32
	for i := range slots {
		switch p := r.IntN(100); {
		case p < 8:
			slots[i] = NullAddr
		case p < 16:
			slots[i] = NewAddr
		case p < 18 && i > 0:
			slots[i] = slots[r.IntN(i)] // duplicate (may be special)
		case p < 19:
			slots[i] = uint32(r.IntN(4096)) // below main
		default:
			if r.IntN(20) == 0 {
				next = uint32(4096 + r.IntN(60000))
			}
			slots[i] = next
			next++
			if r.IntN(60) == 0 {
				clearLater = append(clearLater, slots[i])
			}
		}
	}
	st := newState(slots, int64(n))
	for _, a := range clearLater {
		st.sit.clear(&st.vol, a)
	}
	if r.IntN(4) == 0 {
		st.vol.ValidBlockCount = st.vol.UserBlockCount - uint64(r.IntN(200))
	}
	off := int64(r.IntN(n*4096 + 8192))
	length := int64(1 + r.IntN(n*4096+8192))
	return st, Request{Offset: off, Length: length, KeepSize: r.IntN(2) == 0}
}

func (e Extent) String() string {
	if e.State == "addr" {
		return fmt.Sprintf("%d+%d@%d", e.Index, e.Count, e.Addr)
	}
	return fmt.Sprintf("%d+%d:%s", e.Index, e.Count, e.State)
}

// setBit and clearBit build an image's valid map for a test's memSIT (input, not the model's SIT).
func setBit(m *[64]byte, k uint32)   { m[k>>3] |= 0x80 >> (k & 7) }
func clearBit(m *[64]byte, k uint32) { m[k>>3] &^= 0x80 >> (k & 7) }

// testBit reports whether bit k of a valid map is set (f2fs_test_bit's order).
func testBit(m *[64]byte, k uint32) bool { return m[k>>3]&(0x80>>(k&7)) != 0 }

// randomRunSlots draws n slots of a random file for the property tests: pNull in a hundred NULL,
// pNew more NEW, the rest addresses in runs from a random start that jump ahead one time in
// jumpEvery (below block 60,000; past it the slot stays NULL). r is drawn in a fixed order, so a
// seed keeps its file.
func randomRunSlots(r *rand.Rand, n, pNull, pNew, jumpEvery int) []uint32 {
	slots := make([]uint32, n)
	next := uint32(8192 + r.IntN(20000))
	for i := range slots {
		switch p := r.IntN(100); {
		case p < pNull:
			slots[i] = NullAddr
		case p < pNull+pNew:
			slots[i] = NewAddr
		default:
			if r.IntN(jumpEvery) == 0 {
				next += uint32(1 + r.IntN(1000))
			}
			if next >= 60000 {
				break
			}
			slots[i] = next
			next++
		}
	}
	return slots
}

// randomGCVolume is the segment manager's volume and the block owners for the property tests'
// random file (randomRunSlots on st, v its volume with the data logs at segments 1–3): every
// segment's SIT as st holds it, random mtimes for those with valid blocks, and now and then
// reserved segments that leave the volume short of free ones. r is drawn in a fixed order.
func randomGCVolume(r *rand.Rand, st *state, in Input, slots []uint32) (gc.Volume, *memOwners) {
	v := &in.Volume
	own := &memOwners{in: in, index: map[uint32]uint64{}}
	for i, a := range slots {
		if isBlock(a) {
			own.index[a] = uint64(i)
		}
	}
	gv := gc.Volume{SegsPerSec: 1, Segments: make([]gc.Segment, v.MainSegments), ElapsedTime: 1000}
	free := uint32(0)
	for no := range v.MainSegments {
		valid, bm, _ := st.sit.SegmentValidMap(no)
		gv.Segments[no] = gc.Segment{Valid: valid, Map: bm, Type: gc.WarmData}
		if valid > 0 {
			gv.Segments[no].Mtime = uint64(r.IntN(1000))
		} else if !slices.Contains(v.CurrentSegments, no) {
			free++
		}
	}
	for log, no := range v.CurrentSegments {
		gv.Segments[no].Type = log
	}
	gv.Current = [gc.NumLogs]gc.CurSeg{{Segno: 1, Blkoff: v.HotDataBlkoff}, {Segno: 2, Blkoff: v.WarmDataBlkoff},
		{Segno: 3, Blkoff: v.ColdDataBlkoff}, {Segno: 113}, {Segno: 114}, {Segno: 115}}
	if r.IntN(3) == 0 {
		gv.ReservedSegments = free - uint32(r.IntN(3)) // short of space, or nearly
	}
	return gv, own
}

package player

import (
	"math/rand/v2"

	"github.com/zrviz/zrviz/core"
)

// fakeFile is a file of hand-made slots laid out as f2fs lays them: 873 in the inode, 1018 in each
// of i_nid[0] and i_nid[1], then 1018 per direct node under i_nid[2]. A node exists when any of its
// slots is not NULL.
type fakeFile struct {
	slots []uint32
}

const fakeAPI, fakeAPB = 873, 1018

func fakeLocate(index uint64) (start uint64, capacity int, depth int) {
	switch {
	case index < fakeAPI:
		return 0, fakeAPI, 0
	case index < fakeAPI+fakeAPB:
		return fakeAPI, fakeAPB, 1
	case index < fakeAPI+2*fakeAPB:
		return fakeAPI + fakeAPB, fakeAPB, 1
	}
	b := index - (fakeAPI + 2*fakeAPB)
	return fakeAPI + 2*fakeAPB + b/fakeAPB*fakeAPB, fakeAPB, 2
}

func (f *fakeFile) DnodeSlots(index uint64) (uint64, []uint32, int, error) {
	start, capacity, depth := fakeLocate(index)
	out := make([]uint32, capacity)
	any := false
	for i := range out {
		if k := start + uint64(i); k < uint64(len(f.slots)) {
			out[i] = f.slots[k]
			any = any || out[i] != core.NullAddr
		}
	}
	missing := 0
	if !any {
		missing = 1 // the direct node; an indirect parent is taken to exist
		if depth == 0 {
			missing = 0
		}
	}
	return start, out, missing, nil
}

// fakeSIT has every listed address's bit set, except the cleared ones.
type fakeSIT struct {
	maps map[uint32]*[64]byte
	main uint32
}

func newFakeSIT(main uint32, addrs []uint32) *fakeSIT {
	s := &fakeSIT{maps: map[uint32]*[64]byte{}, main: main}
	for _, a := range addrs {
		if a == core.NullAddr || a == core.NewAddr || a < main {
			continue
		}
		seg := (a - main) / 512
		m := s.maps[seg]
		if m == nil {
			m = new([64]byte)
			s.maps[seg] = m
		}
		k := (a - main) % 512
		m[k>>3] |= 0x80 >> (k & 7)
	}
	return s
}

func (s *fakeSIT) clear(a uint32) {
	if m := s.maps[(a-s.main)/512]; m != nil {
		k := (a - s.main) % 512
		m[k>>3] &^= 0x80 >> (k & 7)
	}
}

func (s *fakeSIT) SegmentValidMap(segno uint32) (uint32, [64]byte, error) {
	m := s.maps[segno]
	if m == nil {
		return 0, [64]byte{}, nil
	}
	n := uint32(0)
	for _, b := range m {
		for ; b != 0; b &= b - 1 {
			n++
		}
	}
	return n, *m, nil
}

// fakeSpec builds a run over slots on a volume whose main area starts at 4096 (segment0 512).
func fakeSpec(slots []uint32, modes []core.Mode, req core.Request) Spec {
	sit := newFakeSIT(4096, slots)
	in := core.Input{Path: "/fake", Slots: &fakeFile{slots: slots}, SIT: sit,
		Volume: core.Volume{BlockSize: 4096, BlocksPerSeg: 512, Segment0Blkaddr: 512, MainBlkaddr: 4096,
			MaxBlkaddr: 4096 + 512*40000, MainSegments: 40000, SegsPerSec: 1,
			UserBlockCount: 30_000_000, ValidBlockCount: 1000, ValidNodeCount: 10,
			CurrentSegments: []uint32{39990, 39991, 39992, 39993, 39994, 39995}, HotDataSegno: 39990},
		Inode: core.Inode{Ino: 9, Type: "file", Size: int64(len(slots)) * 4096, Blocks: uint64(len(slots)),
			AddrsPerInode: fakeAPI, SlotsEnd: uint64(len(slots))}}
	return Spec{Input: in, Request: req, Modes: modes}
}

// randomSlots makes a file of runs with NEW and NULL slots mixed in, repeated addresses and some
// cleared SIT bits (returned for the caller to clear).
func randomSlots(r *rand.Rand, n int) (slots, cleared []uint32) {
	slots = make([]uint32, n)
	next := uint32(4096 + r.IntN(100000))
	for i := range slots {
		switch p := r.IntN(100); {
		case p < 7:
			slots[i] = core.NullAddr
		case p < 14:
			slots[i] = core.NewAddr
		case p < 15 && i > 0:
			slots[i] = slots[r.IntN(i)]
		default:
			if r.IntN(25) == 0 {
				next = uint32(4096 + r.IntN(1_000_000))
			}
			slots[i] = next
			next++
			if r.IntN(200) == 0 {
				cleared = append(cleared, slots[i])
			}
		}
	}
	return slots, cleared
}

func randomSpec(r *rand.Rand, n int) Spec {
	slots, cleared := randomSlots(r, n)
	modes := [][]core.Mode{{core.PerBlock}, {core.Batched}, {core.PerBlock, core.Batched}}[r.IntN(3)]
	off := int64(r.IntN(n*4096 + 4096))
	length := int64(1 + r.IntN(n*4096+8192))
	spec := fakeSpec(slots, modes, core.Request{Offset: off, Length: length, KeepSize: r.IntN(2) == 0})
	for _, a := range cleared {
		spec.Input.SIT.(*fakeSIT).clear(a)
	}
	return spec
}

package core

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSeqProperties runs random sequences of buffered writes, zeros, fsyncs and syncs on clean
// random files (runs of valid blocks, holes, NEW slots) in both modes and checks after every
// operation: no block is mapped twice, every mapped block's SIT bit is set, and both modes leave
// the same slots, dirty pages and SIT (only the calls differ); the per-block calls, one block
// each, are the batched calls expanded.
func TestSeqProperties(t *testing.T) {
	iters := 120
	if testing.Short() {
		iters = 20
	}
	for seed := range uint64(iters) {
		r := rand.New(rand.NewPCG(seed, 17))
		n := 1 + r.IntN(2500)
		slots := make([]uint32, n)
		next := uint32(8192 + r.IntN(20000))
		for i := range slots {
			switch p := r.IntN(100); {
			case p < 15:
				slots[i] = NullAddr
			case p < 25:
				slots[i] = NewAddr
			default:
				if r.IntN(30) == 0 {
					next += uint32(1 + r.IntN(1000))
				}
				if next >= 60000 { // the main area ends at 65536: no block past it
					break
				}
				slots[i] = next
				next++
			}
		}
		st := newState(slots, int64(n))
		in := st.input()
		in.Volume.WarmDataSegno, in.Volume.WarmDataBlkoff = 2, uint32(r.IntN(512))
		if r.IntN(3) == 0 {
			in.Volume.IPUTuned, in.Volume.IPUPolicy = true, IPUFsync
		}
		qs := [2]*Seq{NewSeq(PerBlock), NewSeq(Batched)}
		for k := range 12 {
			op := r.IntN(10)
			off := int64(r.IntN(n*4096 + 16384))
			length := int64(1 + r.IntN(64*4096))
			keep := r.IntN(2) == 0
			var calls [2][]Call
			var errs [2]string
			for m, q := range qs {
				var err error
				switch {
				case op < 4:
					_, err = q.Write(in, off, length)
				case op < 8:
					var res *Result
					res, _, _, err = q.Zero(in, Request{Offset: off, Length: length, KeepSize: keep})
					if res != nil {
						calls[m] = slices.Collect(res.Calls.All())
						errs[m] = res.Errno + " " + res.Message
					}
				case op < 9:
					_, err = q.Fsync(in)
				default:
					_, err = q.Sync()
				}
				if err != nil {
					t.Fatalf("seed %d op %d (%d): %s: %v", seed, k, op, q.Mode(), err)
				}
			}
			var blocks [2][]uint32
			for m, cs := range calls {
				for _, c := range cs {
					for b := range c.Len {
						blocks[m] = append(blocks[m], c.Start+b)
					}
				}
			}
			if !slices.Equal(blocks[0], blocks[1]) {
				t.Fatalf("seed %d op %d: per-block invalidated %v, batched %v", seed, k, blocks[0], blocks[1])
			}
			var maps [2][]Extent
			for m, q := range qs {
				f := q.File(in)
				ext, err := SlotMap(f)
				if err != nil {
					t.Fatal(err)
				}
				maps[m] = ext
				seen := map[uint32]bool{}
				for _, e := range ext {
					if e.State != "addr" {
						continue
					}
					for a := e.Addr; a < e.Addr+uint32(e.Count); a++ {
						if seen[a] {
							t.Fatalf("seed %d op %d %s: block %d mapped twice", seed, k, q.Mode(), a)
						}
						seen[a] = true
						v := &f.Volume
						_, bm, err := f.SIT.SegmentValidMap(segnoOf(v, a))
						if err != nil {
							t.Fatal(err)
						}
						if !testBit(&bm, (a-v.Segment0Blkaddr)%512) {
							t.Fatalf("seed %d op %d %s: block %d is mapped but its SIT bit is clear", seed, k, q.Mode(), a)
						}
					}
				}
			}
			if !slices.Equal(maps[0], maps[1]) {
				t.Fatalf("seed %d op %d: the modes' slot maps differ", seed, k)
			}
			f0, f1 := qs[0].File(in), qs[1].File(in)
			if !slices.Equal(f0.Inode.Dirty, f1.Inode.Dirty) || f0.Inode.Size != f1.Inode.Size || f0.Inode.Blocks != f1.Inode.Blocks {
				t.Fatalf("seed %d op %d (%d): the modes' files differ (%q): dirty %v / %v, size %d / %d, blocks %d / %d", seed, k, op, errs, f0.Inode.Dirty, f1.Inode.Dirty, f0.Inode.Size, f1.Inode.Size, f0.Inode.Blocks, f1.Inode.Blocks)
			}
			for _, no := range qs[0].Touched() {
				v0, m0, _ := f0.SIT.SegmentValidMap(no)
				v1, m1, _ := f1.SIT.SegmentValidMap(no)
				if v0 != v1 || m0 != m1 {
					t.Fatalf("seed %d op %d: segment %d differs between the modes", seed, k, no)
				}
			}
		}
	}
}

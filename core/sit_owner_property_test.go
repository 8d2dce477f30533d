package core

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/zrviz/zrviz/gc"
)

// TestSITOwnerProperties holds issue 36's one SIT owner against a fresh recomputation. Random
// sequences of writes, zeros, punches, truncates, fsyncs, syncs, checkpoints, foreground and
// background gc calls and clock changes run in both modes, on a sequence with a segment manager
// (MountGC) and on one without (its SIT read lazily from the image, gc ops left out), on a volume
// whose only file holds every valid block. After every operation, for every main segment, the SIT
// the sequence answers with — the segment manager's entry, and the SIT source its next walk reads
// (which must be the same) — has
//
//   - a valid count equal to the popcount of its valid map, and
//   - a valid map whose set bits are exactly the blocks the file's slot map holds in the segment
//     (recomputed from the file's slots as the operations left them),
//
// and, with a segment manager, a checkpointed map holding every valid block and an mtime no later
// than max_mtime.
func TestSITOwnerProperties(t *testing.T) {
	iters := 60
	if testing.Short() {
		iters = 12
	}
	checked, refused := 0, 0
	for seed := range uint64(iters) {
		for _, mounted := range []bool{true, false} {
			for _, mode := range Modes {
				c, r := runSITOwnerSeq(t, seed, mode, mounted)
				checked += c
				refused += r
			}
		}
	}
	if checked < iters {
		t.Fatalf("only %d operations checked", checked)
	}
	t.Logf("%d operations checked against a recomputation; %d sequences stopped at a refusal", checked, refused)
}

func runSITOwnerSeq(t *testing.T, seed uint64, mode Mode, mounted bool) (checked, refused int) {
	r := rand.New(rand.NewPCG(seed, 36))
	n := 1 + r.IntN(2500)
	slots := randomRunSlots(r, n, 15, 10, 30)
	st := newState(slots, int64(n))
	in := st.input()
	v := &in.Volume
	v.HotDataSegno, v.HotDataBlkoff = 1, uint32(r.IntN(512))
	v.WarmDataSegno, v.WarmDataBlkoff = 2, uint32(r.IntN(512))
	v.ColdDataSegno, v.ColdDataBlkoff = 3, uint32(r.IntN(512))
	v.CurrentSegments = []uint32{1, 2, 3, 113, 114, 115}
	q := NewSeq(mode)
	if mounted {
		gv, own := randomGCVolume(r, st, in, slots)
		if err := q.MountGC(*v, st.sit, gv, own); err != nil {
			t.Fatal(err)
		}
	}
	for k := range 16 {
		op := r.IntN(16)
		off, length := int64(r.IntN(n*4096+16384)), int64(1+r.IntN(64*4096))
		var err error
		switch {
		case op < 3:
			_, err = q.Write(in, off, length)
		case op < 6:
			_, _, _, err = q.Zero(in, Request{Offset: off, Length: length, KeepSize: r.IntN(2) == 0})
		case op < 7:
			_, _, err = q.Punch(in, off, length)
		case op < 8:
			_, _, err = q.Truncate(in, off)
		case op < 9:
			_, err = q.Fsync(in)
		case op < 10:
			_, err = q.Sync()
		case !mounted:
			continue // checkpoint and gc need the whole SIT
		case op < 11:
			_, err = q.Checkpoint()
		case op < 13:
			_, err = q.GC(1)
		case op < 14:
			_, err = q.GC(0)
		default:
			q.SetNow(uint64(r.IntN(100)))
		}
		what := fmt.Sprintf("seed %d %s mounted %v op %d (%d)", seed, mode, mounted, k, op)
		if err != nil {
			if errors.Is(err, ErrUnmodelled) {
				return checked, 1 // the refused operation may have changed part of the state
			}
			t.Fatalf("%s: %v", what, err)
		}
		checkSITOwner(t, q, in, what)
		checked++
	}
	return checked, 0
}

// checkSITOwner compares the sequence's SIT with the one recomputed from the file's slots.
func checkSITOwner(t *testing.T, q *Seq, in Input, what string) {
	t.Helper()
	f := q.File(in)
	ext, err := SlotMap(f)
	if err != nil {
		t.Fatal(err)
	}
	v := &f.Volume
	want := make(map[uint32]*[64]byte)
	for _, e := range ext {
		if e.State != "addr" {
			continue
		}
		for a := e.Addr; a < e.Addr+uint32(e.Count); a++ {
			no := segnoOf(v, a)
			if want[no] == nil {
				want[no] = new([64]byte)
			}
			k := (a - v.Segment0Blkaddr) % 512
			if testBit(want[no], k) {
				t.Fatalf("%s: block %d mapped twice", what, a)
			}
			want[no][k>>3] |= 0x80 >> (k & 7)
		}
	}
	sm := q.GCState()
	var minMax [2]uint64
	if sm != nil {
		minMax[0], minMax[1] = sm.MinMaxMtime()
	}
	for no := range v.MainSegments {
		var w [64]byte
		if want[no] != nil {
			w = *want[no]
		}
		pop := uint32(0)
		for _, b := range w {
			pop += uint32(bits.OnesCount8(b))
		}
		valid, m, err := f.SIT.SegmentValidMap(no)
		if err != nil {
			t.Fatal(err)
		}
		if m != w || valid != pop {
			t.Fatalf("%s: segment %d: the sequence's SIT has %d valid, map %x; the file's slots give %d, %x", what, no, valid, m, pop, w)
		}
		if sm == nil {
			continue
		}
		e := sm.Entry(no)
		if e.Valid() != pop || e.Map() != w {
			t.Fatalf("%s: segment %d: the segment manager has %d valid, map %x; the file's slots give %d, %x", what, no, e.Valid(), e.Map(), pop, w)
		}
		for k := range uint32(512) {
			if e.Test(k) && !e.TestCkpt(k) {
				t.Fatalf("%s: segment %d block %d is valid but not in ckpt_valid_map", what, no, k)
			}
		}
		if e.Mtime() > minMax[1] {
			t.Fatalf("%s: segment %d: mtime %d after max_mtime %d", what, no, e.Mtime(), minMax[1])
		}
	}
}

// TestSITOwnerStampsAsReplayed holds the mounted sequence's one-owner path (a walk stamps
// update_segment_mtime on the segment manager's entries, gc.State.Adopt takes them back) to the
// path it replaced, which replayed every f2fs_invalidate_blocks call piece into a second copy
// (gc.State.InvalidateRange: update_segment_mtime, the bits, locate_dirty_segment). Random zeros,
// punches and truncates with clock changes between them, both modes: after every operation that
// wrote no page back and collected nothing, each segment's entry (count, map, mtime, type,
// checkpointed blocks), its class and min/max mtime equal the replay's on a copy of the manager
// taken before the operation, and the class the walk's result shows for each segment it touched is
// the manager's.
func TestSITOwnerStampsAsReplayed(t *testing.T) {
	iters := 40
	if testing.Short() {
		iters = 10
	}
	compared := 0
	for seed := range uint64(iters) {
		for _, mode := range Modes {
			r := rand.New(rand.NewPCG(seed, 3636))
			q, in := mountedSITSeq(t, r, mode)
			v := &in.Volume
			n := int64(in.Inode.Size / 4096)
			for k := range 12 {
				q.SetNow(uint64(k*7 + r.IntN(50)))
				ref := q.GCState()
				off, length := int64(r.IntN(int(n)*4096+8192)), int64(1+r.IntN(96*4096))
				var res *Result
				var pages []PageWrite
				var err error
				switch r.IntN(3) {
				case 0:
					res, _, pages, err = q.Zero(in, Request{Offset: off, Length: length, KeepSize: true})
				case 1:
					res, _, err = q.Punch(in, off, length)
				default:
					res, _, err = q.Truncate(in, off+length)
				}
				what := fmt.Sprintf("seed %d %s op %d", seed, mode, k)
				if err != nil {
					if errors.Is(err, ErrUnmodelled) {
						break
					}
					t.Fatalf("%s: %v", what, err)
				}
				if len(pages) > 0 || q.BalanceGC() != nil {
					continue // the manager allocated or collected: nothing to replay
				}
				for c := range res.Calls.All() {
					a, left := c.Start, c.Len
					if !isBlock(a) {
						continue
					}
					for left > 0 {
						segno, off := segnoOf(v, a), (a-v.MainBlkaddr)%512
						cnt := min(left, 512-off)
						if err := ref.InvalidateRange(segno, off, cnt); err != nil {
							t.Fatalf("%s: replay: %v", what, err)
						}
						a, left = a+cnt, left-cnt
					}
				}
				got := q.GCState()
				// The walk's classes (what a result shows) are the manager's lists, not a second opinion.
				for _, sg := range res.Segments {
					if sg.Class.String() != got.Class(sg.Segno) {
						t.Fatalf("%s: segment %d: the walk leaves it %s, the segment manager %s", what, sg.Segno, sg.Class, got.Class(sg.Segno))
					}
				}
				for no := range v.MainSegments {
					ge, re := got.Entry(no), ref.Entry(no)
					if ge.Segment() != re.Segment() || ge.CkptValid() != re.CkptValid() || got.Class(no) != ref.Class(no) {
						t.Fatalf("%s: segment %d: owner %+v %s, replay %+v %s", what, no, ge.Segment(), got.Class(no), re.Segment(), ref.Class(no))
					}
				}
				gmin, gmax := got.MinMaxMtime()
				rmin, rmax := ref.MinMaxMtime()
				if gmin != rmin || gmax != rmax {
					t.Fatalf("%s: min/max mtime %d/%d, replay %d/%d", what, gmin, gmax, rmin, rmax)
				}
				compared++
			}
		}
	}
	if compared < iters {
		t.Fatalf("only %d operations compared", compared)
	}
	t.Logf("%d operations compared with the replay", compared)
}

// mountedSITSeq is a mounted sequence over one file of random runs holding every valid block, the
// segments' mtimes random.
func mountedSITSeq(t *testing.T, r *rand.Rand, mode Mode) (*Seq, Input) {
	t.Helper()
	n := 1 + r.IntN(3000)
	slots := randomRunSlots(r, n, 10, 5, 20)
	st := newState(slots, int64(n))
	in := st.input()
	v := &in.Volume
	v.HotDataSegno, v.WarmDataSegno, v.ColdDataSegno = 1, 2, 3
	v.CurrentSegments = []uint32{1, 2, 3, 113, 114, 115}
	own := &memOwners{in: in, index: map[uint32]uint64{}}
	for i, a := range slots {
		if isBlock(a) {
			own.index[a] = uint64(i)
		}
	}
	gv := gc.Volume{SegsPerSec: 1, Segments: make([]gc.Segment, v.MainSegments), ElapsedTime: 1000}
	for no := range v.MainSegments {
		valid, bm, _ := st.sit.SegmentValidMap(no)
		gv.Segments[no] = gc.Segment{Valid: valid, Map: bm, Type: gc.WarmData}
		if valid > 0 {
			gv.Segments[no].Mtime = uint64(r.IntN(1000))
		}
	}
	for log, no := range v.CurrentSegments {
		gv.Segments[no].Type = log
	}
	gv.Current = [gc.NumLogs]gc.CurSeg{{Segno: 1}, {Segno: 2}, {Segno: 3}, {Segno: 113}, {Segno: 114}, {Segno: 115}}
	q := NewSeq(mode)
	if err := q.MountGC(*v, st.sit, gv, own); err != nil {
		t.Fatal(err)
	}
	return q, in
}

package core

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zrviz/zrviz/gc"
)

// memOwners is Owners for a hand-built state: the file's slots at the start.
type memOwners struct {
	in    Input
	index map[uint32]uint64
}

func (o *memOwners) Owner(addr uint32) (uint32, uint64, bool, error) {
	k, ok := o.index[addr]
	return o.in.Inode.Ino, k, ok, nil
}

func (o *memOwners) File(ino uint32) (Input, error) {
	if ino != o.in.Inode.Ino {
		return Input{}, fmt.Errorf("no inode %d", ino)
	}
	return o.in, nil
}

// TestSeqGCProperties runs random sequences of writes, zeros, fsyncs, syncs, checkpoints,
// foreground and background gc calls and clock changes in both modes on a mounted segment
// manager (some volumes short of free sections, so f2fs_balance_fs collects inside operations)
// and checks after every operation: no block is mapped twice and every mapped block's SIT bit is
// set (garbage collection moved slot and bit together); core's SIT and the segment manager's
// agree on every segment (the two models stay in step); gc moves and checkpoints keep the SIT's
// total of valid blocks; and, until a background call (whose cost-benefit ages read the modes'
// different mtimes), both modes leave the same slots, dirty pages and SIT. Then a replay of the
// sequence from scratch on a fresh mount gives the same slots and SIT as the incremental run.
func TestSeqGCProperties(t *testing.T) {
	iters := 80
	if testing.Short() {
		iters = 15
	}
	refused, collected := 0, 0
	for seed := range uint64(iters) {
		r := rand.New(rand.NewPCG(seed, 22))
		n := 1 + r.IntN(2500)
		slots := randomRunSlots(r, n, 15, 10, 30)
		st := newState(slots, int64(n))
		in := st.input()
		v := &in.Volume
		v.HotDataSegno, v.HotDataBlkoff = 1, uint32(r.IntN(512))
		v.WarmDataSegno, v.WarmDataBlkoff = 2, uint32(r.IntN(512))
		v.ColdDataSegno, v.ColdDataBlkoff = 3, uint32(r.IntN(512))
		v.CurrentSegments = []uint32{1, 2, 3, 113, 114, 115}
		gv, own := randomGCVolume(r, st, in, slots)
		mount := func(mode Mode) *Seq {
			q := NewSeq(mode)
			if err := q.MountGC(*v, st.sit, gv, own); err != nil {
				t.Fatal(err)
			}
			return q
		}
		qs := [2]*Seq{mount(PerBlock), mount(Batched)}
		type step struct {
			op          int
			off, length int64
			keep        bool
			now         uint64
		}
		var log []step
		apply := func(q *Seq, s step) error {
			var err error
			switch {
			case s.op < 3:
				_, err = q.Write(in, s.off, s.length)
			case s.op < 6:
				_, _, _, err = q.Zero(in, Request{Offset: s.off, Length: s.length, KeepSize: s.keep})
			case s.op < 7:
				_, err = q.Fsync(in)
			case s.op < 8:
				_, err = q.Sync()
			case s.op < 9:
				_, err = q.Checkpoint()
			case s.op < 11:
				_, err = q.GC(1)
			case s.op < 12:
				_, err = q.GC(0)
			default:
				q.SetNow(s.now)
			}
			return err
		}
		bg, stopped := false, false
	ops:
		for k := range 14 {
			s := step{op: r.IntN(13), off: int64(r.IntN(n*4096 + 16384)), length: int64(1 + r.IntN(64*4096)),
				keep: r.IntN(2) == 0, now: uint64(r.IntN(100))}
			var totals [2]uint32
			for m, q := range qs {
				before := validTotal(t, q)
				if err := apply(q, s); err != nil {
					if errors.Is(err, ErrUnmodelled) {
						refused++
						stopped = true
						break ops // f2fs_balance_fs collected in an operation of several chunks
					}
					t.Fatalf("seed %d op %d (%d): %s: %v", seed, k, s.op, q.Mode(), err)
				}
				if q.BalanceGC() != nil {
					collected++
				}
				totals[m] = validTotal(t, q)
				if s.op >= 8 && s.op < 12 && totals[m] != before {
					t.Fatalf("seed %d op %d (%d) %s: the SIT's valid blocks went %d → %d", seed, k, s.op, q.Mode(), before, totals[m])
				}
			}
			log = append(log, s)
			if s.op == 11 {
				bg = true
			}
			var maps [2][]Extent
			for m, q := range qs {
				maps[m] = checkMapped(t, q, in, fmt.Sprintf("seed %d op %d (%d) %s", seed, k, s.op, q.Mode()))
				checkInStep(t, q, fmt.Sprintf("seed %d op %d (%d) %s", seed, k, s.op, q.Mode()))
			}
			if bg {
				continue
			}
			if !slices.Equal(maps[0], maps[1]) || totals[0] != totals[1] {
				t.Fatalf("seed %d op %d (%d): the modes' slot maps or SIT totals differ", seed, k, s.op)
			}
			f0, f1 := qs[0].File(in), qs[1].File(in)
			if !slices.Equal(f0.Inode.Dirty, f1.Inode.Dirty) || f0.Inode.Size != f1.Inode.Size || f0.Inode.Blocks != f1.Inode.Blocks {
				t.Fatalf("seed %d op %d (%d): the modes' files differ", seed, k, s.op)
			}
			for no := range v.MainSegments {
				_, m0, _ := f0.SIT.SegmentValidMap(no)
				_, m1, _ := f1.SIT.SegmentValidMap(no)
				if m0 != m1 {
					t.Fatalf("seed %d op %d (%d): segment %d differs between the modes", seed, k, s.op, no)
				}
			}
		}
		if stopped {
			continue // the refused operation changed the state before the refusal: no replay
		}
		// A replay of the log from scratch ends where the incremental run did.
		for m, mode := range Modes {
			q := mount(mode)
			for _, s := range log {
				if err := apply(q, s); err != nil {
					t.Fatalf("seed %d: replay %s: %v", seed, mode, err)
				}
			}
			a, b := q.File(in), qs[m].File(in)
			ma, err := SlotMap(a)
			if err != nil {
				t.Fatal(err)
			}
			mb, err := SlotMap(b)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ma, mb) || !slices.Equal(a.Inode.Dirty, b.Inode.Dirty) {
				t.Fatalf("seed %d %s: the replay's slots or dirty pages differ from the incremental run's", seed, mode)
			}
			for no := range v.MainSegments {
				_, x, _ := a.SIT.SegmentValidMap(no)
				_, y, _ := b.SIT.SegmentValidMap(no)
				if x != y || q.GCState().Segment(no) != qs[m].GCState().Segment(no) {
					t.Fatalf("seed %d %s: segment %d differs between the replay and the incremental run", seed, mode, no)
				}
			}
		}
	}
	t.Logf("%d sequences, %d stopped where f2fs_balance_fs would collect mid-operation, %d operations collected inside", iters, refused, collected)
}

// validTotal is the SIT's valid blocks over every main segment, as core reads them.
func validTotal(t *testing.T, q *Seq) uint32 {
	t.Helper()
	vol, _, _ := q.State()
	n := uint32(0)
	for no := range vol.Volume.MainSegments {
		v, _, err := vol.SIT.SegmentValidMap(no)
		if err != nil {
			t.Fatal(err)
		}
		n += v
	}
	return n
}

// checkMapped: no block mapped twice, every mapped block's SIT bit set.
func checkMapped(t *testing.T, q *Seq, in Input, what string) []Extent {
	t.Helper()
	f := q.File(in)
	ext, err := SlotMap(f)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint32]bool{}
	for _, e := range ext {
		if e.State != "addr" {
			continue
		}
		for a := e.Addr; a < e.Addr+uint32(e.Count); a++ {
			if seen[a] {
				t.Fatalf("%s: block %d mapped twice", what, a)
			}
			seen[a] = true
			_, bm, err := f.SIT.SegmentValidMap(segnoOf(&f.Volume, a))
			if err != nil {
				t.Fatal(err)
			}
			if !testBit(&bm, (a-f.Volume.Segment0Blkaddr)%512) {
				t.Fatalf("%s: block %d is mapped but its SIT bit is clear", what, a)
			}
		}
	}
	return ext
}

// checkInStep: core's SIT and the segment manager's agree on every segment, and so do the logs.
func checkInStep(t *testing.T, q *Seq, what string) {
	t.Helper()
	vol, _, _ := q.State()
	s := q.GCState()
	for no := range vol.Volume.MainSegments {
		valid, bm, err := vol.SIT.SegmentValidMap(no)
		if err != nil {
			t.Fatal(err)
		}
		if g := s.Segment(no); g.Valid != valid || g.Map != bm {
			t.Fatalf("%s: segment %d: core %d valid, the segment manager %d", what, no, valid, g.Valid)
		}
	}
	cur := s.Current()
	v := &vol.Volume
	if cur[gc.HotData] != (gc.CurSeg{Segno: v.HotDataSegno, Blkoff: v.HotDataBlkoff}) ||
		cur[gc.WarmData] != (gc.CurSeg{Segno: v.WarmDataSegno, Blkoff: v.WarmDataBlkoff}) ||
		cur[gc.ColdData] != (gc.CurSeg{Segno: v.ColdDataSegno, Blkoff: v.ColdDataBlkoff}) {
		t.Fatalf("%s: data logs: core hot %d/%d warm %d/%d cold %d/%d, the segment manager %v", what,
			v.HotDataSegno, v.HotDataBlkoff, v.WarmDataSegno, v.WarmDataBlkoff, v.ColdDataSegno, v.ColdDataBlkoff, cur)
	}
}

// TestSeqMarkedPagesWrittenWithTheFile: the pages a background gc call marks are dirty pages of
// their file (move_data_page, gc.c:1518), so an fsync of the file writes them — out of place, to
// the cold data log — and a zero's writeback writes those of its range before the walk, which
// then invalidates the blocks they went to; a sync then has nothing of them left to move.
// Kernel-seq w9 holds the sync's order against the kernel.
func TestSeqMarkedPagesWrittenWithTheFile(t *testing.T) {
	const first = 4096 + 20*512 // segment 20
	slots := make([]uint32, 100)
	for i := range slots {
		slots[i] = first + uint32(i)
	}
	st := newState(slots, 100)
	in := st.input()
	v := &in.Volume
	v.HotDataSegno, v.WarmDataSegno, v.ColdDataSegno = 1, 2, 3
	v.HotDataBlkoff, v.WarmDataBlkoff, v.ColdDataBlkoff = 0, 0, 0
	v.CurrentSegments = []uint32{1, 2, 3, 113, 114, 115}
	own := &memOwners{in: in, index: map[uint32]uint64{}}
	for i, a := range slots {
		own.index[a] = uint64(i)
	}
	gv := gc.Volume{SegsPerSec: 1, Segments: make([]gc.Segment, v.MainSegments), ElapsedTime: 1000}
	for no := range v.MainSegments {
		valid, bm, _ := st.sit.SegmentValidMap(no)
		gv.Segments[no] = gc.Segment{Valid: valid, Map: bm, Type: gc.WarmData}
	}
	for log, no := range v.CurrentSegments {
		gv.Segments[no].Type = log
	}
	gv.Current = [gc.NumLogs]gc.CurSeg{{Segno: 1}, {Segno: 2}, {Segno: 3}, {Segno: 113}, {Segno: 114}, {Segno: 115}}
	cold := func(p PageWrite) bool { return p.How == WroteOutPlace && p.Log == "cold-data" && p.Segno == 3 }
	for _, mode := range Modes {
		mount := func() *Seq {
			q := NewSeq(mode)
			if err := q.MountGC(*v, st.sit, gv, own); err != nil {
				t.Fatal(err)
			}
			q.SetNow(100)
			g, err := q.GC(0)
			if err != nil || g.GC == nil || g.GC.Victim == nil || *g.GC.Victim != 20 || g.GC.Marked != 100 {
				t.Fatalf("%s: gc 0: %v %+v", mode, err, g)
			}
			return q
		}

		q := mount()
		f, err := q.Fsync(in)
		if err != nil || len(f.Pages) != 100 {
			t.Fatalf("%s: fsync: %v, %d pages", mode, err, len(f.Pages))
		}
		for k, p := range f.Pages {
			if !cold(p) || p.Index != uint64(k) || p.Old != first+uint32(k) || p.New != 4096+3*512+uint32(k) {
				t.Fatalf("%s: fsync page %d: %+v, want page %d moved to the cold log's block %d", mode, k, p, k, k)
			}
		}
		if n := len(q.GCState().Pending()); n != 0 {
			t.Errorf("%s: %d blocks still marked after the fsync wrote them", mode, n)
		}
		if s, err := q.Sync(); err != nil || len(s.Pages) != 0 || s.Moved != 0 {
			t.Errorf("%s: sync after the fsync: %v, %d pages, %d moved", mode, err, len(s.Pages), s.Moved)
		}

		q = mount()
		r, _, pages, err := q.Zero(in, Request{Offset: 0, Length: 50 * 4096})
		if err != nil || len(pages) != 50 {
			t.Fatalf("%s: zero: %v, %d pages written back", mode, err, len(pages))
		}
		for _, p := range pages {
			if !cold(p) {
				t.Fatalf("%s: the zero's writeback: %+v", mode, p)
			}
		}
		var calls []uint32
		for c := range r.Calls.All() {
			for k := range c.Len {
				calls = append(calls, c.Start+k)
			}
		}
		if len(calls) != 50 || calls[0] != 4096+3*512 || calls[49] != 4096+3*512+49 {
			t.Errorf("%s: the walk invalidated %v; want the 50 cold-log blocks the writeback wrote", mode, calls)
		}
		if n := len(q.GCState().Pending()); n != 50 {
			t.Errorf("%s: %d blocks marked after the zero, want the other 50", mode, n)
		}
	}
}

// filesOwners is Owners for several hand-built files.
type filesOwners struct {
	files map[uint32]Input
	by    map[uint32]blockOwner
}

func (o *filesOwners) Owner(addr uint32) (uint32, uint64, bool, error) {
	b, ok := o.by[addr]
	return b.ino, b.index, ok, nil
}

func (o *filesOwners) File(ino uint32) (Input, error) {
	f, ok := o.files[ino]
	if !ok {
		return Input{}, fmt.Errorf("no inode %d", ino)
	}
	return f, nil
}

// TestSeqCheckpointReordersTheDirtyList: a checkpoint's f2fs_sync_inode_meta takes a file whose
// inode metadata changed (here: a zero inside its largest read extent, i_ext, which drops it) and
// that has no dirty page off the dirty inode list, so its next dirtying queues it last; a file
// whose extent change the model cannot decide (no i_ext: the cache's pieces decide) keeps an
// unknown place, and a sync whose result depends on it is refused. Kernel-seq w10 is the kernel's
// run of the first rule.
func TestSeqCheckpointReordersTheDirtyList(t *testing.T) {
	const a0, b0 = 4096 + 20*512, 4096 + 21*512 // segments 20 and 21
	vol := refVolume()
	vol.HotDataSegno, vol.WarmDataSegno, vol.ColdDataSegno = 1, 2, 3
	vol.HotDataBlkoff, vol.WarmDataBlkoff, vol.ColdDataBlkoff = 0, 0, 0
	vol.CurrentSegments = []uint32{1, 2, 3, 113, 114, 115}
	sit := newMemSIT()
	file := func(path string, ino uint32, first uint32, ext uint32) Input {
		f := newMemFile(873, first, first+1, first+2, first+3, NullAddr, NullAddr)
		sit.set(&vol, first, first+1, first+2, first+3)
		return Input{Path: path, Volume: vol, Inode: Inode{Ino: ino, Type: "file", Size: 6 * 4096, Blocks: 5,
			AddrsPerInode: 873, SlotsEnd: f.n, ReadExt: ReadExtent{Fofs: 0, Len: ext}}, Slots: f, SIT: sit}
	}
	run := func(t *testing.T, extA, extB uint32) (*WriteResult, error) {
		inA, inB := file("/a", 10, a0, extA), file("/b", 11, b0, extB)
		own := &filesOwners{files: map[uint32]Input{10: inA, 11: inB}, by: map[uint32]blockOwner{}}
		for k := range uint32(4) {
			own.by[a0+k] = blockOwner{10, uint64(k)}
			own.by[b0+k] = blockOwner{11, uint64(k)}
		}
		gv := gc.Volume{SegsPerSec: 1, Segments: make([]gc.Segment, vol.MainSegments), ElapsedTime: 1000}
		for no := range vol.MainSegments {
			valid, bm, _ := sit.SegmentValidMap(no)
			gv.Segments[no] = gc.Segment{Valid: valid, Map: bm, Type: gc.WarmData}
		}
		for log, no := range vol.CurrentSegments {
			gv.Segments[no].Type = log
		}
		gv.Current = [gc.NumLogs]gc.CurSeg{{Segno: 1}, {Segno: 2}, {Segno: 3}, {Segno: 113}, {Segno: 114}, {Segno: 115}}
		q := NewSeq(PerBlock)
		if err := q.MountGC(vol, sit, gv, own); err != nil {
			t.Fatal(err)
		}
		for _, step := range []func() error{
			func() error { _, _, _, err := q.Zero(inA, Request{Offset: 0, Length: 4096}); return err },
			func() error { _, _, _, err := q.Zero(inB, Request{Offset: 0, Length: 4096}); return err },
			func() error { _, err := q.Checkpoint(); return err },
			func() error { _, err := q.Write(inB, 4*4096, 2*4096); return err }, // pages 4-5: holes
			func() error { _, err := q.Write(inA, 4*4096, 2*4096); return err },
		} {
			if err := step(); err != nil {
				t.Fatal(err)
			}
		}
		return q.Sync()
	}
	// Both zeros drop their file's largest extent: both files leave the list at the checkpoint,
	// so the writes queue b before a.
	s, err := run(t, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range s.Pages {
		if len(got) == 0 || got[len(got)-1] != p.Path {
			got = append(got, p.Path)
		}
	}
	if !slices.Equal(got, []string{"/b", "/a"}) {
		t.Errorf("sync wrote %+v; want b's pages before a's", s.Pages)
	}
	// Without i_ext the model cannot tell whether the zeros marked the inodes: refused.
	if _, err := run(t, 0, 0); !errors.Is(err, ErrUnmodelled) {
		t.Errorf("sync with both places unknown: %v, want ErrUnmodelled", err)
	}
}

package core

import (
	"errors"
	"slices"
	"testing"
)

// seqVolume is refVolume with a warm data log (segment 2) whose next block is 510: two more blocks
// fill it, and the next free segment (3, since 100–102 are current) becomes the log.
func seqVolume() Volume {
	v := refVolume()
	v.WarmDataSegno, v.WarmDataBlkoff = 2, 510
	return v
}

// TestSeqWriteThenSync: a buffered write reserves the holes it covers (NULL → NEW, i_blocks and
// valid_block_count +1 each), leaves every page dirty, and grows i_size; sync writes them back:
// the old block in place (ipu_policy FORCE on a small volume), the NEW pages out of place to the hot
// log (at most 16 dirty pages: FI_HOT_DATA), and checkpoints. A file of more than 16 dirty pages
// goes to the warm log instead, which fills up and moves on to the next free segment.
func TestSeqWriteThenSync(t *testing.T) {
	const a0 = 7200
	st := newState([]uint32{a0, NullAddr, NullAddr}, 3)
	in := st.input()
	in.Volume = seqVolume()
	for _, mode := range Modes {
		q := NewSeq(mode)
		w, err := q.Write(in, 100, 3*4096) // pages 0..3: 0 over data, 1..2 holes, 3 past EOF
		if err != nil || w.Errno != "" || w.Written != 3*4096 || w.Reserved != 3 {
			t.Fatalf("%s: write: %v %+v", mode, err, w)
		}
		f := q.File(in)
		if !slices.Equal(f.Inode.Dirty, []uint64{0, 1, 2, 3}) || f.Inode.Size != 100+3*4096 ||
			f.Inode.Blocks != in.Inode.Blocks+3 || f.Volume.ValidBlockCount != in.Volume.ValidBlockCount+3 {
			t.Fatalf("%s: after write: dirty %v size %d blocks %d vbc %d", mode, f.Inode.Dirty, f.Inode.Size, f.Inode.Blocks, f.Volume.ValidBlockCount)
		}
		s, err := q.Sync()
		if err != nil || !s.Checkpoint || len(s.Pages) != 4 {
			t.Fatalf("%s: sync: %v %+v", mode, err, s)
		}
		hot := in.Volume.MainBlkaddr + in.Volume.HotDataSegno*512 + in.Volume.HotDataBlkoff
		want := []PageWrite{
			{Path: "/f", Index: 0, How: WroteInPlace, Old: a0, New: a0},
			{Path: "/f", Index: 1, How: WroteOutPlace, Old: NewAddr, New: hot, Log: "hot-data", Segno: 1},
			{Path: "/f", Index: 2, How: WroteOutPlace, Old: NewAddr, New: hot + 1, Log: "hot-data", Segno: 1},
			{Path: "/f", Index: 3, How: WroteOutPlace, Old: NewAddr, New: hot + 2, Log: "hot-data", Segno: 1},
		}
		if !slices.Equal(s.Pages, want) {
			t.Errorf("%s: sync wrote %+v\nwant %+v", mode, s.Pages, want)
		}
		f = q.File(in)
		if len(f.Inode.Dirty) != 0 {
			t.Errorf("%s: dirty after sync: %v", mode, f.Inode.Dirty)
		}
		v, _, _ := f.SIT.SegmentValidMap(1)
		if v0, _, _ := st.sit.SegmentValidMap(1); v != v0+3 {
			t.Errorf("%s: hot log segment: %d valid, want %d", mode, v, v0+3)
		}
		// Zeroing the file now invalidates the fresh blocks.
		r, _, pages, err := q.Zero(in, Request{Offset: 0, Length: 4 * 4096})
		if err != nil || len(pages) != 0 || r.Stats.BlocksInvalidated != 4 {
			t.Errorf("%s: zero after sync: %v, %d written back, %d invalidated", mode, err, len(pages), r.Stats.BlocksInvalidated)
		}
	}

	// 20 dirty pages of holes: the warm log, which fills at 512 and continues in segment 3.
	q := NewSeq(PerBlock)
	w, err := q.Write(in, 0, 20*4096)
	if err != nil || w.Errno != "" {
		t.Fatal(err, w)
	}
	s, err := q.Sync()
	if err != nil {
		t.Fatal(err)
	}
	var segs []uint32
	for _, p := range s.Pages {
		if p.How == WroteOutPlace {
			segs = append(segs, p.Segno)
			if p.Log != "warm-data" {
				t.Fatalf("page %d went to %s", p.Index, p.Log)
			}
		}
	}
	if len(segs) != 19 || segs[0] != 2 || segs[1] != 2 || segs[2] != 3 || s.Pages[3].New != in.Volume.MainBlkaddr+3*512 {
		t.Errorf("warm log: segments %v, page 3 at %d", segs, s.Pages[3].New)
	}
	f := q.File(in)
	if !slices.Contains(f.Volume.CurrentSegments, 3) || slices.Contains(f.Volume.CurrentSegments, 2) || f.Volume.WarmDataSegno != 3 {
		t.Errorf("current segments %v, warm log %d", f.Volume.CurrentSegments, f.Volume.WarmDataSegno)
	}
}

// TestSeqIPUPolicy: under ipu_policy 16 (FSYNC only) writeback rewrites a data page out of place
// and releases its old block inside the allocator (no call); fsync of a file with at most 8 dirty
// pages (FI_NEED_IPU) rewrites it in place. Values of 256 and more are EINVAL.
func TestSeqIPUPolicy(t *testing.T) {
	const a0 = 7200
	st := newState([]uint32{a0, a0 + 1}, 2)
	in := st.input()
	in.Volume = seqVolume()
	q := NewSeq(Batched)
	if r, err := q.Tune("ipu_policy", 256); err != nil || r.Errno != "EINVAL" {
		t.Fatalf("ipu_policy 256: %v %+v", err, r)
	}
	if _, err := q.Tune("ipu_policy", 16); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Tune("min_ipu_util", 1); !errors.Is(err, ErrUnmodelled) {
		t.Errorf("an unknown tunable: %v", err)
	}
	if _, err := q.Write(in, 0, 8192); err != nil {
		t.Fatal(err)
	}
	fs, err := q.Fsync(in)
	if err != nil || len(fs.Pages) != 2 || fs.Pages[0].How != WroteInPlace {
		t.Fatalf("fsync: %v %+v", err, fs)
	}
	if _, err := q.Write(in, 4096, 4096); err != nil {
		t.Fatal(err)
	}
	r, _, pages, err := q.Zero(in, Request{Offset: 0, Length: 8192})
	if err != nil || len(pages) != 1 || pages[0].How != WroteOutPlace || pages[0].Old != a0+1 {
		t.Fatalf("zero: %v %+v", err, pages)
	}
	calls := slices.Collect(r.Calls.All())
	if len(calls) != 2 || calls[0].Start != a0 || calls[1].Start != pages[0].New {
		t.Errorf("calls %+v; want %d then the page's new block %d", calls, a0, pages[0].New)
	}
}

// TestSeqReservedBlocks: tune reserved_blocks keeps that many blocks from reservations, as
// current_reserved_blocks does; 0 gives them back.
func TestSeqReservedBlocks(t *testing.T) {
	st := newState([]uint32{NullAddr, NullAddr, NullAddr, NullAddr}, 4)
	in := st.input()
	in.Volume.UserBlockCount = in.Volume.ValidBlockCount + 10
	q := NewSeq(PerBlock)
	if _, err := q.Tune("reserved_blocks", 8); err != nil {
		t.Fatal(err)
	}
	r, _, _, err := q.Zero(in, Request{Length: 4 * 4096})
	if err != nil || r.Errno != "ENOSPC" || r.Stats.Reserved != 2 {
		t.Fatalf("with 8 of 10 reserved: %v %q, %d reserved", err, r.Errno, r.Stats.Reserved)
	}
	if w, err := q.Tune("reserved_blocks", 0); err != nil || w.Errno != "" {
		t.Fatal(err, w)
	}
	r, _, _, err = q.Zero(in, Request{Length: 4 * 4096})
	if err != nil || r.Errno != "" || r.Stats.Reserved != 2 {
		t.Fatalf("with none reserved: %v %q, %d reserved", err, r.Errno, r.Stats.Reserved)
	}
	if w, _ := q.Tune("reserved_blocks", in.Volume.UserBlockCount+1); w.Errno != "EINVAL" {
		t.Errorf("reserved_blocks past the user blocks: %q", w.Errno)
	}
}

// countingFile counts DnodeSlots calls; listed makes it a DnodeLister of the memFile's nodes.
type countingFile struct {
	*memFile
	calls  int
	listed bool
}

func (f *countingFile) DnodeSlots(index uint64) (uint64, []uint32, int, error) {
	f.calls++
	return f.memFile.DnodeSlots(index)
}

func (f *countingFile) DnodeStarts() ([]uint64, bool) {
	if !f.listed {
		return nil, false
	}
	var out []uint64
	for k := range f.nodes {
		if p := nodeStart(k, f.geom()); p != nil && !slices.Contains(out, *p) {
			out = append(out, *p)
		}
	}
	out = append(out, 0)
	slices.Sort(out)
	return slices.Compact(out), true
}

// nodeStart is the first slot of a direct node's key (nil for an indirect node).
func nodeStart(k nodeKey, g dnodeGeom) *uint64 {
	var idx uint64
	ind := g.apb * nidsPerBlock
	switch {
	case k.top < 2:
		idx = g.api + uint64(k.top)*g.apb
	case k.top < 4 && k.a >= 0:
		idx = g.api + 2*g.apb + uint64(k.top-2)*ind + uint64(k.a)*g.apb
	case k.top == 4 && k.b >= 0:
		idx = g.api + 2*g.apb + 2*ind + uint64(k.a)*ind + uint64(k.b)*g.apb
	default:
		return nil
	}
	return &idx
}

// TestHugeOffsetCostsNodes: zeroing the last page below s_maxbytes, twice in a sequence, asks the
// source for a few dozen dnodes when it lists its dnodes (as source's files do), and at most a few
// thousand when it does not — never one per missing dnode up to the new i_size (over a million): the
// slot map jumps between listed dnodes, or skips each missing subtree at once.
func TestHugeOffsetCostsNodes(t *testing.T) {
	for _, listed := range []bool{false, true} {
		st := newState([]uint32{7200, 7201}, 2)
		f := &countingFile{memFile: st.file, listed: listed}
		in := st.input()
		in.Slots = f
		last := int64(maxFileBlocks-1) * 4096
		q := NewSeq(PerBlock)
		for i := range 2 {
			r, _, _, err := q.Zero(in, Request{Offset: last, Length: 4096})
			if err != nil || r.Errno != "" || r.SizeAfter != maxBytes {
				t.Fatalf("listed %v, zero %d: %v %+v", listed, i, err, r)
			}
			if n := len(r.After.Extents); n < 3 || r.After.Extents[n-1].Index != maxFileBlocks-1 {
				t.Fatalf("listed %v: slot map %v", listed, r.After.Extents)
			}
		}
		// Listed: the dnodes that exist. Not listed: one probe per missing sibling of an allocated
		// indirect node (at most 1,018 per level per slot map), never one per missing dnode.
		bound := 50
		if !listed {
			bound = 4 * 2 * nidsPerBlock
		}
		if f.calls > bound {
			t.Errorf("listed %v: %d DnodeSlots calls for two one-page zeros at s_maxbytes, want ≤ %d", listed, f.calls, bound)
		}
		t.Logf("listed %v: %d DnodeSlots calls", listed, f.calls)
	}
}

// TestSeqWriteInline: a write that fits the inode's inline area stays inline (no slot, no block);
// one that does not converts the file first — slot 0 gets the hot log's next block, written at
// once — and then reserves and dirties its pages.
func TestSeqWriteInline(t *testing.T) {
	st := newState(nil, 0)
	in := st.input()
	in.Inode.Inline = InlineData | InlineDataExist
	in.Inode.Size, in.Inode.SlotsEnd = 12, 0
	q := NewSeq(PerBlock)
	w, err := q.Write(in, 12, 100)
	if err != nil || w.Errno != "" || w.SizeAfter != 112 || w.Reserved != 0 {
		t.Fatalf("inline write: %v %+v", err, w)
	}
	if f := q.File(in); f.Inode.Inline&InlineData == 0 || len(f.Inode.Dirty) != 0 {
		t.Fatalf("after an inline write: inline %#x, dirty %v", f.Inode.Inline, f.Inode.Dirty)
	}
	w, err = q.Write(in, 4096, 8192)
	if err != nil || w.Errno != "" || w.Reserved != 3 {
		t.Fatalf("converting write: %v %+v", err, w)
	}
	f := q.File(in)
	hot := in.Volume.MainBlkaddr + in.Volume.HotDataSegno*512 + in.Volume.HotDataBlkoff
	ext, err := SlotMap(f)
	if err != nil {
		t.Fatal(err)
	}
	if f.Inode.Inline&InlineData != 0 || !slices.Equal(f.Inode.Dirty, []uint64{1, 2}) || len(ext) < 2 ||
		ext[0] != (Extent{Index: 0, Count: 1, State: "addr", Addr: hot}) || ext[1].State != "new" || ext[1].Count != 2 {
		t.Errorf("after conversion: inline %#x, dirty %v, slots %v (slot 0 want %d)", f.Inode.Inline, f.Inode.Dirty, ext, hot)
	}
}

// TestSeqSyncOrder: sync writes the files back in the order they joined the dirty inode list
// (b_dirty, oldest first): a file joins when it is first dirtied — its pages, or its inode by a
// zero or punch that ran — and keeps its place until a sync cleans it, also when a zero's
// writeback or an fsync wrote its pages in between. A punch at or past i_size dirties nothing.
// Kernel-seq w3, w5 and w6 are the kernel's runs of the same rule.
func TestSeqSyncOrder(t *testing.T) {
	const a0, b0 = 7200, 9000
	vol := refVolume()
	sit := newMemSIT()
	sit.set(&vol, a0, b0)
	file := func(path string, ino uint32, first uint32) Input {
		f := newMemFile(873, first, NullAddr, NullAddr, NullAddr)
		return Input{Path: path, Volume: vol, Inode: Inode{Ino: ino, Type: "file", Size: 4 * 4096, Blocks: 2,
			AddrsPerInode: 873, SlotsEnd: f.n}, Slots: f, SIT: sit}
	}
	inA, inB := file("/a", 10, a0), file("/b", 11, b0)
	type step func(q *Seq) error
	write := func(in Input) step {
		return func(q *Seq) error {
			w, err := q.Write(in, 4096, 2*4096) // pages 1-2: holes, reserved NEW
			if err == nil && w.Errno != "" {
				err = errors.New(w.Errno)
			}
			return err
		}
	}
	zero := func(in Input) step { // page 0 whole: its block invalidated, no page dirtied
		return func(q *Seq) error { _, _, _, err := q.Zero(in, Request{Offset: 0, Length: 4096}); return err }
	}
	fsync := func(in Input) step { return func(q *Seq) error { _, err := q.Fsync(in); return err } }
	sync := func(q *Seq) error { _, err := q.Sync(); return err }
	punchPastEOF := func(in Input) step {
		return func(q *Seq) error { _, _, err := q.Punch(in, 8*4096, 4096); return err }
	}
	for _, tc := range []struct {
		name  string
		steps []step
		want  []string // the files the final sync wrote, in order
	}{
		{"pages", []step{write(inA), write(inB)}, []string{"/a", "/b"}},
		{"inode dirtied first", []step{zero(inB), write(inA), write(inB)}, []string{"/b", "/a"}},
		{"place kept after fsync", []step{write(inA), fsync(inA), write(inB), write(inA)}, []string{"/a", "/b"}},
		{"punch past EOF", []step{punchPastEOF(inB), write(inA), write(inB)}, []string{"/a", "/b"}},
		{"cleaned by sync", []step{zero(inB), sync, write(inA), write(inB)}, []string{"/a", "/b"}},
	} {
		for _, mode := range Modes {
			q := NewSeq(mode)
			for i, s := range tc.steps {
				if err := s(q); err != nil {
					t.Fatalf("%s: %s: step %d: %v", tc.name, mode, i+1, err)
				}
			}
			s, err := q.Sync()
			if err != nil {
				t.Fatalf("%s: %s: sync: %v", tc.name, mode, err)
			}
			var got []string
			for _, p := range s.Pages {
				if len(got) == 0 || got[len(got)-1] != p.Path {
					got = append(got, p.Path)
				}
			}
			if !slices.Equal(got, tc.want) || len(s.Pages) != 4 {
				t.Errorf("%s: %s: sync wrote %+v; want the files in the order %v", tc.name, mode, s.Pages, tc.want)
			}
		}
	}
}

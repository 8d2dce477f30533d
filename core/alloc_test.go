package core

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/internal/f2fs"
)

// TestWritebackNewSegment fills the warm data log during an fsync's write-back and checks the
// segment the log moves to against the kernel's rule, with and without a segment manager mounted.
// The kernel fixtures that fill a data log during write-back (kernel-seq l1, s1, s2, s4) do so on
// small volumes of one shape each, so the rule is stated here too, from Linux 6.12.117's fs/f2fs:
//
// f2fs_allocate_data_block (segment.c:3675) finds the log full and, need_new_seg being true (the
// volume has free sections to spare, so f2fs_need_SSR is false), calls new_curseg(sbi, type, false)
// (segment.c:2889). Its hint is __get_next_segno (segment.c:2838): on a volume of large sections the
// log's own segment (line 2853); otherwise 0 for hot data and node logs (line 2865) and for any log
// of a volume mounted with alloc_mode=reuse (line 2872), which default_options sets for at most
// SMALL_VOLUME_SEGMENTS main segments (super.c:2168–2170); else the log's own segment (line 2875).
// get_new_segment (segment.c:2693) then takes the next free segment of the hint's section (lines
// 2712–2716, large sections only), else the first section at or after the hint's none of whose
// segments is in use (find_next_zero_bit on free_secmap, line 2735), wrapping to the first (line
// 2755), else ENOSPC (line 2758). A segment emptied since the last checkpoint (prefree) is still in
// use in free_segmap until the checkpoint frees it.
//
// The file has 20 dirty pages (more than min_hot_blocks: the warm log, __get_segment_type_6), all
// holes, so each is written out of place; the warm log has two free blocks left, so page 3 opens the
// new segment.
func TestWritebackNewSegment(t *testing.T) {
	cases := []struct {
		name      string
		per, main uint32
		current   []uint32 // the six logs: hot, warm, cold data, hot, warm, cold node
		used      []uint32 // segments with a valid block
		emptied   uint32   // a segment whose only block the file's page 0 holds, zeroed first (0: none)
		want      uint32
	}{
		// hint 0 (alloc_mode=reuse); 0 and 2 hold blocks, 1 is current: 3. (The old "first free after
		// the full one" gave 51.)
		{"reuse from 0", 1, 120, []uint32{1, 50, 60, 100, 101, 102}, []uint32{0, 2}, 0, 3},
		// the same, with segment 3 emptied by a zero before the write: prefree, not reused.
		{"prefree stays in use", 1, 120, []uint32{1, 50, 60, 100, 101, 102}, []uint32{0, 2}, 3, 4},
		// more than SMALL_VOLUME_SEGMENTS: the warm log's own segment is the hint.
		{"large volume: after its own segment", 1, 10000, []uint32{1, 50, 60, 100, 101, 102}, []uint32{0, 51}, 0, 52},
		// four segments a section: the next free segment of the log's section (40–43).
		{"large section: its own section", 4, 120, []uint32{4, 41, 60, 100, 104, 108}, []uint32{42}, 0, 43},
		// none left in it: the next section none of whose segments is in use (44–47 holds 44): 48.
		// (The old rule gave 45.)
		{"large section: next free section", 4, 120, []uint32{4, 41, 60, 100, 104, 108}, []uint32{42, 43, 44}, 0, 48},
	}
	for _, c := range cases {
		for _, mounted := range []bool{false, true} {
			for _, mode := range Modes {
				in, q := allocSeq(t, c.per, c.main, c.current, c.used, c.emptied, mounted, mode)
				name := c.name + " " + mode.String()
				if mounted {
					name += " (segment manager)"
					// The segment manager's own maps give the same answer for this state.
					s := q.GCState()
					cur := s.Current()
					var segs []uint32
					for _, l := range cur {
						segs = append(segs, l.Segno)
					}
					if got, err := gc.NewSegment(s.Geometry(), gc.WarmData, cur[gc.WarmData].Segno, segs, s); err != nil || got != c.want {
						t.Errorf("%s: on the segment manager's free maps: %d, %v; want %d", name, got, err, c.want)
					}
				}
				res, err := q.Fsync(in)
				if err != nil {
					t.Fatalf("%s: fsync: %v", name, err)
				}
				v := &in.Volume
				if len(res.Pages) != 20 {
					t.Fatalf("%s: %d pages written, want 20", name, len(res.Pages))
				}
				warm := c.current[gc.WarmData]
				for k, p := range res.Pages {
					seg, off := warm, uint32(510+k)
					if k >= 2 {
						seg, off = c.want, uint32(k-2)
					}
					if p.How != WroteOutPlace || p.Log != "warm-data" || p.Segno != seg || p.New != f2fs.SegBlock(v.MainBlkaddr, seg)+off {
						t.Fatalf("%s: page %d: %+v, want the warm log's segment %d block %d", name, p.Index, p, seg, off)
					}
				}
				f := q.File(in)
				if f.Volume.WarmDataSegno != c.want || f.Volume.WarmDataBlkoff != 18 ||
					!slices.Contains(f.Volume.CurrentSegments, c.want) || slices.Contains(f.Volume.CurrentSegments, warm) {
					t.Errorf("%s: warm log at %d+%d, current %v; want %d+18", name, f.Volume.WarmDataSegno, f.Volume.WarmDataBlkoff, f.Volume.CurrentSegments, c.want)
				}
				if mounted {
					if got := q.GCState().Current()[gc.WarmData]; got.Segno != c.want || got.Blkoff != 18 {
						t.Errorf("%s: the segment manager's warm log at %+v, want %d+18", name, got, c.want)
					}
				}
			}
		}
	}

	// Every section in use and the log at its section's end: get_new_segment's ENOSPC, after which
	// the kernel stops checkpoints. Refused.
	in, q := allocSeq(t, 4, 16, []uint32{0, 7, 8, 12, 13, 14}, nil, 0, false, PerBlock)
	if _, err := q.Fsync(in); !errors.Is(err, ErrUnmodelled) || !errors.Is(err, gc.ErrNoSpace) {
		t.Errorf("no free section: %v, want ErrUnmodelled and gc.ErrNoSpace", err)
	}
}

// allocSeq builds a volume of main segments (per a section) with the six logs at current (the warm
// one two blocks short of full), a valid block in each used segment, and a file of 21 pages: page 0
// the only block of segment emptied (when not 0), zeroed at once; pages 1–20 holes, written (dirty).
// mounted adds the segment manager (core.Seq.MountGC) on the same SIT.
func allocSeq(t *testing.T, per, main uint32, current, used []uint32, emptied uint32, mounted bool, mode Mode) (Input, *Seq) {
	t.Helper()
	return allocSeqRsv(t, per, main, current, used, emptied, mounted, mode, 0)
}

// allocSeqRsv is allocSeq with rsv reserved segments (the checkpoint's rsvd_segment_count, which
// f2fs_need_SSR and has_not_enough_free_secs read).
func allocSeqRsv(t *testing.T, per, main uint32, current, used []uint32, emptied uint32, mounted bool, mode Mode, rsv uint32) (Input, *Seq) {
	t.Helper()
	slots := make([]uint32, 21)
	st := newState(slots, 0)
	v := &st.vol
	v.SegsPerSec, v.MainSegments = per, main
	v.MaxBlkaddr = v.MainBlkaddr + main*blocksPerSeg
	v.CurrentSegments = slices.Clone(current)
	v.HotDataSegno, v.HotDataBlkoff = current[0], 0
	v.WarmDataSegno, v.WarmDataBlkoff = current[1], 510
	v.ColdDataSegno, v.ColdDataBlkoff = current[2], 0
	for _, no := range used {
		st.sit.set(v, f2fs.SegBlock(v.MainBlkaddr, no)+7)
	}
	if emptied != 0 {
		a := f2fs.SegBlock(v.MainBlkaddr, emptied) + 9
		st.file = newMemFile(873, append([]uint32{a}, slots[1:]...)...)
		st.sit.set(v, a)
		st.ino.Blocks, st.ino.Size, st.ino.SlotsEnd = 2, 4096, st.file.n
	}
	in := st.input()
	q := NewSeq(mode)
	if mounted {
		gv := gc.Volume{SegsPerSec: per, Segments: make([]gc.Segment, main), ElapsedTime: 1000, ReservedSegments: rsv}
		for no := range main {
			valid, bm, _ := st.sit.SegmentValidMap(no)
			gv.Segments[no] = gc.Segment{Valid: valid, Map: bm, Type: gc.WarmData}
		}
		for log, no := range current {
			gv.Segments[no].Type = log
			gv.Current[log] = gc.CurSeg{Segno: no}
		}
		gv.Current[gc.WarmData].Blkoff = 510
		own := &memOwners{in: in, index: map[uint32]uint64{}}
		if emptied != 0 {
			own.index[f2fs.SegBlock(v.MainBlkaddr, emptied)+9] = 0
		}
		if err := q.MountGC(*v, st.sit, gv, own); err != nil {
			t.Fatal(err)
		}
	}
	if emptied != 0 {
		if r, _, _, err := q.Zero(in, Request{Offset: 0, Length: 4096}); err != nil || r.Stats.BlocksInvalidated != 1 {
			t.Fatalf("zero over segment %d's block: %v", emptied, err)
		}
		if f := q.File(in); !slices.Contains(f.Volume.Prefree, emptied) {
			t.Fatalf("segment %d not prefree after the zero: %v", emptied, f.Volume.Prefree)
		}
	}
	if w, err := q.Write(in, 4096, 20*4096); err != nil || w.Errno != "" || len(q.File(in).Inode.Dirty) != 20 {
		t.Fatalf("write: %v %+v", err, w)
	}
	return in, q
}

// TestWritebackNewSegmentAgrees: on random volumes (1, 2 or 4 segments a section, 8 to 40 sections,
// random logs, used and emptied segments, at least two sections free) with a segment manager mounted, the segment core's
// write-back opens for the full warm log is the one gc.NewSegment picks on the segment manager's own
// free maps (built by gc.Mount, kept by its own code), or the operation is refused because
// need_new_seg's answer is open there (no reserved sections: at most 2 free sections lie within the
// dirty-metadata bound; gc.ErrSSRUnknown) and a partly valid segment was there for SSR
// (gc.State.MaySSR on the state before the fsync, which a refusal leaves as it was).
func TestWritebackNewSegmentAgrees(t *testing.T) {
	ran, refused, ssr := 0, 0, 0
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 27))
		per := []uint32{1, 2, 4}[r.IntN(3)]
		main := per * uint32(8+r.IntN(33))
		perm := r.Perm(int(main))
		var current, used []uint32
		for _, no := range perm[:6] {
			current = append(current, uint32(no))
		}
		fill := r.Float64()
		for _, no := range perm[6:] {
			if r.Float64() < fill {
				used = append(used, uint32(no))
			}
		}
		emptied := uint32(0)
		if r.IntN(2) == 0 && len(used) < len(perm)-6 {
			for _, no := range perm[6:] {
				if no != 0 && !slices.Contains(used, uint32(no)) {
					emptied = uint32(no)
					break
				}
			}
		}
		// Keep two sections free: with none left, f2fs_balance_fs would collect blocks this test's
		// files do not own; ENOSPC is TestWritebackNewSegment's.
		freeSecs := 0
		for sec := range main / per {
			if !slices.ContainsFunc(slices.Concat(current, used, []uint32{emptied}), func(no uint32) bool { return no/per == sec }) {
				freeSecs++
			}
		}
		if freeSecs < 2 {
			continue
		}
		in, q := allocSeq(t, per, main, current, used, emptied, true, PerBlock)
		s := q.GCState()
		cur := s.Current()
		var segs []uint32
		for _, l := range cur {
			segs = append(segs, l.Segno)
		}
		want, werr := gc.NewSegment(s.Geometry(), gc.WarmData, cur[gc.WarmData].Segno, segs, s)
		dirty := q.dirtyState() // what the write left: the fsync's need_new_seg reads it
		res, err := q.Fsync(in)
		switch {
		case err != nil && !errors.Is(err, ErrUnmodelled):
			t.Fatalf("seed %d: %v", seed, err)
		case err != nil && werr != nil:
			t.Fatalf("seed %d: %v; the segment manager finds no free section (%v) with two free", seed, err, werr)
		case err != nil:
			if !errors.Is(err, gc.ErrSSRUnknown) {
				t.Fatalf("seed %d: refused (%v), not for need_new_seg", seed, err)
			}
			d := q.dirtyState()
			d.Nodes.Max += 2 * blocksPerSeg * uint64(per) // and two sections more
			if may, _ := q.GCState().MaySSR(gc.WarmData, d); !may {
				t.Fatalf("seed %d: refused (%v) where the segment manager opens %d and SSR cannot apply", seed, err, want)
			}
			refused++
		case len(q.SSRVictims()) > 0:
			// f2fs_need_SSR, decided by the dirty node and inode-meta pages the write left (the
			// file's inode page and its i_size): get_ssr_segment's victim, a partly valid segment.
			v := q.SSRVictims()[0]
			if need, known := s.NeedSSR(dirty); !known || !need {
				t.Fatalf("seed %d: SSR into %d where f2fs_need_SSR is %v (known %v)", seed, v.Segno, need, known)
			}
			if res.Pages[2].Segno != v.Segno || s.Segment(v.Segno).Valid == 0 || s.Segment(v.Segno).Valid >= gc.BlocksPerSeg {
				t.Fatalf("seed %d: write-back went to %d, SSR victim %+v (valid %d)", seed, res.Pages[2].Segno, v, s.Segment(v.Segno).Valid)
			}
			ssr++
		case werr != nil:
			t.Fatalf("seed %d: write-back opened segment %d where the segment manager finds none (%v)", seed, res.Pages[2].Segno, werr)
		case res.Pages[2].Segno != want:
			t.Fatalf("seed %d (%d a section, %d segments): write-back opened segment %d, the segment manager's maps give %d", seed, per, main, res.Pages[2].Segno, want)
		default:
			ran++
		}
	}
	t.Logf("%d agreed, %d took SSR, %d refused", ran, ssr, refused)
	if ran < 100 || refused+ssr == 0 {
		t.Errorf("%d agreed, %d refused: the random volumes do not cover both", ran, refused)
	}
}

// TestWritebackSSR: the warm log fills during an fsync on a volume of 24 one-segment sections, 16
// of them free, with the partly valid warm data segments 0 and 2 (one checkpointed block each, at
// offset 7). After the buffered write the file's inode page is dirty (its reserved slots:
// F2FS_DIRTY_NODES) and its inode on the meta list (i_size, i_blocks: F2FS_DIRTY_IMETA), no dentry
// page is: f2fs_need_SSR's node_secs + 2·dent_secs + imeta_secs is exactly 1 + 0 + 1. So:
//
//   - 8 reserved sections: 16 ≤ 2 × 8, f2fs_need_SSR is true whatever the metadata: need_new_seg →
//     get_ssr_segment takes segment 0 (f2fs_get_victim, SSR mode: cost 1, the first of two equal
//     costs from last_victim 0), and change_curseg writes from its first free block, skipping the
//     valid block 7: pages 3–9 to blocks 0–6, pages 10–20 to blocks 8–18;
//   - 7: 16 ≤ 14 + 2: true as well (it was refused while the model only bounded the pages);
//   - 6: 16 > 12 + 2: f2fs_need_SSR is false, a new segment (segment 3, alloc_mode=reuse's hint 0).
func TestWritebackSSR(t *testing.T) {
	current := []uint32{1, 10, 11, 12, 13, 14}
	for _, mode := range Modes {
		for _, tc := range []struct {
			rsv     uint32
			ssr     bool
			refused bool
		}{{8, true, false}, {7, true, false}, {6, false, false}} {
			in, q := allocSeqRsv(t, 1, 24, current, []uint32{0, 2}, 0, true, mode, tc.rsv)
			res, err := q.Fsync(in)
			if tc.refused {
				if !errors.Is(err, ErrUnmodelled) || !errors.Is(err, gc.ErrSSRUnknown) {
					t.Errorf("%s rsv %d: %v, want the fsync refused (gc.ErrSSRUnknown)", mode, tc.rsv, err)
				}
				continue
			}
			if err != nil || len(res.Pages) != 20 {
				t.Fatalf("%s rsv %d: %v, %+v", mode, tc.rsv, err, res)
			}
			v := &in.Volume
			var want []uint32 // the block of each page from page 3 on
			for k := range uint32(18) {
				switch {
				case !tc.ssr:
					want = append(want, f2fs.SegBlock(v.MainBlkaddr, 3)+k)
				case k < 7:
					want = append(want, f2fs.SegBlock(v.MainBlkaddr, 0)+k)
				default:
					want = append(want, f2fs.SegBlock(v.MainBlkaddr, 0)+k+1)
				}
			}
			for k, p := range res.Pages[2:] {
				if p.How != WroteOutPlace || p.New != want[k] {
					t.Fatalf("%s rsv %d: page %d: %+v, want block %d", mode, tc.rsv, p.Index, p, want[k])
				}
			}
			ssr := q.SSRVictims()
			if tc.ssr != (len(ssr) == 1) || tc.ssr && ssr[0] != (gc.SSRVictim{Type: gc.WarmData, Segno: 0, Cost: 1, Log: gc.WarmData}) {
				t.Errorf("%s rsv %d: SSR victims %+v", mode, tc.rsv, ssr)
			}
			// The segment manager and the file agree on where the log is and what it holds.
			s := q.GCState()
			c := s.Current()[gc.WarmData]
			f := q.File(in)
			if f.Volume.WarmDataSegno != c.Segno || f.Volume.WarmDataBlkoff != c.Blkoff || s.SSRLog(gc.WarmData) != tc.ssr {
				t.Errorf("%s rsv %d: file's warm log %d+%d, segment manager's %+v (SSR %v)", mode, tc.rsv, f.Volume.WarmDataSegno, f.Volume.WarmDataBlkoff, c, s.SSRLog(gc.WarmData))
			}
			if tc.ssr && (c.Segno != 0 || c.Blkoff != 19 || s.Segment(0).Valid != 19) {
				t.Errorf("%s rsv %d: warm log at %+v, segment 0 holds %d valid; want 0+19 and 19", mode, tc.rsv, c, s.Segment(0).Valid)
			}
		}
	}
}

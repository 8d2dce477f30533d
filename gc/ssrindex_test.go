package gc

import (
	"math/rand/v2"
	"testing"
)

// ssrVictimScan is get_ssr_segment's search as a scan of every segment (the model before issue
// 37's index): the reference TestSSRIndexIsTheScan holds the index to.
func (s *State) ssrVictimScan(typ int) (uint32, uint32, bool) {
	maxSearch := uint32(0)
	for segno := range s.mainSegs {
		if s.dirty.test(segno) && s.segs[segno].Type() == typ {
			maxSearch++
		}
	}
	if maxSearch > s.MaxVictimSearch {
		maxSearch = s.MaxVictimSearch
	}
	if maxSearch == 0 {
		return NullSegno, 0, false
	}
	offset := s.lastVictim[gcGreedy]
	if typ == HotData || isNodeType(typ) {
		offset = 0
	}
	lastVictim := s.lastVictim[gcGreedy]
	lastSegment := s.mainSegs
	minSeg, minCost := NullSegno, uint32(BlocksPerSeg)
	nsearched := uint32(0)
	for {
		segno := offset
		for segno < lastSegment && !(s.dirty.test(segno) && s.segs[segno].Type() == typ) {
			segno++
		}
		if segno >= lastSegment {
			if s.lastVictim[gcGreedy] != 0 {
				lastSegment = s.lastVictim[gcGreedy]
				s.lastVictim[gcGreedy] = 0
				offset = 0
				continue
			}
			break
		}
		offset = segno + 1
		nsearched++
		secno := segno / s.segsPerSec
		if !s.secUsageCheck(secno) && !s.victimSec.test(secno) {
			if c := s.CkptValid(segno); minCost > c {
				minSeg, minCost = segno, c
			}
		}
		if nsearched >= maxSearch {
			if s.lastVictim[gcGreedy] == 0 && segno <= lastVictim {
				s.lastVictim[gcGreedy] = lastVictim + 1
			} else {
				s.lastVictim[gcGreedy] = segno + 1
			}
			s.lastVictim[gcGreedy] %= s.mainSegs
			break
		}
	}
	return minSeg, minCost, minSeg != NullSegno
}

// TestSSRIndexIsTheScan: on random volumes (1, 2 or 4 segments a section, 8 to 200 sections,
// segments of every type with random valid blocks) and random sequences of what changes the
// index's inputs — allocations on the data logs (SSR included), invalidations, checkpoints,
// foreground and background collection, syncs, a segment's map replaced, a log moved by its caller — the indexed search
// (ssrVictim) gives, for every type, before every operation and from random last_victim values
// and max_victim_search limits, the scan's victim, cost and last_victim.
func TestSSRIndexIsTheScan(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 29))
	n := 300
	if testing.Short() {
		n = 30 // the fast tier: about 10,700 searches
	}
	searches := 0
	for k := range n {
		per := []uint32{1, 2, 4}[r.IntN(3)]
		secs := 8 + r.Uint32N(193)
		valid := make([]uint32, secs*per)
		for i := range valid {
			switch r.IntN(4) {
			case 0:
				valid[i] = 0
			case 1:
				valid[i] = BlocksPerSeg
			default:
				valid[i] = 1 + r.Uint32N(BlocksPerSeg-1)
			}
		}
		v := vol(t, per, valid, nil)
		for i := range v.Segments {
			if r.IntN(3) == 0 {
				v.Segments[i].Type = r.IntN(NumLogs)
			}
		}
		for t := range NumLogs {
			v.Segments[v.Current[t].Segno].Type = t
		}
		v.ReservedSegments = r.Uint32N(secs * per / 2)
		s, err := Mount(v)
		if err != nil {
			t.Fatal(err)
		}
		check := func(step int) {
			for typ := range NumLogs {
				a, b := s.Clone(), s.Clone()
				if r.IntN(3) == 0 {
					lv := r.Uint32N(s.mainSegs)
					a.lastVictim[gcGreedy], b.lastVictim[gcGreedy] = lv, lv
				}
				if r.IntN(3) == 0 {
					m := []uint32{1, 2, 3, 5, 17}[r.IntN(5)]
					a.MaxVictimSearch, b.MaxVictimSearch = m, m
				}
				lv := a.lastVictim[gcGreedy]
				sa, ca, oka := a.ssrVictim(typ)
				sb, cb, okb := b.ssrVictimScan(typ)
				if sa != sb || ca != cb || oka != okb || a.lastVictim != b.lastVictim {
					t.Fatalf("volume %d step %d type %d (last_victim %d, max search %d): index %d cost %d %v last_victim %v; scan %d cost %d %v last_victim %v",
						k, step, typ, lv, a.MaxVictimSearch, sa, ca, oka, a.lastVictim, sb, cb, okb, b.lastVictim)
				}
				searches++
			}
		}
		// Build the index before the changes, so that they go through it.
		s.index()
		for step := range 60 {
			check(step)
			switch r.IntN(9) {
			case 0, 1, 2:
				var old *Block
				if r.IntN(2) == 0 {
					no := r.Uint32N(s.mainSegs)
					if s.segs[no].Valid() > 0 {
						for off := range uint32(BlocksPerSeg) {
							if s.segs[no].Test(off) {
								old = &Block{Segno: no, Blkoff: off}
								break
							}
						}
					}
				}
				if _, err := s.Alloc(r.IntN(3), old, Dirty{}); err != nil {
					step = 60 // ENOSPC, or SSR open: the state is done
				}
			case 3:
				no := r.Uint32N(s.mainSegs)
				if s.segs[no].Valid() > 0 && !s.isCurSeg(no) {
					_ = s.InvalidateRange(no, 0, r.Uint32N(BlocksPerSeg)+1)
				}
			case 4:
				s.Checkpoint()
			case 5:
				s.GC([]Kind{Foreground, Background}[r.IntN(2)])
			case 6:
				s.Sync()
			case 7:
				no := r.Uint32N(s.mainSegs)
				if !s.isCurSeg(no) {
					var bm [64]byte
					for i := range bm {
						bm[i] = byte(r.Uint32())
					}
					if e, _, err := s.SITEntry(no); err == nil { // a walk's entry handed back
						e.SetMap(bm)
						_ = s.Adopt(no, e, false)
					}
				}
			case 8: // core's allocator opened a segment (new_curseg): SetCurrent
				no := r.Uint32N(s.mainSegs)
				if !s.isCurSeg(no) {
					_ = s.SetCurrent(r.IntN(NumLogs), CurSeg{Segno: no})
				}
			}
			if step >= 60 {
				break
			}
		}
		check(60)
	}
	t.Logf("%d searches", searches)
}

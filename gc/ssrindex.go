package gc

// get_ssr_segment's search (ssrVictim) is greedy over the dirty segments of one type, in segment
// order from last_victim, up to max_victim_search of them: the first with the fewest
// ckpt_valid_blocks wins. Scanning every segment for it cost 160 µs an allocation on a nearly full
// 60 GiB volume, where the warm data log takes a partly valid segment every few blocks (issue 37).
// ssrIndex answers the same search in O(log n): per type, a segment tree over the main segments
// counts the dirty segments of the type under each node (to find where the max_victim_search-th
// one lies) and keeps the best of them (fewest checkpointed blocks, then lowest segment number:
// the first in search order). A segment the search skips (a current section, cur_victim_sec, a
// section background gc marked) is left out at query time.
//
// The index is built on the first search and kept by every change of what it reads — a
// segment's dirty bit (locateDirty, removeDirty, SetCurrent), its type (new_curseg, change_curseg)
// and its checkpointed map (setValid, SetSegment; a checkpoint drops it) — through [State.touch],
// which queues the segment until the next search. TestSSRIndexIsTheScan holds it to the scan.
type ssrIndex struct {
	size uint32 // leaves: a power of two ≥ the main segments
	// cnt[t][node] is how many dirty segments of type t lie under node; best[t][node] the best of
	// them (noSeg: none).
	cnt  [NumLogs][]uint32
	best [NumLogs][]uint32
	// ckptN is each segment's ckpt_valid_blocks, the cost.
	ckptN   []uint16
	pending []uint32
}

const noSeg = ^uint32(0)

// maxSSRPending bounds the queued segments: past it they are applied at once.
const maxSSRPending = 1 << 12

func (s *State) buildSSRIndex() *ssrIndex {
	ix := &ssrIndex{size: 1}
	for ix.size < s.mainSegs {
		ix.size *= 2
	}
	ix.ckptN = make([]uint16, s.mainSegs)
	for t := range NumLogs {
		ix.cnt[t] = make([]uint32, 2*ix.size)
		ix.best[t] = make([]uint32, 2*ix.size)
		for i := range ix.best[t] {
			ix.best[t][i] = noSeg
		}
	}
	for segno := range s.mainSegs {
		ix.ckptN[segno] = uint16(s.CkptValid(segno))
		if s.dirty.test(segno) {
			if t := s.segs[segno].Type(); t >= 0 && t < NumLogs {
				ix.cnt[t][ix.size+segno] = 1
				ix.best[t][ix.size+segno] = segno
			}
		}
	}
	for t := range NumLogs {
		for n := ix.size - 1; n >= 1; n-- {
			ix.pull(t, n)
		}
	}
	return ix
}

func (s *State) ssrIndexClone() *ssrIndex {
	ix := s.ssrIdx
	if ix == nil {
		return nil
	}
	c := &ssrIndex{size: ix.size, ckptN: append([]uint16(nil), ix.ckptN...), pending: append([]uint32(nil), ix.pending...)}
	for t := range NumLogs {
		c.cnt[t] = append([]uint32(nil), ix.cnt[t]...)
		c.best[t] = append([]uint32(nil), ix.best[t]...)
	}
	return c
}

// better reports whether segment a is a better SSR victim than b: fewer checkpointed blocks, then
// the lower number.
func (ix *ssrIndex) better(a, b uint32) bool {
	if b == noSeg {
		return a != noSeg
	}
	if a == noSeg {
		return false
	}
	if ix.ckptN[a] != ix.ckptN[b] {
		return ix.ckptN[a] < ix.ckptN[b]
	}
	return a < b
}

func (ix *ssrIndex) pull(t int, n uint32) {
	l, r := ix.best[t][2*n], ix.best[t][2*n+1]
	ix.cnt[t][n] = ix.cnt[t][2*n] + ix.cnt[t][2*n+1]
	if ix.better(r, l) {
		ix.best[t][n] = r
	} else {
		ix.best[t][n] = l
	}
}

// touch queues segment segno for the index: its dirty bit, type or checkpointed map changed.
func (s *State) touch(segno uint32) {
	ix := s.ssrIdx
	if ix == nil {
		return
	}
	if k := len(ix.pending); k > 0 && ix.pending[k-1] == segno {
		return
	}
	ix.pending = append(ix.pending, segno)
	if len(ix.pending) > maxSSRPending {
		s.flushSSRIndex()
	}
}

// flushSSRIndex applies the queued segments.
func (s *State) flushSSRIndex() {
	ix := s.ssrIdx
	for _, segno := range ix.pending {
		ix.ckptN[segno] = uint16(s.CkptValid(segno))
		typ := -1
		if s.dirty.test(segno) {
			typ = s.segs[segno].Type()
		}
		for t := range NumLogs {
			leaf := ix.size + segno
			cnt, best := uint32(0), noSeg
			if t == typ {
				cnt, best = 1, segno
			}
			// The cost may have changed with the type unchanged: the path is redone whenever the
			// segment is of the type, before or now.
			if ix.cnt[t][leaf] == cnt && cnt == 0 {
				continue
			}
			ix.cnt[t][leaf], ix.best[t][leaf] = cnt, best
			for n := leaf / 2; n >= 1; n /= 2 {
				ix.pull(t, n)
			}
		}
	}
	ix.pending = ix.pending[:0]
}

// index returns the index, built or brought up to date.
func (s *State) index() *ssrIndex {
	if s.ssrIdx == nil {
		s.ssrIdx = s.buildSSRIndex()
	} else if len(s.ssrIdx.pending) > 0 {
		s.flushSSRIndex()
	}
	return s.ssrIdx
}

// count is the dirty segments of type t in [lo, hi).
func (ix *ssrIndex) count(t int, lo, hi uint32) uint32 {
	n := uint32(0)
	for l, r := lo+ix.size, hi+ix.size; l < r; l, r = l/2, r/2 {
		if l&1 == 1 {
			n += ix.cnt[t][l]
			l++
		}
		if r&1 == 1 {
			r--
			n += ix.cnt[t][r]
		}
	}
	return n
}

// kth is the k-th (1-based) dirty segment of type t in segment order; k ≤ the total.
func (ix *ssrIndex) kth(t int, k uint32) uint32 {
	n := uint32(1)
	for n < ix.size {
		if c := ix.cnt[t][2*n]; k <= c {
			n = 2 * n
		} else {
			k -= c
			n = 2*n + 1
		}
	}
	return n - ix.size
}

// bestIn is the best dirty segment of type t in [lo, hi) that skip does not leave out (noSeg:
// none). A node whose best is skipped is searched below it, so each skipped segment that would win
// costs O(log n) more.
func (ix *ssrIndex) bestIn(t int, lo, hi uint32, skip func(uint32) bool) uint32 {
	return ix.bestNode(t, 1, 0, ix.size, lo, hi, skip)
}

func (ix *ssrIndex) bestNode(t int, n, nlo, nhi, lo, hi uint32, skip func(uint32) bool) uint32 {
	if hi <= nlo || nhi <= lo || ix.cnt[t][n] == 0 {
		return noSeg
	}
	if lo <= nlo && nhi <= hi {
		if b := ix.best[t][n]; !skip(b) {
			return b
		}
		if nhi-nlo == 1 {
			return noSeg
		}
	}
	mid := (nlo + nhi) / 2
	a := ix.bestNode(t, 2*n, nlo, mid, lo, hi, skip)
	b := ix.bestNode(t, 2*n+1, mid, nhi, lo, hi, skip)
	if ix.better(b, a) {
		return b
	}
	return a
}

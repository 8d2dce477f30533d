package gc

import (
	"sort"

	"github.com/zrviz/zrviz/internal/f2fs"
)

// Kind is the gc_type of a call: foreground (FG_GC) or background (BG_GC).
type Kind int

const (
	// Background is BG_GC, F2FS_IOC_GARBAGE_COLLECT with sync = 0: cost-benefit.
	Background Kind = iota
	// Foreground is FG_GC, sync = 1: greedy.
	Foreground
)

// String returns "BG" or "FG".
func (k Kind) String() string {
	if k == Foreground {
		return "FG"
	}
	return "BG"
}

// Candidate is one section the search looked at, with its cost terms. Segno is the section's
// first segment; Valid is the section's valid blocks; Mtime its mean SIT mtime; U the per-segment
// utilisation in percent and Age 0..100 as get_cb_cost computes them (for greedy they are shown,
// not used); Cost is what the policy compares (the greedy cost is Valid).
type Candidate struct {
	Segno uint32 `json:"segno"`
	Valid uint32 `json:"valid"`
	Mtime uint64 `json:"mtime"`
	U     uint32 `json:"u"`
	Age   uint32 `json:"age"`
	Cost  uint32 `json:"cost"`
}

// MaxCandidates is how many of the cheapest candidates a pick keeps.
const MaxCandidates = 8

// victim is what f2fs_get_victim returns.
type victim struct {
	segno      uint32 // NullSegno: none (ENODATA)
	cost       uint32 // p.min_cost, as the tracepoint prints it
	policy     int
	fromBG     bool // taken by check_bg_victims
	searched   int
	candidates []Candidate
}

// maxCost is get_max_cost (gc.c:318) for LFS.
func (s *State) maxCost(policy int) uint32 {
	if policy == gcGreedy {
		return 2 * s.segsPerSec * BlocksPerSeg
	}
	return ^uint32(0)
}

// checkBGVictims is check_bg_victims (gc.c:345).
func (s *State) checkBGVictims() uint32 {
	for secno := range s.mainSecs {
		if !s.victimSec.test(secno) || s.secUsageCheck(secno) {
			continue
		}
		s.victimSec.clear(secno)
		return secno * s.segsPerSec
	}
	return NullSegno
}

// terms computes get_cb_cost's u and age for a section. With update it also moves min/max mtime
// as get_cb_cost does ("Handle if the system time has changed by the user").
func (s *State) terms(secno uint32, update bool) (mtime uint64, u, age uint32) {
	mtime = s.secMtime(secno)
	vblocks := s.secValid(secno) / s.segsPerSec
	u = vblocks * 100 >> f2fs.LogBlocksPerSeg // BLKS_TO_SEGS
	lo, hi := s.minMtime, s.maxMtime
	if mtime < lo {
		lo = mtime
	}
	if mtime > hi {
		hi = mtime
	}
	if update {
		s.minMtime, s.maxMtime = lo, hi
	}
	if hi != lo {
		age = uint32(100 - 100*(mtime-lo)/(hi-lo))
	}
	return mtime, u & 0xFF, age & 0xFF
}

// getVictim is f2fs_get_victim (gc.c:786) for GC (alloc_mode LFS, type NO_CHECK_TYPE, no
// one-time GC, victim_segno NULL_SEGNO).
func (s *State) getVictim(kind Kind) victim {
	// select_policy (gc.c:275) via select_gc_type (gc.c:244): no gc_idle/gc_urgent, no atgc.
	p := victim{segno: NullSegno, policy: gcCB}
	if kind == Foreground {
		p.policy = gcGreedy
	}
	unit := s.segsPerSec
	var bitmap bitset
	var maxSearch uint32
	if s.large() {
		bitmap, maxSearch = s.dirtySec, s.dirtySec.count(s.mainSecs)
	} else {
		bitmap, maxSearch = s.dirty, s.dirty.count(s.mainSegs)
	}
	if kind != Foreground && maxSearch > s.MaxVictimSearch {
		maxSearch = s.MaxVictimSearch
	}
	offset := s.lastVictim[p.policy] // NO_CHECK_TYPE is neither hot data nor a node log
	minCost := s.maxCost(p.policy)
	lastSegment := s.mainSecs * unit
	p.cost = minCost
	if maxSearch == 0 {
		return p // -ENODATA
	}
	// next_victim_seg[] is never left set here: a whole section is collected per call (the
	// migration window and granularity are segs_per_sec by default, super.c:3959).
	lastVictim := s.lastVictim[p.policy]
	if kind == Foreground {
		if segno := s.checkBGVictims(); segno != NullSegno {
			p.segno, p.fromBG = segno, true
			return s.gotIt(kind, p)
		}
	}
	bit := func(segno uint32) uint32 { // bitmap index of the unit holding segno
		if s.large() {
			return segno / unit
		}
		return segno
	}
	var cands []Candidate
	nsearched := uint32(0)
	for {
		unitNo := bitmap.next(bit(offset), lastSegment/unit)
		segno := unitNo * unit
		if segno >= lastSegment {
			if s.lastVictim[p.policy] != 0 {
				lastSegment = s.lastVictim[p.policy]
				s.lastVictim[p.policy] = 0
				offset = 0
				continue
			}
			break
		}
		offset = segno + unit
		nsearched++
		secno := segno / s.segsPerSec
		if !s.secUsageCheck(secno) && !(kind == Background && s.victimSec.test(secno)) {
			mtime, u, age := s.terms(secno, p.policy == gcCB)
			if p.policy == gcCB && s.clock != nil {
				s.clock.read = true // the choice reads ages: State.AtClock cannot redo it
			}
			c := Candidate{Segno: segno, Valid: s.secValid(secno), Mtime: mtime, U: u, Age: age}
			if p.policy == gcGreedy {
				c.Cost = c.Valid
			} else {
				c.Cost = ^uint32(0) - (100*(100-u)*age)/(100+u)
			}
			cands = append(cands, c)
			if minCost > c.Cost {
				p.segno, minCost = segno, c.Cost
			}
		}
		if nsearched >= maxSearch {
			if s.lastVictim[p.policy] == 0 && segno <= lastVictim {
				s.lastVictim[p.policy] = lastVictim + unit
			} else {
				s.lastVictim[p.policy] = segno + unit
			}
			s.lastVictim[p.policy] %= s.mainSecs * s.segsPerSec
			break
		}
	}
	p.searched = int(nsearched)
	p.cost = minCost
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Cost < cands[j].Cost })
	if len(cands) > MaxCandidates {
		cands = cands[:MaxCandidates]
	}
	p.candidates = cands
	if p.segno == NullSegno {
		return p
	}
	return s.gotIt(kind, p)
}

// gotIt is the got_it/got_result tail of f2fs_get_victim: the section becomes cur_victim_sec
// (foreground) or is marked in victim_secmap (background).
func (s *State) gotIt(kind Kind, p victim) victim {
	p.segno = p.segno / s.segsPerSec * s.segsPerSec
	secno := p.segno / s.segsPerSec
	if kind == Foreground {
		s.curVictimSec = secno
	} else {
		s.victimSec.set(secno)
	}
	return p
}

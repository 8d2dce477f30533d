package core

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// RunStarts is the one definition of a physical run, held here as the tests' oracle (the product
// counts runs in the engine, Stats.Runs, and on the page) and shared with the page (static/js/colour.js,
// RunMap; both are tested against static/jstest/testdata/runs.json): in file order, the slots
// of the given spans that hold a block address (not NULL_ADDR, NEW_ADDR or COMPRESS_ADDR); a run
// is a longest stretch of them whose every address is the previous one plus 1. NULL and NEW slots
// between do not break a run, and neither does a dnode chunk's end: a run is a property of the
// layout. The batched mode releases a run with one f2fs_invalidate_blocks call per dnode chunk it
// crosses (bench64: 3 runs, 17 chunks, 19 calls), and [Stats.Runs] counts the runs of the blocks
// a run invalidated, which are these when no block fails validation.
//
// ext is a slot map (sorted, as [Run.Slots] and [ReadSlots] give it); spans are the file block
// index ranges that count, sorted and disjoint (a player's: the dnode chunks the loop walks, so
// fill_zero's partial pages are no part of a run). RunStarts returns the file block index of each
// run's first slot.
func RunStarts(ext []Extent, spans []Pages) []uint64 {
	var starts []uint64
	next := int64(-1) // the address that would continue the current run
	k := 0
	for _, e := range ext {
		if e.State != "addr" {
			continue
		}
		lo, hi := e.Index, e.Index+e.Count
		for lo < hi {
			for k < len(spans) && spans[k].End <= lo {
				k++
			}
			if k == len(spans) {
				return starts
			}
			from := max(lo, spans[k].Start)
			to := min(hi, spans[k].End)
			if from >= hi {
				break
			}
			a := int64(e.Addr) + int64(from-e.Index)
			if a != next {
				starts = append(starts, from)
			}
			next = a + int64(to-from)
			lo = to
		}
	}
	return starts
}

// runVectors are the physical-run cases the page's RunMap is tested against too.
func runVectors(t *testing.T) []struct {
	Name    string      `json:"name"`
	Extents []Extent    `json:"extents"`
	Spans   [][2]uint64 `json:"spans"`
	Want    []uint64    `json:"want"`
} {
	b, err := os.ReadFile("../static/jstest/testdata/runs.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Cases []struct {
			Name    string      `json:"name"`
			Extents []Extent    `json:"extents"`
			Spans   [][2]uint64 `json:"spans"`
			Want    []uint64    `json:"want"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v.Cases
}

func TestRunStartsVectors(t *testing.T) {
	for _, c := range runVectors(t) {
		spans := make([]Pages, len(c.Spans))
		for i, s := range c.Spans {
			spans[i] = Pages{Start: s[0], End: s[1]}
		}
		got := RunStarts(c.Extents, spans)
		if !slices.Equal(got, c.Want) && !(len(got) == 0 && len(c.Want) == 0) {
			t.Errorf("%s: %v, want %v", c.Name, got, c.Want)
		}
	}
}

// TestRunStartsCountsTheEnginesRuns: on random files, a run that ends without error counts in
// Stats.Runs exactly the runs RunStarts finds in the map it started from, over the chunks it walked.
func TestRunStartsCountsTheEnginesRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 2))
	checked := 0
	for k := 0; k < sweep(1500); k++ {
		st, req := randomStateN(r, 4000)
		in := st.input()
		var spans []Pages
		res, err := Walk(in, req, Batched, func(ev *Event) bool {
			if ev.Kind == EvChunkEnter {
				spans = append(spans, Pages{Start: ev.Slot, End: ev.Slot + ev.Count})
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Errno != "" || len(spans) == 0 {
			continue
		}
		ext, _, err := ReadSlots(in, spans[0].Start, spans[len(spans)-1].End, 0, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if got := uint64(len(RunStarts(ext, spans))); got != res.Stats.Runs {
			t.Fatalf("case %d: RunStarts finds %d runs, the engine counted %d", k, got, res.Stats.Runs)
		}
		checked++
	}
	if checked < sweep(1500)/15 {
		t.Fatalf("only %d error-free runs", checked)
	}
}

// TestRunsCountedAtAnError: a run still open when a later chunk fails (ENOSPC reserving its holes)
// is counted: the run is closed when the call returns, whatever ends it.
func TestRunsCountedAtAnError(t *testing.T) {
	slots := make([]uint32, 2000)
	for i := range 1500 {
		slots[i] = 10000 + uint32(i)
	}
	st := newState(slots, 2000)
	st.vol.ValidBlockCount = st.vol.UserBlockCount // no free block for the holes 1500…
	for _, m := range []Mode{PerBlock, Batched} {
		res, err := Simulate(st.input(), Request{Length: 2000 * 4096}, m)
		if err != nil {
			t.Fatal(err)
		}
		if res.Errno != "ENOSPC" || res.Stats.Runs != 1 || res.Stats.BlocksInvalidated == 0 {
			t.Errorf("%v: %s, %d runs, %d blocks", m, res.Errno, res.Stats.Runs, res.Stats.BlocksInvalidated)
		}
	}
}

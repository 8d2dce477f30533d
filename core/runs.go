package core

// RunStarts is the one definition of a physical run, shared with the page (static/js/colour.js,
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

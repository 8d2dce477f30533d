package core

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func blocksOf(r *Result) []uint32 {
	var out []uint32
	for c := range r.Calls.All() {
		for k := uint32(0); k < c.Len; k++ {
			out = append(out, c.Start+k)
		}
	}
	slices.Sort(out)
	return out
}

// TestModesAgree checks, over random states, that both modes end in the
// same slot map, SIT, counters and errno, invalidate the same blocks, and
// that batched calls are fewer, non-empty, contiguous runs of one chunk.
func TestModesAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	errnos := map[string]int{}
	for i := range 400 {
		st, req := randomState(r)
		in := st.input()
		var pb *Result
		for _, mode := range Modes {
			// chunk ordinal → addresses that joined a run in it
			runAddrs := map[int32]map[uint32]bool{}
			res, err := Walk(in, req, mode, func(ev *Event) bool {
				switch {
				case ev.Kind == EvSlot && (ev.Action == ActStartRun || ev.Action == ActExtendRun || ev.Action == ActInvalidate):
					if runAddrs[ev.Chunk] == nil {
						runAddrs[ev.Chunk] = map[uint32]bool{}
					}
					runAddrs[ev.Chunk][ev.Addr] = true
				case ev.Kind == EvInvalidate:
					if ev.Len == 0 {
						t.Fatalf("case %d %s: zero-length call at step %d", i, mode, ev.Step)
					}
					for k := uint32(0); k < ev.Len; k++ {
						if !runAddrs[ev.Chunk][ev.Addr+k] {
							t.Fatalf("case %d %s: call (%d,%d) covers %d, not a slot of chunk %d", i, mode, ev.Addr, ev.Len, ev.Addr+k, ev.Chunk)
						}
					}
				}
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			if mode == PerBlock {
				pb = res
				errnos[res.Errno]++
				continue
			}
			b := res
			if pb.Errno != b.Errno || pb.SizeAfter != b.SizeAfter || pb.BlocksAfter != b.BlocksAfter ||
				pb.ValidBlocks != b.ValidBlocks || pb.ValidNodes != b.ValidNodes || pb.Advise != b.Advise {
				t.Fatalf("case %d %+v: results differ:\n per-block %q size %d blocks %d vbc %d\n batched  %q size %d blocks %d vbc %d",
					i, req, pb.Errno, pb.SizeAfter, pb.BlocksAfter, pb.ValidBlocks, b.Errno, b.SizeAfter, b.BlocksAfter, b.ValidBlocks)
			}
			if !reflect.DeepEqual(pb.After, b.After) {
				t.Fatalf("case %d %+v: slot maps differ\n%v\n%v", i, req, pb.After.Extents, b.After.Extents)
			}
			if !reflect.DeepEqual(segsByNo(pb), segsByNo(b)) {
				t.Fatalf("case %d: SIT differs", i)
			}
			if !slices.Equal(blocksOf(pb), blocksOf(b)) {
				t.Fatalf("case %d: invalidated blocks differ", i)
			}
			if b.Calls.Len() > pb.Calls.Len() {
				t.Fatalf("case %d: batched %d calls > per-block %d", i, b.Calls.Len(), pb.Calls.Len())
			}
			// A physical run crosses chunks; the batched mode calls once per run per chunk (and
			// after a failed validation), so never fewer calls than runs.
			if pb.Stats.Runs != b.Stats.Runs || b.Stats.Runs > b.Calls.Len() {
				t.Fatalf("case %d: runs per-block %d batched %d calls %d", i, pb.Stats.Runs, b.Stats.Runs, b.Calls.Len())
			}
			if pb.Stats.BlocksInvalidated != uint64(len(blocksOf(pb))) {
				t.Fatalf("case %d: blocksInvalidated %d, calls cover %d", i, pb.Stats.BlocksInvalidated, len(blocksOf(pb)))
			}
		}
	}
	// The generator must reach the interesting outcomes.
	for _, e := range []string{"", "ENOSPC", "EFSCORRUPTED"} {
		if errnos[e] == 0 {
			t.Errorf("no random case ended with errno %q (%v)", e, errnos)
		}
	}
}

func segsByNo(r *Result) map[uint32][2]any {
	m := map[uint32][2]any{}
	for _, s := range r.Segments {
		m[s.Segno] = [2]any{s.Valid, s.Map}
	}
	return m
}

// TestSeekReplays checks that seeking to step N, forwards or backwards,
// then stepping gives the same events as stepping from 0.
func TestSeekReplays(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	maxCps := 0
	defer func() {
		if maxCps < 3 {
			t.Errorf("no case had 3 checkpoints (max %d): restores from mid-run were not exercised", maxCps)
		}
	}()
	for i := range sweep(60) {
		st, req := randomState(r)
		if i%6 == 0 {
			// Big enough for several checkpoints (one per four chunks).
			// A valid file big enough for several checkpoints (one per
			// four chunks): runs broken now and then, NEW and NULL slots.
			slots := make([]uint32, 5000+r.IntN(15000))
			next := uint32(4096)
			for k := range slots {
				switch p := r.IntN(100); {
				case p < 3:
					slots[k] = NullAddr
				case p < 6:
					slots[k] = NewAddr
				default:
					if r.IntN(50) == 0 {
						next += uint32(1 + r.IntN(9))
					}
					slots[k] = next
					next++
				}
			}
			st = newState(slots, int64(len(slots)))
			req = Request{Offset: int64(r.IntN(8192)), Length: st.ino.Size}
		}
		for _, mode := range Modes {
			run, err := NewRun(st.input(), req, mode)
			if err != nil {
				t.Fatal(err)
			}
			var all []Event
			for {
				ev, ok := run.Next()
				if !ok {
					break
				}
				all = append(all, ev)
			}
			if run.Err() != nil {
				t.Fatal(run.Err())
			}
			maxCps = max(maxCps, len(run.cps))
			final := run.Snapshot()
			for k := range 6 {
				n := int64(r.IntN(len(all) + 1))
				if k == 0 {
					n = 0
				}
				if err := run.SeekTo(n); err != nil {
					t.Fatal(err)
				}
				if n > 0 && run.Last() != all[n-1] {
					t.Fatalf("case %d %s: after SeekTo(%d) last = %+v, want %+v", i, mode, n, run.Last(), all[n-1])
				}
				for j := n; j < int64(len(all)); j++ {
					ev, ok := run.Next()
					if !ok || ev != all[j] {
						t.Fatalf("case %d %s: SeekTo(%d) then event %d = %+v, want %+v", i, mode, n, j, ev, all[j])
					}
				}
				if _, ok := run.Next(); ok {
					t.Fatalf("case %d %s: events after the end", i, mode)
				}
				if got := run.Snapshot(); !reflect.DeepEqual(got, final) {
					t.Fatalf("case %d %s: final snapshot differs after SeekTo(%d)", i, mode, n)
				}
			}
			res, err := Simulate(st.input(), req, mode)
			if err != nil {
				t.Fatal(err)
			}
			if res.Stats.Steps != int64(len(all)) || res.Errno != final.Errno || !reflect.DeepEqual(res.Stats, final.Stats) {
				t.Fatalf("case %d %s: Simulate disagrees with the Run: %d steps vs %d", i, mode, res.Stats.Steps, len(all))
			}
		}
	}
}

// TestSlotsNonDecreasing checks the lockstep contract a player relies on: within a run, an event's
// Slot never goes back, and NextSlot is the slot of the event Next returns.
func TestSlotsNonDecreasing(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 100 {
		st, req := randomState(r)
		for _, mode := range Modes {
			run, _ := NewRun(st.input(), req, mode)
			var last uint64
			for !run.Done() {
				want := run.NextSlot()
				ev, ok := run.Next()
				if !ok {
					break
				}
				if ev.Slot != want || ev.Slot < last {
					t.Fatalf("case %d %s: event at slot %d, NextSlot said %d, previous %d", i, mode, ev.Slot, want, last)
				}
				last = ev.Slot
			}
		}
	}
}

// TestSimulateMatchesWalk: Simulate's event-free fast path ends in exactly
// the Result the stepped path builds.
func TestSimulateMatchesWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 300 {
		st, req := randomState(r)
		for _, mode := range Modes {
			a, err := Simulate(st.input(), req, mode)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Walk(st.input(), req, mode, func(*Event) bool { return true })
			if err != nil {
				t.Fatal(err)
			}
			a.nextFn, b.nextFn = nil, nil
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("case %d %s: Simulate and Walk differ:\n%+v\n%+v", i, mode, a.Stats, b.Stats)
			}
		}
	}
}

// TestWalkMatchesRun: Walk's fast event path emits exactly the events the
// stepped Run does.
func TestWalkMatchesRun(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := range 200 {
		st, req := randomState(r)
		for _, mode := range Modes {
			var walked []Event
			if _, err := Walk(st.input(), req, mode, func(ev *Event) bool { walked = append(walked, *ev); return true }); err != nil {
				t.Fatal(err)
			}
			run, _ := NewRun(st.input(), req, mode)
			for j := 0; ; j++ {
				ev, ok := run.Next()
				if !ok {
					if j != len(walked) {
						t.Fatalf("case %d %s: Run has %d events, Walk %d", i, mode, j, len(walked))
					}
					break
				}
				if j >= len(walked) || ev != walked[j] {
					t.Fatalf("case %d %s: event %d: Run %+v, Walk %+v", i, mode, j, ev, walked[min(j, len(walked)-1)])
				}
			}
		}
	}
}

// overlayExtents lays changes over base (both sorted extents) and returns the merged map of [lo, hi).
func overlayExtents(base, changes []Extent, lo, hi uint64) []Extent {
	slots := make([]uint32, hi-lo)
	for _, ext := range [][]Extent{base, changes} {
		for _, e := range ext {
			for i := max(e.Index, lo); i < min(e.Index+e.Count, hi); i++ {
				switch e.State {
				case "addr":
					slots[i-lo] = e.Addr + uint32(i-e.Index)
				case "new":
					slots[i-lo] = NewAddr
				case "compress":
					slots[i-lo] = CompressAddr
				default:
					slots[i-lo] = NullAddr
				}
			}
		}
	}
	var b extentBuilder
	for i, a := range slots {
		b.add(lo+uint64(i), a)
	}
	return b.ext
}

// TestChangedOverInput: at any step, the input's slots (ReadSlots, read in small pages) with
// Changed laid over them are exactly the run's current slots.
func TestChangedOverInput(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for i := range sweep(150) {
		st, req := randomStateN(r, 2500)
		hi := st.file.n + 3
		var base []Extent
		for from := uint64(0); from < hi; {
			page, next, err := ReadSlots(st.input(), from, hi, 1+r.IntN(5), 1+r.IntN(3))
			if err != nil || next <= from {
				t.Fatalf("case %d: ReadSlots(%d) = %d, %v", i, from, next, err)
			}
			if len(base) > 0 && len(page) > 0 {
				l := &base[len(base)-1]
				if f := page[0]; l.Index+l.Count == f.Index && l.State == f.State && (f.State != "addr" || uint64(l.Addr)+l.Count == uint64(f.Addr)) {
					l.Count += f.Count
					page = page[1:]
				}
			}
			base, from = append(base, page...), next
		}
		if whole, _, _ := ReadSlots(st.input(), 0, hi, 0, 1<<20); !reflect.DeepEqual(base, whole) {
			t.Fatalf("case %d: pages %v differ from the whole %v", i, base, whole)
		}
		for _, mode := range Modes {
			run, _ := NewRun(st.input(), req, mode)
			for step := 0; ; step++ {
				if step%7 == 0 || run.Done() {
					want, err := run.Slots(0, hi)
					if err != nil {
						t.Fatal(err)
					}
					if got := overlayExtents(base, run.Changed(0, hi), 0, hi); !reflect.DeepEqual(got, want) {
						t.Fatalf("case %d %s step %d: input+changed = %v\nwant %v", i, mode, run.Step(), got, want)
					}
				}
				if _, ok := run.Next(); !ok {
					break
				}
			}
		}
	}
}

// TestCallHistory: a Run keeping a bounded call history shows the same latest calls and counters as
// an unbounded one at every step, also after seeking back and forth, and its list stays small.
func TestCallHistory(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for i := range 100 {
		st, req := randomState(r)
		for _, mode := range Modes {
			full, _ := NewRun(st.input(), req, mode)
			short, _ := NewRunOptions(st.input(), req, mode, RunOptions{CallHistory: 4})
			total := int64(0)
			for !full.Done() {
				if _, ok := full.Next(); !ok {
					break
				}
				total++
			}
			for k := 0; k < 12; k++ {
				n := int64(r.IntN(int(total) + 1))
				if err := full.SeekTo(n); err != nil {
					t.Fatal(err)
				}
				if err := short.SeekTo(n); err != nil {
					t.Fatal(err)
				}
				a, b := full.Snapshot(), short.Snapshot()
				if !reflect.DeepEqual(a.Stats, b.Stats) || !slices.Equal(a.LastCalls[max(0, len(a.LastCalls)-4):], b.LastCalls[max(0, len(b.LastCalls)-4):]) {
					t.Fatalf("case %d %s step %d: calls %v vs %v", i, mode, n, a.LastCalls, b.LastCalls)
				}
				if len(short.e.calls.runs) > 2*4 {
					t.Fatalf("case %d: bounded list holds %d runs", i, len(short.e.calls.runs))
				}
			}
		}
	}
}

// TestInCall: InCall is true exactly when the next event is a SIT update of the call just made.
func TestInCall(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for i := range 100 {
		st, req := randomState(r)
		for _, mode := range Modes {
			run, _ := NewRun(st.input(), req, mode)
			for {
				was := run.InCall()
				ev, ok := run.Next()
				if !ok {
					break
				}
				if was != (ev.Kind == EvSITUpdate) {
					t.Fatalf("case %d %s: InCall was %v before a %s event", i, mode, was, ev.Kind)
				}
			}
		}
	}
}

// TestCheckpointSpacing: whatever the checkpoint spacing, seeking anywhere gives the state stepping
// there gives; a wider spacing keeps a smaller undo log; a forward-only run keeps none and refuses to
// seek back.
func TestCheckpointSpacing(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for i := range 30 {
		st, req := randomStateN(r, 6000)
		for _, mode := range Modes {
			ref, _ := NewRun(st.input(), req, mode)
			var steps []Snapshot
			for {
				steps = append(steps, ref.Snapshot())
				if _, ok := ref.Next(); !ok {
					break
				}
			}
			prevUndo := -1
			for _, every := range []int{1, 4, 16, 1 << 20} {
				run, _ := NewRunOptions(st.input(), req, mode, RunOptions{CheckpointChunks: every})
				run.SeekTo(int64(len(steps) - 1))
				if u := run.UndoEntries(); prevUndo >= 0 && u > prevUndo {
					t.Fatalf("case %d: spacing %d logs %d undo entries, more than a closer spacing's %d", i, every, u, prevUndo)
				} else {
					prevUndo = u
				}
				for k := 0; k < 8; k++ {
					n := r.IntN(len(steps))
					if err := run.SeekTo(int64(n)); err != nil {
						t.Fatal(err)
					}
					if got := run.Snapshot(); !reflect.DeepEqual(got, steps[n]) {
						t.Fatalf("case %d %s spacing %d: seek to %d differs from stepping there", i, mode, every, n)
					}
				}
			}
			fwd, _ := NewRunOptions(st.input(), req, mode, RunOptions{Forward: true})
			if err := fwd.SeekTo(int64(len(steps) - 1)); err != nil {
				t.Fatal(err)
			}
			if fwd.UndoEntries() != 0 || !reflect.DeepEqual(fwd.Snapshot(), steps[len(steps)-1]) {
				t.Fatalf("case %d: the forward run logged %d entries or ended elsewhere", i, fwd.UndoEntries())
			}
			if len(steps) > 2 {
				if err := fwd.SeekTo(1); !errors.Is(err, ErrForward) {
					t.Fatalf("case %d: a forward run seeking back: %v", i, err)
				}
			}
		}
	}
}

package core

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// pass2Trace writes a run's pass-2 events (slot, error, invalidate, sit-update) one per line:
// "slot 1 extend-run 7201", "error 2 sit-bit 7202", "call 3 after-error 7200+2", "sit 3 7200+2".
func pass2Trace(ev *Event) string {
	switch ev.Kind {
	case EvSlot:
		if ev.Action == ActSkipNew {
			return fmt.Sprintf("slot %d skip-new", ev.Slot)
		}
		return fmt.Sprintf("slot %d %s %d", ev.Slot, ev.Action, ev.Addr)
	case EvError:
		return fmt.Sprintf("error %d %s %d", ev.Slot, ev.Action, ev.Addr)
	case EvInvalidate:
		return fmt.Sprintf("call %d %s %d+%d", ev.Slot, ev.Action, ev.Addr, ev.Len)
	case EvSITUpdate:
		return fmt.Sprintf("sit %d %d+%d", ev.Slot, ev.Addr, ev.Len)
	}
	return ""
}

// TestPass2Order pins the order of pass 2's events in the spec's examples where the modes differ
// most (docs/kernel-semantics.md §7.3, §11): a discontiguous address flushes the pending run before it is
// validated, at its own slot, and is visited again; an address that continues the run is
// validated with the run pending, so the error comes first and the flush ("after-error") after
// the loop; a NULL slot stops the loop the same way; NEW slots neither stop nor split a run. Each
// through Walk, Run.Next, and Simulate's call reasons.
func TestPass2Order(t *testing.T) {
	tests := []struct {
		name    string
		slots   []uint32
		cleared []uint32
		space   int64 // free blocks; -1 = plenty
		batched string
		perBlk  string
	}{
		{"2 NEW inside run", []uint32{A, A + 1, N, A + 2}, nil, -1,
			"slot 0 start-run 7200|slot 1 extend-run 7201|slot 2 skip-new|slot 3 extend-run 7202|call 3 end-of-chunk 7200+3|sit 3 7200+3",
			"slot 0 invalidate 7200|call 0 per-block 7200+1|sit 0 7200+1|slot 1 invalidate 7201|call 1 per-block 7201+1|sit 1 7201+1|slot 2 skip-new|slot 3 invalidate 7202|call 3 per-block 7202+1|sit 3 7202+1"},
		{"6 duplicate", []uint32{A, A + 1, A}, nil, -1,
			"slot 0 start-run 7200|slot 1 extend-run 7201|call 2 discontiguous 7200+2|sit 2 7200+2|error 2 sit-bit 7200",
			"slot 0 invalidate 7200|call 0 per-block 7200+1|sit 0 7200+1|slot 1 invalidate 7201|call 1 per-block 7201+1|sit 1 7201+1|error 2 sit-bit 7200"},
		{"8 contiguous duplicate", []uint32{A + 1, A, A + 1}, nil, -1,
			"slot 0 start-run 7201|call 1 discontiguous 7201+1|sit 1 7201+1|slot 1 start-run 7200|error 2 sit-bit 7201|call 2 after-error 7200+1|sit 2 7200+1",
			"slot 0 invalidate 7201|call 0 per-block 7201+1|sit 0 7201+1|slot 1 invalidate 7200|call 1 per-block 7200+1|sit 1 7200+1|error 2 sit-bit 7201"},
		{"9 segment boundary", seq(S-2, 4), nil, -1,
			"slot 0 start-run 7678|slot 1 extend-run 7679|slot 2 extend-run 7680|slot 3 extend-run 7681|call 3 end-of-chunk 7678+4|sit 3 7678+2|sit 3 7680+2",
			"slot 0 invalidate 7678|call 0 per-block 7678+1|sit 0 7678+1|slot 1 invalidate 7679|call 1 per-block 7679+1|sit 1 7679+1|slot 2 invalidate 7680|call 2 per-block 7680+1|sit 2 7680+1|slot 3 invalidate 7681|call 3 per-block 7681+1|sit 3 7681+1"},
		{"11 cleared bit", seq(A, 4), []uint32{A + 2}, -1,
			"slot 0 start-run 7200|slot 1 extend-run 7201|error 2 sit-bit 7202|call 2 after-error 7200+2|sit 2 7200+2",
			"slot 0 invalidate 7200|call 0 per-block 7200+1|sit 0 7200+1|slot 1 invalidate 7201|call 1 per-block 7201+1|sit 1 7201+1|error 2 sit-bit 7202"},
		{"12 below main", []uint32{A, A + 1, X, A + 2}, nil, -1,
			"slot 0 start-run 7200|slot 1 extend-run 7201|call 2 discontiguous 7200+2|sit 2 7200+2|error 2 bounds 100",
			"slot 0 invalidate 7200|call 0 per-block 7200+1|sit 0 7200+1|slot 1 invalidate 7201|call 1 per-block 7201+1|sit 1 7201+1|error 2 bounds 100"},
		{"13 partial reservation", []uint32{A, Z, Z, B}, nil, 1,
			"slot 0 start-run 7200|slot 1 skip-new|error 2 null-slot 0|call 2 after-error 7200+1|sit 2 7200+1",
			"slot 0 invalidate 7200|call 0 per-block 7200+1|sit 0 7200+1|slot 1 skip-new|error 2 null-slot 0"},
		{"first slot invalid", []uint32{X, A}, nil, -1,
			"error 0 bounds 100", "error 0 bounds 100"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := newState(tc.slots, int64(len(tc.slots)))
			for _, a := range tc.cleared {
				st.sit.clear(&st.vol, a)
			}
			if tc.space >= 0 {
				st.vol.ValidBlockCount = st.vol.UserBlockCount - uint64(tc.space)
			}
			req := Request{Length: int64(len(tc.slots)) * 4096}
			for _, mode := range Modes {
				want := tc.perBlk
				if mode == Batched {
					want = tc.batched
				}
				var walked []string
				if _, err := Walk(st.input(), req, mode, func(ev *Event) bool {
					if s := pass2Trace(ev); s != "" {
						walked = append(walked, s)
					}
					return true
				}); err != nil {
					t.Fatal(err)
				}
				if got := strings.Join(walked, "|"); got != want {
					t.Errorf("%s Walk:\n got %s\nwant %s", mode, got, want)
				}
				run, _ := NewRun(st.input(), req, mode)
				var stepped []string
				for {
					ev, ok := run.Next()
					if !ok {
						break
					}
					if s := pass2Trace(&ev); s != "" {
						stepped = append(stepped, s)
					}
				}
				if !slices.Equal(stepped, walked) {
					t.Errorf("%s Run.Next:\n got %s\nwant %s", mode, strings.Join(stepped, "|"), want)
				}
				res, err := Simulate(st.input(), req, mode)
				if err != nil {
					t.Fatal(err)
				}
				var calls []string
				for c := range res.Calls.All() {
					calls = append(calls, fmt.Sprintf("%s %d+%d", c.Reason, c.Start, c.Len))
				}
				var wantCalls []string
				for _, line := range strings.Split(want, "|") {
					if f := strings.Fields(line); f[0] == "call" {
						wantCalls = append(wantCalls, f[2]+" "+f[3])
					}
				}
				if !slices.Equal(calls, wantCalls) {
					t.Errorf("%s Simulate calls %v, want %v", mode, calls, wantCalls)
				}
			}
		})
	}
}

// TestPass2PausesAnywhere: pass 2 may pause before any event — after a per-block slot event and
// before its call, between the pieces of a call spanning segments, right after a discontiguous
// flush — and a Run that reaches a step by seeking (pass 2 running without events up to it) is in
// exactly the state of one that stepped there: same last event, same snapshot, same events after.
func TestPass2PausesAnywhere(t *testing.T) {
	cases := map[string][]uint32{
		"three segments":    seq(S-12, 600),
		"flush of pieces":   append(seq(S-3, 6), A, A+1, N, A+2, A),
		"runs and errors":   {A, A + 1, N, A + 2, B, B + 1, Z, A + 9},
		"duplicate pending": {A + 1, A, A + 1, A + 2},
	}
	for name, slots := range cases {
		for _, mode := range Modes {
			st := newState(slots, int64(len(slots)))
			if name == "runs and errors" {
				st.vol.ValidBlockCount = st.vol.UserBlockCount // the NULL slot stays NULL
			}
			req := Request{Length: int64(len(slots)) * 4096}
			ref, _ := NewRun(st.input(), req, mode)
			var events []Event
			var snaps []Snapshot
			for {
				snaps = append(snaps, ref.Snapshot())
				ev, ok := ref.Next()
				if !ok {
					break
				}
				events = append(events, ev)
			}
			for k := range events {
				run, _ := NewRun(st.input(), req, mode)
				if err := run.SeekTo(int64(k)); err != nil {
					t.Fatal(err)
				}
				if k > 0 && run.Last() != events[k-1] {
					t.Fatalf("%s %s: SeekTo(%d) last %+v, want %+v", name, mode, k, run.Last(), events[k-1])
				}
				if got := run.Snapshot(); !reflect.DeepEqual(got, snaps[k]) {
					t.Fatalf("%s %s: snapshot after SeekTo(%d) differs from stepping:\n%+v\n%+v", name, mode, k, got, snaps[k])
				}
				for j := k; j < len(events); j++ {
					if ev, ok := run.Next(); !ok || ev != events[j] {
						t.Fatalf("%s %s: from step %d, event %d = %+v, want %+v", name, mode, k, j+1, ev, events[j])
					}
				}
			}
		}
	}
}

package core

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// eventFieldUse is the table of Event's doc comment: the fields each kind (and, for errors, each
// cause) may set besides Step, Kind, Slot and Chunk. Action is listed where it is used.
var eventFieldUse = map[EventKind]string{
	EvStart:         "Action Before After",
	EvInlineConvert: "Addr Before After",
	EvFillZero:      "Action Addr Len State Before After Count",
	EvChunkEnter:    "Count Node",
	EvNodeAlloc:     "Node Before After",
	EvReserve:       "Count Len Before After",
	EvSlot:          "Action State Addr Len",
	EvInvalidate:    "Action Addr Len Count State",
	EvSITUpdate:     "Segno Addr Len Before After SegBefore SegAfter Count Blk",
	EvChunkLeave:    "Action Count Len Before After Errno",
	EvSize:          "Action Before After",
	EvDone:          "Action Errno",
	EvNodeFree:      "Node Addr Before After",
}

var errorFieldUse = map[Action]string{
	ActBadArgs:     "",
	ActReserve:     "Count",
	ActNodeAlloc:   "Node",
	ActNullSlot:    "State",
	ActBounds:      "Addr State",
	ActSITBit:      "Addr State",
	ActFillReserve: "Addr Len State Count",
}

// setFields names the fields of ev that are not zero, besides Step, Kind, Slot and Chunk.
func setFields(ev Event) []string {
	var out []string
	v := reflect.ValueOf(ev)
	for i := range v.NumField() {
		switch name := v.Type().Field(i).Name; name {
		case "Step", "Kind", "Slot", "Chunk":
		default:
			if !v.Field(i).IsZero() {
				out = append(out, name)
			}
		}
	}
	return out
}

// checkEventFields fails when ev sets a field its kind does not document, and records what it saw.
func checkEventFields(t *testing.T, what string, ev Event, seen map[string]bool) {
	t.Helper()
	allowed, ok := eventFieldUse[ev.Kind]
	key := ev.Kind.String()
	if ev.Kind == EvError {
		allowed, ok = errorFieldUse[ev.Action]
		allowed += " Action Errno"
		key += "/" + ev.Action.String()
	}
	if !ok {
		t.Fatalf("%s: undocumented event %s: %+v", what, key, ev)
	}
	seen[key] = true
	if ev.Kind == EvFillZero && ev.Action == ActPartialCluster {
		seen[key+"/partial-cluster"] = true
		if ev.Before >= ev.After || ev.Count < ev.Before || ev.Count >= ev.After {
			t.Fatalf("%s: partial-cluster event's page outside its cluster: %+v", what, ev)
		}
	}
	for _, f := range setFields(ev) {
		if !slices.Contains(strings.Fields(allowed), f) {
			t.Fatalf("%s: a %s event sets %s, which its kind does not document: %+v", what, key, f, ev)
		}
	}
	switch {
	case ev.Kind == EvSlot && ev.State == StateAddr && ev.Addr == 0:
		t.Fatalf("%s: slot event without its block: %+v", what, ev)
	case ev.Kind == EvSlot && (ev.Action == ActStartRun || ev.Action == ActExtendRun || ev.Action == ActClearStartRun || ev.Action == ActClearExtendRun) != (ev.Len > 0):
		t.Fatalf("%s: a slot event's Len is the batched run's length, and only that: %+v", what, ev)
	case ev.Kind == EvInvalidate && (ev.Len == 0 || ev.Count == 0):
		t.Fatalf("%s: call without length or number: %+v", what, ev)
	case ev.Kind == EvSITUpdate && (ev.Len == 0 || uint64(ev.Len) < ev.Count):
		t.Fatalf("%s: SIT piece of %d blocks with %d already clear: %+v", what, ev.Len, ev.Count, ev)
	}
}

// TestEventFields: every event of every kind — over random states, the worked examples of docs/kernel-semantics.md §11, the
// argument checks, inline conversions and partial-page failures, in both modes, through Walk and
// Run.Next — sets only the fields its kind documents at [Event], each in its documented role.
func TestEventFields(t *testing.T) {
	type run struct {
		name string
		in   Input
		req  Request
	}
	var runs []run
	r := rand.New(rand.NewPCG(21, 22))
	for i := range sweep(300) {
		st, req := randomState(r)
		if i%10 == 0 {
			// Past the file's nodes, so some are missing; sometimes no node may be allocated.
			req.Offset, req.Length = int64(st.file.n+r.Uint64N(3000))*4096+int64(r.IntN(4096)), int64(1+r.IntN(3000*4096))
			if i%20 == 0 {
				st.vol.MaxNodeCount = st.vol.ValidNodeCount
			}
		}
		runs = append(runs, run{"random", st.input(), req})
	}
	st := newState(seq(A, 4), 4)
	runs = append(runs, run{"bad args", st.input(), Request{Offset: -1, Length: 4096}})
	for _, inline := range []uint8{InlineData, InlineData | InlineDataExist} {
		st := newState(nil, 0)
		st.ino = Inode{Ino: 44, Type: "file", Size: 12, Blocks: 1, AddrsPerInode: 873, Inline: 0x01 | inline}
		st.sit.set(&st.vol, st.vol.MainBlkaddr+512+10)
		runs = append(runs, run{"inline", st.input(), Request{Length: 4096}})
		st.vol.ValidBlockCount = st.vol.UserBlockCount
		runs = append(runs, run{"inline, no space", st.input(), Request{Length: 4096}})
	}
	full := newState([]uint32{A, Z, A + 2, A + 3, Z}, 2)
	full.vol.ValidBlockCount = full.vol.UserBlockCount
	runs = append(runs, run{"fill head, no space", full.input(), Request{Offset: 4096 + 10, Length: 2 * 4096}},
		run{"fill tail, no space", full.input(), Request{Offset: 2 * 4096, Length: 2*4096 + 10}})
	for _, a := range []uint32{A + 1, X, A} { // SIT bit, bounds, duplicate
		st := newState([]uint32{A, A + 1, a, A + 2, Z, N}, 6)
		st.sit.clear(&st.vol, A+1)
		runs = append(runs, run{"corrupt", st.input(), Request{Length: 6 * 4096}})
	}

	// Punch and truncate over small files with nodes three levels deep (trunc_test.go).
	tr := rand.New(rand.NewPCG(21, 23))
	for range sweep(120) {
		st := truncTestState(tr, 1+tr.IntN(60))
		runs = append(runs, run{"punch/truncate", st.input(), randomTruncRequest(tr, st)})
	}
	// Truncates of compressed files (compress_test.go): f2fs_truncate_partial_cluster's event.
	for range sweep(40) {
		f := randomCompressedFile(tr, false)
		runs = append(runs, run{"compressed truncate", f.state().input(), Request{Op: OpTruncate, Offset: int64(tr.IntN(len(f.slots)*4096 + 1))}})
	}
	seen := map[string]bool{}
	for i, rn := range runs {
		for _, mode := range Modes {
			what := rn.name + " " + mode.String()
			if _, err := Walk(rn.in, rn.req, mode, func(ev *Event) bool {
				checkEventFields(t, what+" (Walk)", *ev, seen)
				return true
			}); err != nil {
				t.Fatal(err)
			}
			if i%3 != 0 {
				continue
			}
			run, _ := NewRun(rn.in, rn.req, mode)
			for {
				ev, ok := run.Next()
				if !ok {
					break
				}
				checkEventFields(t, what+" (Run)", ev, seen)
			}
		}
	}
	// Every documented kind and cause was met, so the table is checked, not assumed.
	for k := range eventFieldUse {
		if !seen[k.String()] {
			t.Errorf("no %s event met", k)
		}
	}
	for a := range errorFieldUse {
		if !seen["error/"+a.String()] {
			t.Errorf("no error/%s event met", a)
		}
	}
	if !seen["fill-zero/partial-cluster"] {
		t.Error("no f2fs_truncate_partial_cluster event met")
	}
}

package sandbox

import (
	"errors"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/core"
)

type call = [2]uint32

func callsOf(r *core.Result) []call {
	out := []call{}
	for c := range r.Calls.All() {
		out = append(out, call{c.Start, c.Len})
	}
	return out
}

func ones(addrs ...uint32) []call {
	out := []call{}
	for _, a := range addrs {
		out = append(out, call{a, 1})
	}
	return out
}

func seqOnes(a uint32, n int) []call {
	out := make([]call, n)
	for i := range out {
		out[i] = call{a + uint32(i), 1}
	}
	return out
}

const (
	N = core.NewAddr
	Z = core.NullAddr
)

// listSlotsAfter reads the list's slots back from the result's slot map, in list order.
func listSlotsAfter(t *testing.T, l *List, r *core.Result) []uint32 {
	t.Helper()
	at := map[uint64]uint32{}
	for _, e := range r.After.Extents {
		for k := uint64(0); k < e.Count && k < 1<<20; k++ {
			switch e.State {
			case "addr":
				at[e.Index+k] = e.Addr + uint32(k)
			case "new":
				at[e.Index+k] = N
			}
		}
	}
	out := make([]uint32, l.Len())
	for k := range out {
		idx, ok := fileIndex(l, uint64(k))
		if !ok {
			t.Fatalf("list slot %d has no file block", k)
		}
		out[k] = at[idx]
	}
	return out
}

func mustParse(t testing.TB, s string) *List {
	t.Helper()
	l, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return l
}

func simulate(t testing.TB, in core.Input, req core.Request, m core.Mode) *core.Result {
	t.Helper()
	r, err := core.Simulate(in, req, m)
	if err != nil {
		t.Fatalf("%s: %v", m, err)
	}
	return r
}

// The worked examples of docs/kernel-semantics.md §11 written in the slot language. A = 7200
// (segment 6, blkoff 32), B = 9000, S = 7680 (segment 7), X = 100 (below the main area).
func TestSpecExamples(t *testing.T) {
	const A, B, S = 7200, 9000, 7680
	tests := []struct {
		row      int
		slots    string
		free     int64 // >= 0: inputFree(free)
		perBlock []call
		batched  []call
		errno    string
		action   core.Action // of the error event, if any
		after    []uint32    // the list's slots after (both modes)
		ext      uint64      // slots processed in the last chunk (extent cache drop); 0: no chunk-leave count checked
		pieces   [2]uint64   // SIT pieces per-block, batched (0: not checked)
	}{
		{row: 1, slots: "7200-7202", free: -1, perBlock: ones(A, A+1, A+2), batched: []call{{A, 3}}, after: []uint32{N, N, N}, ext: 3},
		{row: 2, slots: "7200 7201 NEW 7202", free: -1, perBlock: ones(A, A+1, A+2), batched: []call{{A, 3}}, after: []uint32{N, N, N, N}, ext: 4},
		{row: 3, slots: "7200 7202", free: -1, perBlock: ones(A, A+2), batched: ones(A, A+2), after: []uint32{N, N}, ext: 2},
		{row: 4, slots: "7201 7200", free: -1, perBlock: ones(A+1, A), batched: ones(A+1, A), after: []uint32{N, N}, ext: 2},
		{row: 5, slots: "7200 NEW NEW 7201 9000 9001", free: -1, perBlock: ones(A, A+1, B, B+1), batched: []call{{A, 2}, {B, 2}}, after: []uint32{N, N, N, N, N, N}, ext: 6},
		{row: 6, slots: "7200 7201 7200", free: -1, perBlock: ones(A, A+1), batched: []call{{A, 2}}, errno: "EFSCORRUPTED", action: core.ActSITBit, after: []uint32{N, N, A}, ext: 2},
		{row: 7, slots: "7200 7201 7201", free: -1, perBlock: ones(A, A+1), batched: []call{{A, 2}}, errno: "EFSCORRUPTED", action: core.ActSITBit, after: []uint32{N, N, A + 1}, ext: 2},
		{row: 8, slots: "7201 7200 7201", free: -1, perBlock: ones(A+1, A), batched: ones(A+1, A), errno: "EFSCORRUPTED", action: core.ActSITBit, after: []uint32{N, N, A + 1}, ext: 2},
		{row: 9, slots: "7678-7681", free: -1, perBlock: ones(S-2, S-1, S, S+1), batched: []call{{S - 2, 4}}, after: []uint32{N, N, N, N}, ext: 4, pieces: [2]uint64{4, 2}},
		{row: 10, slots: "7668-8267", free: -1, perBlock: seqOnes(S-12, 600), batched: []call{{S - 12, 600}}, after: slices.Repeat([]uint32{N}, 600), ext: 600, pieces: [2]uint64{600, 3}},
		// Row 11 needs a listed address whose SIT bit is already clear. Every listed address is
		// valid in the sandbox, so a first chunk invalidates A+2 and the second chunk is row 11.
		{row: 11, slots: "7202 | 7200-7203", free: -1, perBlock: ones(A+2, A, A+1), batched: []call{{A + 2, 1}, {A, 2}}, errno: "EFSCORRUPTED", action: core.ActSITBit, after: []uint32{N, N, N, A + 2, A + 3}, ext: 2},
		{row: 12, slots: "7200 7201 100 7202", free: -1, perBlock: ones(A, A+1), batched: []call{{A, 2}}, errno: "EFSCORRUPTED", action: core.ActBounds, after: []uint32{N, N, 100, A + 2}, ext: 2},
		{row: 13, slots: "7200 NULL NULL 9000", free: 1, perBlock: ones(A), batched: ones(A), errno: "ENOSPC", action: core.ActNullSlot, after: []uint32{N, N, Z, B}, ext: 2},
		{row: 14, slots: "7200 NULL", free: 0, perBlock: []call{}, batched: []call{}, errno: "ENOSPC", action: core.ActReserve, after: []uint32{A, Z}},
		{row: 15, slots: "NULL NULL NEW", free: -1, perBlock: []call{}, batched: []call{}, after: []uint32{N, N, N}, ext: 3},
		{row: 16, slots: "NEW NEW", free: -1, perBlock: []call{}, batched: []call{}, after: []uint32{N, N}, ext: 2},
	}
	for _, tc := range tests {
		l := mustParse(t, tc.slots)
		in := l.Input()
		if tc.free >= 0 {
			in = inputFree(l, uint64(tc.free))
		}
		for _, m := range core.Modes {
			want := tc.perBlock
			if m == core.Batched {
				want = tc.batched
			}
			var errEv, leave core.Event
			res, err := core.Walk(in, l.Request(), m, func(e *core.Event) bool {
				switch e.Kind {
				case core.EvError:
					errEv = *e
				case core.EvChunkLeave:
					leave = *e
				}
				return true
			})
			if err != nil {
				t.Fatalf("row %d %s: %v", tc.row, m, err)
			}
			if got := callsOf(res); !slices.Equal(got, want) {
				t.Errorf("row %d %q %s: calls %v, want %v", tc.row, tc.slots, m, got, want)
			}
			if res.Errno != tc.errno {
				t.Errorf("row %d %s: errno %q, want %q", tc.row, m, res.Errno, tc.errno)
			}
			if tc.errno != "" && errEv.Action != tc.action {
				t.Errorf("row %d %s: error action %v, want %v", tc.row, m, errEv.Action, tc.action)
			}
			if got := listSlotsAfter(t, l, res); !slices.Equal(got, tc.after) {
				t.Errorf("row %d %s: slots after %v, want %v", tc.row, m, got, tc.after)
			}
			if tc.ext > 0 && leave.Count != tc.ext {
				t.Errorf("row %d %s: extent drop %d, want %d", tc.row, m, leave.Count, tc.ext)
			}
			if p := tc.pieces[int(m)]; p > 0 && res.Stats.SITPieces != p {
				t.Errorf("row %d %s: %d SIT pieces, want %d", tc.row, m, res.Stats.SITPieces, p)
			}
		}
	}
	// The kernel's log lines name the failing address.
	for slots, msg := range map[string]string{
		"7200 7201 100 7202": "access invalid blkaddr:100",
		"7200 7201 7200":     "Inconsistent error blkaddr:7200, sit bitmap:0",
	} {
		l := mustParse(t, slots)
		for _, m := range core.Modes {
			if r := simulate(t, l.Input(), l.Request(), m); !strings.Contains(r.Message, msg) {
				t.Errorf("%q %s: message %q, want %q", slots, m, r.Message, msg)
			}
		}
	}
}

// Lists that exercise dnode boundaries, NEW/NULL inside runs and the main area's bounds.
func TestRules(t *testing.T) {
	tests := []struct {
		name, slots string
		perBlock    []call // nil: 1 call per listed address, in order
		batched     []call
		errno       string
		chunks      uint64
		reserved    uint64
		newSlots    uint64 // NEW slots visited (listed and padding)
	}{
		{name: "| splits a contiguous run", slots: "7200-7209 | 7210-7219", perBlock: seqOnes(7200, 20),
			batched: []call{{7200, 10}, {7210, 10}}, chunks: 2},
		{name: "| pads a middle group with NEW", slots: "7200-7204 | 7205-7209 | 7210", perBlock: seqOnes(7200, 11),
			batched: []call{{7200, 5}, {7205, 5}, {7210, 1}}, chunks: 3, newSlots: AddrsPerBlock - 5},
		{name: "no | : the inode's 873 slots end the first chunk", slots: "7168-8167", perBlock: seqOnes(7168, 1000),
			batched: []call{{7168, 873}, {7168 + 873, 127}}, chunks: 2},
		{name: "NULL and NEW inside a run", slots: "7200 NULL 7201 NEW 7202 NULL*3 7203", perBlock: seqOnes(7200, 4),
			batched: []call{{7200, 4}}, chunks: 1, reserved: 4, newSlots: 1},
		{name: "a discontiguous address flushes", slots: "7200 7201 9000 7202", perBlock: ones(7200, 7201, 9000, 7202),
			batched: []call{{7200, 2}, {9000, 1}, {7202, 1}}, chunks: 1},
		{name: "repeat across a chunk boundary", slots: "7200 | 7200", perBlock: ones(7200), batched: ones(7200),
			errno: "EFSCORRUPTED", chunks: 2},
		{name: "below the main area first", slots: "100 7200", perBlock: []call{}, batched: []call{}, errno: "EFSCORRUPTED", chunks: 1},
		{name: "last block before the main area", slots: "4096 4095", perBlock: ones(4096), batched: ones(4096), errno: "EFSCORRUPTED", chunks: 1},
		{name: "first block of the main area", slots: "4096-4097", perBlock: ones(4096, 4097), batched: []call{{4096, 2}}, chunks: 1},
		{name: "past the largest main area", slots: "9000 4294967000", perBlock: ones(9000), batched: ones(9000), errno: "EFSCORRUPTED", chunks: 1},
		{name: "highest address of the largest main area", slots: "4294966783", perBlock: ones(4294966783), batched: ones(4294966783), chunks: 1},
		{name: "a long first group before |", slots: "7168-8167 | 9000", perBlock: append(seqOnes(7168, 1000), call{9000, 1}),
			batched: []call{{7168, 1000}, {9000, 1}}, chunks: 2},
		{name: "issue example", slots: "34304-34815 NEW*3 34816 | 6144-6200 NULL 9000",
			perBlock: append(append(seqOnes(34304, 513), seqOnes(6144, 57)...), call{9000, 1}),
			batched:  []call{{34304, 513}, {6144, 57}, {9000, 1}}, chunks: 2, reserved: 1, newSlots: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := mustParse(t, tc.slots)
			for _, m := range core.Modes {
				want := tc.perBlock
				if m == core.Batched {
					want = tc.batched
				}
				r := simulate(t, l.Input(), l.Request(), m)
				if got := callsOf(r); !slices.Equal(got, want) {
					t.Errorf("%s: calls %v, want %v", m, got, want)
				}
				if r.Errno != tc.errno {
					t.Errorf("%s: errno %q, want %q", m, r.Errno, tc.errno)
				}
				if r.Stats.DnodeChunks != tc.chunks {
					t.Errorf("%s: %d chunks, want %d", m, r.Stats.DnodeChunks, tc.chunks)
				}
				if r.Stats.Reserved != tc.reserved {
					t.Errorf("%s: %d reserved, want %d", m, r.Stats.Reserved, tc.reserved)
				}
				if tc.errno == "" && r.Stats.SlotsNew != tc.newSlots {
					t.Errorf("%s: %d NEW slots visited, want %d", m, r.Stats.SlotsNew, tc.newSlots)
				}
				if tc.errno == "" && r.SizeAfter != r.SizeBefore {
					t.Errorf("%s: i_size %d → %d; the range is inside the file", m, r.SizeBefore, r.SizeAfter)
				}
			}
		})
	}
}

// Every listed address's segment ends with no valid block when the run succeeds: the synthetic
// SIT holds the listed blocks and nothing else.
func TestSegmentsBecomePrefree(t *testing.T) {
	l := mustParse(t, "7200-7202 9000 | 7679-7680")
	for _, m := range core.Modes {
		r := simulate(t, l.Input(), l.Request(), m)
		got := map[uint32]core.SegClass{}
		for _, s := range r.Segments {
			got[s.Segno] = s.Class
			if s.ClassBefore == core.SegCurrent {
				t.Errorf("%s: segment %d is a current segment", m, s.Segno)
			}
		}
		// 7200 and 7679 are segment 6, 7680 segment 7, 9000 segment 9.
		for _, no := range []uint32{6, 7, 9} {
			if got[no] != core.SegPrefree {
				t.Errorf("%s: segment %d is %v, want prefree", m, no, got[no])
			}
		}
		if r.Stats.SegmentsPrefree != 3 {
			t.Errorf("%s: %d segments prefree, want 3", m, r.Stats.SegmentsPrefree)
		}
	}
}

func TestLayout(t *testing.T) {
	tests := []struct {
		slots string
		want  []Group
	}{
		{"7200", []Group{{0, 1, 0}}},
		{"7200-8199", []Group{{0, 1000, 0}}},
		{"7200 | 7300", []Group{{872, 1, 0}, {873, 1, 0}}},
		{"7200-8199 | 9000 | 9500", []Group{{891, 1000, 0}, {1891, 1, 1017}, {2909, 1, 0}}},
		{"7200-8072 | 9000", []Group{{0, 873, 0}, {873, 1, 0}}},
	}
	for _, tc := range tests {
		l := mustParse(t, tc.slots)
		if got := l.Layout(); !slices.Equal(got, tc.want) {
			t.Errorf("%q: layout %v, want %v", tc.slots, got, tc.want)
		}
		// Each group after | starts a dnode, and the engine sees one chunk per group here.
		req := l.Request()
		if req.Offset != int64(tc.want[0].Index)*4096 {
			t.Errorf("%q: offset %d", tc.slots, req.Offset)
		}
		for k := uint64(0); k < l.Len(); k++ {
			idx, _ := fileIndex(l, k)
			back, ok := l.ListSlot(idx)
			if !ok || back != k {
				t.Fatalf("%q: ListSlot(FileIndex(%d)) = %d, %v", tc.slots, k, back, ok)
			}
		}
	}
}

func TestInputCounters(t *testing.T) {
	l := mustParse(t, "7200-7203 NEW*2 NULL 7200 100 | 9000")
	in := l.Input()
	// 4 + 1 (repeat) + 1 (below main) + 1 (9000) addresses, 2 NEW, 1 NULL; the first group ends at
	// block 873: one direct node after the inode.
	if in.Inode.Blocks != 2+7+2 {
		t.Errorf("i_blocks %d, want 11 (2 nodes, 7 addresses, 2 NEW)", in.Inode.Blocks)
	}
	// Distinct addresses in the main area: 7200-7203 and 9000.
	if in.Volume.ValidBlockCount != 5+2+2 {
		t.Errorf("valid_block_count %d, want 9", in.Volume.ValidBlockCount)
	}
	if n, _, _ := in.SIT.SegmentValidMap(6); n != 4 {
		t.Errorf("segment 6 valid %d, want 4", n)
	}
	if _, _, err := in.SIT.SegmentValidMap(in.Volume.MainSegments); err == nil {
		t.Error("a segment past the main area has a valid map")
	}
	for _, c := range in.Volume.CurrentSegments {
		if c == 6 || c == 9 {
			t.Errorf("current segment %d holds a listed address", c)
		}
	}
	if in.Volume.UserBlockCount-in.Volume.ValidBlockCount < l.Count(Null) {
		t.Error("no room to reserve the NULL slots")
	}
	if nodeCount(873+2*1018+1) != 1+3+1 || nodeCount(873+(2+1018)*1018+1) != 1+1021+2 ||
		nodeCount(873+(2+2*1018)*1018+1) != 1+2039+2+2 {
		t.Error("nodeCount: wrong node count at an indirect boundary")
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{"7200 7201 7202", "7200-7202"},
		{"7200-7201 7202-7205", "7200-7205"},
		{"new NEW Null NULL*2", "NEW*2 NULL*3"},
		{"7200-7200", "7200"},
		{"  7200\t7202\n|  NEW*1  ", "7200 7202 | NEW"},
		{"7200 | 7201", "7200 | 7201"},
		{"007200", "7200"},
		{"34304-34815 NEW*3 34816 | 6144-6200 NULL 9000", "34304-34815 NEW*3 34816 | 6144-6200 NULL 9000"},
	}
	for _, tc := range tests {
		l := mustParse(t, tc.in)
		if got := l.String(); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
		again := mustParse(t, l.String())
		if again.String() != l.String() || again.Len() != l.Len() || !slices.Equal(again.Layout(), l.Layout()) {
			t.Errorf("%q does not read back to the same list", tc.in)
		}
	}
	if !mustParse(t, "7200").Permalinkable() || mustParse(t, strings.Repeat("7200 9000 ", 1000)).Permalinkable() {
		t.Error("Permalinkable")
	}
}

func TestSyntaxErrors(t *testing.T) {
	tests := []struct {
		in    string
		pos   int
		index int
		token string
	}{
		{"", 0, 0, ""},
		{"   \n", 0, 0, ""},
		{"7200 abc", 5, 2, "abc"},
		{"7200 0", 5, 2, "0"},
		{"4294967295", 0, 1, "4294967295"},
		{"4294967294", 0, 1, "4294967294"},
		{"4294967296", 0, 1, "4294967296"},
		{"99999999999999999999999", 0, 1, "99999999999999999999999"},
		{"7200 7210-7200", 5, 2, "7210-7200"},
		{"7200-", 0, 1, "7200-"},
		{"-7200", 0, 1, "-7200"},
		{"7200--7300", 0, 1, "7200--7300"},
		{"0-5", 0, 1, "0-5"},
		{"4294967290-4294967295", 0, 1, "4294967290-4294967295"},
		{"NEW*0", 0, 1, "NEW*0"},
		{"NEW*", 0, 1, "NEW*"},
		{"NULL*x", 0, 1, "NULL*x"},
		{"NEW*20000000", 0, 1, "NEW*20000000"},
		{"NEW*99999999999999999999", 0, 1, "NEW*99999999999999999999"},
		{"7200*3", 0, 1, "7200*3"},
		{"FOO*3", 0, 1, "FOO*3"},
		{"*3", 0, 1, "*3"},
		{"| 7200", 0, 1, "|"},
		{"7200 | | 7300", 7, 3, "|"},
		{"7200 |", 5, 2, "|"},
		{"7200|7300", 0, 1, "7200|7300"},
		{"+7200", 0, 1, "+7200"},
		{"7200 ünïcode", 5, 2, "ünïcode"},
		{"1-10000001", 0, 1, "1-10000001"},
		{"1-5000000 NEW*5000000 7", 22, 3, "7"},
		{"7200 " + strings.Repeat("9", 50), 5, 2, strings.Repeat("9", 40) + "…"},
	}
	for _, tc := range tests {
		_, err := Parse(tc.in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q): %v, want a *SyntaxError", tc.in, err)
			continue
		}
		if se.Pos != tc.pos || se.Index != tc.index || se.Token != tc.token {
			t.Errorf("Parse(%q): pos %d index %d token %q, want %d %d %q (%v)", tc.in, se.Pos, se.Index, se.Token, tc.pos, tc.index, tc.token, err)
		}
		if se.Msg == "" || !strings.HasPrefix(err.Error(), "sandbox: ") {
			t.Errorf("Parse(%q): message %q", tc.in, err)
		}
		if tc.index > 0 && !strings.Contains(err.Error(), "token "+strconv.Itoa(tc.index)) {
			t.Errorf("Parse(%q): %q does not name the token's number", tc.in, err)
		}
	}
	// The bounds on the whole input.
	_, err := Parse(strings.Repeat(" ", MaxInput+1))
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "MaxInput") {
		t.Errorf("oversized input: %v", err)
	}
	_, err = Parse(strings.Repeat("NEW ", MaxTokens+1))
	if !errors.As(err, &se) || se.Index != MaxTokens+1 || !strings.Contains(se.Msg, "MaxTokens") {
		t.Errorf("too many tokens: %v", err)
	}
	_, err = Parse(strings.Repeat("NEW | ", MaxBoundaries+1) + "NEW")
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "MaxBoundaries") {
		t.Errorf("too many |: %v", err)
	}
}

// A 10-million-slot list runs in both modes, held as one run, and the result stays small.
func TestTenMillion(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: 10 million slots in both modes")
	}
	l := mustParse(t, "4096-10004095")
	if len(l.runs) != 1 || l.Len() != 10_000_000 {
		t.Fatalf("%d runs, %d slots", len(l.runs), l.Len())
	}
	// Chunks: the inode's 873 slots, then 1018 per direct node.
	chunks := uint64(1 + (10_000_000-873+1017)/1018)
	segs := uint64((10_000_000 + 511) / 512)
	for _, m := range core.Modes {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r := simulate(t, l.Input(), l.Request(), m)
		runtime.GC()
		runtime.ReadMemStats(&after)
		want := uint64(10_000_000)
		if m == core.Batched {
			want = chunks
		}
		if r.Errno != "" || r.Stats.Calls != want || r.Stats.DnodeChunks != chunks ||
			r.Stats.BlocksInvalidated != 10_000_000 || r.Stats.SegmentsPrefree != segs {
			t.Errorf("%s: errno %q, %d calls (want %d), %d chunks (want %d), %d invalidated, %d prefree (want %d)",
				m, r.Errno, r.Stats.Calls, want, r.Stats.DnodeChunks, chunks, r.Stats.BlocksInvalidated, r.Stats.SegmentsPrefree, segs)
		}
		if m == core.Batched {
			// Every call but the last is a whole chunk; the first is the inode's.
			first := true
			for c := range r.Calls.All() {
				if first && (c.Start != 4096 || c.Len != 873) {
					t.Errorf("first batched call (%d, %d), want (4096, 873)", c.Start, c.Len)
				}
				first = false
			}
		}
		// The live result (segments, compressed calls and slot map) is far below the 40 MB a
		// 10-million-slot array would take.
		live := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		t.Logf("%s: %d calls, live heap after the run %+.1f MB, allocated %.1f MB", m, r.Stats.Calls,
			float64(live)/1e6, float64(after.TotalAlloc-before.TotalAlloc)/1e6)
		if live > 32<<20 {
			t.Errorf("%s: the result holds %d MB", m, live>>20)
		}
		runtime.KeepAlive(r)
	}
}

func BenchmarkTenMillion(b *testing.B) {
	l, err := Parse("4096-10004095")
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range core.Modes {
		b.Run(m.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := core.Simulate(l.Input(), l.Request(), m); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e7, "ns/slot")
		})
	}
}

// The generators' lists read back from their canonical form and teach what their lessons say.
func TestGenerators(t *testing.T) {
	batched := map[string]uint64{"contiguous": 2, "runs": 16, "every-other": 32, "holes": 1, "prealloc": 1, "boundary": 2}
	for _, ex := range Examples() {
		l := mustParse(t, ex.Slots)
		if l.String() != ex.Slots {
			t.Errorf("%s: %q is not canonical", ex.Name, ex.Slots)
		}
		r := simulate(t, l.Input(), l.Request(), core.Batched)
		if r.Errno != "" || r.Stats.Calls != batched[ex.Name] {
			t.Errorf("%s: errno %q, %d batched calls, want %d", ex.Name, r.Errno, r.Stats.Calls, batched[ex.Name])
		}
	}
	for name, l := range map[string]*List{
		"contiguous": Contiguous(0, 0), "runs": Runs(4294967290, 5, 5, 1), "every-other": EveryOther(1, 1, -3),
		"holes": Holes(9000, 1<<40, 1<<40, 1<<40), "prealloc": Prealloc(9000, 3, 2, 0), "boundary": AcrossBoundary(4294967293, 2, 2),
		"huge": Contiguous(4096, 1<<40),
	} {
		if l.Len() == 0 || l.Len() > MaxSlots {
			t.Errorf("%s with extreme parameters: %d slots", name, l.Len())
		}
		if _, err := Parse(l.String()); err != nil {
			t.Errorf("%s with extreme parameters: %q: %v", name, cut(l.String()), err)
		}
	}
}

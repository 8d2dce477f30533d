package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestArgumentChecks covers the VFS and f2fs checks and their order.
func TestArgumentChecks(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Input, *Request)
		errno string
	}{
		{"ok", func(*Input, *Request) {}, ""},
		{"zero length", func(_ *Input, r *Request) { r.Length = 0 }, "EINVAL"},
		{"negative offset", func(_ *Input, r *Request) { r.Offset = -1 }, "EINVAL"},
		{"punch hole too", func(_ *Input, r *Request) { r.ExtraFlags = 0x02 }, "EOPNOTSUPP"},
		{"no hide stale", func(_ *Input, r *Request) { r.ExtraFlags = 0x04 }, "EOPNOTSUPP"},
		{"keep size as a flag", func(_ *Input, r *Request) { r.ExtraFlags = 0x01 }, ""},
		{"directory before length", func(in *Input, r *Request) { in.Inode.Type = "dir"; r.Length = 0 }, "EISDIR"},
		{"symlink", func(in *Input, _ *Request) { in.Inode.Type = "symlink" }, "ELOOP"},
		{"fifo or device", func(in *Input, _ *Request) { in.Inode.Type = "other" }, "ENODEV"},
		{"immutable", func(in *Input, _ *Request) { in.Inode.Flags = FlagImmutable }, "EPERM"},
		{"append only", func(in *Input, _ *Request) { in.Inode.Flags = FlagAppend }, "EPERM"},
		{"past s_maxbytes", func(_ *Input, r *Request) { r.Offset = maxBytes - 4096; r.Length = 8192 }, "EFBIG"},
		{"overflow", func(_ *Input, r *Request) { r.Offset = 1 << 62; r.Length = 1 << 62 }, "EFBIG"},
		{"checkpoint error", func(in *Input, _ *Request) { in.Volume.CheckpointError = true }, "EIO"},
		{"compressed", func(in *Input, _ *Request) { in.Inode.Flags = FlagCompressed }, "EOPNOTSUPP"},
		{"pinned", func(in *Input, _ *Request) { in.Inode.Inline = InlinePinFile }, "EOPNOTSUPP"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := newState(seq(A, 4), 4)
			in, req := st.input(), Request{Offset: 0, Length: 4 * 4096}
			tc.edit(&in, &req)
			for _, mode := range Modes {
				r, err := Simulate(in, req, mode)
				if err != nil {
					t.Fatal(err)
				}
				if r.Errno != tc.errno {
					t.Fatalf("%s: errno %q, want %q", mode, r.Errno, tc.errno)
				}
				if tc.errno != "" && (r.Calls.Len() != 0 || r.SizeAfter != in.Inode.Size || r.ValidBlocks != in.Volume.ValidBlockCount) {
					t.Fatalf("%s: a refused call changed state: %+v", mode, r)
				}
			}
		})
	}
}

// TestNodeAllocation zeroes a hole under a missing indirect subtree: the
// indirect and direct nodes are allocated (valid_block_count, i_blocks,
// valid_node_count +1 each) and the NULL slots reserved.
func TestNodeAllocation(t *testing.T) {
	st := newState(seq(A, 4), 4)
	// index 873+2036 = 2909 is the first slot under i_nid[2]/0.
	const first = 873 + 2*1018
	in := st.input()
	req := Request{Offset: first * 4096, Length: 10 * 4096}
	var allocs []string
	r, err := Walk(in, req, Batched, func(ev *Event) bool {
		if ev.Kind == EvNodeAlloc {
			allocs = append(allocs, ev.Node)
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(allocs, []string{"i_nid[2]", "i_nid[2]/0"}) {
		t.Fatalf("allocated %v", allocs)
	}
	if r.ValidNodes != in.Volume.ValidNodeCount+2 || r.ValidBlocks != in.Volume.ValidBlockCount+12 ||
		r.BlocksAfter != in.Inode.Blocks+12 || r.SizeAfter != (first+10)*4096 {
		t.Fatalf("counters: nodes %d vbc %d i_blocks %d size %d", r.ValidNodes, r.ValidBlocks, r.BlocksAfter, r.SizeAfter)
	}
	// A second request in the same subtree allocates only the new direct node.
	next := r.NextInput()
	allocs = nil
	r2, err := Walk(next, Request{Offset: (first + 1018) * 4096, Length: 4096}, PerBlock, func(ev *Event) bool {
		if ev.Kind == EvNodeAlloc {
			allocs = append(allocs, ev.Node)
		}
		return true
	})
	if err != nil || !slices.Equal(allocs, []string{"i_nid[2]/1"}) || r2.Errno != "" {
		t.Fatalf("chained: %v %v %q", err, allocs, r2.Errno)
	}
	ext := r2.After.Extents
	if last := ext[len(ext)-1]; last.State != "new" || last.Index+last.Count != first+1019 {
		t.Fatalf("extents end with %v", last)
	}
}

// TestENOSPCMidway reproduces the 400 MiB ENOSPC shape of docs/kernel-semantics.md §11: chunks
// finish until space runs out; the failing chunk is partly reserved and
// i_size covers only finished chunks.
func TestENOSPCMidway(t *testing.T) {
	st := newState(nil, 0)
	st.ino.Size, st.ino.Blocks = 0, 1
	// Room for the inode chunk, i_nid[0] (node + 1018) and 500 more.
	st.vol.ValidBlockCount = st.vol.UserBlockCount - (873 + 1 + 1018 + 1 + 500)
	for _, mode := range Modes {
		r, err := Simulate(st.input(), Request{Length: 400 << 20}, mode)
		if err != nil {
			t.Fatal(err)
		}
		if r.Errno != "ENOSPC" || r.SizeAfter != (873+1018)*4096 || r.ValidBlocks != st.vol.UserBlockCount {
			t.Fatalf("%s: %q size %d vbc %d", mode, r.Errno, r.SizeAfter, r.ValidBlocks)
		}
		want := []Extent{{Index: 0, Count: 873 + 1018 + 500, State: "new"}}
		if !slices.Equal(r.After.Extents, want) {
			t.Fatalf("%s: extents %v, want %v", mode, r.After.Extents, want)
		}
	}
}

// TestInlineConversion: an inline file with data gets slot 0 written to
// the hot data log's next free block, which the zeroing then invalidates;
// without DATA_EXIST only the flag goes.
func TestInlineConversion(t *testing.T) {
	for _, exist := range []bool{true, false} {
		st := newState(nil, 0)
		st.ino = Inode{Ino: 44, Type: "file", Size: 12, Blocks: 1, AddrsPerInode: 873, Inline: 0x01 | InlineData}
		if exist {
			st.ino.Inline |= InlineDataExist
		}
		st.vol.HotDataSegno, st.vol.HotDataBlkoff = 1, 10
		hot := st.vol.MainBlkaddr + 512 + 10
		st.sit.set(&st.vol, hot) // taken: the write goes to the next block
		for _, mode := range Modes {
			r, err := Simulate(st.input(), Request{Length: 4096}, mode)
			if err != nil {
				t.Fatal(err)
			}
			var calls [][2]uint32
			for c := range r.Calls.All() {
				calls = append(calls, [2]uint32{c.Start, c.Len})
			}
			wantCalls, wantBlocks := [][2]uint32{{hot + 1, 1}}, uint64(2)
			if !exist {
				wantCalls, wantBlocks = nil, 2 // the NULL slot is reserved instead
			}
			if !slices.Equal(calls, wantCalls) || r.BlocksAfter != wantBlocks || r.SizeAfter != 4096 || r.Inline&InlineData != 0 {
				t.Fatalf("exist=%v %s: calls %v blocks %d size %d inline %#x", exist, mode, calls, r.BlocksAfter, r.SizeAfter, r.Inline)
			}
			if !slices.Equal(r.After.Extents, []Extent{{Index: 0, Count: 1, State: "new"}}) {
				t.Fatalf("extents %v", r.After.Extents)
			}
		}
	}
}

// TestPrefreeAndCurrent: emptying a segment makes it prefree, a current
// segment never changes class.
func TestPrefreeAndCurrent(t *testing.T) {
	seg3 := uint32(4096 + 3*512)
	cur := uint32(4096 + 100*512) // segment 100 is a current segment in refVolume
	st := newState(append(seq(seg3, 512), seq(cur, 4)...), 516)
	r, err := Simulate(st.input(), Request{Length: 516 * 4096}, Batched)
	if err != nil {
		t.Fatal(err)
	}
	classes := map[uint32]SegClass{}
	for _, s := range r.Segments {
		classes[s.Segno] = s.Class
	}
	if classes[3] != SegPrefree || classes[100] != SegCurrent || r.Stats.SegmentsPrefree != 1 {
		t.Fatalf("classes %v, prefree %d", classes, r.Stats.SegmentsPrefree)
	}
}

// TestNarration: each event carries its own values (the slot, the block, the counts before and
// after, the segment and its class, the errno) and narrates them in one sentence, in the order the
// kernel does things. The slots are A, A+1, NULL, NEW, X (below the main area), A+2 over a range
// with a partial first page: page 0 goes through fill_zero, the chunk covers slots 1–4, slot 2 is
// reserved, and slot 4 stops the loop with EFSCORRUPTED. The batched mode holds slot 1 in a run
// and flushes it when X, not contiguous, comes; the per-block mode releases it at once. Every
// event is compared whole, by value (its Step is its place in the walk, from 1); the sentence must
// carry the event's values.
func TestNarration(t *testing.T) {
	type want struct {
		ev   Event
		says []string // fragments the sentence must contain
	}
	const seg6 = (A + 1 - 4096) / 512 // block 7,201's segment, in refVolume's main area from 4096
	head := []want{
		{Event{Kind: EvStart, Chunk: -1, Before: 100, After: 6*4096 - 200}, []string{"offset 100, length 24,376"}},
		{Event{Kind: EvFillZero, Chunk: -1, State: StateAddr, Addr: 100, Len: 4096 - 100}, []string{"bytes 100–4,095 of page 0", "no invalidation now"}},
		{Event{Kind: EvChunkEnter, Slot: 1, Count: 4, Node: "inode"}, []string{"resolves inode", "chunk 1 covers slots 1–4"}}, // chunks counted from 1, as the page counts
		{Event{Kind: EvReserve, Slot: 1, Len: 1, Count: 1, Before: 20000, After: 20001}, []string{"1 NULL slot", "valid_block_count 20,000 → 20,001"}},
	}
	sit := func(slot uint64) want {
		return want{Event{Kind: EvSITUpdate, Slot: slot, Addr: A + 1, Len: 1, Segno: seg6, Before: 3, After: 2, SegBefore: SegDirty, SegAfter: SegDirty},
			[]string{"segment 6 loses 1 block (valid 3 → 2)"}}
	}
	release := []want{
		{Event{Kind: EvSlot, Slot: 1, Action: ActInvalidate, State: StateAddr, Addr: A + 1}, []string{"slot 1 holds block 7,201", "SIT bit is set"}},
		{Event{Kind: EvInvalidate, Slot: 1, Action: ActPerBlock, Addr: A + 1, Len: 1, Count: 1}, []string{"f2fs_invalidate_blocks(7,201, 1)", "call 1"}},
		sit(1),
	}
	start := []want{
		{Event{Kind: EvSlot, Slot: 1, Action: ActStartRun, State: StateAddr, Addr: A + 1, Len: 1}, []string{"slot 1 holds block 7,201", "starts a run"}},
	}
	flush := []want{ // at slot 4, whose address is not A+2
		{Event{Kind: EvInvalidate, Slot: 4, Action: ActDiscontiguous, Addr: A + 1, Len: 1, Count: 1}, []string{"f2fs_invalidate_blocks(7,201, 1)", "not contiguous", "call 1"}},
		sit(4),
	}
	skips := []want{
		{Event{Kind: EvSlot, Slot: 2, Action: ActSkipNew, State: StateNew}, []string{"slot 2 is already NEW_ADDR"}},
		{Event{Kind: EvSlot, Slot: 3, Action: ActSkipNew, State: StateNew}, []string{"slot 3 is already NEW_ADDR"}},
	}
	tail := []want{
		{Event{Kind: EvError, Slot: 4, Action: ActBounds, State: StateAddr, Addr: X, Errno: "EFSCORRUPTED"}, []string{"rejects slot 4", `"access invalid blkaddr:100"`, "-EFSCORRUPTED"}},
		{Event{Kind: EvChunkLeave, Slot: 4, Count: 3, Errno: "EFSCORRUPTED"}, []string{"chunk 1 ends with -EFSCORRUPTED after 3 slots"}},
		{Event{Kind: EvDone, Slot: 4, Errno: "EFSCORRUPTED"}, []string{"f2fs_zero_range returns -EFSCORRUPTED"}},
	}
	cat := func(parts ...[]want) []want { return slices.Concat(parts...) }
	refused := []want{
		{Event{Kind: EvStart, Chunk: -1}, []string{"offset 0, length 0"}},
		{Event{Kind: EvError, Chunk: -1, Action: ActBadArgs, Errno: "EINVAL"}, []string{"refused before any change", "vfs_fallocate refuses", "length that is not positive", "-EINVAL", "before f2fs sees the call"}},
		{Event{Kind: EvDone, Chunk: -1, Errno: "EINVAL"}, []string{"f2fs_zero_range returns -EINVAL"}},
	}
	tests := []struct {
		req  Request
		mode Mode
		want []want
	}{
		{Request{Offset: 100, Length: 6*4096 - 200}, PerBlock, cat(head, release, skips, tail)},
		{Request{Offset: 100, Length: 6*4096 - 200}, Batched, cat(head, start, skips, flush, tail)},
		{Request{}, PerBlock, refused},
		{Request{}, Batched, refused},
	}
	for _, tc := range tests {
		st := newState([]uint32{A, A + 1, Z, N, X, A + 2}, 6)
		var got []Event
		if _, err := Walk(st.input(), tc.req, tc.mode, func(ev *Event) bool { got = append(got, *ev); return true }); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tc.want) {
			for _, ev := range got {
				t.Logf("%+v: %s", ev, ev.Narrate())
			}
			t.Fatalf("%s %+v: %d events, want %d", tc.mode, tc.req, len(got), len(tc.want))
		}
		for i, ev := range got {
			w := tc.want[i]
			w.ev.Step = int64(i) + 1
			s := ev.Narrate()
			if ev != w.ev {
				t.Errorf("%s event %d (%q):\n got %+v\nwant %+v", tc.mode, i, s, ev, w.ev)
				continue
			}
			if strings.Contains(s, "%!") || strings.Contains(s, "\n") {
				t.Errorf("%s event %d: malformed narration %q", tc.mode, i, s)
			}
			for _, f := range w.says {
				if !strings.Contains(s, f) {
					t.Errorf("%s event %d (%s): %q does not say %q", tc.mode, i, ev.Kind, s, f)
				}
			}
		}
	}
}

// TestResultJSON pins the Result's JSON shape.
func TestResultJSON(t *testing.T) {
	st := newState([]uint32{A, A + 1, B}, 3)
	r, err := Simulate(st.input(), Request{Length: 3 * 4096}, Batched)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["mode"] != "batched" || m["errno"] != "" {
		t.Fatalf("mode/errno in %s", b)
	}
	if got, _ := json.Marshal(m["calls"]); string(got) != "[[7200,2],[9000,1]]" {
		t.Fatalf("calls = %s", got)
	}
	stats := m["stats"].(map[string]any)
	for _, k := range []string{"calls", "sitLockAcquisitions", "blocksInvalidated", "dnodeChunks", "runs", "runLengths"} {
		if _, ok := stats[k]; !ok {
			t.Errorf("stats lacks %q", k)
		}
	}
	if got, _ := json.Marshal(m["after"]); string(got) != `{"extents":[{"count":3,"index":0,"state":"new"}]}` {
		t.Fatalf("after = %s", got)
	}
}

// TestSnapshot checks a mid-run snapshot: pending run, slot map and
// counters reflect exactly the events so far.
func TestSnapshot(t *testing.T) {
	st := newState(seq(A, 10), 10)
	run, err := NewRun(st.input(), Request{Length: 10 * 4096}, Batched)
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, ok := run.Next()
		if !ok {
			t.Fatal("no extend-run event")
		}
		if ev.Kind == EvSlot && ev.Action == ActExtendRun && ev.Slot == 4 {
			break
		}
	}
	sn := run.Snapshot()
	if sn.Pending != (Pending{Start: A, Len: 5}) || !sn.InChunk || sn.Stats.Calls != 0 {
		t.Fatalf("pending %+v in chunk %v calls %d", sn.Pending, sn.InChunk, sn.Stats.Calls)
	}
	want := []Extent{{Index: 0, Count: 5, State: "new"}, {Index: 5, Count: 5, State: "addr", Addr: A + 5}}
	if got, err := run.Slots(0, 10); err != nil || !slices.Equal(got, want) {
		t.Fatalf("slots %v, %v; want %v", got, err, want)
	}
	if sn.Pending.Slot != 0 {
		t.Errorf("the pending run started at slot %d, want 0", sn.Pending.Slot)
	}
	if _, err := json.Marshal(sn); err != nil {
		t.Fatal(err)
	}
	if sn.Narration == "" || sn.Event.Slot != 4 {
		t.Fatalf("narration %q event %+v", sn.Narration, sn.Event)
	}
}

// TestBadInput: an input the engine cannot model is an [*InputError] that names the field the check
// refused and its value, never a panic or a result, for each of the checks (so a check that stops
// firing, or one that fires for another field, fails here); it is an [ErrInput] too. A mode the
// engine does not know is an [ErrBadMode].
func TestBadInput(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(*Input)
		field string
		val   int64
	}{
		{"nil slot source", func(in *Input) { in.Slots = nil }, "Slots", 0},
		{"nil SIT source", func(in *Input) { in.SIT = nil }, "SIT", 0},
		{"8 KiB blocks", func(in *Input) { in.Volume.BlockSize = 8192 }, "BlockSize", 8192},
		{"256 blocks per segment", func(in *Input) { in.Volume.BlocksPerSeg = 256 }, "BlocksPerSeg", 256},
		{"main area before segment 0", func(in *Input) { in.Volume.MainBlkaddr = in.Volume.Segment0Blkaddr - 512 }, "MainBlkaddr", 0},
		{"main area past its end", func(in *Input) { in.Volume.MaxBlkaddr = in.Volume.MainBlkaddr - 1 }, "MaxBlkaddr", 4095},
		{"main area off a segment boundary", func(in *Input) { in.Volume.MainBlkaddr += 7 }, "MainBlkaddr", 4103},
		{"no slots in the inode", func(in *Input) { in.Inode.AddrsPerInode = 0 }, "AddrsPerInode", 0},
		{"924 slots in the inode", func(in *Input) { in.Inode.AddrsPerInode = 924 }, "AddrsPerInode", 924},
		{"1019 slots in a direct node", func(in *Input) { in.Inode.AddrsPerBlock = 1019 }, "AddrsPerBlock", 1019},
		{"negative slots in a direct node", func(in *Input) { in.Inode.AddrsPerBlock = -1 }, "AddrsPerBlock", -1},
	}
	for _, tc := range tests {
		for _, mode := range Modes {
			in := newState(seq(A, 2), 2).input()
			if in.Volume.Segment0Blkaddr != 512 || in.Volume.MainBlkaddr != 4096 {
				t.Fatalf("the reference volume moved (segment 0 at %d, main at %d): the values below assume 512 and 4096", in.Volume.Segment0Blkaddr, in.Volume.MainBlkaddr)
			}
			tc.spoil(&in)
			r, err := Simulate(in, Request{Length: 4096}, mode)
			var ie *InputError
			if !errors.As(err, &ie) || r != nil {
				t.Errorf("%s, %s: result %v, error %v; want no result and an *InputError", tc.name, mode, r, err)
				continue
			}
			if ie.Field != tc.field || ie.Val != tc.val || !errors.Is(err, ErrInput) {
				t.Errorf("%s, %s: %v (field %s, value %d); want field %s, value %d, an ErrInput", tc.name, mode, err, ie.Field, ie.Val, tc.field, tc.val)
			}
		}
	}
	in := newState(seq(A, 2), 2).input()
	if r, err := Simulate(in, Request{Length: 4096}, Batched); err != nil || r == nil {
		t.Fatalf("the unspoilt input: %v, %v; want a result", r, err)
	}
	for _, s := range []string{"sideways", "", "Batched", "per block"} {
		if m, err := ParseMode(s); !errors.Is(err, ErrBadMode) || m != 0 {
			t.Errorf("ParseMode(%q) = %v, %v; want ErrBadMode", s, m, err)
		}
	}
	if _, err := Simulate(in, Request{Length: 4096}, Mode(7)); !errors.Is(err, ErrBadMode) {
		t.Errorf("Simulate in Mode(7): %v, want ErrBadMode", err)
	}
}

// TestInlineConversionCold: a cold file's converted page goes to the cold
// data log (file_is_cold is checked before FI_HOT_DATA).
func TestInlineConversionCold(t *testing.T) {
	st := newState(nil, 0)
	st.ino = Inode{Ino: 44, Type: "file", Size: 12, Blocks: 1, AddrsPerInode: 873,
		Inline: InlineData | InlineDataExist, Advise: AdviseCold}
	st.vol.HotDataSegno, st.vol.HotDataBlkoff = 1, 10
	st.vol.ColdDataSegno, st.vol.ColdDataBlkoff = 2, 7
	r, err := Simulate(st.input(), Request{Length: 4096}, PerBlock)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Calls.Last(1); len(got) != 1 || got[0].Start != 4096+2*512+7 {
		t.Fatalf("calls %v, want the cold log's block %d", got, 4096+2*512+7)
	}
	if next := r.NextInput(); next.Volume.ColdDataBlkoff != 8 || next.Volume.HotDataBlkoff != 10 {
		t.Fatalf("log offsets after: cold %d hot %d", next.Volume.ColdDataBlkoff, next.Volume.HotDataBlkoff)
	}
}

// TestFillZeroEdges: a partial tail page under a missing direct node
// allocates the node and reserves the page; ENOSPC in the head page
// returns at once (no size change) while in the tail page the finished
// chunks still grow i_size.
func TestFillZeroEdges(t *testing.T) {
	st := newState(seq(A, 873), 873)
	in := st.input()
	r, err := Simulate(in, Request{Length: 873*4096 + 100}, Batched)
	if err != nil {
		t.Fatal(err)
	}
	if r.Errno != "" || r.ValidNodes != in.Volume.ValidNodeCount+1 || r.ValidBlocks != in.Volume.ValidBlockCount+2 ||
		r.BlocksAfter != in.Inode.Blocks+2 || r.SizeAfter != 873*4096+100 || len(r.FillZero) != 1 || r.FillZero[0].Index != 873 {
		t.Fatalf("tail fill: %q nodes %d vbc %d i_blocks %d size %d fills %v", r.Errno, r.ValidNodes, r.ValidBlocks, r.BlocksAfter, r.SizeAfter, r.FillZero)
	}

	full := newState([]uint32{A, Z, A + 2, A + 3, Z}, 2)
	full.vol.ValidBlockCount = full.vol.UserBlockCount
	for _, tc := range []struct {
		name string
		req  Request
		size int64
	}{
		{"head", Request{Offset: 4096 + 10, Length: 2 * 4096}, 2 * 4096},
		{"tail", Request{Offset: 2 * 4096, Length: 2*4096 + 10}, 4 * 4096},
	} {
		r, err := Simulate(full.input(), tc.req, PerBlock)
		if err != nil {
			t.Fatal(err)
		}
		if r.Errno != "ENOSPC" || r.SizeAfter != tc.size {
			t.Errorf("%s: %q size %d, want ENOSPC %d", tc.name, r.Errno, r.SizeAfter, tc.size)
		}
	}
}

// badSource answers DnodeSlots wrongly in the way its mode says.
type badSource struct{ mode int }

var errDisk = errors.New("disk on fire")

func (b badSource) DnodeSlots(index uint64) (uint64, []uint32, int, error) {
	p := locate(index, dnodeGeom{api: 873, apb: addrsPerBlock})
	switch b.mode {
	case 0:
		return 0, nil, 0, errDisk
	case 1:
		return p.start, make([]uint32, p.cap-1), 0, nil
	case 2:
		return p.start + 1, make([]uint32, p.cap), 0, nil
	}
	return p.start, make([]uint32, p.cap), p.depth + 1, nil
}

// TestHostileSource: a source that fails or contradicts the geometry
// gives a *SourceError, never a panic.
func TestHostileSource(t *testing.T) {
	for mode := range 4 {
		st := newState(seq(A, 4), 4)
		in := st.input()
		in.Slots = badSource{mode}
		_, err := Simulate(in, Request{Length: 2000 * 4096}, Batched)
		var se *SourceError
		if !errors.As(err, &se) || se.Op != "DnodeSlots" {
			t.Fatalf("mode %d: err = %v, want a *SourceError", mode, err)
		}
		if mode == 0 && !errors.Is(err, errDisk) {
			t.Fatalf("mode 0: %v does not wrap the source's error", err)
		}
		run, _ := NewRun(in, Request{Length: 2000 * 4096}, PerBlock)
		for {
			if _, ok := run.Next(); !ok {
				break
			}
		}
		if !errors.As(run.Err(), &se) {
			t.Fatalf("mode %d: Run.Err() = %v", mode, run.Err())
		}
	}
}

// TestCompressedFile checks every cluster size f2fs allows (4 to 256 blocks): a compressed inode's
// slots per inode and per direct node are rounded down to the cluster size (as the kernel's
// ADDRS_PER_PAGE does), the call is refused with EOPNOTSUPP before any change, and the slot map after
// is the file's, read with those capacities, for a file spanning the inode and three direct nodes.
func TestCompressedFile(t *testing.T) {
	for logCluster := 2; logCluster <= 8; logCluster++ {
		cluster := 1 << logCluster
		api, apb := 873-873%cluster, 1018-1018%cluster
		t.Run(fmt.Sprint(cluster), func(t *testing.T) {
			f := &memFile{api: api, apb: apb, slots: map[uint64]uint32{}, nodes: map[nodeKey]bool{}}
			n := uint64(api + 2*apb + 5) // the inode, i_nid[0], i_nid[1] and one node under i_nid[2]
			var want extentBuilder
			for i := uint64(0); i < n; i++ {
				a := uint32(8000) + uint32(i)
				if i%uint64(cluster) == 0 {
					a = CompressAddr // each cluster starts with the marker
				}
				f.set(i, a)
				want.add(i, a)
			}
			st := newState(nil, 0)
			st.file = f
			st.ino.Flags = FlagCompressed
			st.ino.AddrsPerInode, st.ino.AddrsPerBlock = api, apb
			st.ino.Size, st.ino.SlotsEnd = int64(n)*4096, n
			for _, m := range Modes {
				res, err := Simulate(st.input(), Request{Offset: 0, Length: int64(n) * 4096}, m)
				if err != nil {
					t.Fatalf("%v: %v", m, err)
				}
				if res.Errno != "EOPNOTSUPP" || res.Calls.Len() != 0 || res.Stats.Reserved != 0 {
					t.Errorf("%v: errno %q, %d calls, %d reserved; want EOPNOTSUPP and no change", m, res.Errno, res.Calls.Len(), res.Stats.Reserved)
				}
				if !reflect.DeepEqual(res.After.Extents, want.ext) {
					t.Errorf("%v: after = %v\nwant %v", m, res.After.Extents, want.ext)
				}
			}
		})
	}
}

package player

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/core"
)

// doublyMapped is a file whose slot 20 maps block 5,005 again, while slots 0–19 (5,000–5,019) are
// still the batched mode's pending run: the per-block loop finds its SIT bit clear and skips it,
// the batched loop validates it before the flush and invalidates it twice.
func doublyMapped() []uint32 {
	slots := make([]uint32, 60)
	for i := range slots {
		slots[i] = 5000 + uint32(i)
	}
	slots[20] = 5005
	return slots
}

// truncSpecs are punch-hole and truncate runs where the two batchings differ: a hole in the range
// (NULL ends a run), preallocated slots (NEW_ADDR calls), a punch after a zero of the same range,
// a truncate across dnodes (node blocks freed), unaligned ranges and sizes, and a block mapped twice.
func truncSpecs(t *testing.T) map[string]Spec {
	t.Helper()
	both := []core.Mode{core.PerBlock, core.Batched}
	punch := func(path string, off, length int64) Spec {
		s := demoSpec(t, path, both...)
		s.Request = core.Request{Op: core.OpPunch, Offset: off, Length: length}
		return s
	}
	trunc := func(path string, size int64) Spec {
		s := demoSpec(t, path, both...)
		s.Request = core.Request{Op: core.OpTruncate, Offset: size}
		return s
	}
	// The demo's /cases keeps its dentries inline (source.DentryInline).
	unlink := func(path string) Spec {
		s := demoSpec(t, path, both...)
		s.Request = core.Request{Op: core.OpUnlink, DentryInline: true}
		return s
	}
	specs := map[string]Spec{
		"punch contiguous unaligned": punch("/cases/contiguous.bin", 100<<12+123, 3<<20),
		"punch holes":                punch("/cases/holes.bin", 0, 8<<20),
		"punch prealloc":             punch("/cases/prealloc.bin", 0, 8<<20),
		"truncate indirect 1MiB":     trunc("/cases/indirect.bin", 1<<20),
		"truncate holes unaligned":   trunc("/cases/holes.bin", 1<<20+100),
		"truncate fragmented to 0":   trunc("/cases/fragmented.bin", 0),
		"unlink indirect":            unlink("/cases/indirect.bin"),
		"unlink prealloc":            unlink("/cases/prealloc.bin"),
		"unlink inline":              unlink("/cases/tiny.txt"),
	}
	// A punch after a zero of the same range: every slot NEW_ADDR, each its own call.
	seq := demoSpec(t, "/cases/contiguous.bin", both...)
	res, err := core.Simulate(seq.Input, core.Request{Offset: 1 << 20, Length: 1 << 20}, core.PerBlock)
	if err != nil {
		t.Fatal(err)
	}
	seq.Input, seq.Request = res.NextInput(), core.Request{Op: core.OpPunch, Offset: 1 << 20, Length: 1 << 20}
	specs["zero then punch"] = seq
	specs["punch doubly mapped"] = fakeSpec(doublyMapped(), both, core.Request{Op: core.OpPunch, Offset: 0, Length: 60 << 12})
	return specs
}

// TestTruncStops: the tour of each punch and truncate has the stops where the batchings differ,
// each at a step where the page shows what it says, and each question's answer is what the
// engines do between its ask and its reveal.
func TestTruncStops(t *testing.T) {
	want := map[string][]string{
		"punch holes":            {StopNullEndsRun},
		"zero then punch":        {StopNewOwnCall},
		"truncate indirect 1MiB": {StopNodeFree},
		"punch doubly mapped":    {StopValidatedFirst, StopFreedTwice},
	}
	questions := map[string]int{}
	for name, spec := range truncSpecs(t) {
		t.Run(name, func(t *testing.T) {
			o := build(t, spec)
			p, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]Stop{}
			for _, s := range o.Stops {
				kinds[s.Kind] = s
			}
			for _, k := range want[name] {
				if _, ok := kinds[k]; !ok {
					t.Errorf("no %s stop: %v", k, slices.Sorted(maps.Keys(kinds)))
				}
			}
			// The range the page draws holds every slot the run changes.
			if err := p.Goto(o.Total); err != nil {
				t.Fatal(err)
			}
			// (Changed lists whole dnodes as stored: a slot outside the range must hold its value
			// before the run.)
			for _, e := range p.Changed(0, 1<<40) {
				for k := e.Index; k < e.Index+e.Count; k++ {
					if k >= o.Range.Start && k < o.Range.End {
						continue
					}
					before, _, err := core.ReadSlots(spec.Input, k, k+1, 1, 1)
					if err != nil {
						t.Fatal(err)
					}
					if now := extentValue(e, k); len(before) != 1 || extentValue(before[0], k) != now {
						t.Fatalf("range %+v: slot %d outside it changes %v → %#x", o.Range, k, before, now)
					}
				}
			}
			at := func(step int64) []ModeState {
				if err := p.Goto(step); err != nil {
					t.Fatal(err)
				}
				return p.State(&Tracker{}, true)
			}
			for _, s := range o.Stops {
				mi := slices.IndexFunc(spec.Modes, func(m core.Mode) bool { return m.String() == s.Mode })
				if mi < 0 {
					mi = len(spec.Modes) - 1
				}
				now := at(s.Step)[mi]
				switch s.Kind {
				case StopNodeFree:
					if now.Counters.NodesFreed == 0 {
						t.Errorf("%s: no node freed at step %d", s.Kind, s.Step)
					}
				case StopValidatedFirst:
					if now.Counters.SlotsSkipped == 0 {
						t.Errorf("%s: nothing skipped at step %d", s.Kind, s.Step)
					}
				case StopFreedTwice:
					if now.Counters.WronglyCleared == 0 || s.Mode != core.Batched.String() {
						t.Errorf("%s (%s): nothing wrongly cleared at step %d", s.Kind, s.Mode, s.Step)
					}
				case StopNullEndsRun, StopNewOwnCall:
					if now.Counters.Calls == 0 {
						t.Errorf("%s: no call by step %d", s.Kind, s.Step)
					}
				}
				q := s.Question
				if q == nil {
					continue
				}
				questions[s.Kind]++
				what := fmt.Sprintf("%s question %q (ask %d, reveal %d)", s.Kind, q.Text, q.Ask, q.Reveal)
				if !slices.Equal(q.Withholds, Withholds(s.Kind)) || q.Ask > q.Reveal {
					t.Errorf("%s: withholds %v", what, q.Withholds)
				}
				before, after := at(q.Ask)[mi], at(q.Reveal)[mi]
				switch s.Kind {
				case StopNullEndsRun, StopNewOwnCall:
					if made := after.Counters.Calls > before.Counters.Calls; made != (q.Answer == "yes") {
						t.Errorf("%s: answer %s, calls %d → %d", what, q.Answer, before.Counters.Calls, after.Counters.Calls)
					}
				case StopValidatedFirst:
					if after.Counters.SlotsSkipped != before.Counters.SlotsSkipped+1 || q.Answer == choiceValid {
						t.Errorf("%s: answer %s, skipped %d → %d", what, q.Answer, before.Counters.SlotsSkipped, after.Counters.SlotsSkipped)
					}
				case StopNodeFree:
					// valid_node_count as the volume had it, less the nodes freed by the reveal.
					if w := fmt.Sprint(uint64(spec.Input.Volume.ValidNodeCount) - after.Counters.NodesFreed); q.Answer != w || before.Counters.NodesFreed+1 != after.Counters.NodesFreed {
						t.Errorf("%s: answer %s, want %s (nodes freed %d → %d)", what, q.Answer, w, before.Counters.NodesFreed, after.Counters.NodesFreed)
					}
				}
			}
		})
	}
	for _, k := range []string{StopNullEndsRun, StopValidatedFirst, StopNodeFree, StopNewOwnCall} {
		if questions[k] == 0 {
			t.Errorf("no %s question in the runs: %v", k, questions)
		}
	}
}

// TestTruncDoublyMapped: the block mapped twice is skipped by the per-block loop and invalidated
// twice by the batched one, and the outcome and end stop say so.
func TestTruncDoublyMapped(t *testing.T) {
	o := build(t, truncSpecs(t)["punch doubly mapped"])
	pb, bt := o.Final[0].Stats, o.Final[1].Stats
	if pb.SlotsSkipped != 1 || pb.WronglyCleared != 0 || bt.SlotsSkipped != 0 || bt.WronglyCleared != 1 {
		t.Fatalf("per-block skipped %d wrongly %d, batched skipped %d wrongly %d", pb.SlotsSkipped, pb.WronglyCleared, bt.SlotsSkipped, bt.WronglyCleared)
	}
	if l := o.Outcome().Line; !strings.Contains(l, "wrongly cleared") || !strings.HasPrefix(l, "f2fs_punch_hole returns 0") {
		t.Errorf("outcome %q", l)
	}
}

// TestTruncTexts: a punch's or truncate's texts name its own call and functions, never the zero's.
func TestTruncTexts(t *testing.T) {
	for name, spec := range truncSpecs(t) {
		o := build(t, spec)
		call := "FALLOC_FL_PUNCH_HOLE"
		switch spec.Request.Op {
		case core.OpTruncate:
			call = "truncate("
		case core.OpUnlink:
			call = "unlink("
		}
		if !strings.Contains(o.Stops[0].Text, call) {
			t.Errorf("%s: the start stop does not name %s: %q", name, call, o.Stops[0].Text)
		}
		texts := []string{o.Outcome().Returns, o.Outcome().Line}
		for _, s := range o.Stops {
			texts = append(texts, s.Title, s.Text)
			if s.Question != nil {
				texts = append(texts, s.Question.Text)
			}
		}
		if end := o.Stops[len(o.Stops)-1]; o.Final[0].Stats.Calls > 0 && strings.Contains(end.Text, "neither mode called") {
			t.Errorf("%s: %d calls, and the end stop says %q", name, o.Final[0].Stats.Calls, end.Text)
		}
		for _, x := range texts {
			if l := strings.ToLower(x); strings.Contains(l, "zero_range") || strings.Contains(l, "zero range") && !strings.Contains(l, "a zero range skips") && !strings.Contains(l, "zero range stops") {
				t.Errorf("%s: %q speaks of the zero", name, x)
			}
		}
	}
}

// TestTruncRandomPunches: random punches over random files (NULL, NEW, repeated addresses, cleared
// bits) keep the tour's invariants: stops at steps in order, no stop between a call and its SIT
// update, questions before their reveal with the engine's answer.
func TestTruncRandomPunches(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 28))
	for n := range 40 {
		spec := randomSpec(r, 1+r.IntN(3000))
		spec.Request.Op, spec.Request.KeepSize = core.OpPunch, false
		o := build(t, spec)
		p, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		var prev int64
		for _, s := range o.Stops {
			if err := p.Goto(s.Step); err != nil {
				t.Fatal(err)
			}
			for i, r := range p.l.runs {
				if r.InCall() {
					t.Fatalf("spec %d stop %s at %d: engine %d is between a call and its SIT update", n, s.Kind, s.Step, i)
				}
			}
			if q := s.Question; q != nil {
				if q.Ask < prev || q.Ask > q.Reveal || !q.Check(q.Answer) {
					t.Fatalf("spec %d: question %+v after %d", n, q, prev)
				}
				prev = q.Reveal
			}
		}
	}
}

// extentValue is the slot value an extent gives file block index k.
func extentValue(e core.Extent, k uint64) uint32 {
	switch e.State {
	case "addr":
		return e.Addr + uint32(k-e.Index)
	case "new":
		return core.NewAddr
	case "compress":
		return core.CompressAddr
	}
	return core.NullAddr
}

// TestTruncRefused: a punch or truncate refused before f2fs walks anything says which call refused
// it, in its own words (never the zero's).
func TestTruncRefused(t *testing.T) {
	both := []core.Mode{core.PerBlock, core.Batched}
	for _, c := range []struct {
		req         core.Request
		errno, says string
		returns     string
	}{
		{core.Request{Op: core.OpTruncate, Offset: -1}, "EINVAL", "truncate(2) refuses a negative size", "truncate returns -EINVAL"},
		{core.Request{Op: core.OpTruncate, Offset: 1 << 62}, "EFBIG", "inode_newsize_ok", "truncate returns -EFBIG"},
		{core.Request{Op: core.OpPunch, Offset: -1, Length: 4096}, "EINVAL", "vfs_fallocate refuses", "vfs_fallocate returns -EINVAL"},
	} {
		spec := demoSpec(t, "/cases/contiguous.bin", both...)
		spec.Request = c.req
		o := build(t, spec)
		var stop *Stop
		for k := range o.Stops {
			if o.Stops[k].Kind == StopError {
				stop = &o.Stops[k]
			}
		}
		if o.Final[0].Errno != c.errno || stop == nil {
			t.Fatalf("%+v: errno %q, error stop %v", c.req, o.Final[0].Errno, stop)
		}
		if !strings.Contains(stop.Text, c.says) || strings.Contains(strings.ToLower(stop.Text), "zero") {
			t.Errorf("%+v: the error stop says %q", c.req, stop.Text)
		}
		if got := o.Outcome().Returns; got != c.returns {
			t.Errorf("%+v: outcome %q, want %q", c.req, got, c.returns)
		}
	}
}

// TestUnlinkTour: an unlink's tour ends with the inode's own block freed (f2fs_remove_inode_page),
// after every dnode and indirect node, and its quiz asks the node counts the engine gives.
func TestUnlinkTour(t *testing.T) {
	specs := truncSpecs(t)
	for _, name := range []string{"unlink indirect", "unlink inline"} {
		o := build(t, specs[name])
		in := specs[name].Input
		for i, f := range o.Final {
			if f.Errno != "" || f.ISize != 0 || f.IBlocks != 0 {
				t.Fatalf("%s: mode %d: errno %q size %d blocks %d", name, i, f.Errno, f.ISize, f.IBlocks)
			}
			// The last call frees the inode's block.
			if n := len(f.LastCalls); n == 0 || f.LastCalls[n-1].Start != in.Inode.Blkaddr || f.LastCalls[n-1].Reason != core.ActNodeFree {
				t.Errorf("%s: mode %d: last calls %+v, the last not the inode's block %d", name, i, f.LastCalls, in.Inode.Blkaddr)
			}
			if f.Event.Kind != core.EvDone || f.Event.Action != core.ActUnlink {
				t.Errorf("%s: mode %d: last event %+v", name, i, f.Event)
			}
		}
		if l := o.Outcome().Line; !strings.HasPrefix(l, "f2fs_unlink returns 0") {
			t.Errorf("%s: outcome %q", name, l)
		}
		node := false
		for _, s := range o.Stops {
			node = node || s.Kind == StopNodeFree && s.Question != nil
		}
		if !node {
			t.Errorf("%s: no node-free stop with its question", name)
		}
	}
}

// TestTruncCompressedClusterStop: a truncate inside a compressed cluster stops at
// f2fs_truncate_partial_cluster's event, which names the cluster's pages and says no block changes.
func TestTruncCompressedClusterStop(t *testing.T) {
	// Clusters of 4: 0 compressed (COMPRESS_ADDR, 1 block, NEW, NEW), 1 raw, 2 compressed.
	slots := []uint32{core.CompressAddr, 5000, core.NewAddr, core.NewAddr, 5001, 5002, 5003, 5004,
		core.CompressAddr, 5005, core.NewAddr, core.NewAddr}
	spec := fakeSpec(slots, []core.Mode{core.PerBlock, core.Batched}, core.Request{Op: core.OpTruncate, Offset: 8*4096 + 100})
	spec.Input.Inode.Flags, spec.Input.Inode.ClusterSize, spec.Input.Inode.ComprBlocks = core.FlagCompressed, 4, 6
	spec.Input.Inode.AddrsPerInode = fakeAPI - fakeAPI%4
	spec.Input.Slots = inodeOnly{spec.Input.Slots.(*fakeFile)}
	o := build(t, spec)
	var got *Stop
	for i, s := range o.Stops {
		if s.Kind == StopFillZero {
			got = &o.Stops[i]
		}
	}
	if got == nil {
		t.Fatalf("no %s stop: %+v", StopFillZero, o.Stops)
	}
	for _, w := range []string{"f2fs_truncate_partial_cluster", "cluster 2 (pages 8–11)", "page 8 from byte 100", "No block, slot or SIT entry changes now"} {
		if !strings.Contains(got.Text, w) {
			t.Errorf("stop text lacks %q: %s", w, got.Text)
		}
	}
	// Inside raw cluster 1: truncate_partial_data_page's page goes out of place at writeback.
	spec.Request.Offset = 5*4096 + 4
	o = build(t, spec)
	got = nil
	for i, s := range o.Stops {
		if s.Kind == StopFillZero {
			got = &o.Stops[i]
		}
	}
	if got == nil || !strings.Contains(got.Text, "page 5 of a cluster stored raw") || !strings.Contains(got.Text, "out of place to the cold data log") {
		t.Errorf("raw cluster's partial page: %+v", got)
	}
}

// inodeOnly is a fakeFile whose slots all lie in the inode: no node exists (truncate asks).
type inodeOnly struct{ *fakeFile }

func (inodeOnly) NodeAddr(uint64, int) (uint32, bool, error) { return 0, false, nil }

// DnodeSlots answers with the inode's slots rounded down to the cluster size (4), as a compressed
// inode has them.
func (f inodeOnly) DnodeSlots(index uint64) (uint64, []uint32, int, error) {
	const api = fakeAPI - fakeAPI%4
	if index >= api {
		// No node exists: the direct nodes i_nid[0], i_nid[1] (one missing node on the path),
		// then those under the indirect ones (two, then three).
		k := (index - api) / fakeAPB
		missing := 1
		switch {
		case k >= 2+2*1018:
			missing = 3
		case k >= 2:
			missing = 2
		}
		return api + k*fakeAPB, make([]uint32, fakeAPB), missing, nil
	}
	start, slots, missing, err := f.fakeFile.DnodeSlots(index)
	if err == nil && start == 0 {
		slots = slots[:api]
	}
	return start, slots, missing, err
}

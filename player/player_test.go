package player

import (
	"context"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/source"
)

// demoSpec builds the spec of a whole-file run on the embedded demo image (the kernel fixture).
func demoSpec(t testing.TB, path string, modes ...core.Mode) Spec {
	t.Helper()
	img := demoImage(t)
	f, err := img.Resolve(path)
	if err != nil {
		t.Fatal(err)
	}
	in, err := source.FileInput(img, f)
	if err != nil {
		t.Fatal(err)
	}
	return Spec{Input: in, Request: core.Request{Length: max(in.Inode.Size, 1)}, Modes: modes,
		Describe: source.NewDescriber(img, f)}
}

var demo *imgio.Image

func demoImage(t testing.TB) *imgio.Image {
	t.Helper()
	if demo == nil {
		img, err := imgio.OpenFileContext(context.Background(), testutil.DemoImage(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		// The image outlives this test: later tests reuse it, and the process exit removes it.
		demo = img
	}
	return demo
}

func build(t testing.TB, spec Spec) *Outline {
	t.Helper()
	o, err := Build(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestBench64 is the headline demo: 16,384 per-block calls against 19 batched, 17 chunks, and a
// tour with the stops the run has.
func TestBench64(t *testing.T) {
	o := build(t, demoSpec(t, "/seed/bench64.bin", core.PerBlock, core.Batched))
	if len(o.Chunks) != 17 || o.Chunks[16].Node != "i_nid[2]/13" || o.Chunks[0].Kind != "inode" || o.Chunks[1].Nid == 0 {
		t.Fatalf("%d chunks, last %+v, first %+v", len(o.Chunks), o.Chunks[len(o.Chunks)-1], o.Chunks[0])
	}
	if pb, bt := o.Final[0].Stats.Calls, o.Final[1].Stats.Calls; pb != 16384 || bt != 19 {
		t.Fatalf("calls %d and %d, want 16,384 and 19", pb, bt)
	}
	var calls uint64
	for _, c := range o.Chunks {
		calls += c.Calls[1]
	}
	if calls != 19 {
		t.Errorf("per-chunk batched calls add up to %d", calls)
	}
	kinds := map[string]bool{}
	for _, s := range o.Stops {
		kinds[s.Kind] = true
		if s.Text == "" || s.Title == "" || s.Step < 0 || s.Step > o.Total {
			t.Errorf("stop %+v", s)
		}
	}
	for _, k := range []string{StopStart, StopChunk, StopSITUpdate, StopDiscontiguous, StopEndOfChunk, StopEndOfRange, StopPrefree, StopEnd} {
		if !kinds[k] {
			t.Errorf("no %q stop in %v", k, kinds)
		}
	}
	if !slices.IsSortedFunc(o.Stops, func(a, b Stop) int { return int(a.Step - b.Step) }) {
		t.Error("stops out of order")
	}
}

// TestStopsShowWhatTheySay checks, for every stop of several real and random runs, that the state
// at the stop's step is what the stop describes: a call's stop is after its SIT updates, the
// reserve stop after the reservation, the end stop at the end.
func TestStopsShowWhatTheySay(t *testing.T) {
	specs := []Spec{
		demoSpec(t, "/seed/bench64.bin", core.PerBlock, core.Batched),
		demoSpec(t, "/cases/prealloc.bin", core.Batched),
		demoSpec(t, "/cases/holes.bin", core.PerBlock, core.Batched),
		demoSpec(t, "/cases/fragmented.bin", core.PerBlock),
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 30 {
		specs = append(specs, randomSpec(r, 1+r.IntN(4000)))
	}
	for n, spec := range specs {
		o := build(t, spec)
		p, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range o.Stops {
			if err := p.Goto(s.Step); err != nil {
				t.Fatal(err)
			}
			for i, r := range p.l.runs {
				if r.InCall() {
					t.Fatalf("spec %d stop %s at %d: engine %d is between a call and its SIT update", n, s.Kind, s.Step, i)
				}
			}
			switch s.Kind {
			case StopEnd:
				if !p.Done() {
					t.Fatalf("spec %d: the end stop is not at the end", n)
				}
			case StopPrefree:
				found := false
				for _, st := range p.State(&Tracker{}, true) {
					for _, sg := range st.Segments {
						found = found || sg.Class == core.SegPrefree
					}
				}
				if !found {
					t.Fatalf("spec %d: no prefree segment at the prefree stop", n)
				}
			}
		}
		// The questions: asked before they are revealed, never overlapping, with the engine's answer.
		var prev int64
		for _, s := range o.Stops {
			q := s.Question
			if q == nil {
				continue
			}
			if q.Ask < prev || q.Ask > q.Reveal || !q.Check(q.Answer) {
				t.Fatalf("spec %d: question %+v after %d", n, q, prev)
			}
			prev = q.Reveal
		}
	}
}

// TestGotoAgreesWithForward: seeking anywhere, in any direction, gives exactly the state reached by
// stepping there from the start, in every mode combination.
func TestGotoAgreesWithForward(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := range 40 {
		spec := randomSpec(r, 1+r.IntN(5000))
		o := build(t, spec)
		a, _ := New(o)
		b, _ := New(o)
		var states []int64
		for k := 0; k < 8; k++ {
			states = append(states, int64(r.IntN(int(o.Total)+1)))
		}
		for _, step := range states {
			if err := a.Goto(step); err != nil {
				t.Fatal(err)
			}
			if err := b.Goto(0); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Forward(step, nil); err != nil {
				t.Fatal(err)
			}
			if a.Step() != step || b.Step() != step {
				t.Fatalf("spec %d: at %d and %d, want %d", n, a.Step(), b.Step(), step)
			}
			sa, sb := a.State(&Tracker{}, true), b.State(&Tracker{}, true)
			if !reflect.DeepEqual(sa, sb) {
				t.Fatalf("spec %d step %d: Goto and Forward disagree:\n%+v\n%+v", n, step, sa, sb)
			}
			hi := o.Range.End
			if !reflect.DeepEqual(a.Changed(0, hi), b.Changed(0, hi)) {
				t.Fatalf("spec %d step %d: slots differ", n, step)
			}
		}
	}
}

// TestNextCall stops after the next call of the last mode and its SIT updates, every time, and
// reaches the end after the last call.
func TestNextCall(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := range 40 {
		spec := randomSpec(r, 1+r.IntN(3000))
		o := build(t, spec)
		p, _ := New(o)
		last := len(spec.Modes) - 1
		calls := o.Final[last].Stats.Calls
		for k := uint64(1); k <= calls; k++ {
			if _, err := p.NextCall(nil); err != nil {
				t.Fatal(err)
			}
			st := p.State(&Tracker{}, true)[last]
			if st.Counters.Calls != k || p.l.runs[last].InCall() {
				t.Fatalf("spec %d: after NextCall %d the counter says %d (in call %v)", n, k, st.Counters.Calls, p.l.runs[last].InCall())
			}
		}
		if _, err := p.NextCall(nil); err != nil || !p.Done() {
			t.Fatalf("spec %d: NextCall after the last call is not the end (%d/%d): %v", n, p.Step(), o.Total, err)
		}
	}
}

// TestGotoSlot lands on the first step whose cursor reaches the slot.
func TestGotoSlot(t *testing.T) {
	o := build(t, demoSpec(t, "/seed/bench64.bin", core.PerBlock, core.Batched))
	p, _ := New(o)
	for _, slot := range []uint64{0, 1, 512, 873, 2909, 16383, 20000} {
		if err := p.GotoSlot(slot); err != nil {
			t.Fatal(err)
		}
		at := p.Step()
		if p.Cursor() < slot && !p.Done() {
			t.Fatalf("GotoSlot(%d): cursor %d", slot, p.Cursor())
		}
		if at > 0 {
			p.Goto(at - 1)
			if p.Cursor() >= slot {
				t.Fatalf("GotoSlot(%d) went to %d, but %d already had cursor %d", slot, at, at-1, p.Cursor())
			}
		}
	}
}

// TestInitialAndChanged: the initial map (read in pages) with the player's changes laid over it is
// the engine's slot map, at many steps of real runs.
func TestInitialAndChanged(t *testing.T) {
	for _, path := range []string{"/seed/bench64.bin", "/cases/prealloc.bin", "/cases/holes.bin", "/cases/tiny.txt", "/cases/rewritten.bin"} {
		o := build(t, demoSpec(t, path, core.PerBlock, core.Batched))
		var initial []core.Extent
		for from := o.Range.Start; from < o.Range.End; {
			page, next, err := o.InitialSlots(from, 7)
			if err != nil || next <= from {
				t.Fatalf("%s: page at %d: %v", path, from, err)
			}
			initial, from = append(initial, page...), next
		}
		// The oracle: the whole range read in one call, with the changes of a fresh run seeked to the
		// same event laid over it (core's property tests hold Changed over ReadSlots to the engine's own
		// slot map).
		base, next, err := core.ReadSlots(o.spec.Input, o.Range.Start, o.Range.End, 1<<30, 1<<30)
		if err != nil || next != o.Range.End {
			t.Fatalf("%s: ReadSlots: next %d of %d, %v", path, next, o.Range.End, err)
		}
		fresh, err := core.NewRunOptions(o.spec.Input, o.spec.Request, core.PerBlock, core.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := New(o)
		for _, step := range []int64{0, 1, o.Total / 3, o.Total / 2, o.Total} {
			p.Goto(step)
			// A player step is the modes' lockstep; the per-block run's own step is its run's.
			if err := fresh.SeekTo(p.l.runs[0].Step()); err != nil {
				t.Fatal(err)
			}
			want := overlay(base, fresh.Changed(o.Range.Start, o.Range.End), o.Range.Start, o.Range.End)
			got := overlay(initial, p.Changed(o.Range.Start, o.Range.End), o.Range.Start, o.Range.End)
			if !reflect.DeepEqual(got, normalise(want, o.Range.Start, o.Range.End)) {
				t.Fatalf("%s step %d: initial+changed %v\nwant %v", path, step, got, want)
			}
		}
	}
}

// overlay lays changes over base and returns one state name and address per slot of [lo, hi).
func overlay(base, changes []core.Extent, lo, hi uint64) []core.Extent {
	return normalise(append(append([]core.Extent{}, base...), changes...), lo, hi)
}

// normalise renders extents (later ones winning) as a merged slot map of [lo, hi).
func normalise(ext []core.Extent, lo, hi uint64) []core.Extent {
	slots := make([]uint32, hi-lo)
	for _, e := range ext {
		for i := max(e.Index, lo); i < min(e.Index+e.Count, hi); i++ {
			switch e.State {
			case "addr":
				slots[i-lo] = e.Addr + uint32(i-e.Index)
			case "new":
				slots[i-lo] = core.NewAddr
			case "compress":
				slots[i-lo] = core.CompressAddr
			default:
				slots[i-lo] = core.NullAddr
			}
		}
	}
	var out []core.Extent
	for i, a := range slots {
		idx := lo + uint64(i)
		st := "addr"
		switch a {
		case core.NullAddr:
			st = "null"
		case core.NewAddr:
			st = "new"
		case core.CompressAddr:
			st = "compress"
		}
		if k := len(out) - 1; k >= 0 && out[k].State == st && (st != "addr" || uint64(out[k].Addr)+out[k].Count == uint64(a)) {
			out[k].Count++
			continue
		}
		e := core.Extent{Index: idx, Count: 1, State: st}
		if st == "addr" {
			e.Addr = a
		}
		out = append(out, e)
	}
	return out
}

// TestViewerMemory is issue 13's budget: a viewer of a run over a million non-contiguous slots
// holds memory for what it shows, not for the slots: seeking to the end and back must not grow the
// heap by more than a few MB per viewer once the shared outline exists. Two layouts: every slot a
// block two apart (a dnode chunk touches four segments), and rows (each chunk's slots each in
// another segment, so every chunk touches 1,018 segments and a viewer's SIT undo log would hold a
// copy of each per checkpoint).
func TestViewerMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a million-slot run")
	}
	const n = 1_020_909
	layouts := map[string]func(i int) uint32{
		"sequential": func(i int) uint32 { return 4096 + uint32(2*i) },
		"rows": func(i int) uint32 {
			c, j := i/1018, i%1018
			return 4096 + uint32(j+1018*(c/256))*512 + uint32(2*(c%256))
		},
	}
	for name, addr := range layouts {
		t.Run(name, func(t *testing.T) {
			slots := make([]uint32, n)
			for i := range slots {
				slots[i] = addr(i)
			}
			spec := fakeSpec(slots, []core.Mode{core.PerBlock, core.Batched}, core.Request{Length: n * 4096})
			o := build(t, spec)
			if o.Final[1].Stats.Calls != n || o.Final[1].Errno != "" {
				t.Fatalf("batched made %d calls (%q), want one per slot", o.Final[1].Stats.Calls, o.Final[1].Errno)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			const viewers = 4
			ps := make([]*Player, viewers)
			for i := range ps {
				ps[i], _ = New(o)
				ps[i].Goto(o.Total)
				ps[i].Goto(o.Total / 2)
				_ = ps[i].State(&Tracker{}, true)
				_ = ps[i].Changed(o.Range.Start, o.Range.End)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / viewers
			t.Logf("%s: outline ≈ %d KB; checkpoints every %d chunks; per viewer %d KB of heap after seeking to the end and back (estimate %d KB)",
				name, o.Bytes()>>10, o.checkpointChunks, per>>10, o.ViewerBytes()>>10)
			if per > 20<<20 {
				t.Errorf("a viewer holds %d MB", per>>20)
			}
			if est := o.ViewerBytes(); per > 2*est {
				t.Errorf("a viewer holds %d KB, over twice the %d KB its budget reservation says", per>>10, est>>10)
			}
			// Seeking still lands where stepping does.
			p, _ := New(o)
			p.Goto(o.Total / 3)
			q, _ := New(o)
			q.Goto(o.Total / 2)
			q.Goto(o.Total / 3)
			if !reflect.DeepEqual(p.State(&Tracker{}, true), q.State(&Tracker{}, true)) {
				t.Error("a seek back with the wider checkpoint spacing lands elsewhere")
			}
			runtime.KeepAlive(ps)
		})
	}
}

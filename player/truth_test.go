package player

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/sandbox"
)

// clientModel is what a page makes of the states it gets (static/js/state.js, applyState): every
// listed segment per mode, starting from the hello's and laid over with each state's segments (a
// full state starts again from the hello's), and the rest of the latest state.
type clientModel struct {
	o     *Outline
	segs  []map[uint32]core.SegmentState
	state []ModeState
	slots []core.Extent
}

func newClientModel(o *Outline) *clientModel {
	return &clientModel{o: o, segs: make([]map[uint32]core.SegmentState, len(o.spec.Modes))}
}

func (c *clientModel) apply(p *Player, st []ModeState, full bool) {
	for i, s := range st {
		if full || c.segs[i] == nil {
			c.segs[i] = map[uint32]core.SegmentState{}
			for _, sg := range c.o.Segments {
				c.segs[i][sg.Segno] = sg
			}
		}
		for _, sg := range s.Segments {
			if _, ok := c.segs[i][sg.Segno]; !ok {
				panic(fmt.Sprintf("segment %d is not listed", sg.Segno))
			}
			c.segs[i][sg.Segno] = sg
		}
		st[i].Segments = nil
	}
	c.state = st
	c.slots = p.Changed(p.o.Range.Start, p.o.Range.End)
}

// fresh is the model of a page loaded at step: a new player and tracker, one full state.
func fresh(o *Outline, step int64) (*clientModel, error) {
	p, err := New(o)
	if err != nil {
		return nil, err
	}
	if err := p.Goto(step); err != nil {
		return nil, err
	}
	c := newClientModel(o)
	c.apply(p, p.State(&Tracker{}, true), true)
	return c, nil
}

func (c *clientModel) diff(f *clientModel) string {
	for i := range c.state {
		if !reflect.DeepEqual(c.state[i], f.state[i]) {
			return fmt.Sprintf("state\n%+v\nfresh\n%+v", c.state[i], f.state[i])
		}
	}
	for i := range c.segs {
		for no, sg := range f.segs[i] {
			if c.segs[i][no] != sg {
				return fmt.Sprintf("mode %d segment %d: %+v, fresh %+v", i, no, c.segs[i][no], sg)
			}
		}
	}
	if !reflect.DeepEqual(c.slots, f.slots) {
		return fmt.Sprintf("slots %v, fresh %v", c.slots, f.slots)
	}
	return ""
}

// navigate takes one random control, as a session does: which ones give a full state is the
// session's rule (docs/protocol.md: a seek, a step back, reset, end, gotoSlot).
func navigate(r *rand.Rand, p *Player) (what string, full bool, err error) {
	o := p.o
	switch k := r.IntN(10); k {
	case 0, 1:
		n := int64(1 + r.IntN(3))
		if r.IntN(3) == 0 {
			n = int64(1 + r.IntN(int(max(o.Total, 1))))
		}
		_, err = p.Forward(n, nil)
		return fmt.Sprintf("play %d", n), false, err
	case 2:
		step := int64(r.IntN(int(o.Total) + 1))
		return fmt.Sprintf("seek %d", step), true, p.Goto(step)
	case 3:
		n := int64(1 + r.IntN(50))
		return fmt.Sprintf("back %d", n), true, p.Goto(p.Step() - n)
	case 4:
		return "reset", true, p.Goto(0)
	case 5:
		return "end", true, p.Goto(o.Total)
	case 6:
		_, err = p.NextCall(nil)
		return "nextCall", false, err
	case 7:
		slot := o.Range.Start + uint64(r.IntN(int(o.Range.End-o.Range.Start)+1))
		return fmt.Sprintf("gotoSlot %d", slot), true, p.GotoSlot(slot)
	case 8:
		// A tour or quiz stop.
		if len(o.Stops) > 0 {
			s := o.Stops[r.IntN(len(o.Stops))]
			return fmt.Sprintf("stop %s", s.Kind), true, p.Goto(s.Step)
		}
		return "none", false, nil
	default:
		_, err = p.Forward(1, nil)
		return "step", false, err
	}
}

// truthSpecs are the runs the property is checked on: the fixtures' contiguous, fragmented,
// NEW (prealloc) and NULL (holes) files, a second zero after a first (a sequence of operations),
// sandbox lists touching more than 256 and more than 4,096 segments, and punches and truncates
// (truncSpecs: holes, NEW_ADDR slots, nodes freed, a block mapped twice, a punch after a zero)
// with random punches over random files.
func truthSpecs(t *testing.T) map[string]Spec {
	both := []core.Mode{core.PerBlock, core.Batched}
	specs := map[string]Spec{}
	for _, f := range []string{"/cases/contiguous.bin", "/cases/fragmented.bin", "/cases/prealloc.bin", "/cases/holes.bin", "/cases/rewritten.bin"} {
		specs[f] = demoSpec(t, f, both...)
	}
	// Kernel case 9: zero [1 MiB, 2 MiB) then [512 KiB, 2.5 MiB) of contiguous.bin.
	seq := demoSpec(t, "/cases/contiguous.bin", both...)
	res, err := core.Simulate(seq.Input, core.Request{Offset: 1 << 20, Length: 1 << 20}, core.PerBlock)
	if err != nil {
		t.Fatal(err)
	}
	seq.Input, seq.Request = res.NextInput(), core.Request{Offset: 512 << 10, Length: 2 << 20}
	specs["sequence"] = seq
	var b strings.Builder
	for k := range 4200 {
		fmt.Fprintf(&b, "%d ", 4096+512*k+k%7)
	}
	for name, list := range map[string]string{"257 segments": "4096-135679", "4,200 segments": b.String()} {
		l, err := sandbox.Parse(list)
		if err != nil {
			t.Fatal(err)
		}
		specs[name] = Spec{Input: l.Input(), Request: l.Request(), Modes: both}
	}
	for name, s := range truncSpecs(t) {
		specs[name] = s
	}
	r := rand.New(rand.NewPCG(28, 16))
	for k := range 3 {
		s := randomSpec(r, 500+r.IntN(2500))
		s.Request.Op, s.Request.KeepSize = core.OpPunch, false
		specs[fmt.Sprintf("random punch %d", k)] = s
	}
	return specs
}

// TestStateIsAFunctionOfTheStep: along random paths of play, step, back, Home, End, seek, go to
// slot, tour stops and next call, every state a viewer's page holds (counters, SIT totals, every
// listed segment's count, map and class, calls, narration, slots) equals that of a page loaded
// fresh at the same step.
func TestStateIsAFunctionOfTheStep(t *testing.T) {
	paths, moves := 120, 8
	if testing.Short() {
		paths = 15
	}
	for name, spec := range truthSpecs(t) {
		t.Run(name, func(t *testing.T) {
			o := build(t, spec)
			if name == "4,200 segments" && (o.sit[0].Segments != 4200 || len(o.Segments) != MaxSegments) {
				t.Fatalf("%d segments touched, %d listed", o.sit[0].Segments, len(o.Segments))
			}
			r := rand.New(rand.NewPCG(16, uint64(len(name))))
			freshAt := map[int64]*clientModel{}
			paths := paths
			if testing.Short() && len(o.Segments) > 64 {
				// The many-segment specs cost 30 times a small one a path; the fast tier walks 5.
				paths = 5
			}
			for path := range paths {
				p, err := New(o)
				if err != nil {
					t.Fatal(err)
				}
				var tr Tracker
				c := newClientModel(o)
				c.apply(p, p.State(&tr, true), true)
				var trail []string
				for range moves {
					what, full, err := navigate(r, p)
					if err != nil {
						t.Fatal(err)
					}
					trail = append(trail, what)
					c.apply(p, p.State(&tr, full), full)
					f := freshAt[p.Step()]
					if f == nil {
						if f, err = fresh(o, p.Step()); err != nil {
							t.Fatal(err)
						}
						freshAt[p.Step()] = f
					}
					if d := c.diff(f); d != "" {
						t.Fatalf("path %d (%s) at step %d of %d: %s", path, strings.Join(trail, ", "), p.Step(), o.Total, d)
					}
				}
			}
			// The end: totals are exact whatever the number of segments (every block invalidated).
			f, err := fresh(o, o.Total)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range f.state {
				if want := o.sit[i].Before - s.Counters.BlocksInvalidated; s.SIT.Valid != want || s.SIT.Touched != o.sit[i].Segments {
					t.Errorf("%s at the end: SIT %+v, want valid %d", s.Mode, s.SIT, want)
				}
			}
		})
	}
}

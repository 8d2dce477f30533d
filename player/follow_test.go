package player

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zrviz/zrviz/core"
)

// TestFollowMapsTheSamePoint: issue 16's mode switch on bench64. At the end of both (step 65,675)
// b lands at per-block's end (49,188), not a few steps before it, and three presses come back to
// 65,675; at a chunk's first step every mode lands at the same chunk's first step; mid-chunk the
// cursor (the slot) is kept.
func TestFollowMapsTheSamePoint(t *testing.T) {
	cycle := [][]core.Mode{{core.PerBlock}, {core.Batched}, {core.PerBlock, core.Batched}}
	var os []*Outline
	for _, m := range cycle {
		os = append(os, build(t, demoSpec(t, "/seed/bench64.bin", m...)))
	}
	both := os[2]
	if both.Total != 65675 || os[0].Total != 49188 {
		t.Fatalf("totals %d, %d", both.Total, os[0].Total)
	}
	players := make([]*Player, len(os))
	for i, o := range os {
		var err error
		if players[i], err = New(o); err != nil {
			t.Fatal(err)
		}
	}
	press := func(from int, step int64) int64 {
		t.Helper()
		p := players[from]
		if err := p.Goto(step); err != nil {
			t.Fatal(err)
		}
		for k := 1; k <= 3; k++ {
			next := players[(from+k)%3]
			if err := next.Follow(p); err != nil {
				t.Fatal(err)
			}
			p = next
		}
		return p.Step()
	}
	if got := press(2, both.Total); got != both.Total {
		t.Errorf("three presses at the end: %d, want %d", got, both.Total)
	}
	if err := players[0].Follow(players[2]); err != nil || players[0].Step() != os[0].Total || !players[0].Done() {
		t.Errorf("both's end → per-block step %d of %d (%v)", players[0].Step(), os[0].Total, err)
	}
	for k, c := range both.Chunks {
		if got := press(2, c.Step); got != c.Step {
			t.Errorf("chunk %d at step %d: three presses give %d", k, c.Step, got)
		}
		if players[1].Step() != os[1].Chunks[k].Step {
			t.Errorf("chunk %d: batched at %d, want %d", k, players[1].Step(), os[1].Chunks[k].Step)
		}
	}
	// Mid-chunk: the slot cursor is kept (3,501 is inside chunk 1 of both).
	if err := players[2].Goto(3501); err != nil {
		t.Fatal(err)
	}
	if err := players[1].Follow(players[2]); err != nil {
		t.Fatal(err)
	}
	if c, want := players[1].Cursor(), players[2].Cursor(); c < want || players[1].Step() == 0 {
		t.Errorf("mid-run: batched cursor %d at step %d, both's %d", c, players[1].Step(), want)
	}
}

// TestFollowKeepsThePlace: b at any step of a run keeps the place in the run (issue 30: at the
// run's first steps it went back to step 0). For random steps of random demo files and any two
// modes, Follow lands on a step of the same slot — the k-th step at that slot when the mode has
// k, else its last — counted here by walking every step of both players, not by GotoSlot; never on
// step 0 from a later step; and leaves from where it was.
func TestFollowKeepsThePlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 2))
	cycle := [][]core.Mode{{core.PerBlock}, {core.Batched}, {core.PerBlock, core.Batched}}
	for _, path := range []string{"/cases/prealloc.bin", "/cases/holes.bin", "/cases/fragmented.bin"} {
		players := make([]*Player, len(cycle))
		cursors := make([][]uint64, len(cycle)) // cursors[m][s]: the slot cursor at step s
		for i, m := range cycle {
			o := build(t, demoSpec(t, path, m...))
			p, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			players[i] = p
			for s := int64(0); s <= o.Total; s++ {
				if err := p.Goto(s); err != nil {
					t.Fatal(err)
				}
				cursors[i] = append(cursors[i], p.Cursor())
			}
		}
		for range 150 {
			a, b := rng.IntN(3), rng.IntN(3)
			if a == b {
				continue
			}
			from, p := players[a], players[b]
			s := 1 + rng.Int64N(from.o.Total-1)
			if _, chunk := slices.BinarySearchFunc(from.o.Chunks, s, func(c Chunk, s int64) int { return cmp.Compare(c.Step, s) }); chunk {
				continue // a chunk's first step goes to the chunk's first step (TestFollowMapsTheSamePoint)
			}
			if err := from.Goto(s); err != nil {
				t.Fatal(err)
			}
			if err := p.Follow(from); err != nil {
				t.Fatal(err)
			}
			c := cursors[a][s]
			k := s - int64(slices.Index(cursors[a], c)) // from's k-th step at slot c
			var at []int64                              // p's steps at slot c, its end left out: only from's end goes to the end
			for i, pc := range cursors[b][:len(cursors[b])-1] {
				if pc == c {
					at = append(at, int64(i))
				}
			}
			want := int64(-1)
			switch {
			case len(at) > 0:
				want = at[min(k, int64(len(at)-1))]
			default: // p never rests at c: its first step past it
				want = int64(slices.IndexFunc(cursors[b], func(pc uint64) bool { return pc > c }))
				if want < 0 {
					want = p.o.Total
				}
			}
			what := fmt.Sprintf("%s: %v step %d (slot %d, its step %d there) → %v", path, cycle[a], s, c, k, cycle[b])
			if p.Step() != want || p.Step() == 0 {
				t.Errorf("%s: step %d (slot %d), want step %d", what, p.Step(), cursors[b][p.Step()], want)
			}
			if from.Step() != s {
				t.Errorf("%s: Follow moved from to step %d", what, from.Step())
			}
		}
	}
}

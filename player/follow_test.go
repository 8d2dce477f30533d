package player

import (
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

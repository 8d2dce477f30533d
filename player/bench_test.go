package player

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/sandbox"
)

// BenchmarkStateManySegments measures a viewer's state on a run that touches 4,200 segments (a
// sandbox list, one block in each): a frame while playing (the diff since the previous one) and a
// full one at the end (every listed segment that differs from the hello's: 4,096 per mode).
func BenchmarkStateManySegments(b *testing.B) {
	var sb strings.Builder
	for k := range 4200 {
		fmt.Fprintf(&sb, "%d ", 4096+512*k+k%7)
	}
	l, err := sandbox.Parse(sb.String())
	if err != nil {
		b.Fatal(err)
	}
	o := build(b, Spec{Input: l.Input(), Request: l.Request(), Modes: []core.Mode{core.PerBlock, core.Batched}})
	p, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("frame", func(b *testing.B) {
		var tr Tracker
		p.State(&tr, true)
		for b.Loop() {
			if p.Done() {
				p.Goto(0)
				p.State(&tr, true)
			}
			p.Forward(256, nil)
			p.State(&tr, false)
		}
	})
	b.Run("full-at-end", func(b *testing.B) {
		if err := p.Goto(o.Total); err != nil {
			b.Fatal(err)
		}
		n := 0
		for b.Loop() {
			buf, err := json.Marshal(p.State(&Tracker{}, true))
			if err != nil {
				b.Fatal(err)
			}
			n = len(buf)
		}
		b.ReportMetric(float64(n), "bytes/state")
	})
}

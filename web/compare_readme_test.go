package web

import (
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/internal/units"
	"github.com/zrviz/zrviz/request"
)

// readmePunchDemo returns the numbered steps of README.md's "Five steps for a class" (section
// "Punch hole and truncate"), each on one line.
func readmePunchDemo(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Punch hole and truncate\n")
	if !ok {
		t.Fatal(`README.md has no "## Punch hole and truncate" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	_, list, ok := strings.Cut(sec, "**Five steps for a class**")
	if !ok {
		t.Fatal("the section has no five-step demo")
	}
	var steps []string
	for _, line := range strings.Split(list, "\n") {
		if m := regexp.MustCompile(`^(\d+)\. (.*)$`).FindStringSubmatch(line); m != nil {
			steps = append(steps, m[2])
		}
	}
	if len(steps) != 5 {
		t.Fatalf("the demo has %d steps, want 5", len(steps))
	}
	return steps
}

// TestREADMEPunchDemo holds the README's five-step punch demo to the engine: every compare page it
// opens names its range as the page reads it, and the summary it quotes has each side's calls and
// SIT lock acquisitions as core.Simulate counts them in the batched mode (compareWant); the truncate
// step's per-block and batched calls and freed nodes are the engine's too. TestBrowserCompare holds the
// page's summary to the same counts, so the README cannot drift from the page.
func TestREADMEPunchDemo(t *testing.T) {
	steps := readmePunchDemo(t)
	link := regexp.MustCompile("`(/compare\\?[^`]+)`")
	said := regexp.MustCompile(`\*(zero: [^*]+)\*`)
	checked := 0
	for i, st := range steps {
		l, s := link.FindStringSubmatch(st), said.FindStringSubmatch(st)
		if l == nil || s == nil {
			continue
		}
		u, err := url.Parse(l[1])
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		q := u.Query()
		run, err := request.Parse(q.Get)
		if err != nil {
			t.Fatalf("step %d: %s: %v", i+1, l[1], err)
		}
		var want []string
		for _, op := range []core.Op{core.OpZero, core.OpPunch} {
			run.Op = op
			r := simulateAfter(t, run, q[FieldBefore], core.Batched)
			w := op.String() + ": " + units.Group(r.Stats.Calls) + " call"
			if r.Stats.Calls != 1 {
				w += "s"
			}
			if r.Stats.SITLockAcquisitions != r.Stats.Calls {
				w += " (" + units.Group(r.Stats.SITLockAcquisitions) + " SIT lock acquisition"
				if r.Stats.SITLockAcquisitions != 1 {
					w += "s"
				}
				w += ")"
			}
			want = append(want, w)
		}
		if got, w := s[1], strings.Join(want, "; "); got != w {
			t.Errorf("step %d says %q; the engine says %q", i+1, got, w)
		}
		checked++
	}
	if checked < 3 {
		t.Errorf("%d steps with a compare link and a summary, want 3", checked)
	}

	// The truncate step: its command's per-block and batched calls and the nodes freed.
	m := regexp.MustCompile("`zrviz run --op truncate --size (\\S+) (\\S+)`: ([\\d,]+) calls per-block, ([\\d,]+) batched, (\\d+) of them node blocks").FindStringSubmatch(steps[4])
	if m == nil {
		t.Fatalf("step 5 is not a truncate with its figures: %q", steps[4])
	}
	size, err := units.ParseSize(m[1])
	if err != nil {
		t.Fatal(err)
	}
	for k, mode := range []core.Mode{core.PerBlock, core.Batched} {
		r := simulateAfter(t, request.Run{Path: m[2], Op: core.OpTruncate, Offset: size, HasLength: true}, nil, mode)
		if got := units.Group(r.Stats.Calls); got != m[3+k] {
			t.Errorf("step 5 says %s calls %s; the engine says %s", m[3+k], mode, got)
		}
		if got := strconv.FormatUint(r.Stats.NodesFreed, 10); got != m[5] {
			t.Errorf("step 5 says %s node blocks freed; the engine says %s (%s)", m[5], got, mode)
		}
	}
}

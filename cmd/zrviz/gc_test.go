package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGCCommand runs gc on the demo image after a zero range: the zeroed blocks make segments
// dirty, a checkpoint, then a foreground and a background call, in JSON and in text.
func TestGCCommand(t *testing.T) {
	ops := filepath.Join(t.TempDir(), "z.ops")
	if err := os.WriteFile(ops, []byte("zero /seed/bench64.bin 1000000 3000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Now uint64 `json:"now"`
		Ops []struct {
			Op         string           `json:"op"`
			Type       string           `json:"type"`
			Policy     string           `json:"policy"`
			Victim     *uint32          `json:"victim"`
			Cost       uint32           `json:"cost"`
			Errno      *string          `json:"errno"`
			Moved      int              `json:"moved"`
			Candidates []map[string]any `json:"candidates"`
			Freed      []uint32         `json:"freed"`
		} `json:"ops"`
	}
	args := []string{"gc", "--json", "--after-ops", ops, "--now", "20", "checkpoint", "gc", "1", "gc", "0"}
	if err := json.Unmarshal([]byte(mustRunMain(t, args...)), &out); err != nil {
		t.Fatal(err)
	}
	if out.Now != 20 || len(out.Ops) != 3 || out.Ops[0].Op != "checkpoint" {
		t.Fatalf("output %+v", out)
	}
	fg, bg := out.Ops[1], out.Ops[2]
	if fg.Type != "FG" || fg.Policy != "greedy" || fg.Victim == nil || fg.Errno != nil || fg.Moved != int(fg.Cost) || len(fg.Candidates) == 0 {
		t.Errorf("gc 1: %+v", fg)
	}
	if bg.Type != "BG" || bg.Policy != "cost-benefit" || bg.Victim == nil || *bg.Victim == *fg.Victim || bg.Moved != 0 {
		t.Errorf("gc 0: %+v", bg)
	}
	for _, k := range []string{"segno", "valid", "mtime", "u", "age", "cost"} {
		if _, ok := fg.Candidates[0][k]; !ok {
			t.Errorf("candidate %v has no %q", fg.Candidates[0], k)
		}
	}
	text := mustRunMain(t, append([]string{"gc"}, args[2:]...)...)
	for _, w := range []string{"checkpoint:", "gc 1: FG greedy, victim", "gc 0: BG cost-benefit, victim", "segno  valid"} {
		if !strings.Contains(text, w) {
			t.Errorf("text output lacks %q:\n%s", w, text)
		}
	}
}

func TestGCCommandUsage(t *testing.T) {
	for _, args := range [][]string{{"gc"}, {"gc", "gc"}, {"gc", "gc", "2"}, {"gc", "zero"}} {
		_, err := runMain(t, args...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("zrviz %s: %v, want a usage error", strings.Join(args, " "), err)
		}
	}
}

// TestGCCommandKernelFixture: gc --ops on the kernel fixture gives the kernel's first picks
// (gc/testdata/a-fg.trace: segment 15 at cost 208, then 8 at 225).
func TestGCCommandKernelFixture(t *testing.T) {
	var out struct {
		Ops []struct {
			Victim *uint32 `json:"victim"`
			Cost   uint32  `json:"cost"`
		} `json:"ops"`
	}
	if err := json.Unmarshal([]byte(mustRunMain(t, "gc", "--json", "--image", "../../gc/testdata/a.img.zst", "--ops", "../../gc/testdata/fg.ops")), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Ops) != 16 || out.Ops[0].Victim == nil || *out.Ops[0].Victim != 15 || out.Ops[0].Cost != 208 ||
		out.Ops[1].Victim == nil || *out.Ops[1].Victim != 8 || out.Ops[1].Cost != 225 {
		t.Errorf("ops %+v", out.Ops)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/request"
)

// TestHelpListsTheOpsLanguage: run --help and gc --help list every operation of the language, as
// its one declaration (request.Ops) gives it.
func TestHelpListsTheOpsLanguage(t *testing.T) {
	for _, cmd := range []string{"run", "gc"} {
		var stdout, stderr bytes.Buffer
		if err := Main(context.Background(), []string{cmd, "--help"}, &stdout, &stderr); err == nil {
			t.Fatalf("%s --help: no error", cmd)
		}
		text := stdout.String() + stderr.String()
		for _, s := range request.Ops() {
			if !strings.Contains(text, s.Form()) || !strings.Contains(text, s.Help) {
				t.Errorf("zrviz %s --help lacks %q (%s):\n%s", cmd, s.Form(), s.Help, text)
			}
		}
	}
}

// TestUsageListsThePlayedOps: zrviz --help has a line for each operation the engine walks (zero,
// punch, truncate), its words as the registry gives them, and names them in its first sentence
// (issue 38).
func TestUsageListsThePlayedOps(t *testing.T) {
	text := usage()
	n := 0
	for _, s := range request.Ops() {
		if !(request.Op{Kind: s.Kind}).Walks() {
			continue
		}
		n++
		if !strings.Contains(text, s.Help) || !strings.Contains(strings.SplitN(text, "Usage:", 2)[0], s.Kind) {
			t.Errorf("zrviz --help lacks %s (%s):\n%s", s.Kind, s.Help, text)
		}
		if s.Kind != request.OpZero && !strings.Contains(text, "zrviz run --op "+s.Kind+" ") {
			t.Errorf("zrviz --help has no line for run --op %s:\n%s", s.Kind, text)
		}
	}
	if n < 3 {
		t.Errorf("%d walked operations in the registry, want zero, punch and truncate at least", n)
	}
}

// TestGCAndRunOpsAgree: one ops file, run by zrviz gc --ops and by zrviz run --ops --mode
// per-block, reports the same victims, costs and moves for every gc op, and the same freed
// segments for every checkpoint: one parser, one runner.
func TestGCAndRunOpsAgree(t *testing.T) {
	ops := filepath.Join(t.TempDir(), "seq.ops")
	text := "zero /cases/contiguous.bin 0 4194304\nzero /seed/bench64.bin 1000000 3000000\ncheckpoint\ngc 1\nnow 40\ngc 0\ntune max_victim_search 2\ngc 0\nsync\ngc 1\n"
	if err := os.WriteFile(ops, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var g struct {
		Ops []map[string]json.RawMessage `json:"ops"`
	}
	if err := json.Unmarshal([]byte(mustRunMain(t, "gc", "--json", "--ops", ops)), &g); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Ops []struct {
			Op      string                       `json:"op"`
			Results []map[string]json.RawMessage `json:"results"`
		} `json:"ops"`
	}
	if err := json.Unmarshal([]byte(mustRunMain(t, "run", "--ops", ops, "--json", "--mode", "per-block")), &r); err != nil {
		t.Fatal(err)
	}
	if len(g.Ops) != 10 || len(r.Ops) != 10 {
		t.Fatalf("gc gave %d ops, run %d; want 10", len(g.Ops), len(r.Ops))
	}
	gcs := 0
	for i := range g.Ops {
		switch r.Ops[i].Op {
		case request.OpGC:
			gcs++
			for _, k := range []string{"type", "policy", "victim", "cost", "errno", "moved", "candidates"} {
				if a, b := compact(g.Ops[i][k]), compact(r.Ops[i].Results[0][k]); a != b {
					t.Errorf("op %d (gc): %s: zrviz gc says %s, zrviz run %s", i+1, k, a, b)
				}
			}
		case request.OpCheckpoint, request.OpSync:
			if a, b := compact(g.Ops[i]["freed"]), compact(r.Ops[i].Results[0]["freed"]); a != b && !(a == "[]" && b == "") {
				t.Errorf("op %d (%s): freed %s by zrviz gc, %s by zrviz run", i+1, r.Ops[i].Op, a, b)
			}
		}
	}
	if gcs != 4 {
		t.Errorf("%d gc ops compared", gcs)
	}
}

// compact is a JSON value without white space, for comparing two encoders' output.
func compact(v json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return string(v)
	}
	return b.String()
}

// TestCallNotesAsThePlayer: zrviz run's call list labels a node-free call and a run-break as the
// player's call log does (static/js/calllog.js callWhy, the same words), and a truncate's list shows
// one (issue 38).
func TestCallNotesAsThePlayer(t *testing.T) {
	js, err := os.ReadFile("../../static/js/calllog.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{whyRunBreak, whyNodeFree, "NEW_ADDR: returns at once"} {
		if !bytes.Contains(js, []byte("'"+w+"'")) {
			t.Errorf("the player's call log does not say %q", w)
		}
	}
	var stdout, stderr bytes.Buffer
	if err := Main(context.Background(), []string{"run", "--op", "truncate", "--size", "4096", "--mode", "batched", "/cases/indirect.bin"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), ")   "+whyNodeFree) {
		t.Errorf("a truncate's calls do not label truncate_node's:\n%s", stdout.String())
	}
}

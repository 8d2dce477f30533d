package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

var seqDir = filepath.Join("..", "..", "core", "testdata", "kernel-seq")

// TestRunOpsSequenceTrace: zrviz run --ops with a sequence that syncs between two zeros, held
// against the kernel's own ftrace logs of it (zr_op markers around every operation, sync included):
// every operation agrees in both modes, exit 0; the JSON names each operation and lists the dirty
// pages the second zero wrote back before its walk.
func TestRunOpsSequenceTrace(t *testing.T) {
	dir := filepath.Join(seqDir, "b-holes-partial-sync")
	ops := filepath.Join(dir, "ops")
	for mode, log := range map[string]string{"per-block": "ftrace", "batched": "ftrace.batched"} {
		out, err := runMain(t, "run", "--ops", ops, "--mode", mode, "--trace", filepath.Join(dir, log))
		if err != nil {
			t.Fatalf("%s: exit %d: %v\n%s", mode, exitCode(err), err, out)
		}
		if n := strings.Count(out, ": AGREE"); n != 3 {
			t.Errorf("%s: %d operations agree, want 3:\n%s", mode, n, out)
		}
	}
	out := mustRunMain(t, "run", "--ops", ops, "--json")
	var got struct {
		Ops []struct {
			Op      string `json:"op"`
			Results []struct {
				Mode      string `json:"mode"`
				Writeback []struct {
					Index uint64 `json:"index"`
					How   string `json:"how"`
				} `json:"writeback"`
				Pages []struct {
					Index uint64 `json:"index"`
				} `json:"pages"`
			} `json:"results"`
		} `json:"ops"`
		Unmount []struct {
			Mode  string            `json:"mode"`
			Pages []json.RawMessage `json:"pages"`
		} `json:"unmount"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Ops) != 3 || got.Ops[0].Op != "zero" || got.Ops[1].Op != "sync" || got.Ops[2].Op != "zero" {
		t.Fatalf("ops %+v", got.Ops)
	}
	for _, r := range got.Ops[1].Results {
		if len(r.Pages) != 2 || r.Pages[0].Index != 16 || r.Pages[1].Index != 64 {
			t.Errorf("sync %s wrote %+v, want pages 16 and 64", r.Mode, r.Pages)
		}
	}
	if len(got.Unmount) != 2 || got.Unmount[0].Mode != "per-block" || len(got.Unmount[0].Pages) != 0 {
		t.Errorf("unmount %+v: nothing is dirty after the last zero (whole pages)", got.Unmount)
	}
	if r := got.Ops[2].Results; len(r) != 2 || len(r[0].Writeback) != 0 {
		t.Errorf("the zero after sync wrote back %+v; the pages were clean", r)
	}
}

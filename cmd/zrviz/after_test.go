package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"

	"github.com/zrviz/zrviz/internal/imgedit"
)

// TestRunAfter: the before-image held as its own after-image differs (exit 3, the first difference
// names the file and slot); a doctored copy of the model's state is caught; another filesystem is 2.
func TestRunAfter(t *testing.T) {
	demo := testutil.DemoImage(t)
	ops := caseFile(6, "ops")
	out, err := runMain(t, "run", "--image", demo, "--ops", ops, "--mode", "per-block", "--after", demo, "--json")
	if exitCode(err) != 3 {
		t.Fatalf("the before-image as after-image: %v (exit %d), want exit 3", err, exitCode(err))
	}
	var got struct {
		Ops   []json.RawMessage `json:"ops"`
		After struct {
			Agree       bool `json:"agree"`
			Explained   []any
			Differences []struct {
				What, File, Field, Model, Image string
				Index                           *uint64
			} `json:"differences"`
		} `json:"after"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %.300s", err, out)
	}
	d := got.After.Differences
	if got.After.Agree || len(got.Ops) != 1 || len(d) == 0 || d[0].What != "slot" || d[0].File != "/cases/fragmented.bin" ||
		*d[0].Index != 0 || d[0].Field != "i_addr[0]" || d[0].Model != "NEW" || d[0].Image != "5634" {
		t.Errorf("after = %+v", got.After)
	}
	text, err := runMain(t, "run", "--image", demo, "--mode", "batched", "--after", demo, "/cases/fragmented.bin")
	if exitCode(err) != 3 || !strings.Contains(text, "/cases/fragmented.bin file block 0 (i_addr[0]): model NEW, image 5634") {
		t.Errorf("text: exit %d\n%s", exitCode(err), text)
	}
	if _, err := runMain(t, "run", "--image", demo, "--mode", "both", "--after", demo, "/cases/fragmented.bin"); exitCode(err) != 2 {
		t.Errorf("--after with both modes: %v, want a usage error", err)
	}
	if _, err := runMain(t, "run", "--image", demo, "--mode", "batched", "--after", filepath.Join(t.TempDir(), "none"), "/cases/fragmented.bin"); exitCode(err) != 2 {
		t.Errorf("a missing after-image: %v, want exit 2", err)
	}
}

// TestDiffCommand: zrviz diff of the demo and a copy with one slot and its SIT bit changed lists
// that segment and slot, in text and JSON.
func TestDiffCommand(t *testing.T) {
	a := testutil.DemoImage(t)
	b := imgedit.Copy(t, filepath.Join("..", "..", "imgio", "demo", "demo.img.zst"))
	imgedit.Edit(t, b, func(e imgedit.Editor) {
		if err := e.MoveNode(28, 4096+100*512); err != nil { // segment 100 is free in the demo
			t.Fatal(err)
		}
	})
	imgedit.Edit(t, b, func(e imgedit.Editor) {
		if err := e.SetSlot(28, 3, 0xFFFFFFFF); err != nil {
			t.Fatal(err)
		}
		if err := e.SetBlockValid(22531, false); err != nil {
			t.Fatal(err)
		}
	})
	text := mustRunMain(t, "diff", a, b)
	for _, want := range []string{"nid 28 (ino 28): block", "file block 3 (i_addr[3]): 22531 → NEW   [invalidate: f2fs_invalidate_blocks]",
		"cleared 1 bit: 22531 invalidate", "segment 100: valid 0 → 1"} {
		if !strings.Contains(text, want) {
			t.Errorf("diff text lacks %q:\n%s", want, text)
		}
	}
	var d struct {
		Segments []struct{ Segno uint32 } `json:"segments"`
		Nodes    []struct {
			File  string
			Slots []struct{ Index uint64 }
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(mustRunMain(t, "diff", "--json", a, b)), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Segments) != 3 || len(d.Nodes) != 1 || d.Nodes[0].File != "/cases/contiguous.bin" || len(d.Nodes[0].Slots) != 1 {
		t.Errorf("diff --json: %+v", d)
	}
	if _, err := runMain(t, "diff", a); exitCode(err) != 2 {
		t.Errorf("diff with one image: %v, want a usage error", err)
	}
}

// TestRunAfterKernelSeq: `zrviz run --ops --after` of every kernel-written sequence
// (core/testdata/kernel-seq/*), writes, fsync, sync and tunables included, agrees with the kernel's
// after-image in both modes (exit 0), what the writeback did explained.
func TestRunAfterKernelSeq(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: reads a 256 MiB after-image per sequence and mode")
	}
	opsFiles := testutil.NeedFixtures(t, filepath.Join("..", "..", "core", "testdata", "kernel-seq", "*", "ops"))
	demo := testutil.DemoImage(t)
	for _, ops := range opsFiles {
		dir := filepath.Dir(ops)
		base := demo
		if _, err := os.Stat(filepath.Join(dir, "before.img.zst")); err == nil {
			base = testutil.RawImage(t, filepath.Join(dir, "before.img.zst"))
		}
		for _, mode := range []string{"per-block", "batched"} {
			after := "after.img.zst"
			if mode == "batched" {
				after = "after.batched.img.zst"
			}
			// A case the oracle-gc helper ran (its own sysctl and show lines, the clock) has the
			// model's ops per kernel: model.ops, model.batched.ops.
			ops := ops
			if m := filepath.Join(dir, map[string]string{"per-block": "model.ops", "batched": "model.batched.ops"}[mode]); fileExists(m) {
				ops = m
			}
			t.Run(filepath.Base(dir)+"/"+mode, func(t *testing.T) {
				// The shared raw expansions (testutil.RawImage, which afterck's tests of the same
				// after-images use too): expanding 256 MiB of zstd per case and mode was three
				// quarters of this test's CPU, and the CLI's expansion is tested on its own.
				out, err := runMain(t, "run", "--image", base, "--ops", ops, "--mode", mode, "--after", testutil.RawImage(t, filepath.Join(dir, after)))
				if r, ok := testutil.KernelSeqRefusal(t, dir); ok {
					// The model refuses an operation of the case: the CLI says which and why, exit 1.
					if exitCode(err) != 1 || !r.Refused(err, func(error) bool { return strings.Contains(err.Error(), "not modelled") }) {
						t.Errorf("want operation %d refused naming %s (exit 1), got exit %d: %v", r.Op, r.Function, exitCode(err), err)
					}
					return
				}
				if err != nil || !strings.Contains(out, "After-image: agrees with the model.") {
					t.Errorf("exit %d (%v):\n%s", exitCode(err), err, out)
				}
			})
		}
	}
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

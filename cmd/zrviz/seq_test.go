package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"
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

// TestRunOpsGCJSON: run --ops --json gives each gc op's result in the words of issue 22, for both
// modes: {"op":"gc","type","policy","victim","cost","errno","moved","candidates":[{"segno",
// "valid","mtime","u","age","cost"}]}, and a checkpoint its freed segments.
func TestRunOpsGCJSON(t *testing.T) {
	ops := filepath.Join(t.TempDir(), "gc.ops")
	if err := os.WriteFile(ops, []byte("zero /cases/contiguous.bin 0 4194304\ncheckpoint\ngc 1\ngc 0\nnow 60\ngc 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Ops []struct {
			Op      string                       `json:"op"`
			Results []map[string]json.RawMessage `json:"results"`
		} `json:"ops"`
	}
	if err := json.Unmarshal([]byte(mustRunMain(t, "run", "--ops", ops, "--json")), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Ops) != 6 {
		t.Fatalf("%d ops", len(out.Ops))
	}
	var freed []uint32
	if err := json.Unmarshal(out.Ops[1].Results[0]["freed"], &freed); err != nil || len(freed) == 0 {
		t.Errorf("checkpoint after zeroing a whole file: freed %s (%v)", out.Ops[1].Results[0]["freed"], err)
	}
	for _, i := range []int{2, 3, 5} {
		for _, r := range out.Ops[i].Results {
			for _, k := range []string{"op", "type", "policy", "victim", "cost", "errno", "moved", "candidates"} {
				if _, ok := r[k]; !ok {
					t.Errorf("op %d: no %q in %v", i+1, k, r)
				}
			}
			var typ, policy string
			json.Unmarshal(r["type"], &typ)
			json.Unmarshal(r["policy"], &policy)
			if want := map[int]string{2: "FG greedy", 3: "BG cost-benefit", 5: "BG cost-benefit"}[i]; typ+" "+policy != want {
				t.Errorf("op %d: %s %s, want %s", i+1, typ, policy, want)
			}
			var cands []map[string]json.RawMessage
			if err := json.Unmarshal(r["candidates"], &cands); err != nil || len(cands) == 0 {
				t.Fatalf("op %d: candidates %s", i+1, r["candidates"])
			}
			for _, k := range []string{"segno", "valid", "mtime", "u", "age", "cost"} {
				if _, ok := cands[0][k]; !ok {
					t.Errorf("op %d: candidate without %q", i+1, k)
				}
			}
		}
	}
}

// TestRunTracePunchTruncate (issue 28): `zrviz run --ops --trace` holds every kernel case with a
// punch or a truncate to the kernel's own ftrace log of it, in both modes: every operation agrees,
// call for call, exit 0; a case whose operation the model refuses (its `refused` file) exits 1
// naming the kernel function.
func TestRunTracePunchTruncate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every punch and truncate case through the CLI twice")
	}
	cases := testutil.NeedFixtures(t, filepath.Join(seqDir, "*", "ops"))
	n := 0
	for _, ops := range cases {
		text, err := os.ReadFile(ops)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(text), "punch ") && !strings.Contains(string(text), "truncate ") {
			continue
		}
		dir := filepath.Dir(ops)
		if _, err := os.Stat(filepath.Join(dir, "model.ops")); err == nil {
			// A case run with the kernel's clock (its gc ops' costs read it): the CLI's --trace
			// pairs trace operation i with operation i, which the clock's now lines would shift;
			// source's TestKernelSeq holds its calls and victims.
			continue
		}
		n++
		args := []string{"run", "--ops", ops}
		if _, err := os.Stat(filepath.Join(dir, "before.img.zst")); err == nil {
			args = append(args, "--image", filepath.Join(dir, "before.img.zst"))
		}
		for mode, log := range map[string]string{"per-block": "ftrace", "batched": "ftrace.batched"} {
			t.Run(filepath.Base(dir)+"/"+mode, func(t *testing.T) {
				trace := filepath.Join(dir, log)
				if _, err := os.Stat(trace); err != nil {
					trace = testutil.RawImage(t, trace+".zst") // unpacked once per test binary
				}
				out, err := runMain(t, append(args, "--mode", mode, "--trace", trace)...)
				if r, ok := testutil.KernelSeqRefusal(t, dir); ok {
					if exitCode(err) != 1 || !r.Refused(err, func(error) bool { return strings.Contains(err.Error(), "not modelled") }) {
						t.Errorf("want operation %d refused naming %s, got exit %d: %v", r.Op, r.Function, exitCode(err), err)
					}
					return
				}
				if err != nil {
					t.Fatalf("exit %d: %v\n%s", exitCode(err), err, out)
				}
				ops := strings.Count(strings.TrimSpace(stripComments(string(text))), "\n") + 1
				if got := strings.Count(out, ": AGREE"); got != ops || strings.Contains(out, "DIVERGE") {
					t.Errorf("%d of %d operations agree:\n%s", got, ops, out)
				}
			})
		}
	}
	if n < 20 {
		t.Errorf("%d punch and truncate cases, want the issue's 20 and more", n)
	}
}

// stripComments drops an ops file's comments and blank lines.
func stripComments(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if i := strings.Index(l, "#"); i >= 0 {
			l = l[:i]
		}
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

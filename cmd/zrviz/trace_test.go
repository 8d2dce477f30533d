package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/testutil"
	"github.com/zrviz/zrviz/internal/units"
	"github.com/zrviz/zrviz/ktrace"
	"github.com/zrviz/zrviz/request"
)

var casesDir = filepath.Join("..", "..", "core", "testdata", "kernel-cases")

// The JSON of `run --json` with --trace.
type (
	divergenceJSON struct {
		Index      int        `json:"index"`
		Kernel     *[2]uint32 `json:"kernel"`
		Model      *[2]uint32 `json:"model"`
		KernelCall *int       `json:"kernelCall"`
		Slot       *uint64    `json:"slot"`
		Chunk      *int32     `json:"chunk"`
		Dnode      string     `json:"dnode"`
	}
	traceJSON struct {
		Format          string          `json:"format"`
		Op              int             `json:"op"`
		Calls           int             `json:"calls"`
		ModelCalls      int             `json:"modelCalls"`
		Expanded        bool            `json:"expanded"`
		Agree           bool            `json:"agree"`
		FirstDivergence *divergenceJSON `json:"firstDivergence"`
	}
	resultJSON struct {
		Mode        string      `json:"mode"`
		Errno       string      `json:"errno"`
		Calls       [][2]uint32 `json:"calls"`
		ValidBlocks uint64      `json:"validBlockCount"`
		Trace       *traceJSON  `json:"trace"`
		After       struct {
			Extents []imgio.Extent `json:"extents"`
		} `json:"after"`
	}
	runJSON struct {
		Path     string       `json:"path"`
		Offset   int64        `json:"offset"`
		Length   int64        `json:"length"`
		KeepSize bool         `json:"keepSize"`
		Results  []resultJSON `json:"results"`
	}
	opsJSON struct {
		Ops []runJSON `json:"ops"`
	}
)

// kernelCase is one public kernel case as the CLI test needs it.
type kernelCase struct {
	n        int
	ops      []request.Op
	perBlock [][2]uint32 // N.trace, read independently of ktrace
	batched  [][2]uint32 // N.trace.batched
	// first holds the earlier operations' calls (case 9), from the ftrace logs, per mode.
	first map[string][][][2]uint32
}

func caseFile(n int, ext string) string { return filepath.Join(casesDir, fmt.Sprintf("%d.%s", n, ext)) }

func readTraceFile(t *testing.T, name string) [][2]uint32 {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]uint32
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		c := [2]uint32{0, 1}
		f := strings.Fields(line)
		for i := range f {
			v, err := strconv.ParseUint(f[i], 10, 32)
			if err != nil {
				t.Fatalf("%s: %q", name, line)
			}
			c[i] = uint32(v)
		}
		out = append(out, c)
	}
	return out
}

func kernelCases(t *testing.T) []kernelCase {
	t.Helper()
	var out []kernelCase
	for n := 1; ; n++ {
		b, err := os.ReadFile(caseFile(n, "ops"))
		if errors.Is(err, fs.ErrNotExist) && n > 12 {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ops, err := request.ParseOps(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		kc := kernelCase{n: n, ops: ops, perBlock: readTraceFile(t, caseFile(n, "trace")),
			batched: readTraceFile(t, caseFile(n, "trace.batched")), first: map[string][][][2]uint32{}}
		for mode, ext := range map[string]string{"per-block": "ftrace", "batched": "ftrace.batched"} {
			f, err := os.Open(caseFile(n, ext))
			if err != nil {
				t.Fatal(err)
			}
			tr, err := ktrace.Parse(f, ktrace.Limits{})
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range tr.Ops[:len(tr.Ops)-1] {
				var calls [][2]uint32
				for c := range op.Calls.All() {
					calls = append(calls, [2]uint32{c.Start, c.Len})
				}
				kc.first[mode] = append(kc.first[mode], calls)
			}
		}
		out = append(out, kc)
	}
	return out
}

func (kc kernelCase) calls(mode string) [][2]uint32 {
	if mode == "batched" {
		return kc.batched
	}
	return kc.perBlock
}

// plainTrace writes the plain form of a case's trace, with the last operation's calls given: what
// the bpftrace one-liner prints ("ADDR" before 6.14, "ADDR LEN" after), with zr_op markers when the
// case has several operations.
func plainTrace(t *testing.T, kc kernelCase, mode string, last [][2]uint32) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("Attaching 1 probe...\n")
	line := func(c [2]uint32) {
		if mode == "batched" {
			fmt.Fprintf(&b, "%d %d\n", c[0], c[1])
		} else {
			fmt.Fprintf(&b, "%d\n", c[0])
		}
	}
	multi := len(kc.ops) > 1
	for i, calls := range kc.first[mode] {
		fmt.Fprintf(&b, "zr_op %d\n", i+1)
		for _, c := range calls {
			line(c)
		}
	}
	if multi {
		fmt.Fprintf(&b, "zr_op %d\n", len(kc.ops))
	}
	for _, c := range last {
		line(c)
	}
	if multi {
		b.WriteString("zr_op end\n")
	}
	name := filepath.Join(t.TempDir(), "trace.txt")
	if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// runArgs are the arguments that run the case's operations: flags for one operation, --ops for
// several (or when ops is set).
func runArgs(kc kernelCase, ops bool) []string {
	if ops || len(kc.ops) > 1 {
		return []string{"--ops", caseFile(kc.n, "ops")}
	}
	op := kc.ops[0]
	args := []string{"--offset", strconv.FormatInt(op.Offset, 10), "--length", strconv.FormatInt(op.Length, 10)}
	if op.KeepSize {
		args = append(args, "--keep-size")
	}
	return append(args, op.Path)
}

// runTraced runs zrviz run --json with a trace and returns every operation's output and the error.
func runTraced(t *testing.T, img string, kc kernelCase, mode, trace string, ops bool) ([]runJSON, error) {
	t.Helper()
	args := append([]string{"run", "--image", img, "--json", "--mode", mode, "--trace", trace}, runArgs(kc, ops)...)
	out, err := runMain(t, args...)
	var got []runJSON
	if ops || len(kc.ops) > 1 {
		var o opsJSON
		if jerr := json.Unmarshal([]byte(out), &o); jerr != nil {
			t.Fatalf("%v: %v (%v)\n%s", args, jerr, err, out)
		}
		got = o.Ops
	} else {
		var r runJSON
		if jerr := json.Unmarshal([]byte(out), &r); jerr != nil {
			t.Fatalf("%v: %v (%v)\n%s", args, jerr, err, out)
		}
		got = []runJSON{r}
	}
	if len(got) != len(kc.ops) {
		t.Fatalf("%v: %d operations in the output, want %d", args, len(got), len(kc.ops))
	}
	for i, g := range got {
		if len(g.Results) != 1 || g.Results[0].Mode != mode || g.Results[0].Trace == nil || g.Results[0].Trace.Op != i+1 {
			t.Fatalf("%v: operation %d: %+v", args, i+1, g)
		}
	}
	return got, err
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}

// TestRunTraceAgreesOnEveryKernelCase: every case's N.ftrace agrees with the per-block model and
// N.ftrace.batched with the batched model through the CLI (exit 0), given with flags, through
// --ops, and in the plain ADDR [LEN] form; case 9 through --ops with its two operations.
func TestRunTraceAgreesOnEveryKernelCase(t *testing.T) {
	img := testutil.DemoImage(t)
	for _, kc := range kernelCases(t) {
		for mode, ext := range map[string]string{"per-block": "ftrace", "batched": "ftrace.batched"} {
			t.Run(fmt.Sprintf("%d/%s", kc.n, mode), func(t *testing.T) {
				want := kc.calls(mode)
				for _, x := range []struct {
					name, trace string
					ops         bool
					format      string
				}{
					{"ftrace", caseFile(kc.n, ext), false, "ftrace"},
					{"ftrace --ops", caseFile(kc.n, ext), true, "ftrace"},
					{"plain", plainTrace(t, kc, mode, want), false, "plain"},
				} {
					got, err := runTraced(t, img, kc, mode, x.trace, x.ops)
					if err != nil {
						t.Fatalf("%s: exit %d: %v", x.name, exitCode(err), err)
					}
					for i, g := range got {
						tr := g.Results[0].Trace
						if !tr.Agree || tr.FirstDivergence != nil || tr.Format != x.format || tr.Calls != tr.ModelCalls || tr.Expanded {
							t.Errorf("%s op %d: %+v %+v", x.name, i+1, tr, tr.FirstDivergence)
						}
					}
					last := got[len(got)-1].Results[0]
					if last.Trace.Calls != len(want) || !slices.Equal(last.Calls, want) {
						t.Errorf("%s: %d kernel calls, model %d calls; N.trace has %d", x.name, last.Trace.Calls, len(last.Calls), len(want))
					}
				}
			})
		}
	}
}

// TestRunTraceDiverges: for every case with at least two calls, in both modes, a trace with its
// middle call dropped, its address changed, or (batched) its run split in two makes run exit 3 and
// report the divergence at that call, with the model's call, its slot and its dnode; the text output
// says the same.
func TestRunTraceDiverges(t *testing.T) {
	img := testutil.DemoImage(t)
	for _, kc := range kernelCases(t) {
		for _, mode := range []string{"per-block", "batched"} {
			want := kc.calls(mode)
			if len(want) < 2 {
				continue
			}
			t.Run(fmt.Sprintf("%d/%s", kc.n, mode), func(t *testing.T) {
				mid := len(want) / 2
				changed := slices.Clone(want)
				changed[mid][0] += 7
				muts := map[string][][2]uint32{
					"drop":   slices.Delete(slices.Clone(want), mid, mid+1),
					"change": changed,
				}
				if c := want[mid]; c[1] >= 2 {
					split := slices.Insert(slices.Clone(want), mid+1, [2]uint32{c[0] + 1, c[1] - 1})
					split[mid][1] = 1
					muts["split"] = split
				}
				for name, calls := range muts {
					trace := plainTrace(t, kc, mode, calls)
					got, err := runTraced(t, img, kc, mode, trace, false)
					if exitCode(err) != 3 {
						t.Fatalf("%s: exit %d (%v), want 3", name, exitCode(err), err)
					}
					tr := got[len(got)-1].Results[0].Trace
					d := tr.FirstDivergence
					var wantK *[2]uint32 // nil: the kernel's trace ends first (the last call dropped)
					if mid < len(calls) {
						wantK = &calls[mid]
					}
					if tr.Agree || d == nil || d.Index != mid || d.Model == nil || *d.Model != want[mid] ||
						(d.Kernel == nil) != (wantK == nil) || (wantK != nil && *d.Kernel != *wantK) ||
						d.Slot == nil || d.Chunk == nil || d.Dnode == "" {
						t.Errorf("%s: %+v %+v, want the divergence at %d (model %v, kernel %v)", name, tr, d, mid, want[mid], wantK)
					}
					if tr.Calls != len(calls) || tr.ModelCalls != len(want) {
						t.Errorf("%s: calls %d/%d, want %d/%d", name, tr.Calls, tr.ModelCalls, len(calls), len(want))
					}
					// The text output names the call and the place.
					args := append([]string{"run", "--image", img, "--mode", mode, "--trace", trace}, runArgs(kc, false)...)
					text, err := runMain(t, args...)
					if exitCode(err) != 3 || d == nil || d.Slot == nil ||
						!strings.Contains(text, fmt.Sprintf("DIVERGE at call #%s (index %d)", units.Group(mid+1), mid)) ||
						!strings.Contains(text, "in dnode "+d.Dnode) {
						t.Errorf("%s: text output (exit %d):\n%s", name, exitCode(err), text)
					}
				}
			})
		}
	}
}

// TestRunTraceErrors: unreadable input exits 2 with an error naming the problem; --mode both with a
// trace is a usage error.
func TestRunTraceErrors(t *testing.T) {
	img := testutil.DemoImage(t)
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(i*7919 + 13)
	}
	g := write("garbage", string(garbage))
	empty := write("empty", "")
	header := write("header", "# tracer: nop\n#\n")
	prose := write("prose", "100 2\nhello\n")
	two := write("two", "zr_op 1\n22784 256\nzr_op 2\n")
	ops := write("ops", "zero /cases/contiguous.bin 0 4096\nzero /cases/holes.bin 0 4096\n")
	badOps := write("badops", "zero /cases/contiguous.bin\n")
	one := []string{"/cases/contiguous.bin"}
	for _, x := range []struct {
		name string
		args []string
		code int
		is   error
		as   any
	}{
		{"garbage", append([]string{"--mode", "batched", "--trace", g}, one...), 2, nil, new(*ktrace.BinaryError)},
		{"empty", append([]string{"--mode", "batched", "--trace", empty}, one...), 2, ktrace.ErrEmpty, nil},
		{"header only", append([]string{"--mode", "per-block", "--trace", header}, one...), 2, ktrace.ErrEmpty, nil},
		{"garbage after calls", append([]string{"--mode", "per-block", "--trace", prose}, one...), 2, nil, new(*ktrace.SyntaxError)},
		{"missing trace", append([]string{"--mode", "per-block", "--trace", filepath.Join(dir, "absent")}, one...), 2, fs.ErrNotExist, nil},
		{"two ops for one", append([]string{"--mode", "batched", "--trace", two}, one...), 2, nil, nil},
		{"one op for two", []string{"--mode", "batched", "--trace", prose, "--ops", ops}, 2, nil, nil},
		{"both modes", append([]string{"--trace", two}, one...), 2, nil, new(usageError)},
		{"ops with a PATH", []string{"--ops", ops, "/cases/holes.bin"}, 2, nil, new(usageError)},
		{"ops with a range", []string{"--ops", ops, "--offset", "4096"}, 2, nil, new(usageError)},
		{"bad ops", []string{"--ops", badOps}, 2, nil, new(*request.LineError)},
		{"missing ops", []string{"--ops", filepath.Join(dir, "absent")}, 2, fs.ErrNotExist, nil},
	} {
		t.Run(x.name, func(t *testing.T) {
			_, err := runMain(t, append([]string{"run", "--image", img}, x.args...)...)
			if exitCode(err) != x.code {
				t.Fatalf("exit %d (%v), want %d", exitCode(err), err, x.code)
			}
			if x.is != nil && !errors.Is(err, x.is) {
				t.Errorf("%v, want %v", err, x.is)
			}
			switch target := x.as.(type) {
			case **ktrace.SyntaxError:
				if !errors.As(err, target) || (*target).Line == 0 || (*target).Want == "" {
					t.Errorf("%v, want a ktrace.SyntaxError naming the line", err)
				}
			case **ktrace.BinaryError:
				// Byte 1 of the garbage is 0xfc, no UTF-8; the line main prints says where, not the bytes.
				if want := "--trace " + g + ": ktrace: not a text trace: binary data at byte 1 (0xfc)"; !errors.As(err, target) || err.Error() != want {
					t.Errorf("%v, want %q", err, want)
				}
			case *usageError:
				if !errors.As(err, target) {
					t.Errorf("%v, want a usage error", err)
				}
			case **request.LineError:
				if !errors.As(err, target) || (*target).Line != 1 {
					t.Errorf("%v, want a request.LineError at line 1", err)
				}
			}
		})
	}
	var stderr bytes.Buffer
	if err := Main(context.Background(), []string{"run", "--help"}, &bytes.Buffer{}, &stderr); !errors.Is(err, flag.ErrHelp) ||
		!strings.Contains(stderr.String(), "Exit status") || !strings.Contains(stderr.String(), "--trace") || !strings.Contains(stderr.String(), "--ops") {
		t.Errorf("run --help (%v):\n%s", err, stderr.String())
	}
}

// TestRunOpsChainsOneMount: operations on different files run on one evolving volume — the
// reservation of one file's holes counts for the next operation — and a file zeroed earlier (here
// through a symlink to it) continues from its own slots. Both modes, JSON {"ops":[...]}.
func TestRunOpsChainsOneMount(t *testing.T) {
	img := testutil.DemoImage(t)
	ops := filepath.Join(t.TempDir(), "ops")
	// contiguous.bin's first MiB, all of holes.bin (64 NULL slots reserved), then contiguous.bin again
	// through its symlink: the first MiB is NEW now.
	const text = "# three operations on one mount\nzero /cases/contiguous.bin 0 1MiB\nzero /cases/holes.bin 0 786432\n" +
		"zero /docs/contiguous.link 0 2097152 keep_size\n"
	if err := os.WriteFile(ops, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var got opsJSON
	out := mustRunMain(t, "run", "--image", img, "--json", "--ops", ops)
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Ops) != 3 {
		t.Fatalf("%d operations", len(got.Ops))
	}
	if o := got.Ops[2]; o.Path != "/cases/contiguous.bin" || o.Length != 2097152 || !o.KeepSize {
		t.Errorf("operation 3: %+v", o)
	}
	for mi, mode := range []string{"per-block", "batched"} {
		r := func(op int) resultJSON { return got.Ops[op].Results[mi] }
		for op := range got.Ops {
			if r(op).Mode != mode || r(op).Errno != "" || r(op).Trace != nil {
				t.Fatalf("operation %d: %+v", op+1, r(op))
			}
		}
		blocks := func(op int) int {
			n := 0
			for _, c := range r(op).Calls {
				n += int(c[1])
			}
			return n
		}
		// holes.bin's 64 NULL slots are reserved on top of what the first operation left.
		if blocks(0) != 256 || blocks(1) != 128 || r(1).ValidBlocks != r(0).ValidBlocks+64 {
			t.Errorf("%s: %d and %d blocks, valid_block_count %d then %d", mode, blocks(0), blocks(1), r(0).ValidBlocks, r(1).ValidBlocks)
		}
		// Back on contiguous.bin: pages 0–255 are NEW already, only 256–511 are invalidated, and the
		// volume counters continue from holes.bin's operation.
		if blocks(2) != 256 || r(2).Calls[0][0] != 22528+256 || r(2).ValidBlocks != r(1).ValidBlocks {
			t.Errorf("%s: operation 3: %d blocks from %v, valid_block_count %d (want %d)", mode, blocks(2), r(2).Calls[:1], r(2).ValidBlocks, r(1).ValidBlocks)
		}
		if ext := r(2).After.Extents; len(ext) < 2 || ext[0] != (imgio.Extent{Index: 0, Count: 512, State: "new"}) {
			t.Errorf("%s: contiguous.bin after operation 3: %v", mode, ext)
		}
	}
	text2 := mustRunMain(t, "run", "--image", img, "--ops", ops, "--mode", "batched")
	for _, s := range []string{"operation 1 of 3", "operation 3 of 3", "/cases/holes.bin"} {
		if !strings.Contains(text2, s) {
			t.Errorf("text output lacks %q:\n%s", s, text2)
		}
	}
}

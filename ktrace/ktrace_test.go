package ktrace_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/zrviz/zrviz/internal/testutil"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/ktrace"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

const casesDir = "../core/testdata/kernel-cases"

// kcase is one public kernel case: its operations and what the kernel recorded.
type kcase struct {
	n        int
	ops      []request.Op
	perBlock []ktrace.Call // N.trace: the last operation's calls, one block each
	batched  []ktrace.Call // N.trace.batched
	ftrace   []byte        // N.ftrace
	ftraceB  []byte        // N.ftrace.batched
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(casesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readCalls reads N.trace ("ADDR" lines) or N.trace.batched ("START LEN" lines) independently of
// ktrace's parser.
func readCalls(t testing.TB, name string) []ktrace.Call {
	t.Helper()
	var out []ktrace.Call
	for _, line := range strings.Split(strings.TrimSpace(string(readFile(t, name))), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		a, err := strconv.ParseUint(f[0], 10, 32)
		if err != nil {
			t.Fatalf("%s: %q", name, line)
		}
		c := ktrace.Call{Start: uint32(a), Len: 1}
		if len(f) == 2 {
			l, err := strconv.ParseUint(f[1], 10, 32)
			if err != nil {
				t.Fatalf("%s: %q", name, line)
			}
			c.Len = uint32(l)
		}
		out = append(out, c)
	}
	return out
}

func kernelCases(t testing.TB) []kcase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(casesDir, "*.ops"))
	if err != nil || len(files) < 12 {
		t.Fatalf("kernel cases: %v (%d)", err, len(files))
	}
	var out []kcase
	for _, f := range files {
		n, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(f), ".ops"))
		if err != nil {
			t.Fatal(err)
		}
		ops, err := request.ParseOps(bytes.NewReader(readFile(t, filepath.Base(f))))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, kcase{n: n, ops: ops,
			perBlock: readCalls(t, fmt.Sprintf("%d.trace", n)),
			batched:  readCalls(t, fmt.Sprintf("%d.trace.batched", n)),
			ftrace:   readFile(t, fmt.Sprintf("%d.ftrace", n)),
			ftraceB:  readFile(t, fmt.Sprintf("%d.ftrace.batched", n))})
	}
	slices.SortFunc(out, func(a, b kcase) int { return a.n - b.n })
	return out
}

// plainForm writes calls as the bpftrace one-liner prints them: its banner, then "ADDR LEN" (or
// "ADDR" for a kernel without the length argument).
func plainForm(calls []ktrace.Call, sized bool) []byte {
	var b bytes.Buffer
	b.WriteString("Attaching 1 probe...\n")
	for _, c := range calls {
		if sized {
			fmt.Fprintf(&b, "%d %d\n", c.Start, c.Len)
		} else {
			fmt.Fprintf(&b, "%d\n", c.Start)
		}
	}
	return b.Bytes()
}

func parse(t testing.TB, b []byte) *ktrace.Trace {
	t.Helper()
	tr, err := ktrace.Parse(bytes.NewReader(b), ktrace.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestParseKernelCases: every raw ftrace log gives, for its last operation, exactly the calls of
// N.trace / N.trace.batched; the batched calls expanded give N.trace (the fixtures' claim).
func TestParseKernelCases(t *testing.T) {
	for _, kc := range kernelCases(t) {
		t.Run(strconv.Itoa(kc.n), func(t *testing.T) {
			for _, x := range []struct {
				name  string
				raw   []byte
				want  []ktrace.Call
				sized bool
			}{
				{"ftrace", kc.ftrace, kc.perBlock, false},
				{"ftrace.batched", kc.ftraceB, kc.batched, len(kc.batched) > 0},
			} {
				tr := parse(t, x.raw)
				if tr.Format != ktrace.FormatFtrace || len(tr.Ops) != len(kc.ops) || tr.Outside != 0 || tr.Sized != x.sized {
					t.Fatalf("%s: format %s, %d ops (want %d), %d outside, sized %v", x.name, tr.Format, len(tr.Ops), len(kc.ops), tr.Outside, tr.Sized)
				}
				last := &tr.Ops[len(tr.Ops)-1]
				if got := last.Calls.Slice(); !slices.Equal(got, x.want) || last.Calls.Len() != len(x.want) {
					t.Errorf("%s: %d calls, want %d (N.trace)", x.name, len(got), len(x.want))
				}
				if last.Line == 0 {
					t.Errorf("%s: the operation has no marker line", x.name)
				}
			}
			b := parse(t, kc.ftraceB)
			last := &b.Ops[len(b.Ops)-1].Calls
			if got := slices.Collect(ktrace.Expand(last.All())); !slices.Equal(got, kc.perBlock) && len(kc.perBlock) > 0 {
				t.Errorf("batched calls expanded: %d calls, want N.trace's %d", len(got), len(kc.perBlock))
			}
			for _, sized := range []bool{false, true} {
				want := kc.perBlock
				if sized {
					want = kc.batched
				}
				tr := parse(t, plainForm(want, sized))
				if tr.Format != ktrace.FormatPlain || len(tr.Ops) != 1 || !slices.Equal(tr.Ops[0].Calls.Slice(), want) {
					t.Errorf("plain (sized %v): format %s, %d ops, calls differ", sized, tr.Format, len(tr.Ops))
				}
			}
		})
	}
}

// caseRun is the model's run of one operation of a case.
type caseRun struct {
	in  core.Input
	req core.Request
	res *core.Result
}

// runCase runs every operation of a case on the demo (the fixture image), each on the state the
// previous one left.
func runCase(t testing.TB, img *imgio.Image, kc kcase, mode core.Mode) []caseRun {
	t.Helper()
	var out []caseRun
	var prev *core.Result
	for _, op := range kc.ops {
		in, err := source.Input(img, op.Path)
		if err != nil {
			t.Fatal(err)
		}
		if prev != nil {
			if next := prev.NextInput(); next.Inode.Ino == in.Inode.Ino {
				in = next
			} else {
				t.Fatalf("case %d: a later operation on another file", kc.n)
			}
		}
		req := op.Request(in.Inode.Size)
		res, err := core.Simulate(in, req, mode)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, caseRun{in, req, res})
		prev = res
	}
	return out
}

func openDemo(t testing.TB) *imgio.Image {
	t.Helper()
	img, err := imgio.OpenFileContext(context.Background(), testutil.DemoImage(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })
	return img
}

// check compares every operation of tr with the runs and returns the reports.
func check(t testing.TB, tr *ktrace.Trace, runs []caseRun) []*ktrace.Report {
	t.Helper()
	if len(tr.Ops) != len(runs) {
		t.Fatalf("trace has %d ops, the case %d", len(tr.Ops), len(runs))
	}
	var out []*ktrace.Report
	for i, r := range runs {
		rep, err := ktrace.Check(tr, i, r.in, r.req, r.res)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rep)
	}
	return out
}

// TestKernelCasesAgree: every case's N.ftrace agrees with the per-block model and N.ftrace.batched
// with the batched one, every operation of it (case 9: both), in the ftrace and the plain form. A
// per-block model also agrees with the batched trace block by block (expanded), and a batched model
// agrees with the stock trace exactly when the batched kernel made the same calls.
func TestKernelCasesAgree(t *testing.T) {
	img := openDemo(t)
	for _, kc := range kernelCases(t) {
		t.Run(strconv.Itoa(kc.n), func(t *testing.T) {
			pb, b := runCase(t, img, kc, core.PerBlock), runCase(t, img, kc, core.Batched)
			stock, patched := parse(t, kc.ftrace), parse(t, kc.ftraceB)
			multi := func(op *ktrace.Op) bool {
				return slices.ContainsFunc(op.Calls.Slice(), func(c ktrace.Call) bool { return c.Len > 1 })
			}
			for _, x := range []struct {
				name string
				tr   *ktrace.Trace
				runs []caseRun
				// agree and expanded say what operation i must give.
				agree    func(i int) bool
				expanded func(i int) bool
			}{
				{"per-block/ftrace", stock, pb, func(int) bool { return true }, func(int) bool { return false }},
				{"batched/ftrace.batched", patched, b, func(int) bool { return true }, func(int) bool { return false }},
				{"per-block/ftrace.batched", patched, pb, func(int) bool { return true }, func(i int) bool { return multi(&patched.Ops[i]) }},
				{"batched/ftrace", stock, b,
					func(i int) bool { return slices.Equal(stock.Ops[i].Calls.Slice(), patched.Ops[i].Calls.Slice()) },
					func(int) bool { return false }},
			} {
				for i, rep := range check(t, x.tr, x.runs) {
					if rep.Agree != x.agree(i) || rep.Expanded != x.expanded(i) || rep.Agree != (rep.FirstDivergence == nil) ||
						rep.Op != i+1 || rep.Format != ktrace.FormatFtrace || rep.Calls != x.tr.Ops[i].Calls.Len() {
						t.Errorf("%s op %d: %+v, divergence %+v; want agree %v, expanded %v", x.name, i+1, rep, rep.FirstDivergence, x.agree(i), x.expanded(i))
					}
					if rep.Agree && !rep.Expanded && rep.ModelCalls != rep.Calls {
						t.Errorf("%s op %d: agree with %d kernel calls and %d model calls", x.name, i+1, rep.Calls, rep.ModelCalls)
					}
				}
			}
			// The plain form of N.trace and N.trace.batched (what the bpftrace one-liner prints).
			for _, x := range []struct {
				runs  []caseRun
				calls []ktrace.Call
				sized bool
			}{{pb, kc.perBlock, false}, {b, kc.batched, true}} {
				plain := parse(t, plainForm(x.calls, x.sized))
				last := x.runs[len(x.runs)-1]
				rep, err := ktrace.Check(plain, 0, last.in, last.req, last.res)
				if err != nil {
					t.Fatal(err)
				}
				if !rep.Agree || rep.Format != ktrace.FormatPlain || rep.Calls != len(x.calls) {
					t.Errorf("%s, plain form: %+v %+v", last.res.Mode, rep, rep.FirstDivergence)
				}
			}
		})
	}
}

// TestMutationsDiverge: for every case with at least two calls, in both modes, a trace with one
// call dropped, one address changed, one extra call at the end, or (batched) one run split in two
// diverges at that call, and the divergence is placed in the slot that held the model's call's
// first block, in the dnode that holds that slot.
func TestMutationsDiverge(t *testing.T) {
	img := openDemo(t)
	for _, kc := range kernelCases(t) {
		for _, mode := range core.Modes {
			want := kc.perBlock
			if mode == core.Batched {
				want = kc.batched
			}
			if len(want) < 2 {
				continue
			}
			t.Run(fmt.Sprintf("%d/%s", kc.n, mode), func(t *testing.T) {
				runs := runCase(t, img, kc, mode)
				run := runs[len(runs)-1]
				f, err := img.Resolve(kc.ops[len(kc.ops)-1].Path)
				if err != nil {
					t.Fatal(err)
				}
				positions := []int{0, len(want) / 2, len(want) - 1}
				type mutation struct {
					name  string
					calls []ktrace.Call
					at    int
				}
				var ms []mutation
				for _, p := range positions {
					ms = append(ms, mutation{fmt.Sprintf("drop %d", p), slices.Delete(slices.Clone(want), p, p+1), p})
					changed := slices.Clone(want)
					changed[p].Start ^= 0x40000
					ms = append(ms, mutation{fmt.Sprintf("change %d", p), changed, p})
				}
				ms = append(ms, mutation{"extra", append(slices.Clone(want), ktrace.Call{Start: 60000, Len: 1}), len(want)})
				for i, c := range want {
					if c.Len >= 2 && (i == positions[0] || i == positions[1] || i == positions[2] || i == slices.IndexFunc(want, func(c ktrace.Call) bool { return c.Len >= 2 })) {
						split := slices.Insert(slices.Clone(want), i+1, ktrace.Call{Start: c.Start + c.Len/2, Len: c.Len - c.Len/2})
						split[i].Len = c.Len / 2
						ms = append(ms, mutation{fmt.Sprintf("split %d", i), split, i})
					}
				}
				for _, m := range ms {
					tr := parse(t, plainForm(m.calls, mode == core.Batched))
					if len(kc.ops) > 1 {
						// Only the last operation is mutated; the earlier ones come from the log.
						full := parse(t, kc.ftrace)
						if mode == core.Batched {
							full = parse(t, kc.ftraceB)
						}
						full.Ops[len(full.Ops)-1] = tr.Ops[0]
						tr = full
					}
					rep, err := ktrace.Check(tr, len(tr.Ops)-1, run.in, run.req, run.res)
					if err != nil {
						t.Fatal(err)
					}
					d := rep.FirstDivergence
					if rep.Agree || d == nil || d.Index != m.at || rep.Calls != len(m.calls) || rep.ModelCalls != len(want) {
						t.Errorf("%s: agree %v, divergence %+v, calls %d/%d; want index %d", m.name, rep.Agree, d, rep.Calls, rep.ModelCalls, m.at)
						continue
					}
					if m.at < len(want) {
						if d.Model == nil || *d.Model != want[m.at] {
							t.Errorf("%s: model call %v, want %v", m.name, d.Model, want[m.at])
						}
						if wantK := m.calls[min(m.at, len(m.calls)-1)]; m.at < len(m.calls) && (d.Kernel == nil || *d.Kernel != wantK) {
							t.Errorf("%s: kernel call %v, want %v", m.name, d.Kernel, wantK)
						}
						checkPlace(t, m.name, f, run.in, d)
					} else if d.Model != nil || d.Kernel == nil || d.Slot != nil || d.Dnode != "" {
						t.Errorf("%s: past the model's end: %+v", m.name, d)
					}
				}
				// A split run is invisible block by block: a per-block model agrees with it expanded.
				if mode == core.Batched {
					pbRuns := runCase(t, img, kc, core.PerBlock)
					pb := pbRuns[len(pbRuns)-1]
					for _, m := range ms {
						if !strings.HasPrefix(m.name, "split") {
							continue
						}
						tr := parse(t, plainForm(m.calls, true))
						if len(kc.ops) > 1 {
							full := parse(t, kc.ftraceB)
							full.Ops[len(full.Ops)-1] = tr.Ops[0]
							tr = full
						}
						rep, err := ktrace.Check(tr, len(tr.Ops)-1, pb.in, pb.req, pb.res)
						if err != nil {
							t.Fatal(err)
						}
						if !rep.Agree || !rep.Expanded {
							t.Errorf("%s against per-block: %+v", m.name, rep)
						}
					}
				}
			})
		}
	}
}

// checkPlace checks that the divergence's slot held the model's call's first block before the
// operation, and that its dnode is the one imgio names for that slot.
func checkPlace(t *testing.T, name string, f *imgio.File, in core.Input, d *ktrace.Divergence) {
	t.Helper()
	if d.Slot == nil || d.Chunk == nil || d.Dnode == "" {
		t.Errorf("%s: divergence not placed: %+v", name, d)
		return
	}
	start, slots, _, err := in.Slots.DnodeSlots(*d.Slot)
	if err != nil {
		t.Fatal(err)
	}
	if got := slots[*d.Slot-start]; got != d.Model.Start {
		t.Errorf("%s: slot %d held %d before the op, not the call's first block %d", name, *d.Slot, got, d.Model.Start)
	}
	dn, err := f.Dnode(*d.Slot)
	if err != nil {
		t.Fatal(err)
	}
	if dn.Path != d.Dnode {
		t.Errorf("%s: dnode %q, imgio says slot %d is in %q", name, d.Dnode, *d.Slot, dn.Path)
	}
}

func TestParseVariants(t *testing.T) {
	const hdr = "# tracer: nop\n#\n"
	for _, x := range []struct {
		name   string
		in     string
		format ktrace.Format
		ops    [][]ktrace.Call
		out    int
	}{
		{"hex values, another probe name",
			hdr + " fallocate-9 [001] d.... 12.5: myprobe: (f2fs_invalidate_blocks+0x0/0x150 [f2fs]) addr=0x5900 len=0x100\n",
			ktrace.FormatFtrace, [][]ktrace.Call{{{0x5900, 0x100}}}, 0},
		{"trace_pipe: no header, other events between",
			" kworker/0:1-30 [000] ..... 3.1: sched_switch: prev_comm=x prev_pid=30\n" +
				" fallocate-9 [000] ..... 3.2: zr: (f2fs_invalidate_blocks+0x4/0x230 [f2fs]) addr=100\n" +
				" fallocate-9 [000] ..... 3.3: other: (f2fs_truncate_blocks+0x4/0x230 [f2fs]) addr=7\n" +
				" fallocate-9 [000] ..... 3.4: zr: (f2fs_invalidate_blocks+0x4/0x230 [f2fs]) addr=101\n",
			ktrace.FormatFtrace, [][]ktrace.Call{{{100, 1}, {101, 1}}}, 0},
		{"markers split, calls outside ignored, CRLF",
			hdr + " a-1 [000] ..... 1.0: zr: (f2fs_invalidate_blocks+0x4/0x230 [f2fs]) addr=5\r\n" +
				" sh-1 [000] ..... 1.1: tracing_mark_write: zr_op 1\r\n" +
				" a-1 [000] ..... 1.2: zr: (f2fs_invalidate_blocks+0x4/0x230 [f2fs]) addr=6\r\n" +
				" sh-1 [000] ..... 1.3: tracing_mark_write: note to self\r\n" +
				" sh-1 [000] ..... 1.4: tracing_mark_write: zr_op 2\r\n" +
				" sh-1 [000] ..... 1.5: tracing_mark_write: zr_op end\r\n" +
				" a-1 [000] ..... 1.6: zr: (f2fs_invalidate_blocks+0x4/0x230 [f2fs]) addr=9\r\n",
			ktrace.FormatFtrace, [][]ktrace.Call{{{6, 1}}, {}}, 2},
		{"plain with comments, hex, markers",
			"# captured on 6.15\nzr_op 1\n0x10 4\n20\n\nzr_op 2\nzr_op end\n",
			ktrace.FormatPlain, [][]ktrace.Call{{{16, 4}, {20, 1}}, {}}, 0},
		{"bpftrace with no call", "Attaching 1 probe...\n", ktrace.FormatPlain, [][]ktrace.Call{{}}, 0},
		{"ftrace markers with no call", hdr + " sh-1 [000] ..... 1.1: tracing_mark_write: zr_op 1\n",
			ktrace.FormatFtrace, [][]ktrace.Call{{}}, 0},
	} {
		t.Run(x.name, func(t *testing.T) {
			tr := parse(t, []byte(x.in))
			if tr.Format != x.format || len(tr.Ops) != len(x.ops) || tr.Outside != x.out {
				t.Fatalf("format %s, %d ops, %d outside; want %s, %d, %d", tr.Format, len(tr.Ops), tr.Outside, x.format, len(x.ops), x.out)
			}
			for i, want := range x.ops {
				if got := tr.Ops[i].Calls.Slice(); !slices.Equal(got, want) {
					t.Errorf("op %d: %v, want %v", i+1, got, want)
				}
			}
		})
	}
}

// TestParseErrors: garbage and empty traces are refused, naming the line and what was wanted; limits
// hold; a log whose ring buffer overflowed is refused rather than compared.
func TestParseErrors(t *testing.T) {
	const hdr = "# tracer: nop\n#\n"
	ev := func(s string) string { return " zrhelper-1 [000] ..... 4.0: " + s + "\n" }
	garbage := make([]byte, 3000)
	for i := range garbage {
		garbage[i] = byte(i*131 + i>>3)
	}
	for _, x := range []struct {
		name  string
		in    string
		lim   ktrace.Limits
		empty bool
		line  int // SyntaxError line, 0: not a syntax error
		limit bool
		lost  bool
		// binary: a *BinaryError (TestParseBinary checks where)
		binary bool
	}{
		{name: "no bytes", in: "", empty: true},
		{name: "blank lines", in: "\n\n  \n", empty: true},
		{name: "comments only", in: "# nothing\n# here\n", empty: true},
		{name: "ftrace header only", in: hdr + "# entries-in-buffer/entries-written: 0/0   #P:1\n", empty: true},
		{name: "binary", in: string(garbage), binary: true},
		{name: "prose", in: "# a note\nhello world, this is not a trace\n", line: 2},
		{name: "a JSON file", in: `{"calls":[[1,2]]}`, line: 1},
		{name: "plain then garbage", in: "100 2\n101\nfoo\n", line: 3},
		{name: "three columns", in: "1 2 3\n", line: 1},
		{name: "negative", in: "-5\n", line: 1},
		{name: "over 2^32", in: "4294967296\n", line: 1},
		{name: "bad addr", in: hdr + ev("zr: (f2fs_invalidate_blocks+0x4/0x230 [f2fs]) addr=xyz"), line: 3},
		{name: "bad len", in: hdr + ev("zr: (f2fs_invalidate_blocks+0x4/0x230 [f2fs]) addr=5 len=-1"), line: 3},
		{name: "marker out of order", in: hdr + ev("tracing_mark_write: zr_op 1") + ev("tracing_mark_write: zr_op 3"), line: 4},
		{name: "marker not from 1", in: "zr_op 0\n", line: 1},
		{name: "end without op", in: "zr_op end\n", line: 1},
		{name: "line too long", in: "1\n" + strings.Repeat("9", 5000) + "\n", limit: true},
		{name: "too many lines", in: strings.Repeat("1\n", 11), lim: ktrace.Limits{MaxLines: 10}, limit: true},
		{name: "too many calls", in: strings.Repeat("1\n", 11), lim: ktrace.Limits{MaxCalls: 10}, limit: true},
		{name: "too many ops", in: "zr_op 1\nzr_op 2\nzr_op 3\n", lim: ktrace.Limits{MaxOps: 2}, limit: true},
		{name: "lost events", in: hdr + ev("zr: (f2fs_invalidate_blocks+0x4/0x230 [f2fs]) addr=5") + "CPU:0 [LOST 12 EVENTS]\n", lost: true},
		{name: "overwritten", in: "# tracer: nop\n# entries-in-buffer/entries-written: 100/160   #P:1\n", lost: true},
	} {
		t.Run(x.name, func(t *testing.T) {
			tr, err := ktrace.Parse(strings.NewReader(x.in), x.lim)
			if err == nil {
				t.Fatalf("no error; parsed %+v", tr)
			}
			var se *ktrace.SyntaxError
			var le *ktrace.LimitError
			var lost *ktrace.LostError
			switch {
			case x.empty:
				if !errors.Is(err, ktrace.ErrEmpty) {
					t.Errorf("%v, want ErrEmpty", err)
				}
			case x.line > 0:
				if !errors.As(err, &se) || se.Line != x.line || se.Want == "" || se.Text == "" {
					t.Errorf("%v, want a SyntaxError at line %d", err, x.line)
				}
			case x.limit:
				if !errors.As(err, &le) || !errors.Is(err, ktrace.ErrLimit) || le.Line == 0 {
					t.Errorf("%v, want a LimitError", err)
				}
			case x.lost:
				if !errors.As(err, &lost) || lost.Lost == 0 {
					t.Errorf("%v, want a LostError", err)
				}
			case x.binary:
				var be *ktrace.BinaryError
				if !errors.As(err, &be) {
					t.Errorf("%v, want a BinaryError", err)
				}
			}
		})
	}
}

// TestParseBinary: a trace with one byte no text holds (a control character, a byte that is not
// UTF-8), anywhere, read whole or a byte at a time, is a *BinaryError at that byte's offset; the
// same text with that byte removed parses, UTF-8 cut between reads included; a compressed trace
// is named.
func TestParseBinary(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 1))
	text := "# café ✓ naïve\n100 2\n# ünïcödé — across reads\n101\n0x1000 8\n"
	bad := []byte{0x00, 0x01, 0x1b, 0x7f, 0x80, 0xc3, 0xff, 0xfe}
	for range 200 {
		at := rng.IntN(len(text) + 1)
		for at < len(text) && text[at]&0xc0 == 0x80 {
			at++ // inside a UTF-8 sequence: a control byte there is also the sequence's end
		}
		b := bad[rng.IntN(len(bad))]
		in := text[:at] + string([]byte{b}) + text[at:]
		if b == 0xc3 && at < len(text) && text[at]&0xc0 == 0x80 {
			continue // 0xc3 then a continuation byte is a valid character
		}
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(in)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			_, err := ktrace.Parse(r, ktrace.Limits{})
			var be *ktrace.BinaryError
			if !errors.As(err, &be) || be.Off != int64(at) || be.Byte != b || be.Format != "" {
				t.Fatalf("byte 0x%02x at %d (one byte a read: %v): %v (%+v), want a BinaryError there", b, at, oneByte, err, be)
			}
			if strings.ContainsRune(err.Error(), rune(b)) || !utf8.ValidString(err.Error()) {
				t.Fatalf("byte 0x%02x at %d: the message %q carries the byte", b, at, err)
			}
		}
	}
	for _, oneByte := range []bool{false, true} {
		var r io.Reader = strings.NewReader(text)
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		if tr, err := ktrace.Parse(r, ktrace.Limits{}); err != nil || tr.Ops[0].Calls.Len() != 3 {
			t.Errorf("the text alone (one byte a read: %v): %v, want 3 calls", oneByte, err)
		}
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(text))
	zw.Close()
	_, err := ktrace.Parse(iotest.OneByteReader(&gz), ktrace.Limits{})
	var be *ktrace.BinaryError
	if !errors.As(err, &be) || be.Off != 0 || be.Format != "gzip" {
		t.Errorf("a gzipped trace: %v, want a BinaryError at 0 naming gzip", err)
	}
}

// TestCompare covers the edge cases on small lists, and the JSON of a report.
func TestCompare(t *testing.T) {
	seq := func(cs ...ktrace.Call) []ktrace.Call { return cs }
	for _, x := range []struct {
		name          string
		kernel, model []ktrace.Call
		at            int // -1: agree
		kNil, mNil    bool
	}{
		{"both empty", nil, nil, -1, false, false},
		{"same", seq(ktrace.Call{1, 2}, ktrace.Call{5, 1}), seq(ktrace.Call{1, 2}, ktrace.Call{5, 1}), -1, false, false},
		{"kernel empty", nil, seq(ktrace.Call{1, 1}), 0, true, false},
		{"model empty", seq(ktrace.Call{1, 1}), nil, 0, false, true},
		{"kernel shorter", seq(ktrace.Call{1, 1}), seq(ktrace.Call{1, 1}, ktrace.Call{2, 1}), 1, true, false},
		{"length differs", seq(ktrace.Call{1, 1}, ktrace.Call{2, 2}), seq(ktrace.Call{1, 1}, ktrace.Call{2, 3}), 1, false, false},
	} {
		c := ktrace.Compare(slices.Values(x.kernel), slices.Values(x.model))
		if c.Kernel != len(x.kernel) || c.Model != len(x.model) {
			t.Errorf("%s: counts %d/%d", x.name, c.Kernel, c.Model)
		}
		if x.at < 0 {
			if !c.Agree() {
				t.Errorf("%s: %+v, want agreement", x.name, c.First)
			}
			continue
		}
		if c.Agree() || c.First.Index != x.at || (c.First.Kernel == nil) != x.kNil || (c.First.Model == nil) != x.mNil {
			t.Errorf("%s: %+v, want index %d", x.name, c.First, x.at)
		}
	}
	if got := slices.Collect(ktrace.Expand(slices.Values(seq(ktrace.Call{10, 3}, ktrace.Call{20, 0}, ktrace.Call{30, 1})))); !slices.Equal(got,
		seq(ktrace.Call{10, 1}, ktrace.Call{11, 1}, ktrace.Call{12, 1}, ktrace.Call{20, 0}, ktrace.Call{30, 1})) {
		t.Errorf("Expand: %v", got)
	}
	k := ktrace.Call{5, 2}
	b, err := json.Marshal(ktrace.Report{Format: ktrace.FormatPlain, Op: 1, Calls: 1,
		FirstDivergence: &ktrace.Divergence{Index: 0, Kernel: &k}})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"format":"plain","op":1,"calls":1,"modelCalls":0,"expanded":false,"agree":false,"firstDivergence":{"index":0,"kernel":[5,2],"model":null,"slot":null,"chunk":null,"dnode":""}}`
	if string(b) != want {
		t.Errorf("report JSON\n%s\nwant\n%s", b, want)
	}
	var calls ktrace.Calls
	for _, c := range seq(ktrace.Call{1, 1}, ktrace.Call{2, 1}, ktrace.Call{3, 1}, ktrace.Call{9, 4}, ktrace.Call{13, 4}, ktrace.Call{4, 0}, ktrace.Call{4, 0}) {
		calls.Append(c)
	}
	if b, _ := json.Marshal(calls); string(b) != "[[1,1],[2,1],[3,1],[9,4],[13,4],[4,0],[4,0]]" || calls.Len() != 7 {
		t.Errorf("calls JSON %s (%d)", b, calls.Len())
	}
}

// BenchmarkParseCase1 parses kernel case 1's raw log: 16,384 calls, 16,398 lines (1.7 MB).
func BenchmarkParseCase1(b *testing.B) {
	raw := readFile(b, "1.ftrace")
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := ktrace.Parse(bytes.NewReader(raw), ktrace.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzParse: no input makes Parse panic, and a parsed trace is well formed.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"9.ftrace.batched", "12.ftrace", "3.ftrace"} {
		f.Add(readFile(f, name))
	}
	f.Add([]byte("Attaching 1 probe...\n1 2\nzr_op 1\n0x10\nzr_op end\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := ktrace.Parse(bytes.NewReader(b), ktrace.Limits{MaxLines: 1000, MaxCalls: 1000})
		if err != nil {
			return
		}
		if len(tr.Ops) == 0 || (tr.Format != ktrace.FormatFtrace && tr.Format != ktrace.FormatPlain) || tr.Calls()+tr.Outside > 1000 {
			t.Fatalf("parsed trace %+v", tr)
		}
	})
}

// BenchmarkCheckCase1 holds case 1's per-block log (16,384 calls) against the model's run: agreeing,
// and diverging at the last call, which walks the whole run again to place it.
func BenchmarkCheckCase1(b *testing.B) {
	img := openDemo(b)
	kc := kernelCases(b)[0]
	run := runCase(b, img, kc, core.PerBlock)[0]
	agree := parse(b, kc.ftrace)
	last := slices.Clone(kc.perBlock)
	last[len(last)-1].Start++
	diverge := parse(b, plainForm(last, false))
	for _, x := range []struct {
		name string
		tr   *ktrace.Trace
	}{{"agree", agree}, {"diverge-last", diverge}} {
		b.Run(x.name, func(b *testing.B) {
			for b.Loop() {
				rep, err := ktrace.Check(x.tr, 0, run.in, run.req, run.res)
				if err != nil || rep.Agree != (x.name == "agree") {
					b.Fatal(err, rep)
				}
			}
		})
	}
}

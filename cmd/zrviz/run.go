package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"text/tabwriter"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/internal/units"
	"github.com/zrviz/zrviz/ktrace"
	"github.com/zrviz/zrviz/request"
)

// runOutput is `zrviz run --json` for one operation, the same object as GET /api/images/{id}/run.
// With --trace every result also carries "trace" (see [runOutput.MarshalJSON]).
type runOutput struct {
	Op       string         `json:"op"` // "zero", "write", "fsync", "sync", "tune", "checkpoint", "gc", "now"
	Path     string         `json:"path"`
	Offset   int64          `json:"offset"`
	Length   int64          `json:"length"`
	KeepSize bool           `json:"keepSize"`
	Results  []*core.Result `json:"results"`
	// Others are the results of an operation other than a zero, one per mode.
	Others []*core.WriteResult `json:"-"`
	// Writeback[i] lists the dirty pages a zero wrote back before its walk in Modes[i].
	Writeback [][]core.PageWrite `json:"-"`
	// Balance[i] is the garbage collection f2fs_balance_fs ran inside the operation in Modes[i]
	// (nil: none; the volume had enough free sections).
	Balance []*gc.Pick `json:"-"`
	// Traces[i], when present, is the kernel trace held against mode Modes[i].
	Traces []*ktrace.Report `json:"-"`
	Modes  []core.Mode      `json:"-"`

	sizeBefore int64 // i_size before the operation, for the text header
	gcSync     int   // a gc op's argument
}

// MarshalJSON writes the run object; with traces each result gets its "trace" object, and a zero
// that wrote dirty pages back before its walk its "writeback" list.
func (o runOutput) MarshalJSON() ([]byte, error) {
	trace := func(i int) *ktrace.Report {
		if i < len(o.Traces) {
			return o.Traces[i]
		}
		return nil
	}
	if !walks(o.Op) {
		type result struct {
			*core.WriteResult
			Mode  core.Mode      `json:"mode"`
			Trace *ktrace.Report `json:"trace,omitempty"`
		}
		// A gc op's result is its pick, as issue 22 words it ({"op":"gc","type","policy",
		// "victim","cost","errno","moved","candidates"}), with the mode and trace.
		type gcResult struct {
			*gc.Pick
			Mode  core.Mode      `json:"mode"`
			Trace *ktrace.Report `json:"trace,omitempty"`
		}
		rs := make([]any, len(o.Others))
		for i, r := range o.Others {
			if r.GC != nil {
				rs[i] = gcResult{Pick: r.GC, Mode: o.Modes[i], Trace: trace(i)}
				continue
			}
			rs[i] = result{WriteResult: r, Mode: o.Modes[i], Trace: trace(i)}
		}
		return json.Marshal(struct {
			Op      string `json:"op"`
			Path    string `json:"path,omitempty"`
			Offset  int64  `json:"offset,omitempty"`
			Length  int64  `json:"length,omitempty"`
			Results []any  `json:"results"`
		}{o.Op, o.Path, o.Offset, o.Length, rs})
	}
	// A zero's results: core.Result's one encoder (Result.WriteJSON), with the writeback before
	// the walk, f2fs_balance_fs's collection and the trace as extra members.
	var rs bytes.Buffer
	rs.WriteByte('[')
	for i, r := range o.Results {
		if i > 0 {
			rs.WriteByte(',')
		}
		var x struct {
			Writeback []core.PageWrite `json:"writeback,omitempty"`
			BalanceGC *gc.Pick         `json:"balanceGC,omitempty"`
			Trace     *ktrace.Report   `json:"trace,omitempty"`
		}
		if i < len(o.Writeback) {
			x.Writeback = o.Writeback[i]
		}
		if i < len(o.Balance) {
			x.BalanceGC = o.Balance[i]
		}
		x.Trace = trace(i)
		extra, err := core.Members(x)
		if err != nil {
			return nil, err
		}
		if err := r.WriteJSON(&rs, extra); err != nil {
			return nil, err
		}
	}
	rs.WriteByte(']')
	var size *int64
	if ps, ok := request.PlayedSpec(o.Op); ok && ps.Played.Range == request.RangeToSize {
		size = &o.Offset // a truncate's new size (its offset says the same), as the API writes it
	}
	return json.Marshal(struct {
		Op       string          `json:"op"`
		Path     string          `json:"path"`
		Offset   int64           `json:"offset"`
		Length   int64           `json:"length"`
		KeepSize bool            `json:"keepSize"`
		Size     *int64          `json:"size,omitempty"`
		Results  json.RawMessage `json:"results"`
	}{cmp.Or(o.Op, request.OpZero), o.Path, o.Offset, o.Length, o.KeepSize, size, rs.Bytes()})
}

// walks says whether the op kind is an engine walk with a core.Result (zero, punch, truncate; ""
// is a zero).
func walks(kind string) bool { return kind == "" || (request.Op{Kind: kind}).Walks() }

// opsOutput is `zrviz run --ops FILE --json`: one runOutput per operation, in order.
type opsOutput struct {
	Ops []runOutput `json:"ops"`
	// Unmount is, per mode, what a clean unmount after the last operation writes back.
	Unmount []unmountOutput `json:"unmount"`
}

type unmountOutput struct {
	Mode core.Mode `json:"mode"`
	*core.WriteResult
}

// runSynopsis is the run command's usage lines: one per range rule of the played operations
// (request.Played) that some op has, the default's (a zero's) first with its --op optional, then
// --ops.
func runSynopsis() string {
	var lines []string
	for _, rule := range request.RangeRules() {
		var kinds []string
		var flags []string
		optional := false
		for _, s := range request.Playable() {
			if s.Played.Range != rule {
				continue
			}
			kinds = append(kinds, s.Kind)
			optional = optional || s.Kind == request.OpZero
			for _, f := range runFlags {
				if slices.Contains(s.Played.Fields(), f.field) && !slices.Contains(flags, f.flag) {
					flags = append(flags, f.flag)
				}
			}
		}
		if len(kinds) == 0 {
			continue
		}
		w := []string{"--op " + strings.Join(kinds, "|")}
		for _, f := range flags {
			if f != "--keep-size" {
				f += " N"
			}
			w = append(w, f)
		}
		l := strings.Join(w, " ")
		if optional { // the default's flags are all optional
			l = "[" + strings.Join(w, "] [") + "]"
		}
		lines = append(lines, "run [--image IMG] [--json | --csv] [--mode per-block|batched|both] "+l+" [--trace FILE] [--after AFTER] PATH")
	}
	lines = append(lines, "run --ops FILE [--image IMG] [--json] [--mode per-block|batched|both] [--trace FILE] [--after AFTER]")
	return strings.Join(lines, "\n       zrviz ")
}

// runOpsHelp lists the ops language, from its one declaration (request.Ops).
func runOpsHelp() string {
	return "\nThe ops language (--ops FILE, one operation a line):\n" + request.HelpLines("  ")
}

const runExitStatus = `
Exit status: 0 when the run(s) finished (with --trace: every operation agrees with the kernel's
trace; with --after: the after-image agrees with the model); 3 with --trace when an operation
diverges from it, with --after when the after-image differs; 2 for a usage error, an unreadable
--ops or --trace file, or an --after image that is unreadable or of another filesystem; 1 for any
other error (an unreadable image, a path that does not exist).
`

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", runSynopsis(), stderr)
	usage := fs.Usage
	fs.Usage = func() { usage(); fmt.Fprint(stderr, runOpsHelp(), runExitStatus) }
	image := imageFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON: {\"op\":\"zero\",\"path\",\"offset\",\"length\",\"keepSize\",\"results\":[...]}, one result per mode; with --ops {\"ops\":[...]}, one object per operation (a zero as above, with \"writeback\" when dirty pages were written back first; write, fsync, sync, tune as {\"op\",\"path\",\"results\":[{\"errno\",\"pages\",...}]})")
	asCSV := fs.Bool("csv", false, "print the calls as CSV, the header mode,index,start,len and a row per f2fs_invalidate_blocks call of each mode (index from 1), as GET /api/images/{id}/run?…&format=csv does")
	mode := fs.String("mode", "both", "`MODE`: per-block (upstream), batched (the patch) or both")
	offset := fs.String("offset", "", "byte offset `N` of the range: decimal, 0x hex or with a unit (4096, 0x1000, 1MiB; default 0)")
	length := fs.String("length", "", "byte length `N` of the range, same syntax (default: to the end of the file; 0 when the offset is at or past it, which the kernel refuses with EINVAL)")
	keepSize := fs.Bool("keep-size", false, "FALLOC_FL_KEEP_SIZE: do not grow i_size")
	op := fs.String("op", request.OpZero, "`OP`: "+playedUsage())
	size := fs.String("size", "", "the new size `N` of an --op that cuts the file to a size (truncate), same syntax as --offset")
	opsFile := fs.String("ops", "", "run the operations of `FILE` in order, each on the state the previous one left, "+
		"one a line of the ops language (below; the kernel fixtures' ops files), instead of one PATH")
	traceFile := fs.String("trace", "", "compare the kernel's f2fs_invalidate_blocks calls recorded in `FILE` "+
		"(ftrace text of a kprobe, or ADDR [LEN] lines; zr_op markers split operations) with the model's "+
		"for --mode, which must be per-block or batched; see the README's \"Check your kernel\"")
	afterFile := fs.String("after", "", afterUsage)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	modes, err := request.ParseModes(*mode)
	if err != nil {
		return flagError(err)
	}
	switch {
	case *asCSV && *asJSON:
		return usageError{"--csv and --json are two forms of the answer: choose one"}
	case *asCSV && (*opsFile != "" || *traceFile != ""):
		return usageError{"--csv is the calls of one operation: run without --ops and --trace (--json carries those)"}
	}
	var runs []request.Op
	if *opsFile != "" {
		switch {
		case fs.NArg() != 0:
			return usageError{fmt.Sprintf("--ops %s names the paths itself: no PATH argument (got %q)", *opsFile, fs.Args())}
		case *offset != "" || *length != "" || *keepSize || *size != "" || *op != request.OpZero:
			return usageError{"--op, --offset, --length, --size and --keep-size describe one PATH: with --ops every line gives its own"}
		}
		if runs, err = readOps(*opsFile); err != nil {
			return err
		}
	} else {
		if fs.NArg() != 1 {
			return usageError{fmt.Sprintf("run takes one PATH inside the image (got %d arguments), e.g. zrviz run /seed/bench64.bin", fs.NArg())}
		}
		given := map[string]bool{request.FieldOffset: *offset != "", request.FieldLength: *length != "",
			request.FieldKeepSize: *keepSize, request.FieldSize: *size != ""}
		if err := playedFlags(*op, given); err != nil {
			return err
		}
		fields := map[string]string{request.FieldPath: fs.Arg(0), request.FieldOffset: *offset,
			request.FieldLength: *length, request.FieldMode: *mode, request.FieldOp: *op, request.FieldSize: *size}
		if *keepSize {
			fields[request.FieldKeepSize] = "true"
		}
		run, err := request.Parse(func(k string) string { return fields[k] })
		if err != nil {
			return flagError(err)
		}
		runs = []request.Op{request.RunOp(run)}
	}
	for i := range runs {
		runs[i].Modes = modes
	}
	var tr *ktrace.Trace
	if *traceFile != "" {
		if len(modes) != 1 {
			return usageError{"--trace holds the kernel's calls against one mode: add --mode per-block (a stock kernel) or --mode batched (a kernel with the patch)"}
		}
		if tr, err = readTrace(*traceFile, len(runs)); err != nil {
			return err
		}
	}
	if *afterFile != "" && len(modes) != 1 {
		return usageError{"--after holds the kernel's after-image against one mode: add --mode per-block (a stock kernel) or --mode batched (a kernel with the patch)"}
	}
	img, err := openImage(ctx, *image)
	if err != nil {
		return err
	}
	defer img.Close()
	outs, unmounts, err := runSequence(ctx, img, runs, modes, tr)
	if err != nil {
		return err
	}
	if *asCSV {
		return core.WriteCallsCSV(stdout, outs[0].Results...)
	}
	if *afterFile != "" {
		rep, err := checkAfter(ctx, img, *afterFile, outs, *opsFile, modes[0])
		if err != nil {
			return err
		}
		if err := writeRunsAfter(stdout, outs, unmounts, tr, *opsFile != "", *asJSON, rep); err != nil {
			return err
		}
		return afterVerdict(rep, outs)
	}
	if err := writeRuns(stdout, outs, unmounts, tr, *opsFile != "", *asJSON); err != nil {
		return err
	}
	return traceVerdict(outs)
}

// writeRuns prints the operations' outputs: one run object, or {"ops":[...]} with --ops.
func writeRuns(w io.Writer, outs []runOutput, unmounts []*core.WriteResult, tr *ktrace.Trace, ops, asJSON bool) error {
	if asJSON {
		// Compact: a per-block call list over a large file is long.
		if ops {
			o := opsOutput{Ops: outs, Unmount: []unmountOutput{}}
			for i, u := range unmounts {
				o.Unmount = append(o.Unmount, unmountOutput{Mode: outs[0].Modes[i], WriteResult: u})
			}
			return json.NewEncoder(w).Encode(o)
		}
		return json.NewEncoder(w).Encode(outs[0])
	}
	if tr != nil && tr.Outside > 0 {
		fmt.Fprintf(w, "The trace holds %s outside its zr_op markers (before the first or after zr_op end): not compared.\n\n",
			plural(tr.Outside, "call"))
	}
	for i, out := range outs {
		if ops {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "── operation %d of %d ──\n", i+1, len(outs))
		}
		if !walks(out.Op) {
			writeOtherText(w, out)
		} else if err := writeRunText(w, out, out.sizeBefore); err != nil {
			return err
		}
		writeTraceText(w, out)
	}
	if ops && len(unmounts) > 0 && len(unmounts[0].Pages) > 0 {
		fmt.Fprintf(w, "\n── at unmount ──\nthe pages still dirty are written back (what an image taken after the operations holds):\n")
		writePages(w, unmounts[0].Pages)
	}
	return nil
}

func writeRunText(w io.Writer, out runOutput, sizeBefore int64) error {
	ps, _ := request.PlayedSpec(out.Op)
	played := request.Played{}
	if ps.Played != nil {
		played = *ps.Played
	}
	fmt.Fprintf(w, "%s: %s", out.Path, played.Describe(core.Request{Offset: out.Offset, Length: out.Length, KeepSize: out.KeepSize}))
	if played.Range == request.RangeOffsetLength && out.Length > 0 && out.Offset >= 0 && out.Offset <= math.MaxInt64-out.Length {
		fmt.Fprintf(w, "  [%s, %s)", units.Bytes(out.Offset), units.Bytes(out.Offset+out.Length))
	}
	fmt.Fprintf(w, " of a %s file\n\n", units.Bytes(sizeBefore))
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', tabwriter.AlignRight)
	header := "\t"
	for _, r := range out.Results {
		header += r.Mode.String() + "\t"
	}
	fmt.Fprintln(tw, header)
	row := func(label string, f func(r *core.Result) string) {
		line := fmt.Sprintf("%-34s\t", label)
		for _, r := range out.Results {
			line += f(r) + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	row("result", func(r *core.Result) string {
		if r.Errno == "" {
			return "OK"
		}
		return r.Errno
	})
	row("f2fs_invalidate_blocks calls", func(r *core.Result) string { return units.Group(r.Stats.Calls) })
	row("SIT lock acquisitions", func(r *core.Result) string { return units.Group(r.Stats.SITLockAcquisitions) })
	row("blocks invalidated", func(r *core.Result) string { return units.Group(r.Stats.BlocksInvalidated) })
	row("slots visited (addr/new/null)", func(r *core.Result) string {
		return fmt.Sprintf("%s/%s/%s", units.Group(r.Stats.SlotsAddr), units.Group(r.Stats.SlotsNew), units.Group(r.Stats.SlotsNull))
	})
	row("reserved NULL → NEW", func(r *core.Result) string { return units.Group(r.Stats.Reserved) })
	if played.FreesNodes {
		row("nodes freed (truncate_node)", func(r *core.Result) string { return units.Group(r.Stats.NodesFreed) })
	}
	if played.Skips {
		row("addresses skipped (not valid)", func(r *core.Result) string { return units.Group(r.Stats.SlotsSkipped) })
	}
	row("dnode chunks", func(r *core.Result) string { return units.Group(r.Stats.DnodeChunks) })
	row("physical runs", func(r *core.Result) string { return units.Group(r.Stats.Runs) })
	row("segments touched / became prefree", func(r *core.Result) string {
		return fmt.Sprintf("%d / %d", r.Stats.SegmentsTouched, r.Stats.SegmentsPrefree)
	})
	row("i_size after", func(r *core.Result) string { return units.Group(r.SizeAfter) })
	row("i_blocks after", func(r *core.Result) string { return units.Group(r.BlocksAfter) })
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range out.Results {
		if r.Message != "" {
			fmt.Fprintf(w, "\n%s: kernel log: %s\n", r.Mode, r.Message)
		}
	}
	if len(out.Results) == 2 {
		pb, b := out.Results[0].Stats.SITLockAcquisitions, out.Results[1].Stats.SITLockAcquisitions
		if b > 0 && pb > b {
			fmt.Fprintf(w, "\nThe batched mode takes the SIT lock %s instead of %s times (%.1f× fewer).\n",
				times(b), units.Group(pb), float64(pb)/float64(b))
		}
	}
	for i, pages := range out.Writeback {
		if len(pages) == 0 {
			continue
		}
		who := out.Modes[i].String()
		if len(out.Writeback) == 2 && slices.Equal(out.Writeback[0], out.Writeback[1]) {
			if i == 1 {
				break
			}
			who = "both modes"
		}
		fmt.Fprintf(w, "\n%s: before the walk, filemap_write_and_wait_range wrote back %s:\n", who, plural(len(pages), "dirty page"))
		writePages(w, pages)
	}
	for _, r := range out.Results {
		writeCalls(w, r, 8)
	}
	for i, p := range out.Balance {
		if p != nil {
			fmt.Fprintf(w, "\n%s: the volume is short of free sections: f2fs_balance_fs ran garbage collection (f2fs_gc):\n  ", out.Modes[i])
			writeGCStep(w, stringer("f2fs_gc"), p)
			for _, r := range p.Rounds {
				v := "none (ENODATA)"
				if r.Victim != nil {
					v = fmt.Sprintf("%d, cost %d, %d blocks moved", *r.Victim, r.Cost, r.Moved)
				}
				fmt.Fprintf(w, "  then %s %s: victim %s\n", r.Type, r.Policy, v)
			}
			for k, f := range p.Checkpoints {
				fmt.Fprintf(w, "  checkpoint %d inside: %d segments made free %v\n", k+1, len(f), f)
			}
		}
	}
	return nil
}

// writeOtherText describes an operation other than a zero: what it reserved and wrote back.
func writeOtherText(w io.Writer, out runOutput) {
	line := out.Op
	switch out.Op {
	case request.OpWrite:
		line = fmt.Sprintf("%s: write(offset %s, length %s), buffered", out.Path, units.Group(out.Offset), units.Group(out.Length))
	case request.OpFsync:
		line = out.Path + ": fsync"
	case request.OpSync:
		line = "sync"
	case request.OpTune:
		line = "tune"
	}
	fmt.Fprintln(w, line)
	for i, r := range out.Others {
		if r.GC != nil {
			fmt.Fprintf(w, "  %s: ", out.Modes[i])
			writeGCStep(w, stringer(request.GCOpLine(gc.Op{Verb: request.OpGC, Sync: out.gcSync})), r.GC)
			continue
		}
		res := "OK"
		if r.Errno != "" {
			res = r.Errno
		}
		fmt.Fprintf(w, "  %s: %s", out.Modes[i], res)
		if out.Op == request.OpCheckpoint {
			fmt.Fprintf(w, ", %d segments made free %v, %d blocks moved", len(r.Freed), r.Freed, r.Moved)
		}
		if out.Op == request.OpWrite {
			fmt.Fprintf(w, ", %s written, %s reserved, %s nodes allocated, i_size %s, i_blocks %s", units.Group(r.Written),
				units.Group(r.Reserved), units.Group(r.NodesAlloc), units.Group(r.SizeAfter), units.Group(r.BlocksAfter))
		}
		fmt.Fprintln(w)
		writePages(w, r.Pages)
	}
}

// writePages lists the dirty pages writeback wrote (the first 8, then how many more).
func writePages(w io.Writer, pages []core.PageWrite) {
	for i, p := range pages {
		if i == 8 {
			fmt.Fprintf(w, "    … %s more\n", units.Group(len(pages)-8))
			break
		}
		switch p.How {
		case core.WroteInPlace:
			fmt.Fprintf(w, "    %s page %s written back in place at block %d\n", p.Path, units.Group(p.Index), p.New)
		case core.WroteOutPlace:
			old := "NEW_ADDR"
			if p.Old != core.NewAddr {
				old = fmt.Sprintf("block %d (released in the allocator, no f2fs_invalidate_blocks call)", p.Old)
			}
			fmt.Fprintf(w, "    %s page %s written back out of place to block %d (%s log, segment %d), was %s\n",
				p.Path, units.Group(p.Index), p.New, p.Log, p.Segno, old)
		default:
			fmt.Fprintf(w, "    %s page %s not written (%s)\n", p.Path, units.Group(p.Index), p.How)
		}
	}
}

// writeCalls lists the first max calls of r and how many follow.
func writeCalls(w io.Writer, r *core.Result, max int) {
	n := r.Calls.Len()
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s calls (%s):\n", r.Mode, units.Group(n))
	i := 0
	for c := range r.Calls.All() {
		if i == max {
			fmt.Fprintf(w, "  … %s more\n", units.Group(n-uint64(max)))
			break
		}
		start := strconv.FormatUint(uint64(c.Start), 10)
		note := reasonNote(c.Reason)
		if c.Start == core.NewAddr {
			// As the player's call log says it (static/js/calllog.js callWhy).
			start, note = "NEW_ADDR", "   NEW_ADDR: returns at once"+strings.Replace(note, "   ", " · ", 1)
		}
		fmt.Fprintf(w, "  f2fs_invalidate_blocks(%s, %d)%s\n", start, c.Len, note)
		i++
	}
}

// The call log's words for a batched call a NULL slot caused and for truncate_node's call, the same
// in the player's call log.
const (
	whyRunBreak = "run-break: a NULL or skipped slot ends the run"
	whyNodeFree = "node-free: truncate_node frees its node block"
)

func reasonNote(a core.Action) string {
	switch a {
	case core.ActDiscontiguous:
		return "   next address not contiguous"
	case core.ActEndOfChunk:
		return "   end of dnode chunk"
	case core.ActFlushOnError:
		return "   flushed after an error"
	// The player's words for these (static/js/calllog.js callWhy; TestCallNotesAsThePlayer).
	case core.ActRunBreak:
		return "   " + whyRunBreak
	case core.ActNodeFree:
		return "   " + whyNodeFree
	}
	return ""
}

// times says how often: "once", "twice", "19 times".
func times(n uint64) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return units.Group(n) + " times"
}

// flagError names a request field by the flag or argument that gave it.
func flagError(err error) error {
	var fe *request.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	name := map[string]string{request.FieldPath: "PATH", request.FieldOffset: "--offset", request.FieldLength: "--length",
		request.FieldMode: "--mode", request.FieldKeepSize: "--keep-size", request.FieldOp: "--op", request.FieldSize: "--size"}[fe.Field]
	if name == "" {
		name = fe.Field
	}
	return usageError{(&request.FieldError{Field: name, Value: fe.Value, Msg: fe.Msg}).Error()}
}

// runFlags are the run command's flags of the run query's fields.
var runFlags = []struct{ field, flag string }{
	{request.FieldOffset, "--offset"}, {request.FieldLength, "--length"}, {request.FieldKeepSize, "--keep-size"}, {request.FieldSize, "--size"},
}

// playedFlags refuses a flag the played operation kind does not read (its declaration's fields,
// request.Played); an unknown kind is request.Parse's to refuse.
func playedFlags(kind string, given map[string]bool) error {
	ps, ok := request.PlayedSpec(kind)
	if !ok {
		return nil
	}
	p := ps.Played
	var takes, extra []string
	for _, f := range runFlags {
		switch {
		case slices.Contains(p.Fields(), f.field):
			takes = append(takes, f.flag)
		case given[f.field]:
			if f.field == request.FieldKeepSize && p.KeepsSize {
				return usageError{fmt.Sprintf("--op %s always carries FALLOC_FL_KEEP_SIZE: no --keep-size", ps.Kind)}
			}
			extra = append(extra, f.flag)
		}
	}
	if len(extra) > 0 {
		return usageError{fmt.Sprintf("--op %s takes %s, not %s", ps.Kind, strings.Join(takes, ", "), strings.Join(extra, ", "))}
	}
	return nil
}

// playedUsage is the --op flag's help: each played operation, its call and its flags.
func playedUsage() string {
	var w []string
	for _, s := range request.Playable() {
		p := s.Played
		var flags []string
		for _, f := range runFlags {
			if slices.Contains(p.Fields(), f.field) {
				flags = append(flags, f.flag)
			}
		}
		w = append(w, fmt.Sprintf("%s (%s: %s)", s.Kind, p.Call(), strings.Join(flags, ", ")))
	}
	return strings.Join(w, ", ")
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"text/tabwriter"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/internal/units"
	"github.com/zrviz/zrviz/sim"
)

type runOutput struct {
	Path     string         `json:"path"`
	Offset   int64          `json:"offset"`
	Length   int64          `json:"length"`
	KeepSize bool           `json:"keepSize"`
	Results  []*core.Result `json:"results"`
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", "run [--image IMG] [--json] [--mode per-block|batched|both] [--offset N] [--length N] [--keep-size] PATH", stderr)
	image := imageFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON: {\"path\",\"offset\",\"length\",\"keepSize\",\"results\":[...]}, one result per mode")
	mode := fs.String("mode", "both", "`MODE`: per-block (upstream), batched (the patch) or both")
	var offset, length sizeFlag
	fs.Var(&offset, "offset", "byte offset `N` of the range (e.g. 4096, 0x1000, 1MiB; default 0)")
	fs.Var(&length, "length", "byte length `N` of the range (default: to the end of the file)")
	keepSize := fs.Bool("keep-size", false, "FALLOC_FL_KEEP_SIZE: do not grow i_size")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"run takes exactly one PATH inside the image, e.g. zrviz run /seed/bench64.bin"}
	}
	modes, err := parseModes(*mode)
	if err != nil {
		return err
	}
	img, err := openImage(*image)
	if err != nil {
		return err
	}
	defer img.Close()
	in, err := sim.Input(img, fs.Arg(0))
	if err != nil {
		return err
	}
	req := core.Request{Offset: offset.n, Length: length.n, KeepSize: *keepSize}
	if !length.set {
		// To the end of the file; at or past EOF this is ≤ 0, which the kernel refuses with EINVAL,
		// and so does the engine.
		req.Length = in.Inode.Size - req.Offset
	}
	out := runOutput{Path: in.Path, Offset: req.Offset, Length: req.Length, KeepSize: req.KeepSize}
	for _, m := range modes {
		if err := ctx.Err(); err != nil {
			return err
		}
		res, err := core.Simulate(in, req, m)
		if err != nil {
			return err
		}
		out.Results = append(out.Results, res)
	}
	if *asJSON {
		// Compact: a per-block call list over a large file is long.
		return json.NewEncoder(stdout).Encode(out)
	}
	return writeRunText(stdout, out, in.Inode.Size)
}

// parseModes reads --mode: both means per-block first, as the JSON promises.
func parseModes(s string) ([]core.Mode, error) {
	if s == "both" {
		return core.Modes[:], nil
	}
	m, err := core.ParseMode(s)
	if err != nil {
		return nil, usageError{fmt.Sprintf("--mode %q: want per-block, batched or both", s)}
	}
	return []core.Mode{m}, nil
}

func writeRunText(w io.Writer, out runOutput, sizeBefore int64) error {
	fmt.Fprintf(w, "%s: fallocate(ZERO_RANGE%s, offset %s, length %s)  [%s, %s) of a %s file\n\n",
		out.Path, map[bool]string{true: "|KEEP_SIZE"}[out.KeepSize], units.Group(out.Offset), units.Group(out.Length),
		units.Bytes(out.Offset), units.Bytes(out.Offset+out.Length), units.Bytes(sizeBefore))
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
	for _, r := range out.Results {
		writeCalls(w, r, 8)
	}
	return nil
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
		fmt.Fprintf(w, "  f2fs_invalidate_blocks(%d, %d)%s\n", c.Start, c.Len, reasonNote(c.Reason))
		i++
	}
}

func reasonNote(a core.Action) string {
	switch a {
	case core.ActDiscontiguous:
		return "   next address not contiguous"
	case core.ActEndOfChunk:
		return "   end of dnode chunk"
	case core.ActFlushOnError:
		return "   flushed after an error"
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

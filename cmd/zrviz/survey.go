package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/internal/units"
	"github.com/zrviz/zrviz/survey"
)

const surveySynopsis = `survey [--image IMG] [--json | --csv] [--top N] [--per-call µs] [--per-block µs]`

// surveyProgressAfter is how long a survey runs before it reports its progress on stderr (a small
// image finishes first and prints nothing there), and then how often.
const surveyProgressAfter = time.Second

func cmdSurvey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("survey", surveySynopsis, stderr)
	image := imageFlag(fs)
	asJSON := fs.Bool("json", false, `print every row and the totals as JSON: {"files":[{"path","size","ops":{"zero"|"punch"|"truncate":{"per-block":{…},"batched":{…}}}}],"totals":{…},…}, each mode's object with zrviz run --json's stats names and "errno", "error", "refused"`)
	asCSV := fs.Bool("csv", false, "print every row as CSV: path, ino, size, compressed, error, then per operation and mode its errno, error, refused, counters and estimatedMs")
	top := fs.Int("top", 10, "how many files and directories the text lists (`N`)")
	def := survey.DefaultCosts()
	perCallFlag := fs.String("per-call", "", fmt.Sprintf("estimated cost of one f2fs_invalidate_blocks call in `µs` (default %.4f, from the seed's measurement)", def.PerCallMicros))
	perBlockFlag := fs.String("per-block", "", fmt.Sprintf("estimated cost of invalidating one block in `µs` (default %.4f, from the seed's measurement)", def.PerBlockMicros))
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cost := func(name, v string, d float64) (float64, error) {
		if v == "" {
			return d, nil
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, usageError{fmt.Sprintf("--%s %q: want a number of µs", name, v)}
		}
		return x, nil
	}
	perCall, err := cost("per-call", *perCallFlag, def.PerCallMicros)
	if err != nil {
		return err
	}
	perBlock, err := cost("per-block", *perBlockFlag, def.PerBlockMicros)
	if err != nil {
		return err
	}
	switch {
	case fs.NArg() != 0:
		return usageError{fmt.Sprintf("survey takes no PATH: it surveys every regular file (got %q)", fs.Args())}
	case *asCSV && *asJSON:
		return usageError{"--csv and --json are two forms of the answer: choose one"}
	case *top < 0:
		return usageError{"--top must be 0 or more"}
	case perCall < 0 || perBlock < 0:
		return usageError{"--per-call and --per-block are costs: 0 or more"}
	}
	costs := def
	if perCall != def.PerCallMicros || perBlock != def.PerBlockMicros {
		costs = survey.Costs{PerCallMicros: perCall, PerBlockMicros: perBlock, Source: "an estimate from the costs given (--per-call, --per-block)"}
	}
	img, err := openImage(ctx, *image)
	if err != nil {
		return err
	}
	defer img.Close()
	s, err := survey.Run(ctx, img, survey.Options{Progress: progressLines(stderr, surveyProgressAfter)})
	if err != nil {
		return err
	}
	if costs != def {
		s.SetCosts(costs)
	}
	switch {
	case *asJSON:
		return s.WriteJSON(stdout)
	case *asCSV:
		return survey.WriteCSV(stdout, s, costs)
	}
	return writeSurveyText(stdout, s, *top)
}

// progressLines reports a survey's progress on w: nothing for its first interval (a small image is
// done by then), then a line at most once an interval, and the last one.
func progressLines(w io.Writer, every time.Duration) func(done, total int) {
	start := time.Now()
	last := start
	return func(done, total int) {
		if now := time.Now(); now.Sub(start) >= every && (now.Sub(last) >= every || done == total) {
			last = now
			fmt.Fprintf(w, "survey: %s of %s files (%d%%)\n", units.Group(done), units.Group(total), done*100/max(total, 1))
		}
	}
}

func writeSurveyText(w io.Writer, s *survey.Survey, top int) error {
	t := &s.Totals
	fmt.Fprintf(w, "%s regular files, %s bytes", units.Group(t.Files), units.Group(t.Bytes))
	if s.Compressed.Files > 0 {
		fmt.Fprintf(w, " (%s compressed)", units.Group(s.Compressed.Files))
	}
	if t.Unreadable > 0 {
		fmt.Fprintf(w, "; %s could not be read", units.Group(t.Unreadable))
	}
	fmt.Fprintln(w)
	if len(s.Unlisted) > 0 {
		fmt.Fprintf(w, "the listing stepped over %s (not surveyed)\n", plural(len(s.Unlisted)+s.UnlistedDropped, "damaged entry"))
	}
	fmt.Fprintln(w, "\nEvery file zeroed whole, punched whole, truncated to 0 — totals:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tmode\tcalls\tSIT locks\tblocks\truns\tNEW\tNULL\tdnode chunks\test. ms*\terrno\terrors (refused)\t")
	for i, op := range survey.OpNames {
		for _, m := range core.Modes {
			x := t.Ops.Op(i).PerBlock
			if m == core.Batched {
				x = t.Ops.Op(i).Batched
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.3f\t%s\t%s (%s)\t\n", op, m, units.Group(x.Calls),
				units.Group(x.SITLockAcquisitions), units.Group(x.BlocksInvalidated), units.Group(x.Runs),
				units.Group(x.SlotsNew), units.Group(x.SlotsNull), units.Group(x.DnodeChunks), x.EstimatedMs,
				units.Group(x.Errnos), units.Group(x.Errors), units.Group(x.Refused))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	z := &t.Ops.Zero
	fmt.Fprintf(w, "\nZeroing every file: batching saves %s of %s calls (≈ %.3f ms saved).\n",
		units.Group(z.PerBlock.Calls-min(z.Batched.Calls, z.PerBlock.Calls)), units.Group(z.PerBlock.Calls),
		z.PerBlock.EstimatedMs-z.Batched.EstimatedMs)
	fmt.Fprintf(w, "* %s.\n", s.Costs.Source)
	if c := &s.Compressed; c.Files > 0 {
		// Compressed files apart: their clusters (COMPRESS_ADDR slots), and what the kernel answers.
		fmt.Fprintf(w, "\nCompressed files, apart: %s, %s bytes.\n", units.Group(c.Files), units.Group(c.Bytes))
		for i, op := range survey.OpNames {
			x := c.Ops.Op(i)
			fmt.Fprintf(w, "  %-8s  %s calls per-block, %s batched; %s cluster slots; %s errno, %s not run\n", op,
				units.Group(x.PerBlock.Calls), units.Group(x.Batched.Calls), units.Group(x.PerBlock.SlotsCompress),
				units.Group(x.PerBlock.Errnos), units.Group(x.PerBlock.Errors))
		}
	}

	fmt.Fprintln(w, "\nRun lengths (a zero of every file, physical runs):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "blocks in run\truns\tblocks\t")
	for _, b := range s.Histogram {
		fmt.Fprintf(tw, "%s\t%s\t%s\t\n", b.Label, units.Group(b.Runs), units.Group(b.Blocks))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if top == 0 {
		return nil
	}
	named := func(title string, ns []survey.Named) error {
		if len(ns) == 0 {
			return nil
		}
		fmt.Fprintf(w, "\n%s\n", title)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, n := range ns[:min(top, len(ns))] {
			fmt.Fprintf(tw, "  %s\t%s bytes\t%s calls\t%s saved\n", n.Path, units.Group(n.Size), units.Group(n.Calls), units.Group(n.Saved))
		}
		return tw.Flush()
	}
	if err := named("Top files by calls saved (zero):", s.TopFiles(0, top)); err != nil {
		return err
	}
	if len(s.Directories) > 0 {
		fmt.Fprintln(w, "\nDirectories by calls saved (zero, every file below):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, d := range s.Directories[:min(top, len(s.Directories))] {
			fmt.Fprintf(tw, "  %s\t%s\t%s → %s calls\t%s saved\n", d.Path, plural(d.Files, "file"),
				units.Group(d.CallsPerBlock), units.Group(d.CallsBatched), units.Group(d.Saved))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if s.NoSavingFiles > 0 {
		if err := named(fmt.Sprintf("Files where batching saves nothing (every block its own run): %s", units.Group(s.NoSavingFiles)), s.NoSaving); err != nil {
			return err
		}
	}
	var bad []string
	for i := range s.Files {
		f := &s.Files[i]
		for k, op := range survey.OpNames {
			for _, m := range core.Modes {
				if r := f.Result(k, m); r.Error != "" {
					what := "error"
					if r.Refused {
						what = "refused"
					}
					bad = append(bad, fmt.Sprintf("  %s: %s %s: %s: %s", f.Path, op, m, what, r.Error))
				}
			}
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(w, "\nOperations that did not run (%s):\n%s\n", units.Group(len(bad)), strings.Join(bad[:min(len(bad), top*6)], "\n"))
		if len(bad) > top*6 {
			fmt.Fprintf(w, "  … %s more (--json or --csv lists them all)\n", units.Group(len(bad)-top*6))
		}
	}
	return nil
}

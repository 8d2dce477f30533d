package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

const gcSynopsis = "gc [--image IMG] [--after-ops FILE] [--ops FILE] [--now SECONDS] [--json] [OP ...]"

// gcHelp lists the OPs: the ops language, from its one declaration (request.Ops).
func gcHelp() string {
	return "\nOPs, in order, on the state a mount of the image leaves (after --after-ops, if given),\n" +
		"on one mount in the per-block mode: any operation of the ops language (zrviz run --ops):\n" +
		request.HelpLines("  ") +
		"Victims are chosen as Linux 6.12's f2fs_get_victim does; see package gc's documentation.\n"
}

// gcOutput is the --json output: the clock and one value per op.
type gcOutput struct {
	Now uint64 `json:"now"`
	Ops []any  `json:"ops"`
}

func cmdGC(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("gc", gcSynopsis, stderr)
	usage := fs.Usage
	fs.Usage = func() { usage(); fmt.Fprint(stderr, gcHelp()) }
	image := imageFlag(fs)
	afterOps := fs.String("after-ops", "", "first run the ops of `FILE` (zrviz run --ops lines) in the same mount, per-block, "+
		"shown by nothing but what they leave: their f2fs_invalidate_blocks calls, writeback and collections change the SIT and its mtimes")
	opsFile := fs.String("ops", "", "read the OPs from `FILE`, one a line, # comments (the oracle's snap, show and sysctl lines are skipped)")
	now := fs.Uint64("now", 0, "seconds since mount `SECONDS`: the clock update_segment_mtime and cost-benefit's ages read")
	asJSON := fs.Bool("json", false, "print JSON: {\"now\",\"ops\":[{\"op\":\"gc\",\"type\",\"policy\",\"victim\",\"cost\",\"errno\",\"moved\",\"candidates\"}|{\"op\":\"checkpoint\",\"freed\",\"moved\"},...]}")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var ops []request.Op
	var err error
	if *opsFile != "" {
		if fs.NArg() != 0 {
			return usageError{fmt.Sprintf("--ops %s gives the ops: no OP arguments (got %q)", *opsFile, fs.Args())}
		}
		f, err := os.Open(*opsFile)
		if err != nil {
			return inputError{fmt.Errorf("--ops: %w", err)}
		}
		ops, _, err = request.ParseOracleOps(f)
		f.Close()
		if err != nil {
			return inputError{fmt.Errorf("--ops %s: %w", *opsFile, err)}
		}
	} else if ops, err = request.ParseArgs(fs.Args()); err != nil {
		return usageError{err.Error()}
	}
	if len(ops) == 0 {
		return usageError{"gc needs at least one OP, e.g. zrviz gc --image IMG checkpoint gc 1 gc 0"}
	}
	var before []request.Op
	if *afterOps != "" {
		if before, err = readOps(*afterOps); err != nil {
			return err
		}
	}
	img, err := openImage(ctx, *image)
	if err != nil {
		return err
	}
	defer img.Close()
	// One mount, one runner: the --after-ops first (shown by what they leave), then the OPs.
	q, err := source.NewSeq(ctx, img, core.PerBlock)
	if err != nil {
		return err
	}
	q.SetNow(*now)
	if err := source.RunOps(ctx, q, img, before, nil); err != nil {
		return fmt.Errorf("--after-ops: %w", err)
	}
	out := gcOutput{Now: *now}
	if err := source.RunOps(ctx, q, img, ops, func(st *source.Step) error {
		out.Ops = append(out.Ops, gcStep(st))
		return nil
	}); err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	for i, op := range ops {
		writeGCStep(stdout, stringer(op.OpLine(0)), out.Ops[i])
	}
	return nil
}

// gcStep is an op's value in the gc command's output: a gc op's pick, a checkpoint's or sync's
// freed segments and moved blocks (gc.CheckpointStep), the clock or tunable set, or any other
// operation's result as zrviz run --json gives it.
func gcStep(st *source.Step) any {
	switch op := st.Op; op.Kind {
	case request.OpGC:
		return st.Other.GC
	case request.OpCheckpoint, request.OpSync:
		c := &gc.CheckpointStep{Op: op.Kind, Freed: st.Other.Freed, Moved: st.Other.Moved}
		if c.Freed == nil {
			c.Freed = []uint32{}
		}
		return c
	case request.OpNow:
		return map[string]any{"op": "now", "secs": op.Value}
	case request.OpTune:
		return map[string]any{"op": "tune", op.Name: op.Value, "errno": st.Other.Errno}
	case request.OpZero:
		return st.Walk
	}
	return st.Other
}

func writeGCStep(w io.Writer, label fmt.Stringer, v any) {
	op := label
	switch r := v.(type) {
	case *gc.Pick:
		fmt.Fprintf(w, "%s: %s %s, ", op, r.Type, r.Policy)
		switch {
		case r.Victim == nil:
			fmt.Fprintf(w, "no victim: %s\n", *r.Errno)
			return
		case r.FromBackground:
			fmt.Fprintf(w, "victim %d (marked by a background call), cost %d", *r.Victim, r.Cost)
		default:
			fmt.Fprintf(w, "victim %d, cost %d, %d sections searched", *r.Victim, r.Cost, r.Searched)
		}
		if r.Type == "FG" {
			fmt.Fprintf(w, ", %d blocks moved", r.Moved)
		} else {
			fmt.Fprintf(w, ", %d blocks marked", r.Marked)
		}
		if r.Errno != nil {
			fmt.Fprintf(w, ", %s", *r.Errno)
		}
		fmt.Fprintln(w)
		if len(r.Candidates) > 0 {
			fmt.Fprintf(w, "  %8s %6s %8s %4s %4s %10s\n", "segno", "valid", "mtime", "u", "age", "cost")
			for _, c := range r.Candidates {
				fmt.Fprintf(w, "  %8d %6d %8d %4d %4d %10d\n", c.Segno, c.Valid, c.Mtime, c.U, c.Age, c.Cost)
			}
		}
	case *gc.CheckpointStep:
		freed := make([]string, len(r.Freed))
		for i, f := range r.Freed {
			freed[i] = fmt.Sprint(f)
		}
		fmt.Fprintf(w, "%s: %d segments free (%s), %d blocks moved\n", op, len(r.Freed), strings.Join(freed, " "), r.Moved)
	default:
		fmt.Fprintf(w, "%s\n", op)
	}
}

// stringer is a fixed label for writeGCStep.
type stringer string

func (s stringer) String() string { return string(s) }

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
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

const gcSynopsis = "gc [--image IMG] [--after-ops FILE] [--ops FILE] [--now SECONDS] [--json] [OP ...]"

const gcHelp = `
OPs, in order, on the state a mount of the image leaves (after --after-ops, if given):
  checkpoint   F2FS_IOC_WRITE_CHECKPOINT: prefree segments become free
  gc 1         F2FS_IOC_GARBAGE_COLLECT foreground: greedy victim, its blocks moved
  gc 0         F2FS_IOC_GARBAGE_COLLECT background: cost-benefit victim, its blocks marked
  sync         sync(2): marked data written to the cold data log, then a checkpoint
  now SECONDS  the seconds since mount from here on
  tune max_victim_search N   how many dirty sections a background call searches (default 4096)
Victims are chosen as Linux 6.12's f2fs_get_victim does; see package gc's documentation.
`

// gcOutput is the --json output: the clock and one value per op.
type gcOutput struct {
	Now uint64 `json:"now"`
	Ops []any  `json:"ops"`
}

func cmdGC(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("gc", gcSynopsis, stderr)
	usage := fs.Usage
	fs.Usage = func() { usage(); fmt.Fprint(stderr, gcHelp) }
	image := imageFlag(fs)
	afterOps := fs.String("after-ops", "", "first run the ops of `FILE` (zrviz run --ops lines: zero, write, fsync, sync, tune, checkpoint, gc, now) "+
		"in the same mount, per-block: their f2fs_invalidate_blocks calls, writeback and collections change the SIT and its mtimes")
	opsFile := fs.String("ops", "", "read the OPs from `FILE`, one a line, # comments (the oracle's snap, show, sleep and sysctl lines are skipped)")
	now := fs.Uint64("now", 0, "seconds since mount `SECONDS`: the clock update_segment_mtime and cost-benefit's ages read")
	asJSON := fs.Bool("json", false, "print JSON: {\"now\",\"ops\":[{\"op\":\"gc\",\"type\",\"policy\",\"victim\",\"cost\",\"errno\",\"moved\",\"candidates\"}|{\"op\":\"checkpoint\",\"freed\",\"moved\"},...]}")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var ops []gc.Op
	var err error
	if *opsFile != "" {
		if fs.NArg() != 0 {
			return usageError{fmt.Sprintf("--ops %s gives the ops: no OP arguments (got %q)", *opsFile, fs.Args())}
		}
		f, err := os.Open(*opsFile)
		if err != nil {
			return inputError{fmt.Errorf("--ops: %w", err)}
		}
		ops, _, err = gc.ParseOps(f, false)
		f.Close()
		if err != nil {
			return inputError{fmt.Errorf("--ops %s: %w", *opsFile, err)}
		}
	} else if ops, err = gc.ParseArgs(fs.Args()); err != nil {
		return usageError{err.Error()}
	}
	if len(ops) == 0 {
		return usageError{"gc needs at least one OP, e.g. zrviz gc --image IMG checkpoint gc 1 gc 0"}
	}
	var zeros []request.Op
	if *afterOps != "" {
		if zeros, err = readOps(*afterOps); err != nil {
			return err
		}
	}
	img, err := openImage(ctx, *image)
	if err != nil {
		return err
	}
	defer img.Close()
	s, err := mountGC(ctx, img, zeros, *now)
	if err != nil {
		return err
	}
	out := gcOutput{Now: *now}
	for _, op := range ops {
		out.Ops = append(out.Ops, s.Apply(op))
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	for i, op := range ops {
		writeGCStep(stdout, op, out.Ops[i])
	}
	return nil
}

// mountGC mounts the image for package gc after the ops of --after-ops (the ops language, in the
// per-block mode, on one mount: their f2fs_invalidate_blocks calls, writeback and any garbage
// collection change the SIT and its mtimes), with the clock at now throughout.
func mountGC(ctx context.Context, img *imgio.Image, before []request.Op, now uint64) (*gc.State, error) {
	q, err := source.NewSeq(ctx, img, core.PerBlock)
	if err != nil {
		return nil, err
	}
	q.SetNow(now)
	for i, op := range before {
		var in core.Input
		if op.Path != "" {
			if in, err = source.Input(img, op.Path); err != nil {
				return nil, fmt.Errorf("--after-ops operation %d: %w", i+1, err)
			}
		}
		if op.IsZero() {
			_, _, _, err = q.Zero(in, op.Request(q.File(in).Inode.Size))
		} else {
			_, err = op.ApplyOther(q, in)
		}
		if err != nil {
			return nil, fmt.Errorf("--after-ops operation %d (%s): %w", i+1, op.OpLine(0), err)
		}
	}
	s := q.GCState()
	s.Now = now
	return s, nil
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

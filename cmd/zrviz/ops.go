package main

import (
	"context"
	"fmt"
	"os"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/ktrace"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

// inputError is an --ops or --trace file that cannot be read or parsed; main exits with status 2.
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

// ExitCode is main's exit status for it.
func (inputError) ExitCode() int { return 2 }

// readOps reads an ops file (request.ParseOps: zero, write, fsync, sync, tune lines).
func readOps(name string) ([]request.Op, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, inputError{fmt.Errorf("--ops: %w", err)}
	}
	defer f.Close()
	ops, err := request.ParseOps(f)
	if err != nil {
		return nil, inputError{fmt.Errorf("--ops %s: %w", name, err)}
	}
	return ops, nil
}

// runSequence runs the operations in order in every mode of the first zero (they share their
// modes), each mode on its own mount (core.Seq: the state the previous operations left, dirty
// pages included), and holds the trace, if any, against them: trace operation i against
// operation i, whatever its kind.
func runSequence(ctx context.Context, img *imgio.Image, ops []request.Op, modes []core.Mode, tr *ktrace.Trace) ([]runOutput, []*core.WriteResult, error) {
	outs := make([]runOutput, len(ops))
	var unmounts []*core.WriteResult
	for mi, mode := range modes {
		q, err := source.NewSeq(ctx, img, mode)
		if err != nil {
			return nil, nil, err
		}
		for i, op := range ops {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			out := &outs[i]
			if mi == 0 {
				*out = runOutput{Op: op.Kind, Path: op.Path}
			}
			var in core.Input
			if op.Path != "" {
				f, err := source.Input(img, op.Path)
				if err != nil {
					return nil, nil, opError(len(ops), i, op, err)
				}
				in = f
			}
			var rep *ktrace.Report
			var err error
			switch op.Kind {
			case request.OpZero:
				req := op.Request(q.File(in).Inode.Size)
				var res *core.Result
				var walked core.Input
				var pages []core.PageWrite
				res, walked, pages, err = q.Zero(in, req)
				if err != nil {
					return nil, nil, opError(len(ops), i, op, err)
				}
				if mi == 0 {
					out.Path, out.Offset, out.Length, out.KeepSize = walked.Path, req.Offset, req.Length, req.KeepSize
					out.sizeBefore = walked.Inode.Size
				}
				out.Results = append(out.Results, res)
				out.Writeback = append(out.Writeback, pages)
				out.Balance = append(out.Balance, q.BalanceGC())
				if tr != nil {
					if rep, err = ktrace.Check(tr, i, walked, req, res); err == nil {
						err = rep.CheckVictims(tr, q.BalanceGC())
					}
				}
			default:
				var w *core.WriteResult
				w, err = op.ApplyOther(q, in)
				switch op.Kind {
				case request.OpWrite:
					out.Offset, out.Length = op.Offset, op.Length
				case request.OpGC:
					out.gcSync = int(op.Value)
				}
				if err != nil {
					return nil, nil, opError(len(ops), i, op, err)
				}
				out.Others = append(out.Others, w)
				if tr != nil {
					if rep, err = ktrace.CheckOther(tr, i, mode); err == nil {
						p := q.BalanceGC()
						if w.GC != nil {
							p = w.GC
						}
						err = rep.CheckVictims(tr, p)
					}
				}
			}
			if err != nil {
				return nil, nil, opError(len(ops), i, op, err)
			}
			if rep != nil {
				out.Traces = append(out.Traces, rep)
			}
			out.Modes = append(out.Modes, mode)
		}
		// What a clean unmount would write back: the pages still dirty after the last operation
		// (what an after-image of the sequence holds).
		u, err := q.Unmount()
		if err != nil {
			return nil, nil, fmt.Errorf("unmount after the operations: %w", err)
		}
		unmounts = append(unmounts, u)
	}
	return outs, unmounts, nil
}

// opError names the operation that failed when there are several.
func opError(n, i int, op request.Op, err error) error {
	if n == 1 {
		return err
	}
	return fmt.Errorf("operation %d (%s): %w", i+1, op.OpLine(0), err)
}

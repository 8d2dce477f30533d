package main

import (
	"context"
	"errors"
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
		err = source.RunOps(ctx, q, img, ops, func(st *source.Step) error {
			op, out := st.Op, &outs[st.Index]
			if mi == 0 {
				*out = runOutput{Op: op.Kind, Path: op.Path}
			}
			var rep *ktrace.Report
			var err error
			if op.Walks() {
				if mi == 0 {
					out.Path, out.Offset, out.Length, out.KeepSize = st.File.Path, st.Request.Offset, st.Request.Length, st.Request.KeepSize
					out.sizeBefore = st.File.Inode.Size
				}
				out.Results = append(out.Results, st.Walk)
				out.Writeback = append(out.Writeback, st.Pages)
				out.Balance = append(out.Balance, st.Balance)
				if tr != nil {
					rep, err = ktrace.Check(tr, st.Index, st.File, st.Request, st.Walk)
				}
			} else {
				switch op.Kind {
				case request.OpWrite:
					out.Offset, out.Length = op.Offset, op.Length
				case request.OpGC:
					out.gcSync = int(op.Value)
				}
				out.Others = append(out.Others, st.Other)
				if tr != nil {
					rep, err = ktrace.CheckOther(tr, st.Index, mode)
				}
			}
			if err == nil && rep != nil {
				err = rep.CheckVictims(tr, st.Victim())
			}
			if err == nil && rep != nil {
				err = rep.CheckSSR(tr, st.SSR)
			}
			if err != nil {
				return &source.OpError{Index: st.Index, Line: op.OpLine(0), Err: err}
			}
			if rep != nil {
				out.Traces = append(out.Traces, rep)
			}
			out.Modes = append(out.Modes, mode)
			return nil
		})
		if err != nil {
			return nil, nil, opError(len(ops), err)
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

// opError drops the operation's name from err when there is only one operation (the error names
// the run already).
func opError(n int, err error) error {
	var oe *source.OpError
	if n == 1 && errors.As(err, &oe) {
		return oe.Err
	}
	return err
}

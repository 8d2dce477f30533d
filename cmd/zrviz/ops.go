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

// readOps reads an ops file (request.ParseOps: zero PATH OFFSET LENGTH [keep_size]).
func readOps(name string) ([]request.Run, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, inputError{fmt.Errorf("--ops: %w", err)}
	}
	defer f.Close()
	runs, err := request.ParseOps(f)
	if err != nil {
		return nil, inputError{fmt.Errorf("--ops %s: %w", name, err)}
	}
	return runs, nil
}

// mount is the state of one mount over a sequence of operations: the volume as the last operation
// left it, and every file an operation changed as it was left. Each mode keeps its own.
type mount struct {
	img   *imgio.Image
	last  *core.Input           // after the last operation; nil before the first
	files map[uint32]core.Input // by inode number, after the last operation on that file
}

func newMount(img *imgio.Image) *mount {
	return &mount{img: img, files: map[uint32]core.Input{}}
}

// input is the engine's input for an operation on path: the file as the operations so far left it,
// on the volume as they left it.
func (m *mount) input(path string) (core.Input, error) {
	in, err := source.Input(m.img, path)
	if err != nil || m.last == nil {
		return in, err
	}
	if f, ok := m.files[in.Inode.Ino]; ok {
		in = f
	}
	return m.last.WithFile(in), nil
}

// done records what an operation left.
func (m *mount) done(res *core.Result) {
	next := res.NextInput()
	m.last = &next
	m.files[next.Inode.Ino] = next
}

// runSequence runs the operations in order in every mode of the first (they share their modes),
// each on the state the previous one left in that mode, and holds the trace, if any, against them:
// trace operation i against operation i.
func runSequence(ctx context.Context, img *imgio.Image, runs []request.Run, tr *ktrace.Trace) ([]runOutput, error) {
	outs := make([]runOutput, len(runs))
	for mi, mode := range runs[0].Modes {
		m := newMount(img)
		for i, run := range runs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			in, err := m.input(run.Path)
			if err != nil {
				return nil, opError(len(runs), i, run, err)
			}
			req := run.Request(in.Inode.Size)
			res, err := core.Simulate(in, req, mode)
			if err != nil {
				return nil, opError(len(runs), i, run, err)
			}
			if mi == 0 {
				outs[i] = runOutput{Path: in.Path, Offset: req.Offset, Length: req.Length, KeepSize: req.KeepSize,
					sizeBefore: in.Inode.Size}
			}
			outs[i].Results = append(outs[i].Results, res)
			if tr != nil {
				rep, err := ktrace.Check(tr, i, in, req, res)
				if err != nil {
					return nil, opError(len(runs), i, run, err)
				}
				outs[i].Traces = append(outs[i].Traces, rep)
			}
			m.done(res)
		}
	}
	return outs, nil
}

// opError names the operation that failed when there are several.
func opError(n, i int, run request.Run, err error) error {
	if n == 1 {
		return err
	}
	return fmt.Errorf("operation %d (zero %s): %w", i+1, run.Path, err)
}

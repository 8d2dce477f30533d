package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/zrviz/zrviz/afterck"
	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/ktrace"
	"github.com/zrviz/zrviz/source"
)

// afterUsage is the --after flag's help.
const afterUsage = "compare the model's after-state with `AFTER`, the image the kernel left after the same operations on --image " +
	"(any format zrviz reads; --mode per-block or batched): every slot, i_size and i_blocks of the zeroed files, every SIT bit, " +
	"the checkpoint's valid block and node counts; exit 3 when they differ, 2 when AFTER is unreadable or of another filesystem"

// afterError is an after-image that cannot be read or is of another filesystem; main exits with 2.
type afterError struct{ err error }

func (e afterError) Error() string { return e.err.Error() }
func (e afterError) Unwrap() error { return e.err }

// ExitCode is main's exit status for it.
func (afterError) ExitCode() int { return 2 }

// afterDiffers is the verdict of an after-image that differs from the model; main exits with 3.
type afterDiffers struct{ n int }

func (e afterDiffers) Error() string {
	return fmt.Sprintf("the after-image differs from the model (%s)", plural(e.n, "difference"))
}

// ExitCode is main's exit status for it.
func (afterDiffers) ExitCode() int { return 3 }

// checkAfter opens the after-image and holds the operations' results (one mode) against it: with
// --ops the model of the ops file and the unmount after it (afterck.ModelSeq: zero, write, fsync,
// sync, tune), else the one run's result.
func checkAfter(ctx context.Context, before *imgio.Image, name string, outs []runOutput, opsFile string, mode core.Mode) (*afterck.Report, error) {
	after, err := imgio.OpenFileContext(ctx, name, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, afterError{fmt.Errorf("--after %s: %w", name, err)}
	}
	defer after.Close()
	var st *afterck.State
	if opsFile != "" {
		text, err := os.ReadFile(opsFile)
		if err != nil {
			return nil, inputError{fmt.Errorf("--ops: %w", err)}
		}
		if st, err = afterck.ModelSeq(ctx, before, string(text), mode); err != nil {
			return nil, err
		}
	} else {
		in, err := source.Input(before, outs[0].Path)
		if err != nil {
			return nil, err
		}
		if st, err = afterck.StateOf([]afterck.Op{{Path: outs[0].Path, Ino: in.Inode.Ino, Result: outs[0].Results[0],
			GC: len(outs[0].Balance) > 0 && outs[0].Balance[0] != nil}}); err != nil {
			return nil, err
		}
	}
	rep, err := afterck.CheckState(ctx, before, after, st)
	if err != nil && ctx.Err() == nil {
		// Another filesystem, or a table of the after-image that cannot be read (the
		// before-image has just been read whole by the runs).
		return nil, afterError{fmt.Errorf("--after %s: %w", name, err)}
	}
	return rep, err
}

// writeRunsAfter is writeRuns with the after-image's verdict: in JSON an "after" member of the
// printed object, in text a section after the runs.
func writeRunsAfter(w io.Writer, outs []runOutput, unmounts []*core.WriteResult, tr *ktrace.Trace, ops, asJSON bool, rep *afterck.Report) error {
	if asJSON {
		var buf bytes.Buffer
		if err := writeRuns(&buf, outs, unmounts, tr, ops, true); err != nil {
			return err
		}
		b := bytes.TrimRight(buf.Bytes(), "\n")
		aj, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		b = append(append(append(b[:len(b)-1], `,"after":`...), aj...), "}\n"...)
		_, err = w.Write(b)
		return err
	}
	if err := writeRuns(w, outs, unmounts, tr, ops, false); err != nil {
		return err
	}
	writeAfterText(w, rep)
	return nil
}

func writeAfterText(w io.Writer, rep *afterck.Report) {
	fmt.Fprintln(w)
	if rep.Agree {
		fmt.Fprintln(w, "After-image: agrees with the model.")
	} else {
		fmt.Fprintf(w, "After-image: DIFFERS from the model (%s).\n", plural(rep.Total, "difference"))
	}
	if len(rep.Explained) > 0 {
		fmt.Fprintf(w, "\nExplained (what the kernel did after the call, before the image was taken):\n")
		for _, x := range rep.Explained {
			fmt.Fprintf(w, "  %s: %s\n", x.Func, x.Text)
		}
		if more := rep.ExplainedTotal - len(rep.Explained); more > 0 {
			fmt.Fprintf(w, "  … %s more; by kind:\n", plural(more, "explanation"))
			kinds := map[string]int{}
			var order []string
			for _, c := range rep.ExplainedSummary {
				if _, ok := kinds[c.Kind]; !ok {
					order = append(order, c.Kind)
				}
				kinds[c.Kind] += c.N
			}
			for _, k := range order {
				fmt.Fprintf(w, "    %s: %d\n", k, kinds[k])
			}
		}
	}
	if len(rep.Differences) > 0 {
		fmt.Fprintln(w, "\nFirst differences (model, then image):")
		for i, d := range rep.Differences {
			if i == 20 {
				fmt.Fprintf(w, "  … %s more (--json lists up to %d)\n", plural(rep.Total-20, "difference"), afterck.MaxDifferences)
				break
			}
			fmt.Fprintf(w, "  %s\n", d)
		}
	}
}

// afterVerdict is the exit status of a checked run: the after-image's, then the trace's.
func afterVerdict(rep *afterck.Report, outs []runOutput) error {
	if rep != nil && !rep.Agree {
		return afterDiffers{rep.Total}
	}
	return traceVerdict(outs)
}

package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/zrviz/zrviz/internal/units"
	"github.com/zrviz/zrviz/ktrace"
)

// divergedError reports that the kernel's trace and the model differ; main exits with status 3.
type divergedError struct {
	ops []int // 1-based operations that diverge
	n   int   // operations run
}

func (e divergedError) Error() string {
	if e.n == 1 {
		return "the kernel's trace diverges from the model (see the first divergence above)"
	}
	s := make([]string, len(e.ops))
	for i, op := range e.ops {
		s[i] = fmt.Sprint(op)
	}
	what := "operation"
	if len(e.ops) > 1 {
		what += "s"
	}
	return fmt.Sprintf("the kernel's trace diverges from the model in %s %s of %d (see above)", what, strings.Join(s, ", "), e.n)
}

// ExitCode is main's exit status for it.
func (divergedError) ExitCode() int { return 3 }

// readTrace reads a kernel trace for ops operations: it must hold as many (zr_op markers), or be
// one unmarked operation when one is run.
func readTrace(name string, ops int) (*ktrace.Trace, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, inputError{fmt.Errorf("--trace: %w", err)}
	}
	defer f.Close()
	tr, err := ktrace.Parse(f, ktrace.Limits{})
	if err != nil {
		return nil, inputError{fmt.Errorf("--trace %s: %w", name, err)}
	}
	if len(tr.Ops) != ops {
		return nil, inputError{fmt.Errorf("--trace %s: the trace holds %s (zr_op markers) and %s run",
			name, plural(len(tr.Ops), "operation"), plural(ops, "operation")+map[bool]string{true: " is", false: " are"}[ops == 1])}
	}
	return tr, nil
}

// traceVerdict is nil unless an operation's trace diverges.
func traceVerdict(outs []runOutput) error {
	var bad []int
	for i, out := range outs {
		for _, t := range out.Traces {
			if !t.Agree {
				bad = append(bad, i+1)
				break
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return divergedError{ops: bad, n: len(outs)}
}

// writeTraceText says, for each result checked against a trace, whether the kernel agrees, how many
// calls each side made and where they first part.
func writeTraceText(w io.Writer, out runOutput) {
	for i, t := range out.Traces {
		kernel := plural(t.Calls, "call")
		if t.Expanded {
			kernel += ", expanded to one block each to meet the per-block model"
		}
		fmt.Fprintf(w, "\nKernel trace (%s, operation %d: %s) against the %s model (%s): ", t.Format, t.Op, kernel,
			out.Modes[i], plural(t.ModelCalls, "call"))
		d := t.FirstDivergence
		if d == nil {
			fmt.Fprintln(w, map[bool]string{false: "AGREE, call for call.", true: "AGREE, block for block."}[t.Expanded])
			continue
		}
		fmt.Fprintf(w, "DIVERGE at call #%s (index %d).\n", units.Group(d.Index+1), d.Index)
		fmt.Fprintf(w, "  kernel: %s", callText(d.Kernel, "made no further call"))
		if d.KernelCall != nil && d.Kernel != nil {
			fmt.Fprintf(w, "   (from its call %s as recorded)", units.Group(*d.KernelCall+1))
		}
		fmt.Fprintf(w, "\n  model:  %s", callText(d.Model, "makes no further call"))
		if d.Slot != nil {
			fmt.Fprintf(w, "   for slot %s (file block index) in dnode %s, chunk %d", units.Group(*d.Slot), d.Dnode, *d.Chunk+1) // from 1, as the page counts
		}
		fmt.Fprintln(w)
	}
}

func callText(c *ktrace.Call, none string) string {
	if c == nil {
		return none
	}
	return fmt.Sprintf("f2fs_invalidate_blocks(%d, %d)", c.Start, c.Len)
}

// plural says "1 call", "2 calls", "16,384 calls".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return units.Group(n) + " " + noun + "s"
}

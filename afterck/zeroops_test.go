package afterck_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zrviz/zrviz/afterck"
	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

// errNotModelled is returned by zeroOps for an operation other than zero: zeroOps runs zero-range
// sequences on core.Simulate; afterck.ModelSeq models the whole ops language.
var errNotModelled = errors.New("afterck: only zero operations are modelled")

// zeroOps reads operations in the ops language (zero PATH OFFSET LENGTH [keep_size], one a line; a
// # at the start of a line or after white space starts a comment), runs them in order on one
// mount in one mode, each on the state the previous one left (as `zrviz run --ops` does), and
// returns them as checkOps takes them. A line of another operation is errNotModelled. It is the
// tests' own: the product models with afterck.ModelSeq (the whole language and the unmount).
func zeroOps(img *imgio.Image, text string, mode core.Mode) ([]afterck.Op, error) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		for k := 0; k < len(l); k++ {
			if l[k] == '#' && (k == 0 || l[k-1] == ' ' || l[k-1] == '\t') {
				l = l[:k]
				break
			}
		}
		lines[i] = l
		if f := strings.Fields(l); len(f) > 0 && f[0] != "zero" {
			return nil, fmt.Errorf("line %d (%q): %w", i+1, strings.TrimSpace(l), errNotModelled)
		}
	}
	runs, err := request.ParseOps(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		return nil, err
	}
	var last *core.Input
	files := map[uint32]core.Input{}
	ops := make([]afterck.Op, 0, len(runs))
	for i, run := range runs {
		in, err := source.Input(img, run.Path)
		if err != nil {
			return nil, fmt.Errorf("afterck: operation %d: %w", i+1, err)
		}
		ino := in.Inode.Ino
		if last != nil {
			if f, ok := files[ino]; ok {
				in = f
			}
			in = last.WithFile(in)
		}
		res, err := core.Simulate(in, run.Request(in.Inode.Size), mode)
		if err != nil {
			return nil, fmt.Errorf("afterck: operation %d: %w", i+1, err)
		}
		next := res.NextInput()
		last, files[ino] = &next, next
		ops = append(ops, afterck.Op{Path: in.Path, Ino: ino, Result: res})
	}
	return ops, nil
}

// checkOps holds ops' model after-state against after, the image the kernel left when it ran them on
// before: afterck.CheckState of afterck.StateOf.
func checkOps(ctx context.Context, before, after *imgio.Image, ops []afterck.Op) (*afterck.Report, error) {
	st, err := afterck.StateOf(ops)
	if err != nil {
		return nil, err
	}
	return afterck.CheckState(ctx, before, after, st)
}

package source_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

func mustOps(t *testing.T, text string) []request.Op {
	t.Helper()
	ops, err := request.ParseOps(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// TestRunOpsStopsWithItsContext: a context done before the run runs nothing; one cancelled while
// an op's result is observed stops the run before the next op; either way the context's error
// comes back.
func TestRunOpsStopsWithItsContext(t *testing.T) {
	img := openDemo(t)
	ops := mustOps(t, "zero /cases/holes.bin 0 65536\nwrite /cases/holes.bin 0 8192\nsync\ngc 1\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	q, err := source.NewSeq(context.Background(), img, core.PerBlock)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	if err := source.RunOps(ctx, q, img, ops, func(*source.Step) error { ran++; return nil }); !errors.Is(err, context.Canceled) || ran != 0 {
		t.Errorf("cancelled before: %v, %d ops observed", err, ran)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var kinds []string
	err = source.RunOps(ctx, q, img, ops, func(st *source.Step) error {
		kinds = append(kinds, st.Op.Kind)
		if st.Index == 1 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || strings.Join(kinds, ",") != "zero,write" {
		t.Errorf("cancelled at op 2: %v, observed %v", err, kinds)
	}
}

// TestRunOpsSteps: every kind comes back in the one Step shape: a zero's walk, request and the
// input it walked; every other op's result; an error names the op by number and line.
func TestRunOpsSteps(t *testing.T) {
	img := openDemo(t)
	ops := mustOps(t, "write /cases/holes.bin 0 8192\nzero /cases/holes.bin 0 65536 keep_size\nfsync /cases/holes.bin\ntune ipu_policy 16\nnow 30\ncheckpoint\ngc 1\nsync\n")
	for _, mode := range core.Modes {
		q, err := source.NewSeq(context.Background(), img, mode)
		if err != nil {
			t.Fatal(err)
		}
		var steps []*source.Step
		if err := source.RunOps(context.Background(), q, img, ops, func(st *source.Step) error {
			steps = append(steps, st)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(steps) != len(ops) {
			t.Fatalf("%s: %d steps", mode, len(steps))
		}
		for i, st := range steps {
			if st.Index != i || st.Op.Kind != ops[i].Kind {
				t.Errorf("%s: step %d is %d %s", mode, i, st.Index, st.Op.Kind)
			}
			if (st.Walk != nil) != st.Op.Walks() || (st.Other != nil) == st.Op.Walks() {
				t.Errorf("%s: step %d (%s): walk %v, other %v", mode, i, st.Op.Kind, st.Walk != nil, st.Other != nil)
			}
			if (st.File.Path != "") != (st.Op.Path != "") {
				t.Errorf("%s: step %d (%s): file %q", mode, i, st.Op.Kind, st.File.Path)
			}
		}
		z := steps[1]
		if z.Request != (core.Request{Offset: 0, Length: 65536, KeepSize: true}) || z.Walk.Errno != "" || len(z.Pages) == 0 {
			t.Errorf("%s: the zero: request %+v, errno %q, %d pages written back first (the write's)", mode, z.Request, z.Walk.Errno, len(z.Pages))
		}
		if g := steps[6]; g.Victim() == nil || g.Victim() != g.Other.GC {
			t.Errorf("%s: gc 1's victim %+v", mode, g.Victim())
		}
		if n := steps[4]; n.Victim() != nil {
			t.Errorf("%s: now ran a collection: %+v", mode, n.Victim())
		}
	}
	q, err := source.NewSeq(context.Background(), img, core.PerBlock)
	if err != nil {
		t.Fatal(err)
	}
	err = source.RunOps(context.Background(), q, img, mustOps(t, "sync\nfsync /no/such/file\n"), nil)
	var oe *source.OpError
	if !errors.As(err, &oe) || oe.Index != 1 || oe.Line != "fsync /no/such/file" || !strings.Contains(err.Error(), "operation 2 (fsync /no/such/file)") {
		t.Errorf("a missing file: %v", err)
	}
}

package source

import (
	"context"
	"fmt"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/request"
)

// Step is what one operation of a sequence did, in one shape for every kind: a zero's walk and
// the pages written back before it, any other operation's result, and the collection
// f2fs_balance_fs ran inside it.
type Step struct {
	Index int // 0-based, in the sequence
	Op    request.Op
	// File is the file the operation names (zero Input for sync, tune, checkpoint, gc, now): for
	// a zero, the input its walk ran on (after the writeback of its range), what a player replays
	// and ktrace.Check takes; otherwise the file as the image holds it (the Seq substitutes its own
	// state).
	File core.Input
	// Request is a walked operation's request (zero, punch, truncate, unlink), a zero's length resolved
	// for the file's size then.
	Request core.Request
	// Walk is a walked operation's walk: its f2fs_invalidate_blocks calls, counters and after-state.
	Walk *core.Result
	// Pages are the dirty pages a zero wrote back before its walk (filemap_write_and_wait_range).
	Pages []core.PageWrite
	// Other is the result of any operation but a zero: pages written, errno, victims, moves.
	Other *core.WriteResult
	// Balance is the garbage collection f2fs_balance_fs ran inside the operation (nil: none).
	Balance *gc.Pick
	// SSR are the segments need_new_seg → get_ssr_segment moved a full log into during the
	// operation (f2fs_get_victim in SSR mode), in order.
	SSR []gc.SSRVictim
}

// Victim is the operation's garbage collection pick, if any: a gc op's own, else the one
// f2fs_balance_fs ran inside it.
func (s *Step) Victim() *gc.Pick {
	if s.Other != nil && s.Other.GC != nil {
		return s.Other.GC
	}
	return s.Balance
}

// OpError is an operation of a sequence that failed; it names the operation.
type OpError struct {
	Index int // 0-based
	Line  string
	Err   error
}

func (e *OpError) Error() string {
	return fmt.Sprintf("operation %d (%s): %v", e.Index+1, e.Line, e.Err)
}
func (e *OpError) Unwrap() error { return e.Err }

// RunOps runs ops in order on the mount q of img, each on the state the previous ones left, and
// calls each (if not nil) with what each did. It is the one sequence runner: every caller that
// runs ops (the CLI's run and gc, the API's before=, the player's chain, the next panel, the
// writeback view, the after-check) runs them here. It stops at the first error (an *OpError), at
// each's, and as soon as ctx is done, before each operation and after it: a client that left costs
// at most the operation under way.
func RunOps(ctx context.Context, q *core.Seq, img *imgio.Image, ops []request.Op, each func(*Step) error) error {
	files := map[string]core.Input{} // paths resolved once per sequence
	for i, op := range ops {
		if err := ctx.Err(); err != nil {
			return err
		}
		st := &Step{Index: i, Op: op}
		var unlinkReq core.Request
		if op.Kind == request.OpUnlink {
			// The name itself, not what a final symlink points at, and its directory.
			in, req, err := UnlinkRequest(ctx, img, op.Path)
			if err != nil {
				return &OpError{Index: i, Line: op.OpLine(0), Err: err}
			}
			st.File, unlinkReq = in, req
		} else if op.Path != "" {
			in, ok := files[op.Path]
			if !ok {
				f, err := img.ResolveContext(ctx, op.Path)
				if err != nil {
					return &OpError{Index: i, Line: op.OpLine(0), Err: err}
				}
				if in, err = FileInput(img, f); err != nil {
					return &OpError{Index: i, Line: op.OpLine(0), Err: err}
				}
				files[op.Path] = in
			}
			st.File = in
		}
		var err error
		ssrBefore := len(q.SSRVictims())
		if op.Walks() {
			st.Request = op.Request(q.File(st.File).Inode.Size)
			if op.Kind == request.OpUnlink {
				st.Request = unlinkReq
			}
			st.Walk, st.File, st.Pages, err = q.Walk(st.File, st.Request)
		} else {
			st.Other, err = op.ApplyOther(q, st.File)
		}
		if err != nil {
			return &OpError{Index: i, Line: op.OpLine(0), Err: err}
		}
		st.Balance = q.BalanceGC()
		if all := q.SSRVictims(); len(all) > ssrBefore {
			st.SSR = all[ssrBefore:]
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if each != nil {
			if err := each(st); err != nil {
				return err
			}
		}
	}
	return nil
}

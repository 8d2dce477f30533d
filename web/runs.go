package web

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/player"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/sandbox"
	"github.com/zrviz/zrviz/source"
)

// FieldBefore is the query field that carries operations run before the played one: repeated, each
// a line of the ops language ("zero /a 0 4096"); the player's "then zero another range" adds one.
const FieldBefore = "before"

// runTarget is a run a request names, resolved against its image: what the engines read, the
// request, and how to describe it. It is built per request; the outline it leads to is shared.
type runTarget struct {
	si     *StoredImage // nil for a sandbox run
	run    request.Run
	before []request.Op
	file   *imgio.File // nil for a sandbox run
	spec   player.Spec
	info   runInfo
	geom   geometry
}

// key identifies the run for the outline cache: the same image, operations, range and modes give
// the same outline (a sandbox's list is its own image).
func (t *runTarget) key() string {
	var b strings.Builder
	if t.si == nil {
		b.WriteString("sandbox\x00" + t.info.Sandbox)
	} else {
		b.WriteString(t.si.ID)
	}
	for _, op := range t.before {
		b.WriteString("\x00" + op.OpLine(0))
	}
	// The op is part of the key: a punch and a zero of the same range are different walks.
	fmt.Fprintf(&b, "\x00%s\x00%d\x00%d\x00%d\x00%t\x00%s", t.info.Path, t.spec.Request.Op, t.spec.Request.Offset,
		t.spec.Request.Length, t.spec.Request.KeepSize, request.ModesName(t.spec.Modes))
	return b.String()
}

// acquire holds the run's image (nothing for a sandbox).
func (t *runTarget) acquire() (func(), error) {
	if t.si == nil {
		return func() {}, nil
	}
	return t.si.Acquire()
}

// geometryOf is the geometry a client draws addresses with.
func geometryOf(v core.Volume) geometry {
	return geometry{BlockSize: v.BlockSize, BlocksPerSeg: v.BlocksPerSeg, Segment0Blkaddr: v.Segment0Blkaddr,
		MainBlkaddr: v.MainBlkaddr, MaxBlkaddr: v.MaxBlkaddr, SegsPerSec: max(v.SegsPerSec, 1)}
}

// withModes returns the same run in other modes.
func (t *runTarget) withModes(modes []core.Mode) *runTarget {
	c := *t
	c.run.Modes = modes
	c.spec.Modes = modes
	c.info.Mode = request.ModesName(modes)
	c.info.Modes = modeNames(modes)
	return &c
}

func modeNames(ms []core.Mode) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.String()
	}
	return out
}

// runQuery is a run's query read once: the image, the run and the operations before it (or a
// sandbox list). Everything that reserves for a run and then resolves it reads this one parse.
type runQuery struct {
	si      *StoredImage
	run     request.Run
	before  []request.Op
	sandbox string // a sandbox run's slot list, with its mode and op fields as given
	mode    string
	op      string
}

// parseRunQuery reads a run from a query (image, path, offset, length, keepSize, mode, op, size,
// before, or sandbox). Its errors are the query's 400s and 404s.
func (s *Server) parseRunQuery(q url.Values) (runQuery, error) {
	if list := q.Get("sandbox"); list != "" {
		return runQuery{sandbox: list, mode: q.Get(request.FieldMode), op: q.Get(request.FieldOp)}, nil
	}
	id := q.Get("image")
	if id == "" {
		return runQuery{}, badParam("image", "missing")
	}
	si, err := s.image(id)
	if err != nil {
		return runQuery{}, err
	}
	run, err := request.Parse(q.Get)
	if err != nil {
		return runQuery{}, err // a *request.FieldError: classify words the 400
	}
	rq := runQuery{si: si, run: run}
	if ops := q[FieldBefore]; len(ops) > 0 {
		if len(ops) >= request.MaxOps {
			return runQuery{}, badParam(FieldBefore, fmt.Sprintf("more than %d operations", request.MaxOps-1))
		}
		for k, line := range ops {
			op, err := request.ParseOp(line)
			if err != nil {
				return runQuery{}, badParam(FieldBefore, fmt.Sprintf("operation %d: %v", k+1, err))
			}
			rq.before = append(rq.before, op)
		}
	}
	return rq, nil
}

// resolveRun reads a run from a query and resolves it: the file as open(2) finds it, the
// operations before it applied in order.
func (s *Server) resolveRun(ctx context.Context, q url.Values) (*runTarget, error) {
	rq, err := s.parseRunQuery(q)
	if err != nil {
		return nil, err
	}
	return s.resolveQuery(ctx, rq)
}

// resolveQuery resolves a parsed run query.
func (s *Server) resolveQuery(ctx context.Context, rq runQuery) (*runTarget, error) {
	if rq.sandbox != "" {
		return resolveSandbox(rq.sandbox, rq.mode, rq.op)
	}
	return s.resolve(ctx, rq.si, rq.run, rq.before)
}

// resolvePlayerRun is resolveRun for a player (/ws/run, the player page): while the `before=`
// operations run, the most the run's outline build can reserve is held (outlineBound), so that a
// run whose outline the budget refuses is refused before they are simulated, and they reserve only
// what passes it. It is given back before the build reserves its own.
func (s *Server) resolvePlayerRun(ctx context.Context, q url.Values) (*runTarget, error) {
	rq, err := s.parseRunQuery(q)
	if err != nil {
		return nil, err
	}
	bound := s.outlineBound(ctx, rq)
	release, err := s.budget.reserve(bound)
	if err != nil {
		return nil, err
	}
	defer release()
	return s.resolveQuery(withReserved(ctx, bound), rq)
}

// resolve builds the engine's input for run on si after the operations before it.
func (s *Server) resolve(ctx context.Context, si *StoredImage, run request.Run, before []request.Op) (*runTarget, error) {
	f, err := s.resolvePath(ctx, si, run.Path)
	if run.Op == core.OpUnlink {
		// unlink(2) removes the name itself: a final symlink is not followed (the engine refuses
		// to evict a symlink's inode).
		f, err = si.Image.LookupContext(ctx, run.Path)
	}
	if err != nil {
		return nil, err
	}
	for k, op := range before {
		if op.Path == "" {
			continue // sync, tune, checkpoint, gc, now
		}
		of, err := s.resolvePath(ctx, si, op.Path)
		if err != nil {
			return nil, err
		}
		if of.Inode().Ino != f.Inode().Ino {
			return nil, badParam(FieldBefore, fmt.Sprintf("operation %d is on %s, not %s: a player plays one file", k+1, op.Path, run.Path))
		}
	}
	// The page and its websocket (and reconnects, mode switches) resolve the same run: the earlier
	// operations are simulated once (web/resolvecache.go).
	in, err := s.resolved.get(ctx, resolvedKey(si, f.Path(), before), func() (core.Input, int64, error) {
		base, err := source.FileInput(si.Image, f)
		if err != nil {
			return base, 0, err
		}
		if len(before) > 0 { // each operation is a whole simulation (web/reservations.go)
			done, err := s.reserveHeavy(ctx, max(beforeBytes(base.Volume, base.Inode.SlotsEnd, before)-reservedFor(ctx), 0))
			if err != nil {
				return base, 0, err
			}
			defer done()
		}
		// The player plays one file; operations on it (and sync, tune, checkpoint, gc, now) run
		// first, each on the state the previous one left, as on one mount (source.NewSeq: dirty
		// pages, writeback, the segment manager). Zeros, writes and greedy gc leave the same slots
		// and SIT in both modes; cost-benefit (gc 0) reads the modes' different mtimes: the
		// earlier operations run per-block.
		q, err := source.NewSeq(ctx, si.Image, core.PerBlock)
		if err != nil {
			return base, 0, err
		}
		if err := source.RunOps(ctx, q, si.Image, before, nil); err != nil {
			return base, 0, err
		}
		in := q.File(base)
		return in, resolvedBytes(base, in, before), nil
	})
	if err != nil {
		return nil, err
	}
	// What the played call walks: the file after the operations — and for a call that flushes
	// first (a zero: request.Played's FlushesFirst), after filemap_write_and_wait_range wrote back
	// the dirty pages of its range (Server.prepareZero: reserved, cancellable, cached). The state
	// after the operations carries the volume (ipu_policy, logs) and the dirty pages: a fresh mount
	// of it writes back the same pages. The other calls walk the file as the operations left it
	// (core.Seq.Walk: no writeback before).
	if run.Played().FlushesFirst {
		if in, err = s.prepareZero(ctx, resolvedKey(si, f.Path(), before), in, run); err != nil {
			return nil, err
		}
	}
	req := run.Request(in.Inode.Size)
	if run.Op == core.OpUnlink {
		// Where the name's dentry lives: f2fs_delete_entry's inline dentries, or a dentry block
		// the model refuses.
		if req.DentryInline, err = source.DentryInline(ctx, si.Image, run.Path); err != nil {
			return nil, err
		}
		// What the engine will refuse (a dentry block, a symlink, an inode written out of place)
		// is refused here, naming the function, before a player opens (422).
		if err := core.CheckUnlink(in, req); err != nil {
			return nil, err
		}
	}
	ino := f.Inode()
	note := compressionNote(ino)
	t := &runTarget{si: si, run: run, before: before, file: f,
		spec: player.Spec{Input: in, Request: req, Modes: run.Modes, Describe: source.NewDescriber(si.Image, f), Compression: note},
		info: runInfo{Op: run.Kind(), Image: si.ID, Path: f.Path(), Ino: ino.Ino, Size: i64s(in.Inode.Size), Offset: i64s(req.Offset),
			Length: i64s(req.Length), KeepSize: req.KeepSize, Mode: run.ModeName(), Modes: modeNames(run.Modes),
			Before: []string{}, Compressed: ino.Flags&core.FlagCompressed != 0, ClusterSize: ino.ClusterSize,
			Algorithm: ino.CompressAlgorithm, Compression: note},
		geom: geometryOf(in.Volume)}
	for _, op := range before {
		t.info.Before = append(t.info.Before, op.OpLine(0))
	}
	return t, nil
}

// prepareZero is the input the played zero of run walks: in (the file as the operations before it
// left it) after filemap_write_and_wait_range wrote back the dirty pages of its range
// (core.Seq.PrepareZero on a fresh mount of in). A writeback of many pages is a simulation of its
// own (issue 37: 35–68 CPU-s for the 180,000 dirty pages of a 700 MiB write), so it runs as the
// operations do: with the request's context, its memory reserved first (prepareBytes, less what the
// request has reserved for its answer), on a heavy-work slot, and its result kept in the
// resolved-input cache under the operations' key and the played range, so a reload, the player's
// websocket and the views of the same run write the pages back once.
func (s *Server) prepareZero(ctx context.Context, beforeKey string, in core.Input, run request.Run) (core.Input, error) {
	req := run.Request(in.Inode.Size)
	prepare := func() (core.Input, error) {
		q := core.NewSeq(core.PerBlock)
		q.SetContext(ctx)
		next, _, err := q.PrepareZero(in, req)
		return next, err
	}
	if len(in.Inode.Dirty) == 0 {
		return prepare() // nothing to write back: the argument checks only
	}
	key := fmt.Sprintf("%s%s\x00%d\x00%d\x00%t", preparePrefix, beforeKey, req.Offset, req.Length, req.KeepSize)
	return s.resolved.get(ctx, key, func() (core.Input, int64, error) {
		done, err := s.reserveHeavy(ctx, max(prepareBytes(len(in.Inode.Dirty))-reservedFor(ctx), 0))
		if err != nil {
			return in, 0, err
		}
		defer done()
		next, err := prepare()
		if err != nil {
			return in, 0, err
		}
		return next, resolvedBytes(in, next, []request.Op{request.RunOp(run)}), nil
	})
}

// resolveSandbox builds the run of a sandbox slot list (package sandbox): a synthetic file and
// volume, the listed slots zeroed — or, with op punch, punched (a list that maps a block twice is
// issue 28's clearest picture: the batched punch validates before it flushes and frees it twice). A
// truncate or an unlink needs node addresses, which the synthetic file has not: refused.
func resolveSandbox(list, mode, op string) (*runTarget, error) {
	l, err := sandbox.Parse(list)
	if err != nil {
		return nil, badParam("sandbox", err.Error())
	}
	modes := request.Both()
	if mode != "" {
		if modes, err = request.ParseModes(mode); err != nil {
			return nil, err
		}
	}
	in, req := l.Input(), l.Request()
	// The calls the sandbox's file can play: their declarations say (request.Played's Sandbox).
	ps, ok := request.PlayedSpec(op)
	if !ok || !ps.Played.Sandbox {
		var can []string
		for _, s := range request.Playable() {
			if s.Played.Sandbox {
				can = append(can, s.Kind)
			}
		}
		return nil, badParam(request.FieldOp, "a sandbox list plays "+strings.Join(can, " or ")+": the other calls free node blocks, which a slot list has not")
	}
	run := request.Run{Op: ps.Played.Op, Path: in.Path, Offset: req.Offset, Length: req.Length, HasLength: true, KeepSize: req.KeepSize, Modes: modes}
	req = run.Request(in.Inode.Size)
	canonical := l.String()
	return &runTarget{run: run,
		spec: player.Spec{Input: in, Request: req, Modes: modes},
		info: runInfo{Op: run.Kind(), Image: "", Path: in.Path, Ino: in.Inode.Ino, Size: i64s(in.Inode.Size), Offset: i64s(req.Offset),
			Length: i64s(req.Length), Mode: request.ModesName(modes), Modes: modeNames(modes), Before: []string{},
			Sandbox: canonical},
		geom: geometryOf(in.Volume)}, nil
}

// resolvePath finds path in si as open(2) does, following symbolic links.
func (s *Server) resolvePath(ctx context.Context, si *StoredImage, path string) (*imgio.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// A missing path is imgio's *fs.PathError wrapping fs.ErrNotExist: 404 in s.Error.
	return si.Image.ResolveContext(ctx, path)
}

// outline returns the shared outline of t, building it once, within the memory budget
// (web/outlinebudget.go): past it the build is refused with 503 and Retry-After.
func (s *Server) outline(ctx context.Context, t *runTarget) (*player.Outline, error) {
	return s.outlines.get(ctx, t.key(), func(ctx context.Context) (*player.Outline, error) {
		release, err := s.budget.reserve(outlineBuildBytes(t.spec))
		if err != nil {
			return nil, err
		}
		defer release()
		done, err := s.heavyWork(ctx)
		if err != nil {
			return nil, err
		}
		defer done()
		return player.Build(ctx, t.spec)
	})
}

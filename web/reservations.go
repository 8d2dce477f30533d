package web

import (
	"context"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/internal/f2fs"
	"github.com/zrviz/zrviz/player"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

// What each kind of work that allocates in proportion to its input reserves from the memory budget
// (web/budget.go) before it starts, and holds until its request ends (issue 19). Each figure is
// the heap in use the work was measured to grow by (web/reservation_test.go holds every one of
// them against the heap for the worst input of its kind we can craft; docs/reliability.md has the
// table), with the margin said at each: the heap a request grows by also counts the garbage the
// collector has not yet taken, which is what the process's RSS shows.

// Resolving `before=` operations (web/runs.go resolve). A write reserves the blocks it will dirty
// and its writeback (fsync, sync, or the zero's filemap_write_and_wait_range) allocates and remaps
// them: measured 456–670 B of heap per block written and written back (write + fsync of the whole
// free space of 256 MiB, 1 GiB and 2 GiB volumes: +11, +98–142 and +232 MiB). A zero walks the
// file's slots as one simulation does (runPerSlot). What a sequence can write is bounded by the
// volume's main area whatever the ops say (a write past the free space stops at ENOSPC).
// TestBeforeReservation: +162 MiB against 255 reserved for write + fsync of a 1 GiB volume's free
// space (measured before issue 29; the model now refuses the fill past f2fs_need_SSR's threshold,
// and the 768 MiB short of it measure +71 MiB against 196); +17 MiB against 148 for 63 zeros of a 9 GiB sparse file (holes walk cheaply, but the
// reservation cannot tell holes from slots without reading the file's nodes).
const (
	beforeBase     = 4 << 20
	beforePerBlock = 1 << 10
)

// beforeBytes is what resolving ops on a file of fileSlots slots (one past its last mapped one)
// on volume v reserves.
func beforeBytes(v core.Volume, fileSlots uint64, ops []request.Op) int64 {
	main := mainBlocks(v)
	var written int64
	walks := false
	for _, op := range ops {
		c := op.Cost() // the op's declaration says what it dirties and whether it walks
		walks = walks || c.Walks
		written = min(written+c.Dirties, max(main, 0))
	}
	n := beforeBase + beforePerBlock*written
	if walks {
		n += runPerSlot * (int64(fileSlots) + written)
	}
	return n
}

// prepareBytes is what writing back a played zero's range (core.Seq.PrepareZero: at most the
// file's dirty pages, dirty of them) reserves: a writeback's per-page figure, as `before=`'s
// (456–670 B a block written and written back; since issue 37 writeback holds a page's new address,
// not a copy of its dnode: TestWritebackHeapPerPage allocates ~300 B a page).
func prepareBytes(dirty int) int64 { return beforeBase + beforePerBlock*int64(dirty) }

// The writeback answer (GET /api/images/{id}/writeback, web/writeback.go) runs the run's sequence
// (the operations, the played zero, the unmount) on one mount, as `before=` does, and records every
// page writeback handled: the page, the kernel function, its SIT bits, then the whole answer is
// encoded at once (about 400 bytes of JSON a page, in a buffer that doubles). Every page a write
// dirties is written back once, by a later fsync, sync, zero over it or the unmount; a write past the
// free space stops at ENOSPC, so each write counts the main area's blocks at most, but the sequence's
// writes add up (21 of the whole free space record 21 times as many pages). TestWritebackReservation.
const wbPerPage = 1 << 10

// writebackBytes is what the writeback answer of ops and the played zero on a file of fileSlots
// slots of volume v reserves.
func writebackBytes(v core.Volume, fileSlots uint64, ops []request.Op) int64 {
	main := mainBlocks(v)
	pages := int64(2) // the played zero's partial pages
	for _, op := range ops {
		pages += min(op.Cost().Dirties, main)
	}
	played := append(append([]request.Op(nil), ops...), request.Op{Kind: request.OpZero})
	return beforeBytes(v, fileSlots, played) + wbPerPage*pages
}

// The cleaner's model (package gc: GET /api/images/{id}/gc, the /next page, the player's what-happens-
// next timeline) holds per main-area segment its SIT entry (valid count, mtime, the 64-byte valid
// map), clones of it (the timeline clones the state, and again for the other policy every round)
// and one map of 3 bytes a segment per frame, and the gc API one list of 32 bytes a segment per op
// and the answer's JSON of them. 1 KiB a segment covers them all; TestGCReservation measures it on
// the demo.
const (
	gcBase       = 1 << 20
	gcPerSegment = 1 << 10
)

// gcBytes is what replaying the cleaner's ops on a volume of mainSegs main-area segments reserves.
func gcBytes(mainSegs uint32) int64 { return gcBase + gcPerSegment*int64(mainSegs) }

// nextBytes is what building the what-happens-next timeline after run t reserves: its `before=`
// zeros replayed from the image (their SIT changes are invalidations the cleaner's model applies),
// the run simulated in one mode, and the cleaner's model.
func nextBytes(t *runTarget) int64 {
	slots := max(t.spec.Input.Inode.SlotsEnd, player.PagesOf(t.spec).End)
	n := gcBytes(t.si.Image.Volume().MainSegmentCount) + runBase + runPerSlot*int64(slots)
	if len(t.before) > 0 {
		n += beforeBytes(t.spec.Input.Volume, slots, t.before)
	}
	return n
}

// A kept resolved input (web/resolvecache.go: the file and volume as a run's `before=` operations
// left them) holds, per operation that changes slots, the overlay records of the dnodes it
// changed (core's slotOverlay: a compressed copy of each dnode's slots, layered over the previous
// operation's; the last layer lists every dnode any layer has), the SIT segments it changed, and
// the file's dirty page list (8 B a page).
// TestResolvedCacheCharge holds the charge against the heap a kept input retains for the worst
// inputs of TestBeforeReservation.
const (
	resolvedBase     = 256 << 10
	resolvedPerDnode = 1 << 10
	slotsPerDnode    = f2fs.DefAddrsPerBlock // ADDRS_PER_BLOCK: a direct node's slots (an inode holds fewer)
)

// resolvedBytes is what the input in, left by ops on the file whose input was base, is charged
// while kept (nothing without operations): every operation counted as changing every dnode the
// file has after them (holes have none), or, when the source cannot list them, every dnode its
// slots and the writes can reach.
func resolvedBytes(base, in core.Input, ops []request.Op) int64 {
	if len(ops) == 0 {
		return 0 // the image's own input: it holds nothing the image does not
	}
	var dnodes int64
	if l, ok := in.Slots.(core.DnodeLister); ok {
		if starts, ok := l.DnodeStarts(); ok {
			dnodes = int64(len(starts)) + 1
		}
	}
	if dnodes == 0 {
		var written int64
		for _, op := range ops {
			written += op.Cost().Dirties
		}
		slots := int64(max(base.Inode.SlotsEnd, in.Inode.SlotsEnd)) + min(written, mainBlocks(base.Volume))
		dnodes = (slots+slotsPerDnode-1)/slotsPerDnode + 1
	}
	return resolvedBase + 8*int64(len(in.Inode.Dirty)) + int64(len(ops))*resolvedPerDnode*dnodes
}

// mainBlocks is the blocks of v's main area (0 for a volume that lies about it).
func mainBlocks(v core.Volume) int64 { return max(int64(v.MaxBlkaddr)-int64(v.MainBlkaddr), 0) }

// A run API answer (GET /api/images/{id}/run) holds each mode's core.Result (its calls, compressed
// into runs, and the file's slot map after) until the answer is written. Measured on the crafted
// 1,020,909-slot file whose every slot is its own extent (issue 13's rows layout, no two calls
// merge): heap +48 MiB for one mode, +71 MiB for both (47 and 95 MiB were reserved before, 1 MiB +
// 48 B a slot; issue 19 measured the process grow 2–3.7× past that with slow readers, which the
// write deadline and the heavy slot's release after simulating now bound). 64 B a slot is a third
// over the measured 49.
const (
	runBase    = 1 << 20
	runPerSlot = 64
)

// runBytes is what the run API's answer for spec reserves.
func runBytes(spec player.Spec) int64 {
	slots := max(spec.Input.Inode.SlotsEnd, player.PagesOf(spec).End)
	return int64(len(spec.Modes)) * (runBase + runPerSlot*int64(slots))
}

// Parsing an uploaded trace (POST /api/images/{id}/traces) holds its calls as runs of 12 bytes
// (ktrace.Calls); the worst trace is one whose calls never merge into a run ("0 1", "2 1", "4 1",
// …: two bytes of body at the least per call), up to traceLimits.MaxCalls. The slice doubles as
// it grows, so the old and the new array and the garbage of earlier growth are live at once:
// measured +153 MiB (38 B a call) for the worst trace at the call limit, 4,194,304 calls in 41 MB
// (TestTraceReservation); 48 B a call.
const (
	traceParseBase    = 1 << 20
	traceParsePerCall = 48
)

// traceParseBytes is what parsing a trace body of at most n bytes reserves (n < 0: unknown length,
// bounded by MaxTraceBody).
func traceParseBytes(n int64) int64 {
	if n < 0 || n > MaxTraceBody {
		n = MaxTraceBody
	}
	calls := min(n/2+1, int64(traceLimits.MaxCalls))
	return traceParseBase + traceParsePerCall*calls
}

// A trace answer (GET /api/images/{id}/traces/{tid}) is streamed through a buffer of
// traceAnswerBuffer bytes (it was built whole: about 12 bytes a call, twice over for the encoder's
// copy, held as long as the client took to read it); it reserves the buffer and the encoder's head.
// Measured: +0.1 MiB for the 50 MB answer of the worst trace.
const (
	traceAnswerBuffer = 64 << 10
	traceAnswerBytes  = 4 * traceAnswerBuffer
)

// The diff page (GET /diff?a=&b=) holds both images' differences (imgdiff.Diff: a record per
// changed slot, node, NAT entry, SIT entry and bit) and the page made of them; with &ops= the
// after-image check models the operations on a (as `before=` does) and compares every block.
// Changes are bounded by the blocks of the two main areas. Measured (TestDiffReservation): +4.2 MiB
// for the demo against a copy with all its 21,725 data slots released (15.5 MiB reserved), +30 MiB
// with the check of a write and fsync of the demo's whole free space and a zero (87 MiB reserved).
const (
	diffBase     = 8 << 20
	diffPerBlock = 64
)

// diffBytes is what comparing a and b reserves; ops (the after-image check's operations, nil
// without) add what modelling them on a holds: as `before=` on a file as large as a's main area
// (the operations may name several files; together their mapped slots are a's blocks at most).
func diffBytes(a, b core.Volume, ops []request.Op) int64 {
	n := diffBase + diffPerBlock*(mainBlocks(a)+mainBlocks(b))
	if len(ops) > 0 {
		n += beforeBytes(a, uint64(mainBlocks(a)), ops)
	}
	return n
}

// runAnswerBound is, for a run API query with `before=` operations, the most its answer can reserve
// (runBytes) once they have run: the file's pages as the operations can grow it (a write, or a zero
// without keep_size, to offset+length) and the run's own range. handleRun reserves it before the
// operations run, so that an answer refused for its size does not simulate 63 of them first
// (issue 19: 22 CPU-s). 0 when there are no operations, or when the query is one resolveRun will
// refuse (its error is resolveRun's to give).
func (s *Server) runAnswerBound(ctx context.Context, rq runQuery) int64 {
	b, ok := s.beforeBound(ctx, rq)
	if !ok {
		return 0
	}
	return int64(b.modes) * (runBase + runPerSlot*int64(b.end))
}

// outlineBound is, for a player's query (/ws/run, the player page) with `before=` operations whose
// result is not cached yet, the most the run's outline build can reserve (outlineBuildBytes) once
// they have run: its range, from the run's offset to the file's end as the operations can grow it.
// The player reserves it before the operations run and gives it back before the build reserves its
// own, so that a run whose outline the budget refuses does not simulate its operations first. 0
// when there is nothing to simulate (no operations, their result cached, a query resolveRun will
// refuse).
func (s *Server) outlineBound(ctx context.Context, rq runQuery) int64 {
	b, ok := s.beforeBound(ctx, rq)
	if !ok || s.resolved.has(b.key) {
		return 0
	}
	start := uint64(max(b.run.Offset, 0)) >> 12
	return int64(b.end-min(start, b.end)) * int64(b.modes) * outlineBuildPerPage
}

// beforeRun is what a query with `before=` operations can reach once they have run, read before
// they run: the run's modes, the file's pages as the operations can grow it (a write, or a zero
// without keep_size, to offset+length) with the run's own range, and the resolved-input cache's key.
type beforeRun struct {
	run   request.Run
	modes int
	end   uint64 // one past the last page
	key   string
}

// beforeBound reads what rq's operations can reach before they run (the run and operations as
// parseRunQuery read them, once); ok is false when there are no operations or the file cannot be
// found (resolveQuery's error to give).
func (s *Server) beforeBound(ctx context.Context, rq runQuery) (beforeRun, bool) {
	if len(rq.before) == 0 || rq.sandbox != "" {
		return beforeRun{}, false
	}
	f, err := s.resolvePath(ctx, rq.si, rq.run.Path)
	if err != nil {
		return beforeRun{}, false
	}
	pages := func(end int64) uint64 { return uint64(max(end, 0)+4095) >> 12 }
	end := pages(f.Inode().Size)
	for _, op := range rq.before {
		end = max(end, pages(op.Cost().GrowsTo))
	}
	if rq.run.HasLength {
		end = max(end, pages(rq.run.Offset+rq.run.Length))
	}
	return beforeRun{run: rq.run, modes: len(rq.run.Modes), end: end, key: resolvedKey(rq.si, f.Path(), rq.before)}, true
}

// resolveReserved resolves rq (an image run; a sandbox run is the caller's to refuse) with what its
// view needs reserved first: need is given the file as the image holds it and the pages the file
// can reach once the `before=` operations have run (the operations' own growth and the run's
// range), read before any runs. A view that can never fit the budget is thus refused (413) and one
// that does not fit now (503) before the operations are simulated (issue 37: 3.3 CPU-s, then a
// 503 "retry"), and the operations and the played zero's writeback reserve only what passes it.
// release gives the reservation back.
func (s *Server) resolveReserved(ctx context.Context, rq runQuery, need func(base core.Input, end uint64) int64) (t *runTarget, release func(), err error) {
	if rq.si == nil {
		return nil, nil, badParam("image", "missing")
	}
	f, err := s.resolvePath(ctx, rq.si, rq.run.Path)
	if err != nil {
		return nil, nil, err
	}
	base, err := source.FileInput(rq.si.Image, f)
	if err != nil {
		return nil, nil, err
	}
	pages := func(end int64) uint64 { return uint64(max(end, 0)+4095) >> 12 }
	end := max(pages(f.Inode().Size), base.Inode.SlotsEnd)
	for _, op := range rq.before {
		end = max(end, pages(op.Cost().GrowsTo))
	}
	if rq.run.HasLength {
		end = max(end, pages(rq.run.Offset+rq.run.Length))
	}
	n := need(base, end)
	release, err = s.budget.reserve(n)
	if err != nil {
		return nil, nil, err
	}
	t, err = s.resolveQuery(withReserved(ctx, n), rq)
	if err != nil {
		release()
		return nil, nil, err
	}
	return t, release, nil
}

// reservedKey is the context key of what a request has already reserved for its answer when it
// resolves its run: the operations before it reserve only what passes that, as they end before the
// answer's results exist.
type reservedKey struct{}

func withReserved(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, reservedKey{}, n)
}

func reservedFor(ctx context.Context) int64 {
	n, _ := ctx.Value(reservedKey{}).(int64)
	return n
}

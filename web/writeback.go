package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/go-chi/chi/v5"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

// Writeback around the played zero (issue 17): the dirty pages the run's operations leave behind
// (fill_zero's partial pages, a buffered write's pages) are written back by a later zero over
// them (filemap_write_and_wait_range, before its walk), by fsync and sync, and at the unmount. The
// server runs the run's sequence on core.Seq and says, per operation, which page went where: in
// place or out of place, old block → new block, the current segment's log, and the SIT change of
// each block with the segment's valid count before and after. static/js/writeback.js words it.

// wbGroup is what one operation of the sequence did to dirty pages.
type wbGroup struct {
	Op     int    `json:"op"`   // 1-based place in the sequence; the unmount is last
	Line   string `json:"line"` // the operation in the ops language, "unmount" for the unmount
	Kind   string `json:"kind"` // request.Op kinds, "unmount"
	Played bool   `json:"played,omitempty"`
	// Via is the kernel path that wrote the pages back (the operation's own for a zero: before
	// its walk).
	Via        string `json:"via"`
	Errno      string `json:"errno,omitempty"`
	Dirtied    uint64 `json:"dirtied"`              // dirty pages of the file after the operation
	Checkpoint bool   `json:"checkpoint,omitempty"` // prefree segments became free
	// OtherSIT: the operation changed the SIT of a segment writeback touched otherwise too
	// (f2fs_balance_fs's garbage collection inside it): the counts after its pages are not the
	// segment's after the operation.
	OtherSIT bool `json:"otherSIT,omitempty"`
	// Pages come last: the answer is streamed a page at a time after the group's other fields
	// (streamWriteback).
	Pages []wbPage `json:"pages"`
}

// wbPage is one page writeback handled: core.PageWrite with the kernel function and the SIT change.
type wbPage struct {
	core.PageWrite
	Func string  `json:"func"`
	SIT  []wbBit `json:"sit"` // out of place: the old block's bit cleared, the new one's set
}

// wbBit is one SIT bit writeback changed, with the segment's valid count before and after.
type wbBit struct {
	Segno  uint32 `json:"segno"`
	Bit    uint32 `json:"bit"` // block offset in the segment
	Addr   uint32 `json:"addr"`
	Set    bool   `json:"set"`
	Before uint32 `json:"before"` // the segment's valid blocks before this page
	After  uint32 `json:"after"`
}

// wbBody is the answer to GET /api/images/{id}/writeback.
type wbBody struct {
	Path   string    `json:"path"`
	Groups []wbGroup `json:"groups"`
}

// handleWriteback answers GET /api/images/{id}/writeback?path=…&offset=…&length=…[&before=…]: what
// writeback does to the played file's dirty pages around the run the query names (the player's own
// query). 400 for a bad run or a sandbox run (no operations before it, nothing dirty).
func (s *Server) handleWriteback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	q.Set("image", chi.URLParam(r, "id"))
	if q.Get("sandbox") != "" {
		s.Error(w, r, badParam("sandbox", "a sandbox run has no page cache: nothing is written back"))
		return
	}
	rq, err := s.parseRunQuery(q)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	// The sequence and every page it writes back, until the answer is written (web/reservations.go),
	// reserved before the run's operations are resolved.
	t, release, err := s.resolveReserved(r.Context(), rq, func(base core.Input, end uint64) int64 {
		return writebackBytes(base.Volume, end, rq.before)
	})
	if err != nil {
		s.Error(w, r, err)
		return
	}
	defer release()
	base, err := source.FileInput(t.si.Image, t.file)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	done, err := s.heavyWork(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	defer done()
	groups, err := writebackGroups(r.Context(), t.si.Image, base, t.before, t.run)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	streamWriteback(w, wbBody{Path: t.info.Path, Groups: groups})
}

// streamWriteback writes the answer through a 64 KiB buffer, a page at a time, instead of
// marshalling it whole (about 400 bytes of JSON a page, in a buffer that doubled: 55 MB for the
// 155,609 pages of issue 37's attack file).
func streamWriteback(w http.ResponseWriter, b wbBody) {
	head, err := json.Marshal(wbBody{Path: b.Path})
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: "internal error"})
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	// The head ends `"groups":null}`, each group `"pages":null}`: their lists take the place.
	bw.Write(bytes.TrimSuffix(head, []byte("null}")))
	bw.WriteByte('[')
	for i, g := range b.Groups {
		if i > 0 {
			bw.WriteByte(',')
		}
		pages := g.Pages
		g.Pages = nil
		gb, err := json.Marshal(g)
		if err != nil {
			return // the status is sent: the client sees a cut answer
		}
		bw.Write(bytes.TrimSuffix(gb, []byte("null}")))
		bw.WriteByte('[')
		for k, p := range pages {
			if k > 0 {
				bw.WriteByte(',')
			}
			pb, err := json.Marshal(p)
			if err != nil {
				return
			}
			bw.Write(pb)
		}
		bw.WriteString("]}")
	}
	bw.WriteString("]}\n")
	bw.Flush()
}

// Kernel paths that write dirty pages back, by operation kind.
var wbVia = map[string]string{
	request.OpZero:  "f2fs_zero_range → filemap_write_and_wait_range (before the walk)",
	request.OpFsync: "f2fs_do_sync_file → file_write_and_wait_range",
	request.OpSync:  "sync(2): the flusher's writeback (f2fs_write_data_pages)",
	"unmount":       "umount: sync_filesystem → f2fs_write_data_pages",
}

// pageFunc is the kernel function that handled a page as writeback did.
func pageFunc(how string) string {
	switch how {
	case core.WroteInPlace:
		return "f2fs_do_write_data_page → f2fs_inplace_write_data"
	case core.WroteOutPlace:
		return "f2fs_do_write_data_page → f2fs_outplace_write_data → f2fs_allocate_data_block"
	}
	return "f2fs_write_single_data_page"
}

// writebackGroups runs the sequence (the operations before the played zero, the zero, the unmount)
// on one mount of img in per-block mode, as the player resolves it (source.NewSeq, with the
// segment manager: checkpoint and gc run too; both modes write back the same pages) and says what
// writeback did at each operation. The operations run on the one sequence runner, source.RunOps,
// as every other caller's do: a zero runs whole (core.Seq.Zero), so the view sees the balance
// points the model sees, and refuses what it refuses.
func writebackGroups(ctx context.Context, img *imgio.Image, base core.Input, before []request.Op, played request.Run) ([]wbGroup, error) {
	q, err := source.NewSeq(ctx, img, core.PerBlock)
	if err != nil {
		return nil, err
	}
	// sitNow is the SIT the operations so far left: frozen, as every state the Seq leaves, so it is
	// the SIT before the next operation however that one changes the volume.
	sitNow := func() core.SITSource {
		if vol, _, ok := q.State(); ok {
			return vol.SIT
		}
		return base.SIT
	}
	var out []wbGroup
	// add counts the SIT changes of the pages ps, from prev up to after (the SIT once they were
	// written back), into g.
	add := func(g wbGroup, prev, after core.SITSource, ps []core.PageWrite) error {
		g.Pages = []wbPage{}
		if err := sitChanges(q, prev, after, &g, ps); err != nil {
			return err
		}
		if g.Via == "" {
			g.Via = wbVia[g.Kind]
		}
		if g.Via == "" {
			g.Via = g.Kind
		}
		g.Dirtied = uint64(len(q.File(base).Inode.Dirty))
		out = append(out, g)
		return ctx.Err()
	}
	prev := sitNow()
	ops := append(slices.Clip(before), request.RunOp(played))
	err = source.RunOps(ctx, q, img, ops, func(st *source.Step) error {
		g := wbGroup{Op: st.Index + 1, Line: st.Op.OpLine(0), Kind: st.Op.Kind}
		var err error
		if st.Op.Walks() { // a zero, punch or truncate: its walk
			g.Errno = st.Walk.Errno
			if g.Played = st.Index == len(before); g.Played {
				g.Line = playedLine(played, st.Request)
			}
			// The pages written back before the walk (filemap_write_and_wait_range), counted up to
			// the SIT the walk ran on: the walk's own f2fs_invalidate_blocks calls are not
			// writeback's, and garbage collection inside the zero (f2fs_balance_fs) comes after
			// them.
			err = add(g, prev, st.File.SIT, st.Pages)
		} else {
			g.Errno, g.Checkpoint = st.Other.Errno, st.Other.Checkpoint
			err = add(g, prev, sitNow(), st.Other.Pages)
		}
		prev = sitNow()
		if err != nil {
			return &source.OpError{Index: st.Index, Line: g.Line, Err: err}
		}
		return nil
	})
	if oe := (*source.OpError)(nil); errors.As(err, &oe) && oe.Index == len(before) {
		// The played zero is not one of the run's operations: name it as the player does.
		return nil, fmt.Errorf("the played zero (%s): %w", playedLine(played, played.Request(q.File(base).Inode.Size)), oe.Err)
	}
	if err != nil {
		return nil, err
	}
	res, err := q.Unmount()
	if err != nil {
		return nil, fmt.Errorf("unmount: %w", err)
	}
	if err := add(wbGroup{Op: len(ops) + 1, Line: "unmount", Kind: "unmount", Checkpoint: res.Checkpoint}, prev, sitNow(), res.Pages); err != nil {
		return nil, err
	}
	return out, nil
}

// playedLine is the played zero in the ops language, its length resolved (req).
func playedLine(played request.Run, req core.Request) string {
	return request.Run{Op: played.Op, Path: played.Path, Offset: req.Offset, Length: req.Length, HasLength: true, KeepSize: req.KeepSize}.OpLine(0)
}

// sitChanges fills g.Pages from ps, the pages an operation wrote back just now on q, with the SIT
// bits each changed and the segment's valid count around it: counted on from prev, the SIT before
// the operation (a frozen state: later operations do not change it), page by page. Where the
// counts do not reach after, the SIT once the pages were written back, the operation changed those
// segments otherwise too (garbage collection inside it): g.OtherSIT says so.
func sitChanges(q *core.Seq, prev, after core.SITSource, g *wbGroup, ps []core.PageWrite) error {
	vol, _, ok := q.State()
	if !ok {
		for _, p := range ps {
			g.Pages = append(g.Pages, wbPage{PageWrite: p, Func: pageFunc(p.How), SIT: []wbBit{}})
		}
		return nil
	}
	v := vol.Volume
	now := map[uint32]uint32{}
	count := func(segno uint32) (uint32, error) {
		if n, ok := now[segno]; ok {
			return n, nil
		}
		n, _, err := prev.SegmentValidMap(segno)
		if err != nil {
			return 0, fmt.Errorf("segment %d: %w", segno, err)
		}
		return n, nil
	}
	bit := func(a uint32, set bool) (wbBit, error) {
		r := a - v.MainBlkaddr
		b := wbBit{Segno: r / v.BlocksPerSeg, Bit: r % v.BlocksPerSeg, Addr: a, Set: set}
		n, err := count(b.Segno)
		if err != nil {
			return b, err
		}
		b.Before, b.After = n, n+1
		if !set {
			if n == 0 {
				return b, fmt.Errorf("segment %d: a bit cleared by writeback, yet the model counts 0 valid blocks", b.Segno)
			}
			b.After = n - 1
		}
		now[b.Segno] = b.After
		return b, nil
	}
	for _, p := range ps {
		wp := wbPage{PageWrite: p, Func: pageFunc(p.How), SIT: []wbBit{}}
		if p.How == core.WroteOutPlace {
			if isAddrValue(p.Old) && p.Old >= v.MainBlkaddr {
				b, err := bit(p.Old, false)
				if err != nil {
					return err
				}
				wp.SIT = append(wp.SIT, b)
			}
			b, err := bit(p.New, true)
			if err != nil {
				return err
			}
			wp.SIT = append(wp.SIT, b)
		}
		g.Pages = append(g.Pages, wp)
	}
	for segno, n := range now {
		m, _, err := after.SegmentValidMap(segno)
		if err != nil {
			return fmt.Errorf("segment %d: %w", segno, err)
		}
		if m != n {
			g.OtherSIT = true
		}
	}
	return nil
}

// isAddrValue reports whether a slot value is a block address (not NULL, NEW or the compressed
// cluster's marker).
func isAddrValue(a uint32) bool {
	return a != core.NullAddr && a != core.NewAddr && a != core.CompressAddr
}

// opFormsJSON is the ops language's forms (request.Forms) as the player's "next operation" reads
// them (static/js/opsform.js).
func opFormsJSON() string {
	b, err := json.Marshal(request.Forms())
	if err != nil {
		return "[]"
	}
	return string(b)
}

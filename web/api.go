package web

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/request"
)

// imageInfo is one row of GET /api/images.
type imageInfo struct {
	ID     string       `json:"id"`
	Name   string       `json:"name"`
	Size   int64        `json:"size"`
	Format imgio.Format `json:"format"`
	Added  time.Time    `json:"added"`
	Upload bool         `json:"upload"` // a stored upload (DELETE removes it), not the demo or a command-line image
}

// handleListImages answers GET /api/images: every loaded image, demo first.
func (s *Server) handleListImages(w http.ResponseWriter, r *http.Request) {
	list := s.images()
	out := make([]imageInfo, 0, len(list))
	for _, si := range list {
		out = append(out, imageInfo{ID: si.ID, Name: si.Name, Size: si.Size, Format: si.Format, Added: si.Added, Upload: si.Upload})
	}
	writeJSON(w, http.StatusOK, out)
}

// inspectBody is GET /api/images/{id}: the CLI's `inspect --json` shape plus the image's identity,
// a page of the paths at a time.
type inspectBody struct {
	ID       string        `json:"id"`
	Name     string        `json:"name"`
	Size     int64         `json:"size"`
	Format   imgio.Format  `json:"format"`
	Volume   imgio.Volume  `json:"volume"`
	Files    []imgio.Entry `json:"files"`
	Next     string        `json:"next,omitempty"` // more paths follow: pass as ?after=
	Problems []listProblem `json:"problems"`       // what the listing stepped over (up to this page)
	Dropped  int           `json:"problemsDropped,omitempty"`
}

// listProblem is an imgio.ListProblem as JSON.
type listProblem struct {
	Path  string `json:"path"`
	Count int    `json:"count"`
	Error string `json:"error"`
}

func listProblems(ps imgio.ListProblems) ([]listProblem, int) {
	out := make([]listProblem, 0, len(ps.List))
	for _, p := range ps.List {
		out = append(out, listProblem{Path: p.Path, Count: p.Count, Error: p.Err.Error()})
	}
	return out, ps.Dropped
}

// Listing pages: a listing's memory and answer are bounded by its page, whatever the image holds.
const (
	defaultListPage = 10000
	maxListPage     = 100000
)

// listLimit reads ?limit= (default def, at most most).
func listLimit(r *http.Request, def, most int) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > most {
		return 0, badParam("limit", fmt.Sprintf("%q: want 1 to %d", v, most))
	}
	return n, nil
}

// errPageFull stops a walk once a page is full.
var errPageFull = errors.New("page full")

// handleInspect answers GET /api/images/{id}[?after=PATH&limit=N]: the volume and a page of the
// image's paths in walk order ("/" first, then depth first by name), from just after PATH. A damaged
// or hostile tree (a dentry block reached twice, a path over PATH_MAX) is listed as far as it is
// sound, and what was stepped over is in "problems".
func (s *Server) handleInspect(w http.ResponseWriter, r *http.Request) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	limit, err := listLimit(r, defaultListPage, maxListPage)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	after := r.URL.Query().Get("after")
	body := inspectBody{ID: si.ID, Name: si.Name, Size: si.Size, Format: si.Format, Volume: si.Image.Volume(),
		Files: []imgio.Entry{}}
	skipping := after != ""
	probs, err := si.Image.Walk(r.Context(), func(e imgio.Entry) error {
		if skipping {
			skipping = e.Path != after
			return nil
		}
		if len(body.Files) == limit {
			body.Next = body.Files[limit-1].Path
			return errPageFull
		}
		body.Files = append(body.Files, e)
		return nil
	})
	if err != nil && !errors.Is(err, errPageFull) {
		s.Error(w, r, err)
		return
	}
	body.Problems, body.Dropped = listProblems(probs)
	writeJSON(w, http.StatusOK, body)
}

// dirBody is GET /api/images/{id}/dir: imgio.DirPage as JSON.
type dirBody struct {
	Dir      imgio.Entry   `json:"dir"`
	Entries  []imgio.Entry `json:"entries"`
	More     bool          `json:"more"`
	Next     string        `json:"next,omitempty"`
	Problems []listProblem `json:"problems"`
	Dropped  int           `json:"problemsDropped,omitempty"`
}

// handleDir answers GET /api/images/{id}/dir?path=DIR[&after=NAME&limit=N]: one page of one
// directory, sorted by name (the image page's tree opens directories with it).
func (s *Server) handleDir(w http.ResponseWriter, r *http.Request) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	q := r.URL.Query()
	dir := q.Get("path")
	if dir == "" {
		dir = "/"
	}
	limit, err := listLimit(r, imgio.MaxDirPage, imgio.MaxDirPage)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	page, err := si.Image.ReadDir(r.Context(), dir, q.Get("after"), limit)
	if err != nil {
		s.Error(w, r, err) // a missing directory is imgio's fs.ErrNotExist: 404 in s.Error
		return
	}
	body := dirBody{Dir: page.Dir, Entries: page.Entries, More: page.More, Next: page.Next}
	if body.Entries == nil {
		body.Entries = []imgio.Entry{}
	}
	body.Problems, body.Dropped = listProblems(page.Problems)
	writeJSON(w, http.StatusOK, body)
}

// lookup resolves the image {id} and the "path" query parameter.
func (s *Server) lookup(r *http.Request) (*StoredImage, *imgio.File, error) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		return nil, nil, err
	}
	p := r.URL.Query().Get("path")
	if p == "" {
		return nil, nil, badParam("path", "missing")
	}
	if !strings.HasPrefix(p, "/") {
		return nil, nil, badParam("path", "must be absolute")
	}
	// As open(2) and the runs do: a symbolic link's map is its target's.
	f, err := s.resolvePath(r.Context(), si, p)
	if err != nil {
		return nil, nil, err
	}
	return si, f, nil
}

// mapBody is GET /api/images/{id}/map: the CLI's `map --json` shape, a page at a time.
type mapBody struct {
	Path    string         `json:"path"`
	Ino     uint32         `json:"ino"`
	Size    int64          `json:"size"`
	From    uint64         `json:"from"`
	Extents []imgio.Extent `json:"extents"`
	Next    uint64         `json:"next,omitempty"` // more extents follow: pass as ?from=
}

// handleMap answers GET /api/images/{id}/map?path=P[&from=N&limit=L]: the file's extents from file
// block index N (default 0), at most L of them (default defaultMapPage, at most maxMapPage), and
// "next" when more follow (web/filemap.go).
func (s *Server) handleMap(w http.ResponseWriter, r *http.Request) {
	si, f, err := s.lookup(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	limit, err := listLimit(r, defaultMapPage, maxMapPage)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	var from uint64
	if v := r.URL.Query().Get("from"); v != "" {
		if from, err = strconv.ParseUint(v, 10, 64); err != nil {
			s.Error(w, r, badParam("from", strconv.Quote(v)+" is not a file block index"))
			return
		}
	}
	ext, next, err := mapPage(r.Context(), si.Image, f, from, limit)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	in := f.Inode()
	writeJSON(w, http.StatusOK, mapBody{Path: f.Path(), Ino: in.Ino, Size: in.Size, From: from, Extents: ext, Next: next})
}

// dnodeInfo is one node of GET /api/images/{id}/dnodes.
type dnodeInfo struct {
	Start   uint64   `json:"start"`   // file block index of the node's first slot
	Len     int      `json:"len"`     // data slots in the node
	Kind    string   `json:"kind"`    // "inode" or "direct"
	Nid     uint32   `json:"nid"`     // node id
	Offset  uint32   `json:"offset"`  // footer ofs_of_node
	Blkaddr uint32   `json:"blkaddr"` // where the node block is
	Path    string   `json:"path"`    // "inode", "i_nid[0]", "i_nid[2]/3", ...
	Parents []uint32 `json:"parents"` // nids of the indirect nodes above
}

// dnodesBody is GET /api/images/{id}/dnodes: the file's node structure.
type dnodesBody struct {
	Path          string      `json:"path"`
	Ino           uint32      `json:"ino"`
	Size          int64       `json:"size"`
	Type          string      `json:"type"`
	Inline        uint8       `json:"inline"`
	AddrsPerInode int         `json:"addrsPerInode"`
	Nids          [5]uint32   `json:"nids"` // i_nid[0..4]: direct, direct, indirect, indirect, double indirect
	Dnodes        []dnodeInfo `json:"dnodes"`
}

func (s *Server) handleDnodes(w http.ResponseWriter, r *http.Request) {
	_, f, err := s.lookup(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	dns, err := f.Dnodes()
	if err != nil {
		s.Error(w, r, err)
		return
	}
	in := f.Inode()
	out := dnodesBody{Path: f.Path(), Ino: in.Ino, Size: in.Size, Type: string(in.Type), Inline: in.Inline,
		AddrsPerInode: in.AddrsPerInode, Nids: in.Nids, Dnodes: make([]dnodeInfo, 0, len(dns))}
	for _, d := range dns {
		parents := d.Parents
		if parents == nil {
			parents = []uint32{}
		}
		out.Dnodes = append(out.Dnodes, dnodeInfo{Start: d.Start, Len: d.Len, Kind: d.Kind, Nid: d.Nid,
			Offset: d.Offset, Blkaddr: d.Blkaddr, Path: d.Path, Parents: parents})
	}
	writeJSON(w, http.StatusOK, out)
}

// segmentInfo is one main-area segment in GET /api/images/{id}/segments.
type segmentInfo struct {
	Segno   uint32 `json:"segno"`
	Valid   uint32 `json:"valid"`
	Type    int    `json:"type"`
	Current bool   `json:"current"`
}

// segmentsBody is GET /api/images/{id}/segments: every main segment.
type segmentsBody struct {
	BlocksPerSeg    uint32        `json:"blocksPerSeg"`
	MainBlkaddr     uint32        `json:"mainBlkaddr"`
	Segment0Blkaddr uint32        `json:"segment0Blkaddr"`
	SegsPerSec      uint32        `json:"segsPerSec"`
	Segments        []segmentInfo `json:"segments"`
}

func (s *Server) handleSegments(w http.ResponseWriter, r *http.Request) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	segs, err := si.Image.Segments()
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := si.Image.Volume()
	out := segmentsBody{BlocksPerSeg: v.BlocksPerSeg, MainBlkaddr: v.MainBlkaddr,
		Segment0Blkaddr: v.Segment0Blkaddr, SegsPerSec: v.SegsPerSec, Segments: make([]segmentInfo, len(segs))}
	for i, sg := range segs {
		out.Segments[i] = segmentInfo{Segno: sg.Segno, Valid: sg.ValidBlocks, Type: sg.Type, Current: sg.Current}
	}
	writeJSON(w, http.StatusOK, out)
}

// segmentBody is GET /api/images/{id}/segments/{segno}: one SIT entry with
// its valid map, as hex (byte 0 first) and as a bit string (block 0 first;
// f2fs bitmaps are MSB-first within each byte).
type segmentBody struct {
	Segno     uint32 `json:"segno"`
	Valid     uint32 `json:"valid"`
	Type      int    `json:"type"`
	Current   bool   `json:"current"`
	Mtime     uint64 `json:"mtime"`
	Source    string `json:"source"`
	StartAddr uint32 `json:"startAddr"` // block address of the segment's block 0
	Map       string `json:"map"`
	Bits      string `json:"bits"`
}

func (s *Server) handleSegment(w http.ResponseWriter, r *http.Request) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	raw := chi.URLParam(r, "segno")
	n, err := strconv.ParseUint(raw, 10, 32)
	if err != nil {
		s.Error(w, r, badParam("segno", strconv.Quote(raw)+" is not a segment number"))
		return
	}
	v := si.Image.Volume()
	if n >= uint64(v.MainSegmentCount) {
		s.Error(w, r, notFound("segment", raw))
		return
	}
	sg, err := si.Image.Segment(uint32(n))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, segmentBody{Segno: sg.Segno, Valid: sg.ValidBlocks, Type: sg.Type,
		Current: sg.Current, Mtime: sg.Mtime, Source: sg.Source,
		StartAddr: v.MainBlkaddr + uint32(n)*v.BlocksPerSeg,
		Map:       hex.EncodeToString(sg.Map[:]), Bits: bitString(sg.Map[:])})
}

// bitString spells an f2fs bitmap one character per bit, bit 0 first
// (bit k is 0x80>>(k%8) of byte k/8).
func bitString(m []byte) string {
	b := make([]byte, len(m)*8)
	for k := range b {
		if m[k>>3]&(0x80>>(k&7)) != 0 {
			b[k] = '1'
		} else {
			b[k] = '0'
		}
	}
	return string(b)
}

// runBody is GET /api/images/{id}/run: the CLI's `run --json` shape, "op" included.
type runBody struct {
	Op       string `json:"op"`
	Path     string `json:"path"`
	Offset   int64  `json:"offset"`
	Length   int64  `json:"length"`
	KeepSize bool   `json:"keepSize"`
	// Size is truncate's new size (its offset says the same).
	Size    *int64         `json:"size,omitempty"`
	Results []*core.Result `json:"results"`
}

// handleRun simulates the zero-range in each requested mode, per-block first, and answers with the
// results. The answer is streamed: a per-block call list of a 64 GiB file is never built whole.
func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	q.Set("image", chi.URLParam(r, "id"))
	format := q.Get("format")
	if format != "" && format != "json" && format != "csv" {
		s.Error(w, r, badParam("format", `"json" (the default) or "csv"`))
		return
	}
	// The results are held until the answer is written (web/reservations.go); the heavy slot only
	// while simulating, so that slow readers do not keep other work from starting. With `before=`
	// the answer's most is reserved before the operations run.
	rq, err := s.parseRunQuery(q)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	bound := s.runAnswerBound(r.Context(), rq)
	release, err := s.budget.reserve(bound)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	defer release()
	t, err := s.resolveQuery(withReserved(r.Context(), bound), rq)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if need := runBytes(t.spec); need > bound {
		more, err := s.budget.reserve(need - bound)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		defer more()
	}
	results, err := s.simulateRun(r.Context(), t)
	if err != nil {
		if r.Context().Err() == nil {
			s.Error(w, r, err)
		}
		return // else the client has gone
	}
	if format == "csv" {
		writeCallsCSV(w, s, t.info.Path, results)
		return
	}
	traces, err := s.runTraces(q, t, results) // &trace=ID (web/traces.go)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	req := t.spec.Request
	body := runBody{Op: t.run.Kind(), Path: t.info.Path, Offset: req.Offset, Length: req.Length, KeepSize: req.KeepSize}
	if t.run.Played().Range == request.RangeToSize {
		body.Size = &req.Offset // the size the call cuts the file to
	}
	head, err := json.Marshal(body)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head[:len(head)-len(`null}`)]) // runBody ends with "results":null}
	bw.WriteByte('[')
	for i, res := range results {
		if i > 0 {
			bw.WriteByte(',')
		}
		if err := res.WriteJSON(bw, traces[i]); err != nil { // the one encoder of a result
			s.log.Error("run answer", "err", err)
			return
		}
	}
	bw.WriteString("]}\n")
	bw.Flush()
}

// simulateRun runs t in each of its modes, per-block first, in a slot of heavy work.
func (s *Server) simulateRun(ctx context.Context, t *runTarget) ([]*core.Result, error) {
	done, err := s.heavyWork(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	results := make([]*core.Result, 0, len(t.spec.Modes))
	for _, m := range t.spec.Modes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res, err := core.SimulateContext(ctx, t.spec.Input, t.spec.Request, m) // stops when the client leaves
		if err != nil {
			return nil, err
		}
		results = append(results, res)
	}
	return results, nil
}

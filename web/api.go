package web

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/sim"
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

// inspectBody is GET /api/images/{id}: the CLI's `inspect --json` shape
// plus the image's identity.
type inspectBody struct {
	ID     string        `json:"id"`
	Name   string        `json:"name"`
	Size   int64         `json:"size"`
	Format imgio.Format  `json:"format"`
	Volume imgio.Volume  `json:"volume"`
	Files  []imgio.Entry `json:"files"`
}

func (s *Server) handleInspect(w http.ResponseWriter, r *http.Request) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	files, err := si.Image.Files()
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, inspectBody{ID: si.ID, Name: si.Name, Size: si.Size, Format: si.Format,
		Volume: si.Image.Volume(), Files: files})
}

// lookup resolves the image {id} and the "path" query parameter.
func (s *Server) lookup(r *http.Request) (*StoredImage, *imgio.File, error) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		return nil, nil, err
	}
	p := r.URL.Query().Get("path")
	if p == "" {
		return nil, nil, &ParamError{Name: "path", Msg: "missing"}
	}
	if !strings.HasPrefix(p, "/") {
		return nil, nil, &ParamError{Name: "path", Msg: "must be absolute"}
	}
	f, err := si.Image.Lookup(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, &NotFoundError{What: "path", Name: p}
		}
		return nil, nil, err
	}
	return si, f, nil
}

// mapBody is GET /api/images/{id}/map: the CLI's `map --json` shape.
type mapBody struct {
	Path    string         `json:"path"`
	Ino     uint32         `json:"ino"`
	Size    int64          `json:"size"`
	Extents []imgio.Extent `json:"extents"`
}

func (s *Server) handleMap(w http.ResponseWriter, r *http.Request) {
	_, f, err := s.lookup(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	ext, err := f.Extents()
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if ext == nil {
		ext = []imgio.Extent{}
	}
	in := f.Inode()
	writeJSON(w, http.StatusOK, mapBody{Path: f.Path(), Ino: in.Ino, Size: in.Size, Extents: ext})
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
	out := segmentsBody{BlocksPerSeg: blocksPerSeg(v), MainBlkaddr: v.MainBlkaddr,
		Segment0Blkaddr: v.Segment0Blkaddr, SegsPerSec: v.SegsPerSec, Segments: make([]segmentInfo, len(segs))}
	for i, sg := range segs {
		out.Segments[i] = segmentInfo{Segno: sg.Segno, Valid: sg.ValidBlocks, Type: sg.Type, Current: sg.Current}
	}
	writeJSON(w, http.StatusOK, out)
}

func blocksPerSeg(v imgio.Volume) uint32 {
	if v.BlocksPerSeg == 0 {
		return 512
	}
	return v.BlocksPerSeg
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
		s.Error(w, r, &ParamError{Name: "segno", Msg: strconv.Quote(raw) + " is not a segment number"})
		return
	}
	v := si.Image.Volume()
	if n >= uint64(v.MainSegmentCount) {
		s.Error(w, r, &NotFoundError{What: "segment", Name: raw})
		return
	}
	sg, err := si.Image.Segment(uint32(n))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, segmentBody{Segno: sg.Segno, Valid: sg.ValidBlocks, Type: sg.Type,
		Current: sg.Current, Mtime: sg.Mtime, Source: sg.Source,
		StartAddr: v.MainBlkaddr + uint32(n)*blocksPerSeg(v),
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

// runParams are the query parameters of a run (the API and the websocket).
type runParams struct {
	Path      string
	Offset    int64
	Length    int64 // valid when HasLength
	HasLength bool
	KeepSize  bool
	ModeName  string // "per-block", "batched" or "both"
	Modes     []core.Mode
	Step      int64 // websocket only: where the view starts
}

// parseRunParams reads path, offset, length, mode, keepSize and step.
// Values the kernel itself rejects (a zero length, an offset past the
// maximum file size) are not errors here: the engine answers them with the
// kernel's errno. Only unparsable values are.
func parseRunParams(q url.Values) (runParams, error) {
	p := runParams{Path: q.Get("path"), ModeName: "both"}
	if p.Path == "" {
		return p, &ParamError{Name: "path", Msg: "missing"}
	}
	if !strings.HasPrefix(p.Path, "/") {
		return p, &ParamError{Name: "path", Msg: "must be absolute"}
	}
	var err error
	if p.Offset, _, err = intParam(q, "offset"); err != nil {
		return p, err
	}
	if p.Length, p.HasLength, err = intParam(q, "length"); err != nil {
		return p, err
	}
	if v := q.Get("step"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return p, &ParamError{Name: "step", Msg: strconv.Quote(v) + " is not a non-negative integer"}
		}
		p.Step = n
	}
	switch v := q.Get("keepSize"); v {
	case "", "0", "false":
	case "1", "true":
		p.KeepSize = true
	default:
		return p, &ParamError{Name: "keepSize", Msg: strconv.Quote(v) + " is not true or false"}
	}
	if v := q.Get("mode"); v != "" {
		p.ModeName = v
	}
	if p.Modes, err = parseModes(p.ModeName); err != nil {
		return p, &ParamError{Name: "mode", Msg: err.Error()}
	}
	p.ModeName = modesName(p.Modes)
	return p, nil
}

// intParam parses an optional decimal int64 query parameter. Negative
// values parse: the kernel answers them with EINVAL, and so does the engine.
func intParam(q url.Values, name string) (int64, bool, error) {
	v := q.Get(name)
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false, &ParamError{Name: name, Msg: strconv.Quote(v) + " is not a decimal integer"}
	}
	return n, true, nil
}

// parseModes turns "per-block", "batched" or "both" (and core's aliases)
// into the modes to run, per-block first.
func parseModes(name string) ([]core.Mode, error) {
	if name == "both" {
		return []core.Mode{core.PerBlock, core.Batched}, nil
	}
	m, err := core.ParseMode(name)
	if err != nil {
		return nil, fmt.Errorf("mode %q: want per-block, batched or both", name)
	}
	return []core.Mode{m}, nil
}

// modesName is the inverse of parseModes.
func modesName(ms []core.Mode) string {
	if len(ms) == 2 {
		return "both"
	}
	return ms[0].String()
}

// runBody is GET /api/images/{id}/run: the CLI's `run --json` shape.
type runBody struct {
	Path     string         `json:"path"`
	Offset   int64          `json:"offset"`
	Length   int64          `json:"length"`
	KeepSize bool           `json:"keepSize"`
	Results  []*core.Result `json:"results"`
}

// handleRun simulates the zero-range in each requested mode, per-block
// first, and answers with the results.
func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	params, err := parseRunParams(r.URL.Query())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	_, in, req, err := s.runInput(si, params)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	out := runBody{Path: params.Path, Offset: req.Offset, Length: req.Length, KeepSize: req.KeepSize}
	for _, m := range params.Modes {
		res, err := core.Simulate(in, req, m)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		out.Results = append(out.Results, res)
	}
	writeJSON(w, http.StatusOK, out)
}

// runInput resolves the file's path and builds the engine's input and request;
// the length defaults to the rest of the file (at least 1 byte, so an
// empty file still shows the kernel's answer).
func (s *Server) runInput(si *StoredImage, params runParams) (*imgio.File, core.Input, core.Request, error) {
	// open(2) follows symlinks: zeroing a link zeroes its target.
	f, err := si.Image.Resolve(params.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, core.Input{}, core.Request{}, &NotFoundError{What: "path", Name: params.Path}
		}
		return nil, core.Input{}, core.Request{}, err
	}
	req := core.Request{Offset: params.Offset, Length: params.Length, KeepSize: params.KeepSize}
	if !params.HasLength {
		req.Length = max(f.Inode().Size-params.Offset, 1)
	}
	in, err := sim.FileInput(si.Image, f)
	if err != nil {
		return nil, core.Input{}, core.Request{}, err
	}
	return f, in, req, nil
}

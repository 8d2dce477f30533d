package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/sandbox"
	"github.com/zrviz/zrviz/templates"
)

// Bounds on POST /api/sandbox.
const (
	// maxSandboxBody bounds the request body: the longest slot list, JSON-escaped (a newline is
	// two bytes), and the rest of the object.
	maxSandboxBody = 2*sandbox.MaxInput + 1024
	// Lists are bounded by the sandbox (10 M slots), but a per-block run over them makes 10 M calls:
	// the answer lists the first apiMaxCalls calls, apiMaxSegments segments and apiMaxExtents
	// extents of each result and says how many it left out. stats counts everything.
	apiMaxCalls    = 10_000
	apiMaxSegments = 1_000
	apiMaxExtents  = 10_000
)

// sandboxRequest is the body of POST /api/sandbox.
type sandboxRequest struct {
	Slots string `json:"slots"`
	Mode  string `json:"mode"` // "per-block", "batched" or "both" (default)
}

// sandboxResult is a core.Result with its long lists cut to the API's bounds. The outer fields
// hide the embedded ones of the same JSON name.
type sandboxResult struct {
	*core.Result
	Calls           [][2]uint32         `json:"calls"`
	CallsOmitted    uint64              `json:"callsOmitted,omitempty"`
	Segments        []core.SegmentState `json:"segments"`
	SegmentsOmitted int                 `json:"segmentsOmitted,omitempty"`
	After           sandboxAfter        `json:"after"`
}

type sandboxAfter struct {
	Extents        []core.Extent `json:"extents"`
	ExtentsOmitted int           `json:"extentsOmitted,omitempty"`
}

// sandboxBody is the answer of POST /api/sandbox: zrviz sandbox --json with the lists bounded.
type sandboxBody struct {
	*sandbox.Output
	Results []sandboxResult `json:"results"`
	// Permalink is whether the canonical list fits a URL (sandbox.MaxPermalink); Player is then
	// the player's URL for it, and Page the sandbox page's.
	Permalink bool   `json:"permalink"`
	Player    string `json:"player,omitempty"`
	Page      string `json:"page,omitempty"`
}

func bounded(r *core.Result) sandboxResult {
	out := sandboxResult{Result: r, Calls: [][2]uint32{}}
	for c := range r.Calls.All() {
		if len(out.Calls) == apiMaxCalls {
			out.CallsOmitted = r.Calls.Len() - apiMaxCalls
			break
		}
		out.Calls = append(out.Calls, [2]uint32{c.Start, c.Len})
	}
	out.Segments = r.Segments[:min(len(r.Segments), apiMaxSegments)]
	out.SegmentsOmitted = len(r.Segments) - len(out.Segments)
	ext := r.After.Extents
	out.After.Extents = ext[:min(len(ext), apiMaxExtents)]
	out.After.ExtentsOmitted = len(ext) - len(out.After.Extents)
	return out
}

// sandboxError is the JSON of a refused slot list: the API's {"error"} plus where.
type sandboxError struct {
	Error string `json:"error"`
	Pos   int    `json:"pos"`   // byte offset of the token in the list
	Index int    `json:"index"` // token number, 1-based (0: the whole list)
	Token string `json:"token"`
}

// handleSandboxAPI answers POST /api/sandbox {"slots":"...","mode":"both"}.
func (s *Server) handleSandboxAPI(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSandboxBody))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		s.Error(w, r, Errorf(ETOOLARGE, "request body larger than %d bytes (a slot list holds at most %d bytes)", maxSandboxBody, sandbox.MaxInput))
		return
	}
	if err != nil {
		s.Error(w, r, err)
		return
	}
	var req sandboxRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.Error(w, r, badParam("body", `want JSON {"slots":"...","mode":"both"}: `+err.Error()))
		return
	}
	modes := request.Both()
	if req.Mode != "" {
		if modes, err = request.ParseModes(req.Mode); err != nil {
			s.Error(w, r, badParam("mode", fmt.Sprintf("%q: %v", req.Mode, request.ErrMode)))
			return
		}
	}
	l, err := sandbox.Parse(req.Slots)
	var se *sandbox.SyntaxError
	if errors.As(err, &se) {
		writeJSON(w, http.StatusBadRequest, sandboxError{Error: err.Error(), Pos: se.Pos, Index: se.Index, Token: se.Token})
		return
	}
	if err != nil {
		s.Error(w, r, err)
		return
	}
	release, err := s.budget.reserve(sandboxBytes(l, len(req.Slots)))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	defer release()
	done, err := s.heavyWork(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	out, err := sandbox.Simulate(l, modes)
	done()
	if err != nil {
		s.Error(w, r, err)
		return
	}
	resp := sandboxBody{Output: out, Results: []sandboxResult{}, Permalink: l.Permalinkable()}
	for _, res := range out.Results {
		resp.Results = append(resp.Results, bounded(res))
	}
	if resp.Permalink {
		resp.Player = sandbox.PlayerURL(out.Slots, request.ModesName(modes))
		resp.Page = sandbox.PageURL(out.Slots)
	}
	writeJSON(w, http.StatusOK, resp)
}

// sandboxBytes is what simulating l (both modes, parsed from n bytes) reserves from the budget until
// its answer is written. Measured (TestSandboxReservation): heap in use grows by 34 MiB for one range
// of 10 M slots and 50 MiB for 1 MiB of 100-slot ranges (6.4 M slots in 64,000 runs); the
// reservation doubles a fit of 4 MiB + 5 B a slot + 32 B an input byte, for the garbage the collector
// lets pile up before it runs (GOGC=100).
func sandboxBytes(l *sandbox.List, n int) int64 {
	return 2 * (4<<20 + 5*int64(l.Len()) + 32*int64(n))
}

// handleSandboxPage serves GET /sandbox[?slots=]: the text box, the language, the lesson
// generators; static/js/sandbox.js runs the list through POST /api/sandbox.
func (s *Server) handleSandboxPage(w http.ResponseWriter, r *http.Request) {
	slots := r.URL.Query().Get("slots")
	if len(slots) > sandbox.MaxInput {
		slots = "" // the script will not send it anyway; never echo megabytes back
	}
	p := templates.SandboxPage{
		Layout:       s.layout("Sandbox", "js/sandbox.js", templates.Crumb{Label: "sandbox"}),
		Slots:        slots,
		Placeholder:  "e.g. 34304-34815 NEW*3 34816 | 6144-6200 NULL 9000",
		MaxPermalink: sandbox.MaxPermalink,
		MaxInput:     sandbox.MaxInput,
		MaxSlots:     sandbox.MaxSlots,
		MainBlkaddr:  sandbox.MainBlkaddr,
	}
	for _, ex := range sandbox.Examples() {
		p.Examples = append(p.Examples, templates.SandboxExample{Name: ex.Name, Label: ex.Label, Lesson: ex.Lesson, Slots: ex.Slots})
	}
	s.render(w, r, http.StatusOK, templates.Sandbox(p))
}

package web

import (
	"bufio"
	"container/list"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/go-chi/chi/v5"
	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/ktrace"
)

// Kernel traces (issue 12): a user uploads the f2fs_invalidate_blocks calls their kernel made
// (ftrace text or ADDR [LEN] lines, see package ktrace); the server keeps them parsed, in memory,
// and holds them against runs (GET /api/images/{id}/run?...&trace=ID).

// Trace limits. A trace is an upload: its body, what it parses to and how many are kept are all
// bounded; the oldest-used traces go first.
const (
	// MaxTraceBody bounds one uploaded trace (bytes received): a per-block ftrace log of a 2 GiB
	// range, or a plain one of about 8 GiB.
	MaxTraceBody = 64 << 20
	maxTraces    = 64       // traces kept
	maxTraceMem  = 64 << 20 // bytes of parsed traces kept (they are stored compressed)
	// traceIDBytes of randomness name a trace: an id is the only key to someone's upload.
	traceIDBytes = 9
	// FieldTrace and FieldTraceOp are the run query's trace fields: the stored trace's id and which
	// of its operations (1-based) to compare.
	FieldTrace   = "trace"
	FieldTraceOp = "traceOp"
)

// traceLimits bound what one upload may parse to.
var traceLimits = ktrace.Limits{MaxLines: 1 << 22, MaxLineLen: 4096, MaxCalls: 1 << 22, MaxOps: 64}

// storedTrace is a parsed trace and the image it was uploaded for.
type storedTrace struct {
	id      string
	imageID string
	trace   *ktrace.Trace
	size    int
}

// traceStore keeps parsed traces, least recently used first out. The zero value is ready to use.
type traceStore struct {
	mu    sync.Mutex
	byID  map[string]*list.Element // of *storedTrace
	lru   list.List                // front: most recently used
	bytes int
	// charge, when set, is the budget the kept traces are charged to (forced: a trace that was
	// parsed within its reservation is kept), given back as they are evicted.
	charge *budget
}

// add stores t and evicts the least recently used traces over the count or memory bound.
func (ts *traceStore) add(t *storedTrace) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.byID == nil {
		ts.byID = map[string]*list.Element{}
	}
	ts.byID[t.id] = ts.lru.PushFront(t)
	ts.bytes += t.size
	ts.charge.take(int64(t.size), true)
	for ts.lru.Len() > 1 && (ts.lru.Len() > maxTraces || ts.bytes > maxTraceMem) {
		old := ts.lru.Remove(ts.lru.Back()).(*storedTrace)
		delete(ts.byID, old.id)
		ts.bytes -= old.size
		ts.charge.give(int64(old.size))
	}
}

// get returns the trace id uploaded for image imageID and marks it used.
func (ts *traceStore) get(imageID, id string) (*storedTrace, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	e, ok := ts.byID[id]
	if !ok || e.Value.(*storedTrace).imageID != imageID {
		return nil, false
	}
	ts.lru.MoveToFront(e)
	return e.Value.(*storedTrace), true
}

// traceSummary is the answer to POST /api/images/{id}/traces.
type traceSummary struct {
	ID      string           `json:"id"`
	Format  ktrace.Format    `json:"format"`
	Outside int              `json:"outside"` // calls outside the zr_op markers (not compared)
	Sized   bool             `json:"sized"`   // the calls carry their length (6.14+ or the patch)
	Ops     []traceOpSummary `json:"ops"`
}

type traceOpSummary struct {
	Calls int `json:"calls"`
}

// handleTraceUpload answers POST /api/images/{id}/traces: the body is the trace file, raw or as the
// multipart/form-data field "trace". 201 with the trace's id, format and calls per operation; 400
// for a trace that cannot be read (the message names the line and what was expected there); 413
// past MaxTraceBody or the parse limits.
func (s *Server) handleTraceUpload(w http.ResponseWriter, r *http.Request) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if r.ContentLength > MaxTraceBody {
		s.Error(w, r, tooLarge(MaxTraceBody))
		return
	}
	// The parse holds the calls until they are stored (web/reservations.go); a body of unknown
	// length reserves for the largest.
	release, err := s.budget.reserve(traceParseBytes(r.ContentLength))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	defer release()
	body := http.MaxBytesReader(w, r.Body, MaxTraceBody)
	src, err := traceBody(r, body)
	if err != nil {
		s.traceError(w, r, err)
		return
	}
	tr, err := ktrace.Parse(src, traceLimits)
	if err != nil {
		s.traceError(w, r, err)
		return
	}
	id, err := newTraceID()
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.traces.add(&storedTrace{id: id, imageID: si.ID, trace: tr, size: tr.MemSize()})
	out := traceSummary{ID: id, Format: tr.Format, Outside: tr.Outside, Sized: tr.Sized, Ops: make([]traceOpSummary, len(tr.Ops))}
	for i := range tr.Ops {
		out.Ops[i].Calls = tr.Ops[i].Calls.Len()
	}
	w.Header().Set("Location", "/api/images/"+url.PathEscape(si.ID)+"/traces/"+id)
	writeJSON(w, http.StatusCreated, out)
}

// traceBody is the trace inside the request: the body itself, or the "trace" part of a multipart
// form (streamed, never buffered whole).
func traceBody(r *http.Request, body io.Reader) (io.Reader, error) {
	ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || ct != "multipart/form-data" {
		return body, nil
	}
	r.Body = io.NopCloser(body)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, badParam("trace", "bad multipart body: "+err.Error())
	}
	for {
		p, err := mr.NextPart()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, badParam("trace", `missing: send the trace as the body or as the form field "trace"`)
			}
			return nil, err
		}
		if p.FormName() == "trace" {
			return p, nil
		}
	}
}

// traceError answers a trace that cannot be read: 413 over a bound, 400 otherwise, with ktrace's
// message (line and expectation).
func (s *Server) traceError(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	var se *ktrace.SyntaxError
	var le *ktrace.LostError
	var be *ktrace.BinaryError
	switch {
	case errors.As(err, &mbe):
		s.Error(w, r, tooLarge(MaxTraceBody))
	case errors.Is(err, ktrace.ErrLimit):
		s.Error(w, r, &Error{Code: ETOOLARGE, Message: err.Error(), Err: err})
	case errors.As(err, &se), errors.As(err, &le), errors.As(err, &be), errors.Is(err, ktrace.ErrEmpty):
		s.Error(w, r, badParam("trace", err.Error()))
	default:
		s.Error(w, r, err)
	}
}

func newTraceID() (string, error) {
	b := make([]byte, traceIDBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("web: trace id: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// traceBodyJSON is GET /api/images/{id}/traces/{tid}: the parsed calls per operation.
type traceBodyJSON struct {
	ID      string        `json:"id"`
	Image   string        `json:"image"`
	Format  ktrace.Format `json:"format"`
	Lines   int           `json:"lines"`
	Outside int           `json:"outside"`
	Sized   bool          `json:"sized"`
	// Ops[i].Line is the line of operation i's zr_op marker (0 without markers); Calls its calls as
	// [start,len].
	Ops []ktrace.Op `json:"ops"`
}

// handleTraceGet answers GET /api/images/{id}/traces/{tid}.
func (s *Server) handleTraceGet(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	st, ok := s.traces.get(id, chi.URLParam(r, "tid"))
	if !ok {
		s.Error(w, r, notFound("trace", chi.URLParam(r, "tid")))
		return
	}
	release, err := s.budget.reserve(traceAnswerBytes)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	defer release()
	t := st.trace
	// Streamed, call by call: a trace at the call limit is about 80 MB of JSON, which a stalled
	// reader would otherwise hold whole (issue 19: 30 of them 2.9 GB).
	head, err := json.Marshal(traceBodyJSON{ID: st.id, Image: id, Format: t.Format, Lines: t.Lines,
		Outside: t.Outside, Sized: t.Sized})
	if err != nil {
		s.Error(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	bw := bufio.NewWriterSize(w, traceAnswerBuffer)
	bw.Write(head[:len(head)-len(`null}`)]) // traceBodyJSON ends with "ops":null}
	bw.WriteByte('[')
	var num []byte
	for i := range t.Ops {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(`{"line":`)
		bw.Write(strconv.AppendInt(num[:0], int64(t.Ops[i].Line), 10))
		bw.WriteString(`,"calls":[`)
		k := 0
		for c := range t.Ops[i].Calls.All() {
			if k > 0 {
				bw.WriteByte(',')
			}
			k++
			num = append(strconv.AppendUint(append(num[:0], '['), uint64(c.Start), 10), ',')
			num = append(strconv.AppendUint(num, uint64(c.Len), 10), ']')
			if _, err := bw.Write(num); err != nil {
				return // the client has gone, or the write deadline passed
			}
		}
		bw.WriteString("]}")
	}
	bw.WriteString("]}\n")
	bw.Flush()
}

// traceFor finds the stored trace a run query names (FieldTrace) and the operation of it to compare
// (0-based): FieldTraceOp when given; else, for a trace of as many operations as the query describes
// (the played one and those before it), its last; for a trace of one operation, that one.
func (s *Server) traceFor(q url.Values, t *runTarget) (*storedTrace, int, error) {
	tid := q.Get(FieldTrace)
	if t.si == nil {
		return nil, 0, badParam(FieldTrace, "a sandbox run has no kernel trace")
	}
	st, ok := s.traces.get(t.si.ID, tid)
	if !ok {
		return nil, 0, notFound("trace", tid)
	}
	n, ops := len(st.trace.Ops), len(t.before)+1
	switch v := q.Get(FieldTraceOp); {
	case v != "":
		k, err := strconv.Atoi(v)
		if err != nil || k < 1 || k > n {
			return nil, 0, badParam(FieldTraceOp, fmt.Sprintf("%q: want an operation of the trace, 1 to %d", v, n))
		}
		return st, k - 1, nil
	case n == ops:
		return st, n - 1, nil
	case n == 1:
		return st, 0, nil
	}
	return nil, 0, badParam(FieldTraceOp, fmt.Sprintf("missing: the trace holds %d operations and the run %d; say which to compare", n, ops))
}

// runTraces holds the trace a run query names (FieldTrace, FieldTraceOp) against the run's results
// and returns, per result, the JSON member `,"trace":{...}` it gains (all nil without a trace field).
// Without FieldTraceOp, a trace of as many operations as the query describes (the played one and
// those before it) is compared at its last, a trace of one operation at that one.
func (s *Server) runTraces(q url.Values, t *runTarget, results []*core.Result) ([][]byte, error) {
	out := make([][]byte, len(results))
	tid := q.Get(FieldTrace)
	if tid == "" {
		return out, nil
	}
	st, op, err := s.traceFor(q, t)
	if err != nil {
		return nil, err
	}
	for i, res := range results {
		rep, err := ktrace.Check(st.trace, op, t.spec.Input, t.spec.Request, res)
		if err != nil {
			return nil, err
		}
		j, err := json.Marshal(rep)
		if err != nil {
			return nil, err
		}
		out[i] = append([]byte(`,"trace":`), j...)
	}
	return out, nil
}

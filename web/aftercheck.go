package web

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/go-chi/chi/v5"
	"net/http"
	"strconv"
	"strings"

	"github.com/zrviz/zrviz/afterck"
	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgdiff"
	"github.com/zrviz/zrviz/request"
)

// The player's after-image check (issue 21, "the same in the web"): the user holds an image the
// kernel left — uploaded through POST /api/images like any other, or one already stored — against
// the model's after-state of the run the player shows (the operations before it, the played op,
// then the unmount's writeback and checkpoint), as `zrviz run --ops … --after` does: afterck.ModelSeq
// and afterck.CheckState, in every mode of the run. What the kernel does after the call is
// explained (each explanation names its kernel function); anything else is a difference, and the
// page marks the differing slots and SIT bits on its panels (static/js/aftercheck.js).

// FieldAfter is the after-check's query field: the stored image to hold against the model.
const FieldAfter = "after"

// afterCheckBytes is what one after-check reserves of the memory budget per mode besides its
// sequence's own figure (beforeBytes of the operations and the played op): the two images' NAT
// and SIT tables as CheckState reads them, and its report. BenchmarkAfterCheck allocates 8.8 MB in
// all for both modes of kernel case 6 on the demo; TestAfterCheckReservation measures the worst
// sequence.
const afterCheckBytes = 32 << 20

// afterCheckBody is the answer to GET /api/images/{id}/aftercheck.
type afterCheckBody struct {
	After afterCheckImage `json:"after"`
	// Ops are the operations modelled, in the ops language: the run's before= lines and the
	// played op (a zero, punch or truncate; the unmount follows them).
	Ops   []string         `json:"ops"`
	Path  string           `json:"path"`
	Ino   uint32           `json:"ino"`
	Modes []afterCheckMode `json:"modes"`
}

type afterCheckImage struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// afterCheckMode is afterck's report for one mode (JSON agree, explained, explainedTotal,
// explainedSummary, differences, total), with the address of the next page of its explanations
// when it lists fewer than it counts.
type afterCheckMode struct {
	Mode string `json:"mode"`
	*afterck.Report
	ExplainedNext string `json:"explainedNext,omitempty"`
}

// FieldExplained is the after-check's query field that pages through the explanations: the index
// (0-based) of the first one listed.
const FieldExplained = "explained"

// afterCheckAnswerBytes is what one mode's answer holds besides the bounded lists (afterck's
// MaxExplained explanations and MaxDifferences differences, 1 MiB with their JSON): the summary's
// rows, at most one per kind naming a block (6) and segment, ~100 bytes of JSON each as it is
// written (streamed per mode through a 64 KiB buffer).
func afterCheckAnswerBytes(mainSegs uint32) int64 { return 1<<20 + 1<<10*int64(mainSegs) }

// handleAfterCheck answers GET /api/images/{id}/aftercheck?after=ID&path=…&offset=…&length=…
// [&keepSize=true][&mode=…][&before=…]: image ID held against the model's after-state of the run
// the query names (the player's own query). 200 with a report per mode of the run; 400 for a bad
// run or a sandbox run (it has no image to compare), 404 for an unknown image, 422 when the
// images are of different filesystems or the model cannot run the operations (the message says
// which and why).
func (s *Server) handleAfterCheck(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	q.Set("image", chi.URLParam(r, "id"))
	if q.Get("sandbox") != "" {
		s.Error(w, r, badParam("sandbox", "a sandbox run has no image: an after-image is checked against a stored image's run"))
		return
	}
	afterID := q.Get(FieldAfter)
	if afterID == "" {
		s.Error(w, r, badParam(FieldAfter, "missing: the id of the image the kernel left (upload it first)"))
		return
	}
	from := 0
	if v := q.Get(FieldExplained); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			s.Error(w, r, badParam(FieldExplained, fmt.Sprintf("%q: want the index of the first explanation to list, from 0", v)))
			return
		}
		from = n
	}
	rq, err := s.parseRunQuery(q)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	sa, releaseAfter, err := s.acquire(afterID)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	defer releaseAfter()
	// Another filesystem is refused before anything is reserved (a refused request costs nothing).
	if err := imgdiff.Related(rq.si.Image, sa.Image); err != nil {
		s.afterCheckError(w, r, err)
		return
	}
	// Per mode: the model's sequence, run as `before=` is with the played op after it, and the
	// tables CheckState reads (web/reservations.go), reserved before the run's operations are
	// resolved: a check that can never fit is refused before any work.
	played := append(append([]request.Op(nil), rq.before...), request.RunOp(rq.run))
	t, release, err := s.resolveReserved(r.Context(), rq, func(base core.Input, end uint64) int64 {
		return int64(len(rq.run.Modes)) * (afterCheckBytes + afterCheckAnswerBytes(base.Volume.MainSegments) + beforeBytes(base.Volume, end, played))
	})
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
	defer done()

	ops := afterCheckOps(t)
	out := afterCheckBody{After: afterCheckImage{ID: sa.ID, Name: sa.Name}, Ops: ops, Path: t.info.Path, Ino: t.info.Ino}
	text := strings.Join(ops, "\n")
	for _, m := range t.run.Modes {
		st, err := afterck.ModelSeqFrom(r.Context(), t.si.Image, text, m, from)
		if err != nil {
			s.afterCheckError(w, r, err)
			return
		}
		rep, err := afterck.CheckState(r.Context(), t.si.Image, sa.Image, st)
		if err != nil {
			s.afterCheckError(w, r, err)
			return
		}
		if rep.Differences == nil {
			rep.Differences = []afterck.Difference{}
		}
		mode := afterCheckMode{Mode: m.String(), Report: rep}
		if next := rep.ExplainedFrom + len(rep.Explained); next < rep.ExplainedTotal {
			nq := r.URL.Query()
			nq.Set(FieldExplained, strconv.Itoa(next))
			mode.ExplainedNext = r.URL.Path + "?" + nq.Encode()
		}
		out.Modes = append(out.Modes, mode)
	}
	w.Header().Set("Cache-Control", "no-store")
	streamAfterCheck(w, out)
}

// streamAfterCheck writes the answer a mode at a time through a bounded buffer, not marshalled
// whole (issue 37: 194 MB of JSON, built at once): the head, then each mode's report.
func streamAfterCheck(w http.ResponseWriter, b afterCheckBody) {
	modes := b.Modes
	b.Modes = nil
	head, err := json.Marshal(b)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: "internal error"})
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	// The head ends `,"modes":null}`: the modes take its place.
	bw.Write(bytes.TrimSuffix(head, []byte("null}")))
	bw.WriteByte('[')
	enc := json.NewEncoder(bw)
	for i, m := range modes {
		if i > 0 {
			bw.WriteByte(',')
		}
		if err := enc.Encode(m); err != nil {
			return // the status is sent: the client sees a cut answer
		}
	}
	bw.WriteString("]}\n")
	bw.Flush()
}

// afterCheckOps is the run's sequence in the ops language: its before= operations, then the played
// op (zero, punch or truncate) with its range resolved against the file as they left it.
func afterCheckOps(t *runTarget) []string {
	ops := make([]string, 0, len(t.before)+1)
	for _, op := range t.before {
		ops = append(ops, op.OpLine(0))
	}
	// The run as played: its op (zero, punch or truncate) with the range the engine walked.
	req := t.spec.Request
	played := t.run
	played.Offset, played.Length, played.HasLength, played.KeepSize = req.Offset, req.Length, true, req.KeepSize
	return append(ops, request.RunOp(played).OpLine(t.spec.Input.Inode.Size))
}

// afterCheckError answers a check the images or the model refuse: 422 with what and why (images
// of different filesystems, an operation the model cannot run); anything else as s.Error does.
func (s *Server) afterCheckError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, imgdiff.ErrUnrelated):
		writeJSON(w, http.StatusUnprocessableEntity, errorBody{Error: "not an after-image of this image: " + err.Error()})
	case errors.Is(err, core.ErrUnmodelled), errors.Is(err, core.ErrInput):
		writeJSON(w, http.StatusUnprocessableEntity, errorBody{Error: "the model cannot run these operations: " + err.Error()})
	default:
		s.Error(w, r, err)
	}
}

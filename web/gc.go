package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/source"
)

// maxGCOps bounds the ops of one GET /api/images/{id}/gc: each gc op scans every dirty section.
const maxGCOps = 64

// gcSegment is one segment's state in GET /api/images/{id}/gc.
type gcSegment struct {
	Segno  uint32 `json:"segno"`
	Valid  uint32 `json:"valid"`
	Class  string `json:"class"` // current, prefree, free, dirty, full
	Marked bool   `json:"marked,omitempty"`
}

// gcBody is GET /api/images/{id}/gc?op=checkpoint&op=gc+1&op=gc+0&now=SECONDS: the ops of package gc
// on a fresh mount of the image ("what happens next"), each op's result (a pick or a checkpoint,
// as zrviz gc --json prints them) with the segments it changed, after the initial state of every
// segment.
type gcBody struct {
	Now        uint64            `json:"now"`
	SegsPerSec uint32            `json:"segsPerSec"`
	Initial    []gcSegment       `json:"initial"`
	Ops        []json.RawMessage `json:"ops"`
}

func gcSegments(s *gc.State) []gcSegment {
	out := make([]gcSegment, s.Segments())
	for i := range out {
		segno := uint32(i)
		out[i] = gcSegment{Segno: segno, Valid: s.Segment(segno).Valid, Class: s.Class(segno), Marked: s.VictimMarked(segno)}
	}
	return out
}

func (s *Server) handleGC(w http.ResponseWriter, r *http.Request) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	q := r.URL.Query()
	var now uint64
	if v := q.Get("now"); v != "" {
		if now, err = strconv.ParseUint(v, 10, 64); err != nil {
			s.Error(w, r, &ParamError{Name: "now", Msg: fmt.Sprintf("%q: want the seconds since mount", v)})
			return
		}
	}
	lines := q["op"]
	if len(lines) == 0 || len(lines) > maxGCOps {
		s.Error(w, r, &ParamError{Name: "op", Msg: fmt.Sprintf("want 1 to %d ops (checkpoint, gc 1, gc 0, sync, now SECONDS)", maxGCOps)})
		return
	}
	ops := make([]gc.Op, len(lines))
	for i, l := range lines {
		if ops[i], err = gc.ParseOp(strings.Fields(l)); err != nil {
			s.Error(w, r, &ParamError{Name: "op", Msg: err.Error()})
			return
		}
	}
	v, err := source.GCVolume(si.Image)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	st, err := gc.Mount(v)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	st.Now = now
	body := gcBody{Now: now, SegsPerSec: v.SegsPerSec, Initial: gcSegments(st)}
	prev := body.Initial
	for _, op := range ops {
		b, err := json.Marshal(st.Apply(op))
		if err != nil {
			s.Error(w, r, err)
			return
		}
		cur := gcSegments(st)
		var changed []gcSegment
		for i := range cur {
			if cur[i] != prev[i] {
				changed = append(changed, cur[i])
			}
		}
		prev = cur
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			s.Error(w, r, err)
			return
		}
		if changed == nil {
			changed = []gcSegment{}
		}
		m["changed"] = changed
		if b, err = json.Marshal(m); err != nil {
			s.Error(w, r, err)
			return
		}
		body.Ops = append(body.Ops, b)
	}
	writeJSON(w, http.StatusOK, body)
}

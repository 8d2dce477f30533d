package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/internal/units"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
	"github.com/zrviz/zrviz/templates"
)

// maxGCOps bounds the ops of one GET /api/images/{id}/gc: each gc op scans every dirty section.
const maxGCOps = 64

// gcSegment is one segment's state in GET /api/images/{id}/gc.
type gcSegment struct {
	Segno  uint32 `json:"segno"`
	Valid  uint32 `json:"valid"`
	Class  string `json:"class"` // current, prefree, free, dirty, full
	Marked bool   `json:"marked,omitempty"`
	// Unsure: a node segment after node pages were written where the model does not place them
	// (f2fs_sync_node_pages → f2fs_do_write_node_page): its valid count may be lower (gc/nodes.go).
	Unsure bool `json:"unsure,omitempty"`
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
		out[i] = gcSegment{Segno: segno, Valid: s.Segment(segno).Valid, Class: s.Class(segno), Marked: s.VictimMarked(segno), Unsure: s.NodeUnsure(segno)}
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
	now, err := gcNow(q.Get("now"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	lines := q["op"]
	if len(lines) == 0 || len(lines) > maxGCOps {
		s.Error(w, r, badParam("op", fmt.Sprintf("want 1 to %d ops (%s)", maxGCOps, request.SegmentMapGrammar())))
		return
	}
	ops, err := gcOps(lines)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	// The cleaner's model, its segment lists and the answer (web/reservations.go).
	done, err := s.reserveHeavy(r.Context(), gcBytes(si.Image.Volume().MainSegmentCount))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	defer done()
	st, segsPerSec, err := mountGC(r.Context(), si, now)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	body := gcBody{Now: now, SegsPerSec: segsPerSec, Initial: gcSegments(st)}
	prev := body.Initial
	for _, op := range ops {
		b, err := json.Marshal(st.Apply(op))
		if err == nil {
			err = ssrRefusal(st)
		}
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

// ssrRefusal is core.ErrUnmodelled (422) when the segment manager opened a log's segment where the
// kernel may have taken SSR (gc.State.Unmodelled): the page refuses rather than show a guess.
func ssrRefusal(st *gc.State) error {
	if why := st.Unmodelled(); why != "" {
		return fmt.Errorf("%w: %s", core.ErrUnmodelled, why)
	}
	return nil
}

// gcOps parses the op= parameters of a gc request.
func gcOps(lines []string) ([]gc.Op, error) {
	if len(lines) > maxGCOps {
		return nil, badParam("op", fmt.Sprintf("at most %d ops", maxGCOps))
	}
	ops := make([]gc.Op, len(lines))
	for i, l := range lines {
		var err error
		if ops[i], err = request.ParseGCOp(l); err != nil {
			return nil, err // a *request.FieldError: classify words the 400
		}
	}
	return ops, nil
}

// gcNow reads the now parameter: the seconds since mount, 0 when absent.
func gcNow(v string) (uint64, error) {
	if v == "" {
		return 0, nil
	}
	now, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, badParam("now", fmt.Sprintf("%q: want the seconds since mount", v))
	}
	return now, nil
}

// mountGC mounts the image's SIT for the cleaner at the clock now, as the API and the page both
// replay their ops on it, and returns its segments per section.
func mountGC(ctx context.Context, si *StoredImage, now uint64) (*gc.State, uint32, error) {
	v, err := source.GCVolume(si.Image)
	if err != nil {
		return nil, 0, err
	}
	st, err := gc.Mount(v)
	if err != nil {
		return nil, 0, err
	}
	st.Now = now
	// The dnodes the cleaner's moves dirty, counted by page (f2fs_need_SSR, __get_secs_required).
	st.NodeOf = source.NodeOf(ctx, si.Image)
	return st, v.SegsPerSec, nil
}

// gcPageURL is /images/{id}/next with the ops and the clock.
func gcPageURL(id string, ops []gc.Op, now uint64) string {
	q := url.Values{}
	for _, o := range ops {
		q.Add("op", request.GCOpLine(o))
	}
	if now != 0 {
		q.Set("now", strconv.FormatUint(now, 10))
	}
	u := "/images/" + url.PathEscape(id) + "/next"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// gcQuery is the query extra to append to u: "" when extra is empty, else "?" or "&" and it.
func gcQuery(u, extra string) string {
	switch {
	case extra == "":
		return ""
	case strings.Contains(u, "?"):
		return "&" + extra
	}
	return "?" + extra
}

// handleGCPage is GET /images/{id}/next?op=…&now=S: the "what happens next" page after the ops.
func (s *Server) handleGCPage(w http.ResponseWriter, r *http.Request) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	q := r.URL.Query()
	now, err := gcNow(q.Get("now"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	ops, err := gcOps(q["op"])
	if err != nil {
		s.Error(w, r, err)
		return
	}
	// The cleaner's model, its segment lists and the answer (web/reservations.go).
	done, err := s.reserveHeavy(r.Context(), gcBytes(si.Image.Volume().MainSegmentCount))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	defer done()
	st, segsPerSec, err := mountGC(r.Context(), si, now)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	p := templates.GCPage{
		Layout: s.layout("what happens next", "", imageCrumb(si, true), templates.Crumb{Label: "what happens next"}),
		ID:     si.ID, Now: now, SegsPerSec: segsPerSec, StartHref: gcPageURL(si.ID, nil, now),
	}
	var last any
	var before []gcSegment // the map before the last op, which a quiz question shows
	for i, op := range ops {
		if i == len(ops)-1 {
			before = gcSegments(st)
		}
		last = st.Apply(op)
		if err := ssrRefusal(st); err != nil {
			s.pageError(w, r, err)
			return
		}
		p.Steps = append(p.Steps, templates.GCStep{Label: request.GCOpLine(op), Href: gcPageURL(si.ID, ops[:i+1], now), Here: i == len(ops)-1})
	}
	victim := int64(-1)
	switch r := last.(type) {
	case *gc.Pick:
		res := &templates.GCResult{Op: request.GCOpLine(ops[len(ops)-1]), Policy: r.Policy, Victim: -1}
		switch {
		case r.Victim == nil:
			res.Summary = fmt.Sprintf("%s %s: no victim (%s): no section is dirty, or every one the search looked at is taken.", r.Type, r.Policy, *r.Errno)
		case r.FromBackground:
			res.Summary = fmt.Sprintf("%s %s: section at segment %d, which a background call marked (check_bg_victims comes first); %d blocks moved to the cold data log.", r.Type, r.Policy, *r.Victim, r.Moved)
		case r.Type == "FG":
			res.Summary = fmt.Sprintf("%s %s: victim segment %d at cost %d; its %d valid blocks moved to the cold data log within the call, and it is prefree until the next checkpoint.", r.Type, r.Policy, *r.Victim, r.Cost, r.Moved)
		default:
			res.Summary = fmt.Sprintf("%s %s: victim segment %d; %d blocks marked: they move at the next sync (data) or checkpoint (nodes).", r.Type, r.Policy, *r.Victim, r.Marked)
		}
		if r.Victim != nil {
			res.Victim, victim = int64(*r.Victim), int64(*r.Victim)
		}
		for _, c := range r.Candidates {
			res.Candidates = append(res.Candidates, templates.GCCandidate{Segno: strconv.FormatUint(uint64(c.Segno), 10),
				Valid: strconv.FormatUint(uint64(c.Valid), 10), Mtime: strconv.FormatUint(c.Mtime, 10),
				U: strconv.FormatUint(uint64(c.U), 10), Age: strconv.FormatUint(uint64(c.Age), 10),
				Cost: strconv.FormatUint(uint64(c.Cost), 10), Chosen: r.Victim != nil && c.Segno == *r.Victim})
		}
		p.Last = res
	case *gc.CheckpointStep:
		p.Last = &templates.GCResult{Op: r.Op, Victim: -1,
			Summary: fmt.Sprintf("%d prefree segments became free; %d marked blocks moved.", len(r.Freed), r.Moved)}
	}
	p.Quiz = q.Get("quiz") == "1"
	extra := url.Values{}
	if p.Quiz {
		extra.Set("quiz", "1")
	}
	if p.Quiz && p.Last != nil && p.Last.Victim >= 0 && len(p.Last.Candidates) > 1 {
		if g := q.Get("guess"); g == "" {
			p.Asking, victim = true, -1
			opts := append([]templates.GCCandidate(nil), p.Last.Candidates...)
			sort.Slice(opts, func(i, j int) bool {
				a, _ := strconv.Atoi(opts[i].Segno)
				b, _ := strconv.Atoi(opts[j].Segno)
				return a < b
			})
			// The question shows every term the policy weighs (issue 30): without them a
			// cost-benefit pick could not be reasoned out, only guessed.
			p.Terms, p.CostBenefit = opts, p.Last.Policy == policyCostBenefit
			for _, o := range opts {
				p.Options = append(p.Options, templates.GCLink{Label: "segment " + o.Segno, TestID: "gc-option-" + o.Segno,
					Href: gcPageURL(si.ID, ops, now) + gcQuery(gcPageURL(si.ID, ops, now), "quiz=1&guess="+o.Segno)})
			}
		} else if g == strconv.FormatInt(p.Last.Victim, 10) {
			p.Verdict = "Right: the kernel picks segment " + g + "."
		} else {
			p.Verdict = fmt.Sprintf("Not this time: you chose segment %s, the kernel picks segment %d.", g, p.Last.Victim)
		}
	}
	toggle := url.Values{}
	if !p.Quiz {
		toggle.Set("quiz", "1")
	}
	p.QuizHref = gcPageURL(si.ID, ops, now) + gcQuery(gcPageURL(si.ID, ops, now), toggle.Encode())
	counts := map[string]int{}
	cells := gcSegments(st)
	if p.Asking {
		cells = before
	}
	for _, c := range cells {
		in := victim >= 0 && uint64(c.Segno)/uint64(segsPerSec) == uint64(victim)/uint64(segsPerSec)
		cell := templates.GCCell{Segno: c.Segno, Class: c.Class, Valid: c.Valid, Victim: in, Marked: c.Marked}
		if p.Last != nil && p.Last.Policy == policyCostBenefit {
			if k := slices.IndexFunc(p.Last.Candidates, func(x templates.GCCandidate) bool { return x.Segno == strconv.FormatUint(uint64(c.Segno), 10) }); k >= 0 {
				cell.Mtime, cell.Age = p.Last.Candidates[k].Mtime, p.Last.Candidates[k].Age
			}
		}
		p.Cells = append(p.Cells, cell)
		counts[c.Class]++
	}
	for _, c := range segmentClassLetters() {
		k := c.class.String()
		p.Counts = append(p.Counts, templates.KV{Key: k, Value: units.Group(counts[k])})
	}
	for _, n := range []struct{ op, label, title, id string }{
		{"checkpoint", "checkpoint", "F2FS_IOC_WRITE_CHECKPOINT: prefree segments become free", "gc-add-checkpoint"},
		{"gc 1", "gc 1 · foreground, greedy", "F2FS_IOC_GARBAGE_COLLECT sync=1: fewest valid blocks, moved now", "gc-add-fg"},
		{"gc 0", "gc 0 · background, cost-benefit", "F2FS_IOC_GARBAGE_COLLECT sync=0: old and empty first, blocks marked", "gc-add-bg"},
	} {
		o, err := request.ParseGCOp(n.op)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		p.Next = append(p.Next, templates.GCLink{Label: n.label, Title: n.title, TestID: n.id,
			Href: gcPageURL(si.ID, append(append([]gc.Op(nil), ops...), o), now)})
		if p.Quiz {
			p.Next[len(p.Next)-1].Href += gcQuery(p.Next[len(p.Next)-1].Href, extra.Encode())
		}
	}
	if p.Asking {
		// The next calls start from the state after this one: a link to them would show the
		// victim before the guess (issue 38).
		p.Next = nil
	}
	s.render(w, r, http.StatusOK, templates.GC(p))
}

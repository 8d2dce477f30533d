package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/internal/units"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/templates"
)

// The compare page (issue 28) plays a zero and a punch of one range side by side, both batched: a
// NULL slot ends a punch's pending run and every NEW_ADDR slot is a call of its own, while the
// zero's run goes on over both. Each side is a player session of its own on /ws/run (the page's
// static/js/compare.js drives the two with one set of controls, by slot); this handler only
// resolves both runs, so a bad parameter is a 400 page before any socket opens. The query has no
// sandbox field (compareQuery): both sides are on an image.

// compareSide is one side of the page: its op and its name in the page's words.
type compareSide struct {
	op    core.Op
	label string
}

// compareSides are the sides, left to right: the played operations whose declaration puts them on
// the compare page (request.Played's Compare: a zero and a punch), in the registry's order.
func compareSides() []compareSide {
	var out []compareSide
	for _, s := range request.Playable() {
		if s.Played.Compare {
			out = append(out, compareSide{s.Played.Op, s.Played.Label})
		}
	}
	return out
}

// compareTitle names the page by its sides' kinds: "zero vs punch".
func compareTitle() string {
	var k []string
	for _, sd := range compareSides() {
		k = append(k, sd.op.String())
	}
	return strings.Join(k, " vs ")
}

// compareQuery returns the run query of one side: the page's path, before= and the fields its op
// reads (its declaration's), with its op and the batched mode (whatever the page's query said of
// either).
func compareQuery(q url.Values, op core.Op) url.Values {
	side := url.Values{}
	ps := request.Run{Op: op}.Played()
	for _, k := range append([]string{"image", request.FieldPath, FieldBefore}, ps.Fields()...) {
		if v, ok := q[k]; ok {
			side[k] = append([]string(nil), v...)
		}
	}
	side.Set(request.FieldOp, request.Run{Op: op}.Kind())
	side.Set(request.FieldMode, core.Batched.String())
	return side
}

// handleComparePage serves GET /compare?image=ID&path=P[&offset=O][&length=L][&before=OP…]: the
// zero and the punch of that range, both batched, side by side.
func (s *Server) handleComparePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := templates.ComparePage{}
	for k, side := range compareSides() {
		sq := compareQuery(q, side.op)
		t, err := s.resolvePlayerRun(r.Context(), sq)
		if err != nil {
			s.pageError(w, r, err)
			return
		}
		if k == 0 {
			req := t.spec.Request
			p.ID, p.Name, p.Path = t.si.ID, t.si.Name, t.file.Path()
			p.Offset, p.Length, p.Size = req.Offset, req.Length, t.spec.Input.Inode.Size
			p.Before = t.info.Before
			p.FileURL = "/images/" + url.PathEscape(t.si.ID) + "/file?path=" + url.QueryEscape(t.file.Path())
			p.Layout = s.layout(t.file.Path()+" · "+compareTitle(), "js/compare.js", imageCrumb(t.si, true),
				templates.Crumb{Label: t.file.Path(), Href: p.FileURL},
				templates.Crumb{Label: compareTitle()})
		}
		run := url.Values{}
		for f, v := range sq {
			if f != "image" {
				run[f] = v
			}
		}
		p.Sides = append(p.Sides, templates.CompareSide{
			Op:     t.run.Kind(),
			Label:  side.label,
			Query:  sq.Encode(),
			RunURL: "/images/" + url.PathEscape(t.si.ID) + "/run?" + run.Encode(),
			Line:   t.run.OpLine(t.spec.Input.Inode.Size),
		})
	}
	p.LengthText = units.Bytes(p.Length)
	p.Layout.BodyClass = "compare"
	s.render(w, r, http.StatusOK, templates.Compare(p))
}

// compareURL is the compare page of a run's range: the run page links to it when it plays a zero.
func compareURL(id string, run request.Run, before []string) string {
	q := url.Values{"image": {id}, request.FieldPath: {run.Path}, request.FieldOffset: {strconv.FormatInt(run.Offset, 10)}}
	if run.HasLength {
		q.Set(request.FieldLength, strconv.FormatInt(run.Length, 10))
	}
	if run.KeepSize {
		q.Set(request.FieldKeepSize, "true")
	}
	for _, b := range before {
		q.Add(FieldBefore, b)
	}
	return "/compare?" + q.Encode()
}

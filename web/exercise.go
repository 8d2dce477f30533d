package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/zrviz/zrviz/exercise"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/sandbox"
	"github.com/zrviz/zrviz/templates"
)

// exerciseFor reads ?seed=&kind=&image= and makes the exercise (kind file: of image {image}, the
// demo by default, held while the engine reads it so --max-store cannot evict it meanwhile).
func (s *Server) exerciseFor(r *http.Request) (*exercise.Exercise, *StoredImage, error) {
	q := r.URL.Query()
	seed := uint64(0)
	if v := q.Get("seed"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, nil, badParam("seed", fmt.Sprintf("%q: want a whole number from 0 to %d", v, uint64(1<<64-1)))
		}
		seed = n
	}
	kind, err := exercise.ParseKind(q.Get("kind"))
	if err != nil {
		return nil, nil, badParam("kind", fmt.Sprintf("%q: want slots or file", q.Get("kind")))
	}
	var si *StoredImage
	var img *imgio.Image
	if kind == exercise.File {
		id := q.Get("image")
		if id == "" {
			id = DemoID
		}
		var release func()
		if si, release, err = s.acquire(id); err != nil {
			return nil, nil, err
		}
		defer release()
		img = si.Image
	}
	name := ""
	if si != nil {
		name = si.Name
	}
	e, err := exercise.New(seed, kind, img, name)
	if err != nil {
		return nil, nil, err
	}
	return e, si, nil
}

// handleExercisePage serves GET /exercise?seed=N&kind=slots|file&image=ID.
func (s *Server) handleExercisePage(w http.ResponseWriter, r *http.Request) {
	e, si, err := s.exerciseFor(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	p := templates.ExercisePage{
		Layout: s.layout(fmt.Sprintf("Exercise %d", e.Seed), "js/exercise.js", templates.Crumb{Label: "exercise " + strconv.FormatUint(e.Seed, 10)}),
		Seed:   e.Seed, Kind: string(e.Kind),
	}
	for _, q := range e.Questions {
		p.Questions = append(p.Questions, templates.ExerciseQuestion{Text: q.Text, Answer: q.Answer})
	}
	// ?answer=… once per question, in order (the page's answer form): checked here, with the
	// engine's answers, as the player's quiz checks its answers.
	if answers, ok := r.URL.Query()["answer"]; ok {
		sc := e.Check(answers)
		for i, v := range sc.Verdicts {
			q := &p.Questions[i]
			q.Given, q.Checked, q.Right, q.Hint = v.Answer, v.Answered, v.Right, v.Hint
		}
		p.Score = sc.String()
		if sc.Given() == 0 {
			p.Score = "no answer to check yet"
		}
	}
	for _, im := range s.images() {
		p.Images = append(p.Images, templates.ExerciseImage{ID: im.ID, Name: im.Name})
	}
	next := url.Values{"seed": {strconv.FormatUint(e.Seed+1, 10)}, "kind": {string(e.Kind)}}
	switch e.Kind {
	case exercise.Slots:
		p.Slots = e.Slots
		p.PlayerURL = sandbox.PlayerURL(e.Slots, "both")
		p.SandboxURL = sandbox.PageURL(e.Slots)
		p.Rules = fmt.Sprintf("Sandbox rules: the main area starts at block %d (a lower address fails the bounds check); "+
			"every listed address has its SIT bit set, once, and nothing else is valid; NEW is a reserved block, NULL a hole; "+
			"| starts a new dnode chunk; the inode holds %d slots and a direct node %d, so without | a chunk ends after slot %d. "+
			"Slots count from 0.", sandbox.MainBlkaddr, sandbox.AddrsPerInode, sandbox.AddrsPerBlock, sandbox.AddrsPerInode-1)
	case exercise.File:
		p.ImageID, p.ImageName = si.ID, si.Name
		p.Path, p.Offset, p.Length = e.Path, e.Offset, e.Length
		p.PlayerURL = templates.RunURL(si.ID, e.Path, e.Offset, e.Length, "both", -1)
		next.Set("image", si.ID)
	}
	p.NextURL = "/exercise?" + next.Encode()
	s.render(w, r, http.StatusOK, templates.Exercise(p))
}

// handleExerciseAPI answers GET /api/exercise?seed=&kind=&image= with zrviz exercise --json.
func (s *Server) handleExerciseAPI(w http.ResponseWriter, r *http.Request) {
	e, _, err := s.exerciseFor(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, e)
}

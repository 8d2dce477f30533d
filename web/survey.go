package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/zrviz/zrviz/survey"
	"github.com/zrviz/zrviz/templates"
)

// The survey of an image (issue 39, package survey): every regular file zeroed, punched and
// truncated in both modes. It runs once per image in the background, as a job the page starts and
// watches: GET /api/images/{id}/survey/progress starts it (or finds it) and says how far it got,
// GET /api/images/{id}/survey answers the rows (JSON, or CSV with ?format=csv) once it is done,
// waiting for it. A survey that failed is reported for surveyRetry, then started again. The job stops when nobody has asked for it for surveyIdle (the page polls; a
// client that left stops asking) or the server shuts down; a finished survey is kept for the image
// (the same survey of the same image is answered from it), at most maxSurveys of them. The static
// site runs the same routes in its service worker, where the job yields to the browser between files
// so the progress requests are answered while it runs.

// surveyIdle is how long a running survey lives with nobody asking for it.
const surveyIdle = 10 * time.Second

// surveyRetry is how long a failed survey is reported before the next request starts it again.
const surveyRetry = 5 * time.Second

// maxSurveys bounds the finished surveys kept (one per image): the oldest goes first.
const maxSurveys = 4

// surveyBase is what a survey reserves besides its rows (survey.PerFileBytes each): the listing,
// the SIT cache (≈70 bytes a main-area segment, 600 KB for 16 GiB), a file's cached dnodes per
// worker (2.5 MiB each), the engine's walk of the largest file and the answer's JSON being written.
// Measured: 36.4 MiB of heap growth for 3,000 files under a loaded CI run (TestSurveyReservation),
// against 16 MiB + 4 KiB a row before: 24 MiB keeps that within the reservation and its 25 %.
const surveyBase = 24 << 20

// surveyIdle is surveyIdle, or the server's override (tests shorten it).
func (s *Server) surveyIdle() time.Duration {
	if s.surveyIdleFor > 0 {
		return s.surveyIdleFor
	}
	return surveyIdle
}

// surveyJobs holds the survey of each image (zero value ready).
type surveyJobs struct {
	mu   sync.Mutex
	jobs map[string]*surveyJob
}

// surveyJob is one image's survey, running or done.
type surveyJob struct {
	si      *StoredImage
	started time.Time
	done    chan struct{}                 // closed when err (or res) is set
	res     atomic.Pointer[survey.Survey] // nil once dropped from the cache
	err     error
	keep    func() // gives back the rows' memory when the survey is dropped

	total, surveyed atomic.Int64
	ended           atomic.Int64 // unix nanoseconds when it ended
	listed          atomic.Bool
	seen            atomic.Int64 // unix nanoseconds of the last request for it
	waiting         atomic.Int32 // requests waiting for the answer
}

// surveyProgress is the JSON of GET /api/images/{id}/survey/progress.
type surveyProgress struct {
	State string `json:"state"` // "listing", "running", "done" or "failed"
	Done  int64  `json:"done"`  // files surveyed
	Total int64  `json:"total"` // regular files (0 while listing)
	Error string `json:"error,omitempty"`
}

func (j *surveyJob) progress() surveyProgress {
	p := surveyProgress{State: "listing", Done: j.surveyed.Load(), Total: j.total.Load()}
	select {
	case <-j.done:
		if j.err != nil {
			_, msg := classify(j.err)
			return surveyProgress{State: "failed", Done: p.Done, Total: p.Total, Error: msg}
		}
		return surveyProgress{State: "done", Done: p.Total, Total: p.Total}
	default:
	}
	if j.listed.Load() {
		p.State = "running"
	}
	return p
}

// surveyJob returns si's survey, starting it when there is none (or the last one failed).
func (s *Server) surveyJob(si *StoredImage) *surveyJob {
	sj := &s.surveys
	sj.mu.Lock()
	defer sj.mu.Unlock()
	if sj.jobs == nil {
		sj.jobs = map[string]*surveyJob{}
	}
	if j := sj.jobs[si.ID]; j != nil && j.si == si {
		select {
		case <-j.done:
			// A kept survey is the answer. One that failed is, for surveyRetry, so the page can say
			// why (a budget refusal would otherwise be retried at every poll, unseen); one stopped
			// because nobody asked starts again for whoever asks now.
			if j.err == nil || (!errors.Is(j.err, context.Canceled) && time.Since(time.Unix(0, j.ended.Load())) < surveyRetry) {
				j.seen.Store(time.Now().UnixNano())
				return j
			}
		default:
			j.seen.Store(time.Now().UnixNano())
			return j
		}
	}
	j := &surveyJob{si: si, started: time.Now(), done: make(chan struct{})}
	j.seen.Store(time.Now().UnixNano())
	sj.jobs[si.ID] = j
	// Keep at most maxSurveys finished surveys: the oldest other one goes.
	var oldest *surveyJob
	n := 0
	for _, o := range sj.jobs {
		select {
		case <-o.done:
			if o.err != nil {
				continue // holds nothing
			}
			n++
			if o != j && (oldest == nil || o.started.Before(oldest.started)) {
				oldest = o
			}
		default:
		}
	}
	if n >= maxSurveys && oldest != nil {
		delete(sj.jobs, oldest.si.ID)
		oldest.res.Store(nil)
		oldest.keep()
	}
	go s.runSurvey(j)
	return j
}

// runSurvey computes j's survey: it holds the image, a heavy-work slot and the memory of the rows,
// and stops once nobody has asked for it for surveyIdle.
func (s *Server) runSurvey(j *surveyJob) {
	ctx, cancel := context.WithCancel(s.srvCtx)
	var release []func()
	finish := func(res *survey.Survey, err error) {
		cancel()
		j.err = err
		j.keep = func() {}
		j.ended.Store(time.Now().UnixNano())
		if err != nil {
			for _, r := range release {
				r()
			}
		} else {
			// The rows stay reserved while the survey is kept; the rest is given back.
			for _, r := range release[:len(release)-1] {
				r()
			}
			j.keep = release[len(release)-1]
			j.res.Store(res)
		}
		close(j.done)
	}
	go func() { // the watchdog
		t := time.NewTicker(s.surveyIdle() / 10)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if j.waiting.Load() == 0 && time.Since(time.Unix(0, j.seen.Load())) > s.surveyIdle() {
					cancel()
					return
				}
			}
		}
	}()
	hold, err := j.si.Acquire()
	if err != nil {
		finish(nil, err)
		return
	}
	release = append(release, hold)
	base, err := s.budget.reserve(surveyBase)
	if err != nil {
		finish(nil, err)
		return
	}
	release = append(release, base)
	slot, err := s.heavyWork(ctx)
	if err != nil {
		finish(nil, err)
		return
	}
	release = append(release, slot)
	opt := survey.Options{
		// The listing holds its entries before the rows are reserved: no more files than the whole
		// budget could hold rows of.
		MaxFiles: int(min(max(s.budget.limit, 0)/survey.PerFileBytes, survey.DefaultMaxFiles)),
		Progress: func(done, total int) {
			j.total.Store(int64(total))
			j.surveyed.Store(int64(done))
			j.listed.Store(true)
		},
		Reserve: func(files int) error {
			rows, err := s.budget.reserve(int64(files) * survey.PerFileBytes)
			if err != nil {
				return err
			}
			release = append(release, rows)
			return nil
		},
	}
	if s.cfg.Static {
		// One goroutine of WebAssembly: the service worker answers the page's progress requests only
		// while the survey sleeps, so it sleeps a millisecond every 50.
		opt.Workers = 1
		var last time.Time
		opt.Yield = func() {
			if time.Since(last) > 50*time.Millisecond {
				time.Sleep(time.Millisecond)
				last = time.Now()
			}
		}
	}
	res, err := survey.Run(ctx, j.si.Image, opt)
	if err == nil && len(release) < 4 {
		err = errors.New("web: a survey without its rows reserved")
	}
	if err != nil {
		finish(nil, err)
		return
	}
	finish(res, nil)
}

// handleSurveyProgress serves GET /api/images/{id}/survey/progress: it starts the image's survey
// when none runs or is kept, and says how far it got.
func (s *Server) handleSurveyProgress(w http.ResponseWriter, r *http.Request) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, s.surveyJob(si).progress())
}

// handleSurvey serves GET /api/images/{id}/survey: the survey's JSON (survey.Survey: every row and
// the totals), or ?format=csv every row as CSV; ?download=1 names it as a file to save. It waits
// for the survey, starting it if need be, for as long as the request lasts.
func (s *Server) handleSurvey(w http.ResponseWriter, r *http.Request) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	format := r.URL.Query().Get("format")
	if format != "" && format != "json" && format != "csv" {
		s.Error(w, r, badParam("format", "want json or csv"))
		return
	}
	j := s.surveyJob(si)
	j.waiting.Add(1)
	select {
	case <-j.done:
	case <-r.Context().Done():
	}
	j.waiting.Add(-1)
	j.seen.Store(time.Now().UnixNano())
	select {
	case <-j.done:
	default:
		s.Error(w, r, r.Context().Err())
		return
	}
	if j.err != nil {
		s.Error(w, r, j.err)
		return
	}
	res := j.res.Load()
	if res == nil { // dropped from the cache meanwhile
		s.Error(w, r, &Error{Code: EUNAVAILABLE, RetryAfter: retryAfter, Message: "the survey was dropped for newer ones: ask again"})
		return
	}
	name := "survey-" + si.ID
	if r.URL.Query().Get("download") != "" {
		ext := map[string]string{"csv": ".csv"}[format]
		if ext == "" {
			ext = ".json"
		}
		w.Header().Set("Content-Disposition", `attachment; filename="`+url.PathEscape(name)+ext+`"`)
	}
	if format == "csv" {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		if err := survey.WriteCSV(w, res, res.Costs); err != nil {
			s.log.Debug("survey csv", "err", err)
		}
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if err := res.WriteJSON(w); err != nil {
		s.log.Debug("survey json", "err", err)
	}
}

// handleSurveyPage serves GET /images/{id}/survey: the survey page, whose script starts the survey
// and draws it (static/js/survey.js).
func (s *Server) handleSurveyPage(w http.ResponseWriter, r *http.Request) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	c := survey.DefaultCosts()
	p := templates.SurveyPage{
		Layout: s.layout("Survey · "+si.Name, "js/survey.js", imageCrumb(si, true), templates.Crumb{Label: "survey"}),
		ID:     si.ID, Name: si.Name,
		PerCallMicros: c.PerCallMicros, PerBlockMicros: c.PerBlockMicros, CostSource: c.Source,
		Buckets: survey.NumBuckets,
	}
	s.render(w, r, http.StatusOK, templates.Survey(p))
}
